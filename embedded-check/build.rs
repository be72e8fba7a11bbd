//! Puts `memory.x` where cortex-m-rt's `link.x` finds it and links with
//! `link.x` (the cortex-m-quickstart arrangement, so no `.cargo/config.toml`
//! is needed and `--manifest-path` builds from any directory work).

use std::{env, fs, path::PathBuf};

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    fs::write(out.join("memory.x"), include_bytes!("memory.x")).expect("write memory.x");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rerun-if-changed=build.rs");
    if env::var("TARGET").is_ok_and(|t| t.starts_with("thumb")) {
        println!("cargo:rustc-link-arg-bins=-Tlink.x");
    }
}
