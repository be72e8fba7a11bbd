//! How much scratch memory each selector needs ([`ScratchKind`],
//! [`ScratchSize`]): the sizes of a [`Workspace`](crate::Workspace) and of
//! the fixed workspaces, in the spirit of faer's `StackReq` (a selector's
//! requirement, not the union of all).

use crate::selection::Step;

/// Which selectors a workspace has the scratch for. Each kind holds
/// everything the previous one does (`TopK < Centroid < Pursuit < Int8`),
/// so a workspace runs every selector of its kind and the kinds below.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ScratchKind {
    /// [`top_k`](crate::top_k): the query pass and the relevance (O(P)).
    TopK,
    /// Also centroid pursuit (a [`pursuit`](crate::pursuit) with
    /// `ridge = ∞`), the [`recommended`](crate::recommended) setting and
    /// [`mmr`](crate::mmr): one Gram row, the scores and the screening's
    /// per-candidate state (O(P + K)).
    Centroid,
    /// Also the paper's pursuit and its family (κ < ∞) on every
    /// [`Element`](crate::Element) storage: the picks' Gram rows and the
    /// refit's state (O(K·P + K²)).
    Pursuit,
    /// Every selector, also [`pursuit_int8`](crate::pursuit_int8): a cache
    /// of f32 Gram entries of the verified candidates and the per-row radii
    /// (O(2·K·P + K²)).
    Int8,
}

impl ScratchKind {
    /// A short name: `"top-K"`, `"centroid"`, `"pursuit"` or `"int8"`.
    pub const fn name(self) -> &'static str {
        match self {
            ScratchKind::TopK => "top-K",
            ScratchKind::Centroid => "centroid",
            ScratchKind::Pursuit => "pursuit",
            ScratchKind::Int8 => "int8",
        }
    }
}

/// How many elements of each type a workspace of a given capacity and
/// [`ScratchKind`] needs (in the spirit of faer's `*_scratch` functions).
/// Every count is a sum of the parts below that the kind holds.
///
/// | part | kinds | f32 | f64 | usize | flags (u8) | [`Step`] |
/// |---|---|---|---|---|---|---|
/// | the query pass and relevance: b, ρ, scales, squared norms, the sorted cosines; the ranking order of caller scores; candidate states; picks; step records | all | 5P | | P + K | P | K |
/// | scores, the centroid's running sum of Gram rows and MMR's running maximum; the weights; the per-scorer scratch, lent to one scorer per call (the screened pursuit's anchors, their steps and orthogonal norm bounds; the screened centroid pursuit's bounds and summed prefixes; the int8 argmax's bounds; the recommended setting's pivot marks) | ≥ `Centroid` | 3P | K + 2P | P | | |
/// | Gram rows: one (the newest pick's) for `Centroid`, K for `Pursuit` and `Int8` | ≥ `Centroid` | P or K·P | | | | |
/// | the refresh coefficients; G_SS, its Cholesky factor, nine K-vectors of the refit; the screened pursuit's anchor coefficients (K × K) and ten K-vectors; the free set and its memberships | ≥ `Pursuit` | K | 3K² + 19K | K | K | |
/// | the int8 pursuit's cache of f32 Gram entries; its per-row radii, norm bounds and scales | `Int8` | K·P | 3P | | | |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScratchSize {
    /// f32 elements.
    pub f32s: usize,
    /// f64 elements.
    pub f64s: usize,
    /// usize elements.
    pub indices: usize,
    /// One-byte flags: the candidates' states (P) and, for the pursuit, the
    /// selected positions' memberships in the refit's free set (K).
    pub flags: usize,
    /// [`Step`] records: K_max.
    pub steps: usize,
}

/// Gram rows of stride P a workspace of `kind` holds: one per pick for the
/// paper's pursuit, one (the newest pick's) for centroid pursuit and MMR.
pub(crate) const fn gram_rows(kind: ScratchKind, k: usize) -> usize {
    match kind {
        ScratchKind::TopK => 0,
        ScratchKind::Centroid => 1,
        ScratchKind::Pursuit | ScratchKind::Int8 => k,
    }
}

/// `a · b`, `None` on overflow (const).
const fn mul(a: usize, b: usize) -> Option<usize> {
    a.checked_mul(b)
}

/// Σ of the terms, `None` if a term is `None` or the sum overflows (const).
const fn sum<const N: usize>(terms: [Option<usize>; N]) -> Option<usize> {
    let mut total = 0usize;
    let mut i = 0;
    while i < N {
        let Some(t) = terms[i] else {
            return None;
        };
        let Some(s) = total.checked_add(t) else {
            return None;
        };
        total = s;
        i += 1;
    }
    Some(total)
}

impl ScratchSize {
    /// Scratch for pools of up to `max_pool` candidates and budgets of up
    /// to `max_budget` picks, for the selectors of `kind` (type docs).
    /// Returns `None` if a count or the total byte size
    /// ([`ScratchSize::checked_bytes`]) overflows `usize`.
    #[must_use]
    pub const fn for_kind(kind: ScratchKind, max_pool: usize, max_budget: usize) -> Option<Self> {
        let (p, k) = (max_pool, max_budget);
        let centroid = kind as u8 >= ScratchKind::Centroid as u8;
        let qp = kind as u8 >= ScratchKind::Pursuit as u8;
        let int8 = kind as u8 >= ScratchKind::Int8 as u8;
        let gram_rows = gram_rows(kind, k);
        let kk = mul(k, k);
        let f32s = sum([
            mul(5, p),
            if centroid { mul(3, p) } else { Some(0) },
            mul(gram_rows, p),
            if qp { Some(k) } else { Some(0) },
            if int8 { mul(k, p) } else { Some(0) },
        ]);
        let f64s = sum([
            if centroid {
                sum([Some(k), mul(2, p)])
            } else {
                Some(0)
            },
            if qp {
                match kk {
                    Some(kk) => sum([mul(3, kk), mul(19, k)]),
                    None => None,
                }
            } else {
                Some(0)
            },
            if int8 { mul(3, p) } else { Some(0) },
        ]);
        let indices = sum([
            Some(k),
            Some(p),
            if centroid { Some(p) } else { Some(0) },
            if qp { Some(k) } else { Some(0) },
        ]);
        let flags = sum([Some(p), if qp { Some(k) } else { Some(0) }]);
        let (Some(f32s), Some(f64s), Some(indices), Some(flags)) = (f32s, f64s, indices, flags)
        else {
            return None;
        };
        let size = ScratchSize {
            f32s,
            f64s,
            indices,
            flags,
            steps: k,
        };
        // The counts can fit while the byte total does not (on 32-bit
        // targets already at P·K ≈ 2^30): reject that too, so `bytes` of a
        // size from here is always exact.
        match size.checked_bytes() {
            Some(_) => Some(size),
            None => None,
        }
    }

    /// Scratch for every selector ([`ScratchKind::Int8`]) on pools of up to
    /// `max_pool` candidates and budgets of up to `max_budget` picks.
    #[must_use]
    pub const fn for_capacity(max_pool: usize, max_budget: usize) -> Option<ScratchSize> {
        Self::for_kind(ScratchKind::Int8, max_pool, max_budget)
    }

    /// Total bytes of the five buffers, or `None` if it overflows `usize`.
    /// Depends on the target: `usize` is 4 or 8 bytes and so is the `usize`
    /// part of a [`Step`].
    pub const fn checked_bytes(&self) -> Option<usize> {
        sum([
            mul(self.f32s, 4),
            mul(self.f64s, 8),
            mul(self.indices, core::mem::size_of::<usize>()),
            Some(self.flags),
            mul(self.steps, core::mem::size_of::<Step>()),
        ])
    }

    /// Total bytes of the five buffers (exact for every size returned by
    /// [`ScratchSize::for_kind`]; saturates at `usize::MAX` for a
    /// hand-made size whose total overflows, see
    /// [`checked_bytes`](Self::checked_bytes)).
    pub const fn bytes(&self) -> usize {
        match self.checked_bytes() {
            Some(b) => b,
            None => usize::MAX,
        }
    }
}
