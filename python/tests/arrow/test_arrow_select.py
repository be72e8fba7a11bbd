"""mempursuit.arrow: select_arrow / select_table on Arrow columns equal
select_batch on the same vectors (every layout: chunked, sliced, list or
fixed-size-list vectors, float16), use the Arrow buffers without a copy, and
reject nulls, mismatched offsets, dimensions and types naming the column and
row."""

import tracemalloc

import numpy as np
import pytest

from _arrow_data import fixture_table, need

pa = need("pyarrow", "'./python[arrow]'")

import mempursuit  # noqa: E402
import mempursuit.arrow as ma  # noqa: E402

K = 6


def rows(result, prefix=""):
    """The result columns as Python lists."""
    return {c: result.column(prefix + c).to_pylist() for c in ma.RESULT_COLUMNS}


def expected(selections):
    """select_batch's selections as select_arrow's rows (weights None where
    the method has none)."""
    return {
        "picks": [s.picks.tolist() for s in selections],
        "weights": [s.weights.tolist() if len(s.weights) == len(s.picks) else None for s in selections],
        "stop_reason": [s.stop_reason for s in selections],
        "excluded": [s.excluded.tolist() for s in selections],
        "skipped": [s.skipped.tolist() for s in selections],
    }


@pytest.fixture(scope="module")
def data(fixture):
    return fixture_table(fixture)


OPTIONS = [
    {},
    dict(method="pursuit"),
    dict(method="topk"),
    dict(method="mmr", mmr_lambda=0.3),
    dict(method="centroid", gamma=0.4, storage="int8"),
    dict(method="pursuit", dependent_picks="skip", adaptive=True, at_pool_optimum="stop"),
]


@pytest.mark.parametrize("options", OPTIONS)
def test_select_arrow_equals_select_batch(fixture, data, options):
    table, pools, rel = data
    queries = fixture.queries[: len(pools)]
    got = ma.select_arrow(table["query"], table["pool"], K, threads=2, **options)
    assert isinstance(got, pa.RecordBatch) and got.num_rows == len(pools)
    assert got.schema.names == list(ma.RESULT_COLUMNS)
    assert str(got.schema.field("picks").type) == "list<item: int64>"
    assert str(got.schema.field("weights").type) == "list<item: double>"
    assert rows(got) == expected(mempursuit.select_batch(queries, pools, K, **options))
    # With the retriever's scores (a list<float32> column) as relevance.
    got = ma.select_arrow(table["query"], table["pool"], K, relevance=table["scores"], **options)
    assert rows(got) == expected(mempursuit.select_batch(queries, pools, K, relevance=rel, **options))


def test_weights_null_only_without_weights(data):
    table, _, _ = data
    topk = ma.select_arrow(table["query"], table["pool"], 3, method="topk")
    assert topk.column("weights").null_count == topk.num_rows
    pursuit = ma.select_arrow(table["query"], table["pool"], 3, method="pursuit")
    assert pursuit.column("weights").null_count == 0
    for w in pursuit.column("weights").to_pylist():
        assert len(w) == 3 and abs(sum(w) - 1) < 1e-9


def test_select_table_appends_the_result(fixture, data):
    table, pools, rel = data
    table = table.replace_schema_metadata({"source": "hotpotqa-mini"})
    ref = expected(mempursuit.select_batch(fixture.queries, pools, K, relevance=rel, method="pursuit"))
    for batch in (table, table.to_batches()[0]):
        out = ma.select_table(
            batch, K, query_column="query", pool_column="pool", relevance_column="scores", method="pursuit"
        )
        assert type(out) is type(batch)
        assert out.schema.names == table.schema.names + ["mempursuit_" + c for c in ma.RESULT_COLUMNS]
        assert out.schema.metadata == {b"source": b"hotpotqa-mini"}
        assert rows(out, "mempursuit_") == ref
        assert out.column("id").to_pylist() == list(range(len(pools)))
    out = ma.select_table(table, K, query_column="query", pool_column="pool", prefix="mp.")
    assert "mp.picks" in out.schema.names
    # Ray Data's map_batches: the function as it stands, through fn_kwargs.
    kwargs = dict(k=K, query_column="query", pool_column="pool", relevance_column="scores", method="pursuit")
    assert rows(ma.select_table(table, **kwargs), "mempursuit_") == ref


def test_layouts_chunked_sliced_lists_and_float16(fixture, data):
    table, pools, rel = data
    n = len(pools)
    ref = expected(mempursuit.select_batch(fixture.queries, pools, K, relevance=rel))

    def select(q, p, r, **kw):
        return rows(ma.select_arrow(q, p, K, relevance=r, **kw))

    # Columns chunked differently from one another.
    q = pa.chunked_array([table["query"].chunk(0).slice(0, 5), table["query"].chunk(0).slice(5)])
    p = pa.chunked_array([table["pool"].chunk(0).slice(a, b - a) for a, b in [(0, 10), (10, 11), (11, n)]])
    r = pa.chunked_array(
        [
            table["scores"].chunk(0).slice(0, 3),
            table["scores"].chunk(0).slice(3, 0),
            table["scores"].chunk(0).slice(3),
        ]
    )
    assert select(q, p, r) == ref
    # A slice of the columns (Ray's zero-copy batches are slices).
    sl = table.slice(7, 9)
    got = select(sl["query"], sl["pool"], sl["scores"])
    assert got == {c: v[7:16] for c, v in ref.items()}
    # list<float32> vectors (a pandas or Parquet export), large lists, float64 scores.
    lq = pa.array([list(map(float, v)) for v in fixture.queries], pa.list_(pa.float32()))
    lp = pa.array([p.tolist() for p in pools], pa.large_list(pa.list_(pa.float32())))
    lr = table["scores"].cast(pa.large_list(pa.float64()))
    assert select(lq, lp, lr) == ref
    # float16 candidates: used as float16 (storage f16), as select_batch does.
    half = pa.ListArray.from_arrays(
        table["pool"].chunk(0).offsets,
        pa.FixedSizeListArray.from_arrays(pa.array(np.concatenate(pools).astype(np.float16).ravel()), 384),
    )
    got = rows(ma.select_arrow(table["query"], half, K, storage="f16"))
    assert got == expected(
        mempursuit.select_batch(fixture.queries, [p.astype(np.float16) for p in pools], K, storage="f16")
    )
    # No rows: an empty result with the same columns.
    empty = ma.select_arrow(table["query"].slice(0, 0), table["pool"].slice(0, 0), K)
    assert empty.num_rows == 0 and empty.schema.names == list(ma.RESULT_COLUMNS)


def test_empty_pools(fixture):
    q = pa.FixedSizeListArray.from_arrays(pa.array(fixture.queries[:3].ravel()), 384)
    p = pa.array([[], fixture.pool(1)[:4].tolist(), []], pa.list_(pa.list_(pa.float32())))
    got = rows(ma.select_arrow(q, p, 2, method="topk"))
    ref = mempursuit.select_batch(
        fixture.queries[:3],
        [np.zeros((0, 384), np.float32), fixture.pool(1)[:4], np.zeros((0, 384), np.float32)],
        2,
        method="topk",
    )
    assert got == expected(ref)
    none = pa.array([[], []], pa.list_(pa.list_(pa.float32())))  # no vector tells d
    got = rows(ma.select_arrow(q.slice(0, 2), none, 2))
    assert got["picks"] == [[], []]


def buffers_of(*columns):
    """(start, stop) addresses of every buffer of the columns' chunks."""
    spans = []
    for column in columns:
        for chunk in column.chunks if isinstance(column, pa.ChunkedArray) else [column]:
            stack = [chunk]
            while stack:
                a = stack.pop()
                spans += [(b.address, b.address + b.size) for b in a.buffers() if b is not None]
                stack += [a.values] if hasattr(a, "values") and not pa.types.is_primitive(a.type) else []
    return spans


def test_views_point_into_the_arrow_buffers(data):
    table, _, _ = data
    sliced = table.slice(3, 15)
    segments = ma._arguments(sliced["query"], sliced["pool"], sliced["scores"])
    assert len(segments) == 1
    ((start, args),) = segments
    spans = buffers_of(table["query"], table["pool"], table["scores"])
    for key in ("queries", "pools", "relevance"):
        view = args[key]
        first = view.__array_interface__["data"][0]
        last = first + view.nbytes
        assert not view.flags.owndata and not view.flags.writeable, key
        assert any(a <= first and last <= b for a, b in spans), f"{key} is not a view of an Arrow buffer"
    # The slice's first query is row 3 of the column.
    assert np.array_equal(args["queries"][0], np.asarray(table["query"][3].values))
    assert args["offsets"][0] == 0 and args["offsets"][-1] == args["pools"].shape[0]


def test_no_copy_of_the_embeddings():
    # 256 ragged pools, 50 MiB of float32 candidates in one Arrow column:
    # the call allocates nothing near that (NumPy and pyarrow allocations,
    # traced); a float64 copy of the same pools, the control, does show.
    rng = np.random.default_rng(5)
    d, n = 384, 256
    sizes = rng.integers(64, 192, n)
    matrix = rng.standard_normal((int(sizes.sum()), d), dtype=np.float32)
    offsets = pa.array(np.cumsum([0, *sizes]), pa.int32())
    pools = pa.ListArray.from_arrays(offsets, pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), d))
    queries = pa.FixedSizeListArray.from_arrays(pa.array(rng.standard_normal(n * d, dtype=np.float32)), d)
    del matrix
    ma.select_arrow(queries.slice(0, 2), pools.slice(0, 2), 2)  # warm up (imports)
    tracemalloc.start()
    try:
        before, arrow_before = tracemalloc.get_traced_memory()[0], pa.total_allocated_bytes()
        tracemalloc.reset_peak()
        got = ma.select_arrow(queries, pools, 8, threads=2)
        numpy_peak = tracemalloc.get_traced_memory()[1] - before
        arrow_growth = pa.total_allocated_bytes() - arrow_before
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        (a,) = ma._arguments(queries, pools)
        mempursuit.select_batch(a[1]["queries"], a[1]["pools"].astype(np.float64), 8, offsets=a[1]["offsets"])
        control = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    nbytes = int(sizes.sum()) * d * 4
    assert got.num_rows == n
    assert (
        numpy_peak < nbytes / 100
    ), f"select_arrow allocated {numpy_peak} bytes (NumPy) for {nbytes} bytes of pools"
    assert arrow_growth < nbytes / 100, f"select_arrow allocated {arrow_growth} bytes (pyarrow)"
    assert control > nbytes, f"the float64 control allocated only {control} bytes"


# --- errors ----------------------------------------------------------------


def small():
    """3 queries (d = 4) with pools of 2, 3 and 1 candidates and scores."""
    q = pa.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]], pa.list_(pa.float32(), 4))
    p = pa.array(
        [
            [[1, 0, 0, 0], [1, 1, 0, 0]],
            [[0, 1, 0, 0], [0, 1, 1, 0], [1, 0, 0, 1]],
            [[0, 0, 1, 1]],
        ],
        pa.list_(pa.list_(pa.float32(), 4)),
    )
    r = pa.array([[1.0, 0.5], [0.3, 0.2, 0.1], [1.0]], pa.list_(pa.float32()))
    return q, p, r


def with_null(array, i):
    """``array`` with element i null (its other values unchanged)."""
    values = array.to_pylist()
    values[i] = None
    return pa.array(values, array.type)


def nested_null(p, row, candidate, element=None):
    values = p.to_pylist()
    if element is None:
        values[row][candidate] = None
    else:
        values[row][candidate][element] = None
    return pa.array(values, p.type)


def test_small_example_selects():
    q, p, r = small()
    got = rows(ma.select_arrow(q, p, 2, relevance=r, method="topk"))
    assert got["picks"] == [[0, 1], [0, 1], [0]]


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda q, p, r: (with_null(q, 1), p, r), "queries: row 1 is null; drop the row or fill it"),
        (lambda q, p, r: (q, with_null(p, 2), r), "pools: row 2 is null; drop the row or fill it"),
        (lambda q, p, r: (q, p, with_null(r, 0)), "relevance: row 0 is null; drop the row or fill it"),
        (lambda q, p, r: (q, nested_null(p, 1, 2), r), "pools: row 1: candidate 2 is null"),
        (lambda q, p, r: (q, nested_null(p, 1, 2, 3), r), "pools: row 1: candidate 2: element 3 is null"),
        (
            lambda q, p, r: (pa.array([[1, 0, 0, 0], [0, 1, None, 0], [0, 0, 1, 0]], q.type), p, r),
            "queries: row 1: element 2 is null",
        ),
        (
            lambda q, p, r: (q, p, pa.array([[1.0, 0.5], [0.3, None, 0.1], [1.0]], r.type)),
            "relevance: row 1: value 1 is null",
        ),
        (
            lambda q, p, r: (q, p, pa.array([[1.0, 0.5], [0.3, 0.2], [1.0]], r.type)),
            "relevance: row 1 has 2 values but its pool (pools row 1) has 3 candidates: "
            "the list offsets must match the pools'",
        ),
        (lambda q, p, r: (q.slice(0, 2), p, r), "queries has 2 rows but pools has 3: pass one row per query"),
        (
            lambda q, p, r: (q, p, r.slice(1)),
            "queries has 3 rows but relevance has 2: pass one row per query",
        ),
        (
            lambda q, p, r: (pa.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]], pa.list_(pa.float32(), 3)), p, r),
            "pools: the candidates have d = 4 values but the queries (queries) have d = 3: "
            "embed both with the same model",
        ),
        (
            lambda q, p, r: (pa.array([[1, 0, 0, 0], [0, 1, 0], [0, 0, 1, 0]], pa.list_(pa.float32())), p, r),
            "queries: row 1 has 3 values but row 0 has 4: every embedding must have the same dimension d",
        ),
        (
            lambda q, p, r: (
                q,
                pa.array([[[1, 0, 0, 0], [1, 1, 0]], [], []], pa.list_(pa.list_(pa.float32()))),
                r.slice(0, 3),
            ),
            "pools: row 0: candidate 1 has 3 values but row 0: candidate 0 has 4",
        ),
    ],
)
def test_data_errors_name_the_column_and_row(change, message):
    q, p, r = change(*small())
    with pytest.raises(mempursuit.MemPursuitError) as e:
        ma.select_arrow(q, p, 2, relevance=r)
    assert e.value.kind == "input"
    assert message in str(e.value), str(e.value)


def test_errors_in_later_chunks_name_the_row_of_the_whole_column(fixture, data):
    table, pools, _ = data
    values = table["pool"].to_pylist()
    values[15][4][7] = float("nan")
    bad = pa.chunked_array(
        [pa.array(values[:10], table["pool"].type), pa.array(values[10:], table["pool"].type)]
    )
    with pytest.raises(
        mempursuit.MemPursuitError, match=r"^pair 15: candidate 4: element 7 is not finite \(NaN\)"
    ):
        ma.select_arrow(table["query"], bad, K)
    values[15][4][7] = None
    bad = pa.chunked_array(
        [pa.array(values[:10], table["pool"].type), pa.array(values[10:], table["pool"].type)]
    )
    with pytest.raises(mempursuit.MemPursuitError, match=r"^pools: row 15: candidate 4: element 7 is null$"):
        ma.select_arrow(table["query"], bad, K)
    # select_table names the column.
    t = table.set_column(table.schema.get_field_index("pool"), "pool", bad)
    with pytest.raises(
        mempursuit.MemPursuitError, match=r"^column 'pool': row 15: candidate 4: element 7 is null$"
    ):
        ma.select_table(t, K, query_column="query", pool_column="pool")


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda q, p, r: (q.cast(pa.list_(pa.float64(), 4)), p, r),
            "queries: type fixed_size_list<item: double>[4] is not fixed_size_list<float32>[d]",
        ),
        (
            lambda q, p, r: (q, p.cast(pa.list_(pa.list_(pa.float64(), 4))), r),
            "pools: type list<item: fixed_size_list<item: double>[4]> is not list<fixed_size_list<float32>[d]>",
        ),
        (
            lambda q, p, r: (q, p.flatten().slice(0, 3), r),
            "pools: type fixed_size_list<item: float>[4] is not list<fixed_size_list<float32>[d]>",
        ),
        (
            lambda q, p, r: (q, p, pa.array([[1, 2], [3, 4, 5], [6]], pa.list_(pa.int32()))),
            "relevance: type list<item: int32> is not list<float32>",
        ),
        (
            lambda q, p, r: (pa.array(["a", "b", "c"]), p, r),
            "queries: type string is not fixed_size_list<float32>[d]",
        ),
        (
            lambda q, p, r: (np.zeros((3, 4), np.float32), p, r),
            "queries must be a pyarrow Array or ChunkedArray, not ndarray",
        ),
    ],
)
def test_type_errors_name_the_column_and_the_expected_type(change, message):
    q, p, r = change(*small())
    with pytest.raises(TypeError) as e:
        ma.select_arrow(q, p, 2, relevance=r)
    assert message in str(e.value), str(e.value)


def test_option_errors_are_select_batch_s(data):
    table, _, _ = data
    with pytest.raises(mempursuit.MemPursuitError, match=r"gamma 2 must be in \(0, 1\]") as e:
        ma.select_arrow(table["query"], table["pool"], 3, method="pursuit", gamma=2)
    assert e.value.kind == "option"
    with pytest.raises(TypeError):
        ma.select_arrow(table["query"], table["pool"], 2.5)
    # Options are checked even for an empty batch.
    with pytest.raises(mempursuit.MemPursuitError, match="gamma"):
        ma.select_arrow(table["query"].slice(0, 0), table["pool"].slice(0, 0), 3, method="pursuit", gamma=2)


def test_select_table_errors(data):
    table, _, _ = data
    with pytest.raises(
        mempursuit.MemPursuitError,
        match=r"pool_column: the batch has no column 'pools' \(its columns: id, query, pool, scores\)",
    ):
        ma.select_table(table, 3, query_column="query", pool_column="pools")
    out = ma.select_table(table, 3, query_column="query", pool_column="pool")
    with pytest.raises(
        mempursuit.MemPursuitError, match=r"already has a column 'mempursuit_picks'; pass another prefix="
    ) as e:
        ma.select_table(out, 3, query_column="query", pool_column="pool")
    assert e.value.kind == "option"
    with pytest.raises(
        TypeError, match=r"relevance comes from a column of the batch; pass relevance_column="
    ):
        ma.select_table(table, 3, query_column="query", pool_column="pool", relevance=[1.0])
    with pytest.raises(TypeError, match="batch must be a pyarrow Table or RecordBatch, not dict"):
        ma.select_table({"query": []}, 3, query_column="query", pool_column="pool")


def test_costs_column_is_checked_like_relevance(data):
    # The costs column is validated with relevance's rules before the call
    # (it goes to select_batch as costs=).
    q, p, r = small()
    with pytest.raises(
        mempursuit.MemPursuitError,
        match=r"costs: row 1 has 2 values but its pool \(pools row 1\) has 3 candidates",
    ):
        ma.select_arrow(q, p, 2, costs=pa.array([[1.0, 1.0], [1.0, 1.0], [1.0]], pa.list_(pa.float32())))
    segments = ma._arguments(q, p, None, r)
    assert segments[0][1]["costs"].tolist() == r.flatten().to_pylist()


def test_arrow_data_not_modified(data):
    table, _, _ = data
    before = [c.to_pylist() for c in table.columns]
    ma.select_table(table, K, query_column="query", pool_column="pool", relevance_column="scores")
    assert [c.to_pylist() for c in table.columns] == before


def test_readme_arrow_snippet():
    from _arrow_data import readme_blocks, run_section

    assert len(readme_blocks()) == 2
    env, out = run_section(1)
    table = env["table"]
    queries = np.asarray(table["query"].combine_chunks().flatten()).reshape(3, 8)
    pools = [np.asarray(p.values.flatten()).reshape(-1, 8) for p in table["pool"].combine_chunks()]
    assert [len(p) for p in pools] == [5, 3, 4]
    ref = [s.picks.tolist() for s in mempursuit.select_batch(queries, pools, 2)]
    assert env["result"].column("picks").to_pylist() == ref
    assert out.splitlines()[0] == str(ref)
    pursuit = [s.picks.tolist() for s in mempursuit.select_batch(queries, pools, 2, method="pursuit")]
    assert env["picked"].column("mempursuit_picks").to_pylist() == pursuit
    assert out.splitlines()[1] == str(["query", "pool"] + ["mempursuit_" + c for c in ma.RESULT_COLUMNS])


def test_benchmark_script_runs():
    # python/examples/bench_arrow.py (BENCHMARKS.md), in process only: it
    # checks select_arrow's picks against select_batch's before timing.
    import pathlib
    import subprocess
    import sys

    script = pathlib.Path(__file__).resolve().parents[2] / "examples" / "bench_arrow.py"
    args = [sys.executable, str(script), "--repeat", "2", "--rounds", "1", "--no-ray", "--cpus", "2"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    assert "data: 48 queries" in out and "of candidates; k = 10" in out
    for mode in ("select_batch ", "select_arrow ", "select_batch x2 "):
        assert any(line.startswith(mode) for line in out.splitlines()), out
