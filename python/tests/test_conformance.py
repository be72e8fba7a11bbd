"""The conformance vectors (tests/conformance/vectors.json, produced by the
Rust library; format: tests/conformance/README.md): every case through
``mempursuit.select(query, candidates, k, relevance=..., costs=..., **options)``, a
reused ``Selector`` and ``select_batch``, with the candidates as a NumPy
array of the case's dtype. Picks, stop reason, excluded, skipped and the
steps' names and flags exactly, numbers to 1e-9 (absolute, relative above
1); error cases raise ``MemPursuitError`` (``CapacityError`` for kind
capacity) with the case's ``kind`` and message word for word."""

import json
import math
import pathlib

import numpy as np
import pytest

import mempursuit

REPO = pathlib.Path(__file__).resolve().parents[2]
VECTORS = json.loads((REPO / "tests" / "conformance" / "vectors.json").read_text())
# Keyed by position and name (a few names repeat with other options, e.g.
# centroid with its default gamma and with gamma 0.2).
CASES = {f"{i:03}:{case['name']}": case for i, case in enumerate(VECTORS["cases"])}

# Fields compared exactly; `verified` (int8 certificate checks) may differ
# between builds with and without FMA and is not compared across languages.
EXACT = {"index", "free_size", "solver_iterations", "filled", "dependent", "refit"}
NUMBERS = {"score", "residual_sq", "improvement", "fw_gap", "nu"}
SKIPPED = {"verified"}


def number(x):
    """A JSON number, or "nan" / "inf" / "-inf"."""
    return float(x)


def arrays(case):
    inp = VECTORS["inputs"][case["input"]]
    query = np.array([number(x) for x in inp["query"]], dtype=np.float64).astype(np.float32)
    rows = [[number(x) for x in row] for row in inp["candidates"]]
    dtype = {"float32": np.float32, "float16": np.float16}[case["dtype"]]
    candidates = np.array(rows, dtype=np.float64).astype(dtype)
    # Every value is exact in the case's dtype.
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(candidates)
        assert np.array_equal(candidates.astype(np.float64)[finite], np.array(rows)[finite])
    relevance = case["relevance"]
    if relevance is not None:
        relevance = np.array([number(x) for x in relevance], dtype=np.float64).astype(np.float32)
    return query, candidates, relevance


def close(a, b):
    if math.isnan(b):
        return math.isnan(a)
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


def check_selection(sel, expect):
    assert sel.picks.tolist() == expect["picks"]
    assert len(sel.weights) == len(expect["weights"])
    for a, b in zip(sel.weights.tolist(), expect["weights"]):
        assert close(a, b), (sel.weights, expect["weights"])
    assert sel.stop_reason == expect["stop_reason"]
    assert sel.excluded.tolist() == expect["excluded"]
    assert sel.skipped.tolist() == expect["skipped"]
    steps = sel.steps
    assert steps.dtype.names == tuple(VECTORS["step_fields"])
    assert len(steps) == len(expect["steps"])
    for t, (got, want) in enumerate(zip(steps, expect["steps"])):
        assert set(want) == set(VECTORS["step_fields"])
        for name in VECTORS["step_fields"]:
            value = got[name].item()
            if name in EXACT:
                assert value == want[name], (t, name, value, want[name])
            elif name in NUMBERS:
                assert close(value, want[name]), (t, name, value, want[name])
            else:
                assert name in SKIPPED, name


def run(entry, case, selector):
    query, candidates, relevance = arrays(case)
    k, options = case["k"], case["options"]
    # Costs (with the option cost_budget), only in the cases that have them:
    # as float32, or as the int64 token counts a caller would pass.
    costs = case.get("costs")
    if costs is not None:
        costs = np.array([number(x) for x in costs], dtype=np.float64).astype(np.float32)
        if entry == "Selector" and np.all(np.isfinite(costs)) and np.all(costs == np.round(costs)):
            costs = costs.astype(np.int64)
    if entry == "select":
        return mempursuit.select(query, candidates, k, relevance=relevance, costs=costs, **options)
    if entry == "Selector":
        return selector.select(query, candidates, k, relevance=relevance, costs=costs, **options)
    rel = None if relevance is None else [relevance]
    cost = None if costs is None else [costs]
    (sel,) = mempursuit.select_batch(
        [query], [candidates], k, relevance=rel, costs=cost, threads=1, **options
    )
    return sel


@pytest.fixture(scope="module")
def selector():
    """One Selector for every case: reuse across shapes changes nothing."""
    return mempursuit.Selector()


def test_vectors_cover_the_issue():
    """Every method, relevance kind, storage and dtype, and the error kinds."""
    methods = {c["options"].get("method", "recommended") for c in CASES.values() if "expect" in c}
    assert methods >= set(mempursuit.METHODS)
    storages = {c["options"].get("storage", "f32") for c in CASES.values() if "expect" in c}
    assert storages == set(mempursuit.OPTIONS["storage"]["values"])
    assert {c["dtype"] for c in CASES.values()} == {"float32", "float16"}
    kinds = {c["error"]["kind"] for c in CASES.values() if "error" in c}
    assert kinds == {"input", "option"}
    assert any(c["options"].get("raw_relevance") for c in CASES.values())
    assert any(c["options"].get("pool_order") for c in CASES.values())
    # Budgets in tokens: costs with cost_budget, a selection they end.
    assert any(c.get("costs") for c in CASES.values())
    stops = {c["expect"]["stop_reason"] for c in CASES.values() if "expect" in c}
    assert "cost_budget" in stops
    assert len(CASES) >= 100


@pytest.mark.parametrize("entry", ["select", "Selector", "select_batch"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, entry, selector):
    case = CASES[name]
    if "expect" in case:
        check_selection(run(entry, case, selector), case["expect"])
        return
    error = case["error"]
    expected = MemPursuitErrorFor(error["kind"])
    with pytest.raises(expected) as e:
        run(entry, case, selector)
    assert e.value.kind == error["kind"]
    message = error["message"]
    if entry == "select_batch" and error["kind"] != "option":
        # The options are checked once for the whole batch; the data per
        # pair, whose errors name it.
        message = "pair 0: " + message
    assert str(e.value) == message


def MemPursuitErrorFor(kind):
    return mempursuit.CapacityError if kind == "capacity" else mempursuit.MemPursuitError
