"""The plumbing the framework integrations share (not public API beyond
:class:`DocumentError`, :class:`OptionError` and :data:`META_KEYS`):
checking the pass-through options against :data:`mempursuit.OPTIONS` and
the component's own settings, stacking the documents' vectors into a
(P, d) float32 pool and their scores and costs into (P,) arrays with
errors that name the document, running the selection and describing each
pick. Every error raised here for a bad document, query or setting is a
:class:`mempursuit.MemPursuitError` with its ``kind``.

Nothing here names a method, a default or a valid value: those belong to
``mempursuit.select`` (and the Rust core behind it).
"""

import collections
import math
import numbers
import re
from typing import Any, Callable, Dict, List, Literal, Mapping, Optional, Sequence, Tuple

import numpy as np

import mempursuit

#: The metadata keys each returned document carries (see the package
#: docstring of :mod:`mempursuit.integrations`).
META_KEYS = ("mempursuit_rank", "mempursuit_weight", "mempursuit_score", "mempursuit_residual_sq")

Kind = Literal["input", "option", "capacity"]

# select's arguments that the integration itself fills in.
_OWN_ARGUMENTS = ("query", "candidates", "k", "relevance", "costs")


class DocumentError(mempursuit.MemPursuitError):
    """A document handed to an integration cannot be selected from: it has
    no embedding (and none could be found), its embedding has the wrong
    dimension or shape, or it is unusable (a non-finite element, all
    zeros), its score (the retriever's, or ``metadata[score_key]``) is not
    a finite number, or the integration's ``cost`` function raised for it
    or gave it no finite cost >= 0. The message names the document's
    position in the input and its id, and says what to do.

    A :class:`mempursuit.MemPursuitError` (so also a ``ValueError``) of
    ``kind`` ``"input"``; one that wraps an error of ``mempursuit.select``
    about the document's row (``candidate 3: element 7 is not finite``)
    keeps that error's ``kind``."""

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
    """A setting of an integration that cannot be used: a keyword that
    neither the integration nor ``mempursuit.select`` takes, one the
    integration sets itself, a value of the wrong Python type or out of
    range (``top_k=-1``, ``use_scores="no"``, ``gamma=[1]``), a ``cost``
    without ``cost_budget`` or the reverse. The message starts with the
    component's name.

    A :class:`mempursuit.MemPursuitError` of ``kind`` ``"option"``, and
    also a ``TypeError`` (unknown names and wrong types were plain
    ``TypeError`` errors before), so that both ``except ValueError`` and
    ``except TypeError`` still catch them."""

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


def select_options(owner: str, options: Mapping[str, Any], own: Sequence[str] = ()) -> Dict[str, Any]:
    """``options`` as a dict, after checking that each name is an option of
    ``mempursuit.select`` (:data:`mempursuit.OPTIONS`) that the integration
    does not fill in itself; ``own`` are the component's own parameters,
    listed in the message.

    Only the names are checked here; the integrations' constructors check
    the values with :func:`check_values`. Raises :class:`OptionError` for
    an unknown or reserved name, worded as ``select``'s own error
    (``unknown option 'gama' (options: method, gamma, ...)``)."""
    options = dict(options)
    for name in options:
        if name in _OWN_ARGUMENTS:
            raise OptionError(
                f"{owner}: '{name}' is set by the integration (the budget is the "
                "integration's own k/top_k/top_n, the query and candidates come from the "
                "framework, relevance from the retriever's scores, costs from the cost= "
                "function, one call per document); pass the other options of mempursuit.select"
            )
    accepted = [n for n in mempursuit.OPTIONS if n not in _OWN_ARGUMENTS]
    for name in options:
        if name not in accepted:
            theirs = f"; {owner}'s own: {', '.join(own)}" if own else ""
            raise OptionError(f"{owner}: unknown option '{name}' (options: {', '.join(accepted)}{theirs})")
    # NumPy scalars (np.float32(0.7), np.int64(6)) become plain Python
    # values here, at construction: a component's settings serialize
    # (Haystack Pipeline.dumps, LlamaIndex to_json, pydantic JSON).
    return {name: value.item() if isinstance(value, np.generic) else value for name, value in options.items()}


def method_options(owner: str, given: Any) -> Dict[str, Any]:
    """The ``method_options`` a pydantic component was given (None: none)
    as a dict, or an :class:`OptionError` when it is not a mapping."""
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise OptionError(
            f"{owner}: method_options must be a dict of mempursuit.select options, got {_short(given)}"
        )
    return dict(given)


def check_values(owner: str, options: Mapping[str, Any], relevance: Optional[bool], costs: bool) -> None:
    """The option values, checked at construction as ``mempursuit.select``
    checks them on each call (ranges, options that do not apply to the
    method, ...), so that a bad value fails where it is written.
    ``relevance``: whether the integration passes relevance scores (True,
    False, or None when that depends on the documents: then only an error
    with and without them is raised); ``costs``: whether it passes costs.

    Raises the ``MemPursuitError`` of ``select`` (its message prefixed by
    ``owner``), or an :class:`OptionError` for a value of the wrong Python
    type (``select``'s TypeError, prefixed)."""
    q = np.ones(1, np.float32)
    pool = np.zeros((0, 1), np.float32)
    first = None
    for rel in [True, False] if relevance is None else [relevance]:
        try:
            mempursuit.select(
                q,
                pool,
                0,
                relevance=np.zeros(0) if rel else None,
                costs=np.zeros(0) if costs else None,
                **options,
            )
            return
        except mempursuit.MemPursuitError as e:
            first = first or e
        except TypeError as e:
            raise OptionError(f"{owner}: {e}") from e
    assert first is not None
    raise type(first)(f"{owner}: {first}", first.kind) from first


def budget(owner: str, name: str, value: Any) -> int:
    """The count budget (``k``, ``top_k``, ``top_n``) as an int, or an
    :class:`OptionError` naming it: an integer >= 0 (not a bool)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 0:
        raise OptionError(f"{owner}: {name} must be an int >= 0, got {value!r}")
    return int(value)


def flag(owner: str, name: str, value: Any) -> bool:
    """A boolean setting (``use_scores``): True or False, else an
    :class:`OptionError` (a string such as ``"no"`` is not taken as true)."""
    if not isinstance(value, (bool, np.bool_)):
        raise OptionError(f"{owner}: {name} must be True or False, got {value!r}")
    return bool(value)


def check_cost(owner: str, cost: Optional[Callable[[Any], Any]], options: Mapping[str, Any]) -> None:
    """A ``cost`` function and a ``cost_budget`` option go together, as
    ``costs`` and ``cost_budget`` do in :func:`mempursuit.select`: one
    without the other, or a ``cost`` that is not callable, is an
    :class:`OptionError`."""
    has_budget = options.get("cost_budget") is not None
    if cost is not None and not callable(cost):
        raise OptionError(f"{owner}: cost must be a function of one document returning its cost, got {cost!r}")
    if cost is not None and not has_budget:
        raise OptionError(
            f"{owner}: cost= needs cost_budget= (the most the selected documents may cost in "
            "total, in the units of cost, e.g. tokens)"
        )
    if cost is None and has_budget:
        raise OptionError(
            f"{owner}: cost_budget= needs cost= (a function giving each document's cost, e.g. "
            "lambda doc: its token count)"
        )


def costs_of(
    owner: str, cost: Optional[Callable[[Any], Any]], items: Sequence[Any], names: Sequence[str]
) -> Optional[List[float]]:
    """``[cost(item) for item in items]`` as floats (None without ``cost``),
    called in pool order before any embedding call. Raises DocumentError
    naming the document when ``cost`` raises for it or returns anything but
    a finite real number >= 0."""
    if cost is None:
        return None
    out = []
    for name, item in zip(names, items):
        try:
            value = cost(item)
        except Exception as e:
            raise DocumentError(f"{owner}: {name}: cost() raised {type(e).__name__}: {e}") from e
        try:
            if isinstance(value, (bool, str, bytes)):
                raise TypeError
            c = float(value)
        except (TypeError, ValueError):
            raise DocumentError(
                f"{owner}: {name}: cost() returned {value!r}, not a number (give each document "
                "a finite cost >= 0, e.g. its token count)"
            ) from None
        if not math.isfinite(c) or c < 0:
            raise DocumentError(
                f"{owner}: {name}: cost() returned {value!r}; a cost must be finite and >= 0 "
                "(e.g. the document's token count)"
            )
        out.append(c)
    return out


def score(owner: str, name: str, value: Any, what: str, hint: str) -> float:
    """A document's score (``what``: where it was read, e.g. ``its score``
    or ``metadata['s'] (score_key)``) as a finite float, or a DocumentError
    naming the document and the value (``hint``: what to do)."""
    try:
        if isinstance(value, (bool, np.bool_, str, bytes)):
            raise TypeError
        s = float(value)
    except (TypeError, ValueError):
        raise DocumentError(f"{owner}: {name}: {what} is {value!r}, not a number; {hint}") from None
    if not math.isfinite(s):
        raise DocumentError(f"{owner}: {name}: {what} is {value!r}, not a finite number; {hint}")
    return s


def _as_vector(value: Any) -> np.ndarray:
    """``value`` as a float32 array; ValueError (the reason, naming the
    value) for a string or anything whose elements are not real numbers."""
    if isinstance(value, (str, bytes)):
        raise ValueError(f"got the string {_short(value)}")
    try:
        raw = np.asarray(value)
        holds = {"U": "strings", "S": "bytes", "b": "booleans", "c": "complex numbers"}.get(raw.dtype.kind)
        if holds is not None:
            raise ValueError(f"it holds {holds}: {_short(value)}")
        return np.asarray(raw, dtype=np.float32)
    except (TypeError, ValueError) as e:
        raise ValueError(str(e)) from e


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _row(owner: str, name: str, vector: Any, hint: str) -> np.ndarray:
    if vector is None:
        raise DocumentError(f"{owner}: {name} has no embedding; {hint}")
    try:
        row = _as_vector(vector)
    except ValueError as e:
        raise DocumentError(f"{owner}: {name}: its embedding is not a vector of numbers ({e})") from e
    if row.ndim != 1:
        raise DocumentError(f"{owner}: {name}: its embedding has shape {row.shape}, expected a flat vector")
    return row


def query_vector(owner: str, query: Any, what: str = "query_embedding") -> np.ndarray:
    """The query embedding (called ``what`` in messages) as float32 (d,),
    checked as ``mempursuit.select`` checks it (finite, not all zeros, a
    norm in range): a ``MemPursuitError`` of kind ``"input"`` before any
    store or model call."""
    if query is None:
        raise mempursuit.MemPursuitError(f"{owner}: no query embedding ({what} is None)", "input")
    try:
        q = _as_vector(query)
    except ValueError as e:
        raise mempursuit.MemPursuitError(
            f"{owner}: {what} is not a vector of numbers ({e}); embed the query with the "
            "documents' model and pass its vector",
            "input",
        ) from e
    if q.ndim != 1 or q.size == 0:
        raise mempursuit.MemPursuitError(
            f"{owner}: {what} has shape {q.shape}, expected (d,) with d >= 1", "input"
        )
    mempursuit.select(q, np.zeros((0, q.shape[0]), np.float32), 0)
    return q


def check_query_dimension(owner: str, what: str, d: int, dimension: int, whose: str) -> None:
    """A MemPursuitError (``"input"``) naming the query when its ``d``
    values differ from ``dimension``, the dimension of ``whose``
    embeddings (all of them agree)."""
    if d != dimension:
        raise mempursuit.MemPursuitError(
            f"{owner}: {what} has {d} values, {whose} embeddings have {dimension} (embed the "
            "query with the model that embedded them)",
            "input",
        )


def selection(
    owner: str,
    query: Any,
    vectors: Sequence[Any],
    names: Sequence[str],
    k: int,
    relevance: Optional[Sequence[float]],
    options: Mapping[str, Any],
    missing_hint: str,
    costs: Optional[Sequence[float]] = None,
    query_name: str = "query_embedding",
    noun: str = "document",
) -> "mempursuit.Selection":
    """``mempursuit.select(query, pool, k, relevance=..., costs=...,
    **options)`` on the pool stacked from ``vectors`` (row i =
    ``vectors[i]``, the document called ``names[i]`` in errors; ``costs``
    from :func:`costs_of`; ``query_name``, what the query is called, and
    ``noun``, what a document is called, in errors).

    Dimensions: when every document's embedding has the same dimension and
    the query's differs, the error names the query; when the documents
    differ among themselves, it names the first one that differs from the
    query (or, when the query matches none, from the most common
    dimension).

    Raises DocumentError for a document without a usable vector (the
    message says ``missing_hint`` when it has none), MemPursuitError for a
    bad query (``"input"``) or option (``"option"``)."""
    q = query_vector(owner, query, query_name)
    d = q.shape[0]
    rows = [_row(owner, name, vector, missing_hint) for name, vector in zip(names, vectors)]
    dims = [row.shape[0] for row in rows]
    if rows and all(n == dims[0] for n in dims):
        check_query_dimension(owner, query_name, d, dims[0], f"the {noun}s'")
    elif rows:
        common = d if d in dims else collections.Counter(dims).most_common(1)[0][0]
        i = next(i for i, n in enumerate(dims) if n != common)
        if common == d:
            against = f"the query embedding has {d}"
        else:
            j = dims.index(common)
            against = f"{names[j]} has {common} and the query embedding {d}"
        raise DocumentError(
            f"{owner}: {names[i]}: its embedding has dimension {dims[i]}, {against} (were they "
            "made by the same model?)"
        )
    pool = np.stack(rows) if rows else np.zeros((0, d), np.float32)
    kwargs = dict(options)
    if relevance is not None:
        kwargs["relevance"] = np.asarray(relevance, dtype=np.float64)
    if costs is not None:
        kwargs["costs"] = np.asarray(costs, dtype=np.float64)
    try:
        return mempursuit.select(q, pool, k, **kwargs)
    except mempursuit.MemPursuitError as e:
        # The core names rows as "candidate i": say which document that is.
        m = re.match(r"candidate (\d+)\b", str(e))
        if m and int(m.group(1)) < len(names):
            raise DocumentError(f"{owner}: {names[int(m.group(1))]}: {e}", e.kind) from e
        raise


def picks(sel: "mempursuit.Selection") -> List[Tuple[int, Dict[str, Any]]]:
    """(input position, metadata) for each pick, in pick order; the
    metadata has the keys of :data:`META_KEYS` as plain Python values."""
    weights = sel.weights
    has_weights = weights.shape[0] == sel.picks.shape[0]
    steps = sel.steps
    out = []
    for r, i in enumerate(sel.picks.tolist()):
        meta: Dict[str, Any] = {
            "mempursuit_rank": r,
            "mempursuit_weight": float(weights[r]) if has_weights else None,
            "mempursuit_score": float(steps["score"][r]),
        }
        if has_weights:
            meta["mempursuit_residual_sq"] = float(steps["residual_sq"][r])
        out.append((i, meta))
    return out




def scores_as_relevance(
    owner: str, scores: Sequence[Optional[float]], names: Sequence[str]
) -> Optional[List[float]]:
    """The retriever's scores as ``relevance``: all of them when every
    document has one, None when none has; a mix is a DocumentError naming
    the first document without a score, and so is a score that is not a
    finite number (naming the value)."""
    given = [s is not None for s in scores]
    if not any(given):
        return None
    hint = (
        "give every document a finite score or pass use_scores=False (relevance is then the cosine "
        "to the query)"
    )
    if not all(given):
        name = names[given.index(False)]
        raise DocumentError(f"{owner}: {name} has no score while others have one; {hint}")
    return [score(owner, name, s, "its score", hint) for name, s in zip(names, scores)]


def document_name(i: int, doc_id: Any, kind: str = "document") -> str:
    return f"{kind} {i} (id {doc_id!r})"
