//! `mempursuit.Store`: the `mempursuit` crate's [`Store`] (memory
//! embeddings validated and kept once, queried by the retriever's ids) for
//! Python. Its calls take the keyword options of `select` (the same
//! [`crate::Call`]: one specification, [`crate::options::spec`]) and return
//! the same `Selection`, whose picks are positions in the call's ids: the
//! selection of `select` on the gathered rows `rows[ids]`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use mempursuit::{ErrorKind, SelectSpec, Selector, Storage, Store, StoreCall};
use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyRange, PyString, PyTuple};

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

/// The path of `Store.from_npy` (``os.fspath(path)``: str or bytes) and
/// the prefix of its messages (``"rows.npy: "``).
fn npy_path<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyAny>, String)> {
    let path = py.import("os")?.call_method1("fspath", (path,))?;
    let shown = match path.cast::<PyBytes>() {
        Ok(b) => String::from_utf8_lossy(b.as_bytes()).into_owned(),
        Err(_) => path.str()?.to_string(),
    };
    Ok((path, format!("{shown}: ")))
}

/// An input error of `Store.from_npy` (``argument`` ``"path"``).
fn npy_error(py: Python<'_>, prefix: &str, message: &str) -> PyErr {
    errors::document(
        py,
        &format!("{prefix}{message}"),
        ErrorKind::Input,
        None,
        None,
        "path",
    )
}

/// The array of the `.npy` file `path`: its first bytes checked for the
/// NumPy magic string (so that an `.npz` archive, a pickle or text is
/// named as such, not guessed at by `numpy.load`), then `numpy.load(path,
/// mmap_mode="r", allow_pickle=False)`; its dtype must be real and its
/// shape 2-D. `OSError` (no such file, ...) is NumPy's / Python's.
fn load_npy<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyAny>,
    prefix: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let builtins = py.import("builtins")?;
    let file = builtins.call_method1("open", (path, "rb"))?;
    let head = file.call_method1("read", (8,));
    file.call_method0("close")?;
    let head = head?;
    let head = head.cast::<PyBytes>()?.as_bytes();
    if !head.starts_with(b"\x93NUMPY") {
        let what = if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
            "an .npz (zip) archive of several arrays, not an .npy file; pass one of its arrays: Store(numpy.load(path)[\"name\"])"
        } else if head.is_empty() {
            "an empty file, not an .npy file; save the rows with numpy.save(path, rows)"
        } else {
            "not an .npy file (it does not start with the NumPy magic string \\x93NUMPY); save the rows with numpy.save(path, rows), or pass the array: Store(rows)"
        };
        return Err(npy_error(py, prefix, what));
    }
    let np = py.import("numpy")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("mmap_mode", "r")?;
    kwargs.set_item("allow_pickle", false)?;
    let loaded = np.call_method("load", (path,), Some(&kwargs));
    let rows = match loaded {
        Ok(rows) => rows,
        // A header or data NumPy's reader refuses: the file, not the
        // call, is at fault. Its reader raises ValueError for most faults,
        // EOFError for some truncations, tokenize.TokenError and
        // SyntaxError for some corrupt headers (found by the mutation test
        // in tests/test_store.py): every exception but OSError (the file
        // cannot be opened or mapped) and MemoryError, after the magic
        // string said the file is meant to be .npy.
        Err(e)
            if e.is_instance_of::<pyo3::exceptions::PyException>(py)
                && !e.is_instance_of::<pyo3::exceptions::PyOSError>(py)
                && !e.is_instance_of::<pyo3::exceptions::PyMemoryError>(py) =>
        {
            let reason = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
            let name = e
                .get_type(py)
                .name()
                .map(|s| s.to_string())
                .unwrap_or_default();
            return Err(npy_error(
                py,
                prefix,
                &format!(
                    "NumPy cannot read this .npy file ({name}: {reason}); re-save the rows with numpy.save(path, rows)"
                ),
            ));
        }
        Err(e) => return Err(e),
    };
    let untyped = rows.cast::<PyUntypedArray>().map_err(|_| {
        npy_error(
            py,
            prefix,
            "numpy.load did not return an array; save the rows with numpy.save(path, rows)",
        )
    })?;
    let dtype = untyped.dtype();
    if !matches!(dtype.kind(), b'f' | b'i' | b'u' | b'b') {
        return Err(npy_error(
            py,
            prefix,
            &format!(
                "dtype {} is not real-valued; save float32 rows: numpy.save(path, rows.astype(numpy.float32))",
                dtype.str()?
            ),
        ));
    }
    if untyped.ndim() != 2 {
        let shape = untyped.shape();
        let hint = if shape.len() == 1 {
            " (one row of d values: save rows.reshape(1, -1))"
        } else {
            ""
        };
        return Err(npy_error(
            py,
            prefix,
            &format!(
                "the array has shape {}, not (N, d) with one memory per row{hint}",
                fmt_shape(shape)
            ),
        ));
    }
    Ok(rows)
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
///
/// ``len(store)`` is N; ``store.dim``, ``store.storage`` and
/// ``store.nbytes`` (the bytes held) describe it. A store pickles (every
/// protocol: ``multiprocessing``, ``concurrent.futures``, joblib and Ray
/// send it to other processes so) and copies (``copy.copy``,
/// ``copy.deepcopy``): an independent store of the same rows, d and
/// storage, with the same picks: a pickle carries the store's rows as
/// float32 (the rows as given for ``"f32"`` and ``"int8"``, the stored
/// values widened for ``"f16"`` / ``"bf16"``) and rebuilds the store from
/// them (validated again). The store keeps no second copy of its rows.
#[pyclass(name = "Store", module = "mempursuit")]
pub struct PyStore {
    /// The store; `select` reads it and `append` writes it with the GIL
    /// released, so an `append` waits for the calls in flight and a call
    /// waits for an `append` (no "already borrowed" error).
    inner: RwLock<Store>,
}

impl PyStore {
    /// A store of `rows` (array-like (N, d)); `prefix` goes in front of
    /// the messages (`"rows.npy: "`).
    fn build(
        py: Python<'_>,
        rows: &Bound<'_, PyAny>,
        storage_obj: Option<&Bound<'_, PyAny>>,
        prefix: &str,
    ) -> PyResult<Self> {
        let storage = storage(py, storage_obj)?;
        let v = view::<f32>(rows, &Arg::single("rows", Role::Rows))?;
        let d = rows_dim(py, v.shape(), &format!("{prefix}rows"))?;
        let slice = v.slice();
        let store = py
            .detach(|| Store::new(slice, d, storage))
            .map_err(|e| errors::store(py, &e, prefix))?;
        Ok(PyStore {
            inner: RwLock::new(store),
        })
    }

    /// The store for reading (a poisoned lock still holds a whole store:
    /// `Store::append` adds nothing on an error).
    fn read(&self) -> RwLockReadGuard<'_, Store> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Store> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Checks that `shape` is one query (1-D, d ≥ 1); its length against
    /// the store's d is the Rust store's check (`StoreError::QueryLength`).
    fn query_dim(&self, py: Python<'_>, shape: &[usize], name: &str) -> PyResult<usize> {
        query_dim(py, shape, name)
    }

    /// An independent copy (the same rows, storage and picks; an append to
    /// one does not reach the other).
    fn duplicate(&self, py: Python<'_>) -> PyResult<PyStore> {
        let guard = self.read();
        let kept = py.detach(|| guard.clone());
        Ok(PyStore {
            inner: RwLock::new(kept),
        })
    }
}

/// The version of the state `Store.__reduce__` writes (read by
/// [`store_from_state`]).
const STATE_VERSION: u32 = 1;

/// Rebuilds a pickled store: ``_store_from_state(version, dim, storage,
/// rows)``, ``rows`` the little-endian float32 bytes of the N × d rows
/// (what ``Store.__reduce__`` writes). The rows are validated again, as
/// any outside bytes are. Not part of the API.
#[pyfunction]
#[pyo3(name = "_store_from_state")]
pub fn store_from_state(
    py: Python<'_>,
    version: u32,
    dim: usize,
    storage_name: &Bound<'_, PyAny>,
    rows: &Bound<'_, PyBytes>,
) -> PyResult<PyStore> {
    errors::guard(py, || {
        if version != STATE_VERSION {
            return Err(PyValueError::new_err(format!(
                "a pickled mempursuit.Store of state version {version}; this mempursuit reads version {STATE_VERSION}: unpickle it with the mempursuit that pickled it"
            )));
        }
        let storage = storage(py, Some(storage_name))?;
        let bytes = rows.as_bytes();
        if dim == 0 || !bytes.len().is_multiple_of(4 * dim) {
            return Err(errors::input(
                py,
                format!(
                    "a pickled mempursuit.Store holds {} bytes of rows, not whole rows of d = {dim} float32 values: the pickle is corrupt",
                    bytes.len()
                ),
            ));
        }
        let values: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let store = py
            .detach(|| Store::new(&values, dim, storage))
            .map_err(|e| errors::store(py, &e, "a pickled mempursuit.Store: "))?;
        Ok(PyStore {
            inner: RwLock::new(store),
        })
    })
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
        errors::guard(py, || PyStore::build(py, rows, storage, ""))
    }

    /// ``Store.from_npy(path, *, storage="f32")``: a store of the (N, d)
    /// matrix in the ``.npy`` file ``path`` (str, bytes or path-like).
    /// The first bytes must be the NumPy magic string (``\x93NUMPY``);
    /// the file is then read by ``numpy.load(path, mmap_mode="r",
    /// allow_pickle=False)``, NumPy's own reader of its format (float32 C
    /// order is read from the mapped file without a conversion; other real
    /// dtypes, byte orders and Fortran order are converted once).
    ///
    /// Raises
    /// ------
    /// MemPursuitError
    ///     kind ``"input"``, ``argument`` ``"path"``, the message starting
    ///     with the path: not an ``.npy`` file (an ``.npz`` archive, text,
    ///     a pickle), a header or data NumPy cannot read (truncated,
    ///     corrupt), a dtype that is not real (object, complex, str), a
    ///     shape other than (N, d); and as ``Store(rows)`` for the rows
    ///     (``index`` the bad row), prefixed with the path.
    /// OSError
    ///     The file cannot be opened (``FileNotFoundError``, ...).
    /// TypeError
    ///     ``path`` not a str, bytes or path-like.
    #[staticmethod]
    #[pyo3(signature = (path, *, storage=None), text_signature = "(path, *, storage='f32')")]
    fn from_npy(
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        storage: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        errors::guard(py, || {
            let (path, prefix) = npy_path(py, path)?;
            let rows = load_npy(py, &path, &prefix)?;
            PyStore::build(py, &rows, storage, &prefix)
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
                let mut store = self.write();
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

    /// The bytes the store holds: the storage's (as the Rust
    /// ``Store::bytes``: f32 4·N·d; f16 / bf16 2·N·d; int8 5·N·d + 20·N,
    /// or 4·N·d for d > 4096).
    #[getter]
    fn nbytes(&self) -> usize {
        self.read().bytes()
    }

    /// ``sys.getsizeof(store)``: ``nbytes`` and the object itself.
    fn __sizeof__(&self) -> usize {
        self.nbytes() + std::mem::size_of::<Self>()
    }

    /// ``pickle`` support: the store is rebuilt from its float32 rows, d
    /// and storage (validated again; the same store, the same picks).
    /// Works with ``multiprocessing``, ``concurrent.futures``, joblib and
    /// Ray, which pickle what they send to another process.
    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, Py<PyTuple>)> {
        let kept = self.read();
        let rows = kept.rows();
        let mut bytes = Vec::new();
        bytes.try_reserve_exact(rows.len() * 4).map_err(|_| {
            errors::capacity(py, "the pickled rows of this store cannot be allocated")
        })?;
        for v in rows.iter() {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        let rebuild = py
            .import("mempursuit._mempursuit")?
            .getattr("_store_from_state")?
            .unbind();
        let args = (
            STATE_VERSION,
            kept.dim(),
            kept.storage().as_str(),
            PyBytes::new(py, &bytes),
        )
            .into_pyobject(py)?
            .unbind();
        Ok((rebuild, args))
    }

    /// ``copy.copy(store)``: an independent copy (an ``append`` to one does
    /// not change the other), with the same picks.
    fn __copy__(&self, py: Python<'_>) -> PyResult<PyStore> {
        self.duplicate(py)
    }

    /// ``copy.deepcopy(store)``: as ``copy.copy`` (the store holds no
    /// Python objects).
    fn __deepcopy__(&self, py: Python<'_>, memo: &Bound<'_, PyAny>) -> PyResult<PyStore> {
        // Nothing of the store is a Python object to record in `memo`.
        let _ = memo;
        self.duplicate(py)
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
            let spec = &call.spec;
            let outcome = py.detach(|| {
                let kept = self.read();
                catch_unwind(AssertUnwindSafe(|| {
                    kept.select(&mut Selector::new(), spec, store_call, call.k)
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
    ///     Number of threads ≥ 0; 0 or ``None`` (the default): one per
    ///     available CPU, as the Rust ``Store::select_batch`` reads 0. At
    ///     most n are used.
    ///
    /// Raises
    /// ------
    /// MemPursuitError
    ///     As ``select``, the message prefixed with the pair (``pair 4:
    ///     ids[3] = ...``, the lowest failing pair); a count mismatch
    ///     between queries, id lists, relevance and costs (kind input);
    ///     threads < 0 (kind option).
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
            let spec = &call.spec;
            let outcomes = py.detach(|| {
                let kept = self.read();
                catch_unwind(AssertUnwindSafe(|| {
                    kept.select_batch(spec, &calls, call.k, threads)
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
        let store = &*self.read();
        format!(
            "Store(len={}, dim={}, storage='{}')",
            store.len(),
            store.dim(),
            store.storage().as_str()
        )
    }
}
