"""Every error of the Rust core and of the binding becomes a ValueError or a
TypeError whose message names the argument, the row and the element."""

import math
import re

import numpy as np
import pytest

import mempursuit

D = 4


def unit_rows(n, d=D, seed=0):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, d)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


Q = unit_rows(1, seed=1)[0]
POOL = unit_rows(6)


def with_value(row, col, value):
    p = POOL.copy()
    p[row, col] = value
    return p


# (candidates, kwargs, exact message) for the core's errors (its Display).
CORE_ERRORS = [
    (with_value(3, 2, np.nan), {}, "candidate 3: element 2 is not finite (NaN)"),
    (with_value(5, 0, np.inf), {}, "candidate 5: element 0 is not finite (inf)"),
    (with_value(1, 3, -np.inf), {}, "candidate 1: element 3 is not finite (-inf)"),
    (np.vstack([POOL[:2], np.zeros((1, D), np.float32)]), {}, "candidate 2: all elements are zero"),
    (POOL * np.float32(2.0), dict(normalization="require_unit"), None),
    (POOL, dict(relevance=np.ones(5)), "relevance has 5 entries but the pool has 6 candidates"),
    (POOL, dict(relevance=[0, 1, np.nan, 0, 0, 0]), "relevance 2 is not finite (NaN)"),
    (POOL, dict(gamma=1.5), "gamma 1.5 must be in (0, 1]"),
    (POOL, dict(gamma=0.0), "gamma 0 must be in (0, 1]"),
    (POOL, dict(gamma=math.nan), "gamma NaN must be in (0, 1]"),
    (POOL, dict(method="centroid", gamma=-1.0), "gamma -1 must be in (0, 1]"),
    (POOL, dict(ridge=-1.0), "ridge -1 must be >= 0 (+inf allowed)"),
    (POOL, dict(method="mmr", mmr_lambda=2.0), "MMR lambda 2 must be in [0, 1]"),
    (POOL, dict(optimum_tolerance=-1.0), "pool-optimum tolerance -1 must be finite and >= 0"),
]


@pytest.mark.parametrize("candidates,kwargs,message", CORE_ERRORS)
def test_core_errors_are_value_errors(candidates, kwargs, message):
    with pytest.raises(ValueError) as e:
        mempursuit.select(Q, candidates, 3, **kwargs)
    if message is None:  # require_unit: the norm is printed in full
        assert re.fullmatch(r"candidate 0: norm 1\.9999\d+ differs from 1 by more than 0\.001", str(e.value))
    else:
        assert str(e.value) == message


def test_query_errors():
    q = Q.copy()
    q[1] = np.nan
    with pytest.raises(ValueError, match=r"^query: element 1 is not finite \(NaN\)$"):
        mempursuit.select(q, POOL, 2)
    with pytest.raises(ValueError, match=r"^query: all elements are zero$"):
        mempursuit.select(np.zeros(D, np.float32), POOL, 2)
    with pytest.raises(ValueError, match=r"^query: norm .*e12 is outside \[1e-12, 1e12\]$"):
        mempursuit.select(np.array([1e13, 0, 0, 0], np.float32), POOL, 2)
    with pytest.raises(ValueError, match=r"^the query is empty \(dimension d = 0\)$"):
        mempursuit.select(np.zeros(0, np.float32), np.zeros((3, 0), np.float32), 2)


def test_norm_out_of_range_names_row():
    p = POOL.copy()
    p[4] *= np.float32(1e13)
    with pytest.raises(ValueError, match=r"^candidate 4: norm .* is outside \[1e-12, 1e12\]$"):
        mempursuit.select(Q, p, 2)


def test_float64_overflow_becomes_non_finite_element():
    p = POOL.astype(np.float64)
    p[2, 1] = 1e300  # beyond float32: the documented conversion gives inf
    with pytest.warns(RuntimeWarning), pytest.raises(
        ValueError, match=r"^candidate 2: element 1 is not finite \(inf\)$"
    ):
        mempursuit.select(Q, p, 2)


def test_shape_errors():
    with pytest.raises(ValueError, match=r"^candidates have d = 3 columns but the query has d = 4 elements$"):
        mempursuit.select(Q, POOL[:, :3], 2)
    with pytest.raises(ValueError, match=r"^candidates must have shape \(P, d\), got \(24,\)$"):
        mempursuit.select(Q, POOL.ravel(), 2)
    with pytest.raises(ValueError, match=r"^query must have shape \(d,\) or \(1, d\), got \(2, 4\)$"):
        mempursuit.select(POOL[:2], POOL, 2)
    with pytest.raises(ValueError, match=r"^relevance must have shape \(P,\), got \(1, 6\)$"):
        mempursuit.select(Q, POOL, 2, relevance=np.ones((1, 6)))
    with pytest.raises(ValueError, match=r"^candidates: "):  # numpy's message for a ragged list
        mempursuit.select(Q, [[1.0, 0, 0, 0], [1.0, 0]], 2)


def test_k_errors():
    for k in (2.0, "2", None, [2]):
        with pytest.raises(TypeError, match=r"^k must be an int, not "):
            mempursuit.select(Q, POOL, k)
    with pytest.raises(TypeError, match=r"^k must be an int, not bool$"):
        mempursuit.select(Q, POOL, True)
    with pytest.raises(ValueError, match=r"^k must be >= 0, got -1$"):
        mempursuit.select(Q, POOL, -1)
    # Anything with __index__ is an int.
    assert mempursuit.select(Q, POOL, np.int64(2)).picks.shape == (2,)


def test_dtype_errors():
    with pytest.raises(TypeError, match=r"^candidates: dtype complex128 is not real-valued"):
        mempursuit.select(Q, POOL.astype(complex), 2)
    with pytest.raises(TypeError, match=r"^query: dtype <U3 is not real-valued"):
        mempursuit.select(np.array(["0.5", "0.5", "0.5", "0.5"]), POOL, 2)
    with pytest.raises(TypeError, match=r"^relevance: dtype object is not real-valued"):
        mempursuit.select(Q, POOL, 2, relevance=np.array([None] * 6))


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (
            dict(method="foo"),
            "method must be one of 'pursuit', 'centroid', 'topk', 'mmr', 'recommended', got 'foo'",
        ),
        (dict(method="recommended", gamma=0.5), "gamma does not apply to method='recommended'"),
        (dict(method="recommended", ridge=0.0), "ridge does not apply to method='recommended'"),
        (dict(method="recommended", mmr_lambda=0.5), "mmr_lambda does not apply to method='recommended'"),
        (dict(method="recommended", adaptive=True), "adaptive does not apply to method='recommended'"),
        (dict(raw_relevance=True), "raw_relevance=True needs relevance= (the scores to use as given)"),
        (dict(dependent_picks="drop"), "dependent_picks must be 'keep' or 'skip', got 'drop'"),
        (dict(method="topk", dependent_picks="skip"), "dependent_picks does not apply to method='topk'"),
        (
            dict(method="centroid", dependent_picks="skip"),
            "dependent_picks does not apply to centroid pursuit (ridge = inf)",
        ),
        (
            dict(ridge=float("inf"), at_pool_optimum="fill"),
            "at_pool_optimum does not apply to centroid pursuit (ridge = inf)",
        ),
        (dict(storage="f64"), "storage must be 'f32', 'f16' or 'bf16', got 'f64'"),
        (dict(at_pool_optimum="halt"), "at_pool_optimum must be 'continue', 'stop' or 'fill', got 'halt'"),
        (dict(normalization="l2"), "normalization must be 'cosine' or 'require_unit', got 'l2'"),
        (dict(invalid="skip"), "invalid must be 'reject' or 'exclude', got 'skip'"),
        (dict(method="topk", gamma=0.5), "gamma does not apply to method='topk'"),
        (dict(method="mmr", ridge=1.0), "ridge does not apply to method='mmr'"),
        (dict(method="topk", adaptive=True), "adaptive does not apply to method='topk'"),
        (dict(method="topk", mmr_lambda=0.5), "mmr_lambda does not apply to method='topk'"),
        (dict(method="pursuit", mmr_lambda=0.5), "mmr_lambda does not apply to method='pursuit'"),
        (dict(method="mmr", at_pool_optimum="fill"), "at_pool_optimum does not apply to method='mmr'"),
        (
            dict(method="centroid", ridge=1.0),
            "method='centroid' is the pursuit with ridge = inf; got ridge=1 (use method='pursuit' for a finite ridge)",
        ),
        (
            dict(relevance=np.ones(6), pool_order=True),
            "pass either relevance= (the retriever's scores) or pool_order=True, not both",
        ),
    ],
)
def test_argument_errors(kwargs, message):
    with pytest.raises(ValueError) as e:
        mempursuit.select(Q, POOL, 2, **kwargs)
    assert str(e.value) == message
    # The same mapping for the Selector and the batch call.
    with pytest.raises(ValueError) as e:
        mempursuit.Selector().select(Q, POOL, 2, **kwargs)
    assert str(e.value) == message
    with pytest.raises(ValueError) as e:
        mempursuit.select_batch([Q], [POOL], 2, **kwargs)
    assert str(e.value) == message


def test_parameters_checked_even_when_nothing_is_selected():
    with pytest.raises(ValueError, match=r"^gamma 2 must be in \(0, 1\]$"):
        mempursuit.select(Q, POOL, 0, gamma=2.0)
    with pytest.raises(ValueError, match=r"^gamma 2 must be in \(0, 1\]$"):
        mempursuit.select_batch([], [], 3, gamma=2.0)


def test_batch_errors_name_the_pair():
    bad = with_value(3, 2, np.nan)
    with pytest.raises(ValueError) as e:
        mempursuit.select_batch([Q, Q, Q], [POOL, bad, bad], 2, threads=2)
    assert str(e.value) == "pair 1: candidate 3: element 2 is not finite (NaN)"
    with pytest.raises(ValueError, match=r"^2 queries but 3 pools: pass one pool per query$"):
        mempursuit.select_batch([Q, Q], [POOL] * 3, 2)
    with pytest.raises(ValueError, match=r"^2 queries but 1 relevance vectors$"):
        mempursuit.select_batch([Q, Q], [POOL] * 2, 2, relevance=[np.ones(6)])
    with pytest.raises(ValueError, match=r"^pools\[1\] have d = 3 columns but the query has d = 4 elements$"):
        mempursuit.select_batch([Q, Q], [POOL, POOL[:, :3]], 2)
    with pytest.raises(ValueError, match=r"^queries\[0\] must have shape \(d,\) or \(1, d\), got \(2, 4\)$"):
        mempursuit.select_batch([POOL[:2]], [POOL], 2)
    with pytest.raises(ValueError, match=r"^threads must be >= 1, got 0$"):
        mempursuit.select_batch([Q], [POOL], 2, threads=0)
    with pytest.raises(ValueError, match=r"^threads must be >= 1, got -2$"):
        mempursuit.select_batch([Q], [POOL], 2, threads=-2)
    with pytest.raises(TypeError, match=r"^pools must be an array or a sequence of arrays, not int$"):
        mempursuit.select_batch([Q], 5, 2)
    with pytest.raises(ValueError, match=r"^pools: an array must have 3 dimensions"):
        mempursuit.select_batch([Q], POOL, 2)
    with pytest.raises(TypeError, match=r"^pools\[0\]: dtype complex128 is not real-valued"):
        mempursuit.select_batch([Q], [POOL.astype(complex)], 2)


def test_exclude_instead_of_error():
    bad = with_value(3, 2, np.nan)
    bad[5] = 0.0
    sel = mempursuit.select(Q, bad, 6, invalid="exclude")
    assert sel.excluded.tolist() == [3, 5]
    assert sorted(sel.picks.tolist()) == [0, 1, 2, 4]
    assert sel.stop_reason == "pool_exhausted"


def test_error_leaves_input_unmodified():
    bad = with_value(3, 2, np.nan)
    before = bad.copy()
    with pytest.raises(ValueError):
        mempursuit.select(Q, bad, 2)
    np.testing.assert_array_equal(bad, before)
    assert bad.flags.writeable
