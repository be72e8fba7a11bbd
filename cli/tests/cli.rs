//! The `mempursuit` binary, run as a user would: demo, select on small .npy
//! files written here, eval on the committed fixture, and error cases.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use npyz::WriterBuilder;

const BIN: &str = env!("CARGO_BIN_EXE_mempursuit");
const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/hotpotqa-mini");

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh scratch folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes a C-order f32 .npy of `shape` with npyz's writer.
fn write_npy(path: &Path, shape: &[u64], data: &[f32]) {
    let mut file = std::fs::File::create(path).unwrap();
    let mut w = npyz::WriteOptions::<f32>::new()
        .default_dtype()
        .shape(shape)
        .writer(&mut file)
        .begin_nd()
        .unwrap();
    w.extend(data.iter().copied()).unwrap();
    w.finish().unwrap();
}

/// The crate-docs example: two paraphrases of fact A (rows 0, 1) and fact B
/// (row 2); the query is halfway between A and B.
fn example(dir: &Path) -> (String, String) {
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let q = dir.join("q.npy");
    let c = dir.join("c.npy");
    write_npy(&q, &[2], &[s, s]);
    write_npy(&c, &[3, 2], &[0.9950, 0.0998, 0.9998, 0.0200, 0.0, 1.0]);
    (q.display().to_string(), c.display().to_string())
}

fn order_line(out: &str) -> Vec<usize> {
    let line = out
        .lines()
        .find(|l| l.starts_with("order:"))
        .expect("an order line");
    line["order:".len()..]
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect()
}

fn assert_clean_failure(o: &Output, needles: &[&str]) {
    assert!(!o.status.success(), "expected failure, got {:?}", o.status);
    let err = stderr(o);
    assert!(!err.contains("panicked"), "panic: {err}");
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}: {err}");
    }
}

#[test]
fn demo_prints_the_table_and_a_worked_example() {
    let o = run(&["demo"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("CC BY-SA 4.0"));
    assert!(out.contains("all (24 queries)"));
    assert!(
        out.contains("method        K  recall   full groups"),
        "{out}"
    );
    // The rows are named by the specification's text form.
    for m in ["topk", "mmr", "pursuit", "recommended"] {
        let rows = out.lines().filter(|l| {
            let mut t = l.split_whitespace();
            t.next() == Some(m) && t.next().is_some_and(|k| k.parse::<usize>().is_ok())
        });
        assert_eq!(rows.count(), 3, "{m}");
    }
    // top-K at K = 10 matches the fixture manifest (74.6 / 50.0 / 58.3).
    let row = out
        .lines()
        .find(|l| l.starts_with("topk") && l.split_whitespace().nth(1) == Some("10"))
        .unwrap();
    assert_eq!(
        &row.split_whitespace().collect::<Vec<_>>()[2..5],
        ["74.6", "50.0", "58.3"]
    );
    // Paper mode as measured on the fixture (issue 18: below top-K at K = 3, 5).
    let row = out
        .lines()
        .find(|l| l.starts_with("pursuit") && l.split_whitespace().nth(1) == Some("3"))
        .unwrap();
    assert!(row.ends_with("-6.2 [-15.3, +2.8]"), "{row}");
    assert!(out.contains("Worked example, K = 5"));
    assert!(out.contains("question: Are Local H and For Against both from the United States?"));
    assert!(out.contains("(comparison, id 5a8db19d5542994ba4e3dd00; answer: yes)"));
    assert!(out.contains("recommended picks (gold groups covered: A, B)"));
    assert!(out.contains("top-K picks (pool of 44; gold groups covered: A)"));
    // The recommended setting against top-K at K = 10, with its interval.
    let row = out
        .lines()
        .find(|l| l.starts_with("recommended") && l.split_whitespace().nth(1) == Some("10"))
        .unwrap();
    assert!(
        row.ends_with(
            "78.9   58.3   62.5   71.5   43.8   50.0   93.8   87.5   87.5   +4.3 [+0.0, +9.4]"
        ),
        "{row}"
    );
    // 100 columns at most, and a one-line takeaway at the end.
    for line in out.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    assert_eq!(
        out.lines().last(),
        Some(
            "Takeaway: recommended (the default) vs topk: -0.7/+3.5/+4.3 points of evidence \
             recall at K = 3/5/10."
        )
    );
}

/// k above the pool size: all 3 rows come back and the stop reason says the
/// pool ran out (issue 30, item 6), for every method, in text and JSON.
#[test]
fn select_with_k_above_the_pool_stops_for_the_pool() {
    let dir = scratch("k-above-pool");
    let (q, c) = example(&dir);
    for method in ["recommended", "pursuit", "centroid", "topk", "mmr"] {
        let args = ["select", "--query", &q, "--candidates", &c, "-k", "10"];
        let o = run(&[&args[..], &["--method", method]].concat());
        assert!(o.status.success(), "{method}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(
            out.contains("stop: pool_exhausted after 3 picks"),
            "{method}: {out}"
        );
        let o = run(&[&args[..], &["--method", method, "--json"]].concat());
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["stop"], "pool_exhausted", "{method}");
        assert_eq!(v["picks"].as_array().map(Vec::len), Some(3), "{method}");
    }
}

#[test]
fn select_picks_the_missing_fact() {
    let dir = scratch("select");
    let (q, c) = example(&dir);
    let select = |extra: &[&str]| {
        let mut args = vec!["select", "--query", &q, "--candidates", &c, "-k", "2"];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        stdout(&o)
    };
    let out = select(&["--method", "pursuit"]);
    assert_eq!(order_line(&out), vec![0, 2]);
    assert!(out.contains("method: pursuit (ridge 1e-10, gamma 1, fixed budget)"));
    assert!(out.contains("weights: 0.537237 0.462763"), "{out}");
    assert!(out.contains("stop: budget after 2 picks"));
    assert!(out.contains("L_t") && out.contains("g_S") && out.contains("|F|"));

    // The default is the recommended setting (centroid pursuit with a
    // per-pool gamma: equal weights).
    let out = select(&[]);
    assert!(out.starts_with("method: recommended\n"), "{out}");
    assert_eq!(order_line(&out), vec![0, 2]);
    assert!(out.contains("weights: 0.500000 0.500000"), "{out}");
    assert_eq!(select(&["--method", "recommended"]), out);

    for (method, expected) in [
        (&["--method", "topk"][..], vec![0, 1]),
        (&["--method", "centroid"], vec![0, 2]),
        (&["--method", "mmr"], vec![0, 2]),
        // MMR at λ_mmr = 1 is top-K: by flag or in the text form.
        (&["--method", "mmr", "--mmr-lambda", "1"], vec![0, 1]),
        (&["--method", "mmr,mmr_lambda=1"], vec![0, 1]),
        // A flag overrides the text.
        (
            &["--method", "mmr,mmr_lambda=1", "--mmr-lambda", "0.5"],
            vec![0, 2],
        ),
        // int8 storage returns the f32 pursuit's selection.
        (&["--method", "pursuit", "--storage", "int8"], vec![0, 2]),
        (&["--method", "pursuit,storage=f16"], vec![0, 2]),
    ] {
        assert_eq!(order_line(&select(method)), expected, "{method:?}");
    }

    // A 1 × d query, relevance scores that favour row 1, JSON output.
    let q2 = dir.join("q2.npy");
    let s = std::f32::consts::FRAC_1_SQRT_2;
    write_npy(&q2, &[1, 2], &[s, s]);
    let r = dir.join("r.npy");
    write_npy(&r, &[3], &[0.1, 0.9, 0.5]);
    let q2 = q2.display().to_string();
    let r = r.display().to_string();
    let o = run(&[
        "select",
        "--query",
        &q2,
        "--candidates",
        &c,
        "-k",
        "2",
        "--method",
        "topk",
        "--relevance",
        &r,
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["picks"], serde_json::json!([1, 2]));
    assert_eq!(v["stop"], "budget");

    let o = run(&[
        "select",
        "--query",
        &q,
        "--candidates",
        &c,
        "-k",
        "3",
        "--method",
        "pursuit",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let w: f64 = v["weights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .sum();
    assert!((w - 1.0).abs() < 1e-9);
    assert_eq!(v["steps"].as_array().unwrap().len(), 3);
    assert_eq!(v["steps"][1]["index"], 2);
}

/// `select --costs C.npy --cost-budget N`: a budget in tokens; the picks
/// never cost more, the errors name the file or the option.
#[test]
fn select_with_costs_and_a_cost_budget() {
    let dir = scratch("costs");
    let (q, c) = example(&dir);
    let costs = dir.join("tokens.npy");
    write_npy(&costs, &[3], &[40.0, 35.0, 70.0]);
    let costs = costs.display().to_string();
    let select = |extra: &[&str]| {
        let mut args = vec!["select", "--query", &q, "--candidates", &c, "-k", "3"];
        args.extend_from_slice(extra);
        run(&args)
    };
    // Row 2 (B, 70 tokens) no longer fits after row 0 (40): row 1 (35).
    for method in ["pursuit", "recommended", "centroid", "mmr", "topk"] {
        let o = select(&[
            "--method",
            method,
            "--costs",
            &costs,
            "--cost-budget",
            "100",
        ]);
        assert!(o.status.success(), "{method}: {}", stderr(&o));
        let out = stdout(&o);
        assert_eq!(order_line(&out), vec![0, 1], "{method}: {out}");
        assert!(out.contains("stop: cost_budget after 2 picks"), "{out}");
        assert!(out.contains("cost: 75 of the cost budget 100"), "{out}");
    }
    let o = select(&[
        "--method",
        "pursuit,cost_budget=110",
        "--costs",
        &costs,
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["picks"], serde_json::json!([0, 2]));
    assert_eq!(v["stop"], "cost_budget");
    assert_eq!(
        (v["cost"].as_f64(), v["cost_budget"].as_f64()),
        (Some(110.0), Some(110.0))
    );
    assert_eq!(v["spec"]["cost_budget"], 110.0);
    // Errors: each half without the other, a negative cost, a short file.
    assert_clean_failure(
        &select(&["--costs", &costs]),
        &["costs need a cost budget (the most the picks may cost in total)"],
    );
    assert_clean_failure(
        &select(&["--cost-budget", "10"]),
        &["a cost budget needs costs (one per candidate, e.g. its token count)"],
    );
    assert_clean_failure(
        &select(&["--costs", &costs, "--cost-budget=-1"]),
        &["cost budget -1 must be finite and >= 0"],
    );
    let bad = dir.join("bad.npy");
    write_npy(&bad, &[3], &[1.0, -2.0, 3.0]);
    let bad = bad.display().to_string();
    assert_clean_failure(
        &select(&["--costs", &bad, "--cost-budget", "10"]),
        &[&format!(
            "{bad}: cost 1 is -2; costs must be finite and >= 0"
        )],
    );
    let short = dir.join("short.npy");
    write_npy(&short, &[2], &[1.0, 2.0]);
    let short = short.display().to_string();
    assert_clean_failure(
        &select(&["--costs", &short, "--cost-budget", "10"]),
        &[&format!("{short}: 2 cost values but ")],
    );
    let grid = dir.join("grid.npy");
    write_npy(&grid, &[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let grid = grid.display().to_string();
    assert_clean_failure(
        &select(&["--costs", &grid, "--cost-budget", "10"]),
        &[&format!("{grid}: 4 cost values (a 2 × 2 array) but ")],
    );
}

#[test]
fn select_reports_bad_input_without_panicking() {
    let dir = scratch("errors");
    let (q, c) = example(&dir);
    let missing = dir.join("missing.npy").display().to_string();
    let o = run(&["select", "--query", &missing, "--candidates", &c, "-k", "2"]);
    assert_clean_failure(&o, &["missing.npy", "No such file"]);

    let c3 = dir.join("c3.npy");
    write_npy(&c3, &[2, 3], &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    let c3 = c3.display().to_string();
    let o = run(&["select", "--query", &q, "--candidates", &c3, "-k", "2"]);
    assert_clean_failure(
        &o,
        &["query dimension 2", "candidate dimension 3", "c3.npy"],
    );

    let cz = dir.join("cz.npy");
    write_npy(&cz, &[2, 2], &[1.0, 0.0, 0.0, 0.0]);
    let cz = cz.display().to_string();
    let o = run(&["select", "--query", &q, "--candidates", &cz, "-k", "2"]);
    assert_clean_failure(
        &o,
        &[
            "cz.npy: candidate row 1: all elements are zero; or pass --invalid exclude \
           to leave such rows out (listed in excluded)",
        ],
    );
    // A NaN row names the same remedy (issue 30, item 7).
    let cn = dir.join("cn.npy");
    write_npy(&cn, &[2, 2], &[1.0, 0.0, f32::NAN, 1.0]);
    let cn = cn.display().to_string();
    let o = run(&["select", "--query", &q, "--candidates", &cn, "-k", "2"]);
    assert_clean_failure(
        &o,
        &[
            "cn.npy: candidate row 1: element 0 is not finite (NaN); or pass --invalid \
           exclude to leave such rows out (listed in excluded)",
        ],
    );
    // A row that is not zero in f32 but rounds to zero in f16 says so.
    let cu = dir.join("cu.npy");
    write_npy(&cu, &[2, 2], &[1.0, 0.0, 1e-9, 2e-8]);
    let cu = cu.display().to_string();
    let o = run(&[
        "select",
        "--query",
        &q,
        "--candidates",
        &cu,
        "-k",
        "2",
        "--storage",
        "f16",
    ]);
    assert_clean_failure(
        &o,
        &[
            "cu.npy: candidate 1: the values underflow f16: every element rounds to zero \
           (the largest in magnitude is element 1 = 2e-8); scale or normalize the rows \
           (only their directions are used), or use storage 'f32'",
        ],
    );

    let o = run(&["select", "--query", &c, "--candidates", &c, "-k", "2"]);
    assert_clean_failure(&o, &["expected one query", "3 × 2"]);

    // Options are checked by the specification, naming the flag as given.
    let select = |extra: &[&str]| {
        let mut args = vec!["select", "--query", &q, "--candidates", &c, "-k", "2"];
        args.extend_from_slice(extra);
        run(&args)
    };
    assert_clean_failure(
        &select(&["--method", "pursuit", "--gamma", "1.5"]),
        &["gamma 1.5 must be in (0, 1]"],
    );
    assert_clean_failure(
        &select(&["--gamma", "0.3"]),
        &["option 'gamma' does not apply to method 'recommended' (it applies to pursuit, centroid)"],
    );
    assert_clean_failure(
        &select(&["--method", "topk", "--at-pool-optimum", "fill"]),
        &["option 'at-pool-optimum' does not apply to method 'topk'"],
    );
    for method in [
        &["--method", "centroid"][..],
        &["--method", "pursuit", "--ridge", "inf"],
    ] {
        let mut args = method.to_vec();
        args.extend_from_slice(&["--at-pool-optimum", "fill"]);
        assert_clean_failure(
            &select(&args),
            &[
                "option 'at-pool-optimum' does not apply to method",
                "finite ridge",
            ],
        );
    }
    // A budget that is not an integer >= 0 is named as such (not as an
    // unknown flag '-1').
    for (k, shown) in [("-1", "'-1'"), ("2.5", "'2.5'"), ("many", "'many'")] {
        let o = run(&["select", "--query", &q, "--candidates", &c, "-k", k]);
        assert_clean_failure(&o, &[&format!("K must be an integer >= 0, got {shown}")]);
    }
    // So are negative option values (clap would take '-1' for a flag).
    assert_clean_failure(
        &select(&["--method", "pursuit", "--gamma", "-1"]),
        &["gamma -1 must be in (0, 1]"],
    );
    let o = run(&["eval", "--dir", FIXTURE, "-k", "3,-5"]);
    assert_clean_failure(&o, &["K must be an integer >= 1, got '-5'"]);
    // A synthetic bench too large to allocate is an error, not an abort.
    let o = run(&[
        "bench",
        "-p",
        "4294967296",
        "-d",
        "4294967296",
        "-k",
        "3",
        "--queries",
        "1",
        "--rounds",
        "1",
    ]);
    assert_clean_failure(&o, &["do not fit in memory"]);
    // An evaluation of K = 0 selects nothing: refused.
    let o = run(&["eval", "--dir", FIXTURE, "-k", "0"]);
    assert_clean_failure(&o, &["K must be an integer >= 1, got '0'"]);
    let o = run(&["eval", "--dir", FIXTURE, "--retrieve", "0", "-k", "3"]);
    assert_clean_failure(&o, &["retrieve depth P must be at least 1"]);
    assert!(!stderr(&o).contains("note:"), "{}", stderr(&o));
    assert_clean_failure(
        &select(&["--method", "nope"]),
        &["unknown method 'nope' (methods: recommended, pursuit, centroid, topk, mmr)"],
    );
    assert_clean_failure(
        &select(&["--method", "mmr,mmr_lambda=big"]),
        &["option 'mmr_lambda' must be a number, got 'big'"],
    );
    assert_clean_failure(
        &select(&["--method", "pursuit", "--mmr-lambda", "0.3"]),
        &["option 'mmr-lambda' does not apply to method 'pursuit' (it applies to mmr)"],
    );
    assert_clean_failure(
        &select(&["--method", "topk", "--raw-relevance"]),
        &["raw relevance (the scores used as given) needs relevance scores"],
    );

    let not_npy = dir.join("text.npy");
    std::fs::write(&not_npy, "hello").unwrap();
    let o = run(&[
        "select",
        "--query",
        &q,
        "--candidates",
        not_npy.to_str().unwrap(),
        "-k",
        "2",
    ]);
    assert_clean_failure(&o, &["text.npy"]);
}

#[test]
fn eval_on_the_fixture_and_its_errors() {
    let dir = scratch("eval");
    let out = dir.join("sel.jsonl");
    let o = run(&[
        "eval",
        "--dir",
        FIXTURE,
        "-k",
        "10",
        "--methods",
        "topk,pursuit",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = v["methods"][0]["budgets"][0]["overall"]["evidence_recall"]
        .as_f64()
        .unwrap();
    assert!((r - 0.7458).abs() < 5e-5);
    assert_eq!(v["methods"][1]["name"], "pursuit");
    let lines = std::fs::read_to_string(&out).unwrap();
    assert_eq!(lines.lines().count(), 24);
    let first: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert_eq!(first["picks"]["pursuit"].as_array().unwrap().len(), 10);

    // The explicit-files form gives the same table as --dir.
    let f = |n: &str| format!("{FIXTURE}/{n}");
    let a = run(&["eval", "--dir", FIXTURE, "-k", "3,5"]);
    let b = run(&[
        "eval",
        "--memories",
        &f("memories.f32.npy"),
        "--queries",
        &f("queries.f32.npy"),
        "--spec",
        &f("queries.jsonl"),
        "-k",
        "3,5",
    ]);
    assert!(a.status.success() && b.status.success());
    let table = |o: &Output| stdout(o).lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(table(&a), table(&b));

    let o = run(&["eval", "--dir", dir.to_str().unwrap()]);
    assert_clean_failure(&o, &["queries.jsonl", "No such file"]);
    let o = run(&[
        "eval",
        "--memories",
        &f("queries.f32.npy"),
        "--queries",
        &f("queries.f32.npy"),
        "--spec",
        &f("queries.jsonl"),
    ]);
    assert_clean_failure(
        &o,
        &["queries.jsonl line 1", "pool memory id 24 is out of range"],
    );
    let o = run(&["eval", "--dir", FIXTURE, "--methods", "nope"]);
    assert_clean_failure(&o, &["nope", "possible values: recommended, pursuit"]);
    let o = run(&["eval", "--dir", FIXTURE, "--method", "topk,storage=f16"]);
    assert_clean_failure(&o, &["the evaluation runs on the f32 embeddings"]);
    let o = run(&[
        "eval",
        "--dir",
        FIXTURE,
        "--methods",
        "topk",
        "--gamma",
        "0.3",
    ]);
    assert_clean_failure(
        &o,
        &["--gamma applies to none of the selectors (topk); it applies to pursuit, centroid"],
    );
    let o = run(&["eval"]);
    assert_clean_failure(&o, &["--dir"]);
}

#[test]
fn tune_on_the_fixture_prints_the_choice_and_a_command() {
    let o = run(&["tune", "--dir", FIXTURE, "-k", "5,10", "--folds", "4"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("K = 5\n") && out.contains("K = 10\n"), "{out}");
    for name in [
        "topk",
        "recommended",
        "pursuit",
        "centroid,gamma=0.05",
        "centroid,gamma=0.7",
    ] {
        assert!(
            out.lines().any(|l| l.trim_start().starts_with(name)),
            "{name}"
        );
    }
    assert!(out.contains(
        "Use it: mempursuit select --query Q.npy --candidates C.npy -k K --method centroid,gamma=0.5"
    ));
    assert!(out.contains("24 queries, 4 folds (seeded shuffle, seed 0)"));
    let o = run(&["tune", "--dir", FIXTURE, "--folds", "1"]);
    assert_clean_failure(&o, &["1 folds for 24 queries"]);
    let o = run(&["tune", "--dir", FIXTURE, "--gamma", "0"]);
    assert_clean_failure(&o, &["gamma 0 of the grid must be in (0, 1]"]);
}

#[test]
fn eval_retrieves_pools_and_plots() {
    let dir = scratch("retrieve");
    let svg = dir.join("recall.svg");
    let o = run(&[
        "eval",
        "--dir",
        FIXTURE,
        "-k",
        "3,5,10",
        "--methods",
        "topk,recommended",
        "--retrieve",
        "50",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // The ceiling: 93.1 % of the gold is among the top-50 memories.
    assert!(
        out.contains(
            "pool ceiling all    93.1   83.3   87.5   (every pool member picked; mean pool 50.0)"
        ),
        "{out}"
    );
    assert!(out.contains("Pools: top-50 memories by cosine (within scope)."));
    let row = out
        .lines()
        .find(|l| l.starts_with("recommended") && l.split_whitespace().nth(1) == Some("10"))
        .unwrap();
    assert!(
        row.contains("79.6") && row.ends_with("+6.4 [+1.4, +13.2]"),
        "{row}"
    );
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("recommended") && svg.contains("topk"));
    assert_eq!(svg.matches("<polygon").count(), 2);
    // Unit-free relevance is the default; raw scores are opt-in.
    let o = run(&[
        "eval",
        "--dir",
        FIXTURE,
        "-k",
        "5",
        "--relevance",
        "raw",
        "--methods",
        "topk",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Relevance: Raw."));
    let o = run(&["eval", "--dir", FIXTURE, "--retrieve", "0"]);
    assert_clean_failure(&o, &["retrieve depth P must be at least 1"]);
}

/// `.npy` files are untrusted: the CLI refuses a hostile file with the
/// reader's message and the path, and a candidates file of shape (d,).
#[test]
fn select_refuses_hostile_npy_files() {
    let dir = scratch("hostile-npy");
    let (q, _) = example(&dir);
    let file = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p.display().to_string()
    };
    let npy = |header: &str, data: &[u8]| {
        let mut h = header.as_bytes().to_vec();
        while !(10 + h.len() + 1).is_multiple_of(64) {
            h.push(b' ');
        }
        h.push(b'\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(h.len() as u16).to_le_bytes());
        out.extend_from_slice(&h);
        out.extend_from_slice(data);
        out
    };
    let select = |c: &str| run(&["select", "--query", &q, "--candidates", c, "-k", "2"]);

    // 2^32 × 2^32 wraps to 0 elements: "selected" from 4.6e18 candidates before.
    let wrap = file(
        "wrap.npy",
        &npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
            &[],
        ),
    );
    assert_clean_failure(
        &select(&wrap),
        &[
            "wrap.npy: shape",
            "more elements than this machine can address",
        ],
    );
    // 12 bytes announcing a 4 GiB header: aborted on allocation before.
    let huge = file("huge.npy", b"\x93NUMPY\x02\x00\xff\xff\xff\xff");
    assert_clean_failure(
        &select(&huge),
        &["huge.npy: malformed .npy header", "4294967295"],
    );
    let short = file(
        "short.npy",
        &npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }",
            &[0; 20],
        ),
    );
    assert_clean_failure(
        &select(&short),
        &["short.npy: truncated file: header says 6 values, file holds 5"],
    );
    let f8 = file(
        "f8.npy",
        &npy(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }",
            &[0; 16],
        ),
    );
    assert_clean_failure(&select(&f8), &["dtype <f8", "astype(float32)"]);
    let fortran = file(
        "fortran.npy",
        &npy(
            "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
            &[0; 16],
        ),
    );
    assert_clean_failure(&select(&fortran), &["np", "ascontiguousarray"]);
    let text = file("text.npy", b"hello");
    assert_clean_failure(&select(&text), &["text.npy: not an .npy file"]);
    // Shape (d,) candidates: one candidate or d of dimension 1? Refused.
    let vector = dir.join("vector.npy");
    write_npy(&vector, &[2], &[0.6, 0.8]);
    assert_clean_failure(
        &select(vector.to_str().unwrap()),
        &["vector.npy: expected a 2-D array (rows, d), got shape (2,)"],
    );
}

/// The CLI's JSON is the library's serde form: κ = ∞ reads back as a
/// `Method`, and a baseline's steps carry no pursuit-only fields.
#[test]
fn select_json_is_the_library_serde_form() {
    use mempursuit::{Method, PursuitOptions};
    let dir = scratch("json");
    let (q, c) = example(&dir);
    let json = |extra: &[&str]| {
        let mut args = vec![
            "select",
            "--query",
            &q,
            "--candidates",
            &c,
            "-k",
            "2",
            "--json",
        ];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let v = json(&["--method", "centroid"]);
    assert_eq!(v["method"], "centroid");
    assert_eq!(v["spec"], serde_json::json!({"method": "centroid"}));
    assert_eq!(v["options"]["Pursuit"]["ridge"], "inf");
    let m: Method = serde_json::from_value(v["options"].clone()).unwrap();
    assert_eq!(
        m,
        Method::Pursuit(PursuitOptions::centroid(mempursuit::spec::CENTROID_GAMMA))
    );
    let sel: mempursuit::Selection = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(sel.picks, vec![0, 2]);
    assert_eq!(sel.weights, vec![0.5, 0.5]);
    // The specification reads back from its JSON, and from its text form.
    let v = json(&[
        "--method",
        "mmr",
        "--mmr-lambda",
        "0.25",
        "--invalid",
        "exclude",
    ]);
    assert_eq!(v["method"], "mmr,mmr_lambda=0.25,invalid=exclude");
    let spec: mempursuit::SelectSpec = serde_json::from_value(v["spec"].clone()).unwrap();
    assert_eq!(spec.to_string(), v["method"]);
    assert_eq!(spec.mmr_lambda(), Some(0.25));

    for method in ["topk", "mmr"] {
        let v = json(&["--method", method]);
        let text = v.to_string();
        for absent in [
            "fw_gap",
            "residual_sq",
            "nu",
            "weights",
            "free_size",
            "dependent",
            "skipped",
        ] {
            assert!(!text.contains(absent), "{method} JSON has {absent}: {text}");
        }
        let step = v["steps"][0].as_object().unwrap();
        let keys: Vec<&str> = step.keys().map(String::as_str).collect();
        assert_eq!(keys, vec!["index", "score"], "{method}");
        assert!(step["score"].as_f64().unwrap() > 0.3);
        let m: Method = serde_json::from_value(v["options"].clone()).unwrap();
        assert!(!matches!(m, Method::Pursuit(_)));
    }
    // A pursuit's steps carry every field of the one list of step fields,
    // with the one spelling of stop reasons and refit statuses.
    for method in ["recommended", "pursuit", "centroid"] {
        let v = json(&["--method", method]);
        assert!(v["steps"][1]["fw_gap"].is_number() && v["weights"].is_array());
        let mut keys: Vec<&str> = v["steps"][1]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut want: Vec<&str> = mempursuit::Step::FIELDS.iter().map(|f| f.name).collect();
        keys.sort_unstable();
        want.sort_unstable();
        assert_eq!(keys, want, "{method}");
        assert_eq!(v["steps"][1]["refit"], "optimal");
        assert_eq!(v["stop"], mempursuit::StopReason::Budget.as_str());
    }
}

/// The library's policies on the command line: excluding unusable rows, a
/// notice when K > P.
#[test]
fn select_exposes_invalid_candidates_and_budget_notice() {
    let dir = scratch("policies");
    let (q, _) = example(&dir);
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let cz = dir.join("cz.npy");
    // Row 1 is zero: one such row made the pool unusable from the CLI.
    write_npy(&cz, &[3, 2], &[1.0, 0.0, 0.0, 0.0, s, s]);
    let cz = cz.display().to_string();
    let o = run(&["select", "--query", &q, "--candidates", &cz, "-k", "2"]);
    assert_clean_failure(&o, &["candidate row 1: all elements are zero"]);
    for method in ["recommended", "pursuit", "centroid", "topk", "mmr"] {
        let o = run(&[
            "select",
            "--query",
            &q,
            "--candidates",
            &cz,
            "-k",
            "3",
            "--method",
            method,
            "--invalid-candidates",
            "exclude",
        ]);
        assert!(o.status.success(), "{method}: {}", stderr(&o));
        let out = stdout(&o);
        let order = order_line(&out);
        assert_eq!(order.len(), 2, "{method}: {out}");
        assert_eq!(order[0], 2, "{method}");
        assert!(!order.contains(&1), "{method}");
        assert!(
            out.contains("excluded: 1 unusable candidate row: 1"),
            "{out}"
        );
        assert!(
            out.contains("stop: pool_exhausted after 2 picks"),
            "{method}: {out}"
        );
        assert!(!stderr(&o).contains("note:"), "{}", stderr(&o));
    }
    let o = run(&[
        "select",
        "--query",
        &q,
        "--candidates",
        &cz,
        "-k",
        "5",
        "--method",
        "pursuit",
        "--invalid-candidates",
        "exclude",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("mempursuit: note: budget K = 5 exceeds the pool (P = 3)"),
        "{}",
        stderr(&o)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["excluded"], serde_json::json!([1]));
    assert_eq!(v["stop"], "pool_exhausted");
    assert_eq!(
        v["options"]["Pursuit"]["input"]["invalid_candidates"],
        "Exclude"
    );

    // eval: the same option; K above every pool of the fixture (≤ 60).
    let o = run(&[
        "eval",
        "--dir",
        FIXTURE,
        "-k",
        "200",
        "--methods",
        "topk",
        "--invalid-candidates",
        "exclude",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("note: budget K = 200 exceeds the pool of 24 of 24 queries"),
        "{}",
        stderr(&o)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["methods"][0]["method"]["TopK"]["invalid_candidates"],
        "Exclude"
    );
}

/// `bench --threads N` says how many threads ran (one per query at most,
/// and fewer for a batch too small to pay for them) and the plan.
#[test]
fn bench_reports_the_threads_it_used() {
    let o = run(&[
        "bench",
        "-p",
        "8",
        "-d",
        "4",
        "-k",
        "2",
        "--queries",
        "3",
        "--rounds",
        "1",
        "--threads",
        "8",
        "--batch-plan",
        "queries,auto",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("batch on 3 threads (--threads 8: one per query at most)"),
        "{out}"
    );
    assert!(
        out.contains("plan queries: 3 whole queries at a time"),
        "{out}"
    );
    // Three pools of 128 bytes are too little work to start threads for.
    assert!(
        out.contains(
            "batch on 1 thread (--threads 8: the automatic plan: too little work for more), plan auto"
        ),
        "{out}"
    );
    let o = run(&[
        "bench",
        "-p",
        "4",
        "-d",
        "4",
        "-k",
        "6",
        "--queries",
        "2",
        "--rounds",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("note: budget K = 6 exceeds the smallest pool (P = 4)"),
        "{}",
        stderr(&o)
    );
}

/// `bench --storage int8` times the f32 pursuit in the same process and
/// prints its row, the int8 / f32 ratio and the int8 report lines.
#[test]
fn bench_int8_times_the_f32_pursuit() {
    let o = run(&[
        "bench",
        "-p",
        "16",
        "-d",
        "8",
        "-k",
        "3",
        "--queries",
        "2",
        "--rounds",
        "2",
        "--storage",
        "int8",
        "--roofline",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for want in [
        "| selection | ",
        "| f32 pursuit | ",
        "| roofline (K+1 passes) | ",
        "int8 / f32 pursuit: ",
        "selection / roofline: ",
        "f32 pursuit / roofline: ",
        "verified candidates per pick: ",
        "picks vs f32: identical sequence in 2/2 queries",
    ] {
        assert!(out.contains(want), "{want:?} missing:\n{out}");
    }
    // Four samples (2 queries × 2 rounds) in both timed rows.
    assert!(
        out.lines()
            .any(|l| l.starts_with("| f32 pursuit |") && l.ends_with("| 4 |")),
        "{out}"
    );
}

/// `bench --storage int8 --int8-kernel portable` runs the int8 passes on
/// the named kernel (every CPU runs the portable one), says so in the
/// header, gives the same picks, and reports the rule of `Int8Passes::Auto`
/// for that kernel (never int8 on the portable kernel); an unknown name is
/// an error that lists the names.
#[test]
fn bench_int8_runs_a_forced_kernel() {
    let args = [
        "bench",
        "-p",
        "16",
        "-d",
        "8",
        "-k",
        "3",
        "--queries",
        "2",
        "--rounds",
        "1",
        "--storage",
        "int8",
        "--int8-kernel",
    ];
    let o = run(&[&args[..], &["portable"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for want in [
        "int8 kernel portable",
        "int8 passes with Int8Passes::Auto at P = 16, d = 8, K = 3 on int8 kernel portable: no: the f32 pursuit runs",
        "picks vs f32: identical sequence in 2/2 queries",
    ] {
        assert!(out.contains(want), "{want:?} missing:\n{out}");
    }
    let o = run(&[&args[..], &["avx3"]].concat());
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--int8-kernel avx3: not a kernel name (auto, avx512-vnni"),
        "{}",
        stderr(&o)
    );
}

/// Lists of storages, thread counts and batch plans are timed in one run:
/// one row per configuration, the storage ratios against the first
/// storage, the speedups against one thread, the plan each batch resolved
/// to, the CPU and cache lines, and the agreement of each reduced storage.
#[test]
fn bench_times_storages_and_thread_plans_in_one_run() {
    let o = run(&[
        "bench",
        "-p",
        "24",
        "-d",
        "16",
        "-k",
        "3",
        "--queries",
        "3",
        "--rounds",
        "2",
        "--storage",
        "f32,f16",
        "--threads",
        "1,2",
        "--batch-plan",
        "queries,split",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for want in [
        "cpu:     ",
        "cache:   L2 ",
        "6 configurations timed round by round",
        "F32, batch on 2 threads, plan queries: 2 whole queries at a time",
        "F16, batch on 2 threads, plan split: each query split over 2 threads",
        "| selection f32, 1 thread | ",
        "| selection f16, batch 2 threads (split) | ",
        "f16 / f32 (1 thread): ",
        "f16 / f32 (batch 2 threads (queries)): ",
        "speedup of batch 2 threads (split) over 1 thread, f32: ",
        "picks vs f32 (f16): identical sequence in 3/3 queries",
    ] {
        assert!(out.contains(want), "{want:?} missing:\n{out}");
    }
    // 3 queries × 2 rounds single-threaded, one sample per round in batch.
    assert!(
        out.lines()
            .any(|l| l.starts_with("| selection f16, 1 thread |") && l.ends_with("| 6 |")),
        "{out}"
    );
    assert!(
        out.lines().any(
            |l| l.starts_with("| selection f32, batch 2 threads (queries) |")
                && l.ends_with("| 2 |")
        ),
        "{out}"
    );
    // f16 alone on pools that fit in L2 even as f32: a line says it cannot pay.
    let o = run(&[
        "bench",
        "-p",
        "24",
        "-d",
        "16",
        "-k",
        "3",
        "--queries",
        "2",
        "--rounds",
        "1",
        "--storage",
        "f16",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("note: these pools fit in this core's L2 cache even as f32"),
        "{}",
        stdout(&o)
    );
    // Bad combinations are errors that say what to do.
    let o = run(&[
        "bench",
        "-p",
        "8",
        "-d",
        "4",
        "--threads",
        "2",
        "--split",
        "2",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("add 1 to the --threads list"),
        "{}",
        stderr(&o)
    );
    let o = run(&["bench", "-p", "8", "-d", "4", "--storage", "f32,int8"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("int8 runs alone"), "{}", stderr(&o));
    let o = run(&["bench", "-p", "8", "-d", "4", "--batch-plan", "split-by-0"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("split-by-N"), "{}", stderr(&o));
}

/// `bench --screening compare` times the screened (on), the default (auto)
/// and the unscreened (off) pursuit (one storage on one thread; lists are
/// errors that say so);
/// `--screening on` runs with the lists of storages and split threads but
/// not with a batch; `--store-pool N` takes pools from a dataset's store,
/// `--tile T` lifts them to T·d dimensions.
#[test]
fn bench_screening_and_store_pools() {
    let base = ["bench", "-p", "24", "-d", "16", "-k", "3", "--queries", "2"];
    let bench = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(&["--rounds", "2"]);
        args.extend_from_slice(extra);
        run(&args)
    };
    let o = bench(&["--screening", "compare", "--storage", "f16"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for want in [
        "storage F16, single thread",
        "| screened (on) | ",
        "| auto | ",
        "| unscreened (off) | ",
        "screened / unscreened: ",
        "auto / unscreened: ",
        "rows read per pick (the query pass included): screened ",
    ] {
        assert!(out.contains(want), "{want:?} missing:\n{out}");
    }
    // 2 queries × 2 rounds in each row.
    for row in ["| screened (on) |", "| auto |", "| unscreened (off) |"] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(row) && l.ends_with("| 4 |")),
            "{row} {out}"
        );
    }
    for extra in [
        &["--screening", "compare", "--threads", "1,2"][..],
        &["--screening", "compare", "--storage", "f32,f16"][..],
        &["--screening", "compare", "--split", "2"][..],
    ] {
        assert_clean_failure(
            &bench(extra),
            &["--screening compare runs one storage (f32, f16 or bf16) on one thread"],
        );
    }
    let o = bench(&[
        "--screening",
        "on",
        "--storage",
        "f32,bf16",
        "--split",
        "1,2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("| selection bf16, split 2 | "), "{out}");
    assert!(
        out.contains("picks vs f32 (bf16): identical sequence in 2/2 queries"),
        "{out}"
    );
    assert_clean_failure(
        &bench(&["--screening", "off", "--threads", "1,2"]),
        &["--screening off applies to the single-thread and split runs"],
    );
    assert_clean_failure(
        &bench(&["--screening", "compare", "--storage", "int8"]),
        &["--screening compare runs one storage (f32, f16 or bf16)"],
    );
    let o = run(&[
        "bench",
        "--dir",
        FIXTURE,
        "--store-pool",
        "12",
        "-k",
        "3",
        "--rounds",
        "1",
        "--screening",
        "compare",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("pools of the 12 store rows nearest each query"),
        "{out}"
    );
    assert!(out.contains("(P = 12)"), "{out}");
    assert_clean_failure(&run(&["bench", "--store-pool", "12"]), &["--dir"]);
    // `--tile 2`: the same pools lifted to twice the dimension.
    let o = run(&[
        "bench",
        "--dir",
        FIXTURE,
        "--store-pool",
        "12",
        "--tile",
        "2",
        "-k",
        "3",
        "--rounds",
        "1",
        "--screening",
        "compare",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("d = 384 tiled 2× to 768"), "{out}");
    assert_clean_failure(&run(&["bench", "--tile", "2"]), &["--dir"]);
}

/// The selector flags are the specification's options: `--help` lists every
/// method and every option of `mempursuit::spec::OPTIONS` (bench: but
/// `storage`, which is its own `--storage`, and `cost_budget`, without
/// costs; eval: but the relevance, storage and cost options, which the
/// dataset options and `--token-budget` decide).
#[test]
fn the_flags_are_the_specification_options() {
    use mempursuit::spec::OPTIONS;
    for (command, excluded) in [
        ("select", &[][..]),
        ("bench", &["storage", "cost_budget"][..]),
        (
            "eval",
            &["raw_relevance", "pool_order", "storage", "cost_budget"][..],
        ),
    ] {
        let o = run(&[command, "--help"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let help = stdout(&o);
        for m in mempursuit::MethodName::ALL {
            assert!(help.contains(m.summary()), "{command}: {m}");
        }
        let has = |flag: &str| {
            help.lines().any(|l| {
                let t = l.trim_start();
                t == flag || t.starts_with(&format!("{flag} "))
            })
        };
        for opt in OPTIONS.iter().filter(|o| o.key != "method") {
            let flag = format!("--{}", opt.key.replace('_', "-"));
            // bench's --storage and eval's --pool-order are their own.
            let own = matches!(
                (command, opt.key),
                ("bench", "storage") | ("eval", "pool_order")
            );
            if !excluded.contains(&opt.key) {
                assert!(has(&flag), "{command} lacks {flag}:\n{help}");
            } else if !own {
                assert!(!has(&flag), "{command} has {flag}");
            }
        }
    }
}

/// eval: `--methods` rows, `--method` rows in the text form, and option
/// flags that apply to every selector whose method they apply to, one row
/// per value.
#[test]
fn eval_names_rows_by_their_specification() {
    let o = run(&[
        "eval",
        "--dir",
        FIXTURE,
        "-k",
        "5",
        "--bootstrap",
        "0",
        "--methods",
        "topk",
        "--method",
        "centroid",
        "--method",
        "mmr,mmr_lambda=0.3",
        "--gamma",
        "0.2,0.5",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = v["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "topk",
            "centroid,gamma=0.2",
            "centroid,gamma=0.5",
            "mmr,mmr_lambda=0.3"
        ]
    );
    assert_eq!(v["methods"][2]["method"]["Pursuit"]["gamma"], 0.5);
    assert_eq!(v["methods"][3]["method"]["Mmr"]["lambda"], 0.3);
    // Without --methods and --method: every method, top-K first.
    let o = run(&[
        "eval",
        "--dir",
        FIXTURE,
        "-k",
        "3",
        "--bootstrap",
        "0",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = v["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["topk", "recommended", "pursuit", "centroid", "mmr"]);
}

/// bench times any specification; paper mode by default.
#[test]
fn bench_times_a_specification() {
    let bench = |extra: &[&str]| {
        let mut args = vec![
            "bench",
            "-p",
            "8",
            "-d",
            "4",
            "-k",
            "3",
            "--queries",
            "2",
            "--rounds",
            "1",
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    for (extra, line) in [
        (&[][..], "method:  pursuit, K = 3"),
        (&["--method", "recommended"], "method:  recommended, K = 3"),
        (
            &["--method", "pursuit", "--adaptive"],
            "method:  pursuit,adaptive=true, K = 3",
        ),
        (
            &["--method", "mmr,mmr_lambda=0.3"],
            "method:  mmr,mmr_lambda=0.3, K = 3",
        ),
    ] {
        let o = bench(extra);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        assert!(stdout(&o).contains(line), "{extra:?}: {}", stdout(&o));
    }
    assert_clean_failure(
        &bench(&["--method", "pursuit,storage=f16"]),
        &["give the candidates' storage with --storage"],
    );
    assert_clean_failure(
        &bench(&["--method", "topk", "--gamma", "0.3"]),
        &["option 'gamma' does not apply to method 'topk'"],
    );
}

/// `eval --copy-cosine`: the clean table, then each method's drop with
/// near-copies; a cosine outside (0, 1] is an error that names it.
#[test]
fn eval_with_near_copies() {
    let o = run(&[
        "eval",
        "--dir",
        FIXTURE,
        "-k",
        "3",
        "--methods",
        "topk,recommended",
        "--copy-cosine",
        "1,0.9",
        "--copy-top",
        "2",
        "--copies-each",
        "1",
        "--copy-seed",
        "5",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("Robustness to near-copies:"), "{out}");
    assert!(out.contains("copies at cosine 0.9: recall, drop"), "{out}");
    assert!(
        out.contains("Near-copies: 1 of each of the top 2 pool members"),
        "{out}"
    );
    // Exact copies are merged by the recommended setting: no drop.
    let row = out.lines().find(|l| {
        l.starts_with("recommended")
            && l.split_whitespace().nth(1) == Some("3")
            && l.contains("[+0.0, +0.0]")
    });
    assert!(row.is_some(), "{out}");
    let o = run(&["eval", "--dir", FIXTURE, "-k", "3", "--copy-cosine", "0"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("copy cosine 0 must be in (0, 1]"),
        "{}",
        stderr(&o)
    );
}

/// `eval --token-budget`: every method at the same budgets in tokens
/// (whitespace words of the texts); the table says so; `-k` and
/// `--token-budget` exclude each other; a dataset without texts is refused.
#[test]
fn eval_at_equal_token_budgets() {
    let o = run(&[
        "eval",
        "--dir",
        FIXTURE,
        "--token-budget",
        "60,200",
        "--methods",
        "topk,mmr,pursuit,recommended",
        "--bootstrap",
        "200",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("method      tokens picks  recall"), "{out}");
    for m in ["topk", "mmr", "pursuit", "recommended"] {
        for b in ["60", "200"] {
            assert!(
                out.lines()
                    .any(|l| l.starts_with(m) && l.split_whitespace().nth(1) == Some(b)),
                "{m} at {b}: {out}"
            );
        }
    }
    assert!(out.contains("whitespace-separated words"), "{out}");
    let o = run(&["eval", "--dir", FIXTURE, "--token-budget", "60", "-k", "5"]);
    assert_clean_failure(&o, &["--token-budget", "cannot be used with"]);
    let o = run(&["eval", "--dir", FIXTURE, "--method", "topk,cost_budget=100"]);
    assert_clean_failure(&o, &["budgets in tokens from its own option"]);
    // A dataset given without memories.jsonl has no texts.
    let o = run(&[
        "eval",
        "--memories",
        &format!("{FIXTURE}/memories.f32.npy"),
        "--queries",
        &format!("{FIXTURE}/queries.f32.npy"),
        "--spec",
        &format!("{FIXTURE}/queries.jsonl"),
        "--token-budget",
        "60",
    ]);
    assert_clean_failure(&o, &["memory id 0 has none", "--memory-texts"]);
}

/// Help wraps to the terminal's width (clap's `wrap_help`, issue 30, item
/// 5): at COLUMNS=100 no line of the program's or a subcommand's `--help`
/// is longer than 100 characters (it was up to 229).
#[test]
fn help_fits_a_100_column_terminal() {
    for sub in [
        &[][..],
        &["demo"],
        &["select"],
        &["eval"],
        &["tune"],
        &["bench"],
    ] {
        let o = Command::new(BIN)
            .args(sub)
            .arg("--help")
            .env("COLUMNS", "100")
            .output()
            .expect("the binary runs");
        assert!(o.status.success(), "{sub:?}: {}", stderr(&o));
        let text = stdout(&o);
        assert!(text.lines().count() > 5, "{sub:?}: {text}");
        for line in text.lines() {
            assert!(
                line.chars().count() <= 100,
                "{sub:?}: {} chars: {line}",
                line.chars().count()
            );
        }
    }
}

/// `select`'s text output at COLUMNS=100 too: the legend below the step
/// table fits 100 columns, and counts take their noun in the singular for
/// one ("1 candidate", "1 pick").
#[test]
fn select_output_fits_100_columns_and_counts_in_the_singular() {
    let dir = scratch("select-output");
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let q = dir.join("q.npy");
    let c = dir.join("c.npy");
    write_npy(&q, &[2], &[s, s]);
    // Rows 0 and 1 are the same memory: the recommended setting skips 1.
    write_npy(&c, &[3, 2], &[1.0, 0.0, 1.0, 0.0, 0.0, 1.0]);
    let (q, c) = (q.display().to_string(), c.display().to_string());
    let o = run(&["select", "--query", &q, "--candidates", &c, "-k", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("stop: pool_exhausted after 2 picks"), "{out}");
    assert!(
        out.contains("skipped: 1 candidate already represented by the picks: 1\n"),
        "{out}"
    );
    let o = run(&[
        "select",
        "--query",
        &q,
        "--candidates",
        &c,
        "-k",
        "1",
        "--method",
        "pursuit",
    ]);
    let out = stdout(&o);
    assert!(out.contains("stop: budget after 1 pick\n"), "{out}");
    assert!(out.contains("'+': picked by relevance fill"), "{out}");
    for line in out.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} chars: {line}",
            line.chars().count()
        );
    }
}

/// README's first command-line block, as pasted (issue 30, item 3): its
/// first line installs the binary this crate builds (`cargo install --locked
/// --path cli`: the package in cli/ has the `mempursuit` binary), and its
/// `mempursuit select` line runs in a folder with q.npy and c.npy.
#[test]
fn readme_command_line_block_installs_then_selects() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md beside the workspace manifest");
    let block = readme
        .split("```bash\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .find(|b| b.lines().any(|l| l.starts_with("mempursuit ")))
        .expect("README has a bash block that runs `mempursuit`");
    let lines: Vec<&str> = block.lines().collect();
    assert_eq!(lines[0], "cargo install --locked --path cli", "{block}");
    let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .expect("cli/Cargo.toml");
    assert!(
        manifest.contains("[[bin]]\nname = \"mempursuit\""),
        "{manifest}"
    );
    let select = lines[1];
    let words: Vec<&str> = select.split_whitespace().collect();
    assert_eq!(words[..2], ["mempursuit", "select"], "{select}");
    let dir = scratch("readme-select");
    let s = std::f32::consts::FRAC_1_SQRT_2;
    write_npy(&dir.join("q.npy"), &[2], &[s, s]);
    write_npy(
        &dir.join("c.npy"),
        &[3, 2],
        &[0.9950, 0.0998, 0.9998, 0.0200, 0.0, 1.0],
    );
    let o = Command::new(BIN)
        .args(&words[1..])
        .current_dir(&dir)
        .output()
        .expect("the binary runs");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(order_line(&stdout(&o)), vec![0, 2]);
}

/// README's token-budget command, as pasted (continuation lines joined,
/// `$DIR` = the committed mini fixture): it runs, and prints a row per
/// method and budget.
#[test]
fn readme_token_budget_command_runs_on_the_mini_fixture() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md beside the workspace manifest");
    let block = readme
        .split("```bash\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .find(|b| b.contains("--token-budget"))
        .expect("README has a bash block with `--token-budget`");
    let line = block.replace("\\\n", " ").replace("$DIR", FIXTURE);
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words[..2], ["mempursuit", "eval"], "{line}");
    let out = run(&words[1..]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for method in ["topk", "mmr", "pursuit", "recommended"] {
        for tokens in ["50", "100", "200", "400"] {
            assert!(
                text.lines().any(|l| {
                    let mut w = l.split_whitespace();
                    w.next() == Some(method) && w.next() == Some(tokens)
                }),
                "no row for {method} at {tokens} tokens:\n{text}"
            );
        }
    }
}

/// `eval` on a store of overlapping chunks (`tests/data/overlap-tiny/`,
/// memories listing their `sentences`): the unit columns and deltas in the
/// table, unit recall in the JSON and the plot, `--half`, and the unit drop
/// with `--copy-cosine`.
#[test]
fn eval_measures_over_evidence_units() {
    let tiny = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/overlap-tiny");
    let dir = scratch("units");
    let svg = dir.join("units.svg");
    let o = run(&[
        "eval",
        "--dir",
        tiny,
        "-k",
        "2,3",
        "--methods",
        "topk,recommended",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("method        K   rep  recall   full groups  units u-full"),
        "{out}"
    );
    let row = out
        .lines()
        .find(|l| l.starts_with("recommended") && l.split_whitespace().nth(1) == Some("2"))
        .unwrap();
    // rep, then recall / full / groups / units / u-full over all 3 queries.
    assert!(
        row.starts_with("recommended   2  0.00    55.6   33.3   66.7  100.0  100.0"),
        "{row}"
    );
    assert!(row.contains("+25.0 ["), "{row}");
    assert!(out.contains("units: unit recall, the mean over the 2 queries with gold units"));
    assert!(std::fs::read_to_string(&svg)
        .unwrap()
        .contains("unit recall vs K"));
    let o = run(&[
        "eval",
        "--dir",
        tiny,
        "-k",
        "2",
        "--methods",
        "topk",
        "--json",
        "--half",
        "odd",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["queries"], 1);
    assert_eq!(j["half"], "Odd");
    assert_eq!(j["methods"][0]["budgets"][0]["overall"]["unit_recall"], 1.0);
    let o = run(&[
        "eval",
        "--dir",
        tiny,
        "-k",
        "3",
        "--methods",
        "topk",
        "--copy-cosine",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("; units 75.0, -25.0"), "{}", stdout(&o));
    let o = run(&["eval", "--dir", tiny, "--half", "third"]);
    assert_clean_failure(&o, &["third"]);
}
