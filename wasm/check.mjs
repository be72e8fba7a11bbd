// Checks the WebAssembly build against the native one: every query of the
// committed HotpotQA fixture (24 queries, K = 10) and eight seeded synthetic
// pools (P = 200, K = 20, d = 384) through the wasm module in Node.js, with
// paper-mode pursuit, centroid pursuit (gamma 0.5), top-K and MMR (lambda
// 0.5); the picks must equal the native ones exactly (same order). Also
// checks the 32-bit sizes of docs/PORTABILITY.md on this real 32-bit target.
//
//   bash wasm/build.sh
//   cargo run -p mempursuit-wasm --example native_orders -- cli/data/hotpotqa-mini > target/native-orders.json
//   node wasm/check.mjs [--native target/native-orders.json] [--fixture cli/data/hotpotqa-mini]
//                       [--wasm wasm/pkg-tmp/mempursuit_wasm.wasm] [--qemu-output FILE]
//
// --qemu-output: the output of the embedded-check firmware under
// qemu-system-arm (see .ci/portability.sh); its picks must equal the native
// ones for the same data too.
//
// Prints one line per failure and `N passed, M failed`; exits 1 on any failure.

import { readFileSync } from 'node:fs';
import { MemPursuit, DEFAULT_WASM_URL } from './mempursuit.mjs';
import { syntheticCase } from './synthetic.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
};
const nativePath = opt('native', 'target/native-orders.json');
const fixtureDir = opt('fixture', 'cli/data/hotpotqa-mini');
const wasmPath = opt('wasm', DEFAULT_WASM_URL);

/** Reads a little-endian f32 C-order .npy file (format 1.0 or 2.0). */
export function readNpyF32(path) {
  const buf = readFileSync(path);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLen;
  const header = buf.toString('latin1', major === 1 ? 10 : 12, start);
  if (!/'descr':\s*'<f4'/.test(header) || !/'fortran_order':\s*False/.test(header)) {
    throw new Error(`${path}: need little-endian f32 in C order, header ${header}`);
  }
  const shape = header.match(/'shape':\s*\(([^)]*)\)/)[1].split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  const [rows, cols = 1] = shape;
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + start + rows * cols * 4));
  return { data, rows, cols, row: (i) => data.subarray(i * cols, (i + 1) * cols) };
}

const METHODS = [
  ['pursuit', { method: 'pursuit' }],
  ['centroid', { method: 'centroid', gamma: 0.5 }],
  ['topk', { method: 'topk' }],
  ['mmr', { method: 'mmr', lambda: 0.5 }],
];

// The 32-bit column of the size table (docs/PORTABILITY.md, checked by
// tests/tests/sizes.rs), for the capacities of TABLE_CAPACITIES.
const SIZES_32 = [7456, 23104, 39744, 70960, 70960, 381400, 1442800];
const STEP_32 = 80;

let passed = 0;
let failed = 0;
let maxWeightDiff = 0;
const fail = (what, detail) => {
  failed++;
  console.log(`FAIL ${what}: ${detail}`);
};
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

function compare(label, mp, query, pool, k, expected) {
  for (const [name, options] of METHODS) {
    let got;
    try {
      got = mp.select(query, pool, k, options);
    } catch (err) {
      fail(`${label} ${name}`, `wasm error ${err.message}`);
      continue;
    }
    const want = expected[name];
    if (!same(got.picks, want)) {
      fail(`${label} ${name}`, `wasm [${got.picks}] native [${want}]`);
      continue;
    }
    if (name === 'pursuit') {
      const w = expected.pursuit_weights;
      const diff = Math.max(...got.weights.map((x, i) => Math.abs(x - w[i])));
      maxWeightDiff = Math.max(maxWeightDiff, diff);
      if (!(diff <= 1e-9)) {
        fail(`${label} ${name} weights`, `max |wasm - native| = ${diff}`);
        continue;
      }
    }
    passed++;
  }
}

const native = JSON.parse(readFileSync(nativePath, 'utf8'));
const mp = await MemPursuit.load(wasmPath);
console.log(`wasm module: ${wasmPath}; native reference: ${nativePath} (${native.target}, kernels ${native.isa})`);

// 1. Sizes on wasm32.
const sizes = mp.sizes();
if (sizes.step === STEP_32) passed++;
else fail('size_of::<Step>() on wasm32', `${sizes.step}, docs say ${STEP_32}`);
if (same(sizes.fixedWorkspace, SIZES_32)) passed++;
else fail('size_of::<FixedWorkspace<P, K>>() on wasm32', `[${sizes.fixedWorkspace}], docs say [${SIZES_32}]`);
if (sizes.scratchBytes(64, 16) === 23104) passed++;
else fail('ScratchSize::bytes(64, 16) on wasm32', `${sizes.scratchBytes(64, 16)}`);
// P = 100,000, K = 20,000 overflows 32-bit byte counts: reported, not wrapped.
if (sizes.scratchBytes(100000, 20000) === 0xffffffff) passed++;
else fail('ScratchSize overflow on wasm32', `${sizes.scratchBytes(100000, 20000)}`);

// 2. The fixture.
const memories = readNpyF32(`${fixtureDir}/memories.f32.npy`);
const queries = readNpyF32(`${fixtureDir}/queries.f32.npy`);
const lines = readFileSync(`${fixtureDir}/queries.jsonl`, 'utf8').split('\n').filter((l) => l.trim());
if (lines.length !== native.fixture.queries.length) {
  fail('fixture', `${lines.length} queries here, ${native.fixture.queries.length} in the native orders`);
}
lines.forEach((line, qi) => {
  const q = JSON.parse(line);
  const expected = native.fixture.queries[qi];
  if (!expected || expected.id !== q.id) {
    fail(`query ${qi}`, `id ${q.id} not in the native orders at this row`);
    return;
  }
  const pool = new Float32Array(q.pool.length * memories.cols);
  q.pool.forEach((id, i) => pool.set(memories.row(id), i * memories.cols));
  compare(`fixture query ${qi} (${q.id})`, mp, queries.row(qi), pool, native.fixture.k, expected);
});

// 3. Synthetic pools.
const syn = native.synthetic;
for (let c = 0; c < syn.cases; c++) {
  const { query, pool } = syntheticCase(syn.seed, c, syn.p, syn.d);
  compare(`synthetic case ${c} (seed ${syn.seed + c})`, mp, query, pool, syn.k, syn.results[c]);
}

// 4. Optional: the Cortex-M4F firmware's picks under QEMU (see
// embedded-check/src/main.rs), e.g. `--qemu-output target/qemu.txt`.
const qemuPath = opt('qemu-output', null);
if (qemuPath) {
  const text = readFileSync(qemuPath, 'utf8');
  for (const name of ['pursuit', 'topk']) {
    const m = text.match(new RegExp(`^embedded ${name}:([ 0-9]*)$`, 'm'));
    const got = m ? m[1].trim().split(/\s+/).map(Number) : null;
    const want = native.embedded[name];
    if (got && same(got, want)) passed++;
    else fail(`thumbv7em firmware ${name}`, `qemu [${got}] native [${want}]`);
  }
}

mp.close();
console.log(`max |weight wasm - native| (paper pursuit): ${maxWeightDiff}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
