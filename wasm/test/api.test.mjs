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
  assert.deepEqual(Object.keys(mempursuit).sort(), ['METADATA_FIELDS', 'METADATA_KEY', 'MemPursuitError', 'Selector', 'Store', 'checkDocumentSettings', 'checkQuery', 'init', 'initSync', 'optionKeys', 'prepareDocuments', 'select', 'selectDocuments']);
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

test('the default is the recommended setting; every method by name on the example', async () => {
  await init();
  const plain = select(query, rows, 2);
  assert.ok(plain.picks instanceof Uint32Array && plain.weights instanceof Float64Array);
  assert.ok(plain.excluded instanceof Uint32Array && plain.skipped instanceof Uint32Array);
  assert.deepEqual(plain, select(query, rows, 2, { method: 'recommended' }));
  assert.deepEqual(Object.keys(plain), ['picks', 'weights', 'steps', 'stopReason', 'excluded', 'skipped']);
  // Top-K spends its second slot on the paraphrase; the others pick fact B.
  assert.deepEqual(Array.from(plain.picks), [0, 2]);
  const pursuit = select(query, rows, 2, { method: 'pursuit' });
  assert.deepEqual(Array.from(pursuit.picks), [0, 2]);
  assert.ok(Math.abs(pursuit.weights[0] + pursuit.weights[1] - 1) < 1e-12);
  assert.ok(pursuit.weights.every((w) => w > 0));
  assert.equal(pursuit.stopReason, 'budget');
  assert.deepEqual(Array.from(pursuit.excluded), []);
  assert.equal(pursuit.steps.length, 2);
  assert.deepEqual(pursuit.steps.map((st) => st.index), [0, 2]);
  assert.deepEqual(Object.keys(pursuit.steps[0]), [
    'index', 'score', 'residualSq', 'improvement', 'fwGap', 'nu', 'freeSize', 'solverIterations', 'filled', 'dependent', 'refit', 'verified',
  ]);
  assert.deepEqual(pursuit.steps.map((st) => [st.freeSize, st.filled, st.dependent, st.refit, st.verified]), [
    [1, false, false, 'optimal', 0],
    [2, false, false, 'optimal', 0],
  ]);
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
  // Keys in snake_case are the same options.
  assert.deepEqual(select(query, rows, 2, { method: 'mmr', mmr_lambda: 1 }), select(query, rows, 2, { method: 'mmr', mmrLambda: 1 }));
  // A number written as text is not a number (the types say number; the CLI's text form is another matter).
  assert.throws(() => select(query, rows, 2, { method: 'pursuit', gamma: '0.5' }), /^MemPursuitError: option 'gamma' must be a number, not a string, got '0.5'$/);
  assert.deepEqual(select(query, rows, 3, { method: 'pursuit', ridge: Infinity, gamma: 0.5 }), select(query, rows, 3, { method: 'centroid', gamma: 0.5 }));
});

// Issue 19's textbook case (tests/tests/conformance.rs `textbook()`): three
// paraphrases of fact A and one record of fact B; the query asks for both.
test('the default select() composes: at K = 2 the picks include fact B (row 3)', async () => {
  await init();
  const textbook = [
    [1, 0.07, 0, 0], // A
    [1, 0.08, 0.05, 0], // A'
    [1, 0.075, 0, 0.04], // A''
    [0, 1, 0, 0.05], // B
  ];
  const q = [s, s, 0, 0];
  const picks = Array.from(select(q, textbook, 2).picks);
  assert.ok(picks.includes(3), `default picks ${picks} include row 3`);
  assert.ok([0, 1, 2].includes(picks[0]), `first pick ${picks[0]} is a statement of A`);
  assert.deepEqual(picks, [1, 3]);
  assert.deepEqual(Array.from(select(q, textbook, 2, { method: 'topk' }).picks), [1, 2], 'top-K returns two paraphrases of A');
});

test('the same picks from a flat Float32Array, rows, plain and Float64 arrays', async () => {
  await init();
  for (const [q, c] of [
    [query, flat],
    [Array.from(query), rows],
    [query, Array.from(flat)],
    [new Float64Array(query), new Float64Array(flat)],
    [query, rows.map((r) => new Float32Array(r))],
    [query, rows.map((r) => new Float64Array(r))],
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
  assert.equal(select(query, flat, 0).stopReason, 'budget');
  assert.equal(select(query, flat, 2 ** 40).picks.length, 3);
  assert.equal(select(query, flat, Number.MAX_SAFE_INTEGER).picks.length, 3);
  // Fewer than k came back because the pool ran out: pool_exhausted, for
  // every method (issue 30, item 6); k = P stops for the budget.
  for (const method of ['recommended', 'pursuit', 'centroid', 'topk', 'mmr']) {
    const above = select(query, flat, 10, { method });
    assert.deepEqual([above.picks.length, above.stopReason], [3, 'pool_exhausted'], method);
    const equal = select(query, flat, 3, { method });
    assert.deepEqual([equal.picks.length, equal.stopReason], [3, 'budget'], method);
  }
  for (const empty of [new Float32Array(0), []]) {
    const r = select(query, empty, 5);
    assert.equal(r.picks.length, 0);
    assert.equal(r.stopReason, 'pool_exhausted');
  }
});

test('every option reaches the library', async () => {
  await init();
  // Retriever scores, by rank and raw: row 1, then 2, for top-K.
  assert.deepEqual(Array.from(select(query, rows, 2, { method: 'topk', relevance: [0.1, 0.9, 0.5] }).picks), [1, 2]);
  assert.deepEqual(Array.from(select(query, rows, 2, { method: 'topk', relevance: new Float32Array([0.1, 0.9, 0.5]), rawRelevance: true }).picks), [1, 2]);
  // Raw relevance: the scores' units decide (a huge score on row 2 wins for the pursuit).
  assert.deepEqual(Array.from(select(query, rows, 1, { method: 'pursuit', relevance: [0.1, 0.2, 50], rawRelevance: true }).picks), [2]);
  // Pool order: row 0 first (rows reversed), as the retriever ranked them.
  const reversed = [rows[2], rows[1], rows[0]];
  assert.deepEqual(Array.from(select(query, reversed, 2, { method: 'topk', poolOrder: true }).picks), [0, 1]);
  // A NaN row is excluded and listed.
  const bad = [rows[0], [NaN, 0], rows[2]];
  throwsCode(() => select(query, bad, 3), 'input', "candidate 1: element 0 is not finite (NaN); or set option 'invalid' to 'exclude' to leave such rows out (listed in excluded)");
  const excluded = select(query, bad, 3, { invalid: 'exclude' });
  assert.deepEqual(Array.from(excluded.picks), [0, 2]);
  assert.deepEqual(Array.from(excluded.excluded), [1]);
  assert.equal(excluded.stopReason, 'pool_exhausted');
  // Two picks reach the pool optimum of this pool.
  const square = [[1, 0], [0, 1], [0.6, 0.8], [0.8, 0.6]];
  const stop = select(query, square, 4, { method: 'pursuit', atPoolOptimum: 'stop' });
  assert.deepEqual(Array.from(stop.picks), [2, 0, 3]);
  assert.equal(stop.stopReason, 'pool_optimum');
  assert.deepEqual(Array.from(select(query, square, 4, { method: 'pursuit' }).picks), [2, 0, 3, 1]);
  const fill = select(query, square, 4, { method: 'pursuit', atPoolOptimum: 'fill' });
  assert.equal(fill.picks.length, 4);
  assert.deepEqual(fill.steps.map((st) => st.filled), [false, false, false, true]);
  // A looser optimum tolerance stops earlier.
  const loose = select(query, square, 4, { method: 'pursuit', atPoolOptimum: 'stop', optimumTolerance: 0.5 });
  assert.ok(loose.picks.length < 3, `stopped after ${loose.picks.length} picks`);
  // Adaptive stopping: after an exact fit, two steps without improvement.
  const copies = [[1, 0], [1, 0], [1, 0], [1, 0], [0, 1]];
  const adaptive = select([1, 0], copies, 5, { method: 'pursuit', adaptive: true });
  assert.equal(adaptive.stopReason, 'adaptive');
  assert.ok(adaptive.picks.length < 5);
  // Dependent picks: duplicates flagged, or skipped.
  const dup = [rows[0], rows[2], rows[0], rows[2]];
  const kept = select(query, dup, 4, { method: 'pursuit' });
  assert.ok(kept.steps.some((st) => st.dependent), 'a duplicate is flagged');
  const skipped = select(query, dup, 4, { method: 'pursuit', dependentPicks: 'skip' });
  assert.deepEqual(Array.from(skipped.picks), [0, 1]);
  assert.deepEqual(Array.from(skipped.skipped), [2, 3]);
  assert.equal(skipped.stopReason, 'pool_exhausted');
  // Normalization.
  throwsCode(() => select([2, 0], rows, 1, { normalization: 'require_unit' }), 'input', 'query: norm 2 differs from 1 by more than 0.001');
  assert.deepEqual(Array.from(select([2, 2], rows, 2).picks), [0, 2], 'non-unit vectors are used through their direction');
  // Storage: the same picks on this pool; a value outside f16 is named.
  for (const storage of ['f32', 'f16', 'bf16', 'int8']) {
    for (const method of ['recommended', 'pursuit', 'centroid', 'topk', 'mmr']) {
      assert.deepEqual(Array.from(select(query, rows, 2, { method, storage }).picks), Array.from(select(query, rows, 2, { method }).picks), `${method}, ${storage}`);
    }
  }
  throwsCode(
    () => select([1, 0], [[1, 0], [70000, 1]], 1, { storage: 'f16' }),
    'input',
    "candidate 1: element 0 = 70000 is outside the f16 range [-65504, 65504]; use storage 'f32', or normalize the rows (only their directions are used)",
  );
  // Costs (token counts) and a cost budget: row 2 (fact B, 70 tokens) no
  // longer fits after row 0 (40), so the pursuit takes row 1 (35); the
  // costs as a Float32Array, a Float64Array or numbers.
  for (const costs of [new Float32Array([40, 35, 70]), new Float64Array([40, 35, 70]), [40, 35, 70]]) {
    const budgeted = select(query, rows, 3, { method: 'pursuit', costs, costBudget: 100 });
    assert.deepEqual(Array.from(budgeted.picks), [0, 1]);
    assert.equal(budgeted.stopReason, 'cost_budget');
  }
  assert.deepEqual(Array.from(select(query, rows, 3, { method: 'topk', costs: [40, 35, 70], costBudget: 110 }).picks), [0, 1]);
  throwsCode(() => select(query, rows, 2, { costs: [1, 2, 3] }), 'option', 'costs need a cost budget (the most the picks may cost in total)');
  throwsCode(() => select(query, rows, 2, { costBudget: 5 }), 'option', 'a cost budget needs costs (one per candidate, e.g. its token count)');
  throwsCode(() => select(query, rows, 2, { costs: [1, -2, 3], costBudget: 5 }), 'input', 'cost 1 is -2; costs must be finite and >= 0');
  throwsCode(() => select(query, rows, 2, { costs: [1, 2], costBudget: 5 }), 'input', 'costs have 2 entries but the pool has 3 candidates');
  throwsCode(() => select(query, rows, 2, { costs: [1, 2, 3], costBudget: -5 }), 'option', 'cost budget -5 must be finite and >= 0');
  throwsCode(() => select(query, rows, 2, { costs: [1, 'x', 3], costBudget: 5 }), 'argument', 'options.costs[1] is a string ("x"), not a number');
  // int8 storage returns the f32 pursuit's selection (where int8 passes do
  // not pay, as on this small pool and in WebAssembly, it runs the f32 passes).
  assert.deepEqual(
    Array.from(select(query, rows, 2, { method: 'pursuit', storage: 'int8' }).weights),
    Array.from(select(query, rows, 2, { method: 'pursuit' }).weights),
    'int8 storage: the f32 selection',
  );
});

test('options are the library\'s: its messages for unknown, bad and misapplied options', async () => {
  await init();
  throwsCode(() => select(query, flat, 2, { lambda: 0.5 }), 'option', /^unknown option 'lambda' \(options: method, gamma, ridge, mmrLambda, /);
  throwsCode(() => select(query, flat, 2, { method: 'bm25' }), 'option', "unknown method 'bm25' (methods: recommended, pursuit, centroid, topk, mmr)");
  throwsCode(() => select(query, flat, 2, { method: 'topk', gamma: 0.5 }), 'option', "option 'gamma' does not apply to method 'topk' (it applies to pursuit, centroid)");
  throwsCode(() => select(query, flat, 2, { mmrLambda: 0.5 }), 'option', "option 'mmrLambda' does not apply to method 'recommended' (it applies to mmr)");
  throwsCode(() => select(query, flat, 2, { method: 'centroid', ridge: 1 }), 'option', "option 'ridge' does not apply to method 'centroid' (it applies to pursuit)");
  throwsCode(() => select(query, flat, 2, { method: 'centroid', atPoolOptimum: 'fill' }), 'option', "option 'atPoolOptimum' does not apply to method 'centroid' (it applies to pursuit with a finite ridge)");
  throwsCode(() => select(query, flat, 2, { method: 'pursuit', gamma: 'big' }), 'option', "option 'gamma' must be a number, not a string, got 'big'");
  // A number or bool written as text is text (a name), as in Python.
  throwsCode(() => select(query, flat, 2, { method: 'pursuit', gamma: '0.3' }), 'option', "option 'gamma' must be a number, not a string, got '0.3'");
  throwsCode(() => select(query, flat, 2, { method: 'pursuit', adaptive: 'true' }), 'option', "option 'adaptive' must be true or false, not a string, got 'true'");
  throwsCode(() => select(query, flat, 2, { method: 'pursuit', gamma: true }), 'option', "option 'gamma' must be a number, got true");
  throwsCode(() => select(query, flat, 2, { method: 'pursuit', adaptive: 1 }), 'option', "option 'adaptive' must be true or false, got 1");
  throwsCode(() => select(query, flat, 2, { method: 'pursuit', atPoolOptimum: 'halt' }), 'option', "option 'atPoolOptimum' must be 'continue', 'stop' or 'fill', got 'halt'");
  throwsCode(() => select(query, flat, 2, { method: 'pursuit', gamma: 2 }), 'option', 'gamma 2 must be in (0, 1]');
  throwsCode(() => select(query, flat, 2, { method: 'pursuit', gamma: NaN }), 'option', 'gamma NaN must be in (0, 1]');
  throwsCode(() => select(query, flat, 2, { relevance: [1, 2, 3], poolOrder: true }), 'option', 'relevance scores and pool order exclude each other: pass one of them');
  // A separator in a value is part of the value, not a second option.
  throwsCode(() => select(query, flat, 2, { method: 'topk,raw_relevance=true' }), 'option', /^unknown method 'topk,raw_relevance=true'/);
  // undefined and null are "not given".
  assert.deepEqual(select(query, flat, 2, { method: undefined, gamma: null }), select(query, flat, 2));
  // What the wrapper cannot pass on.
  throwsCode(() => select(query, flat, 2, { method: ['mmr'] }), 'argument', "option 'method' is an array: option values are numbers, booleans or strings");
  throwsCode(() => select(query, flat, 2, { gamma: 1n }), 'argument', "option 'gamma' is a BigInt (1n): option values are numbers, booleans or strings");
  throwsCode(() => select(query, flat, 2, 'mmr'), 'argument', `options must be an object such as { method: 'mmr', mmrLambda: 0.3 }, got a string ("mmr")`);
  for (const [k, shown] of [[-1, 'number -1'], [1.5, 'number 1.5'], [NaN, 'number NaN'], [Infinity, 'number Infinity'], ['2', 'a string ("2")'], [2n, 'a BigInt (2n)'], [undefined, 'undefined']]) {
    throwsCode(() => select(query, flat, k), 'argument', `k must be a non-negative integer, got ${shown}`);
  }
  // Integers beyond 2 ** 53 are integers: K above P selects min(K, P).
  for (const k of [2 ** 53, 2 ** 70, Number.MAX_VALUE]) assert.deepEqual(select(query, flat, k), select(query, flat, flat.length));
  throwsCode(() => select(query, [[1, 0], [1]], 2), 'argument', 'candidates[1] has 1 values but the query has 2: every row needs d = 2 values');
  throwsCode(() => select('query', flat, 2), 'argument', 'query must be a Float32Array, a Float64Array or an array of numbers, got a string ("query")');
  throwsCode(() => select(query, 7, 2), 'argument', 'candidates must be a Float32Array (P x d, row-major), an array of numbers or an array of rows, got number 7');
});

// New-user trial of 2026-12-02, item 5: the option names of this package are camelCase.
const CAMEL_OPTIONS =
  'method, gamma, ridge, mmrLambda, rawRelevance, poolOrder, costBudget, adaptive, atPoolOptimum, optimumTolerance, dependentPicks, normalization, invalid, storage';

test('an unknown option lists the options in camelCase, whatever the spelling of the key', async () => {
  await init();
  for (const key of ['mmrlambda', 'mmr_lamda', 'mmrLamda', 'mmr-lamda', 'Gamma']) {
    throwsCode(() => select(query, flat, 2, { method: 'mmr', [key]: 0.3 }), 'option', `unknown option '${key}' (options: ${CAMEL_OPTIONS})`);
  }
  // The Selector's cached specification does not hide it either.
  const selector = new Selector();
  throwsCode(() => selector.select(query, flat, 2, { mmrlambda: 0.3 }), 'option', `unknown option 'mmrlambda' (options: ${CAMEL_OPTIONS})`);
  selector.free();
});

test('one option in two spellings is an error naming both, in either order; one spelling alone is accepted', async () => {
  await init();
  throwsCode(() => select(query, flat, 2, { method: 'mmr', mmr_lambda: 0.1, mmrLambda: 0.9 }), 'option', "option 'mmrLambda' is given twice (as 'mmr_lambda' or 'mmrLambda'); give it once");
  throwsCode(() => select(query, flat, 2, { method: 'mmr', mmrLambda: 0.9, mmr_lambda: 0.1 }), 'option', "option 'mmr_lambda' is given twice (as 'mmr_lambda' or 'mmrLambda'); give it once");
  throwsCode(() => select(query, flat, 2, { costs: [1, 1, 1], cost_budget: 2, costBudget: 3 }), 'option', "option 'costBudget' is given twice (as 'cost_budget' or 'costBudget'); give it once");
  throwsCode(() => select(query, flat, 2, { method: 'pursuit', 'at-pool-optimum': 'stop', atPoolOptimum: 'fill' }), 'option', "option 'atPoolOptimum' is given twice (as 'at_pool_optimum' or 'atPoolOptimum'); give it once");
  // A spelling left undefined or null is not given.
  assert.deepEqual(select(query, flat, 2, { method: 'mmr', mmr_lambda: undefined, mmrLambda: 0.1 }), select(query, flat, 2, { method: 'mmr', mmrLambda: 0.1 }));
  // snake_case alone stays accepted, and picks what camelCase picks.
  const snake = select(query, flat, 2, { method: 'mmr', mmr_lambda: 0.1 });
  assert.deepEqual(snake, select(query, flat, 2, { method: 'mmr', mmrLambda: 0.1 }));
  assert.notDeepEqual(Array.from(snake.picks), Array.from(select(query, flat, 2, { method: 'mmr', mmrLambda: 1 }).picks), 'the value is used');
});

test('a query whose length differs from every candidate row names the query (new-user trial of 2026-12-02, item 3)', async () => {
  await init();
  const wide = rows.map((r) => [...r, 0]);
  throwsCode(() => select(query, wide, 2), 'argument', 'query has 2 values but all 3 candidate rows have 3: the query and the candidates need the same dimension d (embed both with the same model)');
  throwsCode(() => select(query, [new Float32Array(5)], 1), 'argument', 'query has 2 values but the one candidate row has 5: the query and the candidates need the same dimension d (embed both with the same model)');
  // Row 0 alone differs: row 0 is named.
  throwsCode(() => select(query, [[1, 0, 0], ...rows.slice(1)], 2), 'argument', 'candidates[0] has 3 values but the query has 2: every row needs d = 2 values');
  // Rows that differ among themselves: the first row that differs from the query.
  throwsCode(() => select(query, [[1, 0, 0], [1, 0, 0, 0]], 2), 'argument', 'candidates[0] has 3 values but the query has 2: every row needs d = 2 values');
});

test('the default never picks an exact copy (fewer than k picks, pool_exhausted) and takes near-copies last, as the README says (new-user trial of 2026-12-02, item 7)', async () => {
  await init();
  const q = [0.8, 0.6];
  const exact = select(q, [[1, 0], [0, 1], [1, 0]], 3);
  assert.deepEqual(Array.from(exact.picks), [0, 1]);
  assert.equal(exact.stopReason, 'pool_exhausted');
  assert.deepEqual(Array.from(exact.skipped), [2]);
  // Paper mode picks it (and flags it).
  const paper = select(q, [[1, 0], [0, 1], [1, 0]], 3, { method: 'pursuit' });
  assert.deepEqual(Array.from(paper.picks), [0, 1, 2]);
  assert.deepEqual(paper.steps.map((st) => st.dependent), [false, false, true]);
  // A near-copy (not bit-identical) is picked, last.
  const near = select(q, [[1, 0], [0, 1], [1, 0.001]], 3);
  assert.deepEqual(Array.from(near.picks), [2, 1, 0]);
  assert.equal(near.stopReason, 'budget');
  assert.deepEqual(near.steps.map((st) => st.dependent), [false, false, true]);
});

test('a Selector keeps its memory, survives errors, and cannot be used after free()', async () => {
  await init();
  const selector = new Selector();
  assert.deepEqual(Array.from(selector.select(query, flat, 2).picks), [0, 2]);
  throwsCode(() => selector.select(query, flat, 2, { method: 'pursuit', gamma: 2 }), 'option', 'gamma 2 must be in (0, 1]');
  // A shape whose scratch overflows 32-bit byte counts: a capacity error,
  // not a trap, and the selector stays usable.
  const big = new Float32Array(100000).fill(1);
  throwsCode(() => selector.select([1], big, 20000), 'capacity', 'the scratch memory for P_max = 100000, K_max = 20000 overflows usize');
  assert.deepEqual(Array.from(selector.select(query, flat, 2).picks), [0, 2]);
  // The specification of the last call is not carried over.
  assert.deepEqual(Array.from(selector.select(query, flat, 2, { method: 'topk' }).picks), [0, 1]);
  assert.deepEqual(Array.from(selector.select(query, flat, 2).picks), [0, 2]);
  selector.free();
  selector.free(); // twice is fine
  throwsCode(() => selector.select(query, flat, 2), 'argument', 'this Selector was freed: create a new one');
});

test("unusable rows name the remedy invalid: 'exclude'; a row that underflows f16 says so (issue 30, item 7)", async () => {
  await init();
  const exclude = "; or set option 'invalid' to 'exclude' to leave such rows out (listed in excluded)";
  throwsCode(() => select(query, [rows[0], [NaN, 1], rows[2]], 2), 'input', 'candidate 1: element 0 is not finite (NaN)' + exclude);
  throwsCode(() => select(query, [rows[0], rows[1], [0, 0]], 2), 'input', 'candidate 2: all elements are zero' + exclude);
  const excluded = select(query, [rows[0], rows[1], [0, 0]], 2, { invalid: 'exclude' });
  assert.deepEqual(Array.from(excluded.excluded), [2]);
  // The query has no such option: no hint.
  throwsCode(() => select([0, 0], rows, 2), 'input', 'query: all elements are zero');
  // Nonzero in f32, all zero in f16.
  const tiny = [rows[0], [1e-9, -2e-8], rows[2]];
  throwsCode(
    () => select(query, tiny, 2, { storage: 'f16' }),
    'input',
    "candidate 1: the values underflow f16: every element rounds to zero (the largest in magnitude is element 1 = -2e-8); scale or normalize the rows (only their directions are used), or use storage 'f32'",
  );
  assert.equal(select(query, tiny, 2).picks.length, 2, 'f32 storage takes the row');
});
