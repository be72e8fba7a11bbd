//! The numeric kernels: one streaming pass over the row-major P × d
//! candidate matrix per call (the query-similarity pass, the Gram row of a
//! pick), elementwise score updates, the storage types of the candidate
//! matrix ([`Element`]) and the hook that splits a pass over threads
//! ([`Executor`]).
//!
//! One pursuit step costs one pass (its Gram row, [`row_dots`]); the query
//! pass ([`row_dots_and_sumsq`]) is one more. So a query of budget K streams
//! the matrix K + 1 times: that is the roofline the benchmarks compare with.
//!
//! # Fixed reduction order
//! Every dot product is computed in one order, whatever the register
//! blocking or the split over threads: element k of the row goes to lane
//! k mod 8 of an 8-lane accumulator (for k < d − d mod 8, in increasing k),
//! the lanes are summed as ((0+1)+(2+3))+((4+5)+(6+7)), and the d mod 8 tail
//! elements are added one by one in order. Each element is added in one of
//! two ways, fixed by the [`Isa`]:
//! * **unfused** ([`Isa::Portable`], [`Isa::Avx2`]): the product is rounded
//!   to f32 and then added (two roundings);
//! * **fused** ([`Isa::Avx2Fma`]): acc = fma(a_k, b_k, acc), one rounding
//!   (more accurate, and one instruction instead of two: the unfused
//!   roofline measured 1.08–1.12× the fused one, BENCHMARKS.md).
//!
//! What is bit-identical:
//! * G_ij and G_ji (the products commute, fused or not);
//! * a result and itself across P, row blocking, splits over threads
//!   ([`Executor`]), `-C target-cpu` flags and storage widening (f16 / bf16
//!   rows give the f32 result on the widened rows), for a given [`Isa`];
//! * every unfused [`Isa`] on every target: [`Isa::Portable`] on x86-64,
//!   Arm, WASM and microcontrollers and [`Isa::Avx2`] agree bit for bit.
//!
//! What is not: a fused and an unfused result may differ in the last bits
//! (so the picks of a near-tie may differ between an x86-64 CPU with FMA
//! and a WASM runtime). Each selection call takes its instruction set
//! once, from its [`Executor`] ([`Executor::isa`]), and carries it to
//! every pass of the call: by default [`Isa::detect`], the fused kernels
//! where the CPU has AVX2 + FMA. Run a call with the executor
//! [`StrictOrder`] to have it choose the unfused [`Isa::unfused`] instead,
//! so that every target computes the same bits (the WASM and firmware
//! checks use it for their native references). The choice is made per
//! call, by the caller: no build feature of any crate changes it.
//!
//! # Dispatch
//! On x86-64 the kernels check once per pass (a cached CPUID result) for
//! AVX2 + FMA + F16C and then run hand-written AVX2 code, 8 rows per load of
//! the picked vector (and the score refresh 32 candidates per sweep over the
//! free rows, always unfused); a default build (no `RUSTFLAGS`) therefore
//! runs at AVX2 speed. Elsewhere, and on x86-64 CPUs without those
//! features, the portable `wide::f32x8` kernels run (AVX when the build
//! enables it, otherwise two SSE2 / simd128 / NEON halves). AVX-512 is not
//! used for the f32 passes: 16-lane kernels measured no faster than 8-lane
//! FMA ones at the paper's sizes (BENCHMARKS.md) and would change the order.

mod exec;
pub mod int8;
// The SIMD variants of the int8 pass (dispatched from `int8::dots_i8`).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod int8_wasm;
#[cfg(target_arch = "x86_64")]
mod int8_x86;
mod portable;
#[cfg(target_arch = "x86_64")]
mod x86;

pub(crate) use exec::{gram_row, query_pass};
pub use exec::{Executor, PassJob, Serial, StrictOrder, MAX_PARTS};
pub(crate) use portable::{add_assign, dot, max, position, sub_scaled};

/// The score refresh of Eq. 9 in one pass over u:
/// u[i] = ρ[i] − Σ_a coef[a] · gram[rows[a] · stride + i], the terms
/// subtracted in order a = 0, 1, … with each product rounded first (no
/// fused multiply-add), so every instruction set gives the same bits.
/// AVX2 when the CPU has it (one cached check per call), else `wide`.
///
/// # Panics
/// If `rho` is shorter than `u`, `coef` shorter than `rows`, or a Gram row
/// `rows[a]` ends past `gram`.
pub(crate) fn refresh_scores(
    u: &mut [f32],
    rho: &[f32],
    gram: &[f32],
    stride: usize,
    rows: &[usize],
    coef: &[f32],
) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = x86::Token::get() {
        return x86::refresh_scores(t, u, rho, gram, stride, rows, coef);
    }
    portable::refresh_scores(u, rho, gram, stride, rows, coef)
}

/// Lanes of the f64 dot product of the exact small parts.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) const DOT_F64_LANES: usize = 8;

/// The lane sum of the f64 dot product: u_l = s_l + s_{l+4} for l < 4,
/// then (u_0 + u_1) + (u_2 + u_3).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(crate) fn dot_f64_reduce(s: &[f64; DOT_F64_LANES]) -> f64 {
    let u: [f64; 4] = core::array::from_fn(|l| s[l] + s[l + 4]);
    (u[0] + u[1]) + (u[2] + u[3])
}

/// Σ_k a_k b_k in f64 (the exact small parts' dot product of f32 rows) on
/// the SIMD kernel, or `None` where the CPU has none (the caller then runs
/// the same order in portable code, `exact::dot`). The order: element k
/// goes to lane k mod 8 for k < n − n mod 8, in increasing k; the lanes are summed by
/// [`dot_f64_reduce`]; the tail is added in order. Products of two f32 are
/// exact in f64, so a fused multiply-add rounds exactly like a multiply and
/// an add: every instruction set gives the same bits.
#[inline]
pub(crate) fn dot_f64_simd(a: &[f32], b: &[f32]) -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = x86::Token::get() {
        return Some(x86::dot_f64(t, a, b));
    }
    let _ = (a, b);
    None
}

/// The instruction set a kernel runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Isa {
    /// `wide::f32x8`: the width the build's target features allow (two SSE2
    /// halves on a default x86-64 build, one AVX register with
    /// `-C target-cpu=native` on an AVX machine, simd128 on WASM, NEON on
    /// AArch64, scalar lanes elsewhere).
    Portable,
    /// Hand-written AVX2 kernels (x86-64 with AVX2 + FMA + F16C, detected at
    /// run time), unfused. Same results as [`Isa::Portable`], bit for bit.
    Avx2,
    /// The AVX2 kernels with fused multiply-adds (same CPUs as
    /// [`Isa::Avx2`]): the same lanes and order, one rounding per element
    /// (module docs). The default where available ([`Isa::detect`]).
    Avx2Fma,
}

impl Isa {
    /// The fastest instruction set of this CPU (cached after the first
    /// call; a relaxed atomic load afterwards): [`Isa::Avx2Fma`] where the
    /// CPU has AVX2 + FMA + F16C, else [`Isa::Portable`]. What a selection
    /// call uses unless its executor says otherwise ([`Executor::isa`]).
    #[inline]
    pub fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        if x86::Token::get().is_some() {
            return Isa::Avx2Fma;
        }
        Isa::Portable
    }

    /// The unfused instruction set of the same speed class: [`Isa::Avx2`]
    /// for [`Isa::Avx2Fma`], itself otherwise. Its results are the same
    /// bits on every target (module docs).
    pub const fn unfused(self) -> Isa {
        match self {
            Isa::Avx2Fma => Isa::Avx2,
            other => other,
        }
    }

    /// Whether this instruction set can run on this CPU. A kernel asked to
    /// run on an unavailable one runs on [`Isa::Portable`] instead.
    pub fn is_available(self) -> bool {
        match self {
            Isa::Portable => true,
            Isa::Avx2 | Isa::Avx2Fma => Isa::detect() != Isa::Portable,
        }
    }

    /// A short name: `"portable"`, `"avx2"` or `"avx2-fma"`.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx2Fma => "avx2-fma",
        }
    }

    /// Whether the kernels of this instruction set fuse each multiply-add
    /// (module docs: the two reduction orders).
    pub fn is_fused(self) -> bool {
        self == Isa::Avx2Fma
    }
}

mod mat;
pub(crate) mod sealed;

use sealed::{Mat, Rows};

/// A storage type of the candidate matrix: `f32` (the default), or, with the
/// `half` feature, `half::f16` (IEEE binary16) or `half::bf16` (bfloat16),
/// which halve the bytes every pass streams.
///
/// Every kernel widens the stored values to f32 exactly and then runs the
/// f32 arithmetic in the fixed order, so a selection on reduced-precision
/// storage equals, bit for bit, the f32 selection on the matrix rounded to
/// that type. The query is always f32. This trait is sealed.
///
/// # When reduced precision pays
/// f16 and bf16 always halve the memory of a pool; whether they also make
/// a query faster depends on the CPU. A pass reads half the bytes but
/// widens every value to f32 (`vcvtph2ps` for f16, one byte shuffle for
/// bf16, on the vector ports the multiply-adds use), so it is faster when
/// the f32 pass is limited by the bytes it reads (pools beyond the core's
/// L2 cache, and on cores with a narrow L2 path also L2-resident ones) and
/// the widening keeps up. On an AMD Zen 4 (AVX-512, 1 MiB L2) f16 took
/// 0.58–0.80 and bf16 0.66–0.91 of the f32 time (medians) from P = 100, d = 384 to
/// P = 500, d = 1536; on an AVX2-only AMD EPYC (issue 22, with the kernels
/// before the bf16 shuffle and the once-per-pass widening of the picked
/// vector) both were 1.8× slower at P = 200 and 500, d = 1536. Where the
/// f32 pool fits in L2 the gain is smallest and may be a loss.
/// `mempursuit bench --storage f32,f16,bf16` measures all three on the
/// machine at hand in one run and prints a note when reduced precision
/// does not pay. Figures: BENCHMARKS.md, "Reduced-precision storage".
pub trait Element: sealed::Sealed + Copy + Send + Sync + core::fmt::Debug + 'static {
    /// Name of the storage type (`"f32"`, `"f16"`, `"bf16"`).
    const NAME: &'static str;
    /// The value widened to f32 (exact).
    fn to_f32(self) -> f32;
}

/// Implements `Sealed` + `Element` for a storage type.
macro_rules! element {
    ($t:ty, $name:literal, $variant:ident, |$x:ident| $widen:expr) => {
        impl sealed::Sealed for $t {
            #[inline]
            fn view(m: Mat<'_, Self>) -> Rows<'_> {
                Rows::$variant(m)
            }
            fn row_dots(isa: Isa, rows: Mat<'_, Self>, d: usize, v: &[Self], out: &mut [f32]) {
                check_mat(&rows, d, out.len(), v.len());
                #[cfg(target_arch = "x86_64")]
                if let Some(t) = x86::Token::get() {
                    match isa {
                        Isa::Avx2Fma => return x86::row_dots::<true, _, _>(t, rows, d, v, out),
                        Isa::Avx2 => return x86::row_dots::<false, _, _>(t, rows, d, v, out),
                        Isa::Portable => {}
                    }
                }
                let _ = isa;
                portable::row_dots(rows, d, v, out)
            }
            fn dots_indexed_self(
                isa: Isa,
                rows: Mat<'_, Self>,
                d: usize,
                v: &[Self],
                idx: &[usize],
                out: &mut [f32],
            ) {
                #[cfg(target_arch = "x86_64")]
                if let Some(t) = x86::Token::get() {
                    match isa {
                        Isa::Avx2Fma => {
                            return x86::dots_indexed::<true, _, _>(t, rows, d, v, idx, out)
                        }
                        Isa::Avx2 => {
                            return x86::dots_indexed::<false, _, _>(t, rows, d, v, idx, out)
                        }
                        Isa::Portable => {}
                    }
                }
                let _ = isa;
                portable::dots_indexed(rows, d, v, idx, out)
            }
            fn dots_indexed_f32(
                isa: Isa,
                rows: Mat<'_, Self>,
                d: usize,
                v: &[f32],
                idx: &[usize],
                out: &mut [f32],
            ) {
                #[cfg(target_arch = "x86_64")]
                if let Some(t) = x86::Token::get() {
                    match isa {
                        Isa::Avx2Fma => {
                            return x86::dots_indexed::<true, _, _>(t, rows, d, v, idx, out)
                        }
                        Isa::Avx2 => {
                            return x86::dots_indexed::<false, _, _>(t, rows, d, v, idx, out)
                        }
                        Isa::Portable => {}
                    }
                }
                let _ = isa;
                portable::dots_indexed(rows, d, v, idx, out)
            }
            fn sub_scaled(out: &mut [f32], c: f32, row: &[Self]) {
                #[cfg(target_arch = "x86_64")]
                if let Some(t) = x86::Token::get() {
                    return x86::sub_scaled(t, out, c, row);
                }
                portable::sub_scaled(out, c, row)
            }
            fn row_dots_and_sumsq(
                isa: Isa,
                rows: Mat<'_, Self>,
                d: usize,
                q: &[f32],
                dots: &mut [f32],
                sumsq: &mut [f32],
            ) {
                check_mat(&rows, d, dots.len(), q.len());
                assert_eq!(dots.len(), sumsq.len(), "dots and sumsq differ in length");
                #[cfg(target_arch = "x86_64")]
                if let Some(t) = x86::Token::get() {
                    match isa {
                        Isa::Avx2Fma => {
                            return x86::row_dots_and_sumsq::<true, _>(t, rows, d, q, dots, sumsq)
                        }
                        Isa::Avx2 => {
                            return x86::row_dots_and_sumsq::<false, _>(t, rows, d, q, dots, sumsq)
                        }
                        Isa::Portable => {}
                    }
                }
                let _ = isa;
                portable::row_dots_and_sumsq(rows, d, q, dots, sumsq)
            }
        }
        impl Element for $t {
            const NAME: &'static str = $name;
            #[inline]
            fn to_f32(self) -> f32 {
                let $x = self;
                $widen
            }
        }
    };
}

element!(f32, "f32", F32, |x| x);
#[cfg(feature = "half")]
element!(half::f16, "f16", F16, |x| x.to_f32());
#[cfg(feature = "half")]
element!(half::bf16, "bf16", Bf16, |x| x.to_f32());

#[track_caller]
fn check_dots(rows: usize, d: usize, v: usize, p: usize) {
    assert!(
        p.checked_mul(d) == Some(rows) && v == d,
        "kernel shape: {rows} matrix elements for {p} rows of d = {d}, vector of {v}"
    );
}

/// The matrix covers p rows of d values and the vector has d.
#[track_caller]
fn check_mat<T>(rows: &Mat<'_, T>, d: usize, p: usize, v: usize) {
    assert!(
        rows.covers(p, d) && v == d,
        "kernel shape: a matrix of {} elements{} for {p} rows of d = {d}, vector of {v}",
        rows.data.len(),
        if rows.ids.is_some() {
            " read by id"
        } else {
            ""
        }
    );
}

/// `out[i]` = row_i · v for every row i of the row-major P × d matrix `rows`,
/// P = `out.len()`: the Gram row of a pick when `v` is one of the rows, the
/// matrix–vector product that one pursuit step streams.
///
/// Fixed reduction order (module docs); `isa` picks the instruction set
/// ([`Isa::detect`] for the best one; an unavailable one falls back to
/// [`Isa::Portable`]), which changes the speed and never the result.
///
/// # Panics
/// If `rows.len() != out.len() · d` or `v.len() != d`.
pub fn row_dots<E: Element>(isa: Isa, rows: &[E], d: usize, v: &[E], out: &mut [f32]) {
    check_dots(rows.len(), d, v.len(), out.len());
    E::row_dots(isa, Mat::dense(rows), d, v, out)
}

/// One pass over the row-major P × d matrix `rows` (P = `dots.len()`):
/// `dots[i]` = row_i · q and `sumsq[i]` = ‖row_i‖² (the query-similarity
/// pass, which also gives the norms the input checks need). Fixed reduction
/// order; `isa` as for [`row_dots`].
///
/// # Panics
/// If `rows.len() != dots.len() · d`, `q.len() != d` or
/// `sumsq.len() != dots.len()`.
pub fn row_dots_and_sumsq<E: Element>(
    isa: Isa,
    rows: &[E],
    d: usize,
    q: &[f32],
    dots: &mut [f32],
    sumsq: &mut [f32],
) {
    check_dots(rows.len(), d, q.len(), dots.len());
    E::row_dots_and_sumsq(isa, Mat::dense(rows), d, q, dots, sumsq)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic values in [-1, 1) (64-bit LCG, top bits).
    fn values(n: usize, seed: u64) -> [f32; 4096] {
        let mut s = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut out = [0.0f32; 4096];
        for v in out.iter_mut().take(n) {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            *v = ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0;
        }
        out
    }

    /// The reduction order of the module docs, written out in scalar code
    /// (fused: each element added by an exactly rounded fma, `libm::fmaf`).
    fn reference_dot_with(fused: bool, a: &[f32], b: &[f32]) -> f32 {
        let madd = |s: f32, x: f32, y: f32| {
            if fused {
                libm::fmaf(x, y, s)
            } else {
                s + x * y
            }
        };
        let body = a.len() - a.len() % 8;
        let mut lanes = [0.0f32; 8];
        for k in 0..body {
            lanes[k % 8] = madd(lanes[k % 8], a[k], b[k]);
        }
        let l = lanes;
        let mut s = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
        for k in body..a.len() {
            s = madd(s, a[k], b[k]);
        }
        s
    }

    /// The kernels of `isa` compute the documented order (fused for
    /// [`Isa::Avx2Fma`]) bit for bit: the query pass, the Gram row, and the
    /// indexed entries of any subset of rows.
    fn matches_the_documented_order(isa: Isa) {
        // The two orders really differ on this data (so the test tells them
        // apart).
        let (a, b) = (values(40, 1), values(40, 2));
        let differ = (1..41)
            .filter(|&n| {
                reference_dot_with(true, &a[..n], &b[..n]).to_bits()
                    != reference_dot_with(false, &a[..n], &b[..n]).to_bits()
            })
            .count();
        assert!(differ > 0);
        let fused = isa.is_fused();
        let reference_dot = |a: &[f32], b: &[f32]| reference_dot_with(fused, a, b);
        // Under Miri (interpreted, ~1000× slower), the lengths around the
        // 8-lane boundaries only.
        let short = |d: &usize| !cfg!(miri) || matches!(d, 1 | 7 | 8 | 9 | 16 | 17 | 40);
        for d in (1..41).filter(short) {
            for p in [0usize, 1, 3, 4, 5, 8, 9, 12, 13, 17, 23] {
                if cfg!(miri) && !matches!(p, 0 | 1 | 9 | 17) {
                    continue;
                }
                let m = values(p * d, (d * 100 + p) as u64);
                let rows = &m[..p * d];
                let q = values(d, 7 + d as u64);
                let q = &q[..d];
                let mut out = [0.0f32; 32];
                let mut dots = [0.0f32; 32];
                let mut nsq = [0.0f32; 32];
                row_dots_and_sumsq(isa, rows, d, q, &mut dots[..p], &mut nsq[..p]);
                for i in 0..p {
                    let r = &rows[i * d..(i + 1) * d];
                    assert_eq!(dots[i].to_bits(), reference_dot(r, q).to_bits());
                    assert_eq!(nsq[i].to_bits(), reference_dot(r, r).to_bits());
                }
                if p == 0 {
                    continue;
                }
                let pick = p / 2;
                let v = &rows[pick * d..(pick + 1) * d];
                row_dots(isa, rows, d, v, &mut out[..p]);
                for i in 0..p {
                    let r = &rows[i * d..(i + 1) * d];
                    assert_eq!(
                        out[i].to_bits(),
                        reference_dot(r, v).to_bits(),
                        "{isa:?} d={d} p={p} i={i}"
                    );
                }
                // Symmetry: G_ij = G_ji bitwise.
                assert_eq!(out[pick].to_bits(), reference_dot(v, v).to_bits());
                // The indexed entries (any subset, any batch size, repeated
                // rows) are the pass's values bit for bit.
                for n in 1..=p.min(11) {
                    let idx: [usize; 11] = core::array::from_fn(|r| (r * 7 + n) % p);
                    let mut got = [0.0f32; 11];
                    Rows::F32(Mat::dense(rows)).dots_indexed(isa, d, v, &idx[..n], &mut got[..n]);
                    for r in 0..n {
                        assert_eq!(
                            got[r].to_bits(),
                            out[idx[r]].to_bits(),
                            "indexed {isa:?} d={d} p={p} n={n} r={r}"
                        );
                    }
                }
            }
        }
    }

    /// A matrix read by id (rows ids[0], ids[1], … of a larger matrix, in
    /// any order, repeated) gives, in every kernel and on every
    /// instruction set, the values of the dense matrix of the gathered
    /// rows bit for bit: the query pass, the Gram row of a pick, a part,
    /// the indexed entries with a row and with an f32 vector.
    #[test]
    fn rows_read_by_id_equal_the_gathered_rows() {
        let (n, d) = (29, 21);
        let store = values(n * d, 41);
        let store = &store[..n * d];
        let ids = [28usize, 3, 3, 17, 0, 9, 12, 27, 5, 5, 14, 1, 20];
        let p = ids.len();
        let mut gathered = [0.0f32; 13 * 21];
        for (r, &i) in ids.iter().enumerate() {
            gathered[r * d..(r + 1) * d].copy_from_slice(&store[i * d..(i + 1) * d]);
        }
        let by_id = Rows::F32(Mat {
            data: store,
            ids: Some(&ids),
        });
        let dense = Rows::F32(Mat::dense(&gathered[..]));
        let q = values(d, 8);
        let q = &q[..d];
        let isas: &[Isa] = if cfg!(miri) {
            &[Isa::Portable]
        } else {
            &[Isa::Portable, Isa::Avx2, Isa::Avx2Fma]
        };
        for &isa in isas {
            let (mut a, mut b, mut na, mut nb) = ([0f32; 13], [0f32; 13], [0f32; 13], [0f32; 13]);
            by_id.dots_and_sumsq(isa, d, q, &mut a, &mut na);
            dense.dots_and_sumsq(isa, d, q, &mut b, &mut nb);
            assert_eq!(
                (a.map(f32::to_bits), na.map(f32::to_bits)),
                (b.map(f32::to_bits), nb.map(f32::to_bits))
            );
            for pick in [0, 2, p - 1] {
                by_id.dots_with_row(isa, by_id, pick, d, &mut a);
                dense.dots_with_row(isa, dense, pick, d, &mut b);
                assert_eq!(
                    a.map(f32::to_bits),
                    b.map(f32::to_bits),
                    "{isa:?} pick {pick}"
                );
                // A part (rows 3..11) of each.
                let (mut x, mut y) = ([0f32; 8], [0f32; 8]);
                by_id
                    .rows(3, 11, d)
                    .dots_with_row(isa, by_id, pick, d, &mut x);
                dense
                    .rows(3, 11, d)
                    .dots_with_row(isa, dense, pick, d, &mut y);
                assert_eq!(x, y);
                assert!(x
                    .iter()
                    .zip(&b[3..11])
                    .all(|(u, v)| u.to_bits() == v.to_bits()));
                let idx = [12usize, 1, 2, 2, 7, 0, 11, 9, 4, 3];
                let (mut e, mut f) = ([0f32; 10], [0f32; 10]);
                by_id.dots_indexed_row(isa, d, pick, &idx, &mut e);
                for (r, &i) in idx.iter().enumerate() {
                    f[r] = b[i];
                }
                assert_eq!(e.map(f32::to_bits), f.map(f32::to_bits));
                by_id.dots_indexed(isa, d, q, &idx, &mut e);
                dense.dots_and_sumsq(isa, d, q, &mut b, &mut nb);
                for (r, &i) in idx.iter().enumerate() {
                    f[r] = b[i];
                }
                assert_eq!(e.map(f32::to_bits), f.map(f32::to_bits));
            }
        }
    }

    /// An id past the matrix's rows panics in the kernel (a safe
    /// function), it does not read out of bounds.
    #[test]
    #[should_panic(expected = "kernel shape")]
    fn an_id_past_the_matrix_panics() {
        let store = [0.0f32; 12];
        let ids = [0usize, 3];
        let (mut dots, mut nsq) = ([0f32; 2], [0f32; 2]);
        Rows::F32(Mat {
            data: &store,
            ids: Some(&ids),
        })
        .dots_and_sumsq(Isa::detect(), 4, &[0.0; 4], &mut dots, &mut nsq);
    }

    #[test]
    fn portable_kernels_match_the_documented_order() {
        matches_the_documented_order(Isa::Portable);
    }

    // The AVX2 kernels: each test asserts that the CPU has them (on a CPU
    // without, they would run the portable kernels and the test would
    // compare those with themselves); the build script ignores them, with
    // the reason, where the building machine lacks AVX2 + FMA + F16C.

    #[test]
    #[cfg_attr(
        not(mempursuit_cpu_avx2),
        ignore = "needs AVX2 + FMA + F16C, which this CPU lacks"
    )]
    #[cfg_attr(miri, ignore = "Miri has no AVX2")]
    fn avx2_kernels_match_the_documented_order() {
        assert!(Isa::Avx2.is_available(), "this CPU lacks AVX2 + FMA + F16C");
        matches_the_documented_order(Isa::Avx2);
    }

    #[test]
    #[cfg_attr(
        not(mempursuit_cpu_avx2),
        ignore = "needs AVX2 + FMA + F16C, which this CPU lacks"
    )]
    #[cfg_attr(miri, ignore = "Miri has no AVX2")]
    fn fused_avx2_kernels_match_the_documented_order() {
        assert!(
            Isa::Avx2Fma.is_available(),
            "this CPU lacks AVX2 + FMA + F16C"
        );
        matches_the_documented_order(Isa::Avx2Fma);
    }

    #[cfg(feature = "half")]
    #[test]
    fn reduced_precision_equals_f32_on_widened_values() {
        use half::{bf16, f16};
        let (p, d) = (21, 37);
        let m = values(p * d, 99);
        let q = values(d, 5);
        let q = &q[..d];
        let h: [f16; 4096] = core::array::from_fn(|i| f16::from_f32(m[i]));
        let b: [bf16; 4096] = core::array::from_fn(|i| bf16::from_f32(m[i]));
        let hw: [f32; 4096] = core::array::from_fn(|i| h[i].to_f32());
        let bw: [f32; 4096] = core::array::from_fn(|i| b[i].to_f32());
        for isa in [Isa::Portable, Isa::Avx2, Isa::Avx2Fma] {
            let (mut x, mut y, mut nx, mut ny) = ([0f32; 32], [0f32; 32], [0f32; 32], [0f32; 32]);
            row_dots_and_sumsq(isa, &h[..p * d], d, q, &mut x[..p], &mut nx[..p]);
            row_dots_and_sumsq(isa, &hw[..p * d], d, q, &mut y[..p], &mut ny[..p]);
            assert_eq!(x, y);
            assert_eq!(nx, ny);
            row_dots_and_sumsq(isa, &b[..p * d], d, q, &mut x[..p], &mut nx[..p]);
            row_dots_and_sumsq(isa, &bw[..p * d], d, q, &mut y[..p], &mut ny[..p]);
            assert_eq!(x, y);
            assert_eq!(nx, ny);
            row_dots(isa, &h[..p * d], d, &h[3 * d..4 * d], &mut x[..p]);
            row_dots(isa, &hw[..p * d], d, &hw[3 * d..4 * d], &mut y[..p]);
            assert_eq!(x, y);
            row_dots(isa, &b[..p * d], d, &b[3 * d..4 * d], &mut x[..p]);
            row_dots(isa, &bw[..p * d], d, &bw[3 * d..4 * d], &mut y[..p]);
            assert_eq!(x, y);
        }
        // out −= c · row, widened (the SIMD widening where the CPU has it),
        // equals the f32 rows' and the scalar order bit for bit.
        let (c, start) = (0.37f32, values(d, 12));
        for (narrow, wide) in [
            (Rows::F16(Mat::dense(&h[..p * d])), &hw),
            (Rows::Bf16(Mat::dense(&b[..p * d])), &bw),
        ] {
            let (mut x, mut y) = (start, start);
            narrow.sub_scaled_row(4, d, c, &mut x[..d]);
            Rows::F32(Mat::dense(&wide[..p * d])).sub_scaled_row(4, d, c, &mut y[..d]);
            assert_eq!(x.map(f32::to_bits), y.map(f32::to_bits));
            let mut z = start;
            for k in 0..d {
                z[k] -= c * wide[4 * d + k];
            }
            assert_eq!(x.map(f32::to_bits), z.map(f32::to_bits));
        }
    }

    /// Reduced-precision Gram rows equal the f32 kernel on the widened
    /// values bit for bit on both sides of the picked vector's widening
    /// limit (widened once per pass up to 4096 elements, per block above),
    /// with tails, and with f16 subnormals, signed zeros and the extremes
    /// of both formats.
    #[cfg(feature = "half")]
    #[test]
    #[cfg_attr(
        miri,
        ignore = "the x86 kernels it checks do not run under Miri (no CPUID); \
                  reduced_precision_equals_f32_on_widened_values covers the portable path"
    )]
    fn reduced_precision_gram_rows_across_the_widening_limit() {
        use half::{bf16, f16};
        const N: usize = 2 * 4105;
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        };
        let mut m = [0.0f32; N];
        for (k, x) in m.iter_mut().enumerate() {
            let r = next();
            *x = match k % 97 {
                // f16 subnormals, signed zeros, large values
                0 => r * 6.0e-5,
                1 => -0.0,
                2 => r * 60000.0,
                3 => r * 1.0e-7,
                _ => r,
            };
        }
        let h: [f16; N] = core::array::from_fn(|i| f16::from_f32(m[i]));
        let b: [bf16; N] = core::array::from_fn(|i| bf16::from_f32(m[i]));
        let hw: [f32; N] = core::array::from_fn(|i| h[i].to_f32());
        let bw: [f32; N] = core::array::from_fn(|i| b[i].to_f32());
        let steps = if cfg!(miri) { 1 } else { 2 };
        for d in [9usize, 4096, 4097, 4104, 4105]
            .into_iter()
            .take(2 + steps * 2)
        {
            let p = N / d;
            let n = p * d;
            for isa in [Isa::Portable, Isa::Avx2, Isa::Avx2Fma] {
                let (mut x, mut y) = ([0f32; 912], [0f32; 912]);
                for pick in [0, p - 1] {
                    let (v, vw) = (&h[pick * d..(pick + 1) * d], &hw[pick * d..(pick + 1) * d]);
                    row_dots(isa, &h[..n], d, v, &mut x[..p]);
                    row_dots(isa, &hw[..n], d, vw, &mut y[..p]);
                    assert_eq!(
                        x.map(f32::to_bits),
                        y.map(f32::to_bits),
                        "f16 {isa:?} d={d}"
                    );
                    let (v, vw) = (&b[pick * d..(pick + 1) * d], &bw[pick * d..(pick + 1) * d]);
                    row_dots(isa, &b[..n], d, v, &mut x[..p]);
                    row_dots(isa, &bw[..n], d, vw, &mut y[..p]);
                    assert_eq!(
                        x.map(f32::to_bits),
                        y.map(f32::to_bits),
                        "bf16 {isa:?} d={d}"
                    );
                }
            }
        }
    }

    #[test]
    fn score_refresh_is_the_same_on_every_isa() {
        let (p, stride) = (45, 48);
        let gram = values(6 * stride, 3);
        let rho = values(p, 4);
        let rows = [4usize, 0, 5, 2];
        let coef = [0.5f32, -0.25, 1.5, 0.125];
        let mut expected = [0.0f32; 45];
        for (i, e) in expected.iter_mut().enumerate() {
            let mut v = rho[i];
            for (&r, &c) in rows.iter().zip(&coef) {
                v -= c * gram[r * stride + i];
            }
            *e = v;
        }
        let mut u = [0.0f32; 45];
        portable::refresh_scores(&mut u, &rho[..p], &gram[..6 * stride], stride, &rows, &coef);
        assert_eq!(u, expected);
        // The AVX2 refresh where the CPU has it (the build script's cfg says
        // it must).
        #[cfg(target_arch = "x86_64")]
        let token = x86::Token::get();
        #[cfg(all(target_arch = "x86_64", mempursuit_cpu_avx2, not(miri)))]
        assert!(token.is_some(), "this CPU has AVX2 + FMA + F16C");
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = token {
            let mut v = [0.0f32; 45];
            x86::refresh_scores(
                t,
                &mut v,
                &rho[..p],
                &gram[..6 * stride],
                stride,
                &rows,
                &coef,
            );
            assert_eq!(v, expected);
        }
    }

    /// Σ a_k b_k in f64 in the documented order of [`dot_f64_simd`],
    /// written out in scalar code.
    fn reference_dot_f64(x: &[f32], y: &[f32]) -> f64 {
        let len = x.len().min(y.len());
        let body = len - len % DOT_F64_LANES;
        let mut s = [0.0f64; DOT_F64_LANES];
        for k in 0..body {
            s[k % DOT_F64_LANES] += x[k] as f64 * y[k] as f64;
        }
        let mut want = dot_f64_reduce(&s);
        for k in body..len {
            want += x[k] as f64 * y[k] as f64;
        }
        want
    }

    /// The f64 dot kernel equals the documented 8-lane order in scalar
    /// code, bit for bit (lengths 0..100, unequal lengths); it must exist
    /// on a CPU with AVX2 (a `None` there fails).
    #[test]
    #[cfg_attr(
        not(mempursuit_cpu_avx2),
        ignore = "needs AVX2 + FMA + F16C, which this CPU lacks"
    )]
    #[cfg_attr(miri, ignore = "Miri has no AVX2")]
    fn f64_dot_matches_the_documented_order() {
        let (a, b) = (values(100, 11), values(100, 12));
        for n in 0..100 {
            for m in [n, n + 1] {
                let (x, y) = (&a[..n], &b[..m.min(100)]);
                let got = dot_f64_simd(x, y).expect("the AVX2 f64 dot on a CPU with AVX2");
                assert_eq!(
                    got.to_bits(),
                    reference_dot_f64(x, y).to_bits(),
                    "n={n} m={m}"
                );
            }
        }
    }

    #[test]
    fn detect_is_the_fastest_and_unfused_drops_only_the_fusion() {
        if Isa::Avx2.is_available() {
            assert_eq!(Isa::detect(), Isa::Avx2Fma);
        } else {
            assert_eq!(Isa::detect(), Isa::Portable);
        }
        assert!(Isa::detect().is_available());
        assert_eq!(Isa::Avx2Fma.unfused(), Isa::Avx2);
        assert_eq!(Isa::Avx2.unfused(), Isa::Avx2);
        assert_eq!(Isa::Portable.unfused(), Isa::Portable);
        assert!(!Isa::detect().unfused().is_fused());
        assert_eq!(Serial.isa(), Isa::detect());
        assert_eq!(StrictOrder(Serial).isa(), Isa::detect().unfused());
    }

    #[test]
    #[should_panic(expected = "kernel shape")]
    fn short_vector_panics() {
        let rows = [0.0f32; 8];
        let mut out = [0.0f32; 2];
        row_dots(Isa::detect(), &rows, 4, &rows[..3], &mut out);
    }
}
