"""The Python example of the repository's README.md (section "Python") runs
as written, on a vector-store result built from the mini fixture."""

import pathlib
import re
import types

import numpy as np

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def python_blocks(section):
    text = README.read_text()
    start = text.index(f"## {section}\n")
    end = text.index("\n## ", start + 1)
    return re.findall(r"```python\n(.*?)```", text[start:end], re.S)


def test_readme_python_example_runs(fixture):
    (block,) = python_blocks("Python")
    i = 3
    ids = np.asarray(fixture.specs[i]["pool"])
    cos = fixture.memories[ids] @ fixture.queries[i]
    order = np.argsort(-cos, kind="stable")[:30]  # the store's top 30, best first
    hits = types.SimpleNamespace(
        embeddings=fixture.memories[ids[order]],
        scores=cos[order] * 10 + 2,  # a score on its own scale
        texts=[f"memory {m}" for m in ids[order]],
    )
    env = {"query_emb": fixture.queries[i], "hits": hits}
    exec(compile(block, str(README), "exec"), env)
    sel = env["sel"]
    assert sel.picks.shape == (5,) and sel.stop_reason == "budget"
    assert env["context"].count("\n- ") == 4
