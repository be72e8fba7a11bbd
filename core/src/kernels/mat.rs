//! [`Mat`]: the values of a candidate matrix, row-major, and optionally
//! the row ids through which a pool reads them in place.

/// A borrowed matrix of P rows of d stored values: rows 0..P of
/// `data` (row-major) in order, or, with `ids`, rows ids[0], ids[1], …
/// of `data` (a store's rows read in place by id). Every kernel reads
/// row i of the matrix through [`Mat::row`] / [`Mat::id`], so the two
/// forms give the same values for the same rows, bit for bit. Kernels
/// check that the matrix covers the rows they read ([`Mat::covers`]).
#[derive(Debug)]
pub struct Mat<'a, T> {
    pub data: &'a [T],
    pub ids: Option<&'a [usize]>,
}

// Copy for every T (a derive would ask T: Copy).
impl<T> Clone for Mat<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Mat<'_, T> {}

impl<'a, T> Mat<'a, T> {
    /// The rows of `data` in order.
    #[inline]
    pub fn dense(data: &'a [T]) -> Self {
        Mat { data, ids: None }
    }

    /// Row i of the matrix as a row of `data`.
    #[inline(always)]
    pub fn id(&self, i: usize) -> usize {
        match self.ids {
            Some(ids) => ids[i],
            None => i,
        }
    }

    /// Row i of the matrix (d values).
    ///
    /// # Panics
    /// If the row is not in `data`.
    #[inline(always)]
    pub fn row(&self, i: usize, d: usize) -> &'a [T] {
        let r = self.id(i);
        &self.data[r * d..(r + 1) * d]
    }

    /// Rows `start..end` of the matrix.
    pub fn part(self, start: usize, end: usize, d: usize) -> Self {
        match self.ids {
            Some(ids) => Mat {
                data: self.data,
                ids: Some(&ids[start..end]),
            },
            None => Mat::dense(&self.data[start * d..end * d]),
        }
    }

    /// Whether rows 0..p of the matrix are rows of `data` (d values
    /// each): O(1) for a dense matrix, O(p) with ids.
    pub fn covers(&self, p: usize, d: usize) -> bool {
        let n = match self.data.len().checked_div(d) {
            Some(n) => n,
            // d = 0: every row is empty, any id names one.
            None => return self.ids.is_none_or(|ids| ids.len() >= p),
        };
        match self.ids {
            None => p <= n,
            Some(ids) => ids.len() >= p && ids[..p].iter().all(|&i| i < n),
        }
    }
}
