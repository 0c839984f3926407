//! An action's command: `shell:` (a command line for `sh -c`) or `exec:` (an argv list), and
//! its compilation for substitution at load. Every `{{ }}` placeholder is located and its
//! quoting context checked by `template`; this module reports, at the path of the text that
//! holds it, a placeholder in an unsafe context, one naming no argument, and one naming an
//! argument that has no value (confirmation, html).

use super::checker::{Checker, Fields, path_or};
use super::tree::{Node, index_path};
use crate::arguments::Argument;
use crate::template::{Placeholder, Template};

/// What an action runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandSpec {
    /// `shell:` run as `sh -c <text>`.
    Shell(String),
    /// `exec:` an argv list, no shell. Preferred when both are given.
    Exec(Vec<String>),
}

/// An action's command compiled for substitution (see `template`): placeholders located,
/// their quoting contexts known, unsafe ones refused at load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandTemplate {
    Shell(Template),
    Exec(Vec<Template>),
}

impl CommandTemplate {
    pub fn placeholders(&self) -> Vec<&Placeholder> {
        match self {
            CommandTemplate::Shell(t) => t.placeholders().map(|(p, _)| p).collect(),
            CommandTemplate::Exec(v) => v
                .iter()
                .flat_map(|t| t.placeholders().map(|(p, _)| p))
                .collect(),
        }
    }
}

/// `shell` or `exec`; `exec` wins when both are written (with a warning). `None` when there
/// is nothing to run, with the error at its path.
pub(super) fn read(c: &mut Checker<'_>, f: &Fields<'_>, path: &str) -> Option<CommandSpec> {
    let shell = c.text(f.get("shell"));
    let exec = match f.get("exec") {
        Some((Node::Seq(_), _)) => Some(c.text_list(f.get("exec"))),
        Some((node, at)) => {
            c.error(
                at,
                format!(
                    "exec is a list (program, then each argument), found {}; use shell for a \
                     command line",
                    node.describe()
                ),
            );
            return None;
        }
        None => None,
    };
    match (shell, exec) {
        (shell, Some(argv)) => {
            if argv.first().is_none_or(|program| program.trim().is_empty()) {
                c.error(
                    path_or(f.get("exec"), path),
                    "exec needs at least the program to run",
                );
                return None;
            }
            if shell.is_some() {
                c.warn(
                    path_or(f.get("shell"), path),
                    "both shell and exec are set: exec is used, shell is ignored",
                );
            }
            Some(CommandSpec::Exec(argv))
        }
        (Some(shell), None) if !shell.trim().is_empty() => Some(CommandSpec::Shell(shell)),
        (Some(_), None) => {
            c.error(
                path_or(f.get("shell"), path),
                "shell is empty: write the command to run",
            );
            None
        }
        (None, None) => {
            c.error(
                path,
                "an action needs shell (a command line) or exec (a list)",
            );
            None
        }
    }
}

/// Compiles the command for substitution. Unsafe placeholder contexts, placeholders
/// naming nothing, and placeholders naming display-only arguments are errors at the
/// path of the text that holds them.
pub(super) fn compile(
    c: &mut Checker<'_>,
    command: &CommandSpec,
    f: &Fields<'_>,
    path: &str,
    arguments: &[Argument],
    entity: Option<&str>,
) -> CommandTemplate {
    let texts: Vec<(String, &str, bool)> = match command {
        CommandSpec::Shell(text) => {
            vec![(
                path_or(f.get("shell"), path).to_string(),
                text.as_str(),
                true,
            )]
        }
        CommandSpec::Exec(argv) => {
            let at = path_or(f.get("exec"), path);
            argv.iter()
                .enumerate()
                .map(|(i, t)| (index_path(at, i), t.as_str(), false))
                .collect()
        }
    };
    let mut compiled = Vec::new();
    for (at, text, shell) in texts {
        let result = if shell {
            Template::shell(text)
        } else {
            Template::literal(text)
        };
        match result {
            Ok(t) => {
                for (placeholder, _) in t.placeholders() {
                    if let Some(problem) = placeholder_problem(placeholder, arguments, entity) {
                        c.error(&at, problem);
                    }
                    if let Some(warning) = secret_in_argv(placeholder, arguments, shell) {
                        c.warn(&at, warning);
                    }
                }
                compiled.push(t);
            }
            Err(e) => {
                c.error(&at, e.message);
                compiled.push(Template::empty());
            }
        }
    }
    match command {
        CommandSpec::Shell(_) => {
            CommandTemplate::Shell(compiled.pop().unwrap_or_else(Template::empty))
        }
        CommandSpec::Exec(_) => CommandTemplate::Exec(compiled),
    }
}

/// Why a placeholder cannot be filled, if it cannot.
fn placeholder_problem(
    p: &Placeholder,
    arguments: &[Argument],
    entity: Option<&str>,
) -> Option<String> {
    match p {
        Placeholder::Argument(name) => {
            let declared = arguments.iter().find(|a| a.name == *name);
            match declared {
                Some(a) if a.rule.is_display_only() => Some(format!(
                    "{p} names a {} argument, which has no value to substitute",
                    a.rule.name()
                )),
                Some(_) => None,
                None => {
                    let names: Vec<&str> = arguments
                        .iter()
                        .filter(|a| !a.name.is_empty() && !a.rule.is_display_only())
                        .map(|a| a.name.as_str())
                        .collect();
                    // Names are matched exactly (they become environment variables, where
                    // case matters), so `{{ Container }}` for `container` is the usual slip.
                    if let Some(meant) = names.iter().find(|n| n.eq_ignore_ascii_case(name)) {
                        return Some(format!(
                            "{p} names no argument; did you mean {{{{ {meant} }}}}? (argument \
                             names are case-sensitive)"
                        ));
                    }
                    Some(if names.is_empty() {
                        format!("{p} names no argument: declare it under `arguments:`")
                    } else {
                        format!(
                            "{p} names no argument: declare it under `arguments:` (declared: {})",
                            names.join(", ")
                        )
                    })
                }
            }
        }
        Placeholder::Entity(_) if entity.is_none() => Some(format!(
            "{p} names an entity field, but the action has no `entity:`"
        )),
        Placeholder::Entity(_) => None,
    }
}

/// A password substituted into the command line is readable by every local user (`ps`,
/// /proc/<pid>/cmdline) while the command runs. A warning, not an error: the value still
/// arrives intact, a single-user board may have nobody to hide it from, and configs ported
/// from OliveTin do this; the environment variable keeps it out of argv.
fn secret_in_argv(p: &Placeholder, arguments: &[Argument], shell: bool) -> Option<String> {
    let Placeholder::Argument(name) = p else {
        return None;
    };
    let a = arguments.iter().find(|a| a.name == *name)?;
    if !a.rule.is_secret() {
        return None;
    }
    let var = name.to_ascii_uppercase();
    let fix = if shell {
        format!("write \"${var}\" instead (actiond sets it in the command's environment)")
    } else {
        format!("have the program read the environment variable {var} instead")
    };
    Some(format!(
        "{p} puts a password on the command line, where any local user can read it with \
         `ps` while the command runs: {fix}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::fixtures::*;

    #[test]
    fn placeholders_must_name_a_value_argument_in_a_safe_context() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "actions:\n  - {title: x, shell: 'echo {{ nope }}'}\n",
                "actions[0].shell",
                "names no argument",
            ),
            (
                "actions:\n  - {title: x, shell: 'echo {{ a }} {{ nope }}', arguments: [{name: a}]}\n",
                "actions[0].shell",
                "(declared: a)",
            ),
            (
                "actions:\n  - {title: x, shell: 'docker restart {{ Container }}', arguments: [{name: container}]}\n",
                "actions[0].shell",
                "{{ Container }} names no argument; did you mean {{ container }}? (argument names are case-sensitive)",
            ),
            (
                "actions:\n  - {title: x, exec: [echo, '{{ nope }}']}\n",
                "actions[0].exec[1]",
                "names no argument",
            ),
            (
                "actions:\n  - {title: x, shell: 'echo {{ ok }}', arguments: [{name: ok, type: confirmation}]}\n",
                "actions[0].shell",
                "confirmation argument",
            ),
            (
                "actions:\n  - {title: x, shell: 'echo {{ .CurrentEntity.name }}'}\n",
                "actions[0].shell",
                "no `entity:`",
            ),
            (
                "actions:\n  - {title: x, shell: 'echo $(echo {{ a }})', arguments: [{name: a}]}\n",
                "actions[0].shell",
                "inside $( )",
            ),
            (
                "actions:\n  - {title: x, shell: 'docker ps --format {{.Names}}'}\n",
                "actions[0].shell",
                "script file",
            ),
        ];
        for (text, path, needle) in cases {
            assert_error(text, path, needle);
        }
        let (config, _) = ok(
            "actions:\n  - {title: x, entity: server, shell: 'ping {{ server.host }} {{ n }}', \
                               arguments: [{name: n, type: int}]}\n",
        );
        let holes = config.actions[0].template.placeholders();
        assert_eq!(holes.len(), 2);
    }

    #[test]
    fn exec_is_preferred_over_shell() {
        let text = "actions:\n  - title: Both\n    shell: echo a\n    exec: [echo, 5, '{{ x }}']\n    arguments: [{name: x}]\n";
        assert_warning(text, "actions[0].shell", "exec is used");
        assert_eq!(
            ok(text).0.actions[0].command,
            CommandSpec::Exec(vec!["echo".into(), "5".into(), "{{ x }}".into()])
        );
    }

    #[test]
    fn a_file_trigger_lets_the_command_name_the_file() {
        let (c, _) = ok(
            "actions:\n  - {title: x, shell: 'mv -- {{ filepath }} /done/{{ filename }}', execOnFileCreatedInDir: /in}\n",
        );
        assert_eq!(c.actions[0].arguments.len(), 5);
        // Without a file trigger the same placeholders name nothing.
        let problems = errors("actions:\n  - {title: x, shell: 'cat {{ filepath }}'}\n");
        assert!(
            problems[0].message.contains("names no argument"),
            "{problems:?}"
        );
    }
}
