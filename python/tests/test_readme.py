"""The Python example of the repository's README.md (section "The
recommended call") runs as written, in a fresh namespace: it builds its own
small pool, so nothing is injected."""

import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_readme_python_example_runs():
    (block,) = python_blocks()
    env = {}
    exec(compile(block, str(README), "exec"), env)
    sel = env["sel"]
    # Rows 0 and 1 state one fact, row 2 another: both facts are kept.
    assert sel.picks.tolist() == [0, 2]
    assert len(sel.weights) == 2 and abs(sum(sel.weights) - 1) < 1e-9
