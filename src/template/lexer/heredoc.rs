//! Here-documents: the delimiter word after `<<` or `<<-`, and the bodies read after the
//! newline that ends their line. In an unquoted body a backslash-newline joins two lines, so
//! the line after one is never a delimiter line (all four shells agree). bash compares the
//! joined line with the delimiter; dash and busybox ash remove only the continuations that
//! start the line and compare the rest as written, so `EO\⏎F` ends the body for bash and not
//! for them: there the model stops. `$( )`, `${ }` and backticks in an unquoted body are read
//! as code that must close on its own line: bash finds the delimiter line by line and expands
//! afterwards, while dash and ash parse a `$(` as they read, so a `$(` that runs past its line
//! would end the body at different lines.

use super::super::commands::Word;
use super::super::own;
use super::super::reread::{Read, Rereading};
use super::super::{UNSAFE_HINT, parse_placeholder};
use super::{Heredoc, Lexer, Scan, Stop, find, is_blank, is_operator, past_continuations};

impl Lexer<'_> {
    /// A here-document delimiter word; its body starts after the current line.
    pub(super) fn delimiter(&mut self, strip_tabs: bool) -> Scan {
        self.skip_blanks();
        let at = self.pos;
        let mut delimiter = Vec::new();
        let mut quoted = false;
        while let Some(c) = self.peek() {
            if is_blank(c) || c == b'\n' || is_operator(c) {
                break;
            }
            if self.at(b"{{") {
                return Err(self.refuse_here("in a here-document delimiter"));
            }
            match c {
                b'\'' | b'"' => {
                    quoted = true;
                    self.pos += 1;
                    loop {
                        // Continuations are removed inside `"…"`, kept inside `'…'`.
                        let next = if c == b'"' {
                            self.peek()
                        } else {
                            self.raw_at(0)
                        };
                        match next {
                            None | Some(b'\n') => {
                                return Err(self.lost("a quoted here-document delimiter"));
                            }
                            Some(q) if q == c => break,
                            Some(b'{') if self.at(b"{{") => {
                                return Err(self.refuse_here("in a here-document delimiter"));
                            }
                            Some(b'$' | b'`' | b'\\') if c == b'"' => {
                                return Err(self.lost(
                                    "a here-document delimiter with `$`, `\\` or a backtick",
                                ));
                            }
                            Some(d) => delimiter.push(d),
                        }
                        self.pos += 1;
                    }
                    self.pos += 1;
                }
                b'\\' => {
                    quoted = true;
                    self.check_escape()?;
                    match self.raw_at(1) {
                        None => return Err(self.lost("a here-document delimiter ending in `\\`")),
                        Some(d) => delimiter.push(d),
                    }
                    self.pos += 2;
                }
                b'$' | b'`' => {
                    return Err(self.lost("a here-document delimiter with `$` or a backtick"));
                }
                _ => {
                    delimiter.push(c);
                    self.pos += 1;
                }
            }
        }
        if delimiter.is_empty() {
            return Err(self.lost("a here-document without a delimiter"));
        }
        self.heredocs.push(Heredoc {
            delimiter,
            strip_tabs,
            quoted,
            frame: self.frame,
            at,
            reader: None,
            writes: Vec::new(),
        });
        Ok(())
    }

    /// After a newline token: the bodies of the here-documents opened on the line.
    pub(super) fn bodies(&mut self) -> Scan {
        if self.heredocs.iter().any(|h| h.frame != self.frame) {
            return Err(self.lost("a here-document whose body would start inside `$( )`"));
        }
        for h in std::mem::take(&mut self.heredocs) {
            self.body(&h)?;
        }
        Ok(())
    }

    /// One here-document body, up to and including its delimiter line. In an unquoted body a
    /// backslash-newline joins two lines, and a line that starts after one is no delimiter
    /// line in any of the four shells; but a joined line that reads as the delimiter ends the
    /// body for bash, and for dash and ash only when its sole continuations start it
    /// (`delimiter_as_written`), so elsewhere the model stops there. `$( )`, `${ }` and
    /// backticks in an unquoted body are read as code that must close on its line. `<<-`
    /// strips the tabs that start a joined line, not those after a continuation, in all four.
    pub(super) fn body(&mut self, h: &Heredoc) -> Scan {
        let first = self.pos;
        // What the body expands, and its text, for a command that reads it as code.
        let mut reads = Word::new(first);
        let mut text: Vec<u8> = Vec::new();
        let result = self.body_lines(h, &mut reads, &mut text);
        // `cat > job.sh <<E` … `sh job.sh`: the file holds what the body expands.
        let expanded = reads.reads(false);
        // `cat <<E | psql`: what a command that passes its input on wrote stands for it.
        let marker = self.body_marker(h);
        self.bodies
            .entry(marker)
            .or_default()
            .extend(expanded.iter().cloned());
        for &i in &h.writes {
            if let Some(f) = self.notes.analysis.filed.get_mut(i) {
                f.reads.clone_from(&expanded);
            }
        }
        if let (Ok(()), Some((place, how))) = (&result, h.reader) {
            let plain = h.quoted || !text.iter().any(|c| matches!(c, b'$' | b'`' | b'\\'));
            if place == own::STDIN {
                // Not shell code: only what the body expands is noted.
                self.notes.reread(first, place, how, reads.reads(false));
            } else if how == Rereading::Code && plain {
                self.notes.scripts.push((first, text, place));
            } else {
                let mut found = reads.reads(false);
                if how == Rereading::Code {
                    found.push(Read::Unknown(format!(
                        "the rest of {place}, a here-document that expands, which actiond does \
                         not read as a script"
                    )));
                }
                self.notes.reread(first, place, how, found);
            }
        }
        result
    }

    /// The lines of `body`, each noted in `reads` (what it expands) and `text` (as written,
    /// `<<-`'s tabs removed).
    fn body_lines(&mut self, h: &Heredoc, reads: &mut Word, text: &mut Vec<u8>) -> Scan {
        while self.pos < self.b.len() {
            let start = self.pos;
            let mut i = start;
            let mut joined = false;
            while i < self.b.len() && self.b[i] != b'\n' {
                if !h.quoted && self.b[i] == b'\\' {
                    joined |= self.b.get(i + 1) == Some(&b'\n');
                    i += 2;
                } else {
                    i += 1;
                }
            }
            let end = i.min(self.b.len());
            let line = &self.b[start..end];
            if let Some(at) = find(line, b"{{") {
                self.pos = start + at;
                // The words "a placeholder inside a here-document" are what a reader (and the
                // corpus test) looks for.
                return Err(match parse_placeholder(&self.text[self.pos..]) {
                    Ok((p, _)) => Stop::Refused(format!(
                        "{p} is a placeholder inside a here-document: {UNSAFE_HINT}"
                    )),
                    Err(e) => Stop::Refused(e.message),
                });
            }
            let mut content: Vec<u8> = if joined {
                line.split(|&c| c == b'\n')
                    .flat_map(|l| l.strip_suffix(b"\\").unwrap_or(l).iter().copied())
                    .collect()
            } else {
                line.to_vec()
            };
            if h.strip_tabs {
                let tabs = content.iter().take_while(|&&c| c == b'\t').count();
                content.drain(..tabs);
            }
            if content == h.delimiter {
                if joined && !self.delimiter_as_written(h, start, end) {
                    // bash joins the line first and ends the body here; dash and busybox ash
                    // compare the delimiter with the line as written (`EO\⏎F` is no `EOF`)
                    // and read on, so the rest is body to them and code to bash.
                    return Err(self.lost_at(
                        start,
                        "a here-document line that is its delimiter only once a line \
                         continuation is removed (bash ends the here-document there, dash and \
                         busybox ash do not)",
                    ));
                }
                self.pos = (end + 1).min(self.b.len());
                return Ok(());
            }
            self.pos = (end + 1).min(self.b.len());
            text.extend_from_slice(&content);
            text.push(b'\n');
            if !h.quoted {
                self.body_expansions(start, end, reads)?;
            } else {
                // A `$NAME` left as text here reaches whatever reads the body: a shell
                // (`cat <<'EOF' | sh`) reads it from its environment.
                for k in start..end {
                    self.note_unexpanded(k);
                }
            }
        }
        Ok(())
    }

    /// Whether dash and busybox ash see the delimiter in the unquoted body line
    /// `start..end`: they remove the continuations that start the line (they read its first
    /// character as they read code), then `<<-`'s tabs, then compare the rest as written.
    fn delimiter_as_written(&self, h: &Heredoc, start: usize, end: usize) -> bool {
        let mut j = past_continuations(self.b, start).min(end);
        if h.strip_tabs {
            while j < end && self.b[j] == b'\t' {
                j += 1;
            }
        }
        self.b[j..end] == h.delimiter[..]
    }

    /// The expansions in one logical line of an unquoted here-document body.
    pub(super) fn body_expansions(&mut self, start: usize, end: usize, w: &mut Word) -> Scan {
        let resume = self.pos;
        self.pos = start;
        while self.pos < end {
            match self.b[self.pos] {
                b'\\' => self.pos += 2,
                b'$' => self.dollar(true, w)?,
                b'`' => self.backtick(w, false)?,
                _ => self.pos += 1,
            }
            if self.pos > end {
                return Err(self.lost_at(
                    start,
                    "a here-document line whose `$(`, `${` or backtick runs past it",
                ));
            }
        }
        self.pos = resume;
        Ok(())
    }
}
