"""mempursuit.Store: a store's selection is `select` on the gathered rows
rows[ids] (every field, every method and storage, with relevance and
costs, on the HotpotQA mini fixture's 24 queries and their pools of store
ids), its batch is its single calls, append keeps ids and validation, and
its errors name the row or the position of the id (MemPursuitError.index,
.id, .argument). The caller's arrays are never modified."""

import numpy as np
import pytest

import mempursuit
from test_api import same

METHODS = ["recommended", "pursuit", "centroid", "topk", "mmr"]
STORAGES = ["f32", "f16", "bf16", "int8"]


def call(fixture, i):
    """Query i, its pool as store ids (int64) and deterministic costs."""
    ids = np.asarray(fixture.specs[i]["pool"], np.int64)
    costs = (np.arange(len(ids), dtype=np.float32) % 7) + 1
    return fixture.queries[i], ids, costs


@pytest.fixture(scope="module")
def stores(fixture):
    return {s: mempursuit.Store(fixture.memories, storage=s) for s in STORAGES}


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("method", METHODS)
def test_store_select_is_select_on_the_gathered_rows(fixture, stores, method, storage):
    store = stores[storage]
    assert (len(store), store.dim, store.storage) == (1022, 384, storage)
    for i in range(len(fixture.specs)):
        q, ids, _ = call(fixture, i)
        rows = fixture.memories[ids]
        got = store.select(q, ids, 5, method=method)
        want = mempursuit.select(q, rows, 5, method=method, storage=storage)
        same(got, want)
        assert len(got) == 5
        # The store's storage may be named again.
        same(store.select(q, ids, 5, method=method, storage=storage), want)


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("method", METHODS)
def test_store_relevance_costs_and_cost_budget(fixture, stores, method, storage):
    store = stores[storage]
    for i in range(0, len(fixture.specs), 3):
        q, ids, costs = call(fixture, i)
        rows = fixture.memories[ids]
        relevance = np.linspace(1.0, 0.0, len(ids), dtype=np.float32)
        options = {"method": method, "cost_budget": 9.0}
        got = store.select(q, ids, 8, relevance=relevance, costs=costs, **options)
        want = mempursuit.select(q, rows, 8, relevance=relevance, costs=costs, storage=storage, **options)
        same(got, want)
        assert float(costs[got.picks].sum()) <= 9.0


def test_store_picks_name_positions_in_ids():
    s = np.float32(1 / np.sqrt(2))
    # README's rows (0 and 1 paraphrase fact A, row 3 states fact B) in a store.
    rows = np.array([[0.9950, 0.0998], [0.9998, 0.0200], [-1.0, 0.0], [0.0, 1.0]], np.float32)
    store = mempursuit.Store(rows)
    ids = [0, 1, 3]
    sel = store.select(np.array([s, s], np.float32), ids, 2)
    assert sel.picks.tolist() == [0, 2]
    assert np.asarray(ids)[sel.picks].tolist() == [0, 3]
    assert sel.weights.tolist() == [0.5, 0.5]
    # Any integer dtype and order, a list, a tuple: row 0 (position 2), then row 3 (position 0).
    for form in (np.array([3, 1, 0], np.uint16), (3, 1, 0), [3, 1, 0], np.array([3, 1, 0], np.int32)):
        assert store.select(np.array([s, s], np.float32), form, 2).picks.tolist() == [2, 0]
    assert store.select(np.array([s, s], np.float32), [], 2).picks.tolist() == []


def test_store_batch_equals_single_calls(fixture, stores):
    queries = [fixture.queries[i] for i in range(len(fixture.specs))]
    id_lists = [np.asarray(spec["pool"]) for spec in fixture.specs]
    costs = [call(fixture, i)[2] for i in range(len(fixture.specs))]
    for storage in ("f32", "int8"):
        store = stores[storage]
        for threads in (1, 2, None):
            batch = store.select_batch(
                np.stack(queries), id_lists, 6, costs=costs, cost_budget=12.0, method="pursuit", threads=threads
            )
            assert len(batch) == len(queries)
            for q, ids, c, got in zip(queries, id_lists, costs, batch):
                same(got, store.select(q, ids, 6, costs=c, cost_budget=12.0, method="pursuit"))
    # A stacked id array (n, P) and stacked relevance.
    ids2 = np.stack([id_lists[0][:10], id_lists[1][:10]])
    rel2 = np.tile(np.linspace(1, 0, 10, dtype=np.float32), (2, 1))
    batch = stores["f32"].select_batch(np.stack(queries[:2]), ids2, 3, relevance=rel2)
    for j in range(2):
        same(batch[j], mempursuit.select(queries[j], fixture.memories[ids2[j]], 3, relevance=rel2[j]))


def test_store_append(fixture):
    memories = fixture.memories
    store = mempursuit.Store(memories[:500], storage="bf16")
    assert store.append(memories[500:]) == range(500, 1022)
    assert store.append(np.empty((0, 384), np.float32)) == range(1022, 1022)
    assert len(store) == 1022
    whole = mempursuit.Store(memories, storage="bf16")
    q, ids, _ = call(fixture, 4)
    same(store.select(q, ids, 5), whole.select(q, ids, 5))
    same(store.select(q, ids, 5), mempursuit.select(q, memories[ids], 5, storage="bf16"))
    # A failed append adds nothing and names the bad row's store id.
    bad = memories[:3].copy()
    bad[2, 7] = np.inf
    with pytest.raises(mempursuit.MemPursuitError) as e:
        store.append(bad)
    assert (e.value.kind, e.value.index, e.value.argument) == ("input", 1024, "rows")
    assert str(e.value).startswith("store row 1024: element 7 is not finite")
    assert len(store) == 1022
    with pytest.raises(mempursuit.MemPursuitError, match="d = 3 columns but the store's rows have d = 384"):
        store.append(np.ones((2, 3), np.float32))


def test_store_from_npy(fixture, tmp_path):
    path = tmp_path / "rows.npy"
    np.save(path, fixture.memories)
    store = mempursuit.Store.from_npy(path, storage="int8")
    assert (len(store), store.dim, store.storage) == (1022, 384, "int8")
    q, ids, _ = call(fixture, 2)
    same(store.select(q, ids, 4), mempursuit.select(q, fixture.memories[ids], 4, storage="int8"))
    np.save(path, fixture.memories.astype(np.float64))
    same(mempursuit.Store.from_npy(str(path)).select(q, ids, 4), mempursuit.select(q, fixture.memories[ids], 4))


def test_store_errors(fixture):
    memories = fixture.memories
    rows = memories[:20].copy()
    rows[13] = 0.0
    with pytest.raises(mempursuit.MemPursuitError) as e:
        mempursuit.Store(rows)
    assert (e.value.kind, e.value.index, e.value.id, e.value.argument) == ("input", 13, None, "rows")
    assert str(e.value).startswith("store row 13: ")
    # A value f16 cannot hold names its store row.
    big = memories[:4].copy()
    big[2, 5] = 1e5
    with pytest.raises(mempursuit.MemPursuitError) as e:
        mempursuit.Store(big, storage="f16")
    assert (e.value.kind, e.value.index, e.value.argument) == ("input", 2, "rows")
    with pytest.raises(mempursuit.MemPursuitError, match=r"rows must have shape \(N, d\)"):
        mempursuit.Store(memories[0])
    with pytest.raises(mempursuit.MemPursuitError, match="dimension d is 0") as e:
        mempursuit.Store(np.empty((3, 0), np.float32))
    assert e.value.kind == "input"
    with pytest.raises(mempursuit.MemPursuitError) as e:
        mempursuit.Store(memories, storage="f64")
    assert e.value.kind == "option"
    with pytest.raises(TypeError):
        mempursuit.Store(np.array([["a", "b"]]))

    store = mempursuit.Store(memories[:100])
    q = fixture.queries[0]
    with pytest.raises(mempursuit.MemPursuitError) as e:
        store.select(q, [4, 99, 100, 7], 2)
    err = e.value
    assert (err.kind, err.index, err.id, err.argument) == ("input", 2, "100", "ids")
    assert str(err) == (
        "ids[2] = 100 names no row of the store (it holds 100 rows, ids 0..100); pass ids the store returned"
    )
    with pytest.raises(mempursuit.MemPursuitError) as e:
        store.select(q, np.array([4, -1], np.int64), 2)
    assert (e.value.kind, e.value.index, e.value.id, e.value.argument) == ("input", 1, "-1", "ids")
    with pytest.raises(TypeError, match="not an integer type"):
        store.select(q, [1.0, 2.0], 2)
    with pytest.raises(mempursuit.MemPursuitError, match=r"ids must have shape \(P,\)"):
        store.select(q, [[1, 2]], 2)
    with pytest.raises(mempursuit.MemPursuitError) as e:
        store.select(q[:100], [1, 2], 2)
    assert (e.value.kind, e.value.argument) == ("input", "query")
    assert "the query has 100 values but the store's rows have d = 384" in str(e.value)
    with pytest.raises(mempursuit.MemPursuitError) as e:
        store.select(q, [1, 2], 2, storage="int8")
    assert e.value.kind == "option"
    assert "the store keeps 'f32'" in str(e.value)
    with pytest.raises(mempursuit.MemPursuitError) as e:
        store.select(q, [1, 2], 2, gamma=2.0, method="centroid")
    assert e.value.kind == "option"
    with pytest.raises(mempursuit.MemPursuitError, match="relevance"):
        store.select(q, [1, 2], 2, relevance=[1.0])
    # In a batch, the pair and the position.
    with pytest.raises(mempursuit.MemPursuitError) as e:
        store.select_batch([q, q], [[1, 2], [3, 500]], 2)
    assert str(e.value).startswith("pair 1: ids[1] = 500 names no row")
    assert (e.value.index, e.value.id) == (1, "500")
    with pytest.raises(mempursuit.MemPursuitError, match="2 queries but 1 id lists"):
        store.select_batch([q, q], [[1, 2]], 2)
    with pytest.raises(mempursuit.MemPursuitError, match="pair 1: the query has 3 values"):
        store.select_batch([q, q[:3]], [[1, 2], [3]], 2)
    with pytest.raises(mempursuit.MemPursuitError) as e:
        store.select_batch([q], [[1]], 2, threads=0)
    assert e.value.kind == "option"


def test_store_leaves_the_callers_arrays_alone(fixture):
    rows = fixture.memories[:200].copy()
    rows_before = rows.copy()
    store = mempursuit.Store(rows)
    rows[0] = 0.0  # the store keeps its own copy
    rows[:] = rows_before
    q = fixture.queries[1].copy()
    ids = np.array([5, 9, 150, 3, 77, 12], np.int64)
    relevance = np.linspace(2, 1, 6).astype(np.float32)
    costs = np.arange(1, 7, dtype=np.float32)
    copies = [a.copy() for a in (q, ids, relevance, costs)]
    for a in (q, ids, relevance, costs):
        a.flags.writeable = False  # a write would raise
    sel = store.select(q, ids, 3, relevance=relevance, costs=costs, cost_budget=8.0)
    store.select_batch([q], [ids], 3, relevance=[relevance], costs=[costs], cost_budget=8.0)
    store.append(rows[:2])
    for a, b in zip((q, ids, relevance, costs), copies):
        assert a.tobytes() == b.tobytes()
    assert rows.tobytes() == rows_before.tobytes()
    assert sel.picks.tolist() == mempursuit.select(
        q, rows[ids], 3, relevance=relevance, costs=costs, cost_budget=8.0
    ).picks.tolist()
    assert repr(store) == "Store(len=202, dim=384, storage='f32')"


def test_store_append_while_another_thread_selects():
    """An append waits for the calls in flight on other threads (the GIL is
    released while they select) instead of failing; every call sees a whole
    store, and its picks are those of the store it saw."""
    import threading

    rng = np.random.default_rng(5)
    rows = rng.standard_normal((4000, 256)).astype(np.float32)
    more = rng.standard_normal((40, 256)).astype(np.float32)
    q = rng.standard_normal(256).astype(np.float32)
    ids = np.arange(4000)
    store = mempursuit.Store(rows)
    want = mempursuit.select(q, rows, 20).picks
    results, stop = [], threading.Event()

    def selects():
        while not stop.is_set():
            results.append(store.select(q, ids, 20).picks)

    worker = threading.Thread(target=selects)
    worker.start()
    try:
        appended = [store.append(more[i : i + 1]) for i in range(40)]
    finally:
        stop.set()
        worker.join()
    assert appended == [range(4000 + i, 4001 + i) for i in range(40)]
    assert len(store) == 4040
    assert results and all(np.array_equal(p, want) for p in results)
