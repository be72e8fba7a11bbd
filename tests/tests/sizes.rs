//! Memory footprint of the fixed workspace, and the table in
//! `docs/PORTABILITY.md` that documents it.
//!
//! The table lists, for typical capacities (P_max, K_max): the size of
//! `FixedWorkspace<P, K>` and of `ScratchSize::for_capacity(P, K).bytes()` on
//! a 64-bit host, the same on 32-bit targets (thumbv7em, wasm32), and the
//! size of the embeddings themselves (P × d × 4 bytes, not part of the
//! workspace). This test recomputes every number and compares it with the
//! document, so the table cannot go stale. The 32-bit column is computed by
//! formula here (`usize` = 4 bytes, `Step` = 56 bytes); the wasm check
//! (`wasm/test/native.test.mjs`) and the embedded check (`embedded-check/`) confirm it
//! on real 32-bit targets.

use mempursuit::{FixedWorkspace, ScratchSize, Step, Workspace};

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
}

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

/// The scratch bytes of ScratchSize for a given `usize` and `Step` size:
/// 4·(7P + K + 2KP) + 8·(2K² + 10K + 4P) + usize·(P + 3K) + Step·K.
fn scratch_formula(p: usize, k: usize, usize_bytes: usize, step_bytes: usize) -> usize {
    4 * (7 * p + k + 2 * k * p)
        + 8 * (2 * k * k + 10 * k + 4 * p)
        + usize_bytes * (p + 3 * k)
        + step_bytes * k
}

/// `FixedWorkspace` is the same arrays as one struct: the scratch bytes
/// rounded up to its alignment (8, from the f64 arrays).
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
    assert_eq!(scratch_formula(64, 16, 8, STEP_BYTES_64), 19_904);
    assert_eq!(scratch_formula(64, 16, 4, STEP_BYTES_32), 19_200);
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
}

#[test]
fn workspace_from_buffers_accepts_exactly_the_scratch_size() {
    let need = ScratchSize::for_capacity(64, 16).unwrap();
    let mut f32s = vec![0.0f32; need.f32s];
    let mut f64s = vec![0.0f64; need.f64s];
    let mut idx = vec![0usize; need.indices];
    let mut steps = vec![Step::default(); need.steps];
    let ws = Workspace::from_buffers(64, 16, &mut f32s, &mut f64s, &mut idx, &mut steps).unwrap();
    assert_eq!((ws.max_pool(), ws.max_budget()), (64, 16));
    // One element short in the f32 buffer is an error, not a panic.
    let short = need.f32s - 1;
    let err = Workspace::from_buffers(64, 16, &mut f32s[..short], &mut f64s, &mut idx, &mut steps)
        .unwrap_err();
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
    // f32 count is 6P ≈ 0.6·usize::MAX and its bytes are 4× that. On a 32-bit
    // target the same happens at shapes that merely look large (P = 100,000,
    // K = 20,000: 2.0e9 Gram elements fit in u32, their 8.0e9 bytes do not). Before this was checked,
    // `bytes()` overflowed (a panic in debug builds, a wrong size in
    // release builds).
    let p = usize::MAX / 10;
    assert!(p.checked_mul(6).is_some());
    assert_eq!(ScratchSize::for_capacity(p, 1), None);
    // A hand-made size saturates instead of wrapping.
    let hand = ScratchSize {
        f32s: usize::MAX,
        f64s: 0,
        indices: 0,
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
