// Rerank what a vector store returned and keep the best memories for the
// prompt, with the npm package (`import ... from 'mempursuit'`).
//
//   bash wasm/build.sh && node wasm/example.mjs [QUERY_ROW]
//
// The "vector store" is the committed HotpotQA fixture
// (cli/data/hotpotqa-mini: 1,022 Wikipedia sentences embedded with
// all-MiniLM-L6-v2, d = 384, and 24 multi-hop questions, each with a pool of
// 20-122 candidate sentences). For one question we take its pool, keep
// K = 5 sentences by top-K and by the package's default (the recommended
// setting), and mark the gold evidence sentences. The default question
// (row 9) is one where the two differ at K = 5; on 22 of the 24 they keep
// as many gold sentences, on 2 the recommended setting keeps one more, and
// on none does top-K keep more.

import { readFileSync } from 'node:fs';
import { init, select, MemPursuitError } from 'mempursuit';
import { readNpyF32 } from './npy.mjs';

const dir = new URL('../cli/data/hotpotqa-mini/', import.meta.url);
const memories = readNpyF32(new URL('memories.f32.npy', dir));
const texts = readFileSync(new URL('memories.jsonl', dir), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).text);
const queries = readNpyF32(new URL('queries.f32.npy', dir));
const specs = readFileSync(new URL('queries.jsonl', dir), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

await init(); // loads mempursuit.wasm (from disk in Node.js, with fetch() in browsers)

const row = Number(process.argv[2] ?? 9);
const spec = specs[row];
// What the vector store returned: the ids of P candidates and their embeddings.
const hits = spec.pool.map((id) => ({ id, text: texts[id], embedding: memories.row(id) }));
const query = queries.row(row);
const K = 5;

console.log(`Q: ${spec.text}\n   (${hits.length} candidates from the store; gold evidence marked *)\n`);
for (const [label, options] of [
  ['top-K by cosine', { method: 'topk' }],
  ['MemPursuit, the recommended setting (the default)', {}],
]) {
  const { picks } = select(query, hits.map((h) => h.embedding), K, options);
  const kept = Array.from(picks, (i) => hits[i]);
  const gold = kept.filter((h) => spec.gold.includes(h.id)).length;
  console.log(`${label}: ${gold} of ${spec.gold.length} gold sentences in the context`);
  for (const h of kept) console.log(`  ${spec.gold.includes(h.id) ? '*' : ' '} ${h.text.slice(0, 110)}`);
  console.log();
}

// The prompt context: the kept memories in pick order.
const { picks } = select(query, hits.map((h) => h.embedding), K);
const context = Array.from(picks, (i) => hits[i].text).join('\n');
console.log(`context for the prompt: ${context.length} characters`);

// Bad input is a thrown MemPursuitError with the native library's message.
try {
  select(new Float32Array(384).fill(NaN), hits.map((h) => h.embedding), K);
} catch (err) {
  if (!(err instanceof MemPursuitError)) throw err;
  console.log(`error (${err.code}): ${err.message}`);
}
