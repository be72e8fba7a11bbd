// mempursuit/langchain: MemPursuit as a LangChain.js document compressor
// (BaseDocumentCompressor from @langchain/core; for a
// ContextualCompressionRetriever or on its own). The documents' vectors come
// from their metadata, or from the vector store that holds them (an
// InMemoryVectorStore's memoryVectors), and only the documents with neither
// are embedded with the given Embeddings; the query is embedded once. The
// documents come back in pick order with their weight. Types:
// langchain.d.ts.

import { BaseDocumentCompressor } from '@langchain/core/retrievers/document_compressors';
import { Document } from '@langchain/core/documents';
import { init } from '../mempursuit.js';
import { argumentError, checkCost, checkSettings, checkVectors, costsOf, idOf, isVector, scoresOf, selectDocuments, selectOptions, shown } from './common.js';

const OWN = ['k', 'embeddings', 'vectorStore', 'embeddingKey', 'scoreKey', 'cost'];
const OWNER = 'MemPursuitCompressor';

/** The vector a store of memory vectors holds for `doc`: by id, else by text (and metadata). */
function storeLookup(store) {
  const entries = Array.isArray(store?.memoryVectors) ? store.memoryVectors : null;
  if (!entries) return () => undefined;
  const byId = new Map();
  const byContent = new Map();
  for (const e of entries) {
    if (e?.id != null) byId.set(e.id, e);
    const list = byContent.get(e?.content) ?? [];
    list.push(e);
    byContent.set(e?.content, list);
  }
  return (doc) => {
    if (doc.id != null && byId.has(doc.id)) return byId.get(doc.id).embedding;
    const list = byContent.get(doc.pageContent);
    if (!list) return undefined;
    if (list.length === 1) return list[0].embedding;
    const same = list.find((e) => e.metadata === doc.metadata) ?? list.find((e) => JSON.stringify(e.metadata) === JSON.stringify(doc.metadata));
    return (same ?? list[0]).embedding;
  };
}

export class MemPursuitCompressor extends BaseDocumentCompressor {
  /**
   * Fields: `k` (how many documents to keep, default 4), `embeddings` (an
   * Embeddings for the query, and for documents whose vector is nowhere
   * else; default: the vector store's), `vectorStore` (a store whose
   * memoryVectors hold the documents' vectors), `embeddingKey` (the
   * metadata key of a document's vector, default 'embedding'), `scoreKey`
   * (a metadata key with the retriever's score, used by rank), `cost(doc)`
   * (each document's cost, e.g. its token count, with the `costBudget`
   * option: the most the kept documents may cost in total), and any option
   * of `select()` (the recommended setting by default) but `costs`.
   */
  constructor(fields = {}) {
    super();
    if (fields === null || typeof fields !== 'object') throw argumentError('MemPursuitCompressor(fields): fields must be an object');
    const { k = 4, embeddings, vectorStore, embeddingKey = 'embedding', scoreKey, cost } = fields;
    if (!Number.isSafeInteger(k) || k < 0) throw argumentError(`${OWNER}: k must be a non-negative integer, got ${shown(k)}`);
    if (typeof embeddingKey !== 'string') throw argumentError(`${OWNER}: embeddingKey must be a string, got ${shown(embeddingKey)}`);
    if (scoreKey !== undefined && typeof scoreKey !== 'string') throw argumentError(`${OWNER}: scoreKey must be a string, got ${shown(scoreKey)}`);
    this.k = k;
    this.embeddings = embeddings ?? vectorStore?.embeddings;
    this.vectorStore = vectorStore;
    this.embeddingKey = embeddingKey;
    this.scoreKey = scoreKey;
    this.options = selectOptions(fields, OWN, OWNER, 'scoreKey');
    checkCost(OWNER, cost, this.options);
    // The select() options now, as the library checks them on each call.
    checkSettings(OWNER, this.options, { relevance: scoreKey !== undefined, costs: cost !== undefined }, OWN);
    this.cost = cost;
  }

  /** The `k` documents MemPursuit selects for `query`, in pick order, with `metadata.mempursuit = { rank, weight, score }`. */
  async compressDocuments(documents, query) {
    await init();
    if (!Array.isArray(documents)) throw argumentError('MemPursuitCompressor.compressDocuments: documents must be an array');
    if (documents.length === 0) return [];
    // Document i in messages: its position, and its id when it has one.
    const name = (i) => `document ${i}${idOf(documents[i])}`;
    // Before any embedding call.
    const costs = costsOf(this.cost, documents, (i) => `${OWNER}: ${name(i)}`);
    const lookup = storeLookup(this.vectorStore);
    const vectors = documents.map((doc) => {
      const v = doc?.metadata?.[this.embeddingKey];
      return isVector(v) ? v : lookup(doc ?? {});
    });
    const missing = vectors.flatMap((v, i) => (isVector(v) ? [] : [i]));
    if (missing.length > 0) {
      if (!this.embeddings) {
        throw argumentError(
          `${OWNER}: ${name(missing[0])} has no vector (metadata '${this.embeddingKey}' or the vector store) and no embeddings were given to embed it`,
        );
      }
      const embedded = await this.embeddings.embedDocuments(missing.map((i) => documents[i].pageContent));
      missing.forEach((i, j) => (vectors[i] = embedded[j]));
    }
    if (!this.embeddings) throw argumentError(`${OWNER}: no embeddings to embed the query: pass embeddings, or a vectorStore with embeddings`);
    const q = await this.embeddings.embedQuery(query);
    if (!isVector(q)) throw argumentError(`${OWNER}: embeddings.embedQuery() returned ${shown(q)}, not an array of numbers`);
    checkVectors(OWNER, vectors, q.length, name);
    const relevance =
      this.scoreKey === undefined ? undefined : scoresOf(OWNER, documents, (doc) => doc?.metadata?.[this.scoreKey], `metadata '${this.scoreKey}' (scoreKey)`, name);
    const r = selectDocuments(OWNER, q, vectors, this.k, { ...this.options, ...(relevance ? { relevance } : {}), ...(costs ? { costs } : {}) }, name);
    return Array.from(r.picks, (i, t) => {
      const doc = documents[i];
      const mempursuit = { rank: t, weight: r.weights.length > 0 ? r.weights[t] : null, score: r.steps[t].score };
      return new Document({ pageContent: doc.pageContent, metadata: { ...doc.metadata, mempursuit }, id: doc.id });
    });
  }
}
