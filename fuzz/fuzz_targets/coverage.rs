//! Fuzz target `coverage`: see `mempursuit_tests::checks::cases::CoverageCase` and
//! docs/FUZZING.md. A failing case panics with its reproducer (`{:?}`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mempursuit_tests::checks::cases::CoverageCase;

fuzz_target!(|case: CoverageCase| {
    if let Err(e) = case.run() {
        panic!("coverage: {e}\nreproducer: {case:?}");
    }
});
