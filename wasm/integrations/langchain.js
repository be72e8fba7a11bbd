// mempursuit/langchain: MemPursuit as a LangChain.js document compressor
// (BaseDocumentCompressor from @langchain/core; for a
// ContextualCompressionRetriever or on its own). The documents' vectors come
// from their metadata, or from the vector store that holds them (an
// InMemoryVectorStore's memoryVectors, by document id), and only the
// documents with neither are embedded with the given Embeddings; the query
// is embedded once. An adapter over the Rust document layer (common.js):
// every rule is the layer's. The documents come back in pick order with
// `metadata.mempursuit = { rank, weight, score, residual_sq }`. Types:
// langchain.d.ts.

import { BaseDocumentCompressor } from '@langchain/core/retrievers/document_compressors';
import { Document } from '@langchain/core/documents';
import { init } from '../mempursuit.js';
import { checkCostFunction, checkSettings, costsOf, idOf, inputError, optionError, select, selectOptions, shown } from './common.js';

const OWN = ['k', 'embeddings', 'vectorStore', 'embeddingKey', 'scoreKey', 'cost', 'onDuplicates'];
const OWNER = 'MemPursuitCompressor';

const isVector = (v) => v != null && typeof v === 'object' && typeof v.length === 'number';

/** The vector a store of memory vectors holds for a document id (never looked up by text: a document without an id gets none). */
function storeLookup(store) {
  const entries = Array.isArray(store?.memoryVectors) ? store.memoryVectors : [];
  const byId = new Map();
  for (const e of entries) if (e?.id != null && !byId.has(String(e.id))) byId.set(String(e.id), e.embedding);
  return (id) => (id == null ? undefined : byId.get(id));
}

export class MemPursuitCompressor extends BaseDocumentCompressor {
  /**
   * Fields: `k` (how many documents to keep, default 4), `embeddings` (an
   * Embeddings for the query, and for documents whose vector is nowhere
   * else; default: the vector store's), `vectorStore` (a store whose
   * memoryVectors hold the documents' vectors, by id), `embeddingKey` (the
   * metadata key of a document's vector, default 'embedding'), `scoreKey`
   * (a metadata key with the retriever's score, a similarity: for a
   * distance leave it out, the vectors' cosine is used), `cost(doc)`
   * (each document's cost, e.g. its token count, with the `costBudget`
   * option), `onDuplicates(pairs)` (called with the `[index, firstIndex]`
   * of documents skipped as repeats of an earlier id), and any option of
   * `select()` (the library's defaults for the rest).
   */
  constructor(fields = {}) {
    super();
    if (fields === null || typeof fields !== 'object') throw optionError('MemPursuitCompressor(fields): fields must be an object', 'fields');
    const { k = 4, embeddings, vectorStore, embeddingKey = 'embedding', scoreKey, cost, onDuplicates } = fields;
    if (!Number.isSafeInteger(k) || k < 0) throw optionError(`${OWNER}: k must be a non-negative integer, got ${shown(k)}`, 'k');
    if (typeof embeddingKey !== 'string') throw optionError(`${OWNER}: embeddingKey must be a string, got ${shown(embeddingKey)}`, 'embeddingKey');
    if (scoreKey !== undefined && typeof scoreKey !== 'string') throw optionError(`${OWNER}: scoreKey must be a string, got ${shown(scoreKey)}`, 'scoreKey');
    if (onDuplicates !== undefined && typeof onDuplicates !== 'function') throw optionError(`${OWNER}: onDuplicates must be a function (pairs) => void`, 'onDuplicates');
    checkCostFunction(OWNER, cost);
    this.k = k;
    this.embeddings = embeddings ?? vectorStore?.embeddings;
    this.vectorStore = vectorStore;
    this.embeddingKey = embeddingKey;
    this.scoreKey = scoreKey;
    this.onDuplicates = onDuplicates;
    this.options = selectOptions(fields, OWN);
    // The settings now, by the layer.
    checkSettings(OWNER, this.options, { scores: scoreKey !== undefined, cost: cost !== undefined }, OWN);
    this.cost = cost;
  }

  /** The `k` documents MemPursuit selects for `query`, in pick order, with `metadata.mempursuit = { rank, weight, score, residual_sq }`. */
  async compressDocuments(documents, query) {
    await init();
    if (!Array.isArray(documents)) throw inputError('MemPursuitCompressor.compressDocuments: documents must be an array', { argument: 'documents' });
    if (documents.length === 0) return [];
    const costs = costsOf(OWNER, this.cost, documents); // before any embedding call
    const lookup = storeLookup(this.vectorStore);
    const vectors = documents.map((doc) => {
      const v = doc?.metadata?.[this.embeddingKey];
      return isVector(v) || typeof v === 'string' ? v : lookup(idOf(doc));
    });
    const missing = vectors.flatMap((v, i) => (v == null ? [i] : []));
    if (missing.length > 0 && this.embeddings) {
      const embedded = await this.embeddings.embedDocuments(missing.map((i) => documents[i].pageContent));
      missing.forEach((i, j) => (vectors[i] = embedded[j])); // by position
    }
    if (!this.embeddings) throw optionError(`${OWNER}: no embeddings to embed the query: pass embeddings, or a vectorStore with embeddings`, 'embeddings');
    const q = await this.embeddings.embedQuery(query);
    const docs = documents.map((doc, i) => ({
      id: idOf(doc),
      embedding: vectors[i],
      score: this.scoreKey === undefined ? undefined : doc?.metadata?.[this.scoreKey],
      scoreKind: 'similarity', // a retriever's score: higher is better
      cost: costs[i],
    }));
    const hint = `it has no metadata '${this.embeddingKey}', the vector store holds none for its id, and no embeddings were given to embed it`;
    const r = select(OWNER, q, docs, this.k, this.options, hint);
    if (r.duplicates.length > 0) this.onDuplicates?.(r.duplicates);
    return r.picks.map(({ index, metadata }) => {
      const doc = documents[index];
      return new Document({ pageContent: doc.pageContent, metadata: { ...doc.metadata, ...metadata }, id: doc.id });
    });
  }
}
