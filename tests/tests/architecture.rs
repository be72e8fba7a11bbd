//! ARCHITECTURE.md cannot go stale silently: every path it names in
//! backticks exists in the repository, and every Rust name it cites (a
//! function, type, field, test or fuzz target, `Type::item` paths and
//! `prefix_*` test families) still occurs in the sources.
//!
//! What counts as what, for a backticked token:
//! * a path: contains `/` or ends in `.rs`, `.md`, `.sh`, `.mjs` or
//!   `.toml`; it must be a file or folder relative to the repository root,
//!   or the end of one (`kernels/exec.rs`, `kkt.rs`);
//! * a name: letters, digits, `_`, `::` and an optional trailing `*`; each
//!   `::` segment must occur as a whole word (or, with `*`, as the start of
//!   a word) in a `.rs` or `Cargo.toml` file;
//! * anything else (code such as `#![no_std]` or `pursuit(input, …)`) is
//!   not checked.

use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// Every file and folder under `dir`, relative to `root`, skipping build
/// output, version control, dependencies and fuzz corpora.
fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, bool)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if matches!(
            name.as_str(),
            "target" | ".git" | "node_modules" | "corpus" | "artifacts"
        ) {
            continue;
        }
        let rel = path
            .strip_prefix(root)
            .expect("under the root")
            .to_string_lossy()
            .replace('\\', "/");
        let is_dir = path.is_dir();
        out.push((rel, is_dir));
        if is_dir {
            walk(root, &path, out);
        }
    }
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether `word` occurs in `text` as a whole word (`prefix`: as the start
/// of a word).
fn has_word(text: &str, word: &str, prefix: bool) -> bool {
    let mut from = 0;
    while let Some(at) = text[from..].find(word) {
        let start = from + at;
        let end = start + word.len();
        let before_ok = text[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !is_word_char(c));
        let after_ok = prefix || text[end..].chars().next().is_none_or(|c| !is_word_char(c));
        if before_ok && after_ok {
            return true;
        }
        from = end;
    }
    false
}

#[test]
fn architecture_md_names_only_what_exists() {
    let root = repo_root();
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut entries = Vec::new();
    walk(&root, &root, &mut entries);
    let mut sources = String::new();
    for (rel, is_dir) in &entries {
        if !is_dir && (rel.ends_with(".rs") || rel.ends_with("Cargo.toml")) {
            sources.push_str(&std::fs::read_to_string(root.join(rel)).unwrap_or_default());
            sources.push('\n');
        }
    }

    let mut missing = Vec::new();
    let mut checked = 0;
    for (i, token) in doc.split('`').enumerate() {
        // Odd pieces are inside backticks.
        if i % 2 == 0 || token.is_empty() {
            continue;
        }
        let is_path = token.contains('/')
            || [".rs", ".md", ".sh", ".mjs", ".toml"]
                .iter()
                .any(|e| token.ends_with(e));
        if is_path {
            if token.contains(' ') {
                continue;
            }
            let want = token.trim_end_matches('/');
            let found = entries.iter().any(|(rel, is_dir)| {
                (rel == want || rel.ends_with(&format!("/{want}")))
                    && (*is_dir || !token.ends_with('/'))
            });
            checked += 1;
            if !found {
                missing.push(format!("path `{token}`"));
            }
            continue;
        }
        let (name, prefix) = match token.strip_suffix('*') {
            Some(n) => (n, true),
            None => (token, false),
        };
        let name = name.trim_start_matches('*');
        if name.is_empty() || !name.chars().all(|c| is_word_char(c) || c == ':') {
            continue;
        }
        let segments: Vec<&str> = name.split("::").collect();
        for (k, seg) in segments.iter().enumerate() {
            let last = k + 1 == segments.len();
            checked += 1;
            if !has_word(&sources, seg, prefix && last) {
                missing.push(format!("name `{token}` (segment `{seg}`)"));
            }
        }
    }
    assert!(checked > 100, "only {checked} tokens checked");
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names what the repository does not have:\n{}",
        missing.join("\n")
    );
}
