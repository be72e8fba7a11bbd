//! Integer dot products of int8 codes (the pass of the certified int8
//! pursuit, see `crate::int8`).
//!
//! Every kernel here computes `out[i] = Σ_k rows[i·d + k] · v[k]` exactly in
//! i32: the codes are in −127..=127 (−128 never occurs; the quantizer and
//! the constructor of caller-supplied codes reject it), so one product is at
//! most 127² = 16 129 in magnitude and a sum of d products stays below 2³¹
//! for every d ≤ [`MAX_I8_DIM`] = 133 000 (16 129 · 133 000 = 2 145 157 000
//! < 2 147 483 648). Integer addition is exact and associative, so every
//! instruction set, register blocking and split over threads gives the same
//! result, bit for bit; there is no reduction order to keep.
//!
//! # Dispatch
//! `dots_i8` is the one entry point. It picks an instruction-set specific
//! kernel when one is available and falls back to the portable kernel
//! (`kernels::portable::dots_i8`) otherwise: AVX-512 VNNI, AVX-VNNI or AVX2
//! on x86-64 (`int8_x86.rs`, detected at run time), simd128 on WebAssembly
//! (`int8_wasm.rs`, when the build enables it). Same signature, same exact
//! result.

/// The largest d for which an int8 dot product is exact in i32 (module
/// docs): 127² · d < 2³¹.
pub const MAX_I8_DIM: usize = 133_000;

/// `out[i] = Σ_k rows[i·d + k] as i32 · v[k] as i32` for every row i of the
/// row-major P × d code matrix `rows`, P = `out.len()`: exact (module docs),
/// so every instruction set gives the same values. This is the pass of each
/// pick of the certified int8 pursuit (the int8 Gram row c_i · c_pick),
/// public for benchmarks and for callers with their own int8 stores.
///
/// Codes must be in −127..=127 (as [`Int8Pool`](crate::Int8Pool) keeps
/// them): with a −128 in `rows` or `v` the values are unspecified (the
/// AVX2 and AVX-VNNI kernels negate codes, and −(−128) wraps) but there is
/// no undefined behaviour. The kernel does not scan for it (that would be
/// a second pass).
///
/// # Panics
/// If `rows.len() != out.len() · d`, `v.len() != d` or `d > MAX_I8_DIM`.
///
/// # Example
/// ```
/// use mempursuit_core::kernels::int8::dots_i8;
/// let rows = [1i8, 2, 3, -4, 5, -6]; // P = 2 rows of d = 3
/// let mut out = [0i32; 2];
/// dots_i8(&rows, 3, &[1, 1, 1], &mut out);
/// assert_eq!(out, [6, -5]);
/// ```
pub fn dots_i8(rows: &[i8], d: usize, v: &[i8], out: &mut [i32]) {
    assert!(
        out.len().checked_mul(d) == Some(rows.len()) && v.len() == d && d <= MAX_I8_DIM,
        "int8 kernel shape: {} codes for {} rows of d = {d}, vector of {}",
        rows.len(),
        out.len(),
        v.len()
    );
    // SIMD variants, each behind its run-time (x86-64: AVX-512 VNNI,
    // AVX-VNNI or AVX2, cached detection) or compile-time (WASM simd128)
    // feature check; all give exactly the portable kernel's values.
    #[cfg(target_arch = "x86_64")]
    if super::int8_x86::I8Isa::detect().is_some() {
        return super::int8_x86::dots_i8(rows, d, v, out);
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    return super::int8_wasm::dots_i8(rows, d, v, out);
    #[allow(unreachable_code)]
    super::portable::dots_i8(rows, d, v, out)
}

/// Whether this CPU has an int8 dot-product instruction that makes the
/// int8 pass cheaper per byte than the f32 one: AVX-512 VNNI or AVX-VNNI on
/// x86-64 (cached detection). AVX2's `vpmaddubsw` path is exact too but
/// measured no faster per row than the f32 pass (BENCHMARKS.md).
pub fn has_int8_dot_instruction() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use super::int8_x86::I8Isa;
        matches!(I8Isa::detect(), Some(I8Isa::Avx512Vnni | I8Isa::AvxVnni))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The L2 cache of the core this runs on, in bytes: CPUID leaf 0x8000_0006
/// on x86-64 (AMD and Intel report it there), 1 MiB where it is not
/// reported (and off x86-64).
pub fn l2_cache_bytes() -> usize {
    const DEFAULT: usize = 1 << 20;
    #[cfg(target_arch = "x86_64")]
    {
        super::int8_x86::l2_cache_kib().map_or(DEFAULT, |kib| kib * 1024)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::portable::dots_i8 as dots_i8_portable;

    fn codes(n: usize, seed: u64) -> [i8; 2048] {
        let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        let mut out = [0i8; 2048];
        for c in out.iter_mut().take(n) {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            *c = (((s >> 33) % 255) as i32 - 127) as i8;
        }
        out
    }

    #[test]
    fn int8_dots_are_exact() {
        for d in [1usize, 7, 15, 16, 17, 33, 100] {
            for p in [0usize, 1, 3, 4, 5, 9] {
                let m = codes(p * d, (d * 31 + p) as u64);
                let v = codes(d, 5 + d as u64);
                let mut out = [0i32; 16];
                dots_i8(&m[..p * d], d, &v[..d], &mut out[..p]);
                for i in 0..p {
                    let e: i64 = (0..d).map(|k| m[i * d + k] as i64 * v[k] as i64).sum();
                    assert_eq!(out[i] as i64, e, "d={d} p={p} i={i}");
                }
            }
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe integer arithmetic over 133 000 codes (no unsafe code on this path): too slow interpreted"
    )]
    fn extreme_codes_at_the_largest_dimension_do_not_overflow() {
        // 127 · 127 · MAX_I8_DIM < 2³¹: the worst case is exact.
        static ROW: [i8; MAX_I8_DIM] = [127; MAX_I8_DIM];
        static NEG: [i8; MAX_I8_DIM] = [-127; MAX_I8_DIM];
        let mut out = [0i32; 1];
        dots_i8(&ROW, MAX_I8_DIM, &ROW, &mut out);
        assert_eq!(out[0] as i64, 127 * 127 * MAX_I8_DIM as i64);
        dots_i8(&ROW, MAX_I8_DIM, &NEG, &mut out);
        assert_eq!(out[0] as i64, -127 * 127 * MAX_I8_DIM as i64);
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe integer arithmetic over 133 000 codes (no unsafe code on this path): too slow interpreted"
    )]
    fn out_of_range_codes_wrap_instead_of_panicking() {
        // −128 is outside the documented range: 128² · MAX_I8_DIM > 2³¹, so
        // the portable sum wraps (a debug build must not panic on it).
        static MIN: [i8; MAX_I8_DIM] = [-128; MAX_I8_DIM];
        let mut out = [0i32; 1];
        dots_i8_portable(&MIN, MAX_I8_DIM, &MIN, &mut out);
        let exact = 128 * 128 * MAX_I8_DIM as i64;
        assert_eq!(out[0], exact as i32, "the exact sum modulo 2³²");
        assert!(exact > i32::MAX as i64);
        // The dispatched kernel returns some value, without panicking.
        dots_i8(&MIN, MAX_I8_DIM, &MIN, &mut out);
    }
}
