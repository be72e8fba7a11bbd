// MemPursuit from JavaScript: pick complementary evidence for a query.
//
//   bash wasm/build.sh && node wasm/example.mjs
//
// Three memories in d = 2: two paraphrases of fact A and one statement of
// fact B; the query needs both facts. Top-K spends its second slot on the
// paraphrase, MemPursuit picks the missing fact.

import { MemPursuit, MemPursuitError } from './mempursuit.mjs';

const mp = await MemPursuit.load(); // wasm/pkg-tmp/mempursuit_wasm.wasm

const s = Math.SQRT1_2;
const query = new Float32Array([s, s]);
const memories = [
  [0.995, 0.0998], // fact A
  [0.9998, 0.02], // fact A, paraphrased
  [0.0, 1.0], // fact B
];

const pursuit = mp.select(query, memories, 2, { steps: true });
console.log('MemPursuit picks', pursuit.picks, 'weights', pursuit.weights.map((w) => w.toFixed(3)));
for (const st of pursuit.steps) {
  console.log(`  pick ${st.index}: score ${st.score.toFixed(4)}, residual^2 ${st.residualSq.toFixed(4)}, FW gap ${st.fwGap.toExponential(2)}`);
}
console.log('top-K picks     ', mp.select(query, memories, 2, { method: 'topk' }).picks);
console.log('centroid picks  ', mp.select(query, memories, 2, { method: 'centroid', gamma: 0.5 }).picks);
console.log('MMR picks       ', mp.select(query, memories, 2, { method: 'mmr', lambda: 0.5 }).picks);

// A pool staged once in wasm memory serves several budgets without copying.
const pool = mp.pool(query, new Float32Array(memories.flat()));
for (const k of [1, 2, 3]) console.log(`K = ${k}:`, pool.select(k).picks);
pool.free();

// Errors are exceptions with the core's message.
try {
  mp.select(new Float32Array([NaN, 1]), memories, 2);
} catch (err) {
  if (!(err instanceof MemPursuitError)) throw err;
  console.log(`error (${err.kind}): ${err.message}`);
}
mp.close();
