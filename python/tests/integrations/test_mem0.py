"""Mem0: MemPursuitReranker as ``memory.reranker`` and from a Mem0 config,
with the real ``mem0ai`` package offline: Qdrant in process (``path":
":memory:"``, Mem0's default store), Mem0's FAISS store (faiss-cpu), a
lookup embedder that gives the mini fixture's precomputed embeddings and
counts its calls, memories added without an LLM (``infer=False``; the
OpenAI LLM and embedder Mem0 builds by default are never called)."""

import logging
import os
import sys
import tempfile
import types
from typing import List

import numpy as np
import pytest

from _data import FETCH, K, Data, framework

if sys.version_info < (3, 10):  # mem0ai needs Python >= 3.10
    pytest.skip("mem0ai needs Python >= 3.10", allow_module_level=True)

# Mem0 writes ~/.mem0 at import and sends telemetry unless told not to.
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0-test-"))
os.environ["MEM0_TELEMETRY"] = "False"

framework("mem0", "'./python[mem0]'")

from mem0 import Memory  # noqa: E402
from mem0.embeddings.base import EmbeddingBase  # noqa: E402

import mempursuit  # noqa: E402
from mempursuit.integrations import META_KEY, OptionError  # noqa: E402
from mempursuit.integrations.mem0 import MemPursuitReranker, MemPursuitRerankerConfig, register  # noqa: E402

USER = {"user_id": "u1"}


@pytest.fixture(scope="module")
def data():
    return Data()


class LookupEmbedder(EmbeddingBase):
    """Mem0's embedder interface without a model: the fixture's vector of
    each text, counting ``embed`` calls by memory_action and ``embed_batch``
    calls."""

    def __init__(self, data):
        super().__init__()
        self.data = data
        self.reset()

    def reset(self):
        self.embeds = {}
        self.batches = []

    def embed(self, text, memory_action=None):
        self.embeds[memory_action] = self.embeds.get(memory_action, 0) + 1
        return self.data.embed(text)

    def embed_batch(self, texts, memory_action="add"):
        self.batches.append((len(texts), memory_action))
        return [self.data.embed(t) for t in texts]


def config(tmp, vector_store=None, **extra):
    return {
        "vector_store": vector_store
        or {"provider": "qdrant", "config": {"path": ":memory:", "embedding_model_dims": 384}},
        # Mem0 builds OpenAI clients by default; they are never called.
        "llm": {"provider": "openai", "config": {"api_key": "unused"}},
        "embedder": {"provider": "openai", "config": {"api_key": "unused"}},
        "history_db_path": os.path.join(tmp, "history.db"),
        **extra,
    }


def filled(data, tmp, **kwargs):
    """A Memory holding the store's 80 memories (no LLM), its embedder
    swapped for the lookup one (counts reset)."""
    memory = Memory.from_config(config(str(tmp), **kwargs))
    embedder = LookupEmbedder(data)
    memory.embedding_model = embedder
    for i in data.store_ids:
        memory.add(data.texts[i], user_id="u1", infer=False)
    embedder.reset()
    return memory, embedder


@pytest.fixture(scope="module")
def qdrant_memory(data, tmp_path_factory):
    """One filled Memory for the tests that only search it (80 adds: 2 s)."""
    memory, embedder = filled(data, tmp_path_factory.mktemp("qdrant"))
    yield memory, embedder
    memory.vector_store.client.close()


@pytest.fixture
def qdrant(qdrant_memory):
    memory, embedder = qdrant_memory
    memory.reranker = None
    embedder.reset()
    return memory, embedder


def pool(memory, question, top_k=FETCH):
    return memory.search(question, filters=USER, top_k=top_k)["results"]


def expected(data, hits, k, relevance=True, **options):
    vectors = np.array([data.embed(h["memory"]) for h in hits], np.float32)
    scores = [h["score"] for h in hits] if relevance else None
    return mempursuit.select(np.asarray(data.query, np.float32), vectors, k, relevance=scores, **options)


def check(out, hits, sel):
    assert [m["id"] for m in out] == [hits[i]["id"] for i in sel.picks]
    assert [m[META_KEY]["rank"] for m in out] == list(range(len(sel.picks)))
    # Qdrant keeps cosine vectors normalized (float32): equal to 1e-5.
    assert [m["rerank_score"] for m in out] == pytest.approx(sel.steps["score"].tolist(), rel=1e-5)
    assert [m[META_KEY]["score"] for m in out] == [m["rerank_score"] for m in out]
    assert [m[META_KEY]["weight"] for m in out] == pytest.approx(sel.weights.tolist(), rel=1e-5)
    # Mem0's own fields are kept.
    assert [m["score"] for m in out] == [hits[i]["score"] for i in sel.picks]
    assert [m["memory"] for m in out] == [hits[i]["memory"] for i in sel.picks]


def test_search_rerank_reads_qdrant_vectors(data, qdrant):
    memory, embedder = qdrant
    hits = pool(memory, data.question)
    assert len(hits) == FETCH
    memory.reranker = MemPursuitReranker(memory, k=K)
    embedder.reset()
    out = memory.search(data.question, filters=USER, top_k=FETCH, rerank=True)["results"]
    sel = expected(data, hits, K)
    assert len(sel.picks) == K
    check(out, hits, sel)
    # The vectors came from Qdrant: no document was embedded again; the
    # query twice (Mem0's search, then the reranker: Mem0 hands it text).
    assert embedder.batches == [] and embedder.embeds == {"search": 2}
    # Not top-K of Mem0's ranking: the selection differs from Mem0's order.
    assert [m["id"] for m in out] != [h["id"] for h in hits[:K]]


def test_without_store_vectors_mem0s_embedder_embeds_them_once(data, qdrant):
    memory, embedder = qdrant
    hits = pool(memory, data.question)
    # A vector store that gives no vectors back: Mem0's embedder, one batch.
    blind = types.SimpleNamespace(vector_store=None, embedding_model=embedder)
    embedder.reset()
    out = MemPursuitReranker(k=K).attach(blind).rerank(data.question, hits, FETCH)
    assert embedder.batches == [(FETCH, "add")] and embedder.embeds == {"search": 1}
    check(out, hits, expected(data, hits, K))
    # fetch_vectors= reads another store: nothing embedded but the query.
    embedder.reset()
    reader = MemPursuitReranker(blind, k=K, fetch_vectors=lambda ids: [data.embed(h["memory"]) for h in hits])
    check(reader.rerank(data.question, hits, FETCH), hits, expected(data, hits, K))
    assert embedder.batches == []
    short = MemPursuitReranker(blind, fetch_vectors=lambda ids: [None])
    with pytest.raises(mempursuit.MemPursuitError, match="fetch_vectors returned 1 vectors for 20 ids") as e:
        short.rerank(data.question, hits, FETCH)
    assert (e.value.kind, e.value.argument) == ("input", "fetch_vectors")


def test_budget_is_min_of_k_and_top_k_and_options_pass_through(data, qdrant):
    memory, _ = qdrant
    hits = pool(memory, data.question)
    r = MemPursuitReranker(memory, k=K, method="mmr", mmr_lambda=np.float32(0.25))
    assert r.options == {"method": "mmr", "mmr_lambda": 0.25} and type(r.options["mmr_lambda"]) is float
    out = r.rerank(data.question, hits, 3)
    sel = expected(data, hits, 3, method="mmr", mmr_lambda=0.25)
    assert [m["id"] for m in out] == [hits[i]["id"] for i in sel.picks] and len(out) == 3
    # k=None: Mem0's top_k is the budget.
    assert len(MemPursuitReranker(memory, method="topk").rerank(data.question, hits, 4)) == 4
    # Without Mem0's scores: the cosine to the query.
    out = MemPursuitReranker(memory, k=K, use_scores=False).rerank(data.question, hits, FETCH)
    check(out, hits, expected(data, hits, K, relevance=False))
    assert MemPursuitReranker(memory).rerank(data.question, [], 5) == []


def test_token_budget(data, qdrant):
    memory, _ = qdrant
    hits = pool(memory, data.question)

    def words(m):
        return len(m["memory"].split())

    r = MemPursuitReranker(memory, k=FETCH, cost=words, cost_budget=60)
    out = r.rerank(data.question, hits, FETCH)
    costs = [words(h) for h in hits]
    sel = expected(data, hits, FETCH, costs=costs, cost_budget=60)
    assert [m["id"] for m in out] == [hits[i]["id"] for i in sel.picks]
    assert 0 < sum(words(m) for m in out) <= 60 and len(out) < FETCH
    with pytest.raises(OptionError, match="^MemPursuitReranker: ") as e:
        MemPursuitReranker(memory, cost=words)
    assert (e.value.kind, e.value.argument) == ("option", "cost")


def test_from_a_mem0_config(data, tmp_path):
    register()
    settings = {"k": 3, "method": "centroid", "gamma": 0.5}
    memory, embedder = filled(data, tmp_path, reranker={"provider": "mempursuit", "config": settings})
    try:
        r = memory.reranker
        assert isinstance(r, MemPursuitReranker)
        assert (r.k, r.use_scores, r.options) == (3, True, {"method": "centroid", "gamma": 0.5})
        hits = pool(memory, data.question)
        # Mem0 gives a configured reranker no way to the memory: an error
        # that says what to do (Mem0's search logs it and keeps its order).
        with pytest.raises(mempursuit.MemPursuitError, match=r"attach\(memory\)") as e:
            r.rerank(data.question, hits, FETCH)
        assert e.value.kind == "option"
        unranked = memory.search(data.question, filters=USER, top_k=FETCH, rerank=True)["results"]
        assert [m["id"] for m in unranked] == [h["id"] for h in hits]
        r.attach(memory)
        out = memory.search(data.question, filters=USER, top_k=FETCH, rerank=True)["results"]
        sel = expected(data, hits, 3, method="centroid", gamma=0.5)
        assert [m["id"] for m in out] == [hits[i]["id"] for i in sel.picks] and len(out) == 3
    finally:
        memory.vector_store.client.close()
    # The config class on its own, and top_k (Mem0's common field) as k.
    assert MemPursuitReranker(MemPursuitRerankerConfig(top_k=4)).k == 4
    assert MemPursuitReranker({"top_k": 2, "use_scores": False}).k == 2


def test_faiss_store_vectors_and_distances(data, tmp_path):
    framework("faiss", "faiss-cpu")
    store = {
        "provider": "faiss",
        "config": {
            "path": str(tmp_path / "faiss"),
            "embedding_model_dims": 384,
            "distance_strategy": "euclidean",
        },
    }
    memory, embedder = filled(data, tmp_path, vector_store=store)
    hits = pool(memory, data.question)
    # Mem0's FAISS store ranks by L2 distance, reported as 1 / (1 + distance):
    # higher is better, nearest first.
    cosines = [float(np.dot(data.embed(h["memory"]), data.query)) for h in hits]
    assert cosines == sorted(cosines, reverse=True)
    embedder.reset()
    out = MemPursuitReranker(memory, k=K).rerank(data.question, hits, FETCH)
    # The vectors are read from the FAISS index (nothing embedded but the
    # query), and the picks are those of cosine relevance over the same vectors.
    assert embedder.batches == [] and embedder.embeds == {"search": 1}
    check(out, hits, expected(data, hits, K))
    assert [m["id"] for m in out] == [hits[i]["id"] for i in expected(data, hits, K, relevance=False).picks]


def test_bad_settings_and_memories(data, qdrant):
    memory, _ = qdrant
    with pytest.raises(OptionError, match="^MemPursuitReranker: .*gama") as e:
        MemPursuitReranker(memory, gama=0.5)
    assert (e.value.kind, e.value.argument) == ("option", "gama")
    # The reranker's own settings are listed after an unknown name.
    assert "fetch_vectors" in str(e.value)
    with pytest.raises(OptionError, match="^MemPursuitReranker: k ") as e:
        MemPursuitReranker(memory, k=-1)
    assert e.value.kind == "option"
    with pytest.raises(OptionError, match="config must be"):
        MemPursuitReranker(3)
    with pytest.raises(mempursuit.MemPursuitError, match="MemPursuitReranker") as e:
        MemPursuitReranker(memory, method="centroid", gamma=-1.0)
    assert e.value.kind == "option"
    hits = pool(memory, data.question)
    bad = [dict(h) for h in hits]
    bad[2]["score"] = float("nan")
    with pytest.raises(mempursuit.MemPursuitError, match="^MemPursuitReranker: ") as e:
        MemPursuitReranker(memory).rerank(data.question, bad, FETCH)
    assert (e.value.kind, e.value.index, e.value.id, e.value.argument) == ("input", 2, str(bad[2]["id"]), "score")
    # Nothing the caller gave is modified.
    before = [dict(h) for h in hits]
    MemPursuitReranker(memory, k=K).rerank(data.question, hits, FETCH)
    assert hits == before and not any(key in hits[0] for key in (META_KEY, "rerank_score"))


def test_repeated_memory_once_and_string_vectors(data, qdrant, caplog):
    """A memory given twice (two searches merged) comes back once and is
    reported; vectors given as pgvector's text "[0.1,...]" (a store read
    through fetch_vectors) are parsed, other text refused naming the memory."""
    memory, embedder = qdrant
    hits = pool(memory, data.question)
    r = MemPursuitReranker(memory, k=K)
    once = r.rerank(data.question, hits, FETCH)
    with caplog.at_level(logging.WARNING, "mempursuit.integrations"):
        out = r.rerank(data.question, [*hits, dict(hits[0]), dict(hits[3])], FETCH + 2)
    assert [m["id"] for m in out] == [m["id"] for m in once]
    assert [m[META_KEY] for m in out] == [m[META_KEY] for m in once]
    reports = [rec.mempursuit_duplicates for rec in caplog.records if hasattr(rec, "mempursuit_duplicates")]
    assert reports == [[[FETCH, 0], [FETCH + 1, 3]]]

    def text(v):
        return "[" + ",".join(repr(float(x)) for x in v) + "]"

    blind = types.SimpleNamespace(vector_store=None, embedding_model=embedder)
    as_text = {h["id"]: text(data.embed(h["memory"])) for h in hits}
    embedder.reset()
    reader = MemPursuitReranker(blind, k=K, fetch_vectors=lambda ids: [as_text[i] for i in ids])
    check(reader.rerank(data.question, hits, FETCH), hits, expected(data, hits, K))
    assert embedder.batches == [], "string vectors are vectors, not missing"
    as_text[hits[4]["id"]] = "not a vector"
    with pytest.raises(mempursuit.MemPursuitError, match="^MemPursuitReranker: .*not a vector") as e:
        reader.rerank(data.question, hits, FETCH)
    assert (e.value.kind, e.value.index, e.value.id, e.value.argument) == ("input", 4, hits[4]["id"], "embedding")


def test_textbook_case_picks_fact_b(tmp_path):
    """Two paraphrases of fact A rank first in Mem0's search; the reranker
    keeps one of them and fact B."""
    toy = {
        "Ed Wood was American.": [1.0, 0.0, 0.0],
        "Ed Wood, a US film director.": [0.98, 0.2, 0.0],
        "Scott Derrickson is American.": [0.0, 0.6, 0.8],
        "Were Ed Wood and Derrickson American?": [0.7, 0.1, 0.7],
    }
    data = types.SimpleNamespace(embed=lambda t: toy[t])
    cfg = config(str(tmp_path))
    cfg["vector_store"]["config"]["embedding_model_dims"] = 3
    memory = Memory.from_config(cfg)
    try:
        memory.embedding_model = LookupEmbedder(data)
        for text in list(toy)[:3]:
            memory.add(text, user_id="u1", infer=False)
        q = list(toy)[3]
        plain = memory.search(q, filters=USER, top_k=2)["results"]
        assert sorted(m["memory"] for m in plain) == sorted(list(toy)[:2])  # fact A twice
        memory.reranker = MemPursuitReranker(memory, k=2)
        out = memory.search(q, filters=USER, top_k=30, rerank=True)["results"]
        texts: List[str] = [m["memory"] for m in out]
        assert len(texts) == 2 and "Scott Derrickson is American." in texts
        assert sum("Ed Wood" in t for t in texts) == 1
    finally:
        memory.vector_store.client.close()


def test_chroma_store_vectors(data, tmp_path):
    """Mem0's Chroma store (in process, on disk under tmp_path): vectors read
    by id. Required in CI (.ci/python.sh installs Chroma unless
    MEMPURSUIT_CI_CHROMA=0; see test_stores.py)."""
    if os.environ.get("MEMPURSUIT_REQUIRE_CHROMA") == "1":
        import chromadb  # noqa: F401
    else:
        pytest.importorskip(
            "chromadb",
            reason="chromadb is not installed (bash .ci/python.sh installs it from "
            "python/tests/integrations/requirements-chroma.txt)",
        )
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    store = {
        "provider": "chroma",
        "config": {"collection_name": "memories", "path": str(tmp_path / "chroma")},
    }
    memory, embedder = filled(data, tmp_path, vector_store=store)
    hits = pool(memory, data.question)
    embedder.reset()
    out = MemPursuitReranker(memory, k=K).rerank(data.question, hits, FETCH)
    assert embedder.batches == [] and embedder.embeds == {"search": 1}
    check(out, hits, expected(data, hits, K))


def test_async_memory_search_reranks(data, tmp_path):
    """Mem0's AsyncMemory runs a reranker in a thread
    (``asyncio.to_thread(reranker.rerank, ...)``): the same picks."""
    import asyncio

    from mem0 import AsyncMemory

    async def main():
        memory = AsyncMemory.from_config(config(str(tmp_path)))
        embedder = LookupEmbedder(data)
        memory.embedding_model = embedder
        for i in data.store_ids[:40]:
            await memory.add(data.texts[i], user_id="u1", infer=False)
        hits = (await memory.search(data.question, filters=USER, top_k=FETCH))["results"]
        memory.reranker = MemPursuitReranker(memory, k=K)
        embedder.reset()
        out = (await memory.search(data.question, filters=USER, top_k=FETCH, rerank=True))["results"]
        memory.vector_store.client.close()
        return hits, out, embedder

    hits, out, embedder = asyncio.run(main())
    check(out, hits, expected(data, hits, K))
    assert embedder.batches == [] and embedder.embeds == {"search": 2}
