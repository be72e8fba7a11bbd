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
by document id -- ``InMemoryVectorStore`` (``store.store[id]["vector"]``),
``FAISS`` (langchain-community; its index) and ``Chroma`` (langchain-chroma)
-- is read, and nothing is embedded again. :class:`MemPursuitCompressor` first
reads a vector the document carries in ``metadata["embedding"]`` (the key
``embedding_key``; the same key and rule as LangChain.js's
``MemPursuitCompressor``). For any other store, pass ``embeddings=`` (the
store's embedding model): the documents whose vectors cannot be read are
then embedded again from their ``page_content``, one ``embed_documents``
call per selection, a cost in time (and money, for a paid API) that the
store-held vectors avoid.

A token budget instead of (or as well as) a count: both take ``cost=`` (a
function of one ``Document`` returning its cost, e.g. its token count) with
``cost_budget=`` (the most the returned documents may cost in total)::

    docs = mempursuit_search_by_vector(store, query_vector, k=20, fetch_k=50,
                                       cost=count_tokens, cost_budget=512)
"""

import collections.abc
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

import mempursuit

try:
    from langchain_core.callbacks import Callbacks
    from langchain_core.documents import BaseDocumentCompressor, Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.runnables.config import run_in_executor
    from langchain_core.vectorstores import InMemoryVectorStore, VectorStore
    from pydantic import ConfigDict, ValidationError
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        'mempursuit.integrations.langchain needs langchain-core: pip install "mempursuit[langchain]"'
    ) from e

from . import _common, _stores

__all__ = ["MemPursuitCompressor", "amempursuit_search_by_vector", "mempursuit_search_by_vector"]

_MISSING = (
    "the vector store holds no vector that can be read for its id: pass embeddings=... "
    "to embed it again, or use a store that keeps its vectors (InMemoryVectorStore, FAISS, Chroma)"
)


def _missing(embedding_key: str) -> str:
    return (
        f"it has no metadata[{embedding_key!r}] and the vector store holds no vector that can be "
        "read for its id: pass embeddings=... to embed it again, or use a store that keeps its "
        "vectors (InMemoryVectorStore, FAISS, Chroma)"
    )


def _is_vector(value: Any) -> bool:
    """Whether a metadata value is taken as a vector: a sequence or array,
    or a string (pgvector's text ``"[0.1,0.2,...]"``, which the layer parses
    or refuses naming the document), as LangChain.js's compressor takes
    them."""
    if isinstance(value, str):
        return True
    if value is None or isinstance(value, (bytes, Mapping)):
        return False
    return isinstance(value, (collections.abc.Sequence, np.ndarray)) or hasattr(value, "__array__")


def _known_vectors(
    store: Any, documents: Sequence[Document], embedding_key: Optional[str]
) -> Tuple[List[Optional[Any]], List[int]]:
    """Each document's vector without embedding: ``metadata[embedding_key]``
    when it holds one (``embedding_key`` None: not read), else the store's
    for its id (InMemoryVectorStore, FAISS, Chroma: ``_stores.py``), else
    None; and the positions still without one."""
    vectors: List[Optional[Any]] = []
    for d in documents:
        carried = d.metadata.get(embedding_key) if embedding_key is not None else None
        vectors.append(carried if _is_vector(carried) else None)
    unread = [i for i, v in enumerate(vectors) if v is None]
    for i, v in zip(unread, _stores.held_vectors(store, [documents[i].id for i in unread])):
        vectors[i] = v
    return vectors, [i for i, v in enumerate(vectors) if v is None]


def _embedded(vectors: List[Optional[Any]], missing: Sequence[int], fresh: Sequence[Any]) -> List[Optional[Any]]:
    """``vectors`` with ``fresh`` (one embedding per position of
    ``missing``, in order) filled in."""
    for i, v in zip(missing, fresh):
        vectors[i] = v
    return vectors


def _vectors(
    store: Any, embeddings: Optional[Embeddings], documents: Sequence[Document], embedding_key: Optional[str]
) -> List[Optional[Any]]:
    """Each document's vector: :func:`_known_vectors`, else (with
    ``embeddings``) embedded again, in one ``embed_documents`` call over
    those."""
    vectors, missing = _known_vectors(store, documents, embedding_key)
    if not missing or embeddings is None:
        return vectors
    return _embedded(vectors, missing, embeddings.embed_documents([documents[i].page_content for i in missing]))


async def _avectors(
    store: Any, embeddings: Optional[Embeddings], documents: Sequence[Document], embedding_key: Optional[str]
) -> List[Optional[Any]]:
    """:func:`_vectors` with the one embedding call awaited
    (``aembed_documents``)."""
    vectors, missing = _known_vectors(store, documents, embedding_key)
    if not missing or embeddings is None:
        return vectors
    fresh = await embeddings.aembed_documents([documents[i].page_content for i in missing])
    return _embedded(vectors, missing, fresh)


def _select(
    owner: str,
    store: Any,
    embeddings: Optional[Embeddings],
    query: Any,
    documents: Sequence[Document],
    k: int,
    scores: Sequence[Any],
    score_kind: Optional[str],
    options: Mapping[str, Any],
    costs: Sequence[Any],
    embedding_key: Optional[str] = None,
    vectors: Optional[List[Optional[Any]]] = None,
) -> List[Document]:
    if vectors is None:
        vectors = _vectors(store, embeddings, documents, embedding_key)
    hint = _MISSING if embedding_key is None else _missing(embedding_key)
    specs = [
        _common.document(d.id, v, s, score_kind, c) for d, v, s, c in zip(documents, vectors, scores, costs)
    ]
    picks = _common.select(owner, query, specs, k, options, hint)
    return [
        documents[i].model_copy(update={"metadata": {**documents[i].metadata, **meta}}) for i, meta in picks
    ]


def _relevance_fn(store: Any) -> Optional[Callable[[float], float]]:
    """The store's function from its raw score to a relevance (higher is
    better), or None where the store has none (then the vectors' cosine).
    LangChain's ``InMemoryVectorStore`` declares none, but its search (where
    a subclass does not replace it) scores by the cosine of the query and
    each stored vector (langchain-core 0.3 to 1.x): a similarity, taken as
    it is."""
    select = getattr(store, "_select_relevance_score_fn", None)
    fn = None
    if callable(select):
        try:
            fn = select()
        except NotImplementedError:
            fn = None
    if callable(fn):
        return fn
    search = getattr(type(store), "similarity_search_with_score_by_vector", None)
    if isinstance(store, InMemoryVectorStore) and search is InMemoryVectorStore.similarity_search_with_score_by_vector:
        return _cosine_as_given
    return None


def _cosine_as_given(score: float) -> float:
    """``InMemoryVectorStore``'s score, a cosine similarity, as relevance."""
    return score


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
    (its scores, through the store's own relevance function, the one
    ``similarity_search_with_relevance_scores`` applies, passed as
    ``relevance`` unless ``use_scores=False``; a raw score, which may be a
    distance as FAISS's L2, is never relevance: a store without a relevance
    function, or whose function does not keep the store's best-first order
    of its hits, as LangChain's FAISS inner-product function, gets the
    vectors' cosine with the query) or,
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
        gains the record ``metadata["mempursuit"] = {"rank", "weight",
        "score", "residual_sq"}``.
    :raises DocumentError: a document's vector cannot be found or does not
        fit, its score is not a finite number, or ``cost`` raised for it
        or gave no finite cost >= 0 (the message names it; kind
        ``"input"``).
    :raises MemPursuitError: a query embedding that is not a finite,
        non-zero vector of numbers (kind ``"input"``, ``argument``
        ``"query"``, before the store is asked); one of another length than
        the fetched documents' (the same, after the fetch, unless the store
        raises its own error first).
    :raises OptionError: an option name ``select`` does not take, a ``k``
        or ``fetch_k`` that is not an int >= 0, a ``use_scores`` that is
        not True or False, ``cost`` without ``cost_budget`` or the reverse
        (a ``MemPursuitError`` of kind ``"option"``, also a ``TypeError``);
        a value ``select`` rejects is its ``MemPursuitError``, prefixed.
    """
    owner = "mempursuit_search_by_vector"
    k = _common.budget(owner, "k", k)
    fetch_k = _common.budget(owner, "fetch_k", fetch_k)
    use_scores = _common.flag(owner, "use_scores", use_scores)
    options = _common.select_options(owner, options)
    _common.check_cost(owner, cost)
    _common.check_values(
        owner,
        options,
        None if use_scores else False,
        cost is not None,
        ("k", "fetch_k", "embeddings", "use_scores", "search_kwargs", "cost"),
        scores_hint="use_scores=False passes no scores: leave out raw_relevance (the relevance is then the cosine "
        "of each document's vector with the query) or use_scores=False",
    )
    _common.check_query(owner, embedding)  # before the store is asked
    search_kwargs = dict(search_kwargs or {})
    with_scores = getattr(store, "similarity_search_with_score_by_vector", None)
    scores: List[Any] = []
    score_kind: Optional[str] = None
    if callable(with_scores):
        hits = with_scores(embedding, k=fetch_k, **search_kwargs)
        documents = [doc for doc, _ in hits]
        # A store's raw score may be a distance (FAISS: L2; Chroma, PGVector).
        # The store's own relevance function (the one
        # `similarity_search_with_relevance_scores` applies) turns it into a
        # similarity, if it keeps the order the store returned its hits in
        # (best first). One that does not (LangChain's FAISS inner-product
        # function maps a similarity s > 0 to 1 - s) is not used, nor is a
        # raw score without a function: they are declared distances, and
        # the layer then takes the vectors' cosine.
        to_relevance = _relevance_fn(store)
        relevance = [to_relevance(s) for _, s in hits] if to_relevance is not None else []
        if relevance and all(a >= b for a, b in zip(relevance, relevance[1:])):
            scores, score_kind = relevance, "similarity"
        else:
            scores, score_kind = [s for _, s in hits], "distance"
    else:
        documents = store.similarity_search_by_vector(embedding, k=fetch_k, **search_kwargs)
    if not use_scores or not scores:
        scores, score_kind = [None] * len(documents), None
    if options.get("raw_relevance") and score_kind != "similarity" and documents:
        raise _common.OptionError(
            f"{owner}: raw_relevance=True uses the store's relevance scores as given, but "
            + (
                f"{type(store).__name__} has no search with scores"
                if not callable(with_scores)
                else f"{type(store).__name__}'s scores are not relevance (it has no relevance function, "
                "_select_relevance_score_fn, that keeps its best-first order: they may be distances)"
            )
            + ": leave out raw_relevance (the relevance is then the cosine of each document's vector with the "
            "query), or give the store a relevance function (relevance_score_fn=... where its constructor "
            "takes one, as FAISS and Chroma do)",
            "option",
            None,
            None,
            "raw_relevance",
        )
    costs = _common.costs_of(owner, cost, documents, [d.id for d in documents])  # before any embedding call
    return _select(owner, store, embeddings, embedding, documents, k, scores, score_kind, options, costs)


async def amempursuit_search_by_vector(
    store: VectorStore,
    embedding: List[float],
    k: int = 4,
    fetch_k: int = 20,
    **kwargs: Any,
) -> List[Document]:
    """:func:`mempursuit_search_by_vector` for an event loop (the
    counterpart of ``amax_marginal_relevance_search_by_vector``): LangChain
    stores have no async search by vector with scores, so the whole call
    (the store's search, any embedding call, the selection) runs in
    LangChain's executor (``run_in_executor``, as the stores' own async
    defaults do), off the event loop. Same parameters, result and errors."""
    return await run_in_executor(None, mempursuit_search_by_vector, store, embedding, k, fetch_k, **kwargs)


class MemPursuitCompressor(BaseDocumentCompressor):
    """Selects ``k`` of the retrieved documents with MemPursuit, for a
    ``ContextualCompressionRetriever(base_compressor=..., base_retriever=...)``.

    A compressor receives the query as text and the documents without
    vectors, so: the query is embedded with ``embeddings`` or, when that is
    not given, the vector store's own embedding model (one ``embed_query``
    call per selection). A document's vector is ``metadata["embedding"]``
    (the key ``embedding_key``) when the document carries one there (a list
    or array of numbers, or pgvector's text ``"[0.1,0.2,...]"``, as
    LangChain.js's compressor reads it; other text is a
    :class:`~mempursuit.integrations.DocumentError` naming the document), else the
    one ``vector_store`` holds for its id; only the documents with neither
    are embedded again, and only when ``embeddings`` is given (one
    ``embed_documents`` call over them; see the module docstring).
    With ``score_key``, ``metadata[score_key]`` of each document is passed
    as ``relevance`` (by rank, any scale; a similarity, higher is better:
    for a distance leave ``score_key`` out); a document without it, or with a
    value that is not a finite number, is a
    :class:`~mempursuit.integrations.DocumentError` naming it and the
    value. Without ``score_key`` the relevance is the cosine to the query.

    Any keyword of :func:`mempursuit.select` other than query, candidates,
    k, relevance and costs can be given by name (``method="mmr"``,
    ``gamma=0.7``, ``cost_budget=512``, ...) and is passed through unchanged
    (kept in ``method_options``); what is not given takes ``select``'s
    default.

    ``cost`` with ``cost_budget``: a budget in tokens (or any cost) instead
    of, or as well as, ``k``. ``cost`` is a function of one ``Document``
    returning its cost, a finite number >= 0 (e.g. its token count), called
    once per input document in input order, before any embedding call;
    one without the other is an :class:`~mempursuit.integrations.OptionError`
    at construction. A pick that no
    longer fits is skipped, the selection ends when nothing fits; ``k``
    still caps the count. A cost function that raises or returns a
    negative, NaN or non-number value is a
    :class:`~mempursuit.integrations.DocumentError` naming the document.

    Returns up to ``k`` documents in pick order, copies whose metadata gains
    the record ``metadata["mempursuit"] = {"rank", "weight", "score",
    "residual_sq"}``; see :mod:`mempursuit.integrations`.

    Settings are checked at construction, as ``select`` checks them: an
    unknown option name, a ``k`` that is not an int >= 0, or a value of the
    wrong type is an :class:`~mempursuit.integrations.OptionError`, a value
    ``select`` rejects its ``MemPursuitError``, both of kind ``"option"``
    and prefixed ``MemPursuitCompressor:``. A query embedding of another
    dimension than the documents' is a ``MemPursuitError`` of kind
    ``"input"`` naming the query.
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
    relevance: a similarity (higher is better). A distance there (FAISS's L2
    from ``similarity_search_with_score``) would reverse the ranking: leave
    ``score_key`` out, and the relevance is the vectors' cosine."""
    embedding_key: str = "embedding"
    """The metadata key of a document's vector, read before the store (the
    default of LangChain.js's ``embeddingKey``)."""
    method_options: Dict[str, Any] = {}
    """Keywords of ``mempursuit.select``, passed through unchanged."""
    cost: Optional[Callable[[Document], float]] = None
    """Each document's cost (e.g. its token count), for the ``cost_budget``
    option."""

    def __init__(self, **data: Any) -> None:
        fields = type(self).model_fields
        options = {name: data.pop(name) for name in list(data) if name not in fields}
        given = _common.method_options("MemPursuitCompressor", data.pop("method_options", None))
        for name in options:
            if name in given:
                raise _common.OptionError(
                    f"MemPursuitCompressor: '{name}' given twice (in method_options and by name)"
                )
        if "k" in data:
            data["k"] = _common.budget("MemPursuitCompressor", "k", data["k"])
        data["method_options"] = _common.select_options("MemPursuitCompressor", {**given, **options})
        _common.check_cost("MemPursuitCompressor", data.get("cost"))
        _common.check_values(
            "MemPursuitCompressor",
            data["method_options"],
            data.get("score_key") is not None,
            data.get("cost") is not None,
            list(fields),
            scores_hint="a compressor receives no scores: pass score_key (the metadata key of the documents' "
            "similarity scores), or leave out raw_relevance (the relevance is then the cosine of each "
            "document's vector with the query)",
        )
        try:
            super().__init__(**data)
        except ValidationError as e:  # a field of the wrong type (embedding_key=3, ...)
            raise _common.OptionError(f"MemPursuitCompressor: {e}") from e

    def _query_embeddings(self) -> Embeddings:
        if self.embeddings is not None:
            return self.embeddings
        model: Optional[Embeddings] = getattr(self.vector_store, "embeddings", None)
        if model is None:
            raise mempursuit.MemPursuitError(
                "MemPursuitCompressor: nothing to embed the query with: pass embeddings=... "
                "or a vector_store that has an embedding model",
                "option",
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
        ``score_key``) without a finite numeric score, or (with ``cost``)
        without a usable cost, naming it; MemPursuitError for a query
        embedding of another dimension than the documents'."""
        documents = list(documents)
        if not documents:
            return []
        scores, costs = self._inputs(documents)
        query_vector = self._query_embeddings().embed_query(query)
        return self._select(documents, query_vector, scores, costs, None)

    async def acompress_documents(
        self,
        documents: Sequence[Document],
        query: str,
        callbacks: Optional[Callbacks] = None,
    ) -> Sequence[Document]:
        """:meth:`compress_documents` for an event loop: the embedding
        calls are awaited (``aembed_query`` and, for documents whose
        vectors cannot be read, one ``aembed_documents``), never the
        blocking ``embed_query`` / ``embed_documents``; the selection
        itself (the same code as :meth:`compress_documents`) runs inline
        (milliseconds: P = 200, d = 1536). Same result and errors."""
        documents = list(documents)
        if not documents:
            return []
        scores, costs = self._inputs(documents)
        query_vector = await self._query_embeddings().aembed_query(query)
        vectors = await _avectors(self.vector_store, self.embeddings, documents, self.embedding_key)
        return self._select(documents, query_vector, scores, costs, vectors)

    def _inputs(self, documents: List[Document]) -> Tuple[List[Any], List[Any]]:
        """The scores (``metadata[score_key]``, None each without
        ``score_key``) and costs of ``documents``, before any embedding
        call; the layer checks both."""
        scores: List[Any] = [None] * len(documents)
        if self.score_key is not None:
            scores = [d.metadata.get(self.score_key) for d in documents]
        costs = _common.costs_of("MemPursuitCompressor", self.cost, documents, [d.id for d in documents])
        return scores, costs

    def _select(
        self,
        documents: List[Document],
        query_vector: Any,
        scores: List[Any],
        costs: List[Any],
        vectors: Optional[List[Optional[Any]]],
    ) -> List[Document]:
        """The selection :meth:`compress_documents` and
        :meth:`acompress_documents` share (``vectors`` None: read or
        embedded here)."""
        return _select(
            "MemPursuitCompressor",
            self.vector_store,
            self.embeddings,
            query_vector,
            documents,
            self.k,
            scores,
            None if self.score_key is None else "similarity",
            self.method_options,
            costs,
            self.embedding_key,
            vectors,
        )
