"""Haystack: MemPursuitRanker in a real Pipeline after InMemoryEmbeddingRetriever
(haystack-ai from PyPI, offline: the fixture's precomputed embeddings)."""

import math

import numpy as np
import pytest

from _data import FETCH, K, Counter, Data, framework

framework("haystack", "'./python[haystack]'")

import inspect  # noqa: E402
from typing import List  # noqa: E402

from haystack import Document, Pipeline, component  # noqa: E402
from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever  # noqa: E402
from haystack.document_stores.in_memory import InMemoryDocumentStore  # noqa: E402

import mempursuit  # noqa: E402
from mempursuit.integrations import DocumentError, OptionError  # noqa: E402
from mempursuit.integrations.haystack import MemPursuitRanker  # noqa: E402

# The remedy after an unusable row (issue 30, item 7).
EXCLUDE_HINT = "; or set option 'invalid' to 'exclude' to leave such rows out (listed in excluded)"


@pytest.fixture(scope="module")
def data():
    """The mini fixture's texts and embeddings (see _data.py)."""
    return Data()


@component
class LookupTextEmbedder:
    """A text embedder without a model: the fixture's vector of the text,
    counting calls."""

    def __init__(self, data, counter):
        self.data = data
        self.counter = counter

    @component.output_types(embedding=List[float])
    def run(self, text: str):
        self.counter.add("query", 1)
        return {"embedding": self.data.embed(text)}


@pytest.fixture(scope="module")
def store(data):
    s = InMemoryDocumentStore(embedding_similarity_function="cosine")
    s.write_documents(
        [
            Document(id=f"m{i}", content=data.texts[i], embedding=data.embed(data.texts[i]))
            for i in data.store_ids
        ]
    )
    return s


def retrieved(store, query):
    """What the retriever hands the ranker: the store's top FETCH, best first,
    with embeddings and cosine scores."""
    r = InMemoryEmbeddingRetriever(store, top_k=FETCH, return_embedding=True)
    return r.run(query_embedding=[float(x) for x in query])["documents"]


def expected(docs, query, k, **options):
    """mempursuit.select on the same vectors and scores, as the ranker should call it."""
    sel = mempursuit.select(
        np.asarray(query, np.float32),
        np.array([d.embedding for d in docs], np.float32),
        k,
        relevance=[d.score for d in docs],
        **options,
    )
    return sel


def check(out, docs, sel):
    """out = the picked docs in pick order, with the pick's weight, score and rank."""
    assert [d.id for d in out] == [docs[i].id for i in sel.picks]
    assert [d.meta["mempursuit"]["rank"] for d in out] == list(range(len(sel.picks)))
    if sel.weights.shape[0]:
        assert [d.meta["mempursuit"]["weight"] for d in out] == sel.weights.tolist()
        assert [d.meta["mempursuit"]["residual_sq"] for d in out] == sel.steps["residual_sq"].tolist()
    else:
        assert all(d.meta["mempursuit"]["weight"] is None for d in out)
        assert all(d.meta["mempursuit"]["residual_sq"] is None for d in out)
    assert [d.meta["mempursuit"]["score"] for d in out] == sel.steps["score"].tolist()
    # The retriever's score, content and embedding are kept.
    assert [d.score for d in out] == [docs[i].score for i in sel.picks]
    assert [d.content for d in out] == [docs[i].content for i in sel.picks]
    assert [d.embedding for d in out] == [docs[i].embedding for i in sel.picks]


def test_pipeline_picks_equal_select(data, store):
    counter = Counter()
    p = Pipeline()
    p.add_component("embedder", LookupTextEmbedder(data, counter))
    p.add_component("retriever", InMemoryEmbeddingRetriever(store, top_k=FETCH, return_embedding=True))
    p.add_component("ranker", MemPursuitRanker(top_k=K))
    p.connect("embedder.embedding", "retriever.query_embedding")
    p.connect("embedder.embedding", "ranker.query_embedding")
    p.connect("retriever.documents", "ranker.documents")
    out = p.run({"embedder": {"text": data.question}})["ranker"]["documents"]

    docs = retrieved(store, data.query)
    assert len(docs) == FETCH and all(d.embedding is not None for d in docs)
    # select's default method (no method= passed on either side).
    sel = expected(docs, data.query, K)
    assert len(out) == K == len(sel.picks)
    check(out, docs, sel)
    assert counter.calls == {"query": 1, "documents": 0}
    # The picks are not the retriever's top K: the selection did something.
    assert [d.id for d in out] != [d.id for d in docs[:K]]


@pytest.mark.parametrize("method", mempursuit.METHODS)
def test_every_method_passes_through(data, store, method):
    docs = retrieved(store, data.query)
    before = [(d.id, dict(d.meta), d.score) for d in docs]
    out = MemPursuitRanker(top_k=K, method=method).run(docs, [float(x) for x in data.query])["documents"]
    check(out, docs, expected(docs, data.query, K, method=method))
    # The input documents are not modified.
    assert [(d.id, d.meta, d.score) for d in docs] == before


def test_options_and_run_top_k(data, store):
    docs = retrieved(store, data.query)
    q = [float(x) for x in data.query]
    ranker = MemPursuitRanker(top_k=K, method="mmr", mmr_lambda=0.3)
    check(
        ranker.run(docs, q, top_k=3)["documents"],
        docs,
        expected(docs, data.query, 3, method="mmr", mmr_lambda=0.3),
    )
    # Without scores the relevance is the cosine to the query.
    ranker = MemPursuitRanker(top_k=K, use_scores=False, method="pursuit", gamma=0.5)
    sel = mempursuit.select(
        data.query, np.array([d.embedding for d in docs], np.float32), K, method="pursuit", gamma=0.5
    )
    check(ranker.run(docs, q)["documents"], docs, sel)
    assert MemPursuitRanker().run([], q) == {"documents": []}


def test_known_order():
    # Two paraphrases of fact A (a, a2) and fact B: the pursuit takes A, then
    # the missing B; top-K takes both paraphrases.
    s = 1 / math.sqrt(2)
    docs = [
        Document(id="a", content="A", embedding=[0.9950, 0.0998], score=0.9),
        Document(id="a2", content="A again", embedding=[0.9998, 0.0200], score=0.8),
        Document(id="b", content="B", embedding=[0.0, 1.0], score=0.7),
    ]
    out = MemPursuitRanker(top_k=2, use_scores=False, method="pursuit").run(docs, [s, s])["documents"]
    assert [d.id for d in out] == ["a", "b"]
    w = [d.meta["mempursuit"]["weight"] for d in out]
    assert w[0] > 0 and w[1] > 0 and abs(sum(w) - 1) < 1e-12
    out = MemPursuitRanker(top_k=2, method="topk").run(docs, [s, s])["documents"]
    assert [d.id for d in out] == ["a", "a2"]
    assert [d.meta["mempursuit"]["weight"] for d in out] == [None, None]


def test_to_dict_from_dict_and_pipeline_yaml(data, store):
    ranker = MemPursuitRanker(top_k=3, method="mmr", mmr_lambda=0.25)
    d = ranker.to_dict()
    assert d == {
        "type": "mempursuit.integrations.haystack.MemPursuitRanker",
        "init_parameters": {"top_k": 3, "use_scores": True, "method": "mmr", "mmr_lambda": 0.25},
    }
    # The default ranker stores no method: it follows select's default.
    assert MemPursuitRanker().to_dict()["init_parameters"] == {"top_k": 10, "use_scores": True}
    again = MemPursuitRanker.from_dict(d)
    assert (again.top_k, again.use_scores, again.options) == (3, True, {"method": "mmr", "mmr_lambda": 0.25})

    # Through a pipeline's YAML (the ranker alone: a saved InMemoryDocumentStore
    # comes back empty in Haystack 2.x).
    p = Pipeline()
    p.add_component("ranker", ranker)
    # Haystack 3 loads only allowed modules; 2.x has no such argument.
    if "allowed_modules" in inspect.signature(Pipeline.loads).parameters:
        loaded = Pipeline.loads(p.dumps(), allowed_modules=["mempursuit.integrations.haystack"])
    else:
        loaded = Pipeline.loads(p.dumps())
    docs = retrieved(store, data.query)
    q = [float(x) for x in data.query]
    sel = expected(docs, data.query, 3, method="mmr", mmr_lambda=0.25)
    for pp in (p, loaded):
        check(pp.run({"ranker": {"documents": docs, "query_embedding": q}})["ranker"]["documents"], docs, sel)


def fields(e):
    """An error's structured fields (kind, index, id, argument)."""
    return (e.kind, e.index, e.id, e.argument)


def test_bad_documents_name_the_document():
    q = [1.0, 0.0, 0.0]
    good = Document(id="good", content="x", embedding=[1.0, 0.0, 0.0], score=1.0)
    ranker = MemPursuitRanker(top_k=2)
    with pytest.raises(DocumentError, match=r'^MemPursuitRanker: document 1 \(id "bare"\).*return_embedding=True') as e:
        ranker.run([good, Document(id="bare", content="y", score=0.5)], q)
    assert fields(e.value) == ("input", 1, "bare", "embedding")
    with pytest.raises(DocumentError, match=r"embedding has length 2, the query has length 3") as e:
        ranker.run([good, Document(id="short", content="y", embedding=[1.0, 0.0], score=0.5)], q)
    assert fields(e.value) == ("input", 1, "short", "embedding")
    with pytest.raises(DocumentError, match=r"embedding component 1 is NaN, not finite") as e:
        ranker.run([good, Document(id="nan", content="y", embedding=[1.0, float("nan"), 0.0], score=0.5)], q)
    assert fields(e.value) == ("input", 1, "nan", "embedding")
    with pytest.raises(DocumentError, match=r"has no score while other documents have one") as e:
        ranker.run([good, Document(id="noscore", content="y", embedding=[0.0, 1.0, 0.0])], q)
    assert fields(e.value) == ("input", 1, "noscore", "score")
    assert issubclass(DocumentError, ValueError)
    with pytest.raises(TypeError, match=r"^MemPursuitRanker: unknown option 'lambda_mult' \(options: .*mmr_lambda") as e:
        MemPursuitRanker(lambda_mult=0.5)
    assert fields(e.value) == ("option", None, None, "lambda_mult")
    with pytest.raises(TypeError, match=r"'relevance' is set by the integration") as e:
        MemPursuitRanker(relevance=[1.0])
    assert fields(e.value) == ("option", None, None, "relevance")
    # A bad value is the layer's error, raised where it is written.
    with pytest.raises(mempursuit.MemPursuitError, match=r"^MemPursuitRanker: unknown method 'nope'") as e:
        MemPursuitRanker(method="nope")
    assert fields(e.value) == ("option", None, None, "method")
    with pytest.raises(
        mempursuit.MemPursuitError,
        match=r"^MemPursuitRanker: option 'gamma' does not apply to method 'mmr'",
    ) as e:
        MemPursuitRanker(method="mmr", gamma=0.3)
    assert fields(e.value) == ("option", None, None, "gamma")
    # What depends on the documents is left to run time: raw scores need
    # scores, which the documents may or may not carry.
    MemPursuitRanker(method="topk", raw_relevance=True)  # constructs
    with pytest.raises(mempursuit.MemPursuitError, match=r"^MemPursuitRanker: raw relevance"):
        MemPursuitRanker(method="topk", raw_relevance=True, use_scores=False)


# Cost budgets: cost(Document) builds select's costs, cost_budget passes through.

BUDGET = 100  # words; binds on the fixture's pool (see budgeted)


def word_count(doc):
    """A Document's cost in words (a stand-in for a token count); module
    level, so that to_dict can save it by import path."""
    return len(doc.content.split())


def budgeted(docs, query, costs, budget, **options):
    """select with costs on the same vectors and scores, checked: within the
    budget, ended by it, and not the count budget's prefix (a pick skipped)."""
    sel = expected(docs, query, len(docs), costs=costs, cost_budget=budget, **options)
    assert sel.stop_reason == "cost_budget"
    assert sum(costs[i] for i in sel.picks) <= budget
    plain = expected(docs, query, len(sel.picks), **options)
    assert sel.picks.tolist() != plain.picks.tolist()
    return sel


@pytest.mark.parametrize("method", mempursuit.METHODS)
def test_unit_costs_pick_what_the_count_budget_picks(data, store, method):
    docs = retrieved(store, data.query)
    q = [float(x) for x in data.query]
    ranker = MemPursuitRanker(top_k=FETCH, method=method, cost=lambda d: 1, cost_budget=K)
    out = ranker.run(docs, q)["documents"]
    assert len(out) == K
    check(out, docs, expected(docs, data.query, K, method=method))


def test_word_costs_stay_within_the_budget(data, store):
    docs = retrieved(store, data.query)
    q = [float(x) for x in data.query]
    words = [word_count(d) for d in docs]
    seen = []

    def cost(doc):
        seen.append(doc.id)
        return word_count(doc)

    out = MemPursuitRanker(top_k=FETCH, cost=cost, cost_budget=BUDGET).run(docs, q)["documents"]
    check(out, docs, budgeted(docs, data.query, words, BUDGET))
    assert sum(word_count(d) for d in out) <= BUDGET
    assert seen == [d.id for d in docs]  # once per document, in input order
    # top_k still caps the count: the first 2 of the budgeted picks.
    out = MemPursuitRanker(top_k=2, cost=word_count, cost_budget=BUDGET).run(docs, q)["documents"]
    check(out, docs, expected(docs, data.query, 2, costs=words, cost_budget=BUDGET))
    # Through a pipeline with its YAML: cost saved by import path.
    ranker = MemPursuitRanker(top_k=FETCH, cost=word_count, cost_budget=BUDGET)
    d = ranker.to_dict()
    assert d["init_parameters"] == {
        "top_k": FETCH,
        "use_scores": True,
        "cost": f"{__name__}.word_count",
        "cost_budget": BUDGET,
    }
    p = Pipeline()
    p.add_component("ranker", ranker)
    if "allowed_modules" in inspect.signature(Pipeline.loads).parameters:
        loaded = Pipeline.loads(p.dumps(), allowed_modules=["mempursuit.integrations.haystack", __name__])
    else:
        loaded = Pipeline.loads(p.dumps())
    again = loaded.get_component("ranker")
    assert again.cost is word_count and again.options == {"cost_budget": BUDGET}
    got = loaded.run({"ranker": {"documents": docs, "query_embedding": q}})["ranker"]["documents"]
    assert [x.id for x in got] == [docs[i].id for i in budgeted(docs, data.query, words, BUDGET).picks]
    # A per-call budget (run's cost_budget input) overrides the component's.
    out = ranker.run(docs, q, cost_budget=BUDGET // 2)["documents"]
    assert [x.id for x in out] == [docs[i].id for i in expected(docs, data.query, FETCH, costs=words, cost_budget=BUDGET // 2).picks]
    assert sum(word_count(d) for d in out) <= BUDGET // 2 < sum(word_count(d) for d in got)
    got_half = loaded.run({"ranker": {"documents": docs, "query_embedding": q, "cost_budget": BUDGET // 2}})
    assert [x.id for x in got_half["ranker"]["documents"]] == [x.id for x in out]
    assert ranker.options == {"cost_budget": BUDGET}  # the component's own budget is unchanged
    # Without a cost function a per-call budget is an error naming the fix.
    with pytest.raises(ValueError, match=r"^MemPursuitRanker.run: a cost budget needs a cost function") as e:
        MemPursuitRanker(top_k=FETCH).run(docs, q, cost_budget=10)
    assert (e.value.kind, e.value.argument) == ("option", "cost_budget")
    # A lambda cannot be saved (Haystack's own error).
    with pytest.raises(Exception, match="lambda"):
        MemPursuitRanker(cost=lambda d: 1, cost_budget=3).to_dict()


def test_bad_costs_name_the_document():
    q = [1.0, 0.0, 0.0]
    docs = [
        Document(id="a", content="x", embedding=[1.0, 0.0, 0.0], score=1.0),
        Document(id="b", content="y z", embedding=[0.0, 1.0, 0.0], score=0.5),
    ]

    def ranker(value):
        return MemPursuitRanker(top_k=2, cost=lambda d: value() if d.id == "b" else 1.0, cost_budget=5)

    def boom():
        raise RuntimeError("no tokenizer")

    with pytest.raises(DocumentError, match=r'^MemPursuitRanker: document 1 \(id .b.\): cost\(\) raised RuntimeError: no tokenizer') as e:
        ranker(boom).run(docs, q)
    assert fields(e.value) == ("input", 1, "b", "cost")
    for value, shown in ((-1, "-1"), (float("nan"), "NaN"), (float("inf"), "inf")):
        with pytest.raises(DocumentError, match=rf'^MemPursuitRanker: document 1 \(id "b"\): cost {shown} must be finite') as e:
            ranker(lambda: value).run(docs, q)
        assert fields(e.value) == ("input", 1, "b", "cost")
    for value in ("3", True):
        with pytest.raises(DocumentError, match=r"its cost is .*, not a real number") as e:
            ranker(lambda: value).run(docs, q)
        assert fields(e.value) == ("input", 1, "b", "cost")
    with pytest.raises(DocumentError, match=r"has no cost while other documents have one") as e:
        ranker(lambda: None).run(docs, q)
    assert fields(e.value) == ("input", 1, "b", "cost")
    # One without the other, at construction; costs is the integration's.
    for kwargs, argument in [
        ({"cost": word_count}, "cost"),
        ({"cost_budget": 10}, "cost_budget"),
        ({"costs": [1.0, 2.0], "cost_budget": 3}, "costs"),
        ({"cost": 3, "cost_budget": 3}, "cost"),
    ]:
        with pytest.raises(OptionError, match="^MemPursuitRanker: ") as e:
            MemPursuitRanker(**kwargs)
        assert fields(e.value) == ("option", None, None, argument), kwargs
    # A bad budget is the layer's error, at construction.
    with pytest.raises(mempursuit.MemPursuitError, match=r"^MemPursuitRanker: cost budget -1 must be finite and >= 0") as e:
        MemPursuitRanker(cost=word_count, cost_budget=-1)
    assert fields(e.value) == ("option", None, None, "cost_budget")


# Errors are MemPursuitErrors with select's kinds (new-user trial of 2026-12-02, items 1-3, 10).


def test_document_errors_are_mempursuit_errors_of_kind_input():
    assert issubclass(DocumentError, mempursuit.MemPursuitError) and issubclass(DocumentError, ValueError)
    q = [1.0, 0.0, 0.0]
    good = Document(id="good", content="x", embedding=[1.0, 0.0, 0.0], score=1.0)
    nan = Document(id="nan", content="y", embedding=[1.0, 0.0, float("nan")], score=0.5)
    # Caught as a MemPursuitError; the layer's fields are kept.
    with pytest.raises(mempursuit.MemPursuitError) as e:
        MemPursuitRanker(top_k=3).run(documents=[good, nan], query_embedding=q)
    assert type(e.value) is DocumentError and fields(e.value) == ("input", 1, "nan", "embedding")
    assert str(e.value) == 'MemPursuitRanker: document 1 (id "nan"): embedding component 2 is NaN, not finite'
    assert isinstance(e.value.__cause__, mempursuit.MemPursuitError) and e.value.__cause__.kind == "input"
    zero = Document(id="zero", content="z", embedding=[0.0, 0.0, 0.0], score=0.1)
    with pytest.raises(DocumentError) as e:
        MemPursuitRanker(top_k=3).run(documents=[good, zero], query_embedding=q)
    assert fields(e.value) == ("input", 1, "zero", "embedding") and "all elements are zero" in str(e.value)


def test_unknown_option_is_kind_option_in_selects_words():
    q = np.ones(2, np.float32)
    with pytest.raises(mempursuit.MemPursuitError) as theirs:
        mempursuit.select(q, np.eye(2, dtype=np.float32), 1, mmr_lamda=0.3)
    with pytest.raises(mempursuit.MemPursuitError) as e:
        MemPursuitRanker(top_k=3, mmr_lamda=0.3)
    assert isinstance(e.value, OptionError) and isinstance(e.value, TypeError)
    assert e.value.kind == theirs.value.kind == "option"
    # select's message, prefixed, with the component's own settings added.
    assert str(theirs.value) == "unknown option 'mmr_lamda' (options: " + ", ".join(mempursuit.OPTIONS) + ")"
    assert str(e.value) == f"MemPursuitRanker: {theirs.value}; MemPursuitRanker's own settings: top_k, use_scores, cost"
    with pytest.raises(OptionError, match=r"^MemPursuitRanker: 'relevance' is set by the integration") as e:
        MemPursuitRanker(relevance=[1.0])
    assert e.value.kind == "option"


def test_bad_settings_fail_at_construction_with_the_prefix():
    cases = [
        ({"method": "pursuit", "gamma": [1]}, "MemPursuitRanker: gamma must be a float or None, not list"),
        ({"top_k": -1}, "MemPursuitRanker: top_k must be >= 0, got -1"),
        ({"top_k": 2.5}, "MemPursuitRanker: top_k must be an int, not float"),
        ({"top_k": True}, "MemPursuitRanker: top_k must be an int, not bool"),
        ({"use_scores": "no"}, "MemPursuitRanker: use_scores must be True or False, got 'no'"),
        ({"use_scores": 1}, "MemPursuitRanker: use_scores must be True or False, got 1"),
        ({"cost": len}, "MemPursuitRanker: a cost function needs a cost budget (the most"),
        ({"cost": 3, "cost_budget": 5}, "MemPursuitRanker: cost must be a function"),
    ]
    for kwargs, message in cases:
        with pytest.raises(OptionError) as e:
            MemPursuitRanker(**kwargs)
        assert str(e.value).startswith(message), (kwargs, str(e.value))
        assert e.value.kind == "option" and isinstance(e.value, mempursuit.MemPursuitError)
    # A value select rejects: select's MemPursuitError of kind "option", prefixed.
    with pytest.raises(mempursuit.MemPursuitError, match=r"^MemPursuitRanker: unknown method 'bogus'") as e:
        MemPursuitRanker(method="bogus")
    assert e.value.kind == "option"
    assert MemPursuitRanker(top_k=np.int64(2), use_scores=np.bool_(False)).top_k == 2


def test_run_names_top_k_and_checks_its_cost_budget():
    docs = [
        Document(id="a", content="x", embedding=[1.0, 0.0, 0.0], score=1.0),
        Document(id="b", content="y", embedding=[0.0, 1.0, 0.0], score=0.5),
    ]
    ranker = MemPursuitRanker(top_k=2, cost=word_count, cost_budget=5)
    for bad, message in ((2.5, "an int, not float"), (-1, ">= 0, got -1"), ("2", "an int, not str")):
        with pytest.raises(OptionError) as e:
            ranker.run(documents=docs, query_embedding=[1.0, 1.0, 0.0], top_k=bad)
        assert str(e.value) == f"MemPursuitRanker.run: top_k must be {message}"
        assert e.value.kind == "option"
    with pytest.raises(mempursuit.MemPursuitError, match=r"^MemPursuitRanker.run: cost budget -1 must be finite") as e:
        ranker.run(documents=docs, query_embedding=[1.0, 1.0, 0.0], cost_budget=-1)
    assert e.value.kind == "option"
    out = ranker.run(documents=docs, query_embedding=[1.0, 1.0, 0.0], top_k=np.int64(1))["documents"]
    assert [d.id for d in out] == ["a"]


def test_a_bad_query_embedding_names_the_query():
    docs = [
        Document(id="a", content="x", embedding=[1.0, 0.0, 0.0], score=1.0),
        Document(id="b", content="y", embedding=[0.0, 1.0, 0.0], score=0.5),
        Document(id="c", content="z", embedding=[0.0, 0.0, 1.0], score=0.2),
    ]
    ranker = MemPursuitRanker(top_k=2)
    for query, shown in (("what?", "'what?' (str)"), ([1.0, "x", 0.0], "[1.0, 'x', 0.0] (list)")):
        with pytest.raises(mempursuit.MemPursuitError) as e:
            ranker.run(documents=docs, query_embedding=query)
        assert type(e.value) is mempursuit.MemPursuitError and fields(e.value) == ("input", None, None, "query")
        assert str(e.value).startswith(f"MemPursuitRanker: the query embedding is {shown}, not a vector of numbers")
    # All documents agree (3 values), the query has 2: the query is named, not document 0.
    with pytest.raises(mempursuit.MemPursuitError) as e:
        ranker.run(documents=docs, query_embedding=[1.0, 0.0])
    assert not isinstance(e.value, DocumentError) and fields(e.value) == ("input", None, None, "query")
    assert str(e.value).startswith("MemPursuitRanker: the query embedding has 2 values, the documents' embeddings have 3")
    # Documents that disagree: the first whose length differs from the query's.
    odd = Document(id="odd", content="w", embedding=[1.0, 0.0], score=0.1)
    with pytest.raises(DocumentError, match=r"embedding has length 2, the query has length 3") as e:
        ranker.run(documents=docs + [odd], query_embedding=[1.0, 0.0, 0.0])
    assert fields(e.value) == ("input", 3, "odd", "embedding")
    with pytest.raises(DocumentError, match=r"embedding has length 3, the query has length 4") as e:
        ranker.run(documents=docs + [odd], query_embedding=[1.0, 0.0, 0.0, 0.0])
    assert fields(e.value) == ("input", 0, "a", "embedding")


def test_scores_must_be_finite_numbers():
    q = [1.0, 1.0, 0.0]
    good = Document(id="a", content="x", embedding=[1.0, 0.0, 0.0], score=1.0)
    ranker = MemPursuitRanker(top_k=2)
    for score, tail in (("high", "its score is 'high' (str), not a real number"), (float("nan"), "similarity score NaN is not finite")):
        bad = Document(id="b", content="y", embedding=[0.0, 1.0, 0.0], score=score)
        with pytest.raises(DocumentError) as e:
            ranker.run(documents=[good, bad], query_embedding=q)
        assert str(e.value).startswith(f'MemPursuitRanker: document 1 (id "b"): {tail}'), str(e.value)
        assert fields(e.value) == ("input", 1, "b", "score")
        # use_scores=False does not read them.
        out = MemPursuitRanker(top_k=2, use_scores=False).run(documents=[good, bad], query_embedding=q)
        assert sorted(d.id for d in out["documents"]) == ["a", "b"]
