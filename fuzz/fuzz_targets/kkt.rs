//! Fuzz target `kkt`: see `mempursuit_tests::checks::cases::KktCase` and
//! docs/FUZZING.md. A failing case panics with its reproducer (`{:?}`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mempursuit_tests::checks::cases::KktCase;

fuzz_target!(|case: KktCase| {
    if let Err(e) = case.run() {
        panic!("kkt: {e}\nreproducer: {case:?}");
    }
});
