//! The pursuit (paper Eqs. 5–7, 9; certificates of Appendix B, Eqs. 14, 25;
//! the relevance-scaled family of the crate docs): greedy selection by
//! residual alignment with a simplex-constrained refit after every pick.
//! ARCHITECTURE.md, “The data path”, walks through `qp_loop` step by step.

use crate::cholesky::{accepts_pivot, Factor};
use crate::error::Error;
use crate::exact::{residual_sq, ExactParts};
use crate::input::{prepare, Input};
use crate::kernels::{self, Element, Executor, Serial};
use crate::options::{AtPoolOptimum, DependentPicks, PursuitOptions, Stopping};
use crate::selection::{RefitStatus, SelectionView, Step, StopReason};
use crate::solver::{refactor, refit, PendingColumn, Refit};
use crate::workspace::{Workspace, AVAILABLE, EXCLUDED, SELECTED, SKIPPED};

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
    options.validate()?;
    let prep = prepare(input, budget, &options.input, ws, executor)?;
    let (p, d) = (prep.pool, prep.dim);
    let k_eff = budget.min(p);
    ws.stop = StopReason::Budget;
    ws.solver.nfree = 0;
    let rows = E::view(input.candidates);
    let mut pass = Passes {
        rows,
        d,
        exec: executor,
    };
    let parts = ExactParts::new(rows, d, input.query, prep.q_scale);
    let mut scorer = F32Scorer {
        pass: &mut pass,
        stored: k_eff,
    };
    let len = if options.is_centroid() {
        centroid_loop(&mut scorer, k_eff, options, ws)
    } else {
        qp_loop(&mut scorer, &parts, k_eff, options, ws)
    };
    let ws: &'w Workspace<'_> = ws;
    Ok(SelectionView::from_workspace(ws, len, true))
}

/// Lowest-index argmax of `values` over available candidates.
pub(crate) fn argmax_available(values: &[f32], state: &[usize]) -> Option<usize> {
    let mut best: Option<(usize, f32)> = None;
    for (i, (&v, &s)) in values.iter().zip(state).enumerate() {
        if s == AVAILABLE && best.is_none_or(|(_, bv)| v > bv) {
            best = Some((i, v));
        }
    }
    best.map(|(i, _)| i)
}

/// Lowest-index argmax of scores `u` in which every unavailable candidate
/// holds −∞ (the QP loop keeps them so): a SIMD maximum, then the first
/// index holding it. Same result as [`argmax_available`], which it falls
/// back to when no score is above −∞.
fn argmax_scores(u: &[f32], state: &[usize]) -> Option<usize> {
    let m = kernels::max(u);
    if m > f32::NEG_INFINITY {
        kernels::position(u, m)
    } else {
        argmax_available(u, state)
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
/// is the f32 pass's Gram entry, and [`next`] the f32 pursuit's argmax
/// with its f32 score in `ws.u`. So the int8 pursuit makes the f32
/// pursuit's picks, weights and steps.
///
/// [`entry`]: Scorer::entry
/// [`next`]: Scorer::next
pub(crate) trait Scorer {
    /// The pass of pick `i`: its Gram row into stored row `slot` (the f32
    /// entries, or the int8 approximations the refresh runs on).
    fn pass(&mut self, ws: &mut Workspace<'_>, i: usize, slot: usize);
    /// G_{picks[pos], i}, bit for bit the f32 pass's entry.
    fn entry(&mut self, ws: &mut Workspace<'_>, pos: usize, i: usize) -> f32;
    /// G_ii of candidate `i`, bit for bit the f32 pass's entry (`slot`:
    /// the stored row its pass just wrote, if any).
    fn diag(&mut self, ws: &mut Workspace<'_>, i: usize, slot: Option<usize>) -> f32;
    /// Positions from `t` on get no pass (relevance fill).
    fn fill_from(&mut self, t: usize);
    /// Makes the entries of candidate `i` against positions 0..t cheap to
    /// read by [`entry`](Scorer::entry) (batched where that pays).
    fn entries(&mut self, ws: &mut Workspace<'_>, i: usize, t: usize);
    /// After the score refresh (`ws.u`): the f32 pursuit's next pick, the
    /// lowest-index argmax of its scores over the available candidates,
    /// with that score in `ws.u[pick]`, and the number of candidates
    /// verified (0 on the f32 path).
    fn next(&mut self, ws: &mut Workspace<'_>, scores: ScoreForm) -> (Option<usize>, u32);
    /// Σ_{pos<n} G_{picks[pos], i} as the f32 centroid loop accumulates it
    /// (`row_acc`, in pick order).
    fn centroid_acc(&mut self, ws: &mut Workspace<'_>, i: usize, n: usize) -> f32;
}

/// How the scores in `ws.u` were formed (what [`Scorer::next`] verifies
/// against).
#[derive(Clone, Copy)]
pub(crate) enum ScoreForm {
    /// U_i = ρ_i − Σ_{a∈F} fl32(γα_a) G_{a,i} ([`refresh_scores`]).
    Refresh,
    /// U_i = ρ_i − c Σ_{pos<n} G_{pos,i} (centroid pursuit: c = fl32(γ/n),
    /// `total` = Σ_{j,k∈S} G_jk of the f32 entries).
    Centroid { c: f32, n: usize, total: f64 },
    /// U_i = ρ_i (no pick yet, or relevance fill).
    Relevance,
}

/// The f32 path: every pass is a Gram row of f32 entries.
pub(crate) struct F32Scorer<'p, 'a, 'x> {
    pub(crate) pass: &'p mut Passes<'a, 'x>,
    /// Positions 0..stored have their Gram row stored (all but the
    /// relevance-fill picks of the QP loop).
    pub(crate) stored: usize,
}

impl Scorer for F32Scorer<'_, '_, '_> {
    fn pass(&mut self, ws: &mut Workspace<'_>, i: usize, slot: usize) {
        gram_row_into(self.pass, i, slot, ws);
    }
    fn entry(&mut self, ws: &mut Workspace<'_>, pos: usize, i: usize) -> f32 {
        if pos < self.stored {
            ws.gram[pos * ws.max_pool + i]
        } else {
            cross_gram(self.pass, ws, ws.picks[pos], i)
        }
    }
    fn diag(&mut self, ws: &mut Workspace<'_>, i: usize, slot: Option<usize>) -> f32 {
        match slot {
            Some(slot) => ws.gram[slot * ws.max_pool + i],
            None => cross_gram(self.pass, ws, i, i),
        }
    }
    fn fill_from(&mut self, t: usize) {
        self.stored = t;
    }
    fn entries(&mut self, _ws: &mut Workspace<'_>, _i: usize, _t: usize) {}
    fn next(&mut self, ws: &mut Workspace<'_>, scores: ScoreForm) -> (Option<usize>, u32) {
        let p = ws.pool;
        // Both loops keep every unavailable candidate at −∞ in `u`.
        let pick = match scores {
            ScoreForm::Refresh | ScoreForm::Centroid { .. } => {
                argmax_scores(&ws.u[..p], &ws.state[..p])
            }
            ScoreForm::Relevance => argmax_available(&ws.rho[..p], &ws.state[..p]),
        };
        (pick, 0)
    }
    fn centroid_acc(&mut self, ws: &mut Workspace<'_>, i: usize, _n: usize) -> f32 {
        ws.row_acc[i]
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
    for a in 0..ws.solver.nfree {
        let j = ws.solver.free[a];
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
    if !exact {
        scorer.entries(ws, i, t);
    }
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
/// equality solve (ν = NaN marks the warm start invalid), or from scratch
/// if the exact factor rejects a free memory.
fn switch_to_exact(parts: &ExactParts<'_>, ws: &mut Workspace<'_>, t: usize, kappa: f64) {
    let k = ws.max_budget;
    for a in 0..t {
        for b in 0..=a {
            let g = parts.gram(ws, ws.picks[a], ws.picks[b]);
            ws.solver.gss[a * k + b] = g;
            ws.solver.gss[b * k + a] = g;
        }
    }
    refactor(&mut ws.solver, t, kappa);
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
/// Costs O(t) plus one O(|F|²) forward substitution, which it leaves for
/// the refit's append of i (`SolverState::pending`); leaves the factor
/// unchanged.
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
    let nf = ws.solver.nfree;
    ws.solver.pending = None;
    if nf > 0 {
        let mut f = Factor {
            l: ws.solver.chol,
            stride: k,
            n: nf,
        };
        let free = &*ws.solver.free;
        let p2 = f.pivot_sq(|a| gss[free[a] * k + t] + 1.0, a_ii);
        dependent |= !accepts_pivot(p2, a_ii);
        near |= p2 <= near_tol * a_ii;
        // The refit's append of t repeats this substitution: keep it.
        ws.solver.pending = Some(PendingColumn {
            position: t,
            nfree: nf,
            pivot_sq: p2,
        });
    }
    (dependent, near)
}

/// Marks candidate `i` skipped ([`DependentPicks::Skip`]): never picked in
/// this call, and −∞ in every later score refresh (ρ_i = −∞, as for
/// excluded rows).
fn skip(ws: &mut Workspace<'_>, i: usize) {
    ws.state[i] = SKIPPED;
    ws.skipped += 1;
    ws.rho[i] = f32::NEG_INFINITY;
    ws.u[i] = f32::NEG_INFINITY;
}

/// The paper's loop and its relevance-scaled family (κ < ∞), one pick per
/// iteration in four phases: the pass (the pick's Gram row), the refit on
/// G_SS, b_S, ρ_S, the residual, and the score refresh that chooses the
/// next pick and gives the step's certificate. Generic over where the
/// entries come from ([`Scorer`]): the f32 and the certified int8 pursuit
/// run this same loop.
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
    ws: &mut Workspace<'_>,
) -> usize {
    let (gamma, kappa) = (options.gamma, options.ridge);
    let skip_dependent = options.dependent_picks == DependentPicks::Skip;
    let entry_error = f32_entry_error(parts.d) * 1.01;
    let near_tol = (1e-4f64).max(100.0 * entry_error);
    let mut exact = false;
    let mut stop = AdaptiveStop::new(options);
    let mut l_prev = parts.qq;
    let mut fill = false;
    let mut last = Step::default();
    mask_excluded(ws);
    let (mut next, mut verified) = scorer.next(ws, ScoreForm::Relevance);
    let mut t = 0;
    while t < k_eff {
        let Some(i) = next else {
            ws.stop = StopReason::PoolExhausted;
            break;
        };
        // Pass: the pick's Gram row (not for relevance-fill picks).
        if !fill {
            scorer.pass(ws, i, t);
        }
        let g_ii = scorer.diag(ws, i, (!fill).then_some(t));
        // Row t of G_SS and the duplicate check on it.
        set_gram_row(scorer, parts, ws, (t, i), g_ii, exact);
        let (mut dependent, near) = represented(ws, t, kappa, near_tol);
        if near && !exact && !fill {
            exact = true;
            switch_to_exact(parts, ws, t, kappa);
            set_gram_row(scorer, parts, ws, (t, i), g_ii, exact);
            dependent = represented(ws, t, kappa, near_tol).0;
        }
        if dependent && skip_dependent {
            skip(ws, i);
            // The scores of the last refresh, with i now unavailable.
            let form = if fill || t == 0 {
                ScoreForm::Relevance
            } else {
                ScoreForm::Refresh
            };
            (next, verified) = scorer.next(ws, form);
            continue;
        }
        ws.state[i] = SELECTED;
        ws.picks[t] = i;
        if fill {
            ws.steps[t] = Step {
                dependent,
                ..fill_step(ws, t, i, &last)
            };
            t += 1;
            (next, _) = scorer.next(ws, ScoreForm::Relevance);
            continue;
        }
        // Refit (Eq. 6) on G_SS, b_S, ρ_S.
        let score = if t == 0 {
            ws.rho[i] as f64
        } else {
            score64(scorer, ws, i, gamma)
        };
        ws.solver.b_s[t] = ws.b[i] as f64;
        ws.solver.rho_s[t] = ws.rho[i] as f64;
        let r = refit(&mut ws.solver, t + 1, gamma, kappa);
        // Residual: L_t (Eq. 7).
        let l_t = residual_sq(parts, ws, entry_error);
        // Scores (Eq. 9) for the next pick, and the certificate (Eq. 25).
        refresh_scores(ws, t, gamma);
        let (n_next, v_next) = scorer.next(ws, ScoreForm::Refresh);
        let gap = match n_next {
            Some(n) => score64(scorer, ws, n, gamma) - r.nu,
            None => 0.0,
        }
        .max(r.kkt_violation)
        .max(0.0);
        let improvement = relative_improvement(l_prev, l_t, stop.eps);
        last = Step {
            index: i,
            score,
            residual_sq: l_t,
            improvement,
            fw_gap: gap,
            nu: r.nu,
            free_size: ws.solver.nfree,
            solver_iterations: r.iterations,
            filled: false,
            dependent,
            refit: pool_status(ws, &r),
            verified,
        };
        ws.steps[t] = last;
        (next, verified) = (n_next, v_next);
        t += 1;
        l_prev = l_t;
        match after_step(&mut stop, options, improvement, Some(gap), t, k_eff) {
            Control::Continue => {}
            Control::Stop(reason) => {
                ws.stop = reason;
                break;
            }
            Control::Fill => {
                fill = true;
                scorer.fill_from(t);
                (next, _) = scorer.next(ws, ScoreForm::Relevance);
            }
        }
    }
    t
}

/// Excluded candidates score −∞ in every refresh (`argmax_scores`); ρ is
/// not read for them otherwise.
pub(crate) fn mask_excluded(ws: &mut Workspace<'_>) {
    if ws.excluded > 0 {
        let p = ws.pool;
        for (r, &s) in ws.rho[..p].iter_mut().zip(&ws.state[..p]) {
            if s == EXCLUDED {
                *r = f32::NEG_INFINITY;
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

/// The score refresh of Eq. 9 into `u`: U = ρ − Σ_{j∈F} fl32(γ α_j) G_j in
/// one pass over the stored Gram rows (coefficients in `coef`); the first
/// `t + 1` picks get −∞.
pub(crate) fn refresh_scores(ws: &mut Workspace<'_>, t: usize, gamma: f64) {
    let p = ws.pool;
    let nf = ws.solver.nfree;
    for a in 0..nf {
        ws.coef[a] = (gamma * ws.solver.alpha[ws.solver.free[a]]) as f32;
    }
    kernels::refresh_scores(
        &mut ws.u[..p],
        &ws.rho[..p],
        ws.gram,
        ws.max_pool,
        &ws.solver.free[..nf],
        &ws.coef[..nf],
    );
    for &j in &ws.picks[..=t] {
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
/// U_i = ρ_i − (γ/|S|) Σ_{j∈S} G_ij, one Gram row per pick, no QP. Generic
/// over the entries' source like [`qp_loop`].
pub(crate) fn centroid_loop<S: Scorer>(
    scorer: &mut S,
    k_eff: usize,
    options: &PursuitOptions,
    ws: &mut Workspace<'_>,
) -> usize {
    let p = ws.pool;
    let gamma = options.gamma;
    let mut stop = AdaptiveStop::new(options);
    let mut l_prev = 1.0f64;
    // Σ_{j,k∈S} G_jk, Σ_{j∈S} b_j, Σ_{j∈S} ρ_j
    let (mut total, mut sum_b, mut sum_rho) = (0.0f64, 0.0f64, 0.0f64);
    ws.row_acc[..p].fill(0.0);
    mask_excluded(ws);
    ws.u[..p].copy_from_slice(&ws.rho[..p]);
    let (mut next, mut verified) = scorer.next(ws, ScoreForm::Relevance);
    let mut t = 0;
    while t < k_eff {
        let Some(i) = next else {
            ws.stop = StopReason::PoolExhausted;
            break;
        };
        let score = ws.u[i] as f64;
        ws.state[i] = SELECTED;
        ws.picks[t] = i;
        let acc_i = scorer.centroid_acc(ws, i, t);
        scorer.pass(ws, i, 0);
        let g_ii = scorer.diag(ws, i, Some(0));
        total += 2.0 * acc_i as f64 + g_ii as f64;
        kernels::add_assign(&mut ws.row_acc[..p], &ws.gram[..p]);
        sum_b += ws.b[i] as f64;
        sum_rho += ws.rho[i] as f64;
        let n = (t + 1) as f64;
        let c = (gamma / n) as f32;
        ws.u[..p].copy_from_slice(&ws.rho[..p]);
        kernels::sub_scaled(&mut ws.u[..p], c, &ws.row_acc[..p]);
        for &j in &ws.picks[..=t] {
            ws.u[j] = f32::NEG_INFINITY;
        }
        let l_t = (1.0 - 2.0 * sum_b / n + total / (n * n)).max(0.0);
        let mean_u = sum_rho / n - gamma * total / (n * n);
        let form = ScoreForm::Centroid { c, n: t + 1, total };
        let (n_next, v_next) = scorer.next(ws, form);
        let gap = n_next.map_or(0.0, |m| ws.u[m] as f64 - mean_u);
        let improvement = relative_improvement(l_prev, l_t, stop.eps);
        ws.steps[t] = Step {
            index: i,
            score,
            residual_sq: l_t,
            improvement,
            fw_gap: gap,
            nu: mean_u,
            free_size: t + 1,
            solver_iterations: 0,
            filled: false,
            dependent: false,
            refit: RefitStatus::Optimal,
            verified,
        };
        (next, verified) = (n_next, v_next);
        t += 1;
        l_prev = l_t;
        if stop.small_step(improvement) && t < k_eff {
            ws.stop = StopReason::Adaptive;
            break;
        }
    }
    let w = if t > 0 { 1.0 / t as f64 } else { 0.0 };
    ws.solver.alpha[..t].fill(w);
    t
}

#[cfg(test)]
mod tests {
    use super::{argmax_available, argmax_scores};
    use crate::workspace::{AVAILABLE, SELECTED};

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
                let mut state = [AVAILABLE; 70];
                for i in 0..n {
                    if next() % 4 == 0 || trial == 0 {
                        state[i] = SELECTED;
                    }
                }
                let expected = argmax_available(&u[..n], &state[..n]);
                for i in 0..n {
                    if state[i] != AVAILABLE {
                        u[i] = f32::NEG_INFINITY;
                    }
                }
                assert_eq!(argmax_scores(&u[..n], &state[..n]), expected, "n={n}");
            }
        }
    }
}
