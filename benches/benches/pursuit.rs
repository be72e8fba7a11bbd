//! Criterion benchmarks of one query: MemPursuit against its roofline and a
//! naive baseline, the paper's P × K × d grid, adaptive stopping, centroid
//! pursuit, top-K, MMR, f16 / bf16 storage, the certified int8 pursuit
//! (and one f32 and one int8 pass) and threads.
//!
//! ```text
//! cargo bench -p mempursuit-benches --bench pursuit                 # quick subset (~3 min)
//! MEMPURSUIT_BENCH_GRID=full cargo bench -p mempursuit-benches --bench pursuit
//! cargo bench -p mempursuit-benches --bench pursuit -- 'grid/(pursuit|roofline)/'
//! ```
//!
//! After the run a table of medians and ratios (pursuit / roofline, naive /
//! pursuit, f16 / f32, int8 / f32, 2 threads / 1 thread, ...) is printed, computed from
//! the estimates this very run wrote (a benchmark skipped by a filter shows
//! as "-"). Inputs are seeded random unit vectors (`unit_vectors`).
//!
//! With `--features openblas,faer` (either or both; OpenBLAS needs the
//! system library, e.g. Debian's `libopenblas-dev`) each case also times
//! K + 1 passes with OpenBLAS's SGEMV and with faer's matrix–vector product
//! over the same matrix (`openblas`, `faer`), and the summary gives
//! pursuit / the faster of them:
//!
//! ```text
//! cargo bench -p mempursuit-benches --features openblas,faer --bench pursuit -- 'grid/(pursuit|roofline|openblas|faer)/'
//! ```

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use criterion::{BenchmarkId, Criterion};
use mempursuit::half::{bf16, f16};
use mempursuit::kernels::int8::dots_i8;
use mempursuit::kernels::{row_dots, Isa};
use mempursuit::parallel::{select_batch, SplitPool};
use mempursuit::spec::CENTROID_GAMMA;
use mempursuit::{
    mmr, pursuit, pursuit_int8_using, top_k, Input, InputPolicy, Int8Candidates, Int8Passes,
    Method, MmrOptions, PursuitOptions, Selector, Serial, Stopping,
};
use mempursuit_benches::{external, grid_from_env, naive, roofline, Case, Problem};

fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("criterion")
}

fn configure(c: &mut Criterion) -> criterion::BenchmarkGroup<'_, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group("grid");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1500));
    g
}

fn bench_case(c: &mut Criterion, case: Case, naive_too: bool) {
    let Case {
        pool: p,
        budget: k,
        dim: d,
    } = case;
    let prob = Problem::random(p, d, 42 + (p * 31 + d) as u64);
    let input = Input::new(&prob.query, &prob.candidates);
    let h16: Vec<f16> = prob.candidates.iter().map(|&x| f16::from_f32(x)).collect();
    let hb16: Vec<bf16> = prob.candidates.iter().map(|&x| bf16::from_f32(x)).collect();
    let in16 = Input::with_storage(&prob.query, &h16);
    let inb16 = Input::with_storage(&prob.query, &hb16);
    let paper = PursuitOptions::default();
    let adaptive = PursuitOptions {
        stopping: Stopping::PAPER_ADAPTIVE,
        ..paper
    };
    // Centroid pursuit and MMR with the specification's defaults.
    let centroid = PursuitOptions::centroid(CENTROID_GAMMA);
    let mmr_options = MmrOptions::PAPER;
    let policy = InputPolicy::default();
    let mut selector = Selector::with_capacity(p, k);
    let mut out = vec![0.0f32; p];
    let id = |f: &str| BenchmarkId::new(f, case.to_string());

    let mut g = configure(c);
    g.bench_function(id("pursuit"), |b| {
        let mut ws = selector.workspace(p, k);
        b.iter(|| pursuit(black_box(&input), k, &paper, &mut ws).map(|s| s.len()))
    });
    g.bench_function(id("roofline"), |b| {
        b.iter(|| roofline(black_box(&prob.candidates), d, k, &mut out))
    });
    g.bench_function(id("roofline_unfused"), |b| {
        b.iter(|| {
            for j in 0..=k {
                let r = j % p;
                let v = &prob.candidates[r * d..(r + 1) * d];
                row_dots(Isa::Avx2, black_box(&prob.candidates), d, v, &mut out);
            }
            out[0]
        })
    });
    g.bench_function(id("roofline_portable"), |b| {
        b.iter(|| {
            for j in 0..=k {
                let r = j % p;
                let v = &prob.candidates[r * d..(r + 1) * d];
                row_dots(Isa::Portable, black_box(&prob.candidates), d, v, &mut out);
            }
            out[0]
        })
    });
    for (name, passes) in external::available() {
        g.bench_function(id(name), |b| {
            b.iter(|| passes(black_box(&prob.candidates), d, k, &mut out))
        });
    }
    // The certified int8 pursuit (same picks as `pursuit`, by proof) and one
    // pass of each storage: the int8 pass reads a quarter of the bytes.
    let codes = Int8Candidates::quantize(&prob.candidates, d).expect("unit rows quantize");
    g.bench_function(id("pursuit_int8"), |b| {
        let mut ws = selector.workspace(p, k);
        b.iter(|| {
            // The int8 passes themselves (`Int8Passes::Auto` would run the
            // f32 pursuit where they do not pay).
            pursuit_int8_using(
                black_box(&input),
                &codes.view(),
                k,
                &paper,
                Int8Passes::Int8,
                &mut ws,
                &mut Serial,
            )
            .map(|s| s.len())
        })
    });
    g.bench_function(id("pass_f32"), |b| {
        let isa = Isa::detect();
        b.iter(|| {
            row_dots(
                isa,
                black_box(&prob.candidates),
                d,
                &prob.candidates[..d],
                &mut out,
            );
            out[0]
        })
    });
    g.bench_function(id("pass_int8"), |b| {
        let mut dots = vec![0i32; p];
        let c = codes.view().codes();
        b.iter(|| {
            dots_i8(black_box(c), d, &c[..d], &mut dots);
            dots[0]
        })
    });
    g.bench_function(id("centroid"), |b| {
        let mut ws = selector.workspace(p, k);
        b.iter(|| pursuit(black_box(&input), k, &centroid, &mut ws).map(|s| s.len()))
    });
    g.bench_function(id("adaptive"), |b| {
        let mut ws = selector.workspace(p, k);
        b.iter(|| pursuit(black_box(&input), k, &adaptive, &mut ws).map(|s| s.len()))
    });
    g.bench_function(id("topk"), |b| {
        let mut ws = selector.workspace(p, k);
        b.iter(|| top_k(black_box(&input), k, &policy, &mut ws).map(|s| s.len()))
    });
    g.bench_function(id("mmr"), |b| {
        let mut ws = selector.workspace(p, k);
        b.iter(|| mmr(black_box(&input), k, &mmr_options, &mut ws).map(|s| s.len()))
    });
    g.bench_function(id("pursuit_f16"), |b| {
        let mut ws = selector.workspace(p, k);
        b.iter(|| pursuit(black_box(&in16), k, &paper, &mut ws).map(|s| s.len()))
    });
    g.bench_function(id("pursuit_bf16"), |b| {
        let mut ws = selector.workspace(p, k);
        b.iter(|| pursuit(black_box(&inb16), k, &paper, &mut ws).map(|s| s.len()))
    });
    if let Ok(mut split) = SplitPool::new(2) {
        g.bench_function(id("split2"), |b| {
            let mut ws = selector.workspace(p, k);
            b.iter(|| {
                split
                    .pursuit(black_box(&input), k, &paper, &mut ws)
                    .map(|s| s.len())
            })
        });
    }
    if naive_too {
        g.bench_function(id("naive"), |b| {
            b.iter(|| {
                naive::pursuit(black_box(&prob.query), &prob.candidates, k, 1e-10)
                    .0
                    .len()
            })
        });
    }
    g.finish();
}

/// Many independent queries: per-query time of a batch of 32 on 1 and 2
/// threads (one workspace per thread).
fn bench_batch(c: &mut Criterion) {
    let (p, k, d, n) = (200, 20, 1536, 32);
    let probs: Vec<Problem> = (0..n)
        .map(|i| Problem::random(p, d, 1000 + i as u64))
        .collect();
    let inputs: Vec<Input<'_>> = probs
        .iter()
        .map(|q| Input::new(&q.query, &q.candidates))
        .collect();
    let method = Method::Pursuit(PursuitOptions::default());
    let mut g = c.benchmark_group("batch32");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for threads in [1, 2] {
        g.bench_function(
            BenchmarkId::new("threads", format!("{threads}_P{p}_K{k}_d{d}")),
            |b| b.iter(|| select_batch(black_box(&inputs), k, &method, threads).len()),
        );
    }
    g.finish();
}

/// Median (ns) of a benchmark of this run, if it ran.
fn median(dir: &Path, group: &str, function: &str, param: &str, since: SystemTime) -> Option<f64> {
    let path = dir
        .join(group)
        .join(function)
        .join(param)
        .join("new/estimates.json");
    let modified = std::fs::metadata(&path).ok()?.modified().ok()?;
    if modified < since {
        return None;
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    json["median"]["point_estimate"].as_f64()
}

fn summary(dir: &Path, cases: &[Case], since: SystemTime) {
    let us = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{:.1}", x / 1e3));
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => format!("{:.2}", a / b),
        _ => "-".into(),
    };
    println!("\nSummary of this run (criterion medians, µs per query; ratios of medians)");
    println!(
        "| P | K | d | pursuit | roofline | pursuit/roofline | OpenBLAS | faer | pursuit/best external | roofline unfused/fused | roofline portable/avx2 | naive | naive/pursuit | centroid | adaptive | top-K | MMR | f16/f32 | bf16/f32 | 2 threads/1 | int8/f32 pursuit | int8/f32 pass |"
    );
    println!("|{}", "---|".repeat(22));
    for case in cases {
        let param = case.to_string();
        let m = |f: &str| median(dir, "grid", f, &param, since);
        let (pur, roof) = (m("pursuit"), m("roofline"));
        let (blas, faer) = (m("openblas"), m("faer"));
        let best = match (blas, faer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            case.pool,
            case.budget,
            case.dim,
            us(pur),
            us(roof),
            ratio(pur, roof),
            us(blas),
            us(faer),
            ratio(pur, best),
            ratio(m("roofline_unfused"), roof),
            ratio(m("roofline_portable"), roof),
            us(m("naive")),
            ratio(m("naive"), pur),
            us(m("centroid")),
            us(m("adaptive")),
            us(m("topk")),
            us(m("mmr")),
            ratio(m("pursuit_f16"), pur),
            ratio(m("pursuit_bf16"), pur),
            ratio(m("split2"), pur),
            ratio(m("pursuit_int8"), pur),
            ratio(m("pass_int8"), m("pass_f32")),
        );
    }
    let b1 = median(dir, "batch32", "threads", "1_P200_K20_d1536", since);
    let b2 = median(dir, "batch32", "threads", "2_P200_K20_d1536", since);
    println!(
        "\nbatch of 32 queries (P=200, K=20, d=1536): 1 thread {} µs/query, 2 threads {} µs/query, speedup {}",
        us(b1.map(|x| x / 32.0)),
        us(b2.map(|x| x / 32.0)),
        ratio(b1, b2)
    );
    println!("kernel ISA: {}", Isa::detect().name());
}

fn main() {
    let since = SystemTime::now() - Duration::from_secs(1);
    let dir = criterion_dir();
    let mut c = Criterion::default()
        .output_directory(&dir)
        .configure_from_args();
    let cases = grid_from_env();
    for &case in &cases {
        // The naive baseline costs P²d/2 scalar FMAs: keep it to P ≤ 300.
        bench_case(&mut c, case, case.pool <= 300);
    }
    bench_batch(&mut c);
    c.final_summary();
    summary(&dir, &cases, since);
}
