"""LangChain: mempursuit_search_by_vector and MemPursuitCompressor on a real
InMemoryVectorStore, the compressor in a ContextualCompressionRetriever
(langchain-core, and langchain-classic for the retriever, from PyPI;
offline: the fixture's precomputed embeddings through a lookup Embeddings,
DeterministicFakeEmbedding)."""

import importlib
from typing import List

import numpy as np
import pytest

from _data import FETCH, K, Counter, Data, framework

framework("langchain_core", "'./python[langchain]'")

from langchain_core.documents import Document  # noqa: E402
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore  # noqa: E402

import mempursuit  # noqa: E402
from mempursuit.integrations import DocumentError, OptionError  # noqa: E402
from mempursuit.integrations.langchain import MemPursuitCompressor, mempursuit_search_by_vector  # noqa: E402


@pytest.fixture(scope="module")
def data():
    """The mini fixture's texts and embeddings (see _data.py)."""
    return Data()


def compression_retriever():
    """ContextualCompressionRetriever: in langchain-classic (LangChain >= 1),
    in langchain before 1.0."""
    for module in ("langchain_classic.retrievers", "langchain.retrievers"):
        try:
            return importlib.import_module(module).ContextualCompressionRetriever
        except ImportError:
            pass
    return None


class LookupEmbeddings(Embeddings):
    """Embeddings without a model: the fixture's vector of each text,
    counting calls."""

    def __init__(self, data):
        self.data = data
        self.counter = Counter()

    def embed_documents(self, texts: List[str]) -> List[List[float]]:
        self.counter.add("documents", len(texts))
        return [self.data.embed(t) for t in texts]

    def embed_query(self, text: str) -> List[float]:
        self.counter.add("query", 1)
        return self.data.embed(text)


@pytest.fixture(scope="module")
def store(data):
    emb = LookupEmbeddings(data)
    s = InMemoryVectorStore(emb)
    s.add_texts([data.texts[i] for i in data.store_ids], ids=[f"m{i}" for i in data.store_ids])
    assert emb.counter.calls == {"query": 0, "documents": 1}
    return s


def hits(store, data):
    """The store's top FETCH for the question, best first, with cosine scores."""
    return store.similarity_search_with_score_by_vector([float(x) for x in data.query], k=FETCH)


def expected(store, docs, query, k, relevance=None, **options):
    """mempursuit.select on the vectors the store holds for docs."""
    pool = np.array([store.store[d.id]["vector"] for d in docs], np.float32)
    return mempursuit.select(np.asarray(query, np.float32), pool, k, relevance=relevance, **options)


def check(out, docs, sel):
    assert [d.id for d in out] == [docs[i].id for i in sel.picks]
    assert [d.page_content for d in out] == [docs[i].page_content for i in sel.picks]
    meta = [d.metadata for d in out]
    assert [m["mempursuit"]["rank"] for m in meta] == list(range(len(sel.picks)))
    assert [m["mempursuit"]["score"] for m in meta] == sel.steps["score"].tolist()
    if sel.weights.shape[0]:
        assert [m["mempursuit"]["weight"] for m in meta] == sel.weights.tolist()
    else:
        assert all(m["mempursuit"]["weight"] is None for m in meta)


def test_search_by_vector_reads_the_store(data, store):
    found = hits(store, data)
    docs, scores = [d for d, _ in found], [s for _, s in found]
    sel = expected(store, docs, data.query, K, relevance=scores)  # select's default method
    before = dict(store.embeddings.counter.calls)
    out = mempursuit_search_by_vector(store, [float(x) for x in data.query], k=K, fetch_k=FETCH)
    assert store.embeddings.counter.calls == before  # nothing embedded
    assert len(out) == K
    check(out, docs, sel)
    assert [d.id for d in out] != [d.id for d in docs[:K]]


@pytest.mark.parametrize("method", mempursuit.METHODS)
def test_every_method_passes_through(data, store, method):
    found = hits(store, data)
    docs, scores = [d for d, _ in found], [s for _, s in found]
    out = mempursuit_search_by_vector(store, [float(x) for x in data.query], K, FETCH, method=method)
    check(out, docs, expected(store, docs, data.query, K, relevance=scores, method=method))
    # Without the scores the relevance is the cosine to the query.
    out = mempursuit_search_by_vector(
        store, [float(x) for x in data.query], K, FETCH, use_scores=False, method=method
    )
    check(out, docs, expected(store, docs, data.query, K, method=method))


def test_mmr_equals_langchains_mmr(data, store):
    q = [float(x) for x in data.query]
    for lam in (0.3, 0.5, 0.8):
        ours = mempursuit_search_by_vector(store, q, K, FETCH, method="mmr", mmr_lambda=lam)
        theirs = store.max_marginal_relevance_search_by_vector(q, k=K, fetch_k=FETCH, lambda_mult=lam)
        assert [d.id for d in ours] == [d.id for d in theirs]


def test_contextual_compression_retriever(data, store):
    retriever_class = compression_retriever()
    if retriever_class is None:  # skips, or fails under MEMPURSUIT_REQUIRE_INTEGRATIONS=1
        retriever_class = framework(
            "langchain_classic.retrievers", "langchain-classic"
        ).ContextualCompressionRetriever
    docs = [d for d, _ in hits(store, data)]
    sel = expected(store, docs, data.query, K)  # no scores reach a compressor
    before = dict(store.embeddings.counter.calls)
    retriever = retriever_class(
        base_compressor=MemPursuitCompressor(vector_store=store, k=K),
        base_retriever=store.as_retriever(search_kwargs={"k": FETCH}),
    )
    out = retriever.invoke(data.question)
    # The retriever's query embedding and the compressor's; no document.
    assert store.embeddings.counter.calls == {"query": before["query"] + 2, "documents": before["documents"]}
    check(out, docs, sel)


def test_compressor_embeddings_fallback_and_scores(data, store):
    docs = [d for d, _ in hits(store, data)]
    emb = LookupEmbeddings(data)
    sel = expected(store, docs, data.query, K, method="centroid", gamma=0.6)
    # Store vectors are read even with an Embeddings given: no document embedded.
    out = MemPursuitCompressor(
        vector_store=store, embeddings=emb, k=K, method="centroid", gamma=0.6
    ).compress_documents(docs, data.question)
    check(out, docs, sel)
    assert emb.counter.calls == {"query": 1, "documents": 0}
    # Documents the store does not know are embedded again, in one call.
    strangers = [Document(page_content=d.page_content, metadata=d.metadata) for d in docs]
    out = MemPursuitCompressor(embeddings=emb, k=K, method="centroid", gamma=0.6).compress_documents(
        strangers, data.question
    )
    assert [d.page_content for d in out] == [docs[i].page_content for i in sel.picks]
    assert emb.counter.calls == {"query": 2, "documents": 1} and emb.counter.texts["documents"] == FETCH
    # score_key: metadata scores are passed as relevance (here the reverse order).
    scored = [Document(id=d.id, page_content=d.page_content, metadata={"s": -r}) for r, d in enumerate(docs)]
    out = MemPursuitCompressor(vector_store=store, k=K, score_key="s").compress_documents(
        scored, data.question
    )
    check(out, docs, expected(store, docs, data.query, K, relevance=[-r for r in range(len(docs))]))
    # The input documents are not modified.
    assert all(d.metadata == {"s": -r} for r, d in enumerate(scored))


def test_bad_documents_name_the_document(data, store):
    docs = [d for d, _ in hits(store, data)][:3]
    stranger = Document(id="nowhere", page_content="not in the store")
    with pytest.raises(DocumentError, match=r"^MemPursuitCompressor: document 3 \(id \"nowhere\"\).*embeddings=") as e:
        MemPursuitCompressor(vector_store=store, k=2).compress_documents(docs + [stranger], data.question)
    assert (e.value.kind, e.value.index, e.value.id, e.value.argument) == ("input", 3, "nowhere", "embedding")
    # Query embedded by another model than the store's vectors: dimension 8 vs
    # 384, named as the query's (the documents agree among themselves).
    with pytest.raises(
        mempursuit.MemPursuitError,
        match=r"^MemPursuitCompressor: the query embedding has 8 values, the documents' embeddings have 384",
    ) as e:
        MemPursuitCompressor(
            vector_store=store, embeddings=DeterministicFakeEmbedding(size=8), k=2
        ).compress_documents(docs, data.question)
    assert (e.value.kind, e.value.index, e.value.argument) == ("input", None, "query")
    with pytest.raises(DocumentError, match=r"document 1 \(id \"m\d+\"\): has no score while other documents have one") as e:
        MemPursuitCompressor(vector_store=store, k=2, score_key="s").compress_documents(
            [docs[0].model_copy(update={"metadata": {"s": 1.0}}), docs[1]], data.question
        )
    assert (e.value.index, e.value.id, e.value.argument) == (1, docs[1].id, "score")
    with pytest.raises(ValueError, match="nothing to embed the query with"):
        MemPursuitCompressor(k=2).compress_documents(docs, data.question)
    with pytest.raises(TypeError, match="^mempursuit_search_by_vector: unknown option 'lambda_mult'"):
        mempursuit_search_by_vector(store, [float(x) for x in data.query], lambda_mult=0.5)
    with pytest.raises(TypeError, match="^MemPursuitCompressor: unknown option 'fetch_k'"):
        MemPursuitCompressor(fetch_k=20)
    # A bad value fails at construction, named by the compressor.
    with pytest.raises(mempursuit.MemPursuitError, match=r"^MemPursuitCompressor: option 'gamma' does not apply to method 'mmr'"):
        MemPursuitCompressor(vector_store=store, k=2, method="mmr", gamma=0.3)
    with pytest.raises(mempursuit.MemPursuitError, match=r"^MemPursuitCompressor: raw relevance"):
        MemPursuitCompressor(vector_store=store, k=2, method="topk", raw_relevance=True)
    MemPursuitCompressor(vector_store=store, k=2, method="topk", raw_relevance=True, score_key="s")
    # A bad query vector is our error, raised before the store is asked.
    bad = [float(x) for x in data.query]
    bad[3] = float("nan")
    for query, text in [(bad, "component 3 is NaN, not finite"), ([0.0] * len(bad), "is all zeros")]:
        with pytest.raises(mempursuit.MemPursuitError, match=rf"^mempursuit_search_by_vector: the query embedding.*{text}") as e:
            mempursuit_search_by_vector(store, query, k=2)
        assert (e.value.kind, e.value.index, e.value.argument) == ("input", None, "query")
    assert MemPursuitCompressor(k=2).method_options == {}  # select's default method


# Cost budgets: cost(Document) builds select's costs, cost_budget passes through.

BUDGET = 100  # words; binds on the fixture's pool (see budgeted)


def words(doc):
    """A Document's cost in words (a stand-in for a token count)."""
    return len(doc.page_content.split())


def budgeted(store, docs, query, relevance=None):
    """select with word costs on the same vectors, checked: within the
    budget, ended by it, and not the count budget's prefix (a pick skipped)."""
    costs = [words(d) for d in docs]
    sel = expected(store, docs, query, FETCH, relevance=relevance, costs=costs, cost_budget=BUDGET)
    assert sel.stop_reason == "cost_budget" and sum(costs[i] for i in sel.picks) <= BUDGET
    plain = expected(store, docs, query, len(sel.picks), relevance=relevance)
    assert sel.picks.tolist() != plain.picks.tolist()
    return sel


@pytest.mark.parametrize("method", mempursuit.METHODS)
def test_unit_costs_pick_what_the_count_budget_picks(data, store, method):
    found = hits(store, data)
    docs, scores = [d for d, _ in found], [s for _, s in found]
    q = [float(x) for x in data.query]
    out = mempursuit_search_by_vector(store, q, FETCH, FETCH, method=method, cost=lambda d: 1, cost_budget=K)
    assert len(out) == K
    check(out, docs, expected(store, docs, data.query, K, relevance=scores, method=method))
    out = MemPursuitCompressor(vector_store=store, k=FETCH, method=method, cost=lambda d: 1, cost_budget=K)
    got = out.compress_documents(docs, data.question)
    check(got, docs, expected(store, docs, data.query, K, method=method))


def test_word_costs_stay_within_the_budget(data, store):
    found = hits(store, data)
    docs, scores = [d for d, _ in found], [s for _, s in found]
    q = [float(x) for x in data.query]
    out = mempursuit_search_by_vector(store, q, FETCH, FETCH, cost=words, cost_budget=BUDGET)
    check(out, docs, budgeted(store, docs, data.query, relevance=scores))
    assert sum(words(d) for d in out) <= BUDGET
    seen = []

    def cost(doc):
        seen.append(doc.id)
        return words(doc)

    compressor = MemPursuitCompressor(vector_store=store, k=FETCH, cost=cost, cost_budget=BUDGET)
    before = dict(store.embeddings.counter.calls)
    got = compressor.compress_documents(docs, data.question)
    check(got, docs, budgeted(store, docs, data.query))
    assert sum(words(d) for d in got) <= BUDGET
    assert seen == [d.id for d in docs]  # once per document, in input order
    assert store.embeddings.counter.calls == {"query": before["query"] + 1, "documents": before["documents"]}
    assert compressor.method_options == {"cost_budget": BUDGET}


def test_bad_costs_name_the_document(data, store):
    docs = [d for d, _ in hits(store, data)]
    bad = docs[2].id
    q = [float(x) for x in data.query]

    def at_bad(value):
        return lambda d: value() if d.id == bad else 1.0

    def boom():
        raise ValueError("cannot tokenize")

    fields = ("input", 2, bad, "cost")
    with pytest.raises(DocumentError, match=r"cost\(\) raised ValueError: cannot tokenize") as e:
        mempursuit_search_by_vector(store, q, 3, FETCH, cost=at_bad(boom), cost_budget=5)
    assert (e.value.kind, e.value.index, e.value.id, e.value.argument) == fields
    before = dict(store.embeddings.counter.calls)
    compressor = MemPursuitCompressor(vector_store=store, k=3, cost=at_bad(lambda: -1), cost_budget=5)
    with pytest.raises(DocumentError, match=r"cost -1 must be finite") as e:
        compressor.compress_documents(docs, data.question)
    assert (e.value.kind, e.value.index, e.value.id, e.value.argument) == fields
    with pytest.raises(DocumentError, match=r"its cost is '7' \(str\), not a real number") as e:
        mempursuit_search_by_vector(store, q, 3, FETCH, cost=at_bad(lambda: "7"), cost_budget=5)
    assert (e.value.kind, e.value.index, e.value.id, e.value.argument) == fields
    for make, argument in [
        (lambda: mempursuit_search_by_vector(store, q, cost=words), "cost"),
        (lambda: MemPursuitCompressor(cost_budget=10), "cost_budget"),
        (lambda: MemPursuitCompressor(cost=words), "cost"),
        (lambda: mempursuit_search_by_vector(store, q, costs=[1.0], cost_budget=3), "costs"),
    ]:
        with pytest.raises(OptionError) as e:
            make()
        assert (e.value.kind, e.value.argument) == ("option", argument)


# Errors are MemPursuitErrors with select's kinds (new-user trial of 2026-12-02, items 1-3, 12).


def test_scores_from_score_key_must_be_finite_numbers(data, store):
    docs = [d for d, _ in hits(store, data)][:3]
    compressor = MemPursuitCompressor(vector_store=store, k=3, score_key="s")
    for value, tail in (("high", "its score is 'high' (str), not a real number"), (float("nan"), "similarity score NaN is not finite")):
        scored = [d.model_copy(update={"metadata": {"s": v}}) for d, v in zip(docs, [1.0, value, 0.5])]
        with pytest.raises(DocumentError) as e:
            compressor.compress_documents(scored, data.question)
        assert str(e.value).startswith(f'MemPursuitCompressor: document 1 (id "{docs[1].id}"): {tail}'), str(e.value)
        assert (e.value.index, e.value.id, e.value.argument) == (1, docs[1].id, "score")
        assert e.value.kind == "input" and isinstance(e.value, mempursuit.MemPursuitError)


def test_bad_settings_fail_at_construction_with_the_prefix(data, store):
    cases = [
        ({"k": -1}, "MemPursuitCompressor: k must be >= 0, got -1"),
        ({"k": "3"}, "MemPursuitCompressor: k must be an int, not str"),
        ({"k": 2.0}, "MemPursuitCompressor: k must be an int, not float"),
        ({"method": "pursuit", "gamma": [1]}, "MemPursuitCompressor: gamma must be a float or None, not list"),
        ({"mmr_lamda": 0.3}, "MemPursuitCompressor: unknown option 'mmr_lamda' (options: " + ", ".join(mempursuit.OPTIONS)),
        ({"gamma": 0.5, "method_options": {"gamma": 0.4}}, "MemPursuitCompressor: 'gamma' given twice"),
    ]
    for kwargs, message in cases:
        with pytest.raises(OptionError) as e:
            MemPursuitCompressor(vector_store=store, **kwargs)
        assert str(e.value).startswith(message), (kwargs, str(e.value))
        assert e.value.kind == "option" and isinstance(e.value, TypeError)
    # A field of the wrong type (pydantic's message, prefixed); a value select rejects.
    with pytest.raises(OptionError, match=r"^MemPursuitCompressor: 1 validation error .*\nembedding_key\n") as e:
        MemPursuitCompressor(vector_store=store, embedding_key=3)
    with pytest.raises(mempursuit.MemPursuitError, match=r"^MemPursuitCompressor: option 'raw_relevance' must be true or false") as e:
        MemPursuitCompressor(vector_store=store, raw_relevance="no")
    assert e.value.kind == "option"
    with pytest.raises(mempursuit.MemPursuitError, match="^MemPursuitCompressor: nothing to embed the query with") as e:
        MemPursuitCompressor(k=2).compress_documents([d for d, _ in hits(store, data)], data.question)
    assert e.value.kind == "option"
    q = [float(x) for x in data.query]
    for kwargs, message in [
        ({"use_scores": "no"}, "mempursuit_search_by_vector: use_scores must be True or False, got 'no'"),
        ({"k": -1}, "mempursuit_search_by_vector: k must be >= 0, got -1"),
        ({"fetch_k": 2.5}, "mempursuit_search_by_vector: fetch_k must be an int, not float"),
        ({"gamma": [1]}, "mempursuit_search_by_vector: gamma must be a float or None, not list"),
    ]:
        with pytest.raises(OptionError) as e:
            mempursuit_search_by_vector(store, q, **kwargs)
        assert str(e.value) == message and e.value.kind == "option"


def test_a_query_of_another_dimension_names_the_query(data, store):
    # The store is asked first (the layer checks what it returns): a
    # ValueError, the store's own for InMemoryVectorStore.
    with pytest.raises(ValueError):
        mempursuit_search_by_vector(store, [0.1] * 10, k=3)
    docs = [d for d, _ in hits(store, data)][:3]
    with pytest.raises(mempursuit.MemPursuitError) as e:
        MemPursuitCompressor(vector_store=store, embeddings=DeterministicFakeEmbedding(size=10), k=2).compress_documents(
            docs, data.question
        )
    assert type(e.value) is mempursuit.MemPursuitError
    assert (e.value.kind, e.value.index, e.value.argument) == ("input", None, "query")
    assert str(e.value).startswith("MemPursuitCompressor: the query embedding has 10 values, the documents' embeddings have 384")


def test_compressor_reads_metadata_embedding_first(data, store):
    """metadata["embedding"] (embedding_key), as LangChain.js reads it: no
    embed_documents call for documents that carry their vector."""
    docs = [d for d, _ in hits(store, data)]
    carried = [
        Document(page_content=d.page_content, metadata={"embedding": store.store[d.id]["vector"]}) for d in docs
    ]
    emb = LookupEmbeddings(data)
    sel = expected(store, docs, data.query, K)
    out = MemPursuitCompressor(embeddings=emb, k=K).compress_documents(carried, data.question)
    assert [d.page_content for d in out] == [docs[i].page_content for i in sel.picks]
    assert [d.metadata["mempursuit"]["weight"] for d in out] == sel.weights.tolist()
    assert emb.counter.calls == {"query": 1, "documents": 0}, "no document embedded again"
    # The metadata vector wins over the store's (the same rule as LangChain.js):
    # here a zero vector the store does not hold is the one rejected.
    zeroed = [docs[0].model_copy(update={"metadata": {"embedding": [0.0] * 384}}), *docs[1:]]
    with pytest.raises(DocumentError, match=r"^MemPursuitCompressor: document 0 .*all elements are zero") as e:
        MemPursuitCompressor(vector_store=store, k=K).compress_documents(zeroed, data.question)
    assert (e.value.index, e.value.id, e.value.argument) == (0, docs[0].id, "embedding")
    # Another key; pgvector's text form of a vector is parsed (issue 27: a
    # string embedding is not missing), as LangChain.js reads it; the
    # store's vector is used for a document without one, and only documents
    # with neither are embedded.
    text = "[" + ",".join(repr(float(x)) for x in store.store[docs[1].id]["vector"]) + "]"
    mixed = [
        Document(page_content=docs[0].page_content, metadata={"vec": store.store[docs[0].id]["vector"]}),
        docs[1].model_copy(update={"metadata": {"vec": text}}),
        *(Document(page_content=d.page_content) for d in docs[2:]),
    ]
    emb = LookupEmbeddings(data)
    out = MemPursuitCompressor(vector_store=store, embeddings=emb, k=K, embedding_key="vec").compress_documents(
        mixed, data.question
    )
    assert [d.page_content for d in out] == [docs[i].page_content for i in sel.picks]
    assert [d.metadata["mempursuit"]["weight"] for d in out] == sel.weights.tolist()
    assert emb.counter.calls == {"query": 1, "documents": 1} and emb.counter.texts["documents"] == len(docs) - 2
    # Text that is not a vector is refused, naming the document (never
    # taken as missing and replaced by the store's vector).
    garbled = [mixed[0], docs[1].model_copy(update={"metadata": {"vec": "not a vector"}}), *mixed[2:]]
    with pytest.raises(DocumentError, match=r"^MemPursuitCompressor: document 1 .*not a vector") as e:
        MemPursuitCompressor(vector_store=store, embeddings=emb, k=K, embedding_key="vec").compress_documents(
            garbled, data.question
        )
    assert (e.value.kind, e.value.index, e.value.id, e.value.argument) == ("input", 1, docs[1].id, "embedding")
    # Without embeddings, a document with neither is named, with the key.
    with pytest.raises(DocumentError, match=r"^MemPursuitCompressor: document 2: has no embedding .*; it has no metadata\['vec'\]") as e:
        MemPursuitCompressor(vector_store=store, k=K, embedding_key="vec").compress_documents(mixed, data.question)
    assert (e.value.kind, e.value.index, e.value.id, e.value.argument) == ("input", 2, None, "embedding")


class _L2Store(InMemoryVectorStore):
    """A store that reports L2 distances (lower is better), as FAISS does."""

    def similarity_search_with_score_by_vector(self, embedding, k=4, **kwargs):
        q = np.asarray(embedding, dtype=np.float64)
        out = []
        for doc, _ in super().similarity_search_with_score_by_vector(embedding, k=k, **kwargs):
            v = np.asarray(self.store[doc.id]["vector"], dtype=np.float64)
            out.append((doc, float(np.linalg.norm(q - v))))
        return out


class _L2StoreWithRelevance(_L2Store):
    def _select_relevance_score_fn(self):
        return self._euclidean_relevance_score_fn


@pytest.mark.parametrize("cls", [_L2Store, _L2StoreWithRelevance])
def test_distance_scores_are_never_relevance(data, store, cls):
    l2 = cls(embedding=store.embeddings)
    l2.store = dict(store.store)
    q = [float(x) for x in data.query]
    docs = [d for d, _ in InMemoryVectorStore.similarity_search_with_score_by_vector(l2, q, k=FETCH)]
    # Top-K on relevance: the K nearest, never the K farthest.
    out = mempursuit_search_by_vector(l2, q, K, FETCH, method="topk")
    assert [d.id for d in out] == [d.id for d in docs[:K]]
    # The default method: the same picks as cosine relevance over the same vectors.
    ours = mempursuit_search_by_vector(l2, q, K, FETCH)
    cosine = mempursuit_search_by_vector(store, q, K, FETCH, use_scores=False)
    assert [d.id for d in ours] == [d.id for d in cosine]


@pytest.mark.parametrize("method", ["pursuit", "centroid", "topk", "mmr"])
def test_raw_relevance_on_in_memory_store_scores(data, store, method):
    """InMemoryVectorStore declares no relevance function, but its scores
    are the cosine of the query and each vector: raw_relevance uses them
    as given (select with relevance=scores, raw_relevance=True)."""
    found = hits(store, data)
    docs, scores = [d for d, _ in found], [s for _, s in found]
    q = [float(x) for x in data.query]
    out = mempursuit_search_by_vector(store, q, K, FETCH, method=method, raw_relevance=True)
    want = expected(store, docs, data.query, K, relevance=scores, method=method, raw_relevance=True)
    check(out, docs, want)
    # The scores are the cosines the layer would compute (to float32 rounding).
    pool = np.array([store.store[d.id]["vector"] for d in docs], np.float64)
    cos = pool @ np.asarray(q) / np.linalg.norm(pool, axis=1) / np.linalg.norm(q)
    np.testing.assert_allclose(scores, cos, rtol=1e-6)


def test_raw_relevance_without_relevance_scores_says_the_fix(data, store):
    l2 = _L2Store(embedding=store.embeddings)
    l2.store = dict(store.store)
    q = [float(x) for x in data.query]
    with pytest.raises(OptionError) as e:
        mempursuit_search_by_vector(l2, q, K, FETCH, method="pursuit", raw_relevance=True)
    assert str(e.value) == (
        "mempursuit_search_by_vector: raw_relevance=True uses the store's relevance scores as given, but "
        "_L2Store's scores are not relevance (it has no relevance function, _select_relevance_score_fn, that "
        "keeps its best-first order: they may be distances): leave out raw_relevance (the relevance is then the "
        "cosine of each document's vector with the query), or give the store a relevance function "
        "(relevance_score_fn=... where its constructor takes one, as FAISS and Chroma do)"
    )
    assert (e.value.kind, e.value.argument) == ("option", "raw_relevance")
    # With its relevance function the scores are relevance: raw_relevance runs.
    ok = _L2StoreWithRelevance(embedding=store.embeddings)
    ok.store = dict(store.store)
    assert len(mempursuit_search_by_vector(ok, q, K, FETCH, method="pursuit", raw_relevance=True)) == K
    with pytest.raises(OptionError, match=r"needs relevance scores; use_scores=False passes no scores: leave out raw_relevance"):
        mempursuit_search_by_vector(store, q, K, FETCH, method="pursuit", raw_relevance=True, use_scores=False)
    with pytest.raises(OptionError, match=r"needs relevance scores; a compressor receives no scores: pass score_key"):
        MemPursuitCompressor(vector_store=store, k=2, method="topk", raw_relevance=True)


def test_numpy_scalar_options_become_plain_values(store):
    import json

    comp = MemPursuitCompressor(
        vector_store=store,
        k=2,
        cost=lambda doc: 1,
        method_options={"method": "centroid", "gamma": np.float32(0.5), "cost_budget": np.int64(6)},
    )
    got = comp.method_options
    assert got == {"method": "centroid", "gamma": 0.5, "cost_budget": 6}
    assert type(got["gamma"]) is float and type(got["cost_budget"]) is int
    assert json.loads(json.dumps(got)) == got
