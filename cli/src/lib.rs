//! # mempursuit-cli
//!
//! The `mempursuit` command-line program and the library behind its
//! evaluation: reading evidence-selection datasets ([`dataset`]: memory and
//! query embeddings as `.npy`, questions with their candidate pools and gold
//! evidence as JSON lines) and scoring selectors on them ([`eval`]: evidence
//! recall, complete coverage, group coverage).
//!
//! The selection library itself is the `mempursuit` crate (re-exported here
//! as [`mempursuit`]); depend on it, not on this crate, when you only select.
//!
//! ```
//! use mempursuit_cli::dataset::Dataset;
//! use mempursuit_cli::eval::{evaluate, EvalOptions, NamedMethod};
//! use mempursuit_cli::mempursuit::{InputPolicy, Method, PursuitOptions};
//!
//! let data = Dataset::load_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/data/hotpotqa-mini"))?;
//! let methods = [
//!     NamedMethod::new("top-K", Method::TopK(InputPolicy::default())),
//!     NamedMethod::new("MemPursuit", Method::Pursuit(PursuitOptions::default())),
//! ];
//! let report = evaluate(&data, &methods, &EvalOptions::new(vec![5, 10]))?;
//! assert_eq!(report.methods.len(), 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]
#![deny(unsafe_code)]

pub use mempursuit;

pub mod copies;
pub mod dataset;
pub mod eval;
pub mod plot;
pub mod tune;
