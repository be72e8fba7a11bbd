//! Why fewer than K came back (issue 30, item 6): a budget K above the pool
//! size P returns the P picks with stop reason `PoolExhausted`, not
//! `Budget`, in every loop of the core — the paper's pursuit (unscreened and
//! screened), centroid pursuit (unscreened and lazy), the certified int8
//! pursuit, the recommended setting, top-K and MMR; K = P stops for the
//! budget.

use mempursuit::{
    pursuit_using, Input, Int8Candidates, Int8Passes, Method, MmrOptions, PursuitOptions,
    Screening, Selection, Selector, Serial, StopReason,
};
use mempursuit_tests::random;

const P: usize = 7;
const D: usize = 8;

fn pool() -> (Vec<f32>, Vec<f32>) {
    random::uniform_pool(30, P, D)
}

/// Every method of `Selector::select` and every screening of `pursuit_using`.
fn selections(k: usize) -> Vec<(String, Selection)> {
    let (q, rows) = pool();
    let input = Input::new(&q, &rows);
    let mut out = Vec::new();
    let methods = [
        Method::Pursuit(PursuitOptions::default()),
        Method::Pursuit(PursuitOptions::centroid(0.5)),
        Method::TopK(Default::default()),
        Method::Mmr(MmrOptions {
            lambda: 0.5,
            input: Default::default(),
        }),
        Method::recommended(),
    ];
    for m in methods {
        let s = Selector::new().select(&input, k, &m).expect("valid input");
        out.push((format!("{m:?}"), s));
    }
    for o in [PursuitOptions::default(), PursuitOptions::centroid(0.5)] {
        for screening in [Screening::On, Screening::Off] {
            let mut sel = Selector::new();
            let mut ws = sel.workspace(P, k.min(P));
            let view =
                pursuit_using(&input, k, &o, screening, &mut ws, &mut Serial).expect("valid input");
            out.push((format!("{o:?} {screening:?}"), view.into()));
        }
        let int8 = Int8Candidates::quantize(&rows, D).expect("finite rows");
        let s = Selector::new()
            .select_int8_using(&input, &int8, k, &o, Int8Passes::Int8)
            .expect("valid input");
        out.push((format!("{o:?} int8"), s));
    }
    out
}

#[test]
fn a_budget_above_the_pool_stops_for_the_pool() {
    let all = selections(P + 3);
    assert_eq!(all.len(), 11);
    for (name, s) in all {
        let mut picks = s.picks.clone();
        picks.sort_unstable();
        assert_eq!(picks, (0..P).collect::<Vec<_>>(), "{name}");
        assert_eq!(s.stop, StopReason::PoolExhausted, "{name}");
        assert_eq!(s.stop.as_str(), "pool_exhausted", "{name}");
    }
}

#[test]
fn a_budget_equal_to_the_pool_stops_for_the_budget() {
    for (name, s) in selections(P) {
        assert_eq!(s.picks.len(), P, "{name}");
        assert_eq!(s.stop, StopReason::Budget, "{name}");
    }
}
