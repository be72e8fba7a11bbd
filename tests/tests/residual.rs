//! The residual L_t = ‖q − q̂_t‖² after each refit (paper Eq. 7) never grows
//! from the first pick on, up to the ridge. The refit (Eq. 6) minimizes
//! J_t = L_t + λ‖α_t‖² over the simplex of S_t, which contains the previous
//! weights extended by 0 for the new pick, so J_t ≤ J_{t−1} and
//! L_t ≤ L_{t−1} + λ(‖α_{t−1}‖² − ‖α_t‖²) ≤ L_{t−1} + λ. The core's refit is
//! a descent method warm-started from those previous weights, so this holds
//! for its weights too, to f64 round-off (the core computes both J's from
//! the same f32 similarities).
//!
//! Step 1 is the exception: S_0 = ∅ has no simplex (q̂_0 = 0, L_0 = 1), and
//! L_1 = ‖q − m_1‖² = 2 − 2·cos(q, m_1) exceeds 1 whenever the best cosine is
//! below 0.5. This is what the library example of docs/RUST.md asserts, and
//! why it does not assert L_t ≤ 1.

use mempursuit::{Input, Method, PursuitOptions, Selection, Selector};
use mempursuit_tests::fixture::{find, mini_candidates, Fixture};
use mempursuit_tests::random;

/// Round-off allowance for J_t ≤ J_{t−1}: both sides are sums of O(K²)
/// f64 products of values ≤ 1 from the same data.
const TOL: f64 = 1e-12;

fn pursuit(sel: &mut Selector, q: &[f32], pool: &[f32], k: usize, ridge: f64) -> Selection {
    let o = PursuitOptions {
        ridge,
        ..PursuitOptions::default()
    };
    sel.select(&Input::new(q, pool), k, &Method::Pursuit(o))
        .expect("valid input")
}

/// J_t = L_t + λ‖α_t‖² for t = 1..=K, from budget-t runs (the pursuit is
/// nested, so a budget-t run's weights are the refit after step t).
fn objectives(sel: &mut Selector, q: &[f32], pool: &[f32], k: usize, ridge: f64) -> Vec<f64> {
    (1..=k)
        .map(|t| {
            let s = pursuit(sel, q, pool, t, ridge);
            let a2: f64 = s.weights.iter().map(|w| w * w).sum();
            s.steps[t - 1].residual_sq + ridge * a2
        })
        .collect()
}

/// L_t ≤ L_{t−1} + λ + TOL for every t ≥ 2 of one run, except at most once
/// by up to `switch`: the step at which the core switches G_SS from the f32
/// entries to exact f64 ones (a pick near a dependency; once per call), where
/// J moves by up to the entries' error. Returns the largest increase
/// L_t − L_{t−1} seen (negative if L_t strictly decreased).
fn assert_residual_non_increasing(label: &str, s: &Selection, ridge: f64, switch: f64) -> f64 {
    let mut worst = f64::NEG_INFINITY;
    let mut switched = false;
    for (t, pair) in s.steps.windows(2).enumerate() {
        let (prev, cur) = (pair[0].residual_sq, pair[1].residual_sq);
        let within = cur <= prev + ridge + TOL;
        let at_switch = !switched && cur <= prev + ridge + switch;
        assert!(
            within || at_switch,
            "{label}: L_{} = {cur:e} > L_{} = {prev:e} + λ",
            t + 2,
            t + 1
        );
        switched |= !within;
        worst = worst.max(cur - prev);
    }
    worst
}

fn mini() -> Fixture {
    let dir = find(&mini_candidates()).expect("the mini fixture is committed in cli/data");
    Fixture::load(&dir).expect("mini fixture loads")
}

/// Paper mode (λ = 1e-10) on random, clustered and near-duplicate pools:
/// L_t never grows after the first pick.
#[test]
fn residual_non_increasing_paper_mode_random_pools() {
    let mut sel = Selector::new();
    let ridge = PursuitOptions::PAPER_RIDGE;
    for seed in 0..40u64 {
        let (p, d) = [(12, 3), (30, 16), (60, 64), (100, 384)][seed as usize % 4];
        let (q, pool) = match seed % 3 {
            0 => random::uniform_pool(seed, p, d),
            1 => random::clustered_pool(seed, p, d, 4, 0.3),
            _ => {
                let mut rng = random::rng(seed);
                let bases: Vec<Vec<f64>> = (0..3).map(|_| random::gaussian(&mut rng, d)).collect();
                let pool = random::near_copies(&mut rng, &bases, p, 1e-4);
                (random::unit(&mut rng, d), pool)
            }
        };
        let s = pursuit(&mut sel, &q, &pool, p.min(40), ridge);
        // Near copies (distance 1e-4) and pools with d < K bring picks near
        // a dependency, where the core switches G_SS from the f32 entries to
        // exact f64 ones: J then moves once by up to the entries' error,
        // (2 + Σα)·Σα·η ≤ 3η with η ≈ (d/8 + 14)·2⁻²⁴
        // (`pursuit::f32_entry_error`).
        let switch = 3.0 * (d as f64 / 8.0 + 16.0) * f32::EPSILON as f64 / 2.0;
        assert_residual_non_increasing(&format!("seed {seed}"), &s, ridge, switch);
    }
}

/// Every query of the committed mini fixture (d = 384, pools of 40–75
/// sentences), K = 30, paper mode. Also pins the counterexample to the
/// old README assertion L_t ≤ 1: the first residual exceeds 1 on exactly
/// 3 of the 24 queries (best cosine below 0.5), and equals 2 − 2·cos there.
#[test]
fn residual_non_increasing_on_the_mini_fixture() {
    let fx = mini();
    let mut sel = Selector::new();
    let ridge = PursuitOptions::PAPER_RIDGE;
    let mut first_above_one = 0;
    for qi in 0..fx.queries.len() {
        let pool = fx.pool(qi);
        let s = pursuit(&mut sel, fx.query(qi), &pool, 30, ridge);
        assert_residual_non_increasing(&format!("mini {qi}"), &s, ridge, TOL);
        let first = s.steps[0];
        // Step 1's score is the pick's cosine b (U = b before any refit).
        let expected = 2.0 - 2.0 * first.score;
        assert!(
            (first.residual_sq - expected).abs() <= 1e-6,
            "mini {qi}: L_1 = {} but 2 − 2·cos = {expected}",
            first.residual_sq
        );
        if first.residual_sq > 1.0 {
            first_above_one += 1;
        }
    }
    assert_eq!(first_above_one, 3, "queries with L_1 > 1");
}

/// With a larger ridge the monotone quantity is the objective
/// J_t = L_t + λ‖α_t‖², not L_t alone: checked for λ ∈ {1e-3, 0.1, 1}.
#[test]
fn objective_non_increasing_with_a_ridge() {
    let mut sel = Selector::new();
    for seed in 0..12u64 {
        let (p, d) = [(15, 4), (25, 16), (20, 64)][seed as usize % 3];
        let (q, pool) = if seed % 2 == 0 {
            random::uniform_pool(100 + seed, p, d)
        } else {
            random::clustered_pool(100 + seed, p, d, 3, 0.3)
        };
        for ridge in [1e-3, 0.1, 1.0] {
            let j = objectives(&mut sel, &q, &pool, p.min(12), ridge);
            for t in 1..j.len() {
                assert!(
                    j[t] <= j[t - 1] + TOL,
                    "seed {seed} λ = {ridge}: J_{} = {:e} > J_{} = {:e}",
                    t + 1,
                    j[t],
                    t,
                    j[t - 1]
                );
            }
        }
    }
}
