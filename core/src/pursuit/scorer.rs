//! The protocol between a pursuit loop and the source of its Gram entries
//! and picks ([`Scorer`]), the score forms a loop asks for
//! ([`ScoreForm`]) and their f32 kernels ([`refresh_scores`],
//! [`centroid_scores`], the argmax), the candidate matrix's passes
//! ([`Passes`], [`gram_row_into`], [`cross_gram`]). This is the surface
//! another scorer builds on: the certified int8 pursuit (`certified.rs`)
//! implements [`Scorer`] and runs the loops with it.

use crate::kernels::sealed::{Mat, Rows};
use crate::kernels::{self, Executor};
use crate::selection::States;
use crate::workspace::Workspace;

pub(crate) use crate::pursuit::norm_bound::f32_entry_error;

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
    /// G_SS was recomputed (exact entries, [`switch_to_exact`]): a scorer
    /// that keeps values derived from it recomputes them.
    fn gram_changed(&mut self, _ws: &mut Workspace<'_>) {}
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

/// The candidate matrix of one call, the executor its passes run on and
/// the call's one instruction set ([`Executor::isa`], taken once here):
/// every dot product of the call, a pass or a single entry, runs on it.
pub(crate) struct Passes<'a, 'x> {
    pub(crate) rows: kernels::sealed::Rows<'a>,
    pub(crate) d: usize,
    pub(crate) exec: &'x mut dyn Executor,
    pub(crate) isa: kernels::Isa,
}

impl<'a, 'x> Passes<'a, 'x> {
    /// The passes of a call over `rows` (P × d) run by `exec`, on its
    /// instruction set.
    pub(crate) fn new(
        rows: kernels::sealed::Rows<'a>,
        d: usize,
        exec: &'x mut dyn Executor,
    ) -> Self {
        let isa = exec.isa();
        Passes { rows, d, exec, isa }
    }
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
    kernels::gram_row(
        pass.exec,
        pass.isa,
        pass.rows,
        pass.d,
        i,
        &ws.scale[..p],
        row,
    );
}

/// G_ji = (m_j · m_i) s_j s_i, bit for bit entry j of candidate i's Gram
/// row ([`gram_row_into`]: the same row kernel, the same scaling), in O(d)
/// instead of a pass.
pub(crate) fn cross_gram(pass: &Passes<'_, '_>, ws: &Workspace<'_>, j: usize, i: usize) -> f32 {
    let (rows, d) = (pass.rows, pass.d);
    let mut out = [0.0f32];
    rows.rows(j, j + 1, d)
        .dots_with_row(pass.isa, rows, i, d, &mut out);
    out[0] * (ws.scale[j] * ws.scale[i])
}

/// [`Scorer::admit_centroid`] by a whole Gram row (one pass): the pick's
/// running Gram sum before it (acc_i) and its diagonal G_ii, after adding
/// its row to every candidate's running sum (`gram_sum`).
pub(crate) fn admit_centroid_dense(
    pass: &mut Passes<'_, '_>,
    ws: &mut Workspace<'_>,
    i: usize,
) -> (f32, f32) {
    let p = ws.pool;
    let acc_i = ws.gram_sum[i];
    gram_row_into(pass, i, 0, ws);
    kernels::add_assign(&mut ws.gram_sum[..p], &ws.gram[..p]);
    (acc_i, ws.gram[i])
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

/// [`Scorer::choose`], its rows read added to the call's count
/// (`SelectionView::rows_read`).
pub(crate) fn choose<S: Scorer>(scorer: &mut S, ws: &mut Workspace<'_>, form: ScoreForm) -> Choice {
    let c = scorer.choose(ws, form);
    ws.rows_read += u64::from(c.rows_read);
    c
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

/// Rows of a storage type as f32, when they are.
pub(crate) fn f32_rows(rows: Rows<'_>) -> Option<Mat<'_, f32>> {
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
