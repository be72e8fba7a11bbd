//! Exact small parts: f64 dot products of candidate rows (widened exactly
//! from their storage type) for the quantities that enter the refit and the
//! certificates: G_SS, b_S, L_t and the verified scores of the certified
//! int8 pursuit. The big passes stay in f32 (or int8); these touch only the
//! few rows that matter, so their cost is O(|S|·d) per pick.

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

/// The candidate matrix, the query and the query's exact scale of one call.
#[derive(Clone, Copy)]
pub(crate) struct ExactParts<'a> {
    pub rows: Rows<'a>,
    pub d: usize,
    pub q: &'a [f32],
    /// σ_q: 1 for a near-unit query, else 1/‖q‖ (f64).
    pub sigma_q: f64,
    /// ‖σ_q q‖² in f64 (L_0).
    pub qq: f64,
    /// ‖q‖ in f64 (the raw query).
    pub q_norm: f64,
}

impl<'a> ExactParts<'a> {
    /// `q_scale` is the f32 scale `prepare` chose (1 = used as given).
    pub fn new(rows: Rows<'a>, d: usize, q: &'a [f32], q_scale: f32) -> Self {
        let nq = dot(q, q);
        let sigma_q = if q_scale == 1.0 {
            1.0
        } else {
            1.0 / libm::sqrt(nq)
        };
        ExactParts {
            rows,
            d,
            q,
            sigma_q,
            qq: sigma_q * sigma_q * nq,
            q_norm: libm::sqrt(nq),
        }
    }

    /// m_i · m_j in f64 (raw rows, no scale).
    pub fn dot_rows(&self, i: usize, j: usize) -> f64 {
        let d = self.d;
        match self.rows {
            Rows::F32(r) => dot(&r[i * d..(i + 1) * d], &r[j * d..(j + 1) * d]),
            #[cfg(feature = "half")]
            Rows::F16(r) => dot(&r[i * d..(i + 1) * d], &r[j * d..(j + 1) * d]),
            #[cfg(feature = "half")]
            Rows::Bf16(r) => dot(&r[i * d..(i + 1) * d], &r[j * d..(j + 1) * d]),
        }
    }

    /// m_i · q in f64 (raw vectors).
    pub fn dot_query(&self, i: usize) -> f64 {
        let d = self.d;
        match self.rows {
            Rows::F32(r) => dot(&r[i * d..(i + 1) * d], self.q),
            #[cfg(feature = "half")]
            Rows::F16(r) => dot(&r[i * d..(i + 1) * d], self.q),
            #[cfg(feature = "half")]
            Rows::Bf16(r) => dot(&r[i * d..(i + 1) * d], self.q),
        }
    }

    /// σ_i (cached in `ws.sigma`): 1 for a row `prepare` uses as given,
    /// else 1/‖m_i‖ in f64.
    pub fn sigma(&self, ws: &mut Workspace<'_>, i: usize) -> f64 {
        let s = ws.sigma[i];
        if !s.is_nan() {
            return s;
        }
        let s = if ws.scale[i] == 1.0 {
            1.0
        } else {
            1.0 / libm::sqrt(self.dot_rows(i, i))
        };
        ws.sigma[i] = s;
        s
    }

    /// b_i = σ_i σ_q (m_i · q) in f64 (cached in `ws.b_exact`).
    pub fn b(&self, ws: &mut Workspace<'_>, i: usize) -> f64 {
        let b = ws.b_exact[i];
        if !b.is_nan() {
            return b;
        }
        let b = self.sigma(ws, i) * self.sigma_q * self.dot_query(i);
        ws.b_exact[i] = b;
        b
    }

    /// G_ij = σ_i σ_j (m_i · m_j) in f64.
    pub fn gram(&self, ws: &mut Workspace<'_>, i: usize, j: usize) -> f64 {
        let (si, sj) = (self.sigma(ws, i), self.sigma(ws, j));
        si * sj * self.dot_rows(i, j)
    }

    /// L = ‖σ_q q − Σ_{a∈F} α_a σ_a m_a‖² in f64, from the rows (no
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
                *rk = self.sigma_q * qk as f64;
            }
            for &pos in &ws.solver.free[..ws.solver.nfree] {
                let j = ws.picks[pos];
                let c = ws.solver.alpha[pos] * ws.sigma[j];
                let start = j * d + k0;
                match self.rows {
                    Rows::F32(m) => sub_scaled(&mut r[..n], c, &m[start..start + n]),
                    #[cfg(feature = "half")]
                    Rows::F16(m) => sub_scaled(&mut r[..n], c, &m[start..start + n]),
                    #[cfg(feature = "half")]
                    Rows::Bf16(m) => sub_scaled(&mut r[..n], c, &m[start..start + n]),
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

/// L_t = ‖q̂ − Σ α_j m̂_j‖² after a refit (Eq. 7's L, no ridge term) from the
/// f64 entries G_SS and b_S: ‖q̂‖² − 2αᵀb_S + αᵀG_SSα, which cancels when
/// the residual is small; below 1e-3 (where the formula keeps fewer than
/// ~12 correct digits) it is recomputed from the rows.
pub(crate) fn residual_sq(parts: &ExactParts<'_>, ws: &Workspace<'_>) -> f64 {
    let k = ws.max_budget;
    let (mut ab, mut aga) = (0.0f64, 0.0f64);
    for &i in &ws.solver.free[..ws.solver.nfree] {
        let ai = ws.solver.alpha[i];
        ab += ai * ws.solver.b_s[i];
        let mut g = 0.0;
        for &j in &ws.solver.free[..ws.solver.nfree] {
            g += ws.solver.gss[i * k + j] * ws.solver.alpha[j];
        }
        aga += ai * g;
    }
    let l = parts.qq - 2.0 * ab + aga;
    if l < 1e-3 {
        parts.residual_explicit(ws).max(0.0)
    } else {
        l
    }
}
