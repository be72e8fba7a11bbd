//! Every input error of every selector, the edge cases of the input
//! contract (K = 0, K > P, P = 0, the `Exclude` policy, non-unit vectors
//! under `Cosine`), and that nothing the caller passed is modified.

use mempursuit::{
    AtPoolOptimum, Error, Input, InputPolicy, InvalidCandidates, Method, MmrOptions, Normalization,
    PursuitOptions, Relevance, Selection, Selector, StopReason, Stopping, VectorFault, MAX_NORM,
    MIN_NORM,
};
use mempursuit_tests::random;

const D: usize = 4;

/// A valid query and a valid 6 × 4 pool of unit rows.
fn valid() -> (Vec<f32>, Vec<f32>) {
    random::clustered_pool(1, 6, D, 2, 0.3)
}

/// One method of each kind (the paper's pursuit, centroid pursuit, top-K,
/// MMR), all with the given input policy.
fn all_methods(policy: InputPolicy) -> Vec<Method> {
    vec![
        Method::Pursuit(PursuitOptions {
            input: policy,
            ..PursuitOptions::default()
        }),
        Method::Pursuit(PursuitOptions {
            input: policy,
            ..PursuitOptions::centroid(0.5)
        }),
        Method::TopK(policy),
        Method::Mmr(MmrOptions {
            lambda: 0.5,
            input: policy,
        }),
    ]
}

fn select(input: &Input<'_>, k: usize, m: &Method) -> Result<Selection, Error> {
    Selector::new().select(input, k, m)
}

/// Runs every method and checks that each returns `expected`.
fn assert_error_all(input: &Input<'_>, k: usize, expected: Error) {
    for m in all_methods(InputPolicy::default()) {
        let got = select(input, k, &m);
        match (&got, &expected) {
            // NaN payloads do not compare equal: compare the shape instead.
            (
                Err(Error::Candidate {
                    row,
                    fault: VectorFault::NonFinite { index, value },
                }),
                Error::Candidate {
                    row: r2,
                    fault:
                        VectorFault::NonFinite {
                            index: i2,
                            value: v2,
                        },
                },
            ) => {
                assert_eq!((row, index), (r2, i2), "{m:?}");
                assert!(value.to_bits() == v2.to_bits() || (value.is_nan() && v2.is_nan()));
            }
            (
                Err(Error::Query(VectorFault::NonFinite { index, value })),
                Error::Query(VectorFault::NonFinite {
                    index: i2,
                    value: v2,
                }),
            ) => {
                assert_eq!(index, i2, "{m:?}");
                assert!(value.to_bits() == v2.to_bits() || (value.is_nan() && v2.is_nan()));
            }
            _ => assert_eq!(got, Err(expected), "{m:?}"),
        }
    }
}

#[test]
fn zero_dimension() {
    assert_error_all(&Input::new(&[], &[]), 3, Error::ZeroDimension);
    assert_error_all(&Input::new(&[], &[1.0, 2.0]), 3, Error::ZeroDimension);
}

#[test]
fn candidates_not_a_multiple_of_d() {
    let (q, pool) = valid();
    let e = Error::ShapeMismatch {
        candidates_len: 23,
        dim: 4,
    };
    assert_error_all(&Input::new(&q, &pool[..23]), 3, e);
    assert!(e.to_string().contains("23") && e.to_string().contains('4'));
}

#[test]
fn relevance_of_the_wrong_length_or_not_finite() {
    let (q, pool) = valid();
    for n in [0usize, 5, 7] {
        let rel = vec![0.5f32; n];
        let input = Input::new(&q, &pool).with_relevance(Relevance::Scores(&rel));
        assert_error_all(
            &input,
            3,
            Error::RelevanceLength {
                expected: 6,
                found: n,
            },
        );
    }
    let mut rel = vec![0.5f32; 6];
    rel[4] = f32::INFINITY;
    let input = Input::new(&q, &pool).with_relevance(Relevance::Scores(&rel));
    assert_error_all(
        &input,
        3,
        Error::NonFiniteRelevance {
            index: 4,
            value: f32::INFINITY,
        },
    );
}

#[test]
fn non_finite_values_name_the_row_and_element() {
    let (q, pool) = valid();
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut qb = q.clone();
        qb[2] = bad;
        assert_error_all(
            &Input::new(&qb, &pool),
            3,
            Error::Query(VectorFault::NonFinite {
                index: 2,
                value: bad,
            }),
        );
        let mut pb = pool.clone();
        pb[3 * D + 1] = bad;
        let e = Error::Candidate {
            row: 3,
            fault: VectorFault::NonFinite {
                index: 1,
                value: bad,
            },
        };
        assert_error_all(&Input::new(&q, &pb), 3, e);
        let msg = e.to_string();
        assert!(
            msg.contains("candidate 3") && msg.contains("element 1"),
            "{msg}"
        );
        // The first bad row is reported.
        pb[5 * D] = bad;
        assert_error_all(&Input::new(&q, &pb), 3, e);
    }
}

#[test]
fn zero_vectors() {
    let (q, pool) = valid();
    let zq = vec![0.0f32; D];
    assert_error_all(
        &Input::new(&zq, &pool),
        3,
        Error::Query(VectorFault::ZeroNorm),
    );
    let mut pb = pool.clone();
    pb[2 * D..3 * D].fill(0.0);
    assert_error_all(
        &Input::new(&q, &pb),
        3,
        Error::Candidate {
            row: 2,
            fault: VectorFault::ZeroNorm,
        },
    );
}

#[test]
fn norms_out_of_range() {
    let (q, pool) = valid();
    for scale in [1e-20f32, 1e20] {
        // Row 1 = scale · e1 (norm = scale exactly in f64).
        let mut pb = pool.clone();
        pb[D..2 * D].copy_from_slice(&[scale, 0.0, 0.0, 0.0]);
        let got = select(
            &Input::new(&q, &pb),
            3,
            &Method::TopK(InputPolicy::default()),
        );
        match got {
            Err(Error::Candidate {
                row: 1,
                fault: VectorFault::NormOutOfRange { norm },
            }) => {
                assert!((norm / scale as f64 - 1.0).abs() < 1e-6, "{norm}");
                assert!(!(MIN_NORM..=MAX_NORM).contains(&norm));
            }
            other => panic!("scale {scale}: {other:?}"),
        }
        let qs: Vec<f32> = q.iter().map(|x| x * scale).collect();
        for m in all_methods(InputPolicy::default()) {
            let got = select(&Input::new(&qs, &pool), 3, &m);
            assert!(
                matches!(got, Err(Error::Query(VectorFault::NormOutOfRange { .. }))),
                "{got:?}"
            );
        }
    }
    // Just inside the range is fine (cosine normalization).
    let mut pb = pool.clone();
    pb[D..2 * D].copy_from_slice(&[1e-11, 0.0, 0.0, 0.0]);
    assert!(select(
        &Input::new(&q, &pb),
        3,
        &Method::TopK(InputPolicy::default())
    )
    .is_ok());
}

#[test]
fn require_unit_rejects_non_unit_vectors() {
    let (q, pool) = valid();
    let policy = InputPolicy {
        normalization: Normalization::RequireUnit,
        invalid_candidates: InvalidCandidates::Reject,
    };
    let mut pb = pool.clone();
    pb[4 * D..5 * D].iter_mut().for_each(|x| *x *= 2.0);
    for m in all_methods(policy) {
        match select(&Input::new(&q, &pb), 3, &m) {
            Err(Error::Candidate {
                row: 4,
                fault: VectorFault::NotUnitNorm { norm },
            }) => assert!((norm - 2.0).abs() < 1e-6),
            other => panic!("{m:?}: {other:?}"),
        }
        let qs: Vec<f32> = q.iter().map(|x| x * 0.5).collect();
        match select(&Input::new(&qs, &pool), 3, &m) {
            Err(Error::Query(VectorFault::NotUnitNorm { norm })) => {
                assert!((norm - 0.5).abs() < 1e-6)
            }
            other => panic!("{m:?}: {other:?}"),
        }
        // Unit vectors pass.
        assert!(select(&Input::new(&q, &pool), 3, &m).is_ok());
    }
}

fn pursuit_err(o: PursuitOptions) -> Result<Selection, Error> {
    let (q, pool) = valid();
    select(&Input::new(&q, &pool), 3, &Method::Pursuit(o))
}

#[test]
fn invalid_ridge_gamma_lambda_stopping_tolerance() {
    for ridge in [-1.0, f64::NAN, f64::NEG_INFINITY] {
        let got = pursuit_err(PursuitOptions {
            ridge,
            ..PursuitOptions::default()
        });
        assert!(
            matches!(got, Err(Error::InvalidRidge(v)) if v.to_bits() == ridge.to_bits()),
            "{got:?}"
        );
    }
    for gamma in [0.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
        let got = pursuit_err(PursuitOptions {
            gamma,
            ..PursuitOptions::default()
        });
        assert!(
            matches!(got, Err(Error::InvalidGamma(_))),
            "{gamma}: {got:?}"
        );
        let got = pursuit_err(PursuitOptions::centroid(gamma));
        assert!(
            matches!(got, Err(Error::InvalidGamma(_))),
            "{gamma}: {got:?}"
        );
    }
    let (q, pool) = valid();
    for lambda in [-0.1, 1.1, f64::NAN] {
        let got = select(
            &Input::new(&q, &pool),
            3,
            &Method::Mmr(MmrOptions {
                lambda,
                input: InputPolicy::default(),
            }),
        );
        assert!(
            matches!(got, Err(Error::InvalidMmrLambda(_))),
            "{lambda}: {got:?}"
        );
    }
    for (tau, patience, eps) in [
        (f64::NAN, 2, 1e-12),
        (-1e-5, 2, 1e-12),
        (f64::INFINITY, 2, 1e-12),
        (1e-5, 0, 1e-12),
        (1e-5, 2, -1.0),
        (1e-5, 2, f64::NAN),
        (1e-5, 2, f64::INFINITY),
    ] {
        let o = PursuitOptions {
            stopping: Stopping::Adaptive { tau, patience, eps },
            ..PursuitOptions::default()
        };
        assert_eq!(
            pursuit_err(o),
            Err(Error::InvalidStopping),
            "{tau} {patience} {eps}"
        );
        let o = PursuitOptions {
            stopping: Stopping::Adaptive { tau, patience, eps },
            ..PursuitOptions::centroid(0.5)
        };
        assert_eq!(pursuit_err(o), Err(Error::InvalidStopping));
    }
    for tol in [-1.0, f64::NAN, f64::INFINITY] {
        let got = pursuit_err(PursuitOptions {
            optimum_tolerance: tol,
            at_pool_optimum: AtPoolOptimum::Stop,
            ..PursuitOptions::default()
        });
        assert!(
            matches!(got, Err(Error::InvalidOptimumTolerance(_))),
            "{got:?}"
        );
    }
    // Valid extremes.
    assert!(pursuit_err(PursuitOptions {
        ridge: 0.0,
        ..PursuitOptions::default()
    })
    .is_ok());
    assert!(pursuit_err(PursuitOptions::centroid(1.0)).is_ok());
    assert!(pursuit_err(PursuitOptions {
        stopping: Stopping::Adaptive {
            tau: 0.0,
            patience: 1,
            eps: 0.0
        },
        ..PursuitOptions::default()
    })
    .is_ok());
}

#[test]
fn budget_zero_larger_than_pool_and_empty_pool() {
    let (q, pool) = valid();
    for m in all_methods(InputPolicy::default()) {
        let s = select(&Input::new(&q, &pool), 0, &m).unwrap();
        assert!(s.picks.is_empty() && s.steps.is_empty() && s.weights.is_empty());
        assert_eq!(s.stop, StopReason::Budget);
        let s = select(&Input::new(&q, &pool), 100, &m).unwrap();
        let mut sorted = s.picks.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..6).collect::<Vec<_>>(), "{m:?}");
        // Fewer than K came back because the pool ran out (issue 30, item 6).
        assert_eq!(s.stop, StopReason::PoolExhausted, "{m:?}");
        let s = select(&Input::new(&q, &pool), 6, &m).unwrap();
        assert_eq!((s.picks.len(), s.stop), (6, StopReason::Budget), "{m:?}");
        let s = select(&Input::new(&q, &[]), 5, &m).unwrap();
        assert!(s.picks.is_empty());
        assert_eq!(s.stop, StopReason::PoolExhausted, "{m:?}");
    }
}

/// Rows 1 (NaN), 3 (zero), 4 (norm 1e20) are unusable. Under `Exclude`
/// they are never picked and are reported, and the picks equal those on
/// the pool without them (indices mapped back).
#[test]
fn exclude_policy_skips_and_reports_bad_rows() {
    let (q, clean) = random::clustered_pool(2, 9, D, 3, 0.3);
    let mut pool = clean.clone();
    pool[D + 2] = f32::NAN;
    pool[3 * D..4 * D].fill(0.0);
    pool[4 * D..5 * D].copy_from_slice(&[1e20, 0.0, 0.0, 0.0]);
    let bad = [1usize, 3, 4];
    let good: Vec<usize> = (0..9).filter(|i| !bad.contains(i)).collect();
    let reduced: Vec<f32> = good
        .iter()
        .flat_map(|&i| clean[i * D..(i + 1) * D].to_vec())
        .collect();
    let policy = InputPolicy {
        normalization: Normalization::Cosine,
        invalid_candidates: InvalidCandidates::Exclude,
    };
    for m in all_methods(policy) {
        let s = select(&Input::new(&q, &pool), 4, &m).unwrap();
        assert_eq!(s.excluded, bad.to_vec(), "{m:?}");
        assert_eq!(s.stop, StopReason::Budget);
        let r = select(&Input::new(&q, &reduced), 4, &m).unwrap();
        let mapped: Vec<usize> = r.picks.iter().map(|&i| good[i]).collect();
        assert_eq!(s.picks, mapped, "{m:?}");
        for (a, b) in s.weights.iter().zip(&r.weights) {
            assert!((a - b).abs() < 1e-12);
        }
        // Too few valid rows: the pool is exhausted after 6 picks.
        let s = select(&Input::new(&q, &pool), 9, &m).unwrap();
        assert_eq!(s.picks.len(), 6, "{m:?}");
        assert_eq!(s.stop, StopReason::PoolExhausted);
        assert!(s.picks.iter().all(|i| !bad.contains(i)));
        if !s.weights.is_empty() {
            assert!((s.weights.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
    }
    // Reject (the default) names the first bad row.
    let got = select(
        &Input::new(&q, &pool),
        4,
        &Method::TopK(InputPolicy::default()),
    );
    assert!(
        matches!(got, Err(Error::Candidate { row: 1, .. })),
        "{got:?}"
    );
    // A bad query is an error under either policy.
    let zq = vec![0.0f32; D];
    for m in all_methods(policy) {
        let got = select(&Input::new(&zq, &pool), 4, &m);
        assert_eq!(got, Err(Error::Query(VectorFault::ZeroNorm)));
    }
}

#[test]
fn all_rows_excluded() {
    let q = vec![1.0f32, 0.0, 0.0, 0.0];
    let pool = vec![0.0f32; 3 * D];
    let policy = InputPolicy {
        normalization: Normalization::Cosine,
        invalid_candidates: InvalidCandidates::Exclude,
    };
    for m in all_methods(policy) {
        let s = select(&Input::new(&q, &pool), 2, &m).unwrap();
        assert!(s.picks.is_empty(), "{m:?}");
        assert_eq!(s.excluded, vec![0, 1, 2]);
        assert_eq!(s.stop, StopReason::PoolExhausted);
    }
}

/// Under `Cosine` a vector is used through its direction: scaling rows and
/// the query (by factors far from 1) gives the same picks, and weights
/// within f32 rounding, as the pre-normalized input.
#[test]
fn non_unit_inputs_under_cosine_equal_prenormalized_ones() {
    for seed in 0..10u64 {
        let d = 24;
        let (q, pool) = random::clustered_pool(50 + seed, 30, d, 3, 0.3);
        let scales = [0.5f32, 3.0, 1e-3, 1e5, 0.9, 1.1, 42.0];
        let mut scaled = pool.clone();
        for (i, row) in scaled.chunks_exact_mut(d).enumerate() {
            let s = scales[(i + seed as usize) % scales.len()];
            row.iter_mut().for_each(|x| *x *= s);
        }
        let qs: Vec<f32> = q.iter().map(|x| x * 7.5).collect();
        for m in all_methods(InputPolicy::default()) {
            let a = select(&Input::new(&q, &pool), 12, &m).unwrap();
            let b = select(&Input::new(&qs, &scaled), 12, &m).unwrap();
            assert_eq!(a.picks, b.picks, "seed {seed} {m:?}");
            for (x, y) in a.weights.iter().zip(&b.weights) {
                assert!((x - y).abs() < 1e-5, "seed {seed} {m:?}");
            }
            for (x, y) in a.steps.iter().zip(&b.steps) {
                assert!((x.score - y.score).abs() < 1e-5, "seed {seed} {m:?}");
            }
        }
    }
}

/// Bit patterns, so that NaN inputs compare too.
fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn caller_slices_are_unchanged() {
    let (q, mut pool) = random::clustered_pool(3, 12, 10, 3, 0.3);
    // Non-unit rows and a NaN row (excluded), so every code path runs.
    pool[..10].iter_mut().for_each(|x| *x *= 3.0);
    pool[5 * 10 + 3] = f32::NAN;
    let q: Vec<f32> = q.iter().map(|x| x * 0.25).collect();
    let rel: Vec<f32> = (0..12).map(|i| i as f32 * 0.1).collect();
    let (q0, p0, r0) = (bits(&q), bits(&pool), bits(&rel));
    let policy = InputPolicy {
        normalization: Normalization::Cosine,
        invalid_candidates: InvalidCandidates::Exclude,
    };
    let mut sel = Selector::new();
    for relevance in [
        Relevance::Similarity,
        Relevance::Scores(&rel),
        Relevance::PoolOrder,
    ] {
        let input = Input::new(&q, &pool).with_relevance(relevance);
        for m in all_methods(policy) {
            for k in [0, 3, 12, 20] {
                let _ = sel.select(&input, k, &m).unwrap();
                assert_eq!(bits(&q), q0);
                assert_eq!(bits(&pool), p0);
                assert_eq!(bits(&rel), r0);
            }
        }
        // Failing calls leave them alone too.
        let _ = sel.select(&input, 3, &Method::TopK(InputPolicy::default()));
        assert_eq!(bits(&pool), p0);
    }
}

/// `Error::source` is the `VectorFault` of a query or candidate error (and
/// `None` for the others), so error reporters print the cause chain.
#[test]
fn error_source_is_the_vector_fault() {
    use std::error::Error as _;
    let (q, mut pool) = valid();
    let d = q.len();
    pool[2 * d + 1] = f32::NAN;
    let e = select(&Input::new(&q, &pool), 3, &Method::default()).unwrap_err();
    assert!(matches!(
        e,
        Error::Candidate {
            row: 2,
            fault: VectorFault::NonFinite { index: 1, value }
        } if value.is_nan()
    ));
    let source = e.source().expect("a candidate error has a source");
    assert_eq!(source.to_string(), "element 1 is not finite (NaN)");
    assert_eq!(e.to_string(), "candidate 2: element 1 is not finite (NaN)");
    let zero = vec![0.0f32; d];
    let e = select(&Input::new(&zero, &pool), 3, &Method::default()).unwrap_err();
    assert_eq!(
        e.source().map(|s| s.to_string()).as_deref(),
        Some("all elements are zero")
    );
    assert!(Error::InvalidGamma(2.0).source().is_none());
}
