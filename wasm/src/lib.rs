//! # mempursuit-wasm
//!
//! MemPursuit compiled to WebAssembly (`wasm32-unknown-unknown`, with or
//! without `simd128`) behind a small C ABI over linear memory: no
//! wasm-bindgen, no JavaScript glue generator. The npm package `mempursuit`
//! (`wasm/package.json`, `wasm/mempursuit.js`, `wasm/mempursuit.d.ts`) is
//! the JavaScript API over it, for Node.js ≥ 18, browsers and bundlers.
//!
//! The selection itself is the core's single dispatch, [`Method::run`], on
//! the workspace of a heap-backed [`mempursuit::Selector`] (grown to the
//! largest shape seen, with allocation failures reported, not trapped):
//! this crate only translates flags and pointers.
//!
//! ## Protocol
//! 1. [`mp_selector_new`] creates a reusable selector.
//! 2. The caller reserves input and output buffers in linear memory with
//!    [`mp_alloc`] and writes the query (d f32) and the candidates
//!    (row-major P × d f32) into them.
//! 3. [`mp_select`] runs one [method](#methods) and writes the picks (u32
//!    pool indices in entry order) and optionally the weights and per-step
//!    records, and returns the number of picks, or a negative [error
//!    code](#error-codes) with the message in [`mp_error_ptr`] /
//!    [`mp_error_len`].
//! 4. [`mp_stop_reason`], [`mp_excluded_count`] and [`mp_excluded_ptr`]
//!    describe the last selection.
//! 5. [`mp_free`] and [`mp_selector_free`] release the memory.
//!
//! Linear memory can grow during any call that allocates ([`mp_alloc`],
//! the first selection of a larger shape): JavaScript must re-create its
//! typed-array views of `memory.buffer` after every call.
//!
//! ## Methods
//! | `method` | selector | parameters used |
//! |---:|---|---|
//! | [`METHOD_PURSUIT`] (0) | MemPursuit and its family (`ridge` = ∞: centroid pursuit) | `ridge`, `gamma`, [`FLAG_ADAPTIVE`], [`FLAG_STOP_AT_OPTIMUM`], [`FLAG_FILL_AT_OPTIMUM`] |
//! | [`METHOD_TOP_K`] (1) | top-K by relevance | none |
//! | [`METHOD_MMR`] (2) | maximal marginal relevance | `mmr_lambda` |
//!
//! ## Error codes
//! | code | meaning |
//! |---:|---|
//! | [`ERR_ARGUMENT`] (−1) | a null or misaligned pointer, an output too small, a length that overflows, an unknown method or flag bits |
//! | [`ERR_INPUT`] (−2) | an input error of the core: shape, non-finite value, zero or out-of-range norm, relevance |
//! | [`ERR_OPTION`] (−3) | an invalid option: ridge, γ, MMR λ, stopping, tolerance |
//! | [`ERR_CAPACITY`] (−4) | the scratch for this shape overflows the address space or cannot be allocated |
//!
//! The messages of [`ERR_INPUT`] and [`ERR_OPTION`] are the core's
//! [`Error`] messages, word for word.
//!
//! ## Determinism
//! The core's SIMD kernels fix their reduction order and wasm `simd128` has
//! no fused multiply-add, so a wasm build computes the same similarities as
//! a native build without FMA and picks the same memories (`wasm/test/`
//! compares them on the HotpotQA fixture).
//!
//! ## Versions
//! ABI 2 replaced ABI 1's `mp_pursuit`, `mp_top_k` and `mp_mmr` (which took
//! P instead of the candidates' length, so shape errors had to be
//! reproduced in JavaScript) by [`mp_select`].

#![warn(missing_docs)]

use mempursuit::{
    AtPoolOptimum, Error, Input, InputPolicy, InvalidCandidates, Method, MmrOptions, Normalization,
    PursuitOptions, Relevance, ScratchSize, Selector, Step, StopReason, Stopping,
};

/// Version of this C ABI; bumped on every incompatible change.
pub const ABI_VERSION: u32 = 2;

/// A null or misaligned pointer, an output too small, a length that
/// overflows, an unknown method or flag bits.
pub const ERR_ARGUMENT: i32 = -1;
/// An input error of the core (shape, non-finite value, norm, relevance).
pub const ERR_INPUT: i32 = -2;
/// An invalid option (ridge, γ, MMR λ, stopping, tolerance).
pub const ERR_OPTION: i32 = -3;
/// The scratch for this shape overflows the address space or cannot be
/// allocated.
pub const ERR_CAPACITY: i32 = -4;

/// `method`: MemPursuit and its relevance-scaled family
/// ([`Method::Pursuit`]); `ridge` = ∞ is centroid pursuit.
pub const METHOD_PURSUIT: u32 = 0;
/// `method`: top-K by relevance ([`Method::TopK`]).
pub const METHOD_TOP_K: u32 = 1;
/// `method`: maximal marginal relevance ([`Method::Mmr`]).
pub const METHOD_MMR: u32 = 2;

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
/// Exclusive with [`FLAG_RELEVANCE`].
pub const FLAG_POOL_ORDER: u32 = 1 << 5;
/// Flag: `relevance` / `relevance_len` hold first-stage scores
/// ([`Relevance::Scores`]; the core checks that there are P of them).
/// Without it (and without [`FLAG_POOL_ORDER`]) ρ = b and `relevance` must
/// be null with length 0.
pub const FLAG_RELEVANCE: u32 = 1 << 6;
const ALL_FLAGS: u32 = (1 << 7) - 1;
const PURSUIT_FLAGS: u32 = FLAG_ADAPTIVE | FLAG_STOP_AT_OPTIMUM | FLAG_FILL_AT_OPTIMUM;

/// f64 values per step record written to `out_steps`: score, residual_sq,
/// improvement, fw_gap, nu (the fields of [`Step`] in that order).
pub const STEP_FIELDS: usize = 5;

/// Alignment of every [`mp_alloc`] block (enough for f64).
const ALLOC_ALIGN: usize = 8;

/// A reusable selector: a [`mempursuit::Selector`] (scratch grown to the
/// largest shape seen) plus the outcome of the last call.
#[derive(Debug, Default)]
pub struct MpSelector {
    selector: Selector,
    error: String,
    stop: StopReason,
    /// The rows the last selection excluded, ascending (capacity reused).
    excluded: Vec<u32>,
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
            Error::CapacityExceeded { .. }
            | Error::BufferTooShort { .. }
            | Error::WorkspaceKind { .. }
            | Error::ScratchOverflow { .. } => ERR_CAPACITY,
            _ => ERR_INPUT,
        };
        Failure(code, e.to_string())
    }
}

fn argument(msg: &str) -> Failure {
    Failure(ERR_ARGUMENT, msg.to_string())
}

/// The raw arguments of [`mp_select`].
struct Call {
    method: u32,
    ridge: f64,
    gamma: f64,
    mmr_lambda: f64,
    flags: u32,
    query: *const f32,
    query_len: usize,
    candidates: *const f32,
    candidates_len: usize,
    relevance: *const f32,
    relevance_len: usize,
    budget: usize,
    out_picks: *mut u32,
    out_weights: *mut f64,
    out_steps: *mut f64,
    out_capacity: usize,
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

/// The [`Method`] of a call: the method code, its parameters and flags.
fn method(c: &Call) -> Result<Method, Failure> {
    let flags = c.flags;
    if flags & !ALL_FLAGS != 0 {
        return Err(argument(&format!(
            "unknown flag bits {:#x}",
            flags & !ALL_FLAGS
        )));
    }
    if flags & FLAG_STOP_AT_OPTIMUM != 0 && flags & FLAG_FILL_AT_OPTIMUM != 0 {
        return Err(argument(
            "FLAG_STOP_AT_OPTIMUM and FLAG_FILL_AT_OPTIMUM exclude each other",
        ));
    }
    if flags & FLAG_POOL_ORDER != 0 && flags & FLAG_RELEVANCE != 0 {
        return Err(argument(
            "FLAG_POOL_ORDER and FLAG_RELEVANCE exclude each other",
        ));
    }
    let input = InputPolicy {
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
    };
    if c.method != METHOD_PURSUIT && flags & PURSUIT_FLAGS != 0 {
        return Err(argument(
            "FLAG_ADAPTIVE, FLAG_STOP_AT_OPTIMUM and FLAG_FILL_AT_OPTIMUM apply to METHOD_PURSUIT only",
        ));
    }
    Ok(match c.method {
        METHOD_PURSUIT => Method::Pursuit(PursuitOptions {
            ridge: c.ridge,
            gamma: c.gamma,
            stopping: if flags & FLAG_ADAPTIVE != 0 {
                Stopping::PAPER_ADAPTIVE
            } else {
                Stopping::FixedBudget
            },
            at_pool_optimum: if flags & FLAG_STOP_AT_OPTIMUM != 0 {
                AtPoolOptimum::Stop
            } else if flags & FLAG_FILL_AT_OPTIMUM != 0 {
                AtPoolOptimum::FillByRelevance
            } else {
                AtPoolOptimum::Continue
            },
            input,
            ..PursuitOptions::PAPER
        }),
        METHOD_TOP_K => Method::TopK(input),
        METHOD_MMR => Method::Mmr(MmrOptions {
            lambda: c.mmr_lambda,
            input,
        }),
        other => {
            return Err(argument(&format!(
                "unknown method {other} (0 pursuit, 1 top-K, 2 MMR)"
            )))
        }
    })
}

/// Validates the raw call, runs the selector and copies the result out.
///
/// # Safety
/// The pointer contract of [`mp_select`].
unsafe fn run(sel: *mut MpSelector, c: &Call) -> i32 {
    // SAFETY: `sel` comes from `mp_selector_new` (caller contract).
    let Some(sel) = (unsafe { sel.as_mut() }) else {
        return ERR_ARGUMENT;
    };
    // SAFETY: forwarded caller contract.
    match unsafe { run_inner(sel, c) } {
        Ok(n) => {
            sel.error.clear();
            n
        }
        Err(Failure(code, msg)) => {
            sel.error = msg;
            sel.stop = StopReason::Budget;
            sel.excluded.clear();
            code
        }
    }
}

/// # Safety
/// The pointer contract of [`mp_select`].
unsafe fn run_inner(sel: &mut MpSelector, c: &Call) -> Result<i32, Failure> {
    let method = method(c)?;
    // SAFETY (all slices below): caller contract of `mp_select`; checked
    // for null, alignment and size by `slice`/`slice_mut`.
    let query = unsafe { slice(c.query, c.query_len, "query") }?;
    let candidates = unsafe { slice(c.candidates, c.candidates_len, "candidates") }?;
    let relevance = if c.flags & FLAG_RELEVANCE != 0 {
        Relevance::Scores(unsafe { slice(c.relevance, c.relevance_len, "relevance") }?)
    } else if !c.relevance.is_null() || c.relevance_len != 0 {
        return Err(argument("relevance given without FLAG_RELEVANCE"));
    } else if c.flags & FLAG_POOL_ORDER != 0 {
        Relevance::PoolOrder
    } else {
        Relevance::Similarity
    };
    let input = Input::new(query, candidates).with_relevance(relevance);
    // An invalid shape gets P = 0 here and the core's own error from
    // `Method::run` (the same rule as `Selector::select`).
    let pool = input.pool_size().unwrap_or(0);
    // Picks are written as u32 and the count returned as i32.
    if pool > i32::MAX as usize {
        return Err(argument("pool sizes above 2^31 - 1 are not supported"));
    }
    let n_max = c.budget.min(pool);
    if n_max > c.out_capacity {
        return Err(argument(&format!(
            "out_capacity {} is below min(K, P) = {n_max}",
            c.out_capacity
        )));
    }
    let out_picks = unsafe { slice_mut(c.out_picks, n_max, "out_picks") }?;
    let out_weights = if c.out_weights.is_null() {
        None
    } else {
        Some(unsafe { slice_mut(c.out_weights, n_max, "out_weights") }?)
    };
    let out_steps = if c.out_steps.is_null() {
        None
    } else {
        let len = n_max
            .checked_mul(STEP_FIELDS)
            .ok_or_else(|| argument("out_steps length overflows"))?;
        Some(unsafe { slice_mut(c.out_steps, len, "out_steps") }?)
    };
    let mut ws = sel
        .selector
        .try_workspace(pool, n_max)
        .map_err(|e| Failure(ERR_CAPACITY, e.to_string()))?;
    let s = method.run(&input, c.budget, &mut ws)?;
    let n = s.len();
    for (out, &i) in out_picks.iter_mut().zip(s.picks()) {
        // i < P ≤ i32::MAX (checked above).
        *out = i as u32;
    }
    if let Some(out) = out_weights {
        let weights = s.weights();
        for (a, w) in out[..n].iter_mut().enumerate() {
            // The baselines have no weights: write 0.
            *w = weights.get(a).copied().unwrap_or(0.0);
        }
    }
    if let Some(out) = out_steps {
        for (chunk, st) in out.chunks_exact_mut(STEP_FIELDS).zip(s.steps()) {
            chunk.copy_from_slice(&[st.score, st.residual_sq, st.improvement, st.fw_gap, st.nu]);
        }
    }
    sel.stop = s.stop_reason();
    sel.excluded.clear();
    sel.excluded
        .try_reserve(s.excluded_count())
        .map_err(|_| Failure(ERR_CAPACITY, "cannot allocate the excluded rows".into()))?;
    // Rows < P ≤ i32::MAX (checked above).
    sel.excluded.extend(s.excluded().map(|i| i as u32));
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

/// One selection ([`Method::run`]) with budget K = `budget`.
///
/// * `method`: [`METHOD_PURSUIT`] (parameters `ridge` = λ, κ of the family,
///   paper 1e-10, `Infinity` = centroid pursuit; `gamma` = γ ∈ (0, 1], paper
///   1), [`METHOD_TOP_K`], or [`METHOD_MMR`] (`mmr_lambda` ∈ [0, 1], paper
///   0.5). Parameters of other methods are ignored.
/// * `flags`: `FLAG_*` bits.
/// * `query`: `query_len` = d f32; `candidates`: `candidates_len` = P × d
///   f32, row-major. Shape errors (d = 0, a length not a multiple of d) are
///   the core's ([`ERR_INPUT`]).
/// * `relevance`: with [`FLAG_RELEVANCE`], `relevance_len` (= P) f32
///   first-stage scores; otherwise null and 0.
/// * `out_picks`, `out_weights`, `out_steps`: room for `out_capacity` ≥
///   min(K, P) picks: u32 pool indices (entry order), null or f64 simplex
///   weights (0 for top-K and MMR), null or [`STEP_FIELDS`] f64 per pick.
///
/// Returns the number of picks n (the first n entries of each output are
/// written), or a negative error code (see the crate docs) with the message
/// in [`mp_error_ptr`]. After success, [`mp_stop_reason`],
/// [`mp_excluded_count`] and [`mp_excluded_ptr`] describe the result.
///
/// # Safety
/// `sel` from [`mp_selector_new`]; every non-null pointer must point to
/// memory of the stated length (readable for inputs, writable for outputs)
/// that no other argument overlaps. Null and misaligned pointers are
/// reported as [`ERR_ARGUMENT`], not dereferenced.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_select(
    sel: *mut MpSelector,
    method: u32,
    ridge: f64,
    gamma: f64,
    mmr_lambda: f64,
    flags: u32,
    query: *const f32,
    query_len: usize,
    candidates: *const f32,
    candidates_len: usize,
    relevance: *const f32,
    relevance_len: usize,
    budget: usize,
    out_picks: *mut u32,
    out_weights: *mut f64,
    out_steps: *mut f64,
    out_capacity: usize,
) -> i32 {
    let call = Call {
        method,
        ridge,
        gamma,
        mmr_lambda,
        flags,
        query,
        query_len,
        candidates,
        candidates_len,
        relevance,
        relevance_len,
        budget,
        out_picks,
        out_weights,
        out_steps,
        out_capacity,
    };
    // SAFETY: forwarded caller contract.
    unsafe { run(sel, &call) }
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
    unsafe { sel.as_ref() }.map_or(0, |s| s.excluded.len())
}

/// Pointer to the [`mp_excluded_count`] rows (u32, ascending) the last
/// successful selection on `sel` excluded; valid until the next call on
/// `sel`. Null for a null `sel`; dangling but aligned (never read) for 0
/// rows.
///
/// # Safety
/// `sel` null or from [`mp_selector_new`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_excluded_ptr(sel: *const MpSelector) -> *const u32 {
    // SAFETY: caller contract.
    unsafe { sel.as_ref() }.map_or(core::ptr::null(), |s| s.excluded.as_ptr())
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
/// [`TABLE_CAPACITIES`], or 0 past the end: lets the Node tests confirm
/// the 32-bit column of the size table on a real 32-bit target.
#[unsafe(no_mangle)]
pub extern "C" fn mp_fixed_workspace_size(row: u32) -> usize {
    use core::mem::size_of;
    use mempursuit::FixedWorkspace;
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

    /// One `mp_select` call with the paper's parameters unless overridden.
    struct Args<'a> {
        method: u32,
        ridge: f64,
        gamma: f64,
        lambda: f64,
        flags: u32,
        query: &'a [f32],
        candidates: &'a [f32],
        relevance: Option<&'a [f32]>,
        budget: usize,
    }

    impl<'a> Args<'a> {
        fn new(method: u32, query: &'a [f32], candidates: &'a [f32], budget: usize) -> Self {
            Args {
                method,
                ridge: 1e-10,
                gamma: 1.0,
                lambda: 0.5,
                flags: 0,
                query,
                candidates,
                relevance: None,
                budget,
            }
        }

        fn call(&self, sel: *mut MpSelector, picks: &mut [u32], w: *mut f64, st: *mut f64) -> i32 {
            let (rel, rel_len) = self
                .relevance
                .map_or((null(), 0), |r| (r.as_ptr(), r.len()));
            unsafe {
                mp_select(
                    sel,
                    self.method,
                    self.ridge,
                    self.gamma,
                    self.lambda,
                    self.flags,
                    self.query.as_ptr(),
                    self.query.len(),
                    self.candidates.as_ptr(),
                    self.candidates.len(),
                    rel,
                    rel_len,
                    self.budget,
                    picks.as_mut_ptr(),
                    w,
                    st,
                    picks.len(),
                )
            }
        }
    }

    #[test]
    fn every_method_through_the_c_abi() {
        let (q, c) = data();
        let sel = mp_selector_new();
        let mut picks = [u32::MAX; 3];
        let mut w = [f64::NAN; 3];
        let mut steps = [f64::NAN; 3 * STEP_FIELDS];
        let n = Args::new(METHOD_PURSUIT, &q, &c, 2).call(
            sel,
            &mut picks,
            w.as_mut_ptr(),
            steps.as_mut_ptr(),
        );
        assert_eq!(n, 2, "{}", error(sel));
        assert_eq!(&picks[..2], &[0, 2]);
        assert_eq!(picks[2], u32::MAX, "only n entries are written");
        assert!((w[0] + w[1] - 1.0).abs() < 1e-12 && w[0] > 0.0 && w[1] > 0.0);
        // Step 1: score = b_0 = cos(q, m_0); residual after step 2 < after step 1.
        let b0 = (0.9950f64 + 0.0998) * core::f64::consts::FRAC_1_SQRT_2;
        assert!((steps[0] - b0).abs() < 1e-6);
        assert!(steps[STEP_FIELDS + 1] < steps[1]);
        assert_eq!(unsafe { mp_stop_reason(sel) }, 0);

        let n =
            Args::new(METHOD_TOP_K, &q, &c, 2).call(sel, &mut picks, w.as_mut_ptr(), null_mut());
        assert_eq!((n, &picks[..2]), (2, &[0u32, 1][..]));
        assert_eq!(&w[..2], &[0.0, 0.0], "no weights for top-K");

        let n = Args::new(METHOD_MMR, &q, &c, 2).call(sel, &mut picks, null_mut(), null_mut());
        assert_eq!((n, &picks[..2]), (2, &[0u32, 2][..]));
        // Centroid pursuit.
        let mut centroid = Args::new(METHOD_PURSUIT, &q, &c, 3);
        centroid.ridge = f64::INFINITY;
        centroid.gamma = 0.5;
        assert_eq!(
            centroid.call(sel, &mut picks, w.as_mut_ptr(), null_mut()),
            3
        );
        assert_eq!(w, [1.0 / 3.0; 3]);
        // First-stage scores rank row 1 first for top-K.
        let mut scored = Args::new(METHOD_TOP_K, &q, &c, 1);
        scored.flags = FLAG_RELEVANCE;
        scored.relevance = Some(&[0.1, 0.9, 0.5]);
        assert_eq!(scored.call(sel, &mut picks, null_mut(), null_mut()), 1);
        assert_eq!(picks[0], 1);
        // The pool order ranks row 0 first, then 1.
        let mut ordered = Args::new(METHOD_TOP_K, &q, &c, 2);
        ordered.flags = FLAG_POOL_ORDER;
        assert_eq!(ordered.call(sel, &mut picks, null_mut(), null_mut()), 2);
        assert_eq!(&picks[..2], &[0, 1]);
        unsafe { mp_selector_free(sel) };
    }

    #[test]
    fn errors_are_codes_with_the_core_messages() {
        let (q, c) = data();
        let sel = mp_selector_new();
        let mut picks = [0u32; 3];
        let none = null_mut();
        let mut a = Args::new(METHOD_PURSUIT, &q, &c, 2);
        a.gamma = 2.0;
        assert_eq!(a.call(sel, &mut picks, none, none), ERR_OPTION);
        assert_eq!(error(sel), Error::InvalidGamma(2.0).to_string());
        let mut a = Args::new(METHOD_MMR, &q, &c, 2);
        a.lambda = -0.5;
        assert_eq!(a.call(sel, &mut picks, none, none), ERR_OPTION);
        assert_eq!(error(sel), Error::InvalidMmrLambda(-0.5).to_string());
        // Shapes are the core's errors, from the raw lengths.
        let a = Args::new(METHOD_PURSUIT, &q, &c[..5], 2);
        assert_eq!(a.call(sel, &mut picks, none, none), ERR_INPUT);
        assert_eq!(
            error(sel),
            Error::ShapeMismatch {
                candidates_len: 5,
                dim: 2
            }
            .to_string()
        );
        let a = Args::new(METHOD_TOP_K, &[], &c, 2);
        assert_eq!(a.call(sel, &mut picks, none, none), ERR_INPUT);
        assert_eq!(error(sel), Error::ZeroDimension.to_string());
        let mut a = Args::new(METHOD_TOP_K, &q, &c, 2);
        a.flags = FLAG_RELEVANCE;
        a.relevance = Some(&[]);
        assert_eq!(a.call(sel, &mut picks, none, none), ERR_INPUT);
        assert_eq!(
            error(sel),
            "relevance has 0 entries but the pool has 3 candidates"
        );
        let nan = [f32::NAN, 0.0];
        let a = Args::new(METHOD_PURSUIT, &nan, &c, 2);
        assert_eq!(a.call(sel, &mut picks, none, none), ERR_INPUT);
        assert_eq!(error(sel), "query: element 0 is not finite (NaN)");
        // Arguments.
        let a = Args::new(METHOD_PURSUIT, &q, &c, 2);
        assert_eq!(a.call(sel, &mut picks[..1], none, none), ERR_ARGUMENT);
        assert_eq!(error(sel), "out_capacity 1 is below min(K, P) = 2");
        let mut a = Args::new(METHOD_PURSUIT, &q, &c, 2);
        a.flags = 1 << 7;
        assert_eq!(a.call(sel, &mut picks, none, none), ERR_ARGUMENT);
        assert_eq!(error(sel), "unknown flag bits 0x80");
        let mut a = Args::new(METHOD_TOP_K, &q, &c, 2);
        a.flags = FLAG_ADAPTIVE;
        assert_eq!(a.call(sel, &mut picks, none, none), ERR_ARGUMENT);
        let mut a = Args::new(METHOD_TOP_K, &q, &c, 2);
        a.flags = FLAG_RELEVANCE | FLAG_POOL_ORDER;
        assert_eq!(a.call(sel, &mut picks, none, none), ERR_ARGUMENT);
        let mut a = Args::new(METHOD_TOP_K, &q, &c, 2);
        a.relevance = Some(&[1.0, 2.0, 3.0]);
        assert_eq!(a.call(sel, &mut picks, none, none), ERR_ARGUMENT);
        assert_eq!(error(sel), "relevance given without FLAG_RELEVANCE");
        assert_eq!(
            Args::new(3, &q, &c, 2).call(sel, &mut picks, none, none),
            ERR_ARGUMENT
        );
        assert!(error(sel).starts_with("unknown method 3"));
        let null_query = unsafe {
            mp_select(
                sel,
                METHOD_PURSUIT,
                1e-10,
                1.0,
                0.5,
                0,
                null(),
                2,
                c.as_ptr(),
                6,
                null(),
                0,
                2,
                picks.as_mut_ptr(),
                none,
                none,
                3,
            )
        };
        assert_eq!(null_query, ERR_ARGUMENT);
        assert_eq!(error(sel), "query: null pointer for 2 elements");
        // Misaligned.
        let bytes = [0u8; 16];
        let odd = unsafe { bytes.as_ptr().add(1) }.cast::<f32>();
        let misaligned = unsafe {
            mp_select(
                sel,
                METHOD_PURSUIT,
                1e-10,
                1.0,
                0.5,
                0,
                odd,
                2,
                c.as_ptr(),
                6,
                null(),
                0,
                2,
                picks.as_mut_ptr(),
                none,
                none,
                3,
            )
        };
        assert_eq!(misaligned, ERR_ARGUMENT);
        assert!(error(sel).contains("not aligned"));
        // A success clears the message.
        let a = Args::new(METHOD_PURSUIT, &q, &c, 2);
        assert_eq!(a.call(sel, &mut picks, none, none), 2);
        assert_eq!(unsafe { mp_error_len(sel) }, 0);
        unsafe { mp_selector_free(sel) };
        assert_eq!(
            Args::new(METHOD_PURSUIT, &q, &c, 2).call(null_mut(), &mut picks, none, none),
            ERR_ARGUMENT
        );
    }

    #[test]
    fn flags_reach_the_core() {
        let (q, mut c) = data();
        c[2] = f32::NAN; // row 1 unusable
        let sel = mp_selector_new();
        let mut picks = [0u32; 3];
        let mut a = Args::new(METHOD_TOP_K, &q, &c, 3);
        assert_eq!(a.call(sel, &mut picks, null_mut(), null_mut()), ERR_INPUT);
        assert_eq!(error(sel), "candidate 1: element 0 is not finite (NaN)");
        a.flags = FLAG_EXCLUDE_INVALID;
        assert_eq!(a.call(sel, &mut picks, null_mut(), null_mut()), 2);
        assert_eq!(&picks[..2], &[0, 2]);
        assert_eq!(unsafe { mp_excluded_count(sel) }, 1);
        assert_eq!(unsafe { *mp_excluded_ptr(sel) }, 1);
        assert_eq!(unsafe { mp_stop_reason(sel) }, 2);
        // A failed call clears them.
        a.flags = 0;
        assert_eq!(a.call(sel, &mut picks, null_mut(), null_mut()), ERR_INPUT);
        assert_eq!(unsafe { mp_excluded_count(sel) }, 0);
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
