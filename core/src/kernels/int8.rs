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
//! result. [`Int8Kernel`] names the kernels; [`Int8Kernel::force`] makes a
//! process run a lesser one (benchmarks of the AVX2 path on a VNNI CPU).

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
    dots_i8_pass(rows, d, v, out, rows.len())
}

/// [`dots_i8`] on `rows`, a part of a pass over `pass_bytes` bytes of codes
/// (P·d of the whole pool): where those exceed half the L2 cache the AVX2
/// kernel prefetches the rows it reads next (a loss when they stay in L2,
/// a gain when they stream from L3; `int8_x86.rs`). Same values.
///
/// # Panics
/// As [`dots_i8`].
pub(crate) fn dots_i8_pass(rows: &[i8], d: usize, v: &[i8], out: &mut [i32], pass_bytes: usize) {
    assert!(
        out.len().checked_mul(d) == Some(rows.len()) && v.len() == d && d <= MAX_I8_DIM,
        "int8 kernel shape: {} codes for {} rows of d = {d}, vector of {}",
        rows.len(),
        out.len(),
        v.len()
    );
    // (Read by the x86-64 AVX2 kernel only.)
    let _ = pass_bytes;
    // SIMD variants, each behind its run-time (x86-64: AVX-512 VNNI,
    // AVX-VNNI or AVX2, cached detection) or compile-time (WASM simd128)
    // feature check; all give exactly the portable kernel's values.
    match Int8Kernel::active() {
        #[cfg(target_arch = "x86_64")]
        Int8Kernel::Avx512Vnni => super::int8_x86::dots_i8_avx512vnni(rows, d, v, out),
        #[cfg(target_arch = "x86_64")]
        Int8Kernel::AvxVnni => super::int8_x86::dots_i8_avxvnni(rows, d, v, out),
        #[cfg(target_arch = "x86_64")]
        Int8Kernel::Avx2 if pass_bytes > l2_cache_bytes() / 2 => {
            super::int8_x86::dots_i8_avx2_prefetch(rows, d, v, out)
        }
        #[cfg(target_arch = "x86_64")]
        Int8Kernel::Avx2 => super::int8_x86::dots_i8_avx2(rows, d, v, out),
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        Int8Kernel::Simd128 => super::int8_wasm::dots_i8(rows, d, v, out),
        _ => super::portable::dots_i8(rows, d, v, out),
    }
}

/// The kernels of the int8 pass ([`dots_i8`]), best first. All give the
/// same values (exact integers); they differ in speed only, and the rule
/// of [`Int8Passes::Auto`](crate::Int8Passes::Auto) reads which one runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Int8Kernel {
    /// x86-64 AVX-512 F/BW/VL + AVX512_VNNI: `vpdpbusd` on 64 bytes.
    Avx512Vnni,
    /// x86-64 AVX2 + AVX-VNNI: `vpdpbusd` on 32 bytes (VEX).
    AvxVnni,
    /// x86-64 AVX2 without an int8 dot instruction: `vpmaddubsw` +
    /// `vpmaddwd` on 32 bytes.
    Avx2,
    /// WebAssembly simd128 (`i32x4.dot_i16x8_s`; compile-time feature).
    Simd128,
    /// The portable kernel (`wide`, any target).
    Portable,
}

/// [`Int8Kernel::force`] of this process: 0 = none (detection), else the
/// forced kernel's index + 1 in declaration order.
static FORCED: core::sync::atomic::AtomicU8 = core::sync::atomic::AtomicU8::new(0);

/// The error of [`Int8Kernel::force`]: this CPU (or build) cannot run the
/// kernel asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelUnavailable {
    /// The kernel asked for.
    pub asked: Int8Kernel,
    /// The best kernel this CPU and build run ([`Int8Kernel::detect`]).
    pub best: Int8Kernel,
}

impl core::fmt::Display for KernelUnavailable {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "int8 kernel {} is not available on this CPU or build (best: {}); pick one it runs (Int8Kernel::is_available)",
            self.asked.name(),
            self.best.name()
        )
    }
}

impl Int8Kernel {
    const ALL: [Int8Kernel; 5] = [
        Int8Kernel::Avx512Vnni,
        Int8Kernel::AvxVnni,
        Int8Kernel::Avx2,
        Int8Kernel::Simd128,
        Int8Kernel::Portable,
    ];

    /// The best kernel this CPU and build run (x86-64: cached CPUID
    /// detection; WebAssembly: simd128 when the build enables it).
    pub fn detect() -> Int8Kernel {
        #[cfg(target_arch = "x86_64")]
        {
            use super::int8_x86::I8Isa;
            match I8Isa::detect() {
                Some(I8Isa::Avx512Vnni) => Int8Kernel::Avx512Vnni,
                Some(I8Isa::AvxVnni) => Int8Kernel::AvxVnni,
                Some(I8Isa::Avx2) => Int8Kernel::Avx2,
                None => Int8Kernel::Portable,
            }
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            Int8Kernel::Simd128
        }
        #[cfg(not(any(
            target_arch = "x86_64",
            all(target_arch = "wasm32", target_feature = "simd128")
        )))]
        {
            Int8Kernel::Portable
        }
    }

    /// Whether this CPU and build run `self` (the portable kernel always).
    pub fn is_available(self) -> bool {
        match self {
            Int8Kernel::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Int8Kernel::Avx512Vnni => super::int8_x86::I8Isa::Avx512Vnni.is_available(),
            #[cfg(target_arch = "x86_64")]
            Int8Kernel::AvxVnni => super::int8_x86::I8Isa::AvxVnni.is_available(),
            #[cfg(target_arch = "x86_64")]
            Int8Kernel::Avx2 => super::int8_x86::I8Isa::Avx2.is_available(),
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Int8Kernel::Simd128 => true,
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// The kernel [`dots_i8`] runs now: the one forced by
    /// [`Int8Kernel::force`], else [`Int8Kernel::detect`]. One relaxed
    /// atomic load (plus the cached detection).
    #[inline]
    pub fn active() -> Int8Kernel {
        match FORCED.load(core::sync::atomic::Ordering::Relaxed) {
            0 => Int8Kernel::detect(),
            n => Int8Kernel::ALL[(n as usize - 1).min(Int8Kernel::ALL.len() - 1)],
        }
    }

    /// Makes every int8 pass of this process (and so the certified pursuit
    /// and the rule of [`Int8Passes::Auto`](crate::Int8Passes::Auto)) run
    /// `kernel`, as on a CPU whose best int8 instruction set it is; `None`
    /// restores detection. For benchmarks and tests that measure a lesser
    /// kernel on a better CPU (`mempursuit bench --int8-kernel avx2` times
    /// the AVX2 kernel on an AVX-512 VNNI machine): the values do not
    /// change (every kernel is exact), only the speed and what `Auto`
    /// chooses. Process-wide (a relaxed atomic), so other threads see it
    /// from their next pass on.
    ///
    /// # Errors
    /// [`KernelUnavailable`] when this CPU or build cannot run `kernel`
    /// (nothing is changed then).
    pub fn force(kernel: Option<Int8Kernel>) -> Result<(), KernelUnavailable> {
        let n = match kernel {
            None => 0,
            Some(k) if k.is_available() => {
                Int8Kernel::ALL.iter().position(|&a| a == k).unwrap_or(0) as u8 + 1
            }
            Some(asked) => {
                return Err(KernelUnavailable {
                    asked,
                    best: Int8Kernel::detect(),
                })
            }
        };
        FORCED.store(n, core::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// A short name: `"avx512-vnni"`, `"avx-vnni"`, `"avx2"`, `"simd128"`
    /// or `"portable"`.
    pub fn name(self) -> &'static str {
        match self {
            Int8Kernel::Avx512Vnni => "avx512-vnni",
            Int8Kernel::AvxVnni => "avx-vnni",
            Int8Kernel::Avx2 => "avx2",
            Int8Kernel::Simd128 => "simd128",
            Int8Kernel::Portable => "portable",
        }
    }

    /// The kernel named `name` (as [`Int8Kernel::name`] writes it), if any.
    pub fn from_name(name: &str) -> Option<Int8Kernel> {
        Int8Kernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether the kernel has an int8 dot-product instruction (AVX-512
    /// VNNI, AVX-VNNI).
    pub fn has_dot_instruction(self) -> bool {
        matches!(self, Int8Kernel::Avx512Vnni | Int8Kernel::AvxVnni)
    }
}

/// Whether the int8 pass runs on an int8 dot-product instruction: AVX-512
/// VNNI or AVX-VNNI on x86-64 (cached detection; [`Int8Kernel::active`],
/// so a kernel forced by [`Int8Kernel::force`] counts).
pub fn has_int8_dot_instruction() -> bool {
    Int8Kernel::active().has_dot_instruction()
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

/// One pick of the certified int8 pursuit as its quantization error
/// ê = s·m − w·c reads it (`crate::certified`, module docs): the f32 row m
/// (d values), its pass scale s (f32), the weight w of its approximation
/// (an f32 value, or 0) and its int8 codes c (d codes).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ErrorRow<'a> {
    pub(crate) row: &'a [f32],
    pub(crate) scale: f32,
    pub(crate) weight: f32,
    pub(crate) codes: &'a [i8],
}

/// Coordinates per block of [`weighted_error_norm`] (its f32 buffer of
/// the weighted error lives on the stack).
const ERROR_BLOCK: usize = 256;

/// An upper bound of ‖E‖, E = Σ_r ω_r ê_r the weighted quantization error
/// of `count` picks (`pick(r)` = (row r, ω_r)), d-vectors; `spread` must
/// be at least Σ_r |ω_r| (‖m̂_r‖ + ‖ê_r‖) (m̂ = s·m). One f32 pass over
/// the picks' rows and codes, [`ERROR_BLOCK`] coordinates at a time (F·d
/// multiply-adds; AVX2 where the CPU has it, the same rounding bound).
///
/// Rounding: per coordinate, ê_k is computed as fl(fl(s m_k) − fl(w c_k))
/// (error ≤ 2.01u (|m̂_k| + |m̃_k|) ≤ 2.01u (2|m̂_k| + |ê_k|), u = 2⁻²⁴,
/// m̃ = w c), then Ẽ_k = fl(Ẽ_k + fl(ω ê_k)) in pick order, so
/// |Ẽ_k − E_k| ≤ 1.01 (F + 6) u Σ_r |ω_r| (|m̂_rk| + |ê_rk|) and, by the
/// triangle inequality on these nonnegative vectors,
/// ‖Ẽ − E‖ ≤ 1.01 (F + 6) u · `spread`. ‖Ẽ‖² is summed in f64 (each
/// square of an f32 exact), relative error ≤ d·2⁻⁵³, the square root one
/// more rounding. The result, ‖Ẽ‖ (1 + d·2⁻⁵²) + 1.01 (F + 6) u · spread,
/// is raised by 10⁻⁹ relative (its own f64 evaluation) and 10⁻³⁰ absolute
/// (f32 underflow of tiny errors).
pub(crate) fn weighted_error_norm<'a>(
    d: usize,
    count: usize,
    spread: f64,
    pick: impl Fn(usize) -> (ErrorRow<'a>, f32),
) -> f64 {
    let mut sumsq = 0.0f64;
    let mut buf = [0.0f32; ERROR_BLOCK];
    let mut start = 0;
    while start < d {
        let n = ERROR_BLOCK.min(d - start);
        let e = &mut buf[..n];
        e.fill(0.0);
        for r in 0..count {
            let (row, omega) = pick(r);
            let (m, c) = (&row.row[start..start + n], &row.codes[start..start + n]);
            error_axpy(e, omega, m, row.scale, c, row.weight);
        }
        for &x in e.iter() {
            sumsq += x as f64 * x as f64;
        }
        start += n;
    }
    let u = f32::EPSILON as f64 / 2.0;
    let rounding = 1.01 * (count as f64 + 6.0) * u * spread;
    (libm::sqrt(sumsq) * (1.0 + d as f64 * f64::EPSILON) + rounding) * (1.0 + 1e-9) + 1e-30
}

/// e[k] += ω · (s·m[k] − w·c[k]) in f32, each product and the difference
/// rounded (no fused multiply-add: the bound of [`weighted_error_norm`]
/// counts these roundings).
#[inline]
fn error_axpy_portable(e: &mut [f32], omega: f32, m: &[f32], s: f32, c: &[i8], w: f32) {
    for ((ek, &mk), &ck) in e.iter_mut().zip(m).zip(c) {
        *ek += omega * (s * mk - w * ck as f32);
    }
}

/// [`error_axpy_portable`], on AVX2 where the CPU has it (the same loop,
/// `int8_x86::error_axpy_avx2`: the same values).
fn error_axpy(e: &mut [f32], omega: f32, m: &[f32], s: f32, c: &[i8], w: f32) {
    #[cfg(target_arch = "x86_64")]
    if super::int8_x86::I8Isa::Avx2.is_available() {
        return super::int8_x86::error_axpy_avx2(e, omega, m, s, c, w);
    }
    error_axpy_portable(e, omega, m, s, c, w)
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

    /// A small LCG in [−1, 1).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        }
    }

    /// `weighted_error_norm` (the tighter error term of the certified
    /// int8 bound) is never below the true ‖Σ ω_a ê_a‖ (computed in f64
    /// from the exact products), nor ‖m̃‖ times it below |E·m̃| for any m̃,
    /// and never above Σ ω_a ‖ê_a‖ by more than its margin: on rows
    /// quantized as the pool does, rows whose codes and weights have
    /// nothing to do with them (huge errors), rows approximated by 0,
    /// scales and weights ω near 0 and 1, d not a multiple of the block,
    /// and errors that cancel (E ≈ 0).
    const D: usize = 300;
    const F: usize = 6;

    /// Case `case` of `weighted_error_bound_covers_the_true_error`: d, the
    /// picks' count n, their rows, codes, scales, weights w and ω.
    struct ErrorCase {
        d: usize,
        n: usize,
        rows: [[f32; D]; F],
        codes: [[i8; D]; F],
        scale: [f32; F],
        weight: [f32; F],
        omega: [f32; F],
    }

    fn error_case(case: usize, rng: &mut Lcg) -> ErrorCase {
        {
            let d = [D, 7, 256, 257][case % 4];
            let mut rows = [[0.0f32; D]; F];
            let mut codes = [[0i8; D]; F];
            let mut scale = [1.0f32; F];
            let mut weight = [0.0f32; F];
            let mut omega = [0.0f32; F];
            let n = 1 + case % F;
            for a in 0..n {
                let magnitude = [1.0, 1e-3, 30.0, 1e-12][(case / 3) % 4];
                for k in 0..d {
                    rows[a][k] = (rng.next() * magnitude) as f32;
                }
                scale[a] = [1.0f32, 0.5, 1e-3, 3.0][(case / 5) % 4];
                let max = rows[a][..d].iter().fold(0.0f32, |m, x| m.max(x.abs()));
                let w = (scale[a] as f64 * (max / 127.0) as f64) as f32;
                match case % 5 {
                    // Quantized as the pool does.
                    0 | 1 => {
                        for k in 0..d {
                            let c = if w > 0.0 {
                                libm::round(scale[a] as f64 * rows[a][k] as f64 / w as f64)
                            } else {
                                0.0
                            };
                            codes[a][k] = c.clamp(-127.0, 127.0) as i8;
                        }
                        weight[a] = w;
                    }
                    // Codes unrelated to the row, a weight far off.
                    2 | 3 => {
                        for k in 0..d {
                            codes[a][k] = (rng.next() * 127.0) as i8;
                        }
                        weight[a] = w * (1.0 + 40.0 * rng.next().abs()) as f32;
                    }
                    // Approximated by 0: ê = s m.
                    _ => weight[a] = 0.0,
                }
                omega[a] = [1.0f32, 1e-7, 0.999_999, rng.next().abs() as f32][(a + case) % 4];
            }
            if case.is_multiple_of(7) && n >= 2 {
                // ê_1 ≈ −ê_0: the same codes, weight and scale, the row
                // mirrored around w c / s.
                codes[1] = codes[0];
                weight[1] = weight[0];
                scale[1] = scale[0];
                for k in 0..d {
                    let c = weight[0] as f64 * codes[0][k] as f64 / scale[0] as f64;
                    rows[1][k] = (2.0 * c - rows[0][k] as f64) as f32;
                }
                omega[1] = omega[0];
            }
            ErrorCase {
                d,
                n,
                rows,
                codes,
                scale,
                weight,
                omega,
            }
        }
    }

    #[test]
    fn weighted_error_bound_covers_the_true_error() {
        let mut rng = Lcg(29);
        // Under Miri (an interpreter, minutes for 300 cases) every
        // combination of the case's residues mod 4, 5 and 3 still occurs.
        let cases = if cfg!(miri) { 60 } else { 300 };
        for case in 0..cases {
            let ErrorCase {
                d,
                n,
                rows,
                codes,
                scale,
                weight,
                omega,
            } = error_case(case, &mut rng);
            // The exact errors (each product exact in f64, the difference
            // rounded once), their norms and E.
            let err = |a: usize, k: usize| {
                scale[a] as f64 * rows[a][k] as f64 - weight[a] as f64 * codes[a][k] as f64
            };
            let norm = |v: &dyn Fn(usize) -> f64| libm::sqrt((0..d).map(|k| v(k) * v(k)).sum());
            let mut e = [0.0f64; D];
            let (mut s, mut spread) = (0.0f64, 0.0f64);
            for a in 0..n {
                let ea = norm(&|k| err(a, k));
                let ma = norm(&|k| scale[a] as f64 * rows[a][k] as f64);
                s += omega[a] as f64 * ea;
                spread += omega[a] as f64 * (ma + ea);
                for k in 0..d {
                    e[k] += omega[a] as f64 * err(a, k);
                }
            }
            let spread = spread * (1.0 + 1e-9);
            let bound = weighted_error_norm(d, n, spread, |a| {
                (
                    ErrorRow {
                        row: &rows[a][..d],
                        scale: scale[a],
                        weight: weight[a],
                        codes: &codes[a][..d],
                    },
                    omega[a],
                )
            });
            let true_norm = norm(&|k| e[k]);
            assert!(
                bound.is_finite() && bound >= true_norm * (1.0 + 1e-12),
                "case {case}: bound {bound} below ‖E‖ = {true_norm}"
            );
            // ‖m̃‖ · bound ≥ |E·m̃| for a few directions, E itself included.
            for t in 0..4 {
                let m: [f64; D] = core::array::from_fn(|k| if t == 0 { e[k] } else { rng.next() });
                let mn = norm(&|k| m[k]);
                let dot: f64 = (0..d).map(|k| m[k] * e[k]).sum();
                assert!(
                    mn * bound >= dot.abs(),
                    "case {case}: {} < {}",
                    mn * bound,
                    dot.abs()
                );
            }
            // Never looser than the triangle inequality beyond the margin.
            let margin = 1.01 * (n as f64 + 6.0) * (f32::EPSILON as f64) * spread;
            assert!(
                bound <= s * (1.0 + 1e-6) + margin + 1e-29,
                "case {case}: {bound} > {s}"
            );
        }
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

    /// Every kernel this CPU runs, forced, gives the portable kernel's
    /// values through `dots_i8` and `dots_i8_pass` (with and without the
    /// prefetch of a pass beyond L2); a kernel it cannot run is refused
    /// with nothing changed. (Forcing is process-wide: the other tests of
    /// this binary see other kernels meanwhile, with the same values.)
    #[test]
    fn forced_kernels_give_the_portable_values() {
        let (p, d) = (13usize, 100usize);
        let m = codes(p * d, 77);
        let v = codes(d, 78);
        let mut want = [0i32; 16];
        dots_i8_portable(&m[..p * d], d, &v[..d], &mut want[..p]);
        let mut ran = 0;
        for k in Int8Kernel::ALL {
            if !k.is_available() {
                let before = Int8Kernel::active();
                let e = Int8Kernel::force(Some(k)).unwrap_err();
                assert_eq!((e.asked, e.best), (k, Int8Kernel::detect()));
                assert_eq!(Int8Kernel::active(), before, "{}", k.name());
                continue;
            }
            Int8Kernel::force(Some(k)).unwrap();
            assert_eq!(Int8Kernel::active(), k);
            assert_eq!(Int8Kernel::from_name(k.name()), Some(k));
            for pass_bytes in [0, usize::MAX] {
                let mut got = [i32::MIN; 16];
                dots_i8_pass(&m[..p * d], d, &v[..d], &mut got[..p], pass_bytes);
                assert_eq!(got[..p], want[..p], "{} {pass_bytes}", k.name());
            }
            ran += 1;
        }
        Int8Kernel::force(None).unwrap();
        assert_eq!(Int8Kernel::active(), Int8Kernel::detect());
        assert!(ran >= 1 && Int8Kernel::Portable.is_available());
        assert_eq!(Int8Kernel::from_name("avx3"), None);
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
