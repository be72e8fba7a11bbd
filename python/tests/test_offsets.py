"""select_batch with ragged pools as one (N, d) matrix and n + 1 offsets
(CSR style, the layout of an Arrow list column): the same selections as the
sequence of pools, the matrix borrowed once without a copy, and offsets
that do not describe the matrix rejected with the offending entry named."""

import tracemalloc

import numpy as np
import pytest

import mempursuit
from test_api import same


def ragged(fixture, n=None):
    """The fixture's pools (sizes differ) as a matrix, its offsets, the pools
    as a list, and one relevance vector per pool."""
    n = len(fixture.specs) if n is None else n
    pools = [fixture.pool(i) for i in range(n)]
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in pools])])
    rel = [np.cos(np.arange(len(p), dtype=np.float32) * (i + 1)) for i, p in enumerate(pools)]
    return np.concatenate(pools), offsets, pools, rel


@pytest.mark.parametrize(
    "kw",
    [
        {},
        dict(method="pursuit"),
        dict(method="mmr", mmr_lambda=0.3),
        dict(method="topk"),
        dict(storage="int8"),
        dict(method="pursuit", dependent_picks="skip", adaptive=True),
    ],
)
def test_offsets_equal_the_sequence_of_pools(fixture, kw):
    matrix, offsets, pools, rel = ragged(fixture)
    n = len(pools)
    assert len(set(offsets[1:] - offsets[:-1])) > 5  # really ragged
    for threads in (1, 2):
        a = mempursuit.select_batch(fixture.queries, matrix, 7, offsets=offsets, threads=threads, **kw)
        b = mempursuit.select_batch(fixture.queries, pools, 7, threads=threads, **kw)
        assert len(a) == n
        for x, y in zip(a, b):
            same(x, y)
    # Relevance as one vector aligned with the matrix rows.
    a = mempursuit.select_batch(
        fixture.queries, matrix, 7, offsets=offsets, relevance=np.concatenate(rel), **kw
    )
    b = mempursuit.select_batch(fixture.queries, pools, 7, relevance=rel, **kw)
    for x, y in zip(a, b):
        same(x, y)


def test_offsets_dtypes_layouts_and_empty_pools(fixture):
    matrix, offsets, pools, _ = ragged(fixture, 6)
    expected = [s.picks.tolist() for s in mempursuit.select_batch(fixture.queries[:6], pools, 4)]
    for off in (offsets.astype(np.int32), offsets.astype(np.uint16), offsets.tolist()):
        got = mempursuit.select_batch(fixture.queries[:6], matrix, 4, offsets=off)
        assert [s.picks.tolist() for s in got] == expected
    # Converted once as a whole: Fortran order, float64.
    for m in (np.asfortranarray(matrix), matrix.astype(np.float64)):
        got = mempursuit.select_batch(fixture.queries[:6], m, 4, offsets=offsets)
        assert [s.picks.tolist() for s in got] == expected
    # float16 is kept as float16 (storage f16), as a sequence of float16 pools.
    half = mempursuit.select_batch(
        fixture.queries[:6], matrix.astype(np.float16), 4, offsets=offsets, storage="f16"
    )
    ref = mempursuit.select_batch(
        fixture.queries[:6], [p.astype(np.float16) for p in pools], 4, storage="f16"
    )
    for x, y in zip(half, ref):
        same(x, y)
    # Empty pools (equal offsets) are empty selections, as an empty array is.
    off = np.array([0, 0, 3, 3, 5])
    got = mempursuit.select_batch(fixture.queries[:4], matrix[:5], 2, offsets=off, method="topk")
    ref = mempursuit.select_batch(
        fixture.queries[:4], [matrix[a:b] for a, b in zip(off, off[1:])], 2, method="topk"
    )
    assert [s.picks.tolist() for s in got] == [s.picks.tolist() for s in ref]
    assert [len(s) for s in got] == [0, 2, 0, 2]
    assert (
        mempursuit.select_batch(np.zeros((0, 4), np.float32), np.zeros((0, 4), np.float32), 2, offsets=[0])
        == []
    )


def test_offsets_borrow_the_matrix_once():
    # 160 ragged pools in one 31 MiB float32 matrix: the call allocates
    # (numpy, traced) nothing near it; a float64 matrix is converted once.
    rng = np.random.default_rng(7)
    d, n = 256, 160
    sizes = rng.integers(100, 300, n)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    matrix = rng.standard_normal((offsets[-1], d), dtype=np.float32)
    queries = rng.standard_normal((n, d), dtype=np.float32)
    wide = matrix.astype(np.float64)
    tracemalloc.start()
    try:

        def growth(m):
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            mempursuit.select_batch(queries, m, 5, offsets=offsets, threads=2)
            return tracemalloc.get_traced_memory()[1] - before

        borrowed, converted = growth(matrix), growth(wide)
    finally:
        tracemalloc.stop()
    assert borrowed < matrix.nbytes / 50, f"{borrowed} bytes allocated for a {matrix.nbytes}-byte matrix"
    assert converted > matrix.nbytes, f"the float64 control allocated only {converted} bytes"


@pytest.mark.parametrize(
    "offsets, message",
    [
        ([0, 3, 5], "offsets must have shape (n + 1,) = (4,) for 3 queries, got (3,)"),
        ([[0, 3, 5, 9]], "offsets must have shape (n + 1,) = (4,) for 3 queries, got (1, 4)"),
        ([1, 3, 5, 9], "offsets[0] = 1 must be 0 (pool 0 starts at row 0)"),
        ([0, 5, 3, 9], "offsets[2] = 3 is below offsets[1] = 5: offsets must not decrease"),
        ([0, 3, 5, 8], "offsets[3] = 8 must equal the number of rows of pools, 9"),
        ([0, 3, 5, 10], "offsets[3] = 10 must equal the number of rows of pools, 9"),
        ([0, -1, 5, 9], "offsets[2] = 5 is below"),
    ],
)
def test_offsets_errors_name_the_entry(offsets, message):
    queries = np.ones((3, 4), np.float32)
    matrix = np.eye(9, 4, dtype=np.float32) + 0.5
    with pytest.raises(mempursuit.MemPursuitError) as e:
        mempursuit.select_batch(queries, matrix, 2, offsets=offsets)
    assert e.value.kind == "input"
    if message.endswith("below"):
        assert "offsets[1] = -1 is below offsets[0] = 0" in str(e.value)
    else:
        assert message in str(e.value)


def test_offsets_shape_and_type_errors():
    queries = np.ones((2, 4), np.float32)
    matrix = np.eye(6, 4, dtype=np.float32) + 0.5
    with pytest.raises(TypeError, match=r"offsets: dtype float64 is not an integer type"):
        mempursuit.select_batch(queries, matrix, 2, offsets=np.array([0.0, 3.0, 6.0]))
    with pytest.raises(TypeError, match=r"offsets: dtype bool is not an integer type"):
        mempursuit.select_batch(queries, matrix, 2, offsets=np.array([False, True, True]))
    with pytest.raises(
        mempursuit.MemPursuitError, match=r"pools: with offsets, pools must be one matrix of shape \(N, d\)"
    ):
        mempursuit.select_batch(queries, matrix.reshape(2, 3, 4), 2, offsets=[0, 1, 2])
    with pytest.raises(
        mempursuit.MemPursuitError, match=r"relevance must be one vector of shape \(N,\) = \(6,\)"
    ):
        mempursuit.select_batch(queries, matrix, 2, offsets=[0, 3, 6], relevance=np.ones((2, 3), np.float32))
    with pytest.raises(
        mempursuit.MemPursuitError, match=r"pools\[0\] have d = 4 columns but the query has d = 3"
    ):
        mempursuit.select_batch(np.ones((2, 3), np.float32), matrix, 2, offsets=[0, 0, 6])
    # A bad value in pool 1 is named by its pool and row within it.
    bad = matrix.copy()
    bad[4, 2] = np.nan
    with pytest.raises(
        mempursuit.MemPursuitError, match=r"^pair 1: candidate 1: element 2 is not finite \(NaN\)"
    ):
        mempursuit.select_batch(queries, bad, 2, offsets=[0, 3, 6])
    assert not np.isnan(matrix).any()  # the caller's matrix is untouched
