// The framework integrations with the real framework packages (dev
// dependencies, offline): `mempursuit/ai-sdk` with `rerank()` from `ai` and
// its mock embedding model (`ai/test`), `mempursuit/langchain` with
// @langchain/core's document compressor base class, Document, Embeddings and
// in-memory vector store. Each asserts: the picks equal select()'s on the
// same vectors; the documents come back in pick order with the weights; no
// document is re-embedded when its vector is present (embedding calls
// counted); the default is the recommended setting; documents without an
// embedding or with the wrong dimension are MemPursuitErrors naming them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { init, select, MemPursuitError } from 'mempursuit';

let ai = null;
let aiTest = null;
let lc = null;
try {
  ai = await import('ai');
  aiTest = await import('ai/test');
  lc = {
    ...(await import('mempursuit/langchain')),
    ...(await import('@langchain/core/documents')),
    ...(await import('@langchain/core/embeddings')),
    ...(await import('@langchain/core/retrievers/document_compressors')),
    ...(await import('@langchain/core/utils/testing')),
  };
} catch (err) {
  if (process.env.MEMPURSUIT_REQUIRE_DEV) throw err;
}
const skipAi = !ai && 'ai not installed (run npm ci in wasm/)';
const skipLc = !lc && '@langchain/core not installed (run npm ci in wasm/)';
const { mempursuitReranker } = await import('mempursuit/ai-sdk');

await init();

// A pool where the recommended setting and top-K differ (the conformance
// vectors' "clustered-0": P = 14, d = 8).
const vectors = JSON.parse(readFileSync(new URL('../../tests/conformance/vectors.json', import.meta.url), 'utf8'));
const { query, candidates } = vectors.inputs['clustered-0'];
const texts = candidates.map((_, i) => `memory ${i}`);
const K = 5;
const picks = (options) => Array.from(select(query, candidates, K, options).picks);
const RECOMMENDED = picks();
assert.notDeepEqual(RECOMMENDED, picks({ method: 'topk' }), 'the pool tells the recommended setting from top-K');

/** Asserts that the error's kind (and, given an object, its index, id and argument) are `code`. */
function sameFields(err, code) {
  if (typeof code === 'string') return assert.equal(err.code, code);
  const { kind, index = null, id = null, argument = null } = code;
  assert.deepEqual([err.kind, err.index, err.id, err.argument], [kind, index, id, argument], err.message);
}

/**
 * Asserts that `promise` rejects with a MemPursuitError (possibly as the
 * cause of the framework's error) of `code` (a kind, or `{ kind, index, id,
 * argument }`: the layer's fields) whose message matches.
 */
async function rejectsWith(promise, message, code = 'input') {
  await assert.rejects(promise, (err) => {
    const mine = err instanceof MemPursuitError ? err : err?.cause instanceof MemPursuitError ? err.cause : null;
    assert.ok(mine, `not a MemPursuitError: ${err?.name}: ${err?.message}`);
    sameFields(mine, code);
    if (message instanceof RegExp) assert.match(mine.message, message);
    else assert.equal(mine.message, message);
    return true;
  });
}

/** Asserts that `fn` throws a MemPursuitError of `code` with exactly `message`. */
function throwsWith(fn, code, message) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof MemPursuitError, `not a MemPursuitError: ${err?.name}: ${err?.message}`);
    sameFields(err, code);
    if (message instanceof RegExp) assert.match(err.message, message);
    else assert.equal(err.message, message);
    return true;
  });
}

// What the layer's unknown-option error lists for a name in no particular
// spelling (the library's option names; a camelCase name gets camelCase).
const OPTIONS_LIST =
  'method, gamma, ridge, mmr_lambda, raw_relevance, pool_order, cost_budget, adaptive, at_pool_optimum, optimum_tolerance, dependent_picks, normalization, invalid, storage';

// ---------------------------------------------------------------------------
// Vercel AI SDK

const documents = candidates.map((embedding, i) => ({ id: `m${i}`, text: texts[i], embedding }));

test('AI SDK rerank(): the picks of select(), in pick order, with the weights; the default is the recommended setting', { skip: skipAi }, async () => {
  const model = mempursuitReranker();
  assert.equal(model.modelId, 'default');
  const result = await ai.rerank({ model, documents, query: 'a question', topN: K, providerOptions: { mempursuit: { queryEmbedding: query } } });
  assert.deepEqual(result.ranking.map((r) => r.originalIndex), RECOMMENDED);
  assert.deepEqual(result.rerankedDocuments.map((d) => d.id), RECOMMENDED.map((i) => `m${i}`));
  const expected = select(query, candidates, K, { method: 'recommended' });
  assert.deepEqual(result.ranking.map((r) => r.score), Array.from(expected.weights));
  assert.deepEqual(result.providerMetadata.mempursuit.weights, Array.from(expected.weights));
  assert.equal(result.providerMetadata.mempursuit.stopReason, 'budget');
  // Without topN: the whole pool, in pick order.
  const all = await ai.rerank({ model, documents, query: 'q', providerOptions: { mempursuit: { queryEmbedding: query } } });
  assert.deepEqual(all.ranking.map((r) => r.originalIndex), Array.from(select(query, candidates, candidates.length).picks));
});

test('AI SDK: options at construction and per call, retriever scores by rank, baselines score by step', { skip: skipAi }, async () => {
  const mmr = mempursuitReranker({ method: 'mmr', mmrLambda: 0.3 });
  assert.equal(mmr.modelId, 'mmr');
  const got = await ai.rerank({ model: mmr, documents, query: 'q', topN: K, providerOptions: { mempursuit: { queryEmbedding: query } } });
  assert.deepEqual(got.ranking.map((r) => r.originalIndex), picks({ method: 'mmr', mmrLambda: 0.3 }));
  const steps = select(query, candidates, K, { method: 'mmr', mmrLambda: 0.3 }).steps;
  assert.deepEqual(got.ranking.map((r) => r.score), steps.map((s) => s.score), 'MMR has no weights: the step scores');
  const perCall = await ai.rerank({ model: mempursuitReranker(), documents, query: 'q', topN: K, providerOptions: { mempursuit: { queryEmbedding: query, method: 'topk' } } });
  assert.deepEqual(perCall.ranking.map((r) => r.originalIndex), picks({ method: 'topk' }));
  const scored = documents.map((d, i) => ({ ...d, score: (i * 7) % 5 }));
  const byScore = await ai.rerank({ model: mempursuitReranker({ scoreField: 'score' }), documents: scored, query: 'q', topN: K, providerOptions: { mempursuit: { queryEmbedding: query } } });
  assert.deepEqual(byScore.ranking.map((r) => r.originalIndex), picks({ relevance: scored.map((d) => d.score) }));
  // An option the library does not know is its error, at construction.
  assert.throws(() => mempursuitReranker({ lambda: 0.3 }), (err) => err instanceof MemPursuitError && err.code === 'option');
  // ... and per call, at the request.
  await rejectsWith(
    ai.rerank({ model: mempursuitReranker(), documents, query: 'q', topN: K, providerOptions: { mempursuit: { queryEmbedding: query, lambda: 0.3 } }, maxRetries: 0 }),
    `mempursuit reranker: unknown option 'lambda' (options: ${OPTIONS_LIST})`,
    { kind: 'option', argument: 'lambda' },
  );
});

test('AI SDK: the query embedded by the embedding model, the documents never (doEmbed calls counted)', { skip: skipAi }, async () => {
  const embeddingModel = new aiTest.MockEmbeddingModelV3({
    maxEmbeddingsPerCall: 5,
    doEmbed: async ({ values }) => ({ embeddings: values.map((v) => (v === 'a question' ? query : candidates[texts.indexOf(v)])) }),
  });
  const model = mempursuitReranker({ embeddingModel });
  const result = await ai.rerank({ model, documents, query: 'a question', topN: K });
  assert.deepEqual(result.ranking.map((r) => r.originalIndex), RECOMMENDED);
  assert.deepEqual(embeddingModel.doEmbedCalls.map((c) => c.values), [['a question']], 'one call, for the query only');
  // Texts carry no embedding: then (and only then) the model embeds them.
  const fromTexts = await ai.rerank({ model, documents: texts, query: 'a question', topN: K });
  assert.deepEqual(fromTexts.ranking.map((r) => r.originalIndex), RECOMMENDED);
  // In calls of at most the model's maxEmbeddingsPerCall (5), as embedMany splits them; then the query.
  assert.deepEqual(embeddingModel.doEmbedCalls.slice(1).map((c) => c.values.length), [5, 5, 4, 1]);
  // embedQuery instead of a model.
  let asked = 0;
  const viaFunction = mempursuitReranker({ embedQuery: async () => (asked++, query) });
  assert.deepEqual((await ai.rerank({ model: viaFunction, documents, query: 'q', topN: K })).ranking.map((r) => r.originalIndex), RECOMMENDED);
  assert.equal(asked, 1);
});

test('AI SDK: documents without an embedding or of the wrong dimension, no query embedding', { skip: skipAi }, async () => {
  const model = mempursuitReranker();
  const call = (docs, providerOptions = { mempursuit: { queryEmbedding: query } }) => ai.rerank({ model, documents: docs, query: 'q', topN: 2, providerOptions, maxRetries: 0 });
  const missing = documents.map((d, i) => (i === 3 ? { id: d.id, text: d.text } : d));
  await rejectsWith(call(missing), /^mempursuit reranker: document 3 \(id "m3"\): has no embedding .*'embedding' field/, { kind: 'input', index: 3, id: 'm3', argument: 'embedding' });
  const anonymous = missing.map(({ id, ...rest }) => rest);
  await rejectsWith(call(anonymous), /^mempursuit reranker: document 3: has no embedding/, { kind: 'input', index: 3, argument: 'embedding' });
  const short = documents.map((d, i) => (i === 5 ? { ...d, embedding: d.embedding.slice(0, 4) } : d));
  await rejectsWith(call(short), /^mempursuit reranker: document 5 \(id "m5"\): embedding has length 4, the query has length 8/, { kind: 'input', index: 5, id: 'm5', argument: 'embedding' });
  await rejectsWith(call(documents, {}), /^mempursuit reranker: no query embedding: pass providerOptions: \{ mempursuit: \{ queryEmbedding \} \}/, { kind: 'input', argument: 'query' });
  await rejectsWith(call(texts), /^mempursuit reranker: the documents are strings, which carry no embedding/);
  assert.throws(() => mempursuitReranker({ embeddingModel: {} }), (err) => err instanceof MemPursuitError && err.code === 'option' && err.argument === 'embeddingModel');
});

/** An embedding model that throws, as real providers do, when a call has more values than its maxEmbeddingsPerCall; each text's vector is given by `vectorOf`. */
function limitedModel(limit, vectorOf) {
  const calls = [];
  return {
    specificationVersion: 'v3',
    provider: 'fake',
    modelId: 'limited',
    maxEmbeddingsPerCall: limit,
    supportsParallelCalls: false,
    calls,
    async doEmbed({ values }) {
      calls.push(values.length);
      if (values.length > limit) throw new Error(`Too many values for a single embedding call: ${values.length} > ${limit}`);
      return { embeddings: values.map(vectorOf), warnings: [] };
    },
  };
}

test('AI SDK: texts embedded in calls of at most the model\'s maxEmbeddingsPerCall (a model that throws above it)', { skip: skipAi }, async () => {
  const byText = (v) => (v === 'a question' ? query : candidates[texts.indexOf(v)]);
  for (const limit of [1, 3, 2048]) {
    const embeddingModel = limitedModel(limit, byText);
    const result = await ai.rerank({ model: mempursuitReranker({ embeddingModel }), documents: texts, query: 'a question', topN: K, maxRetries: 0 });
    assert.deepEqual(result.ranking.map((r) => r.originalIndex), RECOMMENDED, `limit ${limit}`);
    const expected = limit === 1 ? Array(14).fill(1) : limit === 3 ? [3, 3, 3, 3, 2] : [14];
    assert.deepEqual(embeddingModel.calls, [...expected, 1], `limit ${limit}`);
  }
  // A promised limit, as the specification allows.
  const promised = limitedModel(4, byText);
  promised.maxEmbeddingsPerCall = Promise.resolve(4);
  await ai.rerank({ model: mempursuitReranker({ embeddingModel: promised }), documents: texts, query: 'a question', topN: K, maxRetries: 0 });
  assert.deepEqual(promised.calls, [4, 4, 4, 2, 1]);
});

test('AI SDK: abortSignal is honoured when the documents carry their embeddings, and between embedding calls', { skip: skipAi }, async () => {
  const aborted = AbortSignal.abort(new Error('stopped by the caller'));
  let asked = 0;
  const model = mempursuitReranker({ embedQuery: async () => (asked++, query) });
  await assert.rejects(model.doRerank({ documents: { type: 'object', values: documents }, query: 'q', topN: K, abortSignal: aborted }), /stopped by the caller/);
  assert.equal(asked, 0, 'no query embedding after the abort');
  // Aborted during the first of several embedding calls: no second call.
  const controller = new AbortController();
  const embeddingModel = limitedModel(5, (v) => {
    controller.abort(new Error('aborted mid-way'));
    return v === 'a question' ? query : candidates[texts.indexOf(v)];
  });
  await assert.rejects(mempursuitReranker({ embeddingModel }).doRerank({ documents: { type: 'text', values: texts }, query: 'a question', topN: K, abortSignal: controller.signal }), /aborted mid-way/);
  assert.deepEqual(embeddingModel.calls, [5]);
});

test('AI SDK: embeddings stored as strings (pgvector\'s "[0.1,...]") are parsed, other text refused naming the document', { skip: skipAi }, async () => {
  const asText = documents.map((d) => ({ ...d, embedding: `[${d.embedding.join(',')}]` }));
  const got = await ai.rerank({ model: mempursuitReranker(), documents: asText, query: 'q', topN: K, providerOptions: { mempursuit: { queryEmbedding: query } } });
  assert.deepEqual(got.ranking.map((r) => r.originalIndex), RECOMMENDED);
  const bad = asText.map((d, i) => (i === 4 ? { ...d, embedding: 'not a vector' } : d));
  await rejectsWith(
    ai.rerank({ model: mempursuitReranker(), documents: bad, query: 'q', topN: K, providerOptions: { mempursuit: { queryEmbedding: query } }, maxRetries: 0 }),
    /^mempursuit reranker: document 4 \(id "m4"\): the embedding text must look like "\[0.1,0.2,...\]" \(pgvector's form\); got "not a vector"/,
    { kind: 'input', index: 4, id: 'm4', argument: 'embedding' },
  );
});

test('AI SDK: texts without ids matched to their vectors by position, never by text (two documents of the same text)', { skip: skipAi }, async () => {
  // Two equal texts with different vectors: by text, one of them would get the other's vector.
  const same = ['same text', 'same text', 'other'];
  const vecs = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
  let next = 0;
  const embeddingModel = limitedModel(2, (v) => (v === 'q' ? [0, 1, 0] : vecs[next++]));
  const result = await ai.rerank({ model: mempursuitReranker({ embeddingModel, method: 'topk' }), documents: same, query: 'q', topN: 1, maxRetries: 0 });
  assert.deepEqual(result.ranking.map((r) => r.originalIndex), [1], 'the second copy is the one along the query');
});

const RERANKER_OWN = 'embeddingField, scoreField, embedQuery, embeddingModel, cost';
const OWN = (owner, list) => `${owner}'s own settings: ${list}`;

test('AI SDK: bad settings throw a MemPursuitError at construction (new-user trial of 2026-12-02, item 4)', { skip: skipAi }, () => {
  throwsWith(() => mempursuitReranker({ foo: 1 }), { kind: 'option', argument: 'foo' }, `mempursuitReranker: unknown option 'foo' (options: ${OPTIONS_LIST}); ${OWN('mempursuitReranker', RERANKER_OWN)}`);
  throwsWith(() => mempursuitReranker({ mmrlambda: 0.3 }), 'option', `mempursuitReranker: unknown option 'mmrlambda' (options: ${OPTIONS_LIST}); ${OWN('mempursuitReranker', RERANKER_OWN)}`);
  throwsWith(() => mempursuitReranker({ method: 'bogus' }), 'option', "mempursuitReranker: unknown method 'bogus' (methods: recommended, pursuit, centroid, topk, mmr)");
  throwsWith(() => mempursuitReranker({ method: 'pursuit', gamma: 2 }), 'option', 'mempursuitReranker: gamma 2 must be in (0, 1]');
  throwsWith(() => mempursuitReranker({ mmrLambda: 0.3 }), 'option', "mempursuitReranker: option 'mmrLambda' does not apply to method 'recommended' (it applies to mmr)");
  throwsWith(() => mempursuitReranker({ method: 'mmr', mmr_lambda: 0.1, mmrLambda: 0.9 }), 'option', "mempursuitReranker: option 'mmrLambda' is given twice (as 'mmr_lambda' or 'mmrLambda'); give it once");
  throwsWith(() => mempursuitReranker({ method: 'mmr', gamma: [1] }), { kind: 'option', argument: 'gamma' }, "mempursuitReranker: option 'gamma' is an array: option values are numbers, booleans or strings");
  // The reranker never has scores without a scoreField.
  throwsWith(() => mempursuitReranker({ method: 'topk', rawRelevance: true }), 'option', 'mempursuitReranker: raw relevance (the scores used as given) needs relevance scores');
  // A budget needs a cost function, which only the settings give.
  throwsWith(() => mempursuitReranker({ costBudget: 5 }), { kind: 'option', argument: 'cost_budget' }, "mempursuitReranker: a cost budget needs a cost function (each document's cost, e.g. its token count)");
  // What depends on the documents stays a check at the request: scores come
  // only with object documents (not texts), the budget may come per call.
  assert.equal(mempursuitReranker({ method: 'topk', rawRelevance: true, scoreField: 'score' }).modelId, 'topk');
  assert.equal(mempursuitReranker({ poolOrder: true, scoreField: 'score' }).modelId, 'default');
  assert.equal(mempursuitReranker({ cost: () => 1 }).modelId, 'default');
  assert.equal(mempursuitReranker({ method: 'mmr', mmr_lambda: 0.3 }).modelId, 'mmr', 'snake_case alone is accepted');
});

test('AI SDK: a query of another dimension, topN, NaN in a document, the query or a score (new-user trial of 2026-12-02, items 3 and 10)', { skip: skipAi }, async () => {
  const rerank = (settings, docs, topN, queryEmbedding = query) =>
    ai.rerank({ model: mempursuitReranker(settings), documents: docs, query: 'q', topN, providerOptions: { mempursuit: { queryEmbedding } }, maxRetries: 0 });
  const queryLength = /^mempursuit reranker: the query embedding has 2 values, the documents' embeddings have 8: embed the query with the model that embedded the documents$/;
  await rejectsWith(rerank({}, documents, 2, query.slice(0, 2)), queryLength, { kind: 'input', argument: 'query' });
  await rejectsWith(rerank({}, documents.slice(0, 1), 1, query.slice(0, 2)), queryLength, { kind: 'input', argument: 'query' });
  await rejectsWith(rerank({}, documents, -1), 'mempursuit reranker: topN must be a non-negative integer, got -1', { kind: 'option', argument: 'topN' });
  await rejectsWith(rerank({}, documents, 2.5), 'mempursuit reranker: topN must be a non-negative integer, got 2.5', { kind: 'option', argument: 'topN' });
  const nan = documents.map((d, i) => (i === 3 ? { ...d, embedding: d.embedding.map((x, j) => (j === 5 ? NaN : x)) } : d));
  await rejectsWith(rerank({}, nan, 2), 'mempursuit reranker: document 3 (id "m3"): embedding component 5 is NaN, not finite', { kind: 'input', index: 3, id: 'm3', argument: 'embedding' });
  await rejectsWith(rerank({}, documents, 2, query.map((x, j) => (j === 0 ? NaN : x))), "mempursuit reranker: the query embedding's component 0 is NaN, not finite", { kind: 'input', argument: 'query' });
  const scored = (value) => documents.map((d, i) => ({ ...d, score: i === 2 ? value : i }));
  await rejectsWith(rerank({ scoreField: 'score' }, scored(NaN), 2), 'mempursuit reranker: document 2 (id "m2"): similarity score NaN is not finite', { kind: 'input', index: 2, id: 'm2', argument: 'score' });
  await rejectsWith(rerank({ scoreField: 'score' }, scored('high'), 2), 'mempursuit reranker: document 2 (id "m2"): its score is a string ("high"), not a number', { kind: 'input', index: 2, id: 'm2', argument: 'score' });
  // Settings that depend on the documents, checked at the request: scores and pool order exclude each other.
  await rejectsWith(rerank({ poolOrder: true, scoreField: 'score' }, scored(1), 2), 'mempursuit reranker: relevance scores and pool order exclude each other: pass one of them', 'option');
});

test('AI SDK: prefixes nest for pursuit, centroid, topk and mmr, not for the default (what ai-sdk.d.ts says; new-user trial of 2026-12-02, item 6)', { skip: skipAi }, async () => {
  const ranking = async (settings, topN) =>
    (await ai.rerank({ model: mempursuitReranker(settings), documents, query: 'q', topN, providerOptions: { mempursuit: { queryEmbedding: query } } })).ranking.map((r) => r.originalIndex);
  for (const settings of [{ method: 'pursuit' }, { method: 'centroid', gamma: 0.5 }, { method: 'topk' }, { method: 'mmr', mmrLambda: 0.3 }]) {
    assert.deepEqual(await ranking(settings, 3), (await ranking(settings, 8)).slice(0, 3), JSON.stringify(settings));
  }
  // The default sets its gamma from topN: on this pool its first 3 picks for topN = 8 are not its picks for topN = 3.
  assert.deepEqual(await ranking({}, 3), [12, 3, 9]);
  assert.deepEqual((await ranking({}, 8)).slice(0, 3), [12, 8, 9]);
  assert.doesNotMatch(readFileSync(new URL('../integrations/ai-sdk.d.ts', import.meta.url), 'utf8'), /\(every prefix is the selection for\s*(\/\/|\*)?\s*a smaller topN\)/);
});

/** Runs `code` (an ES module) in a fresh Node.js process in wasm/ (no init() has run there) and returns its output lines. */
function fresh(code) {
  return execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: new URL('..', import.meta.url), encoding: 'utf8' }).trim().split('\n');
}

// Where process.getBuiltinModule is missing (Node.js before 20.16), the
// integrations cannot load the module synchronously and leave the check of
// the settings to the first request (integrations/common.js).
const skipFresh = typeof process.getBuiltinModule !== 'function' && 'process.getBuiltinModule is missing (Node.js < 20.16): settings are checked at the first request';

test('AI SDK: construction checks the settings before any init() (a fresh process)', { skip: skipFresh }, () => {
  const out = fresh(`
import { mempursuitReranker } from 'mempursuit/ai-sdk';
import { MemPursuitError, select } from 'mempursuit';
try { mempursuitReranker({ method: 'bogus' }); console.log('constructed'); } catch (e) { console.log(e instanceof MemPursuitError, e.code, e.message); }
console.log(mempursuitReranker({ method: 'mmr', mmrLambda: 0.3 }).modelId, Array.from(select([1, 0], [[0, 1], [1, 0]], 1).picks).join());
`);
  assert.deepEqual(out, [
    "true option mempursuitReranker: unknown method 'bogus' (methods: recommended, pursuit, centroid, topk, mmr)",
    'mmr 1',
  ]);
});

// ---------------------------------------------------------------------------
// LangChain.js

/** Deterministic embeddings (the pool's vectors by text), counting calls and texts. */
function countingEmbeddings() {
  const table = new Map(texts.map((t, i) => [t, candidates[i]]));
  const counts = { documentCalls: 0, documentTexts: 0, queryCalls: 0 };
  class TableEmbeddings extends lc.Embeddings {
    async embedDocuments(docs) {
      counts.documentCalls++;
      counts.documentTexts += docs.length;
      return docs.map((t) => table.get(t));
    }
    async embedQuery() {
      counts.queryCalls++;
      return query;
    }
  }
  return { embeddings: new TableEmbeddings({}), counts };
}

test('LangChain: vectors in the metadata: the picks of select(), in pick order with the weights, nothing re-embedded', { skip: skipLc }, async () => {
  const { embeddings, counts } = countingEmbeddings();
  const compressor = new lc.MemPursuitCompressor({ embeddings, k: K });
  assert.ok(compressor instanceof lc.BaseDocumentCompressor);
  const docs = candidates.map((embedding, i) => new lc.Document({ pageContent: texts[i], metadata: { embedding, source: i }, id: `m${i}` }));
  const out = await compressor.compressDocuments(docs, 'a question');
  assert.deepEqual(out.map((d) => d.metadata.source), RECOMMENDED);
  assert.deepEqual(out.map((d) => d.id), RECOMMENDED.map((i) => `m${i}`));
  const expected = select(query, candidates, K);
  assert.deepEqual(out.map((d) => d.metadata.mempursuit.weight), Array.from(expected.weights));
  assert.deepEqual(out.map((d) => d.metadata.mempursuit.rank), [0, 1, 2, 3, 4]);
  assert.ok(out.every((d) => d instanceof lc.Document));
  assert.equal(docs[0].metadata.mempursuit, undefined, 'the input documents are not modified');
  assert.deepEqual(counts, { documentCalls: 0, documentTexts: 0, queryCalls: 1 });
  // Options pass through; top-K has no weights.
  const topk = await new lc.MemPursuitCompressor({ embeddings, k: K, method: 'topk' }).compressDocuments(docs, 'q');
  assert.deepEqual(topk.map((d) => d.metadata.source), picks({ method: 'topk' }));
  assert.ok(topk.every((d) => d.metadata.mempursuit.weight === null));
  // A retriever score in the metadata, by rank.
  const scored = docs.map((d, i) => new lc.Document({ pageContent: d.pageContent, metadata: { ...d.metadata, score: (i * 7) % 5 } }));
  const byScore = await new lc.MemPursuitCompressor({ embeddings, k: K, scoreKey: 'score' }).compressDocuments(scored, 'q');
  assert.deepEqual(byScore.map((d) => d.metadata.source), picks({ relevance: scored.map((d) => d.metadata.score) }));
});

test('LangChain: metadata embeddings stored as strings (pgvector\'s "[0.1,...]") are parsed, other text refused naming the document', { skip: skipLc }, async () => {
  const { embeddings, counts } = countingEmbeddings();
  const docs = candidates.map((embedding, i) => new lc.Document({ pageContent: texts[i], metadata: { embedding: `[${embedding.join(',')}]`, source: i }, id: `m${i}` }));
  const out = await new lc.MemPursuitCompressor({ embeddings, k: K }).compressDocuments(docs, 'q');
  assert.deepEqual(out.map((d) => d.metadata.source), RECOMMENDED);
  assert.deepEqual(counts, { documentCalls: 0, documentTexts: 0, queryCalls: 1 }, 'a string embedding is not missing');
  const bad = docs.map((d, i) => (i === 4 ? new lc.Document({ pageContent: d.pageContent, metadata: { embedding: 'not a vector' }, id: 'm4' }) : d));
  await rejectsWith(
    new lc.MemPursuitCompressor({ embeddings, k: K }).compressDocuments(bad, 'q'),
    /^MemPursuitCompressor: document 4 \(id "m4"\): the embedding text must look like/,
    { kind: 'input', index: 4, id: 'm4', argument: 'embedding' },
  );
});

test('LangChain: vectors from an in-memory vector store: not re-embedded; embedded only where nothing holds them', { skip: skipLc }, async () => {
  const { embeddings, counts } = countingEmbeddings();
  // The layout of langchain's MemoryVectorStore: memoryVectors entries with
  // the document's id, documents returned with it (core's FakeVectorStore
  // drops ids, and a vector is looked up by id only).
  class IdVectorStore extends lc.FakeVectorStore {
    async addVectors(vectors, documents) {
      await super.addVectors(vectors, documents);
      this.memoryVectors.slice(-documents.length).forEach((m, i) => (m.id = documents[i].id));
    }

    async similaritySearchVectorWithScore(q, k) {
      const hits = await super.similaritySearchVectorWithScore(q, k);
      return hits.map(([doc, score]) => [new lc.Document({ ...doc, id: this.memoryVectors.find((m) => m.metadata === doc.metadata).id }), score]);
    }
  }
  const store = new IdVectorStore(embeddings);
  await store.addDocuments(texts.map((t, i) => new lc.Document({ pageContent: t, metadata: { source: i }, id: `m${i}` })));
  assert.deepEqual(counts, { documentCalls: 1, documentTexts: candidates.length, queryCalls: 0 }, 'the store embedded the texts once');
  // What a retriever returns: documents without vectors.
  const retrieved = await store.similaritySearchVectorWithScore(query, candidates.length);
  const docs = retrieved.map(([doc]) => doc);
  assert.ok(docs.every((d) => d.metadata.embedding === undefined));
  const compressor = new lc.MemPursuitCompressor({ vectorStore: store, k: K });
  const out = await compressor.compressDocuments(docs, 'a question');
  const pool = docs.map((d) => candidates[d.metadata.source]);
  const expected = Array.from(select(query, pool, K).picks, (i) => docs[i].metadata.source);
  assert.deepEqual(out.map((d) => d.metadata.source), expected);
  assert.deepEqual(counts, { documentCalls: 1, documentTexts: candidates.length, queryCalls: 1 }, 'only the query was embedded');
  // Neither the metadata nor a store: the given Embeddings embeds them (one call).
  const bare = texts.map((t, i) => new lc.Document({ pageContent: t, metadata: { source: i } }));
  const embedded = await new lc.MemPursuitCompressor({ embeddings, k: K }).compressDocuments(bare, 'q');
  assert.deepEqual(embedded.map((d) => d.metadata.source), RECOMMENDED);
  assert.deepEqual(counts, { documentCalls: 2, documentTexts: 2 * candidates.length, queryCalls: 2 });  // Documents without ids are never matched to the store's vectors by their
  // text: they are embedded (the store holds the same texts).
  const noIds = docs.map((d) => new lc.Document({ pageContent: d.pageContent, metadata: d.metadata }));
  const byText = await new lc.MemPursuitCompressor({ vectorStore: store, k: K }).compressDocuments(noIds, 'a question');
  assert.deepEqual(byText.map((d) => d.metadata.source), expected);
  assert.deepEqual(counts, { documentCalls: 3, documentTexts: 3 * candidates.length, queryCalls: 3 });
});

test('LangChain: documents without vectors (and no embeddings), of the wrong dimension', { skip: skipLc }, async () => {
  const { embeddings } = countingEmbeddings();
  const docs = candidates.map((embedding, i) => new lc.Document({ pageContent: texts[i], metadata: i === 2 ? {} : { embedding } }));
  const noEmbeddings = new lc.MemPursuitCompressor({ k: K });
  await rejectsWith(noEmbeddings.compressDocuments(docs, 'q'), /^MemPursuitCompressor: no embeddings to embed the query/, { kind: 'option', argument: 'embeddings' });
  const wrong = candidates.map((embedding, i) => new lc.Document({ pageContent: texts[i], metadata: { embedding: i === 6 ? embedding.concat([0]) : embedding } }));
  await rejectsWith(new lc.MemPursuitCompressor({ embeddings, k: K }).compressDocuments(wrong, 'q'), /^MemPursuitCompressor: document 6: embedding has length 9, the query has length 8/, { kind: 'input', index: 6, argument: 'embedding' });
  assert.deepEqual(await new lc.MemPursuitCompressor({ embeddings }).compressDocuments([], 'q'), []);
  assert.throws(() => new lc.MemPursuitCompressor({ k: -1 }), (err) => err instanceof MemPursuitError && err.code === 'option' && err.argument === 'k');
});

const COMPRESSOR_OWN = 'k, embeddings, vectorStore, embeddingKey, scoreKey, cost, onDuplicates';

test('LangChain: bad fields throw a MemPursuitError at construction (new-user trial of 2026-12-02, items 4 and 10)', { skip: skipLc }, () => {
  const { embeddings } = countingEmbeddings();
  const make = (fields) => () => new lc.MemPursuitCompressor({ embeddings, ...fields });
  throwsWith(make({ method: 'bogus' }), 'option', "MemPursuitCompressor: unknown method 'bogus' (methods: recommended, pursuit, centroid, topk, mmr)");
  throwsWith(make({ foo: 1 }), { kind: 'option', argument: 'foo' }, `MemPursuitCompressor: unknown option 'foo' (options: ${OPTIONS_LIST}); ${OWN('MemPursuitCompressor', COMPRESSOR_OWN)}`);
  throwsWith(make({ method: 'centroid', gamma: 0 }), 'option', 'MemPursuitCompressor: gamma 0 must be in (0, 1]');
  throwsWith(make({ method: 'mmr', mmrLambda: 0.9, mmr_lambda: 0.1 }), 'option', "MemPursuitCompressor: option 'mmr_lambda' is given twice (as 'mmr_lambda' or 'mmrLambda'); give it once");
  throwsWith(make({ method: 'topk', rawRelevance: true }), 'option', 'MemPursuitCompressor: raw relevance (the scores used as given) needs relevance scores');
  // With a scoreKey every call passes scores: what excludes them fails now.
  throwsWith(make({ scoreKey: 's', poolOrder: true }), 'option', 'MemPursuitCompressor: relevance scores and pool order exclude each other: pass one of them');
  assert.equal(make({ scoreKey: 's', method: 'topk', rawRelevance: true })().k, 4);
  // A string shown quoted, a number as it is.
  throwsWith(make({ k: '3' }), { kind: 'option', argument: 'k' }, 'MemPursuitCompressor: k must be a non-negative integer, got "3"');
  throwsWith(make({ k: 2.5 }), { kind: 'option', argument: 'k' }, 'MemPursuitCompressor: k must be a non-negative integer, got 2.5');
  throwsWith(make({ scoreKey: 3 }), { kind: 'option', argument: 'scoreKey' }, 'MemPursuitCompressor: scoreKey must be a string, got 3');
});

test('LangChain: a query of another dimension, NaN in a document or a score (new-user trial of 2026-12-02, items 3 and 10)', { skip: skipLc }, async () => {
  const { embeddings } = countingEmbeddings();
  const docsOf = (vectorOf, metadata = () => ({})) =>
    candidates.map((embedding, i) => new lc.Document({ pageContent: texts[i], metadata: { embedding: vectorOf(embedding, i), ...metadata(i) }, id: `m${i}` }));
  const compress = (docs, fields = {}) => new lc.MemPursuitCompressor({ embeddings, k: K, ...fields }).compressDocuments(docs, 'q');
  await rejectsWith(compress(docsOf((e) => e.concat([0]))), "MemPursuitCompressor: the query embedding has 8 values, the documents' embeddings have 9: embed the query with the model that embedded the documents", { kind: 'input', argument: 'query' });
  await rejectsWith(compress(docsOf((e, i) => (i === 6 ? e.concat([0]) : e))), /^MemPursuitCompressor: document 6 \(id "m6"\): embedding has length 9, the query has length 8/, { kind: 'input', index: 6, id: 'm6', argument: 'embedding' });
  await rejectsWith(compress(docsOf((e, i) => (i === 4 ? e.map((x, j) => (j === 1 ? NaN : x)) : e))), 'MemPursuitCompressor: document 4 (id "m4"): embedding component 1 is NaN, not finite', { kind: 'input', index: 4, id: 'm4', argument: 'embedding' });
  await rejectsWith(compress(docsOf((e) => e, (i) => ({ s: i === 1 ? NaN : i })), { scoreKey: 's' }), 'MemPursuitCompressor: document 1 (id "m1"): similarity score NaN is not finite', { kind: 'input', index: 1, id: 'm1', argument: 'score' });
  await rejectsWith(compress(docsOf((e) => e, (i) => ({ s: i === 1 ? 'high' : i })), { scoreKey: 's' }), 'MemPursuitCompressor: document 1 (id "m1"): its score is a string ("high"), not a number', { kind: 'input', index: 1, id: 'm1', argument: 'score' });
  // A document without a vector names its id too (here with embeddings for the query only: an Embeddings that embeds nothing else).
  const bare = docsOf((e) => e).map((d, i) => (i === 2 ? new lc.Document({ pageContent: d.pageContent, metadata: {}, id: d.id }) : d));
  const queryOnly = { embedQuery: async () => query, embedDocuments: async (t) => t.map(() => null) };
  await rejectsWith(new lc.MemPursuitCompressor({ k: K, embeddings: queryOnly }).compressDocuments(bare, 'q'), /^MemPursuitCompressor: document 2 \(id "m2"\): has no embedding .*no embeddings were given to embed it$/, { kind: 'input', index: 2, id: 'm2', argument: 'embedding' });
});

test('LangChain: construction checks the fields before any init() (a fresh process)', { skip: skipLc || skipFresh }, () => {
  const out = fresh(`
import { MemPursuitCompressor } from 'mempursuit/langchain';
try { new MemPursuitCompressor({ method: 'pursuit', gamma: 2 }); console.log('constructed'); } catch (e) { console.log(e.name, e.code, e.message); }
console.log(new MemPursuitCompressor({ k: 3, method: 'topk' }).k);
`);
  assert.deepEqual(out, ['MemPursuitError option MemPursuitCompressor: gamma 2 must be in (0, 1]', '3']);
});

// ---------------------------------------------------------------------------
// Cost budgets: cost(doc) builds select()'s costs, costBudget passes through.

const P = candidates.length;
const UNIT = candidates.map(() => 1);
// Word counts 1..7, so the budget binds and some picks are skipped.
const WORDS = candidates.map((_, i) => 1 + ((i * 5) % 7));
const wordy = (i) => Array.from({ length: WORDS[i] }, (_, j) => `w${j}`).join(' ');
const wordCount = (text) => text.split(/\s+/).length;
const BUDGET = 12;
/** The budgeted picks of select() on the same vectors, checked to fit the budget and to differ from the plain prefix. */
function budgeted(costs, budget, options = {}) {
  const r = select(query, candidates, P, { ...options, costs, costBudget: budget });
  const got = Array.from(r.picks);
  assert.equal(r.stopReason, 'cost_budget');
  assert.ok(got.reduce((s, i) => s + costs[i], 0) <= budget);
  return got;
}
const WORD_PICKS = budgeted(WORDS, BUDGET);
assert.notDeepEqual(WORD_PICKS, Array.from(select(query, candidates, WORD_PICKS.length).picks), 'the word budget skips a pick');

test('AI SDK: unit costs with costBudget = K pick what topN = K picks; word costs what select() picks, within the budget', { skip: skipAi }, async () => {
  const withQuery = (extra = {}) => ({ mempursuit: { queryEmbedding: query, ...extra } });
  const unit = mempursuitReranker({ cost: () => 1, costBudget: K });
  const byCost = await ai.rerank({ model: unit, documents, query: 'q', topN: P, providerOptions: withQuery() });
  assert.deepEqual(byCost.ranking.map((r) => r.originalIndex), RECOMMENDED);
  assert.equal(byCost.providerMetadata.mempursuit.stopReason, 'cost_budget');
  // The same with the budget per call, and with another method.
  const perCall = await ai.rerank({ model: mempursuitReranker({ cost: () => 1, method: 'mmr' }), documents, query: 'q', topN: P, providerOptions: withQuery({ costBudget: K }) });
  assert.deepEqual(perCall.ranking.map((r) => r.originalIndex), picks({ method: 'mmr' }));

  const texts = documents.map((d, i) => ({ ...d, text: wordy(i) }));
  const seen = [];
  const words = mempursuitReranker({ cost: (doc) => (seen.push(doc.id), wordCount(doc.text)), costBudget: BUDGET });
  const got = await ai.rerank({ model: words, documents: texts, query: 'q', topN: P, providerOptions: withQuery() });
  const order = got.ranking.map((r) => r.originalIndex);
  assert.deepEqual(order, WORD_PICKS);
  assert.ok(order.reduce((s, i) => s + WORDS[i], 0) <= BUDGET);
  assert.deepEqual(seen, documents.map((d) => d.id), 'cost() is called once per document, in input order');
  // topN still caps the picks: the first 2 of the budgeted ones.
  const capped = await ai.rerank({ model: words, documents: texts, query: 'q', topN: 2, providerOptions: withQuery() });
  assert.deepEqual(capped.ranking.map((r) => r.originalIndex), Array.from(select(query, candidates, 2, { costs: WORDS, costBudget: BUDGET }).picks));
});

test('AI SDK: a bad cost names the document; cost and costBudget go together; costs is not a setting', { skip: skipAi }, async () => {
  const call = (settings, extra = {}) => ai.rerank({ model: mempursuitReranker(settings), documents, query: 'q', topN: 2, providerOptions: { mempursuit: { queryEmbedding: query, ...extra } }, maxRetries: 0 });
  const at3 = (value) => (doc) => (doc.id === 'm3' ? value() : 1);
  const at3Fields = { kind: 'input', index: 3, id: 'm3', argument: 'cost' };
  await rejectsWith(call({ cost: at3(() => { throw new Error('no tokenizer'); }), costBudget: 5 }), /^mempursuit reranker: document 3 \(id "m3"\): cost\(doc\) threw: no tokenizer$/, at3Fields);
  await rejectsWith(call({ cost: at3(() => -1), costBudget: 5 }), /^mempursuit reranker: document 3 \(id "m3"\): cost -1 must be finite and ≥ 0/, at3Fields);
  await rejectsWith(call({ cost: at3(() => NaN), costBudget: 5 }), /^mempursuit reranker: document 3 \(id "m3"\): cost NaN must be finite/, at3Fields);
  await rejectsWith(call({ cost: at3(() => '4'), costBudget: 5 }), /^mempursuit reranker: document 3 \(id "m3"\): its cost is a string \("4"\), not a number/, at3Fields);
  await rejectsWith(call({ cost: () => 1 }), /^mempursuit reranker: costs need a cost budget/, { kind: 'option', argument: 'options' });
  await rejectsWith(call({}, { costBudget: 3 }), /^mempursuit reranker: a cost budget needs costs/, { kind: 'option', argument: 'options' });
  await rejectsWith(call({}, { costs: UNIT, costBudget: 3 }), /^mempursuit reranker: 'costs' is set by the integration/, { kind: 'option', argument: 'costs' });
  assert.throws(() => mempursuitReranker({ costs: UNIT, costBudget: 3 }), /^MemPursuitError: mempursuitReranker: 'costs' is set by the integration/);
  assert.throws(() => mempursuitReranker({ cost: 3, costBudget: 3 }), (err) => err instanceof MemPursuitError && /cost must be a function/.test(err.message));
  // relevance comes from the documents (scoreField), never from the settings (the types say so too).
  assert.throws(() => mempursuitReranker({ relevance: [1, 2] }), /^MemPursuitError: mempursuitReranker: 'relevance' is set by the integration/);
  await rejectsWith(call({}, { relevance: UNIT }), /^mempursuit reranker: 'relevance' is set by the integration/, { kind: 'option', argument: 'relevance' });
  // Text documents: cost() gets the string, and the message has no id.
  const embeddingModel = new aiTest.MockEmbeddingModelV3({ doEmbed: async ({ values }) => ({ embeddings: values.map((v) => candidates[texts.indexOf(v)] ?? query) }) });
  const model = mempursuitReranker({ embeddingModel, cost: (t) => (t === texts[4] ? -2 : 1), costBudget: 3 });
  await rejectsWith(ai.rerank({ model, documents: texts, query: 'q', topN: 2, maxRetries: 0 }), /^mempursuit reranker: document 4: cost -2 must be finite and ≥ 0/, { kind: 'input', index: 4, argument: 'cost' });
  const throwing = mempursuitReranker({ embeddingModel, cost: () => { throw new Error('no tokenizer'); }, costBudget: 3 });
  const before = embeddingModel.doEmbedCalls.length;
  await rejectsWith(ai.rerank({ model: throwing, documents: texts, query: 'q', topN: 2, maxRetries: 0 }), /cost\(doc\) threw: no tokenizer/, { kind: 'input', index: 0, argument: 'cost' });
  assert.equal(embeddingModel.doEmbedCalls.length, before, 'cost() runs before any embedding call');
});

test('LangChain: unit costs with costBudget = K keep what k = K keeps; word costs what select() picks, within the budget', { skip: skipLc }, async () => {
  const { embeddings, counts } = countingEmbeddings();
  const docs = candidates.map((embedding, i) => new lc.Document({ pageContent: texts[i], metadata: { embedding, source: i }, id: `m${i}` }));
  const unit = await new lc.MemPursuitCompressor({ embeddings, k: P, cost: () => 1, costBudget: K }).compressDocuments(docs, 'q');
  assert.deepEqual(unit.map((d) => d.metadata.source), RECOMMENDED);
  assert.deepEqual(unit.map((d) => d.metadata.mempursuit.weight), Array.from(select(query, candidates, K).weights));
  const topk = await new lc.MemPursuitCompressor({ embeddings, k: P, method: 'topk', cost: () => 1, costBudget: K }).compressDocuments(docs, 'q');
  assert.deepEqual(topk.map((d) => d.metadata.source), picks({ method: 'topk' }));

  const wordDocs = candidates.map((embedding, i) => new lc.Document({ pageContent: wordy(i), metadata: { embedding, source: i }, id: `m${i}` }));
  const out = await new lc.MemPursuitCompressor({ embeddings, k: P, cost: (d) => wordCount(d.pageContent), costBudget: BUDGET }).compressDocuments(wordDocs, 'q');
  assert.deepEqual(out.map((d) => d.metadata.source), WORD_PICKS);
  assert.ok(out.reduce((s, d) => s + wordCount(d.pageContent), 0) <= BUDGET);
  assert.deepEqual(counts, { documentCalls: 0, documentTexts: 0, queryCalls: 3 });
});

test('LangChain: a bad cost names the document (before any embedding call); cost and costBudget go together', { skip: skipLc }, async () => {
  const { embeddings, counts } = countingEmbeddings();
  const docs = candidates.map((embedding, i) => new lc.Document({ pageContent: texts[i], metadata: { embedding }, id: `m${i}` }));
  const at6 = (value) => (d) => (d.id === 'm6' ? value() : 1);
  const compress = (cost) => new lc.MemPursuitCompressor({ embeddings, k: K, cost, costBudget: 4 }).compressDocuments(docs, 'q');
  const at6Fields = { kind: 'input', index: 6, id: 'm6', argument: 'cost' };
  await rejectsWith(compress(at6(() => { throw new TypeError('bad text'); })), /^MemPursuitCompressor: document 6 \(id "m6"\): cost\(doc\) threw: bad text$/, at6Fields);
  assert.equal(counts.queryCalls, 0, 'cost() runs before the query is embedded');
  await rejectsWith(compress(at6(() => Infinity)), /^MemPursuitCompressor: document 6 \(id "m6"\): cost inf must be finite and ≥ 0/, at6Fields);
  await rejectsWith(compress(at6(() => undefined)), /^MemPursuitCompressor: document 6 \(id "m6"\): has no cost while other documents have one/, at6Fields);
  const fails = (fields, message, argument) =>
    assert.throws(() => new lc.MemPursuitCompressor({ embeddings, ...fields }), (err) => err instanceof MemPursuitError && err.code === 'option' && err.argument === argument && message.test(err.message));
  fails({ cost: () => 1 }, /^MemPursuitCompressor: a cost function needs a cost budget/, 'cost');
  fails({ costBudget: 10 }, /^MemPursuitCompressor: a cost budget needs a cost function/, 'cost_budget');
  fails({ costs: UNIT, costBudget: 10 }, /^MemPursuitCompressor: 'costs' is set by the integration/, 'costs');
  fails({ relevance: UNIT }, /^MemPursuitCompressor: 'relevance' is set by the integration/, 'relevance');
  fails({ cost: 'tokens', costBudget: 10 }, /^MemPursuitCompressor: cost must be a function/, 'cost');
});
