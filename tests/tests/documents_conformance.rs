//! Runs tests/conformance/documents.json against `mempursuit::documents`
//! (the same file is run by python/tests/test_documents.py and
//! wasm/test/documents.test.mjs). `MEMPURSUIT_BLESS=1` rewrites the picks
//! of the `select` cases from this implementation (review the diff).

use mempursuit::documents::{
    check_option_name, check_settings, parse_embedding, prepare, select_documents, DocumentError,
    DocumentSelection, DocumentSpec, MetaValue, ScoreKind, ScoresGiven, METADATA_KEY,
};
use mempursuit::spec::Value as Opt;
use mempursuit::{SelectSpec, Selector};
use serde_json::{json, Value};

fn spec(i: usize, v: &Value) -> Result<DocumentSpec, DocumentError> {
    let id = v.get("id").and_then(Value::as_str).map(str::to_owned);
    let embedding = match v.get("embedding") {
        None | Some(Value::Null) => None,
        Some(Value::String(t)) => Some(parse_embedding(t, i, id.as_deref())?),
        Some(Value::Array(a)) => Some(a.iter().map(|x| x.as_f64().unwrap() as f32).collect()),
        Some(other) => panic!("case embedding {other}"),
    };
    let score_kind = match v.get("score_kind").and_then(Value::as_str) {
        Some(k) => ScoreKind::parse(k)?,
        None => ScoreKind::None,
    };
    Ok(DocumentSpec {
        id,
        embedding,
        score: v.get("score").and_then(Value::as_f64),
        score_kind,
        cost: v.get("cost").and_then(Value::as_f64),
    })
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn documents(case: &Value) -> Result<Vec<DocumentSpec>, DocumentError> {
    case["documents"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, d)| spec(i, d))
        .collect()
}

/// The specification of a case's options, each name first checked by
/// `check_option_name` (as the bindings do).
fn select_spec(options: &Value) -> Result<SelectSpec, DocumentError> {
    let mut s = SelectSpec::default();
    for (key, v) in options.as_object().unwrap() {
        check_option_name(key)?;
        let value = match v {
            Value::Bool(b) => Opt::Bool(*b),
            Value::Number(n) => Opt::Number(n.as_f64().unwrap()),
            Value::String(t) => Opt::Text(t),
            other => panic!("option {key}: {other}"),
        };
        s.set_typed(key, value).map_err(|e| DocumentError {
            kind: e.kind(),
            index: None,
            id: None,
            argument: key.clone(),
            message: e.to_string(),
        })?;
    }
    Ok(s)
}

fn check_error(name: &str, e: &DocumentError, err: &Value) {
    assert_eq!(
        e.kind.as_str(),
        err["kind"].as_str().unwrap(),
        "{name}: {e}"
    );
    assert_eq!(
        e.index,
        err["index"].as_u64().map(|x| x as usize),
        "{name}: {e}"
    );
    assert_eq!(e.id.as_deref(), err["id"].as_str(), "{name}: {e}");
    assert_eq!(e.argument, err["argument"].as_str().unwrap(), "{name}: {e}");
}

fn meta_json(v: MetaValue) -> Value {
    match v {
        MetaValue::Count(n) => json!(n),
        MetaValue::Number(x) => json!(x),
        MetaValue::Null => Value::Null,
    }
}

/// The selection as the file writes it.
fn selection_json(s: &DocumentSelection) -> Value {
    let picks: Vec<Value> = s
        .picks
        .iter()
        .map(|p| {
            let record: serde_json::Map<String, Value> = p
                .metadata()
                .iter()
                .map(|&(k, v)| (k.to_owned(), meta_json(v)))
                .collect();
            json!({"index": p.index, "metadata": {METADATA_KEY: record}})
        })
        .collect();
    let dups: Vec<Value> = s.duplicates.iter().map(|&(a, b)| json!([a, b])).collect();
    json!({"picks": picks, "duplicates": dups, "stop_reason": s.stop_reason})
}

/// `got` equals `want`, numbers to 1e-6.
fn same(got: &Value, want: &Value) -> bool {
    match (got, want) {
        (Value::Number(a), Value::Number(b)) => {
            (a.as_f64().unwrap() - b.as_f64().unwrap()).abs() < 1e-6
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, x)| b.get(k).is_some_and(|y| same(x, y)))
        }
        _ => got == want,
    }
}

fn run_select(case: &mut Value, bless: bool) {
    let name = case["name"].as_str().unwrap().to_owned();
    let query: Vec<f32> = floats(&case["query"]).iter().map(|&x| x as f32).collect();
    let k = case["select"]["k"].as_u64().unwrap() as usize;
    let result = select_spec(&case["select"]["options"]).and_then(|s| {
        let docs = documents(case)?;
        select_documents(&mut Selector::new(), &query, &docs, k, &s)
    });
    if let Some(err) = case.get("error") {
        check_error(&name, &result.expect_err(&name), err);
        return;
    }
    let got = selection_json(&result.unwrap_or_else(|e| panic!("{name}: {e}")));
    if bless {
        case["expect"] = got;
        return;
    }
    assert!(same(&got, &case["expect"]), "{name}: got {got}");
}

fn run_settings(case: &Value) {
    let name = case["name"].as_str().unwrap();
    let s = &case["settings"];
    let scores = match s["scores"].as_str().unwrap() {
        "yes" => ScoresGiven::Yes,
        "no" => ScoresGiven::No,
        _ => ScoresGiven::Depends,
    };
    let result = select_spec(&s["options"]).and_then(|spec| {
        check_settings(
            &spec,
            scores,
            s["cost"].as_bool().unwrap(),
            s["budget_later"].as_bool().unwrap(),
        )
    });
    match case.get("error") {
        Some(err) => check_error(name, &result.expect_err(name), err),
        None => result.unwrap_or_else(|e| panic!("{name}: {e}")),
    }
}

fn run_prepare(case: &Value) {
    let name = case["name"].as_str().unwrap();
    let query: Vec<f32> = floats(&case["query"]).iter().map(|&x| x as f32).collect();
    let result = documents(case).and_then(|docs| prepare(&query, &docs));
    if let Some(err) = case.get("error") {
        check_error(name, &result.expect_err(name), err);
        return;
    }
    let p = result.unwrap_or_else(|e| panic!("{name}: {e}"));
    let ex = &case["expect"];
    let kept: Vec<usize> = floats(&ex["kept"]).iter().map(|&x| x as usize).collect();
    assert_eq!(p.kept, kept, "{name}");
    let dups: Vec<(usize, usize)> = ex["duplicates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p[0].as_u64().unwrap() as usize,
                p[1].as_u64().unwrap() as usize,
            )
        })
        .collect();
    assert_eq!(p.duplicates, dups, "{name}");
    assert_eq!(
        p.relevance_source,
        ex["relevance_source"].as_str().unwrap(),
        "{name}"
    );
    let rel = floats(&ex["relevance"]);
    assert_eq!(p.relevance.len(), rel.len(), "{name}");
    for (got, want) in p.relevance.iter().zip(&rel) {
        assert!((got - want).abs() < 1e-6, "{name}: {got} vs {want}");
    }
    assert_eq!(p.costs, ex.get("costs").map(floats), "{name}");
}

#[test]
fn documents_conformance() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/conformance/documents.json");
    let mut file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let bless = std::env::var_os("MEMPURSUIT_BLESS").is_some();
    let cases = file["cases"].as_array_mut().unwrap();
    assert_eq!(cases.len(), 26);
    let mut kinds = [0usize; 3];
    for case in cases.iter_mut() {
        if case.get("select").is_some() {
            kinds[1] += 1;
            run_select(case, bless);
        } else if case.get("settings").is_some() {
            kinds[2] += 1;
            run_settings(case);
        } else {
            kinds[0] += 1;
            run_prepare(case);
        }
    }
    assert_eq!(kinds, [8, 11, 7]);
    if bless {
        std::fs::write(path, serde_json::to_string_pretty(&file).unwrap() + "\n").unwrap();
    }
}
