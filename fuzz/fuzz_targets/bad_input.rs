//! Fuzz target `bad_input`: see `mempursuit_tests::checks::cases::BadInputCase` and
//! docs/FUZZING.md. A failing case panics with its reproducer (`{:?}`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mempursuit_tests::checks::cases::BadInputCase;

fuzz_target!(|case: BadInputCase| {
    if let Err(e) = case.run() {
        panic!("bad_input: {e}\nreproducer: {case:?}");
    }
});
