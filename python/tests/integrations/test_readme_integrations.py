"""The framework snippets of python/README.md ("Framework integrations")
run as written and select what mempursuit.select selects (each skips when
its framework is not installed)."""

import contextlib
import io
import pathlib
import re

import numpy as np

from _data import framework

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def snippet(section):
    """The one python block of README's '### {section}'."""
    text = README.read_text()
    start = text.index(f"\n### {section}\n")
    end = min(i for i in (text.find("\n## ", start + 1), text.find("\n### ", start + 1), len(text)) if i >= 0)
    (block,) = re.findall(r"```python\n(.*?)```", text[start:end], re.S)
    assert len(block.strip().splitlines()) <= 13, f"{section}: the snippet must stay within 13 lines"
    return block


def run(section):
    env = {}
    exec(compile(snippet(section), f"{README}:{section}", "exec"), env)
    return env


def run_printing(section):
    """The snippet's globals and what it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        env = run(section)
    return env, out.getvalue()


def default_picks(query, vectors, scores, k):
    import mempursuit

    sel = mempursuit.select(
        np.asarray(query, np.float32), np.asarray(vectors, np.float32), k, relevance=scores
    )
    return sel.picks.tolist(), sel.weights.tolist()


def test_haystack_snippet():
    framework("haystack", "'./python[haystack]'")
    from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever

    env, out = run_printing("Haystack")
    docs = env["docs"]
    hits = InMemoryEmbeddingRetriever(env["store"], top_k=30, return_embedding=True).run(
        query_embedding=[0.7, 0.1, 0.7]
    )["documents"]
    picks, weights = default_picks([0.7, 0.1, 0.7], [d.embedding for d in hits], [d.score for d in hits], 2)
    assert [d.id for d in docs] == [hits[i].id for i in picks]
    assert [d.meta["mempursuit"]["weight"] for d in docs] == (weights or [None, None])
    # One paraphrase of Ed Wood's nationality, and Derrickson's.
    assert (
        sum("Ed Wood" in d.content for d in docs) == 1 and "Derrickson" in docs[1].content + docs[0].content
    )
    assert out == f"{[d.content for d in docs]}\n"


def test_llama_index_snippet():
    framework("llama_index.core", "'./python[llama-index]'")
    env, out = run_printing("LlamaIndex")
    picked, index, query = env["picked"], env["index"], env["query"]
    hits = index.as_retriever(similarity_top_k=30).retrieve(query)
    vectors = [index.vector_store.get(n.node.node_id) for n in hits]
    picks, weights = default_picks(query.embedding, vectors, [n.score for n in hits], 2)
    assert [n.node.node_id for n in picked] == [hits[i].node.node_id for i in picks]
    assert [n.node.metadata["mempursuit"]["weight"] for n in picked] == (weights or [None, None])
    texts = [n.node.get_content() for n in picked]
    assert sum("Ed Wood" in t for t in texts) == 1 and any("Derrickson" in t for t in texts)
    assert out == f"{texts}\n"


def test_langchain_snippet():
    framework("langchain_core", "'./python[langchain]'")
    framework("langchain_classic", "langchain-classic")
    env, out = run_printing("LangChain")
    store, question = env["store"], "Were Ed Wood and Derrickson American?"
    docs = env["retriever"].invoke(question)
    hits = store.as_retriever(search_kwargs={"k": 20}).invoke(question)
    picks, weights = default_picks(env["toy"][question], [store.store[d.id]["vector"] for d in hits], None, 2)
    assert [d.id for d in docs] == [hits[i].id for i in picks]
    assert [d.metadata["mempursuit"]["weight"] for d in docs] == (weights or [None, None])
    # Hand-made vectors that show the composition (issue 30, item 4): one
    # paraphrase of Ed Wood's nationality and Derrickson's, printed.
    assert out == "['Ed Wood, a US film director.', 'Scott Derrickson is American.']\n"


def test_token_budget_snippet():
    framework("haystack", "'./python[haystack]'")
    import mempursuit

    env, out = run_printing("Token budgets")
    docs, picked, words = env["docs"], env["picked"], env["words"]
    costs = [words(d) for d in docs]
    sel = mempursuit.select(
        np.asarray([0.7, 0.1, 0.7], np.float32),
        np.asarray([d.embedding for d in docs], np.float32),
        10,
        costs=costs,
        cost_budget=10,
    )
    assert [d.id for d in picked] == [docs[i].id for i in sel.picks.tolist()]
    assert sum(words(d) for d in picked) <= 10
    # The short paraphrase of Ed Wood's nationality and Derrickson's; without
    # the budget the long paraphrase comes first.
    assert [d.content for d in picked] == [docs[0].content, docs[2].content]
    assert out == "['Ed Wood was American.', 'Scott Derrickson is American.']\n"
    plain = env["MemPursuitRanker"](top_k=2).run(documents=docs, query_embedding=[0.7, 0.1, 0.7])
    assert [d.content for d in plain["documents"]] == [docs[1].content, docs[2].content]


def test_mem0_snippet(monkeypatch, tmp_path):
    import sys

    if sys.version_info < (3, 10):
        import pytest

        pytest.skip("mem0ai needs Python >= 3.10")
    # Mem0 writes ~/.mem0 at import and sends telemetry unless told not to.
    monkeypatch.setenv("MEM0_DIR", str(tmp_path))
    monkeypatch.setenv("MEM0_TELEMETRY", "False")
    framework("mem0", "'./python[mem0]'")
    assert len(snippet("Mem0").strip().splitlines()) <= 12
    env, out = run_printing("Mem0")
    memory, toy = env["memory"], env["toy"]
    try:
        question = list(toy)[3]
        hits = memory.search(question, filters={"user_id": "ed"}, top_k=30)["results"]
        # Mem0's own top 2: both paraphrases of Ed Wood's nationality (fact A).
        assert all("Ed Wood" in h["memory"] for h in hits[:2])
        picks, weights = default_picks(toy[question], [toy[h["memory"]] for h in hits], [h["score"] for h in hits], 2)
        picked = [hits[i]["memory"] for i in picks]
        # The textbook case: one paraphrase of fact A, and fact B.
        assert sum("Ed Wood" in t for t in picked) == 1 and "Scott Derrickson is American." in picked
        assert out == f"{picked}\n"
    finally:
        memory.vector_store.client.close()
