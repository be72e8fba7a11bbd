"""The async paths (issue 27, item 4): Haystack ``run_async`` (in an
``AsyncPipeline``), LlamaIndex ``apostprocess_nodes`` and LangChain
``acompress_documents`` give what their sync twins give, and await the
async embedding calls: the embedders here count their async calls and fail
on any sync embedding call, so a blocking call in the event loop is a test
failure. Run with ``asyncio.run`` (no pytest plugin); offline, on the mini
fixture's precomputed embeddings (see _data.py)."""

import asyncio
from typing import Any, List

import pytest

from _data import FETCH, K, Counter, Data, framework


@pytest.fixture(scope="module")
def data():
    return Data()


class _Blocked(AssertionError):
    """A sync embedding call on the async path."""


# --- LangChain ---------------------------------------------------------------


def test_langchain_acompress_documents_awaits_the_embeddings(data):
    framework("langchain_core", "'./python[langchain]'")
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import InMemoryVectorStore

    from mempursuit.integrations.langchain import MemPursuitCompressor

    class AsyncOnly(Embeddings):
        """The fixture's vectors through the async methods only."""

        def __init__(self):
            self.counter = Counter()
            self.allow_sync = False

        def embed_documents(self, texts: List[str]) -> List[List[float]]:
            if not self.allow_sync:
                raise _Blocked("embed_documents called on the async path")
            return [data.embed(t) for t in texts]

        def embed_query(self, text: str) -> List[float]:
            if not self.allow_sync:
                raise _Blocked("embed_query called on the async path")
            return data.embed(text)

        async def aembed_documents(self, texts: List[str]) -> List[List[float]]:
            await asyncio.sleep(0)  # a real client yields to the loop here
            self.counter.add("documents", len(texts))
            return [data.embed(t) for t in texts]

        async def aembed_query(self, text: str) -> List[float]:
            await asyncio.sleep(0)
            self.counter.add("query", 1)
            return data.embed(text)

    emb = AsyncOnly()
    emb.allow_sync = True
    store = InMemoryVectorStore(emb)
    store.add_texts([data.texts[i] for i in data.store_ids], ids=[f"m{i}" for i in data.store_ids])
    emb.allow_sync = False
    hits = [d for d, _ in store.similarity_search_with_score_by_vector(data.embed(data.question), k=FETCH)]

    # Vectors read from the store: one awaited query embedding, no document embedding.
    comp = MemPursuitCompressor(vector_store=store, embeddings=emb, k=K)
    out = asyncio.run(comp.acompress_documents(hits, data.question))
    assert emb.counter.calls == {"query": 1, "documents": 0}
    emb.allow_sync = True
    sync = comp.compress_documents(hits, data.question)
    emb.allow_sync = False
    assert [d.id for d in out] == [d.id for d in sync] and len(out) == K
    assert [d.metadata for d in out] == [d.metadata for d in sync]

    # Documents the store does not hold: embedded again in one awaited call.
    bare = [Document(page_content=d.page_content, id=f"x{i}") for i, d in enumerate(hits)]
    emb.counter = Counter()
    out = asyncio.run(comp.acompress_documents(bare, data.question))
    assert emb.counter.calls == {"query": 1, "documents": 1}
    assert emb.counter.texts == {"query": 1, "documents": FETCH}
    assert [d.page_content for d in out] == [d.page_content for d in sync]

    # The same errors: a document with no vector anywhere (no embeddings= given).
    from mempursuit.integrations import DocumentError

    # End to end: ContextualCompressionRetriever.ainvoke (langchain-classic)
    # awaits the store's search and the compressor, all embeddings async.
    framework("langchain_classic", "langchain-classic")
    from langchain_classic.retrievers import ContextualCompressionRetriever

    retriever = ContextualCompressionRetriever(
        base_retriever=store.as_retriever(search_kwargs={"k": FETCH}),
        base_compressor=MemPursuitCompressor(vector_store=store, k=K),
    )
    emb.counter = Counter()
    got = asyncio.run(retriever.ainvoke(data.question))
    assert [d.id for d in got] == [d.id for d in sync]
    assert emb.counter.calls == {"query": 2, "documents": 0}  # the store's search, the compressor

    comp = MemPursuitCompressor(vector_store=store, k=K)
    with pytest.raises(DocumentError, match="^MemPursuitCompressor: .*pass embeddings=") as e:
        asyncio.run(comp.acompress_documents(bare, data.question))
    assert (e.value.kind, e.value.index, e.value.id, e.value.argument) == ("input", 0, "x0", "embedding")
    assert asyncio.run(comp.acompress_documents([], data.question)) == []


def test_langchain_amempursuit_search_by_vector_runs_off_the_loop(data):
    framework("langchain_core", "'./python[langchain]'")
    import threading

    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import InMemoryVectorStore

    from mempursuit.integrations.langchain import amempursuit_search_by_vector, mempursuit_search_by_vector

    threads = []

    class Store(InMemoryVectorStore):
        def similarity_search_with_score_by_vector(self, embedding, k=4, **kwargs):
            threads.append(threading.get_ident())
            return super().similarity_search_with_score_by_vector(embedding, k=k, **kwargs)

    class Lookup(Embeddings):
        def embed_documents(self, texts):
            return [data.embed(t) for t in texts]

        def embed_query(self, text):
            return data.embed(text)

    store = Store(Lookup())
    store.add_texts([data.texts[i] for i in data.store_ids], ids=[f"m{i}" for i in data.store_ids])
    q = data.embed(data.question)

    async def main():
        loop_thread = threading.get_ident()
        out = await amempursuit_search_by_vector(store, q, K, FETCH, method="mmr", mmr_lambda=0.5)
        return loop_thread, out

    loop_thread, out = asyncio.run(main())
    sync = mempursuit_search_by_vector(store, q, K, FETCH, method="mmr", mmr_lambda=0.5)
    assert [d.id for d in out] == [d.id for d in sync] and len(out) == K
    # The store's search ran in the executor, not on the event loop's thread.
    assert len(threads) == 2 and threads[0] != loop_thread


# --- LlamaIndex --------------------------------------------------------------


def _llama_embedding(data):
    framework("llama_index.core", "'./python[llama-index]'")
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.bridge.pydantic import PrivateAttr

    class AsyncOnly(BaseEmbedding):
        _counter: Any = PrivateAttr()
        _allow_sync: bool = PrivateAttr(default=False)

        def __init__(self):
            super().__init__(model_name="async-lookup", embed_batch_size=100)
            self._counter = Counter()

        def _sync(self, what):
            if not self._allow_sync:
                raise _Blocked(f"{what} called on the async path")

        def _get_query_embedding(self, query: str) -> List[float]:
            self._sync("_get_query_embedding")
            return data.embed(query)

        def _get_text_embedding(self, text: str) -> List[float]:
            self._sync("_get_text_embedding")
            return data.embed(text)

        def _get_text_embeddings(self, texts: List[str]) -> List[List[float]]:
            self._sync("_get_text_embeddings")
            return [data.embed(t) for t in texts]

        async def _aget_query_embedding(self, query: str) -> List[float]:
            await asyncio.sleep(0)
            self._counter.add("query", 1)
            return data.embed(query)

        async def _aget_text_embedding(self, text: str) -> List[float]:
            return (await self._aget_text_embeddings([text]))[0]

        async def _aget_text_embeddings(self, texts: List[str]) -> List[List[float]]:
            await asyncio.sleep(0)
            self._counter.add("documents", len(texts))
            return [data.embed(t) for t in texts]

    return AsyncOnly()


def test_llama_index_apostprocess_nodes_awaits_the_embeddings(data):
    framework("llama_index.core", "'./python[llama-index]'")
    from llama_index.core import VectorStoreIndex
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

    from mempursuit.integrations.llama_index import MemPursuitPostprocessor

    embed = _llama_embedding(data)
    embed._allow_sync = True
    nodes = [TextNode(id_=f"m{i}", text=data.texts[i]) for i in data.store_ids]
    index = VectorStoreIndex(nodes, embed_model=embed)
    bundle = QueryBundle(data.question, embedding=data.embed(data.question))
    hits = index.as_retriever(similarity_top_k=FETCH).retrieve(bundle)
    embed._allow_sync = False

    pp = MemPursuitPostprocessor(top_n=K, vector_store=index, embed_model=embed)
    # A query bundle without an embedding: the query is embedded, awaited;
    # the vectors come from the store (no document embedding).
    out = asyncio.run(pp.apostprocess_nodes(hits, QueryBundle(data.question)))
    assert embed._counter.calls == {"query": 1, "documents": 0}
    sync = pp.postprocess_nodes(hits, bundle)
    assert [n.node.node_id for n in out] == [n.node.node_id for n in sync] and len(out) == K
    assert [n.node.metadata for n in out] == [n.node.metadata for n in sync]

    # Nodes the store does not hold: one awaited batch over them.
    bare = [
        NodeWithScore(node=TextNode(id_=f"x{i}", text=n.node.get_content()), score=n.score)
        for i, n in enumerate(hits)
    ]
    embed._counter = Counter()
    out = asyncio.run(pp.apostprocess_nodes(bare, bundle))
    assert embed._counter.calls == {"query": 0, "documents": 1}
    assert embed._counter.texts["documents"] == FETCH
    assert [n.node.get_content() for n in out] == [n.node.get_content() for n in sync]

    # In a query engine's aquery (a MockLLM; the engine built from its parts,
    # as in test_llama_index.py): LlamaIndex's async retriever does not set
    # the bundle's embedding, so the postprocessor embeds the query again
    # with the index's embed model (vector_store=index), awaited; nothing is
    # embedded synchronously, no node embedded again.
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine
    from llama_index.core.response_synthesizers import get_response_synthesizer

    engine = RetrieverQueryEngine(
        retriever=index.as_retriever(similarity_top_k=FETCH),
        response_synthesizer=get_response_synthesizer(llm=MockLLM(), response_mode="compact"),
        node_postprocessors=[MemPursuitPostprocessor(top_n=K, vector_store=index)],
    )
    # Without embed_model and without an index, such a bundle is an error
    # that says what to pass.
    import mempursuit

    with pytest.raises(
        mempursuit.MemPursuitError, match=r"pass embed_model=\.\.\. \(or vector_store=index\)"
    ) as e:
        asyncio.run(MemPursuitPostprocessor(top_n=K).apostprocess_nodes(hits, QueryBundle(data.question)))
    assert e.value.kind == "input"
    embed._counter = Counter()
    source = asyncio.run(engine.aquery(data.question)).source_nodes
    assert embed._counter.calls == {"query": 2, "documents": 0}
    assert [n.node.node_id for n in source] == [n.node.node_id for n in sync]


# --- Haystack ----------------------------------------------------------------


def test_haystack_run_async_in_an_async_pipeline(data):
    haystack = framework("haystack", "'./python[haystack]'")
    from haystack import Document
    from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    from mempursuit.integrations.haystack import MemPursuitRanker

    # Haystack 2.x runs components' run_async in AsyncPipeline; Haystack 3 in
    # Pipeline.run_async.
    pipeline_class = getattr(haystack, "AsyncPipeline", haystack.Pipeline)
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
    sync = MemPursuitRanker(top_k=K).run(documents=docs, query_embedding=q)["documents"]

    ranker = MemPursuitRanker(top_k=K)
    assert ranker.__haystack_supports_async__
    calls = []
    sync_run, async_run = ranker.run, ranker.run_async

    def run_spy(**kwargs):
        calls.append("run")
        return sync_run(**kwargs)

    async def run_async_spy(**kwargs):
        calls.append("run_async")
        return await async_run(**kwargs)

    ranker.run, ranker.run_async = run_spy, run_async_spy
    p = pipeline_class()
    p.add_component("retriever", InMemoryEmbeddingRetriever(store, top_k=FETCH, return_embedding=True))
    p.add_component("ranker", ranker)
    p.connect("retriever.documents", "ranker.documents")
    out = asyncio.run(p.run_async({"query_embedding": q}))["ranker"]["documents"]
    # The pipeline awaited run_async, which reuses run's selection (same
    # result, same errors).
    assert calls == ["run_async", "run"]
    assert [d.id for d in out] == [d.id for d in sync] and len(out) == K
    assert [d.meta for d in out] == [d.meta for d in sync]
    direct = asyncio.run(async_run(documents=docs, query_embedding=q, top_k=2))["documents"]
    two = MemPursuitRanker(top_k=K).run(documents=docs, query_embedding=q, top_k=2)["documents"]
    assert [d.id for d in direct] == [d.id for d in two] and len(direct) == 2
