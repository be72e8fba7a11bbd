//! `mempursuit.Store`: the `mempursuit` crate's [`Store`] (memory
//! embeddings validated and kept once, queried by the retriever's ids) for
//! Python. Its calls take the keyword options of `select` (the same
//! [`crate::Call`]: one specification, [`crate::options::spec`]) and return
//! the same `Selection`, whose picks are positions in the call's ids: the
//! selection of `select` on the gathered rows `rows[ids]`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{PoisonError, RwLock, RwLockReadGuard};

use mempursuit::{ErrorKind, SelectSpec, Selector, Storage, Store, StoreCall};
use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyRange, PyString};

use crate::arrays::{fmt_shape, prefixed, query_dim, relevance_len, view, Arg, Batch, Role};
use crate::errors::{self, panic_message};
use crate::options::{self, type_name};
use crate::{scores, thread_count, Call, PySelection};

/// The storage named by `storage` (a str: `"f32"`, `"f16"`, `"bf16"`,
/// `"int8"`), read as the option `storage` of a call is (the same
/// messages).
fn storage(py: Python<'_>, obj: Option<&Bound<'_, PyAny>>) -> PyResult<Storage> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(Storage::default());
    };
    let mut spec = SelectSpec::default();
    options::set_one(py, &mut spec, "storage", obj)?.map_err(|e| errors::spec(py, e))?;
    spec.method().map_err(|e| errors::spec(py, e))?;
    Ok(spec.given_storage().unwrap_or_default())
}

/// The dimension d of `rows` of shape (N, d).
fn rows_dim(py: Python<'_>, shape: &[usize], name: &str) -> PyResult<usize> {
    match shape {
        [_, d] => Ok(*d),
        _ => Err(errors::input(
            py,
            format!(
                "{name} must have shape (N, d), one memory per row, got {}",
                fmt_shape(shape)
            ),
        )),
    }
}

/// The ids of one call: a 1-D array-like of integers (any integer dtype;
/// an empty sequence too), each ≥ 0 (an id beyond the store is the Rust
/// [`Store`]'s error). `name` names them in messages, `prefix` (`"pair 2:
/// "`) goes in front.
fn read_ids(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    name: &str,
    prefix: &str,
) -> PyResult<Vec<usize>> {
    let np = py.import("numpy")?;
    let source = np
        .call_method1("asarray", (obj,))
        .map_err(|e| prefixed(py, name, e))?;
    let untyped = source.cast::<PyUntypedArray>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{name} must be an array of integers, not {}",
            type_name(obj)
        ))
    })?;
    if untyped.ndim() != 1 {
        return Err(errors::input(
            py,
            format!(
                "{prefix}{name} must have shape (P,), one store id per candidate, got {}",
                fmt_shape(untyped.shape())
            ),
        ));
    }
    if untyped.len() == 0 {
        return Ok(Vec::new());
    }
    let dtype = untyped.dtype();
    // Booleans and floats are no ids (NumPy would read them as 0/1 or truncate).
    let arg = Arg::single(name, Role::Relevance);
    match dtype.kind() {
        b'u' => Ok(view::<u64>(&source, &arg)?
            .slice()
            .iter()
            .map(|&v| usize::try_from(v).unwrap_or(usize::MAX))
            .collect()),
        b'i' => {
            let ids = view::<i64>(&source, &arg)?;
            ids.slice()
                .iter()
                .enumerate()
                .map(|(position, &v)| {
                    usize::try_from(v).map_err(|_| {
                        errors::document(
                            py,
                            &format!(
                                "{prefix}ids[{position}] = {v} is negative: it names no row of the store (ids run from 0); pass ids the store returned"
                            ),
                            ErrorKind::Input,
                            Some(position),
                            Some(&v.to_string()),
                            "ids",
                        )
                    })
                })
                .collect()
        }
        _ => Err(PyTypeError::new_err(format!(
            "{name}: dtype {} is not an integer type; pass the candidates' store ids as integers",
            dtype.str().map(|s| s.to_string()).unwrap_or_default()
        ))),
    }
}

/// Memory embeddings kept across queries: N rows of d values, each
/// validated once when it enters (finite, not all zero, norm within the
/// library's range), with the storage every call reads. A call names its
/// candidate pool by the retriever's ids (positions in the store) and
/// copies no rows from Python.
///
/// ``Store(rows, *, storage="f32")``: ``rows`` is array_like, shape (N, d)
/// (float32 C-contiguous arrays are read without a conversion, any other
/// real dtype is converted once to float32; the store keeps its own copy,
/// and the caller's array is never modified). ``storage``: ``"f32"``,
/// ``"f16"``, ``"bf16"`` or ``"int8"``, the storage of every call (see
/// ``select``'s ``storage``).
///
/// ``store.select(query, ids, k, ...)`` is ``mempursuit.select(query,
/// rows[ids], k, storage=store.storage, ...)``: the same options (default:
/// the recommended setting), the same ``Selection``, whose ``picks`` are
/// positions in ``ids`` (``ids[picks]`` are the store rows).
///
/// Raises
/// ------
/// MemPursuitError
///     kind ``"input"``: ``rows`` not of shape (N, d) or d = 0; a row that
///     is not finite, all zero or out of the norm range, with ``index`` =
///     its row and ``argument`` = ``"rows"``. kind ``"option"``: an unknown
///     storage.
/// TypeError
///     ``rows`` not real-valued, ``storage`` not a str.
///
/// Calls from several threads run together (the GIL is released while
/// they select); ``append`` from another thread waits for the calls in
/// flight, and calls wait for an ``append`` in progress.
#[pyclass(name = "Store", module = "mempursuit")]
pub struct PyStore {
    /// The store; `select` reads it and `append` writes it with the GIL
    /// released, so an `append` waits for the calls in flight and a call
    /// waits for an `append` (no "already borrowed" error).
    inner: RwLock<Store>,
}

impl PyStore {
    fn build(
        py: Python<'_>,
        rows: &Bound<'_, PyAny>,
        storage_obj: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let storage = storage(py, storage_obj)?;
        let v = view::<f32>(rows, &Arg::single("rows", Role::Rows))?;
        let d = rows_dim(py, v.shape(), "rows")?;
        let inner = Store::new(v.slice(), d, storage).map_err(|e| errors::store(py, &e, ""))?;
        Ok(PyStore {
            inner: RwLock::new(inner),
        })
    }

    /// The store for reading (a poisoned lock still holds a whole store:
    /// `Store::append` adds nothing on an error).
    fn read(&self) -> RwLockReadGuard<'_, Store> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Checks that `shape` is one query (1-D, d ≥ 1); its length against
    /// the store's d is the Rust store's check (`StoreError::QueryLength`).
    fn query_dim(&self, py: Python<'_>, shape: &[usize], name: &str) -> PyResult<usize> {
        query_dim(py, shape, name)
    }
}

#[pymethods]
impl PyStore {
    #[new]
    #[pyo3(signature = (rows, *, storage=None), text_signature = "(rows, *, storage='f32')")]
    fn new(
        py: Python<'_>,
        rows: &Bound<'_, PyAny>,
        storage: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        errors::guard(py, || PyStore::build(py, rows, storage))
    }

    /// ``Store.from_npy(path, *, storage="f32")``: a store of the (N, d)
    /// matrix in the ``.npy`` file ``path`` (str or path-like), read with
    /// ``numpy.load(path, mmap_mode="r", allow_pickle=False)`` (float32 is
    /// read from the mapped file without a conversion; other real dtypes are
    /// converted once). Raises as ``Store(rows)``, and NumPy's ``OSError`` /
    /// ``ValueError`` for a file it cannot read.
    #[staticmethod]
    #[pyo3(signature = (path, *, storage=None), text_signature = "(path, *, storage='f32')")]
    fn from_npy(
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        storage: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        errors::guard(py, || {
            let np = py.import("numpy")?;
            let kwargs = PyDict::new(py);
            kwargs.set_item("mmap_mode", "r")?;
            kwargs.set_item("allow_pickle", false)?;
            let rows = np.call_method("load", (path,), Some(&kwargs))?;
            PyStore::build(py, &rows, storage)
        })
    }

    /// Adds ``rows`` (array_like, shape (M, d), the store's d) at the end,
    /// each validated as in ``Store(rows)``; returns their ids,
    /// ``range(N, N + M)``. On an error nothing is added (``index``: the
    /// bad row's store id, N + its row in ``rows``).
    fn append(&self, py: Python<'_>, rows: &Bound<'_, PyAny>) -> PyResult<Py<PyRange>> {
        errors::guard(py, || {
            let v = view::<f32>(rows, &Arg::single("rows", Role::Rows))?;
            let d = rows_dim(py, v.shape(), "rows")?;
            let dim = self.read().dim();
            if d != dim {
                return Err(errors::document(
                    py,
                    &format!(
                        "rows have d = {d} columns but the store's rows have d = {dim}; embed them with the store's model"
                    ),
                    ErrorKind::Input,
                    None,
                    None,
                    "rows",
                ));
            }
            let slice = v.slice();
            let appended = py.detach(|| {
                let mut store = self.inner.write().unwrap_or_else(PoisonError::into_inner);
                store.append(slice)
            });
            let ids = appended.map_err(|e| errors::store(py, &e, ""))?;
            let bound = |x: usize| isize::try_from(x).unwrap_or(isize::MAX);
            Ok(PyRange::new(py, bound(ids.start), bound(ids.end))?.unbind())
        })
    }

    /// The number of rows N.
    fn __len__(&self) -> usize {
        self.read().len()
    }

    /// The embedding dimension d.
    #[getter]
    fn dim(&self) -> usize {
        self.read().dim()
    }

    /// The storage every call reads: ``"f32"``, ``"f16"``, ``"bf16"`` or
    /// ``"int8"``.
    #[getter]
    fn storage(&self) -> &'static str {
        self.read().storage().as_str()
    }

    /// Selects up to ``k`` of the candidates ``ids`` (the retriever's
    /// store ids) for ``query``: the ``Selection`` of
    /// ``mempursuit.select(query, rows[ids], k, storage=store.storage,
    /// ...)``, picks as positions in ``ids``.
    ///
    /// Parameters
    /// ----------
    /// query : array_like, shape (d,) or (1, d)
    ///     The query embedding, the store's d.
    /// ids : array_like of int, shape (P,)
    ///     The candidates' store ids (0 ≤ id < N, any order, any integer
    ///     dtype); candidate i is row ``ids[i]``.
    /// k : int
    ///     The budget K ≥ 0.
    /// relevance, costs : array_like, shape (P,), optional
    ///     As in ``select``, one per id.
    ///
    /// The options are those of ``select``; ``storage``, if given, must be
    /// the store's (kind ``"option"`` otherwise).
    ///
    /// Raises
    /// ------
    /// MemPursuitError
    ///     As ``select``; kind ``"input"`` for a negative id or one ≥ N
    ///     (``index`` = its position in ``ids``, ``id`` = the id as text,
    ///     ``argument`` = ``"ids"``) and for a query of another d.
    /// TypeError
    ///     As ``select``; ``ids`` not of an integer dtype.
    #[pyo3(
        signature = (query, ids, k, *, relevance=None, costs=None, **options),
        text_signature = "($self, query, ids, k, *, relevance=None, costs=None, method=None, gamma=None, ridge=None, mmr_lambda=None, raw_relevance=None, pool_order=None, cost_budget=None, adaptive=None, at_pool_optimum=None, optimum_tolerance=None, dependent_picks=None, normalization=None, invalid=None, storage=None)"
    )]
    // One parameter per argument of the Python signature.
    #[allow(clippy::too_many_arguments)]
    fn select(
        &self,
        py: Python<'_>,
        query: &Bound<'_, PyAny>,
        ids: &Bound<'_, PyAny>,
        k: &Bound<'_, PyAny>,
        relevance: Option<&Bound<'_, PyAny>>,
        costs: Option<&Bound<'_, PyAny>>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PySelection> {
        errors::guard(py, || {
            let call = Call::new(py, k, (relevance.is_some(), costs.is_some()), options)?;
            let q = view::<f32>(query, &Arg::single("query", Role::Query))?;
            self.query_dim(py, q.shape(), "query")?;
            let ids = read_ids(py, ids, "ids", "")?;
            let (rel, cost) = scores(py, relevance, costs)?;
            let store_call = StoreCall::new(q.slice(), &ids)
                .with_relevance(rel.as_ref().map(|r| r.slice()))
                .with_costs(cost.as_ref().map(|c| c.slice()));
            let (lock, spec) = (&self.inner, &call.spec);
            let outcome = py.detach(|| {
                let store = lock.read().unwrap_or_else(PoisonError::into_inner);
                catch_unwind(AssertUnwindSafe(|| {
                    store.select(&mut Selector::new(), spec, store_call, call.k)
                }))
                .map_err(|p| panic_message(p.as_ref()))
            });
            match outcome {
                Ok(Ok(sel)) => PySelection::new(py, sel),
                Ok(Err(e)) => Err(errors::call(py, &e, "")),
                Err(panic) => Err(errors::from_panic(py, "", &panic)),
            }
        })
    }

    /// ``select`` for each (queries[i], id_lists[i]) on ``threads`` native
    /// threads with the GIL released; one ``Selection`` per query, in
    /// order, each identical to ``store.select(queries[i], id_lists[i], k,
    /// ...)``.
    ///
    /// Parameters
    /// ----------
    /// queries : array_like, shape (n, d), or a sequence of n arrays of shape (d,)
    /// id_lists : a sequence of n integer array_likes of shape (P_i,), or an int array of shape (n, P)
    /// k : int
    ///     The budget K ≥ 0, the same for every query.
    /// relevance, costs : shape (n, P), or a sequence of n arrays of shape (P_i,), optional
    /// threads : int, optional
    ///     Number of threads ≥ 1 (default: the number of CPUs; at most n
    ///     are used).
    ///
    /// Raises
    /// ------
    /// MemPursuitError
    ///     As ``select``, the message prefixed with the pair (``pair 4:
    ///     ids[3] = ...``, the lowest failing pair); a count mismatch
    ///     between queries, id lists, relevance and costs (kind input);
    ///     threads < 1 (kind option).
    #[pyo3(
        signature = (queries, id_lists, k, *, relevance=None, costs=None, threads=None, **options),
        text_signature = "($self, queries, id_lists, k, *, relevance=None, costs=None, threads=None, method=None, gamma=None, ridge=None, mmr_lambda=None, raw_relevance=None, pool_order=None, cost_budget=None, adaptive=None, at_pool_optimum=None, optimum_tolerance=None, dependent_picks=None, normalization=None, invalid=None, storage=None)"
    )]
    // One parameter per argument of the Python signature.
    #[allow(clippy::too_many_arguments)]
    fn select_batch(
        &self,
        py: Python<'_>,
        queries: &Bound<'_, PyAny>,
        id_lists: &Bound<'_, PyAny>,
        k: &Bound<'_, PyAny>,
        relevance: Option<&Bound<'_, PyAny>>,
        costs: Option<&Bound<'_, PyAny>>,
        threads: Option<&Bound<'_, PyAny>>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Vec<PySelection>> {
        errors::guard(py, || {
            let call = Call::new(py, k, (relevance.is_some(), costs.is_some()), options)?;
            let threads = thread_count(threads)?;
            let q = Batch::<f32>::new(queries, 1, "queries", Role::Query)?;
            let n = q.len();
            if id_lists.is_instance_of::<PyString>() {
                return Err(PyTypeError::new_err(
                    "id_lists must be a sequence of integer arrays, not str",
                ));
            }
            let lists = id_lists
                .try_iter()
                .map_err(|_| {
                    PyTypeError::new_err(format!(
                        "id_lists must be a sequence of integer arrays, not {}",
                        type_name(id_lists)
                    ))
                })?
                .collect::<PyResult<Vec<_>>>()?;
            if lists.len() != n {
                return Err(errors::input(
                    py,
                    format!(
                        "{n} queries but {} id lists: pass one id list per query",
                        lists.len()
                    ),
                ));
            }
            let rel = relevance
                .map(|r| Batch::<f32>::new(r, 1, "relevance", Role::Relevance))
                .transpose()?;
            let cost = costs
                .map(|c| Batch::<f32>::new(c, 1, "costs", Role::Costs))
                .transpose()?;
            for (name, batch) in [("relevance", &rel), ("cost", &cost)] {
                if let Some(b) = batch {
                    if b.len() != n {
                        return Err(errors::input(
                            py,
                            format!("{n} queries but {} {name} vectors", b.len()),
                        ));
                    }
                }
            }
            let mut ids = Vec::with_capacity(n);
            for (i, list) in lists.iter().enumerate() {
                let item = q.items.get(i).map(|it| it.shape.as_slice()).unwrap_or(&[]);
                self.query_dim(py, item, &format!("queries[{i}]"))?;
                ids.push(read_ids(
                    py,
                    list,
                    &format!("id_lists[{i}]"),
                    &format!("pair {i}: "),
                )?);
                for (name, batch) in [("relevance", &rel), ("costs", &cost)] {
                    if let Some(r) = batch.as_ref().and_then(|b| b.items.get(i)) {
                        relevance_len(py, &r.shape, &format!("{name}[{i}]"))?;
                    }
                }
            }
            let calls: Vec<StoreCall<'_>> = ids
                .iter()
                .enumerate()
                .map(|(i, ids)| {
                    StoreCall::new(q.slice(i), ids)
                        .with_relevance(rel.as_ref().map(|r| r.slice(i)))
                        .with_costs(cost.as_ref().map(|c| c.slice(i)))
                })
                .collect();
            let (lock, spec) = (&self.inner, &call.spec);
            let outcomes = py.detach(|| {
                let store = lock.read().unwrap_or_else(PoisonError::into_inner);
                catch_unwind(AssertUnwindSafe(|| {
                    store.select_batch(spec, &calls, call.k, threads)
                }))
                .map_err(|p| panic_message(p.as_ref()))
            });
            let outcomes = outcomes.map_err(|panic| errors::from_panic(py, "", &panic))?;
            outcomes
                .into_iter()
                .enumerate()
                .map(|(i, outcome)| match outcome {
                    Ok(sel) => PySelection::new(py, sel),
                    Err(e) => Err(errors::call(py, &e, &format!("pair {i}: "))),
                })
                .collect()
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "Store(len={}, dim={}, storage='{}')",
            self.read().len(),
            self.read().dim(),
            self.read().storage().as_str()
        )
    }
}
