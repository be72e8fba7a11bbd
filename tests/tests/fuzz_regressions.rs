//! Replays the fuzzers' inputs on stable Rust, through the same check code
//! the targets run (`mempursuit_tests::checks::cases`): every minimized
//! crash committed under `fuzz/regressions/<target>/` and the seed corpus
//! under `fuzz/corpus/<target>/`. Each file is raw libFuzzer input, decoded
//! as libFuzzer does (`arbitrary_take_rest`). See docs/FUZZING.md for the
//! findings behind the regression files.
//!
//! The named tests below also pin each finding as a plain Rust case (the
//! reproducer the fuzzer printed, reduced by hand), with the value the
//! fixed core must return.

use std::path::{Path, PathBuf};

use mempursuit::{
    AtPoolOptimum, InputPolicy, InvalidCandidates, Method, Normalization, PursuitOptions,
    Relevance, Selector, Stopping,
};
use mempursuit_tests::checks::cases::{
    decode, BadInputCase, CoverageCase, DifferentialCase, KktCase,
};
use mempursuit_tests::checks::parsers::{check_dataset, check_npy, check_spec, split_dataset};
use mempursuit_tests::checks::RelevanceSpec;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// The files of `fuzz/<kind>/<target>/`, sorted (hidden files skipped).
fn inputs(kind: &str, target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = fuzz_dir().join(kind).join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

/// Replays every input of `target`; returns how many decoded and ran.
fn replay(target: &str, run: impl Fn(&[u8]) -> Option<Result<(), String>>) -> usize {
    let mut ran = 0;
    for kind in ["regressions", "corpus"] {
        for (path, bytes) in inputs(kind, target) {
            match run(&bytes) {
                Some(Ok(())) => ran += 1,
                Some(Err(e)) => panic!("{}: {e}", path.display()),
                None => {}
            }
        }
    }
    ran
}

#[test]
fn replay_bad_input() {
    let n = replay("bad_input", |b| {
        decode::<BadInputCase>(b).ok().map(|c| c.run())
    });
    assert!(n >= 3, "only {n} bad_input inputs replayed");
}

#[test]
fn replay_npy() {
    let n = replay("npy", |b| Some(check_npy(b)));
    assert!(n >= 9, "only {n} npy inputs replayed");
}

#[test]
fn replay_dataset() {
    let n = replay("dataset", |b| Some(check_dataset(b)));
    assert!(n >= 5, "only {n} dataset inputs replayed");
}

#[test]
fn replay_spec() {
    let n = replay("spec", |b| Some(check_spec(b)));
    assert!(n >= 8, "only {n} spec inputs replayed");
}

/// The `spec` seeds mean what they say: the text and JSON forms parse, and
/// the one that names an option of another method is refused when built.
#[test]
fn spec_seeds_mean_what_they_say() {
    use mempursuit::SelectSpec;
    let read =
        |name: &str| std::fs::read_to_string(fuzz_dir().join("corpus/spec").join(name)).unwrap();
    let mmr: SelectSpec = read("seed-2-mmr").parse().unwrap();
    assert_eq!(mmr.mmr_lambda(), Some(0.3));
    let json: SelectSpec = serde_json::from_str(&read("seed-5-json")).unwrap();
    assert_eq!(
        json.to_string(),
        "centroid,gamma=0.2,raw_relevance=true,storage=f16"
    );
    let bad: SelectSpec = read("seed-6-not-applicable").parse().unwrap();
    assert!(bad.method().is_err());
}

/// The `dataset` seeds are real datasets (so the fuzzer starts from inputs
/// that reach the evaluation), and the hostile `.npy` seeds are refused.
#[test]
fn parser_seeds_mean_what_they_say() {
    use mempursuit_cli::dataset::Dataset;
    for (path, bytes) in inputs("corpus", "dataset") {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let loaded = Dataset::from_bytes(split_dataset(&bytes).unwrap().bytes());
        assert!(loaded.is_ok(), "{name}: {:?}", loaded.err());
    }
    for (name, message) in [
        ("seed-9-header-len-4GiB", "header of 4294967295 bytes"),
        ("seed-10-wrapping-shape", "more elements than this machine"),
        ("seed-3-float64", "convert with astype(float32)"),
        ("seed-4-fortran", "ascontiguousarray"),
        ("seed-7-truncated", "header says 6 values, file holds 5"),
    ] {
        let bytes = std::fs::read(fuzz_dir().join("corpus/npy").join(name)).unwrap();
        let e = mempursuit::npy::parse_f32(&bytes).unwrap_err().to_string();
        assert!(e.contains(message), "{name}: {e}");
    }
}

#[test]
fn replay_kkt() {
    let n = replay("kkt", |b| decode::<KktCase>(b).ok().map(|c| c.run()));
    assert!(n >= 3, "only {n} kkt inputs replayed");
}

#[test]
fn replay_differential() {
    let n = replay("differential", |b| {
        decode::<DifferentialCase>(b).ok().map(|c| c.run())
    });
    assert!(n >= 3, "only {n} differential inputs replayed");
}

#[test]
fn replay_coverage() {
    let n = replay("coverage", |b| {
        decode::<CoverageCase>(b).ok().map(|c| c.run().map(|_| ()))
    });
    assert!(n >= 3, "only {n} coverage inputs replayed");
}

/// bad_input finding 1: adaptive stopping with ε = 0 divided by
/// max(L_{t−1}, ε) = 0 once the residual reached 0 (d = 1, the first pick
/// equals the query), giving Δ_t = −∞ (and 0/0 = NaN when L stays 0).
#[test]
fn adaptive_stopping_with_zero_eps_stays_finite() {
    let case = BadInputCase {
        query: vec![0.5],
        candidates: vec![0.5, 0.5, 0.0, -1.0, 1.0, 2.0],
        relevance: RelevanceSpec::Similarity,
        budget: 6,
        options: PursuitOptions {
            ridge: f64::INFINITY,
            stopping: Stopping::Adaptive {
                tau: 0.0,
                patience: 3,
                eps: 0.0,
            },
            input: InputPolicy {
                normalization: Normalization::Cosine,
                invalid_candidates: InvalidCandidates::Exclude,
            },
            ..PursuitOptions::default()
        },
        mmr_lambda: 0.5,
        workspace: None,
    };
    case.run().unwrap();
    let sel = Selector::new()
        .select(
            &mempursuit::Input::new(&case.query, &case.candidates),
            6,
            &Method::Pursuit(case.options),
        )
        .unwrap();
    assert!(sel.steps.iter().all(|s| s.improvement.is_finite()));
    // L_1 = 0 (the first pick is the query's direction). Step 2 keeps L = 0:
    // Δ = 0/0, reported as 0 (no improvement). Step 3 (centroid pursuit
    // picks the antipode on a tie at U = 0) raises L to 4/9: Δ = −(4/9)/0,
    // saturated at −f64::MAX.
    assert_eq!(sel.steps[0].residual_sq, 0.0);
    assert_eq!(sel.steps[1].improvement, 0.0);
    assert_eq!(sel.steps[2].improvement, -f64::MAX);
    assert!((sel.steps[2].residual_sq - 4.0 / 9.0).abs() < 1e-12);
}

/// bad_input finding 2: with γ = 1e-300 the one-memory refit computed
/// α = (x − shift·y)/γ from rounding noise (−1e283), the ratio test emptied
/// the free set, and the next step returned weights [1, 1, 0].
#[test]
fn tiny_gamma_keeps_weights_on_the_simplex() {
    let query = [24.901f32, 4.027249e-22, -0.444];
    let candidates = [
        824468.56f32,
        824468.56,
        824468.56,
        824468.56,
        824468.56,
        206117.14,
        824468.56,
        0.049142156,
        824468.56,
    ];
    for relevance in [Relevance::PoolOrder, Relevance::Similarity] {
        let options = PursuitOptions {
            ridge: 1.0,
            gamma: 1e-300,
            at_pool_optimum: AtPoolOptimum::Continue,
            ..PursuitOptions::default()
        };
        let input = mempursuit::Input::new(&query, &candidates).with_relevance(relevance);
        for k in 1..=3 {
            let sel = Selector::new()
                .select(&input, k, &Method::Pursuit(options))
                .unwrap();
            let sum: f64 = sel.weights.iter().sum();
            assert!(
                (sum - 1.0).abs() < 1e-12,
                "{relevance:?} k {k}: {:?}",
                sel.weights
            );
            assert!(sel.weights.iter().all(|&w| w >= 0.0));
            assert!(sel.steps.iter().all(|s| s.free_size >= 1));
        }
    }
}

/// kkt/differential finding 3 (found by a stable pre-run of the kkt case
/// decoder on seeded random bytes, input 1267): with ρ = pool order and
/// κ = 0, a selected memory whose augmented vector [m_j; 1] is an exact
/// affine combination of the free memories (|c|₁ = 3) was blocked by the
/// pivot rule although U_j − ν = 0.027 (KKT violated, refit suboptimal, and
/// the next picks differed from the reference). Fixed by an exchange step
/// in the solver (`exchange_dependent`).
#[test]
fn dependent_column_with_pool_order_relevance_is_exchanged() {
    let name = "stable-prefuzz-1267-dependent-column-pool-order";
    let bytes = std::fs::read(fuzz_dir().join("regressions/kkt").join(name)).unwrap();
    let case: KktCase = decode(&bytes).unwrap();
    assert_eq!(case.relevance, RelevanceSpec::PoolOrder);
    assert_eq!(case.family.ridge, 0.0);
    case.run().unwrap();
    let diff: DifferentialCase = decode(&bytes).unwrap();
    diff.run().unwrap();
}

/// kkt finding 4 (a false alarm of the check, fixed in the check): caller
/// scores all 0, κ = 0, γ = 0.5, d = 3, P = 13. A zero-weight memory is an
/// exact affine combination of the free ones with |c|₁ ≈ 2,330, so the f32
/// Gram noise makes its pivot undecidable and U_j − ν = 6.6e-6 > 4·tol. The
/// check allowed such blocked memories only for ρ = b; it now allows them
/// whenever ρ is affine in the embeddings along the dependency
/// (δρ = ρ_j − Σ c_a ρ_a ≈ 0, here exactly 0), which is what the violation
/// bound needs.
#[test]
fn constant_scores_with_ill_conditioned_dependency() {
    let name = "crash-07bd9e62-constant-scores-ill-conditioned-dependency";
    let bytes = std::fs::read(fuzz_dir().join("regressions/kkt").join(name)).unwrap();
    let case: KktCase = decode(&bytes).unwrap();
    assert_eq!(case.family.ridge, 0.0);
    assert!(matches!(&case.relevance, RelevanceSpec::Scores(s) if s.iter().all(|&x| x == 0.0)));
    case.run().unwrap();
}

/// differential finding 5 (a false alarm of the check, fixed in the
/// check): κ = 0, γ = 0.5, caller scores, d = 5, two near-duplicate rows
/// (distance ~3e-4) with equal scores. The core's refit satisfies KKT to
/// 2e-8 and its objective matches the reference's to 9e-9, but the optimal
/// reconstruction q̂ is ill-determined (curvature ~1e-6 along the
/// duplicate direction), so L_t differed by 1.9e-4 > 1e-4. The check now
/// widens the q̂-dependent tolerances by δ_t = √(2e_t/γ) from the measured
/// restricted gap e_t (and rejects e_t beyond the f32/pivot allowance).
#[test]
fn ill_conditioned_refit_with_zero_ridge() {
    let name = "crash-43fb273c-ill-conditioned-refit-kappa-0";
    let bytes = std::fs::read(fuzz_dir().join("regressions/differential").join(name)).unwrap();
    let case: DifferentialCase = decode(&bytes).unwrap();
    assert_eq!(case.family.ridge, 0.0);
    assert_eq!(case.family.gamma, 0.5);
    case.run().unwrap();
}

/// npy finding 6 (a false alarm of the check, fixed in the check): a valid
/// 2 × 3 file whose data holds NaN bit patterns (and an extra header key,
/// which NumPy ignores too). Both readers returned the same bits, but the
/// check compared the matrices with `==`, and NaN ≠ NaN. It now compares
/// bit for bit.
#[test]
fn npy_data_with_nan_reads_the_same_in_both_readers() {
    let name = "crash-48aeb1d1-nan-data-check-compared-with-eq";
    let bytes = std::fs::read(fuzz_dir().join("regressions/npy").join(name)).unwrap();
    check_npy(&bytes).unwrap();
    let m = mempursuit::npy::parse_f32_matrix(&bytes).unwrap();
    assert_eq!((m.rows, m.cols), (2, 3));
    assert!(m.data.iter().any(|x| x.is_nan()));
}

/// npy finding 7: a 150-byte header with ten unclosed braces made the
/// header parser (py_literal, a backtracking PEG parser) run for 17 s
/// before failing; the exec rate of the first `npy` run fell from 5,000/s
/// to 70/s. The reader now refuses brackets that nest deeper than 3 or do
/// not pair up, and headers with more than 512 bytes besides spaces, before
/// the parser runs.
#[test]
fn unclosed_braces_are_refused_before_the_header_parser() {
    let name = "slow-0a74a82a-unclosed-braces-backtracking";
    let bytes = std::fs::read(fuzz_dir().join("regressions/npy").join(name)).unwrap();
    let start = std::time::Instant::now();
    let e = mempursuit::npy::parse_f32(&bytes).unwrap_err();
    assert!(start.elapsed() < std::time::Duration::from_secs(1));
    assert_eq!(
        e.to_string(),
        "malformed .npy header: brackets nested deeper than 3"
    );
}
