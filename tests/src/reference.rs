//! A naive, independent f64 reference of MemPursuit, its relevance-scaled
//! family (ARCHITECTURE.md, “The relevance-scaled family”) and the two
//! baselines.
//!
//! Nothing here shares code with `mempursuit-core`: the Gram matrix is the
//! full P × P matrix computed in f64 from the f32 inputs (every vector first
//! normalized in f64, so all similarities are cosines), the refit is
//! re-solved from scratch at every step by [`simplex_qp`] (support
//! enumeration, or FISTA with an exact simplex projection and a primal–dual
//! interior-point fallback; never an active set),
//! and all loops are plain scalar code. It is slow on purpose; use it only on
//! small pools (P up to a few hundred, K up to ~60).
//!
//! All functions here assume valid input (d ≥ 1, a P × d row-major pool,
//! finite non-zero vectors) and panic otherwise: they are test oracles, not
//! a library API.

use nalgebra::{DMatrix, DVector};

/// Problems with at most this many variables are solved by enumerating every
/// support in [`simplex_qp`]; larger ones by [`simplex_qp_iterative`].
/// 8 keeps the enumeration (2⁸ KKT solves) cheap in a debug build.
pub const ENUMERATION_MAX: usize = 8;

/// One step of [`reference_pursuit`].
#[derive(Debug, Clone, PartialEq)]
pub struct RefStep {
    /// Pool index picked at this step.
    pub pick: usize,
    /// Its score U = ρ − γ G_{i,S} α at pick time (ρ_i at the first step).
    pub score: f64,
    /// Simplex weights after this step's refit, aligned with the picks so far.
    pub weights: Vec<f64>,
    /// ν_S = Σ α_j U_j − γκ‖α‖² after the refit (Eq. 14 with λ → γκ); for
    /// κ = ∞ (centroid pursuit) the mean of U over the picks.
    pub nu: f64,
    /// L_t = ‖q − Σ α_j m_j‖² after the refit, no ridge term (q and m unit).
    pub residual_sq: f64,
    /// g_S = max(0, max_{i∉S} U_i − ν_S) (Theorem B.2); for κ = ∞ the
    /// unclamped diagnostic max_{i∉S} U_i − mean_{j∈S} U_j. 0 when no
    /// candidate is left.
    pub fw_gap: f64,
}

/// The result of [`reference_pursuit`].
#[derive(Debug, Clone, PartialEq)]
pub struct RefResult {
    /// Picks in entry order.
    pub picks: Vec<usize>,
    /// One record per pick.
    pub steps: Vec<RefStep>,
}

/// A query and its pool in f64: unit query, unit rows, cosines and the full
/// Gram matrix, all computed in f64 from the f32 inputs.
#[derive(Debug, Clone)]
pub struct Problem {
    /// Embedding dimension d.
    pub dim: usize,
    /// The query, normalized in f64 (length d).
    pub query: Vec<f64>,
    /// The candidates, each row normalized in f64 (P rows of length d).
    pub rows: Vec<Vec<f64>>,
    /// b_i = m̂_i · q̂, the query cosines (length P).
    pub b: Vec<f64>,
    /// G_ij = m̂_i · m̂_j, the full P × P Gram matrix of cosines.
    pub gram: DMatrix<f64>,
}

/// `v / ‖v‖` in f64.
///
/// # Panics
/// If `v` is zero or not finite.
pub fn unit_f64(v: &[f32]) -> Vec<f64> {
    let n = v
        .iter()
        .map(|&x| (x as f64) * (x as f64))
        .sum::<f64>()
        .sqrt();
    assert!(
        n > 0.0 && n.is_finite(),
        "reference: zero or non-finite vector"
    );
    v.iter().map(|&x| x as f64 / n).collect()
}

/// Plain f64 dot product over the common length, summed left to right.
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    // An index loop rather than iterator adaptors: the tests run unoptimized
    // and this is the reference's hot loop.
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut s = 0.0;
    for i in 0..n {
        s += a[i] * b[i];
    }
    s
}

impl Problem {
    /// Builds the f64 problem from a query (d values) and a row-major
    /// P × d f32 pool.
    ///
    /// # Panics
    /// If `dim == 0`, `query.len() != dim`, `candidates.len()` is not a
    /// multiple of `dim`, or any vector is zero or non-finite.
    pub fn new(query: &[f32], candidates: &[f32], dim: usize) -> Problem {
        assert!(dim > 0 && query.len() == dim && candidates.len().is_multiple_of(dim));
        let q = unit_f64(query);
        let rows: Vec<Vec<f64>> = candidates.chunks_exact(dim).map(unit_f64).collect();
        let p = rows.len();
        let b = rows.iter().map(|r| dot(r, &q)).collect();
        let mut gram = DMatrix::zeros(p, p);
        for i in 0..p {
            for j in 0..=i {
                let g = dot(&rows[i], &rows[j]);
                gram[(i, j)] = g;
                gram[(j, i)] = g;
            }
        }
        Problem {
            dim,
            query: q,
            rows,
            b,
            gram,
        }
    }

    /// Pool size P.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the pool is empty.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Scores `U_i = ρ_i − γ Σ_a G[i, picks[a]]·weights[a]` for every pool
    /// index (Eq. 9, with ρ and γ of the relevance-scaled family).
    pub fn scores(&self, rho: &[f64], gamma: f64, picks: &[usize], weights: &[f64]) -> Vec<f64> {
        (0..self.len())
            .map(|i| {
                let g: f64 = picks
                    .iter()
                    .zip(weights)
                    .map(|(&j, &w)| self.gram[(i, j)] * w)
                    .sum();
                rho[i] - gamma * g
            })
            .collect()
    }

    /// `L = ‖q̂ − Σ_a weights[a]·m̂[picks[a]]‖²`, computed from the vectors
    /// themselves (no cancellation-prone expansion).
    pub fn residual_sq(&self, picks: &[usize], weights: &[f64]) -> f64 {
        let mut r = self.query.clone();
        for (&j, &w) in picks.iter().zip(weights) {
            for (rk, mk) in r.iter_mut().zip(&self.rows[j]) {
                *rk -= w * mk;
            }
        }
        dot(&r, &r)
    }

    /// The refit's QP on the index set `idx`: H = γ (G_SS + κ I),
    /// c = ρ_S (γ = 1, κ = λ, ρ = b is Eq. 6 up to a constant).
    pub fn qp(&self, idx: &[usize], rho: &[f64], ridge: f64, gamma: f64) -> Qp {
        let n = idx.len();
        let h = DMatrix::from_fn(n, n, |a, c| {
            gamma * (self.gram[(idx[a], idx[c])] + if a == c { ridge } else { 0.0 })
        });
        let c = DVector::from_fn(n, |a, _| rho[idx[a]]);
        Qp { h, c }
    }
}

/// The curvature μ of the refit's objective on the face of the free set
/// `F = {a : weights[a] > 1e-9}`: the smallest eigenvalue of
/// γ (G_FF + κI) restricted to the directions {Σ d = 0} (∞ when |F| ≤ 1).
///
/// A perturbation ε of the scores U (e.g. f32 rounding of the Gram rows,
/// ~1e-7) moves the minimizer by about ε / μ: this sizes the tolerance of a
/// weight comparison.
pub fn face_curvature(
    pb: &Problem,
    picks: &[usize],
    weights: &[f64],
    ridge: f64,
    gamma: f64,
) -> f64 {
    let f: Vec<usize> = picks
        .iter()
        .zip(weights)
        .filter(|(_, &w)| w > 1e-9)
        .map(|(&j, _)| j)
        .collect();
    let n = f.len();
    if n < 2 {
        return f64::INFINITY;
    }
    let h = DMatrix::from_fn(n, n, |a, b| {
        gamma * (pb.gram[(f[a], f[b])] + if a == b { ridge } else { 0.0 })
    });
    // Orthonormal basis of {Σ d = 0}: the eigenvectors of I − 11ᵀ/n with
    // eigenvalue 1.
    let proj = DMatrix::from_fn(n, n, |a, b| f64::from(u8::from(a == b)) - 1.0 / n as f64);
    let e = proj.symmetric_eigen();
    let cols: Vec<usize> = (0..n).filter(|&k| e.eigenvalues[k] > 0.5).collect();
    let z = DMatrix::from_fn(n, cols.len(), |a, b| e.eigenvectors[(a, cols[b])]);
    (z.transpose() * h * z).symmetric_eigen().eigenvalues.min()
}

/// A simplex QP: minimize ½ aᵀ H a − cᵀ a subject to a ≥ 0, Σ a = 1.
#[derive(Debug, Clone)]
pub struct Qp {
    /// Symmetric PSD Hessian H (n × n).
    pub h: DMatrix<f64>,
    /// Linear term c (length n).
    pub c: DVector<f64>,
}

/// Lowest-index argmax of `values` over the indices where `allowed` is true.
fn argmax_where(values: &[f64], allowed: impl Fn(usize) -> bool) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, &v) in values.iter().enumerate() {
        if allowed(i) && best.is_none_or(|b| v > values[b]) {
            best = Some(i);
        }
    }
    best
}

/// Naive MemPursuit and its family in f64: full P×P Gram computed in f64 from
/// the f32 inputs (cosines: each vector normalized in f64), dense simplex QP
/// re-solved from scratch at every step, scalar code, no code shared with
/// mempursuit-core.
///
/// * `query`: d values; `candidates`: row-major P × d; `dim` = d.
/// * `budget`: K; selects min(K, P) memories.
/// * `ridge`: κ (λ in the paper, 1e-10 there); `f64::INFINITY` gives
///   centroid pursuit (α = 1/|S|, no QP).
/// * `gamma`: γ ∈ (0, 1] (1 = the paper's method).
/// * `relevance`: ρ (length P); `None` means ρ = b, the query cosines.
///
/// Each step: U_i = ρ_i − γ Σ_{j∈S} G_ij α_j for every unselected i (ρ_i
/// when S is empty), pick the lowest-index argmax, then
/// α = argmin_{simplex} (γ/2) αᵀ(G_SS + κI)α − ρ_Sᵀα via [`simplex_qp`].
///
/// # Panics
/// On invalid input (see the module docs), `ridge < 0`, `gamma ≤ 0` or a
/// relevance vector of the wrong length.
pub fn reference_pursuit(
    query: &[f32],
    candidates: &[f32],
    dim: usize,
    budget: usize,
    ridge: f64,
    gamma: f64,
    relevance: Option<&[f64]>,
) -> RefResult {
    reference_pursuit_costed(
        query, candidates, dim, budget, ridge, gamma, relevance, None,
    )
}

/// A budget in cost for the references: candidate i may be picked while
/// Σ_{j picked} c_j + c_i ≤ C, the sum taken in f64 in pick order.
#[derive(Debug, Clone, Copy)]
pub struct RefCosts<'a> {
    /// c_i, one per candidate.
    pub costs: &'a [f32],
    /// C.
    pub total: f64,
}

impl RefCosts<'_> {
    /// Whether candidate `i` fits after spending `spent`.
    pub fn fits(&self, spent: f64, i: usize) -> bool {
        spent + self.costs[i] as f64 <= self.total
    }
}

/// Whether candidate `i` fits the optional budget after spending `spent`.
fn fits(costs: Option<RefCosts<'_>>, spent: f64, i: usize) -> bool {
    costs.is_none_or(|c| c.fits(spent, i))
}

/// [`reference_pursuit`] with an optional budget in cost: every step's
/// argmax (and the Frank–Wolfe gap's maximum) runs over the unselected
/// candidates that still fit; the pursuit ends when none fits.
///
/// # Panics
/// As [`reference_pursuit`].
#[allow(clippy::too_many_arguments)]
pub fn reference_pursuit_costed(
    query: &[f32],
    candidates: &[f32],
    dim: usize,
    budget: usize,
    ridge: f64,
    gamma: f64,
    relevance: Option<&[f64]>,
    costs: Option<RefCosts<'_>>,
) -> RefResult {
    assert!(ridge >= 0.0 && gamma > 0.0);
    let pb = Problem::new(query, candidates, dim);
    let p = pb.len();
    let rho: Vec<f64> = match relevance {
        Some(r) => {
            assert_eq!(r.len(), p, "reference: relevance length");
            r.to_vec()
        }
        None => pb.b.clone(),
    };
    let centroid = ridge == f64::INFINITY;
    let mut selected = vec![false; p];
    let mut picks = Vec::new();
    let mut steps = Vec::new();
    let mut u = rho.clone();
    let mut spent = 0.0f64;
    for _ in 0..budget.min(p) {
        let Some(i) = argmax_where(&u, |j| !selected[j] && fits(costs, spent, j)) else {
            break;
        };
        let score = u[i];
        selected[i] = true;
        picks.push(i);
        spent += costs.map_or(0.0, |c| c.costs[i] as f64);
        let n = picks.len();
        let weights: Vec<f64> = if centroid {
            vec![1.0 / n as f64; n]
        } else {
            let qp = pb.qp(&picks, &rho, ridge, gamma);
            simplex_qp(&qp.h, &qp.c).iter().copied().collect()
        };
        u = pb.scores(&rho, gamma, &picks, &weights);
        let nu = if centroid {
            picks.iter().map(|&j| u[j]).sum::<f64>() / n as f64
        } else {
            let au: f64 = picks.iter().zip(&weights).map(|(&j, &w)| w * u[j]).sum();
            let aa: f64 = weights.iter().map(|w| w * w).sum();
            au - gamma * ridge * aa
        };
        let fw_gap = match argmax_where(&u, |j| !selected[j] && fits(costs, spent, j)) {
            None => 0.0,
            Some(m) if centroid => u[m] - nu,
            Some(m) => (u[m] - nu).max(0.0),
        };
        steps.push(RefStep {
            pick: i,
            score,
            residual_sq: pb.residual_sq(&picks, &weights),
            weights,
            nu,
            fw_gap,
        });
    }
    RefResult { picks, steps }
}

/// Top-K by the f64 query cosine, ties to the lowest index.
///
/// # Panics
/// On invalid input (see the module docs).
pub fn reference_top_k(query: &[f32], candidates: &[f32], dim: usize, budget: usize) -> Vec<usize> {
    reference_top_k_costed(query, candidates, dim, budget, None)
}

/// [`reference_top_k`] with an optional budget in cost: the pool in cosine
/// order, each candidate taken if it still fits, until K are taken.
///
/// # Panics
/// On invalid input (see the module docs).
pub fn reference_top_k_costed(
    query: &[f32],
    candidates: &[f32],
    dim: usize,
    budget: usize,
    costs: Option<RefCosts<'_>>,
) -> Vec<usize> {
    let pb = Problem::new(query, candidates, dim);
    let mut order: Vec<usize> = (0..pb.len()).collect();
    // Stable sort: equal cosines keep ascending index order.
    order.sort_by(|&a, &b| pb.b[b].total_cmp(&pb.b[a]));
    let mut picks = Vec::new();
    let mut spent = 0.0f64;
    for i in order {
        if picks.len() == budget {
            break;
        }
        if fits(costs, spent, i) {
            spent += costs.map_or(0.0, |c| c.costs[i] as f64);
            picks.push(i);
        }
    }
    picks
}

/// MMR (Carbonell & Goldstein 1998) in f64: each pick is the lowest-index
/// argmax of λ b_i − (1 − λ) max_{s∈S} G_is over unselected i (no penalty
/// for the first pick).
///
/// # Panics
/// On invalid input (see the module docs).
pub fn reference_mmr(
    query: &[f32],
    candidates: &[f32],
    dim: usize,
    budget: usize,
    lambda: f64,
) -> Vec<usize> {
    reference_mmr_costed(query, candidates, dim, budget, lambda, None)
}

/// [`reference_mmr`] with an optional budget in cost: each argmax over the
/// unselected candidates that still fit; ends when none fits.
///
/// # Panics
/// On invalid input (see the module docs).
pub fn reference_mmr_costed(
    query: &[f32],
    candidates: &[f32],
    dim: usize,
    budget: usize,
    lambda: f64,
    costs: Option<RefCosts<'_>>,
) -> Vec<usize> {
    let pb = Problem::new(query, candidates, dim);
    let p = pb.len();
    let mut selected = vec![false; p];
    let mut picks: Vec<usize> = Vec::new();
    let mut spent = 0.0f64;
    for _ in 0..budget.min(p) {
        let scores: Vec<f64> = (0..p)
            .map(|i| {
                let pen = picks
                    .iter()
                    .map(|&s| pb.gram[(i, s)])
                    .fold(f64::NEG_INFINITY, f64::max);
                let pen = if picks.is_empty() { 0.0 } else { pen };
                lambda * pb.b[i] - (1.0 - lambda) * pen
            })
            .collect();
        let Some(i) = argmax_where(&scores, |j| !selected[j] && fits(costs, spent, j)) else {
            assert!(costs.is_some(), "an unselected candidate");
            break;
        };
        selected[i] = true;
        picks.push(i);
        spent += costs.map_or(0.0, |c| c.costs[i] as f64);
    }
    picks
}

// ---------------------------------------------------------------------------
// The simplex QP
// ---------------------------------------------------------------------------

/// ½ aᵀ H a − cᵀ a.
pub fn qp_objective(h: &DMatrix<f64>, c: &DVector<f64>, a: &[f64]) -> f64 {
    let n = a.len();
    let mut quad = 0.0;
    for i in 0..n {
        for j in 0..n {
            quad += a[i] * h[(i, j)] * a[j];
        }
    }
    0.5 * quad - (0..n).map(|i| c[i] * a[i]).sum::<f64>()
}

/// The Frank–Wolfe gap of a point `a` on the simplex:
/// max_j U_j − Σ_j a_j U_j with U = c − H a (the negative gradient). It is
/// ≥ 0 and bounds the suboptimality: objective(a) − min ≤ gap.
pub fn qp_fw_gap(h: &DMatrix<f64>, c: &DVector<f64>, a: &[f64]) -> f64 {
    let u = neg_gradient(h, c, a);
    let max = u.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    max - dot(a, &u)
}

fn neg_gradient(h: &DMatrix<f64>, c: &DVector<f64>, a: &[f64]) -> Vec<f64> {
    let n = a.len();
    (0..n)
        .map(|i| c[i] - (0..n).map(|j| h[(i, j)] * a[j]).sum::<f64>())
        .collect()
}

/// min over the simplex of (1/2) aᵀ H a − cᵀ a for a small dense symmetric PSD H (n ≤ ~60), accurate to ~1e-12 in the objective.
///
/// n ≤ [`ENUMERATION_MAX`]: [`simplex_qp_enumerate`]; larger n:
/// [`simplex_qp_iterative`]. Neither is the core's primal active set.
/// When the minimizer is not unique (singular H) any minimizer may be
/// returned.
///
/// # Panics
/// If n = 0, H is not n × n, or the inputs are not finite.
pub fn simplex_qp(h: &DMatrix<f64>, c: &DVector<f64>) -> DVector<f64> {
    let n = c.len();
    assert!(
        n > 0 && h.nrows() == n && h.ncols() == n,
        "simplex_qp: shape"
    );
    assert!(
        h.iter().chain(c.iter()).all(|v| v.is_finite()),
        "simplex_qp: non-finite input"
    );
    if n <= ENUMERATION_MAX {
        simplex_qp_enumerate(h, c)
    } else {
        simplex_qp_iterative(h, c)
    }
}

/// Solves the dense system `m` x = `rhs` (`m` row-major k × k) in place by
/// Gaussian elimination with partial pivoting. Returns false if a pivot is
/// ≤ `rel_tol` · (largest |entry|), i.e. the system is numerically singular,
/// or the solution is not finite.
fn gauss_solve(m: &mut [f64], k: usize, rhs: &mut [f64], rel_tol: f64) -> bool {
    let scale = m.iter().fold(0.0f64, |s, v| s.max(v.abs()));
    if scale == 0.0 {
        return false;
    }
    for col in 0..k {
        let piv = (col..k)
            .max_by(|&a, &b| m[a * k + col].abs().total_cmp(&m[b * k + col].abs()))
            .unwrap_or(col);
        if m[piv * k + col].abs() <= rel_tol * scale {
            return false;
        }
        if piv != col {
            for j in 0..k {
                m.swap(piv * k + j, col * k + j);
            }
            rhs.swap(piv, col);
        }
        let d = m[col * k + col];
        for r in col + 1..k {
            let f = m[r * k + col] / d;
            if f != 0.0 {
                for j in col..k {
                    m[r * k + j] -= f * m[col * k + j];
                }
                rhs[r] -= f * rhs[col];
            }
        }
    }
    for r in (0..k).rev() {
        let mut v = rhs[r];
        for j in r + 1..k {
            v -= m[r * k + j] * rhs[j];
        }
        rhs[r] = v / m[r * k + r];
    }
    rhs.iter().all(|v| v.is_finite())
}

/// Turns a solution of a face's KKT system into a point on the simplex:
/// rejects it if a weight is below −1e-12 (the face's stationary point is
/// infeasible), otherwise clamps round-off negatives to 0 and renormalizes.
fn to_simplex(a: &mut [f64]) -> bool {
    if a.iter().any(|&v| !v.is_finite() || v < -1e-12) {
        return false;
    }
    let mut s = 0.0;
    for v in a.iter_mut() {
        *v = v.max(0.0);
        s += *v;
    }
    if s <= 0.0 {
        return false;
    }
    a.iter_mut().for_each(|v| *v /= s);
    true
}

/// Exact simplex QP by support enumeration (n ≤ 20): for every non-empty
/// support S, solve the face's KKT equalities
/// `[H_SS 1; 1ᵀ 0] [a_S; ν] = [c_S; 1]` by Gaussian elimination; keep the
/// feasible solution (a_S ≥ 0) with the lowest objective, first found on
/// ties. Singular faces are skipped: the minimum is then also attained on a
/// smaller face with a unique stationary point, so it is still found.
/// Cost O(2ⁿ n³).
///
/// # Panics
/// If n = 0 or n > 20.
pub fn simplex_qp_enumerate(h: &DMatrix<f64>, c: &DVector<f64>) -> DVector<f64> {
    let n = c.len();
    assert!(n > 0 && n <= 20, "simplex_qp_enumerate: n = {n}");
    let mut best: Option<(f64, Vec<f64>)> = None;
    let mut idx = Vec::with_capacity(n);
    let mut m = vec![0.0; (n + 1) * (n + 1)];
    let mut rhs = vec![0.0; n + 1];
    let mut full = vec![0.0; n];
    for mask in 1u32..(1u32 << n) {
        idx.clear();
        idx.extend((0..n).filter(|&j| mask & (1 << j) != 0));
        let k = idx.len() + 1;
        for (a, &i) in idx.iter().enumerate() {
            for (b, &j) in idx.iter().enumerate() {
                m[a * k + b] = h[(i, j)];
            }
            m[a * k + k - 1] = 1.0;
            m[(k - 1) * k + a] = 1.0;
            rhs[a] = c[i];
        }
        m[(k - 1) * k + k - 1] = 0.0;
        rhs[k - 1] = 1.0;
        if !gauss_solve(&mut m[..k * k], k, &mut rhs[..k], 1e-14) {
            continue;
        }
        if !to_simplex(&mut rhs[..k - 1]) {
            continue;
        }
        full.iter_mut().for_each(|v| *v = 0.0);
        for (a, &i) in idx.iter().enumerate() {
            full[i] = rhs[a];
        }
        let f = qp_objective(h, c, &full);
        if best.as_ref().is_none_or(|(bf, _)| f < *bf) {
            best = Some((f, full.clone()));
        }
    }
    // Some vertex always has a non-singular 2 × 2 KKT system.
    let (_, a) = best.expect("a vertex is always a feasible face");
    DVector::from_vec(a)
}

/// Euclidean projection of `v` onto the probability simplex
/// {x ≥ 0, Σ x = 1}, by sorting (Held, Wolfe & Crowder 1974; Duchi et al.
/// 2008): x = max(v − θ, 0) with θ from the largest prefix of the sorted
/// values that stays positive.
pub fn project_simplex(v: &[f64]) -> Vec<f64> {
    let mut s: Vec<f64> = v.to_vec();
    s.sort_by(|a, b| b.total_cmp(a));
    let mut cum = 0.0;
    let mut theta = 0.0;
    for (j, &x) in s.iter().enumerate() {
        cum += x;
        let t = (cum - 1.0) / (j + 1) as f64;
        if x - t > 0.0 {
            theta = t;
        }
    }
    v.iter().map(|&x| (x - theta).max(0.0)).collect()
}

/// Solves the KKT equalities of the face `support` in the least-squares
/// sense (SVD, so singular faces give the minimum-norm stationary point) and
/// maps the result onto the simplex; `None` if it is infeasible.
fn polish(h: &DMatrix<f64>, c: &DVector<f64>, support: &[usize]) -> Option<Vec<f64>> {
    let n = c.len();
    let k = support.len() + 1;
    if k == 1 {
        return None;
    }
    let m = DMatrix::from_fn(k, k, |a, b| match (a < k - 1, b < k - 1) {
        (true, true) => h[(support[a], support[b])],
        (true, false) | (false, true) => 1.0,
        (false, false) => 0.0,
    });
    let rhs = DVector::from_fn(k, |a, _| if a < k - 1 { c[support[a]] } else { 1.0 });
    // Gaussian elimination first (fast); SVD when the face is singular.
    let mut flat: Vec<f64> = (0..k * k).map(|i| m[(i / k, i % k)]).collect();
    let mut x: Vec<f64> = rhs.iter().copied().collect();
    if !gauss_solve(&mut flat, k, &mut x, 1e-14) {
        x = m
            .svd(true, true)
            .solve(&rhs, 1e-13)
            .ok()?
            .iter()
            .copied()
            .collect();
    }
    let mut a: Vec<f64> = x[..k - 1].to_vec();
    if !to_simplex(&mut a) {
        return None;
    }
    let mut full = vec![0.0; n];
    for (ai, &i) in support.iter().enumerate() {
        full[i] = a[ai];
    }
    Some(full)
}

/// Simplex QP for any n, in two stages, each followed by a support polish.
///
/// 1. Accelerated projected gradient (FISTA with function-value restarts,
///    step 1/L with L the Gershgorin bound on λ_max(H), exact projection by
///    [`project_simplex`]), up to 1,600 iterations: fast on well-conditioned
///    problems.
/// 2. If that is not certified: a primal–dual interior-point method
///    ([`simplex_qp_interior`]), which converges in a few dozen Newton steps
///    whatever the conditioning (near-duplicate memories, ridge 1e-10).
///
/// The polish solves the KKT equalities (Gaussian elimination, SVD least
/// squares on singular faces) on supports read off the iterate (its
/// non-zeros, its clearly non-zeros, and the coordinates whose negative
/// gradient is within 1e-8 of the iterate's mean). A point is returned as
/// soon as its Frank–Wolfe gap ([`qp_fw_gap`]) is ≤ 1e-13 · (1 + max|H| +
/// max|c|), which bounds its objective error; otherwise the best point seen
/// (by objective) is returned, whose error is then bounded by the
/// interior-point duality gap (≤ ~1e-13 on the problems of this crate).
///
/// # Panics
/// If n = 0.
pub fn simplex_qp_iterative(h: &DMatrix<f64>, c: &DVector<f64>) -> DVector<f64> {
    let n = c.len();
    assert!(n > 0);
    let hmax = h.iter().fold(0.0f64, |s, v| s.max(v.abs()));
    let cmax = c.iter().fold(0.0f64, |s, v| s.max(v.abs()));
    let tol = 1e-13 * (1.0 + hmax + cmax);
    let lip = (0..n)
        .map(|i| (0..n).map(|j| h[(i, j)].abs()).sum::<f64>())
        .fold(0.0f64, f64::max)
        .max(1e-12);
    let hflat: Vec<f64> = (0..n * n).map(|k| h[(k / n, k % n)]).collect();
    let cv: Vec<f64> = c.iter().copied().collect();
    let objective = |a: &[f64]| -> f64 {
        let mut f = 0.0;
        for i in 0..n {
            let row = &hflat[i * n..(i + 1) * n];
            f += a[i] * (0.5 * dot(row, a) - cv[i]);
        }
        f
    };
    let mut best: (f64, Vec<f64>) = (f64::INFINITY, vec![1.0 / n as f64; n]);
    // Polishes around `x`; returns a certified point, and keeps `best`.
    let try_point = |x: &[f64], best: &mut (f64, Vec<f64>)| -> Option<Vec<f64>> {
        let fx = objective(x);
        if fx < best.0 {
            *best = (fx, x.to_vec());
        }
        let u = neg_gradient(h, c, x);
        let nu = dot(x, &u);
        let xmax = x.iter().copied().fold(0.0f64, f64::max);
        let supports: [Vec<usize>; 3] = [
            (0..n).filter(|&j| x[j] > 0.0).collect(),
            (0..n).filter(|&j| x[j] > 1e-9 * xmax).collect(),
            (0..n).filter(|&j| u[j] >= nu - 1e-8).collect(),
        ];
        for (k, s) in supports.iter().enumerate() {
            if k > 0 && supports[..k].contains(s) {
                continue;
            }
            if let Some(a) = polish(h, c, s) {
                if qp_fw_gap(h, c, &a) <= tol {
                    return Some(a);
                }
                let f = objective(&a);
                if f < best.0 {
                    *best = (f, a);
                }
            }
        }
        (qp_fw_gap(h, c, x) <= tol).then(|| x.to_vec())
    };

    // Stage 1: FISTA.
    let mut x = vec![1.0 / n as f64; n];
    let mut fx = objective(&x);
    let mut y = x.clone();
    let mut t = 1.0f64;
    let mut grad_step = vec![0.0; n];
    for round in [50usize, 150, 400, 1000] {
        for _ in 0..round {
            for i in 0..n {
                let row = &hflat[i * n..(i + 1) * n];
                grad_step[i] = y[i] - (dot(row, &y) - cv[i]) / lip;
            }
            let xn = project_simplex(&grad_step);
            let fxn = objective(&xn);
            if fxn > fx {
                // Restart the momentum from the last accepted iterate.
                t = 1.0;
                y.clone_from(&x);
                continue;
            }
            let tn = 0.5 * (1.0 + (1.0 + 4.0 * t * t).sqrt());
            let beta = (t - 1.0) / tn;
            for i in 0..n {
                y[i] = xn[i] + beta * (xn[i] - x[i]);
            }
            x = xn;
            fx = fxn;
            t = tn;
        }
        if let Some(a) = try_point(&x, &mut best) {
            return DVector::from_vec(a);
        }
    }
    // Stage 2: interior point.
    let xi: Vec<f64> = simplex_qp_interior(h, c).iter().copied().collect();
    if let Some(a) = try_point(&xi, &mut best) {
        return DVector::from_vec(a);
    }
    DVector::from_vec(best.1)
}

/// Simplex QP by a primal–dual interior-point method (Mehrotra
/// predictor–corrector) on the KKT system
///
/// ```text
/// H x − c + ν 1 − z = 0,   1ᵀ x = 1,   x ∘ z = μ e,   x, z > 0,
/// ```
///
/// with one common step length for x, ν and z (0.99 of the way to the
/// boundary) and the reduced Newton system `[H + X⁻¹Z, 1; 1ᵀ, 0]` solved by
/// Gaussian elimination. Stops when the mean complementarity xᵀz/n and the
/// residuals are ≤ 1e-15 · (1 + max|H| + max|c|), or after 200 iterations.
/// The result is mapped onto the simplex (clamped at 0, renormalized): its
/// weights that should be 0 are ~1e-15, not exactly 0.
///
/// # Panics
/// If n = 0.
pub fn simplex_qp_interior(h: &DMatrix<f64>, c: &DVector<f64>) -> DVector<f64> {
    let n = c.len();
    assert!(n > 0);
    let scale = 1.0
        + h.iter().fold(0.0f64, |s, v| s.max(v.abs()))
        + c.iter().fold(0.0f64, |s, v| s.max(v.abs()));
    let stop = 1e-15 * scale;
    let mut x = vec![1.0 / n as f64; n];
    let mut z = vec![scale; n];
    let mut nu = 0.0f64;
    let k = n + 1;
    let mut m = vec![0.0; k * k];
    let mut rhs = vec![0.0; k];
    // Solves the reduced Newton system for a complementarity right-hand side
    // `rc` (Z dx + X dz = rc); returns (dx, dν, dz).
    let newton = |x: &[f64],
                  z: &[f64],
                  rd: &[f64],
                  rp: f64,
                  rc: &[f64],
                  m: &mut [f64],
                  rhs: &mut [f64]|
     -> Option<(Vec<f64>, f64, Vec<f64>)> {
        for i in 0..n {
            for j in 0..n {
                m[i * k + j] = h[(i, j)] + if i == j { z[i] / x[i] } else { 0.0 };
            }
            m[i * k + n] = 1.0;
            m[n * k + i] = 1.0;
            rhs[i] = -rd[i] + rc[i] / x[i];
        }
        m[n * k + n] = 0.0;
        rhs[n] = -rp;
        if !gauss_solve(m, k, rhs, 0.0) {
            return None;
        }
        let dx = rhs[..n].to_vec();
        let dnu = rhs[n];
        let dz = (0..n).map(|i| (rc[i] - z[i] * dx[i]) / x[i]).collect();
        Some((dx, dnu, dz))
    };
    let max_step = |v: &[f64], dv: &[f64]| -> f64 {
        v.iter()
            .zip(dv)
            .filter(|(_, &d)| d < 0.0)
            .map(|(&a, &d)| -a / d)
            .fold(1.0f64, f64::min)
    };
    for _ in 0..200 {
        let hx: Vec<f64> = (0..n)
            .map(|i| (0..n).map(|j| h[(i, j)] * x[j]).sum())
            .collect();
        let rd: Vec<f64> = (0..n).map(|i| hx[i] - c[i] + nu - z[i]).collect();
        let rp = x.iter().sum::<f64>() - 1.0;
        let mu = dot(&x, &z) / n as f64;
        let rd_max = rd.iter().fold(0.0f64, |s, v| s.max(v.abs()));
        if mu <= stop && rd_max <= stop && rp.abs() <= stop {
            break;
        }
        // Predictor (affine scaling).
        let rc: Vec<f64> = (0..n).map(|i| -x[i] * z[i]).collect();
        let Some((dxa, _, dza)) = newton(&x, &z, &rd, rp, &rc, &mut m, &mut rhs) else {
            break;
        };
        let a_aff = max_step(&x, &dxa).min(max_step(&z, &dza));
        let mu_aff = (0..n)
            .map(|i| (x[i] + a_aff * dxa[i]) * (z[i] + a_aff * dza[i]))
            .sum::<f64>()
            / n as f64;
        let sigma = (mu_aff / mu).powi(3).min(1.0);
        // Corrector.
        let rc: Vec<f64> = (0..n)
            .map(|i| -x[i] * z[i] - dxa[i] * dza[i] + sigma * mu)
            .collect();
        let Some((dx, dnu, dz)) = newton(&x, &z, &rd, rp, &rc, &mut m, &mut rhs) else {
            break;
        };
        let a = (0.99 * max_step(&x, &dx).min(max_step(&z, &dz))).min(1.0);
        for i in 0..n {
            x[i] += a * dx[i];
            z[i] += a * dz[i];
        }
        nu += a * dnu;
        if x.iter().chain(&z).any(|v| !(v.is_finite() && *v > 0.0)) {
            break;
        }
    }
    let mut a: Vec<f64> = x
        .iter()
        .map(|v| if v.is_finite() { v.max(0.0) } else { 0.0 })
        .collect();
    let s: f64 = a.iter().sum();
    if s > 0.0 && s.is_finite() {
        a.iter_mut().for_each(|v| *v /= s);
    } else {
        a = vec![1.0 / n as f64; n];
    }
    DVector::from_vec(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projection_examples() {
        // Already on the simplex: unchanged.
        assert_eq!(project_simplex(&[0.25, 0.75]), vec![0.25, 0.75]);
        // (1, 1) → θ = 0.5 → (0.5, 0.5).
        assert_eq!(project_simplex(&[1.0, 1.0]), vec![0.5, 0.5]);
        // (2, 0, −1) → θ = 1 → (1, 0, 0).
        assert_eq!(project_simplex(&[2.0, 0.0, -1.0]), vec![1.0, 0.0, 0.0]);
        // (0.5, 0.4, 0.3): θ = (1.2 − 1)/3 → (0.4333.., 0.3333.., 0.2333..).
        let p = project_simplex(&[0.5, 0.4, 0.3]);
        let want = [0.5 - 0.2 / 3.0, 0.4 - 0.2 / 3.0, 0.3 - 0.2 / 3.0];
        for (a, b) in p.iter().zip(want) {
            assert!((a - b).abs() < 1e-15);
        }
    }

    #[test]
    fn two_variable_qp_by_hand() {
        // H = I, c = (1, 0): minimize ½(a²+b²) − a on a + b = 1:
        // a − 1 + ν = 0, b + ν = 0 → a = 1, b = 0 (on the boundary).
        let h = DMatrix::identity(2, 2);
        let c = DVector::from_vec(vec![1.0, 0.0]);
        let a = simplex_qp(&h, &c);
        assert!((a[0] - 1.0).abs() < 1e-14 && a[1].abs() < 1e-14);
        // c = (0.5, 0): a − 0.5 = b → a = 0.75, b = 0.25.
        let c = DVector::from_vec(vec![0.5, 0.0]);
        let a = simplex_qp(&h, &c);
        assert!((a[0] - 0.75).abs() < 1e-14 && (a[1] - 0.25).abs() < 1e-14);
        let a = simplex_qp_iterative(&h, &c);
        assert!((a[0] - 0.75).abs() < 1e-12 && (a[1] - 0.25).abs() < 1e-12);
    }
}
