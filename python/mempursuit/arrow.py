"""MemPursuit on Arrow data: many (query, pool) pairs from Arrow columns,
without copying the embeddings, for batch engines (Ray Data, Dask, Spark).

Needs pyarrow (``pip install "mempursuit[arrow]"``, from a clone
``pip install "./python[arrow]"``); the base package depends on numpy only.

* :func:`select_arrow` -- queries and pools as Arrow arrays, the picks,
  weights and stop reasons back as a ``pyarrow.RecordBatch`` aligned with
  the queries;
* :func:`select_table` -- the same on the columns of a ``pyarrow.Table`` or
  ``RecordBatch``, returned with the result columns appended: a Ray Data
  ``map_batches(..., batch_format="pyarrow", zero_copy_batch=True)``
  function as it stands.

Both run :func:`mempursuit.select_batch` (native threads, the GIL released)
with the same keyword options (the one specification of a call; by default
the recommended setting), so row i's result is ``mempursuit.select`` of row
i's query and pool. Nothing here names a method, an option or a default.

Column types (d: the embedding dimension, the same in every row; P_i: the
pool size of row i, which may differ between rows):

=============  ============================================================
queries        ``fixed_size_list<float32>[d]`` (or ``list<float32>`` /
               ``large_list<float32>`` with d values in every row), n rows
pools          ``list<fixed_size_list<float32>[d]>`` (or ``large_list``,
               or ``list<list<float32>>`` with d values in every vector),
               n rows; row i is the pool of query i, P_i × d. ``float16``
               values are used as float16 (no copy under
               ``storage="f16"``).
relevance      ``list<float32>`` (or ``float64``, ``float16``; ``large_list``
               or ``fixed_size_list`` too), n rows, row i with P_i values:
               the retriever's scores, ``select``'s ``relevance``
costs          the same shape as relevance: each candidate's cost (e.g.
               its token count), passed to ``select_batch`` as ``costs=``
               (a binding without token budgets reports it as an unknown
               option)
=============  ============================================================

Pools held as one (N, d) matrix and n + 1 offsets (row i = matrix rows
``offsets[i]:offsets[i+1]``) are such a column without a copy:
``pyarrow.ListArray.from_arrays(offsets,
pyarrow.FixedSizeListArray.from_arrays(matrix.ravel(), d))``.

**No copy of the embeddings.** Every float32 (and float16) buffer reaches
the Rust core as one NumPy view of the Arrow buffer
(``flatten().to_numpy(zero_copy_only=True)``, which honours slice offsets),
borrowed read-only: the queries as one (n, d) array, the pools as one (N, d)
matrix with the list column's offsets (``select_batch``'s ``offsets=``),
relevance and costs as one (N,) vector. A column of several chunks (a
``Table``'s) is taken a range of rows at a time, each range within one
chunk of every column. Only relevance or costs of another float type are
converted (one copy, N values), and the list offsets (n + 1 integers). Arrow
data is never modified.

Errors: a null (a row, a vector or a value), offsets that do not match (a
relevance row whose length is not its pool's), a dimension that differs
between rows or between the query and pool columns, or queries and pools of
different lengths are a :class:`mempursuit.MemPursuitError` (kind
``"input"``) naming the column, the row (= ``select_batch``'s pair) and,
where there is one, the candidate and element. A column of another type
(``list<double>``, ``fixed_size_list<int8>``, a string column) is a
``TypeError`` naming the column, its type and the one expected. Errors of the
selection itself are ``select_batch``'s (``pair 4: candidate 3: element 7 is
not finite (NaN)``: pair 4 is row 4).
"""

import re
from typing import Any, Dict, List, Optional, Sequence, Tuple, TypeVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

import mempursuit

from ._errors import MemPursuitError

__all__ = ["RESULT_COLUMNS", "select_arrow", "select_table"]

#: The columns of :func:`select_arrow`'s result, in order (see there).
RESULT_COLUMNS = ("picks", "weights", "stop_reason", "excluded", "skipped")

_INT32_MAX = 2**31 - 1

#: A column: one Arrow array, or a chunked one (a ``Table`` column).
Column = Any  # pyarrow.Array | pyarrow.ChunkedArray (pyarrow has no type stubs)
_Batch = TypeVar("_Batch")


def _input_error(message: str) -> MemPursuitError:
    return MemPursuitError(message, "input")


def _type_error(name: str, t: Any, expected: str) -> TypeError:
    return TypeError(
        f"{name}: type {t} is not {expected}; cast the column (pyarrow.compute.cast) to that type"
    )


def _first(mask: Any) -> int:
    """The index of the first true value of a boolean Arrow array."""
    return int(np.flatnonzero(mask.to_numpy(zero_copy_only=False))[0])


def _is_list(t: Any) -> bool:
    return bool(pa.types.is_list(t) or pa.types.is_large_list(t))


def _offsets(chunk: Any) -> npt.NDArray[np.int64]:
    """The n + 1 offsets of a list array, from 0 (a slice's too)."""
    if pa.types.is_fixed_size_list(chunk.type):
        return np.arange(len(chunk) + 1, dtype=np.int64) * int(chunk.type.list_size)
    offsets = np.asarray(chunk.offsets.to_numpy(zero_copy_only=False), np.int64)
    relative: npt.NDArray[np.int64] = offsets - offsets[0]
    return relative


def _segments(columns: Sequence[Column], names: Sequence[str]) -> List[Tuple[int, int]]:
    """Row ranges [start, stop) that lie in one chunk of every column (all
    rows in one range when every column is one array)."""
    cuts = set()
    n = None
    for column, name in zip(columns, names):
        lengths = [len(c) for c in column.chunks] if isinstance(column, pa.ChunkedArray) else [len(column)]
        if n is not None and sum(lengths) != n:
            raise _input_error(
                f"{names[0]} has {n} rows but {name} has {sum(lengths)}: pass one row per query"
            )
        n = sum(lengths)
        cuts.update(np.cumsum([0, *lengths]).tolist())
    edges = sorted(cuts)
    return [(a, b) for a, b in zip(edges, edges[1:])] or [(0, 0)]


def _piece(column: Column, start: int, stop: int) -> Any:
    """Rows [start, stop) of ``column`` as one Arrow array (no copy: the
    range lies in one chunk)."""
    if isinstance(column, pa.Array):
        return column.slice(start, stop - start)
    chunks = [c for c in column.slice(start, stop - start).chunks if len(c)]
    if not chunks:
        return pa.array([], type=column.type)
    (chunk,) = chunks
    return chunk


def _vectors(
    array: Any, name: str, where: Any, allowed: Tuple[Any, ...], expected: str
) -> Tuple[npt.NDArray[Any], Optional[int]]:
    """An Arrow array of embeddings (one per element:
    ``fixed_size_list<float>[d]``, or ``list<float>`` with d values in
    each) as an (m, d) NumPy view of its values buffer, and d (None when
    the array has no element to tell it). ``where(j)`` names element j in
    messages."""
    t = array.type
    if not (pa.types.is_fixed_size_list(t) or _is_list(t)) or t.value_type not in allowed:
        raise _type_error(name, t, expected)
    if array.null_count:
        raise _input_error(f"{name}: {where(_first(array.is_null()))} is null; drop the row or fill it")
    m = len(array)
    if pa.types.is_fixed_size_list(t):
        d: Optional[int] = t.list_size
    else:
        lengths = np.diff(_offsets(array))
        d = int(lengths[0]) if m else None
        bad = np.flatnonzero(lengths != d)
        if bad.size:
            j = int(bad[0])
            raise _input_error(
                f"{name}: {where(j)} has {lengths[j]} values but {where(0)} has {d}: "
                "every embedding must have the same dimension d"
            )
    values = array.flatten()
    if values.null_count:
        e = _first(values.is_null())
        raise _input_error(f"{name}: {where(e // (d or 1))}: element {e % (d or 1)} is null")
    return np.asarray(values.to_numpy(zero_copy_only=True)).reshape(m, d or 0), d


_QUERIES = "fixed_size_list<float32>[d] (or list<float32>): one query embedding per row"
_POOLS = (
    "list<fixed_size_list<float32>[d]> (or list<list<float32>>, float16 values too): "
    "one pool of candidate embeddings per row"
)
_PER_CANDIDATE = "list<float32> (or list<float64>, list<float16>): one value per candidate of the row's pool"


def _type_ok(t: Any, levels: int, allowed: Tuple[Any, ...], outer_fixed: bool) -> bool:
    """Whether ``t`` is ``levels`` nested lists (list, large_list or
    fixed_size_list; the outermost list or large_list unless
    ``outer_fixed``) of a value type in ``allowed``."""
    for level in range(levels):
        fixed = pa.types.is_fixed_size_list(t)
        if not (fixed or _is_list(t)) or (fixed and level == 0 and not outer_fixed):
            return False
        t = t.value_type
    return t in allowed


def _check_types(columns: Sequence[Tuple[str, Column, str]]) -> None:
    """A TypeError for a column that is not an Arrow array of its role's
    type: (role, column, name) with role "queries", "pools", "relevance"."""
    rules = {
        "queries": (1, (pa.float32(),), True, _QUERIES),
        "pools": (2, (pa.float32(), pa.float16()), False, _POOLS),
        "relevance": (1, (pa.float32(), pa.float64(), pa.float16()), True, _PER_CANDIDATE),
    }
    for role, column, name in columns:
        if not isinstance(column, (pa.Array, pa.ChunkedArray)):
            raise TypeError(f"{name} must be a pyarrow Array or ChunkedArray, not {type(column).__name__}")
        levels, allowed, outer_fixed, expected = rules[role]
        if not _type_ok(column.type, levels, allowed, outer_fixed):
            raise _type_error(name, column.type, expected)


def _queries(array: Any, name: str, base: int) -> Tuple[npt.NDArray[Any], Optional[int]]:
    return _vectors(array, name, lambda j: f"row {base + j}", (pa.float32(),), _QUERIES)


def _pools(array: Any, name: str, base: int) -> Tuple[npt.NDArray[Any], npt.NDArray[np.int64], Optional[int]]:
    """The candidates of every pool as one (N, d) view, the n + 1 offsets
    (pool i = rows offsets[i]:offsets[i + 1]) and d."""
    allowed = (pa.float32(), pa.float16())
    if array.null_count:
        raise _input_error(f"{name}: row {base + _first(array.is_null())} is null; drop the row or fill it")
    offsets = _offsets(array)

    def where(j: int) -> str:
        row = int(np.searchsorted(offsets, j, side="right")) - 1
        return f"row {base + row}: candidate {j - offsets[row]}"

    matrix, d = _vectors(array.flatten(), name, where, allowed, _POOLS)
    return matrix, offsets, d


def _per_candidate(
    array: Any, name: str, base: int, pool_offsets: npt.NDArray[np.int64], pools_name: str
) -> Any:
    """Relevance or costs: the values of every row as one (N,) view, after
    checking that row i has one value per candidate of pool i."""
    if array.null_count:
        raise _input_error(f"{name}: row {base + _first(array.is_null())} is null; drop the row or fill it")
    offsets = _offsets(array)
    sizes, pool_sizes = np.diff(offsets), np.diff(pool_offsets)
    bad = np.flatnonzero(sizes != pool_sizes)
    if bad.size:
        i = int(bad[0])
        raise _input_error(
            f"{name}: row {base + i} has {sizes[i]} values but its pool ({pools_name} row {base + i}) has "
            f"{pool_sizes[i]} candidates: the list offsets must match the pools'"
        )
    values = array.flatten()
    if values.null_count:
        e = _first(values.is_null())
        row = int(np.searchsorted(offsets, e, side="right")) - 1
        raise _input_error(f"{name}: row {base + row}: value {e - offsets[row]} is null")
    return np.asarray(values.to_numpy(zero_copy_only=True))


def _arguments(
    queries: Column,
    pools: Column,
    relevance: Optional[Column] = None,
    costs: Optional[Column] = None,
    names: Sequence[str] = ("queries", "pools", "relevance", "costs"),
) -> List[Tuple[int, Dict[str, Any]]]:
    """``select_batch``'s arguments as NumPy views of the Arrow buffers,
    per range of rows that lies in one chunk of every column: (first row,
    {"queries", "pools", "offsets", and "relevance" / "costs" if given}).
    Checks every range before returning."""
    roles = ("queries", "pools", "relevance", "relevance")
    given = [
        (r, c, nm) for r, c, nm in zip(roles, (queries, pools, relevance, costs), names) if c is not None
    ]
    _check_types(given)
    segments = []
    dq = dp = None
    for start, stop in _segments([c for _, c, _ in given], [nm for _, _, nm in given]):
        q, d = _queries(_piece(queries, start, stop), names[0], start)
        if d is not None and dq is not None and d != dq:
            raise _input_error(
                f"{names[0]}: row {start} has d = {d} values but the rows before it have d = {dq}: "
                "every query must have the same dimension"
            )
        dq = d if d is not None else dq
        matrix, offsets, d = _pools(_piece(pools, start, stop), names[1], start)
        if d is not None and dp is not None and d != dp:
            raise _input_error(
                f"{names[1]}: row {start} has candidates of d = {d} values but the rows before it have d = {dp}: "
                "every candidate must have the same dimension"
            )
        dp = d if d is not None else dp
        args: Dict[str, Any] = {"queries": q, "pools": matrix, "offsets": offsets}
        for key, column, name in (("relevance", relevance, names[2]), ("costs", costs, names[3])):
            if column is not None:
                args[key] = _per_candidate(_piece(column, start, stop), name, start, offsets, names[1])
        segments.append((start, args))
    if dq is not None and dp is not None and dq != dp:
        raise _input_error(
            f"{names[1]}: the candidates have d = {dp} values but the queries ({names[0]}) have d = {dq}: "
            "embed both with the same model"
        )
    for _, args in segments:
        if args["pools"].shape[1] == 0 and dq:
            # No candidate in any pool (a list<list<float32>> column tells
            # no d then): empty pools of the queries' d.
            args["pools"] = np.zeros((0, dq), np.float32)
    return segments


def _select(segments: List[Tuple[int, Dict[str, Any]]], k: int, options: Dict[str, Any]) -> List[Any]:
    """``select_batch`` on each range of rows, the selections in row order;
    an error's ``pair i`` is row i of the whole input."""
    selections: List[Any] = []
    for start, args in segments:
        try:
            arrays = {key: a for key, a in args.items() if key not in ("queries", "pools")}
            selections.extend(mempursuit.select_batch(args["queries"], args["pools"], k, **arrays, **options))
        except MemPursuitError as e:
            m = re.match(r"pair (\d+): ", str(e))
            if not start or not m:
                raise
            message = f"pair {start + int(m.group(1))}: {str(e)[m.end():]}"
            raise type(e)(message, e.kind) from None
    return selections


def _list_column(
    arrays: Sequence[npt.NDArray[Any]], dtype: Any, valid: Optional[npt.NDArray[np.bool_]] = None
) -> Any:
    """``arrays`` as one Arrow list array (row i = arrays[i]); rows where
    ``valid`` is False are null."""
    n = len(arrays)
    lengths = np.fromiter((a.shape[0] for a in arrays), np.int64, count=n)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    values = np.concatenate(arrays).astype(dtype, copy=False) if n else np.zeros(0, dtype)
    child = pa.array(values)
    if offsets[-1] <= _INT32_MAX:
        list_type, offsets = pa.list_(child.type), offsets.astype(np.int32)
    else:
        list_type = pa.large_list(child.type)
    validity = None
    if valid is not None and not valid.all():
        validity = pa.array(valid).buffers()[1]
    return pa.Array.from_buffers(list_type, n, [validity, pa.py_buffer(offsets)], children=[child])


def _result(selections: Sequence[Any]) -> Any:
    """The selections as :func:`select_arrow`'s RecordBatch."""
    picks = [s.picks for s in selections]
    weights = [s.weights for s in selections]
    has_weights = np.fromiter(
        (w.shape[0] == p.shape[0] for w, p in zip(weights, picks)), bool, count=len(picks)
    )
    columns = [
        _list_column(picks, np.int64),
        _list_column([w if ok else w[:0] for w, ok in zip(weights, has_weights)], np.float64, has_weights),
        pa.array([s.stop_reason for s in selections], pa.string()),
        _list_column([s.excluded for s in selections], np.int64),
        _list_column([s.skipped for s in selections], np.int64),
    ]
    return pa.RecordBatch.from_arrays(columns, names=list(RESULT_COLUMNS))


def select_arrow(
    queries: Column,
    pools: Column,
    k: int,
    *,
    relevance: Optional[Column] = None,
    costs: Optional[Column] = None,
    threads: Optional[int] = None,
    **options: Any,
) -> Any:
    """Selects up to ``k`` memories from each row's pool for its query:
    ``mempursuit.select_batch`` on Arrow columns, without copying the
    embeddings (see the module docs for the types).

    Parameters
    ----------
    queries : pyarrow.Array or ChunkedArray, n rows of ``fixed_size_list<float32>[d]``
    pools : pyarrow.Array or ChunkedArray, n rows of ``list<fixed_size_list<float32>[d]>``
        Row i: the P_i candidates of query i (P_i may differ between rows).
    k : int
        The budget K, the same for every row (``select_batch``'s ``k``).
    relevance : pyarrow.Array or ChunkedArray, n rows of ``list<float32>``, optional
        Row i: the retriever's scores of pool i's candidates (P_i values).
    costs : pyarrow.Array or ChunkedArray, n rows of ``list<float32>``, optional
        Row i: the cost of each of pool i's candidates (P_i values), passed
        to ``select_batch`` as ``costs=`` (with the budget option of token
        budgets; a binding without them reports ``costs`` as an unknown
        option).
    threads : int, optional
        ``select_batch``'s threads (0 or the default ``None``: one per CPU). Under an
        engine that runs one task per CPU, pass 1.
    **options
        Any option of ``mempursuit.select`` (``method``, ``gamma``, ...;
        ``mempursuit.OPTIONS``), passed through unchanged: by default the
        recommended setting.

    Returns
    -------
    pyarrow.RecordBatch
        n rows, row i the selection of query i, with the columns
        :data:`RESULT_COLUMNS`:

        * ``picks``: ``list<int64>``, pool rows (0-based candidates of row
          i's pool) in pick order (``Selection.picks``);
        * ``weights``: ``list<float64>``, the simplex weights aligned with
          the picks; null in a row whose selection has picks but no
          weights (``"topk"``, ``"mmr"``);
        * ``stop_reason``: ``string``, ``"budget"``, ``"adaptive"``,
          ``"pool_exhausted"`` or ``"pool_optimum"``;
        * ``excluded``, ``skipped``: ``list<int64>``, as in ``Selection``.

        The list columns are ``large_list`` when one call returns more than
        2^31 − 1 values in a column.

    Raises
    ------
    MemPursuitError
        A null, offsets or dimensions that do not match, or row counts that
        differ (kind ``"input"``, naming the column, row, candidate and
        element); any error of ``select_batch`` (a bad option, an unusable
        vector: ``pair i`` is row i).
    TypeError
        A column of another Arrow type (naming it and the type expected), a
        ``k``, ``threads`` or option of the wrong Python type.
    """
    segments = _arguments(queries, pools, relevance, costs)
    return _result(_select(segments, k, dict(options, threads=threads)))


def select_table(
    batch: _Batch,
    k: int,
    *,
    query_column: str,
    pool_column: str,
    relevance_column: Optional[str] = None,
    cost_column: Optional[str] = None,
    prefix: str = "mempursuit_",
    threads: Optional[int] = None,
    **options: Any,
) -> _Batch:
    """:func:`select_arrow` on the columns of ``batch`` (a
    ``pyarrow.Table`` or ``RecordBatch``): returns ``batch`` with the
    result columns appended as ``prefix + name`` (``mempursuit_picks``,
    ``mempursuit_weights``, ``mempursuit_stop_reason``,
    ``mempursuit_excluded``, ``mempursuit_skipped``), of the same type.

    A Ray Data ``map_batches`` function as it stands::

        ds.map_batches(mempursuit.arrow.select_table, batch_format="pyarrow", zero_copy_batch=True,
                       fn_kwargs=dict(k=10, query_column="query", pool_column="pool", threads=1))

    ``query_column``, ``pool_column``, ``relevance_column`` and
    ``cost_column`` name the columns of :func:`select_arrow`'s ``queries``,
    ``pools``, ``relevance`` and ``costs``; ``k``, ``threads`` and the
    options are ``select_arrow``'s. Errors name the column by its name.

    Raises
    ------
    MemPursuitError
        As ``select_arrow``; a column that ``batch`` does not have (kind
        ``"input"``); a result column name that ``batch`` already has (kind
        ``"option"``: pass another ``prefix``).
    TypeError
        As ``select_arrow``; ``batch`` not a Table or RecordBatch.
    """
    if not isinstance(batch, (pa.Table, pa.RecordBatch)):
        raise TypeError(
            f"select_table: batch must be a pyarrow Table or RecordBatch, not {type(batch).__name__}"
        )
    for key, instead in (("relevance", "relevance_column"), ("costs", "cost_column")):
        if key in options:
            raise TypeError(
                f"select_table: {key} comes from a column of the batch; pass {instead}= (its name)"
            )
    names = batch.schema.names

    def column(name: Optional[str], argument: str) -> Optional[Column]:
        if name is None:
            return None
        if name not in names:
            raise _input_error(
                f"{argument}: the batch has no column {name!r} (its columns: {', '.join(names)})"
            )
        return batch.column(name)

    out_names = [prefix + c for c in RESULT_COLUMNS]
    taken = [c for c in out_names if c in names]
    if taken:
        raise MemPursuitError(
            f"the batch already has a column {taken[0]!r}; pass another prefix= (now {prefix!r})", "option"
        )
    segments = _arguments(
        column(query_column, "query_column"),
        column(pool_column, "pool_column"),
        column(relevance_column, "relevance_column"),
        column(cost_column, "cost_column"),
        names=(
            f"column {query_column!r}",
            f"column {pool_column!r}",
            f"column {relevance_column!r}",
            f"column {cost_column!r}",
        ),
    )
    result = _result(_select(segments, k, dict(options, threads=threads)))
    arrays = list(batch.columns) + list(result.columns)
    fields = list(batch.schema) + [pa.field(n, a.type) for n, a in zip(out_names, result.columns)]
    schema = pa.schema(fields, metadata=batch.schema.metadata)
    if isinstance(batch, pa.Table):
        return pa.Table.from_arrays(arrays, schema=schema)  # type: ignore[no-any-return]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)  # type: ignore[no-any-return]
