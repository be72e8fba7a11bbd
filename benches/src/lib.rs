//! Benchmark support: seeded random unit vectors, the benchmark grid, the
//! roofline (K + 1 plain matrix–vector passes with the best kernel) and a
//! naive baseline (full P × P Gram, dense QP re-solved from scratch at every
//! step, scalar code), shared by the criterion benches and the tests.

#![cfg_attr(not(feature = "openblas"), forbid(unsafe_code))]
#![cfg_attr(feature = "openblas", deny(unsafe_code))]

pub mod external;
pub mod naive;

use mempursuit::kernels::{row_dots, Isa};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};

/// `n` random unit vectors of dimension `d` (isotropic Gaussian, normalized
/// in f64), row-major, from a seeded RNG: the same seed gives the same
/// matrix on every machine.
pub fn unit_vectors(n: usize, d: usize, seed: u64) -> Vec<f32> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(n * d);
    let mut row = vec![0.0f64; d];
    for _ in 0..n {
        for x in row.iter_mut() {
            *x = StandardNormal.sample(&mut rng);
        }
        let norm = row.iter().map(|x| x * x).sum::<f64>().sqrt();
        out.extend(row.iter().map(|x| (x / norm) as f32));
    }
    out
}

/// One query and its pool: P × d unit rows and a unit query.
#[derive(Debug, Clone)]
pub struct Problem {
    /// Pool size P.
    pub pool: usize,
    /// Dimension d.
    pub dim: usize,
    /// The query (d values).
    pub query: Vec<f32>,
    /// The pool, row-major P × d.
    pub candidates: Vec<f32>,
}

impl Problem {
    /// A random problem; `seed` fixes it.
    pub fn random(pool: usize, dim: usize, seed: u64) -> Problem {
        Problem {
            pool,
            dim,
            query: unit_vectors(1, dim, seed ^ 0x9e37_79b9_7f4a_7c15),
            candidates: unit_vectors(pool, dim, seed),
        }
    }
}

/// One point of the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    /// Pool size P.
    pub pool: usize,
    /// Budget K.
    pub budget: usize,
    /// Dimension d.
    pub dim: usize,
}

impl std::fmt::Display for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "P{}_K{}_d{}", self.pool, self.budget, self.dim)
    }
}

/// The paper's grid: P ∈ {100, 200, 300, 500} × K ∈ {10, 20, 50, 100} at
/// d ∈ {384, 1536} (32 cases).
pub fn full_grid() -> Vec<Case> {
    let mut out = Vec::new();
    for dim in [384, 1536] {
        for pool in [100, 200, 300, 500] {
            for budget in [10, 20, 50, 100] {
                out.push(Case { pool, budget, dim });
            }
        }
    }
    out
}

/// The quick default subset: the targets (P = 200, K = 20 at
/// d = 1536 and 384; P = 100, K = 10, d = 384) and the grid's corners at
/// d = 1536.
pub fn quick_grid() -> Vec<Case> {
    vec![
        Case {
            pool: 100,
            budget: 10,
            dim: 384,
        },
        Case {
            pool: 200,
            budget: 20,
            dim: 384,
        },
        Case {
            pool: 200,
            budget: 20,
            dim: 1536,
        },
        Case {
            pool: 100,
            budget: 10,
            dim: 1536,
        },
        Case {
            pool: 500,
            budget: 100,
            dim: 1536,
        },
    ]
}

/// The grid to run: [`full_grid`] when the environment variable
/// `MEMPURSUIT_BENCH_GRID` is `full`, else [`quick_grid`].
pub fn grid_from_env() -> Vec<Case> {
    match std::env::var("MEMPURSUIT_BENCH_GRID").as_deref() {
        Ok("full") => full_grid(),
        _ => quick_grid(),
    }
}

/// The roofline of a budget-K query: K + 1 plain matrix–vector passes over
/// the P × d matrix (`out.len()` = P) with the best kernel of this CPU, the
/// vectors being rows 0..=K (mod P) of the matrix itself, as in the
/// pursuit. Returns the sum of the outputs (so the work cannot be elided).
pub fn roofline(candidates: &[f32], dim: usize, budget: usize, out: &mut [f32]) -> f32 {
    let isa = Isa::detect();
    let p = out.len();
    if p == 0 {
        return 0.0;
    }
    let mut sink = 0.0;
    for j in 0..=budget {
        let r = j % p;
        row_dots(
            isa,
            candidates,
            dim,
            &candidates[r * dim..(r + 1) * dim],
            out,
        );
        sink += out[r];
    }
    sink
}
