"""Stores never guessed (issue 27, item 2): ``mempursuit_search_by_vector``
on LangChain stores whose raw score is a distance -- FAISS (faiss-cpu,
langchain-community; L2) and Chroma (langchain-chroma, in process; L2) --
and one whose score is a similarity (InMemoryVectorStore, cosine) picks what
cosine relevance over the same vectors picks: the store's own relevance
function orients the score, the vectors are read from the store (no
document is embedded again). Offline: the mini fixture's unit-length
MiniLM embeddings (see _data.py), so every store's nearest-first pool is
the same.

Chroma is large (chromadb with onnxruntime, several hundred MB):
.ci/python.sh installs it and requires this test unless
MEMPURSUIT_CI_CHROMA=0; where it is not installed the Chroma case is
skipped with that reason (pytest -rs)."""

import os
import uuid
from typing import List

import numpy as np
import pytest

from _data import FETCH, K, Counter, Data, framework

framework("langchain_core", "'./python[langchain]'")

from langchain_core.embeddings import Embeddings  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore  # noqa: E402

import mempursuit  # noqa: E402
from mempursuit.integrations.langchain import MemPursuitCompressor, mempursuit_search_by_vector  # noqa: E402


@pytest.fixture(scope="module")
def data():
    return Data()


class LookupEmbeddings(Embeddings):
    """The fixture's vector of each text, counting calls."""

    def __init__(self, data):
        self.data = data
        self.counter = Counter()

    def embed_documents(self, texts: List[str]) -> List[List[float]]:
        self.counter.add("documents", len(texts))
        return [self.data.embed(t) for t in texts]

    def embed_query(self, text: str) -> List[float]:
        self.counter.add("query", 1)
        return self.data.embed(text)


def in_memory(data, emb, texts, ids):
    return InMemoryVectorStore.from_texts(texts, emb, ids=ids)


def faiss_l2(data, emb, texts, ids):
    framework("faiss", "faiss-cpu")
    framework("langchain_community", "langchain-community")
    from langchain_community.vectorstores import FAISS

    return FAISS.from_texts(texts, emb, ids=ids)  # DistanceStrategy.EUCLIDEAN_DISTANCE


def faiss_inner_product(data, emb, texts, ids):
    """FAISS by inner product: its raw score is a similarity, and LangChain's
    relevance function for it maps a similarity s > 0 to 1 - s (it reverses
    the order; mempursuit then takes the vectors' cosine)."""
    framework("faiss", "faiss-cpu")
    framework("langchain_community", "langchain-community")
    from langchain_community.vectorstores import FAISS
    from langchain_community.vectorstores.utils import DistanceStrategy

    return FAISS.from_texts(texts, emb, ids=ids, distance_strategy=DistanceStrategy.MAX_INNER_PRODUCT)


def chroma_l2(data, emb, texts, ids):
    if os.environ.get("MEMPURSUIT_REQUIRE_CHROMA") == "1":
        import langchain_chroma  # noqa: F401
    else:
        pytest.importorskip(
            "langchain_chroma",
            reason="langchain-chroma is not installed (bash .ci/python.sh installs it with "
            "chromadb from python/tests/integrations/requirements-chroma.txt)",
        )
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    from langchain_chroma import Chroma

    # In process, in memory (no persist_directory); L2, Chroma's default.
    return Chroma.from_texts(texts, emb, ids=ids, collection_name=f"t{uuid.uuid4().hex}")


STORES = {
    "in-memory (cosine)": in_memory,
    "FAISS (L2)": faiss_l2,
    "FAISS (inner product)": faiss_inner_product,
    "Chroma (L2)": chroma_l2,
}


@pytest.mark.parametrize("name", list(STORES))
def test_same_picks_as_cosine_relevance(data, name):
    emb = LookupEmbeddings(data)
    texts = [data.texts[i] for i in data.store_ids]
    store = STORES[name](data, emb, texts, [f"m{i}" for i in data.store_ids])
    q = [float(x) for x in data.query]
    # langchain-chroma has no similarity_search_with_score_by_vector (the
    # search then fetches without scores and the relevance is the cosine of
    # the vectors); its misnamed ..._with_relevance_scores gives distances.
    search = getattr(store, "similarity_search_with_score_by_vector", None) or getattr(
        store, "similarity_search_by_vector_with_relevance_scores"
    )
    raw = search(q, k=FETCH)
    pool = [d for d, _ in raw]
    scores = [s for _, s in raw]
    # Every store's pool is the same nearest-first FETCH of unit vectors...
    cos = np.array([data.embed(t) for t in texts], np.float32) @ np.asarray(data.query, np.float32)
    nearest = [texts[i] for i in np.argsort(-cos, kind="stable")[:FETCH]]
    assert [d.page_content for d in pool] == nearest
    # ... and the raw score is the store's own: a distance (rising) or a similarity.
    rising = all(a <= b for a, b in zip(scores, scores[1:]))
    assert rising == ("L2" in name), scores[:3]

    vectors = np.array([data.embed(d.page_content) for d in pool], np.float32)
    cosine = mempursuit.select(np.asarray(q, np.float32), vectors, K)  # relevance: the cosine
    emb.counter = Counter()
    for method in (None, "topk", "mmr"):
        options = {} if method is None else {"method": method}
        out = mempursuit_search_by_vector(store, q, K, FETCH, **options)
        want = mempursuit.select(np.asarray(q, np.float32), vectors, K, **options)
        assert [d.page_content for d in out] == [pool[i].page_content for i in want.picks], method
        # The scores by the store's relevance function rank as the cosine does.
        plain = mempursuit_search_by_vector(store, q, K, FETCH, use_scores=False, **options)
        assert [d.page_content for d in plain] == [d.page_content for d in out], method
    # Top-K keeps the K nearest, never the K farthest.
    assert [
        d.page_content for d in mempursuit_search_by_vector(store, q, K, FETCH, method="topk")
    ] == nearest[:K]
    assert len(cosine.picks) == K
    # The vectors were read from the store: nothing embedded again.
    assert emb.counter.calls == {"query": 0, "documents": 0}

    # The compressor reads the same vectors by id.
    comp = MemPursuitCompressor(vector_store=store, embeddings=emb, k=K)
    out = comp.compress_documents(pool, data.question)
    assert [d.page_content for d in out] == [pool[i].page_content for i in cosine.picks]
    assert emb.counter.calls == {"query": 1, "documents": 0}
