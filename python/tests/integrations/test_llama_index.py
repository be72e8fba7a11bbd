"""LlamaIndex: MemPursuitPostprocessor on a real VectorStoreIndex (default
SimpleVectorStore, which strips the vectors from the nodes it returns) and
in a query engine (llama-index-core from PyPI, offline: the fixture's
precomputed embeddings through a lookup embed model, MockLLM)."""

from typing import Any, List

import numpy as np
import pytest

from _data import FETCH, K, Counter, Data, framework

framework("llama_index.core", "'./python[llama-index]'")

from llama_index.core import VectorStoreIndex  # noqa: E402
from llama_index.core.base.embeddings.base import BaseEmbedding  # noqa: E402
from llama_index.core.bridge.pydantic import PrivateAttr  # noqa: E402
from llama_index.core.llms import MockLLM  # noqa: E402
from llama_index.core.query_engine import RetrieverQueryEngine  # noqa: E402
from llama_index.core.response_synthesizers import get_response_synthesizer  # noqa: E402
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode  # noqa: E402

import mempursuit  # noqa: E402
from mempursuit.integrations import DocumentError, OptionError  # noqa: E402
from mempursuit.integrations.llama_index import MemPursuitPostprocessor  # noqa: E402

# The remedy after an unusable row (issue 30, item 7).
EXCLUDE_HINT = "; or set option 'invalid' to 'exclude' to leave such rows out (listed in excluded)"


@pytest.fixture(scope="module")
def data():
    """The mini fixture's texts and embeddings (see _data.py)."""
    return Data()


class LookupEmbedding(BaseEmbedding):
    """An embed model without a model: the fixture's vector of each text,
    counting calls (one batch of up to 100 texts per call)."""

    _data: Any = PrivateAttr()
    _counter: Any = PrivateAttr()

    def __init__(self, data, counter):
        super().__init__(model_name="lookup", embed_batch_size=100)
        self._data = data
        self._counter = counter

    def _get_query_embedding(self, query: str) -> List[float]:
        self._counter.add("query", 1)
        return self._data.embed(query)

    async def _aget_query_embedding(self, query: str) -> List[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> List[float]:
        return self._get_text_embeddings([text])[0]

    def _get_text_embeddings(self, texts: List[str]) -> List[List[float]]:
        self._counter.add("documents", len(texts))
        return [self._data.embed(t) for t in texts]


@pytest.fixture(scope="module")
def setup(data):
    """(index, embed model, counter): the store's 80 memories embedded once."""
    counter = Counter()
    embed = LookupEmbedding(data, counter)
    nodes = [TextNode(id_=f"m{i}", text=data.texts[i]) for i in data.store_ids]
    index = VectorStoreIndex(nodes, embed_model=embed)
    assert counter.texts["documents"] == len(nodes)
    return index, embed, counter


def retrieved(index, data):
    """The retriever's top FETCH for the question, best first."""
    bundle = QueryBundle(data.question, embedding=[float(x) for x in data.query])
    return index.as_retriever(similarity_top_k=FETCH).retrieve(bundle), bundle


def expected(index, nodes, query, k, **options):
    """mempursuit.select on the store's vectors and the retriever's scores."""
    pool = np.array([index.vector_store.get(n.node.node_id) for n in nodes], np.float32)
    return mempursuit.select(
        np.asarray(query, np.float32), pool, k, relevance=[n.score for n in nodes], **options
    )


def check(out, nodes, sel):
    assert [n.node.node_id for n in out] == [nodes[i].node.node_id for i in sel.picks]
    meta = [n.node.metadata for n in out]
    assert [m["mempursuit"]["rank"] for m in meta] == list(range(len(sel.picks)))
    assert [m["mempursuit"]["score"] for m in meta] == sel.steps["score"].tolist()
    if sel.weights.shape[0]:
        assert [m["mempursuit"]["weight"] for m in meta] == sel.weights.tolist()
    else:
        assert all(m["mempursuit"]["weight"] is None for m in meta)
    # The retriever's scores are kept; the new keys stay out of the LLM's text.
    assert [n.score for n in out] == [nodes[i].score for i in sel.picks]
    for n, i in zip(out, sel.picks):
        assert n.node.get_content(metadata_mode=MetadataMode.LLM) == nodes[i].node.get_content(
            metadata_mode=MetadataMode.LLM
        )


def test_query_engine_reads_the_store_and_embeds_nothing(data, setup):
    index, embed, counter = setup
    nodes, _ = retrieved(index, data)
    # The default index returns nodes without their vectors.
    assert len(nodes) == FETCH and all(n.node.embedding is None for n in nodes)
    sel = expected(index, nodes, data.query, K)  # select's default method

    before = dict(counter.calls)
    pp = MemPursuitPostprocessor(top_n=K, vector_store=index)
    # as_query_engine(response_mode="no_text") would still resolve the default
    # LLM (OpenAI); build the engine from its parts, with a MockLLM.
    engine = RetrieverQueryEngine(
        retriever=index.as_retriever(similarity_top_k=FETCH),
        response_synthesizer=get_response_synthesizer(llm=MockLLM(), response_mode="compact"),
        node_postprocessors=[pp],
    )
    out = engine.query(data.question).source_nodes
    # One query embedding (the retriever's), no document embedded again.
    assert counter.calls["query"] == before["query"] + 1
    assert counter.calls["documents"] == before["documents"]
    assert len(out) == K
    check(out, nodes, sel)
    assert [n.node.node_id for n in out] != [n.node.node_id for n in nodes[:K]]


@pytest.mark.parametrize("method", mempursuit.METHODS)
def test_every_method_passes_through(data, setup, method):
    index, _, _ = setup
    nodes, bundle = retrieved(index, data)
    before = [(n.node.node_id, dict(n.node.metadata), n.score) for n in nodes]
    pp = MemPursuitPostprocessor(top_n=K, vector_store=index.vector_store, method=method)
    check(pp.postprocess_nodes(nodes, bundle), nodes, expected(index, nodes, data.query, K, method=method))
    assert [(n.node.node_id, n.node.metadata, n.score) for n in nodes] == before


def test_embed_model_fallback_and_node_vectors(data, setup):
    index, embed, counter = setup
    nodes, bundle = retrieved(index, data)
    sel = expected(index, nodes, data.query, K, method="mmr", mmr_lambda=0.4)
    # No store: the nodes are embedded again, in one batched call.
    before = dict(counter.texts), dict(counter.calls)
    pp = MemPursuitPostprocessor(top_n=K, embed_model=embed, method="mmr", mmr_lambda=0.4)
    check(pp.postprocess_nodes(nodes, bundle), nodes, sel)
    assert counter.texts["documents"] == before[0]["documents"] + FETCH
    assert counter.calls["documents"] == before[1]["documents"] + 1
    # A bundle without an embedding: the query is embedded with embed_model.
    check(pp.postprocess_nodes(nodes, query_str=data.question), nodes, sel)
    assert counter.calls["query"] == before[1]["query"] + 1
    # Nodes that carry their vectors need neither.
    carrying = [
        NodeWithScore(
            node=TextNode(
                id_=n.node.node_id,
                text=n.node.get_content(),
                embedding=index.vector_store.get(n.node.node_id),
            ),
            score=n.score,
        )
        for n in nodes
    ]
    check(
        MemPursuitPostprocessor(top_n=K, method="mmr", mmr_lambda=0.4).postprocess_nodes(carrying, bundle),
        nodes,
        sel,
    )


def test_to_dict_from_dict():
    pp = MemPursuitPostprocessor(top_n=3, method="centroid", gamma=0.5)
    assert pp.method_options == {"method": "centroid", "gamma": 0.5}
    d = pp.to_dict()
    assert {k: d[k] for k in ("top_n", "use_scores", "method_options")} == {
        "top_n": 3,
        "use_scores": True,
        "method_options": {"method": "centroid", "gamma": 0.5},
    }
    again = MemPursuitPostprocessor.from_dict(d)
    assert (again.top_n, again.method_options) == (3, {"method": "centroid", "gamma": 0.5})
    assert MemPursuitPostprocessor().method_options == {}  # select's default method


def test_bad_nodes_name_the_node(data, setup):
    index, _, _ = setup
    bundle = QueryBundle("q", embedding=[1.0, 0.0, 0.0])
    good = NodeWithScore(node=TextNode(id_="good", text="x", embedding=[1.0, 0.0, 0.0]), score=1.0)
    pp = MemPursuitPostprocessor(top_n=2)
    with pytest.raises(
        DocumentError, match=r'document 1 \(id "bare"\): has no embedding.*vector_store=index.vector_store'
    ) as e:
        pp.postprocess_nodes([good, NodeWithScore(node=TextNode(id_="bare", text="y"), score=0.5)], bundle)
    # Not in the store either.
    assert (e.value.kind, e.value.index, e.value.id, e.value.argument) == ("input", 1, "bare", "embedding")
    with pytest.raises(DocumentError, match=r'document 1 \(id "bare"\): has no embedding'):
        MemPursuitPostprocessor(top_n=2, vector_store=index).postprocess_nodes(
            [good, NodeWithScore(node=TextNode(id_="bare", text="y"), score=0.5)], bundle
        )
    short = NodeWithScore(node=TextNode(id_="short", text="y", embedding=[1.0, 0.0]), score=0.5)
    with pytest.raises(DocumentError, match=r'document 1 \(id "short"\): embedding has length 2, the query has length 3'):
        pp.postprocess_nodes([good, short], bundle)
    with pytest.raises(ValueError, match="query bundle has no embedding.*embed_model"):
        pp.postprocess_nodes([good], query_str="q")
    with pytest.raises(TypeError, match="^MemPursuitPostprocessor: unknown option 'similarity_top_k'"):
        MemPursuitPostprocessor(similarity_top_k=3)
    with pytest.raises(TypeError, match="'k' is set by the integration"):
        MemPursuitPostprocessor(k=3)
    # A bad value fails at construction, named by the postprocessor.
    with pytest.raises(mempursuit.MemPursuitError, match=r"^MemPursuitPostprocessor: option 'gamma' does not apply to method 'mmr'"):
        MemPursuitPostprocessor(method="mmr", gamma=0.3)
    with pytest.raises(mempursuit.MemPursuitError, match=r"^MemPursuitPostprocessor: MMR lambda 2 must be in \[0, 1\]"):
        MemPursuitPostprocessor(method="mmr", method_options={"mmr_lambda": 2.0})


# Cost budgets: cost(NodeWithScore) builds select's costs, cost_budget passes through.

BUDGET = 100  # words; binds on the fixture's pool (see budgeted)


def words(n):
    """A node's cost in words (a stand-in for a token count)."""
    return len(n.node.get_content().split())


@pytest.mark.parametrize("method", mempursuit.METHODS)
def test_unit_costs_pick_what_the_count_budget_picks(data, setup, method):
    index, _, _ = setup
    nodes, bundle = retrieved(index, data)
    pp = MemPursuitPostprocessor(
        top_n=FETCH, vector_store=index, method=method, cost=lambda n: 1, cost_budget=K
    )
    out = pp.postprocess_nodes(nodes, bundle)
    assert len(out) == K
    check(out, nodes, expected(index, nodes, data.query, K, method=method))


def test_word_costs_stay_within_the_budget(data, setup):
    index, embed, counter = setup
    nodes, bundle = retrieved(index, data)
    costs = [words(n) for n in nodes]
    sel = expected(index, nodes, data.query, FETCH, costs=costs, cost_budget=BUDGET)
    assert sel.stop_reason == "cost_budget" and sum(costs[i] for i in sel.picks) <= BUDGET
    plain = expected(index, nodes, data.query, len(sel.picks))
    assert sel.picks.tolist() != plain.picks.tolist(), "the budget skips a pick"
    seen = []

    def cost(n):
        assert isinstance(n, NodeWithScore)
        seen.append(n.node.node_id)
        return words(n)

    pp = MemPursuitPostprocessor(top_n=FETCH, vector_store=index, cost=cost, cost_budget=BUDGET)
    out = pp.postprocess_nodes(nodes, bundle)
    check(out, nodes, sel)
    assert sum(words(n) for n in out) <= BUDGET
    assert seen == [n.node.node_id for n in nodes]  # once per node, in input order
    # method_options holds the budget like any option; to_dict leaves the function out.
    assert pp.method_options == {"cost_budget": BUDGET}
    assert "cost" not in pp.to_dict()


def test_bad_costs_name_the_node(data, setup):
    index, embed, counter = setup
    nodes, bundle = retrieved(index, data)
    bad = nodes[4].node.node_id

    def pp(value):
        cost = lambda n: value() if n.node.node_id == bad else 1.0  # noqa: E731
        return MemPursuitPostprocessor(top_n=2, embed_model=embed, cost=cost, cost_budget=5)

    def boom():
        raise KeyError("tokens")

    before = dict(counter.calls)
    for value, text in [(boom, "cost\\(\\) raised KeyError: 'tokens'"), (lambda: -2.5, "cost -2.5 must be"), (lambda: float("nan"), "cost NaN must be")]:
        with pytest.raises(DocumentError, match=rf'document 4 \(id "{bad}"\): {text}') as e:
            pp(value).postprocess_nodes(nodes, bundle)
        assert (e.value.kind, e.value.index, e.value.id, e.value.argument) == ("input", 4, bad, "cost")
        if value is boom:  # cost() runs before any embedding call (its values are the layer's to check)
            assert counter.calls == before
    for kwargs, argument in [
        ({"cost": words}, "cost"),
        ({"method_options": {"cost_budget": 10}}, "cost_budget"),
        ({"costs": [1.0], "cost_budget": 3}, "costs"),
    ]:
        with pytest.raises(OptionError, match="^MemPursuitPostprocessor: ") as e:
            MemPursuitPostprocessor(**kwargs)
        assert (e.value.kind, e.value.argument) == ("option", argument)


# Errors are MemPursuitErrors with select's kinds (new-user trial of 2026-12-02, items 1-3, 7).


def test_errors_are_mempursuit_errors_with_their_kind():
    bundle = QueryBundle("q", embedding=[1.0, 1.0, 0.0])
    good = NodeWithScore(node=TextNode(id_="good", text="x", embedding=[1.0, 0.0, 0.0]), score=1.0)
    nan = NodeWithScore(node=TextNode(id_="nan", text="y", embedding=[0.0, float("nan"), 0.0]), score=0.5)
    with pytest.raises(mempursuit.MemPursuitError) as e:
        MemPursuitPostprocessor(top_n=2).postprocess_nodes([good, nan], bundle)
    assert type(e.value) is DocumentError and e.value.kind == "input"
    assert str(e.value) == 'MemPursuitPostprocessor: document 1 (id "nan"): embedding component 1 is NaN, not finite'
    assert (e.value.index, e.value.id, e.value.argument) == (1, "nan", "embedding")
    # A NaN score (NodeWithScore takes it): named with the node and the value.
    with pytest.raises(DocumentError) as e:
        MemPursuitPostprocessor(top_n=2).postprocess_nodes(
            [good, NodeWithScore(node=TextNode(id_="s", text="y", embedding=[0.0, 1.0, 0.0]), score=float("nan"))],
            bundle,
        )
    assert str(e.value).startswith('MemPursuitPostprocessor: document 1 (id "s"): similarity score NaN is not finite')
    assert (e.value.index, e.value.id, e.value.argument) == (1, "s", "score")
    assert e.value.kind == "input"
    # Unknown names: select's words, kind "option", still a TypeError.
    with pytest.raises(OptionError) as e:
        MemPursuitPostprocessor(top_n=3, mmr_lamda=0.3)
    assert isinstance(e.value, TypeError) and e.value.kind == "option"
    assert str(e.value).startswith(
        "MemPursuitPostprocessor: unknown option 'mmr_lamda' (options: " + ", ".join(mempursuit.OPTIONS) + "); "
    )
    with pytest.raises(OptionError, match=r"^MemPursuitPostprocessor: 'gamma' given twice"):
        MemPursuitPostprocessor(gamma=0.5, method_options={"gamma": 0.4})
    # The query bundle: missing, without an embedding, not numbers.
    with pytest.raises(mempursuit.MemPursuitError, match="query bundle has no embedding.*embed_model") as e:
        MemPursuitPostprocessor(top_n=2).postprocess_nodes([good], query_str="q")
    assert e.value.kind == "input"
    with pytest.raises(mempursuit.MemPursuitError) as e:
        MemPursuitPostprocessor(top_n=2).postprocess_nodes([good], QueryBundle("q", embedding=["a", "b", "c"]))
    assert str(e.value).startswith(
        "MemPursuitPostprocessor: the query embedding is ['a', 'b', 'c'] (list), not a vector of numbers"
    )
    assert (e.value.kind, e.value.argument) == ("input", "query")


def test_bad_settings_fail_at_construction_with_the_prefix():
    cases = [
        ({"top_n": -1}, "MemPursuitPostprocessor: top_n must be >= 0, got -1"),
        ({"top_n": "3"}, "MemPursuitPostprocessor: top_n must be an int, not str"),
        ({"top_n": 2.0}, "MemPursuitPostprocessor: top_n must be an int, not float"),
        ({"use_scores": "no"}, "MemPursuitPostprocessor: use_scores must be True or False, got 'no'"),
        ({"method": "pursuit", "gamma": [1]}, "MemPursuitPostprocessor: gamma must be a float or None, not list"),
        ({"cost_budget": 5}, "MemPursuitPostprocessor: a cost budget needs a cost function"),
    ]
    for kwargs, message in cases:
        with pytest.raises(OptionError) as e:
            MemPursuitPostprocessor(**kwargs)
        assert str(e.value).startswith(message), (kwargs, str(e.value))
        assert e.value.kind == "option"
    with pytest.raises(OptionError, match=r"^MemPursuitPostprocessor: method_options must be a dict of mempursuit.select options, got 'gamma'$"):
        MemPursuitPostprocessor(method_options="gamma")
    pp = MemPursuitPostprocessor(top_n=np.int64(3), use_scores=False)
    assert (pp.top_n, pp.use_scores) == (3, False) and type(pp.top_n) is int


def test_query_of_another_dimension_names_the_query():
    nodes = [
        NodeWithScore(node=TextNode(id_=f"n{i}", text=str(i), embedding=v), score=1.0 - i / 10)
        for i, v in enumerate([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    ]
    with pytest.raises(mempursuit.MemPursuitError) as e:
        MemPursuitPostprocessor(top_n=2).postprocess_nodes(nodes, QueryBundle("q", embedding=[1.0] * 10))
    assert not isinstance(e.value, DocumentError) and (e.value.kind, e.value.argument) == ("input", "query")
    assert str(e.value).startswith(
        "MemPursuitPostprocessor: the query embedding has 10 values, the documents' embeddings have 3"
    )


def test_exact_copies_count_once():
    """The documented behaviour of select's default: an embed model that
    gives every text the same vector (MockEmbedding) leaves one node, stop
    reason pool_exhausted; the copies are skipped."""
    from llama_index.core.embeddings import MockEmbedding

    nodes = [TextNode(id_=f"t{i}", text=t) for i, t in enumerate(["a b", "c d", "e f"])]
    index = VectorStoreIndex(nodes, embed_model=MockEmbedding(embed_dim=4))
    bundle = QueryBundle("q", embedding=[0.5, 0.5, 0.5, 0.5])
    found = index.as_retriever(similarity_top_k=3).retrieve(bundle)
    assert len(found) == 3
    out = MemPursuitPostprocessor(top_n=3, vector_store=index).postprocess_nodes(found, bundle)
    assert len(out) == 1
    pool = np.array([index.vector_store.get(n.node.node_id) for n in found], np.float32)
    sel = mempursuit.select(np.asarray(bundle.embedding, np.float32), pool, 3, relevance=[n.score for n in found])
    assert sel.stop_reason == "pool_exhausted" and len(sel.picks) == 1 and sel.skipped.tolist() == [1, 2]
    # Any other method takes all three.
    out = MemPursuitPostprocessor(top_n=3, vector_store=index, method="topk").postprocess_nodes(found, bundle)
    assert len(out) == 3
