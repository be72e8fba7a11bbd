//! A store of memory embeddings that lives across queries ([`Store`]): the
//! rows are validated and kept once, and each query names its candidate
//! pool by the ids a retriever returned ([`StoreCall`]).
//!
//! A [`Store::select`] call gives exactly the [`Selection`] of
//! [`Selector::select_spec`] on the gathered rows `rows[ids[0]], rows[ids[1]], …`
//! (the same specification, every method and storage, costs and scores):
//! its picks are positions in `ids`, so `ids[pick]` is the store row.
//!
//! # What is done once, what every call does
//! At build and [`Store::append`]: every row's validation (finite, norm
//! range, in f64), its conversion to f16 / bf16 (the range and underflow
//! checks of `select_spec`, errors naming the store row), and for int8 its
//! codes, scale, error norm and norm ([`Int8Pool::quantize`] works row by
//! row, so these are exactly the values a quantization of any gathered
//! pool gives). `select_spec` redoes all of that on every call (the int8
//! quantization where `Int8Passes::Auto` runs the int8 passes).
//!
//! Per call: the ids are checked and the core runs on the store's rows in
//! place, read by id ([`Input::with_ids`]): no row is copied, in any
//! storage. Only where [`Int8Passes::Auto`] runs the int8 passes are the
//! int8 codes of the call's rows (d bytes a row, a quarter of the f32 row)
//! and their 20 bytes of per-row values copied into buffers the
//! [`Selector`] keeps (no allocation once they have grown). The core's
//! per-call work on the pool is one query pass (each row's dot with the
//! query and its squared norm, fused in one read of the row: the norms ride
//! along with b, which needs the read anyway, so norms kept by the store
//! would save no bytes) and an O(P) classification; neither is repeated
//! work a store could skip without changing the bits (the squared norm's
//! bits depend on the call's instruction set).

use std::fmt;

#[cfg(feature = "half")]
use mempursuit_core::half::{bf16, f16};
use mempursuit_core::{
    CostBudget, ErrorKind, Executor, Input, Int8Passes, Int8Pool, Method, Relevance, Serial,
    VectorFault, MAX_I8_DIM, MAX_NORM, MIN_NORM,
};

use crate::parallel::{BatchPlan, BatchReport, BatchShape, CacheInfo};
#[cfg(feature = "half")]
use crate::StorageFault;
use crate::{CallError, SelectSpec, Selection, Selector, SpecError, Storage, StorageError};

/// Memory embeddings kept across queries: N rows of d values given as f32
/// (row-major N × d), each validated once when it enters (finite, norm in
/// [`MIN_NORM`], [`MAX_NORM`]) and kept in the [`Storage`] its passes read,
/// converted once:
///
/// * f32: the rows as given (4·d bytes a row);
/// * f16 / bf16 (feature `half`): the rows rounded once as
///   [`Selector::select_spec`] rounds them (2·d bytes a row; the f32 rows
///   are not kept); a value the storage cannot hold or a row that rounds
///   to all zeros is refused at build ([`StoreError::Storage`]);
/// * int8: the f32 rows (the certified pursuit's query pass and
///   verification, and the methods without int8 passes, read them) plus
///   each row's int8 codes, scale, error norm and norm
///   ([`Int8Pool::quantize`], computed once; d + 20 bytes a row).
///
/// A call reads the rows its ids name where they are (for int8 passes it
/// gathers their codes into a buffer its [`Selector`] keeps), so repeated
/// calls allocate only their result; it copies no f32 / f16 / bf16 row
/// and converts and quantizes nothing.
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
    len: usize,
    rows: Rows,
    /// The int8 copy (storage int8 with d ≤ [`MAX_I8_DIM`] only).
    int8: Option<Int8Rows>,
}

/// The rows in the storage the passes read.
#[derive(Debug, Clone, PartialEq)]
enum Rows {
    /// f32 (storage f32 and int8; f16 / bf16 without the `half` feature,
    /// whose calls then report the missing feature as `select_spec` does).
    F32(Vec<f32>),
    #[cfg(feature = "half")]
    F16(Vec<f16>),
    #[cfg(feature = "half")]
    Bf16(Vec<bf16>),
}

/// Every row's int8 codes (N × d), scale, error norm and norm, as
/// [`Int8Pool::quantize`] computes them for the row alone (it quantizes
/// each row independently of the others, so the rows gathered for a call
/// carry exactly the values a quantization of the gathered pool gives).
#[derive(Debug, Clone, PartialEq, Default)]
struct Int8Rows {
    codes: Vec<i8>,
    scales: Vec<f32>,
    errors: Vec<f64>,
    norms: Vec<f64>,
}

/// The int8 codes and per-row values of one [`Store`] call's rows,
/// gathered into buffers a [`Selector`] keeps between calls (they grow to
/// the largest pool seen and are reused): the int8 pass streams its codes
/// contiguous, while every f32 / f16 / bf16 row is read in place by id.
#[derive(Default, Clone)]
pub(crate) struct Gathered {
    int8: Int8Rows,
}

/// Copies the rows `ids` (each < N, checked) of the row-major `src` (rows
/// of `d`) into `out`, replacing its contents.
fn gather<T: Copy>(src: &[T], d: usize, ids: &[usize], out: &mut Vec<T>) {
    out.clear();
    out.reserve(ids.len() * d);
    for &id in ids {
        out.extend_from_slice(&src[id * d..(id + 1) * d]);
    }
}

impl Int8Rows {
    /// The per-row values of the rows `ids` into `out`.
    fn gather(&self, d: usize, ids: &[usize], out: &mut Int8Rows) {
        gather(&self.codes, d, ids, &mut out.codes);
        gather(&self.scales, 1, ids, &mut out.scales);
        gather(&self.errors, 1, ids, &mut out.errors);
        gather(&self.norms, 1, ids, &mut out.norms);
    }
}

/// One query against a [`Store`]: the query embedding (d values), the
/// candidate pool as store ids (P of them, any order, each < the store's
/// length), and optionally the retriever's scores and the costs, one per id
/// (as in [`CallData`](crate::CallData)).
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
    /// A value of a row that the store's storage (f16 or bf16) cannot
    /// hold, or a row that rounds to all zeros in it; the error's `row` is
    /// the store row.
    Storage(StorageError),
    /// The call's query has `len` values, the store's rows d.
    QueryLength {
        /// The number of query values given.
        len: usize,
        /// The store's dimension d.
        dim: usize,
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
            StoreError::Storage(e) => {
                // The storage error speaks of a call's candidate; here it
                // is the store row.
                let text = e.to_string();
                let rest = text
                    .strip_prefix(&format!("candidate {}", e.row))
                    .unwrap_or(&text);
                write!(f, "store row {}{rest}", e.row)
            }
            StoreError::QueryLength { len, dim } => write!(
                f,
                "the query has {len} values but the store's rows have d = {dim}; embed the query with the store's encoder"
            ),
        }
    }
}

impl std::error::Error for StoreError {}

impl Store {
    /// A store of the row-major N × d matrix `rows` (f32, any norms within
    /// [`MIN_NORM`], [`MAX_NORM`]), kept in `storage` (see [`Store`] for
    /// what each storage keeps). The work every call would otherwise redo
    /// is done here, once: the validation, the conversion to f16 / bf16,
    /// the int8 quantization.
    ///
    /// # Errors
    /// [`StoreError::Shape`] when d = 0 or `rows.len()` is not a multiple
    /// of d; [`StoreError::Row`] for the first row that is non-finite, all
    /// zero or out of the norm range (for f16 / bf16: also after
    /// rounding); [`StoreError::Storage`] for the first value f16 / bf16
    /// cannot hold (beyond ±65504 for f16) or row that rounds to all zeros.
    pub fn new(rows: &[f32], d: usize, storage: Storage) -> Result<Store, StoreError> {
        let mut store = Store {
            dim: d,
            storage,
            len: 0,
            rows: match storage {
                #[cfg(feature = "half")]
                Storage::F16 => Rows::F16(Vec::new()),
                #[cfg(feature = "half")]
                Storage::Bf16 => Rows::Bf16(Vec::new()),
                _ => Rows::F32(Vec::new()),
            },
            int8: (storage == Storage::Int8 && d <= MAX_I8_DIM).then(Int8Rows::default),
        };
        store.append(rows)?;
        Ok(store)
    }

    /// Adds the row-major rows `rows` (a multiple of d values) at the end,
    /// converted and quantized as at [`Store::new`]; returns the ids they
    /// get (N..N + n). The rows already held, and so every call's picks on
    /// them, do not change. On an error nothing is added.
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
        let first = self.len;
        let n = rows.len() / d;
        for (i, row) in rows.chunks_exact(d).enumerate() {
            check_row(row).map_err(|fault| StoreError::Row {
                row: first + i,
                fault,
            })?;
        }
        match &mut self.rows {
            Rows::F32(kept) => kept.extend_from_slice(rows),
            #[cfg(feature = "half")]
            Rows::F16(kept) => {
                let narrowed = narrow_rows(
                    rows,
                    d,
                    first,
                    Storage::F16,
                    f16::from_f32,
                    f16::to_f32,
                    f16::is_infinite,
                )?;
                kept.extend_from_slice(&narrowed);
            }
            #[cfg(feature = "half")]
            Rows::Bf16(kept) => {
                let narrowed = narrow_rows(
                    rows,
                    d,
                    first,
                    Storage::Bf16,
                    bf16::from_f32,
                    bf16::to_f32,
                    bf16::is_infinite,
                )?;
                kept.extend_from_slice(&narrowed);
            }
        }
        if let Some(int8) = &mut self.int8 {
            let start = int8.scales.len();
            int8.codes.resize((start + n) * d, 0);
            int8.scales.resize(start + n, 0.0);
            int8.errors.resize(start + n, 0.0);
            int8.norms.resize(start + n, 0.0);
            // The rows are finite and d ≤ MAX_I8_DIM: quantize cannot fail.
            Int8Pool::quantize(
                rows,
                d,
                &mut int8.codes[start * d..],
                &mut int8.scales[start..],
                &mut int8.errors[start..],
                &mut int8.norms[start..],
            )
            .expect("checked rows quantize");
        }
        self.len += n;
        Ok(first..self.len)
    }

    /// The number of rows N.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the store holds no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The embedding dimension d.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The storage the passes read.
    pub fn storage(&self) -> Storage {
        self.storage
    }

    /// The rows as f32, row-major N × d: for storage f32 and int8 the rows
    /// as given (borrowed); for f16 / bf16 the stored values widened to
    /// f32 (exact, a new vector of 4·N·d bytes). Either way
    /// `Store::new(&store.rows(), store.dim(), store.storage())` builds
    /// this same store again (what a binding's pickle or a save to disk
    /// needs: the store keeps no other copy of its rows).
    ///
    /// ```
    /// use mempursuit::{Storage, Store};
    /// let store = Store::new(&[0.6, 0.8, 1.0, 0.0], 2, Storage::F32)?;
    /// assert_eq!(&store.rows()[..], &[0.6, 0.8, 1.0, 0.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rows(&self) -> std::borrow::Cow<'_, [f32]> {
        use std::borrow::Cow;
        match &self.rows {
            Rows::F32(v) => Cow::Borrowed(v),
            #[cfg(feature = "half")]
            Rows::F16(v) => Cow::Owned(v.iter().map(|x| x.to_f32()).collect()),
            #[cfg(feature = "half")]
            Rows::Bf16(v) => Cow::Owned(v.iter().map(|x| x.to_f32()).collect()),
        }
    }

    /// The bytes the store holds for its N rows of d values: f32 4·N·d;
    /// f16 / bf16 2·N·d; int8 4·N·d (the f32 rows) + N·d (codes) + 20·N
    /// (scales, error norms, norms), or 4·N·d alone for d > [`MAX_I8_DIM`]
    /// (no codes: its calls run the f32 passes, as `select_spec` does).
    pub fn bytes(&self) -> usize {
        let rows = match &self.rows {
            Rows::F32(v) => std::mem::size_of_val(v.as_slice()),
            #[cfg(feature = "half")]
            Rows::F16(v) => std::mem::size_of_val(v.as_slice()),
            #[cfg(feature = "half")]
            Rows::Bf16(v) => std::mem::size_of_val(v.as_slice()),
        };
        rows + self
            .int8
            .as_ref()
            .map_or(0, |q| q.codes.len() + q.scales.len() * 20)
    }

    /// Runs the selector that `spec` describes on the rows the call's ids
    /// name, with budget K: the [`Selection`] of [`Selector::select_spec`]
    /// on the gathered rows, bit for bit, picks as positions in `call.ids`.
    ///
    /// # Errors
    /// [`SpecError::Conflict`] (as [`CallError::Spec`]) when `spec` names a
    /// storage other than the store's; [`StoreError::QueryLength`] and
    /// [`StoreError::Id`] (as [`CallError::Store`]) for a query that is not
    /// d values and for an id out of range; otherwise as
    /// [`Selector::select_spec`]. Nothing the caller passed is modified.
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
        self.check_call(&call)?;
        // What `select_spec_with` does on the gathered rows, in its order.
        let method = spec.method()?;
        let relevance = spec.relevance(call.relevance)?;
        let cost_budget = spec.costs(call.costs)?;
        let p = call.ids.len();
        selector
            .try_reserve(p, budget.min(p))
            .map_err(CallError::Reserve)?;
        let mut g = std::mem::take(&mut selector.gathered);
        let result = self.run(
            selector,
            &mut g,
            &method,
            relevance,
            cost_budget,
            call,
            budget,
            executor,
        );
        selector.gathered = g;
        result
    }

    /// The gathered call: [`Store::select_with`] after the checks.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        selector: &mut Selector,
        g: &mut Gathered,
        method: &Method,
        relevance: Relevance<'_>,
        cost_budget: Option<CostBudget<'_>>,
        call: StoreCall<'_>,
        budget: usize,
        executor: &mut dyn Executor,
    ) -> Result<Selection, CallError> {
        let (d, ids, query) = (self.dim, call.ids, call.query);
        match &self.rows {
            #[cfg(not(feature = "half"))]
            Rows::F32(_) if matches!(self.storage, Storage::F16 | Storage::Bf16) => {
                Err(CallError::Spec(SpecError::Conflict {
                    message: "storage 'f16' and 'bf16' need the mempursuit crate's `half` feature"
                        .to_owned(),
                }))
            }
            Rows::F32(rows) => {
                let input = Input {
                    cost_budget,
                    ..Input::new(query, rows)
                        .with_ids(ids)
                        .with_relevance(relevance)
                };
                // The int8 pursuit where `select_spec` runs it (a pursuit
                // whose passes Auto puts on int8); it returns the f32
                // pursuit's selection bit for bit, and the f32 pursuit where
                // Auto chooses it, as here.
                if let (Some(int8), Method::Pursuit(options)) = (&self.int8, method) {
                    if Int8Passes::Auto.uses_int8(ids.len(), d, budget) {
                        int8.gather(d, ids, &mut g.int8);
                        let q = &g.int8;
                        let pool =
                            Int8Pool::from_parts(&q.codes, &q.scales, &q.errors, &q.norms, d)
                                .map_err(CallError::Select)?;
                        let p = ids.len();
                        let mut ws = selector.workspace(p, budget.min(p));
                        let sel = mempursuit_core::pursuit_int8_using(
                            &input,
                            &pool,
                            budget,
                            options,
                            Int8Passes::Auto,
                            &mut ws,
                            executor,
                        )?;
                        return Ok(sel.into());
                    }
                }
                Ok(selector.select_with(&input, budget, method, executor)?)
            }
            #[cfg(feature = "half")]
            Rows::F16(rows) => {
                let input = Input {
                    cost_budget,
                    ..Input::with_storage(query, &rows[..])
                        .with_ids(ids)
                        .with_relevance(relevance)
                };
                Ok(selector.select_with(&input, budget, method, executor)?)
            }
            #[cfg(feature = "half")]
            Rows::Bf16(rows) => {
                let input = Input {
                    cost_budget,
                    ..Input::with_storage(query, &rows[..])
                        .with_ids(ids)
                        .with_relevance(relevance)
                };
                Ok(selector.select_with(&input, budget, method, executor)?)
            }
        }
    }

    /// [`Store::select`] for many calls on up to `threads` threads (0: one
    /// per available core); results in the order of `calls`, each the
    /// result of [`Store::select`] bit for bit. The threads are spent as
    /// [`select_batch`](crate::parallel::select_batch) spends them
    /// ([`BatchPlan::Auto`]: whole calls per thread while a gathered pool
    /// fits in a core's L2 cache, each call's passes split over threads
    /// when it does not, and whole calls again when a split waits for a
    /// preempted thread); see [`Store::select_batch_report`].
    ///
    /// # Panics
    /// If a thread cannot be spawned.
    pub fn select_batch(
        &self,
        spec: &SelectSpec,
        calls: &[StoreCall<'_>],
        budget: usize,
        threads: usize,
    ) -> Vec<Result<Selection, CallError>> {
        self.select_batch_report(spec, calls, budget, threads).0
    }

    /// [`Store::select_batch`], also saying how the batch ran
    /// ([`BatchReport`]: the thread plan, for the median pool of P · d
    /// values in the storage's bytes (f32's for int8, whose calls read the
    /// f32 rows too), and the groups that fell back to whole calls).
    ///
    /// # Panics
    /// If a thread cannot be spawned.
    pub fn select_batch_report(
        &self,
        spec: &SelectSpec,
        calls: &[StoreCall<'_>],
        budget: usize,
        threads: usize,
    ) -> (Vec<Result<Selection, CallError>>, BatchReport) {
        let threads = match threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        // A specification that fails fails every call: no threads to split.
        let splits = self
            .spec_for(spec)
            .ok()
            .and_then(|s| s.method().ok())
            .is_some_and(|m| crate::parallel::splits(&m));
        let plan = if splits {
            BatchPlan::Auto
        } else {
            BatchPlan::Queries
        };
        let value_bytes = match self.storage {
            Storage::F16 | Storage::Bf16 => 2,
            _ => 4,
        };
        let mut sizes: Vec<usize> = calls.iter().map(|c| c.ids.len()).collect();
        sizes.sort_unstable();
        let p = sizes.get(sizes.len() / 2).copied().unwrap_or(0);
        let shape = BatchShape {
            pool_bytes: p.saturating_mul(self.dim).saturating_mul(value_bytes),
            queries: calls.len(),
            budget,
        };
        let thread_plan = plan.resolve(&shape, threads, &CacheInfo::detect());
        crate::parallel::run_planned(calls.len(), thread_plan, plan, &|selector, i, executor| {
            self.select_with(selector, spec, calls[i], budget, executor)
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

    /// The query's length and the ids.
    fn check_call(&self, call: &StoreCall<'_>) -> Result<(), StoreError> {
        if call.query.len() != self.dim {
            return Err(StoreError::QueryLength {
                len: call.query.len(),
                dim: self.dim,
            });
        }
        let len = self.len;
        match call.ids.iter().enumerate().find(|(_, &id)| id >= len) {
            Some((position, &id)) => Err(StoreError::Id { position, id, len }),
            None => Ok(()),
        }
    }
}

/// `rows` (rows of `d`, already checked in f32; the first is store row
/// `first`) rounded to `storage` as `select_spec` rounds them, refusing a
/// finite value that rounds to infinity, a row that rounds to all zeros
/// (naming its element of largest magnitude) and a rounded row out of the
/// norm range.
#[cfg(feature = "half")]
fn narrow_rows<T: Copy>(
    rows: &[f32],
    d: usize,
    first: usize,
    storage: Storage,
    round: impl Fn(f32) -> T,
    widen: impl Fn(T) -> f32,
    is_infinite: impl Fn(T) -> bool,
) -> Result<Vec<T>, StoreError> {
    let out = crate::call::narrow(rows, d, storage, round, is_infinite).map_err(|e| {
        StoreError::Storage(StorageError {
            row: first + e.row,
            ..e
        })
    })?;
    let mut wide = vec![0.0f32; d];
    for (i, (row, narrowed)) in rows.chunks_exact(d).zip(out.chunks_exact(d)).enumerate() {
        let at = first + i;
        for (w, &y) in wide.iter_mut().zip(narrowed) {
            *w = widen(y);
        }
        if wide.iter().all(|&w| w == 0.0) {
            let (index, &value) = row
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
                .expect("d ≥ 1");
            return Err(StoreError::Storage(StorageError {
                row: at,
                index,
                value,
                storage,
                fault: StorageFault::Underflow,
            }));
        }
        check_row(&wide).map_err(|fault| StoreError::Row { row: at, fault })?;
    }
    Ok(out)
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
