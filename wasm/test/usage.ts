// Type-checked against the installed package by package.test.mjs
// (tsc --noEmit, strict, the package README's tsconfig.json): every export,
// option and result field of mempursuit.d.ts, and calls the declarations
// must reject.

import { init, initSync, select, Selector, Store, MemPursuitError } from 'mempursuit';
import type {
  AtPoolOptimum,
  Candidates,
  DependentPicks,
  ErrorCode,
  InitInput,
  InvalidCandidates,
  Method,
  Normalization,
  RefitStatus,
  SelectOptions,
  Selection,
  Step,
  StopReason,
  Storage,
  Vector,
} from 'mempursuit';

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

  const query: Vector = new Float32Array([0.6, 0.8]);
  const pool: Candidates = new Float32Array([1, 0, 0, 1, 0.6, 0.8]);
  const methods: Method[] = ['recommended', 'pursuit', 'centroid', 'topk', 'mmr'];
  const storages: Storage[] = ['f32', 'f16', 'bf16', 'int8'];
  const atOptimum: AtPoolOptimum = 'fill';
  const dependent: DependentPicks = 'skip';
  const normalization: Normalization = 'require_unit';
  const invalid: InvalidCandidates = 'exclude';
  const options: SelectOptions = {
    method: 'pursuit',
    ridge: 1e-10,
    gamma: 1,
    relevance: [0.9, 0.5, 0.7],
    rawRelevance: true,
    adaptive: true,
    atPoolOptimum: atOptimum,
    optimumTolerance: 1e-9,
    dependentPicks: dependent,
    normalization,
    invalid,
    storage: 'int8',
  };
  const r: Selection = select(query, pool, 2, options);
  const picks: Uint32Array = r.picks;
  const weights: Float64Array = r.weights;
  const first: Step | undefined = r.steps[0];
  const gap: number | undefined = first?.fwGap;
  const refit: RefitStatus | undefined = first?.refit;
  const flags: [boolean, boolean] | undefined = first && [first.filled, first.dependent];
  const counts: number[] | undefined = first && [first.freeSize, first.solverIterations, first.verified, first.residualSq, first.improvement, first.nu, first.score, first.index];
  const stop: StopReason = r.stopReason;
  const excluded: Uint32Array = r.excluded;
  const skipped: Uint32Array = r.skipped;
  select([0.6, 0.8], [[1, 0], [0, 1]], 1, { method: 'mmr', mmrLambda: 0.5, poolOrder: true });
  select([0.6, 0.8], [new Float64Array([1, 0]), [0, 1]], 1);
  select(query, pool, 1, { method: 'topk', relevance: null });
  select(query, pool, 1, { method: 'centroid', gamma: 0.2, adaptive: true, relevance: new Float64Array(3) });

  const selector = new Selector();
  try {
    for (const method of methods) for (const storage of storages) selector.select(query, pool, 2, { method, storage });
  } catch (err) {
    if (err instanceof MemPursuitError) {
      const code: ErrorCode = err.code;
      const message: string = err.message;
      console.log(code, message);
    }
  } finally {
    selector.free();
  }
  const error = new MemPursuitError('argument', 'k must be a non-negative integer', { cause: new Error('x') });

  const store = new Store(pool, 2, { storage: 'int8' });
  const added: { start: number; end: number } = store.append([[0.6, 0.8]]);
  const size: number = store.length + store.dim + added.end;
  const kept: 'f32' | 'f16' | 'bf16' | 'int8' = store.storage;
  const fromStore: Uint32Array = store.select(query, new Uint32Array([0, 2]), 1, { method: 'pursuit', costs: [1, 2], costBudget: 2 }).picks;
  store.select(query, [0, 1], 1);
  store.select(query, BigInt64Array.from([0n, 1n]), 1);
  const described: { length: number | null; dim: number; storage: string } = store.toJSON();
  const text: string = `${store}`;
  console.log(size, kept, fromStore, described, text);
  // @ts-expect-error: storage is one of four strings
  new Store(pool, 2, { storage: 'f64' });
  store.free();

  // @ts-expect-error: not a method
  select(query, pool, 2, { method: 'bm25' });
  // @ts-expect-error: options are camelCase in the declarations
  select(query, pool, 2, { mmr_lambda: 0.5 });
  // @ts-expect-error: k is a number
  select(query, pool, '2');
  // @ts-expect-error: atPoolOptimum is one of three strings
  select(query, pool, 2, { atPoolOptimum: true });
  // @ts-expect-error: storage is one of four strings
  select(query, pool, 2, { storage: 'f8' });
  // @ts-expect-error: the old spelling of normalization
  select(query, pool, 2, { requireUnit: true });
  // @ts-expect-error: stop reasons are snake_case words
  const dash: StopReason = 'pool-exhausted';
  // @ts-expect-error: picks are a Uint32Array, not string[]
  const wrong: string[] = r.picks;

  console.log(gap, refit, flags, counts, stop, excluded, skipped, weights, wrong, dash, error);
  return Array.from(picks);
}
