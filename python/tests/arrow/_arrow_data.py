"""What the Arrow and engine tests share: the skip rule, the mini fixture's
queries and pools as Arrow columns, and python/README.md's Arrow snippets."""

import contextlib
import importlib
import io
import os
import pathlib
import re

import numpy as np
import pytest


def need(module, install, required_by="MEMPURSUIT_REQUIRE_INTEGRATIONS"):
    """Imports ``module``, or skips the calling test module when it is not
    installed (the reason, shown by ``pytest -rs``, says what to install).
    When the environment variable ``required_by`` is 1 (.ci/python.sh sets
    MEMPURSUIT_REQUIRE_INTEGRATIONS, and MEMPURSUIT_REQUIRE_RAY when it
    installs Ray) a missing package is an ImportError instead, so that CI
    cannot pass by skipping it."""
    if os.environ.get(required_by) == "1":
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"{module} is not installed (pip install {install})")


def scores(pools):
    """A retriever's scores for each pool (deterministic, not the cosines)."""
    return [np.cos(np.arange(len(p), dtype=np.float32) * (i + 1)) for i, p in enumerate(pools)]


def fixture_table(fixture, n=None):
    """The fixture's first n questions as a pyarrow Table: ``id`` (int64),
    ``query`` (fixed_size_list<float32>[384]), ``pool``
    (list<fixed_size_list<float32>[384]>, ragged: each question's pool) and
    ``scores`` (list<float32>, one per candidate); with the numpy pools and
    scores it was built from."""
    import pyarrow as pa

    n = len(fixture.specs) if n is None else n
    pools = [fixture.pool(i) for i in range(n)]
    rel = scores(pools)
    d = fixture.queries.shape[1]
    offsets = pa.array(np.cumsum([0, *map(len, pools)]), pa.int32())
    table = pa.table(
        {
            "id": pa.array(np.arange(n, dtype=np.int64)),
            "query": pa.FixedSizeListArray.from_arrays(pa.array(fixture.queries[:n].ravel()), d),
            "pool": pa.ListArray.from_arrays(
                offsets, pa.FixedSizeListArray.from_arrays(pa.array(np.concatenate(pools).ravel()), d)
            ),
            "scores": pa.ListArray.from_arrays(offsets, pa.array(np.concatenate(rel))),
        }
    )
    return table, pools, rel


README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
SECTION = "\n## Arrow batches and Ray Data\n"


def readme_blocks():
    """The ```python blocks of python/README.md's Arrow section."""
    text = README.read_text()
    start = text.index(SECTION)
    end = text.find("\n## ", start + 1)
    return re.findall(r"^```python\n(.*?)^```", text[start : end if end >= 0 else len(text)], re.S | re.M)


def run_section(count=None):
    """Runs the section's first ``count`` blocks (all by default) in order in
    one fresh namespace, as a reader pasting them would; returns (namespace,
    stdout)."""
    env = {"__name__": "__readme__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for i, block in enumerate(readme_blocks()[:count]):
            exec(compile(block, f"python/README.md, Arrow snippet {i + 1}", "exec"), env)
    return env, out.getvalue()
