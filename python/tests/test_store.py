"""mempursuit.Store: a store's selection is `select` on the gathered rows
rows[ids] (every field, every method and storage, with relevance and
costs, on the HotpotQA mini fixture's 24 queries and their pools of store
ids), its batch is its single calls, append keeps ids and validation, and
its errors name the row or the position of the id (MemPursuitError.index,
.id, .argument). The caller's arrays are never modified."""

import copy
import multiprocessing
import operator
import os
import pickle
from concurrent.futures import ProcessPoolExecutor

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
    with pytest.raises(mempursuit.MemPursuitError, match="threads must be >= 0, got -1") as e:
        store.select_batch([q], [[1]], 2, threads=-1)
    assert (e.value.kind, e.value.argument) == ("option", "threads")


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


def _bf16(x):
    """float32 values rounded to bfloat16 (to nearest, ties to even) and
    widened back: the stored values of a bf16 store (finite inputs)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return r.view(np.float32)


def test_store_pickles_to_the_same_store(fixture):
    """pickle (every protocol), copy.copy and copy.deepcopy give a store of
    the same rows, d and storage: the same selection, every field, on every
    fixture query; an appended store keeps its appended rows."""
    memories = fixture.memories
    for storage in STORAGES:
        store = mempursuit.Store(memories[:600], storage=storage)
        store.append(memories[600:])
        clones = [pickle.loads(pickle.dumps(store, protocol=p)) for p in range(pickle.HIGHEST_PROTOCOL + 1)]
        clones += [copy.copy(store), copy.deepcopy(store), copy.deepcopy([store])[0]]
        for clone in clones:
            assert clone is not store
            assert (len(clone), clone.dim, clone.storage, clone.nbytes) == (1022, 384, storage, store.nbytes)
            assert repr(clone) == f"Store(len=1022, dim=384, storage='{storage}')"
        for i in range(0, len(fixture.specs), 4):
            q, ids, costs = call(fixture, i)
            want = store.select(q, ids, 6, costs=costs, cost_budget=10.0)
            for clone in clones[-4:]:
                same(clone.select(q, ids, 6, costs=costs, cost_budget=10.0), want)
    # The state is the rows as float32, little-endian: as given for f32 and
    # int8, the stored values widened for f16 / bf16.
    for storage, kept in (
        ("int8", memories[:3]),
        ("bf16", _bf16(memories[:3])),
        ("f16", memories[:3].astype(np.float16).astype(np.float32)),
    ):
        rebuild, (version, dim, name, data) = mempursuit.Store(memories[:3], storage=storage).__reduce__()
        assert rebuild is mempursuit._mempursuit._store_from_state
        assert (version, dim, name) == (1, 384, storage)
        assert data == kept.astype("<f4").tobytes()
    # An empty store (d known, no rows) too.
    empty = pickle.loads(pickle.dumps(mempursuit.Store(np.empty((0, 5), np.float32), storage="int8")))
    assert (len(empty), empty.dim, empty.storage) == (0, 5, "int8")


def test_store_copies_are_independent(fixture):
    store = mempursuit.Store(fixture.memories[:10])
    for clone in (copy.copy(store), copy.deepcopy(store), pickle.loads(pickle.dumps(store))):
        assert clone.append(fixture.memories[10:12]) == range(10, 12)
        assert (len(clone), len(store)) == (12, 10)
    with pytest.raises(mempursuit.MemPursuitError, match="ids\\[0\\] = 11 names no row"):
        store.select(fixture.queries[0], [11], 1)


def test_a_corrupt_pickle_is_refused(fixture):
    rows = fixture.memories[:4]
    rebuild = mempursuit._mempursuit._store_from_state
    good = rows.astype("<f4").tobytes()
    with pytest.raises(ValueError, match="state version 2; this mempursuit reads version 1"):
        rebuild(2, 384, "f32", good)
    with pytest.raises(mempursuit.MemPursuitError, match="not whole rows of d = 384"):
        rebuild(1, 384, "f32", good[:-4])
    bad = bytearray(good)
    bad[384 * 4 * 2 : 384 * 4 * 2 + 4] = np.float32(np.nan).tobytes()
    with pytest.raises(mempursuit.MemPursuitError) as e:
        rebuild(1, 384, "int8", bytes(bad))
    assert str(e.value).startswith("a pickled mempursuit.Store: store row 2: element 0 is not finite")
    assert (e.value.kind, e.value.index) == ("input", 2)
    with pytest.raises(mempursuit.MemPursuitError) as e:
        rebuild(1, 384, "f64", good)
    assert e.value.kind == "option"


def _picks(store, query, ids, k):
    """A worker's call (module level: a process pool pickles it by name)."""
    return len(store), store.select(query, ids, k)


def test_selections_pickle(fixture, stores):
    """A Selection pickles (a worker sends it back so) and copies: every
    field equal, the arrays read-only again, len and repr kept."""
    for storage, method in (("f32", "recommended"), ("int8", "pursuit"), ("bf16", "mmr")):
        q, ids, costs = call(fixture, 7)
        sel = stores[storage].select(q, ids, 6, method=method, costs=costs, cost_budget=9.0)
        for p in range(pickle.HIGHEST_PROTOCOL + 1):
            back = pickle.loads(pickle.dumps(sel, protocol=p))
            same(back, sel)
            assert (len(back), repr(back)) == (len(sel), repr(sel))
            for a in (back.picks, back.weights, back.excluded, back.skipped, back.steps):
                assert not a.flags.writeable
        assert copy.copy(sel) is sel and copy.deepcopy(sel) is sel
    empty = pickle.loads(pickle.dumps(stores["f32"].select(q, [], 3)))
    assert (len(empty), empty.picks.tolist(), empty.stop_reason) == (0, [], "pool_exhausted")


def test_store_goes_through_a_process_pool(fixture):
    """A store sent to worker processes (spawned: nothing inherited, the
    store arrives by pickle) gives the picks of the original."""
    store = mempursuit.Store(fixture.memories, storage="int8")
    work = [call(fixture, i)[:2] for i in range(6)]
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        got = list(pool.map(_picks, [store] * len(work), *zip(*work), [5] * len(work)))
        # A method called on the store in the worker.
        lengths = list(pool.map(operator.methodcaller("__len__"), [store, store]))
    assert lengths == [1022, 1022]
    for (q, ids), (n, sel) in zip(work, got):
        assert n == 1022
        same(sel, store.select(q, ids, 5))  # the Selection came back by pickle


def test_store_threads_zero_is_one_per_cpu(fixture, stores):
    """threads=0 (and None) is one thread per available CPU, as in the Rust
    crate; the selections are those of one thread, for the store and the
    module function."""
    queries = np.stack([fixture.queries[i] for i in range(8)])
    id_lists = [np.asarray(fixture.specs[i]["pool"]) for i in range(8)]
    store = stores["f32"]
    one = store.select_batch(queries, id_lists, 5, threads=1)
    for threads in (0, None, os.cpu_count()):
        for a, b in zip(store.select_batch(queries, id_lists, 5, threads=threads), one):
            same(a, b)
    pools = [fixture.memories[ids] for ids in id_lists]
    one = mempursuit.select_batch(queries, pools, 5, threads=1)
    for a, b in zip(mempursuit.select_batch(queries, pools, 5, threads=0), one):
        same(a, b)
    with pytest.raises(mempursuit.MemPursuitError, match="threads must be >= 0") as e:
        mempursuit.select_batch(queries, pools, 5, threads=-2)
    assert e.value.kind == "option"
    with pytest.raises(TypeError, match="threads must be an int, not float"):
        store.select_batch(queries, id_lists, 5, threads=1.0)


@pytest.mark.parametrize(
    "dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", ">i4", ">u8", "intp"]
)
def test_store_ids_of_every_integer_dtype(fixture, stores, dtype):
    q, ids, _ = call(fixture, 3)
    ids = ids[ids < 127]  # every dtype holds them
    want = mempursuit.select(q, fixture.memories[ids], 3)
    same(stores["f32"].select(q, ids.astype(dtype), 3), want)
    same(stores["f32"].select(q, ids.astype(dtype)[::-1].copy()[::-1], 3), want)  # strided view
    if np.dtype(dtype).kind == "i":
        bad = ids.astype(dtype)
        bad[1] = -3
        with pytest.raises(mempursuit.MemPursuitError) as e:
            stores["f32"].select(q, bad, 3)
        assert (e.value.kind, e.value.index, e.value.id, e.value.argument) == ("input", 1, "-3", "ids")
        assert str(e.value) == (
            "ids[1] = -3 is negative: it names no row of the store (ids run from 0); pass ids the store returned"
        )
    with pytest.raises(TypeError, match="dtype bool is not an integer type"):
        stores["f32"].select(q, ids > 5, 3)


@pytest.mark.parametrize("dtype", ["float16", "float64", ">f4", "int32"])
def test_store_rows_and_queries_of_other_dtypes_are_converted(fixture, dtype):
    rows = fixture.memories[:300]
    if dtype == "int32":
        rows = np.round(rows * 1000)
    converted = rows.astype(dtype)
    q, _, _ = call(fixture, 0)
    ids = np.arange(0, 300, 3)
    want = mempursuit.Store(converted.astype(np.float32)).select(q, ids, 5)
    same(mempursuit.Store(converted).select(q, ids, 5), want)
    same(mempursuit.Store(converted.tolist()).select(q.astype(np.float64), ids.tolist(), 5), want)
    same(mempursuit.Store(np.asfortranarray(converted)).select(q, ids, 5), want)
    with pytest.raises(TypeError, match="rows: dtype complex128 is not real-valued"):
        mempursuit.Store(rows.astype(np.complex128))


def test_store_from_npy_errors_name_the_path_and_the_fix(fixture, tmp_path):
    """A file from_npy cannot use is a MemPursuitError (kind "input",
    argument "path") whose message starts with the path and says what to
    do; a missing file stays FileNotFoundError."""
    path = tmp_path / "rows.npy"

    def refused(match):
        with pytest.raises(mempursuit.MemPursuitError) as e:
            mempursuit.Store.from_npy(path)
        err = e.value
        assert str(err).startswith(f"{path}: "), str(err)
        assert match in str(err), str(err)
        assert err.kind == "input"
        return err

    path.write_text("id,embedding\n1,0.5\n")
    err = refused("not an .npy file (it does not start with the NumPy magic string \\x93NUMPY); save the rows")
    assert (err.argument, err.index) == ("path", None)
    path.write_bytes(b"")
    refused("an empty file, not an .npy file")
    path.write_bytes(pickle.dumps(fixture.memories[:2]))
    refused("not an .npy file")
    np.savez(tmp_path / "rows.npz", a=fixture.memories[:2])
    path = tmp_path / "rows.npz"
    refused('an .npz (zip) archive of several arrays, not an .npy file; pass one of its arrays: Store(numpy.load(path)["name"])')
    path = tmp_path / "rows.npy"
    np.save(path, fixture.memories[:2])
    whole = path.read_bytes()
    path.write_bytes(whole[:-5])
    refused("NumPy cannot read this .npy file (")
    path.write_bytes(whole[:40])
    refused("NumPy cannot read this .npy file (")
    path.write_bytes(whole[:6] + b"\x09" + whole[7:])  # format version 9.0
    refused("NumPy cannot read this .npy file (")
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    refused("NumPy cannot read this .npy file (")
    np.save(path, fixture.memories[:2].astype(np.complex64))
    refused("dtype complex64 is not real-valued; save float32 rows: numpy.save(path, rows.astype(numpy.float32))")
    np.save(path, fixture.memories[0])
    refused("the array has shape (384,), not (N, d) with one memory per row (one row of d values: save rows.reshape(1, -1))")
    np.save(path, fixture.memories[:4].reshape(2, 2, 384))
    refused("the array has shape (2, 2, 384), not (N, d)")
    rows = fixture.memories[:5].copy()
    rows[3] = 0
    np.save(path, rows)
    err = refused("store row 3: all elements are zero")
    assert (err.index, err.argument) == (3, "rows")
    with pytest.raises(FileNotFoundError):
        mempursuit.Store.from_npy(tmp_path / "missing.npy")
    with pytest.raises(TypeError, match="expected str, bytes or os.PathLike object, not int"):
        mempursuit.Store.from_npy(3)


def test_store_from_npy_reads_every_form_numpy_writes(fixture, tmp_path):
    """str, bytes and pathlib paths; float32, float64, float16, big-endian
    and Fortran order; an empty (0, d) matrix."""
    path = tmp_path / "rows.npy"
    rows = fixture.memories[:200]
    q, ids = fixture.queries[5], np.arange(0, 200, 2)
    want = mempursuit.Store(rows).select(q, ids, 4)
    for form in (rows, rows.astype(">f4"), np.asfortranarray(rows), rows.astype(np.float64)):
        np.save(path, form)
        for p in (path, str(path), os.fsencode(path)):
            same(mempursuit.Store.from_npy(p).select(q, ids, 4), want)
    np.save(path, rows.astype(np.float16))
    same(mempursuit.Store.from_npy(path).select(q, ids, 4), mempursuit.Store(rows.astype(np.float16)).select(q, ids, 4))
    np.save(path, np.empty((0, 384), np.float32))
    store = mempursuit.Store.from_npy(path, storage="f16")
    assert (len(store), store.dim, store.storage) == (0, 384, "f16")


def test_store_from_npy_on_mutated_files(fixture, tmp_path):
    """A seeded fuzz of from_npy's own code (the magic check and the
    mapping of NumPy's errors; the parsing is numpy.load's): 600 files
    made by flipping, inserting, deleting bytes and truncating a valid
    .npy give a store or a MemPursuitError / OSError, never another
    exception, and a store only of a file NumPy reads the same way."""
    path = tmp_path / "rows.npy"
    np.save(path, fixture.memories[:3, :16].copy())
    valid = path.read_bytes()
    rng = np.random.default_rng(29)
    outcomes = {"store": 0, "refused": 0}
    for trial in range(600):
        data = bytearray(valid)
        for _ in range(int(rng.integers(1, 4))):
            op = int(rng.integers(0, 4))
            at = int(rng.integers(0, len(data) + 1))
            if op == 0 and at < len(data):
                data[at] ^= 1 << int(rng.integers(0, 8))
            elif op == 1:
                data[at:at] = bytes([int(rng.integers(0, 256))])
            elif op == 2 and at < len(data):
                del data[at]
            else:
                data = data[: int(rng.integers(0, len(data) + 1))]
        path.write_bytes(bytes(data))
        try:
            store = mempursuit.Store.from_npy(path)
        except mempursuit.MemPursuitError as e:
            assert e.kind == "input" and str(e).startswith(f"{path}: "), (trial, str(e))
            outcomes["refused"] += 1
        else:
            loaded = np.load(path, allow_pickle=False)
            assert (len(store), store.dim) == loaded.shape, trial
            outcomes["store"] += 1
    # Both outcomes occur (the fuzz reaches past the header).
    assert outcomes["store"] > 20 and outcomes["refused"] > 300, outcomes


def test_store_describes_itself(fixture):
    """len, dim, storage, repr, nbytes (the storage's bytes, no second copy
    of the rows: f32 4·N·d, f16 / bf16 2·N·d, int8 5·N·d + 20·N) and
    sys.getsizeof."""
    import sys

    n, d = 300, 384
    for storage, nbytes in (("f32", 4 * n * d), ("f16", 2 * n * d), ("bf16", 2 * n * d), ("int8", 5 * n * d + 20 * n)):
        store = mempursuit.Store(fixture.memories[:n], storage=storage)
        assert (len(store), store.dim, store.storage, store.nbytes) == (n, d, storage, nbytes)
        assert repr(store) == f"Store(len={n}, dim={d}, storage='{storage}')"
        assert nbytes < sys.getsizeof(store) < nbytes + 1024
        store.append(fixture.memories[n : n + 10])
        assert store.nbytes == nbytes * (n + 10) // n
    assert not mempursuit.Store(np.empty((0, 3), np.float32))  # len 0
