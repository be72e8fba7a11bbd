//! Reading `.npy` matrices of f32 (NumPy format, C order) with `npyz`.
//!
//! `.npy` files are untrusted input: every check that bounds memory or an
//! index runs before anything is allocated or indexed, and every refusal is
//! an [`NpyError`] that says what is wrong and what to do. Accepted: NumPy
//! format versions 1.0, 2.0 and 3.0, dtype float32 (`<f4`, or `>f4`
//! converted), C order, a header of at most [`MAX_HEADER_LEN`] bytes, and
//! exactly `rows × cols × 4` data bytes after it. [`parse_f32`] /
//! [`read_f32`] accept a 1-D array (read as 1 × n, e.g. a query vector) or a
//! 2-D one; [`parse_f32_matrix`] / [`read_f32_matrix`] require 2-D (a
//! candidate or embedding matrix, where shape (d,) would be ambiguous).
//!
//! ```
//! use mempursuit::npy::{parse_f32, parse_f32_matrix, NpyError};
//! // A 1 × 2 float32 array as written by numpy.save (version 1.0 header).
//! let mut file = b"\x93NUMPY\x01\x00".to_vec();
//! let mut header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }".to_vec();
//! while !(10 + header.len() + 1).is_multiple_of(64) {
//!     header.push(b' ');
//! }
//! header.push(b'\n');
//! file.extend_from_slice(&(header.len() as u16).to_le_bytes());
//! file.extend_from_slice(&header);
//! file.extend_from_slice(&[0, 0, 128, 63, 0, 0, 0, 64]); // 1.0, 2.0
//! let m = parse_f32_matrix(&file)?;
//! assert_eq!((m.rows, m.cols, m.data.clone()), (1, 2, vec![1.0, 2.0]));
//! // One value short: refused before anything is read.
//! let e = parse_f32(&file[..file.len() - 4]).unwrap_err();
//! assert!(e.to_string().contains("header says 2 values, file holds 1"), "{e}");
//! assert!(matches!(parse_f32(b"P1\n"), Err(NpyError::NotNpy)));
//! # Ok::<(), NpyError>(())
//! ```

use std::fmt;
use std::path::Path;

/// The longest header accepted, in bytes: NumPy's own default limit
/// (`max_header_size` of `numpy.load`). The header of a float32 array of any
/// shape NumPy can save is about 128 bytes; a longer one is a corrupt file,
/// and refusing it bounds what is allocated for it.
pub const MAX_HEADER_LEN: usize = 10_000;

/// The most non-whitespace bytes accepted in a header (NumPy pads the
/// header with spaces; its content for a float32 array is about 60 bytes,
/// and 512 leave room for a shape of any rank). The header parser
/// (`py_literal`) spent up to about 0.3 ms per byte of content on hostile
/// input in the fuzz build, so this bounds its time, not only its memory.
const MAX_HEADER_CONTENT: usize = 512;

/// The deepest bracket nesting accepted in a header. NumPy writes 2 for an
/// array of plain dtype (the dict and the shape tuple). The bound matters:
/// the header parser (`py_literal`, a backtracking PEG parser) takes time
/// exponential in the depth of unbalanced brackets (a 150-byte header with
/// 11 open braces took 17 s; fuzz finding 7).
const MAX_HEADER_NESTING: usize = 3;

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

/// Why a `.npy` file was refused. The messages ([`fmt::Display`]) say what
/// is wrong and what to do; they do not name the file (the caller knows it:
/// [`read_f32`] callers prefix the path).
#[derive(Debug)]
#[non_exhaustive]
pub enum NpyError {
    /// The file could not be read.
    Io(std::io::Error),
    /// The bytes do not start with the NumPy magic string `\x93NUMPY`.
    NotNpy,
    /// The preamble or header is malformed or truncated, or the header is
    /// longer than [`MAX_HEADER_LEN`].
    Header(String),
    /// The dtype is not float32 (the dtype as written, e.g. `<f8`).
    Dtype(String),
    /// The array is stored in Fortran (column-major) order.
    FortranOrder,
    /// The rank is not the one required (the shape as written).
    Rank {
        /// The shape in the header.
        shape: Vec<u64>,
        /// Whether a 1-D array would have been accepted.
        vector_ok: bool,
    },
    /// The number of elements (or of bytes) of the shape overflows `usize`
    /// (the header's dimensions, as far as they were read; a dimension
    /// beyond u64 is shown as `u64::MAX`).
    ShapeOverflow(Vec<u64>),
    /// The data after the header is not exactly `values × 4` bytes.
    DataLength {
        /// Values the header's shape promises.
        expected: usize,
        /// Bytes of data the file holds after the header.
        bytes: usize,
    },
}

/// `(a, b)` like NumPy prints a shape (`(d,)` for one dimension).
fn shape_text(shape: &[u64]) -> String {
    match shape {
        [n] => format!("({n},)"),
        s => {
            let parts: Vec<String> = s.iter().map(u64::to_string).collect();
            format!("({})", parts.join(", "))
        }
    }
}

impl fmt::Display for NpyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NpyError::Io(e) => write!(f, "{e}"),
            NpyError::NotNpy => f.write_str(
                "not an .npy file (it does not start with the NumPy magic string \\x93NUMPY); \
                 save the array with np.save",
            ),
            NpyError::Header(m) => write!(f, "malformed .npy header: {m}"),
            NpyError::Dtype(t) => write!(
                f,
                "dtype {t} is not float32: convert with astype(float32) before saving \
                 (np.save(path, x.astype(np.float32)))"
            ),
            NpyError::FortranOrder => f.write_str(
                "the array is in Fortran (column-major) order: save a C-order copy \
                 (np.save(path, np.ascontiguousarray(x)))",
            ),
            NpyError::Rank {
                shape,
                vector_ok: true,
            } => write!(
                f,
                "expected a 1-D or 2-D array, got shape {}",
                shape_text(shape)
            ),
            NpyError::Rank {
                shape,
                vector_ok: false,
            } => {
                write!(
                    f,
                    "expected a 2-D array (rows, d), got shape {}",
                    shape_text(shape)
                )?;
                if shape.len() == 1 {
                    f.write_str(
                        " (ambiguous: one row of d values or d rows of one value); \
                         save x.reshape(1, -1) for one row or x.reshape(-1, 1) for one column",
                    )?;
                }
                Ok(())
            }
            NpyError::ShapeOverflow(shape) => write!(
                f,
                "shape {} has more elements than this machine can address (the file is corrupt)",
                shape_text(shape)
            ),
            NpyError::DataLength { expected, bytes } => {
                let kind = if *bytes < expected.saturating_mul(4) {
                    "truncated file"
                } else {
                    "trailing data"
                };
                write!(
                    f,
                    "{kind}: header says {expected} values, file holds {}",
                    bytes / 4
                )?;
                if bytes % 4 != 0 {
                    write!(f, " and {} stray bytes", bytes % 4)?;
                }
                f.write_str(" (re-save the array with np.save)")
            }
        }
    }
}

impl std::error::Error for NpyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NpyError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for NpyError {
    fn from(e: std::io::Error) -> Self {
        NpyError::Io(e)
    }
}

/// Checks the preamble (magic, version, header length) and returns where the
/// data starts. Nothing is allocated.
fn data_offset(bytes: &[u8]) -> Result<usize, NpyError> {
    if bytes.len() < 8 || &bytes[..6] != b"\x93NUMPY" {
        return Err(NpyError::NotNpy);
    }
    let (major, minor) = (bytes[6], bytes[7]);
    let (start, header_len) = match (major, minor) {
        (1, 0) => match bytes.get(8..10) {
            Some(b) => (10, usize::from(u16::from_le_bytes([b[0], b[1]]))),
            None => return Err(NpyError::Header("truncated preamble".into())),
        },
        (2, 0) | (3, 0) => match bytes.get(8..12) {
            Some(b) => (
                12,
                // u32 → usize: lossless on the 32- and 64-bit targets std
                // supports; saturate elsewhere (refused below).
                usize::try_from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])).unwrap_or(usize::MAX),
            ),
            None => return Err(NpyError::Header("truncated preamble".into())),
        },
        _ => {
            return Err(NpyError::Header(format!(
                "format version {major}.{minor} is not 1.0, 2.0 or 3.0"
            )))
        }
    };
    if header_len > MAX_HEADER_LEN {
        return Err(NpyError::Header(format!(
            "the preamble gives a header of {header_len} bytes, more than the \
             {MAX_HEADER_LEN} NumPy accepts (the file is corrupt)"
        )));
    }
    let available = bytes.len() - start;
    if header_len > available {
        return Err(NpyError::Header(format!(
            "truncated: the preamble gives a header of {header_len} bytes, the file holds \
             {available} after the preamble"
        )));
    }
    let header = &bytes[start..start + header_len];
    let content = header.iter().filter(|c| !c.is_ascii_whitespace()).count();
    if content > MAX_HEADER_CONTENT {
        return Err(NpyError::Header(format!(
            "the header holds {content} bytes besides spaces, more than the \
             {MAX_HEADER_CONTENT} any array of plain dtype needs (the file is corrupt)"
        )));
    }
    check_header_text(header)?;
    Ok(start + header_len)
}

/// Refuses header text that could make the header parser overflow an
/// integer, its stack or its time: brackets (counted everywhere, also in
/// strings, where a float32 header has none) that do not pair up or nest
/// deeper than [`MAX_HEADER_NESTING`], a number NumPy does not write
/// (anything but decimal digits), or decimal numbers whose product
/// overflows u64 (then the shape's element count would, whatever the
/// numbers mean; a valid header's numbers are the shape and its product is
/// bounded by the file size).
fn check_header_text(text: &[u8]) -> Result<(), NpyError> {
    let mut open = [0u8; MAX_HEADER_NESTING];
    let mut depth = 0usize;
    for &c in text {
        match c {
            b'(' | b'[' | b'{' => {
                if depth == MAX_HEADER_NESTING {
                    return Err(NpyError::Header(format!(
                        "brackets nested deeper than {MAX_HEADER_NESTING}"
                    )));
                }
                open[depth] = c;
                depth += 1;
            }
            b')' | b']' | b'}' => {
                let opener = match c {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                if depth == 0 || open[depth - 1] != opener {
                    return Err(NpyError::Header(format!(
                        "unbalanced bracket {:?}",
                        char::from(c)
                    )));
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    if depth > 0 {
        return Err(NpyError::Header(format!(
            "unclosed bracket {:?}",
            char::from(open[depth - 1])
        )));
    }
    let mut product: u64 = 1;
    let mut numbers = Vec::new();
    for token in text
        .split(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
        .filter(|t| t.first().is_some_and(u8::is_ascii_digit))
    {
        if !token.iter().all(u8::is_ascii_digit) {
            return Err(NpyError::Header(format!(
                "number {:?} is not a plain decimal integer",
                String::from_utf8_lossy(token)
            )));
        }
        let value = std::str::from_utf8(token)
            .ok()
            .and_then(|s| s.parse::<u64>().ok());
        // A number beyond u64 overflows by itself.
        numbers.push(value.unwrap_or(u64::MAX));
        let Some(value) = value else {
            return Err(NpyError::ShapeOverflow(numbers));
        };
        if value != 0 {
            product = match product.checked_mul(value) {
                Some(p) => p,
                None => return Err(NpyError::ShapeOverflow(numbers)),
            };
        }
    }
    Ok(())
}

/// Parses `.npy` bytes holding a 1-D (read as 1 × n) or 2-D float32 array
/// in C order.
///
/// # Errors
/// [`NpyError::NotNpy`] without the NumPy magic, [`NpyError::Header`] for a
/// malformed, truncated or oversized header, [`NpyError::Dtype`] for another
/// dtype, [`NpyError::FortranOrder`], [`NpyError::Rank`] for 0-D or 3-D and
/// more, [`NpyError::ShapeOverflow`], and [`NpyError::DataLength`] when the
/// data after the header is not exactly the shape's values.
pub fn parse_f32(bytes: &[u8]) -> Result<Matrix, NpyError> {
    parse(bytes, true)
}

/// Parses `.npy` bytes holding a 2-D float32 array in C order (a matrix of
/// rows × d; a 1-D array is refused, as one row of d values and d rows of
/// one value would be indistinguishable).
///
/// # Errors
/// As [`parse_f32`], and [`NpyError::Rank`] for a 1-D array.
pub fn parse_f32_matrix(bytes: &[u8]) -> Result<Matrix, NpyError> {
    parse(bytes, false)
}

fn parse(bytes: &[u8], vector_ok: bool) -> Result<Matrix, NpyError> {
    let data_start = data_offset(bytes)?;
    let npy = npyz::NpyFile::new(bytes).map_err(|e| NpyError::Header(e.to_string()))?;
    let dtype_text = match npy.dtype() {
        npyz::DType::Plain(t) => {
            let float = t.type_char() == npyz::TypeChar::Float;
            let ordered = !matches!(t.endianness(), npyz::Endianness::Irrelevant);
            if float && t.size_field() == 4 && ordered {
                None
            } else {
                Some(t.to_string())
            }
        }
        _ => Some("(a structured or array dtype)".to_string()),
    };
    if let Some(t) = dtype_text {
        return Err(NpyError::Dtype(t));
    }
    if npy.order() != npyz::Order::C {
        return Err(NpyError::FortranOrder);
    }
    let shape = npy.shape().to_vec();
    let dims: Option<Vec<usize>> = shape.iter().map(|&n| usize::try_from(n).ok()).collect();
    let Some(dims) = dims else {
        return Err(NpyError::ShapeOverflow(shape));
    };
    let (rows, cols) = match (dims.as_slice(), vector_ok) {
        ([n], true) => (1, *n),
        ([r, c], _) => (*r, *c),
        _ => return Err(NpyError::Rank { shape, vector_ok }),
    };
    let Some(expected) = rows
        .checked_mul(cols)
        .filter(|n| n.checked_mul(4).is_some())
    else {
        return Err(NpyError::ShapeOverflow(shape));
    };
    let bytes_held = bytes.len() - data_start;
    if bytes_held != expected * 4 {
        return Err(NpyError::DataLength {
            expected,
            bytes: bytes_held,
        });
    }
    // The data is exactly `expected` values: npyz decodes them (and swaps
    // the bytes of `>f4`), allocating `expected` f32, no more than the file.
    let data: Vec<f32> = npy
        .into_vec::<f32>()
        .map_err(|e| NpyError::Header(e.to_string()))?;
    Ok(Matrix { data, rows, cols })
}

/// Reads a 1-D (length n → 1 × n) or 2-D (rows × cols) float32 array in C
/// order from a file (see [`parse_f32`]).
///
/// # Errors
/// [`NpyError::Io`] if the file cannot be read, otherwise as [`parse_f32`].
/// The errors do not repeat the path.
pub fn read_f32(path: impl AsRef<Path>) -> Result<Matrix, NpyError> {
    parse_f32(&std::fs::read(path)?)
}

/// Reads a 2-D (rows × cols) float32 array in C order from a file (see
/// [`parse_f32_matrix`]).
///
/// # Errors
/// [`NpyError::Io`] if the file cannot be read, otherwise as
/// [`parse_f32_matrix`]. The errors do not repeat the path.
pub fn read_f32_matrix(path: impl AsRef<Path>) -> Result<Matrix, NpyError> {
    parse_f32_matrix(&std::fs::read(path)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `.npy` file: version 1.0 preamble, `header` padded as NumPy pads
    /// it, then `data`.
    fn npy(header: &str, data: &[u8]) -> Vec<u8> {
        let mut h = header.as_bytes().to_vec();
        while !(10 + h.len() + 1).is_multiple_of(64) {
            h.push(b' ');
        }
        h.push(b'\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&u16::try_from(h.len()).unwrap().to_le_bytes());
        out.extend_from_slice(&h);
        out.extend_from_slice(data);
        out
    }

    fn f32_header(shape: &str) -> String {
        format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}")
    }

    fn values(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn written_by_npyz(shape: &[u64], v: &[f32]) -> Vec<u8> {
        use npyz::WriterBuilder;
        let mut buf = Vec::new();
        let mut w = npyz::WriteOptions::<f32>::new()
            .default_dtype()
            .shape(shape)
            .writer(&mut buf)
            .begin_nd()
            .unwrap();
        w.extend(v.iter().copied()).unwrap();
        w.finish().unwrap();
        buf
    }

    #[test]
    fn reads_matrix_and_vector() {
        let m = parse_f32_matrix(&written_by_npyz(&[2, 3], &[1., 2., 3., 4., 5., 6.])).unwrap();
        assert_eq!((m.rows, m.cols), (2, 3));
        assert_eq!(m.row(1), &[4.0, 5.0, 6.0]);
        let v = parse_f32(&written_by_npyz(&[3], &[1., 2., 3.])).unwrap();
        assert_eq!((v.rows, v.cols, v.data), (1, 3, vec![1.0, 2.0, 3.0]));
        let e = parse_f32(&npy(&f32_header("(2, 0)"), &[])).unwrap();
        assert_eq!((e.rows, e.cols, e.data.len()), (2, 0, 0));
    }

    #[test]
    fn reads_big_endian_f32() {
        let h = "{'descr': '>f4', 'fortran_order': False, 'shape': (1, 2), }";
        let data: Vec<u8> = [1.5f32, -2.0]
            .iter()
            .flat_map(|x| x.to_be_bytes())
            .collect();
        let m = parse_f32(&npy(h, &data)).unwrap();
        assert_eq!(m.data, vec![1.5, -2.0]);
    }

    #[test]
    fn vector_is_not_a_matrix() {
        let e = parse_f32_matrix(&written_by_npyz(&[384], &[0.0; 384])).unwrap_err();
        assert!(matches!(e, NpyError::Rank { .. }));
        let msg = e.to_string();
        assert!(
            msg.starts_with("expected a 2-D array (rows, d), got shape (384,)"),
            "{msg}"
        );
        assert!(msg.contains("x.reshape(1, -1)"), "{msg}");
        let e = parse_f32(&npy(&f32_header("(1, 2, 1)"), &values(&[1.0, 2.0]))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "expected a 1-D or 2-D array, got shape (1, 2, 1)"
        );
    }

    #[test]
    fn overflowing_shape_is_refused_before_allocation() {
        // 2^32 × 2^32 wraps to 0 in u64: accepted as an empty array before.
        let e = parse_f32(&npy(&f32_header("(4294967296, 4294967296)"), &[])).unwrap_err();
        assert!(matches!(e, NpyError::ShapeOverflow(_)), "{e:?}");
        assert!(e
            .to_string()
            .contains("more elements than this machine can address"));
        // Product fits u64 but not the byte count: 2^62 values × 4 bytes.
        let e = parse_f32(&npy(&f32_header("(4611686018427387904, 1)"), &[])).unwrap_err();
        assert!(matches!(e, NpyError::ShapeOverflow(_)), "{e:?}");
        // A dimension beyond u64.
        let e = parse_f32(&npy(&f32_header("(99999999999999999999999, 1)"), &[])).unwrap_err();
        assert!(matches!(e, NpyError::ShapeOverflow(_)), "{e:?}");
        // Wrapping product 2^63 · 2 · 3 = 2^64 · 3 → 0 with a 0 dimension too.
        let e = parse_f32(&npy(&f32_header("(9223372036854775808, 2, 0)"), &[])).unwrap_err();
        assert!(matches!(e, NpyError::ShapeOverflow(_)), "{e:?}");
    }

    #[test]
    fn data_length_must_match_the_header() {
        let e = parse_f32(&npy(&f32_header("(2, 3)"), &values(&[1.0; 5]))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "truncated file: header says 6 values, file holds 5 (re-save the array with np.save)"
        );
        let mut data = values(&[1.0; 6]);
        data.extend_from_slice(&[0, 0]);
        let e = parse_f32(&npy(&f32_header("(2, 3)"), &data)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "trailing data: header says 6 values, file holds 6 and 2 stray bytes \
             (re-save the array with np.save)"
        );
        // A huge promise with no data: refused, nothing allocated.
        let e = parse_f32(&npy(&f32_header("(1000000000, 1000)"), &[])).unwrap_err();
        assert!(
            e.to_string()
                .contains("header says 1000000000000 values, file holds 0"),
            "{e}"
        );
    }

    #[test]
    fn huge_header_length_is_refused() {
        // Version 2.0 preamble announcing a 4 GiB header: 12 bytes in all.
        let file = b"\x93NUMPY\x02\x00\xff\xff\xff\xff";
        let e = parse_f32(file).unwrap_err();
        assert!(matches!(e, NpyError::Header(_)), "{e:?}");
        assert!(
            e.to_string()
                .contains("4294967295 bytes, more than the 10000"),
            "{e}"
        );
        // Within the limit but beyond the file.
        let file = b"\x93NUMPY\x01\x00\x00\x01{";
        let e = parse_f32(file).unwrap_err();
        assert!(
            e.to_string()
                .contains("header of 256 bytes, the file holds 1 after the preamble"),
            "{e}"
        );
        // Within the limit but with more content than any plain header.
        let long = format!(
            "{{'descr': '<f4', 'fortran_order': False, 'shape': ({}1,)}}",
            "1, ".repeat(300)
        );
        let e = parse_f32(&npy(&long, &[])).unwrap_err();
        assert!(
            e.to_string()
                .contains("holds 650 bytes besides spaces, more than the 512"),
            "{e}"
        );
        let e = parse_f32(b"\x93NUMPY\x01\x00\x05").unwrap_err();
        assert!(e.to_string().contains("truncated preamble"), "{e}");
        let e = parse_f32(b"\x93NUMPY\x04\x00\x00\x00").unwrap_err();
        assert!(e.to_string().contains("format version 4.0"), "{e}");
    }

    #[test]
    fn deep_nesting_and_odd_numbers_are_refused() {
        let deep = format!("{}{}", "(".repeat(200), ")".repeat(200));
        let e = parse_f32(&npy(&deep, &[])).unwrap_err();
        assert!(e.to_string().contains("nested deeper than 3"), "{e}");
        // Fuzz finding 7: unclosed braces made the header parser backtrack
        // for 17 s on a 150-byte file; refused before it runs.
        let slow = "{'descr': '>f4',{{{{{{{{{{ 'fortran_order': False, 'shape': (1,), }";
        let e = parse_f32(&npy(slow, &[0; 4])).unwrap_err();
        assert!(e.to_string().contains("nested deeper than 3"), "{e}");
        let slow = "{'descr': '>f4',{ 'fortran_order': False, 'shape': (1,), }";
        let e = parse_f32(&npy(slow, &[0; 4])).unwrap_err();
        assert_eq!(e.to_string(), "malformed .npy header: unclosed bracket '{'");
        let e = parse_f32(&npy("{'descr': '<f4', 'shape': (1,]}", &[0; 4])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "malformed .npy header: unbalanced bracket ']'"
        );
        let e = parse_f32(&npy(&f32_header("(0x10, 2)"), &[])).unwrap_err();
        assert!(
            e.to_string().contains("\"0x10\" is not a plain decimal"),
            "{e}"
        );
    }

    #[test]
    fn messages_say_what_to_do() {
        let f8 = "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }";
        let e = parse_f32(&npy(f8, &[0; 16])).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("dtype <f8 is not float32: convert with astype(float32)"),
            "{e}"
        );
        let f = "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }";
        let e = parse_f32(&npy(f, &values(&[0.0; 4]))).unwrap_err();
        assert!(e.to_string().contains("ascontiguousarray"), "{e}");
        let e = parse_f32(b"not numpy at all").unwrap_err();
        assert!(e.to_string().starts_with("not an .npy file"), "{e}");
        let e = parse_f32(b"").unwrap_err();
        assert!(matches!(e, NpyError::NotNpy));
        let e = parse_f32(&npy("{'descr': '<f4'}", &[])).unwrap_err();
        assert!(e.to_string().starts_with("malformed .npy header: "), "{e}");
        let e = read_f32("/nonexistent/file.npy").unwrap_err();
        assert!(matches!(e, NpyError::Io(_)));
    }
}
