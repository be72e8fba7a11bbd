//! The naive baseline: how the paper's reference implementation is
//! organised (Section 3.5: O(P²d + KP² + K⁴)), in plain scalar Rust.
//!
//! * the full P × P Gram matrix, computed up front with scalar f32 dot
//!   products (each sum in index order; symmetric, so P(P+1)/2 of them);
//! * at every step the simplex QP (Eq. 6) on the selected set is re-solved
//!   from scratch (cold start at the best single memory) by a primal
//!   active-set method whose equality-constrained subproblems are dense
//!   (|F| + 1)² KKT systems solved by Gaussian elimination in f64;
//! * the scores U_i = b_i − Σ_j G_ij α_j (Eq. 9) recomputed for every i
//!   from the full Gram.
//!
//! It selects the same memories as `mempursuit::pursuit` on generic inputs
//! (checked by this crate's tests); it exists to measure what the
//! incremental, streaming implementation saves.

/// Runs the naive pursuit: P × d unit `candidates` (row-major), unit
/// `query`, budget K, ridge λ. Returns the picks in entry order and the
/// final weights.
///
/// # Panics
/// If `candidates.len()` is not a multiple of `query.len()`.
pub fn pursuit(
    query: &[f32],
    candidates: &[f32],
    budget: usize,
    ridge: f64,
) -> (Vec<usize>, Vec<f64>) {
    let d = query.len();
    assert!(d > 0 && candidates.len().is_multiple_of(d), "shape");
    let p = candidates.len() / d;
    let row = |i: usize| &candidates[i * d..(i + 1) * d];
    let dot = |a: &[f32], b: &[f32]| -> f32 {
        let mut s = 0.0f32;
        for k in 0..a.len() {
            s += a[k] * b[k];
        }
        s
    };
    // Full Gram and query similarities.
    let mut gram = vec![0.0f32; p * p];
    for i in 0..p {
        for j in i..p {
            let g = dot(row(i), row(j));
            gram[i * p + j] = g;
            gram[j * p + i] = g;
        }
    }
    let b: Vec<f32> = (0..p).map(|i| dot(row(i), query)).collect();

    let k = budget.min(p);
    let mut selected: Vec<usize> = Vec::with_capacity(k);
    let mut alpha: Vec<f64> = Vec::new();
    let mut taken = vec![false; p];
    for _ in 0..k {
        // Scores from the full Gram (Eq. 9) and the pick (Eq. 5).
        let mut best: Option<(usize, f64)> = None;
        for i in 0..p {
            if taken[i] {
                continue;
            }
            let mut u = b[i] as f64;
            for (a, &j) in alpha.iter().zip(&selected) {
                u -= a * gram[i * p + j] as f64;
            }
            if best.is_none_or(|(_, bu)| u > bu) {
                best = Some((i, u));
            }
        }
        let Some((pick, _)) = best else { break };
        taken[pick] = true;
        selected.push(pick);
        // Re-solve the QP on the selected set from scratch (Eq. 6).
        let t = selected.len();
        let h: Vec<f64> = (0..t * t)
            .map(|x| {
                let (r, c) = (x / t, x % t);
                gram[selected[r] * p + selected[c]] as f64 + if r == c { ridge } else { 0.0 }
            })
            .collect();
        let c: Vec<f64> = selected.iter().map(|&i| b[i] as f64).collect();
        alpha = simplex_qp(&h, &c, t);
    }
    (selected, alpha)
}

/// min ½ aᵀHa − cᵀa on the simplex (H: t × t, row-major), cold-started at
/// the vertex with the largest c, primal active set with dense KKT solves.
pub fn simplex_qp(h: &[f64], c: &[f64], t: usize) -> Vec<f64> {
    let mut a = vec![0.0f64; t];
    let first = (0..t).fold(0, |m, i| if c[i] > c[m] { i } else { m });
    a[first] = 1.0;
    let mut free = vec![first];
    for _ in 0..(10 * t + 20) {
        // Equality-constrained solve on F: [H_FF 1; 1ᵀ 0] [x; ν'] = [c_F; 1].
        let n = free.len();
        let m = n + 1;
        let mut kkt = vec![0.0f64; m * (m + 1)];
        for (r, &i) in free.iter().enumerate() {
            for (s, &j) in free.iter().enumerate() {
                kkt[r * (m + 1) + s] = h[i * t + j];
            }
            kkt[r * (m + 1) + n] = 1.0;
            kkt[r * (m + 1) + m] = c[i];
            kkt[n * (m + 1) + r] = 1.0;
        }
        kkt[n * (m + 1) + m] = 1.0;
        let Some(sol) = gauss(&mut kkt, m) else { break };
        let trial = &sol[..n];
        // Ratio test toward the trial point.
        let mut block: Option<(usize, f64)> = None;
        for (r, &i) in free.iter().enumerate() {
            if trial[r] < 0.0 {
                let step = a[i] / (a[i] - trial[r]);
                if block.is_none_or(|(_, s)| step < s) {
                    block = Some((r, step));
                }
            }
        }
        if let Some((r_out, step)) = block {
            for (r, &i) in free.iter().enumerate() {
                a[i] += step * (trial[r] - a[i]);
            }
            a[free[r_out]] = 0.0;
            free.remove(r_out);
            continue;
        }
        for (r, &i) in free.iter().enumerate() {
            a[i] = trial[r];
        }
        // ν = common value of the gradient on F; add the most violating j.
        let grad = |j: usize| c[j] - (0..t).map(|l| h[j * t + l] * a[l]).sum::<f64>();
        let nu = free.iter().map(|&i| a[i] * grad(i)).sum::<f64>();
        let mut add: Option<(usize, f64)> = None;
        for j in 0..t {
            if free.contains(&j) {
                continue;
            }
            let v = grad(j) - nu;
            if v > 1e-12 * (1.0 + nu.abs()) && add.is_none_or(|(_, bv)| v > bv) {
                add = Some((j, v));
            }
        }
        match add {
            Some((j, _)) => free.push(j),
            None => break,
        }
    }
    let s: f64 = a.iter().map(|x| x.max(0.0)).sum();
    a.iter().map(|x| x.max(0.0) / s).collect()
}

/// Solves the m × m system in the augmented m × (m + 1) matrix by Gaussian
/// elimination with partial pivoting; `None` if singular.
fn gauss(a: &mut [f64], m: usize) -> Option<Vec<f64>> {
    let w = m + 1;
    for col in 0..m {
        let piv =
            (col..m).max_by(|&x, &y| a[x * w + col].abs().total_cmp(&a[y * w + col].abs()))?;
        if a[piv * w + col].abs() < 1e-300 {
            return None;
        }
        if piv != col {
            for k in 0..w {
                a.swap(piv * w + k, col * w + k);
            }
        }
        for r in col + 1..m {
            let f = a[r * w + col] / a[col * w + col];
            if f != 0.0 {
                for k in col..w {
                    a[r * w + k] -= f * a[col * w + k];
                }
            }
        }
    }
    let mut x = vec![0.0f64; m];
    for r in (0..m).rev() {
        let mut s = a[r * w + m];
        for k in r + 1..m {
            s -= a[r * w + k] * x[k];
        }
        x[r] = s / a[r * w + r];
    }
    Some(x)
}
