"""The plumbing the framework integrations share (not public API beyond
:class:`DocumentError` and :data:`META_KEYS`): checking the pass-through
options against :func:`mempursuit.select`'s signature, stacking the
documents' vectors into a (P, d) float32 pool and their costs into a (P,)
array with errors that name the document, running the selection and
describing each pick.

Nothing here names a method, a default or a valid value: those belong to
``mempursuit.select`` (and the Rust core behind it).
"""

import inspect
import math
import re
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

import mempursuit

#: The metadata keys each returned document carries (see the package
#: docstring of :mod:`mempursuit.integrations`).
META_KEYS = ("mempursuit_rank", "mempursuit_weight", "mempursuit_score", "mempursuit_residual_sq")

# select's arguments that the integration itself fills in.
_OWN_ARGUMENTS = ("query", "candidates", "k", "relevance", "costs")


class DocumentError(ValueError):
    """A document handed to an integration cannot be selected from: it has
    no embedding (and none could be found), its embedding has the wrong
    dimension or shape, or it is unusable (a non-finite element, all
    zeros), or the integration's ``cost`` function raised for it or gave
    it no finite cost >= 0. The message names the document's position in the input and its
    id, and says what to do."""


def select_options(owner: str, options: Mapping[str, Any]) -> Dict[str, Any]:
    """``options`` as a dict, after checking that each name is a keyword of
    ``mempursuit.select`` that the integration does not fill in itself.

    Only the names are checked here; the integrations' constructors check
    the values with :func:`check_values`. Raises TypeError for an unknown
    or reserved name."""
    options = dict(options)
    for name in options:
        if name in _OWN_ARGUMENTS:
            raise TypeError(
                f"{owner}: '{name}' is set by the integration (the budget is the "
                "integration's own k/top_k/top_n, the query and candidates come from the "
                "framework, relevance from the retriever's scores, costs from the cost= "
                "function, one call per document); pass the other keywords of mempursuit.select"
            )
    try:
        params = inspect.signature(mempursuit.select).parameters
    except (TypeError, ValueError):  # no introspectable signature: select checks
        return options
    if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return options
    accepted = [n for n, p in params.items() if p.kind == inspect.Parameter.KEYWORD_ONLY]
    for name in options:
        if name not in accepted:
            passable = ", ".join(n for n in accepted if n not in _OWN_ARGUMENTS)
            raise TypeError(f"{owner}: mempursuit.select has no keyword '{name}' (it takes {passable})")
    return options


def check_values(owner: str, options: Mapping[str, Any], relevance: Optional[bool], costs: bool) -> None:
    """The option values, checked at construction as ``mempursuit.select``
    checks them on each call (ranges, options that do not apply to the
    method, ...), so that a bad value fails where it is written.
    ``relevance``: whether the integration passes relevance scores (True,
    False, or None when that depends on the documents: then only an error
    with and without them is raised); ``costs``: whether it passes costs.

    Raises the ``MemPursuitError`` of ``select`` (its message prefixed by
    ``owner``), or its TypeError for a value of the wrong Python type."""
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
    assert first is not None
    raise type(first)(f"{owner}: {first}", first.kind) from first


def check_cost(owner: str, cost: Optional[Callable[[Any], Any]], options: Mapping[str, Any]) -> None:
    """A ``cost`` function and a ``cost_budget`` option go together, as
    ``costs`` and ``cost_budget`` do in :func:`mempursuit.select`: one
    without the other is a ValueError (so is a ``cost`` that is not
    callable, a TypeError)."""
    budget = options.get("cost_budget") is not None
    if cost is not None and not callable(cost):
        raise TypeError(f"{owner}: cost must be a function of one document returning its cost, got {cost!r}")
    if cost is not None and not budget:
        raise ValueError(
            f"{owner}: cost= needs cost_budget= (the most the selected documents may cost in "
            "total, in the units of cost, e.g. tokens)"
        )
    if cost is None and budget:
        raise ValueError(
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


def _row(owner: str, name: str, vector: Any, hint: str) -> np.ndarray:
    if vector is None:
        raise DocumentError(f"{owner}: {name} has no embedding; {hint}")
    try:
        row = np.asarray(vector, dtype=np.float32)
    except (TypeError, ValueError) as e:
        raise DocumentError(f"{owner}: {name}: its embedding is not a vector of numbers ({e})") from e
    if row.ndim != 1:
        raise DocumentError(f"{owner}: {name}: its embedding has shape {row.shape}, expected a flat vector")
    return row


def query_vector(owner: str, query: Any) -> np.ndarray:
    """The query embedding as float32 (d,), checked as ``mempursuit.select``
    checks it (finite, not all zeros, a norm in range): a ValueError
    (``MemPursuitError`` for its values) before any store or model call."""
    if query is None:
        raise ValueError(f"{owner}: no query embedding")
    q = np.asarray(query, dtype=np.float32)
    if q.ndim != 1 or q.size == 0:
        raise ValueError(f"{owner}: the query embedding has shape {q.shape}, expected (d,) with d >= 1")
    mempursuit.select(q, np.zeros((0, q.shape[0]), np.float32), 0)
    return q


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
) -> "mempursuit.Selection":
    """``mempursuit.select(query, pool, k, relevance=..., costs=...,
    **options)`` on the pool stacked from ``vectors`` (row i =
    ``vectors[i]``, the document called ``names[i]`` in errors; ``costs``
    from :func:`costs_of`).

    Raises DocumentError for a document without a usable vector (the
    message says ``missing_hint`` when it has none), ValueError for a bad
    query or option, TypeError for a bad ``k``."""
    q = query_vector(owner, query)
    d = q.shape[0]
    rows = []
    for name, vector in zip(names, vectors):
        row = _row(owner, name, vector, missing_hint)
        if row.shape[0] != d:
            raise DocumentError(
                f"{owner}: {name}: its embedding has dimension {row.shape[0]}, the query "
                f"embedding has {d} (were they made by the same model?)"
            )
        rows.append(row)
    pool = np.stack(rows) if rows else np.zeros((0, d), np.float32)
    kwargs = dict(options)
    if relevance is not None:
        kwargs["relevance"] = np.asarray(relevance, dtype=np.float64)
    if costs is not None:
        kwargs["costs"] = np.asarray(costs, dtype=np.float64)
    try:
        return mempursuit.select(q, pool, k, **kwargs)
    except ValueError as e:
        # The core names rows as "candidate i": say which document that is.
        m = re.match(r"candidate (\d+)\b", str(e))
        if m and int(m.group(1)) < len(names):
            raise DocumentError(f"{owner}: {names[int(m.group(1))]}: {e}") from e
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
    the first document without a score."""
    given = [s is not None for s in scores]
    if not any(given):
        return None
    if not all(given):
        name = names[given.index(False)]
        raise DocumentError(
            f"{owner}: {name} has no score while others have one; give every document a "
            "score or pass use_scores=False (relevance is then the cosine to the query)"
        )
    return [float(s) for s in scores]  # type: ignore[arg-type]


def document_name(i: int, doc_id: Any, kind: str = "document") -> str:
    return f"{kind} {i} (id {doc_id!r})"
