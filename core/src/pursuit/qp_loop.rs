//! The paper's loop and its relevance-scaled family (κ < ∞): pick, G_SS
//! row and duplicate check, refit, residual, refreshed scores and
//! certificate, stopping; generic over the [`Scorer`] that supplies the
//! entries and picks.

use crate::cholesky::accepts_pivot;
use crate::exact::{residual_sq, ExactParts};
use crate::input::Spend;
use crate::options::{DependentPicks, PursuitOptions};
use crate::pursuit::norm_bound::f32_entry_error;
use crate::pursuit::scorer::{choose, set_coefficients, Choice, ScoreForm, Scorer};
use crate::pursuit::step::{
    after_step, mask_excluded, pool_status, relative_improvement, AdaptiveStop, Control,
};
use crate::selection::{CandidateState, RefitStatus, Step};
use crate::solver::refit;
use crate::workspace::Workspace;

/// The state the QP loop carries from one pick to the next.
struct QpState {
    /// G_SS holds exact f64 entries (after a pick came near a dependency).
    exact: bool,
    /// Relevance fill after the pool optimum: picks by ρ, no refit.
    fill: bool,
    stop: AdaptiveStop,
    /// The relative error bound of an f32 entry, with margin (the
    /// residual's switch to exact values, [`residual_sq`]).
    entry_error: f64,
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
    let kappa = options.ridge;
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
        entry_error,
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
        // 1.–2. Admit, row t of G_SS and the duplicate check on it.
        let dependent = admit(scorer, parts, ws, &mut st, (t, i), (kappa, near_tol));
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
        // 4.–6. Refit, residual, the next pick and the certificate.
        let next = refit_step(scorer, parts, ws, &mut st, (t, i), dependent, options);
        // 7. Record and stop.
        ws.steps[t] = st.last;
        st.next = next;
        t += 1;
        st.l_prev = st.last.residual_sq;
        let (improvement, gap) = (st.last.improvement, st.last.fw_gap);
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

/// Phases 1–2 of [`qp_loop`] for candidate `i` as pick `t`: its admission
/// ([`Scorer::admit`]; no kept row for a relevance-fill pick), row `t` of
/// G_SS ([`set_gram_row`]) and the duplicate check ([`represented`]); near
/// a dependency G_SS turns exact for the rest of the call (`st.exact`) and
/// the row and the check are redone on it. Returns whether `i` is
/// represented by the picks so far.
fn admit<S: Scorer>(
    scorer: &mut S,
    parts: &ExactParts<'_>,
    ws: &mut Workspace<'_>,
    st: &mut QpState,
    (t, i): (usize, usize),
    (kappa, near_tol): (f64, f64),
) -> bool {
    scorer.admit(ws, i, t, !st.fill);
    let g_ii = scorer.diag(ws, i);
    set_gram_row(scorer, parts, ws, (t, i), g_ii, st.exact);
    let (mut dependent, near) = represented(ws, t, kappa, near_tol);
    if near && !st.exact && !st.fill {
        st.exact = true;
        switch_to_exact(parts, ws, t, kappa);
        scorer.gram_changed(ws);
        set_gram_row(scorer, parts, ws, (t, i), g_ii, st.exact);
        dependent = represented(ws, t, kappa, near_tol).0;
    }
    dependent
}

/// Phases 4–6 of [`qp_loop`] for the accepted pick `i` at position `t`:
/// the refit (Eq. 6) on G_SS, b_S, ρ_S ([`refit`]), the residual L_t
/// (Eq. 7, [`residual_sq`]), the next pick from the refreshed scores
/// (Eq. 9) and the Frank–Wolfe certificate (Eq. 25). The step's record
/// goes to `st.last`; returns the next choice.
fn refit_step<S: Scorer>(
    scorer: &mut S,
    parts: &ExactParts<'_>,
    ws: &mut Workspace<'_>,
    st: &mut QpState,
    (t, i): (usize, usize),
    dependent: bool,
    options: &PursuitOptions,
) -> Choice {
    let (gamma, kappa) = (options.gamma, options.ridge);
    let score = if t == 0 {
        ws.rho[i] as f64
    } else {
        score64(scorer, ws, i, gamma)
    };
    ws.solver.b_s[t] = ws.b[i] as f64;
    ws.solver.rho_s[t] = ws.rho[i] as f64;
    let r = refit(&mut ws.solver, t + 1, gamma, kappa);
    let l_t = residual_sq(parts, ws, st.entry_error);
    set_coefficients(ws, gamma);
    let next = choose(scorer, ws, ScoreForm::Refresh { picks: t + 1 });
    let gap = match next.pick {
        Some(n) => score64(scorer, ws, n, gamma) - r.nu,
        None => 0.0,
    }
    .max(r.kkt_violation)
    .max(0.0);
    st.last = Step {
        index: i,
        score,
        residual_sq: l_t,
        improvement: relative_improvement(st.l_prev, l_t, st.stop.eps),
        fw_gap: gap,
        nu: r.nu,
        free_size: ws.solver.nfree(),
        solver_iterations: r.iterations,
        filled: false,
        dependent,
        refit: pool_status(ws, &r),
        verified: st.next.verified,
    };
    next
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
