//! Picks already represented by the free set (exact duplicates, points of
//! the free memories' affine hull): flagged in their `Step` by default
//! (`DependentPicks::Keep`, the paper's picks unchanged), skipped with
//! `DependentPicks::Skip` (the budget goes to new evidence).

use mempursuit::{
    pursuit, AtPoolOptimum, DependentPicks, FixedWorkspace, Input, Method, PursuitOptions,
    Selection, Selector, StopReason,
};
use mempursuit_tests::random;
use mempursuit_tests::reference::reference_pursuit;

fn select(q: &[f32], pool: &[f32], k: usize, o: PursuitOptions) -> Selection {
    Selector::new()
        .select(&Input::new(q, pool), k, &Method::Pursuit(o))
        .expect("valid input")
}

fn skipping(o: PursuitOptions) -> PursuitOptions {
    PursuitOptions {
        dependent_picks: DependentPicks::Skip,
        ..o
    }
}

fn flagged(s: &Selection) -> Vec<usize> {
    s.steps
        .iter()
        .filter(|st| st.dependent)
        .map(|st| st.index)
        .collect()
}

/// d = 3, q = (0.75, 0.65, 0.14)/‖·‖ = (0.748281, 0.648510, 0.139678);
/// pool A = e1 (row 0), an exact copy of A (row 1), B = e2 (row 2),
/// C = e3 (row 3).
///
/// Paper mode: A (b = 0.748), then B (U_B = 0.649 − 0.748·0 = 0.649 vs
/// U_C = 0.140, U_A′ = 0.748 − 0.748 = 0), refit α on {A, B}: the nearest
/// point of the segment to q is t·A + (1 − t)·B with
/// t = (1 + 0.748281 − 0.648510)/2 = 0.549886, residual
/// r = (0.198396, 0.198396, 0.139678). Third pick: U_A′ = m_A·r =
/// 0.198396, above U_C = 0.139678, so the paper picks the copy of A, which
/// the refit cannot weight (α = 0): the same text twice in the context.
/// It is flagged; with `Skip` it is skipped and C (new evidence) is the
/// third pick.
#[test]
fn an_exact_duplicate_is_flagged_by_default_and_skipped_on_request() {
    let q = random::normalized(&[0.75, 0.65, 0.14]);
    let pool = [
        1.0f32, 0.0, 0.0, // A
        1.0, 0.0, 0.0, // A, again
        0.0, 1.0, 0.0, // B
        0.0, 0.0, 1.0, // C
    ];
    let keep = select(&q, &pool, 3, PursuitOptions::default());
    assert_eq!(keep.picks, vec![0, 2, 1]);
    assert_eq!(
        keep.steps.iter().map(|s| s.dependent).collect::<Vec<_>>(),
        vec![false, false, true]
    );
    assert_eq!(keep.weights[2], 0.0);
    assert!(
        (keep.weights[0] - 0.549886).abs() < 1e-6,
        "{:?}",
        keep.weights
    );
    assert!(
        (keep.steps[2].score - 0.198396).abs() < 1e-6,
        "{:?}",
        keep.steps
    );
    assert!(keep.skipped.is_empty());
    // The default keeps the paper's picks: those of the independent f64
    // reference.
    let reference = reference_pursuit(&q, &pool, 3, 3, PursuitOptions::PAPER_RIDGE, 1.0, None);
    assert_eq!(reference.picks, keep.picks);

    let skip = select(&q, &pool, 3, skipping(PursuitOptions::default()));
    assert_eq!(skip.picks, vec![0, 2, 3]);
    assert_eq!(skip.skipped, vec![1]);
    assert!(flagged(&skip).is_empty());
    assert_eq!(skip.stop, StopReason::Budget);
    assert_eq!(skip.weights.len(), 3);
    assert!((skip.weights.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    // The first two steps are the same either way.
    assert_eq!(skip.steps[..2], keep.steps[..2]);

    // The same through the core's borrowed view.
    let mut storage = FixedWorkspace::<8, 4>::new();
    let mut ws = storage.view();
    let view = pursuit(
        &Input::new(&q, &pool),
        3,
        &skipping(PursuitOptions::default()),
        &mut ws,
    )
    .unwrap();
    assert_eq!(view.picks(), &[0, 2, 3]);
    assert_eq!(view.skipped().collect::<Vec<_>>(), vec![1]);
    assert_eq!(view.skipped_count(), 1);

    // Only the copy and A itself are left besides C: K = 4 skips the copy
    // and runs out of candidates.
    let all = select(&q, &pool, 4, skipping(PursuitOptions::default()));
    assert_eq!(all.picks, vec![0, 2, 3]);
    assert_eq!(all.stop, StopReason::PoolExhausted);
    // Relevance fill after the pool optimum (g_S = 5.5e-11 after A and B,
    // under the tolerance 1e-9): the fill takes the copy of A next (ρ =
    // 0.748), flagged; skipping it, the fill takes C.
    let fill = PursuitOptions {
        at_pool_optimum: AtPoolOptimum::FillByRelevance,
        optimum_tolerance: 1e-9,
        ..PursuitOptions::default()
    };
    let keep = select(&q, &pool, 3, fill);
    assert_eq!(keep.picks, vec![0, 2, 1]);
    assert!(keep.steps[2].filled && keep.steps[2].dependent);
    let skip = select(&q, &pool, 3, skipping(fill));
    assert_eq!(skip.picks, vec![0, 2, 3]);
    assert!(skip.steps[2].filled && !skip.steps[2].dependent);
    assert_eq!(skip.skipped, vec![1]);
}

/// A pool in which every memory is stored three times (rows i, i + 10 and
/// i + 20 are the same; d = 24): the default run picks copies and flags
/// exactly those; the skipping run takes the default picks without them,
/// then the remaining distinct memories, and runs out of candidates after
/// the 10 distinct ones, every copy skipped.
#[test]
fn a_pool_of_triplicates() {
    let d = 24;
    let (q, base) = random::uniform_pool(11, 10, d);
    let pool = [base.clone(), base.clone(), base].concat();
    let row = |i: usize| &pool[i * d..(i + 1) * d];
    let copies_of_earlier = |picks: &[usize]| -> Vec<usize> {
        (0..picks.len())
            .filter(|&t| picks[..t].iter().any(|&j| row(j) == row(picks[t])))
            .map(|t| picks[t])
            .collect()
    };
    for fill in [AtPoolOptimum::Continue, AtPoolOptimum::FillByRelevance] {
        let o = PursuitOptions {
            at_pool_optimum: fill,
            ..PursuitOptions::default()
        };
        let keep = select(&q, &pool, 12, o);
        // The 8 distinct memories span the query's reconstruction; the 4
        // picks after them are copies, whose order is decided by round-off
        // of near-zero scores (it moved when G_SS became exact f64), so
        // only their being copies is pinned.
        assert_eq!(keep.picks[..8], [0, 5, 1, 3, 8, 9, 4, 7]);
        assert_eq!(keep.picks.len(), 12);
        assert!(keep.picks[8..].iter().all(|&i| i >= 10));
        assert_eq!(flagged(&keep), keep.picks[8..].to_vec());
        assert_eq!(flagged(&keep), copies_of_earlier(&keep.picks));
        for (st, w) in keep.steps.iter().zip(&keep.weights) {
            assert!(!st.dependent || *w == 0.0);
        }

        let skip = select(&q, &pool, 12, skipping(o));
        assert_eq!(skip.picks, vec![0, 5, 1, 3, 8, 9, 4, 7, 6, 2]);
        assert!(copies_of_earlier(&skip.picks).is_empty());
        assert_eq!(skip.skipped, (10..30).collect::<Vec<_>>());
        assert_eq!(skip.stop, StopReason::PoolExhausted);
        assert!(flagged(&skip).is_empty());
    }
}
