// The npm package against the native library: identical picks on the
// committed HotpotQA fixture and on seeded synthetic pools, identical error
// messages, the 32-bit sizes of docs/PORTABILITY.md on this real 32-bit
// target, and (optionally) the picks of the Cortex-M4F firmware under QEMU.
//
// The native side is wasm/examples/native_orders.rs: set
// MEMPURSUIT_NATIVE_ORDERS to its output, or the test runs it with cargo.
// MEMPURSUIT_FIXTURE: the fixture folder (default cli/data/hotpotqa-mini);
// MEMPURSUIT_QEMU_OUTPUT: the firmware's output (see .ci/portability.sh).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { init, select, Selector, MemPursuitError } from 'mempursuit';
import { readNpyF32 } from '../npy.mjs';
import { syntheticCase } from '../synthetic.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixtureDir = process.env.MEMPURSUIT_FIXTURE ?? `${root}cli/data/hotpotqa-mini`;

function nativeOrders() {
  const path = process.env.MEMPURSUIT_NATIVE_ORDERS;
  if (path) return JSON.parse(readFileSync(path, 'utf8'));
  const out = execFileSync(
    'cargo',
    // --strict-order: the example runs its calls with the StrictOrder executor, the unfused
    // kernels, the same bits as this module.
    ['run', '-q', '-p', 'mempursuit-wasm', '--example', 'native_orders', '--', '--strict-order', fixtureDir],
    { cwd: root, maxBuffer: 256 << 20, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return JSON.parse(out);
}

// The methods of native_orders.rs: every method by name, at its defaults.
const METHODS = ['recommended', 'pursuit', 'centroid', 'topk', 'mmr'];

const native = nativeOrders();
await init();

let maxWeightDiff = 0;

/** Every method on one input: picks equal, weights within 1e-9. */
function compare(label, query, pool, k, expected) {
  for (const method of METHODS) {
    const got = method === 'recommended' ? select(query, pool, k) : select(query, pool, k, { method });
    assert.deepEqual(Array.from(got.picks), expected[method], `${label}, ${method}: wasm vs native picks`);
    const w = expected[`${method}_weights`] ?? [];
    assert.equal(got.weights.length, w.length, `${label}, ${method}: weights`);
    for (let i = 0; i < w.length; i++) {
      const diff = Math.abs(got.weights[i] - w[i]);
      assert.ok(diff <= 1e-9, `${label}, ${method}: |weight wasm - native| = ${diff}`);
      maxWeightDiff = Math.max(maxWeightDiff, diff);
    }
  }
}

test(`fixture: the picks of every method equal the native ones (${native.target}, kernels ${native.isa})`, (t) => {
  const memories = readNpyF32(`${fixtureDir}/memories.f32.npy`);
  const queries = readNpyF32(`${fixtureDir}/queries.f32.npy`);
  const lines = readFileSync(`${fixtureDir}/queries.jsonl`, 'utf8').split('\n').filter((l) => l.trim());
  assert.equal(lines.length, native.fixture.queries.length, 'queries here vs in the native orders');
  assert.ok(lines.length >= 20, `the fixture has ${lines.length} queries`);
  lines.forEach((line, qi) => {
    const q = JSON.parse(line);
    const expected = native.fixture.queries[qi];
    assert.equal(expected.id, q.id, `query ${qi}: id in the native orders`);
    const pool = new Float32Array(q.pool.length * memories.cols);
    q.pool.forEach((id, i) => pool.set(memories.row(id), i * memories.cols));
    compare(`fixture query ${qi} (${q.id})`, queries.row(qi), pool, native.fixture.k, expected);
  });
  t.diagnostic(`${lines.length} queries x ${METHODS.length} methods at K = ${native.fixture.k}; max |weight wasm - native| = ${maxWeightDiff}`);
});

test('synthetic pools (P = 200, K = 20, d = 384): the picks equal the native ones', (t) => {
  const syn = native.synthetic;
  assert.equal(syn.results.length, syn.cases);
  for (let c = 0; c < syn.cases; c++) {
    const { query, pool } = syntheticCase(syn.seed, c, syn.p, syn.d);
    compare(`synthetic case ${c} (seed ${syn.seed + c})`, query, pool, syn.k, syn.results[c]);
  }
  t.diagnostic(`${syn.cases} pools x ${METHODS.length} methods; max |weight wasm - native| so far = ${maxWeightDiff}`);
});

test('a reused Selector gives the same picks as fresh calls, across shapes', () => {
  const syn = native.synthetic;
  const selector = new Selector();
  try {
    for (let c = 0; c < syn.cases; c++) {
      const { query, pool } = syntheticCase(syn.seed, c, syn.p, syn.d);
      // Alternate a smaller and the full shape: the buffers only grow.
      const k = c % 2 === 0 ? syn.k : 5;
      const got = selector.select(query, pool, k, { method: 'pursuit' });
      assert.deepEqual(Array.from(got.picks), syn.results[c].pursuit.slice(0, k), `case ${c}, K = ${k}`);
    }
  } finally {
    selector.free();
  }
});

// JSON has no NaN or infinities: native_orders.rs writes them as strings.
const decode = (v) => (v === 'NaN' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);

const camel = (name) => name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
// The package lists the options of an unknown-option error in camelCase,
// whatever the spelling of the key (mempursuit.js checkKey); the library
// lists them in the key's style.
const camelList = (message) =>
  message.replace(/^(unknown option '[^']*' \(options: )(.*)\)$/, (_, head, list) => `${head}${list.split(', ').map(camel).join(', ')})`);

test('errors: thrown MemPursuitErrors with the native messages (option lists in camelCase), word for word', () => {
  assert.ok(native.errors.length >= 20, `${native.errors.length} error cases`);
  for (const c of native.errors) {
    const options = Object.fromEntries(Object.entries(c.options).map(([key, v]) => [key, decode(v)]));
    if (c.relevance) options.relevance = c.relevance.map(decode);
    const query = new Float32Array(c.query.map(decode));
    const candidates = new Float32Array(c.candidates.map(decode));
    assert.throws(
      () => select(query, candidates, c.k, options),
      (err) => {
        assert.ok(err instanceof MemPursuitError && err instanceof Error, `${c.name}: ${err}`);
        assert.equal(err.message, camelList(c.message), c.name);
        assert.equal(err.code, c.code, c.name);
        return true;
      },
      c.name,
    );
  }
});

/**
 * The 32-bit sizes docs/PORTABILITY.md states: `Step` = N in the text, and
 * the 32-bit column of the generated size table (tests/tests/sizes.rs keeps
 * the table in step with the code).
 */
function documentedSizes() {
  const doc = readFileSync(`${root}docs/PORTABILITY.md`, 'utf8');
  const step = doc.match(/with `usize` = 4 and `Step` = (\d+)/);
  const table = doc.match(/<!-- sizes:begin[^\n]*\n([\s\S]*?)<!-- sizes:end -->/);
  assert.ok(step && table, 'docs/PORTABILITY.md: the `Step` = N sentence and the sizes table');
  const rows = table[1].split('\n').filter((l) => /^\| *\d/.test(l));
  const num = (cell) => Number(cell.trim().split(' ')[0].replace(/,/g, ''));
  return {
    step: Number(step[1]),
    // Columns: P_max | K_max | d | 64-bit FixedWorkspace | 64-bit bytes | 32-bit | embeddings.
    rows: rows.map((l) => {
      const cells = l.split('|').slice(1, -1);
      return { p: num(cells[0]), k: num(cells[1]), bytes32: num(cells[5]) };
    }),
  };
}

test('sizes on wasm32 match docs/PORTABILITY.md', async () => {
  // The raw module: these exports are not part of the package's API.
  const bytes = readFileSync(new URL('../mempursuit.wasm', import.meta.url));
  const { instance } = await WebAssembly.instantiate(bytes, {});
  const e = instance.exports;
  assert.equal(WebAssembly.Module.imports(new WebAssembly.Module(bytes)).length, 0, 'the module imports nothing');
  const doc = documentedSizes();
  assert.ok(doc.rows.length >= 5, `${doc.rows.length} rows in the size table`);
  assert.equal(e.mp_step_size(), doc.step, 'size_of::<Step>()');
  const fixed = [];
  for (let row = 0; e.mp_fixed_workspace_size(row) !== 0; row++) fixed.push(e.mp_fixed_workspace_size(row));
  assert.deepEqual(fixed, doc.rows.map((r) => r.bytes32), 'size_of::<FixedWorkspace<P, K>>() per row');
  for (const { p, k, bytes32 } of doc.rows) {
    // The table rounds up to a multiple of 8 (FixedWorkspace's alignment).
    assert.equal(Math.ceil((e.mp_scratch_bytes(p, k) >>> 0) / 8) * 8, bytes32, `ScratchSize::bytes(${p}, ${k})`);
  }
  // P = 100,000, K = 20,000 overflows 32-bit byte counts: reported, not wrapped.
  assert.equal(e.mp_scratch_bytes(100000, 20000) >>> 0, 0xffffffff);
});

test('the Cortex-M4F firmware under QEMU picks what the native build picks', { skip: !process.env.MEMPURSUIT_QEMU_OUTPUT && 'MEMPURSUIT_QEMU_OUTPUT not set (see .ci/portability.sh)' }, () => {
  const text = readFileSync(process.env.MEMPURSUIT_QEMU_OUTPUT, 'utf8');
  for (const name of ['pursuit', 'topk']) {
    const m = text.match(new RegExp(`^embedded ${name}:([ 0-9]*)$`, 'm'));
    assert.ok(m, `no 'embedded ${name}:' line in the QEMU output`);
    assert.deepEqual(m[1].trim().split(/\s+/).map(Number), native.embedded[name], name);
  }
});
