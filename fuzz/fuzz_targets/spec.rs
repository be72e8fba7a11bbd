//! Fuzz target `spec`: arbitrary bytes as the text and JSON forms of a
//! selector specification (`mempursuit::SelectSpec`); see
//! `mempursuit_tests::checks::parsers::check_spec` and docs/FUZZING.md. A
//! failing input panics with the broken contract.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mempursuit_tests::checks::parsers::check_spec;

fuzz_target!(|bytes: &[u8]| {
    if let Err(e) = check_spec(bytes) {
        panic!("spec: {e}");
    }
});
