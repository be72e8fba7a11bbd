//! Owned buffers for [`Workspace::from_buffers`] (the tests' stand-in for
//! the heap buffers a caller keeps).

use mempursuit::{ScratchBuffers, ScratchKind, ScratchSize, Step, Workspace};

/// The five buffers of one [`ScratchSize`], owned.
#[derive(Debug, Clone)]
pub struct ScratchVecs {
    /// f32 elements.
    pub f32s: Vec<f32>,
    /// f64 elements.
    pub f64s: Vec<f64>,
    /// usize elements.
    pub indices: Vec<usize>,
    /// One-byte flags.
    pub flags: Vec<u8>,
    /// Step records.
    pub steps: Vec<Step>,
}

impl ScratchVecs {
    /// Zeroed buffers of exactly `size`'s counts.
    pub fn new(size: ScratchSize) -> Self {
        ScratchVecs {
            f32s: vec![0.0; size.f32s],
            f64s: vec![0.0; size.f64s],
            indices: vec![0; size.indices],
            flags: vec![0; size.flags],
            steps: vec![Step::default(); size.steps],
        }
    }

    /// Zeroed buffers for `kind` at capacity (`p`, `k`).
    ///
    /// # Panics
    /// If the size overflows.
    pub fn for_kind(kind: ScratchKind, p: usize, k: usize) -> Self {
        Self::new(ScratchSize::for_kind(kind, p, k).expect("a small capacity"))
    }

    /// The buffers as [`ScratchBuffers`].
    pub fn buffers(&mut self) -> ScratchBuffers<'_> {
        ScratchBuffers {
            f32s: &mut self.f32s,
            f64s: &mut self.f64s,
            indices: &mut self.indices,
            flags: &mut self.flags,
            steps: &mut self.steps,
        }
    }

    /// A workspace of `kind` and capacity (`p`, `k`) over these buffers.
    ///
    /// # Errors
    /// As [`Workspace::from_buffers`].
    pub fn workspace(
        &mut self,
        kind: ScratchKind,
        p: usize,
        k: usize,
    ) -> Result<Workspace<'_>, mempursuit::Error> {
        Workspace::from_buffers(kind, p, k, self.buffers())
    }
}
