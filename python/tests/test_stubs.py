"""The type stubs (mempursuit/_mempursuit.pyi) match the compiled module:
mypy's stubtest compares every name, signature and default of the stubs
with the runtime objects, and a typical use type-checks under --strict (and
one of mempursuit.arrow, typed inline, where pyarrow is installed).
Runs where mypy is installed (.ci/python.sh installs it)."""

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("mypy")

USAGE = textwrap.dedent(
    """
    from typing import Literal
    import numpy as np
    import numpy.typing as npt
    import mempursuit

    q = np.ones(4, np.float32)
    pool = np.eye(4, dtype=np.float32)
    sel = mempursuit.select(q, pool, 2)
    sel = mempursuit.select(q, pool, 2, method="centroid", gamma=0.5, relevance=[1, 2, 3, 4])
    picks: npt.NDArray[np.int64] = sel.picks
    weights: npt.NDArray[np.float64] = sel.weights
    skipped: npt.NDArray[np.int64] = sel.skipped
    reason: str = sel.stop_reason
    batch: list[mempursuit.Selection] = mempursuit.select_batch([q], [pool], 2, threads=2, storage="int8")
    ragged = mempursuit.select_batch(np.stack([q, q]), pool, 2, offsets=np.array([0, 1, 4]), relevance=[1, 2, 3, 4])
    selector = mempursuit.Selector(max_pool=16, max_budget=4)
    n: int = len(selector.select(q, pool, 1, method="pursuit", storage="f16", adaptive=True))
    n = len(selector.select(q, pool, np.int64(1)))  # a NumPy integer is a budget too
    options: dict[str, object] = {"method": "mmr", "mmr_lambda": 0.3}
    store = mempursuit.Store(pool, storage="int8")
    new_ids: range = store.append(pool)
    size: int = len(store) + store.dim
    kept: str = store.storage
    picks = store.select(q, np.array([0, 2, 5]), 2, method="pursuit", costs=[1, 2, 3], cost_budget=3.0).picks
    per_query: list[mempursuit.Selection] = store.select_batch([q, q], [[0, 1], [2, 3]], 1, threads=2)
    mempursuit.select(q, pool, 2, method=None, dependent_picks=None)
    kinds: list[str] = [info["type"] for info in mempursuit.OPTIONS.values()]
    names: tuple[str, ...] = mempursuit.METHODS
    try:
        mempursuit.select(q, pool, 2, method="pursuit", gamma=2.0)
    except mempursuit.CapacityError as e:
        kind: str = e.kind
    except mempursuit.MemPursuitError as e:
        kind = e.kind
        three: Literal["input", "option", "capacity"] = e.kind
    """
)


def run(args, tmp_path):
    # From an empty directory, so that the installed package is checked.
    env = dict(os.environ, MYPY_CACHE_DIR=str(tmp_path / "cache"))
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=tmp_path, capture_output=True, text=True, env=env
    )


def test_stubtest(tmp_path):
    # The compiled module, whose stubs these are. Not "mempursuit": stubtest
    # walks every submodule, and mempursuit.integrations.* import optional
    # frameworks (and would make mypy analyse their sources, about a minute).
    out = run(["mypy.stubtest", "mempursuit._mempursuit"], tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr


def test_usage_type_checks(tmp_path):
    (tmp_path / "usage.py").write_text(USAGE)
    out = run(["mypy", "--strict", "usage.py"], tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr


ARROW_USAGE = textwrap.dedent(
    """
    import numpy as np
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
    import mempursuit
    import mempursuit.arrow

    q = pa.FixedSizeListArray.from_arrays(pa.array(np.ones(8, np.float32)), 4)
    p = pa.array([[[1, 0, 0, 0]], [[0, 1, 0, 0], [1, 1, 0, 0]]], pa.list_(pa.list_(pa.float32(), 4)))
    result = mempursuit.arrow.select_arrow(q, p, 2, relevance=None, threads=1, method="pursuit")
    table = pa.table({"q": q, "p": p})
    out = mempursuit.arrow.select_table(table, 2, query_column="q", pool_column="p", prefix="mp_", gamma=0.5)
    columns: tuple[str, ...] = mempursuit.arrow.RESULT_COLUMNS
    """
)


def test_arrow_usage_type_checks(tmp_path):
    # mempursuit.arrow is typed inline (py.typed); pyarrow has no stubs.
    pytest.importorskip("pyarrow", reason="pyarrow is not installed (pip install './python[arrow]')")
    (tmp_path / "usage.py").write_text(ARROW_USAGE)
    out = run(["mypy", "--strict", "usage.py"], tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
