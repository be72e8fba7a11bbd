//! Python bindings of MemPursuit: the extension module `mempursuit._mempursuit`
//! (re-exported by the `mempursuit` package, see `mempursuit/__init__.py` and
//! the stubs `mempursuit/_mempursuit.pyi`).
//!
//! * [`select`]: one query against its pool, a [`PySelection`] back;
//! * [`PySelector`] (`Selector`): the same with buffers reused across calls
//!   (the `mempursuit` crate's `Selector`, which grows to fit);
//! * [`select_batch`]: many (query, pool) pairs on the crate's threads
//!   (`mempursuit::parallel::select_batch`) with the GIL released.
//!
//! Every call builds the core's `Method` from its keyword arguments in one
//! place ([`method::MethodArgs::build`]) and runs it through the core's
//! single dispatch (`Method::run`); picks are identical to the Rust API's.
//! The caller's float32 arrays are borrowed read-only, never copied or
//! written (see [`arrays`]).

mod arrays;
mod errors;
mod method;

use mempursuit::half::{bf16, f16};
use mempursuit::{Element, Error, Input, Method, Relevance, Selection, Selector, Step};
use numpy::PyArray1;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyList, PyTuple};

use arrays::{pool_rows, query_dim, relevance_len, view, Batch, View};
use method::MethodArgs;

/// How the candidate matrix is stored for the passes over it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Storage {
    F32,
    F16,
    Bf16,
}

impl Storage {
    fn parse(s: &str) -> PyResult<Storage> {
        match s {
            "f32" | "float32" => Ok(Storage::F32),
            "f16" | "float16" => Ok(Storage::F16),
            "bf16" | "bfloat16" => Ok(Storage::Bf16),
            other => Err(PyValueError::new_err(format!(
                "storage must be 'f32', 'f16' or 'bf16', got '{other}'"
            ))),
        }
    }
}

/// The budget K: a Python int (or an object with `__index__`), ≥ 0.
fn budget(k: &Bound<'_, PyAny>) -> PyResult<usize> {
    if k.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err("k must be an int, not bool"));
    }
    let index = k.call_method0("__index__").map_err(|_| {
        PyTypeError::new_err(format!(
            "k must be an int, not {}",
            k.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let value: i128 = index.extract()?;
    usize::try_from(value)
        .map_err(|_| PyValueError::new_err(format!("k must be >= 0, got {value}")))
}

/// `PoolExhausted` → `"pool_exhausted"`.
fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A 1-D array that Python code cannot write to (results are immutable).
fn frozen_array<'py, T: numpy::Element>(py: Python<'py>, v: Vec<T>) -> PyResult<Py<PyAny>> {
    let arr = PyArray1::from_vec(py, v);
    let kwargs = PyDict::new(py);
    kwargs.set_item("write", false)?;
    arr.call_method("setflags", (), Some(&kwargs))?;
    Ok(arr.into_any().unbind())
}

fn to_i64(v: &[usize]) -> Vec<i64> {
    v.iter().map(|&x| x as i64).collect()
}

/// The result of one selection.
///
/// Attributes (all read-only NumPy arrays):
///
/// * ``picks``: int64, shape (n,): selected pool rows (0-based rows of
///   ``candidates``) in entry order, never re-sorted (with a fixed budget,
///   every prefix is the selection for that smaller budget; not so for
///   ``adaptive=True`` or ``method="recommended"``, whose gamma depends on
///   k). n = min(k, P) unless adaptive stopping, ``at_pool_optimum="stop"``
///   or excluded rows end it early.
/// * ``weights``: float64, shape (n,): the simplex weights α aligned with
///   ``picks`` (≥ 0, sum 1; a pick keeps its place with weight 0). Shape
///   (0,) for ``method="topk"`` and ``"mmr"``, which have no weights.
/// * ``steps``: structured array, shape (n,), one record per pick (see
///   ``STEP_FIELDS``): ``index`` (int64, = picks), ``score`` (U at pick time,
///   Eq. 9, in cosine units; ρ for top-K, the MMR score for MMR),
///   ``residual_sq`` (L_t = ‖q − Σ α_j m_j‖² after the refit, cosine units
///   squared), ``improvement`` (Δ_t, Eq. 7), ``fw_gap`` (Frank–Wolfe gap
///   g_S ≥ 0, Theorem B.2; for centroid pursuit a diagnostic that may be
///   negative), ``nu`` (ν_S, Eq. 14), ``free_size`` (|F|, the picks with
///   weight > 0), ``solver_iterations`` (active-set iterations of the
///   refit), ``filled`` (bool: picked by relevance after the pool optimum,
///   ``at_pool_optimum="fill"``), ``dependent`` (bool: at pick time the
///   memory was already represented by the picks, a duplicate or a point
///   of the hull of the weighted ones; it usually keeps weight 0 and adds
///   nothing to a prompt; see ``dependent_picks``). For top-K and MMR only
///   ``index`` and ``score`` are meaningful (the rest is 0).
/// * ``stop_reason``: str, ``"budget"``, ``"adaptive"``,
///   ``"pool_exhausted"`` or ``"pool_optimum"``.
/// * ``excluded``: int64, rows skipped as unusable under
///   ``invalid="exclude"`` (ascending; empty otherwise).
/// * ``skipped``: int64, candidates skipped as already represented by the
///   picks under ``dependent_picks="skip"`` (ascending; empty otherwise).
#[pyclass(name = "Selection", module = "mempursuit", frozen)]
pub struct PySelection {
    #[pyo3(get)]
    picks: Py<PyAny>,
    #[pyo3(get)]
    weights: Py<PyAny>,
    #[pyo3(get)]
    excluded: Py<PyAny>,
    #[pyo3(get)]
    skipped: Py<PyAny>,
    #[pyo3(get)]
    stop_reason: String,
    records: Vec<Step>,
    steps: PyOnceLock<Py<PyAny>>,
}

/// The fields of ``Selection.steps``, in order, with their NumPy dtypes.
const STEP_FIELDS: [(&str, &str); 10] = [
    ("index", "<i8"),
    ("score", "<f8"),
    ("residual_sq", "<f8"),
    ("improvement", "<f8"),
    ("fw_gap", "<f8"),
    ("nu", "<f8"),
    ("free_size", "<i8"),
    ("solver_iterations", "<i8"),
    ("filled", "?"),
    ("dependent", "?"),
];

impl PySelection {
    fn new(py: Python<'_>, s: Selection) -> PyResult<PySelection> {
        Ok(PySelection {
            picks: frozen_array(py, to_i64(&s.picks))?,
            weights: frozen_array(py, s.weights)?,
            excluded: frozen_array(py, to_i64(&s.excluded))?,
            skipped: frozen_array(py, to_i64(&s.skipped))?,
            stop_reason: snake_case(&format!("{:?}", s.stop)),
            records: s.steps,
            steps: PyOnceLock::new(),
        })
    }

    fn build_steps(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let np = py.import("numpy")?;
        let fields = PyList::empty(py);
        for (name, dtype) in STEP_FIELDS {
            fields.append((name, dtype))?;
        }
        let arr = np.call_method1("zeros", (self.records.len(), fields))?;
        let r = &self.records;
        let col = |f: fn(&Step) -> f64| PyArray1::from_vec(py, r.iter().map(f).collect());
        let int = |f: fn(&Step) -> i64| PyArray1::from_vec(py, r.iter().map(f).collect());
        arr.set_item("index", int(|s| s.index as i64))?;
        arr.set_item("score", col(|s| s.score))?;
        arr.set_item("residual_sq", col(|s| s.residual_sq))?;
        arr.set_item("improvement", col(|s| s.improvement))?;
        arr.set_item("fw_gap", col(|s| s.fw_gap))?;
        arr.set_item("nu", col(|s| s.nu))?;
        arr.set_item("free_size", int(|s| s.free_size as i64))?;
        arr.set_item("solver_iterations", int(|s| i64::from(s.solver_iterations)))?;
        let flag = |f: fn(&Step) -> bool| PyArray1::from_vec(py, r.iter().map(f).collect());
        arr.set_item("filled", flag(|s| s.filled))?;
        arr.set_item("dependent", flag(|s| s.dependent))?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("write", false)?;
        arr.call_method("setflags", (), Some(&kwargs))?;
        Ok(arr.unbind())
    }
}

#[pymethods]
impl PySelection {
    /// The per-step record: a structured array of shape (n,) with the
    /// fields of ``STEP_FIELDS`` (built on first access, then cached).
    #[getter]
    fn steps(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let steps = self.steps.get_or_try_init(py, || self.build_steps(py))?;
        Ok(steps.clone_ref(py))
    }

    /// Number of picks.
    fn __len__(&self) -> usize {
        self.records.len()
    }

    fn __repr__(&self) -> String {
        let picks: Vec<String> = self.records.iter().map(|s| s.index.to_string()).collect();
        format!(
            "Selection(picks=[{}], stop_reason='{}')",
            picks.join(", "),
            self.stop_reason
        )
    }
}

/// What every call needs besides its arrays: the core's method, the
/// storage, the relevance source and the budget, checked.
struct Call {
    method: Method,
    storage: Storage,
    raw_relevance: bool,
    pool_order: bool,
    k: usize,
}

impl Call {
    /// Checks the budget and builds the method ([`MethodArgs::build`]).
    fn new(
        k: &Bound<'_, PyAny>,
        args: MethodArgs<'_>,
        has_relevance: bool,
        raw_relevance: bool,
        pool_order: bool,
        storage: &str,
    ) -> PyResult<Call> {
        let k = budget(k)?;
        let method = args.build()?;
        if pool_order && has_relevance {
            return Err(PyValueError::new_err(
                "pass either relevance= (the retriever's scores) or pool_order=True, not both",
            ));
        }
        if raw_relevance && !has_relevance {
            return Err(PyValueError::new_err(
                "raw_relevance=True needs relevance= (the scores to use as given)",
            ));
        }
        Ok(Call {
            method,
            storage: Storage::parse(storage)?,
            raw_relevance,
            pool_order,
            k,
        })
    }

    /// The core's relevance source: the caller's scores by rank
    /// (`RankedScores`) or as given (`Scores`, with `raw_relevance`), the
    /// pool order, or the cosines.
    fn relevance<'r>(&self, scores: Option<&'r [f32]>) -> Relevance<'r> {
        match scores {
            Some(r) if self.raw_relevance => Relevance::Scores(r),
            Some(r) => Relevance::RankedScores(r),
            None if self.pool_order => Relevance::PoolOrder,
            None => Relevance::Similarity,
        }
    }
}

/// Runs one selection with the GIL released.
fn run_one<E: Element>(
    py: Python<'_>,
    selector: &mut Selector,
    input: &Input<'_, E>,
    k: usize,
    method: &Method,
) -> Result<Selection, Error> {
    py.detach(|| selector.select(input, k, method))
}

/// One selection: views the arrays, checks their shapes and runs `call`.
fn select_impl(
    py: Python<'_>,
    selector: &mut Selector,
    query: &Bound<'_, PyAny>,
    candidates: &Bound<'_, PyAny>,
    relevance: Option<&Bound<'_, PyAny>>,
    call: &Call,
) -> PyResult<PySelection> {
    let q: View<'_, f32> = view(query, "query")?;
    let d = query_dim(q.shape(), "query")?;
    let rel = relevance.map(|r| view::<f32>(r, "relevance")).transpose()?;
    if let Some(r) = &rel {
        relevance_len(r.shape(), "relevance")?;
    }
    let scores = rel.as_ref().map(|r| r.slice());
    let relevance = call.relevance(scores);
    let result = match call.storage {
        Storage::F32 => {
            let c: View<'_, f32> = view(candidates, "candidates")?;
            pool_rows(c.shape(), d, "candidates")?;
            let input = Input::new(q.slice(), c.slice()).with_relevance(relevance);
            run_one(py, selector, &input, call.k, &call.method)
        }
        Storage::F16 => {
            let c: View<'_, f16> = view(candidates, "candidates")?;
            pool_rows(c.shape(), d, "candidates")?;
            let input = Input::with_storage(q.slice(), c.slice()).with_relevance(relevance);
            run_one(py, selector, &input, call.k, &call.method)
        }
        Storage::Bf16 => {
            let c: View<'_, f32> = view(candidates, "candidates")?;
            pool_rows(c.shape(), d, "candidates")?;
            let pool: Vec<bf16> = c.slice().iter().map(|&x| bf16::from_f32(x)).collect();
            let input = Input::with_storage(q.slice(), &pool).with_relevance(relevance);
            run_one(py, selector, &input, call.k, &call.method)
        }
    };
    PySelection::new(py, result.map_err(errors::to_py)?)
}

/// Selects up to ``k`` memories from ``candidates`` for ``query``.
///
/// Parameters
/// ----------
/// query : array_like, shape (d,) or (1, d)
///     The query embedding. Converted to float32 if it is not.
/// candidates : array_like, shape (P, d)
///     The candidate pool, one embedding per row (row i = pool index i).
///     A float32 C-contiguous array is used without copying (and never
///     modified); any other real dtype or order is converted once with
///     ``numpy.ascontiguousarray(x, dtype=numpy.float32)`` (round to
///     nearest; values beyond float32's range become ±inf and are
///     rejected). Complex, string or object data is a TypeError. P = 0 is
///     valid and selects nothing. The GIL is released during the
///     selection: do not write to the arrays from another thread meanwhile.
/// k : int
///     The budget K ≥ 0 (K > P selects at most P).
/// method : {"pursuit", "centroid", "topk", "mmr", "recommended"}
///     ``"pursuit"``: MemPursuit (paper mode by default: ridge 1e-10,
///     gamma 1; Eqs. 5, 6, 9) or, with ``gamma``/``ridge``/``relevance``, a
///     member of its relevance-scaled family. ``"centroid"``: centroid
///     pursuit (ridge = inf, gamma 0.5 by default). ``"topk"``: the pool by
///     relevance. ``"mmr"``: maximal marginal relevance.
///     ``"recommended"``: centroid pursuit with a per-pool, per-budget
///     gamma from a measured rule, on relevance by rank: the setting to use
///     without tuning (no gamma/ridge; its picks for K are not always a
///     prefix of those for a larger K).
/// gamma : float, optional
///     γ ∈ (0, 1], the weight of the reconstruction against relevance
///     (pursuit and centroid only). In the encoder's cosine units.
/// ridge : float, optional
///     λ ≥ 0 (κ in the family); ``float("inf")`` is centroid pursuit
///     (pursuit only; default 1e-10).
/// mmr_lambda : float, optional
///     λ_mmr ∈ [0, 1] (mmr only; default 0.5; 1 is top-K).
/// relevance : array_like, shape (P,), optional
///     The first-stage retriever's scores, one per candidate (finite, any
///     scale or sign; converted to float32 like ``candidates``). Used by
///     rank: the candidate with the r-th largest score gets the r-th
///     largest query cosine of the pool as ρ (equal scores share the mean),
///     so gamma keeps its meaning for every retriever. Default: ρ = the
///     cosine to the query.
/// raw_relevance : bool
///     Use ``relevance`` as given (ρ = the scores; gamma is then in their
///     units). Needs ``relevance``.
/// pool_order : bool
///     The pool is in the retriever's order (row 0 first): the row at rank
///     r gets the r-th largest cosine of the pool as ρ. Not together with
///     ``relevance``.
/// adaptive : bool
///     Adaptive stopping (Eq. 7: stop after 2 consecutive relative
///     improvements of the residual ≤ 1e-5; pursuit only).
/// at_pool_optimum : {"continue", "stop", "fill"}
///     What the pursuit does once the Frank–Wolfe gap is ≤
///     ``optimum_tolerance``: keep picking (the paper), stop, or take the
///     remaining picks by relevance.
/// optimum_tolerance : float, optional
///     The gap that counts as the pool optimum (default 1e-12).
/// dependent_picks : {"keep", "skip"}
///     A candidate already represented by the picks when it would be picked
///     (an exact duplicate of a pick, or in the affine hull of the weighted
///     picks): pick it and flag its step (``steps["dependent"]``, the
///     paper's picks), or skip it and spend the budget on the next one
///     (listed in ``skipped``). QP pursuit only (finite ridge).
/// normalization : {"cosine", "require_unit"}
///     ``"cosine"``: non-unit vectors are used through their direction.
///     ``"require_unit"``: a vector whose norm differs from 1 by more than
///     1e-3 is an error.
/// invalid : {"reject", "exclude"}
///     An unusable candidate row (NaN/inf element, zero or out-of-range
///     norm) is a ValueError, or is skipped and listed in ``excluded``.
/// storage : {"f32", "f16", "bf16"}
///     How the candidates are stored for the passes over them. ``"f16"``:
///     a float16 C-contiguous array is used without copying, anything else
///     is converted once with ``numpy.ascontiguousarray(x,
///     dtype=numpy.float16)``. ``"bf16"``: converted once to float32 as
///     above, then to bfloat16 (round to nearest even). The selection
///     equals the float32 selection on the rounded values.
///
/// Returns
/// -------
/// Selection
///     ``picks``, ``weights``, ``steps``, ``stop_reason``, ``excluded``.
///
/// Raises
/// ------
/// ValueError
///     A shape mismatch, a bad parameter (``gamma 2 must be in (0, 1]``), or
///     an unusable vector, naming the row and element
///     (``candidate 3: element 7 is not finite (NaN)``, ``query: all
///     elements are zero``); k < 0.
/// TypeError
///     ``k`` is not an int; an array is not real-valued.
#[pyfunction]
#[pyo3(signature = (query, candidates, k, *, method="pursuit", gamma=None, ridge=None,
    mmr_lambda=None, relevance=None, raw_relevance=false, pool_order=false, adaptive=false,
    at_pool_optimum="continue", optimum_tolerance=None, dependent_picks="keep", normalization="cosine",
    invalid="reject", storage="f32"))]
#[allow(clippy::too_many_arguments)]
fn select(
    py: Python<'_>,
    query: &Bound<'_, PyAny>,
    candidates: &Bound<'_, PyAny>,
    k: &Bound<'_, PyAny>,
    method: &str,
    gamma: Option<f64>,
    ridge: Option<f64>,
    mmr_lambda: Option<f64>,
    relevance: Option<&Bound<'_, PyAny>>,
    raw_relevance: bool,
    pool_order: bool,
    adaptive: bool,
    at_pool_optimum: &str,
    optimum_tolerance: Option<f64>,
    dependent_picks: &str,
    normalization: &str,
    invalid: &str,
    storage: &str,
) -> PyResult<PySelection> {
    let args = MethodArgs {
        method,
        gamma,
        ridge,
        mmr_lambda,
        adaptive,
        at_pool_optimum,
        optimum_tolerance,
        dependent_picks,
        normalization,
        invalid,
    };
    let call = Call::new(
        k,
        args,
        relevance.is_some(),
        raw_relevance,
        pool_order,
        storage,
    )?;
    let mut selector = Selector::new();
    select_impl(py, &mut selector, query, candidates, relevance, &call)
}

/// A reusable selector: keeps its scratch buffers between calls (they grow
/// to the largest pool and budget seen), so repeated calls of similar shape
/// allocate only their results.
///
/// ``Selector(max_pool=0, max_budget=0)`` reserves room for pools of
/// ``max_pool`` rows and budgets of ``max_budget`` up front.
/// ``Selector.select`` takes exactly the arguments of ``mempursuit.select``.
/// One call at a time per Selector (the GIL is released during a call; a
/// concurrent call on the same Selector from another thread raises
/// RuntimeError): use one Selector per thread, or ``select_batch``.
#[pyclass(name = "Selector", module = "mempursuit")]
pub struct PySelector {
    inner: Selector,
}

#[pymethods]
impl PySelector {
    #[new]
    #[pyo3(signature = (max_pool=0, max_budget=0))]
    fn new(max_pool: usize, max_budget: usize) -> Self {
        PySelector {
            inner: Selector::with_capacity(max_pool, max_budget),
        }
    }

    /// Same as ``mempursuit.select(query, candidates, k, ...)``, reusing
    /// this selector's buffers.
    #[pyo3(signature = (query, candidates, k, *, method="pursuit", gamma=None, ridge=None,
        mmr_lambda=None, relevance=None, raw_relevance=false, pool_order=false, adaptive=false,
        at_pool_optimum="continue", optimum_tolerance=None, dependent_picks="keep", normalization="cosine",
        invalid="reject", storage="f32"))]
    #[allow(clippy::too_many_arguments)]
    fn select(
        &mut self,
        py: Python<'_>,
        query: &Bound<'_, PyAny>,
        candidates: &Bound<'_, PyAny>,
        k: &Bound<'_, PyAny>,
        method: &str,
        gamma: Option<f64>,
        ridge: Option<f64>,
        mmr_lambda: Option<f64>,
        relevance: Option<&Bound<'_, PyAny>>,
        raw_relevance: bool,
        pool_order: bool,
        adaptive: bool,
        at_pool_optimum: &str,
        optimum_tolerance: Option<f64>,
        dependent_picks: &str,
        normalization: &str,
        invalid: &str,
        storage: &str,
    ) -> PyResult<PySelection> {
        let args = MethodArgs {
            method,
            gamma,
            ridge,
            mmr_lambda,
            adaptive,
            at_pool_optimum,
            optimum_tolerance,
            dependent_picks,
            normalization,
            invalid,
        };
        let call = Call::new(
            k,
            args,
            relevance.is_some(),
            raw_relevance,
            pool_order,
            storage,
        )?;
        select_impl(py, &mut self.inner, query, candidates, relevance, &call)
    }

    fn __repr__(&self) -> &'static str {
        "Selector()"
    }
}

/// Runs a batch on the crate's threads with the GIL released.
fn run_batch<E: Element>(
    py: Python<'_>,
    inputs: &[Input<'_, E>],
    call: &Call,
    threads: usize,
) -> PyResult<Vec<PySelection>> {
    let results =
        py.detach(|| mempursuit::parallel::select_batch(inputs, call.k, &call.method, threads));
    results
        .into_iter()
        .enumerate()
        .map(|(i, r)| PySelection::new(py, r.map_err(|e| errors::to_py_at(i, e))?))
        .collect()
}

/// Builds the batch's inputs over `pools` (any storage) and runs them.
fn batch_with<E: Element>(
    py: Python<'_>,
    queries: &Batch<'_, f32>,
    pools: &[&[E]],
    relevance: Option<&Batch<'_, f32>>,
    call: &Call,
    threads: usize,
) -> PyResult<Vec<PySelection>> {
    let inputs: Vec<Input<'_, E>> = (0..queries.len())
        .map(|i| {
            let scores = relevance.map(|r| r.slice(i));
            Input::with_storage(queries.slice(i), pools[i]).with_relevance(call.relevance(scores))
        })
        .collect();
    run_batch(py, &inputs, call, threads)
}

/// Checks the shapes of a batch: n queries, n pools (and n relevance
/// vectors), each pool (P_i, d_i) with its query's d_i.
fn check_batch_shapes(
    queries: &Batch<'_, f32>,
    pool_shapes: &[&[usize]],
    relevance: Option<&Batch<'_, f32>>,
) -> PyResult<()> {
    let n = queries.len();
    if pool_shapes.len() != n {
        return Err(PyValueError::new_err(format!(
            "{n} queries but {} pools: pass one pool per query",
            pool_shapes.len()
        )));
    }
    if let Some(r) = relevance {
        if r.len() != n {
            return Err(PyValueError::new_err(format!(
                "{n} queries but {} relevance vectors",
                r.len()
            )));
        }
    }
    for (i, (item, shape)) in queries.items.iter().zip(pool_shapes).enumerate() {
        let d = query_dim(&item.shape, &format!("queries[{i}]"))?;
        pool_rows(shape, d, &format!("pools[{i}]"))?;
        if let Some(r) = relevance {
            relevance_len(&r.items[i].shape, &format!("relevance[{i}]"))?;
        }
    }
    Ok(())
}

/// Selects for many (query, pool) pairs at once, on ``threads`` threads
/// with the GIL released; returns one ``Selection`` per pair, in order,
/// each identical to ``select`` of that pair.
///
/// Parameters
/// ----------
/// queries : array_like, shape (n, d), or a sequence of n arrays of shape (d,)
/// pools : array_like, shape (n, P, d), or a sequence of n arrays of shape (P_i, d)
///     Pool i belongs to query i; pool sizes may differ.
/// k : int
///     The budget K ≥ 0, the same for every pair.
/// relevance : array_like, shape (n, P), or a sequence of n arrays of shape (P_i,), optional
///     The retriever's scores per pool.
/// threads : int, optional
///     Number of threads (default: the number of CPUs; at most n are used).
/// The other keyword arguments are those of ``select``, and arrays are
/// borrowed or converted once in the same way (a stacked array once as a
/// whole).
///
/// Raises
/// ------
/// ValueError
///     As ``select``, prefixed with the pair: ``pair 4: candidate 3: element
///     7 is not finite (NaN)`` (the lowest failing pair); a count mismatch
///     between queries, pools and relevance; threads < 1.
/// TypeError
///     As ``select``.
#[pyfunction]
#[pyo3(signature = (queries, pools, k, *, method="pursuit", gamma=None, ridge=None,
    mmr_lambda=None, relevance=None, raw_relevance=false, pool_order=false, adaptive=false,
    at_pool_optimum="continue", optimum_tolerance=None, dependent_picks="keep", normalization="cosine",
    invalid="reject", storage="f32", threads=None))]
#[allow(clippy::too_many_arguments)]
fn select_batch(
    py: Python<'_>,
    queries: &Bound<'_, PyAny>,
    pools: &Bound<'_, PyAny>,
    k: &Bound<'_, PyAny>,
    method: &str,
    gamma: Option<f64>,
    ridge: Option<f64>,
    mmr_lambda: Option<f64>,
    relevance: Option<&Bound<'_, PyAny>>,
    raw_relevance: bool,
    pool_order: bool,
    adaptive: bool,
    at_pool_optimum: &str,
    optimum_tolerance: Option<f64>,
    dependent_picks: &str,
    normalization: &str,
    invalid: &str,
    storage: &str,
    threads: Option<i64>,
) -> PyResult<Vec<PySelection>> {
    let args = MethodArgs {
        method,
        gamma,
        ridge,
        mmr_lambda,
        adaptive,
        at_pool_optimum,
        optimum_tolerance,
        dependent_picks,
        normalization,
        invalid,
    };
    let call = Call::new(
        k,
        args,
        relevance.is_some(),
        raw_relevance,
        pool_order,
        storage,
    )?;
    let threads = match threads {
        Some(t) if t < 1 => {
            return Err(PyValueError::new_err(format!(
                "threads must be >= 1, got {t}"
            )))
        }
        Some(t) => usize::try_from(t).unwrap_or(usize::MAX),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let q = Batch::<f32>::new(queries, 1, "queries")?;
    let rel = relevance
        .map(|r| Batch::<f32>::new(r, 1, "relevance"))
        .transpose()?;
    match call.storage {
        Storage::F32 => {
            let p = Batch::<f32>::new(pools, 2, "pools")?;
            let shapes: Vec<&[usize]> = p.items.iter().map(|it| it.shape.as_slice()).collect();
            check_batch_shapes(&q, &shapes, rel.as_ref())?;
            let slices: Vec<&[f32]> = (0..p.len()).map(|i| p.slice(i)).collect();
            batch_with(py, &q, &slices, rel.as_ref(), &call, threads)
        }
        Storage::F16 => {
            let p = Batch::<f16>::new(pools, 2, "pools")?;
            let shapes: Vec<&[usize]> = p.items.iter().map(|it| it.shape.as_slice()).collect();
            check_batch_shapes(&q, &shapes, rel.as_ref())?;
            let slices: Vec<&[f16]> = (0..p.len()).map(|i| p.slice(i)).collect();
            batch_with(py, &q, &slices, rel.as_ref(), &call, threads)
        }
        Storage::Bf16 => {
            let p = Batch::<f32>::new(pools, 2, "pools")?;
            let shapes: Vec<&[usize]> = p.items.iter().map(|it| it.shape.as_slice()).collect();
            check_batch_shapes(&q, &shapes, rel.as_ref())?;
            let owned: Vec<Vec<bf16>> = (0..p.len())
                .map(|i| p.slice(i).iter().map(|&x| bf16::from_f32(x)).collect())
                .collect();
            let slices: Vec<&[bf16]> = owned.iter().map(Vec::as_slice).collect();
            batch_with(py, &q, &slices, rel.as_ref(), &call, threads)
        }
    }
}

/// The compiled part of the ``mempursuit`` package.
#[pymodule]
fn _mempursuit(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(select, m)?)?;
    m.add_function(wrap_pyfunction!(select_batch, m)?)?;
    m.add_class::<PySelector>()?;
    m.add_class::<PySelection>()?;
    let py = m.py();
    m.add("STEP_FIELDS", PyTuple::new(py, STEP_FIELDS)?)?;
    m.add("METHODS", PyTuple::new(py, method::METHOD_NAMES)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
