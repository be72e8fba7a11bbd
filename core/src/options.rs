//! Options shared by the selectors: the input policy, the pursuit's
//! parameters (ridge, γ, stopping) and what happens at the pool optimum.

use crate::error::Error;

/// Vectors whose Euclidean norm is within this distance of 1 count as unit
/// vectors and are used exactly as given (scale factor 1.0, so unit-norm
/// inputs give bit-identical results under both normalization policies).
///
/// 1e-3 is loose enough for embeddings normalized in f16/f32 and stored with
/// rounding, and tight enough that treating such a vector as unit changes a
/// cosine by at most 1e-3.
pub const UNIT_NORM_TOLERANCE: f64 = 1e-3;

/// Smallest accepted vector norm. Below it, f32 dot products of the raw
/// vectors lose precision to underflow.
pub const MIN_NORM: f64 = 1e-12;

/// Largest accepted vector norm. Above it, f32 dot products of the raw
/// vectors may overflow.
pub const MAX_NORM: f64 = 1e12;

/// How non-unit vectors are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
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
/// i.e. the selected weights are optimal for the whole pool (DESIGN §5,
/// Theorem B.2). Not applicable to centroid pursuit (κ = ∞), which has no
/// certificate: there this setting is ignored.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
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

/// Parameters of the pursuit (DESIGN §2–§4, §11).
///
/// The default is the paper's method: ridge λ = 1e-10, γ = 1, ρ = b, a fixed
/// budget, and picking on after the pool optimum.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PursuitOptions {
    /// Ridge λ of the refit (Eq. 6); κ of the relevance-scaled family
    /// (DESIGN §11). Must be ≥ 0; `f64::INFINITY` selects centroid pursuit
    /// (α = 1/|S| in closed form, no QP).
    pub ridge: f64,
    /// γ ∈ (0, 1], the weight of the reconstruction against relevance
    /// (DESIGN §11). 1 is the paper's method.
    pub gamma: f64,
    /// Fixed budget or adaptive stopping.
    pub stopping: Stopping,
    /// Behaviour once the Frank–Wolfe gap reaches `optimum_tolerance`.
    pub at_pool_optimum: AtPoolOptimum,
    /// g_S ≤ this counts as the pool optimum (default 1e-12).
    pub optimum_tolerance: f64,
    /// Input policy.
    pub input: InputPolicy,
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
    };

    /// Centroid pursuit (DESIGN §11): κ = ∞ with the given γ (a fixed γ; the
    /// recommended setting [`recommended`](crate::recommended) sets γ per
    /// pool and budget instead).
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
