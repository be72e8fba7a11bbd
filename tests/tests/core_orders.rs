//! Exact pick orders on hand-made inputs (expectations computed by hand in
//! the comments), ties, nestedness, adaptive stopping and the behaviour at
//! the pool optimum.

use mempursuit::{
    mmr, pursuit, top_k, AtPoolOptimum, FixedWorkspace, Input, InputPolicy, Method, MmrOptions,
    PursuitOptions, Selection, Selector, StopReason, Stopping,
};
use mempursuit_tests::fixture::{self, Fixture};
use mempursuit_tests::random;
use mempursuit_tests::reference::{reference_mmr, reference_pursuit, reference_top_k};

fn unit(v: &[f64]) -> Vec<f32> {
    random::normalized(v)
}

fn select(q: &[f32], pool: &[f32], k: usize, method: Method) -> Selection {
    Selector::new()
        .select(&Input::new(q, pool), k, &method)
        .expect("valid input")
}

fn paper() -> Method {
    Method::Pursuit(PursuitOptions::default())
}

fn mmr_method(lambda: f64) -> Method {
    Method::Mmr(MmrOptions {
        lambda,
        input: InputPolicy::default(),
    })
}

fn topk() -> Method {
    Method::TopK(InputPolicy::default())
}

/// d = 3. A = e1, A′ = (e1 + 0.1 e3)/‖·‖ (a paraphrase of A), B = e2,
/// q = (1.2 e1 + e2)/√2.44 = (0.76822, 0.64018, 0).
///
/// * b = (0.76822, 0.76440, 0.64018): top-K(2) = [A, A′].
/// * Pursuit: A first; with α = (1), U_i = b_i − G_iA:
///   U_A′ = 0.76440 − 1/√1.01 = −0.23063, U_B = 0.64018 − 0 = 0.64018 → B.
///   Refit on {A, B}: α_A = (b_A − b_B + 1)/2 = 0.56402 (equal U on the free
///   set: b_A − α_A = b_B − (1 − α_A)), L = 2·(0.76822 − 0.56402)² = 0.08340.
/// * MMR(0.5): A, then A′: 0.5·0.76440 − 0.5·0.99504 = −0.11532,
///   B: 0.5·0.64018 − 0 = 0.32009 → B. MMR(1) = top-K.
#[test]
fn paraphrases_of_a_and_one_b() {
    let a = unit(&[1.0, 0.0, 0.0]);
    let a2 = unit(&[1.0, 0.0, 0.1]);
    let b = unit(&[0.0, 1.0, 0.0]);
    let q = unit(&[1.2, 1.0, 0.0]);
    let pool: Vec<f32> = [a, a2, b].concat();

    assert_eq!(select(&q, &pool, 2, topk()).picks, vec![0, 1]);
    let s = select(&q, &pool, 2, paper());
    assert_eq!(s.picks, vec![0, 2]);
    assert!((s.weights[0] - 0.564_018).abs() < 1e-5, "{:?}", s.weights);
    assert!((s.weights[1] - 0.435_982).abs() < 1e-5);
    assert!((s.steps[1].score - 0.640_184).abs() < 1e-5);
    assert!((s.steps[1].residual_sq - 0.083_40).abs() < 1e-4);
    // L_1 = ‖q − A‖² = 2 − 2·0.76822 = 0.46356.
    assert!((s.steps[0].residual_sq - 0.463_56).abs() < 1e-4);
    assert_eq!(select(&q, &pool, 2, mmr_method(0.5)).picks, vec![0, 2]);
    assert_eq!(select(&q, &pool, 3, mmr_method(1.0)).picks, vec![0, 1, 2]);
    assert_eq!(select(&q, &pool, 3, topk()).picks, vec![0, 1, 2]);
    // Centroid pursuit, γ = 0.5: U_i = b_i − 0.5 G_iA: A′: 0.76440 − 0.49752
    // = 0.26688, B: 0.64018 → B.
    let c = select(&q, &pool, 2, Method::Pursuit(PursuitOptions::centroid(0.5)));
    assert_eq!(c.picks, vec![0, 2]);
    assert_eq!(c.weights, vec![0.5, 0.5]);
}

/// The pool in a shuffled order gives the same memories (the order is by
/// content, not by position, when there are no ties).
#[test]
fn paraphrase_example_is_position_independent() {
    let a = unit(&[1.0, 0.0, 0.0]);
    let a2 = unit(&[1.0, 0.0, 0.1]);
    let b = unit(&[0.0, 1.0, 0.0]);
    let q = unit(&[1.2, 1.0, 0.0]);
    // Rows: B, A′, A.
    let pool: Vec<f32> = [b, a2, a].concat();
    assert_eq!(select(&q, &pool, 2, topk()).picks, vec![2, 1]);
    assert_eq!(select(&q, &pool, 3, paper()).picks, vec![2, 0, 1]);
}

/// d = 2, q = (2, 1)/√5 = (0.89443, 0.44721). A = 0.995 e1 + 0.0998 e2 (a
/// near-copy of e1 that leans to the query), then e1 and e2.
///
/// * b = (0.93460, 0.89443, 0.44721) (A normalized: (0.99500, 0.09980)/
///   0.99999): top-K = [A, e1, e2].
/// * Pursuit: A; U_e1 = 0.89443 − 0.99500 = −0.10057,
///   U_e2 = 0.44721 − 0.09980 = 0.34741 → e2. Third: e1.
/// * MMR(0.5) second pick: e1: 0.5·0.89443 − 0.5·0.99500 = −0.05029;
///   e2: 0.5·0.44721 − 0.5·0.09980 = 0.17371 → e2.
/// * MMR(0.9) second pick: e1: 0.80499 − 0.09950 = 0.70549;
///   e2: 0.40249 − 0.00998 = 0.39251 → e1 (relevance wins).
#[test]
fn second_pick_depends_on_the_method() {
    let a = unit(&[0.995, 0.0998]);
    let q = unit(&[2.0, 1.0]);
    let pool: Vec<f32> = [a, vec![1.0, 0.0], vec![0.0, 1.0]].concat();
    assert_eq!(select(&q, &pool, 3, topk()).picks, vec![0, 1, 2]);
    assert_eq!(select(&q, &pool, 3, paper()).picks, vec![0, 2, 1]);
    assert_eq!(select(&q, &pool, 3, mmr_method(0.5)).picks, vec![0, 2, 1]);
    assert_eq!(select(&q, &pool, 3, mmr_method(0.9)).picks, vec![0, 1, 2]);
    let s = select(&q, &pool, 2, paper());
    assert!(
        (s.steps[1].score - 0.347_41).abs() < 1e-4,
        "{}",
        s.steps[1].score
    );
}

/// Ties go to the lowest index, for every selector.
///
/// q = e1; row 0 = e1; rows 1 and 2 are (c, s) and (c, −s) with c = 0.6,
/// s = 0.8: b = (1, 0.6, 0.6) exactly in f32, G_{0,1} = G_{0,2} = 0.6, so
/// after picking row 0 the two scores are bit-identical (top-K: 0.6, 0.6;
/// pursuit: 0.6 − 0.6 = 0; MMR: 0.5·0.6 − 0.5·0.6 = 0) and row 1 must come
/// before row 2 whichever of the two mirror images it is.
#[test]
fn ties_go_to_the_lowest_index() {
    let q = [1.0f32, 0.0];
    for pool in [
        [1.0f32, 0.0, 0.6, 0.8, 0.6, -0.8],
        [1.0f32, 0.0, 0.6, -0.8, 0.6, 0.8],
    ] {
        for m in [
            topk(),
            paper(),
            mmr_method(0.5),
            Method::Pursuit(PursuitOptions::centroid(0.5)),
        ] {
            assert_eq!(select(&q, &pool, 3, m).picks, vec![0, 1, 2], "{m:?}");
        }
    }
    // All rows identical: index order.
    let pool: Vec<f32> = [0.6f32, 0.8].repeat(5);
    for m in [topk(), paper(), mmr_method(0.3)] {
        assert_eq!(select(&q, &pool, 5, m).picks, vec![0, 1, 2, 3, 4]);
    }
}

/// The three baselines and the pursuit equal the f64 reference on random
/// pools (no near-ties at these sizes: the reference's gap between the
/// winner and the runner-up is checked to exceed 1e-5 where it matters by
/// the reference-agreement tests; here the orders must simply match).
#[test]
fn baselines_match_reference_on_random_pools() {
    for seed in 0..20u64 {
        let (p, d) = [(10, 4), (30, 16), (60, 32)][seed as usize % 3];
        let (q, pool) = random::clustered_pool(300 + seed, p, d, 4, 0.4);
        let k = p.min(15);
        assert_eq!(
            select(&q, &pool, k, topk()).picks,
            reference_top_k(&q, &pool, d, k),
            "seed {seed}"
        );
        for lambda in [0.0, 0.3, 0.5, 0.7, 1.0] {
            assert_eq!(
                select(&q, &pool, k, mmr_method(lambda)).picks,
                reference_mmr(&q, &pool, d, k, lambda),
                "seed {seed} lambda {lambda}"
            );
        }
    }
}

fn methods() -> Vec<(&'static str, Method)> {
    vec![
        ("pursuit", paper()),
        ("centroid", Method::Pursuit(PursuitOptions::centroid(0.5))),
        (
            "family",
            Method::Pursuit(PursuitOptions {
                ridge: 0.05,
                gamma: 0.3,
                ..PursuitOptions::default()
            }),
        ),
        ("top-k", topk()),
        ("mmr", mmr_method(0.5)),
    ]
}

fn assert_nested(label: &str, q: &[f32], pool: &[f32], kmax: usize) {
    let mut sel = Selector::new();
    for (name, m) in methods() {
        let full = sel.select(&Input::new(q, pool), kmax, &m).unwrap();
        assert_eq!(full.picks.len(), kmax.min(pool.len() / q.len()));
        for k in 0..kmax {
            let part = sel.select(&Input::new(q, pool), k, &m).unwrap();
            assert_eq!(part.picks, full.picks[..k], "{label} {name} K={k}");
            assert_eq!(part.steps[..], full.steps[..k], "{label} {name} K={k}");
        }
    }
}

#[test]
fn budgets_are_nested_on_random_pools() {
    for seed in 0..10u64 {
        let (q, pool) = random::clustered_pool(400 + seed, 25, 12, 3, 0.3);
        assert_nested(&format!("seed {seed}"), &q, &pool, 25);
    }
}

#[test]
fn budgets_are_nested_on_the_mini_fixture() {
    let dir = fixture::find(&fixture::mini_candidates()).expect("mini fixture");
    let fx = Fixture::load(&dir).unwrap();
    for qi in (0..fx.queries.len()).step_by(3) {
        assert_nested(&format!("mini {qi}"), fx.query(qi), &fx.pool(qi), 20);
    }
}

/// d = 4, q = (2, 1, 0, 0)/√5. Rows: 0 = a ∝ (−1, 0.5, 1, 0),
/// 1 = e2, 2 = c ∝ (0.2, −1, 1, 0), 3 = e1, 4 = e ∝ (−1, −1, 0, 1).
///
/// * Step 1: b = (−0.4472, 0.4472, −0.1879, 0.8944, −0.7746) → e1 (row 3);
///   L_1 = ‖q − e1‖² = 2 − 2·0.89443 = 0.21115.
/// * Step 2: U = b − G_{·,e1}: e2: 0.4472, a: −0.4472 + 0.6667 = 0.2194,
///   c: −0.1879 − 0.1400 = −0.3279, e: −0.7746 + 0.5774 = −0.1972 → e2
///   (row 1). Refit: α_e1 = (b_e1 − b_e2 + 1)/2 = 0.72361; r = q − q̂ =
///   0.17082·(1, 1, 0, 0); L_2 = 2·0.17082² = 0.05836; ν = U_e1 = 0.17082.
/// * Now U_i = m_i · r: a: 0.17082·(−0.5)/1.5 = −0.05694,
///   c: 0.17082·(−0.8)/1.42829 = −0.09568, e: 0.17082·(−2)/√3 = −0.19724,
///   all < ν, so g_S = 0: the pool optimum. Later picks keep α = 0 and
///   L_3 = L_4 = L_2 (Δ = 0).
/// * Continue: a (row 0), c (row 2), e (row 4).
/// * Fill by relevance ρ = b: c (−0.1879), a (−0.4472), e (−0.7746).
fn optimum_pool() -> (Vec<f32>, Vec<f32>) {
    let q = unit(&[2.0, 1.0, 0.0, 0.0]);
    let pool = [
        unit(&[-1.0, 0.5, 1.0, 0.0]),
        vec![0.0, 1.0, 0.0, 0.0],
        unit(&[0.2, -1.0, 1.0, 0.0]),
        vec![1.0, 0.0, 0.0, 0.0],
        unit(&[-1.0, -1.0, 0.0, 1.0]),
    ]
    .concat();
    (q, pool)
}

#[test]
fn pool_optimum_continue_stop_and_fill() {
    let (q, pool) = optimum_pool();
    let input = Input::new(&q, &pool);
    let mut storage = FixedWorkspace::<8, 8>::new();
    let mut ws = storage.view();

    let s = pursuit(&input, 5, &PursuitOptions::default(), &mut ws).unwrap();
    assert_eq!(s.picks(), &[3, 1, 0, 2, 4]);
    assert_eq!(s.stop_reason(), StopReason::Budget);
    let st = s.steps();
    assert!((st[0].residual_sq - 0.211_146).abs() < 1e-5);
    assert!((st[1].residual_sq - 0.058_359).abs() < 1e-5);
    assert!((st[1].nu - 0.170_82).abs() < 1e-5);
    assert!(st[0].fw_gap > 0.1);
    assert_eq!(st[1].fw_gap, 0.0);
    assert!((st[2].score - -0.056_94).abs() < 1e-4);
    assert!((s.weights()[0] - 0.723_607).abs() < 1e-5);
    assert!((s.weights()[1] - 0.276_393).abs() < 1e-5);
    assert_eq!(&s.weights()[2..], &[0.0, 0.0, 0.0]);

    let stop = PursuitOptions {
        at_pool_optimum: AtPoolOptimum::Stop,
        ..PursuitOptions::default()
    };
    let s = pursuit(&input, 5, &stop, &mut ws).unwrap();
    assert_eq!(s.picks(), &[3, 1]);
    assert_eq!(s.stop_reason(), StopReason::PoolOptimum);

    let fill = PursuitOptions {
        at_pool_optimum: AtPoolOptimum::FillByRelevance,
        ..PursuitOptions::default()
    };
    let s = pursuit(&input, 5, &fill, &mut ws).unwrap();
    assert_eq!(s.picks(), &[3, 1, 2, 0, 4]);
    assert_eq!(s.stop_reason(), StopReason::Budget);
    let filled: Vec<bool> = s.steps().iter().map(|x| x.filled).collect();
    assert_eq!(filled, vec![false, false, true, true, true]);
    assert!((s.steps()[2].score - -0.187_88).abs() < 1e-4);
    assert!((s.weights()[0] - 0.723_607).abs() < 1e-5);
    assert_eq!(&s.weights()[2..], &[0.0, 0.0, 0.0]);

    // The reference agrees on the continued order and the losses.
    let r = reference_pursuit(&q, &pool, 4, 5, PursuitOptions::PAPER_RIDGE, 1.0, None);
    assert_eq!(r.picks, vec![3, 1, 0, 2, 4]);
    assert!((r.steps[3].residual_sq - r.steps[1].residual_sq).abs() < 1e-12);
}

/// The same pool under adaptive stopping (τ = 1e-5): Δ_1 = 0.78885,
/// Δ_2 = (0.21115 − 0.05836)/0.21115 = 0.72361, Δ_3 = Δ_4 = 0. With
/// patience p the pursuit stops after 2 + p picks (if that is below K).
#[test]
fn adaptive_stopping_after_patience_small_steps() {
    let (q, pool) = optimum_pool();
    for (patience, expected) in [(1u32, 3usize), (2, 4)] {
        let o = PursuitOptions {
            stopping: Stopping::Adaptive {
                tau: 1e-5,
                patience,
                eps: 1e-12,
            },
            ..PursuitOptions::default()
        };
        let s = select(&q, &pool, 5, Method::Pursuit(o));
        assert_eq!(s.picks.len(), expected, "patience {patience}");
        assert_eq!(s.stop, StopReason::Adaptive);
        assert!((s.steps[0].improvement - 0.788_854).abs() < 1e-5);
        assert!((s.steps[1].improvement - 0.723_607).abs() < 1e-5);
        assert!(s.steps[2..].iter().all(|x| x.improvement.abs() < 1e-9));
    }
    // Patience 3 would stop after 5 picks = K: that is the budget, not an
    // adaptive stop.
    let o = PursuitOptions {
        stopping: Stopping::Adaptive {
            tau: 1e-5,
            patience: 3,
            eps: 1e-12,
        },
        ..PursuitOptions::default()
    };
    let s = select(&q, &pool, 5, Method::Pursuit(o));
    assert_eq!(s.picks.len(), 5);
    assert_eq!(s.stop, StopReason::Budget);
}

/// q = e1 is row 2 of the pool (exactly, so b_2 = G_22 = 1 and L_1 = 0);
/// afterwards L_t stays ~0 (at most ridge-sized), Δ_t ≤ 0 ≤ τ, so with
/// patience 2 the pursuit stops after 1 + 2 = 3 picks.
#[test]
fn adaptive_stopping_when_the_query_is_in_the_pool() {
    let (_, mut pool) = random::uniform_pool(5, 8, 6);
    let q = vec![1.0f32, 0.0, 0.0, 0.0, 0.0, 0.0];
    pool[12..18].copy_from_slice(&q);
    let s = select(
        &q,
        &pool,
        8,
        Method::Pursuit(PursuitOptions {
            stopping: Stopping::PAPER_ADAPTIVE,
            ..PursuitOptions::default()
        }),
    );
    assert_eq!(s.picks[0], 2);
    assert_eq!(s.picks.len(), 3);
    assert_eq!(s.stop, StopReason::Adaptive);
    assert_eq!(s.steps[0].residual_sq, 0.0);
    assert!(s.steps[2].residual_sq < 1e-12);
}

/// Adaptive stopping on the mini fixture: the expected stop is computed from
/// the reference's L_t (Eq. 7: Δ_t = (L_{t−1} − L_t)/max(L_{t−1}, ε), L_0 =
/// 1; stop after `patience` consecutive Δ_t ≤ τ). Queries where some Δ_t is
/// within 1e-6 of τ (where f32 rounding may decide) are skipped.
#[test]
fn adaptive_stopping_matches_the_reference_losses_on_the_mini_fixture() {
    let dir = fixture::find(&fixture::mini_candidates()).expect("mini fixture");
    let fx = Fixture::load(&dir).unwrap();
    let (tau, patience, k) = (1e-3, 2u32, 20usize);
    let mut checked = 0;
    let mut stopped_early = 0;
    for qi in 0..fx.queries.len() {
        let (q, pool) = (fx.query(qi), fx.pool(qi));
        let r = reference_pursuit(
            q,
            &pool,
            fx.dim(),
            k,
            PursuitOptions::PAPER_RIDGE,
            1.0,
            None,
        );
        let mut prev = 1.0f64;
        let mut small = 0;
        let mut expected = r.picks.len();
        let mut near = false;
        for (t, st) in r.steps.iter().enumerate() {
            let delta = (prev - st.residual_sq) / prev.max(1e-12);
            near |= (delta - tau).abs() < 1e-6;
            prev = st.residual_sq;
            if delta <= tau {
                small += 1;
                if small >= patience && t + 1 < r.picks.len() {
                    expected = t + 1;
                    break;
                }
            } else {
                small = 0;
            }
        }
        if near {
            continue;
        }
        let o = PursuitOptions {
            stopping: Stopping::Adaptive {
                tau,
                patience,
                eps: 1e-12,
            },
            ..PursuitOptions::default()
        };
        let s = select(q, &pool, k, Method::Pursuit(o));
        assert_eq!(s.picks.len(), expected, "query {qi}");
        assert_eq!(s.picks, r.picks[..expected], "query {qi}");
        let want = if expected < r.picks.len() {
            StopReason::Adaptive
        } else {
            StopReason::Budget
        };
        assert_eq!(s.stop, want, "query {qi}");
        checked += 1;
        stopped_early += usize::from(expected < k);
    }
    assert!(checked >= 20, "only {checked} queries checked");
    assert!(stopped_early >= 5, "only {stopped_early} adaptive stops");
}

/// `AtPoolOptimum::Stop` stops exactly at the first step with g_S ≤ tol,
/// and `FillByRelevance` then takes the rest in ρ order, on the mini
/// fixture.
#[test]
fn pool_optimum_on_the_mini_fixture() {
    let dir = fixture::find(&fixture::mini_candidates()).expect("mini fixture");
    let fx = Fixture::load(&dir).unwrap();
    let k = 30;
    let mut reached = 0;
    for qi in 0..fx.queries.len() {
        let (q, pool) = (fx.query(qi), fx.pool(qi));
        let cont = select(q, &pool, k, paper());
        let Some(t_opt) = cont.steps.iter().position(|s| s.fw_gap <= 1e-12) else {
            continue;
        };
        if t_opt + 1 >= cont.picks.len() {
            continue;
        }
        reached += 1;
        let stop = select(
            q,
            &pool,
            k,
            Method::Pursuit(PursuitOptions {
                at_pool_optimum: AtPoolOptimum::Stop,
                ..PursuitOptions::default()
            }),
        );
        assert_eq!(stop.picks, cont.picks[..=t_opt], "query {qi}");
        assert_eq!(stop.stop, StopReason::PoolOptimum);

        let fill = select(
            q,
            &pool,
            k,
            Method::Pursuit(PursuitOptions {
                at_pool_optimum: AtPoolOptimum::FillByRelevance,
                ..PursuitOptions::default()
            }),
        );
        assert_eq!(fill.picks[..=t_opt], cont.picks[..=t_opt]);
        // The rest: the unselected pool in top-K order.
        let tk = select(q, &pool, pool.len() / q.len(), topk());
        let rest: Vec<usize> = tk
            .picks
            .iter()
            .copied()
            .filter(|i| !cont.picks[..=t_opt].contains(i))
            .take(fill.picks.len() - t_opt - 1)
            .collect();
        assert_eq!(fill.picks[t_opt + 1..], rest[..], "query {qi}");
        assert!(fill.steps[t_opt + 1..].iter().all(|s| s.filled));
        assert!(fill.weights[t_opt + 1..].iter().all(|&w| w == 0.0));
        // Weights of the optimum are kept.
        let opt = select(q, &pool, t_opt + 1, paper());
        assert_eq!(fill.weights[..=t_opt], opt.weights[..], "query {qi}");
    }
    assert!(
        reached >= 10,
        "pool optimum reached on {reached} queries only"
    );
}

#[test]
fn core_functions_on_a_fixed_workspace_equal_the_selector() {
    let (q, pool) = random::clustered_pool(9, 40, 24, 3, 0.3);
    let input = Input::new(&q, &pool);
    let mut storage = Box::new(FixedWorkspace::<64, 16>::new());
    let mut ws = storage.view();
    let a: Selection = pursuit(&input, 16, &PursuitOptions::default(), &mut ws)
        .unwrap()
        .into();
    assert_eq!(a, select(&q, &pool, 16, paper()));
    let b: Selection = top_k(&input, 16, &InputPolicy::default(), &mut ws)
        .unwrap()
        .into();
    assert_eq!(b, select(&q, &pool, 16, topk()));
    let c: Selection = mmr(&input, 16, &MmrOptions::new(0.5), &mut ws)
        .unwrap()
        .into();
    assert_eq!(c, select(&q, &pool, 16, mmr_method(0.5)));
}
