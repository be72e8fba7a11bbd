//! `mempursuit bench`: per-query latency on random unit vectors or a dataset.

/// Arguments of `mempursuit bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {}

/// Runs the benchmark and prints the latency table.
pub fn run(_args: &BenchArgs) -> Result<(), Box<dyn std::error::Error>> {
    Err("bench: not implemented yet".into())
}
