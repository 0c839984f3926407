//! Command-level rules of the shell model: where the quoting is right and the value still is
//! not safe, because the command reads its argument as code, as arithmetic, or as the name
//! of a variable (bash evaluates the subscript of a name such as `a[$(cmd)]`, so a value
//! there runs `cmd`). The lexer hands each finished simple command and each `[[ ]]` here.
//!
//! Refused: any placeholder in the arguments of `eval`, `trap`, `let`, `alias`, `read`,
//! `mapfile`, `readarray`, `getopts`, `wait`, `unset`, `declare`, `typeset` and `local`; the
//! name part of `export NAME=value` and `readonly NAME=value`; `printf -v NAME`, and a value
//! that starts printf's first argument (it could be `-v…`); the operand after `-v` or `-R` of
//! `test` / `[`, or after another value (which could itself be `-v`); and in `[[ ]]` the
//! operands of `-eq`, `-ne`, `-lt`, `-le`, `-gt`, `-ge`, `-v` and `-R`; and any placeholder in
//! the arguments of a command whose name comes from an expansion or a value and is no path
//! (it could be `eval`). Names are compared after quote removal (`\read` is `read`). After
//! `alias`, `shopt`,
//! `eval`, and `declare`/`typeset`/`local` with `-i` or `-n` the model stops (`Lost`): they change
//! how later commands are read or what a plain assignment does. Noted for `judge`: the words
//! a program hands to a shell and the program a command runs (`programs`), what reaches the
//! standard input of a command that runs it as code or splits it (a pipe, `<<<`, `<`; a
//! here-document's body is read after its line, by the lexer), and the literal text of each
//! assignment, whose names bash's arithmetic follows.
//!
//! What reaches a standard input is followed as one flow (`Command::output`,
//! `Command::input_reads`): a command writes what its words read, what the files it names
//! hold that a value was written into, and what reaches its own input unless its program
//! prints none of it (`own::prints_input`); the next command of a pipe reads that
//! (`Input::Pipe`). A group (`{ }`, `( )`, `if`, a loop, `case`) writes what its commands
//! write, and its commands with no input of their own read what reaches it, known only once
//! its redirections are read: the lexer gathers them (`Inner`), and the group's command
//! judges them (`own_commands`, `filed`).

mod flow;
mod reaches;
mod word;

use super::Placeholder;
use super::Stop;
use super::UNSAFE_HINT;
use super::directories;
use super::filed;
use super::known;
use super::launchers;
use super::own;
use super::programs::{self, PASTED, PROCESS_SUBSTITUTION, SCRIPT, Stdin, is_input_path};
use super::reread::{
    Analysis, Directory, Notes, PART_OF_A_VALUE, POSITIONAL, Read, Rereading, SCRIPT_NAME,
    Stripped, arithmetic_names,
};

/// One word of a command, as far as the rules need to know it.
#[derive(Debug, Clone, Default)]
pub(super) struct Word {
    pub start: usize,
    /// The word, when it is only unquoted plain characters (line continuations removed).
    pub literal: Option<Vec<u8>>,
    /// The plain characters before the first quote, expansion or placeholder.
    pub prefix: Option<Vec<u8>>,
    /// The first placeholder in the word, if any.
    pub first: Option<Placeholder>,
    /// Every placeholder in the word.
    pub holes: Vec<Placeholder>,
    /// A placeholder comes before any other character: the value starts the word.
    pub leading_hole: bool,
    /// An expansion or a placeholder comes before any other character.
    pub leading_expansion: bool,
    /// A placeholder stands before the first unquoted `=`.
    pub hole_before_eq: bool,
    /// `NAME=…` or `NAME+=…` with a plain NAME.
    pub assignment: bool,
    /// An unquoted `=` was read.
    pub seen_eq: bool,
    /// A character other than a placeholder was read.
    pub seen_text: bool,
    /// The word is the descriptor of a redirection (`2>`).
    pub io_number: bool,
    /// The word after quote removal, as far as it is text (`re"a"d` is `read`).
    pub unquoted: Vec<u8>,
    /// It holds an expansion or a placeholder, so `unquoted` is not all of it.
    pub expanded: bool,
    /// The variables it expands by name (`$x`, `${x:-…}`).
    pub vars: Vec<String>,
    /// An expansion whose value is no named variable's (`$1`, `$@`, `$_`, a `$( )` whose
    /// command reads a variable), described.
    pub opaque: Option<String>,
    /// A command substitution whose command reads no variable (`$(date +%F)`), described:
    /// read as `Read::Computed`.
    pub computed: Option<&'static str>,
    /// The files named as data whose content a command substitution in the word prints
    /// (`"$(cat radio.txt)"`): read as `Read::Stored`.
    pub stored: Vec<String>,
    /// A `${ }` in the word changes its variable's value (`${f%.txt}`, `${f:-x}`): the word
    /// is not the variable's value as it is.
    pub changed: bool,
    /// An expansion that removes a prefix of this variable's value or replaces text in it
    /// starts the word (`"${NAME#*.}"`): the word may start with `-` (see `Stripped`).
    /// A command substitution whose command reads a variable starts it the same way
    /// (`"$(printf %s "$NAME" | tr _ -)"`): its name and what its command reads.
    pub stripped: Option<(String, Option<Vec<Read>>)>,
    /// For an assignment: the length of `unquoted` just after its `=`, where its value starts.
    pub value_at: Option<usize>,
    /// An assignment whose value starts with such an expansion (`host=${TARGET#*.}`): the
    /// variable it assigns may start with `-` where the value does not.
    pub assigns_stripped: bool,
    /// The length of `unquoted` at its first expansion or placeholder, and at its last: the
    /// text the author wrote before every expansion and after them all (`name_parts`).
    pub expansions: Option<(usize, usize)>,
}

/// A simple command being read: its name (when plain) and its arguments.
#[derive(Debug)]
pub(super) struct Command {
    pub start: usize,
    /// Words before the name: assignments (and nothing else).
    assignments: Vec<Word>,
    /// The command word, once read.
    name_word: Option<Word>,
    /// The command's name after quote removal; `None` when an expansion or a placeholder
    /// makes it unknown (and it is no path, which no builtin is).
    name: Option<Vec<u8>>,
    /// The name comes from an expansion and holds no `/`: it could be any builtin.
    unknown: bool,
    /// The literal name word, for `f()`.
    literal_name: bool,
    /// `command` or `builtin` came first: the name follows.
    wrapped: bool,
    args: Vec<Word>,
    /// What follows a compound command (`esac`, `)`, `]]`): redirections only, no rules.
    compound: bool,
    /// bash's `&>` was read: dash ran the command so far in the background, so a word after
    /// it would start another command there.
    pub both_streams: bool,
    /// What reaches its standard input besides a here-document.
    inputs: Vec<Input>,
    /// A here-document (`<<`) is among its redirections: its body, read after the line,
    /// reaches the command's input (`Lexer::finish` hands the command's use of it over).
    pub heredoc: bool,
    /// Its output goes to a file (`> f`, `>> f`; not `/dev/null`).
    pub writes_file: bool,
    /// The files its output goes to, as written (`None`: made by an expansion).
    pub targets: Vec<Option<Vec<u8>>>,
    /// For a group (`{ }`, `( )`, `if`, a loop, `case`): what its commands write and how they
    /// use its input.
    inner: Inner,
    /// Its output goes into a pipe (`a | b`), not to the output of the group it stands in.
    pub piped: bool,
    /// The commands of its `>( )`s, which read what it writes there (`tee >(psql)`).
    fed: Inner,
}

/// What the commands of a group (`{ }`, `( )`, `if … fi`, `while`/`until`/`for … done`,
/// `case … esac`, a function's body) did with the group's standard output and input, which
/// the lexer gathers while it reads them (`Lexer::finish`).
#[derive(Debug, Default)]
pub(super) struct Inner {
    /// What they write to the group's output: each one's `Command::output` (not one that
    /// writes into a pipe inside the group).
    pub output: Vec<Read>,
    /// One of them passes what reaches the group's input on to the group's output (`{ cat;
    /// echo x; }`, `while read l; do echo "$l"; done`).
    pub passes: bool,
    /// Those that read the group's input as their own commands (`own::stdin`), with the
    /// offset they start at: `{ psql; } < f`, `echo "$v" | (crontab -)`.
    pub readers: Vec<(usize, &'static str)>,
    /// Those that write the group's input into files (`{ cat > /etc/cron.d/job; } < f`,
    /// `… | { tee job.sh; }`): the offset they start at and the files (`filed`).
    pub writers: Vec<(usize, Vec<Option<Vec<u8>>>)>,
    /// The variables its `read`s and `mapfile`s fill from the group's input (`while read -r
    /// l; do …; done < notes.txt`): what a file named as data there holds reaches them.
    pub fills: Vec<String>,
}

/// What reaches a command's standard input (or another descriptor: a program may open
/// `/dev/fd/3`).
#[derive(Debug)]
pub(super) enum Input {
    /// The output of the command before `|` (`Command::output`: what its words read, and what
    /// reached its own input unless it prints none of it), and whether that command passed
    /// on what reaches the group it stands in (`{ cat | psql; } < f`).
    Pipe(Vec<Read>, bool),
    /// The output of an `echo` of plain words only before `|` (`echo /usr/local/bin/report |
    /// at 18:00`): known text, read as the script when the command reads code there, as
    /// `<<<`'s word is; no value reaches it.
    Echoed(Vec<u8>),
    /// The file of `< FILE`.
    File(Word),
    /// The word of `<<<`, with a newline.
    Text(Word),
    /// A descriptor `<&N` duplicates.
    Descriptor,
}

/// Builtins that read every argument as code.
const READ_AS_CODE: &[&[u8]] = &[
    b"eval",
    b"trap",
    b"alias",
    b"compgen",
    b"complete",
    b"fc",
    b"enable",
    b"bind",
];

/// Builtins that read their arguments as variable names.
const READ_AS_NAME: &[&[u8]] = &[
    b"read",
    b"mapfile",
    b"readarray",
    b"getopts",
    b"wait",
    b"unset",
    b"declare",
    b"typeset",
    b"local",
];

/// The options that take a word, per builtin that writes names (bash 5.2's `help read`,
/// `help mapfile`; dash's `read` has `-p` only, busybox ash's `-p -t -n -u` too): the word
/// after `read -p` is a prompt, not a name. Every other option letter takes none (`read -rs
/// x`, `mapfile -t a` write `x` and `a`). `read -a NAME` names an array it writes, so `a` is
/// not among them.
fn option_words(builtin: &[u8]) -> &'static [u8] {
    match builtin {
        b"read" => b"dinNptu",
        b"mapfile" | b"readarray" => b"dnOsuCc",
        _ => b"",
    }
}

/// Whether the option cluster `v` (`-rs`, `-t5`, `-rp`) takes the next word: its first letter
/// that takes a word is its last (`-rp PROMPT`), not followed by that word (`-t5`).
fn takes_word(v: &[u8], takes: &[u8]) -> bool {
    v[1..]
        .iter()
        .position(|c| takes.contains(c))
        .is_some_and(|i| i + 2 == v.len())
}

/// What `Analysis::data_words` says of a data file's lines that `xargs` makes arguments.
pub(crate) const DATA_XARGS: &str = "is made the arguments of the program `xargs` runs, where \
                                     an item starting with `-` is an option: write `--` after \
                                     the program (`xargs -0 rm -f --`)";

/// What `Analysis::data_words` says of a data file's content that starts an argument.
pub(crate) const DATA_OPTION: &str = "starts an argument before any `--`, where a line starting \
                                      with `-` is an option (`-oProxyCommand=…`, \
                                      `--upload-pack=…`, `-exec`): write `--` or `./` before it";

/// What `Analysis::data_words` says of a data file's content the shell splits.
pub(crate) const DATA_SPLIT: &str = "stands outside quotes, where the shell splits it into words \
                                     (one may be an option) and expands globs in them: put it in \
                                     double quotes";

/// The files named as data that the code a known program reads in its own words names
/// (`sqlite3 DB ".read report.txt"`, `psql -c '\i f.txt'`, a sed or jq program: `own::words`),
/// each with its word's index, the name and what the command does: it reads that file as
/// code. Here, not in `filed`, which `own` uses.
pub(crate) fn data_in_code(words: &[Option<&[u8]>]) -> Vec<filed::DataUse> {
    // Most commands name no data file at all: no program's rules need reading then.
    if !words
        .iter()
        .flatten()
        .any(|w| !filed::data_mentioned(w).is_empty())
    {
        return Vec::new();
    }
    let texts: Vec<&[u8]> = words.iter().map(|w| w.unwrap_or_default()).collect();
    let mut out = Vec::new();
    for found in own::words(words, &texts) {
        if found.how != Rereading::Code {
            continue;
        }
        for name in words[found.at]
            .map(filed::data_mentioned)
            .unwrap_or_default()
        {
            let does = format!("names, in {},", found.place);
            out.push((Some(found.at), name.into_bytes(), does));
        }
    }
    out
}

/// The reads of what a file named as data holds among `reads` (`Read::Stored`).
pub(super) fn stored_only(reads: Vec<Read>) -> Vec<Read> {
    reads
        .into_iter()
        .filter(|r| matches!(r, Read::Stored(_)))
        .collect()
}

/// `[[ ]]` operators whose operands bash evaluates as arithmetic.
const ARITHMETIC: &[&[u8]] = &[b"-eq", b"-ne", b"-lt", b"-le", b"-gt", b"-ge"];

/// Unary tests whose operand is a variable name.
const NAME_TESTS: &[&[u8]] = &[b"-v", b"-R"];

impl Command {
    pub fn new(start: usize) -> Command {
        Command {
            start,
            assignments: Vec::new(),
            name_word: None,
            name: None,
            unknown: false,
            literal_name: false,
            wrapped: false,
            args: Vec::new(),
            compound: false,
            both_streams: false,
            inputs: Vec::new(),
            heredoc: false,
            writes_file: false,
            targets: Vec::new(),
            inner: Inner::default(),
            piped: false,
            fed: Inner::default(),
        }
    }

    /// A `>( )` among its words: its commands read what the command writes.
    pub fn feeds(&mut self, inner: Inner) {
        self.fed.readers.extend(inner.readers);
        self.fed.writers.extend(inner.writers);
    }

    /// The command's words from its name on, as `programs` reads them: plain text, an
    /// assignment-shaped word by its `NAME=` (`env A="$v" prog`), anything else unknown.
    fn shapes(&self) -> Vec<Option<&[u8]>> {
        let words = self.name_word.iter().chain(&self.args);
        words
            .map(|w| {
                w.value()
                    .or_else(|| w.assignment.then_some(w.prefix.as_deref()).flatten())
            })
            .collect()
    }

    /// What the command does with its standard input, when it reads it as more than data
    /// (`programs::stdin`); also `BASH_ENV=/dev/stdin bash …` (`ENV`, any variable) for a
    /// shell it starts.
    pub fn stdin_use(&self) -> Option<Stdin> {
        if self.compound || self.name_word.is_none() {
            return None;
        }
        let shapes = self.shapes();
        if let Some(found) = programs::stdin(&shapes) {
            return Some(found);
        }
        let shell = programs::chain(&shapes)
            .iter()
            .any(|&i| shapes[i].is_some_and(|w| programs::SHELLS.contains(&base(w))));
        let names_input = self
            .assignments
            .iter()
            .chain(self.args.iter().filter(|w| w.assignment))
            .filter_map(Word::value)
            .any(|v| {
                v.splitn(2, |&c| c == b'=')
                    .nth(1)
                    .is_some_and(is_input_path)
            });
        (shell && names_input).then_some(Stdin::Code(
            "the file a variable such as `BASH_ENV` names, which is its standard input",
        ))
    }

    /// The place of what reaches the standard input of a program that may read it as its
    /// own commands (`own::stdin`), when `stdin_use` has none.
    pub fn own_stdin(&self) -> Option<&'static str> {
        if self.compound || self.name_word.is_none() || self.stdin_use().is_some() {
            return None;
        }
        own::stdin(&self.shapes())
    }

    pub fn compound(start: usize) -> Command {
        Command {
            compound: true,
            ..Command::new(start)
        }
    }

    pub fn is_empty(&self) -> bool {
        !self.compound
            && self.name_word.is_none()
            && self.assignments.is_empty()
            && self.args.is_empty()
    }

    /// Whether a `(` now makes this a function definition `name()`.
    pub fn is_function_name(&self) -> bool {
        !self.compound && self.assignments.is_empty() && self.literal_name && self.args.is_empty()
    }

    /// Whether the next word stands where an assignment may: before the command's name (and
    /// not after `command` or `builtin`, which name it: `command x=$v` runs `x=…`).
    pub fn assignment_allowed(&self) -> bool {
        !self.compound && self.name_word.is_none() && !self.wrapped
    }

    pub fn push(&mut self, word: Word) {
        if self.compound {
            return;
        }
        if self.name_word.is_none() {
            if word.assignment {
                self.assignments.push(word);
                return;
            }
            // `command read x`, `builtin printf -v x`, `command -p read x`: the next word that
            // is no option names the command.
            if matches!(word.value(), Some(b"command" | b"builtin")) {
                self.wrapped = true;
                return;
            }
            if self.wrapped && word.value().is_some_and(|v| v.starts_with(b"-")) {
                return;
            }
            self.literal_name = word.literal.is_some();
            self.name = word.value().map(<[u8]>::to_vec);
            self.unknown = self.name.is_none() && !word.unquoted.contains(&b'/');
            self.name_word = Some(word);
            return;
        }
        self.args.push(word);
    }

    /// The rules, once the command is complete; what bash reads again goes into `notes`.
    pub fn check(&self, notes: &mut Notes) -> Result<(), Stop> {
        if self.writes_file && self.spills() {
            let line = notes.line(self.start);
            notes.analysis.spilled.get_or_insert(line);
        }
        self.filed(notes);
        for w in &self.assignments {
            if let Some(name) = w.assigned_name() {
                notes.analysis.write_from(name, w.reads(false));
                notes.analysis.write_text(name, w.assigned_text());
                filed::note_name(&mut notes.analysis, name, w.assigned_text());
                let plain = (!w.expanded).then(|| w.assigned_text());
                filed::note_const(&mut notes.analysis, name, plain);
                filed::lands::assign(&mut notes.analysis.cwd, name, w.plain_assigned());
                if w.assigns_stripped {
                    notes
                        .analysis
                        .write_from(name, vec![Read::Unknown(PART_OF_A_VALUE.to_string())]);
                }
            }
        }
        self.changes_directory(notes);
        self.scripts(notes);
        self.own_commands(notes);
        self.environment(notes);
        // After `--` no argument is an option (`rm -- "${NAME#*.}"`). `echo`'s options (`-n`,
        // `-e`, `-E` in every shell) only change what it prints: a line `read` read, or a
        // value changed, may start its argument.
        // `find`'s `--` ends its own options (`-H`, `-L`, `-P`), and a starting point that
        // starts with `-` after it is still read as its expression (`find -- -delete`).
        let echo = self.name.as_deref() == Some(b"echo");
        let find = self.name.as_deref().map(base) == Some(&b"find"[..]);
        // `printf FORMAT ARGS`: only its first word may be an option; the words after the
        // format are its operands.
        let printf = self.name.as_deref().map(base) == Some(&b"printf"[..]);
        let options = self
            .args
            .iter()
            .take_while(|w| !echo && (find || !w.is_value(b"--")))
            .take(if printf { 1 } else { usize::MAX });
        for w in options {
            if let Some(p) = w.first.as_ref().filter(|_| w.leading_hole) {
                let line = notes.line(w.start);
                notes.analysis.option_holes.push((p.clone(), line));
            }
            // A variable, or a positional parameter (`"$1"`, `"$@"`, noted as `@`), that
            // starts an argument: what was copied into it starts it (`starts`).
            if w.leading_expansion && !w.leading_hole {
                notes.analysis.starts.extend(w.vars.iter().cloned());
                if w.opaque.is_some() {
                    notes.analysis.starts.insert(POSITIONAL.to_string());
                }
                // What a file named as data holds (`ssh "$(cat host.txt)" uptime`, `h=$(cat
                // host.txt); ssh "$h"`): a line starting with `-` is an option there.
                // A variable's is known once the command is read (`while read -r f; do rm
                // -f "$f"; done < list.txt` fills `f` at `done`): `Analysis::leading`.
                let line = notes.line(w.start);
                if let Some(name) = w.stored.first().cloned() {
                    notes.analysis.data_words.push((name, line, DATA_OPTION));
                }
                for v in &w.vars {
                    notes.analysis.leading.push((v.clone(), line));
                }
            }
            if let Some((variable, output)) = &w.stripped {
                let line = notes.line(w.start);
                notes.analysis.stripped.push(Stripped {
                    variable: variable.clone(),
                    line,
                    output: output.clone(),
                });
            }
        }
        self.xargs_items(notes);
        self.programs(notes);
        self.directories(notes);
        self.stdin(notes);
        self.named(notes);
        let holes = || self.args.iter().filter(|w| w.first.is_some());
        if self.unknown {
            if let Some(w) = holes().next() {
                let p = w.first.as_ref().map_or(String::new(), ToString::to_string);
                return Err(Stop::Refused(format!(
                    "{p} is an argument of a command whose name comes from an expansion or a \
                     value, so actiond cannot tell whether it reads its arguments as code (it \
                     could be `eval`); write the command's name out: {UNSAFE_HINT}"
                )));
            }
            for w in &self.args {
                notes.reread(
                    w.start,
                    "the arguments of a command whose name comes from an expansion",
                    Rereading::Code,
                    w.reads(false),
                );
            }
        }
        let Some(name) = self.name.as_deref() else {
            return Ok(());
        };
        let shown = String::from_utf8_lossy(name).into_owned();
        if READ_AS_CODE.contains(&name) {
            if let Some(w) = holes().next() {
                return Err(refused(w, name, Rereading::Code));
            }
            for w in &self.args {
                notes.reread(
                    w.start,
                    format!("`{shown}`"),
                    Rereading::Code,
                    w.reads(false),
                );
            }
        }
        if name == b"let" {
            if let Some(w) = holes().next() {
                return Err(refused(w, name, Rereading::Arithmetic));
            }
            for w in &self.args {
                notes.reread(w.start, "`let`", Rereading::Arithmetic, w.reads(true));
            }
        }
        if READ_AS_NAME.contains(&name) {
            if let Some(w) = holes().next() {
                return Err(refused(w, name, Rereading::Name));
            }
            self.names(name, notes);
        }
        match name {
            b"export" | b"readonly" => {
                if let Some(w) = holes().find(|w| !w.assignment || w.hole_before_eq) {
                    return Err(refused(w, name, Rereading::Name));
                }
                self.names(name, notes);
            }
            b"printf" => self.printf(notes)?,
            // `set -- WORDS` (or `set WORDS`) fills the positional parameters.
            b"set" => {
                // `set -a` (`-ea`, `-o allexport`): every assignment after it is exported.
                let mut options = self.args.iter().map(|w| w.value());
                while let Some(Some(v)) = options.next() {
                    if v == b"--" || !(v.starts_with(b"-") || v.starts_with(b"+")) {
                        break;
                    }
                    let named = matches!(v, b"-o" | b"+o")
                        && options.next().flatten() == Some(b"allexport".as_slice());
                    if named || (v.starts_with(b"-") && v[1..].contains(&b'a') && v[1] != b'-') {
                        notes.analysis.allexport = true;
                    }
                }
                let reads = self.args.iter().flat_map(|w| w.reads(false)).collect();
                notes.analysis.write_from(POSITIONAL.as_bytes(), reads);
            }
            b"test" | b"[" => self.test(notes)?,
            b"." | b"source" => {
                if let Some(w) = self.args.first() {
                    notes.reread(
                        w.start,
                        format!("the file `{shown}` reads as code"),
                        Rereading::Code,
                        word_reads(w),
                    );
                }
            }
            b"trap" => self.trap(notes),
            _ => {}
        }
        let lost = |why: &str| {
            Err(Stop::Lost {
                at: self.start,
                why: why.to_string(),
            })
        };
        match name {
            b"alias" => lost("`alias`, which changes how later commands are read"),
            b"shopt" => lost("`shopt`, which can change how later commands are read"),
            b"eval" => lost("`eval`"),
            // `hash -p /bin/sh rm`: `rm` runs the shell from then on.
            b"hash" if self.has_option(b"p") => {
                lost("`hash -p`, which changes which program a name runs")
            }
            // `mapfile -C CALLBACK`: bash runs the callback with each line it reads.
            b"mapfile" | b"readarray" if self.has_option(b"C") => {
                lost("`mapfile -C`, which runs a command with the lines it reads")
            }
            b"declare" | b"typeset" | b"local" if self.has_option(b"in") => {
                lost("`declare -i` or `-n`, after which an assignment can evaluate its value")
            }
            _ => Ok(()),
        }
    }
    /// The arguments of a builtin that reads names: a name from an expansion is evaluated,
    /// and each name it writes may hold data.
    fn names(&self, name: &[u8], notes: &mut Notes) {
        let shown = String::from_utf8_lossy(name).into_owned();
        let assigns = matches!(
            name,
            b"declare" | b"typeset" | b"local" | b"export" | b"readonly"
        );
        let reads = matches!(name, b"read" | b"mapfile" | b"readarray" | b"getopts");
        let mut skip_next = false;
        for (i, w) in self.args.iter().enumerate() {
            if std::mem::take(&mut skip_next) {
                continue;
            }
            if let Some(v) = w.value().filter(|v| v.len() > 1 && v[0] == b'-') {
                // `read -p PROMPT`: the option's word is no name (`-a NAME` is one).
                skip_next = reads && takes_word(v, option_words(name));
                continue;
            }
            if name == b"getopts" && i == 0 {
                continue;
            }
            if assigns && let Some(n) = w.assigned_name() {
                notes.analysis.write_from(n, w.reads(false));
                notes.analysis.write_text(n, w.assigned_text());
                filed::note_name(&mut notes.analysis, n, w.assigned_text());
                let plain = (!w.expanded).then(|| w.assigned_text());
                filed::note_const(&mut notes.analysis, n, plain);
                filed::lands::assign(&mut notes.analysis.cwd, n, w.plain_assigned());
                continue;
            }
            match w.value() {
                Some(v) if reads => {
                    let mut read = vec![Read::Unknown(format!("what `{shown}` reads"))];
                    // A file named as data on its input (`read -r l < notes.txt`): any press
                    // may have written what it reads, whoever wrote the command.
                    let stored = stored_only(self.input_reads(&notes.analysis));
                    if !stored.is_empty() {
                        notes.exported_write(w.start, v, stored.clone());
                        read.extend(stored);
                    }
                    // Once the command wrote a value where it may read it (`printf … | read
                    // -r LANG`); a read of the author's own file is the author's.
                    if notes.analysis.spilled.is_some() {
                        notes.exported_write(w.start, v, read.clone());
                    }
                    notes.analysis.write_from(v, read);
                }
                Some(_) => {}
                None => {
                    notes.analysis.written_unknown = true;
                    notes.reread(
                        w.start,
                        format!("`{shown}`"),
                        Rereading::Name,
                        w.reads(false),
                    );
                }
            }
        }
    }

    /// Whether an option word (`-x`, `+x`) holds one of `letters`.
    fn has_option(&self, letters: &[u8]) -> bool {
        self.args.iter().any(|w| {
            w.value().is_some_and(|l| {
                matches!(l.first(), Some(b'-' | b'+')) && l[1..].iter().any(|c| letters.contains(c))
            })
        })
    }

    /// `xargs` given what a file named as data holds (`xargs -0 rm -f < list.txt`): its
    /// items are arguments of the program it runs, options unless a `--` comes first.
    fn xargs_items(&self, notes: &mut Notes) {
        let shapes = self.shapes();
        let chain = programs::chain(&shapes);
        let Some(at) = chain
            .iter()
            .position(|&k| shapes[k].map(base) == Some(&b"xargs"[..]))
        else {
            return;
        };
        let after = chain.get(at + 1).copied().unwrap_or(shapes.len());
        if shapes[after..].contains(&Some(&b"--"[..])) {
            return;
        }
        let stored = stored_only(self.input_reads(&notes.analysis));
        if let Some(Read::Stored(name)) = stored.first() {
            let line = notes.line(self.start);
            notes
                .analysis
                .data_words
                .push((name.clone(), line, DATA_XARGS));
        }
    }

    /// `printf -v NAME` assigns to NAME; a value at the start of the first argument could be
    /// that option itself.
    fn printf(&self, notes: &mut Notes) -> Result<(), Stop> {
        let mut options = true;
        for (i, w) in self.args.iter().enumerate() {
            let after_v = i > 0 && self.args[i - 1].is_value(b"-v");
            let glued_v = w.unquoted.starts_with(b"-v");
            if after_v {
                match w.value() {
                    Some(v) => {
                        let printed = self.args[i + 1..].iter().flat_map(|w| w.reads(false));
                        notes.exported_write(w.start, v, printed.collect());
                        notes.analysis.write_from(
                            v,
                            vec![Read::Unknown("what `printf -v` writes".to_string())],
                        );
                    }
                    None => notes.analysis.written_unknown = true,
                }
            }
            let leads = options && i == 0 && w.leading_expansion;
            if after_v || glued_v || leads {
                notes.reread(w.start, "`printf -v`", Rereading::Name, w.reads(false));
            }
            if w.first.is_none() {
                options &= !w.is_value(b"--");
                continue;
            }
            if after_v || glued_v || (leads && w.leading_hole) {
                return Err(refused(w, b"printf", Rereading::Name));
            }
            options = false;
        }
        Ok(())
    }

    /// `test` and `[`: the operand of `-v` or `-R` is a variable name, and a value can be an
    /// operator itself, so a value right after another value is refused too.
    fn test(&self, notes: &mut Notes) -> Result<(), Stop> {
        for (i, w) in self.args.iter().enumerate() {
            if i == 0 {
                continue;
            }
            let prev = &self.args[i - 1];
            let name_test = NAME_TESTS.iter().any(|t| prev.is_value(t));
            if name_test {
                notes.reread(w.start, "`test -v`", Rereading::Name, w.reads(false));
            }
            if w.first.is_some() && (prev.first.is_some() || name_test) {
                return Err(refused(w, b"test", Rereading::Name));
            }
        }
        Ok(())
    }
}

/// What a word reads, and the output of a process substitution (`<( )`) it stands for.
fn word_reads(w: &Word) -> Vec<Read> {
    let mut reads = w.reads(false);
    if w.literal.as_deref() == Some(PROCESS_SUBSTITUTION) {
        reads.push(Read::Unknown("the output of `<( )`".to_string()));
    }
    reads
}

/// The last path segment: `/usr/bin/env` is `env`.
fn base(w: &[u8]) -> &[u8] {
    w.rsplit(|&c| c == b'/').next().unwrap_or(w)
}

fn refused(w: &Word, name: &[u8], how: Rereading) -> Stop {
    let p = w.first.as_ref().map_or(String::new(), ToString::to_string);
    Stop::Refused(format!(
        "{p} is an argument of `{}`, which {}: {}",
        String::from_utf8_lossy(name),
        how.does(),
        how.hint()
    ))
}

/// A placeholder that stands in `[[ … ]]` where bash reads its value again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum InCond {
    /// An operand of an arithmetic comparison (`-eq`, `-lt`, …).
    Arithmetic(Placeholder),
    /// The variable name of `-v`.
    NameTest(Placeholder),
}

impl std::fmt::Display for InCond {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (p, role, how) = match self {
            InCond::Arithmetic(p) => (
                p,
                "an operand of an arithmetic comparison",
                Rereading::Arithmetic,
            ),
            InCond::NameTest(p) => (p, "the variable name of `-v`", Rereading::Name),
        };
        write!(
            f,
            "{p} is {role} inside [[ ]], which {}: {}",
            how.does(),
            how.hint()
        )
    }
}

impl std::error::Error for InCond {}

/// `[[ … ]]`: a placeholder may not be an operand of an arithmetic comparison or of `-v`;
/// what those operands read is noted.
pub(super) fn check_cond(words: &[Word], notes: &mut Notes) -> Result<(), InCond> {
    for (i, w) in words.iter().enumerate() {
        let prev = i.checked_sub(1).map(|j| &words[j]);
        let next = words.get(i + 1);
        let arithmetic = |o: Option<&Word>| o.is_some_and(|o| ARITHMETIC.iter().any(|a| o.is(a)));
        let name_test = prev.is_some_and(|o| NAME_TESTS.iter().any(|t| o.is(t)));
        if arithmetic(prev) || arithmetic(next) {
            if let Some(p) = &w.first {
                return Err(InCond::Arithmetic(p.clone()));
            }
            notes.reread(
                w.start,
                "an arithmetic comparison in `[[ ]]`",
                Rereading::Arithmetic,
                w.reads(true),
            );
        }
        if name_test {
            if let Some(p) = &w.first {
                return Err(InCond::NameTest(p.clone()));
            }
            notes.reread(w.start, "`-v` in `[[ ]]`", Rereading::Name, w.reads(false));
        }
    }
    Ok(())
}
