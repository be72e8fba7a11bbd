//! `mempursuit._mempursuit.prepare_documents`: the Rust document layer
//! (`mempursuit::documents`, docs/DOCUMENTS.md) for the Python integrations.
//! Its errors are `MemPursuitError`s with `kind`, `index`, `id` and
//! `argument` set from the structured [`DocumentError`]: no binding parses a
//! message.

use mempursuit::documents::{parse_embedding, prepare, DocumentError, DocumentSpec, ScoreKind};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

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
    let embedding = match get("embedding")? {
        Some(v) if v.is_instance_of::<PyString>() => {
            let text: String = v.extract()?;
            Some(parse_embedding(&text, i, id.as_deref()).map_err(|e| error(py, e))?)
        }
        Some(v) => Some(v.extract::<Vec<f32>>().map_err(|_| {
            PyTypeError::new_err(format!(
                "documents[{i}]: embedding must be a sequence of numbers or pgvector text"
            ))
        })?),
        None => None,
    };
    let score_kind = match get("score_kind")? {
        Some(v) => ScoreKind::parse(&v.extract::<String>()?).map_err(|e| error(py, e))?,
        None => ScoreKind::None,
    };
    let score = get("score")?.map(|v| v.extract::<f64>()).transpose()?;
    let cost = get("cost")?.map(|v| v.extract::<f64>()).transpose()?;
    Ok(DocumentSpec {
        id,
        embedding,
        score,
        score_kind,
        cost,
    })
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
    query: Vec<f32>,
    documents: &Bound<'py, PyList>,
) -> PyResult<Bound<'py, PyDict>> {
    let specs = documents
        .iter()
        .enumerate()
        .map(|(i, d)| spec(py, i, &d))
        .collect::<PyResult<Vec<_>>>()?;
    let p = prepare(&query, &specs).map_err(|e| error(py, e))?;
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
