//! Unit-free relevance (`Relevance::RankedScores`) and the recommended
//! setting (`recommend`, `recommended`, `Method::Recommended`): the mapping
//! onto the pool's cosines, its invariance to the scores' units, the γ rule
//! recomputed independently in f64, agreement of the picks with an
//! independent f64 implementation of the rule (centroid pursuit with that γ
//! and that ρ, duplicates merged, represented candidates last), the
//! textbook case of repeated memories and the exact-copy property.

use mempursuit::{
    mmr, pursuit, recommend, top_k, Error, FixedWorkspace, Input, InputPolicy, Method, MmrOptions,
    PursuitOptions, Relevance, Selector, RECOMMENDED_C_COSINE, RECOMMENDED_C_EXTERNAL,
    RECOMMENDED_THETA,
};
use mempursuit_tests::fixture::{self, Fixture};
use mempursuit_tests::random;
use mempursuit_tests::reference::reference_pursuit;
use rand::RngExt as _;

/// f64 cosines of every row of `pool` (P × d) with `q`.
fn cosines(q: &[f32], pool: &[f32], d: usize) -> Vec<f64> {
    let norm = |v: &[f32]| v.iter().map(|&x| (x as f64).powi(2)).sum::<f64>().sqrt();
    let nq = norm(q);
    pool.chunks(d)
        .map(|m| {
            let dot: f64 = m.iter().zip(q).map(|(&a, &b)| a as f64 * b as f64).sum();
            dot / (norm(m) * nq)
        })
        .collect()
}

/// The rank map, written independently: the candidate with the k-th
/// largest score gets the k-th largest cosine; equal scores are ordered by
/// cosine, and candidates equal in both share the mean of their ranks'
/// cosines.
fn rank_map(scores: &[f32], b: &[f64]) -> Vec<f64> {
    let mut sorted_b = b.to_vec();
    sorted_b.sort_by(|x, y| y.total_cmp(x));
    // Rank by score, ties by cosine; equal in both: the mean of the ranks'
    // cosines.
    (0..scores.len())
        .map(|i| {
            let (s, c) = (scores[i], b[i]);
            let above = (0..scores.len())
                .filter(|&j| scores[j] > s || (scores[j] == s && b[j] > c))
                .count();
            let equal = (0..scores.len())
                .filter(|&j| scores[j] == s && b[j] == c)
                .count();
            sorted_b[above..above + equal].iter().sum::<f64>() / equal as f64
        })
        .collect()
}

/// The rule, written independently: γ = c · (ρ₍₁₎ − ρ₍ₖ₎) / (ρ₍₁₎ − ρ̄).
fn rule_gamma(rho: &[f64], k: usize, cosine_ordered: bool) -> f64 {
    let mut s = rho.to_vec();
    s.sort_by(|x, y| y.total_cmp(x));
    let mean = s.iter().sum::<f64>() / s.len() as f64;
    let depth = (s[0] - s[k.min(s.len()) - 1]) / (s[0] - mean);
    let c = if cosine_ordered {
        RECOMMENDED_C_COSINE
    } else {
        RECOMMENDED_C_EXTERNAL
    };
    (c * depth).clamp(f64::MIN_POSITIVE, 1.0)
}

#[test]
fn ranked_scores_ignore_the_scores_units_and_generalize_pool_order() {
    let d = 16;
    for seed in 0..10u64 {
        let (q, pool) = random::clustered_pool(300 + seed, 30, d, 4, 0.3);
        let mut r = random::rng(seed);
        let scores: Vec<f32> = (0..30).map(|_| r.random::<f32>()).collect();
        // An affine map and a monotone non-linear map of the same scores.
        let affine: Vec<f32> = scores.iter().map(|s| 0.008 * s + 0.011).collect();
        let cubed: Vec<f32> = scores.iter().map(|s| 1e3 * s * s * s - 5.0).collect();
        let mut sel = Selector::new();
        for method in [
            Method::Pursuit(PursuitOptions::centroid(0.5)),
            Method::Pursuit(PursuitOptions {
                gamma: 0.3,
                ridge: 0.1,
                ..PursuitOptions::default()
            }),
            Method::TopK(InputPolicy::default()),
        ] {
            let run = |sel: &mut Selector, rel: Relevance<'_>| {
                sel.select(&Input::new(&q, &pool).with_relevance(rel), 10, &method)
                    .unwrap()
            };
            let base = run(&mut sel, Relevance::RankedScores(&scores));
            assert_eq!(base, run(&mut sel, Relevance::RankedScores(&affine)));
            assert_eq!(base, run(&mut sel, Relevance::RankedScores(&cubed)));
        }
        // Strictly decreasing scores are PoolOrder.
        let decreasing: Vec<f32> = (0..30).map(|i| -(i as f32)).collect();
        let m = Method::Pursuit(PursuitOptions::centroid(0.4));
        let a = sel
            .select(
                &Input::new(&q, &pool).with_relevance(Relevance::RankedScores(&decreasing)),
                12,
                &m,
            )
            .unwrap();
        let b = sel
            .select(
                &Input::new(&q, &pool).with_relevance(Relevance::PoolOrder),
                12,
                &m,
            )
            .unwrap();
        assert_eq!(a, b, "seed {seed}");
    }
}

#[test]
fn ranked_scores_agree_with_the_reference_on_the_mapped_relevance() {
    let d = 12;
    for seed in 0..8u64 {
        let (q, pool) = random::clustered_pool(500 + seed, 24, d, 3, 0.3);
        let mut r = random::rng(seed);
        // Few distinct values: many ties, which share their ranks' mean.
        let scores: Vec<f32> = (0..24).map(|_| (r.random::<f32>() * 6.0).floor()).collect();
        let rho = rank_map(&scores, &cosines(&q, &pool, d));
        for (ridge, gamma) in [(f64::INFINITY, 0.5), (0.1, 0.3)] {
            let reference = reference_pursuit(&q, &pool, d, 10, ridge, gamma, Some(&rho));
            let o = PursuitOptions {
                ridge,
                gamma,
                ..PursuitOptions::default()
            };
            let got = Selector::new()
                .select(
                    &Input::new(&q, &pool).with_relevance(Relevance::RankedScores(&scores)),
                    10,
                    &Method::Pursuit(o),
                )
                .unwrap();
            assert_eq!(got.picks, reference.picks, "seed {seed} ridge {ridge}");
        }
    }
}

/// Equal scores carry no order: the query cosine orders them, so all-equal
/// scores give exactly the cosine relevance (ρ = b) and every method picks
/// as it does without scores.
#[test]
fn equal_scores_follow_the_query() {
    let (q, pool) = random::uniform_pool(9, 8, 4);
    let flat = [2.5f32; 8];
    let mut storage = FixedWorkspace::<8, 8>::new();
    let mut ws = storage.view();
    let input = Input::new(&q, &pool).with_relevance(Relevance::RankedScores(&flat));
    let sel = top_k(&input, 8, &InputPolicy::default(), &mut ws).unwrap();
    let b = cosines(&q, &pool, 4);
    let mut by_cosine: Vec<usize> = (0..8).collect();
    by_cosine.sort_by(|&i, &j| b[j].total_cmp(&b[i]));
    assert_eq!(sel.picks(), &by_cosine[..]);
    for s in sel.steps() {
        assert!(
            (s.score - b[s.index]).abs() < 1e-6,
            "{} vs {}",
            s.score,
            b[s.index]
        );
    }
    // Every method: the same picks as with ρ = b.
    let plain = Input::new(&q, &pool);
    for m in [
        Method::recommended(),
        Method::Pursuit(PursuitOptions::default()),
        Method::Pursuit(PursuitOptions::centroid(0.5)),
        Method::TopK(InputPolicy::default()),
        Method::Mmr(mempursuit::MmrOptions::PAPER),
    ] {
        let mut sel = Selector::new();
        let a = sel.select(&input, 5, &m).unwrap();
        let c = sel.select(&plain, 5, &m).unwrap();
        assert_eq!(a.picks, c.picks, "{m:?}");
    }
    // Raw equal scores: top-K still follows the query.
    let raw = Input::new(&q, &pool).with_relevance(Relevance::Scores(&flat));
    let sel = Selector::new()
        .select(&raw, 8, &Method::TopK(InputPolicy::default()))
        .unwrap();
    assert_eq!(sel.picks, by_cosine);
}

#[test]
fn ranked_scores_errors_name_the_entry() {
    let (q, pool) = random::uniform_pool(1, 5, 4);
    let mut sel = Selector::new();
    let m = Method::recommended();
    let short = [1.0f32; 4];
    let e = sel
        .select(
            &Input::new(&q, &pool).with_relevance(Relevance::RankedScores(&short)),
            3,
            &m,
        )
        .unwrap_err();
    assert_eq!(
        e,
        Error::RelevanceLength {
            expected: 5,
            found: 4
        }
    );
    let nan = [1.0, 2.0, f32::NAN, 0.0, 1.0];
    let e = sel
        .select(
            &Input::new(&q, &pool).with_relevance(Relevance::RankedScores(&nan)),
            3,
            &m,
        )
        .unwrap_err();
    assert!(
        matches!(e, Error::NonFiniteRelevance { index: 2, .. }),
        "{e:?}"
    );
}

#[test]
fn the_rule_recomputed_in_f64_on_random_pools() {
    let d = 16;
    let mut represented = 0;
    for seed in 0..10u64 {
        let (q, pool) = random::clustered_pool(700 + seed, 40, d, 5, 0.35);
        let b = cosines(&q, &pool, d);
        let mut r = random::rng(seed);
        let scores: Vec<f32> = (0..40).map(|_| r.random::<f32>()).collect();
        // Scores that are a monotone map of the cosines count as cosine-ordered.
        let cos_like: Vec<f32> = b.iter().map(|&c| (3.0 * c + 1.0) as f32).collect();
        let mut storage = FixedWorkspace::<64, 64>::new();
        for k in [1usize, 3, 5, 10, 20, 40, 60] {
            let cases: [(Relevance<'_>, Vec<f64>, bool); 4] = [
                (Relevance::Similarity, b.clone(), true),
                (Relevance::Scores(&cos_like), b.clone(), true),
                (
                    Relevance::RankedScores(&scores),
                    rank_map(&scores, &b),
                    false,
                ),
                // Raw scores are used by rank in the recommended setting.
                (Relevance::Scores(&scores), rank_map(&scores, &b), false),
            ];
            for (rel, rho, ordered) in cases {
                let input = Input::new(&q, &pool).with_relevance(rel);
                let rec =
                    recommend(&input, k, &InputPolicy::default(), &mut storage.view()).unwrap();
                assert_eq!(rec.cosine_ordered, ordered, "seed {seed} k {k} {rel:?}");
                let want = rule_gamma(&rho, k, ordered);
                assert!(
                    (rec.gamma - want).abs() < 1e-5,
                    "seed {seed} k {k}: {} vs {want}",
                    rec.gamma
                );
                assert!(rec.gamma > 0.0 && rec.gamma <= 1.0);
                // The recommended selector is the rule on that γ and ρ,
                // written independently in f64.
                let got = Selector::new()
                    .select(&input, k, &Method::recommended())
                    .unwrap();
                let want = reference_recommended(&q, &pool, d, k, rec.gamma, &rho);
                assert_eq!(got.picks, want.picks, "seed {seed} k {k} {rel:?}");
                let dependent: Vec<bool> = got.steps.iter().map(|s| s.dependent).collect();
                assert_eq!(dependent, want.dependent, "seed {seed} k {k}");
                // Where no candidate is represented, it is centroid
                // pursuit with that γ, step for step.
                represented += want.represented;
                if want.represented == 0 {
                    let unit_free = input.with_relevance(rel.unit_free());
                    let mut ws = storage.view();
                    let direct = pursuit(&unit_free, k, &rec.options(), &mut ws).unwrap();
                    assert_eq!(got.picks, direct.picks());
                    assert_eq!(got.steps, direct.steps());
                }
            }
        }
    }
    // The clusters hold near-paraphrases: the rule meets them.
    assert!(represented > 0);
}

#[test]
fn recommended_agrees_with_the_reference_on_the_mini_fixture() {
    let dir = fixture::find(&fixture::mini_candidates())
        .expect("the mini fixture (cli/data/hotpotqa-mini or shared mini/) is required");
    let fx = Fixture::load(&dir).expect("mini fixture loads");
    let d = fx.dim();
    let mut sel = Selector::new();
    let mut storage = FixedWorkspace::<128, 32>::new();
    let mut represented = 0;
    for qi in 0..fx.queries.len() {
        let (q, pool) = (fx.query(qi), fx.pool(qi));
        let b = cosines(q, &pool, d);
        for k in [3usize, 5, 10, 20] {
            let input = Input::new(q, &pool);
            let rec = recommend(&input, k, &InputPolicy::default(), &mut storage.view()).unwrap();
            assert!(rec.cosine_ordered);
            let want = rule_gamma(&b, k, true);
            assert!((rec.gamma - want).abs() < 1e-5, "query {qi} k {k}");
            let got = sel.select(&input, k, &Method::recommended()).unwrap();
            let want = reference_recommended(q, &pool, d, k, rec.gamma, &b);
            assert_eq!(got.picks, want.picks, "query {qi} k {k}");
            represented += want.represented;
            if want.represented == 0 {
                let reference = reference_pursuit(q, &pool, d, k, f64::INFINITY, rec.gamma, None);
                assert_eq!(got.picks, reference.picks, "query {qi} k {k}");
            }
        }
    }
    // The fixture's pools hold near-paraphrases (sentences of one
    // paragraph share its title): the rule meets some of them.
    assert!(represented > 0);
}

/// The recorded γ of the recommended setting on the first mini query, so a
/// change of the rule or its constants shows up here.
#[test]
fn recorded_gamma_on_the_first_mini_query() {
    let dir = fixture::find(&fixture::mini_candidates()).expect("mini fixture");
    let fx = Fixture::load(&dir).expect("mini fixture loads");
    let (q, pool) = (fx.query(0), fx.pool(0));
    let mut storage = FixedWorkspace::<128, 32>::new();
    let got: Vec<f64> = [3usize, 5, 10, 20]
        .iter()
        .map(|&k| {
            recommend(
                &Input::new(q, &pool),
                k,
                &InputPolicy::default(),
                &mut storage.view(),
            )
            .unwrap()
            .gamma
        })
        .collect();
    let want = RECORDED_GAMMA;
    // γ comes from the f32 similarities of the query pass, whose last bits
    // depend on whether the kernels fuse the multiply-adds (Isa::Avx2Fma
    // vs the unfused order the values were recorded with): ~1e-7 apart.
    // A change of the rule or its constants moves γ far more.
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-6, "{got:?}");
    }
}

const RECORDED_GAMMA: [f64; 4] = [
    0.008163177780335425,
    0.10849290204049392,
    0.4189593306392602,
    0.6738218938803165,
];

/// Signed zeros are equal scores, extreme finite scores are fine, and rows
/// excluded under `InvalidCandidates::Exclude` take no rank: the usable
/// rows share the usable cosines.
#[test]
fn ranked_scores_with_signed_zeros_extremes_and_excluded_rows() {
    use mempursuit::InvalidCandidates;
    let d = 6;
    let (q, mut pool) = random::uniform_pool(21, 10, d);
    let scores = [
        0.0f32,
        -0.0,
        f32::MAX,
        -f32::MAX,
        1.0,
        0.0,
        f32::MIN_POSITIVE,
        -1.0,
        3.0,
        2.0,
    ];
    // Row 4 becomes unusable (all zeros).
    pool[4 * d..5 * d].fill(0.0);
    let policy = InputPolicy {
        invalid_candidates: InvalidCandidates::Exclude,
        ..InputPolicy::default()
    };
    let input = Input::new(&q, &pool).with_relevance(Relevance::RankedScores(&scores));
    let mut storage = FixedWorkspace::<16, 16>::new();
    let mut ws = storage.view();
    let sel = top_k(&input, 9, &policy, &mut ws).unwrap();
    // Order: MAX, 3, 2, MIN_POSITIVE, then the three zeros (signed zeros are
    // equal) by cosine, -1, -MAX.
    let b = cosines(&q, &pool, d);
    let mut zeros = vec![0usize, 1, 5];
    zeros.sort_by(|&i, &j| b[j].total_cmp(&b[i]));
    let mut want_picks = vec![2, 8, 9, 6];
    want_picks.extend(&zeros);
    want_picks.extend([7, 3]);
    assert_eq!(sel.picks(), &want_picks[..]);
    let valid: Vec<usize> = (0..10).filter(|&i| i != 4).collect();
    let vs: Vec<f32> = valid.iter().map(|&i| scores[i]).collect();
    let vb: Vec<f64> = valid.iter().map(|&i| b[i]).collect();
    let want = rank_map(&vs, &vb);
    for s in sel.steps() {
        let pos = valid.iter().position(|&i| i == s.index).unwrap();
        assert!((s.score - want[pos]).abs() < 1e-6, "row {}", s.index);
    }
    // The three zeros take three ranks, closest to the query first.
    let z: Vec<f64> = sel.steps()[4..7].iter().map(|s| s.score).collect();
    assert!(z[0] > z[1] && z[1] > z[2], "{z:?}");
    let got = Selector::new()
        .select(&input, 9, &Method::Recommended(policy))
        .unwrap();
    assert_eq!(got.excluded, vec![4]);
    assert!(!got.picks.contains(&4) && got.picks.len() == 9);
}

/// The picks of the recommended rule, written independently in f64 from
/// its description (module docs of `recommend`): exact duplicates merged
/// into their first occurrence; centroid scores U_i = ρ_i − (γ/|S|) Σ_{j∈S}
/// G_ij; each candidate whose Gram row is read (each pick, and each
/// candidate that reaches the top) marks the available candidates k with
/// G > 0 and 1 − G² ≤ θ r as represented (r: the mean 1 − G² of the other
/// distinct candidates against it); a candidate reaching the top that is so
/// close to a marked one is marked too; marked candidates are picked last.
struct RuleReference {
    picks: Vec<usize>,
    dependent: Vec<bool>,
    represented: usize,
}

fn reference_recommended(
    q: &[f32],
    pool: &[f32],
    d: usize,
    k: usize,
    gamma: f64,
    rho: &[f64],
) -> RuleReference {
    let p = pool.len() / d;
    let row = |i: usize| &pool[i * d..(i + 1) * d];
    let unit = |v: &[f32]| {
        let n = v.iter().map(|&x| (x as f64).powi(2)).sum::<f64>().sqrt();
        v.iter().map(|&x| x as f64 / n).collect::<Vec<f64>>()
    };
    let rows: Vec<Vec<f64>> = (0..p).map(|i| unit(row(i))).collect();
    let g = |i: usize, j: usize| -> f64 {
        rows[i]
            .iter()
            .zip(&rows[j])
            .map(|(a, b)| a * b)
            .sum::<f64>()
            .clamp(-1.0, 1.0)
    };
    let _ = q;
    let dup: Vec<bool> = (0..p)
        .map(|i| {
            (0..i).any(|j| {
                row(j)
                    .iter()
                    .zip(row(i))
                    .all(|(a, b)| a.to_bits() == b.to_bits())
            })
        })
        .collect();
    let reference = |j: usize| -> f64 {
        let others: Vec<f64> = (0..p)
            .filter(|&k| k != j && !dup[k])
            .map(|k| 1.0 - g(j, k).powi(2))
            .collect();
        if others.is_empty() {
            1.0
        } else {
            others.iter().sum::<f64>() / others.len() as f64
        }
    };
    let close = |i: usize, j: usize, r: f64| {
        g(i, j) > 0.0 && 1.0 - g(i, j).powi(2) <= RECOMMENDED_THETA * r
    };
    #[derive(Clone, Copy, PartialEq)]
    enum S {
        Available,
        Picked,
        Marked(f64),
        Duplicate,
    }
    let mut state: Vec<S> = dup
        .iter()
        .map(|&x| if x { S::Duplicate } else { S::Available })
        .collect();
    let mark = |state: &mut Vec<S>, j: usize, r: f64| {
        for (k, s) in state.iter_mut().enumerate() {
            if k != j && *s == S::Available && close(k, j, r) {
                *s = S::Marked(r);
            }
        }
    };
    let (mut picks, mut dependent) = (Vec::new(), Vec::new());
    while picks.len() < k.min(p) {
        let score = |i: usize| -> f64 {
            if picks.is_empty() {
                rho[i]
            } else {
                rho[i] - gamma / picks.len() as f64 * picks.iter().map(|&s| g(i, s)).sum::<f64>()
            }
        };
        let best = |want: &dyn Fn(S) -> bool| -> Option<usize> {
            let mut best: Option<(usize, f64)> = None;
            for (i, &s) in state.iter().enumerate() {
                if want(s) && best.is_none_or(|(_, v)| score(i) > v) {
                    best = Some((i, score(i)));
                }
            }
            best.map(|(i, _)| i)
        };
        let (i, fill) = match best(&|s| s == S::Available) {
            Some(i) => (i, false),
            None => match best(&|s| matches!(s, S::Marked(_))) {
                Some(i) => (i, true),
                None => break,
            },
        };
        let r = reference(i);
        let near = (0..p).any(|m| matches!(state[m], S::Marked(rm) if m != i && close(i, m, rm)));
        if !fill && near {
            state[i] = S::Marked(r);
            mark(&mut state, i, r);
            continue;
        }
        state[i] = S::Picked;
        picks.push(i);
        dependent.push(fill);
        mark(&mut state, i, r);
    }
    let represented = state.iter().filter(|s| matches!(s, S::Marked(_))).count()
        + dependent.iter().filter(|&&x| x).count();
    RuleReference {
        picks,
        dependent,
        represented,
    }
}

/// The textbook case of repeated memories (issue 19), from
/// `tests/tests/data/textbook_repeats.json` (the bindings' tests read the
/// same file): three near-paraphrases of fact A and one record of fact B.
/// Top-K and the previous recommended rule pick A, A′ at K = 2; the
/// recommended setting picks A and B, as paper mode, centroid pursuit and
/// MMR do.
#[test]
fn textbook_repeats_recommended_picks_both_facts() {
    let case: serde_json::Value =
        serde_json::from_str(include_str!("data/textbook_repeats.json")).unwrap();
    let floats = |v: &serde_json::Value| -> Vec<f32> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect()
    };
    let q = floats(&case["query"]);
    let pool: Vec<f32> = case["pool"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(floats)
        .collect();
    let picks = |v: &serde_json::Value| -> Vec<usize> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as usize)
            .collect()
    };
    let input = Input::new(&q, &pool);
    let mut sel = Selector::new();
    for k in [2usize, 3] {
        let key = k.to_string();
        let rec = sel.select(&input, k, &Method::recommended()).unwrap();
        assert_eq!(
            rec.picks,
            picks(&case["recommended_picks"][&key]),
            "K = {k}"
        );
        let top = sel
            .select(&input, k, &Method::TopK(InputPolicy::default()))
            .unwrap();
        assert_eq!(top.picks, picks(&case["top_k_picks"][&key]), "K = {k}");
    }
    // K = 3: the third pick is A′, represented by A, taken because nothing
    // else is left; A″ is listed as skipped.
    let rec = sel.select(&input, 3, &Method::recommended()).unwrap();
    let dependent: Vec<bool> = rec.steps.iter().map(|s| s.dependent).collect();
    assert_eq!(dependent, [false, false, true]);
    assert_eq!(rec.skipped, vec![2]);
    // The previous rule (centroid pursuit with the same γ, no represented
    // candidates) picks A, A′; the composing selectors pick A and B.
    let mut storage = FixedWorkspace::<8, 8>::new();
    let r = recommend(&input, 2, &InputPolicy::default(), &mut storage.view()).unwrap();
    assert!(r.gamma < 0.05, "{}", r.gamma);
    let previous = pursuit(&input, 2, &r.options(), &mut storage.view())
        .unwrap()
        .picks()
        .to_vec();
    assert_eq!(previous, [0, 1]);
    for o in [PursuitOptions::default(), PursuitOptions::centroid(0.5)] {
        let got = pursuit(&input, 2, &o, &mut storage.view())
            .unwrap()
            .picks()
            .to_vec();
        assert_eq!(got, [0, 3], "{o:?}");
    }
    let m = mmr(&input, 2, &MmrOptions::PAPER, &mut storage.view())
        .unwrap()
        .picks()
        .to_vec();
    assert_eq!(m, [0, 3]);
}

/// Property: adding an exact copy (bit-identical row) of a picked memory,
/// or of any memory, anywhere in the pool never changes the recommended
/// setting's picks (the copy is merged into its twin; indices mapped back),
/// nor its steps, for ρ = b and every budget. Seeded random pools with
/// clusters of near-paraphrases.
#[test]
fn exact_copies_never_change_the_picks() {
    let mut sel = Selector::new();
    let mut cases = 0;
    for seed in 0..40u64 {
        let mut r = random::rng(9000 + seed);
        let p = r.random_range(4..40usize);
        let d = r.random_range(3..24usize);
        let (q, pool) = random::clustered_pool(seed, p, d, r.random_range(1..5), 0.2);
        for k in [1usize, 2, 3, 5, 10, p, p + 3] {
            let base = sel
                .select(&Input::new(&q, &pool), k, &Method::recommended())
                .unwrap();
            for copy_of_pick in [true, false] {
                let j = if copy_of_pick {
                    base.picks[r.random_range(0..base.picks.len())]
                } else {
                    r.random_range(0..p)
                };
                let at = r.random_range(0..=p);
                let mut grown = Vec::with_capacity((p + 1) * d);
                grown.extend_from_slice(&pool[..at * d]);
                grown.extend_from_slice(&pool[j * d..(j + 1) * d]);
                grown.extend_from_slice(&pool[at * d..]);
                let got = sel
                    .select(&Input::new(&q, &grown), k, &Method::recommended())
                    .unwrap();
                let back = |i: usize| match i.cmp(&at) {
                    std::cmp::Ordering::Less => i,
                    std::cmp::Ordering::Equal => j,
                    std::cmp::Ordering::Greater => i - 1,
                };
                let mapped: Vec<usize> = got.picks.iter().map(|&i| back(i)).collect();
                assert_eq!(mapped, base.picks, "seed {seed} k {k} copy of {j} at {at}");
                for (a, b) in got.steps.iter().zip(&base.steps) {
                    assert_eq!(
                        (a.score, a.dependent),
                        (b.score, b.dependent),
                        "seed {seed} k {k}"
                    );
                }
                assert_eq!(got.skipped.len(), base.skipped.len() + 1);
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 40 * 7 * 2);
}

/// Exact duplicates are merged before anything else: counted by
/// `recommend`, never picked (the pool is exhausted instead), listed as
/// skipped, and left out of the statistics.
#[test]
fn exact_duplicates_are_merged() {
    let (q, pool) = random::uniform_pool(77, 5, 8);
    let d = 8;
    // Rows 0..5, then rows 1, 3 and 1 again.
    let mut grown = pool.clone();
    for j in [1usize, 3, 1] {
        grown.extend_from_slice(&pool[j * d..(j + 1) * d]);
    }
    let mut storage = FixedWorkspace::<16, 16>::new();
    let policy = InputPolicy::default();
    let a = recommend(&Input::new(&q, &pool), 3, &policy, &mut storage.view()).unwrap();
    let b = recommend(&Input::new(&q, &grown), 3, &policy, &mut storage.view()).unwrap();
    assert_eq!((a.duplicates, b.duplicates), (0, 3));
    assert_eq!((a.gamma, a.depth), (b.gamma, b.depth));
    let sel = Selector::new()
        .select(&Input::new(&q, &grown), 8, &Method::recommended())
        .unwrap();
    assert_eq!(sel.picks.len(), 5);
    let mut picks = sel.picks.clone();
    picks.sort_unstable();
    assert_eq!(picks, [0, 1, 2, 3, 4]);
    assert_eq!(sel.stop, mempursuit::StopReason::PoolExhausted);
    assert!([5, 6, 7].iter().all(|i| sel.skipped.contains(i)));
}
