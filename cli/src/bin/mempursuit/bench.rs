//! `mempursuit bench`: per-query latency on seeded random unit vectors or
//! on a dataset folder, single-threaded by default; `--split N` runs each
//! query's passes on N threads, `--threads N` runs the queries as a batch on
//! N threads (`--batch-plan` chooses how the batch spends them). A
//! single-threaded sample is one allocation-free call (the core selector
//! on a reused workspace, as a latency-bound service would call it; the
//! owned `Selection` is not built). With `--roofline` the same run also
//! times K + 1 plain matrix–vector passes over each pool (the roofline of
//! a budget-K query), and, in a build with the `openblas` / `faer`
//! features, the same K + 1 passes with OpenBLAS's SGEMV / faer's
//! matrix–vector product (f32 storage); with a reduced-precision
//! `--storage` it reports how often the picks differ from the f32 picks.
//! `--storage int8` also times the f32 pursuit on the same pools, round by
//! round, for the int8 / f32 ratio. `--screening on|off|auto` sets the
//! pursuit's exact screening, `--screening compare` times the screened
//! (on), the default (auto) and the unscreened (off) pursuit round by
//! round; `--dir DIR --store-pool N` takes each query's pool from the N
//! store memories nearest to it, `--tile T` lifts them to T·d dimensions.
//!
//! `--storage`, `--threads`, `--split` and `--batch-plan` take lists
//! (`--storage f32,f16,bf16 --threads 1,2`): every combination is timed in
//! the same process, round by round (the order reversed every other
//! round), and the ratios against the first storage and against one thread
//! come from that one run. The header names the CPU, its instruction sets,
//! the kernels and the L2 cache the batch plan reads.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use mempursuit::half::{bf16, f16};
use mempursuit::kernels::int8::Int8Kernel;
use mempursuit::kernels::{row_dots, Isa};
use mempursuit::parallel::{
    batch_plan_for, select_batch_report, BatchPlan, CacheInfo, CacheSource, SplitPool, L2_FILL,
};
use mempursuit::{
    pursuit_int8_using, Element, Input, Int8Candidates, Int8Passes, Method, PursuitOptions,
    Screening, Selector, Serial,
};
use mempursuit_cli::dataset::Dataset;
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};

use crate::spec_args::{self, SpecArgs};
use crate::{emit, CliResult};

/// How the candidate matrix is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Storage {
    /// 4 bytes per value.
    F32,
    /// IEEE binary16: 2 bytes per value.
    F16,
    /// bfloat16: 2 bytes per value.
    Bf16,
    /// int8 codes with a per-row scale (1 byte per value), certified
    /// picks (`pursuit_int8_using` with `Int8Passes::Int8`, the int8 passes
    /// whatever `Int8Passes::Auto` would choose: exactly the f32 pursuit's
    /// picks; pursuit methods only). Quantizing the pools is not timed. Also times the
    /// f32 pursuit on the same pools, round by round in the same process
    /// (row `f32 pursuit`, ratio `int8 / f32 pursuit`; its screening is
    /// `--screening`'s, `auto` by default, `off` for the unscreened
    /// pursuit), and reports the
    /// candidates verified exactly per pick.
    Int8,
}

/// `--screening`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScreeningArg {
    /// `Screening::Auto`.
    Auto,
    /// `Screening::On`.
    On,
    /// `Screening::Off`.
    Off,
    /// On, Auto and Off, round by round (the order rotating), with the
    /// ratios against Off and the rows read.
    Compare,
}

impl ScreeningArg {
    fn screening(self) -> Screening {
        match self {
            ScreeningArg::Auto => Screening::Auto,
            ScreeningArg::On | ScreeningArg::Compare => Screening::On,
            ScreeningArg::Off => Screening::Off,
        }
    }
}

/// Arguments of `mempursuit bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Pool size P (random data).
    #[arg(long, short = 'p', default_value_t = 200)]
    pub pool: usize,
    /// Budget K.
    #[arg(
        long,
        short = 'k',
        default_value_t = 20,
        allow_negative_numbers = true,
        value_parser = crate::spec_args::positive_budget
    )]
    pub budget: usize,
    /// Embedding dimension d (random data).
    #[arg(long, short = 'd', default_value_t = 1536)]
    pub dim: usize,
    /// Number of distinct random queries (each with its own pool).
    #[arg(long, default_value_t = 32)]
    pub queries: usize,
    /// Timed rounds over all queries (one untimed warm-up round first).
    #[arg(long, default_value_t = 20)]
    pub rounds: usize,
    /// Seed of the random unit vectors.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Dataset folder (memories.f32.npy, queries.f32.npy, queries.jsonl)
    /// instead of random data: every query with its own pool.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// With `--dir`: instead of each query's own pool, the N memories of
    /// the whole store nearest to the query by cosine (a retriever's
    /// top-N pool of real embeddings, in descending cosine order).
    #[arg(long, value_name = "N", requires = "dir")]
    pub store_pool: Option<usize>,
    /// With `--dir`: only N of the data set's queries, spread over it
    /// (every ⌊Q/N⌋-th; default: every query).
    #[arg(long, value_name = "N", requires = "dir")]
    pub dir_queries: Option<usize>,
    /// With `--dir`: lift every vector to T·d dimensions by an isometry
    /// (its d coordinates repeated T times with seeded random signs, scaled
    /// by 1/√T, the T·d coordinates then permuted by a seeded random
    /// permutation): every cosine and Gram entry of the data set is kept
    /// (up to f32 rounding), the rows are T times longer. A stand-in for
    /// real embeddings of dimension T·d, which screening sees through
    /// their Gram matrix only.
    #[arg(long, value_name = "T", requires = "dir", default_value_t = 1)]
    pub tile: usize,
    /// Storage of the candidate matrix; a list (`f32,f16,bf16`) times each
    /// in the same run (ratios against the first). `int8` runs alone.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "f32")]
    pub storage: Vec<Storage>,
    /// Batch mode: run the queries of a round on N threads (one workspace
    /// per thread) and report the time per query of the whole batch; a
    /// list (`1,2`) times each in the same run (speedups against the
    /// first, 1 = the single-threaded calls).
    #[arg(long, value_delimiter = ',', default_value = "1")]
    pub threads: Vec<usize>,
    /// How a batch (`--threads N`, N > 1) spends its threads: `auto` (the
    /// library's rule: whole queries per thread while a pool fits in a
    /// core's L2 cache, each query split over threads when it does not),
    /// `queries`, `split`, `split-by-N` (groups of N threads per query); a
    /// list times each.
    #[arg(long, value_delimiter = ',', default_value = "auto")]
    pub batch_plan: Vec<BatchPlan>,
    /// Split each query's passes over N threads (pursuit methods only;
    /// with `--threads 1`); a list (`1,2`) times each.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    pub split: Vec<usize>,
    /// Exact screening of the pursuit methods (single-thread and split
    /// runs): `auto` (the default rule), `on`, `off`, or `compare`: the
    /// screened and the unscreened pursuit on the same pools, round by
    /// round in the same process (rows `screened` and `unscreened`, ratio
    /// `screened / unscreened`), with the rows read per pick (one storage,
    /// f32/f16/bf16, on one thread). A batch (`--threads N > 1`) runs the
    /// library's rule (`auto`). With `--storage int8`: the screening of
    /// the f32 pursuit timed beside it (`auto`, `on` or `off`).
    #[arg(long, value_enum, default_value_t = ScreeningArg::Auto)]
    pub screening: ScreeningArg,
    /// With `--storage int8`: the kernel of the int8 passes, `auto` (the
    /// best this CPU has) or one it runs (`avx512-vnni`, `avx-vnni`,
    /// `avx2`, `portable`), e.g. `avx2` to time the AVX2 kernel without
    /// VNNI on an AVX-512 VNNI CPU (`Int8Kernel::force`: the same values,
    /// and `Int8Passes::Auto`'s rule reads this kernel).
    #[arg(long, value_name = "KERNEL", default_value = "auto")]
    pub int8_kernel: String,
    /// Also time the roofline: K + 1 plain matrix-vector passes per query
    /// (and with the external libraries of a build with the `openblas` /
    /// `faer` features, f32 storage only).
    #[arg(long)]
    pub roofline: bool,
    /// The selector to time (default: the paper's method, `pursuit`).
    #[command(flatten)]
    pub selector: SpecArgs<spec_args::Bench>,
}

/// One query: its embedding and its pool (row-major P × d f32).
struct Query {
    query: Vec<f32>,
    pool: Vec<f32>,
}

/// Lifts every vector of `qs` from `d` to `t·d` dimensions by the
/// isometry of `--tile` (signs and permutation from `seed`).
fn tile_queries(qs: &mut [Query], d: usize, t: usize, seed: u64) {
    use rand::seq::SliceRandom;
    use rand::RngExt;
    let mut rng = StdRng::seed_from_u64(seed ^ 0x7469_6c65);
    let dt = d * t;
    let signs: Vec<f32> = (0..dt)
        .map(|_| if rng.random::<bool>() { 1.0 } else { -1.0 })
        .collect();
    let mut perm: Vec<usize> = (0..dt).collect();
    perm.shuffle(&mut rng);
    let scale = 1.0 / (t as f64).sqrt();
    let lift = |v: &[f32]| -> Vec<f32> {
        let mut out = vec![0.0f32; v.len() * t];
        for (row, chunk) in v.chunks_exact(d).zip(out.chunks_exact_mut(dt)) {
            for (k, &dst) in perm.iter().enumerate() {
                chunk[dst] = (row[k % d] as f64 * scale) as f32 * signs[k];
            }
        }
        out
    };
    for q in qs.iter_mut() {
        q.query = lift(&q.query);
        q.pool = lift(&q.pool);
    }
}

/// n random unit vectors of dimension d (rows of an n × d matrix), or an
/// error when the matrix cannot be allocated (instead of an abort).
fn random_unit(n: usize, d: usize, rng: &mut StdRng) -> Result<Vec<f32>, String> {
    let too_big = || format!("bench: {n} × {d} random values do not fit in memory");
    let len = n.checked_mul(d).ok_or_else(too_big)?;
    let mut out = Vec::new();
    out.try_reserve_exact(len).map_err(|_| too_big())?;
    let mut row = vec![0.0f64; d];
    for _ in 0..n {
        row.iter_mut().for_each(|x| *x = StandardNormal.sample(rng));
        let norm = row.iter().map(|x| x * x).sum::<f64>().sqrt();
        out.extend(row.iter().map(|x| (x / norm) as f32));
    }
    Ok(out)
}

/// Latency statistics in microseconds.
struct Stats {
    min: f64,
    median: f64,
    mean: f64,
    p95: f64,
    n: usize,
}

/// One row of the timing table.
fn table_row(name: &str, s: &Stats) -> String {
    format!(
        "| {name} | {:.2} | {:.2} | {:.2} | {:.2} | {} |",
        s.median, s.mean, s.p95, s.min, s.n
    )
}

/// `a / b: <ratio of medians> (medians), <ratio of minima> (minima)`.
fn ratio_line(label: &str, a: &Stats, b: &Stats) -> String {
    format!(
        "{label}: {:.3} (medians), {:.3} (minima)",
        a.median / b.median,
        a.min / b.min
    )
}

fn stats(mut samples: Vec<f64>) -> Stats {
    samples.sort_by(f64::total_cmp);
    let n = samples.len();
    let at = |q: f64| samples[((q * (n - 1) as f64).round() as usize).min(n - 1)];
    Stats {
        min: samples[0] * 1e6,
        median: at(0.5) * 1e6,
        mean: samples.iter().sum::<f64>() / n as f64 * 1e6,
        p95: at(0.95) * 1e6,
        n,
    }
}

/// K + 1 passes by an external library: (candidates, d, K, out) → sink.
type Passes = fn(&[f32], usize, usize, &mut [f32]) -> f32;

/// The external libraries of this build (features `openblas`, `faer`).
fn externals() -> Vec<(&'static str, Passes)> {
    #[cfg(any(feature = "openblas", feature = "faer"))]
    return mempursuit_benches::external::available();
    #[cfg(not(any(feature = "openblas", feature = "faer")))]
    Vec::new()
}

/// Per-query seconds of the selection, the picks of the last round,
/// per-query seconds of the roofline (if asked for) and of each external
/// library's passes (in the order of `externals`).
type Timed = (Vec<f64>, Vec<Vec<usize>>, Option<Vec<f64>>, Vec<Vec<f64>>);

/// How a timed configuration spends threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// One query at a time on the calling thread.
    Single,
    /// One query at a time, each pass split over N threads (`SplitPool`).
    Split(usize),
    /// The queries of a round as one batch on N threads, with this plan.
    Batch(usize, BatchPlan),
}

/// One timed configuration: a storage of the pools and a thread mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Config {
    storage: Storage,
    mode: Mode,
}

/// What one configuration measured: per-query seconds (batch mode: one
/// sample per round, batch time / queries), the mean per query of each
/// round (what the speedups compare: a batch has no per-query times), and
/// the picks of the last round.
#[derive(Default)]
struct Measured {
    samples: Vec<f64>,
    rounds: Vec<f64>,
    picks: Vec<Vec<usize>>,
    /// Batch mode: timed rounds in which a group of threads left its split
    /// for whole queries (`BatchReport::fell_back`), and rounds that ran
    /// whole queries from the start after such a fallback
    /// (`BatchReport::remembered`).
    fell_back: usize,
    remembered: usize,
}

/// The queries of a run in every storage it times (f16 / bf16 empty when
/// not timed).
struct Inputs<'a> {
    f32: Vec<Input<'a>>,
    f16: Vec<Input<'a, f16>>,
    bf16: Vec<Input<'a, bf16>>,
}

/// One round of `mode` over every input (see [`measure`]): appends its
/// samples to `m` when `timed` and keeps the picks. The pursuit methods
/// run with `screening` on one thread and split (a batch runs the
/// library's rule).
#[allow(clippy::too_many_arguments)]
fn config_round<E: Element>(
    inputs: &[Input<'_, E>],
    k: usize,
    method: &Method,
    screening: Screening,
    mode: Mode,
    split: Option<&mut SplitPool>,
    selector: &mut Selector,
    m: &mut Measured,
    timed: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let max_pool = inputs
        .iter()
        .filter_map(|i| i.pool_size())
        .max()
        .unwrap_or(0);
    m.picks.resize(inputs.len(), Vec::new());
    if let Mode::Batch(threads, plan) = mode {
        let t = Instant::now();
        let (results, report) = select_batch_report(inputs, k, method, threads, plan);
        let dt = t.elapsed().as_secs_f64() / inputs.len() as f64;
        if timed {
            m.samples.push(dt);
            m.rounds.push(dt);
            m.fell_back += usize::from(report.fell_back > 0);
            m.remembered += usize::from(report.remembered);
        }
        for (slot, r) in m.picks.iter_mut().zip(results) {
            *slot = r?.picks;
        }
        return Ok(());
    }
    let mut split = split;
    let mut total = 0.0;
    for (input, slot) in inputs.iter().zip(m.picks.iter_mut()) {
        // The allocation-free call (core selector on a reused workspace);
        // the picks are copied out after the clock stops.
        let mut ws = selector.workspace(max_pool, k.min(max_pool));
        let t = Instant::now();
        let sel = match (split.as_deref_mut(), method) {
            (Some(pool), Method::Pursuit(o)) => {
                mempursuit::pursuit_using(input, k, o, screening, &mut ws, pool)?
            }
            (None, Method::Pursuit(o)) => {
                mempursuit::pursuit_using(input, k, o, screening, &mut ws, &mut Serial)?
            }
            _ => method.run(input, k, &mut ws)?,
        };
        let dt = t.elapsed().as_secs_f64();
        slot.clear();
        slot.extend_from_slice(sel.picks());
        total += dt;
        if timed {
            m.samples.push(dt);
        }
    }
    if timed {
        m.rounds.push(total / inputs.len().max(1) as f64);
    }
    Ok(())
}

/// Per storage timed: the roofline's per-query seconds and each external
/// library's (f32 only).
struct Roofs {
    storage: Storage,
    roof: Vec<f64>,
    ext: Vec<Vec<f64>>,
}

/// Times every configuration on every query, round after round (round 0
/// is an untimed warm-up; the order of the configurations is reversed
/// every other round, so no configuration always runs after the same
/// one). With `--roofline` each round ends with a roofline round per
/// storage over the same queries, so all see the same machine conditions
/// and the same cache state (each query's pool is evicted from L2 by the
/// others before it comes round again when the pools exceed the L2
/// cache). `ext` (with `--roofline`): external passes timed after the f32
/// roofline in each round, on `pools` (the f32 pools).
fn measure(
    inputs: &Inputs<'_>,
    configs: &[Config],
    args: &BenchArgs,
    method: &Method,
    ext: &[(&'static str, Passes)],
    pools: &[&[f32]],
) -> Result<(Vec<Measured>, Vec<Roofs>), Box<dyn std::error::Error>> {
    let k = args.budget;
    let screening = args.screening.screening();
    let max_pool = inputs
        .f32
        .iter()
        .filter_map(|i| i.pool_size())
        .max()
        .unwrap_or(0);
    let mut selector = Selector::with_capacity(max_pool, k.min(max_pool));
    let mut out: Vec<Measured> = configs.iter().map(|_| Measured::default()).collect();
    let mut splits: Vec<Option<SplitPool>> = Vec::with_capacity(configs.len());
    for c in configs {
        splits.push(match c.mode {
            Mode::Split(n) => Some(SplitPool::new(n)?),
            _ => None,
        });
    }
    let mut roofs: Vec<Roofs> = Vec::new();
    if args.roofline {
        for c in configs {
            if !roofs.iter().any(|r| r.storage == c.storage) {
                let n = if c.storage == Storage::F32 {
                    ext.len()
                } else {
                    0
                };
                roofs.push(Roofs {
                    storage: c.storage,
                    roof: Vec::new(),
                    ext: vec![Vec::new(); n],
                });
            }
        }
    }
    let mut sink = 0.0f32;
    for round in 0..=args.rounds {
        let timed = round > 0;
        let order: Vec<usize> = if round % 2 == 0 {
            (0..configs.len()).collect()
        } else {
            (0..configs.len()).rev().collect()
        };
        for i in order {
            let (c, m, split) = (configs[i], &mut out[i], splits[i].as_mut());
            let (sel, s) = (&mut selector, screening);
            match c.storage {
                Storage::F32 => {
                    config_round(&inputs.f32, k, method, s, c.mode, split, sel, m, timed)?
                }
                Storage::F16 => {
                    config_round(&inputs.f16, k, method, s, c.mode, split, sel, m, timed)?
                }
                Storage::Bf16 => {
                    config_round(&inputs.bf16, k, method, s, c.mode, split, sel, m, timed)?
                }
                Storage::Int8 => return Err("bench: --storage int8 runs alone".into()),
            }
        }
        for r in &mut roofs {
            let (roof, ext_s) = (&mut r.roof, &mut r.ext);
            sink += match r.storage {
                Storage::F32 => roofline_round(&inputs.f32, k, roof, ext, pools, ext_s, timed),
                Storage::F16 => roofline_round(&inputs.f16, k, roof, &[], &[], ext_s, timed),
                _ => roofline_round(&inputs.bf16, k, roof, &[], &[], ext_s, timed),
            };
        }
    }
    std::hint::black_box(sink);
    Ok((out, roofs))
}

/// One round of the roofline (K + 1 passes with our best kernel) over every
/// input, then of each external library's passes over the same f32 pools;
/// appends per-query seconds when `timed`. Returns a sink value.
fn roofline_round<E: Element>(
    inputs: &[Input<'_, E>],
    k: usize,
    roof: &mut Vec<f64>,
    ext: &[(&'static str, Passes)],
    pools: &[&[f32]],
    ext_samples: &mut [Vec<f64>],
    timed: bool,
) -> f32 {
    let isa = Isa::detect();
    let max_pool = inputs
        .iter()
        .filter_map(|i| i.pool_size())
        .max()
        .unwrap_or(0);
    let mut out = vec![0.0f32; max_pool];
    let mut sink = 0.0f32;
    // K + 1 matrix-vector passes per pool (rows 0..=K), best kernel.
    for input in inputs {
        let (p, d) = (input.pool_size().unwrap_or(0), input.dim());
        if p == 0 {
            continue;
        }
        let t = Instant::now();
        for j in 0..=k.min(p) {
            let r = j % p;
            let v = &input.candidates[r * d..(r + 1) * d];
            row_dots(isa, input.candidates, d, v, &mut out[..p]);
            sink += out[r];
        }
        if timed {
            roof.push(t.elapsed().as_secs_f64());
        }
    }
    // The same passes by each external library, same pools.
    for ((_, passes), times) in ext.iter().zip(ext_samples.iter_mut()) {
        for (input, pool) in inputs.iter().zip(pools) {
            let (p, d) = (input.pool_size().unwrap_or(0), input.dim());
            if p == 0 {
                continue;
            }
            let t = Instant::now();
            sink += passes(pool, d, k.min(p), &mut out[..p]);
            if timed {
                times.push(t.elapsed().as_secs_f64());
            }
        }
    }
    sink
}

/// What [`measure_int8`] measured: the int8 timings (as [`Timed`]), the
/// candidates verified exactly for each pick of the last round, and the
/// per-query seconds of the f32 pursuit on the same pools.
struct Int8Timed {
    timed: Timed,
    verified: Vec<u32>,
    f32_samples: Vec<f64>,
}

/// [`measure`] for the certified int8 pursuit (single thread). Each round
/// also times the f32 pursuit (`pursuit` on the f32 rows, same options,
/// its own workspace) over the same queries in the same order, so both see
/// the same machine conditions; the two alternate which goes first from
/// round to round, and the roofline round (if asked for) follows both.
/// Also returns the candidates verified exactly for each pick of the last
/// round.
fn measure_int8(
    inputs: &[Input<'_>],
    codes: &[Int8Candidates],
    args: &BenchArgs,
    options: &PursuitOptions,
    ext: &[(&'static str, Passes)],
    pools: &[&[f32]],
) -> Result<Int8Timed, Box<dyn std::error::Error>> {
    let k = args.budget;
    let mut samples = Vec::with_capacity(args.rounds * inputs.len());
    let mut f32_samples = Vec::with_capacity(args.rounds * inputs.len());
    let mut roof = args
        .roofline
        .then(|| Vec::with_capacity(args.rounds * inputs.len()));
    let mut ext_samples = vec![Vec::with_capacity(args.rounds * inputs.len()); ext.len()];
    let mut picks = vec![Vec::new(); inputs.len()];
    let mut verified = Vec::new();
    let max_pool = inputs
        .iter()
        .filter_map(|i| i.pool_size())
        .max()
        .unwrap_or(0);
    let mut selector = Selector::with_capacity(max_pool, k.min(max_pool));
    let mut f32_selector = Selector::with_capacity(max_pool, k.min(max_pool));
    let views: Vec<_> = codes.iter().map(Int8Candidates::view).collect();
    let mut sink = 0.0f32;
    for round in 0..=args.rounds {
        let timed = round > 0;
        for int8_turn in [round % 2 == 0, round % 2 == 1] {
            if int8_turn {
                verified.clear();
                for ((input, view), slot) in inputs.iter().zip(&views).zip(picks.iter_mut()) {
                    let mut ws = selector.workspace(max_pool, k.min(max_pool));
                    let t = Instant::now();
                    let sel = pursuit_int8_using(
                        input,
                        view,
                        k,
                        options,
                        Int8Passes::Int8,
                        &mut ws,
                        &mut Serial,
                    )?;
                    let dt = t.elapsed().as_secs_f64();
                    slot.clear();
                    slot.extend_from_slice(sel.picks());
                    verified.extend(sel.steps().iter().map(|s| s.verified));
                    if timed {
                        samples.push(dt);
                    }
                }
            } else {
                for input in inputs {
                    let mut ws = f32_selector.workspace(max_pool, k.min(max_pool));
                    let t = Instant::now();
                    let sel = mempursuit::pursuit_using(
                        input,
                        k,
                        options,
                        args.screening.screening(),
                        &mut ws,
                        &mut Serial,
                    )?;
                    let dt = t.elapsed().as_secs_f64();
                    sink += sel.picks().len() as f32;
                    if timed {
                        f32_samples.push(dt);
                    }
                }
            }
        }
        if let Some(roof) = roof.as_mut() {
            sink += roofline_round(inputs, k, roof, ext, pools, &mut ext_samples, timed);
        }
    }
    std::hint::black_box(sink);
    Ok(Int8Timed {
        timed: (samples, picks, roof, ext_samples),
        verified,
        f32_samples,
    })
}

/// What [`measure_screening`] measured, per mode (`Screening::On`,
/// `Screening::Auto`, `Screening::Off`): per-query seconds and the rows
/// read per pick of each query (last round).
struct ScreeningTimed {
    times: [Vec<f64>; 3],
    rows: [Vec<f64>; 3],
}

/// The modes of `--screening compare`, in the order of [`ScreeningTimed`].
const COMPARED: [Screening; 3] = [Screening::On, Screening::Auto, Screening::Off];

/// The screened (`Screening::On`), the default (`Screening::Auto`) and the
/// unscreened pursuit on the same pools, round by round, rotating which
/// goes first (round 0 untimed); each query's picks must agree.
fn measure_screening<E: Element>(
    inputs: &[Input<'_, E>],
    args: &BenchArgs,
    options: &PursuitOptions,
) -> Result<ScreeningTimed, Box<dyn std::error::Error>> {
    let k = args.budget;
    let max_pool = inputs
        .iter()
        .filter_map(|i| i.pool_size())
        .max()
        .unwrap_or(0);
    let mut selector = Selector::with_capacity(max_pool, k.min(max_pool));
    let mut out = ScreeningTimed {
        times: Default::default(),
        rows: Default::default(),
    };
    let mut picks: Vec<Vec<usize>> = vec![Vec::new(); inputs.len()];
    for round in 0..=args.rounds {
        let timed = round > 0;
        for step in 0..3 {
            let m = (round + step) % 3;
            out.rows[m].clear();
            for (input, slot) in inputs.iter().zip(picks.iter_mut()) {
                let mut ws = selector.workspace(max_pool, k.min(max_pool));
                let t = Instant::now();
                let sel = mempursuit::pursuit_using(
                    input,
                    k,
                    options,
                    COMPARED[m],
                    &mut ws,
                    &mut Serial,
                )?;
                let dt = t.elapsed().as_secs_f64();
                if slot.is_empty() {
                    slot.extend_from_slice(sel.picks());
                } else if slot.as_slice() != sel.picks() {
                    return Err("bench: screened and unscreened picks differ".into());
                }
                // Rows read per pick of this query.
                out.rows[m].push(sel.rows_read() as f64 / sel.len().max(1) as f64);
                if timed {
                    out.times[m].push(dt);
                }
            }
        }
    }
    Ok(out)
}

fn convert<E>(queries: &[Query], f: impl Fn(f32) -> E) -> Vec<Vec<E>> {
    queries
        .iter()
        .map(|q| q.pool.iter().map(|&x| f(x)).collect())
        .collect()
}

/// Runs the benchmark and prints the latency table.
pub fn run(args: &BenchArgs) -> CliResult {
    if args.rounds == 0 || args.budget == 0 {
        return Err("bench: --rounds and --budget must be at least 1".into());
    }
    let (queries, source) = match &args.dir {
        Some(dir) => {
            let data = Dataset::load_dir(dir)?;
            let mut qs = Vec::with_capacity(data.queries.len());
            let store = &data.memory_embeddings;
            let d = data.dim();
            let all = data.queries.len();
            let (step, take) = match args.dir_queries {
                Some(n) => ((all / n.max(1)).max(1), n),
                None => (1, all),
            };
            for i in (0..all).step_by(step).take(take) {
                let mut pool = Vec::new();
                let query = data.query_embedding(i).to_vec();
                match args.store_pool {
                    None => data.gather_pool(i, &mut pool),
                    Some(n) => {
                        // The n store rows of largest cosine, descending.
                        let cos = |r: usize| -> f64 {
                            let row = &store.data[r * d..(r + 1) * d];
                            let dot: f64 =
                                row.iter().zip(&query).map(|(a, b)| (a * b) as f64).sum();
                            let nn: f64 = row.iter().map(|a| (a * a) as f64).sum::<f64>().sqrt();
                            dot / nn.max(1e-30)
                        };
                        let mut order: Vec<(f64, usize)> =
                            (0..store.rows).map(|r| (cos(r), r)).collect();
                        order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                        for &(_, r) in order.iter().take(n) {
                            pool.extend_from_slice(&store.data[r * d..(r + 1) * d]);
                        }
                    }
                }
                qs.push(Query { query, pool });
            }
            if args.tile > 1 {
                tile_queries(&mut qs, d, args.tile, args.seed);
            }
            let n = qs.len();
            let how = match args.store_pool {
                None => "each query's own pool".to_string(),
                Some(n) => format!("pools of the {n} store rows nearest each query"),
            };
            let dim = if args.tile > 1 {
                format!(
                    "d = {} tiled {}× to {}",
                    data.dim(),
                    args.tile,
                    data.dim() * args.tile
                )
            } else {
                format!("d = {}", data.dim())
            };
            (qs, format!("{} ({n} queries, {how}, {dim})", dir.display()))
        }
        None => {
            if args.pool == 0 || args.dim == 0 || args.queries == 0 {
                return Err("bench: --pool, --dim and --queries must be at least 1".into());
            }
            let values = (args.pool + 1)
                .checked_mul(args.dim)
                .and_then(|v| v.checked_mul(args.queries));
            if values.is_none_or(|v| v > isize::MAX as usize / 4) {
                return Err(format!(
                    "bench: {} queries of {} × {} random values do not fit in memory",
                    args.queries, args.pool, args.dim
                )
                .into());
            }
            let mut rng = StdRng::seed_from_u64(args.seed);
            let qs = (0..args.queries)
                .map(|_| {
                    Ok(Query {
                        query: random_unit(1, args.dim, &mut rng)?,
                        pool: random_unit(args.pool, args.dim, &mut rng)?,
                    })
                })
                .collect::<Result<Vec<Query>, String>>()?;
            let src = format!(
                "random unit vectors, seed {} ({} queries, P = {}, d = {})",
                args.seed, args.queries, args.pool, args.dim
            );
            (qs, src)
        }
    };
    let spec = args.selector.spec()?;
    if spec.storage() != mempursuit::Storage::F32 {
        return Err("bench: give the candidates' storage with --storage".into());
    }
    let method = spec.method()?;
    // No retriever scores here: the relevance is the cosine, or the pool
    // order with pool_order.
    let relevance = spec.relevance(None)?;
    let p_min = queries
        .iter()
        .map(|q| q.pool.len() / q.query.len().max(1))
        .min()
        .unwrap_or(0);
    crate::select::notice_budget_above_pool(args.budget, p_min, "the smallest pool");
    if args.screening == ScreeningArg::Compare {
        return run_screening_compare(
            args,
            &queries,
            &source,
            &spec.to_string(),
            &method,
            relevance,
        );
    }
    if args.storage.contains(&Storage::Int8) {
        return run_int8(
            args,
            &queries,
            &source,
            &spec.to_string(),
            &method,
            relevance,
        );
    }
    let configs = configs(args)?;
    if !matches!(method, Method::Pursuit(_))
        && configs.iter().any(|c| matches!(c.mode, Mode::Split(_)))
    {
        return Err("bench: --split applies to the pursuit methods only".into());
    }
    if args.screening != ScreeningArg::Auto
        && configs.iter().any(|c| matches!(c.mode, Mode::Batch(..)))
    {
        return Err(format!(
            "bench: --screening {} applies to the single-thread and split runs; a batch \
             (--threads N > 1) runs the library's rule (auto): drop --screening or the \
             batch thread counts",
            match args.screening {
                ScreeningArg::On => "on",
                _ => "off",
            }
        )
        .into());
    }

    let f32_inputs: Vec<Input<'_>> = queries
        .iter()
        .map(|q| Input::new(&q.query, &q.pool).with_relevance(relevance))
        .collect();
    let timed = |s: Storage| configs.iter().any(|c| c.storage == s);
    let half = if timed(Storage::F16) {
        convert(&queries, f16::from_f32)
    } else {
        Vec::new()
    };
    let brain = if timed(Storage::Bf16) {
        convert(&queries, bf16::from_f32)
    } else {
        Vec::new()
    };
    let inputs = Inputs {
        f16: queries
            .iter()
            .zip(&half)
            .map(|(q, m)| Input::with_storage(&q.query, m).with_relevance(relevance))
            .collect(),
        bf16: queries
            .iter()
            .zip(&brain)
            .map(|(q, m)| Input::with_storage(&q.query, m).with_relevance(relevance))
            .collect(),
        f32: f32_inputs,
    };
    let ext = if timed(Storage::F32) {
        externals()
    } else {
        Vec::new()
    };
    let f32_pools: Vec<&[f32]> = queries.iter().map(|q| q.pool.as_slice()).collect();
    let load_before = load_average();
    let (measured, roofs) = measure(&inputs, &configs, args, &method, &ext, &f32_pools)?;
    let load_after = load_average();

    let cache = CacheInfo::detect();
    let mut text = String::new();
    writeln!(text, "data:    {source}")?;
    let single = configs.len() == 1;
    if single {
        let c = configs[0];
        writeln!(
            text,
            "method:  {spec}, K = {}, storage {:?}, {}, kernels {}",
            args.budget,
            c.storage,
            mode_text(c, &inputs, &method, args.budget, queries.len()),
            Isa::detect().name()
        )?;
    } else {
        writeln!(
            text,
            "method:  {spec}, K = {}, kernels {}; {} configurations timed round by round",
            args.budget,
            Isa::detect().name(),
            configs.len()
        )?;
    }
    writeln!(text, "cpu:     {}", cpu_text())?;
    if let (Some(a), Some(b)) = (load_before, load_after) {
        writeln!(
            text,
            "load:    {a} before, {b} after (1-minute load average; threads and \
             timings need it well below the core count)"
        )?;
    }
    let f32_bytes = median_bytes(&queries, 4);
    writeln!(
        text,
        "cache:   L2 {} per core ({}); median pool {} as f32, {} as f16 / bf16",
        bytes_text(cache.l2_bytes),
        match cache.source {
            CacheSource::Sysfs => "Linux sysfs",
            CacheSource::Cpuid => "CPUID",
            CacheSource::Given => "given",
            _ => "not detected: assumed",
        },
        bytes_text(f32_bytes),
        bytes_text(f32_bytes / 2),
    )?;
    if !single {
        writeln!(text, "\nconfigurations:")?;
        for (i, c) in configs.iter().enumerate() {
            writeln!(
                text,
                "  {}. {:?}, {}",
                i + 1,
                c.storage,
                mode_text(*c, &inputs, &method, args.budget, queries.len())
            )?;
        }
    }
    writeln!(
        text,
        "\n| what | median µs | mean µs | p95 µs | min µs | samples |"
    )?;
    writeln!(text, "|---|---|---|---|---|---|")?;
    let label = |c: &Config| config_label(&configs, c);
    let stats_of: Vec<Stats> = measured.iter().map(|m| stats(m.samples.clone())).collect();
    let rounds_of: Vec<Stats> = measured.iter().map(|m| stats(m.rounds.clone())).collect();
    for (c, st) in configs.iter().zip(&stats_of) {
        writeln!(text, "{}", table_row(&format!("selection{}", label(c)), st))?;
    }
    let roof_stats: Vec<RoofStats<'_>> = roofs
        .into_iter()
        .map(|r| {
            let e = ext
                .iter()
                .zip(r.ext)
                .filter(|(_, t)| !t.is_empty())
                .map(|((name, _), t)| (*name, stats(t)))
                .collect();
            (r.storage, stats(r.roof), e)
        })
        .collect();
    let several_storages = configs.iter().any(|c| c.storage != configs[0].storage);
    for (storage, r, e) in &roof_stats {
        let suffix = if several_storages {
            format!(" {}", storage_name(*storage))
        } else {
            String::new()
        };
        writeln!(
            text,
            "{}",
            table_row(&format!("roofline (K+1 passes){suffix}"), r)
        )?;
        for (name, st) in e {
            writeln!(text, "{}", table_row(&format!("{name} (K+1 passes)"), st))?;
        }
    }

    // Ratios: storage against the first storage (same thread mode), thread
    // modes against one thread (same storage), selection against the
    // roofline and the faster external library (single-threaded rows).
    let mut ratios = String::new();
    let mut notes = String::new();
    let first = configs[0].storage;
    for (i, c) in configs.iter().enumerate() {
        if c.storage == first {
            continue;
        }
        if let Some(j) = configs
            .iter()
            .position(|b| b.storage == first && b.mode == c.mode)
        {
            let (a, b) = (&stats_of[i], &stats_of[j]);
            let mode = if configs.iter().any(|x| x.mode != c.mode) {
                format!(" ({})", mode_short(c.mode))
            } else {
                String::new()
            };
            let what = format!(
                "{} / {}{mode}",
                storage_name(c.storage),
                storage_name(first)
            );
            writeln!(ratios, "{}", ratio_line(&what, a, b))?;
            // One note per storage, from its first thread mode.
            let noted = configs[..i].iter().any(|x| x.storage == c.storage);
            if first == Storage::F32 && a.median > b.median && !noted {
                notes.push_str(&storage_note(
                    c.storage,
                    a.median / b.median,
                    f32_bytes,
                    &cache,
                ));
            }
        }
    }
    for (i, c) in configs.iter().enumerate() {
        if c.mode == Mode::Single {
            continue;
        }
        if let Some(j) = configs
            .iter()
            .position(|b| b.storage == c.storage && b.mode == Mode::Single)
        {
            // Round means: a batch has no per-query times.
            let (a, b) = (&rounds_of[i], &rounds_of[j]);
            let st = if several_storages {
                format!(", {}", storage_name(c.storage))
            } else {
                String::new()
            };
            let fell = match c.mode {
                Mode::Batch(_, BatchPlan::Auto) => format!(
                    "; auto's split fell back to whole queries in {} of {} rounds, and {} rounds ran whole queries after a recent fallback",
                    measured[i].fell_back, a.n, measured[i].remembered
                ),
                _ => String::new(),
            };
            writeln!(
                ratios,
                "speedup of {} over 1 thread{st}: {:.3} (medians), {:.3} (minima) of {} round means{fell}",
                mode_short(c.mode),
                b.median / a.median,
                b.min / a.min,
                a.n
            )?;
            if a.median > b.median {
                let hint = match c.mode {
                    Mode::Batch(..) => {
                        "other processes may hold the cores (see the load average), or \
                         another --batch-plan or fewer threads suit these pools"
                    }
                    _ => {
                        "other processes may hold the cores (see the load average), or a \
                         pass over these pools is too short to split"
                    }
                };
                let _ = writeln!(
                    notes,
                    "note: {} is slower than one thread here ({:.2}×): {hint}",
                    mode_short(c.mode),
                    b.median / a.median
                );
            }
        }
    }
    for (storage, r, e) in &roof_stats {
        let Some(i) = configs
            .iter()
            .position(|c| c.storage == *storage && c.mode == Mode::Single)
        else {
            continue;
        };
        let st = &stats_of[i];
        let suffix = if several_storages {
            format!(" ({})", storage_name(*storage))
        } else {
            String::new()
        };
        writeln!(
            ratios,
            "{}",
            ratio_line(&format!("selection / roofline{suffix}"), st, r)
        )?;
        if let Some((name, best)) = e.iter().min_by(|a, b| a.1.median.total_cmp(&b.1.median)) {
            let faster = format!("{name} (the faster external library)");
            writeln!(
                ratios,
                "{}; roofline / {name}: {:.3}",
                ratio_line(&format!("selection / {faster}"), st, best),
                r.median / best.median
            )?;
        }
    }
    // A reduced-precision storage timed without f32: whether it can pay.
    if !configs.iter().any(|c| c.storage == Storage::F32) {
        if let Some(c) = configs.iter().find(|c| c.storage != Storage::F32) {
            if f32_bytes as f64 <= L2_FILL * cache.l2_bytes as f64 {
                let _ = writeln!(
                    notes,
                    "note: these pools fit in this core's L2 cache even as f32 ({} of {}): \
                     {} storage halves their memory, but where the f32 passes already read \
                     at cache speed the widening to f32 can cost what the halved reading \
                     saves (slower than f32 on some CPUs); `--storage f32,{}` measures both \
                     here in one run",
                    bytes_text(f32_bytes),
                    bytes_text(cache.l2_bytes),
                    storage_name(c.storage),
                    storage_name(c.storage)
                );
            }
        }
    }
    if !ratios.is_empty() {
        write!(text, "\n{ratios}")?;
    }
    if !notes.is_empty() {
        write!(text, "\n{notes}")?;
    }
    // Agreement with the f32 picks (single-threaded, same method).
    let mut selector = Selector::new();
    let mut want = Vec::with_capacity(queries.len());
    let mut agreement = String::new();
    let mut reported: Vec<Storage> = vec![Storage::F32];
    for (c, m) in configs.iter().zip(&measured) {
        // Once per reduced-precision storage (its first configuration).
        if reported.contains(&c.storage) {
            continue;
        }
        reported.push(c.storage);
        if want.is_empty() {
            for input in &inputs.f32 {
                want.push(selector.select(input, args.budget, &method)?.picks);
            }
        }
        let suffix = if several_storages {
            format!(" ({})", storage_name(c.storage))
        } else {
            String::new()
        };
        writeln!(agreement, "{}", agreement_line(&suffix, &want, &m.picks))?;
    }
    if !agreement.is_empty() {
        write!(text, "\n{agreement}")?;
    }
    emit(&text)
}

/// A storage's roofline statistics and each external library's (f32).
type RoofStats<'a> = (Storage, Stats, Vec<(&'a str, Stats)>);

/// `picks vs f32<suffix>: identical sequence in …, identical set in …`.
fn agreement_line(suffix: &str, want: &[Vec<usize>], got: &[Vec<usize>]) -> String {
    let (mut same_order, mut same_set) = (0usize, 0usize);
    for (w, g) in want.iter().zip(got) {
        same_order += usize::from(w == g);
        let (mut a, mut b) = (w.clone(), g.clone());
        a.sort_unstable();
        b.sort_unstable();
        same_set += usize::from(a == b);
    }
    let n = got.len().max(1);
    format!(
        "picks vs f32{suffix}: identical sequence in {same_order}/{} queries ({:.1} %), identical set in {same_set}/{} ({:.1} %)",
        got.len(),
        100.0 * same_order as f64 / n as f64,
        got.len(),
        100.0 * same_set as f64 / n as f64
    )
}

/// The configurations of a run: every storage × every thread mode
/// (`--threads 1` with each `--split`, each `--threads N > 1` with each
/// `--batch-plan`).
fn configs(args: &BenchArgs) -> Result<Vec<Config>, Box<dyn std::error::Error>> {
    let mut modes: Vec<Mode> = Vec::new();
    let mut push = |m: Mode| {
        if !modes.contains(&m) {
            modes.push(m);
        }
    };
    for &t in &args.threads {
        match t {
            0 => return Err("bench: --threads must be at least 1".into()),
            1 => {
                for &s in &args.split {
                    match s {
                        0 => return Err("bench: --split must be at least 1".into()),
                        1 => push(Mode::Single),
                        n => push(Mode::Split(n)),
                    }
                }
            }
            n => {
                for &plan in &args.batch_plan {
                    push(Mode::Batch(n, plan));
                }
            }
        }
    }
    if args.split.iter().any(|&s| s > 1) && !args.threads.contains(&1) {
        return Err(
            "bench: --split N applies with --threads 1 (add 1 to the --threads list)".into(),
        );
    }
    let mut storages: Vec<Storage> = Vec::new();
    for &s in &args.storage {
        if !storages.contains(&s) {
            storages.push(s);
        }
    }
    Ok(storages
        .iter()
        .flat_map(|&storage| modes.iter().map(move |&mode| Config { storage, mode }))
        .collect())
}

/// " f16, batch 2 threads (auto)": what tells `c` apart from the other
/// configurations (empty for a single one).
fn config_label(all: &[Config], c: &Config) -> String {
    let mut parts = Vec::new();
    if all.iter().any(|x| x.storage != c.storage) {
        parts.push(storage_name(c.storage).to_string());
    }
    if all.iter().any(|x| x.mode != c.mode) {
        parts.push(mode_short(c.mode));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" {}", parts.join(", "))
    }
}

fn storage_name(s: Storage) -> &'static str {
    match s {
        Storage::F32 => "f32",
        Storage::F16 => "f16",
        Storage::Bf16 => "bf16",
        Storage::Int8 => "int8",
    }
}

/// "1 thread", "split 2", "batch 2 threads (auto)".
fn mode_short(m: Mode) -> String {
    match m {
        Mode::Single => "1 thread".into(),
        Mode::Split(n) => format!("split {n}"),
        Mode::Batch(n, plan) => format!("batch {n} threads ({plan})"),
    }
}

/// The mode in words, with the thread plan a batch resolves to.
fn mode_text(c: Config, inputs: &Inputs<'_>, method: &Method, k: usize, queries: usize) -> String {
    match c.mode {
        Mode::Single => "single thread".into(),
        Mode::Split(n) => format!("one query split over {n} threads"),
        Mode::Batch(t, plan) => {
            let tp = match c.storage {
                Storage::F16 => batch_plan_for(&inputs.f16, k, method, t, plan),
                Storage::Bf16 => batch_plan_for(&inputs.bf16, k, method, t, plan),
                _ => batch_plan_for(&inputs.f32, k, method, t, plan),
            };
            let used = tp.threads();
            let mut m = format!("batch on {used} thread{}", if used == 1 { "" } else { "s" });
            if used < t {
                let why = if tp.split == 1 && tp.groups == queries {
                    "one per query at most"
                } else if plan == BatchPlan::Auto {
                    "the automatic plan: too little work for more"
                } else {
                    "whole groups of the plan"
                };
                let _ = write!(m, " (--threads {t}: {why})");
            }
            let cores = std::thread::available_parallelism().map_or(1, usize::from);
            if used > cores {
                let _ = write!(m, " on {cores} available cores");
            }
            let _ = write!(
                m,
                ", plan {plan}: {tp} (time per query = batch time / queries)"
            );
            m
        }
    }
}

/// The median pool size in bytes at `size` bytes per value.
fn median_bytes(queries: &[Query], size: usize) -> usize {
    let mut b: Vec<usize> = queries.iter().map(|q| q.pool.len() * size).collect();
    b.sort_unstable();
    b.get(b.len() / 2).copied().unwrap_or(0)
}

/// "1.23 MB", "512 KiB"-style sizes (decimal MB above 1e6 bytes, KiB below).
fn bytes_text(b: usize) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else if b >= 1_000_000 {
        format!("{:.2} MB", b as f64 / 1e6)
    } else {
        format!("{:.0} KiB", b as f64 / 1024.0)
    }
}

/// Why a reduced-precision storage was slower than f32 here, and what to
/// do: one `note:` line.
fn storage_note(s: Storage, ratio: f64, f32_bytes: usize, cache: &CacheInfo) -> String {
    let name = storage_name(s);
    let why = if f32_bytes as f64 <= L2_FILL * cache.l2_bytes as f64 {
        format!(
            "these pools fit in this core's L2 cache even as f32 ({} of {}), so halving \
             their bytes saves no reading time and the widening to f32 costs some",
            bytes_text(f32_bytes),
            bytes_text(cache.l2_bytes)
        )
    } else {
        "on this CPU widening the values to f32 costs more than the bytes it saves".to_string()
    };
    format!(
        "note: {name} storage is {ratio:.2}× the f32 time here: {why}. {name} still halves the \
         memory of the pools; for speed, keep f32 on this machine for pools of this size.\n"
    )
}

/// The 1-minute load average (Linux), e.g. "0.42".
fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next().map(str::to_string)
}

/// The CPU's model and the instruction sets the kernels can use.
fn cpu_text() -> String {
    let mut model = String::from("unknown model");
    if let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") {
        let field = |name: &str| {
            info.lines()
                .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        };
        if let Some(m) = field("model name") {
            model = m;
            if let (Some(f), Some(m)) = (field("cpu family"), field("model")) {
                let _ = write!(model, " (family {f}, model {m})");
            }
        }
    }
    let mut isa: Vec<&str> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        macro_rules! has {
            ($($f:tt => $name:literal),*) => {
                $(if std::is_x86_feature_detected!($f) { isa.push($name); })*
            };
        }
        has!("avx2" => "AVX2", "fma" => "FMA", "f16c" => "F16C", "avx512f" => "AVX-512F",
             "avx512bw" => "AVX-512BW", "avx512vl" => "AVX-512VL",
             "avx512bf16" => "AVX512_BF16", "avx512vnni" => "AVX512_VNNI",
             "avxvnni" => "AVX-VNNI");
        if isa.is_empty() {
            isa.push("SSE2 only");
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    isa.push(std::env::consts::ARCH);
    format!("{model}; {}", isa.join(" "))
}

/// `bench --screening compare`: the screened and the unscreened pursuit
/// on the same pools, round by round, on one thread and one storage.
fn run_screening_compare(
    args: &BenchArgs,
    queries: &[Query],
    source: &str,
    spec: &str,
    method: &Method,
    relevance: mempursuit::Relevance<'_>,
) -> CliResult {
    let Method::Pursuit(options) = *method else {
        return Err("bench: --screening compare applies to the pursuit methods only".into());
    };
    let one_thread = args.threads.iter().all(|&t| t == 1) && args.split.iter().all(|&s| s == 1);
    let storage =
        match args.storage.as_slice() {
            [s] if *s != Storage::Int8 && one_thread => *s,
            _ => return Err(
                "bench: --screening compare runs one storage (f32, f16 or bf16) on one thread: \
                 give a single --storage and no --threads / --split above 1"
                    .into(),
            ),
        };
    let load_before = load_average();
    let m = match storage {
        Storage::F16 => {
            let pools = convert(queries, f16::from_f32);
            let inputs: Vec<Input<'_, f16>> = queries
                .iter()
                .zip(&pools)
                .map(|(q, m)| Input::with_storage(&q.query, m).with_relevance(relevance))
                .collect();
            measure_screening(&inputs, args, &options)?
        }
        Storage::Bf16 => {
            let pools = convert(queries, bf16::from_f32);
            let inputs: Vec<Input<'_, bf16>> = queries
                .iter()
                .zip(&pools)
                .map(|(q, m)| Input::with_storage(&q.query, m).with_relevance(relevance))
                .collect();
            measure_screening(&inputs, args, &options)?
        }
        _ => {
            let inputs: Vec<Input<'_>> = queries
                .iter()
                .map(|q| Input::new(&q.query, &q.pool).with_relevance(relevance))
                .collect();
            measure_screening(&inputs, args, &options)?
        }
    };
    let load_after = load_average();
    let [on, auto, off] = m.times.map(stats);
    let p = queries
        .first()
        .map_or(0, |q| q.pool.len() / q.query.len().max(1));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let mut text = String::new();
    writeln!(text, "data:    {source}")?;
    writeln!(
        text,
        "method:  {spec}, K = {}, storage {storage:?}, single thread, kernels {}",
        args.budget,
        Isa::detect().name()
    )?;
    writeln!(text, "cpu:     {}", cpu_text())?;
    if let (Some(a), Some(b)) = (load_before, load_after) {
        writeln!(
            text,
            "load:    {a} before, {b} after (1-minute load average; timings need it \
             well below the core count)"
        )?;
    }
    writeln!(
        text,
        "\n| what | median µs | mean µs | p95 µs | min µs | samples |"
    )?;
    writeln!(text, "|---|---|---|---|---|---|")?;
    writeln!(text, "{}", table_row("screened (on)", &on))?;
    writeln!(text, "{}", table_row("auto", &auto))?;
    writeln!(text, "{}", table_row("unscreened (off)", &off))?;
    writeln!(text, "\n{}", ratio_line("screened / unscreened", &on, &off))?;
    writeln!(text, "{}", ratio_line("auto / unscreened", &auto, &off))?;
    let [ron, rauto, roff] = [0, 1, 2].map(|i| mean(&m.rows[i]));
    writeln!(
        text,
        "rows read per pick (the query pass included): screened {ron:.1}, auto {rauto:.1}, unscreened {roff:.1} (P = {p}): {:.3} and {:.3} of the unscreened bytes",
        ron / roff.max(1e-9),
        rauto / roff.max(1e-9)
    )?;
    emit(&text)
}

/// The least P at which `Int8Passes::auto_rule` runs the int8 passes at
/// budget K on the active int8 kernel with d = `INT8_AUTO_MIN_DIM` beyond
/// L2 (`usize::MAX`: never, e.g. K above `INT8_AUTO_MAX_BUDGET`).
fn auto_min_pool(k: usize) -> usize {
    let kernel = Int8Kernel::active();
    let d = mempursuit::INT8_AUTO_MIN_DIM;
    (k.max(1)..=1 << 20)
        .find(|&p| Int8Passes::auto_rule(kernel, p, d, k, 0))
        .unwrap_or(usize::MAX)
}

/// `bench --storage int8`: the certified int8 pursuit and the f32 pursuit
/// on the same pools, round by round, single-threaded.
fn run_int8(
    args: &BenchArgs,
    queries: &[Query],
    source: &str,
    spec: &str,
    method: &Method,
    relevance: mempursuit::Relevance<'_>,
) -> CliResult {
    let Method::Pursuit(options) = *method else {
        return Err("bench: --storage int8 applies to the pursuit methods only".into());
    };
    if args.storage.len() > 1 {
        return Err("bench: --storage int8 runs alone (it times the f32 pursuit itself)".into());
    }
    if args.threads.iter().any(|&t| t != 1) || args.split.iter().any(|&s| s != 1) {
        return Err("bench: --storage int8 runs on one thread".into());
    }
    // (`--screening compare` never reaches here: it runs f32, f16 or bf16
    // alone; auto, on and off set the f32 pursuit's screening.)
    if args.int8_kernel != "auto" {
        let kernel = Int8Kernel::from_name(&args.int8_kernel).ok_or_else(|| {
            format!(
                "bench: --int8-kernel {}: not a kernel name (auto, avx512-vnni, avx-vnni, avx2, simd128, portable)",
                args.int8_kernel
            )
        })?;
        Int8Kernel::force(Some(kernel)).map_err(|e| format!("bench: --int8-kernel: {e}"))?;
    }
    let f32_inputs: Vec<Input<'_>> = queries
        .iter()
        .map(|q| Input::new(&q.query, &q.pool).with_relevance(relevance))
        .collect();
    let ext = externals();
    let f32_pools: Vec<&[f32]> = queries.iter().map(|q| q.pool.as_slice()).collect();
    let codes = queries
        .iter()
        .map(|q| Int8Candidates::quantize(&q.pool, q.query.len()))
        .collect::<Result<Vec<_>, _>>()?;
    let m = measure_int8(&f32_inputs, &codes, args, &options, &ext, &f32_pools)?;
    let (samples, picks, roof, ext_samples) = m.timed;
    let mut text = String::new();
    writeln!(text, "data:    {source}")?;
    writeln!(
        text,
        "method:  {spec}, K = {}, storage Int8, single thread, kernels {}, int8 kernel {}{}",
        args.budget,
        Isa::detect().name(),
        Int8Kernel::active().name(),
        if Int8Kernel::active() == Int8Kernel::detect() {
            String::new()
        } else {
            format!(
                " (forced; this CPU's best: {})",
                Int8Kernel::detect().name()
            )
        }
    )?;
    writeln!(text, "cpu:     {}", cpu_text())?;
    let s = stats(samples);
    let f = stats(m.f32_samples);
    writeln!(
        text,
        "\n| what | median µs | mean µs | p95 µs | min µs | samples |"
    )?;
    writeln!(text, "|---|---|---|---|---|---|")?;
    writeln!(text, "{}", table_row("selection", &s))?;
    let f32_row = match args.screening {
        ScreeningArg::Auto => "f32 pursuit".to_string(),
        other => format!("f32 pursuit (Screening::{:?})", other.screening()),
    };
    writeln!(text, "{}", table_row(&f32_row, &f))?;
    let r = roof.map(stats);
    let mut best: Option<(&str, Stats)> = None;
    if let Some(r) = &r {
        writeln!(text, "{}", table_row("roofline (K+1 passes)", r))?;
        for ((name, _), times) in ext.iter().zip(ext_samples) {
            if times.is_empty() {
                continue;
            }
            let e = stats(times);
            writeln!(text, "{}", table_row(&format!("{name} (K+1 passes)"), &e))?;
            if best.as_ref().is_none_or(|(_, b)| e.median < b.median) {
                best = Some((name, e));
            }
        }
    }
    let mut ratios = String::new();
    writeln!(ratios, "{}", ratio_line("int8 / f32 pursuit", &s, &f))?;
    if let Some(r) = &r {
        writeln!(ratios, "{}", ratio_line("selection / roofline", &s, r))?;
        writeln!(ratios, "{}", ratio_line("f32 pursuit / roofline", &f, r))?;
        if let Some((name, e)) = &best {
            let faster = format!("{name} (the faster external library)");
            writeln!(
                ratios,
                "{}; roofline / {name}: {:.3}",
                ratio_line(&format!("selection / {faster}"), &s, e),
                r.median / e.median
            )?;
            let label = format!("f32 pursuit / {faster}");
            writeln!(ratios, "{}", ratio_line(&label, &f, e))?;
        }
    }
    write!(text, "\n{ratios}")?;
    let v = m.verified;
    if !v.is_empty() {
        let max = v.iter().max().copied().unwrap_or(0);
        let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64;
        writeln!(
            text,
            "\nverified candidates per pick: mean {mean:.2}, max {max} ({} picks of the last round; of P = {} per pool)",
            v.len(),
            queries.first().map_or(0, |q| q.pool.len() / q.query.len().max(1))
        )?;
        let (p, d) = queries.first().map_or((0, 0), |q| {
            (q.pool.len() / q.query.len().max(1), q.query.len())
        });
        let k = args.budget;
        writeln!(
            text,
            "int8 passes with Int8Passes::Auto at P = {p}, d = {d}, K = {k} on int8 kernel {}: {} (Int8Passes::auto_rule: f32 rows {} bytes > L2 {} bytes: {}; d ≥ {}: {}; P ≥ {} for K = {k} on this kernel (K ≤ {}): {})",
            Int8Kernel::active().name(),
            if Int8Passes::Auto.uses_int8(p, d, k) { "yes" } else { "no: the f32 pursuit runs" },
            p * d * 4,
            mempursuit::kernels::int8::l2_cache_bytes(),
            p * d * 4 > mempursuit::kernels::int8::l2_cache_bytes(),
            mempursuit::INT8_AUTO_MIN_DIM,
            d >= mempursuit::INT8_AUTO_MIN_DIM,
            auto_min_pool(k),
            mempursuit::INT8_AUTO_MAX_BUDGET,
            p >= auto_min_pool(k),
        )?;
    }
    let mut selector = Selector::new();
    let mut want = Vec::with_capacity(queries.len());
    for input in &f32_inputs {
        want.push(selector.select(input, args.budget, method)?.picks);
    }
    writeln!(text, "\n{}", agreement_line("", &want, &picks))?;
    emit(&text)
}
