// Type-checked by package.test.mjs (tsc --noEmit, strict, the package
// README's tsconfig.json) against the installed package with `ai` and
// `@langchain/core`: the declarations of mempursuit/ai-sdk and
// mempursuit/langchain fit the frameworks' own types.

import { rerank } from 'ai';
import type { RerankingModel } from 'ai';
import { MockEmbeddingModelV3 } from 'ai/test';
import { Document } from '@langchain/core/documents';
import { BaseDocumentCompressor } from '@langchain/core/retrievers/document_compressors';
import { FakeVectorStore, SyntheticEmbeddings } from '@langchain/core/utils/testing';
import { MemPursuitError } from 'mempursuit';
import { mempursuitReranker } from 'mempursuit/ai-sdk';
import type { MempursuitRerankerSettings, MempursuitRerankingModel } from 'mempursuit/ai-sdk';
import { MemPursuitCompressor } from 'mempursuit/langchain';
import type { MemPursuitCompressorFields, MemPursuitMetadata } from 'mempursuit/langchain';

export async function demo(): Promise<unknown[]> {
  const settings: MempursuitRerankerSettings = {
    method: 'mmr',
    mmrLambda: 0.3,
    embeddingField: 'vector',
    scoreField: 'score',
    embeddingModel: new MockEmbeddingModelV3(),
    embedQuery: async () => new Float32Array(2),
  };
  const model: MempursuitRerankingModel = mempursuitReranker(settings);
  const asSdkModel: RerankingModel = model;
  const { ranking, rerankedDocuments } = await rerank({
    model,
    documents: [{ vector: [1, 0], score: 1, text: 'a' }],
    query: 'q',
    topN: 1,
    providerOptions: { mempursuit: { queryEmbedding: [1, 0], method: 'topk' } },
  });
  const first: number | undefined = ranking[0]?.originalIndex;

  const embeddings = new SyntheticEmbeddings({ vectorSize: 4 });
  const store = new FakeVectorStore(embeddings);
  const fields: MemPursuitCompressorFields = { embeddings, vectorStore: store, k: 3, storage: 'f16', embeddingKey: 'vector', scoreKey: 'score' };
  const compressor: BaseDocumentCompressor = new MemPursuitCompressor(fields);
  const docs = await compressor.compressDocuments([new Document({ pageContent: 'x' })], 'q');
  const meta = docs[0]?.metadata['mempursuit'] as MemPursuitMetadata | undefined;
  const weight: number | null | undefined = meta?.weight;

  // Token budgets: a cost per document with costBudget.
  const byTokens: MempursuitRerankerSettings = { cost: (doc: { text: string }) => doc.text.length, costBudget: 512 };
  mempursuitReranker(byTokens);
  const budgeted = new MemPursuitCompressor({ embeddings, k: 20, cost: (doc) => doc.pageContent.length, costBudget: 512 });

  try {
    mempursuitReranker({ embeddingField: 'embedding' });
  } catch (err) {
    if (err instanceof MemPursuitError) console.log(err.code);
  }
  // @ts-expect-error: not a method
  mempursuitReranker({ method: 'bm25' });
  // @ts-expect-error: k is a number
  new MemPursuitCompressor({ k: '3' });
  // @ts-expect-error: the relevance comes from the documents (scoreField), not the settings
  mempursuitReranker({ relevance: [1, 2] });
  // @ts-expect-error: the costs come from cost(doc), not the settings
  new MemPursuitCompressor({ costs: [1, 2], costBudget: 3 });
  // @ts-expect-error: a cost is a number
  new MemPursuitCompressor({ cost: (doc) => doc.pageContent, costBudget: 3 });

  return [asSdkModel, rerankedDocuments, first, weight, budgeted];
}
