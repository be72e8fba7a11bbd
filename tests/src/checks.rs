//! Machine checks of the theory (Appendix B), shared by the property tests
//! (`tests/tests/properties.rs`), the fuzz targets (`fuzz/`) and the replay
//! of the fuzzers' findings (`tests/tests/fuzz_regressions.rs`).
//!
//! Every check recomputes what it needs in f64 from the f32 inputs, with
//! the vectors scaled exactly as the core scales them ([`Geometry`]), and
//! returns `Err(message)` naming the violated statement and the numbers.
//!
//! # Tolerances
//!
//! The core computes b and the Gram rows in f32 and everything else in f64;
//! the checks compute every product in f64. A dot product of two unit f32
//! vectors of length d, accumulated in 8 lanes (d/8 terms each) and summed
//! pairwise, has an error of at most about (d/8 + 4)·u·Σ|x_k y_k| ≤
//! (d/8 + 4)·u with u = 2⁻²⁴ (Higham, *Accuracy and Stability*, §3.1; the
//! last factor is ≤ 1 by Cauchy–Schwarz). A score U_i = ρ_i − γ Σ α_j G_ij
//! uses one b (or none) and a convex combination of Gram entries, so the
//! core's and the checks' U differ by at most [`score_tolerance`]
//! = 2·(d/8 + 4)·u + 1e-12 (f32 rounding of b and G, the stored f32 score
//! vector and f64 round-off). Every tolerance below is a small multiple of
//! it, or of the core's pivot rule ([`PIVOT_TOLERANCE`]), and is stated
//! where it is used.

use mempursuit::{
    pursuit_using, Error, Input, InputPolicy, Int8Candidates, Method, Normalization,
    PursuitOptions, Relevance, Screening, Selection, Selector, Serial, Step, MAX_NORM, MIN_NORM,
    PIVOT_TOLERANCE, UNIT_NORM_TOLERANCE,
};
use nalgebra::{DMatrix, DVector};

use crate::reference::{qp_objective, reference_pursuit, simplex_qp, RefResult};

pub mod cases;
pub mod parsers;

/// u = 2⁻²⁴, the unit round-off of f32.
pub const F32_UNIT_ROUNDOFF: f64 = 1.0 / 16_777_216.0;

/// Two candidates whose f64 scores differ by less than this count as tied:
/// their order may legitimately differ between the core (f32 scores) and
/// the f64 reference, or after a permutation of the pool. It is
/// 8·[`score_tolerance`] at d = 1024 plus the weight error of a refit
/// (≤ 1e-6 on the pools used here): about 1e-5.
pub const TIE_TOLERANCE: f64 = 1e-5;

/// The largest difference between a score U_i computed by the core (f32
/// Gram rows and b, f64 weights) and the same score in f64 from the same
/// f32 inputs: 2·(d/8 + 4)·u + 1e-12 (see the module docs).
pub fn score_tolerance(dim: usize) -> f64 {
    2.0 * (dim as f64 / 8.0 + 4.0) * F32_UNIT_ROUNDOFF + 1e-12
}

/// The relevance source of a pursuit, owned (so cases can print and store
/// it).
#[derive(Clone, PartialEq)]
pub enum RelevanceSpec {
    /// ρ = b.
    Similarity,
    /// The caller's scores, one per candidate.
    Scores(Vec<f32>),
    /// ρ at rank k = the k-th largest cosine of the pool.
    PoolOrder,
}

impl std::fmt::Debug for RelevanceSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RelevanceSpec::Similarity => f.write_str("RelevanceSpec::Similarity"),
            RelevanceSpec::Scores(s) => write!(f, "RelevanceSpec::Scores({:?})", F32s(s)),
            RelevanceSpec::PoolOrder => f.write_str("RelevanceSpec::PoolOrder"),
        }
    }
}

impl RelevanceSpec {
    /// The core's [`Relevance`] borrowing from `self`.
    pub fn as_relevance(&self) -> Relevance<'_> {
        match self {
            RelevanceSpec::Similarity => Relevance::Similarity,
            RelevanceSpec::Scores(s) => Relevance::Scores(s),
            RelevanceSpec::PoolOrder => Relevance::PoolOrder,
        }
    }
}

/// Prints f32 values as a Rust expression (`vec![0.5, f32::NAN, ...]`),
/// exactly: finite values round-trip through `{:?}`.
pub struct F32s<'a>(pub &'a [f32]);

impl std::fmt::Debug for F32s<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("vec![")?;
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f64_or_f32_literal(f, *v as f64, true, v.is_nan())?;
        }
        f.write_str("]")
    }
}

/// Prints one f64 as a Rust expression (`f64::NAN`, `-f64::INFINITY`, or
/// the shortest round-trip literal).
pub struct F64Lit(pub f64);

impl std::fmt::Debug for F64Lit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f64_or_f32_literal(f, self.0, false, self.0.is_nan())
    }
}

fn f64_or_f32_literal(
    f: &mut std::fmt::Formatter<'_>,
    v: f64,
    is_f32: bool,
    nan: bool,
) -> std::fmt::Result {
    let ty = if is_f32 { "f32" } else { "f64" };
    if nan {
        write!(f, "{ty}::NAN")
    } else if v == f64::INFINITY {
        write!(f, "{ty}::INFINITY")
    } else if v == f64::NEG_INFINITY {
        write!(f, "-{ty}::INFINITY")
    } else if is_f32 {
        write!(f, "{:?}", v as f32)
    } else {
        write!(f, "{v:?}")
    }
}

/// The f64 view of an input, scaled as the core scales it: a vector whose
/// norm is within [`UNIT_NORM_TOLERANCE`] of 1 is used as given, any other
/// is multiplied by the f32 value of 1/‖v‖ (cosine normalization).
#[derive(Debug, Clone)]
pub struct Geometry {
    /// d.
    pub dim: usize,
    /// The scaled query.
    pub query: Vec<f64>,
    /// The scaled candidate rows.
    pub rows: Vec<Vec<f64>>,
    /// b_i = m_i · q.
    pub b: Vec<f64>,
    /// G_ij = m_i · m_j (P × P).
    pub gram: DMatrix<f64>,
    /// ρ as the core derives it from the relevance source.
    pub rho: Vec<f64>,
}

/// The scale the core applies to a vector, or `None` if the core rejects
/// it (non-finite, zero or out-of-range norm).
pub fn core_scale(v: &[f32]) -> Option<f64> {
    if v.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = v.iter().map(|&x| x as f64 * x as f64).sum::<f64>().sqrt();
    if n == 0.0 || !(MIN_NORM..=MAX_NORM).contains(&n) {
        return None;
    }
    if (n - 1.0).abs() <= UNIT_NORM_TOLERANCE {
        Some(1.0)
    } else {
        Some((1.0 / n) as f32 as f64)
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl Geometry {
    /// Builds the geometry of a valid input (every vector accepted by the
    /// core under [`Normalization::Cosine`]).
    ///
    /// # Errors
    /// A message if the shape is invalid or a vector would be rejected.
    pub fn new(
        query: &[f32],
        pool: &[f32],
        dim: usize,
        relevance: &RelevanceSpec,
    ) -> Result<Geometry, String> {
        if dim == 0 || query.len() != dim || !pool.len().is_multiple_of(dim) {
            return Err("invalid shape".into());
        }
        let scale = |v: &[f32]| -> Result<Vec<f64>, String> {
            let s = core_scale(v).ok_or("vector rejected by the core")?;
            Ok(v.iter().map(|&x| x as f64 * s).collect())
        };
        let q = scale(query)?;
        let rows = pool
            .chunks_exact(dim)
            .map(scale)
            .collect::<Result<Vec<_>, _>>()?;
        let p = rows.len();
        let b: Vec<f64> = rows.iter().map(|r| dot(r, &q)).collect();
        let mut gram = DMatrix::zeros(p, p);
        for i in 0..p {
            for j in 0..=i {
                let g = dot(&rows[i], &rows[j]);
                gram[(i, j)] = g;
                gram[(j, i)] = g;
            }
        }
        let rho = match relevance {
            RelevanceSpec::Similarity => b.clone(),
            RelevanceSpec::Scores(s) => {
                if s.len() != p {
                    return Err("relevance length".into());
                }
                s.iter().map(|&x| x as f64).collect()
            }
            RelevanceSpec::PoolOrder => {
                let mut sorted = b.clone();
                sorted.sort_by(|x, y| y.total_cmp(x));
                sorted
            }
        };
        Ok(Geometry {
            dim,
            query: q,
            rows,
            b,
            gram,
            rho,
        })
    }

    /// P.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether P = 0.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// U_i = ρ_i − γ Σ_a G_{i, picks(a)} weights(a) for every i (a over the
    /// picks).
    pub fn scores(&self, gamma: f64, picks: &[usize], weights: &[f64]) -> Vec<f64> {
        (0..self.len())
            .map(|i| {
                let g: f64 = picks
                    .iter()
                    .zip(weights)
                    .map(|(&j, &w)| self.gram[(i, j)] * w)
                    .sum();
                self.rho[i] - gamma * g
            })
            .collect()
    }

    /// ‖r‖ with r = q − Σ α_j m_j.
    pub fn residual_norm(&self, picks: &[usize], weights: &[f64]) -> f64 {
        let mut r = self.query.clone();
        for (&j, &w) in picks.iter().zip(weights) {
            r.iter_mut()
                .zip(&self.rows[j])
                .for_each(|(x, m)| *x -= w * m);
        }
        dot(&r, &r).sqrt()
    }

    /// The family's objective φ(α) = (γ/2) αᵀ(G + κI)α − ρᵀα over the
    /// whole pool (α zero outside `picks`); for γ = 1, ρ = b this is the
    /// paper's Eq. 6 objective minus ½‖q‖².
    pub fn objective(&self, ridge: f64, gamma: f64, picks: &[usize], weights: &[f64]) -> f64 {
        let mut quad = 0.0;
        for (a, &i) in picks.iter().enumerate() {
            for (c, &j) in picks.iter().enumerate() {
                quad += weights[a] * weights[c] * self.gram[(i, j)];
            }
            quad += ridge * weights[a] * weights[a];
        }
        0.5 * gamma * quad
            - picks
                .iter()
                .zip(weights)
                .map(|(&i, w)| self.rho[i] * w)
                .sum::<f64>()
    }

    /// F* = min over the whole simplex of [`objective`](Self::objective),
    /// by the reference's [`simplex_qp`].
    pub fn pool_optimum(&self, ridge: f64, gamma: f64) -> f64 {
        let p = self.len();
        let h = DMatrix::from_fn(p, p, |i, j| {
            gamma * (self.gram[(i, j)] + if i == j { ridge } else { 0.0 })
        });
        let c = DVector::from_fn(p, |i, _| self.rho[i]);
        let a: Vec<f64> = simplex_qp(&h, &c).iter().copied().collect();
        qp_objective(&h, &c, &a)
    }

    /// Distance of the augmented vector [m_j; 1] (plus √κ e_j) to the span
    /// of the augmented vectors of `free`: the quantity the core's pivot
    /// rule thresholds (its pivot² is this distance², computed from the f32
    /// Gram). Also returns ‖c‖₁ of the least-squares coefficients c
    /// ([m_j; 1] ≈ Σ_a c_a [m_{free_a}; 1]) and the relevance defect
    /// ρ_j − Σ_a c_a ρ_{free_a} (0 up to the distance when ρ is an affine
    /// function of the embeddings, e.g. ρ = b or ρ constant).
    pub fn augmented_distance(&self, j: usize, free: &[usize], ridge: f64) -> (f64, f64, f64) {
        let n = free.len();
        if n == 0 {
            return ((self.gram[(j, j)] + ridge + 1.0).sqrt(), 0.0, self.rho[j]);
        }
        let a = DMatrix::from_fn(n, n, |x, y| {
            self.gram[(free[x], free[y])] + 1.0 + if x == y { ridge } else { 0.0 }
        });
        let rhs = DVector::from_fn(n, |x, _| self.gram[(free[x], j)] + 1.0);
        let Some(c) = a.clone().svd(true, true).solve(&rhs, 1e-14).ok() else {
            return (0.0, f64::INFINITY, f64::INFINITY);
        };
        let d2 = self.gram[(j, j)] + ridge + 1.0 - rhs.dot(&c);
        let defect = self.rho[j] - (0..n).map(|a| c[a] * self.rho[free[a]]).sum::<f64>();
        (d2.max(0.0).sqrt(), c.iter().map(|v| v.abs()).sum(), defect)
    }
}

/// The pursuit's parameters as the checks need them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Family {
    /// κ (λ in the paper); `f64::INFINITY` for centroid pursuit.
    pub ridge: f64,
    /// γ ∈ (0, 1].
    pub gamma: f64,
}

impl Family {
    /// The core's options for this member of the family (fixed budget,
    /// continue at the pool optimum).
    pub fn options(&self) -> PursuitOptions {
        PursuitOptions {
            ridge: self.ridge,
            gamma: self.gamma,
            ..PursuitOptions::default()
        }
    }
}

/// What [`check_refit`] measured.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RefitReport {
    /// ν recomputed in f64 from the core's weights.
    pub nu: f64,
    /// max over selected j with α_j > 0 of |U_j − γκα_j − ν|.
    pub free_violation: f64,
    /// max over selected j with α_j = 0 of U_j − ν (≤ 0 when KKT holds).
    pub zero_violation: f64,
    /// max(0, max_{j∈S} (U_j − γκα_j) − ν): how far the weights are from
    /// stationarity on S in the f64 problem (the Frank–Wolfe gap at α is
    /// at most g_S plus this).
    pub stationarity_excess: f64,
    /// Whether a zero-weight memory was numerically dependent on the free
    /// set (the core's pivot rule may then block it).
    pub blocked_allowance_used: bool,
    /// The Frank–Wolfe gap recomputed in f64: max(0, max_{i∉S} U_i − ν).
    pub gap: f64,
    /// ‖r‖ (paper mode) from the core's weights.
    pub residual_norm: f64,
}

/// Checks one refit (the weights after step t = `picks.len()`), Lemma B.1
/// (Eq. 15) with λ → γκ (ARCHITECTURE.md, “The relevance-scaled family”):
///
/// * α on the simplex: every α_j ≥ 0 and finite, |Σα − 1| ≤ 1e-12 (the
///   core renormalizes exactly; 1e-12 is f64 round-off of a short sum);
/// * α_j > 0 ⇒ |U_j − γκα_j − ν| ≤ 4·[`score_tolerance`] (both U_j and ν
///   carry the f32 Gram error once; the f64 solve is backward stable);
/// * α_j = 0 ⇒ U_j ≤ ν + 4·[`score_tolerance`], except for a memory that
///   the core's pivot rule may have blocked as numerically dependent: its
///   augmented vector lies within √(PIVOT_TOLERANCE·(2 + κ)) of the free
///   set's span (up to the f32 Gram error of that pivot, see
///   [`Geometry::augmented_distance`]). Such a memory violates by at most
///   |δρ| + dist·(|ν| + 1) + γκ‖c‖₁ with δρ = ρ_j − Σ c_a ρ_a, the
///   allowance used — but only when ρ is affine in the embeddings along
///   that dependency (|δρ| within the distance and the f32 noise of c:
///   ρ = b, or constant scores). With caller scores or pool order δρ can be
///   O(1): the core must then exchange the memory into the free set, and
///   no allowance is made;
/// * ν = Σ α_j U_j − γκ‖α‖² agrees with the core's [`Step::nu`] within
///   2·[`score_tolerance`];
/// * the core's [`Step::fw_gap`] is ≥ 0 and agrees with the recomputed
///   max(0, max_{i∉S} U_i − ν) within 4·[`score_tolerance`].
///
/// For centroid pursuit (κ = ∞): α = 1/t exactly, ν = mean_S U within
/// 2·[`score_tolerance`], and the diagnostic gap agrees likewise.
///
/// # Errors
/// A message naming the violated condition and the values.
pub fn check_refit(
    geo: &Geometry,
    fam: Family,
    picks: &[usize],
    weights: &[f64],
    step: &Step,
) -> Result<RefitReport, String> {
    check_refit_among(geo, fam, picks, weights, step, &|_| true)
}

/// [`check_refit`] with the Frank–Wolfe gap taken over the unselected
/// candidates for which `available` holds (under a budget in cost: those
/// that still fit, as [`CostBudget`](mempursuit::CostBudget) defines the
/// core's gap).
///
/// # Errors
/// As [`check_refit`].
pub fn check_refit_among(
    geo: &Geometry,
    fam: Family,
    picks: &[usize],
    weights: &[f64],
    step: &Step,
    available: &dyn Fn(usize) -> bool,
) -> Result<RefitReport, String> {
    let t = picks.len();
    if weights.len() != t || t == 0 {
        return Err(format!("{} weights for {t} picks", weights.len()));
    }
    let sum: f64 = weights.iter().sum();
    if weights.iter().any(|w| !w.is_finite() || *w < 0.0) || (sum - 1.0).abs() > 1e-12 {
        return Err(format!("weights off the simplex: {weights:?} (sum {sum})"));
    }
    let tol = score_tolerance(geo.dim);
    let u = geo.scores(fam.gamma, picks, weights);
    let selected: std::collections::HashSet<usize> = picks.iter().copied().collect();
    let max_out = (0..geo.len())
        .filter(|&i| !selected.contains(&i) && available(i))
        .map(|i| u[i])
        .fold(f64::NEG_INFINITY, f64::max);
    let mut rep = RefitReport {
        residual_norm: geo.residual_norm(picks, weights),
        ..RefitReport::default()
    };
    if fam.ridge == f64::INFINITY {
        if let Some(w) = weights.iter().find(|&&w| w != 1.0 / t as f64) {
            return Err(format!("centroid weight {w} != 1/{t}"));
        }
        let nu = picks.iter().map(|&j| u[j]).sum::<f64>() / t as f64;
        rep.nu = nu;
        if (nu - step.nu).abs() > 2.0 * tol {
            return Err(format!("centroid nu: core {} vs f64 {nu}", step.nu));
        }
        if max_out.is_finite() {
            rep.gap = max_out - nu;
            if (rep.gap - step.fw_gap).abs() > 4.0 * tol {
                return Err(format!(
                    "centroid gap: core {} vs f64 {}",
                    step.fw_gap, rep.gap
                ));
            }
        }
        return Ok(rep);
    }
    let gk = fam.gamma * fam.ridge;
    let nu = picks
        .iter()
        .zip(weights)
        .map(|(&j, &w)| w * u[j])
        .sum::<f64>()
        - gk * weights.iter().map(|w| w * w).sum::<f64>();
    rep.nu = nu;
    let free: Vec<usize> = picks
        .iter()
        .zip(weights)
        .filter(|(_, &w)| w > 0.0)
        .map(|(&j, _)| j)
        .collect();
    // A memory whose augmented vector is [m_j; 1] = Σ_a c_a [m_a; 1] + e
    // over the free set has, with U_a = ν + γκα_a on F,
    //   U_j − ν = δρ − e₁ν + γκ cᵀα − γ e_m · q̂,  δρ = ρ_j − Σ_a c_a ρ_a,
    // so |U_j − ν| ≤ |δρ| + ‖e‖(|ν| + 1) + γκ‖c‖₁. For ρ affine in m
    // (ρ = b: δρ = q · e_m; ρ constant: δρ = 0) this is small whenever the
    // pivot is, which is when the core may block j.
    let rho_max = geo.rho.iter().fold(0.0f64, |m, r| m.max(r.abs()));
    let dep_threshold = (PIVOT_TOLERANCE * (2.0 + fam.ridge)).sqrt();
    for (&j, &w) in picks.iter().zip(weights) {
        rep.stationarity_excess = rep.stationarity_excess.max(u[j] - gk * w - nu);
        if w > 0.0 {
            let v = (u[j] - gk * w - nu).abs();
            rep.free_violation = rep.free_violation.max(v);
            if v > 4.0 * tol {
                return Err(format!(
                    "KKT (Lemma B.1) free memory {j}: |U - gk*alpha - nu| = {v:e} > {:e} \
                     (U {}, alpha {w}, nu {nu})",
                    4.0 * tol,
                    u[j]
                ));
            }
        } else {
            let v = u[j] - nu;
            rep.zero_violation = rep.zero_violation.max(v);
            if v > 4.0 * tol {
                // May the pivot rule have blocked it? Its pivot² is the
                // augmented distance², perturbed by the f32 Gram error of
                // each entry of the Schur complement: ≤ tol·(1 + ‖c‖₁)².
                let (dist, c1, defect) = geo.augmented_distance(j, &free, fam.ridge);
                let noise = (tol * (1.0 + c1).powi(2)).sqrt();
                let dependent = dist <= dep_threshold + noise;
                let allowance =
                    defect.abs() + (dist + noise) * (nu.abs() + 1.0) + gk * c1 + 4.0 * tol;
                // ρ affine in m along this dependency (ρ = b, ρ constant):
                // the defect is 0 up to the distance and the f32 noise of c.
                let linear = defect.abs() <= dist + 4.0 * tol * (1.0 + c1) * (1.0 + rho_max);
                if !(linear && dependent && v <= allowance) {
                    return Err(format!(
                        "KKT (Lemma B.1) zero-weight memory {j}: U - nu = {v:e} > {:e} \
                         (augmented distance {dist:e}, |c|_1 {c1:e}, dependent {dependent}, \
                         relevance defect {defect:e}, allowance {allowance:e})",
                        4.0 * tol
                    ));
                }
                rep.blocked_allowance_used = true;
            }
        }
    }
    if (nu - step.nu).abs() > 2.0 * tol {
        return Err(format!("nu (Eq. 14): core {} vs f64 {nu}", step.nu));
    }
    rep.gap = if max_out.is_finite() {
        (max_out - nu).max(0.0)
    } else {
        0.0
    };
    if step.fw_gap.is_nan() || step.fw_gap < 0.0 {
        return Err(format!("Frank-Wolfe gap {} < 0", step.fw_gap));
    }
    if (rep.gap - step.fw_gap).abs() > 4.0 * tol {
        return Err(format!(
            "Frank-Wolfe gap (Eq. 25): core {} vs f64 {}",
            step.fw_gap, rep.gap
        ));
    }
    Ok(rep)
}

/// Checks the certificate of Theorem B.2 for one refit, against the optimum
/// F* over the whole pool (`f_star`, from [`Geometry::pool_optimum`]):
///
/// * 0 ≤ J(S) − F* + 1e-10 (F* is a minimum; 1e-10 covers the reference
///   solver's accuracy ~1e-12 and f64 round-off of the objective);
/// * J(S) − F* ≤ g_S + e + 1e-10 with e = max(0, max_S (U_j − γκα_j) − ν)
///   the measured stationarity excess ([`RefitReport::stationarity_excess`],
///   ≤ 4·[`score_tolerance`] on the free set by [`check_refit`]): the
///   Frank–Wolfe gap at α is max(max_S (U_j − γκα_j), max_{∉S} U_i) − ν ≤
///   g_S + e, and convexity bounds J − F* by it (Eq. 26). The core's α is
///   optimal for its f32 Gram matrix, so in the f64 problem it is optimal
///   only up to e;
/// * the converse ("g_S = 0 only at the optimum", quantified): for a
///   convex quadratic with curvature constant C = γ(4 max_i ‖m_i‖² + 2κ)
///   on the simplex (‖Σ(β − α)_i m_i‖ ≤ 2 max‖m_i‖ and ‖β − α‖² ≤ 2; the
///   bound is attained by antipodal pairs, so the f32 norms 1 ± 1e-7 are
///   used, not 1), a Frank–Wolfe step
///   shows J − F* ≥ min(g²/(2C), g/2), so
///   g_S ≤ max(√(2C·(J − F* + 1e-10)), 2(J − F* + 1e-10)).
///
/// Not for centroid pursuit (no certificate there).
///
/// # Errors
/// A message naming the violated inequality.
pub fn check_certificate(
    geo: &Geometry,
    fam: Family,
    picks: &[usize],
    weights: &[f64],
    report: &RefitReport,
    f_star: f64,
) -> Result<(), String> {
    let j = geo.objective(fam.ridge, fam.gamma, picks, weights);
    let sub = j - f_star;
    let slack = 1e-10;
    if sub < -slack {
        return Err(format!("J(S) = {j} below the pool optimum F* = {f_star}"));
    }
    let excess = report.stationarity_excess;
    if sub > report.gap + excess + slack {
        return Err(format!(
            "certificate (Eq. 26) violated: J(S) - F* = {sub:e} > g_S = {:e} (+ KKT excess {excess:e})",
            report.gap
        ));
    }
    let max_sq = (0..geo.len()).map(|i| geo.gram[(i, i)]).fold(0.0, f64::max);
    let c = fam.gamma * (4.0 * max_sq + 2.0 * fam.ridge) * (1.0 + 1e-12);
    let s = sub.max(0.0) + slack;
    let bound = (2.0 * c * s).sqrt().max(2.0 * s);
    if report.gap > bound {
        return Err(format!(
            "g_S = {:e} > {bound:e} although J(S) - F* = {sub:e}: gap not zero at the optimum",
            report.gap
        ));
    }
    Ok(())
}

/// What [`check_pursuit_path`] measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PathReport {
    /// Number of picks of the full-budget run.
    pub picks: usize,
    /// Largest free-set KKT violation seen.
    pub max_free_violation: f64,
    /// Largest zero-weight violation U_j − ν seen (≤ 0 when clean).
    pub max_zero_violation: f64,
    /// Steps at which a blocked-column allowance was needed.
    pub blocked_steps: usize,
    /// Smallest g_S seen (0 once the pool optimum is reached).
    pub min_gap: f64,
}

/// Runs the pursuit with budget t for every t = 1..=K (the final weights
/// of a budget-t run are the refit after step t, since the path is
/// deterministic and nested) and checks after every refit:
/// nestedness (the budget-t picks and steps are exactly the first t of the
/// budget-K run, bit for bit), [`check_refit`], and, when `certificate` is
/// true and κ < ∞, [`check_certificate`] against the pool optimum.
///
/// # Errors
/// The core's error, or a message naming the step and the violation.
pub fn check_pursuit_path(
    query: &[f32],
    pool: &[f32],
    dim: usize,
    budget: usize,
    relevance: &RelevanceSpec,
    fam: Family,
    certificate: bool,
) -> Result<PathReport, String> {
    check_pursuit_path_costed(query, pool, dim, budget, relevance, fam, certificate, None)
}

/// [`check_pursuit_path`] under an optional budget in cost (`costs`: one
/// cost per candidate and the total, as [`Input::with_costs`] takes them).
/// With costs it also checks that the picks' costs sum to at most the
/// total and that a pick was skipped only for not fitting (a selection that
/// stops with [`StopReason::CostBudget`](mempursuit::StopReason) before K picks
/// leaves no unpicked, non-excluded candidate that fits); the certificate
/// against the pool optimum is checked only without costs (the budget in
/// cost restricts which candidates may enter, so the pool optimum is not
/// the pursuit's target).
///
/// # Errors
/// As [`check_pursuit_path`], or a message naming the budget violation.
#[allow(clippy::too_many_arguments)]
pub fn check_pursuit_path_costed(
    query: &[f32],
    pool: &[f32],
    dim: usize,
    budget: usize,
    relevance: &RelevanceSpec,
    fam: Family,
    certificate: bool,
    costs: Option<(&[f32], f64)>,
) -> Result<PathReport, String> {
    let geo = Geometry::new(query, pool, dim, relevance)?;
    let mut input = Input::new(query, pool).with_relevance(relevance.as_relevance());
    if let Some((c, total)) = costs {
        input = input.with_costs(c, total);
    }
    let certificate = certificate && costs.is_none();
    let mut selector = Selector::new();
    let method = Method::Pursuit(fam.options());
    let full = selector
        .select(&input, budget, &method)
        .map_err(|e| format!("core error: {e}"))?;
    if let Some((c, total)) = costs {
        check_cost_budget(&full, c, total, budget)?;
    }
    let f_star = (certificate && fam.ridge.is_finite() && !geo.is_empty())
        .then(|| geo.pool_optimum(fam.ridge, fam.gamma));
    let mut rep = PathReport {
        picks: full.picks.len(),
        min_gap: f64::INFINITY,
        ..PathReport::default()
    };
    for t in 1..=full.picks.len() {
        let sel = if t == full.picks.len() {
            full.clone()
        } else {
            selector
                .select(&input, t, &method)
                .map_err(|e| format!("core error at budget {t}: {e}"))?
        };
        if sel.picks[..] != full.picks[..t] || sel.steps[..] != full.steps[..t] {
            return Err(format!(
                "not nested: budget {t} picks {:?}, budget {budget} picks {:?}",
                sel.picks, full.picks
            ));
        }
        // Under a budget in cost the gap runs over the candidates that
        // still fit after the t picks.
        let spent: f64 = costs.map_or(0.0, |(c, _)| {
            sel.picks.iter().map(|&i| f64::from(c[i])).sum()
        });
        let fits = |i: usize| costs.is_none_or(|(c, total)| spent + f64::from(c[i]) <= total);
        let r = check_refit_among(
            &geo,
            fam,
            &sel.picks,
            &sel.weights,
            &sel.steps[t - 1],
            &fits,
        )
        .map_err(|e| format!("step {t}: {e}"))?;
        rep.max_free_violation = rep.max_free_violation.max(r.free_violation);
        rep.max_zero_violation = rep.max_zero_violation.max(r.zero_violation);
        rep.blocked_steps += r.blocked_allowance_used as usize;
        rep.min_gap = rep.min_gap.min(r.gap);
        if let Some(f_star) = f_star {
            check_certificate(&geo, fam, &sel.picks, &sel.weights, &r, f_star)
                .map_err(|e| format!("step {t}: {e}"))?;
        }
    }
    Ok(rep)
}

/// A selection under a budget in cost: its picks cost at most `total` in
/// all (summed in f64, as the core does), and when it stopped for the
/// budget in cost before `budget` picks, no candidate that is neither
/// picked, excluded nor skipped would still fit.
fn check_cost_budget(
    sel: &Selection,
    costs: &[f32],
    total: f64,
    budget: usize,
) -> Result<(), String> {
    let spent: f64 = sel.picks.iter().map(|&i| f64::from(costs[i])).sum();
    if spent > total {
        return Err(format!(
            "picks {:?} cost {spent} in all, over the budget in cost {total}",
            sel.picks
        ));
    }
    if sel.stop == mempursuit::StopReason::CostBudget && sel.picks.len() < budget {
        let fits = (0..costs.len()).find(|&i| {
            !sel.picks.contains(&i)
                && !sel.excluded.contains(&i)
                && !sel.skipped.contains(&i)
                && spent + f64::from(costs[i]) <= total
        });
        if let Some(i) = fits {
            return Err(format!(
                "stopped for the budget in cost after {:?} (spent {spent} of {total}), \
                 but candidate {i} (cost {}) still fits",
                sel.picks, costs[i]
            ));
        }
    }
    Ok(())
}

/// The first step t (0-based) of a reference path at which the best and
/// the second-best f64 score among the unselected candidates are within
/// [`TIE_TOLERANCE`] plus `extra(t)`; from that step on two correct
/// implementations may order the picks differently. `None` if no step is
/// tied. `extra(t)` widens the tolerance where the refit after step t − 1
/// is ill-determined (see [`check_differential`]); pass `|_| 0.0` for the
/// plain tie rule.
pub fn first_near_tie(
    geo: &Geometry,
    fam: Family,
    reference: &RefResult,
    extra: impl Fn(usize) -> f64,
) -> Option<usize> {
    let p = geo.len();
    let mut selected = vec![false; p];
    for t in 0..reference.picks.len() {
        let u = if t == 0 {
            geo.rho.clone()
        } else {
            geo.scores(
                fam.gamma,
                &reference.picks[..t],
                &reference.steps[t - 1].weights,
            )
        };
        let mut top = [f64::NEG_INFINITY; 2];
        for i in (0..p).filter(|&i| !selected[i]) {
            if u[i] > top[0] {
                top = [u[i], top[0]];
            } else if u[i] > top[1] {
                top[1] = u[i];
            }
        }
        if top[0] - top[1] < TIE_TOLERANCE + extra(t) {
            return Some(t);
        }
        selected[reference.picks[t]] = true;
    }
    None
}

/// What [`check_differential`] compared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiffReport {
    /// Number of leading picks compared (all of them unless a near tie cut
    /// the comparison short).
    pub compared: usize,
    /// Whether a near tie was found.
    pub tied: bool,
    /// The largest bound on ‖q̂_core − q̂_ref‖ used (0 for well-determined
    /// refits up to f64 round-off).
    pub max_reconstruction_spread: f64,
}

/// Compares the core with the independent f64 reference
/// ([`reference_pursuit`]).
///
/// **Conditioning.** The core's weights after step t are optimal for its
/// f32 Gram matrix; in the f64 problem they are optimal only up to their
/// restricted Frank–Wolfe gap e_t = max_{j∈S}(U_j − γκα_j) − ν ≥ 0
/// (computed here from the core's weights). Since the objective is
/// (γ/2)‖q̂‖² + (γκ/2)‖α‖² − ρᵀα and the reference is optimal, convexity
/// gives (γ/2)‖q̂_core − q̂_ref‖² ≤ J_core − J_ref ≤ e_t, so the
/// reconstructions differ by at most δ_t = √(2e_t/γ), and every
/// score by at most γ·δ_t. With κ = 0 and near duplicates δ_t is large
/// (the optimal q̂ is unique but ill-determined by f32 inputs); on
/// well-separated pools it is ~1e-5 or less.
///
/// **What must agree**, with `tol` the caller's bound for f32 rounding
/// (4·[`score_tolerance`] and more; the tests pass 1e-6 … 1e-4):
/// * e_t ≤ `tol` + 4·[`score_tolerance`] + 3·√(PIVOT_TOLERANCE·(2 + κ))
///   (otherwise the refit is suboptimal, and the widened tolerances below
///   would hide it);
/// * picks, up to the first near tie, where the tie tolerance at step t is
///   [`TIE_TOLERANCE`] + 2γ·δ_{t−1};
/// * per step on that prefix: the objective J within e_t + `tol`; ν, the
///   pick's score and g_S within `tol` + 2γ·δ_t (+ √(2γκe_t) for the
///   ridge part of ν); L_t within `tol` + 2‖r‖δ_t + δ_t².
///
/// # Errors
/// The core's error, or a message naming the first disagreement.
#[allow(clippy::too_many_arguments)]
pub fn check_differential(
    query: &[f32],
    pool: &[f32],
    dim: usize,
    budget: usize,
    relevance: &RelevanceSpec,
    fam: Family,
    tol: f64,
) -> Result<DiffReport, String> {
    let mut selector = Selector::new();
    let method = Method::Pursuit(fam.options());
    check_differential_with(
        query,
        pool,
        dim,
        budget,
        relevance,
        fam,
        tol,
        &mut |input, k| selector.select(input, k, &method),
    )
}

/// [`check_differential`] for the certified int8 pursuit
/// (`Selector::select_int8`) on `codes` (default: the pool quantized by
/// [`Int8Candidates::quantize`]).
///
/// # Errors
/// The first disagreement.
#[allow(clippy::too_many_arguments)]
pub fn check_differential_int8(
    query: &[f32],
    pool: &[f32],
    dim: usize,
    budget: usize,
    relevance: &RelevanceSpec,
    fam: Family,
    tol: f64,
    codes: &Int8Candidates,
) -> Result<DiffReport, String> {
    let mut selector = Selector::new();
    let options = fam.options();
    check_differential_with(
        query,
        pool,
        dim,
        budget,
        relevance,
        fam,
        tol,
        &mut |input, k| {
            selector.select_int8_using(input, codes, k, &options, mempursuit::Int8Passes::Int8)
        },
    )
}

/// The certificate of the int8 pursuit, checked exactly: its selection is
/// the f32 pursuit's (`Selector::select` with the same options), bit for
/// bit — picks, weights, the stop reason, excluded and skipped rows and
/// every field of every step but `verified` —, every step after the first
/// that is not a relevance-fill pick verified ≥ 1 candidate (the first
/// pick and fill picks are scored by ρ itself, exactly: 0), and the picks
/// of budget t are the prefix of the picks of budget K.
///
/// # Errors
/// The first violation.
pub fn check_int8_certified(
    query: &[f32],
    pool: &[f32],
    budget: usize,
    relevance: &RelevanceSpec,
    fam: Family,
    codes: &Int8Candidates,
) -> Result<(), String> {
    let input = Input::new(query, pool).with_relevance(relevance.as_relevance());
    let options = fam.options();
    let mut selector = Selector::new();
    let int8 = |selector: &mut Selector, k: usize| {
        selector
            .select_int8_using(&input, codes, k, &options, mempursuit::Int8Passes::Int8)
            .map_err(|e| format!("core error: {e}"))
    };
    let full = int8(&mut selector, budget)?;
    let f32 = selector
        .select(&input, budget, &Method::Pursuit(options))
        .map_err(|e| format!("core error (f32): {e}"))?;
    same_selection(&full, &f32)?;
    for (t, st) in full.steps.iter().enumerate() {
        if t > 0 && !st.filled && st.verified < 1 {
            return Err(format!("step {t}: no candidate verified"));
        }
        if (t == 0 || st.filled) && st.verified != 0 {
            return Err(format!("step {t}: {} verified for a ρ pick", st.verified));
        }
    }
    for t in 0..full.picks.len() {
        let part = int8(&mut selector, t + 1)?;
        if part.picks[..] != full.picks[..=t] {
            return Err(format!("budget {} picks are not a prefix", t + 1));
        }
    }
    Ok(())
}

/// Exact screening is exact: [`Screening::On`] (screened from the first
/// pick, at any d) and [`Screening::Auto`] make the unscreened pursuit's
/// ([`Screening::Off`]) selection bit for bit, the counter `Step::verified`
/// aside ([`same_selection`]), or fail with the same error, for the
/// family's options (paper mode, the relevance-scaled family, centroid
/// pursuit).
///
/// # Errors
/// The first difference, naming the screening.
pub fn check_screened(
    query: &[f32],
    pool: &[f32],
    budget: usize,
    relevance: &RelevanceSpec,
    fam: Family,
) -> Result<(), String> {
    let input = Input::new(query, pool).with_relevance(relevance.as_relevance());
    let options = fam.options();
    let p = input.pool_size().unwrap_or(0);
    let mut selector = Selector::new();
    let mut run = |screening: Screening| -> Result<Selection, String> {
        let mut ws = selector.workspace(p, budget.min(p));
        pursuit_using(&input, budget, &options, screening, &mut ws, &mut Serial)
            .map(Selection::from)
            .map_err(|e| e.to_string())
    };
    let off = run(Screening::Off);
    for screening in [Screening::On, Screening::Auto] {
        match (run(screening), &off) {
            (Ok(a), Ok(b)) => same_selection(&a, b).map_err(|e| format!("{screening:?}: {e}"))?,
            (Err(a), Err(b)) if a == *b => {}
            (a, b) => return Err(format!("{screening:?}: {a:?} vs unscreened {b:?}")),
        }
    }
    Ok(())
}

/// Bit-for-bit equality of two selections, the counter `Step::verified`
/// aside.
///
/// # Errors
/// The first difference.
pub fn same_selection(a: &Selection, b: &Selection) -> Result<(), String> {
    if a.picks != b.picks {
        return Err(format!("picks {:?} vs f32 {:?}", a.picks, b.picks));
    }
    let bits = |w: &[f64]| w.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    if bits(&a.weights) != bits(&b.weights) {
        return Err(format!("weights {:?} vs f32 {:?}", a.weights, b.weights));
    }
    if a.stop != b.stop || a.excluded != b.excluded || a.skipped != b.skipped {
        return Err(format!(
            "stop/excluded/skipped {:?} {:?} {:?} vs f32 {:?} {:?} {:?}",
            a.stop, a.excluded, a.skipped, b.stop, b.excluded, b.skipped
        ));
    }
    // Every field but `verified`, floats by their bits.
    let key = |s: &Step| {
        format!(
            "{} {:x} {:x} {:x} {:x} {:x} {} {} {} {} {:?}",
            s.index,
            s.score.to_bits(),
            s.residual_sq.to_bits(),
            s.improvement.to_bits(),
            s.fw_gap.to_bits(),
            s.nu.to_bits(),
            s.free_size,
            s.solver_iterations,
            s.filled,
            s.dependent,
            s.refit
        )
    };
    for (t, (x, y)) in a.steps.iter().zip(&b.steps).enumerate() {
        if key(x) != key(y) {
            return Err(format!("step {t}: {x:?} vs f32 {y:?}"));
        }
    }
    Ok(())
}

/// [`check_differential`] with the selector call given: `select(input, k)`
/// runs the pursuit under test with budget k.
#[allow(clippy::too_many_arguments)]
fn check_differential_with(
    query: &[f32],
    pool: &[f32],
    dim: usize,
    budget: usize,
    relevance: &RelevanceSpec,
    fam: Family,
    tol: f64,
    select: &mut dyn FnMut(&Input<'_>, usize) -> Result<Selection, Error>,
) -> Result<DiffReport, String> {
    let geo = Geometry::new(query, pool, dim, relevance)?;
    let input = Input::new(query, pool).with_relevance(relevance.as_relevance());
    let sel: Selection = select(&input, budget).map_err(|e| format!("core error: {e}"))?;
    let rho = match relevance {
        RelevanceSpec::Similarity => None,
        _ => Some(&geo.rho[..]),
    };
    let reference = reference_pursuit(query, pool, dim, budget, fam.ridge, fam.gamma, rho);
    if sel.picks.len() != reference.picks.len() {
        return Err(format!(
            "core made {} picks, the reference {}",
            sel.picks.len(),
            reference.picks.len()
        ));
    }
    let n_all = sel.picks.len();
    // The core's weights after every step, and their f64 restricted gap.
    let mut weights: Vec<Vec<f64>> = Vec::with_capacity(n_all);
    let mut gaps = Vec::with_capacity(n_all);
    for t in 1..=n_all {
        let w = if t == n_all {
            sel.weights.clone()
        } else {
            select(&input, t)
                .map_err(|e| format!("core error: {e}"))?
                .weights
        };
        let e = if fam.ridge.is_finite() {
            let picks = &sel.picks[..t];
            let u = geo.scores(fam.gamma, picks, &w);
            let gk = fam.gamma * fam.ridge;
            let nu = picks.iter().zip(&w).map(|(&j, a)| a * u[j]).sum::<f64>()
                - gk * w.iter().map(|a| a * a).sum::<f64>();
            let best = picks
                .iter()
                .zip(&w)
                .map(|(&j, a)| u[j] - gk * a)
                .fold(f64::NEG_INFINITY, f64::max);
            (best - nu).max(0.0)
        } else {
            0.0
        };
        weights.push(w);
        gaps.push(e);
    }
    // The widened tolerances are only sound while the core's refits are
    // near-optimal: e_t may not exceed the f32 noise plus the pivot rule's
    // allowance for a blocked memory (its distance ≤ √(PIVOT_TOLERANCE·
    // (2 + κ)) times |ν| + 2 ≤ 3 on these pools); a larger gap is a
    // suboptimal refit, reported as such.
    let gap_cap =
        tol + 4.0 * score_tolerance(dim) + 3.0 * (PIVOT_TOLERANCE * (2.0 + fam.ridge)).sqrt();
    if let Some((t, e)) = gaps.iter().enumerate().find(|(_, &e)| e > gap_cap) {
        return Err(format!(
            "refit after step {t} is suboptimal in the f64 problem: restricted gap {e:e} > {gap_cap:e}"
        ));
    }
    let spread = |t: usize| (2.0 * (gaps[t] + 1e-15) / fam.gamma).sqrt();
    let spread = |t: usize| {
        if fam.ridge.is_finite() {
            spread(t)
        } else {
            0.0
        }
    };
    let tie = first_near_tie(&geo, fam, &reference, |t| {
        if t == 0 {
            0.0
        } else {
            2.0 * fam.gamma * spread(t - 1)
        }
    });
    let n = tie.unwrap_or(n_all);
    if sel.picks[..n] != reference.picks[..n] {
        return Err(format!(
            "picks differ before any near tie: core {:?}, reference {:?}",
            &sel.picks[..n],
            &reference.picks[..n]
        ));
    }
    let mut max_spread: f64 = 0.0;
    for t in 0..n {
        let (c, r) = (&sel.steps[t], &reference.steps[t]);
        let d = spread(t);
        max_spread = max_spread.max(d);
        let d_prev = if t == 0 { 0.0 } else { spread(t - 1) };
        let rn = r.residual_sq.max(0.0).sqrt();
        let ridge_part = if fam.ridge.is_finite() {
            (2.0 * fam.gamma * fam.ridge * gaps[t]).sqrt()
        } else {
            0.0
        };
        let checks = [
            ("score", c.score, r.score, tol + 2.0 * fam.gamma * d_prev),
            ("nu", c.nu, r.nu, tol + 2.0 * fam.gamma * d + ridge_part),
            (
                "residual_sq",
                c.residual_sq,
                r.residual_sq,
                tol + 2.0 * rn * d + d * d,
            ),
            (
                "fw_gap",
                c.fw_gap,
                r.fw_gap,
                tol + 4.0 * fam.gamma * d + ridge_part,
            ),
        ];
        for (name, a, b, bound) in checks {
            if (a - b).abs().is_nan() || (a - b).abs() > bound {
                return Err(format!(
                    "step {t}: {name} core {a} vs reference {b} (|diff| > {bound:e}; \
                     restricted gap {:e})",
                    gaps[t]
                ));
            }
        }
        if fam.ridge.is_finite() {
            let jc = geo.objective(fam.ridge, fam.gamma, &sel.picks[..=t], &weights[t]);
            let jr = geo.objective(fam.ridge, fam.gamma, &reference.picks[..=t], &r.weights);
            if (jc - jr).abs().is_nan() || (jc - jr).abs() > gaps[t] + tol {
                return Err(format!(
                    "step {t}: objective core {jc} vs reference {jr} (restricted gap {:e})",
                    gaps[t]
                ));
            }
        }
    }
    Ok(DiffReport {
        compared: n,
        tied: tie.is_some(),
        max_reconstruction_spread: max_spread,
    })
}

/// Checks that a selector's `Ok` result is valid: at most min(K, P)
/// distinct picks, each < P and not excluded; every step finite
/// (score, residual, improvement, gap, ν) and aligned with the picks;
/// for the pursuit (`weights_expected`) one weight per pick, each finite
/// and ≥ 0, summing to 1 within 1e-9; for the baselines no weights.
///
/// # Errors
/// A message naming the first violation.
pub fn check_valid_selection(
    sel: &Selection,
    pool: usize,
    budget: usize,
    weights_expected: bool,
) -> Result<(), String> {
    let n = sel.picks.len();
    if n > budget.min(pool) {
        return Err(format!("{n} picks for K = {budget}, P = {pool}"));
    }
    let mut seen = vec![false; pool];
    for &i in &sel.picks {
        if i >= pool || seen[i] {
            return Err(format!(
                "pick {i} out of range or repeated: {:?}",
                sel.picks
            ));
        }
        seen[i] = true;
        if sel.excluded.contains(&i) {
            return Err(format!("excluded row {i} was picked"));
        }
    }
    if sel.steps.len() != n || sel.steps.iter().zip(&sel.picks).any(|(s, &i)| s.index != i) {
        return Err("steps not aligned with picks".into());
    }
    for (t, s) in sel.steps.iter().enumerate() {
        let vals = [s.score, s.residual_sq, s.improvement, s.fw_gap, s.nu];
        if vals.iter().any(|v| !v.is_finite()) {
            return Err(format!("step {t} not finite: {s:?}"));
        }
    }
    if weights_expected {
        if sel.weights.len() != n {
            return Err(format!("{} weights for {n} picks", sel.weights.len()));
        }
        if n > 0 {
            let sum: f64 = sel.weights.iter().sum();
            if sel.weights.iter().any(|w| !w.is_finite() || *w < 0.0) || (sum - 1.0).abs() > 1e-9 {
                return Err(format!("weights off the simplex: {:?}", sel.weights));
            }
        }
    } else if !sel.weights.is_empty() {
        return Err("a baseline returned weights".into());
    }
    Ok(())
}

/// Proposition 1 on a generated instance: if it is certified, the first h
/// picks of the pursuit with ridge `ridge` (γ = 1, ρ = b) are one member of
/// each cluster and no distractor. Returns whether the instance was
/// certified (uncertified instances are not checked).
///
/// # Errors
/// The core's error, or a message with the picks, labels and realized
/// parameters.
pub fn check_coverage(
    inst: &mempursuit::synth::FactClusterInstance,
    ridge: f64,
) -> Result<bool, String> {
    if !inst.certified() {
        return Ok(false);
    }
    let h = inst.facts();
    let options = PursuitOptions {
        ridge,
        input: InputPolicy {
            normalization: Normalization::Cosine,
            ..InputPolicy::default()
        },
        ..PursuitOptions::default()
    };
    let sel = Selector::new()
        .select(&inst.input(), h + 1, &Method::Pursuit(options))
        .map_err(|e| format!("core error: {e}"))?;
    if !inst.covers_all_facts(&sel.picks) {
        let labels: Vec<_> = sel.picks.iter().map(|&i| inst.labels[i]).collect();
        return Err(format!(
            "Proposition 1 violated (ridge {ridge}): first {h} picks {:?} have labels {labels:?}; \
             realized {:?}",
            &sel.picks, inst.realized
        ));
    }
    Ok(true)
}
