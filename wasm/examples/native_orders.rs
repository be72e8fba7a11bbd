//! Native reference orders and error messages for the npm package's tests
//! (`wasm/test/native.test.mjs`).
//!
//! Runs the selectors natively (the `mempursuit` crate's heap-backed
//! `Selector` and its one specification of a call, `Selector::select_spec`)
//! on
//! 1. every query of a HotpotQA fixture folder (default: the committed
//!    `cli/data/hotpotqa-mini`, 24 queries) at K = 10, and
//! 2. eight seeded synthetic pools (P = 200, K = 20, d = 384, random unit
//!    vectors that `wasm/synthetic.mjs` regenerates bit for bit),
//!
//! with every method by name at its defaults (`recommended`, `pursuit`,
//! `centroid`, `topk`, `mmr`), and 3. the data of the `embedded-check/`
//! firmware (pursuit and top-K), and prints the picks (pool-local indices,
//! entry order) and the weights as JSON on stdout; 4. a list of invalid
//! calls, each with its input, its options in the npm package's spelling
//! (camelCase keys, set through `SelectSpec::set` as the package sets them)
//! and the native error kind and message, which the package must throw word
//! for word.
//!
//! ```text
//! cargo run -p mempursuit-wasm --example native_orders -- [--strict-order] [FIXTURE_DIR] > target/native-orders.json
//! ```
//!
//! `--strict-order` runs every call with the `StrictOrder` executor (the
//! unfused kernels, the bits of the WebAssembly module): the reference of
//! `wasm/test/native.test.mjs` (`npm test` in `wasm/`). Without it the
//! calls run with `Serial` (the CPU's fastest kernels, as the Python
//! package runs them): the reference of `python/tests/test_rust_agreement.py`.

mod common;

use mempursuit::spec::Value as SpecValue;
use std::sync::atomic::{AtomicBool, Ordering};

use mempursuit::{
    npy, CallData, Executor, MethodName, Pool, SelectSpec, Selector, Serial, StrictOrder,
};

/// Whether the calls run with `StrictOrder` (`--strict-order`, the npm
/// package's reference): the unfused kernels, the same bits as the
/// WebAssembly module and the firmware (the core's `kernels` docs).
/// Without it they run with `Serial`, the CPU's fastest kernels, as the
/// Python package does (its reference).
static STRICT: AtomicBool = AtomicBool::new(false);

/// The executor of every call here (see [`STRICT`]).
fn executor() -> Box<dyn Executor> {
    if STRICT.load(Ordering::Relaxed) {
        Box::new(StrictOrder(Serial))
    } else {
        Box::new(Serial)
    }
}
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

/// Runs every method by name on one input and returns {method: picks,
/// ..., "<method>_weights": [...] for the methods with weights}.
fn run_all(
    sel: &mut Selector,
    query: &[f32],
    pool: &[f32],
    k: usize,
) -> Result<serde_json::Map<String, Value>, Box<dyn Error>> {
    let mut out = serde_json::Map::new();
    for name in MethodName::ALL {
        let spec = SelectSpec::of(name);
        let s = sel.select_spec_with(
            &spec,
            CallData::new(query, Pool::F32(pool)),
            k,
            &mut *executor(),
        )?;
        out.insert(name.as_str().into(), json!(s.picks));
        if !s.weights.is_empty() {
            out.insert(format!("{name}_weights"), json!(s.weights));
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

/// The specification for options in the npm package's spelling, set as
/// the package sets them: each entry by its key, numbers as numbers (the
/// strings "NaN", "inf", "-inf" too), booleans as booleans, other strings
/// as text.
fn spec_of(options: &Value) -> Result<Result<SelectSpec, mempursuit::SpecError>, Box<dyn Error>> {
    let mut spec = SelectSpec::default();
    for (key, v) in options.as_object().ok_or("options: not an object")? {
        let value = match v {
            Value::Bool(b) => SpecValue::Bool(*b),
            Value::String(s) if !matches!(s.as_str(), "NaN" | "inf" | "-inf") => SpecValue::Text(s),
            other => SpecValue::Number(number(other)?),
        };
        if let Err(e) = spec.set_typed(key, value) {
            return Ok(Err(e));
        }
    }
    Ok(Ok(spec))
}

/// Invalid calls with the native message of each.
fn error_cases(sel: &mut Selector) -> Result<Vec<Value>, Box<dyn Error>> {
    let unit = json!([1, 0, 0, 1]);
    let cases = [
        (
            "non-finite query",
            json!(["NaN", 1]),
            unit.clone(),
            None,
            json!({}),
        ),
        (
            "non-finite candidate",
            json!([1, 0]),
            json!([1, 0, "inf", 0]),
            None,
            json!({"method": "topk"}),
        ),
        ("zero query", json!([0, 0]), unit.clone(), None, json!({})),
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
            json!({}),
        ),
        (
            "not unit",
            json!([2, 0]),
            unit.clone(),
            None,
            json!({"normalization": "require_unit"}),
        ),
        (
            "shape",
            json!([1, 0]),
            json!([1, 0, 0, 1, 0]),
            None,
            json!({}),
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
            json!({}),
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
        (
            "unknown option",
            json!([1, 0]),
            unit.clone(),
            None,
            json!({"method": "mmr", "lambda": 0.5}),
        ),
        (
            "unknown method",
            json!([1, 0]),
            unit.clone(),
            None,
            json!({"method": "bm25"}),
        ),
        (
            "not applicable, camelCase",
            json!([1, 0]),
            unit.clone(),
            None,
            json!({"method": "topk", "mmrLambda": 0.3}),
        ),
        (
            "a number for a name",
            json!([1, 0]),
            unit.clone(),
            None,
            json!({"storage": 16}),
        ),
        (
            "text for a bool",
            json!([1, 0]),
            unit.clone(),
            None,
            json!({"method": "pursuit", "adaptive": "yes"}),
        ),
        (
            "raw relevance without scores",
            json!([1, 0]),
            unit.clone(),
            None,
            json!({"method": "topk", "rawRelevance": true}),
        ),
        (
            "f16 range",
            json!([1, 0]),
            json!([1, 0, 70000, 1]),
            None,
            json!({"storage": "f16"}),
        ),
    ];
    let mut out = Vec::new();
    for (name, query, candidates, relevance, options) in cases {
        let (q, c) = (floats(&query)?, floats(&candidates)?);
        let rel = relevance.as_ref().map(floats).transpose()?;
        let outcome = match spec_of(&options)? {
            Err(e) => Err((e.kind(), e.to_string())),
            Ok(spec) => sel
                .select_spec_with(
                    &spec,
                    CallData::new(&q, Pool::F32(&c)).with_relevance(rel.as_deref()),
                    1,
                    &mut *executor(),
                )
                .map_err(|e| (e.kind(), e.to_string())),
        };
        let Err((kind, message)) = outcome else {
            return Err(format!("error case {name:?} selected without an error").into());
        };
        out.push(json!({
            "name": name, "query": query, "candidates": candidates, "relevance": relevance,
            "k": 1, "options": options, "message": message, "code": kind.as_str(),
        }));
    }
    Ok(out)
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(at) = args.iter().position(|a| a == "--strict-order") {
        args.remove(at);
        STRICT.store(true, Ordering::Relaxed);
    }
    let dir = PathBuf::from(
        args.first()
            .cloned()
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
    let mut run = |spec: SelectSpec| {
        let data = CallData::new(&query, Pool::F32(&pool));
        sel.select_spec_with(&spec, data, EMB_K, &mut *executor())
    };
    let embedded = json!({
        "p": EMB_P, "d": EMB_D, "k": EMB_K,
        "pursuit": run(SelectSpec::paper())?.picks,
        "topk": run(SelectSpec::top_k())?.picks,
    });

    let out = json!({
        "generator": "wasm/examples/native_orders.rs",
        "target": std::env::consts::ARCH,
        "isa": executor().isa().name(),
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
