"""python/examples/rerank.py reproduces the MemPursuit rows of
`mempursuit demo` (the Rust CLI) on the mini fixture, and its worked
example is the demo's question."""

import pathlib
import re
import subprocess
import sys

import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "rerank.py"


def rows(text, name):
    """The table rows of method `name`: [K, nine percentages] as strings."""
    out = []
    for line in text.splitlines():
        tokens = line.split()
        if tokens and tokens[0] == name and len(tokens) == 11 and tokens[1].isdigit():
            out.append(tokens[1:])
    return out


def test_example_reproduces_demo_row(demo_output):
    run = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, check=True)
    demo = rows(demo_output, "MemPursuit")
    assert [r[0] for r in demo] == ["3", "5", "10"], demo_output
    assert rows(run.stdout, "MemPursuit") == demo
    # The worked example: the demo's first question where MemPursuit covers
    # both gold paragraphs at K = 5 and top-K does not.
    question = re.search(r"^question \([a-z]+, id \w+\): (.*)$", demo_output, re.M).group(1)
    assert f"Question: {question}" in run.stdout.splitlines()
    assert "Context:\n- " in run.stdout


@pytest.mark.parametrize(
    "method,name", [("centroid", "centroid(0.5)"), ("topk", "top-K"), ("mmr", "MMR(0.5)")]
)
def test_example_reproduces_demo_rows_of_other_methods(demo_output, method, name):
    run = subprocess.run(
        [sys.executable, str(EXAMPLE), "--method", method, "--k", "3"],
        capture_output=True,
        text=True,
        check=True,
    )
    demo = rows(demo_output, name)
    assert len(demo) == 3
    assert rows(run.stdout, name) == demo
