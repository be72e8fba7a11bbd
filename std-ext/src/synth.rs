//! Seeded synthetic data: the fact-cluster model of Assumption B.1 of the
//! paper (margin: Eq. 17), the test oracle for the coverage guarantee of Proposition 1.
//!
//! A query needs h ≥ 2 atomic facts. The pool holds h clusters C_1..C_h of
//! alternative memories stating the same fact, plus distractors D.
//! Assumption B.1 asks, with 0 ≤ ρ < 1, ε, η ≥ 0, a_min ≤ a_max and γ > 0:
//!
//! 1. within a cluster: ‖m − s‖ ≤ ε;
//! 2. across clusters: |m · s − ρ| ≤ η;
//! 3. relevance: a_min ≤ q · m ≤ a_max for every cluster member;
//! 4. distractors: q · d ≤ a_min − γ and d · m ≥ ρ − η for every member m;
//!
//! and the margin (Eq. 17)
//! M = (1 − ρ)/(h − 1) − (a_max − a_min) − 2η − 2ε > 0, with γ > 2η when
//! distractors exist. Then, for every ridge λ ≥ 0, the first h picks of the
//! pursuit are one member of each cluster and no distractor.
//!
//! [`generate`] builds such instances from [`FactClusterParams`] and a seed,
//! and [`measure`] re-derives the parameters from the generated f32 vectors,
//! so that [`FactClusterInstance::certified`] speaks about the vectors the
//! selector actually sees, never about the nominal parameters.
//!
//! # Construction
//!
//! All geometry is built in f64, every vector is normalized in f64 and then
//! rounded to f32 (norm error ≤ ~1e-7).
//!
//! * **Frame.** h + 2 orthonormal vectors e_0 (the shared direction),
//!   e_1..e_h (one per fact) and e_q (the query's private direction) come
//!   from Gram–Schmidt on Gaussian vectors in R^d (so the vectors are dense,
//!   not axis-aligned). This needs d ≥ h + 3: one more dimension is left for
//!   the distractors' private directions.
//! * **Cluster centres.** c_k = s_k e_0 + √(1 − s_k²) e_k with s_k² drawn
//!   uniformly from [max(0, ρ − η), ρ + η]. Then c_k · c_l = s_k s_l, the
//!   geometric mean of two numbers in that interval, so
//!   |c_k · c_l − ρ| ≤ η exactly (η = 0 gives c_k · c_l = ρ for all k ≠ l).
//! * **Query.** Each fact gets a relevance a_k drawn uniformly from
//!   [a_min, a_max]. The query is q = β e_0 + Σ_k θ_k e_k + ζ e_q where
//!   (β, θ) is the minimum-norm solution of the h linear equations
//!   q · c_k = β s_k + θ_k √(1 − s_k²) = a_k, and ζ = √(1 − β² − ‖θ‖²)
//!   makes q a unit vector. If β² + ‖θ‖² ≥ 1 the relevances are too high for
//!   this cluster geometry and generation fails ([`SynthError::Infeasible`]).
//! * **Members.** A member of cluster k is m = cos φ c_k + sin φ t̂ with t̂ a
//!   random unit vector orthogonal to c_k and φ uniform in [0, φ_max],
//!   2 sin(φ_max/2) = ε/2: every member lies within chord distance ε/2 of its
//!   centre, so two members of a cluster are within ε (condition 1). The
//!   tangent noise moves the cross-cluster similarities and the relevances by
//!   about ε/√d, which [`measure`] picks up.
//! * **Distractors.** Distractor j has frame coordinates (u, v_1..v_h, w) on
//!   (e_0, e_1..e_h, e_q): the minimum-norm solution of d · c_k = σ for every
//!   k ([`FactClusterParams::distractor_similarity`]) and
//!   q · d = a_min − γ − ξ_j with ξ_j uniform in [0, γ] (γ =
//!   [`FactClusterParams::distractor_gap`]); the rest of its unit norm goes
//!   to a random private direction orthogonal to the frame. Members are
//!   within ε/2 of their centre, so d · m ≥ σ − ε/2; choosing σ ≥ ρ + η + ε/2
//!   keeps condition 4 (the default [`FactClusterParams::typical`] does). A
//!   low σ makes harder distractors (they are less explained by the picked
//!   members), which may break condition 4 and then the instance is not
//!   certified.
//! * **Order.** With [`FactClusterParams::shuffle`] the pool rows are
//!   permuted at random (labels follow), so no selector can profit from the
//!   layout.
//!
//! # Realized parameters
//!
//! [`measure`] computes, in f64 from the f32 vectors: ε = the largest
//! within-cluster distance; the smallest and largest cross-cluster
//! similarity s_lo, s_hi, from which ρ = max(0, (s_lo + s_hi)/2) and
//! η = max(s_hi − ρ, ρ − s_lo) (the midpoint maximizes M: moving ρ by δ costs
//! 2|δ| in η and gains at most |δ|/(h − 1) ≤ |δ|); a_min, a_max over the
//! members; for distractors, γ = a_min − max_d q · d and min_{d,m} d · m; and
//! M by Eq. 17.
//!
//! # Reproducibility
//!
//! The generator is deterministic for a given seed, parameter set and
//! version of this crate: it draws from ChaCha12 (`chacha20::ChaCha12Rng`,
//! named rather than `rand`'s `StdRng`, which may change between releases).
//!
//! ```
//! use mempursuit::synth::{generate, FactClusterParams, Label};
//! use mempursuit::{Method, PursuitOptions, Selector};
//!
//! let params = FactClusterParams::typical(3, 64);
//! let inst = generate(&params, 7).expect("feasible parameters");
//! assert!(inst.certified(), "{:?}", inst.realized);
//! let sel = Selector::new()
//!     .select(&inst.input(), 3, &Method::Pursuit(PursuitOptions::default()))?;
//! assert!(inst.covers_all_facts(&sel.picks)); // Proposition 1
//! # Ok::<(), mempursuit::Error>(())
//! ```

use chacha20::ChaCha12Rng;
use mempursuit_core::Input;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_distr::StandardNormal;

/// Safety margin of [`FactClusterInstance::certified`], in cosine units.
///
/// Assumption B.1 and Proposition 1 are statements in exact arithmetic. The
/// selector computes the query similarities and Gram rows in f32 (rounding
/// ~d·2⁻²⁴ relative in the worst case, ~1e-6 in practice for d ≤ 1024) and
/// the f32 inputs are unit only to ~1e-7. An instance is certified only if
/// the margin M and, with distractors, γ − 2η exceed this slack, so that
/// the guarantee survives the rounding of the selector's own arithmetic.
pub const CERTIFICATE_SLACK: f64 = 1e-5;

/// Largest deviation of a vector's norm from 1 that [`FactClusterInstance::certified`]
/// accepts (the proposition assumes unit vectors; f32 rounding of a
/// normalized vector leaves ~1e-7).
pub const NORM_SLACK: f64 = 1e-6;

/// What a pool row is in the fact-cluster model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Label {
    /// A member of cluster `c` (0-based fact index, c < h): one alternative
    /// statement of fact c.
    Cluster(usize),
    /// A distractor: related to the facts but not needed by the query.
    Distractor,
}

/// The nominal parameters of a fact-cluster instance (Assumption B.1).
///
/// These are targets for the construction (see the [module docs](self));
/// the parameters that hold on the generated vectors are measured afterwards
/// ([`Realized`]). All similarities are cosines.
#[derive(Debug, Clone, PartialEq)]
pub struct FactClusterParams {
    /// Size of each cluster; h = `cluster_sizes.len()` ≥ 2, every size ≥ 1.
    pub cluster_sizes: Vec<usize>,
    /// ε ≥ 0: bound on the distance between two members of one cluster
    /// (every member is within ε/2 of its centre).
    pub epsilon: f64,
    /// ρ ∈ [0, 1): the between-cluster similarity of the centres.
    pub rho: f64,
    /// η ≥ 0: spread of the centres' similarities around ρ (ρ + η < 1).
    pub eta: f64,
    /// a_min: lowest query similarity of a fact (cluster centre).
    pub a_min: f64,
    /// a_max ≥ a_min: highest query similarity of a fact (cluster centre).
    pub a_max: f64,
    /// Number of distractors (0 allowed).
    pub distractors: usize,
    /// γ > 0 (when distractors exist): each distractor's query similarity is
    /// a_min − γ − ξ with ξ uniform in [0, γ].
    pub distractor_gap: f64,
    /// σ ∈ (−1, 1): each distractor's similarity to every cluster centre.
    /// σ ≥ ρ + η + ε/2 guarantees condition 4.
    pub distractor_similarity: f64,
    /// Embedding dimension d ≥ h + 3.
    pub dim: usize,
    /// Whether to permute the pool rows at random (labels follow).
    pub shuffle: bool,
}

impl FactClusterParams {
    /// Parameters that are certified for most seeds: h facts of 3 members
    /// each, ε = 0.02, ρ = 0.3, η = 0.01, relevance in [0.45, 0.5],
    /// 2h distractors with gap 0.1 and σ = ρ + η + ε, dimension `dim`
    /// (≥ h + 3), shuffled.
    ///
    /// Its margin is (1 − ρ)/(h − 1) − 0.05 − 0.02 − 0.04 before noise,
    /// positive for h ≤ 7.
    pub fn typical(h: usize, dim: usize) -> Self {
        FactClusterParams {
            cluster_sizes: vec![3; h],
            epsilon: 0.02,
            rho: 0.3,
            eta: 0.01,
            a_min: 0.45,
            a_max: 0.5,
            distractors: 2 * h,
            distractor_gap: 0.1,
            distractor_similarity: 0.3 + 0.01 + 0.02,
            dim,
            shuffle: true,
        }
    }

    /// h, the number of facts.
    pub fn facts(&self) -> usize {
        self.cluster_sizes.len()
    }

    /// The nominal margin M of Eq. 17 (before noise and rounding).
    pub fn nominal_margin(&self) -> f64 {
        let h = self.facts() as f64;
        (1.0 - self.rho) / (h - 1.0)
            - (self.a_max - self.a_min)
            - 2.0 * self.eta
            - 2.0 * self.epsilon
    }

    fn validate(&self) -> Result<(), SynthError> {
        let h = self.facts();
        if h < 2 {
            return Err(SynthError::TooFewFacts(h));
        }
        if let Some(c) = self.cluster_sizes.iter().position(|&n| n == 0) {
            return Err(SynthError::EmptyCluster(c));
        }
        let bad =
            |name: &'static str, value: f64| Err(SynthError::InvalidParameter { name, value });
        if !(self.epsilon.is_finite() && self.epsilon >= 0.0) {
            return bad("epsilon", self.epsilon);
        }
        if !(self.rho >= 0.0 && self.rho < 1.0) {
            return bad("rho", self.rho);
        }
        if !(self.eta >= 0.0 && self.rho + self.eta < 1.0) {
            return bad("eta", self.eta);
        }
        if !(self.a_min.is_finite() && self.a_min.abs() <= 1.0) {
            return bad("a_min", self.a_min);
        }
        if !(self.a_max.is_finite() && self.a_max.abs() <= 1.0 && self.a_max >= self.a_min) {
            return bad("a_max", self.a_max);
        }
        if self.distractors > 0 {
            if !(self.distractor_gap.is_finite() && self.distractor_gap > 0.0) {
                return bad("distractor_gap", self.distractor_gap);
            }
            if self.distractor_similarity.is_nan() || self.distractor_similarity.abs() >= 1.0 {
                return bad("distractor_similarity", self.distractor_similarity);
            }
        }
        if self.dim < h + 3 {
            return Err(SynthError::DimensionTooSmall {
                dim: self.dim,
                needed: h + 3,
            });
        }
        Ok(())
    }
}

/// Why an instance could not be generated or measured.
#[derive(Debug, Clone, PartialEq)]
pub enum SynthError {
    /// Fewer than two facts (h < 2): Assumption B.1 needs h ≥ 2.
    TooFewFacts(usize),
    /// Cluster `.0` has no member.
    EmptyCluster(usize),
    /// A parameter is out of its documented range.
    InvalidParameter {
        /// The field of [`FactClusterParams`].
        name: &'static str,
        /// Its value.
        value: f64,
    },
    /// The dimension cannot hold the frame (d ≥ h + 3 is needed).
    DimensionTooSmall {
        /// The requested d.
        dim: usize,
        /// The smallest admissible d.
        needed: usize,
    },
    /// No unit vector meets the requested similarities (for example a
    /// relevance a_k too high for the cluster geometry, or a distractor
    /// similarity σ incompatible with its query similarity).
    Infeasible(&'static str),
    /// [`measure`] was given inconsistent shapes or labels.
    Shape(&'static str),
}

impl std::fmt::Display for SynthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SynthError::TooFewFacts(h) => write!(f, "the model needs h >= 2 facts, got {h}"),
            SynthError::EmptyCluster(c) => write!(f, "cluster {c} is empty"),
            SynthError::InvalidParameter { name, value } => {
                write!(f, "parameter {name} = {value} is out of range")
            }
            SynthError::DimensionTooSmall { dim, needed } => {
                write!(f, "dimension {dim} is too small, need at least {needed}")
            }
            SynthError::Infeasible(what) => write!(f, "infeasible parameters: {what}"),
            SynthError::Shape(what) => write!(f, "inconsistent input: {what}"),
        }
    }
}

impl std::error::Error for SynthError {}

/// The parameters of Assumption B.1 as they hold on a concrete set of f32
/// vectors (computed in f64 by [`measure`]). Cosine units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Realized {
    /// h, the number of clusters.
    pub facts: usize,
    /// ε: the largest distance between two members of one cluster (0 when
    /// every cluster is a singleton).
    pub epsilon: f64,
    /// Smallest similarity between members of different clusters.
    pub cross_min: f64,
    /// Largest similarity between members of different clusters.
    pub cross_max: f64,
    /// ρ = max(0, (cross_min + cross_max)/2).
    pub rho: f64,
    /// η = max(cross_max − ρ, ρ − cross_min).
    pub eta: f64,
    /// a_min: the smallest query similarity of a cluster member.
    pub a_min: f64,
    /// a_max: the largest query similarity of a cluster member.
    pub a_max: f64,
    /// The largest query similarity of a distractor (`None` without
    /// distractors).
    pub distractor_query_max: Option<f64>,
    /// γ = a_min − max_d q · d (`None` without distractors).
    pub gamma: Option<f64>,
    /// min over distractors d and members m of d · m (`None` without
    /// distractors); condition 4 needs it ≥ ρ − η.
    pub distractor_member_min: Option<f64>,
    /// The largest |‖v‖ − 1| over the query and every pool row.
    pub norm_error: f64,
    /// M = (1 − ρ)/(h − 1) − (a_max − a_min) − 2η − 2ε (Eq. 17).
    pub margin: f64,
}

impl Realized {
    /// Whether every condition of Assumption B.1 holds with these
    /// parameters and the guarantee has room for rounding: h ≥ 2, ρ < 1,
    /// unit vectors within [`NORM_SLACK`], M > [`CERTIFICATE_SLACK`], and,
    /// with distractors, γ − 2η > [`CERTIFICATE_SLACK`] and
    /// min d · m ≥ ρ − η.
    pub fn certified(&self) -> bool {
        let base = self.facts >= 2
            && self.rho < 1.0
            && self.norm_error <= NORM_SLACK
            && self.margin > CERTIFICATE_SLACK;
        let distractors_ok = match (self.gamma, self.distractor_member_min) {
            (Some(g), Some(dm)) => {
                g - 2.0 * self.eta > CERTIFICATE_SLACK && dm >= self.rho - self.eta
            }
            (None, None) => true,
            _ => false,
        };
        base && distractors_ok
    }
}

/// A generated fact-cluster instance.
#[derive(Debug, Clone, PartialEq)]
pub struct FactClusterInstance {
    /// The query embedding, length d, unit norm (f32).
    pub query: Vec<f32>,
    /// The pool, row-major P × d f32, unit rows.
    pub pool: Vec<f32>,
    /// One label per pool row.
    pub labels: Vec<Label>,
    /// Embedding dimension d.
    pub dim: usize,
    /// The parameters measured on these vectors.
    pub realized: Realized,
}

impl FactClusterInstance {
    /// P, the number of pool rows.
    pub fn pool_size(&self) -> usize {
        self.labels.len()
    }

    /// h, the number of facts.
    pub fn facts(&self) -> usize {
        self.realized.facts
    }

    /// The selector input (ρ = b).
    pub fn input(&self) -> Input<'_> {
        Input::new(&self.query, &self.pool)
    }

    /// Whether every condition of Assumption B.1 holds on these vectors with
    /// margin to spare ([`Realized::certified`]).
    pub fn certified(&self) -> bool {
        self.realized.certified()
    }

    /// Whether the first h of `picks` are one member of each cluster and no
    /// distractor (the conclusion of Proposition 1). False if there are
    /// fewer than h picks or a pick is out of range.
    pub fn covers_all_facts(&self, picks: &[usize]) -> bool {
        let h = self.facts();
        if picks.len() < h {
            return false;
        }
        let mut seen = vec![false; h];
        for &i in &picks[..h] {
            match self.labels.get(i) {
                Some(Label::Cluster(c)) if *c < h && !seen[*c] => seen[*c] = true,
                _ => return false,
            }
        }
        true
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn dot32(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(&x, &y)| x as f64 * y as f64).sum()
}

fn gaussian(rng: &mut ChaCha12Rng, d: usize) -> Vec<f64> {
    (0..d)
        .map(|_| rng.sample::<f64, _>(StandardNormal))
        .collect()
}

/// Removes the components along `basis` (orthonormal) twice (classical
/// Gram–Schmidt with re-orthogonalization) and normalizes. `None` if the
/// remainder vanishes.
fn orthonormalize(mut v: Vec<f64>, basis: &[Vec<f64>]) -> Option<Vec<f64>> {
    for _ in 0..2 {
        for e in basis {
            let c = dot(&v, e);
            v.iter_mut().zip(e).for_each(|(x, y)| *x -= c * y);
        }
    }
    let n = dot(&v, &v).sqrt();
    (n > 1e-8).then(|| v.into_iter().map(|x| x / n).collect())
}

/// A random unit vector orthogonal to the orthonormal `basis`.
fn random_orthogonal(rng: &mut ChaCha12Rng, d: usize, basis: &[Vec<f64>]) -> Vec<f64> {
    loop {
        if let Some(v) = orthonormalize(gaussian(rng, d), basis) {
            return v;
        }
    }
}

/// Minimum-norm solution x of A x = t for a full-row-rank A (rows × cols,
/// row-major): x = Aᵀ (A Aᵀ)⁻¹ t, with Gaussian elimination (partial
/// pivoting) on the small SPD matrix A Aᵀ.
fn min_norm_solve(a: &[Vec<f64>], t: &[f64]) -> Option<Vec<f64>> {
    let n = a.len();
    let cols = a[0].len();
    let mut m: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            let mut row: Vec<f64> = (0..n).map(|j| dot(&a[i], &a[j])).collect();
            row.push(t[i]);
            row
        })
        .collect();
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| m[i][c].abs().total_cmp(&m[j][c].abs()))?;
        if m[p][c].abs() < 1e-14 {
            return None;
        }
        m.swap(c, p);
        let pivot_row = m[c].clone();
        for (r, row) in m.iter_mut().enumerate() {
            if r != c {
                let f = row[c] / pivot_row[c];
                row.iter_mut()
                    .zip(&pivot_row)
                    .skip(c)
                    .for_each(|(x, p)| *x -= f * p);
            }
        }
    }
    let y: Vec<f64> = (0..n).map(|i| m[i][n] / m[i][i]).collect();
    Some(
        (0..cols)
            .map(|k| (0..n).map(|i| a[i][k] * y[i]).sum())
            .collect(),
    )
}

fn to_unit_f32(v: &[f64]) -> Vec<f32> {
    let n = dot(v, v).sqrt();
    v.iter().map(|&x| (x / n) as f32).collect()
}

/// The orthonormal frame e_0, e_1..e_h, e_q of an instance (d each).
struct Frame {
    dim: usize,
    axes: Vec<Vec<f64>>,
}

impl Frame {
    /// h + 2 random orthonormal directions in R^d.
    fn draw(rng: &mut ChaCha12Rng, dim: usize, h: usize) -> Frame {
        let mut axes: Vec<Vec<f64>> = Vec::with_capacity(h + 2);
        for _ in 0..h + 2 {
            let e = random_orthogonal(rng, dim, &axes);
            axes.push(e);
        }
        Frame { dim, axes }
    }

    /// Σ_i coef_i e_i.
    fn combine(&self, coef: &[f64]) -> Vec<f64> {
        let mut v = vec![0.0; self.dim];
        for (c, e) in coef.iter().zip(&self.axes) {
            v.iter_mut().zip(e).for_each(|(x, y)| *x += c * y);
        }
        v
    }
}

/// A value drawn uniformly from [lo, hi], or lo for an empty range.
fn uniform(rng: &mut ChaCha12Rng, lo: f64, hi: f64) -> f64 {
    if hi > lo {
        rng.random_range(lo..=hi)
    } else {
        lo
    }
}

/// Frame coordinates (length h + 2) of the centres
/// c_k = s_k e_0 + sqrt(1 − s_k²) e_k, with s_k² drawn from ρ ± η.
fn centre_coefficients(params: &FactClusterParams, rng: &mut ChaCha12Rng) -> Vec<Vec<f64>> {
    let h = params.facts();
    let (lo, hi) = ((params.rho - params.eta).max(0.0), params.rho + params.eta);
    let s: Vec<f64> = (0..h).map(|_| uniform(rng, lo, hi).sqrt()).collect();
    (0..h)
        .map(|k| {
            let mut c = vec![0.0; h + 2];
            c[0] = s[k];
            c[1 + k] = (1.0 - s[k] * s[k]).sqrt();
            c
        })
        .collect()
}

/// Frame coordinates of the query: the minimum-norm (β, θ) with
/// q·c_k = a_k (a_k drawn from [a_min, a_max]), then ζ on e_q.
///
/// # Errors
/// [`SynthError::Infeasible`] when no unit query has those relevances.
fn query_coefficients(
    params: &FactClusterParams,
    centre_coef: &[Vec<f64>],
    rng: &mut ChaCha12Rng,
) -> Result<Vec<f64>, SynthError> {
    let h = params.facts();
    let a: Vec<f64> = (0..h)
        .map(|_| uniform(rng, params.a_min, params.a_max))
        .collect();
    let rows: Vec<Vec<f64>> = centre_coef.iter().map(|c| c[..h + 1].to_vec()).collect();
    let x = min_norm_solve(&rows, &a).ok_or(SynthError::Infeasible("query system is singular"))?;
    let zeta2 = 1.0 - dot(&x, &x);
    if zeta2 <= 1e-9 {
        return Err(SynthError::Infeasible(
            "the relevances are too high for the cluster geometry",
        ));
    }
    let mut q_coef = x;
    q_coef.push(zeta2.sqrt());
    Ok(q_coef)
}

/// The members of every cluster: each at an angle φ ≤ 2 asin(ε/4) from
/// its centre, in a random direction.
fn members(
    params: &FactClusterParams,
    centres: &[Vec<f64>],
    rng: &mut ChaCha12Rng,
) -> (Vec<Vec<f64>>, Vec<Label>) {
    let phi_max = 2.0 * (params.epsilon / 4.0).min(1.0).asin();
    let mut vectors: Vec<Vec<f64>> = Vec::new();
    let mut labels: Vec<Label> = Vec::new();
    for (k, &n) in params.cluster_sizes.iter().enumerate() {
        for _ in 0..n {
            let phi = uniform(rng, 0.0, phi_max);
            let t = random_orthogonal(rng, params.dim, std::slice::from_ref(&centres[k]));
            let m: Vec<f64> = centres[k]
                .iter()
                .zip(&t)
                .map(|(c, t)| phi.cos() * c + phi.sin() * t)
                .collect();
            vectors.push(m);
            labels.push(Label::Cluster(k));
        }
    }
    (vectors, labels)
}

/// The distractors: frame coordinates (u, v_1..v_h, w) by minimum norm for
/// the requested similarities, the rest on a private direction orthogonal
/// to the frame.
///
/// # Errors
/// [`SynthError::Infeasible`] when no unit distractor has them.
fn distractors(
    params: &FactClusterParams,
    frame: &Frame,
    centre_coef: &[Vec<f64>],
    q_coef: &[f64],
    rng: &mut ChaCha12Rng,
) -> Result<Vec<Vec<f64>>, SynthError> {
    let h = params.facts();
    let mut sys: Vec<Vec<f64>> = centre_coef.to_vec();
    sys.push(q_coef.to_vec());
    let mut out = Vec::with_capacity(params.distractors);
    for _ in 0..params.distractors {
        let xi = rng.random_range(0.0..=params.distractor_gap);
        let mut target = vec![params.distractor_similarity; h];
        target.push(params.a_min - params.distractor_gap - xi);
        let coef = min_norm_solve(&sys, &target)
            .ok_or(SynthError::Infeasible("distractor system is singular"))?;
        let z2 = 1.0 - dot(&coef, &coef);
        if z2 <= 1e-9 {
            return Err(SynthError::Infeasible(
                "no unit distractor has the requested similarities",
            ));
        }
        let private = random_orthogonal(rng, params.dim, &frame.axes);
        let mut v = frame.combine(&coef);
        v.iter_mut()
            .zip(&private)
            .for_each(|(x, p)| *x += z2.sqrt() * p);
        out.push(v);
    }
    Ok(out)
}

/// Generates a fact-cluster instance from `params` and `seed` (see the
/// [module docs](self) for the construction) and measures its realized
/// parameters.
///
/// The result need not be certified: check
/// [`FactClusterInstance::certified`] before relying on Proposition 1.
///
/// # Errors
/// [`SynthError`] for parameters out of range or geometrically infeasible.
pub fn generate(params: &FactClusterParams, seed: u64) -> Result<FactClusterInstance, SynthError> {
    params.validate()?;
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let d = params.dim;
    // The draws happen in this order: frame, centres, query, members,
    // distractors, shuffle (a fixed seed gives a fixed instance).
    let frame = Frame::draw(&mut rng, d, params.facts());
    let centre_coef = centre_coefficients(params, &mut rng);
    let centres: Vec<Vec<f64>> = centre_coef.iter().map(|c| frame.combine(c)).collect();
    let q_coef = query_coefficients(params, &centre_coef, &mut rng)?;
    let query = frame.combine(&q_coef);
    let (mut vectors, mut labels) = members(params, &centres, &mut rng);
    if params.distractors > 0 {
        let extra = distractors(params, &frame, &centre_coef, &q_coef, &mut rng)?;
        labels.extend(extra.iter().map(|_| Label::Distractor));
        vectors.extend(extra);
    }

    let mut order: Vec<usize> = (0..labels.len()).collect();
    if params.shuffle {
        order.shuffle(&mut rng);
    }
    let mut pool = Vec::with_capacity(order.len() * d);
    let mut out_labels = Vec::with_capacity(order.len());
    for &i in &order {
        pool.extend(to_unit_f32(&vectors[i]));
        out_labels.push(labels[i]);
    }
    let query = to_unit_f32(&query);
    let realized = measure(&query, &pool, d, &out_labels)?;
    Ok(FactClusterInstance {
        query,
        pool,
        labels: out_labels,
        dim: d,
        realized,
    })
}

/// Measures the parameters of Assumption B.1 on given vectors (see the
/// [module docs](self)): `query` (d), `pool` (row-major P × d f32), one
/// [`Label`] per row. All products are computed in f64 from the f32 values.
///
/// # Errors
/// [`SynthError::Shape`] if `query` is empty, `pool.len() ≠ P·d` or a
/// cluster index leaves a gap (clusters must be numbered 0..h with every one
/// nonempty); [`SynthError::TooFewFacts`] if h < 2.
pub fn measure(
    query: &[f32],
    pool: &[f32],
    dim: usize,
    labels: &[Label],
) -> Result<Realized, SynthError> {
    if dim == 0 || query.len() != dim || pool.len() != labels.len() * dim {
        return Err(SynthError::Shape(
            "pool must be labels.len() x dim, query dim",
        ));
    }
    let h = labels
        .iter()
        .filter_map(|l| match l {
            Label::Cluster(c) => Some(c + 1),
            Label::Distractor => None,
        })
        .max()
        .unwrap_or(0);
    if h < 2 {
        return Err(SynthError::TooFewFacts(h));
    }
    for c in 0..h {
        if !labels.contains(&Label::Cluster(c)) {
            return Err(SynthError::EmptyCluster(c));
        }
    }
    let row = |i: usize| &pool[i * dim..(i + 1) * dim];
    let mut norm_error = (dot32(query, query).sqrt() - 1.0).abs();
    for i in 0..labels.len() {
        norm_error = norm_error.max((dot32(row(i), row(i)).sqrt() - 1.0).abs());
    }
    let members: Vec<(usize, usize)> = labels
        .iter()
        .enumerate()
        .filter_map(|(i, l)| match l {
            Label::Cluster(c) => Some((i, *c)),
            Label::Distractor => None,
        })
        .collect();
    let distractors: Vec<usize> = (0..labels.len())
        .filter(|&i| labels[i] == Label::Distractor)
        .collect();

    let mut epsilon: f64 = 0.0;
    let (mut cross_min, mut cross_max) = (f64::INFINITY, f64::NEG_INFINITY);
    for (x, &(i, ci)) in members.iter().enumerate() {
        for &(j, cj) in &members[x + 1..] {
            if ci == cj {
                let dist2: f64 = row(i)
                    .iter()
                    .zip(row(j))
                    .map(|(&a, &b)| (a as f64 - b as f64).powi(2))
                    .sum();
                epsilon = epsilon.max(dist2.sqrt());
            } else {
                let g = dot32(row(i), row(j));
                cross_min = cross_min.min(g);
                cross_max = cross_max.max(g);
            }
        }
    }
    let rho = ((cross_min + cross_max) / 2.0).max(0.0);
    let eta = (cross_max - rho).max(rho - cross_min);
    let rel: Vec<f64> = members.iter().map(|&(i, _)| dot32(query, row(i))).collect();
    let a_min = rel.iter().copied().fold(f64::INFINITY, f64::min);
    let a_max = rel.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (distractor_query_max, gamma, distractor_member_min) = if distractors.is_empty() {
        (None, None, None)
    } else {
        let dq = distractors
            .iter()
            .map(|&i| dot32(query, row(i)))
            .fold(f64::NEG_INFINITY, f64::max);
        let dm = distractors
            .iter()
            .flat_map(|&i| members.iter().map(move |&(j, _)| (i, j)))
            .map(|(i, j)| dot32(row(i), row(j)))
            .fold(f64::INFINITY, f64::min);
        (Some(dq), Some(a_min - dq), Some(dm))
    };
    let margin = (1.0 - rho) / (h as f64 - 1.0) - (a_max - a_min) - 2.0 * eta - 2.0 * epsilon;
    Ok(Realized {
        facts: h,
        epsilon,
        cross_min,
        cross_max,
        rho,
        eta,
        a_min,
        a_max,
        distractor_query_max,
        gamma,
        distractor_member_min,
        norm_error,
        margin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_gives_the_same_instance_bit_for_bit() {
        // FNV-1a over the bits of the query, the pool and the labels of
        // three instances (one without distractors, one unshuffled): a
        // change of the draws' order or arithmetic changes it.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |x: u64| {
            hash ^= x;
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        };
        let mut plain = FactClusterParams::typical(3, 16);
        plain.distractors = 0;
        let mut ordered = FactClusterParams::typical(4, 24);
        ordered.shuffle = false;
        for (params, seed) in [
            (FactClusterParams::typical(5, 32), 7),
            (plain, 1),
            (ordered, 3),
        ] {
            let inst = generate(&params, seed).unwrap();
            inst.query
                .iter()
                .chain(&inst.pool)
                .for_each(|x| eat(u64::from(x.to_bits())));
            for l in &inst.labels {
                eat(match l {
                    Label::Cluster(k) => *k as u64,
                    _ => u64::MAX,
                });
            }
        }
        assert_eq!(hash, 0x1874_e695_1080_6124, "{hash:#x}");
    }

    #[test]
    fn typical_parameters_are_mostly_certified() {
        let mut certified = 0;
        let mut total = 0;
        for h in 2..=5 {
            for seed in 0..40 {
                let inst = generate(&FactClusterParams::typical(h, 32), seed).unwrap();
                total += 1;
                certified += inst.certified() as usize;
                assert_eq!(inst.pool_size(), 3 * h + 2 * h);
                assert!(inst.realized.epsilon <= 0.02 + 1e-6);
            }
        }
        assert!(certified * 10 >= total * 9, "{certified}/{total}");
    }

    #[test]
    fn exact_similarities_without_noise() {
        let params = FactClusterParams {
            cluster_sizes: vec![1, 1, 1],
            epsilon: 0.0,
            eta: 0.0,
            a_min: 0.4,
            a_max: 0.4,
            ..FactClusterParams::typical(3, 16)
        };
        let inst = generate(&params, 1).unwrap();
        let r = inst.realized;
        assert!(
            (r.cross_min - 0.3).abs() < 1e-6 && (r.cross_max - 0.3).abs() < 1e-6,
            "{r:?}"
        );
        assert!(
            (r.a_min - 0.4).abs() < 1e-6 && (r.a_max - 0.4).abs() < 1e-6,
            "{r:?}"
        );
        assert_eq!(r.epsilon, 0.0);
        let dm = r.distractor_member_min.unwrap();
        assert!((dm - 0.33).abs() < 1e-6, "{dm}");
        let g = r.gamma.unwrap();
        assert!((0.1 - 1e-6..=0.2 + 1e-6).contains(&g), "{g}");
        assert!(r.norm_error < 1e-6);
        assert!(inst.certified());
    }

    #[test]
    fn deterministic_per_seed() {
        let p = FactClusterParams::typical(4, 24);
        assert_eq!(generate(&p, 5).unwrap(), generate(&p, 5).unwrap());
        assert_ne!(generate(&p, 5).unwrap().pool, generate(&p, 6).unwrap().pool);
    }

    #[test]
    fn invalid_and_infeasible_parameters_are_errors() {
        let p = FactClusterParams::typical(3, 16);
        let one = FactClusterParams {
            cluster_sizes: vec![2],
            ..p.clone()
        };
        assert_eq!(generate(&one, 0), Err(SynthError::TooFewFacts(1)));
        let small = FactClusterParams {
            dim: 5,
            ..p.clone()
        };
        assert_eq!(
            generate(&small, 0),
            Err(SynthError::DimensionTooSmall { dim: 5, needed: 6 })
        );
        let high = FactClusterParams {
            a_min: 0.99,
            a_max: 0.99,
            ..p.clone()
        };
        assert!(matches!(generate(&high, 0), Err(SynthError::Infeasible(_))));
        let rho = FactClusterParams { rho: 1.0, ..p };
        assert!(matches!(
            generate(&rho, 0),
            Err(SynthError::InvalidParameter { name: "rho", .. })
        ));
    }

    #[test]
    fn low_distractor_similarity_is_not_certified() {
        let p = FactClusterParams {
            distractor_similarity: 0.0,
            ..FactClusterParams::typical(3, 32)
        };
        let inst = generate(&p, 3).unwrap();
        assert!(!inst.certified(), "{:?}", inst.realized);
    }

    #[test]
    fn covers_all_facts_checks_the_first_h_picks() {
        let p = FactClusterParams {
            shuffle: false,
            distractors: 1,
            ..FactClusterParams::typical(2, 16)
        };
        let inst = generate(&p, 0).unwrap();
        // Rows 0..3 are cluster 0, 3..6 cluster 1, 6 the distractor.
        assert!(inst.covers_all_facts(&[0, 3]));
        assert!(inst.covers_all_facts(&[4, 2, 6]));
        assert!(!inst.covers_all_facts(&[0, 1]));
        assert!(!inst.covers_all_facts(&[0, 6]));
        assert!(!inst.covers_all_facts(&[0]));
    }
}
