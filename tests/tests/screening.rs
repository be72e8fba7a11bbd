//! Exact screening (`Screening`, `core/src/pursuit.rs`, "Exact screening"): the screened
//! pursuit makes the unscreened pursuit's picks, weights and steps bit for
//! bit (the counter `verified` aside) on random and
//! adversarial pools — near-ties, exact duplicates, all-negative scores,
//! non-unit and excluded rows — for paper mode, the family, centroid
//! pursuit and the recommended setting, on f32, f16 and bf16 storage.

use mempursuit::half::{bf16, f16};
use mempursuit::{
    pursuit_using, AtPoolOptimum, DependentPicks, Element, Input, InputPolicy, InvalidCandidates,
    PursuitOptions, Relevance, Screening, Selection, Selector, Serial, Stopping,
};
use mempursuit_tests::checks::same_selection;
use mempursuit_tests::random;

fn run<E: Element>(input: &Input<'_, E>, k: usize, o: &PursuitOptions, s: Screening) -> Selection {
    run_counted(input, k, o, s).0
}

/// The selection and the rows it read.
fn run_counted<E: Element>(
    input: &Input<'_, E>,
    k: usize,
    o: &PursuitOptions,
    s: Screening,
) -> (Selection, u64) {
    let mut sel = Selector::new();
    let p = input.pool_size().unwrap_or(0);
    let mut ws = sel.workspace(p, k.min(p));
    let view = pursuit_using(input, k, o, s, &mut ws, &mut Serial).expect("valid input");
    (view.into(), view.rows_read())
}

fn option_sets() -> Vec<PursuitOptions> {
    let exclude = InputPolicy {
        invalid_candidates: InvalidCandidates::Exclude,
        ..InputPolicy::default()
    };
    [
        PursuitOptions::default(),
        PursuitOptions {
            ridge: 0.05,
            gamma: 0.5,
            ..PursuitOptions::default()
        },
        PursuitOptions::centroid(0.5),
        PursuitOptions::centroid(1.0),
        PursuitOptions {
            stopping: Stopping::PAPER_ADAPTIVE,
            ..PursuitOptions::default()
        },
        PursuitOptions {
            ridge: 0.3,
            at_pool_optimum: AtPoolOptimum::FillByRelevance,
            optimum_tolerance: 1e-3,
            ..PursuitOptions::default()
        },
        PursuitOptions {
            dependent_picks: DependentPicks::Skip,
            ..PursuitOptions::default()
        },
    ]
    .map(|o| PursuitOptions {
        input: exclude,
        ..o
    })
    .to_vec()
}

/// The pools: random, clustered, near-copies (near-ties), exact
/// duplicates, a query opposite to the pool (every score negative), and
/// rows scaled off unit norm with one zero (excluded) row.
fn pools(seed: u64) -> Vec<(String, Vec<f32>, Vec<f32>, usize)> {
    let mut out = Vec::new();
    let (p, d) = [(60, 24), (120, 48), (40, 8), (200, 96)][seed as usize % 4];
    let (q, pool) = random::uniform_pool(1000 + seed, p, d);
    out.push(("uniform".to_string(), q, pool, d));
    let (q, pool) = random::clustered_pool(2000 + seed, p, d, 5, 0.2);
    out.push(("clustered".to_string(), q, pool, d));
    let mut rng = random::rng(3000 + seed);
    let bases: Vec<Vec<f64>> = (0..4).map(|_| random::gaussian(&mut rng, d)).collect();
    let near = random::near_copies(&mut rng, &bases, p, 1e-6);
    out.push(("near-ties".to_string(), random::unit(&mut rng, d), near, d));
    let (q, mut dup) = random::clustered_pool(4000 + seed, p, d, 3, 0.3);
    for i in (1..p).step_by(3) {
        let (src, dst) = dup.split_at_mut(i * d);
        dst[..d].copy_from_slice(&src[(i - 1) * d..i * d]);
    }
    out.push(("duplicates".to_string(), q, dup, d));
    let (q, pool) = random::clustered_pool(5000 + seed, p, d, 4, 0.3);
    let mean: Vec<f64> = (0..d)
        .map(|k| pool.chunks_exact(d).map(|r| r[k] as f64).sum::<f64>())
        .collect();
    let neg: Vec<f64> = mean.iter().map(|x| -x).collect();
    let _ = q;
    out.push((
        "all-negative".to_string(),
        random::normalized(&neg),
        pool,
        d,
    ));
    let (q, mut scaled) = random::clustered_pool(6000 + seed, p, d, 4, 0.3);
    for (i, row) in scaled.chunks_exact_mut(d).enumerate() {
        let s = [1.0f32, 0.5, 2.0, 3.0][i % 4];
        row.iter_mut().for_each(|x| *x *= s);
    }
    scaled[5 * d..6 * d].fill(0.0);
    out.push(("scaled+excluded".to_string(), q, scaled, d));
    out
}

fn compare<E: Element>(
    name: &str,
    input: &Input<'_, E>,
    k: usize,
    o: &PursuitOptions,
) -> (u64, u64, u64) {
    let (off, read_off) = run_counted(input, k, o, Screening::Off);
    let (on, read_on) = run_counted(input, k, o, Screening::On);
    same_selection(&on, &off).unwrap_or_else(|e| panic!("{name} {o:?}: {e}"));
    let auto = run(input, k, o, Screening::Auto);
    same_selection(&auto, &off).unwrap_or_else(|e| panic!("auto {name} {o:?}: {e}"));
    let verified = on.steps.iter().map(|x| u64::from(x.verified)).sum::<u64>();
    // The unscreened pursuit reads P per pass: the query pass and one per
    // kept pick.
    assert!(read_off > 0);
    (read_on, read_off, verified)
}

#[test]
fn screened_picks_are_the_unscreened_picks_bit_for_bit() {
    let (mut on, mut off, mut verified, mut cases) = (0u64, 0u64, 0u64, 0);
    for seed in 0..4u64 {
        for (name, q, pool, d) in pools(seed) {
            let p = pool.len() / d;
            let scores: Vec<f32> = (0..p).map(|i| ((i * 37 % 11) as f32) / 11.0).collect();
            for o in option_sets() {
                for k in [7, p] {
                    for relevance in [Relevance::Similarity, Relevance::RankedScores(&scores)] {
                        let input = Input::new(&q, &pool).with_relevance(relevance);
                        let (a, b, v) = compare(&name, &input, k, &o);
                        on += a;
                        off += b;
                        verified += v;
                        cases += 1;
                    }
                }
            }
            // Reduced-precision storage: the same on the stored values.
            let h: Vec<f16> = pool.iter().map(|&x| f16::from_f32(x)).collect();
            let b16: Vec<bf16> = pool.iter().map(|&x| bf16::from_f32(x)).collect();
            for o in option_sets().into_iter().take(4) {
                compare(&name, &Input::with_storage(&q, &h), 20, &o);
                compare(&name, &Input::with_storage(&q, &b16), 20, &o);
            }
        }
    }
    assert!(cases >= 4 * 6 * 7 * 2 * 2, "{cases} cases");
    // The lazy path ran (candidates evaluated against their bounds, not
    // only whole passes). On these small, mostly isotropic pools it reads
    // about as many rows as the unscreened pursuit (BENCHMARKS.md, "Exact
    // screening", has the measurements on real pools).
    assert!(verified > 0);
    println!("rows read: screened {on}, unscreened {off}");
}

/// The recommended setting through `Method::run` equals the unscreened
/// centroid pursuit with the recommended γ wherever its rule for
/// represented candidates does not apply (nothing skipped, no dependent
/// pick; where it applies, `tests/tests/recommended.rs` checks it against
/// an independent implementation).
#[test]
fn the_recommended_setting_screens_exactly() {
    use mempursuit::{recommend, Method};
    let policy = InputPolicy {
        invalid_candidates: InvalidCandidates::Exclude,
        ..InputPolicy::default()
    };
    let mut compared = 0;
    for seed in 0..3u64 {
        for (name, q, pool, _d) in pools(seed) {
            let input = Input::new(&q, &pool);
            for k in [3, 10, 20] {
                let mut sel = Selector::new();
                let got = sel.select(&input, k, &Method::Recommended(policy)).unwrap();
                if !got.skipped.is_empty() || got.steps.iter().any(|s| s.dependent) {
                    continue;
                }
                compared += 1;
                let p = input.pool_size().unwrap();
                let mut ws = sel.workspace(p, k.min(p));
                let rec = recommend(&input, k, &policy, &mut ws).unwrap();
                let unit_free = input.with_relevance(input.relevance.unit_free());
                let want = run(&unit_free, k, &rec.options(), Screening::Off);
                same_selection(&got, &want).unwrap_or_else(|e| panic!("{name} K={k}: {e}"));
            }
        }
    }
    assert!(compared >= 10, "{compared} cases compared");
}

/// A reused workspace gives the screened pursuit exactly the results (the
/// counters included) of a fresh one: no state leaks between calls.
#[test]
fn screening_in_a_reused_workspace_is_deterministic() {
    let mut sel = Selector::new();
    for seed in 0..2u64 {
        for (name, q, pool, d) in pools(seed) {
            let p = pool.len() / d;
            for o in option_sets() {
                let input = Input::new(&q, &pool);
                let fresh = run(&input, 10, &o, Screening::On);
                let mut ws = sel.workspace(p, 10.min(p));
                let reused: Selection =
                    pursuit_using(&input, 10, &o, Screening::On, &mut ws, &mut Serial)
                        .unwrap()
                        .into();
                assert_eq!(reused, fresh, "{name} {o:?}");
            }
        }
    }
}
