"""The Python API: the default (the recommended setting), the options (the
Rust crate's table), results, batch = single, Selector reuse, relevance
modes, storage types, conversions, and that the caller's arrays are neither
copied (float32 / float16 C-contiguous) nor modified."""

import inspect
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import mempursuit

S = np.float32(1 / np.sqrt(2))
# README's example: rows 0 and 1 paraphrase fact A, row 2 states fact B.
QUERY = np.array([S, S], np.float32)
POOL = np.array([[0.9950, 0.0998], [0.9998, 0.0200], [0.0, 1.0]], np.float32)


def same(a, b, verified=True):
    """Two Selections are identical in every field (but the int8
    certificate's count `verified` when verified=False)."""
    assert a.picks.tolist() == b.picks.tolist()
    assert a.weights.tolist() == b.weights.tolist()
    assert a.steps.dtype == b.steps.dtype
    for name in a.steps.dtype.names:
        if verified or name != "verified":
            assert a.steps[name].tobytes() == b.steps[name].tobytes(), name
    assert a.stop_reason == b.stop_reason
    assert a.excluded.tolist() == b.excluded.tolist()
    assert a.skipped.tolist() == b.skipped.tolist()


def test_readme_example():
    sel = mempursuit.select(QUERY, POOL, 2)
    assert sel.picks.tolist() == [0, 2]  # A, then the missing fact B
    assert mempursuit.select(QUERY, POOL, 2, method="pursuit").picks.tolist() == [0, 2]
    assert mempursuit.select(QUERY, POOL, 2, method="topk").picks.tolist() == [0, 1]
    assert len(sel) == 2
    assert repr(sel) == "Selection(picks=[0, 2], stop_reason='budget')"


OPTION_KEYS = [
    "method",
    "gamma",
    "ridge",
    "mmr_lambda",
    "raw_relevance",
    "pool_order",
    "cost_budget",
    "adaptive",
    "at_pool_optimum",
    "optimum_tolerance",
    "dependent_picks",
    "normalization",
    "invalid",
    "storage",
]


def keyword_names(f):
    params = inspect.signature(f).parameters.values()
    return [p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]


def test_keywords_are_the_rust_options():
    """The keyword options of select, Selector.select and select_batch are
    the Rust crate's OPTIONS keys, in its order, each defaulting to None
    (the library's default)."""
    assert list(mempursuit.OPTIONS) == OPTION_KEYS
    for f, extra in [
        (mempursuit.select, ["relevance", "costs"]),
        (mempursuit.Selector.select, ["relevance", "costs"]),
        (mempursuit.select_batch, ["relevance", "costs", "offsets", "threads"]),
    ]:
        assert keyword_names(f) == extra + list(mempursuit.OPTIONS), f
        params = inspect.signature(f).parameters
        assert all(params[name].default is None for name in keyword_names(f))
    for key, info in mempursuit.OPTIONS.items():
        assert set(info) == {"type", "values", "applies_to", "doc"}, key
        assert info["type"] in ("method", "number", "bool", "name"), key
        assert info["doc"] and info["applies_to"], key
    assert mempursuit.OPTIONS["method"]["values"] == mempursuit.METHODS
    assert mempursuit.OPTIONS["storage"]["values"] == ("f32", "f16", "bf16", "int8")
    assert mempursuit.OPTIONS["dependent_picks"]["values"] == ("keep", "skip")
    assert mempursuit.OPTIONS["gamma"]["type"] == "number"
    assert mempursuit.OPTIONS["adaptive"]["type"] == "bool"
    with pytest.raises(TypeError):
        mempursuit.OPTIONS["gamma"] = {}  # read-only


def test_costs_and_a_cost_budget():
    """Budgets in tokens: costs (any real dtype, one per candidate) with
    cost_budget; a pick that no longer fits is skipped; the errors."""
    tokens = np.array([40, 35, 70])  # int64 token counts
    for method in mempursuit.METHODS:
        sel = mempursuit.select(QUERY, POOL, 3, method=method, costs=tokens, cost_budget=100)
        # Row 2 (B, 70 tokens) no longer fits after row 0 (40): row 1 (35).
        assert sel.picks.tolist() == [0, 1], method
        assert sel.stop_reason == "cost_budget"
        assert tokens[sel.picks].sum() <= 100
    for costs in ([40.0, 35.0, 70.0], np.array([40, 35, 70], dtype=np.float32)):
        sel = mempursuit.Selector().select(QUERY, POOL, 3, method="pursuit", costs=costs,
                                           cost_budget=110.0)
        assert sel.picks.tolist() == [0, 2] and sel.stop_reason == "cost_budget"
    # Unit costs: the count budget's picks.
    for k in range(4):
        ones = mempursuit.select(QUERY, POOL, 10, method="pursuit", costs=np.ones(3), cost_budget=k)
        assert ones.picks.tolist() == mempursuit.select(QUERY, POOL, k, method="pursuit").picks.tolist()
    # select_batch: costs per pool.
    (a, b) = mempursuit.select_batch([QUERY, QUERY], [POOL, POOL], 3, costs=[tokens, [1, 1, 1]],
                                     cost_budget=100, method="topk")
    assert a.picks.tolist() == [0, 1] and b.picks.tolist() == [0, 1, 2]
    errors = [
        (dict(costs=tokens), "option", "costs need a cost budget (the most the picks may cost in total)"),
        (dict(cost_budget=5), "option", "a cost budget needs costs (one per candidate, e.g. its token count)"),
        (dict(costs=tokens, cost_budget=-1), "option", "cost budget -1 must be finite and >= 0"),
        (dict(costs=[1, -2, 3], cost_budget=5), "input", "cost 1 is -2; costs must be finite and >= 0"),
        (dict(costs=[1, 2], cost_budget=5), "input", "costs have 2 entries but the pool has 3 candidates"),
        (dict(costs=[[1, 2, 3]], cost_budget=5), "input", "costs must have shape (P,), got (1, 3)"),
        (dict(costs=[1, np.nan, 3], cost_budget=5), "input", "cost 1 is NaN; costs must be finite and >= 0"),
    ]
    for kwargs, kind, message in errors:
        with pytest.raises(mempursuit.MemPursuitError) as e:
            mempursuit.select(QUERY, POOL, 3, **kwargs)
        assert (e.value.kind, str(e.value)) == (kind, message), kwargs
    with pytest.raises(mempursuit.MemPursuitError, match="^pair 1: cost 0 is -1;"):
        mempursuit.select_batch([QUERY, QUERY], [POOL, POOL], 3, costs=[tokens, [-1, 1, 1]],
                                cost_budget=5)
    with pytest.raises(mempursuit.MemPursuitError, match="^2 queries but 1 cost vectors"):
        mempursuit.select_batch([QUERY, QUERY], [POOL, POOL], 3, costs=[tokens], cost_budget=5)


def test_methods():
    # MethodName::ALL: the default first.
    assert mempursuit.METHODS == ("recommended", "pursuit", "centroid", "topk", "mmr")


def test_every_option_reaches_the_spec():
    """Each keyword changes the call as the Rust option does: a value of the
    wrong kind is the spec's error naming that keyword."""
    for key in mempursuit.OPTIONS:
        named = "^unknown method 'no such value'" if key == "method" else f"^option '{key}' must be "
        with pytest.raises(mempursuit.MemPursuitError, match=named) as e:
            mempursuit.select(QUERY, POOL, 2, **{key: "no such value"})
        assert e.value.kind == "option"


def test_default_is_the_recommended_setting(fixture):
    """method=None, no method and method="recommended" are one call."""
    for i in (0, 5, 17):
        q, pool = fixture.queries[i], fixture.pool(i)
        rel = np.linspace(2, -1, pool.shape[0], dtype=np.float32)
        for k in (3, 5, 10):
            for kw in ({}, dict(relevance=rel), dict(pool_order=True)):
                rec = mempursuit.select(q, pool, k, method="recommended", **kw)
                same(mempursuit.select(q, pool, k, **kw), rec)
                same(mempursuit.select(q, pool, k, method=None, **kw), rec)
                same(mempursuit.Selector().select(q, pool, k, **kw), rec)
                batch_kw = {**kw, "relevance": [rel]} if "relevance" in kw else kw
                same(mempursuit.select_batch([q], [pool], k, **batch_kw)[0], rec)


# Issue 19's textbook case (tests/tests/conformance.rs, textbook()):
# q = (e0 + e1)/sqrt(2); rows A, A', A'' paraphrase fact A ~ e0 (cosines
# 0.75-0.76 to q), row B ~ e1 (cosine 0.71) is the other half of the query.
def unit(v):
    v = np.asarray(v, np.float64)
    return (v / np.linalg.norm(v)).astype(np.float32)


TEXTBOOK_Q = unit([1, 1, 0, 0])
TEXTBOOK_POOL = np.stack(
    [unit([1, 0.07, 0, 0]), unit([1, 0.08, 0.05, 0]), unit([1, 0.075, 0, 0.04]), unit([0, 1, 0, 0.05])]
)


def test_textbook_default_call_composes():
    """At K = 2 the default call returns fact A and fact B (row 3), where
    top-K returns two paraphrases of A."""
    sel = mempursuit.select(TEXTBOOK_Q, TEXTBOOK_POOL, 2)
    assert 3 in sel.picks.tolist()
    assert sel.picks.tolist() == [1, 3]
    assert mempursuit.select(TEXTBOOK_Q, TEXTBOOK_POOL, 2, method="topk").picks.tolist() == [1, 2]


def test_result_fields(fixture):
    q, pool = fixture.queries[3], fixture.pool(3)
    sel = mempursuit.select(q, pool, 10, method="pursuit")
    assert sel.picks.dtype == np.int64 and sel.picks.shape == (10,)
    assert sel.weights.dtype == np.float64 and sel.weights.shape == (10,)
    assert np.all(sel.weights >= 0) and abs(sel.weights.sum() - 1) < 1e-12
    steps = sel.steps
    assert steps.dtype.names == tuple(name for name, _ in mempursuit.STEP_FIELDS)
    # The Rust crate's STEP_FIELDS: every field of a step.
    assert steps.dtype.names == (
        "index",
        "score",
        "residual_sq",
        "improvement",
        "fw_gap",
        "nu",
        "free_size",
        "solver_iterations",
        "filled",
        "dependent",
        "refit",
        "verified",
    )
    assert dict(mempursuit.STEP_FIELDS)["refit"] == "<U17"
    assert steps.shape == (10,)
    assert set(steps["refit"].tolist()) == {"optimal"}
    assert steps["verified"].tolist() == [0] * 10
    assert steps["index"].tolist() == sel.picks.tolist()
    assert np.all(steps["fw_gap"] >= 0)
    assert np.all((steps["residual_sq"] > 0) & (steps["residual_sq"] <= 1))
    assert np.all(steps["free_size"] >= 1) and not steps["filled"].any()
    # The first pick is the best-aligned candidate: its score is its cosine.
    cos = pool @ q
    assert sel.picks[0] == np.argmax(cos)
    assert abs(steps["score"][0] - cos.max()) < 1e-6
    assert sel.stop_reason == "budget" and sel.excluded.shape == (0,)
    assert sel.skipped.shape == (0,) and sel.skipped.dtype == np.int64
    # Results are immutable.
    for arr in (sel.picks, sel.weights, sel.steps, sel.excluded, sel.skipped):
        assert not arr.flags.writeable
    with pytest.raises(AttributeError):
        sel.picks = None
    assert sel.steps is sel.steps  # built once
    # Baselines have no weights.
    top = mempursuit.select(q, pool, 10, method="topk")
    assert top.weights.shape == (0,)
    assert top.picks.tolist() == np.argsort(-cos, kind="stable")[:10].tolist()
    assert top.steps["residual_sq"].tolist() == [0.0] * 10
    # The int8 storage: the f32 selection; `verified` counts the candidates
    # its certificate checked in f32 (0 where the int8 passes would not be
    # faster and the f32 passes run: a small pool, or no int8 dot product
    # instruction).
    int8 = mempursuit.select(q, pool, 10, method="pursuit", storage="int8")
    assert int8.picks.tolist() == sel.picks.tolist()
    assert int8.weights.tolist() == sel.weights.tolist()
    assert np.all(int8.steps["verified"] >= 0)


def test_stop_reasons():
    # The query is candidate 1: after one pick the residual is 0 and the
    # Frank-Wolfe gap too (the pool optimum).
    # (The paper's ridge 1e-10 leaves a gap of 1e-10 there: the tolerance
    # is raised above it.)
    pool = np.eye(5, dtype=np.float32)
    q = pool[1].copy()
    paper = dict(method="pursuit")
    sel = mempursuit.select(q, pool, 5, at_pool_optimum="stop", optimum_tolerance=1e-9, **paper)
    assert sel.picks.tolist() == [1] and sel.stop_reason == "pool_optimum"
    sel = mempursuit.select(q, pool, 5, adaptive=True, **paper)
    assert sel.stop_reason == "adaptive" and sel.picks.tolist() == [1, 0, 2]
    sel = mempursuit.select(q, pool, 4, at_pool_optimum="fill", optimum_tolerance=1e-9, **paper)
    assert sel.stop_reason == "budget" and sel.steps["filled"].tolist() == [False, True, True, True]


def test_dependent_picks():
    # Rows 0 and 1 are the same memory; rows 2-4 other facts. The pursuit
    # picks the duplicate at some point (paper mode) and flags it; with
    # dependent_picks="skip" it spends that pick on new evidence instead.
    rng = np.random.default_rng(11)
    base = rng.standard_normal((4, 16)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    pool = np.vstack([base[:1], base[:1], base[1:]])
    q = (pool[0] + pool[2] + pool[3]).astype(np.float32)
    keep = mempursuit.select(q, pool, 5, method="pursuit")
    assert sorted(keep.picks.tolist()) == [0, 1, 2, 3, 4]
    dep = keep.steps["dependent"]
    assert dep.sum() == 1 and keep.picks[dep].item() in (0, 1)
    assert keep.skipped.shape == (0,)
    skip = mempursuit.select(q, pool, 5, method="pursuit", dependent_picks="skip")
    assert not skip.steps["dependent"].any()
    assert len(set(skip.picks.tolist()) & {0, 1}) == 1
    assert skip.skipped.tolist() == [keep.picks[dep].item()]
    assert skip.stop_reason == "pool_exhausted" and len(skip) == 4


BATCH_METHODS = [
    ("default", {}),
    ("pursuit", dict(method="pursuit")),
    ("centroid", dict(method="centroid")),
    ("mmr", dict(method="mmr")),
]


def test_batch_equals_single(fixture):
    n = len(fixture.specs)
    queries = fixture.queries  # (n, d): borrowed once, rows are the queries
    pools = [fixture.pool(i) for i in range(n)]  # pool sizes differ
    singles = {
        name: [mempursuit.select(queries[i], pools[i], 10, **kw) for i in range(n)]
        for name, kw in BATCH_METHODS
    }
    for threads in (None, 1, 2, 3):
        for name, kw in BATCH_METHODS:
            batch = mempursuit.select_batch(queries, pools, 10, threads=threads, **kw)
            assert len(batch) == n
            for a, b in zip(batch, singles[name]):
                same(a, b)
    # A sequence of queries works as well as a stacked array.
    for a, b in zip(mempursuit.select_batch(list(queries), pools, 10), singles["default"]):
        same(a, b)
    assert mempursuit.select_batch([], [], 5) == []


def test_batch_equals_single_stacked_relevance_and_storage(fixture):
    # Equal pool sizes: pools as one (n, P, d) array, relevance as (n, P).
    n, p = 6, 24
    pools = np.stack([fixture.pool(i)[:p] for i in range(n)])
    rel = np.stack([np.linspace(1, 0, p, dtype=np.float32) ** (i + 1) for i in range(n)])
    for kw in [
        dict(relevance=rel),
        dict(relevance=rel, method="pursuit", gamma=0.3),
        dict(relevance=rel, raw_relevance=True, method="centroid", gamma=0.2),
        dict(pool_order=True, method="recommended"),
        dict(storage="f16"),
        dict(storage="bf16"),
        dict(storage="int8"),
        dict(storage="int8", method="pursuit"),
        dict(storage="int8", method="mmr"),
        dict(method="pursuit", dependent_picks="skip", adaptive=True),
    ]:
        for stack in (pools, pools.astype(np.float16)):
            batch = mempursuit.select_batch(fixture.queries[:n], stack, 8, threads=2, **kw)
            for i in range(n):
                single_kw = dict(kw)
                if "relevance" in kw:
                    single_kw["relevance"] = rel[i]
                same(batch[i], mempursuit.select(fixture.queries[i], stack[i], 8, **single_kw))


def test_selector_reuse(fixture):
    selector = mempursuit.Selector()
    small = mempursuit.Selector(max_pool=8, max_budget=2)
    for i in (5, 0, 11, 0, 23):  # growing and shrinking shapes
        for k in (3, 10, 1):
            fresh = mempursuit.select(fixture.queries[i], fixture.pool(i), k)
            same(selector.select(fixture.queries[i], fixture.pool(i), k), fresh)
            same(small.select(fixture.queries[i], fixture.pool(i), k), fresh)


def test_relevance_modes(fixture):
    q, pool = fixture.queries[1], fixture.pool(1)
    p = pool.shape[0]
    scores = np.arange(p, dtype=np.float32)[::-1].copy()  # row 0 ranked first
    # Top-K follows the retriever's scores, or the pool order.
    for kw in (dict(relevance=scores), dict(relevance=scores, raw_relevance=True), dict(pool_order=True)):
        assert mempursuit.select(q, pool, 5, method="topk", **kw).picks.tolist() == [0, 1, 2, 3, 4]
    # Pool order = the pool's sorted cosines by rank = strictly decreasing
    # scores by rank (any scale) = those cosines as raw scores.
    cos = np.sort(pool @ q)[::-1].astype(np.float32)
    opts = dict(method="centroid", gamma=0.3)
    a = mempursuit.select(q, pool, 8, pool_order=True, **opts)
    # Scores by rank are the default for every method but the recommended
    # setting, which always uses them by rank.
    same(mempursuit.select(q, pool, 8, relevance=scores), mempursuit.select(q, pool, 8, pool_order=True))
    for kw in (dict(relevance=scores), dict(relevance=scores * 1000 - 7)):
        same(mempursuit.select(q, pool, 8, **opts, **kw), a)
    # (NumPy's cosines differ from the core's in the last bits: picks only.)
    raw_cos = mempursuit.select(q, pool, 8, relevance=cos, raw_relevance=True, **opts)
    assert raw_cos.picks.tolist() == a.picks.tolist()
    # Raw scores on another scale change gamma's meaning, ranked ones do not.
    rng = np.random.default_rng(5)
    rrf = rng.permutation(p).astype(np.float32) / 1000  # a fused retriever's small scores
    ranked = mempursuit.select(q, pool, 8, relevance=rrf, **opts)
    same(mempursuit.select(q, pool, 8, relevance=rrf * 50 + 3, **opts), ranked)
    raw = mempursuit.select(q, pool, 8, relevance=rrf, raw_relevance=True, **opts)
    assert raw.picks.tolist() != ranked.picks.tolist()


def test_recommended(fixture):
    """The recommended setting: weights on the simplex, not nested, the same
    through Selector, select and select_batch, and unit-free relevance."""
    q, pool = fixture.queries[9], fixture.pool(9)
    sel = mempursuit.select(q, pool, 5, method="recommended")
    assert sel.picks.shape == (5,) and abs(sel.weights.sum() - 1) < 1e-12
    same(mempursuit.Selector().select(q, pool, 5, method="recommended"), sel)
    pools = [fixture.pool(i) for i in range(24)]
    for k in (3, 10):
        batch = mempursuit.select_batch(fixture.queries, pools, k, method="recommended", threads=2)
        for i in range(24):
            same(batch[i], mempursuit.select(fixture.queries[i], pools[i], k, method="recommended"))
    rel = np.linspace(3, -1, pool.shape[0], dtype=np.float32)
    same(
        mempursuit.select(q, pool, 5, method="recommended", relevance=rel),
        mempursuit.select(q, pool, 5, method="recommended", relevance=rel * 0.01),
    )


def bf16_round(x):
    """float32 -> bfloat16 -> float32, round to nearest even (finite x)."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32)


def test_storage_equals_f32_on_rounded_values(fixture):
    for i in range(0, 24, 4):
        q, pool = fixture.queries[i], fixture.pool(i)
        for method in mempursuit.METHODS:
            f16 = mempursuit.select(q, pool, 10, method=method, storage="f16")
            ref = mempursuit.select(q, pool.astype(np.float16).astype(np.float32), 10, method=method)
            same(f16, ref)
            # A float16 array is borrowed as is.
            same(mempursuit.select(q, pool.astype(np.float16), 10, method=method, storage="f16"), ref)
            bf = mempursuit.select(q, pool, 10, method=method, storage="bf16")
            same(bf, mempursuit.select(q, bf16_round(pool), 10, method=method))
            # float16 input under f32 storage: widened exactly.
            same(mempursuit.select(q, pool.astype(np.float16), 10, method=method), ref)
            # int8: the f32 selection (but for the certificate's count).
            int8 = mempursuit.select(q, pool, 10, method=method, storage="int8")
            f32 = mempursuit.select(q, pool, 10, method=method)
            same(int8, f32, verified=False)


def test_non_unit_inputs_are_cosines(fixture):
    q, pool = fixture.queries[2], fixture.pool(2)
    scales = np.linspace(0.5, 3, pool.shape[0], dtype=np.float32)[:, None]
    a = mempursuit.select(q * np.float32(4), pool * scales, 10)
    b = mempursuit.select(q, pool, 10)
    assert a.picks.tolist() == b.picks.tolist()


@pytest.mark.parametrize(
    "make",
    [
        lambda p: p,  # float32 C-contiguous: borrowed
        lambda p: p.astype(np.float64),  # converted
        lambda p: np.asfortranarray(p),  # converted
        lambda p: p[:, :],  # a view, still C-contiguous: borrowed
    ],
)
def test_input_not_modified(fixture, make):
    q = fixture.queries[7].copy()
    pool = make(fixture.pool(7))
    before_pool, before_q = pool.copy(), q.copy()
    rel = np.linspace(1, 0, pool.shape[0], dtype=np.float32)
    before_rel = rel.copy()
    mempursuit.select(q, pool, 10, relevance=rel, method="centroid", gamma=0.5)
    mempursuit.select_batch([q], [pool], 10, relevance=[rel], method="centroid", gamma=0.5)
    for storage in ("f16", "bf16", "int8"):
        mempursuit.select(q, pool, 10, relevance=rel, storage=storage)
    np.testing.assert_array_equal(pool, before_pool)
    np.testing.assert_array_equal(q, before_q)
    np.testing.assert_array_equal(rel, before_rel)
    assert pool.flags.writeable and q.flags.writeable and rel.flags.writeable


def test_read_only_input_accepted(fixture):
    pool = fixture.pool(4)
    pool.setflags(write=False)
    q = fixture.queries[4].copy()
    q.setflags(write=False)
    assert mempursuit.select(q, pool, 5).picks.tolist() == mempursuit.select(q.copy(), pool.copy(), 5).picks.tolist()


# The no-copy check measures the process's peak resident memory (VmHWM of
# /proc/self/status; not ru_maxrss, which a child inherits from its parent
# across fork and exec: after a test that raised pytest's own peak above the
# child's, every growth read 0) in a fresh interpreter around one call on a
# 128 MiB pool.
# A float32 C-contiguous pool must not raise the peak by more than the
# selector's scratch (well under 1 MiB here); the same pool as float64 must
# (the one documented conversion copy, 128 MiB), which shows that the
# measurement sees copies.
NO_COPY_SCRIPT = textwrap.dedent(
    """
    import re, sys
    import numpy as np
    import mempursuit

    def peak():  # KiB: this process's own peak resident memory
        with open("/proc/self/status") as f:
            return int(re.search(r"VmHWM:\\s+(\\d+) kB", f.read()).group(1))

    P, d = 32768, 1024  # 128 MiB of float32
    dtype = np.dtype(sys.argv[1])
    storage = sys.argv[2]
    rng = np.random.default_rng(0)
    pool = np.empty((P, d), dtype)
    for i in range(0, P, 4096):  # fill in blocks: no full-size temporary
        pool[i:i + 4096] = rng.standard_normal((4096, d), dtype=np.float32)
    q = rng.standard_normal(d).astype(np.float32)
    mempursuit.select(q, pool[:8], 2, storage=storage)  # load everything once
    before = peak()
    sel = mempursuit.select(q, pool, 4, storage=storage)
    after = peak()
    print((after - before) * 1024)
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/status is Linux's")
def test_float32_and_float16_input_is_not_copied():
    def growth(dtype, storage):
        out = subprocess.run(
            [sys.executable, "-c", NO_COPY_SCRIPT, dtype, storage], capture_output=True, text=True, check=True
        )
        return int(out.stdout.strip())

    mib = 1 << 20
    borrowed = growth("float32", "f32")
    assert borrowed < 16 * mib, f"float32 input raised peak memory by {borrowed / mib:.1f} MiB"
    borrowed = growth("float16", "f16")  # a 64 MiB float16 pool, used as is
    assert borrowed < 16 * mib, f"float16 input under storage f16 raised peak memory by {borrowed / mib:.1f} MiB"
    # The controls: the measurement sees the documented copies (67 and 160
    # MiB measured, whatever pytest's own peak: VmHWM is the child's).
    converted = growth("float64", "f32")  # 256 MiB pool -> one 128 MiB float32 copy
    assert converted > 100 * mib, f"float64 input raised peak memory by only {converted / mib:.1f} MiB"
    narrowed = growth("float32", "f16")  # 128 MiB pool -> one 64 MiB float16 copy
    assert narrowed > 48 * mib, f"float32 input under storage f16 raised peak memory by only {narrowed / mib:.1f} MiB"


def _max_gap_while(call):
    """Runs `call` on a second thread while this thread keeps timestamps;
    returns (call's duration, the largest gap between two timestamps taken
    while it ran). A call that holds the GIL blocks this thread for its
    whole duration."""
    done = {}

    def worker():
        t0 = time.perf_counter()
        call()
        done["t"] = (t0, time.perf_counter())

    th = threading.Thread(target=worker)
    stamps = []
    th.start()
    while th.is_alive():
        stamps.append(time.perf_counter())
    th.join()
    t0, t1 = done["t"]
    inside = [t0] + [s for s in stamps if t0 <= s <= t1] + [t1]
    return t1 - t0, max(b - a for a, b in zip(inside, inside[1:]))


@pytest.mark.parametrize("batch", [False, True])
def test_gil_released_during_selection(batch):
    rng = np.random.default_rng(3)
    d, p, k = 256, 4000, 24
    q = rng.standard_normal(d).astype(np.float32)
    pool = rng.standard_normal((p, d)).astype(np.float32)
    n = 1
    while True:  # size the call to take >= 0.3 s on this machine
        if batch:
            def call():
                mempursuit.select_batch([q] * n, [pool] * n, k, threads=1)
        else:
            big = np.tile(pool, (n, 1))

            def call():
                mempursuit.select(q, big, k)

        t0 = time.perf_counter()
        call()
        if time.perf_counter() - t0 >= 0.3:
            break
        n *= 2
    duration, gap = _max_gap_while(call)
    assert gap < duration / 2, f"this thread was blocked {gap:.3f} s of a {duration:.3f} s call"
