//! Array arguments: read-only borrows of the caller's arrays when they
//! already have the storage type, one conversion otherwise.
//!
//! A NumPy array of the target dtype (float32, or float16 for
//! `storage="f16"`), C-contiguous and aligned, is borrowed as is
//! (`PyReadonlyArray`: no copy, and the array is never written). Anything
//! else (another real dtype, Fortran order, a strided view, a list) is
//! converted once with `numpy.ascontiguousarray(x, dtype=target)`, i.e.
//! NumPy's `astype` rounding to nearest (float64 values beyond the float32
//! range become ±inf and are then reported as non-finite elements).
//! Complex, string and object arrays are a `TypeError`.

use std::ops::Range;

use numpy::{
    Element, PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

/// A contiguous, read-only view of one array argument.
pub(crate) struct View<'py, T: Element> {
    array: PyReadonlyArrayDyn<'py, T>,
}

impl<'py, T: Element> View<'py, T> {
    /// The elements in C order.
    pub(crate) fn slice(&self) -> &[T] {
        // Contiguity is established by `view` (borrowed arrays are checked,
        // converted ones come from `ascontiguousarray`).
        self.array
            .as_slice()
            .expect("View arrays are C-contiguous and aligned")
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

/// A read-only view of `obj` as a C-contiguous array of `T`: the caller's
/// array itself when it already is one (no copy), else one converted copy
/// (see the module docs). `name` prefixes error messages.
pub(crate) fn view<'py, T: Element>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<View<'py, T>> {
    let py = obj.py();
    if let Ok(arr) = obj.cast::<PyArrayDyn<T>>() {
        if arr.is_c_contiguous() && arr.is_aligned() {
            let array = arr
                .try_readonly()
                .map_err(|e| PyValueError::new_err(format!("{name}: {e}")))?;
            return Ok(View { array });
        }
    }
    let np = py.import("numpy")?;
    let any = np
        .call_method1("asarray", (obj,))
        .map_err(|e| prefixed(py, name, e))?;
    let untyped = any.cast::<PyUntypedArray>()?;
    let dtype = untyped.dtype();
    if !matches!(dtype.kind(), b'b' | b'i' | b'u' | b'f') {
        return Err(PyTypeError::new_err(format!(
            "{name}: dtype {} is not real-valued; pass a bool, integer or float array \
             (it is converted to {})",
            dtype.str().map(|s| s.to_string()).unwrap_or_default(),
            dtype_name::<T>(py)
        )));
    }
    let converted = np
        .call_method1("ascontiguousarray", (any, numpy::dtype::<T>(py)))
        .map_err(|e| prefixed(py, name, e))?;
    let arr = converted.cast_into::<PyArrayDyn<T>>()?;
    let array = arr
        .try_readonly()
        .map_err(|e| PyValueError::new_err(format!("{name}: {e}")))?;
    Ok(View { array })
}

/// `err` with `name: ` in front of its message, same exception type.
fn prefixed(py: Python<'_>, name: &str, err: PyErr) -> PyErr {
    let msg = err
        .value(py)
        .str()
        .map(|s| s.to_string())
        .unwrap_or_default();
    if err.is_instance_of::<PyTypeError>(py) {
        PyTypeError::new_err(format!("{name}: {msg}"))
    } else {
        PyValueError::new_err(format!("{name}: {msg}"))
    }
}

/// The dimension d of a query of shape (d,) or (1, d).
pub(crate) fn query_dim(shape: &[usize], name: &str) -> PyResult<usize> {
    match shape {
        [d] | [1, d] => Ok(*d),
        _ => Err(PyValueError::new_err(format!(
            "{name} must have shape (d,) or (1, d), got {}",
            fmt_shape(shape)
        ))),
    }
}

/// The pool size P of candidates of shape (P, d) with the query's d.
pub(crate) fn pool_rows(shape: &[usize], d: usize, name: &str) -> PyResult<usize> {
    match shape {
        [p, cols] if *cols == d => Ok(*p),
        [_, cols] => Err(PyValueError::new_err(format!(
            "{name} have d = {cols} columns but the query has d = {d} elements"
        ))),
        _ => Err(PyValueError::new_err(format!(
            "{name} must have shape (P, d), got {}",
            fmt_shape(shape)
        ))),
    }
}

/// Checks a relevance vector's shape: (P,).
pub(crate) fn relevance_len(shape: &[usize], name: &str) -> PyResult<usize> {
    match shape {
        [n] => Ok(*n),
        _ => Err(PyValueError::new_err(format!(
            "{name} must have shape (P,), got {}",
            fmt_shape(shape)
        ))),
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

/// A batch argument: either one array with a leading batch axis (borrowed
/// or converted once; the items are its sub-arrays) or a sequence of
/// arrays (each borrowed or converted once).
pub(crate) struct Batch<'py, T: Element> {
    views: Vec<View<'py, T>>,
    /// The items in order.
    pub items: Vec<Item>,
}

impl<'py, T: Element> Batch<'py, T> {
    /// Reads a batch argument whose items have `item_ndim` dimensions.
    /// `name` names the argument in errors; items are named `name[i]`.
    pub(crate) fn new(obj: &Bound<'py, PyAny>, item_ndim: usize, name: &str) -> PyResult<Self> {
        if obj.cast::<PyUntypedArray>().is_ok() {
            let v = view::<T>(obj, name)?;
            let shape = v.shape().to_vec();
            if shape.len() != item_ndim + 1 {
                return Err(PyValueError::new_err(format!(
                    "{name}: an array must have {} dimensions (one item per row of the first), \
                     got shape {}; or pass a sequence of arrays",
                    item_ndim + 1,
                    fmt_shape(&shape)
                )));
            }
            let per: usize = shape[1..].iter().product();
            let items = (0..shape[0])
                .map(|i| Item {
                    view: 0,
                    range: i * per..(i + 1) * per,
                    shape: shape[1..].to_vec(),
                })
                .collect();
            return Ok(Batch {
                views: vec![v],
                items,
            });
        }
        if obj.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(format!(
                "{name} must be an array or a sequence of arrays, not str"
            )));
        }
        let mut views = Vec::new();
        let mut items = Vec::new();
        let iter = obj.try_iter().map_err(|_| {
            PyTypeError::new_err(format!(
                "{name} must be an array or a sequence of arrays, not {}",
                obj.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?;
        for (i, element) in iter.enumerate() {
            let v = view::<T>(&element?, &format!("{name}[{i}]"))?;
            let shape = v.shape().to_vec();
            items.push(Item {
                view: i,
                range: 0..v.slice().len(),
                shape,
            });
            views.push(v);
        }
        Ok(Batch { views, items })
    }

    /// The elements of item `i`.
    pub(crate) fn slice(&self, i: usize) -> &[T] {
        let it = &self.items[i];
        &self.views[it.view].slice()[it.range.clone()]
    }

    /// Number of items.
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }
}
