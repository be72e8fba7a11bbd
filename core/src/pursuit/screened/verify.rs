//! The reads and the verification of exact screening (module docs of
//! `screened`): the residual direction −w̃, a candidate's read and its
//! exact f32 score, the finalists' verification, and the `check-bounds`
//! feature's assertions that every bound covers its exact score.

use super::bounds::{insert_top, Reads, StepBounds, NO_CANDIDATE};
use super::ScreenedScorer;
use crate::kernels;
use crate::pursuit::norm_bound::TINY;
use crate::pursuit::scorer::Choice;
use crate::workspace::{ScreenState, Workspace};

/// `u[j]` of a finalist still to verify when there are more than
/// [`FINALISTS`] (verified from the whole pool): NaN, which no score or
/// bound is; a verified one holds its exact score, and the rest go back to
/// −∞ after the choose. A sentinel rather than a flag per candidate: no
/// such buffer is free, and `u` is the scorer's own during a choose.
pub(super) const TO_VERIFY: f32 = f32::NAN;

/// Finalists of one screened choose held in order; more are verified
/// from the whole pool.
pub(super) const FINALISTS: usize = 16;

impl<'p, 'a, 'x, 's> ScreenedScorer<'p, 'a, 'x, 's> {
    /// The f32 entries G_{picks[pos], j} for the positions `pos`, by the
    /// pass's kernel and scaling, bit for bit, into `out`.
    pub(super) fn entries(&mut self, ws: &Workspace<'_>, j: usize, pos: &[usize], out: &mut [f32]) {
        let d = self.pass.d;
        let mut idx = [0usize; 8];
        for (ps, os) in pos.chunks(8).zip(out.chunks_mut(8)) {
            for (x, &q) in idx.iter_mut().zip(ps) {
                *x = ws.picks[q];
            }
            let n = ps.len();
            // G_{a,j} = G_{j,a} bit for bit (the products commute).
            self.pass
                .rows
                .dots_indexed_row(self.pass.isa, d, j, &idx[..n], os);
            for (o, &a) in os.iter_mut().zip(&idx[..n]) {
                *o *= ws.scale[a] * ws.scale[j];
            }
            self.rows_read += n as u32;
        }
    }

    /// Hands `sink(ws, steps, k, pos, G̃_{picks[pos], j})` the f32 entries
    /// of candidate j with the positions pos = `pos_at(ws, k)`, k in
    /// 0..`count`, in order: `cached(ws, steps, pos)`'s value where it has
    /// one, else computed by [`entries`](Self::entries), up to eight per
    /// kernel call (`steps`: the per-step state of the lent scratch).
    /// `sink` must not change what `pos_at` or `cached` read.
    pub(super) fn each_entry(
        &mut self,
        ws: &mut Workspace<'_>,
        j: usize,
        count: usize,
        pos_at: impl Fn(&Workspace<'_>, usize) -> usize,
        cached: impl Fn(&Workspace<'_>, &ScreenState<'_>, usize) -> Option<f32>,
        mut sink: impl FnMut(&mut Workspace<'_>, &mut ScreenState<'_>, usize, usize, f32),
    ) {
        let mut missing = [0usize; 8];
        let mut vals = [0.0f32; 8];
        let mut at = 0;
        while at < count {
            // The next run of positions with at most eight not cached.
            let mut m = 0;
            let mut end = at;
            while end < count && m < 8 {
                let pos = pos_at(ws, end);
                if cached(ws, &self.sc.steps, pos).is_none() {
                    missing[m] = pos;
                    m += 1;
                }
                end += 1;
            }
            if m > 0 {
                self.entries(ws, j, &missing[..m], &mut vals[..m]);
            }
            let mut r = 0;
            for k in at..end {
                let pos = pos_at(ws, k);
                let g = cached(ws, &self.sc.steps, pos).unwrap_or_else(|| {
                    r += 1;
                    vals[r - 1]
                });
                sink(ws, &mut self.sc.steps, k, pos, g);
            }
            at = end;
        }
    }

    /// −w̃ = −Σ_{a∈F} fl32(c_a s_a) m_a (products rounded, subtracted in
    /// free order) into a d-vector after the complete rows (`w_at`): for
    /// f32 rows, when there is room for a second (zero) d-vector, by the
    /// score refresh's kernel, up to 32 picks per sweep; else one row at a
    /// time.
    pub(super) fn materialize(&mut self, ws: &mut Workspace<'_>) {
        let d = self.pass.d;
        let start = self.complete * ws.max_pool;
        let free = ws.solver.free();
        self.w_at = start;
        let two = ws.gram.len() >= start + 2 * d;
        match self.f32_rows {
            Some(rows) if two => {
                // The rows as rows of the data (read in place by id).
                let (w0, rest) = ws.gram[start..start + 2 * d].split_at_mut(d);
                let w1 = &mut rest[..d];
                w1.fill(0.0);
                let (mut idx, mut cs) = ([0usize; 32], [0.0f32; 32]);
                for (c, chunk) in free.chunks(32).enumerate() {
                    for (r, &a) in chunk.iter().enumerate() {
                        let i = ws.picks[a];
                        idx[r] = rows.id(i);
                        cs[r] = ws.coef[c * 32 + r] * ws.scale[i];
                    }
                    let m = chunk.len();
                    // Ping-pong: the partial sum moves between w0 and w1.
                    if c % 2 == 0 {
                        kernels::refresh_scores(w0, w1, rows.data, d, &idx[..m], &cs[..m]);
                        self.w_at = start;
                    } else {
                        kernels::refresh_scores(w1, w0, rows.data, d, &idx[..m], &cs[..m]);
                        self.w_at = start + d;
                    }
                }
                if free.is_empty() {
                    w0.fill(0.0);
                }
            }
            _ => {
                let w0 = &mut ws.gram[start..start + d];
                w0.fill(0.0);
                for (fa, &a) in free.iter().enumerate() {
                    let i = ws.picks[a];
                    let c = ws.coef[fa] * ws.scale[i];
                    self.pass.rows.sub_scaled_row(i, d, c, w0);
                }
            }
        }
        self.rows_read += free.len() as u32;
    }

    /// Reads the candidates `batch` at step n: v_j by one dot product with
    /// w̃ each, A_j = v_j + e, anchors at n, and their bounds into `reads`.
    pub(super) fn read(
        &mut self,
        ws: &mut Workspace<'_>,
        batch: &[usize],
        sb: &StepBounds,
        reads: &mut Reads,
    ) {
        let d = self.pass.d;
        let mut out = [0.0f32; 8];
        let w = &ws.gram[self.w_at..self.w_at + d];
        self.pass
            .rows
            .dots_indexed(self.pass.isa, d, w, batch, &mut out[..batch.len()]);
        self.rows_read += batch.len() as u32;
        for (&o, &j) in out.iter().zip(batch) {
            // o = m_j · (−w̃).
            let s = o * ws.scale[j];
            self.sc.anchors[j] = ws.rho[j] as f64 + s as f64 + reads.e;
            self.sc.anchor_step[j] = reads.n;
            reads.anchored(self.sc.anchors[j], ws.rho[j], sb);
        }
    }

    /// U_j exactly as the unscreened refresh computes it (its f32 entries
    /// with the free set, then ρ_j − Σ c_a G̃_{a,j} in free order, each
    /// product rounded); its free entries into `ScreenState::entries`.
    pub(super) fn exact_score(&mut self, ws: &mut Workspace<'_>, j: usize) -> f32 {
        let stride = ws.max_pool;
        let complete = self.complete;
        // Entries of the free positions: stored rows, else computed.
        let mut v = ws.rho[j];
        self.each_entry(
            ws,
            j,
            ws.solver.nfree(),
            |ws, f| ws.solver.free()[f],
            |ws, _, a| (a < complete).then(|| ws.gram[a * stride + j]),
            |ws, st, f, a, g| {
                st.entries[a] = g as f64;
                v -= ws.coef[f] * g;
            },
        );
        v
    }

    /// The finalists of the screened choose of step n: the candidates
    /// anchored at n with A_j + E_j(n) ≥ L (`lower`), verified best bound
    /// first until the next bound is below the best exact score. Returns
    /// the best (ties: lowest index) with its score, and the number
    /// verified.
    pub(super) fn verify_finalists(
        &mut self,
        ws: &mut Workspace<'_>,
        n: usize,
        sb: &StepBounds,
        lower: f64,
    ) -> (Option<(usize, f32)>, u32) {
        let p = ws.pool;
        let mut fin = [NO_CANDIDATE; FINALISTS];
        let mut nfin = 0usize;
        for j in 0..p {
            if self.sc.anchor_step[j] != n || !ws.states.is_available(j) {
                continue;
            }
            let ub = self.sc.anchors[j] + sb.e0 + sb.e1 * (ws.rho[j] as f64).abs() + TINY;
            if ub >= lower {
                nfin += 1;
                insert_top(&mut fin, ub, j);
            }
        }
        let mut best: Option<(usize, f32)> = None;
        let mut verified = 0u32;
        if nfin <= FINALISTS {
            for &(ub, j) in &fin[..nfin] {
                if best.is_some_and(|(_, b)| ub < b as f64) {
                    break;
                }
                self.verify(ws, j, &mut best);
                verified += 1;
            }
        } else {
            // Many near-ties: verify from the whole pool, best bound first.
            for j in 0..p {
                if ws.states.is_available(j) && self.sc.anchor_step[j] == n {
                    ws.u[j] = TO_VERIFY;
                }
            }
            loop {
                let floor = best.map_or(lower, |(_, b)| lower.max(b as f64));
                let mut next: Option<(f64, usize)> = None;
                for j in 0..p {
                    if !ws.states.is_available(j)
                        || self.sc.anchor_step[j] != n
                        || !ws.u[j].is_nan()
                    {
                        continue;
                    }
                    let ub = self.sc.anchors[j] + sb.e0 + sb.e1 * (ws.rho[j] as f64).abs() + TINY;
                    if ub >= floor && next.is_none_or(|(u, _)| ub > u) {
                        next = Some((ub, j));
                    }
                }
                let Some((_, j)) = next else { break };
                self.verify(ws, j, &mut best);
                verified += 1;
            }
            for j in 0..p {
                if ws.u[j].is_nan() {
                    ws.u[j] = f32::NEG_INFINITY;
                }
            }
        }
        (best, verified)
    }

    /// Feature `check-bounds`: panics unless candidate j's exact score
    /// U_j(n) (computed as the unscreened refresh computes it) is at most
    /// `ub`, the bound that may exclude it (`what` names the bound). The
    /// reads it makes are not counted.
    #[cfg(feature = "check-bounds")]
    pub(super) fn check_upper(
        &mut self,
        ws: &mut Workspace<'_>,
        j: usize,
        n: usize,
        ub: f64,
        what: &str,
    ) {
        let rows_read = self.rows_read;
        let exact = self.exact_score(ws, j) as f64;
        self.rows_read = rows_read;
        assert!(
            exact <= ub,
            "check-bounds: {what} of candidate {j} at step {n} under-covers: U = {exact} > {ub} (anchor step {})",
            self.sc.anchor_step[j]
        );
    }

    /// Feature `check-bounds`: every candidate anchored at step n (read in
    /// this choose) has its exact score within its read bounds: at most
    /// A_j + E_j(n) (what excludes a non-finalist) and at least
    /// A_j − 2e − E_j(n) (what raises L).
    #[cfg(feature = "check-bounds")]
    pub(super) fn check_anchored(
        &mut self,
        ws: &mut Workspace<'_>,
        n: usize,
        sb: &StepBounds,
        reads: &Reads,
    ) {
        for j in 0..ws.pool {
            if self.sc.anchor_step[j] != n || !ws.states.is_available(j) {
                continue;
            }
            let ej = sb.e0 + sb.e1 * (ws.rho[j] as f64).abs();
            let ub = self.sc.anchors[j] + ej + TINY;
            self.check_upper(ws, j, n, ub, "read bound");
            let rows_read = self.rows_read;
            let exact = self.exact_score(ws, j) as f64;
            self.rows_read = rows_read;
            let lb = self.sc.anchors[j] - 2.0 * reads.e - ej - TINY;
            assert!(
                lb <= exact,
                "check-bounds: read lower bound of candidate {j} at step {n} over-covers: U = {exact} < {lb}"
            );
        }
    }

    /// Feature `check-bounds`: the screened pick is the argmax of the exact
    /// scores of every available candidate (ties: lowest index), i.e. the
    /// unscreened pursuit's pick.
    #[cfg(feature = "check-bounds")]
    pub(super) fn check_pick(&mut self, ws: &mut Workspace<'_>, pick: Option<usize>) {
        let rows_read = self.rows_read;
        let mut best: Option<(usize, f32)> = None;
        for j in 0..ws.pool {
            if !ws.states.is_available(j) {
                continue;
            }
            let v = self.exact_score(ws, j);
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((j, v));
            }
        }
        self.rows_read = rows_read;
        assert_eq!(
            pick,
            best.map(|(j, _)| j),
            "check-bounds: the screened pick is not the argmax of the exact scores"
        );
    }

    /// Verifies candidate j (its exact score into `u[j]`) and keeps the
    /// best (ties: lowest index) with its free entries.
    pub(super) fn verify(
        &mut self,
        ws: &mut Workspace<'_>,
        j: usize,
        best: &mut Option<(usize, f32)>,
    ) {
        let v = self.exact_score(ws, j);
        ws.u[j] = v;
        if best.is_none_or(|(bi, b)| v > b || (v == b && j < bi)) {
            *best = Some((j, v));
            for &a in ws.solver.free() {
                self.sc.steps.best_entries[a] = self.sc.steps.entries[a];
            }
            self.best = Some(j);
        }
    }

    pub(super) fn choice(&mut self, pick: Option<usize>, verified: u32) -> Choice {
        Choice {
            pick,
            verified,
            rows_read: core::mem::take(&mut self.rows_read),
        }
    }
}
