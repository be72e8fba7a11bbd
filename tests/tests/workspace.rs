//! Caller-owned workspaces: capacity errors (pool and budget) with
//! `FixedWorkspace` and `Workspace::from_buffers`, buffers that are too
//! small, and reuse across calls of different shapes and methods.

use mempursuit::{
    Capacity, CentroidWorkspace, Error, FixedWorkspace, Input, InputPolicy, Method, MmrOptions,
    PursuitOptions, PursuitWorkspace, ReserveError, ScratchBuffer, ScratchBuffers, ScratchKind,
    ScratchSize, Selection, Selector, TopKWorkspace, Workspace,
};
use mempursuit_tests::random;
use mempursuit_tests::scratch::ScratchVecs;

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
    // Int8 (every selector): 8P + K·P + K + K·P f32, 3K² + 20K + 5P f64,
    // 2P + 2K usize.
    assert_eq!(need.f32s, 8 * 20 + 6 * 20 + 6 + 6 * 20);
    assert_eq!(need.f64s, 3 * 6 * 6 + 20 * 6 + 5 * 20);
    assert_eq!(need.indices, 2 * 20 + 2 * 6);
    assert_eq!(need.flags, 20 + 6);
    assert_eq!(need.steps, 6);
    assert!(need.bytes() > 0);
    let mut bufs = ScratchVecs::new(need);
    let mut ws = bufs.workspace(ScratchKind::Int8, 20, 6).unwrap();
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
    let mut long = ScratchVecs::new(ScratchSize {
        f32s: need.f32s + 5,
        f64s: need.f64s + 5,
        indices: need.indices + 5,
        flags: need.flags + 5,
        steps: need.steps + 5,
    });
    let mut ws = long.workspace(ScratchKind::Int8, 20, 6).unwrap();
    let s = run_on(&mut ws, &q, &pool, 6, &methods()[0]).unwrap();
    assert_eq!(s, fresh(&q, &pool, 6, &methods()[0]));
}

/// Each method runs in a workspace of exactly its own kind
/// (`ScratchSize::for_method`) with the results of a full one, and a
/// workspace of a smaller kind refuses it before any work with an error
/// naming both kinds.
#[test]
fn every_method_runs_in_its_own_kind() {
    let (q, pool) = random::clustered_pool(4, 20, 8, 3, 0.3);
    let all = [
        methods().to_vec(),
        vec![Method::recommended(), Method::default()],
    ]
    .concat();
    for m in &all {
        let kind = ScratchKind::of(m);
        let mut bufs = ScratchVecs::new(ScratchSize::for_method(m, 20, 6).unwrap());
        let mut ws = bufs.workspace(kind, 20, 6).unwrap();
        assert_eq!(ws.kind(), kind);
        assert_eq!(
            run_on(&mut ws, &q, &pool, 6, m).unwrap(),
            fresh(&q, &pool, 6, m)
        );
        for smaller in [
            ScratchKind::TopK,
            ScratchKind::Centroid,
            ScratchKind::Pursuit,
        ] {
            if smaller >= kind {
                continue;
            }
            let mut bufs = ScratchVecs::for_kind(smaller, 20, 6);
            let mut ws = bufs.workspace(smaller, 20, 6).unwrap();
            let e = run_on(&mut ws, &q, &pool, 6, m).unwrap_err();
            assert_eq!(
                e,
                Error::WorkspaceKind {
                    needed: kind,
                    found: smaller
                }
            );
            assert!(e.to_string().contains(kind.name()), "{e}");
        }
    }
    // The certified int8 pursuit needs the int8 kind.
    let codes = mempursuit::Int8Candidates::quantize(&pool, 8).unwrap();
    let mut bufs = ScratchVecs::for_kind(ScratchKind::Pursuit, 20, 6);
    let mut ws = bufs.workspace(ScratchKind::Pursuit, 20, 6).unwrap();
    let got = mempursuit::pursuit_int8(
        &Input::new(&q, &pool),
        &codes.view(),
        6,
        &PursuitOptions::default(),
        &mut ws,
    );
    assert_eq!(
        got.unwrap_err(),
        Error::WorkspaceKind {
            needed: ScratchKind::Int8,
            found: ScratchKind::Pursuit
        }
    );
}

/// The fixed workspaces of each kind run their methods with the results of
/// a full one.
#[test]
fn fixed_workspaces_of_each_kind() {
    let (q, pool) = random::clustered_pool(6, 30, 8, 3, 0.3);
    let m = methods();
    let mut topk = TopKWorkspace::<32, 8>::new();
    assert_eq!(topk.view().kind(), ScratchKind::TopK);
    assert_eq!(
        run_on(&mut topk.view(), &q, &pool, 8, &m[2]).unwrap(),
        fresh(&q, &pool, 8, &m[2])
    );
    let mut centroid = CentroidWorkspace::<32, 8>::new();
    for x in [&m[1], &m[2], &m[3], &Method::recommended()] {
        let got = run_on(&mut centroid.view(), &q, &pool, 8, x).unwrap();
        assert_eq!(got, fresh(&q, &pool, 8, x), "{x:?}");
    }
    let mut qp = Box::new(PursuitWorkspace::<32, 8>::new());
    for x in &m {
        let got = run_on(&mut qp.view(), &q, &pool, 8, x).unwrap();
        assert_eq!(got, fresh(&q, &pool, 8, x), "{x:?}");
    }
}

#[test]
fn buffers_too_small() {
    let need = ScratchSize::for_capacity(10, 4).unwrap();
    let sizes = [need.f32s, need.f64s, need.indices, need.flags, need.steps];
    for short in 0..5 {
        let mut s = sizes;
        s[short] -= 1;
        let mut bufs = ScratchVecs::new(ScratchSize {
            f32s: s[0],
            f64s: s[1],
            indices: s[2],
            flags: s[3],
            steps: s[4],
        });
        let got = bufs.workspace(ScratchKind::Int8, 10, 4);
        let buffer = [
            ScratchBuffer::F32s,
            ScratchBuffer::F64s,
            ScratchBuffer::Indices,
            ScratchBuffer::Flags,
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
    let empty = || ScratchBuffers {
        f32s: &mut [],
        f64s: &mut [],
        indices: &mut [],
        flags: &mut [],
        steps: &mut [],
    };
    let got = Workspace::from_buffers(ScratchKind::Int8, usize::MAX, 2, empty());
    assert_eq!(
        got.unwrap_err(),
        Error::ScratchOverflow {
            max_pool: usize::MAX,
            max_budget: 2
        }
    );
    // A zero-capacity workspace handles the empty pool.
    let mut ws = Workspace::from_buffers(ScratchKind::Int8, 0, 0, empty()).unwrap();
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
        "Workspace { max_pool: 64, max_budget: 16, kind: Int8, pool: 40, .. }"
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
        "Workspace { max_pool: 200, max_budget: 20, kind: Int8, pool: 0, .. }"
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
