//! A heap-backed, reusable workspace and owned results.

use mempursuit_core::{
    Element, Error, Executor, Input, Int8Passes, Method, ScratchBuffers, ScratchKind, ScratchSize,
    SelectionView, Serial, Step, StopReason, Workspace,
};

/// An owned selection: picks in entry order, weights (empty for the
/// baselines), one [`Step`] per pick, the stop reason, excluded rows and
/// skipped candidates.
///
/// Serde (feature `serde`) writes only what the method computed: for top-K
/// and MMR (empty `weights` with at least one pick) the fields `weights` and
/// `skipped` are left out and each step is `{"index", "score"}` only — their
/// `residual_sq`, `fw_gap`, `nu`, ... are not computed, and a written 0
/// would read as a real value. Reading accepts both forms; a left-out field
/// reads as empty / 0.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[must_use]
pub struct Selection {
    /// Pool indices in entry order.
    pub picks: Vec<usize>,
    /// Simplex weights aligned with `picks` (empty for top-K and MMR).
    #[cfg_attr(feature = "serde", serde(default))]
    pub weights: Vec<f64>,
    /// Per-step records aligned with `picks`.
    pub steps: Vec<Step>,
    /// Why the selection ended.
    pub stop: StopReason,
    /// Candidate rows excluded as unusable (ascending).
    pub excluded: Vec<usize>,
    /// Candidates skipped as already represented by the picks (ascending).
    /// Under [`DependentPicks::Skip`](mempursuit_core::DependentPicks::Skip)
    /// they are never picked. Under the recommended setting they are the
    /// exact copies it merged (never picked) and the near-copies of its picks
    /// that it deferred and did not reach: a near-copy it takes at the end,
    /// when nothing else is left, is a pick (its step `dependent`) and not
    /// listed here, so `skipped` depends on K
    /// ([`recommended`](mempursuit_core::recommended)).
    #[cfg_attr(feature = "serde", serde(default))]
    pub skipped: Vec<usize>,
}

impl Selection {
    /// Whether this is a baseline's result (top-K or MMR): picks without
    /// weights. Its steps carry only `index` and `score`.
    pub fn is_baseline(&self) -> bool {
        self.weights.is_empty() && !self.picks.is_empty()
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Selection {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeSeq, SerializeStruct};

        /// A baseline's step: what top-K and MMR compute.
        struct BaselineSteps<'a>(&'a [Step]);

        impl serde::Serialize for BaselineSteps<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                #[derive(serde::Serialize)]
                struct BaselineStep {
                    index: usize,
                    score: f64,
                }
                let mut seq = s.serialize_seq(Some(self.0.len()))?;
                for step in self.0 {
                    seq.serialize_element(&BaselineStep {
                        index: step.index,
                        score: step.score,
                    })?;
                }
                seq.end()
            }
        }

        let baseline = self.is_baseline();
        // Exhaustive on purpose: a new field fails to compile here until it
        // is serialized too.
        let Selection {
            picks,
            weights,
            steps,
            stop,
            excluded,
            skipped,
        } = self;
        let mut st = s.serialize_struct("Selection", if baseline { 4 } else { 6 })?;
        st.serialize_field("picks", picks)?;
        if baseline {
            st.skip_field("weights")?;
            st.serialize_field("steps", &BaselineSteps(steps))?;
        } else {
            st.serialize_field("weights", weights)?;
            st.serialize_field("steps", steps)?;
        }
        st.serialize_field("stop", stop)?;
        st.serialize_field("excluded", excluded)?;
        if baseline {
            st.skip_field("skipped")?;
        } else {
            st.serialize_field("skipped", skipped)?;
        }
        st.end()
    }
}

impl From<SelectionView<'_>> for Selection {
    fn from(s: SelectionView<'_>) -> Self {
        Selection {
            picks: s.picks().to_vec(),
            weights: s.weights().to_vec(),
            steps: s.steps().to_vec(),
            stop: s.stop_reason(),
            excluded: s.excluded().collect(),
            skipped: s.skipped().collect(),
        }
    }
}

/// A reusable, heap-backed workspace: grows to the largest shape it has seen
/// and never shrinks, so repeated calls of similar shape allocate only for
/// their owned results ([`Selector::select`]) or not at all
/// ([`Selector::workspace`] with the core's functions).
///
/// ```
/// use mempursuit::{Input, Method, PursuitOptions, Selector};
/// // Rows 0 and 1 paraphrase fact A; row 2 states fact B.
/// let s = std::f32::consts::FRAC_1_SQRT_2;
/// let query = [s, s];
/// let pool = [0.9950, 0.0998, 0.9998, 0.0200, 0.0, 1.0];
/// let mut selector = Selector::new();
/// let sel = selector.select(&Input::new(&query, &pool), 2, &Method::Pursuit(PursuitOptions::default()))?;
/// assert_eq!(sel.picks, vec![0, 2]);
/// assert!((sel.weights.iter().sum::<f64>() - 1.0).abs() < 1e-12);
/// # Ok::<(), mempursuit::Error>(())
/// ```
///
/// Its `Debug` output shows the capacity and the bytes held, not the
/// buffers' contents.
#[derive(Default, Clone)]
pub struct Selector {
    f32s: Vec<f32>,
    f64s: Vec<f64>,
    indices: Vec<usize>,
    flags: Vec<u8>,
    steps: Vec<Step>,
    max_pool: usize,
    max_budget: usize,
    /// The rows a [`Store`](crate::Store) call gathers, reused across calls.
    pub(crate) gathered: crate::store::Gathered,
}

impl std::fmt::Debug for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bytes = std::mem::size_of_val(self.f32s.as_slice())
            + std::mem::size_of_val(self.f64s.as_slice())
            + std::mem::size_of_val(self.indices.as_slice())
            + self.flags.len()
            + std::mem::size_of_val(self.steps.as_slice());
        f.debug_struct("Selector")
            .field("max_pool", &self.max_pool)
            .field("max_budget", &self.max_budget)
            .field("bytes", &bytes)
            .finish_non_exhaustive()
    }
}

impl Selector {
    /// An empty selector; buffers are allocated on first use.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A selector with room for pools of `max_pool` and budgets of
    /// `max_budget` (no allocation on later calls within that shape).
    ///
    /// # Panics
    /// As [`Selector::reserve`]: if the scratch size overflows `usize` or
    /// the allocation fails ([`Selector::try_reserve`] reports both).
    #[must_use]
    pub fn with_capacity(max_pool: usize, max_budget: usize) -> Self {
        let mut s = Self::new();
        s.reserve(max_pool, max_budget);
        s
    }

    /// Grows the buffers to hold at least (`pool`, `budget`).
    ///
    /// # Panics
    /// If the scratch size overflows `usize` (a pool × budget beyond any
    /// addressable memory) or the allocation fails; [`Selector::try_reserve`]
    /// reports both instead.
    pub fn reserve(&mut self, pool: usize, budget: usize) {
        if let Err(e) = self.try_reserve(pool, budget) {
            panic!("{e}");
        }
    }

    /// Grows the buffers to hold at least (`pool`, `budget`), reporting a
    /// size that overflows `usize` or an allocation that fails instead of
    /// panicking or aborting (for hosts with little memory, such as
    /// WebAssembly, where either would end the whole module). On error the
    /// selector keeps its previous capacity and stays usable.
    ///
    /// # Errors
    /// [`ReserveError`] naming the shape.
    pub fn try_reserve(&mut self, pool: usize, budget: usize) -> Result<(), ReserveError> {
        let pool = pool.max(self.max_pool);
        let budget = budget.max(self.max_budget);
        if pool == self.max_pool && budget == self.max_budget && !self.steps.is_empty() {
            return Ok(());
        }
        let error = |bytes| ReserveError {
            pool,
            budget,
            bytes,
        };
        let need = ScratchSize::for_capacity(pool, budget).ok_or(error(None))?;
        let bytes = Some(need.bytes());
        grow(&mut self.f32s, need.f32s, 0.0).map_err(|()| error(bytes))?;
        grow(&mut self.f64s, need.f64s, 0.0).map_err(|()| error(bytes))?;
        grow(&mut self.indices, need.indices, 0).map_err(|()| error(bytes))?;
        grow(&mut self.flags, need.flags, 0).map_err(|()| error(bytes))?;
        grow(&mut self.steps, need.steps.max(1), Step::default()).map_err(|()| error(bytes))?;
        self.max_pool = pool;
        self.max_budget = budget;
        Ok(())
    }

    /// A core [`Workspace`] over these buffers, grown to hold (`pool`,
    /// `budget`) first: call [`Method::run`] or the core's [`pursuit`](mempursuit_core::pursuit), [`top_k`](mempursuit_core::top_k) or [`mmr`](mempursuit_core::mmr)
    /// on it for a call that allocates nothing.
    ///
    /// # Panics
    /// As [`Selector::reserve`]; [`Selector::try_workspace`] reports instead.
    #[must_use]
    pub fn workspace(&mut self, pool: usize, budget: usize) -> Workspace<'_> {
        self.reserve(pool, budget);
        self.view()
    }

    /// [`Selector::workspace`] with the growth of [`Selector::try_reserve`]:
    /// a size overflow or a failed allocation is an error, not a panic.
    ///
    /// # Errors
    /// [`ReserveError`] naming the shape.
    pub fn try_workspace(
        &mut self,
        pool: usize,
        budget: usize,
    ) -> Result<Workspace<'_>, ReserveError> {
        self.try_reserve(pool, budget)?;
        Ok(self.view())
    }

    fn view(&mut self) -> Workspace<'_> {
        Workspace::from_buffers(
            ScratchKind::Int8,
            self.max_pool,
            self.max_budget,
            ScratchBuffers {
                f32s: &mut self.f32s,
                f64s: &mut self.f64s,
                indices: &mut self.indices,
                flags: &mut self.flags,
                steps: &mut self.steps,
            },
        )
        .expect("buffers sized by ScratchSize::for_capacity")
    }

    /// Runs `method` on `input` (candidates in any [`Element`] storage) with
    /// budget K and returns an owned result.
    ///
    /// # Errors
    /// The core's input errors ([`Error`]); capacity is never exceeded since
    /// the buffers grow to fit, and a shape whose scratch size overflows
    /// `usize` is [`Error::ScratchOverflow`].
    ///
    /// # Panics
    /// Like `Vec`, if the allocation of the scratch fails (use
    /// [`Selector::try_reserve`] first to get an error instead).
    pub fn select<E: Element>(
        &mut self,
        input: &Input<'_, E>,
        budget: usize,
        method: &Method,
    ) -> Result<Selection, Error> {
        self.select_with(input, budget, method, &mut Serial)
    }

    /// [`Selector::select`] with the passes over the candidate matrix cut
    /// into row ranges that `executor` may run on several threads
    /// ([`Method::run_with`]; e.g. a
    /// [`SplitPool`](crate::parallel::SplitPool)): the same result, bit for
    /// bit.
    ///
    /// # Errors
    /// As [`Selector::select`].
    ///
    /// # Panics
    /// As [`Selector::select`].
    pub fn select_with<E: Element>(
        &mut self,
        input: &Input<'_, E>,
        budget: usize,
        method: &Method,
        executor: &mut dyn Executor,
    ) -> Result<Selection, Error> {
        let pool = input.pool_size().unwrap_or(0);
        let mut ws = match self.try_workspace(pool, budget.min(pool)) {
            Ok(ws) => ws,
            Err(ReserveError {
                pool,
                budget,
                bytes: None,
            }) => {
                return Err(Error::ScratchOverflow {
                    max_pool: pool,
                    max_budget: budget,
                })
            }
            Err(e) => panic!("{e}"),
        };
        Ok(method.run_with(input, budget, &mut ws, executor)?.into())
    }

    /// The certified int8 pursuit ([`pursuit_int8`](mempursuit_core::pursuit_int8))
    /// on `input` with the int8 copy `pool` of its candidates: the f32
    /// pursuit's selection ([`Method::Pursuit`] with the same `options`), bit
    /// for bit but for [`Step::verified`](mempursuit_core::Step::verified),
    /// with every pick's pass reading int8 codes where that is faster.
    ///
    /// # When it pays
    /// The int8 passes read a quarter of the bytes, but verifying the
    /// candidates that might win costs extra f32 dot products (about K² of
    /// them per query, more on clustered pools). So this runs them only
    /// where measured faster on every pool kind measured: f32 rows that do
    /// not fit in the L2 cache, d ≥ 1536, K ≤ 20 and P ≥ 400 + K²/4 (AVX2,
    /// AVX-VNNI or AVX-512 VNNI), and the f32 pursuit elsewhere
    /// ([`Int8Passes::auto_rule`](mempursuit_core::Int8Passes::auto_rule));
    /// [`Selector::select_int8_using`] chooses. The measurements and their
    /// commands: BENCHMARKS.md, "Certified int8 pursuit".
    ///
    /// # Errors
    /// The core's input errors, and [`Error::Int8Length`] when `pool` does
    /// not have the input's shape.
    pub fn select_int8(
        &mut self,
        input: &Input<'_>,
        pool: &crate::Int8Candidates,
        budget: usize,
        options: &mempursuit_core::PursuitOptions,
    ) -> Result<Selection, Error> {
        self.select_int8_using(input, pool, budget, options, Int8Passes::Auto)
    }

    /// [`Selector::select_int8`] with the passes chosen by the caller
    /// (`Int8Passes::Int8` always streams the int8 codes).
    ///
    /// # Errors
    /// As [`Selector::select_int8`].
    pub fn select_int8_using(
        &mut self,
        input: &Input<'_>,
        pool: &crate::Int8Candidates,
        budget: usize,
        options: &mempursuit_core::PursuitOptions,
        passes: Int8Passes,
    ) -> Result<Selection, Error> {
        self.select_int8_with(input, pool, budget, options, passes, &mut Serial)
    }

    /// [`Selector::select_int8_using`] with the query pass and the f32
    /// verification run by `executor` (its parts and its instruction set,
    /// [`Executor::isa`]).
    ///
    /// # Errors
    /// As [`Selector::select_int8`].
    pub fn select_int8_with(
        &mut self,
        input: &Input<'_>,
        pool: &crate::Int8Candidates,
        budget: usize,
        options: &mempursuit_core::PursuitOptions,
        passes: Int8Passes,
        executor: &mut dyn Executor,
    ) -> Result<Selection, Error> {
        let p = input.pool_size().unwrap_or(0);
        let mut ws = self.workspace(p, budget.min(p));
        let view = pool.view();
        let sel = mempursuit_core::pursuit_int8_using(
            input, &view, budget, options, passes, &mut ws, executor,
        )?;
        Ok(sel.into())
    }
}

/// Grows `v` to `n` elements, reporting an allocation failure instead of
/// aborting.
fn grow<T: Clone>(v: &mut Vec<T>, n: usize, fill: T) -> Result<(), ()> {
    if v.len() < n {
        v.try_reserve_exact(n - v.len()).map_err(|_| ())?;
        v.resize(n, fill);
    }
    Ok(())
}

/// A [`Selector`] could not grow its buffers to the scratch of a shape
/// ([`Selector::try_reserve`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReserveError {
    /// The pool capacity P_max asked for.
    pub pool: usize,
    /// The budget capacity K_max asked for.
    pub budget: usize,
    /// The scratch size in bytes ([`ScratchSize::bytes`]), or `None` if it
    /// overflows `usize` (the shape cannot exist on this target).
    pub bytes: Option<usize>,
}

impl ReserveError {
    /// [`ErrorKind::Capacity`](mempursuit_core::ErrorKind::Capacity).
    pub const fn kind(&self) -> mempursuit_core::ErrorKind {
        mempursuit_core::ErrorKind::Capacity
    }
}

impl std::fmt::Display for ReserveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (p, k) = (self.pool, self.budget);
        match self.bytes {
            None => write!(
                f,
                "the scratch for P = {p}, K = {k} overflows the address space; use a smaller pool or budget"
            ),
            Some(bytes) => write!(
                f,
                "cannot allocate {bytes} bytes of scratch for P = {p}, K = {k}; use a smaller pool or budget"
            ),
        }
    }
}

impl std::error::Error for ReserveError {}

#[cfg(test)]
mod tests {
    use super::*;
    use mempursuit_core::PursuitOptions;

    #[test]
    fn try_reserve_reports_an_overflowing_shape_and_keeps_the_selector_usable() {
        let mut selector = Selector::new();
        let err = selector.try_reserve(usize::MAX / 4, 8).unwrap_err();
        assert_eq!(
            err,
            ReserveError {
                pool: usize::MAX / 4,
                budget: 8,
                bytes: None
            }
        );
        assert_eq!(
            err.to_string(),
            format!(
                "the scratch for P = {}, K = 8 overflows the address space; use a smaller pool or budget",
                usize::MAX / 4
            )
        );
        let s = std::f32::consts::FRAC_1_SQRT_2;
        let (query, pool) = ([s, s], [0.9950f32, 0.0998, 0.9998, 0.0200, 0.0, 1.0]);
        let mut ws = selector.try_workspace(3, 2).unwrap();
        assert_eq!((ws.max_pool(), ws.max_budget()), (3, 2));
        let method = Method::Pursuit(PursuitOptions::default());
        let sel = method.run(&Input::new(&query, &pool), 2, &mut ws).unwrap();
        assert_eq!(sel.picks(), &[0, 2]);
    }
}
