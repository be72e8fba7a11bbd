//! Fuzz target `dataset`: arbitrary bytes, split into the four files of a
//! dataset, to `Dataset::from_bytes` and the evaluation; see
//! `mempursuit_tests::checks::parsers::check_dataset` and docs/FUZZING.md.
//! A failing input panics with the broken contract.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mempursuit_tests::checks::parsers::check_dataset;

fuzz_target!(|bytes: &[u8]| {
    if let Err(e) = check_dataset(bytes) {
        panic!("dataset: {e}");
    }
});
