//! `mempursuit eval`: selectors on an evidence-selection dataset.

use std::path::PathBuf;

use mempursuit::{MethodName, SelectSpec};
use mempursuit_cli::copies::CopyOptions;
use mempursuit_cli::dataset::{Dataset, DatasetPaths};
use mempursuit_cli::eval::{
    evaluate, robustness, Bootstrap, EvalOptions, Half, NamedMethod, RelevanceMode, TokenCosts,
};

use crate::spec_args::{self, method_names, SpecArgs};
use crate::{emit, CliResult};

/// Where rho comes from (`--relevance`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RelevanceArg {
    /// Spec scores by rank on the pool's cosine scale; cosine without scores.
    Auto,
    /// Spec scores as given (gamma is then in the scores' units).
    Raw,
    /// Always the cosine to the query.
    Similarity,
    /// Every pool in first-stage order: rho at rank k = k-th largest cosine.
    PoolOrder,
}

impl From<RelevanceArg> for RelevanceMode {
    fn from(r: RelevanceArg) -> Self {
        match r {
            RelevanceArg::Auto => RelevanceMode::Auto,
            RelevanceArg::Raw => RelevanceMode::Raw,
            RelevanceArg::Similarity => RelevanceMode::Similarity,
            RelevanceArg::PoolOrder => RelevanceMode::PoolOrder,
        }
    }
}

/// Dataset location arguments shared by `eval` and `tune`.
#[derive(Debug, Clone, clap::Args)]
pub struct DataArgs {
    /// Dataset folder: memories.f32.npy, queries.f32.npy, queries.jsonl [, memories.jsonl].
    #[arg(long, value_name = "DIR", conflicts_with_all = ["memories", "queries", "spec"])]
    pub dir: Option<PathBuf>,
    /// Memory embeddings: .npy float32 (N, d); row i = memory id i.
    #[arg(long, value_name = "M.npy", requires_all = ["queries", "spec"])]
    pub memories: Option<PathBuf>,
    /// Query embeddings: .npy float32 (Q, d); row i = line i of --spec.
    #[arg(long, value_name = "Q.npy", requires_all = ["memories", "spec"])]
    pub queries: Option<PathBuf>,
    /// Query specs, JSON Lines: id, type, pool, gold, gold_groups [, relevance, scope].
    #[arg(long, value_name = "queries.jsonl", requires_all = ["memories", "queries"])]
    pub spec: Option<PathBuf>,
    /// Memory texts and scopes, JSON Lines (optional; for --retrieve with scopes).
    #[arg(long, value_name = "memories.jsonl", requires = "spec")]
    pub memory_texts: Option<PathBuf>,
    /// Build pools from the top-P memories by cosine (within the query's scope).
    #[arg(long, value_name = "P")]
    pub retrieve: Option<usize>,
    /// Where rho comes from.
    #[arg(long, value_enum, default_value_t = RelevanceArg::Auto)]
    pub relevance: RelevanceArg,
    /// Same as --relevance pool-order.
    #[arg(long, conflicts_with = "relevance")]
    pub pool_order: bool,
}

impl DataArgs {
    /// Loads the dataset; returns it with a label for the output.
    pub fn load(&self) -> Result<(Dataset, String), Box<dyn std::error::Error>> {
        let (paths, label) = match (&self.dir, &self.memories, &self.queries, &self.spec) {
            (Some(dir), ..) => (DatasetPaths::in_dir(dir), dir.display().to_string()),
            (None, Some(m), Some(q), Some(s)) => (
                DatasetPaths {
                    memory_embeddings: m.clone(),
                    query_embeddings: q.clone(),
                    queries: s.clone(),
                    memories: self.memory_texts.clone(),
                },
                s.display().to_string(),
            ),
            _ => return Err("give --dir DIR, or all of --memories, --queries and --spec".into()),
        };
        Ok((Dataset::load(&paths)?, label))
    }

    /// The relevance mode.
    pub fn relevance_mode(&self) -> RelevanceMode {
        if self.pool_order {
            RelevanceMode::PoolOrder
        } else {
            self.relevance.into()
        }
    }
}

/// Arguments of `mempursuit eval`.
#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    #[command(flatten)]
    pub data: DataArgs,
    /// Budgets K, comma-separated.
    #[arg(
        short = 'k',
        long = "budgets",
        value_name = "K,...",
        value_delimiter = ',',
        default_value = "3,5,10,20",
        allow_negative_numbers = true,
        value_parser = crate::spec_args::positive_budget
    )]
    pub k: Vec<usize>,
    /// Budgets in tokens instead of memories, comma-separated: every method
    /// picks from the whole pool until nothing more fits in N tokens (a pick
    /// that no longer fits is skipped), so all methods are compared at equal
    /// prompt cost. Tokens are the whitespace-separated words of each
    /// memory's text (memories.jsonl).
    #[arg(
        long = "token-budget",
        value_name = "N,...",
        value_delimiter = ',',
        conflicts_with = "k"
    )]
    pub token_budget: Vec<usize>,
    /// Selectors by method name, comma-separated (see also --method); one
    /// table row each, named by the specification's text form. With
    /// neither --methods nor --method: every method, top-K first.
    #[arg(long, value_name = "NAME,...", value_delimiter = ',', value_parser = method_names())]
    pub methods: Vec<MethodName>,
    /// Bootstrap resamples for the confidence intervals (0 = none).
    #[arg(long, value_name = "N", default_value_t = 2000)]
    pub bootstrap: usize,
    /// Seed of the bootstrap (ChaCha8).
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// Draw evidence recall (unit recall when memories list their evidence
    /// units) against K per method, with its 95% CI band, as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Print the metrics as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Write each query's picks at the largest K (memory ids) as JSON Lines.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub selectors: SpecArgs<spec_args::Eval>,
    #[command(flatten)]
    pub copies: CopyArgs,
    /// Evaluate only the queries at even or odd 0-based positions of the
    /// dataset (choose a setting on one half, report the other).
    #[arg(long, value_enum, value_name = "HALF")]
    pub half: Option<HalfArg>,
}

/// A half of the queries (`--half`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HalfArg {
    /// Positions 0, 2, 4, ...
    Even,
    /// Positions 1, 3, 5, ...
    Odd,
}

impl From<HalfArg> for Half {
    fn from(h: HalfArg) -> Self {
        match h {
            HalfArg::Even => Half::Even,
            HalfArg::Odd => Half::Odd,
        }
    }
}

/// Near-copies injected into the pools (`eval --copy-cosine`).
#[derive(Debug, Clone, clap::Args)]
pub struct CopyArgs {
    /// Robustness to repeated memories: also evaluate on pools with
    /// near-copies at these cosines to their originals, in (0, 1]
    /// (comma-separated), and report each method's drop from the clean
    /// pools with paired-bootstrap 95% intervals.
    #[arg(long, value_name = "X,...", value_delimiter = ',')]
    pub copy_cosine: Vec<f64>,
    /// How many of each pool's top-ranked members (retriever order) get
    /// near-copies.
    #[arg(long, value_name = "M", default_value_t = 3, requires = "copy_cosine")]
    pub copy_top: usize,
    /// Near-copies of each of them (they replace the lowest-ranked members).
    #[arg(long, value_name = "C", default_value_t = 2, requires = "copy_cosine")]
    pub copies_each: usize,
    /// Seed of the copies' noise (ChaCha8, per query).
    #[arg(long, value_name = "S", default_value_t = 0, requires = "copy_cosine")]
    pub copy_seed: u64,
}

/// The selectors of an eval run, each named by its text form: the
/// `--methods` names, then the `--method` selectors (every method, top-K
/// first, when neither is given), with the option flags applied.
fn selectors(args: &EvalArgs) -> Result<Vec<NamedMethod>, Box<dyn std::error::Error>> {
    let named = args.methods.iter().map(|&m| SelectSpec::of(m)).collect();
    let specs = args.selectors.specs(named, default_rows)?;
    Ok(named_methods(&specs)?)
}

/// Every method with its defaults, top-K (the baseline of the deltas) first.
pub(crate) fn default_rows() -> Vec<SelectSpec> {
    let mut names = MethodName::ALL.to_vec();
    names.sort_by_key(|m| *m != MethodName::TopK);
    names.into_iter().map(SelectSpec::of).collect()
}

/// The named methods of `specs` ([`NamedMethod::from_spec`]).
pub(crate) fn named_methods(
    specs: &[SelectSpec],
) -> Result<Vec<NamedMethod>, mempursuit::SpecError> {
    specs.iter().map(NamedMethod::from_spec).collect()
}

/// Prints a notice (stderr) when the largest budget exceeds some pools:
/// those queries select their whole pool at that K.
fn notice_budget_above_pools(data: &Dataset, ks: &[usize], retrieve: Option<usize>) {
    let k_max = ks.iter().copied().max().unwrap_or(0);
    if let Some(p) = retrieve {
        // P = 0 is refused when the pools are built: no note before that.
        if p > 0 {
            crate::select::notice_budget_above_pool(k_max, p, "the retrieved pools");
        }
        return;
    }
    let small = data.queries.iter().filter(|q| q.pool.len() < k_max).count();
    if small > 0 {
        let p_min = data.queries.iter().map(|q| q.pool.len()).min().unwrap_or(0);
        eprintln!(
            "mempursuit: note: budget K = {k_max} exceeds the pool of {small} of {} queries \
             (smallest P = {p_min}): those select their whole pool at that K",
            data.queries.len()
        );
    }
}

/// Runs `mempursuit eval`.
pub fn run(args: &EvalArgs) -> CliResult {
    let (data, label) = args.data.load()?;
    let methods = selectors(args)?;
    let (ks, tokens) = if args.token_budget.is_empty() {
        notice_budget_above_pools(&data, &args.k, args.data.retrieve);
        (args.k.clone(), None)
    } else {
        (
            args.token_budget.clone(),
            Some(TokenCosts::whitespace_words(&data)?),
        )
    };
    let options = EvalOptions {
        ks,
        relevance: args.data.relevance_mode(),
        retrieve: args.data.retrieve,
        bootstrap: Bootstrap {
            resamples: args.bootstrap,
            seed: args.seed,
        },
        copies: None,
        tokens,
        half: args.half.map(Half::from),
    };
    if !args.copies.copy_cosine.is_empty() {
        return run_robustness(args, &data, &label, &methods, &options);
    }
    let report = evaluate(&data, &methods, &options)?;
    if let Some(out) = &args.out {
        std::fs::write(out, report.selections_jsonl())
            .map_err(|e| format!("{}: {e}", out.display()))?;
    }
    if let Some(plot) = &args.plot {
        let svg = mempursuit_cli::plot::recall_svg(
            &report,
            &format!(
                "{} vs {}: {label}",
                if report.has_units() {
                    "unit recall"
                } else {
                    "evidence recall"
                },
                if report.tokenizer.is_some() {
                    "tokens"
                } else {
                    "K"
                }
            ),
        )?;
        std::fs::write(plot, svg).map_err(|e| format!("{}: {e}", plot.display()))?;
    }
    if args.json {
        return emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&report.metrics_json())?
        ));
    }
    let mut text = dataset_header(&data, &label);
    text.push_str(&report.table());
    emit(&text)
}

/// `eval --copy-cosine`: the clean table, then each method's drop with
/// near-copies (`--out` and `--plot` describe the clean pools).
fn run_robustness(
    args: &EvalArgs,
    data: &Dataset,
    label: &str,
    methods: &[NamedMethod],
    options: &EvalOptions,
) -> CliResult {
    let c = &args.copies;
    let report = robustness(
        data,
        methods,
        options,
        &c.copy_cosine,
        CopyOptions {
            top: c.copy_top,
            per_member: c.copies_each,
            cosine: 1.0,
            seed: c.copy_seed,
        },
    )?;
    if let Some(out) = &args.out {
        std::fs::write(out, report.clean.selections_jsonl())
            .map_err(|e| format!("{}: {e}", out.display()))?;
    }
    if let Some(plot) = &args.plot {
        let svg = mempursuit_cli::plot::recall_svg(
            &report.clean,
            &format!(
                "{} vs K: {label}",
                if report.clean.has_units() {
                    "unit recall"
                } else {
                    "evidence recall"
                }
            ),
        )?;
        std::fs::write(plot, svg).map_err(|e| format!("{}: {e}", plot.display()))?;
    }
    if args.json {
        return emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&report.metrics_json())?
        ));
    }
    let mut text = dataset_header(data, label);
    text.push_str(&report.clean.table());
    text.push_str("\nRobustness to near-copies:\n\n");
    text.push_str(&report.table());
    emit(&text)
}

/// The first line of `eval`'s text output: the dataset and its sizes.
fn dataset_header(data: &Dataset, label: &str) -> String {
    format!(
        "dataset: {label}: {} queries, {} memories, d = {}\n\n",
        data.queries.len(),
        data.memory_embeddings.rows,
        data.dim()
    )
}
