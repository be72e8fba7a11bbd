//! `mempursuit tune`: the cross-validated choice of a setting on a dataset.

use mempursuit_cli::eval::Bootstrap;
use mempursuit_cli::tune::{tune, TuneOptions};

use crate::eval::DataArgs;
use crate::{emit, CliResult};

/// Arguments of `mempursuit tune`.
#[derive(Debug, clap::Args)]
pub struct TuneArgs {
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
    /// Number of folds (>= 2).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub folds: usize,
    /// The gamma grid of centroid pursuit, comma-separated, each in (0, 1].
    #[arg(
        long,
        value_name = "G,...",
        value_delimiter = ',',
        default_value = "0.05,0.1,0.2,0.3,0.5,0.7"
    )]
    pub gamma: Vec<f64>,
    /// Bootstrap resamples for the confidence intervals (0 = none).
    #[arg(long, value_name = "N", default_value_t = 2000)]
    pub bootstrap: usize,
    /// Seed of the fold shuffle and the bootstrap (ChaCha8).
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
}

/// Runs `mempursuit tune`.
pub fn run(args: &TuneArgs) -> CliResult {
    let (data, label) = args.data.load()?;
    let options = TuneOptions {
        ks: args.k.clone(),
        folds: args.folds,
        gammas: args.gamma.clone(),
        relevance: args.data.relevance_mode(),
        retrieve: args.data.retrieve,
        bootstrap: Bootstrap {
            resamples: args.bootstrap,
            seed: args.seed,
        },
    };
    let report = tune(&data, &options)?;
    emit(&format!(
        "dataset: {label}: {} queries, {} memories, d = {}\n\n{}",
        data.queries.len(),
        data.memory_embeddings.rows,
        data.dim(),
        report.table()
    ))
}
