//! Reading `.npy` matrices of f32 (NumPy format, C order) with `npyz`.

use std::path::Path;

/// A row-major f32 matrix read from a `.npy` file.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    /// Row-major values, `rows × cols`.
    pub data: Vec<f32>,
    /// Number of rows (1 for a 1-D array).
    pub rows: usize,
    /// Number of columns (the length of a 1-D array).
    pub cols: usize,
}

impl Matrix {
    /// Row `i` as a slice.
    ///
    /// # Panics
    /// If `i >= rows`.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }
}

/// Errors reading a `.npy` file.
#[derive(Debug)]
pub enum NpyError {
    /// The file could not be opened or read, or is not valid `.npy`.
    Io(std::io::Error),
    /// The array is not f32 / not 1-D or 2-D / not C order.
    Unsupported(String),
}

impl std::fmt::Display for NpyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NpyError::Io(e) => write!(f, "{e}"),
            NpyError::Unsupported(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for NpyError {}

impl From<std::io::Error> for NpyError {
    fn from(e: std::io::Error) -> Self {
        NpyError::Io(e)
    }
}

/// Reads a 1-D (length d → 1 × d) or 2-D (rows × cols) f32 array, C order.
///
/// # Errors
/// [`NpyError`] for I/O failures, another dtype, rank or Fortran order.
pub fn read_f32(path: impl AsRef<Path>) -> Result<Matrix, NpyError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path)?;
    let npy = npyz::NpyFile::new(&bytes[..])?;
    let shape = npy.shape().to_vec();
    if npy.order() != npyz::Order::C {
        return Err(NpyError::Unsupported(format!(
            "{}: Fortran order is not supported",
            path.display()
        )));
    }
    let (rows, cols) = match shape.as_slice() {
        [n] => (1, *n as usize),
        [r, c] => (*r as usize, *c as usize),
        s => {
            return Err(NpyError::Unsupported(format!(
                "{}: expected a 1-D or 2-D array, got shape {s:?}",
                path.display()
            )))
        }
    };
    let data: Vec<f32> = npy.into_vec::<f32>().map_err(|e| {
        NpyError::Unsupported(format!("{}: not a float32 array ({e})", path.display()))
    })?;
    Ok(Matrix { data, rows, cols })
}
