//! WebAssembly simd128 kernel of the int8 pass:
//! `out[i] = Σ_k rows[i·d + k] · v[k]`, exact in i32, for row-major P × d
//! int8 codes in −127..=127 and d ≤ 133 000 (so |out[i]| < 2³¹).
//!
//! Each 16-byte chunk is sign-extended to two i16x8 halves and multiplied
//! with `i32x4.dot_i16x8_s` (pairs of i16 products summed into i32 lanes:
//! at most 2 · 127² in magnitude, exact). Four rows per load of the vector;
//! the d mod 16 tail in scalar code. Integer arithmetic is exact and
//! associative, so the values equal the scalar kernel's on every target.
//! Compiled only when the build enables simd128 (a compile-time feature on
//! WebAssembly: there is no run-time detection).

#![allow(unsafe_code)]

use core::arch::wasm32::*;

/// Rows per load of the vector.
const BLOCK: usize = 4;

/// The int8 pass with simd128.
///
/// # Panics
/// If `rows.len() != out.len() · d` or `v.len() != d`.
pub(crate) fn dots_i8(rows: &[i8], d: usize, v: &[i8], out: &mut [i32]) {
    assert!(
        out.len().checked_mul(d) == Some(rows.len()) && v.len() == d,
        "int8 kernel shape: {} codes for {} rows of d = {d}, vector of {}",
        rows.len(),
        out.len(),
        v.len()
    );
    let p = out.len();
    let body = d - d % 16;
    let mut i = 0;
    while i < p {
        // Full blocks, then the last BLOCK rows again (overlapping; the
        // same values), or rows 0..p with the last repeated when p < BLOCK.
        let idx: [usize; BLOCK] = if i + BLOCK <= p {
            core::array::from_fn(|r| i + r)
        } else {
            core::array::from_fn(|r| (p.saturating_sub(BLOCK) + r).min(p - 1))
        };
        let row: [&[i8]; BLOCK] = core::array::from_fn(|r| &rows[idx[r] * d..(idx[r] + 1) * d]);
        let mut acc = [i32x4_splat(0); BLOCK];
        let mut k = 0;
        while k < body {
            // SAFETY: k + 16 ≤ body ≤ d = v.len(); v128_load has no
            // alignment requirement.
            let x = unsafe { v128_load(v.as_ptr().add(k) as *const v128) };
            let (xl, xh) = (i16x8_extend_low_i8x16(x), i16x8_extend_high_i8x16(x));
            for (a, r) in acc.iter_mut().zip(&row) {
                // SAFETY: k + 16 ≤ d = r.len(); unaligned loads are allowed.
                let y = unsafe { v128_load(r.as_ptr().add(k) as *const v128) };
                let lo = i32x4_dot_i16x8(i16x8_extend_low_i8x16(y), xl);
                let hi = i32x4_dot_i16x8(i16x8_extend_high_i8x16(y), xh);
                *a = i32x4_add(*a, i32x4_add(lo, hi));
            }
            k += 16;
        }
        for (r, a) in acc.iter().enumerate() {
            let lanes = i32x4_extract_lane::<0>(*a)
                .wrapping_add(i32x4_extract_lane::<1>(*a))
                .wrapping_add(i32x4_extract_lane::<2>(*a))
                .wrapping_add(i32x4_extract_lane::<3>(*a));
            let tail = row[r][body..]
                .iter()
                .zip(&v[body..])
                .fold(0i32, |s, (&a, &b)| s.wrapping_add(a as i32 * b as i32));
            out[idx[r]] = lanes.wrapping_add(tail);
        }
        i += BLOCK;
    }
}

#[cfg(test)]
mod tests {
    use super::dots_i8;
    use crate::kernels::portable::dots_i8 as scalar;

    /// Equals the scalar kernel over lengths 0..=300, ±127 extremes, random
    /// codes, 0..=9 rows, rows at odd byte offsets.
    #[test]
    fn equals_the_scalar_kernel() {
        const P: usize = 9;
        let mut buf = [0i8; 1 + P * 300 + 300];
        let (mut want, mut got) = ([0i32; P], [0i32; P]);
        let mut s = 1u64;
        for d in 0..=300 {
            for case in 0..3 {
                let n = P * d + d;
                for (j, c) in buf[1..1 + n].iter_mut().enumerate() {
                    s = s
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    *c = match case {
                        0 => (((s >> 33) % 255) as i32 - 127) as i8,
                        1 => 127,
                        _ => {
                            if (j / 3) % 2 == 0 {
                                127
                            } else {
                                -127
                            }
                        }
                    };
                }
                for skew in [0usize, 1] {
                    let (rows_all, v) = buf[skew..skew + n].split_at(P * d);
                    for p in [0usize, 1, 3, 4, 5, 8, 9] {
                        scalar(&rows_all[..p * d], d, v, &mut want[..p]);
                        dots_i8(&rows_all[..p * d], d, v, &mut got[..p]);
                        assert_eq!(got[..p], want[..p], "d={d} p={p} case={case}");
                    }
                }
            }
        }
    }
}
