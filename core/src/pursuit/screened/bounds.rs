//! The bounds of exact screening (module docs of `screened`): each step's
//! constants ([`StepBounds`]), the drift tables of the anchor steps, a
//! candidate's upper bound ub_j and the running lower bound L of a choose.

use super::ScreenedScorer;
use crate::pursuit::norm_bound::{SAFE, TINY, U32};
use crate::workspace::Workspace;

/// A per-step value not computed yet in the current choose (the drift
/// table of an anchor step, `ScreenState::drift_c0`; an entry of the best
/// candidate, `ScreenState::best_entries`): NaN, which no computed value
/// is. A sentinel rather than a flag per step: the storage is the
/// caller's f64 buffer, and the test (`is_nan`) costs one comparison.
pub(super) const NOT_COMPUTED: f64 = f64::NAN;

/// An empty slot of a top list ([`insert_top`]): a bound below every
/// candidate's and no index (`top_slot_used` is false).
pub(super) const NO_CANDIDATE: (f64, usize) = (f64::NEG_INFINITY, usize::MAX);

/// Whether a top list's slot holds a candidate (index `j`), not
/// [`NO_CANDIDATE`].
#[inline]
pub(super) fn top_slot_used(j: usize) -> bool {
    j != NO_CANDIDATE.1
}

/// The per-step constants of the bounds at step n.
#[derive(Clone, Copy)]
pub(super) struct StepBounds {
    /// E_j(n) = e0 + e1 |ρ_j|.
    pub(super) e0: f64,
    pub(super) e1: f64,
    /// δ = η N √q2 and 1/q2.
    pub(super) delta: f64,
    pub(super) inv_q2: f64,
}

impl<'p, 'a, 'x, 's> ScreenedScorer<'p, 'a, 'x, 's> {
    /// Stores step n's coefficients (once per step) and computes
    /// h = G_SS c_n; returns the bound constants of step n.
    pub(super) fn record_step(&mut self, ws: &mut Workspace<'_>, n: usize) -> StepBounds {
        let k = ws.max_budget;
        let free = ws.solver.free();
        let sc = &mut self.sc.steps;
        let row = &mut sc.anchor_coef[(n - 1) * k..n * k];
        row[..n].fill(0.0);
        let mut s = 0.0f64;
        let mut wq = 0.0f64;
        for (fa, &a) in free.iter().enumerate() {
            let c = ws.coef[fa] as f64;
            row[a] = c;
            s += c;
            wq += c * ws.b[ws.picks[a]] as f64;
        }
        // h = G_SS c_n over the positions of step n: contiguous rows of
        // G_SS against c_n (zero off the free set), four partial sums (the
        // bounds' rounding terms hold for any order of summation).
        let gss = &*ws.solver.gss;
        let row = &row[..n];
        for pos in 0..n {
            let g = &gss[pos * k..pos * k + n];
            let mut acc = [0.0f64; 4];
            let (gc, gt) = g.split_at(n - n % 4);
            let (rc, rt) = row.split_at(n - n % 4);
            for (g4, r4) in gc.chunks_exact(4).zip(rc.chunks_exact(4)) {
                for l in 0..4 {
                    acc[l] += g4[l] * r4[l];
                }
            }
            let mut tail = 0.0;
            for (x, y) in gt.iter().zip(rt) {
                tail += x * y;
            }
            sc.h[pos] = (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail;
        }
        let mut wsq = 0.0;
        for &a in free {
            wsq += row[a] * sc.h[a];
        }
        sc.w_sq[n - 1] = wsq;
        sc.w_q[n - 1] = wq;
        self.steps = self.steps.max(n);
        let nf = free.len() as f64;
        let n_max = self.n_max;
        let c = n_max * s * SAFE;
        StepBounds {
            e0: (self.eta * n_max * c + 1.01 * (nf + 1.0) * U32 * 1.01 * n_max * c) * SAFE + TINY,
            e1: 1.01 * (nf + 1.0) * U32 * SAFE + TINY,
            delta: self.eta * n_max * libm::sqrt(self.q2),
            inv_q2: 1.0 / self.q2,
        }
    }

    /// The drift tables of step n for the anchor steps `from..n`, as the
    /// coefficients of ub_j = A_j + c0 + cb b_j + ca |b_j| + cp p_j + e1 |ρ_j|
    /// (module docs of `screened`; `drift_c0` includes e0 and the slack). Returns
    /// ‖Δw‖ of the anchor `from` (the dense phase's switch rule).
    pub(super) fn drift_tables(
        &mut self,
        ws: &mut Workspace<'_>,
        n: usize,
        from: usize,
        sb: &StepBounds,
    ) -> f64 {
        let mut first = 0.0;
        for n0 in from..n {
            let d = self.drift_table(ws, n, n0, sb);
            if n0 == from {
                first = d;
            }
        }
        first
    }

    /// [`drift_tables`](Self::drift_tables) for the one anchor step n0;
    /// returns its ‖Δw‖ bound.
    pub(super) fn drift_table(
        &mut self,
        ws: &mut Workspace<'_>,
        n: usize,
        n0: usize,
        sb: &StepBounds,
    ) -> f64 {
        let k = ws.max_budget;
        let (eta, n_max) = (self.eta, self.n_max);
        let sq = libm::sqrt(self.q2);
        let sc = &mut self.sc.steps;
        let coef = &sc.anchor_coef[..k * n];
        let cn = &coef[(n - 1) * k..(n - 1) * k + n];
        {
            let (q2n, cross, wq0, abs) = if n0 == 0 {
                let abs: f64 = cn.iter().map(|c| c.abs()).sum();
                (sc.w_sq[n - 1], 0.0, 0.0, abs)
            } else {
                let c0 = &coef[(n0 - 1) * k..(n0 - 1) * k + n0];
                let mut cross = 0.0;
                let mut abs = 0.0;
                for pos in 0..n0 {
                    cross += sc.h[pos] * c0[pos];
                    abs += (cn[pos] - c0[pos]).abs();
                }
                for &c in &cn[n0..n] {
                    abs += c.abs();
                }
                (
                    sc.w_sq[n - 1] - 2.0 * cross + sc.w_sq[n0 - 1],
                    cross,
                    sc.w_q[n0 - 1],
                    abs,
                )
            };
            // f64 rounding of the three terms (each a sum of ≤ n² products).
            let w0 = q2n - sc.w_sq[n - 1] + 2.0 * cross;
            let rnd = 2.3e-16
                * ((n * n) as f64 + 4.0)
                * (sc.w_sq[n - 1].abs() + 2.0 * cross.abs() + w0.abs());
            let d2 = q2n.max(0.0) + eta * (n_max * abs) * (n_max * abs) + rnd + TINY;
            let b = sc.w_q[n - 1] - wq0;
            let eb = (eta * n_max * sq * abs) * SAFE + TINY;
            let bq = (b.abs() - eb).max(0.0);
            let dp2 = (d2 * SAFE - bq * bq / self.q2 * (1.0 - 1e-9)).max(0.0);
            sc.drift_perp[n0] = (libm::sqrt(dp2) * SAFE + TINY) * SAFE;
            sc.drift_q[n0] = -b * sb.inv_q2;
            sc.drift_qerr[n0] = eb * SAFE * sb.inv_q2 * SAFE;
            sc.drift_c0[n0] =
                sb.delta * (b.abs() + eb) * SAFE * sb.inv_q2 * SAFE + sb.e0 + 4.0 * TINY;
            libm::sqrt(d2)
        }
    }

    /// ub_j of candidate j anchored before step n (module docs of `screened`).
    #[inline(always)]
    pub(super) fn bound(&self, ws: &Workspace<'_>, j: usize, e1: f64) -> f64 {
        let n0 = self.sc.anchor_step[j];
        let sc = &self.sc.steps;
        let bj = ws.b[j] as f64;
        self.sc.anchors[j]
            + sc.drift_c0[n0]
            + sc.drift_q[n0] * bj
            + sc.drift_qerr[n0] * bj.abs()
            + sc.drift_perp[n0] * self.sc.perp[j]
            + e1 * (ws.rho[j] as f64).abs()
    }
}

/// An f32 ≥ `x` (+∞ past f32's range).
#[inline]
pub(super) fn round_up(x: f64) -> f32 {
    // Nearest rounding errs by ≤ 2⁻²⁴ relative (or 2⁻¹⁴⁹ absolute below
    // f32's normal range): the margin covers both.
    (x + (x.abs() * 2.4e-7 + 1e-30)) as f32
}

/// The running state of one screened choose's reads.
pub(super) struct Reads {
    /// L: the largest lower bound of a candidate anchored at this step.
    pub(super) lower: f64,
    /// The read error bound e of this step.
    pub(super) e: f64,
    /// The step.
    pub(super) n: usize,
}

impl Reads {
    /// Accounts for a candidate anchored at this step: its anchor
    /// A_j = v_j + e and its relevance ρ_j.
    #[inline]
    pub(super) fn anchored(&mut self, anchor: f64, rho: f32, sb: &StepBounds) {
        let ej = sb.e0 + sb.e1 * (rho as f64).abs();
        self.lower = self.lower.max(anchor - 2.0 * self.e - ej - TINY);
    }
}

/// Inserts (v, j) into `top` (descending, ties: first come first) if it
/// is among its largest.
#[inline]
pub(super) fn insert_top<const N: usize>(top: &mut [(f64, usize); N], v: f64, j: usize) {
    if v <= top[N - 1].0 {
        return;
    }
    let mut at = N - 1;
    while at > 0 && top[at - 1].0 < v {
        top[at] = top[at - 1];
        at -= 1;
    }
    top[at] = (v, j);
}
