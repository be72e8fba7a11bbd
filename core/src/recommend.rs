//! The recommended setting: centroid pursuit with unit-free relevance and a
//! per-pool γ set by a measured rule, so that nothing needs tuning.
//!
//! For a pool with relevance ρ on the pool's own cosine scale
//! ([`Relevance::unit_free`]), budget K and n usable candidates, let
//! ρ₍₁₎ ≥ ρ₍₂₎ ≥ … be the sorted relevances, ρ̄ their mean and
//! k = min(K, n). The rule is
//!
//! ```text
//! depth = (ρ₍₁₎ − ρ₍ₖ₎) / (ρ₍₁₎ − ρ̄)        (1 when every ρ is equal)
//! γ     = clamp(c · depth, 0, 1),  c = 0.6 if ρ ranks the pool as the query cosines do,
//!                                  c = 0.1 otherwise (another retriever's order)
//! ```
//!
//! and the selection is centroid pursuit (κ = ∞, Eq. 9 with α = 1/|S|):
//! U_i = ρ_i − (γ/|S|) Σ_{j∈S} G_ij. `depth` is the share of the pool's
//! relevance range above its mean that a budget of K reaches down through:
//! near 0 for a small budget in a pool with a clear head (then γ ≈ 0 and the
//! picks are close to top-K, which is hard to beat at small K), near 1 once
//! the budget reaches the bulk of the pool (where redundancy among the picks
//! costs more than the relevance left to gain). Both ρ and the redundancy
//! term G are cosines of the same encoder, so the rule needs no
//! per-encoder constant: an encoder whose cosines bunch (E5: random pairs
//! ≈ 0.8) shrinks both sides alike.
//!
//! Source of the constants: measurements on the HotpotQA distractor fixture
//! (340 multi-hop questions, pools of 20–122 sentences), two encoders
//! (all-MiniLM-L6-v2 and multilingual-e5-small) × two pool kinds (pools in
//! context order with ρ = cosine, and pools in the order of a BM25 + cosine
//! reciprocal-rank-fusion retriever) × K ∈ {3, 5, 10, 20}. Over those 16
//! points the rule gains +1.1 points of evidence recall over top-K on
//! average and is never more than 0.5 points below it; the best single fixed
//! γ gains +0.8 on average and loses up to 1.9 points. With ρ from another
//! retriever, diversification gained little and cost recall at K ≤ 10 for
//! every γ ≥ 0.1, hence the small second constant. docs/METHODS.md ("Which
//! setting to use") has the tables, the held-out splits and the commands.

use crate::error::Error;
use crate::input::{prepare, Input, Relevance};
use crate::kernels::{Element, Executor, Serial};
use crate::options::{InputPolicy, PursuitOptions};
use crate::pursuit::pursuit_with;
use crate::selection::SelectionView;
use crate::workspace::Workspace;

/// c of the rule when ρ ranks the pool as the query cosines do (ρ = b, or
/// scores whose order is the cosine order).
pub const RECOMMENDED_C_COSINE: f64 = 0.6;

/// c of the rule when ρ comes from another retriever (its order differs
/// from the cosine order).
pub const RECOMMENDED_C_EXTERNAL: f64 = 0.1;

impl<'a> Relevance<'a> {
    /// The unit-free form of this relevance: raw [`Relevance::Scores`]
    /// become [`Relevance::RankedScores`] (the same order on the pool's
    /// cosine scale); every other source is already in cosine units and is
    /// returned unchanged.
    pub fn unit_free(self) -> Relevance<'a> {
        match self {
            Relevance::Scores(s) => Relevance::RankedScores(s),
            other => other,
        }
    }
}

/// The recommended setting for one input and budget: see the module docs
/// for the rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Recommendation {
    /// γ of centroid pursuit for this pool and budget, in (0, 1].
    pub gamma: f64,
    /// depth = (ρ₍₁₎ − ρ₍ₖ₎) / (ρ₍₁₎ − ρ̄), ≥ 0 (1 when every ρ is equal).
    pub depth: f64,
    /// Whether ρ ranks the usable candidates exactly as the query cosines
    /// do (then c = [`RECOMMENDED_C_COSINE`], else
    /// [`RECOMMENDED_C_EXTERNAL`]).
    pub cosine_ordered: bool,
    /// The input policy the statistics were computed under.
    pub input: InputPolicy,
}

impl Recommendation {
    /// The pursuit options of this recommendation: centroid pursuit
    /// (κ = ∞) with [`Recommendation::gamma`] and the input policy.
    pub fn options(&self) -> PursuitOptions {
        PursuitOptions {
            input: self.input,
            ..PursuitOptions::centroid(self.gamma)
        }
    }
}

/// γ from the rule's statistics: `c · depth` clamped to (0, 1]. A zero
/// value (a budget of 1, or a head of equal relevance) becomes the smallest
/// positive f64, with which centroid pursuit picks exactly as top-K does.
fn gamma_of(depth: f64, cosine_ordered: bool) -> f64 {
    let c = if cosine_ordered {
        RECOMMENDED_C_COSINE
    } else {
        RECOMMENDED_C_EXTERNAL
    };
    (c * depth).clamp(f64::MIN_POSITIVE, 1.0)
}

/// Computes the recommended setting for `input` and `budget` (K) under
/// `policy`: one pass over the P × d candidates for the query cosines, then
/// O(P log P) for the relevance mapping and O(P) for the statistics. Uses
/// `ws` as scratch (capacity ≥ (P, min(K, P))); nothing the caller passed is
/// modified. Raw [`Relevance::Scores`] are used through their order
/// ([`Relevance::unit_free`]).
///
/// # Errors
/// The input errors of [`pursuit`](crate::pursuit): shape, relevance length or
/// non-finite relevance, unusable query or candidate rows (under
/// `policy`), capacity.
pub fn recommend<E: Element>(
    input: &Input<'_, E>,
    budget: usize,
    policy: &InputPolicy,
    ws: &mut Workspace<'_>,
) -> Result<Recommendation, Error> {
    let input = input.with_relevance(input.relevance.unit_free());
    let prep = prepare(&input, budget, policy, ws, &mut Serial)?;
    let p = prep.pool;
    // Usable candidates' ρ into `sorted` (partially sorted for the K-th).
    let mut n = 0;
    let mut cosine_ordered = true;
    let (mut top, mut sum) = (f32::NEG_INFINITY, 0.0f64);
    for i in 0..p {
        if ws.states.is_available(i) {
            let r = ws.rho[i];
            cosine_ordered &= r == ws.b[i];
            top = top.max(r);
            sum += r as f64;
            ws.sorted[n] = r;
            n += 1;
        }
    }
    let depth = if n == 0 {
        1.0
    } else {
        let k = budget.clamp(1, n);
        let vals = &mut ws.sorted[..n];
        let (_, kth, _) = vals.select_nth_unstable_by(k - 1, |x, y| y.total_cmp(x));
        let (top, kth, mean) = (top as f64, *kth as f64, sum / n as f64);
        if top - mean > 0.0 {
            ((top - kth) / (top - mean)).max(0.0)
        } else {
            1.0
        }
    };
    Ok(Recommendation {
        gamma: gamma_of(depth, cosine_ordered),
        depth,
        cosine_ordered,
        input: *policy,
    })
}

/// The recommended selector: [`recommend`], then centroid pursuit
/// ([`pursuit`](crate::pursuit) with κ = ∞) with that γ on the unit-free
/// relevance ([`Relevance::unit_free`]). Picks up to `budget` (K) memories;
/// the result is that of `pursuit(&input.with_relevance(input.relevance.unit_free()),
/// budget, &recommend(..)?.options(), ws)`, step for step.
///
/// Unlike a fixed-γ pursuit, γ depends on K, so the picks for a budget K
/// are not always the first K picks for a larger budget.
///
/// # Errors
/// As [`recommend`].
///
/// # Cost
/// Two passes over the candidate matrix for the query cosines (one for the
/// statistics, one in the pursuit), then as centroid pursuit: one Gram row
/// per pick, O(K·P·d) overall.
pub fn recommended<'w, E: Element>(
    input: &Input<'_, E>,
    budget: usize,
    policy: &InputPolicy,
    ws: &'w mut Workspace<'_>,
) -> Result<SelectionView<'w>, Error> {
    recommended_with(input, budget, policy, ws, &mut Serial)
}

/// [`recommended`] with the pursuit's passes over the candidate matrix cut
/// into row ranges that `executor` may run on several threads (see
/// [`Executor`]); bit-identical to [`recommended`].
///
/// # Errors
/// As [`recommend`].
pub fn recommended_with<'w, E: Element>(
    input: &Input<'_, E>,
    budget: usize,
    policy: &InputPolicy,
    ws: &'w mut Workspace<'_>,
    executor: &mut dyn Executor,
) -> Result<SelectionView<'w>, Error> {
    ws.require(crate::scratch::ScratchKind::Centroid)?;
    let rec = recommend(input, budget, policy, ws)?;
    let input = input.with_relevance(input.relevance.unit_free());
    pursuit_with(&input, budget, &rec.options(), ws, executor)
}

#[cfg(test)]
mod tests {
    use super::gamma_of;

    #[test]
    fn gamma_is_clamped_into_the_valid_range() {
        assert_eq!(gamma_of(0.0, true), f64::MIN_POSITIVE);
        assert_eq!(gamma_of(0.5, true), 0.3);
        assert_eq!(gamma_of(0.5, false), 0.05);
        assert_eq!(gamma_of(3.0, true), 1.0);
    }
}
