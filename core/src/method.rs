//! One selector call with its parameters: [`Method`] names the method
//! (MemPursuit and its family, top-K, MMR) and [`Method::run`] is the single
//! dispatch to the core's functions, shared by the `mempursuit` crate's
//! `Selector`, its thread-split path, the WebAssembly and Python bindings
//! and the benchmarks.

use crate::baselines::{mmr_with, top_k_with};
use crate::error::Error;
use crate::input::Input;
use crate::kernels::{Element, Executor, Serial};
use crate::options::{InputPolicy, MmrOptions, PursuitOptions};
use crate::pursuit::pursuit_with;
use crate::recommend::recommended_with;
use crate::scratch::{ScratchKind, ScratchSize};
use crate::selection::SelectionView;
use crate::workspace::Workspace;

/// Which selector to run, with its parameters.
///
/// ```
/// use mempursuit_core::{FixedWorkspace, Input, Method, PursuitOptions};
/// let s = core::f32::consts::FRAC_1_SQRT_2;
/// let (query, pool) = ([s, s], [0.9950f32, 0.0998, 0.9998, 0.0200, 0.0, 1.0]);
/// let mut storage = FixedWorkspace::<8, 4>::new();
/// let mut ws = storage.view();
/// let method = Method::Pursuit(PursuitOptions::default());
/// let sel = method.run(&Input::new(&query, &pool), 2, &mut ws)?;
/// assert_eq!(sel.picks(), &[0, 2]);
/// # Ok::<(), mempursuit_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Method {
    /// MemPursuit (Eqs. 5, 6, 9) or a member of its relevance-scaled family
    /// ([`pursuit`](crate::pursuit)).
    Pursuit(PursuitOptions),
    /// Top-K by relevance ([`top_k`](crate::top_k)).
    TopK(InputPolicy),
    /// Maximal marginal relevance ([`mmr`](crate::mmr)).
    Mmr(MmrOptions),
    /// The recommended setting ([`recommended`](crate::recommended)):
    /// centroid pursuit on unit-free relevance with a per-pool, per-budget
    /// γ from a measured rule; needs no tuning. Not nested: the picks for K
    /// are not always a prefix of those for a larger K.
    Recommended(InputPolicy),
}

impl Default for Method {
    /// The recommended setting, [`Method::recommended()`]: the method to use
    /// without tuning. The paper's method is
    /// `Method::Pursuit(PursuitOptions::PAPER)`.
    fn default() -> Self {
        Method::recommended()
    }
}

impl Method {
    /// The recommended selector with the default input policy
    /// ([`Method::Recommended`]).
    pub const fn recommended() -> Method {
        Method::Recommended(PursuitOptions::PAPER.input)
    }

    /// Whether the selection for a budget K is always the first K picks of
    /// the selection for any larger budget: top-K, MMR and the pursuit with
    /// a fixed budget are; adaptive stopping and [`Method::Recommended`]
    /// (whose γ depends on K) are not.
    pub fn is_nested(&self) -> bool {
        match self {
            Method::Pursuit(o) => o.stopping == crate::options::Stopping::FixedBudget,
            Method::TopK(_) | Method::Mmr(_) => true,
            Method::Recommended(_) => false,
        }
    }

    /// Runs this selector on `input` with budget K in the caller's
    /// workspace, allocating nothing. The result borrows `ws`.
    ///
    /// # Errors
    /// The selector's errors ([`Error`]), including
    /// [`Error::CapacityExceeded`] when `ws` is smaller than (P, min(K, P)).
    pub fn run<'w, E: Element>(
        &self,
        input: &Input<'_, E>,
        budget: usize,
        ws: &'w mut Workspace<'_>,
    ) -> Result<SelectionView<'w>, Error> {
        self.run_with(input, budget, ws, &mut Serial)
    }

    /// [`Method::run`] with the pursuit's passes over the candidate matrix
    /// cut into row ranges that `executor` may run on several threads (see
    /// [`Executor`]), on the instruction set it names
    /// ([`Executor::isa`]); with the same instruction set, bit-identical
    /// to [`Method::run`] whatever the split.
    ///
    /// # Errors
    /// As [`Method::run`].
    pub fn run_with<'w, E: Element>(
        &self,
        input: &Input<'_, E>,
        budget: usize,
        ws: &'w mut Workspace<'_>,
        executor: &mut dyn Executor,
    ) -> Result<SelectionView<'w>, Error> {
        match self {
            Method::Pursuit(o) => pursuit_with(input, budget, o, ws, executor),
            Method::TopK(p) => top_k_with(input, budget, p, ws, executor),
            Method::Mmr(o) => mmr_with(input, budget, o, ws, executor),
            Method::Recommended(p) => recommended_with(input, budget, p, ws, executor),
        }
    }

    /// The input policy of this method.
    pub fn input_policy(&self) -> InputPolicy {
        match self {
            Method::Pursuit(o) => o.input,
            Method::TopK(p) => *p,
            Method::Mmr(o) => o.input,
            Method::Recommended(p) => *p,
        }
    }

    /// Whether the selection carries simplex weights (the pursuit family
    /// does; top-K and MMR do not).
    pub fn has_weights(&self) -> bool {
        matches!(self, Method::Pursuit(_) | Method::Recommended(_))
    }
}

impl ScratchKind {
    /// The smallest kind that runs `method`.
    pub fn of(method: &Method) -> ScratchKind {
        match method {
            Method::Pursuit(o) if o.is_centroid() => ScratchKind::Centroid,
            Method::Pursuit(_) => ScratchKind::Pursuit,
            Method::TopK(_) => ScratchKind::TopK,
            Method::Mmr(_) | Method::Recommended(_) => ScratchKind::Centroid,
        }
    }
}

impl ScratchSize {
    /// Scratch for `method` on pools of up to `max_pool` candidates and
    /// budgets of up to `max_budget` picks:
    /// [`for_kind`](Self::for_kind) of [`ScratchKind::of`]`(method)`.
    /// Returns `None` if a count or the total byte size overflows `usize`.
    #[must_use]
    pub fn for_method(method: &Method, max_pool: usize, max_budget: usize) -> Option<Self> {
        Self::for_kind(ScratchKind::of(method), max_pool, max_budget)
    }
}
