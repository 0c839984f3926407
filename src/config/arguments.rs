//! An action's `arguments:` read into declarations (`crate::arguments::Argument`): names
//! unique also once upper-cased (they name environment variables, see
//! `arguments::environment`), the type's rule parsed (and a `regex:` compiled) through
//! `arguments::types`, choices, suggestions, and a default that breaks its own rule warned
//! about.

use std::collections::HashMap;

use super::checker::{Checker, Field, path_or};
use super::schema::{ARGUMENT, CHOICE};
use super::tree::{Node, key_path};
use crate::arguments::{ArgType, Argument, Choice, Dash};

/// The declarations of one action's `arguments:` list, in order.
pub(super) fn read(c: &mut Checker<'_>, field: Field<'_, '_>) -> Vec<Argument> {
    let mut arguments: Vec<Argument> = Vec::new();
    // Upper-cased name → the argument path that claimed it, for collision messages.
    let mut env_names: HashMap<String, String> = HashMap::new();
    for (entries, path) in c.mappings(field) {
        let argument = declaration(c, entries, &path, &arguments, &mut env_names);
        arguments.push(argument);
    }
    arguments
}

fn declaration(
    c: &mut Checker<'_>,
    entries: &[(String, Node)],
    path: &str,
    earlier: &[Argument],
    env_names: &mut HashMap<String, String>,
) -> Argument {
    let f = c.fields(entries, path, ARGUMENT);
    let name = c.text(f.get("name")).unwrap_or_default();
    let kind = c.text(f.get("type")).unwrap_or_default();
    // Parsed up front because the rule decides whether the argument needs a name; a bad
    // type is reported below, in its place among the argument's problems.
    let (rule, type_error) = argument_type(&kind, has_choices(f.get("choices")));
    check_name(
        c,
        &name,
        &rule,
        path_or(f.get("name"), path),
        path,
        earlier,
        env_names,
    );
    let choices = choices(c, f.get("choices"));
    let suggestions = suggestions(c, f.get("suggestions"));
    let title = c
        .text(f.get("title"))
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| name.clone());
    if let Some(message) = type_error {
        c.error(path_or(f.get("type"), path), message);
    }
    if rule == ArgType::Untyped && !name.is_empty() {
        c.warn(
            path,
            format!("argument {name:?} has no type: values must be letters and digits (ascii)"),
        );
    }
    let default = c.text(f.get("default"));
    let dash = if c.flag(f.get("allowLeadingDash"), false) {
        Dash::Allow
    } else {
        Dash::Refuse
    };
    let entity = entity_type(c, f.get("entity"), &choices, path);
    let reject_null = c.flag(f.get("rejectNull"), false);
    empty_beside_choices(
        c,
        &name,
        &rule,
        &choices,
        default.as_deref(),
        reject_null,
        path,
    );
    // The choices of an entity-fed argument are templates until the entities are loaded, so
    // a default cannot be checked against them here.
    if let Some(value) = default
        .as_deref()
        .filter(|d| !d.is_empty() && !rule.is_display_only() && entity.is_none())
    {
        let allowed: Vec<&str> = choices.iter().map(|c| c.value.as_str()).collect();
        if let Err(why) = crate::arguments::check(&rule, value, &allowed, dash) {
            // Real configs use defaults as hints ("none", "example.com"), so this warns: a
            // start that relies on such a default is refused at run time.
            c.warn(
                path_or(f.get("default"), path),
                format!(
                    "the default breaks the argument's own rule (it {why}): a start without a \
                     value will be refused"
                ),
            );
        }
    }
    Argument {
        name,
        title,
        rule,
        default,
        choices,
        description: c.text_or(f.get("description"), ""),
        suggestions,
        entity,
        reject_null,
        dash,
        unknown_program: c.flag(f.get("allowUnknownProgram"), false),
        from_trigger: false,
    }
}

/// An argument with `choices:` takes an absent or empty value as empty unless it has a
/// default or `rejectNull: true` (as OliveTin does, and SPEC says), so its command also runs
/// with the value empty (`systemctl restart `, `rm -rf /srv/cache/`), which an author who
/// listed the values rarely means: a warning with the fix. Not for a checklist (no item
/// ticked is a value) nor a checkbox, nor when an empty choice is listed.
fn empty_beside_choices(
    c: &mut Checker<'_>,
    name: &str,
    rule: &ArgType,
    choices: &[Choice],
    default: Option<&str>,
    reject_null: bool,
    path: &str,
) {
    if choices.is_empty()
        || reject_null
        || default.is_some_and(|d| !d.is_empty())
        || matches!(rule, ArgType::Checklist | ArgType::Checkbox)
        || choices.iter().any(|ch| ch.value.is_empty())
    {
        return;
    }
    c.warn(
        path,
        format!(
            "argument {name:?} also accepts an empty value besides its choices (a start that \
             gives none runs the command with it empty): set `rejectNull: true` to require \
             one of the choices, give a `default:`, or list an empty choice if that is meant"
        ),
    );
}

/// `entity:` of an argument: its choices are templates, each rendered once per instance of
/// that entity type (when the entities are loaded, and again whenever they change). Without
/// a choice there is nothing to render, so the type is ignored, with a warning.
fn entity_type(
    c: &mut Checker<'_>,
    field: Field<'_, '_>,
    choices: &[Choice],
    path: &str,
) -> Option<String> {
    let entity = c.text(field).filter(|e| !e.trim().is_empty())?;
    if choices.is_empty() {
        c.warn(
            path_or(field, path),
            format!(
                "entity {entity:?} is ignored: an entity-fed argument lists one choice (such as \
                 {{value: '{{{{ {entity}.id }}}}', title: '{{{{ {entity}.name }}}}'}}) that is \
                 repeated for each instance"
            ),
        );
        return None;
    }
    Some(entity)
}

/// A name is needed unless the argument is display-only; it becomes an environment variable
/// of the command, so it may not replace one the command relies on, nor clash with another
/// argument's once upper-cased.
fn check_name(
    c: &mut Checker<'_>,
    name: &str,
    rule: &ArgType,
    name_path: &str,
    path: &str,
    earlier: &[Argument],
    env_names: &mut HashMap<String, String>,
) {
    if name.is_empty() {
        if !rule.is_display_only() {
            c.error(
                path,
                "an argument needs a name (only confirmation and html arguments go without)",
            );
        }
        return;
    }
    let upper = name.to_ascii_uppercase();
    if earlier.iter().any(|a| a.name == name) {
        c.error(name_path, format!("duplicate argument name {name:?}"));
    } else if let Some(other) = env_names.get(&upper) {
        c.error(
            name_path,
            format!(
                "argument {name:?} and the one at {other} both become the environment variable \
                 {upper}: rename one"
            ),
        );
    }
    env_names.entry(upper).or_insert_with(|| path.to_string());
}

/// The rule of a declared `type:` and, when the text names no type, why. The config is then
/// refused anyway; going on with the type the author most likely meant (`HTML` → `html`),
/// else ascii, keeps the messages that follow from the type (a name an html argument need
/// not have, a placeholder naming it) from adding noise.
fn argument_type(declared: &str, has_choices: bool) -> (ArgType, Option<String>) {
    match ArgType::parse(declared.trim(), has_choices) {
        Ok(rule) => (rule, None),
        Err(message) => {
            let meant = ArgType::parse(&declared.trim().to_ascii_lowercase(), has_choices);
            (meant.unwrap_or(ArgType::Ascii), Some(message.to_string()))
        }
    }
}

/// Whether a `choices:` field holds a choice: a list with a mapping in it, as [`choices`] will
/// find (a malformed entry is reported there, and is no choice).
fn has_choices(field: Field<'_, '_>) -> bool {
    matches!(field, Some((Node::Seq(items), _)) if items.iter().any(|i| matches!(i, Node::Map(_))))
}

fn choices(c: &mut Checker<'_>, field: Field<'_, '_>) -> Vec<Choice> {
    let mut choices = Vec::new();
    for (entries, choice_path) in c.mappings(field) {
        let f = c.fields(entries, &choice_path, CHOICE);
        // An empty choice (`value:` with nothing) is a real option meaning "none"; OliveTin
        // configs use it.
        let value = c.text(f.get("value")).unwrap_or_default();
        let title = c
            .text(f.get("title"))
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| value.clone());
        choices.push(Choice { value, title });
    }
    choices
}

/// `suggestions`: a mapping of value to label, kept in file order.
fn suggestions(c: &mut Checker<'_>, field: Field<'_, '_>) -> Vec<(String, String)> {
    let mut suggestions = Vec::new();
    let Some(entries) = c.mapping(field) else {
        return suggestions;
    };
    let suggestions_path = path_or(field, "");
    for (value, label) in entries {
        let label = match label {
            Node::Null => String::new(),
            other => match other.scalar_text() {
                Some(t) => t,
                None => {
                    c.error(
                        &key_path(suggestions_path, value),
                        format!("expected a label, found {}", other.describe()),
                    );
                    continue;
                }
            },
        };
        suggestions.push((value.clone(), label));
    }
    suggestions
}

#[cfg(test)]
mod tests {
    use crate::config::fixtures::*;

    #[test]
    fn argument_errors_have_exact_paths() {
        let wrap =
            |args: &str| format!("actions:\n  - title: x\n    shell: y\n    arguments:\n{args}");
        let cases: &[(String, &str, &str)] = &[
            (
                wrap("      - {type: ascii}\n"),
                "actions[0].arguments[0]",
                "needs a name",
            ),
            (
                wrap("      - {name: a}\n      - {name: a}\n"),
                "actions[0].arguments[1].name",
                "duplicate argument name",
            ),
            (
                wrap("      - {name: host}\n      - {name: HOST}\n"),
                "actions[0].arguments[1].name",
                "both become the environment variable HOST",
            ),
            (
                wrap("      - {name: a, default: [1]}\n"),
                "actions[0].arguments[0].default",
                "expected text, found a list",
            ),
            (
                wrap("      - {name: a, choices: {a: b}}\n"),
                "actions[0].arguments[0].choices",
                "expected a list",
            ),
            (
                wrap("      - {name: a, choices: [b]}\n"),
                "actions[0].arguments[0].choices[0]",
                "expected a mapping",
            ),
            (
                wrap("      - {name: a, suggestions: [b]}\n"),
                "actions[0].arguments[0].suggestions",
                "expected a mapping",
            ),
            (
                wrap("      - {name: a, suggestions: {b: [c]}}\n"),
                "actions[0].arguments[0].suggestions.b",
                "expected a label",
            ),
            (
                wrap("      - {name: a, rejectNull: 2}\n"),
                "actions[0].arguments[0].rejectNull",
                "expected a boolean",
            ),
        ];
        for (text, path, needle) in cases {
            assert_error(text, path, needle);
        }
        // Display-only arguments need no name.
        let (c, _) = ok(&wrap(
            "      - {type: confirmation, title: Sure?}\n      - {type: html}\n      - {name: n, type: int}\n",
        ));
        assert_eq!(c.actions[0].arguments.len(), 3);
        let type_path = "actions[0].arguments[0].type";
        assert_error(
            &wrap("      - {name: n, type: no_such_type}\n"),
            type_path,
            "unknown argument type",
        );
        assert_error(
            &wrap("      - {name: n, type: HTML}\n"),
            type_path,
            "did you mean html",
        );
        assert_error(
            &wrap("      - {name: n, type: 'regex:['}\n"),
            type_path,
            "regex",
        );
        // A default that breaks its own rule still loads (real configs use defaults as hints),
        // with a warning: a start relying on it is refused.
        let (_, warnings) = ok(&wrap("      - {name: u, type: url, default: none}\n"));
        assert!(
            warnings
                .iter()
                .any(|w| w.path == "actions[0].arguments[0].default"),
            "{warnings:?}"
        );
    }
}
