//! The pursuit (paper Eqs. 5–7, 9; certificates of Appendix B, Eqs. 14, 25;
//! the relevance-scaled family of the crate docs): greedy selection by
//! residual alignment with a simplex-constrained refit after every pick.
//! ARCHITECTURE.md, “The data path”, walks through `qp_loop` step by step.
//!
//! One module per concept:
//!
//! | module | what |
//! |---|---|
//! | this one | the public API: [`pursuit`], [`pursuit_with`], [`pursuit_using`] |
//! | `scorer` | the [`Scorer`](scorer::Scorer) protocol between a loop and the source of its entries and picks, the score forms' f32 kernels |
//! | `f32_scorer` | the unscreened f32 source: one Gram row pass per pick |
//! | `qp_loop` | the paper's loop and its family (κ < ∞): pick, refit, certificate, stopping |
//! | `centroid` | centroid pursuit's loop (κ = ∞) and its lazy screened source |
//! | `represented` | the recommended setting's loop (centroid pursuit that defers represented candidates) |
//! | `screened` | exact screening of the QP loop: the proof, the bounds (`screened::bounds`), the reads and the finalists' verification (`screened::verify`) |
//! | `step` | what every loop shares: the step record's closed forms, adaptive stopping, the pool-optimum rule |
//! | `norm_bound` | the error bounds the screened and certified scorers rest on: an f32 entry's error and the norm bound N(d) |

mod centroid;
mod f32_scorer;
mod norm_bound;
mod qp_loop;
mod represented;
pub(crate) mod scorer;
mod screened;
mod step;

pub(crate) use centroid::centroid_loop;
pub use centroid::DENSE_SHARE;
pub(crate) use qp_loop::qp_loop;
pub(crate) use represented::represented_loop;
pub use screened::{Screening, AUTO_MIN_DIM, AUTO_SHARE};

use crate::error::Error;
use crate::exact::ExactParts;
use crate::input::{first_stop, prepare, Input, Spend};
use crate::kernels::{Element, Executor, Serial};
use crate::options::PursuitOptions;
use crate::scratch::ScratchKind;
use crate::selection::SelectionView;
use crate::workspace::Workspace;
use centroid::LazyCentroidScorer;
use f32_scorer::F32Scorer;
use norm_bound::norm_bound;
use scorer::{f32_rows, Passes};
use screened::ScreenedScorer;

/// Runs MemPursuit: picks up to `budget` (K) memories from the pool, one at a
/// time, each the candidate with the highest score
/// U_i = ρ_i − γ Σ_{j∈S} G_ij α_j (Eq. 9; with the defaults ρ = b, γ = 1 this
/// is the residual alignment m_i · (q − q̂)), ties to the lowest index (Eq. 5);
/// after each pick the weights α of all picks are refit on the simplex with
/// ridge λ (Eq. 6; see [the relevance-scaled
/// family](crate#the-relevance-scaled-family) for γ, κ = λ and ρ).
///
/// * `input`: query (d), candidates (row-major P × d, f32 or another
///   [`Element`] storage) and relevance; see [`Input`] and the crate docs
///   for the input contract.
/// * `budget`: K. K = 0 gives an empty selection; K > P selects at most P.
/// * `options`: see [`PursuitOptions`]; the default is the paper's method.
/// * `ws`: scratch of capacity ≥ (P, min(K, P)).
///
/// Returns the picks in entry order with their final weights, one [`Step`](crate::Step)
/// per pick and the [`StopReason`](crate::StopReason). With `ridge = f64::INFINITY` this is
/// centroid pursuit: α = 1/|S| in closed form, no QP.
///
/// # Errors
/// Every input error of [`Error`] (checked before any work; nothing is
/// modified but the workspace). Never panics, never returns NaN.
///
/// # Cost
/// One pass over the candidate matrix for b and the norms, one per pick for
/// its Gram row (f32x8 SIMD), O(P·|F|) for each score refresh and an O(t²)
/// active-set refit per pick: O(K·P·d + K²·P + K³) overall. G_SS comes
/// from the Gram rows; only when a pick comes near a dependency is it
/// recomputed from the rows (O(K²·d) once).
pub fn pursuit<'w, E: Element>(
    input: &Input<'_, E>,
    budget: usize,
    options: &PursuitOptions,
    ws: &'w mut Workspace<'_>,
) -> Result<SelectionView<'w>, Error> {
    pursuit_with(input, budget, options, ws, &mut Serial)
}

/// [`pursuit`] with every pass over the candidate matrix (the query pass
/// and each pick's Gram row) cut into contiguous row ranges that `executor`
/// may run on several threads (see [`Executor`]; `mempursuit::parallel`
/// has a thread-backed one). The result is bit-identical to [`pursuit`]'s
/// for every executor.
///
/// # Errors
/// As [`pursuit`].
pub fn pursuit_with<'w, E: Element>(
    input: &Input<'_, E>,
    budget: usize,
    options: &PursuitOptions,
    ws: &'w mut Workspace<'_>,
    executor: &mut dyn Executor,
) -> Result<SelectionView<'w>, Error> {
    pursuit_using(input, budget, options, Screening::Auto, ws, executor)
}

/// [`pursuit_with`] with exact screening chosen by the caller
/// (`screening`; [`Screening::Auto`] is [`pursuit_with`]): the picks,
/// weights and every [`Step`](crate::Step) field but
/// [`Step::verified`](crate::Step::verified) and
/// [`SelectionView::rows_read`] are the same whatever it is, bit for bit.
///
/// # Errors
/// As [`pursuit`].
pub fn pursuit_using<'w, E: Element>(
    input: &Input<'_, E>,
    budget: usize,
    options: &PursuitOptions,
    screening: Screening,
    ws: &'w mut Workspace<'_>,
    executor: &mut dyn Executor,
) -> Result<SelectionView<'w>, Error> {
    options.validate()?;
    ws.require(if options.is_centroid() {
        ScratchKind::Centroid
    } else {
        ScratchKind::Pursuit
    })?;
    let prep = prepare(input, budget, &options.input, ws, executor)?;
    let (p, d) = (prep.pool, prep.dim);
    let k_eff = budget.min(p);
    ws.stop = first_stop(budget, p);
    let rows = input.matrix();
    let mut pass = Passes::new(rows, d, executor);
    let parts = ExactParts::new(rows, d, input.query, prep.q_scale);
    let spend = &mut Spend::new(input.cost_budget);
    let len = if screening.screens(d, options.is_centroid()) && norm_bound(d).is_finite() {
        if options.is_centroid() {
            let mut scorer = LazyCentroidScorer::new(&mut pass, ws);
            let len = centroid_loop(&mut scorer, k_eff, options, spend, ws);
            scorer.finish(ws);
            len
        } else {
            let mut scorer =
                ScreenedScorer::new(&mut pass, f32_rows(rows), parts.qq, screening, ws);
            let len = qp_loop(&mut scorer, &parts, k_eff, options, spend, ws);
            scorer.finish(ws);
            len
        }
    } else {
        let mut scorer = F32Scorer {
            pass: &mut pass,
            stored: k_eff,
            admitted: 0,
            rows_read: p as u32,
        };
        if options.is_centroid() {
            centroid_loop(&mut scorer, k_eff, options, spend, ws)
        } else {
            qp_loop(&mut scorer, &parts, k_eff, options, spend, ws)
        }
    };
    let ws: &'w Workspace<'_> = ws;
    Ok(ws.selection(len, true))
}
