// MemPursuit for JavaScript: the npm package `mempursuit`, an ES module over
// the C ABI of the WebAssembly module built from wasm/src/lib.rs (ABI 4).
// No dependencies; Node.js >= 18, browsers and bundlers. Types:
// mempursuit.d.ts. Shapes: query = d values, candidates = P x d values,
// row-major (a flat Float32Array, or an array of P rows).
//
// This wrapper holds no method table, no default and no result field name:
// the options go to the library's one specification of a selector call
// (`SelectSpec::set` in Rust, which takes camelCase keys and reports bad
// values and options that do not apply to the method with the same messages
// in every binding), and the names of the options, the result's fields,
// steps, stop reasons and error kinds come from the module's layout text
// (`mp_layout_ptr`), converted to camelCase here. One check of the keys is
// this wrapper's own (setSpec): an unknown key lists the options in
// camelCase, the spelling of this package, whatever the key's own style.
// One option given in two spellings (`mmr_lambda` and `mmrLambda`) is the
// library's error (`SelectSpec::set_typed`), as in Python and JSON.

const ABI_VERSION = 4;

/**
 * Every error this package throws. `message` names the argument, index or
 * value at fault (for the library's errors, its message word for word);
 * `code` is 'input' (the data: a shape, a non-finite value, a zero or
 * out-of-range norm, the relevance, a value outside the storage's range),
 * 'option' (an unknown option or method, a bad value, an option that does
 * not apply to the method), 'capacity' (the scratch or the input does not
 * fit in wasm memory) — the three kinds of the Rust library — or
 * 'argument' (a call this wrapper rejects before running: wrong types,
 * detached buffers, a freed Selector, no init()).
 */
export class MemPursuitError extends Error {
  constructor(code, message, options) {
    super(message, options);
    this.name = 'MemPursuitError';
    this.code = code;
    /** The same kind under Python's name (`MemPursuitError.kind`). */
    this.kind = code;
    /** The document at fault (prepareDocuments): its index, its id, the argument; null otherwise. */
    this.index = options?.index ?? null;
    this.id = options?.id ?? null;
    this.argument = options?.argument ?? null;
  }
}

const argumentError = (message, cause) => new MemPursuitError('argument', message, cause === undefined ? undefined : { cause });

let wasm = null; // the instance's exports once initialized
let layout = null; // the module's layout, with camelCase names
let pending = null; // the promise of a running init()
let defaultSelector = null;

const isNode = typeof process !== 'undefined' && process.versions != null && process.versions.node != null;

const NO_DEFAULT_LOCATION =
  'init(): the default location of mempursuit.wasm (next to mempursuit.js, from import.meta.url) ' +
  'is not available here (e.g. in a CommonJS bundle). Pass the module yourself: its path or URL ' +
  "(`await init('/static/mempursuit.wasm')`), a fetch() Response, or its bytes " +
  "(`await init(readFileSync(require.resolve('mempursuit/mempursuit.wasm')))` in Node.js)";

async function instantiate(source) {
  source = await source;
  const imports = {}; // the module imports nothing
  if (source instanceof WebAssembly.Module) return WebAssembly.instantiate(source, imports);
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) {
    return (await WebAssembly.instantiate(source, imports)).instance;
  }
  if (typeof Response !== 'undefined' && source instanceof Response) {
    if (typeof WebAssembly.instantiateStreaming === 'function') {
      try {
        return (await WebAssembly.instantiateStreaming(source.clone(), imports)).instance;
      } catch (err) {
        // A server without the application/wasm MIME type: fall back to bytes.
        if (source.bodyUsed) throw err;
      }
    }
    if (!source.ok) throw new Error(`HTTP ${source.status}`);
    return (await WebAssembly.instantiate(await source.arrayBuffer(), imports)).instance;
  }
  if (typeof source === 'string' || source instanceof URL) {
    const href = String(source);
    // A file: URL, or a path (no scheme; a one-letter "scheme" is a Windows drive).
    const fileUrl = /^file:/i.test(href);
    if (isNode && (fileUrl || !/^[a-z][a-z0-9+.-]+:/i.test(href))) {
      // Hidden from bundlers (a specifier they do not resolve, and their
      // ignore comments): this branch runs in Node.js only, and a browser
      // bundle must build without a `node:fs` stand-in.
      const fsModule = 'node:fs/promises';
      const { readFile } = await import(/* webpackIgnore: true */ /* @vite-ignore */ fsModule);
      const bytes = await readFile(fileUrl ? new URL(href) : href);
      return (await WebAssembly.instantiate(bytes, imports)).instance;
    }
    const response = await fetch(source);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    return instantiate(response);
  }
  throw argumentError(`init(): expected a URL, a path, a Response, bytes or a WebAssembly.Module, got ${describe(source)}`);
}

const camel = (name) => name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

function adopt(instance) {
  if (wasm) return; // an initSync() won the race with a pending init()
  const exports = instance.exports;
  const version = typeof exports.mp_abi_version === 'function' ? exports.mp_abi_version() : 0;
  if (version !== ABI_VERSION) {
    throw argumentError(`init(): the wasm module speaks ABI ${version}, this wrapper ABI ${ABI_VERSION}; rebuild it with wasm/build.sh`);
  }
  const text = utf8(exports, exports.mp_layout_ptr(), exports.mp_layout_len());
  const raw = JSON.parse(text);
  const steps = raw.step_fields.map((f) => ({ name: camel(f.name), type: f.type, names: f.names }));
  layout = {
    // The option keys (snake_case, the library's) and their camelCase spelling.
    options: new Map(raw.options.map((o) => [o.key, camel(o.key)])),
    result: raw.result.map((f, i) => ({ index: i, name: camel(f.name), type: f.type })),
    steps,
    makeStep: compileStep(steps),
    names: new Map(), // UTF-8 names at static addresses (stop reasons, error kinds) -> strings
  };
  wasm = exports;
}

/**
 * A function (raw, offset) -> step object for the layout's step fields,
 * compiled once from the layout (about ten times faster than assigning the
 * fields by computed key; the keys are JSON literals of the layout's
 * names). null where the environment forbids `Function` (a Content Security
 * Policy without 'unsafe-eval'): the generic loop of decodeSteps then runs.
 */
function compileStep(fields) {
  const value = (f, j) =>
    f.type === 'bool' ? `raw[o + ${j}] !== 0` : f.type === 'name' ? `names[${j}][raw[o + ${j}]]` : `raw[o + ${j}]`;
  const body = `return { ${fields.map((f, j) => `${JSON.stringify(f.name)}: ${value(f, j)}`).join(', ')} };`;
  try {
    return new Function('names', `return (raw, o) => { ${body} };`)(fields.map((f) => f.names));
  } catch {
    return null;
  }
}

/** The step objects of the f64 records `raw`. */
function decodeSteps(raw) {
  const fields = layout.steps;
  const width = fields.length;
  const steps = new Array(raw.length / width);
  const make = layout.makeStep;
  for (let t = 0; t < steps.length; t++) {
    if (make) {
      steps[t] = make(raw, t * width);
      continue;
    }
    const step = {};
    for (let j = 0; j < width; j++) {
      const field = fields[j];
      const v = raw[t * width + j];
      step[field.name] = field.type === 'bool' ? v !== 0 : field.type === 'name' ? field.names[v] : v;
    }
    steps[t] = step;
  }
  return steps;
}

/** A name the module keeps at a static address (a stop reason, an error kind), decoded once. */
function staticName(exports, ptr, len) {
  const key = ptr * 64 + len;
  let name = layout.names.get(key);
  if (name === undefined) {
    name = utf8(exports, ptr, len);
    layout.names.set(key, name);
  }
  return name;
}

/**
 * Loads the WebAssembly module; call (and await) once before select() or
 * new Selector(). Without an argument it loads mempursuit.wasm next to this
 * file: from disk in Node.js, with fetch() in browsers and bundlers (which
 * see the `new URL(..., import.meta.url)` and ship the file). Or pass a
 * URL or path, a fetch() Response (or its promise), the bytes, or a compiled
 * WebAssembly.Module. Later calls return at once. Never throws: failures
 * are a rejected promise with a MemPursuitError.
 */
export function init(source) {
  if (wasm) return Promise.resolve();
  if (!pending) {
    pending = (async () => {
      let from = source;
      if (from == null) {
        try {
          from = new URL('./mempursuit.wasm', import.meta.url);
        } catch (err) {
          throw argumentError(NO_DEFAULT_LOCATION, err);
        }
      }
      let instance;
      try {
        instance = await instantiate(from);
      } catch (err) {
        if (err instanceof MemPursuitError) throw err;
        const where = typeof from === 'string' || from instanceof URL ? ` from ${String(from)}` : '';
        // Without an argument the module is the package's own file: in a
        // clone of the repository it exists only once built.
        const build = source == null ? '; in a clone of the repository, build it first with `bash wasm/build.sh`' : '';
        throw argumentError(`init(): cannot load the WebAssembly module${where}: ${err?.message ?? err}. Pass the .wasm file's path or URL, a fetch() Response, or its bytes${build}`, err);
      }
      adopt(instance);
    })().catch((err) => {
      pending = null; // a later init() may try again
      throw err;
    });
  }
  return pending;
}

/**
 * Synchronous init() from the module's bytes or a compiled
 * WebAssembly.Module (Node.js, workers; browsers refuse to compile large
 * modules synchronously on the main thread). Throws a MemPursuitError.
 */
export function initSync(source) {
  if (wasm) return;
  let instance;
  try {
    const module = source instanceof WebAssembly.Module ? source : new WebAssembly.Module(source);
    instance = new WebAssembly.Instance(module, {});
  } catch (err) {
    throw argumentError(`initSync(): expected the module's bytes or a WebAssembly.Module: ${err?.message ?? err}`, err);
  }
  adopt(instance);
}

function exportsOrThrow() {
  if (!wasm) throw argumentError('mempursuit is not initialized: call `await init()` first');
  return wasm;
}

// ---------------------------------------------------------------------------
// Reading the caller's arguments. Everything the caller passes is read once
// (getters and proxies run once per value), copied or checked, and only then
// written into wasm memory: nothing the caller's code does while being read
// can change what the module sees.

const TypedArrayProto = Object.getPrototypeOf(Int8Array.prototype);
const typedArrayTag = Object.getOwnPropertyDescriptor(TypedArrayProto, Symbol.toStringTag).get;
const typedArrayLength = Object.getOwnPropertyDescriptor(TypedArrayProto, 'length').get;
const typedArrayBuffer = Object.getOwnPropertyDescriptor(TypedArrayProto, 'buffer').get;
const typedArrayAt = TypedArrayProto.at;
const typedArraySet = TypedArrayProto.set;
const FLOAT_ARRAYS = new Set(['Float32Array', 'Float64Array', 'Float16Array']);
// Integer typed arrays the relevance scores and costs may come in (values converted to f32).
const INTEGER_ARRAYS = new Set(['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array']);
/** The largest f32, and wasm32's address space. */
const F32_MAX = 3.4028234663852886e38;
const WASM32_BYTES = 2 ** 32;

/** The kind of a real typed array ('Float32Array', ...), or undefined (also for proxies). */
const typedKind = (x) => typedArrayTag.call(x);

function describe(x) {
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'an array';
  switch (typeof x) {
    case 'undefined':
      return 'undefined';
    case 'string':
      return `a string (${JSON.stringify(x.length > 20 ? `${x.slice(0, 20)}...` : x)})`;
    case 'bigint':
      return `a BigInt (${x}n)`;
    case 'number':
    case 'boolean':
      return `${typeof x} ${x}`;
    case 'object': {
      const kind = typedKind(x);
      if (kind) return `a ${kind}`;
      if (x instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && x instanceof SharedArrayBuffer)) {
        return `an ${x.constructor.name} (view it: new Float32Array(buffer))`;
      }
      if (x instanceof DataView) return 'a DataView';
      return 'an object';
    }
    default:
      return `a ${typeof x}`;
  }
}

function isDetached(buffer) {
  if (typeof SharedArrayBuffer !== 'undefined' && buffer instanceof SharedArrayBuffer) return false;
  const getter = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'detached')?.get;
  if (getter) return getter.call(buffer);
  try {
    new Uint8Array(buffer, 0, 0);
    return false;
  } catch {
    return true;
  }
}

/** Throws unless the real typed array `x` can be read: not detached, not out of bounds of a resized buffer. */
function checkLive(x, what) {
  try {
    typedArrayAt.call(x, 0);
  } catch (err) {
    const why = isDetached(typedArrayBuffer.call(x))
      ? 'its ArrayBuffer is detached (it was transferred, e.g. by postMessage() or structuredClone() with `transfer`)'
      : 'it is out of bounds of its ArrayBuffer (the buffer was resized below the view)';
    throw argumentError(`${what}: cannot read this ${typedKind(x)}: ${why}; pass a view of memory that is still readable`, err);
  }
}

/** 'a Float32Array', 'an Int32Array'. */
const withArticle = (kind) => `${/^[AEIOU]/.test(kind) ? 'an' : 'a'} ${kind}`;

/**
 * Throws unless the real typed array `x` holds floats, or (with
 * `integers`, for the relevance scores and the costs: token counts come as
 * integers) integers of up to 32 bits.
 */
function checkFloatKind(x, kind, what, integers = false) {
  if (FLOAT_ARRAYS.has(kind) || (integers && INTEGER_ARRAYS.has(kind))) return;
  const hint =
    !integers && (kind === 'Uint8Array' || kind === 'Int8Array' || kind === 'Uint8ClampedArray')
      ? ` (for the bytes of f32 values, view them as floats: new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4))`
      : '';
  const accepted = integers
    ? 'a Float32Array, a Float64Array, an integer typed array of up to 32 bits or an array of numbers'
    : 'a Float32Array, a Float64Array or an array of numbers';
  throw argumentError(`${what} is ${withArticle(kind)}: pass ${accepted}${hint}`);
}

/** Throws unless `n` values of 4 bytes fit in wasm32 memory. */
function checkSize(n, what) {
  if (n * 4 >= WASM32_BYTES) {
    throw new MemPursuitError('capacity', `${what}: ${n} values need ${n * 4} bytes, more than the 4 GiB of wasm32 memory`);
  }
}

const VECTOR = 'a Float32Array, a Float64Array or an array of numbers';
const POOL = 'a Float32Array (P x d, row-major), an array of numbers or an array of rows';

/** Throws unless `x` is an object that may be an array-like (`expected`: what `what` must be). */
function checkObject(x, what, expected) {
  if (x === null || typeof x !== 'object' || x instanceof ArrayBuffer || x instanceof DataView ||
      (typeof SharedArrayBuffer !== 'undefined' && x instanceof SharedArrayBuffer)) {
    throw argumentError(`${what} must be ${expected}, got ${describe(x)}`);
  }
}

/** The length of an array-like (a safe non-negative integer). */
function lengthOf(x, what, expected) {
  const n = x.length;
  if (!Number.isSafeInteger(n) || n < 0 || n > 2 ** 52) {
    throw argumentError(`${what} must be ${expected}, got ${describe(x)} with length ${describe(n)}`);
  }
  return n;
}

/** `x[i]` as a number for f32, or a thrown error naming `what[i]`. */
function number(v, what, i) {
  if (typeof v !== 'number') throw argumentError(`${what}[${i}] is ${describe(v)}, not a number`);
  if (Math.abs(v) > F32_MAX && Number.isFinite(v) && !Number.isFinite(Math.fround(v))) {
    throw new MemPursuitError('input', `${what}[${i}] = ${v} is outside the f32 range (about ±3.4028e38)`);
  }
  return v;
}

/** Copies the floats of `src` (length `n`) into `out` at `offset`, refusing finite f64 values beyond f32. */
function copyFloats(src, kind, n, out, offset, what) {
  typedArraySet.call(out, src, offset);
  if (kind === 'Float64Array') {
    for (let i = 0; i < n; i++) {
      const v = out[offset + i];
      if ((v === Infinity || v === -Infinity) && Number.isFinite(src[i])) number(src[i], what, i);
    }
  }
}

/** Runs `read`, turning what the caller's getters or proxies throw into a MemPursuitError naming `what`. */
function reading(what, read) {
  try {
    return read();
  } catch (err) {
    if (err instanceof MemPursuitError) throw err;
    throw argumentError(`${what}: reading it threw ${err?.name ?? 'an error'}: ${err?.message ?? err}`, err);
  }
}

/**
 * A vector of numbers (the query, the relevance, the costs): `{ view }` for
 * a Float32Array (read in place, checked again just before it is copied
 * into wasm memory), else `{ data }`, a new Float32Array. `integers`: also
 * integer typed arrays (the relevance and the costs).
 */
function readVector(x, what, integers = false) {
  return reading(what, () => {
    const kind = typedKind(x);
    if (kind !== undefined) {
      checkFloatKind(x, kind, what, integers);
      checkLive(x, what);
      if (kind === 'Float32Array') return { view: x };
      const n = typedArrayLength.call(x);
      const data = new Float32Array(n);
      copyFloats(x, kind, n, data, 0, what);
      return { data };
    }
    checkObject(x, what, VECTOR);
    const n = lengthOf(x, what, VECTOR);
    checkSize(n, what);
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = number(x[i], what, i);
    return { data };
  });
}

/** The Float32Array of a read argument, a view checked again now that the caller's code has run. */
function settle(read, what) {
  if (read.view === undefined) return read.data;
  checkLive(read.view, what);
  return read.view;
}

/**
 * Row 0 of the candidates (`x`, `p` rows) has `n` values, the query `d`:
 * throws an error naming the query when every row has `n` values (the
 * query is the odd one out: another model, or a truncated vector), and
 * returns when row 0 is (then the caller names it). Reads each further row
 * and its length once.
 */
function queryOrRowZero(x, p, n, d) {
  for (let i = 1; i < p; i++) {
    const row = x[i];
    const kind = typedKind(row);
    let m;
    if (kind !== undefined) m = typedArrayLength.call(row);
    else if (row !== null && typeof row === 'object') m = row.length;
    else return;
    if (m !== n) return;
  }
  const every = p === 1 ? 'the one candidate row has' : `all ${p} candidate rows have`;
  throw argumentError(`query has ${d} values but ${every} ${n}: the query and the candidates need the same dimension d (embed both with the same model)`);
}

/**
 * The candidates: `{ view }` for a Float32Array (read in place, checked
 * again just before it is copied into wasm memory), else `{ data }`, a new
 * flat Float32Array.
 */
function readPool(x, d, what = 'candidates') {
  const against = what === 'candidates' ? 'the query has' : `the store's d is`;
  return reading(what, () => {
    const kind = typedKind(x);
    if (kind !== undefined) {
      checkFloatKind(x, kind, what);
      checkLive(x, what);
      if (kind === 'Float32Array') return { view: x };
      const n = typedArrayLength.call(x);
      const data = new Float32Array(n);
      copyFloats(x, kind, n, data, 0, what);
      return { data };
    }
    checkObject(x, what, POOL);
    const p = lengthOf(x, what, POOL);
    if (p === 0) return { data: new Float32Array(0) };
    const first = x[0];
    if (typeof first === 'number') {
      // Flat: P x d numbers (the library checks that d divides the length).
      checkSize(p, what);
      const data = new Float32Array(p);
      data[0] = number(first, what, 0);
      for (let i = 1; i < p; i++) data[i] = number(x[i], what, i);
      return { data };
    }
    // Rows: P rows of exactly d numbers each.
    checkSize(p * d, what);
    const data = new Float32Array(p * d);
    for (let i = 0; i < p; i++) {
      const row = i === 0 ? first : x[i];
      const name = `${what}[${i}]`;
      const rowKind = typedKind(row);
      let n;
      if (rowKind !== undefined) {
        checkFloatKind(row, rowKind, name);
        checkLive(row, name);
        n = typedArrayLength.call(row);
      } else if (row !== null && typeof row === 'object') {
        n = lengthOf(row, name, `a row of d = ${d} numbers`);
      } else {
        throw argumentError(
          `${name} is ${describe(row)}, but ${what}[0] is ${describe(first)}: pass one flat array of P x d numbers or an array of P rows of d numbers`,
        );
      }
      if (n !== d) {
        if (i === 0 && what === 'candidates') queryOrRowZero(x, p, n, d);
        throw argumentError(`${name} has ${n} values but ${against} ${d}: every row needs d = ${d} values`);
      }
      if (rowKind !== undefined) copyFloats(row, rowKind, n, data, i * d, name);
      else for (let j = 0; j < n; j++) data[i * d + j] = number(row[j], name, j);
    }
    return { data };
  });
}

/**
 * The options as [key, value] pairs for the specification (values:
 * numbers, booleans, strings; undefined and null are left out), the
 * relevance scores and the costs.
 */
function readOptions(options) {
  if (options == null) return { entries: [], relevance: null, costs: null };
  return reading('options', () => {
    if (typeof options !== 'object' || Array.isArray(options) || typedKind(options) !== undefined) {
      throw argumentError(`options must be an object such as { method: 'mmr', mmrLambda: 0.3 }, got ${describe(options)}`);
    }
    const entries = [];
    let relevance = null;
    let costs = null;
    for (const key of Object.keys(options)) {
      const value = options[key];
      if (key === 'relevance') {
        relevance = value ?? null;
        continue;
      }
      if (key === 'costs') {
        costs = value ?? null;
        continue;
      }
      if (value === undefined || value === null) continue;
      const t = typeof value;
      if (t !== 'number' && t !== 'boolean' && t !== 'string') {
        throw argumentError(`option '${key}' is ${describe(value)}: option values are numbers, booleans or strings`);
      }
      entries.push([key, value]);
    }
    return { entries, relevance, costs };
  });
}

// ---------------------------------------------------------------------------
// The module's side.

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: false });

function utf8(exports, ptr, len) {
  return decoder.decode(new Uint8Array(exports.memory.buffer, ptr >>> 0, len >>> 0));
}

// Frees the wasm side of Selectors that were dropped without free().
const finalizer =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((held) => release(held))
    : null;

function release(held) {
  if (held.exports && held.selector && held.exports === wasm) {
    if (held.arena) held.exports.mp_free(held.arena, held.arenaBytes);
    if (held.store) held.exports.mp_store_free(held.store);
    held.exports.mp_selector_free(held.selector);
  }
  held.store = 0;
  held.selector = 0;
  held.arena = 0;
  held.arenaBytes = 0;
}

const align8 = (n) => Math.ceil(n / 8) * 8;

/** The error of the last failed call on `held`'s selector. */
function lastError(held) {
  const e = held.exports;
  const kind = staticName(e, e.mp_error_kind_ptr(held.selector) >>> 0, e.mp_error_kind_len(held.selector) >>> 0);
  const message = utf8(e, e.mp_error_ptr(held.selector), e.mp_error_len(held.selector));
  // What a store's error names: a row (index) or an id at a position (index, id).
  const index = e.mp_error_index(held.selector) >>> 0;
  if (index === 0xffffffff) return new MemPursuitError(kind || 'argument', message);
  const id = e.mp_error_id(held.selector) >>> 0;
  const named = id === 0xffffffff ? { index, argument: 'rows' } : { index, id: String(id), argument: 'ids' };
  return new MemPursuitError(kind || 'argument', message, named);
}

/** A trap (out of memory in a conversion, or a bug): the instance is discarded. */
function trapped(err) {
  wasm = null;
  layout = null;
  pending = null;
  defaultSelector = null;
  return new MemPursuitError(
    'capacity',
    `the WebAssembly module trapped (${err.message}), most likely out of memory for this call; ` +
      'it was discarded: call init() again and create new Selectors',
    { cause: err },
  );
}

/** `mmrLambda` and `mmr-lambda` -> `mmr_lambda`: the library's canonical key (`canonical_key` in std-ext/src/spec.rs). */
const canonicalKey = (key) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`).replaceAll('-', '_');

/**
 * Throws unless option `key` (any spelling the library takes) names an
 * option, listing the options in camelCase. (One option given in two
 * spellings is the library's error, from mp_spec_set.)
 */
function checkKey(key) {
  if (!layout.options.has(canonicalKey(key))) {
    throw new MemPursuitError('option', `unknown option '${key}' (options: ${[...layout.options.values()].join(', ')})`);
  }
}

/** Sets the selector's specification from `entries` (skipped when they equal the last call's). */
function setSpec(held, entries, textOffset) {
  const last = held.spec;
  if (last && last.length === entries.length && last.every(([k, v], i) => k === entries[i][0] && Object.is(v, entries[i][1]))) {
    return;
  }
  held.spec = null;
  const e = held.exports;
  const sel = held.selector;
  e.mp_spec_reset(sel);
  const base = held.arena + textOffset;
  for (const [key, value] of entries) {
    checkKey(key);
    const bytes = new Uint8Array(e.memory.buffer, base, held.arenaBytes - textOffset);
    const k = encoder.encodeInto(key, bytes).written;
    let kind = 1;
    let num = 0;
    let textLen = 0;
    if (typeof value === 'string') {
      kind = 0;
      textLen = encoder.encodeInto(value, bytes.subarray(k)).written;
    } else if (typeof value === 'boolean') {
      kind = 2;
      num = value ? 1 : 0;
    } else {
      num = value;
    }
    if (e.mp_spec_set(sel, base, k, kind, num, base + k, textLen) < 0) throw lastError(held);
  }
  held.spec = entries;
}

/** Field `f` of the last selection on `held`'s selector (`buf`: the module's memory after the call). */
function resultField(held, f, buf) {
  const e = held.exports;
  const ptr = e.mp_result_ptr(held.selector, f.index) >>> 0;
  const len = e.mp_result_len(held.selector, f.index) >>> 0;
  switch (f.type) {
    case 'u32s':
      return len === 0 ? new Uint32Array(0) : new Uint32Array(buf, ptr, len).slice();
    case 'f64s':
      return len === 0 ? new Float64Array(0) : new Float64Array(buf, ptr, len).slice();
    case 'name':
      return staticName(e, ptr, len);
    case 'steps':
      return decodeSteps(new Float64Array(buf, ptr, len));
    default:
      throw new MemPursuitError('argument', `the module's result field '${f.name}' has an unknown type '${f.type}'; rebuild it with wasm/build.sh`);
  }
}

/**
 * One selection on `held` (a Selector's or a Store's): reads the caller's
 * arguments (`readSecond(d)`: the candidates or the ids, named `second`),
 * writes them into the arena (query | second | relevance | costs | option
 * text) and runs `invoke(exports, args)`, the module's call with the
 * arena's pointers and lengths. `owner` names the object in messages.
 */
function runSelect(held, owner, query, k, options, readSecond, second, invoke) {
  if (!held?.selector) throw argumentError(`this ${owner} was freed: create a new one`);
  if (held.exports !== wasm) {
    throw argumentError(`this ${owner} belongs to a module instance that was discarded (after a trap or before init()): create a new ${owner}`);
  }
  // Any integer >= 0 (2 ** 53 and above too, as in Python): K above P selects min(K, P).
  if (typeof k !== 'number' || !Number.isInteger(k) || k < 0) {
    throw argumentError(`k must be a non-negative integer, got ${describe(k)}`);
  }
  // Everything the caller's code can run in (getters, proxies) first.
  const opts = readOptions(options);
  const qRead = readVector(query, 'query');
  const d = qRead.view ? typedArrayLength.call(qRead.view) : qRead.data.length;
  const pool = readSecond(d);
  const relRead = opts.relevance === null ? null : readVector(opts.relevance, 'options.relevance', true);
  const costRead = opts.costs === null ? null : readVector(opts.costs, 'options.costs', true);
  // The caller's code may have freed this Selector meanwhile.
  if (!held.selector) throw argumentError(`this ${owner} was freed while its arguments were read`);
  if (held.exports !== wasm) throw argumentError(`the module instance was discarded while the arguments were read: create a new ${owner}`);
  // Then the typed arrays read in place, checked after every getter ran.
  const q = settle(qRead, 'query');
  if (typedArrayLength.call(q) !== d) throw argumentError(`query: its length changed from ${d} to ${typedArrayLength.call(q)} while the arguments were read`);
  const c = settle(pool, second);
  const cLen = typedArrayLength.call(c);
  const rel = relRead === null ? null : settle(relRead, 'options.relevance');
  const relLen = rel === null ? 0 : typedArrayLength.call(rel);
  const cost = costRead === null ? null : settle(costRead, 'options.costs');
  const costLen = cost === null ? 0 : typedArrayLength.call(cost);
  const texts = opts.entries.reduce((n, [key, v]) => n + 3 * key.length + (typeof v === 'string' ? 3 * v.length : 0), 0);
  // One arena: query | candidates (or ids) | relevance | costs | option text.
  const offCand = align8(4 * d);
  const offRel = align8(offCand + 4 * cLen);
  const offCost = align8(offRel + 4 * relLen);
  const offText = align8(offCost + 4 * costLen);
  const bytes = Math.max(8, offText + texts);
  if (bytes >= WASM32_BYTES) {
    throw new MemPursuitError('capacity', `the input needs ${bytes} bytes, more than the 4 GiB of wasm32 memory; use a smaller pool`);
  }
  const e = held.exports;
  try {
    if (bytes > held.arenaBytes) {
      if (held.arena) e.mp_free(held.arena, held.arenaBytes);
      held.arena = 0;
      held.arenaBytes = 0;
      const grown = Math.min(Math.max(bytes, 2 * bytes), WASM32_BYTES - 65536);
      let ptr = e.mp_alloc(grown) >>> 0;
      let size = grown;
      if (ptr === 0 && grown > bytes) {
        ptr = e.mp_alloc(bytes) >>> 0;
        size = bytes;
      }
      if (ptr === 0) {
        throw new MemPursuitError('capacity', `cannot allocate ${bytes} bytes of wasm memory for the input; use a smaller pool`);
      }
      held.arena = ptr;
      held.arenaBytes = size;
    }
    setSpec(held, opts.entries, offText);
    const base = held.arena;
    // Views only after the last allocation (memory may have grown).
    const buf = e.memory.buffer;
    typedArraySet.call(new Float32Array(buf, base, d), q);
    typedArraySet.call(new (second === 'ids' ? Uint32Array : Float32Array)(buf, base + offCand, cLen), c);
    if (rel) typedArraySet.call(new Float32Array(buf, base + offRel, relLen), rel);
    if (cost) typedArraySet.call(new Float32Array(buf, base + offCost, costLen), cost);
    const got = invoke(e, [
      base, d,
      base + offCand, cLen,
      rel ? base + offRel : 0, relLen, rel ? 1 : 0,
      cost ? base + offCost : 0, costLen, cost ? 1 : 0,
      // usize is 32-bit here: K above 2^32 - 1 selects the same min(K, P).
      Math.min(k, 0xffffffff),
    ]);
    if (got < 0) throw lastError(held);
    const result = {};
    const memory = e.memory.buffer;
    for (const f of layout.result) result[f.name] = resultField(held, f, memory);
    return result;
  } catch (err) {
    if (err instanceof MemPursuitError) throw err;
    if (err instanceof WebAssembly.RuntimeError) throw trapped(err);
    throw argumentError(`select(): ${err?.message ?? err}`, err);
  }
}

/**
 * A reusable selector: its scratch and its input buffers stay in wasm
 * memory and grow to the largest call seen, so repeated selections of
 * similar shape allocate little. Call free() when done (or let the garbage
 * collector do it).
 */
export class Selector {
  constructor() {
    const exports = exportsOrThrow();
    this._held = { exports, selector: exports.mp_selector_new() >>> 0, arena: 0, arenaBytes: 0, spec: null };
    finalizer?.register(this, this._held, this);
  }

  /**
   * Selects up to k memories for `query` from `candidates` with the
   * selector `options` describe (the recommended setting by default); see
   * mempursuit.d.ts for the options and the result.
   */
  select(query, candidates, k, options) {
    return runSelect(this._held, 'Selector', query, k, options, (d) => readPool(candidates, d), 'candidates', (e, args) =>
      e.mp_select(this._held.selector, ...args),
    );
  }

  /** Releases the wasm memory of this selector; it cannot select afterwards. */
  free() {
    if (!this._held) return;
    finalizer?.unregister(this);
    release(this._held);
  }
}

const IDS = 'a Uint32Array, an Int32Array, another integer typed array (BigInt64Array too) or an array of integers';
const BIGINT_ARRAYS = new Set(['BigInt64Array', 'BigUint64Array']);

/**
 * The ids of a store call: `{ view }` for a Uint32Array (read in place),
 * else `{ data }`, a new Uint32Array. Each id an integer; a negative one,
 * or one beyond 2^32 - 1 (more rows than wasm32 holds), is an input error
 * naming its position (an id >= N below that is the library's).
 */
function readIds(x, len) {
  const what = 'ids';
  return reading(what, () => {
    const kind = typedKind(x);
    let n;
    if (kind !== undefined) {
      if (!FLOAT_ARRAYS.has(kind) && !INTEGER_ARRAYS.has(kind) && !BIGINT_ARRAYS.has(kind)) {
        throw argumentError(`ids is ${withArticle(kind)}: pass ${IDS}`);
      }
      checkLive(x, what);
      if (kind === 'Uint32Array') return { view: x };
      n = typedArrayLength.call(x);
    } else {
      checkObject(x, what, IDS);
      n = lengthOf(x, what, IDS);
    }
    checkSize(n, what);
    const data = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      const v = x[i];
      // A BigInt id (BigInt64Array: Arrow, DuckDB, LanceDB int64 ids) is compared exactly.
      if (typeof v === 'bigint') {
        if (v < 0n || v > 0xffffffffn) {
          const why = v < 0n ? 'is negative: it names no row of the store (ids run from 0)' : `names no row of the store (it holds ${len} rows, ids 0..${len})`;
          throw new MemPursuitError('input', `ids[${i}] = ${v} ${why}; pass ids the store returned`, { index: i, id: String(v), argument: 'ids' });
        }
        data[i] = Number(v);
        continue;
      }
      if (typeof v !== 'number' || !Number.isInteger(v)) throw argumentError(`ids[${i}] is ${describe(v)}, not an integer`);
      if (v < 0 || v > 0xffffffff) {
        const why = v < 0 ? 'is negative: it names no row of the store (ids run from 0)' : `names no row of the store (it holds ${len} rows, ids 0..${len})`;
        throw new MemPursuitError('input', `ids[${i}] = ${v} ${why}; pass ids the store returned`, { index: i, id: String(v), argument: 'ids' });
      }
      data[i] = v;
    }
    return { data };
  });
}

/**
 * Rows (N x d, flat or an array of rows) copied into a block of wasm
 * memory; `use(ptr, length)` runs with it, and the block is freed after.
 */
function withRows(held, rows, d, use) {
  const read = readPool(rows, d, 'rows');
  const r = settle(read, 'rows');
  const n = typedArrayLength.call(r);
  const e = held.exports;
  const bytes = 4 * n;
  if (bytes >= WASM32_BYTES) throw new MemPursuitError('capacity', `rows: ${n} values need ${bytes} bytes, more than the 4 GiB of wasm32 memory`);
  const ptr = n === 0 ? 0 : e.mp_alloc(bytes) >>> 0;
  if (n > 0 && ptr === 0) throw new MemPursuitError('capacity', `cannot allocate ${bytes} bytes of wasm memory for the rows; add them in smaller parts`);
  try {
    if (n > 0) typedArraySet.call(new Float32Array(e.memory.buffer, ptr, n), r);
    return use(ptr, n);
  } catch (err) {
    if (err instanceof MemPursuitError) throw err;
    if (err instanceof WebAssembly.RuntimeError) throw trapped(err);
    throw argumentError(`Store: ${err?.message ?? err}`, err);
  } finally {
    if (ptr && held.exports === wasm) e.mp_free(ptr, bytes);
  }
}

/** Throws unless `held` belongs to a live Store of the current module instance. */
function liveStore(held) {
  if (!held?.store) throw argumentError('this Store was freed: create a new one');
  if (held.exports !== wasm) throw argumentError('this Store belongs to a module instance that was discarded (after a trap or before init()): create a new Store');
}

/**
 * Memory embeddings kept in wasm memory across queries (the Rust crate's
 * `Store`, 2026-12-05): N rows of d values, each validated once when it
 * enters (finite, not all zero, norm in range), with the storage every
 * call reads. `store.select(query, ids, k, options)` names the candidates
 * by the retriever's ids and gives the selection of `select(query,
 * rows[ids], k, { ...options, storage })`, picks as positions in `ids`.
 * Call free() when done (or let the garbage collector do it).
 */
export class Store {
  /**
   * `rows`: N x d values (a flat Float32Array / Float64Array / array of
   * numbers, or an array of N rows), `dim` = d, `options.storage`: 'f32'
   * (default), 'f16', 'bf16' or 'int8'. Throws MemPursuitError (a bad row:
   * kind 'input', `index` its row, `argument` 'rows').
   */
  constructor(rows, dim, options) {
    const exports = exportsOrThrow();
    if (typeof dim !== 'number' || !Number.isSafeInteger(dim) || dim < 0) {
      throw argumentError(`dim must be a non-negative integer (the embedding length d), got ${describe(dim)}`);
    }
    const storage = reading('options', () => {
      if (options == null) return 'f32';
      if (typeof options !== 'object' || Array.isArray(options)) throw argumentError(`options must be an object such as { storage: 'int8' }, got ${describe(options)}`);
      const keys = Object.keys(options).filter((key) => key !== 'storage');
      if (keys.length > 0) throw new MemPursuitError('option', `unknown store option '${keys[0]}' (options: storage)`);
      const value = options.storage ?? 'f32';
      if (typeof value !== 'string') throw argumentError(`option 'storage' is ${describe(value)}: pass 'f32', 'f16', 'bf16' or 'int8'`);
      return value;
    });
    const held = { exports, selector: exports.mp_selector_new() >>> 0, arena: 0, arenaBytes: 0, spec: null, store: 0 };
    try {
      const name = encoder.encode(storage);
      held.store = withRows(held, rows, dim, (ptr, n) => {
        const textPtr = name.length === 0 ? 0 : exports.mp_alloc(name.length) >>> 0;
        try {
          if (textPtr) new Uint8Array(exports.memory.buffer, textPtr, name.length).set(name);
          return exports.mp_store_new(held.selector, ptr, n, dim, textPtr, name.length) >>> 0;
        } finally {
          if (textPtr) exports.mp_free(textPtr, name.length);
        }
      });
      if (!held.store) throw lastError(held);
    } catch (err) {
      release(held);
      throw err;
    }
    this._held = held;
    this._dim = dim;
    this._storage = storage;
    finalizer?.register(this, held, this);
  }

  /** The number of rows N. */
  get length() {
    const held = this._held;
    liveStore(held);
    return held.exports.mp_store_len(held.store) >>> 0;
  }

  /** The embedding dimension d. */
  get dim() {
    return this._dim;
  }

  /** The storage every call reads: 'f32', 'f16', 'bf16' or 'int8'. */
  get storage() {
    return this._storage;
  }

  /**
   * Adds rows (M x d, as in the constructor) at the end, each validated;
   * returns their ids `{ start: N, end: N + M }` (end exclusive). On an
   * error nothing is added (`index`: the bad row's store id).
   */
  append(rows) {
    const held = this._held;
    liveStore(held);
    const start = held.exports.mp_store_len(held.store) >>> 0;
    withRows(held, rows, this._dim, (ptr, n) => {
      if (held.exports.mp_store_append(held.selector, held.store, ptr, n) < 0) throw lastError(held);
    });
    return { start, end: held.exports.mp_store_len(held.store) >>> 0 };
  }

  /**
   * Selects up to `k` of the candidates `ids` (store ids, 0 <= id < N) for
   * `query` (d values): the selection of `select(query, rows[ids], k,
   * options)` with the store's storage, picks as positions in `ids`. The
   * options are select()'s (`storage`, if given, must be the store's).
   * Throws MemPursuitError (an id out of range: kind 'input', `index` its
   * position, `id` the id as text, `argument` 'ids').
   */
  select(query, ids, k, options) {
    const held = this._held;
    liveStore(held);
    return runSelect(held, 'Store', query, k, options, () => readIds(ids, held.exports.mp_store_len(held.store) >>> 0), 'ids', (e, args) =>
      e.mp_store_select(held.store, held.selector, ...args),
    );
  }

  /** Releases the wasm memory of this store; it cannot be used afterwards. */
  free() {
    if (!this._held) return;
    finalizer?.unregister(this);
    release(this._held);
  }

  /** `Store(length=N, dim=d, storage='f32')` (`Store(freed, ...)` after free()). */
  toString() {
    const held = this._held;
    const live = held?.store && held.exports === wasm;
    const length = live ? `length=${held.exports.mp_store_len(held.store) >>> 0}` : 'freed';
    return `Store(${length}, dim=${this._dim}, storage='${this._storage}')`;
  }

  /** `{ length, dim, storage }` (length null once freed): a description, not the rows. */
  toJSON() {
    const held = this._held;
    const live = held?.store && held.exports === wasm;
    return { length: live ? held.exports.mp_store_len(held.store) >>> 0 : null, dim: this._dim, storage: this._storage };
  }

  /** Node's util.inspect / console.log: the same as toString(). */
  [Symbol.for('nodejs.util.inspect.custom')]() {
    return this.toString();
  }

  get [Symbol.toStringTag]() {
    return 'Store';
  }
}

/**
 * Selects up to k memories with a shared Selector (see Selector.select).
 * Requires `await init()` first.
 */
export function select(query, candidates, k, options) {
  exportsOrThrow();
  if (!defaultSelector || defaultSelector._held.exports !== wasm) defaultSelector = new Selector();
  return defaultSelector.select(query, candidates, k, options);
}

// ---------------------------------------------------------------------------
// The document layer (mempursuit::documents in Rust, 2026-12-05)

const SCORE_KINDS = { none: 0, similarity: 1, distance: 2 };
const ERROR_KINDS = ['input', 'option', 'capacity'];

/** A number given as a document's score or cost: a finite or non-finite JS number; anything else is the layer's input error naming the document. */
function docNumber(v, i, id, argument) {
  if (typeof v === 'number') return v;
  const name = id == null ? `document ${i}` : `document ${i} (id ${JSON.stringify(String(id))})`;
  throw new MemPursuitError('input', `${name}: its ${argument} is ${describe(v)}, not a number`, { index: i, id: id == null ? null : String(id), argument });
}

/** The documents' arrays in the layout of mp_docs_prepare / mp_docs_select. */
function encodeDocuments(documents) {
  const n = documents.length;
  const embLens = new Uint32Array(n);
  const idLens = new Uint32Array(n);
  const scores = new Float64Array(n);
  const costs = new Float64Array(n);
  const flags = new Uint8Array(n);
  const kinds = new Uint8Array(n);
  const rows = [];
  const idBytes = [];
  const textBytes = [];
  documents.forEach((doc, i) => {
    const id = doc?.id ?? null;
    const v = doc?.embedding;
    if (v == null) embLens[i] = 0xffffffff;
    else if (typeof v === 'string') {
      const b = encoder.encode(v);
      textBytes.push(b);
      embLens[i] = b.length;
      flags[i] |= 4;
    } else {
      let row;
      try {
        row = typeof v === 'object' && typeof v.length === 'number' ? Float32Array.from(v, (x) => docNumber(x, i, id, 'embedding')) : null;
      } catch (err) {
        if (err instanceof MemPursuitError) row = null;
        else throw err;
      }
      if (row === null) {
        const name = id == null ? `document ${i}` : `document ${i} (id ${JSON.stringify(String(id))})`;
        throw new MemPursuitError('input', `${name}: its embedding is ${describe(v)}, not an array of numbers (or pgvector's text "[0.1,...]")`, { index: i, id: id == null ? null : String(id), argument: 'embedding' });
      }
      rows.push(row);
      embLens[i] = row.length;
    }
    if (id == null) idLens[i] = 0xffffffff;
    else {
      const b = encoder.encode(String(id));
      idBytes.push(b);
      idLens[i] = b.length;
    }
    if (doc?.score != null) (flags[i] |= 1), (scores[i] = docNumber(doc.score, i, id, 'score'));
    if (doc?.cost != null) (flags[i] |= 2), (costs[i] = docNumber(doc.cost, i, id, 'cost'));
    const kind = doc?.scoreKind ?? doc?.score_kind ?? 'none';
    if (!Object.hasOwn(SCORE_KINDS, kind)) {
      throw new MemPursuitError('option', `document ${i}: scoreKind ${JSON.stringify(kind)} is not one of 'similarity' (higher is better), 'distance' (lower is better) or 'none'`, { index: i, id, argument: 'score_kind' });
    }
    kinds[i] = SCORE_KINDS[kind];
  });
  const concat = (parts, Kind) => {
    const out = new Kind(parts.reduce((a, r) => a + r.length, 0));
    parts.reduce((at, r) => (out.set(r, at), at + r.length), 0);
    return out;
  };
  return [concat(rows, Float32Array), embLens, scores, costs, flags, kinds, concat(idBytes, Uint8Array), idLens, concat(textBytes, Uint8Array)];
}

/** The options as the lines of mp_docs_select: `key\tkind\tvalue` (kind t, n or b); undefined and null are left out. */
function optionLines(options, what) {
  if (options == null) return '';
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new MemPursuitError('option', `${what}: the options must be an object such as { method: 'mmr', mmrLambda: 0.3 }, got ${describe(options)}`, { argument: 'options' });
  }
  const lines = [];
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined || value === null) continue;
    const t = typeof value;
    // A value of another type goes as its description (kind x): the layer
    // checks the name first (a name the integration fills in, an unknown one).
    const scalar = t === 'number' || t === 'boolean' || t === 'string';
    const text = scalar ? String(value) : describe(value);
    if (/[\t\n]/.test(key) || /[\t\n]/.test(text)) {
      throw new MemPursuitError('option', `option '${key}': tabs and line breaks are not allowed in option names and values`, { argument: key });
    }
    lines.push(`${key}\t${!scalar ? 'x' : t === 'string' ? 't' : t === 'number' ? 'n' : 'b'}\t${text}`);
  }
  return lines.join('\n');
}

/**
 * Runs `call(pointers)` with `arrays` copied into wasm memory, then reads
 * its MpDocs result: `read(info, text, buffer)` on success, a
 * MemPursuitError with the layer's kind, index, id and argument otherwise
 * (`ids(index)`: the id of document `index`).
 */
function withDocs(arrays, call, read, ids) {
  const e = exportsOrThrow();
  const blocks = arrays.map((a) => {
    const bytes = Math.max(a.byteLength, 8);
    const ptr = e.mp_alloc(bytes) >>> 0;
    if (!ptr) throw new MemPursuitError('capacity', `cannot allocate ${bytes} bytes of wasm memory for the documents`);
    new Uint8Array(e.memory.buffer, ptr, a.byteLength).set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
    return [ptr, bytes];
  });
  let h;
  try {
    h = call(e, blocks.map((b) => b[0])) >>> 0;
  } catch (err) {
    if (err instanceof WebAssembly.RuntimeError) throw trapped(err);
    throw err;
  } finally {
    if (wasm === e) for (const [ptr, bytes] of blocks) e.mp_free(ptr, bytes);
  }
  try {
    const info = new Uint32Array(e.memory.buffer, e.mp_docs_info(h) >>> 0, 13).slice();
    const buf = e.memory.buffer;
    const text = new TextDecoder().decode(new Uint8Array(buf, info[2], info[3]));
    if (info[0] !== 0) {
      const cut = text.indexOf('\n');
      const index = info[1] === 0xffffffff ? null : info[1];
      throw new MemPursuitError(ERROR_KINDS[info[0] - 1], text.slice(cut + 1), { index, id: index == null ? null : ids(index), argument: text.slice(0, cut) });
    }
    return read(info, text, buf);
  } finally {
    e.mp_docs_free(h);
  }
}

const documentsArray = (documents, what) => {
  if (!Array.isArray(documents)) throw new MemPursuitError('input', `${what}: documents must be an array`, { argument: 'documents' });
  return documents;
};
const idAt = (documents) => (index) => (documents[index]?.id == null ? null : String(documents[index].id));

/** The query as f32, or the layer's input error naming the query. */
function queryVector(query) {
  const bad = () => new MemPursuitError('input', `the query embedding is ${describe(query)}, not an array of numbers`, { argument: 'query' });
  if (query == null || typeof query !== 'object' || typeof query.length !== 'number') throw bad();
  const q = Float32Array.from(query, (x) => {
    if (typeof x !== 'number') throw bad();
    return x;
  });
  return q;
}

/**
 * Prepares documents as a store returned them for a selector call, by the
 * Rust document layer (the rules: docs/DOCUMENTS.md): `documents` is an
 * array of `{ id?, embedding?, score?, scoreKind?: 'similarity' |
 * 'distance' | 'none', cost? }` (also `score_kind`). Returns `{ kept,
 * duplicates, candidates, relevance, relevance_source, costs }` as Python's
 * `prepare_documents` does. Throws a MemPursuitError with `kind`, `index`,
 * `id`, `argument` set by the layer (no message is parsed).
 */
export function prepareDocuments(query, documents) {
  exportsOrThrow();
  documentsArray(documents, 'prepareDocuments(query, documents)');
  const q = queryVector(query);
  const arrays = [q, ...encodeDocuments(documents)];
  return withDocs(
    arrays,
    (e, [pq, pe, pel, ps, pc, pf, pk, pi, pil, pt]) => e.mp_docs_prepare(pq, q.length, documents.length, pe, pel, ps, pc, pf, pk, pi, pil, pt),
    (info, text, buf) => {
      const kept = Array.from(new Uint32Array(buf, info[4], info[5]));
      const pairs = new Uint32Array(buf, info[6], info[7]);
      const duplicates = [];
      for (let j = 0; j < pairs.length; j += 2) duplicates.push([pairs[j], pairs[j + 1]]);
      const dim = info[11];
      const flat = new Float32Array(buf, info[9], kept.length * dim).slice();
      return {
        kept,
        duplicates,
        candidates: kept.map((_, j) => flat.subarray(j * dim, (j + 1) * dim)),
        relevance: Array.from(new Float64Array(buf, info[8], kept.length)),
        relevance_source: text,
        costs: info[10] === 0 ? null : Array.from(new Float64Array(buf, info[10], kept.length)),
      };
    },
    idAt(documents),
  );
}

/**
 * Selects up to `k` of `documents` (as for prepareDocuments) for `query`
 * with the select() `options` (camelCase or snake_case keys), by the Rust
 * document layer: duplicate ids skipped (first kept), similarity scores as
 * relevance, a distance never (the vectors' cosine instead). Returns the
 * same object as Python's `select_documents`: `{ picks: [{ index,
 * metadata: { mempursuit: { rank, weight, score, residual_sq } } }],
 * duplicates: [[index, firstIndex]], relevance_source, stop_reason }`
 * (`weight` and `residual_sq` null for methods without weights). Throws a
 * MemPursuitError with the layer's kind, index, id and argument.
 */
export function selectDocuments(query, documents, k, options) {
  exportsOrThrow();
  documentsArray(documents, 'selectDocuments(query, documents, k, options)');
  if (typeof k !== 'number' || !Number.isInteger(k) || k < 0) {
    throw new MemPursuitError('option', `k must be a non-negative integer, got ${describe(k)}`, { argument: 'k' });
  }
  const opts = encoder.encode(optionLines(options, 'selectDocuments'));
  const q = queryVector(query);
  const arrays = [q, ...encodeDocuments(documents), opts];
  return withDocs(
    arrays,
    (e, [pq, pe, pel, ps, pc, pf, pk, pi, pil, pt, po]) =>
      e.mp_docs_select(pq, q.length, documents.length, pe, pel, ps, pc, pf, pk, pi, pil, pt, Math.min(k, 0xffffffff), po, opts.length),
    (_info, text) => JSON.parse(text),
    idAt(documents),
  );
}

/**
 * An integration's settings checked once, at construction, by the Rust
 * layer: the select() `options`; `scores`: whether the documents' scores
 * are passed (true, false, or null when that depends on the documents);
 * `cost`: whether a cost function is given; `budgetLater`: whether the
 * cost budget may come with each call. Throws the layer's MemPursuitError
 * (kind 'option', `argument` the option, or 'cost' / 'cost_budget').
 */
export function checkDocumentSettings(options, { scores = null, cost = false, budgetLater = false } = {}) {
  exportsOrThrow();
  const opts = encoder.encode(optionLines(options, 'checkDocumentSettings'));
  const code = scores === null ? 2 : scores ? 1 : 0;
  withDocs(
    [opts],
    (e, [po]) => e.mp_docs_check(po, opts.length, code, cost ? 1 : 0, budgetLater ? 1 : 0),
    () => undefined,
    () => null,
  );
}

/** The query embedding checked by the layer before a store is asked (finite, not all zeros); returns its length d. */
export function checkQuery(query) {
  exportsOrThrow();
  const q = queryVector(query);
  return withDocs(
    [q],
    (e, [pq]) => e.mp_docs_check_query(pq, q.length),
    () => q.length,
    () => null,
  );
}

/** The keys of select()'s options (snake_case, the library's), from the module's layout. */
export function optionKeys() {
  exportsOrThrow();
  return new Set(layout.options.keys());
}

/** The metadata key of the record each selected document carries, and its fields (the Rust layer's; see docs/DOCUMENTS.md). */
export const METADATA_KEY = 'mempursuit';
export const METADATA_FIELDS = Object.freeze(['rank', 'weight', 'score', 'residual_sq']);
