//! A minimal Cortex-M4F firmware (thumbv7em-none-eabihf: no std, no alloc)
//! that runs MemPursuit with its workspace and candidate pool in `static`s.
//!
//! Its purpose is to prove, in CI, that `mempursuit-core` compiles and
//! *links* for a microcontroller: every symbol resolves (f64 soft-float
//! helpers, `libm`), the reset handler and vector table come from
//! `cortex-m-rt`, and the statics fit the 128 KiB of RAM declared in
//! `memory.x` (the linker fails otherwise). The `const` assertions pin the
//! 32-bit sizes that `docs/PORTABILITY.md` documents.
//!
//! ```text
//! cargo build --release --target thumbv7em-none-eabihf --manifest-path embedded-check/Cargo.toml
//! ```
//!
//! With the `semihosting` feature it prints its picks and exits, so it can
//! run on an emulated Cortex-M4F (STM32F405) and be compared with the native
//! picks for the same data (`wasm/examples/native_orders.rs` computes them):
//!
//! ```text
//! cargo build --release --target thumbv7em-none-eabihf --manifest-path embedded-check/Cargo.toml --features semihosting
//! qemu-system-arm -M netduinoplus2 -nographic -semihosting-config enable=on,target=native \
//!   -kernel embedded-check/target/thumbv7em-none-eabihf/release/mempursuit-embedded-check
//! ```

#![no_std]
#![no_main]

use core::mem::size_of;
use core::panic::PanicInfo;
use cortex_m_rt::entry;
use mempursuit_core::{
    pursuit, top_k, CentroidWorkspace, FixedWorkspace, Input, InputPolicy, PursuitOptions,
    PursuitWorkspace, Step, TopKWorkspace,
};

/// Pool capacity, budget and embedding dimension of this firmware.
const P: usize = 64;
const K: usize = 16;
const D: usize = 384;

// The 32-bit column of the size table in docs/PORTABILITY.md, on the real
// target (tests/tests/sizes.rs computes it by formula on the host).
const _: () = assert!(size_of::<usize>() == 4);
const _: () = assert!(size_of::<Step>() == 80);
const _: () = assert!(size_of::<FixedWorkspace<32, 8>>() == 8_200);
const _: () = assert!(size_of::<FixedWorkspace<64, 16>>() == 23_568);
const _: () = assert!(size_of::<FixedWorkspace<128, 16>>() == 36_944);
const _: () = assert!(size_of::<FixedWorkspace<200, 20>>() == 62_864);
const _: () = assert!(size_of::<FixedWorkspace<500, 50>>() == 313_152);
const _: () = assert!(size_of::<FixedWorkspace<1000, 100>>() == 1_146_304);
// The per-kind table (64-bit / 32-bit columns; here the 32-bit ones).
const _: () = assert!(size_of::<TopKWorkspace<64, 16>>() == 2_944);
const _: () = assert!(size_of::<CentroidWorkspace<64, 16>>() == 5_376);
const _: () = assert!(size_of::<PursuitWorkspace<64, 16>>() == 17_936);
const _: () = assert!(size_of::<TopKWorkspace<200, 20>>() == 6_680);
const _: () = assert!(size_of::<CentroidWorkspace<200, 20>>() == 14_040);
const _: () = assert!(size_of::<PursuitWorkspace<200, 20>>() == 42_064);

/// xorshift32: deterministic stand-in embeddings in [-1, 1) (not unit norm;
/// the default cosine policy normalizes on the fly).
fn fill(state: &mut u32, out: &mut [f32]) {
    for x in out {
        *state ^= *state << 13;
        *state ^= *state >> 17;
        *state ^= *state << 5;
        *x = (*state >> 8) as f32 / 8_388_608.0 - 1.0;
    }
}

/// Where the firmware leaves its result (a debugger can read it).
#[no_mangle]
static mut PICKS: [u32; 2 * K] = [u32::MAX; 2 * K];

#[entry]
fn main() -> ! {
    // `#[entry]` turns these into `&'static mut` references: the workspace
    // (14.0 KiB: the pursuit's scratch, none of the int8 pursuit's) and the
    // pool (96 KiB) live in .bss, not on the stack.
    static mut WORKSPACE: PursuitWorkspace<P, K> = PursuitWorkspace::new();
    static mut POOL: [f32; P * D] = [0.0; P * D];
    static mut QUERY: [f32; D] = [0.0; D];

    let mut seed = 0x2545_f491;
    fill(&mut seed, QUERY);
    fill(&mut seed, POOL);
    #[cfg(feature = "semihosting")]
    let sp = stack::paint();
    let input = Input::new(&QUERY[..], &POOL[..]);
    let mut ws = WORKSPACE.view();
    let mut picks = [u32::MAX; 2 * K];
    if let Ok(sel) = pursuit(&input, K, &PursuitOptions::default(), &mut ws) {
        for (out, &i) in picks.iter_mut().zip(sel.picks()) {
            *out = i as u32;
        }
    }
    if let Ok(sel) = top_k(&input, K, &InputPolicy::default(), &mut ws) {
        for (out, &i) in picks[K..].iter_mut().zip(sel.picks()) {
            *out = i as u32;
        }
    }
    // SAFETY: single-threaded firmware, no interrupt handler touches PICKS.
    unsafe { core::ptr::addr_of_mut!(PICKS).write_volatile(picks) };
    #[cfg(feature = "semihosting")]
    report(&picks, stack::used(sp));
    loop {
        core::hint::spin_loop();
    }
}

/// Prints the picks in the form `wasm/test/native.test.mjs` reads (through
/// `MEMPURSUIT_QEMU_OUTPUT`), then ends the QEMU session.
#[cfg(feature = "semihosting")]
fn report(picks: &[u32; 2 * K], stack_bytes: usize) {
    use cortex_m_semihosting::{debug, hprint, hprintln};
    for (name, part) in [("pursuit", &picks[..K]), ("topk", &picks[K..])] {
        hprint!("embedded {}:", name);
        for i in part {
            hprint!(" {}", i);
        }
        hprintln!();
    }
    hprintln!(
        "embedded stack high-water mark of the selections: {} bytes",
        stack_bytes
    );
    debug::exit(debug::EXIT_SUCCESS);
}

/// Stack high-water mark by painting (QEMU runs only): fill the free RAM
/// between the end of .bss and the stack pointer with a pattern, run the
/// selections, and find the lowest word that changed.
#[cfg(feature = "semihosting")]
mod stack {
    const PATTERN: u32 = 0xA5A5_5A5A;

    extern "C" {
        /// End of .bss, from cortex-m-rt's `link.x`; the stack grows down
        /// toward it.
        static __ebss: u32;
    }

    fn ebss() -> usize {
        // Taking the address of the linker symbol reads nothing.
        core::ptr::addr_of!(__ebss) as usize
    }

    /// Paints the free stack and returns the caller's stack pointer.
    #[inline(always)]
    pub fn paint() -> usize {
        let sp: usize;
        // SAFETY: reads the stack pointer only.
        unsafe { core::arch::asm!("mov {}, sp", out(reg) sp) };
        // Leave 256 bytes below the current frame alone.
        let mut a = ebss();
        while a + 256 < sp {
            // SAFETY: RAM between .bss and the live stack is unused.
            unsafe { (a as *mut u32).write_volatile(PATTERN) };
            a += 4;
        }
        sp
    }

    /// Bytes of stack used below `sp` since [`paint`].
    pub fn used(sp: usize) -> usize {
        let mut a = ebss();
        // SAFETY: reads RAM between .bss and the stack pointer.
        while a < sp && unsafe { (a as *const u32).read_volatile() } == PATTERN {
            a += 4;
        }
        sp - a
    }
}

#[panic_handler]
fn panic(_: &PanicInfo) -> ! {
    loop {
        core::hint::spin_loop();
    }
}
