"""Type stubs of the compiled module ``mempursuit._mempursuit``.

Shapes use d (embedding dimension), P (pool size), n (number of picks, or of
pairs in a batch). Similarities and scores are cosines (the encoder's units).

Every option keyword defaults to ``None``: the library's default (the
recommended setting, with the defaults listed in ``OPTIONS``).
"""

import os
from typing import Any, Literal, Mapping, Optional, Sequence, Tuple, TypedDict, Union, final

import numpy as np
import numpy.typing as npt
from typing_extensions import TypeAlias

# The budget K: a Python int or a NumPy integer (a bool is refused at run time).
_Budget: TypeAlias = Union[int, np.integer[Any]]

__all__ = [
    "METADATA_FIELDS",
    "METADATA_KEY",
    "METHODS",
    "OPTIONS",
    "STEP_FIELDS",
    "Selection",
    "Selector",
    "Store",
    "__version__",
    "_selection_from_state",
    "_store_from_state",
    "check_count",
    "check_document_settings",
    "check_query",
    "prepare_documents",
    "select",
    "select_batch",
    "select_documents",
]

__version__: str

_MethodName: TypeAlias = Literal["recommended", "pursuit", "centroid", "topk", "mmr"]
_StorageName: TypeAlias = Literal["f32", "f16", "bf16", "int8"]
_AtPoolOptimum: TypeAlias = Literal["continue", "stop", "fill"]
_NormalizationName: TypeAlias = Literal["cosine", "require_unit"]
_DependentPicks: TypeAlias = Literal["keep", "skip"]
_InvalidName: TypeAlias = Literal["reject", "exclude"]
_StopReason: TypeAlias = Literal[
    "budget", "adaptive", "pool_exhausted", "pool_optimum", "cost_budget"
]

class _OptionInfo(TypedDict):
    type: Literal["method", "number", "bool", "name", "text"]
    values: Optional[Tuple[str, ...]]
    applies_to: str
    doc: str

#: The method names, the default (``"recommended"``) first.
METHODS: Tuple[str, ...]
#: Every option keyword of ``select``, ``Selector.select`` and
#: ``select_batch`` (the Rust crate's ``mempursuit::spec::OPTIONS``): its
#: value type, its names (for ``type`` ``"method"`` and ``"name"``), the
#: methods it applies to and what it does, with its default.
OPTIONS: Mapping[str, _OptionInfo]
#: (name, NumPy dtype) of each field of ``Selection.steps``, in order.
STEP_FIELDS: Tuple[Tuple[str, str], ...]

@final
class Selection:
    """The result of one selection (immutable; its arrays are read-only)."""

    @property
    def picks(self) -> npt.NDArray[np.int64]:
        """int64, shape (n,): selected pool rows in entry order (never
        re-sorted; with a fixed budget and a method whose parameters do not
        depend on k, every prefix is the selection for that smaller budget;
        not so for the recommended setting or adaptive stopping)."""
    @property
    def weights(self) -> npt.NDArray[np.float64]:
        """float64, shape (n,): simplex weights α aligned with ``picks``
        (≥ 0, sum 1). Shape (0,) for ``"topk"`` and ``"mmr"``."""
    @property
    def steps(self) -> np.ndarray:
        """Structured array, shape (n,), fields ``STEP_FIELDS``: index (int64),
        score (U at pick time, Eq. 9), residual_sq (L_t, cosine units
        squared), improvement (Δ_t, Eq. 7), fw_gap (Frank–Wolfe gap g_S),
        nu (ν_S, Eq. 14), free_size (|F|), solver_iterations (int64),
        filled (bool), dependent (bool: already represented by the picks),
        refit (str: "optimal", "iteration_cap", "blocked" or
        "numerical_failure"), verified (int64: int8 certificate checks).
        For ``"topk"`` and ``"mmr"`` only index and score are computed; the
        other fields hold 0, False and "optimal" (not measurements).
        For ``"centroid"`` and ``"recommended"`` (equal weights), fw_gap and
        improvement are diagnostics that may be negative."""
    @property
    def stop_reason(self) -> _StopReason:
        """Why the selection ended."""
    @property
    def excluded(self) -> npt.NDArray[np.int64]:
        """int64: rows left out as unusable under ``invalid="exclude"``."""
    @property
    def skipped(self) -> npt.NDArray[np.int64]:
        """int64: candidates skipped as already represented by the picks
        (ascending): under ``dependent_picks="skip"``, and by the default
        recommended setting, which merges exact copies (bit-identical rows)
        into their first occurrence and never picks them, even when nothing
        else is left (so fewer than k picks can come back, with
        ``stop_reason == "pool_exhausted"``), and takes near-copies of its
        picks only when nothing else is left; those not reached are listed
        here (docs/METHODS.md in the repository)."""
    def __len__(self) -> int: ...
    def __copy__(self) -> "Selection":
        """The selection itself (it is immutable). It also pickles, as
        ``multiprocessing``, joblib and Ray send it back from a worker."""
    def __deepcopy__(self, memo: Any) -> "Selection": ...

def select(
    query: npt.ArrayLike,
    candidates: npt.ArrayLike,
    k: _Budget,
    *,
    relevance: Optional[npt.ArrayLike] = None,
    costs: Optional[npt.ArrayLike] = None,
    method: Optional[_MethodName] = None,
    gamma: Optional[float] = None,
    ridge: Optional[float] = None,
    mmr_lambda: Optional[float] = None,
    raw_relevance: Optional[bool] = None,
    pool_order: Optional[bool] = None,
    cost_budget: Optional[float] = None,
    adaptive: Optional[bool] = None,
    at_pool_optimum: Optional[_AtPoolOptimum] = None,
    optimum_tolerance: Optional[float] = None,
    dependent_picks: Optional[_DependentPicks] = None,
    normalization: Optional[_NormalizationName] = None,
    invalid: Optional[_InvalidName] = None,
    storage: Optional[_StorageName] = None,
) -> Selection:
    """Selects up to ``k`` memories from ``candidates`` (P, d) for ``query``
    (d,) or (1, d); by default with the recommended setting
    (``method="pursuit"`` is the paper's method). ``relevance`` (P,): the
    retriever's scores, used by rank on the pool's cosine scale (as given
    with ``raw_relevance=True``). ``costs`` (P,) with ``cost_budget``: each
    candidate's cost (e.g. its token count) and the most the picks may cost;
    a pick that no longer fits is skipped, ``stop_reason == "cost_budget"``
    when nothing fits. float32 (and float16) C-contiguous input
    is used without copying; other real dtypes/orders are converted once to
    float32. Raises MemPursuitError (a ValueError with ``kind``; naming the
    row and element or the option) or TypeError. See ``help(select)``."""

def select_batch(
    queries: Union[npt.ArrayLike, Sequence[npt.ArrayLike]],
    pools: Union[npt.ArrayLike, Sequence[npt.ArrayLike]],
    k: _Budget,
    *,
    relevance: Optional[Union[npt.ArrayLike, Sequence[npt.ArrayLike]]] = None,
    costs: Optional[Union[npt.ArrayLike, Sequence[npt.ArrayLike]]] = None,
    offsets: Optional[npt.ArrayLike] = None,
    threads: Optional[int] = None,  # >= 0; 0 or None: one per available CPU
    method: Optional[_MethodName] = None,
    gamma: Optional[float] = None,
    ridge: Optional[float] = None,
    mmr_lambda: Optional[float] = None,
    raw_relevance: Optional[bool] = None,
    pool_order: Optional[bool] = None,
    cost_budget: Optional[float] = None,
    adaptive: Optional[bool] = None,
    at_pool_optimum: Optional[_AtPoolOptimum] = None,
    optimum_tolerance: Optional[float] = None,
    dependent_picks: Optional[_DependentPicks] = None,
    normalization: Optional[_NormalizationName] = None,
    invalid: Optional[_InvalidName] = None,
    storage: Optional[_StorageName] = None,
) -> list[Selection]:
    """``select`` for each (queries[i], pools[i]): queries (n, d) or n arrays
    (d,); pools (n, P, d) or n arrays (P_i, d), or with ``offsets`` (n + 1
    integers, CSR style) one (N, d) matrix whose rows offsets[i]:offsets[i+1]
    are pool i (relevance then (N,)). Runs on ``threads`` native threads
    (``threads`` >= 0; 0 or ``None``, the default: one per available CPU,
    as the Rust crate reads 0) with the GIL released; results in order, each
    identical to ``select``. Errors name the pair:
    ``pair 4: candidate 3: ...``."""

@final
class Selector:
    """A reusable selector: scratch buffers kept between calls (they grow to
    the largest pool and budget seen). One call at a time per Selector."""

    def __new__(cls, max_pool: int = 0, max_budget: int = 0) -> "Selector": ...
    def select(
        self,
        query: npt.ArrayLike,
        candidates: npt.ArrayLike,
        k: _Budget,
        *,
        relevance: Optional[npt.ArrayLike] = None,
        costs: Optional[npt.ArrayLike] = None,
        method: Optional[_MethodName] = None,
        gamma: Optional[float] = None,
        ridge: Optional[float] = None,
        mmr_lambda: Optional[float] = None,
        raw_relevance: Optional[bool] = None,
        pool_order: Optional[bool] = None,
        cost_budget: Optional[float] = None,
        adaptive: Optional[bool] = None,
        at_pool_optimum: Optional[_AtPoolOptimum] = None,
        optimum_tolerance: Optional[float] = None,
        dependent_picks: Optional[_DependentPicks] = None,
        normalization: Optional[_NormalizationName] = None,
        invalid: Optional[_InvalidName] = None,
        storage: Optional[_StorageName] = None,
    ) -> Selection:
        """Same as ``mempursuit.select``, reusing this selector's buffers."""

@final
class Store:
    """Memory embeddings kept across queries: N rows of d values (float32),
    each validated once when it enters (finite, not all zero, norm within
    the library's range), with the storage every call reads. A call names
    its candidates by the retriever's ids (positions in the store);
    ``store.select(query, ids, k, ...)`` is ``select(query, rows[ids], k,
    storage=store.storage, ...)``, picks as positions in ``ids``. Errors:
    ``MemPursuitError`` kind ``"input"`` with ``index`` (the bad row, or
    the position in ``ids``), ``id`` (the id given, as text) and
    ``argument`` (``"rows"`` or ``"ids"``).

    ``pickle`` (so ``multiprocessing``, ``concurrent.futures``, joblib,
    Ray), ``copy.copy`` and ``copy.deepcopy`` give an independent store of
    the same rows, d and storage, with the same picks (a pickle holds the
    float32 rows and is validated again when loaded)."""

    def __new__(cls, rows: npt.ArrayLike, *, storage: Optional[_StorageName] = "f32") -> "Store": ...
    @staticmethod
    def from_npy(
        path: Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"],
        *,
        storage: Optional[_StorageName] = "f32",
    ) -> "Store":
        """A store of the (N, d) matrix in a ``.npy`` file: the NumPy magic
        string checked, then ``numpy.load`` with ``mmap_mode="r"``,
        ``allow_pickle=False`` (any real dtype, byte order, C or Fortran
        order). A file that is not ``.npy`` (an ``.npz``, text, a pickle),
        one NumPy cannot read, a dtype that is not real or a shape other
        than (N, d) is a ``MemPursuitError`` (kind ``"input"``, argument
        ``"path"``) whose message starts with the path and says what to do;
        a file that cannot be opened is an ``OSError``."""
    def append(self, rows: npt.ArrayLike) -> range:
        """Adds rows (M, d) at the end, validated; returns their ids
        ``range(N, N + M)``. On an error nothing is added."""
    def __len__(self) -> int: ...
    @property
    def dim(self) -> int:
        """The embedding dimension d."""
    @property
    def storage(self) -> _StorageName:
        """The storage every call reads."""
    @property
    def nbytes(self) -> int:
        """The bytes held: the storage's (f32 4·N·d, f16 / bf16 2·N·d, int8
        5·N·d + 20·N; no second copy of the rows is kept)."""
    def __sizeof__(self) -> int: ...
    def __copy__(self) -> "Store": ...
    def __deepcopy__(self, memo: Any) -> "Store": ...
    def select(
        self,
        query: npt.ArrayLike,
        ids: npt.ArrayLike,
        k: _Budget,
        *,
        relevance: Optional[npt.ArrayLike] = None,
        costs: Optional[npt.ArrayLike] = None,
        method: Optional[_MethodName] = None,
        gamma: Optional[float] = None,
        ridge: Optional[float] = None,
        mmr_lambda: Optional[float] = None,
        raw_relevance: Optional[bool] = None,
        pool_order: Optional[bool] = None,
        cost_budget: Optional[float] = None,
        adaptive: Optional[bool] = None,
        at_pool_optimum: Optional[_AtPoolOptimum] = None,
        optimum_tolerance: Optional[float] = None,
        dependent_picks: Optional[_DependentPicks] = None,
        normalization: Optional[_NormalizationName] = None,
        invalid: Optional[_InvalidName] = None,
        storage: Optional[_StorageName] = None,
    ) -> Selection:
        """``select(query, rows[ids], k, ...)``: query (d,) or (1, d), ids (P,)
        integers in [0, N); picks are positions in ``ids``. ``storage``, if
        given, must be the store's."""
    def select_batch(
        self,
        queries: Union[npt.ArrayLike, Sequence[npt.ArrayLike]],
        id_lists: Union[npt.ArrayLike, Sequence[npt.ArrayLike]],
        k: _Budget,
        *,
        relevance: Optional[Union[npt.ArrayLike, Sequence[npt.ArrayLike]]] = None,
        costs: Optional[Union[npt.ArrayLike, Sequence[npt.ArrayLike]]] = None,
        threads: Optional[int] = None,  # >= 0; 0 or None: one per available CPU
        method: Optional[_MethodName] = None,
        gamma: Optional[float] = None,
        ridge: Optional[float] = None,
        mmr_lambda: Optional[float] = None,
        raw_relevance: Optional[bool] = None,
        pool_order: Optional[bool] = None,
        cost_budget: Optional[float] = None,
        adaptive: Optional[bool] = None,
        at_pool_optimum: Optional[_AtPoolOptimum] = None,
        optimum_tolerance: Optional[float] = None,
        dependent_picks: Optional[_DependentPicks] = None,
        normalization: Optional[_NormalizationName] = None,
        invalid: Optional[_InvalidName] = None,
        storage: Optional[_StorageName] = None,
    ) -> list[Selection]:
        """``select`` for each (queries[i], id_lists[i]) on ``threads``
        native threads (>= 0; 0 or ``None``, the default: one per available
        CPU, as the Rust ``Store::select_batch`` reads 0) with the GIL released;
        results in order, each identical to the single call. Errors name
        the pair: ``pair 4: ids[3] = ...``."""

def prepare_documents(query: Sequence[float], documents: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The document layer (docs/DOCUMENTS.md): documents are dicts with
    optional ``id``, ``embedding`` (floats or pgvector text ``"[0.1,...]"``),
    ``score``, ``score_kind`` (``"similarity"``, ``"distance"``, ``"none"``)
    and ``cost``. Returns ``kept``, ``duplicates`` (``[index, first_index]``),
    ``candidates`` (kept rows), ``relevance``, ``relevance_source``
    (``"score"`` or ``"cosine"``: a distance is never relevance) and
    ``costs``. Raises ``MemPursuitError`` with ``kind``, ``index``, ``id``
    and ``argument``."""

#: The metadata key of the record each document returned by
#: ``select_documents`` carries, and the record's fields.
METADATA_KEY: str
METADATA_FIELDS: Tuple[str, ...]

def select_documents(
    query: Sequence[float],
    documents: list[Mapping[str, Any]],
    k: _Budget,
    options: Optional[Mapping[str, Any]] = None,
) -> dict[str, Any]:
    """Selects up to ``k`` documents by the Rust document layer: ``picks``
    (each ``{"index", "metadata": {"mempursuit": {"rank", "weight",
    "score", "residual_sq"}}}``), ``duplicates``, ``relevance_source``,
    ``stop_reason``. Raises ``MemPursuitError`` with ``kind``, ``index``,
    ``id``, ``argument``."""

def check_document_settings(
    options: Optional[Mapping[str, Any]],
    scores: Optional[bool],
    cost: bool,
    budget_later: bool = False,
) -> None:
    """An integration's settings checked once by the layer."""

def check_count(name: str, value: Any) -> int:
    """A count setting (``k``, ``top_k``, ...) as an int >= 0."""

def check_query(query: Any) -> int:
    """The query embedding checked by the layer; returns d."""

def _store_from_state(version: int, dim: int, storage_name: _StorageName, rows: bytes) -> Store:
    """Rebuilds a pickled ``Store`` (``Store.__reduce__``'s callable; not
    part of the API)."""

def _selection_from_state(
    picks: npt.ArrayLike,
    weights: npt.ArrayLike,
    excluded: npt.ArrayLike,
    skipped: npt.ArrayLike,
    stop_reason: str,
    steps: np.ndarray,
) -> Selection:
    """Rebuilds a pickled ``Selection`` (``Selection.__reduce__``'s
    callable; not part of the API)."""
