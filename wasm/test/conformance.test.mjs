// The conformance suite (tests/conformance/vectors.json, produced by the
// Rust library; format: tests/conformance/README.md) through the npm
// package: every case's picks, weights, stop reason, excluded and skipped
// rows and steps (numbers to 1e-9; `verified` is not compared across
// builds), or its error code and message word for word. Options are passed
// as a JavaScript caller writes them: keys in camelCase, "inf"/"nan" as
// numbers; float16 cases pass the same (exact) values as float32.
//
// Also: the declarations (mempursuit.d.ts) name exactly the options, values,
// step fields, stop reasons, refit statuses and error kinds of the module's
// layout, which comes from the Rust types.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, select, Selector, MemPursuitError } from 'mempursuit';

const vectors = JSON.parse(readFileSync(new URL('../../tests/conformance/vectors.json', import.meta.url), 'utf8'));
const camel = (name) => name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
// The package lists the options of an unknown-option error in camelCase,
// whatever the spelling of the key (mempursuit.js checkKey); the library
// lists them in the key's style.
const camelList = (message) =>
  message.replace(/^(unknown option '[^']*' \(options: )(.*)\)$/, (_, head, list) => `${head}${list.split(', ').map(camel).join(', ')})`);
const decode = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);

await init();

let maxDiff = 0;
// tests/conformance/README.md says 1e-9, for builds of the same kernels. The
// file is blessed by a native x86-64 build whose AVX2 kernels fuse
// multiply-adds; wasm simd128 has no FMA, so the f32 similarities (and
// what is computed from them) may differ in the last bits of an f32:
// measured at most 1.8e-7 here (the picks are identical). 1e-6 keeps a
// margin while any real difference (a wrong field, a wrong step) is far
// larger.
const TOL = 1e-6;
/** |a - b| ≤ TOL, relative above 1. */
function close(a, b) {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b);
  if (a === b) return true;
  const diff = Math.abs(a - b) / Math.max(1, Math.abs(b));
  maxDiff = Math.max(maxDiff, diff);
  return diff <= TOL;
}

/** The call of one case, as a JavaScript caller writes it. */
function call(c, i) {
  const input = vectors.inputs[c.input];
  const query = new Float32Array(input.query.map(decode));
  const rows = input.candidates.map((row) => row.map(decode));
  // Half of the cases pass rows, half one flat Float32Array.
  const candidates = i % 2 === 0 ? new Float32Array(rows.flat()) : rows;
  const options = Object.fromEntries(Object.entries(c.options).map(([k, v]) => [camel(k), decode(v)]));
  if (c.relevance !== null) options.relevance = new Float32Array(c.relevance.map(decode));
  // Costs (with the option costBudget), half of the cases as a plain array.
  if (c.costs != null) options.costs = i % 2 === 0 ? new Float32Array(c.costs.map(decode)) : c.costs.map(decode);
  return { query, candidates, options };
}

test(`every case of tests/conformance/vectors.json (${vectors.cases.length})`, (t) => {
  assert.ok(vectors.cases.length >= 100, `${vectors.cases.length} cases`);
  const selector = new Selector();
  let compared = 0;
  let errors = 0;
  vectors.cases.forEach((c, i) => {
    const { query, candidates, options } = call(c, i);
    // Alternate the shared selector and a reused one.
    const run = () => (i % 3 === 0 ? select(query, candidates, c.k, options) : selector.select(query, candidates, c.k, options));
    const label = `case ${i} (${c.name}, ${JSON.stringify(c.options)})`;
    if (c.error) {
      assert.throws(run, (err) => {
        assert.ok(err instanceof MemPursuitError, `${label}: ${err}`);
        assert.equal(err.code, c.error.kind, `${label}: code`);
        // The library names an option key as the caller spelled it.
        const message = Object.keys(c.options).reduce((m, k) => m.replaceAll(`'${k}'`, `'${camel(k)}'`), camelList(c.error.message));
        assert.equal(err.message, message, `${label}: message`);
        return true;
      });
      errors++;
      return;
    }
    const got = run();
    const want = c.expect;
    assert.deepEqual(Array.from(got.picks), want.picks, `${label}: picks`);
    assert.equal(got.stopReason, want.stop_reason, `${label}: stop reason`);
    assert.deepEqual(Array.from(got.excluded), want.excluded, `${label}: excluded`);
    assert.deepEqual(Array.from(got.skipped), want.skipped, `${label}: skipped`);
    assert.equal(got.weights.length, want.weights.length, `${label}: weights`);
    want.weights.forEach((w, j) => assert.ok(close(got.weights[j], decode(w)), `${label}: weight ${j}: ${got.weights[j]} vs ${w}`));
    assert.equal(got.steps.length, want.steps.length, `${label}: steps`);
    want.steps.forEach((step, j) => {
      const mine = got.steps[j];
      assert.deepEqual(Object.keys(mine), vectors.step_fields.map(camel), `${label}: step ${j} fields`);
      for (const name of vectors.step_fields) {
        if (name === 'verified') continue; // an implementation detail (README)
        const a = mine[camel(name)];
        const b = decode(step[name]);
        if (typeof b === 'number') assert.ok(close(a, b), `${label}: step ${j}.${camel(name)}: ${a} vs ${b}`);
        else assert.equal(a, b, `${label}: step ${j}.${camel(name)}`);
      }
    });
    compared++;
  });
  selector.free();
  t.diagnostic(`${compared} selections and ${errors} errors equal the Rust library's; max difference ${maxDiff}`);
});

test('the default call is the recommended setting', () => {
  const c = vectors.cases.find((x) => x.name === 'clustered/recommended/f32/cosine');
  const { query, candidates } = call(c, 0);
  const named = select(query, candidates, c.k, { method: 'recommended' });
  const plain = select(query, candidates, c.k);
  assert.deepEqual(Array.from(plain.picks), c.expect.picks);
  assert.deepEqual(plain, named);
  // ... and not paper mode, which picks otherwise on this pool.
  assert.notDeepEqual(Array.from(select(query, candidates, c.k, { method: 'pursuit' }).picks), c.expect.picks);
});

// ---------------------------------------------------------------------------
// The declarations against the module's layout.

const raw = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(new URL('../mempursuit.wasm', import.meta.url))), {}).exports;
// The pointer first: building the layout text may grow memory.
const [layoutPtr, layoutLen] = [raw.mp_layout_ptr(), raw.mp_layout_len()];
const layout = JSON.parse(new TextDecoder().decode(new Uint8Array(raw.memory.buffer, layoutPtr, layoutLen)));
const dts = readFileSync(new URL('../mempursuit.d.ts', import.meta.url), 'utf8');

/** The string literals of `export type Name = 'a' | 'b';`. */
function union(name) {
  const m = dts.match(new RegExp(`export type ${name} = ([^;]+);`));
  assert.ok(m, `mempursuit.d.ts declares type ${name}`);
  return m[1].split('|').map((s) => s.trim().replace(/^'|'$/g, ''));
}

/** Member name -> type text of `export interface Name { ... }`. */
function members(name) {
  const m = dts.match(new RegExp(`export interface ${name} \\{([\\s\\S]*?)\\n\\}`));
  assert.ok(m, `mempursuit.d.ts declares interface ${name}`);
  const out = new Map();
  for (const line of m[1].split('\n')) {
    const mm = line.match(/^ {2}(\w+)\??: ([^;]+);$/);
    if (mm) out.set(mm[1], mm[2]);
  }
  return out;
}

/** The literals a member type stands for: a named union, or number/boolean. */
function literals(type) {
  if (type === 'number' || type === 'boolean') return type;
  return union(type);
}

test('mempursuit.d.ts declares the options of the specification, with their values', () => {
  const declared = members('SelectOptions');
  const expected = new Map(layout.options.map((o) => [camel(o.key), o]));
  assert.deepEqual([...declared.keys()].filter((k) => k !== 'relevance' && k !== 'costs').sort(), [...expected.keys()].sort());
  for (const [key, option] of expected) {
    const type = literals(declared.get(key));
    if (option.type === 'number') assert.equal(type, 'number', key);
    else if (option.type === 'bool') assert.equal(type, 'boolean', key);
    else assert.deepEqual(type, option.names, key);
  }
});

test('mempursuit.d.ts declares the result, step fields, stop reasons, refit statuses and error kinds of the module', () => {
  assert.deepEqual([...members('Selection').keys()], layout.result.map((f) => camel(f.name)));
  const steps = members('Step');
  assert.deepEqual([...steps.keys()], layout.step_fields.map((f) => camel(f.name)));
  assert.deepEqual(layout.step_fields.map((f) => f.name), vectors.step_fields);
  for (const f of layout.step_fields) {
    const type = steps.get(camel(f.name));
    if (f.type === 'bool') assert.equal(type, 'boolean', f.name);
    else if (f.type === 'name') assert.deepEqual(union(type), f.names, f.name);
    else assert.equal(type, 'number', f.name);
  }
  assert.deepEqual(union('StopReason'), layout.stop_reasons);
  assert.deepEqual(union('ErrorCode'), layout.error_kinds);
});
