//! AVX2 kernels for x86-64, chosen at run time (one cached CPUID check per
//! pass, through the `cpufeatures` crate, which also checks that the OS
//! saves the YMM state).
//!
//! Two variants of each pass, chosen by the `FUSED` parameter:
//! * unfused ([`Isa::Avx2`](super::Isa::Avx2)): exactly what the portable
//!   kernels compute, in the same order: each row accumulates in the 8 lanes
//!   of one YMM register with a separate multiply and add (so the results
//!   are bit-identical to the portable path on every target);
//! * fused ([`Isa::Avx2Fma`](super::Isa::Avx2Fma)): the same lanes and the
//!   same order, each product added to its lane by one fused multiply-add
//!   (`vfmadd231ps`, one rounding instead of two), the tail likewise.
//!
//! In both the lanes are reduced as ((0+1)+(2+3))+((4+5)+(6+7)) — done for
//! four rows at once with `vhaddps`, which adds the same pairs — and the
//! d mod 8 tail is added in order. Gram rows are register-blocked 8 rows
//! per load of the picked vector, the query pass 4 rows (8 accumulators:
//! dots and squared norms).
//!
//! f16 rows are widened with F16C (`vcvtph2ps`), bf16 rows by one byte
//! shuffle that moves each value into the high half of an f32 (exact in
//! both cases), so the reduced-precision storages run the same arithmetic
//! on the widened values. A Gram pass widens the picked vector once (into a
//! stack buffer, d ≤ 4096) rather than once per block of 8 rows. The
//! widening shares the vector ports with the multiply-adds, so a
//! reduced-precision pass is faster than an f32 one only when the f32
//! rows would stream from beyond L2 (BENCHMARKS.md, "Reduced-precision
//! storage"). AVX-512 variants (16 values widened per `vcvtph2ps zmm` or
//! `vpmovzxwd zmm`, and two rows per ZMM register with the same 8-lane
//! order) measured slower than these 8-lane kernels on an AMD Zen 4, and
//! `vdpbf16ps` rounds its products, so they are not used.

#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::mat::Mat;

use core::sync::atomic::{AtomicU8, Ordering};

/// Rows ahead of the current block of the query pass that it prefetches.
const AHEAD: usize = 4;

// AVX2 and FMA, including the OS's YMM-state check (XGETBV).
cpufeatures::new!(avx2_fma, "avx2", "fma");

/// F16C (CPUID leaf 1, ECX bit 29), which `cpufeatures` does not list;
/// cached, because CPUID traps to the hypervisor in a VM.
fn has_f16c() -> bool {
    static F16C: AtomicU8 = AtomicU8::new(u8::MAX);
    match F16C.load(Ordering::Relaxed) {
        0 => false,
        1 => true,
        _ => {
            #[allow(unused_unsafe)]
            // SAFETY: CPUID leaf 1 exists on every x86-64 CPU.
            let ecx = unsafe { __cpuid(1) }.ecx;
            let yes = ecx & (1 << 29) != 0;
            F16C.store(yes as u8, Ordering::Relaxed);
            yes
        }
    }
}

/// Proof that the running CPU (and OS) supports AVX2, FMA and F16C. Only
/// [`Token::get`] makes one, so holding it makes the `unsafe` kernels safe
/// to call.
#[derive(Clone, Copy, Debug)]
pub(super) struct Token(());

impl Token {
    /// The token if the features are present (cached after the first call).
    #[inline]
    pub(super) fn get() -> Option<Token> {
        (avx2_fma::get() && has_f16c()).then_some(Token(()))
    }
}

/// The stored element types these kernels read.
pub(super) trait Load: Copy {
    /// Whether loading widens (every type but f32).
    const WIDENS: bool = true;
    /// Eight elements at `p` widened to f32.
    ///
    /// # Safety
    /// `p..p + 8` must be readable and the CPU must support AVX2 + F16C.
    unsafe fn load8(p: *const Self) -> __m256;
    fn widen(self) -> f32;
}

impl Load for f32 {
    const WIDENS: bool = false;
    #[inline(always)]
    unsafe fn load8(p: *const f32) -> __m256 {
        // SAFETY: the caller guarantees 8 readable f32 at p and AVX support.
        unsafe { _mm256_loadu_ps(p) }
    }
    #[inline(always)]
    fn widen(self) -> f32 {
        self
    }
}

#[cfg(feature = "half")]
impl Load for half::f16 {
    #[inline(always)]
    unsafe fn load8(p: *const half::f16) -> __m256 {
        // SAFETY: the caller guarantees 8 readable f16 (16 bytes) at p and
        // F16C support; f16 is a 2-byte plain-old-data type.
        unsafe { _mm256_cvtph_ps(_mm_loadu_si128(p as *const __m128i)) }
    }
    #[inline(always)]
    fn widen(self) -> f32 {
        self.to_f32()
    }
}

#[cfg(feature = "half")]
impl Load for half::bf16 {
    #[inline(always)]
    unsafe fn load8(p: *const half::bf16) -> __m256 {
        // SAFETY: the caller guarantees 8 readable bf16 (16 bytes) at p and
        // AVX2 support. bf16 is the top half of an f32: the 16 bytes are
        // loaded into both 128-bit lanes (`vbroadcasti128`, a load with no
        // arithmetic uop) and one in-lane byte shuffle (`vpshufb`) moves
        // element j into the high half of 32-bit lane j and zeroes the low
        // half. One shuffle uop per 8 elements, where a zero-extension
        // (`vpmovzxwd`) and a shift (`vpslld`) took two: the widening
        // competes with the multiply-adds for the vector ports.
        unsafe {
            let h = _mm256_broadcastsi128_si256(_mm_loadu_si128(p as *const __m128i));
            _mm256_castsi256_ps(_mm256_shuffle_epi8(h, BF16_TO_F32))
        }
    }
    #[inline(always)]
    fn widen(self) -> f32 {
        self.to_f32()
    }
}

/// The byte shuffle that widens bf16 to f32 (see `Load for bf16`): in
/// each 128-bit lane, 32-bit lane j takes bytes 2j, 2j + 1 (low lane) or
/// 2j, 2j + 1 of the upper copy (high lane, j = 4..8) into its upper half;
/// −1 writes a zero byte.
#[cfg(feature = "half")]
const BF16_TO_F32: __m256i = {
    let mut b = [-1i8; 32];
    let mut j = 0;
    while j < 8 {
        b[4 * j + 2] = 2 * j as i8;
        b[4 * j + 3] = 2 * j as i8 + 1;
        j += 1;
    }
    // SAFETY: [i8; 32] and __m256i have the same size; every bit pattern
    // is a valid __m256i.
    unsafe { core::mem::transmute::<[i8; 32], __m256i>(b) }
};

/// acc + y · x, fused (one rounding) when `FUSED`, else the product
/// rounded and then added.
#[inline(always)]
unsafe fn madd<const FUSED: bool>(acc: __m256, y: __m256, x: __m256) -> __m256 {
    // SAFETY: called only from `target_feature(enable = "avx2,fma,f16c")`
    // functions (the CPU supports AVX and FMA).
    unsafe {
        if FUSED {
            _mm256_fmadd_ps(y, x, acc)
        } else {
            _mm256_add_ps(acc, _mm256_mul_ps(y, x))
        }
    }
}

/// The scalar s + y · x, fused when `FUSED` (as [`madd`], for the tail).
#[inline(always)]
unsafe fn madd1<const FUSED: bool>(s: f32, y: f32, x: f32) -> f32 {
    if FUSED {
        // SAFETY: as for `madd` (FMA is supported).
        unsafe { _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(y), _mm_set_ss(x), _mm_set_ss(s))) }
    } else {
        s + y * x
    }
}

/// Lane sums of four accumulators, [hsum(a), hsum(b), hsum(c), hsum(d)],
/// each ((0+1)+(2+3))+((4+5)+(6+7)).
#[inline(always)]
unsafe fn hsum4(a: __m256, b: __m256, c: __m256, d: __m256) -> __m128 {
    // SAFETY: called only from AVX2 kernels (the CPU supports AVX).
    unsafe {
        // [a01 a23 b01 b23 | a45 a67 b45 b67]
        let ab = _mm256_hadd_ps(a, b);
        let cd = _mm256_hadd_ps(c, d);
        // [a0123 b0123 c0123 d0123 | a4567 b4567 c4567 d4567]
        let abcd = _mm256_hadd_ps(ab, cd);
        _mm_add_ps(
            _mm256_castps256_ps128(abcd),
            _mm256_extractf128_ps::<1>(abcd),
        )
    }
}

/// The lane sum of one accumulator in the fixed order.
#[inline(always)]
unsafe fn hsum1(a: __m256) -> f32 {
    let mut t = [0.0f32; 8];
    // SAFETY: t has room for 8 f32; the CPU supports AVX.
    unsafe { _mm256_storeu_ps(t.as_mut_ptr(), a) };
    ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]))
}

/// out[idx[r]] = row_{idx[r]} · v for the N rows `idx` (N = 8, 4 or 1):
/// N rows per load of `v`, each in one 8-lane accumulator.
///
/// # Safety
/// Every `idx[r] < out.len()`, `rows.len() ≥ (idx[r] + 1) · d`,
/// `v.len() ≥ d`, and the CPU supports AVX2 + F16C (the caller is a
/// `target_feature` function).
#[inline(always)]
unsafe fn dots_n<const N: usize, const FUSED: bool, R: Load, V: Load>(
    rows: &[R],
    d: usize,
    v: &[V],
    idx: [usize; N],
) -> [f32; N] {
    let body = d - d % 8;
    let (rp, vp) = (rows.as_ptr(), v.as_ptr());
    let base: [*const R; N] = core::array::from_fn(|r| rp.wrapping_add(idx[r] * d));
    // SAFETY: every load reads row idx[r] at offset k + 8 ≤ body ≤ d, or v
    // at k + 8 ≤ d, within the lengths the caller guarantees.
    unsafe {
        let mut acc = [_mm256_setzero_ps(); N];
        let mut k = 0;
        while k < body {
            let x = V::load8(vp.add(k));
            for (a, b) in acc.iter_mut().zip(&base) {
                *a = madd::<FUSED>(*a, R::load8(b.add(k)), x);
            }
            k += 8;
        }
        let mut sums = [0.0f32; N];
        let mut quads = sums.chunks_exact_mut(4);
        for (q, a) in (&mut quads).zip(acc.chunks_exact(4)) {
            _mm_storeu_ps(q.as_mut_ptr(), hsum4(a[0], a[1], a[2], a[3]));
        }
        for (s, a) in quads.into_remainder().iter_mut().zip(&acc[N - N % 4..]) {
            *s = hsum1(*a);
        }
        for (r, s) in sums.iter_mut().enumerate() {
            if body < d {
                let row = &rows[idx[r] * d..(idx[r] + 1) * d];
                for k in body..d {
                    *s = madd1::<FUSED>(*s, row[k].widen(), v[k].widen());
                }
            }
        }
        sums
    }
}

/// out[i] = row_i · v for i < out.len(): row i of the matrix `rows` (d
/// elements; row i of its data, or row ids[i] where it has ids); 8 rows
/// per load of `v`. A last partial block is padded with rows it recomputes
/// (the same bits), so no row runs in a short, latency-bound block.
///
/// # Safety
/// `rows.covers(out.len(), d)`, `v.len() ≥ d` (checked by the caller) and
/// the CPU supports AVX2 + F16C.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn row_dots_impl<const FUSED: bool, R: Load, V: Load>(
    rows: Mat<'_, R>,
    d: usize,
    v: &[V],
    out: &mut [f32],
) {
    if V::WIDENS && d <= WIDEN_MAX {
        // The picked vector widened once per pass instead of once per
        // block of 8 rows (a ninth of the widening work of a pass); the
        // same exact f32 values, so the same results.
        let mut buf = [core::mem::MaybeUninit::<f32>::uninit(); WIDEN_MAX];
        // SAFETY: v.len() ≥ d ≤ WIDEN_MAX (the caller's guarantee and the
        // test above); `widen_into` writes buf[..d].
        unsafe {
            let w = widen_into(v, d, &mut buf);
            return row_blocks::<FUSED, R, f32>(rows, d, w, out);
        }
    }
    // SAFETY: the caller's guarantees.
    unsafe { row_blocks::<FUSED, R, V>(rows, d, v, out) }
}

/// Longest picked vector of a reduced-precision pass widened to f32 once
/// per pass, in a stack buffer (16 KiB); longer ones are widened per block
/// of rows as they are read.
const WIDEN_MAX: usize = 4096;

/// v[..d] widened to f32 into `buf[..d]` (exact), returned as a slice.
///
/// # Safety
/// `v.len() ≥ d`, `buf.len() ≥ d`, and the CPU supports AVX2 + F16C.
#[inline(always)]
unsafe fn widen_into<'b, V: Load>(
    v: &[V],
    d: usize,
    buf: &'b mut [core::mem::MaybeUninit<f32>],
) -> &'b [f32] {
    let body = d - d % 8;
    let (vp, bp) = (v.as_ptr(), buf.as_mut_ptr() as *mut f32);
    // SAFETY: every load reads v[k..k + 8] with k + 8 ≤ body ≤ d, every
    // store writes buf[k..k + 8] or buf[k] below d ≤ buf.len(); all d
    // elements are written before the slice is made.
    unsafe {
        let mut k = 0;
        while k < body {
            _mm256_storeu_ps(bp.add(k), V::load8(vp.add(k)));
            k += 8;
        }
        for (k, x) in v.iter().enumerate().take(d).skip(body) {
            bp.add(k).write(x.widen());
        }
        core::slice::from_raw_parts(bp, d)
    }
}

/// [`row_dots_impl`] with `v` as given: 8-row blocks.
///
/// # Safety
/// As [`row_dots_impl`].
#[inline(always)]
unsafe fn row_blocks<const FUSED: bool, R: Load, V: Load>(
    rows: Mat<'_, R>,
    d: usize,
    v: &[V],
    out: &mut [f32],
) {
    let p = out.len();
    let mut i = 0;
    // SAFETY (whole body): every block's rows are rows r < p of the
    // matrix, which it covers (see `dots_n`).
    unsafe {
        while i + 8 <= p {
            let idx = core::array::from_fn(|r| rows.id(i + r));
            let sums = dots_n::<8, FUSED, R, V>(rows.data, d, v, idx);
            out[i..i + 8].copy_from_slice(&sums);
            i += 8;
        }
        if i < p {
            // The last 8 rows (overlapping the previous block), or rows
            // 0..p with the last one repeated.
            let idx: [usize; 8] = core::array::from_fn(|r| (p.saturating_sub(8) + r).min(p - 1));
            let sums = dots_n::<8, FUSED, R, V>(rows.data, d, v, idx.map(|r| rows.id(r)));
            for (r, &s) in idx.iter().zip(&sums) {
                out[*r] = s;
            }
        }
    }
}

/// dots[i] = row_i · q, sumsq[i] = ‖row_i‖² (row i of the matrix
/// `rows`), four rows per load of q.
///
/// # Safety
/// `rows.covers(dots.len(), d)`, `q.len() ≥ d`, `sumsq.len() ≥ dots.len()`
/// (checked by the caller) and the CPU supports AVX2 + F16C.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn row_dots_and_sumsq_impl<const FUSED: bool, R: Load>(
    rows: Mat<'_, R>,
    d: usize,
    q: &[f32],
    dots: &mut [f32],
    sumsq: &mut [f32],
) {
    let p = dots.len();
    let body = d - d % 8;
    let rp = rows.data.as_ptr();
    let qp = q.as_ptr();
    // Elements per 64-byte cache line (a multiple of 8: f32, f16, bf16).
    const {
        assert!(
            64usize.is_multiple_of(core::mem::size_of::<R>())
                && (64 / core::mem::size_of::<R>()).is_multiple_of(8)
        )
    };
    let line = 64 / core::mem::size_of::<R>();
    let mut i = 0;
    // SAFETY (whole body): as in `row_dots_impl`, every load stays within
    // one of the rows 0..p of the matrix (which it covers) or q[..d],
    // checked by the caller.
    unsafe {
        while i + 4 <= p {
            let base: [*const R; 4] = core::array::from_fn(|r| rp.add(rows.id(i + r) * d));
            // The next block (AHEAD rows on), prefetched a cache line at a
            // time as this block streams: the query pass is the first touch
            // of the matrix, and with four rows in flight a cold pass (the
            // matrix in L3 or memory) ran 1.25× slower than the eight-row
            // Gram pass; with the prefetch they take the same time. It does
            // not change a value. Rows read in place by id are prefetched
            // the same way (their addresses are as easy to know ahead).
            // SAFETY: rows i + AHEAD .. i + AHEAD + 4 are < p, and every
            // prefetched element k < body ≤ d lies within one of them
            // (a prefetch never faults in any case).
            let ahead: Option<[*const R; 4]> = (i + 4 + AHEAD <= p)
                .then(|| core::array::from_fn(|r| rp.add(rows.id(i + AHEAD + r) * d)));
            let mut acc = [_mm256_setzero_ps(); 4];
            let mut nsq = [_mm256_setzero_ps(); 4];
            let mut k = 0;
            while k < body {
                let x = _mm256_loadu_ps(qp.add(k));
                if let Some(a) = ahead.filter(|_| k.is_multiple_of(line)) {
                    for b in a {
                        _mm_prefetch::<_MM_HINT_T0>(b.add(k) as *const i8);
                    }
                }
                for r in 0..4 {
                    let y = R::load8(base[r].add(k));
                    acc[r] = madd::<FUSED>(acc[r], y, x);
                    nsq[r] = madd::<FUSED>(nsq[r], y, y);
                }
                k += 8;
            }
            let s = hsum4(acc[0], acc[1], acc[2], acc[3]);
            let n = hsum4(nsq[0], nsq[1], nsq[2], nsq[3]);
            let (dd, nn) = (&mut dots[i..i + 4], &mut sumsq[i..i + 4]);
            _mm_storeu_ps(dd.as_mut_ptr(), s);
            _mm_storeu_ps(nn.as_mut_ptr(), n);
            if body < d {
                for r in 0..4 {
                    let row = rows.row(i + r, d);
                    for k in body..d {
                        let y = row[k].widen();
                        dd[r] = madd1::<FUSED>(dd[r], y, q[k]);
                        nn[r] = madd1::<FUSED>(nn[r], y, y);
                    }
                }
            }
            i += 4;
        }
        while i < p {
            let base = rp.add(rows.id(i) * d);
            let (mut a, mut n) = (_mm256_setzero_ps(), _mm256_setzero_ps());
            let mut k = 0;
            while k < body {
                let y = R::load8(base.add(k));
                a = madd::<FUSED>(a, y, _mm256_loadu_ps(qp.add(k)));
                n = madd::<FUSED>(n, y, y);
                k += 8;
            }
            let (mut s, mut m) = (hsum1(a), hsum1(n));
            let row = rows.row(i, d);
            for k in body..d {
                let y = row[k].widen();
                s = madd1::<FUSED>(s, y, q[k]);
                m = madd1::<FUSED>(m, y, y);
            }
            dots[i] = s;
            sumsq[i] = m;
            i += 1;
        }
    }
}

/// u[i] = ρ[i] − Σ_a coef[a] · gram[rows[a] · stride + i] (the score
/// refresh of Eq. 9), four vectors (32 candidates) per sweep over the rows,
/// each product rounded and then subtracted in order a = 0, 1, …, as the
/// portable `refresh_scores` does.
///
/// # Safety
/// `rho.len() ≥ u.len()`, `rows[a] · stride + u.len() ≤ gram.len()` for
/// every a, `coef.len() ≥ rows.len()` (checked by the caller) and the CPU
/// supports AVX2.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn refresh_scores_impl(
    u: &mut [f32],
    rho: &[f32],
    gram: &[f32],
    stride: usize,
    rows: &[usize],
    coef: &[f32],
) {
    let n = u.len();
    let (up, rp, gp) = (u.as_mut_ptr(), rho.as_ptr(), gram.as_ptr());
    let mut i = 0;
    // SAFETY (whole body): every access is at an index < n of u and rho, or
    // at rows[a]·stride + (index < n) of gram, all checked by the caller.
    unsafe {
        while i + 32 <= n {
            let mut acc = [
                _mm256_loadu_ps(rp.add(i)),
                _mm256_loadu_ps(rp.add(i + 8)),
                _mm256_loadu_ps(rp.add(i + 16)),
                _mm256_loadu_ps(rp.add(i + 24)),
            ];
            for (&r, &c) in rows.iter().zip(coef) {
                let cv = _mm256_set1_ps(c);
                let g = gp.add(r * stride + i);
                for (v, a) in acc.iter_mut().enumerate() {
                    *a = _mm256_sub_ps(*a, _mm256_mul_ps(cv, _mm256_loadu_ps(g.add(8 * v))));
                }
            }
            for (v, a) in acc.iter().enumerate() {
                _mm256_storeu_ps(up.add(i + 8 * v), *a);
            }
            i += 32;
        }
        while i + 8 <= n {
            let mut a = _mm256_loadu_ps(rp.add(i));
            for (&r, &c) in rows.iter().zip(coef) {
                let g = _mm256_loadu_ps(gp.add(r * stride + i));
                a = _mm256_sub_ps(a, _mm256_mul_ps(_mm256_set1_ps(c), g));
            }
            _mm256_storeu_ps(up.add(i), a);
            i += 8;
        }
        while i < n {
            let mut v = *rp.add(i);
            for (&r, &c) in rows.iter().zip(coef) {
                v -= c * *gp.add(r * stride + i);
            }
            *up.add(i) = v;
            i += 1;
        }
    }
}

/// Safe entry of the AVX2 score refresh. Panics if `rho` is shorter than
/// `u`, `coef` shorter than `rows`, or a Gram row ends past `gram`.
pub(super) fn refresh_scores(
    _t: Token,
    u: &mut [f32],
    rho: &[f32],
    gram: &[f32],
    stride: usize,
    rows: &[usize],
    coef: &[f32],
) {
    let n = u.len();
    assert!(rho.len() >= n && coef.len() >= rows.len());
    for &r in rows {
        let end = r.checked_mul(stride).and_then(|s| s.checked_add(n));
        assert!(end.is_some_and(|e| e <= gram.len()));
    }
    // SAFETY: lengths checked above; the token proves AVX2.
    unsafe { refresh_scores_impl(u, rho, gram, stride, rows, coef) }
}

/// Safe entry: out[i] = row_i · v (fused multiply-adds when `FUSED`).
/// Panics if the matrix does not cover `out.len()` rows of `d` elements,
/// or `v` is shorter than `d`.
pub(super) fn row_dots<const FUSED: bool, R: Load, V: Load>(
    _t: Token,
    rows: Mat<'_, R>,
    d: usize,
    v: &[V],
    out: &mut [f32],
) {
    assert!(rows.covers(out.len(), d) && v.len() >= d);
    // SAFETY: lengths checked above; the token proves AVX2 + FMA + F16C.
    unsafe { row_dots_impl::<FUSED, R, V>(rows, d, v, out) }
}

/// out[r] = row idx[r] · v of the matrix `rows` (8 rows per load of `v`,
/// the last block padded by repeating a row): each value bit for bit the
/// one [`row_dots`] gives that row. Panics if an index names a row the
/// matrix does not have or `v` is short.
pub(super) fn dots_indexed<const FUSED: bool, R: Load, V: Load>(
    _t: Token,
    rows: Mat<'_, R>,
    d: usize,
    v: &[V],
    idx: &[usize],
    out: &mut [f32],
) {
    assert!(v.len() >= d && out.len() >= idx.len());
    // The matrix's rows idx[r], as rows of its data.
    let n_rows = rows.data.len().checked_div(d);
    let mut at = [0usize; 8];
    let (mut idx, mut out) = (idx, out);
    while !idx.is_empty() {
        let n = idx.len().min(8);
        let (c, rest) = idx.split_at(n);
        let (o, orest) = core::mem::take(&mut out).split_at_mut(n);
        for (a, &r) in at.iter_mut().zip(c) {
            *a = rows.id(r);
            assert!(
                n_rows.is_none_or(|m| *a < m),
                "row {r} is not in the matrix"
            );
        }
        // SAFETY: every index of `at[..n]` names a row of `rows.data`
        // (checked above; with d = 0 every row is empty); the token
        // proves AVX2 + FMA + F16C.
        unsafe { dots_indexed_impl::<FUSED, R, V>(rows.data, d, v, &at[..n], o) };
        idx = rest;
        out = orest;
    }
}

/// See [`dots_indexed`]: at most 8 rows, given as rows of `rows`.
///
/// # Safety
/// Every `idx[r]` names a row within `rows`, `v.len() ≥ d`,
/// `out.len() ≥ idx.len()`, `1 ≤ idx.len() ≤ 8`, and the CPU supports
/// AVX2 + FMA + F16C.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn dots_indexed_impl<const FUSED: bool, R: Load, V: Load>(
    rows: &[R],
    d: usize,
    v: &[V],
    idx: &[usize],
    out: &mut [f32],
) {
    /// Rows `chunk` (≤ N of them, the last repeated to fill N) into `o`.
    ///
    /// # Safety
    /// As [`dots_indexed_impl`].
    #[inline(always)]
    unsafe fn block<const N: usize, const FUSED: bool, R: Load, V: Load>(
        rows: &[R],
        d: usize,
        v: &[V],
        chunk: &[usize],
        o: &mut [f32],
    ) {
        let n = chunk.len();
        let idx: [usize; N] = core::array::from_fn(|r| chunk[r.min(n - 1)]);
        // SAFETY: every row of `idx` is a checked index (see `dots_n`).
        let sums = unsafe { dots_n::<N, FUSED, R, V>(rows, d, v, idx) };
        o[..n].copy_from_slice(&sums[..n]);
    }
    // The smallest block that holds the rows (the block size does not
    // change a row's value).
    // SAFETY: the caller's guarantees.
    unsafe {
        match idx.len() {
            1 => block::<1, FUSED, R, V>(rows, d, v, idx, out),
            2 => block::<2, FUSED, R, V>(rows, d, v, idx, out),
            3 | 4 => block::<4, FUSED, R, V>(rows, d, v, idx, out),
            _ => block::<8, FUSED, R, V>(rows, d, v, idx, out),
        }
    }
}

/// Safe entry: u[k] −= c · row[k] for k < u.len() (the row widened, the
/// product rounded, then subtracted: the bits of the portable
/// `sub_scaled`). Panics if `row` is shorter than `u`.
pub(super) fn sub_scaled<R: Load>(_t: Token, u: &mut [f32], c: f32, row: &[R]) {
    assert!(row.len() >= u.len());
    // SAFETY: length checked above; the token proves AVX2 + FMA + F16C.
    unsafe { sub_scaled_impl(u, c, row) }
}

/// See [`sub_scaled`].
///
/// # Safety
/// `row.len() ≥ u.len()` and the CPU supports AVX2 + F16C.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn sub_scaled_impl<R: Load>(u: &mut [f32], c: f32, row: &[R]) {
    let n = u.len();
    let body = n - n % 8;
    let (up, rp) = (u.as_mut_ptr(), row.as_ptr());
    // SAFETY: every access is at k + 8 ≤ body ≤ n of u, and of row (whose
    // length is at least n, the caller's guarantee).
    unsafe {
        let cv = _mm256_set1_ps(c);
        let mut k = 0;
        while k < body {
            let r = _mm256_sub_ps(
                _mm256_loadu_ps(up.add(k)),
                _mm256_mul_ps(cv, R::load8(rp.add(k))),
            );
            _mm256_storeu_ps(up.add(k), r);
            k += 8;
        }
    }
    for k in body..n {
        u[k] -= c * row[k].widen();
    }
}

/// Safe entry: dots and squared norms (fused multiply-adds when `FUSED`).
/// Panics on a matrix or slices too short, as above.
pub(super) fn row_dots_and_sumsq<const FUSED: bool, R: Load>(
    _t: Token,
    rows: Mat<'_, R>,
    d: usize,
    q: &[f32],
    dots: &mut [f32],
    sumsq: &mut [f32],
) {
    assert!(rows.covers(dots.len(), d) && q.len() >= d && sumsq.len() >= dots.len());
    // SAFETY: lengths checked above; the token proves AVX2 + FMA + F16C.
    unsafe { row_dots_and_sumsq_impl::<FUSED, R>(rows, d, q, dots, sumsq) }
}

/// Σ a_k b_k in f64 in the order of `kernels::dot_f64_simd`: two YMM
/// accumulators of 4 f64 lanes (lanes 0–3, 4–7), each element
/// widened exactly (`vcvtps2pd`) and added by a fused multiply-add, which
/// rounds as the unfused order does because the f64 product of two f32 is
/// exact.
///
/// # Safety
/// The CPU supports AVX2 + FMA.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn dot_f64_impl(a: &[f32], b: &[f32]) -> f64 {
    let n = a.len().min(b.len());
    let body = n - n % super::DOT_F64_LANES;
    let (ap, bp) = (a.as_ptr(), b.as_ptr());
    let mut acc = [_mm256_setzero_pd(); 2];
    let mut k = 0;
    // SAFETY: every load reads 4 f32 at k + 4g + 4 ≤ body ≤ n of a and b.
    unsafe {
        while k < body {
            for (g, s) in acc.iter_mut().enumerate() {
                let x = _mm256_cvtps_pd(_mm_loadu_ps(ap.add(k + 4 * g)));
                let y = _mm256_cvtps_pd(_mm_loadu_ps(bp.add(k + 4 * g)));
                *s = _mm256_fmadd_pd(x, y, *s);
            }
            k += super::DOT_F64_LANES;
        }
    }
    let mut s = [0.0f64; super::DOT_F64_LANES];
    for (g, v) in acc.iter().enumerate() {
        // SAFETY: s[4g..4g + 4] is in bounds.
        unsafe { _mm256_storeu_pd(s.as_mut_ptr().add(4 * g), *v) };
    }
    let mut t = super::dot_f64_reduce(&s);
    for k in body..n {
        t += a[k] as f64 * b[k] as f64;
    }
    t
}

/// Safe entry of the f64 dot product (any lengths: the common prefix).
pub(super) fn dot_f64(_t: Token, a: &[f32], b: &[f32]) -> f64 {
    // SAFETY: the token proves AVX2 + FMA.
    unsafe { dot_f64_impl(a, b) }
}
