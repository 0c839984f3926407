//! Words: unquoted text, the three quotes, escapes and line continuations, placeholders,
//! and the expansions inside a word (`$name`, `${ }`, `$( )`, `$(( ))`, backticks, `$'…'`,
//! `$"…"`), each followed to its end.

use super::super::Context;
use super::super::UNSAFE_HINT;
use super::super::commands::Word;
use super::{End, Ended, Lexer, Nest, Scan, Stop, is_blank, is_name, is_operator};

impl Lexer<'_> {
    /// One word. `assign` allows bash's `name[subscript]=` at its start.
    pub(super) fn word(&mut self, nest: Nest, assign: bool) -> Scan<Word> {
        let mut w = Word::new(self.pos);
        let mut literal = Vec::new();
        let mut plain = true;
        while let Some(c) = self.peek() {
            match c {
                _ if is_blank(c) || c == b'\n' || is_operator(c) => break,
                b'\\' if self.raw_at(1).is_none() => {
                    // A backslash that ends the text escapes nothing. bash drops it when the
                    // line it stands on began inside a `'…'` that spans lines, which a value
                    // with a newline on this line makes it do; dash and ash keep it.
                    let line = self.b[..self.pos]
                        .iter()
                        .rposition(|&c| c == b'\n')
                        .map_or(0, |i| i + 1);
                    return Err(self.lost_at(line, "a backslash that ends the command text"));
                }
                b'\\' => {
                    // `peek` left no continuation here: the next byte is escaped.
                    self.check_escape()?;
                    if let Some(e) = self.raw_at(1) {
                        w.keep(e);
                    }
                    self.pos += 2;
                    plain = false;
                    w.text();
                }
                b'\'' => {
                    plain = false;
                    self.single(nest, &mut w)?;
                }
                b'"' => {
                    plain = false;
                    self.double(nest, &mut w)?;
                }
                b'`' => {
                    plain = false;
                    w.expanded = true;
                    self.backtick()?;
                }
                b'$' => {
                    plain = false;
                    w.expanded = true;
                    self.dollar(false, &mut w)?;
                }
                b'{' if self.at(b"{{") => {
                    plain = false;
                    self.hole(nest, Context::Unquoted, &mut w)?;
                }
                b'[' if assign && plain && is_name(&literal) => {
                    self.subscript()?;
                    plain = false;
                    w.text();
                    w.assignment = self.peek() == Some(b'=') || self.at(b"+=");
                }
                b'=' | b'+' if plain && is_name(&literal) && !w.seen_eq => {
                    let eq = c == b'=' || self.peek_at(1) == Some(b'=');
                    if eq {
                        w.assignment = true;
                    }
                    literal.push(c);
                    w.keep(c);
                    self.pos += 1;
                    w.text();
                    w.seen_eq |= c == b'=';
                }
                _ => {
                    if c == b'=' {
                        w.seen_eq = true;
                    }
                    literal.push(c);
                    w.keep(c);
                    self.pos += 1;
                    w.text();
                }
            }
            if !plain && w.prefix.is_none() {
                w.prefix = Some(literal.clone());
            }
        }
        if self.peek().is_some_and(|c| c == b'<' || c == b'>') && plain {
            // `2>file`, bash's `{fd}>file`: the descriptor of the redirection, not a word.
            w.io_number = !literal.is_empty()
                && (literal.iter().all(u8::is_ascii_digit)
                    || (literal.first() == Some(&b'{')
                        && literal.last() == Some(&b'}')
                        && is_name(&literal[1..literal.len() - 1])));
        }
        if plain {
            w.prefix = Some(literal.clone());
            w.literal = Some(literal);
        }
        Ok(w)
    }

    /// bash's array subscript in `name[…]=value`, after the name: bash evaluates it as
    /// arithmetic, so no placeholder may stand in it.
    pub(super) fn subscript(&mut self) -> Scan {
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.peek() {
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'{') if self.at(b"{{") => {
                    return Err(self
                        .refuse_here("in an array subscript, which bash evaluates as arithmetic"));
                }
                Some(b'$') => self.dollar(false, &mut Word::default())?,
                Some(c) if c.is_ascii_alphanumeric() || b"_@*+-/%".contains(&c) => self.pos += 1,
                _ => {
                    return Err(self.lost_at(
                        start,
                        "an array subscript that is not a plain name or number",
                    ));
                }
            }
        }
    }

    /// `'…'`: nothing is special inside but the closing quote (a backslash-newline stays).
    pub(super) fn single(&mut self, nest: Nest, w: &mut Word) -> Scan {
        self.bump(1);
        while let Some(c) = self.raw_at(0) {
            match c {
                b'\'' => {
                    self.pos += 1;
                    return Ok(());
                }
                b'{' if self.b[self.pos..].starts_with(b"{{") => {
                    self.hole(nest, Context::SingleQuoted, w)?;
                }
                _ => {
                    w.keep(c);
                    self.pos += 1;
                    w.text();
                }
            }
        }
        Ok(())
    }

    /// `"…"`: backslash escapes, `$` and backticks are active inside.
    pub(super) fn double(&mut self, nest: Nest, w: &mut Word) -> Scan {
        self.bump(1);
        while let Some(c) = self.peek() {
            match c {
                b'"' => {
                    self.pos += 1;
                    return Ok(());
                }
                b'\\' => {
                    self.check_escape()?;
                    match self.raw_at(1) {
                        Some(e @ (b'$' | b'`' | b'"' | b'\\')) => w.keep(e),
                        Some(e) => {
                            w.keep(b'\\');
                            w.keep(e);
                        }
                        None => w.keep(b'\\'),
                    }
                    self.pos = (self.pos + 2).min(self.b.len());
                    w.text();
                }
                b'$' => {
                    w.expanded = true;
                    self.dollar(true, w)?;
                }
                b'`' => {
                    w.expanded = true;
                    self.backtick()?;
                }
                b'{' if self.at(b"{{") && self.pos == self.bare_name_end => {
                    // `"$x{{ v }}"` would read `$xvalue`: the value lengthens the name.
                    return Err(self.refuse_here(
                        "right after `$name` inside double quotes, where the value would \
                         lengthen the variable's name (write `${name}`)",
                    ));
                }
                b'{' if self.at(b"{{") => self.hole(nest, Context::DoubleQuoted, w)?,
                _ => {
                    w.keep(c);
                    self.pos += 1;
                    w.text();
                }
            }
        }
        Ok(())
    }

    /// `$`: an expansion, or a plain dollar.
    pub(super) fn dollar(&mut self, in_double: bool, w: &mut Word) -> Scan {
        // `$\⏎{{ v }}` too: the shell joins `$` and the value's opening quote, and bash
        // reads `$'…'` as an escaped string.
        if self.peek_at(1) == Some(b'{') && self.peek_at(2) == Some(b'{') {
            return Err(Stop::Refused(format!(
                "a placeholder right after `$` would be expanded by the shell: {UNSAFE_HINT}"
            )));
        }
        match self.peek_at(1) {
            Some(b'(') if self.peek_at(2) == Some(b'(') => self.arith(3, Some("inside $(( ))")),
            Some(b'(') => {
                self.bump(2);
                match self.code(End::Paren, Some("inside $( )"), true)? {
                    Ended::Paren => Ok(()),
                    _ => Err(self.lost("an unclosed `$(`")),
                }
            }
            Some(b'{') => self.param(in_double),
            Some(b'\'') if !in_double => self.dollar_single(),
            Some(b'"') if !in_double => {
                self.bump(1);
                self.double(Some("inside $\" \""), w)
            }
            Some(b'[') => Err(self.lost("bash's `$[ ]`")),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                self.bump(1);
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
                {
                    self.pos += 1;
                }
                self.bare_name_end = self.pos;
                Ok(())
            }
            _ => {
                self.bump(1);
                Ok(())
            }
        }
    }

    /// bash's `$'…'`. dash reads it as `$` and a single-quoted string: the two agree on where
    /// it ends unless a `\'` stands inside.
    pub(super) fn dollar_single(&mut self) -> Scan {
        self.bump(2);
        while let Some(c) = self.raw_at(0) {
            match c {
                b'\'' => {
                    self.pos += 1;
                    return Ok(());
                }
                b'\\' if self.raw_at(1) == Some(b'\'') => {
                    return Err(self
                        .lost("`\\'` inside `$'…'` (dash ends the string there, bash does not)"));
                }
                b'\\' => {
                    self.check_escape()?;
                    self.pos = (self.pos + 2).min(self.b.len());
                }
                b'{' if self.b[self.pos..].starts_with(b"{{") => {
                    return Err(self.refuse_here("inside $' '"));
                }
                _ => self.pos += 1,
            }
        }
        Ok(())
    }

    /// `${…}`: a name, then `}` or an operator and a plain word. Quotes, backslashes,
    /// backticks, braces and newlines inside the word are not followed: the shells disagree
    /// about them (a `'` inside a double-quoted `${x:-'}` is a quote to bash and a character
    /// to dash).
    pub(super) fn param(&mut self, in_double: bool) -> Scan {
        const OPS: &[&[u8]] = &[
            b":-", b":=", b":?", b":+", b"##", b"%%", b"//", b"/#", b"/%", b"^^", b",,", b"-",
            b"=", b"?", b"+", b"#", b"%", b"/", b"^", b",", b"@", b":",
        ];
        self.enter()?;
        let start = self.pos;
        self.bump(2);
        if matches!(self.peek(), Some(b'#' | b'!')) && self.peek_at(1) != Some(b'}') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'{') if self.at(b"{{") => return Err(self.refuse_here("inside ${ }")),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
                {
                    self.pos += 1;
                }
            }
            Some(c) if c.is_ascii_digit() => {
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                }
            }
            Some(b'@' | b'*' | b'#' | b'?' | b'-' | b'$' | b'!') => self.pos += 1,
            _ => return Err(self.lost_at(start, "a `${` without a parameter name")),
        }
        if self.peek() == Some(b'[') {
            self.subscript()?;
        }
        if self.peek() != Some(b'}') {
            match OPS.iter().find(|op| self.at(op)) {
                Some(op) => self.bump(op.len()),
                None => return Err(self.lost_at(start, "a `${ }` form actiond does not know")),
            }
        }
        loop {
            match self.peek() {
                None => return Err(self.lost_at(start, "an unclosed `${`")),
                Some(b'}') => {
                    self.pos += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                Some(b'{') if self.at(b"{{") => return Err(self.refuse_here("inside ${ }")),
                Some(b'$') if matches!(self.peek_at(1), Some(b'\'' | b'"')) => {
                    return Err(self.lost_at(start, "a quote inside `${ }`"));
                }
                Some(b'$') => self.dollar(in_double, &mut Word::default())?,
                Some(b'\'' | b'"' | b'\\' | b'`' | b'{' | b'\n') => {
                    return Err(self.lost_at(
                        start,
                        "a quote, backslash, backtick, brace or newline inside `${ }`",
                    ));
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    /// `$(( … ))` (`skip` = 3) or bash's `(( … ))` command (`skip` = 2): arithmetic, up to
    /// the `))` that closes it. dash and ash read the command `(( … ))` as two nested
    /// subshells, so there `<<` opens a here-document and `#` may start a comment: the
    /// model follows the command only while both readings agree.
    pub(super) fn arith(&mut self, skip: usize, nest: Nest) -> Scan {
        self.enter()?;
        let start = self.pos;
        self.bump(skip);
        let mut depth = 0u32;
        loop {
            if skip == 2 && matches!(self.peek(), Some(b'<' | b'#' | b'$' | b'`')) {
                return Err(self.lost_at(
                    start,
                    "`(( ))` with `<`, `#`, `$` or a backtick (dash reads it as subshells)",
                ));
            }
            match self.peek() {
                None => return Err(self.lost_at(start, "an unclosed `$((`")),
                Some(b'(') => {
                    depth += 1;
                    self.pos += 1;
                }
                Some(b')') if depth > 0 => {
                    depth -= 1;
                    self.pos += 1;
                }
                Some(b')') if self.peek_at(1) == Some(b')') => {
                    self.bump(2);
                    self.depth -= 1;
                    return Ok(());
                }
                Some(b')') => return Err(self.lost_at(start, "a `((` closed by a single `)`")),
                Some(b'$') if matches!(self.peek_at(1), Some(b'\'' | b'"')) => {
                    return Err(self.lost_at(start, "a quote inside `$(( ))`"));
                }
                Some(b'$') => self.dollar(false, &mut Word::default())?,
                Some(b'`') => self.backtick()?,
                Some(b'{') if self.at(b"{{") => return Err(self.refuse_here(nest.unwrap_or(""))),
                Some(b'\'' | b'"' | b'\\') => {
                    return Err(self.lost_at(start, "a quote or backslash inside `$(( ))`"));
                }
                Some(b'\n') if !self.heredocs.is_empty() || skip == 2 => {
                    return Err(self.lost_at(start, "a newline inside `$(( ))`"));
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    /// `` `…` ``: it ends at the first backtick no backslash escapes.
    pub(super) fn backtick(&mut self) -> Scan {
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.peek() {
                None => return Err(self.lost_at(start, "an unclosed backtick")),
                Some(b'`') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.check_escape()?;
                    self.pos = (self.pos + 2).min(self.b.len());
                }
                Some(b'{') if self.at(b"{{") => return Err(self.refuse_here("inside backticks")),
                Some(_) => self.pos += 1,
            }
        }
    }
}
