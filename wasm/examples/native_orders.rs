//! Native reference orders and error messages for the npm package's tests
//! (`wasm/test/native.test.mjs`).
//!
//! Runs the selectors natively (the `mempursuit` crate's heap-backed
//! `Selector`, default build) on
//! 1. every query of a HotpotQA fixture folder (default: the committed
//!    `cli/data/hotpotqa-mini`, 24 queries) at K = 10, and
//! 2. eight seeded synthetic pools (P = 200, K = 20, d = 384, random unit
//!    vectors that `wasm/synthetic.mjs` regenerates bit for bit),
//!
//! with paper-mode pursuit, centroid pursuit, top-K and MMR (each with the
//! defaults of the one specification, `mempursuit::SelectSpec`), and 3. the data of the `embedded-check/` firmware (pursuit and
//! top-K), and prints the picks (pool-local indices, entry order) and the
//! pursuit weights as JSON on stdout; 4. a list of invalid calls, each with
//! its input, its options in the npm package's spelling and the native
//! error message, which the package must throw word for word.
//!
//! ```text
//! cargo run -p mempursuit-wasm --example native_orders -- [FIXTURE_DIR] > target/native-orders.json
//! ```
//!
//! Its consumer is `wasm/test/native.test.mjs` (`npm test` in `wasm/`).

mod common;

use mempursuit::spec::Value as SpecValue;
use mempursuit::{
    npy, Input, InputPolicy, Method, MethodName, PursuitOptions, SelectSpec, Selector,
};
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

/// The methods of the reference orders, by name, with the specification's
/// defaults.
fn methods() -> Result<Vec<(&'static str, Method)>, Box<dyn Error>> {
    [
        MethodName::Pursuit,
        MethodName::Centroid,
        MethodName::TopK,
        MethodName::Mmr,
    ]
    .into_iter()
    .map(|m| Ok((m.as_str(), SelectSpec::of(m).method()?)))
    .collect()
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
    for (name, method) in methods()? {
        let s = sel.select(&input, k, &method)?;
        out.insert(name.into(), json!(s.picks));
        if name == MethodName::Pursuit.as_str() {
            out.insert("pursuit_weights".into(), json!(s.weights));
        }
    }
    Ok(out)
}

/// A number of the error cases: JSON has no NaN or infinities, so those are
/// the strings "NaN", "inf" and "-inf" (decoded the same way by the tests).
fn number(v: &Value) -> Result<f64, Box<dyn Error>> {
    match v {
        Value::Number(n) => n.as_f64().ok_or_else(|| "bad number".into()),
        Value::String(s) if s == "NaN" => Ok(f64::NAN),
        Value::String(s) if s == "inf" => Ok(f64::INFINITY),
        Value::String(s) if s == "-inf" => Ok(f64::NEG_INFINITY),
        other => Err(format!("not a number: {other}").into()),
    }
}

/// A vector of the error cases, rounded to f32 as JavaScript's
/// `Float32Array` rounds (to nearest).
fn floats(v: &Value) -> Result<Vec<f32>, Box<dyn Error>> {
    let items = v.as_array().ok_or("not an array")?;
    items.iter().map(|x| Ok(number(x)? as f32)).collect()
}

/// The native [`Method`] for options in the npm package's spelling
/// (camelCase keys, which the specification reads as they are), built by
/// the one specification of a call; `requireUnit: true` is the earlier
/// spelling of `normalization: 'require_unit'`. Errors are the
/// specification's (kind `option`).
fn method_of(options: &Value) -> Result<Result<Method, mempursuit::SpecError>, Box<dyn Error>> {
    let mut spec = SelectSpec::default();
    let map = options.as_object().ok_or("options: not an object")?;
    for (key, v) in map {
        let set = match (key.as_str(), v) {
            ("requireUnit", Value::Bool(true)) => {
                spec.set("normalization", SpecValue::Text("require_unit"))
            }
            ("requireUnit", _) => Ok(()),
            (_, Value::Bool(b)) => spec.set(key, SpecValue::Bool(*b)),
            (_, Value::String(t)) if t != "NaN" && t != "inf" && t != "-inf" => {
                spec.set(key, SpecValue::Text(t))
            }
            _ => spec.set(key, SpecValue::Number(number(v)?)),
        };
        if let Err(e) = set {
            return Ok(Err(e));
        }
    }
    Ok(spec.method())
}

/// Invalid calls with the native message of each. Every case names its
/// method (the npm package's default was paper mode; the specification's
/// is the recommended setting).
fn error_cases(sel: &mut Selector) -> Result<Vec<Value>, Box<dyn Error>> {
    let unit = json!([1, 0, 0, 1]);
    let cases = [
        (
            "non-finite query",
            json!(["NaN", 1]),
            unit.clone(),
            None,
            json!({"method": "pursuit"}),
        ),
        (
            "non-finite candidate",
            json!([1, 0]),
            json!([1, 0, "inf", 0]),
            None,
            json!({"method": "topk"}),
        ),
        (
            "zero query",
            json!([0, 0]),
            unit.clone(),
            None,
            json!({"method": "pursuit"}),
        ),
        (
            "zero candidate",
            json!([1, 0]),
            json!([1, 0, 0, 0]),
            None,
            json!({"method": "mmr"}),
        ),
        (
            "tiny query norm",
            json!([1e-13, 0]),
            unit.clone(),
            None,
            json!({"method": "pursuit"}),
        ),
        (
            "not unit",
            json!([2, 0]),
            unit.clone(),
            None,
            json!({"method": "pursuit", "requireUnit": true}),
        ),
        (
            "shape",
            json!([1, 0]),
            json!([1, 0, 0, 1, 0]),
            None,
            json!({"method": "pursuit"}),
        ),
        (
            "empty query",
            json!([]),
            json!([1, 0]),
            None,
            json!({"method": "topk"}),
        ),
        (
            "relevance length",
            json!([1, 0]),
            unit.clone(),
            Some(json!([1])),
            json!({"method": "pursuit"}),
        ),
        (
            "non-finite relevance",
            json!([1, 0]),
            unit.clone(),
            Some(json!([1, "NaN"])),
            json!({"method": "topk"}),
        ),
        (
            "gamma 0",
            json!([1, 0]),
            unit.clone(),
            None,
            json!({"method": "pursuit", "gamma": 0}),
        ),
        (
            "gamma above 1",
            json!([1, 0]),
            unit.clone(),
            None,
            json!({"method": "pursuit", "gamma": 1.5}),
        ),
        (
            "centroid gamma NaN",
            json!([1, 0]),
            unit.clone(),
            None,
            json!({"method": "centroid", "gamma": "NaN"}),
        ),
        (
            "negative ridge",
            json!([1, 0]),
            unit.clone(),
            None,
            json!({"method": "pursuit", "ridge": -1}),
        ),
        (
            "MMR lambda",
            json!([1, 0]),
            unit.clone(),
            None,
            json!({"method": "mmr", "mmrLambda": 1.5}),
        ),
    ];
    let mut out = Vec::new();
    for (name, query, candidates, relevance, options) in cases {
        let (q, c) = (floats(&query)?, floats(&candidates)?);
        let rel = relevance.as_ref().map(floats).transpose()?;
        let mut input = Input::new(&q, &c);
        if let Some(r) = &rel {
            input = input.with_relevance(mempursuit::Relevance::Scores(r));
        }
        let (message, kind) = match method_of(&options)? {
            Err(e) => (e.to_string(), e.kind()),
            Ok(method) => match sel.select(&input, 1, &method) {
                Ok(_) => {
                    return Err(format!("error case {name:?} selected without an error").into())
                }
                Err(e) => (e.to_string(), e.kind()),
            },
        };
        out.push(json!({
            "name": name, "query": query, "candidates": candidates, "relevance": relevance,
            "k": 1, "options": options, "message": message, "code": kind.as_str(),
        }));
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
        "errors": error_cases(&mut sel)?,
    });
    println!("{}", serde_json::to_string(&out)?);
    Ok(())
}
