//! Splitting one pass over the candidate matrix into contiguous row ranges
//! that an [`Executor`] may run on several threads.
//!
//! The core never spawns threads. Each pass (the query-similarity pass and
//! the Gram row of every pick) is cut into at most [`Executor::parts`]
//! contiguous row ranges, always the same ranges for the same P and part
//! count, so a thread that always takes part `j` keeps rows of part `j` in
//! its core's cache for the whole query. The ranges write disjoint parts of
//! the output and every row is computed in the fixed reduction order, so the
//! result is bit-identical to the serial pass whatever the executor does.
//! The small per-step work (the refit, the O(P·|F|) score refresh and the
//! argmax) stays on the calling thread: it is a few hundred nanoseconds, less
//! than one more synchronisation would cost.

use super::sealed::Rows;
use super::{portable, Isa};

/// Most parts a pass is split into.
pub const MAX_PARTS: usize = 16;

/// Rows of a part are a multiple of this (except the last part), so parts
/// start on the same 8-row blocks as the serial pass.
const ROW_ALIGN: usize = 8;

/// One part of one pass: a contiguous range of candidate rows and the
/// disjoint slice of the output it writes. Made by the core, run by an
/// [`Executor`] (on any thread: it is `Send`).
#[derive(Debug)]
pub struct PassJob<'a> {
    kind: Kind<'a>,
    isa: Isa,
    start: usize,
    end: usize,
    done: bool,
}

#[derive(Debug)]
enum Kind<'a> {
    Empty,
    /// dots = rows · q, sumsq = ‖rows‖² over the part.
    Query {
        rows: Rows<'a>,
        d: usize,
        q: &'a [f32],
        dots: &'a mut [f32],
        sumsq: &'a mut [f32],
    },
    /// out = (rows · row_i) ⊙ scale · scale_i over the part.
    Gram {
        all: Rows<'a>,
        d: usize,
        pick: usize,
        scale: &'a [f32],
        pick_scale: f32,
        out: &'a mut [f32],
    },
}

impl<'a> PassJob<'a> {
    const EMPTY: PassJob<'static> = PassJob {
        kind: Kind::Empty,
        isa: Isa::Portable,
        start: 0,
        end: 0,
        done: true,
    };

    /// Computes this part. Running a job twice recomputes the same values.
    pub fn run(&mut self) {
        let (start, end, isa) = (self.start, self.end, self.isa);
        match &mut self.kind {
            Kind::Empty => {}
            Kind::Query {
                rows,
                d,
                q,
                dots,
                sumsq,
            } => rows.dots_and_sumsq(isa, *d, q, dots, sumsq),
            Kind::Gram {
                all,
                d,
                pick,
                scale,
                pick_scale,
                out,
            } => {
                all.rows(start, end, *d)
                    .dots_with_row(isa, *all, *pick, *d, out);
                portable::scale_by(out, scale, *pick_scale);
            }
        }
        self.done = true;
    }

    /// The candidate rows this part covers.
    pub fn rows(&self) -> core::ops::Range<usize> {
        self.start..self.end
    }
}

/// Runs the parts of one pass, possibly on several threads.
///
/// # Contract
/// [`execute`](Executor::execute) must call [`PassJob::run`] on every job
/// and return only after all have finished (the core re-runs, on the
/// calling thread, any job that was not run, so a lazy executor is slow but
/// never wrong). Which thread runs which job is up to the executor; the
/// result does not depend on it. For cache locality, run job `j` on the
/// same thread in every pass: the core always gives part `j` the same rows
/// within one call.
pub trait Executor {
    /// How many parts to cut a pass into (1 = serial; at most
    /// [`MAX_PARTS`] are used, and fewer when P is small: parts have at
    /// least 8 rows).
    fn parts(&self) -> usize;

    /// Runs every job in `jobs` (see the trait docs).
    fn execute(&mut self, jobs: &mut [PassJob<'_>]);

    /// The instruction set of every dot product of a call (the
    /// [`kernels`](super) module docs: fused and unfused orders), asked when
    /// the call starts and carried to its passes and single entries; it
    /// must not change during a call. Default [`Isa::detect`], the fastest;
    /// [`StrictOrder`] gives the unfused one. An instruction set this CPU
    /// lacks runs as [`Isa::Portable`] ([`Isa::is_available`]).
    fn isa(&self) -> Isa {
        Isa::detect()
    }
}

/// An executor whose calls use the unfused kernels ([`Isa::unfused`]): the
/// same bits on every target (x86-64 with or without AVX2, Arm, WASM,
/// microcontrollers), a few percent slower passes on x86-64 with FMA. The
/// passes are cut and run as `E` cuts and runs them.
///
/// ```
/// use mempursuit_core::{Isa, Executor, Serial, StrictOrder};
/// assert!(!StrictOrder(Serial).isa().is_fused());
/// assert_eq!(StrictOrder(Serial).isa(), Isa::detect().unfused());
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct StrictOrder<E = Serial>(pub E);

impl<E: Executor> Executor for StrictOrder<E> {
    fn parts(&self) -> usize {
        self.0.parts()
    }

    fn execute(&mut self, jobs: &mut [PassJob<'_>]) {
        self.0.execute(jobs);
    }

    fn isa(&self) -> Isa {
        self.0.isa().unfused()
    }
}

/// The executor of the plain functions: one part, run on the calling thread.
#[derive(Debug, Clone, Copy, Default)]
pub struct Serial;

impl Executor for Serial {
    fn parts(&self) -> usize {
        1
    }

    fn execute(&mut self, jobs: &mut [PassJob<'_>]) {
        for job in jobs {
            job.run();
        }
    }
}

/// Row ranges of the parts: `parts` ranges of `chunk` rows (the last one
/// shorter), `chunk` a multiple of `ROW_ALIGN`.
fn plan(p: usize, wanted: usize) -> (usize, usize) {
    let by_rows = p.div_ceil(ROW_ALIGN).max(1);
    let parts = wanted.clamp(1, MAX_PARTS).min(by_rows);
    let chunk = p.div_ceil(parts).div_ceil(ROW_ALIGN) * ROW_ALIGN;
    let parts = if chunk == 0 {
        1
    } else {
        p.div_ceil(chunk).max(1)
    };
    (parts, chunk.max(1))
}

/// Runs the jobs of a pass split in two or more parts (a one-part pass
/// calls its kernel directly).
fn finish(exec: &mut dyn Executor, jobs: &mut [PassJob<'_>]) {
    exec.execute(jobs);
    for job in jobs.iter_mut().filter(|j| !j.done) {
        job.run();
    }
}

/// The query pass: dots[i] = row_i · q, sumsq[i] = ‖row_i‖², split over the
/// executor's parts. `rows` is P × d with P = `dots.len()`.
pub(crate) fn query_pass(
    exec: &mut dyn Executor,
    isa: Isa,
    rows: Rows<'_>,
    d: usize,
    q: &[f32],
    dots: &mut [f32],
    sumsq: &mut [f32],
) {
    let p = dots.len();
    let (parts, chunk) = plan(p, exec.parts());
    if parts == 1 {
        return rows.dots_and_sumsq(isa, d, q, dots, sumsq);
    }
    let mut jobs: [PassJob<'_>; MAX_PARTS] = core::array::from_fn(|_| PassJob::EMPTY);
    let (mut dots, mut sumsq) = (dots, sumsq);
    for (j, job) in jobs.iter_mut().enumerate().take(parts) {
        let start = j * chunk;
        let end = (start + chunk).min(p);
        let (dh, dt) = core::mem::take(&mut dots).split_at_mut(end - start);
        let (sh, st) = core::mem::take(&mut sumsq).split_at_mut(end - start);
        dots = dt;
        sumsq = st;
        *job = PassJob {
            kind: Kind::Query {
                rows: rows.rows(start, end, d),
                d,
                q,
                dots: dh,
                sumsq: sh,
            },
            isa,
            start,
            end,
            done: false,
        };
    }
    finish(exec, &mut jobs[..parts]);
}

/// The Gram row of candidate `pick`: out[j] = (row_j · row_pick) ·
/// (scale[j] · scale[pick]), split over the executor's parts. `all` is
/// P × d with P = `out.len()` = `scale.len()`.
pub(crate) fn gram_row(
    exec: &mut dyn Executor,
    isa: Isa,
    all: Rows<'_>,
    d: usize,
    pick: usize,
    scale: &[f32],
    out: &mut [f32],
) {
    let p = out.len();
    let (parts, chunk) = plan(p, exec.parts());
    let pick_scale = scale[pick];
    if parts == 1 {
        // One part: no job array to build (it is 16 jobs wide).
        all.dots_with_row(isa, all, pick, d, out);
        return portable::scale_by(out, scale, pick_scale);
    }
    let mut jobs: [PassJob<'_>; MAX_PARTS] = core::array::from_fn(|_| PassJob::EMPTY);
    let mut out = out;
    for (j, job) in jobs.iter_mut().enumerate().take(parts) {
        let start = j * chunk;
        let end = (start + chunk).min(p);
        let (oh, ot) = core::mem::take(&mut out).split_at_mut(end - start);
        out = ot;
        *job = PassJob {
            kind: Kind::Gram {
                all,
                d,
                pick,
                scale: &scale[start..end],
                pick_scale,
                out: oh,
            },
            isa,
            start,
            end,
            done: false,
        };
    }
    finish(exec, &mut jobs[..parts]);
}

#[cfg(test)]
mod tests {
    use super::plan;

    #[test]
    fn plans_cover_the_pool_with_aligned_parts() {
        // Under Miri (interpreted), every 7th pool size only.
        let step = if cfg!(miri) { 7 } else { 1 };
        for p in (0..300).step_by(step) {
            for wanted in 1..20 {
                let (parts, chunk) = plan(p, wanted);
                assert!(parts >= 1 && parts <= wanted.clamp(1, super::MAX_PARTS));
                assert!(chunk % super::ROW_ALIGN == 0 || chunk == 1);
                assert!(parts * chunk >= p, "p={p} wanted={wanted}");
                assert!((parts - 1) * chunk < p.max(1), "p={p} wanted={wanted}");
            }
        }
    }
}
