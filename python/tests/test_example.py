"""python/examples/rerank.py reproduces the rows of `mempursuit demo` (the
Rust CLI) on the mini fixture: its default (the recommended setting) with
the demo's worked example question, paper mode (`pursuit`), top-K and MMR
(rows named by the specification's text form)."""

import pathlib
import re
import subprocess
import sys

import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "rerank.py"


def rows(text, name):
    """The table rows of method `name`: [K, nine percentages] as strings
    (the demo's confidence-interval column after them is left out)."""
    out = []
    for line in text.splitlines():
        tokens = line.split()
        if tokens and tokens[0] == name and len(tokens) >= 11 and tokens[1].isdigit():
            out.append(tokens[1:11])
    return out


def example(*args):
    run = subprocess.run([sys.executable, str(EXAMPLE), *args], capture_output=True, text=True, check=True)
    return run.stdout


def test_example_default_reproduces_demo_rows_and_worked_example(demo_output):
    # The default is the recommended setting. The demo's worked example is
    # its first question where the recommended setting covers both gold
    # paragraphs at K = 5 and top-K does not.
    out = example()
    demo = rows(demo_output, "recommended")
    assert [r[0] for r in demo] == ["3", "5", "10"], demo_output
    assert rows(out, "recommended") == demo
    assert rows(example("--method", "recommended"), "recommended") == demo
    question = re.search(r"^question: (.*)$", demo_output, re.M).group(1)
    assert f"Question: {question}" in out.splitlines()
    assert "Context:\n- " in out


def test_example_paper_mode_reproduces_demo_row(demo_output):
    demo = rows(demo_output, "pursuit")
    assert len(demo) == 3
    assert rows(example("--method", "pursuit"), "pursuit") == demo


@pytest.mark.parametrize("method,name", [("topk", "topk"), ("mmr", "mmr")])
def test_example_reproduces_demo_rows_of_other_methods(demo_output, method, name):
    demo = rows(demo_output, name)
    assert len(demo) == 3
    assert rows(example("--method", method, "--k", "3"), name) == demo


def test_example_centroid_runs():
    assert len(rows(example("--method", "centroid", "--gamma", "0.3"), "centroid,gamma=0.3")) == 3
    assert len(rows(example("--method", "centroid"), "centroid")) == 3
