//! Caller-owned, fixed-capacity scratch memory.
//!
//! The core never allocates. Every selector works in a [`Workspace`], a view
//! over buffers the caller owns, sized for a maximum pool size P_max and a
//! maximum budget K_max. Two ways to get one:
//!
//! * [`FixedWorkspace<P, K>`]: a plain struct of arrays (const generics), for
//!   a `static`, the stack or a `Box`;
//! * [`Workspace::from_buffers`]: four caller slices, sized by
//!   [`ScratchSize::for_capacity`] (the `mempursuit` crate does this with
//!   `Vec`s).
//!
//! A call whose pool or effective budget exceeds the capacity fails with
//! [`Error::CapacityExceeded`]; the workspace is reusable across calls of
//! any shape within its capacity.

use crate::error::{Capacity, Error, ScratchBuffer};
use crate::selection::{Step, StopReason};
use crate::solver::SolverState;

pub(crate) const AVAILABLE: usize = 0;
pub(crate) const SELECTED: usize = 1;
pub(crate) const EXCLUDED: usize = 2;
/// Skipped as already represented by the free set
/// ([`DependentPicks::Skip`](crate::DependentPicks::Skip)), or, in the
/// recommended setting, an exact duplicate of an earlier candidate or a
/// candidate represented by the picks ([`recommended`](crate::recommended)).
pub(crate) const SKIPPED: usize = 3;
/// Represented by a pick or by another represented candidate, in the
/// recommended setting's loop (picked only when no other candidate is
/// left; [`SKIPPED`] once the loop ends).
pub(crate) const REPRESENTED: usize = 4;

/// How many elements of each type a workspace of a given capacity needs
/// (in the spirit of faer's `*_scratch` functions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScratchSize {
    /// f32 elements: 7·P_max (similarities, relevance, scores, scales,
    /// squared norms, sorted similarities, the Gram-row accumulator) + K_max
    /// (refresh coefficients) + 2·K_max·P_max (the Gram rows of the picks,
    /// and the f32 Gram entries of the candidates the certified int8
    /// pursuit verifies).
    pub f32s: usize,
    /// f64 elements: 2·K_max² (G_SS and its Cholesky factor) + 10·K_max
    /// (α, ρ_S, b_S, U_S, G_SS α, the trial point, two forward-substituted
    /// right-hand sides, two solve vectors) + 4·P_max (the per-row error
    /// radii, int8 scales and score upper bounds of the certified int8
    /// pursuit).
    pub f64s: usize,
    /// usize elements: P_max (candidate states) + 3·K_max (picks, free set,
    /// blocked flags).
    pub indices: usize,
    /// [`Step`] records: K_max.
    pub steps: usize,
}

impl ScratchSize {
    /// Scratch needed for pools of up to `max_pool` candidates and budgets of
    /// up to `max_budget` picks. Returns `None` if a count or the total byte
    /// size ([`ScratchSize::checked_bytes`]) overflows `usize`.
    #[must_use]
    pub const fn for_capacity(max_pool: usize, max_budget: usize) -> Option<ScratchSize> {
        let Some(gram) = max_pool.checked_mul(max_budget) else {
            return None;
        };
        let Some(p4) = max_pool.checked_mul(4) else {
            return None;
        };
        let Some(p7) = max_pool.checked_mul(7) else {
            return None;
        };
        let Some(gram2) = gram.checked_mul(2) else {
            return None;
        };
        let Some(f32s) = (match gram2.checked_add(p7) {
            Some(v) => v.checked_add(max_budget),
            None => None,
        }) else {
            return None;
        };
        let Some(k2) = max_budget.checked_mul(max_budget) else {
            return None;
        };
        let Some(f64s) = (match k2.checked_mul(2) {
            Some(v) => match v.checked_add(10 * max_budget) {
                Some(v) => v.checked_add(p4),
                None => None,
            },
            None => None,
        }) else {
            return None;
        };
        let Some(indices) = max_pool.checked_add(3 * max_budget) else {
            return None;
        };
        let size = ScratchSize {
            f32s,
            f64s,
            indices,
            steps: max_budget,
        };
        // The counts can fit while the byte total does not (on 32-bit
        // targets already at P·K ≈ 2^30): reject that too, so `bytes` of a
        // size from here is always exact.
        match size.checked_bytes() {
            Some(_) => Some(size),
            None => None,
        }
    }

    /// Total bytes of the four buffers, or `None` if it overflows `usize`.
    /// Depends on the target: `usize` is 4 or 8 bytes and so is the `usize`
    /// part of a [`Step`].
    pub const fn checked_bytes(&self) -> Option<usize> {
        let parts = [
            self.f32s.checked_mul(4),
            self.f64s.checked_mul(8),
            self.indices.checked_mul(core::mem::size_of::<usize>()),
            self.steps.checked_mul(core::mem::size_of::<Step>()),
        ];
        let mut total = 0usize;
        let mut i = 0;
        while i < parts.len() {
            let Some(part) = parts[i] else {
                return None;
            };
            let Some(sum) = total.checked_add(part) else {
                return None;
            };
            total = sum;
            i += 1;
        }
        Some(total)
    }

    /// Total bytes of the four buffers (exact for every size returned by
    /// [`ScratchSize::for_capacity`]; saturates at `usize::MAX` for a
    /// hand-made size whose total overflows, see
    /// [`checked_bytes`](Self::checked_bytes)).
    pub const fn bytes(&self) -> usize {
        match self.checked_bytes() {
            Some(b) => b,
            None => usize::MAX,
        }
    }
}

/// A view over caller-owned scratch memory of fixed capacity (P_max, K_max).
///
/// Results of a selector borrow from it (see [`SelectionView`](crate::SelectionView)).
///
/// Its `Debug` output shows the capacity and the shape of the last call,
/// not the buffers' contents.
pub struct Workspace<'a> {
    pub(crate) max_pool: usize,
    pub(crate) max_budget: usize,
    // f32, length P_max each
    /// Query similarities b_i (cosines, the f32 query pass).
    pub(crate) b: &'a mut [f32],
    /// Relevance ρ_i (−∞ for an excluded row in the QP and int8 loops).
    pub(crate) rho: &'a mut [f32],
    /// Scores U_i of the next pick (−∞ for unavailable rows).
    pub(crate) u: &'a mut [f32],
    /// Normalization scales s_i (1 = used as given; 0 = excluded).
    pub(crate) scale: &'a mut [f32],
    /// Squared norms ‖m_i‖² from the query pass.
    pub(crate) nsq: &'a mut [f32],
    /// The pool's similarities sorted descending (ρ of `Relevance::PoolOrder`).
    pub(crate) sorted: &'a mut [f32],
    /// Per candidate, the picks' Gram rows accumulated: their sum (centroid
    /// pursuit) or their maximum (MMR).
    pub(crate) row_acc: &'a mut [f32],
    // f32, K_max
    /// Coefficients fl32(γ α_j) of the score refresh, by free index.
    pub(crate) coef: &'a mut [f32],
    // f32, K_max rows of stride P_max
    /// Gram rows of the picks, row t = pick t (f32 pass or int8 pass).
    pub(crate) gram: &'a mut [f32],
    /// The refit's state: G_SS, the factor, α and the solver's vectors.
    pub(crate) solver: SolverState<'a>,
    /// The certified int8 pursuit's cache of f32 Gram entries (K_max rows
    /// of stride P_max): row `pos` holds G_{picks[pos], i} as the f32 pass
    /// computes it, for the candidates i verified so far; NaN = not
    /// computed.
    pub(crate) verified_gram: &'a mut [f32],
    // f64, P_max each: the certified int8 pursuit's per-row data
    /// Upper bound of ‖s_i m_i − w_i c_i‖ (int8 pursuit).
    pub(crate) err_bound: &'a mut [f64],
    /// Upper bound of ‖w_i c_i‖ (int8 pursuit).
    pub(crate) norm_bound: &'a mut [f64],
    /// w_i = s_i · scale_i rounded to f32: the approximate row is w_i c_i.
    pub(crate) wscale: &'a mut [f64],
    /// Upper bounds Ũ_i + B_i of the candidates still to verify in one
    /// certified argmax (int8 pursuit); −∞ for the others. In the
    /// recommended setting's loop: the reference pivot² r of each candidate
    /// whose Gram row was computed or that was marked represented.
    pub(crate) upper: &'a mut [f64],
    // usize
    pub(crate) state: &'a mut [usize],
    pub(crate) picks: &'a mut [usize],
    pub(crate) steps: &'a mut [Step],
    // result metadata of the last call
    pub(crate) pool: usize,
    pub(crate) excluded: usize,
    pub(crate) skipped: usize,
    pub(crate) stop: StopReason,
}

impl core::fmt::Debug for Workspace<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Workspace")
            .field("max_pool", &self.max_pool)
            .field("max_budget", &self.max_budget)
            .field("pool", &self.pool)
            .finish_non_exhaustive()
    }
}

fn take<'a, T>(buf: &mut &'a mut [T], n: usize) -> &'a mut [T] {
    let whole = core::mem::take(buf);
    let (head, tail) = whole.split_at_mut(n);
    *buf = tail;
    head
}

impl<'a> Workspace<'a> {
    /// Builds a workspace of capacity (`max_pool`, `max_budget`) over caller
    /// buffers. Each buffer must hold at least the corresponding count of
    /// [`ScratchSize::for_capacity`]; longer buffers are fine (the excess is
    /// unused). Contents are overwritten by every call.
    ///
    /// # Errors
    /// [`Error::BufferTooShort`] naming the first buffer that is shorter
    /// than its count (with its length and the length it needs), or
    /// [`Error::ScratchOverflow`] if the sizes overflow `usize`.
    pub fn from_buffers(
        max_pool: usize,
        max_budget: usize,
        mut f32s: &'a mut [f32],
        mut f64s: &'a mut [f64],
        mut indices: &'a mut [usize],
        steps: &'a mut [Step],
    ) -> Result<Self, Error> {
        let need =
            ScratchSize::for_capacity(max_pool, max_budget).ok_or(Error::ScratchOverflow {
                max_pool,
                max_budget,
            })?;
        for (buffer, needed, len) in [
            (ScratchBuffer::F32s, need.f32s, f32s.len()),
            (ScratchBuffer::F64s, need.f64s, f64s.len()),
            (ScratchBuffer::Indices, need.indices, indices.len()),
            (ScratchBuffer::Steps, need.steps, steps.len()),
        ] {
            if len < needed {
                return Err(Error::BufferTooShort {
                    buffer,
                    len,
                    needed,
                });
            }
        }
        let (p, k) = (max_pool, max_budget);
        Ok(Workspace {
            max_pool: p,
            max_budget: k,
            b: take(&mut f32s, p),
            rho: take(&mut f32s, p),
            u: take(&mut f32s, p),
            scale: take(&mut f32s, p),
            nsq: take(&mut f32s, p),
            sorted: take(&mut f32s, p),
            row_acc: take(&mut f32s, p),
            coef: take(&mut f32s, k),
            gram: take(&mut f32s, k * p),
            verified_gram: take(&mut f32s, k * p),
            solver: SolverState {
                k,
                gss: take(&mut f64s, k * k),
                chol: take(&mut f64s, k * k),
                alpha: take(&mut f64s, k),
                rho_s: take(&mut f64s, k),
                b_s: take(&mut f64s, k),
                u_s: take(&mut f64s, k),
                g_alpha: take(&mut f64s, k),
                trial: take(&mut f64s, k),
                w_rho: take(&mut f64s, k),
                w_one: take(&mut f64s, k),
                solve_a: take(&mut f64s, k),
                solve_b: take(&mut f64s, k),
                free: take(&mut indices, k),
                blocked: take(&mut indices, k),
                nfree: 0,
                nu: 0.0,
                pending: None,
            },
            err_bound: take(&mut f64s, p),
            norm_bound: take(&mut f64s, p),
            wscale: take(&mut f64s, p),
            upper: take(&mut f64s, p),
            state: take(&mut indices, p),
            picks: take(&mut indices, k),
            steps: &mut steps[..k],
            pool: 0,
            excluded: 0,
            skipped: 0,
            stop: StopReason::Budget,
        })
    }

    /// Maximum pool size P_max.
    pub fn max_pool(&self) -> usize {
        self.max_pool
    }

    /// Maximum budget K_max.
    pub fn max_budget(&self) -> usize {
        self.max_budget
    }

    /// Checks a call's shape against the capacity.
    pub(crate) fn check_capacity(&self, pool: usize, budget: usize) -> Result<(), Error> {
        if pool > self.max_pool {
            return Err(Error::CapacityExceeded {
                what: Capacity::Pool,
                needed: pool,
                capacity: self.max_pool,
            });
        }
        if budget > self.max_budget {
            return Err(Error::CapacityExceeded {
                what: Capacity::Budget,
                needed: budget,
                capacity: self.max_budget,
            });
        }
        Ok(())
    }
}

/// A workspace that owns its buffers as arrays: capacity `P` candidates and
/// budget `K`, no allocation. [`FixedWorkspace::view`] gives the
/// [`Workspace`] the selectors take.
///
/// Its size is [`ScratchSize::bytes`] rounded up to a multiple of 8 (the
/// same arrays, no extra fields): `FixedWorkspace<64, 16>` is 19,904 bytes on
/// 64-bit targets and 19,200 on 32-bit ones, `FixedWorkspace<200, 20>` is
/// 56,080 / 54,720 (table in `docs/PORTABILITY.md`). For small devices put
/// it in a `static` (or a `static mut` behind a critical section) rather than
/// on a small stack. Its `Debug` output shows the capacity only.
#[derive(Clone)]
pub struct FixedWorkspace<const P: usize, const K: usize> {
    vec_p: [[f32; P]; 7],
    coef: [f32; K],
    gram: [[f32; P]; K],
    verified_gram: [[f32; P]; K],
    mats: [[[f64; K]; K]; 2],
    vec_k: [[f64; K]; 10],
    vec_p64: [[f64; P]; 4],
    state: [usize; P],
    idx_k: [[usize; K]; 3],
    steps: [Step; K],
}

impl<const P: usize, const K: usize> core::fmt::Debug for FixedWorkspace<P, K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FixedWorkspace")
            .field("max_pool", &P)
            .field("max_budget", &K)
            .finish_non_exhaustive()
    }
}

impl<const P: usize, const K: usize> FixedWorkspace<P, K> {
    /// A zeroed workspace (usable in a `static`).
    #[must_use]
    pub const fn new() -> Self {
        const ZERO_STEP: Step = Step {
            index: 0,
            score: 0.0,
            residual_sq: 0.0,
            improvement: 0.0,
            fw_gap: 0.0,
            nu: 0.0,
            free_size: 0,
            solver_iterations: 0,
            filled: false,
            dependent: false,
            refit: crate::selection::RefitStatus::Optimal,
            verified: 0,
        };
        FixedWorkspace {
            vec_p: [[0.0; P]; 7],
            coef: [0.0; K],
            gram: [[0.0; P]; K],
            verified_gram: [[0.0; P]; K],
            mats: [[[0.0; K]; K]; 2],
            vec_k: [[0.0; K]; 10],
            vec_p64: [[0.0; P]; 4],
            state: [0; P],
            idx_k: [[0; K]; 3],
            steps: [ZERO_STEP; K],
        }
    }

    /// The [`Workspace`] view over these buffers.
    #[must_use]
    pub fn view(&mut self) -> Workspace<'_> {
        let [b, rho, u, scale, nsq, sorted, row_acc] = &mut self.vec_p;
        let [gss, chol] = &mut self.mats;
        let [alpha, rho_s, b_s, u_s, g_alpha, trial, w_rho, w_one, solve_a, solve_b] =
            &mut self.vec_k;
        let [picks, free, blocked] = &mut self.idx_k;
        let [err_bound, norm_bound, wscale, upper] = &mut self.vec_p64;
        Workspace {
            max_pool: P,
            max_budget: K,
            b,
            rho,
            u,
            scale,
            nsq,
            sorted,
            row_acc,
            coef: &mut self.coef,
            gram: self.gram.as_flattened_mut(),
            verified_gram: self.verified_gram.as_flattened_mut(),
            solver: SolverState {
                k: K,
                gss: gss.as_flattened_mut(),
                chol: chol.as_flattened_mut(),
                alpha,
                rho_s,
                b_s,
                u_s,
                g_alpha,
                trial,
                w_rho,
                w_one,
                solve_a,
                solve_b,
                free,
                blocked,
                nfree: 0,
                nu: 0.0,
                pending: None,
            },
            err_bound,
            norm_bound,
            wscale,
            upper,
            state: &mut self.state,
            picks,
            steps: &mut self.steps,
            pool: 0,
            excluded: 0,
            skipped: 0,
            stop: StopReason::Budget,
        }
    }
}

impl<const P: usize, const K: usize> Default for FixedWorkspace<P, K> {
    fn default() -> Self {
        Self::new()
    }
}
