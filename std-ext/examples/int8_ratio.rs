//! Time ratio of the certified int8 pursuit to the f32 pursuit in one
//! process, on seeded isotropic Gaussian unit vectors (the benchmark data),
//! and the candidates verified exactly per pick.
//!
//! ```text
//! cargo run --release -p mempursuit --example int8_ratio
//! ```
//!
//! Prints, per shape (P, K, d): the median time of each pursuit over
//! interleaved rounds, their ratio, whether the picks are identical, and the
//! verified candidates per pick (mean, max).

use std::time::Instant;

use mempursuit::{Input, Int8Candidates, Method, PursuitOptions, Selector};

/// xorshift64* → uniform (0, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        ((self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// A standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.next(), self.next());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }

    fn unit(&mut self, d: usize) -> Vec<f32> {
        let g: Vec<f64> = (0..d).map(|_| self.normal()).collect();
        let n = g.iter().map(|x| x * x).sum::<f64>().sqrt();
        g.iter().map(|x| (x / n) as f32).collect()
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let o = PursuitOptions::default();
    for &(p, k, d) in &[
        (200usize, 20usize, 1536usize),
        (200, 20, 384),
        (500, 20, 1536),
    ] {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (p * 31 + d) as u64);
        let q = rng.unit(d);
        let pool: Vec<f32> = (0..p).flat_map(|_| rng.unit(d)).collect();
        let codes = Int8Candidates::quantize(&pool, d).expect("valid pool");
        let input = Input::new(&q, &pool);
        let mut sel = Selector::with_capacity(p, k);
        let a = sel.select(&input, k, &Method::Pursuit(o)).unwrap();
        let b = sel.select_int8(&input, &codes, k, &o).unwrap();
        let same = a.picks == b.picks;
        let verified: Vec<u32> = b.steps.iter().map(|s| s.verified).collect();
        let mean = verified.iter().map(|&v| v as f64).sum::<f64>() / verified.len() as f64;
        let max = verified.iter().copied().max().unwrap_or(0);
        let reps = (4_000_000 / (p * d)).max(3);
        let (mut tf, mut ti) = (Vec::new(), Vec::new());
        for _ in 0..15 {
            let t0 = Instant::now();
            for _ in 0..reps {
                let mut ws = sel.workspace(p, k);
                let s = mempursuit::pursuit(&input, k, &o, &mut ws).unwrap();
                std::hint::black_box(s.picks());
            }
            tf.push(t0.elapsed().as_secs_f64() / reps as f64);
            let view = codes.view();
            let t0 = Instant::now();
            for _ in 0..reps {
                let mut ws = sel.workspace(p, k);
                let s = mempursuit::pursuit_int8(&input, &view, k, &o, &mut ws).unwrap();
                std::hint::black_box(s.picks());
            }
            ti.push(t0.elapsed().as_secs_f64() / reps as f64);
        }
        let (f, i) = (median(tf), median(ti));
        println!(
            "P={p} K={k} d={d}: f32 {:.1} us, int8 {:.1} us, ratio {:.2}; picks identical: {same}; verified per pick: mean {mean:.2}, max {max}",
            f * 1e6,
            i * 1e6,
            i / f
        );
    }
}
