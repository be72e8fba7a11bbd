//! Evaluation of selectors on an evidence-selection [`Dataset`]: evidence
//! recall, complete coverage and group coverage at several budgets K,
//! overall and per query type.
//!
//! For each query the pool's embeddings are gathered into a P × d matrix and
//! every method selects from it. Fixed-budget selectors (top-K, MMR and the
//! pursuit with [`Stopping::FixedBudget`]) are nested: the selection for
//! budget k is the first k picks of the selection for any larger budget, so
//! each such method runs once per query at the largest K and every smaller
//! budget is scored on a prefix. A pursuit with adaptive stopping runs once
//! per budget.
//!
//! Metrics, per method and K (all in [0, 1]; Q = number of queries):
//! * **evidence recall** (macro): (1/Q) Σ_q |gold_q ∩ picks_q| / |gold_q|;
//! * **complete coverage**: share of queries with every gold memory picked;
//! * **group coverage**: share of queries with every gold group
//!   (`gold_groups`, e.g. each gold paragraph) represented by ≥ 1 pick.
//!
//! ```
//! use mempursuit_cli::dataset::Dataset;
//! use mempursuit_cli::eval::{evaluate, EvalOptions, NamedMethod};
//! use mempursuit_cli::mempursuit::{InputPolicy, Method, PursuitOptions};
//!
//! let data = Dataset::load_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/data/hotpotqa-mini"))?;
//! let methods = [
//!     NamedMethod::new("top-K", Method::TopK(InputPolicy::default())),
//!     NamedMethod::new("MemPursuit", Method::Pursuit(PursuitOptions::default())),
//! ];
//! let report = evaluate(&data, &methods, &EvalOptions::new(vec![5, 10]))?;
//! let top10 = report.methods[0].at(10).unwrap();
//! assert!((top10.overall.evidence_recall - 0.7458).abs() < 1e-4); // the fixture manifest
//! println!("{report}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!

use std::collections::{BTreeMap, HashSet};
use std::fmt::{self, Write as _};

use serde::Serialize;

use crate::dataset::{Dataset, QuerySpec};
use mempursuit::{Error, Input, Method, Relevance, Selector, Stopping};

/// A selector with a display name (the table's row label and the key of its
/// picks in the selections output).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NamedMethod {
    /// Display name, e.g. `"MemPursuit"`.
    pub name: String,
    /// The selector and its parameters.
    pub method: Method,
}

impl NamedMethod {
    /// A named method.
    pub fn new(name: impl Into<String>, method: Method) -> Self {
        NamedMethod {
            name: name.into(),
            method,
        }
    }
}

/// Where each query's relevance ρ comes from (see [`Relevance`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum RelevanceMode {
    /// The query's `relevance` scores ([`Relevance::Scores`]) when its spec
    /// has them, otherwise ρ = b, the cosine to the query.
    #[default]
    Auto,
    /// Always ρ = b ([`Relevance::Similarity`]), ignoring spec scores.
    Similarity,
    /// Treat every pool as given in first-stage order
    /// ([`Relevance::PoolOrder`]), ignoring spec scores.
    PoolOrder,
}

/// Options of [`evaluate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalOptions {
    /// The budgets K to score (sorted and de-duplicated by [`evaluate`]).
    pub ks: Vec<usize>,
    /// Where ρ comes from.
    pub relevance: RelevanceMode,
}

impl EvalOptions {
    /// Budgets `ks` with [`RelevanceMode::Auto`].
    pub fn new(ks: Vec<usize>) -> Self {
        EvalOptions {
            ks,
            relevance: RelevanceMode::Auto,
        }
    }
}

/// Aggregated metrics over a set of queries (fractions in [0, 1]).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Metrics {
    /// Number of queries aggregated.
    pub queries: usize,
    /// Macro evidence recall: mean over queries of |gold ∩ picks| / |gold|.
    pub evidence_recall: f64,
    /// Share of queries with all gold memories picked.
    pub complete_coverage: f64,
    /// Share of queries with every gold group represented.
    pub group_coverage: f64,
    /// Mean number of memories selected (below K only for pools smaller
    /// than K or adaptive stopping).
    pub mean_selected: f64,
}

/// Running sums behind a [`Metrics`].
#[derive(Debug, Clone, Copy, Default)]
struct Acc {
    n: usize,
    recall: f64,
    complete: usize,
    groups: usize,
    selected: usize,
}

impl Acc {
    fn add(&mut self, s: &QueryScore, selected: usize) {
        self.n += 1;
        self.recall += s.recall;
        self.complete += usize::from(s.complete);
        self.groups += usize::from(s.groups_covered);
        self.selected += selected;
    }

    fn metrics(&self) -> Metrics {
        let n = self.n.max(1) as f64;
        Metrics {
            queries: self.n,
            evidence_recall: self.recall / n,
            complete_coverage: self.complete as f64 / n,
            group_coverage: self.groups as f64 / n,
            mean_selected: self.selected as f64 / n,
        }
    }
}

/// The score of one query's selection.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct QueryScore {
    /// Number of gold memories picked.
    pub gold_hits: usize,
    /// |gold ∩ picks| / |gold|.
    pub recall: f64,
    /// Every gold memory picked.
    pub complete: bool,
    /// Every gold group has a picked member (vacuously true with no groups).
    pub groups_covered: bool,
}

/// Scores the selected memory ids `picked` (memory ids, not pool positions)
/// against `spec`'s gold evidence.
pub fn score_query(spec: &QuerySpec, picked: &[usize]) -> QueryScore {
    let set: HashSet<usize> = picked.iter().copied().collect();
    let gold_hits = spec.gold.iter().filter(|g| set.contains(g)).count();
    let gold = spec.gold.len().max(1);
    QueryScore {
        gold_hits,
        recall: gold_hits as f64 / gold as f64,
        complete: gold_hits == spec.gold.len(),
        groups_covered: spec
            .gold_groups
            .iter()
            .all(|g| g.iter().any(|id| set.contains(id))),
    }
}

/// The metrics of one method at one budget.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetResult {
    /// The budget K.
    pub k: usize,
    /// Over all queries.
    pub overall: Metrics,
    /// Per query `type` (sorted by type name; an absent type is `""`).
    pub by_type: BTreeMap<String, Metrics>,
}

/// The results of one method.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MethodResult {
    /// Display name.
    pub name: String,
    /// The selector and its parameters.
    pub method: Method,
    /// One entry per budget, ascending K.
    pub budgets: Vec<BudgetResult>,
}

impl MethodResult {
    /// The result at budget `k`, if it was evaluated.
    pub fn at(&self, k: usize) -> Option<&BudgetResult> {
        self.budgets.iter().find(|b| b.k == k)
    }
}

/// One query's selections at the largest K.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuerySelection {
    /// The query id.
    pub id: String,
    /// Per method (in the order of [`EvalReport::methods`]): the selected
    /// memory ids in entry order.
    pub picks: Vec<Vec<usize>>,
}

/// The result of [`evaluate`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalReport {
    /// The budgets, ascending, distinct.
    pub ks: Vec<usize>,
    /// Number of queries.
    pub queries: usize,
    /// Number of queries per type (sorted by type name).
    pub types: BTreeMap<String, usize>,
    /// Where ρ came from.
    pub relevance: RelevanceMode,
    /// One entry per method, in the order given.
    pub methods: Vec<MethodResult>,
    /// One entry per query, in dataset order.
    pub selections: Vec<QuerySelection>,
}

/// Why [`evaluate`] failed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum EvalError {
    /// `ks` is empty.
    NoBudgets,
    /// Two methods share a display name.
    DuplicateName(String),
    /// A selector rejected a query's input.
    Select {
        /// 1-based line of the query in `queries.jsonl`.
        line: usize,
        /// The query id.
        query_id: String,
        /// The method's display name.
        method: String,
        /// The selector's error.
        error: Error,
        /// The memory id of the offending pool row, for
        /// [`Error::Candidate`].
        memory_id: Option<usize>,
    },
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::NoBudgets => f.write_str("no budget K given"),
            EvalError::DuplicateName(n) => write!(f, "two methods are named {n:?}"),
            EvalError::Select {
                line,
                query_id,
                method,
                error,
                memory_id,
            } => {
                write!(f, "query line {line} (id {query_id:?}), {method}: ")?;
                match (error, memory_id) {
                    (Error::Candidate { row, fault }, Some(id)) => {
                        write!(f, "pool position {row} (memory id {id}): {fault}")
                    }
                    _ => write!(f, "{error}"),
                }
            }
        }
    }
}

impl std::error::Error for EvalError {}

fn is_adaptive(method: &Method) -> bool {
    matches!(method, Method::Pursuit(o) if matches!(o.stopping, Stopping::Adaptive { .. }))
}

/// Runs every method on every query of `data` and scores the selections at
/// each budget in `options.ks` (see the module docs for the metrics and the
/// nesting rule). Deterministic: the same inputs give bit-identical results.
///
/// # Errors
/// [`EvalError::NoBudgets`] for empty `ks`, [`EvalError::DuplicateName`],
/// or [`EvalError::Select`] naming the query line, id, method and (for a bad
/// candidate row) the memory id when a selector rejects an input (e.g. a
/// zero or non-finite embedding, an invalid parameter).
pub fn evaluate(
    data: &Dataset,
    methods: &[NamedMethod],
    options: &EvalOptions,
) -> Result<EvalReport, EvalError> {
    let mut ks = options.ks.clone();
    ks.sort_unstable();
    ks.dedup();
    let Some(&k_max) = ks.last() else {
        return Err(EvalError::NoBudgets);
    };
    let mut names = HashSet::new();
    if let Some(m) = methods.iter().find(|m| !names.insert(m.name.as_str())) {
        return Err(EvalError::DuplicateName(m.name.clone()));
    }

    let mut types: BTreeMap<String, usize> = BTreeMap::new();
    for q in &data.queries {
        *types.entry(q.kind.clone()).or_default() += 1;
    }
    // acc[method][k index] = (overall, per type)
    let mut acc: Vec<Vec<(Acc, BTreeMap<&str, Acc>)>> =
        vec![vec![(Acc::default(), BTreeMap::new()); ks.len()]; methods.len()];
    let mut selections = Vec::with_capacity(data.queries.len());
    let mut selector = Selector::new();
    let mut pool_buf = Vec::new();
    let mut ids = Vec::new();

    for (qi, spec) in data.queries.iter().enumerate() {
        data.gather_pool(qi, &mut pool_buf);
        let relevance = match (options.relevance, &spec.relevance) {
            (RelevanceMode::Auto, Some(r)) => Relevance::Scores(r),
            (RelevanceMode::PoolOrder, _) => Relevance::PoolOrder,
            _ => Relevance::Similarity,
        };
        let input = Input::new(data.query_embedding(qi), &pool_buf).with_relevance(relevance);
        let mut picks_at_max = Vec::with_capacity(methods.len());
        for (mi, nm) in methods.iter().enumerate() {
            let mut run = |k: usize| {
                selector
                    .select(&input, k, &nm.method)
                    .map_err(|error| EvalError::Select {
                        line: qi + 1,
                        query_id: spec.id.clone(),
                        method: nm.name.clone(),
                        memory_id: match error {
                            Error::Candidate { row, .. } => spec.pool.get(row).copied(),
                            _ => None,
                        },
                        error,
                    })
            };
            let nested = !is_adaptive(&nm.method);
            let full = run(k_max)?;
            for (ki, &k) in ks.iter().enumerate() {
                let own;
                let sel_picks: &[usize] = if nested || k == k_max {
                    &full.picks[..k.min(full.picks.len())]
                } else {
                    own = run(k)?;
                    &own.picks
                };
                ids.clear();
                ids.extend(sel_picks.iter().map(|&p| spec.pool[p]));
                let score = score_query(spec, &ids);
                let (all, by_type) = &mut acc[mi][ki];
                all.add(&score, ids.len());
                by_type
                    .entry(spec.kind.as_str())
                    .or_default()
                    .add(&score, ids.len());
            }
            picks_at_max.push(full.picks.iter().map(|&p| spec.pool[p]).collect());
        }
        selections.push(QuerySelection {
            id: spec.id.clone(),
            picks: picks_at_max,
        });
    }

    let methods = methods
        .iter()
        .zip(acc)
        .map(|(nm, per_k)| MethodResult {
            name: nm.name.clone(),
            method: nm.method,
            budgets: ks
                .iter()
                .zip(per_k)
                .map(|(&k, (all, by_type))| BudgetResult {
                    k,
                    overall: all.metrics(),
                    by_type: by_type
                        .into_iter()
                        .map(|(t, a)| (t.to_string(), a.metrics()))
                        .collect(),
                })
                .collect(),
        })
        .collect();
    Ok(EvalReport {
        ks,
        queries: data.queries.len(),
        types,
        relevance: options.relevance,
        methods,
        selections,
    })
}

impl EvalReport {
    /// The report as JSON (every field of [`EvalReport`]; metrics are
    /// fractions in [0, 1]). JSON has no infinity: a pursuit ridge of
    /// `f64::INFINITY` (centroid pursuit) is written as the string `"inf"`.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        for (i, m) in self.methods.iter().enumerate() {
            if let Method::Pursuit(o) = m.method {
                if o.ridge == f64::INFINITY {
                    v["methods"][i]["method"]["Pursuit"]["ridge"] = "inf".into();
                }
            }
        }
        v
    }

    /// The metrics only, as JSON: `{ks, queries, types, relevance,
    /// methods}` without the per-query selections.
    pub fn metrics_json(&self) -> serde_json::Value {
        let mut v = self.to_json();
        if let Some(o) = v.as_object_mut() {
            o.remove("selections");
        }
        v
    }

    /// The selections as JSON Lines: one line per query,
    /// `{"id": <query id>, "picks": {<method name>: [memory ids at the
    /// largest K, entry order], ...}}`, each line ending in `\n`.
    pub fn selections_jsonl(&self) -> String {
        let mut out = String::new();
        for s in &self.selections {
            let picks: serde_json::Map<String, serde_json::Value> = self
                .methods
                .iter()
                .zip(&s.picks)
                .map(|(m, p)| (m.name.clone(), serde_json::json!(p)))
                .collect();
            let line = serde_json::json!({ "id": s.id, "picks": picks });
            out.push_str(&line.to_string());
            out.push('\n');
        }
        out
    }

    /// The fixed-width text table that `Display` prints: one row per method
    /// and K; columns recall / complete / groups in percent, over all
    /// queries and (when there are several types) per query type.
    pub fn table(&self) -> String {
        const COL: usize = 9;
        let type_names: Vec<&String> = if self.types.len() > 1 {
            self.types.keys().collect()
        } else {
            Vec::new()
        };
        let name_w = self
            .methods
            .iter()
            .map(|m| m.name.chars().count())
            .max()
            .unwrap_or(0)
            .max(6);
        let lead = name_w + 5;
        let block = 3 * COL;
        let mut out = String::new();
        // Header line 1: block titles.
        let mut h1 = " ".repeat(lead);
        let mut titles = vec![format!("all ({} queries)", self.queries)];
        for t in &type_names {
            let label = if t.is_empty() {
                "(no type)"
            } else {
                t.as_str()
            };
            titles.push(format!("{label} ({})", self.types[*t]));
        }
        for t in &titles {
            let _ = write!(h1, "{:>block$}", format!("{t} "));
        }
        out.push_str(h1.trim_end());
        out.push('\n');
        let mut h2 = format!("{:<name_w$} {:>3} ", "method", "K");
        for _ in &titles {
            let _ = write!(
                h2,
                "{:>COL$}{:>COL$}{:>COL$}",
                "recall", "complete", "groups"
            );
        }
        out.push_str(&h2);
        out.push('\n');
        out.push_str(&"-".repeat(h2.chars().count()));
        out.push('\n');
        for (mi, m) in self.methods.iter().enumerate() {
            if mi > 0 {
                out.push('\n');
            }
            for b in &m.budgets {
                let mut row = format!("{:<name_w$} {:>3} ", m.name, b.k);
                let mut cells = vec![b.overall];
                for t in &type_names {
                    cells.push(b.by_type.get(*t).copied().unwrap_or_default());
                }
                for c in cells {
                    let _ = write!(
                        row,
                        "{:>COL$.1}{:>COL$.1}{:>COL$.1}",
                        100.0 * c.evidence_recall,
                        100.0 * c.complete_coverage,
                        100.0 * c.group_coverage
                    );
                }
                out.push_str(&row);
                out.push('\n');
            }
        }
        out.push_str(
            "\nrecall = evidence recall (mean over queries of |gold ∩ picks| / |gold|); \
             complete = all gold picked;\ngroups = every gold group represented; all in percent.",
        );
        if self.relevance != RelevanceMode::Auto {
            let _ = write!(out, " Relevance: {:?}.", self.relevance);
        }
        out.push('\n');
        out
    }
}

impl fmt::Display for EvalReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.table())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(gold: Vec<usize>, groups: Vec<Vec<usize>>) -> QuerySpec {
        QuerySpec {
            id: "q".into(),
            text: String::new(),
            kind: String::new(),
            answer: None,
            pool: (0..10).collect(),
            gold,
            gold_groups: groups,
            relevance: None,
        }
    }

    #[test]
    fn scores_recall_complete_and_groups() {
        let s = spec(vec![1, 2, 5], vec![vec![1, 2], vec![5]]);
        let r = score_query(&s, &[2, 7, 9]);
        assert_eq!(r.gold_hits, 1);
        assert!((r.recall - 1.0 / 3.0).abs() < 1e-15);
        assert!(!r.complete && !r.groups_covered);
        let r = score_query(&s, &[5, 1]);
        assert!(!r.complete && r.groups_covered);
        let r = score_query(&s, &[5, 1, 2]);
        assert!(r.complete && r.groups_covered && r.recall == 1.0);
    }
}
