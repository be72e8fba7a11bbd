//! # mempursuit
//!
//! MemPursuit (Feng & Fan, *Recall What Is Missing*, 2026) for Rust services
//! and tools: everything of the `no_std` core [`mempursuit_core`]
//! (re-exported here) plus a heap-backed reusable [`Selector`] with owned
//! [`Selection`] results, `.npy` input ([`npy`], feature `npy`, on by
//! default), threads ([`parallel`]) and the seeded fact-cluster generator
//! ([`synth`], feature `synth`).
//!
//! The command-line program and the dataset evaluation live in the
//! `mempursuit-cli` crate, so this library pulls in no argument parser or
//! JSON library.
//!
//! # Features
//! * `npy` (default): [`npy`], reading f32 matrices from `.npy` files (`npyz`).
//! * `serde`: `Serialize`/`Deserialize` for the options and results.
//! * `half`: f16 / bf16 candidate storage ([`Input::with_storage`]).
//! * `synth`: [`synth`], the seeded fact-cluster generator (`rand`).

#![warn(missing_docs)]

pub use mempursuit_core::*;

mod int8;
#[cfg(feature = "npy")]
pub mod npy;
mod selector;

pub use selector::{ReserveError, Selection, Selector};

pub use int8::Int8Candidates;
pub mod parallel;
#[cfg(feature = "synth")]
pub mod synth;

/// The examples of README.md, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
