//! The conformance suite: one committed file of test vectors,
//! `tests/conformance/vectors.json`, produced by the Rust library and checked
//! by every binding (this test, `python/tests/test_conformance.py`,
//! `wasm/test/conformance.test.mjs`): the same specification on the same
//! data gives the same picks, weights, steps and stop reason — or the same
//! error kind and message — in Rust, Python and JavaScript.
//!
//! This test rebuilds every vector with `Selector::select_spec` and compares
//! it with the committed file: picks, stop reasons, flags and error
//! messages exactly, numbers to 1e-9 (the file is written on one machine;
//! f32 kernels with and without FMA may differ in the last bits). To
//! rewrite the file after an intended change of behaviour:
//!
//! ```text
//! MEMPURSUIT_BLESS=1 cargo test -p mempursuit-tests --test conformance
//! ```
//!
//! File format (`tests/conformance/README.md` has the same): `cases`, each
//! with `name`, `query` (d numbers), `candidates` (P rows of d numbers),
//! `relevance` (P numbers or null), `costs` (P numbers, only in the cases
//! that have them; with the option `cost_budget`), `k`, `options` (the specification as a
//! map: `{"method": "mmr", "mmr_lambda": 0.3}`, keys snake_case),
//! `dtype` (`"float32"` or `"float16"`: the element type the caller holds
//! the candidates in; every value is exact in it), and either `expect`
//! (`picks`, `weights`, `stop_reason`, `excluded`, `skipped`, `steps` with
//! the fields of `mempursuit::Step::FIELDS`) or `error` (`kind`,
//! `message`). Non-finite inputs are the strings `"nan"`, `"inf"`, `"-inf"`.

use std::path::PathBuf;

use mempursuit::half::f16;
use mempursuit::{CallData, FieldValue, Pool, SelectSpec, Selector, Step};
use mempursuit_tests::{fixture, random};
use serde_json::{json, Map, Value};

/// One case's inputs.
struct Case {
    name: String,
    query: Vec<f32>,
    /// Rows of d values.
    candidates: Vec<Vec<f32>>,
    relevance: Option<Vec<f32>>,
    /// Each candidate's cost (with the option `cost_budget`).
    costs: Option<Vec<f32>>,
    k: usize,
    options: Value,
    dtype: &'static str,
}

fn num(x: f32) -> Value {
    if x.is_nan() {
        json!("nan")
    } else if x.is_infinite() {
        json!(if x > 0.0 { "inf" } else { "-inf" })
    } else {
        // The f32 written as the f64 it widens to: every reader that parses
        // the decimal as a double and narrows it gets this f32 back.
        json!(x as f64)
    }
}

fn nums(v: &[f32]) -> Value {
    Value::Array(v.iter().map(|&x| num(x)).collect())
}

fn f64_or_str(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else if x.is_nan() {
        json!("nan")
    } else {
        json!(if x > 0.0 { "inf" } else { "-inf" })
    }
}

fn rows(flat: &[f32], d: usize) -> Vec<Vec<f32>> {
    flat.chunks(d).map(<[f32]>::to_vec).collect()
}

fn unit(v: &[f64]) -> Vec<f32> {
    random::normalized(v)
}

/// q = (e0 + e1)/√2; three paraphrases of fact A ≈ e0 (cosine 0.75–0.76
/// to q), one record of fact B ≈ e1 (cosine 0.71): a composing reader
/// returns A and B at K = 2.
fn textbook() -> (Vec<f32>, Vec<Vec<f32>>) {
    let s = std::f64::consts::FRAC_1_SQRT_2;
    let q = unit(&[s, s, 0.0, 0.0]);
    let pool = vec![
        unit(&[1.0, 0.07, 0.0, 0.0]),
        unit(&[1.0, 0.08, 0.05, 0.0]),
        unit(&[1.0, 0.075, 0.0, 0.04]),
        unit(&[0.0, 1.0, 0.0, 0.05]),
    ];
    (q, pool)
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let mut add = |name: &str,
                   query: &[f32],
                   candidates: &[Vec<f32>],
                   relevance: Option<&[f32]>,
                   k: usize,
                   options: Value| {
        out.push(Case {
            name: name.to_owned(),
            query: query.to_vec(),
            candidates: candidates.to_vec(),
            relevance: relevance.map(<[f32]>::to_vec),
            costs: None,
            k,
            options,
            dtype: "float32",
        });
    };

    // Every method and storage on a clustered pool (P = 14, d = 8), by
    // cosine, by ranked retriever scores with ties, raw, in pool order.
    let (q, flat) = random::clustered_pool(20261201, 14, 8, 3, 0.35);
    let pool = rows(&flat, 8);
    let scores: Vec<f32> = (0..14).map(|i| ((i * 7) % 5) as f32 * 0.01).collect();
    let methods = [
        json!({}),
        json!({"method": "recommended"}),
        json!({"method": "pursuit"}),
        json!({"method": "centroid"}),
        json!({"method": "centroid", "gamma": 0.2}),
        json!({"method": "topk"}),
        json!({"method": "mmr"}),
        json!({"method": "mmr", "mmr_lambda": 0.3}),
    ];
    for storage in ["f32", "f16", "bf16", "int8"] {
        for m in &methods {
            let mut o = m.as_object().cloned().unwrap_or_default();
            if storage != "f32" {
                o.insert("storage".into(), json!(storage));
            }
            let label = m["method"].as_str().unwrap_or("default");
            let opts = Value::Object(o);
            add(
                &format!("clustered/{label}/{storage}/cosine"),
                &q,
                &pool,
                None,
                5,
                opts.clone(),
            );
            add(
                &format!("clustered/{label}/{storage}/ranked-scores"),
                &q,
                &pool,
                Some(&scores),
                5,
                opts.clone(),
            );
            if storage == "f32" {
                let mut pool_order = opts.as_object().cloned().unwrap_or_default();
                pool_order.insert("pool_order".into(), json!(true));
                add(
                    &format!("clustered/{label}/pool-order"),
                    &q,
                    &pool,
                    None,
                    5,
                    Value::Object(pool_order),
                );
                if label != "default" && label != "recommended" {
                    let mut raw = opts.as_object().cloned().unwrap_or_default();
                    raw.insert("raw_relevance".into(), json!(true));
                    add(
                        &format!("clustered/{label}/raw-scores"),
                        &q,
                        &pool,
                        Some(&scores),
                        5,
                        Value::Object(raw),
                    );
                }
            }
        }
    }
    // All-equal scores: the picks still follow the query.
    let equal = vec![0.5f32; 14];
    for m in ["recommended", "topk", "pursuit", "mmr"] {
        add(
            &format!("clustered/{m}/equal-scores"),
            &q,
            &pool,
            Some(&equal),
            4,
            json!({"method": m}),
        );
    }
    // The pursuit's options.
    for (label, o) in [
        ("adaptive", json!({"method": "pursuit", "adaptive": true})),
        (
            "centroid-adaptive",
            json!({"method": "centroid", "adaptive": true}),
        ),
        (
            "fill",
            json!({"method": "pursuit", "at_pool_optimum": "fill", "optimum_tolerance": 1e-3}),
        ),
        (
            "stop",
            json!({"method": "pursuit", "at_pool_optimum": "stop", "optimum_tolerance": 1e-3}),
        ),
        (
            "ridge",
            json!({"method": "pursuit", "ridge": 0.05, "gamma": 0.7}),
        ),
        ("ridge-inf", json!({"method": "pursuit", "ridge": "inf"})),
        (
            "require-unit",
            json!({"method": "pursuit", "normalization": "require_unit"}),
        ),
    ] {
        add(&format!("clustered/{label}"), &q, &pool, None, 10, o);
    }

    // The textbook case of repeated memories, every method's default.
    let (tq, tpool) = textbook();
    for m in ["recommended", "pursuit", "centroid", "topk", "mmr"] {
        for k in [2, 3] {
            add(
                &format!("textbook/{m}/k{k}"),
                &tq,
                &tpool,
                None,
                k,
                json!({"method": m}),
            );
        }
    }
    add("textbook/default/k2", &tq, &tpool, None, 2, json!({}));

    // Exact duplicates: dependent picks kept (flagged) or skipped.
    let mut dup = tpool.clone();
    dup.push(tpool[1].clone());
    dup.push(tpool[3].clone());
    for dp in ["keep", "skip"] {
        add(
            &format!("duplicates/pursuit/{dp}"),
            &tq,
            &dup,
            None,
            5,
            json!({"method": "pursuit", "dependent_picks": dp}),
        );
    }

    // A real pool: the first query of the committed HotpotQA mini fixture,
    // its first 20 candidates (all-MiniLM-L6-v2, d = 384), by cosine and by
    // a retriever order.
    if let Some(dir) = fixture::find(&fixture::mini_candidates()) {
        let fx = fixture::Fixture::load(&dir).expect("mini fixture");
        let d = fx.dim();
        let full = fx.pool(0);
        let p = (full.len() / d).min(20);
        let rpool = rows(&full[..p * d], d);
        let rq = fx.query(0).to_vec();
        let retriever: Vec<f32> = (0..p)
            .map(|i| 1.0 / (60.0 + ((i * 3) % p) as f32))
            .collect();
        for m in ["recommended", "pursuit", "centroid", "topk", "mmr"] {
            add(
                &format!("hotpotqa/{m}/cosine"),
                &rq,
                &rpool,
                None,
                5,
                json!({"method": m}),
            );
            add(
                &format!("hotpotqa/{m}/retriever"),
                &rq,
                &rpool,
                Some(&retriever),
                5,
                json!({"method": m}),
            );
        }
    }

    // Errors: the specification.
    for (label, o) in [
        ("unknown-method", json!({"method": "nope"})),
        ("unknown-option", json!({"method": "pursuit", "gama": 0.3})),
        ("gamma-range", json!({"method": "pursuit", "gamma": 2})),
        ("gamma-type", json!({"method": "pursuit", "gamma": "big"})),
        ("gamma-text", json!({"method": "pursuit", "gamma": "0.3"})),
        (
            "cost-budget-text",
            json!({"method": "pursuit", "cost_budget": "3"}),
        ),
        ("ridge-range", json!({"method": "pursuit", "ridge": -1})),
        ("mmr-range", json!({"method": "mmr", "mmr_lambda": 1.5})),
        ("not-applicable", json!({"method": "topk", "gamma": 0.5})),
        ("storage-name", json!({"storage": "f8"})),
        (
            "dependent-name",
            json!({"method": "pursuit", "dependent_picks": "maybe"}),
        ),
        (
            "raw-needs-scores",
            json!({"method": "topk", "raw_relevance": true}),
        ),
    ] {
        add(&format!("error/{label}"), &tq, &tpool, None, 2, o);
    }
    add(
        "error/pool-order-with-scores",
        &tq,
        &tpool,
        Some(&[0.1, 0.2, 0.3, 0.4]),
        2,
        json!({"method": "topk", "pool_order": true}),
    );
    // Errors: the data.
    let mut nan_pool = tpool.clone();
    nan_pool[1][2] = f32::NAN;
    add("error/candidate-nan", &tq, &nan_pool, None, 2, json!({}));
    add(
        "exclude/candidate-nan",
        &tq,
        &nan_pool,
        None,
        2,
        json!({"method": "pursuit", "invalid": "exclude"}),
    );
    add("error/query-zero", &[0.0; 4], &tpool, None, 2, json!({}));
    let mut huge = tpool.clone();
    huge[2] = vec![1e13, 0.0, 0.0, 0.0];
    add("error/candidate-norm", &tq, &huge, None, 2, json!({}));
    add(
        "error/relevance-length",
        &tq,
        &tpool,
        Some(&[0.1, 0.2, 0.3]),
        2,
        json!({}),
    );
    add(
        "error/relevance-nan",
        &tq,
        &tpool,
        Some(&[0.1, f32::NAN, 0.3, 0.4]),
        2,
        json!({}),
    );
    let mut big = tpool.clone();
    big[3] = vec![0.0, 70000.0, 0.0, 3500.0];
    add(
        "error/f16-range",
        &tq,
        &big,
        None,
        2,
        json!({"storage": "f16"}),
    );
    add(
        "f32/unnormalized-row",
        &tq,
        &big,
        None,
        2,
        json!({"method": "pursuit"}),
    );
    add(
        "error/require-unit",
        &tq,
        &big,
        None,
        2,
        json!({"normalization": "require_unit"}),
    );

    // The caller holds float16 candidates (Python: a float16 array).
    let half_pool: Vec<Vec<f32>> = pool
        .iter()
        .map(|r| r.iter().map(|&x| f16::from_f32(x).to_f32()).collect())
        .collect();
    for storage in ["f16", "f32"] {
        out.push(Case {
            name: format!("float16-input/pursuit/{storage}"),
            query: q.clone(),
            candidates: half_pool.clone(),
            relevance: None,
            costs: None,
            k: 5,
            options: json!({"method": "pursuit", "storage": storage}),
            dtype: "float16",
        });
    }

    // Budgets in tokens: each candidate's cost and the option cost_budget.
    let costed = |name: String,
                  query: &[f32],
                  candidates: &[Vec<f32>],
                  relevance: Option<&[f32]>,
                  costs: &[f32],
                  k: usize,
                  options: Value| Case {
        name,
        query: query.to_vec(),
        candidates: candidates.to_vec(),
        relevance: relevance.map(<[f32]>::to_vec),
        costs: Some(costs.to_vec()),
        k,
        options,
        dtype: "float32",
    };
    let tokens: Vec<f32> = (0..14).map(|i| ((i * 37) % 23 + 5) as f32).collect();
    let with = |o: &Value, extra: &[(&str, Value)]| {
        let mut m = o.as_object().cloned().unwrap_or_default();
        for (k, v) in extra {
            m.insert((*k).to_owned(), v.clone());
        }
        Value::Object(m)
    };
    for m in &methods {
        let label = m["method"].as_str().unwrap_or("default");
        let storages: &[&str] = match label {
            "topk" | "mmr" => &["f32"],
            _ => &["f32", "int8"],
        };
        for storage in storages {
            let mut o = with(m, &[("cost_budget", json!(60))]);
            if *storage != "f32" {
                o = with(&o, &[("storage", json!(storage))]);
            }
            // K = 14 (the pool): the cost budget alone decides.
            out.push(costed(
                format!("costs/{label}/{storage}/cosine"),
                &q,
                &pool,
                None,
                &tokens,
                14,
                o.clone(),
            ));
            if *storage == "f32" {
                out.push(costed(
                    format!("costs/{label}/ranked-scores"),
                    &q,
                    &pool,
                    Some(&scores),
                    &tokens,
                    14,
                    o.clone(),
                ));
                // K caps the picks before the cost budget is spent.
                out.push(costed(
                    format!("costs/{label}/k-caps"),
                    &q,
                    &pool,
                    None,
                    &tokens,
                    2,
                    o.clone(),
                ));
                // Unit costs and C = 4: the picks of K = 4.
                out.push(costed(
                    format!("costs/{label}/unit-costs"),
                    &q,
                    &pool,
                    None,
                    &[1.0; 14],
                    14,
                    with(m, &[("cost_budget", json!(4))]),
                ));
            }
        }
    }
    // Zero-cost candidates always fit; a budget below every cost selects
    // nothing; the pursuit's options with costs.
    let mut zero = tokens.clone();
    for i in [3, 8, 11] {
        zero[i] = 0.0;
    }
    for m in ["recommended", "pursuit", "topk", "mmr"] {
        out.push(costed(
            format!("costs/{m}/zero-costs"),
            &q,
            &pool,
            None,
            &zero,
            14,
            json!({"method": m, "cost_budget": 0}),
        ));
        out.push(costed(
            format!("costs/{m}/below-every-cost"),
            &q,
            &pool,
            None,
            &tokens,
            5,
            json!({"method": m, "cost_budget": 4.5}),
        ));
    }
    for (label, o) in [
        (
            "adaptive",
            json!({"method": "pursuit", "adaptive": true, "cost_budget": 60}),
        ),
        (
            "fill",
            json!({"method": "pursuit", "at_pool_optimum": "fill", "optimum_tolerance": 1e-3, "cost_budget": 60}),
        ),
        (
            "skip",
            json!({"method": "pursuit", "dependent_picks": "skip", "cost_budget": 60}),
        ),
    ] {
        out.push(costed(
            format!("costs/pursuit/{label}"),
            &q,
            &pool,
            None,
            &tokens,
            14,
            o,
        ));
    }
    // Errors: costs without a budget and the reverse, a bad budget, bad
    // costs.
    let (tq, tpool) = textbook();
    let four = [10.0f32, 20.0, 30.0, 40.0];
    for (label, costs, o) in [
        ("costs-without-budget", Some(&four[..]), json!({})),
        ("budget-without-costs", None, json!({"cost_budget": 50})),
        (
            "budget-negative",
            Some(&four[..]),
            json!({"cost_budget": -1}),
        ),
        ("budget-nan", Some(&four[..]), json!({"cost_budget": "nan"})),
        (
            "costs-length",
            Some(&four[..3]),
            json!({"method": "topk", "cost_budget": 50}),
        ),
        (
            "cost-negative",
            Some(&[10.0, -2.0, 30.0, 40.0][..]),
            json!({"method": "mmr", "cost_budget": 50}),
        ),
        (
            "cost-inf",
            Some(&[10.0, 20.0, f32::INFINITY, 40.0][..]),
            json!({"method": "pursuit", "cost_budget": 50}),
        ),
    ] {
        out.push(Case {
            costs: costs.map(<[f32]>::to_vec),
            ..costed(format!("error/{label}"), &tq, &tpool, None, &[], 2, o)
        });
    }
    out
}

fn run(case: &Case, selector: &mut Selector) -> Value {
    let spec: Result<SelectSpec, _> = serde_json::from_value(case.options.clone());
    let spec = match spec {
        Ok(s) => s,
        Err(e) => {
            // serde wraps the SpecError's message; rebuild it for the kind.
            return json!({"error": {"kind": "option", "message": e.to_string()}});
        }
    };
    let flat: Vec<f32> = case.candidates.concat();
    let half: Vec<f16>;
    let pool = if case.dtype == "float16" {
        half = flat.iter().map(|&x| f16::from_f32(x)).collect();
        Pool::F16(&half)
    } else {
        Pool::F32(&flat)
    };
    let data = CallData::new(&case.query, pool)
        .with_relevance(case.relevance.as_deref())
        .with_costs(case.costs.as_deref());
    match selector.select_spec(&spec, data, case.k) {
        Err(e) => json!({"error": {"kind": e.kind().as_str(), "message": e.to_string()}}),
        Ok(sel) => {
            let steps: Vec<Value> = sel
                .steps
                .iter()
                .map(|s| {
                    let map: Map<String, Value> = Step::FIELDS
                        .iter()
                        .map(|f| {
                            let v = match f.value(s) {
                                FieldValue::Integer(i) => json!(i),
                                FieldValue::Flag(b) => json!(b),
                                FieldValue::Refit(r) => json!(r.as_str()),
                                other => f64_or_str(other.as_f64()),
                            };
                            (f.name.to_owned(), v)
                        })
                        .collect();
                    Value::Object(map)
                })
                .collect();
            json!({"expect": {
                "picks": sel.picks,
                "weights": sel.weights,
                "stop_reason": sel.stop.as_str(),
                "excluded": sel.excluded,
                "skipped": sel.skipped,
                "steps": steps,
            }})
        }
    }
}

fn vectors_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("conformance/vectors.json")
}

fn build() -> Value {
    let mut selector = Selector::new();
    // Inputs shared by several cases are written once, under `inputs`.
    let mut inputs: Vec<(String, Vec<f32>, Vec<Vec<f32>>)> = Vec::new();
    let cases: Vec<Value> = cases()
        .iter()
        .map(|c| {
            let found = inputs
                .iter()
                .find(|(_, q, rows)| *q == c.query && *rows == c.candidates);
            let input = match found {
                Some((name, _, _)) => name.clone(),
                None => {
                    let stem = c.name.split('/').next().unwrap_or("input");
                    let name = format!("{stem}-{}", inputs.len());
                    inputs.push((name.clone(), c.query.clone(), c.candidates.clone()));
                    name
                }
            };
            let mut v = json!({
                "name": c.name,
                "input": input,
                "relevance": c.relevance.as_deref().map(nums),
                "k": c.k,
                "options": c.options,
                "dtype": c.dtype,
            });
            if let Some(costs) = &c.costs {
                v["costs"] = nums(costs);
            }
            let result = run(c, &mut selector);
            for (key, value) in result.as_object().expect("object") {
                v[key] = value.clone();
            }
            v
        })
        .collect();
    let inputs: Map<String, Value> = inputs
        .into_iter()
        .map(|(name, q, rows)| {
            let rows: Vec<Value> = rows.iter().map(|r| nums(r)).collect();
            (name, json!({"query": nums(&q), "candidates": rows}))
        })
        .collect();
    json!({
        "about": "MemPursuit conformance vectors: produced by `MEMPURSUIT_BLESS=1 cargo test -p mempursuit-tests --test conformance`; checked by cargo test, pytest and node --test. Format: tests/conformance/README.md.",
        "step_fields": Step::FIELDS.map(|f| f.name),
        "inputs": inputs,
        "cases": cases,
    })
}

/// The file's text: one input and one case per line, so that a change of
/// behaviour shows as a readable diff.
fn to_text(v: &Value) -> String {
    let mut out = String::from("{\n");
    let line = |v: &Value| serde_json::to_string(v).unwrap();
    out += &format!("  \"about\": {},\n", line(&v["about"]));
    out += &format!("  \"step_fields\": {},\n", line(&v["step_fields"]));
    out += "  \"inputs\": {\n";
    let inputs = v["inputs"].as_object().unwrap();
    for (i, (name, input)) in inputs.iter().enumerate() {
        let sep = if i + 1 < inputs.len() { "," } else { "" };
        out += &format!("    {}: {}{sep}\n", line(&json!(name)), line(input));
    }
    out += "  },\n  \"cases\": [\n";
    let cases = v["cases"].as_array().unwrap();
    for (i, case) in cases.iter().enumerate() {
        let sep = if i + 1 < cases.len() { "," } else { "" };
        out += &format!("    {}{sep}\n", line(case));
    }
    out += "  ]\n}\n";
    out
}

/// Numbers within 1e-9 (absolute, or relative above 1); everything else
/// exactly.
fn same(a: &Value, b: &Value, path: &str, diffs: &mut Vec<String>) {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            if (x - y).abs() > 1e-9 * x.abs().max(1.0) {
                diffs.push(format!("{path}: {x} vs {y}"));
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (x, y)) in x.iter().zip(y).enumerate() {
                same(x, y, &format!("{path}[{i}]"), diffs);
            }
        }
        (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
            for (k, xv) in x {
                match y.get(k) {
                    Some(yv) => same(xv, yv, &format!("{path}.{k}"), diffs),
                    None => diffs.push(format!("{path}.{k}: missing")),
                }
            }
        }
        _ if a == b => {}
        _ => diffs.push(format!("{path}: {a} vs {b}")),
    }
}

#[test]
fn the_committed_vectors_are_what_the_library_computes() {
    let built = build();
    let path = vectors_path();
    if std::env::var_os("MEMPURSUIT_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text = to_text(&built);
        // The text form is the same JSON (serde_json's default parser reads
        // some decimals one ulp off, hence `same`).
        let mut diffs = Vec::new();
        same(
            &serde_json::from_str(&text).unwrap(),
            &built,
            "",
            &mut diffs,
        );
        assert!(diffs.is_empty(), "{diffs:?}");
        std::fs::write(&path, text).unwrap();
        eprintln!("wrote {}", path.display());
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; write it with MEMPURSUIT_BLESS=1 cargo test -p mempursuit-tests --test conformance",
            path.display()
        )
    });
    let committed: Value = serde_json::from_str(&text).unwrap();
    let mut diffs = Vec::new();
    same(&committed, &built, "", &mut diffs);
    assert!(
        diffs.is_empty(),
        "{} differences between {} and the library (first 20):\n{}\nIf the change of behaviour is intended, rewrite the file with MEMPURSUIT_BLESS=1.",
        diffs.len(),
        path.display(),
        diffs.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn the_vectors_cover_every_method_storage_and_relevance_kind() {
    let built = build();
    let cases = built["cases"].as_array().unwrap();
    let names: Vec<&str> = cases.iter().map(|c| c["name"].as_str().unwrap()).collect();
    for m in ["recommended", "pursuit", "centroid", "topk", "mmr"] {
        for storage in ["f32", "f16", "bf16", "int8"] {
            for rel in ["cosine", "ranked-scores"] {
                let name = format!("clustered/{m}/{storage}/{rel}");
                assert!(names.contains(&name.as_str()), "missing {name}");
            }
        }
    }
    let errors = cases.iter().filter(|c| c.get("error").is_some()).count();
    assert!(errors >= 15, "{errors} error cases");
    // Every error case has a kind from the three.
    for c in cases.iter().filter_map(|c| c.get("error")) {
        let kind = c["kind"].as_str().unwrap();
        assert!(["input", "option", "capacity"].contains(&kind), "{kind}");
    }
}
