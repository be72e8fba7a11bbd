//! Choosing a setting on your own labelled data (`mempursuit tune`):
//! k-fold cross-validated choice among top-K, the recommended setting,
//! MemPursuit (paper mode) and centroid pursuit over a γ grid.
//!
//! Every candidate setting is run once on every query ([`evaluate`]); none
//! has parameters fitted to the data, so a query's recall under a setting
//! is already a held-out number. What the folds check is the *choice*: the
//! queries are split into `folds` parts (a seeded shuffle); for each part,
//! the setting with the best mean evidence recall on the other parts is
//! chosen and scored on that part. The concatenated held-out scores estimate
//! what choosing a setting this way gains on new queries, with a
//! paired-bootstrap 95 % interval against top-K (see
//! [`crate::eval::Bootstrap`]).
//!
//! Per budget K the report lists every setting's recall, its
//! paired-bootstrap interval minus top-K, how many folds chose it, and the
//! cross-validated gain of the choice. Over all budgets together (mean
//! recall over the budgets) it names the recommended setting, with a
//! one-line command that uses it: the best setting on all queries when the
//! folds validate the choice (the low end of the held-out gain's interval
//! is above zero); otherwise the choice is not trusted and the report falls
//! back to the built-in recommended setting when it is at or above top-K on
//! these queries, else to top-K.
//!
//! ```
//! use mempursuit_cli::dataset::Dataset;
//! use mempursuit_cli::tune::{tune, TuneOptions};
//!
//! let data = Dataset::load_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/data/hotpotqa-mini"))?;
//! let report = tune(&data, &TuneOptions::new(vec![5, 10]))?;
//! println!("{report}");
//! assert!(report.settings.iter().any(|s| s.name == "recommended"));
//! assert_eq!(report.settings[3].name, "centroid,gamma=0.05"); // the γ grid
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt::{self, Write as _};

use mempursuit::{Method, SelectSpec};
use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom as _;
use rand::SeedableRng as _;
use serde::Serialize;

use crate::dataset::Dataset;
use crate::eval::{
    evaluate, paired_interval, Bootstrap, EvalError, EvalOptions, Interval, NamedMethod,
    RelevanceMode,
};

/// Options of [`tune`].
#[derive(Debug, Clone, PartialEq)]
pub struct TuneOptions {
    /// The budgets K (sorted and de-duplicated).
    pub ks: Vec<usize>,
    /// Number of folds, ≥ 2 (at most the number of queries).
    pub folds: usize,
    /// The γ grid of centroid pursuit, each in (0, 1].
    pub gammas: Vec<f64>,
    /// Where ρ comes from (as in [`EvalOptions::relevance`]).
    pub relevance: RelevanceMode,
    /// Pools built by retrieval (as in [`EvalOptions::retrieve`]).
    pub retrieve: Option<usize>,
    /// The bootstrap of the intervals; its seed also shuffles the folds.
    pub bootstrap: Bootstrap,
}

impl TuneOptions {
    /// Budgets `ks`, 5 folds, the γ grid {0.05, 0.1, 0.2, 0.3, 0.5, 0.7}, unit-free
    /// relevance, the spec's pools, the default bootstrap.
    pub fn new(ks: Vec<usize>) -> Self {
        TuneOptions {
            ks,
            folds: 5,
            gammas: vec![0.05, 0.1, 0.2, 0.3, 0.5, 0.7],
            relevance: RelevanceMode::Auto,
            retrieve: None,
            bootstrap: Bootstrap::default(),
        }
    }
}

/// Why [`tune`] failed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TuneError {
    /// `folds` is below 2 or above the number of queries.
    Folds {
        /// The folds asked for.
        folds: usize,
        /// The number of queries.
        queries: usize,
    },
    /// A γ of the grid is outside (0, 1].
    Gamma(f64),
    /// A setting's specification is invalid.
    Spec(mempursuit::SpecError),
    /// The evaluation failed.
    Eval(EvalError),
}

impl fmt::Display for TuneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TuneError::Folds { folds, queries } => write!(
                f,
                "{folds} folds for {queries} queries: use between 2 and the number of queries"
            ),
            TuneError::Gamma(g) => write!(f, "gamma {g} of the grid must be in (0, 1]"),
            TuneError::Spec(e) => write!(f, "{e}"),
            TuneError::Eval(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for TuneError {}

impl From<EvalError> for TuneError {
    fn from(e: EvalError) -> Self {
        TuneError::Eval(e)
    }
}

/// One candidate setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setting {
    /// The specification's text form (`topk`, `recommended`, `pursuit`,
    /// `centroid,gamma=0.3`).
    pub name: String,
    /// The specification.
    pub spec: SelectSpec,
    /// The selector it builds.
    pub method: Method,
    /// Arguments of `mempursuit select` that use it (`--method NAME`).
    pub select_args: String,
}

impl Setting {
    /// The setting of `spec`.
    ///
    /// # Errors
    /// The specification's error ([`SelectSpec::method`]).
    pub fn new(spec: SelectSpec) -> Result<Setting, mempursuit::SpecError> {
        Ok(Setting {
            name: spec.to_string(),
            spec,
            method: spec.method()?,
            select_args: format!("--method {spec}"),
        })
    }
}

/// One setting at one budget.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettingAtK {
    /// Mean evidence recall over all queries.
    pub recall: f64,
    /// Paired-bootstrap 95 % interval of recall minus top-K's (`None` for
    /// top-K itself or with 0 resamples).
    pub delta_vs_topk: Option<Interval>,
    /// Number of folds whose training part chose this setting.
    pub chosen_in_folds: usize,
}

/// The results at one budget.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetTune {
    /// The budget K.
    pub k: usize,
    /// One entry per setting, in [`TuneReport::settings`] order.
    pub settings: Vec<SettingAtK>,
    /// Held-out recall of the fold-wise choice minus top-K, with its
    /// paired-bootstrap interval.
    pub cv_delta_vs_topk: Option<Interval>,
    /// The setting with the best recall on all queries at this K (index
    /// into [`TuneReport::settings`]).
    pub best: usize,
}

/// The result of [`tune`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TuneReport {
    /// Number of queries.
    pub queries: usize,
    /// Number of folds.
    pub folds: usize,
    /// The candidate settings; index 0 is top-K.
    pub settings: Vec<Setting>,
    /// Per budget, ascending K.
    pub budgets: Vec<BudgetTune>,
    /// Over all budgets (mean recall over the budgets): held-out recall of
    /// the fold-wise choice minus top-K.
    pub cv_delta_vs_topk: Option<Interval>,
    /// Over all budgets: folds that chose each setting.
    pub chosen_in_folds: Vec<usize>,
    /// The recommended setting (index into `settings`): the best mean
    /// recall over the budgets on all queries when the cross-validated gain
    /// of choosing that way is above zero (its interval's low end > 0);
    /// otherwise the built-in recommended setting if its mean recall over
    /// the budgets is at least top-K's, else top-K.
    pub recommended: usize,
    /// The best mean recall over the budgets on all queries (index into
    /// `settings`).
    pub best: usize,
    /// Whether the cross-validated gain of the choice is above zero.
    pub choice_validated: bool,
    /// The bootstrap behind the intervals.
    pub bootstrap: Bootstrap,
    /// The `select` flag that gives the relevance the evaluation used
    /// (`--relevance R.npy` for spec scores, `--pool-order`, or empty for
    /// ρ = cosine).
    pub relevance_args: String,
}

/// Mean of `v` over the indices `idx`.
fn mean_over(v: &[f64], idx: &[usize]) -> f64 {
    idx.iter().map(|&i| v[i]).sum::<f64>() / idx.len().max(1) as f64
}

/// Index of the largest value, ties to the lowest index (the simpler
/// setting: top-K comes first).
fn argmax(values: impl Iterator<Item = f64>) -> usize {
    let mut best = (0, f64::NEG_INFINITY);
    for (i, v) in values.enumerate() {
        if v > best.1 {
            best = (i, v);
        }
    }
    best.0
}

/// Runs the cross-validated choice (see the module docs).
///
/// # Errors
/// [`TuneError::Folds`], [`TuneError::Gamma`], or [`TuneError::Eval`] when
/// a selector rejects a query (or for empty `ks`).
pub fn tune(data: &Dataset, options: &TuneOptions) -> Result<TuneReport, TuneError> {
    let nq = data.queries.len();
    if options.folds < 2 || options.folds > nq {
        return Err(TuneError::Folds {
            folds: options.folds,
            queries: nq,
        });
    }
    // Top-K first (the baseline), then the recommended setting (the
    // fallback), paper mode and centroid pursuit over the γ grid.
    let mut settings = Vec::with_capacity(3 + options.gammas.len());
    for spec in [
        SelectSpec::top_k(),
        SelectSpec::recommended(),
        SelectSpec::paper(),
    ] {
        settings.push(Setting::new(spec).map_err(TuneError::Spec)?);
    }
    for &g in &options.gammas {
        settings.push(Setting::new(SelectSpec::centroid(g)).map_err(|_| TuneError::Gamma(g))?);
    }
    let named: Vec<NamedMethod> = settings
        .iter()
        .map(|s| NamedMethod::new(s.name.clone(), s.method))
        .collect();
    let eval = evaluate(
        data,
        &named,
        &EvalOptions {
            ks: options.ks.clone(),
            relevance: options.relevance,
            retrieve: options.retrieve,
            bootstrap: Bootstrap {
                resamples: 0,
                ..options.bootstrap
            },
            copies: None,
            tokens: None,
            half: None,
        },
    )?;
    // recall[s][ki][q]
    let recall: Vec<Vec<&[f64]>> = eval
        .methods
        .iter()
        .map(|m| m.budgets.iter().map(|b| &b.per_query_recall[..]).collect())
        .collect();
    let nk = eval.ks.len();
    // Mean over the budgets, per setting and query.
    let overall: Vec<Vec<f64>> = recall
        .iter()
        .map(|per_k| {
            (0..nq)
                .map(|q| per_k.iter().map(|r| r[q]).sum::<f64>() / nk as f64)
                .collect()
        })
        .collect();

    // Folds: a seeded shuffle, then position mod folds.
    let mut order: Vec<usize> = (0..nq).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(options.bootstrap.seed));
    let mut fold_of = vec![0; nq];
    for (pos, &q) in order.iter().enumerate() {
        fold_of[q] = pos % options.folds;
    }
    let parts: Vec<(Vec<usize>, Vec<usize>)> = (0..options.folds)
        .map(|f| {
            let (test, train): (Vec<usize>, Vec<usize>) = (0..nq).partition(|&q| fold_of[q] == f);
            (train, test)
        })
        .collect();

    // The fold-wise choice on per-query values `v[s][q]`: the held-out
    // values and how often each setting was chosen.
    let cross_validate = |v: &[&[f64]]| {
        let mut held_out = vec![0.0; nq];
        let mut chosen = vec![0usize; v.len()];
        for (train, test) in &parts {
            let s = argmax(v.iter().map(|r| mean_over(r, train)));
            chosen[s] += 1;
            for &q in test {
                held_out[q] = v[s][q];
            }
        }
        (held_out, chosen)
    };
    let boot = options.bootstrap;
    let budgets = (0..nk)
        .map(|ki| {
            let per_setting: Vec<&[f64]> = recall.iter().map(|r| r[ki]).collect();
            let (held_out, chosen) = cross_validate(&per_setting);
            let base = recall[0][ki];
            BudgetTune {
                k: eval.ks[ki],
                settings: (0..settings.len())
                    .map(|s| SettingAtK {
                        recall: mean_over(recall[s][ki], &order),
                        delta_vs_topk: if s == 0 {
                            None
                        } else {
                            paired_interval(recall[s][ki], base, &boot)
                        },
                        chosen_in_folds: chosen[s],
                    })
                    .collect(),
                cv_delta_vs_topk: paired_interval(&held_out, base, &boot),
                best: argmax((0..settings.len()).map(|s| mean_over(recall[s][ki], &order))),
            }
        })
        .collect();
    let per_setting: Vec<&[f64]> = overall.iter().map(|v| &v[..]).collect();
    let (held_out, chosen) = cross_validate(&per_setting);
    let has_scores =
        options.retrieve.is_none() && data.queries.iter().any(|q| q.relevance.is_some());
    let relevance_args = match options.relevance {
        RelevanceMode::PoolOrder => " --pool-order",
        RelevanceMode::Auto if has_scores => " --relevance R.npy",
        RelevanceMode::Raw if has_scores => " --relevance R.npy --raw-relevance",
        _ => "",
    }
    .to_string();
    let cv_delta_vs_topk = paired_interval(&held_out, &overall[0], &boot);
    let best = argmax(overall.iter().map(|v| mean_over(v, &order)));
    let choice_validated = cv_delta_vs_topk.is_some_and(|i| i.lo > 0.0);
    let recommended = if choice_validated {
        best
    } else if mean_over(&overall[1], &order) >= mean_over(&overall[0], &order) {
        1
    } else {
        0
    };
    Ok(TuneReport {
        queries: nq,
        folds: options.folds,
        cv_delta_vs_topk,
        chosen_in_folds: chosen,
        recommended,
        best,
        choice_validated,
        settings,
        budgets,
        bootstrap: boot,
        relevance_args,
    })
}

/// `+1.2 [+0.3, +2.1]` in points, or `—`.
fn interval_text(i: Option<Interval>) -> String {
    match i {
        Some(i) => format!(
            "{:+.1} [{:+.1}, {:+.1}]",
            100.0 * i.mean,
            100.0 * i.lo,
            100.0 * i.hi
        ),
        None => "—".into(),
    }
}

impl TuneReport {
    /// The recommended setting.
    pub fn recommended_setting(&self) -> &Setting {
        &self.settings[self.recommended]
    }

    /// The report as text: one table per K (setting, recall, recall − top-K
    /// with its 95 % interval, folds that chose it), the cross-validated
    /// gain of the choice, and the recommendation with its command.
    pub fn table(&self) -> String {
        let name_w = self
            .settings
            .iter()
            .map(|s| s.name.chars().count())
            .max()
            .unwrap_or(0)
            .max(8);
        let mut out = String::new();
        for b in &self.budgets {
            let _ = writeln!(out, "K = {}", b.k);
            let _ = writeln!(
                out,
                "  {:<name_w$} {:>7}  {:<24} {:>6}",
                "setting", "recall", "recall − top-K [95% CI]", "chosen"
            );
            for (s, r) in self.settings.iter().zip(&b.settings) {
                let _ = writeln!(
                    out,
                    "  {:<name_w$} {:>7.1}  {:<24} {:>3}/{}",
                    s.name,
                    100.0 * r.recall,
                    interval_text(r.delta_vs_topk),
                    r.chosen_in_folds,
                    self.folds
                );
            }
            let _ = writeln!(
                out,
                "  best on all queries: {}; choosing on {} of {} folds, held out: {} over top-K\n",
                self.settings[b.best].name,
                self.folds - 1,
                self.folds,
                interval_text(b.cv_delta_vs_topk)
            );
        }
        let rec = self.recommended_setting();
        let best = &self.settings[self.best];
        let chosen: Vec<String> = self
            .settings
            .iter()
            .zip(&self.chosen_in_folds)
            .filter(|(_, &c)| c > 0)
            .map(|(s, c)| format!("{} {c}/{}", s.name, self.folds))
            .collect();
        let _ = writeln!(
            out,
            "All budgets together (mean recall over K): best setting: {} (chosen by the folds: {});\n\
             choosing this way, held out: {} points of recall over top-K.",
            best.name,
            chosen.join(", "),
            interval_text(self.cv_delta_vs_topk)
        );
        if self.choice_validated {
            let _ = writeln!(out, "Recommended: {}.", rec.name);
        } else {
            let _ = writeln!(
                out,
                "The held-out gain of choosing is not above zero, so the choice is not trusted.\n\
                 Recommended: {} ({}).",
                rec.name,
                if self.recommended == 1 {
                    "the no-tuning default, at or above top-K on these queries on average over the budgets"
                } else {
                    "nothing else was at or above it on these queries"
                }
            );
        }
        let _ = writeln!(
            out,
            "Use it: mempursuit select --query Q.npy --candidates C.npy -k K {}{}",
            rec.select_args, self.relevance_args
        );
        let _ = writeln!(
            out,
            "{} queries, {} folds (seeded shuffle, seed {}); CI: paired bootstrap over queries, {} resamples, 95 % percentile interval, in points.",
            self.queries, self.folds, self.bootstrap.seed, self.bootstrap.resamples
        );
        out
    }
}

impl fmt::Display for TuneReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.table())
    }
}
