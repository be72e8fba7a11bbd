//! Seeded random inputs for the tests: unit vectors and pools with
//! structure (clusters of near-paraphrases around a few facts).

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use rand_distr::StandardNormal;

/// A deterministic generator from a seed.
pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// `v` scaled to unit norm in f64, stored as f32.
pub fn normalized(v: &[f64]) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    v.iter().map(|x| (x / n) as f32).collect()
}

/// A standard-normal vector of length d (f64).
pub fn gaussian(rng: &mut StdRng, d: usize) -> Vec<f64> {
    (0..d)
        .map(|_| rng.sample::<f64, _>(StandardNormal))
        .collect()
}

/// A uniformly random unit vector of length d (f32).
pub fn unit(rng: &mut StdRng, d: usize) -> Vec<f32> {
    normalized(&gaussian(rng, d))
}

/// A query and a pool (row-major P × d, unit rows) with structure: `facts`
/// random directions; each candidate is a noisy copy (noise scale `noise`)
/// of one fact, or with probability 1/4 a random distractor; the query is
/// the normalized sum of the facts plus noise. Seeded and deterministic.
pub fn clustered_pool(
    seed: u64,
    p: usize,
    d: usize,
    facts: usize,
    noise: f64,
) -> (Vec<f32>, Vec<f32>) {
    let mut r = rng(seed);
    let bases: Vec<Vec<f64>> = (0..facts.max(1)).map(|_| gaussian(&mut r, d)).collect();
    let mut pool = Vec::with_capacity(p * d);
    for _ in 0..p {
        let v: Vec<f64> = if r.random::<f64>() < 0.25 {
            gaussian(&mut r, d)
        } else {
            let f = r.random_range(0..bases.len());
            let e = gaussian(&mut r, d);
            bases[f]
                .iter()
                .zip(&e)
                .map(|(b, e)| b + noise * e)
                .collect()
        };
        pool.extend(normalized(&v));
    }
    let e = gaussian(&mut r, d);
    let q: Vec<f64> = (0..d)
        .map(|k| bases.iter().map(|b| b[k]).sum::<f64>() + 0.5 * e[k])
        .collect();
    (normalized(&q), pool)
}

/// A query and a pool of P independent uniformly random unit vectors.
pub fn uniform_pool(seed: u64, p: usize, d: usize) -> (Vec<f32>, Vec<f32>) {
    let mut r = rng(seed);
    let q = unit(&mut r, d);
    let pool = (0..p).flat_map(|_| unit(&mut r, d)).collect();
    (q, pool)
}

/// `n` unit rows (row-major, f32), row i a copy of `bases[i % bases.len()]`
/// plus `noise` times a fresh standard Gaussian vector, then normalized: a
/// pool of near-duplicates of a few base directions.
pub fn near_copies(rng: &mut StdRng, bases: &[Vec<f64>], n: usize, noise: f64) -> Vec<f32> {
    let d = bases[0].len();
    let mut pool = Vec::with_capacity(n * d);
    for i in 0..n {
        let e = gaussian(rng, d);
        let v: Vec<f64> = bases[i % bases.len()]
            .iter()
            .zip(&e)
            .map(|(b, e)| b + noise * e)
            .collect();
        pool.extend(normalized(&v));
    }
    pool
}
