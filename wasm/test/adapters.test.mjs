// The integrations are adapters over the Rust document layer (issue 27,
// 2026-12-05): their code holds no literal of policy (method names, option
// values, defaults, the core's error text), and each returns a document
// repeated under the same id once and reports the repeat.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { init, select, MemPursuitError } from 'mempursuit';

await init();

const dir = new URL('../integrations/', import.meta.url);
// The library's method names and option values; each is checked below to
// be one (select accepts it), so the list cannot drift into words of no meaning.
const METHODS = ['recommended', 'pursuit', 'centroid', 'topk', 'mmr'];
const VALUES = { atPoolOptimum: ['continue', 'stop', 'fill'], dependentPicks: ['keep', 'skip'], invalid: ['reject', 'exclude'], storage: ['f32', 'f16', 'bf16', 'int8'], normalization: ['require_unit'] };

/** The string literals and decimal numbers of a JavaScript source, comments left out. */
function literals(source) {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:\\'"`])\/\/.*$/gm, '$1');
  const strings = [...code.matchAll(/'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`/g)].map((m) => m[1] ?? m[2] ?? m[3]);
  const numbers = [...code.replace(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g, '').matchAll(/\b\d+\.\d+(?:e-?\d+)?\b|\b\d+e-?\d+\b/g)].map((m) => m[0]);
  return { strings, numbers };
}

test('adapters: the names looked for are the library\'s', () => {
  const q = [1, 0];
  const pool = [[1, 0], [0, 1]];
  for (const method of METHODS) assert.equal(select(q, pool, 1, { method }).picks.length, 1, method);
  for (const [key, values] of Object.entries(VALUES)) {
    for (const value of values) {
      const method = key === 'atPoolOptimum' || key === 'dependentPicks' ? 'pursuit' : undefined;
      assert.ok(select(q, pool, 1, { method, [key]: value }), `${key}: ${value}`);
    }
  }
  assert.throws(() => select(q, pool, 1, { method: 'nope' }), MemPursuitError);
  // The scan finds what it looks for.
  const found = literals("const a = 'mmr'; // 'topk'\nconst b = 0.5; /* 1e-10 */ const c = `candidate ${1}`;");
  assert.deepEqual(found, { strings: ['mmr', 'candidate ${1}'], numbers: ['0.5'] });
});

test('adapters: no policy literal in the integrations\' code', () => {
  const files = readdirSync(dir).filter((f) => f.endsWith('.js'));
  assert.deepEqual(files.sort(), ['ai-sdk.js', 'common.js', 'langchain.js']);
  const names = new Set([...METHODS, ...Object.values(VALUES).flat()]);
  const found = [];
  for (const f of files) {
    const source = readFileSync(new URL(f, dir), 'utf8');
    const { strings, numbers } = literals(source);
    for (const s of strings) if (names.has(s) || /candidate /.test(s)) found.push([f, s]);
    for (const n of numbers) found.push([f, n]);
    if (/\/\^?candidate/.test(source)) found.push([f, 'a regular expression on the core\'s messages']);
  }
  assert.deepEqual(found, []);
});

let ai = null;
let lc = null;
try {
  ai = await import('ai');
  lc = { ...(await import('mempursuit/langchain')), ...(await import('@langchain/core/documents')) };
} catch (err) {
  if (process.env.MEMPURSUIT_REQUIRE_DEV) throw err;
}
const { mempursuitReranker } = await import('mempursuit/ai-sdk');

test('adapters: AI SDK returns a repeated id once and reports it', { skip: !ai && 'ai not installed (run npm ci in wasm/)' }, async () => {
  const a = { id: 'a', embedding: [1, 0, 0] };
  const b = { id: 'b', embedding: [0, 1, 0] };
  const got = await ai.rerank({ model: mempursuitReranker(), documents: [a, b, a], query: 'q', topN: 3, providerOptions: { mempursuit: { queryEmbedding: [1, 1, 0] } } });
  assert.deepEqual(got.ranking.map((r) => r.originalIndex).sort(), [0, 1]);
  assert.deepEqual(got.providerMetadata.mempursuit.duplicates, [[2, 0]]);
});

test('adapters: LangChain returns a repeated id once and reports it; no id: by position', { skip: !lc && '@langchain/core not installed (run npm ci in wasm/)' }, async () => {
  const embeddings = { embedQuery: async () => [1, 1, 0], embedDocuments: async (t) => t.map(() => [0, 0, 1]) };
  const doc = (id, embedding) => new lc.Document({ pageContent: 'same text', metadata: { embedding }, id });
  let reported = null;
  const compressor = new lc.MemPursuitCompressor({ embeddings, k: 3, onDuplicates: (pairs) => (reported = pairs) });
  const out = await compressor.compressDocuments([doc('a', [1, 0, 0]), doc('a', [1, 0, 0]), doc('b', [0, 1, 0])], 'q');
  assert.deepEqual(out.map((d) => d.id).sort(), ['a', 'b']);
  assert.deepEqual(reported, [[1, 0]]);
  // Two documents of the same text without ids: each keeps its own vector.
  const topk = new lc.MemPursuitCompressor({ embeddings, k: 2, method: 'topk' });
  const both = await topk.compressDocuments([doc(undefined, [1, 0, 0]), doc(undefined, [0, 1, 0])], 'q');
  assert.deepEqual(both.map((d) => d.metadata.embedding).sort(), [[0, 1, 0], [1, 0, 0]]);
  assert.deepEqual(both.map((d) => Object.keys(d.metadata.mempursuit)), [['rank', 'weight', 'score', 'residual_sq'], ['rank', 'weight', 'score', 'residual_sq']]);
});
