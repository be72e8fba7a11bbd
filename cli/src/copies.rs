//! Near-copies injected into evaluation pools: the robustness protocol of
//! `mempursuit eval --copy-cosine`.
//!
//! Memory stores repeat themselves, and a retriever scores the repeats
//! alike. To measure what that costs a selector, each pool is changed as
//! follows ([`inject_copies`]):
//!
//! 1. rank the pool by its retriever order: the query's first-stage scores
//!    (`relevance` in the spec) when it has them, otherwise the cosine to
//!    the query; ties go to the earlier pool position;
//! 2. take the top m members of that order ([`CopyOptions::top`]) and make
//!    c near-copies of each ([`CopyOptions::per_member`]): copy = u + ν·n,
//!    renormalized, where u is the member's direction, n a unit vector drawn
//!    from the standard normal distribution in ℝᵈ and projected orthogonal to u,
//!    and ν = √(1/x² − 1), so that the copy's cosine to its original is
//!    exactly the target x ([`CopyOptions::cosine`]), up to f32 rounding;
//! 3. remove the m·c lowest-ranked members, so the pool size P stays the
//!    same (at most P − m copies are made when the pool is smaller than
//!    m·(c + 1));
//! 4. insert each copy right after its original (the rest of the pool keeps
//!    its order).
//!
//! A copy inherits its original's memory id, so it counts as the same
//! evidence (picking an original and its copy finds one gold memory, not
//! two), and its original's first-stage score when the pool has one. A pool
//! without first-stage scores is ranked by the query cosine; there a copy's
//! relevance is its own cosine to the query (what a cosine retriever would
//! score it).
//!
//! The draws are seeded per query ([`CopyOptions::seed`] and the query's
//! position in the dataset), with ChaCha8, so the same seed injects the same
//! copies on every platform, whatever the methods evaluated. For one seed,
//! the noise directions are the same at every target cosine: only ν
//! changes.
//!
//! ```
//! use mempursuit_cli::copies::{inject_copies, CopyOptions};
//!
//! // A pool of three 2-d memories ranked by cosine to the query (1, 0).
//! let rows = [1.0f32, 0.0, 0.8, 0.6, 0.0, 1.0];
//! let opts = CopyOptions { top: 1, per_member: 1, cosine: 0.9, seed: 7 };
//! let pool = inject_copies(&[1.0, 0.0], &rows, &[10, 11, 12], None, &opts, 0);
//! assert_eq!(pool.ids, [10, 10, 11]); // the copy follows its original; 12 is removed
//! let c = &pool.rows[2..4];
//! assert!((c[0] - 0.9).abs() < 1e-6); // cosine 0.9 to the original (1, 0)
//! ```

use rand::rngs::ChaCha8Rng;
use rand::{RngExt as _, SeedableRng as _};
use rand_distr::StandardNormal;
use serde::Serialize;

/// How near-copies are injected into a pool (see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CopyOptions {
    /// m: how many of the top-ranked members get copies.
    pub top: usize,
    /// c: copies of each of them.
    pub per_member: usize,
    /// The copies' cosine to their original, in (0, 1] (1 = exact copies).
    pub cosine: f64,
    /// Seed of the noise (ChaCha8, combined with the query's position).
    pub seed: u64,
}

impl CopyOptions {
    /// m = 3 members, c = 2 copies each, at cosine `cosine`, seed 0.
    pub fn new(cosine: f64) -> Self {
        CopyOptions {
            top: 3,
            per_member: 2,
            cosine,
            seed: 0,
        }
    }

    /// Checks the target cosine.
    ///
    /// # Errors
    /// A message naming the value unless 0 < cosine ≤ 1.
    pub fn validate(&self) -> Result<(), String> {
        if self.cosine > 0.0 && self.cosine <= 1.0 {
            Ok(())
        } else {
            Err(format!(
                "copy cosine {} must be in (0, 1] (1 = exact copies)",
                self.cosine
            ))
        }
    }
}

/// A pool with near-copies injected ([`inject_copies`]).
#[derive(Debug, Clone, PartialEq)]
pub struct InjectedPool {
    /// The rows, P × d row-major f32 (P unchanged).
    pub rows: Vec<f32>,
    /// The memory id of each row; a copy carries its original's id.
    pub ids: Vec<usize>,
    /// The first-stage scores, a copy carrying its original's; `None` when
    /// the pool had none.
    pub scores: Option<Vec<f32>>,
    /// For each row, the position (in this pool) of the original it copies;
    /// `None` for an original member.
    pub copy_of: Vec<Option<usize>>,
}

/// The pool's positions in retriever order: by `scores` descending when
/// given, else by cosine to `query` descending; ties to the lower position.
fn retriever_order(
    query: &[f32],
    rows: &[f32],
    (p, d): (usize, usize),
    scores: Option<&[f32]>,
) -> Vec<usize> {
    let key: Vec<f64> = match scores {
        Some(s) => s.iter().map(|&v| f64::from(v)).collect(),
        None => {
            let qn = norm(query);
            (0..p)
                .map(|i| {
                    let r = &rows[i * d..(i + 1) * d];
                    let c = dot(r, query) / (norm(r) * qn);
                    if c.is_finite() {
                        c
                    } else {
                        f64::NEG_INFINITY
                    }
                })
                .collect()
        }
    };
    let mut order: Vec<usize> = (0..p).collect();
    order.sort_by(|&a, &b| key[b].total_cmp(&key[a]).then(a.cmp(&b)));
    order
}

fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| f64::from(x) * f64::from(y))
        .sum()
}

fn norm(a: &[f32]) -> f64 {
    dot(a, a).sqrt()
}

/// One near-copy of `row` at cosine `cosine` (see the module docs), drawn
/// from `rng`. A row without a usable direction (zero or non-finite norm)
/// and d = 1 (no orthogonal direction) give an exact copy.
fn near_copy(row: &[f32], cosine: f64, rng: &mut ChaCha8Rng) -> Vec<f32> {
    let d = row.len();
    let mut g: Vec<f64> = (0..d).map(|_| rng.sample(StandardNormal)).collect();
    let n = norm(row);
    if !(n.is_finite() && n > 0.0) || cosine >= 1.0 {
        return row.to_vec();
    }
    let u: Vec<f64> = row.iter().map(|&x| f64::from(x) / n).collect();
    let gu: f64 = g.iter().zip(&u).map(|(a, b)| a * b).sum();
    for (gi, ui) in g.iter_mut().zip(&u) {
        *gi -= gu * ui;
    }
    let gn = g.iter().map(|v| v * v).sum::<f64>().sqrt();
    if gn.is_nan() || gn <= 0.0 {
        return row.to_vec();
    }
    let nu = (1.0 / (cosine * cosine) - 1.0).sqrt();
    let x: Vec<f64> = u.iter().zip(&g).map(|(ui, gi)| ui + nu * gi / gn).collect();
    let xn = x.iter().map(|v| v * v).sum::<f64>().sqrt();
    x.iter().map(|v| (v / xn) as f32).collect()
}

/// Injects near-copies into one pool (P × d row-major `rows`, memory ids
/// `ids`, optional first-stage `scores`) for the query at dataset position
/// `query_index` (which, with [`CopyOptions::seed`], seeds the draws). See
/// the [module docs](self) for the protocol. `opts.cosine` must be valid
/// ([`CopyOptions::validate`]).
///
/// # Panics
/// If `ids.len()` is not the number of rows, or `scores` (when given) has
/// another length.
pub fn inject_copies(
    query: &[f32],
    rows: &[f32],
    ids: &[usize],
    scores: Option<&[f32]>,
    opts: &CopyOptions,
    query_index: usize,
) -> InjectedPool {
    let d = query.len();
    let p = ids.len();
    assert_eq!(rows.len(), p * d, "rows must be P × d");
    if let Some(s) = scores {
        assert_eq!(s.len(), p, "one score per pool member");
    }
    let order = retriever_order(query, rows, (p, d), scores);
    let m = opts.top.min(p);
    let n_copies = (m * opts.per_member).min(p - m);
    let mut copies_of = vec![0usize; p];
    let mut left = n_copies;
    for &i in &order[..m] {
        let c = opts.per_member.min(left);
        copies_of[i] = c;
        left -= c;
    }
    let mut removed = vec![false; p];
    for &i in &order[p - n_copies..] {
        removed[i] = true;
    }
    let seed = opts.seed ^ (query_index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Draws in retriever order, so that they do not depend on where the
    // top members sit in the pool.
    let mut drawn: Vec<Vec<Vec<f32>>> = vec![Vec::new(); p];
    for &i in &order[..m] {
        let row = &rows[i * d..(i + 1) * d];
        drawn[i] = (0..copies_of[i])
            .map(|_| near_copy(row, opts.cosine, &mut rng))
            .collect();
    }
    let mut out = InjectedPool {
        rows: Vec::with_capacity(p * d),
        ids: Vec::with_capacity(p),
        scores: scores.map(|_| Vec::with_capacity(p)),
        copy_of: Vec::with_capacity(p),
    };
    for i in 0..p {
        if removed[i] {
            continue;
        }
        let at = out.ids.len();
        out.rows.extend_from_slice(&rows[i * d..(i + 1) * d]);
        out.ids.push(ids[i]);
        out.copy_of.push(None);
        if let (Some(o), Some(s)) = (&mut out.scores, scores) {
            o.push(s[i]);
        }
        for copy in drawn[i].drain(..) {
            out.rows.extend_from_slice(&copy);
            out.ids.push(ids[i]);
            out.copy_of.push(Some(at));
            if let (Some(o), Some(s)) = (&mut out.scores, scores) {
                o.push(s[i]);
            }
        }
    }
    debug_assert_eq!(out.ids.len(), p);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = norm(v);
        v.iter().map(|&x| (f64::from(x) / n) as f32).collect()
    }

    /// A 10-member pool in 16 dimensions, ranked by cosine: rows with a
    /// decreasing query component.
    fn pool() -> (Vec<f32>, Vec<f32>, Vec<usize>) {
        let d = 16;
        let mut q = vec![0.0f32; d];
        q[0] = 1.0;
        let mut rows = Vec::new();
        // Pool positions 0..10 with cosines 0.5, 0.9, 0.1, 0.7, 0.3, 0.8, 0.2, 0.6, 0.4, 0.0
        let cos = [0.5f32, 0.9, 0.1, 0.7, 0.3, 0.8, 0.2, 0.6, 0.4, 0.0];
        for (i, &c) in cos.iter().enumerate() {
            let mut r = vec![0.0f32; d];
            r[0] = c;
            r[1 + i] = (1.0 - c * c).sqrt();
            rows.extend(unit(&r));
        }
        (q, rows, (100..110).collect())
    }

    /// The top-3 by cosine (positions 1, 5, 3) get two copies each, right
    /// after them, at the target cosine; the six lowest (positions 9, 2, 6,
    /// 4, 8, 0) are removed; P stays 10.
    #[test]
    fn copies_follow_their_originals_and_replace_the_lowest() {
        let (q, rows, ids) = pool();
        let opts = CopyOptions::new(0.93);
        let out = inject_copies(&q, &rows, &ids, None, &opts, 5);
        assert_eq!(out.ids, [101, 101, 101, 103, 103, 103, 105, 105, 105, 107]);
        assert_eq!(
            out.copy_of,
            [
                None,
                Some(0),
                Some(0),
                None,
                Some(3),
                Some(3),
                None,
                Some(6),
                Some(6),
                None
            ]
        );
        assert_eq!(out.scores, None);
        let d = q.len();
        let row = |k: usize| &out.rows[k * d..(k + 1) * d];
        for k in 0..10 {
            assert!((norm(row(k)) - 1.0).abs() < 1e-6);
            if let Some(o) = out.copy_of[k] {
                let c = dot(row(k), row(o));
                assert!((c - 0.93).abs() < 1e-6, "row {k}: cosine {c}");
            }
        }
        // Seeded: the same call gives the same copies; another query
        // position gives others.
        assert_eq!(out, inject_copies(&q, &rows, &ids, None, &opts, 5));
        assert_ne!(
            out.rows,
            inject_copies(&q, &rows, &ids, None, &opts, 6).rows
        );
    }

    /// With first-stage scores the order is the scores' (here the reverse of
    /// the pool order), ties to the earlier position, and each copy carries
    /// its original's score.
    #[test]
    fn scores_rank_the_pool_and_are_inherited() {
        let (q, rows, ids) = pool();
        let scores: Vec<f32> = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 9.0, 9.0, 9.5];
        let opts = CopyOptions {
            top: 2,
            per_member: 1,
            cosine: 0.97,
            seed: 3,
        };
        let out = inject_copies(&q, &rows, &ids, Some(&scores), &opts, 0);
        // Top 2: position 9 (9.5), then 7 (9.0, before 8); removed: 0 and 1.
        assert_eq!(out.ids, [102, 103, 104, 105, 106, 107, 107, 108, 109, 109]);
        assert_eq!(
            out.scores.unwrap(),
            [3.0, 4.0, 5.0, 6.0, 7.0, 9.0, 9.0, 9.0, 9.5, 9.5]
        );
    }

    /// Cosine 1 gives exact copies; a pool smaller than m·(c + 1) gets at
    /// most P − m copies; the same noise directions serve every cosine.
    #[test]
    fn exact_copies_small_pools_and_shared_directions() {
        let (q, rows, ids) = pool();
        let d = q.len();
        let exact = inject_copies(&q, &rows, &ids, None, &CopyOptions::new(1.0), 0);
        assert_eq!(&exact.rows[d..2 * d], &rows[d..2 * d]);
        let small = inject_copies(
            &q,
            &rows[..4 * d],
            &ids[..4],
            None,
            &CopyOptions::new(0.9),
            0,
        );
        // Order 1, 3, 0, 2: one copy (P − m = 1) of position 1; position 2 removed.
        assert_eq!(small.ids, [100, 101, 101, 103]);
        let a = inject_copies(&q, &rows, &ids, None, &CopyOptions::new(0.97), 2);
        let b = inject_copies(&q, &rows, &ids, None, &CopyOptions::new(0.88), 2);
        // Copy − cosine·original is along the same noise direction n.
        let dir = |out: &InjectedPool, x: f64| -> Vec<f64> {
            let (c, o) = (&out.rows[d..2 * d], &out.rows[..d]);
            let v: Vec<f64> = c
                .iter()
                .zip(o)
                .map(|(&ci, &oi)| f64::from(ci) - x * f64::from(oi))
                .collect();
            let n = v.iter().map(|t| t * t).sum::<f64>().sqrt();
            v.iter().map(|t| t / n).collect()
        };
        let (da, db) = (dir(&a, 0.97), dir(&b, 0.88));
        let cos: f64 = da.iter().zip(&db).map(|(x, y)| x * y).sum();
        assert!(cos > 1.0 - 1e-5, "{cos}");
        assert!(CopyOptions::new(0.0).validate().is_err());
        assert!(CopyOptions::new(1.5).validate().is_err());
        assert!(CopyOptions::new(1.0).validate().is_ok());
    }
}
