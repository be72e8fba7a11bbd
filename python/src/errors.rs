//! The core's [`Error`] as Python exceptions.

use mempursuit::Error;
use pyo3::exceptions::PyValueError;
use pyo3::PyErr;

/// A `ValueError` with the core's message, which names the offending row
/// and element (`candidate 3: element 7 is not finite (NaN)`), the
/// parameter (`gamma 2 must be in (0, 1]`) or the shapes.
pub(crate) fn to_py(e: Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// [`to_py`] for pair `index` of a batch: `pair 4: candidate 3: ...`.
pub(crate) fn to_py_at(index: usize, e: Error) -> PyErr {
    PyValueError::new_err(format!("pair {index}: {e}"))
}
