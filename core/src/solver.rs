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

/// Where a selected position stands in one refit (one byte per position
/// in the workspace; see [`ActiveSet`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Membership {
    /// α_j = 0; may enter F when it violates the KKT conditions.
    Out = 0,
    /// In the free set F (α_j > 0 after the refit, or entering).
    Free = 1,
    /// α_j = 0 and may not enter F for the rest of this refit (its column
    /// is numerically dependent on F's, or it left F at step length 0 right
    /// after entering). Cleared when the next refit starts.
    Blocked = 2,
}

impl Membership {
    #[inline(always)]
    fn from_byte(b: u8) -> Membership {
        match b {
            1 => Membership::Free,
            2 => Membership::Blocked,
            _ => Membership::Out,
        }
    }
}

/// The free set F of the refit together with everything that must change
/// with it: the Cholesky factor L of A_FF = G_FF + κI + 11ᵀ (by free
/// index), the list of free positions in factor order, every position's
/// [`Membership`], and the forward-substituted right-hand sides
/// w_ρ = L⁻¹ρ_F and w₁ = L⁻¹1. Its operations keep these consistent: a
/// position is [`Membership::Free`] exactly when it is listed, the factor
/// has one row per listed position, and w_ρ, w₁ match the factor.
///
/// Row |F| of L's storage (one past the factor) holds the forward
/// substitution of a column [staged](ActiveSet::stage) for an append; a
/// [`Staged`] token says which column and stays valid only while nothing
/// else writes the factor (a generation counter checks it).
#[derive(Debug)]
pub(crate) struct ActiveSet<'a> {
    /// K_max: the stride of the factor.
    k: usize,
    /// Lower Cholesky factor L (rows 0..|F|), and the staged row |F|.
    chol: &'a mut [f64],
    /// The free positions, in factor order (first |F| entries).
    free: &'a mut [usize],
    /// |F|.
    n: usize,
    /// [`Membership`] of each position, one byte each.
    flags: &'a mut [u8],
    /// w_ρ = L⁻¹ ρ_F, by free index.
    w_rho: &'a mut [f64],
    /// w₁ = L⁻¹ 1, by free index.
    w_one: &'a mut [f64],
    /// Bumped by every write to the factor's storage (append, delete,
    /// refactor, staging), so a [`Staged`] token can tell whether its row
    /// is still there.
    generation: u32,
}

/// A column staged for an append ([`ActiveSet::stage`]): its position, its
/// pivot² against the factor at staging time, and the factor's generation
/// then.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Staged {
    position: usize,
    pivot_sq: f64,
    generation: u32,
}

impl<'a> ActiveSet<'a> {
    /// An empty active set over workspace buffers: `chol` K_max², `free`,
    /// `flags`, `w_rho`, `w_one` K_max each.
    pub(crate) fn new(
        k: usize,
        chol: &'a mut [f64],
        free: &'a mut [usize],
        flags: &'a mut [u8],
        w_rho: &'a mut [f64],
        w_one: &'a mut [f64],
    ) -> Self {
        ActiveSet {
            k,
            chol,
            free,
            n: 0,
            flags,
            w_rho,
            w_one,
            generation: 0,
        }
    }

    /// |F|.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.n
    }

    /// The free positions in factor order.
    #[inline]
    pub(crate) fn positions(&self) -> &[usize] {
        &self.free[..self.n]
    }

    /// The membership of position `j`.
    #[inline]
    pub(crate) fn membership(&self, j: usize) -> Membership {
        Membership::from_byte(self.flags[j])
    }

    fn set(&mut self, j: usize, m: Membership) {
        self.flags[j] = m as u8;
    }

    /// The factor (read-only operations: solves).
    fn factor(&mut self) -> Factor<'_> {
        Factor {
            l: self.chol,
            stride: self.k,
            n: self.n,
        }
    }

    /// Empties F and marks positions `0..t` [`Membership::Out`].
    pub(crate) fn clear(&mut self, t: usize) {
        self.n = 0;
        self.flags[..t].fill(Membership::Out as u8);
        self.generation = self.generation.wrapping_add(1);
    }

    /// The start of a refit over positions `0..t` whose newest is `new`:
    /// `new` is [`Membership::Out`] and every block of the last refit is
    /// lifted.
    fn start_refit(&mut self, t: usize, new: usize) {
        self.set(new, Membership::Out);
        for f in self.flags[..t].iter_mut() {
            if *f == Membership::Blocked as u8 {
                *f = Membership::Out as u8;
            }
        }
    }

    /// Stages position `j`'s column of A = G_SS + κI + 11ᵀ (from `gss`,
    /// stride K_max) for an append: its forward substitution against the
    /// factor goes into row |F| of the factor's storage and its pivot²
    /// into the token. The factor itself is unchanged.
    pub(crate) fn stage(&mut self, gss: &[f64], j: usize, kappa: f64) -> Staged {
        self.generation = self.generation.wrapping_add(1);
        Staged {
            position: j,
            pivot_sq: self.pivot_sq(gss, j, kappa),
            generation: self.generation,
        }
    }

    /// A_jj − ‖L⁻¹ A_{F,j}‖², writing the substitution into row |F|.
    fn pivot_sq(&mut self, gss: &[f64], j: usize, kappa: f64) -> f64 {
        let k = self.k;
        let free = &*self.free;
        let mut f = Factor {
            l: self.chol,
            stride: k,
            n: self.n,
        };
        f.pivot_sq(|a| gss[free[a] * k + j] + 1.0, gss[j * k + j] + kappa + 1.0)
    }

    /// `staged` if it is position `j`'s token and its row is still in
    /// place, else `j` staged anew.
    fn restage(&mut self, staged: Option<Staged>, gss: &[f64], j: usize, kappa: f64) -> Staged {
        match staged {
            Some(s) if s.position == j && s.generation == self.generation => {
                debug_assert_eq!(
                    s.pivot_sq.to_bits(),
                    self.pivot_sq(gss, j, kappa).to_bits(),
                    "a staged column's substitution is the one an append computes"
                );
                s
            }
            _ => self.stage(gss, j, kappa),
        }
    }

    /// Appends the staged column as free position |F| when its pivot is
    /// safely positive (diagonal `diag` = A_jj; `rho_j` = ρ_j extends w_ρ);
    /// returns whether it did.
    fn push(&mut self, s: Staged, diag: f64, rho_j: f64) -> bool {
        debug_assert_eq!(s.generation, self.generation, "stale staged column");
        let mut f = Factor {
            l: self.chol,
            stride: self.k,
            n: self.n,
        };
        if !f.append_pivot(s.pivot_sq, diag) {
            return false;
        }
        f.extend_forward(self.w_rho, rho_j);
        f.extend_forward(self.w_one, 1.0);
        self.free[self.n] = s.position;
        self.n += 1;
        self.set(s.position, Membership::Free);
        self.generation = self.generation.wrapping_add(1);
        true
    }

    /// Appends position `j` (its column of A from `gss`); returns whether
    /// its pivot was accepted.
    fn append(&mut self, gss: &[f64], j: usize, kappa: f64, rho_j: f64) -> bool {
        let s = self.stage(gss, j, kappa);
        self.push(s, gss[j * self.k + j] + kappa + 1.0, rho_j)
    }

    /// Deletes free index `a` (Givens rotations on the factor), marks its
    /// position [`Membership::Out`] and recomputes w_ρ, w₁ from `rho_s`.
    fn remove(&mut self, a: usize, rho_s: &[f64]) {
        let j = self.free[a];
        self.factor().remove(a);
        self.free.copy_within(a + 1..self.n, a);
        self.n -= 1;
        self.set(j, Membership::Out);
        self.generation = self.generation.wrapping_add(1);
        self.reset_forward(rho_s);
    }

    /// Recomputes w_ρ = L⁻¹ρ_F and w₁ = L⁻¹1 for the current factor.
    fn reset_forward(&mut self, rho_s: &[f64]) {
        let n = self.n;
        for a in 0..n {
            self.w_rho[a] = rho_s[self.free[a]];
            self.w_one[a] = 1.0;
        }
        let f = Factor {
            l: self.chol,
            stride: self.k,
            n,
        };
        f.forward(&mut self.w_rho[..n]);
        f.forward(&mut self.w_one[..n]);
    }

    /// Rebuilds the factor of the same free positions from `gss` (κ added).
    /// Returns false, leaving F empty and positions `0..t` Out, if the new
    /// factor rejects a free position.
    fn refactor(&mut self, gss: &[f64], t: usize, kappa: f64, rho_s: &[f64]) -> bool {
        let (k, nf) = (self.k, self.n);
        self.generation = self.generation.wrapping_add(1);
        let mut f = Factor {
            l: self.chol,
            stride: k,
            n: 0,
        };
        let free = &*self.free;
        for a in 0..nf {
            let j = free[a];
            let diag = gss[j * k + j] + kappa + 1.0;
            if !f.append(|b| gss[free[b] * k + j] + 1.0, diag) {
                self.clear(t);
                return false;
            }
        }
        self.reset_forward(rho_s);
        true
    }
}

/// The refit's state, owned by the solver and kept across the steps of one
/// pursuit (warm start). Every buffer has one meaning; positions are the
/// entry order of the picks (0..t), free indices the order of F.
#[derive(Debug)]
pub(crate) struct SolverState<'a> {
    /// K_max: the stride of the K × K matrices.
    pub(crate) k: usize,
    /// G_SS (+ nothing: κ and 11ᵀ are added when factoring), by position.
    pub(crate) gss: &'a mut [f64],
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
    /// Solve vectors of a dependent-column exchange: c = A_FF⁻¹ a_j and
    /// A_FF⁻¹ e_out, by free index.
    pub(crate) solve_a: &'a mut [f64],
    /// See `solve_a`.
    pub(crate) solve_b: &'a mut [f64],
    /// The free set, its factor and every position's membership.
    pub(crate) active: ActiveSet<'a>,
    /// ν of the last refit while its α, F and scores are a valid warm start
    /// for the next one; `None` after [`refactor`] or a reset.
    pub(crate) warm_nu: Option<f64>,
    /// The duplicate check's staged column of the newest pick (see
    /// [`ActiveSet::stage`]), for the refit's first append of it.
    pub(crate) staged: Option<Staged>,
}

impl SolverState<'_> {
    /// Forgets every pick (the start of a pursuit).
    pub(crate) fn reset(&mut self) {
        self.active.clear(0);
        self.warm_nu = None;
        self.staged = None;
    }

    /// |F|.
    pub(crate) fn nfree(&self) -> usize {
        self.active.len()
    }

    /// The free positions in factor order.
    pub(crate) fn free(&self) -> &[usize] {
        self.active.positions()
    }

    /// Stages the column of position `t` of A = G_SS + κI + 11ᵀ against
    /// the free set for the refit's append of it, and returns its pivot²
    /// (`None` when F is empty): the duplicate check of the pursuit.
    pub(crate) fn stage_column(&mut self, t: usize, kappa: f64) -> Option<f64> {
        self.staged = None;
        if self.active.len() == 0 {
            return None;
        }
        let s = self.active.stage(self.gss, t, kappa);
        self.staged = Some(s);
        Some(s.pivot_sq)
    }

    /// Rebuilds the factor of the free set from G_SS (after its entries
    /// were recomputed) and invalidates the warm start, so the next refit
    /// begins with an equality solve on F. If the new factor rejects a free
    /// memory, the state is reset instead (α = 0, F = ∅: the next refit
    /// starts from the new pick alone). `t` is the number of positions
    /// with G_SS rows.
    pub(crate) fn refactor(&mut self, t: usize, kappa: f64) {
        self.warm_nu = None;
        self.staged = None;
        if !self.active.refactor(self.gss, t, kappa, self.rho_s) {
            self.alpha[..t].fill(0.0);
        }
    }
}

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
    /// No selected memory outside F violates the KKT conditions; ν is that
    /// of the current α and scores.
    Optimal { nu: f64 },
    /// The iteration cap (4t + 16) stopped the loop.
    IterationCap,
    /// An equality solve gave a non-finite value, or the final α could not
    /// be renormalized; α is the last feasible point.
    NonFinite,
}

/// Refits α over the first `t` selected positions. Position t−1 is new and
/// enters with α = 0 (for t = 1 it is the only one and gets α = 1). Expects
/// `gss` (t × t, stride K_max), `rho_s` and the previous α, F and factor.
/// Leaves α, the active set, the selected scores `u_s`, G_SS α (`g_alpha`)
/// and the warm start (`warm_nu`) updated.
pub(crate) fn refit(st: &mut SolverState<'_>, t: usize, gamma: f64, kappa: f64) -> Refit {
    let k = st.k;
    let new = t - 1;
    // The warm start (ν of the previous refit, with its α, F and scores)
    // holds unless the factor was rebuilt or the state reset.
    let warm_nu = st.warm_nu.take().filter(|_| t > 1 && st.active.len() > 0);
    let staged = st.staged.take();
    st.alpha[new] = 0.0;
    if t == 1 {
        st.active.clear(1);
    }
    st.active.start_refit(t, new);
    let add_tol = 1e-12;
    let cap = 4 * t as u32 + 16;
    let mut iterations = 0u32;
    let mut last_added: Option<usize> = None;

    if st.active.len() == 0 {
        // First pick (or a reset state): α = e_new, F = {new}. A single
        // positive diagonal always passes.
        let ok = st.active.append(st.gss, new, kappa, st.rho_s[new]);
        debug_assert!(ok);
        st.alpha[new] = 1.0;
    }

    // Warm start: the previous refit left α optimal on the unchanged free
    // set, so the first iteration only checks the new memory's KKT
    // condition (skipping one equality solve per pursuit step).
    let mut first_warm = warm_nu;
    let exit = loop {
        if iterations >= cap {
            break Exit::IterationCap;
        }
        iterations += 1;
        let nu = if let Some(nu) = first_warm.take() {
            warm_score(st, new, gamma);
            nu
        } else {
            match equality_step(st, gamma, last_added) {
                None => break Exit::NonFinite,
                Some(EqualityStep::Dropped) => {
                    last_added = None;
                    continue;
                }
                Some(EqualityStep::OptimalOnFree) => scores(st, t, gamma, kappa),
            }
        };
        let Some((j_in, violation)) = most_violating_out(st, t, nu, add_tol) else {
            break Exit::Optimal { nu };
        };
        let diag = st.gss[j_in * k + j_in] + kappa + 1.0;
        let s = st.active.restage(staged, st.gss, j_in, kappa);
        // Append j_in to F, or (numerically dependent) exchange it for a
        // free memory, or block it for the rest of this refit.
        if st.active.push(s, diag, st.rho_s[j_in])
            || exchange_dependent(st, j_in, violation, gamma, kappa)
        {
            last_added = Some(j_in);
        } else {
            st.active.set(j_in, Membership::Blocked);
        }
    };
    let (nu, exit) = finish(st, t, gamma, kappa, exit);
    st.warm_nu = Some(nu);
    let (status, violation) = kkt_status(st, t, (gamma, kappa, nu), exit, add_tol);
    Refit {
        nu,
        iterations,
        status,
        kkt_violation: violation,
    }
}

/// The warm start's only new score: α, F and the old positions' scores are
/// the previous refit's (G_SS α in `g_alpha`), so only the new memory's is
/// computed, U_new = ρ_new − γ Σ_F G_new,i α_i.
fn warm_score(st: &mut SolverState<'_>, new: usize, gamma: f64) {
    let k = st.k;
    let mut g = 0.0;
    for &i in st.active.positions() {
        g += st.gss[new * k + i] * st.alpha[i];
    }
    st.g_alpha[new] = g;
    st.u_s[new] = st.rho_s[new] - gamma * g;
}

/// The most violating selected memory outside F, U_j − ν above the add
/// tolerance (lowest position on ties), with its violation.
fn most_violating_out(
    st: &SolverState<'_>,
    t: usize,
    nu: f64,
    add_tol: f64,
) -> Option<(usize, f64)> {
    let mut best: Option<(usize, f64)> = None;
    for j in 0..t {
        if st.active.membership(j) != Membership::Out {
            continue;
        }
        let v = st.u_s[j] - nu;
        if v > add_tol * (1.0 + nu.abs()) && best.is_none_or(|(_, bv)| v > bv) {
            best = Some((j, v));
        }
    }
    best
}

/// KKT check of the α a refit returns, and its status with the largest
/// violation (u_s is current: `finish` recomputed it unless α only moved by
/// rounding). After an optimal exit the free memories satisfy
/// U_j − γκα_j = ν by construction (their difference is rounding noise), so
/// only those outside F are checked; after any other exit every selected
/// position is.
fn kkt_status(
    st: &SolverState<'_>,
    t: usize,
    (gamma, kappa, nu): (f64, f64, f64),
    exit: Exit,
    add_tol: f64,
) -> (RefitStatus, f64) {
    let optimal = matches!(exit, Exit::Optimal { .. });
    let mut worst: Option<(usize, f64)> = None;
    for j in 0..t {
        if optimal && st.active.membership(j) == Membership::Free {
            continue;
        }
        let v = st.u_s[j] - gamma * kappa * st.alpha[j] - nu;
        if worst.is_none_or(|(_, w)| v > w) {
            worst = Some((j, v));
        }
    }
    let (worst_pos, violation) = worst.map_or((0, 0.0), |(j, v)| (j, v.max(0.0)));
    let violation = if violation.is_nan() { 0.0 } else { violation };
    let status = match exit {
        Exit::IterationCap => RefitStatus::IterationCap { violation },
        Exit::NonFinite => RefitStatus::NumericalFailure { violation },
        Exit::Optimal { .. } if violation > add_tol * (1.0 + nu.abs()) => RefitStatus::Blocked {
            index: worst_pos,
            violation,
        },
        Exit::Optimal { .. } => RefitStatus::Optimal,
    };
    (status, violation)
}

/// What one equality-constrained solve on the free set did.
enum EqualityStep {
    /// A free memory reached 0 on the way to the optimum on F and was
    /// dropped; α is feasible, F smaller.
    Dropped,
    /// α is now the equality-constrained optimum on F (no drop needed).
    OptimalOnFree,
}

/// Solves the equality-constrained QP on F and moves α toward its solution:
/// all the way if it is feasible, else to the first coordinate that reaches
/// 0, which is dropped from F (and blocked if it is `last_added` and left
/// at step length 0). `None` if the solve produced a non-finite value
/// (impossible with a positive definite factor; α stays feasible).
fn equality_step(
    st: &mut SolverState<'_>,
    gamma: f64,
    last_added: Option<usize>,
) -> Option<EqualityStep> {
    let nf = st.active.len();
    // 1ᵀx = w₁ᵀw_ρ, 1ᵀy = w₁ᵀw₁ (module docs).
    let (mut sx, mut sy) = (0.0, 0.0);
    for (w1, wr) in st.active.w_one[..nf].iter().zip(&st.active.w_rho[..nf]) {
        sx += w1 * wr;
        sy += w1 * w1;
    }
    let shift = (sx - gamma) / sy;
    for a in 0..nf {
        st.trial[a] = (st.active.w_rho[a] - shift * st.active.w_one[a]) / gamma;
    }
    st.active.factor().backward(&mut st.trial[..nf]);
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
    let free = st.active.positions();
    let mut block: Option<(usize, f64)> = None;
    for a in 0..nf {
        let tr = st.trial[a];
        if tr < 0.0 {
            let cur = st.alpha[free[a]];
            let step = cur / (cur - tr);
            if block.is_none_or(|(_, s)| step < s) {
                block = Some((a, step));
            }
        }
    }
    if let Some((a_out, step)) = block {
        for a in 0..nf {
            let j = free[a];
            st.alpha[j] += step * (st.trial[a] - st.alpha[j]);
        }
        let j_out = free[a_out];
        st.alpha[j_out] = 0.0;
        st.active.remove(a_out, st.rho_s);
        if last_added == Some(j_out) && step <= 0.0 {
            st.active.set(j_out, Membership::Blocked);
        }
        return Some(EqualityStep::Dropped);
    }
    for a in 0..nf {
        st.alpha[free[a]] = st.trial[a];
    }
    Some(EqualityStep::OptimalOnFree)
}

/// Puts α exactly on the simplex and returns ν with the final [`Exit`].
///
/// After [`Exit::Optimal`] the scores are current for α, so the
/// renormalization moves α by rounding only (|Σα − 1| is a few ulps) and
/// its ν is kept instead of being recomputed. A free set whose weights do
/// not sum to a positive number (unreachable in exact arithmetic) falls
/// back to α = e of the first free memory and turns the exit into
/// [`Exit::NonFinite`].
fn finish(st: &mut SolverState<'_>, t: usize, gamma: f64, kappa: f64, exit: Exit) -> (f64, Exit) {
    // Exact simplex: clear round-off negatives (none are expected) and
    // renormalize the free weights.
    let free = st.active.positions();
    let mut sum = 0.0;
    for &j in free {
        if st.alpha[j].is_nan() || st.alpha[j] <= 0.0 {
            st.alpha[j] = 0.0;
        }
        sum += st.alpha[j];
    }
    // `sum` may be NaN: only a positive sum renormalizes.
    let exit = if sum.partial_cmp(&0.0) == Some(core::cmp::Ordering::Greater) {
        for &j in free {
            st.alpha[j] /= sum;
        }
        exit
    } else {
        st.alpha[free[0]] = 1.0;
        Exit::NonFinite
    };
    let nu = match exit {
        Exit::Optimal { nu } if (sum - 1.0).abs() <= 1e-14 => nu,
        _ => scores(st, t, gamma, kappa),
    };
    (nu, exit)
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
    j: usize,
    violation: f64,
    gamma: f64,
    kappa: f64,
) -> bool {
    let k = st.k;
    let nf = st.active.len();
    let diag = st.gss[j * k + j] + kappa + 1.0;
    if violation.is_nan() || violation <= gamma * PIVOT_TOLERANCE * diag {
        return false;
    }
    // c = A_FF⁻¹ a_j in solve_a.
    let free = st.active.positions();
    for a in 0..nf {
        st.solve_a[a] = st.gss[free[a] * k + j] + 1.0;
    }
    let mut out: Option<(usize, f64)> = None;
    {
        let f = st.active.factor();
        f.solve(&mut st.solve_a[..nf]);
    }
    let free = st.active.positions();
    for a in 0..nf {
        let c = st.solve_a[a];
        if c > 0.0 {
            let step = st.alpha[free[a]] / c;
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
        p2 -= (st.gss[free[a] * k + j] + 1.0) * st.solve_a[a];
    }
    for a in 0..nf {
        st.solve_b[a] = if a == a_out { 1.0 } else { 0.0 };
    }
    st.active.factor().solve(&mut st.solve_b[..nf]);
    let c_out = st.solve_a[a_out];
    let p2_new = p2.max(0.0) + c_out * c_out / st.solve_b[a_out];
    if p2_new.is_nan() || p2_new <= 4.0 * PIVOT_TOLERANCE * diag {
        return false;
    }
    let free = st.active.positions();
    for a in 0..nf {
        let i = free[a];
        st.alpha[i] = (st.alpha[i] - step * st.solve_a[a]).max(0.0);
    }
    let i_out = free[a_out];
    st.alpha[i_out] = 0.0;
    st.alpha[j] = step;
    st.active.remove(a_out, st.rho_s);
    if !st.active.append(st.gss, j, kappa, st.rho_s[j]) {
        // Rounding defeated the prediction: keep the smaller free set at a
        // feasible point (j back to 0, the rest renormalized) and block j.
        st.alpha[j] = 0.0;
        st.active.set(j, Membership::Blocked);
        let free = st.active.positions();
        let sum: f64 = free.iter().map(|&i| st.alpha[i]).sum();
        if sum > 0.0 {
            for &i in free {
                st.alpha[i] /= sum;
            }
        }
    }
    true
}

/// u_s[j] = ρ_j − γ (G_SS α)_j for every selected position, with (G_SS α)_j
/// kept in `g_alpha[j]`; returns ν = Σ α_j u_j − γκ‖α‖².
fn scores(st: &mut SolverState<'_>, t: usize, gamma: f64, kappa: f64) -> f64 {
    let k = st.k;
    let free = st.active.positions();
    // G_SS is symmetric, so (G_SS α)_j = Σ_a G[free_a, j] α_{free_a}: one
    // contiguous row of G_SS per free memory, accumulated over a in order.
    let g = &mut st.g_alpha[..t];
    g.fill(0.0);
    for &i in free {
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
    for &i in free {
        au += st.alpha[i] * st.u_s[i];
        aa += st.alpha[i] * st.alpha[i];
    }
    au - gamma * kappa * aa
}
