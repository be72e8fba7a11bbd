//! `Store`: a call on store ids gives exactly the selection of
//! `select_spec` on the gathered rows; bad rows and ids are errors naming
//! them.

use mempursuit::{
    CallData, CallError, ErrorKind, MethodName, Pool, SelectSpec, Selector, Storage, Store,
    StoreCall, StoreError, VectorFault,
};

/// A seeded N × d store with clustered rows (xorshift, no dependency).
fn rows(n: usize, d: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f32 / (1u64 << 53) as f32 - 0.5
    };
    let centres: Vec<f32> = (0..4 * d).map(|_| next()).collect();
    (0..n)
        .flat_map(|i| {
            let c = (i % 4) * d;
            (0..d)
                .map(|k| centres[c + k] + 0.3 * next())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn store_calls_equal_select_spec_on_the_gathered_rows() {
    let (n, d) = (120, 24);
    let all = rows(n, d, 7);
    let query: Vec<f32> = rows(1, d, 99);
    let ids: Vec<usize> = (0..60).map(|i| (i * 37 + 5) % n).collect();
    let gathered: Vec<f32> = ids
        .iter()
        .flat_map(|&i| all[i * d..(i + 1) * d].iter().copied())
        .collect();
    let costs: Vec<f32> = (0..ids.len()).map(|i| 1.0 + (i % 5) as f32).collect();
    let mut selector = Selector::new();
    for storage in Storage::ALL {
        let store = Store::new(&all, d, storage).unwrap();
        for method in MethodName::ALL {
            let spec = SelectSpec::of(method)
                .with("storage", mempursuit::spec::Value::Text(storage.as_str()))
                .unwrap();
            let expected = selector
                .select_spec(&spec, CallData::new(&query, Pool::F32(&gathered)), 8)
                .unwrap();
            let got = store
                .select(
                    &mut selector,
                    &SelectSpec::of(method),
                    StoreCall::new(&query, &ids),
                    8,
                )
                .unwrap();
            assert_eq!(got, expected, "{method} {storage}");
            assert_eq!(got.picks.len(), 8);
            // With costs and a budget.
            let budgeted = spec
                .with("cost_budget", mempursuit::spec::Value::Number(9.0))
                .unwrap();
            let expected = selector
                .select_spec(
                    &budgeted,
                    CallData::new(&query, Pool::F32(&gathered)).with_costs(Some(&costs)),
                    8,
                )
                .unwrap();
            let call = StoreCall::new(&query, &ids).with_costs(Some(&costs));
            let got = store.select(&mut selector, &budgeted, call, 8).unwrap();
            assert_eq!(got, expected, "{method} {storage} with costs");
        }
    }
}

#[test]
fn batch_results_equal_single_calls_in_order() {
    let (n, d) = (80, 16);
    let store = Store::new(&rows(n, d, 3), d, Storage::F32).unwrap();
    let queries = rows(7, d, 11);
    let id_lists: Vec<Vec<usize>> = (0..7)
        .map(|q| (0..30).map(|i| (i * 7 + q * 13) % n).collect())
        .collect();
    let calls: Vec<StoreCall<'_>> = (0..7)
        .map(|q| StoreCall::new(&queries[q * d..(q + 1) * d], &id_lists[q]))
        .collect();
    let spec = SelectSpec::recommended();
    let batch = store.select_batch(&spec, &calls, 5, 2);
    let mut selector = Selector::new();
    assert_eq!(batch.len(), 7);
    for (call, got) in calls.iter().zip(&batch) {
        let expected = store.select(&mut selector, &spec, *call, 5).unwrap();
        assert_eq!(got.as_ref().unwrap(), &expected);
    }
}

#[test]
fn append_gives_new_ids_and_keeps_old_picks() {
    let d = 8;
    let first = rows(20, d, 5);
    let mut store = Store::new(&first, d, Storage::F32).unwrap();
    assert_eq!(store.len(), 20);
    assert_eq!(store.append(&rows(5, d, 6)).unwrap(), 20..25);
    assert_eq!(store.len(), 25);
    let query = rows(1, d, 8);
    let ids: Vec<usize> = (0..20).collect();
    let fresh = Store::new(&first, d, Storage::F32).unwrap();
    let mut selector = Selector::new();
    let spec = SelectSpec::paper();
    let a = store
        .select(&mut selector, &spec, StoreCall::new(&query, &ids), 4)
        .unwrap();
    let b = fresh
        .select(&mut selector, &spec, StoreCall::new(&query, &ids), 4)
        .unwrap();
    assert_eq!(a, b);
}

#[test]
fn bad_rows_ids_and_storage_are_errors_that_name_them() {
    let d = 4;
    let mut bad = rows(6, d, 2);
    bad[3 * d + 2] = f32::NAN;
    let err = Store::new(&bad, d, Storage::F32).unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Row {
                row: 3,
                fault: VectorFault::NonFinite { index: 2, .. }
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("store row 3"), "{err}");
    assert!(matches!(
        Store::new(&bad[..7], d, Storage::F32),
        Err(StoreError::Shape { len: 7, dim: 4 })
    ));
    // A failed append adds nothing.
    let mut store = Store::new(&rows(6, d, 2), d, Storage::F32).unwrap();
    let mut zero_row = rows(2, d, 4);
    zero_row[d..].fill(0.0);
    let err = store.append(&zero_row).unwrap_err();
    assert_eq!(
        err,
        StoreError::Row {
            row: 7,
            fault: VectorFault::ZeroNorm
        }
    );
    assert_eq!(store.len(), 6);

    let query = rows(1, d, 9);
    let mut selector = Selector::new();
    let err = store
        .select(
            &mut selector,
            &SelectSpec::paper(),
            StoreCall::new(&query, &[0, 6]),
            1,
        )
        .unwrap_err();
    assert_eq!(
        err,
        CallError::Store(StoreError::Id {
            position: 1,
            id: 6,
            len: 6
        })
    );
    assert_eq!(err.kind(), ErrorKind::Input);
    assert!(err.to_string().contains("ids[1] = 6"), "{err}");
    let f16: SelectSpec = "pursuit,storage=f16".parse().unwrap();
    let err = store
        .select(&mut selector, &f16, StoreCall::new(&query, &[0, 1]), 1)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Option);
    assert!(err.to_string().contains("the store keeps 'f32'"), "{err}");
}

/// Every method × storage × (no scores, ranked scores, raw scores) ×
/// (costs or not), on a pool large enough that the certified int8 pursuit
/// runs its int8 passes from the store's codes where `Int8Passes::Auto`
/// chooses them (d = 1536, P = 400 beyond a 1 MiB L2): the store's
/// selection is `select_spec`'s on the gathered rows, bit for bit.
#[test]
fn store_calls_equal_select_spec_with_scores_costs_and_int8_passes() {
    use mempursuit::spec::Value;
    use mempursuit::Int8Passes;
    let (n, d, p, k) = (700, 1536, 400, 6);
    let all = rows(n, d, 17);
    let query = rows(1, d, 23);
    let ids: Vec<usize> = (0..p).map(|i| (i * 61 + 11) % n).collect();
    let gathered: Vec<f32> = ids
        .iter()
        .flat_map(|&i| all[i * d..(i + 1) * d].iter().copied())
        .collect();
    let scores: Vec<f32> = (0..p).map(|i| ((i * 13) % 17) as f32 * 0.1).collect();
    let costs: Vec<f32> = (0..p).map(|i| 1.0 + (i % 3) as f32).collect();
    let mut selector = Selector::new();
    let mut int8_verified = 0u32;
    for storage in Storage::ALL {
        let store = Store::new(&all, d, storage).unwrap();
        for method in [
            MethodName::Pursuit,
            MethodName::TopK,
            MethodName::Mmr,
            MethodName::Recommended,
        ] {
            for raw in [false, true] {
                for (relevance, with_costs) in [
                    (None, false),
                    (Some(&scores[..]), false),
                    (Some(&scores[..]), true),
                ] {
                    let mut spec = SelectSpec::of(method);
                    if raw && relevance.is_some() && method != MethodName::Recommended {
                        spec = spec.with("raw_relevance", Value::Bool(true)).unwrap();
                    }
                    let call_costs = with_costs.then_some(&costs[..]);
                    if with_costs {
                        spec = spec.with("cost_budget", Value::Number(8.0)).unwrap();
                    }
                    let full = spec.with("storage", Value::Text(storage.as_str())).unwrap();
                    let data = CallData::new(&query, Pool::F32(&gathered))
                        .with_relevance(relevance)
                        .with_costs(call_costs);
                    let want = selector.select_spec(&full, data, k).unwrap();
                    let call = StoreCall::new(&query, &ids)
                        .with_relevance(relevance)
                        .with_costs(call_costs);
                    let got = store.select(&mut selector, &spec, call, k).unwrap();
                    assert_eq!(
                        got, want,
                        "{method} {storage} raw={raw} {relevance:?} costs={with_costs}"
                    );
                    assert!(!got.picks.is_empty());
                    if storage == Storage::Int8 && method == MethodName::Pursuit {
                        int8_verified += got.steps.iter().map(|s| s.verified).sum::<u32>();
                    }
                }
            }
        }
    }
    // Where Auto runs the int8 passes, the picks were certified from the
    // store's codes (verified candidates); elsewhere the f32 passes ran.
    assert_eq!(
        int8_verified > 0,
        Int8Passes::Auto.uses_int8(p, d, k),
        "verified {int8_verified}"
    );
}

/// A batch on the crate's batch plan gives each call's single result, in
/// order, for every storage; with pools beyond L2 too (a split plan).
#[test]
fn batch_on_every_storage_equals_single_calls() {
    let (n, d) = (300, 1536);
    let all = rows(n, d, 31);
    let queries = rows(5, d, 37);
    let id_lists: Vec<Vec<usize>> = (0..5)
        .map(|q| (0..250).map(|i| (i * 7 + q * 29) % n).collect())
        .collect();
    let calls: Vec<StoreCall<'_>> = (0..5)
        .map(|q| StoreCall::new(&queries[q * d..(q + 1) * d], &id_lists[q]))
        .collect();
    let spec = SelectSpec::paper();
    let mut selector = Selector::new();
    for storage in Storage::ALL {
        let store = Store::new(&all, d, storage).unwrap();
        let (batch, report) = store.select_batch_report(&spec, &calls, 6, 2);
        assert!(report.plan.threads() <= 2);
        assert_eq!(batch.len(), 5);
        for (call, got) in calls.iter().zip(&batch) {
            let want = store.select(&mut selector, &spec, *call, 6).unwrap();
            assert_eq!(got.as_ref().unwrap(), &want, "{storage}");
        }
    }
}

#[test]
fn values_the_storage_cannot_hold_and_wrong_queries_are_errors() {
    use mempursuit::{StorageError, StorageFault};
    let d = 4;
    let mut big = rows(5, d, 3);
    big[2 * d + 1] = 70_000.0;
    let err = Store::new(&big, d, Storage::F16).unwrap_err();
    assert_eq!(
        err,
        StoreError::Storage(StorageError {
            row: 2,
            index: 1,
            value: 70_000.0,
            storage: Storage::F16,
            fault: StorageFault::OutOfRange
        })
    );
    assert!(
        err.to_string()
            .starts_with("store row 2: element 1 = 70000"),
        "{err}"
    );
    // bf16 holds it; f32 and int8 too.
    for storage in [Storage::Bf16, Storage::F32, Storage::Int8] {
        assert_eq!(Store::new(&big, d, storage).unwrap().len(), 5);
    }
    // A row valid in f32 (norm 2.4e-8 ≥ MIN_NORM = 1e-12) every value of
    // which rounds to 0 in f16 (below half its smallest subnormal, 5.96e-8).
    let mut store = Store::new(&rows(3, d, 4), d, Storage::F16).unwrap();
    let tiny = [1e-8f32, -2e-8, 1e-8, 0.0];
    match store.append(&tiny) {
        Err(StoreError::Storage(e)) => {
            assert_eq!((e.row, e.index, e.fault), (3, 1, StorageFault::Underflow));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(store.len(), 3);
    let mut selector = Selector::new();
    let err = store
        .select(
            &mut selector,
            &SelectSpec::paper(),
            StoreCall::new(&[1.0, 0.0], &[0, 1]),
            1,
        )
        .unwrap_err();
    assert_eq!(
        err,
        CallError::Store(StoreError::QueryLength { len: 2, dim: 4 })
    );
    assert!(err.to_string().contains("d = 4"), "{err}");
}

/// No ids (P = 0) and repeated ids: what `select_spec` gives on the
/// gathered rows (nothing picked; a repeated row is a duplicate).
#[test]
fn empty_and_repeated_ids_give_select_spec_results() {
    let (n, d) = (30, 8);
    let all = rows(n, d, 41);
    let query = rows(1, d, 43);
    let mut selector = Selector::new();
    for storage in Storage::ALL {
        let store = Store::new(&all, d, storage).unwrap();
        let spec = SelectSpec::paper()
            .with("storage", mempursuit::spec::Value::Text(storage.as_str()))
            .unwrap();
        for ids in [vec![], vec![3, 3, 7, 3, 12]] {
            let gathered: Vec<f32> = ids
                .iter()
                .flat_map(|&i| all[i * d..(i + 1) * d].iter().copied())
                .collect();
            let want = selector
                .select_spec(&spec, CallData::new(&query, Pool::F32(&gathered)), 3)
                .unwrap();
            let got = store
                .select(
                    &mut selector,
                    &SelectSpec::paper(),
                    StoreCall::new(&query, &ids),
                    3,
                )
                .unwrap();
            assert_eq!(got, want, "{storage} {ids:?}");
            assert_eq!(got.picks.is_empty(), ids.is_empty());
        }
    }
}

/// `Store::rows` gives the f32 rows (the stored values widened for f16 /
/// bf16), which build the same store again, for every storage.
#[test]
fn rows_rebuild_the_same_store() {
    let (n, d) = (50, 12);
    let all = rows(n, d, 31);
    for storage in Storage::ALL {
        let store = Store::new(&all, d, storage).unwrap();
        let back = store.rows();
        assert_eq!(back.len(), n * d);
        let rebuilt = Store::new(&back, d, storage).unwrap();
        assert_eq!(rebuilt, store, "{storage}");
        match storage {
            Storage::F32 | Storage::Int8 => assert_eq!(&back[..], &all[..]),
            // Rounded once: equal to the given values to the storage's precision.
            _ => {
                assert_ne!(&back[..], &all[..]);
                assert!(back
                    .iter()
                    .zip(&all)
                    .all(|(a, b)| (a - b).abs() <= 0.004 * b.abs().max(0.01)));
            }
        }
    }
}
