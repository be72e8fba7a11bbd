//! Running calls without the GIL: one (query, pool) pair through
//! [`Selector::select_spec`], or many on threads, each pair through the
//! same call, so a batch's result for a pair is the single call's, and
//! never a panic (a panic of the Rust crate is caught per pair and
//! reported as its message).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use mempursuit::{CallData, CallError, Pool, SelectSpec, Selection, Selector};

use crate::errors::panic_message;

/// The arrays of one call, as slices.
#[derive(Clone, Copy)]
pub(crate) struct Pair<'a> {
    pub query: &'a [f32],
    pub pool: Pool<'a>,
    pub relevance: Option<&'a [f32]>,
    pub costs: Option<&'a [f32]>,
}

/// A call's result, its error, or the message of a panic (`Err`).
pub(crate) type Outcome = Result<Result<Selection, CallError>, String>;

/// One call with `selector`.
pub(crate) fn one(selector: &mut Selector, spec: &SelectSpec, pair: Pair<'_>, k: usize) -> Outcome {
    catch_unwind(AssertUnwindSafe(|| {
        let data = CallData::new(pair.query, pair.pool)
            .with_relevance(pair.relevance)
            .with_costs(pair.costs);
        selector.select_spec(spec, data, k)
    }))
    .map_err(|p| panic_message(p.as_ref()))
}

/// Every pair on up to `threads` threads (this one included), one
/// [`Selector`] per thread; pairs are handed out one at a time from a
/// shared counter, so uneven pools balance out. A thread that cannot be
/// spawned leaves its share to the others. Results in input order.
pub(crate) fn batch(
    spec: &SelectSpec,
    pairs: &[Pair<'_>],
    k: usize,
    threads: usize,
) -> Vec<Outcome> {
    let threads = threads.clamp(1, pairs.len().max(1));
    let next = AtomicUsize::new(0);
    let work = || {
        let mut selector = Selector::new();
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(pair) = pairs.get(i) else {
                break;
            };
            done.push((i, one(&mut selector, spec, *pair, k)));
        }
        done
    };
    let parts: Vec<Vec<(usize, Outcome)>> = thread::scope(|scope| {
        let handles: Vec<_> = (1..threads)
            .filter_map(|_| thread::Builder::new().spawn_scoped(scope, work).ok())
            .collect();
        let mut parts = vec![work()];
        // A worker's own code cannot panic (each call is caught); a failed
        // join leaves its pairs unanswered, reported below.
        parts.extend(handles.into_iter().filter_map(|h| h.join().ok()));
        parts
    });
    let mut out: Vec<Option<Outcome>> = (0..pairs.len()).map(|_| None).collect();
    for (i, r) in parts.into_iter().flatten() {
        if let Some(slot) = out.get_mut(i) {
            *slot = Some(r);
        }
    }
    out.into_iter()
        .map(|r| r.unwrap_or_else(|| Err("a worker thread of the batch ended early".to_owned())))
        .collect()
}
