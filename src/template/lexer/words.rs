//! Words: unquoted text, the three quotes, escapes and line continuations, placeholders,
//! and the expansions inside a word (`$name`, `${ }`, `$( )`, `$(( ))`, backticks, `$'…'`,
//! `$"…"`), each followed to its end.

use super::super::Context;
use super::super::UNSAFE_HINT;
use super::super::commands::{DATA_SPLIT, Word};
use super::super::filed;
use super::super::reread::{Output, POSITIONAL, Read, Rereading, SCRIPT_NAME, output_reads};
use super::{End, Ended, Lexer, Nest, Scan, Stop, is_blank, is_name, is_operator};

impl Lexer<'_> {
    /// One word. `assign`: it stands where an assignment may (before a command's name), which
    /// allows bash's `name[subscript]=` at its start and leaves an assignment's value unsplit.
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
                    self.note_unexpanded(self.pos + 1);
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
                    let split = !(w.assignment && assign);
                    self.backtick(&mut w, split)?;
                }
                b'$' => {
                    plain = false;
                    w.expanded = true;
                    // An assignment's value is not split (`x=$NAME`, `x=$NAME cmd`); every
                    // other unquoted expansion is split at IFS and globbed, in a word shaped
                    // like an assignment that is a command's argument too (`printf %s
                    // x=$NAME`, and `export x=$NAME`, `local`, `readonly`, `declare`,
                    // `typeset`: declaration utilities only since POSIX.1-2024 and dash
                    // 0.5.11, and bash splits them behind `command` or a variable).
                    let split = !(w.assignment && assign);
                    if split {
                        self.note_unquoted();
                    }
                    self.splitting = split;
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
                    if c == b'=' {
                        w.value_at = Some(w.unquoted.len());
                    }
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

    /// bash's array subscript in `name[…]=value` or `${name[…]}`, after the name: bash
    /// evaluates it as arithmetic, so no placeholder may stand in it, and what it reads is
    /// noted.
    pub(super) fn subscript(&mut self) -> Scan {
        let start = self.pos;
        self.pos += 1;
        let mut inner = Word::new(start);
        let mut names = Vec::new();
        loop {
            match self.peek() {
                Some(b']') => {
                    self.pos += 1;
                    let reads = arithmetic_reads(&inner, names);
                    self.notes
                        .reread(start, "an array subscript", Rereading::Arithmetic, reads);
                    return Ok(());
                }
                Some(b'{') if self.at(b"{{") => {
                    return Err(self.refuse_arith("in an array subscript"));
                }
                Some(b'$') => self.dollar(false, &mut inner)?,
                Some(c) if c.is_ascii_alphabetic() || c == b'_' => names.push(self.name()),
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

    /// A name at `pos` (continuations removed), read past.
    fn name(&mut self) -> String {
        let mut out = Vec::new();
        while let Some(c) = self
            .peek()
            .filter(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            out.push(c);
            self.pos += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    /// A placeholder at `pos` inside arithmetic: refused, with the way that works.
    pub(super) fn refuse_arith(&self, place: &str) -> Stop {
        let how = Rereading::Arithmetic;
        match super::super::parse_placeholder(&self.text[self.pos..]) {
            Ok((p, _)) => Stop::Refused(format!(
                "{p} stands {place}, which {}: {}",
                how.does(),
                how.hint()
            )),
            Err(e) => Stop::Refused(e.message),
        }
    }

    /// Notes the variable `$NAME` or `${NAME…}` at `self.pos` expands, standing unquoted
    /// where the shell splits its value into words and globs them. `${#NAME}` (a number) and
    /// `${!NAME}` (noted as a name read) are not. The name is read as the shells read it,
    /// line continuations removed (`$ACTIOND_ARG_\⏎NAME` is `$ACTIOND_ARG_NAME`).
    pub(super) fn note_unquoted(&mut self) {
        let ident = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_';
        let braced = self.peek_at(1) == Some(b'{');
        let mut i = if braced { 2 } else { 1 };
        // `${!name}`: a variable named by a value, noted as `!name`.
        let indirect = braced && self.peek_at(2) == Some(b'!') && self.peek_at(3) != Some(b'}');
        if indirect {
            i += 1;
        }
        let name = match self.peek_at(i) {
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let mut name = Vec::new();
                while let Some(c) = self.peek_at(i).filter(ident) {
                    name.push(c);
                    i += 1;
                }
                let name = String::from_utf8_lossy(&name).into_owned();
                if indirect { format!("!{name}") } else { name }
            }
            // `$1`, `$@`, `$*`, `${10}`: the positional parameters, which `set --` and a
            // function's call fill; `$0`, which the word after a script of `sh -c` fills.
            // `${10}` is the tenth; `$10` is `$1` and a `0`.
            Some(c @ (b'0'..=b'9' | b'@' | b'*')) if !indirect => {
                if braced && c.is_ascii_digit() {
                    let mut digits = String::new();
                    while let Some(d) = self.peek_at(i).filter(u8::is_ascii_digit) {
                        digits.push(d as char);
                        i += 1;
                    }
                    digits
                } else {
                    (c as char).to_string()
                }
            }
            // `${!#}`: the last positional parameter.
            Some(b'#') if indirect => POSITIONAL.to_string(),
            _ => return,
        };
        let line = self.notes.line(self.pos);
        self.notes.analysis.unquoted.entry(name).or_insert(line);
    }

    pub(super) fn note_unexpanded(&mut self, i: usize) {
        if self.b.get(i) != Some(&b'$') {
            return;
        }
        let mut j = i + 1;
        if self.b.get(j) == Some(&b'{') {
            j += 1;
        }
        let end = (j..self.b.len())
            .find(|&k| !(self.b[k].is_ascii_alphanumeric() || self.b[k] == b'_'))
            .unwrap_or(self.b.len());
        if end > j && is_name(&self.b[j..end]) {
            let name = String::from_utf8_lossy(&self.b[j..end]).into_owned();
            self.notes.analysis.unexpanded.insert(name);
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
                    self.note_unexpanded(self.pos);
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
                    self.note_unexpanded(self.pos + 1);
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
                b'$' => self.dollar(true, w)?,
                b'`' => self.backtick(w, false)?,
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

    /// `$`: an expansion, or a plain dollar. What it expands is noted in `w`.
    pub(super) fn dollar(&mut self, in_double: bool, w: &mut Word) -> Scan {
        // Set by the caller for this `$` only: it stands unquoted where the shell splits.
        let split = std::mem::take(&mut self.splitting) && !in_double;
        // `$\⏎{{ v }}` too: the shell joins `$` and the value's opening quote, and bash
        // reads `$'…'` as an escaped string.
        if self.peek_at(1) == Some(b'{') && self.peek_at(2) == Some(b'{') {
            return Err(Stop::Refused(format!(
                "a placeholder right after `$` would be expanded by the shell: {UNSAFE_HINT}"
            )));
        }
        match self.peek_at(1) {
            Some(b'(') if self.peek_at(2) == Some(b'(') => {
                w.note_expansion();
                self.arith(3, Some("inside $(( ))"))
            }
            Some(b'(') => {
                let at = self.pos;
                self.bump(2);
                let from = self.pos;
                match self.code(End::Paren, Some("inside $( )"), true)? {
                    Ended::Paren => {
                        let what = "the output of `$( )`";
                        self.note_output(at, from, self.pos - 1, what, split, w);
                        Ok(())
                    }
                    _ => Err(self.lost("an unclosed `$(`")),
                }
            }
            Some(b'{') => self.param(in_double, split, w),
            Some(b'\'') if !in_double => {
                w.note_expansion();
                self.dollar_single()
            }
            Some(b'"') if !in_double => {
                w.note_expansion();
                self.bump(1);
                self.double(Some("inside $\" \""), w)
            }
            Some(b'[') => Err(self.lost("bash's `$[ ]`")),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                self.bump(1);
                let name = self.name();
                w.note_variable(name.as_bytes());
                self.bare_name_end = self.pos;
                Ok(())
            }
            Some(c @ (b'0'..=b'9' | b'@' | b'*')) => {
                w.note_opaque(&format!("`${}`", c as char));
                self.bump(2);
                Ok(())
            }
            Some(b'?' | b'#' | b'$' | b'!' | b'-') => {
                w.note_expansion();
                self.bump(2);
                Ok(())
            }
            _ => {
                self.bump(1);
                Ok(())
            }
        }
    }

    /// A command substitution at `at` whose command is the raw text `from..to`, in `w`: what
    /// it reads carries into its output (`output_reads`), which the shell splits where it
    /// stands unquoted (`split`). One that reads nothing is computed (`$(date +%F)`).
    fn note_output(
        &mut self,
        at: usize,
        from: usize,
        to: usize,
        what: &'static str,
        split: bool,
        w: &mut Word,
    ) {
        let text = &self.b[from..to.max(from)];
        // `eval "$(cat radio.txt)"`: what a file named as data holds, whatever else it reads;
        // outside quotes the shell splits it (`rm -f $(cat cleanup.txt)`).
        for name in filed::data_printed(text) {
            if split {
                let line = self.notes.line(at);
                self.notes
                    .analysis
                    .data_words
                    .push((name.clone(), line, DATA_SPLIT));
            }
            w.note_stored(name);
        }
        let mut reads = output_reads(text);
        // `$(cat "$F")` after `F=/srv/radio.txt`.
        for r in &reads {
            if let Read::Variable(v) = r
                && let Some(name) = self.notes.analysis.data_name(v)
            {
                let name = String::from_utf8_lossy(name).into_owned();
                if split {
                    let line = self.notes.line(at);
                    let found = (name.clone(), line, DATA_SPLIT);
                    self.notes.analysis.data_words.push(found);
                }
                w.note_stored(name);
            }
        }
        if reads.is_empty() {
            // `printf %s "$NAME" > f; rm "$(cat f)"`: it prints the value written there.
            reads = filed::named_in(text, &self.notes.analysis.filed);
        }
        if reads.is_empty() {
            w.note_computed(what);
            // Its command may still read a file or input a value was written to (`judge`
            // weighs it against `Analysis::spilled`).
            if split {
                let line = self.notes.line(at);
                let reads = vec![Read::Computed(what.to_string())];
                self.notes
                    .analysis
                    .outputs
                    .push(Output { what, line, reads });
            }
            return;
        }
        // At the start of an argument, quoted or not, its output (a value changed by its
        // command, `tr _ -`) may start with `-` where the value does not.
        if !w.seen_text {
            w.stripped
                .get_or_insert_with(|| (what.to_string(), Some(reads.clone())));
        }
        for r in &reads {
            if let Read::Variable(v) = r {
                w.note_variable(v.as_bytes());
            }
        }
        w.note_opaque(what);
        if split {
            let line = self.notes.line(at);
            self.notes
                .analysis
                .outputs
                .push(Output { what, line, reads });
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
                _ => {
                    self.note_unexpanded(self.pos);
                    self.pos += 1;
                }
            }
        }
        Ok(())
    }

    /// `${…}`: a name, then `}` or an operator and a plain word. Quotes, backslashes,
    /// backticks, braces and newlines inside the word are not followed: the shells disagree
    /// about them (a `'` inside a double-quoted `${x:-'}` is a quote to bash and a character
    /// to dash). `${!name}` reads a value as a name, and `${x:offset:length}` and a
    /// subscript are arithmetic: what they read is noted.
    ///
    /// The word of `${x:-WORD}`, `${x=WORD}`, `${x:+WORD}`, `${x?WORD}` and a replacement
    /// (`${x/p/WORD}`) is the expansion's value: outside quotes (`split`) the shell splits
    /// what it expands, and `${x=WORD}` and `${x:=WORD}` assign it to `x` too.
    pub(super) fn param(&mut self, in_double: bool, split: bool, w: &mut Word) -> Scan {
        const OPS: &[&[u8]] = &[
            b":-", b":=", b":?", b":+", b"##", b"%%", b"//", b"/#", b"/%", b"^^", b",,", b"-",
            b"=", b"?", b"+", b"#", b"%", b"/", b"^", b",", b"@", b":",
        ];
        self.enter()?;
        let start = self.pos;
        // Nothing the author wrote comes before it in the word, or in an assignment's value.
        let leads = !w.seen_text;
        let leads_value = w.assignment && w.value_at == Some(w.unquoted.len());
        self.bump(2);
        let name = self.param_name(start, w)?;
        if self.peek() == Some(b'[') {
            self.subscript()?;
        }
        // `${x:offset:length}` (but not `${x:-…}`): arithmetic.
        let mut slice = None;
        // `${x/pattern}`: whether its replacement's `/` came.
        let mut replaced = None;
        // The operator's word is the value (`${x:-WORD}`), and `x` is assigned it.
        let mut value = false;
        let mut assigned = None;
        let mut word = Word::new(self.pos);
        if self.peek() != Some(b'}') {
            // `${f%.txt}` is no longer `$f`'s name (`Word::data_file`).
            w.changed = true;
            match OPS.iter().find(|op| self.at(op)) {
                Some(op) => {
                    if *op == b":" {
                        slice = Some((Word::new(self.pos), Vec::new()));
                    }
                    if op.starts_with(b"/") {
                        replaced = Some(false);
                    }
                    value = matches!(
                        *op,
                        b":-" | b":=" | b":?" | b":+" | b"-" | b"=" | b"?" | b"+"
                    );
                    if matches!(*op, b":=" | b"=") {
                        assigned = name.clone().filter(|n| !n.is_empty());
                    }
                    // `${x#p}`, `${x/p/r}`, `${x:1}` may start with `-` where `x` does not.
                    let strips = matches!(*op, b"#" | b"##" | b":") || op.starts_with(b"/");
                    if leads && strips && name.as_ref().is_none_or(|n| !n.is_empty()) {
                        let n = name.clone().unwrap_or_else(|| POSITIONAL.to_string());
                        w.stripped.get_or_insert((n, None));
                    }
                    w.assigns_stripped |= leads_value && strips;
                    self.bump(op.len());
                    // bash's `${x@P}` expands the value as a prompt string: `$( )` in it runs.
                    // (`@E` expands backslash escapes only, `@Q`, `@A` and the rest quote.)
                    if *op == b"@" && self.peek() == Some(b'P') {
                        let reads = match &name {
                            Some(n) if !n.is_empty() => vec![Read::Variable(n.clone())],
                            Some(_) => Vec::new(),
                            None => vec![Read::Variable(POSITIONAL.to_string())],
                        };
                        self.notes.reread(
                            start,
                            "bash's prompt expansion `${x@P}`",
                            Rereading::Code,
                            reads,
                        );
                    }
                }
                None => return Err(self.lost_at(start, "a `${ }` form actiond does not know")),
            }
        }
        loop {
            match self.peek() {
                None => return Err(self.lost_at(start, "an unclosed `${`")),
                Some(b'}') => {
                    self.pos += 1;
                    self.depth -= 1;
                    w.absorb(&word);
                    if let Some(n) = assigned {
                        self.notes
                            .analysis
                            .write_from(n.as_bytes(), word.reads(false));
                    }
                    if let Some((inner, names)) = slice {
                        let reads = arithmetic_reads(&inner, names);
                        self.notes.reread(
                            start,
                            "`${x:offset:length}`",
                            Rereading::Arithmetic,
                            reads,
                        );
                    }
                    // busybox ash reads the rest of the word after `${x/pattern}` (no
                    // replacement) as more of it: `${x/}'/a/b'` is `kk` and `b` there.
                    if replaced == Some(false) && self.word_goes_on(in_double) {
                        return Err(self.lost_at(
                            start,
                            "a `${x/pattern}` without a replacement, with more of the word \
                             after it (busybox ash reads that text as part of the expansion)",
                        ));
                    }
                    return Ok(());
                }
                Some(b'/') if replaced == Some(false) => {
                    replaced = Some(true);
                    self.pos += 1;
                }
                Some(b'{') if self.at(b"{{") => return Err(self.refuse_here("inside ${ }")),
                Some(b'$') if matches!(self.peek_at(1), Some(b'\'' | b'"')) => {
                    return Err(self.lost_at(start, "a quote inside `${ }`"));
                }
                Some(b'$') => match &mut slice {
                    Some((inner, _)) => self.dollar(in_double, inner)?,
                    None => {
                        // `rm ${DIR:-$NAME}`: the value stands unquoted.
                        if split && (value || replaced == Some(true)) {
                            self.note_unquoted();
                            self.splitting = true;
                        }
                        self.dollar(in_double, &mut word)?;
                    }
                },
                Some(b'\'' | b'"' | b'\\' | b'`' | b'{' | b'\n') => {
                    return Err(self.lost_at(
                        start,
                        "a quote, backslash, backtick, brace or newline inside `${ }`",
                    ));
                }
                Some(c) if (c.is_ascii_alphabetic() || c == b'_') && slice.is_some() => {
                    let n = self.name();
                    if let Some((_, names)) = &mut slice {
                        names.push(n);
                    }
                }
                Some(c) if c.is_ascii_digit() && slice.is_some() => {
                    while self
                        .peek()
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
                    {
                        self.pos += 1;
                    }
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    /// Whether the word goes on after the `}` just read (inside `"…"`: after its `"`).
    fn word_goes_on(&mut self, in_double: bool) -> bool {
        let mut i = 0;
        if in_double {
            if self.peek() != Some(b'"') {
                return true;
            }
            i = 1;
        }
        !self
            .peek_at(i)
            .is_none_or(|c| is_blank(c) || c == b'\n' || is_operator(c))
    }

    /// The parameter of `${`, after it (and its `#` or `!`), noted in `w`: `Some(name)` for a
    /// named or special one (empty for `$#`, `$?`, …), `None` for a positional one.
    fn param_name(&mut self, start: usize, w: &mut Word) -> Scan<Option<String>> {
        let mut length = false;
        let mut indirect = false;
        if matches!(self.peek(), Some(b'#' | b'!')) && self.peek_at(1) != Some(b'}') {
            length = self.peek() == Some(b'#');
            indirect = self.peek() == Some(b'!');
            self.pos += 1;
        }
        let name = match self.peek() {
            Some(b'{') if self.at(b"{{") => return Err(self.refuse_here("inside ${ }")),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => Some(self.name()),
            Some(c) if c.is_ascii_digit() => {
                let from = self.pos;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                }
                // `${!0}`: the variable `$0` names.
                if indirect && &self.b[from..self.pos] == b"0" {
                    self.named_by(start, SCRIPT_NAME, w);
                    return Ok(None);
                }
                None
            }
            Some(b'@' | b'*') => {
                self.pos += 1;
                None
            }
            Some(b'#' | b'?' | b'-' | b'$' | b'!') => {
                self.pos += 1;
                // `${!#}` is the last positional parameter itself (`$#` names it).
                if indirect && self.b[self.pos - 1] == b'#' {
                    w.note_opaque("a positional parameter (`${!#}`)");
                    return Ok(None);
                }
                Some(String::new())
            }
            _ => return Err(self.lost_at(start, "a `${` without a parameter name")),
        };
        match (&name, length, indirect) {
            (_, true, _) => w.note_expansion(),
            // `${!1}`, `${!@}`: the variable a positional parameter names, whose subscript
            // bash evaluates (`a[$(cmd)]`).
            (None, _, true) => self.named_by(start, POSITIONAL, w),
            (Some(n), _, true) if !n.is_empty() => {
                let reads = vec![Read::Variable(n.clone())];
                self.notes.reread(start, "`${!…}`", Rereading::Name, reads);
                w.note_opaque("a variable named by a value (`${!…}`)");
            }
            (Some(n), _, _) if !n.is_empty() => w.note_variable(n.as_bytes()),
            (Some(_), _, _) => w.note_expansion(),
            (None, _, _) => w.note_opaque("a positional parameter"),
        }
        Ok(name)
    }

    /// `${!P}` for a positional parameter `P` (noted as `variable`): the value names the
    /// variable expanded, read as a name.
    fn named_by(&mut self, start: usize, variable: &str, w: &mut Word) {
        let reads = vec![Read::Variable(variable.to_string())];
        self.notes.reread(start, "`${!…}`", Rereading::Name, reads);
        w.note_opaque("a variable named by a value (`${!…}`)");
    }

    /// `$(( … ))` (`skip` = 3) or bash's `(( … ))` command (`skip` = 2): arithmetic, up to
    /// the `))` that closes it. dash and ash read the command `(( … ))` as two nested
    /// subshells, so there `<<` opens a here-document and `#` may start a comment: the
    /// model follows the command only while both readings agree. The names it reads (bash
    /// evaluates their values again) are noted.
    pub(super) fn arith(&mut self, skip: usize, nest: Nest) -> Scan {
        self.enter()?;
        let start = self.pos;
        self.bump(skip);
        let mut depth = 0u32;
        let mut inner = Word::new(start);
        let mut names = Vec::new();
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
                    let place = if skip == 2 { "`(( ))`" } else { "`$(( ))`" };
                    let reads = arithmetic_reads(&inner, names);
                    self.notes
                        .reread(start, place, Rereading::Arithmetic, reads);
                    return Ok(());
                }
                Some(b')') => return Err(self.lost_at(start, "a `((` closed by a single `)`")),
                Some(b'$') if matches!(self.peek_at(1), Some(b'\'' | b'"')) => {
                    return Err(self.lost_at(start, "a quote inside `$(( ))`"));
                }
                Some(b'$') => self.dollar(false, &mut inner)?,
                Some(b'`') => self.backtick(&mut inner, false)?,
                Some(b'{') if self.at(b"{{") => {
                    return Err(self.refuse_arith(nest.unwrap_or("inside arithmetic")));
                }
                Some(b'\'' | b'"' | b'\\') => {
                    return Err(self.lost_at(start, "a quote or backslash inside `$(( ))`"));
                }
                Some(b'\n') if !self.heredocs.is_empty() || skip == 2 => {
                    return Err(self.lost_at(start, "a newline inside `$(( ))`"));
                }
                Some(c) if c.is_ascii_alphabetic() || c == b'_' => names.push(self.name()),
                Some(c) if c.is_ascii_digit() => {
                    // A number: `0x1F`, `16#ff` (`#` only in `$(( ))`, see above).
                    while let Some(c) = self.peek() {
                        let part = c.is_ascii_alphanumeric()
                            || c == b'_'
                            || c == b'@'
                            || (c == b'#' && skip == 3);
                        if !part {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    /// `` `…` ``: it ends at the first backtick no backslash escapes. `split`: it stands
    /// unquoted, where the shell splits its output (see `note_output`).
    pub(super) fn backtick(&mut self, w: &mut Word, split: bool) -> Scan {
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.peek() {
                None => return Err(self.lost_at(start, "an unclosed backtick")),
                Some(b'`') => {
                    let what = "the output of a backtick command";
                    self.note_output(start, start + 1, self.pos, what, split, w);
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

/// What arithmetic reads: the variables and other expansions in it, and its bare names.
fn arithmetic_reads(inner: &Word, names: Vec<String>) -> Vec<Read> {
    let mut reads = inner.reads(false);
    reads.extend(names.into_iter().map(Read::Variable));
    reads
}
