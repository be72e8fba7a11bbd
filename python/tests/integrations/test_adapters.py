"""The integrations are adapters over the Rust document layer (issue 27,
2026-12-05): their non-test code holds no literal of policy, and every
integration returns a document repeated under the same id once and reports
the repeat (logger ``mempursuit.integrations``, the record's
``mempursuit_duplicates``), as the layer does."""

import ast
import logging
import pathlib

import pytest

import mempursuit
from _data import framework

INTEGRATIONS = pathlib.Path(mempursuit.__file__).parent / "integrations"


def _strings_and_numbers(path):
    """The str and float constants of a module, docstrings left out."""
    tree = ast.parse(path.read_text())
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    for node in ast.walk(tree):
        # (An f-string's literal parts are Constants too.)
        if isinstance(node, ast.Constant) and id(node) not in docstrings:
            if isinstance(node.value, (str, float)):
                yield node.value


def test_no_policy_literals_in_the_integrations():
    modules = sorted(p for p in INTEGRATIONS.glob("*.py"))
    assert {p.name for p in modules} >= {"_common.py", "haystack.py", "llama_index.py", "langchain.py"}
    names = set(mempursuit.METHODS)
    for info in mempursuit.OPTIONS.values():
        names.update(v for v in (info["values"] or ()) if isinstance(v, str))
    names.discard("cosine")  # also an English word; never a literal below either
    found = []
    for path in modules:
        lines = path.read_text().splitlines()
        # Parsing a message: no regular expressions at all, no "candidate N".
        if any(line.strip() in ("import re", "from re import") or "re.match(" in line for line in lines):
            found.append((path.name, "regular expression"))
        for value in _strings_and_numbers(path):
            if isinstance(value, float):
                found.append((path.name, value))  # a default or threshold of its own
            elif value in names or value.strip("'\"") in names:
                found.append((path.name, value))  # a method name or an option's value
            elif "candidate " in value:
                found.append((path.name, value))  # the core's error text
    assert found == []
    # The names looked for are the library's (see also the test below).
    assert {"recommended", "mmr", "exclude", "int8"} <= names


def _repeats(caplog):
    return [r.mempursuit_duplicates for r in caplog.records if hasattr(r, "mempursuit_duplicates")]


def test_haystack_repeat_once(caplog):
    framework("haystack", "'./python[haystack]'")
    from haystack import Document

    from mempursuit.integrations.haystack import MemPursuitRanker

    a = Document(id="a", content="x", embedding=[1.0, 0.0, 0.0], score=0.9)
    b = Document(id="b", content="y", embedding=[0.0, 1.0, 0.0], score=0.5)
    with caplog.at_level(logging.WARNING, "mempursuit.integrations"):
        out = MemPursuitRanker(top_k=3).run([a, b, a], [1.0, 1.0, 0.0])["documents"]
    assert sorted(d.id for d in out) == ["a", "b"]
    assert _repeats(caplog) == [[[2, 0]]]


def test_llama_index_repeat_once(caplog):
    framework("llama_index.core", "'./python[llama-index]'")
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

    from mempursuit.integrations.llama_index import MemPursuitPostprocessor

    a = NodeWithScore(node=TextNode(id_="a", text="x", embedding=[1.0, 0.0, 0.0]), score=0.9)
    b = NodeWithScore(node=TextNode(id_="b", text="y", embedding=[0.0, 1.0, 0.0]), score=0.5)
    with caplog.at_level(logging.WARNING, "mempursuit.integrations"):
        out = MemPursuitPostprocessor(top_n=3).postprocess_nodes([a, a, b], QueryBundle("q", embedding=[1.0, 1.0, 0.0]))
    assert sorted(n.node.node_id for n in out) == ["a", "b"]
    assert _repeats(caplog) == [[[1, 0]]]


def test_langchain_repeat_once_and_no_id_by_position(caplog):
    framework("langchain_core", "'./python[langchain]'")
    from langchain_core.documents import Document
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.vectorstores import InMemoryVectorStore

    from mempursuit.integrations.langchain import MemPursuitCompressor, mempursuit_search_by_vector

    emb = DeterministicFakeEmbedding(size=3)
    a = Document(id="a", page_content="x", metadata={"embedding": [1.0, 0.0, 0.0]})
    b = Document(id="b", page_content="y", metadata={"embedding": [0.0, 1.0, 0.0]})
    with caplog.at_level(logging.WARNING, "mempursuit.integrations"):
        out = MemPursuitCompressor(embeddings=emb, k=3).compress_documents([a, b, a], "q")
    assert sorted(d.id for d in out) == ["a", "b"] and _repeats(caplog) == [[[2, 0]]]
    caplog.clear()
    # A store that returns a document twice (merged retrievers).
    store = InMemoryVectorStore(emb)
    store.add_documents([Document(id="a", page_content="x"), Document(id="b", page_content="y")])
    hits = store.similarity_search_with_score_by_vector(emb.embed_query("x"), k=2)
    store.similarity_search_with_score_by_vector = lambda *args, **kwargs: hits + hits[:1]
    with caplog.at_level(logging.WARNING, "mempursuit.integrations"):
        out = mempursuit_search_by_vector(store, emb.embed_query("x"), k=3, fetch_k=3)
    assert sorted(d.id for d in out) == ["a", "b"] and _repeats(caplog) == [[[2, 0]]]
    # Documents without ids: matched by position, never by text (the same
    # text twice with two vectors: both come back, each with its own).
    same = [Document(page_content="t", metadata={"embedding": v}) for v in ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0])]
    out = MemPursuitCompressor(embeddings=emb, k=2, method="topk").compress_documents(same, "q")
    assert sorted(tuple(d.metadata["embedding"]) for d in out) == [(0.0, 1.0, 0.0), (1.0, 0.0, 0.0)]


@pytest.mark.parametrize("value", ["recommended", 0.5, "candidate 3: element"])
def test_the_literal_check_finds_what_it_looks_for(tmp_path, value):
    bad = tmp_path / "bad.py"
    bad.write_text(f"X = {value!r}\n")
    names = set(mempursuit.METHODS)
    got = list(_strings_and_numbers(bad))
    assert got == [value]
    assert isinstance(value, float) or value in names or "candidate " in value
