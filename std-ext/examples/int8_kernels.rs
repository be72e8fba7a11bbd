//! Time of one int8 pass on every int8 kernel this CPU runs
//! (`Int8Kernel::force`), against one f32 pass over the same rows, in one
//! process: `pools` pools of P × d codes cycled, so that with several pools
//! the rows come from L3 as in a batch of queries.
//!
//! ```text
//! cargo run --release -p mempursuit --example int8_kernels -- 200 1536 8
//! ```
//!
//! Arguments: P, d, pools (defaults 200, 1536, 8). Prints, per kernel, the
//! least µs per pass over 40 rounds of 20 passes per pool (the kernels
//! interleaved round by round) and its ratio to the f32 pass. The values of
//! every kernel are checked equal (they are exact integers).

use std::time::Instant;

use mempursuit::kernels::int8::{dots_i8, Int8Kernel};
use mempursuit::kernels::{row_dots, Isa};

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .map(|a| a.parse::<usize>().expect("arguments: P d pools (integers)"));
    let p = args.next().unwrap_or(200);
    let d = args.next().unwrap_or(1536);
    let pools = args.next().unwrap_or(8).max(1);
    // Codes in −127..=127 from a 64-bit LCG; the f32 rows are codes / 127.
    let mut s: u64 = 1;
    let codes: Vec<i8> = (0..pools * p * d)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (((s >> 33) % 255) as i32 - 127) as i8
        })
        .collect();
    let rows: Vec<f32> = codes.iter().map(|&c| c as f32 / 127.0).collect();
    let kernels: Vec<Int8Kernel> = [
        Int8Kernel::Avx512Vnni,
        Int8Kernel::AvxVnni,
        Int8Kernel::Avx2,
        Int8Kernel::Simd128,
        Int8Kernel::Portable,
    ]
    .into_iter()
    .filter(|k| k.is_available())
    .collect();
    let passes = 20.min(p);
    let mut best = vec![f64::MAX; kernels.len() + 1];
    let mut out = vec![0i32; p];
    let mut first: Vec<i32> = Vec::new();
    let mut outf = vec![0.0f32; p];
    let mut sink = 0.0f32;
    for _ in 0..40 {
        for (slot, &k) in kernels.iter().enumerate() {
            Int8Kernel::force(Some(k)).expect("an available kernel");
            let t = Instant::now();
            for pool in 0..pools {
                let m = &codes[pool * p * d..(pool + 1) * p * d];
                for j in 0..passes {
                    dots_i8(m, d, &m[j * d..(j + 1) * d], &mut out);
                }
            }
            best[slot] = best[slot].min(t.elapsed().as_secs_f64() / (pools * passes) as f64);
            if first.is_empty() {
                first = out.clone();
            }
            assert_eq!(first, out, "kernel {} differs", k.name());
        }
        let t = Instant::now();
        for pool in 0..pools {
            let m = &rows[pool * p * d..(pool + 1) * p * d];
            for j in 0..passes {
                row_dots(Isa::detect(), m, d, &m[j * d..(j + 1) * d], &mut outf);
                sink += outf[j];
            }
        }
        let n = kernels.len();
        best[n] = best[n].min(t.elapsed().as_secs_f64() / (pools * passes) as f64);
    }
    Int8Kernel::force(None).expect("detection");
    std::hint::black_box(sink);
    let f32_pass = best[kernels.len()];
    println!(
        "P = {p}, d = {d}, {pools} pools; f32 pass ({}): {:.2} µs",
        Isa::detect().name(),
        f32_pass * 1e6
    );
    for (k, b) in kernels.iter().zip(&best) {
        println!(
            "int8 pass ({}): {:.2} µs, {:.3} of the f32 pass",
            k.name(),
            b * 1e6,
            b / f32_pass
        );
    }
}
