//! Evaluation of selectors on an evidence-selection [`Dataset`]: evidence
//! recall, complete coverage and group coverage at several budgets K,
//! overall and per query type, with paired-bootstrap confidence intervals
//! of each method minus top-K and the pools' own recall ceiling.
//!
//! For each query the pool's embeddings are gathered into a P × d matrix and
//! every method selects from it. The pool is the query's `pool`, or, with
//! [`EvalOptions::retrieve`] = Some(P), the top-P memories by cosine to the
//! query (restricted to the memories sharing the query's `scope`), found
//! with the crate's own top-K kernel. Nested selectors ([`Method::is_nested`]:
//! top-K, MMR, the pursuit with a fixed budget) run once per query at the
//! largest K and every smaller budget is scored on a prefix; the others
//! (adaptive stopping, [`Method::Recommended`], whose γ depends on K) run
//! once per budget.
//!
//! Metrics, per method and K (all in [0, 1]; Q = number of queries):
//! * **evidence recall** (macro): (1/Q) Σ_q |gold_q ∩ picks_q| / |gold_q|.
//!   Gold outside the pool counts as a miss; the pool's own ceiling (every
//!   pool member picked) is reported beside the table
//!   ([`EvalReport::ceiling`]);
//! * **complete coverage**: share of queries with every gold memory picked;
//! * **group coverage**: share of the queries *with gold groups* whose
//!   every gold group (`gold_groups`, e.g. each gold paragraph) has ≥ 1
//!   pick. A query without gold groups is left out of this share (it is
//!   neither covered nor missed; [`Metrics::group_queries`] counts the
//!   others).
//!
//! **Evidence units.** When memories list the evidence units they contain
//! ([`Memory::units`](crate::dataset::Memory::units), e.g. the sentences of
//! overlapping chunks) and queries list their gold units
//! ([`QuerySpec::gold_units`]), the memory-level measures above count two
//! chunks that share a gold sentence as two gold memories, so they reward
//! the repetition a composing reader avoids. The unit measures count what
//! the picks contain:
//! * **unit recall** (macro, over the queries with gold units):
//!   (1/Q_u) Σ_q |gold units_q ∩ ∪_{m ∈ picks_q} units_m| / |gold units_q|;
//! * **unit complete coverage**: share of those queries with every gold unit
//!   inside the picks;
//! * **repeated picks**: mean number of picks per query that share a unit
//!   with an earlier pick (in entry order): the budget spent on repetition.
//!
//! Group coverage (every gold group represented) is already a unit-level
//! measure when each group lists the memories holding its gold units (as
//! in the overlap fixtures), so it is reported as before.
//!
//! **Halves** ([`EvalOptions::half`]): the queries at even or odd positions
//! of the dataset (0-based), to choose a setting on one half and report the
//! other.
//!
//! **Budgets in tokens** ([`EvalOptions::tokens`]): a prompt is budgeted in
//! tokens, not in memories. With [`TokenCosts`] (each memory's token count,
//! e.g. [`TokenCosts::whitespace_words`]: the whitespace-separated words of
//! its text in `memories.jsonl`), the budgets are token budgets C: every
//! method selects from the pool with no count cap (K = P) and the cost
//! budget C (the core's `CostBudget`: a pick that no longer fits is
//! skipped, the selection ends when nothing fits), so all methods are
//! compared at equal cost. Such selections are not nested, so each method
//! runs once per budget; [`Metrics::mean_selected`] and
//! [`Metrics::mean_cost`] report how many memories and tokens were used.
//!
//! Uncertainty: for every method and K, a paired bootstrap over queries
//! ([`Bootstrap`]; 2,000 resamples, seed 0 by default) gives a 95 %
//! percentile interval of the method's recall and of its recall minus the
//! recall of the first top-K method in the list (the same resampled query
//! sets for every method and K, so the differences are paired); likewise
//! for group coverage minus top-K's, and, with units, for unit recall and
//! unit recall minus top-K's. The
//! generator is ChaCha8 (`rand::rngs::ChaCha8Rng`), seeded with
//! [`Bootstrap::seed`]: the same seed gives the same intervals on every
//! platform.
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

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::{self, Write as _};

use rand::rngs::ChaCha8Rng;
use rand::{RngExt as _, SeedableRng as _};
use serde::Serialize;

use crate::copies::{inject_copies, CopyOptions};
#[cfg(doc)]
use crate::dataset::Memory;
use crate::dataset::{gather_rows, Dataset, QuerySpec};
use mempursuit::{
    Error, Input, InputPolicy, Method, Relevance, SelectSpec, Selector, SpecError, Storage,
};

/// Each memory's cost in tokens, for budgets in tokens
/// ([`EvalOptions::tokens`]), and the tokenizer that counted them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TokenCosts {
    /// How the tokens were counted, as the report states it.
    pub tokenizer: String,
    /// The token count of memory id i (one per memory embedding row).
    #[serde(skip)]
    pub per_memory: Vec<u32>,
}

impl TokenCosts {
    /// The tokenizer of [`TokenCosts::whitespace_words`].
    pub const WHITESPACE_WORDS: &'static str = "whitespace-separated words of each memory's text";

    /// Token counts as the whitespace-separated words of each memory's
    /// `text` (`str::split_whitespace`; for the HotpotQA fixture the text
    /// is `"<title>: <sentence>"`, exactly what would enter a prompt).
    /// Subword tokenizers count more tokens per word (about 1.3 for English
    /// with GPT-style BPE), but every method is charged alike.
    ///
    /// # Errors
    /// [`EvalError::NoTexts`] when the dataset has no `memories.jsonl` or a
    /// memory id has no text.
    pub fn whitespace_words(data: &Dataset) -> Result<Self, EvalError> {
        let per_memory = (0..data.memory_embeddings.rows)
            .map(|id| {
                data.memory_text(id)
                    .map(|t| u32::try_from(t.split_whitespace().count()).unwrap_or(u32::MAX))
                    .ok_or(EvalError::NoTexts { memory_id: id })
            })
            .collect::<Result<_, _>>()?;
        Ok(TokenCosts {
            tokenizer: Self::WHITESPACE_WORDS.to_owned(),
            per_memory,
        })
    }
}

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

    /// The selector of `spec`, named by its text form (`topk`,
    /// `recommended`, `mmr,mmr_lambda=0.3`, `centroid,gamma=0.2`: the name
    /// the command line reads back with `--method`).
    ///
    /// ```
    /// use mempursuit_cli::eval::NamedMethod;
    /// use mempursuit_cli::mempursuit::SelectSpec;
    ///
    /// let m = NamedMethod::from_spec(&"centroid,gamma=0.2".parse()?)?;
    /// assert_eq!(m.name, "centroid,gamma=0.2");
    /// assert_eq!(NamedMethod::from_spec(&SelectSpec::default())?.name, "recommended");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// The specification's own error ([`SelectSpec::method`]), and
    /// [`SpecError::Conflict`] for the options that [`evaluate`] takes from
    /// elsewhere: `raw_relevance` and `pool_order` (the relevance of every
    /// method is [`EvalOptions::relevance`]), `cost_budget` (budgets in
    /// tokens are [`EvalOptions::tokens`]) and a storage other than f32
    /// (the evaluation reads the f32 embeddings).
    pub fn from_spec(spec: &SelectSpec) -> Result<Self, SpecError> {
        if spec.raw_relevance() || spec.pool_order() {
            return Err(SpecError::Conflict {
                message: "the evaluation takes the relevance of every method from its own \
                          option (eval --relevance raw or pool-order), not from raw_relevance \
                          or pool_order"
                    .to_owned(),
            });
        }
        if spec.cost_budget().is_some() {
            return Err(SpecError::Conflict {
                message: "the evaluation takes its budgets in tokens from its own option \
                          (eval --token-budget, costs from the texts), not from cost_budget"
                    .to_owned(),
            });
        }
        if spec.storage() != Storage::F32 {
            return Err(SpecError::Conflict {
                message: "the evaluation runs on the f32 embeddings; leave storage out \
                          (mempursuit bench --storage times the others)"
                    .to_owned(),
            });
        }
        Ok(NamedMethod::new(spec.to_string(), spec.method()?))
    }
}

/// Where each query's relevance ρ comes from (see [`Relevance`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum RelevanceMode {
    /// Unit-free: the query's `relevance` scores, when its spec has them,
    /// used through their order on the pool's cosine scale
    /// ([`Relevance::RankedScores`]); otherwise ρ = b, the cosine to the
    /// query.
    #[default]
    Auto,
    /// The query's `relevance` scores as given ([`Relevance::Scores`], raw
    /// units: γ is then in the scores' units), otherwise ρ = b.
    Raw,
    /// Always ρ = b ([`Relevance::Similarity`]), ignoring spec scores.
    Similarity,
    /// Treat every pool as given in first-stage order
    /// ([`Relevance::PoolOrder`]), ignoring spec scores.
    PoolOrder,
}

/// The paired bootstrap of [`evaluate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Bootstrap {
    /// Number of resamples of the query set (0 turns the intervals off).
    pub resamples: usize,
    /// Seed of the ChaCha8 generator.
    pub seed: u64,
}

impl Default for Bootstrap {
    /// 2,000 resamples, seed 0.
    fn default() -> Self {
        Bootstrap {
            resamples: 2000,
            seed: 0,
        }
    }
}

/// A half of the queries, by their 0-based position in the dataset
/// ([`EvalOptions::half`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Half {
    /// Positions 0, 2, 4, …
    Even,
    /// Positions 1, 3, 5, …
    Odd,
}

impl Half {
    /// Whether the query at 0-based position `index` is in this half.
    pub fn keeps(self, index: usize) -> bool {
        index.is_multiple_of(2) == (self == Half::Even)
    }
}

/// Options of [`evaluate`].
#[derive(Debug, Clone, PartialEq)]
pub struct EvalOptions {
    /// The budgets K to score (sorted and de-duplicated by [`evaluate`]).
    pub ks: Vec<usize>,
    /// Where ρ comes from.
    pub relevance: RelevanceMode,
    /// `Some(P)`: build each query's pool from the top-P memories by cosine
    /// to the query (ties to the lower memory id), among the memories whose
    /// `scope` equals the query's `scope` (all memories when the query has
    /// none). The spec's `pool` and `relevance` are then ignored and
    /// ρ = b. `None`: use the spec's pools.
    pub retrieve: Option<usize>,
    /// Confidence intervals.
    pub bootstrap: Bootstrap,
    /// `Some`: inject near-copies into every pool before selecting (see
    /// [`crate::copies`]); [`robustness`] compares against the clean pools.
    pub copies: Option<CopyOptions>,
    /// `Some`: `ks` are budgets in tokens C, with these token counts; every
    /// method selects with K = P and the cost budget C (module docs).
    /// `None`: `ks` are budgets K in memories.
    pub tokens: Option<TokenCosts>,
    /// `Some`: evaluate only the queries of this half (by 0-based position
    /// in the dataset; copies are still seeded by that position, so a
    /// query's pool is the same as in a run on all queries). `None`: all.
    pub half: Option<Half>,
}

impl EvalOptions {
    /// Budgets `ks` (in memories) with [`RelevanceMode::Auto`], the spec's
    /// pools and the default [`Bootstrap`].
    pub fn new(ks: Vec<usize>) -> Self {
        EvalOptions {
            ks,
            relevance: RelevanceMode::Auto,
            retrieve: None,
            bootstrap: Bootstrap::default(),
            copies: None,
            tokens: None,
            half: None,
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
    /// Share of the queries with gold groups whose every gold group is
    /// represented (0 when no query has gold groups).
    pub group_coverage: f64,
    /// Number of queries with at least one gold group (the denominator of
    /// `group_coverage`).
    pub group_queries: usize,
    /// Mean number of memories selected (below K only for pools smaller
    /// than K or adaptive stopping; with budgets in tokens, as many as fit).
    pub mean_selected: f64,
    /// Mean tokens of the selected memories, with budgets in tokens
    /// ([`EvalOptions::tokens`]); `None` otherwise.
    pub mean_cost: Option<f64>,
    /// Unit recall: mean over the queries with gold units of the share of
    /// their gold units inside the picks (module docs); `None` when no
    /// query has gold units.
    pub unit_recall: Option<f64>,
    /// Share of the queries with gold units whose every gold unit is inside
    /// the picks; `None` when no query has gold units.
    pub unit_complete_coverage: Option<f64>,
    /// Number of queries with gold units (the denominator of the two
    /// above).
    pub unit_queries: usize,
    /// Mean number of picks per query that share a unit with an earlier
    /// pick; `None` when no query has gold units.
    pub mean_repeated: Option<f64>,
}

/// Running sums behind a [`Metrics`].
#[derive(Debug, Clone, Copy, Default)]
struct Acc {
    n: usize,
    recall: f64,
    complete: usize,
    groups: usize,
    group_queries: usize,
    selected: usize,
    /// Σ tokens of the picks, with budgets in tokens.
    cost: Option<f64>,
    unit_n: usize,
    unit_recall: f64,
    unit_complete: usize,
    repeated: usize,
}

impl Acc {
    fn add_cost(&mut self, cost: f64) {
        *self.cost.get_or_insert(0.0) += cost;
    }

    fn add(&mut self, s: &QueryScore, selected: usize) {
        self.n += 1;
        self.recall += s.recall;
        self.complete += usize::from(s.complete);
        if let Some(covered) = s.groups_covered {
            self.group_queries += 1;
            self.groups += usize::from(covered);
        }
        self.selected += selected;
        if let Some(r) = s.unit_recall {
            self.unit_n += 1;
            self.unit_recall += r;
            self.unit_complete += usize::from(s.units_complete == Some(true));
            self.repeated += s.repeated;
        }
    }

    fn metrics(&self) -> Metrics {
        let n = self.n.max(1) as f64;
        Metrics {
            queries: self.n,
            evidence_recall: self.recall / n,
            complete_coverage: self.complete as f64 / n,
            group_coverage: self.groups as f64 / self.group_queries.max(1) as f64,
            group_queries: self.group_queries,
            mean_selected: self.selected as f64 / n,
            mean_cost: self.cost.map(|c| c / n),
            unit_recall: (self.unit_n > 0).then(|| self.unit_recall / self.unit_n as f64),
            unit_complete_coverage: (self.unit_n > 0)
                .then(|| self.unit_complete as f64 / self.unit_n as f64),
            unit_queries: self.unit_n,
            mean_repeated: (self.unit_n > 0).then(|| self.repeated as f64 / self.unit_n as f64),
        }
    }
}

/// The score of one query's selection.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct QueryScore {
    /// Number of gold memories picked.
    pub gold_hits: usize,
    /// |gold ∩ picks| / |gold| (0 for a query without gold).
    pub recall: f64,
    /// Every gold memory picked.
    pub complete: bool,
    /// Every gold group has a picked member; `None` for a query without
    /// gold groups (left out of group coverage).
    pub groups_covered: Option<bool>,
    /// The share of the query's gold units inside the picks; `None`
    /// without gold units ([`score_selection`] only).
    pub unit_recall: Option<f64>,
    /// Every gold unit inside the picks; `None` without gold units.
    pub units_complete: Option<bool>,
    /// Picks that share a unit with an earlier pick (0 without units).
    pub repeated: usize,
}

/// Scores the selected memory ids `picked` (memory ids, not pool positions)
/// against `spec`'s gold evidence. Gold the picks cannot contain (outside
/// the pool) simply counts as missed.
pub fn score_query(spec: &QuerySpec, picked: &[usize]) -> QueryScore {
    let set: HashSet<usize> = picked.iter().copied().collect();
    let gold_hits = spec.gold.iter().filter(|g| set.contains(g)).count();
    let gold = spec.gold.len().max(1);
    QueryScore {
        gold_hits,
        recall: gold_hits as f64 / gold as f64,
        complete: gold_hits == spec.gold.len(),
        groups_covered: (!spec.gold_groups.is_empty()).then(|| {
            spec.gold_groups
                .iter()
                .all(|g| g.iter().any(|id| set.contains(id)))
        }),
        unit_recall: None,
        units_complete: None,
        repeated: 0,
    }
}

/// [`score_query`] plus the unit measures: with the query's
/// [`QuerySpec::gold_units`] and the units each picked memory contains
/// ([`Dataset::memory_units`]), the unit recall, whether every gold unit is
/// covered, and how many picks (in the order of `picked`) share a unit with
/// an earlier pick. A query without gold units scores as in
/// [`score_query`].
pub fn score_selection(data: &Dataset, spec: &QuerySpec, picked: &[usize]) -> QueryScore {
    let mut score = score_query(spec, picked);
    let Some(gold_units) = &spec.gold_units else {
        return score;
    };
    let mut seen: HashSet<usize> = HashSet::new();
    let mut repeated = 0;
    for &id in picked {
        let units = data.memory_units(id);
        if units.iter().any(|u| seen.contains(u)) {
            repeated += 1;
        }
        seen.extend(units.iter().copied());
    }
    let hits = gold_units.iter().filter(|u| seen.contains(u)).count();
    score.unit_recall = Some(hits as f64 / gold_units.len().max(1) as f64);
    score.units_complete = Some(hits == gold_units.len());
    score.repeated = repeated;
    score
}

/// A 95 % paired-bootstrap percentile interval of a mean (fractions).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    /// The mean over the queries.
    pub mean: f64,
    /// 2.5th percentile of the resampled means.
    pub lo: f64,
    /// 97.5th percentile of the resampled means.
    pub hi: f64,
}

/// The metrics of one method at one budget.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetResult {
    /// The budget: K memories, or C tokens with [`EvalReport::tokenizer`].
    pub k: usize,
    /// Over all queries.
    pub overall: Metrics,
    /// Per query `type` (sorted by type name; an absent type is `""`).
    pub by_type: BTreeMap<String, Metrics>,
    /// Bootstrap interval of the evidence recall (`None` with 0 resamples).
    pub recall_ci: Option<Interval>,
    /// Bootstrap interval of this method's recall minus the baseline's
    /// (the first top-K method; `None` for the baseline itself, without a
    /// top-K method, or with 0 resamples).
    pub delta_vs_topk: Option<Interval>,
    /// Bootstrap interval of the group coverage minus the baseline's (as
    /// `delta_vs_topk`; `None` also when no query has gold groups).
    pub delta_groups_vs_topk: Option<Interval>,
    /// Bootstrap interval of the unit recall (`None` without gold units or
    /// with 0 resamples).
    pub unit_recall_ci: Option<Interval>,
    /// Bootstrap interval of the unit recall minus the baseline's (as
    /// `delta_vs_topk`; `None` also without gold units).
    pub delta_units_vs_topk: Option<Interval>,
    /// Per-query evidence recall, in dataset order.
    #[serde(skip)]
    pub per_query_recall: Vec<f64>,
    /// Per-query group coverage (1 or 0) of the queries with gold groups,
    /// in dataset order.
    #[serde(skip)]
    pub per_query_groups: Vec<f64>,
    /// Per-query unit recall of the queries with gold units, in dataset
    /// order.
    #[serde(skip)]
    pub per_query_units: Vec<f64>,
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
    /// The budgets, ascending, distinct: K in memories, or C in tokens when
    /// [`EvalReport::tokenizer`] is set.
    pub ks: Vec<usize>,
    /// With budgets in tokens: how the tokens were counted
    /// ([`TokenCosts::tokenizer`]).
    pub tokenizer: Option<String>,
    /// Number of queries.
    pub queries: usize,
    /// Number of queries per type (sorted by type name).
    pub types: BTreeMap<String, usize>,
    /// Where ρ came from.
    pub relevance: RelevanceMode,
    /// The retrieval depth P when the pools were built by retrieval.
    pub retrieve: Option<usize>,
    /// The bootstrap behind the intervals.
    pub bootstrap: Bootstrap,
    /// The near-copies injected into the pools, if any.
    pub copies: Option<CopyOptions>,
    /// The half of the queries evaluated, if not all.
    pub half: Option<Half>,
    /// The pools' own ceiling: the metrics of picking every pool member
    /// (evidence recall = share of gold in the pool).
    pub ceiling: Metrics,
    /// Mean pool size.
    pub mean_pool: f64,
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
    /// [`EvalOptions::retrieve`] is `Some(0)`.
    ZeroRetrieve,
    /// [`EvalOptions::copies`] has an invalid target cosine (the message
    /// says which).
    Copies(String),
    /// A query has a `scope` but the dataset has no `memories.jsonl` to
    /// give the memories' scopes.
    ScopeWithoutMemories {
        /// 1-based line of the query.
        line: usize,
    },
    /// Budgets in tokens need each memory's text: the dataset has no
    /// `memories.jsonl`, or it lacks this memory id.
    NoTexts {
        /// The first memory id without a text.
        memory_id: usize,
    },
    /// [`TokenCosts::per_memory`] does not hold one count per memory.
    TokenCostLength {
        /// The number of memory embeddings.
        expected: usize,
        /// The number of counts.
        found: usize,
    },
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
            EvalError::ZeroRetrieve => f.write_str("retrieve depth P must be at least 1"),
            EvalError::Copies(m) => f.write_str(m),
            EvalError::ScopeWithoutMemories { line } => write!(
                f,
                "query line {line} has a scope, but no memories.jsonl gives the memories' scopes"
            ),
            EvalError::NoTexts { memory_id } => write!(
                f,
                "budgets in tokens count the words of each memory's text, but memory id \
                 {memory_id} has none: give the dataset's memories.jsonl (--dir with the file, \
                 or --memory-texts)"
            ),
            EvalError::TokenCostLength { expected, found } => write!(
                f,
                "{found} token counts for {expected} memories: give one per memory"
            ),
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

/// Running sums of one method at one budget: overall, per type, and the
/// per-query recall, group coverage and unit recall.
#[derive(Debug, Clone, Default)]
struct PerBudget<'a> {
    all: Acc,
    by_type: BTreeMap<&'a str, Acc>,
    recall: Vec<f64>,
    groups: Vec<f64>,
    units: Vec<f64>,
}

/// Builds pools by retrieval: the top-P memories by cosine to each query,
/// within the query's scope.
struct Retriever<'d> {
    data: &'d Dataset,
    depth: usize,
    /// Per scope (None = every memory): the memory ids and their rows.
    scopes: HashMap<Option<String>, (Vec<usize>, Vec<f32>)>,
    selector: Selector,
}

impl<'d> Retriever<'d> {
    fn new(data: &'d Dataset, depth: usize) -> Result<Self, EvalError> {
        let mut wanted: HashSet<Option<String>> = HashSet::new();
        for (i, q) in data.queries.iter().enumerate() {
            if q.scope.is_some() && data.memories.is_none() {
                return Err(EvalError::ScopeWithoutMemories { line: i + 1 });
            }
            wanted.insert(q.scope.clone());
        }
        let mut scopes = HashMap::new();
        for scope in wanted {
            let ids: Vec<usize> = match (&scope, &data.memories) {
                (None, _) => (0..data.memory_embeddings.rows).collect(),
                (Some(s), Some(mems)) => mems
                    .iter()
                    .filter(|m| m.scope.as_deref() == Some(s.as_str()))
                    .map(|m| m.id)
                    .collect(),
                (Some(_), None) => Vec::new(),
            };
            let mut rows = Vec::new();
            gather_rows(&data.memory_embeddings, &ids, &mut rows);
            scopes.insert(scope, (ids, rows));
        }
        Ok(Retriever {
            data,
            depth,
            scopes,
            selector: Selector::new(),
        })
    }

    /// The pool of query `qi` (memory ids, by decreasing cosine).
    fn pool(&mut self, qi: usize) -> Result<Vec<usize>, EvalError> {
        let spec = &self.data.queries[qi];
        let (ids, rows) = &self.scopes[&spec.scope];
        let input = Input::new(self.data.query_embedding(qi), rows);
        let sel = self
            .selector
            .select(&input, self.depth, &Method::TopK(InputPolicy::default()))
            .map_err(|error| EvalError::Select {
                line: qi + 1,
                query_id: spec.id.clone(),
                method: "retrieval (top-P by cosine)".into(),
                memory_id: match error {
                    Error::Candidate { row, .. } => ids.get(row).copied(),
                    _ => None,
                },
                error,
            })?;
        Ok(sel.picks.iter().map(|&p| ids[p]).collect())
    }
}

/// 95 % percentile interval of the mean of `values` under `resamples`
/// bootstrap resamples of `indices` drawn by `rng`'s stream from `seed`.
fn bootstrap_interval(values: &[f64], boot: &Bootstrap) -> Option<Interval> {
    let n = values.len();
    if boot.resamples == 0 || n == 0 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let mut rng = ChaCha8Rng::seed_from_u64(boot.seed);
    let mut means: Vec<f64> = (0..boot.resamples)
        .map(|_| (0..n).map(|_| values[rng.random_range(0..n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let at = |p: f64| means[((p * boot.resamples as f64).floor() as usize).min(boot.resamples - 1)];
    Some(Interval {
        mean,
        lo: at(0.025),
        hi: at(0.975),
    })
}

/// The paired-bootstrap 95 % interval of mean(a − b) over queries (both
/// in dataset order), as [`evaluate`] computes it for its deltas.
pub fn paired_interval(a: &[f64], b: &[f64], boot: &Bootstrap) -> Option<Interval> {
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    bootstrap_interval(&diffs, boot)
}

/// Runs every method on every query of `data` and scores the selections at
/// each budget in `options.ks` (see the module docs for the metrics, the
/// nesting rule and the intervals). Deterministic: the same inputs give
/// bit-identical results.
///
/// # Errors
/// [`EvalError::NoBudgets`] for empty `ks`, [`EvalError::DuplicateName`],
/// [`EvalError::ZeroRetrieve`], [`EvalError::ScopeWithoutMemories`], or
/// [`EvalError::Select`] naming the query line, id, method and (for a bad
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
    if let Some(c) = &options.copies {
        c.validate().map_err(EvalError::Copies)?;
    }
    let mut retriever = match options.retrieve {
        Some(0) => return Err(EvalError::ZeroRetrieve),
        Some(p) => Some(Retriever::new(data, p)?),
        None => None,
    };
    let tokens = options.tokens.as_ref();
    if let Some(t) = tokens {
        if t.per_memory.len() != data.memory_embeddings.rows {
            return Err(EvalError::TokenCostLength {
                expected: data.memory_embeddings.rows,
                found: t.per_memory.len(),
            });
        }
    }

    let kept = |qi: usize| options.half.is_none_or(|h| h.keeps(qi));
    let mut types: BTreeMap<String, usize> = BTreeMap::new();
    for (_, q) in data.queries.iter().enumerate().filter(|(qi, _)| kept(*qi)) {
        *types.entry(q.kind.clone()).or_default() += 1;
    }
    let nq = types.values().sum::<usize>();
    // acc[method][k index]
    let mut acc: Vec<Vec<PerBudget<'_>>> =
        vec![vec![PerBudget::default(); ks.len()]; methods.len()];
    let mut ceiling = Acc::default();
    let mut pool_total = 0usize;
    let mut selections = Vec::with_capacity(nq);
    let mut selector = Selector::new();
    let mut pool_buf = Vec::new();
    let mut pool_costs: Vec<f32> = Vec::new();
    let mut ids = Vec::new();

    for (qi, spec) in data.queries.iter().enumerate() {
        if !kept(qi) {
            continue;
        }
        let retrieved;
        let pool: &[usize] = match &mut retriever {
            Some(r) => {
                retrieved = r.pool(qi)?;
                &retrieved
            }
            None => &spec.pool,
        };
        gather_rows(&data.memory_embeddings, pool, &mut pool_buf);
        let scores = spec.relevance.as_deref().filter(|_| retriever.is_none());
        let injected;
        let (pool, pool_buf, scores): (&[usize], &[f32], Option<&[f32]>) = match &options.copies {
            Some(c) => {
                let q = data.query_embedding(qi);
                injected = inject_copies(q, &pool_buf, pool, scores, c, qi);
                (&injected.ids, &injected.rows, injected.scores.as_deref())
            }
            None => (pool, &pool_buf, scores),
        };
        pool_total += pool.len();
        ceiling.add(&score_selection(data, spec, pool), pool.len());
        let relevance = match (options.relevance, scores) {
            (RelevanceMode::Auto, Some(r)) => Relevance::RankedScores(r),
            (RelevanceMode::Raw, Some(r)) => Relevance::Scores(r),
            (RelevanceMode::PoolOrder, _) => Relevance::PoolOrder,
            _ => Relevance::Similarity,
        };
        let input = Input::new(data.query_embedding(qi), pool_buf).with_relevance(relevance);
        pool_costs.clear();
        if let Some(t) = tokens {
            pool_costs.extend(pool.iter().map(|&id| t.per_memory[id] as f32));
        }
        let pool_costs = &pool_costs[..];
        let mut picks_at_max = Vec::with_capacity(methods.len());
        for (mi, nm) in methods.iter().enumerate() {
            // Budget `k`: K memories, or with token costs C = k tokens and
            // no count cap (K = P).
            let mut run = |k: usize| {
                let (input, k) = match tokens {
                    Some(_) => (input.with_costs(pool_costs, k as f64), pool.len()),
                    None => (input, k),
                };
                selector
                    .select(&input, k, &nm.method)
                    .map_err(|error| EvalError::Select {
                        line: qi + 1,
                        query_id: spec.id.clone(),
                        method: nm.name.clone(),
                        memory_id: match error {
                            Error::Candidate { row, .. } => pool.get(row).copied(),
                            _ => None,
                        },
                        error,
                    })
            };
            // Selections under a cost budget are not nested.
            let nested = nm.method.is_nested() && tokens.is_none();
            let full = run(k_max)?;
            for (ki, &k) in ks.iter().enumerate() {
                let own;
                let sel_picks: &[usize] = if tokens.is_some() && k == k_max {
                    &full.picks
                } else if nested || k == k_max {
                    &full.picks[..k.min(full.picks.len())]
                } else {
                    own = run(k)?;
                    &own.picks
                };
                ids.clear();
                ids.extend(sel_picks.iter().map(|&p| pool[p]));
                let score = score_selection(data, spec, &ids);
                let cell = &mut acc[mi][ki];
                cell.all.add(&score, ids.len());
                let typed = cell.by_type.entry(spec.kind.as_str()).or_default();
                typed.add(&score, ids.len());
                if tokens.is_some() {
                    let cost: f64 = sel_picks.iter().map(|&p| f64::from(pool_costs[p])).sum();
                    cell.all.add_cost(cost);
                    typed.add_cost(cost);
                }
                cell.recall.push(score.recall);
                if let Some(g) = score.groups_covered {
                    cell.groups.push(f64::from(u8::from(g)));
                }
                if let Some(u) = score.unit_recall {
                    cell.units.push(u);
                }
            }
            picks_at_max.push(full.picks.iter().map(|&p| pool[p]).collect());
        }
        selections.push(QuerySelection {
            id: spec.id.clone(),
            picks: picks_at_max,
        });
    }

    let baseline = methods
        .iter()
        .position(|m| matches!(m.method, Method::TopK(_)));
    let base: Vec<PerBudget<'_>> = baseline.map(|b| acc[b].clone()).unwrap_or_default();
    let boot = options.bootstrap;
    let methods = methods
        .iter()
        .zip(acc)
        .enumerate()
        .map(|(mi, (nm, per_k))| MethodResult {
            name: nm.name.clone(),
            method: nm.method,
            budgets: ks
                .iter()
                .zip(per_k)
                .enumerate()
                .map(|(ki, (&k, cell))| {
                    let vs_base = |own: &[f64], theirs: Option<&[f64]>| match (baseline, theirs) {
                        (Some(b), Some(t)) if b != mi && !own.is_empty() => {
                            paired_interval(own, t, &boot)
                        }
                        _ => None,
                    };
                    let other = base.get(ki);
                    BudgetResult {
                        k,
                        overall: cell.all.metrics(),
                        by_type: cell
                            .by_type
                            .iter()
                            .map(|(t, a)| ((*t).to_string(), a.metrics()))
                            .collect(),
                        recall_ci: bootstrap_interval(&cell.recall, &boot),
                        delta_vs_topk: vs_base(&cell.recall, other.map(|c| &c.recall[..])),
                        delta_groups_vs_topk: vs_base(&cell.groups, other.map(|c| &c.groups[..])),
                        unit_recall_ci: bootstrap_interval(&cell.units, &boot),
                        delta_units_vs_topk: vs_base(&cell.units, other.map(|c| &c.units[..])),
                        per_query_recall: cell.recall,
                        per_query_groups: cell.groups,
                        per_query_units: cell.units,
                    }
                })
                .collect(),
        })
        .collect();
    Ok(EvalReport {
        ks,
        tokenizer: tokens.map(|t| t.tokenizer.clone()),
        queries: nq,
        types,
        relevance: options.relevance,
        retrieve: options.retrieve,
        bootstrap: boot,
        copies: options.copies,
        half: options.half,
        ceiling: ceiling.metrics(),
        mean_pool: pool_total as f64 / nq.max(1) as f64,
        methods,
        selections,
    })
}

/// The drop of one method at one budget from the clean pools to the pools
/// with near-copies (recall with copies minus clean recall, paired over
/// queries).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CopyDrop {
    /// The budget K.
    pub k: usize,
    /// Evidence recall on the clean pools.
    pub clean: f64,
    /// Evidence recall on the pools with near-copies.
    pub with_copies: f64,
    /// Paired-bootstrap 95 % interval of (with copies − clean); `mean` is the
    /// drop itself (negative: recall lost). `None` with 0 resamples.
    pub delta: Option<Interval>,
    /// Unit recall on the clean pools and with near-copies (a copy
    /// contains its original's units), with the paired interval of the
    /// drop; `None` without gold units.
    pub units: Option<UnitDrop>,
}

/// The unit-recall part of a [`CopyDrop`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnitDrop {
    /// Unit recall on the clean pools.
    pub clean: f64,
    /// Unit recall on the pools with near-copies.
    pub with_copies: f64,
    /// Paired-bootstrap 95 % interval of (with copies − clean); `None` with
    /// 0 resamples.
    pub delta: Option<Interval>,
}

/// The result of [`robustness`]: the clean evaluation, one evaluation per
/// target copy cosine, and each method's drop.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RobustnessReport {
    /// The evaluation on the clean pools.
    pub clean: EvalReport,
    /// One evaluation per copy cosine, in the order given.
    pub with_copies: Vec<EvalReport>,
    /// `drops[c][m]`: copy cosine c (as in `with_copies`), method m (as in
    /// the clean report), one [`CopyDrop`] per budget, ascending K.
    pub drops: Vec<Vec<Vec<CopyDrop>>>,
}

/// Evaluates `methods` on the clean pools and on the pools with near-copies
/// injected at each cosine of `cosines` (the other parameters from
/// `copies`: members, copies per member, seed; see [`crate::copies`]), and
/// each method's drop from its clean recall with a paired-bootstrap 95 %
/// interval over queries (the same resamples as [`evaluate`]'s). The
/// copies' seed is the same at every cosine, so the copies lie along the
/// same noise directions and only their distance changes. `options.copies`
/// is ignored.
///
/// ```
/// use mempursuit_cli::copies::CopyOptions;
/// use mempursuit_cli::dataset::Dataset;
/// use mempursuit_cli::eval::{robustness, EvalOptions, NamedMethod};
/// use mempursuit_cli::mempursuit::{InputPolicy, Method};
///
/// let data = Dataset::load_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/data/hotpotqa-mini"))?;
/// let methods = [NamedMethod::new("top-K", Method::TopK(InputPolicy::default()))];
/// let r = robustness(&data, &methods, &EvalOptions::new(vec![3]), &[1.0], CopyOptions::new(1.0))?;
/// // Exact copies of the top 3 take two of top-K's three slots.
/// assert!(r.drops[0][0][0].with_copies < r.drops[0][0][0].clean);
/// println!("{r}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// As [`evaluate`]; [`EvalError::Copies`] for a cosine outside (0, 1].
pub fn robustness(
    data: &Dataset,
    methods: &[NamedMethod],
    options: &EvalOptions,
    cosines: &[f64],
    copies: CopyOptions,
) -> Result<RobustnessReport, EvalError> {
    for &cosine in cosines {
        CopyOptions { cosine, ..copies }
            .validate()
            .map_err(EvalError::Copies)?;
    }
    let clean = evaluate(
        data,
        methods,
        &EvalOptions {
            copies: None,
            ..options.clone()
        },
    )?;
    let mut with_copies = Vec::with_capacity(cosines.len());
    let mut drops = Vec::with_capacity(cosines.len());
    for &cosine in cosines {
        let opts = EvalOptions {
            copies: Some(CopyOptions { cosine, ..copies }),
            ..options.clone()
        };
        let report = evaluate(data, methods, &opts)?;
        drops.push(
            clean
                .methods
                .iter()
                .zip(&report.methods)
                .map(|(c, r)| {
                    c.budgets
                        .iter()
                        .zip(&r.budgets)
                        .map(|(cb, rb)| CopyDrop {
                            k: cb.k,
                            clean: cb.overall.evidence_recall,
                            with_copies: rb.overall.evidence_recall,
                            delta: paired_interval(
                                &rb.per_query_recall,
                                &cb.per_query_recall,
                                &clean.bootstrap,
                            ),
                            units: match (cb.overall.unit_recall, rb.overall.unit_recall) {
                                (Some(c), Some(w)) => Some(UnitDrop {
                                    clean: c,
                                    with_copies: w,
                                    delta: paired_interval(
                                        &rb.per_query_units,
                                        &cb.per_query_units,
                                        &clean.bootstrap,
                                    ),
                                }),
                                _ => None,
                            },
                        })
                        .collect()
                })
                .collect(),
        );
        with_copies.push(report);
    }
    Ok(RobustnessReport {
        clean,
        with_copies,
        drops,
    })
}

impl RobustnessReport {
    /// The fixed-width text table that `Display` prints: per method and K,
    /// the clean evidence recall, then per copy cosine the recall with
    /// copies and the drop with its 95 % interval, in percent / points.
    pub fn table(&self) -> String {
        let name_w = self
            .clean
            .methods
            .iter()
            .map(|m| m.name.chars().count())
            .max()
            .unwrap_or(0)
            .max(6);
        let cos: Vec<f64> = self
            .with_copies
            .iter()
            .filter_map(|r| r.copies.map(|c| c.cosine))
            .collect();
        const CELL: usize = 30;
        let mut out = String::new();
        let mut h = format!("{:<name_w$} {:>3} {:>6}", "method", "K", "clean");
        for c in &cos {
            let _ = write!(
                h,
                "  {:<CELL$}",
                format!("copies at cosine {c}: recall, drop")
            );
        }
        let h = h.trim_end().to_string();
        out.push_str(&h);
        out.push('\n');
        out.push_str(&"-".repeat(h.chars().count()));
        out.push('\n');
        for (mi, m) in self.clean.methods.iter().enumerate() {
            if mi > 0 {
                out.push('\n');
            }
            for (ki, b) in m.budgets.iter().enumerate() {
                let mut row = format!(
                    "{:<name_w$} {:>3} {:>6.1}",
                    m.name,
                    b.k,
                    100.0 * b.overall.evidence_recall
                );
                for per_cos in &self.drops {
                    let d = &per_cos[mi][ki];
                    let mut cell = match d.delta {
                        Some(i) => format!(
                            "{:.1}, {:+.1} [{:+.1}, {:+.1}]",
                            100.0 * d.with_copies,
                            100.0 * i.mean,
                            100.0 * i.lo,
                            100.0 * i.hi
                        ),
                        None => format!(
                            "{:.1}, {:+.1}",
                            100.0 * d.with_copies,
                            100.0 * (d.with_copies - d.clean)
                        ),
                    };
                    if let Some(u) = &d.units {
                        let _ = write!(
                            cell,
                            "; units {:.1}, {:+.1}",
                            100.0 * u.with_copies,
                            100.0 * (u.with_copies - u.clean)
                        );
                    }
                    let _ = write!(row, "  {cell:<CELL$}");
                }
                out.push_str(row.trim_end());
                out.push('\n');
            }
        }
        if self.clean.has_units() {
            out.push_str(
                "\nunits: unit recall with near-copies and its drop from the clean unit recall, \
                 in percent / points.",
            );
        }
        if let Some(c) = self.with_copies.first().and_then(|r| r.copies) {
            let _ = write!(
                out,
                "\nEvidence recall in percent; drop = recall with near-copies − clean recall, in points, \
                 with its paired-bootstrap 95 % interval ({} resamples, seed {}).\n\
                 Near-copies: {} of each of the top {} pool members (retriever order), replacing the {} lowest; \
                 a copy has its original's evidence and first-stage score; noise seed {}.\n",
                self.clean.bootstrap.resamples,
                self.clean.bootstrap.seed,
                c.per_member,
                c.top,
                c.per_member * c.top,
                c.seed
            );
        }
        out
    }

    /// The metrics as JSON: the clean report's and each copy report's
    /// [`EvalReport::metrics_json`], and the drops.
    pub fn metrics_json(&self) -> serde_json::Value {
        serde_json::json!({
            "clean": self.clean.metrics_json(),
            "with_copies": self.with_copies.iter().map(EvalReport::metrics_json).collect::<Vec<_>>(),
            "drops": serde_json::to_value(&self.drops).unwrap_or_default(),
        })
    }
}

impl fmt::Display for RobustnessReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.table())
    }
}

impl EvalReport {
    /// Whether the report has unit measures: some evaluated query has gold
    /// units ([`Metrics::unit_recall`] is set).
    pub fn has_units(&self) -> bool {
        self.ceiling.unit_queries > 0
    }

    /// The report as JSON (every field of [`EvalReport`]; metrics are
    /// fractions in [0, 1]). JSON has no infinity: a pursuit ridge of
    /// `f64::INFINITY` (centroid pursuit) is the string `"inf"`, as in the
    /// serde form of [`Method`] (which reads it back).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
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
    /// and K; columns recall / full (complete coverage) / groups in percent,
    /// over all queries and (when there are several types) per query type,
    /// then recall minus top-K with its interval. A row is the method's
    /// name, K and the percentages separated by spaces; with names of up to
    /// 11 characters and two query types it fits in 100 columns. With
    /// budgets in tokens the budget column is `tokens` and a `picks` column
    /// (the mean number of memories that fit) follows it. With evidence
    /// units ([`EvalReport::has_units`]) a `rep` column (mean repeated
    /// picks) follows the budget, each block adds `units` (unit recall) and
    /// `u-full` (unit complete coverage), and the unit recall and group
    /// coverage minus top-K's, with their intervals, follow the recall's.
    pub fn table(&self) -> String {
        const COL: usize = 7;
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
        let tokens = self.tokenizer.is_some();
        // The budget column: K, or tokens (with the mean picks after it).
        let (budget_label, budget_w) = if tokens {
            let digits = self.ks.last().map_or(1, |k| k.to_string().len());
            ("tokens", digits.max(6))
        } else {
            ("K", 3)
        };
        let units = self.has_units();
        let picks_w = if tokens { 6 } else { 0 } + if units { 6 } else { 0 };
        let lead = name_w + budget_w + 2 + picks_w;
        let block = if units { 5 * COL } else { 3 * COL };
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
        let mut h2 = format!("{:<name_w$} {budget_label:>budget_w$} ", "method");
        if tokens {
            let _ = write!(h2, "{:>5} ", "picks");
        }
        if units {
            let _ = write!(h2, "{:>5} ", "rep");
        }
        for _ in &titles {
            let _ = write!(h2, "{:>COL$}{:>COL$}{:>COL$}", "recall", "full", "groups");
            if units {
                let _ = write!(h2, "{:>COL$}{:>COL$}", "units", "u-full");
            }
        }
        let show_delta = self
            .methods
            .iter()
            .any(|m| m.budgets.iter().any(|b| b.delta_vs_topk.is_some()));
        if show_delta {
            let _ = write!(h2, "  {:<24}", "vs top-K [95% CI]");
            if units {
                let _ = write!(h2, "  {:<24}  {:<24}", "units vs top-K", "groups vs top-K");
            }
        }
        let h2 = h2.trim_end();
        out.push_str(h2);
        out.push('\n');
        out.push_str(&"-".repeat(h2.chars().count()));
        out.push('\n');
        for (mi, m) in self.methods.iter().enumerate() {
            if mi > 0 {
                out.push('\n');
            }
            for b in &m.budgets {
                let mut row = format!("{:<name_w$} {:>budget_w$} ", m.name, b.k);
                if tokens {
                    let _ = write!(row, "{:>5.1} ", b.overall.mean_selected);
                }
                if units {
                    let _ = write!(row, "{:>5} ", opt_cell(b.overall.mean_repeated, 1.0, 2));
                }
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
                    if units {
                        let _ = write!(
                            row,
                            "{:>COL$}{:>COL$}",
                            opt_cell(c.unit_recall, 100.0, 1),
                            opt_cell(c.unit_complete_coverage, 100.0, 1)
                        );
                    }
                }
                let deltas = if units {
                    vec![
                        b.delta_vs_topk,
                        b.delta_units_vs_topk,
                        b.delta_groups_vs_topk,
                    ]
                } else {
                    vec![b.delta_vs_topk]
                };
                if deltas.iter().any(Option::is_some) {
                    for d in deltas {
                        let cell = d.map_or(String::new(), |d| {
                            format!(
                                "{:+5.1} [{:+.1}, {:+.1}]",
                                100.0 * d.mean,
                                100.0 * d.lo,
                                100.0 * d.hi
                            )
                        });
                        let _ = write!(row, "  {cell:<24}");
                    }
                }
                out.push_str(row.trim_end());
                out.push('\n');
            }
        }
        let c = &self.ceiling;
        let unit_cells = if units {
            format!(
                "{:>COL$.1}{:>COL$.1}",
                100.0 * c.unit_recall.unwrap_or(0.0),
                100.0 * c.unit_complete_coverage.unwrap_or(0.0)
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "{:<name_w$} {:>budget_w$} {:picks_w$}{:>COL$.1}{:>COL$.1}{:>COL$.1}{unit_cells}   (every pool member picked; mean pool {:.1})",
            "pool ceiling",
            "all",
            "",
            100.0 * c.evidence_recall,
            100.0 * c.complete_coverage,
            100.0 * c.group_coverage,
            self.mean_pool
        );
        out.push_str(
            "\nrecall: evidence recall, the mean over queries of |gold ∩ picks| / |gold| (gold \
             outside\nthe pool is a miss); full: every gold memory picked (complete coverage); \
             groups: every\ngold group represented (over the queries with gold groups); all in \
             percent.",
        );
        if units {
            let _ = write!(
                out,
                "\nunits: unit recall, the mean over the {} queries with gold units of the share of \
                 their gold\nunits inside the picks; u-full: every gold unit inside the picks; rep: \
                 picks per query that\nrepeat a unit of an earlier pick. recall and full count \
                 memories, so two picks sharing a\ngold unit both count as gold; units and groups \
                 do not.",
                c.unit_queries
            );
        }
        if show_delta {
            let _ = write!(
                out,
                "\nvs top-K: recall minus top-K's, in points, with its 95 % percentile interval \
                 (paired\nbootstrap over queries, {} resamples, seed {}).",
                self.bootstrap.resamples, self.bootstrap.seed
            );
            if units {
                out.push_str(
                    " units / groups vs top-K: the same for unit recall and group\ncoverage.",
                );
            }
        }
        if let Some(t) = &self.tokenizer {
            let _ = write!(
                out,
                "\ntokens: the budget in tokens, here the {t};\nevery method picks \
                 from the whole pool until nothing more fits (a pick that no longer fits\nis \
                 skipped); picks: the mean number of memories selected."
            );
        }
        if let Some(p) = self.retrieve {
            let _ = write!(out, "\nPools: top-{p} memories by cosine (within scope).");
        }
        if let Some(c) = &self.copies {
            let _ = write!(
                out,
                " Pools with near-copies: {} of each of the top {} at cosine {}, seed {}.",
                c.per_member, c.top, c.cosine, c.seed
            );
        }
        if self.relevance != RelevanceMode::Auto {
            let _ = write!(out, "\nRelevance: {:?}.", self.relevance);
        }
        if let Some(h) = self.half {
            let _ = write!(
                out,
                "\nQueries: the {} half (0-based positions {} in the dataset).",
                match h {
                    Half::Even => "even",
                    Half::Odd => "odd",
                },
                match h {
                    Half::Even => "0, 2, 4, …",
                    Half::Odd => "1, 3, 5, …",
                }
            );
        }
        out.push('\n');
        out
    }
}

/// A table cell of an optional measure: `scale · v` with `digits`
/// decimals, or `-` when the measure does not apply (no query of the block
/// has gold units).
fn opt_cell(v: Option<f64>, scale: f64, digits: usize) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{:.digits$}", scale * v))
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
            scope: None,
            gold_units: None,
        }
    }

    #[test]
    fn scores_recall_complete_and_groups() {
        let s = spec(vec![1, 2, 5], vec![vec![1, 2], vec![5]]);
        let r = score_query(&s, &[2, 7, 9]);
        assert_eq!(r.gold_hits, 1);
        assert!((r.recall - 1.0 / 3.0).abs() < 1e-15);
        assert!(!r.complete && r.groups_covered == Some(false));
        let r = score_query(&s, &[5, 1]);
        assert!(!r.complete && r.groups_covered == Some(true));
        let r = score_query(&s, &[5, 1, 2]);
        assert!(r.complete && r.groups_covered == Some(true) && r.recall == 1.0);
    }

    /// A query without gold groups is left out of group coverage (neither
    /// covered nor missed); gold outside the pool is a miss.
    #[test]
    fn empty_groups_are_left_out_and_outside_gold_is_missed() {
        let s = spec(vec![1, 42], vec![]);
        let r = score_query(&s, &[1, 2, 3]);
        assert_eq!(r.groups_covered, None);
        assert_eq!(r.recall, 0.5);
        let mut acc = Acc::default();
        acc.add(&r, 3);
        acc.add(&score_query(&spec(vec![1], vec![vec![1]]), &[1]), 1);
        acc.add(&score_query(&spec(vec![2], vec![vec![2]]), &[1]), 1);
        let m = acc.metrics();
        assert_eq!((m.queries, m.group_queries), (3, 2));
        assert_eq!(m.group_coverage, 0.5);
        assert!((m.evidence_recall - 0.5).abs() < 1e-15);
    }

    /// The bootstrap interval is seeded: the same seed gives the same
    /// interval, it brackets the mean, and a constant difference has a
    /// zero-width interval at that constant.
    #[test]
    fn bootstrap_is_seeded_and_brackets_the_mean() {
        let boot = Bootstrap::default();
        let a: Vec<f64> = (0..50).map(|i| f64::from(i % 7) / 7.0).collect();
        let b: Vec<f64> = a.iter().map(|x| x - 0.25).collect();
        let d = paired_interval(&a, &b, &boot).unwrap();
        assert_eq!((d.mean, d.lo, d.hi), (0.25, 0.25, 0.25));
        let i1 = bootstrap_interval(&a, &boot).unwrap();
        let i2 = bootstrap_interval(&a, &boot).unwrap();
        assert_eq!(i1, i2);
        assert!(i1.lo < i1.mean && i1.mean < i1.hi, "{i1:?}");
        let other = bootstrap_interval(&a, &Bootstrap { seed: 1, ..boot }).unwrap();
        assert_ne!(other, i1);
        assert_eq!(
            bootstrap_interval(
                &a,
                &Bootstrap {
                    resamples: 0,
                    seed: 0
                }
            ),
            None
        );
    }
}
