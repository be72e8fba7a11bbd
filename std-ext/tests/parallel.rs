//! Threads change who computes what, never the result: a query split over
//! a `SplitPool` and a batch over scoped threads both equal the
//! single-threaded selection bit for bit (compared through `{:?}`, which
//! prints every f64 exactly and tells -0.0 from 0.0).

use mempursuit::half::{bf16, f16};
use mempursuit::parallel::{select_batch, SplitPool};
use mempursuit::{
    pursuit, AtPoolOptimum, Input, InputPolicy, InvalidCandidates, Method, MmrOptions,
    Normalization, PursuitOptions, Selector, Stopping,
};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use rand_distr::StandardNormal;

/// P × d Gaussian rows; `unit` normalizes them, otherwise norms vary in
/// [0.5, 2) (the Cosine policy rescales on the fly).
fn matrix(rows: usize, d: usize, unit: bool, rng: &mut StdRng) -> Vec<f32> {
    let mut m = Vec::with_capacity(rows * d);
    for _ in 0..rows {
        let v: Vec<f32> = (0..d)
            .map(|_| rng.sample::<f32, _>(StandardNormal))
            .collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        let target = if unit {
            1.0
        } else {
            rng.random_range(0.5f32..2.0)
        };
        m.extend(v.iter().map(|x| x / n * target));
    }
    m
}

/// A pool with near-duplicates (to exercise the solver's degenerate paths).
fn pool_with_duplicates(p: usize, d: usize, rng: &mut StdRng) -> Vec<f32> {
    let mut m = matrix(p, d, true, rng);
    for i in (3..p).step_by(5) {
        let (src, dst) = (i - 3, i);
        for k in 0..d {
            m[dst * d + k] = m[src * d + k] + 1e-4 * rng.sample::<f32, _>(StandardNormal);
        }
    }
    m
}

fn options() -> Vec<PursuitOptions> {
    vec![
        PursuitOptions::default(),
        PursuitOptions::centroid(0.5),
        PursuitOptions {
            stopping: Stopping::PAPER_ADAPTIVE,
            ..PursuitOptions::default()
        },
        PursuitOptions {
            gamma: 0.3,
            ridge: 1e-3,
            at_pool_optimum: AtPoolOptimum::FillByRelevance,
            ..PursuitOptions::default()
        },
        PursuitOptions {
            input: InputPolicy {
                normalization: Normalization::Cosine,
                invalid_candidates: InvalidCandidates::Exclude,
            },
            ..PursuitOptions::default()
        },
    ]
}

fn serial(input: &Input<'_>, k: usize, o: &PursuitOptions) -> String {
    let mut s = Selector::new();
    let p = input.pool_size().unwrap();
    let mut ws = s.workspace(p, k.min(p));
    let sel = pursuit(input, k, o, &mut ws).unwrap();
    format!("{:?}", mempursuit::Selection::from(sel))
}

fn split(pool: &mut SplitPool, input: &Input<'_>, k: usize, o: &PursuitOptions) -> String {
    let mut s = Selector::new();
    let p = input.pool_size().unwrap();
    let mut ws = s.workspace(p, k.min(p));
    let sel = pool.pursuit(input, k, o, &mut ws).unwrap();
    format!("{:?}", mempursuit::Selection::from(sel))
}

#[test]
fn split_query_equals_single_thread_bit_for_bit() {
    let mut rng = StdRng::seed_from_u64(7);
    let mut pools: Vec<SplitPool> = [1, 2, 3, 4, 7]
        .iter()
        .map(|&t| SplitPool::new(t).unwrap())
        .collect();
    assert_eq!(pools[1].threads(), 2);
    for &(p, d, k) in &[
        (200, 96, 20),
        (37, 13, 9),
        (9, 8, 9),
        (64, 384, 12),
        (1, 5, 3),
        (130, 24, 40),
    ] {
        for unit in [true, false] {
            let mut m = if unit {
                pool_with_duplicates(p, d, &mut rng)
            } else {
                matrix(p, d, false, &mut rng)
            };
            let q = matrix(1, d, true, &mut rng);
            for o in options() {
                if o.input.invalid_candidates == InvalidCandidates::Exclude && p > 3 {
                    m[2 * d] = f32::NAN; // row 2 is excluded
                }
                let input = Input::new(&q, &m);
                let want = serial(&input, k, &o);
                for pool in pools.iter_mut() {
                    let got = split(pool, &input, k, &o);
                    assert_eq!(got, want, "P={p} d={d} K={k} threads={}", pool.threads());
                }
            }
        }
    }
}

#[test]
fn split_query_equals_single_thread_for_half_storage() {
    let mut rng = StdRng::seed_from_u64(11);
    let (p, d, k) = (150, 72, 15);
    let m = pool_with_duplicates(p, d, &mut rng);
    let q = matrix(1, d, true, &mut rng);
    let h: Vec<f16> = m.iter().map(|&x| f16::from_f32(x)).collect();
    let b: Vec<bf16> = m.iter().map(|&x| bf16::from_f32(x)).collect();
    let hw: Vec<f32> = h.iter().map(|x| x.to_f32()).collect();
    let bw: Vec<f32> = b.iter().map(|x| x.to_f32()).collect();
    let mut pool = SplitPool::new(3).unwrap();
    for o in options() {
        let mut s = Selector::new();
        let mut ws = s.workspace(p, k);
        let half_split = format!(
            "{:?}",
            mempursuit::Selection::from(
                pool.pursuit(&Input::with_storage(&q, &h), k, &o, &mut ws)
                    .unwrap()
            )
        );
        // f16 storage = f32 selection on the widened values, split or not.
        assert_eq!(half_split, serial(&Input::new(&q, &hw), k, &o));
        let mut ws = s.workspace(p, k);
        let bf_split = format!(
            "{:?}",
            mempursuit::Selection::from(
                pool.pursuit(&Input::with_storage(&q, &b), k, &o, &mut ws)
                    .unwrap()
            )
        );
        assert_eq!(bf_split, serial(&Input::new(&q, &bw), k, &o));
    }
}

#[test]
fn batch_equals_sequential_bit_for_bit() {
    let mut rng = StdRng::seed_from_u64(3);
    let d = 48;
    let data: Vec<(Vec<f32>, Vec<f32>)> = (0..23)
        .map(|i| {
            let p = 10 + (i * 7) % 60;
            (
                matrix(1, d, true, &mut rng),
                pool_with_duplicates(p, d, &mut rng),
            )
        })
        .collect();
    let inputs: Vec<Input<'_>> = data.iter().map(|(q, m)| Input::new(q, m)).collect();
    let methods = [
        Method::Pursuit(PursuitOptions::default()),
        Method::Pursuit(PursuitOptions::centroid(0.5)),
        Method::TopK(InputPolicy::default()),
        Method::Mmr(MmrOptions {
            lambda: 0.5,
            input: InputPolicy::default(),
        }),
    ];
    for method in &methods {
        let mut s = Selector::new();
        let want: Vec<String> = inputs
            .iter()
            .map(|i| format!("{:?}", s.select(i, 12, method).unwrap()))
            .collect();
        for threads in [1, 2, 3, 8, 64] {
            let got: Vec<String> = select_batch(&inputs, 12, method, threads)
                .into_iter()
                .map(|r| format!("{:?}", r.unwrap()))
                .collect();
            assert_eq!(got, want, "{method:?} threads={threads}");
        }
    }
    // Errors come back in place, per input.
    let bad_q = vec![0.0f32; d];
    let mut with_bad = inputs.clone();
    with_bad[4] = Input::new(&bad_q, &data[4].1);
    let out = select_batch(&with_bad, 5, &methods[0], 2);
    assert!(out[4].is_err());
    assert!(out.iter().enumerate().all(|(i, r)| (i == 4) == r.is_err()));
    assert!(select_batch::<f32>(&[], 5, &methods[0], 4).is_empty());
}
