//! # mempursuit
//!
//! MemPursuit (Feng & Fan, *Recall What Is Missing*, 2026) for Rust services
//! and tools: everything of the `no_std` core [`mempursuit_core`]
//! (re-exported here) plus a heap-backed reusable [`Selector`] with owned
//! [`Selection`] results, `.npy` input ([`npy`]), the evaluation of
//! selectors on evidence-selection datasets ([`dataset`], [`eval`]) and the
//! `mempursuit` command-line program.

#![warn(missing_docs)]

pub use mempursuit_core::*;

mod int8;
pub mod npy;
mod selector;

pub use int8::Int8Candidates;

pub use selector::{Method, Selection, Selector};
pub mod dataset;
pub mod eval;
pub mod parallel;
pub mod synth;

/// The examples of README.md, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
