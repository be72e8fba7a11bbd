"""Ray Data runs mempursuit.arrow.select_table as a map_batches function on a
local Ray with 2 CPUs (offline: no cluster, no download) over the mini
fixture's ragged pools, and the picks, weights and stop reasons equal
select_batch's; inside Ray's tasks the call allocates nothing near the
pools' size; python/README.md's Ray recipe runs as written."""

import os

import numpy as np
import pytest

from _arrow_data import fixture_table, need, run_section

pa = need("pyarrow", "'./python[arrow]'")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report (offline)
ray = need("ray", "'ray[data]'", required_by="MEMPURSUIT_REQUIRE_RAY")

import mempursuit  # noqa: E402
import mempursuit.arrow as ma  # noqa: E402

K = 6


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray with 2 CPUs for this module (started once: about 10 s)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield ray
    ray.shutdown()


def blocks(table):
    """The table as a Ray dataset of 3 blocks (so several tasks run)."""
    return ray.data.from_arrow([table.slice(0, 8), table.slice(8, 8), table.slice(16)])


def collect(ds):
    return pa.concat_tables(ray.get(ds.to_arrow_refs())).sort_by("id")


def test_map_batches_equals_select_batch(local_ray, fixture):
    table, pools, rel = fixture_table(fixture)
    kwargs = dict(k=K, query_column="query", pool_column="pool", relevance_column="scores", threads=1)
    ds = blocks(table).map_batches(
        ma.select_table, fn_kwargs=kwargs, batch_format="pyarrow", zero_copy_batch=True, batch_size=5
    )
    out = collect(ds)
    assert out.column("id").to_pylist() == list(range(len(pools)))
    ref = mempursuit.select_batch(fixture.queries, pools, K, relevance=rel)
    assert out.column("mempursuit_picks").to_pylist() == [s.picks.tolist() for s in ref]
    assert out.column("mempursuit_weights").to_pylist() == [s.weights.tolist() for s in ref]
    assert out.column("mempursuit_stop_reason").to_pylist() == [s.stop_reason for s in ref]
    # Another method by name, no relevance column.
    kwargs = dict(k=K, query_column="query", pool_column="pool", threads=1, method="pursuit")
    out = collect(
        blocks(table).map_batches(
            ma.select_table, fn_kwargs=kwargs, batch_format="pyarrow", zero_copy_batch=True
        )
    )
    ref = mempursuit.select_batch(fixture.queries, pools, K, method="pursuit")
    assert out.column("mempursuit_picks").to_pylist() == [s.picks.tolist() for s in ref]


def measured(batch):
    """select_table on a Ray batch, with what the call allocated (NumPy and
    pyarrow, traced) and the pools' bytes, and the worker's pid."""
    import os
    import tracemalloc

    import pyarrow as pa

    import mempursuit.arrow as ma

    kwargs = dict(query_column="query", pool_column="pool", threads=1)
    ma.select_table(batch.slice(0, 1), 6, **kwargs)  # the worker's first call (imports)
    tracemalloc.start()
    before, arrow_before = tracemalloc.get_traced_memory()[0], pa.total_allocated_bytes()
    out = ma.select_table(batch, 6, **kwargs)
    grown = tracemalloc.get_traced_memory()[1] - before + pa.total_allocated_bytes() - arrow_before
    tracemalloc.stop()
    n = out.num_rows
    pool_bytes = batch.column("pool").combine_chunks().flatten().flatten().nbytes
    return (
        out.drop_columns(["query", "pool", "scores"])
        .append_column("allocated", pa.array([grown] * n, pa.int64()))
        .append_column("pool_bytes", pa.array([pool_bytes] * n, pa.int64()))
        .append_column("pid", pa.array([os.getpid()] * n, pa.int64()))
    )


def test_no_copy_inside_ray_tasks(local_ray, fixture):
    # The fixture's pools, 8 times over (192 rows, 13 MiB of candidates).
    table, _, _ = fixture_table(fixture)
    table = pa.concat_tables([table] * 8)
    table = table.set_column(0, "id", pa.array(np.arange(table.num_rows)))
    ray.cloudpickle.register_pickle_by_value(__import__(__name__))
    ds = ray.data.from_arrow([table.slice(0, 96), table.slice(96)])
    out = collect(ds.map_batches(measured, batch_format="pyarrow", zero_copy_batch=True, batch_size=96))
    assert os.getpid() not in out.column("pid").to_pylist()  # ran in Ray's workers
    # About 1.2 KiB per row (the Selection objects and result arrays,
    # measured: 120 KiB for 96 rows) against 67 KiB of candidates per row;
    # a copy of the pools would be all of them.
    for allocated, pool_bytes in zip(
        out.column("allocated").to_pylist(), out.column("pool_bytes").to_pylist()
    ):
        assert pool_bytes > 4 << 20
        assert (
            allocated < pool_bytes / 10
        ), f"a task allocated {allocated} bytes for {pool_bytes} bytes of pools"
    ref = mempursuit.select_batch(
        np.tile(fixture.queries, (8, 1)), [fixture.pool(i % 24) for i in range(192)], 6
    )
    assert out.column("mempursuit_picks").to_pylist() == [s.picks.tolist() for s in ref]


def test_readme_ray_recipe(local_ray, monkeypatch):
    # Ray is already up (2 CPUs): the recipe's ray.init is checked, not rerun.
    calls = []
    monkeypatch.setattr(ray, "init", lambda **kw: calls.append(kw))
    env, out = run_section()
    assert calls == [{"num_cpus": 2}]
    table = env["table"]
    queries = np.asarray(table["query"].combine_chunks().flatten()).reshape(table.num_rows, -1)
    pools = [
        np.asarray(p.values.flatten()).reshape(-1, queries.shape[1]) for p in table["pool"].combine_chunks()
    ]
    ref = [s.picks.tolist() for s in mempursuit.select_batch(queries, pools, 2)]
    picked = pa.concat_tables(ray.get(env["picked"]))
    assert "pool" not in picked.column_names
    assert picked.column("mempursuit_picks").to_pylist() == ref  # one block: in order
    assert out.splitlines()[-1] == str(ref)
