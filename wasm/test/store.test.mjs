// The package's Store: on the committed HotpotQA mini fixture (1022 rows
// of d = 384 in one store, 24 queries naming their pools by store ids), a
// store's selection equals select() on the gathered rows in every field,
// for every method and storage, with relevance, costs and a cost budget;
// append keeps the ids and the validation; the errors name the row or the
// id's position (MemPursuitError index / id / argument); nothing the caller
// passed is modified.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { init, select, Store, MemPursuitError } from 'mempursuit';
import { readNpyF32 } from '../npy.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixtureDir = `${root}cli/data/hotpotqa-mini`;
const memories = readNpyF32(`${fixtureDir}/memories.f32.npy`);
const queries = readNpyF32(`${fixtureDir}/queries.f32.npy`);
const specs = readFileSync(`${fixtureDir}/queries.jsonl`, 'utf8')
  .split('\n')
  .filter((line) => line.trim())
  .map((line) => JSON.parse(line));
const d = memories.cols;

const METHODS = ['recommended', 'pursuit', 'centroid', 'topk', 'mmr'];
const STORAGES = ['f32', 'f16', 'bf16', 'int8'];

await init();

/** The rows `ids` names, gathered into one flat Float32Array (as a vector store returns them). */
function gather(ids) {
  const out = new Float32Array(ids.length * d);
  ids.forEach((id, i) => out.set(memories.row(id), i * d));
  return out;
}

/** Asserts that a MemPursuitError with `code` (and the fields of `named`, and a message matching `message`) is thrown. */
function throwsStore(fn, code, message, named = {}) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof MemPursuitError, String(err));
    assert.equal(err.code, code);
    assert.match(err.message, message);
    for (const [key, value] of Object.entries(named)) assert.equal(err[key], value, key);
    return true;
  });
}

test('store.select equals select on the gathered rows: every method and storage, every field', () => {
  assert.equal(specs.length, 24);
  for (const storage of STORAGES) {
    const store = new Store(memories.data, d, { storage });
    assert.deepEqual([store.length, store.dim, store.storage], [1022, 384, storage]);
    for (const method of METHODS) {
      for (let i = 0; i < specs.length; i++) {
        const ids = specs[i].pool;
        const got = store.select(queries.row(i), ids, 5, { method });
        const want = select(queries.row(i), gather(ids), 5, { method, storage });
        assert.deepEqual(got, want, `query ${i}, ${method}, ${storage}`);
        assert.equal(got.picks.length, 5);
      }
    }
    store.free();
  }
});

test('relevance, costs and a cost budget', () => {
  for (const storage of ['f32', 'int8']) {
    const store = new Store(memories.data, d, { storage });
    for (const method of METHODS) {
      for (let i = 0; i < specs.length; i += 3) {
        const ids = new Uint32Array(specs[i].pool);
        const relevance = Float32Array.from(ids, (_, j) => 1 - j / ids.length);
        const costs = Float32Array.from(ids, (_, j) => (j % 7) + 1);
        const options = { method, relevance, costs, costBudget: 9 };
        const got = store.select(queries.row(i), ids, 8, options);
        assert.deepEqual(got, select(queries.row(i), gather(ids), 8, { ...options, storage }), `query ${i}, ${method}, ${storage}`);
        assert.ok(Array.from(got.picks).reduce((sum, p) => sum + costs[p], 0) <= 9);
      }
    }
    store.free();
  }
});

test('picks are positions in ids; ids in any integer form', () => {
  const s = Math.SQRT1_2;
  // README's rows: 0 and 1 paraphrase fact A, row 3 states fact B.
  const store = new Store([[0.995, 0.0998], [0.9998, 0.02], [-1, 0], [0, 1]], 2);
  assert.deepEqual(Array.from(store.select([s, s], [0, 1, 3], 2).picks), [0, 2]);
  const forms = [[3, 1, 0], new Uint32Array([3, 1, 0]), new Int32Array([3, 1, 0]), new Float64Array([3, 1, 0]),
    new Uint8Array([3, 1, 0]), new Int16Array([3, 1, 0]), new BigInt64Array([3n, 1n, 0n]), new BigUint64Array([3n, 1n, 0n]), [3n, 1n, 0n]];
  for (const ids of forms) {
    assert.deepEqual(Array.from(store.select([s, s], ids, 2).picks), [2, 0], String(ids)); // rows 0, then 3
  }
  // A BigInt id out of range or negative: the same error as a number's, the id exact.
  throwsStore(() => store.select([s, s], new BigInt64Array([3n, -2n]), 2), 'input',
    /^ids\[1\] = -2 is negative: it names no row of the store \(ids run from 0\); pass ids the store returned$/, { index: 1, id: '-2', argument: 'ids' });
  throwsStore(() => store.select([s, s], [0n, 2n ** 63n], 2), 'input', /^ids\[1\] = 9223372036854775808 names no row of the store \(it holds 4 rows/,
    { index: 1, id: '9223372036854775808', argument: 'ids' });
  throwsStore(() => store.select([s, s], [0n, 9n], 2), 'input', /^ids\[1\] = 9 names no row of the store \(it holds 4 rows, ids 0\.\.4\)/, { index: 1, id: '9' });
  assert.deepEqual(Array.from(store.select([s, s], [], 2).picks), []);
  store.free();
});

test('append: new ids, the same selections, nothing added on an error', () => {
  const store = new Store(memories.data.subarray(0, 500 * d), d, { storage: 'bf16' });
  assert.deepEqual(store.append(memories.data.subarray(500 * d)), { start: 500, end: 1022 });
  assert.equal(store.length, 1022);
  const ids = specs[4].pool;
  assert.deepEqual(store.select(queries.row(4), ids, 5), select(queries.row(4), gather(ids), 5, { storage: 'bf16' }));
  const bad = memories.data.slice(0, 3 * d);
  bad[2 * d + 7] = Infinity;
  throwsStore(() => store.append(bad), 'input', /^store row 1024: element 7 is not finite/, { index: 1024, argument: 'rows', id: null });
  assert.equal(store.length, 1022);
  store.free();
});

test('errors name the row or the position of the id', () => {
  const rows = memories.data.slice(0, 20 * d);
  rows.fill(0, 13 * d, 14 * d);
  throwsStore(() => new Store(rows, d), 'input', /^store row 13: /, { index: 13, argument: 'rows' });
  const big = memories.data.slice(0, 4 * d);
  big[2 * d + 5] = 1e5; // beyond f16's range: names its store row
  throwsStore(() => new Store(big, d, { storage: 'f16' }), 'input', /store row 2/, { index: 2, argument: 'rows' });
  throwsStore(() => new Store(memories.data, 0), 'input', /dimension d is 0/);
  throwsStore(() => new Store(memories.data, d, { storage: 'f64' }), 'option', /'storage' must be/);
  throwsStore(() => new Store(memories.data, d, { storag: 'f16' }), 'option', /unknown store option 'storag'/);
  throwsStore(() => new Store(memories.data, -1), 'argument', /dim must be a non-negative integer/);

  const store = new Store(memories.data.subarray(0, 100 * d), d);
  const q = queries.row(0);
  throwsStore(() => store.select(q, [4, 99, 100, 7], 2), 'input', /^ids\[2\] = 100 names no row of the store \(it holds 100 rows, ids 0\.\.100\); pass ids the store returned$/, { index: 2, id: '100', argument: 'ids' });
  throwsStore(() => store.select(q, [4, -1], 2), 'input', /^ids\[1\] = -1 is negative/, { index: 1, id: '-1', argument: 'ids' });
  throwsStore(() => store.select(q, [4, 1.5], 2), 'argument', /ids\[1\] is number 1.5, not an integer/);
  throwsStore(() => store.select(q, 'abc', 2), 'argument', /ids must be/);
  throwsStore(() => store.select(q.subarray(0, 100), [1, 2], 2), 'input', /the query has 100 values but the store's rows have d = 384/, { index: null });
  throwsStore(() => store.select(q, [1, 2], 2, { storage: 'int8' }), 'option', /the store keeps 'f32'/);
  throwsStore(() => store.select(q, [1, 2], 2, { method: 'centroid', gamma: 2 }), 'option', /gamma/);
  throwsStore(() => store.select(q, [1, 2], 2, { relevance: [1] }), 'input', /relevance/);
  // A success after an error carries no stale index.
  assert.equal(store.select(q, [1, 2], 1).picks.length, 1);
  store.free();
  throwsStore(() => store.select(q, [1], 1), 'argument', /this Store was freed/);
  throwsStore(() => store.length, 'argument', /this Store was freed/);
  store.free(); // twice is fine
});

test("the caller's arrays are unmodified", () => {
  const rows = memories.data.slice(0, 200 * d);
  const rowsBefore = rows.slice();
  const store = new Store(rows, d);
  const q = queries.row(1).slice();
  const ids = new Uint32Array([5, 9, 150, 3, 77, 12]);
  const relevance = new Float32Array([2, 1.8, 1.6, 1.4, 1.2, 1]);
  const costs = new Float32Array([1, 2, 3, 4, 5, 6]);
  const before = [q, ids, relevance, costs].map((a) => a.slice());
  const got = store.select(q, ids, 3, { relevance, costs, costBudget: 8 });
  store.append(rows.subarray(0, 2 * d));
  [q, ids, relevance, costs].forEach((a, i) => assert.deepEqual(a, before[i]));
  assert.deepEqual(rows, rowsBefore);
  assert.deepEqual(got, select(q, gather(Array.from(ids)), 3, { relevance, costs, costBudget: 8 }));
  store.free();
});

test('a store describes itself: toString, console.log, JSON, toStringTag', async () => {
  const { inspect } = await import('node:util');
  const store = new Store(memories.data.subarray(0, 10 * d), d, { storage: 'int8' });
  assert.equal(String(store), "Store(length=10, dim=384, storage='int8')");
  assert.equal(inspect(store), "Store(length=10, dim=384, storage='int8')");
  assert.equal(JSON.stringify(store), '{"length":10,"dim":384,"storage":"int8"}');
  assert.equal(Object.prototype.toString.call(store), '[object Store]');
  store.append(memories.data.subarray(0, d));
  assert.equal(`${store}`, "Store(length=11, dim=384, storage='int8')");
  store.free();
  assert.equal(String(store), "Store(freed, dim=384, storage='int8')");
  assert.deepEqual(store.toJSON(), { length: null, dim: 384, storage: 'int8' });
});
