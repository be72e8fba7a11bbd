//! The candidate matrix as every kernel reads it: a [`Mat`] in one of the
//! storage types ([`Rows`]), and the storage-specific kernels behind
//! [`Element`](super::Element) ([`Sealed`]).

pub use super::mat::Mat;
use super::Isa;

/// A borrowed candidate matrix in one of the storage types.
#[derive(Debug, Clone, Copy)]
pub enum Rows<'a> {
    F32(Mat<'a, f32>),
    #[cfg(feature = "half")]
    F16(Mat<'a, half::f16>),
    #[cfg(feature = "half")]
    Bf16(Mat<'a, half::bf16>),
}

/// `$body` with `$m` bound to the matrix of whichever storage `$rows`
/// holds and `$t` to its element type.
macro_rules! each {
    ($rows:expr, |$m:ident: $t:ident| $body:expr) => {
        match $rows {
            Rows::F32($m) => {
                type $t = f32;
                $body
            }
            #[cfg(feature = "half")]
            Rows::F16($m) => {
                type $t = half::f16;
                $body
            }
            #[cfg(feature = "half")]
            Rows::Bf16($m) => {
                type $t = half::bf16;
                $body
            }
        }
    };
}

impl<'a> Rows<'a> {
    /// Rows `start..end` of a matrix with `d` columns.
    pub fn rows(self, start: usize, end: usize, d: usize) -> Rows<'a> {
        match self {
            Rows::F32(m) => Rows::F32(m.part(start, end, d)),
            #[cfg(feature = "half")]
            Rows::F16(m) => Rows::F16(m.part(start, end, d)),
            #[cfg(feature = "half")]
            Rows::Bf16(m) => Rows::Bf16(m.part(start, end, d)),
        }
    }

    /// out[r] = row_r · row_i for the rows of `self` (a part of `all`).
    pub fn dots_with_row(self, isa: Isa, all: Rows<'_>, i: usize, d: usize, out: &mut [f32]) {
        match (self, all) {
            (Rows::F32(r), Rows::F32(a)) => f32::row_dots(isa, r, d, a.row(i, d), out),
            #[cfg(feature = "half")]
            (Rows::F16(r), Rows::F16(a)) => half::f16::row_dots(isa, r, d, a.row(i, d), out),
            #[cfg(feature = "half")]
            (Rows::Bf16(r), Rows::Bf16(a)) => half::bf16::row_dots(isa, r, d, a.row(i, d), out),
            // A part always comes from the same matrix (see `exec`).
            #[cfg(feature = "half")]
            _ => out.fill(0.0),
        }
    }

    /// out[r] = row idx[r] · row j, each bit for bit the value of the
    /// pass ([`Rows::dots_with_row`]) for that row: the Gram entries of
    /// a few candidates with one row, several rows per load of row j.
    pub fn dots_indexed_row(self, isa: Isa, d: usize, j: usize, idx: &[usize], out: &mut [f32]) {
        each!(self, |m: T| T::dots_indexed_self(
            isa,
            m,
            d,
            m.row(j, d),
            idx,
            out
        ))
    }

    /// out[r] = row idx[r] · v (v: d values in f32), each bit for bit
    /// the value of the pass for that row with the vector v.
    pub fn dots_indexed(self, isa: Isa, d: usize, v: &[f32], idx: &[usize], out: &mut [f32]) {
        each!(self, |m: T| T::dots_indexed_f32(isa, m, d, v, idx, out))
    }

    /// out −= c · row i (widened to f32; each product rounded, then
    /// subtracted).
    pub fn sub_scaled_row(self, i: usize, d: usize, c: f32, out: &mut [f32]) {
        each!(self, |m: T| T::sub_scaled(&mut out[..d], c, m.row(i, d)))
    }

    /// dots[r] = row_r · q and sumsq[r] = ‖row_r‖².
    pub fn dots_and_sumsq(
        self,
        isa: Isa,
        d: usize,
        q: &[f32],
        dots: &mut [f32],
        sumsq: &mut [f32],
    ) {
        each!(self, |m: T| T::row_dots_and_sumsq(
            isa, m, d, q, dots, sumsq
        ))
    }
}

/// The storage-specific kernels behind [`Element`](super::Element).
pub trait Sealed: Sized + Copy {
    fn view(m: Mat<'_, Self>) -> Rows<'_>;
    fn row_dots(isa: Isa, rows: Mat<'_, Self>, d: usize, v: &[Self], out: &mut [f32]);
    fn dots_indexed_self(
        isa: Isa,
        rows: Mat<'_, Self>,
        d: usize,
        v: &[Self],
        idx: &[usize],
        out: &mut [f32],
    );
    fn dots_indexed_f32(
        isa: Isa,
        rows: Mat<'_, Self>,
        d: usize,
        v: &[f32],
        idx: &[usize],
        out: &mut [f32],
    );
    /// out[k] −= c · row[k] (the row widened; each product rounded, then
    /// subtracted: the same bits on every instruction set).
    fn sub_scaled(out: &mut [f32], c: f32, row: &[Self]);
    fn row_dots_and_sumsq(
        isa: Isa,
        rows: Mat<'_, Self>,
        d: usize,
        q: &[f32],
        dots: &mut [f32],
        sumsq: &mut [f32],
    );
}
