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
    Analysis, DATA_VARIABLES, PART_OF_A_VALUE, POSITIONAL, Read, Reread, Rereading, SCRIPT_NAME,
    is_positional,
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
    /// Arguments whose values are data in every language (`datetime`, `checkbox`), or whose
    /// author says the program takes them as data only (`allowUnknownProgram`): safe as an
    /// argument of a program the model does not know.
    pub no_program: BTreeSet<String>,
    /// Arguments whose values cannot start with `@` or `<` (`Rereading::FileRef`).
    pub no_file: BTreeSet<String>,
    /// Arguments whose values cannot hold `,`, `;` or `"` (`Rereading::FileName`).
    pub no_list: BTreeSet<String>,
    /// Arguments whose values cannot hold `/` (`Rereading::Below`).
    pub no_slash: BTreeSet<String>,
    /// The action's `allowUnknownProgram`: its entity fields may stand among the arguments
    /// of a program the model does not know.
    pub entity_no_program: bool,
}

impl Values {
    /// Whether a read of argument `a` is safe where it is read as `how`.
    fn safe(&self, a: &str, how: Rereading) -> bool {
        // A number picks processes as surely as a name: only the author's own choices.
        if how == Rereading::Signal {
            return self.chosen.contains(a);
        }
        if how == Rereading::FileRef {
            return self.int.contains(a) || self.chosen.contains(a) || self.no_file.contains(a);
        }
        // The author's own files and units, or a number (a file named by digits in the
        // working directory, a unit `5.service`).
        if matches!(
            how,
            Rereading::Settings
                | Rereading::Sent
                | Rereading::Selection
                | Rereading::Written
                | Rereading::Unpacked
        ) {
            return self.int.contains(a) || self.chosen.contains(a);
        }
        if how == Rereading::Below {
            return self.int.contains(a) || self.chosen.contains(a) || self.no_slash.contains(a);
        }
        if how == Rereading::FileName {
            return self.int.contains(a) || self.chosen.contains(a) || self.no_list.contains(a);
        }
        self.int.contains(a)
            || (matches!(how, Rereading::Program | Rereading::Operand) && self.chosen.contains(a))
            || (how == Rereading::Operand && self.no_program.contains(a))
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
    /// A file named as data is named after the point where the model stopped following the
    /// command (`why`, on `line`): what it holds may be read as code there.
    DataAfterLost {
        name: String,
        why: String,
        line: usize,
    },
}

/// How a value reaches a place that is read again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reaches {
    /// A placeholder stands there.
    Placeholder(Placeholder),
    /// A variable holding an argument whose type does not make it safe there.
    Variable { name: String, argument: String },
    /// A variable that may hold a value the command received.
    MayHold(String),
    /// Something the model cannot name (its description) that may hold one.
    Unknown(String),
    /// A variable whose text names another in arithmetic (`m=n; $(( m ))`), and how that
    /// one reaches it.
    Names { name: String, how: Box<Reaches> },
    /// What a file named as data holds (`Read::Stored`), whatever the command's values.
    Stored(String),
}

impl std::fmt::Display for Reaches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reaches::Placeholder(p) => write!(f, "{p} reaches it"),
            Reaches::Variable { name, argument } => {
                write!(f, "${name} holds argument {argument:?}, and reaches it")
            }
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
            Reaches::Stored(name) => write!(f, "{}, reaches it", stored_text(name)),
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
            } => {
                // What a data file holds is no value the action can pass otherwise.
                let hint = match how {
                    Reaches::Stored(_) if *rereading == Rereading::Unpacked => {
                        "an archive with a data ending (`.tgz`, `.zip`, …) may be one any \
                         action downloaded: keep an archive of your own, which no action \
                         writes, under a name with none (`/opt/app/theme.tar.lz`), or extract \
                         it yourself"
                    }
                    Reaches::Stored(_) if *rereading == Rereading::Arithmetic => {
                        "bash evaluates a name in it again; count in a program that reads the \
                         file as data (`awk '{ print $1 + 1 }' count.txt`)"
                    }
                    Reaches::Stored(_) => {
                        "read a file named as data only as data (`cat`, `grep`, `jq`, `while \
                         read`), and name a script you wrote by its own ending (`.sh`)"
                    }
                    // A clone's tree is no archive to keep: the fix is the author's list.
                    _ if place.as_str() == super::audit::EXECUTABLE => {
                        "keep what a value picks as data: give it no execute bit (`chmod 644 \
                         {{ filepath }}`), name the file yourself (`chmod +x \
                         /usr/local/bin/report`), or give the argument `choices:`"
                    }
                    _ if place.as_str() == super::filed::named::CLONED => {
                        "give the argument `choices:` (the repositories you mean), or write the \
                         url out"
                    }
                    _ => rereading.hint(),
                };
                write!(
                    f,
                    "{how}: {place} (line {line}), which {}: {hint}",
                    rereading.does()
                )
            }
            Refusal::Unexpanded { name, argument } => write!(
                f,
                "${name} stands where this shell leaves it as text (inside '…', or in a script \
                 another shell runs), and that shell has argument {argument:?} only as \
                 $ACTIOND_ARG_{name}: write \"$ACTIOND_ARG_{name}\" there (never the bare name, \
                 which is no environment variable)"
            ),
            Refusal::DataAfterLost { name, why, line } => write!(
                f,
                "`{name}`, a file named as data (any action, or an earlier press, may write a \
                 value into it), is named after {why} (line {line}), where actiond cannot tell \
                 whether what it holds is read as code: rewrite that part, or use `exec:`"
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
    // A place read as code, a name or a program is named before an argument of a program the
    // model does not know, whose refusal is the least specific.
    let (operands, others): (Vec<&Reread>, Vec<&Reread>) = analysis
        .rereads
        .iter()
        .partition(|r| r.rereading == Rereading::Operand);
    for r in others.into_iter().chain(operands) {
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
        // A file named as data, by its name or through a variable that holds it, or what one
        // holds, copied into a variable (`read -r n < n.txt; a=(1 2); echo "${a[n]}"`).
        let data = super::filed::data_mentioned(after.as_bytes())
            .into_iter()
            .next()
            .or_else(|| {
                let named = analysis
                    .data_names
                    .iter()
                    .find(|(v, _)| names_word(after, v));
                named.map(|(_, n)| String::from_utf8_lossy(n).into_owned())
            })
            .or_else(|| {
                let held = analysis.sources.keys().filter(|v| names_word(after, v));
                held.filter_map(|v| analysis.stored(&Read::Variable(v.clone())))
                    .next()
            });
        if let Some(name) = data {
            return Err(Refusal::DataAfterLost {
                name,
                why: lost.why.clone(),
                line: lost.line,
            });
        }
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
    if let Some(name) = analysis.stored(read) {
        return Some(Reaches::Stored(name));
    }
    match read {
        Read::Hole(Placeholder::Argument(a)) if values.safe(a, how) => None,
        Read::Hole(Placeholder::Entity(_))
            if how == Rereading::Operand && values.entity_no_program =>
        {
            None
        }
        // A pick among what a trusted program acts on (`docker start {{ .CurrentEntity.Names
        // }}` over an entity file of `docker ps`): the presser picks a row of the author's
        // entity file, a list closed at the press as `choices:` is, never a value of their
        // own (fe30v F12, OliveTin's default config).
        Read::Hole(Placeholder::Entity(_)) if how == Rereading::Selection => None,
        Read::Hole(p) => Some(Reaches::Placeholder(p.clone())),
        // The name of a file written (`filed::named`): a copy picks it only with what it was
        // copied from (`state=${STATE_DIRECTORY:-/tmp}/gpio$PIN`, a choice, is the author's).
        Read::Variable(v)
            if matches!(how, Rereading::Written | Rereading::Below)
                && !values.variables.contains_key(v) =>
        {
            if !values.any {
                return None;
            }
            let found = held(analysis, values, v);
            if let Some(what) = found.unknown {
                return Some(Reaches::Unknown(what));
            }
            let argument = found.arguments.into_iter().find(|a| !values.safe(a, how))?;
            Some(Reaches::Variable {
                name: v.clone(),
                argument,
            })
        }
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
        // A name a command computes (`$(date +%F)`) holds no value, unless its command may
        // read one the command wrote to a file or a pipe.
        Read::Computed(_) if matches!(how, Rereading::Written | Rereading::Below) => analysis
            .spilled
            .filter(|_| values.any)
            .map(|line| Reaches::Unknown(spilled(line))),
        Read::Unknown(what) | Read::Computed(what) => {
            values.any.then(|| Reaches::Unknown(what.to_string()))
        }
        Read::Stored(name) => Some(Reaches::Stored(name.clone())),
    }
}

/// How `Reaches::Stored` and the splitting rule describe what a file named as data holds.
fn stored_text(name: &str) -> String {
    format!(
        "the content of `{name}`, a file named as data (any action, or an earlier press, may \
         write a value into it)"
    )
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
    /// A variable holding what a command printed or `read` read, stored before it starts an
    /// argument (`changed_copies`).
    pub stored: Option<Stored>,
}

/// How a variable that starts an argument came to hold a value changed on the way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// What a command printed (`y=$(printf %s "$NAME" | tr _ -)`).
    Printed,
    /// A part of a value (`host=${TARGET#*.}`).
    Part,
    /// What `read` or `mapfile` read from input a value was written to (`printf '%s\n'
    /// "$NAME" | tr _ - | while read -r l`; `read` also drops leading blanks, so the line
    /// ` -rf` of an `ascii_sentence` is `-rf`).
    Read,
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
            stored: None,
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
            stored: None,
        };
        follow(
            analysis,
            values,
            &output.reads,
            &mut BTreeSet::new(),
            &mut found,
        );
        let read = output.reads.iter().find_map(|r| match r {
            Read::Variable(v) if holds_any(analysis, values, v) => Some(format!("it reads ${v}")),
            // `printf %s "$NAME" > f; rm $(cat f)`: it reads no variable, but the command
            // wrote a value where its command may read it.
            Read::Computed(_) => analysis.spilled.map(spilled),
            _ => None,
        });
        let Some(read) = read.filter(|_| received) else {
            continue;
        };
        found.unknown = Some(read);
        out.push(found);
    }
    out
}

/// The expansions that remove a prefix or replace text at the start of an argument, and the
/// command substitutions that read a value there (`Analysis::stripped`), each with the arguments whose value its variable may hold (and
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
            output: s.output.is_some(),
            stored: None,
        };
        match &s.output {
            Some(reads) => follow(analysis, values, reads, &mut BTreeSet::new(), &mut found),
            None => holds(
                analysis,
                values,
                &s.variable,
                &mut BTreeSet::new(),
                &mut found,
            ),
        }
        if !values.any {
            found.unknown = None;
        }
        if !found.arguments.is_empty() || found.unknown.is_some() {
            out.push(found);
        }
    }
    out.extend(changed_copies(analysis, values));
    out
}

/// The variables that start an argument (`Analysis::starts`) and hold what a command that
/// reads a variable printed (`y=$(printf %s "$NAME" | tr _ -); ls "$y"`): a value changed
/// on the way may start with `-` where the value may not, as in `"$(…)"` itself. `line` is
/// 0: the copy may come from anywhere.
fn changed_copies(analysis: &Analysis, values: &Values) -> Vec<Unquoted> {
    let mut out = Vec::new();
    // One expanded unquoted anywhere is the splitting rule's (`unquoted`), which says more;
    // a positional parameter holds what the command passes, followed where it is set.
    let starts = analysis
        .starts
        .iter()
        .filter(|v| !analysis.unquoted.contains_key(*v) && !is_positional(v));
    for variable in starts {
        let direct = analysis
            .sources
            .get(variable)
            .map_or(&[][..], Vec::as_slice);
        // A command that reads no variable, `d=$(date +%F)`, is left alone; one that reads a
        // file a value was written into reads that value (`filed::named_in`).
        let printed = direct
            .iter()
            .any(|r| matches!(r, Read::Unknown(what) if what.starts_with("the output of")));
        let part = direct
            .iter()
            .any(|r| matches!(r, Read::Unknown(what) if what == PART_OF_A_VALUE));
        // What `read` reads, once the command wrote a value into a file or a pipe (where
        // `read` may read it): a command on the way may have changed it, and `read` itself
        // drops leading blanks. A `read` of the author's own file is left alone.
        let read = analysis.spilled.is_some()
            && direct.iter().any(|r| {
                matches!(r, Read::Unknown(what)
                    if what.starts_with("what `read`") || what.starts_with("what `mapfile`")
                        || what.starts_with("what `readarray`"))
            });
        let stored = if printed {
            Stored::Printed
        } else if part {
            Stored::Part
        } else if read {
            Stored::Read
        } else {
            continue;
        };
        let mut found = Unquoted {
            variable: variable.clone(),
            line: 0,
            arguments: BTreeSet::new(),
            copied: true,
            unknown: None,
            ifs: false,
            output: true,
            stored: Some(stored),
        };
        follow(analysis, values, direct, &mut BTreeSet::new(), &mut found);
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
    let found = held(analysis, values, variable);
    !found.arguments.is_empty() || found.unknown.is_some()
}

/// What `variable` may hold, followed through its assignments (`holds`).
fn held(analysis: &Analysis, values: &Values, variable: &str) -> Unquoted {
    let mut found = Unquoted {
        variable: variable.to_string(),
        line: 0,
        arguments: BTreeSet::new(),
        copied: true,
        unknown: None,
        ifs: false,
        output: false,
        stored: None,
    };
    holds(analysis, values, variable, &mut BTreeSet::new(), &mut found);
    found
}

/// Whether `variable` may hold a value that is no integer.
fn may_hold_value(analysis: &Analysis, values: &Values, variable: &str) -> bool {
    if !values.any {
        return false;
    }
    let found = held(analysis, values, variable);
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
            Read::Stored(name) => {
                found.unknown.get_or_insert_with(|| stored_text(name));
            }
            // Holds no value the command received, unless its command may read one the
            // command wrote to a file or a pipe (`printf %s "$NAME" > f; d=$(cat f)`).
            Read::Computed(_) => {
                if let Some(line) = analysis.spilled {
                    found.unknown.get_or_insert_with(|| spilled(line));
                }
            }
        }
    }
}

/// Why the output of a command that reads no variable may hold a value.
fn spilled(line: usize) -> String {
    format!("its command may read the file or pipe that line {line} writes a value to")
}

/// Whether `word` stands in `text` as a whole word (not inside a longer name).
pub(super) fn names_word(text: &str, word: &str) -> bool {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    text.match_indices(word).any(|(i, _)| {
        let before = i > 0 && ident(b[i - 1]);
        let after = b.get(i + word.len()).is_some_and(|&c| ident(c));
        !before && !after
    })
}

#[cfg(test)]
mod tests;
