//! The recommended setting's loop (`recommend.rs` computes its γ and
//! merges exact duplicates first): centroid pursuit in which a candidate
//! represented by a candidate whose Gram row is known (θ of
//! [`RECOMMENDED_THETA`](crate::RECOMMENDED_THETA), the module docs of
//! `recommend.rs`) is marked, and a marked candidate is picked only when
//! no unmarked one is left.

use crate::input::Spend;
use crate::kernels;
use crate::pursuit::scorer::{gram_row_into, Passes};
use crate::pursuit::step::centroid_step;
use crate::selection::CandidateState;
use crate::workspace::{RepresentedScratch, Workspace, UNMARKED};

/// r_j: the mean pivot² 1 − G_jk² of the pool's other distinct usable
/// candidates k against j, from j's Gram row in stored row 0 (1 when j is
/// the only one).
fn reference(ws: &Workspace<'_>, j: usize) -> f64 {
    let p = ws.pool;
    let (mut sum, mut n) = (0.0f64, 0usize);
    for (k, &g) in ws.gram[..p].iter().enumerate() {
        let s = ws.states.get(k);
        if k != j && s != CandidateState::Excluded && s != CandidateState::Skipped {
            let g = (g as f64).clamp(-1.0, 1.0);
            sum += 1.0 - g * g;
            n += 1;
        }
    }
    if n == 0 {
        1.0
    } else {
        sum / n as f64
    }
}

/// Whether a candidate with Gram entry `g` against a member with reference
/// `r` is represented by it: g > 0 and 1 − g² ≤ θ r.
fn close(g: f32, r: f64, theta: f64) -> bool {
    let g = (g as f64).min(1.0);
    g > 0.0 && 1.0 - g * g <= theta * r
}

/// Whether candidate `i` is marked represented (`marks[i]` holds the
/// reference of the candidate that marked it; [`UNMARKED`] when not).
fn marked(marks: &[f64], i: usize) -> bool {
    marks[i] >= 0.0
}

/// Marks every available unmarked candidate represented by candidate `j`
/// (its Gram row in stored row 0, reference `r`), with reference `r`.
fn mark_represented(ws: &Workspace<'_>, marks: &mut [f64], j: usize, r: f64, theta: f64) {
    let p = ws.pool;
    for k in 0..p {
        if k != j && ws.states.is_available(k) && !marked(marks, k) && close(ws.gram[k], r, theta) {
            marks[k] = r;
        }
    }
}

/// Whether candidate `i` (its Gram row in stored row 0) is represented by
/// an available candidate already marked (with that one's reference).
fn near_represented(ws: &Workspace<'_>, marks: &[f64], i: usize, theta: f64) -> bool {
    let p = ws.pool;
    (0..p).any(|k| {
        k != i
            && ws.states.is_available(k)
            && marked(marks, k)
            && close(ws.gram[k], marks[k], theta)
    })
}

/// Lowest-index argmax of the scores `u` over the available candidates
/// that are marked (`true`) or unmarked (`false`).
fn argmax_in(ws: &Workspace<'_>, marks: &[f64], want_marked: bool) -> Option<usize> {
    let mut best: Option<(usize, f32)> = None;
    for (i, &v) in ws.u[..ws.pool].iter().enumerate() {
        if ws.states.is_available(i)
            && marked(marks, i) == want_marked
            && best.is_none_or(|(_, bv)| v > bv)
        {
            best = Some((i, v));
        }
    }
    best.map(|(i, _)| i)
}

/// The next candidate: the best unmarked one, else (`true`) the best
/// marked one.
fn choose(ws: &Workspace<'_>, marks: &[f64]) -> Option<(usize, bool)> {
    argmax_in(ws, marks, false)
        .map(|i| (i, false))
        .or_else(|| argmax_in(ws, marks, true).map(|i| (i, true)))
}

/// The recommended setting's loop: centroid pursuit (κ = ∞, α = 1/|S|,
/// U_i = ρ_i − (γ/|S|) Σ_{j∈S} G_ij, the same f32 arithmetic as
/// [`pursuit`](crate::pursuit)'s centroid loop) in which every candidate
/// whose Gram row is computed (each pick, and each candidate that reaches
/// the top of the scores) marks the candidates it represents, and a marked
/// candidate is picked only when no unmarked one is left.
pub(crate) fn represented_loop<'s>(
    pass: &mut Passes<'_, '_>,
    k_eff: usize,
    gamma: f64,
    theta: f64,
    spend: &mut Spend<'_>,
    ws: &mut Workspace<'s>,
) -> usize {
    let p = ws.pool;
    let scratch: RepresentedScratch<'s> = ws.scorer.lend();
    let marks = &mut *scratch.pivot_marks;
    let mut l_prev = 1.0f64;
    // Σ_{j,k∈S} G_jk, Σ_{j∈S} b_j, Σ_{j∈S} ρ_j
    let (mut total, mut sum_b, mut sum_rho) = (0.0f64, 0.0f64, 0.0f64);
    ws.gram_sum[..p].fill(0.0);
    marks[..p].fill(UNMARKED);
    ws.rows_read = p as u64;
    ws.u[..p].copy_from_slice(&ws.rho[..p]);
    let mut t = 0;
    while t < k_eff {
        let Some((i, dependent)) = choose(ws, marks) else {
            ws.stop = spend.stop_reason(ws);
            break;
        };
        gram_row_into(pass, i, 0, ws);
        ws.rows_read += p as u64;
        let r = reference(ws, i);
        if !dependent && near_represented(ws, marks, i, theta) {
            marks[i] = r;
            mark_represented(ws, marks, i, r, theta);
            continue;
        }
        let score = ws.u[i] as f64;
        let acc_i = ws.gram_sum[i];
        ws.states.set(i, CandidateState::Selected);
        ws.picks[t] = i;
        // The candidates that no longer fit the cost budget leave the pool.
        spend.after_pick(ws, i);
        mark_represented(ws, marks, i, r, theta);
        let g_ii = ws.gram[i];
        total += 2.0 * acc_i as f64 + g_ii as f64;
        kernels::add_assign(&mut ws.gram_sum[..p], &ws.gram[..p]);
        sum_b += ws.b[i] as f64;
        sum_rho += ws.rho[i] as f64;
        let c = (gamma / (t + 1) as f64) as f32;
        ws.u[..p].copy_from_slice(&ws.rho[..p]);
        kernels::sub_scaled(&mut ws.u[..p], c, &ws.gram_sum[..p]);
        for &j in &ws.picks[..=t] {
            ws.u[j] = f32::NEG_INFINITY;
        }
        let step = centroid_step(
            i,
            score,
            t + 1,
            gamma,
            (total, sum_b, sum_rho),
            choose(ws, marks).map(|(m, _)| ws.u[m] as f64),
            l_prev,
            1e-12,
            dependent,
            0,
        );
        ws.steps[t] = step;
        t += 1;
        l_prev = step.residual_sq;
    }
    for i in 0..p {
        if ws.states.is_available(i) && marked(marks, i) {
            ws.states.set(i, CandidateState::Skipped);
            ws.skipped += 1;
        }
    }
    ws.scorer.give_back(scratch);
    let w = if t > 0 { 1.0 / t as f64 } else { 0.0 };
    ws.solver.alpha[..t].fill(w);
    t
}
