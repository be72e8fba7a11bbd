//! # mempursuit-wasm
//!
//! MemPursuit compiled to WebAssembly (`wasm32-unknown-unknown`, with or
//! without `simd128`) behind a small C ABI over linear memory: no
//! wasm-bindgen, no JavaScript glue generator. The npm package `mempursuit`
//! (`wasm/package.json`, `wasm/mempursuit.js`, `wasm/mempursuit.d.ts`) is
//! the JavaScript API over it, for Node.js ≥ 18, browsers and bundlers.
//!
//! The call is the one specification of a selector call: the options are
//! set one by one with [`SelectSpec::set`] (keys and values as the caller
//! wrote them, so unknown options, bad values and options that do not
//! apply to the method are the library's own errors), and the selection is
//! [`Selector::select_spec`]. This crate holds no method table, no default
//! and no name of its own: the result's field names, the stop reason, the
//! refit statuses and the error kinds reach JavaScript as text from the
//! Rust types ([`mp_layout_ptr`]).
//!
//! ## Protocol
//! 1. [`mp_layout_ptr`] / [`mp_layout_len`]: a JSON text describing the
//!    result (see [Layout](#layout)), read once.
//! 2. [`mp_selector_new`] creates a reusable selector.
//! 3. [`mp_spec_reset`] and [`mp_spec_set`] (once per option) set the
//!    specification; [`mp_alloc`] reserves buffers in linear memory for the
//!    query (d f32), the candidates (row-major P × d f32), the relevance
//!    scores (P f32) and the costs (P f32), which the caller writes.
//! 4. [`mp_select`] runs the selection and returns the number of picks, or
//!    −1 with the error's kind ([`mp_error_kind_ptr`]) and message
//!    ([`mp_error_ptr`]).
//! 5. [`mp_result_ptr`] / [`mp_result_len`] give field `i` of the layout's
//!    `result` list; they stay valid until the next call on the selector.
//! 6. [`mp_free`] and [`mp_selector_free`] release the memory.
//!
//! A store ([`mp_store_new`], [`mp_store_append`], [`mp_store_select`],
//! [`mp_store_free`]) keeps memory rows in wasm memory across calls;
//! its calls report their errors on a selector, with what they name in
//! [`mp_error_index`] and [`mp_error_id`], and [`mp_store_select`] leaves
//! its result in the selector as [`mp_select`] does.
//!
//! Linear memory can grow during any call that allocates ([`mp_alloc`],
//! [`mp_select`]): JavaScript must re-create its typed-array views of
//! `memory.buffer` after every call.
//!
//! ## Layout
//! `{"abi": 4, "result": [{"name", "type"}...], "step_fields": [{"name",
//! "type", "names"?}...], "error_kinds": [...], "options": [{"key", "type",
//! "names"?}...]}`:
//! * `result`: the fields of a selection in order, each of type `u32s`
//!   (u32 array), `f64s` (f64 array), `steps` (f64 array, one record of
//!   `step_fields.length` values per pick) or `name` (UTF-8 text);
//! * `step_fields`: [`Step::FIELDS`] with their types:
//!   `integer`, `number`, `bool` (0 or 1) or `name` (an index into its
//!   `names`);
//! * `error_kinds`: the values [`mp_error_kind_ptr`] can take
//!   ([`ErrorKind`] and `argument`, for a call this ABI rejects: a null or
//!   misaligned pointer, a length that overflows, text that is not UTF-8);
//! * `options`: [`mempursuit::spec::OPTIONS`] (key, value type, names), for
//!   the bindings' consistency checks only.
//!
//! ## Determinism
//! The core's SIMD kernels fix their reduction order and wasm `simd128` has
//! no fused multiply-add, so a wasm build computes the same similarities as
//! a native build without FMA and picks the same memories (`wasm/test/`
//! compares them on the HotpotQA fixture).
//!
//! ## Versions
//! ABI 4 gained, without an incompatible change, the store functions
//! (`mp_store_*`, `mp_error_index`, `mp_error_id`; 2026-12-05).
//! ABI 4 added the candidates' costs to [`mp_select`] (with the option
//! `cost_budget`: budgets in tokens). ABI 3 replaced ABI 2's method codes, parameters and flags by the
//! specification's options ([`mp_spec_set`]) and its caller-provided
//! outputs by the selector's own result ([`mp_result_ptr`]). ABI 2 had
//! replaced ABI 1's `mp_pursuit`, `mp_top_k` and `mp_mmr`.

#![warn(missing_docs)]

use std::sync::OnceLock;

use mempursuit::spec::{OptionType, Value, OPTIONS};
use mempursuit::{
    CallData, CallError, Error, ErrorKind, FieldType, MethodName, Pool, RefitStatus, ScratchSize,
    SelectSpec, Selection, Selector, Step, StopReason, Store, StoreCall, StoreError,
};

/// Version of this C ABI; bumped on every incompatible change.
pub const ABI_VERSION: u32 = 4;

/// The error kind of a call this ABI rejects before the library sees it
/// (null or misaligned pointer, overflowing length, invalid UTF-8).
pub const ARGUMENT: &str = "argument";

/// Alignment of every [`mp_alloc`] block (enough for f64).
const ALLOC_ALIGN: usize = 8;

/// The number of f64 values of one step record: one per [`Step::FIELDS`].
const STEP_LEN: usize = Step::FIELDS.len();

/// One step as the f64 record of the layout (the order of
/// [`Step::FIELDS`]; a refit status as its [`RefitStatus::index`]).
fn step_values(st: &Step) -> [f64; STEP_LEN] {
    Step::FIELDS.map(|f| f.value(st).as_f64())
}

/// The fields of a selection, in the order [`mp_result_ptr`] numbers them:
/// name and type.
const RESULT_FIELDS: [(&str, &str); 6] = [
    ("picks", "u32s"),
    ("weights", "f64s"),
    ("steps", "steps"),
    ("stop_reason", "name"),
    ("excluded", "u32s"),
    ("skipped", "u32s"),
];

/// A JSON string literal.
fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A JSON array of string literals.
fn json_strs<'a>(out: &mut String, items: impl IntoIterator<Item = &'a str>) {
    out.push('[');
    for (i, s) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json_str(out, s);
    }
    out.push(']');
}

/// The layout text (see the crate docs), built from the library's types.
fn layout() -> String {
    let mut out = format!("{{\"abi\":{ABI_VERSION},\"result\":[");
    for (i, (name, ty)) in RESULT_FIELDS.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"name\":");
        json_str(&mut out, name);
        out.push_str(",\"type\":");
        json_str(&mut out, ty);
        out.push('}');
    }
    out.push_str("],\"step_fields\":[");
    for (i, field) in Step::FIELDS.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"name\":");
        json_str(&mut out, field.name);
        out.push_str(",\"type\":");
        match field.ty {
            FieldType::Integer => out.push_str("\"integer\""),
            FieldType::Number => out.push_str("\"number\""),
            FieldType::Flag => out.push_str("\"bool\""),
            _ => {
                out.push_str("\"name\",\"names\":");
                json_strs(&mut out, RefitStatus::NAMES.iter().copied());
            }
        }
        out.push('}');
    }
    out.push_str("],\"stop_reasons\":");
    json_strs(&mut out, StopReason::ALL.iter().map(|s| s.as_str()));
    out.push_str(",\"error_kinds\":");
    let kinds = [ErrorKind::Input, ErrorKind::Option, ErrorKind::Capacity];
    json_strs(&mut out, kinds.iter().map(|k| k.as_str()).chain([ARGUMENT]));
    out.push_str(",\"options\":[");
    for (i, o) in OPTIONS.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"key\":");
        json_str(&mut out, o.key);
        out.push_str(",\"type\":");
        match o.ty {
            OptionType::Method => {
                out.push_str("\"name\",\"names\":");
                json_strs(&mut out, MethodName::ALL.iter().map(|m| m.as_str()));
            }
            OptionType::Number => out.push_str("\"number\""),
            OptionType::Bool => out.push_str("\"bool\""),
            OptionType::Name(names) => {
                out.push_str("\"name\",\"names\":");
                json_strs(&mut out, names.iter().copied());
            }
            _ => out.push_str("\"other\""),
        }
        out.push_str(",\"applies_to\":");
        json_str(&mut out, o.applies_to.describe());
        out.push('}');
    }
    out.push_str("]}");
    out
}

fn layout_text() -> &'static str {
    static LAYOUT: OnceLock<String> = OnceLock::new();
    LAYOUT.get_or_init(layout)
}

/// A reusable selector: a [`mempursuit::Selector`] (scratch grown to the
/// largest shape seen), the specification of the next call, and the
/// outcome of the last one.
#[derive(Debug, Default)]
pub struct MpSelector {
    selector: Selector,
    spec: SelectSpec,
    /// The last selection (its `picks` are mirrored in `picks` as u32).
    result: Selection,
    picks: Vec<u32>,
    steps: Vec<f64>,
    excluded: Vec<u32>,
    skipped: Vec<u32>,
    error_kind: &'static str,
    error: String,
    /// What the last error names ([`mp_error_index`]): a store row or a
    /// position in the ids, and the id given; `usize::MAX` for none.
    error_index: usize,
    error_id: usize,
}

/// One failed call: its kind and message.
struct Failure(&'static str, String);

impl From<CallError> for Failure {
    fn from(e: CallError) -> Self {
        Failure(e.kind().as_str(), e.to_string())
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure(e.kind().as_str(), e.to_string())
    }
}

fn argument(msg: String) -> Failure {
    Failure(ARGUMENT, msg)
}

impl MpSelector {
    /// Records the outcome of a call: `Ok(v)` clears the error, `Err` sets
    /// it and returns −1.
    fn finish(&mut self, outcome: Result<i32, Failure>) -> i32 {
        match outcome {
            Ok(v) => {
                self.error_kind = "";
                self.error.clear();
                (self.error_index, self.error_id) = (usize::MAX, usize::MAX);
                v
            }
            Err(Failure(kind, msg)) => {
                self.error_kind = kind;
                self.error = msg;
                (self.error_index, self.error_id) = (usize::MAX, usize::MAX);
                -1
            }
        }
    }

    fn clear_result(&mut self) {
        self.result = Selection::default();
        self.picks.clear();
        self.steps.clear();
        self.excluded.clear();
        self.skipped.clear();
    }
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
    if ptr.is_null() {
        return Err(argument(format!("{what}: null pointer for {len} elements")));
    }
    if !ptr.is_aligned() {
        return Err(argument(format!("{what}: pointer is not aligned")));
    }
    let fits = len
        .checked_mul(core::mem::size_of::<T>())
        .is_some_and(|b| b <= isize::MAX as usize);
    if !fits {
        return Err(argument(format!(
            "{what}: {len} elements overflow the address space"
        )));
    }
    // SAFETY: non-null, aligned and in range (checked above); readable,
    // initialized and not mutated during the call by the caller's contract.
    Ok(unsafe { core::slice::from_raw_parts(ptr, len) })
}

/// UTF-8 text over caller memory.
///
/// # Safety
/// As [`slice`].
unsafe fn text<'a>(ptr: *const u8, len: usize, what: &str) -> Result<&'a str, Failure> {
    // SAFETY: forwarded caller contract.
    let bytes = unsafe { slice(ptr, len, what) }?;
    core::str::from_utf8(bytes).map_err(|e| argument(format!("{what}: not UTF-8 ({e})")))
}

/// The version of this C ABI ([`ABI_VERSION`]).
#[unsafe(no_mangle)]
pub extern "C" fn mp_abi_version() -> u32 {
    ABI_VERSION
}

/// Pointer to the layout text (UTF-8 JSON, not NUL-terminated; see the
/// crate docs), valid for the life of the module.
#[unsafe(no_mangle)]
pub extern "C" fn mp_layout_ptr() -> *const u8 {
    layout_text().as_ptr()
}

/// Length in bytes of the layout text.
#[unsafe(no_mangle)]
pub extern "C" fn mp_layout_len() -> usize {
    layout_text().len()
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

/// A new selector with empty scratch (allocated on first use, then reused)
/// and the default specification (the recommended setting). Never null.
/// Release with [`mp_selector_free`].
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

/// Resets the specification of `sel` to the default (the recommended
/// setting, every option at its default). Returns 0, or −1 for a null
/// `sel`.
///
/// # Safety
/// `sel` null or from [`mp_selector_new`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_spec_reset(sel: *mut MpSelector) -> i32 {
    // SAFETY: caller contract.
    let Some(sel) = (unsafe { sel.as_mut() }) else {
        return -1;
    };
    sel.spec = SelectSpec::default();
    sel.finish(Ok(0))
}

/// Sets option `key` (UTF-8, `key_len` bytes; snake_case or camelCase) of
/// the specification of `sel` to a value of `kind`
/// ([`SelectSpec::set_typed`]: text is a name only, never a number or
/// bool written out): 0 text (`text`, `text_len` UTF-8 bytes), 1 number (`number`),
/// 2 boolean (`number` ≠ 0). Returns 0, or −1 with the library's error
/// (an unknown option or method, a value of the wrong type or not one of
/// the option's names: kind `option`) or an `argument` error (null `sel`,
/// text that is not UTF-8, an unknown `kind`).
///
/// # Safety
/// `sel` null or from [`mp_selector_new`]; `key` and `text` point to
/// `key_len` and `text_len` readable bytes (null is allowed for length 0).
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_spec_set(
    sel: *mut MpSelector,
    key: *const u8,
    key_len: usize,
    kind: u32,
    number: f64,
    text: *const u8,
    text_len: usize,
) -> i32 {
    // SAFETY: caller contract.
    let Some(sel) = (unsafe { sel.as_mut() }) else {
        return -1;
    };
    let outcome = (|| {
        // SAFETY: caller contract (checked for null, alignment and size).
        let key = unsafe { self::text(key, key_len, "option key") }?;
        let value = match kind {
            // SAFETY: as above.
            0 => Value::Text(unsafe { self::text(text, text_len, "option value") }?),
            1 => Value::Number(number),
            2 => Value::Bool(number != 0.0),
            other => return Err(argument(format!("unknown value kind {other}"))),
        };
        sel.spec
            .set_typed(key, value)
            .map_err(|e| Failure(e.kind().as_str(), e.to_string()))?;
        Ok(0)
    })();
    sel.finish(outcome)
}

/// Runs the specification of `sel` ([`Selector::select_spec`]) with budget
/// K = `budget` on `query` (`query_len` = d f32) and the row-major P × d
/// f32 `candidates` (`candidates_len` values), with the retriever's
/// `relevance` scores (`relevance_len` f32) when `has_relevance` ≠ 0 and
/// the candidates' `costs` (`costs_len` f32, for the option `cost_budget`)
/// when `has_costs` ≠ 0. Shape errors (d = 0, a length that is not a
/// multiple of d, a relevance or cost vector of the wrong length) are the
/// library's.
///
/// Returns the number of picks n ≥ 0, with the result in
/// [`mp_result_ptr`], or −1 with the error in [`mp_error_kind_ptr`] and
/// [`mp_error_ptr`] (and an empty result). Nothing the caller passed is
/// modified.
///
/// # Safety
/// `sel` null or from [`mp_selector_new`]; every pointer with a non-zero
/// length must point to that many readable f32 that nothing mutates during
/// the call. Null and misaligned pointers are reported as `argument`
/// errors, not dereferenced.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_select(
    sel: *mut MpSelector,
    query: *const f32,
    query_len: usize,
    candidates: *const f32,
    candidates_len: usize,
    relevance: *const f32,
    relevance_len: usize,
    has_relevance: u32,
    costs: *const f32,
    costs_len: usize,
    has_costs: u32,
    budget: usize,
) -> i32 {
    // SAFETY: caller contract.
    let Some(sel) = (unsafe { sel.as_mut() }) else {
        return -1;
    };
    sel.clear_result();
    // SAFETY: forwarded caller contract.
    let outcome = unsafe {
        select_inner(
            sel,
            (query, query_len),
            (candidates, candidates_len),
            (has_relevance != 0).then_some((relevance, relevance_len)),
            (has_costs != 0).then_some((costs, costs_len)),
            budget,
        )
    };
    sel.finish(outcome)
}

/// # Safety
/// The pointer contract of [`mp_select`].
unsafe fn select_inner(
    sel: &mut MpSelector,
    query: (*const f32, usize),
    candidates: (*const f32, usize),
    relevance: Option<(*const f32, usize)>,
    costs: Option<(*const f32, usize)>,
    budget: usize,
) -> Result<i32, Failure> {
    // SAFETY (the four slices): caller contract of `mp_select`, checked
    // for null, alignment and size by `slice`.
    let query = unsafe { slice(query.0, query.1, "query") }?;
    let candidates = unsafe { slice(candidates.0, candidates.1, "candidates") }?;
    let relevance = match relevance {
        Some((ptr, len)) => Some(unsafe { slice(ptr, len, "relevance") }?),
        None => None,
    };
    let costs = match costs {
        Some((ptr, len)) => Some(unsafe { slice(ptr, len, "costs") }?),
        None => None,
    };
    // The scratch of this shape, reserved here so that a failed allocation
    // is an error rather than a trap (an invalid shape reserves nothing and
    // gets the library's own error from `select_spec`).
    let d = query.len();
    let pool = if d > 0 && candidates.len() % d == 0 {
        candidates.len() / d
    } else {
        0
    };
    reserve(sel, pool, budget)?;
    let data = CallData::new(query, Pool::F32(candidates))
        .with_relevance(relevance)
        .with_costs(costs);
    let s = sel.selector.select_spec(&sel.spec, data, budget)?;
    keep_result(sel, s)
}

/// Reserves the scratch of a pool of `pool` rows and budget K = `budget`,
/// so that a failed allocation is an error rather than a trap (an invalid
/// shape reserves nothing and gets the library's own error).
fn reserve(sel: &mut MpSelector, pool: usize, budget: usize) -> Result<(), Failure> {
    // Picks are written as u32 and their count returned as i32.
    if pool > i32::MAX as usize {
        return Err(argument(
            "pool sizes above 2^31 - 1 are not supported".into(),
        ));
    }
    sel.selector
        .try_reserve(pool, budget.min(pool))
        .map_err(|e| match e.bytes {
            None => Error::ScratchOverflow {
                max_pool: e.pool,
                max_budget: e.budget,
            }
            .into(),
            Some(_) => Failure(ErrorKind::Capacity.as_str(), e.to_string()),
        })
}

/// Keeps the selection `s` (P ≤ i32::MAX, checked by [`reserve`]) as the
/// result of `sel`; returns the number of picks.
fn keep_result(sel: &mut MpSelector, s: Selection) -> Result<i32, Failure> {
    let n = s.picks.len();
    let room = |v: &mut Vec<u32>, n: usize| {
        v.try_reserve(n).map_err(|_| {
            Failure(
                ErrorKind::Capacity.as_str(),
                "cannot allocate the result".into(),
            )
        })
    };
    room(&mut sel.picks, n)?;
    room(&mut sel.excluded, s.excluded.len())?;
    room(&mut sel.skipped, s.skipped.len())?;
    sel.steps.try_reserve(n * STEP_LEN).map_err(|_| {
        Failure(
            ErrorKind::Capacity.as_str(),
            "cannot allocate the result".into(),
        )
    })?;
    // Every index is < P ≤ i32::MAX (checked above).
    sel.picks.extend(s.picks.iter().map(|&i| i as u32));
    sel.excluded.extend(s.excluded.iter().map(|&i| i as u32));
    sel.skipped.extend(s.skipped.iter().map(|&i| i as u32));
    for st in &s.steps {
        sel.steps.extend_from_slice(&step_values(st));
    }
    sel.result = s;
    // n ≤ P ≤ i32::MAX.
    Ok(n as i32)
}

/// Pointer to field `field` of the last selection on `sel`, numbered as the
/// layout's `result` list: `picks` (u32), `weights` (f64; empty for top-K
/// and MMR), `steps` (f64 records), `stop_reason` (UTF-8), `excluded` and
/// `skipped` (u32, ascending). Valid until the next call on `sel`; null for
/// a null `sel` or an unknown field; dangling but aligned (never read) for
/// an empty field.
///
/// # Safety
/// `sel` null or from [`mp_selector_new`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_result_ptr(sel: *const MpSelector, field: u32) -> *const u8 {
    // SAFETY: caller contract.
    let Some(s) = (unsafe { sel.as_ref() }) else {
        return core::ptr::null();
    };
    match field {
        0 => s.picks.as_ptr().cast(),
        1 => s.result.weights.as_ptr().cast(),
        2 => s.steps.as_ptr().cast(),
        3 => s.result.stop.as_str().as_ptr(),
        4 => s.excluded.as_ptr().cast(),
        5 => s.skipped.as_ptr().cast(),
        _ => core::ptr::null(),
    }
}

/// Length of field `field` (see [`mp_result_ptr`]) in its elements (bytes
/// for `stop_reason`); 0 for a null `sel` or an unknown field.
///
/// # Safety
/// `sel` null or from [`mp_selector_new`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_result_len(sel: *const MpSelector, field: u32) -> usize {
    // SAFETY: caller contract.
    let Some(s) = (unsafe { sel.as_ref() }) else {
        return 0;
    };
    match field {
        0 => s.picks.len(),
        1 => s.result.weights.len(),
        2 => s.steps.len(),
        3 => s.result.stop.as_str().len(),
        4 => s.excluded.len(),
        5 => s.skipped.len(),
        _ => 0,
    }
}

/// Pointer to the kind (UTF-8, one of the layout's `error_kinds`) of the
/// last failed call on `sel`; valid for the life of the module. Length
/// [`mp_error_kind_len`] (0 after a success).
///
/// # Safety
/// `sel` null or from [`mp_selector_new`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_error_kind_ptr(sel: *const MpSelector) -> *const u8 {
    // SAFETY: caller contract.
    unsafe { sel.as_ref() }.map_or(core::ptr::null(), |s| s.error_kind.as_ptr())
}

/// Length in bytes of the last error's kind on `sel` (0 after a success).
///
/// # Safety
/// `sel` null or from [`mp_selector_new`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_error_kind_len(sel: *const MpSelector) -> usize {
    // SAFETY: caller contract.
    unsafe { sel.as_ref() }.map_or(0, |s| s.error_kind.len())
}

/// Pointer to the UTF-8 message of the last failed call on `sel` (not
/// NUL-terminated; length [`mp_error_len`]): the library's message, word
/// for word. Valid until the next call on `sel`. Null for a null `sel`.
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

/// What the last error on `sel` names: for a store's row error the row's
/// store index, for an id out of range its position in the ids;
/// `usize::MAX` for none (every other error, and after a success).
///
/// # Safety
/// `sel` null or from [`mp_selector_new`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_error_index(sel: *const MpSelector) -> usize {
    // SAFETY: caller contract.
    unsafe { sel.as_ref() }.map_or(usize::MAX, |s| s.error_index)
}

/// The id of the last error on `sel` when it is an id out of range of a
/// store; `usize::MAX` for none.
///
/// # Safety
/// `sel` null or from [`mp_selector_new`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_error_id(sel: *const MpSelector) -> usize {
    // SAFETY: caller contract.
    unsafe { sel.as_ref() }.map_or(usize::MAX, |s| s.error_id)
}

/// A [`Store`] for JavaScript ([`mp_store_new`]): memory embeddings kept in
/// wasm memory across calls.
#[derive(Debug)]
pub struct MpStore {
    store: Store,
}

/// Records a store's error on `sel` (kind input; what it names in
/// [`mp_error_index`] and [`mp_error_id`]); returns −1.
fn store_failure(sel: &mut MpSelector, e: &StoreError) -> i32 {
    let r = sel.finish(Err(Failure(e.kind().as_str(), e.to_string())));
    (sel.error_index, sel.error_id) = match e {
        StoreError::Row { row, .. } => (*row, usize::MAX),
        StoreError::Storage(e) => (e.row, usize::MAX),
        StoreError::Id { position, id, .. } => (*position, *id),
        _ => (usize::MAX, usize::MAX),
    };
    r
}

/// A store of the row-major N × d f32 `rows` (`rows_len` = N·d values)
/// with the storage named by `storage` (UTF-8, `storage_len` bytes:
/// `f32`, `f16`, `bf16` or `int8`, read as the option `storage`), each row
/// validated once ([`Store::new`], 2026-12-05). Returns the store, or null
/// with the error on `sel` ([`mp_error_ptr`]; for a bad row
/// [`mp_error_index`] is its index). Release with [`mp_store_free`].
///
/// # Safety
/// `sel` from [`mp_selector_new`]; `rows` and `storage` point to
/// `rows_len` f32 and `storage_len` bytes (null for length 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_store_new(
    sel: *mut MpSelector,
    rows: *const f32,
    rows_len: usize,
    d: usize,
    storage: *const u8,
    storage_len: usize,
) -> *mut MpStore {
    // SAFETY: caller contract.
    let Some(sel) = (unsafe { sel.as_mut() }) else {
        return core::ptr::null_mut();
    };
    let storage = (|| {
        // SAFETY: caller contract (checked for null, alignment and size).
        let name = unsafe { text(storage, storage_len, "storage") }?;
        let mut spec = SelectSpec::default();
        spec.set_typed("storage", Value::Text(name))
            .and_then(|()| spec.method().map(|_| ()))
            .map_err(|e| Failure(e.kind().as_str(), e.to_string()))?;
        // SAFETY: as above.
        let rows = unsafe { slice(rows, rows_len, "rows") }?;
        Ok((rows, spec.given_storage().unwrap_or_default()))
    })();
    let (rows, storage) = match storage {
        Ok(v) => v,
        Err(f) => {
            sel.finish(Err(f));
            return core::ptr::null_mut();
        }
    };
    match Store::new(rows, d, storage) {
        Ok(store) => {
            sel.finish(Ok(0));
            Box::into_raw(Box::new(MpStore { store }))
        }
        Err(e) => {
            store_failure(sel, &e);
            core::ptr::null_mut()
        }
    }
}

/// Releases a store. Null is ignored.
///
/// # Safety
/// `store` from [`mp_store_new`], not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_store_free(store: *mut MpStore) {
    if !store.is_null() {
        // SAFETY: created by `Box::into_raw` in `mp_store_new`.
        drop(unsafe { Box::from_raw(store) });
    }
}

/// The number of rows N of `store` (0 for null).
///
/// # Safety
/// `store` null or from [`mp_store_new`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_store_len(store: *const MpStore) -> usize {
    // SAFETY: caller contract.
    unsafe { store.as_ref() }.map_or(0, |s| s.store.len())
}

/// The dimension d of `store` (0 for null).
///
/// # Safety
/// `store` null or from [`mp_store_new`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_store_dim(store: *const MpStore) -> usize {
    // SAFETY: caller contract.
    unsafe { store.as_ref() }.map_or(0, |s| s.store.dim())
}

/// Appends the row-major rows `rows` (`rows_len` f32, a multiple of d) to
/// `store` ([`Store::append`]): their ids are the old N onwards. Returns 0,
/// or −1 with the error on `sel` (nothing added).
///
/// # Safety
/// `sel` from [`mp_selector_new`], `store` from [`mp_store_new`]; `rows`
/// points to `rows_len` f32.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_store_append(
    sel: *mut MpSelector,
    store: *mut MpStore,
    rows: *const f32,
    rows_len: usize,
) -> i32 {
    // SAFETY: caller contract.
    let (Some(sel), Some(store)) = (unsafe { sel.as_mut() }, unsafe { store.as_mut() }) else {
        return -1;
    };
    // SAFETY: caller contract (checked for null, alignment and size).
    let rows = match unsafe { slice(rows, rows_len, "rows") } {
        Ok(r) => r,
        Err(f) => return sel.finish(Err(f)),
    };
    match store.store.append(rows) {
        Ok(_) => sel.finish(Ok(0)),
        Err(e) => store_failure(sel, &e),
    }
}

/// [`mp_select`] on the rows of `store` that the `ids_len` u32 `ids` name
/// ([`Store::select`] with the specification of `sel`): the selection of
/// `select` on the gathered rows, picks as positions in `ids`, in
/// [`mp_result_ptr`]. An id ≥ N is an input error with
/// [`mp_error_index`] = its position and [`mp_error_id`] = the id. A
/// query whose length is not the store's d is an input error.
///
/// # Safety
/// As [`mp_select`]; `store` from [`mp_store_new`]; `ids` points to
/// `ids_len` u32.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_store_select(
    store: *const MpStore,
    sel: *mut MpSelector,
    query: *const f32,
    query_len: usize,
    ids: *const u32,
    ids_len: usize,
    relevance: *const f32,
    relevance_len: usize,
    has_relevance: u32,
    costs: *const f32,
    costs_len: usize,
    has_costs: u32,
    budget: usize,
) -> i32 {
    // SAFETY: caller contract.
    let (Some(sel), Some(store)) = (unsafe { sel.as_mut() }, unsafe { store.as_ref() }) else {
        return -1;
    };
    sel.clear_result();
    let outcome = (|| {
        // SAFETY (every slice): caller contract, checked by `slice`.
        let query = unsafe { slice(query, query_len, "query") }?;
        let ids = unsafe { slice(ids, ids_len, "ids") }?;
        let relevance = match has_relevance {
            0 => None,
            _ => Some(unsafe { slice(relevance, relevance_len, "relevance") }?),
        };
        let costs = match has_costs {
            0 => None,
            _ => Some(unsafe { slice(costs, costs_len, "costs") }?),
        };
        let ids: Vec<usize> = ids.iter().map(|&i| i as usize).collect();
        reserve(sel, ids.len(), budget)?;
        let call = StoreCall::new(query, &ids)
            .with_relevance(relevance)
            .with_costs(costs);
        Ok(store
            .store
            .select(&mut sel.selector, &sel.spec, call, budget))
    })();
    match outcome {
        Ok(Ok(s)) => {
            let kept = keep_result(sel, s);
            sel.finish(kept)
        }
        Ok(Err(CallError::Store(e))) => store_failure(sel, &e),
        Ok(Err(e)) => sel.finish(Err(e.into())),
        Err(f) => sel.finish(Err(f)),
    }
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

/// The document layer's result ([`mempursuit::documents::prepare`]) for
/// JavaScript: made by [`mp_docs_prepare`], read by [`mp_docs_info`],
/// released by [`mp_docs_free`].
pub struct MpDocs {
    info: [usize; 13],
    text: Vec<u8>,
    kept: Vec<u32>,
    dups: Vec<u32>,
    prepared: Option<mempursuit::Prepared>,
}

/// Reads `n` values at `ptr` (none when `n` is 0, whatever `ptr` is).
///
/// # Safety
/// When `n > 0`, `ptr` must point at `n` readable, aligned values.
unsafe fn slice_of<'a, T>(ptr: *const T, n: usize) -> &'a [T] {
    if n == 0 || ptr.is_null() {
        &[]
    } else {
        // SAFETY: caller contract.
        unsafe { std::slice::from_raw_parts(ptr, n) }
    }
}

/// Prepares `n` documents against a query of `d` values, by the one
/// document layer of `mempursuit::documents` (duplicate ids, score
/// orientation, missing embeddings, costs; 2026-12-05). Document i:
/// embedding `emb_lens[i]` f32 values (the next ones in `emb`;
/// `u32::MAX`: none), score `scores[i]` and cost `costs[i]` (f64) when bit 0
/// resp. bit 1 of `flags[i]` is set, score kind `kinds[i]` (0 none, 1
/// similarity, 2 distance), id `id_lens[i]` UTF-8 bytes (the next ones in
/// `ids`; `u32::MAX`: none). Bit 2 of `flags[i]`: the embedding is text
/// (pgvector's `"[0.1,...]"`), `emb_lens[i]` UTF-8 bytes, the next ones in
/// `texts`, parsed by `mempursuit::parse_embedding`. Never null; read with [`mp_docs_info`], release
/// with [`mp_docs_free`].
///
/// # Safety
/// Every pointer must hold the values its lengths say (`n` for the
/// per-document arrays, their sums for `emb` and `ids`).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn mp_docs_prepare(
    query: *const f32,
    d: usize,
    n: usize,
    emb: *const f32,
    emb_lens: *const u32,
    scores: *const f64,
    costs: *const f64,
    flags: *const u8,
    kinds: *const u8,
    ids: *const u8,
    id_lens: *const u32,
    texts: *const u8,
) -> *mut MpDocs {
    // SAFETY: forwarded caller contract.
    let docs = unsafe {
        decode_docs(
            n,
            (emb, emb_lens),
            (scores, costs, flags, kinds),
            (ids, id_lens),
            texts,
        )
    };
    // SAFETY: caller contract.
    let q = unsafe { slice_of(query, d) };
    let mut out = new_docs();
    match docs.and_then(|docs| mempursuit::documents::prepare(q, &docs)) {
        Err(err) => fail(&mut out, err),
        Ok(p) => {
            out.kept = p.kept.iter().map(|&i| i as u32).collect();
            out.dups = p
                .duplicates
                .iter()
                .flat_map(|&(a, b)| [a as u32, b as u32])
                .collect();
            out.text = p.relevance_source.as_bytes().to_vec();
            out.prepared = Some(p);
        }
    }
    finish_docs(out)
}

/// Writes a document error into `out`: status 1 + the kind's position in
/// input, option, capacity; the index (`usize::MAX`: none); the text
/// `argument\nmessage`.
fn fail(out: &mut MpDocs, err: mempursuit::DocumentError) {
    let kinds = [ErrorKind::Input, ErrorKind::Option, ErrorKind::Capacity];
    out.info[0] = 1 + kinds.iter().position(|&k| k == err.kind).unwrap_or(0);
    out.info[1] = err.index.unwrap_or(usize::MAX);
    out.text = format!("{}\n{}", err.argument, err.message).into_bytes();
}

/// Fills the info words of `out` from its buffers and hands it over.
fn finish_docs(mut out: Box<MpDocs>) -> *mut MpDocs {
    let o = &mut *out;
    o.info[2] = o.text.as_ptr() as usize;
    o.info[3] = o.text.len();
    o.info[4] = o.kept.as_ptr() as usize;
    o.info[5] = o.kept.len();
    o.info[6] = o.dups.as_ptr() as usize;
    o.info[7] = o.dups.len();
    if let Some(p) = &o.prepared {
        o.info[8] = p.relevance.as_ptr() as usize;
        o.info[9] = p.candidates.as_ptr() as usize;
        o.info[10] = p.costs.as_ref().map_or(0, |c| c.as_ptr() as usize);
        o.info[11] = p.dim;
    }
    Box::into_raw(out)
}

/// A new, empty result.
fn new_docs() -> Box<MpDocs> {
    Box::new(MpDocs {
        info: [0; 13],
        text: Vec::new(),
        kept: Vec::new(),
        dups: Vec::new(),
        prepared: None,
    })
}

/// The documents of [`mp_docs_prepare`]'s arrays (its layout).
///
/// # Safety
/// The pointer contract of [`mp_docs_prepare`].
#[allow(clippy::type_complexity)]
unsafe fn decode_docs(
    n: usize,
    (emb, emb_lens): (*const f32, *const u32),
    (scores, costs, flags, kinds): (*const f64, *const f64, *const u8, *const u8),
    (ids, id_lens): (*const u8, *const u32),
    texts: *const u8,
) -> Result<Vec<mempursuit::DocumentSpec>, mempursuit::DocumentError> {
    use mempursuit::{DocumentSpec, ScoreKind};
    // SAFETY: caller contract for every slice.
    let (emb_lens, scores, costs, flags, kinds, id_lens) = unsafe {
        (
            slice_of(emb_lens, n),
            slice_of(scores, n),
            slice_of(costs, n),
            slice_of(flags, n),
            slice_of(kinds, n),
            slice_of(id_lens, n),
        )
    };
    let sum = |text: bool| -> usize {
        (0..n)
            .filter(|&i| emb_lens[i] != u32::MAX && (flags[i] & 4 != 0) == text)
            .map(|i| emb_lens[i] as usize)
            .sum()
    };
    let (emb_total, text_total) = (sum(false), sum(true));
    let id_total: usize = id_lens
        .iter()
        .filter(|&&l| l != u32::MAX)
        .map(|&l| l as usize)
        .sum();
    // SAFETY: caller contract.
    let (emb, ids, texts) = unsafe {
        (
            slice_of(emb, emb_total),
            slice_of(ids, id_total),
            slice_of(texts, text_total),
        )
    };
    let (mut e_at, mut i_at, mut t_at) = (0usize, 0usize, 0usize);
    (0..n)
        .map(|i| {
            let id = (id_lens[i] != u32::MAX).then(|| {
                let l = id_lens[i] as usize;
                i_at += l;
                String::from_utf8_lossy(&ids[i_at - l..i_at]).into_owned()
            });
            let l = emb_lens[i] as usize;
            let embedding = if emb_lens[i] == u32::MAX {
                None
            } else if flags[i] & 4 != 0 {
                t_at += l;
                let text = String::from_utf8_lossy(&texts[t_at - l..t_at]);
                Some(mempursuit::parse_embedding(&text, i, id.as_deref())?)
            } else {
                e_at += l;
                Some(emb[e_at - l..e_at].to_vec())
            };
            Ok(DocumentSpec {
                id,
                embedding,
                score: (flags[i] & 1 != 0).then_some(scores[i]),
                score_kind: match kinds[i] {
                    1 => ScoreKind::Similarity,
                    2 => ScoreKind::Distance,
                    _ => ScoreKind::None,
                },
                cost: (flags[i] & 2 != 0).then_some(costs[i]),
            })
        })
        .collect()
}

/// The `select` options of the document functions, as text: one line per
/// option, `key\tkind\tvalue` with kind `t` (text), `n` (a number as
/// JavaScript's `String(x)` writes it), `b` (`true`/`false`) or `x` (a
/// value of a type no option takes, described: an error). Each name
/// is checked by [`mempursuit::documents::check_option_name`], each value
/// set by [`SelectSpec::set_typed`]; errors name the key as their argument.
fn spec_from_lines(text: &str) -> Result<SelectSpec, mempursuit::DocumentError> {
    let mut spec = SelectSpec::default();
    for line in text.lines().filter(|l| !l.is_empty()) {
        let mut parts = line.splitn(3, '\t');
        let (key, kind, value) = (
            parts.next().unwrap_or(""),
            parts.next().unwrap_or(""),
            parts.next().unwrap_or(""),
        );
        mempursuit::documents::check_option_name(key)?;
        let number = value.parse::<f64>().unwrap_or(f64::NAN);
        if kind == "x" {
            return Err(mempursuit::DocumentError {
                kind: ErrorKind::Option,
                index: None,
                id: None,
                argument: key.to_owned(),
                message: format!(
                    "option '{key}' is {value}: option values are numbers, booleans or strings"
                ),
            });
        }
        let typed = match kind {
            "b" => Value::Bool(value == "true"),
            "n" => Value::Number(number),
            _ => Value::Text(value),
        };
        spec.set_typed(key, typed)
            .map_err(|e| mempursuit::DocumentError {
                kind: e.kind(),
                index: None,
                id: None,
                argument: key.to_owned(),
                message: e.to_string(),
            })?;
    }
    Ok(spec)
}

/// A JSON number, or `null` for a non-finite value.
fn json_number(x: f64) -> String {
    if x.is_finite() {
        format!("{x:?}")
    } else {
        "null".to_owned()
    }
}

/// A selection of documents as JSON: `{"picks": [{"index", "metadata":
/// {"mempursuit": {"rank", "weight", "score", "residual_sq"}}}],
/// "duplicates": [[index, first]], "relevance_source", "stop_reason"}`,
/// the record's key and fields from [`mempursuit::documents`].
fn selection_json(s: &mempursuit::documents::DocumentSelection) -> String {
    use mempursuit::documents::{MetaValue, METADATA_KEY};
    let picks: Vec<String> = s
        .picks
        .iter()
        .map(|p| {
            let record: Vec<String> = p
                .metadata()
                .iter()
                .map(|&(k, v)| {
                    let v = match v {
                        MetaValue::Count(n) => n.to_string(),
                        MetaValue::Number(x) => json_number(x),
                        MetaValue::Null => "null".to_owned(),
                    };
                    format!("\"{k}\":{v}")
                })
                .collect();
            format!(
                "{{\"index\":{},\"metadata\":{{\"{METADATA_KEY}\":{{{}}}}}}}",
                p.index,
                record.join(",")
            )
        })
        .collect();
    let dups: Vec<String> = s
        .duplicates
        .iter()
        .map(|(a, b)| format!("[{a},{b}]"))
        .collect();
    format!(
        "{{\"picks\":[{}],\"duplicates\":[{}],\"relevance_source\":\"{}\",\"stop_reason\":\"{}\"}}",
        picks.join(","),
        dups.join(","),
        s.relevance_source,
        s.stop_reason
    )
}

/// Selects up to `budget` of the documents of [`mp_docs_prepare`]'s arrays
/// for the query with the options `opts` (`opts_len` UTF-8 bytes, the lines
/// of [`spec_from_lines`]), by [`mempursuit::documents::select_documents`]
/// (2026-12-05). Never null: ok, the info's text is the selection as JSON
/// ([`selection_json`]); else the error as for [`mp_docs_prepare`]. Release
/// with [`mp_docs_free`].
///
/// # Safety
/// The pointer contract of [`mp_docs_prepare`]; `opts` points at
/// `opts_len` readable bytes.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn mp_docs_select(
    query: *const f32,
    d: usize,
    n: usize,
    emb: *const f32,
    emb_lens: *const u32,
    scores: *const f64,
    costs: *const f64,
    flags: *const u8,
    kinds: *const u8,
    ids: *const u8,
    id_lens: *const u32,
    texts: *const u8,
    budget: usize,
    opts: *const u8,
    opts_len: usize,
) -> *mut MpDocs {
    // SAFETY: forwarded caller contract.
    let (q, options) = unsafe { (slice_of(query, d), slice_of(opts, opts_len)) };
    let outcome = spec_from_lines(&String::from_utf8_lossy(options)).and_then(|spec| {
        // SAFETY: forwarded caller contract.
        let docs = unsafe {
            decode_docs(
                n,
                (emb, emb_lens),
                (scores, costs, flags, kinds),
                (ids, id_lens),
                texts,
            )
        }?;
        mempursuit::documents::select_documents(&mut Selector::new(), q, &docs, budget, &spec)
    });
    let mut out = new_docs();
    match outcome {
        Err(err) => fail(&mut out, err),
        Ok(s) => out.text = selection_json(&s).into_bytes(),
    }
    finish_docs(out)
}

/// An integration's settings checked once
/// ([`mempursuit::documents::check_settings`]): the options `opts` (the
/// lines of [`spec_from_lines`]), `scores` (0 never passed, 1 always, 2
/// depends on the documents), `cost` (≠ 0: a cost function is given),
/// `budget_later` (≠ 0: the cost budget may come with each call). Never
/// null: status 0, or the error as for [`mp_docs_prepare`].
///
/// # Safety
/// `opts` points at `opts_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_docs_check(
    opts: *const u8,
    opts_len: usize,
    scores: u32,
    cost: u32,
    budget_later: u32,
) -> *mut MpDocs {
    use mempursuit::documents::ScoresGiven;
    // SAFETY: caller contract.
    let options = unsafe { slice_of(opts, opts_len) };
    let scores = match scores {
        0 => ScoresGiven::No,
        1 => ScoresGiven::Yes,
        _ => ScoresGiven::Depends,
    };
    let outcome = spec_from_lines(&String::from_utf8_lossy(options)).and_then(|spec| {
        mempursuit::documents::check_settings(&spec, scores, cost != 0, budget_later != 0)
    });
    let mut out = new_docs();
    if let Err(err) = outcome {
        fail(&mut out, err);
    }
    finish_docs(out)
}

/// The query embedding (`d` f32) checked before a store is asked
/// ([`mempursuit::documents::check_query`]). Never null: status 0, or the
/// error as for [`mp_docs_prepare`].
///
/// # Safety
/// `query` points at `d` readable f32.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_docs_check_query(query: *const f32, d: usize) -> *mut MpDocs {
    // SAFETY: caller contract.
    let q = unsafe { slice_of(query, d) };
    let mut out = new_docs();
    if let Err(err) = mempursuit::documents::check_query(q) {
        fail(&mut out, err);
    }
    finish_docs(out)
}

/// The result of [`mp_docs_prepare`] as 13 words: status (0 ok, else 1 +
/// the error kind's position in input, option, capacity), the faulty
/// document's index (`usize::MAX`: none), text pointer and length (ok: the
/// relevance source, `score` or `cosine`; error: `argument\nmessage`), kept
/// indices (u32) pointer and count, duplicates (u32 pairs index, first)
/// pointer and count of values, relevance (f64, one per kept) pointer,
/// candidates (f32, kept × dim) pointer, costs (f64; 0: none) pointer, dim.
///
/// # Safety
/// `docs` from [`mp_docs_prepare`], not freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_docs_info(docs: *const MpDocs) -> *const usize {
    // SAFETY: caller contract.
    unsafe { (*docs).info.as_ptr() }
}

/// Releases a result of [`mp_docs_prepare`]; null is ignored.
///
/// # Safety
/// `docs` from [`mp_docs_prepare`], not freed already.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mp_docs_free(docs: *mut MpDocs) {
    if !docs.is_null() {
        // SAFETY: made by Box::into_raw in mp_docs_prepare.
        drop(unsafe { Box::from_raw(docs) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::ptr::null;

    fn string(ptr: *const u8, len: usize) -> String {
        // SAFETY: (ptr, len) from the module's own accessors.
        let bytes = unsafe { core::slice::from_raw_parts(ptr, len) };
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    fn error(sel: *const MpSelector) -> (String, String) {
        unsafe {
            (
                string(mp_error_kind_ptr(sel), mp_error_kind_len(sel)),
                string(mp_error_ptr(sel), mp_error_len(sel)),
            )
        }
    }

    /// The crate-level example of the core: two paraphrases of fact A and
    /// one statement of fact B.
    fn data() -> ([f32; 2], [f32; 6]) {
        let s = core::f32::consts::FRAC_1_SQRT_2;
        ([s, s], [0.9950, 0.0998, 0.9998, 0.0200, 0.0, 1.0])
    }

    #[test]
    fn a_store_selects_on_its_ids_and_names_its_errors() {
        let (q, _) = data();
        // Fact A, fact A reworded, an unrelated row, fact B.
        let rows = [0.9950f32, 0.0998, 0.9998, 0.0200, -1.0, 0.0, 0.0, 1.0];
        let sel = mp_selector_new();
        let store = unsafe { mp_store_new(sel, rows.as_ptr(), 8, 2, b"int8".as_ptr(), 4) };
        assert!(!store.is_null());
        assert_eq!(
            unsafe { (mp_store_len(store), mp_store_dim(store)) },
            (4, 2)
        );
        let ids = [0u32, 1, 3];
        let n = unsafe {
            mp_store_select(
                store,
                sel,
                q.as_ptr(),
                2,
                ids.as_ptr(),
                3,
                null(),
                0,
                0,
                null(),
                0,
                0,
                2,
            )
        };
        assert_eq!(n, 2);
        assert_eq!(unsafe { &*sel }.picks, [0, 2]);
        // An id out of range: its position and the id.
        let bad = [0u32, 9];
        let n = unsafe {
            mp_store_select(
                store,
                sel,
                q.as_ptr(),
                2,
                bad.as_ptr(),
                2,
                null(),
                0,
                0,
                null(),
                0,
                0,
                2,
            )
        };
        assert_eq!(n, -1);
        assert_eq!(error(sel).0, "input");
        assert_eq!(unsafe { (mp_error_index(sel), mp_error_id(sel)) }, (1, 9));
        // A query of another d.
        let n = unsafe {
            mp_store_select(
                store,
                sel,
                q.as_ptr(),
                1,
                ids.as_ptr(),
                3,
                null(),
                0,
                0,
                null(),
                0,
                0,
                2,
            )
        };
        assert_eq!(n, -1);
        assert!(error(sel).1.starts_with("the query has 1 values"));
        assert_eq!(unsafe { mp_error_index(sel) }, usize::MAX);
        // A bad row in an append: its store index, nothing added.
        let zero = [0.0f32, 0.0];
        assert_eq!(unsafe { mp_store_append(sel, store, zero.as_ptr(), 2) }, -1);
        assert_eq!(
            unsafe { (mp_error_index(sel), mp_error_id(sel)) },
            (4, usize::MAX)
        );
        assert_eq!(unsafe { mp_store_len(store) }, 4);
        let more = [0.6f32, 0.8];
        assert_eq!(unsafe { mp_store_append(sel, store, more.as_ptr(), 2) }, 0);
        assert_eq!(unsafe { mp_store_len(store) }, 5);
        // An unknown storage, a bad row at build: null and the error.
        let none = unsafe { mp_store_new(sel, rows.as_ptr(), 8, 2, b"f64".as_ptr(), 3) };
        assert!(none.is_null());
        assert_eq!(error(sel).0, "option");
        let mut nan = rows;
        nan[5] = f32::NAN;
        let none = unsafe { mp_store_new(sel, nan.as_ptr(), 8, 2, b"f32".as_ptr(), 3) };
        assert!(none.is_null());
        assert_eq!(unsafe { mp_error_index(sel) }, 2);
        unsafe {
            mp_store_free(store);
            mp_selector_free(sel);
        }
    }

    enum V<'a> {
        T(&'a str),
        N(f64),
        B(bool),
    }

    fn set(sel: *mut MpSelector, key: &str, v: V<'_>) -> i32 {
        let (kind, number, text) = match v {
            V::T(t) => (0, 0.0, t),
            V::N(x) => (1, x, ""),
            V::B(b) => (2, f64::from(u8::from(b)), ""),
        };
        unsafe {
            mp_spec_set(
                sel,
                key.as_ptr(),
                key.len(),
                kind,
                number,
                text.as_ptr(),
                text.len(),
            )
        }
    }

    fn select(sel: *mut MpSelector, q: &[f32], c: &[f32], rel: Option<&[f32]>, k: usize) -> i32 {
        select_costed(sel, q, c, rel, None, k)
    }

    fn select_costed(
        sel: *mut MpSelector,
        q: &[f32],
        c: &[f32],
        rel: Option<&[f32]>,
        costs: Option<&[f32]>,
        k: usize,
    ) -> i32 {
        let (r, rl) = rel.map_or((null(), 0), |r| (r.as_ptr(), r.len()));
        let (w, wl) = costs.map_or((null(), 0), |w| (w.as_ptr(), w.len()));
        unsafe {
            mp_select(
                sel,
                q.as_ptr(),
                q.len(),
                c.as_ptr(),
                c.len(),
                r,
                rl,
                u32::from(rel.is_some()),
                w,
                wl,
                u32::from(costs.is_some()),
                k,
            )
        }
    }

    fn u32s(sel: *const MpSelector, field: u32) -> Vec<u32> {
        unsafe {
            let ptr = mp_result_ptr(sel, field).cast::<u32>();
            core::slice::from_raw_parts(ptr, mp_result_len(sel, field)).to_vec()
        }
    }

    fn f64s(sel: *const MpSelector, field: u32) -> Vec<f64> {
        unsafe {
            let ptr = mp_result_ptr(sel, field).cast::<f64>();
            core::slice::from_raw_parts(ptr, mp_result_len(sel, field)).to_vec()
        }
    }

    fn stop(sel: *const MpSelector) -> String {
        unsafe { string(mp_result_ptr(sel, 3), mp_result_len(sel, 3)) }
    }

    #[test]
    fn the_default_is_the_recommended_setting_and_names_select_the_others() {
        let (q, c) = data();
        let sel = mp_selector_new();
        assert_eq!(select(sel, &q, &c, None, 2), 2, "{:?}", error(sel));
        let mut native = Selector::new();
        let mut expect = |spec: &str, k: usize| {
            native
                .select_spec(&spec.parse().unwrap(), CallData::new(&q, Pool::F32(&c)), k)
                .unwrap()
        };
        let rec = expect("recommended", 2);
        assert_eq!(u32s(sel, 0), [rec.picks[0] as u32, rec.picks[1] as u32]);
        assert_eq!(f64s(sel, 1), rec.weights);
        for (spec, picks) in [("pursuit", [0, 2]), ("topk", [0, 1]), ("mmr", [0, 2])] {
            unsafe { mp_spec_reset(sel) };
            assert_eq!(set(sel, "method", V::T(spec)), 0);
            assert_eq!(select(sel, &q, &c, None, 2), 2);
            assert_eq!(u32s(sel, 0), picks, "{spec}");
            let native = expect(spec, 2);
            assert_eq!(f64s(sel, 1), native.weights, "{spec}");
            let steps = f64s(sel, 2);
            assert_eq!(steps.len(), 2 * STEP_LEN);
            for (t, st) in native.steps.iter().enumerate() {
                let record = &steps[t * STEP_LEN..][..STEP_LEN];
                assert_eq!(record, step_values(st));
            }
            assert_eq!(stop(sel), "budget");
        }
        // Centroid pursuit with camelCase and typed values.
        unsafe { mp_spec_reset(sel) };
        assert_eq!(set(sel, "method", V::T("centroid")), 0);
        assert_eq!(set(sel, "gamma", V::N(0.5)), 0);
        assert_eq!(set(sel, "adaptive", V::B(false)), 0);
        assert_eq!(select(sel, &q, &c, None, 3), 3);
        assert_eq!(f64s(sel, 1), [1.0 / 3.0; 3]);
        // Retriever scores (by rank): row 1 first for top-K.
        unsafe { mp_spec_reset(sel) };
        assert_eq!(set(sel, "method", V::T("topk")), 0);
        assert_eq!(select(sel, &q, &c, Some(&[0.1, 0.9, 0.5]), 1), 1);
        assert_eq!(u32s(sel, 0), [1]);
        // Costs and a cost budget (tokens): row 2 (70) no longer fits.
        unsafe { mp_spec_reset(sel) };
        assert_eq!(set(sel, "method", V::T("pursuit")), 0);
        assert_eq!(set(sel, "costBudget", V::N(100.0)), 0);
        let tokens = [40.0f32, 35.0, 70.0];
        assert_eq!(select_costed(sel, &q, &c, None, Some(&tokens), 3), 2);
        assert_eq!(u32s(sel, 0), [0, 1]);
        assert_eq!(stop(sel), "cost_budget");
        assert_eq!(select(sel, &q, &c, None, 3), -1);
        assert_eq!(
            error(sel),
            (
                "option".into(),
                "a cost budget needs costs (one per candidate, e.g. its token count)".into()
            )
        );
        assert_eq!(select_costed(sel, &q, &c, None, Some(&tokens[..2]), 3), -1);
        assert_eq!(
            error(sel),
            (
                "input".into(),
                "costs have 2 entries but the pool has 3 candidates".into()
            )
        );
        // Storage f16 and int8 reach the library (feature `half`).
        for storage in ["f16", "bf16", "int8"] {
            unsafe { mp_spec_reset(sel) };
            assert_eq!(set(sel, "storage", V::T(storage)), 0);
            assert_eq!(
                select(sel, &q, &c, None, 2),
                2,
                "{storage}: {:?}",
                error(sel)
            );
        }
        unsafe { mp_selector_free(sel) };
    }

    #[test]
    fn errors_are_the_librarys_with_their_kind() {
        let (q, c) = data();
        let sel = mp_selector_new();
        set(sel, "method", V::T("pursuit"));
        set(sel, "gamma", V::N(2.0));
        assert_eq!(select(sel, &q, &c, None, 2), -1);
        let (kind, msg) = error(sel);
        assert_eq!(kind, "option");
        assert_eq!(msg, "gamma 2 must be in (0, 1]");
        assert_eq!(
            u32s(sel, 0),
            Vec::<u32>::new(),
            "a failed call leaves no result"
        );
        unsafe { mp_spec_reset(sel) };
        assert_eq!(set(sel, "mmrLambda", V::N(0.3)), 0);
        assert_eq!(select(sel, &q, &c, None, 2), -1);
        assert_eq!(
            error(sel),
            (
                "option".into(),
                "option 'mmrLambda' does not apply to method 'recommended' (it applies to mmr)"
                    .into()
            )
        );
        assert_eq!(set(sel, "lambda", V::N(0.3)), -1);
        assert!(error(sel)
            .1
            .starts_with("unknown option 'lambda' (options: method,"));
        assert_eq!(set(sel, "adaptive", V::N(1.0)), -1);
        assert_eq!(
            error(sel).1,
            "option 'adaptive' must be true or false, got 1"
        );
        assert_eq!(set(sel, "method", V::N(1.0)), -1);
        assert_eq!(set(sel, "method", V::T("bm25")), -1);
        assert_eq!(error(sel).0, "option");
        // Shapes are the library's errors, from the raw lengths.
        unsafe { mp_spec_reset(sel) };
        assert_eq!(select(sel, &q, &c[..5], None, 2), -1);
        assert_eq!(
            error(sel),
            (
                "input".into(),
                Error::ShapeMismatch {
                    candidates_len: 5,
                    dim: 2
                }
                .to_string()
            )
        );
        assert_eq!(select(sel, &[], &c, None, 2), -1);
        assert_eq!(error(sel).1, Error::ZeroDimension.to_string());
        assert_eq!(select(sel, &q, &c, Some(&[]), 2), -1);
        assert_eq!(
            error(sel).1,
            "relevance has 0 entries but the pool has 3 candidates"
        );
        let nan = [f32::NAN, 0.0];
        assert_eq!(select(sel, &nan, &c, None, 2), -1);
        assert_eq!(
            error(sel),
            (
                "input".into(),
                "query: element 0 is not finite (NaN)".into()
            )
        );
        // A shape whose scratch overflows the address space: capacity.
        let big = vec![1.0f32; 100_000];
        let one = [1.0f32];
        if usize::BITS == 32 {
            assert_eq!(select(sel, &one, &big, None, 20_000), -1);
            assert_eq!(error(sel).0, "capacity");
        }
        // Arguments of the ABI.
        let r = unsafe { mp_select(sel, null(), 2, c.as_ptr(), 6, null(), 0, 0, null(), 0, 0, 2) };
        assert_eq!(r, -1);
        assert_eq!(
            error(sel),
            (
                "argument".into(),
                "query: null pointer for 2 elements".into()
            )
        );
        // One byte past a 4-aligned buffer: misaligned for f32 wherever the
        // buffer lands (a u8 array may itself start at any address, and
        // one past it be aligned, as it was once under Miri).
        let words = [0u32; 4];
        let odd = unsafe { words.as_ptr().cast::<u8>().add(1) }.cast::<f32>();
        let r = unsafe { mp_select(sel, odd, 2, c.as_ptr(), 6, null(), 0, 0, null(), 0, 0, 2) };
        assert_eq!(r, -1);
        assert!(error(sel).1.contains("not aligned"));
        let bad = [0xffu8, 0xfe];
        let r = unsafe { mp_spec_set(sel, bad.as_ptr(), 2, 1, 0.5, null(), 0) };
        assert_eq!(r, -1);
        assert_eq!(error(sel).0, "argument");
        let r = unsafe { mp_spec_set(sel, b"gamma".as_ptr(), 5, 7, 0.5, null(), 0) };
        assert_eq!((r, error(sel).1), (-1, "unknown value kind 7".into()));
        // A success clears the error.
        unsafe { mp_spec_reset(sel) };
        assert_eq!(select(sel, &q, &c, None, 2), 2);
        assert_eq!(
            unsafe { (mp_error_len(sel), mp_error_kind_len(sel)) },
            (0, 0)
        );
        unsafe { mp_selector_free(sel) };
        assert_eq!(select(core::ptr::null_mut(), &q, &c, None, 2), -1);
        assert_eq!(unsafe { mp_spec_reset(core::ptr::null_mut()) }, -1);
        assert!(unsafe { mp_result_ptr(null(), 0) }.is_null());
    }

    #[test]
    fn excluded_skipped_and_stop_reasons() {
        let (q, mut c) = data();
        c[2] = f32::NAN; // row 1 unusable
        let sel = mp_selector_new();
        set(sel, "method", V::T("topk"));
        assert_eq!(select(sel, &q, &c, None, 3), -1);
        assert_eq!(
            error(sel).1,
            format!(
                "candidate 1: element 0 is not finite (NaN){}",
                mempursuit::EXCLUDE_HINT
            )
        );
        set(sel, "invalid", V::T("exclude"));
        assert_eq!(select(sel, &q, &c, None, 3), 2);
        assert_eq!(u32s(sel, 0), [0, 2]);
        assert_eq!(u32s(sel, 4), [1]);
        assert_eq!(stop(sel), "pool_exhausted");
        // Duplicates skipped by the pursuit.
        let (q, c) = data();
        let dup = [&c[..], &c[..2]].concat();
        unsafe { mp_spec_reset(sel) };
        set(sel, "method", V::T("pursuit"));
        set(sel, "dependentPicks", V::T("skip"));
        let n = select(sel, &q, &dup, None, 4);
        assert!(n >= 2, "{:?}", error(sel));
        assert!(
            !u32s(sel, 5).is_empty(),
            "the duplicate of row 0 is skipped"
        );
        unsafe { mp_selector_free(sel) };
    }

    #[test]
    fn the_layout_names_come_from_the_library() {
        let text = string(mp_layout_ptr(), mp_layout_len());
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["abi"], ABI_VERSION);
        let names: Vec<&str> = v["step_fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap())
            .collect();
        let want: Vec<&str> = Step::FIELDS.iter().map(|f| f.name).collect();
        assert_eq!(names, want);
        assert_eq!(
            v["stop_reasons"],
            serde_json::json!([
                "budget",
                "adaptive",
                "pool_exhausted",
                "pool_optimum",
                "cost_budget"
            ])
        );
        assert_eq!(
            v["error_kinds"],
            serde_json::json!(["input", "option", "capacity", "argument"])
        );
        assert_eq!(v["options"].as_array().unwrap().len(), OPTIONS.len());
        assert_eq!(v["options"][0]["names"][0], "recommended");
        let result: Vec<&str> = v["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            result,
            [
                "picks",
                "weights",
                "steps",
                "stop_reason",
                "excluded",
                "skipped"
            ]
        );
    }

    #[test]
    fn step_records_pair_values_with_their_names() {
        let mut st = Step::default();
        st.index = 1;
        st.score = 2.0;
        st.residual_sq = 3.0;
        st.improvement = 4.0;
        st.fw_gap = 5.0;
        st.nu = 6.0;
        st.free_size = 7;
        st.solver_iterations = 8;
        st.filled = true;
        st.dependent = true;
        st.refit = RefitStatus::Blocked {
            index: 0,
            violation: 1.0,
        };
        st.verified = 12;
        let names = Step::FIELDS.map(|f| f.name);
        let by_name: Vec<(&str, f64)> = names.into_iter().zip(step_values(&st)).collect();
        assert_eq!(
            by_name,
            [
                ("index", 1.0),
                ("score", 2.0),
                ("residual_sq", 3.0),
                ("improvement", 4.0),
                ("fw_gap", 5.0),
                ("nu", 6.0),
                ("free_size", 7.0),
                ("solver_iterations", 8.0),
                ("filled", 1.0),
                ("dependent", 1.0),
                ("refit", 2.0),
                ("verified", 12.0),
            ]
        );
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
