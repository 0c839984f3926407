//! What the shell model learns besides quoting contexts: the places where a value, once the
//! shell has read it back as the same bytes, is read again as code, arithmetic or a variable
//! name. Quoting cannot help there, and what helps depends on the arguments (an `int` value
//! cannot hold code), which this module does not know: it lists the places and what each
//! reads, and `judge` weighs them against what the caller knows of the values.
//!
//! The places: bash's arithmetic (`$(( ))`, `(( ))`, `let`, the operands of `[[ -eq ]]` and
//! its kin, `${x:offset:length}`, array subscripts), which evaluates a variable's value as an
//! expression again, so `a[$(cmd)]` in it runs cmd; `${!name}`, which reads a value as a
//! name; the word after `>&`, which bash expands a second time when it is no number; the
//! arguments of the builtins that read them as code or names (`eval`, `read`, …); the script
//! of a shell the command starts (`sh -c SCRIPT`, also behind `env`, `sudo`, `nohup`, …)
//! and the string of `env -S`, which are parsed as shell code or split again (which words
//! those are is `programs`'); what reaches a shell's or `xargs`' standard input; the program
//! a command runs; bash's `${x@P}`; the first
//! argument of `.` / `source`, a file read as code; and the variables put in the environment
//! of a program the command starts (`NAME=v cmd`, `export`, `env NAME=v`); and, for the
//! programs the model trusts (`audit`), a file one reads as its settings or sends, and the
//! unit or command one picks. It also lists the
//! variables the command writes and what each is assigned from (a variable read in one of
//! those places, or left unquoted, may hold what was written to it), the variables it leaves
//! unquoted, the command substitutions it leaves unquoted whose command reads a variable,
//! the expansions that remove the start of a value at the start of an argument (`"${x#*.}"`,
//! which may start with `-`), whether it names `IFS`, and the `$NAME`s the shell leaves as text (inside `'…'`), which a shell
//! the command starts reads from its environment. Pure: it neither reads arguments nor
//! decides.

use std::collections::{BTreeMap, BTreeSet};

use super::Placeholder;

/// How a place reads what reaches it, which decides the advice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rereading {
    /// As an arithmetic expression (bash evaluates variables in it recursively).
    Arithmetic,
    /// As shell code, or split and parsed again.
    Code,
    /// Kept in a file not known to hold data, which outlives the press: another program may
    /// read it as code or settings later (`filed::stored`).
    Stored,
    /// As the name of a variable (bash evaluates a subscript in it).
    Name,
    /// As a file name expanded a second time (`>&`).
    Redirection,
    /// As a variable in the environment of a program the command starts, which may read it
    /// as its settings or as code (`BASH_ENV`, `ENV`, `GIT_SSH_COMMAND`, `TAR_OPTIONS`).
    Environment,
    /// Split into arguments again, quotes and all (what `xargs` reads).
    Split,
    /// As the name of the program to run (or the script a shell runs).
    Program,
    /// As an argument of a program the model does not know, which may be a wrapper that
    /// runs it as a program (`chrt -i 0 PROG`).
    Operand,
    /// As the trace prompt (`PS4`), which the shells expand for a line `set -x` traces:
    /// `$( )` in it runs.
    Prompt,
    /// As data a program reads from a file when it starts with `@` (curl's `-d @FILE`).
    FileRef,
    /// As the name of the file a form field sends (`-F name=@{{ v }}`), where `,` `;` `"`
    /// are curl's own.
    FileName,
    /// As the processes a signal goes to (`kill`'s process ids, `pkill`'s pattern): a
    /// number or a name picks them, and `-1` or `.` picks every one.
    Signal,
    /// As the name of a file a trusted program reads as its own settings, commands or list
    /// of names (`curl -K`, `ssh -F`, `tar -T`, `wget -i`): see `audit`.
    Settings,
    /// As the name of a file whose content a trusted program sends or copies elsewhere
    /// (`curl -T`, `mosquitto_pub -f`, `logger -f`).
    Sent,
    /// As a pick among everything the program can act on or do (`systemctl start UNIT`,
    /// `mpc CMD`).
    Selection,
    /// As the whole path of a file a trusted program writes (`curl -o`, `wget -O`, `sort
    /// -o`): the value picks any file, such as the config in the working directory or a
    /// table cron runs. Also the name of any file a value makes that the author's text
    /// does not fix as data (`filed::named`), and the name a copy into a directory keeps.
    Written,
    /// As a part of a written file's name the author fixed as data (`/srv/dl/{{ name }}.mp3`,
    /// `filed::named`): a value holding `/` picks a directory below the author's, a hidden one
    /// too (`.bashrc.d/x`, whose files some systems' bash sources whatever their ending).
    Below,
    /// As an archive an extraction unpacks (`curl URL | tar -x`, `unzip FILE`): the archive
    /// names the files written and holds what they hold.
    Unpacked,
}

impl Rereading {
    /// What the place does with a value, after "which …".
    pub fn does(self) -> &'static str {
        match self {
            Rereading::Arithmetic => {
                "bash evaluates as arithmetic, where a variable's value is evaluated again (a \
                 value such as `a[$(cmd)]` runs cmd)"
            }
            Rereading::Code => "is read as shell code again",
            Rereading::Stored => {
                "outlives the press, and another program may read it as code or settings (a \
                 file a service sources, a table cron runs, a profile a login shell reads)"
            }
            Rereading::Name => {
                "bash reads as a variable name, whose subscript it evaluates (a value such as \
                 `a[$(cmd)]` runs cmd)"
            }
            Rereading::Redirection => {
                "bash expands a second time when it is no number (a value holding `$(cmd)` \
                 runs cmd)"
            }
            Rereading::Environment => {
                "a program the command starts may read as its settings, and some run as code \
                 (bash expands `BASH_ENV` and sources the file, `GIT_SSH_COMMAND` and \
                 `TAR_OPTIONS` run programs)"
            }
            Rereading::Split => {
                "splits into arguments at blanks and quotes (the value `old -r victim` gives \
                 the program the option `-r`)"
            }
            Rereading::Program => {
                "runs as a program (a value such as `reboot` or `sh` would run that program)"
            }
            Rereading::Operand => {
                "may be more than data to it: the program it runs, should it be a wrapper (as \
                 `chrt -i 0 PROG`, `runuser -u USER -- PROG`, `systemd-run PROG` and any \
                 script that runs \"$@\" are: `rm`, `reboot` or `/bin/sh` would run), code \
                 of its own (`make URL=…` pastes a value into a recipe its shell runs), or a \
                 file it reads or runs; actiond knows no list of such programs to be complete"
            }
            Rereading::Prompt => {
                "the shells expand for a line `set -x` (or `sh -x`) traces, running `$( )` in \
                 it (bash for every line, dash and busybox ash in a function's body; bash \
                 imports `PS4` from the environment too, unless it runs as root)"
            }
            Rereading::FileRef => {
                "curl reads as the name of a file to send when it starts with `@` (or `<` in a \
                 form field): `@/etc/shadow` posts that file"
            }
            Rereading::FileName => {
                "curl reads as a list of files and field settings: `a.pdf,config.yaml` sends \
                 both files, `;type=` and `\"` are its own"
            }
            Rereading::Signal => {
                "picks the processes that get a signal: the process id `-1` is every process \
                 the service may signal and `0` its own group, and a pattern such as `.` \
                 matches every name, whatever the type (`int` too)"
            }
            Rereading::Settings => {
                "the program opens as a file of its own settings, commands or list of names \
                 (curl's `-K` reads options such as `output` and `upload-file`, ssh's `-F` \
                 `ProxyCommand`, a line `--…` of `tar -T` is an option): the value picks the \
                 file, such as one a presser uploaded or one of the system's"
            }
            Rereading::Sent => {
                "the program opens as a file whose content it sends or copies elsewhere (to a \
                 server, a broker, the log): `/etc/shadow` or a private key would leave the \
                 machine"
            }
            Rereading::Written => {
                "picks the file the program writes, any the command may write (actiond's \
                 config in the working directory, a table cron runs, a profile), with what it \
                 downloads, sorts or prints in it"
            }
            Rereading::Below => {
                "may hold `/` and so pick a directory below the one written, a hidden one too \
                 (`.bashrc.d/x`: some systems' bash sources every file of `~/.bashrc.d`, \
                 whatever its ending)"
            }
            Rereading::Unpacked => {
                "picks the files the extraction writes and what they hold: any name below its \
                 directory (`.bashrc`, `.ssh/authorized_keys`, a script a service runs), and \
                 whatever its program does with a file it finds (a plugin, a hook)"
            }
            Rereading::Selection => {
                "picks what the program acts on among all it knows: any unit of systemd \
                 (`debug-shell.service` is a root shell on tty9, `rescue.target` stops the \
                 rest, `link /path/x.service` adds a unit whose `ExecStart=` runs), any command \
                 of `mpc` or `vcgencmd`, any image or container of docker (the image an app \
                 runs next, the container a file lands in), any topic of an MQTT broker (the \
                 device that acts)"
            }
        }
    }

    /// How to do without it. None of these routes reads the value as code again.
    pub fn hint(self) -> &'static str {
        match self {
            Rereading::Arithmetic => {
                "declare the argument `type: int` (whose values cannot hold code) and write its \
                 variable there (`$(( N * 60 ))` for an argument `n`), compare the value as text \
                 inside [ ] (`[ \"$ACTIOND_ARG_NAME\" -gt 3 ]`), or hand it to a program with \
                 `exec:`"
            }
            Rereading::Code => {
                "pass the value as data instead: as a positional parameter of the script (`sh \
                 -c 'echo \"$1\"' sh {{ v }}`), or read \"$ACTIOND_ARG_NAME\" inside it, or \
                 use `exec:` with no shell; an argument of `type: int` may stand there"
            }
            Rereading::Stored => {
                "write the value into a file known to hold data only: one whose name ends in a \
                 data ending (`.txt`, `.log`, `.csv`, `.json`, `.md`, `.pdf`, `.jpg`, `.mp3`, …; \
                 docs/arguments.md lists them) in a directory of your own, written out \
                 (`/srv/notes/today.txt`) or with the value between the directory and the \
                 ending (`/srv/notes/{{ day }}.txt`)"
            }
            Rereading::Name => {
                "a value cannot be a variable name: write the name out in the command (and the \
                 value as data, e.g. `printf -v out %s \"$ACTIOND_ARG_NAME\"`), or use `exec:`"
            }
            Rereading::Redirection => {
                "write `>FILE 2>&1` instead of `>& FILE` (the word after `>` is expanded once: \
                 `>\"$ACTIOND_ARG_NAME\" 2>&1`), or use `exec:`"
            }
            Rereading::Environment => {
                "the programs the command starts already have the value as \
                 \"$ACTIOND_ARG_NAME\", a name no program reads as its settings: pass it to \
                 them as an argument (`cmd \"$ACTIOND_ARG_NAME\"`), or use `exec:`"
            }
            Rereading::Split => {
                "give the value to the program as one argument (`rm -f -- \
                 \"$ACTIOND_ARG_NAME\"`), read lines with `while IFS= read -r f; do rm -f -- \
                 \"$f\"; done`, or have xargs read NUL-separated items (`xargs -0`) written \
                 whole (`printf '%s\\0' \"$ACTIOND_ARG_NAME\"`)"
            }
            Rereading::Program => {
                "write the program's name out and pass the value to it as an argument, pick \
                 the program with `case \"$ACTIOND_ARG_NAME\" in a) prog-a ;; b) prog-b ;; \
                 esac`, or give the argument `choices:` (your own values may name programs)"
            }
            Rereading::Operand => {
                "write the program out (`chrt -i 0 /usr/local/bin/backup {{ file }}`, the value \
                 after it), or give the argument a type whose values are data in every \
                 language (`int`, `datetime`, `checkbox`) or `choices:`; if the program takes \
                 the argument as data only (it runs, evaluates and opens nothing the value \
                 names), set `allowUnknownProgram: true` on the argument"
            }
            Rereading::Prompt => {
                "write `PS4` out in the command (`PS4='+ '`) with no value in it, and print \
                 the value as data where the trace should show it (`printf '%s\\n' \
                 \"$ACTIOND_ARG_NAME\" >&2`)"
            }
            Rereading::FileRef => {
                "send the value with `--data-raw` (curl reads no file there), or give the \
                 argument a type that cannot start with `@` (`ascii_sentence`, `url`, `email`, \
                 …) or `choices:`"
            }
            Rereading::FileName => {
                "send the file on curl's input, `-F 'document=@-;filename=scan.pdf' < \
                 {{ filepath }}`, or give the argument a type that holds no `,` (`ascii_identifier`, \
                 …) or `choices:`"
            }
            Rereading::Signal => {
                "give the argument `choices:` (the processes or services you mean), name the \
                 process in the command (`pkill -x -- kodi`), or stop a service by its unit \
                 (`systemctl stop {{ unit }}` with choices)"
            }
            Rereading::Settings => {
                "write the file's name out in the command, or give the argument `choices:` \
                 (the files you mean); pass the value itself as data (curl's `--url {{ v }}`, \
                 a name on tar's command line after `--`)"
            }
            Rereading::Sent => {
                "write the file's name out in the command (`curl -T /srv/out/report.pdf`), or \
                 give the argument `choices:` (the files you mean)"
            }
            Rereading::Written => {
                "write a directory of your own before the value and a data ending after it, \
                 in the last segment (`curl -o /srv/downloads/{{ name }}.mp3`, `> \
                 /srv/reports/{{ day }}.txt`: a value then stays below the directory, one \
                 that holds `..` is refused, and the file holds data), or write the name out \
                 (`-o /srv/downloads/song.mp3`), or give the argument `choices:` (the files \
                 you mean); a download the url names (`curl -O`, `wget URL`, `wget -P DIR`) \
                 and a copy into a directory (`mv {{ filepath }} /srv/inbox/`) need such a \
                 name too (`-o /srv/downloads/{{ name }}.mp3`, `mv {{ filepath }} \
                 /srv/inbox/upload.pdf`); the data endings are listed in docs/arguments.md"
            }
            Rereading::Below => {
                "give the argument a type whose values hold no `/` (`ascii_identifier`, \
                 `ascii_sentence`, `unicode_identifier`, `int`, `datetime`) or `choices:`, or write the \
                 whole name out"
            }
            Rereading::Unpacked => {
                "keep the archive as a file (`curl -o /srv/downloads/{{ name }}.tar.gz \
                 {{ url }}`: an archive is data until extracted) and extract it yourself, or \
                 list what it holds (`tar -tzf`); actiond cannot know what the names an \
                 archive carries will be read as, whatever directory it is extracted into"
            }
            Rereading::Selection => {
                "give the argument `choices:` (the units, commands, images, containers or \
                 topics you mean), or write the name out and put the value inside it where it \
                 is data (`systemctl restart app@{{ instance }}.service`, `docker pull \
                 example/app:{{ tag }}`, `mosquitto_pub -t home/{{ room }}/light`)"
            }
        }
    }
}

/// What a variable assigned a part of a value holds (`host=${TARGET#*.}`), as `judge` reads it.
pub const PART_OF_A_VALUE: &str = "a part of a value (`${NAME#…}`, `${NAME/…}`, `${NAME:…}`)";

/// What a place reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    /// A variable by name: `N`, `$N`, `${N}`, `ACTIOND_ARG_N`.
    Variable(String),
    /// A placeholder, quoted for the shell that reads it first and read again after.
    Hole(Placeholder),
    /// Something that may hold any value the command has: a positional parameter (`$1`,
    /// `$@`), `$_`, the output of `$( )`, a script actiond cannot read. Described.
    Unknown(String),
    /// The output of a command substitution whose command reads no variable (`$(date
    /// +%F)`), described: it holds no value the command received, so a copy of it is never
    /// split into one (`d=$(date +%F); rm $d`); but a place that reads code counts it like
    /// `Unknown`, as the command may read a file or its input that a value reached.
    Computed(String),
    /// What a file named as data holds (`$(cat radio.txt)`, by the file's name): any action,
    /// or an earlier press, may have written a value into it, so a place that reads code
    /// counts it whatever this command's own values (`judge`).
    Stored(String),
}

/// One place where bash reads a value again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reread {
    /// The construct, as a reader finds it: "`$(( ))`", "the script of `sh -c`".
    pub place: String,
    pub rereading: Rereading,
    /// The line of the command text it stands on (1-based).
    pub line: usize,
    pub reads: Vec<Read>,
}

/// Where the model stopped following the command (see `lexer`): names after it are unseen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lost {
    /// The byte offset in the command text.
    pub at: usize,
    pub line: usize,
    pub why: String,
}

/// Everything the model noted about one command besides its placeholders.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    pub rereads: Vec<Reread>,
    /// Variables the command assigns, each with whether the value may hold data (anything
    /// but a plain literal, a number or arithmetic).
    pub written: BTreeMap<String, bool>,
    /// A builtin writes a variable whose name actiond cannot read (`read "$x"`): any
    /// variable may hold data.
    pub written_unknown: bool,
    /// `$NAME`s the shell leaves as text (inside `'…'`, `$'…'`, a quoted here-document, or
    /// after a backslash): a shell the command starts reads them from its environment.
    pub unexpanded: BTreeSet<String>,
    /// Variables expanded outside quotes (`$NAME`, `${NAME}` in a word that is no
    /// assignment), each with the first line it stands on: the shell splits the value into
    /// words and expands globs in them. A positional parameter is noted as written (`1`,
    /// `@`, `*`), a variable named by a value as `!name`.
    pub unquoted: BTreeMap<String, usize>,
    /// What each variable the command assigns is assigned from (`x=$NAME` reads `NAME`,
    /// `read x` something unknown), so that a value copied into `x` is followed there. The
    /// positional parameters (`set --`, a function's arguments) are noted as `@`.
    pub sources: BTreeMap<String, Vec<Read>>,
    /// The command names `IFS` as a word anywhere (`IFS=.`, `export IFS`, `read IFS`,
    /// `local IFS`): any character of a value may then split it.
    pub ifs: bool,
    /// Command substitutions (`$( )`, backticks) that stand outside quotes and whose
    /// command reads something that may hold a value: the shell splits their output.
    pub outputs: Vec<Output>,
    /// Expansions that remove a prefix or replace text at the start of an argument.
    pub stripped: Vec<Stripped>,
    /// The first line where the command writes what may hold a value into a file or a pipe
    /// (`printf %s "$NAME" > f`, `echo "$NAME" | sh -c '…'`): a command substitution that
    /// reads no variable may read it there (`$(cat f)`, `$(< f)`, `$(cat)`).
    pub spilled: Option<usize>,
    /// The files the command writes what may hold a value into (`printf %s "$NAME" > f`,
    /// `… | tee f`): a later command that runs one as a script or splits it into arguments
    /// reads the value again (`filed`).
    pub filed: Vec<Filed>,
    /// Files named as data (`filed::data_file`: `radio.txt`, `state.json`) that the command
    /// runs as a script, sources, splits into arguments, reads as code on its input or as a
    /// list of urls or settings, or copies to a name not known to hold data, each with its
    /// line and what it does: any action may write a value into such a file, so none may
    /// take one for more than data (`config::command` refuses it).
    pub runs_data: Vec<(Vec<u8>, usize, String)>,
    /// Files named as data given to a program not known to read them as data only
    /// (`filed::unknown_readers`), each with its line and the program (`None`: one an
    /// expansion names): refused by `config::command` unless the action's
    /// `allowUnknownProgram` says its programs read them as data.
    pub unknown_readers: Vec<(Vec<u8>, usize, Option<Vec<u8>>)>,
    /// Variables assigned the name of a file named as data (`F=/srv/radio.txt`, `for f in
    /// /srv/jobs/*.txt`), with the name: a word that is only such a variable names that file
    /// where a file named as data is refused as more than data (`Word::data_file`).
    pub data_names: BTreeMap<String, Vec<u8>>,
    /// Variables assigned plain text (`d=/srv/notes`, `e=txt`), with it; `None` for one
    /// assigned more than one text, or anything else: the text a word built from one of them
    /// names (`"$d/note.txt"`, `note.$e`), where a file named as data is refused as more than
    /// data (`Word::built_name`).
    pub consts: BTreeMap<String, Option<Vec<u8>>>,
    /// What a file named as data holds (its name), standing where it is more than one word of
    /// data, whatever the values: on its line, with what happens there (outside quotes, or
    /// starting an argument before `--`). Refused by `config::command`.
    pub data_words: Vec<(String, usize, &'static str)>,
    /// The variables expanded at the start of an argument before any `--`, each with its
    /// line: what a file named as data holds, copied into one, is an option there.
    pub leading: Vec<(String, usize)>,
    /// The placeholders that start an argument of a command before any `--` (not `echo`'s),
    /// each with its line: where a program reads a value starting with `-` as an option
    /// (`config::command` weighs a `regex:` argument's pattern there).
    pub option_holes: Vec<(Placeholder, usize)>,
    pub lost: Option<Lost>,
    /// The names in the plain text a variable is assigned (`m=n`, `m=n+1`): bash's
    /// arithmetic evaluates `m` to `n` and then `n`'s value, so a value in `n` is read there
    /// through `m`.
    pub named: BTreeMap<String, BTreeSet<String>>,
    /// Variables expanded at the start of a command's argument before any `--`, quoted or
    /// not (`du "$dir"`): a value copied into one starts that argument (`starts`).
    pub starts: BTreeSet<String>,
    /// The words that name a directory code is taken from (`cd DIR`, `make -C DIR`), with
    /// what reaches each (`directories`).
    pub directories: Vec<Directory>,
    /// The command ran `set -a` (`set -o allexport`): every assignment after it is exported.
    pub allexport: bool,
    /// The directories the shell may be in (`filed::lands`): where a relative name lands.
    pub cwd: Cwd,
    /// The first form only bash reads (`<<<`, `<( )`), with its line: in a `shell:`, which
    /// `/bin/sh` runs, dash stops with a syntax error at every press.
    pub bash_only: Option<(usize, &'static str)>,
}

/// The directories the shell may be in when a command runs, for where a relative name lands
/// (`filed::lands`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cwd {
    /// The action's `workingDirectory` (`None`: the start directory is the author's, and a
    /// relative name is judged as written).
    pub start: Option<Vec<u8>>,
    /// Every directory a `cd` or `pushd` before may have changed to (joined with the start
    /// directory's name when relative and no `workingDirectory` is set).
    pub dirs: Vec<Vec<u8>>,
    /// A `cd` changed to a directory the model cannot resolve (`cd "$1"`).
    pub unknown: bool,
    /// Each variable with the plain texts it is assigned (`None`: also something else), for
    /// `cd "$NAME"`.
    pub vars: BTreeMap<String, Option<Vec<Vec<u8>>>>,
    /// The links `ln` made before (`ln -sfn /etc/logrotate.d /srv/notes/rot`): each link's
    /// name and what it leads to (`None`: an expansion makes it). A write through one lands
    /// at its target.
    pub links: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

/// A word that names a directory code is taken from (`directories`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directory {
    pub place: &'static str,
    pub line: usize,
    pub reads: Vec<Read>,
    /// A value or an expansion starts the word (`cd {{ dir }}`, `cd "$d"`): the value may be
    /// the whole path, an absolute one too.
    pub starts: bool,
}

/// An expansion that removes a prefix of a variable's value or replaces text in it
/// (`${NAME#*.}`, `${NAME/x/-}`, `${NAME:1}`), or a command substitution whose command reads
/// a value (`"$(printf %s "$NAME" | tr _ -)"`, whose output is the value changed), standing
/// at the start of a command's argument, quoted or not: it may start with `-` although the
/// value does not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stripped {
    /// The variable, as written after `$` (`@` for a positional parameter), or for a
    /// command substitution what it is ("the output of `$( )`").
    pub variable: String,
    pub line: usize,
    /// For a command substitution (`"$(printf %s "$NAME" | tr _ -)"`): what its command
    /// reads (`output_reads`), whose output may be a changed value.
    pub output: Option<Vec<Read>>,
}

/// A file a command wrote what may hold a value into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filed {
    /// Its name as written, `./` dropped; `None` when an expansion makes it.
    pub name: Option<Vec<u8>>,
    /// The line of the command that wrote it.
    pub line: usize,
    /// What was written: the command's words and its input.
    pub reads: Vec<Read>,
}

/// An unquoted command substitution whose command reads `reads` (see `output_reads`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// "`$( )`" or "a backtick command".
    pub what: &'static str,
    pub line: usize,
    pub reads: Vec<Read>,
}

impl Analysis {
    /// Whether `name` may hold data the command put there.
    pub fn may_hold_data(&self, name: &str) -> bool {
        self.written_unknown || self.written.get(name).copied().unwrap_or(false)
    }

    /// Notes an assignment to `name`.
    pub(crate) fn write(&mut self, name: &[u8], data: bool) {
        let name = String::from_utf8_lossy(name).into_owned();
        let entry = self.written.entry(name).or_insert(false);
        *entry |= data;
    }

    /// The file named as data whose content `read` may hold (`Read::Stored`), followed
    /// through the variables it was copied into (`s=$(cat radio.txt); eval "$s"`).
    pub fn stored(&self, read: &Read) -> Option<String> {
        self.stored_from(read, &mut BTreeSet::new())
    }

    fn stored_from(&self, read: &Read, seen: &mut BTreeSet<String>) -> Option<String> {
        match read {
            Read::Stored(name) => Some(name.clone()),
            Read::Variable(v) => {
                let key = if is_positional(v) {
                    POSITIONAL
                } else {
                    v.as_str()
                };
                if !seen.insert(key.to_string()) {
                    return None;
                }
                let sources = self.sources.get(key)?;
                sources.iter().find_map(|r| self.stored_from(r, seen))
            }
            _ => None,
        }
    }

    /// The name of a file named as data that the variable `name` may hold: assigned to it,
    /// or to a variable copied into it (`G=$F`).
    pub fn data_name(&self, name: &str) -> Option<&[u8]> {
        let mut seen = BTreeSet::new();
        let mut next = vec![name.to_string()];
        while let Some(v) = next.pop() {
            if !seen.insert(v.clone()) {
                continue;
            }
            if let Some(n) = self.data_names.get(&v) {
                return Some(n);
            }
            for r in self.sources.get(&v).into_iter().flatten() {
                if let Read::Variable(w) = r {
                    next.push(w.clone());
                }
            }
        }
        None
    }

    /// Notes an assignment to `name` of the plain text `text`, whose names bash's arithmetic
    /// follows.
    pub(crate) fn write_text(&mut self, name: &[u8], text: &[u8]) {
        let names = arithmetic_names(text);
        if names.is_empty() {
            return;
        }
        let name = String::from_utf8_lossy(name).into_owned();
        self.named.entry(name).or_default().extend(names);
    }

    /// The trace prompt: where the command assigns `PS4` (in any way: `PS4=…`, `read`,
    /// `export`, `${PS4:=…}`, in a script it starts too), what it is assigned is expanded
    /// as a prompt when tracing is on. Tracing may come on from anywhere (`set -x`, `set -o
    /// xtrace`, `bash -x`, `SHELLOPTS`), so a value in `PS4` is refused whether or not the
    /// command turns it on. Called once, on the whole command.
    pub(crate) fn trace_prompt(&mut self, line: usize) {
        if !self.sources.contains_key(TRACE_PROMPT) {
            return;
        }
        self.rereads.push(Reread {
            place: "the shell's trace prompt `PS4`".to_string(),
            rereading: Rereading::Prompt,
            line,
            reads: vec![Read::Variable(TRACE_PROMPT.to_string())],
        });
    }

    /// Notes an assignment to `name` of a value that reads `reads` (data when it reads
    /// anything).
    pub(crate) fn write_from(&mut self, name: &[u8], reads: Vec<Read>) {
        self.write(name, !reads.is_empty());
        let name = String::from_utf8_lossy(name).into_owned();
        self.sources.entry(name).or_default().extend(reads);
    }
}

/// The trace prompt, which the shells expand (`$( )` and all) before a line `set -x` traces
/// (bash every line, dash and busybox ash in a function's body).
pub const TRACE_PROMPT: &str = "PS4";

/// The key of the positional parameters in `Analysis::sources`.
pub const POSITIONAL: &str = "@";

/// The key of `$0` in `Analysis::sources`: the shell's name, unless a shell the command
/// starts is given one after its script (`sh -c 'rm $0' {{ name }}`).
pub const SCRIPT_NAME: &str = "0";

/// Whether an unquoted name noted in `Analysis::unquoted` is a positional parameter (`1`,
/// `@`, `*`; `0` is not one).
pub fn is_positional(name: &str) -> bool {
    name == "@"
        || name == "*"
        || (name != SCRIPT_NAME && name.bytes().next().is_some_and(|c| c.is_ascii_digit()))
}

/// What the command of a command substitution (`text`, the code between `$(` and `)` or
/// between backticks) reads that may carry a value into its output: every variable it
/// expands (`$x`, `${x…}`, `$1`, `$@`, `$0`, `$_`), wherever it stands in the text (quoted,
/// in a here-document, in a nested substitution: more than the shell reads is harmless, as
/// only a variable that may hold a value counts), the directory `pwd` prints and the stack
/// `dirs` prints, and, where it holds arithmetic, every name. Empty for a command such as
/// `date +%F`, whose output holds no value the command received. Line continuations are
/// joined first, as the shells join them.
pub fn output_reads(text: &[u8]) -> Vec<Read> {
    let mut b = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'\\' && text.get(i + 1) == Some(&b'\n') {
            i += 2;
            continue;
        }
        b.push(text[i]);
        i += 1;
    }
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut names: Vec<String> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'$' {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        if b.get(j) == Some(&b'{') {
            j += 1;
            if matches!(b.get(j), Some(b'#' | b'!')) {
                j += 1;
            }
        }
        match b.get(j) {
            Some(&c) if c.is_ascii_alphabetic() || c == b'_' => {
                let end = (j..b.len()).find(|&k| !ident(b[k])).unwrap_or(b.len());
                names.push(String::from_utf8_lossy(&b[j..end]).into_owned());
                i = end;
                continue;
            }
            Some(b'0') => names.push(SCRIPT_NAME.to_string()),
            Some(b'1'..=b'9' | b'@' | b'*') => names.push(POSITIONAL.to_string()),
            _ => {}
        }
        i = j;
    }
    // Words: `pwd` and `dirs` print what `cd` and `pushd` were given.
    let mut k = 0;
    while k < b.len() {
        if !ident(b[k]) {
            k += 1;
            continue;
        }
        let end = (k..b.len()).find(|&e| !ident(b[e])).unwrap_or(b.len());
        let before = k > 0 && b[k - 1] == b'$';
        match &b[k..end] {
            b"pwd" if !before => names.push("PWD".to_string()),
            b"dirs" if !before => names.push("DIRSTACK".to_string()),
            _ => {}
        }
        k = end;
    }
    if b.windows(2).any(|w| w == b"((") || b.windows(4).any(|w| w == b"let ") {
        names.extend(arithmetic_names(&b));
    }
    let mut out: Vec<Read> = Vec::new();
    for n in names {
        let read = Read::Variable(n);
        if !out.contains(&read) {
            out.push(read);
        }
    }
    out
}

/// What the lexer and the command rules note while they read one command text.
#[derive(Debug)]
pub(crate) struct Notes<'a> {
    text: &'a [u8],
    pub analysis: Analysis,
    /// Scripts in plain text that a shell the command starts runs (`sh -c '…'`): the offset
    /// of their word, their text and what they are. Read after the command (`template`).
    pub scripts: Vec<(usize, Vec<u8>, &'static str)>,
    /// What reaches the standard input of the shell that runs a script of `scripts`, by the
    /// offset of its word (`su pi -c 'crontab -'` fed a value): its commands read it.
    pub script_inputs: BTreeMap<usize, Vec<Read>>,
}

impl<'a> Notes<'a> {
    pub fn new(text: &'a [u8]) -> Notes<'a> {
        Notes {
            text,
            analysis: Analysis::default(),
            scripts: Vec::new(),
            script_inputs: BTreeMap::new(),
        }
    }

    /// The line of byte offset `at` (1-based).
    pub fn line(&self, at: usize) -> usize {
        self.text[..at.min(self.text.len())]
            .iter()
            .filter(|&&c| c == b'\n')
            .count()
            + 1
    }

    /// Notes a place at `at` that reads `reads` again (nothing when it reads nothing).
    /// A write of `name` by other means than an assignment word (`for NAME in …`, `read
    /// NAME`, `printf -v NAME`): where the name stays exported (one the shell got from its
    /// environment, or any after `set -a`), what it holds reaches every program the command
    /// starts, as with `export NAME=…` (`commands::environment` weighs assignment words).
    pub fn exported_write(&mut self, at: usize, name: &[u8], reads: Vec<Read>) {
        if self.analysis.allexport || super::inherited::inherited(name) {
            let shown = String::from_utf8_lossy(name);
            self.reread(
                at,
                format!("the environment variable `{shown}` of what the command starts"),
                Rereading::Environment,
                reads,
            );
        }
    }

    pub fn reread(
        &mut self,
        at: usize,
        place: impl Into<String>,
        rereading: Rereading,
        reads: Vec<Read>,
    ) {
        if reads.is_empty() {
            return;
        }
        let line = self.line(at);
        self.analysis.rereads.push(Reread {
            place: place.into(),
            rereading,
            line,
            reads,
        });
    }
}

/// The variables bash fills with data on its own: what `read` and `select` read (`REPLY`),
/// `getopts`' `OPTARG`, `mapfile`'s `MAPFILE`, what `=~` matched, the last argument of the
/// last command (`$_`), the command being run and the whole `-c` text, the directory `cd`
/// went to (and bash's stack of them, `pushd`'s `DIRSTACK`), and `BASH_ARGV0`, bash's name
/// for `$0`. The rest of bash's variables hold numbers (`BASH_ARGC`, `PIPESTATUS`,
/// `LINENO`), names the command wrote itself (`FUNCNAME`, `BASH_SOURCE`), or are set only
/// while a completion runs (`COMP_WORDS`, `COMP_LINE`), which a `-c` command never does.
pub const DATA_VARIABLES: &[&str] = &[
    "_",
    "REPLY",
    "OPTARG",
    "MAPFILE",
    "BASH_REMATCH",
    "BASH_ARGV",
    "BASH_COMMAND",
    "BASH_EXECUTION_STRING",
    "COPROC",
    "READLINE_LINE",
    "PWD",
    "OLDPWD",
    "DIRSTACK",
    "BASH_ARGV0",
];

/// The identifiers of arithmetic text (`x * 60 + y[1]` names `x` and `y`), which bash reads
/// as variables; numbers (`0x1F`, `16#ff`) are not names.
pub fn arithmetic_names(text: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        if c.is_ascii_digit() {
            while i < text.len() && (text[i].is_ascii_alphanumeric() || b"_#@".contains(&text[i])) {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < text.len() && (text[i].is_ascii_alphanumeric() || text[i] == b'_') {
                i += 1;
            }
            out.push(String::from_utf8_lossy(&text[start..i]).into_owned());
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_substitution_reads_what_it_expands() {
        let names = |t: &str| -> Vec<String> {
            output_reads(t.as_bytes())
                .into_iter()
                .map(|r| match r {
                    Read::Variable(v) => v,
                    other => panic!("{other:?}"),
                })
                .collect()
        };
        let table: &[(&str, &[&str])] = &[
            ("date +%F", &[]),
            ("printf %s \"$NAME\"", &["NAME"]),
            ("basename ${x%.txt}", &["x"]),
            ("echo ${#x} ${!y}", &["x", "y"]),
            ("echo $1 $@ $* $0 $_ $? $$", &["@", "0", "_"]),
            ("cat <<E\n$NAME\nE\n", &["NAME"]),
            ("echo $ACTIOND_ARG_\\\nNAME", &["ACTIOND_ARG_NAME"]),
            ("pwd", &["PWD"]),
            ("dirs -l", &["DIRSTACK"]),
            ("echo $(( n + 1 ))", &["echo", "n"]),
            ("echo $pwd", &["pwd"]),
        ];
        for (text, want) in table {
            assert_eq!(&names(text), want, "{text:?}");
        }
    }

    #[test]
    fn arithmetic_names_are_the_identifiers_not_the_numbers() {
        assert_eq!(arithmetic_names(b"x * 60 + y[1]"), ["x", "y"]);
        assert_eq!(arithmetic_names(b"0x1F + 16#ff - 2#101 + _a"), ["_a"]);
        assert!(arithmetic_names(b"1 << 2").is_empty());
    }
}
