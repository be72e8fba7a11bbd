//! The selector options of `select`, `eval` and `bench`, generated from the
//! one specification of a selector call (`mempursuit::spec`): `--method`
//! takes the specification's text form (`recommended`, `pursuit`,
//! `mmr,mmr_lambda=0.3`), and every option of `mempursuit::spec::OPTIONS`
//! is a flag spelled like its key with hyphens (`mmr_lambda` →
//! `--mmr-lambda X`, the booleans as plain flags: `--adaptive`), whose value
//! goes to `SelectSpec::set` as written. No method name, default or valid
//! range is written here: the help texts, the names a flag accepts and
//! every error message come from the specification.

use std::marker::PhantomData;

use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use mempursuit::spec::{OptionInfo, OptionType, Value, OPTIONS};
use mempursuit::{MethodName, SelectSpec, SpecError};

/// What the option flags of one subcommand are.
pub(crate) trait Mode: std::fmt::Debug + Clone + 'static {
    /// Option keys that are no flags here (the subcommand has its own).
    const EXCLUDED: &'static [&'static str];
    /// Several selectors (`eval`): `--method` may be repeated, and a
    /// comma-separated value of an option flag gives one selector per value.
    const GRID: bool;
    /// What `--method` defaults to (`None`: several selectors, see
    /// [`SpecArgs::specs`]).
    fn default_spec() -> Option<SelectSpec>;
    /// Why, for the help.
    const DEFAULT_NOTE: &'static str;
}

/// `mempursuit select`: every option.
#[derive(Debug, Clone)]
pub(crate) struct Select;

impl Mode for Select {
    const EXCLUDED: &'static [&'static str] = &[];
    const GRID: bool = false;
    fn default_spec() -> Option<SelectSpec> {
        Some(SelectSpec::default())
    }
    const DEFAULT_NOTE: &'static str = ", the default of every binding";
}

/// `mempursuit bench`: the candidates' storage is bench's own `--storage`;
/// its synthetic pools have no costs.
#[derive(Debug, Clone)]
pub(crate) struct Bench;

impl Mode for Bench {
    const EXCLUDED: &'static [&'static str] = &["storage", "cost_budget"];
    const GRID: bool = false;
    fn default_spec() -> Option<SelectSpec> {
        Some(SelectSpec::paper())
    }
    const DEFAULT_NOTE: &'static str = ", the paper's method, which BENCHMARKS.md times";
}

/// `mempursuit eval`: several selectors; the relevance is the dataset's
/// (`--relevance`, `--pool-order`), the candidates are f32 and the cost
/// budgets are eval's own `--token-budget` (costs from the texts).
#[derive(Debug, Clone)]
pub(crate) struct Eval;

impl Mode for Eval {
    const EXCLUDED: &'static [&'static str] =
        &["raw_relevance", "pool_order", "storage", "cost_budget"];
    const GRID: bool = true;
    fn default_spec() -> Option<SelectSpec> {
        None
    }
    const DEFAULT_NOTE: &'static str = "with neither --methods nor --method, every method";
}

/// Other spellings of a flag that earlier versions of the program used.
const ALIASES: [(&str, &str); 1] = [("invalid", "invalid-candidates")];

/// The flag of option `key`: `mmr_lambda` → `mmr-lambda`.
/// Parses a budget K given on the command line: an integer ≥ 0. The `-k`
/// flags take it with `allow_negative_numbers`, so `-k -1` is this error
/// and not clap's "unexpected argument '-1'" (as if it were a flag).
pub fn budget(text: &str) -> Result<usize, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("K must be an integer >= 0, got '{text}'"))
}

/// [`budget`] for the commands that evaluate budgets (`eval`, `tune`,
/// `bench`): K = 0 selects nothing, so it is refused too.
pub fn positive_budget(text: &str) -> Result<usize, String> {
    match text.trim().parse() {
        Ok(k) if k >= 1 => Ok(k),
        _ => Err(format!("K must be an integer >= 1, got '{text}'")),
    }
}

fn flag(key: &str) -> String {
    key.replace('_', "-")
}

/// The option flags of mode `M`, in the order of [`OPTIONS`].
fn flags<M: Mode>() -> impl Iterator<Item = &'static OptionInfo> {
    OPTIONS
        .iter()
        .filter(|o| o.ty != OptionType::Method && !M::EXCLUDED.contains(&o.key))
}

/// The selector arguments of a subcommand (see the module docs): the
/// `--method` texts and the option flags given, as written.
#[derive(Debug, Clone)]
pub(crate) struct SpecArgs<M> {
    /// `--method` values.
    methods: Vec<String>,
    /// (key, values) of each option flag given, in the order of [`OPTIONS`]
    /// (a boolean flag given has the value `true`).
    options: Vec<(&'static str, Vec<String>)>,
    mode: PhantomData<M>,
}

impl<M: Mode> SpecArgs<M> {
    /// The one selector of `select` / `bench`: the last `--method` (else
    /// the mode's default) with the option flags set on it (a flag
    /// overrides the same key in the `--method` text), checked.
    ///
    /// # Errors
    /// The specification's error, naming the flag as written.
    pub(crate) fn spec(&self) -> Result<SelectSpec, SpecError> {
        let mut spec = match self.methods.last() {
            Some(text) => text.parse()?,
            None => M::default_spec().unwrap_or_default(),
        };
        for (key, values) in &self.options {
            for v in values {
                spec.set(&flag(key), value(key, v))?;
            }
        }
        spec.method()?;
        Ok(spec)
    }

    /// The selectors of `eval`: `named` (the `--methods` rows), then one
    /// per `--method`, or `default` when both are empty; each expanded over
    /// the values of every option flag that applies to its method (a flag
    /// that does not apply to a method leaves that selector as it is; one
    /// that applies to none of them is an error), checked.
    ///
    /// # Errors
    /// The specification's error, or a message naming a flag that applies
    /// to none of the selectors.
    pub(crate) fn specs(
        &self,
        named: Vec<SelectSpec>,
        default: impl FnOnce() -> Vec<SelectSpec>,
    ) -> Result<Vec<SelectSpec>, String> {
        let mut rows = named;
        for text in &self.methods {
            let spec: SelectSpec = text.parse().map_err(|e| format!("--method {text}: {e}"))?;
            spec.method().map_err(|e| format!("--method {text}: {e}"))?;
            rows.push(spec);
        }
        if rows.is_empty() {
            rows = default();
        }
        for (key, values) in &self.options {
            let name = flag(key);
            let mut next = Vec::with_capacity(rows.len() * values.len());
            let mut applied = false;
            for row in &rows {
                let mut here = Vec::with_capacity(values.len());
                for v in values {
                    let spec = row.with(&name, value(key, v)).map_err(|e| e.to_string())?;
                    match spec.method() {
                        Ok(_) => here.push(spec),
                        Err(SpecError::NotApplicable { key: k, .. }) if k == name => {}
                        Err(e) => return Err(format!("--method {row} --{name} {v}: {e}")),
                    }
                }
                applied |= !here.is_empty();
                if here.is_empty() {
                    next.push(*row);
                } else {
                    next.extend(here);
                }
            }
            if !applied {
                let info = OPTIONS.iter().find(|o| o.key == *key);
                let methods: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
                return Err(format!(
                    "--{name} applies to none of the selectors ({}); it applies to {}",
                    methods.join("; "),
                    info.map_or("other methods", |o| o.applies_to.describe())
                ));
            }
            rows = next;
        }
        Ok(rows)
    }
}

/// A flag's value for [`SelectSpec::set`]: a boolean flag given is `true`,
/// anything else text.
fn value<'a>(key: &str, text: &'a str) -> Value<'a> {
    match OPTIONS.iter().find(|o| o.key == key).map(|o| o.ty) {
        Some(OptionType::Bool) => Value::Bool(true),
        _ => Value::Text(text),
    }
}

/// The long help of `--method`: the text form and every method's name and
/// summary.
fn method_help<M: Mode>() -> String {
    let mut help = String::from(
        "The selector, in the specification's text form: a method name, optionally followed \
         by options as key=value, comma-separated (e.g. 'mmr,mmr_lambda=0.3'); the option \
         flags below set the same options and override the text.",
    );
    if M::GRID {
        help.push_str(
            " Repeat --method for several selectors (after those of --methods). An option \
             flag applies to every selector whose method it applies to; comma-separated \
             values give one selector per value (e.g. --methods topk,centroid --gamma 0.2,0.5).",
        );
    }
    help.push_str("\n\nMethods:");
    for m in MethodName::ALL {
        help.push_str(&format!("\n  {:<12} {}", m.as_str(), m.summary()));
    }
    help.push_str(&format!("\n\n[default: {}]", default_text::<M>()));
    help
}

/// The default of `--method`, for the help.
fn default_text<M: Mode>() -> String {
    match M::default_spec() {
        Some(spec) => format!("{spec}{}", M::DEFAULT_NOTE),
        None => M::DEFAULT_NOTE.to_owned(),
    }
}

impl<M: Mode> FromArgMatches for SpecArgs<M> {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let methods = m
            .get_many::<String>("method")
            .map(|v| v.cloned().collect())
            .unwrap_or_default();
        let mut options = Vec::new();
        for o in flags::<M>() {
            if o.ty == OptionType::Bool {
                if m.get_flag(o.key) {
                    options.push((o.key, vec!["true".to_owned()]));
                }
            } else if let Some(v) = m.get_many::<String>(o.key) {
                options.push((o.key, v.cloned().collect()));
            }
        }
        Ok(SpecArgs {
            methods,
            options,
            mode: PhantomData,
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl<M: Mode> Args for SpecArgs<M> {
    fn augment_args(cmd: Command) -> Command {
        let method = Arg::new("method")
            .long("method")
            .value_name("SPEC")
            .action(if M::GRID {
                ArgAction::Append
            } else {
                ArgAction::Set
            })
            .help(format!(
                "The selector: a method name or the text form 'name,key=value,...' [default: {}]",
                default_text::<M>()
            ))
            .long_help(method_help::<M>());
        let mut cmd = cmd.next_help_heading("Selector").arg(method);
        for o in flags::<M>() {
            let mut arg = Arg::new(o.key).long(flag(o.key)).help(format!(
                "{} [{}]",
                o.doc,
                o.applies_to.describe()
            ));
            arg = match o.ty {
                OptionType::Bool => arg.action(ArgAction::SetTrue),
                OptionType::Name(names) => {
                    arg.value_name("NAME")
                        .value_parser(PossibleValuesParser::new(
                            names.iter().map(|n| PossibleValue::new(*n)),
                        ))
                }
                // Numbers: `--gamma -1` reaches the range check (clap would
                // take "-1" for a flag).
                _ => arg
                    .value_name(if M::GRID { "X,..." } else { "X" })
                    .allow_negative_numbers(true),
            };
            if M::GRID && o.ty != OptionType::Bool {
                arg = arg.action(ArgAction::Append).value_delimiter(',');
            }
            for (key, alias) in ALIASES {
                if key == o.key {
                    arg = arg.visible_alias(alias);
                }
            }
            cmd = cmd.arg(arg);
        }
        cmd.next_help_heading(None::<&str>)
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

/// The value parser of method names (`eval --methods`): the names and
/// summaries of [`MethodName::ALL`].
pub(crate) fn method_names() -> impl clap::builder::TypedValueParser<Value = MethodName> {
    use clap::builder::TypedValueParser as _;
    PossibleValuesParser::new(
        MethodName::ALL.map(|m| PossibleValue::new(m.as_str()).help(m.summary())),
    )
    .try_map(|s| s.parse::<MethodName>())
}
