"""Every error of the Rust library and of the binding: a MemPursuitError (a
ValueError) with the library's kind ("input", "option", "capacity") and
message, naming the argument, the row and the element; a CapacityError (also
a MemoryError) for memory; a TypeError naming the argument for a Python type
it cannot take. Never a PanicException."""

import math
import pickle
import re

import numpy as np
import pytest

import mempursuit
from mempursuit import CapacityError, MemPursuitError

D = 4


def unit_rows(n, d=D, seed=0):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, d)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


Q = unit_rows(1, seed=1)[0]
POOL = unit_rows(6)
PAPER = dict(method="pursuit")


def with_value(row, col, value):
    p = POOL.copy()
    p[row, col] = value
    return p


def raises(kind, message, call, *args, **kwargs):
    """`call(*args, **kwargs)` raises MemPursuitError of `kind` whose message
    is `message` (a str: exactly; a compiled regex: fullmatch)."""
    with pytest.raises(MemPursuitError) as e:
        call(*args, **kwargs)
    assert e.value.kind == kind
    if isinstance(message, str):
        assert str(e.value) == message
    else:
        assert message.fullmatch(str(e.value)), str(e.value)
    return e.value


def test_exception_family():
    assert issubclass(MemPursuitError, ValueError)
    assert issubclass(CapacityError, MemPursuitError)
    assert issubclass(CapacityError, MemoryError)
    assert MemPursuitError.__module__ == "mempursuit"
    e = MemPursuitError("candidate 1: all elements are zero", "input")
    assert str(e) == "candidate 1: all elements are zero" and e.kind == "input"
    c = CapacityError("too big")
    assert c.kind == "capacity"
    for err in (e, c):
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and str(back) == str(err) and back.kind == err.kind


# (candidates, kwargs, kind, exact message) for the library's errors (its
# Display).
# The remedy after an unusable candidate row (issue 30, item 7).
EXCLUDE = "; or set option 'invalid' to 'exclude' to leave such rows out (listed in excluded)"
LIBRARY_ERRORS = [
    (with_value(3, 2, np.nan), {}, "input", "candidate 3: element 2 is not finite (NaN)" + EXCLUDE),
    (with_value(5, 0, np.inf), {}, "input", "candidate 5: element 0 is not finite (inf)" + EXCLUDE),
    (with_value(1, 3, -np.inf), {}, "input", "candidate 1: element 3 is not finite (-inf)" + EXCLUDE),
    (np.vstack([POOL[:2], np.zeros((1, D), np.float32)]), {}, "input", "candidate 2: all elements are zero" + EXCLUDE),
    (
        POOL * np.float32(2.0),
        dict(normalization="require_unit"),
        "input",
        re.compile(r"candidate 0: norm 1\.9999\d+ differs from 1 by more than 0\.001"),
    ),
    (POOL, dict(relevance=np.ones(5)), "input", "relevance has 5 entries but the pool has 6 candidates"),
    (POOL, dict(relevance=[0, 1, np.nan, 0, 0, 0]), "input", "relevance 2 is not finite (NaN)"),
    (POOL, dict(gamma=1.5, **PAPER), "option", "gamma 1.5 must be in (0, 1]"),
    (POOL, dict(gamma=0.0, **PAPER), "option", "gamma 0 must be in (0, 1]"),
    (POOL, dict(gamma=math.nan, **PAPER), "option", "gamma NaN must be in (0, 1]"),
    (POOL, dict(method="centroid", gamma=-1.0), "option", "gamma -1 must be in (0, 1]"),
    (POOL, dict(ridge=-1.0, **PAPER), "option", "ridge -1 must be >= 0 (+inf allowed)"),
    (POOL, dict(method="mmr", mmr_lambda=2.0), "option", "MMR lambda 2 must be in [0, 1]"),
    (
        POOL,
        dict(optimum_tolerance=-1.0, **PAPER),
        "option",
        "pool-optimum tolerance -1 must be finite and >= 0",
    ),
    (
        with_value(2, 1, 70000.0),
        dict(storage="f16"),
        "input",
        "candidate 2: element 1 = 70000 is outside the f16 range [-65504, 65504]; use storage 'f32', "
        "or normalize the rows (only their directions are used)",
    ),
]


@pytest.mark.parametrize("candidates,kwargs,kind,message", LIBRARY_ERRORS)
def test_library_errors(candidates, kwargs, kind, message):
    raises(kind, message, mempursuit.select, Q, candidates, 3, **kwargs)
    raises(kind, message, mempursuit.Selector().select, Q, candidates, 3, **kwargs)
    if "relevance" in kwargs:
        kwargs = dict(kwargs, relevance=[kwargs["relevance"]])
    # The data's errors name the pair in a batch; the options' do not (they
    # are checked once for the batch).
    batch = message if kind == "option" or not isinstance(message, str) else "pair 0: " + message
    if not isinstance(message, str):
        batch = re.compile("pair 0: " + message.pattern)
    raises(kind, batch, mempursuit.select_batch, [Q], [candidates], 3, **kwargs)


def test_query_errors():
    q = Q.copy()
    q[1] = np.nan
    raises("input", "query: element 1 is not finite (NaN)", mempursuit.select, q, POOL, 2)
    raises("input", "query: all elements are zero", mempursuit.select, np.zeros(D, np.float32), POOL, 2)
    raises(
        "input",
        re.compile(r"query: norm .*e12 is outside \[1e-12, 1e12\]"),
        mempursuit.select,
        np.array([1e13, 0, 0, 0], np.float32),
        POOL,
        2,
    )
    raises(
        "input",
        "the query is empty (dimension d = 0)",
        mempursuit.select,
        np.zeros(0, np.float32),
        np.zeros((3, 0), np.float32),
        2,
    )


def test_norm_out_of_range_names_row():
    p = POOL.copy()
    p[4] *= np.float32(1e13)
    raises("input", re.compile(r"candidate 4: norm .* is outside \[1e-12, 1e12\]" + re.escape(EXCLUDE)), mempursuit.select, Q, p, 2)


def test_float64_beyond_float32_names_the_value():
    """A finite float64 beyond the float32 range is named with its value,
    not reported as an infinity (and NumPy's overflow warning is not
    raised)."""
    p = POOL.astype(np.float64)
    p[2, 1] = 1e300
    message = (
        "candidate 2: element 1 = 1e+300 is outside the float32 range [-3.4028235e38, 3.4028235e38]; "
        "normalize the rows (only their directions are used)"
    )
    with np.errstate(over="raise"):  # no RuntimeWarning / FloatingPointError leaks out
        raises("input", message, mempursuit.select, Q, p, 2)
    raises("input", "pair 1: " + message, mempursuit.select_batch, [Q, Q], [POOL, p], 2)
    raises("input", "pair 1: " + message, mempursuit.select_batch, [Q, Q], np.stack([POOL, p]), 2)
    q = Q.astype(np.float64)
    q[3] = -1e39
    raises(
        "input",
        "query: element 3 = -1e+39 is outside the float32 range [-3.4028235e38, 3.4028235e38]; "
        "normalize the query (only its direction is used)",
        mempursuit.select,
        q,
        POOL,
        2,
    )
    raises(
        "input",
        "relevance 0 = 1e+40 is outside the float32 range [-3.4028235e38, 3.4028235e38]; rescale the scores",
        mempursuit.select,
        Q,
        POOL,
        2,
        relevance=[1e40, 0, 0, 0, 0, 0],
    )
    # A float64 infinity is an infinity.
    p[2, 1] = np.inf
    raises("input", "candidate 2: element 1 is not finite (inf)" + EXCLUDE, mempursuit.select, Q, p, 2)


def test_shape_errors():
    raises(
        "input",
        "candidates have d = 3 columns but the query has d = 4 elements",
        mempursuit.select,
        Q,
        POOL[:, :3],
        2,
    )
    raises("input", "candidates must have shape (P, d), got (24,)", mempursuit.select, Q, POOL.ravel(), 2)
    raises("input", "query must have shape (d,) or (1, d), got (2, 4)", mempursuit.select, POOL[:2], POOL, 2)
    raises("input", "query must have shape (d,) or (1, d), got ()", mempursuit.select, np.float32(1), POOL, 2)
    raises(
        "input",
        "relevance must have shape (P,), got (1, 6)",
        mempursuit.select,
        Q,
        POOL,
        2,
        relevance=np.ones((1, 6)),
    )
    # NumPy's message for a ragged list, named.
    raises("input", re.compile(r"candidates: .*"), mempursuit.select, Q, [[1.0, 0, 0, 0], [1.0, 0]], 2)


def test_k_errors():
    for k in (2.0, "2", None, [2], np.float64(2)):
        with pytest.raises(TypeError, match=r"^k must be an int, not "):
            mempursuit.select(Q, POOL, k)
    for k in (True, np.True_):
        with pytest.raises(TypeError, match=r"^k must be an int, not bool"):
            mempursuit.select(Q, POOL, k)
    e = raises("option", "k must be >= 0, got -1", mempursuit.select, Q, POOL, -1)
    assert (e.argument, e.index, e.id) == ("k", None, None)
    raises("option", "k must be >= 0, got -1", mempursuit.select, Q, POOL, np.int8(-1))
    # Anything with __index__ is an int; a k beyond the pool selects it all.
    assert mempursuit.select(Q, POOL, np.int64(2)).picks.shape == (2,)
    for k in (np.uint64(2**64 - 1), 2**64, 10**100):
        assert mempursuit.select(Q, POOL, k, method="topk").picks.shape == (6,)


def test_dtype_errors():
    with pytest.raises(TypeError, match=r"^candidates: dtype complex128 is not real-valued"):
        mempursuit.select(Q, POOL.astype(complex), 2)
    with pytest.raises(TypeError, match=r"^query: dtype <U3 is not real-valued"):
        mempursuit.select(np.array(["0.5", "0.5", "0.5", "0.5"]), POOL, 2)
    with pytest.raises(TypeError, match=r"^relevance: dtype object is not real-valued"):
        mempursuit.select(Q, POOL, 2, relevance=np.array([None] * 6))


# Options: the Rust specification's errors, word for word (kind option).
OPTION_ERRORS = [
    (dict(method="foo"), "unknown method 'foo' (methods: recommended, pursuit, centroid, topk, mmr)"),
    (
        dict(gama=0.5),
        "unknown option 'gama' (options: method, gamma, ridge, mmr_lambda, raw_relevance, pool_order, "
        "cost_budget, adaptive, at_pool_optimum, optimum_tolerance, dependent_picks, normalization, invalid, storage)",
    ),
    (
        # The spec also reads camelCase keys, and lists the keys in the
        # spelling of an unknown one.
        dict(mmrLamda=0.5, method="mmr"),
        "unknown option 'mmrLamda' (options: method, gamma, ridge, mmrLambda, rawRelevance, poolOrder, "
        "costBudget, adaptive, atPoolOptimum, optimumTolerance, dependentPicks, normalization, invalid, storage)",
    ),
    (dict(gama=None), "unknown option 'gama' (options: method, gamma, ridge, mmr_lambda, raw_relevance, "
     "pool_order, cost_budget, adaptive, at_pool_optimum, optimum_tolerance, dependent_picks, normalization, invalid, storage)"),
    (
        dict(gamma=0.5),
        "option 'gamma' does not apply to method 'recommended' (it applies to pursuit, centroid)",
    ),
    (dict(method="recommended", ridge=0.0), "option 'ridge' does not apply to method 'recommended' (it applies to pursuit)"),
    (dict(mmr_lambda=0.5), "option 'mmr_lambda' does not apply to method 'recommended' (it applies to mmr)"),
    (
        dict(adaptive=True),
        "option 'adaptive' does not apply to method 'recommended' (it applies to pursuit, centroid)",
    ),
    (
        dict(raw_relevance=True, relevance=np.ones(6)),
        "option 'raw_relevance' does not apply to method 'recommended' (it applies to pursuit, centroid, "
        "topk, mmr (the recommended setting uses scores by rank))",
    ),
    (
        dict(raw_relevance=True, method="topk"),
        "raw relevance (the scores used as given) needs relevance scores",
    ),
    (
        dict(dependent_picks="drop", method="pursuit"),
        "option 'dependent_picks' must be 'keep' or 'skip', got 'drop'",
    ),
    (
        dict(method="topk", dependent_picks="skip"),
        "option 'dependent_picks' does not apply to method 'topk' (it applies to pursuit with a finite ridge)",
    ),
    (
        dict(method="centroid", dependent_picks="skip"),
        "option 'dependent_picks' does not apply to method 'centroid' (it applies to pursuit with a finite "
        "ridge)",
    ),
    (
        dict(method="pursuit", ridge=float("inf"), at_pool_optimum="fill"),
        "option 'at_pool_optimum' does not apply to method 'pursuit' (it applies to pursuit with a finite "
        "ridge)",
    ),
    (dict(storage="f64"), "option 'storage' must be 'f32', 'f16', 'bf16' or 'int8', got 'f64'"),
    (
        dict(method="pursuit", at_pool_optimum="halt"),
        "option 'at_pool_optimum' must be 'continue', 'stop' or 'fill', got 'halt'",
    ),
    (dict(normalization="l2"), "option 'normalization' must be 'cosine' or 'require_unit', got 'l2'"),
    (dict(invalid="skip"), "option 'invalid' must be 'reject' or 'exclude', got 'skip'"),
    (dict(method="mmr", ridge=1.0), "option 'ridge' does not apply to method 'mmr' (it applies to pursuit)"),
    (dict(method="centroid", ridge=1.0), "option 'ridge' does not apply to method 'centroid' (it applies to pursuit)"),
    (
        dict(method="pursuit", mmr_lambda=0.5),
        "option 'mmr_lambda' does not apply to method 'pursuit' (it applies to mmr)",
    ),
    (
        dict(relevance=np.ones(6), pool_order=True),
        "relevance scores and pool order exclude each other: pass one of them",
    ),
    # Values of the wrong kind among the types an option can take.
    (dict(method="pursuit", gamma="big"), "option 'gamma' must be a number, not a string, got 'big'"),
    (dict(method="pursuit", gamma=True), "option 'gamma' must be a number, got true"),
    # A number or bool written as text is text (a name), as in JavaScript.
    (dict(method="pursuit", gamma="0.3"), "option 'gamma' must be a number, not a string, got '0.3'"),
    (dict(method="pursuit", cost_budget="3"), "option 'cost_budget' must be a number, not a string, got '3'"),
    (dict(method="pursuit", adaptive="true"), "option 'adaptive' must be true or false, not a string, got 'true'"),
    (dict(method="pursuit", adaptive=1), "option 'adaptive' must be true or false, got 1"),
    (dict(method="pursuit", adaptive="yes"), "option 'adaptive' must be true or false, not a string, got 'yes'"),
    (dict(storage=np.float32(1.0)), "option 'storage' must be 'f32', 'f16', 'bf16' or 'int8', got 1"),
    (dict(method=True), "option 'method' must be a method name, got true"),
]


@pytest.mark.parametrize("kwargs,message", OPTION_ERRORS)
def test_option_errors(kwargs, message):
    raises("option", message, mempursuit.select, Q, POOL, 2, **kwargs)
    # The same for the Selector and the batch call (checked before the
    # arrays: no pair named).
    raises("option", message, mempursuit.Selector().select, Q, POOL, 2, **kwargs)
    if "relevance" in kwargs:
        kwargs = dict(kwargs, relevance=[kwargs["relevance"]])
    raises("option", message, mempursuit.select_batch, [Q], [POOL], 2, **kwargs)
    # Checked before any array is read: the same error with no data at all.
    raises("option", message, mempursuit.select_batch, [], [], 2, **kwargs)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(gamma=[0.5]), "gamma must be a float or None, not list"),
        (dict(method=b"pursuit"), "method must be a str or None, not bytes"),
        (dict(adaptive=1j), "adaptive must be a bool or None, not complex"),
        (dict(storage=object()), "storage must be a str or None, not object"),
        (dict(mmrLambda=[0.5]), "mmrLambda must be a float or None, not list"),
        (dict(optimum_tolerance={}), "optimum_tolerance must be a float or None, not dict"),
    ],
)
def test_option_type_errors(kwargs, message):
    with pytest.raises(TypeError) as e:
        mempursuit.select(Q, POOL, 2, **kwargs)
    assert str(e.value) == message
    assert not isinstance(e.value, MemPursuitError)


def test_option_type_error_of_an_unknown_key_is_the_unknown_option():
    raises("option", re.compile(r"unknown option 'gama' \(options: method, gamma, .*"), mempursuit.select, Q, POOL, 2, gama=[1])


def test_camel_case_keys_are_the_same_options():
    a = mempursuit.select(Q, POOL, 3, method="mmr", mmr_lambda=0.3, pool_order=True)
    b = mempursuit.select(Q, POOL, 3, method="mmr", mmrLambda=0.3, poolOrder=True)
    assert a.picks.tolist() == b.picks.tolist()


def test_option_values_are_typed():
    """Python values reach the spec typed: ints and NumPy scalars are
    numbers, NumPy bools are bools, a str is a name (never a number or bool
    written out), None is the default."""
    ref = mempursuit.select(Q, POOL, 3, method="centroid", gamma=0.25, adaptive=True)
    for gamma in (np.float32(0.25), np.float64(0.25), 0.25):
        for adaptive in (True, np.True_):
            same = mempursuit.select(Q, POOL, 3, method="centroid", gamma=gamma, adaptive=adaptive)
            assert same.picks.tolist() == ref.picks.tolist()
    raises("option", "option 'gamma' must be a number, not a string, got '0.25'", mempursuit.select, Q, POOL, 3, method="centroid", gamma="0.25")
    raises("option", "option 'adaptive' must be true or false, not a string, got 'true'", mempursuit.select, Q, POOL, 3, method="centroid", adaptive="true")
    # One option in two spellings is an error, not "last one wins" (the
    # same rule in JavaScript and JSON: SelectSpec::set_typed).
    raises(
        "option",
        "option 'mmrLambda' is given twice (as 'mmr_lambda' or 'mmrLambda'); give it once",
        mempursuit.select, Q, POOL, 3, method="mmr", mmr_lambda=0.1, mmrLambda=0.9,
    )
    # An int gamma is a number: 1 is the paper's gamma.
    assert (
        mempursuit.select(Q, POOL, 3, method="pursuit", gamma=1).picks.tolist()
        == mempursuit.select(Q, POOL, 3, method="pursuit").picks.tolist()
    )
    # ridge = inf (a float, or an int beyond the float range) is centroid
    # pursuit.
    centroid = mempursuit.select(Q, POOL, 3, method="pursuit", ridge=float("inf"), gamma=0.5).picks.tolist()
    for ridge in (np.inf, 10**400):
        assert mempursuit.select(Q, POOL, 3, method="pursuit", ridge=ridge, gamma=0.5).picks.tolist() == centroid
    assert mempursuit.select(Q, POOL, 3, method="centroid").picks.tolist() == centroid
    for kw in (dict(method=None), dict(gamma=None), dict(storage=None, adaptive=None)):
        assert mempursuit.select(Q, POOL, 3, **kw).picks.tolist() == mempursuit.select(Q, POOL, 3).picks.tolist()


def test_parameters_checked_even_when_nothing_is_selected():
    raises("option", "gamma 2 must be in (0, 1]", mempursuit.select, Q, POOL, 0, method="pursuit", gamma=2.0)
    raises("option", "gamma 2 must be in (0, 1]", mempursuit.select_batch, [], [], 3, method="pursuit", gamma=2.0)


def test_batch_errors_name_the_pair():
    bad = with_value(3, 2, np.nan)
    raises(
        "input",
        "pair 1: candidate 3: element 2 is not finite (NaN)" + EXCLUDE,
        mempursuit.select_batch,
        [Q, Q, Q],
        [POOL, bad, bad],
        2,
        threads=2,
    )
    raises("input", "2 queries but 3 pools: pass one pool per query", mempursuit.select_batch, [Q, Q], [POOL] * 3, 2)
    raises(
        "input",
        "2 queries but 1 relevance vectors",
        mempursuit.select_batch,
        [Q, Q],
        [POOL] * 2,
        2,
        relevance=[np.ones(6)],
    )
    raises(
        "input",
        "pools[1] have d = 3 columns but the query has d = 4 elements",
        mempursuit.select_batch,
        [Q, Q],
        [POOL, POOL[:, :3]],
        2,
    )
    raises(
        "input",
        "queries[0] must have shape (d,) or (1, d), got (2, 4)",
        mempursuit.select_batch,
        [POOL[:2]],
        [POOL],
        2,
    )
    # threads = 0 is one thread per CPU (as in Rust), a negative count an option error.
    assert mempursuit.select_batch([Q], [POOL], 2, threads=0)[0].picks.tolist() == mempursuit.select(Q, POOL, 2).picks.tolist()
    raises("option", "threads must be >= 0, got -2", mempursuit.select_batch, [Q], [POOL], 2, threads=-2)
    with pytest.raises(TypeError, match=r"^threads must be an int, not bool$"):
        mempursuit.select_batch([Q], [POOL], 2, threads=True)
    with pytest.raises(TypeError, match=r"^pools must be an array or a sequence of arrays, not int$"):
        mempursuit.select_batch([Q], 5, 2)
    raises(
        "input",
        re.compile(r"pools: an array must have 3 dimensions .*"),
        mempursuit.select_batch,
        [Q],
        POOL,
        2,
    )
    with pytest.raises(TypeError, match=r"^pools\[0\]: dtype complex128 is not real-valued"):
        mempursuit.select_batch([Q], [POOL.astype(complex)], 2)
    # Many threads (more than pairs, more than CPUs): the same results.
    ref = mempursuit.select_batch([Q] * 3, [POOL] * 3, 2, threads=1)
    for threads in (64, 2**80):
        got = mempursuit.select_batch([Q] * 3, [POOL] * 3, 2, threads=threads)
        assert [s.picks.tolist() for s in got] == [s.picks.tolist() for s in ref]


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
    with pytest.raises(MemPursuitError):
        mempursuit.select(Q, bad, 2)
    np.testing.assert_array_equal(bad, before)
    assert bad.flags.writeable


def test_capacity_errors():
    """Memory the call cannot have is a CapacityError (a MemoryError and a
    MemPursuitError of kind capacity), never a panic; the Selector stays
    usable."""
    # Selector capacities beyond the address space or any allocation.
    for kwargs, message in [
        (
            dict(max_pool=2**62),
            "max_pool = 4611686018427387904, max_budget = 0: the scratch for P = 4611686018427387904, K = 0 "
            "overflows the address space; use a smaller pool or budget",
        ),
        (
            dict(max_pool=2**40, max_budget=2**30),
            "max_pool = 1099511627776, max_budget = 1073741824: the scratch for P = 1099511627776, "
            "K = 1073741824 overflows the address space; use a smaller pool or budget",
        ),
        (
            dict(max_pool=2**70),
            "max_pool = 1180591620717411303424 exceeds the address space; use a smaller capacity "
            "(a Selector grows to fit on its own)",
        ),
        (
            dict(max_pool=10**7, max_budget=10**7),
            re.compile(r"max_pool = 10000000, max_budget = 10000000: cannot allocate \d+ bytes of scratch .*"),
        ),
    ]:
        with pytest.raises(MemoryError) as e:
            mempursuit.Selector(**kwargs)
        assert isinstance(e.value, CapacityError) and e.value.kind == "capacity"
        if isinstance(message, str):
            assert str(e.value) == message
        else:
            assert message.fullmatch(str(e.value))
    raises("option", "max_pool must be >= 0, got -1", mempursuit.Selector, max_pool=-1)
    with pytest.raises(TypeError, match=r"^max_budget must be an int, not float$"):
        mempursuit.Selector(max_budget=1.5)
    # A budget whose scratch (about 8·P·K bytes) cannot be allocated: P =
    # 10^7 rows of d = 1 and K = P (8e14 bytes, beyond the address space).
    pool = np.ones((10**7, 1), np.float32)
    selector = mempursuit.Selector()
    message = re.compile(r"cannot allocate \d+ bytes of scratch for P = 10000000, K = 10000000; .*")
    raises("capacity", message, selector.select, np.ones(1, np.float32), pool, 10**7, method="topk")
    raises("capacity", message, mempursuit.select, np.ones(1, np.float32), pool, 2**64, method="topk")
    raises(
        "capacity",
        re.compile("pair 0: " + message.pattern),
        mempursuit.select_batch,
        [np.ones(1, np.float32)],
        [pool],
        10**7,
        method="topk",
    )
    # The selector is still usable.
    assert selector.select(Q, POOL, 2).picks.shape == (2,)
    # A conversion NumPy cannot allocate (a zero-stride view claiming 2^61
    # elements) is a CapacityError naming the argument.
    huge = np.lib.stride_tricks.as_strided(np.ones(1, np.float32), shape=(2**30, 2**20), strides=(0, 0))
    raises(
        "capacity",
        re.compile(r"candidates: Unable to allocate .*"),
        mempursuit.select,
        np.ones(2**20, np.float32),
        huge,
        2,
    )


@pytest.mark.parametrize("method", mempursuit.METHODS)
def test_k_above_the_pool_stops_for_the_pool(method):
    """Fewer than k came back because the pool of 6 ran out: stop reason
    pool_exhausted, not budget (issue 30, item 6); k = 6 stops for the budget."""
    sel = mempursuit.select(Q, POOL, 10, method=method)
    assert sorted(sel.picks.tolist()) == [0, 1, 2, 3, 4, 5]
    assert sel.stop_reason == "pool_exhausted"
    sel = mempursuit.select(Q, POOL, 6, method=method)
    assert len(sel.picks) == 6 and sel.stop_reason == "budget"
    (sel,) = mempursuit.select_batch([Q], [POOL], 10, method=method)
    assert sel.stop_reason == "pool_exhausted"


def test_unusable_rows_name_the_exclude_option():
    """A NaN or all-zero row names the remedy, invalid="exclude" (issue 30,
    item 7); the query has none to name."""
    hint = EXCLUDE
    with pytest.raises(MemPursuitError) as e:
        mempursuit.select(Q, with_value(3, 2, np.nan), 2)
    assert str(e.value) == "candidate 3: element 2 is not finite (NaN)" + hint
    zero = POOL.copy()
    zero[4] = 0.0
    with pytest.raises(MemPursuitError) as e:
        mempursuit.select(Q, zero, 2)
    assert str(e.value) == "candidate 4: all elements are zero" + hint
    sel = mempursuit.select(Q, zero, 2, invalid="exclude")
    assert sel.excluded.tolist() == [4] and len(sel.picks) == 2
    with pytest.raises(MemPursuitError) as e:
        mempursuit.select(np.zeros_like(Q), POOL, 2)
    assert str(e.value) == "query: all elements are zero"


def test_a_ragged_list_of_lists_names_the_row():
    """Our message, not NumPy's "inhomogeneous shape" (issue 30, item 7)."""
    with pytest.raises(MemPursuitError) as e:
        mempursuit.select([1.0, 0.0, 0.0], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0]], 2)
    assert e.value.kind == "input"
    assert str(e.value) == (
        "candidates: row 2 has 2 elements, row 0 has 3; every row needs the same number "
        "of elements (d, the query's length)"
    )


def test_a_row_that_underflows_f16_says_so():
    """Nonzero in float32, all zero in float16: the values underflow f16, and
    the remedy is to scale or normalize, or use storage "f32" (issue 30, item 7)."""
    pool = POOL.copy()
    pool[2] = 0.0
    pool[2, 3] = -2e-8
    pool[2, 1] = 1e-9
    with pytest.raises(MemPursuitError) as e:
        mempursuit.select(Q, pool, 2, storage="f16")
    assert e.value.kind == "input"
    assert str(e.value) == (
        "candidate 2: the values underflow f16: every element rounds to zero (the largest "
        "in magnitude is element 3 = -2e-8); scale or normalize the rows (only their "
        "directions are used), or use storage 'f32'"
    )
    pool[2] *= 1e6
    assert len(mempursuit.select(Q, pool, 2, storage="f16").picks) == 2
