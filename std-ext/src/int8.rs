//! Owned certified int8 candidates ([`Int8Candidates`]) for
//! [`Selector::select_int8`](crate::Selector::select_int8).

use mempursuit_core::{Error, Int8Pool};

/// An owned int8 copy of a P × d candidate matrix (codes, per-row scales,
/// exact error norms and row norms): the heap-backed form of the core's
/// [`Int8Pool`]. Build it once per pool and reuse it for every query on
/// that pool. P·(d + 20) bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Int8Candidates {
    codes: Vec<i8>,
    scales: Vec<f32>,
    errors: Vec<f64>,
    norms: Vec<f64>,
    dim: usize,
}

impl Int8Candidates {
    /// Quantizes the row-major P × d matrix `rows` (see
    /// [`Int8Pool::quantize`]: per row s_i = max|m_ik|/127, codes rounded to
    /// nearest, E_i and ‖m_i‖ in f64).
    ///
    /// # Errors
    /// As [`Int8Pool::quantize`].
    pub fn quantize(rows: &[f32], d: usize) -> Result<Self, Error> {
        let p = rows.len().checked_div(d).unwrap_or(0);
        let mut c = Int8Candidates {
            codes: vec![0; rows.len()],
            scales: vec![0.0; p],
            errors: vec![0.0; p],
            norms: vec![0.0; p],
            dim: d,
        };
        Int8Pool::quantize(
            rows,
            d,
            &mut c.codes,
            &mut c.scales,
            &mut c.errors,
            &mut c.norms,
        )?;
        Ok(c)
    }

    /// Takes codes and scales you already store (row i ≈ `scales[i]` ·
    /// codes of row i) and computes the error norms from the f32 `rows`
    /// (see [`Int8Pool::from_codes`]).
    ///
    /// # Errors
    /// As [`Int8Pool::from_codes`].
    pub fn from_codes(
        rows: &[f32],
        d: usize,
        codes: Vec<i8>,
        scales: Vec<f32>,
    ) -> Result<Self, Error> {
        let p = rows.len().checked_div(d).unwrap_or(0);
        let mut errors = vec![0.0; p];
        let mut norms = vec![0.0; p];
        Int8Pool::from_codes(rows, d, &codes, &scales, &mut errors, &mut norms)?;
        Ok(Int8Candidates {
            codes,
            scales,
            errors,
            norms,
            dim: d,
        })
    }

    /// The core view of this pool.
    pub fn view(&self) -> Int8Pool<'_> {
        let p = self.errors.len();
        Int8Pool::from_parts(
            &self.codes[..p * self.dim],
            &self.scales[..p],
            &self.errors,
            &self.norms,
            self.dim,
        )
        .expect("lengths fixed by the constructors")
    }
}
