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

// An embedding stored as text, parsed as a JSON array of numbers (pgvector
// writes '[0.1,0.2]'); any other text is refused naming `what`.
function parsed(text, what) {
  let v;
  try {
    v = JSON.parse(text);
  } catch {
    v = undefined;
  }
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'number')) {
    throw argumentError(`${OWNER}: ${what} is a string that is not an array of numbers ('[0.1,0.2,...]', as pgvector writes it): got ${shown(text.length > 40 ? `${text.slice(0, 40)}...` : text)}`);
  }
  return v;
}

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

  // As `embedMany` of the `ai` package does: the model's maxEmbeddingsPerCall
  // (a number or a promise of one; none or Infinity: no limit) splits the
  // values into calls of at most that many, in order; the abort signal is
  // checked before each call and after it.
  async function embed(values, abortSignal, what) {
    const max = await embeddingModel.maxEmbeddingsPerCall;
    abortSignal?.throwIfAborted();
    const size = max == null || max === Infinity ? Math.max(values.length, 1) : max;
    if (typeof size !== 'number' || !Number.isInteger(size) || size <= 0) {
      throw argumentError(`${OWNER}: the embedding model's maxEmbeddingsPerCall must be a positive integer, got ${shown(max)}`);
    }
    const out = [];
    for (let start = 0; start < values.length; start += size) {
      const chunk = values.slice(start, start + size);
      const { embeddings } = await embeddingModel.doEmbed({ values: chunk, abortSignal });
      abortSignal?.throwIfAborted();
      if (!Array.isArray(embeddings) || embeddings.length !== chunk.length) {
        throw argumentError(
          `${OWNER}: the embedding model returned ${Array.isArray(embeddings) ? embeddings.length : shown(embeddings)} embeddings for ${chunk.length} ${what}`,
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
      // costBudget may come with the settings or per call; costs only from cost().
      const merged = { ...options, ...selectOptions(perCall, [], `${OWNER} (providerOptions.mempursuit)`, 'scoreField') };
      checkCost(OWNER, cost, merged);
      if (topN != null && (typeof topN !== 'number' || !Number.isInteger(topN) || topN < 0)) {
        throw argumentError(`${OWNER}: topN must be a non-negative integer, got ${shown(topN)}`);
      }
      // Document i in messages: its position, and its id when it is an object with one.
      const name = (i) => `document ${i}${idOf(values[i])}`;
      // An embedding stored as text (pgvector's '[0.1,0.2]', a JSON array) is parsed; text that is not one is refused naming the document.
      const vectorOf = (v, i) => (typeof v === 'string' ? parsed(v, `${name(i)}: its '${embeddingField}'`) : v);
      const costs = costsOf(cost, values, (i) => `${OWNER}: ${name(i)}`);
      let vectors;
      let relevance;
      if (documents?.type === 'text') {
        if (!embeddingModel) {
          throw argumentError(
            `mempursuit reranker: the documents are strings, which carry no embedding: pass objects with an '${embeddingField}' field, or an embeddingModel to embed them`,
          );
        }
        vectors = await embed(values, abortSignal, 'documents');
      } else {
        vectors = values.map((doc, i) => vectorOf(doc?.[embeddingField], i));
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
        else if (embeddingModel) [q] = await embed([query], abortSignal, 'the query');
        else {
          throw argumentError(
            'mempursuit reranker: no query embedding: pass providerOptions: { mempursuit: { queryEmbedding } } to rerank(), or embedQuery / embeddingModel to mempursuitReranker()',
          );
        }
      }
      abortSignal?.throwIfAborted();
      if (typeof q === 'string') q = parsed(q, 'the query embedding');
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
