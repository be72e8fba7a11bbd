// Type declarations of the npm package `mempursuit` (mempursuit.js).
//
// Needs TypeScript's `lib` to include "es2022" (or later) and "dom" (for
// `Response` and `URL`; in Node.js-only projects `@types/node` declares
// them too): e.g. `"lib": ["es2022", "dom"]`, with `"module"` and
// `"moduleResolution"` set to "nodenext" or "bundler".
//
// The option keys and values, the step fields and the stop reasons are the
// library's one specification of a selector call (Rust: `SelectSpec`,
// `Step::FIELDS`, `StopReason`), keys in camelCase, values as in every
// binding; wasm/test/conformance.test.mjs checks these declarations against
// the module's own list.

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
 * with fetch() in browsers and bundlers that ship the file). Never throws
 * synchronously: a failure (including a bundle where that default location
 * cannot be built, such as CommonJS output) is a rejected promise with a
 * MemPursuitError saying how to pass the path, URL or bytes.
 */
export function init(source?: InitInput | Promise<InitInput>): Promise<void>;

/**
 * init() from the module's bytes or a compiled WebAssembly.Module,
 * synchronously (Node.js and workers; browsers refuse to compile large
 * modules synchronously on the main thread). Throws MemPursuitError.
 */
export function initSync(source: ArrayBuffer | ArrayBufferView | WebAssembly.Module): void;

/**
 * The selector:
 * - `'recommended'` (the default): centroid pursuit on unit-free relevance
 *   with a γ chosen per pool and budget; needs no tuning, and is the
 *   setting that keeps at least as much evidence as top-K in the
 *   measurements (repository README);
 * - `'pursuit'`: MemPursuit as in the paper (Feng & Fan 2026, Eqs. 5, 6, 9;
 *   ridge 1e-10, γ = 1), or a member of its relevance-scaled family with
 *   `gamma`, `ridge` and relevance scores. Choose it for its theory (the
 *   Frank–Wolfe certificate, `atPoolOptimum`), nested prefixes, or strong
 *   encoders on cosine-ordered pools;
 * - `'centroid'`: centroid pursuit (ridge = ∞: equal weights, no QP) with
 *   a fixed `gamma`;
 * - `'topk'`: the k most relevant candidates;
 * - `'mmr'`: maximal marginal relevance (Carbonell & Goldstein 1998).
 */
export type Method = 'recommended' | 'pursuit' | 'centroid' | 'topk' | 'mmr';

/** What to do once the Frank–Wolfe gap reaches `optimumTolerance`: go on (the paper), stop, or fill the rest of the budget by relevance. */
export type AtPoolOptimum = 'continue' | 'stop' | 'fill';

/** A candidate already represented by the picks: keep it and flag it (`dependent` in its step), or skip it (listed in `skipped`). */
export type DependentPicks = 'keep' | 'skip';

/** `'cosine'`: vectors need not be unit norm (they are used through their direction); `'require_unit'`: a vector whose norm differs from 1 by more than 1e-3 is an error. */
export type Normalization = 'cosine' | 'require_unit';

/** An unusable candidate row (non-finite, zero or out-of-range norm): `'reject'` the call, or `'exclude'` the row (listed in `excluded`). */
export type InvalidCandidates = 'reject' | 'exclude';

/** How the candidates are stored for the passes over them: f32 as given; f16 or bf16 (half the bytes; the selection on the rounded values); int8 (the certified int8 pursuit: the f32 pursuit's selection, bit for bit). */
export type Storage = 'f32' | 'f16' | 'bf16' | 'int8';

/**
 * Options of select(); every field is optional, and an option that does not
 * apply to the method is an error (code 'option'), not ignored. Keys may
 * also be written in snake_case (`mmr_lambda`) at run time; the
 * declarations use camelCase. One option given in two spellings
 * (`mmr_lambda` and `mmrLambda`) is an error naming both, and an unknown
 * key's error lists the options in camelCase.
 */
export interface SelectOptions {
  /** The selector (default `'recommended'`). */
  method?: Method;
  /** `pursuit`, `centroid`: γ in (0, 1], the weight of the reconstruction against relevance (default 1 for pursuit, 0.5 for centroid). */
  gamma?: number;
  /** `pursuit`: the ridge λ ≥ 0 of the refit (Eq. 6; default 1e-10); `Infinity` is centroid pursuit. */
  ridge?: number;
  /** `mmr`: λ_mmr in [0, 1], relevance against diversity (default 0.5; 1 is top-K). */
  mmrLambda?: number;
  /**
   * The retriever's scores, one per candidate (P finite values, any scale
   * or sign). Used by rank unless `rawRelevance` is set: the candidate with
   * the r-th largest score gets the pool's r-th largest query cosine as its
   * relevance, so γ means the same whatever the retriever's units (equal
   * scores get equal relevance). Default: relevance = the query cosine.
   * Integer typed arrays (up to 32 bits) are read as their values.
   */
  relevance?: Float32Array | Float64Array | ArrayLike<number> | null;
  /** Every method but `recommended`: use `relevance` as given instead of by rank (default false; needs `relevance`). */
  rawRelevance?: boolean;
  /** The candidates are in the retriever's order, row 0 ranked first (default false; excludes `relevance`). */
  poolOrder?: boolean;
  /**
   * Each candidate's cost, e.g. its token count (P finite values ≥ 0), for
   * `costBudget`: a prompt is budgeted in tokens, not in memories. Needs
   * `costBudget`, and the reverse. Integer typed arrays (up to 32 bits,
   * e.g. an Int32Array of token counts) are read as their values.
   */
  costs?: Float32Array | Float64Array | ArrayLike<number> | null;
  /**
   * Every method: the most the picks may cost in total (≥ 0, in the units
   * of `costs`). The method picks as without costs, except that a
   * candidate that no longer fits (the picks' costs plus its own exceed
   * the budget) is skipped; the selection stops when nothing fits
   * (`stopReason: 'cost_budget'`), and k still caps the picks (pass a large
   * k to let the cost budget decide). Default: none, k alone.
   */
  costBudget?: number;
  /** `pursuit`, `centroid`: the paper's adaptive stopping (Eq. 7: τ = 1e-5, patience 2); may pick fewer than k (default false). */
  adaptive?: boolean;
  /** `pursuit` with a finite ridge: once the Frank–Wolfe gap certifies the picks optimal for the whole pool (default `'continue'`). */
  atPoolOptimum?: AtPoolOptimum;
  /** `pursuit` with a finite ridge: the Frank–Wolfe gap that counts as the pool optimum (≥ 0; default 1e-12). */
  optimumTolerance?: number;
  /** `pursuit` with a finite ridge: a candidate already represented by the picks (default `'keep'`). */
  dependentPicks?: DependentPicks;
  /** How vectors are normalized (default `'cosine'`). */
  normalization?: Normalization;
  /** What an unusable candidate row does (default `'reject'`). */
  invalid?: InvalidCandidates;
  /** How the candidates are stored for the passes (default `'f32'`). */
  storage?: Storage;
}

/** How the refit of one pursuit step ended; every status leaves the weights on the simplex, only `'optimal'` guarantees the minimizer. */
export type RefitStatus = 'optimal' | 'iteration_cap' | 'blocked' | 'numerical_failure';

/** The record of one pick (the library's step fields in camelCase). For top-K and MMR only `index` and `score` are computed; the other fields are 0, false or `'optimal'`. */
export interface Step {
  /** Pool index (candidate row) of this pick. */
  index: number;
  /**
   * Its score when picked: U = ρ − γ G_{i,S} α (Eq. 9; the residual
   * alignment m·r in paper mode) for the pursuit, the relevance for top-K,
   * the MMR score for MMR; ρ for a pick made by `atPoolOptimum: 'fill'`.
   */
  score: number;
  /** L_t = ‖q − Σ α_j m_j‖² after the refit, in cosine units (L_0 = 1). */
  residualSq: number;
  /** Δ_t = (L_{t−1} − L_t) / max(L_{t−1}, ε), the relative improvement of Eq. 7. */
  improvement: number;
  /**
   * The Frank–Wolfe gap g_S after the refit, a certificate
   * 0 ≤ J(α) − F* ≤ g_S (0 at the pool optimum); for centroid pursuit a
   * diagnostic without that guarantee, possibly negative.
   */
  fwGap: number;
  /** ν_S, the common value of U_j − γκα_j on the refit's free set (for centroid pursuit the mean U_j). */
  nu: number;
  /** Size of the free set {j ∈ S : α_j > 0} after the refit. */
  freeSize: number;
  /** Active-set iterations of this refit (0 for the closed-form paths). */
  solverIterations: number;
  /** Whether this pick was made by relevance fill after the pool optimum. */
  filled: boolean;
  /** Whether, at pick time, this memory was already represented by the picks (an exact duplicate, or in the affine hull of the weighted picks); it usually keeps weight 0. */
  dependent: boolean;
  /** How this step's refit ended. */
  refit: RefitStatus;
  /** Candidates whose score the int8 pursuit (`storage: 'int8'`) computed exactly to certify this pick; 0 otherwise. */
  verified: number;
}

/** Why a selection ended. */
export type StopReason = 'budget' | 'adaptive' | 'pool_exhausted' | 'pool_optimum' | 'cost_budget';

/** The result of select(). */
export interface Selection {
  /** Pool indices (candidate rows) in pick order; min(k, P) of them unless stopped early. */
  picks: Uint32Array;
  /** Simplex weights aligned with `picks` (sum 1) for the pursuit methods; empty for `'topk'` and `'mmr'`. */
  weights: Float64Array;
  /** One record per pick. */
  steps: Step[];
  /** Why the selection ended. */
  stopReason: StopReason;
  /** Candidate rows excluded as unusable, ascending (only with `invalid: 'exclude'`; never picked). */
  excluded: Uint32Array;
  /** Candidates skipped as already represented by the picks, ascending (`dependentPicks: 'skip'`, and the default `recommended`, which takes near-copies only when nothing else is left and never takes exact copies, bit-identical rows: it may then return fewer than k picks, with stopReason `'pool_exhausted'`). */
  skipped: Uint32Array;
}

/**
 * What failed: `'input'` (the data), `'option'` (the specification),
 * `'capacity'` (memory) — the Rust library's error kinds — or
 * `'argument'` (a call the wrapper rejects: wrong types, a detached
 * buffer, a freed Selector, no init()).
 */
export type ErrorCode = 'input' | 'option' | 'capacity' | 'argument';

/**
 * Every error the package throws. `message` names the argument, index or
 * value at fault (the library's message word for word for its own
 * errors); `code` says what failed (see ErrorCode).
 */
export class MemPursuitError extends Error {
  readonly name: 'MemPursuitError';
  readonly code: ErrorCode;
  /** The same as `code`, under Python's name (`MemPursuitError.kind`). */
  readonly kind: ErrorCode;
  /** prepareDocuments: the document at fault (its index in the array given, its id) and the argument (`embedding`, `score`, `score_kind`, `cost`, `query`); a Store: the bad row (`index`, argument `rows`) or the id out of range (`index` its position in the ids, `id` the id as text, argument `ids`); null otherwise. */
  readonly index: number | null;
  readonly id: string | number | null;
  readonly argument: string | null;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; index?: number | null; id?: string | number | null; argument?: string | null });
}

/** One document as a store returned it (the Rust document layer, docs/DOCUMENTS.md, 2026-12-05). */
export interface DocumentSpec {
  /** The store's id; without one, the document is known by its position. Later documents with an id already seen are duplicates: skipped, reported. */
  id?: string | number | null;
  /** d numbers, or pgvector's text form '[0.1,0.2,...]'; missing: an `input` error naming the document. */
  embedding?: ArrayLike<number> | string | null;
  /** The store's score, read as scoreKind says. */
  score?: number | null;
  /** 'similarity' (higher is better: used as the relevance), 'distance' (lower is better: never used as relevance; the cosine with the query is), 'none' (default). */
  scoreKind?: 'similarity' | 'distance' | 'none';
  /** The document's cost (e.g. tokens), finite and ≥ 0; all documents or none. */
  cost?: number | null;
}

/** What prepareDocuments returns: the same keys as Python's `prepare_documents`. */
export interface PreparedDocuments {
  /** Indices (into the documents given) of those kept, in order. */
  kept: number[];
  /** [index, firstIndex] of each later document with an id already seen. */
  duplicates: Array<[number, number]>;
  /** The kept documents' embeddings, one row of d f32 values each. */
  candidates: Float32Array[];
  /** The kept documents' relevance (higher is better). */
  relevance: number[];
  /** 'score' (the similarity scores as given) or 'cosine' (with the query). */
  relevance_source: 'score' | 'cosine';
  /** The kept documents' costs, or null when no document has one. */
  costs: number[] | null;
}

/**
 * Prepares documents for a selector call by the Rust document layer: duplicate ids
 * (first kept), score orientation, missing and string embeddings, costs. Throws a
 * MemPursuitError with kind, index, id and argument (kinds 'input' and 'option').
 */
export function prepareDocuments(query: ArrayLike<number>, documents: DocumentSpec[]): PreparedDocuments;

/** The record each selected document carries under METADATA_KEY (the same keys in Python). */
export interface DocumentRecord {
  /** 0 for the first pick. */
  rank: number;
  /** The pick's simplex weight; null for top-K and MMR. */
  weight: number | null;
  /** The step's score at pick time. */
  score: number;
  /** The squared residual of the query after the pick; null without weights. */
  residual_sq: number | null;
}

/** What selectDocuments returns: the same keys as Python's `select_documents`. */
export interface DocumentSelection {
  /** The picks in pick order: the document's index in the array given and its metadata. */
  picks: Array<{ index: number; metadata: { mempursuit: DocumentRecord } }>;
  /** [index, firstIndex] of each document skipped as a repeat of an earlier id. */
  duplicates: Array<[number, number]>;
  relevance_source: 'score' | 'cosine';
  stop_reason: StopReason;
}

/**
 * Selects up to k documents by the Rust document layer (docs/DOCUMENTS.md):
 * prepareDocuments' rules, then select() with `options`. Throws a
 * MemPursuitError with the layer's kind, index, id and argument.
 */
export function selectDocuments(query: ArrayLike<number>, documents: DocumentSpec[], k: number, options?: SelectOptions): DocumentSelection;

/**
 * An integration's settings checked once by the layer: the options, whether
 * scores are passed (true, false, null: it depends on the documents),
 * whether a cost function is given, whether the cost budget may come later.
 */
export function checkDocumentSettings(options: SelectOptions | null | undefined, flags?: { scores?: boolean | null; cost?: boolean; budgetLater?: boolean }): void;

/** The query embedding checked by the layer (finite, not all zeros); returns its length d. */
export function checkQuery(query: ArrayLike<number>): number;

/** The keys of select()'s options (snake_case). */
export function optionKeys(): Set<string>;

/** 'mempursuit': the metadata key of the record (DocumentRecord). */
export const METADATA_KEY: 'mempursuit';
/** The record's fields, in order. */
export const METADATA_FIELDS: readonly ['rank', 'weight', 'score', 'residual_sq'];

/**
 * The query embedding: d numbers. An integer typed array (a Uint8Array, an
 * Int32Array, ...) is refused at run time with an `argument` error: it is
 * usually the bytes of float values (view them as a Float32Array).
 */
export type Vector = Float32Array | Float64Array | ArrayLike<number>;

/** Candidate embeddings: a flat row-major P × d array, or P rows of d numbers (integer typed arrays are refused, as for {@link Vector}). */
export type Candidates = Float32Array | Float64Array | ArrayLike<number> | ArrayLike<Vector>;

/**
 * A reusable selector: its scratch and its input buffers stay in wasm
 * memory and grow to the largest call seen. Requires init().
 */
export class Selector {
  constructor();
  /**
   * Selects up to `k` memories for `query` (d values) from `candidates`
   * (P × d; d = query.length) with the selector `options` describe (the
   * recommended setting by default). Throws MemPursuitError.
   */
  select(query: Vector, candidates: Candidates, k: number, options?: SelectOptions): Selection;
  /** Releases the wasm memory of this selector. */
  free(): void;
}

/** The options of a Store: the storage every call reads (default 'f32'). */
export interface StoreOptions {
  storage?: Storage;
}

/** Ids a store gave, start inclusive, end exclusive. */
export interface IdRange {
  start: number;
  end: number;
}

/**
 * Memory embeddings kept in wasm memory across queries (the Rust crate's
 * `Store`): N rows of d values, each validated once when it enters, with
 * the storage every call reads. Requires init(); call free() when done.
 * A store lives in this module instance's memory: it cannot be sent to a
 * Worker (structuredClone / postMessage); build one there from the rows.
 */
export class Store {
  /**
   * `rows`: N × d values (flat, row-major, or N rows of d), `dim` = d.
   * Throws MemPursuitError: a bad row has kind 'input', `index` its row,
   * `argument` 'rows'; an unknown storage kind 'option'.
   */
  constructor(rows: Candidates, dim: number, options?: StoreOptions);
  /** The number of rows N. */
  readonly length: number;
  /** The embedding dimension d. */
  readonly dim: number;
  /** The storage every call reads. */
  readonly storage: Storage;
  /** Adds rows (M × d) at the end, validated; returns their ids. Nothing is added on an error. */
  append(rows: Candidates): IdRange;
  /**
   * The selection of `select(query, rows[ids], k, options)` with the
   * store's storage: `picks` are positions in `ids` (store ids, 0 ≤ id <
   * N; any integer typed array, BigInt64Array / BigUint64Array and
   * arrays of BigInts too). An id out of range or negative throws
   * MemPursuitError kind 'input' with `index` (its position), `id` (the id
   * as text), `argument` 'ids'.
   */
  select(
    query: Vector,
    ids: Uint32Array | Int32Array | Uint16Array | Int16Array | Uint8Array | Int8Array | Float64Array | Float32Array | BigInt64Array | BigUint64Array | ArrayLike<number | bigint>,
    k: number,
    options?: SelectOptions,
  ): Selection;
  /** Releases the wasm memory of this store. */
  free(): void;
  /** `Store(length=N, dim=d, storage='f32')` (`Store(freed, ...)` after free()); also what console.log shows. */
  toString(): string;
  /** `{ length, dim, storage }` (length null once freed): a description, not the rows. */
  toJSON(): { length: number | null; dim: number; storage: Storage };
  readonly [Symbol.toStringTag]: 'Store';
}

/** Selector.select() on a shared selector. Requires init(). */
export function select(query: Vector, candidates: Candidates, k: number, options?: SelectOptions): Selection;
