//! Memory footprint of the fixed workspaces, and the tables in
//! `docs/PORTABILITY.md` that document it.
//!
//! The first table lists, for typical capacities (P_max, K_max): the size
//! of `FixedWorkspace<P, K>` (every selector) and of
//! `ScratchSize::for_capacity(P, K).bytes()` on a 64-bit host, the same on
//! 32-bit targets (thumbv7em, wasm32), and the size of the embeddings
//! themselves (P × d × 4 bytes, not part of the workspace). The second
//! lists the workspace of each [`ScratchKind`] (`TopKWorkspace`,
//! `CentroidWorkspace`, `PursuitWorkspace`, `FixedWorkspace`) on both
//! widths. This test recomputes every number and compares it with the
//! document, so the tables cannot go stale. The 32-bit columns are computed
//! by formula here (`usize` = 4 bytes, `Step` = 80 bytes); the wasm check
//! (`wasm/test/native.test.mjs`) and the embedded check (`embedded-check/`)
//! confirm them on real 32-bit targets.

use mempursuit::{
    CentroidWorkspace, FixedWorkspace, PursuitWorkspace, ScratchKind, ScratchSize, Step,
    TopKWorkspace,
};
use mempursuit_tests::scratch::ScratchVecs;

/// One row of the size table.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Row {
    p: usize,
    k: usize,
    d: usize,
    /// `size_of::<FixedWorkspace<P, K>>()` on this (the host) target.
    fixed: usize,
    /// `ScratchSize::for_capacity(P, K).bytes()` on this target.
    scratch: usize,
    /// `size_of` of the workspace of each kind (top-K, centroid, pursuit,
    /// every selector) on this target.
    kinds: [usize; 4],
}

const KINDS: [ScratchKind; 4] = [
    ScratchKind::TopK,
    ScratchKind::Centroid,
    ScratchKind::Pursuit,
    ScratchKind::Int8,
];

macro_rules! row {
    ($p:literal, $k:literal, $d:literal) => {
        Row {
            p: $p,
            k: $k,
            d: $d,
            fixed: core::mem::size_of::<FixedWorkspace<$p, $k>>(),
            scratch: ScratchSize::for_capacity($p, $k)
                .expect("no overflow")
                .bytes(),
            kinds: [
                core::mem::size_of::<TopKWorkspace<$p, $k>>(),
                core::mem::size_of::<CentroidWorkspace<$p, $k>>(),
                core::mem::size_of::<PursuitWorkspace<$p, $k>>(),
                core::mem::size_of::<FixedWorkspace<$p, $k>>(),
            ],
        }
    };
}

/// The capacities of the table, in its order.
fn rows() -> Vec<Row> {
    vec![
        row!(32, 8, 384),
        row!(64, 16, 384),
        row!(128, 16, 768),
        row!(200, 20, 384),
        row!(200, 20, 1536),
        row!(500, 50, 1024),
        row!(1000, 100, 1536),
    ]
}

/// Size of [`Step`] on 32-bit targets whose f64 is 8-aligned (thumbv7em,
/// wasm32): 2 × usize (4) + 5 × f64 + 2 × u32 + bool + `RefitStatus`
/// (tag, usize, f64: 16) = 73, padded to 80.
const STEP_BYTES_32: usize = 80;

/// Size of [`Step`] on 64-bit targets: 2 × usize + 5 × f64 + 2 × u32 +
/// bool + `RefitStatus` (tag, usize, f64: 24) = 89, padded to 96.
const STEP_BYTES_64: usize = 96;

/// The element counts of a workspace of `kind` (the table in the docs of
/// `ScratchSize`): (f32, f64, usize, flag bytes, steps).
fn counts(kind: ScratchKind, p: usize, k: usize) -> [usize; 5] {
    let centroid = kind >= ScratchKind::Centroid;
    let qp = kind >= ScratchKind::Pursuit;
    let int8 = kind >= ScratchKind::Int8;
    let on = |b: bool, n: usize| if b { n } else { 0 };
    let gram_rows = if qp { k } else { usize::from(centroid) };
    [
        5 * p + on(centroid, 3 * p) + gram_rows * p + on(qp, k) + on(int8, k * p),
        on(centroid, k + 2 * p) + on(qp, 3 * k * k + 19 * k) + on(int8, 3 * p),
        k + p + on(centroid, p) + on(qp, k),
        p + on(qp, k),
        k,
    ]
}

/// The scratch bytes of a kind for a given `usize` and `Step` size.
fn kind_formula(kind: ScratchKind, p: usize, k: usize, usize_bytes: usize, step: usize) -> usize {
    let [f32s, f64s, idx, flags, steps] = counts(kind, p, k);
    4 * f32s + 8 * f64s + usize_bytes * idx + flags + step * steps
}

/// The scratch bytes of ScratchSize (every selector) for a given `usize`
/// and `Step` size: 4·(8P + 2KP + K) + 8·(3K² + 20K + 5P) + usize·(2P + 2K)
/// + (P + K) + Step·K.
fn scratch_formula(p: usize, k: usize, usize_bytes: usize, step_bytes: usize) -> usize {
    4 * (8 * p + 2 * k * p + k)
        + 8 * (3 * k * k + 20 * k + 5 * p)
        + usize_bytes * (2 * p + 2 * k)
        + (p + k)
        + step_bytes * k
}

/// A fixed workspace is the same arrays as one struct: the scratch bytes
/// rounded up to its alignment (8, from the f64, usize and `Step` arrays).
fn fixed_formula(scratch: usize) -> usize {
    scratch.div_ceil(8) * 8
}

/// Bytes in KiB (one decimal) below 1 MiB, in MiB (two decimals) above.
fn kib(bytes: usize) -> String {
    if bytes < 1 << 20 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{:.2} MiB", bytes as f64 / (1024.0 * 1024.0))
    }
}

fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The table as it must appear in docs/PORTABILITY.md (64-bit host columns
/// from the host; on a 32-bit host the test compares the 32-bit column).
fn expected_table() -> String {
    let mut s = String::from(
        "| P_max | K_max | d | `FixedWorkspace<P, K>`, 64-bit | `ScratchSize::bytes`, 64-bit | both, 32-bit (thumbv7em, wasm32) | embeddings P·d·4 (not in the workspace) |\n\
         |---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows() {
        let (fixed64, scratch64) = host64(&r);
        let b32 = fixed_formula(scratch_formula(r.p, r.k, 4, STEP_BYTES_32));
        let emb = r.p * r.d * 4;
        s.push_str(&format!(
            "| {} | {} | {} | {} ({}) | {} | {} ({}) | {} ({}) |\n",
            r.p,
            r.k,
            r.d,
            thousands(fixed64),
            kib(fixed64),
            thousands(scratch64),
            thousands(b32),
            kib(b32),
            thousands(emb),
            kib(emb),
        ));
    }
    s
}

/// The per-kind table as it must appear in docs/PORTABILITY.md.
fn expected_kind_table() -> String {
    let mut s = String::from(
        "| P_max | K_max | `TopKWorkspace` (top-K) | `CentroidWorkspace` (centroid, recommended, MMR) | `PursuitWorkspace` (every f32/f16/bf16 selector) | `FixedWorkspace` (also int8) |\n\
         |---:|---:|---:|---:|---:|---:|\n",
    );
    let mut seen = Vec::new();
    for r in rows() {
        if seen.contains(&(r.p, r.k)) {
            continue;
        }
        seen.push((r.p, r.k));
        s.push_str(&format!("| {} | {} |", r.p, r.k));
        for (i, kind) in KINDS.into_iter().enumerate() {
            let b64 = if cfg!(target_pointer_width = "64") {
                r.kinds[i]
            } else {
                fixed_formula(kind_formula(kind, r.p, r.k, 8, STEP_BYTES_64))
            };
            let b32 = fixed_formula(kind_formula(kind, r.p, r.k, 4, STEP_BYTES_32));
            s.push_str(&format!(" {} / {} |", thousands(b64), thousands(b32)));
        }
        s.push('\n');
    }
    s
}

/// The 64-bit numbers: measured on a 64-bit host, by formula otherwise.
fn host64(r: &Row) -> (usize, usize) {
    if cfg!(target_pointer_width = "64") {
        (r.fixed, r.scratch)
    } else {
        let s = scratch_formula(r.p, r.k, 8, STEP_BYTES_64);
        (fixed_formula(s), s)
    }
}

#[test]
fn step_size_is_what_the_formulas_assume() {
    let step = core::mem::size_of::<Step>();
    if cfg!(target_pointer_width = "64") {
        assert_eq!(step, STEP_BYTES_64);
    } else {
        assert_eq!(step, STEP_BYTES_32);
    }
}

#[test]
fn measured_sizes_match_the_formulas() {
    let usize_bytes = core::mem::size_of::<usize>();
    let step = core::mem::size_of::<Step>();
    for r in rows() {
        let scratch = scratch_formula(r.p, r.k, usize_bytes, step);
        assert_eq!(r.scratch, scratch, "ScratchSize::bytes for {r:?}");
        assert_eq!(
            r.fixed,
            fixed_formula(scratch),
            "size_of FixedWorkspace for {r:?}"
        );
    }
    // Spot values, so the formulas themselves are pinned: P = 64, K = 16.
    assert_eq!(scratch_formula(64, 16, 8, STEP_BYTES_64), 24_464);
    assert_eq!(scratch_formula(64, 16, 4, STEP_BYTES_32), 23_568);
}

/// Every kind's fixed workspace is exactly its `ScratchSize` (rounded up to
/// 8), the kinds nest, and the kinds below `Int8` hold neither the int8
/// pursuit's cache nor its radii: top-K and the f32 pursuit carry only the
/// bytes they need.
#[test]
fn each_kind_carries_only_its_buffers() {
    let usize_bytes = core::mem::size_of::<usize>();
    let step = core::mem::size_of::<Step>();
    for r in rows() {
        for (i, kind) in KINDS.into_iter().enumerate() {
            let need = ScratchSize::for_kind(kind, r.p, r.k).unwrap();
            assert_eq!(
                [need.f32s, need.f64s, need.indices, need.flags, need.steps],
                counts(kind, r.p, r.k),
                "{kind:?} {r:?}"
            );
            let bytes = kind_formula(kind, r.p, r.k, usize_bytes, step);
            assert_eq!(need.bytes(), bytes, "{kind:?} {r:?}");
            assert_eq!(r.kinds[i], fixed_formula(bytes), "size_of {kind:?} {r:?}");
            if i > 0 {
                assert!(r.kinds[i - 1] < r.kinds[i], "{kind:?} {r:?}");
            }
        }
        // Top-K: O(P) and no f64 at all.
        let topk = ScratchSize::for_kind(ScratchKind::TopK, r.p, r.k).unwrap();
        assert_eq!(
            (topk.f64s, topk.f32s, topk.indices),
            (0, 5 * r.p, r.p + r.k)
        );
        // The pursuit: no int8 cache (K·P f32) and no per-row f64 radii.
        let full = ScratchSize::for_capacity(r.p, r.k).unwrap();
        let qp = ScratchSize::for_kind(ScratchKind::Pursuit, r.p, r.k).unwrap();
        assert_eq!(full.f32s - qp.f32s, r.k * r.p);
        assert_eq!(full.f64s - qp.f64s, 3 * r.p);
        // Each kind's workspace runs (its view has its kind).
        let mut bufs = ScratchVecs::for_kind(ScratchKind::TopK, 4, 2);
        assert_eq!(
            bufs.workspace(ScratchKind::TopK, 4, 2).unwrap().kind(),
            ScratchKind::TopK
        );
    }
    // `for_method` picks the smallest kind.
    use mempursuit::{InputPolicy, Method, PursuitOptions};
    let cases = [
        (Method::TopK(InputPolicy::default()), ScratchKind::TopK),
        (Method::recommended(), ScratchKind::Centroid),
        (
            Method::Pursuit(PursuitOptions::centroid(0.5)),
            ScratchKind::Centroid,
        ),
        (Method::Pursuit(PursuitOptions::PAPER), ScratchKind::Pursuit),
    ];
    for (m, kind) in cases {
        assert_eq!(ScratchKind::of(&m), kind);
        assert_eq!(
            ScratchSize::for_method(&m, 200, 20),
            ScratchSize::for_kind(kind, 200, 20)
        );
    }
}

#[test]
fn portability_doc_table_is_current() {
    let doc = include_str!("../../docs/PORTABILITY.md");
    let begin = "<!-- sizes:begin (generated; checked by tests/tests/sizes.rs) -->\n";
    let end = "<!-- sizes:end -->";
    let start = doc
        .find(begin)
        .expect("begin marker in docs/PORTABILITY.md")
        + begin.len();
    let stop = start + doc[start..].find(end).expect("end marker");
    let expected = expected_table();
    assert_eq!(
        &doc[start..stop],
        expected,
        "docs/PORTABILITY.md size table is stale; replace it with:\n{expected}"
    );
    let begin = "<!-- sizes-by-kind:begin (generated; checked by tests/tests/sizes.rs) -->\n";
    let end = "<!-- sizes-by-kind:end -->";
    let start = doc
        .find(begin)
        .expect("begin marker of the per-kind table in docs/PORTABILITY.md")
        + begin.len();
    let stop = start + doc[start..].find(end).expect("end marker");
    let expected = expected_kind_table();
    assert_eq!(
        &doc[start..stop],
        expected,
        "docs/PORTABILITY.md per-kind size table is stale; replace it with:\n{expected}"
    );
}

#[test]
fn workspace_from_buffers_accepts_exactly_the_scratch_size() {
    let need = ScratchSize::for_capacity(64, 16).unwrap();
    let mut bufs = ScratchVecs::new(need);
    let ws = bufs.workspace(ScratchKind::Int8, 64, 16).unwrap();
    assert_eq!((ws.max_pool(), ws.max_budget()), (64, 16));
    // One element short in the f32 buffer is an error, not a panic.
    let short = need.f32s - 1;
    let mut bufs = ScratchVecs::new(ScratchSize {
        f32s: short,
        ..need
    });
    let err = bufs.workspace(ScratchKind::Int8, 64, 16).unwrap_err();
    assert_eq!(
        err,
        mempursuit::Error::BufferTooShort {
            buffer: mempursuit::ScratchBuffer::F32s,
            len: short,
            needed: need.f32s,
        }
    );
}

#[test]
fn scratch_size_rejects_overflowing_capacities() {
    // K² overflows.
    assert_eq!(ScratchSize::for_capacity(1, usize::MAX / 2), None);
    // P·K overflows.
    assert_eq!(ScratchSize::for_capacity(usize::MAX / 3, 4), None);
    // Every element count fits in usize, but the byte total does not: the
    // f32 count is 11P + 1 ≈ 0.55·usize::MAX and its bytes are 4× that. On a 32-bit
    // target the same happens at shapes that merely look large (P = 100,000,
    // K = 20,000: 2.0e9 Gram elements fit in u32, their 8.0e9 bytes do not). Before this was checked,
    // `bytes()` overflowed (a panic in debug builds, a wrong size in
    // release builds).
    let p = usize::MAX / 20;
    assert!(p.checked_mul(11).is_some());
    assert_eq!(ScratchSize::for_capacity(p, 1), None);
    // A hand-made size saturates instead of wrapping.
    let hand = ScratchSize {
        f32s: usize::MAX,
        f64s: 0,
        indices: 0,
        flags: 0,
        steps: 0,
    };
    assert_eq!(hand.checked_bytes(), None);
    assert_eq!(hand.bytes(), usize::MAX);
    // The largest shapes that do fit report an exact size.
    let s = ScratchSize::for_capacity(1 << 20, 1 << 10).unwrap();
    assert_eq!(
        s.bytes(),
        scratch_formula(
            1 << 20,
            1 << 10,
            core::mem::size_of::<usize>(),
            core::mem::size_of::<Step>()
        )
    );
    assert_eq!(s.checked_bytes(), Some(s.bytes()));
}

/// The 32-bit byte total of the shape in the comment above, computed in
/// u32 arithmetic the way a 32-bit target would: it does not fit.
#[test]
fn a_32_bit_target_overflows_where_the_host_does_not() {
    let (p, k) = (100_000u32, 20_000u32);
    let gram_elems = p.checked_mul(k).expect("P·K fits in u32");
    assert_eq!(gram_elems.checked_mul(4), None);
    // On the 64-bit host the same capacity is fine: 8.0e9 bytes of Gram rows.
    if cfg!(target_pointer_width = "64") {
        let s = ScratchSize::for_capacity(100_000, 20_000).unwrap();
        assert!(s.bytes() > u32::MAX as usize);
    }
}
