//! Exact values from the rows, in f64 (products of two f32 widen exactly):
//! the entries of G_SS once a pick comes near a dependency
//! (`pursuit::switch_to_exact`), and L_t when the Gram formula would cancel
//! (`residual_sq`). Everything else in the refit uses the f32 passes'
//! entries, widened; these touch only the few rows that matter.

use crate::kernels::sealed::Rows;
use crate::workspace::Workspace;

/// Rows that widen exactly to f64.
trait Widen: Copy {
    fn w(self) -> f64;
    /// The slice as f32 (for the SIMD kernel), if it is one.
    #[inline(always)]
    fn as_f32(_: &[Self]) -> Option<&[f32]> {
        None
    }
}

impl Widen for f32 {
    #[inline(always)]
    fn w(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn as_f32(s: &[f32]) -> Option<&[f32]> {
        Some(s)
    }
}

#[cfg(feature = "half")]
impl Widen for half::f16 {
    #[inline(always)]
    fn w(self) -> f64 {
        self.to_f64()
    }
}

#[cfg(feature = "half")]
impl Widen for half::bf16 {
    #[inline(always)]
    fn w(self) -> f64 {
        self.to_f64()
    }
}

/// Four consecutive elements widened to f64.
#[inline(always)]
fn load4<T: Widen>(s: &[T], k: usize) -> wide::f64x4 {
    wide::f64x4::new([s[k].w(), s[k + 1].w(), s[k + 2].w(), s[k + 3].w()])
}

/// Σ a_k b_k in f64 (fixed order: two `f64x4` accumulators over blocks of
/// 8, then the lanes, then the tail in order; no fused multiply-add).
#[inline]
fn dot<A: Widen, B: Widen>(a: &[A], b: &[B]) -> f64 {
    if let (Some(x), Some(y)) = (A::as_f32(a), B::as_f32(b)) {
        // The same order on AVX2 (exact products: the same bits).
        if let Some(s) = crate::kernels::dot_f64_simd(x, y) {
            return s;
        }
    }
    dot_portable(a, b)
}

/// [`dot`] in portable code (the same order and bits as the SIMD kernel).
#[inline]
fn dot_portable<A: Widen, B: Widen>(a: &[A], b: &[B]) -> f64 {
    use wide::f64x4;
    let n = a.len().min(b.len());
    let body = n - n % 8;
    let (mut s0, mut s1) = (f64x4::ZERO, f64x4::ZERO);
    let mut k = 0;
    while k < body {
        s0 += load4(a, k) * load4(b, k);
        s1 += load4(a, k + 4) * load4(b, k + 4);
        k += 8;
    }
    let l = (s0 + s1).to_array();
    let mut t = (l[0] + l[1]) + (l[2] + l[3]);
    for k in body..n {
        t += a[k].w() * b[k].w();
    }
    t
}

/// The candidate matrix, the query and the query's scale of one call.
///
/// The scales are the f32 ones the passes use (`Workspace::scale`: 1 for
/// a row the input policy uses as given, else fl32(1/‖m_i‖)), widened: the
/// exact parts are then exact values of the very quantities the f32 Gram
/// entries approximate, m̂_i · m̂_j with m̂_i = s_i m_i.
#[derive(Clone, Copy)]
pub(crate) struct ExactParts<'a> {
    pub rows: Rows<'a>,
    pub d: usize,
    pub q: &'a [f32],
    /// s_q: the query's f32 scale, widened.
    pub s_q: f64,
    /// ‖s_q q‖² in f64 (L_0).
    pub qq: f64,
}

impl<'a> ExactParts<'a> {
    /// `q_scale` is the f32 scale `prepare` chose (1 = used as given).
    pub fn new(rows: Rows<'a>, d: usize, q: &'a [f32], q_scale: f32) -> Self {
        let s_q = q_scale as f64;
        ExactParts {
            rows,
            d,
            q,
            s_q,
            qq: s_q * s_q * dot(q, q),
        }
    }

    /// m_i · m_j in f64 (raw rows, no scale).
    pub fn dot_rows(&self, i: usize, j: usize) -> f64 {
        let d = self.d;
        match self.rows {
            Rows::F32(r) => dot(r.row(i, d), r.row(j, d)),
            #[cfg(feature = "half")]
            Rows::F16(r) => dot(r.row(i, d), r.row(j, d)),
            #[cfg(feature = "half")]
            Rows::Bf16(r) => dot(r.row(i, d), r.row(j, d)),
        }
    }

    /// G_ij = s_i s_j (m_i · m_j) in f64 (the exact value of the f32 Gram
    /// entry).
    pub fn gram(&self, ws: &Workspace<'_>, i: usize, j: usize) -> f64 {
        ws.scale[i] as f64 * ws.scale[j] as f64 * self.dot_rows(i, j)
    }

    /// L = ‖s_q q − Σ_{a∈F} α_a s_a m_a‖² in f64, from the rows (no
    /// cancellation: accurate to ~1e-15 relative however small L is).
    /// `free` are positions in S, `picks` maps them to pool indices.
    pub fn residual_explicit(&self, ws: &Workspace<'_>) -> f64 {
        const CHUNK: usize = 64;
        let d = self.d;
        let mut total = 0.0f64;
        let mut r = [0.0f64; CHUNK];
        let mut k0 = 0;
        while k0 < d {
            let n = CHUNK.min(d - k0);
            for (rk, &qk) in r[..n].iter_mut().zip(&self.q[k0..k0 + n]) {
                *rk = self.s_q * qk as f64;
            }
            for &pos in ws.solver.free() {
                let j = ws.picks[pos];
                let c = ws.solver.alpha[pos] * ws.scale[j] as f64;
                let part = k0..k0 + n;
                match self.rows {
                    Rows::F32(m) => sub_scaled(&mut r[..n], c, &m.row(j, d)[part]),
                    #[cfg(feature = "half")]
                    Rows::F16(m) => sub_scaled(&mut r[..n], c, &m.row(j, d)[part]),
                    #[cfg(feature = "half")]
                    Rows::Bf16(m) => sub_scaled(&mut r[..n], c, &m.row(j, d)[part]),
                }
            }
            total += r[..n].iter().map(|v| v * v).sum::<f64>();
            k0 += n;
        }
        total
    }
}

#[inline]
fn sub_scaled<T: Widen>(r: &mut [f64], c: f64, m: &[T]) {
    for (rk, &x) in r.iter_mut().zip(m) {
        *rk -= c * x.w();
    }
}

/// L_t = ‖q̂ − Σ α_j m̂_j‖² after a refit (Eq. 7's L, no ridge term):
/// ‖q̂‖² − 2αᵀb_S + αᵀG_SSα from the refit's entries (the f32 passes'
/// values, widened: each within `entry_error` of its exact value), which
/// cancels when the residual is small. When the formula is below
/// `EXPLICIT_FACTOR` times its own error bound (or below 1e-3) L is
/// recomputed from the rows in f64 (~1e-15 relative): so L_t is accurate to
/// 1 % relative or better at every size, and to f64 precision for small
/// residuals.
pub(crate) fn residual_sq(parts: &ExactParts<'_>, ws: &Workspace<'_>, entry_error: f64) -> f64 {
    // αᵀG_SSα from the refit's G_SS α (`g_alpha`, current for the
    // returned α up to its final renormalization, ~1e-14).
    let (mut ab, mut aga, mut asum) = (0.0f64, 0.0f64, 0.0f64);
    for &i in ws.solver.free() {
        let ai = ws.solver.alpha[i];
        asum += ai;
        ab += ai * ws.solver.b_s[i];
        aga += ai * ws.solver.g_alpha[i];
    }
    let l = parts.qq - 2.0 * ab + aga;
    // |error| ≤ 2 Σα|δb| + Σαα|δG| ≤ (2 + Σα)·Σα·entry_error.
    let bound = (2.0 + asum) * asum * entry_error;
    if l < 1e-3 || l < EXPLICIT_FACTOR * bound {
        parts.residual_explicit(ws).max(0.0)
    } else {
        l
    }
}

/// L_t is recomputed from the rows when the formula is below this many
/// times its error bound (so its relative error stays ≤ 1 %).
const EXPLICIT_FACTOR: f64 = 100.0;

#[cfg(test)]
mod tests {
    /// The portable f64 dot computes the documented order of
    /// `kernels::dot_f64_simd` (8 lanes, `dot_f64_reduce`, the tail in
    /// order) bit for bit, and so the SIMD kernel's bits where it runs.
    #[test]
    fn portable_f64_dot_is_the_documented_order() {
        use crate::kernels::{dot_f64_reduce, dot_f64_simd, DOT_F64_LANES};
        let v = |n: usize, seed: u32| -> [f32; 100] {
            let mut s = seed;
            core::array::from_fn(|k| {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                if k < n {
                    (s >> 8) as f32 / 8_388_608.0 - 1.0
                } else {
                    0.0
                }
            })
        };
        for n in 0..100 {
            let (a, b) = (v(n, 3), v(n, 5));
            let (x, y) = (&a[..n], &b[..n]);
            let body = n - n % DOT_F64_LANES;
            let mut s = [0.0f64; DOT_F64_LANES];
            for k in 0..body {
                s[k % DOT_F64_LANES] += x[k] as f64 * y[k] as f64;
            }
            let mut want = dot_f64_reduce(&s);
            for k in body..n {
                want += x[k] as f64 * y[k] as f64;
            }
            assert_eq!(super::dot_portable(x, y).to_bits(), want.to_bits(), "n={n}");
            if let Some(simd) = dot_f64_simd(x, y) {
                assert_eq!(simd.to_bits(), want.to_bits(), "n={n}");
            }
        }
    }
}
