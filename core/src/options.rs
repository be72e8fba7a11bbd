//! Options shared by the selectors: the input policy, the pursuit's
//! parameters (ridge, γ, stopping) and what happens at the pool optimum.

use crate::error::Error;

// The input contract's norm range, defined beside the errors that report
// it (so `error` imports nothing) and re-exported here.
pub use crate::error::{MAX_NORM, MIN_NORM, UNIT_NORM_TOLERANCE};

/// How non-unit vectors are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Normalization {
    /// Every vector is used through its direction: all similarities are
    /// cosines. A vector whose norm is within [`UNIT_NORM_TOLERANCE`] of 1 is
    /// used as given; any other is scaled by 1/‖v‖ on the fly (the norms come
    /// from the same pass as the query similarities, so this costs nothing
    /// and the caller's data is never copied or modified).
    #[default]
    Cosine,
    /// Every vector must already have unit norm within
    /// [`UNIT_NORM_TOLERANCE`]; any other is an input error
    /// ([`VectorFault::NotUnitNorm`](crate::VectorFault::NotUnitNorm)).
    RequireUnit,
}

/// What happens to an unusable candidate row (non-finite element, zero norm,
/// norm out of range, or not unit under [`Normalization::RequireUnit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum InvalidCandidates {
    /// The call fails with [`Error::Candidate`] naming the first such row.
    #[default]
    Reject,
    /// Such rows are never selected; the result lists them
    /// ([`SelectionView::excluded`](crate::SelectionView::excluded)).
    Exclude,
}

/// Input policy common to every selector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct InputPolicy {
    /// Treatment of non-unit vectors.
    pub normalization: Normalization,
    /// Treatment of unusable candidate rows.
    pub invalid_candidates: InvalidCandidates,
}

/// Parameters of maximal marginal relevance ([`mmr`](crate::mmr);
/// Carbonell & Goldstein 1998).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MmrOptions {
    /// λ_mmr ∈ [0, 1]: the weight of relevance against the maximum
    /// similarity to the picks; 1 is top-K, smaller diversifies more (the
    /// paper's baseline uses 0.5).
    pub lambda: f64,
    /// Input policy.
    pub input: InputPolicy,
}

impl MmrOptions {
    /// λ_mmr = 0.5, the paper's MMR baseline, with the default input policy.
    pub const PAPER: MmrOptions = MmrOptions {
        lambda: 0.5,
        input: InputPolicy {
            normalization: Normalization::Cosine,
            invalid_candidates: InvalidCandidates::Reject,
        },
    };

    /// MMR with trade-off `lambda` and the default input policy.
    pub const fn new(lambda: f64) -> MmrOptions {
        MmrOptions {
            lambda,
            ..Self::PAPER
        }
    }

    /// Checks λ_mmr; [`mmr`](crate::mmr) calls this before any work.
    ///
    /// # Errors
    /// [`Error::InvalidMmrLambda`] unless 0 ≤ λ_mmr ≤ 1.
    pub fn validate(&self) -> Result<(), Error> {
        if (0.0..=1.0).contains(&self.lambda) {
            Ok(())
        } else {
            Err(Error::InvalidMmrLambda(self.lambda))
        }
    }
}

impl Default for MmrOptions {
    fn default() -> Self {
        Self::PAPER
    }
}

/// When the pursuit stops before the budget.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Stopping {
    /// Select exactly `min(K, P)` memories (fewer only if the pool runs out
    /// of valid candidates, or by [`AtPoolOptimum::Stop`]).
    #[default]
    FixedBudget,
    /// Adaptive stopping (paper Eq. 7, Appendix A.1): with
    /// Δ_t = (L_{t−1} − L_t) / max(L_{t−1}, ε), stop after `patience`
    /// consecutive steps with Δ_t ≤ τ, or at the budget K.
    Adaptive {
        /// τ, the relative-improvement threshold (paper: 1e-5).
        tau: f64,
        /// Number of consecutive small steps that stop the pursuit (paper: 2).
        patience: u32,
        /// ε, the floor of the denominator (paper: 1e-12).
        eps: f64,
    },
}

impl Stopping {
    /// The paper's adaptive rule: τ = 1e-5, patience 2, ε = 1e-12.
    pub const PAPER_ADAPTIVE: Stopping = Stopping::Adaptive {
        tau: 1e-5,
        patience: 2,
        eps: 1e-12,
    };
}

/// What the pursuit does once the Frank–Wolfe gap g_S is ≤ the tolerance,
/// i.e. the selected weights are optimal for the whole pool (Theorem B.2,
/// Eq. 25). Not applicable to centroid pursuit (κ = ∞), which has no
/// certificate: there this setting is ignored.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum AtPoolOptimum {
    /// Keep picking by the (now frozen) residual, as the paper does.
    #[default]
    Continue,
    /// Stop with [`StopReason::PoolOptimum`](crate::StopReason::PoolOptimum).
    Stop,
    /// Take the remaining picks in relevance order (ρ, highest first); the
    /// weights stay those of the optimum (the filled picks get weight 0).
    FillByRelevance,
}

/// What the pursuit does with a candidate that, when it would be picked, is
/// already represented by the picks: with the refit's pivot test
/// ([`PIVOT_TOLERANCE`](crate::PIVOT_TOLERANCE), on the augmented vectors
/// [m; 1] and the refit's matrix G + κI + 11ᵀ), it is an exact duplicate
/// of an earlier pick (whatever that pick's weight), or lies in the affine
/// hull of the free set F = {j ∈ S : α_j > 0} (a point on it, a
/// paraphrase embedded identically to a free memory). The refit (Eq. 6)
/// cannot give such a memory weight without taking it from another, so it
/// usually keeps weight 0, and its text is already in the context. See
/// [`Step::dependent`](crate::Step::dependent).
///
/// Applies to the QP pursuit (finite ridge, including relevance fill after
/// the pool optimum) on every storage, the certified int8 pursuit
/// ([`pursuit_int8`](crate::pursuit_int8)) included; centroid pursuit
/// (κ = ∞), top-K and MMR never flag or skip by this option. The
/// recommended setting (centroid pursuit with its own duplicate rule) flags
/// and skips by that rule instead ([`recommended`](crate::recommended)). With a ridge κ well above
/// `PIVOT_TOLERANCE` the factored matrix
/// G_FF + κI + 11ᵀ is far from singular, so duplicates are not dependent in
/// this sense (they share the weight).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum DependentPicks {
    /// Pick it, as the paper does, and flag its step
    /// ([`Step::dependent`](crate::Step::dependent)). The default: the
    /// paper's picks (and every published order) stay unchanged.
    #[default]
    Keep,
    /// Skip it: it is not a pick, gets no [`Step`](crate::Step) and is
    /// never picked in this call; the budget goes to the next candidate, so
    /// the picks are distinct evidence. Skipped candidates are listed,
    /// ascending, in the result
    /// ([`SelectionView::skipped`](crate::SelectionView::skipped), the owned
    /// `Selection::skipped` of the `mempursuit` crate). Each costs one pass
    /// over the candidate matrix (its Gram row; none after the pool optimum
    /// with relevance fill) and no refit. The Frank–Wolfe gap's maximum then
    /// runs over the candidates neither picked nor skipped. If too few
    /// candidates are left, the stop reason is
    /// [`PoolExhausted`](crate::StopReason::PoolExhausted).
    Skip,
}

/// Parameters of the pursuit (paper Eqs. 5–7; γ and κ: [the relevance-scaled
/// family](crate#the-relevance-scaled-family)).
///
/// The default is the paper's method: ridge λ = 1e-10, γ = 1, ρ = b, a fixed
/// budget, and picking on after the pool optimum.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PursuitOptions {
    /// Ridge λ of the refit (Eq. 6); κ of the [relevance-scaled
    /// family](crate#the-relevance-scaled-family). Must be ≥ 0; `f64::INFINITY` selects centroid pursuit
    /// (α = 1/|S| in closed form, no QP).
    ///
    /// Serde (feature `serde`): in human-readable formats such as JSON,
    /// which have no infinity, κ = ∞ is the string `"inf"` (written and
    /// read; `"-inf"` and `"nan"` likewise, and reading also takes
    /// `"infinity"` in any letter case); a finite value is a number. Binary
    /// formats carry the plain f64.
    #[cfg_attr(feature = "serde", serde(with = "serde_extended_f64"))]
    pub ridge: f64,
    /// γ ∈ (0, 1], the weight of the reconstruction against relevance
    /// ([the relevance-scaled family](crate#the-relevance-scaled-family)).
    /// 1 is the paper's method.
    pub gamma: f64,
    /// Fixed budget or adaptive stopping.
    pub stopping: Stopping,
    /// Behaviour once the Frank–Wolfe gap reaches `optimum_tolerance`.
    pub at_pool_optimum: AtPoolOptimum,
    /// g_S ≤ this counts as the pool optimum (default 1e-12).
    pub optimum_tolerance: f64,
    /// Input policy.
    pub input: InputPolicy,
    /// Candidates already represented by the free set at pick time: kept
    /// and flagged (default) or skipped.
    #[cfg_attr(feature = "serde", serde(default))]
    pub dependent_picks: DependentPicks,
}

impl PursuitOptions {
    /// The paper's ridge, λ = 1e-10 (used in every experiment of the paper).
    pub const PAPER_RIDGE: f64 = 1e-10;

    /// The paper's method (same as `Default`).
    pub const PAPER: PursuitOptions = PursuitOptions {
        ridge: Self::PAPER_RIDGE,
        gamma: 1.0,
        stopping: Stopping::FixedBudget,
        at_pool_optimum: AtPoolOptimum::Continue,
        optimum_tolerance: 1e-12,
        input: InputPolicy {
            normalization: Normalization::Cosine,
            invalid_candidates: InvalidCandidates::Reject,
        },
        dependent_picks: DependentPicks::Keep,
    };

    /// Centroid pursuit: κ = ∞ of the [relevance-scaled
    /// family](crate#the-relevance-scaled-family) with the given γ (a fixed
    /// γ; the recommended setting [`recommended`](crate::recommended) sets γ
    /// per pool and budget instead).
    #[must_use]
    pub const fn centroid(gamma: f64) -> PursuitOptions {
        PursuitOptions {
            ridge: f64::INFINITY,
            gamma,
            ..Self::PAPER
        }
    }

    /// Whether this is the closed-form centroid path (κ = ∞).
    pub fn is_centroid(&self) -> bool {
        self.ridge == f64::INFINITY
    }

    /// Checks every parameter; the selectors call this before any work.
    ///
    /// # Errors
    /// [`Error::InvalidRidge`], [`Error::InvalidGamma`],
    /// [`Error::InvalidStopping`] or [`Error::InvalidOptimumTolerance`].
    pub fn validate(&self) -> Result<(), Error> {
        if self.ridge.is_nan() || self.ridge < 0.0 {
            return Err(Error::InvalidRidge(self.ridge));
        }
        if !(self.gamma > 0.0 && self.gamma <= 1.0) {
            return Err(Error::InvalidGamma(self.gamma));
        }
        if let Stopping::Adaptive { tau, patience, eps } = self.stopping {
            let ok =
                tau.is_finite() && tau >= 0.0 && eps.is_finite() && eps >= 0.0 && patience >= 1;
            if !ok {
                return Err(Error::InvalidStopping);
            }
        }
        if !(self.optimum_tolerance.is_finite() && self.optimum_tolerance >= 0.0) {
            return Err(Error::InvalidOptimumTolerance(self.optimum_tolerance));
        }
        Ok(())
    }
}

impl Default for PursuitOptions {
    fn default() -> Self {
        Self::PAPER
    }
}

/// Serde of an f64 that may be infinite, for human-readable formats without
/// infinity (JSON): `+∞` is written as the string `"inf"`, `−∞` as `"-inf"`
/// and NaN as `"nan"`; finite values as numbers. Reading accepts numbers and
/// those strings (also `"infinity"`, `"+inf"`, any letter case). Binary
/// formats read and write the plain f64. Used for
/// [`PursuitOptions::ridge`], where `"inf"` is centroid pursuit (κ = ∞).
#[cfg(feature = "serde")]
mod serde_extended_f64 {
    use core::fmt;

    use serde::{de, Deserializer, Serializer};

    /// Writes `x`: a number, or `"inf"` / `"-inf"` / `"nan"` in
    /// human-readable formats.
    ///
    /// # Errors
    /// The serializer's.
    pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        if !s.is_human_readable() || x.is_finite() {
            s.serialize_f64(*x)
        } else if x.is_nan() {
            s.serialize_str("nan")
        } else if *x > 0.0 {
            s.serialize_str("inf")
        } else {
            s.serialize_str("-inf")
        }
    }

    struct Visitor;

    impl de::Visitor<'_> for Visitor {
        type Value = f64;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a number, \"inf\", \"-inf\" or \"nan\"")
        }

        fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
            Ok(v)
        }

        fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
            Ok(v as f64)
        }

        fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
            Ok(v as f64)
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<f64, E> {
            let (negative, magnitude) = match v.as_bytes().first() {
                Some(b'-') => (true, &v[1..]),
                Some(b'+') => (false, &v[1..]),
                _ => (false, v),
            };
            if magnitude.eq_ignore_ascii_case("inf") || magnitude.eq_ignore_ascii_case("infinity") {
                Ok(if negative {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                })
            } else if magnitude.eq_ignore_ascii_case("nan") {
                Ok(f64::NAN)
            } else {
                Err(E::invalid_value(de::Unexpected::Str(v), &self))
            }
        }
    }

    /// Reads a number or one of the strings above.
    ///
    /// # Errors
    /// The deserializer's, or an invalid-value error for another string.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        if d.is_human_readable() {
            d.deserialize_any(Visitor)
        } else {
            d.deserialize_f64(Visitor)
        }
    }
}
