//! The pursuit (DESIGN §2–§5, §11): greedy selection by residual alignment
//! with a simplex-constrained refit after every pick.

use crate::error::Error;
use crate::exact::{residual_sq, ExactParts};
use crate::input::{prepare, Input, Relevance};
use crate::kernels::{self, Element, Executor, Serial};
use crate::options::{AtPoolOptimum, PursuitOptions, Stopping};
use crate::selection::{RefitStatus, SelectionView, Step, StopReason};
use crate::solver::{refit, Refit};
use crate::workspace::{Workspace, AVAILABLE, EXCLUDED, SELECTED};

/// Runs MemPursuit: picks up to `budget` (K) memories from the pool, one at a
/// time, each the candidate with the highest score
/// U_i = ρ_i − γ Σ_{j∈S} G_ij α_j (Eq. 9; with the defaults ρ = b, γ = 1 this
/// is the residual alignment m_i · (q − q̂)), ties to the lowest index (Eq. 5);
/// after each pick the weights α of all picks are refit on the simplex with
/// ridge λ (Eq. 6; DESIGN §11 for γ, κ = λ, ρ).
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
/// active-set refit per pick: O(K·P·d + K²·P + K³) overall.
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
    ws.sigma[..p].fill(f64::NAN);
    ws.b_exact[..p].fill(f64::NAN);
    let exact = ExactParts::new(rows, d, input.query, prep.q_scale);
    let similarity = matches!(input.relevance, Relevance::Similarity);
    let len = if options.is_centroid() {
        centroid_loop(&mut pass, k_eff, options, ws)
    } else {
        qp_loop(&mut pass, &exact, similarity, k_eff, options, ws)
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

/// U_i in f64 from the stored Gram rows of the free set.
fn score64(ws: &Workspace<'_>, i: usize, gamma: f64) -> f64 {
    let mut g = 0.0;
    for a in 0..ws.solver.nfree {
        let j = ws.solver.free[a];
        g += ws.solver.alpha[j] * ws.gram_row(j)[i] as f64;
    }
    ws.rho[i] as f64 - gamma * g
}

/// The paper's loop and its relevance-scaled family (κ < ∞), one pick per
/// iteration in four phases: the pass (the pick's Gram row), the exact
/// small parts and the refit, the residual, and the score refresh that
/// chooses the next pick and gives the step's certificate.
fn qp_loop(
    pass: &mut Passes<'_, '_>,
    exact: &ExactParts<'_>,
    similarity: bool,
    k_eff: usize,
    options: &PursuitOptions,
    ws: &mut Workspace<'_>,
) -> usize {
    let p = ws.pool;
    let (gamma, kappa) = (options.gamma, options.ridge);
    let mut stop = AdaptiveStop::new(options);
    let mut l_prev = exact.qq;
    let mut fill = false;
    let mut last = Step::default();
    let mut next = argmax_available(&ws.rho[..p], &ws.state[..p]);
    mask_excluded(ws);
    let mut t = 0;
    while t < k_eff {
        let Some(i) = next else {
            ws.stop = StopReason::PoolExhausted;
            break;
        };
        ws.state[i] = SELECTED;
        ws.picks[t] = i;
        if fill {
            ws.steps[t] = fill_step(ws, t, i, &last);
            t += 1;
            next = argmax_available(&ws.rho[..p], &ws.state[..p]);
            continue;
        }
        // Pass: the pick's Gram row (f32), for the score refresh.
        gram_row_into(pass, i, t, ws);
        // Refit: G_SS, b_S and ρ_S in f64 from the rows, then Eq. 6.
        let rho_i = exact_rho(exact, ws, i, similarity);
        let score = if t == 0 { rho_i } else { score64(ws, i, gamma) };
        set_exact_row(exact, ws, t, i, rho_i);
        let r = refit(&mut ws.solver, t + 1, gamma, kappa);
        // Residual: L_t (Eq. 7).
        let l_t = residual_sq(exact, ws);
        // Scores (Eq. 9) for the next pick, and the certificate (Eq. 25).
        refresh_scores(ws, t, gamma);
        next = argmax_scores(&ws.u[..p], &ws.state[..p]);
        let gap = next
            .map_or(0.0, |n| score64(ws, n, gamma) - r.nu)
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
            refit: pool_status(ws, &r),
            verified: 0,
        };
        ws.steps[t] = last;
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
                next = argmax_available(&ws.rho[..p], &ws.state[..p]);
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

/// ρ_i of the exact small parts: b_i in f64 for ρ = b, else the caller's
/// (or the pool-order) relevance as given.
pub(crate) fn exact_rho(
    exact: &ExactParts<'_>,
    ws: &mut Workspace<'_>,
    i: usize,
    similarity: bool,
) -> f64 {
    if similarity {
        exact.b(ws, i)
    } else {
        ws.rho[i] as f64
    }
}

/// Row and column `t` of G_SS, b_S[t] and ρ_S[t] for pick `i` (pool
/// index), in f64 from the rows: the refit's inputs are exact to f64
/// rounding, so whether a near-duplicate counts as dependent is decided by
/// the geometry, not by f32 rounding of its Gram entries.
pub(crate) fn set_exact_row(
    exact: &ExactParts<'_>,
    ws: &mut Workspace<'_>,
    t: usize,
    i: usize,
    rho_i: f64,
) {
    let k = ws.max_budget;
    for j in 0..t {
        let pj = ws.picks[j];
        let g = exact.gram(ws, i, pj);
        ws.solver.gss[t * k + j] = g;
        ws.solver.gss[j * k + t] = g;
    }
    ws.solver.gss[t * k + t] = exact.gram(ws, i, i);
    ws.solver.b_s[t] = exact.b(ws, i);
    ws.solver.rho_s[t] = rho_i;
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

/// Centroid pursuit (κ = ∞, DESIGN §11): α = 1/|S|,
/// U_i = ρ_i − (γ/|S|) Σ_{j∈S} G_ij, one Gram row per pick, no QP.
fn centroid_loop(
    pass: &mut Passes<'_, '_>,
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
    ws.u[..p].copy_from_slice(&ws.rho[..p]);
    let mut t = 0;
    while t < k_eff {
        let Some(i) = argmax_available(&ws.u[..p], &ws.state[..p]) else {
            ws.stop = StopReason::PoolExhausted;
            break;
        };
        let score = ws.u[i] as f64;
        ws.state[i] = SELECTED;
        ws.picks[t] = i;
        gram_row_into(pass, i, 0, ws);
        total += 2.0 * ws.row_acc[i] as f64 + ws.gram[i] as f64;
        kernels::add_assign(&mut ws.row_acc[..p], &ws.gram[..p]);
        sum_b += ws.b[i] as f64;
        sum_rho += ws.rho[i] as f64;
        let n = (t + 1) as f64;
        ws.u[..p].copy_from_slice(&ws.rho[..p]);
        kernels::sub_scaled(&mut ws.u[..p], (gamma / n) as f32, &ws.row_acc[..p]);
        let l_t = (1.0 - 2.0 * sum_b / n + total / (n * n)).max(0.0);
        let mean_u = sum_rho / n - gamma * total / (n * n);
        let gap =
            argmax_available(&ws.u[..p], &ws.state[..p]).map_or(0.0, |m| ws.u[m] as f64 - mean_u);
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
            refit: RefitStatus::Optimal,
            verified: 0,
        };
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
        for n in 0..70 {
            for trial in 0..20 {
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
