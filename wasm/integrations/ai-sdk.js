// mempursuit/ai-sdk: MemPursuit as a Vercel AI SDK reranking model, for
// `rerank({ model, documents, query, topN })` from the `ai` package. The
// documents are objects that carry their embedding (no model is called for
// them); the query embedding comes from `providerOptions.mempursuit
// .queryEmbedding`, or from `embedQuery` / `embeddingModel` given here.
// The ranking is the selection in pick order. Types: ai-sdk.d.ts.

import { init } from '../mempursuit.js';
import { argumentError, checkCost, checkSettings, checkVectors, costsOf, idOf, isVector, scoresOf, selectDocuments, selectOptions, shown } from './common.js';

const OWN = ['embeddingField', 'scoreField', 'embedQuery', 'embeddingModel', 'cost'];
const OWNER = 'mempursuit reranker';
const CONSTRUCTOR = 'mempursuitReranker';

/**
 * A reranking model (AI SDK reranking-model specification v3, which `ai`
 * 6 and 7 accept) that selects `topN` documents with MemPursuit. Settings:
 * `embeddingField` (default 'embedding'), `scoreField` (a retriever score
 * on each document, used by rank), `embedQuery(query)` or `embeddingModel`
 * (an AI SDK embedding model, used for the query, and for the documents
 * only when they are texts), `cost(doc)` (each document's cost, e.g. its
 * token count, for the `costBudget` option, here or per call), and any
 * option of `select()` (the recommended setting by default) but `costs`.
 */
export function mempursuitReranker(settings = {}) {
  if (settings === null || typeof settings !== 'object') throw argumentError('mempursuitReranker(settings): settings must be an object');
  const { embeddingField = 'embedding', scoreField, embedQuery, embeddingModel, cost } = settings;
  if (typeof embeddingField !== 'string') throw argumentError('mempursuitReranker: embeddingField must be a string');
  if (scoreField !== undefined && typeof scoreField !== 'string') throw argumentError('mempursuitReranker: scoreField must be a string');
  if (embedQuery !== undefined && typeof embedQuery !== 'function') throw argumentError('mempursuitReranker: embedQuery must be a function (query) => embedding');
  if (embeddingModel !== undefined && typeof embeddingModel?.doEmbed !== 'function') {
    throw argumentError('mempursuitReranker: embeddingModel must be an AI SDK embedding model (with doEmbed)');
  }
  if (cost !== undefined && typeof cost !== 'function') throw argumentError('mempursuitReranker: cost must be a function (doc) => number, e.g. its token count');
  const options = selectOptions(settings, OWN, CONSTRUCTOR, 'scoreField');
  // The select() options now, as the library checks them on each call: the
  // relevance scores depend on the documents (objects with a scoreField, or
  // texts); costBudget may still come with each request.
  const passesCosts = checkCost(CONSTRUCTOR, cost, options, true);
  checkSettings(CONSTRUCTOR, options, { relevance: scoreField === undefined ? false : null, costs: passesCosts }, OWN);

  async function embed(values, abortSignal) {
    const { embeddings } = await embeddingModel.doEmbed({ values, abortSignal });
    return embeddings;
  }

  return {
    specificationVersion: 'v3',
    provider: 'mempursuit',
    modelId: typeof options.method === 'string' ? options.method : 'default',

    async doRerank({ documents, query, topN, providerOptions, abortSignal }) {
      await init();
      const { queryEmbedding, ...perCall } = providerOptions?.mempursuit ?? {};
      const values = documents?.values ?? [];
      // costBudget may come with the settings or per call; costs only from cost().
      const merged = { ...options, ...selectOptions(perCall, [], `${OWNER} (providerOptions.mempursuit)`, 'scoreField') };
      checkCost(OWNER, cost, merged);
      if (topN != null && (typeof topN !== 'number' || !Number.isInteger(topN) || topN < 0)) {
        throw argumentError(`${OWNER}: topN must be a non-negative integer, got ${shown(topN)}`);
      }
      // Document i in messages: its position, and its id when it is an object with one.
      const name = (i) => `document ${i}${idOf(values[i])}`;
      const costs = costsOf(cost, values, (i) => `${OWNER}: ${name(i)}`);
      let vectors;
      let relevance;
      if (documents?.type === 'text') {
        if (!embeddingModel) {
          throw argumentError(
            `mempursuit reranker: the documents are strings, which carry no embedding: pass objects with an '${embeddingField}' field, or an embeddingModel to embed them`,
          );
        }
        vectors = await embed(values, abortSignal);
      } else {
        vectors = values.map((doc) => doc?.[embeddingField]);
        if (scoreField !== undefined) {
          relevance = scoresOf(OWNER, values, (doc) => doc?.[scoreField], `'${scoreField}' (scoreField)`, name);
        }
      }
      const missing = vectors.findIndex((v) => !isVector(v));
      if (missing >= 0) {
        // Before any model call for the query.
        throw argumentError(`${OWNER}: ${name(missing)} has no embedding ('${embeddingField}': an array of numbers)`);
      }
      let q = queryEmbedding;
      if (q === undefined) {
        if (embedQuery) q = await embedQuery(query);
        else if (embeddingModel) [q] = await embed([query], abortSignal);
        else {
          throw argumentError(
            'mempursuit reranker: no query embedding: pass providerOptions: { mempursuit: { queryEmbedding } } to rerank(), or embedQuery / embeddingModel to mempursuitReranker()',
          );
        }
      }
      if (!isVector(q)) throw argumentError('mempursuit reranker: the query embedding must be an array of numbers');
      checkVectors(OWNER, vectors, q.length, name);
      const k = topN ?? values.length;
      const r = selectDocuments(OWNER, q, vectors, k, { ...merged, ...(relevance ? { relevance } : {}), ...(costs ? { costs } : {}) }, name);
      const weights = Array.from(r.weights);
      const scores = r.steps.map((st) => st.score);
      return {
        // Pick order. For pursuit, centroid, topk and mmr (without adaptive)
        // every prefix is the selection for a smaller topN; not for the
        // default, recommended, whose gamma depends on topN.
        ranking: Array.from(r.picks, (index, t) => ({ index, relevanceScore: weights.length > 0 ? weights[t] : scores[t] })),
        providerMetadata: { mempursuit: { stopReason: r.stopReason, weights, scores } },
      };
    },
  };
}
