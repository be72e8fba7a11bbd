//! # mempursuit
//!
//! MemPursuit (Feng & Fan, *Recall What Is Missing: Composing Evidence from
//! Long-Term Agent Memory*, 2026) for Rust services and tools. From a query
//! embedding and a pool of P candidate memory embeddings it picks K memories
//! one at a time: each pick is the candidate best aligned with the residual
//! of a sparse convex reconstruction of the query from the memories already
//! picked (Eqs. 5, 9), and after each pick all weights are refit on the
//! simplex (Eq. 6). A paraphrase of a fact already picked scores low; the
//! fact that is still missing scores high.
//!
//! ```
//! use mempursuit::{Input, Method, PursuitOptions, Selector};
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // d = 2. Rows 0 and 1 are paraphrases of fact A, row 2 states fact B.
//!     let s = std::f32::consts::FRAC_1_SQRT_2;
//!     let query = [s, s];
//!     let pool = [0.9950, 0.0998, 0.9998, 0.0200, 0.0, 1.0];
//!
//!     let mut selector = Selector::new(); // reuse it across queries
//!     let input = Input::new(&query, &pool);
//!     // The recommended setting (the default): no tuning.
//!     let sel = selector.select(&input, 2, &Method::default())?;
//!     assert_eq!(sel.picks, [0, 2]); // A, then the missing fact B
//!     assert!((sel.weights.iter().sum::<f64>() - 1.0).abs() < 1e-9); // on the simplex
//!
//!     // The paper's method, by name: the same picks here.
//!     let paper = selector.select(&input, 2, &Method::Pursuit(PursuitOptions::PAPER))?;
//!     assert_eq!(paper.picks, [0, 2]);
//!
//!     let top = selector.select(&input, 2, &Method::TopK(Default::default()))?;
//!     assert_eq!(top.picks, [0, 1]); // A and its paraphrase
//!     Ok(())
//! }
//! ```
//!
//! This crate is everything of the `no_std`, allocation-free core
//! [`mempursuit_core`] (re-exported here: [`pursuit`], [`top_k`], [`mmr`],
//! [`Input`], [`PursuitOptions`], [`Step`], …; the input contract and the
//! relevance-scaled family are described on its front page) plus:
//!
//! * [`Selector`]: a heap-backed workspace that grows to the largest shape
//!   it has seen and is reused across queries, with owned [`Selection`]
//!   results; [`Selector::workspace`] lends the core functions a workspace
//!   that allocates nothing once grown;
//! * [`parallel`]: one query's passes split over threads
//!   ([`parallel::SplitPool`]) and many queries on a pool of threads
//!   ([`parallel::select_batch`]), both bit-identical to the serial result;
//! * `npy` (feature `npy`): f32 matrices from `.npy` files;
//! * `synth` (feature `synth`): the seeded fact-cluster generator of the
//!   paper's Assumption B.1, the test oracle of the coverage guarantee.
//!
//! The command-line program and the dataset evaluation live in the
//! `mempursuit-cli` crate, so this library pulls in no argument parser or
//! JSON library.
//!
//! # Features
//! * `npy`: `npy`, reading f32 matrices from `.npy` files (`npyz`).
//! * `serde`: `Serialize`/`Deserialize` for the options and results.
//! * `half`: f16 / bf16 candidate storage ([`Input::with_storage`]).
//! * `synth`: `synth`, the seeded fact-cluster generator (`rand`).
//!
//! No feature is on by default: the crate then depends on nothing but the
//! core (`wide`, `libm`, and `cpufeatures` on x86-64); the command-line
//! program turns on `npy`, `serde`, `half` and `synth`.
//!
//! Build with `--release`: a debug build of the numeric kernels is about
//! two orders of magnitude slower.

#![warn(missing_docs)]
// `unsafe` is allowed only in `parallel` (the hand-off of a pass's jobs to
// persistent worker threads), each block with a SAFETY argument; Miri
// checks it (`.ci/miri.sh`).
#![deny(unsafe_code)]

pub use mempursuit_core::*;

mod call;
pub mod documents;
mod int8;
#[cfg(feature = "npy")]
pub mod npy;
mod selector;
pub mod spec;
mod store;

pub use call::{CallData, CallError, Pool, StorageError, StorageFault, EXCLUDE_HINT};
pub use documents::{parse_embedding, DocumentError, DocumentSpec, Prepared, ScoreKind};
pub use selector::{ReserveError, Selection, Selector};
pub use spec::{MethodName, SelectSpec, SpecError, Storage};
pub use store::{Store, StoreCall, StoreError};

pub use int8::Int8Candidates;
pub mod parallel;
#[cfg(feature = "synth")]
pub mod synth;

/// The examples of README.md, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The examples of the documents under docs/ that have Rust blocks, compiled
/// and run as doctests (`tests/readme.rs` checks that none is left out).
#[cfg(doctest)]
pub mod docs_doctests {
    /// docs/METHODS.md.
    #[doc = include_str!("../../docs/METHODS.md")]
    pub struct Methods;
    /// docs/RUST.md.
    #[doc = include_str!("../../docs/RUST.md")]
    pub struct Rust;
}
