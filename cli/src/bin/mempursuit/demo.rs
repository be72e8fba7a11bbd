//! `mempursuit demo`: the built-in HotpotQA mini fixture, evaluated, and one
//! worked example.
//!
//! The fixture (`cli/data/hotpotqa-mini/`, CC BY-SA 4.0, see its
//! README.md) is embedded in the binary, so the demo needs no files.

use std::fmt::Write as _;

use mempursuit::{Input, Method, Selector};
use mempursuit_cli::dataset::{Dataset, DatasetBytes, QuerySpec};
use mempursuit_cli::eval::{evaluate, score_query, EvalOptions};

use crate::eval::{named_methods, EvalMethod};
use crate::{emit, CliResult};

const MEMORY_EMBEDDINGS: &[u8] = include_bytes!("../../../data/hotpotqa-mini/memories.f32.npy");
const QUERY_EMBEDDINGS: &[u8] = include_bytes!("../../../data/hotpotqa-mini/queries.f32.npy");
const QUERIES: &str = include_str!("../../../data/hotpotqa-mini/queries.jsonl");
const MEMORIES: &str = include_str!("../../../data/hotpotqa-mini/memories.jsonl");

/// The budget of the worked example.
const EXAMPLE_K: usize = 5;

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
        let _ = writeln!(
            out,
            "  {:>2}. {mark} [{id:>4}] {}",
            t + 1,
            truncate(text, 100)
        );
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

/// Runs `mempursuit demo`.
pub fn run(_args: &DemoArgs) -> CliResult {
    let data = fixture()?;
    let methods = named_methods(
        &[
            EvalMethod::Topk,
            EvalMethod::Mmr,
            EvalMethod::Pursuit,
            EvalMethod::Recommended,
        ],
        0.5,
        &[],
    );
    let report = evaluate(&data, &methods, &EvalOptions::new(vec![3, 5, 10]))?;
    let mut out = String::new();
    writeln!(
        out,
        "MemPursuit demo on the built-in fixture: HotpotQA v1 dev (distractor setting), mini subset:\n\
         {} multi-hop questions, {} sentence memories, all-MiniLM-L6-v2 embeddings (d = {}).\n\
         Data: HotpotQA (Yang et al., EMNLP 2018) and Wikipedia, CC BY-SA 4.0; adapted, see\n\
         cli/data/hotpotqa-mini/README.md. Pools: all sentences of each question's 10 paragraphs.\n\
         MemPursuit = paper mode (ridge 1e-10, gamma 1); recommended = centroid pursuit with a per-pool\n\
         gamma from a measured rule (the setting to use without tuning: Method::recommended()).\n",
        data.queries.len(),
        data.memory_embeddings.rows,
        data.dim()
    )?;
    out.push_str(&report.table());

    // Worked example: the first query where the recommended setting covers
    // every gold group at K = 5 and top-K does not. Top-K is nested (its
    // K = 5 picks are a prefix of the stored picks); the recommended
    // setting's gamma depends on K, so it is run again at K = 5.
    let Some(topk) = report.methods.iter().position(|m| m.name == "top-K") else {
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
        let input = Input::new(data.query_embedding(qi), &pool);
        let rec = selector.select(&input, EXAMPLE_K, &Method::recommended())?;
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
            "No query in the fixture where the recommended setting covers every gold group at K = {EXAMPLE_K} and top-K does not."
        )?,
        Some((spec, a, b)) => {
            writeln!(
                out,
                "Worked example, K = {EXAMPLE_K}: the first question where the recommended setting covers both gold paragraphs and top-K does not."
            )?;
            writeln!(out, "question ({}, id {}): {}", spec.kind, spec.id, spec.text)?;
            if let Some(ans) = &spec.answer {
                writeln!(out, "answer: {ans}")?;
            }
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
    emit(&out)
}
