//! Native per-query latency at P = 200, K = 20, d = 384, the counterpart of
//! `wasm/bench.mjs` (same seeded random unit vectors, same calls).
//!
//! ```text
//! cargo run --release -p mempursuit-wasm --example native_latency -- [ROUNDS]
//! ```
//!
//! 64 query/pool cases (seeds 9000..9063) are generated up front; each
//! timed call is one selection on one case with a preallocated workspace
//! (no allocation, no copy). One warm-up round, then ROUNDS rounds (default
//! 10) over all cases; prints the median, 10th and 90th percentile per
//! method in microseconds, and a picks checksum that `wasm/bench.mjs` must
//! reproduce.

mod common;

use mempursuit::{Input, MethodName, SelectSpec, Selector};
use std::time::Instant;

const SEED: u32 = 9000;
const CASES: u32 = 64;
const P: usize = 200;
const K: usize = 20;
const D: usize = 384;

fn percentile(sorted: &[f64], q: f64) -> f64 {
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let cases: Vec<(Vec<f32>, Vec<f32>)> =
        (0..CASES).map(|c| common::case(SEED, c, P, D)).collect();
    let mut selector = Selector::with_capacity(P, K);
    println!(
        "native {} ({}), P = {P}, K = {K}, d = {D}, {CASES} cases x {rounds} rounds",
        std::env::consts::ARCH,
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    println!("method      median_us    p10_us    p90_us   checksum");
    // Each method with the specification's defaults (paper mode for
    // `pursuit`), through the core's one dispatch, as the npm package runs it.
    for name in [
        MethodName::Pursuit,
        MethodName::Centroid,
        MethodName::TopK,
        MethodName::Mmr,
    ] {
        let method = SelectSpec::of(name).method()?;
        let mut times = Vec::with_capacity(rounds * CASES as usize);
        let mut checksum = 0u32;
        for round in 0..=rounds {
            for (query, pool) in &cases {
                let input = Input::new(query, pool);
                let mut ws = selector.workspace(P, K);
                let start = Instant::now();
                let sel = method.run(&input, K, &mut ws)?;
                let elapsed = start.elapsed().as_secs_f64() * 1e6;
                if round == 0 {
                    // Warm-up round: not timed, but checks the picks.
                    for (t, &i) in sel.picks().iter().enumerate() {
                        checksum = checksum.wrapping_mul(31).wrapping_add((t * P + i) as u32);
                    }
                } else {
                    times.push(elapsed);
                }
                std::hint::black_box(sel.picks());
            }
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{:<10} {:>10.1} {:>9.1} {:>9.1}   {checksum}",
            name.as_str(),
            percentile(&times, 0.5),
            percentile(&times, 0.1),
            percentile(&times, 0.9),
        );
    }
    Ok(())
}
