//! What every pursuit loop shares: the closed-form step record of
//! centroid pursuit, Δ_t and adaptive stopping (Eq. 7), the pool-optimum
//! rule, the refit status by pool index and the exclusion mask.

use crate::options::{AtPoolOptimum, PursuitOptions, Stopping};
use crate::selection::{CandidateState, RefitStatus, Step, StopReason};
use crate::solver::Refit;
use crate::workspace::Workspace;

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
