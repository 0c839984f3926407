//! The shell model behind `Template::shell`: it reads a `shell:` command the way dash, bash
//! (plain and `--posix`) and busybox ash read it, far enough to know where every `{{ }}`
//! stands, and it stops wherever it cannot be sure.
//!
//! It follows words, the three quotes, `$name`, `${ }` with plain words, `$( )` (itself shell
//! code, so `case` patterns, comments and quotes inside it are read as such), `$(( ))`,
//! backticks, `$'…'`, comments, redirections, here-documents (their delimiter words, quoted or
//! not, `<<-`, and bodies whose lines may be joined by a continuation), subshells, `case`,
//! `[[ ]]`, `(( ))` and the reserved words that decide where a command starts. A placeholder
//! may stand only at the top level: unquoted, or directly inside `"…"` or `'…'`. Anywhere
//! nested it is refused with the construct's name.
//!
//! Line continuations (a backslash before a newline) are removed wherever the shells remove
//! them, which is everywhere but inside `'…'`, `$'…'`, comments and here-document bodies:
//! inside words, operators, reserved words, `$\⏎(`, `${ }` and here-document delimiters
//! alike. The cursor (`peek`, `at`, `bump`) reads the text that way, so every rule below sees
//! what the shells see. Where they differ the model stops: at a here-document line that
//! matches its delimiter only once joined, and at a backslash that ends the text (bash drops
//! it after a `'…'` spanning lines). A continuation between the braces of `{{` is refused
//! outright.
//!
//! Where the model is not exact (the shells disagree, as they do about quotes inside a
//! double-quoted `${ }`, or a construct it does not follow, such as an alias or a `$(` in a
//! here-document body that runs past its line), the scan stops with `Stop::Lost`: the text so
//! far keeps its placeholders, and any placeholder from the lost command on is refused. Every
//! rule here that is not plain POSIX was found, or checked, by running the four shells
//! (`tests/shells/`); the table in `tests.rs` keeps each case. This module decides contexts
//! only: quoting is `quote_into`'s, and the command-level rules (which builtins read a value
//! as code or a variable name) are `commands`'.
//!
//! It also keeps what flows between commands (`commands` says what each one writes): the
//! writer's output at each `|`, the groups open around the command being read (`Group`:
//! what their commands write, and which of them read or write what reaches the group), what
//! `exec <` put on the command's own input, what the commands of `<( )` write and `>( )`
//! read, and, for a here-document whose body comes after the line, a marker where its
//! command's output went, replaced by what the body expands once it is read.

use std::collections::BTreeMap;

use super::TemplateError;
mod compound;
mod flow;
mod heredoc;
mod words;

use super::Stop;
use super::commands::{self, Command, Inner, Input, Word};
use super::filed;
use super::programs::Stdin;
use super::reread::{Analysis, DATA_VARIABLES, Filed, Lost, Notes, Read, Rereading};
use super::{Context, Lead, Part, UNSAFE_HINT, parse_placeholder, push_text, refuse};

/// Where the scan stands, for a placeholder found there: `None` at the top level, where a
/// value can be quoted, or the words naming the construct it is nested in.
type Nest = Option<&'static str>;

type Scan<T = ()> = Result<T, Stop>;

/// How far one `code` scan reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// The end of the text.
    Eof,
    /// A `)` that closes `$(`, `<(` or a subshell.
    Paren,
    /// The end of one `case` item: `;;` (or bash's `;&`, `;;&`) or `esac`.
    CaseItem,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    Eof,
    Paren,
    CaseBreak,
    Esac,
}

/// What a word at the start of a command was.
enum Reserved {
    /// Not a reserved word: a command name or an assignment.
    Not,
    /// A reserved word, read with what it opened (`case … esac`, `[[ … ]]`).
    Read,
    /// `esac`, which ends the `case` item being read.
    Ended(Ended),
}

/// A here-document whose body starts after the current line.
struct Heredoc {
    delimiter: Vec<u8>,
    strip_tabs: bool,
    quoted: bool,
    /// The `$( )` frame its operator stands in: its body must start in the same one.
    frame: u32,
    /// Where its delimiter stands: it belongs to the command being read there.
    at: usize,
    /// The command reads it as code or splits it (`sh <<E`, `xargs rm <<E`): the place and
    /// how, set when the command is complete.
    reader: Option<(&'static str, Rereading)>,
    /// The files the command writes its input into (`cat > job.sh <<E`, `tee f <<E`), as
    /// indexes into `Analysis::filed`: entries made when the command is complete, holding
    /// "what the body expands" until the body is read (a command later on the same line,
    /// `cat > f <<E; sh f`, is checked before it), then what it does expand.
    writes: Vec<usize>,
}

/// A group being read (`{ }`, `( )`, `if … fi`, `while`, `until`, `for` and `select` through
/// `done`, `case … esac`): what reached its input before it opened, and what its commands do
/// with its output and input, for the command it becomes when it closes.
struct Group {
    /// The `$( )` frame it stands in: a command inside a `$( )` within it writes into that
    /// word, not into the group's output.
    frame: u32,
    /// Closed by a reserved word (`}`, `fi`, `done`), not by the `)` of a subshell or a
    /// process substitution, nor at the end of a `case` (`close_group_at`).
    by_word: bool,
    /// The function whose body it is (`f() { …; }`): a call of `f` writes what it writes.
    function: Option<Vec<u8>>,
    inputs: Vec<Input>,
    inner: Inner,
}

/// The marker of a here-document's body in what a command wrote (`Lexer::bodies`): its
/// words are what a reader sees should the body never be read.
fn body_marker(h: &Heredoc) -> String {
    format!(
        "what the here-document `<<{}` (at byte {}) expands",
        String::from_utf8_lossy(&h.delimiter),
        h.at
    )
}

/// Where a placeholder in the word after `>&` stands.
const DUPLICATION_TARGET: &str =
    "in the target of `>&`, which bash expands a second time when it is no number";

/// Deeper nesting than this is not followed (and no real command needs it).
const MAX_DEPTH: u32 = 64;

/// Characters that end an unquoted word.
fn is_operator(c: u8) -> bool {
    matches!(c, b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>')
}

/// The shells' blanks: space and tab only (a carriage return or a no-break space is part of a
/// word, so a `#` after one is no comment).
fn is_blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

const RESERVED_OPENING: &[&[u8]] = &[
    b"{", b"!", b"if", b"then", b"else", b"elif", b"do", b"while", b"until", b"time",
];
const RESERVED_CLOSING: &[&[u8]] = &[b"}", b"fi", b"done"];

/// A `shell:` command as the model read it.
pub(super) struct Reading {
    /// Text and placeholders with their contexts.
    pub parts: Vec<Part>,
    pub analysis: Analysis,
    /// Scripts in plain text that a shell the command starts runs: their offset, text and
    /// what they are.
    pub scripts: Vec<(usize, Vec<u8>, &'static str)>,
    /// What reaches the input of the shell that runs each script, by its offset.
    pub script_inputs: BTreeMap<usize, Vec<Read>>,
}

/// Reads a `shell:` command: its text and placeholders with their contexts, and what the
/// model noted on the way (`reread`).
/// `filed`: the files a value was written into before this text runs (an outer command's,
/// for the script of its `sh -c`); `stdin`: what reaches its standard input (what reached
/// that `sh -c`'s).
pub(super) fn compile(
    text: &str,
    filed: Vec<Filed>,
    stdin: Vec<Read>,
    cwd: crate::template::reread::Cwd,
) -> Result<Reading, TemplateError> {
    if split_braces(text.as_bytes()) {
        return Err(refuse(format!(
            "a line continuation (a backslash at the end of a line) splits a `{{{{`, which the \
             shell reads as `{{{{` but actiond as no placeholder: write each placeholder on one \
             line; and if braces must reach the command, {UNSAFE_HINT}"
        )));
    }
    let mut lx = Lexer {
        text,
        b: text.as_bytes(),
        pos: 0,
        parts: Vec::new(),
        copied: 0,
        heredocs: Vec::new(),
        frame: 0,
        frames: 0,
        depth: 0,
        bare_name_end: usize::MAX,
        splitting: false,
        notes: Notes::new(text.as_bytes()),
        groups: Vec::new(),
        bodies: BTreeMap::new(),
        shell_input: stdin,
        defining: None,
        functions: BTreeMap::new(),
    };
    lx.notes.analysis.filed = filed;
    lx.notes.analysis.cwd = cwd;
    match lx.code(End::Eof, None, false) {
        Ok(_) => {}
        Err(Stop::Refused(message)) => return Err(refuse(message)),
        Err(Stop::Lost { at, why }) => {
            let line = lx.notes.line(at);
            if let Some(i) = find(&lx.b[at..], b"{{") {
                let (p, _) = parse_placeholder(&text[at + i..])?;
                return Err(refuse(format!(
                    "{p} stands after {why} (line {line}), where actiond cannot tell how the \
                     shell will read a value: {UNSAFE_HINT}"
                )));
            }
            lx.notes.analysis.lost = Some(Lost { at, line, why });
            lx.fill_open_groups();
        }
    }
    for name in DATA_VARIABLES {
        lx.notes.analysis.write(name.as_bytes(), true);
    }
    // Every way to set IFS names it (`IFS=`, `export IFS`, `read IFS`, `for IFS in`, `local
    // IFS`, `printf -v IFS`), and a command that only reads it is rare: the word is enough.
    lx.notes.analysis.ifs = names_ifs(lx.b);
    let bodies = std::mem::take(&mut lx.bodies);
    let analysis = &mut lx.notes.analysis;
    for reads in analysis
        .rereads
        .iter_mut()
        .map(|r| &mut r.reads)
        .chain(analysis.filed.iter_mut().map(|f| &mut f.reads))
    {
        put_bodies(reads, &bodies);
    }
    let mut parts = lx.parts;
    push_text(&mut parts, &text[lx.copied..]);
    // Every `{{` must have become a placeholder: one left in the text would reach the shell
    // as it is, unchecked and unsubstituted.
    if parts
        .iter()
        .any(|p| matches!(p, Part::Text(t) if t.contains("{{")))
    {
        return Err(refuse(format!(
            "a `{{{{` stands where actiond could not place it as a placeholder: {UNSAFE_HINT}"
        )));
    }
    Ok(Reading {
        parts,
        analysis: lx.notes.analysis,
        scripts: lx.notes.scripts,
        script_inputs: lx.notes.script_inputs,
    })
}

/// Puts what each here-document's body expands in the place of its marker (`Lexer::bodies`).
/// A marker whose body was never read (the model stopped) stays, as something unknown.
fn put_bodies(reads: &mut Vec<Read>, bodies: &BTreeMap<String, Vec<Read>>) {
    if !reads
        .iter()
        .any(|r| matches!(r, Read::Unknown(m) if bodies.contains_key(m)))
    {
        return;
    }
    let mut out = Vec::with_capacity(reads.len());
    for r in reads.drain(..) {
        match &r {
            Read::Unknown(m) if bodies.contains_key(m) => out.extend(bodies[m].iter().cloned()),
            _ => out.push(r),
        }
    }
    *reads = out;
}

/// Whether `IFS` stands in `text` as a word of its own (not inside a longer name).
fn names_ifs(text: &[u8]) -> bool {
    // The shells join a line continuation anywhere in a word (`I\⏎FS=.`).
    let mut joined = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'\\' && text.get(i + 1) == Some(&b'\n') {
            i += 2;
            continue;
        }
        joined.push(text[i]);
        i += 1;
    }
    let text = joined.as_slice();
    let ident = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_';
    text.windows(3).enumerate().any(|(i, w)| {
        w == b"IFS" && !(i > 0 && ident(&text[i - 1])) && !text.get(i + 3).is_some_and(ident)
    })
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The first index at or after `i` where no line continuation (backslash-newline) starts.
fn past_continuations(b: &[u8], mut i: usize) -> usize {
    while b.get(i) == Some(&b'\\') && b.get(i + 1) == Some(&b'\n') {
        i += 2;
    }
    i
}

/// A `{` and a `{` joined by line continuations: the shell reads `{{`, actiond no
/// placeholder. Whoever wrote it meant one.
fn split_braces(b: &[u8]) -> bool {
    (0..b.len()).any(|i| {
        b[i] == b'{' && b.get(i + 1) == Some(&b'\\') && {
            let j = past_continuations(b, i + 1);
            j > i + 1 && b.get(j) == Some(&b'{')
        }
    })
}

struct Lexer<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    parts: Vec<Part>,
    /// Start of the text not yet copied into `parts`.
    copied: usize,
    heredocs: Vec<Heredoc>,
    /// The `$( )` frame being read, and how many were opened.
    frame: u32,
    frames: u32,
    depth: u32,
    /// Where the last bare `$name` ended: a value right there, inside double quotes, would
    /// lengthen the name.
    bare_name_end: usize,
    /// The `$` about to be read stands unquoted where the shell splits (set by its word for
    /// `dollar`, which takes it).
    splitting: bool,
    /// What bash reads again, what the command writes (`reread`).
    notes: Notes<'a>,
    /// The groups open around `pos`, innermost last.
    groups: Vec<Group>,
    /// What each here-document's body expands, by its marker (`body_marker`): a command that
    /// passes its input on wrote the marker where its output went (`cat <<E | psql`), before
    /// the body was read; `compile` puts what the body expands in its place.
    bodies: BTreeMap<String, Vec<Read>>,
    /// What `exec <` put on the command's own standard input (empty: actiond gives it none).
    shell_input: Vec<Read>,
    /// A function whose body comes next (`f()`, `function f`), and what each function's body
    /// writes (`Group::function`).
    defining: Option<Vec<u8>>,
    functions: BTreeMap<Vec<u8>, Vec<Read>>,
}

impl<'a> Lexer<'a> {
    // The cursor. Outside single quotes, comments, `$'…'` and here-document bodies, all four
    // shells remove a backslash-newline wherever it stands, inside words, operators (`&\⏎&`
    // is `&&`), keywords, `$\⏎(` and `${ }` alike (dash and ash as they read each character,
    // bash when it reads the line). So `peek`, `peek_at`, `at` and `bump` read the text with
    // the continuations removed, and leave `pos` on a real character: what follows a
    // backslash there is an escaped character, read with `raw_at`. The raw contexts read
    // `self.b` directly.

    /// Moves `pos` past line continuations.
    fn settle(&mut self) {
        self.pos = past_continuations(self.b, self.pos);
    }

    fn peek(&mut self) -> Option<u8> {
        self.settle();
        self.b.get(self.pos).copied()
    }

    /// The raw index of the `i`-th character from `pos`, continuations removed.
    fn index_of(&self, i: usize) -> Option<usize> {
        let mut j = past_continuations(self.b, self.pos);
        for _ in 0..i {
            if j >= self.b.len() {
                return None;
            }
            j = past_continuations(self.b, j + 1);
        }
        (j < self.b.len()).then_some(j)
    }

    fn peek_at(&mut self, i: usize) -> Option<u8> {
        self.settle();
        self.index_of(i).map(|j| self.b[j])
    }

    fn at(&mut self, s: &[u8]) -> bool {
        self.settle();
        s.iter()
            .enumerate()
            .all(|(i, &c)| self.index_of(i).is_some_and(|j| self.b[j] == c))
    }

    /// Whether the plain word `s` stands at `pos`, ended by a blank, a newline, an operator
    /// or the end (a reserved word, `in`, `do`, `-p`).
    fn at_word(&mut self, s: &[u8]) -> bool {
        self.at(s)
            && self
                .peek_at(s.len())
                .is_none_or(|c| is_blank(c) || c == b'\n' || is_operator(c))
    }

    /// Moves past `n` characters, continuations removed.
    fn bump(&mut self, n: usize) {
        self.settle();
        if n > 0 {
            self.pos = self.index_of(n - 1).map_or(self.b.len(), |j| j + 1);
        }
    }

    /// The raw byte `i` bytes after `pos`: what a backslash at `pos` escapes.
    fn raw_at(&self, i: usize) -> Option<u8> {
        self.b.get(self.pos + i).copied()
    }

    fn lost(&self, why: impl Into<String>) -> Stop {
        self.lost_at(self.pos, why)
    }

    fn lost_at(&self, at: usize, why: impl Into<String>) -> Stop {
        Stop::Lost {
            at,
            why: why.into(),
        }
    }

    fn enter(&mut self) -> Scan {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.lost("constructs nested more than 64 deep"));
        }
        Ok(())
    }

    /// A placeholder at `pos`: placed with `ctx` at the top level, refused when nested.
    fn hole(&mut self, nest: Nest, ctx: Context, word: &mut Word) -> Scan {
        let (p, len) =
            parse_placeholder(&self.text[self.pos..]).map_err(|e| Stop::Refused(e.message))?;
        if let Some(place) = nest {
            let hint = if place == DUPLICATION_TARGET {
                Rereading::Redirection.hint()
            } else {
                UNSAFE_HINT
            };
            return Err(Stop::Refused(format!("{p} stands {place}: {hint}")));
        }
        push_text(&mut self.parts, &self.text[self.copied..self.pos]);
        // Quotes and expansions before it add no character the author wrote (`""{{ x }}`,
        // `$EMPTY{{ x }}`): only read text puts the value inside the word.
        // bash's brace expansion may make the text before it empty (`{,x}{{ x }}` is
        // `{{ x }}` and `x{{ x }}`): brace groups alone put nothing before it for sure.
        let lead = if word.seen_text && !brace_groups_only(&word.unquoted) {
            Lead::Inside
        } else {
            Lead::Starts
        };
        self.parts.push(Part::Hole(p.clone(), ctx, lead));
        self.pos += len;
        self.copied = self.pos;
        word.note_hole(p);
        Ok(())
    }

    /// Refuses the placeholder at `pos` with `why`.
    fn refuse_here(&self, why: &str) -> Stop {
        match parse_placeholder(&self.text[self.pos..]) {
            Ok((p, _)) => Stop::Refused(format!("{p} stands {why}: {UNSAFE_HINT}")),
            Err(e) => Stop::Refused(e.message),
        }
    }

    /// After a backslash at `pos`: a placeholder may not be what it escapes.
    fn check_escape(&self) -> Scan {
        if self.b[self.pos + 1..].starts_with(b"{{") {
            return Err(Stop::Refused(format!(
                "a placeholder right after a backslash: {UNSAFE_HINT}"
            )));
        }
        Ok(())
    }

    fn skip_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(c) if is_blank(c) => self.pos += 1,
                _ => return,
            }
        }
    }

    /// Blanks, newlines (reading here-document bodies) and comments.
    fn skip_linebreaks(&mut self) -> Scan {
        loop {
            self.skip_blanks();
            match self.peek() {
                Some(b'\n') => {
                    self.pos += 1;
                    self.bodies()?;
                }
                Some(b'#') => self.comment()?,
                _ => return Ok(()),
            }
        }
    }

    /// Shell code up to `end`. `frame` opens a new `$( )` frame (its own here-documents).
    fn code(&mut self, end: End, nest: Nest, frame: bool) -> Scan<Ended> {
        self.enter()?;
        let outer = self.frame;
        if frame {
            self.frames += 1;
            self.frame = self.frames;
        }
        let ended = self.commands(end, nest)?;
        if frame {
            if self.heredocs.iter().any(|h| h.frame == self.frame) {
                return Err(
                    self.lost("a here-document that starts inside `$( )` and ends outside it")
                );
            }
            self.frame = outer;
        }
        self.depth -= 1;
        Ok(ended)
    }

    fn commands(&mut self, end: End, nest: Nest) -> Scan<Ended> {
        let mut cmd = Command::new(self.pos);
        // Whether the next word starts a command (and so may be a reserved word).
        let mut cmd_pos = true;
        loop {
            self.skip_blanks();
            let step = self.step(end, nest, &mut cmd, &mut cmd_pos);
            match step {
                Ok(None) => {}
                Ok(Some(ended)) => return Ok(ended),
                Err(Stop::Lost { at, why }) => {
                    return Err(Stop::Lost {
                        at: at.min(cmd.start),
                        why,
                    });
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// One token of shell code.
    fn step(
        &mut self,
        end: End,
        nest: Nest,
        cmd: &mut Command,
        cmd_pos: &mut bool,
    ) -> Scan<Option<Ended>> {
        let Some(c) = self.peek() else {
            self.finish(cmd)?;
            return match end {
                End::Eof => Ok(Some(Ended::Eof)),
                _ => Err(self.lost("a `$(`, `(` or `case` that is never closed")),
            };
        };
        match c {
            b'#' => self.comment()?,
            b'\n' => {
                self.finish(cmd)?;
                self.pos += 1;
                // The bodies belong to no command: where one stops the model, say its line.
                *cmd = Command::new(self.pos);
                self.bodies()?;
                *cmd_pos = true;
            }
            b')' => {
                self.finish(cmd)?;
                if end == End::Paren {
                    self.pos += 1;
                    return Ok(Some(Ended::Paren));
                }
                return Err(self.lost("a `)` that closes nothing"));
            }
            b';' => {
                self.finish(cmd)?;
                for op in [&b";;&"[..], b";;", b";&"] {
                    if self.at(op) {
                        if end != End::CaseItem {
                            return Err(self.lost("`;;` outside a `case`"));
                        }
                        self.bump(op.len());
                        return Ok(Some(Ended::CaseBreak));
                    }
                }
                self.pos += 1;
                *cmd_pos = true;
            }
            b'&' if self.at(b"&>") => {
                // bash: both streams to a file; dash: `&` (the command so far runs in the
                // background) then a redirection. The two agree only while nothing but
                // redirections follows: a word after it starts a command of its own to dash.
                let n = if self.at(b"&>>") { 3 } else { 2 };
                self.bump(n);
                let word = self.target(nest)?;
                self.write_target(cmd, &word);
                cmd.both_streams = true;
                *cmd_pos = false;
            }
            b'&' | b'|' => {
                // `a | b`, `a |& b`: b reads what a writes.
                let pipe = c == b'|' && !self.at(b"||");
                if pipe && cmd.spills() {
                    let line = self.notes.line(cmd.start);
                    self.notes.analysis.spilled.get_or_insert(line);
                }
                // What it writes, and whether that holds what reaches the group around it.
                let piped = pipe.then(|| (self.written(cmd), cmd.outer() && cmd.passes_input()));
                let echoed = if pipe { cmd.echoed() } else { None };
                cmd.piped = pipe;
                self.finish(cmd)?;
                match (echoed, piped) {
                    (Some(text), Some(_)) => cmd.input(Input::Echoed(text)),
                    (None, Some((reads, outer))) => cmd.input(Input::Pipe(reads, outer)),
                    _ => {}
                }
                let two = self.at(b"&&") || self.at(b"||") || self.at(b"|&");
                self.bump(if two { 2 } else { 1 });
                *cmd_pos = true;
            }
            b'(' => self.paren(nest, cmd, cmd_pos)?,
            b'<' | b'>' => {
                self.redirect(nest, cmd)?;
                *cmd_pos = false;
            }
            _ => {
                if cmd.both_streams {
                    return Err(self.lost(
                        "bash's `&>` in the middle of a command (dash runs what stands before \
                         it in the background and the word after its file as a command)",
                    ));
                }
                let word = self.word(nest, cmd.assignment_allowed())?;
                if word.io_number {
                    return Ok(None);
                }
                if *cmd_pos && cmd.is_empty() {
                    match self.reserved(&word, end, nest, cmd, cmd_pos)? {
                        Reserved::Not => {}
                        Reserved::Read => return Ok(None),
                        Reserved::Ended(ended) => return Ok(Some(ended)),
                    }
                }
                *cmd_pos = false;
                cmd.push(word);
            }
        }
        Ok(None)
    }

    /// Notes the first form only bash runs (`bash_only`): dash, /bin/sh on Debian and
    /// Raspberry Pi OS, stops with a syntax error there.
    fn note_bash_only(&mut self, form: &'static str) {
        let line = self.notes.line(self.pos);
        self.notes.analysis.bash_only.get_or_insert((line, form));
    }

    /// A redirection operator and its file, or a here-document operator and its delimiter, or
    /// bash's `<( )` / `>( )`.
    fn redirect(&mut self, nest: Nest, cmd: &mut Command) -> Scan {
        if self.at(b"<(") || self.at(b">(") {
            let writes = self.at(b">(");
            let inner = self.process_substitution(writes)?;
            let mut word = Word::operator(self.pos, b"<()");
            if writes {
                // `tee >(psql)`: its commands read what the command writes there.
                cmd.feeds(inner);
            } else {
                // `cat <(…)`: the command reads what its commands write, and what reaches
                // them when one passes it on (`<(cat)`).
                let mut output = inner.output;
                if inner.passes {
                    output.extend(self.outer_input());
                }
                word.carries(output);
            }
            cmd.push(word);
            return Ok(());
        }
        if self.at(b"<<<") {
            self.note_bash_only("the here-string `<<<`");
            self.bump(3);
            let word = self.target(nest)?;
            cmd.input(Input::Text(word));
            return Ok(());
        }
        if self.at(b"<<") {
            self.bump(2);
            cmd.heredoc = true;
            let strip_tabs = self.peek() == Some(b'-');
            if strip_tabs {
                self.bump(1);
            }
            return self.delimiter(strip_tabs);
        }
        let op = self.peek();
        self.bump(1);
        // bash's `prog < <(…)`: what the commands inside write reaches prog's input.
        if op == Some(b'<') && !self.at(b"<") && !self.at(b"&") {
            let back = self.pos;
            self.skip_blanks();
            if self.at(b"<(") {
                let inner = self.process_substitution(false)?;
                cmd.input(Input::Pipe(inner.output, inner.passes));
                return Ok(());
            }
            self.pos = back;
        }
        let second = match op {
            Some(b'>') => matches!(self.peek(), Some(b'>' | b'&' | b'|')),
            _ => matches!(self.peek(), Some(b'>' | b'&')),
        };
        let duplicate = second && self.peek() == Some(b'&');
        // `N<>FILE` opens it for reading and writing: a write as `>` is (fe30x F2).
        let both = op == Some(b'<') && second && self.peek() == Some(b'>');
        if second {
            self.bump(1);
        }
        if !duplicate {
            let word = self.target(nest)?;
            if both {
                self.write_target(cmd, &word);
            }
            if op == Some(b'<') {
                cmd.input(Input::File(word));
            } else {
                self.write_target(cmd, &word);
            }
            return Ok(());
        }
        if op == Some(b'<') {
            cmd.input(Input::Descriptor);
        }
        // `>&WORD`, `N<&WORD`: bash expands a WORD that is no number a second time (for
        // `>&` and `1>&`; dash refuses it, ash expands it once), so no value may stand there
        // and what it expands is noted.
        let how = Rereading::Redirection;
        let word = self.target(Some(DUPLICATION_TARGET))?;
        self.notes
            .reread(word.start, "the target of `>&`", how, word.reads(false));
        // bash's `>& FILE` with a word that is no descriptor is `&> FILE`: a write (fe30x F3).
        let descriptor = word
            .value()
            .is_some_and(|v| v == b"-" || v.iter().all(u8::is_ascii_digit));
        if op == Some(b'>') && !descriptor {
            self.write_target(cmd, &word);
        }
        Ok(())
    }

    /// The file of `>`, `>>`, `>|` or `&>` (`word`): the command writes into it, and,
    /// whatever it writes, a value may pick it (`filed::named`).
    fn write_target(&mut self, cmd: &mut Command, word: &Word) {
        if word.value() == Some(&b"/dev/null"[..]) {
            return;
        }
        cmd.writes_file = true;
        cmd.targets
            .push(word.value().map(<[u8]>::to_vec).or_else(|| word.glob()));
        let (reads, parts) = (word.reads(false), word.name_parts(0));
        filed::named::note_named(&mut self.notes, word.start, parts, reads, "`>`");
    }

    /// The file word of a redirection.
    fn target(&mut self, nest: Nest) -> Scan<Word> {
        self.skip_blanks();
        if self.peek().is_none_or(|c| c == b'\n' || is_operator(c)) {
            return Err(self.lost("a redirection without a file"));
        }
        self.word(nest, false)
    }

    /// A comment, up to (not including) the newline, read raw: a backslash does not
    /// continue it.
    fn comment(&mut self) -> Scan {
        self.settle();
        while let Some(c) = self.raw_at(0) {
            if c == b'\n' {
                break;
            }
            if self.b[self.pos..].starts_with(b"{{") {
                return Err(self.refuse_here("inside a comment"));
            }
            self.pos += 1;
        }
        Ok(())
    }
}

/// Whether `s` is nothing but brace groups that bash expands (`{,x}`, `{a,b}{1..3}`).
fn brace_groups_only(s: &[u8]) -> bool {
    let mut rest = s;
    if rest.is_empty() {
        return false;
    }
    while let Some(r) = rest.strip_prefix(b"{") {
        let Some(end) = r.iter().position(|&c| c == b'}') else {
            return false;
        };
        let inner = &r[..end];
        if !(inner.contains(&b',') || inner.windows(2).any(|w| w == b"..")) {
            return false;
        }
        rest = &r[end + 1..];
    }
    rest.is_empty()
}

/// Whether `s` is a shell variable name.
pub(super) fn is_name(s: &[u8]) -> bool {
    s.first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        && s.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}
