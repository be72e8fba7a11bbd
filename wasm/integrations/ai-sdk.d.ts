// Type declarations of `mempursuit/ai-sdk` (ai-sdk.js): MemPursuit as a
// Vercel AI SDK reranking model. Structurally an AI SDK reranking model of
// specification v3 (`ai` 6 and 7 accept it); this file imports nothing from
// `ai`, so the package keeps no dependency on it.

import type { SelectOptions, StopReason } from '../mempursuit.js';

/** Settings of mempursuitReranker(): the select() options (the recommended setting by default) and where the vectors come from. */
export type MempursuitRerankerSettings = Omit<SelectOptions, 'relevance' | 'costs'> & {
  /** The field of each document object that holds its embedding (an array of d numbers, or a string of one as JSON or pgvector writes it, '[0.1,0.2,...]'; default 'embedding'). */
  embeddingField?: string;
  /** A field of each document object with the retriever's score, passed to select() as relevance (used by rank unless `rawRelevance`). */
  scoreField?: string;
  /** Embeds the query when rerank() gives no `providerOptions.mempursuit.queryEmbedding`. */
  embedQuery?: (query: string) => PromiseLike<ArrayLike<number>>;
  /** An AI SDK embedding model (e.g. `openai.embedding('text-embedding-3-small')`): embeds the query when no other embedding is given, and the documents only when they are strings, in calls of at most its `maxEmbeddingsPerCall` values (as `embedMany` splits them; matched by position). */
  embeddingModel?: {
    maxEmbeddingsPerCall?: number | PromiseLike<number | undefined>;
    doEmbed(options: { values: string[]; abortSignal?: AbortSignal }): PromiseLike<{ embeddings: Array<ArrayLike<number>> }>;
  };
  /**
   * Each document's cost (e.g. its token count: a finite number ≥ 0), called
   * once per document in input order with the document as rerank() passes it
   * (the object, or the string for text documents), to build select()'s
   * `costs`. Needs `costBudget` (here or in `providerOptions.mempursuit`),
   * and the reverse. A pick that no longer fits the budget is skipped;
   * `topN` still caps the count. A cost function that throws or returns a
   * negative, NaN or non-number value rejects with a MemPursuitError naming
   * the document (position and id).
   */
  cost?: (doc: any) => number;
};

/** What a reranking call returns: the picks in pick order. */
export type MempursuitRerankResult = {
  /**
   * The selected documents in pick order: `relevanceScore` is the pick's
   * weight in the reconstruction of the query (for `topk` and `mmr`, which
   * have none, the step's score). For `pursuit`, `centroid`, `topk` and
   * `mmr` (without `adaptive`) every prefix is the selection for a smaller
   * topN; not for the default, `recommended`, which sets its γ from topN:
   * its first picks for topN = 3 may differ from those for topN = 8, so
   * rerank again with the topN you need.
   */
  ranking: Array<{ index: number; relevanceScore: number }>;
  /** `mempursuit`: the stop reason, the weights and the step scores, in pick order, and the [index, firstIndex] of documents skipped as repeats of an earlier id. */
  providerMetadata: { mempursuit: { stopReason: StopReason; weights: number[]; scores: number[]; duplicates: Array<[number, number]> } };
};

/** A reranking model for `rerank()` from `ai`. */
export type MempursuitRerankingModel = {
  readonly specificationVersion: 'v3';
  readonly provider: 'mempursuit';
  /** The `method` setting, or 'default' (the recommended setting). */
  readonly modelId: string;
  /**
   * Selects `topN` documents (default: all, in pick order). Documents are
   * objects with their embedding, or strings with an `embeddingModel`. The
   * query embedding: `providerOptions.mempursuit.queryEmbedding`, else
   * `embedQuery`, else `embeddingModel`. Other keys of
   * `providerOptions.mempursuit` are select() options for this call
   * (`costBudget` among them; not `costs`).
   * Rejects with a MemPursuitError: code 'argument' for a document without
   * an embedding or of another dimension than the query (naming the
   * document: its position and id, or the query when no document has its
   * dimension), a bad `topN` or cost; the library's codes ('input',
   * 'option') for a non-finite value (naming the document or the query
   * embedding) and for per-call options, its message prefixed by
   * `mempursuit reranker: `.
   */
  doRerank(options: {
    /** The documents as rerank() passes them: objects carrying their embedding, or strings. */
    documents: { type: 'text'; values: string[] } | { type: 'object'; values: object[] };
    query: string;
    topN?: number;
    /** Checked before and after every await (the library's setup, each embedding call, the query embedding): an abort rejects with its reason. */
    abortSignal?: AbortSignal;
    /** `mempursuit`: `queryEmbedding` (d numbers) and select() options for this call. */
    providerOptions?: { [provider: string]: object };
    headers?: Record<string, string | undefined>;
  }): PromiseLike<MempursuitRerankResult>;
};

/**
 * A MemPursuit reranking model for the AI SDK's `rerank()`. Throws a
 * MemPursuitError for bad settings, as select() checks them (code 'option':
 * an unknown name, listed with the valid ones in camelCase, a bad method
 * name, a value out of range, an option that does not apply to the method,
 * one option in two spellings; 'argument': a value of the wrong type,
 * `costBudget` without `cost`), its message prefixed by
 * `mempursuitReranker: `. The check needs the WebAssembly module: the
 * constructor loads it synchronously in Node.js ≥ 20.16 when no init() has
 * run; elsewhere (browsers, older Node.js) it checks after `await init()`,
 * and before it leaves the check to the first request. What depends on the
 * documents (scores with `scoreField`, which text documents lack) and
 * per-call options are checked at the request.
 */
export function mempursuitReranker(settings?: MempursuitRerankerSettings): MempursuitRerankingModel;
