//! A Cholesky factor L (A = L Lᵀ) of a small symmetric positive definite
//! matrix, updated in place as the active set changes: append a row/column
//! in O(n²), delete one with Givens rotations in O(n²) (no subtractive
//! downdate), solve in O(n²). Stored row-major, lower triangle, with a fixed
//! row stride, inside caller scratch, and with the **diagonal stored
//! inverted** (1/L_ii): every substitution then multiplies instead of
//! dividing, which shortens the dependency chain of the solves (a division
//! is ~4× the latency of a multiplication), and the only divisions left are
//! one per appended row and those of a (rare) delete.

/// A new pivot is accepted only if pivot² > `PIVOT_TOLERANCE` · A_jj.
///
/// The factored matrix is G_FF + κI + 11ᵀ (see [near-dependent
/// memories](crate#near-dependent-memories) in the crate docs) with
/// diagonal ≈ 2, so this rejects a column whose augmented vector lies within
/// about √(2e-9) ≈ 4.5e-5 of the span of the free set's: numerically, the
/// memory is already represented. It keeps the condition number of L Lᵀ
/// below about 1e9, so the f64 solves stay accurate to ~1e-7 relative.
pub const PIVOT_TOLERANCE: f64 = 1e-9;

/// Whether `p2` is a safely positive pivot² for a column with diagonal
/// `diag`: p2 > [`PIVOT_TOLERANCE`] · |diag| (false for NaN).
pub(crate) fn accepts_pivot(p2: f64, diag: f64) -> bool {
    p2 > PIVOT_TOLERANCE * diag.abs()
}

pub(crate) struct Factor<'a> {
    pub l: &'a mut [f64],
    pub stride: usize,
    pub n: usize,
}

/// Σ_j a_j b_j in two interleaved chains (even and odd j), added at the end:
/// half the latency of one chain for the short dot products of the solves.
#[inline(always)]
fn dot2(a: &[f64], b: &[f64]) -> f64 {
    let (mut s0, mut s1) = (0.0, 0.0);
    let mut pa = a.chunks_exact(2);
    let mut pb = b.chunks_exact(2);
    for (x, y) in (&mut pa).zip(&mut pb) {
        s0 += x[0] * y[0];
        s1 += x[1] * y[1];
    }
    if let (Some(x), Some(y)) = (pa.remainder().first(), pb.remainder().first()) {
        s0 += x * y;
    }
    s0 + s1
}

impl Factor<'_> {
    /// Appends row/column n with off-diagonal entries `col(i)` = A[i, n] for
    /// i < n and diagonal `diag` = A[n, n]. Returns false (factor unchanged)
    /// if the pivot is not safely positive.
    pub fn append(&mut self, col: impl Fn(usize) -> f64, diag: f64) -> bool {
        let p2 = self.pivot_sq(col, diag);
        self.append_pivot(p2, diag)
    }

    /// The second half of [`append`](Self::append): appends the row that
    /// [`pivot_sq`](Self::pivot_sq) wrote, with its pivot² `p2`, when the
    /// factor has not changed since. Returns false (factor unchanged) if the
    /// pivot is not safely positive.
    pub fn append_pivot(&mut self, p2: f64, diag: f64) -> bool {
        if !accepts_pivot(p2, diag) {
            return false;
        }
        let n = self.n;
        self.l[n * self.stride + n] = 1.0 / libm::sqrt(p2);
        self.n += 1;
        true
    }

    /// The pivot² that [`append`](Self::append) would get for the same
    /// column: A[n, n] − ‖L⁻¹ A[..n, n]‖². Writes row n of L (scratch until
    /// an append) and leaves the factor unchanged.
    pub fn pivot_sq(&mut self, col: impl Fn(usize) -> f64, diag: f64) -> f64 {
        let n = self.n;
        let s = self.stride;
        let row = n * s;
        let mut p2 = diag;
        for i in 0..n {
            let (done, rest) = self.l.split_at_mut(row);
            let li = &done[i * s..i * s + i + 1];
            let v = (col(i) - dot2(&li[..i], &rest[..i])) * li[i];
            rest[i] = v;
            p2 -= v * v;
        }
        p2
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
        // The rotations work on the true diagonal of rows k..n-2.
        for i in k..n - 1 {
            self.l[i * s + i + 1] = 1.0 / self.l[i * s + i + 1];
        }
        // Rows k..n-2 now have one entry right of the diagonal.
        for i in k..n - 1 {
            let a = self.l[i * s + i];
            let b = self.l[i * s + i + 1];
            let r = libm::hypot(a, b);
            let (c, sn) = (a / r, b / r);
            for row in i..n - 1 {
                let x = self.l[row * s + i];
                let y = self.l[row * s + i + 1];
                self.l[row * s + i] = c * x + sn * y;
                self.l[row * s + i + 1] = -sn * x + c * y;
            }
            self.l[i * s + i] = r;
            self.l[i * s + i + 1] = 0.0;
        }
        for i in k..n - 1 {
            self.l[i * s + i] = 1.0 / self.l[i * s + i];
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
        let row = &self.l[(n - 1) * s..(n - 1) * s + n];
        w[n - 1] = (c_last - dot2(&row[..n - 1], &w[..n - 1])) * row[n - 1];
    }

    /// Solves L w = c in place (first n entries).
    pub fn forward(&self, w: &mut [f64]) {
        let s = self.stride;
        for i in 0..self.n {
            let row = &self.l[i * s..i * s + i + 1];
            w[i] = (w[i] - dot2(&row[..i], &w[..i])) * row[i];
        }
    }

    /// Solves Lᵀ x = w in place (first n entries), by columns of Lᵀ (rows of
    /// L, contiguous): once x_i is known, x_i · L[i, ..i] is subtracted from
    /// the entries above, so each entry waits for one multiplication and one
    /// subtraction, not for a whole dot product.
    pub fn backward(&self, x: &mut [f64]) {
        let s = self.stride;
        for i in (0..self.n).rev() {
            let row = &self.l[i * s..i * s + i + 1];
            let xi = x[i] * row[i];
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A = M Mᵀ + I for a fixed 6 × 6 M: symmetric positive definite.
    fn matrix() -> [[f64; 6]; 6] {
        let m = |i: usize, j: usize| ((i * 7 + j * 3) % 5) as f64 - 2.0 + (i == j) as u8 as f64;
        core::array::from_fn(|i| {
            core::array::from_fn(|j| {
                (0..6).map(|k| m(i, k) * m(j, k)).sum::<f64>() + (i == j) as u8 as f64
            })
        })
    }

    /// Solves with the factor of A restricted to `idx` and checks A x = b.
    fn check_solve(f: &Factor<'_>, a: &[[f64; 6]; 6], idx: &[usize]) {
        let n = idx.len();
        let b: [f64; 6] = core::array::from_fn(|i| 1.0 + i as f64);
        let mut x = b;
        f.solve(&mut x[..n]);
        for (r, &i) in idx.iter().enumerate() {
            let ax: f64 = idx.iter().enumerate().map(|(c, &j)| a[i][j] * x[c]).sum();
            assert!((ax - b[r]).abs() < 1e-10, "row {r}: {ax} vs {}", b[r]);
        }
    }

    #[test]
    fn append_remove_and_solve_match_the_dense_matrix() {
        let a = matrix();
        let mut buf = [0.0f64; 36];
        let mut f = Factor {
            l: &mut buf,
            stride: 6,
            n: 0,
        };
        let mut idx = [0usize; 6];
        for j in 0..6 {
            let cols = idx;
            assert!(f.append(|r| a[cols[r]][j], a[j][j]));
            idx[j] = j;
            check_solve(&f, &a, &idx[..=j]);
        }
        // Delete positions 2 and then 0: the factor of A at {0, 1, 3, 4, 5}
        // and then at {1, 3, 4, 5}.
        f.remove(2);
        check_solve(&f, &a, &[0, 1, 3, 4, 5]);
        f.remove(0);
        check_solve(&f, &a, &[1, 3, 4, 5]);
        // Forward substitution extended by one row equals a full one.
        let cols = [1, 3, 4, 5];
        assert!(f.append(|r| a[cols[r]][2], a[2][2]));
        let c = [0.5, -1.0, 2.0, 0.25, 3.0];
        let mut full = c;
        f.forward(&mut full);
        let mut ext = c;
        f.n -= 1;
        f.forward(&mut ext[..4]);
        f.n += 1;
        f.extend_forward(&mut ext, c[4]);
        assert_eq!(full, ext);
    }

    #[test]
    fn a_dependent_column_is_rejected() {
        // Columns 0 and 1 of A = v vᵀ + small: the second is dependent.
        let a = [[1.0, 1.0], [1.0, 1.0 + 1e-12]];
        let mut buf = [0.0f64; 4];
        let mut f = Factor {
            l: &mut buf,
            stride: 2,
            n: 0,
        };
        assert!(f.append(|_| 0.0, a[0][0]));
        assert!(!f.append(|_| a[0][1], a[1][1]));
        assert_eq!(f.n, 1);
    }
}
