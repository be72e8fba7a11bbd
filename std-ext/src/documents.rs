//! The document layer: where a memory store's results meet the selector.
//!
//! A *document* is what a retriever or vector store returns: an optional id,
//! an optional embedding (one f32 row of length d), an optional score with a
//! declared [`ScoreKind`], and an optional cost (e.g. tokens). The Python and
//! JavaScript integrations are adapters between framework types and
//! [`DocumentSpec`]; the policy lives here, once (2026-12-05):
//!
//! - **Duplicate ids**: the first occurrence is kept; later ones are listed
//!   in [`Prepared::duplicates`] as `(index, first_index)`, never selected.
//! - **Score orientation**: a [`ScoreKind::Similarity`] score is used as the
//!   relevance as given (higher is better). A [`ScoreKind::Distance`] score
//!   is *never* used as relevance: the relevance is the cosine of each
//!   document's embedding with the query. [`ScoreKind::None`]: cosine too.
//! - **Missing embeddings**: an error of kind `input` naming the document's
//!   index and id (integrations embed such documents before calling).
//! - **String embeddings**: [`parse_embedding`] reads pgvector's text form
//!   `"[0.1,0.2,...]"`; bad text is refused with a message naming the
//!   document.
//! - **Positional ids**: documents without ids are matched by position
//!   (their index), never by text.
//! - **Costs**: either every document has a finite cost ≥ 0 or none has one.
//!
//! - **Selection and result**: [`select_documents`] runs the selector on
//!   the kept documents and returns each pick with the one metadata record
//!   ([`METADATA_KEY`], [`METADATA_FIELDS`]) that every binding attaches;
//!   [`check_settings`] checks an integration's settings once, without a
//!   call.
//!
//! Errors are [`DocumentError`] values: a kind from the one
//! [`ErrorKind`] set, the document's index and id, the
//! argument, and a message.

use crate::ErrorKind;
use std::collections::HashMap;
use std::fmt;

mod select;
pub use select::{
    check_option_name, check_settings, select_documents, DocumentPick, DocumentSelection,
    MetaValue, ScoresGiven, METADATA_FIELDS, METADATA_KEY, RESERVED,
};

/// What a document's score means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScoreKind {
    /// Higher is more relevant (cosine, inner product, a store's relevance
    /// function): used as the relevance as given.
    Similarity,
    /// Lower is more relevant (L2, cosine distance): never used as
    /// relevance; the vectors' cosine with the query is.
    Distance,
    /// No score, or one that is ignored: the vectors' cosine decides.
    #[default]
    None,
}

impl ScoreKind {
    /// `"similarity"`, `"distance"` or `"none"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ScoreKind::Similarity => "similarity",
            ScoreKind::Distance => "distance",
            ScoreKind::None => "none",
        }
    }

    /// Parses [`ScoreKind::as_str`]'s names; an unknown name is an error of
    /// kind `option` on argument `score_kind`.
    pub fn parse(name: &str) -> Result<Self, DocumentError> {
        match name {
            "similarity" => Ok(ScoreKind::Similarity),
            "distance" => Ok(ScoreKind::Distance),
            "none" => Ok(ScoreKind::None),
            other => Err(DocumentError {
                kind: ErrorKind::Option,
                index: None,
                id: None,
                argument: "score_kind".into(),
                message: format!(
                    "score_kind {other:?} is not one of \"similarity\" (higher is better), \
                     \"distance\" (lower is better) or \"none\""
                ),
            }),
        }
    }
}

/// One document as a store returned it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DocumentSpec {
    /// The store's id; `None`: the document is known by its position.
    pub id: Option<String>,
    /// The embedding, one row of length d; `None`: missing (an error).
    pub embedding: Option<Vec<f32>>,
    /// The store's score, read as [`DocumentSpec::score_kind`] says.
    pub score: Option<f64>,
    /// What `score` means.
    pub score_kind: ScoreKind,
    /// The document's cost (e.g. tokens), finite and ≥ 0.
    pub cost: Option<f64>,
}

/// A structured error of the document layer.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentError {
    /// `input` (the data) or `option` (a setting), from the one set.
    pub kind: ErrorKind,
    /// The document's index in the list given, when one document is at fault.
    pub index: Option<usize>,
    /// That document's id, when it has one.
    pub id: Option<String>,
    /// The argument at fault: `embedding`, `score`, `cost`, `query`, …
    pub argument: String,
    /// A sentence naming the value and the fix.
    pub message: String,
}

impl fmt::Display for DocumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DocumentError {}

fn doc_error(
    kind: ErrorKind,
    index: usize,
    id: Option<&str>,
    argument: &str,
    what: &str,
) -> DocumentError {
    let name = match id {
        Some(id) => format!("document {index} (id {id:?})"),
        None => format!("document {index}"),
    };
    DocumentError {
        kind,
        index: Some(index),
        id: id.map(str::to_owned),
        argument: argument.into(),
        message: format!("{name}: {what}"),
    }
}

/// Parses pgvector's text form of an embedding, `"[0.1,0.2,...]"`
/// (whitespace allowed around numbers and brackets).
///
/// `index` and `id` name the document in the error. Errors (kind `input`,
/// argument `embedding`): no brackets, an empty vector, a token that is not a
/// number, a non-finite value.
pub fn parse_embedding(
    text: &str,
    index: usize,
    id: Option<&str>,
) -> Result<Vec<f32>, DocumentError> {
    let bad = |what: String| doc_error(ErrorKind::Input, index, id, "embedding", &what);
    let t = text.trim();
    let inner = t
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .ok_or_else(|| {
            bad(format!(
                "the embedding text must look like \"[0.1,0.2,...]\" (pgvector's form); \
                 got {:?}",
                short(t)
            ))
        })?;
    if inner.trim().is_empty() {
        return Err(bad("the embedding text \"[]\" holds no numbers".into()));
    }
    inner
        .split(',')
        .enumerate()
        .map(|(j, tok)| {
            let tok = tok.trim();
            match tok.parse::<f32>() {
                Ok(v) if v.is_finite() => Ok(v),
                Ok(v) => Err(bad(format!(
                    "component {j} of the embedding text is {v}, not finite"
                ))),
                Err(_) => Err(bad(format!(
                    "component {j} of the embedding text, {:?}, is not a number",
                    short(tok)
                ))),
            }
        })
        .collect()
}

fn short(s: &str) -> String {
    if s.chars().count() <= 40 {
        s.to_owned()
    } else {
        let head: String = s.chars().take(40).collect();
        format!("{head}…")
    }
}

/// The documents made ready for a selector call.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// Indices (into the list given) of the documents kept, in order.
    pub kept: Vec<usize>,
    /// `(index, first_index)` of each later document with an id already
    /// seen: skipped, never selected.
    pub duplicates: Vec<(usize, usize)>,
    /// The kept documents' embeddings, row-major, `kept.len() × d`.
    pub candidates: Vec<f32>,
    /// The relevance of each kept document (higher is better): the
    /// similarity scores as given, or the cosine with the query.
    pub relevance: Vec<f64>,
    /// Where the relevance came from: `"score"` or `"cosine"`.
    pub relevance_source: &'static str,
    /// The kept documents' costs, when documents carry costs.
    pub costs: Option<Vec<f64>>,
    /// The embedding dimension d.
    pub dim: usize,
}

/// Checks the documents against the query and prepares the selector's input.
///
/// Relevance: when every kept document has a [`ScoreKind::Similarity`]
/// score, those scores; otherwise (any distance, no score) the cosine of
/// each embedding with `query`. Errors: an empty query or a non-finite query
/// value, or a query whose length differs from every document's (all of one
/// length) (argument `query`); a missing embedding, one of another length
/// than the query's, a non-finite component (`embedding`); a non-finite
/// similarity, or similarity scores on some documents only (`score`);
/// scores of mixed kinds (`score_kind`); a negative or non-finite cost, or
/// costs on some documents only (`cost`).
pub fn prepare(query: &[f32], docs: &[DocumentSpec]) -> Result<Prepared, DocumentError> {
    let d = check_query(query)?;
    let (kept, duplicates) = dedupe(docs);
    check_query_length(d, docs, &kept)?;
    let mut candidates = Vec::with_capacity(kept.len() * d);
    let first_kind = kept.first().map(|&i| docs[i].score_kind);
    for &i in &kept {
        candidates.extend_from_slice(checked_row(i, &docs[i], d)?);
        if Some(docs[i].score_kind) != first_kind {
            return Err(kind_mismatch(i, &docs[i], first_kind));
        }
    }
    let costs = costs_of(docs, &kept)?;
    let scores = similarity_scores(docs, &kept, first_kind)?;
    let source = if scores.is_some() { "score" } else { "cosine" };
    let relevance = scores.unwrap_or_else(|| cosines(query, &candidates));
    Ok(Prepared {
        kept,
        duplicates,
        candidates,
        relevance,
        relevance_source: source,
        costs,
        dim: d,
    })
}

/// The query's length d, checked before anything else (an integration
/// calls it before asking a store): an error (kind `input`, argument
/// `query`) for an empty query, a non-finite value, or all zeros.
pub fn check_query(query: &[f32]) -> Result<usize, DocumentError> {
    if query.is_empty() {
        return Err(query_error(
            "the query embedding is empty: give a vector of length d ≥ 1".into(),
        ));
    }
    if let Some(j) = query.iter().position(|v| !v.is_finite()) {
        return Err(query_error(format!(
            "the query embedding's component {j} is {}, not finite",
            query[j]
        )));
    }
    if query.iter().all(|&v| v == 0.0) {
        return Err(query_error(
            "the query embedding is all zeros: it has no direction to select by".into(),
        ));
    }
    Ok(query.len())
}

fn query_error(message: String) -> DocumentError {
    DocumentError {
        kind: ErrorKind::Input,
        index: None,
        id: None,
        argument: "query".into(),
        message,
    }
}

/// The kept indices (first occurrence of each id, every document without
/// one) and the `(index, first_index)` of each later duplicate.
fn dedupe(docs: &[DocumentSpec]) -> (Vec<usize>, Vec<(usize, usize)>) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut kept = Vec::new();
    let mut duplicates = Vec::new();
    for (i, doc) in docs.iter().enumerate() {
        if let Some(id) = doc.id.as_deref() {
            if let Some(&first) = seen.get(id) {
                duplicates.push((i, first));
                continue;
            }
            seen.insert(id, i);
        }
        kept.push(i);
    }
    (kept, duplicates)
}

/// When every kept document has an embedding of one length n ≠ d, the
/// query is the odd one out: an error naming the query.
fn check_query_length(
    d: usize,
    docs: &[DocumentSpec],
    kept: &[usize],
) -> Result<(), DocumentError> {
    let mut lengths = kept
        .iter()
        .map(|&i| docs[i].embedding.as_ref().map(Vec::len));
    match lengths.next() {
        Some(Some(n)) if n != d && lengths.all(|m| m == Some(n)) => Err(query_error(format!(
            "the query embedding has {d} values, the documents' embeddings have {n}: embed \
             the query with the model that embedded the documents"
        ))),
        _ => Ok(()),
    }
}

/// Document `i`'s embedding, checked: present, of length `d`, finite.
fn checked_row(i: usize, doc: &DocumentSpec, d: usize) -> Result<&[f32], DocumentError> {
    let id = doc.id.as_deref();
    let bad = |what: &str| doc_error(ErrorKind::Input, i, id, "embedding", what);
    let row = doc
        .embedding
        .as_deref()
        .ok_or_else(|| bad("has no embedding (embed it with the documents' model first)"))?;
    if row.len() != d {
        return Err(bad(&format!(
            "embedding has length {}, the query has length {d} (were they made by the same model?)",
            row.len()
        )));
    }
    if let Some(j) = row.iter().position(|v| !v.is_finite()) {
        return Err(bad(&format!(
            "embedding component {j} is {}, not finite",
            row[j]
        )));
    }
    Ok(row)
}

fn kind_mismatch(i: usize, doc: &DocumentSpec, first: Option<ScoreKind>) -> DocumentError {
    doc_error(
        ErrorKind::Input,
        i,
        doc.id.as_deref(),
        "score_kind",
        &format!(
            "score kind {:?} differs from the first document's {:?}: one store, one kind",
            doc.score_kind.as_str(),
            first.map_or("none", ScoreKind::as_str)
        ),
    )
}

/// The kept documents' costs: all or none, each finite and ≥ 0.
fn costs_of(docs: &[DocumentSpec], kept: &[usize]) -> Result<Option<Vec<f64>>, DocumentError> {
    if kept.iter().all(|&i| docs[i].cost.is_none()) {
        return Ok(None);
    }
    kept.iter()
        .map(|&i| {
            let bad = |what: &str| doc_error(ErrorKind::Input, i, docs[i].id.as_deref(), "cost", what);
            match docs[i].cost {
                Some(v) if v.is_finite() && v >= 0.0 => Ok(v),
                Some(v) => Err(bad(&format!(
                    "cost {v} must be finite and ≥ 0 (e.g. the document's token count)"
                ))),
                None => Err(bad(
                    "has no cost while other documents have one: give every document a cost or none",
                )),
            }
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// The similarity scores as relevance, when the kind is similarity and
/// some document has a score: then every one must have a finite one.
fn similarity_scores(
    docs: &[DocumentSpec],
    kept: &[usize],
    kind: Option<ScoreKind>,
) -> Result<Option<Vec<f64>>, DocumentError> {
    if kind != Some(ScoreKind::Similarity) || kept.iter().all(|&i| docs[i].score.is_none()) {
        return Ok(None);
    }
    kept.iter()
        .map(|&i| {
            let bad = |what: String| {
                doc_error(ErrorKind::Input, i, docs[i].id.as_deref(), "score", &what)
            };
            match docs[i].score {
                Some(s) if s.is_finite() => Ok(s),
                Some(s) => Err(bad(format!("similarity score {s} is not finite"))),
                None => Err(bad(
                    "has no score while other documents have one: give every document a \
                     finite score, or none (the relevance is then the cosine to the query)"
                        .into(),
                )),
            }
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// Each row's cosine with the query (0 for a zero row or query).
fn cosines(query: &[f32], candidates: &[f32]) -> Vec<f64> {
    let qn = norm(query);
    candidates
        .chunks_exact(query.len())
        .map(|row| {
            let rn = norm(row);
            if qn == 0.0 || rn == 0.0 {
                0.0
            } else {
                dot(query, row) / (qn * rn)
            }
        })
        .collect()
}

fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum()
}

fn norm(a: &[f32]) -> f64 {
    dot(a, a).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(id: Option<&str>, e: &[f32], score: Option<f64>, kind: ScoreKind) -> DocumentSpec {
        DocumentSpec {
            id: id.map(str::to_owned),
            embedding: Some(e.to_vec()),
            score,
            score_kind: kind,
            cost: None,
        }
    }

    #[test]
    fn duplicates_first_kept_later_reported() {
        let q = [1.0, 0.0];
        let docs = [
            doc(Some("a"), &[1.0, 0.0], None, ScoreKind::None),
            doc(Some("b"), &[0.0, 1.0], None, ScoreKind::None),
            doc(Some("a"), &[1.0, 0.0], None, ScoreKind::None),
            doc(None, &[0.6, 0.8], None, ScoreKind::None),
            doc(None, &[0.6, 0.8], None, ScoreKind::None),
        ];
        let p = prepare(&q, &docs).unwrap();
        assert_eq!(p.kept, [0, 1, 3, 4]); // no ids: by position, never by text
        assert_eq!(p.duplicates, [(2, 0)]);
        assert_eq!(p.candidates.len(), 8);
    }

    #[test]
    fn distance_is_never_relevance() {
        let q = [1.0, 0.0];
        // L2 distances: the near document has the small score.
        let docs = [
            doc(Some("near"), &[1.0, 0.0], Some(0.0), ScoreKind::Distance),
            doc(Some("far"), &[0.0, 1.0], Some(1.41), ScoreKind::Distance),
        ];
        let p = prepare(&q, &docs).unwrap();
        assert_eq!(p.relevance_source, "cosine");
        assert!((p.relevance[0] - 1.0).abs() < 1e-12);
        assert!(p.relevance[1].abs() < 1e-12);
    }

    #[test]
    fn similarity_used_as_given() {
        let q = [1.0, 0.0];
        let docs = [
            doc(None, &[1.0, 0.0], Some(0.25), ScoreKind::Similarity),
            doc(None, &[0.0, 1.0], Some(0.75), ScoreKind::Similarity),
        ];
        let p = prepare(&q, &docs).unwrap();
        assert_eq!(p.relevance_source, "score");
        assert_eq!(p.relevance, [0.25, 0.75]);
    }

    #[test]
    fn string_embeddings() {
        assert_eq!(
            parse_embedding(" [0.5, -1,2e-1] ", 0, None).unwrap(),
            [0.5, -1.0, 0.2]
        );
        let e = parse_embedding("[0.1,x]", 3, Some("m7")).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Input);
        assert_eq!(e.index, Some(3));
        assert_eq!(e.id.as_deref(), Some("m7"));
        assert_eq!(e.argument, "embedding");
        assert!(
            e.message.contains("document 3 (id \"m7\")"),
            "{}",
            e.message
        );
        assert!(parse_embedding("0.1,0.2", 0, None).is_err());
        assert!(parse_embedding("[]", 0, None).is_err());
        assert!(parse_embedding("[inf]", 0, None).is_err());
    }

    #[test]
    fn missing_embedding_names_document() {
        let mut d1 = doc(Some("x"), &[1.0], None, ScoreKind::None);
        d1.embedding = None;
        let docs = [doc(Some("w"), &[1.0], None, ScoreKind::None), d1];
        let e = prepare(&[1.0], &docs).unwrap_err();
        assert_eq!((e.index, e.id.as_deref()), (Some(1), Some("x")));
        assert_eq!(e.argument, "embedding");
    }

    #[test]
    fn costs_all_or_none() {
        let mut a = doc(None, &[1.0], None, ScoreKind::None);
        let mut b = doc(None, &[1.0], None, ScoreKind::None);
        a.cost = Some(3.0);
        let e = prepare(&[1.0], &[a.clone(), b.clone()]).unwrap_err();
        assert_eq!((e.index, e.argument.as_str()), (Some(1), "cost"));
        b.cost = Some(-1.0);
        let e = prepare(&[1.0], &[a.clone(), b.clone()]).unwrap_err();
        assert_eq!(e.argument, "cost");
        b.cost = Some(2.0);
        let p = prepare(&[1.0], &[a, b]).unwrap();
        assert_eq!(p.costs, Some(vec![3.0, 2.0]));
    }

    #[test]
    fn score_kind_names() {
        for k in [ScoreKind::Similarity, ScoreKind::Distance, ScoreKind::None] {
            assert_eq!(ScoreKind::parse(k.as_str()).unwrap(), k);
        }
        let e = ScoreKind::parse("l2").unwrap_err();
        assert_eq!(
            (e.kind, e.argument.as_str()),
            (ErrorKind::Option, "score_kind")
        );
    }
}
