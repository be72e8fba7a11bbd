//! Evaluation numbers on the committed HotpotQA mini fixture
//! (`cli/data/hotpotqa-mini/`, 24 queries: 16 bridge, 8 comparison).
//!
//! The expected values were obtained once by running `evaluate` on the
//! fixture (debug build, x86-64) with the methods below at K = 3, 5, 10, 20
//! and printing every metric with `{:?}`. They were checked for
//! plausibility: top-K at K = 10 reproduces the fixture manifest's
//! `top10_cosine_recall` (macro recall 0.7458, bridge 0.6812, comparison
//! 0.875, all gold in the top 10 for 12/24 = 0.5, every gold group hit for
//! 14/24 = 0.5833), and `top_k_matches_an_independent_oracle` recomputes
//! top-K from scratch. Coverage is asserted as exact query counts (out of
//! 24); recall to 1e-12.

use mempursuit::npy::Matrix;
use mempursuit::{InputPolicy, Method, MmrOptions, PursuitOptions, Stopping};
use mempursuit_cli::dataset::{Dataset, Memory, QuerySpec};
use mempursuit_cli::eval::{
    evaluate, score_query, score_selection, Bootstrap, EvalError, EvalOptions, EvalReport,
    NamedMethod, RelevanceMode, TokenCosts,
};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/hotpotqa-mini");

fn fixture() -> Dataset {
    Dataset::load_dir(DIR).expect("the committed mini fixture loads")
}

fn methods() -> Vec<NamedMethod> {
    let p = InputPolicy::default();
    vec![
        NamedMethod::new("top-K", Method::TopK(p)),
        NamedMethod::new(
            "MMR(0.5)",
            Method::Mmr(MmrOptions {
                lambda: 0.5,
                input: p,
            }),
        ),
        NamedMethod::new("MemPursuit", Method::Pursuit(PursuitOptions::default())),
        NamedMethod::new(
            "centroid(0.5)",
            Method::Pursuit(PursuitOptions::centroid(0.5)),
        ),
        NamedMethod::new(
            "MemPursuit-adaptive",
            Method::Pursuit(PursuitOptions {
                stopping: Stopping::PAPER_ADAPTIVE,
                ..PursuitOptions::default()
            }),
        ),
    ]
}

/// (method, K, evidence recall, complete count, group-covered count,
/// mean selected), over all 24 queries.
const EXPECTED: &[(&str, usize, f64, usize, usize, f64)] = &[
    ("top-K", 3, 0.5569444444444444, 4, 5, 3.0),
    ("top-K", 5, 0.6416666666666667, 7, 9, 5.0),
    ("top-K", 10, 0.7458333333333332, 12, 14, 10.0),
    ("top-K", 20, 0.8930555555555554, 18, 19, 20.0),
    ("MMR(0.5)", 3, 0.4597222222222222, 5, 6, 3.0),
    ("MMR(0.5)", 5, 0.5083333333333334, 5, 7, 5.0),
    ("MMR(0.5)", 10, 0.6972222222222223, 9, 13, 10.0),
    ("MMR(0.5)", 20, 0.9097222222222223, 20, 20, 20.0),
    ("MemPursuit", 3, 0.4944444444444444, 5, 6, 3.0),
    ("MemPursuit", 5, 0.6, 5, 9, 5.0),
    ("MemPursuit", 10, 0.775, 13, 15, 10.0),
    ("MemPursuit", 20, 0.8652777777777777, 18, 19, 20.0),
    ("centroid(0.5)", 3, 0.5499999999999999, 4, 6, 3.0),
    ("centroid(0.5)", 5, 0.6972222222222223, 10, 11, 5.0),
    ("centroid(0.5)", 10, 0.8097222222222222, 15, 16, 10.0),
    ("centroid(0.5)", 20, 0.8874999999999998, 17, 19, 20.0),
    // Adaptive stopping (Eq. 7) is run once per K; it stops early on some
    // queries at K = 10 and 20 (mean 9.83 and 12.625 picks).
    ("MemPursuit-adaptive", 3, 0.4944444444444444, 5, 6, 3.0),
    ("MemPursuit-adaptive", 5, 0.6, 5, 9, 5.0),
    ("MemPursuit-adaptive", 10, 0.775, 13, 15, 9.833333333333334),
    (
        "MemPursuit-adaptive",
        20,
        0.8097222222222222,
        15,
        16,
        12.625,
    ),
];

/// (method, K, type, evidence recall, complete count, group-covered count).
const EXPECTED_BY_TYPE: &[(&str, usize, &str, f64, usize, usize)] = &[
    ("top-K", 10, "bridge", 0.68125, 6, 8),
    ("top-K", 10, "comparison", 0.875, 6, 6),
    ("top-K", 5, "bridge", 0.5874999999999999, 3, 5),
    ("MemPursuit", 5, "bridge", 0.5249999999999999, 1, 5),
    ("MemPursuit", 10, "bridge", 0.69375, 6, 8),
    ("MemPursuit", 10, "comparison", 0.9375, 7, 7),
    ("centroid(0.5)", 5, "bridge", 0.6083333333333334, 4, 5),
    ("centroid(0.5)", 10, "bridge", 0.7458333333333332, 8, 9),
    ("centroid(0.5)", 20, "comparison", 1.0, 8, 8),
    ("MMR(0.5)", 20, "bridge", 0.8958333333333334, 13, 13),
];

fn report() -> EvalReport {
    evaluate(
        &fixture(),
        &methods(),
        &EvalOptions::new(vec![20, 3, 10, 5, 10]),
    )
    .unwrap()
}

#[test]
fn metrics_match_the_recorded_values() {
    let r = report();
    assert_eq!(r.ks, vec![3, 5, 10, 20], "ks are sorted and de-duplicated");
    assert_eq!(r.queries, 24);
    assert_eq!(r.types.get("bridge"), Some(&16));
    assert_eq!(r.types.get("comparison"), Some(&8));
    for &(name, k, recall, complete, groups, selected) in EXPECTED {
        let m = r.methods.iter().find(|m| m.name == name).unwrap();
        let o = m.at(k).unwrap().overall;
        assert_eq!(o.queries, 24);
        assert!(
            (o.evidence_recall - recall).abs() < 1e-12,
            "{name} K={k}: recall {} != {recall}",
            o.evidence_recall
        );
        assert_eq!(
            o.complete_coverage,
            complete as f64 / 24.0,
            "{name} K={k} complete"
        );
        assert_eq!(
            o.group_coverage,
            groups as f64 / 24.0,
            "{name} K={k} groups"
        );
        assert!(
            (o.mean_selected - selected).abs() < 1e-12,
            "{name} K={k} selected"
        );
    }
    for &(name, k, kind, recall, complete, groups) in EXPECTED_BY_TYPE {
        let m = r.methods.iter().find(|m| m.name == name).unwrap();
        let t = m.at(k).unwrap().by_type[kind];
        let n = t.queries as f64;
        assert!(
            (t.evidence_recall - recall).abs() < 1e-12,
            "{name} K={k} {kind}"
        );
        assert_eq!(
            t.complete_coverage,
            complete as f64 / n,
            "{name} K={k} {kind}"
        );
        assert_eq!(t.group_coverage, groups as f64 / n, "{name} K={k} {kind}");
    }
}

#[test]
fn top_k_at_10_reproduces_the_fixture_manifest() {
    let r = report();
    let o = r.methods[0].at(10).unwrap();
    assert!((o.overall.evidence_recall - 0.7458).abs() < 5e-5);
    assert!((o.overall.group_coverage - 0.5833).abs() < 5e-5);
    assert_eq!(o.overall.complete_coverage, 0.5);
    assert!((o.by_type["bridge"].evidence_recall - 0.6812).abs() < 5e-5);
    assert_eq!(o.by_type["comparison"].evidence_recall, 0.875);
}

/// Top-K recomputed from the raw matrices: cosine = dot product (unit rows),
/// sorted descending, ties to the lower pool position.
fn oracle_top_k(data: &Dataset, qi: usize, k: usize) -> Vec<usize> {
    let q = data.query_embedding(qi);
    let spec = &data.queries[qi];
    let mut scored: Vec<(f64, usize)> = spec
        .pool
        .iter()
        .enumerate()
        .map(|(pos, &id)| {
            let m = data.memory_embeddings.row(id);
            let dot: f64 = m.iter().zip(q).map(|(a, b)| *a as f64 * *b as f64).sum();
            (dot, pos)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .iter()
        .take(k)
        .map(|&(_, pos)| spec.pool[pos])
        .collect()
}

#[test]
fn top_k_matches_an_independent_oracle() {
    let data = fixture();
    let r = report();
    let (mut recall, mut groups) = (0.0, 0);
    for qi in 0..data.queries.len() {
        let oracle = oracle_top_k(&data, qi, 20);
        let picks = &r.selections[qi].picks[0];
        // Same set at K = 20 (the f32 SIMD and f64 orders may swap near-ties
        // inside the list, but not across a gold boundary on this fixture).
        let mut a = oracle.clone();
        let mut b = picks.clone();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "query {qi}");
        let s = score_query(&data.queries[qi], &oracle[..10]);
        recall += s.recall;
        groups += usize::from(s.groups_covered == Some(true));
    }
    let o = r.methods[0].at(10).unwrap().overall;
    assert!((o.evidence_recall - recall / 24.0).abs() < 1e-12);
    assert_eq!(o.group_coverage, groups as f64 / 24.0);
}

#[test]
fn selections_are_memory_ids_from_the_pool_and_nested() {
    let data = fixture();
    let r = report();
    let small = evaluate(&data, &methods()[..4], &EvalOptions::new(vec![5])).unwrap();
    for (qi, (sel, sel5)) in r.selections.iter().zip(&small.selections).enumerate() {
        let spec = &data.queries[qi];
        assert_eq!(sel.id, spec.id);
        for (mi, picks) in sel.picks.iter().take(4).enumerate() {
            assert_eq!(picks.len(), 20);
            assert!(picks.iter().all(|id| spec.pool.contains(id)));
            // A run at K = 5 equals the prefix of the run at K = 20.
            assert_eq!(&picks[..5], &sel5.picks[mi][..], "query {qi} method {mi}");
        }
    }
}

#[test]
fn pool_order_relevance_makes_top_k_the_pool_prefix() {
    let data = fixture();
    let opts = EvalOptions {
        relevance: RelevanceMode::PoolOrder,
        ..EvalOptions::new(vec![7])
    };
    let r = evaluate(&data, &methods()[..1], &opts).unwrap();
    for (sel, spec) in r.selections.iter().zip(&data.queries) {
        assert_eq!(sel.picks[0], spec.pool[..7]);
    }
}

fn tiny(relevance: Option<Vec<f32>>) -> Dataset {
    // Four memories in d = 2; the query is memory 0's direction.
    let mem = Matrix {
        data: vec![1.0, 0.0, 0.8, 0.6, 0.6, 0.8, 0.0, 1.0],
        rows: 4,
        cols: 2,
    };
    let q = Matrix {
        data: vec![1.0, 0.0],
        rows: 1,
        cols: 2,
    };
    let spec = QuerySpec {
        id: "t".into(),
        text: String::new(),
        kind: "x".into(),
        answer: None,
        pool: vec![0, 1, 2, 3],
        gold: vec![2, 3],
        gold_groups: vec![vec![2], vec![3]],
        relevance,
        scope: None,
        gold_units: None,
    };
    Dataset::from_parts(mem, q, vec![spec], None).unwrap()
}

#[test]
fn spec_relevance_drives_top_k_unless_overridden() {
    let top = [NamedMethod::new(
        "top-K",
        Method::TopK(InputPolicy::default()),
    )];
    let data = tiny(Some(vec![0.1, 0.2, 0.9, 0.5]));
    let r = evaluate(&data, &top, &EvalOptions::new(vec![2])).unwrap();
    assert_eq!(r.selections[0].picks[0], vec![2, 3]);
    assert_eq!(r.methods[0].budgets[0].overall.complete_coverage, 1.0);
    let opts = EvalOptions {
        relevance: RelevanceMode::Similarity,
        ..EvalOptions::new(vec![2])
    };
    let r = evaluate(&data, &top, &opts).unwrap();
    assert_eq!(r.selections[0].picks[0], vec![0, 1]);
    assert_eq!(r.methods[0].budgets[0].overall.evidence_recall, 0.0);
}

#[test]
fn errors_name_the_query_and_memory() {
    let mut data = tiny(None);
    // Memory 2 becomes a zero vector.
    data.memory_embeddings.data[4] = 0.0;
    data.memory_embeddings.data[5] = 0.0;
    let top = [NamedMethod::new(
        "top-K",
        Method::TopK(InputPolicy::default()),
    )];
    let e = evaluate(&data, &top, &EvalOptions::new(vec![2])).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("query line 1"), "{msg}");
    assert!(msg.contains("memory id 2"), "{msg}");
    assert!(msg.contains("all elements are zero"), "{msg}");
    let e = evaluate(&tiny(None), &top, &EvalOptions::new(vec![])).unwrap_err();
    assert_eq!(e.to_string(), "no budget K given");
}

#[test]
fn table_and_json_outputs() {
    let r = report();
    let t = r.table();
    assert!(t.contains("all (24 queries)"));
    assert!(t.contains("bridge (16)") && t.contains("comparison (8)"));
    // top-K at K = 10: 74.6 / 50.0 / 58.3 percent.
    let row = t
        .lines()
        .find(|l| l.starts_with("top-K") && l.split_whitespace().nth(1) == Some("10"))
        .unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[2..5], &["74.6", "50.0", "58.3"]);
    let j = r.metrics_json();
    assert!(j.get("selections").is_none());
    assert_eq!(j["methods"][0]["budgets"][2]["k"], 10);
    assert_eq!(
        j["methods"][0]["budgets"][2]["overall"]["complete_coverage"],
        0.5
    );
    assert_eq!(j["methods"][3]["method"]["Pursuit"]["ridge"], "inf");
    assert_eq!(j["methods"][2]["method"]["Pursuit"]["ridge"], 1e-10);
    let lines = r.selections_jsonl();
    assert_eq!(lines.lines().count(), 24);
    let first: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert_eq!(first["id"], "5a8b57f25542995d1e6f1371");
    assert_eq!(first["picks"]["top-K"].as_array().unwrap().len(), 20);
}

fn recommended_methods() -> Vec<NamedMethod> {
    vec![
        NamedMethod::new("top-K", Method::TopK(InputPolicy::default())),
        NamedMethod::new("recommended", Method::recommended()),
    ]
}

/// The recommended setting on the fixture (recorded like `EXPECTED`), and
/// its per-budget runs: γ depends on K, so each K is its own run and equals
/// a direct selection at that K.
#[test]
fn recommended_setting_on_the_fixture() {
    let data = fixture();
    let r = evaluate(
        &data,
        &recommended_methods(),
        &EvalOptions::new(vec![3, 5, 10, 20]),
    )
    .unwrap();
    let got: Vec<(f64, f64, f64)> = r.methods[1]
        .budgets
        .iter()
        .map(|b| {
            let d = b.delta_vs_topk.unwrap();
            (b.overall.evidence_recall, d.lo, d.hi)
        })
        .collect();
    for (g, w) in got.iter().zip(RECOMMENDED) {
        assert!(
            (g.0 - w.0).abs() < 1e-12 && (g.1 - w.1).abs() < 1e-12 && (g.2 - w.2).abs() < 1e-12,
            "{got:?}"
        );
    }
    let mut sel = mempursuit::Selector::new();
    let mut pool = Vec::new();
    for (qi, spec) in data.queries.iter().enumerate() {
        data.gather_pool(qi, &mut pool);
        let input = mempursuit::Input::new(data.query_embedding(qi), &pool);
        let direct = sel.select(&input, 20, &Method::recommended()).unwrap();
        let ids: Vec<usize> = direct.picks.iter().map(|&p| spec.pool[p]).collect();
        assert_eq!(r.selections[qi].picks[1], ids, "query {qi}");
    }
}

/// (recall, CI low, CI high of recall − top-K) at K = 3, 5, 10, 20.
const RECOMMENDED: [(f64, f64, f64); 4] = [
    (0.5499999999999999, -0.0625, 0.041666666666666664),
    (0.6763888888888889, 0.0, 0.09027777777777779),
    (0.7888888888888889, 0.0, 0.09444444444444444),
    (0.8874999999999998, -0.0763888888888889, 0.05694444444444444),
];

/// Gold outside the pool is a miss and lowers the pool's ceiling; a query
/// without gold groups is left out of group coverage.
#[test]
fn gold_outside_the_pool_and_queries_without_groups() {
    let mut data = tiny(None);
    data.queries[0].pool = vec![0, 1, 2];
    let mut second = data.queries[0].clone();
    second.id = "u".into();
    second.gold_groups.clear();
    data.queries.push(second);
    data.query_embeddings.data.extend_from_slice(&[1.0, 0.0]);
    data.query_embeddings.rows = 2;
    let data = Dataset::from_parts(
        data.memory_embeddings,
        data.query_embeddings,
        data.queries,
        None,
    )
    .unwrap();
    let top = [NamedMethod::new(
        "top-K",
        Method::TopK(InputPolicy::default()),
    )];
    let r = evaluate(&data, &top, &EvalOptions::new(vec![3])).unwrap();
    assert_eq!(r.ceiling.evidence_recall, 0.5);
    assert_eq!(r.ceiling.complete_coverage, 0.0);
    assert_eq!(
        (r.ceiling.group_queries, r.ceiling.group_coverage),
        (1, 0.0)
    );
    let o = r.methods[0].budgets[0].overall;
    assert_eq!(
        (o.evidence_recall, o.group_queries, o.group_coverage),
        (0.5, 1, 0.0)
    );
    assert!(
        r.table().contains("pool ceiling all    50.0    0.0    0.0"),
        "{}",
        r.table()
    );
}

/// `retrieve`: pools are the top-P memories by cosine (within the query's
/// scope), so top-K is their prefix; the ceiling is the share of gold
/// retrieved.
#[test]
fn retrieved_pools_on_the_fixture_and_scopes() {
    let data = fixture();
    let opts = EvalOptions {
        retrieve: Some(50),
        ..EvalOptions::new(vec![10])
    };
    let r = evaluate(&data, &recommended_methods(), &opts).unwrap();
    assert_eq!(r.mean_pool, 50.0);
    assert!((r.ceiling.evidence_recall - RETRIEVED.0).abs() < 1e-12);
    assert!((r.methods[0].budgets[0].overall.evidence_recall - RETRIEVED.1).abs() < 1e-12);
    assert!((r.methods[1].budgets[0].overall.evidence_recall - RETRIEVED.2).abs() < 1e-12);
    // Top-K over all memories: the ten largest cosines, computed here.
    for qi in [0, 7, 23] {
        let q = data.query_embedding(qi);
        let mut cos: Vec<(f64, usize)> = (0..data.memory_embeddings.rows)
            .map(|i| {
                let m = data.memory_embeddings.row(i);
                (
                    -m.iter()
                        .zip(q)
                        .map(|(&a, &b)| a as f64 * b as f64)
                        .sum::<f64>(),
                    i,
                )
            })
            .collect();
        cos.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let want: Vec<usize> = cos[..10].iter().map(|c| c.1).collect();
        assert_eq!(r.selections[qi].picks[0], want, "query {qi}");
    }

    // Scopes: memories 0, 1 in scope "a", 2, 3 in scope "b"; the query is
    // in scope "b", so its pool is {2, 3} even though 0 and 1 are closer.
    let mut d = tiny(None);
    d.queries[0].scope = Some("b".into());
    let memories: Vec<Memory> = (0..4)
        .map(|i| Memory {
            id: i,
            text: format!("m{i}"),
            group: String::new(),
            source: String::new(),
            scope: Some(if i < 2 { "a" } else { "b" }.into()),
            units: None,
        })
        .collect();
    let scoped = Dataset::from_parts(
        d.memory_embeddings.clone(),
        d.query_embeddings.clone(),
        d.queries.clone(),
        Some(memories),
    )
    .unwrap();
    let top = [NamedMethod::new(
        "top-K",
        Method::TopK(InputPolicy::default()),
    )];
    let opts = EvalOptions {
        retrieve: Some(3),
        ..EvalOptions::new(vec![2])
    };
    let r = evaluate(&scoped, &top, &opts).unwrap();
    assert_eq!(r.selections[0].picks[0], vec![2, 3]);
    assert_eq!(r.mean_pool, 2.0);
    // A scope without memories.jsonl is an error naming the line.
    let unscoped =
        Dataset::from_parts(d.memory_embeddings, d.query_embeddings, d.queries, None).unwrap();
    let e = evaluate(&unscoped, &top, &opts).unwrap_err();
    assert_eq!(
        e.to_string(),
        "query line 1 has a scope, but no memories.jsonl gives the memories' scopes"
    );
    let e = evaluate(
        &scoped,
        &top,
        &EvalOptions {
            retrieve: Some(0),
            ..EvalOptions::new(vec![2])
        },
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "retrieve depth P must be at least 1");
}

/// (ceiling recall, top-K recall, recommended recall) at K = 10 with P = 50.
const RETRIEVED: (f64, f64, f64) = (0.9305555555555555, 0.7319444444444444, 0.7958333333333334);

/// The SVG plot names every method and draws one band per method.
#[test]
fn plot_draws_every_method_with_its_band() {
    let r = evaluate(
        &fixture(),
        &recommended_methods(),
        &EvalOptions::new(vec![3, 5, 10]),
    )
    .unwrap();
    let svg = mempursuit_cli::plot::recall_svg(&r, "mini").unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    for name in [
        "top-K",
        "recommended",
        "mini",
        "budget K",
        "evidence recall (%)",
    ] {
        assert!(svg.contains(name), "{name}");
    }
    assert_eq!(svg.matches("<polygon").count(), 2);
    let no_ci = evaluate(
        &fixture(),
        &recommended_methods(),
        &EvalOptions {
            bootstrap: Bootstrap {
                resamples: 0,
                seed: 0,
            },
            ..EvalOptions::new(vec![3, 5, 10])
        },
    )
    .unwrap();
    let svg = mempursuit_cli::plot::recall_svg(&no_ci, "mini").unwrap();
    assert_eq!(svg.matches("<polygon").count(), 0);
}

/// `robustness`: two exact copies (cosine 1) of each pool's top three
/// members, replacing its six lowest-ranked, take two of top-K's three
/// slots (recorded: 55.7 → 29.2 % recall at K = 3) and leave the
/// recommended setting's recall unchanged query by query (its duplicates
/// are merged); near-copies at cosine 0.93 still cost top-K, not the
/// recommended setting (which gains 2.1 points at K = 3 there). The copies' pools lose 3.5 % of the gold (the
/// removed members), and the same seed gives the same report.
#[test]
fn robustness_to_copies_on_the_fixture() {
    use mempursuit_cli::copies::CopyOptions;
    use mempursuit_cli::eval::robustness;
    let data = fixture();
    let opts = EvalOptions::new(vec![3, 10]);
    let r = robustness(
        &data,
        &recommended_methods(),
        &opts,
        &[1.0, 0.93],
        CopyOptions::new(1.0),
    )
    .unwrap();
    assert_eq!(r.with_copies.len(), 2);
    assert_eq!(r.with_copies[1].copies.unwrap().cosine, 0.93);
    assert!((r.with_copies[0].ceiling.evidence_recall - 0.9652777777777778).abs() < 1e-12);
    let top = &r.drops[0][0];
    assert!((top[0].clean - 0.5569444444444444).abs() < 1e-12);
    assert!((top[0].with_copies - 0.2916666666666667).abs() < 1e-12);
    assert!((top[1].with_copies - 0.6277777777777778).abs() < 1e-12);
    let d = top[0].delta.unwrap();
    assert!((d.mean - (top[0].with_copies - top[0].clean)).abs() < 1e-12);
    assert!(d.lo < d.mean && d.mean < d.hi && d.hi < 0.0, "{d:?}");
    for (c, drops) in r.drops.iter().enumerate() {
        // Recorded: unchanged at both K with exact copies; at cosine 0.93
        // (MiniLM's natural-neighbour p99: a copy no nearer than the
        // encoder's own neighbours) +2.1 points at K = 3, unchanged at 10.
        for (b, want) in drops[1]
            .iter()
            .zip([[0.0, 0.0], [0.02083333333333337, 0.0]][c])
        {
            assert!(
                (b.with_copies - b.clean - want).abs() < 1e-12,
                "cosine {c}, K = {}: {}",
                b.k,
                b.with_copies - b.clean
            );
        }
        assert!(drops[0][0].with_copies < drops[0][0].clean - 0.15);
    }
    // Exact copies: the recommended setting's recall is unchanged query by query.
    for (a, b) in r.clean.methods[1]
        .budgets
        .iter()
        .zip(&r.with_copies[0].methods[1].budgets)
    {
        assert_eq!(a.per_query_recall, b.per_query_recall);
    }
    let again = robustness(
        &data,
        &recommended_methods(),
        &opts,
        &[1.0, 0.93],
        CopyOptions::new(1.0),
    )
    .unwrap();
    assert_eq!(again, r);
    assert!(r.table().contains("copies at cosine 0.93: recall, drop"));
    assert!(robustness(
        &data,
        &recommended_methods(),
        &opts,
        &[1.5],
        CopyOptions::new(1.0)
    )
    .is_err());
}

/// Budgets in tokens on the fixture: the whitespace words of the texts,
/// every method at the same budgets. The selections never cost more than
/// the budget, top-K is the greedy pass of the oracle order, and nothing
/// more fits for any method.
#[test]
fn token_budgets_on_the_fixture() {
    let data = fixture();
    let tokens = TokenCosts::whitespace_words(&data).unwrap();
    assert_eq!(tokens.tokenizer, TokenCosts::WHITESPACE_WORDS);
    assert_eq!(
        tokens.per_memory[0] as usize,
        data.memory_text(0).unwrap().split_whitespace().count()
    );
    let mut all = methods();
    all.extend(recommended_methods().into_iter().skip(1));
    for budget in [40usize, 120, 300] {
        let opts = EvalOptions {
            bootstrap: Bootstrap {
                resamples: 0,
                seed: 0,
            },
            tokens: Some(tokens.clone()),
            ..EvalOptions::new(vec![budget])
        };
        let r = evaluate(&data, &all, &opts).unwrap();
        assert_eq!(r.tokenizer.as_deref(), Some(TokenCosts::WHITESPACE_WORDS));
        let mut topk_selected = 0.0;
        for (mi, m) in r.methods.iter().enumerate() {
            let (mut cost_sum, mut n_sum) = (0.0, 0usize);
            for (qi, sel) in r.selections.iter().enumerate() {
                let picks = &sel.picks[mi];
                let cost: u32 = picks.iter().map(|&id| tokens.per_memory[id]).sum();
                assert!(cost as usize <= budget, "{} q{qi}: {cost}", m.name);
                cost_sum += f64::from(cost);
                n_sum += picks.len();
                // Nothing more fits (adaptive stopping may stop earlier).
                if m.name != "MemPursuit-adaptive" {
                    let spec = &data.queries[qi];
                    let cheapest = spec
                        .pool
                        .iter()
                        .filter(|id| !picks.contains(id))
                        .map(|&id| tokens.per_memory[id])
                        .min()
                        .unwrap_or(u32::MAX);
                    assert!(
                        (cost + cheapest) as usize > budget,
                        "{} q{qi}: {cost} + {cheapest} <= {budget}",
                        m.name
                    );
                }
                if mi == 0 {
                    // Top-K: the oracle's cosine order, each taken if it fits.
                    let mut spent = 0usize;
                    let greedy: Vec<usize> = oracle_top_k(&data, qi, usize::MAX)
                        .into_iter()
                        .filter(|&id| {
                            let c = tokens.per_memory[id] as usize;
                            let fits = spent + c <= budget;
                            spent += if fits { c } else { 0 };
                            fits
                        })
                        .collect();
                    assert_eq!(picks, &greedy, "q{qi}");
                }
            }
            let o = m.budgets[0].overall;
            let q = r.queries as f64;
            assert!((o.mean_cost.unwrap() - cost_sum / q).abs() < 1e-9);
            assert!((o.mean_selected - n_sum as f64 / q).abs() < 1e-12);
            if mi == 0 {
                topk_selected = o.mean_selected;
            }
        }
        assert!(topk_selected > 0.0);
    }
    // The table names the budget unit and the tokenizer.
    let opts = EvalOptions {
        tokens: Some(tokens.clone()),
        ..EvalOptions::new(vec![100, 200])
    };
    let r = evaluate(&data, &recommended_methods(), &opts).unwrap();
    let table = r.table();
    assert!(
        table.contains("method      tokens picks  recall"),
        "{table}"
    );
    assert!(table.contains(TokenCosts::WHITESPACE_WORDS), "{table}");
    assert!(r.methods[1].budgets[1].delta_vs_topk.is_some());
}

/// With one token per memory, a budget of C tokens is the count budget
/// K = C for every method: the same picks.
#[test]
fn unit_token_costs_are_the_count_budget() {
    let data = fixture();
    let ones = TokenCosts {
        tokenizer: "one per memory".into(),
        per_memory: vec![1; data.memory_embeddings.rows],
    };
    let mut all = methods();
    all.extend(recommended_methods().into_iter().skip(1));
    let ks = vec![3, 5, 10];
    let by_count = evaluate(&data, &all, &EvalOptions::new(ks.clone())).unwrap();
    let by_tokens = evaluate(
        &data,
        &all,
        &EvalOptions {
            tokens: Some(ones),
            ..EvalOptions::new(ks.clone())
        },
    )
    .unwrap();
    for (a, b) in by_count.methods.iter().zip(&by_tokens.methods) {
        for (x, y) in a.budgets.iter().zip(&b.budgets) {
            assert_eq!(x.per_query_recall, y.per_query_recall, "{} {}", a.name, x.k);
            assert_eq!(x.overall.mean_selected, y.overall.mean_selected);
            assert_eq!(y.overall.mean_cost, Some(y.overall.mean_selected));
        }
    }
    for (a, b) in by_count.selections.iter().zip(&by_tokens.selections) {
        assert_eq!(a.picks, b.picks);
    }
}

#[test]
fn token_budgets_need_the_texts() {
    let data = tiny(None);
    let e = TokenCosts::whitespace_words(&data).unwrap_err();
    assert_eq!(e, EvalError::NoTexts { memory_id: 0 });
    assert!(e.to_string().contains("memory id 0 has none"), "{e}");
    let short = TokenCosts {
        tokenizer: "t".into(),
        per_memory: vec![1, 2],
    };
    let top = [NamedMethod::new(
        "top-K",
        Method::TopK(InputPolicy::default()),
    )];
    let e = evaluate(
        &data,
        &top,
        &EvalOptions {
            tokens: Some(short),
            ..EvalOptions::new(vec![3])
        },
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "2 token counts for 4 memories: give one per memory"
    );
}

/// The overlapping-chunks fixture of `tests/data/overlap-tiny/` (README
/// there): 4 chunks of 2 sentence units, chunks 0 and 1 sharing unit 1;
/// three queries, the last without gold units.
fn overlap_tiny() -> Dataset {
    Dataset::load_dir(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/overlap-tiny"
    ))
    .unwrap()
}

/// Unit measures: top-K at K = 2 picks the two overlapping chunks 0 and 1
/// for q0 (gold units 1 and 3: one covered; one repeated pick) and chunks 2
/// and 0 for q1 (its gold unit 4 covered); q2 has no gold units and is left
/// out of them. The recommended setting takes chunk 1 last (it is
/// represented by chunk 0 at cosine 0.94) and covers both units of q0.
#[test]
fn unit_measures_on_the_overlap_fixture() {
    let data = overlap_tiny();
    assert!(data.has_units());
    assert_eq!(data.memory_units(1), &[1, 2]);
    assert_eq!(data.queries[0].gold_units, Some(vec![1, 3]));
    let s = score_selection(&data, &data.queries[0], &[0, 1]);
    assert_eq!(
        (s.unit_recall, s.units_complete, s.repeated, s.gold_hits),
        (Some(0.5), Some(false), 1, 2)
    );
    assert_eq!(score_query(&data.queries[0], &[0, 1]).unit_recall, None);
    let r = evaluate(&data, &recommended_methods(), &EvalOptions::new(vec![2, 3])).unwrap();
    assert!(r.has_units());
    let top2 = r.methods[0].budgets[0].overall;
    assert_eq!(top2.unit_queries, 2);
    assert_eq!(top2.unit_recall, Some(0.75));
    assert_eq!(top2.unit_complete_coverage, Some(0.5));
    assert_eq!(top2.mean_repeated, Some(0.5));
    assert!((top2.evidence_recall - 5.0 / 9.0).abs() < 1e-12);
    assert!((top2.group_coverage - 1.0 / 3.0).abs() < 1e-12);
    assert_eq!(
        r.methods[0].budgets[0].by_type["comparison"].unit_recall,
        None
    );
    let rec2 = &r.methods[1].budgets[0];
    assert_eq!(rec2.overall.unit_recall, Some(1.0));
    assert_eq!(rec2.overall.mean_repeated, Some(0.0));
    assert!((rec2.overall.group_coverage - 2.0 / 3.0).abs() < 1e-12);
    // Paired deltas: units over the 2 queries with gold units, groups over 3.
    assert!((rec2.delta_units_vs_topk.unwrap().mean - 0.25).abs() < 1e-12);
    assert!((rec2.delta_groups_vs_topk.unwrap().mean - 1.0 / 3.0).abs() < 1e-12);
    assert_eq!(rec2.per_query_units, vec![1.0, 1.0]);
    let ci = r.methods[0].budgets[0].unit_recall_ci.unwrap();
    assert!(
        ci.lo <= 0.75 && 0.75 <= ci.hi && ci.lo >= 0.5 && ci.hi <= 1.0,
        "{ci:?}"
    );
    assert_eq!(r.methods[0].budgets[0].delta_units_vs_topk, None);
    // Every output carries them: JSON and the table.
    let j = r.metrics_json();
    assert_eq!(
        j["methods"][0]["budgets"][0]["overall"]["unit_recall"],
        0.75
    );
    assert_eq!(
        j["methods"][1]["budgets"][0]["delta_units_vs_topk"]["mean"],
        0.25
    );
    let table = r.table();
    assert!(table.contains("units u-full"), "{table}");
    assert!(
        table.contains("top-K         2  0.50    55.6   33.3   33.3   75.0   50.0"),
        "{table}"
    );
    assert!(table.contains("units vs top-K"), "{table}");
    // The comparison block has no gold units: its unit cells are "-".
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("top-K") && l.contains("      -      -")),
        "{table}"
    );
    // The plot draws unit recall.
    let svg = mempursuit_cli::plot::recall_svg(&r, "tiny").unwrap();
    assert!(svg.contains("unit recall (%)"));
}

/// Halves, budgets in tokens and near-copies keep the unit measures.
#[test]
fn unit_measures_in_halves_tokens_and_copies() {
    use mempursuit_cli::copies::CopyOptions;
    use mempursuit_cli::eval::{robustness, Half};
    let data = overlap_tiny();
    let odd = evaluate(
        &data,
        &recommended_methods(),
        &EvalOptions {
            half: Some(Half::Odd),
            ..EvalOptions::new(vec![2])
        },
    )
    .unwrap();
    assert_eq!((odd.queries, odd.selections[0].id.as_str()), (1, "q1"));
    assert_eq!(odd.methods[0].budgets[0].overall.unit_recall, Some(1.0));
    assert!(odd.table().contains("Queries: the odd half"));
    let even = evaluate(
        &data,
        &recommended_methods(),
        &EvalOptions {
            half: Some(Half::Even),
            ..EvalOptions::new(vec![2])
        },
    )
    .unwrap();
    assert_eq!(even.queries, 2);
    assert_eq!(even.methods[0].budgets[0].overall.unit_queries, 1);
    // Each chunk text has 3 words: 6 tokens hold two chunks, as K = 2.
    let tokens = evaluate(
        &data,
        &recommended_methods(),
        &EvalOptions {
            tokens: Some(TokenCosts::whitespace_words(&data).unwrap()),
            ..EvalOptions::new(vec![6])
        },
    )
    .unwrap();
    assert_eq!(tokens.methods[0].budgets[0].overall.unit_recall, Some(0.75));
    assert_eq!(tokens.methods[1].budgets[0].overall.unit_recall, Some(1.0));
    // Exact copies carry their original's units: top-K's unit recall at
    // K = 3 drops (copies of chunk 0 take two slots), the recommended
    // setting's does not (duplicates merged).
    let r = robustness(
        &data,
        &recommended_methods(),
        &EvalOptions::new(vec![3]),
        &[1.0],
        CopyOptions::new(1.0),
    )
    .unwrap();
    let top = r.drops[0][0][0].units.as_ref().unwrap();
    assert_eq!((top.clean, top.with_copies), (1.0, 0.75));
    let rec = r.drops[0][1][0].units.as_ref().unwrap();
    assert_eq!(rec.with_copies, rec.clean);
    assert!(r.table().contains("; units 75.0, -25.0"), "{}", r.table());
}
