//! `mempursuit select`: one query, one candidate matrix, one selection.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use mempursuit::npy::{self, Matrix};
use mempursuit::{
    CallData, CallError, Error, Method, Pool, SelectSpec, Selector, Stopping, VectorFault,
};

use crate::spec_args::{self, SpecArgs};
use crate::{emit, CliResult};

/// Prints a notice (stderr) when the budget exceeds the pool: the
/// selection then holds the whole pool (fewer than K memories).
pub(crate) fn notice_budget_above_pool(k: usize, pool: usize, what: &str) {
    if k > pool {
        eprintln!(
            "mempursuit: note: budget K = {k} exceeds {what} (P = {pool}): \
             at most {pool} memories are selected"
        );
    }
}

/// Arguments of `mempursuit select`.
#[derive(Debug, clap::Args)]
pub struct SelectArgs {
    /// Query embedding: .npy float32, shape (d) or (1, d).
    #[arg(long, value_name = "Q.npy")]
    pub query: PathBuf,
    /// Candidate embeddings: .npy float32, shape (P, d), C order (2-D: one
    /// candidate is (1, d)).
    #[arg(long, value_name = "C.npy")]
    pub candidates: PathBuf,
    /// Budget K: the number of memories to select.
    #[arg(
        short = 'k',
        long = "budget",
        value_name = "K",
        allow_negative_numbers = true,
        value_parser = crate::spec_args::budget
    )]
    pub k: usize,
    /// The retriever's relevance scores: .npy float32 with P values (any
    /// scale or sign), used by rank on the pool's cosine scale unless
    /// --raw-relevance is given.
    #[arg(long, value_name = "R.npy")]
    pub relevance: Option<PathBuf>,
    /// Each candidate's cost, e.g. its token count: .npy float32 with P
    /// values (finite, >= 0), for --cost-budget: the selection never costs
    /// more than the budget (K still caps the number of picks).
    #[arg(long, value_name = "C.npy")]
    pub costs: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub selector: SpecArgs<spec_args::Select>,
}

/// Reads a `.npy` float32 file, naming the path in every error: 1-D or 2-D
/// (`vector_ok`) or 2-D only.
pub(crate) fn read_npy(path: &Path, vector_ok: bool) -> Result<Matrix, String> {
    let read = if vector_ok {
        npy::read_f32(path)
    } else {
        npy::read_f32_matrix(path)
    };
    read.map_err(|e| format!("{}: {e}", path.display()))
}

/// One line on the selector: its text form and, for the pursuit, the
/// parameters it resolves to.
fn describe(spec: &SelectSpec, method: &Method) -> String {
    match method {
        Method::Pursuit(o) => format!(
            "{spec} (ridge {:e}, gamma {}, {})",
            o.ridge,
            o.gamma,
            if o.stopping == Stopping::FixedBudget {
                "fixed budget"
            } else {
                "adaptive stopping"
            }
        ),
        _ => spec.to_string(),
    }
}

/// The picks' total cost, summed in pick order as the selectors do.
fn spent(picks: &[usize], costs: &[f32]) -> f64 {
    picks.iter().fold(0.0, |s, &i| s + f64::from(costs[i]))
}

/// Fixed-point for ordinary magnitudes, scientific for tiny or huge ones.
fn num(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 || (1e-3..1e6).contains(&a) {
        format!("{x:.6}")
    } else {
        format!("{x:.3e}")
    }
}

/// Runs `mempursuit select`.
pub fn run(args: &SelectArgs) -> CliResult {
    // The selector first: a bad option is reported whatever the files.
    let spec = args.selector.spec()?;
    let method = spec.method()?;
    spec.relevance(args.relevance.as_ref().map(|_| &[][..]))?;
    spec.costs(args.costs.as_ref().map(|_| &[][..]))?;
    let desc = describe(&spec, &method);
    let q = read_npy(&args.query, true)?;
    if q.rows != 1 {
        return Err(format!(
            "{}: expected one query of shape (d) or (1, d), got {} × {}",
            args.query.display(),
            q.rows,
            q.cols
        )
        .into());
    }
    let c = read_npy(&args.candidates, false)?;
    if c.cols != q.cols {
        return Err(format!(
            "query dimension {} ({}) differs from candidate dimension {} ({})",
            q.cols,
            args.query.display(),
            c.cols,
            args.candidates.display()
        )
        .into());
    }
    // One value per candidate, from a .npy file (relevance, costs).
    let per_candidate = |path: &Option<PathBuf>, what: &str| -> Result<Option<Vec<f32>>, String> {
        let Some(path) = path else { return Ok(None) };
        let r = read_npy(path, true)?;
        if r.data.len() != c.rows {
            // A 1-D array reads as one row: its shape adds nothing.
            let shape = if r.rows > 1 {
                format!(" (a {} × {} array)", r.rows, r.cols)
            } else {
                String::new()
            };
            return Err(format!(
                "{}: {} {what} values{shape} but {} has {} candidates",
                path.display(),
                r.data.len(),
                args.candidates.display(),
                c.rows
            ));
        }
        Ok(Some(r.data))
    };
    let rel = per_candidate(&args.relevance, "relevance")?;
    let costs = per_candidate(&args.costs, "cost")?;
    if spec.cost_budget().is_none() {
        notice_budget_above_pool(args.k, c.rows, "the pool");
    }
    let data = CallData::new(&q.data, Pool::F32(&c.data))
        .with_relevance(rel.as_deref())
        .with_costs(costs.as_deref());
    let sel = Selector::new()
        .select_spec(&spec, data, args.k)
        .map_err(|e| match e {
            CallError::Select(Error::Query(f)) => format!("{}: query: {f}", args.query.display()),
            CallError::Select(Error::Candidate { row, fault }) => {
                // The remedy where the policy has one, in this program's spelling.
                let hint = match fault {
                    VectorFault::NonFinite { .. }
                    | VectorFault::ZeroNorm
                    | VectorFault::NormOutOfRange { .. } => {
                        "; or pass --invalid exclude to leave such rows out (listed in excluded)"
                    }
                    _ => "",
                };
                format!(
                    "{}: candidate row {row}: {fault}{hint}",
                    args.candidates.display()
                )
            }
            CallError::Storage(s) => format!("{}: {s}", args.candidates.display()),
            CallError::Select(
                e @ (Error::NonFiniteRelevance { .. } | Error::RelevanceLength { .. }),
            ) => {
                let p = args.relevance.as_deref().unwrap_or(Path::new("relevance"));
                format!("{}: {e}", p.display())
            }
            CallError::Select(e @ (Error::InvalidCost { .. } | Error::CostLength { .. })) => {
                let p = args.costs.as_deref().unwrap_or(Path::new("costs"));
                format!("{}: {e}", p.display())
            }
            other => other.to_string(),
        })?;

    let is_baseline = matches!(method, Method::TopK(_) | Method::Mmr(_));
    if args.json {
        // The specification (its text form and its serde map), the core
        // options it resolves to and the selection, in the library's serde
        // form: step fields as `Step::FIELDS`, stop reasons as
        // `StopReason::as_str` (κ = ∞ as "inf"; a baseline's steps without
        // the pursuit-only fields).
        let mut v = serde_json::json!({
            "method": spec.to_string(),
            "spec": spec,
            "options": method,
            "pool": c.rows,
            "dim": c.cols,
            "budget": args.k,
        });
        if let (Some(out), Some(c), Some(total)) = (v.as_object_mut(), &costs, spec.cost_budget()) {
            out.insert("cost_budget".into(), total.into());
            out.insert("cost".into(), spent(&sel.picks, c).into());
        }
        if let (Some(out), serde_json::Value::Object(fields)) =
            (v.as_object_mut(), serde_json::to_value(&sel)?)
        {
            out.extend(fields);
        }
        return emit(&format!("{}\n", serde_json::to_string_pretty(&v)?));
    }
    let mut out = String::new();
    writeln!(out, "method: {desc}")?;
    writeln!(
        out,
        "pool: P = {} candidates, d = {}; budget K = {}",
        c.rows, c.cols, args.k
    )?;
    if let (Some(c), Some(total)) = (&costs, spec.cost_budget()) {
        writeln!(
            out,
            "cost: {} of the cost budget {total}",
            spent(&sel.picks, c)
        )?;
    }
    let order: Vec<String> = sel.picks.iter().map(|p| p.to_string()).collect();
    writeln!(out, "order: {}", order.join(" "))?;
    if !is_baseline {
        let w: Vec<String> = sel.weights.iter().map(|w| format!("{w:.6}")).collect();
        writeln!(out, "weights: {}", w.join(" "))?;
    }
    writeln!(
        out,
        "stop: {} after {}",
        sel.stop.as_str(),
        counted(sel.picks.len(), "pick", "picks")
    )?;
    if !sel.excluded.is_empty() {
        let rows: Vec<String> = sel.excluded.iter().map(|r| r.to_string()).collect();
        writeln!(
            out,
            "excluded: {}: {}",
            counted(
                rows.len(),
                "unusable candidate row",
                "unusable candidate rows"
            ),
            rows.join(" ")
        )?;
    }
    if !sel.skipped.is_empty() {
        let rows: Vec<String> = sel.skipped.iter().map(|r| r.to_string()).collect();
        writeln!(
            out,
            "skipped: {} already represented by the picks: {}",
            counted(rows.len(), "candidate", "candidates"),
            rows.join(" ")
        )?;
    }
    writeln!(out)?;
    if is_baseline {
        writeln!(out, "{:>4} {:>7} {:>13}", "step", "index", "score")?;
        for (t, s) in sel.steps.iter().enumerate() {
            writeln!(out, "{:>4} {:>7} {:>13}", t + 1, s.index, num(s.score))?;
        }
    } else {
        writeln!(
            out,
            "{:>4} {:>7} {:>10} {:>13} {:>13} {:>13} {:>13} {:>13} {:>4}",
            "step", "index", "weight", "score", "L_t", "Δ_t", "g_S", "ν", "|F|"
        )?;
        for (t, s) in sel.steps.iter().enumerate() {
            writeln!(
                out,
                "{:>4} {:>6}{} {:>10.6} {:>13} {:>13} {:>13} {:>13} {:>13} {:>4}",
                t + 1,
                s.index,
                match (s.filled, s.dependent) {
                    (true, _) => "+",
                    (_, true) => "=",
                    _ => " ",
                },
                sel.weights[t],
                num(s.score),
                num(s.residual_sq),
                num(s.improvement),
                num(s.fw_gap),
                num(s.nu),
                s.free_size
            )?;
        }
        writeln!(
            out,
            "\nweight: final simplex weight; score: U at pick time (Eq. 9); L_t: squared residual after the refit;\n\
             Δ_t: relative improvement of L_t (Eq. 7); g_S: Frank-Wolfe gap (Eq. 25), a certificate >= 0 for\n\
             pursuit with a finite ridge; for centroid pursuit (equal weights: centroid, recommended) g_S and Δ_t\n\
             are diagnostics that may be negative; ν: KKT multiplier (Eq. 14); |F|: free-set size;\n\
             '+': picked by relevance fill; '=': already represented by the picks."
        )?;
    }
    emit(&out)
}

/// `n` with the noun in the number it takes: "1 pick", "2 picks".
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
