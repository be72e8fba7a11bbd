//! x86-64 kernels of the int8 pass: `out[i] = Σ_k rows[i·d + k] · v[k]`,
//! exact in i32, for row-major P × d int8 codes in −127..=127 (never −128)
//! and d ≤ 133 000 (so |out[i]| ≤ 127² · 133 000 < 2³¹).
//!
//! Integer arithmetic is exact and associative, so every variant below
//! returns exactly the portable scalar kernel's values, whatever the vector
//! width, row blocking or reduction order; intermediate sums are allowed to
//! wrap (two's complement, `vpdpbusd` and `vpaddd` are modular) because the
//! final value fits in i32.
//!
//! * AVX-512 VNNI (`vpdpbusd` on 64 bytes): `vpdpbusd` multiplies
//!   *unsigned* bytes by signed bytes, so the row codes are offset to
//!   c + 128 ∈ 1..=255 (an `xor` with 0x80) and 128 · Σ_k v_k is subtracted
//!   at the end (computed once per call with the same instruction). The
//!   d mod 64 tail uses masked loads (zeros contribute 128 · 0).
//! * AVX-VNNI (`vpdpbusd` on 32 bytes, VEX-encoded; Alder Lake and later):
//!   |v| as the unsigned operand, the row with v's sign applied (`vpsignb`)
//!   as the signed one: |v_k| · sign(v_k)·c_k = c_k · v_k.
//! * AVX2 (`vpmaddubsw` + `vpmaddwd`): the same |v| / sign trick, so each
//!   16-bit pair sum is at most 2 · 127 · 127 = 32 258 < 2¹⁵ and the
//!   saturating `vpmaddubsw` never saturates (this is why −128 is excluded:
//!   2 · 128 · 128 would); `vpmaddwd` by ones widens the pairs to i32, so
//!   each i32 lane adds four products per 32-byte chunk, and a lane's sum
//!   over the whole row is a partial sum of the row's dot product: at most
//!   127² · d < 2³¹ in magnitude, no wrap even before the reduction. No
//!   AVX2 instruction sums more than two byte products into 16 bits without
//!   saturating, and two `vpmaddubsw` results may not be added in 16 bits
//!   (2 · 32 258 > 2¹⁵), so sign, multiply-pairs, widen, add (four
//!   instructions per 32 codes per row, the vector's |v| shared by the
//!   block) is the shortest exact sequence; it is what ggml's AVX2 int8
//!   dot products run too.
//!
//! All three load the vector once per block of 8 rows (register blocking)
//! and reduce the block's eight accumulators together (AVX-512: a tree of
//! 128-bit shuffles; AVX2: six `vphaddd` and two lane permutes, 4 % faster
//! per pass than eight horizontal sums at P = 200, d = 1536 on a Zen 4)
//! instead of one horizontal sum per row. The AVX-512 variant prefetches
//! the next block's rows as it streams (5–17 % per pass here); the AVX2
//! one does so only for a pass whose codes exceed half the L2 cache
//! (`dots_i8_pass`): 15 % faster at P = 1000, d = 1536 (1.5 MB of codes),
//! 6–11 % slower at P = 200, where the rows stay in L2 and the kernel is
//! bound by its instructions; the same prefetch measured no gain in the
//! AVX-VNNI variant. The d mod 32 tail of the 32-byte variants is added in
//! scalar code.
//! Detection is cached (one relaxed atomic load per call after the first).

#![allow(unsafe_code)]

use core::arch::x86_64::*;
use core::sync::atomic::{AtomicU8, Ordering};

/// Rows per load of the vector.
const BLOCK: usize = 8;

/// The int8 instruction sets, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum I8Isa {
    /// AVX-512 F + BW + VL with AVX512_VNNI.
    Avx512Vnni,
    /// AVX2 with AVX-VNNI.
    AvxVnni,
    /// AVX2.
    Avx2,
}

// AVX2 (with the OS's YMM-state check).
cpufeatures::new!(cpu_avx2, "avx2");
// AVX-512 F/BW/VL (with the OS's ZMM/opmask-state check).
cpufeatures::new!(cpu_avx512bw, "avx512f", "avx512bw", "avx512vl");

/// CPUID leaf 7 bits that `cpufeatures` does not list: AVX512_VNNI
/// (subleaf 0, ECX bit 11) and AVX-VNNI (subleaf 1, EAX bit 4). Cached,
/// because CPUID traps to the hypervisor in a VM.
fn vnni_bits() -> (bool, bool) {
    static BITS: AtomicU8 = AtomicU8::new(u8::MAX);
    let b = BITS.load(Ordering::Relaxed);
    let b = if b == u8::MAX {
        // (`__cpuid` is a safe function on newer toolchains.)
        #[allow(unused_unsafe)]
        // SAFETY: CPUID is present on every x86-64 CPU; leaf 0 gives the
        // highest basic leaf, and leaf 7 is read only when it exists
        // (a subleaf past the maximum returns zeros).
        let (max, l70, l71) = unsafe {
            let max = __cpuid(0).eax;
            if max >= 7 {
                (max, __cpuid_count(7, 0), __cpuid_count(7, 1))
            } else {
                (max, __cpuid(0), __cpuid(0))
            }
        };
        let bits = if max >= 7 {
            let avx512vnni = l70.ecx & (1 << 11) != 0;
            let avxvnni = l70.eax >= 1 && l71.eax & (1 << 4) != 0;
            avx512vnni as u8 | (avxvnni as u8) << 1
        } else {
            0
        };
        BITS.store(bits, Ordering::Relaxed);
        bits
    } else {
        b
    };
    (b & 1 != 0, b & 2 != 0)
}

/// The L2 cache per core in KiB from CPUID leaf 0x8000_0006 (ECX bits
/// 31..16), if the CPU reports it (cached).
pub(crate) fn l2_cache_kib() -> Option<usize> {
    static KIB: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(u32::MAX);
    let v = KIB.load(Ordering::Relaxed);
    let v = if v == u32::MAX {
        #[allow(unused_unsafe)]
        // SAFETY: CPUID is present on every x86-64 CPU; leaf 0x8000_0000
        // gives the highest extended leaf, and 0x8000_0006 is read only
        // when it exists.
        let kib = unsafe {
            if __cpuid(0x8000_0000).eax >= 0x8000_0006 {
                __cpuid(0x8000_0006).ecx >> 16
            } else {
                0
            }
        };
        KIB.store(kib, Ordering::Relaxed);
        kib
    } else {
        v
    };
    (v > 0).then_some(v as usize)
}

impl I8Isa {
    /// The best int8 instruction set of this CPU, if any (cached).
    #[inline]
    pub(crate) fn detect() -> Option<I8Isa> {
        if !cpu_avx2::get() {
            return None;
        }
        let (avx512vnni, avxvnni) = vnni_bits();
        if avx512vnni && cpu_avx512bw::get() {
            Some(I8Isa::Avx512Vnni)
        } else if avxvnni {
            Some(I8Isa::AvxVnni)
        } else {
            Some(I8Isa::Avx2)
        }
    }

    /// Whether this CPU runs `self`.
    pub(crate) fn is_available(self) -> bool {
        match (self, I8Isa::detect()) {
            (_, None) => false,
            (I8Isa::Avx2, Some(_)) => true,
            (I8Isa::AvxVnni, Some(_)) => cpu_avx2::get() && vnni_bits().1,
            (I8Isa::Avx512Vnni, Some(best)) => best == I8Isa::Avx512Vnni,
        }
    }
}

/// The portable kernel (the fallback of the entries below on a CPU without
/// the instruction set; the reference they are tested against).
use super::portable::dots_i8 as scalar;

#[track_caller]
fn check(rows: &[i8], d: usize, v: &[i8], out: &[i32]) {
    assert!(
        out.len().checked_mul(d) == Some(rows.len()) && v.len() == d,
        "int8 kernel shape: {} codes for {} rows of d = {d}, vector of {}",
        rows.len(),
        out.len(),
        v.len()
    );
}

/// The int8 pass on the best instruction set of this CPU (scalar when it
/// has none of them). Same values as the scalar kernel, always. (The
/// library dispatches in `int8::dots_i8`, which honours a forced kernel;
/// this one is the tests'.)
///
/// # Panics
/// If `rows.len() != out.len() · d` or `v.len() != d`.
#[cfg(test)]
pub(crate) fn dots_i8(rows: &[i8], d: usize, v: &[i8], out: &mut [i32]) {
    match I8Isa::detect() {
        Some(I8Isa::Avx512Vnni) => dots_i8_avx512vnni(rows, d, v, out),
        Some(I8Isa::AvxVnni) => dots_i8_avxvnni(rows, d, v, out),
        Some(I8Isa::Avx2) => dots_i8_avx2(rows, d, v, out),
        None => {
            check(rows, d, v, out);
            scalar(rows, d, v, out)
        }
    }
}

/// The portable `kernels::int8::error_axpy` loop (e[k] += ω·(s·m[k] −
/// w·c[k]), each product and the difference rounded, no fused
/// multiply-add) compiled for AVX2: vectorized 8 lanes wide, each lane the
/// same operations, so the same values. The caller checks
/// `I8Isa::Avx2.is_available()`.
pub(crate) fn error_axpy_avx2(e: &mut [f32], omega: f32, m: &[f32], s: f32, c: &[i8], w: f32) {
    #[target_feature(enable = "avx2")]
    fn run(e: &mut [f32], omega: f32, m: &[f32], s: f32, c: &[i8], w: f32) {
        for ((ek, &mk), &ck) in e.iter_mut().zip(m).zip(c) {
            *ek += omega * (s * mk - w * ck as f32);
        }
    }
    assert!(I8Isa::Avx2.is_available());
    // SAFETY: the CPU supports AVX2 and the OS saves the YMM state
    // (asserted above); `run` is safe code otherwise.
    unsafe { run(e, omega, m, s, c, w) }
}

/// The int8 pass with AVX-512 VNNI (scalar where the CPU lacks it).
///
/// # Panics
/// If `rows.len() != out.len() · d` or `v.len() != d`.
pub(crate) fn dots_i8_avx512vnni(rows: &[i8], d: usize, v: &[i8], out: &mut [i32]) {
    check(rows, d, v, out);
    if I8Isa::Avx512Vnni.is_available() {
        // SAFETY: shapes checked above; the CPU supports AVX-512 F/BW/VL +
        // VNNI and the OS saves the ZMM state (detected).
        unsafe { avx512vnni::dots(rows, d, v, out) }
    } else {
        scalar(rows, d, v, out)
    }
}

/// The int8 pass with AVX-VNNI (scalar where the CPU lacks it).
///
/// # Panics
/// If `rows.len() != out.len() · d` or `v.len() != d`.
pub(crate) fn dots_i8_avxvnni(rows: &[i8], d: usize, v: &[i8], out: &mut [i32]) {
    check(rows, d, v, out);
    if I8Isa::AvxVnni.is_available() {
        // SAFETY: shapes checked above; the CPU supports AVX2 + AVX-VNNI and
        // the OS saves the YMM state (detected).
        unsafe { avxvnni::dots(rows, d, v, out) }
    } else {
        scalar(rows, d, v, out)
    }
}

/// The int8 pass with AVX2 (scalar where the CPU lacks it), without
/// prefetching (rows in L2).
///
/// # Panics
/// If `rows.len() != out.len() · d` or `v.len() != d`.
pub(crate) fn dots_i8_avx2(rows: &[i8], d: usize, v: &[i8], out: &mut [i32]) {
    check(rows, d, v, out);
    if I8Isa::Avx2.is_available() {
        // SAFETY: shapes checked above; the CPU supports AVX2 and the OS
        // saves the YMM state (detected).
        unsafe { avx2::dots::<false>(rows, d, v, out) }
    } else {
        scalar(rows, d, v, out)
    }
}

/// [`dots_i8_avx2`] prefetching the next block's rows as it streams (for
/// pools beyond L2: 15 % faster at P = 1000, d = 1536 on a Zen 4, and
/// 6–11 % slower with the rows in L2, where the kernel is bound by its
/// instructions; module docs).
///
/// # Panics
/// If `rows.len() != out.len() · d` or `v.len() != d`.
pub(crate) fn dots_i8_avx2_prefetch(rows: &[i8], d: usize, v: &[i8], out: &mut [i32]) {
    check(rows, d, v, out);
    if I8Isa::Avx2.is_available() {
        // SAFETY: shapes checked above; the CPU supports AVX2 and the OS
        // saves the YMM state (detected).
        unsafe { avx2::dots::<true>(rows, d, v, out) }
    } else {
        scalar(rows, d, v, out)
    }
}

/// Row indices of the blocks of a pass over `p` rows: full blocks of
/// [`BLOCK`] rows, then (when p mod BLOCK ≠ 0) the last BLOCK rows again,
/// overlapping the previous block (recomputing a row gives the same value),
/// or, when p < BLOCK, rows 0..p with the last one repeated.
#[inline(always)]
fn blocks(p: usize, mut f: impl FnMut([usize; BLOCK])) {
    let mut i = 0;
    while i + BLOCK <= p {
        f(core::array::from_fn(|r| i + r));
        i += BLOCK;
    }
    if i < p {
        f(core::array::from_fn(|r| {
            (p.saturating_sub(BLOCK) + r).min(p - 1)
        }));
    }
}

/// Scalar dot of the elements `from..d` of a row and `v`.
#[inline(always)]
fn tail(row: &[i8], v: &[i8], from: usize) -> i32 {
    row[from..]
        .iter()
        .zip(&v[from..])
        .fold(0i32, |s, (&a, &b)| s.wrapping_add(a as i32 * b as i32))
}

/// Sum of the eight i32 lanes (wrapping; exact when the result fits).
#[inline(always)]
unsafe fn hsum256(a: __m256i) -> i32 {
    // SAFETY: called from AVX2 functions only.
    unsafe {
        let s = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256::<1>(a));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
        _mm_cvtsi128_si32(s)
    }
}

mod avx512vnni {
    use super::*;

    /// The eight lane sums of `a` (wrapping), in order: a tree of 128-bit
    /// shuffles and adds shared by the eight rows (24 instructions instead
    /// of eight separate horizontal reductions).
    #[inline(always)]
    unsafe fn reduce8(a: &[__m512i; BLOCK]) -> __m256i {
        // SAFETY: called from AVX-512 F functions only; register operations.
        unsafe {
            // [x.lo256 + x.hi256 | y.lo256 + y.hi256]: 128-bit lanes
            // (x₀, x₁, y₀, y₁) of four partial sums each.
            let halves = |x: __m512i, y: __m512i| {
                _mm512_add_epi32(
                    _mm512_shuffle_i64x2::<0b01_00_01_00>(x, y),
                    _mm512_shuffle_i64x2::<0b11_10_11_10>(x, y),
                )
            };
            // (x₀ + x₁, y₀ + y₁, z₀ + z₁, w₀ + w₁) from (x₀, x₁, y₀, y₁)
            // and (z₀, z₁, w₀, w₁): one 128-bit lane per row.
            let quarters = |s: __m512i, t: __m512i| {
                _mm512_add_epi32(
                    _mm512_shuffle_i64x2::<0b10_00_10_00>(s, t),
                    _mm512_shuffle_i64x2::<0b11_01_11_01>(s, t),
                )
            };
            let t0 = quarters(halves(a[0], a[1]), halves(a[2], a[3]));
            let t1 = quarters(halves(a[4], a[5]), halves(a[6], a[7]));
            // Lane k: elements 0 and 1 become the sums of rows k and k + 4.
            let u = _mm512_add_epi32(_mm512_unpacklo_epi32(t0, t1), _mm512_unpackhi_epi32(t0, t1));
            let v = _mm512_add_epi32(u, _mm512_shuffle_epi32::<0b01_00_11_10>(u));
            let order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0);
            _mm512_castsi512_si256(_mm512_permutexvar_epi32(order, v))
        }
    }

    /// # Safety
    /// `rows.len() == out.len() · d`, `v.len() == d`, and the CPU supports
    /// AVX-512 F/BW/VL + VNNI (with the OS saving the ZMM state).
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni")]
    pub(super) unsafe fn dots(rows: &[i8], d: usize, v: &[i8], out: &mut [i32]) {
        let body = d - d % 64;
        let rem = d - body;
        // Lanes of the last, partial chunk (d mod 64 of them).
        let mask: __mmask64 = if rem == 0 { 0 } else { (1u64 << rem) - 1 };
        let (rp, vp) = (rows.as_ptr(), v.as_ptr());
        let offset = _mm512_set1_epi8(-128);
        // SAFETY (whole body): every full load reads 64 bytes at offset
        // k + 64 ≤ body ≤ d of v or of row idx[r] < out.len() (so within
        // `rows`, whose length is out.len() · d); the masked loads read
        // only the lanes k + j < d (masked-off lanes are not accessed and
        // do not fault).
        unsafe {
            // 128 · Σ_k v_k, by the same instruction: 1 · v_k summed.
            let ones = _mm512_set1_epi8(1);
            let mut sv = _mm512_setzero_si512();
            let mut k = 0;
            while k < body {
                let x = _mm512_loadu_si512(vp.add(k) as *const _);
                sv = _mm512_dpbusd_epi32(sv, ones, x);
                k += 64;
            }
            if rem != 0 {
                let x = _mm512_maskz_loadu_epi8(mask, vp.add(body));
                sv = _mm512_dpbusd_epi32(sv, ones, x);
            }
            let bias = _mm512_reduce_add_epi32(sv).wrapping_mul(128);

            super::blocks(out.len(), |idx| {
                let base: [*const i8; BLOCK] =
                    core::array::from_fn(|r| rp.wrapping_add(idx[r] * d));
                let mut acc = [_mm512_setzero_si512(); BLOCK];
                // The next block's rows, prefetched one cache line per row
                // per chunk as this block streams (a row of d = 384 codes
                // is six lines, too short for the hardware prefetcher to
                // ramp up): an int8 pass 5–17 % faster. A prefetch never
                // faults; these rows are < P anyway.
                let next = (idx[BLOCK - 1] + 1 + BLOCK <= out.len())
                    .then(|| base[0].wrapping_add(BLOCK * d));
                let mut k = 0;
                while k < body {
                    if let Some(nb) = next {
                        for r in 0..BLOCK {
                            _mm_prefetch::<_MM_HINT_T0>(nb.wrapping_add(r * d + k));
                        }
                    }
                    let x = _mm512_loadu_si512(vp.add(k) as *const _);
                    for (a, b) in acc.iter_mut().zip(&base) {
                        // c + 128 as an unsigned byte: flip the sign bit.
                        let y = _mm512_xor_si512(_mm512_loadu_si512(b.add(k) as *const _), offset);
                        *a = _mm512_dpbusd_epi32(*a, y, x);
                    }
                    k += 64;
                }
                if rem != 0 {
                    let x = _mm512_maskz_loadu_epi8(mask, vp.add(body));
                    for (a, b) in acc.iter_mut().zip(&base) {
                        // Masked-off lanes: (0 ^ 0x80) · 0 = 0.
                        let y =
                            _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, b.add(body)), offset);
                        *a = _mm512_dpbusd_epi32(*a, y, x);
                    }
                }
                let sums = _mm256_sub_epi32(reduce8(&acc), _mm256_set1_epi32(bias));
                let mut lanes = [0i32; BLOCK];
                _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, sums);
                for (r, &v) in lanes.iter().enumerate() {
                    out[idx[r]] = v;
                }
            });
        }
    }
}

mod avxvnni {
    use super::*;

    /// # Safety
    /// `rows.len() == out.len() · d`, `v.len() == d`, and the CPU supports
    /// AVX2 + AVX-VNNI (with the OS saving the YMM state).
    #[target_feature(enable = "avx2,avxvnni")]
    pub(super) unsafe fn dots(rows: &[i8], d: usize, v: &[i8], out: &mut [i32]) {
        let body = d - d % 32;
        let (rp, vp) = (rows.as_ptr(), v.as_ptr());
        // SAFETY (whole body): every load reads 32 bytes at offset
        // k + 32 ≤ body ≤ d of v or of row idx[r] < out.len().
        unsafe {
            super::blocks(out.len(), |idx| {
                let base: [*const i8; BLOCK] =
                    core::array::from_fn(|r| rp.wrapping_add(idx[r] * d));
                let mut acc = [_mm256_setzero_si256(); BLOCK];
                let mut k = 0;
                while k < body {
                    let x = _mm256_loadu_si256(vp.add(k) as *const _);
                    let ax = _mm256_abs_epi8(x);
                    for (a, b) in acc.iter_mut().zip(&base) {
                        let y = _mm256_loadu_si256(b.add(k) as *const _);
                        // |v| (unsigned) times c·sign(v) (signed) = c·v.
                        *a = _mm256_dpbusd_avx_epi32(*a, ax, _mm256_sign_epi8(y, x));
                    }
                    k += 32;
                }
                for (r, a) in acc.iter().enumerate() {
                    let row = &rows[idx[r] * d..(idx[r] + 1) * d];
                    out[idx[r]] = super::hsum256(*a).wrapping_add(super::tail(row, v, body));
                }
            });
        }
    }
}

mod avx2 {
    use super::*;

    /// The eight lane sums of the eight accumulators, in order (wrapping):
    /// `vphaddd` pairs them into four, then two registers whose 128-bit
    /// halves hold partial sums of rows 0–3 and 4–7, added across halves
    /// (7 instructions for the block instead of eight reductions of 5).
    #[inline(always)]
    unsafe fn reduce8(a: &[__m256i; BLOCK]) -> __m256i {
        // SAFETY: called from AVX2 functions only; register operations.
        unsafe {
            let t0 = _mm256_hadd_epi32(a[0], a[1]);
            let t1 = _mm256_hadd_epi32(a[2], a[3]);
            let t2 = _mm256_hadd_epi32(a[4], a[5]);
            let t3 = _mm256_hadd_epi32(a[6], a[7]);
            // Each 128-bit half: (r0, r1, r2, r3) of rows 0–3 (u0) / 4–7 (u1).
            let u0 = _mm256_hadd_epi32(t0, t1);
            let u1 = _mm256_hadd_epi32(t2, t3);
            _mm256_add_epi32(
                _mm256_permute2x128_si256::<0x20>(u0, u1),
                _mm256_permute2x128_si256::<0x31>(u0, u1),
            )
        }
    }

    /// # Safety
    /// `rows.len() == out.len() · d`, `v.len() == d`, and the CPU supports
    /// AVX2 (with the OS saving the YMM state).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn dots<const PREFETCH: bool>(
        rows: &[i8],
        d: usize,
        v: &[i8],
        out: &mut [i32],
    ) {
        let body = d - d % 32;
        let (rp, vp) = (rows.as_ptr(), v.as_ptr());
        let ones = _mm256_set1_epi16(1);
        // SAFETY (whole body): every load reads 32 bytes at offset
        // k + 32 ≤ body ≤ d of v or of row idx[r] < out.len() (so within
        // `rows`, whose length is out.len() · d); a prefetch never faults.
        unsafe {
            super::blocks(out.len(), |idx| {
                let base: [*const i8; BLOCK] =
                    core::array::from_fn(|r| rp.wrapping_add(idx[r] * d));
                let next = (PREFETCH && idx[BLOCK - 1] + 1 + BLOCK <= out.len())
                    .then(|| base[0].wrapping_add(BLOCK * d));
                let mut acc = [_mm256_setzero_si256(); BLOCK];
                let mut k = 0;
                while k < body {
                    if let Some(nb) = next {
                        if k % 64 == 0 {
                            for r in 0..BLOCK {
                                _mm_prefetch::<_MM_HINT_T0>(nb.wrapping_add(r * d + k));
                            }
                        }
                    }
                    let x = _mm256_loadu_si256(vp.add(k) as *const _);
                    let ax = _mm256_abs_epi8(x);
                    for (a, b) in acc.iter_mut().zip(&base) {
                        let y = _mm256_loadu_si256(b.add(k) as *const _);
                        // Pairs |v_k|·(c_k·sign v_k) + |v_k+1|·(…): each
                        // |pair| ≤ 2·127² = 32 258 < 2¹⁵, so the saturating
                        // `vpmaddubsw` never saturates (codes are never
                        // −128); `vpmaddwd` by ones widens pairs to i32.
                        let pairs = _mm256_maddubs_epi16(ax, _mm256_sign_epi8(y, x));
                        *a = _mm256_add_epi32(*a, _mm256_madd_epi16(pairs, ones));
                    }
                    k += 32;
                }
                let mut lanes = [0i32; BLOCK];
                _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, reduce8(&acc));
                for (r, &s) in lanes.iter().enumerate() {
                    let row = &rows[idx[r] * d..(idx[r] + 1) * d];
                    out[idx[r]] = s.wrapping_add(super::tail(row, v, body));
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codes in −127..=127 from a 64-bit LCG.
    fn codes(n: usize, seed: u64, out: &mut [i8]) {
        let mut s = seed;
        for c in out.iter_mut().take(n) {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            *c = (((s >> 33) % 255) as i32 - 127) as i8;
        }
    }

    type Kernel = fn(&[i8], usize, &[i8], &mut [i32]);

    /// `kernel` equals the scalar kernel on random codes, all-±127 rows and
    /// vectors, lengths 0..=300 (every tail of the 32- and 64-byte loops),
    /// pools of 0..=9 rows (every block remainder), rows starting at odd
    /// byte offsets (not 64-byte aligned).
    fn equals_the_scalar_kernel(name: &str, kernel: Kernel) {
        const P: usize = 9;
        let mut buf = [0i8; 1 + P * 300 + 300];
        let mut want = [0i32; P];
        let mut got = [0i32; P];
        // Under Miri (interpreted, ~1000× slower): lengths around the 32-
        // and 64-byte boundaries only.
        let lengths = (0..=300)
            .filter(|d| !cfg!(miri) || matches!(d, 0 | 1 | 31 | 32 | 33 | 63 | 64 | 65 | 97));
        for d in lengths {
            for case in 0..4 {
                let n = P * d + d;
                match case {
                    0 => codes(n, d as u64 * 7 + 1, &mut buf[1..]),
                    1 => buf[1..1 + n].fill(127),
                    2 => buf[1..1 + n].fill(-127),
                    // Rows of +127 against a vector of −127 and mixtures.
                    _ => {
                        for (j, c) in buf[1..1 + n].iter_mut().enumerate() {
                            *c = if (j / 3) % 2 == 0 { 127 } else { -127 };
                        }
                    }
                }
                for skew in [0usize, 1] {
                    let (rows_all, v) = buf[skew..skew + n].split_at(P * d);
                    for p in [0usize, 1, 3, 4, 5, 8, 9] {
                        let rows = &rows_all[..p * d];
                        scalar(rows, d, v, &mut want[..p]);
                        got.fill(i32::MIN);
                        kernel(rows, d, v, &mut got[..p]);
                        assert_eq!(got[..p], want[..p], "{name} d={d} p={p} case={case}");
                    }
                }
            }
        }
        // The extreme value really is reached: d · 127².
        let d = 300;
        buf[..2 * d].fill(127);
        kernel(&buf[..d], d, &buf[d..2 * d], &mut got[..1]);
        assert_eq!(got[0], 300 * 127 * 127);
    }

    // One test per instruction set. Each asserts that the CPU has it (a
    // kernel on a CPU without it runs the scalar kernel, which would make
    // the comparison vacuous); the build script ignores it, with the
    // reason, where the building machine lacks it.

    #[test]
    #[cfg_attr(
        not(mempursuit_cpu_avx512vnni),
        ignore = "needs AVX-512 VNNI (F/BW/VL + VNNI), which this CPU lacks"
    )]
    #[cfg_attr(miri, ignore = "Miri has no AVX-512")]
    fn avx512vnni_equals_the_scalar_kernel() {
        assert!(
            I8Isa::Avx512Vnni.is_available(),
            "this CPU lacks AVX-512 VNNI"
        );
        equals_the_scalar_kernel("avx512vnni", dots_i8_avx512vnni);
    }

    #[test]
    #[cfg_attr(
        not(mempursuit_cpu_avxvnni),
        ignore = "needs AVX-VNNI, which this CPU lacks"
    )]
    #[cfg_attr(all(miri, mempursuit_cpu_avxvnni), ignore = "Miri has no AVX-VNNI")]
    fn avxvnni_equals_the_scalar_kernel() {
        assert!(I8Isa::AvxVnni.is_available(), "this CPU lacks AVX-VNNI");
        equals_the_scalar_kernel("avxvnni", dots_i8_avxvnni);
    }

    #[test]
    #[cfg_attr(not(mempursuit_cpu_avx2), ignore = "needs AVX2, which this CPU lacks")]
    #[cfg_attr(miri, ignore = "Miri has no AVX2")]
    fn avx2_equals_the_scalar_kernel() {
        assert!(I8Isa::Avx2.is_available(), "this CPU lacks AVX2");
        equals_the_scalar_kernel("avx2", dots_i8_avx2);
        equals_the_scalar_kernel("avx2 prefetching", dots_i8_avx2_prefetch);
    }

    /// The dispatched kernel (whatever this CPU has, scalar included).
    #[test]
    #[cfg_attr(
        miri,
        ignore = "under Miri the CPU check fails, so the dispatched kernel is the scalar kernel itself"
    )]
    fn the_dispatched_kernel_equals_the_scalar_kernel() {
        equals_the_scalar_kernel("best", dots_i8);
    }

    /// The largest d of the contract, every product at the extreme: the
    /// wrapped intermediate sums (the AVX-512 bias 128 · Σv exceeds i32)
    /// still give the exact value.
    #[test]
    #[cfg_attr(miri, ignore = "2 × 133 000 codes × 4 kernels is too slow interpreted")]
    fn largest_dimension_is_exact() {
        const D: usize = 133_000;
        static ROWS: [i8; 2 * D] = {
            let mut a = [127i8; 2 * D];
            let mut k = D;
            while k < 2 * D {
                a[k] = -127;
                k += 1;
            }
            a
        };
        static V: [i8; D] = [127; D];
        let mut out = [0i32; 2];
        let kernels: [(&str, Kernel, bool); 5] = [
            ("best", dots_i8, true),
            (
                "avx512vnni",
                dots_i8_avx512vnni,
                I8Isa::Avx512Vnni.is_available(),
            ),
            ("avxvnni", dots_i8_avxvnni, I8Isa::AvxVnni.is_available()),
            ("avx2", dots_i8_avx2, I8Isa::Avx2.is_available()),
            (
                "avx2 prefetching",
                dots_i8_avx2_prefetch,
                I8Isa::Avx2.is_available(),
            ),
        ];
        // The instruction sets this CPU lacks are covered where it has them
        // (the per-set tests above say which were ignored).
        for (name, k, _) in kernels.into_iter().filter(|k| k.2) {
            k(&ROWS, D, &V, &mut out);
            assert_eq!(out, [127 * 127 * 133_000, -127 * 127 * 133_000], "{name}");
        }
    }

    #[test]
    fn detection_is_consistent() {
        if let Some(best) = I8Isa::detect() {
            assert!(best.is_available());
            assert!(I8Isa::Avx2.is_available());
        }
    }

    #[test]
    #[should_panic(expected = "int8 kernel shape")]
    fn short_vector_panics() {
        let rows = [0i8; 8];
        let mut out = [0i32; 2];
        dots_i8(&rows, 4, &rows[..3], &mut out);
    }
}
