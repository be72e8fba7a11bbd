//! Structured fuzz cases: each is built from raw bytes by
//! [`arbitrary::Arbitrary`], prints (`{:?}`) as a Rust expression that
//! rebuilds it (a copy-pasteable reproducer, with
//! `use mempursuit_tests::checks::{cases::*, *}; use mempursuit::*;`), and
//! checks itself with [`run`](KktCase::run).
//!
//! The fuzz targets in `fuzz/fuzz_targets/` are one line each around these
//! types, and `tests/tests/fuzz_regressions.rs` replays the committed
//! corpus and every minimized crash through the same code on stable Rust.

use std::fmt;

use arbitrary::{Arbitrary, Result as ArbResult, Unstructured};
use mempursuit::synth::{generate, FactClusterParams};
use mempursuit::{
    mmr, pursuit, top_k, AtPoolOptimum, DependentPicks, Error, Input, InputPolicy, Int8Candidates,
    InvalidCandidates, MmrOptions, Normalization, PursuitOptions, ScratchKind, ScratchSize,
    Selection, Stopping, Workspace, MAX_NORM, MIN_NORM, UNIT_NORM_TOLERANCE,
};

use super::{
    check_coverage, check_differential, check_differential_int8, check_int8_certified,
    check_pursuit_path_costed, check_screened, check_valid_selection, F32s, F64Lit, Family,
    RelevanceSpec,
};

/// Largest pool of the structured valid-input cases (keeps the f64 pool
/// optimum of the certificate check cheap).
pub const MAX_POOL: usize = 16;
/// Largest dimension of the structured valid-input cases.
pub const MAX_DIM: usize = 12;

/// A valid query and pool with structure: fresh random rows, near
/// duplicates (perturbation 10⁻² … 10⁻⁷), exact duplicates, negations and
/// normalized convex combinations of earlier rows (affine dependencies);
/// each vector unit within f32 rounding or, sometimes, scaled by 0.5, 2 or
/// 3 (the core's cosine normalization path).
fn valid_vectors(u: &mut Unstructured<'_>) -> ArbResult<(usize, Vec<f32>, Vec<f32>)> {
    let dim = u.int_in_range(1..=MAX_DIM)?;
    let p = u.int_in_range(1..=MAX_POOL)?;
    let raw = |u: &mut Unstructured<'_>| -> ArbResult<Vec<f64>> {
        let mut v = Vec::with_capacity(dim);
        for _ in 0..dim {
            v.push(u.arbitrary::<i16>()? as f64 / 1000.0);
        }
        if v.iter().all(|&x| x == 0.0) {
            v[0] = 1.0;
        }
        Ok(v)
    };
    let unit = |v: &[f64]| -> Vec<f64> {
        let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.iter().map(|x| x / n).collect()
    };
    let scaled = |u: &mut Unstructured<'_>, v: &[f64]| -> ArbResult<Vec<f32>> {
        let s = *u.choose(&[1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 2.0, 3.0])?;
        Ok(unit(v).iter().map(|x| (x * s) as f32).collect())
    };
    let q = raw(u)?;
    let query = scaled(u, &q)?;
    let mut rows: Vec<Vec<f64>> = Vec::with_capacity(p);
    for i in 0..p {
        let kind = if i == 0 { 0 } else { u.int_in_range(0u8..=5)? };
        let v = match kind {
            1 => {
                let j = u.int_in_range(0..=i - 1)?;
                let e = 10f64.powi(-u.int_in_range(2i32..=7)?);
                let n = raw(u)?;
                rows[j].iter().zip(&n).map(|(a, b)| a + e * b).collect()
            }
            2 => rows[u.int_in_range(0..=i - 1)?].clone(),
            3 => rows[u.int_in_range(0..=i - 1)?]
                .iter()
                .map(|x| -x)
                .collect(),
            4 => {
                let (j, k) = (u.int_in_range(0..=i - 1)?, u.int_in_range(0..=i - 1)?);
                let w = u.int_in_range(0..=100)? as f64 / 100.0;
                let v: Vec<f64> = rows[j]
                    .iter()
                    .zip(&rows[k])
                    .map(|(a, b)| w * a + (1.0 - w) * b)
                    .collect();
                if v.iter().map(|x| x * x).sum::<f64>() < 1e-6 {
                    rows[j].clone()
                } else {
                    v
                }
            }
            _ => raw(u)?,
        };
        rows.push(unit(&v));
    }
    let mut pool = Vec::with_capacity(p * dim);
    for r in &rows {
        pool.extend(scaled(u, r)?);
    }
    Ok((dim, query, pool))
}

fn relevance_for(u: &mut Unstructured<'_>, p: usize) -> ArbResult<RelevanceSpec> {
    Ok(match u.int_in_range(0u8..=5)? {
        0 => {
            let mut s = Vec::with_capacity(p);
            for _ in 0..p {
                s.push(u.arbitrary::<i16>()? as f32 / 16384.0);
            }
            RelevanceSpec::Scores(s)
        }
        1 => RelevanceSpec::PoolOrder,
        _ => RelevanceSpec::Similarity,
    })
}

fn family(u: &mut Unstructured<'_>, ridges: &[f64]) -> ArbResult<Family> {
    let ridge = *u.choose(ridges)?;
    let gamma = match u.int_in_range(0u8..=3)? {
        0 => 0.5,
        1 => (u.int_in_range(1u16..=1000)? as f64) / 1000.0,
        _ => 1.0,
    };
    Ok(Family { ridge, gamma })
}

fn fmt_family(f: &Family) -> String {
    format!(
        "Family {{ ridge: {:?}, gamma: {:?} }}",
        F64Lit(f.ridge),
        F64Lit(f.gamma)
    )
}

// ---------------------------------------------------------------------------
// kkt
// ---------------------------------------------------------------------------

/// Target `kkt`: a bounded valid pool and query, a budget and a member of
/// the pursuit family; checks KKT (Lemma B.1), ν, the certificate
/// (Theorem B.2) and nestedness after every step
/// ([`check_pursuit_path_costed`]).
#[derive(Clone, PartialEq)]
pub struct KktCase {
    /// d.
    pub dim: usize,
    /// Query, length d.
    pub query: Vec<f32>,
    /// Pool, row-major P × d.
    pub pool: Vec<f32>,
    /// K.
    pub budget: usize,
    /// ρ.
    pub relevance: RelevanceSpec,
    /// κ and γ.
    pub family: Family,
    /// A budget in cost: one cost per candidate (multiples of 1/16 in
    /// [0, 16), zeros included) and the total (multiples of 1/8 in [0, 32)).
    pub costs: Option<(Vec<f32>, f64)>,
}

impl<'a> Arbitrary<'a> for KktCase {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        let (dim, query, pool) = valid_vectors(u)?;
        let p = pool.len() / dim;
        let budget = u.int_in_range(1..=p + 1)?;
        let relevance = relevance_for(u, p)?;
        let family = family(u, &[0.0, 1e-10, 1e-10, 1e-6, 1e-3, 0.1, 1.0, f64::INFINITY])?;
        // Drawn last, and None when the bytes have run out (as in the
        // committed regressions, which decode as before).
        let costs = if u.int_in_range(0u8..=2)? == 2 {
            let mut c = Vec::with_capacity(p);
            for _ in 0..p {
                c.push(f32::from(u.arbitrary::<u8>()?) / 16.0);
            }
            Some((c, f64::from(u.arbitrary::<u8>()?) / 8.0))
        } else {
            None
        };
        Ok(KktCase {
            dim,
            query,
            pool,
            budget,
            relevance,
            family,
            costs,
        })
    }
}

impl fmt::Debug for KktCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "KktCase {{ dim: {}, query: {:?}, pool: {:?}, budget: {}, relevance: {:?}, family: {}, costs: {} }}",
            self.dim,
            F32s(&self.query),
            F32s(&self.pool),
            self.budget,
            self.relevance,
            fmt_family(&self.family),
            match &self.costs {
                Some((c, total)) => format!("Some(({:?}, {total:?}))", F32s(c)),
                None => "None".to_string(),
            }
        )
    }
}

impl KktCase {
    /// Runs [`check_pursuit_path_costed`] with the certificate check (made
    /// only without costs).
    ///
    /// # Errors
    /// The violation found.
    pub fn run(&self) -> Result<(), String> {
        check_pursuit_path_costed(
            &self.query,
            &self.pool,
            self.dim,
            self.budget,
            &self.relevance,
            self.family,
            true,
            self.costs.as_ref().map(|(c, total)| (&c[..], *total)),
        )
        .map(|_| ())
    }
}

// ---------------------------------------------------------------------------
// differential
// ---------------------------------------------------------------------------

/// Tolerance of the `differential` target for ν, L_t, g_S, the pick score
/// and the final objective: 4·score_tolerance(d ≤ 12) ≈ 3e-6 for the
/// scores, plus the refit's sensitivity to the f32 Gram error on the
/// near-dependent pools this target builds (a blocked column changes the
/// objective by at most its KKT allowance ≈ 4.5e-5·‖r‖ times its weight
/// share). 1e-4 bounds both.
pub const DIFFERENTIAL_TOLERANCE: f64 = 1e-4;

/// Target `differential`: the core against the independent f64 reference
/// ([`check_differential`]).
#[derive(Clone, PartialEq)]
pub struct DifferentialCase {
    /// d.
    pub dim: usize,
    /// Query, length d.
    pub query: Vec<f32>,
    /// Pool, row-major P × d.
    pub pool: Vec<f32>,
    /// K.
    pub budget: usize,
    /// ρ.
    pub relevance: RelevanceSpec,
    /// κ and γ.
    pub family: Family,
    /// 0: the int8 pursuit runs on the pool quantized by
    /// `Int8Candidates::quantize`; otherwise on caller-style codes perturbed
    /// by ±`code_noise` (a deterministic pattern) and scales × (1 + 1/8),
    /// through `Int8Candidates::from_codes`: poor codes only widen the radii.
    pub code_noise: u8,
}

impl DifferentialCase {
    /// The int8 candidates of this case (see `code_noise`).
    pub fn int8(&self) -> Result<Int8Candidates, String> {
        let q = Int8Candidates::quantize(&self.pool, self.dim).map_err(|e| e.to_string())?;
        if self.code_noise == 0 {
            return Ok(q);
        }
        let v = q.view();
        let n = i32::from(self.code_noise);
        let codes: Vec<i8> = v
            .codes()
            .iter()
            .enumerate()
            .map(|(k, &c)| {
                let delta = (k as i32 * 7 % (2 * n + 1)) - n;
                (c as i32 + delta).clamp(-127, 127) as i8
            })
            .collect();
        let scales: Vec<f32> = v.scales().iter().map(|s| s * 1.125).collect();
        Int8Candidates::from_codes(&self.pool, self.dim, codes, scales).map_err(|e| e.to_string())
    }
}

impl<'a> Arbitrary<'a> for DifferentialCase {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        let (dim, query, pool) = valid_vectors(u)?;
        let p = pool.len() / dim;
        let budget = u.int_in_range(1..=p)?;
        let relevance = relevance_for(u, p)?;
        let family = family(u, &[0.0, 1e-10, 1e-10, 1e-3, 1.0, f64::INFINITY])?;
        // Appended last, so older corpus entries decode to the same case
        // (an exhausted input gives 0: the quantizer's own codes).
        let code_noise = u.int_in_range(0..=40)?;
        Ok(DifferentialCase {
            dim,
            query,
            pool,
            budget,
            relevance,
            family,
            code_noise,
        })
    }
}

impl fmt::Debug for DifferentialCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "DifferentialCase {{ dim: {}, query: {:?}, pool: {:?}, budget: {}, relevance: {:?}, family: {}, code_noise: {} }}",
            self.dim,
            F32s(&self.query),
            F32s(&self.pool),
            self.budget,
            self.relevance,
            fmt_family(&self.family),
            self.code_noise
        )
    }
}

impl DifferentialCase {
    /// Runs [`check_differential`] with [`DIFFERENTIAL_TOLERANCE`], then the
    /// same check on the certified int8 pursuit
    /// ([`check_differential_int8`]), exact screening against the
    /// unscreened pursuit ([`check_screened`]) and the int8 pursuit's exact
    /// certificate ([`check_int8_certified`]).
    ///
    /// # Errors
    /// The first disagreement.
    pub fn run(&self) -> Result<(), String> {
        check_differential(
            &self.query,
            &self.pool,
            self.dim,
            self.budget,
            &self.relevance,
            self.family,
            DIFFERENTIAL_TOLERANCE,
        )?;
        let codes = self.int8()?;
        check_differential_int8(
            &self.query,
            &self.pool,
            self.dim,
            self.budget,
            &self.relevance,
            self.family,
            DIFFERENTIAL_TOLERANCE,
            &codes,
        )
        .map_err(|e| format!("int8: {e}"))?;
        check_screened(
            &self.query,
            &self.pool,
            self.budget,
            &self.relevance,
            self.family,
        )
        .map_err(|e| format!("screening: {e}"))?;
        check_int8_certified(
            &self.query,
            &self.pool,
            self.budget,
            &self.relevance,
            self.family,
            &codes,
        )
        .map_err(|e| format!("int8 certificate: {e}"))
    }
}

// ---------------------------------------------------------------------------
// coverage
// ---------------------------------------------------------------------------

/// Target `coverage`: generator parameters from the fuzzer; whenever the
/// generator certifies the instance (M > 0 on the f32 vectors, with slack),
/// Proposition 1 must hold for the given ridge ([`check_coverage`]).
#[derive(Clone, PartialEq)]
pub struct CoverageCase {
    /// Generator parameters.
    pub params: FactClusterParams,
    /// Generator seed.
    pub seed: u64,
    /// Ridge λ ≥ 0.
    pub ridge: f64,
}

impl<'a> Arbitrary<'a> for CoverageCase {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        let h = u.int_in_range(2..=6)?;
        let mut cluster_sizes = Vec::with_capacity(h);
        for _ in 0..h {
            cluster_sizes.push(u.int_in_range(1..=4)?);
        }
        let unit = |u: &mut Unstructured<'_>| -> ArbResult<f64> {
            Ok(u.int_in_range(0u16..=10_000)? as f64 / 10_000.0)
        };
        let a_min = -0.2 + 1.1 * unit(u)?;
        let params = FactClusterParams {
            cluster_sizes,
            epsilon: 0.2 * unit(u)?,
            rho: 0.9 * unit(u)?,
            eta: 0.1 * unit(u)?,
            a_min,
            a_max: (a_min + 0.3 * unit(u)?).min(1.0),
            distractors: u.int_in_range(0..=8)?,
            distractor_gap: 0.001 + 0.5 * unit(u)?,
            distractor_similarity: -0.5 + 1.49 * unit(u)?,
            dim: h + 3 + u.int_in_range(0..=60)?,
            shuffle: u.arbitrary()?,
        };
        let seed = u.arbitrary()?;
        let ridge = *u.choose(&[0.0, 1e-10, 1e-6, 1e-3, 0.1, 1.0, 10.0])?;
        Ok(CoverageCase {
            params,
            seed,
            ridge,
        })
    }
}

impl fmt::Debug for CoverageCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.params;
        write!(
            f,
            "CoverageCase {{ params: FactClusterParams {{ cluster_sizes: vec!{:?}, epsilon: {:?}, \
             rho: {:?}, eta: {:?}, a_min: {:?}, a_max: {:?}, distractors: {}, distractor_gap: {:?}, \
             distractor_similarity: {:?}, dim: {}, shuffle: {} }}, seed: {}, ridge: {:?} }}",
            p.cluster_sizes,
            p.epsilon,
            p.rho,
            p.eta,
            p.a_min,
            p.a_max,
            p.distractors,
            p.distractor_gap,
            p.distractor_similarity,
            p.dim,
            p.shuffle,
            self.seed,
            F64Lit(self.ridge)
        )
    }
}

impl CoverageCase {
    /// Generates the instance and, if certified, checks Proposition 1.
    /// Returns whether it was certified (generation errors count as not
    /// certified).
    ///
    /// # Errors
    /// The violation found.
    pub fn run(&self) -> Result<bool, String> {
        match generate(&self.params, self.seed) {
            Ok(inst) => check_coverage(&inst, self.ridge),
            Err(_) => Ok(false),
        }
    }
}

// ---------------------------------------------------------------------------
// bad_input
// ---------------------------------------------------------------------------

const F32_PALETTE: [f32; 18] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    1e-40,
    f32::MIN_POSITIVE,
    1e-20,
    1e20,
    1e30,
    f32::MAX,
    -f32::MAX,
    3.0,
    1e-3,
    std::f32::consts::FRAC_1_SQRT_2,
];

const F64_PALETTE: [f64; 18] = [
    0.0,
    -0.0,
    1e-300,
    5e-324,
    1e-10,
    1e-3,
    0.5,
    1.0,
    1.0000000000000002,
    2.0,
    1e10,
    1e300,
    f64::MAX,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    -1.0,
    -1e-300,
];

fn any_f32(u: &mut Unstructured<'_>) -> ArbResult<f32> {
    Ok(match u.int_in_range(0u8..=3)? {
        0 => *u.choose(&F32_PALETTE)?,
        1 => f32::from_bits(u.arbitrary()?),
        _ => u.arbitrary::<i16>()? as f32 / 1000.0,
    })
}

fn any_f64(u: &mut Unstructured<'_>) -> ArbResult<f64> {
    Ok(match u.int_in_range(0u8..=4)? {
        0 => f64::from_bits(u.arbitrary()?),
        1 => u.int_in_range(0u16..=1000)? as f64 / 1000.0,
        _ => *u.choose(&F64_PALETTE)?,
    })
}

/// Target `bad_input`: arbitrary shapes and values (NaN, ±∞, zeros,
/// subnormals, huge values), extreme K, λ, γ, λ_mmr and stopping
/// parameters, both normalization and both invalid-candidate policies, a
/// heap or an undersized caller workspace. All three selectors run on it;
/// each must return a typed error or a valid result
/// ([`check_valid_selection`]), with exactly the unusable rows excluded.
#[derive(Clone, PartialEq)]
pub struct BadInputCase {
    /// Query (any length, any values).
    pub query: Vec<f32>,
    /// Candidates (any length, any values).
    pub candidates: Vec<f32>,
    /// ρ (any length, any values).
    pub relevance: RelevanceSpec,
    /// K.
    pub budget: usize,
    /// Pursuit options (any values).
    pub options: PursuitOptions,
    /// λ_mmr (any value).
    pub mmr_lambda: f64,
    /// `None`: a growing heap workspace; `Some((P_max, K_max))`: a caller
    /// workspace of that capacity.
    pub workspace: Option<(usize, usize)>,
}

impl<'a> Arbitrary<'a> for BadInputCase {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        let dim = u.int_in_range(0..=9)?;
        let mut query = Vec::with_capacity(dim);
        for _ in 0..dim {
            query.push(any_f32(u)?);
        }
        let len = if u.ratio(1u8, 8)? {
            u.int_in_range(0..=40)?
        } else {
            dim * u.int_in_range(0..=12)?
        };
        let mut candidates = Vec::with_capacity(len);
        for _ in 0..len {
            candidates.push(any_f32(u)?);
        }
        let p = len.checked_div(dim).unwrap_or(0);
        let relevance = match u.int_in_range(0u8..=3)? {
            0 => {
                let n = if u.ratio(1u8, 6)? {
                    u.int_in_range(0..=14)?
                } else {
                    p
                };
                let mut s = Vec::with_capacity(n);
                for _ in 0..n {
                    s.push(any_f32(u)?);
                }
                RelevanceSpec::Scores(s)
            }
            1 => RelevanceSpec::PoolOrder,
            _ => RelevanceSpec::Similarity,
        };
        let budget = match u.int_in_range(0u8..=5)? {
            0 => 0,
            1 => usize::MAX,
            2 => p + 1,
            3 => p,
            _ => u.int_in_range(0..=14)?,
        };
        let policy = InputPolicy {
            normalization: if u.arbitrary()? {
                Normalization::Cosine
            } else {
                Normalization::RequireUnit
            },
            invalid_candidates: if u.arbitrary()? {
                InvalidCandidates::Reject
            } else {
                InvalidCandidates::Exclude
            },
        };
        let stopping = if u.arbitrary()? {
            Stopping::FixedBudget
        } else {
            Stopping::Adaptive {
                tau: any_f64(u)?,
                patience: *u.choose(&[0, 1, 2, 3, u32::MAX])?,
                eps: any_f64(u)?,
            }
        };
        let options = PursuitOptions {
            ridge: if u.ratio(1u8, 4)? {
                f64::INFINITY
            } else {
                any_f64(u)?
            },
            gamma: if u.ratio(1u8, 3)? { 1.0 } else { any_f64(u)? },
            stopping,
            at_pool_optimum: *u.choose(&[
                AtPoolOptimum::Continue,
                AtPoolOptimum::Stop,
                AtPoolOptimum::FillByRelevance,
            ])?,
            optimum_tolerance: any_f64(u)?,
            input: policy,
            // Not drawn: a draw here would shift every later field of the
            // committed regression inputs.
            dependent_picks: DependentPicks::Keep,
        };
        let mmr_lambda = any_f64(u)?;
        let workspace = if u.ratio(1u8, 4)? {
            Some((u.int_in_range(0..=14)?, u.int_in_range(0..=14)?))
        } else {
            None
        };
        Ok(BadInputCase {
            query,
            candidates,
            relevance,
            budget,
            options,
            mmr_lambda,
            workspace,
        })
    }
}

/// Prints a `PursuitOptions` as a Rust expression.
pub struct OptionsLit<'a>(pub &'a PursuitOptions);

impl fmt::Debug for OptionsLit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let o = self.0;
        let stopping = match o.stopping {
            Stopping::FixedBudget => "Stopping::FixedBudget".to_string(),
            Stopping::Adaptive { tau, patience, eps } => format!(
                "Stopping::Adaptive {{ tau: {:?}, patience: {patience}, eps: {:?} }}",
                F64Lit(tau),
                F64Lit(eps)
            ),
            other => format!("Stopping::{other:?}"),
        };
        write!(
            f,
            "PursuitOptions {{ ridge: {:?}, gamma: {:?}, stopping: {stopping}, at_pool_optimum: \
             AtPoolOptimum::{:?}, optimum_tolerance: {:?}, input: InputPolicy {{ normalization: \
             Normalization::{:?}, invalid_candidates: InvalidCandidates::{:?} }}, \
             dependent_picks: DependentPicks::{:?} }}",
            F64Lit(o.ridge),
            F64Lit(o.gamma),
            o.at_pool_optimum,
            F64Lit(o.optimum_tolerance),
            o.input.normalization,
            o.input.invalid_candidates,
            o.dependent_picks
        )
    }
}

impl fmt::Debug for BadInputCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "BadInputCase {{ query: {:?}, candidates: {:?}, relevance: {:?}, budget: {}, options: \
             {:?}, mmr_lambda: {:?}, workspace: {:?} }}",
            F32s(&self.query),
            F32s(&self.candidates),
            self.relevance,
            if self.budget == usize::MAX {
                "usize::MAX".to_string()
            } else {
                self.budget.to_string()
            },
            OptionsLit(&self.options),
            F64Lit(self.mmr_lambda),
            self.workspace
        )
    }
}

/// Whether the core must reject a vector under `norm`, with a margin of
/// 1e-6 relative around each threshold (the core decides from an f32
/// squared norm, the check from f64): `Some(true)` clearly unusable,
/// `Some(false)` clearly usable, `None` too close to a threshold to tell.
fn unusable(v: &[f32], norm: Normalization) -> Option<bool> {
    if v.iter().any(|x| !x.is_finite()) {
        return Some(true);
    }
    let n = v.iter().map(|&x| x as f64 * x as f64).sum::<f64>().sqrt();
    if n == 0.0 {
        return Some(true);
    }
    let near = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1e-300);
    if near(n, MIN_NORM) || near(n, MAX_NORM) {
        return None;
    }
    if !(MIN_NORM..=MAX_NORM).contains(&n) {
        return Some(true);
    }
    if norm == Normalization::RequireUnit {
        let off = (n - 1.0).abs();
        if (off - UNIT_NORM_TOLERANCE).abs() <= 1e-6 {
            return None;
        }
        return Some(off > UNIT_NORM_TOLERANCE);
    }
    Some(false)
}

impl BadInputCase {
    fn input(&self) -> Input<'_> {
        Input::new(&self.query, &self.candidates).with_relevance(self.relevance.as_relevance())
    }

    fn select(&self, which: usize) -> Result<Selection, Error> {
        let input = self.input();
        let policy = self.options.input;
        let call = |ws: &mut Workspace<'_>| -> Result<Selection, Error> {
            match which {
                0 => pursuit(&input, self.budget, &self.options, ws).map(Into::into),
                1 => top_k(&input, self.budget, &policy, ws).map(Into::into),
                _ => mmr(
                    &input,
                    self.budget,
                    &MmrOptions {
                        lambda: self.mmr_lambda,
                        input: policy,
                    },
                    ws,
                )
                .map(Into::into),
            }
        };
        match self.workspace {
            None => {
                let p = input.pool_size().unwrap_or(0);
                let mut sel = mempursuit::Selector::new();
                let mut ws = sel.workspace(p, self.budget.min(p));
                call(&mut ws)
            }
            Some((pc, kc)) => {
                let need = ScratchSize::for_capacity(pc, kc).expect("small capacity");
                let mut bufs = crate::scratch::ScratchVecs::new(need);
                let mut ws = bufs.workspace(ScratchKind::Int8, pc, kc)?;
                call(&mut ws)
            }
        }
    }

    /// Runs pursuit, top-K and MMR; each must return an error or a valid
    /// selection in which exactly the unusable rows are excluded (and none
    /// under `Reject`). Panics inside the core propagate (the fuzzer
    /// reports them).
    ///
    /// # Errors
    /// The first invalid result.
    pub fn run(&self) -> Result<(), String> {
        let input = self.input();
        let p = input.pool_size();
        for which in 0..3 {
            let name = ["pursuit", "top_k", "mmr"][which];
            let Ok(sel) = self.select(which) else {
                continue;
            };
            let Some(p) = p else {
                return Err(format!("{name}: Ok for an invalid shape"));
            };
            check_valid_selection(&sel, p, self.budget, which == 0)
                .map_err(|e| format!("{name}: {e}"))?;
            let d = self.query.len();
            for i in 0..p {
                let row = &self.candidates[i * d..(i + 1) * d];
                let excluded = sel.excluded.contains(&i);
                match unusable(row, self.options.input.normalization) {
                    Some(true) if !excluded => {
                        return Err(format!("{name}: unusable row {i} was not excluded"))
                    }
                    Some(false) if excluded => {
                        return Err(format!("{name}: usable row {i} was excluded"))
                    }
                    _ => {}
                }
            }
            if self.options.input.invalid_candidates == InvalidCandidates::Reject
                && !sel.excluded.is_empty()
            {
                return Err(format!("{name}: rows excluded under Reject"));
            }
        }
        Ok(())
    }
}

/// Decodes one case of type `T` from raw fuzzer bytes as libFuzzer does
/// (`arbitrary_take_rest`), for the replay of corpora and regressions.
///
/// # Errors
/// The `arbitrary` error if the bytes do not decode.
pub fn decode<'a, T: Arbitrary<'a>>(bytes: &'a [u8]) -> ArbResult<T> {
    T::arbitrary_take_rest(Unstructured::new(bytes))
}
