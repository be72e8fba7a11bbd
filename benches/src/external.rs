//! External reference passes: the K + 1 matrix–vector products of a
//! budget-K query computed by well-kept libraries instead of our kernels,
//! over the same row-major P × d matrix and with the same vectors as
//! [`roofline`](crate::roofline) (rows 0..=K mod P of the matrix itself).
//!
//! Each is behind a non-default cargo feature of this crate, so a machine
//! without the libraries still builds and tests the workspace:
//! * `openblas`: `cblas_sgemv` (row-major, no transpose: OpenBLAS runs its
//!   `sgemv_t` kernel) from the system OpenBLAS, through the `cblas-sys`
//!   bindings; needs the shared library and its link name `openblas`
//!   (Debian / Ubuntu: `apt-get install libopenblas-dev`). OpenBLAS is set
//!   to one thread.
//! * `faer`: faer's matrix × column product (`faer::linalg::matmul::matmul`,
//!   sequential), pure Rust.

/// K + 1 passes: `passes(candidates, dim, budget, out)` with `out.len()` = P
/// returns the sum of the picked outputs (so the work cannot be elided).
pub type Passes = fn(&[f32], usize, usize, &mut [f32]) -> f32;

/// The external passes this build has, by name (empty without the
/// features).
pub fn available() -> Vec<(&'static str, Passes)> {
    [
        #[cfg(feature = "openblas")]
        ("openblas", openblas::passes as Passes),
        #[cfg(feature = "faer")]
        ("faer", faer::passes as Passes),
    ]
    .into_iter()
    .collect()
}

#[cfg(feature = "openblas")]
#[allow(unsafe_code)] // the FFI call into OpenBLAS (SAFETY comments below)
pub mod openblas {
    //! OpenBLAS's SGEMV (see the module docs).

    use std::sync::Once;

    unsafe extern "C" {
        /// OpenBLAS's thread-count setter (part of its C API).
        fn openblas_set_num_threads(n: std::ffi::c_int);
    }

    fn single_thread() {
        static ONCE: Once = Once::new();
        // SAFETY: a plain setter of OpenBLAS's global thread count, called
        // once, before any other OpenBLAS call of this process.
        ONCE.call_once(|| unsafe { openblas_set_num_threads(1) });
    }

    /// out = A · v for the row-major P × d matrix `a` (P = `out.len()`).
    ///
    /// # Panics
    /// If `a.len() != P · d`, `v.len() != d` or P or d exceed `i32::MAX`.
    pub fn sgemv(a: &[f32], d: usize, v: &[f32], out: &mut [f32]) {
        let p = out.len();
        assert!(a.len() == p * d && v.len() == d, "sgemv shape");
        let (pi, di) = (i32::try_from(p).unwrap(), i32::try_from(d).unwrap());
        single_thread();
        // SAFETY: `a` holds P rows of d values (lda = d ≥ 1 when P > 0), `v`
        // d values and `out` P values (checked above); OpenBLAS reads a
        // and v and writes only out.
        unsafe {
            cblas_sys::cblas_sgemv(
                cblas_sys::CBLAS_LAYOUT::CblasRowMajor,
                cblas_sys::CBLAS_TRANSPOSE::CblasNoTrans,
                pi,
                di,
                1.0,
                a.as_ptr(),
                di.max(1),
                v.as_ptr(),
                1,
                0.0,
                out.as_mut_ptr(),
                1,
            )
        }
    }

    /// K + 1 SGEMV passes (see [`Passes`](super::Passes)).
    pub fn passes(candidates: &[f32], dim: usize, budget: usize, out: &mut [f32]) -> f32 {
        let p = out.len();
        if p == 0 {
            return 0.0;
        }
        let mut sink = 0.0;
        for j in 0..=budget {
            let r = j % p;
            sgemv(candidates, dim, &candidates[r * dim..(r + 1) * dim], out);
            sink += out[r];
        }
        sink
    }
}

#[cfg(feature = "faer")]
pub mod faer {
    //! faer's matrix–vector product (see the module docs).

    use faer::{Accum, ColMut, ColRef, MatRef, Par};

    /// out = A · v for the row-major P × d matrix `a` (P = `out.len()`),
    /// sequential.
    ///
    /// # Panics
    /// If `a.len() != P · d` or `v.len() != d`.
    pub fn matvec(a: &[f32], d: usize, v: &[f32], out: &mut [f32]) {
        let p = out.len();
        assert!(a.len() == p * d && v.len() == d, "matvec shape");
        let a = MatRef::from_row_major_slice(a, p, d);
        let v = ColRef::from_slice(v);
        let o = ColMut::from_slice_mut(out);
        faer::linalg::matmul::matmul(
            o.as_mat_mut(),
            Accum::Replace,
            a,
            v.as_mat(),
            1.0f32,
            Par::Seq,
        );
    }

    /// K + 1 faer passes (see [`Passes`](super::Passes)).
    pub fn passes(candidates: &[f32], dim: usize, budget: usize, out: &mut [f32]) -> f32 {
        let p = out.len();
        if p == 0 {
            return 0.0;
        }
        let mut sink = 0.0;
        for j in 0..=budget {
            let r = j % p;
            matvec(candidates, dim, &candidates[r * dim..(r + 1) * dim], out);
            sink += out[r];
        }
        sink
    }
}
