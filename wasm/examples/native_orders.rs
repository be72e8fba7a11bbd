//! Native reference orders for `wasm/check.mjs`.
//!
//! Runs the selectors natively (the `mempursuit` crate's heap-backed
//! `Selector`, default build) on
//! 1. every query of a HotpotQA fixture folder (default: the committed
//!    `cli/data/hotpotqa-mini`, 24 queries) at K = 10, and
//! 2. eight seeded synthetic pools (P = 200, K = 20, d = 384, random unit
//!    vectors that `wasm/synthetic.mjs` regenerates bit for bit),
//!
//! with paper-mode pursuit, centroid pursuit (γ = 0.5), top-K and MMR
//! (λ = 0.5), and 3. the data of the `embedded-check/` firmware (pursuit and
//! top-K), and prints the picks (pool-local indices, entry order) and the
//! pursuit weights as JSON on stdout.
//!
//! ```text
//! cargo run -p mempursuit-wasm --example native_orders -- [FIXTURE_DIR] > target/native-orders.json
//! ```

mod common;

use mempursuit::{npy, Input, InputPolicy, Method, MmrOptions, PursuitOptions, Selector};
use serde_json::{json, Value};
use std::error::Error;
use std::path::PathBuf;

/// Budget for the fixture queries.
const K_FIXTURE: usize = 10;
/// The synthetic suite: seed base, cases, P, d, K.
const SYN_SEED: u32 = 7000;
const SYN_CASES: u32 = 8;
const SYN_P: usize = 200;
const SYN_D: usize = 384;
const SYN_K: usize = 20;

/// The firmware of embedded-check/: P, K, d.
const EMB_P: usize = 64;
const EMB_K: usize = 16;
const EMB_D: usize = 384;

/// embedded-check/src/main.rs's `fill`, bit for bit.
fn xorshift_fill(state: &mut u32, out: &mut [f32]) {
    for x in out {
        *state ^= *state << 13;
        *state ^= *state >> 17;
        *state ^= *state << 5;
        *x = (*state >> 8) as f32 / 8_388_608.0 - 1.0;
    }
}

fn methods() -> [(&'static str, Method); 4] {
    [
        ("pursuit", Method::Pursuit(PursuitOptions::default())),
        ("centroid", Method::Pursuit(PursuitOptions::centroid(0.5))),
        ("topk", Method::TopK(InputPolicy::default())),
        (
            "mmr",
            Method::Mmr(MmrOptions {
                lambda: 0.5,
                input: InputPolicy::default(),
            }),
        ),
    ]
}

/// Runs every method on one input and returns {method: picks, ...,
/// "pursuit_weights": [...]}.
fn run_all(
    sel: &mut Selector,
    query: &[f32],
    pool: &[f32],
    k: usize,
) -> Result<serde_json::Map<String, Value>, Box<dyn Error>> {
    let input = Input::new(query, pool);
    let mut out = serde_json::Map::new();
    for (name, method) in methods() {
        let s = sel.select(&input, k, &method)?;
        out.insert(name.into(), json!(s.picks));
        if name == "pursuit" {
            out.insert("pursuit_weights".into(), json!(s.weights));
        }
    }
    Ok(out)
}

fn main() -> Result<(), Box<dyn Error>> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "cli/data/hotpotqa-mini".into()),
    );
    let memories = npy::read_f32(dir.join("memories.f32.npy"))?;
    let queries = npy::read_f32(dir.join("queries.f32.npy"))?;
    let lines = std::fs::read_to_string(dir.join("queries.jsonl"))?;
    let mut sel = Selector::new();

    let mut fixture = Vec::new();
    for (qi, line) in lines.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let q: Value = serde_json::from_str(line)?;
        let ids: Vec<usize> = q["pool"]
            .as_array()
            .ok_or("queries.jsonl: `pool` is not an array")?
            .iter()
            .map(|v| {
                v.as_u64()
                    .map(|x| x as usize)
                    .ok_or("pool id is not an integer")
            })
            .collect::<Result<_, _>>()?;
        let mut pool = Vec::with_capacity(ids.len() * memories.cols);
        for &id in &ids {
            if id >= memories.rows {
                return Err(format!("pool id {id} out of range").into());
            }
            pool.extend_from_slice(memories.row(id));
        }
        let mut entry = run_all(&mut sel, queries.row(qi), &pool, K_FIXTURE)?;
        entry.insert("id".into(), q["id"].clone());
        entry.insert("row".into(), json!(qi));
        fixture.push(Value::Object(entry));
    }

    let mut synthetic = Vec::new();
    for c in 0..SYN_CASES {
        let (query, pool) = common::case(SYN_SEED, c, SYN_P, SYN_D);
        synthetic.push(Value::Object(run_all(&mut sel, &query, &pool, SYN_K)?));
    }

    // The data of embedded-check/src/main.rs (xorshift32, P = 64, K = 16,
    // d = 384), for comparison with the firmware's picks under QEMU.
    let mut seed = 0x2545_f491u32;
    let mut query = vec![0.0f32; EMB_D];
    let mut pool = vec![0.0f32; EMB_P * EMB_D];
    xorshift_fill(&mut seed, &mut query);
    xorshift_fill(&mut seed, &mut pool);
    let input = Input::new(&query, &pool);
    let embedded = json!({
        "p": EMB_P, "d": EMB_D, "k": EMB_K,
        "pursuit": sel.select(&input, EMB_K, &Method::Pursuit(PursuitOptions::default()))?.picks,
        "topk": sel.select(&input, EMB_K, &Method::TopK(InputPolicy::default()))?.picks,
    });

    let out = json!({
        "generator": "wasm/examples/native_orders.rs",
        "target": std::env::consts::ARCH,
        "isa": mempursuit::Isa::detect().name(),
        "fixture": {"dir": dir.display().to_string(), "k": K_FIXTURE, "queries": fixture},
        "synthetic": {
            "seed": SYN_SEED, "cases": SYN_CASES, "p": SYN_P, "d": SYN_D, "k": SYN_K,
            "results": synthetic
        },
        "embedded": embedded,
    });
    println!("{}", serde_json::to_string(&out)?);
    Ok(())
}
