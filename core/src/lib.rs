//! # mempursuit-core
//!
//! `no_std`, no-`alloc` core of **MemPursuit** (Feng & Fan, *Recall What Is
//! Missing: Composing Evidence from Long-Term Agent Memory*, 2026): from a
//! query embedding q and a candidate pool of P memory embeddings it picks K
//! memories one at a time. Each pick is the candidate best aligned with the
//! residual r = q − q̂ of a sparse convex reconstruction q̂ = Σ α_j m_j of the
//! query from the memories already picked (Eq. 5, 9); after each pick all
//! weights are refit on the simplex with a small ridge λ (Eq. 6). Paraphrases
//! of a fact already picked score low; the missing fact scores high.
//!
//! ```
//! use mempursuit_core::{pursuit, top_k, FixedWorkspace, Input, InputPolicy, Method, PursuitOptions};
//!
//! // d = 2. Two paraphrases of fact A (rows 0, 1) and one statement of fact B (row 2).
//! let s = core::f32::consts::FRAC_1_SQRT_2;
//! let query = [s, s];
//! let pool = [0.9950, 0.0998,   0.9998, 0.0200,   0.0, 1.0];
//! let input = Input::new(&query, &pool);
//!
//! let mut storage = FixedWorkspace::<8, 4>::new();
//! let mut ws = storage.view();
//! // The recommended setting (the default method): no tuning.
//! let sel = Method::default().run(&input, 2, &mut ws)?;
//! assert_eq!(sel.picks(), &[0, 2]); // A, then the missing fact B
//!
//! // The paper's method (Eqs. 5, 6, 9).
//! let sel = pursuit(&input, 2, &PursuitOptions::PAPER, &mut ws)?;
//! assert_eq!(sel.picks(), &[0, 2]);
//!
//! let sel = top_k(&input, 2, &InputPolicy::default(), &mut ws)?;
//! assert_eq!(sel.picks(), &[0, 1]); // A and its paraphrase
//! # Ok::<(), mempursuit_core::Error>(())
//! ```
//!
//! ## Input contract (every selector)
//! * query: d f32 values, d ≥ 1; candidates: row-major P × d f32
//!   (`candidates.len()` a multiple of d; P = 0 selects nothing).
//! * NaN/±∞, zero vectors and norms outside [`MIN_NORM`]..[`MAX_NORM`] are
//!   errors naming the row and element ([`Error`]), or, for candidates under
//!   [`InvalidCandidates::Exclude`], are skipped and reported.
//! * Non-unit vectors: [`Normalization::Cosine`] (default) uses every vector
//!   through its direction (cosines; vectors within [`UNIT_NORM_TOLERANCE`]
//!   of unit norm are used exactly as given); [`Normalization::RequireUnit`]
//!   rejects them.
//! * K = 0 gives an empty selection; K > P selects at most P; argmax ties
//!   go to the lowest index. Nothing the caller passed is modified; no
//!   selector panics or outputs NaN.
//! * Optionally a budget in cost ([`Input::with_costs`], [`CostBudget`]):
//!   one cost per candidate (finite, ≥ 0, e.g. its token count) and a
//!   total C (finite, ≥ 0); a bad length, cost or total is an error naming
//!   the index or value. Every selector picks as without costs among the
//!   candidates that still fit (the picks' costs plus the candidate's
//!   ≤ C), stops when none fits ([`StopReason::CostBudget`]), and K still
//!   caps the number of picks.
//!
//! ## Layout
//! [`pursuit`] (the method and its [relevance-scaled
//! family](#the-relevance-scaled-family)), [`recommended`] (centroid
//! pursuit with a per-pool γ from a measured rule, on unit-free relevance:
//! the setting to use without tuning), [`top_k`] and [`mmr`] (baselines)
//! all write into a caller-owned [`Workspace`] and return a borrowed
//! [`SelectionView`]; [`Method`] names one of them and [`Method::run`]
//! dispatches. The refit is a primal active-set simplex QP
//! in f64 with an incremental Cholesky factor (see [near-dependent
//! memories](#near-dependent-memories)); the similarity pass, the Gram rows
//! and the score refresh are SIMD ([`kernels`], with a fixed reduction
//! order, so results are bit-identical across instruction sets, targets and
//! thread splits). The repository's `ARCHITECTURE.md` maps the data path
//! file by file, the invariants and where each theorem is tested.
//!
//! ## The relevance-scaled family
//! Beyond the paper: with a relevance vector ρ ([`Relevance`], default
//! ρ = b, the query cosines), γ ∈ (0, 1] ([`PursuitOptions::gamma`]) and
//! κ ≥ 0 or ∞ ([`PursuitOptions::ridge`]), the refit and the score are
//!
//! ```text
//! α_S = argmin over the simplex of (γ/2) αᵀ(G_SS + κI)α − ρ_Sᵀα
//! U_i = ρ_i − γ Σ_{j∈S} G_ij α_j          (pick argmax U, ties to the lowest index)
//! ```
//!
//! γ = 1, κ = λ, ρ = b is exactly the paper's method (Eqs. 5, 6, 9);
//! κ = ∞ is *centroid pursuit* ([`PursuitOptions::centroid`]): α = 1/|S|,
//! U_i = ρ_i − (γ/|S|) Σ_{j∈S} G_ij, no QP; γ → 0 is top-K in ρ order.
//! The KKT conditions (Lemma B.1, Eq. 15) and the Frank–Wolfe certificate
//! (Theorem B.2, Eq. 25) hold with λ → γκ; centroid pursuit has no
//! certificate.
//!
//! ## Near-dependent memories
//! Duplicates and memories on the affine hull of the picked ones make the
//! refit degenerate. The solver factors G_FF + κI + 11ᵀ on the free set
//! F = {j : α_j > 0} (on the simplex the extra 11ᵀ shifts the objective by
//! a constant; the matrix is singular only for affine dependence and its
//! diagonal is ≈ 2). A memory whose new pivot² would be at most
//! [`PIVOT_TOLERANCE`] × its diagonal is, to working precision, already
//! represented by F: if it violates the KKT conditions, it is exchanged for
//! a free memory when that lowers the objective, and otherwise blocked for
//! that refit with weight 0 (for ρ = b its KKT violation is then at most its
//! distance to the hull, ≈ 4.5e-5, times ‖r‖). With every drop keeping α
//! feasible and an iteration cap of 4t + 16 per refit, the weights are
//! always on the simplex, never NaN, and no add/drop cycle runs on.

#![no_std]
// `unsafe` is allowed only in the SIMD kernel modules `kernels::x86`,
// `kernels::int8_x86` (intrinsics behind run-time feature detection) and
// `kernels::int8_wasm` (simd128 loads), each block with a SAFETY comment.
#![deny(unsafe_code)]
#![warn(missing_docs)]
// Index loops over several parallel arrays read better in numeric code.
#![allow(clippy::needless_range_loop)]

mod baselines;
mod certified;
mod cholesky;
mod error;
mod exact;
mod input;
mod int8;
pub mod kernels;
mod method;
mod options;
mod pursuit;
mod recommend;
mod scratch;
mod selection;
mod solver;
mod workspace;

pub use baselines::{mmr, mmr_with, top_k, top_k_with};
pub use certified::{
    pursuit_int8, pursuit_int8_using, pursuit_int8_with, Int8Passes, INT8_AUTO_MAX_BUDGET,
    INT8_AUTO_MIN_DIM,
};
pub use cholesky::PIVOT_TOLERANCE;
pub use error::{Capacity, Error, ErrorKind, Int8Fault, ScratchBuffer, VectorFault};
/// The `half` crate (feature `half`): `f16` and `bf16` candidate storage.
#[cfg(feature = "half")]
pub use half;
pub use input::{CostBudget, Input, Relevance};
pub use int8::Int8Pool;
pub use kernels::int8::MAX_I8_DIM;
pub use kernels::{Element, Executor, Isa, PassJob, Serial, StrictOrder};
pub use method::Method;
pub use options::{
    AtPoolOptimum, DependentPicks, InputPolicy, InvalidCandidates, MmrOptions, Normalization,
    PursuitOptions, Stopping, MAX_NORM, MIN_NORM, UNIT_NORM_TOLERANCE,
};
pub use pursuit::{
    pursuit, pursuit_using, pursuit_with, Screening, AUTO_MIN_DIM, AUTO_SHARE, DENSE_SHARE,
};
pub use recommend::{
    recommend, recommended, recommended_with, Recommendation, RECOMMENDED_C_COSINE,
    RECOMMENDED_C_EXTERNAL, RECOMMENDED_THETA,
};
pub use scratch::{ScratchKind, ScratchSize};
pub use selection::{
    FieldType, FieldValue, RefitStatus, SelectionView, Step, StepField, StopReason,
};
pub use workspace::{
    CentroidWorkspace, FixedWorkspace, PursuitWorkspace, ScratchBuffers, TopKWorkspace, Workspace,
};
