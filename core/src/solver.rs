//! The refit (Eq. 6; KKT conditions: Lemma B.1, Eq. 15; the family's γ, κ,
//! ρ: crate docs, ARCHITECTURE.md “The refit”): a primal active-set method
//! for the simplex QP
//!
//! ```text
//! minimize (γ/2) αᵀ (G_SS + κ I) α − ρ_Sᵀ α   subject to α ≥ 0, 1ᵀα = 1
//! ```
//!
//! in f64, with an incrementally updated Cholesky factor of the free set F,
//! warm-started from the previous step's α and F.
//!
//! **The factored matrix.** On the simplex, 1ᵀα = 1, so adding (γ/2)(1ᵀα)²
//! changes the objective by the constant γ/2 and leaves the minimizer alone.
//! The solver therefore factors A_FF = G_FF + κI + 11ᵀ, the Gram matrix of the
//! augmented vectors [m_j; 1] (plus κI). A is singular only when a memory
//! lies in the *affine* hull of others (the case in which the simplex QP is
//! genuinely degenerate), not merely in their linear span (e.g. m and −m),
//! and its diagonal is ≈ 2 whatever κ is.
//!
//! **Solves.** Besides L (A_FF = L Lᵀ) the solver keeps the forward-
//! substituted right-hand sides w_ρ = L⁻¹ρ_F (`w_rho`) and w₁ = L⁻¹1
//! (`w_one`): an append extends them by one entry in O(|F|), a delete recomputes
//! them (deletes are rare). The equality-constrained optimum on F then costs
//! one back substitution: with x = A⁻¹ρ_F and y = A⁻¹1, 1ᵀx = w₁ᵀw_ρ and
//! 1ᵀy = w₁ᵀw₁, so α_F = L⁻ᵀ(w_ρ − s·w₁)/γ with s = (w₁ᵀw_ρ − γ)/w₁ᵀw₁.
//!
//! **Near-dependent columns.** When a memory would enter F with a pivot²
//! ≤ [`PIVOT_TOLERANCE`](crate::PIVOT_TOLERANCE) · A_jj, it is, to working
//! precision, already represented by F (an exact duplicate, or a point on the
//! affine hull of the free memories). It is *blocked* for the rest of this
//! refit and keeps α_j = 0. Its KKT violation U_j − ν is then at most its
//! distance to that hull times ‖r‖ (≈ 4.5e-5 · ‖r‖). Likewise a just-added
//! memory that the very next ratio test drops at step length 0 is blocked.
//! Blocking only ever shrinks the candidates of an add, every drop keeps α
//! feasible, and an iteration cap (4t + 16) bounds the refit, so the result
//! is always on the simplex, free of NaN, and no add/drop cycle can run on.

use crate::cholesky::{Factor, PIVOT_TOLERANCE};
use crate::selection::RefitStatus;

/// The refit's state, owned by the solver and kept across the steps of one
/// pursuit (warm start). Every buffer has one meaning; positions are the
/// entry order of the picks (0..t), free indices the order of F.
#[derive(Debug)]
pub(crate) struct SolverState<'a> {
    /// K_max: the stride of the K × K matrices.
    pub(crate) k: usize,
    /// G_SS (+ nothing: κ and 11ᵀ are added when factoring), by position.
    pub(crate) gss: &'a mut [f64],
    /// Lower Cholesky factor L of A_FF = G_FF + κI + 11ᵀ, by free index.
    pub(crate) chol: &'a mut [f64],
    /// Weights α, by position (0 outside F).
    pub(crate) alpha: &'a mut [f64],
    /// ρ_S, by position.
    pub(crate) rho_s: &'a mut [f64],
    /// b_S (query similarities in f64), by position.
    pub(crate) b_s: &'a mut [f64],
    /// Scores U_S = ρ_S − γ G_SS α, by position.
    pub(crate) u_s: &'a mut [f64],
    /// G_SS α, by position.
    pub(crate) g_alpha: &'a mut [f64],
    /// The equality-constrained optimum on F (trial point), by free index.
    pub(crate) trial: &'a mut [f64],
    /// w_ρ = L⁻¹ ρ_F, by free index.
    pub(crate) w_rho: &'a mut [f64],
    /// w₁ = L⁻¹ 1, by free index.
    pub(crate) w_one: &'a mut [f64],
    /// Solve vectors of a dependent-column exchange: c = A_FF⁻¹ a_j and
    /// A_FF⁻¹ e_out, by free index.
    pub(crate) solve_a: &'a mut [f64],
    /// See `solve_a`.
    pub(crate) solve_b: &'a mut [f64],
    /// The free set F: positions, in factor order.
    pub(crate) free: &'a mut [usize],
    /// Per position: `IN_FREE` and/or `BLOCKED` flags.
    pub(crate) blocked: &'a mut [usize],
    /// |F| (the factor's order).
    pub(crate) nfree: usize,
    /// ν of the last refit (the warm start of the next one).
    pub(crate) nu: f64,
    /// The duplicate check's forward substitution of the newest pick's
    /// column, left in row |F| of `chol` (see [`PendingColumn`]).
    pub(crate) pending: Option<PendingColumn>,
}

/// Row `nfree` of the factor written by the duplicate check
/// ([`Factor::pivot_sq`] of position `position`'s column of A against the
/// free set), with its pivot². The next refit's first append of that
/// position reuses it instead of repeating the O(|F|²) substitution, when
/// nothing has changed the factor in between (its first iteration is the
/// warm one, which does not touch the factor).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PendingColumn {
    pub(crate) position: usize,
    pub(crate) nfree: usize,
    pub(crate) pivot_sq: f64,
}

const IN_FREE: usize = 1;
const BLOCKED: usize = 2;

/// What one refit reports.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Refit {
    /// ν_S = Σ α_j U_j − γκ‖α‖².
    pub nu: f64,
    pub iterations: u32,
    /// How the refit ended; a [`RefitStatus::Blocked`] `index` is a
    /// *position* in S here (the pursuit maps it to the pool index).
    pub status: RefitStatus,
    /// max(0, max_{j∈S} (U_j − γκα_j) − ν): the selected memories' part of
    /// the Frank–Wolfe gap (0 at an exact optimum; > 0 for a blocked memory
    /// or a capped refit).
    pub kkt_violation: f64,
}

/// How the active-set loop ended.
#[derive(Clone, Copy, PartialEq)]
enum Exit {
    Optimal,
    Cap,
    NonFinite,
}

/// Refits α over the first `t` selected positions. Position t−1 is new and
/// enters with α = 0 (for t = 1 it is the only one and gets α = 1). Expects
/// `gss` (t × t, stride K_max), `rho_s` and the previous α, F and factor.
/// Leaves α, the factor, F, the selected scores `u_s`, G_SS α (`g_alpha`)
/// and ν (`nu`) updated.
pub(crate) fn refit(st: &mut SolverState<'_>, t: usize, gamma: f64, kappa: f64) -> Refit {
    let k = st.k;
    let new = t - 1;
    // Warm start unless the factor was rebuilt (`refactor`: ν = NaN) or the
    // state reset.
    let warm_state = st.nfree > 0 && !st.nu.is_nan();
    st.alpha[new] = 0.0;
    st.blocked[new] = 0;
    if t == 1 {
        st.nfree = 0;
    }
    for flag in st.blocked[..t].iter_mut() {
        *flag &= !BLOCKED;
    }
    let add_tol = 1e-12;
    let cap = 4 * t as u32 + 16;
    let mut iterations = 0u32;
    let mut last_added: Option<usize> = None;

    if st.nfree == 0 {
        // First pick: α = e_1, F = {0}.
        let mut f = Factor {
            l: st.chol,
            stride: k,
            n: 0,
        };
        let diag = st.gss[new * k + new] + kappa + 1.0;
        // A single positive diagonal always passes.
        let ok = f.append(|_| 0.0, diag);
        debug_assert!(ok);
        f.extend_forward(st.w_rho, st.rho_s[new]);
        f.extend_forward(st.w_one, 1.0);
        st.free[0] = new;
        st.nfree = 1;
        st.blocked[new] = IN_FREE;
        st.alpha[new] = 1.0;
    }

    // Warm start: the previous refit left α optimal on the unchanged free
    // set, so the first iteration only checks the new memory's KKT condition
    // (skipping one equality solve per pursuit step).
    let mut warm = t > 1 && warm_state;
    // The duplicate check's substitution, valid for an append in the warm
    // first iteration (the factor is the one it was computed on).
    let mut pending = st.pending.take().filter(|c| warm && c.nfree == st.nfree);
    let mut optimal_nu = None;
    let mut exit = Exit::Optimal;
    loop {
        if iterations >= cap {
            exit = Exit::Cap;
            break;
        }
        iterations += 1;
        let nf = st.nfree;
        let nu = if warm {
            // α, F and the old positions' scores are the previous refit's
            // (G_SS α in `g_alpha`, ν in `nu`); only the new memory's score
            // is new: U_new = ρ_new − γ Σ_F G_new,i α_i.
            warm = false;
            let mut g = 0.0;
            for a in 0..nf {
                let i = st.free[a];
                g += st.gss[new * k + i] * st.alpha[i];
            }
            st.g_alpha[new] = g;
            st.u_s[new] = st.rho_s[new] - gamma * g;
            st.nu
        } else if let Some(step) = equality_step(st, nf, gamma, last_added) {
            if step.dropped {
                last_added = None;
            }
            if !step.optimal_on_free {
                continue;
            }
            scores(st, t, gamma, kappa)
        } else {
            exit = Exit::NonFinite;
            break;
        };
        // Most violating selected memory outside F (lowest position on ties).
        let mut best: Option<(usize, f64)> = None;
        for j in 0..t {
            if st.blocked[j] != 0 {
                continue;
            }
            let v = st.u_s[j] - nu;
            if v > add_tol * (1.0 + nu.abs()) && best.is_none_or(|(_, bv)| v > bv) {
                best = Some((j, v));
            }
        }
        let Some((j_in, violation)) = best else {
            optimal_nu = Some(nu);
            break;
        };
        let mut f = Factor {
            l: st.chol,
            stride: k,
            n: nf,
        };
        let gss = &*st.gss;
        let free = &*st.free;
        let diag = gss[j_in * k + j_in] + kappa + 1.0;
        let col = |a: usize| gss[free[a] * k + j_in] + 1.0;
        let p2 = match pending.take() {
            Some(c) if iterations == 1 && c.position == j_in => {
                debug_assert_eq!(c.pivot_sq.to_bits(), f.pivot_sq(col, diag).to_bits());
                c.pivot_sq
            }
            _ => f.pivot_sq(col, diag),
        };
        if f.append_pivot(p2, diag) {
            f.extend_forward(st.w_rho, st.rho_s[j_in]);
            f.extend_forward(st.w_one, 1.0);
            st.free[nf] = j_in;
            st.nfree = nf + 1;
            st.blocked[j_in] = IN_FREE;
            last_added = Some(j_in);
        } else if exchange_dependent(st, nf, j_in, violation, gamma, kappa) {
            last_added = Some(j_in);
            reset_forward(st);
        } else {
            st.blocked[j_in] |= BLOCKED;
            reset_forward(st);
        }
    }
    let (nu, iterations, fell_back) = finish(st, t, gamma, kappa, iterations, optimal_nu);
    // KKT check of the α returned (u_s is current: `finish` recomputed it
    // unless α only moved by rounding). After an optimal exit the free
    // memories satisfy U_j − γκα_j = ν by construction (their difference is
    // rounding noise), so only those outside F are checked; after any other
    // exit every selected position is.
    let mut worst: Option<(usize, f64)> = None;
    for j in 0..t {
        if exit == Exit::Optimal && !fell_back && st.blocked[j] & IN_FREE != 0 {
            continue;
        }
        let v = st.u_s[j] - gamma * kappa * st.alpha[j] - nu;
        if worst.is_none_or(|(_, w)| v > w) {
            worst = Some((j, v));
        }
    }
    let (worst_pos, violation) = worst.map_or((0, 0.0), |(j, v)| (j, v.max(0.0)));
    let violation = if violation.is_nan() { 0.0 } else { violation };
    if fell_back {
        exit = Exit::NonFinite;
    }
    let status = match exit {
        Exit::Cap => RefitStatus::IterationCap { violation },
        Exit::NonFinite => RefitStatus::NumericalFailure { violation },
        Exit::Optimal if violation > add_tol * (1.0 + nu.abs()) => RefitStatus::Blocked {
            index: worst_pos,
            violation,
        },
        Exit::Optimal => RefitStatus::Optimal,
    };
    Refit {
        nu,
        iterations,
        status,
        kkt_violation: violation,
    }
}

/// What one equality-constrained solve on the free set did.
struct EqualityStep {
    /// A free memory reached 0 on the way and was dropped.
    dropped: bool,
    /// α is now the equality-constrained optimum on F (no drop needed).
    optimal_on_free: bool,
}

/// Solves the equality-constrained QP on F and moves α toward its solution:
/// all the way if it is feasible, else to the first coordinate that reaches
/// 0, which is dropped from F. `None` if the solve produced a non-finite
/// value (impossible with a positive definite factor; α stays feasible).
fn equality_step(
    st: &mut SolverState<'_>,
    nf: usize,
    gamma: f64,
    last_added: Option<usize>,
) -> Option<EqualityStep> {
    let k = st.k;
    {
        // 1ᵀx = w₁ᵀw_ρ, 1ᵀy = w₁ᵀw₁ (module docs).
        let (mut sx, mut sy) = (0.0, 0.0);
        for (w1, wr) in st.w_one[..nf].iter().zip(&st.w_rho[..nf]) {
            sx += w1 * wr;
            sy += w1 * w1;
        }
        let shift = (sx - gamma) / sy;
        for a in 0..nf {
            st.trial[a] = (st.w_rho[a] - shift * st.w_one[a]) / gamma;
        }
        let f = Factor {
            l: st.chol,
            stride: k,
            n: nf,
        };
        f.backward(&mut st.trial[..nf]);
        let mut all_finite = shift.is_finite();
        for a in 0..nf {
            all_finite &= st.trial[a].is_finite();
        }
        if nf == 1 {
            // A one-memory free set has the single feasible point α = 1; the
            // formula above divides rounding noise by γ (γ = 1e-300 gave
            // α = −1e283, a ratio test that emptied F, and weights off the
            // simplex), so never let it drop the last free memory.
            st.trial[0] = 1.0;
            all_finite = true;
        }
        if !all_finite {
            return None;
        }
        // Ratio test: walk from the feasible α toward the trial point and
        // stop at the first coordinate that would turn negative.
        let mut block: Option<(usize, f64)> = None;
        for a in 0..nf {
            let tr = st.trial[a];
            if tr < 0.0 {
                let cur = st.alpha[st.free[a]];
                let step = cur / (cur - tr);
                if block.is_none_or(|(_, s)| step < s) {
                    block = Some((a, step));
                }
            }
        }
        if let Some((a_out, step)) = block {
            for a in 0..nf {
                let j = st.free[a];
                st.alpha[j] += step * (st.trial[a] - st.alpha[j]);
            }
            let j_out = st.free[a_out];
            st.alpha[j_out] = 0.0;
            st.blocked[j_out] &= !IN_FREE;
            if last_added == Some(j_out) && step <= 0.0 {
                st.blocked[j_out] |= BLOCKED;
            }
            remove_free(st, nf, a_out);
            st.nfree = nf - 1;
            reset_forward(st);
            return Some(EqualityStep {
                dropped: true,
                optimal_on_free: false,
            });
        }
        for a in 0..nf {
            st.alpha[st.free[a]] = st.trial[a];
        }
    }
    Some(EqualityStep {
        dropped: false,
        optimal_on_free: true,
    })
}

/// Puts α exactly on the simplex and returns ν and the iteration count.
///
/// `optimal_nu` is ν when the loop ended on an optimal α whose scores are
/// current; the renormalization then moves α by rounding only (|Σα − 1| is
/// a few ulps) and ν is kept instead of being recomputed.
fn finish(
    st: &mut SolverState<'_>,
    t: usize,
    gamma: f64,
    kappa: f64,
    iterations: u32,
    optimal_nu: Option<f64>,
) -> (f64, u32, bool) {
    // Exact simplex: clear round-off negatives (none are expected) and
    // renormalize the free weights.
    let mut sum = 0.0;
    for a in 0..st.nfree {
        let j = st.free[a];
        if st.alpha[j].is_nan() || st.alpha[j] <= 0.0 {
            st.alpha[j] = 0.0;
        }
        sum += st.alpha[j];
    }
    // `sum` may be NaN: only a positive sum renormalizes.
    let fell_back = sum.partial_cmp(&0.0) != Some(core::cmp::Ordering::Greater);
    if !fell_back {
        for a in 0..st.nfree {
            st.alpha[st.free[a]] /= sum;
        }
    } else {
        // Unreachable in exact arithmetic; fall back to the first free
        // memory (reported as a numerical failure).
        let j = st.free[0];
        st.alpha[j] = 1.0;
    }
    let nu = match optimal_nu {
        Some(nu) if (sum - 1.0).abs() <= 1e-14 => nu,
        _ => scores(st, t, gamma, kappa),
    };
    st.nu = nu;
    (nu, iterations, fell_back)
}

/// Enters a KKT-violating memory `j` (U_j − ν = `violation` > 0) whose
/// augmented column is numerically dependent on the free set's,
/// [m_j; 1] ≈ Σ_a c_a [m_a; 1] with c = A_FF⁻¹ a_j (Σ c_a = 1), by an
/// exchange instead of blocking it: moving α along d = e_j − Σ_a c_a e_a
/// keeps 1ᵀα = 1, changes the quadratic term by (γ/2)s²·dᵀA d = (γ/2)s²·p²
/// (p² ≤ PIVOT_TOLERANCE·A_jj, the rejected pivot²) and the linear term by
/// −s·(U_j − ν), so the objective decreases; step to the first free memory
/// that reaches 0 (ratio test over c_a > 0), drop it and enter j.
///
/// Blocking alone is only safe for ρ = b, where U_j − ν is bounded by the
/// distance to the span times ‖r‖; with caller relevance (ρ ≠ b) a
/// dependent memory can violate KKT by O(1) (found by the `kkt` fuzz
/// target, docs/FUZZING.md). Returns false, changing nothing, when the
/// exchange would not decrease the objective, no c_a is positive, or `j`
/// would still be dependent after the drop (predicted pivot²
/// p² + c_out² / (A_FF⁻¹)_out,out).
fn exchange_dependent(
    st: &mut SolverState<'_>,
    nf: usize,
    j: usize,
    violation: f64,
    gamma: f64,
    kappa: f64,
) -> bool {
    let k = st.k;
    let diag = st.gss[j * k + j] + kappa + 1.0;
    if violation.is_nan() || violation <= gamma * PIVOT_TOLERANCE * diag {
        return false;
    }
    // c = A_FF⁻¹ a_j in solve_a.
    for a in 0..nf {
        st.solve_a[a] = st.gss[st.free[a] * k + j] + 1.0;
    }
    let f = Factor {
        l: st.chol,
        stride: k,
        n: nf,
    };
    f.solve(&mut st.solve_a[..nf]);
    let mut out: Option<(usize, f64)> = None;
    for a in 0..nf {
        let c = st.solve_a[a];
        if c > 0.0 {
            let step = st.alpha[st.free[a]] / c;
            if out.is_none_or(|(_, s)| step < s) {
                out = Some((a, step));
            }
        }
    }
    let Some((a_out, step)) = out else {
        return false;
    };
    if !step.is_finite() {
        return false;
    }
    // Pivot² of j now and once F loses a_out: p² + c_out² / (A_FF⁻¹)_oo.
    let mut p2 = diag;
    for a in 0..nf {
        p2 -= (st.gss[st.free[a] * k + j] + 1.0) * st.solve_a[a];
    }
    for a in 0..nf {
        st.solve_b[a] = if a == a_out { 1.0 } else { 0.0 };
    }
    f.solve(&mut st.solve_b[..nf]);
    let c_out = st.solve_a[a_out];
    let p2_new = p2.max(0.0) + c_out * c_out / st.solve_b[a_out];
    if p2_new.is_nan() || p2_new <= 4.0 * PIVOT_TOLERANCE * diag {
        return false;
    }
    for a in 0..nf {
        let i = st.free[a];
        st.alpha[i] = (st.alpha[i] - step * st.solve_a[a]).max(0.0);
    }
    let i_out = st.free[a_out];
    st.alpha[i_out] = 0.0;
    st.alpha[j] = step;
    st.blocked[i_out] &= !IN_FREE;
    remove_free(st, nf, a_out);
    let mut f = Factor {
        l: st.chol,
        stride: k,
        n: nf - 1,
    };
    let gss = &*st.gss;
    let free = &*st.free;
    if f.append(|a| gss[free[a] * k + j] + 1.0, diag) {
        st.free[nf - 1] = j;
        st.blocked[j] = IN_FREE;
        st.nfree = nf;
    } else {
        // Rounding defeated the prediction: keep the smaller free set at a
        // feasible point (j back to 0, the rest renormalized) and block j.
        st.nfree = nf - 1;
        st.alpha[j] = 0.0;
        st.blocked[j] |= BLOCKED;
        let sum: f64 = (0..nf - 1).map(|a| st.alpha[st.free[a]]).sum();
        if sum > 0.0 {
            for a in 0..nf - 1 {
                st.alpha[st.free[a]] /= sum;
            }
        }
    }
    true
}

/// Deletes free position `a_out` of the `nf` free memories: its row and
/// column of the factor (Givens) and its entry of `free` (the caller sets
/// `nfree` and the flags).
fn remove_free(st: &mut SolverState<'_>, nf: usize, a_out: usize) {
    let mut f = Factor {
        l: st.chol,
        stride: st.k,
        n: nf,
    };
    f.remove(a_out);
    st.free.copy_within(a_out + 1..nf, a_out);
}

/// Rebuilds the factor of the free set from G_SS (after its entries were
/// recomputed) and marks the warm start invalid, so the next refit begins
/// with an equality solve on F. If the new factor rejects a free memory, the
/// state is reset instead (α = 0, F = ∅: the next refit starts from the new
/// pick alone). `t` is the number of positions with G_SS rows.
pub(crate) fn refactor(st: &mut SolverState<'_>, t: usize, kappa: f64) {
    let (k, nf) = (st.k, st.nfree);
    let mut f = Factor {
        l: st.chol,
        stride: k,
        n: 0,
    };
    let (gss, free) = (&*st.gss, &*st.free);
    let mut ok = true;
    for a in 0..nf {
        let j = free[a];
        let diag = gss[j * k + j] + kappa + 1.0;
        if !f.append(|b| gss[free[b] * k + j] + 1.0, diag) {
            ok = false;
            break;
        }
    }
    st.nu = f64::NAN;
    if ok {
        reset_forward(st);
    } else {
        st.nfree = 0;
        st.alpha[..t].fill(0.0);
        st.blocked[..t].fill(0);
    }
}

/// Recomputes w_ρ = L⁻¹ρ_F and w₁ = L⁻¹1 for the current
/// free set and factor (after a delete or an exchange).
fn reset_forward(st: &mut SolverState<'_>) {
    let nf = st.nfree;
    for a in 0..nf {
        st.w_rho[a] = st.rho_s[st.free[a]];
        st.w_one[a] = 1.0;
    }
    let f = Factor {
        l: st.chol,
        stride: st.k,
        n: nf,
    };
    f.forward(&mut st.w_rho[..nf]);
    f.forward(&mut st.w_one[..nf]);
}

/// u_s[j] = ρ_j − γ (G_SS α)_j for every selected position, with (G_SS α)_j
/// kept in `g_alpha[j]`; returns ν = Σ α_j u_j − γκ‖α‖².
fn scores(st: &mut SolverState<'_>, t: usize, gamma: f64, kappa: f64) -> f64 {
    let k = st.k;
    let nf = st.nfree;
    // G_SS is symmetric, so (G_SS α)_j = Σ_a G[free_a, j] α_{free_a}: one
    // contiguous row of G_SS per free memory, accumulated over a in order.
    let g = &mut st.g_alpha[..t];
    g.fill(0.0);
    for &i in &st.free[..nf] {
        let c = st.alpha[i];
        for (gj, &gij) in g.iter_mut().zip(&st.gss[i * k..i * k + t]) {
            *gj += gij * c;
        }
    }
    for j in 0..t {
        st.u_s[j] = st.rho_s[j] - gamma * st.g_alpha[j];
    }
    let mut au = 0.0;
    let mut aa = 0.0;
    for a in 0..nf {
        let i = st.free[a];
        au += st.alpha[i] * st.u_s[i];
        aa += st.alpha[i] * st.alpha[i];
    }
    au - gamma * kappa * aa
}
