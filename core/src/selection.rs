//! The result of a selector: picks in entry order, weights, one record per
//! step, and why the selection stopped; and the per-candidate state a
//! selection keeps ([`CandidateState`]).

/// What a candidate is during and after one selection (one byte per
/// candidate in the workspace, see [`States`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub(crate) enum CandidateState {
    /// Usable and not picked yet.
    #[default]
    Available = 0,
    /// Picked.
    Selected = 1,
    /// Unusable row excluded by the input policy
    /// ([`InvalidCandidates::Exclude`](crate::InvalidCandidates::Exclude)).
    Excluded = 2,
    /// Skipped as already represented by the free set
    /// ([`DependentPicks::Skip`](crate::DependentPicks::Skip)).
    Skipped = 3,
    /// Its cost no longer fits the rest of the cost budget
    /// ([`CostBudget`](crate::CostBudget)).
    OverBudget = 4,
}

impl CandidateState {
    #[inline(always)]
    fn from_byte(b: u8) -> CandidateState {
        match b {
            0 => CandidateState::Available,
            1 => CandidateState::Selected,
            2 => CandidateState::Excluded,
            3 => CandidateState::Skipped,
            _ => CandidateState::OverBudget,
        }
    }
}

/// The candidates' states, one byte each (the workspace's byte buffer),
/// read and written only as [`CandidateState`]s.
pub(crate) struct States<'a>(&'a mut [u8]);

impl<'a> States<'a> {
    pub(crate) fn new(bytes: &'a mut [u8]) -> Self {
        States(bytes)
    }

    /// The state of candidate `i`.
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> CandidateState {
        CandidateState::from_byte(self.0[i])
    }

    /// Sets the state of candidate `i`.
    #[inline(always)]
    pub(crate) fn set(&mut self, i: usize, s: CandidateState) {
        self.0[i] = s as u8;
    }

    /// Whether candidate `i` can still be picked.
    #[inline(always)]
    pub(crate) fn is_available(&self, i: usize) -> bool {
        self.0[i] == CandidateState::Available as u8
    }

    /// The states of candidates `0..n`, read-only (for a result view).
    pub(crate) fn view(&self, n: usize) -> StatesView<'_> {
        StatesView(&self.0[..n])
    }
}

/// Read-only candidate states (a result's view of [`States`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct StatesView<'a>(&'a [u8]);

impl<'a> StatesView<'a> {
    /// The candidates in state `s`, ascending.
    fn with(self, s: CandidateState) -> impl Iterator<Item = usize> + 'a {
        self.0
            .iter()
            .enumerate()
            .filter(move |(_, &b)| b == s as u8)
            .map(|(i, _)| i)
    }
}

/// Why a selection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum StopReason {
    /// K memories were selected (also for K = 0).
    #[default]
    Budget,
    /// Adaptive stopping fired (paper Eq. 7): `patience` consecutive steps
    /// improved the residual by at most τ.
    Adaptive,
    /// No selectable candidate was left before the budget: fewer than K
    /// picks because the pool has fewer than K rows (K > P: all P came
    /// back, or fewer for the reasons that follow), or candidates were
    /// excluded
    /// ([`InvalidCandidates::Exclude`](crate::InvalidCandidates::Exclude)),
    /// skipped as dependent on the picks
    /// ([`DependentPicks::Skip`](crate::DependentPicks::Skip)), or merged as
    /// exact duplicates by the recommended setting (an exact copy of a
    /// memory is never picked, so a pool of P rows with c exact copies
    /// gives at most P − c picks).
    PoolExhausted,
    /// The Frank–Wolfe gap reached the tolerance and
    /// [`AtPoolOptimum::Stop`](crate::AtPoolOptimum::Stop) was set.
    PoolOptimum,
    /// No candidate left fits the rest of the cost budget
    /// ([`CostBudget`](crate::CostBudget)) before K picks: some candidate
    /// would have been picked next without it.
    CostBudget,
}

impl StopReason {
    /// Every stop reason, in declaration order.
    pub const ALL: [StopReason; 5] = [
        StopReason::Budget,
        StopReason::Adaptive,
        StopReason::PoolExhausted,
        StopReason::PoolOptimum,
        StopReason::CostBudget,
    ];

    /// The one spelling of this stop reason in every binding and in JSON:
    /// `"budget"`, `"adaptive"`, `"pool_exhausted"`, `"pool_optimum"` or
    /// `"cost_budget"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            StopReason::Budget => "budget",
            StopReason::Adaptive => "adaptive",
            StopReason::PoolExhausted => "pool_exhausted",
            StopReason::PoolOptimum => "pool_optimum",
            StopReason::CostBudget => "cost_budget",
        }
    }
}

impl core::fmt::Display for StopReason {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the refit of one pursuit step ended (Eq. 6). Every status leaves α
/// on the simplex (α ≥ 0, Σα = 1, no NaN); only [`RefitStatus::Optimal`]
/// guarantees that it is the minimizer. The Frank–Wolfe gap of the step
/// ([`Step::fw_gap`]) is a valid bound for the α returned whatever the status.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum RefitStatus {
    /// The KKT conditions (Eq. 15) hold on the selected set to the solver's
    /// tolerance (also every closed-form refit: the first pick, centroid
    /// pursuit, relevance fill).
    #[default]
    Optimal,
    /// The active-set iteration cap (4t + 16) ended the refit.
    IterationCap {
        /// Largest KKT violation max_{j∈S} (U_j − γκα_j − ν) ≥ 0 of the α
        /// returned.
        violation: f64,
    },
    /// A selected memory whose column is numerically dependent on the free
    /// set (pivot² ≤ [`PIVOT_TOLERANCE`](crate::PIVOT_TOLERANCE) · A_jj)
    /// could not enter it and keeps α = 0 although its score exceeds ν.
    Blocked {
        /// Pool index of the most violating blocked memory.
        index: usize,
        /// Its KKT violation U_j − ν > 0.
        violation: f64,
    },
    /// An equality solve produced a non-finite value; the refit stopped at
    /// the last feasible α.
    NumericalFailure {
        /// Largest KKT violation of the α returned.
        violation: f64,
    },
}

impl RefitStatus {
    /// The name of every status, by [`RefitStatus::index`]: what a binding
    /// that stores a status as a number (the JavaScript step records) or as
    /// fixed-width text (NumPy) lays out.
    pub const NAMES: [&'static str; 4] =
        ["optimal", "iteration_cap", "blocked", "numerical_failure"];

    /// The position of this status's name in [`RefitStatus::NAMES`].
    pub const fn index(&self) -> usize {
        match self {
            RefitStatus::Optimal => 0,
            RefitStatus::IterationCap { .. } => 1,
            RefitStatus::Blocked { .. } => 2,
            RefitStatus::NumericalFailure { .. } => 3,
        }
    }

    /// The one spelling of this status in every binding and in JSON:
    /// `"optimal"`, `"iteration_cap"`, `"blocked"` or `"numerical_failure"`.
    pub const fn as_str(&self) -> &'static str {
        Self::NAMES[self.index()]
    }

    /// The largest KKT violation this status reports (0 for
    /// [`RefitStatus::Optimal`]).
    pub const fn violation(&self) -> f64 {
        match *self {
            RefitStatus::Optimal => 0.0,
            RefitStatus::IterationCap { violation }
            | RefitStatus::Blocked { violation, .. }
            | RefitStatus::NumericalFailure { violation } => violation,
        }
    }
}

/// The record of one pursuit step (paper Eqs. 5, 7, 14, 25).
///
/// For the baselines ([`top_k`](crate::top_k), [`mmr`](crate::mmr)) only
/// `index` and `score` are meaningful and every other field is 0 (the
/// `mempursuit` crate's owned `Selection` leaves them out of its serde
/// form). Deserializing reads a left-out field as its `Default` (0).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
#[non_exhaustive]
pub struct Step {
    /// Pool index (row of the candidate matrix) picked at this step.
    pub index: usize,
    /// Its score at pick time: U = ρ − γ G_{i,S} α (Eq. 9; residual alignment
    /// m·r in paper mode), b for top-K, the MMR score for MMR. For a pick made
    /// by [`AtPoolOptimum::FillByRelevance`](crate::AtPoolOptimum), ρ.
    pub score: f64,
    /// L_t = ‖q − Σ_j α_j m_j‖² after the refit, without the ridge term
    /// (unit vectors, so L_0 = 1). Cosine units squared.
    pub residual_sq: f64,
    /// Δ_t = (L_{t−1} − L_t) / max(L_{t−1}, ε) (Eq. 7).
    pub improvement: f64,
    /// Frank–Wolfe gap g_S = max(0, max_i U_i − ν_S) after the refit,
    /// the maximum over every candidate, selected or not (Theorem B.2,
    /// Eq. 25; for a selected memory j its U_j − γκα_j, so a selected
    /// memory of weight 0 that violates KKT counts): 0 ≤ J(α) − F* ≤ g_S
    /// for the α returned, whatever [`refit`](Self::refit) says. For centroid pursuit
    /// (κ = ∞) the diagnostic g̃_S = max_{i∉S} U_i − mean_{j∈S} U_j, which is
    /// no certificate and may be negative.
    pub fw_gap: f64,
    /// ν_S = Σ_j α_j U_j − γκ‖α‖² (Eq. 14 with λ → γκ); the common value
    /// of U_j − γκ α_j on the free set. For κ = ∞: mean_{j∈S} U_j.
    pub nu: f64,
    /// Size of the free set F = {j ∈ S : α_j > 0} after the refit.
    pub free_size: usize,
    /// Active-set iterations of this refit (0 for the closed-form paths).
    pub solver_iterations: u32,
    /// Whether this pick was made by relevance fill after the pool optimum.
    pub filled: bool,
    /// Whether, at pick time, this memory was already represented by the
    /// picks (see [`DependentPicks`](crate::DependentPicks)): an exact
    /// duplicate of an earlier pick, or a point of the affine hull of the
    /// memories with positive weight, to within the refit's pivot
    /// tolerance. Such a pick usually keeps weight 0 and adds nothing new
    /// to the context:
    /// leave its text out of a prompt, or set
    /// [`DependentPicks::Skip`](crate::DependentPicks::Skip) to spend the
    /// budget on new evidence instead. Always false for the first pick,
    /// for centroid pursuit, top-K and MMR.
    #[cfg_attr(feature = "serde", serde(default))]
    pub dependent: bool,
    /// How this step's refit ended.
    #[cfg_attr(feature = "serde", serde(default))]
    pub refit: RefitStatus,
    /// Candidates whose score was computed exactly as the f32 pursuit
    /// computes it, to certify this pick ([`pursuit_int8`](crate::pursuit_int8):
    /// those whose int8 score interval could reach the best score, best
    /// bound first; ≥ 1 there, except 0 for the first pick and for
    /// relevance-fill picks, which ρ alone decides); with exact screening
    /// ([`Screening`](crate::Screening)) the candidates whose read score
    /// came within the f32 margins of the best (the pick's step, for a
    /// screened step; 0 for a dense one). 0 for the unscreened f32 pursuit
    /// and the baselines. A measure of work, not of the result: it can
    /// differ between CPUs whose selections are equal (whether
    /// [`Int8Passes::Auto`](crate::Int8Passes::Auto) runs the int8 passes
    /// depends on the int8 kernel and the L2 size).
    #[cfg_attr(feature = "serde", serde(default))]
    pub verified: u32,
}

/// The type of a [`Step`] field's value ([`StepField`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FieldType {
    /// A count or a pool index (exact in f64 up to 2^53).
    Integer,
    /// A real number (cosine units).
    Number,
    /// A boolean.
    Flag,
    /// A [`RefitStatus`]: its name, or its [`RefitStatus::index`] where a
    /// binding stores numbers.
    Refit,
}

/// The value of one [`Step`] field.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum FieldValue {
    /// [`FieldType::Integer`].
    Integer(u64),
    /// [`FieldType::Number`].
    Number(f64),
    /// [`FieldType::Flag`].
    Flag(bool),
    /// [`FieldType::Refit`].
    Refit(RefitStatus),
}

impl FieldValue {
    /// The value as an f64: an integer as is (exact up to 2^53), a flag as
    /// 0 or 1, a refit status as its [`RefitStatus::index`].
    pub fn as_f64(self) -> f64 {
        match self {
            FieldValue::Integer(v) => v as f64,
            FieldValue::Number(x) => x,
            FieldValue::Flag(b) => f64::from(u8::from(b)),
            FieldValue::Refit(r) => r.index() as f64,
        }
    }
}

/// One field of a [`Step`] as every binding exposes it ([`Step::FIELDS`]):
/// its name (snake_case in Rust, Python and JSON, the same words in
/// camelCase in JavaScript), its type and how to read it.
#[derive(Debug, Clone, Copy)]
pub struct StepField {
    /// The field's name.
    pub name: &'static str,
    /// Its type.
    pub ty: FieldType,
    /// Reads it from a step.
    get: fn(&Step) -> FieldValue,
}

impl StepField {
    /// This field of `step`.
    pub fn value(&self, step: &Step) -> FieldValue {
        (self.get)(step)
    }
}

impl Step {
    /// Every field, in the order of the struct: the one list the bindings
    /// build their step records from (NumPy's structured dtype, the
    /// JavaScript step records, JSON).
    pub const FIELDS: [StepField; 12] = {
        use FieldType::*;
        use FieldValue as V;
        const fn f(name: &'static str, ty: FieldType, get: fn(&Step) -> FieldValue) -> StepField {
            StepField { name, ty, get }
        }
        [
            f("index", Integer, |s| V::Integer(s.index as u64)),
            f("score", Number, |s| V::Number(s.score)),
            f("residual_sq", Number, |s| V::Number(s.residual_sq)),
            f("improvement", Number, |s| V::Number(s.improvement)),
            f("fw_gap", Number, |s| V::Number(s.fw_gap)),
            f("nu", Number, |s| V::Number(s.nu)),
            f("free_size", Integer, |s| V::Integer(s.free_size as u64)),
            f("solver_iterations", Integer, |s| {
                V::Integer(u64::from(s.solver_iterations))
            }),
            f("filled", Flag, |s| V::Flag(s.filled)),
            f("dependent", Flag, |s| V::Flag(s.dependent)),
            f("refit", Refit, |s| V::Refit(s.refit)),
            f("verified", Integer, |s| V::Integer(u64::from(s.verified))),
        ]
    };
}

/// A view of the result, borrowed from the [`Workspace`](crate::Workspace) that computed it.
///
/// Copy what you need out of it before the next call on the same workspace
/// (the `mempursuit` crate's owned `Selection` does this).
#[derive(Debug, Clone, Copy)]
#[must_use]
pub struct SelectionView<'w> {
    pub(crate) picks: &'w [usize],
    pub(crate) weights: &'w [f64],
    pub(crate) steps: &'w [Step],
    pub(crate) states: StatesView<'w>,
    pub(crate) rows_read: u64,
    pub(crate) excluded: usize,
    pub(crate) skipped: usize,
    pub(crate) stop: StopReason,
}

impl<'w> SelectionView<'w> {
    /// Selected pool indices in entry order (never re-sorted by weight; every
    /// prefix is the selection for that smaller budget).
    pub fn picks(&self) -> &'w [usize] {
        self.picks
    }

    /// Simplex weights α of the selected memories, aligned with
    /// [`picks`](Self::picks): all ≥ 0, summing to 1 (a memory keeps its
    /// place in the path even when its weight is 0). Empty for the baselines.
    pub fn weights(&self) -> &'w [f64] {
        self.weights
    }

    /// One record per pick, aligned with [`picks`](Self::picks).
    pub fn steps(&self) -> &'w [Step] {
        self.steps
    }

    /// Number of picks.
    pub fn len(&self) -> usize {
        self.picks.len()
    }

    /// Whether nothing was selected (K = 0).
    pub fn is_empty(&self) -> bool {
        self.picks.is_empty()
    }

    /// Why the selection ended.
    pub fn stop_reason(&self) -> StopReason {
        self.stop
    }

    /// Rows of the candidate matrix the pursuit read, counted as dot
    /// products of length d: P for the query pass and for each whole pass
    /// (the unscreened pursuit makes one per pick, its Gram row), plus,
    /// with exact screening ([`Screening`](crate::Screening)), one per
    /// candidate read, per pick in the residual direction it forms and per
    /// Gram entry it computed, or per candidate the certified int8 pursuit
    /// verified against f32 rows. 0 for the baselines.
    pub fn rows_read(&self) -> u64 {
        self.rows_read
    }

    /// Number of candidate rows excluded as unusable (only under
    /// [`InvalidCandidates::Exclude`](crate::InvalidCandidates::Exclude)).
    pub fn excluded_count(&self) -> usize {
        self.excluded
    }

    /// The excluded candidate rows, ascending.
    pub fn excluded(&self) -> impl Iterator<Item = usize> + 'w {
        self.states.with(CandidateState::Excluded)
    }

    /// Number of candidates skipped as already represented by the free set
    /// (only under [`DependentPicks::Skip`](crate::DependentPicks::Skip)).
    pub fn skipped_count(&self) -> usize {
        self.skipped
    }

    /// The skipped candidates, ascending (see
    /// [`DependentPicks::Skip`](crate::DependentPicks::Skip)): none of them
    /// is a pick.
    pub fn skipped(&self) -> impl Iterator<Item = usize> + 'w {
        self.states.with(CandidateState::Skipped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_field_reads_its_own_value_with_its_type() {
        let step = Step {
            index: 7,
            score: 0.25,
            residual_sq: 0.5,
            improvement: 0.125,
            fw_gap: 1e-3,
            nu: -0.75,
            free_size: 3,
            solver_iterations: 9,
            filled: true,
            dependent: false,
            refit: RefitStatus::Blocked {
                index: 2,
                violation: 0.5,
            },
            verified: 11,
        };
        let got: [(&str, FieldValue); 12] = Step::FIELDS.map(|f| (f.name, f.value(&step)));
        let want = [
            ("index", FieldValue::Integer(7)),
            ("score", FieldValue::Number(0.25)),
            ("residual_sq", FieldValue::Number(0.5)),
            ("improvement", FieldValue::Number(0.125)),
            ("fw_gap", FieldValue::Number(1e-3)),
            ("nu", FieldValue::Number(-0.75)),
            ("free_size", FieldValue::Integer(3)),
            ("solver_iterations", FieldValue::Integer(9)),
            ("filled", FieldValue::Flag(true)),
            ("dependent", FieldValue::Flag(false)),
            ("refit", FieldValue::Refit(step.refit)),
            ("verified", FieldValue::Integer(11)),
        ];
        assert_eq!(got, want);
        for f in Step::FIELDS {
            let matches = matches!(
                (f.ty, f.value(&step)),
                (FieldType::Integer, FieldValue::Integer(_))
                    | (FieldType::Number, FieldValue::Number(_))
                    | (FieldType::Flag, FieldValue::Flag(_))
                    | (FieldType::Refit, FieldValue::Refit(_))
            );
            assert!(matches, "{}", f.name);
        }
        assert_eq!(FieldValue::Refit(step.refit).as_f64(), 2.0);
        assert_eq!(FieldValue::Flag(true).as_f64(), 1.0);
    }

    #[test]
    fn refit_names_are_indexed_by_status() {
        let all = [
            RefitStatus::Optimal,
            RefitStatus::IterationCap { violation: 1.0 },
            RefitStatus::Blocked {
                index: 0,
                violation: 1.0,
            },
            RefitStatus::NumericalFailure { violation: 1.0 },
        ];
        for (i, r) in all.iter().enumerate() {
            assert_eq!(r.index(), i);
            assert_eq!(r.as_str(), RefitStatus::NAMES[i]);
        }
        assert_eq!(
            RefitStatus::NAMES,
            ["optimal", "iteration_cap", "blocked", "numerical_failure"]
        );
    }
}
