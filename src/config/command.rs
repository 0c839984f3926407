//! An action's command: `shell:` (a command line for `sh -c`) or `exec:` (an argv list), and
//! its compilation for substitution at load. Every `{{ }}` placeholder is located and its
//! quoting context checked by `template`; this module reports, at the path of the text that
//! holds it, a placeholder in an unsafe context, one naming no argument, and one naming an
//! argument that has no value (confirmation, html).

use super::checker::{Checker, Fields, path_or};
use super::tree::{Node, index_path};
use crate::arguments::ArgType;
use crate::arguments::{Argument, environment};
use crate::template::{
    Placeholder, Template, Unquoted, Values, judge, read_exec, read_shell, unquoted,
};

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

    /// The placeholders whose value may start an argument of the program (see
    /// [`Template::leading`]): where a value that starts with `-` is an option.
    pub fn leading(&self) -> Vec<&Placeholder> {
        match self {
            CommandTemplate::Shell(t) => t.leading().collect(),
            CommandTemplate::Exec(v) => v.iter().flat_map(Template::leading).collect(),
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
    let mut analyses = Vec::new();
    for (at, text, shell) in texts {
        let result = if shell {
            read_shell(text).map(|(t, analysis)| {
                analyses.push((at.clone(), text, analysis));
                t
            })
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
    let variables = environment_names(c, command, f, path, arguments);
    if let CommandSpec::Exec(argv) = command {
        let at = path_or(f.get("exec"), path).to_string();
        analyses.push((at, "", read_exec(argv)));
    }
    let values = values(arguments, &compiled);
    let entities = compiled.iter().any(has_entity);
    for (at, text, analysis) in &analyses {
        if let Err(why) = judge(text, analysis, &values) {
            c.error(at, why.to_string());
        }
        for found in unquoted(analysis, &values) {
            split_variable(c, at, &found, arguments, entities);
        }
    }
    match command {
        CommandSpec::Shell(_) => {
            let template = compiled.pop().unwrap_or_else(Template::empty);
            CommandTemplate::Shell(template.after(&environment::shell_prelude(&variables)))
        }
        CommandSpec::Exec(_) => CommandTemplate::Exec(compiled),
    }
}

/// A variable that may hold an argument's value, expanded outside quotes (`rm cache/$NAME`,
/// or `x=$NAME; rm $x`): the shell splits the value at spaces into arguments of their own
/// (`old -r victim` gives `rm` a `-r`) and expands glob characters in it. Refused where the
/// value may split: an argument whose values may hold whitespace, a variable actiond cannot
/// follow while any value may, and any value at all once the command sets IFS (`IFS=.` splits
/// `x.-r.victim`). A warning otherwise (no value of the type splits today, but the quotes
/// cost nothing and keep it so if the type changes). The fix is the same either way.
fn split_variable(
    c: &mut Checker<'_>,
    at: &str,
    found: &Unquoted,
    arguments: &[Argument],
    entities: bool,
) {
    let v = &found.variable;
    let line = found.line;
    let of = |name: &String| arguments.iter().find(|a| a.name == *name);
    let names: Vec<String> = found.arguments.iter().map(|n| format!("{n:?}")).collect();
    let names = names.join(", ");
    let holds = match &found.unknown {
        Some(why) => {
            format!("may hold a value the command received ({why}), which actiond does not follow")
        }
        None if found.copied => format!("holds the value of argument {names} (copied into it)"),
        None => format!("holds argument {names}'s value"),
    };
    let fix = format!(
        "${v} on line {line} stands outside quotes and {holds}: the shell splits it into words \
         and expands glob characters in it; write \"${v}\""
    );
    let blank = found.arguments.iter().filter_map(of).any(may_split);
    // What actiond does not follow may hold any value the command received.
    let any_blank = entities
        || arguments
            .iter()
            .filter(|a| !a.name.is_empty() && !a.rule.is_display_only())
            .any(may_split);
    if found.ifs {
        c.error(
            at,
            format!(
                "{fix} (the command sets IFS, so any character of a value may split it, \
                 whatever its type)"
            ),
        );
    } else if blank || (found.unknown.is_some() && any_blank) {
        c.error(
            at,
            format!(
                "{fix} (its values may hold spaces, each of which would start an argument of its \
                 own, or glob characters, which become the names of the files they match)"
            ),
        );
    } else {
        c.warn(at, fix);
    }
}

/// Whether a value of the argument may split when it stands unquoted: it may hold a space,
/// tab or newline (the shell's IFS), or a glob character (`*`, `?`, `[`), which the shell
/// expands into the names of the files it matches, as many words as there are files.
fn may_split(a: &Argument) -> bool {
    let splits = |v: &str| v.contains([' ', '\t', '\n', '*', '?', '[']);
    match &a.rule {
        // Choices win over the type (a checkbox's or checklist's choices are its values).
        _ if !a.choices.is_empty() => a.choices.iter().any(|c| splits(&c.value)),
        ArgType::Untyped
        | ArgType::Ascii
        | ArgType::AsciiIdentifier
        | ArgType::UnicodeIdentifier
        | ArgType::Int
        | ArgType::Datetime
        | ArgType::Checkbox
        | ArgType::ChoiceOnly
        | ArgType::Confirmation
        | ArgType::Html => false,
        // A pattern may allow them; actiond does not decide what a pattern matches. An
        // address may hold `*` (`a*b@example.com`), a URL `*`, `?` and `[` (`http://[::1]/?q`).
        ArgType::Regex(_)
        | ArgType::Email
        | ArgType::Url
        | ArgType::AsciiSentence
        | ArgType::Checklist
        | ArgType::Password
        | ArgType::RawStringMultiline
        | ArgType::VeryDangerousRawString => true,
    }
}

/// What the shell model's verdict (`template::judge`) needs to know of the values: which
/// arguments hold integers only, and which variables hold an argument's value.
fn values(arguments: &[Argument], compiled: &[Template]) -> Values {
    let mut values = Values::default();
    let integer = |v: &str| v.parse::<i64>().is_ok();
    for a in arguments {
        if a.name.is_empty() || a.rule.is_display_only() {
            continue;
        }
        // Choices win over the type, so an `int` with choices is int-only when they are.
        if a.rule == ArgType::Int && a.choices.iter().all(|c| integer(&c.value)) {
            values.int.insert(a.name.clone());
        } else {
            values.any = true;
        }
        // The author's own choices (not an entity file's, nor a checklist's combinations
        // of them) may name the program a command runs.
        if !a.choices.is_empty()
            && a.entity.is_none()
            && !a.from_trigger
            && a.rule != ArgType::Checklist
        {
            values.chosen.insert(a.name.clone());
        }
        if let Some(v) = environment::prefixed(&a.name) {
            values.variables.insert(v, (a.name.clone(), false));
        }
        if let Ok(v) = environment::shell_variable(&a.name) {
            values.variables.insert(v, (a.name.clone(), true));
        }
    }
    values.any |= compiled.iter().any(has_entity);
    values
}

fn has_entity(t: &Template) -> bool {
    t.placeholders()
        .any(|(p, _)| matches!(p, Placeholder::Entity(_)))
}

/// How the arguments' values reach a command besides `{{ }}` (`arguments::environment`): the
/// environment holds `ACTIOND_ARG_<NAME>` only, and a `shell:` command that names an
/// argument's upper-cased name as a word (`$NAME`, `${#NAME}`, `$(( NAME + 1 ))`, as commands
/// written for OliveTin do) gets it as a shell variable of its own, never exported. Returns
/// those names. Reading a name that cannot be one (the shell's own, such as `$PATH`), or any
/// bare name in an `exec:` command, whose program's own shell would read the environment, is
/// an error with the fix; an argument the command does not name at all gets a warning saying
/// where its value is, since a script the command runs may read it.
fn environment_names(
    c: &mut Checker<'_>,
    command: &CommandSpec,
    f: &Fields<'_>,
    path: &str,
    arguments: &[Argument],
) -> Vec<String> {
    let (texts, shell): (Vec<&str>, bool) = match command {
        CommandSpec::Shell(text) => (vec![text.as_str()], true),
        CommandSpec::Exec(argv) => (argv.iter().map(String::as_str).collect(), false),
    };
    let at = match command {
        CommandSpec::Shell(_) => path_or(f.get("shell"), path),
        CommandSpec::Exec(_) => path_or(f.get("exec"), path),
    };
    let mut defined = Vec::new();
    for a in arguments {
        if a.name.is_empty() || a.rule.is_display_only() {
            continue;
        }
        let name = &a.name;
        let upper = name.to_ascii_uppercase();
        let prefixed = environment::prefixed(name);
        let instead = match &prefixed {
            Some(var) => format!("\"${var}\" or {{{{ {name} }}}}"),
            None => format!("{{{{ {name} }}}}"),
        };
        let reads = texts.iter().any(|t| reads_variable(t, &upper));
        let variable = environment::shell_variable(name);
        match (&variable, shell) {
            (Ok(v), true) if texts.iter().any(|t| names_word(t, v)) => {
                defined.push(v.clone());
                continue;
            }
            (Err(why), true) if reads => {
                c.error(
                    at,
                    format!(
                        "the command reads ${upper}, which argument {name:?} cannot set because \
                         {}: write {instead} instead",
                        why.why()
                    ),
                );
                continue;
            }
            (_, false) if reads => {
                c.error(
                    at,
                    format!(
                        "the command reads ${upper}, but an `exec:` command's environment holds \
                         argument {name:?} only as {instead}: no program is given a variable it \
                         could read as its settings"
                    ),
                );
                continue;
            }
            _ => {}
        }
        let named = texts.iter().any(|t| {
            names_placeholder(t, name) || prefixed.as_ref().is_some_and(|p| names_word(t, p))
        });
        if !named && !a.from_trigger {
            let reaches = match &prefixed {
                Some(var) => format!("reaches the command as ${var}, not as ${upper}"),
                None => format!("reaches the command only through {{{{ {name} }}}}"),
            };
            c.warn(
                at,
                format!(
                    "argument {name:?} {reaches}: a script that reads ${upper} must read that \
                     instead (no argument sets a variable a program could read as its settings)"
                ),
            );
        }
    }
    defined
}

/// Whether `word` stands in `text` as a whole word (not inside a longer name).
fn names_word(text: &str, word: &str) -> bool {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    text.match_indices(word).any(|(i, _)| {
        let before = i > 0 && ident(b[i - 1]);
        let after = b.get(i + word.len()).is_some_and(|&c| ident(c));
        !before && !after
    })
}

/// Whether `text` holds `$NAME`, `${NAME…`, `${#NAME}` or `${!NAME}` for exactly this name (the shell's names are
/// case-sensitive, and `$NAMES` is another variable).
fn reads_variable(text: &str, upper: &str) -> bool {
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(i) = text[from..].find('$').map(|i| from + i) {
        from = i + 1;
        let start = match (b.get(i + 1), b.get(i + 2)) {
            (Some(b'{'), Some(b'#' | b'!')) => i + 3,
            (Some(b'{'), _) => i + 2,
            _ => i + 1,
        };
        if text[start..].starts_with(upper) {
            let after = b.get(start + upper.len());
            if !after.is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_') {
                return true;
            }
        }
    }
    false
}

/// Whether `text` has a `{{ name }}` (or `{{ .Arguments.name }}`) placeholder of this name.
fn names_placeholder(text: &str, name: &str) -> bool {
    Template::literal(text).is_ok_and(|t| {
        t.placeholders()
            .any(|(p, _)| matches!(p, Placeholder::Argument(n) if n == name))
    })
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
    fn a_bare_name_a_command_reads_is_a_shell_variable_of_its_own_never_exported() {
        let render = |text: &str| {
            let (c, _) = ok(text);
            match &c.actions[0].template {
                CommandTemplate::Shell(t) => t.render(&|_| Some("v".into())),
                CommandTemplate::Exec(_) => unreachable!(),
            }
        };
        assert_eq!(
            render(
                "actions:\n  - {title: x, shell: 'zgrep -i \"$GREP\" log.gz', arguments: [{name: grep}]}\n"
            ),
            "unset GREP; GREP=$ACTIOND_ARG_GREP; zgrep -i \"$GREP\" log.gz"
        );
        assert_eq!(
            render(
                "actions:\n  - {title: x, shell: 'echo ${#TAR_OPTIONS} $(( COUNT + 1 ))', arguments: [{name: tar_options}, {name: count, type: int}, {name: other}]}\n"
            ),
            "unset TAR_OPTIONS COUNT; TAR_OPTIONS=$ACTIOND_ARG_TAR_OPTIONS COUNT=$ACTIOND_ARG_COUNT; echo ${#TAR_OPTIONS} $(( COUNT + 1 ))"
        );
        // A placeholder alone, or a longer name, defines nothing.
        assert_eq!(
            render(
                "actions:\n  - {title: x, shell: 'echo {{ pin }} $PINS', arguments: [{name: pin}]}\n"
            ),
            "echo 'v' $PINS"
        );
    }

    #[test]
    fn an_unquoted_variable_of_an_argument_is_refused_where_its_value_may_split() {
        let action = |shell: &str, arg: &str| {
            format!("actions:\n  - {{title: x, shell: '{shell}', arguments: [{arg}]}}\n")
        };
        let refused = "write \"$NAME\" (its values may hold spaces";
        for (shell, arg, needle) in [
            (
                "rm -f cache/$NAME",
                "{name: name, type: ascii_sentence}",
                refused,
            ),
            (
                "rm -f ${NAME}",
                "{name: name, type: very_dangerous_raw_string}",
                refused,
            ),
            (
                "rm -f $NAME",
                "{name: name, type: \"regex:[a-z ]+\"}",
                refused,
            ),
            (
                "rm -f $NAME",
                "{name: name, choices: [{value: a b}]}",
                refused,
            ),
            // Glob characters: `*@example.com` becomes every file of that shape.
            ("rm -f $NAME", "{name: name, type: email}", refused),
            ("curl $NAME", "{name: name, type: url}", refused),
            (
                "rm -f $NAME",
                "{name: name, choices: [{value: \"*\"}]}",
                refused,
            ),
            (
                "rm -f $ACTIOND_ARG_NAME",
                "{name: name, type: password}",
                "write \"$ACTIOND_ARG_NAME\"",
            ),
        ] {
            assert_error(&action(shell, arg), "actions[0].shell", needle);
        }
        // A copy of the value is split like the value (`old -r victim` gives rm `-r` in
        // dash, bash and busybox ash alike: tests/shells, `copies`).
        let sentence = "{name: name, type: ascii_sentence}";
        let copied = "(copied into it)";
        let unknown = "which actiond does not follow";
        let spaces = "(its values may hold spaces";
        for (shell, needles) in [
            ("x=$NAME; rm $x", [copied, "write \"$x\"", spaces]),
            ("x={{ name }}; rm $x", [copied, "line 1", spaces]),
            ("x=\"$NAME\"; rm $x", [copied, "\"name\"", spaces]),
            (
                "f() { local x=\"$NAME\"; rm $x; }; f",
                [copied, "$x", spaces],
            ),
            ("set -- \"$NAME\"; rm $1", ["$1", "write \"$1\"", spaces]),
            ("set -- {{ name }}; rm $@", [copied, "write \"$@\"", spaces]),
            ("for x in \"$NAME\"; do rm $x; done", [copied, "$x", spaces]),
            ("x=${NAME%.txt}; rm $x", [copied, "$x", spaces]),
            ("x=${y:-$NAME}; rm $x", [copied, "$x", spaces]),
            ("y=$ACTIOND_ARG_NAME; x=$y; rm $x", [copied, "$x", spaces]),
            (
                "read x <<E\n\n$NAME\n\nE\n\nrm $x",
                ["what `read` reads", unknown, spaces],
            ),
            (
                "echo \"$NAME\" | { read x; rm $x; }",
                ["`read`", unknown, spaces],
            ),
            (
                "x=$(echo \"$NAME\"); rm $x",
                ["the output of `$( )`", unknown, spaces],
            ),
            (
                "f() { rm $1; }; f \"$NAME\"",
                ["a function is called with", unknown, spaces],
            ),
            (
                "x=NAME; rm ${!x}",
                ["named by the value of $x", unknown, spaces],
            ),
            ("rm \"$NAME\" $REPLY", ["$REPLY", unknown, spaces]),
            // An inner shell's positional parameters are the words after its script.
            (
                "sh -c ''rm -f cache/$1'' sh {{ name }}",
                ["$1", "write \"$1\"", spaces],
            ),
            (
                "bash -c ''for f; do rm $f; done'' sh \"$NAME\"",
                [copied, "$f", spaces],
            ),
            (
                "sh -c ''rm $@'' sh x \"$ACTIOND_ARG_NAME\"",
                ["$@", "write \"$@\"", spaces],
            ),
        ] {
            for needle in needles {
                assert_error(&action(shell, sentence), "actions[0].shell", needle);
            }
        }
        // The command sets IFS: any value may split, whatever its type.
        let ifs = "(the command sets IFS, so any character of a value may split it";
        for (shell, arg) in [
            ("IFS=.; rm $NAME", "{name: name, type: ascii_identifier}"),
            (
                "export IFS=.; rm $NAME",
                "{name: name, type: ascii_identifier}",
            ),
            (
                "f() { local IFS=.; rm $NAME; }; f",
                "{name: name, type: email}",
            ),
            ("IFS=1; sleep $N", "{name: n, type: int}"),
            (
                "IFS=.; x=$NAME; rm $x",
                "{name: name, type: ascii_identifier}",
            ),
            (
                "read IFS <<E\n\n.\n\nE\n\nrm $NAME",
                "{name: name, type: ascii_identifier}",
            ),
        ] {
            assert_error(&action(shell, arg), "actions[0].shell", ifs);
        }
        // No value of these holds a space: a warning with the same fix.
        for (shell, arg) in [
            ("rm -f cache/$NAME", "{name: name, type: ascii_identifier}"),
            ("rm -f $NAME", "{name: name, type: datetime}"),
            (
                "rm -f $NAME",
                "{name: name, type: ascii_sentence, choices: [{value: a}]}",
            ),
        ] {
            assert_warning(
                &action(shell, arg),
                "actions[0].shell",
                "stands outside quotes and holds argument \"name\"'s value: the shell splits it",
            );
        }
        // Ordinary commands that quote their variables load with no warning at all.
        for shell in [
            "rm -f \"cache/$NAME\"",
            "x=$NAME; rm -f \"$x\"",
            "rm -f {{ name }} $NAMES",
            "x=\"$NAME\"; rm -- \"$x\"",
            "x={{ name }}; cp \"$x\" \"/tmp/$x.bak\"",
            "set -- \"$NAME\"; rm -- \"$1\" \"$@\"",
            "for x in \"$NAME\"; do rm -- \"$x\"; done",
            "f() { rm -- \"$1\"; }; f \"$NAME\"",
            "read -r x <<E\n\n$NAME\n\nE\n\nrm -- \"$x\"",
            "echo \"$NAME\" | while read -r l; do echo \"$l\"; done",
            "d=/var/tmp; n=3; rm -f $d/x$n \"$NAME\"",
            "for f in a b; do echo $f \"$NAME\"; done",
            "x=$((1 + 2)); echo $x \"$NAME\"",
            "IFS=.; set -- $(date +%F); echo \"$NAME\"",
            "now=$(date +%s); echo \"$now\" \"$NAME\"",
            "sh -c ''rm -f -- \"cache/$1\"'' sh {{ name }}",
            "sh -c ''echo $1'' sh literal; echo \"$NAME\"",
        ] {
            let (_, warnings) = ok(&action(shell, "{name: name, type: ascii_sentence}"));
            assert!(warnings.is_empty(), "{shell}: {warnings:?}");
        }
    }

    #[test]
    fn an_inner_shells_positional_parameter_given_a_value_is_refused_unquoted_in_exec() {
        let action = |argv: &str| {
            format!(
                "actions:\n  - {{title: x, exec: [{argv}], \
                 arguments: [{{name: name, type: ascii_sentence}}]}}\n"
            )
        };
        assert_error(
            &action("sh, -c, 'rm -f cache/$1', sh, '{{ name }}'"),
            "actions[0].exec",
            "write \"$1\"",
        );
        let (_, warnings) = ok(&action("sh, -c, 'rm -f -- \"cache/$1\"', sh, '{{ name }}'"));
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn a_command_that_reads_a_name_no_argument_can_set_is_refused() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "actions:\n  - {title: x, shell: 'ls \"$PATH\"', arguments: [{name: path}]}\n",
                "actions[0].shell",
                "the command reads $PATH, which argument \"path\" cannot set because the shell reads that variable itself",
            ),
            (
                "actions:\n  - {title: x, shell: 'echo ${IFS}', arguments: [{name: ifs}]}\n",
                "actions[0].shell",
                "write \"$ACTIOND_ARG_IFS\" or {{ ifs }} instead",
            ),
            (
                "actions:\n  - {title: x, exec: [sh, -c, 'echo \"$HOST\"'], arguments: [{name: host}]}\n",
                "actions[0].exec",
                "an `exec:` command's environment holds argument \"host\" only as \"$ACTIOND_ARG_HOST\"",
            ),
        ];
        for (text, path, needle) in cases {
            assert_error(text, path, needle);
        }
        for text in [
            "actions:\n  - {title: x, shell: 'echo \"$ACTIOND_ARG_PATH\" {{ path }}', arguments: [{name: path}]}\n",
            "actions:\n  - {title: x, exec: [sh, -c, 'echo \"$ACTIOND_ARG_HOST\"'], arguments: [{name: host}]}\n",
        ] {
            ok(text);
        }
    }

    #[test]
    fn a_value_bash_reads_again_must_be_an_int() {
        let a = |shell: &str, ty: &str| {
            format!("actions:\n  - {{title: x, shell: '{shell}', arguments: [{{name: n{ty}}}]}}\n")
        };
        let int = ", type: int";
        for shell in [
            "echo $(( N * 60 ))",
            "sleep $(( ACTIOND_ARG_N ))",
            "[[ $N -gt 3 ]] && echo big",
        ] {
            assert_error(&a(shell, ""), "actions[0].shell", "type: int");
            ok(&a(shell, int));
        }
        // Choices win over the type: an int whose choices are no integers is no int.
        assert_error(
            "actions:\n  - {title: x, shell: 'echo $(( N ))', arguments: [{name: n, type: int, choices: [{value: '1'}, {value: 'a[1]'}]}]}\n",
            "actions[0].shell",
            "type: int",
        );
        // A script handed to another shell, in `shell:` or in `exec:`.
        assert_error(
            &a("sh -c \"echo {{ n }}\"", ""),
            "actions[0].shell",
            "the script of `sh -c`",
        );
        assert_error(
            "actions:\n  - {title: x, exec: [bash, -c, 'echo {{ n }}'], arguments: [{name: n}]}\n",
            "actions[0].exec",
            "the script of `sh -c`",
        );
        ok(
            "actions:\n  - {title: x, exec: [bash, -c, 'echo \"$1\"', sh, '{{ n }}'], arguments: [{name: n}]}\n",
        );
        // A bare name inside single quotes reaches no other shell.
        assert_error(
            &a("sh -c ''echo $N''", ""),
            "actions[0].shell",
            "write \"$ACTIOND_ARG_N\" there",
        );
    }

    #[test]
    fn a_value_may_name_the_program_only_when_it_is_one_of_the_authors_choices() {
        let action = |command: &str, arg: &str| {
            format!("actions:\n  - {{title: x, {command}, arguments: [{arg}]}}\n")
        };
        let free = "{name: tool, type: ascii_identifier}";
        let chosen = "{name: tool, choices: [{value: df}, {value: free}]}";
        for (command, path) in [
            ("shell: '{{ tool }} -h'", "actions[0].shell"),
            ("shell: 'command \"$TOOL\" -h'", "actions[0].shell"),
            (
                "shell: 'nohup timeout 5 \"$ACTIOND_ARG_TOOL\"'",
                "actions[0].shell",
            ),
            ("exec: ['{{ tool }}', -h]", "actions[0].exec"),
            ("exec: [env, '{{ tool }}']", "actions[0].exec"),
        ] {
            assert_error(
                &action(command, free),
                path,
                "reaches it: the program the command runs (its name)",
            );
            ok(&action(command, chosen));
        }
        // A checklist's value is a combination of its choices, an entity's its file's.
        assert_error(
            &action(
                "shell: '{{ tool }} -h'",
                "{name: tool, type: checklist, choices: [{value: df}]}",
            ),
            "actions[0].shell",
            "the program the command runs",
        );
    }

    #[test]
    fn a_value_reaching_a_shells_standard_input_or_xargs_is_refused() {
        let action = |shell: &str| {
            format!(
                "actions:\n  - {{title: x, shell: '{shell}', \
                 arguments: [{{name: name, type: ascii_identifier}}]}}\n"
            )
        };
        for (shell, needle) in [
            (
                "echo {{ name }} | sh",
                "the script a shell reads from its standard input",
            ),
            (
                "printf \"%s\\n\" \"$NAME\" | xargs rm -f",
                "splits into arguments at blanks and quotes",
            ),
            ("flock /run/l -c \"rm {{ name }}\"", "`flock -c`"),
            ("sg root \"rm -- $NAME\"", "the command of `sg`"),
            ("echo \"${NAME@P}\"", "prompt expansion"),
            ("m=ACTIOND_ARG_NAME; echo $(( m ))", "$m names a variable"),
        ] {
            assert_error(&action(shell), "actions[0].shell", needle);
        }
        for shell in [
            "sh -s -- \"$NAME\" <<''EOF''\n\nrm -f -- \"$1\"\n\nEOF",
            "printf \"%s\\0\" \"$NAME\" | xargs -0 rm -f --",
            "flock /run/l rm -f -- {{ name }}",
        ] {
            ok(&action(shell));
        }
    }

    #[test]
    fn an_argument_the_command_does_not_name_is_pointed_at_its_variable() {
        assert_warning(
            "actions:\n  - {title: x, shell: /opt/backup.sh, arguments: [{name: backup_target}]}\n",
            "actions[0].shell",
            "argument \"backup_target\" reaches the command as $ACTIOND_ARG_BACKUP_TARGET, not as $BACKUP_TARGET",
        );
        let (_, warnings) = ok(
            "actions:\n  - {title: x, shell: '/opt/backup.sh {{ backup_target }}', arguments: [{name: backup_target}]}\n",
        );
        assert!(
            !warnings
                .iter()
                .any(|w| w.message.contains("reaches the command")),
            "{warnings:?}"
        );
    }

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
