//! Exact screening: the pursuit's picks without reading every row.
//!
//! The unscreened pursuit streams the whole P × d pool once per pick (the
//! new pick's Gram row), though only the winner's score matters: every
//! other candidate needs only a proof that it cannot win. The screened
//! pursuit ([`ScreenedScorer`]) reads a candidate's row only when a
//! rigorous upper bound of its score, which reads nothing of the row, can
//! still win; a read is one dot product with the residual direction w
//! (materialized once per pick, O(|F|·d)), and only the few candidates
//! whose read value comes within the f32 error margins of the best get
//! their score computed exactly as the unscreened pursuit computes it
//! (their f32 Gram entries with the free set by the pass's kernel, then
//! the refresh's f32 operations in its order). So the picks, weights and
//! every [`Step`](crate::Step) field but the counters are those of the
//! unscreened pursuit, bit for bit, by proof.
//!
//! # Notation
//! m̂_j = s_j m_j (the rows as the passes scale them), n_j = ‖m̂_j‖ ≤ N
//! ([`norm_bound`]), q̂ the scaled query (q2 = ‖q̂‖², f64 from the query), b_j the
//! f32 query similarities (|b_j − m̂_j·q̂| ≤ η n_j ‖q̂‖), η
//! ([`f32_entry_error`]) the relative error bound of an f32 entry or dot,
//! u = 2⁻²⁴. After n picks the refresh coefficients are c_a = fl32(γα_a)
//! over the free set F (S = Σ c_a, C = N S) and the unscreened score is the
//! f32 refresh U_j(n) = fl(ρ_j − Σ_{a∈F} c_a G̃_{a,j}). With the exact value
//! T_j(n) = ρ_j − m̂_j·w_n, w_n = Σ_{a∈F} c_a m̂_a,
//!
//! ```text
//! |U_j(n) − T_j(n)| ≤ E_j(n) = η N C + 1.01(|F| + 1)u (|ρ_j| + 1.01 N C)
//! ```
//!
//! (each entry within η n_a n_j; the refresh's |F| rounded products and
//! subtractions).
//!
//! # Anchors and the drift bound
//! Each candidate keeps an anchor: a step n₀ (`anchor_step[j]` of `ScreenedScratch`) and an upper
//! bound A_j ≥ T_j(n₀) (`anchors[j]`). Step 0 is exact: w_0 = 0, A_j = ρ_j;
//! after a dense step (below) A_j = U_j(n) + E_j(n). A read at step n
//! computes v_j = ρ_j + fl(fl(m_j · (−w̃)) s_j) with the kernel of the
//! passes, where −w̃ = −Σ_a fl32(c_a s_a) m_a is w_n accumulated in f32,
//! each product rounded and subtracted in turn (the refresh's kernel;
//! ‖w̃ − w_n‖ ≤ ε_w = 1.01(|F| + 3)u C), so
//! |v_j − T_j(n)| ≤ e = N (η (C + ε_w) + ε_w), and A_j = v_j + e. Between
//! steps, T_j(n) = T_j(n₀) − m̂_j·Δw with Δw = w_n − w_n₀ = Σ_a Δc_a m̂_a
//! (positions of both steps), and the component along q̂ is known:
//!
//! ```text
//! −m̂_j·Δw = −(m̂_j·q̂)(q̂·Δw)/q2 − m̂_j^⊥·Δw^⊥
//!         ≤ (−b_j B + |b_j| e_B + δ (|B| + e_B))/q2 + p_j D^⊥
//! ```
//!
//! with B = Σ_a Δc_a b_a, e_B = η N √q2 Σ|Δc_a|, δ = η N √q2 (the errors
//! of the f32 b's), p_j = √(N² − (|b_j| − δ)₊²/q2) ≥ ‖m̂_j^⊥‖ (`perp[j]`,
//! once per call) and D^⊥² = ‖Δw‖² − (|B| − e_B)₊²/q2 ≥ ‖Δw^⊥‖², where
//! ‖Δw‖² ≤ Δcᵀ G_SS Δc + η (N Σ|Δc_a|)² (G_SS's entries are within η n_a
//! n_b of the exact ones, f32 or exact mode), evaluated as ‖w_n‖² −
//! 2 (G_SS c_n)·c_n₀ + ‖w_n₀‖² from the stored coefficients of every step
//! (`ScreenState::anchor_coef`), all with the same G_SS (`Scorer::
//! gram_changed` recomputes the norms when it turns exact). So
//!
//! ```text
//! U_j(n) ≤ ub_j = A_j + (−b_j B + |b_j| e_B + δ(|B| + e_B))/q2 + p_j D^⊥ + E_j(n)
//! ```
//!
//! Every positive term is evaluated in f64 and scaled by 1 + 10⁻⁹, plus
//! 10⁻¹² absolute: that covers the f64 evaluation (the scores are O(1 +
//! |ρ|), the relative rounding of f64 ~10⁻¹⁶ per operation).
//!
//! # The argmax
//! One sweep computes every ub_j (the tables of an anchor step when a
//! candidate first needs them) and keeps it rounded up to f32 in `u`.
//! Read the eight candidates of largest ub; L = max over the candidates
//! anchored at n of v_j − e − E_j(n) (a lower bound of their U_j). Then
//! read every candidate with ub_j ≥ L (L rising as reads come in), eight
//! rows per call of the kernel. Every unread candidate now has
//! U_j ≤ ub_j < L. The finalists, anchored at n with v_j + e + E_j(n) ≥ L
//! (a window of ~10⁻⁵: one or two), get U_j computed exactly, best bound
//! first, until the next bound is below the best exact score (ties: lowest
//! index). The candidate reaching L is a finalist, so the best exact score
//! is ≥ L: the pick is the unscreened argmax, with its score. The winner's
//! free entries are kept for its admission and certificate (its G_SS row
//! needs its entries with every earlier pick: t dot products per pick,
//! which the unscreened pass gives for free).
//!
//! # When to screen
//! A read costs one dot product like an entry of a Gram row pass, so a
//! pick whose bounds exclude nothing costs the unscreened pass plus −w̃
//! (|F| rows), the new pick's Gram entries with the earlier picks (t dot
//! products) and the O(P) sweeps. [`Screening::On`] screens from the first
//! pick. [`Screening::Auto`] screens only rows of d ≥ [`AUTO_MIN_DIM`]
//! (below, the sweeps cost more than the reads they save: measured) and
//! starts dense (whole Gram rows and the refresh, as the unscreened
//! pursuit); at each step it counts the candidates whose previous score
//! U_j(n − 1) lies within 2N‖Δw‖ (plus margins) of the best — the reads
//! screening would have needed — adds |F| + n (−w̃ and the pick's
//! entries), and switches to screening, for the rest of the call, at the
//! first step at which that is at most [`AUTO_SHARE`] of the available
//! candidates (a prediction: the picks do not depend on it). The rule
//! costs O(n²) per step (G_SS c_n), so it is evaluated only while
//! n² · `TRACK_RATIO` ≤ P · d; past that the call stays dense. Either way −w̃ lives in the Gram rows the dense phase
//! did not fill; a workspace without room for d more values stays dense
//! (the same picks). Centroid pursuit: see [`LazyCentroidScorer`].

mod bounds;
mod verify;

use crate::kernels;
use crate::kernels::sealed::Mat;
use crate::pursuit::norm_bound::{f32_entry_error, norm_bound, SAFE, TINY, U32};
use crate::pursuit::scorer::{
    admit_centroid_dense, argmax_available, argmax_scores, centroid_scores, cross_gram,
    gram_row_into, refresh_scores, Choice, Passes, ScoreForm, Scorer,
};
use crate::workspace::{ScreenedScratch, Workspace};
use bounds::{insert_top, round_up, top_slot_used, Reads, NOT_COMPUTED, NO_CANDIDATE};

/// Whether a pursuit screens (exact screening: the module docs of
/// `core/src/pursuit/screened/mod.rs` derive the bounds): the picks
/// are the same either way, bit for bit; only the rows read (and so the
/// time) differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Screening {
    /// The paper's pursuit and its family (κ < ∞) on rows of dimension
    /// d ≥ [`AUTO_MIN_DIM`]: whole Gram rows until a screened step would
    /// read at most [`AUTO_SHARE`] of the available candidates (its
    /// bounds excluding the rest), then screening; on pools where they never do (isotropic random
    /// pools) the unscreened pursuit plus O(P) per pick. Below that
    /// dimension, and for centroid pursuit, no screening (measured slower,
    /// BENCHMARKS.md).
    #[default]
    Auto,
    /// Always screen: the paper's pursuit and its family from the first
    /// pick on; centroid pursuit by its lazy argmax (each candidate's
    /// running Gram sum kept for a prefix of the picks, the rest bounded;
    /// `core/src/pursuit/centroid.rs`).
    On,
    /// Never screen: every pick streams the pool (one Gram row per pick).
    Off,
}

impl Screening {
    /// Whether a pursuit on rows of dimension d, centroid pursuit
    /// (`centroid`) or not, runs a screened scorer: `On` always, `Off`
    /// never, `Auto` for the paper's pursuit and its family with
    /// d ≥ [`AUTO_MIN_DIM`] (starting dense, screening from the step the
    /// rule of [`AUTO_SHARE`] says) and not for centroid pursuit.
    /// Measured (BENCHMARKS.md, "Exact screening"; P = 200, the 200 store
    /// memories nearest each HotpotQA query): the screened pursuit reads
    /// 0.56 (K = 20) and 0.42 (K = 50) of the unscreened rows; a read costs
    /// a dot product of length d and the bounds O(P) per pick, so at
    /// d = 384 it is slower (1.1–2.2×), at d = 768 about even, at
    /// d = 1536 faster (0.5–0.9×); on isotropic random pools the bounds
    /// exclude almost nothing (`On` 1.2–1.3×, `Auto` 1.00–1.02×).
    pub fn screens(self, d: usize, centroid: bool) -> bool {
        match self {
            Screening::On => true,
            Screening::Auto => !centroid && d >= AUTO_MIN_DIM,
            Screening::Off => false,
        }
    }
}

/// [`Screening::Auto`] screens rows of at least this dimension (the
/// measured crossover lies between 768 and 1536, BENCHMARKS.md).
pub const AUTO_MIN_DIM: usize = 1024;

/// [`Screening::Auto`]: the dense phase ends at the first step at which
/// the rows a screened step would read — the candidates that the previous
/// step's anchors cannot exclude, plus one row per free pick (−w̃) and
/// the new pick's entries with the earlier picks — are at most this share
/// of the available candidates. Measured on the Zen 4 of BENCHMARKS.md
/// ("Exact screening"): a screened step that reads 0.8 of the pool is
/// ~1.2× a dense one (gathered reads and the bounds' sweeps), so the rule
/// of 0.9 (counting the candidates alone) switched late on isotropic
/// random pools at K = 50 and was 1.04× the unscreened time there; 0.6
/// never switches on them and keeps the store pools' gains.
pub const AUTO_SHARE: f64 = 0.6;

/// [`Screening::Auto`] evaluates its switch rule at step n only while
/// n² · TRACK_RATIO ≤ P · d (measured: the rule's O(n²) per step cost 2–4 %
/// of the unscreened time at P = 200, K = 50, d = 1536 when evaluated at
/// every step; up to n = 20 there, under 1 %).
const TRACK_RATIO: usize = 768;

/// The screened source of the QP loop's entries and picks (module
/// docs).
pub(crate) struct ScreenedScorer<'p, 'a, 'x, 's> {
    pass: &'p mut Passes<'a, 'x>,
    /// The anchors and the per-step state, lent by the workspace for the
    /// call ([`finish`](Self::finish) gives them back).
    sc: ScreenedScratch<'s>,
    /// The f32 rows, for the batched −w̃ (`None` for f16/bf16 storage:
    /// one row at a time).
    f32_rows: Option<Mat<'a, f32>>,
    /// η: relative error bound of an f32 entry.
    eta: f64,
    /// N = [`norm_bound`]`(d)`: every ‖m̂_j‖ ≤ N.
    n_max: f64,
    /// ‖q̂‖².
    q2: f64,
    /// The dense phase's switch share ([`AUTO_SHARE`]; `None`: never
    /// switch).
    share: Option<f64>,
    /// Chooses of steps n ≥ `screen_from` screen; those before are dense
    /// (`None`: every choose so far).
    screen_from: Option<usize>,
    /// Whether the pick just admitted has its whole row (row `complete − 1`).
    pick_row: bool,
    /// Where −w̃ of the current step starts in the Gram rows.
    w_at: usize,
    /// Positions 0..complete have their whole Gram row.
    complete: usize,
    /// Picks admitted so far.
    admitted: usize,
    /// The pick whose entries are in `pick_entries` (`None` before the
    /// first admit).
    pick: Option<usize>,
    /// The candidate whose free entries are in `best_entries`.
    best: Option<usize>,
    /// Steps 1..=steps whose coefficients are in `anchor_coef`.
    steps: usize,

    /// Rows of the pool read since the last choose (the query pass before
    /// the first one).
    rows_read: u32,
}

impl<'p, 'a, 'x, 's> ScreenedScorer<'p, 'a, 'x, 's> {
    /// A scorer for one call (`screening`: `On` screens from the first
    /// pick, `Auto` starts dense); sets every candidate's anchor to step 0
    /// (A_j = ρ_j) and its orthogonal norm bound.
    pub(crate) fn new(
        pass: &'p mut Passes<'a, 'x>,
        f32_rows: Option<Mat<'a, f32>>,
        q2: f64,
        screening: Screening,
        ws: &mut Workspace<'s>,
    ) -> Self {
        let p = ws.pool;
        let eta = f32_entry_error(pass.d);
        let n_max = norm_bound(pass.d);
        let delta = eta * n_max * libm::sqrt(q2);
        let sc: ScreenedScratch<'s> = ws.scorer.lend();
        for j in 0..p {
            sc.anchors[j] = ws.rho[j] as f64;
            sc.anchor_step[j] = 0;
            let beta = ((ws.b[j] as f64).abs() - delta).max(0.0);
            sc.perp[j] = libm::sqrt((n_max * n_max - beta * beta / q2).max(0.0)) * SAFE + TINY;
        }
        let room = ws.gram.len() >= pass.d;
        let (share, screen_from) = match screening {
            Screening::On if room => (None, Some(1)),
            Screening::Auto => (Some(AUTO_SHARE), None),
            _ => (None, None),
        };
        ScreenedScorer {
            pass,
            sc,
            f32_rows,
            eta,
            n_max,
            q2,
            share,
            screen_from,
            pick_row: false,
            w_at: 0,
            complete: 0,
            admitted: 0,
            pick: None,
            best: None,
            steps: 0,
            rows_read: p as u32,
        }
    }

    /// Gives the lent scratch back to `ws` (after the loop).
    pub(crate) fn finish(self, ws: &mut Workspace<'s>) {
        ws.scorer.give_back(self.sc);
    }

    /// Room for the residual direction (d values) after the complete rows.
    fn has_room(&self, ws: &Workspace<'_>) -> bool {
        ws.gram.len() >= self.complete * ws.max_pool + self.pass.d
    }

    /// The dense choose of step n: the refresh over whole Gram rows, and
    /// the switch rule of [`AUTO_SHARE`] (a prediction: the picks do not
    /// depend on it). At the switch every anchor moves to step n.
    fn choose_dense(&mut self, ws: &mut Workspace<'_>, n: usize) -> Choice {
        let p = ws.pool;
        // The rule's own cost, O(n²) per step (G_SS c_n), stays a small
        // share of a dense step's P·d: past n² > P·d / TRACK_RATIO it
        // stops, and the call stays dense.
        let tracking = self.screen_from.is_none()
            && self.share.is_some()
            && n * n * TRACK_RATIO <= p * self.pass.d;
        let mut switch = false;
        if tracking {
            let sb = self.record_step(ws, n);
            if n >= 2 && self.has_room(ws) {
                // Before the refresh `u` holds U(n − 1): the candidates
                // whose drift bound from there reaches the best lower
                // bound are those screening would have read.
                let d = self.drift_tables(ws, n, n - 1, &sb);
                ws.u[ws.picks[n - 1]] = f32::NEG_INFINITY;
                let top = kernels::max(&ws.u[..p]) as f64;
                let tau = (top - 2.0 * self.n_max * d - 2.0 * sb.e0) as f32;
                let reach = ws.u[..p].iter().filter(|&&x| x >= tau).count();
                // The rows a screened step would read: the candidates in
                // reach, −w̃ (one row per free pick) and the pick's entries
                // with the earlier picks.
                let reads = reach + ws.solver.nfree() + n;
                let available = p - n - ws.excluded - ws.skipped - ws.over_budget;
                switch = self
                    .share
                    .is_some_and(|share| reads as f64 <= share * available as f64);
            }
        }
        refresh_scores(ws, n);
        let pick = argmax_scores(&ws.u[..p], &ws.states);
        if switch && pick.is_some() {
            // Screen from the next step on (a repeated choose of this
            // step, after a skipped pick, stays dense): every anchor at
            // step n, A_j = U_j(n) + E_j(n).
            self.screen_from = Some(n + 1);
            let sb = self.record_step(ws, n);
            for j in 0..p {
                if ws.states.is_available(j) {
                    self.sc.anchors[j] = ws.u[j] as f64 + sb.e0 + sb.e1 * (ws.rho[j] as f64).abs();
                    self.sc.anchor_step[j] = n;
                }
            }
        }
        self.choice(pick, 0)
    }

    /// The screened choose of step n (module docs).
    fn choose_screened(&mut self, ws: &mut Workspace<'_>, n: usize) -> Choice {
        let p = ws.pool;
        let sb = self.record_step(ws, n);
        // The anchor steps' tables, each computed when a candidate first
        // needs it.
        self.sc.steps.drift_c0[..n].fill(NOT_COMPUTED);
        self.sc.steps.best_entries[..n].fill(NOT_COMPUTED);
        let nf = ws.solver.nfree();
        let s: f64 = ws.coef[..nf].iter().map(|&c| c as f64).sum();
        let c = self.n_max * s * SAFE;
        let eps_w = 1.01 * (nf as f64 + 3.0) * U32 * c;
        let e = (self.n_max * (self.eta * (c + eps_w) + eps_w)) * SAFE + TINY;
        self.materialize(ws);
        let mut reads = Reads {
            lower: f64::NEG_INFINITY,
            e,
            n,
        };
        // Every bound, rounded up to f32 into `u` (−∞ for the unavailable
        // and those read in an earlier choose of this step, before a
        // skip); the eight largest are read first, then every other
        // candidate whose bound reaches L (rising as reads come in).
        let mut top = [NO_CANDIDATE; 8];
        let mut any = false;
        for j in 0..p {
            if !ws.states.is_available(j) {
                ws.u[j] = f32::NEG_INFINITY;
                continue;
            }
            any = true;
            let n0 = self.sc.anchor_step[j];
            if n0 == n {
                reads.anchored(self.sc.anchors[j], ws.rho[j], &sb);
                ws.u[j] = f32::NEG_INFINITY;
                continue;
            }
            if self.sc.steps.drift_c0[n0].is_nan() {
                self.drift_table(ws, n, n0, &sb);
            }
            let ub = self.bound(ws, j, sb.e1);
            ws.u[j] = round_up(ub);
            #[cfg(feature = "check-bounds")]
            self.check_upper(ws, j, n, ub, "drift bound");
            if ub > top[7].0 {
                insert_top(&mut top, ub, j);
            }
        }
        if !any {
            return self.choice(None, 0);
        }
        let mut batch = [0usize; 9];
        let mut m = 0;
        for &(_, j) in &top {
            if top_slot_used(j) {
                batch[m] = j;
                ws.u[j] = f32::NEG_INFINITY;
                m += 1;
            }
        }
        if m > 0 {
            self.read(ws, &batch[..m], &sb, &mut reads);
        }
        let mut cnt = 0;
        for j in 0..p {
            // Branch-free: the slot is overwritten unless the bound reaches L.
            batch[cnt] = j;
            cnt += usize::from(ws.u[j] as f64 >= reads.lower);
            if cnt == 8 {
                self.read(ws, &batch[..8], &sb, &mut reads);
                cnt = 0;
            }
        }
        if cnt > 0 {
            self.read(ws, &batch[..cnt], &sb, &mut reads);
        }
        #[cfg(feature = "check-bounds")]
        self.check_anchored(ws, n, &sb, &reads);
        let (best, verified) = self.verify_finalists(ws, n, &sb, reads.lower);
        #[cfg(feature = "check-bounds")]
        self.check_pick(ws, best.map(|(j, _)| j));
        self.choice(best.map(|(j, _)| j), verified)
    }
}

impl Scorer for ScreenedScorer<'_, '_, '_, '_> {
    fn admit(&mut self, ws: &mut Workspace<'_>, i: usize, t: usize, keep_row: bool) {
        debug_assert!(
            t == self.admitted || t + 1 == self.admitted,
            "admitted out of order"
        );
        self.admitted = t + 1;
        self.pick_row =
            keep_row && self.screen_from.is_none_or(|s| t + 1 < s) && t <= self.complete;
        if self.pick_row {
            // Dense phase: the whole row, as the unscreened pursuit.
            gram_row_into(self.pass, i, t, ws);
            self.rows_read += ws.pool as u32;
            self.complete = t + 1;
        }
        // The entries with the earlier picks: complete rows, the last
        // verification's (for the free positions; f32 values widened, so
        // narrowing them back is exact), else computed.
        let stride = ws.max_pool;
        let complete = self.complete;
        let verified = self.best == Some(i);
        self.each_entry(
            ws,
            i,
            t,
            |_, q| q,
            |ws, st, q| {
                if q < complete {
                    Some(ws.gram[q * stride + i])
                } else if verified && !st.best_entries[q].is_nan() {
                    Some(st.best_entries[q] as f32)
                } else {
                    None
                }
            },
            |_, st, _, q, g| st.pick_entries[q] = g as f64,
        );
        self.pick = Some(i);
        self.best = None;
    }
    fn entry(&mut self, ws: &mut Workspace<'_>, pos: usize, i: usize) -> f32 {
        debug_assert!(pos < self.admitted, "entry of a pick not admitted");
        if self.pick == Some(i) && pos + 1 < self.admitted {
            self.sc.steps.pick_entries[pos] as f32
        } else if pos < self.complete {
            ws.gram[pos * ws.max_pool + i]
        } else if self.best == Some(i) && !self.sc.steps.best_entries[pos].is_nan() {
            self.sc.steps.best_entries[pos] as f32
        } else {
            self.rows_read += 1;
            cross_gram(self.pass, ws, ws.picks[pos], i)
        }
    }
    fn diag(&mut self, ws: &mut Workspace<'_>, i: usize) -> f32 {
        let t = self.admitted - 1;
        if self.pick_row && self.pick == Some(i) {
            // The dense phase's row of this pick (row t).
            return ws.gram[t * ws.max_pool + i];
        }
        self.rows_read += 1;
        cross_gram(self.pass, ws, i, i)
    }
    fn admit_centroid(&mut self, ws: &mut Workspace<'_>, i: usize, _n: usize) -> (f32, f32) {
        // Not used: centroid pursuit screens with `LazyCentroidScorer`.
        self.rows_read += ws.pool as u32;
        admit_centroid_dense(self.pass, ws, i)
    }
    fn gram_changed(&mut self, ws: &mut Workspace<'_>) {
        // ‖w_n‖² of every stored step on the new G_SS.
        let k = ws.max_budget;
        let gss = &*ws.solver.gss;
        let sc = &mut self.sc.steps;
        for n in 1..=self.steps {
            let c = &sc.anchor_coef[(n - 1) * k..(n - 1) * k + n];
            let mut q = 0.0;
            for a in 0..n {
                if c[a] == 0.0 {
                    continue;
                }
                for b in 0..n {
                    q += c[a] * gss[a * k + b] * c[b];
                }
            }
            sc.w_sq[n - 1] = q;
        }
    }
    fn choose(&mut self, ws: &mut Workspace<'_>, form: ScoreForm) -> Choice {
        match form {
            ScoreForm::Relevance => {
                let p = ws.pool;
                let pick = argmax_available(&ws.rho[..p], &ws.states);
                self.choice(pick, 0)
            }
            ScoreForm::Refresh { picks } => {
                if self.screen_from.is_some_and(|s| picks >= s) {
                    self.choose_screened(ws, picks)
                } else {
                    self.choose_dense(ws, picks)
                }
            }
            ScoreForm::Centroid { c, n, .. } => {
                let p = ws.pool;
                centroid_scores(ws, c, n);
                let pick = argmax_scores(&ws.u[..p], &ws.states);
                self.choice(pick, 0)
            }
        }
    }
}
