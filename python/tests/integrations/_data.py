"""What the framework integration tests share: the mini fixture's texts and
real embeddings (all-MiniLM-L6-v2, d = 384, computed when the fixture was
made: no model runs here), a store's worth of them, and the skip rule.

The store holds the pools of fixture questions 3 and 4 (80 sentence units,
disjoint); the tests ask question 3 and retrieve the store's top ``FETCH``,
so the retriever's order is the real cosine order of real embeddings.
"""

import importlib
import json
import os
import pathlib

import numpy as np
import pytest

FIXTURE = pathlib.Path(__file__).resolve().parents[3] / "cli" / "data" / "hotpotqa-mini"
QUESTION = 3
FETCH = 20
K = 5


def framework(module, install):
    """Imports the framework's ``module``, or skips (the test, or the test
    module when called at import) when it is not installed; ``install`` is
    what to pip install, shown in the skip reason (``pytest -rs``). Under
    MEMPURSUIT_REQUIRE_INTEGRATIONS=1 (.ci/python.sh) a missing framework
    is an ImportError instead, so that CI cannot pass by skipping."""
    if os.environ.get("MEMPURSUIT_REQUIRE_INTEGRATIONS") == "1":
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"{module} is not installed (pip install {install})")


class Data:
    """The fixture: ``texts[i]`` and ``vectors[i]`` (float32, unit rows) of
    memory i; the question's text and vector; ``store_ids``, the memories
    the tests' stores hold."""

    def __init__(self):
        with open(FIXTURE / "memories.jsonl") as f:
            self.texts = [json.loads(line)["text"] for line in f if line.strip()]
        with open(FIXTURE / "queries.jsonl") as f:
            specs = [json.loads(line) for line in f if line.strip()]
        self.vectors = np.load(FIXTURE / "memories.f32.npy")
        queries = np.load(FIXTURE / "queries.f32.npy")
        self.question = specs[QUESTION]["text"]
        self.query = queries[QUESTION]
        self.store_ids = specs[QUESTION]["pool"] + specs[QUESTION + 1]["pool"]
        self.by_text = {t: v for t, v in zip(self.texts, self.vectors)}
        self.by_text[self.question] = self.query

    def embed(self, text):
        """The fixture's embedding of ``text`` (a memory or the question),
        as a list of floats; any other text is a KeyError."""
        return [float(x) for x in self.by_text[text]]


class Counter:
    """Counts embedding calls and texts by kind ("query", "documents")."""

    def __init__(self):
        self.calls = {"query": 0, "documents": 0}
        self.texts = {"query": 0, "documents": 0}

    def add(self, kind, n):
        self.calls[kind] += 1
        self.texts[kind] += n
