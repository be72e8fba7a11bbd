"""The adapter plumbing the framework integrations share (not public API
beyond :class:`DocumentError`, :class:`OptionError`, :data:`META_KEY` and
:data:`META_FIELDS`): framework documents become the document layer's
dicts (``id``, ``embedding``, ``score``, ``score_kind``, ``cost``), and the
layer's result becomes metadata on copies of them.

Every rule lives in the Rust document layer (``mempursuit::documents``,
docs/DOCUMENTS.md), reached through ``mempursuit._mempursuit``:
duplicate ids, score orientation, what is missing, costs and budgets, the
checks of the settings, the errors (with ``kind``, ``index``, ``id`` and
``argument`` as fields) and the result record. This module holds no
method name, default, valid value or error text of its own to match: it
only adds the component's name in front of the layer's messages and, for
a document without a vector, the framework's hint on where to get one.
"""

import logging
from typing import Any, Callable, Dict, List, Literal, Mapping, Optional, Sequence, Tuple

import numpy as np

import mempursuit
from mempursuit import _mempursuit as _layer

#: The metadata key of the record each returned document carries, and the
#: record's fields, as the Rust layer defines them.
META_KEY: str = _layer.METADATA_KEY
META_FIELDS: Tuple[str, ...] = tuple(_layer.METADATA_FIELDS)

Kind = Literal["input", "option", "capacity"]

_log = logging.getLogger("mempursuit.integrations")


class DocumentError(mempursuit.MemPursuitError):
    """A document handed to an integration cannot be selected from (the
    document layer's error of kind ``"input"`` about one document): its
    ``index`` (position in the input), ``id`` and ``argument``
    (``"embedding"``, ``"score"``, ``"cost"``, ...) are fields, and the
    message, prefixed by the component's name, names them and says what to
    do.

    A :class:`mempursuit.MemPursuitError` (so also a ``ValueError``)."""

    __module__ = "mempursuit.integrations"

    def __init__(
        self,
        message: str,
        kind: Kind = "input",
        index: Optional[int] = None,
        id: Optional[str] = None,
        argument: Optional[str] = None,
    ) -> None:
        super().__init__(message, kind, index, id, argument)


class OptionError(mempursuit.MemPursuitError, TypeError):
    """A setting of an integration that cannot be used (the document
    layer's error of kind ``"option"``, or a value of the wrong Python
    type): ``argument`` names the setting. The message starts with the
    component's name.

    A :class:`mempursuit.MemPursuitError` of ``kind`` ``"option"``, and
    also a ``TypeError``, so that both ``except ValueError`` and ``except
    TypeError`` catch it."""

    __module__ = "mempursuit.integrations"

    def __init__(
        self,
        message: str,
        kind: Kind = "option",
        index: Optional[int] = None,
        id: Optional[str] = None,
        argument: Optional[str] = None,
    ) -> None:
        super().__init__(message, kind, index, id, argument)


def adapt(owner: str, e: Exception, hint: Optional[str] = None) -> Exception:
    """The layer's error ``e`` as the integration raises it: its message
    prefixed by ``owner`` (and followed by ``hint`` when given), its fields
    kept; an option error (or a ``TypeError``) is an :class:`OptionError`,
    an error about one document a :class:`DocumentError`."""
    tail = f"; {hint}" if hint else ""
    if isinstance(e, mempursuit.MemPursuitError):
        fields = (e.kind, e.index, e.id, e.argument)
        if e.kind == "option":
            return OptionError(f"{owner}: {e}{tail}", *fields)
        if e.index is not None:
            return DocumentError(f"{owner}: {e}{tail}", *fields)
        return type(e)(f"{owner}: {e}{tail}", *fields)
    return OptionError(f"{owner}: {e}{tail}")


def plain(value: Any) -> Any:
    """A NumPy scalar as the plain Python value (``np.float32(0.7)`` ->
    ``0.7``), anything else as it is: settings stay serializable (Haystack
    ``Pipeline.dumps``, LlamaIndex ``to_json``)."""
    return value.item() if isinstance(value, np.generic) else value


def select_options(owner: str, options: Mapping[str, Any], own: Sequence[str] = ()) -> Dict[str, Any]:
    """``options`` (the keywords passed through to ``select``) as a dict of
    plain values; their names and values are checked by :func:`check_values`."""
    del owner, own  # the names are checked by the layer (check_values)
    return {name: plain(value) for name, value in dict(options).items()}


def method_options(owner: str, given: Any) -> Dict[str, Any]:
    """The ``method_options`` a pydantic component was given (None: none)
    as a dict, or an :class:`OptionError` when it is not a mapping."""
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise OptionError(f"{owner}: method_options must be a dict of mempursuit.select options, got {given!r:.60}")
    return dict(given)


def check_values(
    owner: str,
    options: Mapping[str, Any],
    relevance: Optional[bool],
    costs: bool,
    own: Sequence[str] = (),
    budget_later: bool = False,
    scores_hint: Optional[str] = None,
) -> None:
    """The settings checked once by the layer (``check_document_settings``):
    option names and values, whether scores are passed (``relevance``:
    True, False, or None when that depends on the documents), whether a
    cost function is given (``costs``) and paired with a cost budget.
    Raises :class:`OptionError` (``own``, the component's own settings, are
    listed after an unknown name; ``raw_relevance`` without scores is
    followed by ``scores_hint``, else by :data:`RAW_WITHOUT_SCORES`)."""
    try:
        _layer.check_document_settings(dict(options), relevance, costs, budget_later)
    except (mempursuit.MemPursuitError, TypeError) as e:
        unknown = getattr(e, "argument", None) in options and e.argument not in mempursuit.OPTIONS
        hint = f"{owner}'s own settings: {', '.join(own)}" if unknown and own else None
        if "needs relevance scores" in str(e):
            hint = scores_hint or RAW_WITHOUT_SCORES
        raise adapt(owner, e, hint) from e


#: The fix that follows the layer's refusal of ``raw_relevance`` where no
#: scores are passed (always open: the relevance is then the cosine).
RAW_WITHOUT_SCORES = (
    "leave out raw_relevance (the relevance is then the cosine of each document's vector with the query), "
    "or pass the documents' similarity scores"
)


def budget(owner: str, name: str, value: Any) -> int:
    """A count setting (``k``, ``top_k``, ``top_n``, ``fetch_k``) as an int,
    checked by the layer; an :class:`OptionError` naming it otherwise."""
    try:
        return int(_layer.check_count(name, value))
    except (mempursuit.MemPursuitError, TypeError) as e:
        raise adapt(owner, e) from e


def flag(owner: str, name: str, value: Any) -> bool:
    """A boolean setting (``use_scores``): True or False (Python's or
    NumPy's), else an :class:`OptionError`."""
    if not isinstance(value, (bool, np.bool_)):
        raise OptionError(f"{owner}: {name} must be True or False, got {value!r}", argument=name)
    return bool(value)


def check_query(owner: str, query: Any) -> None:
    """The query embedding checked by the layer before a store is asked."""
    try:
        _layer.check_query(query.tolist() if isinstance(query, np.ndarray) else query)
    except mempursuit.MemPursuitError as e:
        raise adapt(owner, e) from e


def check_cost(owner: str, cost: Optional[Callable[[Any], Any]]) -> None:
    """A ``cost`` setting is a function of one document (or None)."""
    if cost is not None and not callable(cost):
        raise OptionError(
            f"{owner}: cost must be a function of one document returning its cost, got {cost!r:.60}",
            argument="cost",
        )


def costs_of(owner: str, cost: Optional[Callable[[Any], Any]], items: Sequence[Any], ids: Sequence[Any]) -> List[Any]:
    """``cost(item)`` for each item in order (None each without ``cost``),
    as returned: the layer checks the values. A cost function that raises
    is a :class:`DocumentError` naming the document (``argument`` ``"cost"``)."""
    if cost is None:
        return [None] * len(items)
    out = []
    for i, item in enumerate(items):
        try:
            out.append(plain(cost(item)))
        except Exception as e:
            doc_id = None if ids[i] is None else str(ids[i])
            name = f"document {i}" if doc_id is None else f'document {i} (id "{doc_id}")'
            raise DocumentError(
                f"{owner}: {name}: cost() raised {type(e).__name__}: {e}", "input", i, doc_id, "cost"
            ) from e
    return out


def document(
    doc_id: Any,
    embedding: Any,
    score: Any = None,
    score_kind: Optional[str] = None,
    cost: Any = None,
) -> Dict[str, Any]:
    """One document for the layer (None: absent)."""
    if isinstance(embedding, np.ndarray):
        embedding = embedding.tolist()
    return {
        "id": None if doc_id is None else str(doc_id),
        "embedding": embedding,
        "score": plain(score),
        "score_kind": score_kind,
        "cost": cost,
    }


def select(
    owner: str,
    query: Any,
    documents: Sequence[Dict[str, Any]],
    k: int,
    options: Mapping[str, Any],
    missing_hint: Optional[str] = None,
) -> List[Tuple[int, Dict[str, Any]]]:
    """The layer's ``select_documents``: ``(input index, metadata)`` for
    each pick in pick order, the metadata ``{META_KEY: {field: value}}``
    as the layer makes it. Duplicate ids are skipped by the layer and
    logged here (logger ``mempursuit.integrations``, level WARNING; the
    record's ``mempursuit_duplicates`` holds the ``[index, first_index]``
    pairs).
    Errors: the layer's, adapted (:func:`adapt`); ``missing_hint`` follows
    the error for a document without an embedding."""
    if isinstance(query, np.ndarray):
        query = query.tolist()
    try:
        result = _layer.select_documents(query, list(documents), k, dict(options))
    except (mempursuit.MemPursuitError, TypeError) as e:
        index = getattr(e, "index", None)
        missing = index is not None and e.argument == "embedding" and documents[index]["embedding"] is None
        raise adapt(owner, e, missing_hint if missing else None) from e
    if result["duplicates"]:
        _log.warning(
            "%s: %d document(s) repeat an earlier id and were skipped ([index, first index]: %s)",
            owner,
            len(result["duplicates"]),
            result["duplicates"],
            extra={"mempursuit_duplicates": result["duplicates"]},
        )
    return [(p["index"], p["metadata"]) for p in result["picks"]]
