//! The Rust document layer (`mempursuit::documents`, docs/DOCUMENTS.md)
//! for the Python integrations: `prepare_documents`, `select_documents`,
//! `check_document_settings` and `check_count`. Their errors are
//! `MemPursuitError`s with `kind`, `index`, `id` and `argument` set from
//! the structured [`DocumentError`]: no binding parses a message, and no
//! integration holds a rule of its own (2026-12-05).

use mempursuit::documents::{
    check_option_name, check_query as check_query_vector, check_settings, parse_embedding, prepare,
    select_documents as select_docs, DocumentError, DocumentSpec, MetaValue, ScoreKind,
    ScoresGiven, METADATA_KEY,
};
use mempursuit::{ErrorKind, SelectSpec, Selector};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::options;

/// A `MemPursuitError` carrying the document error's fields.
pub(crate) fn error(py: Python<'_>, e: DocumentError) -> PyErr {
    crate::errors::document(
        py,
        &e.message,
        e.kind,
        e.index,
        e.id.as_deref(),
        &e.argument,
    )
}

/// An input error about document `i`'s `argument`, naming the value's type.
fn bad_value(
    py: Python<'_>,
    i: usize,
    id: Option<&str>,
    argument: &str,
    v: &Bound<'_, PyAny>,
) -> PyErr {
    let what = match argument {
        "embedding" => "a vector of numbers (or pgvector's text \"[0.1,...]\")",
        _ => "a real number",
    };
    let name = match id {
        Some(id) => format!("document {i} (id {id:?})"),
        None => format!("document {i}"),
    };
    let shown: String = v
        .repr()
        .map(|r| r.to_string().chars().take(60).collect())
        .unwrap_or_default();
    error(
        py,
        DocumentError {
            kind: ErrorKind::Input,
            index: Some(i),
            id: id.map(str::to_owned),
            argument: argument.into(),
            message: format!(
                "{name}: its {argument} is {shown} ({}), not {what}",
                options::type_name(v)
            ),
        },
    )
}

/// A real number (not a bool, Python's or NumPy's, not text), else `None`.
fn real(v: &Bound<'_, PyAny>) -> Option<f64> {
    if v.is_instance_of::<PyString>() || options::is_bool(v).unwrap_or(true) {
        return None;
    }
    v.extract::<f64>().ok()
}

fn spec(py: Python<'_>, i: usize, d: &Bound<'_, PyAny>) -> PyResult<DocumentSpec> {
    let d = d.cast::<PyDict>().map_err(|_| {
        PyTypeError::new_err(format!(
            "documents[{i}] must be a dict with keys id, embedding, score, score_kind, cost"
        ))
    })?;
    let get = |k: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
        Ok(d.get_item(k)?.filter(|v| !v.is_none()))
    };
    let id: Option<String> = match get("id")? {
        Some(v) => Some(v.str()?.to_string()),
        None => None,
    };
    let idr = id.as_deref();
    let embedding = match get("embedding")? {
        Some(v) if v.is_instance_of::<PyString>() => {
            let text: String = v.extract()?;
            Some(parse_embedding(&text, i, idr).map_err(|e| error(py, e))?)
        }
        Some(v) => Some(
            v.extract::<Vec<f32>>()
                .map_err(|_| bad_value(py, i, idr, "embedding", &v))?,
        ),
        None => None,
    };
    let score_kind = match get("score_kind")? {
        Some(v) => ScoreKind::parse(&v.extract::<String>()?).map_err(|e| {
            error(
                py,
                DocumentError {
                    index: Some(i),
                    id: id.clone(),
                    ..e
                },
            )
        })?,
        None => ScoreKind::None,
    };
    let number = |key: &str| -> PyResult<Option<f64>> {
        get(key)?
            .map(|v| real(&v).ok_or_else(|| bad_value(py, i, idr, key, &v)))
            .transpose()
    };
    let score = number("score")?;
    let cost = number("cost")?;
    Ok(DocumentSpec {
        id,
        embedding,
        score,
        score_kind,
        cost,
    })
}

fn specs(py: Python<'_>, documents: &Bound<'_, PyList>) -> PyResult<Vec<DocumentSpec>> {
    documents
        .iter()
        .enumerate()
        .map(|(i, d)| spec(py, i, &d))
        .collect()
}

/// The query embedding as f32, or an input error naming the query.
fn query_of(py: Python<'_>, query: &Bound<'_, PyAny>) -> PyResult<Vec<f32>> {
    let refuse = || {
        error(
            py,
            DocumentError {
                kind: ErrorKind::Input,
                index: None,
                id: None,
                argument: "query".into(),
                message: format!(
                    "the query embedding is {} ({}), not a vector of numbers: embed the query \
                     with the documents' model and pass its vector",
                    query
                        .repr()
                        .map(|r| r.to_string().chars().take(60).collect::<String>())
                        .unwrap_or_default(),
                    options::type_name(query)
                ),
            },
        )
    };
    if query.is_none() || query.is_instance_of::<PyString>() {
        return Err(refuse());
    }
    query.extract::<Vec<f32>>().map_err(|_| refuse())
}

/// The specification of an integration's options: each name checked by
/// `check_option_name`, each value set as `select` sets it (`None`: the
/// default); errors carry the option's key as `argument`.
fn spec_of(py: Python<'_>, given: Option<&Bound<'_, PyDict>>) -> PyResult<SelectSpec> {
    let mut spec = SelectSpec::default();
    for (key, value) in given.into_iter().flat_map(|d| d.iter()) {
        let key = key.cast::<PyString>()?.to_string_lossy().into_owned();
        check_option_name(&key).map_err(|e| error(py, e))?;
        let set = if value.is_none() {
            SelectSpec::default().set(&key, mempursuit::spec::Value::Text(""))
        } else {
            options::set_one(py, &mut spec, &key, &value)?
        };
        match set {
            Err(e @ mempursuit::SpecError::UnknownOption { .. }) => {
                return Err(option_error(py, &key, e))
            }
            Err(e) if !value.is_none() => return Err(option_error(py, &key, e)),
            _ => {}
        }
    }
    Ok(spec)
}

fn option_error(py: Python<'_>, key: &str, e: mempursuit::SpecError) -> PyErr {
    error(
        py,
        DocumentError {
            kind: e.kind(),
            index: None,
            id: None,
            argument: key.to_owned(),
            message: e.to_string(),
        },
    )
}

/// prepare_documents(query, documents)
/// --
///
/// The document layer (docs/DOCUMENTS.md): ``query`` a sequence of d
/// floats; ``documents`` a list of dicts with optional keys ``id``,
/// ``embedding`` (floats or pgvector text), ``score``, ``score_kind``
/// (``"similarity"``, ``"distance"``, ``"none"``) and ``cost``. Returns a
/// dict: ``kept`` (indices), ``duplicates`` (``[index, first_index]``),
/// ``candidates`` (list of kept rows), ``relevance``, ``relevance_source``
/// (``"score"`` or ``"cosine"``), ``costs`` (or ``None``). Raises
/// ``MemPursuitError`` with ``kind``, ``index``, ``id``, ``argument``.
#[pyfunction]
pub(crate) fn prepare_documents<'py>(
    py: Python<'py>,
    query: &Bound<'py, PyAny>,
    documents: &Bound<'py, PyList>,
) -> PyResult<Bound<'py, PyDict>> {
    let q = query_of(py, query)?;
    let p = prepare(&q, &specs(py, documents)?).map_err(|e| error(py, e))?;
    let out = PyDict::new(py);
    out.set_item("kept", p.kept)?;
    out.set_item(
        "duplicates",
        p.duplicates
            .iter()
            .map(|&(a, b)| vec![a, b])
            .collect::<Vec<_>>(),
    )?;
    let rows: Vec<Vec<f32>> = p
        .candidates
        .chunks_exact(p.dim)
        .map(<[f32]>::to_vec)
        .collect();
    out.set_item("candidates", rows)?;
    out.set_item("relevance", p.relevance)?;
    out.set_item("relevance_source", p.relevance_source)?;
    out.set_item("costs", p.costs)?;
    Ok(out)
}

/// select_documents(query, documents, k, options=None)
/// --
///
/// Selects up to ``k`` of ``documents`` (as for ``prepare_documents``) for
/// ``query`` with the ``select`` options ``options`` (a dict; ``None``
/// values leave an option at its default), by the Rust document layer:
/// duplicate ids skipped, similarity scores as relevance, a distance never.
/// Returns a dict: ``picks``, in pick order, each ``{"index": i,
/// "metadata": {"mempursuit": {"rank", "weight", "score",
/// "residual_sq"}}}`` (``weight`` and ``residual_sq`` ``None`` for methods
/// without weights); ``duplicates`` (``[index, first_index]``);
/// ``relevance_source``; ``stop_reason``. Raises ``MemPursuitError`` with
/// ``kind``, ``index``, ``id`` and ``argument``; ``TypeError`` for an
/// option value of a type no option takes.
#[pyfunction]
#[pyo3(signature = (query, documents, k, options=None))]
pub(crate) fn select_documents<'py>(
    py: Python<'py>,
    query: &Bound<'py, PyAny>,
    documents: &Bound<'py, PyList>,
    k: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let spec = spec_of(py, options)?;
    let k = options::budget(k)?;
    let q = query_of(py, query)?;
    let docs = specs(py, documents)?;
    let s = py
        .detach(|| select_docs(&mut Selector::new(), &q, &docs, k, &spec))
        .map_err(|e| error(py, e))?;
    let picks = PyList::empty(py);
    for p in &s.picks {
        let record = PyDict::new(py);
        for (key, v) in p.metadata() {
            match v {
                MetaValue::Count(n) => record.set_item(key, n)?,
                MetaValue::Number(x) => record.set_item(key, x)?,
                MetaValue::Null => record.set_item(key, py.None())?,
            }
        }
        let metadata = PyDict::new(py);
        metadata.set_item(METADATA_KEY, record)?;
        let pick = PyDict::new(py);
        pick.set_item("index", p.index)?;
        pick.set_item("metadata", metadata)?;
        picks.append(pick)?;
    }
    let out = PyDict::new(py);
    out.set_item("picks", picks)?;
    out.set_item(
        "duplicates",
        s.duplicates
            .iter()
            .map(|&(a, b)| vec![a, b])
            .collect::<Vec<_>>(),
    )?;
    out.set_item("relevance_source", s.relevance_source)?;
    out.set_item("stop_reason", s.stop_reason)?;
    Ok(out)
}

/// check_document_settings(options, scores, cost, budget_later=False)
/// --
///
/// An integration's settings checked once, at construction, by the Rust
/// layer (``check_settings``): the ``select`` options (a dict), whether the
/// documents' scores are passed (``True``, ``False``, or ``None``: it
/// depends on the documents), whether a cost function is given (``cost``)
/// and whether the cost budget may come with each call. Raises
/// ``MemPursuitError`` (kind ``"option"``, ``argument`` the option or
/// ``"cost"`` / ``"cost_budget"``) or ``TypeError``.
#[pyfunction]
#[pyo3(signature = (options, scores, cost, budget_later=false))]
pub(crate) fn check_document_settings(
    py: Python<'_>,
    options: Option<&Bound<'_, PyDict>>,
    scores: Option<bool>,
    cost: bool,
    budget_later: bool,
) -> PyResult<()> {
    let spec = spec_of(py, options)?;
    let scores = match scores {
        Some(true) => ScoresGiven::Yes,
        Some(false) => ScoresGiven::No,
        None => ScoresGiven::Depends,
    };
    check_settings(&spec, scores, cost, budget_later).map_err(|e| error(py, e))
}

/// check_count(name, value)
/// --
///
/// A count setting ``name`` (``k``, ``top_k``, ``top_n``, ``fetch_k``) as
/// an int: an int >= 0 (a NumPy integer too, not a bool). Raises
/// ``TypeError`` for another type and ``MemPursuitError`` (kind
/// ``"option"``) for a negative value, naming ``name``.
#[pyfunction]
pub(crate) fn check_count(name: &str, value: &Bound<'_, PyAny>) -> PyResult<usize> {
    Ok(match options::count(name, value, 0)? {
        options::Count::Value(v) => v,
        options::Count::Huge => usize::MAX,
    })
}

/// check_query(query)
/// --
///
/// The query embedding checked by the layer before a store is asked: a
/// vector of d >= 1 finite numbers, not all zero. Returns d. Raises
/// ``MemPursuitError`` (kind ``"input"``, ``argument`` ``"query"``).
#[pyfunction]
pub(crate) fn check_query(py: Python<'_>, query: &Bound<'_, PyAny>) -> PyResult<usize> {
    check_query_vector(&query_of(py, query)?).map_err(|e| error(py, e))
}
