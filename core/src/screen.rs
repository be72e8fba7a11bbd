//! Exact screening: the pursuit's picks without reading every row.
//!
//! The unscreened pursuit streams the whole P × d pool once per pick (the
//! new pick's Gram row), though only the winner's score matters: every
//! other candidate needs only a proof that it cannot win. The screened
//! scorer ([`ScreenedScorer`]) keeps, per candidate j, the f32 Gram
//! entries G_{a,j} of a prefix of the picks (a < k_j, "lazy Gram", cached
//! in the workspace's Gram rows) and bounds the score from them; it
//! computes a candidate's missing entries (one f32 dot product each, the
//! pass's kernel and order, so the same bits) only when its bound can
//! still win, best bound first, and its score exactly as the unscreened
//! pursuit does. So the picks, weights and every [`Step`](crate::Step)
//! field but the counters are those of the unscreened pursuit, bit for
//! bit, by proof.
//!
//! # The bound (paper mode and family, κ < ∞)
//! The unscreened score is the f32 refresh
//! U_j = fl(ρ_j − Σ_{a∈F} c_a G̃_{a,j}) with c_a = fl32(γα_a) and the f32
//! entries G̃ (each within η n_a n_j of m̂_a·m̂_j, n = ‖m̂‖ ≤
//! [`N_MAX`]; `pursuit::f32_entry_error`). Split F into the known picks
//! (a < k_j) and the rest N. Then
//!
//! ```text
//! U_j ≤ ρ_j − Σ_{a∈F, a<k_j} c_a G̃_{a,j}  +  n_j ‖w_N‖ + η n_j Σ_N c_a n_a  +  δ_j
//! ```
//!
//! with w_N = Σ_N c_a m̂_a, ‖w_N‖² ≤ c_Nᵀ G_NN c_N + η (Σ_N c_a n_a)² from
//! the refit's G_SS (f32 or exact entries, either within η), and δ_j ≤
//! (|F| + 1)·1.01u·(|ρ_j| + 1.01 n_j Σ_F c_a n_a) the rounding of the f32
//! refresh (u = 2⁻²⁴); the same with the signs flipped is a lower bound.
//! Every term is evaluated in f64 and the sum scaled by 1 + 10⁻⁹ plus
//! 10⁻¹⁵ to cover that evaluation.
//!
//! # The bound (centroid pursuit, κ = ∞)
//! U_j = fl(ρ_j − fl(c·acc_j)) with c = fl32(γ/n) and acc_j the f32 running
//! sum of G̃_{a,j} over the n picks in pick order. With acc_j kept for the
//! first k_j picks (`Workspace::gram_sum`), the rest is at most
//! n_j Σ_{a≥k_j} n_a (1 + η) in magnitude, the two f32 summations err by at
//! most γ_n·A each (A = 1.01 n_j Σ_a n_a, γ_n = n·1.01u) and the final
//! multiply-subtract by 2.02u(|ρ_j| + c A).
//!
//! # The argmax
//! L = max_j (lower bound of U_j) over the available candidates; every
//! candidate whose upper bound is ≥ L could win. They are evaluated in
//! descending order of their upper bound until the next bound is below the
//! best exact score (ties: lowest index). A candidate never evaluated has
//! U_j ≤ its bound < that score, so the pick is the unscreened argmax. When
//! more than [`DENSE_SHARE`] of the candidates could win (the first picks,
//! where the residual moves most), the scorer streams the missing Gram
//! rows whole instead (the unscreened pass, the same bits) and takes the
//! refresh's argmax.

use crate::kernels::{self, sealed::Rows, Isa};
use crate::pursuit::{
    argmax_available, argmax_scores, f32_entry_error, gram_row_into, refresh_scores, Choice,
    Passes, ScoreForm, Scorer,
};
use crate::selection::CandidateState;
use crate::workspace::Workspace;

/// Whether a pursuit screens (see the module docs of `screen`): the picks
/// are the same either way, bit for bit; only the rows read (and so the
/// time) differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Screening {
    /// The measured rule of [`Screening::screens`].
    #[default]
    Auto,
    /// Always screen.
    On,
    /// Never screen: every pick streams the pool (one Gram row per pick).
    Off,
}

impl Screening {
    /// Whether a pursuit of budget K on P candidates screens. `Auto`: not
    /// yet anywhere. Measured (BENCHMARKS.md, "Exact screening"; one run,
    /// AMD EPYC with AVX-512): on the HotpotQA fixture (P ≈ 36, d = 384,
    /// K = 20) screening reads 0.56 of the unscreened rows but takes
    /// 1.14–1.36× the time (its bounds' O(P·|F|) arithmetic per pick and
    /// the gathered rows cost more than the passes they save at this
    /// size); on random pools (P = 200, d = 1536) every pick's bound
    /// admits most of the pool, so it streams whole rows like the
    /// unscreened pursuit and takes 1.12–1.16× its time. `On` is for
    /// measuring and for pools where the bounds are known to bite.
    pub fn screens(self, _p: usize, _k: usize) -> bool {
        match self {
            Screening::On => true,
            Screening::Auto | Screening::Off => false,
        }
    }
}

/// Upper bound of ‖m̂_i‖ = s_i ‖m_i‖ for every usable row: 1 + the unit
/// tolerance for rows used as given, ≈ 1 + 2⁻²⁴ for rescaled ones
/// (`input::prepare`), with a margin.
pub(crate) const N_MAX: f64 = 1.0 + crate::UNIT_NORM_TOLERANCE + 1e-4;

/// Share of the available candidates above which a pick's scoring streams
/// the missing Gram rows whole instead of evaluating candidates one by
/// one (a gathered row costs more than a streamed one).
pub const DENSE_SHARE: f64 = 0.5;

/// Unit roundoff of f32, 2⁻²⁴.
const U32: f64 = f32::EPSILON as f64 / 2.0;
/// Factor that covers the f64 rounding of a bound's own evaluation.
const SAFE: f64 = 1.0 + 1e-9;

/// The screened source of the pursuit's entries and picks (module docs).
pub(crate) struct ScreenedScorer<'p, 'a, 'x> {
    pub(crate) pass: &'p mut Passes<'a, 'x>,
    /// The f32 rows, for the batched entry kernel (`None` for f16/bf16
    /// storage: one entry at a time by the pass's own kernel).
    pub(crate) f32_rows: Option<&'a [f32]>,
    /// η: relative error bound of an f32 entry.
    pub(crate) eta: f64,
    /// Positions 0..complete have their whole Gram row.
    pub(crate) complete: usize,
    /// Positions 0..stored may be read from the Gram rows (all but the
    /// relevance-fill picks of the QP loop).
    pub(crate) stored: usize,
    /// Picks admitted so far.
    pub(crate) admitted: usize,
    /// Rows of the pool read since the last choose (the query pass before
    /// the first one).
    pub(crate) rows_read: u32,
}

impl<'p, 'a, 'x> ScreenedScorer<'p, 'a, 'x> {
    /// A scorer for one call: `f32_rows` the rows when they are f32.
    pub(crate) fn new(
        pass: &'p mut Passes<'a, 'x>,
        f32_rows: Option<&'a [f32]>,
        k_eff: usize,
        ws: &mut Workspace<'_>,
    ) -> Self {
        let p = ws.pool;
        ws.known[..p].fill(0);
        let eta = f32_entry_error(pass.d);
        ScreenedScorer {
            pass,
            f32_rows,
            eta,
            complete: 0,
            stored: k_eff,
            admitted: 0,
            rows_read: p as u32,
        }
    }

    /// The f32 entries G_{picks[pos], j} for pos in `from..to` into
    /// `out[..to − from]`: the pass's kernel and scaling, bit for bit.
    fn entries(&self, ws: &Workspace<'_>, j: usize, from: usize, to: usize, out: &mut [f32]) {
        let d = self.pass.d;
        match self.f32_rows {
            Some(rows) => {
                let v = &rows[j * d..(j + 1) * d];
                kernels::dots_indexed(Isa::detect(), rows, d, v, &ws.picks[from..to], out);
                for (o, &a) in out.iter_mut().zip(&ws.picks[from..to]) {
                    *o *= ws.scale[a] * ws.scale[j];
                }
            }
            None => {
                for (o, &a) in out.iter_mut().zip(&ws.picks[from..to]) {
                    *o = crate::pursuit::cross_gram(self.pass, ws, a, j);
                }
            }
        }
    }

    /// Makes the entries of candidate `j` with the picks 0..`to` known
    /// (QP loop: stored in the Gram rows), up to eight at a time.
    fn extend(&mut self, ws: &mut Workspace<'_>, j: usize, to: usize) {
        let stride = ws.max_pool;
        let mut from = ws.known[j].max(self.complete.min(to));
        if ws.known[j] >= to {
            return;
        }
        let mut buf = [0.0f32; 8];
        while from < to {
            let n = (to - from).min(8);
            self.entries(ws, j, from, from + n, &mut buf[..n]);
            for (r, &g) in buf[..n].iter().enumerate() {
                ws.gram[(from + r) * stride + j] = g;
            }
            from += n;
        }
        ws.known[j] = to;
    }

    /// The centroid loop's running sum of candidate `j` extended to the
    /// picks 0..`to`, in pick order (`gram_sum`, `known`).
    fn extend_sum(&mut self, ws: &mut Workspace<'_>, j: usize, to: usize) {
        let mut from = ws.known[j];
        let mut buf = [0.0f32; 8];
        let mut acc = ws.gram_sum[j];
        while from < to {
            let n = (to - from).min(8);
            self.entries(ws, j, from, from + n, &mut buf[..n]);
            for &g in &buf[..n] {
                acc += g;
            }
            from += n;
        }
        ws.gram_sum[j] = acc;
        ws.known[j] = to;
    }

    /// Streams the Gram rows of positions `complete..n` whole (the
    /// unscreened pass) and marks every candidate known up to `n`.
    fn complete_rows(&mut self, ws: &mut Workspace<'_>, n: usize) {
        let p = ws.pool;
        for pos in self.complete..n {
            let pick = ws.picks[pos];
            gram_row_into(self.pass, pick, pos, ws);
            self.rows_read += p as u32;
        }
        self.complete = self.complete.max(n);
        for k in ws.known[..p].iter_mut() {
            *k = (*k).max(n);
        }
    }

    /// The screened choose of the QP loop's refresh (module docs).
    fn choose_refresh(&mut self, ws: &mut Workspace<'_>, n: usize) -> Choice {
        let p = ws.pool;
        let k = ws.max_budget;
        let stride = ws.max_pool;
        let eta = self.eta;
        let nf = ws.solver.nfree();
        // Per boundary b (0..=n): ‖w_N‖² and Σ_N c over N = F ∩ [b, n),
        // from the last free position down.
        let free = ws.solver.free();
        let (mut q, mut s) = (0.0f64, 0.0f64);
        let mut sum_c = 0.0f64;
        for a in 0..nf {
            sum_c += ws.coef[a] as f64;
        }
        let (tq, ts) = (&mut ws.tail_w[..n], &mut ws.tail_c[..n]);
        // Free indices by position, descending: walk the positions.
        for b in (0..n).rev() {
            if let Some(fa) = free.iter().position(|&x| x == b) {
                let ca = ws.coef[fa] as f64;
                // q(b) = q(b+1) + 2 c_b Σ_{a∈F, a>b} c_a G_ab + c_b² G_bb.
                let mut cross = 0.0;
                for (fb, &pb) in free.iter().enumerate() {
                    if pb > b {
                        cross += ws.coef[fb] as f64 * ws.solver.gss[b * k + pb];
                    }
                }
                q += 2.0 * ca * cross + ca * ca * ws.solver.gss[b * k + b];
                s += ca;
            }
            tq[b] = q;
            ts[b] = s;
        }
        for b in 0..n {
            let sn = ts[b] * N_MAX;
            let w = libm::sqrt((tq[b] + eta * sn * sn).max(0.0) * SAFE);
            // n_j (‖w_N‖ + η Σ_N c n), n_j ≤ N_MAX.
            tq[b] = N_MAX * (w + eta * sn);
        }
        let delta_c = (nf as f64 + 1.0) * 1.01 * U32;
        let cn = 1.01 * N_MAX * N_MAX * sum_c;
        // Known parts into `upper`: Σ_{a∈F, a<k_j} c_a G_aj.
        ws.upper[..p].fill(0.0);
        for (fa, &a) in free.iter().enumerate() {
            let ca = ws.coef[fa] as f64;
            let row = &ws.gram[a * stride..a * stride + p];
            for j in 0..p {
                if a < ws.known[j] {
                    ws.upper[j] += ca * row[j] as f64;
                }
            }
        }
        // Bounds: upper_j = ρ_j − known_j + r_j, lower = ρ_j − known_j − r_j.
        let mut lower = f64::NEG_INFINITY;
        let mut available = 0usize;
        for j in 0..p {
            if ws.states.get(j) != CandidateState::Available {
                ws.upper[j] = f64::NEG_INFINITY;
                continue;
            }
            available += 1;
            let rho = ws.rho[j] as f64;
            let center = rho - ws.upper[j];
            let tail = if ws.known[j] < n {
                tq[ws.known[j]]
            } else {
                0.0
            };
            let r = (tail + delta_c * (rho.abs() + cn)) * SAFE + 1e-15;
            ws.upper[j] = center + r;
            lower = lower.max(center - r);
        }
        if available == 0 {
            return Choice {
                pick: None,
                verified: 0,
                rows_read: core::mem::take(&mut self.rows_read),
            };
        }
        let contenders = ws.upper[..p].iter().filter(|&&u| u >= lower).count();
        if contenders as f64 > DENSE_SHARE * available as f64 {
            self.complete_rows(ws, n);
            refresh_scores(ws, n);
            let pick = argmax_scores(&ws.u[..p], &ws.states);
            return Choice {
                pick,
                verified: 0,
                rows_read: core::mem::take(&mut self.rows_read),
            };
        }
        // Best bound first until the next bound is below the best score.
        let mut verified = 0u32;
        let mut best: Option<(usize, f32)> = None;
        loop {
            let mut top: Option<(usize, f64)> = None;
            for (j, &u) in ws.upper[..p].iter().enumerate() {
                if u >= lower && top.is_none_or(|(_, t)| u > t) {
                    top = Some((j, u));
                }
            }
            let Some((j, up)) = top else { break };
            if best.is_some_and(|(_, b)| up < b as f64) {
                break;
            }
            ws.upper[j] = f64::NEG_INFINITY;
            let reads = ws.known[j] < n;
            self.extend(ws, j, n);
            self.rows_read += u32::from(reads);
            verified += 1;
            let mut v = ws.rho[j];
            for (fa, &a) in ws.solver.free().iter().enumerate() {
                v -= ws.coef[fa] * ws.gram[a * stride + j];
            }
            ws.u[j] = v;
            if best.is_none_or(|(bi, b)| v > b || (v == b && j < bi)) {
                best = Some((j, v));
            }
        }
        Choice {
            pick: best.map(|(j, _)| j),
            verified,
            rows_read: core::mem::take(&mut self.rows_read),
        }
    }

    /// The screened choose of the centroid loop (module docs).
    fn choose_centroid(&mut self, ws: &mut Workspace<'_>, c: f32, n: usize) -> Choice {
        let p = ws.pool;
        let eta = self.eta;
        let cf = c as f64;
        let n2 = N_MAX * N_MAX;
        let a_sum = 1.01 * n2 * n as f64;
        let gamma_n = 2.0 * n as f64 * 1.01 * U32;
        let mut lower = f64::NEG_INFINITY;
        let mut available = 0usize;
        for j in 0..p {
            if ws.states.get(j) != CandidateState::Available {
                ws.upper[j] = f64::NEG_INFINITY;
                continue;
            }
            available += 1;
            let rho = ws.rho[j] as f64;
            let center = rho - cf * ws.gram_sum[j] as f64;
            let missing = (n - ws.known[j].min(n)) as f64;
            let r = (cf * n2 * missing * (1.0 + eta)
                + cf * gamma_n * a_sum
                + 2.02 * U32 * (rho.abs() + cf * a_sum))
                * SAFE
                + 1e-15;
            ws.upper[j] = center + r;
            lower = lower.max(center - r);
        }
        if available == 0 {
            return Choice {
                pick: None,
                verified: 0,
                rows_read: core::mem::take(&mut self.rows_read),
            };
        }
        let contenders = ws.upper[..p].iter().filter(|&&u| u >= lower).count();
        let dense = contenders as f64 > DENSE_SHARE * available as f64;
        let mut verified = 0u32;
        let mut best: Option<(usize, f32)> = None;
        if dense {
            // Every candidate's sum extended by whole rows (the unscreened
            // pass and running sum, the same bits).
            let from = (0..p)
                .filter(|&j| ws.states.get(j) == CandidateState::Available)
                .map(|j| ws.known[j])
                .min()
                .unwrap_or(n);
            for pos in from..n {
                let pick = ws.picks[pos];
                gram_row_into(self.pass, pick, 0, ws);
                self.rows_read += p as u32;
                for j in 0..p {
                    if ws.known[j] == pos && ws.states.get(j) == CandidateState::Available {
                        ws.gram_sum[j] += ws.gram[j];
                        ws.known[j] = pos + 1;
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
        loop {
            let mut top: Option<(usize, f64)> = None;
            for (j, &u) in ws.upper[..p].iter().enumerate() {
                if u >= lower && top.is_none_or(|(_, t)| u > t) {
                    top = Some((j, u));
                }
            }
            let Some((j, up)) = top else { break };
            if best.is_some_and(|(_, b)| up < b as f64) {
                break;
            }
            ws.upper[j] = f64::NEG_INFINITY;
            let reads = ws.known[j] < n;
            self.extend_sum(ws, j, n);
            self.rows_read += u32::from(reads);
            verified += 1;
            let v = ws.rho[j] - c * ws.gram_sum[j];
            ws.u[j] = v;
            if best.is_none_or(|(bi, b)| v > b || (v == b && j < bi)) {
                best = Some((j, v));
            }
        }
        Choice {
            pick: best.map(|(j, _)| j),
            verified,
            rows_read: core::mem::take(&mut self.rows_read),
        }
    }
}

impl Scorer for ScreenedScorer<'_, '_, '_> {
    fn admit(&mut self, ws: &mut Workspace<'_>, i: usize, t: usize, keep_row: bool) {
        debug_assert!(
            t == self.admitted || t + 1 == self.admitted,
            "admitted out of order"
        );
        self.admitted = t + 1;
        if !keep_row {
            self.stored = self.stored.min(t);
        }
        let reads = ws.known[i] < t;
        self.extend(ws, i, t.min(self.stored));
        self.rows_read += u32::from(reads);
    }
    fn entry(&mut self, ws: &mut Workspace<'_>, pos: usize, i: usize) -> f32 {
        debug_assert!(pos < self.admitted, "entry of a pick not admitted");
        if pos < self.stored && pos < ws.known[i] {
            ws.gram[pos * ws.max_pool + i]
        } else {
            crate::pursuit::cross_gram(self.pass, ws, ws.picks[pos], i)
        }
    }
    fn diag(&mut self, ws: &mut Workspace<'_>, i: usize) -> f32 {
        let t = self.admitted - 1;
        let mut out = [0.0f32];
        // G_ii as the pass of pick t computes it (entry i of its row).
        match self.f32_rows {
            Some(rows) => {
                let d = self.pass.d;
                let v = &rows[i * d..(i + 1) * d];
                kernels::dots_indexed(Isa::detect(), rows, d, v, &[i], &mut out);
                out[0] *= ws.scale[i] * ws.scale[i];
            }
            None => out[0] = crate::pursuit::cross_gram(self.pass, ws, i, i),
        }
        if t < self.stored && ws.known[i] == t {
            ws.gram[t * ws.max_pool + i] = out[0];
            ws.known[i] = t + 1;
        }
        out[0]
    }
    fn admit_centroid(&mut self, ws: &mut Workspace<'_>, i: usize, n: usize) -> (f32, f32) {
        let reads = ws.known[i] < n;
        self.extend_sum(ws, i, n);
        self.rows_read += u32::from(reads);
        let acc_i = ws.gram_sum[i];
        let mut out = [0.0f32];
        match self.f32_rows {
            Some(rows) => {
                let d = self.pass.d;
                let v = &rows[i * d..(i + 1) * d];
                kernels::dots_indexed(Isa::detect(), rows, d, v, &[i], &mut out);
                out[0] *= ws.scale[i] * ws.scale[i];
            }
            None => out[0] = crate::pursuit::cross_gram(self.pass, ws, i, i),
        }
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
            ScoreForm::Refresh { picks } => self.choose_refresh(ws, picks),
            ScoreForm::Centroid { c, n, .. } => self.choose_centroid(ws, c, n),
        }
    }
}

/// Rows of a storage type as f32, when they are.
pub(crate) fn f32_rows(rows: Rows<'_>) -> Option<&[f32]> {
    match rows {
        Rows::F32(r) => Some(r),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}
