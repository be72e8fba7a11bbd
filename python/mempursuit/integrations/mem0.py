"""Mem0 (open source, ``mem0ai``): :class:`MemPursuitReranker`, a reranker
for ``Memory.search(..., rerank=True)`` that selects with
:func:`mempursuit.select` on the vectors Mem0's vector store holds.

Needs ``mem0ai`` (``pip install "mempursuit[mem0]"``; Mem0 needs Python >=
3.10)::

    from mempursuit.integrations.mem0 import MemPursuitReranker

    memory.reranker = MemPursuitReranker(memory, k=5)
    hits = memory.search(question, filters={"user_id": "u1"}, top_k=30, rerank=True)

Mem0 hands a reranker the memories its search kept (at most ``top_k``, as
dicts with ``id``, ``memory``, ``score``, ...) and the search's ``top_k``
again as the reranker's budget; so search with ``top_k`` set to the pool
size (30 above) and give the reranker its own budget ``k`` (the picks come
back, in pick order, at most ``min(k, top_k)`` of them).

Where the vectors come from: Mem0's own vector store, read by memory id,
for the stores that can give them back (Qdrant, Mem0's default, local or
server: ``client.retrieve(..., with_vectors=True)``; Chroma:
``collection.get(..., include=["embeddings"])``; FAISS:
``index.reconstruct``); nothing is embedded again there. For any other
store, or memories the store no longer holds, the memories' texts are
embedded with Mem0's embedder (``memory.embedding_model``), one
``embed_batch(texts, "add")`` call per search; ``fetch_vectors=`` (a
function of a list of ids returning one vector or None per id) reads
another store first. The query is embedded with Mem0's embedder
(``embed(query, "search")``, as Mem0's own search does: one call more per
search, since Mem0 hands a reranker the query's text, not its vector).

Relevance: Mem0's search ``score`` is passed as ``relevance`` (by rank,
any scale). It is what Mem0 ranks by, higher first, whatever the store:
Mem0 (2.2) turns the distances of its stores into similarities itself
(Chroma and FAISS with ``distance_strategy="euclidean"``: ``1 / (1 +
distance)``; Qdrant: cosine), and adds keyword and entity boosts where it
has them. With ``use_scores=False`` the relevance is the cosine of the
vectors with the query.

From a Mem0 config: :func:`register` adds the provider ``"mempursuit"``
to Mem0's ``RerankerFactory``, then
``Memory.from_config({..., "reranker": {"provider": "mempursuit",
"config": {"k": 5}}})`` builds one; Mem0 gives a reranker built from its
config no reference to the memory, so call
``memory.reranker.attach(memory)`` once to give it the store and the
embedder.

A token budget instead of (or as well as) a count: ``cost=`` (a function of
one memory dict returning its cost, e.g. its token count) with
``cost_budget=`` (the most the returned memories may cost in total).

Errors: Mem0's ``search`` catches any exception a reranker raises, logs a
warning (``Reranking failed, using original results``) and returns the
memories unreranked; call :meth:`MemPursuitReranker.rerank` yourself to see
the error (a :class:`mempursuit.MemPursuitError` with its ``kind``).
"""

import collections.abc
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

import mempursuit

try:
    from mem0.configs.rerankers.base import BaseRerankerConfig
    from mem0.reranker.base import BaseReranker
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError('mempursuit.integrations.mem0 needs mem0ai: pip install "mempursuit[mem0]"') from e

from . import _common

__all__ = ["MemPursuitReranker", "MemPursuitRerankerConfig", "register"]

_OWNER = "MemPursuitReranker"
_OWN = ("k", "use_scores", "cost", "fetch_vectors", "memory")
_MISSING = (
    "Mem0's vector store gives back no vector for its id and there is no embedder: pass "
    "MemPursuitReranker(memory, ...) (or call reranker.attach(memory)), or fetch_vectors=..."
)


class MemPursuitRerankerConfig(BaseRerankerConfig):
    """The settings of a :class:`MemPursuitReranker` built from a Mem0
    config (``{"provider": "mempursuit", "config": {...}}``): ``k`` (the
    budget, an int >= 0; None: Mem0's ``top_k``), ``use_scores`` (pass
    Mem0's search scores as relevance), and any keyword of
    :func:`mempursuit.select` (``method``, ``gamma``, ...) as an extra
    field, passed through unchanged."""

    model_config = {"extra": "allow"}

    k: Optional[int] = None
    use_scores: bool = True


def register() -> None:
    """Adds the reranker provider ``"mempursuit"`` to Mem0's
    ``RerankerFactory`` (idempotent), so that a Mem0 config's
    ``"reranker": {"provider": "mempursuit", "config": {...}}`` builds a
    :class:`MemPursuitReranker` with :class:`MemPursuitRerankerConfig`."""
    from mem0.utils.factory import RerankerFactory

    RerankerFactory.provider_to_class["mempursuit"] = (
        f"{__name__}.MemPursuitReranker",
        MemPursuitRerankerConfig,
    )


def _vector_list(value: Any) -> Optional[Any]:
    """A dense vector from what a store gave back: a sequence or array, or
    a Qdrant named-vector dict (its unnamed dense entry ``""``); else None."""
    if value is None or isinstance(value, (str, bytes)):
        return None
    if isinstance(value, Mapping):
        value = value.get("")
        if value is None:
            return None
    if isinstance(value, (collections.abc.Sequence, np.ndarray)) or hasattr(value, "__array__"):
        return value
    return None


def _store_vectors(store: Any, ids: List[str]) -> List[Optional[Any]]:
    """The vectors Mem0's vector store ``store`` holds for ``ids`` (None
    where it gives none back): Qdrant (``client.retrieve(...,
    with_vectors=True)``), Chroma (``collection.get(ids,
    include=["embeddings"])``), FAISS (``index.reconstruct``)."""
    found: Dict[str, Any] = {}
    if store is None or not ids:
        return [None] * len(ids)
    client = getattr(store, "client", None)
    collection = getattr(store, "collection", None)
    if client is not None and hasattr(client, "retrieve") and hasattr(store, "collection_name"):
        points = client.retrieve(
            collection_name=store.collection_name, ids=list(ids), with_payload=False, with_vectors=True
        )
        found = {str(p.id): _vector_list(p.vector) for p in points}
    elif collection is not None and hasattr(collection, "get"):
        got = collection.get(ids=list(ids), include=["embeddings"])
        embeddings = got.get("embeddings")
        if embeddings is not None:
            found = {str(i): _vector_list(v) for i, v in zip(got.get("ids", []), embeddings)}
    elif hasattr(getattr(store, "index", None), "reconstruct") and isinstance(
        getattr(store, "index_to_id", None), Mapping
    ):
        position = {v: k for k, v in store.index_to_id.items()}
        for i in ids:
            if i in position:
                found[i] = store.index.reconstruct(int(position[i]))
    return [found.get(i) for i in ids]


class MemPursuitReranker(BaseReranker):
    """Reranks Mem0 search results with MemPursuit: picks up to ``k`` of
    the memories, one at a time, each the memory that best covers what the
    picks so far leave out of the query (:func:`mempursuit.select`; by
    default its recommended setting).

    :param config: a :class:`MemPursuitRerankerConfig` or a dict of its
        fields (how Mem0's ``RerankerFactory`` builds it, see
        :func:`register`); the keywords below override it.
    :param memory: the ``mem0.Memory`` whose vector store holds the
        memories' vectors and whose embedder embeds the query (and the
        memories whose vectors cannot be read); or :meth:`attach` later.
    :param k: the budget, an int >= 0: at most ``min(k, top_k)`` memories
        come back (``top_k``: what ``Memory.search`` passes, its own
        ``top_k``); None: ``top_k``.
    :param use_scores: pass Mem0's search scores (``memory["score"]``,
        higher is more relevant) as ``relevance`` when every memory has
        one (by rank, any scale); False: the cosine to the query.
    :param cost: a function of one memory dict returning its cost, a finite
        number >= 0 (e.g. its token count), called once per memory before
        any embedding call; needs ``cost_budget``, and the reverse.
    :param fetch_vectors: a function of a list of memory ids returning one
        vector (or None) per id, read before Mem0's store: a sequence of
        numbers, or pgvector's text ``"[0.1,0.2,...]"`` (parsed by the
        layer; other text is a ``DocumentError`` naming the memory).
    :param options: any other keyword of :func:`mempursuit.select`
        (``method``, ``gamma``, ``mmr_lambda``, ``cost_budget``, ...),
        passed through unchanged (NumPy scalars become Python numbers).

    :meth:`rerank` returns copies of the picked memory dicts in pick order,
    each with the record ``memory["mempursuit"] = {"rank", "weight",
    "score", "residual_sq"}`` (see :mod:`mempursuit.integrations`) and
    ``rerank_score`` (the record's ``score``, the step's score at pick
    time, as Mem0's other rerankers set it); ``score`` keeps Mem0's search
    score. A memory whose id an earlier one has is skipped and reported
    (logger ``mempursuit.integrations``).

    Settings are checked at construction, as ``select`` checks them: an
    unknown option, a bad ``k`` or ``use_scores``, or a value ``select``
    rejects is a ``MemPursuitError`` of kind ``"option"`` (an
    :class:`~mempursuit.integrations.OptionError` for names and types),
    prefixed ``MemPursuitReranker:``.
    """

    def __init__(
        self,
        config: Any = None,
        *,
        memory: Any = None,
        cost: Optional[Callable[[Dict[str, Any]], float]] = None,
        fetch_vectors: Optional[Callable[[List[str]], Sequence[Optional[Any]]]] = None,
        **settings: Any,
    ) -> None:
        if config is not None and not isinstance(config, (Mapping, BaseRerankerConfig)):
            if hasattr(config, "vector_store") and hasattr(config, "embedding_model"):
                memory, config = config, None  # MemPursuitReranker(memory, k=5)
            else:
                raise _common.OptionError(
                    f"{_OWNER}: config must be a MemPursuitRerankerConfig, a dict or a mem0 Memory, "
                    f"got {type(config).__name__}"
                )
        given: Dict[str, Any] = {}
        if isinstance(config, BaseRerankerConfig):
            given = {
                **{n: getattr(config, n) for n in ("k", "use_scores") if hasattr(config, n)},
                **(config.model_extra or {}),
            }
            if getattr(config, "top_k", None) is not None and given.get("k") is None:
                given["k"] = config.top_k
        elif isinstance(config, Mapping):
            given = {n: v for n, v in config.items() if n not in ("provider", "model", "api_key")}
            if "top_k" in given:
                top_k = given.pop("top_k")
                given.setdefault("k", top_k)
        given.update(settings)
        k = given.pop("k", None)
        self.k: Optional[int] = None if k is None else _common.budget(_OWNER, "k", k)
        self.use_scores: bool = _common.flag(_OWNER, "use_scores", given.pop("use_scores", True))
        self.options: Dict[str, Any] = _common.select_options(_OWNER, given)
        _common.check_cost(_OWNER, cost)
        _common.check_values(_OWNER, self.options, None if self.use_scores else False, cost is not None, _OWN)
        if fetch_vectors is not None and not callable(fetch_vectors):
            raise _common.OptionError(
                f"{_OWNER}: fetch_vectors must be a function of a list of ids, got {fetch_vectors!r}"
            )
        self.cost = cost
        self.fetch_vectors = fetch_vectors
        self.memory = memory

    def attach(self, memory: Any) -> "MemPursuitReranker":
        """Gives the reranker ``memory``'s vector store and embedder (for a
        reranker built from a Mem0 config); returns the reranker."""
        self.memory = memory
        return self

    def _embedder(self) -> Any:
        return getattr(self.memory, "embedding_model", None)

    def _prepare(
        self, documents: Sequence[Mapping[str, Any]]
    ) -> Tuple[List[Optional[str]], List[Any], List[Optional[Any]]]:
        """The memories' ids, costs (before any embedding call) and the
        vectors ``fetch_vectors`` and Mem0's store give back (None where
        neither does; a memory without an id is known by its position
        only, never looked up)."""
        ids = [str(d.get("id")) if d.get("id") is not None else None for d in documents]
        costs = _common.costs_of(_OWNER, self.cost, documents, ids)
        vectors: List[Optional[Any]] = [None] * len(documents)
        if self.fetch_vectors is not None:
            asked = [i for i in ids if i is not None]
            fetched = list(self.fetch_vectors(asked))
            if len(fetched) != len(asked):
                raise mempursuit.MemPursuitError(
                    f"{_OWNER}: fetch_vectors returned {len(fetched)} vectors for {len(asked)} ids "
                    "(one vector, or None, per id, in order)",
                    "input",
                    argument="fetch_vectors",
                )
            known = iter(fetched)
            vectors = [next(known) if i is not None else None for i in ids]
        missing = [j for j, v in enumerate(vectors) if v is None and ids[j] is not None]
        store = getattr(self.memory, "vector_store", None)
        for j, v in zip(missing, _store_vectors(store, [ids[j] for j in missing])):
            vectors[j] = v
        return ids, costs, vectors

    def rerank(
        self, query: str, documents: List[Dict[str, Any]], top_k: Optional[int] = None
    ) -> List[Dict[str, Any]]:
        """Up to ``min(k, top_k)`` of ``documents`` (Mem0's search results:
        dicts with ``memory``, ``id``, ``score``), selected for ``query``,
        as copies in pick order with ``rerank_score`` and the MemPursuit
        keys added.

        :raises DocumentError: a memory without a usable vector (none in the
            store, no embedder), score or cost, naming it.
        :raises MemPursuitError: no embedder for the query (kind
            ``"option"``), or a query vector that cannot be used
            (``"input"``).
        """
        documents = list(documents)
        if not documents:
            return []
        embedder = self._embedder()
        if embedder is None:
            raise mempursuit.MemPursuitError(
                f"{_OWNER}: nothing to embed the query with: pass MemPursuitReranker(memory, ...) "
                "or call reranker.attach(memory)",
                "option",
            )
        ids, costs, vectors = self._prepare(documents)
        missing = [j for j, v in enumerate(vectors) if v is None]
        if missing:
            texts = [str(documents[j].get("memory", "")) for j in missing]
            for j, v in zip(missing, embedder.embed_batch(texts, "add")):
                vectors[j] = v
        query_vector = embedder.embed(query, "search")
        return self._select(query_vector, documents, ids, costs, vectors, top_k)

    def _select(
        self,
        query_vector: Any,
        documents: List[Dict[str, Any]],
        ids: List[Optional[str]],
        costs: List[Any],
        vectors: List[Optional[Any]],
        top_k: Optional[int],
    ) -> List[Dict[str, Any]]:
        k = self.k if self.k is not None else len(documents)
        if top_k is not None:
            k = min(k, _common.budget(f"{_OWNER}.rerank", "top_k", top_k))
        specs = [
            # Mem0's search score is a similarity (higher first, whatever the store).
            _common.document(i, v, d.get("score") if self.use_scores else None, "similarity", c)
            for i, v, d, c in zip(ids, vectors, documents, costs)
        ]
        picks = _common.select(_OWNER, query_vector, specs, k, self.options, _MISSING)
        return [{**documents[i], **meta, "rerank_score": meta[_common.META_KEY]["score"]} for i, meta in picks]
