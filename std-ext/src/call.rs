//! A selector call from a [`SelectSpec`]: the call's data ([`CallData`]:
//! the query, the candidates in the caller's element type ([`Pool`]), the
//! retriever's scores and the costs), the candidates' conversion to the
//! specification's [`Storage`], and every error such a call can end in
//! ([`CallError`], with one [`ErrorKind`] per error for the bindings).

use std::fmt;

#[cfg(feature = "half")]
use mempursuit_core::half::{bf16, f16};
use mempursuit_core::{
    Element, Error, ErrorKind, Executor, Input, Int8Passes, Method, Serial, VectorFault,
};

use crate::spec::{SelectSpec, SpecError, Storage};
use crate::{Int8Candidates, ReserveError, Selection, Selector};

/// The candidate matrix of a call (row-major P × d) in the element type the
/// caller holds it in. [`Selector::select_spec`] converts it once to the
/// specification's [`Storage`] when they differ (f16 held and f16 stored is
/// used as is).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Pool<'a> {
    /// f32 values.
    F32(&'a [f32]),
    /// IEEE half-precision values (feature `half`).
    #[cfg(feature = "half")]
    F16(&'a [f16]),
    /// bfloat16 values (feature `half`).
    #[cfg(feature = "half")]
    Bf16(&'a [bf16]),
}

impl Pool<'_> {
    /// The number of values (P · d).
    pub fn len(&self) -> usize {
        match self {
            Pool::F32(v) => v.len(),
            #[cfg(feature = "half")]
            Pool::F16(v) => v.len(),
            #[cfg(feature = "half")]
            Pool::Bf16(v) => v.len(),
        }
    }

    /// Whether the pool holds no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values as f32: borrowed when they are f32, widened (exactly)
    /// otherwise.
    fn widened(&self) -> std::borrow::Cow<'_, [f32]> {
        match *self {
            Pool::F32(v) => std::borrow::Cow::Borrowed(v),
            #[cfg(feature = "half")]
            Pool::F16(v) => v.iter().map(|x| x.to_f32()).collect(),
            #[cfg(feature = "half")]
            Pool::Bf16(v) => v.iter().map(|x| x.to_f32()).collect(),
        }
    }
}

/// The data of one call from a [`SelectSpec`]
/// ([`Selector::select_spec`]): the query (d values), the candidates
/// (row-major P × d, in the caller's element type), and optionally, one per
/// candidate, the retriever's relevance scores (how they are used is the
/// spec's: [Caller scores](crate::spec#caller-scores)) and the costs (e.g.
/// token counts, finite and ≥ 0; with the spec's `cost_budget`:
/// [Costs](crate::spec#costs)).
///
/// ```
/// use mempursuit::{CallData, Pool};
/// let (query, rows) = ([1.0f32, 0.0], [1.0f32, 0.0, 0.0, 1.0]);
/// let tokens = [12.0f32, 30.0];
/// let data = CallData::new(&query, Pool::F32(&rows)).with_costs(Some(&tokens));
/// assert_eq!(data.costs, Some(&tokens[..]));
/// assert_eq!(data.relevance, None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct CallData<'a> {
    /// The query embedding, d values.
    pub query: &'a [f32],
    /// The candidate embeddings, row-major P × d.
    pub candidates: Pool<'a>,
    /// The retriever's scores, P values (`None`: ρ from the cosines).
    pub relevance: Option<&'a [f32]>,
    /// Each candidate's cost, P values (`None`: no cost budget).
    pub costs: Option<&'a [f32]>,
}

impl<'a> CallData<'a> {
    /// A query and its candidates, without scores or costs.
    #[must_use]
    pub fn new(query: &'a [f32], candidates: Pool<'a>) -> Self {
        CallData {
            query,
            candidates,
            relevance: None,
            costs: None,
        }
    }

    /// The same data with the retriever's scores (or none).
    #[must_use]
    pub fn with_relevance(self, relevance: Option<&'a [f32]>) -> Self {
        CallData { relevance, ..self }
    }

    /// The same data with the candidates' costs (or none).
    #[must_use]
    pub fn with_costs(self, costs: Option<&'a [f32]>) -> Self {
        CallData { costs, ..self }
    }
}

/// Rounds `values` (rows of `d`) with `round`, refusing a finite value that
/// rounds to infinity (the one rounding of `select_spec` and of a
/// [`Store`](crate::Store)'s rows).
#[cfg(feature = "half")]
pub(crate) fn narrow<T: Copy>(
    values: &[f32],
    d: usize,
    storage: Storage,
    round: impl Fn(f32) -> T,
    is_infinite: impl Fn(T) -> bool,
) -> Result<Vec<T>, StorageError> {
    let d = d.max(1);
    values
        .iter()
        .enumerate()
        .map(|(k, &x)| {
            let y = round(x);
            if x.is_finite() && is_infinite(y) {
                Err(StorageError {
                    row: k / d,
                    index: k % d,
                    value: x,
                    storage,
                    fault: StorageFault::OutOfRange,
                })
            } else {
                Ok(y)
            }
        })
        .collect()
}

/// The selector's error on rows narrowed to `storage` from the f32 `rows`
/// (of `d`): a row reported all zero that is not all zero in f32 underflowed
/// ([`StorageFault::Underflow`], naming its element of largest magnitude);
/// every other error as it is.
#[cfg(feature = "half")]
fn underflowed(e: Error, rows: &[f32], d: usize, storage: Storage) -> CallError {
    if let Error::Candidate {
        row,
        fault: VectorFault::ZeroNorm,
    } = e
    {
        let values = rows.get(row * d..(row + 1) * d).unwrap_or_default();
        let largest = values
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()));
        if let Some((index, &value)) = largest.filter(|(_, v)| **v != 0.0) {
            return CallError::Storage(StorageError {
                row,
                index,
                value,
                storage,
                fault: StorageFault::Underflow,
            });
        }
    }
    CallError::Select(e)
}

impl Selector {
    /// Runs the selector that `spec` describes (see [`SelectSpec`]) on the
    /// call's `data` ([`CallData`]: the query, the row-major P × d
    /// candidates, and optionally the retriever's scores and the costs, one
    /// per candidate; how they are used is the spec's) with budget K,
    /// converting the candidates once to the spec's [`Storage`] when they
    /// are held in another element type. This is the call every binding of
    /// the crate makes.
    ///
    /// ```
    /// use mempursuit::{CallData, Pool, SelectSpec, Selector, StopReason};
    /// let s = std::f32::consts::FRAC_1_SQRT_2;
    /// let (query, pool) = ([s, s], [0.9950f32, 0.0998, 0.9998, 0.0200, 0.0, 1.0]);
    /// let tokens = [40.0f32, 35.0, 70.0];
    /// // At most 100 tokens: top-K takes rows 0 and 1 (75), row 2 no longer fits.
    /// let spec: SelectSpec = "topk,cost_budget=100".parse()?;
    /// let data = CallData::new(&query, Pool::F32(&pool)).with_costs(Some(&tokens));
    /// let sel = Selector::new().select_spec(&spec, data, 10)?;
    /// assert_eq!(sel.picks, [0, 1]);
    /// assert_eq!(sel.stop, StopReason::CostBudget);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`CallError::Spec`] for a bad specification (checked first, so it is
    /// reported whatever the data; also costs without a `cost_budget` and
    /// the reverse), [`CallError::Reserve`] when the scratch for
    /// (P, min(K, P)) overflows the address space or cannot be allocated
    /// (reserved next, with [`Selector::try_reserve`], so a huge budget or
    /// pool is an error rather than a panic), [`CallError::Storage`] for a
    /// value the storage cannot hold, [`CallError::Select`] for the
    /// selector's input errors (the lengths and values of the scores and
    /// costs among them). Nothing the caller passed is modified.
    ///
    /// # Panics
    /// Never for the scratch; a failed allocation of a converted copy of the
    /// candidates (P · d values, only when the storage differs from the
    /// caller's element type) or of the result aborts, like `Vec`'s.
    pub fn select_spec(
        &mut self,
        spec: &SelectSpec,
        data: CallData<'_>,
        budget: usize,
    ) -> Result<Selection, CallError> {
        self.select_spec_with(spec, data, budget, &mut Serial)
    }

    /// [`Selector::select_spec`] with the passes run by `executor`: cut into
    /// row ranges that it may run on several threads (a
    /// [`SplitPool`](crate::parallel::SplitPool)), on the instruction set it
    /// names ([`Executor::isa`]; [`StrictOrder`](mempursuit_core::StrictOrder)
    /// for the unfused kernels, the same bits on every target). With
    /// [`Serial`] this is `select_spec`.
    ///
    /// ```
    /// use mempursuit::{CallData, Pool, SelectSpec, Selector, Serial, StrictOrder};
    ///
    /// let s = std::f32::consts::FRAC_1_SQRT_2;
    /// let (query, pool) = ([s, s], [0.9950, 0.0998, 0.9998, 0.0200, 0.0, 1.0]);
    /// let data = CallData::new(&query, Pool::F32(&pool));
    /// let spec = SelectSpec::paper();
    /// let mut selector = Selector::new();
    /// let strict = selector.select_spec_with(&spec, data, 2, &mut StrictOrder(Serial))?;
    /// assert_eq!(strict.picks, [0, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`Selector::select_spec`].
    ///
    /// # Panics
    /// As [`Selector::select_spec`].
    pub fn select_spec_with(
        &mut self,
        spec: &SelectSpec,
        data: CallData<'_>,
        budget: usize,
        executor: &mut dyn Executor,
    ) -> Result<Selection, CallError> {
        let method = spec.method()?;
        let relevance = spec.relevance(data.relevance)?;
        let costs = spec.costs(data.costs)?;
        let (query, candidates) = (data.query, data.candidates);
        let d = query.len();
        // The scratch for the shape, fallibly; every workspace below then
        // fits without growing. A shape the core rejects (d = 0, a length
        // that is not a multiple of d) reserves nothing and is reported by
        // the selector.
        let pool_size = match candidates.len().checked_div(d) {
            Some(p) if p * d == candidates.len() => p,
            _ => 0,
        };
        self.try_reserve(pool_size, budget.min(pool_size))
            .map_err(CallError::Reserve)?;
        let call = Call {
            query,
            relevance,
            costs,
            budget,
            method: &method,
        };
        match (spec.storage(), candidates) {
            (Storage::F32, Pool::F32(c)) => Ok(call.run(self, c, executor)?),
            #[cfg(feature = "half")]
            (Storage::F32, pool) => Ok(call.run(self, &pool.widened(), executor)?),
            #[cfg(feature = "half")]
            (Storage::F16, Pool::F16(c)) => Ok(call.run(self, c, executor)?),
            #[cfg(feature = "half")]
            (Storage::F16, pool) => {
                let rows = pool.widened();
                let c = narrow(&rows, d, Storage::F16, f16::from_f32, f16::is_infinite)?;
                call.run(self, &c, executor)
                    .map_err(|e| underflowed(e, &rows, d, Storage::F16))
            }
            #[cfg(feature = "half")]
            (Storage::Bf16, Pool::Bf16(c)) => Ok(call.run(self, c, executor)?),
            #[cfg(feature = "half")]
            (Storage::Bf16, pool) => {
                let rows = pool.widened();
                let c = narrow(&rows, d, Storage::Bf16, bf16::from_f32, bf16::is_infinite)?;
                call.run(self, &c, executor)
                    .map_err(|e| underflowed(e, &rows, d, Storage::Bf16))
            }
            #[cfg(not(feature = "half"))]
            (Storage::F16 | Storage::Bf16, _) => Err(CallError::Spec(SpecError::Conflict {
                message: "storage 'f16' and 'bf16' need the mempursuit crate's `half` feature"
                    .to_owned(),
            })),
            (Storage::Int8, pool) => {
                let rows = pool.widened();
                let input = Input {
                    cost_budget: costs,
                    ..Input::new(query, &rows).with_relevance(relevance)
                };
                // The int8 pursuit returns the f32 pursuit's selection bit for
                // bit, so the f32 path gives the same result wherever the int8
                // copy cannot be made (a row the f32 path reports or excludes),
                // for top-K and MMR, which have no pass to save, and for the
                // recommended setting, whose rules on duplicates and
                // represented candidates read f32 Gram rows. The rows are
                // quantized only where `Int8Passes::Auto` runs the int8
                // passes (else the int8 pursuit would run the f32 one on
                // them anyway, after a quantization that costs more than
                // the pursuit).
                let int8 = match method {
                    Method::Pursuit(_) if Int8Passes::Auto.uses_int8(pool_size, d, budget) => {
                        Int8Candidates::quantize(&rows, d).ok()
                    }
                    _ => None,
                };
                let (Some(int8), Method::Pursuit(options)) = (int8, method) else {
                    return Ok(self.select_with(&input, budget, &method, executor)?);
                };
                let passes = Int8Passes::Auto;
                Ok(self.select_int8_with(&input, &int8, budget, &options, passes, executor)?)
            }
        }
    }
}

/// What one [`Selector::select_spec_with`] call runs, whatever the
/// candidates' storage.
struct Call<'a> {
    query: &'a [f32],
    relevance: mempursuit_core::Relevance<'a>,
    costs: Option<mempursuit_core::CostBudget<'a>>,
    budget: usize,
    method: &'a Method,
}

impl Call<'_> {
    /// [`Selector::select_with`] on `candidates` (P × d, row-major, in
    /// storage `E`).
    fn run<E: Element>(
        &self,
        selector: &mut Selector,
        candidates: &[E],
        executor: &mut dyn Executor,
    ) -> Result<Selection, Error> {
        let input = Input {
            cost_budget: self.costs,
            ..Input::with_storage(self.query, candidates).with_relevance(self.relevance)
        };
        selector.select_with(&input, self.budget, self.method, executor)
    }
}

/// A candidate value that the specification's storage cannot hold: a
/// finite f32 beyond the f16 range (±65504) or so close to f32's limit that
/// bfloat16 rounds it to infinity ([`StorageFault::OutOfRange`]), or a row
/// that is not all zero in f32 but is in the storage
/// ([`StorageFault::Underflow`]: every |value| below f16's smallest
/// subnormal, 2⁻²⁴ ≈ 5.96e-8, rounds to 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StorageError {
    /// 0-based candidate row.
    pub row: usize,
    /// 0-based element within the row: the value out of range, or the
    /// row's element of largest magnitude for an underflow.
    pub index: usize,
    /// That element's value as given (f32).
    pub value: f32,
    /// The storage asked for.
    pub storage: Storage,
    /// What the storage cannot hold.
    pub fault: StorageFault,
}

/// Why a [`StorageError`]'s value does not fit the storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StorageFault {
    /// A finite value beyond the storage's range.
    OutOfRange,
    /// Every element of the row rounds to zero in the storage, though the
    /// f32 row is not all zero (the selector would report the row as all
    /// zero).
    Underflow,
}

impl StorageError {
    /// [`ErrorKind::Input`].
    pub const fn kind(&self) -> ErrorKind {
        ErrorKind::Input
    }
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.fault == StorageFault::Underflow {
            return write!(
                f,
                "candidate {}: the values underflow {}: every element rounds to zero \
                 (the largest in magnitude is element {} = {:e}); scale or normalize \
                 the rows (only their directions are used), or use storage 'f32'",
                self.row, self.storage, self.index, self.value
            );
        }
        let range = match self.storage {
            Storage::F16 => "the f16 range [-65504, 65504]",
            _ => "the bf16 range (about ±3.39e38)",
        };
        write!(
            f,
            "candidate {}: element {} = {} is outside {range}; use storage 'f32', \
             or normalize the rows (only their directions are used)",
            self.row, self.index, self.value
        )
    }
}

impl std::error::Error for StorageError {}

/// Everything a call from a [`SelectSpec`] can fail with.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CallError {
    /// The specification (kind [`ErrorKind::Option`]).
    Spec(SpecError),
    /// A candidate value out of the storage's range ([`ErrorKind::Input`]).
    Storage(StorageError),
    /// The scratch for the call's shape overflows the address space or
    /// cannot be allocated ([`ErrorKind::Capacity`]).
    Reserve(ReserveError),
    /// The selector's own error: the input, a parameter or the capacity
    /// ([`Error::kind`]).
    Select(Error),
    /// A [`Store`](crate::Store) call's ids ([`ErrorKind::Input`]).
    Store(crate::StoreError),
}

impl CallError {
    /// The family of the error, the same word in every binding:
    /// `input`, `option` or `capacity`.
    pub const fn kind(&self) -> ErrorKind {
        match self {
            CallError::Spec(e) => e.kind(),
            CallError::Storage(e) => e.kind(),
            CallError::Reserve(e) => e.kind(),
            CallError::Select(e) => e.kind(),
            CallError::Store(e) => e.kind(),
        }
    }
}

/// The remedy named after an unusable candidate row (non-finite, all zero,
/// norm out of range) under the default policy `invalid = 'reject'`: the
/// option `invalid` (in every binding and the command line's `--invalid`)
/// set to `'exclude'` leaves such rows out and lists them in `excluded`.
pub const EXCLUDE_HINT: &str =
    "; or set option 'invalid' to 'exclude' to leave such rows out (listed in excluded)";

impl fmt::Display for CallError {
    /// The error's own message; for an unusable candidate row followed by
    /// [`EXCLUDE_HINT`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Spec(e) => e.fmt(f),
            CallError::Storage(e) => e.fmt(f),
            CallError::Reserve(e) => e.fmt(f),
            CallError::Store(e) => e.fmt(f),
            CallError::Select(e) => {
                e.fmt(f)?;
                match e {
                    Error::Candidate {
                        fault:
                            VectorFault::NonFinite { .. }
                            | VectorFault::ZeroNorm
                            | VectorFault::NormOutOfRange { .. },
                        ..
                    } => f.write_str(EXCLUDE_HINT),
                    _ => Ok(()),
                }
            }
        }
    }
}

impl std::error::Error for CallError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CallError::Spec(e) => Some(e),
            CallError::Storage(e) => Some(e),
            CallError::Reserve(e) => Some(e),
            CallError::Select(e) => Some(e),
            CallError::Store(e) => Some(e),
        }
    }
}

impl From<SpecError> for CallError {
    fn from(e: SpecError) -> Self {
        CallError::Spec(e)
    }
}

impl From<StorageError> for CallError {
    fn from(e: StorageError) -> Self {
        CallError::Storage(e)
    }
}

impl From<ReserveError> for CallError {
    fn from(e: ReserveError) -> Self {
        CallError::Reserve(e)
    }
}

impl From<crate::StoreError> for CallError {
    fn from(e: crate::StoreError) -> Self {
        CallError::Store(e)
    }
}

impl From<Error> for CallError {
    fn from(e: Error) -> Self {
        CallError::Select(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mempursuit_core::ErrorKind;

    #[test]
    #[cfg_attr(
        miri,
        ignore = "Miri ends the run on an allocation it cannot serve instead of returning the error"
    )]
    fn a_scratch_that_cannot_exist_is_an_error_not_a_panic() {
        // P = 10^7 rows of d = 1 (40 MB) and K = P: the scratch (2·P·K
        // f32s, 8·10^14 bytes) is beyond the 47-bit address space, so the
        // allocation fails on every configuration.
        let p = 10_000_000;
        let pool = vec![1.0f32; p];
        let mut selector = Selector::new();
        let spec = SelectSpec::top_k();
        let err = selector
            .select_spec(&spec, CallData::new(&[1.0], Pool::F32(&pool)), usize::MAX)
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Capacity);
        assert!(
            matches!(
                err,
                CallError::Reserve(ReserveError {
                    pool: 10_000_000,
                    budget: 10_000_000,
                    bytes: Some(_)
                })
            ),
            "{err:?}"
        );
        assert!(err.to_string().starts_with("cannot allocate "), "{err}");
        // The selector keeps its capacity and stays usable.
        let sel = selector
            .select_spec(&spec, CallData::new(&[1.0], Pool::F32(&pool[..3])), 2)
            .unwrap();
        assert_eq!(sel.picks, [0, 1]);
    }

    #[test]
    fn every_storage_takes_an_empty_pool() {
        // A fresh selector (capacity 0) and P = 0: the int8 pursuit's
        // setup used to panic (`chunks_exact_mut(0)`).
        let storages: &[&str] = if cfg!(feature = "half") {
            &["f32", "f16", "bf16", "int8"]
        } else {
            &["f32", "int8"]
        };
        for storage in storages {
            for method in ["recommended", "pursuit", "centroid", "topk", "mmr"] {
                let spec: SelectSpec = format!("{method},storage={storage}").parse().unwrap();
                let sel = Selector::new()
                    .select_spec(&spec, CallData::new(&[1.0, 0.0], Pool::F32(&[])), 3)
                    .unwrap();
                assert!(sel.picks.is_empty(), "{spec}");
            }
        }
    }

    /// The remedy after an unusable row (issue 30, item 7), and none where
    /// the option would not help (the query).
    #[test]
    fn unusable_rows_name_the_exclude_option() {
        let spec = SelectSpec::default();
        let call = |q: &[f32], c: &[f32]| {
            Selector::new()
                .select_spec(&spec, CallData::new(q, Pool::F32(c)), 2)
                .unwrap_err()
                .to_string()
        };
        let q = [1.0, 0.0];
        assert_eq!(
            call(&q, &[1.0, 0.0, f32::NAN, 1.0]),
            "candidate 1: element 0 is not finite (NaN); or set option 'invalid' to \
             'exclude' to leave such rows out (listed in excluded)"
        );
        assert_eq!(
            call(&q, &[0.0, 0.0, 0.0, 1.0]),
            format!("candidate 0: all elements are zero{EXCLUDE_HINT}")
        );
        assert_eq!(
            call(&q, &[1.0, 0.0, 1e30, 0.0]),
            format!(
                "candidate 1: norm 1.0000000150474662e30 is outside [1e-12, 1e12]{EXCLUDE_HINT}"
            )
        );
        assert_eq!(
            call(&[0.0, 0.0], &[1.0, 0.0]),
            "query: all elements are zero"
        );
        let exclude: SelectSpec = "recommended,invalid=exclude".parse().unwrap();
        let sel = Selector::new()
            .select_spec(
                &exclude,
                CallData::new(&q, Pool::F32(&[1.0, 0.0, f32::NAN, 1.0])),
                2,
            )
            .unwrap();
        assert_eq!((sel.picks, sel.excluded), (vec![0], vec![1]));
    }

    /// A row whose values all round to zero in f16 (not in f32) is an
    /// underflow naming the storage and the remedy (issue 30, item 7); a row
    /// that is zero in f32 stays the selector's error.
    #[test]
    #[cfg(feature = "half")]
    fn a_row_that_underflows_f16_says_so() {
        let spec: SelectSpec = "pursuit,storage=f16".parse().unwrap();
        let q = [1.0, 0.0];
        let err = Selector::new()
            .select_spec(
                &spec,
                CallData::new(&q, Pool::F32(&[1.0, 0.0, 1e-9, -2e-8])),
                2,
            )
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Input);
        assert_eq!(
            err.to_string(),
            "candidate 1: the values underflow f16: every element rounds to zero (the \
             largest in magnitude is element 1 = -2e-8); scale or normalize the rows (only \
             their directions are used), or use storage 'f32'"
        );
        assert!(matches!(
            err,
            CallError::Storage(StorageError {
                fault: StorageFault::Underflow,
                row: 1,
                index: 1,
                ..
            })
        ));
        let err = Selector::new()
            .select_spec(
                &spec,
                CallData::new(&q, Pool::F32(&[1.0, 0.0, 0.0, 0.0])),
                2,
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("candidate 1: all elements are zero{EXCLUDE_HINT}")
        );
        // Scaled up, the same row is usable.
        let sel = Selector::new()
            .select_spec(
                &spec,
                CallData::new(&q, Pool::F32(&[1.0, 0.0, 1e-1, -2.0])),
                2,
            )
            .unwrap();
        assert_eq!(sel.picks.len(), 2);
    }
}
