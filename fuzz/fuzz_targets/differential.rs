//! Fuzz target `differential`: see `mempursuit_tests::checks::cases::DifferentialCase` and
//! docs/FUZZING.md. A failing case panics with its reproducer (`{:?}`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mempursuit_tests::checks::cases::DifferentialCase;

fuzz_target!(|case: DifferentialCase| {
    if let Err(e) = case.run() {
        panic!("differential: {e}\nreproducer: {case:?}");
    }
});
