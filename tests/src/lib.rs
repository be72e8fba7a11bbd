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

/// Whether the deep runs are asked for: `MEMPURSUIT_DEEP=1` in the
/// environment (`.ci/run` sets it for the tests crate). Without it the
/// heaviest property runs take a subset of their cases, so that `cargo test
/// --workspace` stays within minutes on 2 cores; every property still runs
/// on every kind of pool.
pub fn deep() -> bool {
    std::env::var_os("MEMPURSUIT_DEEP").is_some_and(|v| v == "1")
}

/// `items` under [`deep`], else every `stride`-th of them (the first, then
/// each `stride`-th after it).
pub fn sample<T>(items: impl IntoIterator<Item = T>, stride: usize) -> Vec<T> {
    let stride = if deep() { 1 } else { stride.max(1) };
    items.into_iter().step_by(stride).collect()
}
