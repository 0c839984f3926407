//! The verdict on what the shell model noted (`reread`): given which values can only be
//! integers and which variables hold an argument's value, it refuses a command where a value
//! may reach a place that bash reads again as code, arithmetic or a name, and one where a
//! variable is left as text for another shell that does not have it. Pure: the caller
//! (`config::command`, the differential shell test) says what the values are; this module
//! reads neither arguments nor configs.

use std::collections::{BTreeMap, BTreeSet};

use super::Placeholder;
use super::reread::{Analysis, DATA_VARIABLES, Read, Reread};

/// What the caller knows of the values a command may receive.
#[derive(Debug, Clone, Default)]
pub struct Values {
    /// Arguments whose every value is an integer (`type: int`): no place reads code in one.
    pub int: BTreeSet<String>,
    /// Variables that hold an argument's value (`ACTIOND_ARG_HOST`, and `HOST` where the
    /// command reads the bare name), each with the argument's name and whether it is the
    /// bare name, which is a shell variable of the command's own, never exported.
    pub variables: BTreeMap<String, (String, bool)>,
    /// Whether any value that is no integer reaches the command at all (an argument, an
    /// entity placeholder). Without one, nothing the command computes holds outside data.
    pub any: bool,
}

impl Values {
    fn int_only(&self, p: &Placeholder) -> bool {
        matches!(p, Placeholder::Argument(n) if self.int.contains(n))
    }
}

/// Refuses the command when a value may be read again, with where, why and the fix. `text`
/// is the command, for what follows the point where the model stopped following it.
pub fn judge(text: &str, analysis: &Analysis, values: &Values) -> Result<(), String> {
    for r in &analysis.rereads {
        for read in &r.reads {
            if let Some(why) = unsafe_read(analysis, values, read) {
                return Err(refusal(r, &why));
            }
        }
    }
    for name in &analysis.unexpanded {
        if let Some((argument, true)) = values.variables.get(name) {
            return Err(format!(
                "${name} stands where this shell leaves it as text (inside '…', or in a script \
                 another shell runs), and that shell has argument {argument:?} only as \
                 $ACTIOND_ARG_{name}: write \"$ACTIOND_ARG_{name}\" there (never the bare name, \
                 which is no environment variable)"
            ));
        }
    }
    if let Some(lost) = &analysis.lost {
        let after = text.get(lost.at..).unwrap_or("");
        let read = values
            .variables
            .iter()
            .find(|(v, (a, _))| !values.int.contains(a) && names_word(after, v));
        if let Some((variable, _)) = read {
            return Err(format!(
                "${variable} is read after {} (line {}), where actiond cannot tell how the \
                 shell will read it (it could be arithmetic, which runs code in a value): \
                 rewrite that part, or use `exec:`",
                lost.why, lost.line
            ));
        }
    }
    Ok(())
}

/// Why one read is unsafe, if it is.
fn unsafe_read(analysis: &Analysis, values: &Values, read: &Read) -> Option<String> {
    match read {
        Read::Hole(p) if values.int_only(p) => None,
        Read::Hole(p) => Some(format!("{p} reaches it")),
        Read::Variable(v) => match values.variables.get(v) {
            Some((a, _)) if values.int.contains(a) => None,
            Some((a, _)) => Some(format!(
                "${v} holds argument {a:?}, which is not `type: int`, and reaches it"
            )),
            None if !values.any => None,
            None if DATA_VARIABLES.contains(&v.as_str()) || analysis.may_hold_data(v) => Some(
                format!("${v} may hold a value the command received, and reaches it"),
            ),
            None => None,
        },
        Read::Unknown(what) => values
            .any
            .then(|| format!("{what} may hold a value the command received, and reaches it")),
    }
}

fn refusal(r: &Reread, why: &str) -> String {
    format!(
        "{why}: {} (line {}), which {}: {}",
        r.place,
        r.line,
        r.rereading.does(),
        r.rereading.hint()
    )
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

#[cfg(test)]
mod tests {
    use super::super::{read_exec, read_shell};
    use super::*;

    /// One argument `a`, of `type: int` or text, read as `{{ a }}`, `$ACTIOND_ARG_A` or `$A`.
    fn values(int: bool) -> Values {
        let mut v = Values {
            any: !int,
            ..Values::default()
        };
        if int {
            v.int.insert("a".into());
        }
        v.variables
            .insert("ACTIOND_ARG_A".into(), ("a".into(), false));
        v.variables.insert("A".into(), ("a".into(), true));
        v
    }

    fn verdict(text: &str, int: bool) -> Result<(), String> {
        let (_, analysis) = read_shell(text).map_err(|e| e.message)?;
        judge(text, &analysis, &values(int))
    }

    /// Each row: a command, whether it is refused with a text argument (and the reason's
    /// words), and whether with an `int` one (an integer is safe where a value is read again,
    /// but a placeholder stays refused where the lexer refuses every value).
    #[test]
    fn a_value_read_again_is_refused_unless_it_is_an_integer() {
        let table: &[(&str, Option<&str>, bool)] = &[
            // bash expands the target of `>&` a second time.
            ("p >& \"$ACTIOND_ARG_A\"", Some("target of `>&`"), false),
            ("p 1>&$A", Some("target of `>&`"), false),
            ("p >&{{ a }}", Some("target of `>&`"), true),
            ("p >&2; p {{ a }}", None, false),
            // `[[ ]]` with shell operators inside: dash and ash read them as the shell's.
            ("[[ x == y || z ]]; p {{ a }}", Some("inside `[[ ]]`"), true),
            ("[[ {{ a }} == x && y ]]", Some("inside `[[ ]]`"), true),
            ("[[ x < y ]]; p $(( A ))", Some("is read after"), false),
            ("[[ {{ a }} == x ]] || p {{ a }}", None, false),
            // dash reads `cmd &> f w` as `cmd &` and `> f w`.
            ("p &> /dev/null {{ a }}", Some("`&>`"), true),
            ("p {{ a }} &>/dev/null", None, false),
            // `for NAME do` without `in`: the body is commands like any other.
            ("for x do eval {{ a }}; done", Some("`eval`"), true),
            (
                "set -- {{ a }}; for x do let y=$x; done",
                Some("`let`"),
                false,
            ),
            // bash evaluates a variable's value in arithmetic again.
            ("echo $(( ACTIOND_ARG_A + 1 ))", Some("$(( ))"), false),
            ("echo $(( A * 60 ))", Some("$(( ))"), false),
            ("echo $(( $A ))", Some("$(( ))"), false),
            ("(( A > 1 )) && p", Some("(( ))"), false),
            ("let x=A", Some("`let`"), false),
            ("x[A]=1", Some("subscript"), false),
            ("[[ $A -eq 1 ]]", Some("arithmetic comparison"), false),
            ("echo ${x:A}", Some("arithmetic"), false),
            ("m={{ a }}; echo $(( m ))", Some("$(( ))"), false),
            ("q() { p $(( $1 )); }; q {{ a }}", Some("$(( ))"), false),
            ("[ \"$A\" -gt 3 ] && p", None, false),
            ("echo $(( 1 + 2 )) {{ a }}", None, false),
            // A bare name left as text for another shell, which has no such variable.
            ("echo '$A'", Some("as text"), true),
            ("sh -c 'echo $A'", Some("as text"), true),
            ("sh -c 'echo \"$ACTIOND_ARG_A\"'", None, false),
            ("sh -c 'echo $(( ACTIOND_ARG_A ))'", Some("$(( ))"), false),
            // Prefixes that hide the command: bash's `time` options, `command`, `builtin`.
            ("time -p eval p {{ a }}", Some("`eval`"), true),
            ("time -- let x={{ a }}", Some("`let`"), true),
            ("time -p -- eval {{ a }}", Some("`eval`"), true),
            ("command -p eval {{ a }}", Some("`eval`"), true),
            ("builtin let x=$A", Some("`let`"), false),
            // A value in the environment of a program, which may read it as code.
            ("BASH_ENV={{ a }} bash -c :", Some("`BASH_ENV`"), false),
            (
                "GIT_SSH_COMMAND=\"$ACTIOND_ARG_A\" git fetch",
                Some("environment"),
                false,
            ),
            ("export ENV={{ a }}; sh -i", Some("`ENV`"), false),
            ("declare -x ENV=$A", Some("`ENV`"), false),
            (
                "env -u X TAR_OPTIONS={{ a }} tar x",
                Some("`TAR_OPTIONS`"),
                false,
            ),
            ("/usr/bin/env -i LANG=C x={{ a }} cmd", Some("`x`"), false),
            ("x={{ a }}; p \"$x\"", None, false),
            ("y={{ a }}; env p {{ a }} \"$y\"", None, false),
            // Scripts handed to another shell.
            ("sh -c \"echo {{ a }}\"", Some("sh -c"), false),
            ("bash -c 'echo {{ a }}'", Some("sh -c"), false),
            ("nohup env bash -ec \"p {{ a }}\"", Some("sh -c"), false),
            ("compgen -W {{ a }} x", Some("compgen"), true),
            ("eval \"p {{ a }}\"", Some("eval"), true),
            ("sh -c 'p \"$1\"' sh {{ a }}", None, false),
            ("sh -c 'eval \"$1\"' sh {{ a }}", Some("positional"), false),
        ];
        let mut wrong = Vec::new();
        for &(text, why, int_refused) in table {
            let text_verdict = verdict(text, false);
            let ok = match (why, &text_verdict) {
                (None, Ok(())) => true,
                (Some(w), Err(e)) => e.contains(w),
                _ => false,
            };
            if !ok {
                wrong.push(format!("{text:?} as text: {text_verdict:?}"));
            }
            let int_verdict = verdict(text, true);
            if int_verdict.is_err() != int_refused {
                wrong.push(format!("{text:?} as int: {int_verdict:?}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn an_exec_argv_that_starts_a_shell_has_its_script_read() {
        let table: &[(&[&str], bool)] = &[
            (&["sh", "-c", "echo {{ a }}"], true),
            (&["/usr/bin/env", "bash", "-c", "x {{ a }}"], true),
            (&["sh", "-c", "echo $(( ACTIOND_ARG_A ))"], true),
            (&["sh", "-c", "echo \"$1\"", "sh", "{{ a }}"], false),
            (&["echo", "{{ a }}"], false),
        ];
        for &(argv, refused) in table {
            let argv: Vec<String> = argv.iter().map(|s| (*s).to_string()).collect();
            let got = judge("", &read_exec(&argv), &values(false));
            assert_eq!(got.is_err(), refused, "{argv:?}: {got:?}");
        }
    }
}
