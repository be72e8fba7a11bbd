// Seeded random unit vectors, bit-identical to wasm/examples/common/mod.rs:
// mulberry32 (32-bit integer PRNG), 24-bit uniforms, Irwin-Hall sums (exact
// in f64), normalization in f64 and one rounding to f32.

export function mulberry32(seed) {
  let a = seed | 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
}

function unitVector(next, d, out, at) {
  const v = new Float64Array(d);
  for (let i = 0; i < d; i++) {
    let s = (next() >>> 8) / 16777216;
    s += (next() >>> 8) / 16777216;
    s += (next() >>> 8) / 16777216;
    s += (next() >>> 8) / 16777216;
    v[i] = s - 2;
  }
  let ss = 0;
  for (let i = 0; i < d; i++) ss += v[i] * v[i];
  const norm = Math.sqrt(ss);
  for (let i = 0; i < d; i++) out[at + i] = v[i] / norm; // Float32Array: rounds to nearest
}

/** Case c of a suite: {query: Float32Array(d), pool: Float32Array(p*d)} from seed baseSeed + c. */
export function syntheticCase(baseSeed, c, p, d) {
  const next = mulberry32((baseSeed + c) >>> 0);
  const query = new Float32Array(d);
  unitVector(next, d, query, 0);
  const pool = new Float32Array(p * d);
  for (let i = 0; i < p; i++) unitVector(next, d, pool, i * d);
  return { query, pool };
}
