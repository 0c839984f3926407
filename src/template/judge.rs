//! The verdict on what the shell model noted (`reread`): given which values can only be
//! integers and which variables hold an argument's value, it refuses a command where a value
//! may reach a place that bash reads again as code, arithmetic or a name, and one where a
//! variable is left as text for another shell that does not have it; and it lists the
//! variables and command substitutions left unquoted that may hold a value (`unquoted`),
//! following a value through the variables it is copied into, and the expansions that may
//! make an option of a value (`stripped`), for the caller to weigh against the argument's
//! type. Pure: the caller
//! (`config::command`, the differential shell test) says what the values are; this module
//! reads neither arguments nor configs.

use std::collections::{BTreeMap, BTreeSet};

use super::Placeholder;
use super::reread::{
    Analysis, DATA_VARIABLES, POSITIONAL, Read, Reread, Rereading, SCRIPT_NAME, is_positional,
};

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
    /// Arguments whose every value is one of the author's `choices:`: the author's own
    /// words, which may name the program to run.
    pub chosen: BTreeSet<String>,
}

impl Values {
    /// Whether a read of argument `a` is safe where it is read as `how`.
    fn safe(&self, a: &str, how: Rereading) -> bool {
        self.int.contains(a) || (how == Rereading::Program && self.chosen.contains(a))
    }
}

/// Why a command is refused: where a value may be read again, or where a variable is left
/// to a shell that does not have it, with the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A value reaches a place the shell reads again (`place` on `line`, read as `rereading`
    /// says).
    Reread {
        how: Reaches,
        place: String,
        line: usize,
        rereading: Rereading,
    },
    /// The bare variable `name`, of argument `argument`, stands where the shell leaves it as
    /// text for another shell.
    Unexpanded { name: String, argument: String },
    /// The variable is read after the point where the model stopped following the command
    /// (`why` it stopped, on `line`).
    AfterLost {
        variable: String,
        why: String,
        line: usize,
    },
}

/// How a value reaches a place that is read again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reaches {
    /// A placeholder stands there.
    Placeholder(Placeholder),
    /// A variable holding an argument that is not `type: int`.
    Variable { name: String, argument: String },
    /// A variable that may hold a value the command received.
    MayHold(String),
    /// Something the model cannot name (its description) that may hold one.
    Unknown(String),
    /// A variable whose text names another in arithmetic (`m=n; $(( m ))`), and how that
    /// one reaches it.
    Names { name: String, how: Box<Reaches> },
}

impl std::fmt::Display for Reaches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reaches::Placeholder(p) => write!(f, "{p} reaches it"),
            Reaches::Variable { name, argument } => write!(
                f,
                "${name} holds argument {argument:?}, which is not `type: int`, and reaches it"
            ),
            Reaches::MayHold(v) => {
                write!(
                    f,
                    "${v} may hold a value the command received, and reaches it"
                )
            }
            Reaches::Unknown(what) => {
                write!(
                    f,
                    "{what} may hold a value the command received, and reaches it"
                )
            }
            Reaches::Names { name, how } => write!(
                f,
                "${name} names a variable that bash's arithmetic evaluates in its place: {how}"
            ),
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Reread {
                how,
                place,
                line,
                rereading,
            } => write!(
                f,
                "{how}: {place} (line {line}), which {}: {}",
                rereading.does(),
                rereading.hint()
            ),
            Refusal::Unexpanded { name, argument } => write!(
                f,
                "${name} stands where this shell leaves it as text (inside '…', or in a script \
                 another shell runs), and that shell has argument {argument:?} only as \
                 $ACTIOND_ARG_{name}: write \"$ACTIOND_ARG_{name}\" there (never the bare name, \
                 which is no environment variable)"
            ),
            Refusal::AfterLost {
                variable,
                why,
                line,
            } => write!(
                f,
                "${variable} is read after {why} (line {line}), where actiond cannot tell how \
                 the shell will read it (it could be arithmetic, which runs code in a value): \
                 rewrite that part, or use `exec:`"
            ),
        }
    }
}

impl std::error::Error for Refusal {}

/// Refuses the command when a value may be read again, with where, why and the fix. `text`
/// is the command, for what follows the point where the model stopped following it.
pub fn judge(text: &str, analysis: &Analysis, values: &Values) -> Result<(), Refusal> {
    for r in &analysis.rereads {
        for read in &r.reads {
            let how = match r.rereading {
                Rereading::Arithmetic => {
                    arithmetic_read(analysis, values, read, &mut BTreeSet::new())
                }
                how => unsafe_read(analysis, values, read, how),
            };
            if let Some(how) = how {
                return Err(refusal(r, how));
            }
        }
    }
    for name in &analysis.unexpanded {
        if let Some((argument, true)) = values.variables.get(name) {
            return Err(Refusal::Unexpanded {
                name: name.clone(),
                argument: argument.clone(),
            });
        }
    }
    if let Some(lost) = &analysis.lost {
        // The shells join a line continuation inside a name (`$\⏎x`).
        let after = text.get(lost.at..).unwrap_or("").replace("\\\n", "");
        let after = after.as_str();
        let read = values
            .variables
            .iter()
            .find(|(v, (a, _))| !values.int.contains(a) && names_word(after, v))
            .map(|(v, _)| v);
        // A variable the value was copied into, read where the model no longer follows.
        let copy = || {
            analysis.sources.keys().find(|v| {
                *v != POSITIONAL && names_word(after, v) && may_hold_value(analysis, values, v)
            })
        };
        if let Some(variable) = read.or_else(copy) {
            return Err(Refusal::AfterLost {
                variable: variable.clone(),
                why: lost.why.clone(),
                line: lost.line,
            });
        }
    }
    Ok(())
}

/// How one read in arithmetic is unsafe, if it is: as anywhere, or through the names a
/// variable's plain text holds (`m=n`: bash evaluates `m` as `n`, and then `n`'s value).
fn arithmetic_read(
    analysis: &Analysis,
    values: &Values,
    read: &Read,
    seen: &mut BTreeSet<String>,
) -> Option<Reaches> {
    if let Some(how) = unsafe_read(analysis, values, read, Rereading::Arithmetic) {
        return Some(how);
    }
    let Read::Variable(v) = read else { return None };
    if !seen.insert(v.clone()) {
        return None;
    }
    for n in analysis.named.get(v).into_iter().flatten() {
        let inner = Read::Variable(n.clone());
        if let Some(how) = arithmetic_read(analysis, values, &inner, seen) {
            return Some(Reaches::Names {
                name: v.clone(),
                how: Box::new(how),
            });
        }
    }
    None
}

/// How one read is unsafe where it is read as `how`, if it is.
fn unsafe_read(
    analysis: &Analysis,
    values: &Values,
    read: &Read,
    how: Rereading,
) -> Option<Reaches> {
    match read {
        Read::Hole(Placeholder::Argument(a)) if values.safe(a, how) => None,
        Read::Hole(p) => Some(Reaches::Placeholder(p.clone())),
        Read::Variable(v) => match values.variables.get(v) {
            Some((a, _)) if values.safe(a, how) => None,
            Some((a, _)) => Some(Reaches::Variable {
                name: v.clone(),
                argument: a.clone(),
            }),
            None if !values.any => None,
            None if DATA_VARIABLES.contains(&v.as_str()) || analysis.may_hold_data(v) => {
                Some(Reaches::MayHold(v.clone()))
            }
            None => None,
        },
        Read::Unknown(what) | Read::Computed(what) => {
            values.any.then(|| Reaches::Unknown(what.to_string()))
        }
    }
}

fn refusal(r: &Reread, how: Reaches) -> Refusal {
    Refusal::Reread {
        how,
        place: r.place.clone(),
        line: r.line,
        rereading: r.rereading,
    }
}

/// A variable expanded outside quotes that may hold a value the command received: the
/// shell splits it at IFS and expands glob characters in it. Whether that is refused depends
/// on what the values may hold, which the caller knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unquoted {
    /// As written after `$`: `NAME`, `x`, `1`, `@`, `!x`.
    pub variable: String,
    pub line: usize,
    /// The arguments whose value it may hold.
    pub arguments: BTreeSet<String>,
    /// It is no argument's own variable: the value was copied into it (`x=$NAME; rm $x`).
    pub copied: bool,
    /// It may hold a value in a way actiond does not follow (`read x`, `$(…)`), described.
    pub unknown: Option<String>,
    /// The command sets IFS, so any character of a value may split it.
    pub ifs: bool,
    /// It is no variable but a command substitution (`variable` says which) whose command
    /// reads something that may hold a value: its output is split.
    pub output: bool,
}

/// The unquoted variables that may hold a value the command received: an argument's own
/// variable, one the command assigned from anything holding a value (followed through
/// every assignment, `set --`, `for`, `local`, `export`), or one it filled in a way actiond
/// does not follow (`read`, `$( )`, `${!x}`, a function's arguments).
pub fn unquoted(analysis: &Analysis, values: &Values) -> Vec<Unquoted> {
    let received = values.any || !values.int.is_empty();
    let mut out = Vec::new();
    for (variable, &line) in &analysis.unquoted {
        let mut found = Unquoted {
            variable: variable.clone(),
            line,
            arguments: BTreeSet::new(),
            copied: !values.variables.contains_key(variable),
            unknown: None,
            ifs: analysis.ifs,
            output: false,
        };
        let mut seen = BTreeSet::new();
        holds(analysis, values, variable, &mut seen, &mut found);
        if !received {
            found.unknown = None;
        }
        if !found.arguments.is_empty() || found.unknown.is_some() {
            out.push(found);
        }
    }
    // `rm $(printf %s "$NAME")`: the output carries what its command read.
    for output in &analysis.outputs {
        let mut found = Unquoted {
            variable: output.what.to_string(),
            line: output.line,
            arguments: BTreeSet::new(),
            copied: true,
            unknown: None,
            ifs: analysis.ifs,
            output: true,
        };
        follow(
            analysis,
            values,
            &output.reads,
            &mut BTreeSet::new(),
            &mut found,
        );
        let read = output.reads.iter().find_map(|r| match r {
            Read::Variable(v) if holds_any(analysis, values, v) => Some(v.as_str()),
            _ => None,
        });
        let Some(read) = read.filter(|_| received) else {
            continue;
        };
        found.unknown = Some(format!("it reads ${read}"));
        out.push(found);
    }
    out
}

/// The expansions that remove a prefix or replace text at the start of an argument
/// (`Analysis::stripped`), each with the arguments whose value its variable may hold (and
/// what else, in `unknown`): such a word may start with `-` although no value does.
pub fn stripped(analysis: &Analysis, values: &Values) -> Vec<Unquoted> {
    let mut out = Vec::new();
    for s in &analysis.stripped {
        let mut found = Unquoted {
            variable: s.variable.clone(),
            line: s.line,
            arguments: BTreeSet::new(),
            copied: !values.variables.contains_key(&s.variable),
            unknown: None,
            ifs: false,
            output: false,
        };
        holds(
            analysis,
            values,
            &s.variable,
            &mut BTreeSet::new(),
            &mut found,
        );
        if !values.any {
            found.unknown = None;
        }
        if !found.arguments.is_empty() || found.unknown.is_some() {
            out.push(found);
        }
    }
    out
}

/// Whether `variable` may hold a value the command received (an argument's, of any type).
fn holds_any(analysis: &Analysis, values: &Values, variable: &str) -> bool {
    let mut found = Unquoted {
        variable: variable.to_string(),
        line: 0,
        arguments: BTreeSet::new(),
        copied: true,
        unknown: None,
        ifs: false,
        output: false,
    };
    holds(analysis, values, variable, &mut BTreeSet::new(), &mut found);
    !found.arguments.is_empty() || found.unknown.is_some()
}

/// Whether `variable` may hold a value that is no integer.
fn may_hold_value(analysis: &Analysis, values: &Values, variable: &str) -> bool {
    if !values.any {
        return false;
    }
    let mut found = Unquoted {
        variable: variable.to_string(),
        line: 0,
        arguments: BTreeSet::new(),
        copied: true,
        unknown: None,
        ifs: false,
        output: false,
    };
    holds(analysis, values, variable, &mut BTreeSet::new(), &mut found);
    // A copy of `$(cat f)` may hold code read where the model no longer follows.
    analysis.may_hold_data(variable)
        || found.unknown.is_some()
        || found.arguments.iter().any(|a| !values.int.contains(a))
}

/// What `variable` may hold, into `found`, following its assignments.
fn holds(
    analysis: &Analysis,
    values: &Values,
    variable: &str,
    seen: &mut BTreeSet<String>,
    found: &mut Unquoted,
) {
    if let Some(name) = variable.strip_prefix('!') {
        found.unknown.get_or_insert_with(|| {
            format!("a variable named by the value of ${name} (`${{!{name}}}`)")
        });
        return;
    }
    let key = if is_positional(variable) {
        POSITIONAL
    } else {
        variable
    };
    let parameter = key == POSITIONAL || key == SCRIPT_NAME;
    if !seen.insert(key.to_string()) {
        return;
    }
    if let Some((argument, _)) = values.variables.get(key) {
        found.arguments.insert(argument.clone());
    }
    if DATA_VARIABLES.contains(&key) {
        found
            .unknown
            .get_or_insert_with(|| format!("${key}, which the shell fills with data"));
    }
    if analysis.written_unknown && !parameter && !values.variables.contains_key(key) {
        found.unknown.get_or_insert_with(|| {
            "a variable a builtin writes under a name actiond cannot read".to_string()
        });
    }
    let reads = analysis.sources.get(key).map_or(&[][..], Vec::as_slice);
    follow(analysis, values, reads, seen, found);
}

/// What `reads` may hold, into `found`.
fn follow(
    analysis: &Analysis,
    values: &Values,
    reads: &[Read],
    seen: &mut BTreeSet<String>,
    found: &mut Unquoted,
) {
    for read in reads {
        match read {
            Read::Hole(Placeholder::Argument(a)) => {
                found.arguments.insert(a.clone());
            }
            Read::Hole(p) => {
                found.unknown.get_or_insert_with(|| p.to_string());
            }
            Read::Variable(v) => holds(analysis, values, v, seen, found),
            Read::Unknown(what) => {
                found.unknown.get_or_insert_with(|| what.clone());
            }
            // Holds no value the command received.
            Read::Computed(_) => {}
        }
    }
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
        judge(text, &analysis, &values(int)).map_err(|why| why.to_string())
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
            // A copy of the value read after the point where the model stops.
            (
                "x={{ a }}; alias l=ls; rm $x",
                Some("$x is read after"),
                false,
            ),
            (
                "x=$A; shopt -s extglob; rm \"$x\"",
                Some("$x is read after"),
                false,
            ),
            (
                "x=$A; shopt -s extglob; rm \"$\\\nx\"",
                Some("$x is read after"),
                false,
            ),
            ("x=1; p \"$A\"; alias l=ls; rm $x", None, false),
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
            // Code reads even a command substitution that reads no variable: its command
            // may read a file or its input.
            ("eval \"$(date +%F)\"", Some("the output of `$( )`"), false),
            ("sh -c 'eval \"$0\"' {{ a }}", Some("`eval`"), false),
            // A shell that reads its script from its standard input (fe30g F6, F7): what
            // reaches it is code.
            ("echo {{ a }} | sh", Some("its standard input"), false),
            (
                "echo \"rm -- /x/$A\" | sh -x",
                Some("its standard input"),
                false,
            ),
            ("echo ls | sudo -u pi bash", Some("before `|`"), false),
            ("sh <<E\nrm $A\nE", Some("its standard input"), false),
            (
                "sh -s -- \"$A\" <<E\nrm \\$1\nE",
                Some("its standard input"),
                false,
            ),
            (". /dev/stdin <<E\n$A\nE", Some("standard input"), false),
            ("source /dev/stdin <<< \"$A\"", Some("$A holds"), false),
            ("bash <<< {{ a }}", Some("its standard input"), false),
            (
                "sh /dev/stdin <<E\n$A\nE",
                Some("its standard input"),
                false,
            ),
            (
                "bash /proc/self/fd/0 <<E\n$A\nE",
                Some("its standard input"),
                false,
            ),
            (
                "sh /dev/fd/3 3<<E\n$A\nE",
                Some("its standard input"),
                false,
            ),
            (
                "BASH_ENV=/dev/stdin bash -c : <<E\n$A\nE",
                Some("`BASH_ENV`"),
                false,
            ),
            ("bash <(echo \"$A\")", Some("`<( )`"), false),
            (". <(printf %s \"$A\")", Some("`<( )`"), false),
            ("{ sh; } <<E\n$A\nE", Some("outside the command"), false),
            ("echo \"$A\" | at now", Some("`at`"), false),
            ("sh <<'E'\nrm -- \"$ACTIOND_ARG_A\"\nE", None, false),
            ("sh -s -- \"$A\" <<'E'\nrm -- \"$1\"\nE", None, false),
            (
                "sh <<'E'\neval \"$ACTIOND_ARG_A\"\nE",
                Some("`eval`"),
                false,
            ),
            ("sh < /opt/job.sh; p \"$A\"", None, false),
            ("sh /opt/job.sh \"$A\"", None, false),
            ("sh -- \"$A\"", Some("script file"), false),
            ("sh \"$A\" x", Some("`sh -c`"), false),
            ("echo \"$A\" | grep -q sh", None, false),
            // Programs that hand an argument to `sh -c` (F8), in their own words.
            ("flock /run/l -c \"rm {{ a }}\"", Some("`flock -c`"), false),
            ("flock -w 5 /run/l -c 'p $(( A ))'", Some("$(( ))"), false),
            ("flock /run/l rm -- {{ a }}", None, false),
            ("script -qc \"p $A\" /dev/null", Some("`script -c`"), false),
            ("sg root \"p $A\"", Some("`sg`"), false),
            ("sg root -c 'p $(( ACTIOND_ARG_A ))'", Some("$(( ))"), false),
            ("watch -n 5 \"p $A\"", Some("`watch`"), false),
            ("watch -x p \"$A\"", None, false),
            ("ssh -i k pi@host \"p $A\"", Some("other host"), false),
            ("ssh pi@host p {{ a }}", Some("other host"), false),
            ("ssh pi@host uptime; p \"$A\"", None, false),
            ("trap 'p $(( ACTIOND_ARG_A ))' EXIT", Some("$(( ))"), false),
            ("trap 'rm -f -- \"$ACTIOND_ARG_A\"' EXIT", None, false),
            (
                "printf '%s\\n' \"$A\" | xargs -I{} sh -c 'p {}'",
                Some("paste"),
                false,
            ),
            ("find /srv -exec sh -c 'p {}' \\;", Some("paste"), false),
            (
                "find /srv -exec sh -c 'p \"$1\"' sh {} \\; ; p \"$A\"",
                None,
                false,
            ),
            // xargs splits what it reads into arguments (F9), unless items end in NUL.
            (
                "printf '%s\\n' \"$A\" | xargs rm -f",
                Some("`xargs`"),
                false,
            ),
            ("xargs rm -f <<E\n$A\nE", Some("`xargs`"), false),
            ("xargs rm -f <<< {{ a }}", Some("`xargs`"), false),
            ("printf '%s\\0' \"$A\" | xargs -0 rm -f --", None, false),
            ("find /srv -print0 | xargs -r0 rm -f; p \"$A\"", None, false),
            // bash's arithmetic follows a name to its value (F10).
            (
                "m=n; n=$A; echo $(( m ))",
                Some("$m names a variable"),
                false,
            ),
            ("m=ACTIOND_ARG_A; echo $(( m ))", Some("$m names"), false),
            ("m=ACTIOND_ARG_A; [[ m -gt 0 ]]", Some("$m names"), false),
            ("m=A; a[m]=1", Some("$m names"), false),
            ("m='n + 1'; n={{ a }}; let x=m", Some("$m names"), false),
            ("local m=n; n=$A; (( m ))", Some("$m names"), false),
            (
                "for m in n; do n=$A; echo $(( m )); done",
                Some("$m names"),
                false,
            ),
            (
                "bash -c 'm=n; n=$1; echo $(( m ))' sh \"$A\"",
                Some("$m names"),
                false,
            ),
            ("m=n; n=3; echo $(( m )) \"$A\"", None, false),
            ("m=m; echo $(( m )) \"$A\"", None, false),
            // bash's `${x@P}` runs `$( )` in the value (F11).
            ("echo \"${A@P}\"", Some("prompt expansion"), false),
            (
                "bash -c 'echo \"${1@P}\"' sh \"$A\"",
                Some("prompt expansion"),
                false,
            ),
            ("echo \"${A@Q}\" \"${A@E}\"", None, false),
            // A value as the program itself (F14).
            (
                "{{ a }} --version",
                Some("the program the command runs"),
                false,
            ),
            ("\"$A\" --version", Some("the program"), false),
            ("command \"$A\"", Some("the program"), false),
            ("env \"$A\"", Some("the program"), false),
            ("exec \"$ACTIOND_ARG_A\"", Some("the program"), false),
            (
                "nohup timeout -s KILL 5 {{ a }}",
                Some("the program"),
                false,
            ),
            ("sudo -u pi {{ a }} x", Some("the program"), false),
            ("x=$A; $x", Some("the program"), false),
            ("$CMD -v; env x=1 p \"$A\"", None, false),
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

    /// Each row: a command, and the unquoted variables that may hold argument `a`'s value
    /// (`A` or `ACTIOND_ARG_A`), each as `name`, `name copied`, `name ?` (followed nowhere
    /// actiond can see) and with ` IFS` when the command sets IFS. What the shells do with
    /// each is in tests/shells (`copies`).
    #[test]
    fn a_value_copied_into_a_variable_is_followed_there() {
        let table: &[(&str, &[&str])] = &[
            ("rm $A", &["A"]),
            ("x=$A; rm $x", &["x copied"]),
            ("x={{ a }}; rm $x", &["x copied"]),
            ("x=\"$ACTIOND_ARG_A\"; rm $x", &["x copied"]),
            ("x=${A%.txt}; y=${z:-$x}; rm $y", &["y copied"]),
            ("x=$A; x=$x$x; rm $x", &["x copied"]),
            ("f() { local x=\"$A\"; rm $x; }", &["x copied"]),
            ("export x=\"$A\"; rm $x", &["x copied"]),
            (
                "set -- \"$A\"; rm $1 $@ $*",
                &["* copied", "1 copied", "@ copied"],
            ),
            ("set -- \"$A\"; for x do rm $x; done", &["x copied"]),
            ("for x in \"$A\"; do rm $x; done", &["x copied"]),
            ("f() { rm $1; }; f \"$A\"", &["1 ?"]),
            ("read x <<E\n$A\nE\nrm $x", &["x ?"]),
            ("echo \"$A\" | { read -r x; rm $x; }", &["x ?"]),
            ("x=$(echo \"$A\"); rm $x", &["x ?"]),
            ("printf -v x %s \"$A\"; rm $x", &["x ?"]),
            ("x=A; rm ${!x}", &["!x ?"]),
            ("rm \"$A\" $REPLY $_", &["REPLY ?", "_ ?"]),
            ("IFS=.; rm $A", &["A IFS"]),
            // A script a shell reads from its standard input is read like `sh -c`'s.
            ("sh <<'E'\nrm $ACTIOND_ARG_A\nE", &["ACTIOND_ARG_A"]),
            ("sh -s -- \"$A\" <<'E'\nrm $1\nE", &["1 copied"]),
            ("sh /dev/stdin x \"$A\" <<'E'\nrm $2\nE", &["2 copied"]),
            ("bash <<< 'rm $ACTIOND_ARG_A'", &["ACTIOND_ARG_A"]),
            ("trap 'rm $ACTIOND_ARG_A' EXIT", &["ACTIOND_ARG_A"]),
            ("export IFS; x=$A; rm $x", &["x copied IFS"]),
            ("for IFS in .; do rm \"$A\" $1; done", &[]),
            // A literal, a number, arithmetic, or a quoted use: nothing.
            ("x=/tmp; n=3; rm $x/$n \"$A\"", &[]),
            ("for f in a b *.log; do rm $f \"$A\"; done", &[]),
            ("x=$((1 + 2)); rm $x \"$A\"", &[]),
            ("x=$A; set -- \"$x\"; rm \"$x\" \"$@\" \"$1\"", &[]),
            ("rm $IFSX \"$A\"", &[]),
            // An unquoted command substitution whose command reads a value: its output is
            // split (all four print <old><-r><victim>: tests/shells, `copies`). One that reads
            // none, and a copy of it, hold no value.
            ("rm $(printf %s \"$A\")", &["the output of `$( )` ?"]),
            (
                "rm `basename \"$A\"`",
                &["the output of a backtick command ?"],
            ),
            (
                "for f in $(echo \"$A\"); do rm \"$f\"; done",
                &["the output of `$( )` ?"],
            ),
            ("x=$A; rm $(basename \"$x\")", &["the output of `$( )` ?"]),
            ("cd \"$A\"; rm $(pwd)", &["the output of `$( )` ?"]),
            ("rm $(cat <<E\n$A\nE\n)", &["the output of `$( )` ?"]),
            ("y=$(echo \"$A\"); rm \"$(printf %s \"$A\")\" \"$y\"", &[]),
            ("rm x=$(echo \"$A\")", &["the output of `$( )` ?"]),
            (
                "d=$(date +%F); rm $d b-$(date +%F).tar `hostname` \"$A\"",
                &[],
            ),
            ("x=/tmp; rm $(basename $x) \"$A\"", &[]),
            // The value of `${x:-WORD}`, and what `${x:=WORD}` assigns.
            ("rm ${x:-$A}", &["A"]),
            ("rm ${x:+${ACTIOND_ARG_A}}", &["ACTIOND_ARG_A"]),
            (": \"${f:=$A}\"; rm $f", &["f copied"]),
            (": \"${f=$ACTIOND_ARG_A}\"; rm $f", &["f copied"]),
            ("x=y; : ${x:+${y:=$A}}; rm $y", &["A", "y copied"]),
            (": ${f:=/tmp}; rm $f \"$A\"", &[]),
            // A line continuation inside the name.
            ("rm $ACTIOND_ARG_\\\nA", &["ACTIOND_ARG_A"]),
            // An inner shell's `$0` is the word after its script.
            ("sh -c 'rm $0' \"$A\"", &["0 copied"]),
            ("sh -c 'rm $0 \"$1\"' sh \"$A\"; rm $0", &[]),
            // `read -s` and `mapfile -t` take no word: the name after them is written.
            ("read -rs x <<E\n$A\nE\nrm $x", &["x ?"]),
            ("read -r -s x; rm $x", &["x ?"]),
            ("read -rp '> ' x; rm $x", &["x ?"]),
            ("read -t5 x; rm $x", &["x ?"]),
            ("read -rt 5 x; rm $x", &["x ?"]),
            ("read -p x y; rm $x \"$A\"", &[]),
            ("mapfile -t a <<< \"$A\"; rm ${a[@]}", &["a ?"]),
            ("readarray -d '' -t a; rm ${a[0]}", &["a ?"]),
            ("mapfile -C f -c 1 a; rm $f \"$A\"", &[]),
            // bash's stack of directories.
            ("pushd \"/tmp/$A\"; rm ${DIRSTACK[0]}", &["DIRSTACK ?"]),
        ];
        let mut wrong = Vec::new();
        for &(text, want) in table {
            let (_, analysis) = read_shell(text).unwrap_or_else(|e| panic!("{text:?}: {e:?}"));
            let got: Vec<String> = unquoted(&analysis, &values(false))
                .into_iter()
                .map(|u| {
                    let mut s = u.variable.clone();
                    if u.unknown.is_some() {
                        s.push_str(" ?");
                    } else if u.copied {
                        s.push_str(" copied");
                    }
                    if u.ifs {
                        s.push_str(" IFS");
                    }
                    s
                })
                .collect();
            if got != want {
                wrong.push(format!("{text:?}: {got:?}"));
            }
        }
        // Without any value the command receives, what actiond cannot follow holds none.
        let (_, analysis) = read_shell("read x; rm $x").unwrap();
        assert!(unquoted(&analysis, &Values::default()).is_empty());
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
            // Programs that hand a word to `sh -c` (F8), and a value as the program (F14).
            (&["flock", "/run/l", "-c", "rm {{ a }}"], true),
            (&["flock", "/run/l", "-c", "rm $(( ACTIOND_ARG_A ))"], true),
            (&["ssh", "host", "rm", "{{ a }}"], true),
            (&["script", "-qc", "x {{ a }}"], true),
            (&["find", ".", "-exec", "sh", "-c", "rm {}", ";"], true),
            (&["{{ a }}"], true),
            (&["env", "{{ a }}", "x"], true),
            (&["sh", "{{ a }}"], true),
            (&["env", "X={{ a }}", "rm", "--", "{{ a }}"], false),
            (&["flock", "/run/l", "rm", "--", "{{ a }}"], false),
        ];
        for &(argv, refused) in table {
            let argv: Vec<String> = argv.iter().map(|s| (*s).to_string()).collect();
            let got = judge("", &read_exec(&argv), &values(false));
            assert_eq!(got.is_err(), refused, "{argv:?}: {got:?}");
        }
    }

    /// Every refusal's frame word for word, as `--check-config` shows it.
    #[test]
    fn refusals_word_for_word() {
        let how = Rereading::Arithmetic;
        let a = Placeholder::Argument("a".into());
        let cases = [
            (
                Refusal::Reread {
                    how: Reaches::Placeholder(a.clone()),
                    place: "`$(( ))`".into(),
                    line: 2,
                    rereading: how,
                },
                format!(
                    "{a} reaches it: `$(( ))` (line 2), which {}: {}",
                    how.does(),
                    how.hint()
                ),
            ),
            (
                Refusal::Reread {
                    how: Reaches::Variable {
                        name: "A".into(),
                        argument: "a".into(),
                    },
                    place: "`let`".into(),
                    line: 1,
                    rereading: how,
                },
                format!(
                    "$A holds argument \"a\", which is not `type: int`, and reaches it: `let` \
                     (line 1), which {}: {}",
                    how.does(),
                    how.hint()
                ),
            ),
            (
                Refusal::Reread {
                    how: Reaches::MayHold("x".into()),
                    place: "`let`".into(),
                    line: 1,
                    rereading: how,
                },
                format!(
                    "$x may hold a value the command received, and reaches it: `let` (line 1), \
                     which {}: {}",
                    how.does(),
                    how.hint()
                ),
            ),
            (
                Refusal::Unexpanded {
                    name: "A".into(),
                    argument: "a".into(),
                },
                "$A stands where this shell leaves it as text (inside '…', or in a script \
                 another shell runs), and that shell has argument \"a\" only as \
                 $ACTIOND_ARG_A: write \"$ACTIOND_ARG_A\" there (never the bare name, which is \
                 no environment variable)"
                    .to_string(),
            ),
            (
                Refusal::AfterLost {
                    variable: "A".into(),
                    why: "an alias".into(),
                    line: 3,
                },
                "$A is read after an alias (line 3), where actiond cannot tell how the shell \
                 will read it (it could be arithmetic, which runs code in a value): rewrite \
                 that part, or use `exec:`"
                    .to_string(),
            ),
        ];
        for (why, words) in cases {
            assert_eq!(why.to_string(), words);
        }
    }
}
