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
use mempursuit_core::{pursuit, top_k, FixedWorkspace, Input, InputPolicy, PursuitOptions, Step};

/// Pool capacity, budget and embedding dimension of this firmware.
const P: usize = 64;
const K: usize = 16;
const D: usize = 384;

// The 32-bit column of the size table in docs/PORTABILITY.md, on the real
// target (tests/tests/sizes.rs computes it by formula on the host).
const _: () = assert!(size_of::<usize>() == 4);
const _: () = assert!(size_of::<Step>() == 56);
const _: () = assert!(size_of::<FixedWorkspace<32, 8>>() == 3_808);
const _: () = assert!(size_of::<FixedWorkspace<64, 16>>() == 11_712);
const _: () = assert!(size_of::<FixedWorkspace<128, 16>>() == 17_344);
const _: () = assert!(size_of::<FixedWorkspace<200, 20>>() == 29_680);
const _: () = assert!(size_of::<FixedWorkspace<500, 50>>() == 158_200);
const _: () = assert!(size_of::<FixedWorkspace<1000, 100>>() == 596_400);

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
    // (11.4 KiB) and the pool (96 KiB) live in .bss, not on the stack.
    static mut WORKSPACE: FixedWorkspace<P, K> = FixedWorkspace::new();
    static mut POOL: [f32; P * D] = [0.0; P * D];
    static mut QUERY: [f32; D] = [0.0; D];

    let mut seed = 0x2545_f491;
    fill(&mut seed, QUERY);
    fill(&mut seed, POOL);
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
    report(&picks);
    loop {
        core::hint::spin_loop();
    }
}

/// Prints the picks in the form `wasm/check.mjs --qemu-output` reads, then
/// ends the QEMU session.
#[cfg(feature = "semihosting")]
fn report(picks: &[u32; 2 * K]) {
    use cortex_m_semihosting::{debug, hprint, hprintln};
    for (name, part) in [("pursuit", &picks[..K]), ("topk", &picks[K..])] {
        hprint!("embedded {}:", name);
        for i in part {
            hprint!(" {}", i);
        }
        hprintln!();
    }
    debug::exit(debug::EXIT_SUCCESS);
}

#[panic_handler]
fn panic(_: &PanicInfo) -> ! {
    loop {
        core::hint::spin_loop();
    }
}
