//! Agreement of the core with the independent f64 reference
//! (`mempursuit_tests::reference`), and of the reference's simplex QP with
//! brute force.
//!
//! Tolerances: the core computes similarities and Gram rows in f32 (error
//! ε ≈ 1e-7 per dot product of unit vectors) and refits in f64; the reference
//! does everything in f64 from the same f32 inputs. ν, L_t, scores and gaps
//! are first-order in ε: 1e-6 is asserted. The weights move by about ε / μ,
//! where μ is the curvature of the refit on the free face
//! ([`face_curvature`]); asserted: |Δα| ≤ max(1e-6, 5e-7 / μ). (Measured on
//! the random pools and the mini fixture: max |Δα|·μ ≈ 1.0e-7, max |Δα| ≈
//! 1.1e-6 at μ = 0.034, max |Δν| ≈ 2e-7, max |ΔL| ≈ 3e-7.)

use mempursuit::{Input, Int8Candidates, Method, PursuitOptions, Relevance, Selection, Selector};
use mempursuit_tests::fixture::{self, Fixture};
use mempursuit_tests::random;
use mempursuit_tests::reference::{
    face_curvature, qp_fw_gap, qp_objective, reference_pursuit, simplex_qp, simplex_qp_enumerate,
    simplex_qp_interior, simplex_qp_iterative, Problem, RefResult,
};
use nalgebra::{DMatrix, DVector};
use rand::RngExt;

const TOL: f64 = 1e-6;

/// A random PSD matrix BᵀB / m (rank ≤ m) plus `ridge`·I, and a random c.
fn random_qp(seed: u64, n: usize, m: usize, ridge: f64) -> (DMatrix<f64>, DVector<f64>) {
    let mut r = random::rng(seed);
    let b = DMatrix::from_fn(m, n, |_, _| r.random::<f64>() * 2.0 - 1.0);
    let h = (b.transpose() * &b) / m as f64 + DMatrix::identity(n, n) * ridge;
    let c = DVector::from_fn(n, |_, _| r.random::<f64>() * 2.0 - 1.0);
    (h, c)
}

#[test]
fn simplex_qp_matches_brute_force_on_tiny_problems() {
    for seed in 0..60u64 {
        let n = 1 + (seed as usize % 6);
        // Full rank, rank-deficient (m < n) and rank-one problems.
        let m = [n + 2, (n / 2).max(1), 1][seed as usize % 3];
        let (h, c) = random_qp(seed, n, m, if seed % 2 == 0 { 1e-10 } else { 0.0 });
        let a = simplex_qp_enumerate(&h, &c);
        let a: Vec<f64> = a.iter().copied().collect();
        // On the simplex.
        assert!(a.iter().all(|&v| v >= 0.0));
        assert!((a.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        // Optimal: the Frank–Wolfe gap bounds the suboptimality.
        let gap = qp_fw_gap(&h, &c, &a);
        assert!(gap < 1e-12, "seed {seed}: FW gap {gap}");
        let f = qp_objective(&h, &c, &a);
        // No point of a fine grid / random sample of the simplex is better.
        let mut r = random::rng(1000 + seed);
        for _ in 0..2000 {
            let mut x: Vec<f64> = (0..n).map(|_| -r.random::<f64>().ln()).collect();
            let s: f64 = x.iter().sum();
            x.iter_mut().for_each(|v| *v /= s);
            assert!(qp_objective(&h, &c, &x) >= f - 1e-12, "seed {seed}");
        }
        // The iterative solver and the interior-point method reach the same
        // objective.
        let b: Vec<f64> = simplex_qp_iterative(&h, &c).iter().copied().collect();
        let fb = qp_objective(&h, &c, &b);
        assert!((fb - f).abs() < 1e-12, "seed {seed}: {fb} vs {f}");
        let b: Vec<f64> = simplex_qp_interior(&h, &c).iter().copied().collect();
        let fb = qp_objective(&h, &c, &b);
        assert!((fb - f).abs() < 1e-12, "seed {seed}: interior {fb} vs {f}");
    }
}

#[test]
fn iterative_qp_matches_enumeration_at_n_11_and_12() {
    for seed in 0..6u64 {
        let n = 11 + seed as usize % 2;
        let m = [n + 5, 6, 3][seed as usize % 3];
        let (h, c) = random_qp(77 + seed, n, m, 1e-10);
        let e: Vec<f64> = simplex_qp_enumerate(&h, &c).iter().copied().collect();
        let a: Vec<f64> = simplex_qp(&h, &c).iter().copied().collect();
        let (fe, fa) = (qp_objective(&h, &c, &e), qp_objective(&h, &c, &a));
        assert!((fe - fa).abs() < 1e-12, "seed {seed}: {fa} vs {fe}");
        let ip: Vec<f64> = simplex_qp_interior(&h, &c).iter().copied().collect();
        let fi = qp_objective(&h, &c, &ip);
        assert!(
            (fe - fi).abs() < 1e-12,
            "seed {seed}: interior {fi} vs {fe}"
        );
        assert!(qp_fw_gap(&h, &c, &a) < 1e-12);
        if m > n {
            // Strictly convex: the minimizer is unique.
            for (x, y) in e.iter().zip(&a) {
                assert!((x - y).abs() < 1e-8, "seed {seed}: {e:?} vs {a:?}");
            }
        }
    }
}

#[test]
fn iterative_qp_on_60_variables_is_optimal() {
    for seed in 0..3u64 {
        let (h, c) = random_qp(500 + seed, 60, [80, 20, 384][seed as usize], 1e-10);
        let a: Vec<f64> = simplex_qp(&h, &c).iter().copied().collect();
        assert!(a.iter().all(|&v| v >= 0.0));
        assert!((a.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let gap = qp_fw_gap(&h, &c, &a);
        assert!(gap < 1e-12, "seed {seed}: gap {gap}");
    }
}

/// Near-duplicate columns (Gram of 50 near-copies of 3 vectors, noise 1e-4,
/// ridge 1e-10 or 0): so ill-conditioned that projected gradient cannot
/// certify; the interior-point stage must reach the objective of the
/// enumeration on a subproblem it can solve (n = 12), and a tiny FW gap on
/// the whole problem.
#[test]
fn iterative_qp_on_near_duplicate_columns() {
    let mut r = random::rng(31);
    let d = 16;
    let bases: Vec<Vec<f64>> = (0..3).map(|_| random::gaussian(&mut r, d)).collect();
    let pool = random::near_copies(&mut r, &bases, 50, 1e-4);
    let q = random::unit(&mut r, d);
    let pb = Problem::new(&q, &pool, d);
    for ridge in [1e-10, 0.0] {
        let idx: Vec<usize> = (0..12).collect();
        let qp = pb.qp(&idx, &pb.b, ridge, 1.0);
        let e: Vec<f64> = simplex_qp_enumerate(&qp.h, &qp.c).iter().copied().collect();
        let a: Vec<f64> = simplex_qp(&qp.h, &qp.c).iter().copied().collect();
        let (fe, fa) = (
            qp_objective(&qp.h, &qp.c, &e),
            qp_objective(&qp.h, &qp.c, &a),
        );
        assert!((fe - fa).abs() < 1e-12, "ridge {ridge}: {fa} vs {fe}");
        let all: Vec<usize> = (0..50).collect();
        let qp = pb.qp(&all, &pb.b, ridge, 1.0);
        let a: Vec<f64> = simplex_qp(&qp.h, &qp.c).iter().copied().collect();
        assert!(a.iter().all(|&v| v >= 0.0));
        assert!((a.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let gap = qp_fw_gap(&qp.h, &qp.c, &a);
        assert!(gap < 1e-9, "ridge {ridge}: FW gap {gap:e}");
    }
}

/// The storage a pursuit runs on.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Storage {
    F32,
    /// The certified int8 pursuit on the pool quantized by `Int8Candidates`.
    I8,
}

fn run(sel: &mut Selector, q: &[f32], pool: &[f32], k: usize, o: PursuitOptions) -> Selection {
    sel.select(&Input::new(q, pool), k, &Method::Pursuit(o))
        .expect("valid input")
}

fn run_on(
    storage: Storage,
    sel: &mut Selector,
    q: &[f32],
    pool: &[f32],
    k: usize,
    o: PursuitOptions,
) -> Selection {
    match storage {
        Storage::F32 => run(sel, q, pool, k, o),
        Storage::I8 => {
            let i8pool = Int8Candidates::quantize(pool, q.len()).expect("quantizes");
            let got = sel
                .select_int8_using(
                    &Input::new(q, pool),
                    &i8pool,
                    k,
                    &o,
                    mempursuit::Int8Passes::Int8,
                )
                .expect("valid input");
            // The first pick and fill picks are ρ's argmax (nothing to
            // verify); every other pick verified at least itself.
            for (t, st) in got.steps.iter().enumerate() {
                assert!(
                    st.verified >= 1 || st.filled || t == 0,
                    "every int8 pick after the first is verified"
                );
            }
            // The f32 pursuit's selection, bit for bit (`verified` aside).
            let f32 = run(sel, q, pool, k, o);
            assert_eq!(got.picks, f32.picks, "int8 picks = f32 picks");
            let bits = |w: &[f64]| w.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got.weights), bits(&f32.weights), "int8 weights = f32");
            got
        }
    }
}

/// Compares every step: the budget-t run's final weights are the refit
/// after step t, so the core is run once per budget t = 1..=K.
fn assert_agrees(
    label: &str,
    q: &[f32],
    pool: &[f32],
    k: usize,
    options: PursuitOptions,
    reference: &RefResult,
) {
    for storage in [Storage::F32, Storage::I8] {
        assert_agrees_on(storage, label, q, pool, k, options, reference);
    }
}

fn assert_agrees_on(
    storage: Storage,
    label: &str,
    q: &[f32],
    pool: &[f32],
    k: usize,
    options: PursuitOptions,
    reference: &RefResult,
) {
    let label = &format!("{label} ({storage:?})");
    let mut sel = Selector::new();
    let pb = Problem::new(q, pool, q.len());
    let full = run_on(storage, &mut sel, q, pool, k, options);
    assert_eq!(full.picks, reference.picks, "{label}: picks");
    for (t, rs) in reference.steps.iter().enumerate() {
        let part = run_on(storage, &mut sel, q, pool, t + 1, options);
        assert_eq!(part.picks, full.picks[..=t], "{label}: nested prefix {t}");
        let cs = &part.steps[t];
        let mu = face_curvature(
            &pb,
            &reference.picks[..=t],
            &rs.weights,
            options.ridge,
            options.gamma,
        );
        let wtol = TOL.max(5e-7 / mu);
        for (a, b) in part.weights.iter().zip(&rs.weights) {
            assert!(
                (a - b).abs() <= wtol,
                "{label} step {t}: weights {:?} vs {:?} (mu {mu:e})",
                part.weights,
                rs.weights
            );
        }
        assert!(
            (cs.nu - rs.nu).abs() <= TOL,
            "{label} step {t}: nu {} vs {}",
            cs.nu,
            rs.nu
        );
        assert!(
            (cs.residual_sq - rs.residual_sq).abs() <= TOL,
            "{label} step {t}: L {} vs {}",
            cs.residual_sq,
            rs.residual_sq
        );
        assert!(
            (cs.score - rs.score).abs() <= TOL,
            "{label} step {t}: score"
        );
        assert!(
            (cs.fw_gap - rs.fw_gap).abs() <= TOL,
            "{label} step {t}: gap {} vs {}",
            cs.fw_gap,
            rs.fw_gap
        );
        // The full run's step record equals the partial run's.
        assert_eq!(full.steps[t].index, cs.index);
    }
}

#[test]
fn pursuit_agrees_with_reference_on_random_pools() {
    let shapes = [(5, 8), (12, 16), (30, 16), (40, 64), (25, 3)];
    let mut cases = 0;
    for seed in 0..20u64 {
        let (p, d) = shapes[seed as usize % shapes.len()];
        let (q, pool) = if seed % 2 == 0 {
            random::clustered_pool(seed, p, d, 3, 0.3)
        } else {
            random::uniform_pool(seed, p, d)
        };
        let k = p.min(14);
        let paper = PursuitOptions::default();
        let r = reference_pursuit(&q, &pool, d, k, paper.ridge, 1.0, None);
        assert_agrees(&format!("paper seed {seed}"), &q, &pool, k, paper, &r);

        let fam = PursuitOptions {
            ridge: 0.05,
            gamma: 0.5,
            ..PursuitOptions::default()
        };
        let r = reference_pursuit(&q, &pool, d, k, 0.05, 0.5, None);
        assert_agrees(&format!("family seed {seed}"), &q, &pool, k, fam, &r);

        let cen = PursuitOptions::centroid(0.5);
        let r = reference_pursuit(&q, &pool, d, k, f64::INFINITY, 0.5, None);
        assert_agrees(&format!("centroid seed {seed}"), &q, &pool, k, cen, &r);
        cases += 3;
    }
    assert_eq!(cases, 60);
}

#[test]
fn pursuit_with_caller_relevance_agrees_with_reference() {
    for seed in 0..8u64 {
        let (q, pool) = random::clustered_pool(100 + seed, 20, 12, 3, 0.3);
        let mut r = random::rng(seed);
        let rel32: Vec<f32> = (0..20).map(|_| r.random::<f32>()).collect();
        let rel64: Vec<f64> = rel32.iter().map(|&v| v as f64).collect();
        let gamma = 0.3;
        let o = PursuitOptions {
            ridge: 0.1,
            gamma,
            ..PursuitOptions::default()
        };
        let reference = reference_pursuit(&q, &pool, 12, 10, 0.1, gamma, Some(&rel64));
        let input = Input::new(&q, &pool).with_relevance(Relevance::Scores(&rel32));
        let mut sel = Selector::new();
        let got = sel.select(&input, 10, &Method::Pursuit(o)).unwrap();
        assert_eq!(got.picks, reference.picks, "seed {seed}");
        let last = reference.steps.last().unwrap();
        for (a, b) in got.weights.iter().zip(&last.weights) {
            assert!((a - b).abs() <= TOL);
        }
        let i8pool = Int8Candidates::quantize(&pool, 12).unwrap();
        let got = sel
            .select_int8_using(&input, &i8pool, 10, &o, mempursuit::Int8Passes::Int8)
            .unwrap();
        assert_eq!(got.picks, reference.picks, "int8 seed {seed}");
        for (a, b) in got.weights.iter().zip(&last.weights) {
            assert!((a - b).abs() <= TOL);
        }
    }
}

fn mini() -> Fixture {
    let dir = fixture::find(&fixture::mini_candidates())
        .expect("the mini fixture (cli/data/hotpotqa-mini or shared mini/) is required");
    Fixture::load(&dir).expect("mini fixture loads")
}

#[test]
fn pursuit_agrees_with_reference_on_the_mini_fixture() {
    let fx = mini();
    assert_eq!(fx.queries.len(), 24);
    let d = fx.dim();
    let k = 20;
    for qi in 0..fx.queries.len() {
        let (q, pool) = (fx.query(qi), fx.pool(qi));
        let r = reference_pursuit(q, &pool, d, k, PursuitOptions::PAPER_RIDGE, 1.0, None);
        assert_agrees(
            &format!("mini query {qi}"),
            q,
            &pool,
            k,
            PursuitOptions::default(),
            &r,
        );
        let r = reference_pursuit(q, &pool, d, k, f64::INFINITY, 0.5, None);
        assert_agrees(
            &format!("mini centroid {qi}"),
            q,
            &pool,
            k,
            PursuitOptions::centroid(0.5),
            &r,
        );
    }
}

/// Where two pick orders first differ, with the reference's scores of the
/// two candidates at that step.
struct Difference {
    query: usize,
    step: usize,
    core_pick: usize,
    ref_pick: usize,
    gap: f64,
}

#[test]
#[ignore = "needs the full HotpotQA fixture (../shared/data/hotpotqa-distractor or MEMPURSUIT_HOTPOTQA_DIR)"]
fn pursuit_orders_agree_with_reference_on_the_full_fixture() {
    let fx = fixture::full();
    let n = fx.queries.len();
    assert_eq!(n, 340);
    let d = fx.dim();
    let mut sel = Selector::new();
    let mut diffs: Vec<Difference> = Vec::new();
    let mut same = [0usize; 3];
    let mut same_i8 = [0usize; 3];
    let (mut verified, mut picks, mut verified_max) = (0u64, 0u64, 0u32);
    let ks = [5usize, 10, 20];
    for qi in 0..n {
        let (q, pool) = (fx.query(qi), fx.pool(qi));
        let got = run(&mut sel, q, &pool, 20, PursuitOptions::default());
        // The screened pursuit makes the same picks, bit for bit.
        let screened: Selection = {
            let p = pool.len() / d;
            let mut ws = sel.workspace(p, 20.min(p));
            mempursuit::pursuit_using(
                &Input::new(q, &pool),
                20,
                &PursuitOptions::default(),
                mempursuit::Screening::On,
                &mut ws,
                &mut mempursuit::Serial,
            )
            .unwrap()
            .into()
        };
        mempursuit_tests::checks::same_selection(&screened, &got)
            .unwrap_or_else(|e| panic!("query {qi}, screened: {e}"));
        let got_i8 = run_on(
            Storage::I8,
            &mut sel,
            q,
            &pool,
            20,
            PursuitOptions::default(),
        );
        for st in &got_i8.steps {
            verified += u64::from(st.verified);
            verified_max = verified_max.max(st.verified);
            picks += 1;
        }
        let r = reference_pursuit(q, &pool, d, 20, PursuitOptions::PAPER_RIDGE, 1.0, None);
        for (c, &k) in ks.iter().enumerate() {
            let k = k.min(r.picks.len());
            same[c] += usize::from(got.picks[..k] == r.picks[..k]);
            same_i8[c] += usize::from(got_i8.picks[..k] == r.picks[..k]);
        }
        if let Some(t) = (0..r.picks.len()).find(|&t| got.picks[t] != r.picks[t]) {
            // Reference scores after step t−1 for both candidates.
            let pb = Problem::new(q, &pool, d);
            let (picks, w) = if t == 0 {
                (vec![], vec![])
            } else {
                (r.picks[..t].to_vec(), r.steps[t - 1].weights.clone())
            };
            let u = pb.scores(&pb.b, 1.0, &picks, &w);
            diffs.push(Difference {
                query: qi,
                step: t,
                core_pick: got.picks[t],
                ref_pick: r.picks[t],
                gap: u[r.picks[t]] - u[got.picks[t]],
            });
        }
    }
    println!(
        "full fixture: identical orders at K=5: {}/{n}, K=10: {}/{n}, K=20: {}/{n}",
        same[0], same[1], same[2]
    );
    println!(
        "full fixture, int8: identical orders at K=5: {}/{n}, K=10: {}/{n}, K=20: {}/{n}; \
         verified candidates per pick: mean {:.2}, max {verified_max}",
        same_i8[0],
        same_i8[1],
        same_i8[2],
        verified as f64 / picks as f64
    );
    // The int8 picks are certified to equal the exact (f64) pursuit's, and
    // the f32 path agrees on this fixture: both must match everywhere.
    assert_eq!(same_i8, [n; 3], "int8 orders");
    assert_eq!(same, [n; 3], "f32 orders");
    for df in &diffs {
        println!(
            "  query {} first differs at step {} (0-based): core {} vs reference {}, reference score gap {:.3e}",
            df.query, df.step, df.core_pick, df.ref_pick, df.gap
        );
        // A difference is only acceptable at a numerical near-tie.
        assert!(
            df.gap.abs() < 1e-5,
            "query {}: a real disagreement",
            df.query
        );
    }
    assert!(
        same[2] as f64 >= 0.995 * n as f64,
        "K=20 orders agree on {}/{n} queries only",
        same[2]
    );
}
