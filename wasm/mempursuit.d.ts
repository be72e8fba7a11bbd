// Type declarations of the npm package `mempursuit` (mempursuit.js).

/**
 * Where init() loads the WebAssembly module from: a URL or path (Node.js
 * reads file: URLs and paths from disk; browsers fetch), a fetch()
 * Response, the module's bytes, or a compiled WebAssembly.Module.
 */
export type InitInput = string | URL | Response | ArrayBuffer | ArrayBufferView | WebAssembly.Module;

/**
 * Loads the WebAssembly module. Call and await it once before select() or
 * `new Selector()`; later calls resolve at once. Without an argument it
 * loads `mempursuit.wasm` next to mempursuit.js (from disk in Node.js,
 * with fetch() in browsers and bundlers).
 */
export function init(source?: InitInput | Promise<InitInput>): Promise<void>;

/**
 * init() from the module's bytes or a compiled WebAssembly.Module,
 * synchronously (Node.js and workers; browsers refuse to compile large
 * modules synchronously on the main thread).
 */
export function initSync(source: ArrayBuffer | ArrayBufferView | WebAssembly.Module): void;

/**
 * The selector:
 * - `'pursuit'`: MemPursuit (Feng & Fan 2026, Eqs. 5, 6, 9), the default;
 *   with `gamma` < 1 or a first-stage `relevance`, a member of its
 *   relevance-scaled family;
 * - `'centroid'`: centroid pursuit (ridge = Infinity, equal weights; gamma
 *   defaults to 0.5);
 * - `'topk'`: the k most relevant candidates;
 * - `'mmr'`: maximal marginal relevance (Carbonell & Goldstein 1998).
 */
export type Method = 'pursuit' | 'centroid' | 'topk' | 'mmr';

/** Options of select(); every field is optional. */
export interface SelectOptions {
  /** The selector (default `'pursuit'`). */
  method?: Method;
  /** Pursuit only: the ridge λ of the refit (Eq. 6), >= 0, paper 1e-10. */
  ridge?: number;
  /** Pursuit and centroid: γ in (0, 1], the weight of the reconstruction against relevance (default 1; centroid 0.5). */
  gamma?: number;
  /** MMR only: λ_mmr in [0, 1], relevance against redundancy (default 0.5; 1 is top-K). */
  mmrLambda?: number;
  /** First-stage scores, one per candidate (P finite values); default: relevance = the query cosine. */
  relevance?: Float32Array | ArrayLike<number> | null;
  /** The candidates are in first-stage order (row 0 ranked first); excludes `relevance`. */
  poolOrder?: boolean;
  /** Pursuit and centroid: the paper's adaptive stopping (Eq. 7: τ = 1e-5, patience 2); may pick fewer than k. */
  adaptive?: boolean;
  /** Pursuit only (not centroid): once the Frank–Wolfe gap certifies the picks optimal for the whole pool, keep going (`'continue'`, the paper), stop, or fill the budget by relevance. */
  atPoolOptimum?: 'continue' | 'stop' | 'fill';
  /** Every vector must have unit norm (within 1e-3); otherwise vectors are used through their direction. */
  requireUnit?: boolean;
  /** Skip unusable candidate rows (non-finite, zero norm) instead of failing; they are listed in `excluded`. */
  excludeInvalid?: boolean;
}

/** The record of one pick. */
export interface Step {
  /** Pool index (candidate row) of this pick. */
  index: number;
  /**
   * Its score when picked: U = ρ − γ G_{i,S} α (Eq. 9; the residual
   * alignment m·r in paper mode) for the pursuit, the relevance for top-K,
   * the MMR score for MMR; ρ for a pick made by `atPoolOptimum: 'fill'`.
   */
  score: number;
  /** Pursuit: L_t = ‖q − Σ α_j m_j‖² after the refit, in cosine units (L_0 = 1); 0 for top-K and MMR. */
  residualSq: number;
  /** Pursuit: Δ_t = (L_{t−1} − L_t) / max(L_{t−1}, ε), the relative improvement of Eq. 7; 0 for top-K and MMR. */
  improvement: number;
  /**
   * Pursuit: the Frank–Wolfe gap g_S after the refit, a certificate
   * 0 ≤ J(S) − F* ≤ g_S (0 at the pool optimum); for 'centroid' a
   * diagnostic without that guarantee, possibly negative; 0 for top-K and MMR.
   */
  fwGap: number;
  /** Pursuit: ν_S, the common value of U_j − γκα_j on the refit's free set (for 'centroid' the mean U_j); 0 for top-K and MMR. */
  nu: number;
}

/** Why a selection ended. */
export type StopReason = 'budget' | 'adaptive' | 'pool-exhausted' | 'pool-optimum';

/** The result of select(). */
export interface Selection {
  /** Pool indices (candidate rows) in pick order; min(k, P) of them unless stopped early. */
  picks: Uint32Array;
  /** Simplex weights aligned with `picks` (sum 1) for 'pursuit' and 'centroid'; empty for 'topk' and 'mmr'. */
  weights: Float64Array;
  /** One record per pick. */
  steps: Step[];
  /** Why the selection ended. */
  stopReason: StopReason;
  /** Candidate rows skipped as unusable, ascending (only with `excludeInvalid`; never picked). */
  excluded: Uint32Array;
}

/** What failed: see MemPursuitError. */
export type ErrorCode = 'argument' | 'input' | 'option' | 'capacity';

/**
 * A failed selection. `message` is the native library's message word for
 * word (it names the offending index or value); `code`: 'input' (shape,
 * non-finite value, zero or out-of-range norm, relevance), 'option'
 * (ridge, gamma, mmrLambda), 'capacity' (the scratch for this shape does
 * not fit in wasm memory), 'argument' (wrong types, unknown options, no
 * init()).
 */
export class MemPursuitError extends Error {
  readonly name: 'MemPursuitError';
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string);
}

/** Candidate embeddings: a flat row-major P × d array, or P rows of d values. */
export type Candidates = Float32Array | ArrayLike<number> | ArrayLike<ArrayLike<number>>;

/**
 * A reusable selector: its scratch and its input/output buffers stay in
 * wasm memory and grow to the largest call seen. Requires init().
 */
export class Selector {
  constructor();
  /**
   * Selects up to `k` memories for `query` (d values) from `candidates`
   * (P × d; d = query.length). Throws MemPursuitError.
   */
  select(query: Float32Array | ArrayLike<number>, candidates: Candidates, k: number, options?: SelectOptions): Selection;
  /** Releases the wasm memory of this selector. */
  free(): void;
}

/** Selector.select() on a shared selector. Requires init(). */
export function select(
  query: Float32Array | ArrayLike<number>,
  candidates: Candidates,
  k: number,
  options?: SelectOptions,
): Selection;
