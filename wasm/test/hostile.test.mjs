// Hostile arguments: detached, shared and resizable buffers, typed arrays of
// the wrong kind, non-numbers, non-finite and out-of-range values, huge
// sizes, getters that throw, proxies, re-entrant calls. Every failure must
// be a MemPursuitError naming the argument, and every result must be the
// selection of the values the caller meant (the reference: the same call on
// a clean Float32Array) — never a silent misread. A seeded property test
// ends the file.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, select, Selector, MemPursuitError } from 'mempursuit';

await init();

const s = Math.SQRT1_2;
const query = [s, s];
const rows = [
  [0.995, 0.0998], // fact A
  [0.9998, 0.02], // fact A, paraphrased
  [0, 1], // fact B
  [0.6, 0.8],
];
const flat = rows.flat();
const K = 3;
const reference = (options) => Array.from(select(new Float32Array(query), new Float32Array(flat), K, options).picks);
const REF = reference();

/** Asserts a MemPursuitError with this code whose message matches. */
function rejects(fn, code, message, label = String(message)) {
  let thrown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  assert.ok(thrown !== undefined, `${label}: no error (silent misread?)`);
  assert.ok(thrown instanceof MemPursuitError, `${label}: ${thrown?.constructor?.name}: ${thrown?.message}`);
  assert.equal(thrown.code, code, `${label}: code of "${thrown.message}"`);
  if (message instanceof RegExp) assert.match(thrown.message, message, label);
  else assert.equal(thrown.message, message, label);
  return thrown;
}

const picks = (r) => Array.from(r.picks);
const detach = (buffer) => structuredClone(buffer, { transfer: [buffer] });

test('detached buffers: query, candidates, a row, the relevance', () => {
  const q = new Float32Array(query);
  detach(q.buffer);
  rejects(() => select(q, flat, K), 'argument', /^query: cannot read this Float32Array: its ArrayBuffer is detached \(it was transferred/);
  const c = new Float32Array(flat);
  detach(c.buffer);
  rejects(() => select(query, c, K), 'argument', /^candidates: cannot read this Float32Array: its ArrayBuffer is detached/);
  const c64 = new Float64Array(flat);
  detach(c64.buffer);
  rejects(() => select(query, c64, K), 'argument', /^candidates: cannot read this Float64Array: its ArrayBuffer is detached/);
  const row = new Float32Array(rows[2]);
  detach(row.buffer);
  rejects(() => select(query, [rows[0], rows[1], row, rows[3]], K), 'argument', /^candidates\[2\]: cannot read this Float32Array: its ArrayBuffer is detached/);
  const rel = new Float32Array([1, 2, 3, 4]);
  detach(rel.buffer);
  rejects(() => select(query, flat, K, { relevance: rel }), 'argument', /^options.relevance: cannot read this Float32Array: its ArrayBuffer is detached/);
});

test('a buffer detached by the caller\'s own getter while the call reads its arguments', () => {
  const c = new Float32Array(flat);
  const options = {
    get method() {
      detach(c.buffer);
      return 'pursuit';
    },
  };
  // The options are read first, so the candidates are detached before they are read.
  rejects(() => select(query, c, K, options), 'argument', /^candidates: cannot read this Float32Array: its ArrayBuffer is detached/);
  // Detached by a getter that runs after the candidates were checked.
  const c2 = new Float32Array(flat);
  const relevance = {
    length: 4,
    get 0() {
      detach(c2.buffer);
      return 1;
    },
    1: 2,
    2: 3,
    3: 4,
  };
  rejects(() => select(query, c2, K, { relevance }), 'argument', /^candidates: cannot read this Float32Array: its ArrayBuffer is detached/);
});

test('shared and resizable buffers', () => {
  const shared = new Float32Array(new SharedArrayBuffer(4 * flat.length));
  shared.set(flat);
  assert.deepEqual(picks(select(query, shared, K)), REF, 'SharedArrayBuffer');
  const growable = new SharedArrayBuffer(4 * flat.length, { maxByteLength: 64 * flat.length });
  const tracking = new Float32Array(growable);
  tracking.set(flat);
  assert.deepEqual(picks(select(query, tracking, K)), REF, 'growable SharedArrayBuffer');

  const rab = new ArrayBuffer(4 * flat.length, { maxByteLength: 8 * flat.length });
  const all = new Float32Array(rab); // length-tracking
  all.set(flat);
  const fixed = new Float32Array(rab, 0, flat.length);
  assert.deepEqual(picks(select(query, all, K)), REF, 'resizable, length-tracking');
  assert.deepEqual(picks(select(query, fixed, K)), REF, 'resizable, fixed length');
  rab.resize(4 * 4); // two rows left
  assert.deepEqual(picks(select(query, all, K)), picks(select(query, rows.slice(0, 2), K)), 'a length-tracking view reads its current length');
  rejects(() => select(query, fixed, K), 'argument', /^candidates: cannot read this Float32Array: it is out of bounds of its ArrayBuffer/);
  // Resized by a getter after the view was checked.
  rab.resize(4 * flat.length);
  all.set(flat);
  const relevance = {
    length: 4,
    get 0() {
      rab.resize(0);
      return 1;
    },
    1: 2,
    2: 3,
    3: 4,
  };
  rejects(() => select(query, fixed, K, { relevance }), 'argument', /^candidates: cannot read this Float32Array: it is out of bounds/);
  // The length-tracking view is read at its length after the getter: empty,
  // and then the relevance has 4 entries for 0 candidates.
  rab.resize(4 * flat.length);
  all.set(flat);
  rejects(() => select(query, all, K, { relevance }), 'input', 'relevance has 4 entries but the pool has 0 candidates');
});

test('a query resized by a getter while the rows are read against its length', () => {
  const rab = new ArrayBuffer(8, { maxByteLength: 64 });
  const q = new Float32Array(rab); // length-tracking, d = 2
  q.set(query);
  const shrinking = [rows[0], { length: 2, get 0() { rab.resize(4); return rows[1][0]; }, 1: rows[1][1] }, rows[2], rows[3]];
  rejects(() => select(q, shrinking, K), 'argument', 'query: its length changed from 2 to 1 while the arguments were read');
  rab.resize(8);
  q.set(query);
  assert.deepEqual(picks(select(q, rows, K)), REF);
});

test('typed arrays of the wrong kind, DataView, ArrayBuffer', () => {
  const costs = [3, 1, 4, 1, 5, 9, 2, 6].slice(0, flat.length / 2);
  const relevance = costs.map((c, i) => (i * 7) % 5);
  const costed = (c) => picks(select(query, flat, K, { costs: c, costBudget: 6 }));
  const scored = (r) => picks(select(query, flat, K, { relevance: r }));
  for (const Kind of [Uint8Array, Int8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array]) {
    const a = /^[AEIOU]/.test(Kind.name) ? 'an' : 'a';
    const c = new Kind(flat.length).fill(1);
    rejects(() => select(query, c, K), 'argument', new RegExp(`^candidates is ${a} ${Kind.name}: pass a Float32Array, a Float64Array or an array of numbers`), Kind.name);
    rejects(() => select(new Kind(2).fill(1), flat, K), 'argument', new RegExp(`^query is ${a} ${Kind.name}`), `query ${Kind.name}`);
    rejects(() => select(query, [new Kind(2), new Kind(2)], K), 'argument', new RegExp(`^candidates\\[0\\] is ${a} ${Kind.name}`), `row ${Kind.name}`);
    // Costs (token counts) and relevance scores may be integers: the same picks as from floats.
    assert.deepEqual(costed(Kind.from(costs)), costed(new Float32Array(costs)), `costs ${Kind.name}`);
    assert.deepEqual(scored(Kind.from(relevance)), scored(new Float32Array(relevance)), `relevance ${Kind.name}`);
  }
  assert.notDeepEqual(costed(costs), REF, 'the costs bind');
  for (const Kind of [BigInt64Array, BigUint64Array]) {
    rejects(() => select(query, new Kind(8), K), 'argument', new RegExp(`^candidates is a ${Kind.name}`), Kind.name);
    rejects(() => select(query, flat, K, { costs: new Kind(flat.length / 2), costBudget: 6 }), 'argument', new RegExp(`^options.costs is a ${Kind.name}: pass a Float32Array, a Float64Array, an integer typed array of up to 32 bits or an array of numbers$`), `costs ${Kind.name}`);
  }
  // The bytes of f32 values (a Node.js Buffer) are not the values.
  const bytes = Buffer.from(new Float32Array(flat).buffer);
  rejects(() => select(query, bytes, K), 'argument', /view them as floats: new Float32Array\(bytes.buffer, bytes.byteOffset, bytes.byteLength \/ 4\)/);
  assert.deepEqual(picks(select(query, new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4), K)), REF);
  rejects(() => select(query, new DataView(new ArrayBuffer(32)), K), 'argument', 'candidates must be a Float32Array (P x d, row-major), an array of numbers or an array of rows, got a DataView');
  rejects(() => select(query, new ArrayBuffer(32), K), 'argument', 'candidates must be a Float32Array (P x d, row-major), an array of numbers or an array of rows, got an ArrayBuffer (view it: new Float32Array(buffer))');
  rejects(() => select(new ArrayBuffer(8), flat, K), 'argument', 'query must be a Float32Array, a Float64Array or an array of numbers, got an ArrayBuffer (view it: new Float32Array(buffer))');
});

test('non-numbers: every entry must be a number (no coercion of null, strings, arrays, BigInt)', () => {
  const cases = [
    [null, 'null'],
    [undefined, 'undefined'],
    ['0.5', 'a string ("0.5")'],
    [[0.5], 'an array'],
    [{ valueOf: () => 0.5 }, 'an object'],
    [true, 'boolean true'],
    [5n, 'a BigInt (5n)'],
    [Symbol('x'), 'a symbol'],
  ];
  for (const [bad, shown] of cases) {
    const f = flat.slice();
    f[3] = bad;
    rejects(() => select(query, f, K), 'argument', `candidates[3] is ${shown}, not a number`, `flat ${shown}`);
    const r = rows.map((row) => row.slice());
    r[2][1] = bad;
    rejects(() => select(query, r, K), 'argument', `candidates[2][1] is ${shown}, not a number`, `rows ${shown}`);
    rejects(() => select([bad, 1], flat, K), 'argument', `query[0] is ${shown}, not a number`, `query ${shown}`);
    rejects(() => select(query, flat, K, { relevance: [1, bad, 3, 4] }), 'argument', `options.relevance[1] is ${shown}, not a number`, `relevance ${shown}`);
  }
  // A hole in a sparse array.
  const sparse = flat.slice();
  delete sparse[5];
  rejects(() => select(query, sparse, K), 'argument', 'candidates[5] is undefined, not a number');
  // A row that is not a row.
  rejects(() => select(query, [rows[0], 'ab', rows[2], rows[3]], K), 'argument', /^candidates\[1\] is a string \("ab"\), but candidates\[0\] is an array: pass one flat array/);
  rejects(() => select(query, [rows[0], 7, rows[2], rows[3]], K), 'argument', /^candidates\[1\] is number 7, but candidates\[0\] is an array/);
  rejects(() => select(query, [1, rows[1]], K), 'argument', 'candidates[1] is an array, not a number');
});

test('non-finite and out-of-range values are named, by the library or the wrapper', () => {
  // The remedy after an unusable candidate row (issue 30, item 7).
  const exclude = "; or set option 'invalid' to 'exclude' to leave such rows out (listed in excluded)";
  rejects(() => select([NaN, 1], flat, K), 'input', 'query: element 0 is not finite (NaN)');
  const f = flat.slice();
  f[5] = Infinity;
  rejects(() => select(query, f, K), 'input', 'candidate 2: element 1 is not finite (inf)' + exclude);
  rejects(() => select(query, new Float64Array(f), K), 'input', 'candidate 2: element 1 is not finite (inf)' + exclude);
  rejects(() => select(query, flat, K, { relevance: [1, 2, -Infinity, 4] }), 'input', 'relevance 2 is not finite (-inf)');
  // Finite, but beyond f32: not reported as "not finite".
  const big = flat.slice();
  big[4] = 1e39;
  rejects(() => select(query, big, K), 'input', 'candidates[4] = 1e+39 is outside the f32 range (about ±3.4028e38)');
  rejects(() => select(query, new Float64Array(big), K), 'input', 'candidates[4] = 1e+39 is outside the f32 range (about ±3.4028e38)');
  rejects(() => select([1e39, 0], flat, K), 'input', 'query[0] = 1e+39 is outside the f32 range (about ±3.4028e38)');
  rejects(() => select(query, [rows[0], [0, -1e40], rows[2], rows[3]], K), 'input', 'candidates[1][1] = -1e+40 is outside the f32 range (about ±3.4028e38)');
  // The largest f32 (and what rounds to it) is an f32: the library's norm check names it.
  const max = flat.slice();
  max[6] = 3.4028235e38;
  rejects(() => select(query, max, K), 'input', 'candidate 3: norm 3.4028234663852886e38 is outside [1e-12, 1e12]' + exclude);
});

test('huge and broken sizes end in an error before anything is allocated', () => {
  rejects(() => select(query, Object.assign([], { length: 2 ** 32 - 1 }).fill(0, 0, 0), K), 'capacity', /^candidates: 8589934590 values need 34359738360 bytes, more than the 4 GiB of wasm32 memory$/);
  rejects(() => select(query, { length: 2 ** 40, 0: 1 }, K), 'capacity', /^candidates: 1099511627776 values need 4398046511104 bytes, more than the 4 GiB of wasm32 memory$/);
  rejects(() => select({ length: 2 ** 33 }, flat, K), 'capacity', /^query: 8589934592 values need/);
  const manyRows = new Proxy([rows[0]], { get: (t, k) => (k === 'length' ? 2 ** 31 : t[k]) });
  rejects(() => select(query, manyRows, K), 'capacity', /^candidates: 4294967296 values need 17179869184 bytes/);
  for (const [length, shown] of [[-1, 'number -1'], [1.5, 'number 1.5'], ['3', 'a string ("3")'], [NaN, 'number NaN'], [2 ** 60, `number ${2 ** 60}`]]) {
    rejects(() => select(query, { length }, K), 'argument', `candidates must be a Float32Array (P x d, row-major), an array of numbers or an array of rows, got an object with length ${shown}`, `length ${shown}`);
    rejects(() => select({ length }, flat, K), 'argument', `query must be a Float32Array, a Float64Array or an array of numbers, got an object with length ${shown}`, `query length ${shown}`);
  }
  // A pool that fits wasm32 but not the scratch of this budget.
  rejects(() => select([1], new Float32Array(100000).fill(1), 20000), 'capacity', 'the scratch memory for P_max = 100000, K_max = 20000 overflows usize');
  assert.deepEqual(picks(select(query, flat, K)), REF, 'usable afterwards');
});

test('getters and proxies that throw become MemPursuitErrors naming the argument', () => {
  const boom = () => {
    throw new RangeError('boom');
  };
  const cases = [
    ['options', () => select(query, flat, K, { get method() { return boom(); } })],
    ['query', () => select({ length: 2, get 0() { return boom(); }, 1: 1 }, flat, K)],
    ['candidates', () => select(query, new Proxy(flat, { get: (t, k) => (k === '3' ? boom() : t[k]) }), K)],
    ['candidates', () => select(query, { get length() { return boom(); } }, K)],
    ['candidates', () => select(query, [rows[0], new Proxy(rows[1], { get: boom })], K)],
    ['options.relevance', () => select(query, flat, K, { relevance: new Proxy([1, 2, 3, 4], { get: boom }) })],
    ['options', () => select(query, flat, K, new Proxy({}, { ownKeys: boom }))],
  ];
  for (const [what, fn] of cases) {
    const err = rejects(fn, 'argument', new RegExp(`^${what.replace('.', '\\.')}: reading it threw RangeError: boom$`), what);
    assert.ok(err.cause instanceof RangeError, 'the original error is the cause');
  }
});

test('proxies and array-likes are read once per value, with the values they give', () => {
  let reads = 0;
  const counting = new Proxy(flat, {
    get(t, k) {
      if (k !== 'length') reads++;
      return t[k];
    },
  });
  assert.deepEqual(picks(select(query, counting, K)), REF);
  assert.equal(reads, flat.length, 'each element read once');
  // A proxy of a Float32Array has no typed array's internal slots; reading
  // its length through the proxy throws in the engine itself.
  rejects(() => select(query, new Proxy(new Float32Array(flat), {}), K), 'argument', /^candidates: reading it threw TypeError: /);
  // A getter whose value changes on every read: the value read once is used.
  let n = 0;
  const fickle = { length: 2, get 0() { return n++ === 0 ? s : NaN; }, 1: s };
  assert.deepEqual(picks(select(fickle, flat, K)), REF);
  // Rows as array-likes.
  const likes = rows.map((r) => ({ length: 2, 0: r[0], 1: r[1] }));
  assert.deepEqual(picks(select(query, likes, K)), REF);
});

test('re-entrant calls from a getter and a Selector freed by a getter', () => {
  const selector = new Selector();
  const options = {
    get method() {
      // Another selection on the same Selector while this call reads its options.
      assert.deepEqual(picks(selector.select(query, rows.slice(0, 2), 1, { method: 'topk' })), [0]);
      return 'recommended';
    },
  };
  assert.deepEqual(picks(selector.select(query, flat, K, options)), REF);
  const freeing = {
    get method() {
      selector.free();
      return 'pursuit';
    },
  };
  rejects(() => selector.select(query, flat, K, freeing), 'argument', 'this Selector was freed while its arguments were read');
});

test('init() and initSync() failures are MemPursuitErrors; init() never throws synchronously', async () => {
  // A second init() after success resolves at once whatever the argument.
  await init(42);
  // In a fresh module graph: see bundle.test.mjs for a bundle without import.meta.url.
  const { initSync } = await import('mempursuit');
  initSync(new Uint8Array([1, 2, 3])); // ignored once initialized
});

/** mulberry32: a seeded generator for the property test. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), 1 | t);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('property: random argument forms and corruptions give the reference picks or a MemPursuitError', (t) => {
  const rand = rng(2026);
  const pick = (xs) => xs[Math.floor(rand() * xs.length)];
  const forms = {
    f32: (v) => new Float32Array(v),
    f64: (v) => new Float64Array(v),
    array: (v) => v.slice(),
    arrayLike: (v) => Object.assign({ length: v.length }, v.slice()),
    proxy: (v) => new Proxy(v.slice(), {}),
    shared: (v) => {
      const a = new Float32Array(new SharedArrayBuffer(4 * Math.max(1, v.length)), 0, v.length);
      a.set(v);
      return a;
    },
  };
  const corruptions = [
    ['none', (x) => x],
    ['detach', (x) => (ArrayBuffer.isView(x) && !(x.buffer instanceof SharedArrayBuffer) ? (detach(x.buffer), x) : null)],
    ['nan', (x) => (x.length > 0 ? ((x[0] = NaN), x) : null)],
    ['string', (x) => (Array.isArray(x) && x.length > 0 ? ((x[0] = '1'), x) : null)],
    ['null', (x) => (Array.isArray(x) && x.length > 0 ? ((x[x.length - 1] = null), x) : null)],
    ['short', (x) => (Array.isArray(x) && x.length > 1 ? x.slice(0, -1) : null)],
    ['wrongKind', () => new Int32Array(4)],
  ];
  let ok = 0;
  let failed = 0;
  const methods = ['recommended', 'pursuit', 'centroid', 'topk', 'mmr'];
  for (let iter = 0; iter < 400; iter++) {
    const method = pick(methods);
    const storage = pick(['f32', 'f16', 'bf16', 'int8']);
    const qForm = pick(Object.keys(forms));
    const cForm = pick(Object.keys(forms));
    const asRows = rand() < 0.4;
    const [what, corrupt] = pick(corruptions);
    const target = pick(['query', 'candidates']);
    let q = forms[qForm](query);
    let c = asRows ? rows.map((r) => forms[cForm](r)) : forms[cForm](flat);
    let corrupted = false;
    if (what !== 'none' && !(what === 'short' && target === 'query')) {
      // (A shorter query is a valid call of another dimension: not a corruption the call can see.)
      const victim = target === 'query' ? q : asRows ? c[1] : c;
      const out = corrupt(victim);
      if (out !== null) {
        corrupted = true;
        if (target === 'query') q = out;
        else if (asRows) c[1] = out;
        else c = out;
      }
    }
    const options = { method, storage };
    const expected = reference(options);
    let result;
    let error;
    try {
      result = select(q, c, K, options);
    } catch (err) {
      error = err;
    }
    const label = `iteration ${iter}: ${method}/${storage}, query ${qForm}, candidates ${asRows ? 'rows of ' : ''}${cForm}, ${what} ${corrupted ? target : '(not applicable)'}`;
    if (error) {
      assert.ok(error instanceof MemPursuitError, `${label}: ${error}`);
      assert.ok(['argument', 'input'].includes(error.code), `${label}: ${error.code} ${error.message}`);
      assert.ok(corrupted, `${label}: an uncorrupted call failed: ${error.message}`);
      failed++;
    } else {
      assert.ok(!corrupted || what === 'none', `${label}: a corrupted call returned picks ${picks(result)} (silent misread)`);
      assert.deepEqual(picks(result), expected, label);
      ok++;
    }
  }
  t.diagnostic(`${ok} selections equal the reference, ${failed} MemPursuitErrors, 0 other outcomes`);
  assert.ok(ok > 50 && failed > 50, `${ok} selections, ${failed} errors`);
});
