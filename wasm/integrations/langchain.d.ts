// Type declarations of `mempursuit/langchain` (langchain.js): MemPursuit as
// a LangChain.js document compressor. Needs @langchain/core (>= 0.3).

import { BaseDocumentCompressor } from '@langchain/core/retrievers/document_compressors';
import type { DocumentInterface } from '@langchain/core/documents';
import type { EmbeddingsInterface } from '@langchain/core/embeddings';
import type { SelectOptions } from '../mempursuit.js';

/** A vector store whose vectors the compressor can read (LangChain's InMemoryVectorStore and its testing FakeVectorStore). */
export interface MemoryVectorStoreLike {
  embeddings?: EmbeddingsInterface;
  memoryVectors?: Array<{ content: string; embedding: ArrayLike<number>; metadata?: Record<string, unknown>; id?: string }>;
}

/** Fields of a MemPursuitCompressor: the select() options (the recommended setting by default) and where the vectors come from. */
export type MemPursuitCompressorFields = Omit<SelectOptions, 'relevance' | 'costs'> & {
  /** How many documents to keep (default 4). */
  k?: number;
  /** Embeds the query, and the documents whose vector is in neither their metadata nor the store (default: the store's). */
  embeddings?: EmbeddingsInterface;
  /** The store that holds the documents' vectors, matched by id (never by text: a document without an id is embedded, or carries its vector). */
  vectorStore?: MemoryVectorStoreLike;
  /** The metadata key of a document's vector (default 'embedding'). */
  embeddingKey?: string;
  /** A metadata key with the retriever's score, passed to select() as relevance (used by rank): a similarity, higher is better; for a distance leave it out (the vectors' cosine is used). */
  scoreKey?: string;
  /**
   * Each document's cost (e.g. its token count: a finite number ≥ 0), called
   * once per document in input order, before any embedding call, to build
   * select()'s `costs`. Needs `costBudget` (the most the kept documents may
   * cost in total), and the reverse. A pick that no longer fits is skipped;
   * `k` still caps the count. A cost function that throws or returns a
   * negative, NaN or non-number value rejects with a MemPursuitError naming
   * the document (position and id).
   */
  cost?: (doc: DocumentInterface) => number;
  /** Called with the [index, firstIndex] of documents skipped as repeats of an earlier id (the first is kept). */
  onDuplicates?: (pairs: Array<[number, number]>) => void;
};

/** What the compressor adds to each returned document's metadata. */
export interface MemPursuitMetadata {
  /** 0-based position in pick order. */
  rank: number;
  /** The pick's weight in the reconstruction of the query (null for topk and mmr). */
  weight: number | null;
  /** The step's score. */
  score: number;
  /** The squared residual of the query after the pick (null for topk and mmr). */
  residual_sq: number | null;
}

/**
 * MemPursuit as a LangChain.js document compressor: keeps `k` documents in
 * pick order, each with `metadata.mempursuit` (MemPursuitMetadata). Vectors
 * present in the metadata or the store are never re-embedded; the query is
 * embedded once. compressDocuments() rejects with a MemPursuitError naming
 * the document (position and id) for a document without a vector (and no
 * embeddings), of another dimension than the query (or naming the query
 * when no document has its dimension), with a non-finite value or score,
 * or without a usable cost. The constructor throws one for bad fields: `k`
 * not an integer ≥ 0, `cost` without `costBudget` or the reverse, and the
 * select() options as select() checks them (an unknown name, listed with
 * the valid ones in camelCase, a bad method name, a value out of range, an
 * option that does not apply, one option in two spellings), its message
 * prefixed by `MemPursuitCompressor: `. That check needs the WebAssembly
 * module: the constructor loads it synchronously in Node.js ≥ 20.16 when no
 * init() has run; elsewhere it checks after `await init()`, and before it
 * leaves the check to compressDocuments().
 */
export class MemPursuitCompressor extends BaseDocumentCompressor {
  constructor(fields?: MemPursuitCompressorFields);
  k: number;
  compressDocuments(documents: DocumentInterface[], query: string): Promise<DocumentInterface[]>;
}
