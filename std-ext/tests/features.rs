//! The library's default features pull only what `select` needs (issue 30,
//! item 2): `cargo tree -e normal -p mempursuit` lists no parser generator
//! or build-script tooling (npyz's pest, syn, psm, cc, num-bigint), only
//! the core and its SIMD and math crates; with `--features npy` they come
//! back (so the check can fail).

use std::process::Command;

/// The crate names of `cargo tree -e normal -p mempursuit` with `args`.
fn tree(args: &[&str]) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml");
    let out = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "--locked",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args([
            "--format",
            "{p}",
            "--manifest-path",
            manifest,
            "-p",
            "mempursuit",
        ])
        .args(args)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    names.sort();
    names.dedup();
    names
}

const TOOLING: [&str; 6] = ["npyz", "pest", "syn", "psm", "cc", "num-bigint"];

#[test]
fn default_features_pull_only_the_core() {
    let names = tree(&[]);
    // cpufeatures: the core's run-time CPU detection, on x86-64 only.
    let expected: Vec<&str> = [
        "bytemuck",
        "cpufeatures",
        "libm",
        "mempursuit",
        "mempursuit-core",
        "safe_arch",
        "wide",
    ]
    .into_iter()
    .filter(|n| *n != "cpufeatures" || cfg!(target_arch = "x86_64"))
    .collect();
    assert_eq!(names, expected, "{names:?}");
    let npy = tree(&["--features", "npy"]);
    for name in TOOLING {
        assert!(!names.contains(&name.to_owned()), "{name} in {names:?}");
    }
    for name in ["npyz", "pest", "syn"] {
        assert!(npy.contains(&name.to_owned()), "{name} not in {npy:?}");
    }
}
