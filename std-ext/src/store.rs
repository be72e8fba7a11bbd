//! A store of memory embeddings that lives across queries ([`Store`]): the
//! rows are validated and kept once, and each query names its candidate
//! pool by the ids a retriever returned ([`StoreCall`]).
//!
//! A [`Store::select`] call gives exactly the [`Selection`] of
//! [`Selector::select_spec`] on the gathered rows `rows[ids[0]], rows[ids[1]], …`
//! (the same specification, every method and storage, costs and scores):
//! its picks are positions in `ids`, so `ids[pick]` is the store row.

use std::fmt;

use mempursuit_core::{ErrorKind, Executor, Serial, VectorFault, MAX_NORM, MIN_NORM};

use crate::{CallData, CallError, Pool, SelectSpec, Selection, Selector, SpecError, Storage};

/// Memory embeddings kept across queries: N rows of d values (row-major
/// N × d, f32 as given), each validated once when it enters (finite, norm
/// in [`MIN_NORM`], [`MAX_NORM`]), with the [`Storage`] its passes read.
///
/// ```
/// use mempursuit::{SelectSpec, Selector, Storage, Store, StoreCall};
///
/// // d = 2. Rows 0 and 1 are paraphrases of fact A, row 3 states fact B.
/// let rows = [0.9950f32, 0.0998, 0.9998, 0.0200, -1.0, 0.0, 0.0, 1.0];
/// let store = Store::new(&rows, 2, Storage::F32)?;
/// let s = std::f32::consts::FRAC_1_SQRT_2;
/// let query = [s, s];
/// let ids = [0, 1, 3]; // the retriever's candidates
/// let mut selector = Selector::new();
/// let sel = store.select(&mut selector, &SelectSpec::paper(), StoreCall::new(&query, &ids), 2)?;
/// assert_eq!(sel.picks, [0, 2]); // positions in `ids`
/// assert_eq!(sel.picks.iter().map(|&i| ids[i]).collect::<Vec<_>>(), [0, 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Store {
    dim: usize,
    storage: Storage,
    rows: Vec<f32>,
}

/// One query against a [`Store`]: the query embedding (d values), the
/// candidate pool as store ids (P of them, any order, each < the store's
/// length), and optionally the retriever's scores and the costs, one per id
/// (as in [`CallData`]).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct StoreCall<'a> {
    /// The query embedding, d values.
    pub query: &'a [f32],
    /// The candidates' store ids, P values.
    pub ids: &'a [usize],
    /// The retriever's scores, P values (`None`: ρ from the cosines).
    pub relevance: Option<&'a [f32]>,
    /// Each candidate's cost, P values (`None`: no cost budget).
    pub costs: Option<&'a [f32]>,
}

impl<'a> StoreCall<'a> {
    /// A query and its candidates' store ids, without scores or costs.
    #[must_use]
    pub fn new(query: &'a [f32], ids: &'a [usize]) -> Self {
        StoreCall {
            query,
            ids,
            relevance: None,
            costs: None,
        }
    }

    /// The same call with the retriever's scores (or none).
    #[must_use]
    pub fn with_relevance(self, relevance: Option<&'a [f32]>) -> Self {
        StoreCall { relevance, ..self }
    }

    /// The same call with the candidates' costs (or none).
    #[must_use]
    pub fn with_costs(self, costs: Option<&'a [f32]>) -> Self {
        StoreCall { costs, ..self }
    }
}

/// What building, growing or querying a [`Store`] can fail with (kind
/// [`ErrorKind::Input`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StoreError {
    /// d is 0, or the row values are not a whole number of rows of d.
    Shape {
        /// The number of values given.
        len: usize,
        /// The dimension d.
        dim: usize,
    },
    /// Row `row` (its index in the store) is unusable.
    Row {
        /// The row's store index.
        row: usize,
        /// What is wrong with it.
        fault: VectorFault,
    },
    /// `ids[position]` names no row of the store.
    Id {
        /// The position in the call's ids.
        position: usize,
        /// The id given.
        id: usize,
        /// The store's length N (ids run 0..N).
        len: usize,
    },
}

impl StoreError {
    /// Always [`ErrorKind::Input`].
    pub const fn kind(&self) -> ErrorKind {
        ErrorKind::Input
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Shape { len, dim: 0 } => write!(
                f,
                "the store's dimension d is 0 ({len} values given); pass d ≥ 1, the embedding length"
            ),
            StoreError::Shape { len, dim } => write!(
                f,
                "{len} values are not a whole number of rows of d = {dim}; pass a row-major N × {dim} matrix"
            ),
            StoreError::Row { row, fault } => write!(
                f,
                "store row {row}: {fault}; fix or leave out that memory before adding it"
            ),
            StoreError::Id { position, id, len } => write!(
                f,
                "ids[{position}] = {id} names no row of the store (it holds {len} rows, ids 0..{len}); pass ids the store returned"
            ),
        }
    }
}

impl std::error::Error for StoreError {}

impl Store {
    /// A store of the row-major N × d matrix `rows` (f32, any norms within
    /// [`MIN_NORM`], [`MAX_NORM`]), whose passes read `storage`.
    ///
    /// # Errors
    /// [`StoreError::Shape`] when d = 0 or `rows.len()` is not a multiple
    /// of d; [`StoreError::Row`] for the first row that is non-finite, all
    /// zero or out of the norm range.
    pub fn new(rows: &[f32], d: usize, storage: Storage) -> Result<Store, StoreError> {
        let mut store = Store {
            dim: d,
            storage,
            rows: Vec::new(),
        };
        store.append(rows)?;
        Ok(store)
    }

    /// Adds the row-major rows `rows` (a multiple of d values) at the end;
    /// returns the ids they get. On an error nothing is added.
    ///
    /// # Errors
    /// As [`Store::new`] (row indices are store indices).
    pub fn append(&mut self, rows: &[f32]) -> Result<std::ops::Range<usize>, StoreError> {
        let d = self.dim;
        if d == 0 || !rows.len().is_multiple_of(d) {
            return Err(StoreError::Shape {
                len: rows.len(),
                dim: d,
            });
        }
        let first = self.len();
        for (i, row) in rows.chunks_exact(d).enumerate() {
            check_row(row).map_err(|fault| StoreError::Row {
                row: first + i,
                fault,
            })?;
        }
        self.rows.extend_from_slice(rows);
        Ok(first..self.len())
    }

    /// The number of rows N.
    pub fn len(&self) -> usize {
        self.rows.len() / self.dim.max(1)
    }

    /// Whether the store holds no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The embedding dimension d.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The storage the passes read.
    pub fn storage(&self) -> Storage {
        self.storage
    }

    /// Runs the selector that `spec` describes on the rows the call's ids
    /// name, with budget K: the [`Selection`] of [`Selector::select_spec`]
    /// on the gathered rows, picks as positions in `call.ids`.
    ///
    /// # Errors
    /// [`StoreError::Id`] (as [`CallError::Store`]) for an id out of range;
    /// [`SpecError::Conflict`] when `spec` names a storage other than the
    /// store's; otherwise as [`Selector::select_spec`]. Nothing the caller
    /// passed is modified.
    pub fn select(
        &self,
        selector: &mut Selector,
        spec: &SelectSpec,
        call: StoreCall<'_>,
        budget: usize,
    ) -> Result<Selection, CallError> {
        self.select_with(selector, spec, call, budget, &mut Serial)
    }

    /// [`Store::select`] with the passes run by `executor` (see
    /// [`Selector::select_spec_with`]).
    ///
    /// # Errors
    /// As [`Store::select`].
    pub fn select_with(
        &self,
        selector: &mut Selector,
        spec: &SelectSpec,
        call: StoreCall<'_>,
        budget: usize,
        executor: &mut dyn Executor,
    ) -> Result<Selection, CallError> {
        let spec = self.spec_for(spec)?;
        let rows = self.gather(call.ids)?;
        let data = CallData::new(call.query, Pool::F32(&rows))
            .with_relevance(call.relevance)
            .with_costs(call.costs);
        selector.select_spec_with(&spec, data, budget, executor)
    }

    /// [`Store::select`] for many calls on up to `threads` threads (0: one
    /// per available core), one [`Selector`] per thread; results in the
    /// order of `calls`, each the result of [`Store::select`].
    pub fn select_batch(
        &self,
        spec: &SelectSpec,
        calls: &[StoreCall<'_>],
        budget: usize,
        threads: usize,
    ) -> Vec<Result<Selection, CallError>> {
        let threads = match threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
        .min(calls.len())
        .max(1);
        let chunk = calls.len().div_ceil(threads).max(1);
        std::thread::scope(|scope| {
            let handles: Vec<_> = calls
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        let mut selector = Selector::new();
                        part.iter()
                            .map(|&call| self.select(&mut selector, spec, call, budget))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("a store selection thread panicked"))
                .collect()
        })
    }

    /// `spec` with the store's storage, or the conflict when it names
    /// another.
    fn spec_for(&self, spec: &SelectSpec) -> Result<SelectSpec, CallError> {
        match spec.given_storage() {
            Some(s) if s != self.storage => Err(CallError::Spec(SpecError::Conflict {
                message: format!(
                    "option 'storage' is '{s}' but the store keeps '{}'; leave 'storage' out (a store's calls read its own storage) or build the store with storage '{s}'",
                    self.storage
                ),
            })),
            _ => Ok((*spec).with("storage", crate::spec::Value::Text(self.storage.as_str()))?),
        }
    }

    /// The rows `ids` name, row-major P × d.
    fn gather(&self, ids: &[usize]) -> Result<Vec<f32>, StoreError> {
        let (d, len) = (self.dim, self.len());
        let mut out = Vec::with_capacity(ids.len() * d);
        for (position, &id) in ids.iter().enumerate() {
            if id >= len {
                return Err(StoreError::Id { position, id, len });
            }
            out.extend_from_slice(&self.rows[id * d..(id + 1) * d]);
        }
        Ok(out)
    }
}

/// The faults of a row that no call could use: a non-finite value, all
/// zeros, a norm outside [`MIN_NORM`], [`MAX_NORM`] (computed in f64).
fn check_row(row: &[f32]) -> Result<(), VectorFault> {
    let mut sumsq = 0.0f64;
    for (index, &value) in row.iter().enumerate() {
        if !value.is_finite() {
            return Err(VectorFault::NonFinite { index, value });
        }
        sumsq += f64::from(value) * f64::from(value);
    }
    let norm = sumsq.sqrt();
    if norm == 0.0 {
        return Err(VectorFault::ZeroNorm);
    }
    if !(MIN_NORM..=MAX_NORM).contains(&norm) {
        return Err(VectorFault::NormOutOfRange { norm });
    }
    Ok(())
}
