// Type-checked against the installed package by package.test.mjs
// (tsc --noEmit, strict): every export and option of mempursuit.d.ts, and
// calls the declarations must reject.

import { init, initSync, select, Selector, MemPursuitError } from 'mempursuit';
import type { ErrorCode, InitInput, Method, SelectOptions, Selection, Step, StopReason } from 'mempursuit';

export async function demo(bytes: Uint8Array, module: WebAssembly.Module): Promise<number[]> {
  await init();
  await init(new URL('./mempursuit.wasm', import.meta.url));
  await init('/static/mempursuit.wasm');
  await init(fetch('/static/mempursuit.wasm'));
  await init(bytes);
  await init(module);
  initSync(bytes.buffer);
  const source: InitInput = bytes;
  await init(Promise.resolve(source));

  const query = new Float32Array([0.6, 0.8]);
  const pool = new Float32Array([1, 0, 0, 1, 0.6, 0.8]);
  const methods: Method[] = ['pursuit', 'centroid', 'topk', 'mmr'];
  const options: SelectOptions = {
    method: 'pursuit',
    ridge: 1e-10,
    gamma: 1,
    relevance: [0.9, 0.5, 0.7],
    adaptive: true,
    atPoolOptimum: 'fill',
    requireUnit: false,
    excludeInvalid: true,
  };
  const r: Selection = select(query, pool, 2, options);
  const picks: Uint32Array = r.picks;
  const weights: Float64Array = r.weights;
  const first: Step | undefined = r.steps[0];
  const gap: number | undefined = first?.fwGap;
  const stop: StopReason = r.stopReason;
  const excluded: Uint32Array = r.excluded;
  select([0.6, 0.8], [[1, 0], [0, 1]], 1, { method: 'mmr', mmrLambda: 0.5, poolOrder: true });
  select(query, pool, 1, { method: 'topk', relevance: null });

  const selector = new Selector();
  try {
    for (const method of methods) selector.select(query, pool, 2, { method });
  } catch (err) {
    if (err instanceof MemPursuitError) {
      const code: ErrorCode = err.code;
      const message: string = err.message;
      console.log(code, message);
    }
  } finally {
    selector.free();
  }

  // @ts-expect-error: not a method
  select(query, pool, 2, { method: 'bm25' });
  // @ts-expect-error: options are camelCase
  select(query, pool, 2, { mmr_lambda: 0.5 });
  // @ts-expect-error: k is a number
  select(query, pool, '2');
  // @ts-expect-error: atPoolOptimum is one of three strings
  select(query, pool, 2, { atPoolOptimum: true });
  // @ts-expect-error: picks are read-only results, not numbers[]
  const wrong: string[] = r.picks;

  console.log(gap, stop, excluded, weights, wrong);
  return Array.from(picks);
}
