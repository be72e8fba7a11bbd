//! Array arguments: read-only borrows of the caller's arrays when they
//! already have the element type, one conversion otherwise.
//!
//! A NumPy array of the element type (float32; for the candidates also
//! float16), C-contiguous and aligned, is borrowed as is
//! (`PyReadonlyArray`: no copy, and the array is never written). Anything
//! else (another real dtype, another byte order, Fortran order, a strided,
//! negative-stride, zero-stride or misaligned view, a list, a memoryview)
//! is converted once with `numpy.require(numpy.asarray(x), dtype,
//! ("C", "A"))`, i.e. NumPy's rounding to nearest; a finite value beyond
//! the float32 range (a float64 1e300) is an error naming it rather than an
//! infinity. Complex, string, object, structured and datetime arrays are a
//! `TypeError`. The caller's object is never modified.

use std::ops::Range;

use mempursuit::half::f16;
use mempursuit::Pool;
use numpy::{
    Element, PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyMemoryError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::errors;
use crate::options::type_name;

/// What an array argument is, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Query,
    Candidates,
    Relevance,
    Costs,
    /// The rows of a `Store` (N × d).
    Rows,
}

/// An array argument: its name in messages (`candidates`, `pools[3]`), its
/// role, the pair of a batch it belongs to, and whether its first axis is
/// the pair (a stacked batch array).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Arg<'a> {
    pub name: &'a str,
    pub role: Role,
    pub pair: Option<usize>,
    pub stacked: bool,
}

impl<'a> Arg<'a> {
    /// The argument of a single call.
    pub(crate) fn single(name: &'a str, role: Role) -> Arg<'a> {
        Arg {
            name,
            role,
            pair: None,
            stacked: false,
        }
    }
}

/// A contiguous, aligned, read-only view of one array argument.
pub(crate) struct View<'py, T: Element> {
    array: PyReadonlyArrayDyn<'py, T>,
}

impl<'py, T: Element> View<'py, T> {
    /// Wraps `array` if it can be read as a slice in C order: C-contiguous
    /// and aligned (`as_slice` alone also takes Fortran order, whose
    /// elements would be read transposed).
    fn new(array: PyReadonlyArrayDyn<'py, T>) -> Option<View<'py, T>> {
        (array.is_c_contiguous() && array.as_slice().is_ok()).then_some(View { array })
    }

    /// The elements in C order.
    pub(crate) fn slice(&self) -> &[T] {
        // `View::new` checked that the array is a slice.
        self.array.as_slice().unwrap_or(&[])
    }

    /// The array's shape.
    pub(crate) fn shape(&self) -> &[usize] {
        self.array.shape()
    }
}

/// `(3, 4)` for messages.
pub(crate) fn fmt_shape(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => {
            let parts: Vec<String> = shape.iter().map(|n| n.to_string()).collect();
            format!("({})", parts.join(", "))
        }
    }
}

/// Name of `T`'s NumPy dtype, for messages.
fn dtype_name<T: Element>(py: Python<'_>) -> String {
    numpy::dtype::<T>(py)
        .str()
        .map(|s| s.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// `err` from NumPy (reading argument `name`) with `name: ` in front of
/// its message: a `TypeError` stays one, a `MemoryError` becomes a
/// `CapacityError`, a `ValueError` a `MemPursuitError` (kind input); any
/// other exception (a `KeyboardInterrupt`, an error raised by the caller's
/// `__array__`) propagates unchanged.
pub(crate) fn prefixed(py: Python<'_>, name: &str, err: PyErr) -> PyErr {
    let msg = || {
        err.value(py)
            .str()
            .map(|s| s.to_string())
            .unwrap_or_default()
    };
    if err.is_instance_of::<PyTypeError>(py) {
        PyTypeError::new_err(format!("{name}: {}", msg()))
    } else if err.is_instance_of::<PyMemoryError>(py) {
        errors::capacity(py, format!("{name}: {}", msg()))
    } else if err.is_instance_of::<PyValueError>(py) {
        errors::input(py, format!("{name}: {}", msg()))
    } else {
        err
    }
}

/// Where element `index` (of the argument's array) is, in the words of the
/// core's messages: `candidate 3: element 1`, `query: element 0`,
/// `relevance 2`, with `pair 4: ` in front in a batch.
fn location(arg: &Arg<'_>, index: &[usize]) -> String {
    let (pair, index) = match index.split_first() {
        Some((&p, rest)) if arg.stacked => (Some(p), rest),
        _ => (arg.pair, index),
    };
    let prefix = pair.map(|p| format!("pair {p}: ")).unwrap_or_default();
    let last = index.last().copied().unwrap_or(0);
    match (arg.role, index) {
        (Role::Query, _) => format!("{prefix}query: element {last}"),
        (Role::Candidates, [row, col]) => format!("{prefix}candidate {row}: element {col}"),
        (Role::Candidates, _) => format!("{prefix}{}: element {index:?}", arg.name),
        (Role::Relevance, _) => format!("{prefix}relevance {last}"),
        (Role::Costs, _) => format!("{prefix}cost {last}"),
        (Role::Rows, [row, col]) => format!("{prefix}row {row}: element {col}"),
        (Role::Rows, _) => format!("{prefix}{}: element {index:?}", arg.name),
    }
}

/// After a conversion to float32: a finite value of `source` that became
/// ±inf is an error naming it (kind input).
fn check_range(
    py: Python<'_>,
    np: &Bound<'_, PyModule>,
    source: &Bound<'_, PyAny>,
    converted: &Bound<'_, PyAny>,
    arg: &Arg<'_>,
) -> PyResult<()> {
    let inf = np.call_method1("isinf", (converted,))?;
    if !inf.call_method0("any")?.is_truthy()? {
        return Ok(());
    }
    let finite = np.call_method1("isfinite", (source,))?;
    let bad = inf.call_method1("__and__", (finite,))?;
    if !bad.call_method0("any")?.is_truthy()? {
        return Ok(());
    }
    let flat = np.call_method1("argmax", (&bad,))?;
    let index = np.call_method1("unravel_index", (flat, bad.getattr("shape")?))?;
    let index: Vec<usize> = index
        .cast::<PyTuple>()?
        .iter()
        .map(|i| i.extract::<usize>())
        .collect::<PyResult<_>>()?;
    let tuple = PyTuple::new(py, &index)?;
    let value = source.get_item(tuple)?.str()?.to_string();
    let advice = match arg.role {
        Role::Query => "normalize the query (only its direction is used)",
        Role::Candidates | Role::Rows => "normalize the rows (only their directions are used)",
        Role::Relevance => "rescale the scores",
        Role::Costs => "rescale the costs and the cost budget",
    };
    Err(errors::input(
        py,
        format!(
            "{} = {value} is outside the float32 range [-3.4028235e38, 3.4028235e38]; {advice}",
            location(arg, &index)
        ),
    ))
}

/// A read-only view of `obj` as a C-contiguous, aligned array of `T`: the
/// caller's array itself when it already is one (no copy), else one
/// converted copy (see the module docs).
pub(crate) fn view<'py, T: Element>(
    obj: &Bound<'py, PyAny>,
    arg: &Arg<'_>,
) -> PyResult<View<'py, T>> {
    let py = obj.py();
    let name = arg.name;
    if let Ok(arr) = obj.cast::<PyArrayDyn<T>>() {
        if let Some(v) = arr.try_readonly().ok().and_then(View::new) {
            return Ok(v);
        }
    }
    let np = py.import("numpy")?;
    let source = np
        .call_method1("asarray", (obj,))
        .map_err(|e| match ragged(obj) {
            Some((row, len, first)) => errors::input(
                py,
                format!(
                    "{name}: row {row} has {len} elements, row 0 has {first}; every row needs \
                 the same number of elements (d, the query's length)"
                ),
            ),
            None => prefixed(py, name, e),
        })?;
    let untyped = source.cast::<PyUntypedArray>().map_err(|_| {
        PyTypeError::new_err(format!("{name} must be an array, not {}", type_name(obj)))
    })?;
    let dtype = untyped.dtype();
    let (kind, itemsize) = (dtype.kind(), dtype.itemsize());
    if !matches!(kind, b'b' | b'i' | b'u' | b'f') {
        return Err(PyTypeError::new_err(format!(
            "{name}: dtype {} is not real-valued; pass a bool, integer or float array \
             (it is converted to {})",
            dtype.str().map(|s| s.to_string()).unwrap_or_default(),
            dtype_name::<T>(py)
        )));
    }
    // One conversion, C-contiguous and aligned; NumPy's overflow warning
    // is replaced by the range check below.
    let ignore = PyDict::new(py);
    ignore.set_item("over", "ignore")?;
    ignore.set_item("invalid", "ignore")?;
    let state = np.call_method("errstate", (), Some(&ignore))?;
    state.call_method0("__enter__")?;
    let requirements = PyTuple::new(py, ["C", "A"])?;
    let converted = np.call_method1("require", (&source, numpy::dtype::<T>(py), requirements));
    state.call_method1("__exit__", (py.None(), py.None(), py.None()))?;
    let converted = converted.map_err(|e| prefixed(py, name, e))?;
    if kind == b'f' && itemsize > std::mem::size_of::<T>() {
        check_range(py, &np, &source, &converted, arg)?;
    }
    let array = converted
        .cast_into::<PyArrayDyn<T>>()
        .map_err(|e| PyTypeError::new_err(format!("{name}: {e}")))?
        .try_readonly()
        .map_err(|e| errors::input(py, format!("{name}: {e}")))?;
    View::new(array).ok_or_else(|| {
        errors::input(
            py,
            format!("{name}: numpy.require did not return a C-contiguous, aligned array"),
        )
    })
}

/// For a ragged list (or tuple) of rows, which NumPy refuses with its own
/// text ("setting an array element with a sequence ... inhomogeneous
/// shape"): the first row whose length differs from row 0's, its length and
/// row 0's. None when `obj` is not a sequence of sized rows of unequal
/// lengths (NumPy's message then stands).
fn ragged(obj: &Bound<'_, PyAny>) -> Option<(usize, usize, usize)> {
    if !(obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>()) {
        return None;
    }
    let first = obj.get_item(0).ok()?.len().ok()?;
    for row in 1..obj.len().ok()? {
        let len = obj.get_item(row).ok()?.len().ok()?;
        if len != first {
            return Some((row, len, first));
        }
    }
    None
}

/// Whether `obj` is a NumPy array of IEEE half floats (any byte order).
fn is_float16(obj: &Bound<'_, PyAny>) -> bool {
    obj.cast::<PyUntypedArray>().is_ok_and(|a| {
        let d = a.dtype();
        d.kind() == b'f' && d.itemsize() == 2
    })
}

/// The candidates of a call: float16 arrays as float16 (borrowed when
/// C-contiguous, aligned and native; the storage `f16` then uses them
/// without a copy), everything else as float32.
pub(crate) enum PoolView<'py> {
    F32(View<'py, f32>),
    F16(View<'py, f16>),
}

impl PoolView<'_> {
    pub(crate) fn shape(&self) -> &[usize] {
        match self {
            PoolView::F32(v) => v.shape(),
            PoolView::F16(v) => v.shape(),
        }
    }

    /// The whole array as a pool.
    pub(crate) fn pool(&self) -> Pool<'_> {
        match self {
            PoolView::F32(v) => Pool::F32(v.slice()),
            PoolView::F16(v) => Pool::F16(v.slice()),
        }
    }

    /// The elements `range` as a pool.
    fn pool_range(&self, range: Range<usize>) -> Pool<'_> {
        match self {
            PoolView::F32(v) => Pool::F32(v.slice().get(range).unwrap_or(&[])),
            PoolView::F16(v) => Pool::F16(v.slice().get(range).unwrap_or(&[])),
        }
    }
}

/// The candidates argument (see [`PoolView`]).
pub(crate) fn pool_view<'py>(obj: &Bound<'py, PyAny>, arg: &Arg<'_>) -> PyResult<PoolView<'py>> {
    Ok(if is_float16(obj) {
        PoolView::F16(view(obj, arg)?)
    } else {
        PoolView::F32(view(obj, arg)?)
    })
}

/// The dimension d of a query of shape (d,) or (1, d).
pub(crate) fn query_dim(py: Python<'_>, shape: &[usize], name: &str) -> PyResult<usize> {
    match shape {
        [d] | [1, d] => Ok(*d),
        _ => Err(errors::input(
            py,
            format!(
                "{name} must have shape (d,) or (1, d), got {}",
                fmt_shape(shape)
            ),
        )),
    }
}

/// The pool size P of candidates of shape (P, d) with the query's d.
pub(crate) fn pool_rows(py: Python<'_>, shape: &[usize], d: usize, name: &str) -> PyResult<usize> {
    match shape {
        [p, cols] if *cols == d => Ok(*p),
        [_, cols] => Err(errors::input(
            py,
            format!("{name} have d = {cols} columns but the query has d = {d} elements"),
        )),
        _ => Err(errors::input(
            py,
            format!("{name} must have shape (P, d), got {}", fmt_shape(shape)),
        )),
    }
}

/// Checks a relevance vector's shape: (P,) (its length is the core's check).
pub(crate) fn relevance_len(py: Python<'_>, shape: &[usize], name: &str) -> PyResult<usize> {
    match shape {
        [n] => Ok(*n),
        _ => Err(errors::input(
            py,
            format!("{name} must have shape (P,), got {}", fmt_shape(shape)),
        )),
    }
}

/// One item of a batch argument: which view and which range of its
/// elements, with the item's shape.
pub(crate) struct Item {
    view: usize,
    range: Range<usize>,
    /// The item's shape (without the batch axis).
    pub shape: Vec<usize>,
}

/// The elements of a batch argument: either one array with a leading batch
/// axis (borrowed or converted once; the items are its sub-arrays) or a
/// sequence of arrays (each borrowed or converted once).
enum Elements<'py> {
    Stacked(Bound<'py, PyAny>),
    Sequence(Vec<Bound<'py, PyAny>>),
}

fn elements<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Elements<'py>> {
    if obj.cast::<PyUntypedArray>().is_ok() {
        return Ok(Elements::Stacked(obj.clone()));
    }
    let not_a_sequence = || {
        PyTypeError::new_err(format!(
            "{name} must be an array or a sequence of arrays, not {}",
            type_name(obj)
        ))
    };
    if obj.is_instance_of::<PyString>() {
        return Err(not_a_sequence());
    }
    let items = obj
        .try_iter()
        .map_err(|_| not_a_sequence())?
        .collect::<PyResult<Vec<_>>>()?;
    Ok(Elements::Sequence(items))
}

/// Items over views: a stacked array's sub-arrays, or one item per view.
fn items<T: Element>(
    py: Python<'_>,
    views: &[View<'_, T>],
    stacked: bool,
    item_ndim: usize,
    name: &str,
) -> PyResult<Vec<Item>> {
    if !stacked {
        return Ok(views
            .iter()
            .enumerate()
            .map(|(i, v)| Item {
                view: i,
                range: 0..v.slice().len(),
                shape: v.shape().to_vec(),
            })
            .collect());
    }
    let shape = views
        .first()
        .map(|v| v.shape().to_vec())
        .unwrap_or_default();
    if shape.len() != item_ndim + 1 {
        return Err(errors::input(
            py,
            format!(
                "{name}: an array must have {} dimensions (one item per row of the first), \
                 got shape {}; or pass a sequence of arrays",
                item_ndim + 1,
                fmt_shape(&shape)
            ),
        ));
    }
    let per: usize = shape[1..].iter().product();
    Ok((0..shape[0])
        .map(|i| Item {
            view: 0,
            range: i * per..(i + 1) * per,
            shape: shape[1..].to_vec(),
        })
        .collect())
}

/// Views of every element of a batch argument.
fn views<'py, T: Element>(
    elements: &Elements<'py>,
    name: &str,
    role: Role,
) -> PyResult<Vec<View<'py, T>>> {
    match elements {
        Elements::Stacked(obj) => {
            let arg = Arg {
                name,
                role,
                pair: None,
                stacked: true,
            };
            Ok(vec![view(obj, &arg)?])
        }
        Elements::Sequence(items) => items
            .iter()
            .enumerate()
            .map(|(i, obj)| {
                let item_name = format!("{name}[{i}]");
                let arg = Arg {
                    name: &item_name,
                    role,
                    pair: Some(i),
                    stacked: false,
                };
                view(obj, &arg)
            })
            .collect(),
    }
}

/// A batch argument of queries or relevance vectors (float32).
pub(crate) struct Batch<'py, T: Element> {
    views: Vec<View<'py, T>>,
    /// The items in order.
    pub items: Vec<Item>,
}

impl<'py, T: Element> Batch<'py, T> {
    /// Reads a batch argument whose items have `item_ndim` dimensions.
    /// `name` names the argument in errors; items are named `name[i]`.
    pub(crate) fn new(
        obj: &Bound<'py, PyAny>,
        item_ndim: usize,
        name: &str,
        role: Role,
    ) -> PyResult<Self> {
        let elements = elements(obj, name)?;
        let views = views::<T>(&elements, name, role)?;
        let stacked = matches!(elements, Elements::Stacked(_));
        let items = items(obj.py(), &views, stacked, item_ndim, name)?;
        Ok(Batch { views, items })
    }

    /// The elements of item `i` (empty past the end).
    pub(crate) fn slice(&self, i: usize) -> &[T] {
        let Some(it) = self.items.get(i) else {
            return &[];
        };
        self.views
            .get(it.view)
            .and_then(|v| v.slice().get(it.range.clone()))
            .unwrap_or(&[])
    }

    /// Number of items.
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }
}

/// The pools of a batch: float16 when the stacked array, or every array of
/// the sequence, is float16 (used without a copy under storage `f16`),
/// else float32.
pub(crate) struct PoolBatch<'py> {
    views: Vec<PoolView<'py>>,
    /// The pools in order.
    pub items: Vec<Item>,
}

impl<'py> PoolBatch<'py> {
    pub(crate) fn new(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Self> {
        let py = obj.py();
        let elements = elements(obj, name)?;
        let stacked = matches!(elements, Elements::Stacked(_));
        let all_f16 = match &elements {
            Elements::Stacked(o) => is_float16(o),
            Elements::Sequence(v) => !v.is_empty() && v.iter().all(is_float16),
        };
        let (views, items) = if all_f16 {
            let v = views::<f16>(&elements, name, Role::Candidates)?;
            let items = items(py, &v, stacked, 2, name)?;
            (v.into_iter().map(PoolView::F16).collect(), items)
        } else {
            let v = views::<f32>(&elements, name, Role::Candidates)?;
            let items = items(py, &v, stacked, 2, name)?;
            (v.into_iter().map(PoolView::F32).collect(), items)
        };
        Ok(PoolBatch { views, items })
    }

    /// Pool `i` (empty past the end).
    pub(crate) fn pool(&self, i: usize) -> Pool<'_> {
        match self
            .items
            .get(i)
            .and_then(|it| Some((self.views.get(it.view)?, it)))
        {
            Some((v, it)) => v.pool_range(it.range.clone()),
            None => Pool::F32(&[]),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }
}

/// The `offsets` of a batch of ragged pools (CSR style): n + 1 integers,
/// `offsets[0] = 0`, non-decreasing, `offsets[n]` = the rows of the pools
/// matrix; pool i is rows `offsets[i]..offsets[i + 1]`. Any integer dtype
/// (converted once to int64: n + 1 values); anything else is a `TypeError`.
pub(crate) fn offsets(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    queries: usize,
    rows: usize,
) -> PyResult<Vec<Range<usize>>> {
    let np = py.import("numpy")?;
    let source = np
        .call_method1("asarray", (obj,))
        .map_err(|e| prefixed(py, "offsets", e))?;
    let untyped = source.cast::<PyUntypedArray>().map_err(|_| {
        PyTypeError::new_err(format!(
            "offsets must be an array of integers, not {}",
            type_name(obj)
        ))
    })?;
    let dtype = untyped.dtype();
    // Booleans too are no offsets (NumPy would read them as 0 and 1).
    if !matches!(dtype.kind(), b'i' | b'u') {
        return Err(PyTypeError::new_err(format!(
            "offsets: dtype {} is not an integer type; pass the n + 1 row offsets as integers",
            dtype.str().map(|s| s.to_string()).unwrap_or_default()
        )));
    }
    let values = view::<i64>(&source, &Arg::single("offsets", Role::Relevance))?;
    if values.shape() != [queries + 1] {
        return Err(errors::input(
            py,
            format!(
                "offsets must have shape (n + 1,) = ({},) for {queries} queries, got {}",
                queries + 1,
                fmt_shape(values.shape())
            ),
        ));
    }
    let o = values.slice();
    if o.first().is_some_and(|&first| first != 0) {
        return Err(errors::input(
            py,
            format!("offsets[0] = {} must be 0 (pool 0 starts at row 0)", o[0]),
        ));
    }
    let mut ranges = Vec::with_capacity(queries);
    for (i, w) in o.windows(2).enumerate() {
        if w[1] < w[0] {
            return Err(errors::input(
                py,
                format!(
                    "offsets[{}] = {} is below offsets[{i}] = {}: offsets must not decrease",
                    i + 1,
                    w[1],
                    w[0]
                ),
            ));
        }
        // Non-negative and non-decreasing from 0: both fit a usize.
        ranges.push(usize::try_from(w[0]).unwrap_or(0)..usize::try_from(w[1]).unwrap_or(0));
    }
    let last = o.last().copied().unwrap_or(0);
    if usize::try_from(last).ok() != Some(rows) {
        return Err(errors::input(
            py,
            format!(
                "offsets[{queries}] = {last} must equal the number of rows of pools, {rows} \
                 (pool n - 1 ends at the last row)"
            ),
        ));
    }
    Ok(ranges)
}

impl<'py> Batch<'py, f32> {
    /// A ragged batch argument over `ranges` (from [`offsets`]): one
    /// vector of N values, item i its values `ranges[i]`.
    pub(crate) fn ragged(
        obj: &Bound<'py, PyAny>,
        ranges: &[Range<usize>],
        rows: usize,
        name: &str,
        role: Role,
    ) -> PyResult<Self> {
        let py = obj.py();
        let v = view::<f32>(obj, &Arg::single(name, role))?;
        if v.shape() != [rows] {
            return Err(errors::input(
                py,
                format!(
                    "{name}: with offsets, {name} must be one vector of shape (N,) = ({rows},), \
                     aligned with the rows of pools, got {}",
                    fmt_shape(v.shape())
                ),
            ));
        }
        let items = ranges
            .iter()
            .map(|r| Item {
                view: 0,
                range: r.clone(),
                shape: vec![r.len()],
            })
            .collect();
        Ok(Batch {
            views: vec![v],
            items,
        })
    }
}

impl<'py> PoolBatch<'py> {
    /// The pools matrix of a ragged batch, shape (N, d): borrowed, or
    /// converted once as a whole; float16 is kept as float16, as for the
    /// candidates of a single call.
    pub(crate) fn matrix(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<PoolView<'py>> {
        let py = obj.py();
        let v = pool_view(obj, &Arg::single(name, Role::Candidates))?;
        if v.shape().len() != 2 {
            return Err(errors::input(
                py,
                format!(
                    "{name}: with offsets, {name} must be one matrix of shape (N, d) (the rows of \
                     every pool, pool i = rows offsets[i]:offsets[i + 1]), got {}",
                    fmt_shape(v.shape())
                ),
            ));
        }
        Ok(v)
    }

    /// Pool i = rows `ranges[i]` of `matrix` (from [`PoolBatch::matrix`]).
    pub(crate) fn ragged(matrix: PoolView<'py>, ranges: &[Range<usize>]) -> Self {
        let d = matrix.shape().get(1).copied().unwrap_or(0);
        let items = ranges
            .iter()
            .map(|r| Item {
                view: 0,
                range: r.start * d..r.end * d,
                shape: vec![r.len(), d],
            })
            .collect();
        PoolBatch {
            views: vec![matrix],
            items,
        }
    }
}
