"""Round-trips (issue 27, item 5): every component's settings are plain
Python values after construction (NumPy scalars converted, NumPy arrays
refused), and Haystack ``Pipeline.dumps``/``loads`` and LlamaIndex
``to_json``/``from_json`` give back a component that selects the same, with
every option of ``mempursuit.select`` set (two settings cover them all:
paper mode with everything that applies to it, and MMR). Offline, on the
mini fixture (see _data.py)."""

import inspect
import json

import numpy as np
import pytest

from _data import FETCH, Data, framework

import mempursuit

# Every option but mmr_lambda, for paper mode (pursuit with a finite ridge),
# as NumPy scalars where the option is a number, a bool or a name.
PAPER = {
    "method": np.str_("pursuit"),
    "gamma": np.float32(0.5),
    "ridge": np.float64(1e-6),
    "raw_relevance": np.bool_(False),
    "pool_order": np.bool_(False),
    "cost_budget": np.int64(120),
    "adaptive": np.bool_(False),
    "at_pool_optimum": np.str_("stop"),
    "optimum_tolerance": np.float32(1e-6),
    "dependent_picks": "skip",
    "normalization": "cosine",
    "invalid": np.str_("exclude"),
    "storage": np.str_("f32"),
}
MMR = {"method": "mmr", "mmr_lambda": np.float32(0.25), "cost_budget": np.float64(80.5)}
SETTINGS = {"paper": PAPER, "mmr": MMR}


def plain(options):
    return {k: v.item() if isinstance(v, np.generic) else v for k, v in options.items()}


def assert_plain(values):
    """Every value is a bool, int, float or str of exactly that type (not a
    NumPy scalar, not a subclass), and JSON round-trips them unchanged."""
    for name, value in values.items():
        assert type(value) in (bool, int, float, str), (name, type(value))
    assert json.loads(json.dumps(values)) == values


def test_the_settings_cover_every_option():
    assert set(PAPER) | set(MMR) == set(mempursuit.OPTIONS)


@pytest.fixture(scope="module")
def data():
    return Data()


def words(item):
    """A module-level cost function (token count stand-in): saved by its
    import path."""
    content = getattr(item, "content", None) or getattr(item, "page_content", None)
    if content is None:
        content = item.node.get_content()
    return len(content.split())


# --- Haystack ----------------------------------------------------------------


@pytest.mark.parametrize("name", list(SETTINGS))
def test_haystack_pipeline_dumps_loads(data, name):
    framework("haystack", "'./python[haystack]'")
    from haystack import Document, Pipeline
    from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    from mempursuit.integrations.haystack import MemPursuitRanker

    options = SETTINGS[name]
    ranker = MemPursuitRanker(top_k=np.int64(6), use_scores=np.bool_(True), cost=words, **options)
    assert (type(ranker.top_k), type(ranker.use_scores)) == (int, bool)
    assert ranker.options == plain(options)
    assert_plain(ranker.options)

    p = Pipeline()
    p.add_component("ranker", ranker)
    text = p.dumps()
    allowed = ["mempursuit.integrations.haystack", __name__]
    if "allowed_modules" in inspect.signature(Pipeline.loads).parameters:
        # Haystack 3 imports only allowed modules: the ranker's and the
        # cost function's (saved by import path).
        from haystack.core.errors import DeserializationError

        with pytest.raises(DeserializationError, match=__name__):
            Pipeline.loads(text, allowed_modules=allowed[:1])
        loaded = Pipeline.loads(text, allowed_modules=allowed)
    else:
        loaded = Pipeline.loads(text)
    again = loaded.get_component("ranker")
    assert again.to_dict() == ranker.to_dict()
    assert again.cost is words

    store = InMemoryDocumentStore(embedding_similarity_function="cosine")
    store.write_documents(
        [
            Document(id=f"m{i}", content=data.texts[i], embedding=data.embed(data.texts[i]))
            for i in data.store_ids
        ]
    )
    q = data.embed(data.question)
    docs = InMemoryEmbeddingRetriever(store, top_k=FETCH, return_embedding=True).run(query_embedding=q)[
        "documents"
    ]
    out = ranker.run(documents=docs, query_embedding=q)["documents"]
    assert [d.id for d in again.run(documents=docs, query_embedding=q)["documents"]] == [d.id for d in out]
    assert 0 < len(out) <= 6 and sum(words(d) for d in out) <= options["cost_budget"]


def test_haystack_refuses_numpy_arrays():
    framework("haystack", "'./python[haystack]'")
    from mempursuit.integrations import OptionError
    from mempursuit.integrations.haystack import MemPursuitRanker

    with pytest.raises(OptionError, match="MemPursuitRanker"):
        MemPursuitRanker(method="centroid", gamma=np.array([0.5, 0.7]))


# --- LlamaIndex --------------------------------------------------------------


@pytest.mark.parametrize("name", list(SETTINGS))
def test_llama_index_to_json_from_json(data, name):
    framework("llama_index.core", "'./python[llama-index]'")
    from llama_index.core.schema import NodeWithScore, TextNode

    from mempursuit.integrations import OptionError
    from mempursuit.integrations.llama_index import MemPursuitPostprocessor

    options = SETTINGS[name]
    pp = MemPursuitPostprocessor(top_n=np.int64(6), use_scores=np.bool_(True), cost=words, **options)
    assert (type(pp.top_n), type(pp.use_scores)) == (int, bool)
    assert pp.method_options == plain(options)
    assert_plain(pp.method_options)

    text = pp.to_json()
    saved = json.loads(text)
    assert {k: saved[k] for k in ("top_n", "use_scores", "method_options", "class_name")} == {
        "top_n": 6,
        "use_scores": True,
        "method_options": plain(options),
        "class_name": "MemPursuitPostprocessor",
    }
    # cost (like vector_store and embed_model) is not saved: given back to
    # from_json; without it the saved cost_budget is refused, not dropped.
    with pytest.raises(OptionError, match="^MemPursuitPostprocessor: ") as e:
        MemPursuitPostprocessor.from_json(text)
    assert (e.value.kind, e.value.argument) == ("option", "cost_budget")
    again = MemPursuitPostprocessor.from_json(text, cost=words)
    assert again.to_dict() == pp.to_dict()

    q = np.asarray(data.query, np.float32)
    order = np.argsort(-(data.vectors[data.store_ids] @ q), kind="stable")[:FETCH]
    nodes = [
        NodeWithScore(
            node=TextNode(
                id_=f"m{data.store_ids[i]}",
                text=data.texts[data.store_ids[i]],
                embedding=data.embed(data.texts[data.store_ids[i]]),
            ),
            score=float(data.vectors[data.store_ids[i]] @ q),
        )
        for i in order
    ]
    from llama_index.core.schema import QueryBundle

    bundle = QueryBundle(data.question, embedding=[float(x) for x in q])
    out = pp.postprocess_nodes(nodes, bundle)
    assert [n.node.node_id for n in again.postprocess_nodes(nodes, bundle)] == [n.node.node_id for n in out]
    assert 0 < len(out) <= 6 and sum(words(n) for n in out) <= options["cost_budget"]


# --- LangChain and Mem0: settings are plain values ----------------------------


@pytest.mark.parametrize("name", list(SETTINGS))
def test_langchain_settings_are_plain(name):
    framework("langchain_core", "'./python[langchain]'")
    from mempursuit.integrations.langchain import MemPursuitCompressor

    options = SETTINGS[name]
    comp = MemPursuitCompressor(k=np.int64(6), cost=words, **options)
    assert type(comp.k) is int and comp.method_options == plain(options)
    assert_plain(comp.method_options)
    saved = comp.model_dump(include={"k", "score_key", "embedding_key", "method_options"})
    assert json.loads(json.dumps(saved)) == saved
    again = MemPursuitCompressor(**saved, cost=words)
    assert again.method_options == comp.method_options and again.k == 6


@pytest.mark.parametrize("name", list(SETTINGS))
def test_mem0_settings_are_plain_and_its_config_round_trips(name):
    import sys

    if sys.version_info < (3, 10):
        pytest.skip("mem0ai needs Python >= 3.10")
    framework("mem0", "'./python[mem0]'")
    from mempursuit.integrations.mem0 import MemPursuitReranker, MemPursuitRerankerConfig

    options = SETTINGS[name]
    r = MemPursuitReranker(k=np.int64(6), use_scores=np.bool_(True), cost=words, **options)
    assert (type(r.k), type(r.use_scores)) == (int, bool) and r.options == plain(options)
    assert_plain(r.options)
    # Through Mem0's config class (what a Mem0 config's "reranker" holds), as JSON.
    cfg = MemPursuitRerankerConfig(k=6, **plain(options))
    again = MemPursuitReranker(
        MemPursuitRerankerConfig.model_validate_json(cfg.model_dump_json()), cost=words
    )
    assert (again.k, again.use_scores, again.options) == (6, True, plain(options))
