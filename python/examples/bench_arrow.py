"""Queries per second per core: MemPursuit on Arrow data, in process and
under Ray Data, against select_batch alone on the same vectors.

The data: the repository's HotpotQA mini fixture (cli/data/hotpotqa-mini:
24 questions, their pools of 24 to 75 sentence memories, d = 384) repeated
``--repeat`` times, each repetition a separate copy (2,400 queries and
166 MB of candidates by default). The same vectors are held twice: as a
list of (P_i, d) float32 arrays (the NumPy caller) and as an Arrow table
(``query`` fixed_size_list<float32>[384], ``pool``
list<fixed_size_list<float32>[384]>, ragged).

Modes, run in interleaved rounds in one process (the median and range of
the rounds are printed; timings on a shared machine are noisy, so compare
ratios from one run):

* ``select_batch``: ``mempursuit.select_batch(queries, pools, k,
  threads=1)`` -- the baseline, one core;
* ``select_arrow``: ``mempursuit.arrow.select_arrow(table["query"],
  table["pool"], k, threads=1)`` -- the Arrow layer on one core
  (includes building the result columns);
* ``ray``: Ray Data on a local Ray of ``--cpus`` CPUs, python/README.md's
  recipe: ``ds.map_batches(rerank, batch_format="pyarrow",
  zero_copy_batch=True, batch_size=--batch-size)`` with ``rerank`` =
  ``select_table(batch, k, ..., threads=1)`` less the query and pool
  columns, then ``materialize()``; the input already in Ray's object store,
  ``--cpus`` tasks at a time; per core = queries per second / ``--cpus``.
  Ray's start (tens of seconds) is not timed;
* ``ray, no selection``: the same map_batches with a function that only
  keeps the ``id`` column: what the engine itself costs per query;
* ``select_batch x2``: ``select_batch`` with ``threads=--cpus``, per core
  (with ``--cpus`` above 1).

It also prints what ``select_arrow`` allocated (tracemalloc: NumPy and
Python objects; pyarrow's pool) against the bytes of the candidates.

    pip install "./python[arrow]" "ray[data]"
    RAY_USAGE_STATS_ENABLED=0 python python/examples/bench_arrow.py [--repeat 100] [--k 10]
        [--rounds 5] [--cpus 2] [--batch-size 256] [--no-ray] [--synthetic P,d,n]

``--synthetic 200,1536,480`` replaces the fixture by 480 random pools of
200 candidates of dimension 1536 (the paper's P and text-embedding-3-small's
d: 563 MiB), where one query is about 30 times more work.
"""

import argparse
import json
import os
import pathlib
import platform
import statistics
import time
import tracemalloc

import numpy as np
import pyarrow as pa

import mempursuit
import mempursuit.arrow

REPO = pathlib.Path(__file__).resolve().parents[2]


def cpu():
    """The CPU model and the SIMD extensions that matter here."""
    model, flags = platform.processor() or "?", set()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    except OSError:
        pass
    isa = [f for f in ("avx2", "fma", "f16c", "avx512f") if f in flags]
    return f"{model}, {os.cpu_count()} CPUs ({', '.join(isa) or 'no AVX2'})"


def data(folder, repeat, synthetic=None):
    """(queries (n, d), pools: list of (P_i, d) arrays, Arrow table)."""
    if synthetic:
        p, d, n = synthetic
        rng = np.random.default_rng(0)
        queries = rng.standard_normal((n, d), dtype=np.float32)
        pools = [rng.standard_normal((p, d), dtype=np.float32) for _ in range(n)]
    else:
        memories = np.load(folder / "memories.f32.npy")
        queries = np.load(folder / "queries.f32.npy")
        with open(folder / "queries.jsonl") as f:
            specs = [json.loads(line) for line in f if line.strip()]
        pools = [memories[s["pool"]] for _ in range(repeat) for s in specs]  # separate copies
        queries = np.tile(queries, (repeat, 1))
    d = queries.shape[1]
    offsets = pa.array(np.cumsum([0, *map(len, pools)]), pa.int32())
    table = pa.table(
        {
            "id": pa.array(np.arange(len(pools))),
            "query": pa.FixedSizeListArray.from_arrays(pa.array(queries.ravel()), d),
            "pool": pa.ListArray.from_arrays(
                offsets, pa.FixedSizeListArray.from_arrays(pa.array(np.concatenate(pools).ravel()), d)
            ),
        }
    )
    return queries, pools, table


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fixture", type=pathlib.Path, default=REPO / "cli" / "data" / "hotpotqa-mini")
    ap.add_argument("--repeat", type=int, default=100)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--no-ray", action="store_true")
    ap.add_argument(
        "--synthetic",
        metavar="P,d,n",
        type=lambda v: tuple(int(x) for x in v.split(",")),
        help="n random pools of P candidates of dimension d instead of the fixture (e.g. 200,1536,480)",
    )
    args = ap.parse_args()

    queries, pools, table = data(args.fixture, args.repeat, args.synthetic)
    n, k = len(pools), args.k
    pool_bytes = sum(p.nbytes for p in pools)
    print(f"CPU: {cpu()}")
    print(f"mempursuit {mempursuit.__version__}, pyarrow {pa.__version__}, numpy {np.__version__}")
    print(
        f"data: {n} queries, pools of {min(map(len, pools))}..{max(map(len, pools))} candidates, "
        f"d = {queries.shape[1]}, {pool_bytes / 2**20:.0f} MiB of candidates; k = {k}, default method"
    )

    # The results agree before anything is timed.
    ref = [s.picks.tolist() for s in mempursuit.select_batch(queries, pools, k, threads=1)]
    got = mempursuit.arrow.select_arrow(table["query"], table["pool"], k, threads=1)
    assert got.column("picks").to_pylist() == ref

    tracemalloc.start()
    before, arrow_before = tracemalloc.get_traced_memory()[0], pa.total_allocated_bytes()
    tracemalloc.reset_peak()
    mempursuit.arrow.select_arrow(table["query"], table["pool"], k, threads=1)
    peak = tracemalloc.get_traced_memory()[1] - before
    arrow_grown = pa.total_allocated_bytes() - arrow_before
    tracemalloc.stop()
    print(
        f"select_arrow allocated {peak / 2**20:.2f} MiB (NumPy and Python objects, peak) and "
        f"{arrow_grown / 2**20:.2f} MiB (pyarrow) for {pool_bytes / 2**20:.0f} MiB of candidates"
    )

    modes = {
        "select_batch": (1, lambda: mempursuit.select_batch(queries, pools, k, threads=1)),
        "select_arrow": (
            1,
            lambda: mempursuit.arrow.select_arrow(table["query"], table["pool"], k, threads=1),
        ),
    }
    if args.cpus > 1:
        modes[f"select_batch x{args.cpus}"] = (
            args.cpus,
            lambda: mempursuit.select_batch(queries, pools, k, threads=args.cpus),
        )
    if not args.no_ray:
        import ray

        t0 = time.perf_counter()
        ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
        ray.data.DataContext.get_current().enable_progress_bars = False
        blocks = max(2 * args.cpus, -(-n // (4 * args.batch_size)))
        step = -(-n // blocks)
        ds = ray.data.from_arrow([table.slice(i, step) for i in range(0, n, step)]).materialize()

        def rerank(batch):  # README's recipe: the pools are not written back
            out = mempursuit.arrow.select_table(batch, k, query_column="query", pool_column="pool", threads=1)
            return out.drop_columns(["query", "pool"])

        def mapped():
            return ds.map_batches(
                rerank, batch_format="pyarrow", zero_copy_batch=True, batch_size=args.batch_size
            )

        def on_ray():
            assert mapped().materialize().count() == n

        def no_op(batch):  # the engine alone: the same tasks, no selection
            return batch.select(["id"])

        def on_ray_no_op():
            ds.map_batches(
                no_op, batch_format="pyarrow", zero_copy_batch=True, batch_size=args.batch_size
            ).materialize()

        on_ray()  # warm: workers started, mempursuit imported
        out = pa.concat_tables(ray.get(mapped().to_arrow_refs())).sort_by("id")
        assert out.column("mempursuit_picks").to_pylist() == ref
        print(
            f"ray {ray.__version__}: started in {time.perf_counter() - t0:.1f} s (not timed), "
            f"{blocks} blocks, batch size {args.batch_size}"
        )
        modes["ray"] = (args.cpus, on_ray)
        modes["ray, no selection"] = (args.cpus, on_ray_no_op)

    times = {name: [] for name in modes}
    for _ in range(args.rounds):
        for name, (_, fn) in modes.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)

    base = n / statistics.median(times["select_batch"])
    print(
        f"\n{'mode':18} {'cores':>5} {'q/s':>9} {'q/s/core':>9} {'range (q/s/core)':>19} {'vs select_batch':>16}"
    )
    for name, (cores, _) in modes.items():
        per_core = [n / t / cores for t in times[name]]
        med = statistics.median(per_core)
        print(
            f"{name:18} {cores:5d} {med * cores:9.0f} {med:9.0f} {min(per_core):9.0f}..{max(per_core):<9.0f} "
            f"{med / base:16.2f}"
        )
    if not args.no_ray:
        ray.shutdown()


if __name__ == "__main__":
    main()
