//! The keyword arguments of `select`, `Selector.select` and `select_batch`
//! turned into the core's [`Method`]: the one place that maps Python names
//! to selectors. A new method is one more arm in [`MethodArgs::build`] and
//! one more name in [`METHODS`] (and in the stubs).

use mempursuit::{
    AtPoolOptimum, DependentPicks, InputPolicy, InvalidCandidates, Method, MmrOptions,
    Normalization, PursuitOptions, Stopping,
};
use pyo3::exceptions::PyValueError;
use pyo3::PyResult;

/// The accepted values of `method=` (exported as `mempursuit.METHODS`).
pub(crate) const METHOD_NAMES: [&str; 5] = ["pursuit", "centroid", "topk", "mmr", "recommended"];

/// The method-related keyword arguments, as the caller gave them (`None`:
/// not given, use the method's default).
#[derive(Debug, Clone, Copy)]
pub(crate) struct MethodArgs<'a> {
    pub method: &'a str,
    pub gamma: Option<f64>,
    pub ridge: Option<f64>,
    pub mmr_lambda: Option<f64>,
    pub adaptive: bool,
    pub at_pool_optimum: &'a str,
    pub optimum_tolerance: Option<f64>,
    pub dependent_picks: &'a str,
    pub normalization: &'a str,
    pub invalid: &'a str,
}

fn value_error<T>(msg: String) -> PyResult<T> {
    Err(PyValueError::new_err(msg))
}

impl MethodArgs<'_> {
    /// The core's [`Method`] for these arguments, with its parameters
    /// checked (the core's `validate`), so that a bad γ, ridge or λ_mmr is
    /// reported even when nothing would be selected.
    ///
    /// Arguments that do not apply to the method (γ for top-K, `adaptive`
    /// for MMR, ...) are a `ValueError` rather than silently ignored.
    pub(crate) fn build(&self) -> PyResult<Method> {
        let input = self.input_policy()?;
        let method = match self.method {
            "pursuit" => Method::Pursuit(self.pursuit(PursuitOptions::PAPER, input)?),
            "centroid" => {
                if let Some(r) = self.ridge {
                    if r != f64::INFINITY {
                        return value_error(format!(
                            "method='centroid' is the pursuit with ridge = inf; got ridge={r} \
                             (use method='pursuit' for a finite ridge)"
                        ));
                    }
                }
                Method::Pursuit(self.pursuit(PursuitOptions::centroid(0.5), input)?)
            }
            "topk" => {
                self.reject_pursuit_args()?;
                self.reject("mmr_lambda", self.mmr_lambda.is_some())?;
                Method::TopK(input)
            }
            "recommended" => {
                self.reject_pursuit_args()?;
                self.reject("mmr_lambda", self.mmr_lambda.is_some())?;
                Method::Recommended(input)
            }
            "mmr" => {
                self.reject_pursuit_args()?;
                Method::Mmr(MmrOptions {
                    lambda: self.mmr_lambda.unwrap_or(MmrOptions::PAPER.lambda),
                    input,
                })
            }
            other => {
                let names: Vec<String> = METHOD_NAMES.iter().map(|n| format!("'{n}'")).collect();
                return value_error(format!(
                    "method must be one of {}, got '{other}'",
                    names.join(", ")
                ));
            }
        };
        let checked = match &method {
            Method::Pursuit(o) => o.validate(),
            Method::Mmr(o) => o.validate(),
            // Top-K and the recommended setting have no parameters.
            _ => Ok(()),
        };
        checked.map_err(crate::errors::to_py)?;
        Ok(method)
    }

    fn input_policy(&self) -> PyResult<InputPolicy> {
        let normalization = match self.normalization {
            "cosine" => Normalization::Cosine,
            "require_unit" => Normalization::RequireUnit,
            other => {
                return value_error(format!(
                    "normalization must be 'cosine' or 'require_unit', got '{other}'"
                ))
            }
        };
        let invalid_candidates = match self.invalid {
            "reject" => InvalidCandidates::Reject,
            "exclude" => InvalidCandidates::Exclude,
            other => {
                return value_error(format!(
                    "invalid must be 'reject' or 'exclude', got '{other}'"
                ))
            }
        };
        Ok(InputPolicy {
            normalization,
            invalid_candidates,
        })
    }

    fn pursuit(&self, base: PursuitOptions, input: InputPolicy) -> PyResult<PursuitOptions> {
        self.reject("mmr_lambda", self.mmr_lambda.is_some())?;
        let at_pool_optimum = match self.at_pool_optimum {
            "continue" => AtPoolOptimum::Continue,
            "stop" => AtPoolOptimum::Stop,
            "fill" => AtPoolOptimum::FillByRelevance,
            other => {
                return value_error(format!(
                    "at_pool_optimum must be 'continue', 'stop' or 'fill', got '{other}'"
                ))
            }
        };
        let dependent_picks = match self.dependent_picks {
            "keep" => DependentPicks::Keep,
            "skip" => DependentPicks::Skip,
            other => {
                return value_error(format!(
                    "dependent_picks must be 'keep' or 'skip', got '{other}'"
                ))
            }
        };
        let mut o = base;
        o.ridge = self.ridge.unwrap_or(base.ridge);
        o.gamma = self.gamma.unwrap_or(base.gamma);
        o.stopping = if self.adaptive {
            Stopping::PAPER_ADAPTIVE
        } else {
            Stopping::FixedBudget
        };
        o.at_pool_optimum = at_pool_optimum;
        o.optimum_tolerance = self.optimum_tolerance.unwrap_or(base.optimum_tolerance);
        o.dependent_picks = dependent_picks;
        o.input = input;
        if o.is_centroid() {
            // Centroid pursuit has no certificate and no refit: the core
            // ignores these two, so asking for them is a mistake.
            for (name, given) in [
                ("at_pool_optimum", self.at_pool_optimum != "continue"),
                ("dependent_picks", self.dependent_picks != "keep"),
            ] {
                if given {
                    return value_error(format!(
                        "{name} does not apply to centroid pursuit (ridge = inf)"
                    ));
                }
            }
        }
        Ok(o)
    }

    fn reject_pursuit_args(&self) -> PyResult<()> {
        self.reject("gamma", self.gamma.is_some())?;
        self.reject("ridge", self.ridge.is_some())?;
        self.reject("adaptive", self.adaptive)?;
        self.reject("at_pool_optimum", self.at_pool_optimum != "continue")?;
        self.reject("optimum_tolerance", self.optimum_tolerance.is_some())?;
        self.reject("dependent_picks", self.dependent_picks != "keep")
    }

    fn reject(&self, name: &str, given: bool) -> PyResult<()> {
        if given {
            value_error(format!("{name} does not apply to method='{}'", self.method))
        } else {
            Ok(())
        }
    }
}
