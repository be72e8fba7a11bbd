//! The library's errors as Python exceptions: `mempursuit.MemPursuitError`
//! (a `ValueError`) with the error's `kind` (`"input"`, `"option"`,
//! `"capacity"`: [`ErrorKind`]), and `mempursuit.CapacityError` (also a
//! `MemoryError`) for kind capacity. The classes are defined in Python
//! (`mempursuit/_errors.py`); this module raises them. A Rust panic never
//! reaches Python: [`guard`] turns one into an ordinary exception.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use mempursuit::{CallError, ErrorKind, SpecError, StoreError};
use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// `(MemPursuitError, CapacityError)`, imported once.
static CLASSES: PyOnceLock<(Py<PyType>, Py<PyType>)> = PyOnceLock::new();

fn classes(py: Python<'_>) -> PyResult<&(Py<PyType>, Py<PyType>)> {
    CLASSES.get_or_try_init(py, || {
        let m = py.import("mempursuit._errors")?;
        let base = m.getattr("MemPursuitError")?.cast_into::<PyType>()?;
        let capacity = m.getattr("CapacityError")?.cast_into::<PyType>()?;
        Ok((base.unbind(), capacity.unbind()))
    })
}

/// A `MemPursuitError` (a `CapacityError` for [`ErrorKind::Capacity`])
/// with `message` and `kind`.
pub(crate) fn error(py: Python<'_>, message: impl Into<String>, kind: ErrorKind) -> PyErr {
    let message = message.into();
    let made = classes(py).and_then(|(base, capacity)| {
        let class = if kind == ErrorKind::Capacity {
            capacity
        } else {
            base
        };
        class.bind(py).call1((message.as_str(), kind.as_str()))
    });
    match made {
        Ok(instance) => PyErr::from_value(instance),
        // Only if the package's Python part is missing: the closest
        // built-in type, same message.
        Err(_) if kind == ErrorKind::Capacity => PyMemoryError::new_err(message),
        Err(_) => PyValueError::new_err(message),
    }
}

/// A document layer's error: a `MemPursuitError` with `kind`, `index`, `id`
/// and `argument` set.
pub(crate) fn document(
    py: Python<'_>,
    message: &str,
    kind: ErrorKind,
    index: Option<usize>,
    id: Option<&str>,
    argument: &str,
) -> PyErr {
    let made = classes(py).and_then(|(base, capacity)| {
        let class = if kind == ErrorKind::Capacity {
            capacity
        } else {
            base
        };
        class
            .bind(py)
            .call1((message, kind.as_str(), index, id, argument))
    });
    match made {
        Ok(instance) => PyErr::from_value(instance),
        Err(_) => PyValueError::new_err(message.to_owned()),
    }
}

/// An error of the data (`kind = "input"`).
pub(crate) fn input(py: Python<'_>, message: impl Into<String>) -> PyErr {
    error(py, message, ErrorKind::Input)
}

/// A memory limit (`kind = "capacity"`, a `CapacityError`).
pub(crate) fn capacity(py: Python<'_>, message: impl Into<String>) -> PyErr {
    error(py, message, ErrorKind::Capacity)
}

/// A specification error (always kind option).
pub(crate) fn spec(py: Python<'_>, e: SpecError) -> PyErr {
    error(py, e.to_string(), e.kind())
}

/// A call's error, with its kind, the message prefixed with `prefix`
/// (`"pair 4: "` in a batch); a store's error as [`store`].
pub(crate) fn call(py: Python<'_>, e: &CallError, prefix: &str) -> PyErr {
    if let CallError::Store(e) = e {
        return store(py, e, prefix);
    }
    error(py, format!("{prefix}{e}"), e.kind())
}

/// A `Store`'s error (kind input) with what it names: a bad row as
/// `index` = its store row and `argument` = `"rows"`; an id out of range
/// as `index` = its position in the call's ids, `id` = the id given (as
/// text) and `argument` = `"ids"`; a shape as `argument` = `"rows"`.
pub(crate) fn store(py: Python<'_>, e: &StoreError, prefix: &str) -> PyErr {
    let (index, id, argument) = match e {
        StoreError::Row { row, .. } => (Some(*row), None, "rows"),
        StoreError::Id { position, id, .. } => (Some(*position), Some(id.to_string()), "ids"),
        StoreError::QueryLength { .. } => (None, None, "query"),
        StoreError::Storage(e) => (Some(e.row), None, "rows"),
        _ => (None, None, "rows"),
    };
    document(
        py,
        &format!("{prefix}{e}"),
        e.kind(),
        index,
        id.as_deref(),
        argument,
    )
}

/// The message of a panic's payload.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a Rust panic without a message".to_owned()
    }
}

/// The exception for a caught panic: a `CapacityError` for the scratch
/// allocation messages of `mempursuit::ReserveError` (a panicking
/// allocation path of the Rust crate), else a `RuntimeError` that says it
/// is a bug.
/// `prefix` goes in front of the message (`"pair 4: "` in a batch).
pub(crate) fn from_panic(py: Python<'_>, prefix: &str, message: &str) -> PyErr {
    if message.starts_with("cannot allocate ") || message.starts_with("the scratch for ") {
        capacity(py, format!("{prefix}{message}"))
    } else {
        PyRuntimeError::new_err(format!(
            "internal error in mempursuit (please report it): {prefix}{message}"
        ))
    }
}

/// Runs `f`, turning a Rust panic into an ordinary exception
/// ([`from_panic`]) instead of PyO3's `PanicException` (a
/// `BaseException`, which `except Exception` does not catch).
pub(crate) fn guard<T>(py: Python<'_>, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => Err(from_panic(py, "", &panic_message(payload.as_ref()))),
    }
}
