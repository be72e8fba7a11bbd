//! The Rust examples of README.md and docs/*.md are whole programs that
//! compile as pasted.
//!
//! The `ReadmeDoctests` and `docs_doctests` items of `src/lib.rs` include
//! the documents as doc comments, so `cargo test -p mempursuit --doc`
//! compiles and runs every ```` ```rust ```` block; a `main` that returns
//! `Err` fails it. This test checks what rustdoc would forgive but a user
//! pasting the block would not: no hidden doctest lines (`# ...`), no fence
//! attribute that skips compiling or running (`ignore`, `no_run`,
//! `compile_fail`), a `fn main() -> Result<(), Box<dyn std::error::Error>>`,
//! so the block is the same program whether pasted into `src/main.rs` or
//! read by rustdoc, and no crate but `mempursuit`, the one README's
//! dependency line gives (the doctests would also see `mempursuit_core`,
//! a user would not). It also checks that every document with Rust blocks
//! is included as doctests.

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

/// The Rust blocks of the document at `rel` (relative to the repository
/// root), checked as the module docs say.
fn check_document(rel: &str) -> usize {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let blocks: Vec<_> = fenced_blocks(&text)
        .into_iter()
        .filter(|(_, info, _)| is_rust(info))
        .collect();
    for (line, info, body) in &blocks {
        assert_eq!(
            info, "rust",
            "{rel}:{line}: the fence must be plain ```rust (attributes such as \
             ignore or no_run skip the doctest; other code needs its language: ```text)"
        );
        for (i, l) in body.lines().enumerate() {
            let t = l.trim_start();
            assert!(
                !(t == "#" || t.starts_with("# ")),
                "{rel}:{}: a hidden doctest line; a user would paste it verbatim: {l:?}",
                line + 1 + i
            );
        }
        assert!(
            body.contains("fn main() -> Result<(), Box<dyn std::error::Error>> {"),
            "{rel}:{line}: the example must be a whole program with \
             fn main() -> Result<(), Box<dyn std::error::Error>>"
        );
        for other in ["mempursuit_core", "mempursuit_cli", "mempursuit_benches"] {
            assert!(
                !body.contains(other),
                "{rel}:{line}: uses `{other}`, which README's dependency line \
                 (`mempursuit` only) does not give; write `mempursuit::`"
            );
        }
    }
    blocks.len()
}

#[test]
fn readme_rust_examples_are_whole_programs() {
    let n = check_document("README.md");
    assert!(
        n >= 1,
        "expected README's recommended call, found {n} rust blocks"
    );
}

#[test]
fn docs_rust_examples_are_whole_programs_and_doctests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let lib = std::fs::read_to_string(root.join("std-ext/src/lib.rs")).unwrap();
    let mut with_rust = Vec::new();
    for entry in std::fs::read_dir(root.join("docs")).expect("docs/") {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !name.ends_with(".md") {
            continue;
        }
        let rel = format!("docs/{name}");
        if check_document(&rel) > 0 {
            assert!(
                lib.contains(&format!("include_str!(\"../../{rel}\")")),
                "{rel} has Rust blocks: include it in src/lib.rs's docs_doctests"
            );
            with_rust.push(rel);
        }
    }
    for rel in ["docs/METHODS.md", "docs/RUST.md"] {
        assert!(
            with_rust.iter().any(|d| d == rel),
            "no Rust blocks found in {rel}"
        );
    }
}
