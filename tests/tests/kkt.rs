//! The KKT conditions of the refit (Lemma B.1, Eq. 15) after every refit,
//! the Frank–Wolfe certificate (Theorem B.2, Eq. 25), and robustness on
//! near-duplicate and degenerate pools.
//!
//! Every refit is checked through budget-t runs: the pursuit is
//! deterministic and nested, so the final weights of a budget-t run are the
//! refit after step t.
//!
//! # Tolerances
//!
//! U_i = ρ_i − γ Σ_j G_ij α_j is recomputed here in f64 from the f32 inputs,
//! while the core solved the QP on Gram rows computed in f32. A dot product
//! of two unit f32 vectors of length d, accumulated in 8 lanes and summed
//! pairwise, is off by at most about (d/8 + 4)·2⁻²⁴ (Higham, §3.1), and U
//! combines one ρ and a convex combination of Gram entries, so the two
//! scores differ by at most ε_U = 2·(d/8 + 4)·2⁻²⁴ (6.2e-6 at d = 384,
//! 7.2e-7 at d = 16; see `score_tol`). The KKT equalities and inequalities
//! are asserted to 4·ε_U + 1e-9 (the f64 solver's own error is ~1e-12).
//! A memory that the core blocked under the pivot rule
//! ([`PIVOT_TOLERANCE`]: its augmented vector is within √(2·1e-9) ≈ 4.5e-5
//! of the span of the free set's) may keep α = 0 with U_j − ν up to that
//! distance times ‖r‖; only the degenerate-pool tests, where such columns
//! exist, allow this extra √(2·PIVOT_TOLERANCE)·(1 + ‖r‖) slack.

use mempursuit::{Input, Method, PursuitOptions, Selection, Selector, PIVOT_TOLERANCE};
use mempursuit_tests::fixture::{self, Fixture};
use mempursuit_tests::random;
use mempursuit_tests::reference::{qp_objective, simplex_qp, Problem};

/// ε_U = 2·(d/8 + 4)·2⁻²⁴: the largest expected difference between a score
/// computed by the core (f32 Gram rows) and in f64 (see the module docs).
fn score_tol(dim: usize) -> f64 {
    2.0 * (dim as f64 / 8.0 + 4.0) / 16_777_216.0
}

/// The family's parameters of one run.
#[derive(Clone, Copy, Debug)]
struct Params {
    ridge: f64,
    gamma: f64,
}

impl Params {
    fn options(self) -> PursuitOptions {
        PursuitOptions {
            ridge: self.ridge,
            gamma: self.gamma,
            ..PursuitOptions::default()
        }
    }
}

fn run(sel: &mut Selector, q: &[f32], pool: &[f32], k: usize, p: Params) -> Selection {
    sel.select(&Input::new(q, pool), k, &Method::Pursuit(p.options()))
        .expect("valid input")
}

/// Checks Lemma B.1 and Theorem B.2 for one refit (`s` = a budget-t run).
/// `extra` is additional slack for α_j = 0 inequalities (pivot rule).
/// Returns the suboptimality J(S) − F*.
fn check_refit(
    label: &str,
    pb: &Problem,
    s: &Selection,
    p: Params,
    f_star: f64,
    extra: f64,
) -> f64 {
    let tol = 4.0 * score_tol(pb.dim) + 1e-9;
    let (gamma, kappa) = (p.gamma, p.ridge);
    let alpha = &s.weights;
    assert_eq!(alpha.len(), s.picks.len(), "{label}");
    assert!(alpha.iter().all(|&a| a >= 0.0), "{label}: α ≥ 0: {alpha:?}");
    let sum: f64 = alpha.iter().sum();
    assert!((sum - 1.0).abs() <= 1e-12, "{label}: Σα = {sum}");
    let u = pb.scores(&pb.b, gamma, &s.picks, alpha);
    let nu: f64 = s
        .picks
        .iter()
        .zip(alpha)
        .map(|(&j, &a)| a * u[j])
        .sum::<f64>()
        - gamma * kappa * alpha.iter().map(|a| a * a).sum::<f64>();
    let last = s.steps.last().unwrap();
    assert!(
        (last.nu - nu).abs() <= tol,
        "{label}: ν {} vs {nu}",
        last.nu
    );
    let r_norm = pb.residual_sq(&s.picks, alpha).sqrt();
    for (&j, &a) in s.picks.iter().zip(alpha) {
        if a > 0.0 {
            let v = u[j] - gamma * kappa * a - nu;
            assert!(v.abs() <= tol, "{label}: free {j}: U − γκα − ν = {v:e}");
        } else {
            let v = u[j] - nu;
            assert!(
                v <= tol + extra * (1.0 + r_norm),
                "{label}: zero-weight {j}: U − ν = {v:e}"
            );
        }
    }
    // Certificate: g_S ≥ 0, equal to its f64 value, and bounding J(S) − F*.
    let g = last.fw_gap;
    assert!(g >= 0.0, "{label}: g_S = {g}");
    let g64 = (0..pb.len())
        .filter(|i| !s.picks.contains(i))
        .map(|i| u[i] - nu)
        .fold(0.0f64, f64::max);
    assert!((g - g64).abs() <= tol, "{label}: g_S {g} vs f64 {g64}");
    let all: Vec<usize> = (0..pb.len()).collect();
    let qp = pb.qp(&all, &pb.b, kappa, gamma);
    let mut full = vec![0.0; pb.len()];
    for (&j, &a) in s.picks.iter().zip(alpha) {
        full[j] = a;
    }
    let j_s = qp_objective(&qp.h, &qp.c, &full);
    let sub = j_s - f_star;
    assert!(sub >= -tol, "{label}: J(S) − F* = {sub:e} < 0");
    assert!(sub <= g + tol, "{label}: J(S) − F* = {sub:e} > g_S = {g:e}");
    sub
}

/// F* = min over the whole pool's simplex (the reference's [`simplex_qp`]).
fn pool_optimum(pb: &Problem, p: Params) -> f64 {
    let all: Vec<usize> = (0..pb.len()).collect();
    let qp = pb.qp(&all, &pb.b, p.ridge, p.gamma);
    let a: Vec<f64> = simplex_qp(&qp.h, &qp.c).iter().copied().collect();
    qp_objective(&qp.h, &qp.c, &a)
}

fn check_all_refits(label: &str, q: &[f32], pool: &[f32], k: usize, p: Params, extra: f64) {
    let pb = Problem::new(q, pool, q.len());
    let f_star = pool_optimum(&pb, p);
    let mut sel = Selector::new();
    for t in 1..=k.min(pb.len()) {
        let s = run(&mut sel, q, pool, t, p);
        check_refit(&format!("{label} t={t}"), &pb, &s, p, f_star, extra);
    }
}

const PARAMS: [Params; 3] = [
    Params {
        ridge: 1e-10,
        gamma: 1.0,
    },
    Params {
        ridge: 0.05,
        gamma: 0.5,
    },
    Params {
        ridge: 0.0,
        gamma: 1.0,
    },
];

#[test]
fn kkt_and_certificate_on_random_pools() {
    for seed in 0..12u64 {
        let (p, d) = [(8, 4), (20, 16), (40, 32), (30, 128)][seed as usize % 4];
        let (q, pool) = if seed % 3 == 0 {
            random::uniform_pool(seed, p, d)
        } else {
            random::clustered_pool(seed, p, d, 3, 0.3)
        };
        for prm in PARAMS {
            check_all_refits(&format!("seed {seed} {prm:?}"), &q, &pool, 15, prm, 0.0);
        }
    }
}

#[test]
fn kkt_and_certificate_on_the_mini_fixture() {
    let dir = fixture::find(&fixture::mini_candidates()).expect("mini fixture");
    let fx = Fixture::load(&dir).unwrap();
    for qi in 0..fx.queries.len() {
        let prm = PARAMS[qi % 2];
        check_all_refits(
            &format!("mini {qi} {prm:?}"),
            fx.query(qi),
            &fx.pool(qi),
            20,
            prm,
            0.0,
        );
    }
}

/// The pool optimum is reached (g_S = 0) on small pools in low dimension,
/// where the query lies in the cone of a few candidates, and J(S) = F* then.
#[test]
fn certificate_reaches_zero_and_certifies_the_optimum() {
    let mut zero = 0;
    for seed in 0..10u64 {
        let (q, pool) = random::clustered_pool(700 + seed, 12, 3, 3, 0.2);
        let prm = PARAMS[0];
        let pb = Problem::new(&q, &pool, 3);
        let f_star = pool_optimum(&pb, prm);
        let s = run(&mut Selector::new(), &q, &pool, 12, prm);
        if let Some(t) = s.steps.iter().position(|st| st.fw_gap == 0.0) {
            zero += 1;
            let part = run(&mut Selector::new(), &q, &pool, t + 1, prm);
            let sub = check_refit(&format!("seed {seed}"), &pb, &part, prm, f_star, 0.0);
            assert!(sub.abs() <= 1e-6, "seed {seed}: J(S) − F* = {sub:e}");
        }
    }
    assert!(zero >= 5, "the optimum was certified in {zero} pools only");
}

/// Checks that nothing is NaN, the weights are on the simplex, every step
/// record is finite and the refit stayed below its iteration cap 4t + 16.
fn check_sane(label: &str, s: &Selection, k: usize) {
    assert_eq!(s.picks.len(), k, "{label}");
    let mut sorted = s.picks.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), k, "{label}: picks repeat");
    assert!(
        s.weights.iter().all(|&w| w.is_finite() && w >= 0.0),
        "{label}: {:?}",
        s.weights
    );
    let sum: f64 = s.weights.iter().sum();
    assert!((sum - 1.0).abs() <= 1e-12, "{label}: Σα = {sum}");
    for (t, st) in s.steps.iter().enumerate() {
        for v in [st.score, st.residual_sq, st.improvement, st.fw_gap, st.nu] {
            assert!(v.is_finite(), "{label} step {t}: {st:?}");
        }
        assert!(st.residual_sq >= 0.0);
        assert!(st.free_size >= 1 && st.free_size <= t + 1);
        let cap = 4 * (t as u32 + 1) + 16;
        assert!(st.solver_iterations < cap, "{label} step {t}: {st:?}");
    }
}

/// Every refit of a degenerate pool: sane, and KKT with the pivot rule's
/// slack. The objective on the selected set is then above the reference's
/// minimum there by at most the Frank–Wolfe gap of the QP on S, which the
/// KKT inequalities bound by 4·ε_U + √(2·PIVOT_TOLERANCE)·(1 + ‖r‖).
fn check_degenerate(label: &str, q: &[f32], pool: &[f32]) {
    let d = q.len();
    let p = pool.len() / d;
    let pb = Problem::new(q, pool, d);
    let slack = (2.0 * PIVOT_TOLERANCE).sqrt();
    let mut sel = Selector::new();
    for prm in PARAMS {
        let f_star = pool_optimum(&pb, prm);
        for t in 1..=p.min(12) {
            let s = run(&mut sel, q, pool, t, prm);
            let l = format!("{label} {prm:?} t={t}");
            check_sane(&l, &s, t);
            check_refit(&l, &pb, &s, prm, f_star, slack);
            let qp = pb.qp(&s.picks, &pb.b, prm.ridge, prm.gamma);
            let best: Vec<f64> = simplex_qp(&qp.h, &qp.c).iter().copied().collect();
            let gap = qp_objective(&qp.h, &qp.c, &s.weights) - qp_objective(&qp.h, &qp.c, &best);
            let r_norm = pb.residual_sq(&s.picks, &s.weights).sqrt();
            let bound = 4.0 * score_tol(d) + slack * (1.0 + r_norm);
            assert!(
                gap <= bound,
                "{l}: objective above the optimum on S by {gap:e} > {bound:e}"
            );
            assert!(gap >= -1e-12, "{l}: the reference is not optimal ({gap:e})");
        }
        let s = run(&mut sel, q, pool, p, prm);
        check_sane(&format!("{label} {prm:?} K=P"), &s, p);
    }
    // Centroid pursuit: closed form, always sane.
    let s = sel
        .select(
            &Input::new(q, pool),
            p,
            &Method::Pursuit(PursuitOptions::centroid(0.5)),
        )
        .unwrap();
    check_sane(&format!("{label} centroid"), &s, p);
}

#[test]
fn exact_duplicates() {
    let (q, base) = random::clustered_pool(11, 4, 8, 2, 0.3);
    // Rows: b0 b0 b1 b1 b2 b3 b3 b3.
    let idx = [0usize, 0, 1, 1, 2, 3, 3, 3];
    let pool: Vec<f32> = idx
        .iter()
        .flat_map(|&i| base[i * 8..(i + 1) * 8].to_vec())
        .collect();
    check_degenerate("duplicates", &q, &pool);
    // The second copy never takes weight away from the first: it is blocked
    // (or the pursuit never needs it).
    let s = run(&mut Selector::new(), &q, &pool, 8, PARAMS[0]);
    for (a, &i) in s.picks.iter().enumerate() {
        if i % 2 == 1 && i < 4 {
            let first = s.picks.iter().position(|&j| j == i - 1).unwrap();
            assert!(first < a, "the lower index of a duplicate pair comes first");
        }
    }
}

#[test]
fn vector_and_its_negation() {
    let mut r = random::rng(12);
    let m = random::unit(&mut r, 6);
    let n: Vec<f32> = m.iter().map(|x| -x).collect();
    let o = random::unit(&mut r, 6);
    let q = random::unit(&mut r, 6);
    let pool = [m.clone(), n.clone(), o.clone(), m, n].concat();
    check_degenerate("m and -m", &q, &pool);
}

#[test]
fn three_nearly_collinear_unit_vectors() {
    for (k, eps) in [1e-2f64, 1e-4, 1e-6].into_iter().enumerate() {
        // Three close points on a great circle (affinely near-dependent) and
        // two others; the query points between them.
        let dirs = [0.0, eps, 2.0 * eps];
        let mut pool: Vec<f32> = dirs
            .iter()
            .flat_map(|&t| random::normalized(&[t.cos(), t.sin(), 0.0, 0.0]))
            .collect();
        pool.extend(random::normalized(&[0.0, 0.0, 1.0, 0.0]));
        pool.extend(random::normalized(&[0.3, 0.0, 0.0, 1.0]));
        let q = random::normalized(&[1.0, eps, 0.5, 0.2]);
        check_degenerate(&format!("collinear {k}"), &q, &pool);
    }
}

#[test]
fn fifty_near_copies_of_three_vectors() {
    for (k, noise) in [1e-6f64, 1e-4, 1e-2].into_iter().enumerate() {
        let d = 16;
        let mut r = random::rng(13 + k as u64);
        let bases: Vec<Vec<f64>> = (0..3).map(|_| random::gaussian(&mut r, d)).collect();
        let pool = random::near_copies(&mut r, &bases, 50, noise);
        let q: Vec<f64> = (0..d)
            .map(|j| bases.iter().map(|b| b[j]).sum::<f64>() + 0.3)
            .collect();
        check_degenerate(
            &format!("near copies {noise:e}"),
            &random::normalized(&q),
            &pool,
        );
    }
}

#[test]
fn identical_candidates() {
    let mut r = random::rng(14);
    let m = random::unit(&mut r, 10);
    let q = random::unit(&mut r, 10);
    let pool = m.repeat(9);
    check_degenerate("identical", &q, &pool);
    let s = run(&mut Selector::new(), &q, &pool, 9, PARAMS[0]);
    assert_eq!(s.picks, (0..9).collect::<Vec<_>>());
    assert_eq!(s.weights[0], 1.0);
    assert!(s.weights[1..].iter().all(|&w| w == 0.0));
}
