//! f32x8 SIMD kernels (crate `wide`): row dot products of the row-major
//! P × d candidate matrix with one vector (the query-similarity pass and the
//! Gram row of a pick), squared norms, and the score refresh.
//!
//! Reduction order is fixed by this module, not by the SIMD backend: each
//! dot product accumulates in 8 lanes (element k goes to lane k mod 8), the
//! lanes are summed pairwise as ((0+1)+(2+3))+((4+5)+(6+7)), then the d mod 8
//! tail is added in order. Every row uses the same sequence whether it is
//! processed in a block of four or alone, so G_ij and G_ji are bit-identical
//! and results do not depend on P. Without FMA (no `fma` target feature) the
//! results are bit-identical on every target.

use wide::f32x8;

const LANES: usize = 8;

#[inline(always)]
fn load(s: &[f32], at: usize) -> f32x8 {
    let a: [f32; LANES] = s[at..at + LANES].try_into().unwrap_or([0.0; LANES]);
    f32x8::new(a)
}

#[inline(always)]
fn hsum(v: f32x8) -> f32 {
    let a = v.to_array();
    ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
}

/// Dot product of two equal-length slices in the module's fixed order.
#[inline]
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let body = n - n % LANES;
    let mut acc = f32x8::ZERO;
    let mut k = 0;
    while k < body {
        acc += load(a, k) * load(b, k);
        k += LANES;
    }
    let mut s = hsum(acc);
    for k in body..n {
        s += a[k] * b[k];
    }
    s
}

/// out[i] = row_i · v for every row of the row-major `rows` (len = out.len() · d).
/// Four rows per pass over `v` (register blocking).
pub(crate) fn row_dots(rows: &[f32], d: usize, v: &[f32], out: &mut [f32]) {
    let p = out.len();
    let body = d - d % LANES;
    let v = &v[..d];
    let mut i = 0;
    while i + 4 <= p {
        let r0 = &rows[i * d..(i + 1) * d];
        let r1 = &rows[(i + 1) * d..(i + 2) * d];
        let r2 = &rows[(i + 2) * d..(i + 3) * d];
        let r3 = &rows[(i + 3) * d..(i + 4) * d];
        let (mut a0, mut a1, mut a2, mut a3) = (f32x8::ZERO, f32x8::ZERO, f32x8::ZERO, f32x8::ZERO);
        let mut k = 0;
        while k < body {
            let x = load(v, k);
            a0 += load(r0, k) * x;
            a1 += load(r1, k) * x;
            a2 += load(r2, k) * x;
            a3 += load(r3, k) * x;
            k += LANES;
        }
        let (mut s0, mut s1, mut s2, mut s3) = (hsum(a0), hsum(a1), hsum(a2), hsum(a3));
        for k in body..d {
            s0 += r0[k] * v[k];
            s1 += r1[k] * v[k];
            s2 += r2[k] * v[k];
            s3 += r3[k] * v[k];
        }
        out[i] = s0;
        out[i + 1] = s1;
        out[i + 2] = s2;
        out[i + 3] = s3;
        i += 4;
    }
    while i < p {
        out[i] = dot(&rows[i * d..(i + 1) * d], v);
        i += 1;
    }
}

/// One pass over the matrix: dots[i] = row_i · v and sumsq[i] = ‖row_i‖².
pub(crate) fn row_dots_and_sumsq(
    rows: &[f32],
    d: usize,
    v: &[f32],
    dots: &mut [f32],
    sumsq: &mut [f32],
) {
    let p = dots.len();
    let body = d - d % LANES;
    let v = &v[..d];
    let mut i = 0;
    while i + 2 <= p {
        let r0 = &rows[i * d..(i + 1) * d];
        let r1 = &rows[(i + 1) * d..(i + 2) * d];
        let (mut a0, mut a1, mut n0, mut n1) = (f32x8::ZERO, f32x8::ZERO, f32x8::ZERO, f32x8::ZERO);
        let mut k = 0;
        while k < body {
            let x = load(v, k);
            let y0 = load(r0, k);
            let y1 = load(r1, k);
            a0 += y0 * x;
            a1 += y1 * x;
            n0 += y0 * y0;
            n1 += y1 * y1;
            k += LANES;
        }
        let (mut s0, mut s1, mut q0, mut q1) = (hsum(a0), hsum(a1), hsum(n0), hsum(n1));
        for k in body..d {
            s0 += r0[k] * v[k];
            s1 += r1[k] * v[k];
            q0 += r0[k] * r0[k];
            q1 += r1[k] * r1[k];
        }
        dots[i] = s0;
        dots[i + 1] = s1;
        sumsq[i] = q0;
        sumsq[i + 1] = q1;
        i += 2;
    }
    while i < p {
        let r = &rows[i * d..(i + 1) * d];
        dots[i] = dot(r, v);
        sumsq[i] = dot(r, r);
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
        let r = load(out, i) * (load(s, i) * cv);
        out[i..i + LANES].copy_from_slice(&r.to_array());
        i += LANES;
    }
    for i in body..n {
        out[i] *= s[i] * c;
    }
}

/// u[i] -= c · row[i], elementwise (one term of the score refresh, Eq. 9).
pub(crate) fn sub_scaled(u: &mut [f32], c: f32, row: &[f32]) {
    let n = u.len();
    let body = n - n % LANES;
    let cv = f32x8::splat(c);
    let mut i = 0;
    while i < body {
        let r = load(u, i) - cv * load(row, i);
        u[i..i + LANES].copy_from_slice(&r.to_array());
        i += LANES;
    }
    for i in body..n {
        u[i] -= c * row[i];
    }
}

/// u[i] += row[i], elementwise.
pub(crate) fn add_assign(u: &mut [f32], row: &[f32]) {
    let n = u.len();
    let body = n - n % LANES;
    let mut i = 0;
    while i < body {
        let r = load(u, i) + load(row, i);
        u[i..i + LANES].copy_from_slice(&r.to_array());
        i += LANES;
    }
    for i in body..n {
        u[i] += row[i];
    }
}
