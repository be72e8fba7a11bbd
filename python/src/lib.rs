//! Python bindings of MemPursuit: the extension module `mempursuit._mempursuit`
//! (re-exported by the `mempursuit` package, see `mempursuit/__init__.py` and
//! the stubs `mempursuit/_mempursuit.pyi`).
//!
//! * [`select`]: one query against its pool, a [`PySelection`] back;
//! * [`PySelector`] (`Selector`): the same with buffers reused across calls
//!   (the `mempursuit` crate's `Selector`, which grows to fit);
//! * [`select_batch`]: many (query, pool) pairs on threads with the GIL
//!   released.
//!
//! The three take the same keyword options, which go unchanged into the
//! crate's one specification of a call (`mempursuit::SelectSpec`, see
//! [`options`]); every call runs `Selector::select_spec`, the call every
//! binding makes, so the picks, errors and their messages are the Rust
//! API's (tests/conformance/vectors.json). The caller's float32 (and
//! float16) arrays are borrowed read-only, never copied or written (see
//! [`arrays`]). No Rust panic reaches Python ([`errors::guard`]).

mod arrays;
mod documents;
mod errors;
mod options;
mod run;
mod store;

use mempursuit::{FieldType, FieldValue, RefitStatus, SelectSpec, Selection, Selector, Step};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyTuple};

use arrays::{
    pool_rows, pool_view, query_dim, relevance_len, view, Arg, Batch, PoolBatch, Role, View,
};
use options::{budget, count, Count};
use run::Pair;

/// A 1-D array that Python code cannot write to (results are immutable).
fn frozen_array<'py, T: numpy::Element>(py: Python<'py>, v: Vec<T>) -> PyResult<Py<PyAny>> {
    let arr = PyArray1::from_vec(py, v);
    let kwargs = PyDict::new(py);
    kwargs.set_item("write", false)?;
    arr.call_method("setflags", (), Some(&kwargs))?;
    Ok(arr.into_any().unbind())
}

/// Pool indices as int64 (an index is below P ≤ isize::MAX).
fn to_i64(v: &[usize]) -> Vec<i64> {
    v.iter()
        .map(|&x| i64::try_from(x).unwrap_or(i64::MAX))
        .collect()
}

/// The NumPy dtype of a step field of type `ty` (a refit status is text as
/// wide as the longest status name).
fn step_dtype(ty: FieldType) -> String {
    match ty {
        FieldType::Integer => "<i8".to_owned(),
        FieldType::Number => "<f8".to_owned(),
        FieldType::Flag => "?".to_owned(),
        _ => {
            let width = RefitStatus::NAMES.iter().map(|n| n.len()).max();
            format!("<U{}", width.unwrap_or(0))
        }
    }
}

/// `(name, dtype)` of every step field, in the order of `Step::FIELDS`.
fn step_fields() -> Vec<(&'static str, String)> {
    Step::FIELDS
        .iter()
        .map(|f| (f.name, step_dtype(f.ty)))
        .collect()
}

/// The result of one selection.
///
/// Attributes (all read-only NumPy arrays, but ``stop_reason``):
///
/// * ``picks``: int64, shape (n,): selected pool rows (0-based rows of
///   ``candidates``) in entry order, never re-sorted. With a fixed budget
///   and a method whose parameters do not depend on k (``"pursuit"``,
///   ``"centroid"``, ``"topk"``, ``"mmr"``), every prefix is the selection
///   for that smaller budget; not so for the recommended setting (its gamma
///   depends on k) or ``adaptive=True``. n = min(k, P) unless adaptive
///   stopping, ``at_pool_optimum="stop"``, excluded rows or skipped
///   candidates end it early.
/// * ``weights``: float64, shape (n,): the simplex weights α aligned with
///   ``picks`` (≥ 0, sum 1; a pick keeps its place with weight 0). Shape
///   (0,) for ``"topk"`` and ``"mmr"``, which have no weights.
/// * ``steps``: structured array, shape (n,), one record per pick, with the
///   fields of ``STEP_FIELDS`` (the Rust crate's ``Step``): ``index``
///   (int64, = picks), ``score`` (U at pick time, Eq. 9, in cosine units;
///   ρ for top-K, the MMR score for MMR), ``residual_sq`` (L_t = ‖q − Σ α_j
///   m_j‖² after the refit, cosine units squared), ``improvement`` (Δ_t,
///   Eq. 7), ``fw_gap`` (Frank–Wolfe gap g_S ≥ 0, Theorem B.2; for
///   centroid pursuit a diagnostic that may be negative), ``nu`` (ν_S, Eq.
///   14), ``free_size`` (|F|, the picks with weight > 0),
///   ``solver_iterations`` (active-set iterations of the refit), ``filled``
///   (bool: picked by relevance after the pool optimum,
///   ``at_pool_optimum="fill"``), ``dependent`` (bool: at pick time the
///   memory was already represented by the picks, a duplicate or a point
///   of the hull of the weighted ones; see ``dependent_picks``), ``refit``
///   (str: how the refit ended, ``"optimal"``, ``"iteration_cap"``,
///   ``"blocked"`` or ``"numerical_failure"``; the weights are on the
///   simplex whatever it is), ``verified`` (int64: candidates the int8
///   certificate checked in f32 at this pick, ``storage="int8"``; 0
///   otherwise). For top-K and MMR only ``index`` and ``score`` are
///   meaningful (the rest is 0, ``refit`` ``"optimal"``).
/// * ``stop_reason``: str, ``"budget"`` (k picks), ``"adaptive"``,
///   ``"pool_exhausted"`` (fewer than k: the pool ran out, as for k > P),
///   ``"pool_optimum"`` or ``"cost_budget"`` (no candidate left fits the
///   ``cost_budget``).
/// * ``excluded``: int64, rows left out as unusable under
///   ``invalid="exclude"`` (ascending; empty otherwise).
/// * ``skipped``: int64, candidates skipped as already represented by the
///   picks (ascending): under ``dependent_picks="skip"``, and by the
///   recommended setting, which never picks an exact copy (bit-identical
///   row) of an earlier candidate, even when nothing else is left, and
///   takes near-copies of its picks only when nothing else is left (those
///   not reached are listed). Empty otherwise.
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

impl PySelection {
    fn new(py: Python<'_>, s: Selection) -> PyResult<PySelection> {
        Ok(PySelection {
            picks: frozen_array(py, to_i64(&s.picks))?,
            weights: frozen_array(py, s.weights)?,
            excluded: frozen_array(py, to_i64(&s.excluded))?,
            skipped: frozen_array(py, to_i64(&s.skipped))?,
            stop_reason: s.stop.as_str().to_owned(),
            records: s.steps,
            steps: PyOnceLock::new(),
        })
    }

    fn build_steps(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let np = py.import("numpy")?;
        let fields = PyList::empty(py);
        for (name, dtype) in step_fields() {
            fields.append((name, dtype))?;
        }
        let arr = np.call_method1("zeros", (self.records.len(), fields))?;
        let r = &self.records;
        for field in Step::FIELDS {
            let values = r.iter().map(|s| field.value(s));
            let column: Bound<'_, PyAny> = match field.ty {
                FieldType::Integer => {
                    let v = values.map(|v| match v {
                        FieldValue::Integer(i) => i64::try_from(i).unwrap_or(i64::MAX),
                        _ => 0,
                    });
                    PyArray1::from_vec(py, v.collect()).into_any()
                }
                FieldType::Flag => {
                    let v = values.map(|v| matches!(v, FieldValue::Flag(true)));
                    PyArray1::from_vec(py, v.collect::<Vec<bool>>()).into_any()
                }
                FieldType::Refit => {
                    let v = values.map(|v| match v {
                        FieldValue::Refit(status) => status.as_str(),
                        _ => "",
                    });
                    PyList::new(py, v)?.into_any()
                }
                _ => PyArray1::from_vec(py, values.map(FieldValue::as_f64).collect()).into_any(),
            };
            let name = field.name;
            arr.set_item(name, column)?;
        }
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
        errors::guard(py, || {
            let steps = self.steps.get_or_try_init(py, || self.build_steps(py))?;
            Ok(steps.clone_ref(py))
        })
    }

    /// Number of picks.
    fn __len__(&self) -> usize {
        self.records.len()
    }

    /// ``pickle`` support (``multiprocessing``, joblib, Ray send a
    /// selection back from a worker so): the arrays, ``stop_reason`` and
    /// the ``steps`` record, restored as they are (read-only again).
    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, Py<PyTuple>)> {
        let rebuild = py
            .import("mempursuit._mempursuit")?
            .getattr("_selection_from_state")?
            .unbind();
        let args = (
            self.picks.clone_ref(py),
            self.weights.clone_ref(py),
            self.excluded.clone_ref(py),
            self.skipped.clone_ref(py),
            self.stop_reason.clone(),
            self.steps(py)?,
        )
            .into_pyobject(py)?
            .unbind();
        Ok((rebuild, args))
    }

    /// ``copy.copy`` / ``copy.deepcopy``: a selection is immutable (its
    /// arrays are read-only), so the copy is the selection itself.
    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __deepcopy__(slf: Py<Self>, memo: &Bound<'_, PyAny>) -> Py<Self> {
        // Nothing to record in `memo`: the same immutable object.
        let _ = memo;
        slf
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

/// Rebuilds a pickled ``Selection`` (``Selection.__reduce__``'s callable;
/// not part of the API): its arrays made read-only again, ``steps`` the
/// pickled record (its ``index`` field gives ``len`` and ``repr``).
#[pyfunction]
#[pyo3(name = "_selection_from_state")]
fn selection_from_state(
    py: Python<'_>,
    picks: &Bound<'_, PyAny>,
    weights: &Bound<'_, PyAny>,
    excluded: &Bound<'_, PyAny>,
    skipped: &Bound<'_, PyAny>,
    stop_reason: String,
    steps: &Bound<'_, PyAny>,
) -> PyResult<PySelection> {
    let np = py.import("numpy")?;
    let frozen = |a: &Bound<'_, PyAny>| -> PyResult<Py<PyAny>> {
        let arr = np.call_method1("array", (a,))?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("write", false)?;
        arr.call_method("setflags", (), Some(&kwargs))?;
        Ok(arr.unbind())
    };
    let steps = frozen(steps)?;
    let index: Vec<i64> = steps
        .bind(py)
        .get_item("index")?
        .call_method0("tolist")?
        .extract()?;
    let records = index
        .into_iter()
        .map(|i| {
            let mut step = Step::default();
            step.index = usize::try_from(i).unwrap_or(usize::MAX);
            step
        })
        .collect();
    let once = PyOnceLock::new();
    let _ = once.set(py, steps);
    Ok(PySelection {
        picks: frozen(picks)?,
        weights: frozen(weights)?,
        excluded: frozen(excluded)?,
        skipped: frozen(skipped)?,
        stop_reason,
        records,
        steps: once,
    })
}

/// What every call needs besides its arrays: the specification and the
/// budget, checked before any array is read.
struct Call {
    spec: SelectSpec,
    k: usize,
}

impl Call {
    fn new(
        py: Python<'_>,
        k: &Bound<'_, PyAny>,
        (has_relevance, has_costs): (bool, bool),
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Call> {
        let spec = options::spec(py, options, has_relevance, has_costs)?;
        let k = budget(k)?;
        Ok(Call { spec, k })
    }
}

/// The views of a call's relevance scores and costs.
type Scores<'py> = (Option<View<'py, f32>>, Option<View<'py, f32>>);

/// The views of a single call's `relevance` and `costs` (each of shape
/// (P,); their length against P is the core's check).
fn scores<'py>(
    py: Python<'_>,
    relevance: Option<&Bound<'py, PyAny>>,
    costs: Option<&Bound<'py, PyAny>>,
) -> PyResult<Scores<'py>> {
    let rel = relevance
        .map(|r| view::<f32>(r, &Arg::single("relevance", Role::Relevance)))
        .transpose()?;
    if let Some(r) = &rel {
        relevance_len(py, r.shape(), "relevance")?;
    }
    let cost = costs
        .map(|c| view::<f32>(c, &Arg::single("costs", Role::Costs)))
        .transpose()?;
    if let Some(c) = &cost {
        relevance_len(py, c.shape(), "costs")?;
    }
    Ok((rel, cost))
}

/// One selection: views the arrays, checks their shapes and runs the call
/// with the GIL released.
fn select_one(
    py: Python<'_>,
    selector: &mut Selector,
    query: &Bound<'_, PyAny>,
    candidates: &Bound<'_, PyAny>,
    (relevance, costs): (Option<&Bound<'_, PyAny>>, Option<&Bound<'_, PyAny>>),
    options: Option<&Bound<'_, PyDict>>,
    k: &Bound<'_, PyAny>,
) -> PyResult<PySelection> {
    let call = Call::new(py, k, (relevance.is_some(), costs.is_some()), options)?;
    let q = view::<f32>(query, &Arg::single("query", Role::Query))?;
    let d = query_dim(py, q.shape(), "query")?;
    let (rel, cost) = scores(py, relevance, costs)?;
    let pool = pool_view(candidates, &Arg::single("candidates", Role::Candidates))?;
    pool_rows(py, pool.shape(), d, "candidates")?;
    let pair = Pair {
        query: q.slice(),
        pool: pool.pool(),
        relevance: rel.as_ref().map(|r| r.slice()),
        costs: cost.as_ref().map(|c| c.slice()),
    };
    let spec = call.spec;
    let outcome = py.detach(|| run::one(selector, &spec, pair, call.k));
    match outcome {
        Ok(Ok(sel)) => PySelection::new(py, sel),
        Ok(Err(e)) => Err(errors::call(py, &e, "")),
        Err(panic) => Err(errors::from_panic(py, "", &panic)),
    }
}

/// Selects up to ``k`` memories from ``candidates`` for ``query``.
///
/// With no option this is the recommended setting: centroid pursuit on
/// relevance by rank with a per-pool, per-budget gamma, which needs no
/// tuning. Every option is a keyword argument; ``None`` (the default of
/// each) leaves it at the library's default, and ``mempursuit.OPTIONS``
/// lists them with their types, defaults and the methods they apply to.
/// An option that does not apply to the method is an error, never ignored.
///
/// Parameters
/// ----------
/// query : array_like, shape (d,) or (1, d)
///     The query embedding. Only its direction is used (cosines).
/// candidates : array_like, shape (P, d)
///     The candidate pool, row-major (row i = pool index i), e.g. the top-P
///     result of a vector store. float32 (and float16) C-contiguous arrays
///     are used without copying and never modified; any other real dtype,
///     byte order or layout is converted once to float32.
/// k : int
///     The budget K ≥ 0 (any int; K ≥ P selects the whole pool).
/// relevance : array_like, shape (P,), optional
///     The first-stage retriever's scores, one per candidate (finite, any
///     scale or sign; converted to float32). Used by rank: the candidate
///     with the r-th largest score gets the r-th largest query cosine of
///     the pool as its relevance, so gamma keeps its meaning for every
///     retriever (as given with ``raw_relevance=True``). Default: the
///     relevance is each candidate's cosine to the query.
/// costs : array_like, shape (P,), optional
///     Each candidate's cost, e.g. the token count of its text (finite,
///     ≥ 0; any real dtype, converted to float32), with ``cost_budget``: a
///     prompt is budgeted in tokens, not in memories.
/// method : {"recommended", "pursuit", "centroid", "topk", "mmr"}, optional
///     ``"recommended"`` (the default): see above; its picks for k are not
///     always a prefix of those for a larger k. ``"pursuit"``: MemPursuit,
///     the paper's method (ridge 1e-10, gamma 1, relevance = cosine): choose
///     it for nested prefixes (every prefix of the picks is the selection
///     for that budget), for the paper's theory (coverage guarantee,
///     Frank–Wolfe certificate), or with a strong encoder on a pool of
///     cosines, where it does as well; with ``gamma`` and ``ridge``, a
///     member of its relevance-scaled family. ``"centroid"``: centroid
///     pursuit (ridge = inf, α = 1/|S|) with a fixed gamma. ``"topk"``: the
///     pool by relevance. ``"mmr"``: maximal marginal relevance.
/// gamma : float, optional
///     γ ∈ (0, 1], the weight of the reconstruction against relevance
///     (pursuit and centroid; default 1 for pursuit, 0.5 for centroid).
/// ridge : float, optional
///     λ ≥ 0 of the refit (Eq. 6; pursuit only; default 1e-10);
///     ``float("inf")`` is centroid pursuit.
/// mmr_lambda : float, optional
///     λ_mmr ∈ [0, 1], relevance against diversity (mmr only; default 0.5;
///     1 is top-K).
/// raw_relevance : bool, optional
///     Use ``relevance`` as given (gamma is then in its units); needs
///     ``relevance``. Not for the recommended setting.
/// pool_order : bool, optional
///     The pool is in the retriever's order (row 0 first): the row at rank
///     r gets the r-th largest cosine of the pool as its relevance. Not
///     together with ``relevance``.
/// cost_budget : float, optional
///     The most the picks may cost in total (≥ 0, in the units of
///     ``costs``; every method). The method picks as without costs, except
///     that a candidate that no longer fits (the picks' costs plus its own
///     exceed the budget) is skipped; the selection stops when nothing fits
///     (``stop_reason == "cost_budget"``), and k still caps the picks (pass
///     a large k to let the budget decide). Needs ``costs``, and the
///     reverse.
/// adaptive : bool, optional
///     Adaptive stopping (Eq. 7: stop after 2 consecutive relative
///     improvements of the residual ≤ 1e-5; pursuit and centroid).
/// at_pool_optimum : {"continue", "stop", "fill"}, optional
///     Once the Frank–Wolfe gap is ≤ ``optimum_tolerance``: keep picking
///     (the default, the paper), stop, or take the remaining picks by
///     relevance (pursuit with a finite ridge).
/// optimum_tolerance : float, optional
///     The gap that counts as the pool optimum (default 1e-12).
/// dependent_picks : {"keep", "skip"}, optional
///     A candidate already represented by the picks (a duplicate of a pick,
///     or in the affine hull of the weighted picks): pick it and flag its
///     step (``steps["dependent"]``, the default, the paper's picks), or
///     skip it, list it in ``skipped`` and spend the budget on the next one
///     (pursuit with a finite ridge).
/// normalization : {"cosine", "require_unit"}, optional
///     ``"cosine"`` (default): non-unit vectors are used through their
///     direction. ``"require_unit"``: a vector whose norm differs from 1 by
///     more than 1e-3 is an error.
/// invalid : {"reject", "exclude"}, optional
///     An unusable candidate row (NaN/inf element, zero or out-of-range
///     norm) is an error (the default) or is left out and listed in
///     ``excluded``.
/// storage : {"f32", "f16", "bf16", "int8"}, optional
///     How the candidates are stored for the passes over them (default
///     ``"f32"``). ``"f16"``: a float16 C-contiguous array is used without
///     a copy, anything else is read as float32 and rounded once (a finite
///     value beyond ±65504 is an error naming it); ``"bf16"``: rounded once
///     to bfloat16. The selection equals the float32 selection on the
///     rounded values. ``"int8"``: the certified int8 pursuit (recommended,
///     pursuit, centroid), whose selection equals the float32 pursuit's;
///     top-K and MMR read the float32 rows.
///
/// Returns
/// -------
/// Selection
///     ``picks``, ``weights``, ``steps``, ``stop_reason``, ``excluded``,
///     ``skipped``.
///
/// Raises
/// ------
/// MemPursuitError
///     A ``ValueError`` with ``kind``: ``"option"`` for an unknown or bad
///     option (``gamma 2 must be in (0, 1]``) or a negative k; ``"input"``
///     for a shape mismatch or an unusable vector, naming the row and
///     element (``candidate 3: element 7 is not finite (NaN)``, ``query:
///     all elements are zero``); ``"capacity"`` (a ``CapacityError``, also
///     a ``MemoryError``) when the call's memory cannot be allocated.
/// TypeError
///     An argument of the wrong type (``k`` not an int, an option not a
///     float/bool/str, an array not real-valued), naming it.
#[pyfunction]
#[pyo3(
    signature = (query, candidates, k, *, relevance=None, costs=None, **options),
    text_signature = "(query, candidates, k, *, relevance=None, costs=None, method=None, gamma=None, ridge=None, mmr_lambda=None, raw_relevance=None, pool_order=None, cost_budget=None, adaptive=None, at_pool_optimum=None, optimum_tolerance=None, dependent_picks=None, normalization=None, invalid=None, storage=None)"
)]
fn select(
    py: Python<'_>,
    query: &Bound<'_, PyAny>,
    candidates: &Bound<'_, PyAny>,
    k: &Bound<'_, PyAny>,
    relevance: Option<&Bound<'_, PyAny>>,
    costs: Option<&Bound<'_, PyAny>>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<PySelection> {
    errors::guard(py, || {
        let mut selector = Selector::new();
        select_one(
            py,
            &mut selector,
            query,
            candidates,
            (relevance, costs),
            options,
            k,
        )
    })
}

/// A reusable selector: keeps its scratch buffers between calls (they grow
/// to the largest pool and budget seen), so repeated calls of similar shape
/// allocate only their results.
///
/// ``Selector(max_pool=0, max_budget=0)`` reserves room for pools of
/// ``max_pool`` rows and budgets of ``max_budget`` up front (a
/// ``CapacityError`` if that cannot be allocated). ``Selector.select``
/// takes exactly the arguments of ``mempursuit.select``. One call at a
/// time per Selector (the GIL is released during a call; a concurrent call
/// on the same Selector from another thread raises RuntimeError): use one
/// Selector per thread, or ``select_batch``.
#[pyclass(name = "Selector", module = "mempursuit")]
pub struct PySelector {
    inner: Selector,
}

#[pymethods]
impl PySelector {
    #[new]
    #[pyo3(signature = (max_pool=None, max_budget=None), text_signature = "(max_pool=0, max_budget=0)")]
    fn new(
        py: Python<'_>,
        max_pool: Option<&Bound<'_, PyAny>>,
        max_budget: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        errors::guard(py, || {
            let mut sizes = [0usize; 2];
            for (size, (name, obj)) in sizes
                .iter_mut()
                .zip([("max_pool", max_pool), ("max_budget", max_budget)])
            {
                let Some(obj) = obj else { continue };
                *size = match count(name, obj, 0)? {
                    Count::Value(v) => v,
                    Count::Huge => {
                        return Err(errors::capacity(
                            py,
                            format!("{name} = {obj} exceeds the address space; use a smaller capacity (a Selector grows to fit on its own)"),
                        ))
                    }
                };
            }
            let mut inner = Selector::new();
            inner.try_reserve(sizes[0], sizes[1]).map_err(|e| {
                errors::capacity(
                    py,
                    format!("max_pool = {}, max_budget = {}: {e}", sizes[0], sizes[1]),
                )
            })?;
            Ok(PySelector { inner })
        })
    }

    /// Same as ``mempursuit.select(query, candidates, k, ...)``, reusing
    /// this selector's buffers.
    #[pyo3(
        signature = (query, candidates, k, *, relevance=None, costs=None, **options),
        text_signature = "($self, query, candidates, k, *, relevance=None, costs=None, method=None, gamma=None, ridge=None, mmr_lambda=None, raw_relevance=None, pool_order=None, cost_budget=None, adaptive=None, at_pool_optimum=None, optimum_tolerance=None, dependent_picks=None, normalization=None, invalid=None, storage=None)"
    )]
    // One parameter per argument of the Python signature.
    #[allow(clippy::too_many_arguments)]
    fn select(
        &mut self,
        py: Python<'_>,
        query: &Bound<'_, PyAny>,
        candidates: &Bound<'_, PyAny>,
        k: &Bound<'_, PyAny>,
        relevance: Option<&Bound<'_, PyAny>>,
        costs: Option<&Bound<'_, PyAny>>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PySelection> {
        let inner = &mut self.inner;
        errors::guard(py, || {
            select_one(py, inner, query, candidates, (relevance, costs), options, k)
        })
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.inner)
    }
}

/// The threads of a batch: an int ≥ 0, where 0 (and the default `None`)
/// is one thread per available CPU: the Rust crate's
/// `parallel::thread_count`, which every batch entry point of the crate
/// (`Store::select_batch`, `parallel::select_batch`) applies.
pub(crate) fn thread_count(threads: Option<&Bound<'_, PyAny>>) -> PyResult<usize> {
    let Some(t) = threads.filter(|t| !t.is_none()) else {
        return Ok(mempursuit::parallel::thread_count(0));
    };
    Ok(match count("threads", t, 0)? {
        Count::Value(n) => mempursuit::parallel::thread_count(n),
        Count::Huge => usize::MAX,
    })
}

/// Checks the shapes of a batch: n queries, n pools (and n relevance
/// and cost vectors), each pool (P_i, d_i) with its query's d_i.
fn check_batch_shapes(
    py: Python<'_>,
    queries: &Batch<'_, f32>,
    pools: &PoolBatch<'_>,
    per_pool: [(&str, Option<&Batch<'_, f32>>); 2],
) -> PyResult<()> {
    let n = queries.len();
    if pools.len() != n {
        return Err(errors::input(
            py,
            format!(
                "{n} queries but {} pools: pass one pool per query",
                pools.len()
            ),
        ));
    }
    for (name, batch) in per_pool {
        if let Some(r) = batch {
            if r.len() != n {
                let what = if name == "costs" { "cost" } else { "relevance" };
                return Err(errors::input(
                    py,
                    format!("{n} queries but {} {what} vectors", r.len()),
                ));
            }
        }
    }
    for (i, (item, pool)) in queries.items.iter().zip(&pools.items).enumerate() {
        let d = query_dim(py, &item.shape, &format!("queries[{i}]"))?;
        pool_rows(py, &pool.shape, d, &format!("pools[{i}]"))?;
        for (name, batch) in per_pool {
            if let Some(r) = batch.and_then(|r| r.items.get(i)) {
                relevance_len(py, &r.shape, &format!("{name}[{i}]"))?;
            }
        }
    }
    Ok(())
}

/// Selects for many (query, pool) pairs at once, on ``threads`` threads
/// with the GIL released; returns one ``Selection`` per pair, in order,
/// each identical to ``select`` of that pair (every pair runs the same
/// call).
///
/// Parameters
/// ----------
/// queries : array_like, shape (n, d), or a sequence of n arrays of shape (d,)
/// pools : array_like, shape (n, P, d), or a sequence of n arrays of shape (P_i, d)
///     Pool i belongs to query i; pool sizes may differ.
/// k : int
///     The budget K ≥ 0, the same for every pair.
/// relevance : array_like, shape (n, P), or a sequence of n arrays of shape (P_i,), optional
///     The retriever's scores per pool (with ``offsets``: shape (N,), one
///     per row of ``pools``).
/// costs : array_like, shape (n, P), or a sequence of n arrays of shape (P_i,), optional
///     The candidates' costs per pool (with ``cost_budget``, the same for
///     every pair; with ``offsets``: shape (N,), one per row of ``pools``).
/// offsets : array_like of int, shape (n + 1,), optional
///     Ragged pools held as one matrix (CSR style): ``pools`` is then one
///     array of shape (N, d) with the rows of every pool, pool i its rows
///     ``offsets[i]:offsets[i + 1]`` (``offsets[0] = 0``, non-decreasing,
///     ``offsets[n] = N``), borrowed once as a whole (no copy for float32
///     or float16 C-contiguous), as are ``relevance`` and ``costs`` (N,).
///     The form an Arrow ``list<fixed_size_list<float32>[d]>`` column has
///     (``mempursuit.arrow``).
/// threads : int, optional
///     Number of threads ≥ 0; 0 or ``None`` (the default): one per
///     available CPU. At most n are used.
///
/// The options are those of ``select`` (default: the recommended setting),
/// and arrays are borrowed or converted once in the same way (a stacked
/// array once as a whole).
///
/// Raises
/// ------
/// MemPursuitError
///     As ``select``, the message prefixed with the pair: ``pair 4:
///     candidate 3: element 7 is not finite (NaN)`` (the lowest failing
///     pair); a count mismatch between queries, pools, relevance and costs,
///     or offsets that are not n + 1 non-decreasing row numbers from 0 to N
///     (kind input); threads < 0 (kind option).
/// TypeError
///     As ``select``; ``offsets`` not of an integer dtype.
#[pyfunction]
#[pyo3(
    signature = (queries, pools, k, *, relevance=None, costs=None, offsets=None, threads=None, **options),
    text_signature = "(queries, pools, k, *, relevance=None, costs=None, offsets=None, threads=None, method=None, gamma=None, ridge=None, mmr_lambda=None, raw_relevance=None, pool_order=None, cost_budget=None, adaptive=None, at_pool_optimum=None, optimum_tolerance=None, dependent_picks=None, normalization=None, invalid=None, storage=None)"
)]
// One parameter per argument of the Python signature.
#[allow(clippy::too_many_arguments)]
fn select_batch(
    py: Python<'_>,
    queries: &Bound<'_, PyAny>,
    pools: &Bound<'_, PyAny>,
    k: &Bound<'_, PyAny>,
    relevance: Option<&Bound<'_, PyAny>>,
    costs: Option<&Bound<'_, PyAny>>,
    offsets: Option<&Bound<'_, PyAny>>,
    threads: Option<&Bound<'_, PyAny>>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Vec<PySelection>> {
    errors::guard(py, || {
        let call = Call::new(py, k, (relevance.is_some(), costs.is_some()), options)?;
        let threads = thread_count(threads)?;
        let q = Batch::<f32>::new(queries, 1, "queries", Role::Query)?;
        let (p, rel, cost) = match offsets {
            None => (
                PoolBatch::new(pools, "pools")?,
                relevance
                    .map(|r| Batch::<f32>::new(r, 1, "relevance", Role::Relevance))
                    .transpose()?,
                costs
                    .map(|c| Batch::<f32>::new(c, 1, "costs", Role::Costs))
                    .transpose()?,
            ),
            Some(o) => {
                let matrix = PoolBatch::matrix(pools, "pools")?;
                let rows = matrix.shape().first().copied().unwrap_or(0);
                let ranges = arrays::offsets(py, o, q.len(), rows)?;
                let rel = relevance
                    .map(|r| Batch::<f32>::ragged(r, &ranges, rows, "relevance", Role::Relevance))
                    .transpose()?;
                let cost = costs
                    .map(|c| Batch::<f32>::ragged(c, &ranges, rows, "costs", Role::Costs))
                    .transpose()?;
                (PoolBatch::ragged(matrix, &ranges), rel, cost)
            }
        };
        check_batch_shapes(
            py,
            &q,
            &p,
            [("relevance", rel.as_ref()), ("costs", cost.as_ref())],
        )?;
        let pairs: Vec<Pair<'_>> = (0..q.len())
            .map(|i| Pair {
                query: q.slice(i),
                pool: p.pool(i),
                relevance: rel.as_ref().map(|r| r.slice(i)),
                costs: cost.as_ref().map(|c| c.slice(i)),
            })
            .collect();
        let spec = call.spec;
        let outcomes = py.detach(|| run::batch(&spec, &pairs, call.k, threads));
        outcomes
            .into_iter()
            .enumerate()
            .map(|(i, outcome)| match outcome {
                Ok(Ok(sel)) => PySelection::new(py, sel),
                Ok(Err(e)) => Err(errors::call(py, &e, &format!("pair {i}: "))),
                Err(panic) => Err(errors::from_panic(py, &format!("pair {i}: "), &panic)),
            })
            .collect()
    })
}

/// The compiled part of the ``mempursuit`` package.
#[pymodule]
fn _mempursuit(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(select, m)?)?;
    m.add_function(wrap_pyfunction!(select_batch, m)?)?;
    m.add_function(wrap_pyfunction!(documents::prepare_documents, m)?)?;
    m.add_function(wrap_pyfunction!(documents::select_documents, m)?)?;
    m.add_function(wrap_pyfunction!(documents::check_document_settings, m)?)?;
    m.add_function(wrap_pyfunction!(documents::check_count, m)?)?;
    m.add_function(wrap_pyfunction!(documents::check_query, m)?)?;
    m.add_function(wrap_pyfunction!(store::store_from_state, m)?)?;
    m.add_function(wrap_pyfunction!(selection_from_state, m)?)?;
    m.add("METADATA_KEY", mempursuit::documents::METADATA_KEY)?;
    m.add(
        "METADATA_FIELDS",
        pyo3::types::PyTuple::new(m.py(), mempursuit::documents::METADATA_FIELDS)?,
    )?;
    m.add_class::<PySelector>()?;
    m.add_class::<store::PyStore>()?;
    m.add_class::<PySelection>()?;
    m.add("STEP_FIELDS", PyTuple::new(py, step_fields())?)?;
    m.add("METHODS", options::methods(py)?)?;
    m.add("OPTIONS", options::options_table(py)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
