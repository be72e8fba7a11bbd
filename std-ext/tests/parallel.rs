//! Threads change who computes what, never the result: a query split over
//! a `SplitPool` and a batch over scoped threads both equal the
//! single-threaded selection bit for bit (compared through `{:?}`, which
//! prints every f64 exactly and tells -0.0 from 0.0).
//!
//! Under Miri (`.ci/miri.sh`, which checks the worker protocol for
//! undefined behaviour and data races) the shapes are cut to a few small
//! ones.

use mempursuit::half::{bf16, f16};
use mempursuit::parallel::SplitPool;
use mempursuit::parallel::{
    batch_plan_for, plan_batch, select_batch, select_batch_with, thread_count, BatchPlan,
    BatchShape, CacheInfo, ThreadPlan, L2_FILL, MIN_GROUP_BYTES, MIN_SPLIT_BYTES,
};
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
    let threads: &[usize] = if cfg!(miri) {
        &[2, 7]
    } else {
        &[1, 2, 3, 4, 7]
    };
    let mut pools: Vec<SplitPool> = threads
        .iter()
        .map(|&t| SplitPool::new(t).unwrap())
        .collect();
    assert_eq!(pools[0].threads(), threads[0]);
    let shapes: &[(usize, usize, usize)] = if cfg!(miri) {
        &[(37, 13, 6), (9, 8, 9)]
    } else {
        &[
            (200, 96, 20),
            (37, 13, 9),
            (9, 8, 9),
            (64, 384, 12),
            (1, 5, 3),
            (130, 24, 40),
        ]
    };
    for &(p, d, k) in shapes {
        for unit in [true, false] {
            if cfg!(miri) && !unit {
                continue;
            }
            let mut m = if unit {
                pool_with_duplicates(p, d, &mut rng)
            } else {
                matrix(p, d, false, &mut rng)
            };
            let q = matrix(1, d, true, &mut rng);
            for o in options().into_iter().take(if cfg!(miri) { 2 } else { 5 }) {
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
    let (p, d, k) = if cfg!(miri) {
        (20, 9, 4)
    } else {
        (150, 72, 15)
    };
    let m = pool_with_duplicates(p, d, &mut rng);
    let q = matrix(1, d, true, &mut rng);
    let h: Vec<f16> = m.iter().map(|&x| f16::from_f32(x)).collect();
    let b: Vec<bf16> = m.iter().map(|&x| bf16::from_f32(x)).collect();
    let hw: Vec<f32> = h.iter().map(|x| x.to_f32()).collect();
    let bw: Vec<f32> = b.iter().map(|x| x.to_f32()).collect();
    let mut pool = SplitPool::new(3).unwrap();
    for o in options().into_iter().take(if cfg!(miri) { 1 } else { 5 }) {
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
    let (d, queries, k) = if cfg!(miri) { (8, 5, 3) } else { (48, 23, 12) };
    let data: Vec<(Vec<f32>, Vec<f32>)> = (0..queries)
        .map(|i| {
            let p = if cfg!(miri) { 6 + i } else { 10 + (i * 7) % 60 };
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
            .map(|i| format!("{:?}", s.select(i, k, method).unwrap()))
            .collect();
        let threads: &[usize] = if cfg!(miri) {
            &[2, 8]
        } else {
            &[1, 2, 3, 8, 64]
        };
        for &threads in threads {
            // These pools are small: the automatic plan runs them on few
            // threads (rule 4), on the calling thread alone under Miri's
            // sizes, so Miri (no arithmetic to check there, a third of
            // this test's time) skips it.
            if !cfg!(miri) {
                let got: Vec<String> = select_batch(&inputs, k, method, threads)
                    .into_iter()
                    .map(|r| format!("{:?}", r.unwrap()))
                    .collect();
                assert_eq!(got, want, "{method:?} threads={threads}");
            }
            // Whole queries on every thread, forced.
            let got: Vec<String> =
                select_batch_with(&inputs, k, method, threads, BatchPlan::Queries)
                    .into_iter()
                    .map(|r| format!("{:?}", r.unwrap()))
                    .collect();
            assert_eq!(got, want, "{method:?} threads={threads} (queries)");
        }
    }
    // Errors come back in place, per input.
    let bad_q = vec![0.0f32; d];
    let mut with_bad = inputs.clone();
    with_bad[4] = Input::new(&bad_q, &data[4].1);
    let out = select_batch_with(&with_bad, 5, &methods[0], 2, BatchPlan::Queries);
    assert!(out[4].is_err());
    assert!(out.iter().enumerate().all(|(i, r)| (i == 4) == r.is_err()));
    assert!(select_batch::<f32>(&[], 5, &methods[0], 4).is_empty());
}

/// The decision rule of `BatchPlan::Auto` (`plan_batch`), pinned on the
/// shapes of issue 22 and the cache sizes of the CPU families at hand:
/// whole queries while a pool fits in L2_FILL of a core's L2, the fewest
/// threads per query whose shares fit otherwise (all of them if none
/// does), spare threads splitting further when queries are scarce, and no
/// more groups than a small batch is worth.
#[test]
#[cfg_attr(
    miri,
    ignore = "arithmetic of the plan only (no threads, no unsafe code); \
              every_batch_plan_gives_identical_results runs the plans under Miri"
)]
fn batch_plan_rule() {
    const KIB: usize = 1 << 10;
    const MIB: usize = 1 << 20;
    let plan = |groups, split| ThreadPlan { groups, split };
    let shape = |pool_bytes: usize, queries: usize| BatchShape {
        pool_bytes,
        queries,
        budget: 20,
    };
    let f32_pool = |p: usize, d: usize| p * d * 4;
    let f16_pool = |p: usize, d: usize| p * d * 2;
    // (pool bytes, queries, threads, L2 bytes) → plan, at K = 20
    let cases = [
        // 2 threads, Zen 4 (1 MiB L2): P = 1000 and P = 200 at d = 1536 in
        // f32 do not fit (6.1 MB, 1.2 MB): split; P = 200 in f16 (0.6 MB)
        // and d = 384 (0.3 MB) fit: whole queries.
        (f32_pool(1000, 1536), 32, 2, MIB, plan(1, 2)),
        (f32_pool(200, 1536), 32, 2, MIB, plan(1, 2)),
        (f16_pool(200, 1536), 32, 2, MIB, plan(2, 1)),
        (f32_pool(200, 384), 32, 2, MIB, plan(2, 1)),
        // Zen 2/3 (512 KiB): P = 200 f16 no longer fits.
        (f16_pool(200, 1536), 32, 2, 512 * KIB, plan(1, 2)),
        // A Xeon with 2 MiB: P = 200 f32 fits (1.2 MB ≤ 1.5 MiB).
        (f32_pool(200, 1536), 32, 2, 2 * MIB, plan(2, 1)),
        (f32_pool(500, 1536), 32, 2, 2 * MIB, plan(1, 2)),
        // 16 threads: the fewest threads per query whose shares fit, the
        // rest as concurrent queries (a mix); no share fits: all 16.
        (f32_pool(200, 1536), 32, 16, MIB, plan(8, 2)),
        (f32_pool(500, 1536), 32, 16, MIB, plan(4, 4)),
        (f32_pool(1000, 1536), 32, 16, MIB, plan(2, 8)),
        (f32_pool(5000, 1536), 32, 16, MIB, plan(1, 16)),
        // 6 threads: shares per divisor (1, 2, 3, 6).
        (f32_pool(250, 1536), 32, 6, MIB, plan(3, 2)),
        (f32_pool(350, 1536), 32, 6, MIB, plan(2, 3)),
        (f32_pool(400, 1536), 32, 6, MIB, plan(1, 6)),
        // Fewer queries than groups: spare threads split further, but only
        // pools worth splitting (≥ MIN_SPLIT_BYTES).
        (f32_pool(200, 1536), 3, 16, MIB, plan(3, 5)),
        (f32_pool(100, 384), 1, 4, MIB, plan(1, 1)),
        (MIN_SPLIT_BYTES, 1, 4, MIB, plan(1, 4)),
        (MIN_SPLIT_BYTES - 1, 1, 4, 64 * KIB, plan(1, 1)),
        // Small batches: no more groups than MIN_GROUP_BYTES each.
        // 32 × P = 100, d = 384 (150 KB, 21 passes: 100 MB): 12 groups.
        (f32_pool(100, 384), 32, 2, MIB, plan(2, 1)),
        (f32_pool(100, 384), 32, 16, MIB, plan(12, 1)),
        // 3 tiny pools: the calling thread alone.
        (128, 3, 8, MIB, plan(1, 1)),
        // One thread, no queries, no cache.
        (f32_pool(1000, 1536), 32, 1, MIB, plan(1, 1)),
        (f32_pool(1000, 1536), 0, 2, MIB, plan(1, 2)),
        (f32_pool(1000, 1536), 32, 0, MIB, plan(1, 1)),
        (f32_pool(1000, 1536), 32, 2, 0, plan(1, 2)),
    ];
    for (bytes, queries, threads, l2, want) in cases {
        let got = plan_batch(&shape(bytes, queries), threads, l2);
        assert_eq!(
            got, want,
            "{bytes} B, {queries} queries, {threads} threads, L2 {l2}"
        );
        assert!(got.threads() <= threads.max(1));
        assert!(got.groups >= 1 && got.split >= 1 && got.groups <= queries.max(1));
    }
    // The boundaries: a pool of exactly L2_FILL · L2 still fits, one byte
    // more does not; a batch streaming 2 · MIN_GROUP_BYTES gets 2 groups,
    // one byte less 1.
    let fill = (L2_FILL * MIB as f64) as usize;
    assert_eq!(plan_batch(&shape(fill, 32), 2, MIB), plan(2, 1));
    assert_eq!(plan_batch(&shape(fill + 1, 32), 2, MIB), plan(1, 2));
    let two = BatchShape {
        pool_bytes: MIN_GROUP_BYTES,
        queries: 2,
        budget: 0,
    };
    assert_eq!(two.streamed_bytes(), 2 * MIN_GROUP_BYTES);
    assert_eq!(plan_batch(&two, 2, 64 * MIB), plan(2, 1));
    let less = BatchShape {
        pool_bytes: MIN_GROUP_BYTES - 1,
        ..two
    };
    assert_eq!(plan_batch(&less, 2, 64 * MIB), plan(1, 1));
    // Fixed plans ignore the cache and the batch size; Auto is `plan_batch`.
    let cache = CacheInfo::with_l2(MIB);
    let big = shape(f32_pool(1000, 1536), 32);
    let tiny = shape(1000, 32);
    assert_eq!(BatchPlan::Queries.resolve(&big, 4, &cache), plan(4, 1));
    assert_eq!(
        BatchPlan::Queries.resolve(&shape(1000, 3), 4, &cache),
        plan(3, 1)
    );
    assert_eq!(BatchPlan::Split.resolve(&tiny, 4, &cache), plan(1, 4));
    assert_eq!(BatchPlan::SplitBy(2).resolve(&tiny, 5, &cache), plan(2, 2));
    assert_eq!(BatchPlan::SplitBy(9).resolve(&tiny, 4, &cache), plan(1, 4));
    assert_eq!(BatchPlan::SplitBy(0).resolve(&tiny, 4, &cache), plan(4, 1));
    assert_eq!(
        BatchPlan::Auto.resolve(&big, 16, &cache),
        plan_batch(&big, 16, MIB)
    );
    // Names round-trip; bad names are errors that say what to write.
    for p in [
        BatchPlan::Auto,
        BatchPlan::Queries,
        BatchPlan::Split,
        BatchPlan::SplitBy(3),
    ] {
        assert_eq!(p.name().parse::<BatchPlan>(), Ok(p));
    }
    for bad in ["", "split-by-0", "split-by-x", "Split"] {
        let e = bad.parse::<BatchPlan>().unwrap_err().to_string();
        assert!(e.contains("split-by-N"), "{e}");
    }
    // The shape of a batch: the median pool; top-K and MMR (passes not
    // split) always run whole queries.
    let q = vec![1.0f32; 4];
    let (small, large) = (vec![0.5f32; 4 * 8], vec![0.5f32; 4 * 64]);
    let inputs = [
        Input::new(&q, &small),
        Input::new(&q, &large),
        Input::new(&q, &large),
    ];
    assert_eq!(
        BatchShape::of(&inputs, 7),
        BatchShape {
            pool_bytes: 4 * 64 * 4,
            queries: 3,
            budget: 7
        }
    );
    let topk = Method::TopK(InputPolicy::default());
    assert_eq!(
        batch_plan_for(&inputs, 5, &topk, 4, BatchPlan::Split),
        plan(3, 1)
    );
    let pursuit = Method::Pursuit(PursuitOptions::default());
    assert_eq!(
        batch_plan_for(&inputs, 5, &pursuit, 4, BatchPlan::Split),
        plan(1, 4)
    );
    // Detection gives a usable size (sysfs, CPUID or the 1 MiB fallback).
    let c = CacheInfo::detect();
    assert!(c.l2_bytes >= 64 * KIB, "{c:?}");
    assert_eq!(c, CacheInfo::detect());
}

/// Every batch plan gives the single-threaded selections bit for bit: whole
/// queries, split queries, groups of split queries, for the pursuit, the
/// centroid pursuit, the recommended configuration and MMR, f32 and f16
/// storage, thread counts that do and do not divide.
#[test]
fn every_batch_plan_gives_identical_results() {
    let mut rng = StdRng::seed_from_u64(22);
    let (d, queries, k) = if cfg!(miri) { (8, 4, 3) } else { (40, 13, 10) };
    let data: Vec<(Vec<f32>, Vec<f32>)> = (0..queries)
        .map(|i| {
            let p = if cfg!(miri) {
                9 + i
            } else {
                17 + (i * 11) % 70
            };
            (
                matrix(1, d, true, &mut rng),
                pool_with_duplicates(p, d, &mut rng),
            )
        })
        .collect();
    let halves: Vec<Vec<f16>> = data
        .iter()
        .map(|(_, m)| m.iter().map(|&x| f16::from_f32(x)).collect())
        .collect();
    let inputs: Vec<Input<'_>> = data.iter().map(|(q, m)| Input::new(q, m)).collect();
    let half_inputs: Vec<Input<'_, f16>> = data
        .iter()
        .zip(&halves)
        .map(|((q, _), h)| Input::with_storage(q, h))
        .collect();
    let methods = [
        Method::Pursuit(PursuitOptions::default()),
        Method::Pursuit(PursuitOptions::centroid(0.5)),
        Method::Recommended(InputPolicy::default()),
        Method::Mmr(MmrOptions {
            lambda: 0.5,
            input: InputPolicy::default(),
        }),
    ];
    // Under Miri only the mix, 2 concurrent queries each split over 2
    // threads (several `SplitPool`s at once): whole queries on threads are
    // batch_equals_sequential_bit_for_bit's, one split query the split
    // tests', and Auto runs these small pools on the calling thread.
    let plans: &[BatchPlan] = if cfg!(miri) {
        &[BatchPlan::SplitBy(2)]
    } else {
        &[
            BatchPlan::Auto,
            BatchPlan::Queries,
            BatchPlan::Split,
            BatchPlan::SplitBy(2),
            BatchPlan::SplitBy(3),
        ]
    };
    let threads: &[usize] = if cfg!(miri) { &[4] } else { &[1, 2, 3, 4, 6] };
    assert_eq!(
        batch_plan_for(&inputs, k, &methods[0], 4, BatchPlan::SplitBy(2)),
        ThreadPlan {
            groups: 2,
            split: 2
        }
    );
    for method in methods.iter().take(if cfg!(miri) { 1 } else { 4 }) {
        let mut s = Selector::new();
        let want: Vec<String> = inputs
            .iter()
            .map(|i| format!("{:?}", s.select(i, k, method).unwrap()))
            .collect();
        // Under Miri the f16 batches are skipped (the same thread protocol).
        let want_half: Vec<String> = half_inputs
            .iter()
            .take(if cfg!(miri) { 0 } else { queries })
            .map(|i| format!("{:?}", s.select(i, k, method).unwrap()))
            .collect();
        for &t in threads {
            for &plan in plans {
                let got: Vec<String> = select_batch_with(&inputs, k, method, t, plan)
                    .into_iter()
                    .map(|r| format!("{:?}", r.unwrap()))
                    .collect();
                assert_eq!(got, want, "{method:?} threads={t} plan={plan}");
                if cfg!(miri) {
                    continue;
                }
                let got: Vec<String> = select_batch_with(&half_inputs, k, method, t, plan)
                    .into_iter()
                    .map(|r| format!("{:?}", r.unwrap()))
                    .collect();
                assert_eq!(got, want_half, "f16 {method:?} threads={t} plan={plan}");
            }
        }
    }
    // Errors come back in place under a split plan too.
    let bad_q = vec![0.0f32; d];
    let mut with_bad = inputs.clone();
    with_bad[1] = Input::new(&bad_q, &data[1].1);
    let out = select_batch_with(&with_bad, k, &methods[0], 2, BatchPlan::Split);
    assert!(out.iter().enumerate().all(|(i, r)| (i == 1) == r.is_err()));
}

/// threads = 0 is one thread per available core in every batch entry
/// point (as `Store::select_batch` and the Python bindings read it), not
/// one thread: the plan for 0 is the plan for the core count, and the
/// results are those of one thread.
#[test]
#[cfg_attr(miri, ignore = "threads and the core count: no unsafe code of its own")]
fn zero_threads_is_one_per_core() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(thread_count(0), cores);
    assert_eq!((thread_count(1), thread_count(7)), (1, 7));
    let mut rng = StdRng::seed_from_u64(29);
    let d = 64;
    let pools: Vec<Vec<f32>> = (0..6).map(|_| matrix(300, d, true, &mut rng)).collect();
    let queries: Vec<Vec<f32>> = (0..6).map(|_| matrix(1, d, true, &mut rng)).collect();
    let inputs: Vec<Input<'_>> = queries
        .iter()
        .zip(&pools)
        .map(|(q, p)| Input::new(q, p))
        .collect();
    let method = Method::Pursuit(PursuitOptions::default());
    for plan in [BatchPlan::Auto, BatchPlan::Queries, BatchPlan::Split] {
        assert_eq!(
            batch_plan_for(&inputs, 5, &method, 0, plan),
            batch_plan_for(&inputs, 5, &method, cores, plan),
            "{plan:?}"
        );
    }
    // With 2 or more cores, 0 is not 1: whole queries on every core.
    if cores >= 2 {
        assert_eq!(
            batch_plan_for(&inputs, 5, &method, 0, BatchPlan::Queries).groups,
            cores.min(inputs.len())
        );
    }
    let one: Vec<String> = select_batch(&inputs, 5, &method, 1)
        .into_iter()
        .map(|r| format!("{:?}", r.unwrap()))
        .collect();
    let zero: Vec<String> = select_batch(&inputs, 5, &method, 0)
        .into_iter()
        .map(|r| format!("{:?}", r.unwrap()))
        .collect();
    assert_eq!(zero, one);
}
