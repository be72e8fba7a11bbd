//! Threads: one query split across threads ([`SplitPool`]), and many
//! independent queries on a pool of threads ([`select_batch`]), which
//! chooses how to spend its threads ([`BatchPlan`], [`plan_batch`]): whole
//! queries per thread when a pool fits in a core's L2 cache, each query
//! split over several threads when it does not (a pool streamed K + 1
//! times from the shared L3 by every core at once made two threads slower
//! than one), or a mix of both on many threads.
//! [`select_batch_with`] takes the plan from the caller.
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
/// # Worker protocol (the SAFETY argument of the two `unsafe` blocks)
///
/// The jobs of a pass borrow the caller's workspace for a lifetime the
/// persistent workers cannot name, so `execute` publishes them as a raw
/// pointer with the lifetime erased. This is sound because:
///
/// 1. **One pointer, no overlapping references.** `execute` derives one
///    pointer `base` from its `&mut [PassJob]` and makes every access to the
///    jobs through it (its own and, through `jobs`, the workers') until it
///    returns; it never re-borrows the slice while a worker may run, and
///    every `&mut` it or a worker makes covers one job only.
/// 2. **Exclusive jobs.** For a batch of n jobs the caller stores `jobs`,
///    sets `pending` = n − 1, then clears `claimed[1..n]` (Release) and bumps
///    `epoch`. Job j in 1..n is run by whoever first flips `claimed[j]` from
///    false to true (worker j normally; the caller once its own job 0 is
///    done, when worker j has not started yet, e.g. because the OS
///    descheduled it). A flag is cleared once per batch, so one thread
///    wins it. Job 0 and jobs n.. have no cleared flag: only the caller runs
///    them.
/// 3. **Ordering.** A winner reads `jobs` after its claim (an AcqRel swap
///    that reads the caller's Release clear), so it sees this batch's
///    pointer; a later batch's pointer is stored only after this batch's
///    `pending` reached 0, which needs the winner's own decrement. The
///    winner's writes to its job happen before its `pending` decrement
///    (Release), and the caller returns only after reading `pending` = 0
///    (Acquire), so the caller (and the core after it) sees every job's
///    results.
/// 4. **Lifetime.** `execute` returns, normally or by unwinding, only
///    through `Wait`, which first claims every job nobody has claimed (so no
///    worker can reach it later; all flags are true between batches) and
///    then waits for `pending` = 0: no worker touches a job after `execute`
///    returned, so the erased lifetime is never outlived.
/// 5. **`Send`.** `PassJob` is `Send` (asserted below), so running it on a
///    worker thread is allowed.
///
/// Miri checks this protocol (`.ci/miri.sh`, under Stacked and Tree
/// Borrows).
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
    #[allow(unsafe_code)]
    fn try_run(&self, index: usize) {
        if self.claimed[index].swap(true, Ordering::AcqRel) {
            return;
        }
        let jobs = self.jobs.load(Ordering::Relaxed);
        // SAFETY: see the protocol on `Shared`: winning the claim (2) makes
        // this the only access to job `index` of the current batch, which
        // has more than `index` jobs (only those flags were cleared); the
        // claim orders the load above after the caller's store of this
        // batch's pointer (3); the caller keeps the jobs alive and does not
        // touch them until `pending` is 0 (1, 4), which needs our decrement
        // below.
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
    /// What the split passes cost the caller (see [`SplitBalance`]).
    balance: SplitBalance,
}

/// What the split passes of a [`SplitPool`] cost its caller since the
/// pool was made (or [`SplitPool::take_balance`] last read it): the time
/// it ran its own part of each pass, and the time it then spent on parts
/// meant for the workers (a worker had not started yet) and waiting for
/// them. On a quiet machine the second is a small fraction of the first
/// (the parts are even); when a worker's core is taken by another process,
/// the caller waits for its preempted part in every pass and the fraction
/// nears or passes 1: the split then runs no faster than one thread, or
/// slower. [`select_batch`] reads it to leave a split that waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SplitBalance {
    /// Split passes run (passes with one part ran serially, uncounted).
    pub passes: u64,
    /// Time the caller ran its own part (part 0) of those passes.
    pub own: Duration,
    /// Time the caller spent after its own part: running parts no worker
    /// had started, then waiting for the workers' parts to finish.
    pub lost: Duration,
}

impl SplitBalance {
    /// `lost / own` (0 before any split pass).
    pub fn lost_share(&self) -> f64 {
        if self.own.is_zero() {
            0.0
        } else {
            self.lost.as_secs_f64() / self.own.as_secs_f64()
        }
    }
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
            balance: SplitBalance::default(),
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

    /// What the split passes since the last call cost the caller (see
    /// [`SplitBalance`]), and starts counting anew.
    pub fn take_balance(&mut self) -> SplitBalance {
        std::mem::take(&mut self.balance)
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

    #[allow(unsafe_code)]
    fn execute(&mut self, jobs: &mut [PassJob<'_>]) {
        let n = jobs.len().min(self.threads);
        if n <= 1 {
            jobs.iter_mut().for_each(PassJob::run);
            return;
        }
        let len = jobs.len();
        // Every access to the jobs from here until the end of this function
        // goes through `base` (the workers' through the copy published in
        // `Shared::jobs`): `jobs` itself is not used again, so no new
        // reference to the whole slice is created while a worker may hold
        // `&mut` to one of its elements (see the protocol on `Shared`).
        let base: *mut PassJob<'static> = jobs.as_mut_ptr().cast();
        let s = &*self.shared;
        // Publish the batch. The cast erases the jobs' lifetime; this
        // function does not return, not even by unwinding (`Wait`), before
        // every claimed job is finished, and unclaimed ones can no longer be
        // claimed.
        s.jobs.store(base, Ordering::Relaxed);
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
        let start = Instant::now();
        // SAFETY: `base` points to `len` ≥ n ≥ 2 live jobs, exclusively
        // borrowed by this call. Job 0 and jobs n.. are never claimable
        // (their `claimed` flags stay true), so this thread is the only one
        // that touches them; the `&mut` made here is to one element only
        // and ends before the next statement.
        unsafe { (*base).run() };
        let own = start.elapsed();
        for index in 1..n {
            s.try_run(index);
        }
        for index in n..len {
            // SAFETY: as for job 0 (index < len, never claimable).
            unsafe { (*base.add(index)).run() };
        }
        drop(wait);
        let b = &mut self.balance;
        b.passes += 1;
        b.own += own;
        b.lost += start.elapsed().saturating_sub(own);
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

/// How [`select_batch_with`] spends its threads on a batch of queries.
///
/// Every plan gives the same results, bit for bit (each query is computed
/// in the same fixed order whichever thread runs which rows); they differ
/// in speed only. See [`plan_batch`] for the rule [`BatchPlan::Auto`]
/// applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum BatchPlan {
    /// Chosen per batch by [`plan_batch`] from the size of the pools, the
    /// number of queries, the thread count and this machine's L2 cache
    /// ([`CacheInfo::detect`]); a split whose parts wait (another process
    /// holds a core) falls back to whole queries ([`FALLBACK_SHARE`]).
    #[default]
    Auto,
    /// Whole queries per thread: T threads, each running one query at a
    /// time (the fastest plan when a pool fits in a core's L2 cache).
    Queries,
    /// One query at a time, every pass split over all T threads
    /// ([`SplitPool`]; for pools larger than a core's L2 cache).
    Split,
    /// Groups of `n` threads (n clamped to 1..=T): ⌊T / n⌋ queries at a
    /// time, each split over the n threads of its group. `SplitBy(1)` is
    /// [`BatchPlan::Queries`], `SplitBy(T)` is [`BatchPlan::Split`].
    SplitBy(usize),
}

impl BatchPlan {
    /// The thread plan this choice gives for a batch of `shape` on
    /// `threads` threads with `cache` ([`plan_batch`] for
    /// [`BatchPlan::Auto`]; the fixed plans use the cache and the budget
    /// for nothing, and run at most one group per query).
    pub fn resolve(self, shape: &BatchShape, threads: usize, cache: &CacheInfo) -> ThreadPlan {
        let t = threads.max(1);
        let fixed = |split: usize| {
            let split = split.clamp(1, t);
            ThreadPlan {
                groups: (t / split).clamp(1, shape.queries.max(1)),
                split,
            }
        };
        match self {
            BatchPlan::Auto => plan_batch(shape, threads, cache.l2_bytes),
            BatchPlan::Queries => fixed(1),
            BatchPlan::Split => fixed(t),
            BatchPlan::SplitBy(n) => fixed(n),
        }
    }

    /// A short name: `auto`, `queries`, `split` or `split-by-N`.
    pub fn name(self) -> String {
        match self {
            BatchPlan::Auto => "auto".into(),
            BatchPlan::Queries => "queries".into(),
            BatchPlan::Split => "split".into(),
            BatchPlan::SplitBy(n) => format!("split-by-{n}"),
        }
    }
}

impl std::fmt::Display for BatchPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// A [`BatchPlan`] name that is none of `auto`, `queries`, `split`,
/// `split-by-N` (N ≥ 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseBatchPlanError(String);

impl std::fmt::Display for ParseBatchPlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown batch plan {:?}: use auto, queries, split or split-by-N (N ≥ 1 threads per query)",
            self.0
        )
    }
}

impl std::error::Error for ParseBatchPlanError {}

impl std::str::FromStr for BatchPlan {
    type Err = ParseBatchPlanError;

    /// Parses the names of [`BatchPlan::name`].
    fn from_str(s: &str) -> Result<BatchPlan, ParseBatchPlanError> {
        match s {
            "auto" => Ok(BatchPlan::Auto),
            "queries" => Ok(BatchPlan::Queries),
            "split" => Ok(BatchPlan::Split),
            _ => s
                .strip_prefix("split-by-")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|&n| n >= 1)
                .map(BatchPlan::SplitBy)
                .ok_or_else(|| ParseBatchPlanError(s.to_string())),
        }
    }
}

/// How a batch runs: `groups` queries at a time, each on `split` threads
/// (`groups · split` ≤ the thread count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ThreadPlan {
    /// Queries computed at the same time (one per group of threads).
    pub groups: usize,
    /// Threads per query: each of its passes is cut into this many row
    /// ranges ([`SplitPool`]); 1 runs the query on one thread.
    pub split: usize,
}

impl ThreadPlan {
    /// Threads the plan runs (`groups · split`).
    pub fn threads(&self) -> usize {
        self.groups * self.split
    }
}

impl std::fmt::Display for ThreadPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.groups, self.split) {
            (g, 1) => write!(
                f,
                "{g} whole quer{} at a time",
                if g == 1 { "y" } else { "ies" }
            ),
            (1, s) => write!(f, "each query split over {s} threads"),
            (g, s) => write!(f, "{g} queries at a time, each split over {s} threads"),
        }
    }
}

/// Share of a core's L2 cache a thread's part of a pool may take in
/// [`plan_batch`]: the rest holds the query's Gram rows, its workspace and
/// the picked vector.
pub const L2_FILL: f64 = 0.75;

/// Smallest pool (bytes) [`plan_batch`] splits across threads: a pass over
/// a smaller one takes a few microseconds, about what handing its parts to
/// the other threads costs (at d = 384, P = 200, 300 KB of f32, a split
/// measured 0.96–1.3×, BENCHMARKS.md).
pub const MIN_SPLIT_BYTES: usize = 512 * 1024;

/// Least number of bytes a group of threads should stream in a batch
/// ([`plan_batch`], rule 4): 8 MiB take about 0.2 ms at the 40 GB/s a core
/// streams from L3, several times the tens of microseconds that starting a
/// thread costs (≈ 70 µs measured per batch of 2 threads on the 2-vCPU VM
/// of BENCHMARKS.md).
pub const MIN_GROUP_BYTES: usize = 8 << 20;

/// The shape of a batch, as [`plan_batch`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BatchShape {
    /// Bytes of a typical pool: P · d · the storage's size
    /// ([`batch_plan_for`] takes the median over the batch).
    pub pool_bytes: usize,
    /// Number of queries.
    pub queries: usize,
    /// The budget K (a query streams its pool about K + 1 times).
    pub budget: usize,
}

impl BatchShape {
    /// The shape of `inputs` at budget K: the median pool size in bytes.
    pub fn of<E: Element>(inputs: &[Input<'_, E>], budget: usize) -> BatchShape {
        let mut bytes: Vec<usize> = inputs
            .iter()
            .map(|i| i.pool_size().unwrap_or(0) * i.dim() * std::mem::size_of::<E>())
            .collect();
        bytes.sort_unstable();
        BatchShape {
            pool_bytes: bytes.get(bytes.len() / 2).copied().unwrap_or(0),
            queries: inputs.len(),
            budget,
        }
    }

    /// Bytes the whole batch streams: pool_bytes · (K + 1) · queries
    /// (saturating).
    pub fn streamed_bytes(&self) -> usize {
        self.pool_bytes
            .saturating_mul(self.budget.saturating_add(1))
            .saturating_mul(self.queries)
    }
}

/// The thread plan of [`BatchPlan::Auto`]: how to run a batch of `shape`
/// on `threads` threads, on a machine with `l2_bytes` of L2 cache per core.
///
/// A pursuit streams its pool K + 1 times, so what matters is where the
/// pool lives between passes:
///
/// 1. **Whole queries per thread** when the pool fits in a core's L2
///    (`pool_bytes` ≤ [`L2_FILL`] · `l2_bytes`) or is under
///    [`MIN_SPLIT_BYTES`]: every core streams its own pool from its own
///    L2, with no synchronisation.
/// 2. Otherwise **split each query** over the fewest threads `s` (a
///    divisor of `threads`) whose share `pool_bytes / s` fits in
///    L2_FILL · `l2_bytes`, and run `threads / s` queries at a time (a mix,
///    when 1 < s < T); if no share fits, over all threads (one query at a
///    time, the fewest bytes in flight). With whole queries, T cores would
///    each stream a pool that does not fit their L2 from the shared L3 or
///    memory, and two threads measured slower than one (issue 22: 0.79× at
///    P = 1000, d = 1536); a split keeps each thread's rows in its own L2.
/// 3. When there are fewer queries than groups, the spare threads split
///    the queries further (if the pool is at least MIN_SPLIT_BYTES), so no
///    thread idles while a query could use it.
/// 4. A batch too small to pay for starting threads runs on fewer groups:
///    each group streams at least [`MIN_GROUP_BYTES`]
///    ([`BatchShape::streamed_bytes`]), and a batch under that runs on the
///    calling thread alone.
///
/// This is the plan a batch starts with. While it runs, a split that waits
/// for its parts (another process on a core: [`FALLBACK_SHARE`]) gives way
/// to whole queries on the same threads, and batches of the next
/// [`REMEMBER_WAIT`] start with whole queries ([`select_batch_report`]);
/// this function does not see that.
///
/// Always `groups · split ≤ max(threads, 1)`, `groups ≤ max(queries, 1)`.
///
/// ```
/// use mempursuit::parallel::{plan_batch, BatchShape, ThreadPlan};
/// let mib = 1 << 20;
/// let shape = |p: usize, d: usize, bytes: usize| BatchShape {
///     pool_bytes: p * d * bytes,
///     queries: 32,
///     budget: 20,
/// };
/// // P = 1000, d = 1536, f32 (6 MB) on 2 threads with 1 MiB of L2 per core
/// assert_eq!(plan_batch(&shape(1000, 1536, 4), 2, mib), ThreadPlan { groups: 1, split: 2 });
/// // the same pools as f16 at P = 100 (300 KB): whole queries
/// assert_eq!(plan_batch(&shape(100, 1536, 2), 2, mib), ThreadPlan { groups: 2, split: 1 });
/// // P = 200, d = 1536, f32 (1.2 MB) on 16 threads: 8 queries at a time, 2 threads each
/// assert_eq!(plan_batch(&shape(200, 1536, 4), 16, mib), ThreadPlan { groups: 8, split: 2 });
/// ```
pub fn plan_batch(shape: &BatchShape, threads: usize, l2_bytes: usize) -> ThreadPlan {
    let t = threads.max(1);
    let n = shape.queries.max(1);
    let pool_bytes = shape.pool_bytes;
    let fits = |share: usize| share as f64 <= L2_FILL * l2_bytes as f64;
    let splittable = pool_bytes >= MIN_SPLIT_BYTES;
    let mut split = if fits(pool_bytes) || !splittable {
        1
    } else {
        (1..=t)
            .filter(|s| t.is_multiple_of(*s))
            .find(|&s| fits(pool_bytes.div_ceil(s)))
            .unwrap_or(t)
    };
    let mut groups = t / split;
    if groups > n {
        groups = n;
        if splittable {
            split = t / groups;
        }
    }
    // Rule 4: no more groups than the batch's bytes are worth.
    let worth = (shape.streamed_bytes() / MIN_GROUP_BYTES).max(1);
    ThreadPlan {
        groups: groups.min(worth),
        split,
    }
}

/// Where [`CacheInfo::detect`] found the L2 size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CacheSource {
    /// Linux sysfs: `/sys/devices/system/cpu/cpu0/cache/index*/` (the
    /// unified or data cache of `level` 2).
    Sysfs,
    /// x86-64 CPUID: leaf 4 (Intel) or 0x8000001D (AMD), the level-2
    /// unified or data cache, else leaf 0x80000006 (bits 31–16 of ECX, KiB).
    Cpuid,
    /// Neither answered: [`CacheInfo::FALLBACK_L2`].
    Fallback,
    /// Given by the caller.
    Given,
}

/// The cache size [`plan_batch`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheInfo {
    /// Bytes of L2 cache of one core (one instance of the level-2 cache;
    /// on a CPU with simultaneous multithreading, threads on sibling
    /// logical CPUs share it).
    pub l2_bytes: usize,
    /// Where the figure comes from.
    pub source: CacheSource,
}

impl CacheInfo {
    /// The L2 size assumed when detection fails: 1 MiB, the middle of
    /// today's server cores (512 KiB on AMD Zen 2/3, 1 MiB on Zen 4/5 and
    /// Arm Neoverse N1/V1, 1.25–2 MiB on recent Intel Xeons).
    pub const FALLBACK_L2: usize = 1 << 20;

    /// A cache size given by the caller.
    pub fn with_l2(l2_bytes: usize) -> CacheInfo {
        CacheInfo {
            l2_bytes,
            source: CacheSource::Given,
        }
    }

    /// The L2 size of this machine's first CPU, read once per process
    /// (later calls return the cached value): Linux sysfs, else x86-64
    /// CPUID, else [`CacheInfo::FALLBACK_L2`] (see [`CacheSource`]).
    pub fn detect() -> CacheInfo {
        static DETECTED: std::sync::OnceLock<CacheInfo> = std::sync::OnceLock::new();
        *DETECTED.get_or_init(|| {
            // Miri runs isolated from the file system and cannot run CPUID.
            let found = (!cfg!(miri))
                .then(l2_from_sysfs)
                .flatten()
                .map(|b| (b, CacheSource::Sysfs))
                .or_else(|| {
                    (!cfg!(miri))
                        .then(l2_from_cpuid)
                        .flatten()
                        .map(|b| (b, CacheSource::Cpuid))
                });
            match found {
                Some((l2_bytes, source)) => CacheInfo { l2_bytes, source },
                None => CacheInfo {
                    l2_bytes: CacheInfo::FALLBACK_L2,
                    source: CacheSource::Fallback,
                },
            }
        })
    }
}

/// A sysfs cache size ("1024K", "2M", "512"), in bytes.
fn parse_cache_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let (digits, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => (&s[..i], s[i..].trim()),
        None => (s, ""),
    };
    let n: usize = digits.parse().ok()?;
    let unit = match unit {
        "" | "B" => 1,
        "K" | "KB" | "KiB" => 1 << 10,
        "M" | "MB" | "MiB" => 1 << 20,
        _ => return None,
    };
    n.checked_mul(unit).filter(|&b| b > 0)
}

fn l2_from_sysfs() -> Option<usize> {
    let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    let read = |index: &std::path::Path, name: &str| std::fs::read_to_string(index.join(name));
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let index = entry.path();
        let Ok(level) = read(&index, "level") else {
            continue; // not a cache index (e.g. `uevent`)
        };
        let kind = read(&index, "type").unwrap_or_default();
        if level.trim() == "2" && matches!(kind.trim(), "Unified" | "Data") {
            return parse_cache_size(&read(&index, "size").ok()?);
        }
    }
    None
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code, unused_unsafe)]
fn l2_from_cpuid() -> Option<usize> {
    use std::arch::x86_64::__cpuid_count;
    // SAFETY (every `__cpuid_count` below): CPUID exists on every x86-64
    // CPU; leaves above the maximum reported by leaf 0 / 0x80000000 are not
    // queried.
    let max = unsafe { __cpuid_count(0, 0) }.eax;
    let max_ext = unsafe { __cpuid_count(0x8000_0000, 0) }.eax;
    // Deterministic cache parameters: Intel leaf 4, AMD leaf 0x8000001D.
    for leaf in [4u32, 0x8000_001D] {
        let available = if leaf == 4 { max >= 4 } else { max_ext >= leaf };
        if !available {
            continue;
        }
        for sub in 0..16 {
            let r = unsafe { __cpuid_count(leaf, sub) };
            let kind = r.eax & 0x1f; // 0 none, 1 data, 2 instruction, 3 unified
            if kind == 0 {
                break;
            }
            if (r.eax >> 5) & 7 == 2 && (kind == 1 || kind == 3) {
                let ways = ((r.ebx >> 22) & 0x3ff) as usize + 1;
                let parts = ((r.ebx >> 12) & 0x3ff) as usize + 1;
                let line = (r.ebx & 0xfff) as usize + 1;
                let sets = r.ecx as usize + 1;
                return Some(ways * parts * line * sets);
            }
        }
    }
    if max_ext >= 0x8000_0006 {
        let kib = (unsafe { __cpuid_count(0x8000_0006, 0) }.ecx >> 16) as usize;
        return (kib > 0).then_some(kib << 10);
    }
    None
}

#[cfg(not(target_arch = "x86_64"))]
fn l2_from_cpuid() -> Option<usize> {
    None
}

/// Whether `method` streams the pool in passes a [`SplitPool`] can split
/// (the pursuit family; top-K and MMR run serially).
pub(crate) fn splits(method: &Method) -> bool {
    matches!(method, Method::Pursuit(_) | Method::Recommended(_))
}

/// The plan [`select_batch_with`] runs for `inputs` at budget K: `plan`
/// resolved ([`BatchPlan::resolve`]) for their shape ([`BatchShape::of`]:
/// the median pool), this machine's cache ([`CacheInfo::detect`]) and
/// `threads` (0: one per available core, [`thread_count`]); top-K and
/// MMR, whose passes are not split, always run whole queries.
pub fn batch_plan_for<E: Element>(
    inputs: &[Input<'_, E>],
    budget: usize,
    method: &Method,
    threads: usize,
    plan: BatchPlan,
) -> ThreadPlan {
    let plan = if splits(method) {
        plan
    } else {
        BatchPlan::Queries
    };
    plan.resolve(
        &BatchShape::of(inputs, budget),
        thread_count(threads),
        &CacheInfo::detect(),
    )
}

/// The threads a batch asked for `threads` runs on: `threads` itself, or
/// for 0 one per available core ([`std::thread::available_parallelism`];
/// 1 where that is unknown). Every batch entry point of this crate reads
/// `threads` so ([`select_batch`], [`select_batch_with`],
/// [`select_batch_report`], [`batch_plan_for`], `Store::select_batch`),
/// as do the Python bindings (`threads=0` or `None`).
pub fn thread_count(threads: usize) -> usize {
    match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Runs `method` with budget K on every input on up to `threads` threads
/// (0: one per available core, [`thread_count`]) and returns the results
/// in input order; how the threads are spent is
/// chosen by [`BatchPlan::Auto`] (see [`plan_batch`]): whole queries per
/// thread when the pools fit in a core's L2 cache, each query split over
/// several threads when they do not. Each result is bit-identical to a
/// single-threaded [`Selector::select`] of that input, whatever the plan.
///
/// Spawning costs some tens of microseconds per thread per call: give it
/// batches, not single queries.
///
/// # Panics
/// If a thread cannot be spawned.
pub fn select_batch<E: Element>(
    inputs: &[Input<'_, E>],
    budget: usize,
    method: &Method,
    threads: usize,
) -> Vec<Result<Selection, Error>> {
    select_batch_with(inputs, budget, method, threads, BatchPlan::Auto)
}

/// [`select_batch`] with the thread plan chosen by the caller: `plan`
/// resolved by [`batch_plan_for`]. Queries are handed out one at a time
/// from a shared counter to `groups` groups of `split` threads (one
/// [`Selector`] and, when `split` > 1, one [`SplitPool`] per group), so
/// uneven pool sizes balance out. Every plan gives the same results, bit
/// for bit.
///
/// ```
/// use mempursuit::parallel::{select_batch_with, BatchPlan};
/// use mempursuit::{Input, Method, PursuitOptions};
///
/// let d = 16;
/// let pool: Vec<f32> = (0..64 * d).map(|i| ((i * 7919 % 101) as f32 - 50.0) / 50.0).collect();
/// let query: Vec<f32> = (0..d).map(|i| (i as f32 - 7.5) / 8.0).collect();
/// let inputs = [Input::new(&query, &pool); 3];
/// let method = Method::Pursuit(PursuitOptions::default());
/// let a = select_batch_with(&inputs, 5, &method, 2, BatchPlan::Queries);
/// let b = select_batch_with(&inputs, 5, &method, 2, BatchPlan::Split);
/// assert_eq!(format!("{a:?}"), format!("{b:?}"));
/// ```
///
/// # Panics
/// If a thread cannot be spawned.
pub fn select_batch_with<E: Element>(
    inputs: &[Input<'_, E>],
    budget: usize,
    method: &Method,
    threads: usize,
    plan: BatchPlan,
) -> Vec<Result<Selection, Error>> {
    select_batch_report(inputs, budget, method, threads, plan).0
}

/// How a batch ran ([`select_batch_report`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BatchReport {
    /// The plan it started with ([`batch_plan_for`]).
    pub plan: ThreadPlan,
    /// Groups that left their split for whole queries because their
    /// workers' parts kept them waiting ([`FALLBACK_SHARE`]; only
    /// [`BatchPlan::Auto`] does).
    pub fell_back: usize,
    /// Whether [`BatchPlan::Auto`] ran whole queries from the start because
    /// a split of this process waited less than [`REMEMBER_WAIT`] ago
    /// (`plan` is then that whole-query plan).
    pub remembered: bool,
}

/// [`select_batch_with`], also saying how the batch ran: its plan and how
/// many groups of threads gave up splitting queries for whole queries
/// because a part waited (another process on a core; [`FALLBACK_SHARE`]).
/// The results are the same either way, bit for bit.
///
/// # Panics
/// If a thread cannot be spawned.
pub fn select_batch_report<E: Element>(
    inputs: &[Input<'_, E>],
    budget: usize,
    method: &Method,
    threads: usize,
    plan: BatchPlan,
) -> (Vec<Result<Selection, Error>>, BatchReport) {
    let thread_plan = batch_plan_for(inputs, budget, method, threads, plan);
    run_planned(inputs.len(), thread_plan, plan, &|selector, i, executor| {
        selector.select_with(&inputs[i], budget, method, executor)
    })
}

/// The jobs 0..n run as [`select_batch_report`] runs its queries: on
/// `thread_plan` (resolved from `plan`), which [`BatchPlan::Auto`] adapts
/// (whole queries from the start after a recent wait, a fallback when a
/// split waits); `job(selector, i, executor)` computes job i with the
/// group's selector and its executor ([`Serial`](mempursuit_core::Serial)
/// or the group's [`SplitPool`]) and must give the same result whatever
/// the executor. Results in job order.
pub(crate) fn run_planned<R: Send>(
    n: usize,
    mut thread_plan: ThreadPlan,
    plan: BatchPlan,
    job: &(dyn Fn(&mut Selector, usize, &mut dyn Executor) -> R + Sync),
) -> (Vec<R>, BatchReport) {
    // Only the library's own choice adapts; a fixed plan runs as asked.
    let auto = plan == BatchPlan::Auto;
    let remembered = auto && thread_plan.split > 1 && waited_recently();
    if remembered {
        // A split waited less than `REMEMBER_WAIT` ago: whole queries on
        // the same threads from the start.
        thread_plan = ThreadPlan {
            groups: thread_plan.threads().min(n).max(1),
            split: 1,
        };
    }
    let fallback = auto.then_some(FALLBACK_SHARE);
    let (results, fell_back) = run_jobs(n, thread_plan, fallback, job);
    if fell_back > 0 {
        note_wait();
    }
    (
        results,
        BatchReport {
            plan: thread_plan,
            fell_back,
            remembered,
        },
    )
}

/// How long [`BatchPlan::Auto`] remembers a split that waited: a batch
/// starting within this time of a fallback ([`FALLBACK_SHARE`]) runs whole
/// queries from the start, instead of losing its first split query to the
/// wait again; after it, Auto tries its split again (the other process may
/// have ended).
pub const REMEMBER_WAIT: Duration = Duration::from_secs(1);

/// The time of the last fallback: nanoseconds since [`process_epoch`] + 1
/// (0: none yet).
static LAST_WAIT: AtomicU64 = AtomicU64::new(0);

fn process_epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn note_wait() {
    let ns = process_epoch()
        .elapsed()
        .as_nanos()
        .min(u64::MAX as u128 - 1) as u64;
    LAST_WAIT.store(ns + 1, Ordering::Relaxed);
}

fn waited_recently() -> bool {
    match LAST_WAIT.load(Ordering::Relaxed) {
        0 => false,
        t => {
            let now = process_epoch().elapsed();
            now.saturating_sub(Duration::from_nanos(t - 1)) < REMEMBER_WAIT
        }
    }
}

/// The share of a split query's time its caller may lose to its workers'
/// parts ([`SplitBalance::lost_share`], over the K + 1 passes of one
/// query; the first query of a group is not judged) before
/// [`BatchPlan::Auto`] gives up the split for the rest of the batch and
/// runs whole queries on the group's threads instead (and for the batches
/// of the next [`REMEMBER_WAIT`]). When the parts are even
/// (a quiet machine) the caller finishes its part about when the worker
/// does and the share is the handshake and the imbalance, a small fraction;
/// a preempted worker's part is waited for in every pass. Measured
/// (BENCHMARKS.md, "Batch threads under load", 2026-12-05, AMD EPYC Zen 4,
/// 2 vCPUs at a 1-minute load of 8: other engineers' builds): per split
/// query at P = 200, d = 1536, K = 20 a median of 0.95 (0.34 to 1.8), at
/// P = 1000 0.67 (0.23 to 0.98); at a load of 1.1 (the second core free
/// but for short bursts) at P = 1000 a median of 0.005 (at most 0.04) but
/// up to 0.93 in the first query of a new pool, at P = 200 0.034 in half
/// of the queries and 0.93 in a quarter (the other process on a core).
pub const FALLBACK_SHARE: f64 = 0.35;

/// Runs the batch on `plan`. With `fallback = Some(share)`, a group whose
/// split query (any but its first) lost more than `share` of its time
/// waiting for its workers ([`SplitBalance`]) drops its
/// [`SplitPool`] and runs the rest of the batch as whole queries, one per
/// thread of the group (so it keeps its threads). Results do not depend on
/// it: every query is computed whole by one selector, split or not, and
/// both give the single-threaded result bit for bit. Also returns how many
/// groups fell back.
#[cfg(test)]
fn run_batch<E: Element>(
    inputs: &[Input<'_, E>],
    budget: usize,
    method: &Method,
    plan: ThreadPlan,
    fallback: Option<f64>,
) -> (Vec<Result<Selection, Error>>, usize) {
    run_jobs(inputs.len(), plan, fallback, &|selector, i, executor| {
        selector.select_with(&inputs[i], budget, method, executor)
    })
}

/// [`run_batch`] for any jobs 0..n (see [`run_planned`]).
fn run_jobs<R: Send>(
    n: usize,
    plan: ThreadPlan,
    fallback: Option<f64>,
    job: &(dyn Fn(&mut Selector, usize, &mut dyn Executor) -> R + Sync),
) -> (Vec<R>, usize) {
    let ThreadPlan { groups, split } = plan;
    let next = AtomicUsize::new(0);
    let fell_back = AtomicUsize::new(0);
    type Done<R> = Vec<(usize, R)>;
    // Whole queries from the shared counter until none is left.
    let whole = |selector: &mut Selector, done: &mut Done<R>| loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= n {
            break;
        }
        done.push((i, job(selector, i, &mut mempursuit_core::Serial)));
    };
    let group = || {
        let mut selector = Selector::new();
        let mut done: Done<R> = Vec::new();
        if split > 1 {
            let mut pool = SplitPool::new(split)
                .unwrap_or_else(|e| panic!("mempursuit: spawning threads: {e}"));
            for query in 0.. {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return done;
                }
                done.push((i, job(&mut selector, i, &mut pool)));
                let b = pool.take_balance();
                // The first query of a new pool is not judged: its workers
                // may not run yet (measured up to 0.93 on the quiet machine).
                if query > 0 && fallback.is_some_and(|share| b.lost_share() > share) {
                    break;
                }
            }
            // The split waits: its workers' threads stop, and the group's
            // `split` threads run whole queries instead.
            drop(pool);
            fell_back.fetch_add(1, Ordering::Relaxed);
            let extra: Vec<Done<R>> = thread::scope(|scope| {
                let handles: Vec<_> = (1..split)
                    .map(|_| {
                        scope.spawn(|| {
                            let (mut sel, mut out) = (Selector::new(), Vec::new());
                            whole(&mut sel, &mut out);
                            out
                        })
                    })
                    .collect();
                whole(&mut selector, &mut done);
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                    .collect()
            });
            done.extend(extra.into_iter().flatten());
        } else {
            whole(&mut selector, &mut done);
        }
        done
    };
    let mut parts: Vec<Done<R>> = if groups <= 1 {
        vec![group()]
    } else {
        thread::scope(|scope| {
            let handles: Vec<_> = (0..groups).map(|_| scope.spawn(group)).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    };
    let mut out: Vec<Option<R>> = (0..n).map(|_| None).collect();
    for (i, r) in parts.drain(..).flatten() {
        out[i] = Some(r);
    }
    let results = out
        .into_iter()
        .map(|r| r.expect("every input was handed out exactly once"))
        .collect();
    (results, fell_back.into_inner())
}

#[cfg(test)]
mod tests {
    //! Small enough for Miri (`.ci/miri.sh`), which checks the worker
    //! protocol for undefined behaviour and data races.

    use super::SplitPool;
    use crate::{pursuit, Input, PursuitOptions, Selection, Selector};

    /// A deterministic P × d matrix of varied rows (not unit norm).
    fn matrix(p: usize, d: usize, seed: u64) -> Vec<f32> {
        let mut s = seed;
        (0..p * d)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 40) as f32 / (1u64 << 24) as f32) - 0.5
            })
            .collect()
    }

    /// A split group that waits falls back to whole queries on its
    /// threads (forced here: any loss counts), one that does not keeps
    /// splitting, and a fixed plan never adapts; every way gives the
    /// serial results, in input order.
    #[test]
    fn a_batch_that_falls_back_gives_the_serial_results() {
        use super::{run_batch, ThreadPlan};
        use crate::{Method, PursuitOptions};
        let (p, d, k) = (24, 8, 4);
        let n = if cfg!(miri) { 5 } else { 9 };
        let pools: Vec<Vec<f32>> = (0..n).map(|i| matrix(p, d, 40 + i as u64)).collect();
        let queries: Vec<Vec<f32>> = (0..n).map(|i| matrix(1, d, 90 + i as u64)).collect();
        let inputs: Vec<Input<'_>> = pools
            .iter()
            .zip(&queries)
            .map(|(m, q)| Input::new(q, m))
            .collect();
        let method = Method::Pursuit(PursuitOptions::default());
        let mut s = Selector::new();
        let want: Vec<String> = inputs
            .iter()
            .map(|i| format!("{:?}", s.select(i, k, &method)))
            .collect();
        for (groups, split) in [(1, 2), (2, 2), (1, 3)] {
            let plan = ThreadPlan { groups, split };
            for (fallback, falls) in [
                (Some(-1.0), true),
                (Some(f64::INFINITY), false),
                (None, false),
            ] {
                let (got, fell) = run_batch(&inputs, k, &method, plan, fallback);
                let got: Vec<String> = got.iter().map(|r| format!("{r:?}")).collect();
                assert_eq!(got, want, "{plan:?} {fallback:?}");
                // A group falls back after its second split query (the
                // first is not judged).
                assert_eq!(
                    fell > 0,
                    falls,
                    "{plan:?} {fallback:?}: {fell} groups fell back"
                );
                assert!(fell <= groups);
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "string parsing only, no unsafe code")]
    fn sysfs_cache_sizes_parse() {
        use super::parse_cache_size;
        assert_eq!(parse_cache_size("1024K\n"), Some(1 << 20));
        assert_eq!(parse_cache_size("2M"), Some(2 << 20));
        assert_eq!(parse_cache_size("512 KiB"), Some(512 << 10));
        assert_eq!(parse_cache_size("49152"), Some(49152));
        for bad in ["", "K", "0K", "12Q", "-1K", "99999999999999999999M"] {
            assert_eq!(parse_cache_size(bad), None, "{bad:?}");
        }
    }

    /// Every split (1–4 threads, more threads than parts, repeated passes
    /// over one pool, a pool reused across queries) equals the serial
    /// pursuit bit for bit.
    #[test]
    fn split_passes_equal_the_serial_pursuit() {
        let (d, k) = (8, 4);
        let options = [PursuitOptions::default(), PursuitOptions::centroid(0.5)];
        for threads in 1..=4 {
            let mut split = SplitPool::new(threads).unwrap();
            for (p, seed) in [(24, 1), (17, 2), (5, 3)] {
                let m = matrix(p, d, seed);
                let q = matrix(1, d, seed + 10);
                let input = Input::new(&q, &m);
                for o in &options {
                    let mut s = Selector::new();
                    let mut ws = s.workspace(p, k);
                    let want = Selection::from(pursuit(&input, k, o, &mut ws).unwrap());
                    let mut ws = s.workspace(p, k);
                    let got = Selection::from(split.pursuit(&input, k, o, &mut ws).unwrap());
                    assert_eq!(
                        format!("{got:?}"),
                        format!("{want:?}"),
                        "threads={threads} P={p}"
                    );
                }
            }
        }
    }
}
