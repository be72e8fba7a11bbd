"""LlamaIndex: :class:`MemPursuitPostprocessor`, a node postprocessor that
reranks the retrieved nodes with :func:`mempursuit.select`, using the
vectors the index's vector store already holds.

Needs ``llama-index-core`` (``pip install "mempursuit[llama-index]"``)::

    from mempursuit.integrations.llama_index import MemPursuitPostprocessor

    pp = MemPursuitPostprocessor(top_n=5, vector_store=index.vector_store)
    engine = index.as_query_engine(similarity_top_k=30, node_postprocessors=[pp])

A token budget instead of (or as well as) a count:
``MemPursuitPostprocessor(top_n=30, cost=count_tokens, cost_budget=512, ...)``
with ``count_tokens(node_with_score)`` returning the node's token count.
"""

from typing import Any, Callable, Dict, List, Optional, Tuple

import mempursuit

try:
    from llama_index.core.bridge.pydantic import Field, PrivateAttr
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        'mempursuit.integrations.llama_index needs llama-index-core: pip install "mempursuit[llama-index]"'
    ) from e

from . import _common

__all__ = ["MemPursuitPostprocessor"]

_OWNER = "MemPursuitPostprocessor"


def _store_vectors(store: Any, ids: List[str]) -> Dict[str, List[float]]:
    """The vectors ``store`` holds for ``ids`` (those it has): through
    ``store.get(id)`` (``SimpleVectorStore``: a lookup in its data), else
    ``store.get_nodes(node_ids=...)`` for stores that keep whole nodes."""
    if store is None or not ids:
        return {}
    found: Dict[str, List[float]] = {}
    get = getattr(store, "get", None)
    if callable(get):
        for i in ids:
            try:
                v = get(i)
            except (KeyError, NotImplementedError):
                continue
            if v is not None:
                found[i] = v
        return found
    get_nodes = getattr(store, "get_nodes", None)
    if callable(get_nodes):
        try:
            nodes = get_nodes(node_ids=list(ids))
        except NotImplementedError:
            return found
        for n in nodes:
            if n.embedding is not None:
                found[n.node_id] = n.embedding
    return found


def _texts(nodes: List[NodeWithScore], positions: List[int]) -> List[str]:
    """The text of the nodes at ``positions`` as the index embedded it
    (``MetadataMode.EMBED``)."""
    return [nodes[i].node.get_content(metadata_mode=MetadataMode.EMBED) for i in positions]


class MemPursuitPostprocessor(BaseNodePostprocessor):
    """Reranks nodes with MemPursuit: picks ``top_n`` of them, one at a time,
    each the node that best covers what the picks so far leave out of the
    query (:func:`mempursuit.select`).

    The query vector is ``query_bundle.embedding`` (the retriever sets it);
    a node's vector is ``node.embedding`` when the node carries one, else
    the one ``vector_store`` holds for its id (a ``VectorStoreIndex``'s
    default ``SimpleVectorStore`` strips the vectors from the nodes it
    returns but keeps them: ``store.get(node_id)``; stores that keep whole
    nodes are asked through ``get_nodes``). Only when neither has it, and
    ``embed_model`` is given, is the node embedded again, at the cost of one
    batched ``get_text_embedding_batch`` call over the missing nodes' text
    (``MetadataMode.EMBED``, as the index embedded it); ``embed_model``
    (else, when ``vector_store`` is a ``VectorStoreIndex``, the index's
    embed model) also embeds a query bundle that has no embedding: one more
    query embedding call, in ``aquery`` and ``apostprocess_nodes``, whose
    retrievers do not set the bundle's embedding. Node scores, when
    every node has one, are passed as ``relevance`` (by rank, any scale;
    ``use_scores=False`` turns that off).

    The result is the picked nodes in pick order, as copies whose
    ``metadata`` gains the record ``metadata["mempursuit"] = {"rank",
    "weight", "score", "residual_sq"}`` (see :mod:`mempursuit.integrations`);
    that key is excluded from the text the LLM and the embedder see.
    ``NodeWithScore.score`` keeps the retriever's score.

    Any keyword of :func:`mempursuit.select` other than query, candidates,
    k and relevance can be given by name (``method="mmr"``,
    ``gamma=0.7``, ``cost_budget=512``, ...) and is passed through
    unchanged (kept in ``method_options``); what is not given takes
    ``select``'s default.

    ``cost`` with ``cost_budget``: a budget in tokens (or any cost) instead
    of, or as well as, ``top_n``. ``cost`` is a function of one
    ``NodeWithScore`` (what the postprocessor receives: ``n.node``,
    ``n.score``, ``n.get_content()``) returning its cost, a finite number
    >= 0 (e.g. its token count), called once per input node in input
    order, before any embedding call, to build ``mempursuit.select``'s
    ``costs``; ``cost_budget`` is the most the returned nodes may cost in
    total. One without the other is an
    :class:`~mempursuit.integrations.OptionError` at construction. A pick
    that no longer fits is skipped, the selection ends when nothing fits;
    ``top_n`` still caps the count. A cost function that raises or returns
    a negative, NaN or non-number value is a
    :class:`~mempursuit.integrations.DocumentError` naming the node. Like
    ``vector_store`` and ``embed_model``, ``cost`` is not serialized
    (``to_dict``, ``to_json``): give it back when loading,
    ``MemPursuitPostprocessor.from_json(text, cost=count_tokens,
    vector_store=index)`` (a saved ``cost_budget`` without ``cost`` is an
    ``OptionError``, never dropped).

    Settings are checked at construction, as ``select`` checks them: an
    unknown option name, a ``top_n`` that is not an int >= 0, a
    ``use_scores`` that is not True or False, or a value of the wrong type
    is an :class:`~mempursuit.integrations.OptionError`, a value ``select``
    rejects its ``MemPursuitError``, both of kind ``"option"`` and prefixed
    ``MemPursuitPostprocessor:``. At run time a node that cannot be used
    (no vector, another dimension than the other nodes', a non-finite
    element or score) is a :class:`~mempursuit.integrations.DocumentError`
    naming it, a query embedding that cannot be used (not a vector of
    numbers, not finite, another dimension than the nodes') a
    ``MemPursuitError`` naming the query, both of kind ``"input"``.
    """

    top_n: int = Field(default=5, ge=0, description="The budget K: at most this many nodes come back.")
    use_scores: bool = Field(default=True, description="Pass the nodes' scores as relevance.")
    method_options: Dict[str, Any] = Field(
        default_factory=dict, description="Keywords of mempursuit.select, passed through unchanged."
    )
    vector_store: Optional[Any] = Field(
        default=None,
        exclude=True,
        description="The vector store (or the VectorStoreIndex) holding the nodes' vectors.",
    )
    embed_model: Optional[Any] = Field(
        default=None,
        exclude=True,
        description="Embeds the nodes whose vectors cannot be found (a cost: one batched call).",
    )
    cost: Optional[Callable[[NodeWithScore], float]] = Field(
        default=None,
        exclude=True,
        description="Each node's cost (e.g. its token count), for the cost_budget option.",
    )

    # The embed model of the VectorStoreIndex given as vector_store: embeds
    # the query when the bundle has none and embed_model is not given
    # (LlamaIndex's async retrievers do not set the caller's bundle's
    # embedding); never the nodes.
    _index_embed_model: Any = PrivateAttr(default=None)

    def __init__(self, **data: Any) -> None:
        fields = type(self).model_fields
        options = {name: data.pop(name) for name in list(data) if name not in fields}
        given = _common.method_options(_OWNER, data.pop("method_options", None))
        for name in options:
            if name in given:
                raise _common.OptionError(f"{_OWNER}: '{name}' given twice (in method_options and by name)")
        if "top_n" in data:
            data["top_n"] = _common.budget(_OWNER, "top_n", data["top_n"])
        if "use_scores" in data:
            data["use_scores"] = _common.flag(_OWNER, "use_scores", data["use_scores"])
        data["method_options"] = _common.select_options(_OWNER, {**given, **options})
        _common.check_cost(_OWNER, data.get("cost"))
        _common.check_values(
            _OWNER,
            data["method_options"],
            None if data.get("use_scores", True) else False,
            data.get("cost") is not None,
            list(fields),
        )
        store = data.get("vector_store")
        query_model = None
        if store is not None and hasattr(store, "vector_store"):
            data["vector_store"] = store.vector_store  # a VectorStoreIndex
            query_model = getattr(store, "_embed_model", None)
        super().__init__(**data)
        self._index_embed_model = query_model

    @classmethod
    def class_name(cls) -> str:
        return "MemPursuitPostprocessor"

    def _query_embedding(self, query_bundle: Optional[QueryBundle]) -> Tuple[List[float], str]:
        """The query vector and what to call it in errors."""
        if query_bundle is None:
            raise mempursuit.MemPursuitError(
                f"{_OWNER}: needs a query bundle (postprocess_nodes(nodes, query_bundle))", "input"
            )
        if query_bundle.embedding is not None:
            return query_bundle.embedding, "query_bundle.embedding"
        model = self._query_model()
        vector: List[float] = model.get_agg_embedding_from_queries(query_bundle.embedding_strs)
        return vector, "the query's embedding (embed_model)"

    async def _aquery_embedding(self, query_bundle: Optional[QueryBundle]) -> Tuple[List[float], str]:
        """:meth:`_query_embedding` with the embedding call awaited."""
        if query_bundle is None or query_bundle.embedding is not None:
            return self._query_embedding(query_bundle)
        model = self._query_model()
        vector: List[float] = await model.aget_agg_embedding_from_queries(query_bundle.embedding_strs)
        return vector, "the query's embedding (embed_model)"

    def _query_model(self) -> Any:
        """What embeds a query bundle without an embedding: ``embed_model``,
        else the embed model of the index given as ``vector_store``."""
        model = self.embed_model if self.embed_model is not None else self._index_embed_model
        if model is None:
            raise mempursuit.MemPursuitError(
                f"{_OWNER}: the query bundle has no embedding (sync retrievers set it); pass "
                "embed_model=... (or vector_store=index) to embed the query here",
                "input",
            )
        return model

    def _postprocess_nodes(
        self,
        nodes: List[NodeWithScore],
        query_bundle: Optional[QueryBundle] = None,
    ) -> List[NodeWithScore]:
        query, _ = self._query_embedding(query_bundle)
        ids, costs, vectors, missing = self._known(nodes)
        if missing and self.embed_model is not None:
            fresh = self.embed_model.get_text_embedding_batch(_texts(nodes, missing))
            for i, v in zip(missing, fresh):
                vectors[i] = v
        return self._select(nodes, query, ids, costs, vectors)

    async def _apostprocess_nodes(
        self,
        nodes: List[NodeWithScore],
        query_bundle: Optional[QueryBundle] = None,
    ) -> List[NodeWithScore]:
        """:meth:`_postprocess_nodes` for an event loop
        (``apostprocess_nodes``): the embedding calls are awaited
        (``aget_agg_embedding_from_queries`` for a query bundle without an
        embedding, one ``aget_text_embedding_batch`` for nodes whose
        vectors cannot be found), never the blocking ones; the selection
        itself (the same code as :meth:`_postprocess_nodes`) runs inline
        (milliseconds: P = 200, d = 1536). Same result and errors."""
        query, _ = await self._aquery_embedding(query_bundle)
        ids, costs, vectors, missing = self._known(nodes)
        if missing and self.embed_model is not None:
            fresh = await self.embed_model.aget_text_embedding_batch(_texts(nodes, missing))
            for i, v in zip(missing, fresh):
                vectors[i] = v
        return self._select(nodes, query, ids, costs, vectors)

    def _known(self, nodes: List[NodeWithScore]) -> Tuple[List[str], List[Any], List[Optional[Any]], List[int]]:
        """The nodes' ids, costs (before any embedding call), vectors as
        far as the nodes and the vector store hold them, and the positions
        still without one."""
        ids = [n.node.node_id for n in nodes]
        costs = _common.costs_of(_OWNER, self.cost, nodes, ids)
        vectors: List[Optional[Any]] = [n.node.embedding for n in nodes]
        missing = [i for i, v in enumerate(vectors) if v is None]
        held = _store_vectors(self.vector_store, [ids[i] for i in missing])
        for i in missing:
            vectors[i] = held.get(ids[i])
        return ids, costs, vectors, [i for i, v in enumerate(vectors) if v is None]

    def _select(
        self,
        nodes: List[NodeWithScore],
        query: List[float],
        ids: List[str],
        costs: List[Any],
        vectors: List[Optional[Any]],
    ) -> List[NodeWithScore]:
        """The selection the sync and async paths share."""
        specs = [
            # A retriever's node score is a similarity (higher is better).
            _common.document(ids[i], vectors[i], n.score if self.use_scores else None, "similarity", costs[i])
            for i, n in enumerate(nodes)
        ]
        picks = _common.select(
            _OWNER,
            query,
            specs,
            self.top_n,
            self.method_options,
            "the node carries no embedding and the vector store holds none for its id: pass "
            "vector_store=index.vector_store (or the index), or embed_model=... to embed it again",
        )
        out = []
        for i, meta in picks:
            node = nodes[i].node
            keys = list(meta)
            copy = node.model_copy(
                update={
                    "metadata": {**node.metadata, **meta},
                    "excluded_llm_metadata_keys": [
                        *node.excluded_llm_metadata_keys,
                        *(k for k in keys if k not in node.excluded_llm_metadata_keys),
                    ],
                    "excluded_embed_metadata_keys": [
                        *node.excluded_embed_metadata_keys,
                        *(k for k in keys if k not in node.excluded_embed_metadata_keys),
                    ],
                }
            )
            out.append(NodeWithScore(node=copy, score=nodes[i].score))
        return out
