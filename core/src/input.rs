//! The input contract shared by every selector and its validation pass.
//!
//! One pass over the P × d candidate matrix computes each row's squared norm
//! and its dot product with the query; the same numbers give the validation
//! verdict, the normalization scale and the query similarities b.

use core::cmp::Ordering;

use crate::error::{Error, VectorFault};
use crate::kernels::{self, Element, Executor};
use crate::options::{
    InputPolicy, InvalidCandidates, Normalization, MAX_NORM, MIN_NORM, UNIT_NORM_TOLERANCE,
};
use crate::selection::{CandidateState, States};
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
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Input<'a, E = f32> {
    /// Query embedding, length d.
    pub query: &'a [f32],
    /// Candidate embeddings, row-major P × d.
    pub candidates: &'a [E],
    /// Relevance ρ (default: ρ = b).
    pub relevance: Relevance<'a>,
}

impl<'a> Input<'a> {
    /// A query and its pool (f32), with ρ = b.
    #[must_use]
    pub fn new(query: &'a [f32], candidates: &'a [f32]) -> Self {
        Input {
            query,
            candidates,
            relevance: Relevance::Similarity,
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
            relevance: Relevance::Similarity,
        }
    }
}

impl<'a, E> Input<'a, E> {
    /// The same input with another relevance source.
    #[must_use]
    pub fn with_relevance(self, relevance: Relevance<'a>) -> Self {
        Input { relevance, ..self }
    }

    /// The embedding dimension d.
    pub fn dim(&self) -> usize {
        self.query.len()
    }

    /// The pool size P, or `None` if the shape is invalid (d = 0 or
    /// `candidates.len()` not a multiple of d).
    pub fn pool_size(&self) -> Option<usize> {
        let d = self.query.len();
        (d > 0 && self.candidates.len().is_multiple_of(d)).then(|| self.candidates.len() / d)
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
fn classify<E: Element>(v: &[E], sumsq: f32, policy: Normalization) -> Result<f32, VectorFault> {
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
    let p = input.candidates.len() / d;
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
    let q = input.query;
    let q_scale = classify(q, kernels::dot(q, q), policy.normalization).map_err(Error::Query)?;
    ws.check_capacity(p, budget.min(p))?;
    ws.pool = p;
    ws.excluded = 0;
    ws.skipped = 0;

    let b = &mut ws.b[..p];
    let nsq = &mut ws.nsq[..p];
    kernels::query_pass(exec, E::view(input.candidates), d, q, b, nsq);
    let mut excluded = 0;
    for i in 0..p {
        let row = &input.candidates[i * d..(i + 1) * d];
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

    let rho = &mut ws.rho[..p];
    match input.relevance {
        Relevance::Similarity => rho.copy_from_slice(b),
        Relevance::Scores(r) => rho.copy_from_slice(r),
        Relevance::PoolOrder => {
            // Sorted valid similarities, descending, assigned to the valid
            // rows in pool order.
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
        Relevance::RankedScores(scores) => {
            // `sorted`: the usable rows' cosines, descending; `order`: the
            // usable rows by score, descending, ties by cosine, descending,
            // then by index. The row at rank r gets the r-th largest
            // cosine; rows equal in both score and cosine share the mean of
            // their ranks' cosines. Scores and cosines are finite here.
            let b = &ws.b[..p];
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
    }
    Ok(Prepared {
        pool: p,
        dim: d,
        q_scale,
    })
}
