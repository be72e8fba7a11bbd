//! The store report (`benches/store-report.sh`): per-query time of the
//! per-call f32 pursuit (unscreened and screened, the caller's contiguous
//! f32 pool) against [`Store`] calls on the same pools by store ids, with
//! each storage, timed round by round in one process on the same pools;
//! and the time to build a 100,000 × 384 store per storage.
//!
//! ```text
//! cargo run --release -p mempursuit-cli --example store_report -- \
//!     [--data DIR] [--queries N] [--rounds R] [--int8-kernel avx2] [--build-rows N]
//! ```
//!
//! Pools: with `--data DIR` (a folder holding `hotpotqa-distractor` and
//! `hotpotqa-distractor-e5`), the HotpotQA store pools: each query's P
//! memories of the whole store nearest to it by cosine, every vector lifted
//! to 4·d = 1536 dimensions by the isometry of `mempursuit bench --tile 4`;
//! always random pools: P distinct random rows of a store of 4,000 random
//! unit vectors (d = 1536) and a random unit query. P = 200 and 1000,
//! K = 20 and 50.
//!
//! The last line, `store mode / per-call f32: K=20 X, K=50 Y`, is the
//! fastest storage whose picks are the f32 pursuit's (f32, int8) on the
//! MiniLM store pools at P = 200 (random pools without `--data`), medians,
//! against the per-call unscreened f32 pursuit.

use std::path::PathBuf;
use std::time::Instant;

use mempursuit::kernels::int8::Int8Kernel;
use mempursuit::spec::Value;
use mempursuit::{
    pursuit_using, CallData, Input, Pool, PursuitOptions, Screening, SelectSpec, Selection,
    Selector, Serial, Storage, Store, StoreCall,
};
use mempursuit_cli::dataset::Dataset;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, StandardNormal};

/// The variants timed on every pool, in table order.
const VARIANTS: [&str; 8] = [
    "per-call f32, unscreened",
    "per-call f32, screened (auto)",
    "store f32",
    "store f16",
    "store bf16",
    "store int8",
    "per-call select_spec f16 (rounds every call)",
    "per-call select_spec int8 (quantizes every call)",
];
const STORAGES: [Storage; 4] = [Storage::F32, Storage::F16, Storage::Bf16, Storage::Int8];

struct Args {
    data: Option<PathBuf>,
    queries: usize,
    rounds: usize,
    int8_kernel: Option<String>,
    build_rows: usize,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        data: None,
        queries: 24,
        rounds: 5,
        int8_kernel: None,
        build_rows: 100_000,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--data" => a.data = Some(PathBuf::from(value()?)),
            "--queries" => a.queries = value()?.parse().map_err(|e| format!("{e}"))?,
            "--rounds" => a.rounds = value()?.parse().map_err(|e| format!("{e}"))?,
            "--int8-kernel" => a.int8_kernel = Some(value()?),
            "--build-rows" => a.build_rows = value()?.parse().map_err(|e| format!("{e}"))?,
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(a)
}

/// n random unit vectors of dimension d, row-major.
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

/// The isometry of `mempursuit bench --tile t` (seed 1): each d-vector's
/// coordinates repeated t times with random signs, scaled by 1/√t,
/// permuted.
struct Tile {
    d: usize,
    t: usize,
    signs: Vec<f32>,
    perm: Vec<usize>,
}

impl Tile {
    fn new(d: usize, t: usize, seed: u64) -> Tile {
        let mut rng = StdRng::seed_from_u64(seed ^ 0x7469_6c65);
        let dt = d * t;
        let signs = (0..dt)
            .map(|_| if rng.random::<bool>() { 1.0 } else { -1.0 })
            .collect();
        let mut perm: Vec<usize> = (0..dt).collect();
        perm.shuffle(&mut rng);
        Tile { d, t, signs, perm }
    }

    fn lift(&self, v: &[f32]) -> Vec<f32> {
        let (d, dt) = (self.d, self.d * self.t);
        let scale = 1.0 / (self.t as f64).sqrt();
        let mut out = vec![0.0f32; v.len() * self.t];
        for (row, chunk) in v.chunks_exact(d).zip(out.chunks_exact_mut(dt)) {
            for (k, &dst) in self.perm.iter().enumerate() {
                chunk[dst] = (row[k % d] as f64 * scale) as f32 * self.signs[k];
            }
        }
        out
    }
}

/// A set of pools on one store: the store's f32 rows (N × d), and per
/// query its embedding and its candidates' store ids (ranked, P_max).
struct PoolSet {
    name: String,
    d: usize,
    rows: Vec<f32>,
    queries: Vec<(Vec<f32>, Vec<usize>)>,
}

fn hotpot(
    dir: &std::path::Path,
    name: &str,
    n_queries: usize,
    p_max: usize,
) -> Result<PoolSet, String> {
    let data = Dataset::load_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let store = &data.memory_embeddings;
    let d = data.dim();
    let n = store.rows;
    let norms: Vec<f64> = (0..n)
        .map(|r| {
            let row = &store.data[r * d..(r + 1) * d];
            row.iter()
                .map(|&a| (a as f64) * (a as f64))
                .sum::<f64>()
                .sqrt()
        })
        .collect();
    // Every k-th query, so the pools spread over the data set.
    let step = (data.queries.len() / n_queries.max(1)).max(1);
    let tile = Tile::new(d, 4, 1);
    let mut queries = Vec::new();
    for i in (0..data.queries.len()).step_by(step).take(n_queries) {
        let q = data.query_embedding(i);
        let mut order: Vec<(f64, usize)> = (0..n)
            .map(|r| {
                let row = &store.data[r * d..(r + 1) * d];
                let dot: f64 = row.iter().zip(q).map(|(a, b)| (a * b) as f64).sum();
                (dot / norms[r].max(1e-30), r)
            })
            .collect();
        order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let ids = order.iter().take(p_max).map(|&(_, r)| r).collect();
        queries.push((tile.lift(q), ids));
    }
    Ok(PoolSet {
        name: format!(
            "{name} store pools (N = {n}, d = {d} tiled 4× to {})",
            4 * d
        ),
        d: 4 * d,
        rows: tile.lift(&store.data),
        queries,
    })
}

fn random(n_queries: usize, p_max: usize) -> PoolSet {
    let (n, d) = (4000, 1536);
    let mut rng = StdRng::seed_from_u64(29);
    let rows = random_unit(n, d, &mut rng);
    let mut all: Vec<usize> = (0..n).collect();
    let queries = (0..n_queries)
        .map(|_| {
            let q = random_unit(1, d, &mut rng);
            all.shuffle(&mut rng);
            (q, all[..p_max].to_vec())
        })
        .collect();
    PoolSet {
        name: format!("random pools (a store of {n} random unit vectors, d = {d})"),
        d,
        rows,
        queries,
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Times every variant on `set` at (P, K); returns the medians (µs) in
/// VARIANTS order and prints the table rows.
fn time_set(set: &PoolSet, stores: &[Store], p: usize, k: usize, rounds: usize) -> Vec<f64> {
    let d = set.d;
    // The caller's contiguous pools (per-call mode), built outside the
    // timing, one copy per per-call variant: as every store variant reads
    // its own rows, every variant's first pass over a query's rows in a
    // round is cold (no variant warms the cache for another).
    let copy = || -> Vec<Vec<f32>> {
        set.queries
            .iter()
            .map(|(_, ids)| {
                ids[..p]
                    .iter()
                    .flat_map(|&i| set.rows[i * d..(i + 1) * d].iter().copied())
                    .collect()
            })
            .collect()
    };
    let pools = [copy(), copy(), copy(), copy()];
    let options = PursuitOptions::PAPER;
    let spec = SelectSpec::paper();
    let mut selector = Selector::new();
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); VARIANTS.len()];
    let (mut mismatches, mut reduced_differ) = (0usize, [0usize; 2]);
    for round in 0..=rounds {
        let mut order: Vec<usize> = (0..VARIANTS.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for (qi, (query, ids)) in set.queries.iter().enumerate() {
            let ids = &ids[..p];
            let mut picks: Vec<Vec<usize>> = vec![Vec::new(); VARIANTS.len()];
            for &v in &order {
                let t0 = Instant::now();
                let sel = match v {
                    0 | 1 => {
                        let screening = if v == 0 {
                            Screening::Off
                        } else {
                            Screening::Auto
                        };
                        let mut ws = selector.workspace(p, k.min(p));
                        let input = Input::new(query, &pools[v][qi]);
                        pursuit_using(&input, k, &options, screening, &mut ws, &mut Serial)
                            .map(Selection::from)
                            .map_err(|e| e.to_string())
                    }
                    6 | 7 => {
                        let storage = if v == 6 { "f16" } else { "int8" };
                        let spec = spec.with("storage", Value::Text(storage)).unwrap();
                        let data = CallData::new(query, Pool::F32(&pools[v - 4][qi]));
                        selector
                            .select_spec(&spec, data, k)
                            .map_err(|e| e.to_string())
                    }
                    s => stores[s - 2]
                        .select(&mut selector, &spec, StoreCall::new(query, ids), k)
                        .map_err(|e| e.to_string()),
                };
                let dt = t0.elapsed().as_secs_f64() * 1e6;
                let sel = sel.unwrap_or_else(|e| panic!("{}: {e}", VARIANTS[v]));
                picks[v] = sel.picks;
                if round > 0 {
                    times[v].push(dt);
                }
            }
            if round == 0 {
                // Exact variants make the unscreened f32 pursuit's picks.
                for v in [1, 2, 5, 7] {
                    mismatches += usize::from(picks[v] != picks[0]);
                }
                // The store's f16 picks are select_spec's f16 picks.
                mismatches += usize::from(picks[6] != picks[3]);
                for (n, v) in [3, 4].into_iter().enumerate() {
                    reduced_differ[n] += usize::from(picks[v] != picks[0]);
                }
            }
        }
    }
    // The gather alone: the f32 rows of each query's ids copied into a
    // reused buffer (what a store call would add to the per-call pursuit
    // if it copied its rows; it reads them in place by id instead),
    // cold as in the rounds above (the same rows of another copy).
    let rows_copy = set.rows.clone();
    let mut buf: Vec<f32> = Vec::new();
    let mut gathers = Vec::new();
    for _ in 0..rounds {
        for (_, ids) in &set.queries {
            let t0 = Instant::now();
            buf.clear();
            for &i in &ids[..p] {
                buf.extend_from_slice(&rows_copy[i * d..(i + 1) * d]);
            }
            gathers.push(t0.elapsed().as_secs_f64() * 1e6);
            std::hint::black_box(&buf);
        }
    }
    let gather_median = median(&mut gathers);
    assert_eq!(
        mismatches, 0,
        "an exact variant's picks differ from the f32 pursuit's"
    );
    let medians: Vec<f64> = times.iter_mut().map(|t| median(t)).collect();
    for (v, name) in VARIANTS.iter().enumerate() {
        let min = times[v].iter().copied().fold(f64::INFINITY, f64::min);
        println!(
            "| {} | {p} | {k} | {name} | {:.1} | {:.1} | {:.3} |",
            set.name.split(" (").next().unwrap_or(""),
            medians[v],
            min,
            medians[v] / medians[0]
        );
    }
    println!(
        "| {} | {p} | {k} | (a gather of the f32 rows alone, which a store call does not make) | {gather_median:.1} | | {:.3} |",
        set.name.split(" (").next().unwrap_or(""),
        gather_median / medians[0]
    );
    println!(
        "<!-- {}: P = {p}, K = {k}: f16 picks differ from f32 in {} / {} pools, bf16 in {} -->",
        set.name,
        reduced_differ[0],
        set.queries.len(),
        reduced_differ[1]
    );
    medians
}

/// `Store::select_batch` of all the set's queries on 1 and 2 threads
/// (f32 store, K = 20), rounds alternating; prints the time per query and
/// the speedup of 2 threads (medians over the rounds).
fn batch_threads(set: &PoolSet, store: &Store, rounds: usize) {
    let spec = SelectSpec::paper();
    for p in [200, 1000] {
        let calls: Vec<StoreCall<'_>> = set
            .queries
            .iter()
            .map(|(q, ids)| StoreCall::new(q, &ids[..p]))
            .collect();
        let mut times = [Vec::new(), Vec::new()];
        for round in 0..=rounds {
            for t in if round % 2 == 0 { [1, 2] } else { [2, 1] } {
                let t0 = Instant::now();
                let (out, _) = store.select_batch_report(&spec, &calls, 20, t);
                let dt = t0.elapsed().as_secs_f64() * 1e6 / calls.len() as f64;
                assert!(out.iter().all(Result::is_ok));
                if round > 0 {
                    times[t - 1].push(dt);
                }
            }
        }
        let (one, two) = (median(&mut times[0]), median(&mut times[1]));
        let (_, report) = store.select_batch_report(&spec, &calls, 20, 2);
        println!(
            "<!-- store f32 select_batch, P = {p}, K = 20, {} calls: 1 thread {one:.1} µs/query, 2 threads {two:.1} µs/query ({}), speedup {:.2} -->",
            calls.len(),
            report.plan,
            one / two
        );
    }
}

fn main() -> Result<(), String> {
    let a = args()?;
    if let Some(name) = &a.int8_kernel {
        let kernel = Int8Kernel::from_name(name).ok_or(format!("no int8 kernel {name}"))?;
        Int8Kernel::force(Some(kernel)).map_err(|e| e.to_string())?;
    }
    println!(
        "int8 kernel: {}; queries per pool set: {}; timed rounds: {} (one warm-up)",
        Int8Kernel::active().name(),
        a.queries,
        a.rounds
    );
    // Building a store of N × 384 random unit rows per storage.
    let mut rng = StdRng::seed_from_u64(384);
    let big = random_unit(a.build_rows, 384, &mut rng);
    for storage in STORAGES {
        let t0 = Instant::now();
        let store = Store::new(&big, 384, storage).map_err(|e| e.to_string())?;
        println!(
            "build {} × 384 {storage}: {:.3} s ({} MB held)",
            a.build_rows,
            t0.elapsed().as_secs_f64(),
            store.bytes() / 1_000_000
        );
    }
    drop(big);
    println!();
    println!("| pools | P | K | mode | median µs | min µs | / per-call f32 unscreened |");
    println!("|---|---|---|---|---|---|---|");
    type Build = Box<dyn Fn() -> Result<PoolSet, String>>;
    let mut sets: Vec<(&str, Build)> = Vec::new();
    if let Some(dir) = &a.data {
        for (name, sub) in [
            ("MiniLM", "hotpotqa-distractor"),
            ("E5", "hotpotqa-distractor-e5"),
        ] {
            let path = dir.join(sub);
            if path.exists() {
                let q = a.queries;
                sets.push((name, Box::new(move || hotpot(&path, name, q, 1000))));
            }
        }
    }
    let q = a.queries;
    sets.push(("random", Box::new(move || Ok(random(q, 1000)))));
    let mut last = None;
    for (name, build) in &sets {
        let set = build()?;
        let stores: Vec<Store> = STORAGES
            .iter()
            .map(|&s| Store::new(&set.rows, set.d, s).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?;
        let mut at200 = Vec::new();
        for p in [200, 1000] {
            for k in [20, 50] {
                let m = time_set(&set, &stores, p, k, a.rounds);
                if p == 200 {
                    // Best exact storage (f32 or int8) against the per-call f32.
                    at200.push(m[2].min(m[5]) / m[0]);
                }
            }
        }
        if last.is_none() {
            batch_threads(&set, &stores[0], a.rounds);
        }
        println!(
            "<!-- {name}: store mode / per-call f32 at P = 200: K=20 {:.3}, K=50 {:.3} -->",
            at200[0], at200[1]
        );
        if last.is_none() {
            last = Some(at200);
        }
    }
    let last = last.expect("at least the random pools");
    println!(
        "store mode / per-call f32: K=20 {:.3}, K=50 {:.3}",
        last[0], last[1]
    );
    Ok(())
}
