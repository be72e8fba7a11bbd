//! The pursuit (paper Eqs. 5–7, 9; certificates of Appendix B, Eqs. 14, 25;
//! the relevance-scaled family of the crate docs): greedy selection by
//! residual alignment with a simplex-constrained refit after every pick.
//! ARCHITECTURE.md, “The data path”, walks through `qp_loop` step by step.

use crate::cholesky::accepts_pivot;
use crate::error::Error;
use crate::exact::{residual_sq, ExactParts};
use crate::input::{prepare, Input};
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
    let mut scorer = F32Scorer {
        pass: &mut pass,
        stored: k_eff,
        admitted: 0,
    };
    let len = if options.is_centroid() {
        centroid_loop(&mut scorer, k_eff, options, ws)
    } else {
        qp_loop(&mut scorer, &parts, k_eff, options, ws)
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
fn argmax_scores(u: &[f32], states: &States<'_>) -> Option<usize> {
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
    /// ([`Step::verified`]); 0 on the f32 path.
    pub(crate) verified: u32,
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
        Choice { pick, verified: 0 }
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
    ws: &mut Workspace<'_>,
) -> usize {
    let (gamma, kappa) = (options.gamma, options.ridge);
    let skip_dependent = options.dependent_picks == DependentPicks::Skip;
    let entry_error = f32_entry_error(parts.d) * 1.01;
    let near_tol = (1e-4f64).max(100.0 * entry_error);
    ws.solver.reset();
    mask_excluded(ws);
    let mut st = QpState {
        exact: false,
        fill: false,
        stop: AdaptiveStop::new(options),
        l_prev: parts.qq,
        last: Step::default(),
        next: scorer.choose(ws, ScoreForm::Relevance),
    };
    let mut t = 0;
    while t < k_eff {
        let Some(i) = st.next.pick else {
            ws.stop = StopReason::PoolExhausted;
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
            st.next = scorer.choose(ws, form);
            continue;
        }
        ws.states.set(i, CandidateState::Selected);
        ws.picks[t] = i;
        if st.fill {
            ws.steps[t] = Step {
                dependent,
                ..fill_step(ws, t, i, &st.last)
            };
            t += 1;
            st.next = Choice {
                verified: 0,
                ..scorer.choose(ws, ScoreForm::Relevance)
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
        let next = scorer.choose(ws, ScoreForm::Refresh { picks: t + 1 });
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
                    ..scorer.choose(ws, ScoreForm::Relevance)
                };
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
    ws: &mut Workspace<'_>,
) -> usize {
    let p = ws.pool;
    let gamma = options.gamma;
    let mut stop = AdaptiveStop::new(options);
    let mut l_prev = 1.0f64;
    // Σ_{j,k∈S} G_jk, Σ_{j∈S} b_j, Σ_{j∈S} ρ_j
    let (mut total, mut sum_b, mut sum_rho) = (0.0f64, 0.0f64, 0.0f64);
    ws.gram_sum[..p].fill(0.0);
    mask_excluded(ws);
    ws.u[..p].copy_from_slice(&ws.rho[..p]);
    let mut next = scorer.choose(ws, ScoreForm::Relevance);
    let mut t = 0;
    while t < k_eff {
        let Some(i) = next.pick else {
            ws.stop = StopReason::PoolExhausted;
            break;
        };
        let score = ws.u[i] as f64;
        ws.states.set(i, CandidateState::Selected);
        ws.picks[t] = i;
        let (acc_i, g_ii) = scorer.admit_centroid(ws, i, t);
        total += 2.0 * acc_i as f64 + g_ii as f64;
        sum_b += ws.b[i] as f64;
        sum_rho += ws.rho[i] as f64;
        let n = (t + 1) as f64;
        let c = (gamma / n) as f32;
        let l_t = (1.0 - 2.0 * sum_b / n + total / (n * n)).max(0.0);
        let mean_u = sum_rho / n - gamma * total / (n * n);
        let form = ScoreForm::Centroid { c, n: t + 1, total };
        let chosen = scorer.choose(ws, form);
        let gap = chosen.pick.map_or(0.0, |m| ws.u[m] as f64 - mean_u);
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
            verified: next.verified,
        };
        next = chosen;
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
