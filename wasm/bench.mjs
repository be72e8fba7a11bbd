// WASM per-query latency at P = 200, K = 20, d = 384, the counterpart of
// wasm/examples/native_latency.rs (same seeded random unit vectors, same
// calls, same picks checksum).
//
//   bash wasm/build.sh && node wasm/bench.mjs [ROUNDS] [--wasm PATH]
//
// 64 query/pool cases (seeds 9000..9063) are staged in wasm memory up
// front. Each timed call is one selection on one case through the raw
// export `mp_select` (input already in linear memory, like the native call
// on a preallocated workspace). About 2 s of warm-up (V8 tier-up), then per
// method one untimed round (checksum) and ROUNDS timed rounds (default 10).
// Also times the package's Selector.select(), which copies the 300 KB pool
// into linear memory on every call, for pursuit.

import { readFileSync } from 'node:fs';
import { initSync, Selector } from 'mempursuit';
import { syntheticCase } from './synthetic.mjs';

const SEED = 9000;
const CASES = 64;
const P = 200;
const K = 20;
const D = 384;

const args = process.argv.slice(2);
const wi = args.indexOf('--wasm');
const wasmPath = wi >= 0 ? args[wi + 1] : new URL('./mempursuit.wasm', import.meta.url);
const rounds = Number(args.find((a, i) => /^\d+$/.test(a) && args[i - 1] !== '--wasm') ?? 10);

// The raw module for the staged calls (its C ABI: wasm/src/lib.rs), and the
// package on the same bytes for the copying calls.
const bytes = readFileSync(wasmPath);
const e = new WebAssembly.Instance(new WebAssembly.Module(bytes), {}).exports;
initSync(bytes);
const sel = e.mp_selector_new();
const cases = [];
for (let c = 0; c < CASES; c++) cases.push(syntheticCase(SEED, c, P, D));
const pools = cases.map(({ query, pool }) => {
  const queryPtr = e.mp_alloc(4 * D);
  const candidatesPtr = e.mp_alloc(4 * P * D);
  new Float32Array(e.memory.buffer, queryPtr, D).set(query);
  new Float32Array(e.memory.buffer, candidatesPtr, P * D).set(pool);
  return { queryPtr, candidatesPtr };
});
// The specification of each method, set by name (mp_spec_set) before its
// calls; mp_select(sel, query, d, candidates, P*d, relevance, 0, 0, costs, 0, 0, K).
const encoder = new TextEncoder();
const text = e.mp_alloc(64);
function useMethod(method) {
  e.mp_spec_reset(sel);
  const bytes = new Uint8Array(e.memory.buffer, text, 64);
  const key = encoder.encodeInto('method', bytes).written;
  const value = encoder.encodeInto(method, bytes.subarray(16)).written;
  if (e.mp_spec_set(sel, text, key, 0, 0, text + 16, value) !== 0) throw new Error(`method ${method}`);
}
const call = (p) => e.mp_select(sel, p.queryPtr, D, p.candidatesPtr, P * D, 0, 0, 0, 0, 0, 0, K);
const methods = ['recommended', 'pursuit', 'centroid', 'topk', 'mmr'];

// Warm-up: V8 first runs wasm through its baseline compiler and tiers up to
// the optimizing one in the background; run every method for ~2 s first.
const warmUntil = process.hrtime.bigint() + 2_000_000_000n;
while (process.hrtime.bigint() < warmUntil) {
  for (const method of methods) {
    useMethod(method);
    for (const p of pools) call(p);
  }
}

const percentile = (sorted, q) => sorted[Math.round((sorted.length - 1) * q)];
console.log(`wasm (Node ${process.version}), P = ${P}, K = ${K}, d = ${D}, ${CASES} cases x ${rounds} rounds`);
console.log('method      median_us    p10_us    p90_us   checksum');
for (const name of methods) {
  useMethod(name);
  const times = [];
  let checksum = 0;
  for (let round = 0; round <= rounds; round++) {
    for (const p of pools) {
      const t0 = process.hrtime.bigint();
      const n = call(p);
      const t1 = process.hrtime.bigint();
      if (n !== K) throw new Error(`${name}: ${n} picks`);
      if (round === 0) {
        const picks = new Uint32Array(e.memory.buffer, e.mp_result_ptr(sel, 0), K);
        picks.forEach((i, t) => (checksum = (Math.imul(checksum, 31) + (t * P + i)) >>> 0));
      } else {
        times.push(Number(t1 - t0) / 1000);
      }
    }
  }
  times.sort((a, b) => a - b);
  const f = (x) => x.toFixed(1).padStart(9);
  console.log(`${name.padEnd(11)} ${f(percentile(times, 0.5)).padStart(10)} ${f(percentile(times, 0.1))} ${f(percentile(times, 0.9))}   ${checksum}`);
}

// The package's Selector, with the copy-in of the pool on every call.
const selector = new Selector();
const times = [];
for (let round = 0; round <= rounds; round++) {
  for (const { query, pool } of cases) {
    const t0 = process.hrtime.bigint();
    selector.select(query, pool, K, { method: 'pursuit' });
    const t1 = process.hrtime.bigint();
    if (round > 0) times.push(Number(t1 - t0) / 1000);
  }
}
times.sort((a, b) => a - b);
console.log(`pursuit via Selector.select() incl. copying the pool in: median ${percentile(times, 0.5).toFixed(1)} us`);
selector.free();
