//! The unscreened f32 source of the loops' entries and picks: every
//! admitted pick gets its whole Gram row by one pass over the pool.

use crate::pursuit::scorer::{
    admit_centroid_dense, argmax_available, argmax_scores, centroid_scores, cross_gram,
    gram_row_into, refresh_scores, Choice, Passes, ScoreForm, Scorer,
};
use crate::workspace::Workspace;

/// The f32 path: every admitted pick gets its Gram row by one pass.
pub(crate) struct F32Scorer<'p, 'a, 'x> {
    pub(crate) pass: &'p mut Passes<'a, 'x>,
    /// Positions 0..stored have their Gram row stored (all but the
    /// relevance-fill picks of the QP loop).
    pub(crate) stored: usize,
    /// Picks admitted so far (the protocol check of debug builds).
    pub(crate) admitted: usize,
    /// Rows of the pool read since the last choose (the query pass before
    /// the first one).
    pub(crate) rows_read: u32,
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
            self.rows_read += ws.pool as u32;
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
        self.rows_read += ws.pool as u32;
        admit_centroid_dense(self.pass, ws, i)
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
        Choice {
            pick,
            verified: 0,
            rows_read: core::mem::take(&mut self.rows_read),
        }
    }
}
