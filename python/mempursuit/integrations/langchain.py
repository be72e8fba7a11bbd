"""LangChain: :class:`MemPursuitCompressor`, a document compressor for a
``ContextualCompressionRetriever``, and :func:`mempursuit_search_by_vector`,
a vector-store search beside ``max_marginal_relevance_search_by_vector``;
both select with :func:`mempursuit.select` on the vectors the store holds.

Needs ``langchain-core`` (``pip install "mempursuit[langchain]"``;
``ContextualCompressionRetriever`` itself is in ``langchain-classic``, or in
``langchain`` before 1.0)::

    from mempursuit.integrations.langchain import MemPursuitCompressor, mempursuit_search_by_vector

    docs = mempursuit_search_by_vector(store, query_vector, k=4, fetch_k=20)
    compressor = MemPursuitCompressor(vector_store=store, k=4)

Where the vectors come from: a store that keeps them where they can be read
by document id -- ``InMemoryVectorStore`` (``store.store[id]["vector"]``) --
is read, and nothing is embedded again. For any other store, pass
``embeddings=`` (the store's embedding model): the documents whose vectors
cannot be read are then embedded again from their ``page_content``, one
``embed_documents`` call per selection, a cost in time (and money, for a
paid API) that the store-held vectors avoid.

A token budget instead of (or as well as) a count: both take ``cost=`` (a
function of one ``Document`` returning its cost, e.g. its token count) with
``cost_budget=`` (the most the returned documents may cost in total)::

    docs = mempursuit_search_by_vector(store, query_vector, k=20, fetch_k=50,
                                       cost=count_tokens, cost_budget=512)
"""

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

try:
    from langchain_core.callbacks import Callbacks
    from langchain_core.documents import BaseDocumentCompressor, Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import VectorStore
    from pydantic import ConfigDict
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        'mempursuit.integrations.langchain needs langchain-core: pip install "mempursuit[langchain]"'
    ) from e

from . import _common

__all__ = ["MemPursuitCompressor", "mempursuit_search_by_vector"]

_MISSING = (
    "the vector store holds no vector that can be read for its id: pass embeddings=... "
    "to embed it again, or use a store that keeps its vectors (InMemoryVectorStore)"
)


def _held_vector(store: Any, doc_id: Optional[str]) -> Optional[Any]:
    """The vector ``store`` holds for ``doc_id``, or None: the
    ``InMemoryVectorStore`` layout ``store.store[id]["vector"]``."""
    if store is None or doc_id is None:
        return None
    table = getattr(store, "store", None)
    if not isinstance(table, Mapping):
        return None
    entry = table.get(doc_id)
    if isinstance(entry, Mapping):
        return entry.get("vector")
    return None


def _vectors(
    store: Any, embeddings: Optional[Embeddings], documents: Sequence[Document]
) -> List[Optional[Any]]:
    vectors = [_held_vector(store, d.id) for d in documents]
    missing = [i for i, v in enumerate(vectors) if v is None]
    if missing and embeddings is not None:
        fresh = embeddings.embed_documents([documents[i].page_content for i in missing])
        for i, v in zip(missing, fresh):
            vectors[i] = v
    return vectors


def _costs(
    owner: str, cost: Optional[Callable[[Document], float]], documents: Sequence[Document]
) -> Optional[List[float]]:
    names = [_common.document_name(i, d.id) for i, d in enumerate(documents)]
    return _common.costs_of(owner, cost, documents, names)


def _select(
    owner: str,
    store: Any,
    embeddings: Optional[Embeddings],
    query: Any,
    documents: Sequence[Document],
    k: int,
    relevance: Optional[Sequence[float]],
    options: Mapping[str, Any],
    costs: Optional[Sequence[float]],
) -> List[Document]:
    names = [_common.document_name(i, d.id) for i, d in enumerate(documents)]
    vectors = _vectors(store, embeddings, documents)
    sel = _common.selection(owner, query, vectors, names, k, relevance, options, _MISSING, costs)
    return [
        documents[i].model_copy(update={"metadata": {**documents[i].metadata, **meta}})
        for i, meta in _common.picks(sel)
    ]


def mempursuit_search_by_vector(
    store: VectorStore,
    embedding: List[float],
    k: int = 4,
    fetch_k: int = 20,
    *,
    embeddings: Optional[Embeddings] = None,
    use_scores: bool = True,
    search_kwargs: Optional[Dict[str, Any]] = None,
    cost: Optional[Callable[[Document], float]] = None,
    **options: Any,
) -> List[Document]:
    """The ``fetch_k`` documents most similar to ``embedding`` in ``store``,
    then ``k`` of them selected by :func:`mempursuit.select`: the
    counterpart of ``store.max_marginal_relevance_search_by_vector(embedding,
    k, fetch_k)``.

    The pool is fetched with ``store.similarity_search_with_score_by_vector``
    (its scores passed as ``relevance`` unless ``use_scores=False``) or,
    where the store lacks it, ``store.similarity_search_by_vector``;
    ``search_kwargs`` (e.g. ``{"filter": ...}``) go to that call. The
    documents' vectors are read from the store, or embedded again with
    ``embeddings`` (see the module docstring).

    :param cost: a function of one ``Document`` (as the store returns it)
        giving its cost, a finite number >= 0 (e.g. its token count),
        called once per fetched document in fetch order to build
        ``mempursuit.select``'s ``costs``; needs ``cost_budget`` (the most
        the returned documents may cost in total), and the reverse. A pick
        that no longer fits is skipped, the selection ends when nothing
        fits; ``k`` still caps the count.
    :param options: any other keyword of ``mempursuit.select`` (``method``,
        ``gamma``, ``mmr_lambda``, ``cost_budget``, ...), passed through
        unchanged; what is not given takes ``select``'s default.
    :returns: up to ``k`` documents in pick order, copies whose metadata
        gains ``mempursuit_rank``, ``mempursuit_weight``,
        ``mempursuit_score`` (and ``mempursuit_residual_sq``).
    :raises DocumentError: a document's vector cannot be found or does not
        fit, or ``cost`` raised for it or gave no finite cost >= 0 (the
        message names it).
    :raises TypeError: an option name ``select`` does not take.
    :raises ValueError: ``cost`` without ``cost_budget`` or the reverse; a
        query embedding that is not a finite, non-zero vector (a
        ``MemPursuitError``, before the store is asked).
    """
    owner = "mempursuit_search_by_vector"
    options = _common.select_options(owner, options)
    _common.check_cost(owner, cost, options)
    # The query first: a NaN or zero vector is our error, not the store's.
    _common.query_vector(owner, embedding)
    search_kwargs = dict(search_kwargs or {})
    with_scores = getattr(store, "similarity_search_with_score_by_vector", None)
    relevance = None
    if callable(with_scores):
        hits = with_scores(embedding, k=fetch_k, **search_kwargs)
        documents = [doc for doc, _ in hits]
        if use_scores:
            relevance = [float(score) for _, score in hits]
    else:
        documents = store.similarity_search_by_vector(embedding, k=fetch_k, **search_kwargs)
    costs = _costs(owner, cost, documents)  # before any embedding call
    return _select(owner, store, embeddings, embedding, documents, k, relevance, options, costs)


class MemPursuitCompressor(BaseDocumentCompressor):
    """Selects ``k`` of the retrieved documents with MemPursuit, for a
    ``ContextualCompressionRetriever(base_compressor=..., base_retriever=...)``.

    A compressor receives the query as text and the documents without
    vectors, so: the query is embedded with ``embeddings`` or, when that is
    not given, the vector store's own embedding model (one ``embed_query``
    call per selection); the documents' vectors are read from
    ``vector_store`` by document id, and only those that cannot be read are
    embedded again, and only when ``embeddings`` is given (one
    ``embed_documents`` call over them; see the module docstring).
    With ``score_key``, ``metadata[score_key]`` of each document is passed
    as ``relevance`` (by rank, any scale); without it the relevance is the
    cosine to the query.

    Any keyword of :func:`mempursuit.select` other than query, candidates,
    k, relevance and costs can be given by name (``method="mmr"``,
    ``gamma=0.7``, ``cost_budget=512``, ...) and is passed through unchanged
    (kept in ``method_options``); what is not given takes ``select``'s
    default.

    ``cost`` with ``cost_budget``: a budget in tokens (or any cost) instead
    of, or as well as, ``k``. ``cost`` is a function of one ``Document``
    returning its cost, a finite number >= 0 (e.g. its token count), called
    once per input document in input order, before any embedding call;
    one without the other is a ValueError at construction. A pick that no
    longer fits is skipped, the selection ends when nothing fits; ``k``
    still caps the count. A cost function that raises or returns a
    negative, NaN or non-number value is a
    :class:`~mempursuit.integrations.DocumentError` naming the document.

    Returns up to ``k`` documents in pick order, copies whose metadata gains
    ``mempursuit_rank``, ``mempursuit_weight``, ``mempursuit_score`` (and
    ``mempursuit_residual_sq``); see :mod:`mempursuit.integrations`.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    k: int = 4
    """The budget K: at most this many documents come back."""
    vector_store: Optional[VectorStore] = None
    """The store the documents came from (it holds their vectors)."""
    embeddings: Optional[Embeddings] = None
    """Embeds the query (default: the store's model) and the documents whose
    vectors cannot be read from the store."""
    score_key: Optional[str] = None
    """A metadata key holding each document's retrieval score, passed as
    relevance."""
    method_options: Dict[str, Any] = {}
    """Keywords of ``mempursuit.select``, passed through unchanged."""
    cost: Optional[Callable[[Document], float]] = None
    """Each document's cost (e.g. its token count), for the ``cost_budget``
    option."""

    def __init__(self, **data: Any) -> None:
        fields = type(self).model_fields
        options = {name: data.pop(name) for name in list(data) if name not in fields}
        given = dict(data.pop("method_options", None) or {})
        for name in options:
            if name in given:
                raise TypeError(f"MemPursuitCompressor: '{name}' given twice (in method_options and by name)")
        data["method_options"] = _common.select_options("MemPursuitCompressor", {**given, **options})
        _common.check_cost("MemPursuitCompressor", data.get("cost"), data["method_options"])
        _common.check_values(
            "MemPursuitCompressor",
            data["method_options"],
            data.get("score_key") is not None,
            data.get("cost") is not None,
        )
        super().__init__(**data)

    def _query_embeddings(self) -> Embeddings:
        if self.embeddings is not None:
            return self.embeddings
        model: Optional[Embeddings] = getattr(self.vector_store, "embeddings", None)
        if model is None:
            raise ValueError(
                "MemPursuitCompressor: nothing to embed the query with: pass embeddings=... "
                "or a vector_store that has an embedding model"
            )
        return model

    def compress_documents(
        self,
        documents: Sequence[Document],
        query: str,
        callbacks: Optional[Callbacks] = None,
    ) -> Sequence[Document]:
        """Up to ``k`` of ``documents``, selected for ``query``, in pick order.

        Raises DocumentError for a document without a usable vector, (with
        ``score_key``) without a score, or (with ``cost``) without a usable
        cost, naming it."""
        documents = list(documents)
        if not documents:
            return []
        owner = "MemPursuitCompressor"
        relevance: Optional[List[float]] = None
        if self.score_key is not None:
            names = [_common.document_name(i, d.id) for i, d in enumerate(documents)]
            relevance = []
            for name, d in zip(names, documents):
                score = d.metadata.get(self.score_key)
                if score is None:
                    raise _common.DocumentError(
                        f"{owner}: {name} has no metadata[{self.score_key!r}] (score_key)"
                    )
                relevance.append(score)
        _common.check_cost(owner, self.cost, self.method_options)
        costs = _costs(owner, self.cost, documents)  # before any embedding call
        query_vector = self._query_embeddings().embed_query(query)
        return _select(
            owner,
            self.vector_store,
            self.embeddings,
            query_vector,
            documents,
            self.k,
            relevance,
            self.method_options,
            costs,
        )
