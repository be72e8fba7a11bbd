"""The Python API picks exactly what the Rust API picks.

Reference: the `mempursuit` crate's Selector, run by
wasm/examples/native_orders.rs (see conftest.py): paper-mode pursuit,
centroid pursuit (gamma 0.5), top-K and MMR (lambda 0.5) on every query of
the HotpotQA mini fixture at K = 10 and on eight seeded synthetic pools
(P = 200, d = 384, K = 20), and the embedded-check data (P = 64, K = 16).
"""

import numpy as np
import pytest

import mempursuit

from conftest import synthetic_case, xorshift_fill

# native_orders.rs's method names -> keyword arguments of select().
METHODS = {
    "pursuit": dict(method="pursuit"),
    "centroid": dict(method="centroid", gamma=0.5),
    "topk": dict(method="topk"),
    "mmr": dict(method="mmr", mmr_lambda=0.5),
}


def check_entry(entry, query, pool, k, selector):
    for name, kwargs in METHODS.items():
        sel = selector.select(query, pool, k, **kwargs)
        assert sel.picks.tolist() == entry[name], name
        assert sel.picks.dtype == np.int64
        assert sel.stop_reason == "budget"
        if name == "pursuit":
            # serde_json writes the shortest round-trip repr: exact equality.
            assert sel.weights.tolist() == entry["pursuit_weights"]
        # The module-level function (a fresh Selector) agrees too.
        assert mempursuit.select(query, pool, k, **kwargs).picks.tolist() == entry[name]


def test_fixture_orders_equal_rust(fixture, native_orders):
    ref = native_orders["fixture"]
    assert ref["k"] == 10
    assert len(ref["queries"]) == len(fixture.specs) == 24
    selector = mempursuit.Selector()
    for entry in ref["queries"]:
        i = entry["row"]
        assert entry["id"] == fixture.specs[i]["id"]
        check_entry(entry, fixture.queries[i], fixture.pool(i), ref["k"], selector)


def test_synthetic_orders_equal_rust(native_orders):
    ref = native_orders["synthetic"]
    assert len(ref["results"]) == ref["cases"] == 8
    selector = mempursuit.Selector()
    for c, entry in enumerate(ref["results"]):
        query, pool = synthetic_case(ref["seed"], c, ref["p"], ref["d"])
        check_entry(entry, query, pool, ref["k"], selector)


def test_embedded_check_orders_equal_rust(native_orders):
    ref = native_orders["embedded"]
    query, state = xorshift_fill(0x2545F491, ref["d"])
    pool, _ = xorshift_fill(state, ref["p"] * ref["d"])
    pool = pool.reshape(ref["p"], ref["d"])
    assert mempursuit.select(query, pool, ref["k"], method="pursuit").picks.tolist() == ref["pursuit"]
    assert mempursuit.select(query, pool, ref["k"], method="topk").picks.tolist() == ref["topk"]


def test_fixture_orders_equal_rust_from_float64_and_fortran(fixture, native_orders):
    """Converted inputs (float64, Fortran order, a list) give the same picks:
    the float32 values are the same after the conversion."""
    entry = native_orders["fixture"]["queries"][0]
    q, pool = fixture.queries[0], fixture.pool(0)
    for p in (pool.astype(np.float64), np.asfortranarray(pool), pool.tolist()):
        assert mempursuit.select(q, p, 10, method="pursuit").picks.tolist() == entry["pursuit"]
    assert mempursuit.select(q.astype(np.float64), pool, 10, method="pursuit").picks.tolist() == entry["pursuit"]


@pytest.mark.parametrize("k", [0, 1, 3, 5])
def test_prefixes(fixture, native_orders, k):
    """Every prefix of paper mode's picks is the selection for that smaller
    budget (fixed budget)."""
    for entry in native_orders["fixture"]["queries"][:6]:
        i = entry["row"]
        sel = mempursuit.select(fixture.queries[i], fixture.pool(i), k, method="pursuit")
        assert sel.picks.tolist() == entry["pursuit"][:k]
