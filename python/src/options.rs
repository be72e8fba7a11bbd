//! The keyword arguments of `select`, `Selector.select` and `select_batch`
//! turned into the crate's one specification of a call
//! ([`SelectSpec`]): every option keyword goes to
//! [`SelectSpec::set_typed`] (text is a name only: `gamma="0.3"` is an
//! error, as in JavaScript) with its Python value typed (`float`/`int` → [`Value::Number`], `bool` →
//! [`Value::Bool`], `str` → [`Value::Text`]); `None` leaves the option at
//! the specification's default. The binding maps no name to a method and
//! holds no default of its own. Also the integer arguments (`k`, `threads`,
//! a `Selector`'s capacity) and the `OPTIONS` / `METHODS` exports.

use mempursuit::spec::Value;
use mempursuit::spec::{option_info, OptionType, OPTIONS};
use mempursuit::{ErrorKind, MethodName, SelectSpec, SpecError};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString, PyTuple, PyType};

use crate::errors;

/// The name of `obj`'s type, for messages.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".to_owned())
}

/// `numpy.bool_`, `numbers.Real` (imported once).
static TYPES: PyOnceLock<(Py<PyType>, Py<PyType>)> = PyOnceLock::new();

fn types(py: Python<'_>) -> PyResult<(Bound<'_, PyType>, Bound<'_, PyType>)> {
    let (b, r) = TYPES.get_or_try_init(py, || {
        let np_bool = py
            .import("numpy")?
            .getattr("bool_")?
            .cast_into::<PyType>()?;
        let real = py
            .import("numbers")?
            .getattr("Real")?
            .cast_into::<PyType>()?;
        Ok::<_, PyErr>((np_bool.unbind(), real.unbind()))
    })?;
    Ok((b.bind(py).clone(), r.bind(py).clone()))
}

/// Whether `obj` is a Python or NumPy bool.
pub(crate) fn is_bool(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(obj.is_instance_of::<PyBool>() || obj.is_instance(&types(obj.py())?.0)?)
}

/// A keyword argument's value for [`SelectSpec::set`]: a `bool` (Python or
/// NumPy), a `str`, or a real number (`int`, `float`, a NumPy scalar, any
/// `numbers.Real`); anything else is a `TypeError` naming the argument.
enum Typed {
    Bool(bool),
    Text(String),
    Number(f64),
}

fn typed(key: &str, value: &Bound<'_, PyAny>) -> PyResult<Result<Typed, TypeMismatch>> {
    let py = value.py();
    if is_bool(value)? {
        return Ok(Ok(Typed::Bool(value.is_truthy()?)));
    }
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(Ok(Typed::Text(s.to_string_lossy().into_owned())));
    }
    let real = value.is_instance_of::<PyInt>()
        || value.is_instance_of::<PyFloat>()
        || value.is_instance(&types(py)?.1)?;
    if real {
        // `float(x)`; an int beyond the f64 range rounds to ±inf as IEEE
        // overflow does (Python raises OverflowError instead).
        return match value.extract::<f64>() {
            Ok(x) => Ok(Ok(Typed::Number(x))),
            Err(e) if value.is_instance_of::<PyInt>() => {
                let negative = value.lt(0).map_err(|_| e)?;
                Ok(Ok(Typed::Number(if negative {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                })))
            }
            Err(e) => Err(e),
        };
    }
    Ok(Err(TypeMismatch {
        key: key.to_owned(),
        type_name: type_name(value),
    }))
}

/// A value of a Python type no option takes.
struct TypeMismatch {
    key: String,
    type_name: String,
}

impl TypeMismatch {
    /// The `TypeError` naming the keyword and the type its option takes,
    /// which the specification itself says (`set` accepts a bool for a
    /// bool option, a number for a number option, else a name), or the
    /// specification's own error for a key that is no option.
    fn error(self, py: Python<'_>) -> PyErr {
        let expected = match option_info(&self.key).map(|o| o.ty) {
            None => return unknown(py, &self.key),
            Some(OptionType::Bool) => "a bool",
            Some(OptionType::Number) => "a float",
            Some(_) => "a str",
        };
        PyTypeError::new_err(format!(
            "{} must be {expected} or None, not {}",
            self.key, self.type_name
        ))
    }
}

/// The specification's error for `key`, which is no option.
fn unknown(py: Python<'_>, key: &str) -> PyErr {
    errors::spec(
        py,
        SpecError::UnknownOption {
            key: key.to_owned(),
        },
    )
}

/// The specification of a call from its keyword arguments (`None`: the
/// default). Every key goes to [`SelectSpec::set`] as given (the
/// signature's snake_case keys; the specification also reads the
/// camelCase spelling), so unknown keywords and bad values are the
/// specification's errors (`MemPursuitError`, kind option); the
/// specification is checked as a whole (`SelectSpec::method`, and
/// `SelectSpec::relevance` / `SelectSpec::costs` for whether relevance
/// scores and costs were given) before any array is read.
pub(crate) fn spec(
    py: Python<'_>,
    options: Option<&Bound<'_, PyDict>>,
    has_relevance: bool,
    has_costs: bool,
) -> PyResult<SelectSpec> {
    let mut spec = SelectSpec::default();
    if let Some(options) = options {
        for (key, value) in options.iter() {
            let key = key.cast::<PyString>()?.to_string_lossy().into_owned();
            if value.is_none() {
                // The default; an unknown key is still an error.
                if option_info(&key).is_none() {
                    return Err(unknown(py, &key));
                }
                continue;
            }
            set_one(py, &mut spec, &key, &value)?.map_err(|e| errors::spec(py, e))?;
        }
    }
    spec.method().map_err(|e| errors::spec(py, e))?;
    spec.relevance(has_relevance.then_some(&[][..]))
        .map_err(|e| errors::spec(py, e))?;
    spec.costs(has_costs.then_some(&[][..]))
        .map_err(|e| errors::spec(py, e))?;
    Ok(spec)
}

/// Sets option `key` of `spec` to the Python `value` (not `None`): the
/// outer error is the `TypeError` of a value of a type no option takes (or
/// the specification's error for an unknown key, when the type is wrong
/// too), the inner one the specification's own error.
pub(crate) fn set_one(
    py: Python<'_>,
    spec: &mut SelectSpec,
    key: &str,
    value: &Bound<'_, PyAny>,
) -> PyResult<Result<(), SpecError>> {
    Ok(match typed(key, value)? {
        Ok(Typed::Bool(b)) => spec.set_typed(key, Value::Bool(b)),
        Ok(Typed::Text(t)) => spec.set_typed(key, Value::Text(&t)),
        Ok(Typed::Number(x)) => spec.set_typed(key, Value::Number(x)),
        Err(mismatch) => return Err(mismatch.error(py)),
    })
}

/// A non-negative integer argument: `usize::MAX` stands for any value
/// beyond `usize` (for `k`: the whole pool).
pub(crate) enum Count {
    Value(usize),
    Huge,
}

/// An integer argument `name` ≥ `min` (a Python int or anything with
/// `__index__`, not a bool): `TypeError` for another type, kind option for
/// a value below `min`.
pub(crate) fn count(name: &str, obj: &Bound<'_, PyAny>, min: u8) -> PyResult<Count> {
    let py = obj.py();
    let not_int = || PyTypeError::new_err(format!("{name} must be an int, not {}", type_name(obj)));
    if is_bool(obj)? {
        return Err(not_int());
    }
    let index = if obj.is_instance_of::<PyInt>() {
        obj.clone()
    } else {
        obj.call_method0("__index__").map_err(|_| not_int())?
    };
    if !index.is_instance_of::<PyInt>() {
        return Err(not_int());
    }
    if index.lt(min)? {
        return Err(errors::document(
            py,
            &format!("{name} must be >= {min}, got {index}"),
            ErrorKind::Option,
            None,
            None,
            name,
        ));
    }
    Ok(
        match index
            .extract::<u64>()
            .ok()
            .and_then(|v| usize::try_from(v).ok())
        {
            Some(v) => Count::Value(v),
            None => Count::Huge,
        },
    )
}

/// The budget K: any int ≥ 0; one beyond `usize` selects the whole pool
/// (K ≥ P does).
pub(crate) fn budget(k: &Bound<'_, PyAny>) -> PyResult<usize> {
    Ok(match count("k", k, 0)? {
        Count::Value(v) => v,
        Count::Huge => usize::MAX,
    })
}

/// `mempursuit.METHODS`: the method names of [`MethodName::ALL`], the
/// default first.
pub(crate) fn methods(py: Python<'_>) -> PyResult<Bound<'_, PyTuple>> {
    PyTuple::new(py, MethodName::ALL.iter().map(|m| m.as_str()))
}

/// `mempursuit.OPTIONS`: a read-only mapping of the option keys (in the
/// order of the Rust table, [`OPTIONS`]) to `{"type", "values",
/// "applies_to", "doc"}`.
pub(crate) fn options_table(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let table = PyDict::new(py);
    for o in OPTIONS.iter() {
        let info = PyDict::new(py);
        let (ty, values): (&str, Option<Bound<'_, PyTuple>>) = match o.ty {
            OptionType::Method => ("method", Some(methods(py)?)),
            OptionType::Number => ("number", None),
            OptionType::Bool => ("bool", None),
            OptionType::Name(names) => ("name", Some(PyTuple::new(py, names.iter())?)),
            _ => ("text", None),
        };
        info.set_item("type", ty)?;
        info.set_item("values", values)?;
        info.set_item("applies_to", o.applies_to.describe())?;
        info.set_item("doc", o.doc)?;
        table.set_item(o.key, info)?;
    }
    py.import("types")?
        .getattr("MappingProxyType")?
        .call1((table,))
}
