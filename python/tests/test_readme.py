"""Every ```python snippet of python/README.md and of the repository's
README.md runs as pasted: the snippets of one file run in order in one fresh
namespace (as a reader pasting them into one session would), with nothing
defined for them beforehand. The package README's results are checked. (Its
"Framework integrations" snippets need the frameworks: they are run by
tests/integrations/test_readme_integrations.py, which skips a framework that
is not installed.)"""

import contextlib
import io
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE_README = ROOT / "python" / "README.md"
README = ROOT / "README.md"


def python_blocks(path, stop=None):
    """The ```python blocks of `path` (before the heading `stop`, if given)."""
    text = path.read_text()
    if stop is not None and stop in text:
        text = text[: text.index(stop)]
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


FRAMEWORKS = "\n## Framework integrations\n"


def run_blocks(path, stop=None):
    """Runs the file's snippets in order; returns (namespace, stdout)."""
    env = {"__name__": "__readme__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for i, block in enumerate(python_blocks(path, stop)):
            exec(compile(block, f"{path.name}, python snippet {i + 1}", "exec"), env)
    return env, out.getvalue()


def test_package_readme_snippets_run():
    assert len(python_blocks(PACKAGE_README, FRAMEWORKS)) >= 5
    env, out = run_blocks(PACKAGE_README, FRAMEWORKS)
    # The first example: the default call picks fact A once and the missing
    # fact B; top-K two wordings of A.
    assert env["sel"].picks.tolist() == [1, 3]
    assert env["context"] == "- A, in another\n- B"
    assert env["top"].picks.tolist() == [1, 2]
    assert env["paper"].picks.tolist() == [1, 3]
    assert [s.picks.tolist() for s in env["ragged"]] == [s.picks.tolist() for s in env["batch"]]
    assert sorted(env["picked"].tolist()) == [1, 3]
    assert env["new_ids"] == range(4, 5)
    assert (
        "input | candidate 2: element 1 is not finite (NaN); or set option 'invalid' to 'exclude' "
        "to leave such rows out (listed in excluded)\n[2]\n"
    ) in out
    assert "option | gamma 2 must be in (0, 1]" in out
    # Every option is listed.
    import mempursuit

    for key in mempursuit.OPTIONS:
        assert re.search(rf"^{key} ", out, re.M), key


@pytest.mark.parametrize("index", range(len(python_blocks(README))))
def test_readme_python_snippets_run(index):
    """README.md's Python snippets, in order up to this one, as pasted."""
    blocks = python_blocks(README)
    env = {"__name__": "__readme__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for i, block in enumerate(blocks[: index + 1]):
            exec(compile(block, f"README.md, python snippet {i + 1}", "exec"), env)


def test_readme_has_python_snippets():
    assert python_blocks(README), "README.md has no ```python snippet"


def test_readme_recommended_call_keeps_both_facts():
    """README.md's first Python example: rows 0 and 1 state one fact, row 2
    another; the default call keeps both facts."""
    env = {"__name__": "__readme__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(python_blocks(README)[0], "README.md, python snippet 1", "exec"), env)
    sel = env["sel"]
    assert sel.picks.tolist() == [0, 2]
    assert len(sel.weights) == 2 and abs(sum(sel.weights) - 1) < 1e-9
