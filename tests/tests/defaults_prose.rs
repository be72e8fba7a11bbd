//! The defaults of γ, the ridge λ and λ_mmr are constants of the Rust
//! crates (`PursuitOptions::PAPER`, `CENTROID_GAMMA`, `MmrOptions::PAPER`);
//! every place that states them in prose for a binding's users (the
//! Python docstring of `select`, the TypeScript declarations) must state
//! those constants, so that changing one fails here until the prose
//! follows. (The option table's own docs are checked beside it, in
//! `std-ext/src/spec.rs`.)

use std::path::Path;

use mempursuit::spec::CENTROID_GAMMA;
use mempursuit::{MmrOptions, PursuitOptions};

fn read(rel: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The phrases each binding's docs must contain, built from the constants.
fn phrases() -> [String; 3] {
    [
        format!(
            "default {} for pursuit, {} for centroid",
            PursuitOptions::PAPER.gamma,
            CENTROID_GAMMA
        ),
        format!("default {:e}", PursuitOptions::PAPER_RIDGE),
        format!("default {}", MmrOptions::PAPER.lambda),
    ]
}

#[test]
fn binding_docs_state_the_rust_defaults() {
    for rel in ["python/src/lib.rs", "wasm/mempursuit.d.ts"] {
        let text = read(rel);
        for phrase in phrases() {
            assert!(text.contains(&phrase), "{rel} does not say '{phrase}'");
        }
    }
}

#[test]
fn the_phrases_are_the_current_constants() {
    // The check above is only as good as its phrases: pin them to what the
    // constants are today, so a change of a default is a visible decision.
    assert_eq!(
        phrases(),
        [
            "default 1 for pursuit, 0.5 for centroid".to_owned(),
            "default 1e-10".to_owned(),
            "default 0.5".to_owned(),
        ]
    );
}
