//! `mempursuit select`: one query, one candidate matrix, one selection.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use mempursuit::npy::{self, Matrix, NpyError};
use mempursuit::{
    AtPoolOptimum, Error, Input, InputPolicy, Method, MmrOptions, PursuitOptions, Relevance,
    Selector, StopReason, Stopping,
};

use crate::{emit, CliResult};

/// The selector of `mempursuit select`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SelectMethod {
    /// MemPursuit (paper mode by default: ridge 1e-10, gamma 1).
    Pursuit,
    /// Centroid pursuit (ridge = inf, gamma default 0.5).
    Centroid,
    /// Top-K by relevance.
    Topk,
    /// Maximal marginal relevance.
    Mmr,
    /// The recommended setting: centroid pursuit, per-pool gamma (no tuning).
    Recommended,
}

/// Arguments of `mempursuit select`.
#[derive(Debug, clap::Args)]
pub struct SelectArgs {
    /// Query embedding: .npy float32, shape (d) or (1, d).
    #[arg(long, value_name = "Q.npy")]
    pub query: PathBuf,
    /// Candidate embeddings: .npy float32, shape (P, d), C order.
    #[arg(long, value_name = "C.npy")]
    pub candidates: PathBuf,
    /// Budget K: the number of memories to select.
    #[arg(short = 'k', long = "budget", value_name = "K")]
    pub k: usize,
    /// Selector.
    #[arg(long, value_enum, default_value_t = SelectMethod::Pursuit)]
    pub method: SelectMethod,
    /// Adaptive stopping (paper Eq. 7: tau 1e-5, patience 2) [pursuit, centroid].
    #[arg(long)]
    pub adaptive: bool,
    /// Ridge lambda of the refit, >= 0; 'inf' = centroid pursuit [pursuit; default 1e-10].
    #[arg(long, value_name = "X")]
    pub lambda: Option<f64>,
    /// Gamma in (0, 1] [pursuit: default 1; centroid: default 0.5].
    #[arg(long, value_name = "G")]
    pub gamma: Option<f64>,
    /// At the pool optimum, take the remaining picks by relevance [pursuit].
    #[arg(long)]
    pub fill: bool,
    /// MMR trade-off lambda in [0, 1] [mmr; default 0.5].
    #[arg(long, value_name = "X")]
    pub mmr_lambda: Option<f64>,
    /// First-stage relevance scores: .npy float32 with P values, used by rank
    /// on the pool's cosine scale (any scale or sign; see --raw-relevance).
    #[arg(long, value_name = "R.npy", conflicts_with = "pool_order")]
    pub relevance: Option<PathBuf>,
    /// Use the --relevance scores as given (gamma is then in their units).
    #[arg(long, requires = "relevance")]
    pub raw_relevance: bool,
    /// Candidates are in first-stage order: rho at rank k = k-th largest cosine.
    #[arg(long)]
    pub pool_order: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Reads a `.npy` file, naming the path in every error.
pub(crate) fn read_npy(path: &Path) -> Result<Matrix, String> {
    npy::read_f32(path).map_err(|e| match e {
        NpyError::Io(io) => format!("{}: {io}", path.display()),
        other => other.to_string(),
    })
}

/// The method and a one-line description, from the arguments.
fn method_of(args: &SelectArgs) -> Result<(Method, String), String> {
    let method_name = match args.method {
        SelectMethod::Pursuit => "pursuit",
        SelectMethod::Centroid => "centroid",
        SelectMethod::Topk => "topk",
        SelectMethod::Mmr => "mmr",
        SelectMethod::Recommended => "recommended",
    };
    let pursuit_only =
        |flag: &str| format!("{flag} applies to --method pursuit or centroid, not {method_name}");
    let is_pursuit = matches!(args.method, SelectMethod::Pursuit | SelectMethod::Centroid);
    if !is_pursuit {
        for (set, flag) in [
            (args.adaptive, "--adaptive"),
            (args.lambda.is_some(), "--lambda"),
            (args.gamma.is_some(), "--gamma"),
            (args.fill, "--fill"),
        ] {
            if set {
                return Err(pursuit_only(flag));
            }
        }
    }
    if args.mmr_lambda.is_some() && args.method != SelectMethod::Mmr {
        return Err("--mmr-lambda applies to --method mmr only".into());
    }
    let policy = InputPolicy::default();
    Ok(match args.method {
        SelectMethod::Topk => (Method::TopK(policy), "top-K".into()),
        SelectMethod::Recommended => (
            Method::Recommended(policy),
            "recommended (centroid pursuit, per-pool gamma)".into(),
        ),
        SelectMethod::Mmr => {
            let lambda = args.mmr_lambda.unwrap_or(0.5);
            (
                Method::Mmr(MmrOptions {
                    lambda,
                    input: policy,
                }),
                format!("MMR (lambda_mmr {lambda})"),
            )
        }
        SelectMethod::Pursuit | SelectMethod::Centroid => {
            let mut o = if args.method == SelectMethod::Centroid {
                if args.lambda.is_some_and(|l| l != f64::INFINITY) {
                    return Err(
                        "--lambda does not apply to --method centroid (its ridge is inf)".into(),
                    );
                }
                PursuitOptions::centroid(args.gamma.unwrap_or(0.5))
            } else {
                PursuitOptions {
                    ridge: args.lambda.unwrap_or(PursuitOptions::PAPER_RIDGE),
                    gamma: args.gamma.unwrap_or(1.0),
                    ..PursuitOptions::default()
                }
            };
            if args.adaptive {
                o.stopping = Stopping::PAPER_ADAPTIVE;
            }
            if args.fill {
                if o.is_centroid() {
                    // The core ignores it there; do not let a user believe
                    // it took effect.
                    return Err("--fill does not apply to centroid pursuit (ridge inf): \
                                it has no pool-optimum certificate to fill at"
                        .into());
                }
                o.at_pool_optimum = AtPoolOptimum::FillByRelevance;
            }
            let name = if o.is_centroid() {
                "centroid pursuit"
            } else {
                "MemPursuit"
            };
            let desc = format!(
                "{name} (ridge {:e}, gamma {}, {}{})",
                o.ridge,
                o.gamma,
                if args.adaptive {
                    "adaptive stopping"
                } else {
                    "fixed budget"
                },
                if args.fill {
                    ", fill at pool optimum"
                } else {
                    ""
                }
            );
            (Method::Pursuit(o), desc)
        }
    })
}

fn stop_text(s: StopReason) -> &'static str {
    match s {
        StopReason::Budget => "budget",
        StopReason::Adaptive => "adaptive stopping (Eq. 7)",
        StopReason::PoolExhausted => "pool exhausted",
        StopReason::PoolOptimum => "pool optimum",
        _ => "other",
    }
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
    let (method, desc) = method_of(args)?;
    let q = read_npy(&args.query)?;
    if q.rows != 1 {
        return Err(format!(
            "{}: expected one query of shape (d) or (1, d), got {} × {}",
            args.query.display(),
            q.rows,
            q.cols
        )
        .into());
    }
    let c = read_npy(&args.candidates)?;
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
    let rel = match &args.relevance {
        Some(path) => {
            let r = read_npy(path)?;
            if r.data.len() != c.rows {
                return Err(format!(
                    "{}: {} relevance values (shape {} × {}) but {} has {} candidates",
                    path.display(),
                    r.data.len(),
                    r.rows,
                    r.cols,
                    args.candidates.display(),
                    c.rows
                )
                .into());
            }
            Some(r.data)
        }
        None => None,
    };
    let relevance = match (&rel, args.pool_order) {
        (Some(r), _) if args.raw_relevance => Relevance::Scores(r),
        (Some(r), _) => Relevance::RankedScores(r),
        (None, true) => Relevance::PoolOrder,
        (None, false) => Relevance::Similarity,
    };
    let input = Input::new(&q.data, &c.data).with_relevance(relevance);
    let sel = Selector::new()
        .select(&input, args.k, &method)
        .map_err(|e| match e {
            Error::Query(f) => format!("{}: query: {f}", args.query.display()),
            Error::Candidate { row, fault } => {
                format!(
                    "{}: candidate row {row}: {fault}",
                    args.candidates.display()
                )
            }
            Error::NonFiniteRelevance { .. } | Error::RelevanceLength { .. } => {
                let p = args.relevance.as_deref().unwrap_or(Path::new("relevance"));
                format!("{}: {e}", p.display())
            }
            other => other.to_string(),
        })?;

    let is_baseline = sel.weights.is_empty();
    if args.json {
        let mut v = serde_json::json!({
            "method": desc,
            "options": method,
            "pool": c.rows,
            "dim": c.cols,
            "budget": args.k,
            "picks": sel.picks,
            "weights": sel.weights,
            "stop": sel.stop,
            "steps": sel.steps,
        });
        // JSON has no infinity: write centroid pursuit's ridge as "inf".
        if let Method::Pursuit(o) = method {
            if o.ridge == f64::INFINITY {
                v["options"]["Pursuit"]["ridge"] = "inf".into();
            }
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
    let order: Vec<String> = sel.picks.iter().map(|p| p.to_string()).collect();
    writeln!(out, "order: {}", order.join(" "))?;
    if !is_baseline {
        let w: Vec<String> = sel.weights.iter().map(|w| format!("{w:.6}")).collect();
        writeln!(out, "weights: {}", w.join(" "))?;
    }
    writeln!(
        out,
        "stop: {} after {} picks",
        stop_text(sel.stop),
        sel.picks.len()
    )?;
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
                if s.filled { "+" } else { " " },
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
             Δ_t: relative improvement (Eq. 7); g_S: Frank-Wolfe gap (Eq. 25); ν: KKT multiplier (Eq. 14);\n\
             |F|: free-set size; '+': picked by relevance fill."
        )?;
    }
    emit(&out)
}
