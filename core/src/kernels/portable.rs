//! The portable kernels: `wide::f32x8` (AVX on x86-64 when the build enables
//! it, two SSE2 / simd128 / NEON halves otherwise, scalar elsewhere).
//!
//! They follow the reduction order documented in the parent module exactly,
//! so they are the reference the run-time-dispatched kernels are tested
//! against bit for bit.

use wide::f32x8;

use super::mat::Mat;

pub(super) const LANES: usize = 8;

/// Eight consecutive stored elements widened to f32 (exact for every
/// storage type).
pub(crate) trait Lane8: Copy {
    fn load8(s: &[Self], at: usize) -> f32x8;
    fn widen(self) -> f32;
}

impl Lane8 for f32 {
    #[inline(always)]
    fn load8(s: &[f32], at: usize) -> f32x8 {
        let a: [f32; LANES] = s[at..at + LANES].try_into().unwrap_or([0.0; LANES]);
        f32x8::new(a)
    }
    #[inline(always)]
    fn widen(self) -> f32 {
        self
    }
}

#[cfg(feature = "half")]
impl Lane8 for half::f16 {
    #[inline(always)]
    fn load8(s: &[half::f16], at: usize) -> f32x8 {
        let c = &s[at..at + LANES];
        f32x8::new(core::array::from_fn(|j| c[j].to_f32()))
    }
    #[inline(always)]
    fn widen(self) -> f32 {
        self.to_f32()
    }
}

#[cfg(feature = "half")]
impl Lane8 for half::bf16 {
    #[inline(always)]
    fn load8(s: &[half::bf16], at: usize) -> f32x8 {
        let c = &s[at..at + LANES];
        f32x8::new(core::array::from_fn(|j| c[j].to_f32()))
    }
    #[inline(always)]
    fn widen(self) -> f32 {
        self.to_f32()
    }
}

/// ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)).
#[inline(always)]
pub(super) fn hsum(v: f32x8) -> f32 {
    let a = v.to_array();
    ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
}

/// Dot product of two f32 slices of equal length in the fixed order.
#[inline]
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    dot_mixed(a, b)
}

/// Dot product of a stored row with a vector of another storage type.
#[inline]
fn dot_mixed<R: Lane8, V: Lane8>(a: &[R], b: &[V]) -> f32 {
    let n = a.len().min(b.len());
    let body = n - n % LANES;
    let mut acc = f32x8::ZERO;
    let mut k = 0;
    while k < body {
        acc += R::load8(a, k) * V::load8(b, k);
        k += LANES;
    }
    let mut s = hsum(acc);
    for k in body..n {
        s += a[k].widen() * b[k].widen();
    }
    s
}

/// out[idx[r]] = row_{idx[r]} · v for the four rows `idx` of the matrix,
/// one load of `v` per four rows (register blocking).
#[inline(always)]
fn dots4<E: Lane8>(rows: Mat<'_, E>, d: usize, v: &[E], idx: [usize; 4], out: &mut [f32]) {
    let body = d - d % LANES;
    let r: [&[E]; 4] = core::array::from_fn(|j| rows.row(idx[j], d));
    let mut a = [f32x8::ZERO; 4];
    let mut k = 0;
    while k < body {
        let x = E::load8(v, k);
        for (acc, row) in a.iter_mut().zip(&r) {
            *acc += E::load8(row, k) * x;
        }
        k += LANES;
    }
    for j in 0..4 {
        let mut s = hsum(a[j]);
        for k in body..d {
            s += r[j][k].widen() * v[k].widen();
        }
        out[idx[j]] = s;
    }
}

/// out[i] = row_i · v for the rows i < out.len() of the matrix `rows`
/// (which covers them), `v.len() ≥ d`. Four rows per pass over `v`
/// (register blocking).
pub(super) fn row_dots<E: Lane8>(rows: Mat<'_, E>, d: usize, v: &[E], out: &mut [f32]) {
    let p = out.len();
    let v = &v[..d];
    let mut i = 0;
    while i + 4 <= p {
        dots4(rows, d, v, [i, i + 1, i + 2, i + 3], out);
        i += 4;
    }
    while i < p {
        out[i] = dot_mixed(rows.row(i, d), v);
        i += 1;
    }
}

/// out[r] = row idx[r] · v of the matrix `rows`, each bit for bit the
/// value [`row_dots`] gives that row (the one-row order of `dot_mixed`).
pub(super) fn dots_indexed<R: Lane8, V: Lane8>(
    rows: Mat<'_, R>,
    d: usize,
    v: &[V],
    idx: &[usize],
    out: &mut [f32],
) {
    let v = &v[..d];
    for (&i, o) in idx.iter().zip(out.iter_mut()) {
        *o = dot_mixed(rows.row(i, d), v);
    }
}

/// One pass over the matrix: dots[i] = row_i · q and sumsq[i] = ‖row_i‖²
/// for the rows i < dots.len() of `rows` (which covers them), `q.len() ≥ d`,
/// `sumsq.len() = dots.len()`.
pub(super) fn row_dots_and_sumsq<E: Lane8>(
    rows: Mat<'_, E>,
    d: usize,
    q: &[f32],
    dots: &mut [f32],
    sumsq: &mut [f32],
) {
    let p = dots.len();
    let body = d - d % LANES;
    let q = &q[..d];
    let mut i = 0;
    while i + 2 <= p {
        let r0 = rows.row(i, d);
        let r1 = rows.row(i + 1, d);
        let (mut a0, mut a1, mut n0, mut n1) = (f32x8::ZERO, f32x8::ZERO, f32x8::ZERO, f32x8::ZERO);
        let mut k = 0;
        while k < body {
            let x = f32::load8(q, k);
            let y0 = E::load8(r0, k);
            let y1 = E::load8(r1, k);
            a0 += y0 * x;
            a1 += y1 * x;
            n0 += y0 * y0;
            n1 += y1 * y1;
            k += LANES;
        }
        let (mut s0, mut s1, mut q0, mut q1) = (hsum(a0), hsum(a1), hsum(n0), hsum(n1));
        for k in body..d {
            let (y0, y1) = (r0[k].widen(), r1[k].widen());
            s0 += y0 * q[k];
            s1 += y1 * q[k];
            q0 += y0 * y0;
            q1 += y1 * y1;
        }
        dots[i] = s0;
        dots[i + 1] = s1;
        sumsq[i] = q0;
        sumsq[i + 1] = q1;
        i += 2;
    }
    while i < p {
        let r = rows.row(i, d);
        dots[i] = dot_mixed(r, q);
        sumsq[i] = dot_mixed(r, r);
        i += 1;
    }
}

/// out[i] *= s[i] · c, elementwise.
pub(crate) fn scale_by(out: &mut [f32], s: &[f32], c: f32) {
    let n = out.len();
    let body = n - n % LANES;
    let cv = f32x8::splat(c);
    let mut i = 0;
    while i < body {
        let r = f32::load8(out, i) * (f32::load8(s, i) * cv);
        out[i..i + LANES].copy_from_slice(&r.to_array());
        i += LANES;
    }
    for i in body..n {
        out[i] *= s[i] * c;
    }
}

/// u[i] -= c · row[i], elementwise (one term of the score refresh, Eq. 9).
pub(crate) fn sub_scaled<R: Lane8>(u: &mut [f32], c: f32, row: &[R]) {
    let n = u.len();
    let body = n - n % LANES;
    let cv = f32x8::splat(c);
    let mut i = 0;
    while i < body {
        let r = f32::load8(u, i) - cv * R::load8(row, i);
        u[i..i + LANES].copy_from_slice(&r.to_array());
        i += LANES;
    }
    for i in body..n {
        u[i] -= c * row[i].widen();
    }
}

/// The score refresh of Eq. 9 in one pass over u:
/// u[i] = ρ[i] − Σ_a coef[a] · gram[rows[a] · stride + i], the terms
/// subtracted in order a = 0, 1, … with the product rounded first, exactly as
/// repeated [`sub_scaled`] would (same bits), but reading and writing u once.
pub(super) fn refresh_scores(
    u: &mut [f32],
    rho: &[f32],
    gram: &[f32],
    stride: usize,
    rows: &[usize],
    coef: &[f32],
) {
    let n = u.len();
    let body = n - n % LANES;
    let mut i = 0;
    while i < body {
        let mut acc = f32::load8(rho, i);
        for (&r, &c) in rows.iter().zip(coef) {
            acc -= f32x8::splat(c) * f32::load8(gram, r * stride + i);
        }
        u[i..i + LANES].copy_from_slice(&acc.to_array());
        i += LANES;
    }
    for i in body..n {
        let mut v = rho[i];
        for (&r, &c) in rows.iter().zip(coef) {
            v -= c * gram[r * stride + i];
        }
        u[i] = v;
    }
}

/// The largest value of `values` (−∞ for an empty slice). The values must
/// not be NaN (scores never are): a NaN may or may not be skipped,
/// depending on the target.
pub(crate) fn max(values: &[f32]) -> f32 {
    let n = values.len();
    let body = n - n % (2 * LANES);
    // Two independent chains of `maxps`, so the loop is not latency-bound.
    let (mut m0, mut m1) = (
        f32x8::splat(f32::NEG_INFINITY),
        f32x8::splat(f32::NEG_INFINITY),
    );
    let mut i = 0;
    while i < body {
        m0 = f32::load8(values, i).fast_max(m0);
        m1 = f32::load8(values, i + LANES).fast_max(m1);
        i += 2 * LANES;
    }
    if body + LANES <= n {
        m0 = f32::load8(values, body).fast_max(m0);
    }
    let l = m0.fast_max(m1).to_array();
    let top = |a: f32, b: f32| if b > a { b } else { a };
    let mut best = top(
        top(top(l[0], l[1]), top(l[2], l[3])),
        top(top(l[4], l[5]), top(l[6], l[7])),
    );
    let tail = if body + LANES <= n {
        body + LANES
    } else {
        body
    };
    for &v in &values[tail..] {
        best = top(best, v);
    }
    best
}

/// The lowest index holding `target` (compared with `==`), if any.
pub(crate) fn position(values: &[f32], target: f32) -> Option<usize> {
    let n = values.len();
    let body = n - n % LANES;
    let t = f32x8::splat(target);
    let mut i = 0;
    while i < body {
        let hits = f32::load8(values, i).simd_eq(t).to_bitmask();
        if hits != 0 {
            return Some(i + hits.trailing_zeros() as usize);
        }
        i += LANES;
    }
    values[body..]
        .iter()
        .position(|&v| v == target)
        .map(|k| body + k)
}

/// u[i] += row[i], elementwise.
pub(crate) fn add_assign(u: &mut [f32], row: &[f32]) {
    let n = u.len();
    let body = n - n % LANES;
    let mut i = 0;
    while i < body {
        let r = f32::load8(u, i) + f32::load8(row, i);
        u[i..i + LANES].copy_from_slice(&r.to_array());
        i += LANES;
    }
    for i in body..n {
        u[i] += row[i];
    }
}

/// The portable int8 pass of [`dots_i8`](super::int8::dots_i8) (the
/// reference the SIMD variants are tested against): four rows per pass over `v`, 16-element i32 lanes that
/// the compiler vectorizes. Same preconditions as
/// [`dots_i8`](super::int8::dots_i8) (checked there).
pub(crate) fn dots_i8(rows: &[i8], d: usize, v: &[i8], out: &mut [i32]) {
    let p = out.len();
    let mut i = 0;
    while i + 4 <= p {
        let r: [&[i8]; 4] = core::array::from_fn(|j| &rows[(i + j) * d..(i + j + 1) * d]);
        let mut acc = [0i32; 4];
        for (j, row) in r.iter().enumerate() {
            acc[j] = dot_i8(row, v);
        }
        out[i..i + 4].copy_from_slice(&acc);
        i += 4;
    }
    while i < p {
        out[i] = dot_i8(&rows[i * d..(i + 1) * d], v);
        i += 1;
    }
}

/// Σ_k a[k] · b[k] in i32 over the common length (exact for lengths up to
/// [`MAX_I8_DIM`](super::int8::MAX_I8_DIM)): 16 codes at a time widened to i16 and multiplied
/// pairwise into i32 lanes (`wide::i16x16::dot`: `pmaddwd` on x86, the
/// equivalent on simd128 and NEON, scalar lanes elsewhere). Each lane sums
/// at most 2·⌈d/16⌉ products, so no lane overflows for d ≤ [`MAX_I8_DIM`](super::int8::MAX_I8_DIM).
#[inline]
pub(crate) fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    use wide::{i16x16, i32x8, i8x16};
    const W: usize = 16;
    let n = a.len().min(b.len());
    let body = n - n % W;
    let load = |s: &[i8], k: usize| -> i16x16 {
        let c: [i8; W] = s[k..k + W].try_into().unwrap_or([0; W]);
        i16x16::from_i8x16(i8x16::new(c))
    };
    let mut acc = i32x8::ZERO;
    let mut k = 0;
    while k < body {
        acc += load(a, k).dot(load(b, k));
        k += W;
    }
    // Wrapping: exact for codes in −127..=127 (module docs); a −128 from a
    // caller of `dots_i8` must not panic in a debug build.
    let mut s = acc.to_array().iter().fold(0i32, |s, &x| s.wrapping_add(x));
    for k in body..n {
        s = s.wrapping_add(a[k] as i32 * b[k] as i32);
    }
    s
}
