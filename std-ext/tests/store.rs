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
