//! `Input::with_ids`: a pool read in place by row id (a store's rows named
//! by a retriever's ids) gives, for every method, storage and screening,
//! the selection of the same call on the gathered rows, bit for bit; a bad
//! id is an error naming it.

use mempursuit::half::f16;
use mempursuit::{
    pursuit_int8_using, pursuit_using, Error, ErrorKind, Input, Int8Candidates, Int8Passes,
    MethodName, PursuitOptions, Relevance, Screening, SelectSpec, Selection, Selector, Serial,
};

/// A seeded N × d store of clustered rows (xorshift, no dependency).
fn store(n: usize, d: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f32 / (1u64 << 53) as f32 - 0.5
    };
    let centres: Vec<f32> = (0..5 * d).map(|_| next()).collect();
    (0..n)
        .flat_map(|i| {
            let c = (i % 5) * d;
            (0..d)
                .map(|k| centres[c + k] + 0.25 * next())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Ids in no order, with repeats (the same memory twice in a pool).
fn ids(n: usize, p: usize) -> Vec<usize> {
    (0..p).map(|i| (i * 53 + 11) % n).collect()
}

fn gather<T: Copy>(rows: &[T], d: usize, ids: &[usize]) -> Vec<T> {
    ids.iter()
        .flat_map(|&i| rows[i * d..(i + 1) * d].iter().copied())
        .collect()
}

/// `input` with the relevance and, if given, the costs (total 15).
fn with<'a>(input: Input<'a>, relevance: Relevance<'a>, costs: Option<&'a [f32]>) -> Input<'a> {
    let input = input.with_relevance(relevance);
    match costs {
        Some(c) => input.with_costs(c, 15.0),
        None => input,
    }
}

#[test]
fn every_method_reads_ids_as_the_gathered_rows() {
    let (n, d, p, k) = (300, 40, 90, 12);
    let rows = store(n, d, 3);
    let query = store(1, d, 77);
    let ids = ids(n, p);
    let gathered = gather(&rows, d, &ids);
    let scores: Vec<f32> = (0..p).map(|i| 1.0 - i as f32 / p as f32).collect();
    let costs: Vec<f32> = (0..p).map(|i| 1.0 + (i % 4) as f32).collect();
    let mut selector = Selector::new();
    for method in MethodName::ALL {
        let method = SelectSpec::of(method).method().unwrap();
        for (relevance, costed) in [
            (Relevance::Similarity, false),
            (Relevance::RankedScores(&scores), true),
        ] {
            let costs = costed.then_some(&costs[..]);
            let expected = selector
                .select_with(
                    &with(Input::new(&query, &gathered), relevance, costs),
                    k,
                    &method,
                    &mut Serial,
                )
                .unwrap();
            let got = selector
                .select_with(
                    &with(Input::new(&query, &rows).with_ids(&ids), relevance, costs),
                    k,
                    &method,
                    &mut Serial,
                )
                .unwrap();
            assert_eq!(got, expected, "{method:?} costed={costed}");
            assert!(!got.picks.is_empty());
        }
    }
}

#[test]
fn every_screening_and_storage_reads_ids_as_the_gathered_rows() {
    let (n, d, p, k) = (500, 48, 160, 20);
    let rows = store(n, d, 5);
    let rows16: Vec<f16> = rows.iter().map(|&x| f16::from_f32(x)).collect();
    let query = store(1, d, 8);
    let ids = ids(n, p);
    let (gathered, gathered16) = (gather(&rows, d, &ids), gather(&rows16, d, &ids));
    let mut selector = Selector::new();
    let centroid = PursuitOptions {
        ridge: f64::INFINITY,
        ..PursuitOptions::PAPER
    };
    for options in [PursuitOptions::PAPER, centroid] {
        for screening in [Screening::Off, Screening::On, Screening::Auto] {
            let mut run = |input: &Input<'_, _>| -> Selection {
                let mut ws = selector.workspace(p, k);
                pursuit_using(input, k, &options, screening, &mut ws, &mut Serial)
                    .unwrap()
                    .into()
            };
            let expected = run(&Input::new(&query, &gathered));
            let got = run(&Input::new(&query, &rows).with_ids(&ids));
            assert_eq!(got, expected, "f32 {screening:?} ridge {}", options.ridge);
            assert_eq!(got.picks.len(), k);
            let mut run16 = |input: &Input<'_, f16>| -> Selection {
                let mut ws = selector.workspace(p, k);
                pursuit_using(input, k, &options, screening, &mut ws, &mut Serial)
                    .unwrap()
                    .into()
            };
            let expected = run16(&Input::with_storage(&query, &gathered16[..]));
            let got = run16(&Input::with_storage(&query, &rows16[..]).with_ids(&ids));
            assert_eq!(got, expected, "f16 {screening:?} ridge {}", options.ridge);
        }
    }
}

/// The certified int8 pursuit on its int8 passes (forced: at this size
/// `Auto` keeps the f32 passes) verifies candidates from the f32 rows read
/// by id; its selection is the f32 pursuit's on the gathered rows.
#[test]
fn certified_int8_verifies_from_rows_read_by_id() {
    let (n, d, p, k) = (400, 64, 150, 16);
    let rows = store(n, d, 9);
    let query = store(1, d, 10);
    let ids = ids(n, p);
    let gathered = gather(&rows, d, &ids);
    let codes = Int8Candidates::quantize(&gathered, d).unwrap();
    let mut selector = Selector::new();
    let options = PursuitOptions::PAPER;
    let expected: Selection = {
        let mut ws = selector.workspace(p, k);
        let input = Input::new(&query, &gathered);
        pursuit_using(&input, k, &options, Screening::Off, &mut ws, &mut Serial)
            .unwrap()
            .into()
    };
    let got: Selection = {
        let mut ws = selector.workspace(p, k);
        let input = Input::new(&query, &rows).with_ids(&ids);
        let view = codes.view();
        pursuit_int8_using(
            &input,
            &view,
            k,
            &options,
            Int8Passes::Int8,
            &mut ws,
            &mut Serial,
        )
        .unwrap()
        .into()
    };
    assert_eq!(got.picks, expected.picks);
    assert_eq!(got.weights, expected.weights);
    assert!(
        got.steps.iter().any(|s| s.verified > 0),
        "ran the int8 passes"
    );
}

#[test]
fn an_id_past_the_matrix_is_an_error_naming_it() {
    let (n, d) = (10, 4);
    let rows = store(n, d, 1);
    let query = store(1, d, 2);
    let ids = [3usize, 9, 10, 2];
    let mut selector = Selector::new();
    let method = SelectSpec::paper().method().unwrap();
    let input = Input::new(&query, &rows).with_ids(&ids);
    let err = selector
        .select_with(&input, 2, &method, &mut Serial)
        .unwrap_err();
    assert_eq!(
        err,
        Error::RowId {
            index: 2,
            id: 10,
            rows: 10
        }
    );
    assert_eq!(err.kind(), ErrorKind::Input);
    assert_eq!(
        err.to_string(),
        "id 2 names row 10, but the candidate matrix has 10 rows (ids must be below 10)"
    );
    // The pool is the ids: relevance is one per id.
    let scores = [0.5f32; 10];
    let input = Input::new(&query, &rows)
        .with_ids(&ids[..2])
        .with_relevance(Relevance::Scores(&scores));
    let err = selector
        .select_with(&input, 2, &method, &mut Serial)
        .unwrap_err();
    assert_eq!(
        err,
        Error::RelevanceLength {
            expected: 2,
            found: 10
        }
    );
    // A bad row is named by its position in the ids, as a pick is.
    let mut broken = rows.clone();
    broken[9 * d..10 * d].fill(0.0);
    let input = Input::new(&query, &broken).with_ids(&ids[..2]);
    match selector.select_with(&input, 2, &method, &mut Serial) {
        Err(Error::Candidate { row: 1, .. }) => {}
        other => panic!("expected candidate 1's error, got {other:?}"),
    }
    assert_eq!(input.pool_size(), Some(2));
}
