//! Arguments of an execution: the declarations an action carries (`Argument`, read from YAML
//! by `config`), and a request's name/value pairs checked against them before anything is
//! created. `types` holds the rule of each argument type, `file_trigger` the arguments a file
//! trigger fills in, `environment` the variables a value reaches its command
//! through (by shape, never one a program reads as its settings); this file resolves one
//! request: undeclared names refused, defaults applied, `rejectNull` enforced, choices before types. It is pure: it does not quote or
//! substitute (that is `template`), never logs a value and knows nothing of YAML.

pub mod environment;
mod file_trigger;
mod formats;
mod lead;
mod pattern;
pub mod types;

#[cfg(test)]
mod fixtures;

pub use file_trigger::{declare_file_arguments, file_values};
pub use types::{ArgType, Broken, Dash, validate_type};

/// A declared argument of an action, as the config loader built it; its type's rule is parsed
/// (and a `regex:` compiled) at load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Argument {
    pub name: String,
    pub title: String,
    /// The declared type's rule, parsed (and for `regex:` compiled) at load; its `name` is
    /// the type as written, for clients.
    pub rule: ArgType,
    /// `default`, with YAML scalars (numbers, booleans) rendered as text.
    pub default: Option<String>,
    pub choices: Vec<Choice>,
    pub description: String,
    /// `suggestions` in file order.
    pub suggestions: Vec<(String, String)>,
    pub entity: Option<String>,
    pub reject_null: bool,
    /// `allowLeadingDash`: whether a free-text value may start with `-` (see
    /// [`ArgType::is_free_text`]).
    pub dash: Dash,
    /// `allowUnknownProgram`: the author's word that the programs the command hands the
    /// value to never run it as a program, so it may stand among the arguments of one the
    /// shell model does not know (`template::known`).
    pub unknown_program: bool,
    /// Declared by actiond for a file trigger (`filepath`, …), not by the config: its value
    /// comes from the trigger alone, so it is not offered to people and a start by hand may
    /// not set it (a caller must not choose which file an upload handler reads).
    pub from_trigger: bool,
}

/// One of an argument's `choices`: the value sent and the title shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub value: String,
    pub title: String,
}

/// One validated argument value, ready for substitution and the environment.
#[derive(Clone, PartialEq, Eq)]
pub struct Value {
    pub name: String,
    pub value: String,
    /// A `password`: never logged, shown or persisted.
    pub secret: bool,
}

// Debug never shows a value: a stray `{:?}` in a log line must not leak a password.
impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Value({}, {} bytes)", self.name, self.value.len())
    }
}

/// Why a request's arguments were refused: the argument and the rule it broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgError {
    pub argument: String,
    pub rule: Broken,
}

impl std::fmt::Display for ArgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "argument {:?}: {}", self.argument, self.rule)
    }
}

impl std::error::Error for ArgError {}

fn refuse(argument: &str, rule: Broken) -> ArgError {
    ArgError {
        argument: argument.to_string(),
        rule,
    }
}

/// Refuses a value sent by hand for an argument only a file trigger fills in (`filepath`,
/// …): otherwise anyone allowed to press the button could point an upload handler at any
/// file on the board. An empty value is what the web page would send, and is allowed.
pub fn refuse_trigger_values(
    declared: &[Argument],
    request: &[(String, String)],
) -> Result<(), ArgError> {
    match request
        .iter()
        .find(|(n, v)| !v.is_empty() && declared.iter().any(|d| d.from_trigger && d.name == *n))
    {
        Some((name, _)) => Err(refuse(name, Broken::TriggerOnly)),
        None => Ok(()),
    }
}

/// Whether the request itself gives a value for a `password` argument (a default does not
/// count: anyone allowed to start the action gets it anyway). Such a request's values are
/// the caller's secret, which RestartAction replays for that caller alone.
pub fn carries_secret(declared: &[Argument], request: &[(String, String)]) -> bool {
    request.iter().any(|(name, value)| {
        !value.is_empty()
            && declared
                .iter()
                .any(|d| d.name == *name && d.rule.is_secret())
    })
}

/// Checks `request` against `declared` and returns the value of every declared value
/// argument, in declaration order. Display-only arguments (confirmation, html) take no
/// value; a value sent for one (the web page sends "1" for a ticked confirmation) is
/// ignored.
pub fn resolve(
    declared: &[Argument],
    request: &[(String, String)],
) -> Result<Vec<Value>, ArgError> {
    for (i, (name, _)) in request.iter().enumerate() {
        if !declared.iter().any(|d| d.name == *name) {
            return Err(refuse(name, Broken::Undeclared));
        }
        if request[..i].iter().any(|(n, _)| n == name) {
            return Err(refuse(name, Broken::Twice));
        }
    }
    let mut values = Vec::new();
    // What matching the request's `regex:` values costs, in all: one request holds the event
    // loop for one budget at most, however many pattern arguments an action declares.
    let mut cost = 0usize;
    for d in declared {
        if d.rule.is_display_only() || d.name.is_empty() {
            continue;
        }
        let sent = request
            .iter()
            .find(|(n, _)| *n == d.name)
            .map(|(_, v)| v.as_str())
            .unwrap_or("");
        if let ArgType::Regex(pattern) = &d.rule {
            let len = match sent {
                "" => d.default.as_deref().map_or(0, str::len),
                _ => sent.len(),
            };
            cost = cost.saturating_add(pattern.cost(len));
            if cost > types::MATCH_BUDGET {
                return Err(refuse(&d.name, Broken::PatternBudget));
            }
        }
        let value = settle(d, sent).map_err(|rule| refuse(&d.name, rule))?;
        values.push(Value {
            name: d.name.clone(),
            value,
            secret: d.rule.is_secret(),
        });
    }
    Ok(values)
}

/// One argument's value as a start would take it: an empty value takes the default, an
/// argument still empty is accepted unless it is required, and anything else must follow
/// the argument's choices or type. Returns the value to use, or the rule it broke.
pub fn settle(d: &Argument, sent: &str) -> Result<String, Broken> {
    let value = if sent.is_empty() {
        d.default.as_deref().unwrap_or("")
    } else {
        sent
    };
    if value.is_empty() {
        if d.reject_null {
            return Err(Broken::Required);
        }
        return Ok(String::new());
    }
    // An entity-fed argument's choices are its type's instances: with none loaded, no value
    // can be right, and its type must not be taken as the rule instead.
    if let (Some(kind), true) = (&d.entity, d.choices.is_empty()) {
        return Err(Broken::NoInstances(kind.clone()));
    }
    // A value a file trigger fills in is any text (a file's name), and an entity-fed
    // argument's choices come from the entity file, which a script writes: neither is the
    // author's own text, so the exemption of `choices` does not hold for them.
    if d.from_trigger || d.entity.is_some() {
        leading_dash(value, d.dash)?;
    }
    if d.from_trigger {
        types::double_dot(value)?;
    }
    let choices: Vec<&str> = d.choices.iter().map(|c| c.value.as_str()).collect();
    check(&d.rule, value, &choices, d.dash)
}

/// The one rule for a value that is not the config author's own text (a free-text value, a
/// file trigger's, an entity-fed choice, an entity field that starts an argument of a
/// command): one that starts with `-` is an option to the program that gets it, quoted or
/// not (`rm -rf`, `tar --checkpoint-action=…`, `ls --help`), and is refused unless the author
/// allows it (`allowLeadingDash: true`).
pub fn leading_dash(value: &str, dash: Dash) -> Result<(), Broken> {
    if dash == Dash::Refuse && value.starts_with('-') {
        return Err(Broken::LeadingDash);
    }
    // The same holds for the directories `.` and `..`, wherever the value stands: a word a
    // program resolves from the directory it works in (`cd`, `workingDirectory`, `tar -C`).
    if matches!(value, "." | "..") {
        return Err(Broken::Dots);
    }
    Ok(())
}

/// One non-empty value against its declaration: choices win over the type,
/// except for the types whose rule is about choices (checkbox, checklist).
/// `dash` is the argument's `allowLeadingDash`; a value from the choices is the author's own
/// and may start with `-` either way.
pub fn check(rule: &ArgType, value: &str, choices: &[&str], dash: Dash) -> Result<String, Broken> {
    let choice_rule = matches!(
        rule,
        ArgType::Checkbox | ArgType::Checklist | ArgType::ChoiceOnly
    );
    if !choices.is_empty() && !choice_rule {
        if value.contains('\0') {
            return Err(Broken::Nul);
        }
        return if choices.contains(&value) {
            Ok(value.to_string())
        } else {
            Err(Broken::OneOf(
                choices.iter().map(|c| c.to_string()).collect(),
            ))
        };
    }
    rule.check_with(value, choices, dash)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(name: &str, from_trigger: bool) -> Argument {
        Argument {
            name: name.into(),
            title: name.into(),
            rule: ArgType::VeryDangerousRawString,
            default: None,
            choices: Vec::new(),
            description: String::new(),
            suggestions: Vec::new(),
            entity: None,
            reject_null: false,
            dash: Dash::Refuse,
            unknown_program: false,
            from_trigger,
        }
    }

    #[test]
    fn a_request_carries_a_secret_when_it_gives_a_password_value() {
        let mut key = declared("key", false);
        key.rule = ArgType::Password;
        key.default = Some("from-the-config".into());
        let args = [declared("note", false), key];
        let cases: &[(&[(&str, &str)], bool)] = &[
            (&[], false),
            (&[("note", "hunter2")], false),
            // The default fills it: nothing the caller typed.
            (&[("key", "")], false),
            (&[("key", "hunter2")], true),
            (&[("note", "x"), ("key", "y")], true),
            // Undeclared names are `resolve`'s business.
            (&[("other", "x")], false),
        ];
        for (request, want) in cases {
            let request: Vec<(String, String)> = request
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect();
            assert_eq!(carries_secret(&args, &request), *want, "{request:?}");
        }
    }

    #[test]
    fn an_entity_fed_argument_without_instances_takes_no_value() {
        let mut fed = declared("container", false);
        fed.entity = Some("container".into());
        let request = |v: &str| vec![("container".to_string(), v.to_string())];
        // Its type would take anything: with no instance loaded, nothing is a choice.
        let err = resolve(std::slice::from_ref(&fed), &request("web")).unwrap_err();
        assert_eq!(err.rule, Broken::NoInstances("container".into()), "{err}");
        assert!(
            err.to_string().ends_with(
                "has no choices: no instance of the entity type \"container\" is loaded"
            ),
            "{err}"
        );
        assert!(resolve(std::slice::from_ref(&fed), &request("")).is_ok());
        fed.choices = vec![Choice {
            value: "web".into(),
            title: "web".into(),
        }];
        assert!(resolve(std::slice::from_ref(&fed), &request("web")).is_ok());
        assert!(resolve(std::slice::from_ref(&fed), &request("db")).is_err());
    }

    /// A file trigger's values are any text but a leading `-` (a file named `-rf`): refused
    /// as an option unless the author allows it, whatever the argument's type.
    #[test]
    fn a_trigger_value_starting_with_a_dash_is_refused_unless_allowed() {
        let mut allowed = declared("filename", true);
        allowed.dash = Dash::Allow;
        // The author's own declaration (`from_trigger` false) keeps its type's rule.
        let own = declared("filename", false);
        let cases: &[(&Argument, &str, Option<Broken>)] = &[
            (&declared("filename", true), "report.pdf", None),
            (
                &declared("filename", true),
                "-rf",
                Some(Broken::LeadingDash),
            ),
            (
                &declared("filename", true),
                "--help",
                Some(Broken::LeadingDash),
            ),
            (&declared("filename", true), "-", Some(Broken::LeadingDash)),
            (&declared("fileext", true), "--y", Some(Broken::LeadingDash)),
            (&declared("filename", true), "a-b", None),
            (&declared("filepath", true), "/in/-rf", None),
            (&allowed, "-rf", None),
            (&own, "-rf", None),
        ];
        for (d, value, want) in cases {
            assert_eq!(settle(d, value).err(), *want, "{} = {value:?}", d.name);
        }
    }

    /// An entity-fed argument's choices are rendered from the entity file: a choice that
    /// starts with `-` is refused like a free-text value unless the argument allows it, while
    /// an argument's own choices (the author's text) stay exempt.
    #[test]
    fn an_entity_fed_choice_starting_with_a_dash_is_refused_unless_allowed() {
        let choices = |values: &[&str]| -> Vec<Choice> {
            values
                .iter()
                .map(|v| Choice {
                    value: v.to_string(),
                    title: v.to_string(),
                })
                .collect()
        };
        let mut fed = declared("host", false);
        fed.entity = Some("host".into());
        fed.choices = choices(&["--help", "web", "a-b", "-"]);
        let mut allowed = fed.clone();
        allowed.dash = Dash::Allow;
        let mut own = declared("mode", false);
        own.choices = choices(&["--fast", "slow"]);
        let cases: &[(&Argument, &str, Option<Broken>)] = &[
            (&fed, "--help", Some(Broken::LeadingDash)),
            (&fed, "-", Some(Broken::LeadingDash)),
            (&fed, "web", None),
            (&fed, "a-b", None),
            (&fed, "-x", Some(Broken::LeadingDash)),
            (&allowed, "--help", None),
            (
                &allowed,
                "-x",
                Some(Broken::OneOf(vec![
                    "--help".into(),
                    "web".into(),
                    "a-b".into(),
                    "-".into(),
                ])),
            ),
            (&own, "--fast", None),
        ];
        for (d, value, want) in cases {
            assert_eq!(settle(d, value).err(), *want, "{} = {value:?}", d.name);
        }
        let why = resolve(&[fed], &[("host".into(), "--help".into())]).unwrap_err();
        assert!(
            why.to_string().contains("host") && why.to_string().contains("allowLeadingDash"),
            "{why}"
        );
    }

    /// The one rule, as a table.
    #[test]
    fn the_leading_dash_rule() {
        let cases: &[(&str, Dash, bool)] = &[
            ("-", Dash::Refuse, false),
            ("--help", Dash::Refuse, false),
            ("-rf", Dash::Refuse, false),
            ("a-b", Dash::Refuse, true),
            ("", Dash::Refuse, true),
            (" -x", Dash::Refuse, true),
            ("\u{2013}x", Dash::Refuse, true),
            ("--help", Dash::Allow, true),
            ("-", Dash::Allow, true),
        ];
        for (value, dash, ok) in cases {
            assert_eq!(
                leading_dash(value, *dash).is_ok(),
                *ok,
                "{value:?} {dash:?}"
            );
        }
    }

    #[test]
    fn only_a_trigger_fills_in_the_file_details() {
        let args = [declared("note", false), declared("filepath", true)];
        type Case<'a> = (&'a [(&'a str, &'a str)], Option<&'a str>);
        let cases: &[Case] = &[
            (&[], None),
            (&[("note", "hello")], None),
            // The web page sends every field it shows; an empty one is no choice of file.
            (&[("filepath", "")], None),
            (&[("filepath", "/etc/shadow")], Some("filepath")),
            (&[("note", "x"), ("filepath", "a")], Some("filepath")),
            // Unknown names are `resolve`'s business, not this check's.
            (&[("other", "x")], None),
        ];
        for (request, refused) in cases {
            let request: Vec<(String, String)> = request
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect();
            let got = refuse_trigger_values(&args, &request).err();
            assert_eq!(
                got.as_ref().map(|e| e.argument.as_str()),
                *refused,
                "{request:?}"
            );
        }
    }
}
