//! Test support for `mempursuit`: an independent f64 reference
//! implementation of MemPursuit ([`mod@reference`]), a loader of the HotpotQA
//! fixture ([`fixture`]) and seeded random inputs ([`random`]).
//!
//! The integration tests in `tests/tests/` compare the core against the
//! reference, check the KKT conditions and certificates, and exercise every
//! input error.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod checks;
pub mod fixture;
pub mod random;
pub mod reference;
pub mod scratch;
