//! Command templates: `{{ name }}` placeholders in `shell:` and `exec:` commands, compiled
//! once at config load and rendered per execution in a single pass.
//!
//! For `shell:` the text is read by `lexer`, a model of how dash, bash (plain and `--posix`)
//! and busybox ash read a command, to learn the quoting context of every placeholder:
//! unquoted, inside double quotes, or inside single quotes. A value is then quoted for exactly
//! that context, so the shell reads it back as the same bytes and never as syntax; injection
//! is impossible by construction, not by a deny-list of characters. Wherever the model is not
//! exact (a construct the four shells read differently, or one it does not follow), it stops,
//! and a placeholder from there on is refused when the config loads, with the fix (`exec:` or
//! the environment variable). `exec:` elements and titles take values literally (no shell
//! reads them). Rendering is one pass over the compiled parts, so a value containing `{{ }}`
//! is text, never a placeholder. This module is pure: it neither validates values (that is
//! the arguments module) nor runs anything.

mod audit;
mod commands;
mod directories;
mod filed;
mod html;
mod inherited;
mod judge;
mod known;
mod launchers;
mod lexer;
mod own;
mod own_git;
mod paths;
mod programs;
pub(crate) mod reread;
mod starts;
#[cfg(test)]
mod tests;

use std::fmt;

pub(crate) use commands::{DATA_OPTION, DATA_SPLIT};
pub use directories::{Reached, climbs, leads_out, reached};
pub use judge::{Reaches, Refusal, Stored, Unquoted, Values, judge, stripped, unquoted};
pub use paths::{Component, Leads, leads};
use reread::{Analysis, Read, Reread, Rereading};
pub use starts::{Copied, copied};

/// What a placeholder names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Placeholder {
    /// `{{ name }}` or `{{ .Arguments.name }}`: a declared argument.
    Argument(String),
    /// `{{ .CurrentEntity.field }}` or the legacy `{{ type.field }}`: a field of the entity
    /// instance the action is bound to (the field path, dots kept).
    Entity(String),
}

/// Why the shell model's scan ended early: shared by the lexer, which reads the words, and
/// the command-level rules, which judge a finished command.
enum Stop {
    /// The template is refused with this message.
    Refused(String),
    /// The model stopped being exact at byte `at` (the start of the command holding the
    /// construct): a placeholder from there on cannot be placed.
    Lost { at: usize, why: String },
}

impl fmt::Display for Placeholder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Placeholder::Argument(name) => write!(f, "{{{{ {name} }}}}"),
            Placeholder::Entity(field) => write!(f, "{{{{ .CurrentEntity.{field} }}}}"),
        }
    }
}

/// Where a placeholder stands, which decides how its value is quoted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// Outside any quotes in a shell command: the value becomes one single-quoted word.
    Unquoted,
    /// Inside `"…"`: `\`, `"`, `$` and backtick are escaped.
    DoubleQuoted,
    /// Inside `'…'`: the quote is closed, the value single-quoted, the quote reopened.
    SingleQuoted,
    /// Not read by a shell (`exec:` elements, titles): the value as it is.
    Literal,
    /// HTML text or a quoted attribute value (`html`): the value HTML-escaped.
    HtmlText,
    HtmlAttribute,
    /// A quoted attribute that holds an address: percent-encoded as one piece of it.
    HtmlUrl,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    Text(String),
    /// A placeholder, where it stands, and whether its value may start the word it stands in
    /// (nothing but placeholders and expansions, which may be empty, before it in the word):
    /// only there can a value that starts with `-` be read as an option.
    Hole(Placeholder, Context, Lead),
}

/// Whether a placeholder's value may start the word (the argument) it stands in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lead {
    /// It may: `ls {{ x }}`, `ls "{{ x }}"`, `exec: [ls, '{{ x }}']`, `{{ x }}/bin`.
    Starts,
    /// Text the author wrote comes first (`--name={{ x }}`, `/srv/{{ x }}`): the word starts
    /// with it, whatever the value.
    Inside,
}

/// A compiled command template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
    /// Entity fields that reach a directory code is taken from (`directories`), each with
    /// whether it may start that directory's path.
    directories: Vec<(Placeholder, bool)>,
}

/// Why a template was refused, in words that say how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    pub message: String,
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TemplateError {}

pub(crate) fn refuse(message: String) -> TemplateError {
    TemplateError { message }
}

pub(crate) const UNSAFE_HINT: &str = "actiond cannot quote a value safely there; use `exec:` instead of `shell:`, \
                           or read the value from its environment variable (e.g. \"$ACTIOND_ARG_NAME\")";

impl Template {
    /// A template with no text at all.
    pub fn empty() -> Template {
        Template {
            parts: Vec::new(),
            directories: Vec::new(),
        }
    }

    /// Compiles a `shell:` command.
    pub fn shell(text: &str) -> Result<Template, TemplateError> {
        read_shell(text).map(|(template, _)| template)
    }

    /// Compiles text that no shell reads (`exec:` elements, titles, icons).
    pub fn literal(text: &str) -> Result<Template, TemplateError> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(at) = rest.find("{{") {
            push_text(&mut parts, &rest[..at]);
            let (placeholder, len) = parse_placeholder(&rest[at..])?;
            // An `exec:` element is one argument: the value starts it when nothing the
            // author wrote comes before it (other placeholders may be empty).
            let lead = if parts.iter().any(|p| matches!(p, Part::Text(_))) {
                Lead::Inside
            } else {
                Lead::Starts
            };
            parts.push(Part::Hole(placeholder, Context::Literal, lead));
            rest = &rest[at + len..];
        }
        push_text(&mut parts, rest);
        Ok(Template {
            parts,
            directories: Vec::new(),
        })
    }

    /// Compiles HTML written in the config (icons, `display` components), with each
    /// placeholder placed where a browser reads it (`html`).
    pub fn html(text: &str) -> Result<Template, TemplateError> {
        html::compile(text).map(|parts| Template {
            parts,
            directories: Vec::new(),
        })
    }

    /// The template with `text` in front of it, written as it is (no placeholder in it is
    /// read). For actiond's own shell lines before a command (`arguments::environment`).
    pub fn after(mut self, text: &str) -> Template {
        if !text.is_empty() {
            self.parts.insert(0, Part::Text(text.to_string()));
        }
        self
    }

    /// Every placeholder with its context, in order.
    pub fn placeholders(&self) -> impl Iterator<Item = (&Placeholder, Context)> {
        self.parts.iter().filter_map(|p| match p {
            Part::Hole(ph, ctx, _) => Some((ph, *ctx)),
            Part::Text(_) => None,
        })
    }

    /// The placeholders whose value may start the word they stand in (see [`Lead`]), in
    /// order: where a value that starts with `-` would be read as an option.
    pub fn leading(&self) -> impl Iterator<Item = &Placeholder> {
        self.parts.iter().filter_map(|p| match p {
            Part::Hole(ph, _, Lead::Starts) => Some(ph),
            _ => None,
        })
    }

    pub fn has_placeholders(&self) -> bool {
        self.placeholders().next().is_some()
    }

    /// The text before the first placeholder and after the last (`filed::named`), for an
    /// `exec:` word naming a file.
    fn name_parts(&self) -> (Vec<u8>, Vec<u8>) {
        let first = self.parts.iter().position(|p| matches!(p, Part::Hole(..)));
        let last = self.parts.iter().rposition(|p| matches!(p, Part::Hole(..)));
        let text = |parts: &[Part]| -> Vec<u8> {
            parts
                .iter()
                .filter_map(|p| match p {
                    Part::Text(t) => Some(t.as_bytes()),
                    Part::Hole(..) => None,
                })
                .flatten()
                .copied()
                .collect()
        };
        match (first, last) {
            (Some(f), Some(l)) => (text(&self.parts[..f]), text(&self.parts[l + 1..])),
            _ => (text(&self.parts), Vec::new()),
        }
    }

    /// Renders the template in one pass; a placeholder without a value renders as "".
    pub fn render(&self, value: &dyn Fn(&Placeholder) -> Option<String>) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Hole(ph, ctx, _) => {
                    quote_into(&mut out, &value(ph).unwrap_or_default(), *ctx)
                }
            }
        }
        out
    }
}

/// Compiles a `shell:` command, with what the model noted besides the placeholders' contexts
/// (`reread`): the places bash reads a value again, the variables the command writes, where
/// the model stopped. The scripts of shells the command starts (`sh -c '…'`) are read too.
pub fn read_shell(text: &str) -> Result<(Template, Analysis), TemplateError> {
    read_shell_in(text, None)
}

/// `read_shell` for a command that starts in `working_directory` (the action's
/// `workingDirectory`): a relative name it writes lands there (`filed::lands`).
pub fn read_shell_in(
    text: &str,
    working_directory: Option<&[u8]>,
) -> Result<(Template, Analysis), TemplateError> {
    let cwd = reread::Cwd {
        start: working_directory.map(<[u8]>::to_vec),
        ..reread::Cwd::default()
    };
    let (template, mut analysis) = read_shell_at(text, 0, Vec::new(), Vec::new(), cwd)?;
    analysis.trace_prompt(line_of(text, reread::TRACE_PROMPT));
    Ok((template, analysis))
}

/// The first line (1-based) of `text` that holds `word`, or 1.
fn line_of(text: &str, word: &str) -> usize {
    text.lines()
        .position(|l| l.contains(word))
        .map_or(1, |i| i + 1)
}

/// How deep scripts inside scripts are read (`sh -c 'bash -c …'`).
const MAX_SCRIPT_DEPTH: u32 = 4;

/// `filed`: the files an outer command wrote a value into before it ran this script (`sh -c
/// '. ./job.sh'` runs one).
/// `stdin`: what reaches its standard input (`echo "$v" | su pi -c '…'`).
fn read_shell_at(
    text: &str,
    depth: u32,
    filed: Vec<reread::Filed>,
    stdin: Vec<Read>,
    cwd: reread::Cwd,
) -> Result<(Template, Analysis), TemplateError> {
    let reading = lexer::compile(text, filed, stdin, cwd)?;
    let mut analysis = reading.analysis;
    let mut inputs = reading.script_inputs;
    for (at, script, place) in reading.scripts {
        let line = text.as_bytes()[..at]
            .iter()
            .filter(|&&c| c == b'\n')
            .count()
            + 1;
        let stdin = inputs.remove(&at).unwrap_or_default();
        inner_script(&mut analysis, &script, place, line, depth, stdin);
    }
    Ok((
        Template {
            parts: reading.parts,
            directories: Vec::new(),
        },
        analysis,
    ))
}

/// What an `exec:` command's argv holds besides its placeholders: the script of a shell it
/// starts (`exec: [sh, -c, SCRIPT]`, behind any wrapper) is shell code. Elements that are no
/// template (an unclosed `{{`) are left to the caller, which refuses them.
pub fn read_exec(argv: &[String]) -> Analysis {
    read_exec_in(argv, None)
}

/// `read_exec` for a command that starts in `working_directory` (the action's
/// `workingDirectory`): a relative name it, or a shell it starts, writes lands there.
pub fn read_exec_in(argv: &[String], working_directory: Option<&[u8]>) -> Analysis {
    let templates: Vec<Option<Template>> = argv.iter().map(|a| Template::literal(a).ok()).collect();
    let values: Vec<Option<&[u8]>> = templates
        .iter()
        .zip(argv)
        .map(|(t, a)| {
            t.as_ref()
                .filter(|t| !t.has_placeholders())
                .map(|_| a.as_bytes())
        })
        .collect();
    let mut analysis = Analysis::default();
    analysis.cwd.start = working_directory.map(<[u8]>::to_vec);
    // The words that choose the program: a value there picks what runs. A word shaped like an
    // assignment (`env A={{ v }} prog`) is read by its `NAME=`.
    let shapes: Vec<Option<&[u8]>> = values
        .iter()
        .zip(argv)
        .map(|(&v, a)| v.or_else(|| assignment_prefix(a)))
        .collect();
    // The placeholders of the argv word at `i`, as what a place there reads.
    let holes = |i: usize| -> Vec<Read> {
        templates[i]
            .iter()
            .flat_map(|t| t.placeholders().map(|(p, _)| Read::Hole(p.clone())))
            .collect()
    };
    for (i, place) in programs::programs(&shapes) {
        let reads = holes(i);
        if !reads.is_empty() {
            analysis.rereads.push(Reread {
                place: place.to_string(),
                rereading: Rereading::Program,
                line: 1,
                reads,
            });
        }
    }
    exec_environment(&mut analysis, argv, &shapes, &holes);
    analysis.option_holes = exec_option_holes(&templates);
    // A file named as data run, sourced or listed (`exec: [sh, notes.txt]`), as in a shell.
    let uses = filed::data_uses_of(&values);
    for (_, name, program) in filed::unknown_readers(&values, &uses) {
        analysis.unknown_readers.push((name, 1, program));
    }
    for (_, name, does) in uses.into_iter().chain(commands::data_in_code(&values)) {
        analysis.runs_data.push((name, 1, does));
    }
    // `exec: [rsync, -a, /srv/inbox/, /home/pi/]` (fe30v F5, F10), as in a shell.
    for (name, does) in filed::tree_uses(&values, &reread::Cwd::default()) {
        analysis.runs_data.push((name, 1, does));
    }
    let texts: Vec<&[u8]> = argv.iter().map(|a| a.as_bytes()).collect();
    let script = launchers::scripts(&values, &texts)
        .into_iter()
        .find(|&(_, place)| place == programs::SCRIPT)
        .map(|(i, _)| i);
    for i in known::program_texts(&shapes) {
        let reads = holes(i);
        if !reads.is_empty() {
            analysis.rereads.push(Reread {
                place: known::PROGRAM_TEXT.to_string(),
                rereading: Rereading::Code,
                line: 1,
                reads,
            });
        }
    }
    if let Some((program, found)) = known::unknown(&shapes, script) {
        for i in found {
            let reads = holes(i);
            if !reads.is_empty() {
                analysis.rereads.push(Reread {
                    place: format!("{} `{program}`", known::OPERAND),
                    rereading: Rereading::Operand,
                    line: 1,
                    reads,
                });
            }
        }
    }
    for (i, place) in launchers::scripts(&values, &texts) {
        let pasted = place == programs::PASTED;
        match (values[i].filter(|_| !pasted), &templates[i]) {
            (Some(script), _) => inner_script(&mut analysis, script, place, 1, 0, Vec::new()),
            (None, Some(t)) => {
                let mut reads: Vec<Read> = t
                    .placeholders()
                    .map(|(p, _)| Read::Hole(p.clone()))
                    .collect();
                reads.push(Read::Unknown(format!(
                    "the rest of {place}, which is built from values and so not read by actiond"
                )));
                analysis.rereads.push(Reread {
                    place: place.to_string(),
                    rereading: Rereading::Code,
                    line: 1,
                    reads,
                });
            }
            (None, None) => {}
        }
        // The words after a shell's script are its `$0`, `$1`, … (as in `read_shell`).
        if place == programs::SCRIPT || pasted {
            let holes = |from: usize, to: usize| -> Vec<Read> {
                templates[from.min(argv.len())..to.min(argv.len())]
                    .iter()
                    .flatten()
                    .flat_map(|t| t.placeholders().map(|(p, _)| Read::Hole(p.clone())))
                    .collect()
            };
            for (name, reads) in [
                (reread::SCRIPT_NAME, holes(i + 1, i + 2)),
                (reread::POSITIONAL, holes(i + 2, argv.len())),
            ] {
                if !reads.is_empty() {
                    analysis.write_from(name.as_bytes(), reads);
                }
            }
        }
    }
    // The words the program reads as its own commands (`own`: a `sed` script, git's
    // settings, `gdb -ex`, …).
    for found in own::words(&shapes, &texts) {
        let starts = templates[found.at]
            .as_ref()
            .is_some_and(|t| t.leading().next().is_some());
        if found.leading && !starts {
            continue;
        }
        let mut reads: Vec<Read> = templates[found.at]
            .iter()
            .flat_map(|t| t.placeholders().map(|(p, _)| Read::Hole(p.clone())))
            .collect();
        if let Some(var) = &found.env {
            reads.push(Read::Variable(String::from_utf8_lossy(var).into_owned()));
        }
        if !reads.is_empty() {
            analysis.rereads.push(Reread {
                place: found.place.to_string(),
                rereading: found.how,
                line: 1,
                reads,
            });
        }
    }
    exec_named(&mut analysis, &templates, argv);
    analysis.trace_prompt(1);
    // The directory a program takes code from (`make -C DIR`): what reaches it is weighed
    // by `config::command` (`directories`).
    let expanded: Vec<bool> = values.iter().map(Option::is_none).collect();
    for (i, place) in directories::words(&texts, &expanded) {
        let reads = holes(i);
        if !reads.is_empty() {
            let starts = templates[i]
                .as_ref()
                .is_some_and(|t| t.leading().next().is_some());
            analysis.directories.push(reread::Directory {
                place,
                line: 1,
                reads,
                starts,
            });
        }
    }
    analysis
}

/// The files an `exec:` command writes whose name a value makes, the copies into a
/// directory keeping a name a value picks, and an extraction of an archive a value picks, as
/// in `shell:` (`filed::named`).
fn exec_named(analysis: &mut Analysis, templates: &[Option<Template>], argv: &[String]) {
    let parts: Vec<Option<(Vec<u8>, Vec<u8>)>> = templates
        .iter()
        .map(|t| {
            t.as_ref()
                .filter(|t| t.has_placeholders())
                .map(Template::name_parts)
        })
        .collect();
    let heads: Vec<Vec<u8>> = argv
        .iter()
        .zip(&parts)
        .map(|(a, p)| match p {
            Some((dir, _)) => [dir.as_slice(), filed::EXPANDED].concat(),
            None => a.as_bytes().to_vec(),
        })
        .collect();
    let heads: Vec<Option<&[u8]>> = heads.iter().map(|h| Some(h.as_slice())).collect();
    let holes = |i: usize| -> Vec<Read> {
        templates[i]
            .iter()
            .flat_map(|t| t.placeholders().map(|(p, _)| Read::Hole(p.clone())))
            .collect()
    };
    let mut notes = reread::Notes::new(b"");
    notes.analysis.cwd = analysis.cwd.clone();
    // What the program writes into the files it names (`curl -o F {{ url }}`: what the url
    // serves) may hold any value of its words, as in `shell:` (`filed::written`).
    let globs: Vec<Option<Vec<u8>>> = parts
        .iter()
        .map(|p| match p {
            Some((d, t)) => filed::named::glob(d, t).or_else(|| Some(filed::EXPANDED.to_vec())),
            None => None,
        })
        .collect();
    let mut reads: Vec<Read> = (1..argv.len()).flat_map(holes).collect();
    // What a file named as data it reads holds goes there too (`exec: [dd,
    // if=/srv/n/x.txt, of=/etc/…]`, `[sort, -o, F, x.txt]`; fe30x F9), as in `shell:`.
    reads.extend(filed::named_by(&heads, &[]));
    filed::lands::wrapper_chdir(&mut notes.analysis.cwd, &heads);
    let names = filed::written(&heads, &globs, &[]);
    filed::note_written(&mut notes, names, reads, 0);
    for n in filed::named::named_at(&heads) {
        if let Some((dir, tail)) = &parts[n.at] {
            let dir = dir.get(n.from..).unwrap_or_default();
            filed::named::note_named(&mut notes, 0, (dir, tail), holes(n.at), n.writer);
        }
    }
    let globs: Vec<Option<Vec<u8>>> = parts
        .iter()
        .map(|p| p.as_ref().and_then(|(d, t)| filed::named::glob(d, t)))
        .collect();
    for source in filed::named::copied(&heads, &globs) {
        let tail = parts[source]
            .as_ref()
            .map_or(&[][..], |(_, t)| t.as_slice());
        if filed::named::contents_only(&heads, tail) {
            continue;
        }
        notes.reread(
            0,
            filed::named::COPIED_NAME,
            Rereading::Written,
            holes(source),
        );
    }
    // `exec: [git, pull, '{{ url }}']`, `exec: [gunzip, '{{ filepath }}']` (fe30v F7, F8).
    for at in filed::named::clone_url(&heads) {
        let place = filed::named::CLONED;
        notes.reread(0, place, Rereading::Unpacked, holes(at));
    }
    for at in filed::named::decompressed_at(&heads) {
        if let Some((dir, tail)) = &parts[at] {
            let tail = filed::named::without_compression(tail);
            let writer = filed::named::DECOMPRESSOR;
            filed::named::note_named(&mut notes, 0, (dir, &tail), holes(at), writer);
        }
    }
    // `curl -o '/srv/dl/#1.txt' {{ url }}` (fe30v F3): the url's glob fills the name.
    if !filed::named::curl_globbed(&heads).is_empty() {
        let reads = (1..argv.len()).flat_map(holes).collect();
        notes.reread(0, filed::named::CURL_GLOB, Rereading::Written, reads);
    }
    if filed::named::extracts(&heads) {
        let mut reads: Vec<Read> = (1..argv.len()).flat_map(holes).collect();
        // An archive named as data (`exec: [tar, -xzf, /srv/dl/theme.tgz, -C, /]`, fe30x F9).
        reads.extend(
            heads
                .iter()
                .skip(1)
                .flatten()
                .filter_map(|w| filed::data_in_word(w))
                .map(Read::Stored),
        );
        notes.reread(0, filed::named::UNPACKED, Rereading::Unpacked, reads);
    }
    analysis.rereads.append(&mut notes.analysis.rereads);
}

/// The placeholders that start an `exec:` element before any `--` (`Analysis::option_holes`):
/// options to the program there.
fn exec_option_holes(templates: &[Option<Template>]) -> Vec<(Placeholder, usize)> {
    let dashes = |t: &Template| t.parts == [Part::Text("--".to_string())];
    // `printf FORMAT ARGS`: the words after the format are its operands.
    let printf = templates.first().and_then(Option::as_ref).is_some_and(
        |t| matches!(&t.parts[..], [Part::Text(p)] if p.rsplit('/').next() == Some("printf")),
    );
    templates
        .iter()
        .skip(1)
        .take(if printf { 1 } else { usize::MAX })
        .take_while(|t| t.as_ref().is_none_or(|t| !dashes(t)))
        .filter_map(|t| t.as_ref().and_then(|t| t.leading().next()))
        .map(|p| (p.clone(), 1))
        .collect()
}

/// `exec: [env, "NAME={{ v }}", prog, …]`: the environment of what `env` starts, as in
/// `shell:` (`commands::environment`), which a program may read as its settings or as code
/// (`GIT_SSH_COMMAND`, `BASH_ENV`).
fn exec_environment(
    analysis: &mut Analysis,
    argv: &[String],
    shapes: &[Option<&[u8]>],
    holes: &dyn Fn(usize) -> Vec<Read>,
) {
    for c in programs::chain(shapes) {
        if shapes[c].map(|w| w.rsplit(|&b| b == b'/').next().unwrap_or(w)) != Some(&b"env"[..]) {
            continue;
        }
        let mut skip = false;
        for (j, arg) in argv.iter().enumerate().skip(c + 1) {
            if std::mem::take(&mut skip) {
                continue;
            }
            if arg.starts_with('-') {
                skip = matches!(arg.as_str(), "-u" | "-C" | "--unset" | "--chdir");
                continue;
            }
            let Some(prefix) = assignment_prefix(arg) else {
                break;
            };
            let reads = holes(j);
            if !reads.is_empty() {
                let name = String::from_utf8_lossy(&prefix[..prefix.len() - 1]);
                analysis.rereads.push(Reread {
                    place: format!("the environment variable `{name}` of what the command starts"),
                    rereading: Rereading::Environment,
                    line: 1,
                    reads,
                });
            }
        }
    }
}

/// The `NAME=` of an `exec:` element shaped like an assignment (`A={{ v }}`).
fn assignment_prefix(text: &str) -> Option<&[u8]> {
    let eq = text.find('=')?;
    let b = text.as_bytes();
    lexer::is_name(&b[..eq]).then_some(&b[..=eq])
}

/// A script in plain text that a shell the command starts runs, read as a command of its
/// own: what it reads again is noted for the command, and where actiond cannot read it to
/// its end, what reaches it may be read as anything.
fn inner_script(
    analysis: &mut Analysis,
    script: &[u8],
    place: &str,
    line: usize,
    depth: u32,
    stdin: Vec<Read>,
) {
    let mut unknown = |why: String| {
        analysis.rereads.push(Reread {
            place: place.to_string(),
            rereading: Rereading::Code,
            line,
            reads: vec![Read::Unknown(why)],
        });
    };
    if depth >= MAX_SCRIPT_DEPTH {
        return unknown("a script nested deeper than actiond reads".to_string());
    }
    let Ok(text) = std::str::from_utf8(script) else {
        return unknown("a script that is no UTF-8 text".to_string());
    };
    let outer = analysis.filed.len();
    match read_shell_at(
        text,
        depth + 1,
        analysis.filed.clone(),
        stdin,
        analysis.cwd.clone(),
    ) {
        Err(_) => unknown("a script actiond cannot read".to_string()),
        Ok((_, inner)) => {
            // What the script writes into files, for the outer commands after it.
            analysis
                .filed
                .extend(inner.filed.iter().skip(outer).cloned());
            if let Some(lost) = &inner.lost {
                unknown(format!("what follows {} in it", lost.why));
                // A file named as data after that point, whose content may be read as code.
                let after = text.get(lost.at..).unwrap_or("").as_bytes();
                let mut names = filed::data_mentioned(after);
                // What one holds, read into a variable before that point.
                let after_text = String::from_utf8_lossy(after);
                for v in inner.sources.keys() {
                    if judge::names_word(&after_text, v)
                        && let Some(name) = inner.stored(&Read::Variable(v.clone()))
                    {
                        names.push(name);
                    }
                }
                names.sort();
                names.dedup();
                for name in names {
                    let does = format!(
                        "names, after {} in {place} (where actiond cannot tell how what it \
                         holds is read),",
                        lost.why
                    );
                    analysis.runs_data.push((name.into_bytes(), line, does));
                }
            }
            for r in inner.rereads {
                analysis.rereads.push(Reread {
                    place: format!("{} in {place}", r.place),
                    line,
                    ..r
                });
            }
            for (name, data) in inner.written {
                analysis.write(name.as_bytes(), data);
            }
            for (name, reads) in inner.sources {
                analysis.sources.entry(name).or_default().extend(reads);
            }
            for (name, names) in inner.named {
                analysis.named.entry(name).or_default().extend(names);
            }
            for name in inner.unquoted.into_keys() {
                analysis.unquoted.entry(name).or_insert(line);
            }
            analysis.starts.extend(inner.starts);
            for d in inner.directories {
                analysis.directories.push(reread::Directory { line, ..d });
            }
            for s in inner.stripped {
                analysis.stripped.push(reread::Stripped { line, ..s });
            }
            for output in inner.outputs {
                analysis.outputs.push(reread::Output { line, ..output });
            }
            analysis.ifs |= inner.ifs;
            if inner.spilled.is_some() {
                analysis.spilled.get_or_insert(line);
            }
            analysis.written_unknown |= inner.written_unknown;
            // A file named as data the script runs (`sh -c '. notes.txt'`), and the
            // variables it names one in.
            for (name, _, does) in inner.runs_data {
                analysis
                    .runs_data
                    .push((name, line, format!("{does} (in {place})")));
            }
            for (name, _, program) in inner.unknown_readers {
                analysis.unknown_readers.push((name, line, program));
            }
            for (name, file) in inner.data_names {
                analysis.data_names.entry(name).or_insert(file);
            }
            // What a data file holds as options or split words in the script, and the
            // variables that start its arguments (its `sources` are merged above).
            for (name, _, does) in inner.data_words {
                analysis.data_words.push((name, line, does));
            }
            for (v, _) in inner.leading {
                analysis.leading.push((v, line));
            }
            for (p, _) in inner.option_holes {
                analysis.option_holes.push((p, line));
            }
        }
    }
}

pub(crate) fn push_text(parts: &mut Vec<Part>, text: &str) {
    if text.is_empty() {
        return;
    }
    if let Some(Part::Text(prev)) = parts.last_mut() {
        prev.push_str(text);
    } else {
        parts.push(Part::Text(text.to_string()));
    }
}

/// Appends `value` quoted for `ctx`.
pub fn quote_into(out: &mut String, value: &str, ctx: Context) {
    match ctx {
        Context::Literal => out.push_str(value),
        Context::HtmlText | Context::HtmlAttribute => html::escape(out, value),
        Context::HtmlUrl => html::encode_url_piece(out, value),
        Context::Unquoted => single_quoted(out, value),
        Context::SingleQuoted => {
            // Close the surrounding quote, add the value as its own single-quoted word
            // (adjacent quoted strings join into one word), reopen the quote.
            out.push('\'');
            single_quoted(out, value);
            out.push('\'');
        }
        Context::DoubleQuoted => {
            for c in value.chars() {
                if matches!(c, '\\' | '"' | '$' | '`') {
                    out.push('\\');
                }
                out.push(c);
            }
        }
    }
}

/// Text made safe to put into HTML: it reads as the same text, never as markup.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    html::escape(&mut out, text);
    out
}

/// `'…'` with every `'` written as `'\''`: inside single quotes nothing is special.
fn single_quoted(out: &mut String, value: &str) {
    out.push('\'');
    for c in value.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
}

/// Parses `{{ … }}` at the start of `s`; returns the placeholder and the bytes it spans.
pub(crate) fn parse_placeholder(s: &str) -> Result<(Placeholder, usize), TemplateError> {
    let Some(end) = s[2..].find("}}") else {
        return Err(refuse(
            "`{{` without a closing `}}`: write placeholders as {{ name }}; \
             to pass a literal `{{` to a command, put the command in a script file"
                .to_string(),
        ));
    };
    let inner = s[2..2 + end].trim();
    let word = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let placeholder = if word(inner) {
        Placeholder::Argument(inner.to_string())
    } else if let Some(name) = inner.strip_prefix(".Arguments.").filter(|n| word(n)) {
        Placeholder::Argument(name.to_string())
    } else if let Some(field) = inner
        .strip_prefix(".CurrentEntity.")
        .filter(|f| f.split('.').all(word))
    {
        Placeholder::Entity(field.to_string())
    } else if let Some((first, field)) = inner
        .split_once('.')
        .filter(|(a, b)| word(a) && b.split('.').all(word))
    {
        // The legacy `{{ server.hostname }}`: the first segment names the entity (OliveTin
        // ignores it too), the rest is the field.
        let _ = first;
        Placeholder::Entity(field.to_string())
    } else {
        return Err(refuse(format!(
            "`{{{{{}}}}}` is not a placeholder actiond understands: use {{{{ name }}}} for an argument \
             or {{{{ .CurrentEntity.field }}}} for an entity field; to pass literal braces to a \
             command (e.g. docker --format), put the command in a script file",
            &s[2..2 + end]
        )));
    };
    Ok((placeholder, 2 + end + 2))
}
