//! The `mempursuit` command-line program: select, eval, demo, bench.
//!
//! * `mempursuit select`: pick K memories for one query from `.npy`
//!   embeddings and print the order, weights and per-step record;
//!   the recommended setting unless `--method` says otherwise;
//! * `mempursuit eval`: evidence recall / coverage of several selectors on a
//!   dataset folder ([`mempursuit_cli::dataset`], [`mempursuit_cli::eval`]);
//! * `mempursuit demo`: the same on the built-in HotpotQA mini fixture
//!   (CC BY-SA 4.0), with one worked example;
//! * `mempursuit bench`: per-query latency.
//!
//! Every subcommand names its selectors in the text form of the one
//! specification of a selector call (`mempursuit::SelectSpec`: `recommended`,
//! `pursuit`, `mmr,mmr_lambda=0.3`), and its option flags are that
//! specification's options (`spec_args`).
//!
//! Errors go to stderr as `mempursuit: error: ...` with exit status 1;
//! usage errors exit with status 2 (clap).

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bench;
mod demo;
mod eval;
mod select;
mod spec_args;
mod tune;

/// The result type of every subcommand.
pub(crate) type CliResult = Result<(), Box<dyn std::error::Error>>;

/// MemPursuit evidence selection: pick K complementary memories for a query
/// from a pool of embeddings (Feng & Fan, "Recall What Is Missing", 2026).
#[derive(Debug, Parser)]
#[command(name = "mempursuit", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Select K memories for one query from a candidate matrix (.npy); the
    /// recommended setting unless --method says otherwise.
    Select(select::SelectArgs),
    /// Evaluate selectors (evidence recall, coverage) on a dataset folder.
    Eval(eval::EvalArgs),
    /// Evaluate top-K, MMR, paper mode and the recommended setting on the
    /// built-in HotpotQA mini fixture and show a worked example.
    Demo(demo::DemoArgs),
    /// Choose a setting on your own labelled data: k-fold cross-validated
    /// choice among top-K, the recommended setting, paper mode and a gamma grid.
    Tune(tune::TuneArgs),
    /// Measure per-query selection latency.
    Bench(bench::BenchArgs),
}

/// Writes `text` to stdout. A closed pipe (e.g. `| head`) ends the output
/// quietly instead of failing.
pub(crate) fn emit(text: &str) -> CliResult {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if cfg!(debug_assertions) && matches!(cli.command, Command::Bench(_)) {
        eprintln!(
            "mempursuit: note: this is a debug build; selections run 100-200x slower \
             than in a release build (cargo run --release -p mempursuit-cli -- bench, \
             or cargo install --locked --path cli)"
        );
    }
    let result = match &cli.command {
        Command::Select(args) => select::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Tune(args) => tune::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mempursuit: error: {e}");
            ExitCode::FAILURE
        }
    }
}
