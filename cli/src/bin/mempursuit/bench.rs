//! `mempursuit bench`: per-query latency on seeded random unit vectors or
//! on a dataset folder, single-threaded by default; `--split N` runs each
//! query's passes on N threads, `--threads N` runs the queries as a batch on
//! N threads. A single-threaded sample is one allocation-free call (the
//! core selector on a reused workspace, as a latency-bound service would
//! call it; the owned `Selection` is not built). With `--roofline` the same
//! run also times K + 1 plain
//! matrix–vector passes over each pool (the roofline of a budget-K query),
//! and, in a build with the `openblas` / `faer` features, the same K + 1
//! passes with OpenBLAS's SGEMV / faer's matrix–vector product (f32
//! storage);
//! with a reduced-precision `--storage` it reports how often the picks
//! differ from the f32 picks. `--storage int8` also times the f32 pursuit
//! on the same pools, round by round, for the int8 / f32 ratio.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use mempursuit::half::{bf16, f16};
use mempursuit::kernels::{row_dots, Isa};
use mempursuit::parallel::{select_batch, SplitPool};
use mempursuit::{
    pursuit, pursuit_int8_using, Element, Input, Int8Candidates, Int8Passes, Method,
    PursuitOptions, Screening, Selector, Serial,
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
    /// (row `f32 pursuit`, ratio `int8 / f32 pursuit`), and reports the
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
    /// Both, interleaved, with the ratio and the rows read.
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
    #[arg(long, short = 'k', default_value_t = 20)]
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
    /// With `--dir`: lift every vector to T·d dimensions by an isometry
    /// (its d coordinates repeated T times with seeded random signs, scaled
    /// by 1/√T, the T·d coordinates then permuted by a seeded random
    /// permutation): every cosine and Gram entry of the data set is kept
    /// (up to f32 rounding), the rows are T times longer. A stand-in for
    /// real embeddings of dimension T·d, which screening sees through
    /// their Gram matrix only.
    #[arg(long, value_name = "T", requires = "dir", default_value_t = 1)]
    pub tile: usize,
    /// Storage of the candidate matrix.
    #[arg(long, value_enum, default_value_t = Storage::F32)]
    pub storage: Storage,
    /// Batch mode: run the queries of a round on N threads (one workspace
    /// per thread) and report the time per query of the whole batch.
    #[arg(long, default_value_t = 1, conflicts_with = "split")]
    pub threads: usize,
    /// Split each query's passes over N threads (pursuit methods only).
    #[arg(long, default_value_t = 1)]
    pub split: usize,
    /// Exact screening of the pursuit methods: `auto` (the default rule),
    /// `on`, `off`, or `compare`: the screened and the unscreened pursuit
    /// on the same pools, round by round in the same process (rows
    /// `screened` and `unscreened`, ratio `screened / unscreened`), with
    /// the rows read per pick (single thread, f32/f16/bf16 storage).
    #[arg(long, value_enum, default_value_t = ScreeningArg::Auto)]
    pub screening: ScreeningArg,
    /// Also time the roofline: K + 1 plain matrix–vector passes per query
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

fn random_unit(n: usize, d: usize, rng: &mut StdRng) -> Vec<f32> {
    let mut out = Vec::with_capacity(n * d);
    let mut row = vec![0.0f64; d];
    for _ in 0..n {
        row.iter_mut().for_each(|x| *x = StandardNormal.sample(rng));
        let norm = row.iter().map(|x| x * x).sum::<f64>().sqrt();
        out.extend(row.iter().map(|x| (x / norm) as f32));
    }
    out
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

/// Times `method` on every query, round after round (round 0 is an untimed
/// warm-up). With `--roofline` each round is followed by a roofline round
/// over the same queries, so both see the same machine conditions and the
/// same cache state (each query's pool is evicted from L2 by the others
/// before it comes round again when the pools exceed the L2 cache).
/// Batch mode gives one sample per round: batch time / queries. `ext`
/// (with `--roofline`): external passes to time after the roofline in each
/// round, on `pools` (the f32 pools of `inputs`).
fn measure<E: Element>(
    inputs: &[Input<'_, E>],
    args: &BenchArgs,
    method: &Method,
    screening: Screening,
    mut split: Option<&mut SplitPool>,
    ext: &[(&'static str, Passes)],
    pools: &[&[f32]],
) -> Result<Timed, Box<dyn std::error::Error>> {
    let k = args.budget;
    let mut samples = Vec::with_capacity(args.rounds * inputs.len());
    let mut roof = args
        .roofline
        .then(|| Vec::with_capacity(args.rounds * inputs.len()));
    let mut picks = vec![Vec::new(); inputs.len()];
    let max_pool = inputs
        .iter()
        .filter_map(|i| i.pool_size())
        .max()
        .unwrap_or(0);
    let mut selector = Selector::with_capacity(max_pool, k.min(max_pool));
    let mut sink = 0.0f32;
    let mut ext_samples = vec![Vec::with_capacity(args.rounds * inputs.len()); ext.len()];
    if split.is_some() && !matches!(method, Method::Pursuit(_)) {
        return Err("--split applies to the pursuit methods only".into());
    }
    for round in 0..=args.rounds {
        let timed = round > 0;
        if args.threads > 1 {
            let t = Instant::now();
            let results = select_batch(inputs, k, method, args.threads);
            let dt = t.elapsed().as_secs_f64() / inputs.len() as f64;
            if timed {
                samples.push(dt);
            }
            for (slot, r) in picks.iter_mut().zip(results) {
                *slot = r?.picks;
            }
        } else {
            for (input, slot) in inputs.iter().zip(picks.iter_mut()) {
                let t = Instant::now();
                match (split.as_deref_mut(), method) {
                    (Some(pool), Method::Pursuit(options)) => {
                        let mut ws = selector.workspace(max_pool, k.min(max_pool));
                        let sel = pool.pursuit(input, k, options, &mut ws)?;
                        let dt = t.elapsed().as_secs_f64();
                        slot.clear();
                        slot.extend_from_slice(sel.picks());
                        if timed {
                            samples.push(dt);
                        }
                    }
                    _ => {
                        // The allocation-free call (core selector on a
                        // reused workspace); the picks are copied out after
                        // the clock stops.
                        let mut ws = selector.workspace(max_pool, k.min(max_pool));
                        let sel = match method {
                            Method::Pursuit(o) => mempursuit::pursuit_using(
                                input,
                                k,
                                o,
                                screening,
                                &mut ws,
                                &mut Serial,
                            )?,
                            _ => method.run(input, k, &mut ws)?,
                        };
                        let dt = t.elapsed().as_secs_f64();
                        slot.clear();
                        slot.extend_from_slice(sel.picks());
                        if timed {
                            samples.push(dt);
                        }
                    }
                }
            }
        }
        if let Some(roof) = roof.as_mut() {
            sink += roofline_round(inputs, k, roof, ext, pools, &mut ext_samples, timed);
        }
    }
    std::hint::black_box(sink);
    Ok((samples, picks, roof, ext_samples))
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
                    let sel = pursuit(input, k, options, &mut ws)?;
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
            for i in 0..data.queries.len() {
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
            let mut rng = StdRng::seed_from_u64(args.seed);
            let qs: Vec<Query> = (0..args.queries)
                .map(|_| Query {
                    query: random_unit(1, args.dim, &mut rng),
                    pool: random_unit(args.pool, args.dim, &mut rng),
                })
                .collect();
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
    let mut split = if args.split > 1 {
        Some(SplitPool::new(args.split)?)
    } else {
        None
    };

    let f32_inputs: Vec<Input<'_>> = queries
        .iter()
        .map(|q| Input::new(&q.query, &q.pool).with_relevance(relevance))
        .collect();
    let ext = externals();
    let f32_pools: Vec<&[f32]> = queries.iter().map(|q| q.pool.as_slice()).collect();
    if args.screening == ScreeningArg::Compare {
        let Method::Pursuit(options) = method else {
            return Err("bench: --screening compare applies to the pursuit methods only".into());
        };
        if args.threads > 1 || args.split > 1 || args.storage == Storage::Int8 {
            return Err(
                "bench: --screening compare runs on one thread, f32/f16/bf16 storage".into(),
            );
        }
        let m = match args.storage {
            Storage::F16 => {
                let pools = convert(&queries, f16::from_f32);
                let inputs: Vec<Input<'_, f16>> = queries
                    .iter()
                    .zip(&pools)
                    .map(|(q, m)| Input::with_storage(&q.query, m))
                    .collect();
                measure_screening(&inputs, args, &options)?
            }
            Storage::Bf16 => {
                let pools = convert(&queries, bf16::from_f32);
                let inputs: Vec<Input<'_, bf16>> = queries
                    .iter()
                    .zip(&pools)
                    .map(|(q, m)| Input::with_storage(&q.query, m))
                    .collect();
                measure_screening(&inputs, args, &options)?
            }
            _ => measure_screening(&f32_inputs, args, &options)?,
        };
        let [on, auto, off] = m.times.map(stats);
        let p = queries
            .first()
            .map_or(0, |q| q.pool.len() / q.query.len().max(1));
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let mut text = String::new();
        writeln!(text, "data:    {source}")?;
        writeln!(
            text,
            "method:  {spec}, K = {}, storage {:?}, single thread, kernels {}",
            args.budget,
            args.storage,
            Isa::detect().name()
        )?;
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
        return emit(&text);
    }
    let mut verified = None;
    let mut f32_pursuit = None;
    let (samples, picks, roof, ext_samples) = match args.storage {
        Storage::Int8 => {
            let Method::Pursuit(options) = method else {
                return Err("bench: --storage int8 applies to the pursuit methods only".into());
            };
            if args.threads > 1 || args.split > 1 {
                return Err("bench: --storage int8 runs on one thread".into());
            }
            let codes = queries
                .iter()
                .map(|q| Int8Candidates::quantize(&q.pool, q.query.len()))
                .collect::<Result<Vec<_>, _>>()?;
            let m = measure_int8(&f32_inputs, &codes, args, &options, &ext, &f32_pools)?;
            verified = Some(m.verified);
            f32_pursuit = Some(m.f32_samples);
            m.timed
        }
        Storage::F32 => measure(
            &f32_inputs,
            args,
            &method,
            args.screening.screening(),
            split.as_mut(),
            &ext,
            &f32_pools,
        )?,
        Storage::F16 => {
            let pools = convert(&queries, f16::from_f32);
            let inputs: Vec<Input<'_, f16>> = queries
                .iter()
                .zip(&pools)
                .map(|(q, m)| Input::with_storage(&q.query, m).with_relevance(relevance))
                .collect();
            measure(
                &inputs,
                args,
                &method,
                args.screening.screening(),
                split.as_mut(),
                &[],
                &[],
            )?
        }
        Storage::Bf16 => {
            let pools = convert(&queries, bf16::from_f32);
            let inputs: Vec<Input<'_, bf16>> = queries
                .iter()
                .zip(&pools)
                .map(|(q, m)| Input::with_storage(&q.query, m).with_relevance(relevance))
                .collect();
            measure(
                &inputs,
                args,
                &method,
                args.screening.screening(),
                split.as_mut(),
                &[],
                &[],
            )?
        }
    };

    let mut text = String::new();
    // select_batch runs min(--threads, queries) threads: say how many ran,
    // and when they outnumber the cores this process may use.
    let used = args.threads.clamp(1, queries.len().max(1));
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mode = if args.threads > 1 {
        let mut m = format!("batch on {used} threads");
        if used < args.threads {
            let _ = write!(m, " (--threads {}: one per query at most)", args.threads);
        }
        if used > cores {
            let _ = write!(m, " on {cores} available cores");
        }
        m.push_str(" (time per query = batch time / queries)");
        m
    } else if args.split > 1 {
        format!("one query split over {} threads", args.split)
    } else {
        "single thread".to_string()
    };
    writeln!(text, "data:    {source}")?;
    writeln!(
        text,
        "method:  {spec}, K = {}, storage {:?}, {mode}, kernels {}",
        args.budget,
        args.storage,
        Isa::detect().name()
    )?;
    let s = stats(samples);
    let f = f32_pursuit.map(stats);
    writeln!(
        text,
        "\n| what | median µs | mean µs | p95 µs | min µs | samples |"
    )?;
    writeln!(text, "|---|---|---|---|---|---|")?;
    writeln!(text, "{}", table_row("selection", &s))?;
    if let Some(f) = &f {
        writeln!(text, "{}", table_row("f32 pursuit", f))?;
    }
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
    // The ratios: int8 / f32 pursuit (with --storage int8), then against
    // the roofline and the faster external library (with --roofline).
    let mut ratios = String::new();
    if let Some(f) = &f {
        writeln!(ratios, "{}", ratio_line("int8 / f32 pursuit", &s, f))?;
    }
    if let Some(r) = &r {
        writeln!(ratios, "{}", ratio_line("selection / roofline", &s, r))?;
        if let Some(f) = &f {
            writeln!(ratios, "{}", ratio_line("f32 pursuit / roofline", f, r))?;
        }
        if let Some((name, e)) = &best {
            let faster = format!("{name} (the faster external library)");
            writeln!(
                ratios,
                "{}; roofline / {name}: {:.3}",
                ratio_line(&format!("selection / {faster}"), &s, e),
                r.median / e.median
            )?;
            if let Some(f) = &f {
                let label = format!("f32 pursuit / {faster}");
                writeln!(ratios, "{}", ratio_line(&label, f, e))?;
            }
        }
    }
    if !ratios.is_empty() {
        write!(text, "\n{ratios}")?;
    }
    if let Some(v) = verified.filter(|v| !v.is_empty()) {
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
        writeln!(
            text,
            "int8 passes with Int8Passes::Auto on this CPU at P = {p}, d = {d}: {} (int8 dot instruction: {}, f32 rows {} bytes, L2 {} bytes)",
            if Int8Passes::Auto.uses_int8(p, d) { "yes" } else { "no: the f32 pursuit runs" },
            mempursuit::kernels::int8::has_int8_dot_instruction(),
            p * d * 4,
            mempursuit::kernels::int8::l2_cache_bytes()
        )?;
    }
    if args.storage != Storage::F32 {
        // Agreement with the f32 picks (single-threaded, same method).
        let mut selector = Selector::new();
        let (mut same_order, mut same_set) = (0usize, 0usize);
        for (input, got) in f32_inputs.iter().zip(&picks) {
            let want = selector.select(input, args.budget, &method)?.picks;
            same_order += usize::from(&want == got);
            let (mut a, mut b) = (want.clone(), got.clone());
            a.sort_unstable();
            b.sort_unstable();
            same_set += usize::from(a == b);
        }
        let n = picks.len();
        writeln!(
            text,
            "\npicks vs f32: identical sequence in {same_order}/{n} queries ({:.1} %), identical set in {same_set}/{n} ({:.1} %)",
            100.0 * same_order as f64 / n as f64,
            100.0 * same_set as f64 / n as f64
        )?;
    }
    emit(&text)
}
