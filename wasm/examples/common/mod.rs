//! Seeded random unit vectors that `wasm/synthetic.mjs` reproduces bit for
//! bit in JavaScript (integer PRNG, exact f64 sums, one f32 rounding), so
//! native and wasm runs see identical inputs.

/// mulberry32: a 32-bit generator that JavaScript computes exactly with
/// `Math.imul` and `>>>`.
pub struct Mulberry32(u32);

impl Mulberry32 {
    pub fn new(seed: u32) -> Self {
        Mulberry32(seed)
    }

    pub fn next_u32(&mut self) -> u32 {
        self.0 = self.0.wrapping_add(0x6D2B_79F5);
        let mut t = self.0;
        t = (t ^ (t >> 15)).wrapping_mul(1 | t);
        t = t.wrapping_add((t ^ (t >> 7)).wrapping_mul(61 | t)) ^ t;
        t ^ (t >> 14)
    }

    /// Uniform in [0, 1) with 24 random bits (exact in f32 and f64).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u32() >> 8) as f64 / 16_777_216.0
    }

    /// Irwin–Hall approximation of N(0, 1/3): u1 + u2 + u3 + u4 − 2 (every
    /// step exact in f64, so JavaScript gets the same value).
    pub fn centered(&mut self) -> f64 {
        let s = self.uniform() + self.uniform() + self.uniform() + self.uniform();
        s - 2.0
    }

    /// Appends one random unit vector of dimension `d` (normalized in f64,
    /// then rounded to f32).
    pub fn unit_vector(&mut self, d: usize, out: &mut Vec<f32>) {
        let v: Vec<f64> = (0..d).map(|_| self.centered()).collect();
        let mut ss = 0.0f64;
        for x in &v {
            ss += x * x;
        }
        let norm = ss.sqrt();
        out.extend(v.iter().map(|x| (x / norm) as f32));
    }
}

/// Case `c` of a synthetic suite: a query (d) and a pool (P × d) of random
/// unit vectors from seed `base_seed + c`.
pub fn case(base_seed: u32, c: u32, p: usize, d: usize) -> (Vec<f32>, Vec<f32>) {
    let mut rng = Mulberry32::new(base_seed.wrapping_add(c));
    let mut query = Vec::with_capacity(d);
    rng.unit_vector(d, &mut query);
    let mut pool = Vec::with_capacity(p * d);
    for _ in 0..p {
        rng.unit_vector(d, &mut pool);
    }
    (query, pool)
}
