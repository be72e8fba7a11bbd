"""Hostile arguments: whatever a Python caller can build ends in a result or
an exception derived from Exception that names the argument; never a
PanicException (a BaseException, which `except Exception` misses), never a
silent misread (a result equals the result on clean float32 C-contiguous
copies of the arrays), and the caller's objects are never modified.

Property tests (hypothesis) draw the dtype (bool, ints, floats of every
width, complex, object, strings, structured, datetime), byte order, layout
(C, Fortran, strided, negative and zero strides, misaligned buffers,
read-only arrays, memoryviews, lists), shapes (0-d to 3-d, empty), values
(NaN, ±inf, huge), k (bool, float, NumPy ints, negative, huge, str) and
options (valid values and junk) for `select`, `Selector.select` and
`select_batch`. Deterministic tests cover huge shape claims and memory."""

import copy
import warnings

import numpy as np
import pytest

import mempursuit

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SETTINGS = settings(
    max_examples=600,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)

# Words one of which an error message names: the arguments, the options,
# the rows of the data.
ARGUMENT_WORDS = (
    "query",
    "queries",
    "candidate",
    "pools",
    "relevance",
    "k must",
    "threads",
    "option",
    "method",
    "exclude each other",  # relevance scores and pool order
    "raw relevance",
    "max_pool",
    "max_budget",
    "scratch for P",  # the memory of a call: its pool P and budget K
    "MMR lambda",  # the core's names of mmr_lambda and optimum_tolerance
    "pool-optimum tolerance",
    *mempursuit.OPTIONS,
)


def is_panic(e):
    return any(t.__name__ == "PanicException" for t in type(e).__mro__)


def outcome(call, keywords=()):
    """("ok", result) or ("error", exception); a PanicException or any
    BaseException that is not an Exception fails the test. `keywords`: the
    call's option keywords, as given (an error may name one of them)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning leaks out either
            return "ok", call()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: BLE001 - checked right here
        assert not is_panic(e), f"PanicException: {e}"
        assert isinstance(e, Exception), f"{type(e).__mro__} is not an Exception: {e}"
        assert isinstance(e, (TypeError, ValueError, MemoryError)), f"{type(e).__name__}: {e}"
        if isinstance(e, (ValueError, MemoryError)):
            assert isinstance(e, mempursuit.MemPursuitError), f"{type(e).__name__}: {e}"
            assert e.kind in ("input", "option", "capacity")
            assert isinstance(e, MemoryError) == (e.kind == "capacity")
        assert any(w in str(e) for w in (*ARGUMENT_WORDS, *keywords)), f"names no argument: {e}"
        return "error", e


def snapshot(obj):
    """What must not change about a caller's object."""
    if isinstance(obj, np.ndarray):
        return ("ndarray", obj.dtype, obj.shape, obj.strides, obj.flags.writeable, obj.tobytes())
    if isinstance(obj, memoryview):
        return ("memoryview", obj.tobytes(), obj.readonly)
    if isinstance(obj, list):
        return ("list", copy.deepcopy(obj), [id(x) for x in obj])
    return ("other", repr(obj))


def same_snapshot(a, b):
    if a[0] == "list":
        # NaN != NaN: compare reprs of the deep copies.
        return a[0] == b[0] and repr(a[1]) == repr(b[1]) and a[2] == b[2]
    return a == b


def clean(x):
    """A clean float32 C-contiguous copy of an array argument (as NumPy
    converts it), or None where NumPy cannot convert it."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = np.asarray(x)
            if a.dtype.kind not in "biuf":
                return None
            # (np.ascontiguousarray would make a 0-d array 1-d.)
            return np.array(a, dtype=np.float32, order="C", copy=True)
    except Exception:  # noqa: BLE001 - a ragged list etc.: no reference
        return None


def overflows(x):
    """Whether converting `x` to float32 turns a finite value into ±inf."""
    try:
        with np.errstate(all="ignore"):
            a = np.asarray(x)
            if a.dtype.kind != "f" or a.dtype.itemsize <= 4:
                return False
            return bool((np.isinf(a.astype(np.float32)) & np.isfinite(a)).any())
    except Exception:  # noqa: BLE001
        return False


def same_selection(a, b):
    assert a.picks.tolist() == b.picks.tolist()
    assert a.weights.tobytes() == b.weights.tobytes()
    assert a.steps.dtype == b.steps.dtype
    for name in a.steps.dtype.names:
        assert a.steps[name].tobytes() == b.steps[name].tobytes(), name
    assert a.stop_reason == b.stop_reason
    assert a.excluded.tolist() == b.excluded.tolist()
    assert a.skipped.tolist() == b.skipped.tolist()


def same_outcome(got, ref, converted_overflow):
    kind, value = got
    rkind, rvalue = ref
    arguments_first = rkind == "error" and (isinstance(rvalue, TypeError) or rvalue.kind == "option")
    if converted_overflow and not arguments_first:
        # A finite value beyond float32 is an input error (named with its
        # value when the arrays are read; a shape error may come first)
        # rather than an infinity.
        assert kind == "error" and isinstance(value, mempursuit.MemPursuitError), value
        assert value.kind == "input", value
        return
    assert kind == rkind, (got, ref)
    if kind == "ok":
        if isinstance(value, list):
            assert len(value) == len(rvalue)
            for a, b in zip(value, rvalue):
                same_selection(a, b)
        else:
            same_selection(value, rvalue)
    else:
        assert type(value) is type(rvalue), (value, rvalue)
        assert str(value) == str(rvalue)


# --- strategies ---------------------------------------------------------

REAL_DTYPES = [
    "bool",
    "int8",
    "uint8",
    "int16",
    "int32",
    "int64",
    "uint64",
    "float16",
    "float32",
    "float64",
    "longdouble",
]
OTHER_DTYPES = ["complex64", "complex128", "object", "<U5", "S5", "datetime64[s]", [("a", "f4"), ("b", "f4")]]
LAYOUTS = ["C", "F", "strided", "negative", "zero", "misaligned", "readonly", "list", "memoryview", "swapped"]

finite = st.floats(-2.0, 2.0, allow_nan=False, width=32)
special = st.sampled_from([np.nan, np.inf, -np.inf, 0.0, 1e-30, 1e30, 7e4, 1e39, 1e300, -1e300])
value = st.one_of(finite, finite, finite, finite, special)


def typed(base, dtype):
    """`base` (float64) as `dtype` (whatever NumPy makes of it)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dt = np.dtype(dtype)
        if dt.kind in "biu":
            b = np.nan_to_num(base, nan=0.0, posinf=3.0, neginf=-3.0)
            b = np.clip(np.round(b * 3), -100, 100)
            if dt.kind == "u":
                b = np.abs(b)
            return b.astype(dt)
        if dt.kind == "O":
            return base.astype(object)
        if dt.kind in "US":
            return base.astype(str).astype(dt)
        if dt.kind == "M":
            return np.zeros(base.shape, dt)
        if dt.names:
            out = np.zeros(base.shape, dt)
            out["a"] = base
            return out
        return base.astype(dt)


def laid_out(arr, layout):
    """`arr` (any dtype) presented in `layout`: the same values, or for
    "zero" a broadcast of its first row/element (zero strides)."""
    if layout == "C":
        return np.ascontiguousarray(arr)
    if layout == "F":
        return np.asfortranarray(arr)
    if layout == "strided" and arr.ndim >= 1:
        big = np.zeros(arr.shape[:-1] + (arr.shape[-1] * 2,), arr.dtype)
        big[..., ::2] = arr
        return big[..., ::2]
    if layout == "negative" and arr.ndim >= 1:
        flipped = arr[(slice(None, None, -1),) * arr.ndim].copy()
        return flipped[(slice(None, None, -1),) * arr.ndim]
    if layout == "zero" and arr.ndim >= 1 and arr.size:
        return np.broadcast_to(arr[(slice(0, 1),) * arr.ndim], arr.shape)
    if layout == "misaligned" and arr.dtype.kind != "O" and arr.dtype.itemsize > 1:
        buf = bytearray(arr.nbytes + 1)
        out = np.frombuffer(buf, arr.dtype, count=arr.size, offset=1).reshape(arr.shape)
        out[...] = arr
        return out
    if layout == "readonly":
        out = arr.copy()
        out.setflags(write=False)
        return out
    if layout == "list":
        return arr.tolist()
    if layout == "memoryview" and arr.dtype.kind not in "OMU" and not arr.dtype.names:
        try:
            return memoryview(np.ascontiguousarray(arr))
        except (TypeError, ValueError, BufferError):
            return arr
    if layout == "swapped" and arr.dtype.kind in "iuf" and arr.dtype.itemsize > 1:
        return arr.astype(arr.dtype.newbyteorder())
    return arr


@st.composite
def array_arg(draw, shape):
    dtype = draw(st.sampled_from(REAL_DTYPES * 10 + OTHER_DTYPES))
    if draw(st.integers(0, 3)):
        # Mostly usable values (normal draws: rows of any norm), so that
        # many calls succeed and their results are compared.
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        base = rng.standard_normal(shape)
    else:
        n = int(np.prod(shape))
        base = np.array(draw(st.lists(value, min_size=n, max_size=n)), np.float64).reshape(shape)
    return laid_out(typed(base, dtype), draw(st.sampled_from(LAYOUTS)))


@st.composite
def shapes(draw):
    p = draw(st.integers(0, 6))
    d = draw(st.one_of(st.integers(1, 5), st.integers(0, 5)))
    if draw(st.integers(0, 2)):
        return (d,), (p, d), p  # the usual shapes, most of the time
    q_shape = draw(st.sampled_from([(d,), (1, d), (), (2, d), (d, 1, 1)]))
    c_shape = draw(st.sampled_from([(p, d), (p, d + 1), (p * d,), (1, p, d), ()]))
    return q_shape, c_shape, p


budgets = st.one_of(
    st.integers(0, 8),
    st.integers(0, 8),
    st.integers(0, 8),
    st.integers(0, 8),
    st.integers(-3, 8),
    st.sampled_from(
        [True, False, 2.0, 1.5, None, "3", [2], np.int8(3), np.uint64(4), np.int64(-1), np.uint8(0), 2**64, 2**200, -(2**70)]
    ),
)

VALID = {
    "method": st.sampled_from(list(mempursuit.METHODS)),
    "gamma": st.sampled_from([0.1, 0.5, 1.0, 1, np.float32(0.3)]),
    "ridge": st.sampled_from([0.0, 1e-10, 0.5, float("inf"), "inf"]),
    "mmr_lambda": st.sampled_from([0.0, 0.3, 1.0]),
    "raw_relevance": st.booleans(),
    "pool_order": st.booleans(),
    "adaptive": st.sampled_from([True, False, np.True_]),
    "at_pool_optimum": st.sampled_from(["continue", "stop", "fill"]),
    "optimum_tolerance": st.sampled_from([0.0, 1e-6, 0.1]),
    "dependent_picks": st.sampled_from(["keep", "skip"]),
    "normalization": st.sampled_from(["cosine", "require_unit"]),
    "invalid": st.sampled_from(["reject", "exclude"]),
    "storage": st.sampled_from(["f32", "f16", "bf16", "int8"]),
}
JUNK = st.sampled_from(
    [None, -1.0, 2.0, float("nan"), 10**400, "junk", "", [1], {}, b"f32", 1j, np.float16(0.5), object()]
)


APPLICABLE = {
    "recommended": ["pool_order", "normalization", "invalid", "storage"],
    "pursuit": [
        "gamma",
        "ridge",
        "raw_relevance",
        "pool_order",
        "adaptive",
        "at_pool_optimum",
        "optimum_tolerance",
        "dependent_picks",
        "normalization",
        "invalid",
        "storage",
    ],
    "centroid": ["gamma", "raw_relevance", "pool_order", "adaptive", "normalization", "invalid", "storage"],
    "topk": ["raw_relevance", "pool_order", "normalization", "invalid", "storage"],
    "mmr": ["mmr_lambda", "raw_relevance", "pool_order", "normalization", "invalid", "storage"],
}


@st.composite
def coherent_options(draw):
    """Options a method takes, with valid values (most calls succeed)."""
    method = draw(st.sampled_from([None, *mempursuit.METHODS]))
    keys = draw(st.lists(st.sampled_from(APPLICABLE[method or "recommended"]), max_size=3, unique=True))
    out = {} if method is None else {"method": method}
    for key in keys:
        out[key] = draw(VALID[key])
    if method == "pursuit" and out.get("ridge") in (float("inf"), "inf"):
        for key in ("at_pool_optimum", "optimum_tolerance", "dependent_picks"):
            out.pop(key, None)
    return out


@st.composite
def any_options(draw):
    """Any keys (also unknown ones) with valid values or junk."""
    keys = draw(st.lists(st.sampled_from(list(VALID) + ["gama", "threads", "mmrLambda"]), max_size=4, unique=True))
    out = {}
    for key in keys:
        out[key] = draw(st.one_of(VALID[key], VALID[key], JUNK) if key in VALID else JUNK)
    return out


options = lambda: st.one_of(coherent_options(), coherent_options(), coherent_options(), any_options())  # noqa: E731


# --- the properties ---------------------------------------------------


@SETTINGS
@given(shapes().flatmap(lambda s: st.tuples(st.just(s), array_arg(s[0]), array_arg(s[1]))), budgets, options(), st.data())
def test_select_hostile(shape_args, k, opts, data):
    (_, _, p), query, candidates = shape_args
    relevance = data.draw(st.one_of(st.none(), array_arg((p,)), array_arg((p + 1,))))
    entry = data.draw(st.sampled_from(["select", "Selector"]))
    selector = mempursuit.Selector()
    args = [query, candidates, relevance]
    before = [snapshot(a) for a in args]

    def call(q, c, r):
        if entry == "select":
            return mempursuit.select(q, c, k, relevance=r, **opts)
        return selector.select(q, c, k, relevance=r, **opts)

    got = outcome(lambda: call(query, candidates, relevance), opts)
    event(got[0] if got[0] == "ok" else type(got[1]).__name__)
    for a, b in zip(before, [snapshot(x) for x in args]):
        assert same_snapshot(a, b), "an argument was modified"
    cleaned = [clean(query), clean(candidates), None if relevance is None else clean(relevance)]
    if cleaned[0] is None or cleaned[1] is None or (relevance is not None and cleaned[2] is None):
        # Not real-valued or not an array: an error naming the argument.
        assert got[0] == "error", got
        return
    ref = outcome(lambda: call(*cleaned), opts)
    same_outcome(got, ref, any(overflows(a) for a in args if a is not None))


@SETTINGS
@given(st.integers(0, 3), st.data(), budgets, options())
def test_select_batch_hostile(n, data, k, opts):
    d = data.draw(st.integers(1, 4))
    queries = [data.draw(array_arg((d,))) for _ in range(n)]
    pools = [data.draw(array_arg((data.draw(st.integers(0, 5)), d))) for _ in range(n)]
    threads = data.draw(st.sampled_from([None, 1, 2, 3, 0, True, 2.5, 2**70]))
    before = [snapshot(a) for a in queries + pools]
    got = outcome(lambda: mempursuit.select_batch(queries, pools, k, threads=threads, **opts), opts)
    event(got[0] if got[0] == "ok" else type(got[1]).__name__)
    for a, b in zip(before, [snapshot(x) for x in queries + pools]):
        assert same_snapshot(a, b), "an argument was modified"
    cleaned = [clean(a) for a in queries + pools]
    if any(c is None for c in cleaned):
        assert got[0] == "error", got
        return
    ref = outcome(lambda: mempursuit.select_batch(cleaned[:n], cleaned[n:], k, threads=threads, **opts), opts)
    same_outcome(got, ref, any(overflows(a) for a in queries + pools))
    if got[0] == "ok":
        # Each pair as its own select.
        for i, sel in enumerate(got[1]):
            single = mempursuit.select(cleaned[i], cleaned[n + i], k, **opts)
            same_selection(sel, single)


# --- deterministic cases ----------------------------------------------

S = np.float32(1 / np.sqrt(2))
Q = np.array([S, S, 0, 0], np.float32)
POOL = np.array([[1, 0.07, 0, 0], [1, 0.08, 0.05, 0], [1, 0.075, 0, 0.04], [0, 1, 0, 0.05]], np.float32)


def checked(call):
    kind, value = outcome(call)
    return kind, value


@pytest.mark.parametrize(
    "make",
    [
        lambda p: p.astype(">f4"),  # big-endian
        lambda p: p.astype(">f8"),
        lambda p: p.astype(">f2"),
        lambda p: np.asfortranarray(p),
        lambda p: p[::-1][::-1],
        lambda p: np.ascontiguousarray(p[::-1])[::-1],  # negative stride
        lambda p: laid_out(p, "misaligned"),
        lambda p: laid_out(p.astype(np.float64), "misaligned"),
        lambda p: laid_out(p.astype(np.float16), "misaligned"),
        lambda p: laid_out(p, "strided"),
        lambda p: laid_out(p, "readonly"),
        lambda p: memoryview(np.ascontiguousarray(p)),
        lambda p: p.tolist(),
        lambda p: p.astype(np.float16),
        lambda p: np.lib.stride_tricks.as_strided(p, shape=p.shape, strides=p.strides),
    ],
)
def test_layouts_read_like_a_clean_copy(make):
    pool = make(POOL)
    before = snapshot(pool)
    for storage in ("f32", "f16", "bf16", "int8"):
        for method in mempursuit.METHODS:
            got = mempursuit.select(Q, pool, 3, method=method, storage=storage)
            ref = mempursuit.select(Q, clean(pool), 3, method=method, storage=storage)
            same_selection(got, ref)
            assert ref.picks.tolist() != [] and len(set(ref.picks.tolist())) == 3
    assert same_snapshot(before, snapshot(pool))


def test_misaligned_float32_is_read_exactly():
    buf = bytearray(POOL.nbytes + 1)
    pool = np.frombuffer(buf, np.float32, POOL.size, 1).reshape(POOL.shape)
    pool[...] = POOL
    assert not pool.flags.aligned and pool.flags.c_contiguous
    same_selection(mempursuit.select(Q, pool, 2), mempursuit.select(Q, POOL, 2))
    half = np.frombuffer(bytearray(POOL.size * 2 + 1), np.float16, POOL.size, 1).reshape(POOL.shape)
    half[...] = POOL
    assert not half.flags.aligned
    same_selection(
        mempursuit.select(Q, half, 2, storage="f16"), mempursuit.select(Q, POOL.astype(np.float16), 2, storage="f16")
    )


def test_zero_stride_and_broadcast():
    row = np.broadcast_to(POOL[3], (5, 4))  # five copies of fact B, strides (0, 4)
    same_selection(mempursuit.select(Q, row, 3), mempursuit.select(Q, np.ascontiguousarray(row), 3))
    q = np.broadcast_to(np.float32(1), (4,))  # a zero-stride query
    same_selection(mempursuit.select(q, POOL, 2), mempursuit.select(np.ones(4, np.float32), POOL, 2))


@pytest.mark.parametrize(
    "query,candidates,message",
    [
        (np.float32(1), POOL, "query must have shape (d,) or (1, d), got ()"),
        (np.ones((1, 1, 4), np.float32), POOL, "query must have shape (d,) or (1, d), got (1, 1, 4)"),
        (Q, POOL[None], "candidates must have shape (P, d), got (1, 4, 4)"),
        (Q, np.float32(1), "candidates must have shape (P, d), got ()"),
        (np.zeros(0, np.float32), np.zeros((3, 0), np.float32), "the query is empty (dimension d = 0)"),
        (np.zeros(0, np.float32), np.zeros((2**40, 0), np.float32), "the query is empty (dimension d = 0)"),
    ],
)
def test_shapes(query, candidates, message):
    kind, e = checked(lambda: mempursuit.select(query, candidates, 2))
    assert kind == "error" and e.kind == "input" and str(e) == message


def test_empty_pool():
    for method in mempursuit.METHODS:
        for storage in mempursuit.OPTIONS["storage"]["values"]:
            for empty in (np.zeros((0, 4), np.float32), np.zeros((0, 4), np.float16)):
                sel = mempursuit.select(Q, empty, 5, method=method, storage=storage)
                assert sel.picks.tolist() == [] and len(sel.steps) == 0 and sel.stop_reason == "pool_exhausted"
                (sel,) = mempursuit.select_batch([Q], [empty], 5, method=method, storage=storage)
                assert sel.picks.tolist() == []
    assert mempursuit.select_batch(np.zeros((0, 4)), np.zeros((0, 3, 4)), 2) == []


def test_huge_shape_claims():
    """Zero-stride views claiming petabytes: the conversion NumPy cannot
    allocate is a CapacityError naming the argument (never a read of memory
    that does not exist)."""
    one = np.ones(1, np.float32)
    huge_pool = np.lib.stride_tricks.as_strided(one, shape=(2**40, 4), strides=(0, 0))
    big_pool64 = np.lib.stride_tricks.as_strided(np.ones(1), shape=(2**40, 4), strides=(0, 0))
    kind, e = checked(lambda: mempursuit.select(Q, big_pool64, 2))
    assert kind == "error" and isinstance(e, mempursuit.CapacityError), e
    assert str(e).startswith("candidates: ")
    huge_q = np.lib.stride_tricks.as_strided(np.ones(1), shape=(2**50,), strides=(0,))
    kind, e = checked(lambda: mempursuit.select(huge_q, POOL, 2))
    assert kind == "error" and isinstance(e, mempursuit.CapacityError) and str(e).startswith("query: ")
    huge_rel = np.lib.stride_tricks.as_strided(np.ones(1), shape=(2**50,), strides=(0,))
    kind, e = checked(lambda: mempursuit.select(Q, POOL, 2, relevance=huge_rel))
    assert kind == "error" and isinstance(e, mempursuit.CapacityError) and str(e).startswith("relevance: ")
    # A float32 zero-stride pool of 2^40 rows is converted (copied) too: a
    # CapacityError, not a read of 16 TiB that is not there.
    kind, e = checked(lambda: mempursuit.select(Q, huge_pool, 2))
    assert kind == "error" and isinstance(e, mempursuit.CapacityError), e


def test_integer_widths():
    for k in (np.int8(2), np.int16(2), np.uint32(2), np.int64(2), np.uint64(2)):
        assert mempursuit.select(Q, POOL, k).picks.shape == (2,)
    for k in (np.uint64(2**64 - 1), 2**63, 2**64, 2**1000):
        assert mempursuit.select(Q, POOL, k, method="topk").picks.shape == (4,)
    for k in (np.int8(-128), np.int64(-(2**63)), -(2**1000)):
        kind, e = checked(lambda: mempursuit.select(Q, POOL, k))
        assert kind == "error" and e.kind == "option" and str(e).startswith("k must be >= 0, got -")
    for cap in (2**62, 2**64 - 1, 2**64, 2**200):
        kind, e = checked(lambda: mempursuit.Selector(max_pool=cap))
        assert kind == "error" and isinstance(e, mempursuit.CapacityError)
        kind, e = checked(lambda: mempursuit.Selector(max_budget=cap))
        assert kind == "error" and isinstance(e, mempursuit.CapacityError)


def test_nan_inf_everywhere():
    for bad in (np.nan, np.inf, -np.inf):
        q = Q.copy()
        q[0] = bad
        kind, e = checked(lambda: mempursuit.select(q, POOL, 2))
        assert kind == "error" and str(e).startswith("query: element 0 is not finite")
        kind, e = checked(lambda: mempursuit.select(Q, POOL, 2, relevance=[bad, 0, 0, 0]))
        assert kind == "error" and str(e).startswith("relevance 0 is not finite")
        p = POOL.copy()
        p[1, 2] = bad
        for storage in ("f32", "f16", "bf16", "int8"):
            kind, e = checked(lambda: mempursuit.select(Q, p, 2, storage=storage))
            assert kind == "error" and str(e).startswith("candidate 1: element 2 is not finite"), e
            sel = mempursuit.select(Q, p, 2, storage=storage, invalid="exclude")
            assert sel.excluded.tolist() == [1]
    # NaN options: the spec's range checks.
    kind, e = checked(lambda: mempursuit.select(Q, POOL, 2, method="mmr", mmr_lambda=float("nan")))
    assert kind == "error" and e.kind == "option"


def test_gil_threads_and_no_panic_hook_output(capfd):
    """No Rust panic message reaches stderr for any of the above: the binding
    never panics (it does not merely catch panics)."""
    mempursuit.select_batch([Q] * 4, [POOL, POOL[:0], POOL * 3, POOL.astype(np.float16)], 3, threads=3)
    checked(lambda: mempursuit.Selector(max_pool=2**62))
    checked(lambda: mempursuit.select(np.ones(1, np.float32), np.ones((10**6, 1), np.float32), 10**6))
    err = capfd.readouterr().err
    assert "panicked" not in err, err
