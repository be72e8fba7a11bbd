"""Haystack 2.x: :class:`MemPursuitRanker`, a component that reranks the
documents an embedding retriever returned with :func:`mempursuit.select`,
using the embeddings the documents carry (no model, no re-embedding).

Needs ``haystack-ai`` (``pip install "mempursuit[haystack]"``)::

    from haystack import Pipeline
    from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever
    from mempursuit.integrations.haystack import MemPursuitRanker

    p = Pipeline()
    p.add_component("retriever", InMemoryEmbeddingRetriever(store, top_k=30, return_embedding=True))
    p.add_component("ranker", MemPursuitRanker(top_k=5))
    p.connect("retriever.documents", "ranker.documents")
    p.run({"retriever": {"query_embedding": q}, "ranker": {"query_embedding": q}})

A token budget instead of (or as well as) a count: ``MemPursuitRanker(top_k=30,
cost=count_tokens, cost_budget=512)`` with ``count_tokens(doc)`` returning the
document's token count.
"""

from dataclasses import replace
from typing import Any, Callable, Dict, List, Optional

try:
    from haystack import Document, component, default_from_dict, default_to_dict
    from haystack.utils import deserialize_callable, serialize_callable
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        'mempursuit.integrations.haystack needs haystack-ai: pip install "mempursuit[haystack]"'
    ) from e

from . import _common

__all__ = ["MemPursuitRanker"]

_OWNER = "MemPursuitRanker"
_MISSING = "run the retriever with return_embedding=True (or embed the documents before the ranker)"


@component
class MemPursuitRanker:
    """Reranks documents with MemPursuit: picks ``top_k`` of them, one at a
    time, each the document that best covers what the picks so far leave
    out of the query (:func:`mempursuit.select`).

    Put it after an embedding retriever that returns the embeddings
    (``InMemoryEmbeddingRetriever(..., return_embedding=True)`` or the like)
    and give it the same ``query_embedding``. ``Document.embedding`` is the
    candidate's vector (pool row i = input document i); ``Document.score``,
    when every document has one, is passed as ``relevance`` (used by rank,
    any scale; ``use_scores=False`` turns that off).

    The output is the picked documents in pick order, as copies whose
    ``meta`` gains the record ``meta["mempursuit"] = {"rank", "weight",
    "score", "residual_sq"}`` (see :mod:`mempursuit.integrations`);
    ``score`` keeps the retriever's score. A document whose id an earlier
    one has is skipped and reported (logger ``mempursuit.integrations``).

    :param top_k: the budget K (at most this many documents come back), an
        int >= 0.
    :param use_scores: pass the documents' scores as ``relevance`` (True or
        False).
    :param cost: a function of one ``Document`` returning its cost, a finite
        number >= 0 (e.g. its token count: ``lambda d: len(tok.encode(d.content))``),
        called once per input document in input order to build
        ``mempursuit.select``'s ``costs``; needs the ``cost_budget`` option
        (the most the returned documents may cost in total, in the same
        units), and the reverse: one without the other is an
        :class:`~mempursuit.integrations.OptionError` here. A pick that no
        longer fits the budget is skipped, the selection ends when nothing
        fits; ``top_k`` still caps the count (give a large one to let the
        budget decide). A cost function that
        raises or returns a negative, NaN or non-number value is a
        :class:`~mempursuit.integrations.DocumentError` naming the
        document. :meth:`to_dict` saves ``cost`` by its import path, so
        only a module-level function can be saved (a lambda or a local
        function is Haystack's ``SerializationError`` there).
    :param options: any other keyword of :func:`mempursuit.select`
        (``method``, ``gamma``, ``mmr_lambda``, ``cost_budget``, ...),
        passed through unchanged; what is not given takes ``select``'s
        default.

    Settings are checked here, at construction, as ``select`` checks them:
    an unknown option name, a bad ``top_k`` or ``use_scores``, or a value
    of the wrong type is an :class:`~mempursuit.integrations.OptionError`,
    a value ``select`` rejects its ``MemPursuitError``, both of kind
    ``"option"`` and prefixed ``MemPursuitRanker:``. What depends on the
    documents (``raw_relevance`` needs their scores) is checked at
    :meth:`run`.
    """

    def __init__(
        self,
        top_k: int = 10,
        use_scores: bool = True,
        cost: Optional[Callable[[Document], float]] = None,
        **options: Any,
    ) -> None:
        self.top_k = _common.budget(_OWNER, "top_k", top_k)
        self.use_scores = _common.flag(_OWNER, "use_scores", use_scores)
        self.options = _common.select_options(_OWNER, options)
        _common.check_cost(_OWNER, cost)
        _common.check_values(
            _OWNER, self.options, None if use_scores else False, cost is not None, ("top_k", "use_scores", "cost")
        )
        self.cost = cost

    def to_dict(self) -> Dict[str, Any]:
        """Serializes the component (``top_k``, ``use_scores``, ``cost`` by
        import path when given, and the options as given: plain Python
        values, NumPy scalars having been converted at construction).
        Haystack 3 loads a saved pipeline only from allowed modules:
        ``Pipeline.loads(text, allowed_modules=["mempursuit.integrations.haystack",
        "<the module of cost>"])``."""
        extra = {} if self.cost is None else {"cost": serialize_callable(self.cost)}
        return default_to_dict(self, top_k=self.top_k, use_scores=self.use_scores, **extra, **self.options)

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "MemPursuitRanker":
        """The component :meth:`to_dict` described (``cost`` imported by its
        path)."""
        params = data.get("init_parameters", {})
        if params.get("cost") is not None:
            data = {**data, "init_parameters": {**params, "cost": deserialize_callable(params["cost"])}}
        return default_from_dict(cls, data)

    @component.output_types(documents=List[Document])
    def run(
        self,
        documents: List[Document],
        query_embedding: List[float],
        top_k: Optional[int] = None,
        cost_budget: Optional[float] = None,
    ) -> Dict[str, List[Document]]:
        """Selects up to ``top_k`` (default: the component's) of
        ``documents`` for ``query_embedding``, within ``cost_budget``
        (default: the component's; given here, it needs the component's
        ``cost`` function, e.g. a per-request token budget).

        :returns: ``{"documents": picked documents in pick order}``.
        :raises DocumentError: a document has no embedding, one of another
            dimension than the others', or an unusable one, a score that is
            not a finite number, or no usable cost (the message names its
            position and id); mixed present/absent scores. Kind
            ``"input"``.
        :raises MemPursuitError: a query embedding that is not a finite,
            non-zero vector of numbers or whose dimension differs from the
            documents' (kind ``"input"``); a ``cost_budget`` value
            ``select`` rejects (kind ``"option"``).
        :raises OptionError: a ``top_k`` that is not an int >= 0, or a
            ``cost_budget`` without the component's ``cost`` (kind
            ``"option"``).
        """
        owner = "MemPursuitRanker.run"
        k = self.top_k if top_k is None else _common.budget(owner, "top_k", top_k)
        options = self.options
        if cost_budget is not None:
            options = {**options, "cost_budget": _common.plain(cost_budget)}
            _common.check_values(owner, options, None if self.use_scores else False, self.cost is not None)
        costs = _common.costs_of(_OWNER, self.cost, documents, [d.id for d in documents])
        specs = [
            _common.document(
                d.id,
                d.embedding,
                d.score if self.use_scores else None,
                "similarity",  # Haystack's embedding retrievers score by similarity
                c,
            )
            for d, c in zip(documents, costs)
        ]
        picks = _common.select(_OWNER, query_embedding, specs, k, options, _MISSING)
        out = [replace(documents[i], meta={**documents[i].meta, **meta}) for i, meta in picks]
        return {"documents": out}

    @component.output_types(documents=List[Document])
    async def run_async(
        self,
        documents: List[Document],
        query_embedding: List[float],
        top_k: Optional[int] = None,
        cost_budget: Optional[float] = None,
    ) -> Dict[str, List[Document]]:
        """:meth:`run` for an async pipeline (Haystack 2.x ``AsyncPipeline``,
        Haystack 3 ``Pipeline.run_async``): same parameters, result and
        errors. The ranker makes no embedding or I/O call (the documents
        carry their vectors), so the selection runs inline: milliseconds
        for P = 200, d = 1536, not worth a thread hop."""
        return self.run(
            documents=documents, query_embedding=query_embedding, top_k=top_k, cost_budget=cost_budget
        )
