//! README.md's Rust examples are whole programs that compile as pasted.
//!
//! The `ReadmeDoctests` item of `src/lib.rs` includes README.md as doc
//! comments, so `cargo test -p mempursuit --doc` compiles and runs every
//! ```` ```rust ```` block; a `main` that returns `Err` fails it. This test
//! checks what rustdoc would forgive but a user pasting the block would
//! not: no hidden doctest lines (`# ...`), no fence attribute that skips
//! compiling or running (`ignore`, `no_run`, `compile_fail`), and a
//! `fn main() -> Result<(), Box<dyn std::error::Error>>`, so the block is
//! the same program whether pasted into `src/main.rs` or read by rustdoc.

use std::path::Path;

/// Every fenced block of `text`: (first line number, info string, body).
fn fenced_blocks(text: &str) -> Vec<(usize, String, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String, String)> = None;
    for (n, line) in text.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (open.take(), fence) {
            (None, Some(info)) => open = Some((n + 1, info.trim().to_string(), String::new())),
            (None, None) => {}
            (Some(block), Some(_)) => blocks.push(block),
            (Some((start, info, mut body)), None) => {
                body.push_str(line);
                body.push('\n');
                open = Some((start, info, body));
            }
        }
    }
    blocks
}

/// Whether rustdoc treats a block with this info string as Rust: no
/// language, or a first word starting with `rust` (`rust`, `rust,ignore`).
fn is_rust(info: &str) -> bool {
    let first = info.split([',', ' ']).next().unwrap_or("");
    first.is_empty() || first.starts_with("rust")
}

#[test]
fn readme_rust_examples_are_whole_programs() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let text = std::fs::read_to_string(&path).expect("README.md at the repository root");
    let blocks: Vec<_> = fenced_blocks(&text)
        .into_iter()
        .filter(|(_, info, _)| is_rust(info))
        .collect();
    assert!(
        blocks.len() >= 2,
        "expected the two library examples, found {} rust blocks",
        blocks.len()
    );
    for (line, info, body) in &blocks {
        assert_eq!(
            info, "rust",
            "README.md:{line}: the fence must be plain ```rust (attributes such as \
             ignore or no_run skip the doctest)"
        );
        for (i, l) in body.lines().enumerate() {
            let t = l.trim_start();
            assert!(
                !(t == "#" || t.starts_with("# ")),
                "README.md:{}: a hidden doctest line; a user would paste it verbatim: {l:?}",
                line + 1 + i
            );
        }
        assert!(
            body.contains("fn main() -> Result<(), Box<dyn std::error::Error>> {"),
            "README.md:{line}: the example must be a whole program with \
             fn main() -> Result<(), Box<dyn std::error::Error>>"
        );
    }
}
