//! # mempursuit-wasm
//!
//! The `no_std` core of MemPursuit ([`mempursuit_core`]) compiled to
//! WebAssembly (`wasm32-unknown-unknown`, with or without `simd128`) behind a
//! small C ABI over linear memory: no wasm-bindgen, no JavaScript glue
//! generator. `wasm/mempursuit.mjs` is the JavaScript wrapper (Node.js ≥ 18
//! and browsers); `wasm/example.mjs` shows it in use.
//!
//! ## Protocol
//! 1. [`mp_selector_new`] creates a reusable selector (heap scratch that
//!    grows to the largest shape it has seen, like `mempursuit::Selector`).
//! 2. The caller reserves input and output buffers in linear memory with
//!    [`mp_alloc`] and writes the query (d × f32) and the candidates
//!    (row-major P × d f32) into them.
//! 3. [`mp_pursuit`], [`mp_top_k`] or [`mp_mmr`] writes the picks (u32 pool
//!    indices in entry order) and optionally the weights and per-step
//!    records, and returns the number of picks, or a negative [error
//!    code](#error-codes) with the message in [`mp_error_ptr`] /
//!    [`mp_error_len`].
//! 4. [`mp_free`] and [`mp_selector_free`] release the memory.
//!
//! Linear memory can grow during any call that allocates ([`mp_alloc`],
//! the first selection of a larger shape): JavaScript must re-create its
//! typed-array views of `memory.buffer` after every call.
//!
//! ## Error codes
//! | code | meaning |
//! |---:|---|
//! | [`ERR_ARGUMENT`] (−1) | a null or misaligned pointer, a length that overflows, unknown flag bits |
//! | [`ERR_INPUT`] (−2) | an input error of the core: shape, non-finite value, zero or out-of-range norm, relevance |
//! | [`ERR_OPTION`] (−3) | an invalid option: ridge, γ, MMR λ, stopping, tolerance |
//! | [`ERR_CAPACITY`] (−4) | the scratch for this shape overflows the address space or cannot be allocated |
//!
//! ## Determinism
//! The core's SIMD kernels fix their reduction order and wasm `simd128` has
//! no fused multiply-add, so a wasm build computes the same similarities as
//! a native build without FMA and picks the same memories
//! (`wasm/check.mjs` compares them on the HotpotQA fixture).

#![warn(missing_docs)]

use mempursuit_core::{
    mmr, pursuit, top_k, AtPoolOptimum, Error, Input, InputPolicy, InvalidCandidates, MmrOptions,
    Normalization, PursuitOptions, Relevance, ScratchSize, Step, StopReason, Stopping, Workspace,
};

/// Version of this C ABI; bumped on every incompatible change.
pub const ABI_VERSION: u32 = 1;

/// A null or misaligned pointer, a length that overflows, unknown flag bits.
pub const ERR_ARGUMENT: i32 = -1;
/// An input error of the core (shape, non-finite value, norm, relevance).
pub const ERR_INPUT: i32 = -2;
/// An invalid option (ridge, γ, MMR λ, stopping, tolerance).
pub const ERR_OPTION: i32 = -3;
/// The scratch for this shape overflows the address space or cannot be
/// allocated.
pub const ERR_CAPACITY: i32 = -4;

/// Flag: every vector must be unit norm ([`Normalization::RequireUnit`]);
/// without it non-unit vectors are used through their direction
/// ([`Normalization::Cosine`]).
pub const FLAG_REQUIRE_UNIT: u32 = 1 << 0;
/// Flag: unusable candidate rows are skipped and counted
/// ([`InvalidCandidates::Exclude`]); without it they are an error.
pub const FLAG_EXCLUDE_INVALID: u32 = 1 << 1;
/// Flag (pursuit only): the paper's adaptive stopping
/// ([`Stopping::PAPER_ADAPTIVE`]: τ = 1e-5, patience 2, ε = 1e-12, Eq. 7).
pub const FLAG_ADAPTIVE: u32 = 1 << 2;
/// Flag (pursuit only): stop at the pool optimum ([`AtPoolOptimum::Stop`]).
pub const FLAG_STOP_AT_OPTIMUM: u32 = 1 << 3;
/// Flag (pursuit only): fill by relevance after the pool optimum
/// ([`AtPoolOptimum::FillByRelevance`]). Exclusive with
/// [`FLAG_STOP_AT_OPTIMUM`].
pub const FLAG_FILL_AT_OPTIMUM: u32 = 1 << 4;
/// Flag: the pool is in first-stage order ([`Relevance::PoolOrder`]).
/// Exclusive with a non-null `relevance` pointer.
pub const FLAG_POOL_ORDER: u32 = 1 << 5;
const ALL_FLAGS: u32 = (1 << 6) - 1;

/// f64 values per step record written to `out_steps`: score, residual_sq,
/// improvement, fw_gap, nu (the fields of [`Step`] in that order).
pub const STEP_FIELDS: usize = 5;

/// Alignment of every [`mp_alloc`] block (enough for f64).
const ALLOC_ALIGN: usize = 8;

/// A reusable selector: heap scratch for the core's [`Workspace`], grown to
/// the largest shape seen, plus the outcome of the last call.
#[derive(Debug, Default)]
pub struct MpSelector {
    f32s: Vec<f32>,
    f64s: Vec<f64>,
    indices: Vec<usize>,
    steps: Vec<Step>,
    max_pool: usize,
    max_budget: usize,
    error: String,
    stop: StopReason,
    excluded: usize,
}

/// One failed call: its code and message.
struct Failure(i32, String);

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let code = match e {
            Error::InvalidRidge(_)
            | Error::InvalidGamma(_)
            | Error::InvalidMmrLambda(_)
            | Error::InvalidStopping
            | Error::InvalidOptimumTolerance(_) => ERR_OPTION,
            Error::CapacityExceeded { .. } => ERR_CAPACITY,
            _ => ERR_INPUT,
        };
        Failure(code, e.to_string())
    }
}

fn argument(msg: &str) -> Failure {
    Failure(ERR_ARGUMENT, msg.to_string())
}

/// Grows `v` to `n` elements without aborting on allocation failure.
fn grow<T: Clone>(v: &mut Vec<T>, n: usize, fill: T) -> Result<(), Failure> {
    if v.len() < n {
        v.try_reserve_exact(n - v.len()).map_err(|_| {
            Failure(
                ERR_CAPACITY,
                format!("cannot allocate {n} scratch elements"),
            )
        })?;
        v.resize(n, fill);
    }
    Ok(())
}

impl MpSelector {
    fn reserve(&mut self, pool: usize, budget: usize) -> Result<(), Failure> {
        let pool = pool.max(self.max_pool);
        let budget = budget.max(self.max_budget);
        let need = ScratchSize::for_capacity(pool, budget).ok_or_else(|| {
            Failure(
                ERR_CAPACITY,
                format!("scratch for P = {pool}, K = {budget} overflows the address space"),
            )
        })?;
        grow(&mut self.f32s, need.f32s, 0.0)?;
        grow(&mut self.f64s, need.f64s, 0.0)?;
        grow(&mut self.indices, need.indices, 0)?;
        grow(&mut self.steps, need.steps, Step::default())?;
        self.max_pool = pool;
        self.max_budget = budget;
        Ok(())
    }

    fn workspace(&mut self) -> Result<Workspace<'_>, Failure> {
        Ok(Workspace::from_buffers(
            self.max_pool,
            self.max_budget,
            &mut self.f32s,
            &mut self.f64s,
            &mut self.indices,
            &mut self.steps,
        )?)
    }
}

/// The raw arguments shared by the three selectors.
struct Call {
    query: *const f32,
    dim: usize,
    candidates: *const f32,
    pool: usize,
    relevance: *const f32,
    flags: u32,
    budget: usize,
    out_picks: *mut u32,
    out_weights: *mut f64,
    out_steps: *mut f64,
}

/// A slice over caller memory; `len` = 0 gives an empty slice whatever `ptr`.
///
/// # Safety
/// For `len` > 0, `ptr` must point to `len` readable, initialized `T`s that
/// nothing mutates during the call (checked here: non-null, aligned, and
/// `len · size_of::<T>()` ≤ `isize::MAX`).
unsafe fn slice<'a, T>(ptr: *const T, len: usize, what: &str) -> Result<&'a [T], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    check_ptr(ptr, len, what)?;
    // SAFETY: non-null, aligned and in range (checked); readable and
    // unaliased by the caller's contract.
    Ok(unsafe { core::slice::from_raw_parts(ptr, len) })
}

/// A mutable slice over caller memory; see [`slice`].
///
/// # Safety
/// As [`slice`], and the memory must be writable and not aliased by any
/// other argument.
unsafe fn slice_mut<'a, T>(ptr: *mut T, len: usize, what: &str) -> Result<&'a mut [T], Failure> {
    if len == 0 {
        return Ok(&mut []);
    }
    check_ptr(ptr.cast_const(), len, what)?;
    // SAFETY: as in `slice`, plus writable and unaliased (caller contract).
    Ok(unsafe { core::slice::from_raw_parts_mut(ptr, len) })
}

fn check_ptr<T>(ptr: *const T, len: usize, what: &str) -> Result<(), Failure> {
    if ptr.is_null() {
        return Err(argument(&format!(
            "{what}: null pointer for {len} elements"
        )));
    }
    if !ptr.is_aligned() {
        return Err(argument(&format!("{what}: pointer is not aligned")));
    }
    let fits = len
        .checked_mul(core::mem::size_of::<T>())
        .is_some_and(|b| b <= isize::MAX as usize);
    if !fits {
        return Err(argument(&format!(
            "{what}: {len} elements overflow the address space"
        )));
    }
    Ok(())
}

fn policy(flags: u32) -> InputPolicy {
    InputPolicy {
        normalization: if flags & FLAG_REQUIRE_UNIT != 0 {
            Normalization::RequireUnit
        } else {
            Normalization::Cosine
        },
        invalid_candidates: if flags & FLAG_EXCLUDE_INVALID != 0 {
            InvalidCandidates::Exclude
        } else {
            InvalidCandidates::Reject
        },
    }
}

enum Which {
    Pursuit { ridge: f64, gamma: f64 },
    TopK,
    Mmr { lambda: f64 },
}

/// Validates the raw call, runs the selector and copies the result out.
///
/// # Safety
/// The pointer contract of [`mp_pursuit`].
unsafe fn run(sel: *mut MpSelector, which: Which, c: &Call) -> i32 {
    // SAFETY: `sel` comes from `mp_selector_new` (caller contract).
    let Some(sel) = (unsafe { sel.as_mut() }) else {
        return ERR_ARGUMENT;
    };
    // SAFETY: forwarded caller contract.
    match unsafe { run_inner(sel, which, c) } {
        Ok(n) => {
            sel.error.clear();
            n
        }
        Err(Failure(code, msg)) => {
            sel.error = msg;
            sel.stop = StopReason::Budget;
            sel.excluded = 0;
            code
        }
    }
}

/// # Safety
/// The pointer contract of [`mp_pursuit`].
unsafe fn run_inner(sel: &mut MpSelector, which: Which, c: &Call) -> Result<i32, Failure> {
    if c.flags & !ALL_FLAGS != 0 {
        return Err(argument(&format!(
            "unknown flag bits {:#x}",
            c.flags & !ALL_FLAGS
        )));
    }
    if c.flags & FLAG_STOP_AT_OPTIMUM != 0 && c.flags & FLAG_FILL_AT_OPTIMUM != 0 {
        return Err(argument(
            "FLAG_STOP_AT_OPTIMUM and FLAG_FILL_AT_OPTIMUM exclude each other",
        ));
    }
    if c.flags & FLAG_POOL_ORDER != 0 && !c.relevance.is_null() {
        return Err(argument(
            "FLAG_POOL_ORDER and a relevance vector exclude each other",
        ));
    }
    // Picks are written as u32 and the count returned as i32.
    if c.pool > i32::MAX as usize {
        return Err(argument("pool sizes above 2^31 - 1 are not supported"));
    }
    let values = c
        .pool
        .checked_mul(c.dim)
        .ok_or_else(|| argument("P × d overflows the address space"))?;
    // SAFETY (all four): caller contract of `mp_pursuit`; checked for null,
    // alignment and size by `slice`.
    let query = unsafe { slice(c.query, c.dim, "query") }?;
    let candidates = unsafe { slice(c.candidates, values, "candidates") }?;
    let relevance = if c.relevance.is_null() {
        if c.flags & FLAG_POOL_ORDER != 0 {
            Relevance::PoolOrder
        } else {
            Relevance::Similarity
        }
    } else {
        Relevance::Scores(unsafe { slice(c.relevance, c.pool, "relevance") }?)
    };
    let input = Input::new(query, candidates).with_relevance(relevance);
    let n_max = c.budget.min(c.pool);
    let out_picks = unsafe { slice_mut(c.out_picks, n_max, "out_picks") }?;
    sel.reserve(c.pool, n_max)?;
    let input_policy = policy(c.flags);
    let mut ws = sel.workspace()?;
    let result = match which {
        Which::Pursuit { ridge, gamma } => {
            let options = PursuitOptions {
                ridge,
                gamma,
                stopping: if c.flags & FLAG_ADAPTIVE != 0 {
                    Stopping::PAPER_ADAPTIVE
                } else {
                    Stopping::FixedBudget
                },
                at_pool_optimum: if c.flags & FLAG_STOP_AT_OPTIMUM != 0 {
                    AtPoolOptimum::Stop
                } else if c.flags & FLAG_FILL_AT_OPTIMUM != 0 {
                    AtPoolOptimum::FillByRelevance
                } else {
                    AtPoolOptimum::Continue
                },
                input: input_policy,
                ..PursuitOptions::PAPER
            };
            pursuit(&input, c.budget, &options, &mut ws)
        }
        Which::TopK => top_k(&input, c.budget, &input_policy, &mut ws),
        Which::Mmr { lambda } => mmr(
            &input,
            c.budget,
            &MmrOptions {
                lambda,
                input: input_policy,
            },
            &mut ws,
        ),
    };
    let s = result?;
    let n = s.len();
    for (out, &i) in out_picks.iter_mut().zip(s.picks()) {
        // i < P ≤ i32::MAX (checked above).
        *out = i as u32;
    }
    if !c.out_weights.is_null() {
        let w = unsafe { slice_mut(c.out_weights, n, "out_weights") }?;
        let weights = s.weights();
        for (a, out) in w.iter_mut().enumerate() {
            // The baselines have no weights: write 0.
            *out = weights.get(a).copied().unwrap_or(0.0);
        }
    }
    if !c.out_steps.is_null() {
        let len = n
            .checked_mul(STEP_FIELDS)
            .ok_or_else(|| argument("out_steps length overflows"))?;
        let out = unsafe { slice_mut(c.out_steps, len, "out_steps") }?;
        for (chunk, st) in out.chunks_exact_mut(STEP_FIELDS).zip(s.steps()) {
            chunk.copy_from_slice(&[st.score, st.residual_sq, st.improvement, st.fw_gap, st.nu]);
        }
    }
    let (stop, excluded) = (s.stop_reason(), s.excluded_count());
    sel.stop = stop;
    sel.excluded = excluded;
    // n ≤ P ≤ i32::MAX.
    Ok(n as i32)
}

/// The version of this C ABI ([`ABI_VERSION`]).
#[unsafe(no_mangle)]
pub extern "C" fn mp_abi_version() -> u32 {
    ABI_VERSION
}

/// Allocates `bytes` bytes of linear memory, 8-aligned (room for f32, f64
/// and u32 arrays). Returns null for 0 bytes or when the allocation fails.
/// Release with [`mp_free`] and the same size. Memory may grow: re-create
/// JavaScript views afterwards.
#[unsafe(no_mangle)]
pub extern "C" fn mp_alloc(bytes: usize) -> *mut u8 {
    match std::alloc::Layout::from_size_align(bytes, ALLOC_ALIGN) {
        // SAFETY: the layout has a non-zero size.
        Ok(layout) if bytes > 0 => unsafe { std::alloc::alloc(layout) },
        _ => core::ptr::null_mut(),
    }
}

/// Releases a block from [`mp_alloc`]. Null is ignored.
///
/// # Safety
/// `ptr` must come from [`mp_alloc`] called with the same `bytes`, and not
/// have been freed already.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_free(ptr: *mut u8, bytes: usize) {
    if ptr.is_null() {
        return;
    }
    if let Ok(layout) = std::alloc::Layout::from_size_align(bytes, ALLOC_ALIGN) {
        // SAFETY: allocated by `mp_alloc` with this layout (caller contract).
        unsafe { std::alloc::dealloc(ptr, layout) }
    }
}

/// A new selector with empty scratch (allocated on first use, then reused).
/// Never null. Release with [`mp_selector_free`].
#[unsafe(no_mangle)]
pub extern "C" fn mp_selector_new() -> *mut MpSelector {
    Box::into_raw(Box::default())
}

/// Releases a selector and its scratch. Null is ignored.
///
/// # Safety
/// `sel` must come from [`mp_selector_new`] and not have been freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_selector_free(sel: *mut MpSelector) {
    if !sel.is_null() {
        // SAFETY: created by `Box::into_raw` in `mp_selector_new`.
        drop(unsafe { Box::from_raw(sel) });
    }
}

/// MemPursuit and its relevance-scaled family ([`mempursuit_core::pursuit`]):
/// `ridge` = λ (κ; paper 1e-10; `Infinity` = centroid pursuit), `gamma` =
/// γ ∈ (0, 1] (paper 1).
///
/// * `query`: d f32; `candidates`: row-major P × d f32 (`pool` = P).
/// * `relevance`: null (ρ = b, or first-stage order with
///   [`FLAG_POOL_ORDER`]) or P f32 first-stage scores.
/// * `flags`: `FLAG_*` bits.
/// * `budget`: K; at most min(K, P) picks are made.
/// * `out_picks`: room for min(K, P) u32 (pool indices, entry order).
/// * `out_weights`: null, or room for min(K, P) f64 (simplex weights).
/// * `out_steps`: null, or room for min(K, P) × [`STEP_FIELDS`] f64.
///
/// Returns the number of picks n (the first n entries of each output are
/// written), or a negative error code (see the crate docs) with the message
/// in [`mp_error_ptr`]. After success, [`mp_stop_reason`] and
/// [`mp_excluded_count`] describe the result.
///
/// # Safety
/// `sel` from [`mp_selector_new`]; every non-null pointer must point to
/// memory of the stated length (readable for inputs, writable for outputs)
/// that no other argument overlaps. Null and misaligned pointers are
/// reported as [`ERR_ARGUMENT`], not dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_pursuit(
    sel: *mut MpSelector,
    ridge: f64,
    gamma: f64,
    flags: u32,
    query: *const f32,
    dim: usize,
    candidates: *const f32,
    pool: usize,
    relevance: *const f32,
    budget: usize,
    out_picks: *mut u32,
    out_weights: *mut f64,
    out_steps: *mut f64,
) -> i32 {
    let call = Call {
        query,
        dim,
        candidates,
        pool,
        relevance,
        flags,
        budget,
        out_picks,
        out_weights,
        out_steps,
    };
    // SAFETY: forwarded caller contract.
    unsafe { run(sel, Which::Pursuit { ridge, gamma }, &call) }
}

/// Top-K by relevance ([`mempursuit_core::top_k`]). Arguments as for
/// [`mp_pursuit`] without the pursuit options and weights; `out_steps`
/// receives the score (ρ of each pick) in its first field, zeros elsewhere.
///
/// # Safety
/// As for [`mp_pursuit`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_top_k(
    sel: *mut MpSelector,
    flags: u32,
    query: *const f32,
    dim: usize,
    candidates: *const f32,
    pool: usize,
    relevance: *const f32,
    budget: usize,
    out_picks: *mut u32,
    out_steps: *mut f64,
) -> i32 {
    let call = Call {
        query,
        dim,
        candidates,
        pool,
        relevance,
        flags,
        budget,
        out_picks,
        out_weights: core::ptr::null_mut(),
        out_steps,
    };
    // SAFETY: forwarded caller contract.
    unsafe { run(sel, Which::TopK, &call) }
}

/// Maximal marginal relevance ([`mempursuit_core::mmr`]) with trade-off
/// `lambda` ∈ [0, 1] (1 = top-K; paper 0.5). Arguments as for [`mp_top_k`].
///
/// # Safety
/// As for [`mp_pursuit`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_mmr(
    sel: *mut MpSelector,
    lambda: f64,
    flags: u32,
    query: *const f32,
    dim: usize,
    candidates: *const f32,
    pool: usize,
    relevance: *const f32,
    budget: usize,
    out_picks: *mut u32,
    out_steps: *mut f64,
) -> i32 {
    let call = Call {
        query,
        dim,
        candidates,
        pool,
        relevance,
        flags,
        budget,
        out_picks,
        out_weights: core::ptr::null_mut(),
        out_steps,
    };
    // SAFETY: forwarded caller contract.
    unsafe { run(sel, Which::Mmr { lambda }, &call) }
}

/// Pointer to the UTF-8 message of the last failed call on `sel` (not
/// NUL-terminated; length [`mp_error_len`]). Valid until the next call on
/// `sel`. Null for a null `sel`.
///
/// # Safety
/// `sel` null or from [`mp_selector_new`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_error_ptr(sel: *const MpSelector) -> *const u8 {
    // SAFETY: caller contract.
    unsafe { sel.as_ref() }.map_or(core::ptr::null(), |s| s.error.as_ptr())
}

/// Length in bytes of the last error message on `sel` (0 after a success).
///
/// # Safety
/// `sel` null or from [`mp_selector_new`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_error_len(sel: *const MpSelector) -> usize {
    // SAFETY: caller contract.
    unsafe { sel.as_ref() }.map_or(0, |s| s.error.len())
}

/// Why the last successful selection on `sel` ended: 0 budget, 1 adaptive
/// stopping, 2 pool exhausted, 3 pool optimum ([`StopReason`]).
///
/// # Safety
/// `sel` null or from [`mp_selector_new`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_stop_reason(sel: *const MpSelector) -> u32 {
    // SAFETY: caller contract.
    unsafe { sel.as_ref() }.map_or(0, |s| match s.stop {
        StopReason::Adaptive => 1,
        StopReason::PoolExhausted => 2,
        StopReason::PoolOptimum => 3,
        _ => 0,
    })
}

/// Number of candidate rows the last successful selection on `sel` excluded
/// (only with [`FLAG_EXCLUDE_INVALID`]).
///
/// # Safety
/// `sel` null or from [`mp_selector_new`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_excluded_count(sel: *const MpSelector) -> usize {
    // SAFETY: caller contract.
    unsafe { sel.as_ref() }.map_or(0, |s| s.excluded)
}

/// [`ScratchSize::bytes`] for capacity (`max_pool`, `max_budget`) on this
/// target, or `usize::MAX` if it overflows.
#[unsafe(no_mangle)]
pub extern "C" fn mp_scratch_bytes(max_pool: usize, max_budget: usize) -> usize {
    ScratchSize::for_capacity(max_pool, max_budget).map_or(usize::MAX, |s| s.bytes())
}

/// `size_of::<Step>()` on this target (80 on wasm32, 96 on 64-bit hosts).
#[unsafe(no_mangle)]
pub extern "C" fn mp_step_size() -> usize {
    core::mem::size_of::<Step>()
}

/// The capacities (P_max, K_max) of the size table in
/// `docs/PORTABILITY.md`, in its order.
pub const TABLE_CAPACITIES: [(usize, usize); 7] = [
    (32, 8),
    (64, 16),
    (128, 16),
    (200, 20),
    (200, 20),
    (500, 50),
    (1000, 100),
];

/// `size_of::<FixedWorkspace<P, K>>()` on this target for row `row` of
/// [`TABLE_CAPACITIES`], or 0 past the end: lets `wasm/check.mjs` confirm
/// the 32-bit column of the size table on a real 32-bit target.
#[unsafe(no_mangle)]
pub extern "C" fn mp_fixed_workspace_size(row: u32) -> usize {
    use core::mem::size_of;
    use mempursuit_core::FixedWorkspace;
    match row {
        0 => size_of::<FixedWorkspace<32, 8>>(),
        1 => size_of::<FixedWorkspace<64, 16>>(),
        2 => size_of::<FixedWorkspace<128, 16>>(),
        3 | 4 => size_of::<FixedWorkspace<200, 20>>(),
        5 => size_of::<FixedWorkspace<500, 50>>(),
        6 => size_of::<FixedWorkspace<1000, 100>>(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::ptr::{null, null_mut};

    fn error(sel: *const MpSelector) -> String {
        unsafe {
            let bytes = core::slice::from_raw_parts(mp_error_ptr(sel), mp_error_len(sel));
            String::from_utf8(bytes.to_vec()).unwrap()
        }
    }

    /// The crate-level example of the core: two paraphrases of fact A and
    /// one statement of fact B.
    fn data() -> ([f32; 2], [f32; 6]) {
        let s = core::f32::consts::FRAC_1_SQRT_2;
        ([s, s], [0.9950, 0.0998, 0.9998, 0.0200, 0.0, 1.0])
    }

    #[test]
    fn pursuit_top_k_and_mmr_through_the_c_abi() {
        let (q, c) = data();
        let sel = mp_selector_new();
        let mut picks = [u32::MAX; 3];
        let mut w = [f64::NAN; 3];
        let mut steps = [f64::NAN; 3 * STEP_FIELDS];
        let n = unsafe {
            mp_pursuit(
                sel,
                1e-10,
                1.0,
                0,
                q.as_ptr(),
                2,
                c.as_ptr(),
                3,
                null(),
                2,
                picks.as_mut_ptr(),
                w.as_mut_ptr(),
                steps.as_mut_ptr(),
            )
        };
        assert_eq!(n, 2, "{}", error(sel));
        assert_eq!(&picks[..2], &[0, 2]);
        assert_eq!(picks[2], u32::MAX, "only n entries are written");
        assert!((w[0] + w[1] - 1.0).abs() < 1e-12 && w[0] > 0.0 && w[1] > 0.0);
        // Step 1: score = b_0 = cos(q, m_0); residual after step 2 < after step 1.
        let b0 = (0.9950f64 + 0.0998) * core::f64::consts::FRAC_1_SQRT_2;
        assert!((steps[0] - b0).abs() < 1e-6);
        assert!(steps[STEP_FIELDS + 1] < steps[1]);
        assert_eq!(unsafe { mp_stop_reason(sel) }, 0);

        let n = unsafe {
            mp_top_k(
                sel,
                0,
                q.as_ptr(),
                2,
                c.as_ptr(),
                3,
                null(),
                2,
                picks.as_mut_ptr(),
                null_mut(),
            )
        };
        assert_eq!((n, &picks[..2]), (2, &[0u32, 1][..]));

        let n = unsafe {
            mp_mmr(
                sel,
                0.5,
                0,
                q.as_ptr(),
                2,
                c.as_ptr(),
                3,
                null(),
                2,
                picks.as_mut_ptr(),
                null_mut(),
            )
        };
        assert_eq!((n, &picks[..2]), (2, &[0u32, 2][..]));
        // Centroid pursuit.
        let n = unsafe {
            mp_pursuit(
                sel,
                f64::INFINITY,
                0.5,
                0,
                q.as_ptr(),
                2,
                c.as_ptr(),
                3,
                null(),
                3,
                picks.as_mut_ptr(),
                w.as_mut_ptr(),
                null_mut(),
            )
        };
        assert_eq!(n, 3);
        assert_eq!(w, [1.0 / 3.0; 3]);
        unsafe { mp_selector_free(sel) };
    }

    #[test]
    fn errors_are_codes_with_messages() {
        let (q, c) = data();
        let sel = mp_selector_new();
        let mut picks = [0u32; 3];
        let call = |ridge: f64, gamma: f64, flags: u32, query: *const f32, out: *mut u32| unsafe {
            mp_pursuit(
                sel,
                ridge,
                gamma,
                flags,
                query,
                2,
                c.as_ptr(),
                3,
                null(),
                2,
                out,
                null_mut(),
                null_mut(),
            )
        };
        assert_eq!(
            call(1e-10, 2.0, 0, q.as_ptr(), picks.as_mut_ptr()),
            ERR_OPTION
        );
        assert!(
            error(sel).contains("gamma 2 must be in (0, 1]"),
            "{}",
            error(sel)
        );
        assert_eq!(
            call(1e-10, 1.0, 0, null(), picks.as_mut_ptr()),
            ERR_ARGUMENT
        );
        assert!(error(sel).contains("query: null pointer"));
        assert_eq!(call(1e-10, 1.0, 0, q.as_ptr(), null_mut()), ERR_ARGUMENT);
        assert_eq!(
            call(1e-10, 1.0, 1 << 7, q.as_ptr(), picks.as_mut_ptr()),
            ERR_ARGUMENT
        );
        assert!(error(sel).contains("unknown flag bits 0x80"));
        let nan = [f32::NAN, 0.0];
        assert_eq!(
            call(1e-10, 1.0, 0, nan.as_ptr(), picks.as_mut_ptr()),
            ERR_INPUT
        );
        assert_eq!(error(sel), "query: element 0 is not finite (NaN)");
        // Misaligned.
        let bytes = [0u8; 16];
        let odd = unsafe { bytes.as_ptr().add(1) }.cast::<f32>();
        assert_eq!(call(1e-10, 1.0, 0, odd, picks.as_mut_ptr()), ERR_ARGUMENT);
        assert!(error(sel).contains("not aligned"));
        // A success clears the message.
        assert_eq!(call(1e-10, 1.0, 0, q.as_ptr(), picks.as_mut_ptr()), 2);
        assert_eq!(unsafe { mp_error_len(sel) }, 0);
        unsafe { mp_selector_free(sel) };
        assert_eq!(
            unsafe {
                mp_pursuit(
                    null_mut(),
                    0.0,
                    1.0,
                    0,
                    null(),
                    0,
                    null(),
                    0,
                    null(),
                    0,
                    null_mut(),
                    null_mut(),
                    null_mut(),
                )
            },
            ERR_ARGUMENT
        );
    }

    #[test]
    fn flags_reach_the_core() {
        let (q, mut c) = data();
        c[2] = f32::NAN; // row 1 unusable
        let sel = mp_selector_new();
        let mut picks = [0u32; 3];
        let run = |flags: u32, picks: &mut [u32; 3]| unsafe {
            mp_top_k(
                sel,
                flags,
                q.as_ptr(),
                2,
                c.as_ptr(),
                3,
                null(),
                3,
                picks.as_mut_ptr(),
                null_mut(),
            )
        };
        assert_eq!(run(0, &mut picks), ERR_INPUT);
        assert_eq!(error(sel), "candidate 1: element 0 is not finite (NaN)");
        assert_eq!(run(FLAG_EXCLUDE_INVALID, &mut picks), 2);
        assert_eq!(&picks[..2], &[0, 2]);
        assert_eq!(unsafe { mp_excluded_count(sel) }, 1);
        assert_eq!(unsafe { mp_stop_reason(sel) }, 2);
        unsafe { mp_selector_free(sel) };
    }

    #[test]
    fn alloc_and_sizes() {
        let p = mp_alloc(24);
        assert!(!p.is_null() && p.align_offset(8) == 0);
        unsafe { mp_free(p, 24) };
        assert!(mp_alloc(0).is_null());
        assert_eq!(mp_abi_version(), ABI_VERSION);
        assert_eq!(mp_scratch_bytes(usize::MAX / 3, 4), usize::MAX);
        assert_eq!(
            mp_scratch_bytes(64, 16),
            ScratchSize::for_capacity(64, 16).unwrap().bytes()
        );
        assert_eq!(mp_fixed_workspace_size(7), 0);
        for row in 0..TABLE_CAPACITIES.len() as u32 {
            let (p, k) = TABLE_CAPACITIES[row as usize];
            let scratch = mp_scratch_bytes(p, k);
            assert_eq!(mp_fixed_workspace_size(row), scratch.div_ceil(8) * 8);
        }
    }
}
