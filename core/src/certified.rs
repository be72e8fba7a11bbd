//! The certified int8 pursuit: the pass of every pick streams int8 codes
//! (P·d bytes instead of 4·P·d) and still makes exactly the picks of the
//! pursuit computed in f64 from the f32 rows.
//!
//! Only the argmax of each pick needs an exact score; every other candidate
//! only needs a proof that it cannot win. With the approximate rows
//! m̃_i = w_i c_i (int8 codes, f32 scale) of the normalized rows
//! m̂_i = σ_i m_i, write ê_i = m̂_i − m̃_i and x̂ = Σ_{j∈F} α_j m̂_j. The exact
//! score (Eq. 9, relevance-scaled family) is U_i = ρ_i − γ Σ_j α_j m̂_i·m̂_j
//! and the approximate one Ũ_i = ρ̃_i − γ Σ_j α_j m̃_i·m̃_j (the int8 Gram
//! rows). Since m̂_i·m̂_j − m̃_i·m̃_j = ê_i·m̂_j + m̃_i·ê_j and α is on the
//! simplex,
//!
//! ```text
//! |U_i − Ũ_i| ≤ γ (‖ê_i‖ ‖x̂‖ + ‖m̃_i‖ Σ_j α_j ‖ê_j‖) + |ρ_i − ρ̃_i| + rounding
//! ```
//!
//! which does not grow with |S|. The code uses rigorous upper bounds of
//! every factor (ARCHITECTURE.md, "Certified int8 pursuit", derives each,
//! including the f32 rounding of the approximate computation itself), then
//! takes L = max_i (Ũ_i − B_i) over the available candidates and computes
//! the exact U_i in f64 for every candidate with Ũ_i + B_i ≥ L; the pick is
//! the argmax of those exact values, ties to the lowest index. Any
//! candidate left out has U_i ≤ Ũ_i + B_i < L ≤ U of the candidate that
//! attains L, so the pick is the exact argmax.
//!
//! Exact scores use b_i − γ Σ_j α_j G_ij with the exact G_ij of a verified
//! candidate cached per pick (one f64 dot product per verified candidate
//! and new pick): no d-sized buffer, so the workspace keeps its (P, K)
//! shape.

use crate::error::Error;
use crate::exact::{residual_sq, ExactParts};
use crate::input::{prepare, Input, Relevance};
use crate::int8::Int8Pool;
use crate::kernels::{self, int8::dots_i8, sealed::Rows, Executor, Serial};
use crate::options::{AtPoolOptimum, PursuitOptions};
use crate::pursuit::{
    argmax_available, exact_rho, pool_status, relative_improvement, AdaptiveStop,
};
use crate::selection::{RefitStatus, SelectionView, Step, StopReason};
use crate::solver::refit;
use crate::workspace::{Workspace, AVAILABLE, EXCLUDED, SELECTED};

/// Unit roundoff of f32, 2⁻²⁴.
const U32: f64 = f32::EPSILON as f64 / 2.0;
/// Factor that covers the f64 rounding of the radius computation itself.
const SAFE: f64 = 1.0 + 1e-9;
/// Rows per block of the int8 pass (the i32 results live on the stack).
const BLOCK: usize = 64;

/// MemPursuit on certified int8 candidates: the same picks, weights and
/// steps as the pursuit computed in f64 from the f32 rows `input.candidates`
/// (paper mode and the relevance-scaled family; `ridge = f64::INFINITY`
/// gives centroid pursuit), with every pick's pass over the pool reading
/// the int8 codes of `pool` instead of the f32 rows.
///
/// * `input`: as for [`pursuit`](crate::pursuit), f32 candidates (row-major
///   P × d); its rows are read only for the exact small parts (the rows of
///   the picks and of the candidates that need verifying).
/// * `pool`: the int8 copy of exactly these rows ([`Int8Pool::quantize`]
///   or [`Int8Pool::from_codes`] on `input.candidates`). A pool built from
///   other rows voids the certificate (the radii bound the distance to the
///   rows it was built from).
/// * `budget`, `options`, `ws`: as for [`pursuit`](crate::pursuit).
///
/// Each [`Step::verified`] says how many candidates were scored exactly to
/// certify that pick. [`Step::score`], `nu`, `residual_sq` and `fw_gap` are
/// computed in f64 from the f32 rows.
///
/// # Errors
/// Every error of [`pursuit`](crate::pursuit), and
/// [`Error::Int8Length`] when `pool` does not have the input's P and d.
pub fn pursuit_int8<'w>(
    input: &Input<'_>,
    pool: &Int8Pool<'_>,
    budget: usize,
    options: &PursuitOptions,
    ws: &'w mut Workspace<'_>,
) -> Result<SelectionView<'w>, Error> {
    pursuit_int8_with(input, pool, budget, options, ws, &mut Serial)
}

/// [`pursuit_int8`] with the query pass split over `executor`'s parts (see
/// [`Executor`]; the result does not depend on it). The int8 passes run on
/// the calling thread.
///
/// # Errors
/// As [`pursuit_int8`].
pub fn pursuit_int8_with<'w>(
    input: &Input<'_>,
    pool: &Int8Pool<'_>,
    budget: usize,
    options: &PursuitOptions,
    ws: &'w mut Workspace<'_>,
    executor: &mut dyn Executor,
) -> Result<SelectionView<'w>, Error> {
    options.validate()?;
    let prep = prepare(input, budget, &options.input, ws, executor)?;
    let (p, d) = (prep.pool, prep.dim);
    if pool.dim != d {
        return Err(Error::Int8Length {
            expected: d,
            found: pool.dim,
        });
    }
    if pool.len() != p {
        return Err(Error::Int8Length {
            expected: p,
            found: pool.len(),
        });
    }
    let k_eff = budget.min(p);
    ws.stop = StopReason::Budget;
    ws.nfree = 0;
    let exact = ExactParts::new(Rows::F32(input.candidates), d, input.query, prep.q_scale);
    let similarity = matches!(input.relevance, Relevance::Similarity);
    let ctx = Ctx {
        exact,
        pool: *pool,
        similarity,
        gamma: options.gamma,
        rho_err: setup(&exact, pool, similarity, prep.q_scale, ws),
    };
    let len = certified_loop(&ctx, k_eff, options, ws);
    let ws: &'w Workspace<'_> = ws;
    Ok(SelectionView::from_workspace(ws, len, true))
}

/// What the loop needs besides the workspace.
struct Ctx<'a> {
    exact: ExactParts<'a>,
    pool: Int8Pool<'a>,
    similarity: bool,
    gamma: f64,
    /// Upper bound of |ρ̃_i − ρ_i| (the f32 query pass against f64; 0 when
    /// ρ is the caller's relevance, which both use as given).
    rho_err: f64,
}

/// Per-row data of the radii (module docs): w_i, ‖ê_i‖ ≤ err_bound_i,
/// ‖m̃_i‖ ≤ norm_bound_i; clears the exact caches; sets ρ = −∞ for excluded
/// rows. Returns the bound of |ρ̃_i − ρ_i| over the rows.
fn setup(
    exact: &ExactParts<'_>,
    pool: &Int8Pool<'_>,
    similarity: bool,
    q_scale: f32,
    ws: &mut Workspace<'_>,
) -> f64 {
    let p = ws.pool;
    let d = exact.d as f64;
    ws.sigma[..p].fill(f64::NAN);
    ws.b_exact[..p].fill(f64::NAN);
    ws.cached[..p].fill(0);
    let s_q = q_scale as f64;
    let q_norm = exact.q_norm * (1.0 + 1e-12);
    // The f32 dot of the query pass: each lane sums d/8 rounded products,
    // then 3 tree levels and ≤ 7 tail additions: ≤ (d/8 + 12)·u·Σ|m_k q_k|.
    let dot_rel = (d / 8.0 + 12.0) * U32 * 1.01;
    let mut rho_err = 0.0f64;
    for i in 0..p {
        if ws.state[i] == EXCLUDED {
            ws.err_bound[i] = 0.0;
            ws.norm_bound[i] = 0.0;
            ws.wscale[i] = 0.0;
            ws.rho[i] = f32::NEG_INFINITY;
            continue;
        }
        let (n, e) = (pool.norms[i], pool.errors[i]);
        // σ_i: 1 for a row used as given, else 1/‖m_i‖; the stored norm is
        // rounded up by < 1e-12 relative, so σ_up bounds the exact σ_i.
        let sigma = if ws.scale[i] == 1.0 { 1.0 } else { 1.0 / n };
        let sigma_up = sigma * (1.0 + 1e-12);
        let w = (sigma * pool.scales[i] as f64) as f32 as f64;
        ws.wscale[i] = w;
        // ê_i = σ_i (m_i − s_i c_i) + (σ_i s_i − w_i) c_i, with
        // |σ_i s_i − w_i| ≤ (u + 1e-12) σ_i s_i and s_i ‖c_i‖ ≤ ‖m_i‖ + E_i.
        let eb = (sigma_up * e + (U32 + 1e-12) * sigma_up * (n + e)) * SAFE;
        ws.err_bound[i] = eb;
        ws.norm_bound[i] = (sigma_up * n + eb) * SAFE;
        if similarity {
            // b̃_i = fl(dot32 · fl(s_i s_q)) against b_i = σ_i σ_q dot64.
            let ss = ws.scale[i] as f64 * s_q;
            let err = n
                * q_norm
                * (dot_rel * ss * (1.0 + 3.0 * U32)
                    + (ss - sigma * exact.sigma_q).abs()
                    + (1e-12 + 2.01 * U32) * ss);
            rho_err = rho_err.max(err * SAFE);
        }
    }
    rho_err
}

/// The int8 Gram row of pick `j` into stored row `slot`:
/// gram[slot][i] = fl32((c_i · c_j) · w_i w_j), the integer dot exact.
fn int8_gram_row(ctx: &Ctx<'_>, ws: &mut Workspace<'_>, j: usize, slot: usize) {
    let (p, d) = (ws.pool, ctx.exact.d);
    let codes = ctx.pool.codes;
    let cj = &codes[j * d..(j + 1) * d];
    let wj = ws.wscale[j];
    let row = &mut ws.gram[slot * ws.max_pool..slot * ws.max_pool + p];
    let mut buf = [0i32; BLOCK];
    let mut start = 0;
    while start < p {
        let n = BLOCK.min(p - start);
        dots_i8(&codes[start * d..(start + n) * d], d, cj, &mut buf[..n]);
        for r in 0..n {
            // w_i w_j is exact in f64; one f64 and one f32 rounding.
            row[start + r] = (buf[r] as f64 * (ws.wscale[start + r] * wj)) as f32;
        }
        start += n;
    }
}

/// The exact score U_i = ρ_i − γ Σ_{a∈F} α_a G_{i,a} in f64 from the rows,
/// with the exact G of `i` against the first `nsel` picks cached.
fn verify(ctx: &Ctx<'_>, ws: &mut Workspace<'_>, i: usize, nsel: usize) -> f64 {
    let rho = exact_rho(&ctx.exact, ws, i, ctx.similarity);
    let stride = ws.max_pool;
    for s in ws.cached[i]..nsel {
        let g = ctx.exact.gram(ws, i, ws.picks[s]);
        ws.exact_gram[s * stride + i] = g;
    }
    if ws.cached[i] < nsel {
        ws.cached[i] = nsel;
    }
    let mut g = 0.0;
    for &pos in &ws.free[..ws.nfree] {
        g += ws.alpha[pos] * ws.exact_gram[pos * stride + i];
    }
    rho - ctx.gamma * g
}

/// The certified argmax over the available candidates of the approximate
/// scores in `ws.u` (module docs). Returns the pick, its exact score and
/// the number of candidates verified.
fn certified_next(ctx: &Ctx<'_>, ws: &mut Workspace<'_>, nsel: usize) -> (Option<usize>, f64, u32) {
    let p = ws.pool;
    let k = ws.max_budget;
    let gamma = ctx.gamma;
    let nf = ws.nfree;
    // ‖x̂‖² = αᵀ G_FF α (f64), Σ α_j ‖ê_j‖ and Σ α_j ‖m̃_j‖ over F.
    let (mut x2, mut ebar, mut nbar) = (0.0f64, 0.0f64, 0.0f64);
    for &a in &ws.free[..nf] {
        let j = ws.picks[a];
        let al = ws.alpha[a];
        ebar += al * ws.err_bound[j];
        nbar += al * ws.norm_bound[j];
        for &b in &ws.free[..nf] {
            x2 += al * ws.alpha[b] * ws.gss[a * k + b];
        }
    }
    let x = libm::sqrt(x2.max(0.0) + 1e-12) * SAFE;
    let (ebar, nbar) = (ebar * SAFE, nbar * SAFE);
    // f32 rounding of the refresh: |F| rounded products and subtractions,
    // the rounded coefficients fl32(γα_j) and Gram entries (2u each).
    let round = (nf as f64 + 4.0) * U32 * 1.01;
    let radius = |ws: &Workspace<'_>, i: usize| -> f64 {
        let nb = ws.norm_bound[i];
        (gamma * (ws.err_bound[i] * x + nb * ebar)
            + ctx.rho_err
            + round * ((ws.rho[i] as f64).abs() + gamma * nb * nbar * 1.01))
            * SAFE
            + 1e-15
    };
    let mut lower = f64::NEG_INFINITY;
    let mut any = false;
    for i in 0..p {
        if ws.state[i] == AVAILABLE {
            any = true;
            lower = lower.max(ws.u[i] as f64 - radius(ws, i));
        }
    }
    if !any {
        return (None, 0.0, 0);
    }
    let mut best: Option<(usize, f64)> = None;
    let mut count = 0u32;
    for i in 0..p {
        if ws.state[i] == AVAILABLE && ws.u[i] as f64 + radius(ws, i) >= lower {
            count += 1;
            let u = verify(ctx, ws, i, nsel);
            if best.is_none_or(|(_, b)| u > b) {
                best = Some((i, u));
            }
        }
    }
    match best {
        Some((i, u)) => (Some(i), u, count),
        None => (None, 0.0, count),
    }
}

/// Row and column `t` of G_SS (from the exact cache of pick `i`, which its
/// verification filled), b_S[t] and ρ_S[t].
fn set_row_from_cache(ctx: &Ctx<'_>, ws: &mut Workspace<'_>, t: usize, i: usize, rho: f64) {
    let (k, stride) = (ws.max_budget, ws.max_pool);
    let _ = verify(ctx, ws, i, t);
    for s in 0..t {
        let g = ws.exact_gram[s * stride + i];
        ws.gss[t * k + s] = g;
        ws.gss[s * k + t] = g;
    }
    ws.gss[t * k + t] = ctx.exact.gram(ws, i, i);
    ws.b_s[t] = ctx.exact.b(ws, i);
    ws.rho_s[t] = rho;
}

/// Centroid pursuit's closed-form "refit" over the first `n` picks:
/// α = 1/n on all of them; returns mean_{j∈S} U_j (exact).
fn centroid_refit(ctx: &Ctx<'_>, ws: &mut Workspace<'_>, n: usize) -> f64 {
    let k = ws.max_budget;
    let w = 1.0 / n as f64;
    for a in 0..n {
        ws.alpha[a] = w;
        ws.free[a] = a;
    }
    ws.nfree = n;
    let mut sum_u = 0.0;
    for s in 0..n {
        let g: f64 = ws.gss[s * k..s * k + n].iter().sum();
        sum_u += ws.rho_s[s] - ctx.gamma * g * w;
    }
    sum_u * w
}

fn certified_loop(
    ctx: &Ctx<'_>,
    k_eff: usize,
    options: &PursuitOptions,
    ws: &mut Workspace<'_>,
) -> usize {
    let p = ws.pool;
    let centroid = options.is_centroid();
    let (gamma, kappa) = (options.gamma, options.ridge);
    let mut stop = AdaptiveStop::new(options);
    let mut l_prev = ctx.exact.qq;
    let mut fill = false;
    let mut last = Step::default();
    ws.u[..p].copy_from_slice(&ws.rho[..p]);
    let (mut next, mut score, mut verified) = certified_next(ctx, ws, 0);
    let mut t = 0;
    while t < k_eff {
        let Some(i) = next else {
            ws.stop = StopReason::PoolExhausted;
            break;
        };
        ws.state[i] = SELECTED;
        ws.picks[t] = i;
        if fill {
            ws.alpha[t] = 0.0;
            ws.steps[t] = Step {
                index: i,
                score: ws.rho[i] as f64,
                improvement: 0.0,
                solver_iterations: 0,
                filled: true,
                refit: RefitStatus::Optimal,
                verified: 0,
                ..last
            };
            t += 1;
            next = argmax_available(&ws.rho[..p], &ws.state[..p]);
            continue;
        }
        // The pass: the pick's int8 Gram row.
        int8_gram_row(ctx, ws, i, t);
        // The exact small parts and the refit.
        let rho_i = exact_rho(&ctx.exact, ws, i, ctx.similarity);
        set_row_from_cache(ctx, ws, t, i, rho_i);
        let (nu, iterations, status, kkt) = if centroid {
            (centroid_refit(ctx, ws, t + 1), 0, RefitStatus::Optimal, 0.0)
        } else {
            let r = refit(ws, t + 1, gamma, kappa);
            (r.nu, r.iterations, pool_status(ws, &r), r.kkt_violation)
        };
        let l_t = residual_sq(&ctx.exact, ws);

        // Approximate scores Ũ = ρ̃ − Σ_{j∈F} fl32(γ α_j) G̃_j (Eq. 9), the
        // coefficients in `acc`, then the certified argmax.
        let nf = ws.nfree;
        for a in 0..nf {
            ws.acc[a] = (gamma * ws.alpha[ws.free[a]]) as f32;
        }
        kernels::refresh_scores(
            &mut ws.u[..p],
            &ws.rho[..p],
            ws.gram,
            ws.max_pool,
            &ws.free[..nf],
            &ws.acc[..nf],
        );
        for &j in &ws.picks[..=t] {
            ws.u[j] = f32::NEG_INFINITY;
        }
        let (n_next, s_next, v_next) = certified_next(ctx, ws, t + 1);
        let gap = match n_next {
            Some(_) if centroid => s_next - nu,
            Some(_) => (s_next - nu).max(kkt).max(0.0),
            None if centroid => 0.0,
            None => kkt.max(0.0),
        };
        let improvement = relative_improvement(l_prev, l_t, stop.eps);
        last = Step {
            index: i,
            score,
            residual_sq: l_t,
            improvement,
            fw_gap: gap,
            nu,
            free_size: ws.nfree,
            solver_iterations: iterations,
            filled: false,
            refit: status,
            verified,
        };
        ws.steps[t] = last;
        (next, score, verified) = (n_next, s_next, v_next);
        t += 1;
        l_prev = l_t;
        if stop.small_step(improvement) && t < k_eff {
            ws.stop = StopReason::Adaptive;
            break;
        }
        if !centroid && gap <= options.optimum_tolerance && t < k_eff {
            match options.at_pool_optimum {
                AtPoolOptimum::Continue => {}
                AtPoolOptimum::Stop => {
                    ws.stop = StopReason::PoolOptimum;
                    break;
                }
                AtPoolOptimum::FillByRelevance => {
                    fill = true;
                    next = argmax_available(&ws.rho[..p], &ws.state[..p]);
                }
            }
        }
    }
    if centroid {
        let w = if t > 0 { 1.0 / t as f64 } else { 0.0 };
        ws.alpha[..t].fill(w);
    }
    t
}
