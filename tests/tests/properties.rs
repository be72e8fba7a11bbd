//! Property tests of the theory (Appendix B of the paper: Lemma B.1,
//! Theorem B.2, Proposition 1 under Assumption B.1; the relevance-scaled
//! family of ARCHITECTURE.md), seeded and deterministic: thousands of
//! generated cases checked by the shared code in `mempursuit_tests::checks`
//! (the same code the fuzz targets run).
//!
//! # Tolerances (see `mempursuit_tests::checks` for the derivations)
//!
//! * Scores: the core computes b and Gram rows in f32 and the refit in f64;
//!   the checks recompute every product in f64 from the same f32 inputs.
//!   The two differ by at most `score_tolerance(d)` = 2·(d/8 + 4)·2⁻²⁴
//!   (+1e-12): one f32 rounding of b and one of each Gram entry, each a
//!   lane-blocked dot product of unit vectors. KKT equalities and ν are
//!   asserted within 4× and 2× that.
//! * Blocked columns: the core's pivot rule keeps a memory at α = 0 when
//!   its augmented vector is within √(PIVOT_TOLERANCE·(2 + κ)) ≈ 4.5e-5 of
//!   the free set's span; for ρ = b its KKT violation is then at most that
//!   distance times (‖r‖ + |ν| + 1), which is the only allowance made.
//! * Certificate: J(S) − F* ≤ g_S (+ measured KKT excess + 1e-10 for the
//!   reference QP's accuracy), and g_S ≤ max(√(2C(J − F*)), 2(J − F*)) with
//!   C = γ(4 + 2κ), the Frank–Wolfe curvature bound on the simplex.
//! * Ties: two candidates whose f64 scores are within `TIE_TOLERANCE` =
//!   1e-5 may be ordered differently by correct implementations; order
//!   comparisons stop at the first such step.

use mempursuit::synth::{generate, FactClusterParams, Label};
use mempursuit::{Input, Method, PursuitOptions, Selector};
use mempursuit_tests::checks::{
    check_coverage, check_differential, check_pursuit_path, check_pursuit_path_costed,
    first_near_tie, score_tolerance, Family, Geometry, RelevanceSpec,
};
use mempursuit_tests::fixture::{self, Fixture};
use mempursuit_tests::random;
use mempursuit_tests::reference::{qp_objective, reference_pursuit, simplex_qp};
use nalgebra::{DMatrix, DVector};
use rand::seq::SliceRandom;
use rand::RngExt;

const PAPER: Family = Family {
    ridge: 1e-10,
    gamma: 1.0,
};

/// A pool with near duplicates: `groups` random unit directions, each
/// repeated with perturbations of size 10^-k (k = 2..7), exact copies and
/// normalized convex combinations of two earlier rows.
fn near_duplicate_pool(seed: u64, p: usize, d: usize) -> (Vec<f32>, Vec<f32>) {
    let mut r = random::rng(seed);
    let q = random::unit(&mut r, d);
    let mut rows: Vec<Vec<f64>> = Vec::new();
    for i in 0..p {
        let v: Vec<f64> = if i < 3 {
            random::gaussian(&mut r, d)
        } else {
            match r.random_range(0..4) {
                0 => {
                    let j = r.random_range(0..i);
                    let e = 10f64.powi(-r.random_range(2..8));
                    let n = random::gaussian(&mut r, d);
                    rows[j].iter().zip(&n).map(|(a, b)| a + e * b).collect()
                }
                1 => rows[r.random_range(0..i)].clone(),
                2 => {
                    let (j, k) = (r.random_range(0..i), r.random_range(0..i));
                    let w: f64 = r.random();
                    rows[j]
                        .iter()
                        .zip(&rows[k])
                        .map(|(a, b)| w * a + (1.0 - w) * b)
                        .collect()
                }
                _ => random::gaussian(&mut r, d),
            }
        };
        let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        rows.push(v.iter().map(|x| x / n).collect());
    }
    let pool = rows.iter().flat_map(|v| random::normalized(v)).collect();
    (q, pool)
}

fn mini() -> Fixture {
    let dir = fixture::find(&fixture::mini_candidates())
        .expect("the HotpotQA mini fixture (cli/data/hotpotqa-mini or shared/data)");
    Fixture::load(&dir).expect("loadable mini fixture")
}

/// KKT (Lemma B.1), ν (Eq. 14), the Frank–Wolfe certificate (Theorem B.2,
/// against F* over the whole pool) and nestedness after every refit of the
/// paper's pursuit, for ridges 0, 1e-10 (the paper's) and 1e-3, on random
/// and clustered pools: 360 paths, ~1,400 refits (each with K runs).
#[test]
fn kkt_and_certificate_after_every_refit_paper_mode() {
    let mut refits = 0;
    for seed in 0..120u64 {
        let mut r = random::rng(seed);
        let p = r.random_range(4..=12);
        let d = r.random_range(3..=24);
        let k = r.random_range(1..=p.min(8));
        let (q, pool) = if seed % 2 == 0 {
            random::uniform_pool(seed, p, d)
        } else {
            random::clustered_pool(seed, p, d, 3, 0.2)
        };
        for ridge in [0.0, 1e-10, 1e-3] {
            let fam = Family { ridge, gamma: 1.0 };
            let rep = check_pursuit_path(&q, &pool, d, k, &RelevanceSpec::Similarity, fam, true)
                .unwrap_or_else(|e| panic!("seed {seed} ridge {ridge}: {e}"));
            assert_eq!(rep.picks, k);
            assert!(rep.max_free_violation <= 4.0 * score_tolerance(d));
            refits += rep.picks;
        }
    }
    assert!(refits > 1000, "{refits}");
}

/// The same on pools full of near duplicates, exact duplicates and affine
/// dependencies with λ = 1e-10: the regime of the core's pivot rule
/// (`PIVOT_TOLERANCE`; ARCHITECTURE.md, “The refit”). 150 paths.
#[test]
fn kkt_and_certificate_on_near_duplicate_pools() {
    let mut blocked = 0;
    for seed in 0..150u64 {
        let mut r = random::rng(1000 + seed);
        let p = r.random_range(5..=12);
        let d = r.random_range(2..=16);
        let k = r.random_range(2..=p);
        let (q, pool) = near_duplicate_pool(seed, p, d);
        let rep = check_pursuit_path(&q, &pool, d, k, &RelevanceSpec::Similarity, PAPER, true)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        blocked += rep.blocked_steps;
    }
    // The allowance is an exception, not the rule.
    assert!(
        blocked < 150,
        "{blocked} refits needed the blocked-column allowance"
    );
}

/// The relevance-scaled family (ARCHITECTURE.md): γ ∈ {0.5, 1}, κ ∈ {1e-3, 0.1,
/// 1}, ρ = b, the caller's scores or the pool order; KKT with λ → γκ
/// (α_j > 0 ⇒ U_j − γκα_j = ν, U_j = ρ_j − γ(Gα)_j), ν and the certificate
/// after every refit. Centroid pursuit (κ = ∞): α = 1/|S|, ν = mean U and
/// the diagnostic gap. 540 paths.
#[test]
fn kkt_and_certificate_relevance_scaled_family() {
    for seed in 0..60u64 {
        let mut r = random::rng(2000 + seed);
        let p = r.random_range(4..=10);
        let d = r.random_range(3..=16);
        let k = r.random_range(1..=p.min(6));
        let (q, pool) = random::clustered_pool(seed, p, d, 2, 0.3);
        let scores: Vec<f32> = (0..p).map(|_| r.random_range(-0.5..1.0)).collect();
        let rels = [
            RelevanceSpec::Similarity,
            RelevanceSpec::Scores(scores),
            RelevanceSpec::PoolOrder,
        ];
        for rel in &rels {
            for (gamma, ridge) in [(0.5, 1e-3), (1.0, 0.1), (0.5, 1.0)] {
                let fam = Family { ridge, gamma };
                check_pursuit_path(&q, &pool, d, k, rel, fam, true)
                    .unwrap_or_else(|e| panic!("seed {seed} {rel:?} {fam:?}: {e}"));
            }
            let fam = Family {
                ridge: f64::INFINITY,
                gamma: 0.5,
            };
            check_pursuit_path(&q, &pool, d, k, rel, fam, false)
                .unwrap_or_else(|e| panic!("seed {seed} {rel:?} centroid: {e}"));
        }
    }
}

/// Theorem B.2's "g_S = 0 iff optimal": with K = P every memory is selected
/// and the refit is the pool optimum (J = F*, g = 0); and whenever the core
/// reports g_S ≤ 1e-12 before that, its weights already attain F*
/// (J − F* ≤ 1e-9). The converse direction is in `check_certificate`.
#[test]
fn certificate_is_zero_exactly_at_the_pool_optimum() {
    let mut early = 0;
    for seed in 0..80u64 {
        let mut r = random::rng(3000 + seed);
        let p = r.random_range(2..=9);
        let d = r.random_range(2..=12);
        let (q, pool) = random::clustered_pool(seed, p, d, 2, 0.3);
        let geo = Geometry::new(&q, &pool, d, &RelevanceSpec::Similarity).unwrap();
        let f_star = geo.pool_optimum(PAPER.ridge, 1.0);
        let mut sel = Selector::new();
        let full = sel
            .select(
                &Input::new(&q, &pool),
                p,
                &Method::Pursuit(PursuitOptions::default()),
            )
            .unwrap();
        let j = geo.objective(PAPER.ridge, 1.0, &full.picks, &full.weights);
        assert_eq!(full.steps[p - 1].fw_gap, 0.0);
        assert!(
            (j - f_star).abs() <= 1e-9,
            "seed {seed}: J {j} vs F* {f_star}"
        );
        for t in 1..p {
            if full.steps[t - 1].fw_gap <= 1e-12 {
                let s = sel
                    .select(
                        &Input::new(&q, &pool),
                        t,
                        &Method::Pursuit(PursuitOptions::default()),
                    )
                    .unwrap();
                let j = geo.objective(PAPER.ridge, 1.0, &s.picks, &s.weights);
                assert!(
                    j - f_star <= 1e-9,
                    "seed {seed} t {t}: gap 0 but J - F* = {}",
                    j - f_star
                );
                early += 1;
                break;
            }
        }
    }
    assert!(
        early > 5,
        "the pool optimum was reached early only {early} times"
    );
}

/// Distance from `m` to the convex hull of the rows `hull` of the geometry:
/// √(min_β ‖m − Σ β_s m_s‖²) over the simplex, by the reference QP.
fn hull_distance(geo: &Geometry, i: usize, hull: &[usize]) -> f64 {
    let n = hull.len();
    let h = DMatrix::from_fn(n, n, |a, c| geo.gram[(hull[a], hull[c])]);
    let c = DVector::from_fn(n, |a, _| geo.gram[(hull[a], i)]);
    let beta = simplex_qp(&h, &c);
    let f = qp_objective(&h, &c, beta.as_slice());
    (2.0 * f + geo.gram[(i, i)]).max(0.0).sqrt()
}

/// Redundancy bound (Eq. 8 / Eq. 18): a candidate m within distance δ of
/// the convex hull H_S of the selected embeddings scores at most
/// max_{s∈S} U(s) + δ‖r‖, and max_S U = ν + λ‖α‖∞ (Eq. 16). Pools get
/// extra candidates placed at distances 1e-4..0.3 from the hull of a
/// pursuit's first picks; then, after every refit t of the core's run on
/// the extended pool, every unselected candidate's f64 score is checked
/// against its bound with δ = dist(m, H_S) computed exactly (reference
/// QP), tolerance 4·score_tolerance. Consequence checked too: a candidate
/// whose bound is below another candidate's score is never the next
/// pick.
#[test]
fn redundancy_bound_eq8() {
    let mut checked = 0;
    let mut decisive = 0;
    for seed in 0..60u64 {
        let mut r = random::rng(4000 + seed);
        let d = r.random_range(6..=24);
        let p = r.random_range(6..=12);
        let (q, base) = random::clustered_pool(seed, p, d, 3, 0.25);
        let opts = Method::Pursuit(PursuitOptions::default());
        let mut sel = Selector::new();
        let first = sel.select(&Input::new(&q, &base), 3, &opts).unwrap();
        let sd: Vec<Vec<f64>> = first
            .picks
            .iter()
            .map(|&i| base[i * d..(i + 1) * d].iter().map(|&x| x as f64).collect())
            .collect();
        let mut pool = base.clone();
        for _ in 0..4 {
            let mut beta: Vec<f64> = (0..sd.len()).map(|_| -r.random::<f64>().ln()).collect();
            let sum: f64 = beta.iter().sum();
            beta.iter_mut().for_each(|b| *b /= sum);
            let v: Vec<f64> = (0..d)
                .map(|k| sd.iter().zip(&beta).map(|(m, b)| b * m[k]).sum())
                .collect();
            let e = 10f64.powf(r.random_range(-4.0..-0.5));
            let n = random::gaussian(&mut r, d);
            pool.extend(random::normalized(
                &v.iter().zip(&n).map(|(a, b)| a + e * b).collect::<Vec<_>>(),
            ));
        }
        let geo = Geometry::new(&q, &pool, d, &RelevanceSpec::Similarity).unwrap();
        let tol = 4.0 * score_tolerance(d);
        let full = sel.select(&Input::new(&q, &pool), 5, &opts).unwrap();
        for t in 1..5 {
            let s = sel.select(&Input::new(&q, &pool), t, &opts).unwrap();
            let u = geo.scores(1.0, &s.picks, &s.weights);
            let rn = geo.residual_norm(&s.picks, &s.weights);
            let amax = s.weights.iter().copied().fold(0.0, f64::max);
            let max_sel = s.picks.iter().map(|&j| u[j]).fold(f64::MIN, f64::max);
            assert!(
                (max_sel - (s.steps[t - 1].nu + 1e-10 * amax)).abs() <= tol,
                "seed {seed} t {t}: Eq. 16"
            );
            let mut bounds = Vec::new();
            for i in (0..pool.len() / d).filter(|i| !s.picks.contains(i)) {
                let delta = hull_distance(&geo, i, &s.picks);
                let bound = max_sel + delta * rn;
                assert!(
                    u[i] <= bound + tol,
                    "seed {seed} t {t}: candidate {i} at distance {delta} scores {} > {bound}",
                    u[i]
                );
                checked += 1;
                bounds.push((i, bound));
            }
            // A candidate whose bound is beaten by another candidate's score
            // cannot be the next pick.
            let best = bounds.iter().map(|&(i, _)| u[i]).fold(f64::MIN, f64::max);
            for &(i, bound) in &bounds {
                if bound + tol < best {
                    decisive += 1;
                    assert_ne!(
                        full.picks[t], i,
                        "seed {seed} t {t}: picked below its bound"
                    );
                }
            }
        }
    }
    assert!(
        checked > 2000 && decisive > 30,
        "{checked} checked, {decisive} decisive"
    );
}

/// Proposition 1 on the fact-cluster generator: on every certified
/// instance the first h picks are one member of each cluster and no
/// distractor, for ridge λ ∈ {0, 1e-10, 1e-3}. h = 2..=6, d = 16..64,
/// ~500 instances × 3 ridges. Most typical instances must be certified, and
/// an uncertified control (distractors orthogonal to the facts, so the
/// residual does not discount them) must fail coverage, so the check can
/// fail.
#[test]
fn coverage_proposition_1() {
    let mut certified = 0;
    let mut total = 0;
    for h in 2..=6usize {
        for seed in 0..100u64 {
            let mut r = random::rng(5000 + seed * 7 + h as u64);
            let mut params = FactClusterParams::typical(h, r.random_range(h + 13..=64));
            params.cluster_sizes = (0..h).map(|_| r.random_range(1..=4)).collect();
            params.rho = r.random_range(0.1..0.5);
            params.eta = r.random_range(0.0..0.02);
            params.epsilon = r.random_range(0.0..0.04);
            params.a_min = r.random_range(0.3..0.55);
            params.a_max = params.a_min + r.random_range(0.0..0.05);
            params.distractor_similarity = params.rho + params.eta + params.epsilon;
            let Ok(inst) = generate(&params, seed) else {
                continue; // relevances too high for this geometry
            };
            total += 1;
            for ridge in [0.0, 1e-10, 1e-3] {
                let ok = check_coverage(&inst, ridge)
                    .unwrap_or_else(|e| panic!("h {h} seed {seed}: {e}"));
                certified += ok as usize;
            }
        }
    }
    assert!(
        certified >= 3 * total * 8 / 10,
        "{certified} / {}",
        3 * total
    );

    // Control: distractors nearly orthogonal to every fact with query
    // similarity just under a_min are not explained by the picked facts.
    let control = FactClusterParams {
        distractor_similarity: 0.0,
        distractor_gap: 0.02,
        ..FactClusterParams::typical(3, 32)
    };
    let mut failures = 0;
    for seed in 0..20 {
        let inst = generate(&control, seed).unwrap();
        assert!(!inst.certified());
        let sel = Selector::new()
            .select(
                &inst.input(),
                3,
                &Method::Pursuit(PursuitOptions::default()),
            )
            .unwrap();
        failures += !inst.covers_all_facts(&sel.picks) as usize;
        assert!(
            sel.picks
                .iter()
                .any(|&i| inst.labels[i] == Label::Distractor)
                || inst.covers_all_facts(&sel.picks)
        );
    }
    assert!(
        failures >= 10,
        "control instances covered in {} of 20",
        20 - failures
    );
}

fn permuted(pool: &[f32], d: usize, perm: &[usize]) -> Vec<f32> {
    // Row i of the new pool is row perm[i] of the old one.
    perm.iter()
        .flat_map(|&j| pool[j * d..(j + 1) * d].iter().copied())
        .collect()
}

/// Permutation equivariance: permuting the pool permutes the picks, up to
/// the first near tie (f64 scores within TIE_TOLERANCE), for the paper's
/// pursuit and centroid pursuit, on random, near-duplicate and fixture
/// pools. 224 pools × 2 methods.
#[test]
fn permutation_equivariance() {
    let fx = mini();
    let mut compared = 0;
    let mut cases: Vec<(Vec<f32>, Vec<f32>, usize)> = Vec::new();
    for seed in 0..100u64 {
        let d = 4 + seed as usize % 20;
        let (q, pool) = random::clustered_pool(seed, 20, d, 4, 0.15);
        cases.push((q, pool, d));
        let (q, pool) = near_duplicate_pool(seed, 12, d);
        cases.push((q, pool, d));
    }
    for qi in 0..fx.queries.len() {
        cases.push((fx.query(qi).to_vec(), fx.pool(qi), fx.dim()));
    }
    for (n, (q, pool, d)) in cases.iter().enumerate() {
        let p = pool.len() / d;
        let k = p.min(8);
        let mut r = random::rng(6000 + n as u64);
        let mut perm: Vec<usize> = (0..p).collect();
        perm.shuffle(&mut r);
        let pp = permuted(pool, *d, &perm);
        for fam in [
            PAPER,
            Family {
                ridge: f64::INFINITY,
                gamma: 0.5,
            },
        ] {
            let method = Method::Pursuit(fam.options());
            let a = Selector::new()
                .select(&Input::new(q, pool), k, &method)
                .unwrap();
            let b = Selector::new()
                .select(&Input::new(q, &pp), k, &method)
                .unwrap();
            let geo = Geometry::new(q, pool, *d, &RelevanceSpec::Similarity).unwrap();
            let rf = reference_pursuit(q, pool, *d, k, fam.ridge, fam.gamma, None);
            let m = first_near_tie(&geo, fam, &rf, |_| 0.0).unwrap_or(k);
            let mapped: Vec<usize> = b.picks.iter().map(|&i| perm[i]).collect();
            assert_eq!(a.picks[..m], mapped[..m], "case {n} {fam:?}");
            compared += m;
        }
    }
    assert!(compared > 2000, "{compared}");
}

/// Differential agreement with the independent f64 reference
/// (`reference_pursuit`: full f64 Gram, QP re-solved from scratch) on
/// random pools, near-duplicate pools and every query of the mini fixture:
/// picks equal up to the first near tie, per-step score, ν, L_t and g_S and
/// the final objective within 1e-5 (4·score_tolerance(384) ≈ 1.3e-5 at the
/// fixture's d; the refit is well conditioned at λ = 1e-10 on these
/// pools, except near duplicates, where blocked columns change the
/// objective by less than their KKT allowance times their weight).
#[test]
fn differential_against_reference() {
    let mut compared = 0;
    let mut run = |q: &[f32],
                   pool: &[f32],
                   d: usize,
                   k: usize,
                   rel: &RelevanceSpec,
                   fam: Family,
                   tol: f64,
                   what: &str| {
        let rep = check_differential(q, pool, d, k, rel, fam, tol)
            .unwrap_or_else(|e| panic!("{what} {fam:?}: {e}"));
        compared += rep.compared;
    };
    for seed in 0..60u64 {
        let d = 3 + seed as usize % 30;
        let (q, pool) = random::clustered_pool(seed, 16, d, 3, 0.2);
        let mut r = random::rng(7000 + seed);
        let scores: Vec<f32> = (0..16).map(|_| r.random_range(0.0..1.0)).collect();
        for fam in [
            PAPER,
            Family {
                ridge: 0.0,
                gamma: 1.0,
            },
            Family {
                ridge: 1e-3,
                gamma: 0.5,
            },
            Family {
                ridge: f64::INFINITY,
                gamma: 0.5,
            },
        ] {
            run(
                &q,
                &pool,
                d,
                8,
                &RelevanceSpec::Similarity,
                fam,
                1e-6,
                &format!("random {seed}"),
            );
        }
        run(
            &q,
            &pool,
            d,
            8,
            &RelevanceSpec::Scores(scores),
            Family {
                ridge: 0.1,
                gamma: 0.5,
            },
            1e-6,
            &format!("random scores {seed}"),
        );
        let (q, pool) = near_duplicate_pool(seed, 12, d);
        run(
            &q,
            &pool,
            d,
            8,
            &RelevanceSpec::Similarity,
            PAPER,
            1e-4,
            &format!("near-dup {seed}"),
        );
    }
    let fx = mini();
    for qi in 0..fx.queries.len() {
        let (q, pool) = (fx.query(qi), fx.pool(qi));
        for fam in [
            PAPER,
            Family {
                ridge: f64::INFINITY,
                gamma: 0.5,
            },
        ] {
            run(
                q,
                &pool,
                fx.dim(),
                10,
                &RelevanceSpec::Similarity,
                fam,
                1e-5,
                &format!("mini {qi}"),
            );
        }
        run(
            q,
            &pool,
            fx.dim(),
            10,
            &RelevanceSpec::PoolOrder,
            Family {
                ridge: f64::INFINITY,
                gamma: 0.5,
            },
            1e-5,
            &format!("mini pool-order {qi}"),
        );
    }
    assert!(compared > 1500, "{compared}");
}

/// KKT after every refit on the real fixture (d = 384, paper mode, K = 12;
/// no certificate: F* over a 40–75 memory pool is the reference's slow
/// iterative QP).
#[test]
fn kkt_on_the_mini_fixture() {
    let fx = mini();
    for qi in 0..fx.queries.len() {
        let (q, pool) = (fx.query(qi), fx.pool(qi));
        check_pursuit_path(
            q,
            &pool,
            fx.dim(),
            12,
            &RelevanceSpec::Similarity,
            PAPER,
            false,
        )
        .unwrap_or_else(|e| panic!("mini query {qi}: {e}"));
    }
}

/// The `kkt` fuzz target's budget in cost, on the real fixture: KKT after
/// every refit, nestedness, the picks within the budget, and a stop for the
/// budget only when nothing left fits. The costs (1 + i mod 7, so every
/// pool has cheap and dear memories) bind: some query stops for the budget
/// with fewer than K picks, and some skips a dear candidate for a cheaper one.
#[test]
fn kkt_and_cost_budget_on_the_mini_fixture() {
    let fx = mini();
    let (mut stopped, mut skipped_dear) = (0, 0);
    for qi in 0..fx.queries.len() {
        let (q, pool) = (fx.query(qi), fx.pool(qi));
        let p = pool.len() / fx.dim();
        let costs: Vec<f32> = (0..p).map(|i| 1.0 + (i % 7) as f32).collect();
        let total = 20.0;
        check_pursuit_path_costed(
            q,
            &pool,
            fx.dim(),
            12,
            &RelevanceSpec::Similarity,
            PAPER,
            false,
            Some((&costs, total)),
        )
        .unwrap_or_else(|e| panic!("mini query {qi}: {e}"));
        let input = Input::new(q, &pool).with_costs(&costs, total);
        let sel = Selector::new()
            .select(&input, 12, &Method::Pursuit(PAPER.options()))
            .unwrap();
        let plain = Selector::new()
            .select(&Input::new(q, &pool), 12, &Method::Pursuit(PAPER.options()))
            .unwrap();
        stopped += usize::from(sel.stop == mempursuit::StopReason::CostBudget);
        skipped_dear += usize::from(sel.picks[..] != plain.picks[..sel.picks.len()]);
    }
    assert!(
        stopped > 0 && skipped_dear > 0,
        "stopped {stopped}, skipped {skipped_dear}"
    );
}
