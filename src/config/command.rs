//! An action's command: `shell:` (a command line for `sh -c`) or `exec:` (an argv list), and
//! its compilation for substitution at load. Every `{{ }}` placeholder is located and its
//! quoting context checked by `template`; this module reports, at the path of the text that
//! holds it, a placeholder in an unsafe context, one naming no argument, and one naming an
//! argument that has no value (confirmation, html).

use super::checker::{Checker, Fields, path_or};
use super::tree::{Node, index_path};
use crate::arguments::ArgType;
use crate::arguments::Dash;
use crate::arguments::{Argument, environment};
use crate::template::reread::{Analysis, Read};
use crate::template::{
    Leads, Placeholder, Stored, Template, Unquoted, Values, climbs, copied, judge, leads, reached,
    read_exec_in, read_shell_in, stripped, unquoted,
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

    /// The entity fields that reach a directory code is taken from (`cd DIR`, `make -C DIR`):
    /// where a value holding `..` picks other code.
    /// Each with whether it may start the directory's path (`cd {{ … }}`).
    pub fn directories(&self) -> Vec<&(Placeholder, bool)> {
        match self {
            CommandTemplate::Shell(t) => t.directories().iter().collect(),
            CommandTemplate::Exec(v) => v.iter().flat_map(Template::directories).collect(),
        }
    }

    /// The first placeholder whose value (`value_of`) leads out of the path it stands in
    /// (`template::leads`), or out of a directory code is taken from (`directories`): the
    /// one rule for arguments at a press and for entity fields when an instance is bound.
    pub fn leading_out(
        &self,
        value_of: impl Fn(&Placeholder) -> Option<String>,
    ) -> Option<(Placeholder, String, Leads)> {
        let templates: Vec<&Template> = match self {
            CommandTemplate::Shell(t) => vec![t],
            CommandTemplate::Exec(v) => v.iter().collect(),
        };
        for t in &templates {
            for (p, component, start) in t.components() {
                let Some(value) = value_of(p) else { continue };
                if let Some(why) = leads(&value, component, start) {
                    return Some((p.clone(), value, why));
                }
            }
        }
        self.directories().into_iter().find_map(|(p, starts)| {
            let value = value_of(p)?;
            let why = if climbs(&value) {
                Leads::Up
            } else if *starts && value.starts_with('/') {
                Leads::Absolute
            } else {
                return None;
            };
            Some((p.clone(), value, why))
        })
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
    working_directory: Option<&std::path::Path>,
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
            // A relative name the command writes lands in its `workingDirectory`.
            let start = working_directory.map(|d| d.as_os_str().as_encoded_bytes());
            read_shell_in(text, start).map(|(t, analysis)| {
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
        let start = working_directory.map(|d| d.as_os_str().as_encoded_bytes());
        analyses.push((at, "", read_exec_in(argv, start)));
    }
    let mut values = values(arguments, &compiled);
    // `allowUnknownProgram: true` on the action: its entity fields may be arguments of a
    // program the model does not know (the author says it runs none of them).
    values.entity_no_program = matches!(f.get("allowUnknownProgram"), Some((Node::Bool(true), _)))
        || matches!(f.get("allowUnknownProgram"), Some((Node::Str(s), _)) if s.trim() == "true");
    let entities = compiled.iter().any(has_entity);
    // `allowLeadingDash: true` lets an entity field be an option (read again, for its value
    // only, by the action's own reader).
    let dash_allowed = match f.get("allowLeadingDash") {
        Some((Node::Bool(b), _)) => *b,
        Some((Node::Str(s), _)) => s.trim() == "true",
        _ => false,
    };
    for (at, text, analysis) in &analyses {
        if let Some((line, form)) = analysis.bash_only {
            c.warn(at, bash_only(form, line));
        }
        if let Err(why) = judge(text, analysis, &values) {
            c.error(at, why.to_string());
        }
        data_uses(c, at, analysis, values.entity_no_program);
        options::regex_options(c, at, analysis, arguments, &values);
        // A word refused as split is not refused again for what it may start with.
        let mut refused = Vec::new();
        for found in unquoted(analysis, &values) {
            if split_variable(c, at, &found, arguments, entities) {
                refused.push((found.variable.clone(), found.line));
            }
        }
        for found in stripped(analysis, &values) {
            if !refused.contains(&(found.variable.clone(), found.line)) {
                stripped_dash(c, at, &found, arguments, entities && !dash_allowed);
            }
        }
    }
    // A value copied into a variable that starts an argument starts it (`du "$dir"`): the
    // leading-dash rule of entity fields holds for the copy.
    for (_, _, analysis) in &analyses {
        let copies = copied(analysis);
        for t in &mut compiled {
            t.lead_copies(&copies);
        }
    }
    for (at, _, analysis) in &analyses {
        for found in reached(analysis, &values) {
            for p in &found.placeholders {
                match p {
                    // An entity field is weighed per instance (`engine::setup`).
                    Placeholder::Entity(_) => {
                        for t in &mut compiled {
                            t.mark_directory(p, found.starts);
                        }
                    }
                    Placeholder::Argument(name) => {
                        // Each value is weighed at the press too (`leading_out`): two
                        // values that hold no `/` make `../..` between the author's `/`s.
                        for t in &mut compiled {
                            t.mark_directory(p, found.starts);
                        }
                        let argument = arguments.iter().find(|a| a.name == *name);
                        if argument.is_some_and(may_climb) {
                            c.error(at, climbing(p, found.place, found.line));
                        }
                    }
                }
            }
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
/// Whether it refused the command.
fn split_variable(
    c: &mut Checker<'_>,
    at: &str,
    found: &Unquoted,
    arguments: &[Argument],
    entities: bool,
) -> bool {
    let v = &found.variable;
    let line = found.line;
    let of = |name: &String| arguments.iter().find(|a| a.name == *name);
    let names: Vec<String> = found.arguments.iter().map(|n| format!("{n:?}")).collect();
    let names = names.join(", ");
    let holds = match &found.unknown {
        Some(why) if found.output => {
            format!("may hold a value the command received ({why})")
        }
        Some(why) => {
            format!("may hold a value the command received ({why}), which actiond does not follow")
        }
        None if found.copied => format!("holds the value of argument {names} (copied into it)"),
        None => format!("holds argument {names}'s value"),
    };
    let fix = if found.output {
        format!(
            "{v} on line {line} stands outside quotes and {holds}: the shell splits it into \
             words and expands glob characters in it; put it in double quotes (\"$(…)\", after \
             `--` where it starts an argument), or assign it first and quote the variable"
        )
    } else {
        format!(
            "${v} on line {line} stands outside quotes and {holds}: the shell splits it into \
             words and expands glob characters in it; write \"${v}\""
        )
    };
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
        return false;
    }
    true
}

/// An expansion that removes a prefix of a value or replaces text in it at the start of an
/// argument (`rm "${NAME#*.}"`): the `ascii_identifier` value `backup.-rf` gives `rm` the
/// option `-rf` although no value may start with `-`. Refused for an argument whose values
/// may not start with `-` but may hold one further on (free text without `allowLeadingDash`,
/// and `datetime`: `${D#*-}`), unless they are choices, which are the author's own; and for
/// what actiond does not follow when any argument is one.
fn stripped_dash(
    c: &mut Checker<'_>,
    at: &str,
    found: &Unquoted,
    arguments: &[Argument],
    entities: bool,
) {
    let guarded = |a: &&Argument| {
        !a.name.is_empty()
            && !a.rule.is_display_only()
            && (a.rule.is_free_text() || a.rule == ArgType::Datetime)
            && a.choices.is_empty()
            && a.dash == Dash::Refuse
    };
    let of = |name: &String| arguments.iter().find(|a| a.name == *name);
    let argument = found.arguments.iter().filter_map(of).find(guarded);
    let any = arguments.iter().find(guarded);
    let Some(a) = argument.or(any.filter(|_| found.unknown.is_some())) else {
        // An entity field may hold `-` anywhere (a file's `x--files0-from=…` is
        // `--files0-from=…` after `${d#x}`), and no type keeps it out.
        if entities && found.unknown.is_some() {
            c.error(
                at,
                format!(
                    "${{{v}…}} on line {line} removes the start of a value or replaces text in \
                     it, and starts an argument; it may hold an entity field, which may hold \
                     `-` anywhere, so it may start with `-`, and the program reads it as an \
                     option; write `./` or `--` before it (`du -sh -- \"${{{v}#x}}\"`), or set \
                     `allowLeadingDash: true` on the action where an option is fine",
                    v = found.variable,
                    line = found.line,
                ),
            );
        }
        return;
    };
    if let Some(stored) = found.stored {
        let (how, example) = match stored {
            Stored::Printed => (
                "what a command printed",
                "`y=$(printf %s \"$NAME\" | tr _ -)` of `_rf` is `-rf`",
            ),
            Stored::Part => (
                "a part of a value",
                "`h=${NAME#*.}` of `x.-oProxyCommand=…` is `-oProxyCommand=…`",
            ),
            Stored::Read => (
                "what `read` read after the command wrote a value where it may read it",
                "`read` drops leading blanks, so ` -rf` is `-rf`, and a command on the way may \
                 change it: `tr _ -` of `_rf`",
            ),
        };
        c.error(
            at,
            format!(
                "${v} holds {how}, and starts an argument: if that holds argument {name:?}'s \
                 value changed on the way ({example}), it may start with `-` although the value \
                 may not, and the program reads it as an option; write `./` or `--` before it \
                 (`rm -- \"${v}\"`), or set `allowLeadingDash: true` on the argument where an \
                 option is fine",
                v = found.variable,
                name = a.name,
            ),
        );
        return;
    }
    if found.output {
        c.error(
            at,
            format!(
                "{what} on line {line} reads a value and starts an argument: what its command \
                 prints may start with `-` although argument {name:?}'s value may not \
                 (`\"$(printf %s \"$NAME\" | tr _ -)\"` of `_rf` is `-rf`), and the program \
                 reads it as an option; write `./` or `--` before it (`rm -- \"$(…)\"`), or set \
                 `allowLeadingDash: true` on the argument where an option is fine",
                what = found.variable,
                line = found.line,
                name = a.name,
            ),
        );
        return;
    }
    let v = if found.variable == "@" {
        "1"
    } else {
        found.variable.as_str()
    };
    c.error(
        at,
        format!(
            "${{{v}…}} on line {line} removes the start of a value or replaces text in it, and \
             starts an argument: it may start with `-` although argument {name:?}'s value may \
             not (`${{{v}#*.}}` of `backup.-rf` is `-rf`), and the program reads it as an \
             option; write `./` or `--` before it (`rm -- \"${{{v}#*.}}\"`), or set \
             `allowLeadingDash: true` on the argument where an option is fine",
            line = found.line,
            name = a.name,
        ),
    );
}

/// A `shell:` runs as `/bin/sh -c`, which is dash on Debian and Raspberry Pi OS: a form only
/// bash reads fails there at every press (busybox ash 1.35 refuses `<<<` too, not `<( )`).
/// A warning, not an error, since `/bin/sh` is bash on some systems, where the command runs.
fn bash_only(form: &str, line: usize) -> String {
    format!(
        "{form} on line {line} is bash's: `shell:` runs with /bin/sh, which is dash on Debian \
         and Raspberry Pi OS, where it is a syntax error at every press; write it for sh \
         (`printf '%s\\n' \"$ACTIOND_ARG_NAME\" | cmd` for `cmd <<< …`, a temporary file for \
         `<( )`), or run bash yourself (`exec: [bash, -c, …]`)"
    )
}

/// Why a value in a directory code is taken from is refused at load.
fn climbing(p: &Placeholder, place: &str, line: usize) -> String {
    format!(
        "{p} reaches {place} (line {line}), and its values may hold `/` and `..`, which lead out \
         of the directory you meant (`../../tmp/x`), so a value picks the code that runs: give \
         the argument a type that holds no `/` (`ascii_identifier`) or `choices:`, or check the \
         value in the command (`case \"$ACTIOND_ARG_NAME\" in *..*) exit 1 ;; esac`)"
    )
}

/// Whether a value of the argument may hold a `..` path component and a `/`: free text
/// whose type allows `/` (a pattern, an address, a URL, a password, raw strings), or a
/// choice that holds one.
fn may_climb(a: &Argument) -> bool {
    match &a.rule {
        _ if !a.choices.is_empty() => a.choices.iter().any(|c| climbs(&c.value)),
        ArgType::Regex(_)
        | ArgType::Email
        | ArgType::Url
        | ArgType::Password
        | ArgType::RawStringMultiline
        | ArgType::VeryDangerousRawString => true,
        _ => false,
    }
}

/// Whether a value of the argument may start with `@` or `<`, which curl reads as a file to
/// send (`-d @/etc/shadow`, `-F name=<file`).
fn may_name_file(a: &Argument) -> bool {
    match a.rule {
        _ if !a.choices.is_empty() => false,
        ArgType::Untyped
        | ArgType::Ascii
        | ArgType::AsciiIdentifier
        | ArgType::AsciiSentence
        | ArgType::UnicodeIdentifier
        | ArgType::Int
        | ArgType::Datetime
        | ArgType::Email
        | ArgType::Url
        | ArgType::Checkbox => false,
        _ => true,
    }
}

/// Whether a value of the argument may hold `,`, `;` or `"`, which curl reads in the file
/// name of a form field (`-F name=@a,b` sends two files, `;type=` sets a header).
fn may_hold_list(a: &Argument) -> bool {
    match a.rule {
        _ if !a.choices.is_empty() => false,
        ArgType::Untyped
        | ArgType::Ascii
        | ArgType::AsciiIdentifier
        | ArgType::UnicodeIdentifier
        | ArgType::Int
        | ArgType::Datetime
        | ArgType::Email
        | ArgType::Checkbox => false,
        _ => true,
    }
}

/// Whether a value of the argument may hold `/`, and so pick a directory below the one a
/// written file's name fixes (`Rereading::Below`). A file trigger's `filename` and
/// `fileext` are a name's, which holds none.
fn may_hold_slash(a: &Argument) -> bool {
    match a.rule {
        _ if !a.choices.is_empty() => false,
        _ if a.from_trigger && matches!(a.name.as_str(), "filename" | "fileext") => false,
        ArgType::Untyped
        | ArgType::Ascii
        | ArgType::AsciiIdentifier
        | ArgType::AsciiSentence
        | ArgType::UnicodeIdentifier
        | ArgType::Int
        | ArgType::Datetime
        | ArgType::Checkbox => false,
        _ => true,
    }
}

/// Whatever the action's own values, a file named as data taken for more than data
/// (`Analysis::runs_data`): any action, or an earlier press, may write a value into it.
fn data_uses(c: &mut Checker<'_>, at: &str, analysis: &Analysis, unknown_allowed: bool) {
    let mut words = analysis.data_words.clone();
    // `h=$(cat hosts.txt); ping -c1 $h`: a copy of it outside quotes, or starting an argument.
    for (variable, &line) in &analysis.unquoted {
        if let Some(name) = analysis.stored(&Read::Variable(variable.clone())) {
            words.push((name, line, crate::template::DATA_SPLIT));
        }
    }
    for (variable, line) in &analysis.leading {
        if let Some(name) = analysis.stored(&Read::Variable(variable.clone())) {
            words.push((name, *line, crate::template::DATA_OPTION));
        }
    }
    words.sort();
    words.dedup();
    for (name, line, does) in words {
        c.error(
            at,
            format!(
                "line {line}: what `{name}`, a file named as data, holds (any action, or an \
                 earlier press, may write a value into it) {does}"
            ),
        );
    }
    // The reader side turned round: only a program known to read it as data may be given
    // one, unless the author says the action's programs do (`allowUnknownProgram`).
    for (name, line, program) in analysis.unknown_readers.iter().filter(|_| !unknown_allowed) {
        let program = program.as_deref().map_or_else(
            || "a program an expansion names".to_string(),
            |p| format!("`{}`", String::from_utf8_lossy(p)),
        );
        c.error(
            at,
            format!(
                "line {line} gives `{}`, a file named as data, to {program}, which actiond does \
                 not know to read such a file as data only (a program may run it or load it as \
                 settings: `python3 -m pickle F`, `sysctl -p F`, `openvpn --config F`, `pip \
                 install F`); any action (or an earlier press) may write a value into a file \
                 with that ending. Give it to a program known to read data (`cat`, `jq`, `lp`, \
                 `aplay`, `mpv`, `tar -c`, …; docs/arguments.md lists them), name a file of \
                 your program's own without a data ending, or, if {program} reads it as data \
                 only, set `allowUnknownProgram: true` on the action",
                String::from_utf8_lossy(name)
            ),
        );
    }
    for (name, line, does) in &analysis.runs_data {
        // A copy keeps its data only under a data name.
        let fix = if does.ends_with("the files of the tree, such as") {
            "copy data files by their own names (`cp /srv/notes/a.txt /srv/archive/`) into a \
             directory of your own below the home directory (`/srv/archive/`, \
             `/home/pi/inbox/`); for one file you built, `install` or `cp` without `-r` (which \
             copy no directory)"
        } else if does.starts_with("renames") {
            "rename each file with `mv` to a name known to hold data (`mv /srv/notes/a.txt \
             /srv/notes/a-old.txt`)"
        } else if does.starts_with("runs (`run-parts") {
            "keep the scripts `run-parts` runs in a directory of their own, where no action \
             writes (`/etc/actiond/parts`)"
        } else if does.starts_with("copies") {
            "copy it under a name known to hold data (`notes.txt` to `notes-old.txt`, not \
             `notes.bak`)"
        } else {
            "name a script you wrote by its own ending (`.sh`), and read data files as data \
             (`cat`, `grep`, `jq`, `while read`)"
        };
        c.error(
            at,
            format!(
                "line {line} {does} `{}`, a file named as data: any action (or an earlier \
                 press) may write a value into a file with that ending, which is then more \
                 than data here; {fix}",
                String::from_utf8_lossy(name)
            ),
        );
    }
}

/// Whether a program actiond does not know may read a value of the argument as more than data.
/// Such a program may run an argument as a program (a wrapper: `chrt`, `runuser`, a script of
/// the system's), or read it as code of its own (`make URL=…` pastes it into a recipe, `mail`
/// pipes to a `|cmd` recipient, a templating tool evaluates `{{ }}`), or as the name of a file
/// it reads or runs. A list of such readers is never complete, so the rule goes the other way:
/// only a value that is data in every language is safe there: `int` (digits), `datetime`
/// (`2024-05-01T10:00`), a `checkbox` without choices (`0`, `1`, `true`, `false`), and
/// `choices:` (the author's own words, `Values::chosen`). Every text type can be more, `url`
/// and `email` too (`$(…)`, `|`, `/`), and so can a `regex:`, whose pattern actiond does not read
/// for what it may match. The author's `allowUnknownProgram` says the program takes it as data.
fn may_be_more_than_data(a: &Argument) -> bool {
    match a.rule {
        ArgType::Int | ArgType::Datetime => false,
        ArgType::Checkbox => !a.choices.is_empty(),
        _ => true,
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
        if a.unknown_program || !may_be_more_than_data(a) {
            values.no_program.insert(a.name.clone());
        }
        if !may_name_file(a) {
            values.no_file.insert(a.name.clone());
        }
        if !may_hold_list(a) {
            values.no_list.insert(a.name.clone());
        }
        if !may_hold_slash(a) {
            values.no_slash.insert(a.name.clone());
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

mod options;
#[cfg(test)]
mod tests;
