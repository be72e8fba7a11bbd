//! Runs tests/conformance/documents.json against `mempursuit::documents`
//! (the same file is meant for the Python and JS bindings).

use mempursuit::documents::{parse_embedding, prepare, DocumentError, DocumentSpec, ScoreKind};
use serde_json::Value;

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

#[test]
fn documents_conformance() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/conformance/documents.json"
    ))
    .unwrap();
    let file: Value = serde_json::from_str(&text).unwrap();
    let cases = file["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 8);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let query: Vec<f32> = case["query"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect();
        let result = case["documents"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, d)| spec(i, d))
            .collect::<Result<Vec<_>, _>>()
            .and_then(|docs| prepare(&query, &docs));
        if let Some(err) = case.get("error") {
            let e = result.expect_err(name);
            assert_eq!(e.kind.as_str(), err["kind"].as_str().unwrap(), "{name}");
            assert_eq!(e.index, err["index"].as_u64().map(|x| x as usize), "{name}");
            assert_eq!(e.id.as_deref(), err["id"].as_str(), "{name}");
            assert_eq!(e.argument, err["argument"].as_str().unwrap(), "{name}");
            continue;
        }
        let p = result.unwrap_or_else(|e| panic!("{name}: {e}"));
        let ex = &case["expect"];
        let kept: Vec<usize> = ex["kept"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as usize)
            .collect();
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
        let rel = ex["relevance"].as_array().unwrap();
        assert_eq!(p.relevance.len(), rel.len(), "{name}");
        for (got, want) in p.relevance.iter().zip(rel) {
            assert!(
                (got - want.as_f64().unwrap()).abs() < 1e-6,
                "{name}: {got} vs {want}"
            );
        }
        match ex.get("costs") {
            Some(c) => {
                let want: Vec<f64> = c
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap())
                    .collect();
                assert_eq!(p.costs, Some(want), "{name}");
            }
            None => assert_eq!(p.costs, None, "{name}"),
        }
    }
}
