//! Budgets in cost (tokens): each candidate's cost c_i and a total C
//! ([`CostBudget`], `Input::with_costs`, the spec's `cost_budget`).
//!
//! The contract, checked for every method (the recommended setting, the
//! paper's pursuit, its relevance-scaled family, centroid pursuit, top-K,
//! MMR; adaptive stopping, skipped dependent picks, relevance fill) and
//! every storage (f32, f16, bf16, the certified int8 pursuit):
//!
//! * the picks never cost more than C (the sum in f64 in pick order, as the
//!   selectors add), and the stop reason says why the selection ended
//!   (`cost_budget`: no candidate left fits; `budget`: K picks);
//! * picks are made as without costs among the candidates that still fit:
//!   against the independent f64 reference with the same rule, up to near
//!   ties; a C that fits every candidate changes nothing, bit for bit; with
//!   unit costs and C = K' every method picks what it picks at K = K';
//! * zero-cost candidates always fit; a C below every cost selects nothing;
//! * bad costs and totals are errors naming the index or value.

use mempursuit::half::{bf16, f16};
use mempursuit::{
    pursuit_using, recommend, AtPoolOptimum, CallData, DependentPicks, Error, ErrorKind, Input,
    InputPolicy, Int8Candidates, Int8Passes, InvalidCandidates, Method, MmrOptions, Pool,
    PursuitOptions, Relevance, Screening, SelectSpec, Selection, Selector, Serial, StopReason,
    Stopping,
};
use mempursuit_tests::random;
use mempursuit_tests::reference::{
    reference_mmr_costed, reference_pursuit_costed, reference_top_k_costed, Problem, RefCosts,
};
use rand::rngs::StdRng;
use rand::RngExt;

/// Every method and setting the contract covers, with a label.
fn methods() -> Vec<(&'static str, Method)> {
    let paper = PursuitOptions::PAPER;
    vec![
        ("recommended", Method::recommended()),
        ("pursuit", Method::Pursuit(paper)),
        (
            "family",
            Method::Pursuit(PursuitOptions {
                ridge: 0.05,
                gamma: 0.7,
                ..paper
            }),
        ),
        ("centroid", Method::Pursuit(PursuitOptions::centroid(0.5))),
        ("topk", Method::TopK(InputPolicy::default())),
        ("mmr", Method::Mmr(MmrOptions::PAPER)),
        ("mmr-0.3", Method::Mmr(MmrOptions::new(0.3))),
        (
            "adaptive",
            Method::Pursuit(PursuitOptions {
                stopping: Stopping::PAPER_ADAPTIVE,
                ..paper
            }),
        ),
        (
            "centroid-adaptive",
            Method::Pursuit(PursuitOptions {
                stopping: Stopping::PAPER_ADAPTIVE,
                ..PursuitOptions::centroid(0.3)
            }),
        ),
        (
            "skip",
            Method::Pursuit(PursuitOptions {
                dependent_picks: DependentPicks::Skip,
                ..paper
            }),
        ),
        (
            "fill",
            Method::Pursuit(PursuitOptions {
                at_pool_optimum: AtPoolOptimum::FillByRelevance,
                optimum_tolerance: 1e-3,
                ..paper
            }),
        ),
        (
            "stop",
            Method::Pursuit(PursuitOptions {
                at_pool_optimum: AtPoolOptimum::Stop,
                optimum_tolerance: 1e-3,
                ..paper
            }),
        ),
    ]
}

/// The same method with `policy` as its input policy.
fn with_policy(method: Method, policy: InputPolicy) -> Method {
    match method {
        Method::Pursuit(o) => Method::Pursuit(PursuitOptions { input: policy, ..o }),
        Method::TopK(_) => Method::TopK(policy),
        Method::Mmr(o) => Method::Mmr(MmrOptions { input: policy, ..o }),
        Method::Recommended(_) => Method::Recommended(policy),
        other => other,
    }
}

/// A random pool: clustered or uniform, P in 0..=40, d in {3, 8, 16}, with
/// exact duplicates appended now and then (so that skipped dependent picks
/// happen), and sometimes a NaN row (excluded under
/// `InvalidCandidates::Exclude`).
struct Case {
    query: Vec<f32>,
    pool: Vec<f32>,
    d: usize,
    p: usize,
    scores: Vec<f32>,
    costs: Vec<f32>,
    total: f64,
    k: usize,
    nan_row: bool,
}

fn random_case(seed: u64) -> Case {
    let mut r = random::rng(seed);
    let d = [3, 8, 16][r.random_range(0..3)];
    let p0 = r.random_range(0..=36);
    let (query, mut pool) = if r.random::<bool>() {
        random::clustered_pool(seed, p0, d, r.random_range(1..5), 0.3)
    } else {
        random::uniform_pool(seed, p0, d)
    };
    if p0 > 0 {
        for _ in 0..r.random_range(0..4) {
            let j = r.random_range(0..p0);
            let row = pool[j * d..(j + 1) * d].to_vec();
            pool.extend(row);
        }
    }
    let p = pool.len() / d;
    let nan_row = p > 2 && r.random_range(0..6) == 0;
    if nan_row {
        let j = r.random_range(0..p);
        pool[j * d] = f32::NAN;
    }
    let scores: Vec<f32> = (0..p).map(|_| r.random_range(0..7) as f32 * 0.1).collect();
    let costs = random_costs(&mut r, p);
    let sum: f64 = costs.iter().map(|&c| c as f64).sum();
    let total = match r.random_range(0..5) {
        0 => 0.0,
        1 => sum * 2.0,
        _ => (sum * r.random::<f64>() * 0.6).floor(),
    };
    let k = match r.random_range(0..3) {
        0 => p + 3,
        _ => r.random_range(0..=p + 1),
    };
    Case {
        query,
        pool,
        d,
        p,
        scores,
        costs,
        total,
        k,
        nan_row,
    }
}

/// Costs as token counts (integers 1..60), fractional values, or with zeros.
fn random_costs(r: &mut StdRng, p: usize) -> Vec<f32> {
    let kind = r.random_range(0..3);
    (0..p)
        .map(|_| match kind {
            0 => r.random_range(1..60) as f32,
            1 => r.random::<f32>() * 40.0,
            _ => {
                if r.random_range(0..4) == 0 {
                    0.0
                } else {
                    r.random_range(1..30) as f32
                }
            }
        })
        .collect()
}

/// The sum of the picks' costs in f64, in pick order (as the selectors add).
fn spent(picks: &[usize], costs: &[f32]) -> f64 {
    picks.iter().fold(0.0, |s, &i| s + costs[i] as f64)
}

/// The contract's checks on one selection with costs.
fn check_selection(sel: &Selection, case: &Case, label: &str) {
    let (costs, total) = (&case.costs, case.total);
    let s = spent(&sel.picks, costs);
    assert!(
        s <= total,
        "{label}: picks {:?} cost {s} > {total}",
        sel.picks
    );
    let mut seen = vec![false; case.p];
    for &i in &sel.picks {
        assert!(!seen[i], "{label}: {i} picked twice");
        seen[i] = true;
    }
    let k_eff = case.k.min(case.p);
    assert!(sel.picks.len() <= k_eff, "{label}");
    let left = |i: usize| !seen[i] && !sel.excluded.contains(&i) && !sel.skipped.contains(&i);
    match sel.stop {
        StopReason::Budget => assert_eq!(sel.picks.len(), k_eff, "{label}"),
        StopReason::CostBudget => {
            assert!(sel.picks.len() < k_eff, "{label}");
            // Nothing left fits, and the cost budget did leave something out.
            assert!(
                (0..case.p)
                    .filter(|&i| left(i))
                    .all(|i| s + costs[i] as f64 > total),
                "{label}: stopped for cost with a candidate that fits ({:?}, spent {s} of {total})",
                sel.picks
            );
            assert!(
                (0..case.p).any(left),
                "{label}: nothing was left out for cost"
            );
        }
        StopReason::PoolExhausted => {
            assert!(!(0..case.p).any(left), "{label}: a candidate was left");
        }
        StopReason::Adaptive | StopReason::PoolOptimum => {
            assert!(sel.picks.len() < k_eff, "{label}");
        }
        other => panic!("{label}: unexpected stop reason {other:?}"),
    }
}

fn relevance_of<'a>(case: &'a Case, which: u64) -> Relevance<'a> {
    match which % 3 {
        0 => Relevance::Similarity,
        1 => Relevance::RankedScores(&case.scores),
        _ => Relevance::PoolOrder,
    }
}

fn policy_of(case: &Case) -> InputPolicy {
    InputPolicy {
        invalid_candidates: if case.nan_row {
            InvalidCandidates::Exclude
        } else {
            InvalidCandidates::Reject
        },
        ..InputPolicy::default()
    }
}

/// A selection's every field but `Step::verified` (the int8 certificate's
/// count).
fn without_verified(mut s: Selection) -> Selection {
    for step in &mut s.steps {
        step.verified = 0;
    }
    s
}

#[test]
fn picks_never_exceed_the_budget_for_every_method_and_storage() {
    let mut selector = Selector::new();
    let mut stops = std::collections::BTreeMap::new();
    for seed in 0..160u64 {
        let case = random_case(seed);
        let policy = policy_of(&case);
        let input = Input::new(&case.query, &case.pool)
            .with_relevance(relevance_of(&case, seed))
            .with_costs(&case.costs, case.total);
        let half: Vec<f16> = case.pool.iter().map(|&x| f16::from_f32(x)).collect();
        let brain: Vec<bf16> = case.pool.iter().map(|&x| bf16::from_f32(x)).collect();
        let int8 = Int8Candidates::quantize(&case.pool, case.d).ok();
        for (label, method) in methods() {
            let method = with_policy(method, policy);
            let label = format!("seed {seed} {label}");
            let sel = selector.select(&input, case.k, &method).unwrap();
            check_selection(&sel, &case, &label);
            *stops.entry(sel.stop.as_str()).or_insert(0) += 1;
            // f16 and bf16 storage: the contract on the rounded rows.
            for (name, sel) in [
                (
                    "f16",
                    selector.select(
                        &Input {
                            cost_budget: input.cost_budget,
                            ..Input::with_storage(&case.query, &half[..])
                                .with_relevance(input.relevance)
                        },
                        case.k,
                        &method,
                    ),
                ),
                (
                    "bf16",
                    selector.select(
                        &Input {
                            cost_budget: input.cost_budget,
                            ..Input::with_storage(&case.query, &brain[..])
                                .with_relevance(input.relevance)
                        },
                        case.k,
                        &method,
                    ),
                ),
            ] {
                check_selection(&sel.unwrap(), &case, &format!("{label} {name}"));
            }
            // The exact screening makes the unscreened pursuit's selection
            // with costs, bit for bit (candidates that no longer fit leave
            // the screened argmax as skipped ones do).
            if let Method::Pursuit(o) = method {
                let p = case.p;
                let mut ws = selector.workspace(p, case.k.min(p));
                let screened: Selection =
                    pursuit_using(&input, case.k, &o, Screening::On, &mut ws, &mut Serial)
                        .unwrap()
                        .into();
                assert_eq!(
                    without_verified(screened),
                    without_verified(sel.clone()),
                    "{label} screened"
                );
            }
            // The certified int8 pursuit (forced onto its int8 passes) makes
            // the f32 pursuit's selection with costs, bit for bit.
            if let (Method::Pursuit(o), Some(int8)) = (method, &int8) {
                let i8sel = selector
                    .select_int8_using(&input, int8, case.k, &o, Int8Passes::Int8)
                    .unwrap();
                assert_eq!(
                    without_verified(i8sel),
                    without_verified(sel),
                    "{label} int8"
                );
            }
        }
    }
    // The random cases reach every way a selection with costs ends.
    for reason in ["budget", "cost_budget", "adaptive", "pool_optimum"] {
        assert!(stops.get(reason).is_some_and(|&n| n > 0), "{stops:?}");
    }
}

#[test]
fn a_budget_that_fits_every_candidate_changes_nothing() {
    let mut selector = Selector::new();
    for seed in 0..60u64 {
        let case = random_case(1000 + seed);
        let policy = policy_of(&case);
        let plain = Input::new(&case.query, &case.pool).with_relevance(relevance_of(&case, seed));
        let sum: f64 = case.costs.iter().map(|&c| c as f64).sum();
        let costed = plain.with_costs(&case.costs, sum);
        for (label, method) in methods() {
            let method = with_policy(method, policy);
            let a = selector.select(&plain, case.k, &method).unwrap();
            let b = selector.select(&costed, case.k, &method).unwrap();
            assert_eq!(a, b, "seed {seed} {label}");
        }
    }
}

#[test]
fn unit_costs_select_what_the_count_budget_selects() {
    let mut selector = Selector::new();
    for seed in 0..60u64 {
        let case = random_case(2000 + seed);
        let policy = policy_of(&case);
        let ones = vec![1.0f32; case.p];
        let plain = Input::new(&case.query, &case.pool).with_relevance(relevance_of(&case, seed));
        for k2 in [0, 1, 2, case.p / 2, case.p] {
            // K = P + 3 leaves the budget to the costs; C = K' (and K' + 0.5).
            for total in [k2 as f64, k2 as f64 + 0.5] {
                let costed = plain.with_costs(&ones, total);
                for (label, method) in methods() {
                    let method = with_policy(method, policy);
                    let label = format!("seed {seed} K' = {k2} C = {total} {label}");
                    let by_count = selector.select(&plain, k2, &method).unwrap();
                    let by_cost = selector.select(&costed, case.p + 3, &method).unwrap();
                    assert_eq!(by_cost.picks, by_count.picks, "{label}");
                    assert_eq!(by_cost.weights, by_count.weights, "{label}");
                    assert_eq!(by_cost.excluded, by_count.excluded, "{label}");
                    // The recommended setting lists as skipped the
                    // duplicates and represented candidates still in the
                    // pool at the end: with costs, those that no longer fit
                    // are left out for cost instead.
                    if label.ends_with("recommended") {
                        let sub = by_cost.skipped.iter().all(|i| by_count.skipped.contains(i));
                        assert!(sub, "{label}");
                    } else {
                        assert_eq!(by_cost.skipped, by_count.skipped, "{label}");
                    }
                    let n = by_cost.steps.len();
                    for (t, (x, y)) in by_cost.steps.iter().zip(&by_count.steps).enumerate() {
                        // The last step's gap: over the candidates that still
                        // fit (none with costs) against all of them.
                        if t + 1 == n {
                            assert_eq!((x.index, x.score, x.nu), (y.index, y.score, y.nu));
                            assert_eq!(x.residual_sq, y.residual_sq, "{label}");
                        } else {
                            assert_eq!(x, y, "{label} step {t}");
                        }
                    }
                    if by_count.stop == StopReason::Budget && by_count.picks.len() < case.p {
                        // Fewer than P usable candidates picked: the costs
                        // ended it, or the rules of the last step.
                        assert!(
                            matches!(
                                by_cost.stop,
                                StopReason::CostBudget
                                    | StopReason::PoolOptimum
                                    | StopReason::Adaptive
                                    | StopReason::PoolExhausted
                            ),
                            "{label}: {:?}",
                            by_cost.stop
                        );
                    } else if by_count.stop != StopReason::Budget {
                        assert_eq!(by_cost.stop, by_count.stop, "{label}");
                    }
                }
            }
        }
    }
}

/// Scores of the reference's step `t` (ρ at t = 0), for the tie check.
fn reference_scores(
    pb: &Problem,
    rho: &[f64],
    gamma: f64,
    picks: &[usize],
    weights: Option<&[f64]>,
) -> Vec<f64> {
    match weights {
        None => rho.to_vec(),
        Some(w) => pb.scores(rho, gamma, picks, w),
    }
}

/// Whether the two best of `u` over the candidates `allowed` are within
/// 1e-5 (correct f32 and f64 implementations may order them differently).
fn near_tie(u: &[f64], allowed: impl Fn(usize) -> bool) -> bool {
    let mut top = [f64::NEG_INFINITY; 2];
    for (_, &v) in u.iter().enumerate().filter(|(i, _)| allowed(*i)) {
        if v > top[0] {
            top = [v, top[0]];
        } else if v > top[1] {
            top[1] = v;
        }
    }
    top[0] - top[1] < 1e-5
}

#[test]
fn picks_agree_with_the_f64_reference_under_costs() {
    let mut selector = Selector::new();
    let mut compared = 0usize;
    for seed in 0..120u64 {
        let mut case = random_case(3000 + seed);
        if case.nan_row || case.p == 0 {
            continue;
        }
        case.k = case.p + 1;
        let d = case.d;
        let costs = RefCosts {
            costs: &case.costs,
            total: case.total,
        };
        let input = Input::new(&case.query, &case.pool).with_costs(&case.costs, case.total);
        let pb = Problem::new(&case.query, &case.pool, d);
        // (label, ridge, gamma) of the pursuit family; the recommended
        // setting as centroid pursuit with its γ.
        let rec = recommend(
            &input,
            case.k,
            &InputPolicy::default(),
            &mut selector.workspace(case.p, case.k),
        )
        .unwrap();
        let family = [
            ("pursuit", 1e-10, 1.0),
            ("family", 0.05, 0.7),
            ("centroid", f64::INFINITY, 0.5),
        ];
        // The recommended setting's γ under costs (its rules on duplicates
        // and represented candidates are compared with an f64 version of
        // them in tests/tests/recommended.rs; costs reach its loop through
        // the same `Spend` as every loop, checked by the other tests here).
        assert!(rec.gamma > 0.0 && rec.gamma <= 1.0);
        for (label, ridge, gamma) in family {
            let method = if label == "recommended" {
                Method::recommended()
            } else {
                Method::Pursuit(PursuitOptions {
                    ridge,
                    gamma,
                    ..PursuitOptions::PAPER
                })
            };
            let sel = selector.select(&input, case.k, &method).unwrap();
            let r = reference_pursuit_costed(
                &case.query,
                &case.pool,
                d,
                case.k,
                ridge,
                gamma,
                None,
                Some(costs),
            );
            // Compare up to the first near tie among the candidates that fit.
            let mut selected = vec![false; case.p];
            let mut sp = 0.0;
            for t in 0..r.picks.len() {
                let w = (t > 0).then(|| r.steps[t - 1].weights.as_slice());
                let u = reference_scores(&pb, &pb.b, gamma, &r.picks[..t], w);
                if near_tie(&u, |i| !selected[i] && costs.fits(sp, i)) {
                    break;
                }
                assert_eq!(
                    sel.picks.get(t),
                    Some(&r.picks[t]),
                    "seed {seed} {label}: {:?} vs {:?}",
                    sel.picks,
                    r.picks
                );
                // The gap of the pursuit: over the candidates that fit.
                if ridge.is_finite() {
                    let g = sel.steps[t].fw_gap;
                    assert!(
                        (g - r.steps[t].fw_gap).abs() < 1e-6,
                        "seed {seed} {label} step {t}: gap {g} vs {}",
                        r.steps[t].fw_gap
                    );
                }
                selected[r.picks[t]] = true;
                sp += case.costs[r.picks[t]] as f64;
                compared += 1;
                if t + 1 == r.picks.len() {
                    assert_eq!(sel.picks, r.picks, "seed {seed} {label}");
                }
            }
        }
        // Top-K: a greedy pass in cosine order (no ties in random pools:
        // distinct rows but for the exact duplicates, which tie in both).
        let sel = selector
            .select(&input, case.k, &Method::TopK(InputPolicy::default()))
            .unwrap();
        let r = reference_top_k_costed(&case.query, &case.pool, d, case.k, Some(costs));
        let same_cosines = |a: &[usize], b: &[usize]| {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(&i, &j)| (pb.b[i] - pb.b[j]).abs() < 1e-6)
        };
        assert!(
            same_cosines(&sel.picks, &r),
            "seed {seed} topk: {:?} vs {r:?}",
            sel.picks
        );
        // MMR, up to the first near tie.
        let sel = selector
            .select(&input, case.k, &Method::Mmr(MmrOptions::PAPER))
            .unwrap();
        let r = reference_mmr_costed(&case.query, &case.pool, d, case.k, 0.5, Some(costs));
        let mut sp = 0.0;
        for t in 0..r.len() {
            let u: Vec<f64> = (0..case.p)
                .map(|i| {
                    let pen = r[..t]
                        .iter()
                        .map(|&s| pb.gram[(i, s)])
                        .fold(f64::NEG_INFINITY, f64::max);
                    0.5 * pb.b[i] - 0.5 * if t == 0 { 0.0 } else { pen }
                })
                .collect();
            if near_tie(&u, |i| !r[..t].contains(&i) && costs.fits(sp, i)) {
                break;
            }
            assert_eq!(sel.picks.get(t), Some(&r[t]), "seed {seed} mmr");
            sp += case.costs[r[t]] as f64;
            compared += 1;
        }
    }
    assert!(compared > 1000, "{compared} picks compared");
}

#[test]
fn the_recommended_gamma_uses_the_picks_of_top_k_under_the_costs() {
    let mut selector = Selector::new();
    for seed in 0..80u64 {
        let case = random_case(4000 + seed);
        if case.nan_row || case.p == 0 {
            continue;
        }
        // Every candidate fits on its own, so the statistics run over the
        // same candidates with and without costs.
        let total = case
            .total
            .max(case.costs.iter().fold(0.0f64, |m, &c| m.max(c as f64)));
        let plain = Input::new(&case.query, &case.pool).with_relevance(relevance_of(&case, seed));
        let costed = plain.with_costs(&case.costs, total);
        let policy = InputPolicy::default();
        let top = selector
            .select(&costed, case.k, &Method::TopK(policy))
            .unwrap();
        let mut ws = selector.workspace(case.p, case.k);
        let with_costs = recommend(&costed, case.k, &policy, &mut ws).unwrap();
        let by_count = recommend(&plain, top.picks.len(), &policy, &mut ws).unwrap();
        assert_eq!(with_costs, by_count, "seed {seed}");
    }
}

#[test]
fn zero_cost_candidates_always_fit() {
    let mut selector = Selector::new();
    let (q, pool) = random::clustered_pool(7, 30, 8, 3, 0.3);
    let mut costs = vec![10.0f32; 30];
    let free = [2, 5, 11, 17, 29];
    for &i in &free {
        costs[i] = 0.0;
    }
    for (label, method) in methods() {
        for k in [3, 5, 10] {
            // C = 0: only the zero-cost candidates, up to K.
            let input = Input::new(&q, &pool).with_costs(&costs, 0.0);
            let sel = selector.select(&input, k, &method).unwrap();
            assert!(
                sel.picks.iter().all(|i| free.contains(i)),
                "{label} {sel:?}"
            );
            if matches!(sel.stop, StopReason::Budget | StopReason::CostBudget) {
                assert_eq!(sel.picks.len(), k.min(free.len()), "{label}");
            }
            if k > free.len() && sel.stop != StopReason::Adaptive {
                assert!(
                    matches!(sel.stop, StopReason::CostBudget | StopReason::PoolOptimum),
                    "{label}: {:?}",
                    sel.stop
                );
            }
            // C = 10: one candidate of cost 10 and every free one fit.
            let input = Input::new(&q, &pool).with_costs(&costs, 10.0);
            let sel = selector.select(&input, 30, &method).unwrap();
            let paid = sel.picks.iter().filter(|i| !free.contains(i)).count();
            assert!(paid <= 1, "{label}: {sel:?}");
            if sel.stop == StopReason::CostBudget {
                assert_eq!(paid, 1, "{label}");
                assert_eq!(sel.picks.len(), free.len() + 1, "{label}");
            }
        }
    }
    // Top-K exactly: the free candidates in cosine order.
    let input = Input::new(&q, &pool).with_costs(&costs, 0.0);
    let all = selector
        .select(
            &Input::new(&q, &pool),
            30,
            &Method::TopK(InputPolicy::default()),
        )
        .unwrap();
    let expected: Vec<usize> = all.picks.into_iter().filter(|i| free.contains(i)).collect();
    let sel = selector
        .select(&input, 30, &Method::TopK(InputPolicy::default()))
        .unwrap();
    assert_eq!(sel.picks, expected);
    assert_eq!(sel.stop, StopReason::CostBudget);
}

#[test]
fn a_budget_below_every_cost_selects_nothing() {
    let mut selector = Selector::new();
    let (q, mut pool) = random::clustered_pool(8, 12, 8, 3, 0.3);
    let costs: Vec<f32> = (0..12).map(|i| 5.0 + i as f32).collect();
    for exclude in [false, true] {
        if exclude {
            pool[3 * 8] = f32::NAN;
        }
        let policy = InputPolicy {
            invalid_candidates: if exclude {
                InvalidCandidates::Exclude
            } else {
                InvalidCandidates::Reject
            },
            ..InputPolicy::default()
        };
        let input = Input::new(&q, &pool).with_costs(&costs, 4.999);
        for (label, method) in methods() {
            let sel = selector
                .select(&input, 5, &with_policy(method, policy))
                .unwrap();
            assert!(sel.picks.is_empty(), "{label}");
            assert_eq!(sel.stop, StopReason::CostBudget, "{label}");
            assert_eq!(sel.excluded, if exclude { vec![3] } else { vec![] });
            // K = 0 is the count budget's, whatever the costs.
            let sel = selector
                .select(&input, 0, &with_policy(method, policy))
                .unwrap();
            assert_eq!(sel.stop, StopReason::Budget, "{label}");
        }
    }
    // The spec: the same through select_spec, every storage.
    for storage in ["f32", "f16", "bf16", "int8"] {
        for m in ["recommended", "pursuit", "centroid", "topk", "mmr"] {
            let spec: SelectSpec =
                format!("{m},storage={storage},cost_budget=4.999,invalid=exclude")
                    .parse()
                    .unwrap();
            let data = CallData::new(&q, Pool::F32(&pool[..])).with_costs(Some(&costs));
            let sel = selector.select_spec(&spec, data, 5).unwrap();
            assert!(sel.picks.is_empty() && sel.stop == StopReason::CostBudget);
        }
    }
}

#[test]
fn bad_costs_and_totals_are_errors_naming_the_index_or_value() {
    let mut selector = Selector::new();
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let (q, pool) = ([s, s], [0.9950f32, 0.0998, 0.9998, 0.0200, 0.0, 1.0]);
    let input = Input::new(&q, &pool);
    let costs_before = [1.0f32, 2.0, 3.0];
    let check = |costs: &[f32], total: f64, expected: fn(&Error) -> bool, message: &str| {
        let mut selector = Selector::new();
        for (_, method) in methods() {
            // Checked before any work: also at K = 0.
            for k in [0, 2] {
                let e = selector
                    .select(&input.with_costs(costs, total), k, &method)
                    .unwrap_err();
                assert!(expected(&e), "{e:?}");
                assert_eq!(e.to_string(), message);
                assert_eq!(e.kind(), ErrorKind::Input);
            }
        }
    };
    check(
        &[1.0, 2.0],
        10.0,
        |e| {
            *e == Error::CostLength {
                expected: 3,
                found: 2,
            }
        },
        "costs have 2 entries but the pool has 3 candidates",
    );
    check(
        &[1.0, f32::NAN, 3.0],
        10.0,
        |e| matches!(e, Error::InvalidCost { index: 1, value } if value.is_nan()),
        "cost 1 is NaN; costs must be finite and >= 0",
    );
    check(
        &[1.0, 2.0, -0.5],
        10.0,
        |e| {
            *e == Error::InvalidCost {
                index: 2,
                value: -0.5,
            }
        },
        "cost 2 is -0.5; costs must be finite and >= 0",
    );
    check(
        &[f32::INFINITY, 2.0, 3.0],
        10.0,
        |e| {
            *e == Error::InvalidCost {
                index: 0,
                value: f32::INFINITY,
            }
        },
        "cost 0 is inf; costs must be finite and >= 0",
    );
    for total in [-1.0, f64::NAN, f64::INFINITY] {
        check(
            &costs_before,
            total,
            |e| matches!(e, Error::InvalidCostBudget(_)),
            &format!("cost budget {total} must be finite and >= 0"),
        );
    }
    // The spec: costs and cost_budget go together; a bad cost_budget is an
    // option error whatever the data.
    let data = CallData::new(&q, Pool::F32(&pool));
    let e = selector
        .select_spec(
            &SelectSpec::top_k(),
            data.with_costs(Some(&costs_before)),
            2,
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Option);
    assert_eq!(
        e.to_string(),
        "costs need a cost budget (the most the picks may cost in total)"
    );
    let spec: SelectSpec = "pursuit,cost_budget=10".parse().unwrap();
    let e = selector.select_spec(&spec, data, 2).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Option);
    assert_eq!(
        e.to_string(),
        "a cost budget needs costs (one per candidate, e.g. its token count)"
    );
    let spec: SelectSpec = "mmr,cost_budget=-3".parse().unwrap();
    let e = selector
        .select_spec(&spec, data.with_costs(Some(&[f32::NAN])), 2)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Option);
    assert_eq!(e.to_string(), "cost budget -3 must be finite and >= 0");
    let e = "topk,cost_budget=many".parse::<SelectSpec>().unwrap_err();
    assert_eq!(
        e.to_string(),
        "option 'cost_budget' must be a number, got 'many'"
    );
    // A bad cost through the spec is the selector's input error.
    let spec: SelectSpec = "recommended,cost_budget=10".parse().unwrap();
    let e = selector
        .select_spec(&spec, data.with_costs(Some(&[1.0, -1.0, 0.0])), 2)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Input);
    assert_eq!(e.to_string(), "cost 1 is -1; costs must be finite and >= 0");
    // Nothing the caller passed is modified.
    assert_eq!(costs_before, [1.0, 2.0, 3.0]);
}

#[test]
fn the_text_and_json_forms_carry_the_cost_budget() {
    let spec: SelectSpec = "topk,cost_budget=512".parse().unwrap();
    assert_eq!(spec.cost_budget(), Some(512.0));
    assert_eq!(spec.to_string(), "topk,cost_budget=512");
    let json = serde_json::to_string(&spec).unwrap();
    assert_eq!(json, r#"{"method":"topk","cost_budget":512.0}"#);
    let back: SelectSpec = serde_json::from_str(&json).unwrap();
    assert_eq!(back, spec);
    let camel: SelectSpec = serde_json::from_str(r#"{"method":"mmr","costBudget":100}"#).unwrap();
    assert_eq!(camel.cost_budget(), Some(100.0));
    assert_eq!(StopReason::CostBudget.as_str(), "cost_budget");
    assert_eq!(
        serde_json::to_string(&StopReason::CostBudget).unwrap(),
        r#""cost_budget""#
    );
}

/// A worked example: token counts, a prompt budget, every method at the
/// same budget (the comparison `eval --token-budget` makes on datasets).
#[test]
fn every_method_at_the_same_token_budget() {
    let mut selector = Selector::new();
    let (q, pool) = random::clustered_pool(20260401, 40, 16, 4, 0.3);
    let tokens: Vec<f32> = (0..40).map(|i| (20 + (i * 13) % 70) as f32).collect();
    for total in [0.0, 50.0, 120.0, 300.0, 1000.0] {
        let input = Input::new(&q, &pool).with_costs(&tokens, total);
        for (label, method) in methods() {
            let sel = selector.select(&input, usize::MAX, &method).unwrap();
            let s = spent(&sel.picks, &tokens);
            assert!(s <= total, "{label} at {total}: {s}");
            if sel.stop == StopReason::CostBudget {
                let cheapest = (0..40)
                    .filter(|i| !sel.picks.contains(i) && !sel.skipped.contains(i))
                    .map(|i| tokens[i] as f64)
                    .fold(f64::INFINITY, f64::min);
                assert!(s + cheapest > total, "{label} at {total}");
            }
        }
    }
}
