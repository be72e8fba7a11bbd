//! The input contract shared by every selector and its validation pass.
//!
//! One pass over the P × d candidate matrix computes each row's squared norm
//! and its dot product with the query; the same numbers give the validation
//! verdict, the normalization scale and the query similarities b.

use core::cmp::Ordering;

use crate::error::{Error, VectorFault};
use crate::kernels::sealed::{Mat, Rows};
use crate::kernels::{self, Element, Executor};
use crate::options::{
    InputPolicy, InvalidCandidates, Normalization, MAX_NORM, MIN_NORM, UNIT_NORM_TOLERANCE,
};
use crate::selection::{CandidateState, States, StopReason};
use crate::workspace::Workspace;

/// Where the relevance ρ of the [relevance-scaled
/// family](crate#the-relevance-scaled-family) and of the baselines' ranking
/// comes from.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Relevance<'a> {
    /// ρ = b, the query similarities (cosines). The paper's method.
    #[default]
    Similarity,
    /// The caller's first-stage scores used as given, one per candidate
    /// (length P, finite): raw use. γ is then in the scores' units, so a γ
    /// measured on cosines is wrong by the ratio of the two scales (for
    /// reciprocal-rank-fusion scores, which span about 0.01–0.03 across a
    /// pool, by 10× or more). Prefer [`Relevance::RankedScores`] unless the
    /// scores are already cosines of this encoder.
    Scores(&'a [f32]),
    /// The pool is given in first-stage order (row 0 ranked first): the row at
    /// rank k gets the k-th largest query similarity of the pool. Keeps the
    /// retriever's order while speaking in the encoder's cosine units.
    /// The same as [`Relevance::RankedScores`] with strictly decreasing scores.
    PoolOrder,
    /// Unit-free relevance: the caller's scores (length P, finite, any
    /// scale or sign; only their order is used), mapped onto the pool's own
    /// cosine scale. The candidate with the k-th largest score gets the k-th
    /// largest query cosine b of the pool. Equal scores carry no order, so
    /// the query cosine orders them: among candidates with equal scores the
    /// one closer to the query ranks first (all-equal scores give ρ = b,
    /// the cosine relevance); candidates equal in both score and cosine
    /// share the mean of the cosines of their ranks. Excluded rows
    /// ([`InvalidCandidates::Exclude`](crate::InvalidCandidates::Exclude))
    /// take no rank. γ then means the same thing for every retriever: ρ is in
    /// the units of the similarity term it is traded against.
    RankedScores(&'a [f32]),
}

/// A query, its candidate pool and (optionally) the candidates' relevance.
///
/// * `query`: d values, f32 (d ≥ 1).
/// * `candidates`: P × d values, row-major (row i is candidate i), stored as
///   `E`: f32 by default, or (feature `half`) `half::f16` / `half::bf16`,
///   which halve the bytes each pass over the matrix reads (see
///   [`Element`]; build such an input with [`Input::with_storage`]).
///   P = `candidates.len() / d`; P = 0 is valid and selects nothing.
/// * `relevance`: see [`Relevance`].
/// * `cost_budget`: optionally, each candidate's cost and the total the
///   picks may cost (budgets in tokens); see [`CostBudget`] and
///   [`Input::with_costs`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Input<'a, E = f32> {
    /// Query embedding, length d.
    pub query: &'a [f32],
    /// Candidate embeddings, row-major P × d; or, with `ids`, an N × d
    /// matrix (e.g. a store's rows) from which the pool is read by id.
    pub candidates: &'a [E],
    /// The pool by row id (default `None`): `Some(ids)` makes candidate i
    /// row `ids[i]` of `candidates` (each id < N, any order, repeats
    /// allowed), so P = `ids.len()`, and the rows are read in place, never
    /// copied: the selection equals, bit for bit, the selection on the
    /// gathered P × d matrix `rows[ids[0]], rows[ids[1]], …` (picks are
    /// positions in `ids`). `None`: candidate i is row i. See
    /// [`Input::with_ids`].
    pub ids: Option<&'a [usize]>,
    /// Relevance ρ (default: ρ = b).
    pub relevance: Relevance<'a>,
    /// Costs and their total (default: none, only the count budget K).
    pub cost_budget: Option<CostBudget<'a>>,
}

/// A budget in cost (e.g. tokens) beside the count budget K: each
/// candidate's cost c_i (length P, finite, ≥ 0; e.g. its text's token
/// count) and the total C the picks may cost (finite, ≥ 0).
///
/// # Semantics (every selector)
/// Picks are made as without costs, except that a candidate that no longer
/// fits can no longer be picked: with S the picks so far, candidate i fits
/// while Σ_{j∈S} c_j + c_i ≤ C (the sum in f64, in pick order, so exact for
/// integer costs below 2⁵³). After each pick, every candidate that no
/// longer fits is marked unavailable, as a skipped candidate is (its
/// relevance and score become −∞); so is, before the first pick, every
/// candidate with c_i > C. A pick that no longer fits is thus skipped and
/// the next best one that fits is taken; zero-cost candidates always fit.
/// The selection stops with
/// [`StopReason::CostBudget`](crate::StopReason::CostBudget) when no
/// candidate fits any more, and K still caps the number of picks
/// ([`StopReason::Budget`](crate::StopReason::Budget)).
///
/// * Top-K takes the candidates in ρ order, skipping those that do not fit
///   (a greedy knapsack by relevance); MMR and the pursuit family take
///   their argmax among the candidates that fit.
/// * The Frank–Wolfe gap of the pursuit ([`Step::fw_gap`](crate::Step::fw_gap))
///   is a maximum over the candidates still available, as for skipped
///   ones: it certifies the refit against the pool of candidates that still
///   fit, and [`AtPoolOptimum`](crate::AtPoolOptimum) acts on that gap (with
///   nothing left that fits it is 0, and
///   [`AtPoolOptimum::Stop`](crate::AtPoolOptimum::Stop) reports
///   `PoolOptimum`, as it does for an exhausted pool). Adaptive stopping
///   (Eq. 7) reads the residuals of the picks made, unchanged.
/// * The recommended setting's γ uses, in place of K, the number of picks
///   top-K makes under the same costs (at most K), and its statistics run
///   over the candidates with c_i ≤ C (see
///   [`recommend`](crate::recommend)). With unit costs and C = K' every
///   selector makes the picks it makes with the count budget K = K'.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostBudget<'a> {
    /// c_i, one per candidate (length P), finite and ≥ 0.
    pub costs: &'a [f32],
    /// C, the most the picks may cost in total: finite and ≥ 0.
    pub total: f64,
}

impl<'a> Input<'a> {
    /// A query and its pool (f32), with ρ = b.
    #[must_use]
    pub fn new(query: &'a [f32], candidates: &'a [f32]) -> Self {
        Input {
            query,
            candidates,
            ids: None,
            relevance: Relevance::Similarity,
            cost_budget: None,
        }
    }
}

impl<'a, E: Element> Input<'a, E> {
    /// A query (f32) and its pool stored as `E` (any [`Element`]: f32, or
    /// with the `half` feature `half::f16` / `half::bf16`), with ρ = b.
    /// The selection equals, bit for bit, the f32 selection on the pool's
    /// values widened to f32. Speed: f16 / bf16 halve the bytes each pass
    /// reads and add a widening; which wins depends on the CPU and the
    /// pool's size ([`Element`], "When reduced precision pays").
    #[must_use]
    pub fn with_storage(query: &'a [f32], candidates: &'a [E]) -> Self {
        Input {
            query,
            candidates,
            ids: None,
            relevance: Relevance::Similarity,
            cost_budget: None,
        }
    }
}

impl<'a, E> Input<'a, E> {
    /// The same input with another relevance source.
    #[must_use]
    pub fn with_relevance(self, relevance: Relevance<'a>) -> Self {
        Input { relevance, ..self }
    }

    /// The same input with a budget in cost: `costs` (one per candidate,
    /// finite, ≥ 0, e.g. token counts) and `total`, the most the picks may
    /// cost (finite, ≥ 0). See [`CostBudget`] for what every selector does
    /// with it; K still caps the number of picks.
    ///
    /// ```
    /// use mempursuit_core::{pursuit, FixedWorkspace, Input, PursuitOptions, StopReason};
    /// let s = core::f32::consts::FRAC_1_SQRT_2;
    /// let (query, pool) = ([s, s], [0.9950f32, 0.0998, 0.9998, 0.0200, 0.0, 1.0]);
    /// let tokens = [40.0f32, 35.0, 70.0];
    /// let mut storage = FixedWorkspace::<8, 4>::new();
    /// let mut ws = storage.view();
    /// let input = Input::new(&query, &pool).with_costs(&tokens, 100.0);
    /// // Row 0 (40 tokens) first; row 2, the missing fact, would be next but
    /// // no longer fits (110 > 100), so the pursuit takes row 1.
    /// let sel = pursuit(&input, 3, &PursuitOptions::default(), &mut ws)?;
    /// assert_eq!(sel.picks(), &[0, 1]);
    /// assert_eq!(sel.stop_reason(), StopReason::CostBudget);
    /// # Ok::<(), mempursuit_core::Error>(())
    /// ```
    #[must_use]
    pub fn with_costs(self, costs: &'a [f32], total: f64) -> Self {
        Input {
            cost_budget: Some(CostBudget { costs, total }),
            ..self
        }
    }

    /// The same input with its pool read by row id: candidate i is row
    /// `ids[i]` of `candidates` (N × d, N = `candidates.len() / d`), so
    /// P = `ids.len()`; relevance and costs are then one per id. The rows
    /// are read where they are (a store's memories named by a retriever's
    /// ids), and the selection is, bit for bit, the one on the gathered
    /// rows. An id ≥ N is [`Error::RowId`](crate::Error::RowId).
    ///
    /// ```
    /// use mempursuit_core::{pursuit, FixedWorkspace, Input, PursuitOptions};
    /// let s = core::f32::consts::FRAC_1_SQRT_2;
    /// // A store of four rows (d = 2): rows 0 and 1 state fact A, row 3 fact B.
    /// let store = [0.9950f32, 0.0998, 0.9998, 0.0200, -1.0, 0.0, 0.0, 1.0];
    /// let query = [s, s];
    /// let ids = [0, 1, 3]; // the retriever's candidates
    /// let mut storage = FixedWorkspace::<8, 4>::new();
    /// let mut ws = storage.view();
    /// let sel = pursuit(&Input::new(&query, &store).with_ids(&ids), 2, &PursuitOptions::default(), &mut ws)?;
    /// assert_eq!(sel.picks(), &[0, 2]); // positions in `ids`: store rows 0 and 3
    /// # Ok::<(), mempursuit_core::Error>(())
    /// ```
    #[must_use]
    pub fn with_ids(self, ids: &'a [usize]) -> Self {
        Input {
            ids: Some(ids),
            ..self
        }
    }

    /// The embedding dimension d.
    pub fn dim(&self) -> usize {
        self.query.len()
    }

    /// The pool size P (`ids.len()` with ids, else `candidates.len() / d`),
    /// or `None` if the shape is invalid (d = 0 or `candidates.len()` not a
    /// multiple of d; the ids are not checked here).
    pub fn pool_size(&self) -> Option<usize> {
        let d = self.query.len();
        (d > 0 && self.candidates.len().is_multiple_of(d))
            .then(|| self.ids.map_or(self.candidates.len() / d, <[usize]>::len))
    }
}

impl<'a, E: Element> Input<'a, E> {
    /// The candidate matrix as the kernels read it (in place by id where
    /// the input has ids).
    pub(crate) fn matrix(&self) -> Rows<'a> {
        E::view(Mat {
            data: self.candidates,
            ids: self.ids,
        })
    }
}

/// The validated shape of one call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Prepared {
    pub pool: usize,
    pub dim: usize,
    /// The query's scale (1 for a near-unit query, else 1/‖q‖ in f32).
    pub q_scale: f32,
}

/// Classifies a vector from its f32 squared norm, re-checking in f64 when the
/// f32 value is not trustworthy. Returns the scale to apply (1 for near-unit).
pub(crate) fn classify<E: Element>(
    v: &[E],
    sumsq: f32,
    policy: Normalization,
) -> Result<f32, VectorFault> {
    // Fast path for the common case, without a square root: ‖v‖² well
    // inside [(1 − tol)², (1 + tol)²] (margins of 1e-6 against rounding)
    // means |‖v‖ − 1| ≤ tol, a near-unit vector.
    const LO: f32 = ((1.0 - UNIT_NORM_TOLERANCE) * (1.0 - UNIT_NORM_TOLERANCE) + 1e-6) as f32;
    const HI: f32 = ((1.0 + UNIT_NORM_TOLERANCE) * (1.0 + UNIT_NORM_TOLERANCE) - 1e-6) as f32;
    if (LO..=HI).contains(&sumsq) {
        return Ok(1.0);
    }
    let norm = if sumsq.is_finite() && sumsq > 1e-30 && sumsq < 1e30 {
        libm::sqrt(sumsq as f64)
    } else {
        let mut s = 0.0f64;
        for (index, x) in v.iter().map(|x| x.to_f32()).enumerate() {
            if !x.is_finite() {
                return Err(VectorFault::NonFinite { index, value: x });
            }
            s += (x as f64) * (x as f64);
        }
        libm::sqrt(s)
    };
    if norm == 0.0 {
        return Err(VectorFault::ZeroNorm);
    }
    if !(MIN_NORM..=MAX_NORM).contains(&norm) {
        return Err(VectorFault::NormOutOfRange { norm });
    }
    if (norm - 1.0).abs() <= UNIT_NORM_TOLERANCE {
        return Ok(1.0);
    }
    match policy {
        Normalization::Cosine => Ok((1.0 / norm) as f32),
        Normalization::RequireUnit => Err(VectorFault::NotUnitNorm { norm }),
    }
}

/// Copies `values[i]` of the available rows into `out` (in place of its
/// first n entries), sorted descending (total order, so the result does not
/// depend on the input order); returns n.
fn sorted_valid_desc(values: &[f32], states: &States<'_>, out: &mut [f32]) -> usize {
    let mut n = 0;
    for (i, &v) in values.iter().enumerate() {
        if states.is_available(i) {
            out[n] = v;
            n += 1;
        }
    }
    out[..n].sort_unstable_by(|x, y| y.total_cmp(x));
    n
}

/// Validates the input, sizes the call against the workspace and fills
/// `scale`, `b` (query similarities, cosines), `rho` and `state`.
/// `budget` is the requested K; the capacity check uses min(K, P).
/// The query pass is split over `exec`'s parts (see [`Executor`]).
pub(crate) fn prepare<E: Element>(
    input: &Input<'_, E>,
    budget: usize,
    policy: &InputPolicy,
    ws: &mut Workspace<'_>,
    exec: &mut dyn Executor,
) -> Result<Prepared, Error> {
    let (p, d) = check_shape(input)?;
    let q = input.query;
    let q_scale = classify(q, kernels::dot(q, q), policy.normalization).map_err(Error::Query)?;
    ws.check_capacity(p, budget.min(p))?;
    ws.pool = p;
    ws.excluded = 0;
    ws.skipped = 0;
    ws.over_budget = 0;
    classify_rows(input, (p, d), q_scale, policy, ws, exec)?;
    let rho = &mut ws.rho[..p];
    match input.relevance {
        Relevance::Similarity => rho.copy_from_slice(&ws.b[..p]),
        Relevance::Scores(r) => rho.copy_from_slice(r),
        Relevance::PoolOrder => pool_order_relevance(ws),
        Relevance::RankedScores(scores) => ranked_relevance(scores, ws),
    }
    // Candidates that cost more than the whole budget never fit.
    Spend::new(input.cost_budget).mark(ws);
    Ok(Prepared {
        pool: p,
        dim: d,
        q_scale,
    })
}

/// The checks of [`prepare`] that need no pass: the shape (d > 0, P · d
/// candidates), the caller's scores (P, finite) and the cost budget.
/// Returns (P, d).
fn check_shape<E: Element>(input: &Input<'_, E>) -> Result<(usize, usize), Error> {
    let d = input.query.len();
    if d == 0 {
        return Err(Error::ZeroDimension);
    }
    if !input.candidates.len().is_multiple_of(d) {
        return Err(Error::ShapeMismatch {
            candidates_len: input.candidates.len(),
            dim: d,
        });
    }
    let n = input.candidates.len() / d;
    let p = match input.ids {
        Some(ids) => {
            if let Some((index, &id)) = ids.iter().enumerate().find(|(_, &id)| id >= n) {
                return Err(Error::RowId { index, id, rows: n });
            }
            ids.len()
        }
        None => n,
    };
    if let Relevance::Scores(r) | Relevance::RankedScores(r) = input.relevance {
        if r.len() != p {
            return Err(Error::RelevanceLength {
                expected: p,
                found: r.len(),
            });
        }
        if let Some((index, &value)) = r.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(Error::NonFiniteRelevance { index, value });
        }
    }
    if let Some(cb) = input.cost_budget {
        check_costs(&cb, p)?;
    }
    Ok((p, d))
}

/// The query pass of [`prepare`] and each row's verdict: `b`, `nsq`,
/// `scale` and the states (available or excluded, with
/// [`InvalidCandidates::Reject`] the first invalid row's error), and
/// `ws.excluded`.
fn classify_rows<E: Element>(
    input: &Input<'_, E>,
    (p, d): (usize, usize),
    q_scale: f32,
    policy: &InputPolicy,
    ws: &mut Workspace<'_>,
    exec: &mut dyn Executor,
) -> Result<(), Error> {
    let b = &mut ws.b[..p];
    let nsq = &mut ws.nsq[..p];
    let isa = exec.isa();
    let rows = Mat {
        data: input.candidates,
        ids: input.ids,
    };
    kernels::query_pass(exec, isa, E::view(rows), d, input.query, b, nsq);
    let mut excluded = 0;
    for i in 0..p {
        let row = rows.row(i, d);
        match classify(row, nsq[i], policy.normalization) {
            Ok(s) => {
                ws.scale[i] = s;
                ws.states.set(i, CandidateState::Available);
                // b_i = (row_i . q) s_i s_q: a cosine for non-unit inputs.
                b[i] *= s * q_scale;
            }
            Err(fault) => {
                if policy.invalid_candidates == InvalidCandidates::Reject {
                    return Err(Error::Candidate { row: i, fault });
                }
                ws.scale[i] = 0.0;
                ws.states.set(i, CandidateState::Excluded);
                b[i] = 0.0;
                excluded += 1;
            }
        }
    }
    // A finite row can still overflow its dot with the query when both are
    // huge; the norm range rules that out, but keep b finite regardless.
    for bi in b.iter_mut() {
        if !bi.is_finite() {
            *bi = 0.0;
        }
    }
    ws.excluded = excluded;
    Ok(())
}

/// ρ of [`Relevance::PoolOrder`]: the usable rows' cosines sorted
/// descending, assigned to the usable rows in pool order (0 for the
/// others).
fn pool_order_relevance(ws: &mut Workspace<'_>) {
    let p = ws.pool;
    let (b, rho) = (&ws.b[..p], &mut ws.rho[..p]);
    let sorted = &mut ws.sorted[..p];
    let n = sorted_valid_desc(b, &ws.states, sorted);
    let mut r = 0;
    for i in 0..p {
        if ws.states.is_available(i) {
            rho[i] = sorted[r];
            r += 1;
        } else {
            rho[i] = 0.0;
        }
    }
    debug_assert_eq!(r, n);
}

/// ρ of [`Relevance::RankedScores`]: `sorted`, the usable rows' cosines,
/// descending; `order`, the usable rows by score, descending, ties by
/// cosine, descending, then by index. The row at rank r gets the r-th
/// largest cosine; rows equal in both score and cosine share the mean of
/// their ranks' cosines (0 for the unusable rows). Scores and cosines are
/// finite here.
fn ranked_relevance(scores: &[f32], ws: &mut Workspace<'_>) {
    let p = ws.pool;
    let (b, rho) = (&ws.b[..p], &mut ws.rho[..p]);
    let cos = &mut ws.sorted[..p];
    let n = sorted_valid_desc(b, &ws.states, cos);
    let order = &mut ws.order[..p];
    let mut m = 0;
    for i in 0..p {
        if ws.states.is_available(i) {
            order[m] = i;
            m += 1;
        }
        rho[i] = 0.0;
    }
    debug_assert_eq!(m, n);
    let order = &mut order[..n];
    let desc = |x: f32, y: f32| y.partial_cmp(&x).unwrap_or(Ordering::Equal);
    order.sort_unstable_by(|&i, &j| {
        desc(scores[i], scores[j])
            .then(desc(b[i], b[j]))
            .then(i.cmp(&j))
    });
    let mut lo = 0;
    while lo < n {
        let (s0, b0) = (scores[order[lo]], b[order[lo]]);
        let mut hi = lo + 1;
        while hi < n && scores[order[hi]] == s0 && b[order[hi]] == b0 {
            hi += 1;
        }
        let value = if hi - lo == 1 {
            cos[lo]
        } else {
            (cos[lo..hi].iter().map(|&c| c as f64).sum::<f64>() / (hi - lo) as f64) as f32
        };
        for &i in &order[lo..hi] {
            rho[i] = value;
        }
        lo = hi;
    }
}

/// Checks a cost budget against the pool size P: the length, every cost
/// (finite, ≥ 0) and the total (finite, ≥ 0).
fn check_costs(cb: &CostBudget<'_>, p: usize) -> Result<(), Error> {
    if cb.costs.len() != p {
        return Err(Error::CostLength {
            expected: p,
            found: cb.costs.len(),
        });
    }
    if let Some((index, &value)) = cb
        .costs
        .iter()
        .enumerate()
        .find(|(_, c)| !(c.is_finite() && **c >= 0.0))
    {
        return Err(Error::InvalidCost { index, value });
    }
    if !(cb.total.is_finite() && cb.total >= 0.0) {
        return Err(Error::InvalidCostBudget(cb.total));
    }
    Ok(())
}

/// What a selection has spent of its [`CostBudget`] while it runs (nothing
/// to do without one): the sum of the picks' costs, in pick order, in f64.
/// Every selector calls [`Spend::after_pick`] right after it records a
/// pick, and takes [`Spend::stop_reason`] when no candidate is left.
pub(crate) struct Spend<'a> {
    budget: Option<CostBudget<'a>>,
    spent: f64,
}

/// The stop reason a selection starts with, kept if its loop takes all
/// `min(budget, pool)` picks: [`StopReason::Budget`] when `budget` ≤ `pool`
/// (the K picks came back), else [`StopReason::PoolExhausted`] (fewer than K
/// came back because the pool of `pool` rows ran out).
pub(crate) fn first_stop(budget: usize, pool: usize) -> StopReason {
    if budget > pool {
        StopReason::PoolExhausted
    } else {
        StopReason::Budget
    }
}

impl<'a> Spend<'a> {
    /// Nothing spent yet of `budget`.
    pub(crate) fn new(budget: Option<CostBudget<'a>>) -> Self {
        Spend { budget, spent: 0.0 }
    }

    /// Adds the cost of pick `i` and marks the candidates that no longer
    /// fit ([`Spend::mark`]).
    #[inline]
    pub(crate) fn after_pick(&mut self, ws: &mut Workspace<'_>, i: usize) {
        if let Some(cb) = self.budget {
            self.spent += cb.costs[i] as f64;
            self.mark(ws);
        }
    }

    /// Marks every available candidate i with spent + c_i > C
    /// [`CandidateState::OverBudget`]: never picked in this call, ρ_i and
    /// U_i −∞ (as for a skipped candidate). O(P).
    pub(crate) fn mark(&self, ws: &mut Workspace<'_>) {
        let Some(cb) = self.budget else { return };
        let p = ws.pool;
        for (i, &c) in cb.costs[..p].iter().enumerate() {
            if self.spent + c as f64 > cb.total && ws.states.is_available(i) {
                ws.states.set(i, CandidateState::OverBudget);
                ws.over_budget += 1;
                ws.rho[i] = f32::NEG_INFINITY;
                if let Some(u) = ws.u.get_mut(i) {
                    *u = f32::NEG_INFINITY;
                }
            }
        }
    }

    /// Why a selection with no candidate left ended:
    /// [`StopReason::CostBudget`] when some candidate was left out for its
    /// cost, else [`StopReason::PoolExhausted`].
    pub(crate) fn stop_reason(&self, ws: &Workspace<'_>) -> StopReason {
        if ws.over_budget > 0 {
            StopReason::CostBudget
        } else {
            StopReason::PoolExhausted
        }
    }
}
