//! Caller-owned, fixed-capacity scratch memory, sized per selector.
//!
//! The core never allocates. Every selector works in a [`Workspace`], a view
//! over buffers the caller owns, sized for a maximum pool size P_max, a
//! maximum budget K_max and a [`ScratchKind`]: the scratch of the
//! selectors it will run (in the spirit of faer's `StackReq`: a
//! selector's requirement, not the union of all). Top-K needs O(P) scratch,
//! centroid pursuit and MMR O(P) more, the paper's pursuit adds K Gram rows
//! and the refit's K × K state, and the certified int8 pursuit a second
//! K × P cache and its per-row radii. Two ways to get a workspace:
//!
//! * a fixed-size struct of arrays (const generics), for a `static`, the
//!   stack or a `Box`: [`TopKWorkspace`], [`CentroidWorkspace`],
//!   [`PursuitWorkspace`] or [`FixedWorkspace`] (every selector);
//! * [`Workspace::from_buffers`]: five caller slices, sized by
//!   [`ScratchSize::for_kind`] or [`ScratchSize::for_method`] (the
//!   `mempursuit` crate does this with `Vec`s).
//!
//! A call whose pool or effective budget exceeds the capacity fails with
//! [`Error::CapacityExceeded`], a selector that needs more than the
//! workspace's kind with [`Error::WorkspaceKind`]; the workspace is
//! reusable across calls of any shape within its capacity.
//!
//! # One meaning per buffer
//! The buffers every selector of a kind shares (the input phase's b, ρ,
//! scales; the scores `u`; the Gram rows; the refit's state) are fields of
//! [`Workspace`]. What only one scorer needs is not a shared field: the
//! workspace carries it as `ScorerScratch` and lends each scorer its own
//! typed view for the call (`Lent`: `ScreenedScratch` for the screened
//! pursuit's anchors and per-step state, `LazyCentroidScratch` for the
//! screened centroid pursuit's bounds and summed prefixes, `Int8Scratch`
//! for the certified argmax's bounds, `RepresentedScratch` for the
//! recommended setting's pivot marks), each buffer with one meaning and
//! its shape in its docs. The views share storage (the kinds' sizes are
//! unchanged), never at the same time: a scorer takes its view when it is
//! built and gives it back when its loop ends. Where a value stands for
//! "none" inside a caller's f32 or f64 buffer it is a named constant with
//! a doc (`UNMARKED`, `NOT_VERIFIED`; the screened scorer's
//! `NOT_COMPUTED` and `TO_VERIFY`); elsewhere `Option`.

use crate::error::{Capacity, Error, ScratchBuffer};
use crate::scratch::{gram_rows, ScratchKind, ScratchSize};
use crate::selection::{RefitStatus, SelectionView, States, Step, StopReason};
use crate::solver::{ActiveSet, SolverState};

/// The five caller buffers of [`Workspace::from_buffers`], each at least
/// as long as the corresponding count of [`ScratchSize`] (longer is fine:
/// the excess is unused).
#[derive(Debug)]
pub struct ScratchBuffers<'a> {
    /// [`ScratchSize::f32s`] elements.
    pub f32s: &'a mut [f32],
    /// [`ScratchSize::f64s`] elements.
    pub f64s: &'a mut [f64],
    /// [`ScratchSize::indices`] elements.
    pub indices: &'a mut [usize],
    /// [`ScratchSize::flags`] elements.
    pub flags: &'a mut [u8],
    /// [`ScratchSize::steps`] elements.
    pub steps: &'a mut [Step],
}

/// A view over caller-owned scratch memory of fixed capacity (P_max, K_max)
/// and [`ScratchKind`]. Every buffer has one meaning; a buffer that the
/// kind does not hold is empty.
///
/// Results of a selector borrow from it (see [`SelectionView`](crate::SelectionView)).
///
/// Its `Debug` output shows the capacity, the kind and the shape of the
/// last call, not the buffers' contents.
pub struct Workspace<'a> {
    pub(crate) max_pool: usize,
    pub(crate) max_budget: usize,
    pub(crate) kind: ScratchKind,
    // The input phase (every kind), f32, P_max each.
    /// Query similarities b_i (cosines, the f32 query pass).
    pub(crate) b: &'a mut [f32],
    /// Relevance ρ_i; the loops set it to −∞ for a candidate that can no
    /// longer be picked (excluded, skipped).
    pub(crate) rho: &'a mut [f32],
    /// Normalization scales s_i (1 = used as given; 0 = excluded).
    pub(crate) scale: &'a mut [f32],
    /// Squared norms ‖m_i‖² from the query pass.
    pub(crate) nsq: &'a mut [f32],
    /// Sort scratch of the input phase and the recommended rule: the
    /// usable candidates' similarities (or relevances) sorted descending.
    pub(crate) sorted: &'a mut [f32],
    /// Sort scratch of the input phase: the usable candidates in the order
    /// of the caller's scores of
    /// [`Relevance::RankedScores`](crate::Relevance::RankedScores) (ties
    /// by cosine), P_max.
    pub(crate) order: &'a mut [usize],
    /// Each candidate's [`CandidateState`](crate::selection::CandidateState).
    pub(crate) states: States<'a>,
    /// The picks, pool indices in entry order (K_max).
    pub(crate) picks: &'a mut [usize],
    /// One record per pick (K_max).
    pub(crate) steps: &'a mut [Step],
    // ≥ Centroid.
    /// Scores U_i of the next pick (−∞ for a candidate that cannot be
    /// picked); MMR's scores for MMR. The scorer owns it during a choose
    /// (`Scorer::choose`): the screened scorer keeps there, per candidate,
    /// the best value it knows of U_i in this choose (its bound rounded up
    /// to f32 until read, −∞ once read or unavailable, the exact score
    /// once verified).
    pub(crate) u: &'a mut [f32],
    /// Σ of the picks' Gram rows (centroid pursuit), in pick order.
    pub(crate) gram_sum: &'a mut [f32],
    /// max of the picks' Gram rows (MMR).
    pub(crate) gram_max: &'a mut [f32],
    /// Gram rows of the picks, stride P_max: row t = pick t in the paper's
    /// pursuit (K_max rows, ≥ Pursuit), row 0 = the newest pick in
    /// centroid pursuit and MMR (one row, ≥ Centroid). f32 passes, or the
    /// int8 pass's approximations in the int8 pursuit. The screened
    /// pursuit fills only the rows of its dense phase and keeps the
    /// residual direction −w̃ (d values, or two d-vectors for its
    /// ping-pong) in the space after them.
    pub(crate) gram: &'a mut [f32],
    /// The refit's state: G_SS, the factor, α and the solver's vectors
    /// (only α, the weights, below Pursuit).
    pub(crate) solver: SolverState<'a>,
    // ≥ Pursuit.
    /// Coefficients fl32(γ α_j) of the score refresh, by free index.
    pub(crate) coef: &'a mut [f32],
    // Int8.
    /// The certified int8 pursuit's cache of f32 Gram entries (K_max rows
    /// of stride P_max): row `pos` holds G_{picks[pos], i} as the f32 pass
    /// computes it, for the candidates i verified so far; [`NOT_VERIFIED`]
    /// for the others.
    pub(crate) verified_gram: &'a mut [f32],
    /// Upper bound of ‖s_i m_i − w_i c_i‖ (int8 pursuit), P_max.
    pub(crate) err_bound: &'a mut [f64],
    /// Upper bound of ‖w_i c_i‖ (int8 pursuit), P_max.
    pub(crate) norm_bound: &'a mut [f64],
    /// w_i = s_i · scale_i rounded to f32: the approximate row is w_i c_i
    /// (int8 pursuit), P_max.
    pub(crate) wscale: &'a mut [f64],
    // ≥ Centroid: lent to one scorer per call.
    /// The per-scorer scratch ([`ScorerScratch`]): each scorer that needs
    /// more than the buffers above borrows its own typed view for the
    /// call and gives it back.
    pub(crate) scorer: ScorerScratch<'a>,
    // Result metadata of the last call.
    /// Rows read by the last call (`SelectionView::rows_read`).
    pub(crate) rows_read: u64,
    pub(crate) pool: usize,
    pub(crate) excluded: usize,
    pub(crate) skipped: usize,
    /// Candidates marked over the cost budget (`CandidateState::OverBudget`).
    pub(crate) over_budget: usize,
    pub(crate) stop: StopReason,
}

/// K-vectors of the pursuit's part of a workspace: nine of the refit and
/// ten of the screened pursuit.
pub(crate) const QP_K: usize = 19;

/// An entry of `Workspace::verified_gram` not computed yet: NaN, which no
/// f32 Gram entry is (the passes keep entries finite). A sentinel rather
/// than a flag per entry: the cache is the caller's f32 buffer and the
/// test (`is_nan`) is one comparison in the verification's inner loop.
pub(crate) const NOT_VERIFIED: f32 = f32::NAN;

/// The carrier of per-scorer scratch: storage that one scorer at a time
/// borrows for a call as a typed view with one meaning per buffer
/// ([`ScreenedScratch`], [`LazyCentroidScratch`], [`Int8Scratch`],
/// [`RepresentedScratch`]; a [`Lent`] type). Holds two f64 and one index
/// P_max-vector (≥ Centroid) and the screened pursuit's per-step state
/// (≥ Pursuit; empty below). The scorer takes its view with
/// [`ScorerScratch::lend`] when it is built and gives it back with
/// [`ScorerScratch::give_back`] when its loop ends: while lent, the
/// carrier holds empty slices.
#[derive(Default)]
pub(crate) struct ScorerScratch<'a> {
    f64_p: [&'a mut [f64]; 2],
    index_p: &'a mut [usize],
    steps: ScreenState<'a>,
}

impl<'a> ScorerScratch<'a> {
    /// Lends the typed view `L` of this storage (until
    /// [`give_back`](Self::give_back)).
    pub(crate) fn lend<L: Lent<'a>>(&mut self) -> L {
        L::take(self)
    }

    /// Takes back a view that [`lend`](Self::lend) gave.
    pub(crate) fn give_back<L: Lent<'a>>(&mut self, view: L) {
        view.put(self);
    }
}

/// A typed view of [`ScorerScratch`], for one scorer.
pub(crate) trait Lent<'a> {
    /// Moves this view's buffers out of `from` (leaving them empty there).
    fn take(from: &mut ScorerScratch<'a>) -> Self;
    /// Moves them back.
    fn put(self, to: &mut ScorerScratch<'a>);
}

/// The screened pursuit's scratch (`pursuit/screened/mod.rs`, module docs):
/// each candidate's anchor (A_j, its step, p_j) and the per-step state.
pub(crate) struct ScreenedScratch<'a> {
    /// A_j: per candidate, an upper bound of ρ_j − m̂_j·w at the step of
    /// its anchor (`anchor_step[j]`). P_max.
    pub(crate) anchors: &'a mut [f64],
    /// Per candidate, the step (picks so far) of its anchor. P_max.
    pub(crate) anchor_step: &'a mut [usize],
    /// p_j: per candidate, an upper bound of the norm of m̂_j's component
    /// orthogonal to the query. P_max.
    pub(crate) perp: &'a mut [f64],
    /// The per-step state.
    pub(crate) steps: ScreenState<'a>,
}

impl<'a> Lent<'a> for ScreenedScratch<'a> {
    fn take(from: &mut ScorerScratch<'a>) -> Self {
        let [anchors, perp] = core::mem::take(&mut from.f64_p);
        ScreenedScratch {
            anchors,
            anchor_step: core::mem::take(&mut from.index_p),
            perp,
            steps: core::mem::take(&mut from.steps),
        }
    }
    fn put(self, to: &mut ScorerScratch<'a>) {
        to.f64_p = [self.anchors, self.perp];
        to.index_p = self.anchor_step;
        to.steps = self.steps;
    }
}

/// The screened centroid pursuit's scratch (`LazyCentroidScorer`).
pub(crate) struct LazyCentroidScratch<'a> {
    /// Per candidate, an upper bound of its score while it is still to be
    /// evaluated in the current choose; −∞ once evaluated or unavailable.
    /// P_max.
    pub(crate) upper: &'a mut [f64],
    /// Per candidate, how many leading picks' Gram entries are summed
    /// into its running sum (`Workspace::gram_sum`). P_max.
    pub(crate) summed: &'a mut [usize],
}

impl<'a> Lent<'a> for LazyCentroidScratch<'a> {
    fn take(from: &mut ScorerScratch<'a>) -> Self {
        LazyCentroidScratch {
            upper: core::mem::take(&mut from.f64_p[0]),
            summed: core::mem::take(&mut from.index_p),
        }
    }
    fn put(self, to: &mut ScorerScratch<'a>) {
        to.f64_p[0] = self.upper;
        to.index_p = self.summed;
    }
}

/// The certified int8 pursuit's scratch beyond its own buffers.
pub(crate) struct Int8Scratch<'a> {
    /// Per candidate, the upper bound Ũ_i + B_i of its f32 score while it
    /// may still be verified in the current choose; −∞ once verified or
    /// excluded. P_max.
    pub(crate) upper: &'a mut [f64],
}

impl<'a> Lent<'a> for Int8Scratch<'a> {
    fn take(from: &mut ScorerScratch<'a>) -> Self {
        Int8Scratch {
            upper: core::mem::take(&mut from.f64_p[0]),
        }
    }
    fn put(self, to: &mut ScorerScratch<'a>) {
        to.f64_p[0] = self.upper;
    }
}

/// The recommended setting's loop's scratch (`pursuit/represented.rs`).
pub(crate) struct RepresentedScratch<'a> {
    /// Per candidate marked represented, the reference pivot² r ∈ [0, 1]
    /// of the candidate that marked it; [`UNMARKED`] for the others.
    /// P_max.
    pub(crate) pivot_marks: &'a mut [f64],
}

/// [`RepresentedScratch::pivot_marks`] of a candidate not marked: below
/// every reference pivot² (which lies in [0, 1]), so `mark ≥ 0` is the
/// test for a mark. A sentinel rather than `Option<f64>`: the storage is
/// a caller's f64 buffer.
pub(crate) const UNMARKED: f64 = -1.0;

impl<'a> Lent<'a> for RepresentedScratch<'a> {
    fn take(from: &mut ScorerScratch<'a>) -> Self {
        RepresentedScratch {
            pivot_marks: core::mem::take(&mut from.f64_p[0]),
        }
    }
    fn put(self, to: &mut ScorerScratch<'a>) {
        to.f64_p[0] = self.pivot_marks;
    }
}

/// The screened pursuit's per-step state (`pursuit/screened/mod.rs`, module
/// docs): K-vectors and one K × K matrix, one meaning each. Steps
/// n = 1 … K are stored at index n − 1 (step 0, before any pick, has w = 0
/// and no entry).
#[derive(Default)]
pub(crate) struct ScreenState<'a> {
    /// G_{picks[pos], i} (f32 entries, widened) of the pick i just
    /// admitted, by position.
    pub(crate) pick_entries: &'a mut [f64],
    /// G_{picks[pos], j} of the best candidate verified in the last
    /// choose, for the free positions of that step (the screened scorer's
    /// `NOT_COMPUTED`, NaN, for the others).
    pub(crate) best_entries: &'a mut [f64],
    /// Per step n: ‖w_n‖² from G_SS (w_n = Σ_a c_a m̂_a, c the refresh
    /// coefficients of step n).
    pub(crate) w_sq: &'a mut [f64],
    /// Per step n: Σ_a c_a b_a (the f32 query similarities of the picks),
    /// ≈ q̂·w_n.
    pub(crate) w_q: &'a mut [f64],
    /// G_SS c_n of the current step, by position.
    pub(crate) h: &'a mut [f64],
    /// Per anchor step n₀ of the current choose, the coefficients of its
    /// candidates' bound ub_j = A_j + c0 + cb b_j + ca |b_j| + cp p_j +
    /// e1 |ρ_j|: cp (≥ the norm of w_n − w_n₀ orthogonal to q̂, with
    /// slack),
    pub(crate) drift_perp: &'a mut [f64],
    /// cb = −q̂·(w_n − w_n₀)/‖q̂‖² (from the picks' f32 b),
    pub(crate) drift_q: &'a mut [f64],
    /// ca (the error bound of cb's q̂·(w_n − w_n₀), scaled),
    pub(crate) drift_qerr: &'a mut [f64],
    /// c0 (the rest: b's error terms, E_j's constant part, slack); the
    /// screened scorer's `NOT_COMPUTED` (NaN) for an anchor step whose
    /// table this choose has not needed yet.
    pub(crate) drift_c0: &'a mut [f64],
    /// G_{picks[pos], j} of the candidate being verified, for the free
    /// positions.
    pub(crate) entries: &'a mut [f64],
    /// Row n − 1: the coefficients c_n of step n by position (0 for a
    /// position outside that step's free set), K × K.
    pub(crate) anchor_coef: &'a mut [f64],
}

impl core::fmt::Debug for Workspace<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Workspace")
            .field("max_pool", &self.max_pool)
            .field("max_budget", &self.max_budget)
            .field("kind", &self.kind)
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
    /// Builds a workspace of capacity (`max_pool`, `max_budget`) for the
    /// selectors of `kind` over caller buffers, each at least as long as
    /// the corresponding count of [`ScratchSize::for_kind`] (longer is
    /// fine; the excess is unused). Contents are overwritten by every call.
    ///
    /// # Errors
    /// [`Error::BufferTooShort`] naming the first buffer that is shorter
    /// than its count (with its length and the length it needs), or
    /// [`Error::ScratchOverflow`] if the sizes overflow `usize`.
    pub fn from_buffers(
        kind: ScratchKind,
        max_pool: usize,
        max_budget: usize,
        buffers: ScratchBuffers<'a>,
    ) -> Result<Self, Error> {
        let need =
            ScratchSize::for_kind(kind, max_pool, max_budget).ok_or(Error::ScratchOverflow {
                max_pool,
                max_budget,
            })?;
        let ScratchBuffers {
            mut f32s,
            mut f64s,
            mut indices,
            mut flags,
            steps,
        } = buffers;
        for (buffer, needed, len) in [
            (ScratchBuffer::F32s, need.f32s, f32s.len()),
            (ScratchBuffer::F64s, need.f64s, f64s.len()),
            (ScratchBuffer::Indices, need.indices, indices.len()),
            (ScratchBuffer::Flags, need.flags, flags.len()),
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
        let on = |part: ScratchKind, n: usize| if kind >= part { n } else { 0 };
        let mut f32s = |n: usize| take(&mut f32s, n);
        let input = [(); 5].map(|()| f32s(p));
        let loop_p = [(); 3].map(|()| f32s(on(ScratchKind::Centroid, p)));
        let gram = f32s(gram_rows(kind, k) * p);
        let coef = f32s(on(ScratchKind::Pursuit, k));
        let verified_gram = f32s(on(ScratchKind::Int8, k * p));
        let mut f64s = |n: usize| take(&mut f64s, n);
        let alpha = f64s(on(ScratchKind::Centroid, k));
        let screen_p = [(); 2].map(|()| f64s(on(ScratchKind::Centroid, p)));
        let qp_k = [(); QP_K].map(|()| f64s(on(ScratchKind::Pursuit, k)));
        let qp_kk = [(); 3].map(|()| f64s(on(ScratchKind::Pursuit, k * k)));
        let int8_p = [(); 3].map(|()| f64s(on(ScratchKind::Int8, p)));
        let picks = take(&mut indices, k);
        let order = take(&mut indices, p);
        let known = take(&mut indices, on(ScratchKind::Centroid, p));
        let free = take(&mut indices, on(ScratchKind::Pursuit, k));
        let states = take(&mut flags, p);
        let memberships = take(&mut flags, on(ScratchKind::Pursuit, k));
        Ok(Workspace::assemble(
            kind,
            (p, k),
            Parts {
                input,
                loop_p,
                gram,
                coef,
                verified_gram,
                alpha,
                screen_p,
                qp_k,
                qp_kk,
                int8_p,
                picks,
                order,
                known,
                free,
                states,
                memberships,
                steps: &mut steps[..k],
            },
        ))
    }

    /// The workspace of `kind` and capacity (P, K) over `parts`, each of
    /// exactly the length that kind needs (0 for a part it does not hold).
    fn assemble(kind: ScratchKind, (p, k): (usize, usize), parts: Parts<'a>) -> Self {
        let Parts {
            input: [b, rho, scale, nsq, sorted],
            loop_p: [u, gram_sum, gram_max],
            gram,
            coef,
            verified_gram,
            alpha,
            screen_p: [upper, perp],
            qp_k:
                [rho_s, b_s, u_s, g_alpha, trial, solve_a, solve_b, w_rho, w_one, pick_entries, best_entries, w_sq, w_q, h, drift_perp, drift_q, drift_qerr, drift_c0, entries],
            qp_kk: [gss, chol, anchor_coef],
            int8_p: [err_bound, norm_bound, wscale],
            picks,
            order,
            known,
            free,
            states,
            memberships,
            steps,
        } = parts;
        Workspace {
            max_pool: p,
            max_budget: k,
            kind,
            b,
            rho,
            scale,
            nsq,
            sorted,
            order,
            states: States::new(states),
            picks,
            steps,
            u,
            gram_sum,
            gram_max,
            gram,
            coef,
            solver: SolverState {
                k,
                alpha,
                gss,
                rho_s,
                b_s,
                u_s,
                g_alpha,
                trial,
                solve_a,
                solve_b,
                active: ActiveSet::new(k, chol, free, memberships, w_rho, w_one),
                warm_nu: None,
                staged: None,
            },
            verified_gram,
            err_bound,
            norm_bound,
            wscale,
            scorer: ScorerScratch {
                f64_p: [upper, perp],
                index_p: known,
                steps: ScreenState {
                    pick_entries,
                    best_entries,
                    w_sq,
                    w_q,
                    h,
                    drift_perp,
                    drift_q,
                    drift_qerr,
                    drift_c0,
                    entries,
                    anchor_coef,
                },
            },
            rows_read: 0,
            pool: 0,
            excluded: 0,
            skipped: 0,
            over_budget: 0,
            stop: StopReason::Budget,
        }
    }

    /// Maximum pool size P_max.
    pub fn max_pool(&self) -> usize {
        self.max_pool
    }

    /// Maximum budget K_max.
    pub fn max_budget(&self) -> usize {
        self.max_budget
    }

    /// The selectors this workspace has the scratch for.
    pub fn kind(&self) -> ScratchKind {
        self.kind
    }

    /// Checks that this workspace holds the scratch of `needed` (before
    /// any work).
    pub(crate) fn require(&self, needed: ScratchKind) -> Result<(), Error> {
        if self.kind < needed {
            return Err(Error::WorkspaceKind {
                needed,
                found: self.kind,
            });
        }
        Ok(())
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

    /// The result of the last call: its first `len` picks, with the weights
    /// (the pursuit family) or without (the baselines).
    pub(crate) fn selection(&self, len: usize, with_weights: bool) -> SelectionView<'_> {
        SelectionView {
            picks: &self.picks[..len],
            weights: if with_weights {
                &self.solver.alpha[..len]
            } else {
                &[]
            },
            steps: &self.steps[..len],
            states: self.states.view(self.pool),
            rows_read: self.rows_read,
            excluded: self.excluded,
            skipped: self.skipped,
            stop: self.stop,
        }
    }
}

/// The slices of one workspace, each exactly as long as its kind needs (0
/// for a part the kind does not hold), in the order
/// [`Workspace::from_buffers`] carves them.
struct Parts<'a> {
    /// b, ρ, scales, squared norms, the sorted cosines (P each).
    input: [&'a mut [f32]; 5],
    /// u, the Gram-row sum, the Gram-row maximum (P each, ≥ Centroid).
    loop_p: [&'a mut [f32]; 3],
    /// The Gram rows ([`gram_rows`] × P).
    gram: &'a mut [f32],
    /// The refresh coefficients (K, ≥ Pursuit).
    coef: &'a mut [f32],
    /// The int8 pursuit's f32 entries (K·P, Int8).
    verified_gram: &'a mut [f32],
    /// α (K, ≥ Centroid).
    alpha: &'a mut [f64],
    /// The per-scorer scratch's two f64 P-vectors (≥ Centroid;
    /// [`ScorerScratch`]).
    screen_p: [&'a mut [f64]; 2],
    /// ρ_S, b_S, U_S, G_SS α, the trial point, two solve vectors, w_ρ, w₁,
    /// and the screened pursuit's nine K-vectors (K each, ≥ Pursuit).
    qp_k: [&'a mut [f64]; QP_K],
    /// G_SS, its Cholesky factor and the screened pursuit's anchor
    /// coefficients (K² each, ≥ Pursuit).
    qp_kk: [&'a mut [f64]; 3],
    /// The int8 radii, norm bounds and scales (P each, Int8).
    int8_p: [&'a mut [f64]; 3],
    /// The picks (K).
    picks: &'a mut [usize],
    /// The ranking order (P).
    order: &'a mut [usize],
    /// The per-scorer scratch's index P-vector (≥ Centroid;
    /// [`ScorerScratch`]).
    known: &'a mut [usize],
    /// The free set (K, ≥ Pursuit).
    free: &'a mut [usize],
    /// The candidates' states (P).
    states: &'a mut [u8],
    /// The positions' memberships (K, ≥ Pursuit).
    memberships: &'a mut [u8],
    /// The step records (K).
    steps: &'a mut [Step],
}

/// A zeroed [`Step`] (for the `const` constructors).
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
    refit: RefitStatus::Optimal,
    verified: 0,
};

/// Rows of a `[[T; N]; M]` as M slices.
fn rows<T, const N: usize, const M: usize>(a: &mut [[T; N]; M]) -> [&mut [T]; M] {
    a.each_mut().map(|r| &mut r[..])
}

/// M empty slices.
fn none<'a, T, const M: usize>() -> [&'a mut [T]; M] {
    core::array::from_fn(|_| Default::default())
}

/// `Debug` (capacity only) and `Default` (= `new`) of a fixed workspace.
macro_rules! fixed_common {
    ($name:ident) => {
        impl<const P: usize, const K: usize> core::fmt::Debug for $name<P, K> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("max_pool", &P)
                    .field("max_budget", &K)
                    .finish_non_exhaustive()
            }
        }

        impl<const P: usize, const K: usize> Default for $name<P, K> {
            fn default() -> Self {
                Self::new()
            }
        }
    };
}

/// A workspace that owns its buffers as arrays, for [`top_k`](crate::top_k)
/// only ([`ScratchKind::TopK`]): capacity `P` candidates and budget `K`,
/// no allocation. Its size is [`ScratchSize::bytes`] of
/// `ScratchSize::for_kind(ScratchKind::TopK, P, K)` rounded up to a
/// multiple of 8 (table in `docs/PORTABILITY.md`).
#[derive(Clone)]
pub struct TopKWorkspace<const P: usize, const K: usize> {
    input: [[f32; P]; 5],
    picks: [usize; K],
    order: [usize; P],
    states: [u8; P],
    steps: [Step; K],
}

impl<const P: usize, const K: usize> TopKWorkspace<P, K> {
    /// A zeroed workspace (usable in a `static`).
    #[must_use]
    pub const fn new() -> Self {
        TopKWorkspace {
            input: [[0.0; P]; 5],
            picks: [0; K],
            order: [0; P],
            states: [0; P],
            steps: [ZERO_STEP; K],
        }
    }

    /// The [`Workspace`] view over these buffers.
    #[must_use]
    pub fn view(&mut self) -> Workspace<'_> {
        Workspace::assemble(
            ScratchKind::TopK,
            (P, K),
            Parts {
                input: rows(&mut self.input),
                loop_p: none(),
                gram: &mut [],
                coef: &mut [],
                verified_gram: &mut [],
                alpha: &mut [],
                screen_p: none(),
                qp_k: none(),
                qp_kk: none(),
                int8_p: none(),
                picks: &mut self.picks,
                order: &mut self.order,
                known: &mut [],
                free: &mut [],
                states: &mut self.states,
                memberships: &mut [],
                steps: &mut self.steps,
            },
        )
    }
}

fixed_common!(TopKWorkspace);

/// A workspace that owns its buffers as arrays, for centroid pursuit, the
/// [`recommended`](crate::recommended) setting, [`mmr`](crate::mmr) and
/// [`top_k`](crate::top_k) ([`ScratchKind::Centroid`]): capacity `P`
/// candidates and budget `K`, no allocation, O(P + K) bytes. Its size is
/// [`ScratchSize::bytes`] of `ScratchSize::for_kind(ScratchKind::Centroid,
/// P, K)` rounded up to a multiple of 8 (table in `docs/PORTABILITY.md`).
#[derive(Clone)]
pub struct CentroidWorkspace<const P: usize, const K: usize> {
    input: [[f32; P]; 5],
    loop_p: [[f32; P]; 3],
    gram: [f32; P],
    alpha: [f64; K],
    screen_p: [[f64; P]; 2],
    picks: [usize; K],
    order: [usize; P],
    known: [usize; P],
    states: [u8; P],
    steps: [Step; K],
}

impl<const P: usize, const K: usize> CentroidWorkspace<P, K> {
    /// A zeroed workspace (usable in a `static`).
    #[must_use]
    pub const fn new() -> Self {
        CentroidWorkspace {
            input: [[0.0; P]; 5],
            loop_p: [[0.0; P]; 3],
            gram: [0.0; P],
            alpha: [0.0; K],
            screen_p: [[0.0; P]; 2],
            picks: [0; K],
            order: [0; P],
            known: [0; P],
            states: [0; P],
            steps: [ZERO_STEP; K],
        }
    }

    /// The [`Workspace`] view over these buffers.
    #[must_use]
    pub fn view(&mut self) -> Workspace<'_> {
        Workspace::assemble(
            ScratchKind::Centroid,
            (P, K),
            Parts {
                input: rows(&mut self.input),
                loop_p: rows(&mut self.loop_p),
                gram: &mut self.gram,
                coef: &mut [],
                verified_gram: &mut [],
                alpha: &mut self.alpha,
                screen_p: rows(&mut self.screen_p),
                qp_k: none(),
                qp_kk: none(),
                int8_p: none(),
                picks: &mut self.picks,
                order: &mut self.order,
                known: &mut self.known,
                free: &mut [],
                states: &mut self.states,
                memberships: &mut [],
                steps: &mut self.steps,
            },
        )
    }
}

fixed_common!(CentroidWorkspace);

/// Declares a fixed workspace with the pursuit's arrays (and the int8
/// pursuit's, for [`FixedWorkspace`]).
macro_rules! pursuit_workspace {
    ($(#[$doc:meta])* $name:ident, $kind:expr, { $($extra:ident: $ty:ty = $zero:expr),* }) => {
        $(#[$doc])*
        #[derive(Clone)]
        pub struct $name<const P: usize, const K: usize> {
            input: [[f32; P]; 5],
            loop_p: [[f32; P]; 3],
            gram: [[f32; P]; K],
            coef: [f32; K],
            alpha: [f64; K],
            screen_p: [[f64; P]; 2],
            qp_k: [[f64; K]; QP_K],
            qp_kk: [[[f64; K]; K]; 3],
            picks: [usize; K],
            order: [usize; P],
            known: [usize; P],
            free: [usize; K],
            states: [u8; P],
            memberships: [u8; K],
            steps: [Step; K],
            $($extra: $ty,)*
        }

        impl<const P: usize, const K: usize> $name<P, K> {
            /// A zeroed workspace (usable in a `static`).
            #[must_use]
            pub const fn new() -> Self {
                $name {
                    input: [[0.0; P]; 5],
                    loop_p: [[0.0; P]; 3],
                    gram: [[0.0; P]; K],
                    coef: [0.0; K],
                    alpha: [0.0; K],
                    screen_p: [[0.0; P]; 2],
                    qp_k: [[0.0; K]; QP_K],
                    qp_kk: [[[0.0; K]; K]; 3],
                    picks: [0; K],
                    order: [0; P],
                    known: [0; P],
                    free: [0; K],
                    states: [0; P],
                    memberships: [0; K],
                    steps: [ZERO_STEP; K],
                    $($extra: $zero,)*
                }
            }

            /// The [`Workspace`] view over these buffers.
            #[must_use]
            pub fn view(&mut self) -> Workspace<'_> {
                let [gss, chol, anchor_coef] = &mut self.qp_kk;
                #[allow(unused_mut)]
                let mut parts = Parts {
                    input: rows(&mut self.input),
                    loop_p: rows(&mut self.loop_p),
                    gram: self.gram.as_flattened_mut(),
                    coef: &mut self.coef,
                    verified_gram: &mut [],
                    alpha: &mut self.alpha,
                    screen_p: rows(&mut self.screen_p),
                    qp_k: rows(&mut self.qp_k),
                    qp_kk: [
                        gss.as_flattened_mut(),
                        chol.as_flattened_mut(),
                        anchor_coef.as_flattened_mut(),
                    ],
                    int8_p: none(),
                    picks: &mut self.picks,
                    order: &mut self.order,
                    known: &mut self.known,
                    free: &mut self.free,
                    states: &mut self.states,
                    memberships: &mut self.memberships,
                    steps: &mut self.steps,
                };
                $(parts.$extra = pursuit_workspace!(@view self.$extra, $extra);)*
                Workspace::assemble($kind, (P, K), parts)
            }
        }

        fixed_common!($name);
    };
    (@view $e:expr, verified_gram) => { $e.as_flattened_mut() };
    (@view $e:expr, int8_p) => { rows(&mut $e) };
}

pursuit_workspace!(
    /// A workspace that owns its buffers as arrays, for every selector but
    /// the certified int8 pursuit ([`ScratchKind::Pursuit`]: the paper's
    /// pursuit and its family on f32, f16 or bf16 storage, centroid
    /// pursuit, the recommended setting, MMR and top-K): capacity `P`
    /// candidates and budget `K`, no allocation. Its size is
    /// [`ScratchSize::bytes`] of `ScratchSize::for_kind(ScratchKind::Pursuit,
    /// P, K)` rounded up to a multiple of 8 (table in
    /// `docs/PORTABILITY.md`). For small devices put it in a `static` (or a
    /// `static mut` behind a critical section) rather than on a small
    /// stack. Its `Debug` output shows the capacity only.
    PursuitWorkspace, ScratchKind::Pursuit, {}
);

pursuit_workspace!(
    /// A workspace that owns its buffers as arrays, for every selector
    /// ([`ScratchKind::Int8`], the general case): capacity `P` candidates
    /// and budget `K`, no allocation. [`FixedWorkspace::view`] gives the
    /// [`Workspace`] the selectors take. For fewer selectors the smaller
    /// [`PursuitWorkspace`], [`CentroidWorkspace`] and [`TopKWorkspace`]
    /// hold only what those need.
    ///
    /// Its size is [`ScratchSize::bytes`] of [`ScratchSize::for_capacity`]
    /// rounded up to a multiple of 8 (the same arrays, no extra fields):
    /// the table in `docs/PORTABILITY.md` gives it for typical capacities.
    /// For small devices put it in a `static` (or a `static mut` behind a
    /// critical section) rather than on a small stack. Its `Debug` output
    /// shows the capacity only.
    FixedWorkspace, ScratchKind::Int8, {
        verified_gram: [[f32; P]; K] = [[0.0; P]; K],
        int8_p: [[f64; P]; 3] = [[0.0; P]; 3]
    }
);
