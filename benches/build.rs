//! With the `openblas` feature, link the system OpenBLAS (`libopenblas.so`,
//! Debian / Ubuntu package `libopenblas-dev`), whose `cblas_sgemv` the
//! `cblas-sys` bindings declare. (The `openblas-src` crate's `system`
//! feature does the same, but its build script compiles an HTTPS client
//! for its download mode even then.) Nothing to do without the feature.
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_OPENBLAS").is_some() {
        if let Some(dir) = std::env::var_os("OPENBLAS_LIB_DIR") {
            println!("cargo::rustc-link-search=native={}", dir.to_string_lossy());
        }
        println!("cargo::rerun-if-env-changed=OPENBLAS_LIB_DIR");
        println!("cargo::rustc-link-lib=dylib=openblas");
    }
}
