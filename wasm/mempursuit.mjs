// MemPursuit in WebAssembly: a thin JavaScript wrapper over the C ABI of
// the `mempursuit-wasm` crate (wasm/src/lib.rs). No dependencies; Node.js
// >= 18 or any browser with WebAssembly (and WebAssembly SIMD for the
// default simd128 build).
//
//   import { MemPursuit } from './mempursuit.mjs';
//   const mp = await MemPursuit.load();              // wasm/pkg-tmp/mempursuit_wasm.wasm
//   const r = mp.select(query, candidates, 10);      // Float32Array d, Float32Array P*d
//   r.picks                                          // pool indices in entry order
//
// Shapes: query = d f32, candidates = row-major P x d f32 (a Float32Array or
// an array of rows). Methods: 'pursuit' (the paper's MemPursuit, ridge 1e-10,
// gamma 1), 'centroid' (ridge = Infinity, gamma 0.5), 'topk', 'mmr' (lambda 0.5).

/** Flag bits of the C ABI (FLAG_* in wasm/src/lib.rs). */
export const Flags = Object.freeze({
  REQUIRE_UNIT: 1 << 0,
  EXCLUDE_INVALID: 1 << 1,
  ADAPTIVE: 1 << 2,
  STOP_AT_OPTIMUM: 1 << 3,
  FILL_AT_OPTIMUM: 1 << 4,
  POOL_ORDER: 1 << 5,
});

/** f64 values per step record: score, residualSq, improvement, fwGap, nu. */
export const STEP_FIELDS = 5;
const ABI_VERSION = 1;
const STOP_REASONS = ['budget', 'adaptive', 'pool-exhausted', 'pool-optimum'];
const ERROR_KINDS = { '-1': 'argument', '-2': 'input', '-3': 'option', '-4': 'capacity' };

/** A failed selection: `code` is the C ABI's negative code, `kind` its name. */
export class MemPursuitError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'MemPursuitError';
    this.code = code;
    this.kind = ERROR_KINDS[code] ?? 'unknown';
  }
}

/** The default module path: wasm/pkg-tmp/mempursuit_wasm.wasm (wasm/build.sh). */
export const DEFAULT_WASM_URL = new URL('./pkg-tmp/mempursuit_wasm.wasm', import.meta.url);

async function bytesOf(source) {
  if (source instanceof WebAssembly.Module) return source;
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return source;
  const isNode = typeof process !== 'undefined' && process.versions?.node;
  if (isNode) {
    const { readFile } = await import('node:fs/promises');
    return readFile(source instanceof URL ? source : String(source));
  }
  const response = await fetch(source);
  return response.arrayBuffer();
}

/** A loaded module with one reusable selector (scratch grows on demand). */
export class MemPursuit {
  /**
   * Loads and instantiates the module.
   * @param source a path, URL, bytes or WebAssembly.Module (default: DEFAULT_WASM_URL)
   */
  static async load(source = DEFAULT_WASM_URL) {
    const bytes = await bytesOf(source);
    const instance =
      bytes instanceof WebAssembly.Module
        ? await WebAssembly.instantiate(bytes, {})
        : (await WebAssembly.instantiate(bytes, {})).instance;
    return new MemPursuit(instance);
  }

  constructor(instance) {
    this.exports = instance.exports;
    const version = this.exports.mp_abi_version();
    if (version !== ABI_VERSION) {
      throw new Error(`mempursuit wasm ABI ${version}, this wrapper speaks ${ABI_VERSION}`);
    }
    this.selector = this.exports.mp_selector_new();
  }

  /** The module's linear memory. Views must be re-created after every call. */
  get memory() {
    return this.exports.memory;
  }

  /**
   * Copies a query and its pool into linear memory once, for several
   * selections (see Pool). Call pool.free() when done.
   */
  pool(query, candidates, relevance = null) {
    return new Pool(this, query, candidates, relevance);
  }

  /** One selection: copies the input in, selects, frees. See Pool.select. */
  select(query, candidates, k, options = {}) {
    const pool = this.pool(query, candidates, options.relevance ?? null);
    try {
      return pool.select(k, options);
    } finally {
      pool.free();
    }
  }

  /** Releases the selector (the module stays loaded). */
  close() {
    if (this.selector) this.exports.mp_selector_free(this.selector);
    this.selector = 0;
  }

  /** Sizes on this (32-bit) target, for docs/PORTABILITY.md. */
  sizes() {
    const e = this.exports;
    const fixed = [];
    for (let row = 0; ; row++) {
      const n = e.mp_fixed_workspace_size(row);
      if (n === 0) break;
      fixed.push(n);
    }
    return { step: e.mp_step_size(), fixedWorkspace: fixed, scratchBytes: (p, k) => e.mp_scratch_bytes(p, k) >>> 0 };
  }

  alloc(bytes) {
    if (bytes === 0) return 0;
    const ptr = this.exports.mp_alloc(bytes);
    if (ptr === 0) throw new MemPursuitError(-4, `cannot allocate ${bytes} bytes of wasm memory`);
    return ptr;
  }

  errorMessage() {
    const e = this.exports;
    const ptr = e.mp_error_ptr(this.selector);
    const len = e.mp_error_len(this.selector);
    return new TextDecoder().decode(new Uint8Array(e.memory.buffer, ptr, len));
  }
}

function flatten(candidates, d) {
  if (candidates instanceof Float32Array) return candidates;
  const out = new Float32Array(candidates.length * d);
  candidates.forEach((row, i) => {
    if (row.length !== d) throw new MemPursuitError(-2, `candidate ${i} has ${row.length} values, the query ${d}`);
    out.set(row, i * d);
  });
  return out;
}

/** A query and its pool staged in linear memory, plus output buffers. */
export class Pool {
  constructor(mp, query, candidates, relevance) {
    this.mp = mp;
    const d = query.length;
    const flat = flatten(candidates, d);
    if (d === 0) throw new MemPursuitError(-2, 'the query is empty (dimension d = 0)');
    if (flat.length % d !== 0) {
      throw new MemPursuitError(-2, `candidates have ${flat.length} values, not a multiple of the query dimension ${d}`);
    }
    this.dim = d;
    this.size = flat.length / d;
    const p = this.size;
    if (relevance && relevance.length !== p) {
      throw new MemPursuitError(-2, `relevance has ${relevance.length} entries but the pool has ${p} candidates`);
    }
    this.blocks = [];
    const block = (bytes) => {
      const ptr = mp.alloc(bytes);
      if (ptr) this.blocks.push([ptr, bytes]);
      return ptr;
    };
    try {
      this.queryPtr = block(4 * d);
      this.candidatesPtr = block(4 * flat.length);
      this.relevancePtr = relevance ? block(4 * p) : 0;
      this.picksPtr = block(4 * p);
      this.weightsPtr = block(8 * p);
      this.stepsPtr = block(8 * STEP_FIELDS * p);
    } catch (err) {
      this.free();
      throw err;
    }
    // Views only after the last allocation (memory may have grown).
    const buf = mp.memory.buffer;
    new Float32Array(buf, this.queryPtr, d).set(query);
    new Float32Array(buf, this.candidatesPtr, flat.length).set(flat);
    if (relevance) new Float32Array(buf, this.relevancePtr, p).set(relevance);
  }

  /**
   * Selects up to k memories.
   * @param options.method 'pursuit' (default) | 'centroid' | 'topk' | 'mmr'
   * @param options.ridge  pursuit ridge lambda (default 1e-10; centroid: Infinity)
   * @param options.gamma  pursuit gamma in (0, 1] (default 1; centroid: 0.5)
   * @param options.lambda MMR trade-off in [0, 1] (default 0.5)
   * @param options.adaptive the paper's adaptive stopping (Eq. 7)
   * @param options.atPoolOptimum 'continue' (default) | 'stop' | 'fill'
   * @param options.requireUnit, options.excludeInvalid, options.poolOrder  input policy
   * @param options.steps  also return the per-step records
   * @returns {{picks: number[], weights: number[], stop: string, excluded: number, steps?: object[]}}
   */
  select(k, options = {}) {
    const mp = this.mp;
    const e = mp.exports;
    if (!mp.selector) throw new Error('selector closed');
    const method = options.method ?? 'pursuit';
    let flags = 0;
    if (options.requireUnit) flags |= Flags.REQUIRE_UNIT;
    if (options.excludeInvalid) flags |= Flags.EXCLUDE_INVALID;
    if (options.adaptive) flags |= Flags.ADAPTIVE;
    if (options.atPoolOptimum === 'stop') flags |= Flags.STOP_AT_OPTIMUM;
    else if (options.atPoolOptimum === 'fill') flags |= Flags.FILL_AT_OPTIMUM;
    else if (options.atPoolOptimum !== undefined && options.atPoolOptimum !== 'continue') {
      throw new MemPursuitError(-1, `atPoolOptimum must be 'continue', 'stop' or 'fill'`);
    }
    if (options.poolOrder) flags |= Flags.POOL_ORDER;
    const steps = options.steps ? this.stepsPtr : 0;
    const common = [this.queryPtr, this.dim, this.candidatesPtr, this.size, this.relevancePtr, k, this.picksPtr];
    let n;
    switch (method) {
      case 'pursuit':
      case 'centroid': {
        const centroid = method === 'centroid';
        const ridge = options.ridge ?? (centroid ? Infinity : 1e-10);
        const gamma = options.gamma ?? (centroid ? 0.5 : 1);
        n = e.mp_pursuit(mp.selector, ridge, gamma, flags, ...common, this.weightsPtr, steps);
        break;
      }
      case 'topk':
        n = e.mp_top_k(mp.selector, flags, ...common, steps);
        break;
      case 'mmr':
        n = e.mp_mmr(mp.selector, options.lambda ?? 0.5, flags, ...common, steps);
        break;
      default:
        throw new MemPursuitError(-1, `unknown method '${method}'`);
    }
    if (n < 0) throw new MemPursuitError(n, mp.errorMessage());
    const buf = mp.memory.buffer;
    const result = {
      picks: Array.from(new Uint32Array(buf, this.picksPtr, n)),
      weights: method === 'pursuit' || method === 'centroid' ? Array.from(new Float64Array(buf, this.weightsPtr, n)) : [],
      stop: STOP_REASONS[e.mp_stop_reason(mp.selector)],
      excluded: e.mp_excluded_count(mp.selector),
    };
    if (steps) {
      const s = new Float64Array(buf, this.stepsPtr, n * STEP_FIELDS);
      result.steps = [];
      for (let t = 0; t < n; t++) {
        const [score, residualSq, improvement, fwGap, nu] = s.subarray(t * STEP_FIELDS, (t + 1) * STEP_FIELDS);
        result.steps.push({ index: result.picks[t], score, residualSq, improvement, fwGap, nu });
      }
    }
    return result;
  }

  /** Releases the staged input and the output buffers. */
  free() {
    for (const [ptr, bytes] of this.blocks) this.mp.exports.mp_free(ptr, bytes);
    this.blocks = [];
  }
}
