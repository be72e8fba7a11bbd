// The package's API: init() from every kind of source, select() and
// Selector on the crate-level example (two paraphrases of fact A, one
// statement of fact B), the options, the input forms, and the errors the
// wrapper itself raises.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import * as mempursuit from 'mempursuit';
import { init, initSync, select, Selector, MemPursuitError } from 'mempursuit';

const wasmDir = fileURLToPath(new URL('../', import.meta.url));
const wasmFile = `${wasmDir}mempursuit.wasm`;

const s = Math.SQRT1_2;
const query = new Float32Array([s, s]);
const rows = [
  [0.995, 0.0998], // fact A
  [0.9998, 0.02], // fact A, paraphrased
  [0.0, 1.0], // fact B
];
const flat = new Float32Array(rows.flat());

/** Asserts that `fn` throws a MemPursuitError with this code and message. */
function throwsCode(fn, code, message) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof MemPursuitError && err instanceof Error, String(err));
    assert.equal(err.name, 'MemPursuitError');
    assert.equal(err.code, code);
    if (message instanceof RegExp) assert.match(err.message, message);
    else assert.equal(err.message, message);
    return true;
  });
}

test('the exports', () => {
  assert.deepEqual(Object.keys(mempursuit).sort(), ['MemPursuitError', 'Selector', 'init', 'initSync', 'select']);
});

test('select() and new Selector() before init() throw', () => {
  const message = 'mempursuit is not initialized: call `await init()` first';
  throwsCode(() => select(query, flat, 2), 'argument', message);
  throwsCode(() => new Selector(), 'argument', message);
});

test('init() loads the module next to mempursuit.js; later calls resolve at once', async () => {
  await init();
  await init('ignored once initialized');
  initSync(new Uint8Array(0)); // ignored too
  assert.deepEqual(Array.from(select(query, flat, 2).picks), [0, 2]);
});

/** Runs `code` (an ES module importing the package) in a fresh Node.js. */
function fresh(code) {
  return execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: wasmDir, encoding: 'utf8' }).trim();
}
const PICKS = `console.log(Array.from(m.select([${s}, ${s}], ${JSON.stringify(rows)}, 2).picks).join(' '));`;

test('init() from a path, a file: URL, bytes, a Module, a Response; initSync() from bytes and a Module', () => {
  const path = JSON.stringify(wasmFile);
  const sources = {
    path: `await m.init(${path});`,
    'file URL': `await m.init(new URL('file://' + ${path}));`,
    'file URL string': `await m.init('file://' + ${path});`,
    'relative path': `await m.init('./mempursuit.wasm');`,
    'after a failed init()': `await m.init('./missing.wasm').catch(() => {}); await m.init();`,
    bytes: `await m.init(readFileSync(${path}));`,
    ArrayBuffer: `const b = readFileSync(${path}); await m.init(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));`,
    Module: `await m.init(new WebAssembly.Module(readFileSync(${path})));`,
    'promise of a Response': `await m.init(Promise.resolve(new Response(readFileSync(${path}), { headers: { 'content-type': 'application/wasm' } })));`,
    'Response without the wasm MIME type': `await m.init(new Response(readFileSync(${path})));`,
    'initSync(bytes)': `m.initSync(readFileSync(${path}));`,
    'initSync(Module)': `m.initSync(new WebAssembly.Module(readFileSync(${path})));`,
  };
  for (const [name, load] of Object.entries(sources)) {
    const out = fresh(`import * as m from 'mempursuit'; import { readFileSync } from 'node:fs'; ${load} ${PICKS}`);
    assert.equal(out, '0 2', name);
  }
});

test('init() fetches an http URL (the browser path)', async () => {
  const bytes = readFileSync(wasmFile);
  const server = createServer((req, res) => {
    if (req.url === '/mempursuit.wasm') {
      res.writeHead(200, { 'content-type': 'application/wasm' }).end(bytes);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  try {
    // Asynchronous (execFile): the server runs in this process.
    const code = (url) => `import * as m from 'mempursuit'; await m.init(${JSON.stringify(url)}); ${PICKS}`;
    const run = (url) =>
      new Promise((resolve, reject) => {
        execFile(process.execPath, ['--input-type=module', '-e', code(url)], { cwd: wasmDir }, (err, stdout, stderr) =>
          err ? reject(new Error(stderr || String(err))) : resolve(stdout.trim()),
        );
      });
    assert.equal(await run(`${base}/mempursuit.wasm`), '0 2');
    await assert.rejects(run(`${base}/missing.wasm`), /HTTP 404/);
  } finally {
    server.close();
  }
});

test('MemPursuit, top-K, MMR and centroid pursuit on the example', async () => {
  await init();
  const pursuit = select(query, rows, 2);
  assert.ok(pursuit.picks instanceof Uint32Array && pursuit.weights instanceof Float64Array);
  // Top-K spends its second slot on the paraphrase; MemPursuit picks fact B.
  assert.deepEqual(Array.from(pursuit.picks), [0, 2]);
  assert.ok(Math.abs(pursuit.weights[0] + pursuit.weights[1] - 1) < 1e-12);
  assert.ok(pursuit.weights.every((w) => w > 0));
  assert.equal(pursuit.stopReason, 'budget');
  assert.deepEqual(Array.from(pursuit.excluded), []);
  assert.equal(pursuit.steps.length, 2);
  assert.deepEqual(pursuit.steps.map((st) => st.index), [0, 2]);
  // Step 1: the score is cos(q, m_0); the residual shrinks at step 2.
  assert.ok(Math.abs(pursuit.steps[0].score - (0.995 + 0.0998) * s) < 1e-6);
  assert.ok(pursuit.steps[1].residualSq < pursuit.steps[0].residualSq);
  assert.equal(pursuit.steps[1].fwGap, 0, 'two picks span the optimum of this pool');

  const topk = select(query, rows, 2, { method: 'topk' });
  assert.deepEqual(Array.from(topk.picks), [0, 1]);
  assert.equal(topk.weights.length, 0, 'top-K has no weights');
  assert.deepEqual(topk.steps.map((st) => st.residualSq), [0, 0]);
  assert.deepEqual(Array.from(select(query, rows, 2, { method: 'mmr' }).picks), [0, 2]);
  assert.deepEqual(Array.from(select(query, rows, 2, { method: 'mmr', mmrLambda: 1 }).picks), [0, 1], 'MMR with lambda 1 is top-K');
  const centroid = select(query, rows, 3, { method: 'centroid' });
  assert.deepEqual(Array.from(centroid.weights), [1 / 3, 1 / 3, 1 / 3]);
});

test('the same picks from a flat Float32Array, rows, plain and Float64 arrays', async () => {
  await init();
  for (const [q, c] of [
    [query, flat],
    [Array.from(query), rows],
    [query, Array.from(flat)],
    [new Float64Array(query), new Float64Array(flat)],
    [query, rows.map((r) => new Float32Array(r))],
  ]) {
    assert.deepEqual(Array.from(select(q, c, 2).picks), [0, 2]);
  }
  const before = Array.from(flat);
  select(query, flat, 3, { method: 'centroid' });
  assert.deepEqual(Array.from(flat), before, 'the input is not modified');
});

test('k = 0, k above P, an empty pool', async () => {
  await init();
  assert.equal(select(query, flat, 0).picks.length, 0);
  assert.equal(select(query, flat, 2 ** 40).picks.length, 3);
  const empty = select(query, new Float32Array(0), 5);
  assert.equal(empty.picks.length, 0);
  assert.equal(empty.stopReason, 'budget');
});

test('relevance, poolOrder, excludeInvalid, atPoolOptimum, adaptive, requireUnit', async () => {
  await init();
  // First-stage scores rank row 1, then 2, for top-K.
  assert.deepEqual(Array.from(select(query, rows, 2, { method: 'topk', relevance: [0.1, 0.9, 0.5] }).picks), [1, 2]);
  assert.deepEqual(Array.from(select(query, rows, 2, { method: 'topk', relevance: new Float32Array([0.1, 0.9, 0.5]) }).picks), [1, 2]);
  // Pool order: row 2 first (rows reversed), as the retriever ranked them.
  const reversed = [rows[2], rows[1], rows[0]];
  assert.deepEqual(Array.from(select(query, reversed, 2, { method: 'topk', poolOrder: true }).picks), [0, 1]);
  // A NaN row is skipped and counted.
  const bad = [rows[0], [NaN, 0], rows[2]];
  throwsCode(() => select(query, bad, 3), 'input', 'candidate 1: element 0 is not finite (NaN)');
  const excluded = select(query, bad, 3, { excludeInvalid: true });
  assert.deepEqual(Array.from(excluded.picks), [0, 2]);
  assert.deepEqual(Array.from(excluded.excluded), [1]);
  assert.equal(excluded.stopReason, 'pool-exhausted');
  // Two picks reach the pool optimum of this pool.
  const square = [[1, 0], [0, 1], [0.6, 0.8], [0.8, 0.6]];
  const stop = select(query, square, 4, { atPoolOptimum: 'stop' });
  assert.deepEqual(Array.from(stop.picks), [2, 0, 3]);
  assert.equal(stop.stopReason, 'pool-optimum');
  assert.deepEqual(Array.from(select(query, square, 4).picks), [2, 0, 3, 1]);
  assert.equal(select(query, square, 4, { atPoolOptimum: 'fill' }).picks.length, 4);
  // Adaptive stopping: after an exact fit, two steps without improvement.
  const copies = [[1, 0], [1, 0], [1, 0], [1, 0], [0, 1]];
  const adaptive = select([1, 0], copies, 5, { adaptive: true });
  assert.equal(adaptive.stopReason, 'adaptive');
  assert.ok(adaptive.picks.length < 5);
  throwsCode(() => select([2, 0], rows, 1, { requireUnit: true }), 'input', 'query: norm 2 differs from 1 by more than 0.001');
  assert.deepEqual(Array.from(select([2, 2], rows, 2).picks), [0, 2], 'non-unit vectors are used through their direction');
});

test('the wrapper rejects what it cannot pass on', async () => {
  await init();
  throwsCode(() => select(query, flat, 2, { lambda: 0.5 }), 'argument', /^unknown option 'lambda' \(known: method, ridge, gamma, mmrLambda,/);
  throwsCode(() => select(query, flat, 2, { method: 'bm25' }), 'argument', "unknown method 'bm25' (pursuit, centroid, topk, mmr)");
  throwsCode(() => select(query, flat, 2, { method: 'topk', gamma: 0.5 }), 'argument', "option 'gamma' applies to methods 'pursuit' and 'centroid', not 'topk'");
  throwsCode(() => select(query, flat, 2, { mmrLambda: 0.5 }), 'argument', "option 'mmrLambda' applies to method 'mmr', not 'pursuit'");
  throwsCode(() => select(query, flat, 2, { method: 'centroid', ridge: 1 }), 'argument', /^method 'centroid' is ridge = Infinity/);
  throwsCode(() => select(query, flat, 2, { method: 'centroid', atPoolOptimum: 'fill' }), 'argument', "option 'atPoolOptimum' applies to method 'pursuit', not 'centroid'");
  throwsCode(() => select(query, flat, 2, { gamma: '0.5' }), 'argument', "option 'gamma' must be a number");
  throwsCode(() => select(query, flat, 2, { atPoolOptimum: 'halt' }), 'argument', "option 'atPoolOptimum' must be 'continue', 'stop' or 'fill', not 'halt'");
  throwsCode(() => select(query, flat, 2, { relevance: [1, 2, 3], poolOrder: true }), 'argument', "options 'relevance' and 'poolOrder' exclude each other");
  for (const k of [-1, 1.5, NaN, '2', undefined]) {
    throwsCode(() => select(query, flat, k), 'argument', `k must be a non-negative integer, got ${k}`);
  }
  throwsCode(() => select(query, [[1, 0], [1]], 2), 'argument', 'candidate row 1 has 1 values but the query has 2');
  throwsCode(() => select('query', flat, 2), 'argument', 'query must be a Float32Array or an array of numbers');
  throwsCode(() => select(query, 7, 2), 'argument', 'candidates must be a Float32Array (P x d, row-major) or an array of rows');
});

test('a Selector keeps its memory, survives errors, and cannot be used after free()', async () => {
  await init();
  const selector = new Selector();
  assert.deepEqual(Array.from(selector.select(query, flat, 2).picks), [0, 2]);
  throwsCode(() => selector.select(query, flat, 2, { gamma: 2 }), 'option', 'gamma 2 must be in (0, 1]');
  // A shape whose scratch overflows 32-bit byte counts: a capacity error,
  // not a trap, and the selector stays usable.
  const big = new Float32Array(100000).fill(1);
  // (The message is the Rust library's; it names the shape.)
  throwsCode(() => selector.select([1], big, 20000), 'capacity', /P(_max)? = 100000, K(_max)? = 20000 overflows/);
  assert.deepEqual(Array.from(selector.select(query, flat, 2).picks), [0, 2]);
  selector.free();
  selector.free(); // twice is fine
  throwsCode(() => selector.select(query, flat, 2), 'argument', 'this Selector was freed');
});
