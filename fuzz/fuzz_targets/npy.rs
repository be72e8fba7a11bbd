//! Fuzz target `npy`: arbitrary bytes to the `.npy` reader
//! (`mempursuit::npy`); see `mempursuit_tests::checks::parsers::check_npy`
//! and docs/FUZZING.md. A failing input panics with the broken contract.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mempursuit_tests::checks::parsers::check_npy;

fuzz_target!(|bytes: &[u8]| {
    if let Err(e) = check_npy(bytes) {
        panic!("npy: {e}");
    }
});
