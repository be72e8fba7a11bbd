//! The recommended setting: centroid pursuit with unit-free relevance, a
//! per-pool γ set by a measured rule, and a pool-relative test for the
//! candidates the picks already represent, so that nothing needs tuning and
//! repeated memories do not take the budget.
//!
//! **γ.** For a pool with relevance ρ on the pool's own cosine scale
//! ([`Relevance::unit_free`]), budget K and n distinct usable candidates,
//! let ρ₍₁₎ ≥ ρ₍₂₎ ≥ … be their sorted relevances, ρ̄ their mean and
//! k = min(K, n). The rule is
//!
//! ```text
//! depth = (ρ₍₁₎ − ρ₍ₖ₎) / (ρ₍₁₎ − ρ̄)        (1 when every ρ is equal)
//! γ     = clamp(c · depth, 0, 1),  c = 0.6 if ρ ranks the pool as the query cosines do,
//!                                  c = 0.1 otherwise (another retriever's order)
//! ```
//!
//! and the scores are those of centroid pursuit (κ = ∞, Eq. 9 with
//! α = 1/|S|): U_i = ρ_i − (γ/|S|) Σ_{j∈S} G_ij. `depth` is the share of
//! the pool's relevance range above its mean that a budget of K reaches down
//! through: near 0 for a small budget in a pool with a clear head (then
//! γ ≈ 0 and the picks are close to top-K, which is hard to beat at small
//! K), near 1 once the budget reaches the bulk of the pool (where redundancy
//! among the picks costs more than the relevance left to gain). Both ρ and
//! the redundancy term G are cosines of the same encoder, so the rule needs
//! no per-encoder constant: an encoder whose cosines bunch (E5: random pairs
//! ≈ 0.8) shrinks both sides alike.
//!
//! **Exact duplicates.** A candidate whose row is bit-identical to an
//! earlier candidate's is merged into it before anything else: it is never
//! picked, it is listed as skipped, and it takes no part in the statistics
//! above or below. So adding an exact copy of any memory to a pool (with
//! ρ = b) never changes the picks.
//!
//! **Represented candidates.** A small γ trusts relevance, and a store that
//! repeats a fact gives the repeats the relevance of the fact: the head of
//! the pool is then flat *because* it is redundant, and centroid pursuit
//! (whose redundancy term is averaged over the picks) spends the budget on
//! the repeats. What separates a repeat from a complement is the part of it
//! the picks do not explain: the pivot² 1 − G_ij² of candidate i against
//! pick j (the squared norm of the part of m_i orthogonal to m_j; the
//! quantity a Cholesky factor of the Gram matrix yields and DPP's greedy
//! gain uses). Paraphrases sit at cosine 0.8 to 0.99 depending on the
//! encoder, so the test is relative to the pool's own pivots: with
//!
//! ```text
//! r_j = mean over the pool's other distinct usable candidates k of (1 − G_jk²)
//! ```
//!
//! candidate i is *represented* by j when G_ij > 0 and
//! 1 − G_ij² ≤ θ · r_j, θ = [`RECOMMENDED_THETA`] = 0.2: its part that j
//! does not explain is under 20 % of what j leaves of the pool's typical
//! member. (At the median r of the HotpotQA pools this is G ≥ 0.91 with
//! all-MiniLM-L6-v2, G ≥ 0.964 with multilingual-e5-small.) Every candidate
//! whose Gram row the loop computes, each pick and each candidate that
//! reaches the top of the scores, marks the available candidates it
//! represents (with its r). A candidate that reaches the top and is
//! represented by an already marked candidate is marked too, and marks in
//! turn: a family of near-copies is caught whichever of its members is
//! picked first. Marked candidates are picked only when no unmarked one is
//! left ([`Step::dependent`](crate::selection::Step::dependent) is then set).
//!
//! Source of the constants: measurements on the HotpotQA distractor fixture
//! (340 multi-hop questions, pools of 20–122 sentences), two encoders
//! (all-MiniLM-L6-v2 and multilingual-e5-small) × two pool kinds (pools in
//! context order with ρ = cosine, and pools in the order of a BM25 + cosine
//! reciprocal-rank-fusion retriever) × K ∈ {3, 5, 10, 20}. c: over those 16
//! points the γ rule gains +1.1 points of evidence recall over top-K on
//! average and is never more than 0.5 points below it; the best single fixed
//! γ gains +0.8 on average and loses up to 1.9 points; with ρ from another
//! retriever, diversification gained little and cost recall at K ≤ 10 for
//! every γ ≥ 0.1, hence the small second constant. θ: the same 16 points,
//! clean and with near-copies injected into every pool (`mempursuit eval
//! --copy-cosine`: two copies of each of the top three members at cosine
//! 0.97, 0.93 and 0.88 to their original, replacing the six lowest-ranked
//! members; a copy keeps its original's evidence and retriever score), and
//! on the same questions cut into overlapping 2-sentence chunks (the
//! HotpotQA overlap fixtures, K ∈ {3, 5, 8}, measured over the sentences the
//! picks contain). θ = 0.2 (2026-12-05) gains +1.22 points over top-K on the
//! 16 clean points (worst −0.3; θ = 0.3 gained +1.12, worst −0.7), keeps the
//! loss to copies above each encoder's natural-neighbour p99 (MiniLM at
//! 0.97, E5 at 0.99) under 1.3 points, and represents both gold paragraphs
//! of the overlapping chunks 3 to 6.5 points more often than top-K at
//! K ≥ 5 except on E5 pools in fused order (+0.3 / ±0.0, where no setting
//! tried, nor skipping every chunk that shares a sentence with a pick,
//! gains 3 points). What θ = 0.2 no longer catches: near-copies at or below
//! the natural-neighbour cosines (E5 at 0.97 and below, MiniLM at 0.88);
//! those are not copies to the encoder. `docs/METHODS.md` ("Which setting
//! to use", "Overlapping chunks") has the tables, the held-out halves and
//! the commands.
//!
//! Cost: one pass over the P × d candidates for the query cosines, the
//! duplicate check (a sort of the cosines; rows are compared only for
//! bit-identical cosines), one Gram row per pick and per candidate found
//! represented when it reaches the top, and O(P) of bookkeeping with each
//! row: O((K + R)·P·d) for R such candidates (R = 0 on a pool without
//! near-copies; the previous rule's two passes of the query are one).

use crate::error::Error;
use crate::input::{first_stop, prepare, CostBudget, Input, Relevance, Spend};
use crate::kernels::sealed::Mat;
use crate::kernels::{Element, Executor, Serial};
use crate::options::{InputPolicy, PursuitOptions};
use crate::pursuit::represented_loop;
use crate::pursuit::scorer::Passes;
use crate::scratch::ScratchKind;
use crate::selection::{CandidateState, SelectionView};
use crate::workspace::Workspace;

/// c of the rule when ρ ranks the pool as the query cosines do (ρ = b, or
/// scores whose order is the cosine order).
pub const RECOMMENDED_C_COSINE: f64 = 0.6;

/// c of the rule when ρ comes from another retriever (its order differs
/// from the cosine order).
pub const RECOMMENDED_C_EXTERNAL: f64 = 0.1;

/// θ of the represented-candidate rule: candidate i is represented by a
/// member j when G_ij > 0 and 1 − G_ij² ≤ θ · r_j, r_j the mean pivot² of
/// the pool's other distinct candidates against j (see the module docs).
pub const RECOMMENDED_THETA: f64 = 0.2;

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

/// The recommended setting's statistics for one input and budget: see the
/// module docs for the rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Recommendation {
    /// γ of centroid pursuit for this pool and budget, in (0, 1].
    pub gamma: f64,
    /// depth = (ρ₍₁₎ − ρ₍ₖ₎) / (ρ₍₁₎ − ρ̄), ≥ 0 (1 when every ρ is equal),
    /// over the distinct usable candidates.
    pub depth: f64,
    /// Whether ρ ranks the distinct usable candidates exactly as the query
    /// cosines do (then c = [`RECOMMENDED_C_COSINE`], else
    /// [`RECOMMENDED_C_EXTERNAL`]).
    pub cosine_ordered: bool,
    /// The number of candidates that are exact duplicates (bit-identical
    /// rows) of an earlier candidate: merged into it, never picked.
    pub duplicates: usize,
    /// The input policy the statistics were computed under.
    pub input: InputPolicy,
}

impl Recommendation {
    /// Centroid pursuit (κ = ∞) with [`Recommendation::gamma`] and the input
    /// policy: the recommended setting's scores, without its two rules on
    /// duplicates and represented candidates (on a pool where neither
    /// applies, [`pursuit`](crate::pursuit) with these options makes the
    /// same picks as [`recommended`]).
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

/// Marks every available candidate whose row is bit-identical to an earlier
/// available candidate's as skipped; returns how many. Candidates with
/// identical rows have bit-identical query similarities, so only candidates
/// sharing a similarity value are compared: one sort of the similarities
/// (O(P log P), in `ws.sorted`), then O(P + d) per candidate with a shared
/// value.
fn merge_duplicates<E: Element>(candidates: Mat<'_, E>, d: usize, ws: &mut Workspace<'_>) -> usize {
    let p = ws.pool;
    let mut n = 0;
    for i in 0..p {
        if ws.states.is_available(i) {
            ws.sorted[n] = ws.b[i];
            n += 1;
        }
    }
    ws.sorted[..n].sort_unstable_by(|x, y| x.total_cmp(y));
    let same_row = |a: usize, b: usize| {
        let (ra, rb) = (candidates.row(a, d), candidates.row(b, d));
        ra.iter()
            .zip(rb)
            .all(|(x, y)| x.to_f32().to_bits() == y.to_f32().to_bits())
    };
    let mut merged = 0;
    let mut lo = 0;
    while lo < n {
        let v = ws.sorted[lo].to_bits();
        let mut hi = lo + 1;
        while hi < n && ws.sorted[hi].to_bits() == v {
            hi += 1;
        }
        if hi - lo > 1 {
            for i in 0..p {
                if !ws.states.is_available(i) || ws.b[i].to_bits() != v {
                    continue;
                }
                let twin = (0..i)
                    .any(|j| ws.states.is_available(j) && ws.b[j].to_bits() == v && same_row(j, i));
                if twin {
                    ws.states.set(i, CandidateState::Skipped);
                    merged += 1;
                }
            }
        }
        lo = hi;
    }
    ws.skipped += merged;
    merged
}

/// The rule's statistics over the available candidates (see the module
/// docs), after [`prepare`] and [`merge_duplicates`].
fn statistics(ws: &mut Workspace<'_>, budget: usize) -> (f64, bool) {
    let p = ws.pool;
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
    (depth, cosine_ordered)
}

/// The number of picks top-K makes with budget K (`budget`) under the cost
/// budget `cb`, on the relevance and states of the input phase: the
/// available candidates in top-K's order (ρ descending, ties by the query
/// cosine, then by index), each taken while it fits (Σ of the costs taken
/// so far + its cost ≤ C, in f64 in pick order), until K are taken. Uses
/// the workspace's index order as scratch. O(P log P).
fn top_k_count(cb: &CostBudget<'_>, budget: usize, ws: &mut Workspace<'_>) -> usize {
    let p = ws.pool;
    let mut n = 0;
    for i in 0..p {
        if ws.states.is_available(i) {
            ws.order[n] = i;
            n += 1;
        }
    }
    let (rho, b) = (&ws.rho[..p], &ws.b[..p]);
    let order = &mut ws.order[..n];
    // Finite values here (usable candidates): the comparisons of top-K.
    let desc = |x: f32, y: f32| y.partial_cmp(&x).unwrap_or(core::cmp::Ordering::Equal);
    order.sort_unstable_by(|&i, &j| desc(rho[i], rho[j]).then(desc(b[i], b[j])).then(i.cmp(&j)));
    let (mut spent, mut count) = (0.0f64, 0);
    for &i in order.iter() {
        if count == budget {
            break;
        }
        let c = cb.costs[i] as f64;
        if spent + c <= cb.total {
            spent += c;
            count += 1;
        }
    }
    count
}

/// [`prepare`] on the unit-free relevance, [`merge_duplicates`] and the
/// rule's statistics: the shared first half of [`recommend`] and
/// [`recommended_with`].
fn prepare_recommended<E: Element>(
    input: &Input<'_, E>,
    budget: usize,
    policy: &InputPolicy,
    ws: &mut Workspace<'_>,
    executor: &mut dyn Executor,
) -> Result<(Recommendation, usize), Error> {
    let input = input.with_relevance(input.relevance.unit_free());
    let prep = prepare(&input, budget, policy, ws, executor)?;
    // With costs, the budget reaches down as far as top-K's picks under
    // them: K becomes the number of picks top-K makes.
    let depth_budget = match input.cost_budget {
        Some(cb) => top_k_count(&cb, budget, ws),
        None => budget,
    };
    let rows = Mat {
        data: input.candidates,
        ids: input.ids,
    };
    let duplicates = merge_duplicates(rows, prep.dim, ws);
    let (depth, cosine_ordered) = statistics(ws, depth_budget);
    Ok((
        Recommendation {
            gamma: gamma_of(depth, cosine_ordered),
            depth,
            cosine_ordered,
            duplicates,
            input: *policy,
        },
        prep.dim,
    ))
}

/// Computes the recommended setting's statistics for `input` and `budget`
/// (K) under `policy`: one pass over the P × d candidates for the query
/// cosines, the duplicate check (O(P log P), plus O(P + d) per candidate
/// whose query cosine equals another's bit for bit), then O(P log P) for
/// the relevance mapping and O(P) for the statistics. Uses `ws` as scratch
/// (capacity ≥ (P, min(K, P))); nothing the caller passed is modified. Raw
/// [`Relevance::Scores`] are used through their order
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
    Ok(prepare_recommended(input, budget, policy, ws, &mut Serial)?.0)
}

/// The recommended selector: picks up to `budget` (K) memories by the rule
/// of the module docs: exact duplicates merged, centroid pursuit with the
/// per-pool γ of [`recommend`] on the unit-free relevance
/// ([`Relevance::unit_free`]), and candidates represented by the picks
/// taken only when nothing else is left.
///
/// The result lists the picks in entry order with weights 1/|S| (centroid
/// pursuit), one [`Step`](crate::selection::Step) per pick (`dependent` marks a pick that was
/// represented by earlier picks, made because no other candidate was left),
/// and as skipped ([`SelectionView::skipped`]) the exact duplicates and
/// the candidates found represented and not picked. Fewer than K picks
/// (stop reason [`StopReason::PoolExhausted`](crate::StopReason::PoolExhausted))
/// only when the pool has fewer than K distinct usable candidates.
///
/// Unlike a fixed-γ pursuit, γ depends on K, so the picks for a budget K
/// are not always the first K picks for a larger budget.
///
/// # Errors
/// As [`recommend`].
///
/// # Cost
/// One pass over the candidate matrix for the query cosines, the duplicate
/// check of [`recommend`], then one Gram row per pick and per candidate
/// found represented when it reaches the top of the scores, with O(P) of
/// bookkeeping each: O((K + R)·P·d) overall, R the number of represented
/// candidates that reach the top (R = 0 on a pool without near-copies).
pub fn recommended<'w, E: Element>(
    input: &Input<'_, E>,
    budget: usize,
    policy: &InputPolicy,
    ws: &'w mut Workspace<'_>,
) -> Result<SelectionView<'w>, Error> {
    recommended_with(input, budget, policy, ws, &mut Serial)
}

/// [`recommended`] with the passes over the candidate matrix cut into row
/// ranges that `executor` may run on several threads (see [`Executor`]);
/// bit-identical to [`recommended`].
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
    ws.require(ScratchKind::Centroid)?;
    let (rec, d) = prepare_recommended(input, budget, policy, ws, executor)?;
    let k_eff = budget.min(ws.pool);
    ws.stop = first_stop(budget, ws.pool);
    let mut pass = Passes::new(input.matrix(), d, executor);
    let spend = &mut Spend::new(input.cost_budget);
    let len = represented_loop(&mut pass, k_eff, rec.gamma, RECOMMENDED_THETA, spend, ws);
    let ws: &'w Workspace<'_> = ws;
    Ok(ws.selection(len, true))
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
