//! Caller-owned workspaces: capacity errors (pool and budget) with
//! `FixedWorkspace` and `Workspace::from_buffers`, buffers that are too
//! small, and reuse across calls of different shapes and methods.

use mempursuit::{
    Capacity, Error, FixedWorkspace, Input, InputPolicy, Method, MmrOptions, PursuitOptions,
    ReserveError, ScratchBuffer, ScratchSize, Selection, Selector, Step, Workspace,
};
use mempursuit_tests::random;

fn fresh(q: &[f32], pool: &[f32], k: usize, m: &Method) -> Selection {
    Selector::new().select(&Input::new(q, pool), k, m).unwrap()
}

fn run_on(
    ws: &mut Workspace<'_>,
    q: &[f32],
    pool: &[f32],
    k: usize,
    m: &Method,
) -> Result<Selection, Error> {
    let input = Input::new(q, pool);
    Ok(m.run(&input, k, ws)?.into())
}

fn methods() -> [Method; 4] {
    [
        Method::Pursuit(PursuitOptions::default()),
        Method::Pursuit(PursuitOptions::centroid(0.5)),
        Method::TopK(InputPolicy::default()),
        Method::Mmr(MmrOptions {
            lambda: 0.5,
            input: InputPolicy::default(),
        }),
    ]
}

#[test]
fn fixed_workspace_capacity() {
    let (q, pool5) = random::uniform_pool(1, 5, 3);
    let mut storage = FixedWorkspace::<4, 2>::new();
    let mut ws = storage.view();
    assert_eq!((ws.max_pool(), ws.max_budget()), (4, 2));
    for m in methods() {
        // P = 5 > 4.
        assert_eq!(
            run_on(&mut ws, &q, &pool5, 1, &m),
            Err(Error::CapacityExceeded {
                what: Capacity::Pool,
                needed: 5,
                capacity: 4
            })
        );
        // P = 4, K = 3 > 2.
        assert_eq!(
            run_on(&mut ws, &q, &pool5[..12], 3, &m),
            Err(Error::CapacityExceeded {
                what: Capacity::Budget,
                needed: 3,
                capacity: 2
            })
        );
        // The budget is checked as min(K, P): P = 2, K = 10 fits.
        let s = run_on(&mut ws, &q, &pool5[..6], 10, &m).unwrap();
        assert_eq!(s.picks.len(), 2);
        // P = 4, K = 2 fits and equals a fresh Selector's result.
        let s = run_on(&mut ws, &q, &pool5[..12], 2, &m).unwrap();
        assert_eq!(s, fresh(&q, &pool5[..12], 2, &m));
    }
    let e = Error::CapacityExceeded {
        what: Capacity::Budget,
        needed: 3,
        capacity: 2,
    };
    assert!(e.to_string().contains('3') && e.to_string().contains('2'));
}

#[test]
fn buffers_sized_by_scratch_size() {
    let (q, pool) = random::clustered_pool(2, 20, 8, 3, 0.3);
    let need = ScratchSize::for_capacity(20, 6).unwrap();
    assert_eq!(need.f32s, 7 * 20 + 6 + 2 * 6 * 20);
    assert_eq!(need.f64s, 2 * 6 * 6 + 10 * 6 + 4 * 20);
    assert_eq!(need.indices, 20 + 3 * 6);
    assert_eq!(need.steps, 6);
    assert!(need.bytes() > 0);
    let mut f32s = vec![0.0f32; need.f32s];
    let mut f64s = vec![0.0f64; need.f64s];
    let mut idx = vec![0usize; need.indices];
    let mut steps = vec![Step::default(); need.steps];
    let mut ws =
        Workspace::from_buffers(20, 6, &mut f32s, &mut f64s, &mut idx, &mut steps).unwrap();
    for m in methods() {
        let s = run_on(&mut ws, &q, &pool, 6, &m).unwrap();
        assert_eq!(s, fresh(&q, &pool, 6, &m));
        assert_eq!(
            run_on(&mut ws, &q, &pool, 7, &m),
            Err(Error::CapacityExceeded {
                what: Capacity::Budget,
                needed: 7,
                capacity: 6
            })
        );
    }
    // Longer buffers are fine.
    let mut f32s = vec![0.0f32; need.f32s + 5];
    let mut f64s = vec![0.0f64; need.f64s + 5];
    let mut idx = vec![0usize; need.indices + 5];
    let mut steps = vec![Step::default(); need.steps + 5];
    let mut ws =
        Workspace::from_buffers(20, 6, &mut f32s, &mut f64s, &mut idx, &mut steps).unwrap();
    let s = run_on(&mut ws, &q, &pool, 6, &methods()[0]).unwrap();
    assert_eq!(s, fresh(&q, &pool, 6, &methods()[0]));
}

#[test]
fn buffers_too_small() {
    let need = ScratchSize::for_capacity(10, 4).unwrap();
    let sizes = [need.f32s, need.f64s, need.indices, need.steps];
    for short in 0..4 {
        let mut s = sizes;
        s[short] -= 1;
        let mut f32s = vec![0.0f32; s[0]];
        let mut f64s = vec![0.0f64; s[1]];
        let mut idx = vec![0usize; s[2]];
        let mut steps = vec![Step::default(); s[3]];
        let got = Workspace::from_buffers(10, 4, &mut f32s, &mut f64s, &mut idx, &mut steps);
        let buffer = [
            ScratchBuffer::F32s,
            ScratchBuffer::F64s,
            ScratchBuffer::Indices,
            ScratchBuffer::Steps,
        ][short];
        let e = got.unwrap_err();
        assert_eq!(
            e,
            Error::BufferTooShort {
                buffer,
                len: sizes[short] - 1,
                needed: sizes[short],
            }
        );
        // The message says which buffer, how long it is and how long it
        // must be.
        assert_eq!(
            e.to_string(),
            format!(
                "workspace buffer too short: `{}` has {} elements, needs at least {}",
                buffer.name(),
                sizes[short] - 1,
                sizes[short]
            )
        );
    }
    // Overflowing capacities.
    assert_eq!(ScratchSize::for_capacity(usize::MAX, 2), None);
    assert_eq!(ScratchSize::for_capacity(2, usize::MAX), None);
    let got = Workspace::from_buffers(usize::MAX, 2, &mut [], &mut [], &mut [], &mut []);
    assert_eq!(
        got.unwrap_err(),
        Error::ScratchOverflow {
            max_pool: usize::MAX,
            max_budget: 2
        }
    );
    // A zero-capacity workspace handles the empty pool.
    let mut ws = Workspace::from_buffers(0, 0, &mut [], &mut [], &mut [], &mut []).unwrap();
    let q = [1.0f32, 0.0];
    let s = run_on(&mut ws, &q, &[], 3, &methods()[0]).unwrap();
    assert!(s.picks.is_empty());
    assert!(matches!(
        run_on(&mut ws, &q, &[1.0, 0.0], 1, &methods()[0]),
        Err(Error::CapacityExceeded {
            what: Capacity::Pool,
            ..
        })
    ));
}

/// One workspace serves calls of different shapes, methods and options in
/// any order (including after failed calls) with the same results as fresh
/// workspaces: no state leaks from one call into the next.
#[test]
fn reuse_across_shapes_and_methods() {
    let mut storage = Box::new(FixedWorkspace::<64, 16>::new());
    let mut ws = storage.view();
    let mut sel = Selector::new();
    let family = Method::Pursuit(PursuitOptions {
        ridge: 0.05,
        gamma: 0.5,
        ..PursuitOptions::default()
    });
    let all = [methods().to_vec(), vec![family]].concat();
    for round in 0..3u64 {
        for (i, (p, d, k)) in [(60, 8, 16), (7, 3, 5), (33, 16, 12), (64, 5, 16), (1, 4, 1)]
            .into_iter()
            .enumerate()
        {
            let (q, pool) = random::clustered_pool(round * 10 + i as u64, p, d, 3, 0.3);
            for m in &all {
                let want = fresh(&q, &pool, k, m);
                assert_eq!(run_on(&mut ws, &q, &pool, k, m).unwrap(), want, "{m:?}");
                assert_eq!(sel.select(&Input::new(&q, &pool), k, m).unwrap(), want);
                // A failing call in between.
                let bad = vec![f32::NAN; d];
                assert!(run_on(&mut ws, &bad, &pool, k, m).is_err());
                assert_eq!(run_on(&mut ws, &q, &pool, k, m).unwrap(), want, "{m:?}");
            }
        }
    }
}

#[test]
fn selector_workspace_serves_core_calls() {
    let (q, pool) = random::clustered_pool(5, 30, 12, 3, 0.3);
    let mut sel = Selector::new();
    let want = fresh(&q, &pool, 10, &methods()[0]);
    let mut ws = sel.workspace(30, 10);
    assert!(ws.max_pool() >= 30 && ws.max_budget() >= 10);
    let got = run_on(&mut ws, &q, &pool, 10, &methods()[0]).unwrap();
    assert_eq!(got, want);
    // Reserved capacity is kept.
    let sel = Selector::with_capacity(100, 20);
    let mut sel = sel;
    let ws = sel.workspace(10, 2);
    assert!(ws.max_pool() >= 100 && ws.max_budget() >= 20);
}

/// `Debug` of the workspaces and the selector shows shape and capacity, not
/// the thousands of floats in their buffers.
#[test]
fn debug_shows_shape_and_capacity_only() {
    let mut fixed = FixedWorkspace::<64, 16>::new();
    assert_eq!(
        format!("{fixed:?}"),
        "FixedWorkspace { max_pool: 64, max_budget: 16, .. }"
    );
    let (q, pool) = random::uniform_pool(3, 40, 8);
    let mut ws = fixed.view();
    let _ = Method::default()
        .run(&Input::new(&q, &pool), 5, &mut ws)
        .unwrap();
    assert_eq!(
        format!("{ws:?}"),
        "Workspace { max_pool: 64, max_budget: 16, pool: 40, .. }"
    );
    let mut selector = Selector::with_capacity(200, 20);
    let bytes = ScratchSize::for_capacity(200, 20).unwrap().bytes();
    assert_eq!(
        format!("{selector:?}"),
        format!("Selector {{ max_pool: 200, max_budget: 20, bytes: {bytes}, .. }}")
    );
    let ws = selector.workspace(10, 3);
    assert_eq!(
        format!("{ws:?}"),
        "Workspace { max_pool: 200, max_budget: 20, pool: 0, .. }"
    );
}

/// A selector whose scratch size would overflow returns an error from the
/// fallible calls (and changes nothing) instead of panicking.
#[test]
fn selector_scratch_overflow_is_an_error() {
    let mut selector = Selector::with_capacity(8, 2);
    let overflow = ReserveError {
        pool: usize::MAX,
        budget: 2,
        bytes: None,
    };
    assert_eq!(selector.try_reserve(usize::MAX, 2), Err(overflow));
    assert_eq!(selector.try_workspace(usize::MAX, 2).unwrap_err(), overflow);
    let ws = selector.try_workspace(8, 2).unwrap();
    assert_eq!((ws.max_pool(), ws.max_budget()), (8, 2));
    let caught = std::panic::catch_unwind(|| Selector::with_capacity(usize::MAX, 2));
    assert!(caught.is_err());
}
