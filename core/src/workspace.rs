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

use crate::error::{Capacity, Error};
use crate::selection::{Step, StopReason};

pub(crate) const AVAILABLE: usize = 0;
pub(crate) const SELECTED: usize = 1;
pub(crate) const EXCLUDED: usize = 2;

/// How many elements of each type a workspace of a given capacity needs
/// (in the spirit of faer's `*_scratch` functions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScratchSize {
    /// f32 elements: 5·P_max (similarities, relevance, scores, norms'
    /// scales, one accumulator row) + K_max·P_max (the Gram rows of the picks).
    pub f32s: usize,
    /// f64 elements: 2·K_max² (G_SS and its Cholesky factor) + 7·K_max
    /// + 5·P_max (exact scales and similarities, the per-row error radii
    /// and int8 scales of the certified int8 pursuit) + K_max·P_max (its
    /// cache of exact Gram entries).
    pub f64s: usize,
    /// usize elements: 2·P_max (candidate states, exact-cache fill) +
    /// 3·K_max (picks, free set, blocked flags).
    pub indices: usize,
    /// [`Step`] records: K_max.
    pub steps: usize,
}

impl ScratchSize {
    /// Scratch needed for pools of up to `max_pool` candidates and budgets of
    /// up to `max_budget` picks. Returns `None` if a count or the total byte
    /// size ([`ScratchSize::checked_bytes`]) overflows `usize`.
    pub const fn for_capacity(max_pool: usize, max_budget: usize) -> Option<ScratchSize> {
        let Some(gram) = max_pool.checked_mul(max_budget) else {
            return None;
        };
        let Some(p5) = max_pool.checked_mul(5) else {
            return None;
        };
        let Some(f32s) = gram.checked_add(p5) else {
            return None;
        };
        let Some(k2) = max_budget.checked_mul(max_budget) else {
            return None;
        };
        let Some(f64s) = (match k2.checked_mul(2) {
            Some(v) => v.checked_add(7 * max_budget),
            None => None,
        }) else {
            return None;
        };
        let Some(f64s) = (match f64s.checked_add(gram) {
            Some(v) => v.checked_add(p5),
            None => None,
        }) else {
            return None;
        };
        let Some(indices) = (match max_pool.checked_mul(2) {
            Some(v) => v.checked_add(3 * max_budget),
            None => None,
        }) else {
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
#[derive(Debug)]
pub struct Workspace<'a> {
    pub(crate) max_pool: usize,
    pub(crate) max_budget: usize,
    // f32, length P_max each
    pub(crate) b: &'a mut [f32],
    pub(crate) rho: &'a mut [f32],
    pub(crate) u: &'a mut [f32],
    pub(crate) scale: &'a mut [f32],
    pub(crate) acc: &'a mut [f32],
    // f32, K_max rows of stride P_max
    pub(crate) gram: &'a mut [f32],
    // f64, K_max x K_max each
    pub(crate) gss: &'a mut [f64],
    pub(crate) chol: &'a mut [f64],
    // f64, K_max each
    pub(crate) alpha: &'a mut [f64],
    pub(crate) rho_s: &'a mut [f64],
    pub(crate) b_s: &'a mut [f64],
    pub(crate) u_s: &'a mut [f64],
    pub(crate) x: &'a mut [f64],
    pub(crate) y: &'a mut [f64],
    pub(crate) trial: &'a mut [f64],
    // f64, P_max each: exact small parts (f32 and int8 pursuit) and the
    // certified int8 pursuit's per-row data
    /// σ_i in f64 (1 for a near-unit row, else 1/‖m_i‖); NaN = not computed.
    pub(crate) sigma: &'a mut [f64],
    /// b_i = σ_i σ_q (m_i · q) in f64; NaN = not computed.
    pub(crate) b_exact: &'a mut [f64],
    /// Upper bound of ‖σ_i m_i − w_i c_i‖ (int8 pursuit).
    pub(crate) err_bound: &'a mut [f64],
    /// Upper bound of ‖w_i c_i‖ (int8 pursuit).
    pub(crate) norm_bound: &'a mut [f64],
    /// w_i = σ_i s_i rounded to f32: the approximate row is w_i c_i.
    pub(crate) wscale: &'a mut [f64],
    // f64, K_max rows of stride P_max: exact G_{pick_s, i} (int8 pursuit)
    pub(crate) exact_gram: &'a mut [f64],
    // usize
    pub(crate) state: &'a mut [usize],
    /// Number of picks whose exact Gram entry with candidate i is cached.
    pub(crate) cached: &'a mut [usize],
    pub(crate) picks: &'a mut [usize],
    pub(crate) free: &'a mut [usize],
    pub(crate) blocked: &'a mut [usize],
    pub(crate) steps: &'a mut [Step],
    // result metadata of the last call
    pub(crate) pool: usize,
    pub(crate) excluded: usize,
    pub(crate) stop: StopReason,
    /// Size of the free set (the factor's order), kept across pursuit steps.
    pub(crate) nfree: usize,
    /// ν of the last refit (the warm start of the next one).
    pub(crate) nu: f64,
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
    /// [`Error::CapacityExceeded`] (with `what = Pool`, `needed` = the
    /// required element count of the first buffer that is too short, and
    /// `capacity` = its length) if a buffer is too small or the sizes overflow.
    pub fn from_buffers(
        max_pool: usize,
        max_budget: usize,
        mut f32s: &'a mut [f32],
        mut f64s: &'a mut [f64],
        mut indices: &'a mut [usize],
        steps: &'a mut [Step],
    ) -> Result<Self, Error> {
        let need =
            ScratchSize::for_capacity(max_pool, max_budget).ok_or(Error::CapacityExceeded {
                what: Capacity::Pool,
                needed: max_pool,
                capacity: 0,
            })?;
        for (needed, capacity) in [
            (need.f32s, f32s.len()),
            (need.f64s, f64s.len()),
            (need.indices, indices.len()),
            (need.steps, steps.len()),
        ] {
            if capacity < needed {
                return Err(Error::CapacityExceeded {
                    what: Capacity::Pool,
                    needed,
                    capacity,
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
            acc: take(&mut f32s, p),
            gram: take(&mut f32s, k * p),
            gss: take(&mut f64s, k * k),
            chol: take(&mut f64s, k * k),
            alpha: take(&mut f64s, k),
            rho_s: take(&mut f64s, k),
            b_s: take(&mut f64s, k),
            u_s: take(&mut f64s, k),
            x: take(&mut f64s, k),
            y: take(&mut f64s, k),
            trial: take(&mut f64s, k),
            sigma: take(&mut f64s, p),
            b_exact: take(&mut f64s, p),
            err_bound: take(&mut f64s, p),
            norm_bound: take(&mut f64s, p),
            wscale: take(&mut f64s, p),
            exact_gram: take(&mut f64s, k * p),
            state: take(&mut indices, p),
            cached: take(&mut indices, p),
            picks: take(&mut indices, k),
            free: take(&mut indices, k),
            blocked: take(&mut indices, k),
            steps: &mut steps[..k],
            pool: 0,
            excluded: 0,
            stop: StopReason::Budget,
            nfree: 0,
            nu: 0.0,
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

    /// Row `t` of the stored Gram rows (length P of the current call).
    pub(crate) fn gram_row(&self, t: usize) -> &[f32] {
        let p = self.max_pool;
        &self.gram[t * p..t * p + self.pool]
    }
}

/// A workspace that owns its buffers as arrays: capacity `P` candidates and
/// budget `K`, no allocation. [`FixedWorkspace::view`] gives the
/// [`Workspace`] the selectors take.
///
/// Its size is [`ScratchSize::bytes`] rounded up to a multiple of 8 (the
/// same arrays, no extra fields): `FixedWorkspace<64, 16>` is 24,064 bytes on
/// 64-bit targets and 23,104 on 32-bit ones, `FixedWorkspace<200, 20>` is
/// 73,120 / 70,960 (table in `docs/PORTABILITY.md`). For small devices put
/// it in a `static` (or a `static mut` behind a critical section) rather than
/// on a small stack.
#[derive(Debug, Clone)]
pub struct FixedWorkspace<const P: usize, const K: usize> {
    vec_p: [[f32; P]; 5],
    gram: [[f32; P]; K],
    mats: [[[f64; K]; K]; 2],
    vec_k: [[f64; K]; 7],
    vec_p64: [[f64; P]; 5],
    exact_gram: [[f64; P]; K],
    state: [[usize; P]; 2],
    idx_k: [[usize; K]; 3],
    steps: [Step; K],
}

impl<const P: usize, const K: usize> FixedWorkspace<P, K> {
    /// A zeroed workspace (usable in a `static`).
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
            refit: crate::selection::RefitStatus::Optimal,
            verified: 0,
        };
        FixedWorkspace {
            vec_p: [[0.0; P]; 5],
            gram: [[0.0; P]; K],
            mats: [[[0.0; K]; K]; 2],
            vec_k: [[0.0; K]; 7],
            vec_p64: [[0.0; P]; 5],
            exact_gram: [[0.0; P]; K],
            state: [[0; P]; 2],
            idx_k: [[0; K]; 3],
            steps: [ZERO_STEP; K],
        }
    }

    /// The [`Workspace`] view over these buffers.
    pub fn view(&mut self) -> Workspace<'_> {
        let [b, rho, u, scale, acc] = &mut self.vec_p;
        let [gss, chol] = &mut self.mats;
        let [alpha, rho_s, b_s, u_s, x, y, trial] = &mut self.vec_k;
        let [picks, free, blocked] = &mut self.idx_k;
        let [sigma, b_exact, err_bound, norm_bound, wscale] = &mut self.vec_p64;
        let [state, cached] = &mut self.state;
        Workspace {
            max_pool: P,
            max_budget: K,
            b,
            rho,
            u,
            scale,
            acc,
            gram: self.gram.as_flattened_mut(),
            gss: gss.as_flattened_mut(),
            chol: chol.as_flattened_mut(),
            alpha,
            rho_s,
            b_s,
            u_s,
            x,
            y,
            trial,
            sigma,
            b_exact,
            err_bound,
            norm_bound,
            wscale,
            exact_gram: self.exact_gram.as_flattened_mut(),
            state,
            cached,
            picks,
            free,
            blocked,
            steps: &mut self.steps,
            pool: 0,
            excluded: 0,
            stop: StopReason::Budget,
            nfree: 0,
            nu: 0.0,
        }
    }
}

impl<const P: usize, const K: usize> Default for FixedWorkspace<P, K> {
    fn default() -> Self {
        Self::new()
    }
}
