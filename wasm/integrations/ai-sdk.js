// mempursuit/ai-sdk: MemPursuit as a Vercel AI SDK reranking model, for
// `rerank({ model, documents, query, topN })` from the `ai` package. The
// documents are objects that carry their embedding (no model is called for
// them); the query embedding comes from `providerOptions.mempursuit
// .queryEmbedding`, or from `embedQuery` / `embeddingModel` given here.
// The ranking is the selection in pick order. An adapter over the Rust
// document layer (common.js): every rule is the layer's. Types: ai-sdk.d.ts.

import { init } from '../mempursuit.js';
import { checkCostFunction, checkSettings, costsOf, idOf, inputError, optionError, select, selectOptions, shown } from './common.js';

const OWN = ['embeddingField', 'scoreField', 'embedQuery', 'embeddingModel', 'cost'];
const OWNER = 'mempursuit reranker';
const CONSTRUCTOR = 'mempursuitReranker';

/**
 * A reranking model (AI SDK reranking-model specification v3, which `ai`
 * 6 and 7 accept) that selects `topN` documents with MemPursuit. Settings:
 * `embeddingField` (default 'embedding'; an array of numbers, or pgvector's
 * text '[0.1,...]'), `scoreField` (a retriever score on each document, a
 * similarity: higher is better), `embedQuery(query)` or `embeddingModel`
 * (an AI SDK embedding model, used for the query, and for the documents
 * only when they are texts), `cost(doc)` (each document's cost, e.g. its
 * token count, for the `costBudget` option, here or per call), and any
 * option of `select()` (the library's defaults for the rest).
 */
export function mempursuitReranker(settings = {}) {
  if (settings === null || typeof settings !== 'object') throw optionError('mempursuitReranker(settings): settings must be an object', 'settings');
  const { embeddingField = 'embedding', scoreField, embedQuery, embeddingModel, cost } = settings;
  if (typeof embeddingField !== 'string') throw optionError('mempursuitReranker: embeddingField must be a string', 'embeddingField');
  if (scoreField !== undefined && typeof scoreField !== 'string') throw optionError('mempursuitReranker: scoreField must be a string', 'scoreField');
  if (embedQuery !== undefined && typeof embedQuery !== 'function') throw optionError('mempursuitReranker: embedQuery must be a function (query) => embedding', 'embedQuery');
  if (embeddingModel !== undefined && typeof embeddingModel?.doEmbed !== 'function') {
    throw optionError('mempursuitReranker: embeddingModel must be an AI SDK embedding model (with doEmbed)', 'embeddingModel');
  }
  checkCostFunction(CONSTRUCTOR, cost);
  const options = selectOptions(settings, OWN);
  // The settings now, by the layer: the scores depend on the documents
  // (objects with a scoreField, or texts); costBudget may come per call.
  checkSettings(CONSTRUCTOR, options, { scores: scoreField === undefined ? false : null, cost: cost !== undefined, budgetLater: true }, OWN);

  // As `embedMany` of the `ai` package does: the model's maxEmbeddingsPerCall
  // (a number or a promise of one; none or Infinity: no limit) splits the
  // values into calls of at most that many, in order; the abort signal is
  // checked before each call and after it.
  async function embed(values, abortSignal, what) {
    const max = await embeddingModel.maxEmbeddingsPerCall;
    abortSignal?.throwIfAborted();
    const size = max == null || max === Infinity ? Math.max(values.length, 1) : max;
    if (typeof size !== 'number' || !Number.isInteger(size) || size <= 0) {
      throw optionError(`${OWNER}: the embedding model's maxEmbeddingsPerCall must be a positive integer, got ${shown(max)}`, 'embeddingModel');
    }
    const out = [];
    for (let start = 0; start < values.length; start += size) {
      const chunk = values.slice(start, start + size);
      const { embeddings } = await embeddingModel.doEmbed({ values: chunk, abortSignal });
      abortSignal?.throwIfAborted();
      if (!Array.isArray(embeddings) || embeddings.length !== chunk.length) {
        throw inputError(
          `${OWNER}: the embedding model returned ${Array.isArray(embeddings) ? embeddings.length : shown(embeddings)} embeddings for ${chunk.length} ${what}`,
          { argument: 'embedding' },
        );
      }
      // By position: the embedding of values[start + j] is embeddings[j], never looked up by text.
      out.push(...embeddings);
    }
    return out;
  }

  return {
    specificationVersion: 'v3',
    provider: 'mempursuit',
    modelId: typeof options.method === 'string' ? options.method : 'default',

    async doRerank({ documents, query, topN, providerOptions, abortSignal }) {
      abortSignal?.throwIfAborted();
      await init();
      abortSignal?.throwIfAborted();
      const { queryEmbedding, ...perCall } = providerOptions?.mempursuit ?? {};
      const values = documents?.values ?? [];
      // costBudget may come with the settings or per call; the layer checks the pair.
      const merged = { ...options, ...perCall };
      if (topN != null && (typeof topN !== 'number' || !Number.isInteger(topN) || topN < 0)) {
        throw optionError(`${OWNER}: topN must be a non-negative integer, got ${shown(topN)}`, 'topN');
      }
      const costs = costsOf(OWNER, cost, values); // before any model call
      const texts = documents?.type === 'text';
      if (texts && !embeddingModel) {
        throw inputError(
          `${OWNER}: the documents are strings, which carry no embedding: pass objects with an '${embeddingField}' field, or an embeddingModel to embed them`,
          { argument: 'embedding' },
        );
      }
      const vectors = texts ? await embed(values, abortSignal, 'documents') : values.map((doc) => doc?.[embeddingField]);
      let q = queryEmbedding;
      if (q === undefined) {
        if (embedQuery) q = await embedQuery(query);
        else if (embeddingModel) [q] = await embed([query], abortSignal, 'the query');
        else {
          throw inputError(
            `${OWNER}: no query embedding: pass providerOptions: { mempursuit: { queryEmbedding } } to rerank(), or embedQuery / embeddingModel to mempursuitReranker()`,
            { argument: 'query' },
          );
        }
      }
      abortSignal?.throwIfAborted();
      const docs = values.map((doc, i) => ({
        id: texts ? null : idOf(doc),
        embedding: vectors[i],
        score: !texts && scoreField !== undefined ? doc?.[scoreField] : undefined,
        scoreKind: 'similarity', // a retriever's score: higher is better
        cost: costs[i],
      }));
      const r = select(OWNER, q, docs, topN ?? values.length, merged, `give each document an '${embeddingField}' field (an array of numbers)`);
      const records = r.picks.map((p) => Object.values(p.metadata)[0]);
      const weights = records.every((m) => m.weight !== null) ? records.map((m) => m.weight) : [];
      return {
        // Pick order. For pursuit, centroid, topk and mmr (without adaptive)
        // every prefix is the selection for a smaller topN; not for the
        // library's default, whose gamma depends on topN.
        ranking: r.picks.map((p, t) => ({ index: p.index, relevanceScore: records[t].weight ?? records[t].score })),
        providerMetadata: {
          mempursuit: { stopReason: r.stop_reason, weights, scores: records.map((m) => m.score), duplicates: r.duplicates },
        },
      };
    },
  };
}
