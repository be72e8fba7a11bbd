//! Tells the unit tests which instruction sets the machine that builds
//! them has, so that a kernel test whose instruction set is missing is
//! reported as ignored, with the reason, instead of comparing the portable
//! kernel with itself (the kernels fall back to it on such a CPU).
//!
//! Sets `mempursuit_cpu_avx2` (AVX2 + FMA + F16C: the f32 kernels of
//! `kernels/x86.rs`), `mempursuit_cpu_avx512vnni` (AVX-512 F/BW/VL + VNNI)
//! and `mempursuit_cpu_avxvnni` (AVX-VNNI) when this build compiles for the
//! machine it runs on (host = target, x86-64) and the machine has them. The
//! library itself never reads these: it detects the CPU at run time. A test
//! ignored for lack of a CPU feature also asserts the feature when forced
//! to run (`cargo test -- --ignored`), so it fails instead of passing
//! vacuously.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    for cfg in [
        "mempursuit_cpu_avx2",
        "mempursuit_cpu_avx512vnni",
        "mempursuit_cpu_avxvnni",
    ] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    let host = std::env::var("HOST").unwrap_or_default();
    let target = std::env::var("TARGET").unwrap_or_default();
    if host != target {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("avx2") && has!("fma") && has!("f16c") {
            println!("cargo::rustc-cfg=mempursuit_cpu_avx2");
            if has!("avx512f") && has!("avx512bw") && has!("avx512vl") && has!("avx512vnni") {
                println!("cargo::rustc-cfg=mempursuit_cpu_avx512vnni");
            }
            if has!("avxvnni") {
                println!("cargo::rustc-cfg=mempursuit_cpu_avxvnni");
            }
        }
    }
}
