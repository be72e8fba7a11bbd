//! Typed input and capacity errors.
//!
//! Every selector validates its whole input before it computes anything and
//! reports the first problem it finds, naming the offending index or value.
//! Nothing the caller passed is modified, and no selector panics on bad input.

use core::fmt;

/// Vectors whose Euclidean norm is within this distance of 1 count as unit
/// vectors and are used exactly as given (scale factor 1.0, so unit-norm
/// inputs give bit-identical results under both normalization policies).
///
/// 1e-3 is loose enough for embeddings normalized in f16/f32 and stored with
/// rounding, and tight enough that treating such a vector as unit changes a
/// cosine by at most 1e-3.
pub const UNIT_NORM_TOLERANCE: f64 = 1e-3;

/// Smallest accepted vector norm. Below it, f32 dot products of the raw
/// vectors lose precision to underflow.
pub const MIN_NORM: f64 = 1e-12;

/// Largest accepted vector norm. Above it, f32 dot products of the raw
/// vectors may overflow.
pub const MAX_NORM: f64 = 1e12;

/// What is wrong with one vector (the query or one candidate row).
///
/// The [`source`](core::error::Error::source) of [`Error::Query`] and
/// [`Error::Candidate`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum VectorFault {
    /// Element `index` (0-based, within the vector) is NaN or ±infinity.
    NonFinite {
        /// Position of the element within the vector.
        index: usize,
        /// The offending value.
        value: f32,
    },
    /// Every element is zero: the vector has no direction.
    ZeroNorm,
    /// The Euclidean norm lies outside [`MIN_NORM`](crate::MIN_NORM),
    /// [`MAX_NORM`](crate::MAX_NORM)\]: its f32 dot products would overflow
    /// or lose all precision.
    NormOutOfRange {
        /// The norm, computed in f64.
        norm: f64,
    },
    /// Under [`Normalization::RequireUnit`](crate::Normalization::RequireUnit)
    /// the norm differs from 1 by more than
    /// [`UNIT_NORM_TOLERANCE`](UNIT_NORM_TOLERANCE).
    NotUnitNorm {
        /// The norm, computed in f64.
        norm: f64,
    },
}

/// Which fixed-capacity buffer a shape does not fit into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Capacity {
    /// The candidate pool size P.
    Pool,
    /// The effective budget `min(K, P)`.
    Budget,
}

/// One of the five caller buffers of
/// [`Workspace::from_buffers`](crate::Workspace::from_buffers), with the
/// element counts of [`ScratchSize`](crate::ScratchSize).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScratchBuffer {
    /// The f32 buffer ([`ScratchSize::f32s`](crate::ScratchSize::f32s)).
    F32s,
    /// The f64 buffer ([`ScratchSize::f64s`](crate::ScratchSize::f64s)).
    F64s,
    /// The usize buffer ([`ScratchSize::indices`](crate::ScratchSize::indices)).
    Indices,
    /// The one-byte flag buffer ([`ScratchSize::flags`](crate::ScratchSize::flags)).
    Flags,
    /// The [`Step`](crate::Step) buffer ([`ScratchSize::steps`](crate::ScratchSize::steps)).
    Steps,
}

impl ScratchBuffer {
    /// The buffer's parameter name in
    /// [`Workspace::from_buffers`](crate::Workspace::from_buffers).
    pub const fn name(self) -> &'static str {
        match self {
            ScratchBuffer::F32s => "f32s",
            ScratchBuffer::F64s => "f64s",
            ScratchBuffer::Indices => "indices",
            ScratchBuffer::Flags => "flags",
            ScratchBuffer::Steps => "steps",
        }
    }
}

/// What is wrong with one row of an int8 candidate matrix
/// ([`Int8Pool`](crate::Int8Pool)).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Int8Fault {
    /// The f32 row holds NaN or ±∞ at `index`.
    NonFinite {
        /// 0-based element index within the row.
        index: usize,
        /// The offending value.
        value: f32,
    },
    /// Code −128 at `index`: codes must be in −127..=127 (so that an i32
    /// dot product of d ≤ 133 000 codes cannot overflow); clamp it to −127.
    CodeOutOfRange {
        /// 0-based element index within the row.
        index: usize,
    },
    /// The row's scale is negative, NaN or ±∞.
    InvalidScale {
        /// The offending scale.
        value: f32,
    },
}

/// The family of an [`Error`], the same word in every binding of the crate
/// (the `kind` of the Python and JavaScript errors, the conformance suite's
/// error kind): what the caller has to change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The data: a shape, a non-finite value, a zero or out-of-range norm,
    /// the relevance vector, the costs and their total, an int8 buffer.
    Input,
    /// A parameter of the method (γ, ridge, λ_mmr, stopping, tolerance) or
    /// of the call's specification.
    Option,
    /// The scratch memory: a workspace too small for the shape, or a shape
    /// whose scratch cannot exist.
    Capacity,
}

impl ErrorKind {
    /// `"input"`, `"option"` or `"capacity"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Input => "input",
            ErrorKind::Option => "option",
            ErrorKind::Capacity => "capacity",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every error a selector can return.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The query is empty: the embedding dimension d would be 0.
    ZeroDimension,
    /// `candidates.len()` is not a multiple of `d = query.len()`: the pool is
    /// not a row-major P × d matrix.
    ShapeMismatch {
        /// `candidates.len()`.
        candidates_len: usize,
        /// `query.len()`.
        dim: usize,
    },
    /// Entry `index` of an input's ids ([`Input::with_ids`](crate::Input::with_ids))
    /// names row `id`, but the candidate matrix has only `rows` rows:
    /// every id must be below `rows`.
    RowId {
        /// 0-based position in the ids (the pool index).
        index: usize,
        /// The id given.
        id: usize,
        /// N, the rows of the candidate matrix.
        rows: usize,
    },
    /// The relevance vector's length differs from the pool size P.
    RelevanceLength {
        /// P, the number of candidate rows.
        expected: usize,
        /// `relevance.len()`.
        found: usize,
    },
    /// The query vector is unusable.
    Query(VectorFault),
    /// Candidate row `row` is unusable (and the invalid-candidate policy is
    /// [`InvalidCandidates::Reject`](crate::InvalidCandidates::Reject)).
    Candidate {
        /// 0-based row of the candidate matrix.
        row: usize,
        /// What is wrong with it.
        fault: VectorFault,
    },
    /// Relevance entry `index` is NaN or ±infinity.
    NonFiniteRelevance {
        /// 0-based pool index.
        index: usize,
        /// The offending value.
        value: f32,
    },
    /// The costs of a [`CostBudget`](crate::CostBudget) are not one per
    /// candidate.
    CostLength {
        /// P, the number of candidate rows.
        expected: usize,
        /// `costs.len()`.
        found: usize,
    },
    /// Cost entry `index` is negative, NaN or ±infinity.
    InvalidCost {
        /// 0-based pool index.
        index: usize,
        /// The offending value.
        value: f32,
    },
    /// The total of a [`CostBudget`](crate::CostBudget) is negative, NaN
    /// or ±infinity.
    InvalidCostBudget(f64),
    /// The ridge λ (κ in the relevance-scaled family) is negative or NaN.
    /// `+∞` is valid (centroid pursuit).
    InvalidRidge(f64),
    /// γ is not in (0, 1].
    InvalidGamma(f64),
    /// The MMR trade-off λ_mmr is not in [0, 1].
    InvalidMmrLambda(f64),
    /// An adaptive-stopping parameter is invalid: τ and ε must be finite
    /// and ≥ 0, patience ≥ 1.
    InvalidStopping,
    /// The pool-optimum tolerance is negative or NaN.
    InvalidOptimumTolerance(f64),
    /// An int8 buffer is shorter than the pool needs (codes: P·d; scales,
    /// errors, norms: P), or an [`Int8Pool`](crate::Int8Pool) does not
    /// match the input's P and d.
    Int8Length {
        /// The length needed.
        expected: usize,
        /// The length given.
        found: usize,
    },
    /// d exceeds the largest dimension for which int8 dot products are
    /// exact in i32 (127² · d < 2³¹): use the f32 pursuit.
    Int8DimensionTooLarge {
        /// The dimension d.
        dim: usize,
        /// The largest supported d (133 000).
        max: usize,
    },
    /// Row `row` of an int8 candidate matrix is unusable.
    Int8Row {
        /// 0-based row.
        row: usize,
        /// What is wrong with it.
        fault: Int8Fault,
    },
    /// A shape does not fit the workspace.
    CapacityExceeded {
        /// Which buffer.
        what: Capacity,
        /// The size the call needs.
        needed: usize,
        /// The size the workspace has.
        capacity: usize,
    },
    /// A buffer given to
    /// [`Workspace::from_buffers`](crate::Workspace::from_buffers) is shorter
    /// than [`ScratchSize::for_capacity`](crate::ScratchSize::for_capacity)
    /// requires for the requested capacity: give a buffer of at least
    /// `needed` elements, or ask for a smaller capacity.
    BufferTooShort {
        /// Which buffer.
        buffer: ScratchBuffer,
        /// Its length, in elements.
        len: usize,
        /// The length it must have at least, in elements.
        needed: usize,
    },
    /// The workspace holds the scratch of fewer selectors than this call
    /// needs (a [`ScratchKind`](crate::ScratchKind) below `needed`): use a
    /// workspace of kind `needed` or above
    /// ([`ScratchSize::for_method`](crate::ScratchSize::for_method), or
    /// [`FixedWorkspace`](crate::FixedWorkspace) for every selector).
    WorkspaceKind {
        /// The kind the selector needs.
        needed: crate::scratch::ScratchKind,
        /// The kind the workspace has.
        found: crate::scratch::ScratchKind,
    },
    /// The scratch memory for capacity (`max_pool`, `max_budget`) does not
    /// fit in `usize` ([`ScratchSize::for_capacity`](crate::ScratchSize::for_capacity)
    /// is `None`): no machine could hold it; ask for a smaller capacity.
    ScratchOverflow {
        /// The requested P_max.
        max_pool: usize,
        /// The requested K_max.
        max_budget: usize,
    },
}

impl Error {
    /// The family of this error ([`ErrorKind`]).
    pub const fn kind(&self) -> ErrorKind {
        match self {
            Error::ZeroDimension
            | Error::ShapeMismatch { .. }
            | Error::RowId { .. }
            | Error::RelevanceLength { .. }
            | Error::Query(_)
            | Error::Candidate { .. }
            | Error::NonFiniteRelevance { .. }
            | Error::CostLength { .. }
            | Error::InvalidCost { .. }
            | Error::InvalidCostBudget(_)
            | Error::Int8Length { .. }
            | Error::Int8DimensionTooLarge { .. }
            | Error::Int8Row { .. } => ErrorKind::Input,
            Error::InvalidRidge(_)
            | Error::InvalidGamma(_)
            | Error::InvalidMmrLambda(_)
            | Error::InvalidStopping
            | Error::InvalidOptimumTolerance(_) => ErrorKind::Option,
            Error::CapacityExceeded { .. }
            | Error::BufferTooShort { .. }
            | Error::WorkspaceKind { .. }
            | Error::ScratchOverflow { .. } => ErrorKind::Capacity,
        }
    }
}

impl fmt::Display for VectorFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            VectorFault::NonFinite { index, value } => {
                write!(f, "element {index} is not finite ({value})")
            }
            VectorFault::ZeroNorm => f.write_str("all elements are zero"),
            VectorFault::NormOutOfRange { norm } => write!(
                f,
                "norm {norm:e} is outside [{:e}, {:e}]",
                MIN_NORM, MAX_NORM
            ),
            VectorFault::NotUnitNorm { norm } => write!(
                f,
                "norm {norm} differs from 1 by more than {}",
                UNIT_NORM_TOLERANCE
            ),
        }
    }
}

impl fmt::Display for Int8Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Int8Fault::NonFinite { index, value } => {
                write!(f, "element {index} is not finite ({value})")
            }
            Int8Fault::CodeOutOfRange { index } => write!(
                f,
                "code {index} is -128; codes must be in -127..=127 (clamp it to -127)"
            ),
            Int8Fault::InvalidScale { value } => {
                write!(f, "scale {value} must be finite and >= 0")
            }
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::ZeroDimension => f.write_str("the query is empty (dimension d = 0)"),
            Error::ShapeMismatch {
                candidates_len,
                dim,
            } => write!(
                f,
                "candidates have {candidates_len} values, not a multiple of the query dimension {dim}"
            ),
            Error::RowId { index, id, rows } => write!(
                f,
                "id {index} names row {id}, but the candidate matrix has {rows} rows \
                 (ids must be below {rows})"
            ),
            Error::RelevanceLength { expected, found } => write!(
                f,
                "relevance has {found} entries but the pool has {expected} candidates"
            ),
            Error::Query(fault) => write!(f, "query: {fault}"),
            Error::Candidate { row, fault } => write!(f, "candidate {row}: {fault}"),
            Error::NonFiniteRelevance { index, value } => {
                write!(f, "relevance {index} is not finite ({value})")
            }
            Error::CostLength { expected, found } => write!(
                f,
                "costs have {found} entries but the pool has {expected} candidates"
            ),
            Error::InvalidCost { index, value } => {
                write!(f, "cost {index} is {value}; costs must be finite and >= 0")
            }
            Error::InvalidCostBudget(v) => {
                write!(f, "cost budget {v} must be finite and >= 0")
            }
            Error::InvalidRidge(v) => write!(f, "ridge {v} must be >= 0 (+inf allowed)"),
            Error::InvalidGamma(v) => write!(f, "gamma {v} must be in (0, 1]"),
            Error::InvalidMmrLambda(v) => write!(f, "MMR lambda {v} must be in [0, 1]"),
            Error::InvalidStopping => f.write_str(
                "adaptive stopping needs finite tau >= 0, finite eps >= 0 and patience >= 1",
            ),
            Error::InvalidOptimumTolerance(v) => {
                write!(f, "pool-optimum tolerance {v} must be finite and >= 0")
            }
            Error::Int8Length { expected, found } => write!(
                f,
                "int8 buffer has {found} entries but the pool needs {expected}"
            ),
            Error::Int8DimensionTooLarge { dim, max } => write!(
                f,
                "dimension {dim} exceeds {max}, the largest d with exact int8 dot products; use the f32 pursuit"
            ),
            Error::Int8Row { row, fault } => write!(f, "int8 candidate {row}: {fault}"),
            Error::CapacityExceeded {
                what,
                needed,
                capacity,
            } => {
                let name = match what {
                    Capacity::Pool => "pool size P",
                    Capacity::Budget => "budget min(K, P)",
                };
                write!(f, "{name} = {needed} exceeds the workspace capacity {capacity}")
            }
            Error::BufferTooShort {
                buffer,
                len,
                needed,
            } => write!(
                f,
                "workspace buffer too short: `{}` has {len} elements, needs at least {needed}",
                buffer.name()
            ),
            Error::WorkspaceKind { needed, found } => write!(
                f,
                "this selector needs a workspace of kind `{}`, the workspace has kind `{}`; size it with ScratchSize::for_method or use a larger fixed workspace",
                needed.name(),
                found.name()
            ),
            Error::ScratchOverflow {
                max_pool,
                max_budget,
            } => write!(
                f,
                "the scratch memory for P_max = {max_pool}, K_max = {max_budget} overflows usize"
            ),
        }
    }
}

impl core::error::Error for VectorFault {}

impl core::error::Error for Error {
    /// The [`VectorFault`] of [`Error::Query`] and [`Error::Candidate`];
    /// `None` for every other error.
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Error::Query(fault) | Error::Candidate { fault, .. } => Some(fault),
            _ => None,
        }
    }
}
