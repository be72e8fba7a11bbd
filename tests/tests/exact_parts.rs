//! The exact small parts and the certified int8 pursuit: L_t stays accurate
//! at tiny residuals, the int8 picks equal the f32 ones on non-unit and
//! excluded rows and on exact ties, and the int8 constructors reject bad
//! codes with typed errors.

use mempursuit::{
    Error, Input, InputPolicy, Int8Candidates, Int8Fault, Int8Pool, InvalidCandidates, Method,
    PursuitOptions, RefitStatus, Selector,
};
use mempursuit_tests::random;

/// ‖σ_q q − Σ_j α_j σ_j m_j‖² in f64 from the f32 inputs (every vector
/// normalized in f64), for the picks and weights of a selection.
fn explicit_residual(q: &[f32], pool: &[f32], d: usize, picks: &[usize], w: &[f64]) -> f64 {
    let unit = |v: &[f32]| -> Vec<f64> {
        let n = v.iter().map(|&x| x as f64 * x as f64).sum::<f64>().sqrt();
        let s = if (n - 1.0).abs() <= 1e-3 {
            1.0
        } else {
            1.0 / n
        };
        v.iter().map(|&x| x as f64 * s).collect()
    };
    let mut r = unit(q);
    for (&j, &a) in picks.iter().zip(w) {
        let m = unit(&pool[j * d..(j + 1) * d]);
        for (rk, mk) in r.iter_mut().zip(&m) {
            *rk -= a * mk;
        }
    }
    r.iter().map(|x| x * x).sum()
}

/// Three unit rows m_j = unit(q + ε v_j) around the query with
/// v_j = cos(2πj/3) a + sin(2πj/3) b (a, b ⟂ q orthonormal), ε² = 2e-4: the
/// best convex reconstruction is the centroid, q(1 − ε²/2 + …), so the
/// residual norm is ≈ ε²/2 = 1e-4 and L_t ≈ 1e-8 after three picks. The
/// formula 1 − 2αᵀb + αᵀGα from f32 entries (errors ~1e-7) reported 0 here;
/// L_t must match the explicit f64 residual of the returned weights to 1e-6
/// relative, on both storages.
#[test]
fn residual_is_accurate_at_a_residual_norm_of_1e_4() {
    let d = 32;
    let mut rng = random::rng(41);
    let dotf = |x: &[f64], y: &[f64]| x.iter().zip(y).map(|(a, b)| a * b).sum::<f64>();
    let unitf = |x: Vec<f64>| {
        let n = dotf(&x, &x).sqrt();
        x.into_iter().map(|v| v / n).collect::<Vec<f64>>()
    };
    let q64 = unitf(random::gaussian(&mut rng, d));
    let mut ortho: Vec<Vec<f64>> = Vec::new();
    for _ in 0..2 {
        let mut v = random::gaussian(&mut rng, d);
        for _ in 0..2 {
            for b in std::iter::once(&q64).chain(&ortho) {
                let c = dotf(&v, b);
                v.iter_mut().zip(b).for_each(|(x, y)| *x -= c * y);
            }
        }
        ortho.push(unitf(v));
    }
    let eps = 2e-4f64.sqrt();
    let q = random::normalized(&q64);
    let mut pool: Vec<f32> = Vec::new();
    for j in 0..3 {
        let t = 2.0 * std::f64::consts::PI * j as f64 / 3.0;
        let m: Vec<f64> = (0..d)
            .map(|k| q64[k] + eps * (t.cos() * ortho[0][k] + t.sin() * ortho[1][k]))
            .collect();
        pool.extend(random::normalized(&m));
    }
    let i8pool = Int8Candidates::quantize(&pool, d).unwrap();
    let mut sel = Selector::new();
    let o = PursuitOptions::default();
    let f32sel = sel
        .select(&Input::new(&q, &pool), 3, &Method::Pursuit(o))
        .unwrap();
    let i8sel = sel
        .select_int8_using(
            &Input::new(&q, &pool),
            &i8pool,
            3,
            &o,
            mempursuit::Int8Passes::Int8,
        )
        .unwrap();
    for s in [&f32sel, &i8sel] {
        let mut picks = s.picks.clone();
        picks.sort_unstable();
        assert_eq!(picks, vec![0, 1, 2]);
        let got = s.steps[2].residual_sq;
        let want = explicit_residual(&q, &pool, d, &s.picks, &s.weights);
        assert!(
            want > 5e-9 && want < 2e-8,
            "the construction gives L ≈ 1e-8, not {want:e}"
        );
        let rel = (got - want).abs() / want;
        assert!(
            rel <= 1e-6,
            "L_t {got:e} vs explicit {want:e} (rel {rel:e})"
        );
        assert_eq!(s.steps[2].refit, RefitStatus::Optimal);
    }
}

/// The option sets the int8 tests compare on, all with
/// `InvalidCandidates::Exclude`: paper mode, the family (γ, κ), centroid
/// pursuit, adaptive stopping, relevance fill after the pool optimum and
/// skipped dependent picks.
fn option_sets() -> [PursuitOptions; 6] {
    use mempursuit::{AtPoolOptimum, DependentPicks, Stopping};
    let bases = [
        PursuitOptions::default(),
        PursuitOptions {
            ridge: 0.05,
            gamma: 0.5,
            ..PursuitOptions::default()
        },
        PursuitOptions::centroid(0.5),
        PursuitOptions {
            stopping: Stopping::PAPER_ADAPTIVE,
            ..PursuitOptions::default()
        },
        PursuitOptions {
            ridge: 0.3,
            at_pool_optimum: AtPoolOptimum::FillByRelevance,
            optimum_tolerance: 1e-3,
            ..PursuitOptions::default()
        },
        PursuitOptions {
            dependent_picks: DependentPicks::Skip,
            ..PursuitOptions::default()
        },
    ];
    bases.map(|base| PursuitOptions {
        input: InputPolicy {
            invalid_candidates: InvalidCandidates::Exclude,
            ..InputPolicy::default()
        },
        ..base
    })
}

/// Non-unit rows (scaled by 0.5, 2, 3: the cosine normalization), a zero row
/// excluded under `InvalidCandidates::Exclude`, and exact duplicates (ties to
/// the lowest index): the int8 pursuit picks what the f32 pursuit picks, with
/// the same weights, under every option set of [`option_sets`].
#[test]
fn int8_equals_f32_on_scaled_excluded_and_duplicate_rows() {
    for seed in 0..12u64 {
        let (p, d) = (24, 20);
        let (q, mut pool) = random::clustered_pool(300 + seed, p, d, 4, 0.3);
        for (i, row) in pool.chunks_exact_mut(d).enumerate() {
            let s = [1.0f32, 0.5, 2.0, 3.0][i % 4];
            row.iter_mut().for_each(|x| *x *= s);
        }
        // Row 5 duplicates row 2 exactly, row 7 is zero.
        let dup: Vec<f32> = pool[2 * d..3 * d].to_vec();
        pool[5 * d..6 * d].copy_from_slice(&dup);
        pool[7 * d..8 * d].fill(0.0);
        let input = Input::new(&q, &pool);
        let i8pool = Int8Candidates::quantize(&pool, d).unwrap();
        for o in option_sets() {
            let mut sel = Selector::new();
            let a = sel.select(&input, 15, &Method::Pursuit(o)).unwrap();
            let b = sel
                .select_int8_using(&input, &i8pool, 15, &o, mempursuit::Int8Passes::Int8)
                .unwrap();
            assert_eq!(a.picks, b.picks, "seed {seed} {o:?}");
            assert_eq!(b.excluded, vec![7]);
            assert!(!b.picks.contains(&7));
            assert_eq!(a.weights, b.weights, "seed {seed} {o:?}");
            if b.picks.contains(&5) {
                // The duplicate comes after the row it duplicates.
                let pos = |i| b.picks.iter().position(|&x| x == i);
                assert!(pos(2) < pos(5), "seed {seed}: tie to the lowest index");
            }
        }
    }
}

#[test]
fn int8_constructors_reject_bad_codes_scales_and_shapes() {
    let d = 3;
    let rows = [0.6f32, 0.8, 0.0, 0.0, 0.6, 0.8];
    let (mut e, mut n) = ([0.0f64; 2], [0.0f64; 2]);
    let codes = [95i8, 127, 0, 0, 95, -128];
    assert_eq!(
        Int8Pool::from_codes(&rows, d, &codes, &[0.0063, 0.0063], &mut e, &mut n).unwrap_err(),
        Error::Int8Row {
            row: 1,
            fault: Int8Fault::CodeOutOfRange { index: 2 }
        }
    );
    let codes = [95i8, 127, 0, 0, 95, 127];
    let err =
        Int8Pool::from_codes(&rows, d, &codes, &[0.0063, f32::NAN], &mut e, &mut n).unwrap_err();
    assert!(
        matches!(err, Error::Int8Row { row: 1, fault: Int8Fault::InvalidScale { value } } if value.is_nan()),
        "{err:?}"
    );
    assert_eq!(
        Int8Pool::from_codes(&rows, d, &codes[..5], &[0.0063, 0.0063], &mut e, &mut n).unwrap_err(),
        Error::Int8Length {
            expected: 6,
            found: 5
        }
    );
    let bad = [0.6f32, f32::INFINITY, 0.0];
    let (mut c, mut s) = ([0i8; 3], [0.0f32; 1]);
    assert_eq!(
        Int8Pool::quantize(&bad, d, &mut c, &mut s, &mut e[..1], &mut n[..1]).unwrap_err(),
        Error::Int8Row {
            row: 0,
            fault: Int8Fault::NonFinite {
                index: 1,
                value: f32::INFINITY
            }
        }
    );
    // A pool of another shape than the input is an error, not a panic.
    let q = [1.0f32, 0.0, 0.0];
    let other = Int8Candidates::quantize(&rows[..3], d).unwrap();
    let mut sel = Selector::new();
    let err = sel
        .select_int8(
            &Input::new(&q, &rows),
            &other,
            2,
            &PursuitOptions::default(),
        )
        .unwrap_err();
    assert_eq!(
        err,
        Error::Int8Length {
            expected: 2,
            found: 1
        }
    );
    // The quantizer's codes: s = max|m|/127, round to nearest, E exact.
    let ok = Int8Candidates::quantize(&rows, d).unwrap();
    let v = ok.view();
    assert_eq!(v.codes(), &[95, 127, 0, 0, 95, 127]);
    let s0 = 0.8f32 / 127.0;
    assert_eq!(v.scales()[0], s0);
    let e0 = ((0.6f32 as f64 - 95.0 * s0 as f64).powi(2)
        + (0.8f32 as f64 - 127.0 * s0 as f64).powi(2))
    .sqrt();
    assert!(v.errors()[0] >= e0 && v.errors()[0] <= e0 * (1.0 + 1e-12) + 1e-300);
}

/// The int8 pursuit's selection is the f32 pursuit's, bit for bit (picks,
/// weights, stop reason, excluded and skipped rows, every step field but
/// `verified`), over pool kinds that exercise every branch of the shared
/// loop: isotropic, clustered and near-copy pools (near-dependent picks
/// switch G_SS to exact entries), non-unit rows, an excluded zero row, the
/// family (γ, κ), centroid pursuit, caller scores and pool-order relevance,
/// adaptive stopping, relevance fill after the pool optimum, and skipped
/// dependent picks.
#[test]
fn int8_selection_is_the_f32_selection_bit_for_bit() {
    use mempursuit::Relevance;
    use mempursuit_tests::checks::same_selection;
    let mut compared = 0;
    let mut verified = 0u64;
    let (mut skipped, mut filled, mut dependent) = (0, 0, 0);
    for seed in 0..24u64 {
        let (p, d) = [(40, 24), (60, 64), (30, 8), (80, 96)][seed as usize % 4];
        let (q, mut pool) = match seed % 3 {
            0 => random::uniform_pool(500 + seed, p, d),
            1 => random::clustered_pool(500 + seed, p, d, 4, 0.3),
            _ => {
                let mut rng = random::rng(500 + seed);
                let bases: Vec<Vec<f64>> = (0..4).map(|_| random::gaussian(&mut rng, d)).collect();
                let pool = random::near_copies(&mut rng, &bases, p, 1e-4);
                (random::unit(&mut rng, d), pool)
            }
        };
        for (i, row) in pool.chunks_exact_mut(d).enumerate() {
            let s = [1.0f32, 1.0, 0.5, 3.0][i % 4];
            row.iter_mut().for_each(|x| *x *= s);
        }
        pool[3 * d..4 * d].fill(0.0);
        let scores: Vec<f32> = (0..p).map(|i| ((i * 37 % 11) as f32) / 11.0).collect();
        let i8pool = Int8Candidates::quantize(&pool, d).unwrap();
        for relevance in [
            Relevance::Similarity,
            Relevance::RankedScores(&scores),
            Relevance::PoolOrder,
        ] {
            let input = Input::new(&q, &pool).with_relevance(relevance);
            for o in option_sets() {
                let mut sel = Selector::new();
                let k = 20.min(p);
                let a = sel.select(&input, k, &Method::Pursuit(o)).unwrap();
                let b = sel
                    .select_int8_using(&input, &i8pool, k, &o, mempursuit::Int8Passes::Int8)
                    .unwrap();
                same_selection(&b, &a).unwrap_or_else(|e| panic!("seed {seed} {o:?}: {e}"));
                verified += b.steps.iter().map(|s| s.verified as u64).sum::<u64>();
                skipped += b.skipped.len();
                filled += b.steps.iter().filter(|s| s.filled).count();
                dependent += b.steps.iter().filter(|s| s.dependent).count();
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 24 * 3 * 6);
    // Every branch ran.
    assert!(verified > 0 && skipped > 0 && filled > 0 && dependent > 0);
}

/// Store-like pools: a retriever's nearest neighbours of a query (rows
/// close to the query and to each other, a few tight topics, near
/// duplicates), where many candidates' bounds overlap and the bound's
/// error term ‖Σ ω_a ê_a‖ (the picks' weighted quantization errors,
/// `kernels::int8::weighted_error_norm`) decides what is verified. With `Int8Passes::Int8` forced, the
/// int8 pursuit makes the f32 pursuit's selection bit for bit at K = 20
/// and 50 under every option set of [`option_sets`]; with the feature
/// `check-bounds` every candidate's f32 score is also checked inside its
/// bound at every pick.
#[test]
fn int8_picks_are_the_f32_picks_on_store_like_clustered_pools() {
    use mempursuit::Int8Passes;
    use mempursuit_tests::checks::same_selection;
    let (p, d) = (120, 96);
    let mut verified = 0u64;
    for seed in 0..6u64 {
        let mut rng = random::rng(2900 + seed);
        let q = random::unit(&mut rng, d);
        let q64: Vec<f64> = q.iter().map(|&x| x as f64).collect();
        // Topics near the query, rows near the topics (noise 0.05–0.2),
        // a quarter of them near-copies of one row.
        let topics: Vec<Vec<f64>> = (0..4)
            .map(|_| {
                let g = random::gaussian(&mut rng, d);
                q64.iter().zip(&g).map(|(a, b)| a + 0.08 * b).collect()
            })
            .collect();
        let noise = [0.05, 0.1, 0.2][seed as usize % 3];
        let mut pool = random::near_copies(&mut rng, &topics, p - p / 4, noise);
        let dup = random::near_copies(&mut rng, std::slice::from_ref(&q64), p / 4, 1e-3);
        pool.extend(dup);
        let codes = Int8Candidates::quantize(&pool, d).unwrap();
        let input = Input::new(&q, &pool);
        for o in option_sets() {
            for k in [20, 50] {
                let mut sel = Selector::new();
                let want = sel.select(&input, k, &Method::Pursuit(o)).unwrap();
                let got = sel
                    .select_int8_using(&input, &codes, k, &o, Int8Passes::Int8)
                    .unwrap();
                same_selection(&got, &want)
                    .unwrap_or_else(|e| panic!("seed {seed} K={k} {o:?}: {e}"));
                verified += got.steps.iter().map(|s| s.verified as u64).sum::<u64>();
            }
        }
    }
    assert!(verified > 0);
}

/// The certificate holds for every finite code and scale the constructor
/// accepts: codes ±127 and 0 with scales from 1e-30 to f32::MAX (so that
/// s·c and the int8 Gram entries would overflow f32), beside well-coded
/// rows. Such a row is approximated by 0 instead (its approximation is no
/// closer than that), so the int8 pursuit still makes every pick of the f32
/// pursuit, bit for bit, under every option set (before, an overflowed
/// entry made the row unavailable: fewer picks than f32).
#[test]
fn int8_certificate_holds_for_every_finite_code_and_scale() {
    use mempursuit_tests::checks::same_selection;
    let (p, d) = (24, 16);
    let mut wild_rows = 0;
    for seed in 0..6u64 {
        let (q, pool) = random::clustered_pool(900 + seed, p, d, 4, 0.3);
        let good = Int8Candidates::quantize(&pool, d).unwrap();
        let mut codes = good.view().codes().to_vec();
        let mut scales = good.view().scales().to_vec();
        for i in 0..p {
            let (c, s) = match (i + seed as usize) % 6 {
                0 => (127i8, f32::MAX),
                1 => (-127, 1e30),
                2 => (0, f32::MAX),
                3 => (127, 1e-30),
                _ => continue,
            };
            codes[i * d..(i + 1) * d]
                .iter_mut()
                .enumerate()
                .for_each(|(k, x)| *x = if k % 3 == 0 { c } else { -c });
            scales[i] = s;
            wild_rows += 1;
        }
        let wild = Int8Candidates::from_codes(&pool, d, codes, scales).unwrap();
        for o in option_sets() {
            let input = Input::new(&q, &pool);
            let mut sel = Selector::new();
            let a = sel.select(&input, p, &Method::Pursuit(o)).unwrap();
            let b = sel
                .select_int8_using(&input, &wild, p, &o, mempursuit::Int8Passes::Int8)
                .unwrap();
            assert_eq!(b.picks.len(), a.picks.len(), "seed {seed} {o:?}");
            same_selection(&b, &a).unwrap_or_else(|e| panic!("seed {seed} {o:?}: {e}"));
            assert!(b.steps.iter().skip(1).any(|s| s.verified > 0));
        }
    }
    assert!(wild_rows >= 6 * 16);
}

/// `Int8Passes`: `Int8` always streams the int8 codes (certified argmax),
/// `F32` never (the f32 pursuit runs: its steps equal the f32 selection's
/// to the counters; the int8 path's first step reads no row, the f32 one's
/// the query pass), and `Auto` follows its documented rule
/// (`Int8Passes::auto_rule` on this CPU's kernel and L2: f32 rows beyond
/// L2 and P large against K²; at P = 500, d = 1536, K = 8 it holds on any
/// x86-64 CPU with AVX2 and an L2 under 3 MB); all three give the f32
/// pursuit's selection.
#[test]
fn int8_passes_choose_the_path_and_never_the_result() {
    use mempursuit::kernels::int8::{l2_cache_bytes, Int8Kernel};
    use mempursuit::Int8Passes;
    use mempursuit_tests::checks::same_selection;
    assert!(
        l2_cache_bytes() >= 64 << 10,
        "{} bytes of L2",
        l2_cache_bytes()
    );
    let kernel = Int8Kernel::active();
    for (p, d) in [(40, 24), (10, 40_000), (500, 1536)] {
        let (q, pool) = random::clustered_pool(77, p, d, 4, 0.3);
        let codes = Int8Candidates::quantize(&pool, d).unwrap();
        let input = Input::new(&q, &pool);
        let o = PursuitOptions::default();
        let mut sel = Selector::new();
        let want = sel.select(&input, 8, &Method::Pursuit(o)).unwrap();
        let fits = p * d * 4 <= l2_cache_bytes();
        let simd = matches!(
            kernel,
            Int8Kernel::Avx2 | Int8Kernel::AvxVnni | Int8Kernel::Avx512Vnni
        );
        // Only the third pool is both beyond L2 and large against K² = 64.
        assert_eq!(
            Int8Passes::Auto.uses_int8(p, d, 8),
            simd && !fits && p == 500,
            "{kernel:?} P={p} d={d}"
        );
        if cfg!(target_arch = "x86_64") && Int8Kernel::Avx2.is_available() && p == 500 {
            assert!(Int8Passes::Auto.uses_int8(p, d, 8), "AVX2, 3 MB of f32");
        }
        assert!(Int8Passes::Int8.uses_int8(p, d, 8) && !Int8Passes::F32.uses_int8(p, d, 8));
        for passes in [Int8Passes::Auto, Int8Passes::Int8, Int8Passes::F32] {
            let got = sel
                .select_int8_using(&input, &codes, 8, &o, passes)
                .unwrap();
            same_selection(&got, &want).unwrap_or_else(|e| panic!("{passes:?}: {e}"));
            let verified: u32 = got.steps.iter().map(|s| s.verified).sum();
            assert_eq!(
                verified > 0,
                passes.uses_int8(p, d, 8),
                "{passes:?} P={p} d={d}"
            );
        }
        // The default entry point is Auto.
        let auto = sel.select_int8(&input, &codes, 8, &o).unwrap();
        let verified: u32 = auto.steps.iter().map(|s| s.verified).sum();
        assert_eq!(verified > 0, Int8Passes::Auto.uses_int8(p, d, 8));
    }
}
