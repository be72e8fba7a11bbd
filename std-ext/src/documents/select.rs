//! Selection over documents: the settings of an integration checked once
//! ([`check_settings`]), the selection itself ([`select_documents`]) and the
//! one result shape, a metadata object under [`METADATA_KEY`] with the keys
//! of [`METADATA_FIELDS`] (2026-12-05).

use super::{prepare, DocumentError, DocumentSpec};
use crate::{CallData, CallError, Error, ErrorKind, Pool, SelectSpec, Selector, SpecError};

/// The metadata key under which each returned document carries its pick's
/// record (Python: `meta["mempursuit"]`, JavaScript:
/// `metadata.mempursuit`).
pub const METADATA_KEY: &str = "mempursuit";

/// The fields of that record, in this order: `rank` (0 for the first pick),
/// `weight` (the pick's simplex weight; null for methods without weights,
/// top-K and MMR), `score` (the step's score at pick time), `residual_sq`
/// (the squared residual of the query after the pick; null without
/// weights).
pub const METADATA_FIELDS: [&str; 4] = ["rank", "weight", "score", "residual_sq"];

/// `select`'s arguments that an integration fills in itself: given as an
/// option, each is an error ([`check_option_name`]).
pub const RESERVED: [&str; 5] = ["query", "candidates", "k", "relevance", "costs"];

/// One value of a pick's metadata record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MetaValue {
    /// A count (the rank).
    Count(usize),
    /// A real number.
    Number(f64),
    /// No value (a weight of a method without weights).
    Null,
}

/// One picked document.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentPick {
    /// The document's index in the list given.
    pub index: usize,
    /// 0 for the first pick.
    pub rank: usize,
    /// The simplex weight (`None` for top-K and MMR).
    pub weight: Option<f64>,
    /// The step's score at pick time.
    pub score: f64,
    /// The squared residual after the pick (`None` without weights).
    pub residual_sq: Option<f64>,
}

impl DocumentPick {
    /// The metadata record, the fields of [`METADATA_FIELDS`] in order.
    pub fn metadata(&self) -> [(&'static str, MetaValue); 4] {
        let opt = |v: Option<f64>| v.map_or(MetaValue::Null, MetaValue::Number);
        let [rank, weight, score, residual_sq] = METADATA_FIELDS;
        [
            (rank, MetaValue::Count(self.rank)),
            (weight, opt(self.weight)),
            (score, MetaValue::Number(self.score)),
            (residual_sq, opt(self.residual_sq)),
        ]
    }
}

/// The result of [`select_documents`].
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentSelection {
    /// The picks in pick order.
    pub picks: Vec<DocumentPick>,
    /// `(index, first_index)` of each document skipped as a duplicate id.
    pub duplicates: Vec<(usize, usize)>,
    /// `"score"` or `"cosine"` ([`super::Prepared::relevance_source`]).
    pub relevance_source: &'static str,
    /// Why the selection ended (`budget`, `cost_budget`, …).
    pub stop_reason: &'static str,
}

/// Whether an integration passes the documents' scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScoresGiven {
    /// Always (a score key is set).
    Yes,
    /// Never (scores turned off).
    No,
    /// When the documents carry them: a setting is refused only when it
    /// fails both with and without scores.
    Depends,
}

fn option_error(argument: &str, message: String) -> DocumentError {
    DocumentError {
        kind: ErrorKind::Option,
        index: None,
        id: None,
        argument: argument.into(),
        message,
    }
}

fn spec_error(e: SpecError) -> DocumentError {
    let argument = match &e {
        SpecError::UnknownOption { key }
        | SpecError::InvalidValue { key, .. }
        | SpecError::NotApplicable { key, .. } => key.clone(),
        SpecError::UnknownMethod { .. } => "method".into(),
        SpecError::OutOfRange(core) => match core {
            Error::InvalidCostBudget(_) => "cost_budget",
            Error::InvalidRidge(_) => "ridge",
            Error::InvalidGamma(_) => "gamma",
            Error::InvalidMmrLambda(_) => "mmr_lambda",
            Error::InvalidOptimumTolerance(_) => "optimum_tolerance",
            _ => "options",
        }
        .into(),
        _ => "options".into(),
    };
    DocumentError {
        kind: e.kind(),
        index: None,
        id: None,
        argument,
        message: e.to_string(),
    }
}

/// Refuses an option name that the integration fills in itself
/// ([`RESERVED`]); any other name is left to [`SelectSpec::set`].
///
/// # Errors
/// Kind `option`, argument the name.
pub fn check_option_name(key: &str) -> Result<(), DocumentError> {
    if RESERVED.contains(&key) {
        return Err(option_error(
            key,
            format!(
                "'{key}' is set by the integration: the query and the candidates come from \
                 the framework, k from the integration's own budget, relevance from the \
                 documents' scores, costs from its cost function; pass the other options of select"
            ),
        ));
    }
    Ok(())
}

/// An integration's settings checked once, at construction, as a call
/// would check them: the specification (method, ranges, options that do
/// not apply), with scores as `scores` says, and a cost function
/// (`cost`) paired with the `cost_budget` option. `budget_later`: the
/// budget may come with each call (then only a budget without a cost
/// function is an error).
///
/// # Errors
/// Kind `option`: the specification's error (argument: the option key, or
/// `method` / `options`); a cost function without a cost budget (argument
/// `cost`); a cost budget without a cost function (`cost_budget`).
pub fn check_settings(
    spec: &SelectSpec,
    scores: ScoresGiven,
    cost: bool,
    budget_later: bool,
) -> Result<(), DocumentError> {
    let budget = spec.cost_budget().is_some();
    if cost && !budget && !budget_later {
        return Err(option_error(
            "cost",
            "a cost function needs a cost budget (the most the selected documents may cost \
             in total, in the units of the costs, e.g. tokens)"
                .into(),
        ));
    }
    if !cost && budget {
        return Err(option_error(
            "cost_budget",
            "a cost budget needs a cost function (each document's cost, e.g. its token count)"
                .into(),
        ));
    }
    spec.method().map_err(spec_error)?;
    let with = spec.relevance(Some(&[])).map(|_| ());
    let without = spec.relevance(None).map(|_| ());
    match (scores, with, without) {
        (ScoresGiven::Yes, Err(e), _) | (ScoresGiven::No, _, Err(e)) => Err(spec_error(e)),
        (ScoresGiven::Depends, Err(e), Err(_)) => Err(spec_error(e)),
        _ => Ok(()),
    }
}

/// Selects up to `k` of `docs` for `query` with `spec`: [`prepare`], then
/// [`Selector::select_spec`] on the kept documents (relevance: the
/// similarity scores when [`super::Prepared::relevance_source`] is
/// `"score"`, else the selector's cosine; costs: the documents' costs), the
/// picks mapped back to the documents' indices.
///
/// # Errors
/// [`prepare`]'s errors; the specification's (kind `option`); an unusable
/// row (a zero vector, a norm out of range) names the document (argument
/// `embedding`), an unusable query the query; a capacity error.
pub fn select_documents(
    selector: &mut Selector,
    query: &[f32],
    docs: &[DocumentSpec],
    k: usize,
    spec: &SelectSpec,
) -> Result<DocumentSelection, DocumentError> {
    let p = prepare(query, docs)?;
    let relevance: Option<Vec<f32>> =
        (p.relevance_source == "score").then(|| p.relevance.iter().map(|&r| r as f32).collect());
    let mut costs: Option<Vec<f32>> = p
        .costs
        .as_ref()
        .map(|c| c.iter().map(|&v| v as f32).collect());
    if p.kept.is_empty() && spec.cost_budget().is_some() {
        costs = Some(Vec::new()); // no document, no cost missing
    }
    let data = CallData::new(query, Pool::F32(&p.candidates))
        .with_relevance(relevance.as_deref())
        .with_costs(costs.as_deref());
    let sel = selector
        .select_spec(spec, data, k)
        .map_err(|e| call_error(e, &p.kept, docs))?;
    let weighted = sel.weights.len() == sel.picks.len() && !sel.weights.is_empty();
    let picks = sel
        .picks
        .iter()
        .enumerate()
        .map(|(r, &row)| DocumentPick {
            index: p.kept[row],
            rank: r,
            weight: weighted.then(|| sel.weights[r]),
            score: sel.steps[r].score,
            residual_sq: weighted.then(|| sel.steps[r].residual_sq),
        })
        .collect();
    Ok(DocumentSelection {
        picks,
        duplicates: p.duplicates,
        relevance_source: p.relevance_source,
        stop_reason: sel.stop.as_str(),
    })
}

/// A selector error as a document error: a candidate row names its
/// document (by `kept`), the query the query.
fn call_error(e: CallError, kept: &[usize], docs: &[DocumentSpec]) -> DocumentError {
    let kind = e.kind();
    match e {
        CallError::Spec(s) => spec_error(s),
        CallError::Select(Error::Candidate { row, fault }) if row < kept.len() => {
            let i = kept[row];
            super::doc_error(
                kind,
                i,
                docs[i].id.as_deref(),
                "embedding",
                &format!("its embedding is unusable: {fault}"),
            )
        }
        CallError::Select(Error::Query(fault)) => DocumentError {
            kind,
            index: None,
            id: None,
            argument: "query".into(),
            message: format!("the query embedding is unusable: {fault}"),
        },
        other => DocumentError {
            kind,
            index: None,
            id: None,
            argument: "options".into(),
            message: other.to_string(),
        },
    }
}
