//! One instruction set per call, chosen by the caller through the call's
//! executor (`Executor::isa`), carried to every pass: `Serial` runs the
//! fastest kernels of the CPU (`Isa::detect`), `StrictOrder` the unfused
//! ones, whose bits are the portable kernels' on every target. No build
//! feature changes this (the `strict-order` feature is gone).

use mempursuit::kernels::row_dots;
use mempursuit::parallel::SplitPool;
use mempursuit::{
    Executor, Input, InputPolicy, Isa, Method, Normalization, PursuitOptions, Selector, Serial,
    StrictOrder,
};

/// A seeded pool of `p` unit rows of dimension `d` and a unit query.
fn pool(p: usize, d: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let mut s = seed;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let mut unit = |n: usize| {
        let v: Vec<f32> = (0..n).map(|_| next()).collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / norm).collect::<Vec<f32>>()
    };
    let rows: Vec<f32> = (0..p).flat_map(|_| unit(d)).collect();
    (rows, unit(d))
}

/// Top-K's step scores (the query cosines of its picks, unit rows) under
/// `exec`, next to the dots of `isa`'s kernel for the same rows.
fn scores_and_kernel(exec: &mut dyn Executor, isa: Isa) -> (Vec<f64>, Vec<f64>) {
    let (p, d) = (64, 67);
    let (rows, q) = pool(p, d, 0x9e37_79b9);
    let policy = InputPolicy {
        normalization: Normalization::RequireUnit,
        ..InputPolicy::default()
    };
    let input = Input::new(&q, &rows);
    let sel = Selector::new()
        .select_with(&input, p, &Method::TopK(policy), exec)
        .unwrap();
    let mut dots = vec![0.0f32; p];
    row_dots(isa, &rows, d, &q, &mut dots);
    let scores = sel.steps.iter().map(|s| s.score).collect();
    let kernel = sel.picks.iter().map(|&i| f64::from(dots[i])).collect();
    (scores, kernel)
}

#[test]
fn strict_order_runs_the_unfused_kernels_and_serial_the_fastest() {
    let (strict, portable) = scores_and_kernel(&mut StrictOrder(Serial), Isa::Portable);
    assert_eq!(strict, portable, "StrictOrder: the portable kernels' bits");
    let (serial, fastest) = scores_and_kernel(&mut Serial, Isa::detect());
    assert_eq!(serial, fastest, "Serial: Isa::detect()'s kernels");
    if Isa::detect().is_fused() {
        // The two orders really differ somewhere on this pool, so the
        // assertions above tell them apart.
        assert_ne!(portable, fastest);
    }
}

#[test]
fn strict_order_is_the_same_bits_whatever_the_split() {
    let (p, d, k) = (300, 96, 12);
    let (rows, q) = pool(p, d, 7);
    let input = Input::new(&q, &rows);
    for method in [
        Method::Pursuit(PursuitOptions::PAPER),
        Method::recommended(),
        Method::Mmr(mempursuit::MmrOptions::PAPER),
    ] {
        let mut selector = Selector::new();
        let serial = selector
            .select_with(&input, k, &method, &mut StrictOrder(Serial))
            .unwrap();
        let mut split = StrictOrder(SplitPool::new(2).unwrap());
        let parallel = selector
            .select_with(&input, k, &method, &mut split)
            .unwrap();
        assert_eq!(serial, parallel, "{method:?}");
        assert_eq!(split.isa(), Isa::detect().unfused());
    }
}

#[test]
fn the_int8_pursuit_verifies_on_the_calls_instruction_set() {
    // The certified int8 pursuit returns the f32 pursuit's selection bit for
    // bit on the same instruction set: with StrictOrder on both, the unfused
    // one (its f32 verification reads the executor's instruction set too).
    let (p, d, k) = (200, 64, 10);
    let (rows, q) = pool(p, d, 11);
    let input = Input::new(&q, &rows);
    let int8 = mempursuit::Int8Candidates::quantize(&rows, d).unwrap();
    let mut selector = Selector::new();
    for options in [PursuitOptions::PAPER, PursuitOptions::centroid(0.5)] {
        let f32_sel = selector
            .select_with(
                &input,
                k,
                &Method::Pursuit(options),
                &mut StrictOrder(Serial),
            )
            .unwrap();
        let passes = mempursuit::Int8Passes::Int8;
        let mut strict = StrictOrder(Serial);
        let int8_sel = selector
            .select_int8_with(&input, &int8, k, &options, passes, &mut strict)
            .unwrap();
        assert_eq!(int8_sel.picks, f32_sel.picks);
        assert_eq!(int8_sel.weights, f32_sel.weights);
    }
}
