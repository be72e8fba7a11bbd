//! Centroid pursuit (κ = ∞): its loop ([`centroid_loop`], generic over the
//! [`Scorer`]) and its screened source ([`LazyCentroidScorer`],
//! [`Screening::On`](crate::Screening::On) only).

use crate::input::Spend;
use crate::options::PursuitOptions;
use crate::pursuit::norm_bound::{f32_entry_error, norm_bound, SAFE, U32};
use crate::pursuit::scorer::{
    argmax_available, argmax_scores, choose, cross_gram, gram_row_into, Choice, Passes, ScoreForm,
    Scorer,
};
use crate::pursuit::step::{centroid_step, mask_excluded, AdaptiveStop};
use crate::selection::{CandidateState, StopReason};
use crate::workspace::{LazyCentroidScratch, Workspace};

/// Share of the available candidates above which the screened centroid
/// pursuit ([`Screening::On`](crate::Screening::On)) streams the missing Gram rows whole
/// instead of evaluating candidates one by one (a gathered row costs
/// more than a streamed one).
pub const DENSE_SHARE: f64 = 0.5;

/// Centroid pursuit (κ = ∞ in the relevance-scaled family): α = 1/|S|,
/// U_i = ρ_i − (γ/|S|) Σ_{j∈S} G_ij, one Gram row per pick, no QP. Per
/// pick: admit (the pass, [`Scorer::admit_centroid`]), the closed-form
/// residual and mean score, choose the next pick ([`Scorer::choose`]),
/// record and stop. Generic over the entries' source like [`qp_loop`].
pub(crate) fn centroid_loop<S: Scorer>(
    scorer: &mut S,
    k_eff: usize,
    options: &PursuitOptions,
    spend: &mut Spend<'_>,
    ws: &mut Workspace<'_>,
) -> usize {
    let p = ws.pool;
    let gamma = options.gamma;
    let mut stop = AdaptiveStop::new(options);
    let mut l_prev = 1.0f64;
    // Σ_{j,k∈S} G_jk, Σ_{j∈S} b_j, Σ_{j∈S} ρ_j
    let (mut total, mut sum_b, mut sum_rho) = (0.0f64, 0.0f64, 0.0f64);
    ws.gram_sum[..p].fill(0.0);
    ws.rows_read = 0;
    mask_excluded(ws);
    ws.u[..p].copy_from_slice(&ws.rho[..p]);
    let mut next = choose(scorer, ws, ScoreForm::Relevance);
    let mut t = 0;
    while t < k_eff {
        let Some(i) = next.pick else {
            ws.stop = spend.stop_reason(ws);
            break;
        };
        let score = ws.u[i] as f64;
        ws.states.set(i, CandidateState::Selected);
        ws.picks[t] = i;
        // The candidates that no longer fit the cost budget leave the pool.
        spend.after_pick(ws, i);
        let (acc_i, g_ii) = scorer.admit_centroid(ws, i, t);
        total += 2.0 * acc_i as f64 + g_ii as f64;
        sum_b += ws.b[i] as f64;
        sum_rho += ws.rho[i] as f64;
        let c = (gamma / (t + 1) as f64) as f32;
        let form = ScoreForm::Centroid { c, n: t + 1, total };
        let chosen = choose(scorer, ws, form);
        let step = centroid_step(
            i,
            score,
            t + 1,
            gamma,
            (total, sum_b, sum_rho),
            chosen.pick.map(|m| ws.u[m] as f64),
            l_prev,
            stop.eps,
            false,
            next.verified,
        );
        ws.steps[t] = step;
        next = chosen;
        t += 1;
        l_prev = step.residual_sq;
        if stop.small_step(step.improvement) && t < k_eff {
            ws.stop = StopReason::Adaptive;
            break;
        }
    }
    let w = if t > 0 { 1.0 / t as f64 } else { 0.0 };
    ws.solver.alpha[..t].fill(w);
    t
}

/// The screened centroid pursuit ([`Screening::On`] with κ = ∞): per
/// candidate the f32 running sum of its Gram entries with a prefix of the
/// picks (`gram_sum`, `LazyCentroidScratch::summed`), the rest bounded by Cauchy–Schwarz; a
/// candidate's missing entries are computed (the pass's kernel, so the
/// same bits) only when its bound can still win, best bound first, and
/// whole rows are streamed when more than [`DENSE_SHARE`] could. Measured
/// slower than the unscreened centroid pursuit (BENCHMARKS.md), so
/// [`Screening::Auto`] does not use it.
///
/// # The bound
/// U_j = fl(ρ_j − fl(c·acc_j)) with c = fl32(γ/n) and acc_j the f32 running
/// sum of G̃_{a,j} over the n picks in pick order. With acc_j kept for the
/// first k_j picks (`Workspace::gram_sum`), the rest is at most
/// n_j Σ_{a≥k_j} n_a (1 + η) in magnitude, the two f32 summations err by at
/// most γ_n·A each (A = 1.01 n_j Σ_a n_a, γ_n = n·1.01u) and the final
/// multiply-subtract by 2.02u(|ρ_j| + c A). Candidates whose upper bound
/// reaches L = max_j (lower bound of U_j) are evaluated in descending order
/// of their bound until the next bound is below the best exact score.
pub(crate) struct LazyCentroidScorer<'p, 'a, 'x, 's> {
    pub(crate) pass: &'p mut Passes<'a, 'x>,
    /// The bounds and summed-prefix counts, lent by the workspace for the
    /// call ([`finish`](Self::finish) gives them back).
    sc: LazyCentroidScratch<'s>,
    /// η: relative error bound of an f32 entry.
    pub(crate) eta: f64,
    /// N = [`norm_bound`]`(d)`: every ‖m̂_j‖ ≤ N.
    pub(crate) n_max: f64,
    /// Rows of the pool read since the last choose (the query pass before
    /// the first one).
    pub(crate) rows_read: u32,
}

impl<'p, 'a, 'x, 's> LazyCentroidScorer<'p, 'a, 'x, 's> {
    /// A scorer for one call.
    pub(crate) fn new(pass: &'p mut Passes<'a, 'x>, ws: &mut Workspace<'s>) -> Self {
        let p = ws.pool;
        let sc: LazyCentroidScratch<'s> = ws.scorer.lend();
        sc.summed[..p].fill(0);
        let eta = f32_entry_error(pass.d);
        let n_max = norm_bound(pass.d);
        LazyCentroidScorer {
            pass,
            sc,
            eta,
            n_max,
            rows_read: p as u32,
        }
    }

    /// Gives the lent scratch back to `ws` (after the loop).
    pub(crate) fn finish(self, ws: &mut Workspace<'s>) {
        ws.scorer.give_back(self.sc);
    }

    /// The f32 entries G_{picks[pos], j} for pos in `from..to` into
    /// `out[..to − from]`: the pass's kernel and scaling, bit for bit.
    fn entries(&self, ws: &Workspace<'_>, j: usize, from: usize, to: usize, out: &mut [f32]) {
        let d = self.pass.d;
        let picks = &ws.picks[from..to];
        // G_{a,j} = G_{j,a} bit for bit (the products commute).
        self.pass
            .rows
            .dots_indexed_row(self.pass.isa, d, j, picks, out);
        for (o, &a) in out.iter_mut().zip(picks) {
            *o *= ws.scale[a] * ws.scale[j];
        }
    }

    /// Feature `check-bounds`: panics unless candidate j's exact score at
    /// pick n (coefficient c) lies in [`low`, `up`], its bounds.
    #[cfg(feature = "check-bounds")]
    fn check_centroid_bound(
        &self,
        ws: &Workspace<'_>,
        j: usize,
        (c, n): (f32, usize),
        low: f64,
        up: f64,
    ) {
        let exact = self.exact_centroid_score(ws, j, c, n) as f64;
        assert!(
            low <= exact && exact <= up,
            "check-bounds: centroid candidate {j} at pick {n}: U = {exact} outside [{low}, {up}]"
        );
    }

    /// Feature `check-bounds`: U_j = fl(ρ_j − fl(c·acc_j)) at pick n exactly
    /// as the unscreened centroid loop computes it (the running sum over
    /// all n picks in pick order), without changing any state.
    #[cfg(feature = "check-bounds")]
    fn exact_centroid_score(&self, ws: &Workspace<'_>, j: usize, c: f32, n: usize) -> f32 {
        let mut from = self.sc.summed[j].min(n);
        let mut acc = ws.gram_sum[j];
        let mut buf = [0.0f32; 8];
        while from < n {
            let m = (n - from).min(8);
            self.entries(ws, j, from, from + m, &mut buf[..m]);
            for &g in &buf[..m] {
                acc += g;
            }
            from += m;
        }
        ws.rho[j] - c * acc
    }

    /// The centroid loop's running sum of candidate `j` extended to the
    /// picks 0..`to`, in pick order (`gram_sum`, `LazyCentroidScratch::summed`).
    fn extend_sum(&mut self, ws: &mut Workspace<'_>, j: usize, to: usize) {
        let mut from = self.sc.summed[j];
        let mut buf = [0.0f32; 8];
        let mut acc = ws.gram_sum[j];
        while from < to {
            let n = (to - from).min(8);
            self.entries(ws, j, from, from + n, &mut buf[..n]);
            self.rows_read += n as u32;
            for &g in &buf[..n] {
                acc += g;
            }
            from += n;
        }
        ws.gram_sum[j] = acc;
        self.sc.summed[j] = to;
    }

    /// The missing entries of the candidates `batch` with the picks
    /// 0..`n`, by pick position (each pick's entries with the batch in one
    /// call of the pass's kernel, up to eight rows per load of the pick's
    /// row: the same bits), added to the running sums in pick order.
    fn fill_batch(&mut self, ws: &mut Workspace<'_>, batch: &[usize], n: usize) {
        let d = self.pass.d;
        let lo = batch.iter().map(|&j| self.sc.summed[j]).min().unwrap_or(n);
        let mut idx = [0usize; 8];
        let mut out = [0.0f32; 8];
        for pos in lo..n {
            let mut cnt = 0;
            for &j in batch {
                if self.sc.summed[j] == pos {
                    idx[cnt] = j;
                    cnt += 1;
                }
            }
            if cnt == 0 {
                continue;
            }
            let a = ws.picks[pos];
            self.rows_read += cnt as u32;
            self.pass
                .rows
                .dots_indexed_row(self.pass.isa, d, a, &idx[..cnt], &mut out[..cnt]);
            for r in 0..cnt {
                out[r] *= ws.scale[idx[r]] * ws.scale[a];
            }
            for r in 0..cnt {
                let j = idx[r];
                ws.gram_sum[j] += out[r];
                self.sc.summed[j] = pos + 1;
            }
        }
    }

    /// The screened choose of the centroid loop (type docs of `LazyCentroidScorer`).
    fn choose_centroid(&mut self, ws: &mut Workspace<'_>, c: f32, n: usize) -> Choice {
        let p = ws.pool;
        let eta = self.eta;
        let cf = c as f64;
        let n2 = self.n_max * self.n_max;
        let a_sum = 1.01 * n2 * n as f64;
        let gamma_n = 2.0 * n as f64 * 1.01 * U32;
        let mut lower = f64::NEG_INFINITY;
        let mut available = 0usize;
        for j in 0..p {
            if ws.states.get(j) != CandidateState::Available {
                self.sc.upper[j] = f64::NEG_INFINITY;
                continue;
            }
            available += 1;
            let rho = ws.rho[j] as f64;
            let center = rho - cf * ws.gram_sum[j] as f64;
            let missing = (n - self.sc.summed[j].min(n)) as f64;
            let r = (cf * n2 * missing * (1.0 + eta)
                + cf * gamma_n * a_sum
                + 2.02 * U32 * (rho.abs() + cf * a_sum))
                * SAFE
                + 1e-15;
            self.sc.upper[j] = center + r;
            lower = lower.max(center - r);
            #[cfg(feature = "check-bounds")]
            self.check_centroid_bound(ws, j, (c, n), center - r, center + r);
        }
        if available == 0 {
            return Choice {
                pick: None,
                verified: 0,
                rows_read: core::mem::take(&mut self.rows_read),
            };
        }
        let contenders = self.sc.upper[..p].iter().filter(|&&u| u >= lower).count();
        let dense = contenders as f64 > DENSE_SHARE * available as f64;
        let mut verified = 0u32;
        let mut best: Option<(usize, f32)> = None;
        if dense {
            // Every candidate's sum extended by whole rows (the unscreened
            // pass and running sum, the same bits).
            let from = (0..p)
                .filter(|&j| ws.states.get(j) == CandidateState::Available)
                .map(|j| self.sc.summed[j])
                .min()
                .unwrap_or(n);
            for pos in from..n {
                let pick = ws.picks[pos];
                gram_row_into(self.pass, pick, 0, ws);
                self.rows_read += p as u32;
                for j in 0..p {
                    if self.sc.summed[j] == pos && ws.states.get(j) == CandidateState::Available {
                        ws.gram_sum[j] += ws.gram[j];
                        self.sc.summed[j] = pos + 1;
                    }
                }
            }
            for j in 0..p {
                if ws.states.get(j) == CandidateState::Available {
                    let v = ws.rho[j] - c * ws.gram_sum[j];
                    ws.u[j] = v;
                    if best.is_none_or(|(bi, b)| v > b || (v == b && j < bi)) {
                        best = Some((j, v));
                    }
                }
            }
            return Choice {
                pick: best.map(|(j, _)| j),
                verified: 0,
                rows_read: core::mem::take(&mut self.rows_read),
            };
        }
        let mut batch = [0usize; 8];
        while let Some(m) = next_batch(&self.sc.upper[..p], lower, best, &mut batch) {
            for &j in &batch[..m] {
                self.sc.upper[j] = f64::NEG_INFINITY;
            }
            self.fill_batch(ws, &batch[..m], n);
            verified += m as u32;
            for &j in &batch[..m] {
                let v = ws.rho[j] - c * ws.gram_sum[j];
                ws.u[j] = v;
                if best.is_none_or(|(bi, b)| v > b || (v == b && j < bi)) {
                    best = Some((j, v));
                }
            }
        }
        Choice {
            pick: best.map(|(j, _)| j),
            verified,
            rows_read: core::mem::take(&mut self.rows_read),
        }
    }
}

/// The up to eight candidates of largest upper bound `upper[j]` ≥ `lower`
/// that can still reach `best` (bound ≥ its score), into `batch` in
/// descending order of their bounds; `None` when there is none (every other
/// candidate's bound is below the best score: the argmax is found).
fn next_batch(
    upper: &[f64],
    lower: f64,
    best: Option<(usize, f32)>,
    batch: &mut [usize; 8],
) -> Option<usize> {
    let floor = best.map_or(lower, |(_, b)| lower.max(b as f64));
    let mut top = [(f64::NEG_INFINITY, 0usize); 8];
    let mut m = 0;
    for (j, &u) in upper.iter().enumerate() {
        if u < floor || (m == 8 && u <= top[7].0) {
            continue;
        }
        // Insert keeping `top[..m]` descending (ties: lower index first).
        let mut at = m.min(7);
        while at > 0 && top[at - 1].0 < u {
            top[at] = top[at - 1];
            at -= 1;
        }
        top[at] = (u, j);
        m = (m + 1).min(8);
    }
    for (b, &(_, j)) in batch.iter_mut().zip(&top[..m]) {
        *b = j;
    }
    (m > 0).then_some(m)
}

impl Scorer for LazyCentroidScorer<'_, '_, '_, '_> {
    // The QP loop never runs on this scorer (`pursuit_using`); its entry
    // reads are the f32 entries all the same.
    fn admit(&mut self, _ws: &mut Workspace<'_>, _i: usize, _t: usize, _keep_row: bool) {}
    fn entry(&mut self, ws: &mut Workspace<'_>, pos: usize, i: usize) -> f32 {
        cross_gram(self.pass, ws, ws.picks[pos], i)
    }
    fn diag(&mut self, ws: &mut Workspace<'_>, i: usize) -> f32 {
        cross_gram(self.pass, ws, i, i)
    }
    fn admit_centroid(&mut self, ws: &mut Workspace<'_>, i: usize, n: usize) -> (f32, f32) {
        self.extend_sum(ws, i, n);
        let acc_i = ws.gram_sum[i];
        let mut out = [0.0f32];
        self.pass
            .rows
            .dots_indexed_row(self.pass.isa, self.pass.d, i, &[i], &mut out);
        out[0] *= ws.scale[i] * ws.scale[i];
        (acc_i, out[0])
    }
    fn choose(&mut self, ws: &mut Workspace<'_>, form: ScoreForm) -> Choice {
        match form {
            ScoreForm::Relevance => {
                let p = ws.pool;
                Choice {
                    pick: argmax_available(&ws.rho[..p], &ws.states),
                    verified: 0,
                    rows_read: core::mem::take(&mut self.rows_read),
                }
            }
            ScoreForm::Refresh { picks } => {
                // Not reached (centroid loop only): every entry by its
                // own dot product, then the refresh's arithmetic.
                let p = ws.pool;
                let stride = ws.max_pool;
                for j in 0..p {
                    let mut v = ws.rho[j];
                    for (fa, &a) in ws.solver.free().iter().enumerate() {
                        let g = cross_gram(self.pass, ws, ws.picks[a], j);
                        let _ = stride;
                        v -= ws.coef[fa] * g;
                    }
                    ws.u[j] = v;
                }
                for &j in &ws.picks[..picks] {
                    ws.u[j] = f32::NEG_INFINITY;
                }
                Choice {
                    pick: argmax_scores(&ws.u[..p], &ws.states),
                    verified: 0,
                    rows_read: core::mem::take(&mut self.rows_read),
                }
            }
            ScoreForm::Centroid { c, n, .. } => self.choose_centroid(ws, c, n),
        }
    }
}
