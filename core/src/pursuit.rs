//! The pursuit (paper Eqs. 5–7, 9; certificates of Appendix B, Eqs. 14, 25;
//! the relevance-scaled family of the crate docs): greedy selection by
//! residual alignment with a simplex-constrained refit after every pick.
//! ARCHITECTURE.md, “The data path”, walks through `qp_loop` step by step.

use crate::cholesky::accepts_pivot;
use crate::error::Error;
use crate::exact::{residual_sq, ExactParts};
use crate::input::{prepare, Input, Spend};
use crate::kernels::sealed::Rows;
use crate::kernels::Isa;
use crate::kernels::{self, Element, Executor, Serial};
use crate::options::{AtPoolOptimum, DependentPicks, PursuitOptions, Stopping};
use crate::scratch::ScratchKind;
use crate::selection::{CandidateState, RefitStatus, SelectionView, States, Step, StopReason};
use crate::solver::{refit, Refit};
use crate::workspace::Workspace;

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
/// Returns the picks in entry order with their final weights, one [`Step`]
/// per pick and the [`StopReason`]. With `ridge = f64::INFINITY` this is
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
/// weights and every [`Step`] field but [`Step::verified`] and
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
    ws.stop = StopReason::Budget;
    let rows = E::view(input.candidates);
    let mut pass = Passes {
        rows,
        d,
        exec: executor,
    };
    let parts = ExactParts::new(rows, d, input.query, prep.q_scale);
    let spend = &mut Spend::new(input.cost_budget);
    let len = if screening.screens(p, k_eff) {
        let f32_rows = f32_rows(rows);
        let mut scorer = ScreenedScorer::new(&mut pass, f32_rows, k_eff, ws);
        if options.is_centroid() {
            centroid_loop(&mut scorer, k_eff, options, spend, ws)
        } else {
            qp_loop(&mut scorer, &parts, k_eff, options, spend, ws)
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

/// Lowest-index argmax of `values` over available candidates.
pub(crate) fn argmax_available(values: &[f32], states: &States<'_>) -> Option<usize> {
    let mut best: Option<(usize, f32)> = None;
    for (i, &v) in values.iter().enumerate() {
        if states.is_available(i) && best.is_none_or(|(_, bv)| v > bv) {
            best = Some((i, v));
        }
    }
    best.map(|(i, _)| i)
}

/// Lowest-index argmax of scores `u` in which every unavailable candidate
/// holds −∞ (the loops keep them so): a SIMD maximum, then the first
/// index holding it. Same result as [`argmax_available`], which it falls
/// back to when no score is above −∞.
pub(crate) fn argmax_scores(u: &[f32], states: &States<'_>) -> Option<usize> {
    let m = kernels::max(u);
    if m > f32::NEG_INFINITY {
        kernels::position(u, m)
    } else {
        argmax_available(u, states)
    }
}

/// The candidate matrix of one call and the executor its passes run on.
pub(crate) struct Passes<'a, 'x> {
    pub(crate) rows: kernels::sealed::Rows<'a>,
    pub(crate) d: usize,
    pub(crate) exec: &'x mut dyn Executor,
}

/// Computes the Gram row of candidate `i` into stored row `slot`:
/// G_{i,·} = (m_i · m_·) s_i s_· (cosines).
pub(crate) fn gram_row_into(
    pass: &mut Passes<'_, '_>,
    i: usize,
    slot: usize,
    ws: &mut Workspace<'_>,
) {
    let p = ws.pool;
    let start = slot * ws.max_pool;
    let row = &mut ws.gram[start..start + p];
    kernels::gram_row(pass.exec, pass.rows, pass.d, i, &ws.scale[..p], row);
}

/// Δ_t = (L_{t−1} − L_t) / max(L_{t−1}, ε) (Eq. 7), kept finite for every
/// valid ε ≥ 0: with ε = 0 (or subnormal) and L_{t−1} = 0 the quotient is
/// 0/0 or ±x/0; no change at a zero residual counts as no improvement (0)
/// and an overflow saturates at ±f64::MAX (the comparison with a finite τ is
/// unchanged).
pub(crate) fn relative_improvement(l_prev: f64, l_t: f64, eps: f64) -> f64 {
    let q = (l_prev - l_t) / l_prev.max(eps);
    if q.is_nan() {
        0.0
    } else {
        q.clamp(-f64::MAX, f64::MAX)
    }
}

/// The record of centroid pursuit's n-th pick `index` (α = 1/n on the
/// picks S, unit rows), from the running sums over S: `total` =
/// Σ_{j,k∈S} G_jk, `sum_b` = Σ_{j∈S} b_j, `sum_rho` = Σ_{j∈S} ρ_j. The
/// residual is L = ‖q − x̄_S‖² = 1 − 2 Σb/n + ΣG/n² (clamped at 0 against
/// rounding), the mean score ν = Σρ/n − γ ΣG/n², and the Frank–Wolfe gap
/// `next_score` − ν (`next_score`: U of the next pick; 0 when none is
/// left). Shared by [`centroid_loop`] and the recommended setting's loop.
#[allow(clippy::too_many_arguments)]
pub(crate) fn centroid_step(
    index: usize,
    score: f64,
    n: usize,
    gamma: f64,
    (total, sum_b, sum_rho): (f64, f64, f64),
    next_score: Option<f64>,
    l_prev: f64,
    eps: f64,
    dependent: bool,
    verified: u32,
) -> Step {
    let nf = n as f64;
    let l_t = (1.0 - 2.0 * sum_b / nf + total / (nf * nf)).max(0.0);
    let mean_u = sum_rho / nf - gamma * total / (nf * nf);
    Step {
        index,
        score,
        residual_sq: l_t,
        improvement: relative_improvement(l_prev, l_t, eps),
        fw_gap: next_score.map_or(0.0, |u| u - mean_u),
        nu: mean_u,
        free_size: n,
        solver_iterations: 0,
        filled: false,
        dependent,
        refit: RefitStatus::Optimal,
        verified,
    }
}

/// Adaptive stopping (Eq. 7): counts consecutive steps with Δ_t ≤ τ.
pub(crate) struct AdaptiveStop {
    pub(crate) eps: f64,
    tau: f64,
    patience: u32,
    small: u32,
}

impl AdaptiveStop {
    pub(crate) fn new(options: &PursuitOptions) -> Self {
        let (eps, tau, patience) = match options.stopping {
            Stopping::FixedBudget => (1e-12, f64::NEG_INFINITY, u32::MAX),
            Stopping::Adaptive { tau, patience, eps } => (eps, tau, patience),
        };
        AdaptiveStop {
            eps,
            tau,
            patience,
            small: 0,
        }
    }

    /// Records Δ_t; true once `patience` consecutive steps were small.
    pub(crate) fn small_step(&mut self, improvement: f64) -> bool {
        if improvement <= self.tau {
            self.small += 1;
        } else {
            self.small = 0;
        }
        self.small >= self.patience
    }
}

/// Where a loop's Gram entries and next pick come from: the f32 passes
/// ([`F32Scorer`]) or the certified int8 passes (`certified::Int8Scorer`).
/// Wherever the loop reads a value the two agree bit for bit: [`entry`]
/// and [`diag`] are the f32 pass's Gram entries, and [`choose`] returns
/// the f32 pursuit's argmax with its f32 score in `ws.u`. So the int8
/// pursuit makes the f32 pursuit's picks, weights and steps.
///
/// # Protocol
/// The loops drive a scorer through these phases, in this order (debug
/// builds of [`F32Scorer`] assert the entry reads):
///
/// * **choose** ([`choose`]): computes the scores of a [`ScoreForm`]
///   from the workspace's current coefficients (ρ alone; the refit's
///   `coef` over the free set; the centroid's `c` and running sums) and
///   returns their argmax over the available candidates, ties to the
///   lowest index, with its score in `ws.u[pick]`. Called once before
///   the first pick and once after each pick's refit, and again after a
///   skipped candidate (the same form, the candidate now unavailable).
///   Every unavailable candidate must hold −∞ in ρ or be marked in the
///   states; the scorer owns `u`, `gram`, `gram_sum` and the
///   verification buffers while it runs.
/// * QP loop, per pick t of candidate i: **admit** ([`admit`]) exactly
///   once, then any number of **entry** reads ([`entry`] for positions
///   0..t, [`diag`]) until the next admit. A candidate skipped as
///   dependent gives its position t to the next candidate, which is
///   admitted at t again. `keep_row = false` (relevance
///   fill) promises that the pick's entries are never needed as a score
///   term: from then on no [`ScoreForm::Refresh`] is chosen.
/// * centroid loop, per pick n of candidate i: **admit_centroid**
///   ([`admit_centroid`]) exactly once, returning the entries the
///   closed form needs; the next [`ScoreForm::Centroid`] uses n + 1 picks.
///
/// [`entry`]: Scorer::entry
/// [`diag`]: Scorer::diag
/// [`choose`]: Scorer::choose
/// [`admit`]: Scorer::admit
/// [`admit_centroid`]: Scorer::admit_centroid
pub(crate) trait Scorer {
    /// Candidate `i` becomes pick `t` of the QP loop: after this,
    /// [`entry`](Scorer::entry)`(pos, i)` for pos < t and
    /// [`diag`](Scorer::diag)`(i)` are valid, and (with `keep_row`) the
    /// pick's entries are available to later score refreshes.
    fn admit(&mut self, ws: &mut Workspace<'_>, i: usize, t: usize, keep_row: bool);
    /// G_{picks[pos], i}, bit for bit the f32 pass's entry.
    fn entry(&mut self, ws: &mut Workspace<'_>, pos: usize, i: usize) -> f32;
    /// G_ii of the candidate just admitted, bit for bit the f32 pass's
    /// entry.
    fn diag(&mut self, ws: &mut Workspace<'_>, i: usize) -> f32;
    /// Candidate `i` becomes pick `n` of the centroid loop: returns
    /// (Σ_{pos<n} G_{picks[pos], i} as the f32 loop accumulates it, in pick
    /// order; G_ii), both bit for bit the f32 values, and adds the pick's
    /// row to the running sums the next [`ScoreForm::Centroid`] reads.
    fn admit_centroid(&mut self, ws: &mut Workspace<'_>, i: usize, n: usize) -> (f32, f32);
    /// The scores of `form` and their argmax (type docs: **choose**).
    fn choose(&mut self, ws: &mut Workspace<'_>, form: ScoreForm) -> Choice;
}

/// What [`Scorer::choose`] found.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Choice {
    /// The f32 pursuit's next pick; `None` when no candidate is left.
    pub(crate) pick: Option<usize>,
    /// Candidates whose score was computed exactly to certify it
    /// ([`Step::verified`]); 0 on the unscreened f32 path.
    pub(crate) verified: u32,
    /// Rows of the candidate matrix read since the last choose
    /// ([`SelectionView::rows_read`]).
    pub(crate) rows_read: u32,
}

/// Which scores [`Scorer::choose`] computes.
#[derive(Clone, Copy)]
pub(crate) enum ScoreForm {
    /// U_i = ρ_i (no pick yet, or relevance fill).
    Relevance,
    /// U_i = ρ_i − Σ_{a∈F} coef_a G_{a,i} with coef_a = fl32(γα_a) in
    /// `ws.coef` ([`set_coefficients`]), the first `picks` picks −∞ (the
    /// refresh of Eq. 9).
    Refresh { picks: usize },
    /// U_i = ρ_i − c Σ_{pos<n} G_{pos,i} (centroid pursuit: c = fl32(γ/n),
    /// `total` = Σ_{j,k∈S} G_jk of the f32 entries), the n picks −∞.
    Centroid { c: f32, n: usize, total: f64 },
}

/// The f32 path: every admitted pick gets its Gram row by one pass.
pub(crate) struct F32Scorer<'p, 'a, 'x> {
    pub(crate) pass: &'p mut Passes<'a, 'x>,
    /// Positions 0..stored have their Gram row stored (all but the
    /// relevance-fill picks of the QP loop).
    pub(crate) stored: usize,
    /// Picks admitted so far (the protocol check of debug builds).
    pub(crate) admitted: usize,
    /// Rows of the pool read since the last choose (the query pass before
    /// the first one).
    pub(crate) rows_read: u32,
}

impl Scorer for F32Scorer<'_, '_, '_> {
    fn admit(&mut self, ws: &mut Workspace<'_>, i: usize, t: usize, keep_row: bool) {
        // In order; a skipped candidate's position is admitted again.
        debug_assert!(
            t == self.admitted || t + 1 == self.admitted,
            "admitted out of order"
        );
        self.admitted = t + 1;
        if keep_row {
            gram_row_into(self.pass, i, t, ws);
            self.rows_read += ws.pool as u32;
        } else {
            self.stored = self.stored.min(t);
        }
    }
    fn entry(&mut self, ws: &mut Workspace<'_>, pos: usize, i: usize) -> f32 {
        debug_assert!(pos < self.admitted, "entry of a pick not admitted");
        if pos < self.stored {
            ws.gram[pos * ws.max_pool + i]
        } else {
            cross_gram(self.pass, ws, ws.picks[pos], i)
        }
    }
    fn diag(&mut self, ws: &mut Workspace<'_>, i: usize) -> f32 {
        let t = self.admitted - 1;
        if t < self.stored {
            ws.gram[t * ws.max_pool + i]
        } else {
            cross_gram(self.pass, ws, i, i)
        }
    }
    fn admit_centroid(&mut self, ws: &mut Workspace<'_>, i: usize, _n: usize) -> (f32, f32) {
        let p = ws.pool;
        let acc_i = ws.gram_sum[i];
        gram_row_into(self.pass, i, 0, ws);
        self.rows_read += p as u32;
        kernels::add_assign(&mut ws.gram_sum[..p], &ws.gram[..p]);
        (acc_i, ws.gram[i])
    }
    fn choose(&mut self, ws: &mut Workspace<'_>, form: ScoreForm) -> Choice {
        let p = ws.pool;
        let pick = match form {
            ScoreForm::Relevance => argmax_available(&ws.rho[..p], &ws.states),
            ScoreForm::Refresh { picks } => {
                refresh_scores(ws, picks);
                argmax_scores(&ws.u[..p], &ws.states)
            }
            ScoreForm::Centroid { c, n, .. } => {
                centroid_scores(ws, c, n);
                argmax_scores(&ws.u[..p], &ws.states)
            }
        };
        Choice {
            pick,
            verified: 0,
            rows_read: core::mem::take(&mut self.rows_read),
        }
    }
}

/// Upper bound, relative to ‖m̂_i‖‖m̂_j‖ (m̂ = s m), of the error of an f32
/// Gram entry or query similarity against its exact value: the fixed-order
/// f32 dot of d terms (each lane d/8 additions, 3 tree levels, ≤ 7 tail
/// additions, the products rounded or fused) and the two roundings of the
/// scaling by s_i s_j.
pub(crate) fn f32_entry_error(d: usize) -> f64 {
    const U32: f64 = f32::EPSILON as f64 / 2.0;
    ((d as f64 / 8.0 + 12.0) * 1.01 * (1.0 + 3.0 * U32) + 2.01) * U32
}

/// U_i in f64 from the f32 entries of the free set (the pick's score and
/// the Frank–Wolfe certificate).
fn score64<S: Scorer>(scorer: &mut S, ws: &mut Workspace<'_>, i: usize, gamma: f64) -> f64 {
    let mut g = 0.0;
    for a in 0..ws.solver.nfree() {
        let j = ws.solver.free()[a];
        g += ws.solver.alpha[j] * scorer.entry(ws, j, i) as f64;
    }
    ws.rho[i] as f64 - gamma * g
}

/// G_ji = (m_j · m_i) s_j s_i, bit for bit entry j of candidate i's Gram
/// row ([`gram_row_into`]: the same row kernel, the same scaling), in O(d)
/// instead of a pass.
pub(crate) fn cross_gram(pass: &Passes<'_, '_>, ws: &Workspace<'_>, j: usize, i: usize) -> f32 {
    let (rows, d) = (pass.rows, pass.d);
    let mut out = [0.0f32];
    rows.rows(j, j + 1, d)
        .dots_with_row(kernels::Isa::detect(), rows, i, d, &mut out);
    out[0] * (ws.scale[j] * ws.scale[i])
}

/// Row and column `t` of G_SS for candidate pick `i`, its entries with the
/// `t` earlier picks and its diagonal `g_ii`: the f32 entries widened, or
/// in `exact` mode the exact values s_i s_j (m_i · m_j) in f64 from the
/// rows.
fn set_gram_row<S: Scorer>(
    scorer: &mut S,
    parts: &ExactParts<'_>,
    ws: &mut Workspace<'_>,
    (t, i): (usize, usize),
    g_ii: f32,
    exact: bool,
) {
    let k = ws.max_budget;
    for pos in 0..t {
        let g = if exact {
            parts.gram(ws, i, ws.picks[pos])
        } else {
            scorer.entry(ws, pos, i) as f64
        };
        ws.solver.gss[t * k + pos] = g;
        ws.solver.gss[pos * k + t] = g;
    }
    ws.solver.gss[t * k + t] = if exact {
        parts.gram(ws, i, i)
    } else {
        g_ii as f64
    };
}

/// Recomputes G_SS of the first `t` picks exactly (f64 from the rows) and
/// refactors the free set on it; the next refit then starts from a fresh
/// equality solve, or from scratch if the exact factor rejects a free
/// memory.
fn switch_to_exact(parts: &ExactParts<'_>, ws: &mut Workspace<'_>, t: usize, kappa: f64) {
    let k = ws.max_budget;
    for a in 0..t {
        for b in 0..=a {
            let g = parts.gram(ws, ws.picks[a], ws.picks[b]);
            ws.solver.gss[a * k + b] = g;
            ws.solver.gss[b * k + a] = g;
        }
    }
    ws.solver.refactor(t, kappa);
}

/// Whether the candidate pick in row `t` of G_SS (see [`set_gram_row`],
/// A = G + κI + 11ᵀ the refit's matrix) is already represented by the `t`
/// picks so far (see [`DependentPicks`]), by the refit's pivot test:
/// * by one earlier pick j, whatever its weight: the pivot² of i against
///   {j}, A_ii − A_ij²/A_jj, is ≤ `PIVOT_TOLERANCE` · A_ii (an exact
///   duplicate of j), or
/// * by the free set F: the pivot² with which the refit would append i to
///   the factor of A_FF is ≤ `PIVOT_TOLERANCE` · A_ii.
///
/// Returns (represented, near): `near` when some pivot² is below
/// `near_tol` · A_ii, where f32 entries could decide the test by rounding.
/// Costs O(t) plus one O(|F|²) forward substitution, which it stages for
/// the refit's append of i (`SolverState::stage_column`); leaves the
/// factor unchanged.
fn represented(ws: &mut Workspace<'_>, t: usize, kappa: f64, near_tol: f64) -> (bool, bool) {
    let k = ws.max_budget;
    let gss = &*ws.solver.gss;
    let a_ii = gss[t * k + t] + kappa + 1.0;
    let mut near = false;
    let mut dependent = false;
    for pos in 0..t {
        let a_ij = gss[t * k + pos] + 1.0;
        let a_jj = gss[pos * k + pos] + kappa + 1.0;
        let p2 = a_ii - a_ij * a_ij / a_jj;
        dependent |= !accepts_pivot(p2, a_ii);
        near |= p2 <= near_tol * a_ii;
    }
    if let Some(p2) = ws.solver.stage_column(t, kappa) {
        dependent |= !accepts_pivot(p2, a_ii);
        near |= p2 <= near_tol * a_ii;
    }
    (dependent, near)
}

/// Marks candidate `i` skipped ([`DependentPicks::Skip`]): never picked in
/// this call, and −∞ in every later score (ρ_i = −∞, as for excluded
/// rows).
fn skip(ws: &mut Workspace<'_>, i: usize) {
    ws.states.set(i, CandidateState::Skipped);
    ws.skipped += 1;
    ws.rho[i] = f32::NEG_INFINITY;
    ws.u[i] = f32::NEG_INFINITY;
}

/// The state the QP loop carries from one pick to the next.
struct QpState {
    /// G_SS holds exact f64 entries (after a pick came near a dependency).
    exact: bool,
    /// Relevance fill after the pool optimum: picks by ρ, no refit.
    fill: bool,
    stop: AdaptiveStop,
    /// L_{t−1}.
    l_prev: f64,
    /// The last refit step's record (a fill step copies it).
    last: Step,
    /// The candidate the last choose returned and its verification count.
    next: Choice,
}

/// The paper's loop and its relevance-scaled family (κ < ∞), one pick per
/// iteration in explicit phases:
///
/// 1. **admit** the candidate the last choose returned (its pass:
///    [`Scorer::admit`]);
/// 2. **G_SS row and duplicate check** ([`set_gram_row`],
///    [`represented`]; near a dependency G_SS turns exact);
/// 3. **skip** it ([`DependentPicks::Skip`]) and choose again, or
///    **accept** it;
/// 4. **refit** (Eq. 6) on G_SS, b_S, ρ_S ([`refit`]), or a fill record;
/// 5. **residual** L_t (Eq. 7, [`residual_sq`]);
/// 6. **choose** the next pick from the refreshed scores (Eq. 9,
///    [`Scorer::choose`]), which also gives the certificate (Eq. 25);
/// 7. **record** the step and apply the stopping rules ([`after_step`]).
///
/// Generic over where the entries come from ([`Scorer`]): the f32 and the
/// certified int8 pursuit run this same loop.
///
/// G_SS holds the f32 passes' entries, widened. When a candidate pick comes
/// within `near_tol` of a dependency (a pivot² that f32 rounding could
/// decide, see [`represented`]), G_SS is recomputed exactly in f64 from the
/// rows and stays exact for the rest of the call.
pub(crate) fn qp_loop<S: Scorer>(
    scorer: &mut S,
    parts: &ExactParts<'_>,
    k_eff: usize,
    options: &PursuitOptions,
    spend: &mut Spend<'_>,
    ws: &mut Workspace<'_>,
) -> usize {
    let (gamma, kappa) = (options.gamma, options.ridge);
    let skip_dependent = options.dependent_picks == DependentPicks::Skip;
    let entry_error = f32_entry_error(parts.d) * 1.01;
    let near_tol = (1e-4f64).max(100.0 * entry_error);
    ws.solver.reset();
    ws.rows_read = 0;
    mask_excluded(ws);
    let mut st = QpState {
        exact: false,
        fill: false,
        stop: AdaptiveStop::new(options),
        l_prev: parts.qq,
        last: Step::default(),
        next: choose(scorer, ws, ScoreForm::Relevance),
    };
    let mut t = 0;
    while t < k_eff {
        let Some(i) = st.next.pick else {
            ws.stop = spend.stop_reason(ws);
            break;
        };
        // 1. Admit: the pick's pass (no kept row for relevance-fill picks).
        scorer.admit(ws, i, t, !st.fill);
        let g_ii = scorer.diag(ws, i);
        // 2. Row t of G_SS and the duplicate check on it.
        set_gram_row(scorer, parts, ws, (t, i), g_ii, st.exact);
        let (mut dependent, near) = represented(ws, t, kappa, near_tol);
        if near && !st.exact && !st.fill {
            st.exact = true;
            switch_to_exact(parts, ws, t, kappa);
            set_gram_row(scorer, parts, ws, (t, i), g_ii, st.exact);
            dependent = represented(ws, t, kappa, near_tol).0;
        }
        // 3. Skip (choose again among the same scores) or accept.
        if dependent && skip_dependent {
            skip(ws, i);
            let form = if st.fill || t == 0 {
                ScoreForm::Relevance
            } else {
                ScoreForm::Refresh { picks: t }
            };
            st.next = choose(scorer, ws, form);
            continue;
        }
        ws.states.set(i, CandidateState::Selected);
        ws.picks[t] = i;
        // The candidates that no longer fit the cost budget leave the pool.
        spend.after_pick(ws, i);
        if st.fill {
            ws.steps[t] = Step {
                dependent,
                ..fill_step(ws, t, i, &st.last)
            };
            t += 1;
            st.next = Choice {
                verified: 0,
                ..choose(scorer, ws, ScoreForm::Relevance)
            };
            continue;
        }
        // 4. Refit (Eq. 6) on G_SS, b_S, ρ_S.
        let score = if t == 0 {
            ws.rho[i] as f64
        } else {
            score64(scorer, ws, i, gamma)
        };
        ws.solver.b_s[t] = ws.b[i] as f64;
        ws.solver.rho_s[t] = ws.rho[i] as f64;
        let r = refit(&mut ws.solver, t + 1, gamma, kappa);
        // 5. Residual: L_t (Eq. 7).
        let l_t = residual_sq(parts, ws, entry_error);
        // 6. Choose the next pick (Eq. 9) and the certificate (Eq. 25).
        set_coefficients(ws, gamma);
        let next = choose(scorer, ws, ScoreForm::Refresh { picks: t + 1 });
        let gap = match next.pick {
            Some(n) => score64(scorer, ws, n, gamma) - r.nu,
            None => 0.0,
        }
        .max(r.kkt_violation)
        .max(0.0);
        // 7. Record and stop.
        let improvement = relative_improvement(st.l_prev, l_t, st.stop.eps);
        st.last = Step {
            index: i,
            score,
            residual_sq: l_t,
            improvement,
            fw_gap: gap,
            nu: r.nu,
            free_size: ws.solver.nfree(),
            solver_iterations: r.iterations,
            filled: false,
            dependent,
            refit: pool_status(ws, &r),
            verified: st.next.verified,
        };
        ws.steps[t] = st.last;
        st.next = next;
        t += 1;
        st.l_prev = l_t;
        match after_step(&mut st.stop, options, improvement, Some(gap), t, k_eff) {
            Control::Continue => {}
            Control::Stop(reason) => {
                ws.stop = reason;
                break;
            }
            Control::Fill => {
                st.fill = true;
                st.next = Choice {
                    verified: 0,
                    ..choose(scorer, ws, ScoreForm::Relevance)
                };
            }
        }
    }
    t
}

/// [`Scorer::choose`], its rows read added to the call's count
/// (`SelectionView::rows_read`).
fn choose<S: Scorer>(scorer: &mut S, ws: &mut Workspace<'_>, form: ScoreForm) -> Choice {
    let c = scorer.choose(ws, form);
    ws.rows_read += u64::from(c.rows_read);
    c
}

/// Excluded candidates score −∞ in every refresh (`argmax_scores`); ρ is
/// not read for them otherwise.
pub(crate) fn mask_excluded(ws: &mut Workspace<'_>) {
    if ws.excluded > 0 {
        let p = ws.pool;
        for i in 0..p {
            if ws.states.get(i) == CandidateState::Excluded {
                ws.rho[i] = f32::NEG_INFINITY;
            }
        }
    }
}

/// The record of a pick made by relevance fill after the pool optimum
/// (α and the refit unchanged; the new memory has weight 0).
pub(crate) fn fill_step(ws: &mut Workspace<'_>, t: usize, i: usize, last: &Step) -> Step {
    ws.solver.alpha[t] = 0.0;
    Step {
        index: i,
        score: ws.rho[i] as f64,
        improvement: 0.0,
        solver_iterations: 0,
        filled: true,
        refit: RefitStatus::Optimal,
        verified: 0,
        ..*last
    }
}

/// The refresh coefficients fl32(γ α_j) of the free set, by free index
/// (`ws.coef`), after a refit.
pub(crate) fn set_coefficients(ws: &mut Workspace<'_>, gamma: f64) {
    for (c, &j) in ws.coef.iter_mut().zip(ws.solver.free()) {
        *c = (gamma * ws.solver.alpha[j]) as f32;
    }
}

/// The score refresh of Eq. 9 into `u`: U = ρ − Σ_{j∈F} coef_j G_j in one
/// pass over the stored Gram rows (coefficients from
/// [`set_coefficients`]); the first `picks` picks get −∞.
pub(crate) fn refresh_scores(ws: &mut Workspace<'_>, picks: usize) {
    let p = ws.pool;
    let free = ws.solver.free();
    kernels::refresh_scores(
        &mut ws.u[..p],
        &ws.rho[..p],
        ws.gram,
        ws.max_pool,
        free,
        &ws.coef[..free.len()],
    );
    for &j in &ws.picks[..picks] {
        ws.u[j] = f32::NEG_INFINITY;
    }
}

/// The centroid scores into `u`: U = ρ − c Σ_{pos<n} G_pos from the running
/// sum of the Gram rows; the `n` picks get −∞.
pub(crate) fn centroid_scores(ws: &mut Workspace<'_>, c: f32, n: usize) {
    let p = ws.pool;
    ws.u[..p].copy_from_slice(&ws.rho[..p]);
    kernels::sub_scaled(&mut ws.u[..p], c, &ws.gram_sum[..p]);
    for &j in &ws.picks[..n] {
        ws.u[j] = f32::NEG_INFINITY;
    }
}

/// What the loop does after recording a step.
pub(crate) enum Control {
    Continue,
    Stop(StopReason),
    /// Take the remaining picks in ρ order.
    Fill,
}

/// Adaptive stopping (Eq. 7) and, when `gap` is given (κ < ∞), the
/// pool-optimum rule, after `t` picks of `k_eff`.
pub(crate) fn after_step(
    stop: &mut AdaptiveStop,
    options: &PursuitOptions,
    improvement: f64,
    gap: Option<f64>,
    t: usize,
    k_eff: usize,
) -> Control {
    if stop.small_step(improvement) && t < k_eff {
        return Control::Stop(StopReason::Adaptive);
    }
    match gap {
        Some(g) if g <= options.optimum_tolerance && t < k_eff => match options.at_pool_optimum {
            AtPoolOptimum::Continue => Control::Continue,
            AtPoolOptimum::Stop => Control::Stop(StopReason::PoolOptimum),
            AtPoolOptimum::FillByRelevance => Control::Fill,
        },
        _ => Control::Continue,
    }
}

/// The refit's status with a blocked memory's position mapped to its pool
/// index.
pub(crate) fn pool_status(ws: &Workspace<'_>, r: &Refit) -> RefitStatus {
    match r.status {
        RefitStatus::Blocked { index, violation } => RefitStatus::Blocked {
            index: ws.picks[index],
            violation,
        },
        s => s,
    }
}

/// Centroid pursuit (κ = ∞ in the relevance-scaled family): α = 1/|S|,
/// U_i = ρ_i − (γ/|S|) Σ_{j∈S} G_ij, one Gram row per pick, no QP. Per
/// pick: admit (the pass, [`Scorer::admit_centroid`]), the closed-form
/// residual and mean score, choose the next pick ([`Scorer::choose`]),
/// record and stop. Generic over the entries' source like [`qp_loop`].
pub(crate) fn centroid_loop<S: Scorer>(
    scorer: &mut S,
    k_eff: usize,
    options: &PursuitOptions,
    spend: &mut Spend<'_>,
    ws: &mut Workspace<'_>,
) -> usize {
    let p = ws.pool;
    let gamma = options.gamma;
    let mut stop = AdaptiveStop::new(options);
    let mut l_prev = 1.0f64;
    // Σ_{j,k∈S} G_jk, Σ_{j∈S} b_j, Σ_{j∈S} ρ_j
    let (mut total, mut sum_b, mut sum_rho) = (0.0f64, 0.0f64, 0.0f64);
    ws.gram_sum[..p].fill(0.0);
    ws.rows_read = 0;
    mask_excluded(ws);
    ws.u[..p].copy_from_slice(&ws.rho[..p]);
    let mut next = choose(scorer, ws, ScoreForm::Relevance);
    let mut t = 0;
    while t < k_eff {
        let Some(i) = next.pick else {
            ws.stop = spend.stop_reason(ws);
            break;
        };
        let score = ws.u[i] as f64;
        ws.states.set(i, CandidateState::Selected);
        ws.picks[t] = i;
        // The candidates that no longer fit the cost budget leave the pool.
        spend.after_pick(ws, i);
        let (acc_i, g_ii) = scorer.admit_centroid(ws, i, t);
        total += 2.0 * acc_i as f64 + g_ii as f64;
        sum_b += ws.b[i] as f64;
        sum_rho += ws.rho[i] as f64;
        let c = (gamma / (t + 1) as f64) as f32;
        let form = ScoreForm::Centroid { c, n: t + 1, total };
        let chosen = choose(scorer, ws, form);
        let step = centroid_step(
            i,
            score,
            t + 1,
            gamma,
            (total, sum_b, sum_rho),
            chosen.pick.map(|m| ws.u[m] as f64),
            l_prev,
            stop.eps,
            false,
            next.verified,
        );
        ws.steps[t] = step;
        next = chosen;
        t += 1;
        l_prev = step.residual_sq;
        if stop.small_step(step.improvement) && t < k_eff {
            ws.stop = StopReason::Adaptive;
            break;
        }
    }
    let w = if t > 0 { 1.0 / t as f64 } else { 0.0 };
    ws.solver.alpha[..t].fill(w);
    t
}

// ---------------------------------------------------------------------
// Exact screening
// ---------------------------------------------------------------------
//
// Exact screening: the pursuit's picks without reading every row.
//
// The unscreened pursuit streams the whole P × d pool once per pick (the
// new pick's Gram row), though only the winner's score matters: every
// other candidate needs only a proof that it cannot win. The screened
// scorer ([`ScreenedScorer`]) keeps, per candidate j, the f32 Gram
// entries G_{a,j} of a prefix of the picks (a < k_j, "lazy Gram", cached
// in the workspace's Gram rows) and bounds the score from them; it
// computes a candidate's missing entries (one f32 dot product each, the
// pass's kernel and order, so the same bits) only when its bound can
// still win, best bound first, and its score exactly as the unscreened
// pursuit does. So the picks, weights and every [`Step`](crate::Step)
// field but the counters are those of the unscreened pursuit, bit for
// bit, by proof.
//
// # The bound (paper mode and family, κ < ∞)
// The unscreened score is the f32 refresh
// U_j = fl(ρ_j − Σ_{a∈F} c_a G̃_{a,j}) with c_a = fl32(γα_a) and the f32
// entries G̃ (each within η n_a n_j of m̂_a·m̂_j, n = ‖m̂‖ ≤
// [`N_MAX`]; `pursuit::f32_entry_error`). Split F into the known picks
// (a < k_j) and the rest N. Then
//
// ```text
// U_j ≤ ρ_j − Σ_{a∈F, a<k_j} c_a G̃_{a,j}  +  n_j ‖w_N‖ + η n_j Σ_N c_a n_a  +  δ_j
// ```
//
// with w_N = Σ_N c_a m̂_a, ‖w_N‖² ≤ c_Nᵀ G_NN c_N + η (Σ_N c_a n_a)² from
// the refit's G_SS (f32 or exact entries, either within η), and δ_j ≤
// (|F| + 1)·1.01u·(|ρ_j| + 1.01 n_j Σ_F c_a n_a) the rounding of the f32
// refresh (u = 2⁻²⁴); the same with the signs flipped is a lower bound.
// Every term is evaluated in f64 and the sum scaled by 1 + 10⁻⁹ plus
// 10⁻¹⁵ to cover that evaluation.
//
// # The bound (centroid pursuit, κ = ∞)
// U_j = fl(ρ_j − fl(c·acc_j)) with c = fl32(γ/n) and acc_j the f32 running
// sum of G̃_{a,j} over the n picks in pick order. With acc_j kept for the
// first k_j picks (`Workspace::gram_sum`), the rest is at most
// n_j Σ_{a≥k_j} n_a (1 + η) in magnitude, the two f32 summations err by at
// most γ_n·A each (A = 1.01 n_j Σ_a n_a, γ_n = n·1.01u) and the final
// multiply-subtract by 2.02u(|ρ_j| + c A).
//
// # The argmax
// L = max_j (lower bound of U_j) over the available candidates; every
// candidate whose upper bound is ≥ L could win. They are evaluated in
// descending order of their upper bound until the next bound is below the
// best exact score (ties: lowest index). A candidate never evaluated has
// U_j ≤ its bound < that score, so the pick is the unscreened argmax. When
// more than [`DENSE_SHARE`] of the candidates could win (the first picks,
// where the residual moves most), the scorer streams the missing Gram
// rows whole instead (the unscreened pass, the same bits) and takes the
// refresh's argmax.

/// Whether a pursuit screens (exact screening: the comment section "Exact
/// screening" in `core/src/pursuit.rs` derives the bounds): the picks
/// are the same either way, bit for bit; only the rows read (and so the
/// time) differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Screening {
    /// The measured rule of [`Screening::screens`].
    #[default]
    Auto,
    /// Always screen.
    On,
    /// Never screen: every pick streams the pool (one Gram row per pick).
    Off,
}

impl Screening {
    /// Whether a pursuit of budget K on P candidates screens. `Auto`: not
    /// yet anywhere. Measured (BENCHMARKS.md, "Exact screening"; one run
    /// each, AMD EPYC with AVX-512, a loaded host): on random pools
    /// (P = 200, d = 1536) the bounds admit most of the pool at every pick
    /// (0.91–1.0 of the dot products) and the time is 1.01–1.04×; on pools
    /// of the 200 store memories nearest each HotpotQA query (d = 384) it
    /// computes 0.81 (K = 20) and 0.50 (K = 50) of the dot products in
    /// 0.80–1.38× and 0.98–1.14× the time; on the fixture's own small
    /// pools (P ≈ 36) 0.64 of them in 1.2–1.3× the time. `On` is for
    /// measuring and for pools where the bounds bite.
    pub fn screens(self, _p: usize, _k: usize) -> bool {
        match self {
            Screening::On => true,
            Screening::Auto | Screening::Off => false,
        }
    }
}

/// Upper bound of ‖m̂_i‖ = s_i ‖m_i‖ for every usable row: 1 + the unit
/// tolerance for rows used as given, ≈ 1 + 2⁻²⁴ for rescaled ones
/// (`input::prepare`), with a margin.
pub(crate) const N_MAX: f64 = 1.0 + crate::UNIT_NORM_TOLERANCE + 1e-4;

/// Share of the available candidates above which a pick's scoring streams
/// the missing Gram rows whole instead of evaluating candidates one by
/// one (a gathered row costs more than a streamed one).
pub const DENSE_SHARE: f64 = 0.5;

/// Unit roundoff of f32, 2⁻²⁴.
const U32: f64 = f32::EPSILON as f64 / 2.0;
/// Factor that covers the f64 rounding of a bound's own evaluation.
const SAFE: f64 = 1.0 + 1e-9;

/// The screened source of the pursuit's entries and picks (section
/// comment above).
pub(crate) struct ScreenedScorer<'p, 'a, 'x> {
    pub(crate) pass: &'p mut Passes<'a, 'x>,
    /// The f32 rows, for the batched entry kernel (`None` for f16/bf16
    /// storage: one entry at a time by the pass's own kernel).
    pub(crate) f32_rows: Option<&'a [f32]>,
    /// η: relative error bound of an f32 entry.
    pub(crate) eta: f64,
    /// Positions 0..complete have their whole Gram row.
    pub(crate) complete: usize,
    /// Positions 0..stored may be read from the Gram rows (all but the
    /// relevance-fill picks of the QP loop).
    pub(crate) stored: usize,
    /// Picks admitted so far.
    pub(crate) admitted: usize,
    /// Rows of the pool read since the last choose (the query pass before
    /// the first one).
    pub(crate) rows_read: u32,
}

impl<'p, 'a, 'x> ScreenedScorer<'p, 'a, 'x> {
    /// A scorer for one call: `f32_rows` the rows when they are f32.
    pub(crate) fn new(
        pass: &'p mut Passes<'a, 'x>,
        f32_rows: Option<&'a [f32]>,
        k_eff: usize,
        ws: &mut Workspace<'_>,
    ) -> Self {
        let p = ws.pool;
        ws.known[..p].fill(0);
        let eta = f32_entry_error(pass.d);
        ScreenedScorer {
            pass,
            f32_rows,
            eta,
            complete: 0,
            stored: k_eff,
            admitted: 0,
            rows_read: p as u32,
        }
    }

    /// The f32 entries G_{picks[pos], j} for pos in `from..to` into
    /// `out[..to − from]`: the pass's kernel and scaling, bit for bit.
    fn entries(&self, ws: &Workspace<'_>, j: usize, from: usize, to: usize, out: &mut [f32]) {
        let d = self.pass.d;
        match self.f32_rows {
            Some(rows) => {
                let v = &rows[j * d..(j + 1) * d];
                kernels::dots_indexed(Isa::detect(), rows, d, v, &ws.picks[from..to], out);
                for (o, &a) in out.iter_mut().zip(&ws.picks[from..to]) {
                    *o *= ws.scale[a] * ws.scale[j];
                }
            }
            None => {
                for (o, &a) in out.iter_mut().zip(&ws.picks[from..to]) {
                    *o = cross_gram(self.pass, ws, a, j);
                }
            }
        }
    }

    /// Makes the entries of candidate `j` with the picks 0..`to` known
    /// (QP loop: stored in the Gram rows), up to eight at a time.
    fn extend(&mut self, ws: &mut Workspace<'_>, j: usize, to: usize) {
        let stride = ws.max_pool;
        let mut from = ws.known[j].max(self.complete.min(to));
        if ws.known[j] >= to {
            return;
        }
        let mut buf = [0.0f32; 8];
        while from < to {
            let n = (to - from).min(8);
            self.entries(ws, j, from, from + n, &mut buf[..n]);
            self.rows_read += n as u32;
            for (r, &g) in buf[..n].iter().enumerate() {
                ws.gram[(from + r) * stride + j] = g;
            }
            from += n;
        }
        ws.known[j] = to;
    }

    /// The centroid loop's running sum of candidate `j` extended to the
    /// picks 0..`to`, in pick order (`gram_sum`, `known`).
    fn extend_sum(&mut self, ws: &mut Workspace<'_>, j: usize, to: usize) {
        let mut from = ws.known[j];
        let mut buf = [0.0f32; 8];
        let mut acc = ws.gram_sum[j];
        while from < to {
            let n = (to - from).min(8);
            self.entries(ws, j, from, from + n, &mut buf[..n]);
            self.rows_read += n as u32;
            for &g in &buf[..n] {
                acc += g;
            }
            from += n;
        }
        ws.gram_sum[j] = acc;
        ws.known[j] = to;
    }

    /// Streams the Gram rows of positions `complete..n` whole (the
    /// unscreened pass) and marks every candidate known up to `n`.
    fn complete_rows(&mut self, ws: &mut Workspace<'_>, n: usize) {
        let p = ws.pool;
        for pos in self.complete..n {
            let pick = ws.picks[pos];
            gram_row_into(self.pass, pick, pos, ws);
            self.rows_read += p as u32;
        }
        self.complete = self.complete.max(n);
        for k in ws.known[..p].iter_mut() {
            *k = (*k).max(n);
        }
    }

    /// The screened choose of the QP loop's refresh (module docs).
    fn choose_refresh(&mut self, ws: &mut Workspace<'_>, n: usize) -> Choice {
        // The known parts by the refresh kernel itself: an entry not yet
        // computed is 0 in its Gram row (`admit` clears the row), so
        // u_j = fl(ρ_j − Σ_{a∈F, a<k_j} c_a G̃_aj) with the refresh's own
        // rounding (≤ δ_j), and exactly the unscreened score when k_j = n.
        refresh_scores(ws, n);
        let p = ws.pool;
        let k = ws.max_budget;
        let stride = ws.max_pool;
        let eta = self.eta;
        let nf = ws.solver.nfree();
        // Per boundary b (0..=n): ‖w_N‖² and Σ_N c over N = F ∩ [b, n),
        // from the last free position down.
        let free = ws.solver.free();
        let (mut q, mut s) = (0.0f64, 0.0f64);
        let mut sum_c = 0.0f64;
        for a in 0..nf {
            sum_c += ws.coef[a] as f64;
        }
        let (tq, ts) = (&mut ws.tail_w[..n], &mut ws.tail_c[..n]);
        // Free indices by position, descending: walk the positions.
        for b in (0..n).rev() {
            if let Some(fa) = free.iter().position(|&x| x == b) {
                let ca = ws.coef[fa] as f64;
                // q(b) = q(b+1) + 2 c_b Σ_{a∈F, a>b} c_a G_ab + c_b² G_bb.
                let mut cross = 0.0;
                for (fb, &pb) in free.iter().enumerate() {
                    if pb > b {
                        cross += ws.coef[fb] as f64 * ws.solver.gss[b * k + pb];
                    }
                }
                q += 2.0 * ca * cross + ca * ca * ws.solver.gss[b * k + b];
                s += ca;
            }
            tq[b] = q;
            ts[b] = s;
        }
        for b in 0..n {
            let sn = ts[b] * N_MAX;
            let w = libm::sqrt((tq[b] + eta * sn * sn).max(0.0) * SAFE);
            // n_j (‖w_N‖ + η Σ_N c n), n_j ≤ N_MAX.
            tq[b] = N_MAX * (w + eta * sn);
        }
        let delta_c = (nf as f64 + 1.0) * 1.01 * U32;
        let cn = 1.01 * N_MAX * N_MAX * sum_c;
        // Bounds: u_j ± (tail + 2δ_j); exact for the fully known.
        let mut lower = f64::NEG_INFINITY;
        let mut available = 0usize;
        for j in 0..p {
            if ws.states.get(j) != CandidateState::Available {
                ws.upper[j] = f64::NEG_INFINITY;
                continue;
            }
            available += 1;
            let center = ws.u[j] as f64;
            if ws.known[j] >= n {
                ws.upper[j] = center;
                lower = lower.max(center);
                continue;
            }
            let rho = ws.rho[j] as f64;
            let r = (tq[ws.known[j]] + 2.0 * delta_c * (rho.abs() + cn)) * SAFE + 1e-15;
            ws.upper[j] = center + r;
            lower = lower.max(center - r);
        }
        if available == 0 {
            return Choice {
                pick: None,
                verified: 0,
                rows_read: core::mem::take(&mut self.rows_read),
            };
        }
        let contenders = ws.upper[..p].iter().filter(|&&u| u >= lower).count();
        if contenders as f64 > DENSE_SHARE * available as f64 {
            self.complete_rows(ws, n);
            refresh_scores(ws, n);
            let pick = argmax_scores(&ws.u[..p], &ws.states);
            return Choice {
                pick,
                verified: 0,
                rows_read: core::mem::take(&mut self.rows_read),
            };
        }
        // Best bounds first, eight at a time (their missing entries in one
        // batched kernel call per pick), until the next bound is below the
        // best score.
        let mut verified = 0u32;
        let mut best: Option<(usize, f32)> = None;
        let mut batch = [0usize; 8];
        while let Some(m) = next_batch(&ws.upper[..p], lower, best, &mut batch) {
            for &j in &batch[..m] {
                ws.upper[j] = f64::NEG_INFINITY;
            }
            self.fill_batch(ws, &batch[..m], n, false);
            verified += m as u32;
            for &j in &batch[..m] {
                let mut v = ws.rho[j];
                for (fa, &a) in ws.solver.free().iter().enumerate() {
                    v -= ws.coef[fa] * ws.gram[a * stride + j];
                }
                ws.u[j] = v;
                if best.is_none_or(|(bi, b)| v > b || (v == b && j < bi)) {
                    best = Some((j, v));
                }
            }
        }
        Choice {
            pick: best.map(|(j, _)| j),
            verified,
            rows_read: core::mem::take(&mut self.rows_read),
        }
    }

    /// The missing entries of the candidates `batch` with the picks
    /// 0..`n`, by pick position (each pick's entries with the batch in one
    /// call of the pass's kernel, up to eight rows per load of the pick's
    /// row: the same bits), into the Gram rows (`sum` false) or added to
    /// the centroid's running sums in pick order (`sum` true).
    fn fill_batch(&mut self, ws: &mut Workspace<'_>, batch: &[usize], n: usize, sum: bool) {
        let stride = ws.max_pool;
        let d = self.pass.d;
        let lo = batch.iter().map(|&j| ws.known[j]).min().unwrap_or(n);
        let mut idx = [0usize; 8];
        let mut out = [0.0f32; 8];
        for pos in lo..n {
            let mut cnt = 0;
            for &j in batch {
                if ws.known[j] == pos {
                    idx[cnt] = j;
                    cnt += 1;
                }
            }
            if cnt == 0 {
                continue;
            }
            let a = ws.picks[pos];
            self.rows_read += cnt as u32;
            match self.f32_rows {
                Some(rows) => {
                    let v = &rows[a * d..(a + 1) * d];
                    kernels::dots_indexed(Isa::detect(), rows, d, v, &idx[..cnt], &mut out[..cnt]);
                    for r in 0..cnt {
                        out[r] *= ws.scale[idx[r]] * ws.scale[a];
                    }
                }
                None => {
                    for r in 0..cnt {
                        out[r] = cross_gram(self.pass, ws, a, idx[r]);
                    }
                }
            }
            for r in 0..cnt {
                let j = idx[r];
                if sum {
                    ws.gram_sum[j] += out[r];
                } else {
                    ws.gram[pos * stride + j] = out[r];
                }
                ws.known[j] = pos + 1;
            }
        }
    }

    /// The screened choose of the centroid loop (module docs).
    fn choose_centroid(&mut self, ws: &mut Workspace<'_>, c: f32, n: usize) -> Choice {
        let p = ws.pool;
        let eta = self.eta;
        let cf = c as f64;
        let n2 = N_MAX * N_MAX;
        let a_sum = 1.01 * n2 * n as f64;
        let gamma_n = 2.0 * n as f64 * 1.01 * U32;
        let mut lower = f64::NEG_INFINITY;
        let mut available = 0usize;
        for j in 0..p {
            if ws.states.get(j) != CandidateState::Available {
                ws.upper[j] = f64::NEG_INFINITY;
                continue;
            }
            available += 1;
            let rho = ws.rho[j] as f64;
            let center = rho - cf * ws.gram_sum[j] as f64;
            let missing = (n - ws.known[j].min(n)) as f64;
            let r = (cf * n2 * missing * (1.0 + eta)
                + cf * gamma_n * a_sum
                + 2.02 * U32 * (rho.abs() + cf * a_sum))
                * SAFE
                + 1e-15;
            ws.upper[j] = center + r;
            lower = lower.max(center - r);
        }
        if available == 0 {
            return Choice {
                pick: None,
                verified: 0,
                rows_read: core::mem::take(&mut self.rows_read),
            };
        }
        let contenders = ws.upper[..p].iter().filter(|&&u| u >= lower).count();
        let dense = contenders as f64 > DENSE_SHARE * available as f64;
        let mut verified = 0u32;
        let mut best: Option<(usize, f32)> = None;
        if dense {
            // Every candidate's sum extended by whole rows (the unscreened
            // pass and running sum, the same bits).
            let from = (0..p)
                .filter(|&j| ws.states.get(j) == CandidateState::Available)
                .map(|j| ws.known[j])
                .min()
                .unwrap_or(n);
            for pos in from..n {
                let pick = ws.picks[pos];
                gram_row_into(self.pass, pick, 0, ws);
                self.rows_read += p as u32;
                for j in 0..p {
                    if ws.known[j] == pos && ws.states.get(j) == CandidateState::Available {
                        ws.gram_sum[j] += ws.gram[j];
                        ws.known[j] = pos + 1;
                    }
                }
            }
            for j in 0..p {
                if ws.states.get(j) == CandidateState::Available {
                    let v = ws.rho[j] - c * ws.gram_sum[j];
                    ws.u[j] = v;
                    if best.is_none_or(|(bi, b)| v > b || (v == b && j < bi)) {
                        best = Some((j, v));
                    }
                }
            }
            return Choice {
                pick: best.map(|(j, _)| j),
                verified: 0,
                rows_read: core::mem::take(&mut self.rows_read),
            };
        }
        let mut batch = [0usize; 8];
        while let Some(m) = next_batch(&ws.upper[..p], lower, best, &mut batch) {
            for &j in &batch[..m] {
                ws.upper[j] = f64::NEG_INFINITY;
            }
            self.fill_batch(ws, &batch[..m], n, true);
            verified += m as u32;
            for &j in &batch[..m] {
                let v = ws.rho[j] - c * ws.gram_sum[j];
                ws.u[j] = v;
                if best.is_none_or(|(bi, b)| v > b || (v == b && j < bi)) {
                    best = Some((j, v));
                }
            }
        }
        Choice {
            pick: best.map(|(j, _)| j),
            verified,
            rows_read: core::mem::take(&mut self.rows_read),
        }
    }
}

/// The up to eight candidates of largest upper bound `upper[j]` ≥ `lower`
/// that can still reach `best` (bound ≥ its score), into `batch` in
/// descending order of their bounds; `None` when there is none (every other
/// candidate's bound is below the best score: the argmax is found).
fn next_batch(
    upper: &[f64],
    lower: f64,
    best: Option<(usize, f32)>,
    batch: &mut [usize; 8],
) -> Option<usize> {
    let floor = best.map_or(lower, |(_, b)| lower.max(b as f64));
    let mut top = [(f64::NEG_INFINITY, 0usize); 8];
    let mut m = 0;
    for (j, &u) in upper.iter().enumerate() {
        if u < floor || (m == 8 && u <= top[7].0) {
            continue;
        }
        // Insert keeping `top[..m]` descending (ties: lower index first).
        let mut at = m.min(7);
        while at > 0 && top[at - 1].0 < u {
            top[at] = top[at - 1];
            at -= 1;
        }
        top[at] = (u, j);
        m = (m + 1).min(8);
    }
    for (b, &(_, j)) in batch.iter_mut().zip(&top[..m]) {
        *b = j;
    }
    (m > 0).then_some(m)
}

impl Scorer for ScreenedScorer<'_, '_, '_> {
    fn admit(&mut self, ws: &mut Workspace<'_>, i: usize, t: usize, keep_row: bool) {
        debug_assert!(
            t == self.admitted || t + 1 == self.admitted,
            "admitted out of order"
        );
        self.admitted = t + 1;
        if keep_row {
            // Row t starts with every entry unknown, held as 0 (see
            // `choose_refresh`).
            if t >= self.complete {
                let (start, p) = (t * ws.max_pool, ws.pool);
                ws.gram[start..start + p].fill(0.0);
            }
        } else {
            self.stored = self.stored.min(t);
        }
        self.extend(ws, i, t.min(self.stored));
    }
    fn entry(&mut self, ws: &mut Workspace<'_>, pos: usize, i: usize) -> f32 {
        debug_assert!(pos < self.admitted, "entry of a pick not admitted");
        if pos < self.stored && pos < ws.known[i] {
            ws.gram[pos * ws.max_pool + i]
        } else {
            cross_gram(self.pass, ws, ws.picks[pos], i)
        }
    }
    fn diag(&mut self, ws: &mut Workspace<'_>, i: usize) -> f32 {
        let t = self.admitted - 1;
        let mut out = [0.0f32];
        // G_ii as the pass of pick t computes it (entry i of its row).
        match self.f32_rows {
            Some(rows) => {
                let d = self.pass.d;
                let v = &rows[i * d..(i + 1) * d];
                kernels::dots_indexed(Isa::detect(), rows, d, v, &[i], &mut out);
                out[0] *= ws.scale[i] * ws.scale[i];
            }
            None => out[0] = cross_gram(self.pass, ws, i, i),
        }
        if t < self.stored && ws.known[i] == t {
            ws.gram[t * ws.max_pool + i] = out[0];
            ws.known[i] = t + 1;
        }
        out[0]
    }
    fn admit_centroid(&mut self, ws: &mut Workspace<'_>, i: usize, n: usize) -> (f32, f32) {
        self.extend_sum(ws, i, n);
        let acc_i = ws.gram_sum[i];
        let mut out = [0.0f32];
        match self.f32_rows {
            Some(rows) => {
                let d = self.pass.d;
                let v = &rows[i * d..(i + 1) * d];
                kernels::dots_indexed(Isa::detect(), rows, d, v, &[i], &mut out);
                out[0] *= ws.scale[i] * ws.scale[i];
            }
            None => out[0] = cross_gram(self.pass, ws, i, i),
        }
        (acc_i, out[0])
    }
    fn choose(&mut self, ws: &mut Workspace<'_>, form: ScoreForm) -> Choice {
        match form {
            ScoreForm::Relevance => {
                let p = ws.pool;
                Choice {
                    pick: argmax_available(&ws.rho[..p], &ws.states),
                    verified: 0,
                    rows_read: core::mem::take(&mut self.rows_read),
                }
            }
            ScoreForm::Refresh { picks } => self.choose_refresh(ws, picks),
            ScoreForm::Centroid { c, n, .. } => self.choose_centroid(ws, c, n),
        }
    }
}

/// Rows of a storage type as f32, when they are.
pub(crate) fn f32_rows(rows: Rows<'_>) -> Option<&[f32]> {
    match rows {
        Rows::F32(r) => Some(r),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{argmax_available, argmax_scores};
    use crate::selection::{CandidateState, States};

    /// The SIMD argmax over −∞-masked scores equals the scalar lowest-index
    /// argmax over available candidates, for every length around the 8- and
    /// 16-lane boundaries, with ties and masked entries.
    #[test]
    fn masked_argmax_equals_the_scalar_one() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        // Under Miri (interpreted), fewer trials per length.
        let trials = if cfg!(miri) { 3 } else { 20 };
        for n in 0..70 {
            for trial in 0..trials {
                // Few distinct values, so ties are common.
                let mut u: [f32; 70] = core::array::from_fn(|_| (next() % 5) as f32 - 2.0);
                let mut bytes = [0u8; 70];
                let mut states = States::new(&mut bytes[..n]);
                for i in 0..n {
                    if next() % 4 == 0 || trial == 0 {
                        states.set(i, CandidateState::Selected);
                    }
                }
                let expected = argmax_available(&u[..n], &states);
                for i in 0..n {
                    if !states.is_available(i) {
                        u[i] = f32::NEG_INFINITY;
                    }
                }
                assert_eq!(argmax_scores(&u[..n], &states), expected, "n={n}");
            }
        }
    }
}
