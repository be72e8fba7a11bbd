//! Threads: one query split across threads ([`SplitPool`]), and many
//! independent queries on a pool of threads ([`select_batch`]).
//!
//! Both give results identical, bit for bit, to the single-threaded
//! functions: the core's passes have a fixed reduction order per row, a
//! split pass only decides which thread computes which rows, and the small
//! per-step work (refit, score refresh, argmax) always runs on the calling
//! thread; independent queries share nothing.
//!
//! ```
//! use mempursuit::parallel::{select_batch, SplitPool};
//! use mempursuit::{pursuit, Input, Method, PursuitOptions, Selector};
//!
//! let d = 16;
//! let pool: Vec<f32> = (0..64 * d).map(|i| ((i * 7919 % 101) as f32 - 50.0) / 50.0).collect();
//! let query: Vec<f32> = (0..d).map(|i| (i as f32 - 7.5) / 8.0).collect();
//! let input = Input::new(&query, &pool);
//! let opts = PursuitOptions::default();
//!
//! // (a) one query, every pass over the pool split over 2 threads
//! let mut split = SplitPool::new(2)?;
//! let mut selector = Selector::new();
//! let mut ws = selector.workspace(64, 5);
//! let picks = split.pursuit(&input, 5, &opts, &mut ws)?.picks().to_vec();
//! let mut ws = selector.workspace(64, 5);
//! assert_eq!(picks, pursuit(&input, 5, &opts, &mut ws)?.picks());
//!
//! // (b) many queries on 2 threads, results in input order
//! let results = select_batch(&[input, input], 5, &Method::Pursuit(opts), 2);
//! assert_eq!(results[1].as_ref().unwrap().picks, picks);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle, Thread};
use std::time::{Duration, Instant};

use mempursuit_core::kernels::MAX_PARTS;
use mempursuit_core::{
    mmr, pursuit_with, top_k, Element, Error, Executor, Input, PassJob, PursuitOptions, Workspace,
};

use crate::selector::{Method, Selection, Selector};

/// How long an idle worker spins (reacting within ~100 ns) before it
/// parks (reacting within a few µs, using no CPU).
const SPIN: Duration = Duration::from_micros(200);

/// State shared by the caller and the workers of a [`SplitPool`].
struct Shared {
    /// Bumped by the caller for every batch of jobs (and for shutdown).
    epoch: AtomicU64,
    /// The jobs of the current batch (valid from the bump of `epoch` until
    /// `pending` is back to 0) and their count.
    jobs: AtomicPtr<PassJob<'static>>,
    njobs: AtomicUsize,
    /// Workers that have not yet finished the current batch.
    pending: AtomicUsize,
    shutdown: AtomicBool,
    /// A job panicked on a worker (re-raised on the caller).
    panicked: AtomicBool,
    /// Per worker: parked (or about to park) and needs an unpark.
    sleeping: Vec<AtomicBool>,
}

/// A persistent set of worker threads that run the parts of one query's
/// passes over the candidate matrix: an [`Executor`] for
/// [`pursuit_with`](mempursuit_core::pursuit_with).
///
/// With `threads` = T, every pass is cut into T contiguous row ranges
/// (fewer for pools under 8·T rows) and the thread of index j (the caller
/// is 0) always computes range j, so each thread's share of the candidate
/// matrix stays in its own core's cache across the K + 1 passes of a query.
/// Workers wait for work by spinning briefly (~200 µs) and then parking; a
/// pass costs one atomic handshake (well under a microsecond when the
/// workers are spinning), so splitting pays off when one pass takes several
/// microseconds (P·d ≳ 50 000 f32).
///
/// Results are bit-identical to the single-threaded [`pursuit`](mempursuit_core::pursuit).
/// Calls allocate nothing. One `SplitPool` serves one caller at a time
/// (`&mut self`); dropping it stops and joins the workers.
pub struct SplitPool {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    handles: Vec<Thread>,
    threads: usize,
}

impl std::fmt::Debug for SplitPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SplitPool")
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

impl SplitPool {
    /// A pool that splits each pass over `threads` threads: the caller and
    /// `threads − 1` workers. `threads` is clamped to 1..=16
    /// ([`MAX_PARTS`]); 1 spawns nothing and runs serially.
    ///
    /// # Errors
    /// The I/O error of a failed thread spawn (workers already started are
    /// stopped).
    pub fn new(threads: usize) -> std::io::Result<SplitPool> {
        let threads = threads.clamp(1, MAX_PARTS);
        let shared = Arc::new(Shared {
            epoch: AtomicU64::new(0),
            jobs: AtomicPtr::new(std::ptr::null_mut()),
            njobs: AtomicUsize::new(0),
            pending: AtomicUsize::new(0),
            shutdown: AtomicBool::new(false),
            panicked: AtomicBool::new(false),
            sleeping: (0..threads).map(|_| AtomicBool::new(false)).collect(),
        });
        let mut pool = SplitPool {
            shared,
            workers: Vec::with_capacity(threads - 1),
            handles: Vec::with_capacity(threads - 1),
            threads: 1,
        };
        for index in 1..threads {
            let shared = Arc::clone(&pool.shared);
            let handle = thread::Builder::new()
                .name(format!("mempursuit-split-{index}"))
                .spawn(move || worker(&shared, index))?;
            pool.handles.push(handle.thread().clone());
            pool.workers.push(handle);
            pool.threads += 1;
        }
        Ok(pool)
    }

    /// Number of threads a pass is split over (the caller included).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// [`pursuit`](mempursuit_core::pursuit) with every pass split over this
    /// pool's threads; same result, bit for bit.
    ///
    /// # Errors
    /// As [`pursuit`](mempursuit_core::pursuit).
    ///
    /// # Panics
    /// If a worker thread panicked while running a part (a bug).
    pub fn pursuit<'w, E: Element>(
        &mut self,
        input: &Input<'_, E>,
        budget: usize,
        options: &PursuitOptions,
        ws: &'w mut Workspace<'_>,
    ) -> Result<mempursuit_core::Selection<'w>, Error> {
        pursuit_with(input, budget, options, ws, self)
    }
}

impl Executor for SplitPool {
    fn parts(&self) -> usize {
        self.threads
    }

    fn execute(&mut self, jobs: &mut [PassJob<'_>]) {
        let workers = self.threads - 1;
        if workers == 0 || jobs.len() <= 1 {
            jobs.iter_mut().for_each(PassJob::run);
            return;
        }
        let s = &*self.shared;
        // Publish the batch. The pointer erases the jobs' lifetime; the
        // workers touch it only until they decrement `pending`, and this
        // function does not return (not even by unwinding: `Wait`) before
        // `pending` is 0.
        s.jobs.store(
            jobs.as_mut_ptr().cast::<PassJob<'static>>(),
            Ordering::Relaxed,
        );
        s.njobs.store(jobs.len(), Ordering::Relaxed);
        s.pending.store(workers, Ordering::Relaxed);
        s.epoch.fetch_add(1, Ordering::SeqCst);
        for (w, handle) in self.handles.iter().enumerate() {
            if s.sleeping[w + 1].load(Ordering::SeqCst) {
                handle.unpark();
            }
        }
        let wait = Wait(s);
        jobs[0].run();
        for job in jobs.iter_mut().skip(self.threads) {
            job.run();
        }
        drop(wait);
        if s.panicked.swap(false, Ordering::Relaxed) {
            panic!("mempursuit: a SplitPool worker panicked while running a pass");
        }
    }
}

/// Waits (in `drop`, so also while unwinding) until every worker has
/// finished the current batch.
struct Wait<'a>(&'a Shared);

impl Drop for Wait<'_> {
    fn drop(&mut self) {
        let start = Instant::now();
        let mut spins = 0u32;
        while self.0.pending.load(Ordering::Acquire) != 0 {
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(256) && start.elapsed() > SPIN {
                // A worker was descheduled: give it the core.
                thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

fn worker(s: &Shared, index: usize) {
    let mut seen = 0u64;
    loop {
        // Wait for a new epoch: spin, then park.
        let start = Instant::now();
        let mut spins = 0u32;
        let epoch = loop {
            let e = s.epoch.load(Ordering::Acquire);
            if e != seen {
                break e;
            }
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(256) && start.elapsed() > SPIN {
                s.sleeping[index].store(true, Ordering::SeqCst);
                if s.epoch.load(Ordering::SeqCst) == seen {
                    thread::park();
                }
                s.sleeping[index].store(false, Ordering::SeqCst);
            } else {
                std::hint::spin_loop();
            }
        };
        seen = epoch;
        if s.shutdown.load(Ordering::Acquire) {
            return;
        }
        let n = s.njobs.load(Ordering::Relaxed);
        if index < n {
            let jobs = s.jobs.load(Ordering::Relaxed);
            // SAFETY: the caller published `jobs` (n valid jobs) before
            // bumping the epoch we acquired, keeps them alive until
            // `pending` reaches 0, and no other thread touches job `index`
            // (the caller runs 0 and ≥ threads, worker w runs w).
            // `PassJob` is `Send`.
            let job = unsafe { &mut *jobs.add(index) };
            if catch_unwind(AssertUnwindSafe(|| job.run())).is_err() {
                s.panicked.store(true, Ordering::Relaxed);
            }
        }
        s.pending.fetch_sub(1, Ordering::Release);
    }
}

impl Drop for SplitPool {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Release);
        self.shared.epoch.fetch_add(1, Ordering::SeqCst);
        for handle in &self.handles {
            handle.unpark();
        }
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

const _: () = {
    const fn assert_send<T: Send>() {}
    assert_send::<PassJob<'static>>();
};

/// Runs `method` on `input` with budget K in `selector`'s workspace and
/// returns an owned result: [`Selector::select`] for any candidate storage.
///
/// # Errors
/// The core's input errors ([`Error`]).
pub fn select_with<E: Element>(
    selector: &mut Selector,
    input: &Input<'_, E>,
    budget: usize,
    method: &Method,
) -> Result<Selection, Error> {
    let pool = input.pool_size().unwrap_or(0);
    let mut ws = selector.workspace(pool, budget.min(pool));
    let sel = match method {
        Method::Pursuit(o) => {
            pursuit_with(input, budget, o, &mut ws, &mut mempursuit_core::Serial)?
        }
        Method::TopK(p) => top_k(input, budget, p, &mut ws)?,
        Method::Mmr { lambda, input: p } => mmr(input, budget, *lambda, p, &mut ws)?,
    };
    Ok(sel.into())
}

/// Runs `method` with budget K on every input on `threads` scoped threads
/// (clamped to ≥ 1 and to the number of inputs), one [`Selector`] per
/// thread, and returns the results in input order. Each result is
/// bit-identical to a single-threaded [`Selector::select`] of that input.
///
/// Queries are handed out one at a time from a shared counter, so uneven
/// pool sizes balance out. Spawning costs some tens of microseconds per
/// thread per call: give it batches, not single queries.
///
/// # Panics
/// If a thread cannot be spawned.
pub fn select_batch<E: Element>(
    inputs: &[Input<'_, E>],
    budget: usize,
    method: &Method,
    threads: usize,
) -> Vec<Result<Selection, Error>> {
    let threads = threads.clamp(1, inputs.len().max(1));
    if threads == 1 {
        let mut selector = Selector::new();
        return inputs
            .iter()
            .map(|input| select_with(&mut selector, input, budget, method))
            .collect();
    }
    let next = AtomicUsize::new(0);
    let mut parts: Vec<Vec<(usize, Result<Selection, Error>)>> = thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut selector = Selector::new();
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(input) = inputs.get(i) else {
                            break;
                        };
                        done.push((i, select_with(&mut selector, input, budget, method)));
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut out: Vec<Option<Result<Selection, Error>>> = (0..inputs.len()).map(|_| None).collect();
    for (i, r) in parts.drain(..).flatten() {
        out[i] = Some(r);
    }
    out.into_iter()
        .map(|r| r.expect("every input was handed out exactly once"))
        .collect()
}
