//! A Cholesky factor L (A = L Lᵀ) of a small symmetric positive definite
//! matrix, updated in place as the active set changes: append a row/column
//! in O(n²), delete one with Givens rotations in O(n²) (no subtractive
//! downdate), solve in O(n²). Stored row-major, lower triangle, with a fixed
//! row stride, inside caller scratch.

/// A new pivot is accepted only if pivot² > `PIVOT_TOLERANCE` · A_jj.
///
/// The factored matrix is G_FF + κI + 11ᵀ (see the solver notes in the crate's README) with
/// diagonal ≈ 2, so this rejects a column whose augmented vector lies within
/// about √(2e-9) ≈ 4.5e-5 of the span of the free set's: numerically, the
/// memory is already represented. It keeps the condition number of L Lᵀ
/// below about 1e9, so the f64 solves stay accurate to ~1e-7 relative.
pub const PIVOT_TOLERANCE: f64 = 1e-9;

pub(crate) struct Factor<'a> {
    pub l: &'a mut [f64],
    pub stride: usize,
    pub n: usize,
}

impl Factor<'_> {
    #[inline(always)]
    fn at(&self, i: usize, j: usize) -> f64 {
        self.l[i * self.stride + j]
    }

    /// Appends row/column n with off-diagonal entries `col(i)` = A[i, n] for
    /// i < n and diagonal `diag` = A[n, n]. Returns false (factor unchanged)
    /// if the pivot is not safely positive.
    pub fn append(&mut self, col: impl Fn(usize) -> f64, diag: f64) -> bool {
        let n = self.n;
        let s = self.stride;
        let row = n * s;
        let mut p2 = diag;
        for i in 0..n {
            let mut v = col(i);
            for j in 0..i {
                v -= self.l[i * s + j] * self.l[row + j];
            }
            let v = v / self.l[i * s + i];
            self.l[row + i] = v;
            p2 -= v * v;
        }
        // Also rejects NaN.
        if p2.is_nan() || p2 <= PIVOT_TOLERANCE * diag.abs() {
            return false;
        }
        self.l[row + n] = libm::sqrt(p2);
        self.n += 1;
        true
    }

    /// Deletes row/column k and restores triangularity with Givens rotations.
    pub fn remove(&mut self, k: usize) {
        let n = self.n;
        let s = self.stride;
        for i in k + 1..n {
            for j in 0..=i {
                self.l[(i - 1) * s + j] = self.l[i * s + j];
            }
        }
        // Rows k..n-2 now have one entry right of the diagonal.
        for i in k..n - 1 {
            let a = self.at(i, i);
            let b = self.at(i, i + 1);
            let r = libm::hypot(a, b);
            let (c, sn) = (a / r, b / r);
            for row in i..n - 1 {
                let x = self.at(row, i);
                let y = self.at(row, i + 1);
                self.l[row * s + i] = c * x + sn * y;
                self.l[row * s + i + 1] = -sn * x + c * y;
            }
            self.l[i * s + i] = r;
            self.l[i * s + i + 1] = 0.0;
        }
        self.n = n - 1;
    }

    /// Forward substitution of the last row only: given w[..n−1] = L⁻¹ c
    /// for the first n − 1 rows, sets w[n−1] so that w[..n] = L⁻¹ c after
    /// an [`append`](Self::append) (`c_last` = c[n−1]). Same operations, in
    /// the same order, as the last row of [`forward`](Self::forward).
    pub fn extend_forward(&self, w: &mut [f64], c_last: f64) {
        let n = self.n;
        let s = self.stride;
        let row = &self.l[(n - 1) * s..(n - 1) * s + n - 1];
        let mut v = c_last;
        for (l, x) in row.iter().zip(&w[..n - 1]) {
            v -= l * x;
        }
        w[n - 1] = v / self.l[(n - 1) * s + n - 1];
    }

    /// Solves L w = c in place (first n entries).
    pub fn forward(&self, w: &mut [f64]) {
        let n = self.n;
        let s = self.stride;
        for i in 0..n {
            let mut v = w[i];
            for j in 0..i {
                v -= self.l[i * s + j] * w[j];
            }
            w[i] = v / self.l[i * s + i];
        }
    }

    /// Solves Lᵀ x = w in place (first n entries), by columns of Lᵀ (rows of
    /// L, contiguous): once x_i is known, x_i · L[i, ..i] is subtracted from
    /// the entries above, so each entry waits for one subtraction and one
    /// division, not for a whole dot product.
    pub fn backward(&self, x: &mut [f64]) {
        let n = self.n;
        let s = self.stride;
        for i in (0..n).rev() {
            let row = &self.l[i * s..i * s + i + 1];
            let xi = x[i] / row[i];
            x[i] = xi;
            for (v, l) in x[..i].iter_mut().zip(&row[..i]) {
                *v -= l * xi;
            }
        }
    }

    /// Solves L Lᵀ x = rhs in place (first n entries).
    pub fn solve(&self, x: &mut [f64]) {
        self.forward(x);
        self.backward(x);
    }
}
