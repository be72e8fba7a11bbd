//! Certified int8 candidates: a candidate matrix stored as int8 codes with a
//! per-row scale and the exact norm of each row's quantization error, so
//! that every approximate score of the pursuit carries a rigorous error
//! radius (see [`pursuit_int8`](crate::pursuit_int8); the bound is derived
//! in the docs of the `certified` module, `core/src/certified.rs`).
//!
//! Row i of the P × d matrix m is stored as m̃_i = s_i c_i with codes
//! c_i ∈ {−127, …, 127}^d and scale s_i (f32; [`Int8Pool::quantize`] uses
//! s_i = max_k |m_ik| / 127 and rounds to nearest), together with
//! E_i = ‖m_i − s_i c_i‖₂ (computed once in f64 from the f32 row and rounded
//! up) and ‖m_i‖₂ (f64). For every vector v, |m_i·v − m̃_i·v| ≤ E_i ‖v‖
//! (Cauchy–Schwarz): that is the whole certificate.

use crate::error::{Error, Int8Fault};
use crate::kernels::int8::MAX_I8_DIM;

/// A borrowed int8 copy of a P × d candidate matrix with the per-row data
/// the certified pursuit needs (module docs). Build it once per pool with
/// [`Int8Pool::quantize`] (from the f32 rows) or [`Int8Pool::from_codes`]
/// (codes and scales you already store, e.g. from a vector database with
/// scalar quantization), then pass it with the same f32 rows to
/// [`pursuit_int8`](crate::pursuit_int8).
///
/// Bytes per row: d (codes) + 4 (scale) + 16 (error and norm).
#[derive(Debug, Clone, Copy)]
pub struct Int8Pool<'a> {
    pub(crate) codes: &'a [i8],
    pub(crate) scales: &'a [f32],
    pub(crate) errors: &'a [f64],
    pub(crate) norms: &'a [f64],
    pub(crate) dim: usize,
}

/// Upper bound of the relative rounding of an f64 sum of squares of `d`
/// terms (each difference and square rounded once): 3(d + 2)·2⁻⁵³, as a
/// factor ≥ 1 to multiply an f64 sum of squares by.
fn sumsq_round_up(d: usize) -> f64 {
    1.0 + 3.0 * (d as f64 + 2.0) * f64::EPSILON
}

/// E_i and ‖m_i‖ of one row in f64, both rounded up (module docs).
fn row_error_and_norm(row: &[f32], scale: f32, codes: &[i8]) -> (f64, f64) {
    let s = scale as f64;
    let (mut e2, mut n2) = (0.0f64, 0.0f64);
    for (&x, &c) in row.iter().zip(codes) {
        let x = x as f64;
        // s · c is exact in f64 (24 + 7 bits).
        let e = x - s * c as f64;
        e2 += e * e;
        n2 += x * x;
    }
    let up = sumsq_round_up(row.len());
    (
        libm::sqrt(e2 * up) * (1.0 + f64::EPSILON),
        libm::sqrt(n2 * up) * (1.0 + f64::EPSILON),
    )
}

/// Checks the shapes shared by both constructors; returns P.
fn check_shape(
    rows: &[f32],
    d: usize,
    codes: usize,
    scales: usize,
    per_row: [usize; 2],
) -> Result<usize, Error> {
    if d == 0 {
        return Err(Error::ZeroDimension);
    }
    if d > MAX_I8_DIM {
        return Err(Error::Int8DimensionTooLarge {
            dim: d,
            max: MAX_I8_DIM,
        });
    }
    if !rows.len().is_multiple_of(d) {
        return Err(Error::ShapeMismatch {
            candidates_len: rows.len(),
            dim: d,
        });
    }
    let p = rows.len() / d;
    for (expected, found) in [
        (rows.len(), codes),
        (p, scales),
        (p, per_row[0]),
        (p, per_row[1]),
    ] {
        if found < expected {
            return Err(Error::Int8Length { expected, found });
        }
    }
    Ok(p)
}

impl<'a> Int8Pool<'a> {
    /// Quantizes the row-major P × d f32 matrix `rows` into caller buffers:
    /// per row s_i = max_k |m_ik| / 127 (f32) and c_ik = round(m_ik / s_i)
    /// ∈ −127..=127 (a zero row gets s_i = 0 and zero codes), then E_i and
    /// ‖m_i‖ in f64 (module docs). Buffers: `codes` ≥ P·d, `scales`,
    /// `errors`, `norms` ≥ P each (longer is fine; the excess is untouched).
    /// One pass over the rows; `rows` is not modified.
    ///
    /// # Errors
    /// [`Error::ZeroDimension`] (d = 0), [`Error::ShapeMismatch`] (`rows`
    /// not P × d), [`Error::Int8DimensionTooLarge`] (d > 133 000, where an
    /// i32 dot of codes could overflow), [`Error::Int8Length`] (a buffer
    /// too short), [`Error::Int8Row`] with [`Int8Fault::NonFinite`] for a
    /// NaN/±∞ element (the pursuit would reject that row anyway).
    pub fn quantize(
        rows: &[f32],
        d: usize,
        codes: &'a mut [i8],
        scales: &'a mut [f32],
        errors: &'a mut [f64],
        norms: &'a mut [f64],
    ) -> Result<Int8Pool<'a>, Error> {
        let p = check_shape(
            rows,
            d,
            codes.len(),
            scales.len(),
            [errors.len(), norms.len()],
        )?;
        for i in 0..p {
            let row = &rows[i * d..(i + 1) * d];
            let mut max = 0.0f32;
            for (index, &x) in row.iter().enumerate() {
                if !x.is_finite() {
                    return Err(Error::Int8Row {
                        row: i,
                        fault: Int8Fault::NonFinite { index, value: x },
                    });
                }
                max = max.max(x.abs());
            }
            let s = max / 127.0;
            let c = &mut codes[i * d..(i + 1) * d];
            if s > 0.0 && s.is_finite() {
                let inv = 1.0 / s as f64;
                for (ck, &x) in c.iter_mut().zip(row) {
                    let v = libm::round(x as f64 * inv).clamp(-127.0, 127.0);
                    *ck = v as i8;
                }
                scales[i] = s;
            } else {
                // Zero row (or a max below the smallest f32 after / 127):
                // code it as 0 and let E_i = ‖m_i‖ carry it exactly.
                c.fill(0);
                scales[i] = 0.0;
            }
            let (e, n) = row_error_and_norm(row, scales[i], c);
            errors[i] = e;
            norms[i] = n;
        }
        Ok(Int8Pool {
            codes: &codes[..p * d],
            scales: &scales[..p],
            errors: &errors[..p],
            norms: &norms[..p],
            dim: d,
        })
    }

    /// Wraps codes and scales you already store (row i ≈ `scales[i]` ·
    /// `codes[i·d..(i+1)·d]`, any scale and rounding rule) and computes E_i
    /// and ‖m_i‖ from the f32 rows they approximate into `errors` and
    /// `norms` (≥ P each). The certificate holds for any codes and scales;
    /// poor ones only widen the radii (more candidates verified exactly).
    /// Nothing the caller gave is modified but `errors` and `norms`.
    ///
    /// # Errors
    /// As [`quantize`](Self::quantize), plus [`Error::Int8Row`] with
    /// [`Int8Fault::CodeOutOfRange`] for a code −128 and
    /// [`Int8Fault::InvalidScale`] for a negative or non-finite scale.
    pub fn from_codes(
        rows: &[f32],
        d: usize,
        codes: &'a [i8],
        scales: &'a [f32],
        errors: &'a mut [f64],
        norms: &'a mut [f64],
    ) -> Result<Int8Pool<'a>, Error> {
        let p = check_shape(
            rows,
            d,
            codes.len(),
            scales.len(),
            [errors.len(), norms.len()],
        )?;
        for i in 0..p {
            let row = &rows[i * d..(i + 1) * d];
            let c = &codes[i * d..(i + 1) * d];
            let s = scales[i];
            if !(s.is_finite() && s >= 0.0) {
                return Err(Error::Int8Row {
                    row: i,
                    fault: Int8Fault::InvalidScale { value: s },
                });
            }
            if let Some(index) = c.iter().position(|&v| v == i8::MIN) {
                return Err(Error::Int8Row {
                    row: i,
                    fault: Int8Fault::CodeOutOfRange { index },
                });
            }
            if let Some((index, &value)) = row.iter().enumerate().find(|(_, x)| !x.is_finite()) {
                return Err(Error::Int8Row {
                    row: i,
                    fault: Int8Fault::NonFinite { index, value },
                });
            }
            let (e, n) = row_error_and_norm(row, s, c);
            errors[i] = e;
            norms[i] = n;
        }
        Ok(Int8Pool {
            codes: &codes[..p * d],
            scales: &scales[..p],
            errors: &errors[..p],
            norms: &norms[..p],
            dim: d,
        })
    }

    /// Reassembles a pool from the slices of one built earlier by
    /// [`quantize`](Self::quantize) or [`from_codes`](Self::from_codes)
    /// (e.g. kept in owned buffers): the slices must be exactly those
    /// outputs (`codes.len() = scales.len() · dim`, errors and norms as
    /// computed there), or the certificate is void.
    ///
    /// # Errors
    /// [`Error::Int8DimensionTooLarge`] for d > 133 000, [`Error::Int8Length`]
    /// when a length does not fit P = `scales.len()` and d.
    pub fn from_parts(
        codes: &'a [i8],
        scales: &'a [f32],
        errors: &'a [f64],
        norms: &'a [f64],
        dim: usize,
    ) -> Result<Int8Pool<'a>, Error> {
        if dim > MAX_I8_DIM {
            return Err(Error::Int8DimensionTooLarge {
                dim,
                max: MAX_I8_DIM,
            });
        }
        let p = scales.len();
        let pd = p.saturating_mul(dim);
        for (expected, found) in [(pd, codes.len()), (p, errors.len()), (p, norms.len())] {
            if found != expected {
                return Err(Error::Int8Length { expected, found });
            }
        }
        Ok(Int8Pool {
            codes,
            scales,
            errors,
            norms,
            dim,
        })
    }

    /// The pool size P.
    pub fn len(&self) -> usize {
        self.scales.len()
    }

    /// Whether the pool is empty (P = 0).
    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    /// The embedding dimension d.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The codes, row-major P × d.
    pub fn codes(&self) -> &'a [i8] {
        self.codes
    }

    /// The per-row scales s_i (length P).
    pub fn scales(&self) -> &'a [f32] {
        self.scales
    }

    /// The per-row error norms E_i = ‖m_i − s_i c_i‖₂ (f64, rounded up;
    /// length P).
    pub fn errors(&self) -> &'a [f64] {
        self.errors
    }

    /// The per-row norms ‖m_i‖₂ of the f32 rows (f64, rounded up; length P).
    pub fn norms(&self) -> &'a [f64] {
        self.norms
    }
}
