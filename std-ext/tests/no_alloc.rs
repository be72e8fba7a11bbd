//! Once the workspace exists, a selection allocates nothing: a counting
//! global allocator sees zero allocations during pursuit (paper mode,
//! adaptive, centroid), top-K and MMR calls through `Selector::workspace`
//! and the core functions, on f32 and f16 storage, and during a query split
//! over a `SplitPool`.
//!
//! One test function only: the counter is global, and a second test running
//! concurrently would allocate under it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use mempursuit::half::f16;
use mempursuit::parallel::SplitPool;
use mempursuit::{
    mmr, pursuit, top_k, Input, InputPolicy, MmrOptions, PursuitOptions, Selector, Stopping,
};

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; the
// counter is a plain atomic (no allocation, no re-entrancy).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `f`.
fn allocations_in(f: impl FnOnce()) -> usize {
    ALLOCATIONS.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    f();
    COUNTING.store(false, Ordering::SeqCst);
    ALLOCATIONS.load(Ordering::SeqCst)
}

/// Deterministic, roughly unit rows.
fn rows(n: usize, d: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    let mut m: Vec<f32> = (0..n * d)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        })
        .collect();
    for r in m.chunks_mut(d) {
        let n = r.iter().map(|x| x * x).sum::<f32>().sqrt();
        r.iter_mut().for_each(|x| *x /= n);
    }
    m
}

#[test]
fn selections_allocate_nothing_once_the_workspace_exists() {
    let (p, d, k) = (120, 64, 15);
    let pool = rows(p, d, 1);
    let query = rows(1, d, 2);
    let pool16: Vec<f16> = pool.iter().map(|&x| f16::from_f32(x)).collect();
    let input = Input::new(&query, &pool);
    let input16 = Input::with_storage(&query, &pool16);
    let mut selector = Selector::with_capacity(p, k);
    let mut split = SplitPool::new(2).unwrap();
    let adaptive = PursuitOptions {
        stopping: Stopping::PAPER_ADAPTIVE,
        ..PursuitOptions::default()
    };
    let policy = InputPolicy::default();

    // Warm up once outside the count (lazy CPU-feature detection caches,
    // first use of the split pool's workers).
    {
        let mut ws = selector.workspace(p, k);
        pursuit(&input, k, &PursuitOptions::default(), &mut ws).unwrap();
        split
            .pursuit(&input, k, &PursuitOptions::default(), &mut ws)
            .unwrap();
    }

    let mut picks = Vec::with_capacity(32 * k);
    let n = allocations_in(|| {
        let mut ws = selector.workspace(p, k);
        let mut sink = |s: &[usize]| picks.extend_from_slice(s);
        sink(
            pursuit(&input, k, &PursuitOptions::default(), &mut ws)
                .unwrap()
                .picks(),
        );
        sink(pursuit(&input, k, &adaptive, &mut ws).unwrap().picks());
        sink(
            pursuit(&input, k, &PursuitOptions::centroid(0.5), &mut ws)
                .unwrap()
                .picks(),
        );
        sink(top_k(&input, k, &policy, &mut ws).unwrap().picks());
        sink(
            mmr(
                &input,
                k,
                &MmrOptions {
                    lambda: 0.5,
                    input: policy,
                },
                &mut ws,
            )
            .unwrap()
            .picks(),
        );
        sink(
            pursuit(&input16, k, &PursuitOptions::default(), &mut ws)
                .unwrap()
                .picks(),
        );
        sink(
            mmr(
                &input16,
                k,
                &MmrOptions {
                    lambda: 0.5,
                    input: policy,
                },
                &mut ws,
            )
            .unwrap()
            .picks(),
        );
        for _ in 0..5 {
            sink(
                split
                    .pursuit(&input, k, &PursuitOptions::default(), &mut ws)
                    .unwrap()
                    .picks(),
            );
            sink(
                split
                    .pursuit(&input16, k, &PursuitOptions::centroid(0.5), &mut ws)
                    .unwrap()
                    .picks(),
            );
        }
    });
    assert_eq!(n, 0, "allocations during selection calls");
    // The calls did real work (adaptive stopping may end one early).
    assert!(picks.len() > 15 * k && picks.iter().all(|&i| i < p));

    // The counter itself works: an owned result allocates.
    let n = allocations_in(|| {
        let sel = selector
            .select(
                &input,
                k,
                &mempursuit::Method::Pursuit(PursuitOptions::default()),
            )
            .unwrap();
        assert_eq!(sel.picks.len(), k);
    });
    assert!(n > 0);
}
