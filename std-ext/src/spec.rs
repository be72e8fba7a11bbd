//! One specification of a selector call: the only place where method names,
//! their parameters, defaults, valid values and the meaning of caller scores
//! are written down. The command line, the Python package and the
//! JavaScript package build a [`SelectSpec`] from their options (by name,
//! through [`SelectSpec::set`] or [`SelectSpec::from_str`]) and run it with
//! [`Selector::select_spec`](crate::Selector::select_spec) on the call's
//! data ([`CallData`](crate::CallData)); none of them maps names to methods
//! or holds a default of its own.
//!
//! ```
//! use mempursuit::{CallData, Pool, SelectSpec, Selector};
//!
//! // d = 2. Rows 0 and 1 paraphrase fact A; row 2 states fact B.
//! let s = std::f32::consts::FRAC_1_SQRT_2;
//! let query = [s, s];
//! let pool = [0.9950, 0.0998, 0.9998, 0.0200, 0.0, 1.0];
//! let mut selector = Selector::new();
//!
//! // The default: the recommended setting.
//! let spec = SelectSpec::default();
//! assert_eq!(spec.to_string(), "recommended");
//! let data = CallData::new(&query, Pool::F32(&pool));
//! let sel = selector.select_spec(&spec, data, 2)?;
//! assert_eq!(sel.picks.len(), 2);
//!
//! // By name, as every binding does: the paper's method, then MMR with λ = 0.3.
//! let paper: SelectSpec = "pursuit".parse()?;
//! let sel = selector.select_spec(&paper, data, 2)?;
//! assert_eq!(sel.picks, [0, 2]); // A, then the missing fact B
//! let mmr: SelectSpec = "mmr,mmr_lambda=0.3".parse()?;
//! assert_eq!(mmr.mmr_lambda(), Some(0.3));
//!
//! // A budget in tokens: rows of 40, 35 and 70 tokens, at most 100 in all.
//! // Row 2 (B) would be the second pick but no longer fits; row 1 does.
//! let tokens = [40.0f32, 35.0, 70.0];
//! let budgeted: SelectSpec = "pursuit,cost_budget=100".parse()?;
//! let sel = selector.select_spec(&budgeted, data.with_costs(Some(&tokens)), 3)?;
//! assert_eq!(sel.picks, [0, 1]);
//! assert_eq!(sel.stop.as_str(), "cost_budget");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The options
//!
//! Keys are snake_case; [`SelectSpec::set`] also takes them in camelCase
//! (`mmrLambda`, the JavaScript spelling) or with hyphens (`mmr-lambda`, the
//! command line's), and names the key in errors as the caller wrote it.
//!
//! | key | values | applies to | default |
//! |---|---|---|---|
//! | `method` | `recommended`, `pursuit`, `centroid`, `topk`, `mmr` | — | `recommended` |
//! | `gamma` | γ ∈ (0, 1] | `pursuit`, `centroid` | 1 (`pursuit`), [`CENTROID_GAMMA`] (`centroid`) |
//! | `ridge` | λ ≥ 0, or `inf` (= centroid pursuit) | `pursuit` | [`PursuitOptions::PAPER_RIDGE`] |
//! | `mmr_lambda` | λ_mmr ∈ [0, 1] | `mmr` | [`MmrOptions::PAPER`] (0.5) |
//! | `raw_relevance` | bool: use the caller's scores as given | all but `recommended` | false (scores by rank) |
//! | `pool_order` | bool: the pool is in the retriever's order | all | false |
//! | `cost_budget` | C ≥ 0: the most the picks may cost in total (e.g. tokens); needs the call's costs | all | none (K alone) |
//! | `adaptive` | bool: adaptive stopping (Eq. 7) | `pursuit`, `centroid` | false |
//! | `at_pool_optimum` | `continue`, `stop`, `fill` | `pursuit` (finite ridge) | `continue` |
//! | `optimum_tolerance` | ≥ 0 | `pursuit` (finite ridge) | 1e-12 |
//! | `dependent_picks` | `keep`, `skip` | `pursuit` (finite ridge) | `keep` |
//! | `normalization` | `cosine`, `require_unit` | all | `cosine` |
//! | `invalid` | `reject`, `exclude` | all | `reject` |
//! | `storage` | `f32`, `f16`, `bf16`, `int8` | all | `f32` |
//!
//! An option that does not apply to the method is an error
//! ([`SpecError::NotApplicable`]) rather than silently ignored.
//!
//! # Caller scores
//!
//! The retriever's scores for the pool (one per candidate, finite, any
//! scale or sign) are used **by rank** unless `raw_relevance` is set: the
//! candidate with the r-th largest score gets the pool's r-th largest query
//! cosine as its relevance ρ ([`Relevance::RankedScores`]), so γ means the
//! same thing whatever the retriever's units. With `raw_relevance` they are
//! ρ as given ([`Relevance::Scores`]; γ is then in their units). The
//! recommended setting always uses scores by rank. With no scores, ρ is the
//! query cosine ([`Relevance::Similarity`]), or with `pool_order` the pool's
//! cosines in row order ([`Relevance::PoolOrder`]).
//!
//! # Costs
//!
//! A prompt is budgeted in tokens, not in memories. With the call's costs
//! ([`CallData::costs`](crate::CallData::costs): one per candidate, finite,
//! ≥ 0, e.g. the token count of its text) and the option `cost_budget` C
//! (finite, ≥ 0), every method picks as it does without costs, except that
//! a candidate that no longer fits (the picks' costs so far plus its own
//! exceed C) can no longer be picked: such a pick is skipped and the next
//! best candidate that fits is taken. The selection stops when nothing
//! fits (stop reason `cost_budget`); K still caps the number of picks, so
//! pass a large K to let the cost budget alone decide. So top-K takes the
//! pool in relevance order, skipping what does not fit; MMR, the pursuit
//! family (int8 storage included) and the recommended setting take their
//! argmax among the candidates that fit; comparisons between methods at
//! the same C are at equal cost. For the pursuit's Frank–Wolfe gap, a
//! candidate that no longer fits is out of the pool, like a skipped one;
//! the recommended setting's γ uses, in place of K, the number of picks
//! top-K makes at the same C (so unit costs with C = K' select what K = K'
//! selects, for every method). The core's [`CostBudget`] has the details.
//! Costs without a `cost_budget`, or a `cost_budget` without costs, are
//! errors ([`SpecError::Conflict`]); a bad cost is an input error naming
//! its index, a bad `cost_budget` an option error.
//!
//! # Storage
//!
//! `f16` and `bf16` halve the bytes each pass over the candidates reads; the
//! selection equals the f32 selection on the rounded values. `int8` runs
//! the certified int8 pursuit ([`pursuit_int8`](crate::pursuit_int8)) for
//! `pursuit` and `centroid`, whose selection equals the f32 pursuit's bit
//! for bit (and which itself reads the f32 rows where int8 passes do not
//! pay: `Int8Passes::Auto`); `recommended` (whose rules on repeated
//! memories read f32 Gram rows), top-K and MMR read the f32 rows: the same
//! result as `f32`. Conversions happen once per call in
//! [`Selector::select_spec`](crate::Selector::select_spec) (the int8 codes
//! only where `Int8Passes::Auto` runs the int8 passes; a
//! [`Store`](crate::Store) converts once at build); a value outside
//! the storage's range is an error naming the row, the element and the
//! value ([`StorageError`](crate::StorageError)).

use std::fmt;
use std::str::FromStr;

use mempursuit_core::{
    AtPoolOptimum, CostBudget, DependentPicks, Error, ErrorKind, InputPolicy, InvalidCandidates,
    Method, MmrOptions, Normalization, PursuitOptions, Relevance, Stopping,
};

/// γ of centroid pursuit when the call does not give one (`method =
/// centroid`): the setting measured on the HotpotQA fixture with cosine
/// pools (docs/METHODS.md, "Which setting to use").
pub const CENTROID_GAMMA: f64 = 0.5;

/// The selectors, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum MethodName {
    /// `recommended`: centroid pursuit on unit-free relevance with a
    /// per-pool, per-budget γ ([`Method::Recommended`]); needs no tuning.
    #[default]
    Recommended,
    /// `pursuit`: MemPursuit (Eqs. 5, 6, 9), the paper's method with the
    /// defaults, or a member of its relevance-scaled family with `gamma`,
    /// `ridge` and relevance.
    Pursuit,
    /// `centroid`: centroid pursuit, the family with ridge = ∞ (α = 1/|S|,
    /// no QP) and a fixed γ.
    Centroid,
    /// `topk`: the pool by relevance.
    TopK,
    /// `mmr`: maximal marginal relevance (Carbonell & Goldstein 1998).
    Mmr,
}

impl MethodName {
    /// Every method, in the order of the docs.
    pub const ALL: [MethodName; 5] = [
        MethodName::Recommended,
        MethodName::Pursuit,
        MethodName::Centroid,
        MethodName::TopK,
        MethodName::Mmr,
    ];

    /// The method's name: `recommended`, `pursuit`, `centroid`, `topk` or
    /// `mmr`.
    pub const fn as_str(self) -> &'static str {
        match self {
            MethodName::Recommended => "recommended",
            MethodName::Pursuit => "pursuit",
            MethodName::Centroid => "centroid",
            MethodName::TopK => "topk",
            MethodName::Mmr => "mmr",
        }
    }

    /// One line on what the method does (for help texts).
    pub const fn summary(self) -> &'static str {
        match self {
            MethodName::Recommended => {
                "the recommended setting: centroid pursuit with a per-pool gamma, no tuning"
            }
            MethodName::Pursuit => "MemPursuit (paper mode by default: ridge 1e-10, gamma 1)",
            MethodName::Centroid => "centroid pursuit (ridge = inf) with a fixed gamma",
            MethodName::TopK => "top-K by relevance",
            MethodName::Mmr => "maximal marginal relevance",
        }
    }
}

impl fmt::Display for MethodName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for MethodName {
    type Err = SpecError;

    /// # Errors
    /// [`SpecError::UnknownMethod`] for a name not in [`MethodName::ALL`].
    fn from_str(s: &str) -> Result<Self, SpecError> {
        MethodName::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| SpecError::UnknownMethod { name: s.to_owned() })
    }
}

/// How the candidates are stored for the passes over them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Storage {
    /// `f32`: as given.
    #[default]
    F32,
    /// `f16`: IEEE half precision (|x| ≤ 65504), half the bytes per pass.
    F16,
    /// `bf16`: bfloat16 (f32's range, 8 significant bits), half the bytes.
    Bf16,
    /// `int8`: per-row scaled int8 codes with a certificate that returns
    /// the f32 pursuit's selection (the pursuit family only).
    Int8,
}

impl Storage {
    /// Every storage.
    pub const ALL: [Storage; 4] = [Storage::F32, Storage::F16, Storage::Bf16, Storage::Int8];

    /// `f32`, `f16`, `bf16` or `int8`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Storage::F32 => "f32",
            Storage::F16 => "f16",
            Storage::Bf16 => "bf16",
            Storage::Int8 => "int8",
        }
    }
}

impl fmt::Display for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A value given for an option: a binding passes its language's value
/// (a Python float, a JavaScript boolean), the command line and the text
/// form pass text, which is parsed by the option's type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    /// Text: a name (`skip`), or a number or bool written out (`0.3`,
    /// `inf`, `true`).
    Text(&'a str),
    /// A number.
    Number(f64),
    /// A boolean.
    Bool(bool),
}

impl fmt::Display for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Text(s) => f.write_str(s),
            Value::Number(x) => write!(f, "{}", Num(*x)),
            Value::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// A number written as the text form reads it back (`inf`, `-inf`, `nan`
/// for the non-finite ones; Rust's shortest round-trip form otherwise).
struct Num(f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.0;
        if x.is_nan() {
            f.write_str("nan")
        } else if x.is_infinite() {
            f.write_str(if x > 0.0 { "inf" } else { "-inf" })
        } else {
            write!(f, "{x}")
        }
    }
}

/// A problem with a specification: an unknown option or method, a value of
/// the wrong type or out of its range, an option that does not apply to
/// the method, or two options that exclude each other. Its
/// [`kind`](SpecError::kind) is always [`ErrorKind::Option`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SpecError {
    /// No option has this key.
    UnknownOption {
        /// The key as given.
        key: String,
    },
    /// No method has this name.
    UnknownMethod {
        /// The name as given.
        name: String,
    },
    /// The value does not have the option's type, or is not one of its
    /// names.
    InvalidValue {
        /// The key as given.
        key: String,
        /// The value as given: text in quotes (`'big'`), a number or a
        /// boolean bare (`1`, `true`), so a message tells a string `'1'`
        /// from the number 1.
        value: String,
        /// What the option takes.
        expected: String,
    },
    /// The option does not apply to the method.
    NotApplicable {
        /// The key as given.
        key: String,
        /// The method of the specification.
        method: MethodName,
        /// The methods it applies to.
        applies_to: &'static str,
    },
    /// Two options (or an option and the call's arguments) exclude each
    /// other, or an option needs an argument that is missing.
    Conflict {
        /// What to change.
        message: String,
    },
    /// A parameter is out of its range: the core's check
    /// ([`PursuitOptions::validate`], [`MmrOptions::validate`]).
    OutOfRange(Error),
}

impl SpecError {
    /// [`ErrorKind::Option`].
    pub const fn kind(&self) -> ErrorKind {
        ErrorKind::Option
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::UnknownOption { key } => {
                // The known keys in the caller's spelling.
                let style = KeyStyle::of(key);
                write!(f, "unknown option '{key}' (options: ")?;
                for (i, o) in OPTIONS.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}{}", style.spell(o.key))?;
                }
                f.write_str(")")
            }
            SpecError::UnknownMethod { name } => {
                write!(f, "unknown method '{name}' (methods: ")?;
                for (i, m) in MethodName::ALL.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}{m}")?;
                }
                f.write_str(")")
            }
            SpecError::InvalidValue {
                key,
                value,
                expected,
            } => write!(f, "option '{key}' must be {expected}, got {value}"),
            SpecError::NotApplicable {
                key,
                method,
                applies_to,
            } => write!(
                f,
                "option '{key}' does not apply to method '{method}' (it applies to {applies_to})"
            ),
            SpecError::Conflict { message } => f.write_str(message),
            SpecError::OutOfRange(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SpecError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SpecError::OutOfRange(e) => Some(e),
            _ => None,
        }
    }
}

/// The type of an option's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OptionType {
    /// A method name.
    Method,
    /// A number (text: anything `f64::from_str` reads, e.g. `1e-10`, `inf`).
    Number,
    /// A boolean (text: `true` or `false`).
    Bool,
    /// One of these names.
    Name(&'static [&'static str]),
}

/// The methods an option applies to ([`OptionInfo::applies_to`]); an
/// option given to another method is an error ([`SpecError::NotApplicable`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AppliesTo {
    /// Every method.
    Every,
    /// `pursuit` and `centroid` (the pursuit family).
    PursuitFamily,
    /// `pursuit` (not `centroid`, whose ridge is ∞ by definition).
    Pursuit,
    /// `pursuit` with a finite ridge (the QP refit, Eq. 6; not
    /// `ridge=inf`, which is centroid pursuit).
    FiniteRidge,
    /// `mmr`.
    Mmr,
    /// Every method but `recommended`, which uses caller scores by rank.
    AllButRecommended,
}

impl AppliesTo {
    /// The methods, as the docs, help texts and errors write them.
    pub const fn describe(self) -> &'static str {
        match self {
            AppliesTo::Every => "every method",
            AppliesTo::PursuitFamily => "pursuit, centroid",
            AppliesTo::Pursuit => "pursuit",
            AppliesTo::FiniteRidge => "pursuit with a finite ridge",
            AppliesTo::Mmr => "mmr",
            AppliesTo::AllButRecommended => {
                "pursuit, centroid, topk, mmr (the recommended setting uses scores by rank)"
            }
        }
    }

    /// Whether the option applies to `method`; `centroid` says whether the
    /// specification is centroid pursuit (`method = centroid`, or
    /// `pursuit` with `ridge = inf`).
    pub fn holds(self, method: MethodName, centroid: bool) -> bool {
        use MethodName::*;
        match self {
            AppliesTo::Every => true,
            AppliesTo::PursuitFamily => matches!(method, Pursuit | Centroid),
            AppliesTo::Pursuit => method == Pursuit,
            AppliesTo::FiniteRidge => method == Pursuit && !centroid,
            AppliesTo::Mmr => method == Mmr,
            AppliesTo::AllButRecommended => method != Recommended,
        }
    }
}

/// One option of a [`SelectSpec`]: its key, value type, the methods it
/// applies to and one line of documentation ([`OPTIONS`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OptionInfo {
    /// The key (snake_case).
    pub key: &'static str,
    /// Its value type. For [`OptionType::Name`] the first name is the
    /// default.
    pub ty: OptionType,
    /// The methods it applies to. A boolean option set to `false` or a
    /// named option set to its default (first) name changes nothing and
    /// is accepted by every method.
    pub applies_to: AppliesTo,
    /// What it does and its default.
    pub doc: &'static str,
}

/// The names of a table of named values, in its order.
const fn names<T: Copy, const N: usize>(table: &[(&'static str, T); N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = table[i].0;
        i += 1;
    }
    out
}

/// `at_pool_optimum`: name and value, the default first.
const AT_POOL_OPTIMUM: [(&str, AtPoolOptimum); 3] = [
    ("continue", AtPoolOptimum::Continue),
    ("stop", AtPoolOptimum::Stop),
    ("fill", AtPoolOptimum::FillByRelevance),
];
const AT_POOL_OPTIMUM_NAMES: [&str; 3] = names(&AT_POOL_OPTIMUM);

/// `dependent_picks`: name and value, the default first.
const DEPENDENT_PICKS: [(&str, DependentPicks); 2] = [
    ("keep", DependentPicks::Keep),
    ("skip", DependentPicks::Skip),
];
const DEPENDENT_PICKS_NAMES: [&str; 2] = names(&DEPENDENT_PICKS);

/// `normalization`: name and value, the default first.
const NORMALIZATION: [(&str, Normalization); 2] = [
    ("cosine", Normalization::Cosine),
    ("require_unit", Normalization::RequireUnit),
];
const NORMALIZATION_NAMES: [&str; 2] = names(&NORMALIZATION);

/// `invalid`: name and value, the default first.
const INVALID: [(&str, InvalidCandidates); 2] = [
    ("reject", InvalidCandidates::Reject),
    ("exclude", InvalidCandidates::Exclude),
];
const INVALID_NAMES: [&str; 2] = names(&INVALID);

/// `storage`: name and value, the default first.
const STORAGE: [(&str, Storage); 4] = [
    (Storage::F32.as_str(), Storage::F32),
    (Storage::F16.as_str(), Storage::F16),
    (Storage::Bf16.as_str(), Storage::Bf16),
    (Storage::Int8.as_str(), Storage::Int8),
];
const STORAGE_NAMES: [&str; 4] = names(&STORAGE);

/// The options by position in [`OPTIONS`] (a unit test checks that each
/// variant is its key in CamelCase): the index of a specification's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Method,
    Gamma,
    Ridge,
    MmrLambda,
    RawRelevance,
    PoolOrder,
    CostBudget,
    Adaptive,
    AtPoolOptimum,
    OptimumTolerance,
    DependentPicks,
    Normalization,
    Invalid,
    Storage,
}

/// Every option of a [`SelectSpec`], in the order of the docs (the table in
/// the [module docs](self)).
pub const OPTIONS: [OptionInfo; 14] = [
    OptionInfo {
        key: "method",
        ty: OptionType::Method,
        applies_to: AppliesTo::Every,
        doc: "the selector: recommended (default), pursuit, centroid, topk or mmr",
    },
    OptionInfo {
        key: "gamma",
        ty: OptionType::Number,
        applies_to: AppliesTo::PursuitFamily,
        doc: "gamma in (0, 1], the weight of the reconstruction against relevance \
              (default 1 for pursuit, 0.5 for centroid)",
    },
    OptionInfo {
        key: "ridge",
        ty: OptionType::Number,
        applies_to: AppliesTo::Pursuit,
        doc: "the ridge lambda >= 0 of the refit (Eq. 6; default 1e-10); inf is centroid pursuit",
    },
    OptionInfo {
        key: "mmr_lambda",
        ty: OptionType::Number,
        applies_to: AppliesTo::Mmr,
        doc: "lambda_mmr in [0, 1], relevance against diversity (default 0.5; 1 is top-K)",
    },
    OptionInfo {
        key: "raw_relevance",
        ty: OptionType::Bool,
        applies_to: AppliesTo::AllButRecommended,
        doc: "use the caller's relevance scores as given instead of by rank (default false)",
    },
    OptionInfo {
        key: "pool_order",
        ty: OptionType::Bool,
        applies_to: AppliesTo::Every,
        doc: "the pool is in the retriever's order, row 0 first (default false)",
    },
    OptionInfo {
        key: "cost_budget",
        ty: OptionType::Number,
        applies_to: AppliesTo::Every,
        doc: "the most the picks may cost in total (e.g. tokens), >= 0, with the call's costs \
              (one per candidate); a pick that no longer fits is skipped (default: none)",
    },
    OptionInfo {
        key: "adaptive",
        ty: OptionType::Bool,
        applies_to: AppliesTo::PursuitFamily,
        doc: "adaptive stopping (Eq. 7: tau 1e-5, patience 2; default false)",
    },
    OptionInfo {
        key: "at_pool_optimum",
        ty: OptionType::Name(&AT_POOL_OPTIMUM_NAMES),
        applies_to: AppliesTo::FiniteRidge,
        doc: "once the Frank-Wolfe gap reaches optimum_tolerance: continue (default), stop, \
              or fill the rest by relevance",
    },
    OptionInfo {
        key: "optimum_tolerance",
        ty: OptionType::Number,
        applies_to: AppliesTo::FiniteRidge,
        doc: "the Frank-Wolfe gap that counts as the pool optimum (default 1e-12)",
    },
    OptionInfo {
        key: "dependent_picks",
        ty: OptionType::Name(&DEPENDENT_PICKS_NAMES),
        applies_to: AppliesTo::FiniteRidge,
        doc: "a candidate already represented by the picks: keep and flag it (default) or skip it",
    },
    OptionInfo {
        key: "normalization",
        ty: OptionType::Name(&NORMALIZATION_NAMES),
        applies_to: AppliesTo::Every,
        doc: "cosine (default): non-unit vectors are used through their direction; \
              require_unit: they are an error",
    },
    OptionInfo {
        key: "invalid",
        ty: OptionType::Name(&INVALID_NAMES),
        applies_to: AppliesTo::Every,
        doc: "an unusable candidate row: reject the call (default) or exclude the row",
    },
    OptionInfo {
        key: "storage",
        ty: OptionType::Name(&STORAGE_NAMES),
        applies_to: AppliesTo::Every,
        doc: "how the candidates are stored for the passes: f32 (default), f16, bf16, int8",
    },
];

/// The option with key `key` in any spelling (snake_case, camelCase or
/// hyphenated), or `None` if no option has it: what a binding asks for an
/// option's type ([`OptionInfo::ty`]).
pub fn option_info(key: &str) -> Option<&'static OptionInfo> {
    let canonical = canonical_key(key);
    OPTIONS.iter().find(|o| o.key == canonical)
}

/// A value a specification holds for an option (the index of a name in
/// its [`OptionType::Name`] list).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Given {
    Number(f64),
    Bool(bool),
    Name(usize),
}

impl Given {
    /// Whether it changes anything: a number does; `false` and the first
    /// (default) name do not, so they are accepted by every method.
    fn is_effective(self) -> bool {
        match self {
            Given::Number(_) => true,
            Given::Bool(b) => b,
            Given::Name(i) => i != 0,
        }
    }
}

/// How the caller spells keys, so that errors name a key the way the
/// caller wrote it (`mmrLambda` in JavaScript, `--mmr-lambda` on the
/// command line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum KeyStyle {
    #[default]
    Snake,
    Camel,
    Kebab,
}

impl KeyStyle {
    fn of(key: &str) -> KeyStyle {
        if key.contains('-') {
            KeyStyle::Kebab
        } else if key.bytes().any(|b| b.is_ascii_uppercase()) {
            KeyStyle::Camel
        } else {
            KeyStyle::Snake
        }
    }

    /// `key` (snake_case) in this style.
    fn spell(self, key: &str) -> String {
        match self {
            KeyStyle::Snake => key.to_owned(),
            KeyStyle::Kebab => key.replace('_', "-"),
            KeyStyle::Camel => {
                let mut out = String::with_capacity(key.len());
                let mut upper = false;
                for c in key.chars() {
                    if c == '_' {
                        upper = true;
                    } else if upper {
                        out.push(c.to_ascii_uppercase());
                        upper = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
        }
    }
}

/// `mmrLambda` and `mmr-lambda` → `mmr_lambda`.
fn canonical_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else if c == '-' {
            out.push('_');
        } else {
            out.push(c);
        }
    }
    out
}

/// One selector call's specification: the method, its parameters, how the
/// caller's scores are used and how the candidates are stored. See the
/// [module docs](self) for the options, their defaults and where they
/// apply. [`Default`] is the recommended setting with every default.
///
/// Build it by name ([`SelectSpec::set`], [`FromStr`]) or with the named
/// constructors ([`SelectSpec::recommended`], [`SelectSpec::paper`],
/// [`SelectSpec::centroid`], [`SelectSpec::top_k`], [`SelectSpec::mmr`]);
/// [`SelectSpec::method`] checks it and gives the core's [`Method`].
///
/// The text form ([`Display`](fmt::Display), [`FromStr`]) is the method's
/// name followed by the options that were set, comma-separated:
/// `recommended`, `mmr,mmr_lambda=0.3`, `pursuit,gamma=0.5,ridge=inf`.
#[derive(Debug, Clone, Copy, Default)]
pub struct SelectSpec {
    method: MethodName,
    /// The spelling of the last key given in another style than snake_case
    /// (for error messages only; not part of equality).
    key_style: KeyStyle,
    /// The value given for each option, by its position in [`OPTIONS`]
    /// (`None`: the default; the method, at position 0, is `method`).
    given: [Option<Given>; OPTIONS.len()],
}

impl PartialEq for SelectSpec {
    /// Equal when every option is (the spelling of keys is not compared).
    fn eq(&self, other: &SelectSpec) -> bool {
        self.options() == other.options()
    }
}

impl SelectSpec {
    /// The recommended setting ([`Method::Recommended`]), the default.
    pub const fn recommended() -> SelectSpec {
        SelectSpec::of(MethodName::Recommended)
    }

    /// The paper's method ([`PursuitOptions::PAPER`]).
    pub const fn paper() -> SelectSpec {
        SelectSpec::of(MethodName::Pursuit)
    }

    /// Centroid pursuit with γ (ridge = ∞, α = 1/|S|;
    /// [`PursuitOptions::centroid`]).
    pub const fn centroid(gamma: f64) -> SelectSpec {
        let mut s = SelectSpec::of(MethodName::Centroid);
        s.given[Key::Gamma as usize] = Some(Given::Number(gamma));
        s
    }

    /// Top-K by relevance.
    pub const fn top_k() -> SelectSpec {
        SelectSpec::of(MethodName::TopK)
    }

    /// MMR with trade-off λ_mmr.
    pub const fn mmr(lambda: f64) -> SelectSpec {
        let mut s = SelectSpec::of(MethodName::Mmr);
        s.given[Key::MmrLambda as usize] = Some(Given::Number(lambda));
        s
    }

    /// The method `method` with every option at its default.
    pub const fn of(method: MethodName) -> SelectSpec {
        SelectSpec {
            method,
            key_style: KeyStyle::Snake,
            given: [None; OPTIONS.len()],
        }
    }

    /// The number given for option `key`.
    fn number(&self, key: Key) -> Option<f64> {
        match self.given[key as usize] {
            Some(Given::Number(x)) => Some(x),
            _ => None,
        }
    }

    /// The bool given for option `key`.
    fn flag(&self, key: Key) -> Option<bool> {
        match self.given[key as usize] {
            Some(Given::Bool(b)) => Some(b),
            _ => None,
        }
    }

    /// The value of the name given for option `key`, from its `table`.
    fn named<T: Copy, const N: usize>(&self, key: Key, table: &[(&str, T); N]) -> Option<T> {
        match self.given[key as usize] {
            Some(Given::Name(i)) => table.get(i).map(|&(_, v)| v),
            _ => None,
        }
    }

    /// The method's name.
    pub fn method_name(&self) -> MethodName {
        self.method
    }

    /// γ as given (`None`: the method's default).
    pub fn gamma(&self) -> Option<f64> {
        self.number(Key::Gamma)
    }

    /// The ridge as given (`None`: the default).
    pub fn ridge(&self) -> Option<f64> {
        self.number(Key::Ridge)
    }

    /// λ_mmr as given (`None`: the default).
    pub fn mmr_lambda(&self) -> Option<f64> {
        self.number(Key::MmrLambda)
    }

    /// Whether caller scores are used as given (else by rank).
    pub fn raw_relevance(&self) -> bool {
        self.flag(Key::RawRelevance).unwrap_or(false)
    }

    /// Whether the pool is in the retriever's order.
    pub fn pool_order(&self) -> bool {
        self.flag(Key::PoolOrder).unwrap_or(false)
    }

    /// The cost budget C as given (`None`: no cost budget, K alone).
    pub fn cost_budget(&self) -> Option<f64> {
        self.number(Key::CostBudget)
    }

    /// The storage of the candidates for the passes.
    pub fn storage(&self) -> Storage {
        self.named(Key::Storage, &STORAGE).unwrap_or_default()
    }

    /// The storage when the specification names one (`None`: not given,
    /// [`SelectSpec::storage`] is then the default, f32). A
    /// [`Store`](crate::Store) keeps its own storage and refuses a call
    /// whose specification names another.
    pub fn given_storage(&self) -> Option<Storage> {
        self.named(Key::Storage, &STORAGE)
    }

    /// The input policy.
    pub fn input_policy(&self) -> InputPolicy {
        InputPolicy {
            normalization: self
                .named(Key::Normalization, &NORMALIZATION)
                .unwrap_or_default(),
            invalid_candidates: self.named(Key::Invalid, &INVALID).unwrap_or_default(),
        }
    }

    /// Sets option `key` (snake_case, camelCase or hyphenated: see the
    /// [module docs](self)) to `value`. Numbers, booleans and names are
    /// checked for their type here; ranges and whether the option applies
    /// to the method are checked by [`SelectSpec::method`], so options may
    /// be set in any order.
    ///
    /// # Errors
    /// [`SpecError::UnknownOption`], [`SpecError::UnknownMethod`] or
    /// [`SpecError::InvalidValue`], naming the key as given.
    pub fn set(&mut self, key: &str, value: Value<'_>) -> Result<(), SpecError> {
        self.assign(key, value, true)
    }

    /// [`SelectSpec::set`] for callers whose values carry their type (the
    /// Python and JavaScript bindings, JSON): there text is only a name, so
    /// a number or bool option given text (`gamma="0.3"`) is an error
    /// instead of being read as the number or bool it spells.
    ///
    /// A binding builds a specification from one map of options, so an
    /// option already given to this specification (in another spelling:
    /// `mmr_lambda` and `mmrLambda`) is an error, not "last one wins".
    ///
    /// # Errors
    /// As [`SelectSpec::set`]; [`SpecError::InvalidValue`] for text given
    /// to a number or bool option; [`SpecError::Conflict`] for an option
    /// given before.
    pub fn set_typed(&mut self, key: &str, value: Value<'_>) -> Result<(), SpecError> {
        self.refuse_repeat(key)?;
        self.assign(key, value, false)
    }

    /// [`SpecError::Conflict`] when option `key` (any spelling; not the
    /// method, which has one spelling and a default) is already set: the
    /// one rule of the typed doors ([`SelectSpec::set_typed`]) and the text
    /// form (`FromStr`). Unknown keys pass (`assign` names them).
    fn refuse_repeat(&self, key: &str) -> Result<(), SpecError> {
        let canonical = canonical_key(key);
        let method = OPTIONS[Key::Method as usize].key;
        if canonical == method || !self.options().iter().any(|(k, _)| *k == canonical) {
            return Ok(());
        }
        let (snake, camel) = (canonical.clone(), KeyStyle::Camel.spell(&canonical));
        let spellings = if snake == camel {
            String::new()
        } else {
            format!(" (as '{snake}' or '{camel}')")
        };
        Err(SpecError::Conflict {
            message: format!("option '{key}' is given twice{spellings}; give it once"),
        })
    }

    /// [`SelectSpec::set`] (`text_spells_values`: a number or bool may be
    /// given as its text) or [`SelectSpec::set_typed`] (text is a name).
    fn assign(
        &mut self,
        key: &str,
        value: Value<'_>,
        text_spells_values: bool,
    ) -> Result<(), SpecError> {
        let canonical = canonical_key(key);
        if canonical != key {
            self.key_style = KeyStyle::of(key);
        }
        let Some(info) = OPTIONS.iter().find(|o| o.key == canonical) else {
            return Err(SpecError::UnknownOption {
                key: key.to_owned(),
            });
        };
        let invalid = |expected: String| SpecError::InvalidValue {
            key: key.to_owned(),
            value: match value {
                Value::Text(t) => format!("'{t}'"),
                _ => value.to_string(),
            },
            expected,
        };
        let given = match info.ty {
            OptionType::Method => {
                let Value::Text(name) = value else {
                    return Err(invalid("a method name".to_owned()));
                };
                self.method = name.parse()?;
                return Ok(());
            }
            OptionType::Number => Given::Number(match value {
                Value::Number(x) => x,
                Value::Text(t) if text_spells_values => t
                    .trim()
                    .parse()
                    .map_err(|_| invalid("a number".to_owned()))?,
                Value::Text(_) => return Err(invalid("a number, not a string".to_owned())),
                Value::Bool(_) => return Err(invalid("a number".to_owned())),
            }),
            OptionType::Bool => Given::Bool(match value {
                Value::Bool(b) => b,
                Value::Text(_) if !text_spells_values => {
                    return Err(invalid("true or false, not a string".to_owned()))
                }
                Value::Text("true") => true,
                Value::Text("false") => false,
                _ => return Err(invalid("true or false".to_owned())),
            }),
            OptionType::Name(names) => {
                let found = match value {
                    Value::Text(name) => names.iter().position(|n| *n == name),
                    _ => None,
                };
                Given::Name(found.ok_or_else(|| invalid(one_of(names)))?)
            }
        };
        let slot = OPTIONS.iter().position(|o| o.key == info.key);
        if let Some(slot) = slot {
            self.given[slot] = Some(given);
        }
        Ok(())
    }

    /// [`SelectSpec::set`] by value, for chaining.
    ///
    /// # Errors
    /// As [`SelectSpec::set`].
    pub fn with(mut self, key: &str, value: Value<'_>) -> Result<SelectSpec, SpecError> {
        self.set(key, value)?;
        Ok(self)
    }

    /// Whether the ridge makes this centroid pursuit (κ = ∞).
    fn is_centroid(&self) -> bool {
        match self.method {
            MethodName::Centroid => true,
            MethodName::Pursuit => self.ridge() == Some(f64::INFINITY),
            _ => false,
        }
    }

    /// The first option given with an effect ([`OptionInfo::applies_to`])
    /// that does not apply to the method, as an error.
    fn check_applicable(&self) -> Result<(), SpecError> {
        let centroid = self.is_centroid();
        for (info, given) in OPTIONS.iter().zip(self.given) {
            let effective = given.is_some_and(Given::is_effective);
            if effective && !info.applies_to.holds(self.method, centroid) {
                return Err(SpecError::NotApplicable {
                    key: self.key_style.spell(info.key),
                    method: self.method,
                    applies_to: info.applies_to.describe(),
                });
            }
        }
        Ok(())
    }

    /// The core's [`Method`] of this specification, with its parameters
    /// checked (so that a bad γ is reported even when nothing would be
    /// selected).
    ///
    /// # Errors
    /// [`SpecError::NotApplicable`] for an option given to a method it does
    /// not apply to; [`SpecError::OutOfRange`] for a parameter out of its
    /// range (the core's `validate`).
    pub fn method(&self) -> Result<Method, SpecError> {
        self.check_applicable()?;
        let input = self.input_policy();
        let pursuit = |base: PursuitOptions| PursuitOptions {
            ridge: self.ridge().unwrap_or(base.ridge),
            gamma: self.gamma().unwrap_or(base.gamma),
            stopping: if self.flag(Key::Adaptive) == Some(true) {
                Stopping::PAPER_ADAPTIVE
            } else {
                Stopping::FixedBudget
            },
            at_pool_optimum: (self.named(Key::AtPoolOptimum, &AT_POOL_OPTIMUM))
                .unwrap_or(base.at_pool_optimum),
            optimum_tolerance: (self.number(Key::OptimumTolerance))
                .unwrap_or(base.optimum_tolerance),
            dependent_picks: (self.named(Key::DependentPicks, &DEPENDENT_PICKS))
                .unwrap_or(base.dependent_picks),
            input,
        };
        let method = match self.method {
            MethodName::Recommended => Method::Recommended(input),
            MethodName::Pursuit => Method::Pursuit(pursuit(PursuitOptions::PAPER)),
            MethodName::Centroid => {
                Method::Pursuit(pursuit(PursuitOptions::centroid(CENTROID_GAMMA)))
            }
            MethodName::TopK => Method::TopK(input),
            MethodName::Mmr => Method::Mmr(MmrOptions {
                lambda: self.mmr_lambda().unwrap_or(MmrOptions::PAPER.lambda),
                input,
            }),
        };
        let checked = match &method {
            Method::Pursuit(o) => o.validate(),
            Method::Mmr(o) => o.validate(),
            _ => Ok(()),
        };
        checked.map_err(SpecError::OutOfRange)?;
        if let Some(c) = self.cost_budget() {
            if !(c.is_finite() && c >= 0.0) {
                return Err(SpecError::OutOfRange(Error::InvalidCostBudget(c)));
            }
        }
        Ok(method)
    }

    /// The core's [`CostBudget`] for the caller's `costs` (one per
    /// candidate, e.g. token counts) and the `cost_budget` option, or
    /// `None` for neither: see [Costs](self#costs).
    ///
    /// # Errors
    /// [`SpecError::Conflict`] for costs without a `cost_budget` or a
    /// `cost_budget` without costs. (The costs themselves are checked by
    /// the selector, the total by [`SelectSpec::method`].)
    pub fn costs<'c>(&self, costs: Option<&'c [f32]>) -> Result<Option<CostBudget<'c>>, SpecError> {
        match (costs, self.cost_budget()) {
            (Some(costs), Some(total)) => Ok(Some(CostBudget { costs, total })),
            (None, None) => Ok(None),
            // The messages name no key, so they read the same in every
            // binding (cost_budget, costBudget, --cost-budget).
            (Some(_), None) => Err(SpecError::Conflict {
                message: "costs need a cost budget (the most the picks may cost in total)"
                    .to_owned(),
            }),
            (None, Some(_)) => Err(SpecError::Conflict {
                message: "a cost budget needs costs (one per candidate, e.g. its token count)"
                    .to_owned(),
            }),
        }
    }

    /// The relevance source for the caller's `scores` (one per candidate),
    /// or for none: see [Caller scores](self#caller-scores).
    ///
    /// # Errors
    /// [`SpecError::Conflict`] when `raw_relevance` is set without scores,
    /// or `pool_order` with scores.
    pub fn relevance<'r>(&self, scores: Option<&'r [f32]>) -> Result<Relevance<'r>, SpecError> {
        // The messages name no key, so they read the same in every binding.
        match scores {
            Some(_) if self.pool_order() => Err(SpecError::Conflict {
                message: "relevance scores and pool order exclude each other: pass one of them"
                    .to_owned(),
            }),
            Some(s) if self.raw_relevance() => Ok(Relevance::Scores(s)),
            Some(s) => Ok(Relevance::RankedScores(s)),
            None if self.raw_relevance() => Err(SpecError::Conflict {
                message: "raw relevance (the scores used as given) needs relevance scores"
                    .to_owned(),
            }),
            None if self.pool_order() => Ok(Relevance::PoolOrder),
            None => Ok(Relevance::Similarity),
        }
    }

    /// The options that were set, as (key, value) pairs in the order of
    /// [`OPTIONS`], `method` first (always present).
    pub fn options(&self) -> Vec<(&'static str, String)> {
        let mut out = vec![("method", self.method.as_str().to_owned())];
        for (info, given) in OPTIONS.iter().zip(self.given) {
            let text = match (given, info.ty) {
                (Some(Given::Number(x)), _) => Num(x).to_string(),
                (Some(Given::Bool(b)), _) => b.to_string(),
                (Some(Given::Name(i)), OptionType::Name(names)) => names[i].to_owned(),
                _ => continue,
            };
            out.push((info.key, text));
        }
        out
    }
}

/// `'a', 'b' or 'c'`: what a named option takes.
fn one_of(names: &[&str]) -> String {
    let mut out = String::new();
    for (i, n) in names.iter().enumerate() {
        let sep = match i {
            0 => "",
            _ if i + 1 == names.len() => " or ",
            _ => ", ",
        };
        out.push_str(&format!("{sep}'{n}'"));
    }
    out
}

impl fmt::Display for SelectSpec {
    /// The text form: `mmr,mmr_lambda=0.3` (see [`SelectSpec`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (key, value)) in self.options().iter().enumerate() {
            if i == 0 {
                f.write_str(value)?;
            } else {
                write!(f, ",{key}={value}")?;
            }
        }
        Ok(())
    }
}

impl FromStr for SelectSpec {
    type Err = SpecError;

    /// Reads the text form: comma-separated items, each `key=value`, the
    /// first of which may be a bare method name (`mmr,mmr_lambda=0.3` or
    /// `method=mmr,mmr_lambda=0.3`). Blank items are ignored, so `""` is
    /// the default (recommended) specification.
    ///
    /// # Errors
    /// As [`SelectSpec::set`]; a later item without `=` is
    /// [`SpecError::InvalidValue`]; an option given twice (in any
    /// spelling, the method included: `mmr,method=topk`) is
    /// [`SpecError::Conflict`] (the text form has no "last one wins").
    fn from_str(s: &str) -> Result<Self, SpecError> {
        let mut spec = SelectSpec::default();
        // Whether the first item named the method bare (`mmr,...`): a later
        // `method=` gives it twice.
        let mut bare_method = None;
        for (i, item) in s.split(',').map(str::trim).enumerate() {
            if item.is_empty() {
                continue;
            }
            match item.split_once('=') {
                Some((key, value)) => {
                    let key = key.trim();
                    if let (Some(name), "method") = (bare_method, canonical_key(key).as_str()) {
                        return Err(SpecError::Conflict {
                            message: format!(
                                "option 'method' is given twice ('{name}' and '{item}'); give it once"
                            ),
                        });
                    }
                    spec.refuse_repeat(key)?;
                    spec.set(key, Value::Text(value.trim()))?
                }
                None if i == 0 => {
                    bare_method = Some(item);
                    spec.method = item.parse()?
                }
                None => {
                    return Err(SpecError::InvalidValue {
                        key: item.to_owned(),
                        value: "''".to_owned(),
                        expected: "written as key=value".to_owned(),
                    })
                }
            }
        }
        Ok(spec)
    }
}

/// Serde (feature `serde`): a map of the options that were set, `method`
/// always present (`{"method": "mmr", "mmr_lambda": 0.3}`); numbers as
/// numbers (the non-finite ones as `"inf"`, `"-inf"`, `"nan"`), booleans as
/// booleans, names as strings. Reading takes the same keys as
/// [`SelectSpec::set`] in any order, with the values typed as written
/// ([`SelectSpec::set_typed`]: `{"gamma": "0.3"}` is an error; only the
/// three non-finite spellings are numbers).
#[cfg(feature = "serde")]
mod serde_impl {
    use super::{Num, OptionType, SelectSpec, Value, OPTIONS};
    use serde::de::{self, MapAccess, Visitor};
    use serde::ser::SerializeMap;
    use std::fmt;

    impl serde::Serialize for SelectSpec {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let options = self.options();
            let mut map = s.serialize_map(Some(options.len()))?;
            for (key, value) in options {
                let ty = OPTIONS.iter().find(|o| o.key == key).map(|o| o.ty);
                match ty {
                    Some(OptionType::Number) => {
                        let x: f64 = value.parse().unwrap_or(f64::NAN);
                        if x.is_finite() {
                            map.serialize_entry(key, &x)?;
                        } else {
                            map.serialize_entry(key, &Num(x).to_string())?;
                        }
                    }
                    Some(OptionType::Bool) => map.serialize_entry(key, &(value == "true"))?,
                    _ => map.serialize_entry(key, &value)?,
                }
            }
            map.end()
        }
    }

    /// A JSON value of an option.
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Any {
        Bool(bool),
        Number(f64),
        Text(String),
    }

    struct SpecVisitor;

    impl<'de> Visitor<'de> for SpecVisitor {
        type Value = SelectSpec;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(
                "a map of selector options, e.g. {\"method\": \"mmr\", \"mmr_lambda\": 0.3}",
            )
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SelectSpec, A::Error> {
            let mut spec = SelectSpec::default();
            while let Some((key, value)) = map.next_entry::<String, Any>()? {
                let set = match &value {
                    Any::Bool(b) => spec.set_typed(&key, Value::Bool(*b)),
                    Any::Number(x) => spec.set_typed(&key, Value::Number(*x)),
                    // JSON has no ±inf or NaN: serialization writes them as
                    // these strings. Any other text is a name (as in the
                    // bindings: "0.3" for a number option is an error).
                    Any::Text(t) if matches!(t.as_str(), "inf" | "-inf" | "nan") => {
                        spec.set(&key, Value::Text(t))
                    }
                    Any::Text(t) => spec.set_typed(&key, Value::Text(t)),
                };
                set.map_err(de::Error::custom)?;
            }
            Ok(spec)
        }
    }

    impl<'de> serde::Deserialize<'de> for SelectSpec {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<SelectSpec, D::Error> {
            d.deserialize_map(SpecVisitor)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_key_indexes_its_option() {
        use Key::*;
        let keys = [
            Method,
            Gamma,
            Ridge,
            MmrLambda,
            RawRelevance,
            PoolOrder,
            CostBudget,
            Adaptive,
            AtPoolOptimum,
            OptimumTolerance,
            DependentPicks,
            Normalization,
            Invalid,
            Storage,
        ];
        assert_eq!(keys.len(), OPTIONS.len());
        for (i, key) in keys.into_iter().enumerate() {
            assert_eq!(key as usize, i);
            let camel = format!("{key:?}");
            assert_eq!(KeyStyle::Camel.spell(OPTIONS[i].key), {
                let mut c = camel.clone();
                c[..1].make_ascii_lowercase();
                c
            });
        }
        // Every named option's values round-trip through the text form,
        // and the first name is the default.
        for o in OPTIONS {
            let OptionType::Name(names) = o.ty else {
                continue;
            };
            for (i, name) in names.iter().enumerate() {
                let spec = SelectSpec::paper().with(o.key, Value::Text(name)).unwrap();
                let shown = spec.options().iter().any(|(k, v)| *k == o.key && v == name);
                assert!(shown, "{} = {name}", o.key);
                if i == 0 {
                    assert_eq!(
                        spec.method().unwrap(),
                        SelectSpec::paper().method().unwrap()
                    );
                }
            }
        }
        assert_eq!(SelectSpec::default().storage(), super::Storage::ALL[0]);
        assert_eq!(STORAGE.map(|(_, s)| s), super::Storage::ALL);
    }

    #[test]
    fn the_docs_state_the_defaults_of_the_constants() {
        let doc = |key: &str| option_info(key).unwrap().doc;
        let gamma = format!(
            "(default {} for pursuit, {} for centroid)",
            PursuitOptions::PAPER.gamma,
            CENTROID_GAMMA
        );
        assert!(doc("gamma").contains(&gamma), "{}", doc("gamma"));
        let ridge = format!("default {:e}", PursuitOptions::PAPER_RIDGE);
        assert!(doc("ridge").contains(&ridge), "{}", doc("ridge"));
        let mmr = format!("default {}", MmrOptions::PAPER.lambda);
        assert!(doc("mmrLambda").contains(&mmr), "{}", doc("mmr_lambda"));
        let tol = format!("default {:e}", PursuitOptions::PAPER.optimum_tolerance);
        assert!(doc("optimum-tolerance").contains(&tol));
        // The module docs' table.
        let module = include_str!("spec.rs");
        let row = format!(
            "| `gamma` | γ ∈ (0, 1] | `pursuit`, `centroid` | {} (`pursuit`), [`CENTROID_GAMMA`] (`centroid`) |",
            PursuitOptions::PAPER.gamma
        );
        assert!(module.contains(&row));
        let row = format!(
            "| `mmr_lambda` | λ_mmr ∈ [0, 1] | `mmr` | [`MmrOptions::PAPER`] ({}) |",
            MmrOptions::PAPER.lambda
        );
        assert!(module.contains(&row));
    }

    #[test]
    fn the_default_is_the_recommended_setting() {
        let spec = SelectSpec::default();
        assert_eq!(spec.method().unwrap(), Method::recommended());
        assert_eq!(spec.method().unwrap(), Method::default());
        assert_eq!(spec.to_string(), "recommended");
        assert_eq!("".parse::<SelectSpec>().unwrap(), spec);
    }

    #[test]
    fn names_build_the_core_methods() {
        let m = |s: &str| s.parse::<SelectSpec>().unwrap().method().unwrap();
        assert_eq!(m("pursuit"), Method::Pursuit(PursuitOptions::PAPER));
        assert_eq!(
            m("centroid"),
            Method::Pursuit(PursuitOptions::centroid(CENTROID_GAMMA))
        );
        assert_eq!(
            m("centroid,gamma=0.2"),
            Method::Pursuit(PursuitOptions::centroid(0.2))
        );
        assert_eq!(m("topk"), Method::TopK(InputPolicy::default()));
        assert_eq!(m("mmr"), Method::Mmr(MmrOptions::PAPER));
        assert_eq!(m("mmr,mmrLambda=0.25"), Method::Mmr(MmrOptions::new(0.25)));
        assert_eq!(
            m("pursuit,ridge=inf,gamma=0.5"),
            Method::Pursuit(PursuitOptions::centroid(0.5))
        );
        let Method::Pursuit(o) = m("method=pursuit,adaptive=true,dependent-picks=skip,at_pool_optimum=fill,optimum_tolerance=1e-9,normalization=require_unit,invalid=exclude")
        else {
            panic!("not a pursuit")
        };
        assert_eq!(o.stopping, Stopping::PAPER_ADAPTIVE);
        assert_eq!(o.dependent_picks, DependentPicks::Skip);
        assert_eq!(o.at_pool_optimum, AtPoolOptimum::FillByRelevance);
        assert_eq!(o.optimum_tolerance, 1e-9);
        assert_eq!(o.input.normalization, Normalization::RequireUnit);
        assert_eq!(o.input.invalid_candidates, InvalidCandidates::Exclude);
    }

    #[test]
    fn the_text_form_round_trips() {
        for text in [
            "recommended",
            "pursuit,gamma=0.5,ridge=inf",
            "mmr,mmr_lambda=0.3,storage=f16",
            "centroid,gamma=0.25,adaptive=true,invalid=exclude",
            "topk,raw_relevance=true",
            "pursuit,at_pool_optimum=stop,optimum_tolerance=0.001,dependent_picks=skip",
            "topk,cost_budget=512",
            "pursuit,gamma=0.5,cost_budget=0.25,storage=int8",
        ] {
            let spec: SelectSpec = text.parse().unwrap();
            assert_eq!(spec.to_string(), text);
            assert_eq!(spec.to_string().parse::<SelectSpec>().unwrap(), spec);
        }
    }

    #[test]
    fn errors_name_the_key_and_value_as_given() {
        let e = |s: &str| s.parse::<SelectSpec>().unwrap_err().to_string();
        assert_eq!(
            e("nope"),
            "unknown method 'nope' (methods: recommended, pursuit, centroid, topk, mmr)"
        );
        // Keys in errors are spelled as the caller spells them.
        let spec: SelectSpec = "topk,mmrLambda=0.3".parse().unwrap();
        assert_eq!(
            spec.method().unwrap_err().to_string(),
            "option 'mmrLambda' does not apply to method 'topk' (it applies to mmr)"
        );
        let spec: SelectSpec = "topk,mmr-lambda=0.3".parse().unwrap();
        assert_eq!(
            spec.method().unwrap_err().to_string(),
            "option 'mmr-lambda' does not apply to method 'topk' (it applies to mmr)"
        );
        let spec: SelectSpec = "topk,mmr_lambda=0.3".parse().unwrap();
        assert_eq!(
            spec.method().unwrap_err().to_string(),
            "option 'mmr_lambda' does not apply to method 'topk' (it applies to mmr)"
        );
        assert_eq!(
            e("pursuit,gama=0.3"),
            "unknown option 'gama' (options: method, gamma, ridge, mmr_lambda, raw_relevance, \
             pool_order, cost_budget, adaptive, at_pool_optimum, optimum_tolerance, \
             dependent_picks, normalization, invalid, storage)"
        );
        assert_eq!(
            e("pursuit,gamma=big"),
            "option 'gamma' must be a number, got 'big'"
        );
        assert_eq!(
            e("pursuit,adaptive=yes"),
            "option 'adaptive' must be true or false, got 'yes'"
        );
        assert_eq!(
            e("pursuit,storage=f8"),
            "option 'storage' must be 'f32', 'f16', 'bf16' or 'int8', got 'f8'"
        );
        // An option given twice, in any spelling, is an error (no "last
        // one wins"); blank items are ignored.
        assert_eq!(
            e("mmr,mmr_lambda=0.3,mmrLambda=0.4"),
            "option 'mmrLambda' is given twice (as 'mmr_lambda' or 'mmrLambda'); give it once"
        );
        assert_eq!(
            e("pursuit,gamma=0.3,gamma=0.4"),
            "option 'gamma' is given twice; give it once"
        );
        // The typed doors (bindings, JSON) follow the same rule; `set`
        // (the command line's flags over its text) overrides.
        let mut typed = SelectSpec::default();
        typed.set_typed("method", Value::Text("mmr")).unwrap();
        typed.set_typed("mmr_lambda", Value::Number(0.1)).unwrap();
        assert_eq!(
            typed
                .set_typed("mmrLambda", Value::Number(0.9))
                .unwrap_err()
                .to_string(),
            "option 'mmrLambda' is given twice (as 'mmr_lambda' or 'mmrLambda'); give it once"
        );
        typed.set("mmrLambda", Value::Number(0.9)).unwrap();
        assert_eq!(typed.to_string(), "mmr,mmr_lambda=0.9");
        assert_eq!(
            e("mmr,method=topk"),
            "option 'method' is given twice ('mmr' and 'method=topk'); give it once"
        );
        assert_eq!(
            "topk,,".parse::<SelectSpec>().unwrap(),
            "topk".parse().unwrap()
        );
        let bad: SelectSpec = "pursuit,gamma=2".parse().unwrap();
        assert_eq!(
            bad.method().unwrap_err().to_string(),
            "gamma 2 must be in (0, 1]"
        );
        assert_eq!(bad.method().unwrap_err().kind(), ErrorKind::Option);
        let centroid: SelectSpec = "centroid,ridge=1".parse().unwrap();
        assert_eq!(
            centroid.method().unwrap_err().to_string(),
            "option 'ridge' does not apply to method 'centroid' (it applies to pursuit)"
        );
        let skip: SelectSpec = "pursuit,ridge=inf,dependent_picks=skip".parse().unwrap();
        assert_eq!(
            skip.method().unwrap_err().to_string(),
            "option 'dependent_picks' does not apply to method 'pursuit' (it applies to pursuit \
             with a finite ridge)"
        );
        let raw: SelectSpec = "recommended,raw_relevance=true".parse().unwrap();
        assert!(raw
            .method()
            .unwrap_err()
            .to_string()
            .starts_with("option 'raw_relevance' does not apply to method 'recommended'"));
    }

    #[test]
    fn typed_values_and_relevance() {
        let mut spec = SelectSpec::default();
        spec.set("method", Value::Text("mmr")).unwrap();
        spec.set("mmrLambda", Value::Number(0.7)).unwrap();
        spec.set("rawRelevance", Value::Bool(true)).unwrap();
        assert_eq!(spec.to_string(), "mmr,mmr_lambda=0.7,raw_relevance=true");
        // A typed value is written bare, text in quotes: the number 1 and
        // the string '1' read differently.
        assert_eq!(
            spec.set("gamma", Value::Bool(true))
                .unwrap_err()
                .to_string(),
            "option 'gamma' must be a number, got true"
        );
        assert_eq!(
            spec.set("adaptive", Value::Number(1.0))
                .unwrap_err()
                .to_string(),
            "option 'adaptive' must be true or false, got 1"
        );
        assert_eq!(
            spec.set("method", Value::Number(2.5))
                .unwrap_err()
                .to_string(),
            "option 'method' must be a method name, got 2.5"
        );
        assert_eq!(
            spec.set("storage", Value::Text("1"))
                .unwrap_err()
                .to_string(),
            "option 'storage' must be 'f32', 'f16', 'bf16' or 'int8', got '1'"
        );
        // Typed callers: text is a name only (the CLI's text is parsed).
        let mut typed = SelectSpec::default();
        typed.set_typed("method", Value::Text("pursuit")).unwrap();
        typed.set_typed("gamma", Value::Number(0.3)).unwrap();
        assert_eq!(
            SelectSpec::default()
                .set_typed("gamma", Value::Text("0.5"))
                .unwrap_err()
                .to_string(),
            "option 'gamma' must be a number, not a string, got '0.5'"
        );
        assert_eq!(
            typed
                .set_typed("rawRelevance", Value::Text("true"))
                .unwrap_err()
                .to_string(),
            "option 'rawRelevance' must be true or false, not a string, got 'true'"
        );
        assert_eq!(
            typed
                .set_typed("gama", Value::Text("0.5"))
                .unwrap_err()
                .to_string(),
            SelectSpec::default()
                .set("gama", Value::Text("0.5"))
                .unwrap_err()
                .to_string()
        );
        assert_eq!(typed.to_string(), "pursuit,gamma=0.3");
        typed.set("gamma", Value::Text("0.5")).unwrap();
        assert_eq!(typed.to_string(), "pursuit,gamma=0.5");
        let scores = [1.0f32, 2.0];
        assert_eq!(
            spec.relevance(Some(&scores)).unwrap(),
            Relevance::Scores(&scores)
        );
        assert_eq!(
            spec.relevance(None).unwrap_err().to_string(),
            "raw relevance (the scores used as given) needs relevance scores"
        );
        let e = SelectSpec::default()
            .with("mmrLamda", Value::Number(0.3))
            .unwrap_err();
        assert!(
            e.to_string().starts_with(
                "unknown option 'mmrLamda' (options: method, gamma, ridge, mmrLambda, rawRelevance"
            ),
            "{e}"
        );
        let ranked = SelectSpec::top_k();
        assert_eq!(
            ranked.relevance(Some(&scores)).unwrap(),
            Relevance::RankedScores(&scores)
        );
        assert_eq!(ranked.relevance(None).unwrap(), Relevance::Similarity);
        let order: SelectSpec = "topk,pool_order=true".parse().unwrap();
        assert_eq!(order.relevance(None).unwrap(), Relevance::PoolOrder);
        assert!(order.relevance(Some(&scores)).is_err());
    }
}
