// MemPursuit for JavaScript: the npm package `mempursuit`, an ES module over
// the C ABI of the WebAssembly module built from wasm/src/lib.rs (ABI 2).
// No dependencies; Node.js >= 18, browsers and bundlers. Types:
// mempursuit.d.ts. Shapes: query = d values, candidates = P x d values,
// row-major (a flat Float32Array, or an array of P rows).

const ABI_VERSION = 2;
const METHOD_PURSUIT = 0;
const METHOD_TOP_K = 1;
const METHOD_MMR = 2;
const FLAG_REQUIRE_UNIT = 1 << 0;
const FLAG_EXCLUDE_INVALID = 1 << 1;
const FLAG_ADAPTIVE = 1 << 2;
const FLAG_STOP_AT_OPTIMUM = 1 << 3;
const FLAG_FILL_AT_OPTIMUM = 1 << 4;
const FLAG_POOL_ORDER = 1 << 5;
const FLAG_RELEVANCE = 1 << 6;
const STEP_FIELDS = 5;
const STOP_REASONS = ['budget', 'adaptive', 'pool-exhausted', 'pool-optimum'];
const ERROR_CODES = { '-1': 'argument', '-2': 'input', '-3': 'option', '-4': 'capacity' };
const PAPER_RIDGE = 1e-10;
const CENTROID_GAMMA = 0.5;
const PAPER_MMR_LAMBDA = 0.5;
const PURSUIT_ONLY = ['ridge', 'gamma', 'adaptive', 'atPoolOptimum'];
const KNOWN_OPTIONS = new Set([
  'method', 'ridge', 'gamma', 'mmrLambda', 'relevance', 'poolOrder', 'adaptive',
  'atPoolOptimum', 'requireUnit', 'excludeInvalid',
]);

/**
 * A failed selection. `message` is the native library's message, word for
 * word; `code` is 'input' (a shape, a non-finite value, a zero or
 * out-of-range norm, the relevance), 'option' (ridge, gamma, mmrLambda),
 * 'capacity' (the scratch for this shape does not fit in wasm memory) or
 * 'argument' (a call this wrapper rejects before running: wrong types,
 * unknown options, a missing init()).
 */
export class MemPursuitError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'MemPursuitError';
    this.code = code;
  }
}

const argumentError = (message) => new MemPursuitError('argument', message);

let wasm = null; // the instance's exports once initialized
let pending = null; // the promise of a running init()
let defaultSelector = null;

const isNode = typeof process !== 'undefined' && process.versions != null && process.versions.node != null;

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
    return (await WebAssembly.instantiate(await source.arrayBuffer(), imports)).instance;
  }
  if (typeof source === 'string' || source instanceof URL) {
    const href = String(source);
    // A file: URL, or a path (no scheme; a one-letter "scheme" is a Windows drive).
    const fileUrl = /^file:/i.test(href);
    if (isNode && (fileUrl || !/^[a-z][a-z0-9+.-]+:/i.test(href))) {
      // Hidden from bundlers: this branch runs in Node.js only.
      const { readFile } = await import(/* webpackIgnore: true */ /* @vite-ignore */ 'node:fs/promises');
      const bytes = await readFile(fileUrl ? new URL(href) : href);
      return (await WebAssembly.instantiate(bytes, imports)).instance;
    }
    const response = await fetch(source);
    if (!response.ok) throw new Error(`mempursuit: fetching ${source} failed: HTTP ${response.status}`);
    return instantiate(response);
  }
  throw argumentError('init(): expected a URL, a path, a Response, bytes or a WebAssembly.Module');
}

function adopt(instance) {
  if (wasm) return; // an initSync() won the race with a pending init()
  const exports = instance.exports;
  const version = typeof exports.mp_abi_version === 'function' ? exports.mp_abi_version() : 0;
  if (version !== ABI_VERSION) {
    throw new Error(`mempursuit: the wasm module speaks ABI ${version}, this wrapper ABI ${ABI_VERSION}; rebuild it with wasm/build.sh`);
  }
  wasm = exports;
}

/**
 * Loads the WebAssembly module; call (and await) once before select() or
 * new Selector(). Without an argument it loads mempursuit.wasm next to this
 * file: from disk in Node.js, with fetch() in browsers and bundlers (which
 * see the `new URL(..., import.meta.url)` and ship the file). Or pass a
 * URL or path, a fetch() Response (or its promise), the bytes, or a compiled
 * WebAssembly.Module. Later calls return at once.
 */
export function init(source) {
  if (wasm) return Promise.resolve();
  if (!pending) {
    const from = source ?? new URL('./mempursuit.wasm', import.meta.url);
    pending = instantiate(from)
      .then(adopt)
      .catch((err) => {
        pending = null; // a later init() may try again
        throw err;
      });
  }
  return pending;
}

/**
 * Synchronous init() from the module's bytes or a compiled
 * WebAssembly.Module (Node.js, workers; browsers refuse to compile large
 * modules synchronously on the main thread).
 */
export function initSync(source) {
  if (wasm) return;
  const module = source instanceof WebAssembly.Module ? source : new WebAssembly.Module(source);
  adopt(new WebAssembly.Instance(module, {}));
}

function exportsOrThrow() {
  if (!wasm) throw argumentError('mempursuit is not initialized: call `await init()` first');
  return wasm;
}

const isArrayLike = (x) => x != null && typeof x !== 'string' && typeof x.length === 'number';

function toF32(values, what) {
  if (values instanceof Float32Array) return values;
  if (!isArrayLike(values)) throw argumentError(`${what} must be a Float32Array or an array of numbers`);
  return Float32Array.from(values);
}

/** Flat row-major candidates from a Float32Array, numbers or rows. */
function flatten(candidates, d) {
  if (candidates instanceof Float32Array) return candidates;
  if (!isArrayLike(candidates)) {
    throw argumentError('candidates must be a Float32Array (P x d, row-major) or an array of rows');
  }
  if (candidates.length === 0 || !isArrayLike(candidates[0])) return toF32(candidates, 'candidates');
  const out = new Float32Array(candidates.length * d);
  for (let i = 0; i < candidates.length; i++) {
    const row = candidates[i];
    if (!isArrayLike(row) || row.length !== d) {
      throw argumentError(`candidate row ${i} has ${isArrayLike(row) ? row.length : 'no'} values but the query has ${d}`);
    }
    out.set(row, i * d);
  }
  return out;
}

/** The method code, its three parameters and the flag bits of `options`. */
function parseOptions(options) {
  if (options == null) options = {};
  if (typeof options !== 'object') throw argumentError('options must be an object');
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key)) {
      throw argumentError(`unknown option '${key}' (known: ${[...KNOWN_OPTIONS].join(', ')})`);
    }
  }
  const method = options.method ?? 'pursuit';
  const pursuit = method === 'pursuit' || method === 'centroid';
  if (!pursuit && method !== 'topk' && method !== 'mmr') {
    throw argumentError(`unknown method '${method}' (pursuit, centroid, topk, mmr)`);
  }
  for (const key of PURSUIT_ONLY) {
    if (!pursuit && options[key] !== undefined) {
      throw argumentError(`option '${key}' applies to methods 'pursuit' and 'centroid', not '${method}'`);
    }
  }
  if (method !== 'mmr' && options.mmrLambda !== undefined) {
    throw argumentError(`option 'mmrLambda' applies to method 'mmr', not '${method}'`);
  }
  if (method === 'centroid' && options.ridge !== undefined) {
    throw argumentError("method 'centroid' is ridge = Infinity; use method 'pursuit' for another ridge");
  }
  if (method === 'centroid' && options.atPoolOptimum !== undefined) {
    // Centroid pursuit has no optimality certificate.
    throw argumentError("option 'atPoolOptimum' applies to method 'pursuit', not 'centroid'");
  }
  for (const key of ['ridge', 'gamma', 'mmrLambda']) {
    if (options[key] !== undefined && typeof options[key] !== 'number') {
      throw argumentError(`option '${key}' must be a number`);
    }
  }
  let flags = 0;
  if (options.requireUnit) flags |= FLAG_REQUIRE_UNIT;
  if (options.excludeInvalid) flags |= FLAG_EXCLUDE_INVALID;
  if (options.adaptive) flags |= FLAG_ADAPTIVE;
  const atOptimum = options.atPoolOptimum ?? 'continue';
  if (atOptimum === 'stop') flags |= FLAG_STOP_AT_OPTIMUM;
  else if (atOptimum === 'fill') flags |= FLAG_FILL_AT_OPTIMUM;
  else if (atOptimum !== 'continue') {
    throw argumentError(`option 'atPoolOptimum' must be 'continue', 'stop' or 'fill', not '${atOptimum}'`);
  }
  const relevance = options.relevance ?? null;
  if (relevance !== null) {
    if (options.poolOrder) throw argumentError("options 'relevance' and 'poolOrder' exclude each other");
    flags |= FLAG_RELEVANCE;
  }
  if (options.poolOrder) flags |= FLAG_POOL_ORDER;
  return {
    code: pursuit ? METHOD_PURSUIT : method === 'topk' ? METHOD_TOP_K : METHOD_MMR,
    weighted: pursuit,
    ridge: method === 'centroid' ? Infinity : options.ridge ?? PAPER_RIDGE,
    gamma: options.gamma ?? (method === 'centroid' ? CENTROID_GAMMA : 1),
    mmrLambda: options.mmrLambda ?? PAPER_MMR_LAMBDA,
    flags,
    relevance: relevance === null ? null : toF32(relevance, 'options.relevance'),
  };
}

// Frees the wasm side of Selectors that were dropped without free().
const finalizer =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((held) => release(held))
    : null;

function release(held) {
  if (held.exports && held.selector) {
    if (held.arena) held.exports.mp_free(held.arena, held.arenaBytes);
    held.exports.mp_selector_free(held.selector);
  }
  held.selector = 0;
  held.arena = 0;
  held.arenaBytes = 0;
}

const align8 = (n) => Math.ceil(n / 8) * 8;

/**
 * A reusable selector: its scratch and its input/output buffers stay in
 * wasm memory and grow to the largest call seen, so repeated selections of
 * similar shape allocate nothing. Call free() when done (or let the garbage
 * collector do it).
 */
export class Selector {
  constructor() {
    const exports = exportsOrThrow();
    this._held = { exports, selector: exports.mp_selector_new(), arena: 0, arenaBytes: 0 };
    finalizer?.register(this, this._held, this);
  }

  /**
   * Selects up to k memories for `query` from `candidates`; see
   * mempursuit.d.ts for the options and the result.
   */
  select(query, candidates, k, options) {
    const held = this._held;
    if (!held.selector) throw argumentError('this Selector was freed');
    const e = held.exports;
    const opts = parseOptions(options);
    const q = toF32(query, 'query');
    const d = q.length;
    const c = flatten(candidates, d);
    if (!Number.isSafeInteger(k) || k < 0) throw argumentError(`k must be a non-negative integer, got ${k}`);
    const rel = opts.relevance;
    // P as the core counts it; an invalid shape selects nothing and the
    // module reports the core's error.
    const pool = d > 0 && c.length % d === 0 ? c.length / d : 0;
    const n = Math.min(k, pool);
    // One arena: query | candidates | relevance | picks | weights | steps.
    const offQuery = 0;
    const offCand = align8(offQuery + 4 * d);
    const offRel = align8(offCand + 4 * c.length);
    const offPicks = align8(offRel + 4 * (rel ? rel.length : 0));
    const offWeights = align8(offPicks + 4 * n);
    const offSteps = offWeights + 8 * n;
    const bytes = Math.max(8, offSteps + 8 * STEP_FIELDS * n);
    if (bytes > 0x7fffffff) {
      // Sizes cross the ABI as 32-bit integers; wasm32 memory is 4 GiB.
      throw new MemPursuitError('capacity', `the input and output need ${bytes} bytes, more than wasm32 memory can hold; use a smaller pool or budget`);
    }
    if (bytes > held.arenaBytes) {
      if (held.arena) e.mp_free(held.arena, held.arenaBytes);
      held.arena = 0;
      held.arenaBytes = 0;
      const grown = Math.max(bytes, Math.min(2 * bytes, 0x7fffffff));
      let ptr = e.mp_alloc(grown);
      let size = grown;
      if (ptr === 0 && grown > bytes) {
        ptr = e.mp_alloc(bytes);
        size = bytes;
      }
      if (ptr === 0) {
        throw new MemPursuitError('capacity', `cannot allocate ${bytes} bytes of wasm memory for the input and output; use a smaller pool or budget`);
      }
      held.arena = ptr;
      held.arenaBytes = size;
    }
    const base = held.arena;
    // Views only after the last allocation (memory may have grown).
    let buf = e.memory.buffer;
    new Float32Array(buf, base + offQuery, d).set(q);
    new Float32Array(buf, base + offCand, c.length).set(c);
    if (rel) new Float32Array(buf, base + offRel, rel.length).set(rel);
    const got = e.mp_select(
      held.selector, opts.code, opts.ridge, opts.gamma, opts.mmrLambda, opts.flags,
      base + offQuery, d, base + offCand, c.length,
      rel ? base + offRel : 0, rel ? rel.length : 0,
      // usize is 32-bit here: K above 2^32 - 1 selects the same min(K, P).
      Math.min(k, 0xffffffff) | 0,
      base + offPicks, opts.weighted ? base + offWeights : 0, base + offSteps, n,
    );
    if (got < 0) {
      const msg = new TextDecoder().decode(new Uint8Array(e.memory.buffer, e.mp_error_ptr(held.selector), e.mp_error_len(held.selector)));
      throw new MemPursuitError(ERROR_CODES[got] ?? 'argument', msg);
    }
    buf = e.memory.buffer; // the call may have grown memory
    const picks = new Uint32Array(buf, base + offPicks, got).slice();
    const weights = opts.weighted ? new Float64Array(buf, base + offWeights, got).slice() : new Float64Array(0);
    const raw = new Float64Array(buf, base + offSteps, got * STEP_FIELDS);
    const steps = new Array(got);
    for (let t = 0; t < got; t++) {
      const o = t * STEP_FIELDS;
      steps[t] = { index: picks[t], score: raw[o], residualSq: raw[o + 1], improvement: raw[o + 2], fwGap: raw[o + 3], nu: raw[o + 4] };
    }
    return {
      picks,
      weights,
      steps,
      stopReason: STOP_REASONS[e.mp_stop_reason(held.selector)],
      excluded: new Uint32Array(e.memory.buffer, e.mp_excluded_ptr(held.selector), e.mp_excluded_count(held.selector)).slice(),
    };
  }

  /** Releases the wasm memory of this selector; it cannot select afterwards. */
  free() {
    finalizer?.unregister(this);
    release(this._held);
  }
}

/**
 * Selects up to k memories with a shared Selector (see Selector.select).
 * Requires `await init()` first.
 */
export function select(query, candidates, k, options) {
  exportsOrThrow();
  if (!defaultSelector) defaultSelector = new Selector();
  return defaultSelector.select(query, candidates, k, options);
}
