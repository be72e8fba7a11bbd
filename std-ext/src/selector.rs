//! A heap-backed, reusable workspace and owned results.

use mempursuit_core::{
    Element, Error, Input, Method, ScratchSize, SelectionView, Step, StopReason, Workspace,
};

/// An owned selection: picks in entry order, weights (empty for the
/// baselines), one [`Step`] per pick, the stop reason, excluded rows and
/// skipped candidates.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[must_use]
pub struct Selection {
    /// Pool indices in entry order.
    pub picks: Vec<usize>,
    /// Simplex weights aligned with `picks` (empty for top-K and MMR).
    pub weights: Vec<f64>,
    /// Per-step records aligned with `picks`.
    pub steps: Vec<Step>,
    /// Why the selection ended.
    pub stop: StopReason,
    /// Candidate rows excluded as unusable (ascending).
    pub excluded: Vec<usize>,
    /// Candidates skipped as already represented by the free set
    /// (ascending; only under
    /// [`DependentPicks::Skip`](mempursuit_core::DependentPicks::Skip)).
    #[cfg_attr(feature = "serde", serde(default))]
    pub skipped: Vec<usize>,
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
    steps: Vec<Step>,
    max_pool: usize,
    max_budget: usize,
}

impl std::fmt::Debug for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bytes = std::mem::size_of_val(self.f32s.as_slice())
            + std::mem::size_of_val(self.f64s.as_slice())
            + std::mem::size_of_val(self.indices.as_slice())
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
    /// If the scratch size of (`max_pool`, `max_budget`) overflows `usize`
    /// (a pool × budget beyond any addressable memory; see
    /// [`try_reserve`](Self::try_reserve) for the fallible form), or, like
    /// `Vec`, if the allocation fails.
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
    /// addressable memory; [`try_reserve`](Self::try_reserve) returns an
    /// error instead), or, like `Vec`, if the allocation fails.
    pub fn reserve(&mut self, pool: usize, budget: usize) {
        if let Err(e) = self.try_reserve(pool, budget) {
            panic!("Selector::reserve: {e}");
        }
    }

    /// Grows the buffers to hold at least (`pool`, `budget`).
    ///
    /// # Errors
    /// [`Error::ScratchOverflow`] (nothing changed) if the scratch size
    /// overflows `usize`.
    pub fn try_reserve(&mut self, pool: usize, budget: usize) -> Result<(), Error> {
        let pool = pool.max(self.max_pool);
        let budget = budget.max(self.max_budget);
        if pool == self.max_pool && budget == self.max_budget && !self.steps.is_empty() {
            return Ok(());
        }
        let need = ScratchSize::for_capacity(pool, budget).ok_or(Error::ScratchOverflow {
            max_pool: pool,
            max_budget: budget,
        })?;
        self.f32s.resize(need.f32s, 0.0);
        self.f64s.resize(need.f64s, 0.0);
        self.indices.resize(need.indices, 0);
        self.steps.resize(need.steps.max(1), Step::default());
        self.max_pool = pool;
        self.max_budget = budget;
        Ok(())
    }

    /// A core [`Workspace`] over these buffers, grown to hold (`pool`,
    /// `budget`) first: call [`Method::run`] or the core's [`pursuit`](mempursuit_core::pursuit), [`top_k`](mempursuit_core::top_k) or [`mmr`](mempursuit_core::mmr)
    /// on it for a call that allocates nothing.
    ///
    /// # Panics
    /// As [`reserve`](Self::reserve): if the scratch size of (`pool`,
    /// `budget`) overflows `usize`; [`try_workspace`](Self::try_workspace)
    /// returns an error instead.
    #[must_use]
    pub fn workspace(&mut self, pool: usize, budget: usize) -> Workspace<'_> {
        match self.try_workspace(pool, budget) {
            Ok(ws) => ws,
            Err(e) => panic!("Selector::workspace: {e}"),
        }
    }

    /// [`workspace`](Self::workspace) without the panic.
    ///
    /// # Errors
    /// [`Error::ScratchOverflow`] if the scratch size of (`pool`, `budget`)
    /// overflows `usize`.
    pub fn try_workspace(&mut self, pool: usize, budget: usize) -> Result<Workspace<'_>, Error> {
        self.try_reserve(pool, budget)?;
        // Cannot fail: the buffers were just sized by
        // `ScratchSize::for_capacity(max_pool, max_budget)`.
        Workspace::from_buffers(
            self.max_pool,
            self.max_budget,
            &mut self.f32s,
            &mut self.f64s,
            &mut self.indices,
            &mut self.steps,
        )
    }

    /// Runs `method` on `input` (candidates in any [`Element`] storage) with
    /// budget K and returns an owned result.
    ///
    /// # Errors
    /// The core's input errors ([`Error`]); capacity is never exceeded since
    /// the buffers grow to fit.
    pub fn select<E: Element>(
        &mut self,
        input: &Input<'_, E>,
        budget: usize,
        method: &Method,
    ) -> Result<Selection, Error> {
        let pool = input.pool_size().unwrap_or(0);
        let mut ws = self.try_workspace(pool, budget.min(pool))?;
        Ok(method.run(input, budget, &mut ws)?.into())
    }
}
