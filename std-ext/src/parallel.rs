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
    pursuit_with, Element, Error, Executor, Input, Method, PassJob, PursuitOptions, Workspace,
};

use crate::selector::{Selection, Selector};

/// How long an idle worker spins (reacting within ~100 ns) before it
/// parks (reacting within a few µs, using no CPU).
const SPIN: Duration = Duration::from_micros(200);

/// State shared by the caller and the workers of a [`SplitPool`].
///
/// Protocol for one batch of n jobs: the caller stores `jobs`, sets
/// `pending` = n − 1, then clears `claimed[1..n]` (Release) and bumps
/// `epoch`. Job j ≥ 1 is run by whoever first sets `claimed[j]` (worker j
/// normally; the caller once its own job 0 is done and worker j has not
/// started yet, e.g. because the OS descheduled it), and whoever ran it
/// decrements `pending`. The caller returns once `pending` is 0, so the jobs
/// outlive every access; a worker reads `jobs` only after winning a claim
/// (Acquire), which orders the read after the caller's store of this batch.
struct Shared {
    /// Bumped by the caller for every batch (and for shutdown).
    epoch: AtomicU64,
    /// The jobs of the current batch.
    jobs: AtomicPtr<PassJob<'static>>,
    /// Jobs 1.. of the current batch not finished yet.
    pending: AtomicUsize,
    /// Per job index: taken by someone in the current batch (true between
    /// batches).
    claimed: Vec<AtomicBool>,
    shutdown: AtomicBool,
    /// A job panicked on a worker (re-raised on the caller).
    panicked: AtomicBool,
    /// Per worker: parked (or about to park) and needs an unpark.
    sleeping: Vec<AtomicBool>,
    /// Workers that have not yet started running (see `SplitPool::new`).
    starting: AtomicUsize,
}

impl Shared {
    /// Runs job `index` of the current batch if nobody has taken it yet.
    fn try_run(&self, index: usize) {
        if self.claimed[index].swap(true, Ordering::AcqRel) {
            return;
        }
        let jobs = self.jobs.load(Ordering::Relaxed);
        // SAFETY: winning the claim (Acquire) orders this after the
        // caller's store of the current batch's `jobs`, which has more
        // than `index` entries (only those claims were cleared); the caller
        // keeps them alive until `pending` is 0, which needs our decrement
        // below; and the claim makes this the only access to job `index`.
        // `PassJob` is `Send`.
        let job = unsafe { &mut *jobs.add(index) };
        if catch_unwind(AssertUnwindSafe(|| job.run())).is_err() {
            self.panicked.store(true, Ordering::Relaxed);
        }
        self.pending.fetch_sub(1, Ordering::Release);
    }
}

/// A persistent set of worker threads that run the parts of one query's
/// passes over the candidate matrix: an [`Executor`] for
/// [`pursuit_with`].
///
/// With `threads` = T, every pass is cut into T contiguous row ranges
/// (fewer for pools under 8·T rows) and the thread of index j (the caller
/// is 0) computes range j, so each thread's share of the candidate matrix
/// stays in its own core's cache across the K + 1 passes of a query.
/// Workers wait for work by spinning briefly (~200 µs) and then parking; a
/// pass costs one atomic handshake (well under a microsecond while the
/// workers spin), so splitting pays off when one pass takes several
/// microseconds (P·d ≳ 50 000 f32). If a worker has not started its part
/// by the time the caller finished its own (the OS descheduled it, or it
/// is parked), the caller runs that part too instead of waiting.
///
/// Results are bit-identical to the single-threaded
/// [`pursuit`](mempursuit_core::pursuit). Calls allocate nothing. One
/// `SplitPool` serves one caller at a time (`&mut self`); dropping it stops
/// and joins the workers.
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
            pending: AtomicUsize::new(0),
            claimed: (0..threads).map(|_| AtomicBool::new(true)).collect(),
            shutdown: AtomicBool::new(false),
            panicked: AtomicBool::new(false),
            sleeping: (0..threads).map(|_| AtomicBool::new(false)).collect(),
            starting: AtomicUsize::new(0),
        });
        let mut pool = SplitPool {
            shared,
            workers: Vec::with_capacity(threads - 1),
            handles: Vec::with_capacity(threads - 1),
            threads: 1,
        };
        for index in 1..threads {
            pool.shared.starting.fetch_add(1, Ordering::SeqCst);
            let shared = Arc::clone(&pool.shared);
            let handle = thread::Builder::new()
                .name(format!("mempursuit-split-{index}"))
                .spawn(move || worker(&shared, index))?;
            pool.handles.push(handle.thread().clone());
            pool.workers.push(handle);
            pool.threads += 1;
        }
        // Return only once every worker runs (thread start-up allocates,
        // e.g. the thread's name; later calls must not).
        while pool.shared.starting.load(Ordering::SeqCst) != 0 {
            thread::yield_now();
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
    ) -> Result<mempursuit_core::SelectionView<'w>, Error> {
        pursuit_with(input, budget, options, ws, self)
    }
}

impl Executor for SplitPool {
    fn parts(&self) -> usize {
        self.threads
    }

    fn execute(&mut self, jobs: &mut [PassJob<'_>]) {
        let n = jobs.len().min(self.threads);
        if n <= 1 {
            jobs.iter_mut().for_each(PassJob::run);
            return;
        }
        let s = &*self.shared;
        // Publish the batch (see `Shared`). The pointer erases the jobs'
        // lifetime; this function does not return, not even by unwinding
        // (`Wait`), before every claimed job is finished.
        s.jobs.store(
            jobs.as_mut_ptr().cast::<PassJob<'static>>(),
            Ordering::Relaxed,
        );
        s.pending.store(n - 1, Ordering::Relaxed);
        for claim in &s.claimed[1..n] {
            claim.store(false, Ordering::Release);
        }
        s.epoch.fetch_add(1, Ordering::SeqCst);
        for (w, handle) in self.handles.iter().enumerate().take(n - 1) {
            if s.sleeping[w + 1].load(Ordering::SeqCst) {
                handle.unpark();
            }
        }
        let wait = Wait(s, n);
        // Our part, then any part no worker has started, then any extra
        // jobs beyond the thread count (the core never makes those).
        // SAFETY of the shared access: job 0 and jobs ≥ n are never claimed
        // by workers, so `&mut` access to them here is exclusive.
        let (first, rest) = jobs.split_at_mut(1);
        first[0].run();
        for index in 1..n {
            s.try_run(index);
        }
        for job in rest.iter_mut().skip(n - 1) {
            job.run();
        }
        drop(wait);
        if s.panicked.swap(false, Ordering::Relaxed) {
            panic!("mempursuit: a SplitPool worker panicked while running a pass");
        }
    }
}

/// Waits (in `drop`, so also while unwinding) until every job of the
/// current batch claimed by a worker has finished. Jobs nobody claimed yet
/// (only possible when the caller's own part unwound) are claimed and
/// dropped first, so no worker can reach them after `execute` returns.
struct Wait<'a>(&'a Shared, usize);

impl Drop for Wait<'_> {
    fn drop(&mut self) {
        for claim in &self.0.claimed[1..self.1] {
            if !claim.swap(true, Ordering::AcqRel) {
                self.0.pending.fetch_sub(1, Ordering::Release);
            }
        }
        let start = Instant::now();
        let mut spins = 0u32;
        while self.0.pending.load(Ordering::Acquire) != 0 {
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(256) && start.elapsed() > SPIN {
                // The worker running a part was descheduled: give it the core.
                thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

fn worker(s: &Shared, index: usize) {
    // Start-up is done (the name is set, thread-locals of std exist).
    let _ = thread::current();
    s.starting.fetch_sub(1, Ordering::SeqCst);
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
        s.try_run(index);
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
            .map(|input| selector.select(input, budget, method))
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
                        done.push((i, selector.select(input, budget, method)));
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
