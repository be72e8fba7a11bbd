//! `mempursuit demo`: the built-in HotpotQA mini fixture, evaluated, and one
//! worked example.
//!
//! The fixture (`cli/data/hotpotqa-mini/`, CC BY-SA 4.0, see its
//! README.md) is embedded in the binary, so the demo needs no files.

use std::fmt::Write as _;

use mempursuit::{CallData, Method, MethodName, Pool, PursuitOptions, SelectSpec, Selector};
use mempursuit_cli::dataset::{Dataset, DatasetBytes, QuerySpec};
use mempursuit_cli::eval::{evaluate, score_query, EvalOptions, EvalReport};

use crate::eval::named_methods;
use crate::{emit, CliResult};

const MEMORY_EMBEDDINGS: &[u8] = include_bytes!("../../../data/hotpotqa-mini/memories.f32.npy");
const QUERY_EMBEDDINGS: &[u8] = include_bytes!("../../../data/hotpotqa-mini/queries.f32.npy");
const QUERIES: &str = include_str!("../../../data/hotpotqa-mini/queries.jsonl");
const MEMORIES: &str = include_str!("../../../data/hotpotqa-mini/memories.jsonl");

/// The budget of the worked example.
const EXAMPLE_K: usize = 5;

/// The widest line the demo prints.
pub(crate) const WIDTH: usize = 100;

/// Arguments of `mempursuit demo` (none).
#[derive(Debug, clap::Args)]
pub struct DemoArgs {}

/// The embedded fixture, parsed and validated.
pub(crate) fn fixture() -> Result<Dataset, mempursuit_cli::dataset::DatasetError> {
    Dataset::from_bytes(DatasetBytes {
        memory_embeddings: MEMORY_EMBEDDINGS,
        query_embeddings: QUERY_EMBEDDINGS,
        queries: QUERIES,
        memories: Some(MEMORIES),
    })
}

/// At most `n` characters of `s`, with an ellipsis when cut.
fn truncate(s: &str, n: usize) -> String {
    let mut it = s.chars();
    let head: String = it.by_ref().take(n).collect();
    if it.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

/// Group letters A, B, ... for the gold groups.
fn letter(g: usize) -> char {
    char::from(b'A' + (g % 26) as u8)
}

/// Lists `picks` (memory ids) with gold marks and texts.
fn list_picks(out: &mut String, data: &Dataset, spec: &QuerySpec, picks: &[usize]) {
    for (t, &id) in picks.iter().enumerate() {
        let mark = match spec.gold_groups.iter().position(|g| g.contains(&id)) {
            Some(g) => format!("*{}", letter(g)),
            None if spec.gold.contains(&id) => "* ".to_string(),
            None => "  ".to_string(),
        };
        let text = data.memory_text(id).unwrap_or("");
        let line = format!("  {:>2}. {mark} [{id:>4}] ", t + 1);
        let room = WIDTH.saturating_sub(line.chars().count() + 1);
        let _ = writeln!(out, "{line}{}", truncate(text, room));
    }
}

fn covered(spec: &QuerySpec, picks: &[usize]) -> String {
    let letters: Vec<String> = spec
        .gold_groups
        .iter()
        .enumerate()
        .filter(|(_, g)| g.iter().any(|id| picks.contains(id)))
        .map(|(i, _)| letter(i).to_string())
        .collect();
    if letters.is_empty() {
        "none".into()
    } else {
        letters.join(", ")
    }
}

/// The one-line takeaway: the recommended setting (the default) against
/// top-K at each budget of `report`, in points of evidence recall.
fn takeaway(report: &EvalReport) -> Option<String> {
    let find = |m: MethodName| {
        report
            .methods
            .iter()
            .find(|r| r.name == SelectSpec::of(m).to_string())
    };
    let (rec, top) = (find(MethodName::Recommended)?, find(MethodName::TopK)?);
    let ks: Vec<String> = report.ks.iter().map(usize::to_string).collect();
    let mut deltas = Vec::with_capacity(ks.len());
    for &k in &report.ks {
        let d = rec.at(k)?.overall.evidence_recall - top.at(k)?.overall.evidence_recall;
        deltas.push(format!("{:+.1}", 100.0 * d));
    }
    Some(format!(
        "Takeaway: {} (the default) vs {}: {} points of evidence recall at K = {}.",
        rec.name,
        top.name,
        deltas.join("/"),
        ks.join("/")
    ))
}

/// Runs `mempursuit demo`.
pub fn run(_args: &DemoArgs) -> CliResult {
    let data = fixture()?;
    let specs = [
        MethodName::TopK,
        MethodName::Mmr,
        MethodName::Pursuit,
        MethodName::Recommended,
    ]
    .map(SelectSpec::of);
    let methods = named_methods(&specs)?;
    let report = evaluate(&data, &methods, &EvalOptions::new(vec![3, 5, 10]))?;
    let mut out = String::new();
    let [topk, mmr, paper, recommended] = specs.map(|s| s.to_string());
    let o = PursuitOptions::PAPER;
    writeln!(
        out,
        "MemPursuit demo on the built-in fixture: HotpotQA v1 dev (distractor setting), mini subset:\n\
         {} multi-hop questions, {} sentence memories, all-MiniLM-L6-v2 embeddings (d = {}).\n\
         Data: HotpotQA (Yang et al., EMNLP 2018) and Wikipedia, CC BY-SA 4.0; adapted, see\n\
         cli/data/hotpotqa-mini/README.md. Pools: all sentences of each question's 10 paragraphs.\n\
         Rows (named as --method names them): {topk}, {mmr}, {paper} (paper mode: ridge {:e},\n\
         gamma {}) and {recommended} (centroid pursuit with a per-pool gamma: the default).\n",
        data.queries.len(),
        data.memory_embeddings.rows,
        data.dim(),
        o.ridge,
        o.gamma,
    )?;
    out.push_str(&report.table());

    // Worked example: the first query where the recommended setting covers
    // every gold group at K = 5 and top-K does not. Top-K is nested (its
    // K = 5 picks are a prefix of the stored picks); the recommended
    // setting's gamma depends on K, so it is run again at K = 5.
    let Some(topk) = report
        .methods
        .iter()
        .position(|m| matches!(m.method, Method::TopK(_)))
    else {
        return Err("demo: top-K missing from the report".into());
    };
    let mut selector = Selector::new();
    let mut pool = Vec::new();
    let mut example = None;
    for (qi, (spec, sel)) in data.queries.iter().zip(&report.selections).enumerate() {
        let a = sel.picks[topk][..sel.picks[topk].len().min(EXAMPLE_K)].to_vec();
        if score_query(spec, &a).groups_covered != Some(false) {
            continue;
        }
        data.gather_pool(qi, &mut pool);
        let rec = selector.select_spec(
            &SelectSpec::recommended(),
            CallData::new(data.query_embedding(qi), Pool::F32(&pool)),
            EXAMPLE_K,
        )?;
        let b: Vec<usize> = rec.picks.iter().map(|&p| spec.pool[p]).collect();
        if score_query(spec, &b).groups_covered == Some(true) {
            example = Some((spec, a, b));
            break;
        }
    }
    writeln!(out)?;
    match example {
        None => writeln!(
            out,
            "No query in the fixture where the recommended setting covers every gold group\n\
             at K = {EXAMPLE_K} and top-K does not."
        )?,
        Some((spec, a, b)) => {
            writeln!(
                out,
                "Worked example, K = {EXAMPLE_K}: the first question where the recommended setting \
                 covers\nevery gold group and top-K does not."
            )?;
            writeln!(out, "question: {}", spec.text)?;
            let answer = spec
                .answer
                .as_ref()
                .map(|a| format!("; answer: {a}"))
                .unwrap_or_default();
            writeln!(out, "  ({}, id {}{answer})", spec.kind, spec.id)?;
            for (g, group) in spec.gold_groups.iter().enumerate() {
                let title = group
                    .first()
                    .and_then(|&id| data.memory(id))
                    .map(|m| m.group.as_str())
                    .unwrap_or("");
                let ids: Vec<String> = group.iter().map(|i| i.to_string()).collect();
                writeln!(
                    out,
                    "gold group {}: \"{title}\" (memory ids {})",
                    letter(g),
                    ids.join(", ")
                )?;
            }
            let pool = spec.pool.len();
            writeln!(
                out,
                "\ntop-K picks (pool of {pool}; gold groups covered: {}):",
                covered(spec, &a)
            )?;
            list_picks(&mut out, &data, spec, &a);
            writeln!(
                out,
                "\nrecommended picks (gold groups covered: {}):",
                covered(spec, &b)
            )?;
            list_picks(&mut out, &data, spec, &b);
            writeln!(
                out,
                "\n'*A' / '*B': gold evidence of group A / B; [id]: memory id in memories.jsonl."
            )?;
        }
    }
    if let Some(line) = takeaway(&report) {
        writeln!(out, "\n{line}")?;
    }
    emit(&out)
}
