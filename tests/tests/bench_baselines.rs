//! The benchmark baselines (`mempursuit-benches`) compute what they claim:
//! the naive pursuit (full Gram, cold dense QP per step) picks what
//! `pursuit` picks on random unit vectors, with the same weights to 1e-6;
//! its QP solves a known problem; the roofline's last pass is a Gram row;
//! the external passes (features `openblas`, `faer`) agree with ours.
//!
//! They live here, not in benches/, so that `cargo test --workspace` does
//! not build the benches' dev-dependency criterion (24 crates, regex among
//! them) for tests that do not use it.

use mempursuit::{pursuit, Input, PursuitOptions, Selector};
use mempursuit_benches::{full_grid, naive, quick_grid, roofline, unit_vectors, Problem};

#[test]
fn qp_solves_a_known_problem() {
    // H = I: the simplex projection of c. c = (0.9, 0.5, -1): α = (0.7, 0.3, 0).
    let h = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    let a = naive::simplex_qp(&h, &[0.9, 0.5, -1.0], 3);
    assert!(
        (a[0] - 0.7).abs() < 1e-12 && (a[1] - 0.3).abs() < 1e-12 && a[2] == 0.0,
        "{a:?}"
    );
}

/// Every external pass agrees with our kernels to f32 accuracy (none
/// without the features `openblas` or `faer`).
#[test]
fn external_passes_agree_with_ours() {
    let (p, d, k) = (37, 45, 5);
    let m = unit_vectors(p, d, 3);
    let mut ours = vec![0.0f32; p];
    let want = roofline(&m, d, k, &mut ours);
    for (name, passes) in mempursuit_benches::external::available() {
        let mut out = vec![0.0f32; p];
        let got = passes(&m, d, k, &mut out);
        assert!((got - want).abs() < 1e-4, "{name}: {got} vs {want}");
        for (a, b) in out.iter().zip(&ours) {
            assert!((a - b).abs() < 1e-5, "{name}: {a} vs {b}");
        }
    }
}

#[test]
fn naive_pursuit_selects_like_the_streaming_pursuit() {
    for (seed, &(p, d, k)) in [(60, 64, 10), (100, 384, 20), (40, 16, 25), (200, 96, 30)]
        .iter()
        .enumerate()
    {
        let prob = Problem::random(p, d, seed as u64);
        let (picks, weights) = naive::pursuit(&prob.query, &prob.candidates, k, 1e-10);
        let mut s = Selector::new();
        let mut ws = s.workspace(p, k);
        let sel = pursuit(
            &Input::new(&prob.query, &prob.candidates),
            k,
            &PursuitOptions::default(),
            &mut ws,
        )
        .unwrap();
        assert_eq!(picks, sel.picks(), "P={p} d={d} K={k}");
        for (a, b) in weights.iter().zip(sel.weights()) {
            assert!(
                (a - b).abs() < 1e-6,
                "P={p} d={d} K={k}: {weights:?} vs {:?}",
                sel.weights()
            );
        }
    }
}

#[test]
fn unit_vectors_are_unit_and_seeded() {
    let a = unit_vectors(5, 33, 9);
    assert_eq!(a, unit_vectors(5, 33, 9));
    assert_ne!(a, unit_vectors(5, 33, 10));
    for r in a.chunks(33) {
        let n: f32 = r.iter().map(|x| x * x).sum();
        assert!((n - 1.0).abs() < 1e-5);
    }
}

#[test]
fn roofline_runs_k_plus_one_gram_rows() {
    let prob = Problem::random(20, 24, 1);
    let mut out = vec![0.0f32; 20];
    // K = 3: rows 0..=3; the last pass leaves the Gram row of row 3.
    roofline(&prob.candidates, 24, 3, &mut out);
    let r3 = &prob.candidates[3 * 24..4 * 24];
    for (i, &g) in out.iter().enumerate() {
        let want: f32 = prob.candidates[i * 24..(i + 1) * 24]
            .iter()
            .zip(r3)
            .map(|(a, b)| a * b)
            .sum();
        assert!((g - want).abs() < 1e-5);
    }
    assert!((out[3] - 1.0).abs() < 1e-5);
}

#[test]
fn grids_cover_the_paper_table() {
    let full = full_grid();
    assert_eq!(full.len(), 32);
    assert!(quick_grid().iter().all(|c| full.contains(c)));
}
