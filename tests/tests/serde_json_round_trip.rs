//! JSON round trips of the options and results (feature `serde`): every
//! `Method` variant reads back equal to what was written, κ = ∞ is the
//! string "inf" (the form the command line writes too), and a baseline's
//! `Selection` leaves out what top-K and MMR do not compute.

use mempursuit::{
    AtPoolOptimum, Input, InputPolicy, InvalidCandidates, Method, MmrOptions, Normalization,
    PursuitOptions, Selection, Selector, Stopping,
};

fn round_trip(m: &Method) -> (String, Method) {
    let json = serde_json::to_string(m).unwrap();
    let back: Method =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{json} does not read back: {e}"));
    (json, back)
}

#[test]
fn every_method_variant_round_trips() {
    let exclude = InputPolicy {
        normalization: Normalization::RequireUnit,
        invalid_candidates: InvalidCandidates::Exclude,
    };
    let methods = [
        Method::Pursuit(PursuitOptions::default()),
        // "ridge":null before, which did not read back.
        Method::Pursuit(PursuitOptions::centroid(0.5)),
        Method::Pursuit(PursuitOptions {
            gamma: 0.25,
            stopping: Stopping::PAPER_ADAPTIVE,
            at_pool_optimum: AtPoolOptimum::FillByRelevance,
            optimum_tolerance: 1e-9,
            input: exclude,
            // Every other field (ridge 0) from here.
            ..PursuitOptions {
                ridge: 0.0,
                ..PursuitOptions::default()
            }
        }),
        Method::Pursuit(PursuitOptions {
            ridge: 3.0,
            at_pool_optimum: AtPoolOptimum::Stop,
            ..PursuitOptions::default()
        }),
        Method::TopK(InputPolicy::default()),
        Method::TopK(exclude),
        Method::Mmr(MmrOptions::PAPER),
        Method::Mmr(MmrOptions {
            lambda: 0.3,
            input: exclude,
        }),
        Method::recommended(),
        Method::Recommended(exclude),
    ];
    for m in &methods {
        let (json, back) = round_trip(m);
        assert_eq!(&back, m, "{json}");
    }
    let (json, _) = round_trip(&methods[1]);
    assert!(json.contains(r#""ridge":"inf""#), "{json}");
    let (json, _) = round_trip(&methods[2]);
    assert!(json.contains(r#""ridge":0.0"#), "{json}");
}

#[test]
fn ridge_reads_numbers_and_infinity_strings() {
    let centroid = Method::Pursuit(PursuitOptions::centroid(0.5));
    let json = serde_json::to_string(&centroid).unwrap();
    for inf in ["\"inf\"", "\"Infinity\"", "\"+inf\"", "\"INF\""] {
        let text = json.replace("\"inf\"", inf);
        let m: Method = serde_json::from_str(&text).unwrap();
        assert_eq!(m, centroid, "{text}");
    }
    // An integer and a float.
    for (text, ridge) in [("1", 1.0), ("1e-10", 1e-10)] {
        let m: Method = serde_json::from_str(&json.replace("\"inf\"", text)).unwrap();
        assert!(
            matches!(m, Method::Pursuit(o) if o.ridge == ridge),
            "{text}"
        );
    }
    // Another string is refused, saying what is accepted.
    let e = serde_json::from_str::<Method>(&json.replace("\"inf\"", "\"big\"")).unwrap_err();
    assert!(e.to_string().contains("a number, \"inf\""), "{e}");
    // Non-finite values that are invalid options still round trip (and are
    // then refused by validate()).
    for ridge in [f64::NEG_INFINITY, f64::NAN] {
        let m = Method::Pursuit(PursuitOptions {
            ridge,
            ..PursuitOptions::default()
        });
        let (json, back) = round_trip(&m);
        let Method::Pursuit(o) = back else { panic!() };
        assert_eq!(o.ridge.to_bits(), ridge.to_bits(), "{json}");
    }
}

fn example() -> (Vec<f32>, Vec<f32>) {
    let s = std::f32::consts::FRAC_1_SQRT_2;
    (
        vec![s, s],
        vec![0.9950, 0.0998, 0.9998, 0.0200, 0.0, 1.0, 0.0, 0.0],
    )
}

#[test]
fn baseline_selection_leaves_out_what_it_does_not_compute() {
    let (q, c) = example();
    let exclude = InputPolicy {
        invalid_candidates: InvalidCandidates::Exclude,
        ..InputPolicy::default()
    };
    let input = Input::new(&q, &c);
    let mmr = MmrOptions {
        lambda: 0.5,
        input: exclude,
    };
    for method in [Method::TopK(exclude), Method::Mmr(mmr)] {
        let sel = Selector::new().select(&input, 3, &method).unwrap();
        assert!(sel.is_baseline());
        let v = serde_json::to_value(&sel).unwrap();
        let text = v.to_string();
        for absent in [
            "weights",
            "residual_sq",
            "improvement",
            "fw_gap",
            "nu",
            "free_size",
            "solver_iterations",
            "filled",
            "dependent",
            "skipped",
        ] {
            assert!(!text.contains(absent), "{method:?}: {absent} in {text}");
        }
        assert_eq!(v["excluded"], serde_json::json!([3]));
        assert_eq!(v["steps"][0].as_object().unwrap().len(), 2);
        let back: Selection = serde_json::from_value(v).unwrap();
        assert_eq!(back.picks, sel.picks);
        assert!(back.weights.is_empty());
        for (a, b) in back.steps.iter().zip(&sel.steps) {
            assert_eq!(a.index, b.index);
            assert!((a.score - b.score).abs() <= 1e-15 * b.score.abs());
            assert_eq!((a.residual_sq, a.fw_gap, a.nu), (0.0, 0.0, 0.0));
        }
    }
}

#[test]
fn pursuit_selection_keeps_every_field() {
    let (q, c) = example();
    let exclude = PursuitOptions {
        input: InputPolicy {
            invalid_candidates: InvalidCandidates::Exclude,
            ..InputPolicy::default()
        },
        ..PursuitOptions::default()
    };
    let sel = Selector::new()
        .select(&Input::new(&q, &c), 2, &Method::Pursuit(exclude))
        .unwrap();
    assert!(!sel.is_baseline());
    let v = serde_json::to_value(&sel).unwrap();
    assert_eq!(v["picks"], serde_json::json!([0, 2]));
    for field in ["residual_sq", "improvement", "fw_gap", "nu", "free_size"] {
        assert!(v["steps"][1][field].is_number(), "{field}");
    }
    assert!(v["steps"][1]["dependent"].is_boolean());
    assert_eq!(v["skipped"], serde_json::json!([]));
    let back: Selection = serde_json::from_value(v).unwrap();
    assert_eq!(
        (back.picks.clone(), back.stop, back.excluded.clone()),
        (sel.picks.clone(), sel.stop, sel.excluded.clone())
    );
    for (a, b) in back.weights.iter().zip(&sel.weights) {
        assert!((a - b).abs() <= 1e-15);
    }
    // An empty selection (K = 0) round trips too.
    let empty = Selector::new()
        .select(&Input::new(&q, &c), 0, &Method::Pursuit(exclude))
        .unwrap();
    let back: Selection = serde_json::from_str(&serde_json::to_string(&empty).unwrap()).unwrap();
    assert_eq!(back, empty);
}
