//! The certified int8 pursuit: the pass of every pick streams int8 codes
//! (P·d bytes instead of 4·P·d) and still makes exactly the picks of the
//! f32 pursuit ([`pursuit`](crate::pursuit)) on the same rows — the same
//! picks, weights and steps, bit for bit on the same build and CPU — by
//! proof, not by luck.
//!
//! # How
//! The int8 pursuit runs the f32 pursuit's own loop (`pursuit::qp_loop`,
//! `pursuit::centroid_loop`) with a different source of Gram entries: each
//! pick's pass computes an int8 Gram row (approximations G̃), the score
//! refresh runs on those, and only the candidates that might be the argmax
//! get their f32 score computed exactly as the f32 pursuit computes it (the
//! same f32 row kernel for each Gram entry needed, `pursuit::cross_gram`,
//! and the same f32 operations in the same order for the score). The
//! refit, the residual and every certificate read only such f32 entries,
//! so they see the f32 pursuit's numbers.
//!
//! # The bound
//! Write m̂_i = s_i m_i (s_i the f32 scale of the passes: 1 for a row used
//! as given, else fl32(1/‖m_i‖)), the approximate row m̃_i = w_i c_i (int8
//! codes c_i, w_i = fl32(s_i·scale_i)), ê_i = m̂_i − m̃_i, and let the scores
//! be U_i = ρ_i − μ Σ_a ω_a G_{a,i} with nonnegative weights ω over some
//! picks a: ω_a = fl32(γα_a) over the free set and μ = 1 for the refresh
//! of Eq. 9; ω_a = 1 over all picks and μ = fl32(γ/|S|) for centroid
//! pursuit. The f32 score U_i uses the f32 entries G_{a,i}, the approximate
//! score Ũ_i the int8 ones G̃_{a,i}, the same ρ_i, ω and μ. Since
//! m̂_a·m̂_i − m̃_a·m̃_i = m̂_a·ê_i + ê_a·m̃_i,
//!
//! ```text
//! |U_i − Ũ_i| ≤ μ (η n_i Σ ω_a n_a + ‖Σ ω_a m̂_a‖ ‖ê_i‖ + ‖m̃_i‖ ‖Σ ω_a ê_a‖
//!               + 1.01u ‖m̃_i‖ Σ ω_a ‖m̃_a‖) + rounding_i  =: B_i
//! ```
//!
//! (Σ_a ω_a ê_a·m̃_i = E·m̃_i ≤ ‖E‖ ‖m̃_i‖ with E = Σ_a ω_a ê_a, one
//! d-vector per step; the triangle inequality's Σ ω_a ‖ê_a‖ can be several
//! times larger, as the picks' quantization errors point in nearly
//! independent directions), which does not grow with |S|: η n_a n_i bounds |G_{a,i} − m̂_a·m̂_i|
//! (the fixed-order f32 dot and its scaling, `pursuit::f32_entry_error`,
//! n_a = s_a ‖m_a‖), 1.01u‖m̃_a‖‖m̃_i‖ the f32 rounding of an int8 entry
//! (u = 2⁻²⁴; the integer dot is exact), and rounding_i the f32 operations
//! of both score evaluations (|F| + 1 rounded products and subtractions
//! each for the refresh; the two sums of |S| entries and the final
//! multiply-subtract for centroid pursuit). Each factor is a rigorous upper
//! bound computed once:
//! * ‖ê_i‖ ≤ s_i E_i + 1.01u s_i (‖m_i‖ + E_i) with E_i and ‖m_i‖ computed
//!   once in f64 and rounded up ([`Int8Pool`]); ‖m̃_i‖ ≤ n_i + ‖ê_i‖;
//! * ‖Σ ω_a m̂_a‖² ≤ Σ_{ab} ω_a ω_b G_ab + η (Σ ω_a n_a)² (plus the f32
//!   rounding of the centroid loop's running sums) from the refit's G_SS;
//! * ‖E‖ ≤ ‖Ẽ‖ (1 + d·2⁻⁵²) + 1.01 (|F| + 6) u Σ |ω_a| (n_a + ‖ê_a‖),
//!   Ẽ = E evaluated in f32 from the picks' f32 rows and codes, a few
//!   hundred coordinates at a time on the stack, ‖Ẽ‖² summed in f64
//!   (`kernels::int8::weighted_error_norm`, which derives the margin);
//!   the bound uses the smaller of that and Σ ω_a ‖ê_a‖ (both rigorous).
//!   It costs one pass over the |F| picks' rows (|F|·d multiply-adds), so
//!   a step computes it only when more than one candidate reaches L with
//!   Σ ω_a ‖ê_a‖ (`TIGHTEN_ABOVE`);
//! * the whole radius is multiplied by 1 + 10⁻⁹ and increased by 10⁻¹⁵ to
//!   cover the f64 evaluation of the bound itself (and to make exact ties
//!   overlap).
//!
//! # The certified argmax
//! L = max_i (Ũ_i − B_i) over the available candidates; every candidate
//! with Ũ_i + B_i ≥ L is *verified*: its f32 score U_i is computed as the
//! f32 pursuit computes it (the Gram entries it needs are cached, one f32
//! dot product of length d each). The pick is the argmax of the verified
//! values, ties to the lowest index. A candidate left out has
//! U_i ≤ Ũ_i + B_i < L ≤ U_m for the candidate m attaining L (which is
//! verified), so the pick is the f32 pursuit's argmax, and its score is the
//! f32 pursuit's.

use crate::error::Error;
use crate::exact::ExactParts;
use crate::input::{first_stop, prepare, Input, Spend};
use crate::int8::Int8Pool;
use crate::kernels::int8::{dots_i8_pass, weighted_error_norm, ErrorRow, Int8Kernel};
use crate::kernels::sealed::{Mat, Rows};
use crate::kernels::{self, Executor, Isa, Serial};
use crate::options::PursuitOptions;
use crate::pursuit::scorer::{
    argmax_available, centroid_scores, f32_entry_error, refresh_scores, Choice, ScoreForm, Scorer,
};
use crate::pursuit::{centroid_loop, pursuit_with, qp_loop};
use crate::scratch::ScratchKind;
use crate::selection::{CandidateState, SelectionView};
use crate::workspace::{Int8Scratch, Workspace, NOT_VERIFIED};

/// Unit roundoff of f32, 2⁻²⁴.
const U32: f64 = f32::EPSILON as f64 / 2.0;
/// Factor that covers the f64 rounding of the radius computation itself.
const SAFE: f64 = 1.0 + 1e-9;
/// Rows per block of the int8 pass (the i32 results live on the stack).
const BLOCK: usize = 64;
/// Candidates a certified argmax lists on the stack (more: it scans the
/// pool).
const LIST: usize = 64;
/// A certified argmax computes the tighter error term
/// (`Int8Scorer::weighted_error`) when more candidates than this reach L
/// with the cheaper one.
const TIGHTEN_ABOVE: usize = 1;

/// upper_i = u_i + B_i and the returned L = max_i (u_i − B_i), with
/// B_i = (c[0]·eb_i + c[1]·nb_i + c[2]·|ρ_i|)·SAFE + 10⁻¹⁵ (module docs),
/// four lanes at a time.
fn bounds(u: &[f32], eb: &[f64], nb: &[f64], rho: &[f32], c: [f64; 3], upper: &mut [f64]) -> f64 {
    use wide::f64x4;
    let radius = |eb: f64x4, nb: f64x4, rho: f64x4| {
        (f64x4::splat(c[0]) * eb + f64x4::splat(c[1]) * nb + f64x4::splat(c[2]) * rho.abs())
            * f64x4::splat(SAFE)
            + f64x4::splat(1e-15)
    };
    let w4 = |s: &[f32], k: usize| {
        f64x4::new([
            s[k] as f64,
            s[k + 1] as f64,
            s[k + 2] as f64,
            s[k + 3] as f64,
        ])
    };
    let d4 = |s: &[f64], k: usize| f64x4::new([s[k], s[k + 1], s[k + 2], s[k + 3]]);
    let n = u.len();
    let body = n - n % 4;
    let mut low = f64x4::splat(f64::NEG_INFINITY);
    let mut k = 0;
    while k < body {
        let (uk, r) = (w4(u, k), radius(d4(eb, k), d4(nb, k), w4(rho, k)));
        upper[k..k + 4].copy_from_slice(&(uk + r).to_array());
        low = low.max(uk - r);
        k += 4;
    }
    let mut lower = low.to_array().into_iter().fold(f64::NEG_INFINITY, f64::max);
    for k in body..n {
        let r = (c[0] * eb[k] + c[1] * nb[k] + c[2] * (rho[k] as f64).abs()) * SAFE + 1e-15;
        upper[k] = u[k] as f64 + r;
        lower = lower.max(u[k] as f64 - r);
    }
    lower
}

/// Which passes the certified int8 entry points stream: the int8 codes
/// (with the certified argmax) or the f32 rows (the f32 pursuit). Both give
/// the same selection bit for bit (only [`Step::verified`](crate::Step::verified)
/// differs: 0 on the f32 passes), so the choice is one of speed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Int8Passes {
    /// The int8 passes where they are measured to pay, else the f32
    /// pursuit ([`Int8Passes::uses_int8`] gives the rule).
    #[default]
    Auto,
    /// Always the int8 passes and the certified argmax.
    Int8,
    /// Always the f32 pursuit on the f32 rows.
    F32,
}

impl Int8Passes {
    /// Whether a pool of P rows of dimension d at budget K runs on the int8
    /// passes: always for [`Int8Passes::Int8`], never for
    /// [`Int8Passes::F32`], and for [`Int8Passes::Auto`] by
    /// [`Int8Passes::auto_rule`] with the kernel the int8 pass runs on
    /// ([`Int8Kernel::active`]) and the core's L2 cache
    /// ([`l2_cache_bytes`](kernels::int8::l2_cache_bytes)).
    pub fn uses_int8(self, p: usize, d: usize, k: usize) -> bool {
        match self {
            Int8Passes::Int8 => true,
            Int8Passes::F32 => false,
            Int8Passes::Auto => {
                // The L2 size (CPUID) is read only for a kernel the rule
                // can choose (Miri, whose kernel is the portable one, has
                // no CPUID).
                let kernel = Int8Kernel::active();
                let simd = matches!(
                    kernel,
                    Int8Kernel::Avx2 | Int8Kernel::AvxVnni | Int8Kernel::Avx512Vnni
                );
                simd && Int8Passes::auto_rule(kernel, p, d, k, kernels::int8::l2_cache_bytes())
            }
        }
    }

    /// The rule of [`Int8Passes::Auto`]: whether the certified int8 pursuit
    /// of a pool of P rows of dimension d at budget K (K ≤ P counts) is
    /// measured faster than the f32 pursuit that [`Int8Passes::Auto`] runs
    /// otherwise ([`pursuit_with`](crate::pursuit_with), its default
    /// screening), with the int8 pass on `kernel` and `l2_bytes` of L2
    /// cache per core, on every pool kind measured. All four conditions
    /// must hold:
    ///
    /// 1. the f32 rows do not fit in L2: 4·P·d > `l2_bytes` (in L2 the f32
    ///    passes are about as cheap per row as the int8 ones, and the
    ///    verification is extra);
    /// 2. d ≥ 1536 ([`INT8_AUTO_MIN_DIM`]): at d = 768 and 384 the clustered E5
    ///    store pools lose (1.0–1.6× at K = 20–40, P = 1000–2000);
    /// 3. K ≤ 20 ([`INT8_AUTO_MAX_BUDGET`]): on the E5 store pools, whose
    ///    scores crowd together so that 35–90 candidates per pick need
    ///    verifying, the int8 pursuit is 1.1–1.3× the screened f32 pursuit
    ///    at K = 25 and 1.4–2.6× at K = 30–50 (random and MiniLM store
    ///    pools: 0.26–0.93 there);
    /// 4. P ≥ 400 + K²/4: the int8 passes save a fixed share of each of
    ///    the K passes over P rows, while the verification (the f32
    ///    entries of the candidates whose bound may win, each with every
    ///    free pick) grows with K.
    ///
    /// The same rule for AVX2 alone (`vpmaddubsw`), AVX-VNNI and AVX-512
    /// VNNI (at d ≥ 1536 their pursuit times differ by under 10 %); never
    /// on the portable or simd128 kernels (not measured to pay).
    ///
    /// Measured (BENCHMARKS.md, "AVX2 without VNNI and the rule of
    /// `Int8Passes::Auto`", 2026-12-05 21:00–21:11 UTC, commit cdff87d,
    /// Intel Xeon (family 6, model 207) with AVX-512 VNNI and AVX-VNNI,
    /// 2 MiB of L2, the AVX2 kernel forced and the VNNI one; int8 / f32
    /// pursuit, medians over 48 HotpotQA store pools tiled to d = 1536 or
    /// 16 random unit pools): against the screened f32 pursuit with the
    /// AVX2 kernel, E5 pools K = 10 at P = 450 0.63, K = 20 at P = 500
    /// 0.94, P = 600 0.90, P = 1000 0.83, P = 2000 0.99; MiniLM K = 20 at
    /// P = 1000 0.47; random K = 20–25 at P = 1000 0.26–0.27.
    ///
    /// ```
    /// use mempursuit_core::kernels::int8::Int8Kernel;
    /// use mempursuit_core::Int8Passes;
    /// let mib = 1 << 20;
    /// assert!(Int8Passes::auto_rule(Int8Kernel::Avx2, 1000, 1536, 20, mib));
    /// assert!(Int8Passes::auto_rule(Int8Kernel::Avx2, 500, 1536, 20, mib));
    /// assert!(Int8Passes::auto_rule(Int8Kernel::Avx512Vnni, 450, 1536, 10, mib));
    /// assert!(!Int8Passes::auto_rule(Int8Kernel::Avx2, 450, 1536, 20, mib));
    /// assert!(!Int8Passes::auto_rule(Int8Kernel::Avx2, 200, 1536, 20, 2 * mib)); // in L2
    /// assert!(!Int8Passes::auto_rule(Int8Kernel::Avx2, 1000, 1536, 30, mib));
    /// assert!(!Int8Passes::auto_rule(Int8Kernel::Avx512Vnni, 2000, 768, 20, mib));
    /// assert!(!Int8Passes::auto_rule(Int8Kernel::Portable, 1000, 1536, 20, mib));
    /// ```
    pub fn auto_rule(kernel: Int8Kernel, p: usize, d: usize, k: usize, l2_bytes: usize) -> bool {
        let beyond_l2 = p.saturating_mul(d).saturating_mul(4) > l2_bytes;
        let k = k.min(p);
        let simd = matches!(
            kernel,
            Int8Kernel::Avx2 | Int8Kernel::AvxVnni | Int8Kernel::Avx512Vnni
        );
        // 4P ≥ 1600 + K², in integers.
        let large = p.saturating_mul(4) >= k.saturating_mul(k).saturating_add(1600);
        simd && beyond_l2 && d >= INT8_AUTO_MIN_DIM && k <= INT8_AUTO_MAX_BUDGET && large
    }
}

/// The least d at which [`Int8Passes::auto_rule`] runs the int8 passes
/// (its condition 2).
pub const INT8_AUTO_MIN_DIM: usize = 1536;

/// The largest budget K at which [`Int8Passes::auto_rule`] runs the int8
/// passes (its condition 3).
pub const INT8_AUTO_MAX_BUDGET: usize = 20;

/// MemPursuit on certified int8 candidates: the same picks, weights and
/// steps as [`pursuit`](crate::pursuit) on the f32 rows `input.candidates`
/// (paper mode and the relevance-scaled family; `ridge = f64::INFINITY`
/// gives centroid pursuit), bit for bit on the same build and CPU, with
/// every pick's pass over the pool reading the int8 codes of `pool`
/// instead of the f32 rows where that is faster ([`Int8Passes::Auto`];
/// [`pursuit_int8_using`] chooses).
///
/// * `input`: as for [`pursuit`](crate::pursuit), f32 candidates (row-major
///   P × d); its rows are read for the query pass and then only for the
///   candidates that need verifying (one f32 dot product of length d per
///   Gram entry).
/// * `pool`: the int8 copy of exactly these rows ([`Int8Pool::quantize`]
///   or [`Int8Pool::from_codes`] on `input.candidates`). A pool built from
///   other rows voids the certificate (the radii bound the distance to the
///   rows it was built from).
/// * `budget`, `options`: as for [`pursuit`](crate::pursuit); `ws`: a
///   workspace of kind [`ScratchKind::Int8`](crate::ScratchKind::Int8).
///
/// Only [`Step::verified`](crate::Step::verified) differs from the f32
/// pursuit's steps: how many candidates were scored exactly to certify that
/// pick (0 for the first pick, for relevance-fill picks, whose scores are
/// the relevance itself, and for every pick when the f32 passes ran). The
/// int8 passes run on the calling thread (the query pass may be split, see
/// [`pursuit_int8_with`]).
///
/// It runs the int8 passes only where they are measured faster than the
/// f32 pursuit ([`Int8Passes::auto_rule`]: f32 rows that do not fit in the
/// L2 cache, d ≥ 1536, K ≤ 20 and a pool large against K², on a CPU with
/// AVX2 or VNNI), and the f32 pursuit elsewhere (BENCHMARKS.md in the
/// repository).
///
/// # Errors
/// Every error of [`pursuit`](crate::pursuit), [`Error::Int8Length`] when
/// `pool` does not have the input's P and d, and [`Error::WorkspaceKind`]
/// for a workspace below [`ScratchKind::Int8`](crate::ScratchKind::Int8).
pub fn pursuit_int8<'w>(
    input: &Input<'_>,
    pool: &Int8Pool<'_>,
    budget: usize,
    options: &PursuitOptions,
    ws: &'w mut Workspace<'_>,
) -> Result<SelectionView<'w>, Error> {
    pursuit_int8_using(
        input,
        pool,
        budget,
        options,
        Int8Passes::Auto,
        ws,
        &mut Serial,
    )
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
    pursuit_int8_using(input, pool, budget, options, Int8Passes::Auto, ws, executor)
}

/// [`pursuit_int8_with`] with the choice of passes made by the caller
/// (`passes`; [`Int8Passes::Auto`] is [`pursuit_int8_with`]).
///
/// # Errors
/// As [`pursuit_int8`].
#[allow(clippy::too_many_arguments)]
pub fn pursuit_int8_using<'w>(
    input: &Input<'_>,
    pool: &Int8Pool<'_>,
    budget: usize,
    options: &PursuitOptions,
    passes: Int8Passes,
    ws: &'w mut Workspace<'_>,
    executor: &mut dyn Executor,
) -> Result<SelectionView<'w>, Error> {
    options.validate()?;
    ws.require(ScratchKind::Int8)?;
    // The pool's shape against the input's, when the input has one (else
    // the input's own shape error comes first).
    let d = input.query.len();
    if let Some(p) = input.pool_size() {
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
        if !passes.uses_int8(p, d, budget) {
            return pursuit_with(input, budget, options, ws, executor);
        }
    }
    let prep = prepare(input, budget, &options.input, ws, executor)?;
    let (p, d) = (prep.pool, prep.dim);
    let k_eff = budget.min(p);
    ws.stop = first_stop(budget, p);
    let rows = input.matrix();
    let parts = ExactParts::new(rows, d, input.query, prep.q_scale);
    setup(pool, k_eff, ws);
    let mut scorer = Int8Scorer {
        d,
        scratch: ws.scorer.lend(),
        rows: Mat {
            data: input.candidates,
            ids: input.ids,
        },
        pool: *pool,
        eta: f32_entry_error(d),
        isa: executor.isa(),
    };
    let spend = &mut Spend::new(input.cost_budget);
    let len = if options.is_centroid() {
        centroid_loop(&mut scorer, k_eff, options, spend, ws)
    } else {
        qp_loop(&mut scorer, &parts, k_eff, options, spend, ws)
    };
    ws.scorer.give_back(scorer.scratch);
    let ws: &'w Workspace<'_> = ws;
    Ok(ws.selection(len, true))
}

/// Per-row data of the radii (module docs): w_i, ‖ê_i‖ ≤ err_bound_i,
/// ‖m̃_i‖ ≤ norm_bound_i; empties the cache of f32 entries.
fn setup(pool: &Int8Pool<'_>, k_eff: usize, ws: &mut Workspace<'_>) {
    let p = ws.pool;
    // (A workspace of capacity 0 has no rows; `chunks_exact_mut(0)` would
    // panic.)
    let stride = ws.max_pool.max(1);
    for row in ws.verified_gram.chunks_exact_mut(stride).take(k_eff) {
        row[..p].fill(NOT_VERIFIED);
    }
    for i in 0..p {
        if ws.states.get(i) == CandidateState::Excluded {
            ws.err_bound[i] = 0.0;
            ws.norm_bound[i] = 0.0;
            ws.wscale[i] = 0.0;
            continue;
        }
        let (n, e) = (pool.norms[i], pool.errors[i]);
        let s = ws.scale[i] as f64;
        let w = (s * pool.scales[i] as f64) as f32 as f64;
        ws.wscale[i] = w;
        // ê_i = s_i (m_i − scale_i c_i) + (s_i scale_i − w_i) c_i, with
        // |s_i scale_i − w_i| ≤ u s_i scale_i and scale_i ‖c_i‖ ≤ ‖m_i‖ + E_i.
        let eb = (s * e + 1.01 * U32 * s * (n + e)) * SAFE;
        if eb < s * n && w.is_finite() {
            ws.err_bound[i] = eb;
            ws.norm_bound[i] = (s * n + eb) * SAFE;
        } else {
            // The approximation is no closer to the row than 0 (caller
            // codes and scales far from the row, or w_i beyond f32): use 0
            // instead, whose error is exactly ‖m̂_i‖ ≤ n_i. So every kept
            // approximation has ‖m̃_i‖ < 2 n_i, no int8 entry or score can
            // overflow f32, and the row is certified like any other (its
            // wide radius gets it verified whenever it could win).
            ws.wscale[i] = 0.0;
            ws.err_bound[i] = s * n * SAFE;
            ws.norm_bound[i] = 0.0;
        }
    }
}

/// The sums over a step's picks (weights ω, score factor μ; module docs)
/// that the radius B_i is made of, each rounded up.
struct Radius {
    /// μ.
    mu: f64,
    /// ‖Σ ω_a m̂_a‖.
    x: f64,
    /// Σ ω_a n_a.
    sn: f64,
    /// Σ ω_a ‖m̃_a‖.
    snb: f64,
    /// Σ |ω_a| ‖ê_a‖ (the triangle inequality's weighted error).
    se: f64,
    /// Σ |ω_a| (n_a + ‖ê_a‖) (what [`weighted_error_norm`] needs).
    spread: f64,
    /// |F| (the free picks) or n (centroid pursuit).
    terms: usize,
    /// The coefficient of |ρ_i| (rounding of both score evaluations).
    a_rho: f64,
    /// The coefficient of ‖m̃_i‖ (Σ ω n + Σ ω ‖m̃‖) (their rounding).
    b_sum: f64,
}

impl Radius {
    /// The coefficients [c_e, c_n, a] of B_i = (c_e ‖ê_i‖ + c_n ‖m̃_i‖ +
    /// a |ρ_i|)·SAFE + 1e-15 ([`bounds`]) with `error` ≥ ‖Σ ω_a ê_a‖ (`se`
    /// or the tighter [`weighted_error_norm`]) and η the f32 entries'
    /// relative error: B_i = (μ(x‖ê_i‖ + ‖m̃_i‖(η Σωn + error + 1.01u
    /// Σω‖m̃‖)) + a|ρ_i| + b ‖m̃_i‖ (Σωn + Σω‖m̃‖))·SAFE + 1e-15, with
    /// n_i ≤ ‖m̃_i‖'s bound.
    fn coefficients(&self, eta: f64, error: f64) -> [f64; 3] {
        let ce = self.mu * self.x;
        let cn = self.mu * (eta * self.sn + error + 1.01 * U32 * self.snb)
            + self.b_sum * (self.sn + self.snb);
        [ce, cn, self.a_rho]
    }
}

/// n_i = s_i ‖m_i‖, rounded up.
#[inline]
fn row_norm(pool: &Int8Pool<'_>, ws: &Workspace<'_>, i: usize) -> f64 {
    ws.scale[i] as f64 * pool.norms[i] * SAFE
}

/// The int8 source of the pursuit's loops (see [`Scorer`]).
struct Int8Scorer<'a, 's> {
    /// d.
    d: usize,
    /// The candidates' upper bounds, lent by the workspace for the call.
    scratch: Int8Scratch<'s>,
    /// The f32 rows (P × d, in place by id where the input has ids), for
    /// the Gram entries of verified candidates and the picks' errors ê.
    rows: Mat<'a, f32>,
    pool: Int8Pool<'a>,
    /// η: relative error bound of an f32 Gram entry.
    eta: f64,
    /// The f32 passes' instruction set (the entries' bits depend on it).
    isa: Isa,
}

impl<'a> Int8Scorer<'a, '_> {
    /// The int8 Gram row of pick `j` into stored row `slot`:
    /// gram[slot][i] = fl32((c_i · c_j) · w_i w_j), the integer dot exact.
    fn int8_gram_row(&self, ws: &mut Workspace<'_>, j: usize, slot: usize) {
        let (p, d) = (ws.pool, self.d);
        let codes = self.pool.codes;
        let cj = &codes[j * d..(j + 1) * d];
        let wj = ws.wscale[j];
        let row = &mut ws.gram[slot * ws.max_pool..slot * ws.max_pool + p];
        let mut buf = [0i32; BLOCK];
        let mut start = 0;
        while start < p {
            let n = BLOCK.min(p - start);
            let part = &codes[start * d..(start + n) * d];
            dots_i8_pass(part, d, cj, &mut buf[..n], codes.len());
            for r in 0..n {
                // w_i w_j is exact in f64; one f64 and one f32 rounding.
                row[start + r] = (buf[r] as f64 * (ws.wscale[start + r] * wj)) as f32;
            }
            start += n;
        }
    }

    /// Candidate i's quantization error ê_i = s_i m_i − w_i c_i as
    /// [`weighted_error_norm`] reads it (its f32 row, s_i, w_i, its codes).
    fn error_row(&self, ws: &Workspace<'_>, i: usize) -> ErrorRow<'a> {
        let d = self.d;
        ErrorRow {
            row: self.rows.row(i, d),
            scale: ws.scale[i],
            // An f32 value (`setup`).
            weight: ws.wscale[i] as f32,
            codes: &self.pool.codes[i * d..(i + 1) * d],
        }
    }

    /// out[r] = G_{rows[r], i} for pool rows `rows`, bit for bit the f32
    /// pass's entries: the pass's dot product kernel and order
    /// (`Rows::dots_indexed_row`, several rows per load of row i) and its
    /// scaling fl32(dot · fl32(s_j s_i)).
    fn f32_entries(&self, ws: &Workspace<'_>, i: usize, rows: &[usize], out: &mut [f32]) {
        Rows::F32(self.rows).dots_indexed_row(self.isa, self.d, i, rows, out);
        for (o, &j) in out.iter_mut().zip(rows) {
            *o *= ws.scale[j] * ws.scale[i];
        }
    }

    /// Caches the f32 entries G_{picks[pos], i} of candidate `i` for the
    /// positions `from..to` that lack one ([`Self::ensure_with`]).
    fn ensure(&self, ws: &mut Workspace<'_>, i: usize, from: usize, to: usize) {
        self.ensure_with(ws, i, to - from, |_, r| from + r);
    }

    /// Caches the f32 entries G_{picks[pos], i} of candidate `i` for the
    /// positions `position(ws, r)`, r < `count`, that lack one, up to
    /// eight at a time ([`Self::f32_entries`]: several pick rows per load
    /// of row i). The positions are read from the workspace one at a time
    /// (the refit's free set lives there).
    fn ensure_with(
        &self,
        ws: &mut Workspace<'_>,
        i: usize,
        count: usize,
        position: impl Fn(&Workspace<'_>, usize) -> usize,
    ) {
        let stride = ws.max_pool;
        let mut pos = [0usize; 8];
        let mut row = [0usize; 8];
        let mut n = 0;
        let flush = |ws: &mut Workspace<'_>, n: usize, pos: &[usize; 8], row: &[usize; 8]| {
            let mut out = [0.0f32; 8];
            self.f32_entries(ws, i, &row[..n], &mut out[..n]);
            for r in 0..n {
                ws.verified_gram[pos[r] * stride + i] = out[r];
            }
        };
        for r in 0..count {
            let a = position(ws, r);
            if ws.verified_gram[a * stride + i].is_nan() {
                pos[n] = a;
                row[n] = ws.picks[a];
                n += 1;
                if n == 8 {
                    flush(ws, n, &pos, &row);
                    n = 0;
                }
            }
        }
        if n > 0 {
            flush(ws, n, &pos, &row);
        }
    }

    /// The f32 pursuit's score of candidate `i` under `form`, computed as
    /// the f32 loops compute it (the same f32 operations in the same order).
    fn f32_score(&mut self, ws: &mut Workspace<'_>, i: usize, form: ScoreForm) -> f32 {
        let stride = ws.max_pool;
        match form {
            ScoreForm::Refresh { .. } => {
                let nf = ws.solver.nfree();
                self.ensure_with(ws, i, nf, |ws, a| ws.solver.free()[a]);
                let mut v = ws.rho[i];
                for a in 0..nf {
                    let g = ws.verified_gram[ws.solver.free()[a] * stride + i];
                    v -= ws.coef[a] * g;
                }
                v
            }
            ScoreForm::Centroid { c, n, .. } => {
                let acc = self.entry_sum(ws, i, n);
                ws.rho[i] - c * acc
            }
            ScoreForm::Relevance => ws.rho[i],
        }
    }

    /// Feature `check-bounds`: every available candidate's f32 score (the
    /// f32 pursuit's, bit for bit) lies at most at its upper bound
    /// Ũ_i + B_i (what excludes it) and at least at Ũ_i − B_i (what raises
    /// L), and L is at most the best f32 score. Computes the f32 entries of
    /// every candidate (cached as verification caches them: the same bits).
    #[cfg(feature = "check-bounds")]
    fn check_bounds(&mut self, ws: &mut Workspace<'_>, form: ScoreForm, lower: f64) {
        let mut best = f64::NEG_INFINITY;
        for i in 0..ws.pool {
            if !ws.states.is_available(i) {
                continue;
            }
            let (up, approx) = (self.scratch.upper[i], ws.u[i] as f64);
            let v = self.f32_score(ws, i, form) as f64;
            let low = approx - (up - approx);
            assert!(
                low <= v && v <= up,
                "check-bounds: int8 bound of candidate {i}: f32 score {v} outside [{low}, {up}]"
            );
            best = best.max(v);
        }
        assert!(
            lower <= best,
            "check-bounds: int8 L = {lower} above the best f32 score {best}"
        );
    }

    /// Σ_{pos<n} G_{picks[pos], i} of the f32 entries, summed in pick order
    /// in f32 as the f32 centroid loop's running sum does.
    fn entry_sum(&mut self, ws: &mut Workspace<'_>, i: usize, n: usize) -> f32 {
        self.ensure(ws, i, 0, n);
        let stride = ws.max_pool;
        let mut acc = 0.0f32;
        for pos in 0..n {
            acc += ws.verified_gram[pos * stride + i];
        }
        acc
    }

    /// The certified argmax (module docs) over the approximate scores in
    /// `ws.u`: the f32 pursuit's pick, its f32 score written to `ws.u`, and
    /// the number of candidates verified.
    fn certified_next(&mut self, ws: &mut Workspace<'_>, form: ScoreForm) -> Choice {
        let p = ws.pool;
        let Some(radius) = self.radius_parts(ws, form) else {
            // ScoreForm::Relevance: the pick is by ρ alone.
            return Choice {
                pick: argmax_available(&ws.rho[..p], &ws.states),
                verified: 0,
                rows_read: 0,
            };
        };
        // One sweep: the upper bounds Ũ_i + B_i into `Int8Scratch::upper`, and
        // L = max (Ũ_i − B_i). Unavailable candidates hold u = −∞ (the loops
        // mask them), so their lower bound is −∞ and their upper bound −∞
        // or NaN (ρ = −∞): never selected below.
        let mut lower = bounds(
            &ws.u[..p],
            &ws.err_bound[..p],
            &ws.norm_bound[..p],
            &ws.rho[..p],
            radius.coefficients(self.eta, radius.se),
            &mut self.scratch.upper[..p],
        );
        // More than one contender: the tighter error term (one f32 pass
        // over the free picks' rows and codes, `weighted_error_norm`)
        // usually excludes most of them, each of which would cost up to
        // |F| f32 entries to verify.
        // (The scan stops at the first contender past TIGHTEN_ABOVE.)
        let many = self.scratch.upper[..p]
            .iter()
            .filter(|&&up| up >= lower)
            .nth(TIGHTEN_ABOVE)
            .is_some();
        if many && lower > f64::NEG_INFINITY {
            let norm = self.weighted_error(ws, form, &radius);
            lower = bounds(
                &ws.u[..p],
                &ws.err_bound[..p],
                &ws.norm_bound[..p],
                &ws.rho[..p],
                radius.coefficients(self.eta, radius.se.min(norm)),
                &mut self.scratch.upper[..p],
            );
        }
        if lower == f64::NEG_INFINITY {
            return Choice {
                pick: None,
                verified: 0,
                rows_read: 0,
            };
        }
        #[cfg(feature = "check-bounds")]
        self.check_bounds(ws, form, lower);
        let (pick, count) = self.verify_contenders(ws, form, lower);
        Choice {
            pick,
            verified: count,
            rows_read: count,
        }
    }

    /// The sums over this step's picks that the radius B_i is made of
    /// ([`Radius`]; `None` for [`ScoreForm::Relevance`], which needs no
    /// bound).
    fn radius_parts(&self, ws: &Workspace<'_>, form: ScoreForm) -> Option<Radius> {
        let k = ws.max_budget;
        let eta = self.eta;
        // Σ ω n, Σ ω ‖m̃‖, Σ |ω| ‖ê‖, Σ |ω| (n + ‖ê‖) and ‖Σ ω m̂‖² over the
        // score's picks.
        let (mut sn, mut snb, mut se, mut spread) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        let (mu, x2, terms, a_rho, b_sum) = match form {
            ScoreForm::Refresh { .. } => {
                let nf = ws.solver.nfree();
                let free = &ws.solver.free()[..nf];
                let mut x2 = 0.0f64;
                for (a, &pa) in free.iter().enumerate() {
                    let j = ws.picks[pa];
                    let w = ws.coef[a] as f64;
                    let n = row_norm(&self.pool, ws, j);
                    sn += w * n;
                    snb += w * ws.norm_bound[j];
                    se += w.abs() * ws.err_bound[j];
                    spread += w.abs() * (n + ws.err_bound[j]);
                    let gss = &ws.solver.gss[pa * k..pa * k + k];
                    for (&c, &pb) in ws.coef[..nf].iter().zip(free) {
                        x2 += w * c as f64 * gss[pb];
                    }
                }
                // Two evaluations of |F| rounded products and subtractions.
                let r = (nf as f64 + 1.0) * 1.01 * U32;
                (1.0, x2, nf, 2.0 * r, r * 1.01)
            }
            ScoreForm::Centroid { c, n, total } => {
                for pos in 0..n {
                    let j = ws.picks[pos];
                    sn += row_norm(&self.pool, ws, j);
                    snb += ws.norm_bound[j];
                    se += ws.err_bound[j];
                    spread += row_norm(&self.pool, ws, j) + ws.err_bound[j];
                }
                // `total` sums f32 running sums of n entries each.
                let x2 = total + 2.0 * n as f64 * 1.01 * U32 * sn * sn;
                let c = c as f64;
                // Two sums of n entries, then fl(ρ − fl(c·acc)) twice.
                (
                    c,
                    x2,
                    n,
                    4.04 * U32,
                    c * 1.01 * (n as f64 * 1.01 * U32 + 2.02 * U32),
                )
            }
            ScoreForm::Relevance => return None,
        };
        let x2 = x2 + eta * sn * sn + (terms * terms + 2) as f64 * f64::EPSILON * snb * snb;
        Some(Radius {
            mu,
            x: libm::sqrt(x2.max(0.0)) * SAFE,
            sn: sn * SAFE,
            snb: snb * SAFE,
            se: se * SAFE,
            spread: spread * SAFE,
            terms,
            a_rho,
            b_sum,
        })
    }

    /// An upper bound of ‖Σ_a ω_a ê_a‖ over this step's picks
    /// ([`weighted_error_norm`]: one f32 pass over their rows and codes).
    fn weighted_error(&self, ws: &Workspace<'_>, form: ScoreForm, radius: &Radius) -> f64 {
        let (d, terms, spread) = (self.d, radius.terms, radius.spread);
        match form {
            ScoreForm::Refresh { .. } => weighted_error_norm(d, terms, spread, |a| {
                let j = ws.picks[ws.solver.free()[a]];
                (self.error_row(ws, j), ws.coef[a])
            }),
            _ => weighted_error_norm(d, terms, spread, |pos| {
                (self.error_row(ws, ws.picks[pos]), 1.0)
            }),
        }
    }

    /// The candidates whose upper bound (in `Int8Scratch::upper`) can reach L (usually a
    /// few dozen), verified in descending order of their upper bound until
    /// the next bound is below the best f32 score found (it, and every
    /// bound after it, can neither win nor tie). Returns the best (ties:
    /// lowest index) and the number verified.
    fn verify_contenders(
        &mut self,
        ws: &mut Workspace<'_>,
        form: ScoreForm,
        lower: f64,
    ) -> (Option<usize>, u32) {
        let p = ws.pool;
        let mut list = [0u32; LIST];
        let mut n = 0;
        for (i, &up) in self.scratch.upper[..p].iter().enumerate() {
            if up >= lower {
                if n < LIST {
                    list[n] = i as u32;
                }
                n += 1;
            }
        }
        let listed = n <= LIST;
        if !listed {
            // Too many to list: scan the whole pool instead.
            for up in self.scratch.upper[..p].iter_mut() {
                if (*up).partial_cmp(&lower).is_none_or(|o| o.is_lt()) {
                    *up = f64::NEG_INFINITY;
                }
            }
        }
        let mut count = 0u32;
        let mut best: Option<(usize, f32)> = None;
        loop {
            let mut top: Option<(usize, f64)> = None;
            let mut consider = |i: usize, up: f64| {
                if up > f64::NEG_INFINITY && top.is_none_or(|(_, t)| up > t) {
                    top = Some((i, up));
                }
            };
            if listed {
                for &i in &list[..n] {
                    consider(i as usize, self.scratch.upper[i as usize]);
                }
            } else {
                for (i, &up) in self.scratch.upper[..p].iter().enumerate() {
                    consider(i, up);
                }
            }
            let Some((i, up)) = top else { break };
            if best.is_some_and(|(_, b)| up < b as f64) {
                break;
            }
            debug_assert!(ws.states.is_available(i));
            self.scratch.upper[i] = f64::NEG_INFINITY;
            count += 1;
            let v = self.f32_score(ws, i, form);
            ws.u[i] = v;
            if best.is_none_or(|(bi, b)| v > b || (v == b && i < bi)) {
                best = Some((i, v));
            }
        }
        (best.map(|(i, _)| i), count)
    }
}

impl Scorer for Int8Scorer<'_, '_> {
    fn admit(&mut self, ws: &mut Workspace<'_>, i: usize, t: usize, keep_row: bool) {
        if keep_row {
            self.int8_gram_row(ws, i, t);
        }
        // The f32 entries of i with the earlier picks, batched (the loop
        // reads them for G_SS and the pick's score).
        self.ensure(ws, i, 0, t);
    }
    fn entry(&mut self, ws: &mut Workspace<'_>, pos: usize, i: usize) -> f32 {
        self.ensure(ws, i, pos, pos + 1);
        ws.verified_gram[pos * ws.max_pool + i]
    }
    fn diag(&mut self, ws: &mut Workspace<'_>, i: usize) -> f32 {
        let mut out = [0.0f32];
        self.f32_entries(ws, i, &[i], &mut out);
        out[0]
    }
    fn admit_centroid(&mut self, ws: &mut Workspace<'_>, i: usize, n: usize) -> (f32, f32) {
        let p = ws.pool;
        let acc_i = self.entry_sum(ws, i, n);
        self.int8_gram_row(ws, i, 0);
        let g_ii = self.diag(ws, i);
        kernels::add_assign(&mut ws.gram_sum[..p], &ws.gram[..p]);
        (acc_i, g_ii)
    }
    fn choose(&mut self, ws: &mut Workspace<'_>, form: ScoreForm) -> Choice {
        // The approximate scores from the int8 rows, then the certified
        // argmax over them.
        match form {
            ScoreForm::Relevance => {}
            ScoreForm::Refresh { picks } => refresh_scores(ws, picks),
            ScoreForm::Centroid { c, n, .. } => centroid_scores(ws, c, n),
        }
        self.certified_next(ws, form)
    }
}
