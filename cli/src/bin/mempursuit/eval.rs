//! `mempursuit eval`: selectors on an evidence-selection dataset.

use std::fmt::Write as _;
use std::path::PathBuf;

use mempursuit::{InputPolicy, Method, MmrOptions, PursuitOptions, Stopping};
use mempursuit_cli::dataset::{Dataset, DatasetPaths};
use mempursuit_cli::eval::{evaluate, EvalOptions, NamedMethod, RelevanceMode};

use crate::{emit, CliResult};

/// A selector of `mempursuit eval`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EvalMethod {
    /// Top-K by relevance.
    Topk,
    /// MMR with --mmr-lambda.
    Mmr,
    /// MemPursuit, paper mode (ridge 1e-10, gamma 1).
    Pursuit,
    /// Centroid pursuit (ridge inf) with --gamma.
    Centroid,
    /// MemPursuit with the paper's adaptive stopping (Eq. 7).
    PursuitAdaptive,
}

/// Arguments of `mempursuit eval`.
#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    /// Dataset folder: memories.f32.npy, queries.f32.npy, queries.jsonl.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["memories", "queries", "spec"])]
    pub dir: Option<PathBuf>,
    /// Memory embeddings: .npy float32 (N, d); row i = memory id i.
    #[arg(long, value_name = "M.npy", requires_all = ["queries", "spec"])]
    pub memories: Option<PathBuf>,
    /// Query embeddings: .npy float32 (Q, d); row i = line i of --spec.
    #[arg(long, value_name = "Q.npy", requires_all = ["memories", "spec"])]
    pub queries: Option<PathBuf>,
    /// Query specs, JSON Lines: id, type, pool, gold, gold_groups [, relevance].
    #[arg(long, value_name = "queries.jsonl", requires_all = ["memories", "queries"])]
    pub spec: Option<PathBuf>,
    /// Budgets K, comma-separated.
    #[arg(
        short = 'k',
        long = "budgets",
        value_name = "K,...",
        value_delimiter = ',',
        default_value = "3,5,10,20"
    )]
    pub k: Vec<usize>,
    /// Selectors, comma-separated.
    #[arg(
        long,
        value_enum,
        value_name = "M,...",
        value_delimiter = ',',
        default_value = "topk,mmr,pursuit,centroid"
    )]
    pub methods: Vec<EvalMethod>,
    /// MMR trade-off lambda in [0, 1].
    #[arg(long, value_name = "X", default_value_t = 0.5)]
    pub mmr_lambda: f64,
    /// Gamma of centroid pursuit, in (0, 1].
    #[arg(long, value_name = "G", default_value_t = 0.5)]
    pub gamma: f64,
    /// Treat every pool as first-stage ordered (rho at rank k = k-th largest cosine).
    #[arg(long)]
    pub pool_order: bool,
    /// Print the metrics as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Write each query's picks at the largest K (memory ids) as JSON Lines.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// The named methods of an eval run.
pub(crate) fn named_methods(
    methods: &[EvalMethod],
    mmr_lambda: f64,
    gamma: f64,
) -> Vec<NamedMethod> {
    let policy = InputPolicy::default();
    methods
        .iter()
        .map(|m| match m {
            EvalMethod::Topk => NamedMethod::new("top-K", Method::TopK(policy)),
            EvalMethod::Mmr => NamedMethod::new(
                format!("MMR({mmr_lambda})"),
                Method::Mmr(MmrOptions {
                    lambda: mmr_lambda,
                    input: policy,
                }),
            ),
            EvalMethod::Pursuit => {
                NamedMethod::new("MemPursuit", Method::Pursuit(PursuitOptions::default()))
            }
            EvalMethod::Centroid => NamedMethod::new(
                format!("centroid({gamma})"),
                Method::Pursuit(PursuitOptions::centroid(gamma)),
            ),
            EvalMethod::PursuitAdaptive => NamedMethod::new(
                "MemPursuit-adaptive",
                Method::Pursuit(PursuitOptions {
                    stopping: Stopping::PAPER_ADAPTIVE,
                    ..PursuitOptions::default()
                }),
            ),
        })
        .collect()
}

/// Runs `mempursuit eval`.
pub fn run(args: &EvalArgs) -> CliResult {
    let (paths, label) = match (&args.dir, &args.memories, &args.queries, &args.spec) {
        (Some(dir), ..) => (DatasetPaths::in_dir(dir), dir.display().to_string()),
        (None, Some(m), Some(q), Some(s)) => (
            DatasetPaths {
                memory_embeddings: m.clone(),
                query_embeddings: q.clone(),
                queries: s.clone(),
                memories: None,
            },
            s.display().to_string(),
        ),
        _ => return Err("give --dir DIR, or all of --memories, --queries and --spec".into()),
    };
    let data = Dataset::load(&paths)?;
    let methods = named_methods(&args.methods, args.mmr_lambda, args.gamma);
    let options = EvalOptions {
        ks: args.k.clone(),
        relevance: if args.pool_order {
            RelevanceMode::PoolOrder
        } else {
            RelevanceMode::Auto
        },
    };
    let report = evaluate(&data, &methods, &options)?;
    if let Some(out) = &args.out {
        std::fs::write(out, report.selections_jsonl())
            .map_err(|e| format!("{}: {e}", out.display()))?;
    }
    if args.json {
        return emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&report.metrics_json())?
        ));
    }
    let mut text = String::new();
    writeln!(
        text,
        "dataset: {label}: {} queries, {} memories, d = {}\n",
        data.queries.len(),
        data.memory_embeddings.rows,
        data.dim()
    )?;
    text.push_str(&report.table());
    emit(&text)
}
