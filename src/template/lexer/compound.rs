//! Compound commands and reserved words: `case`, bash's `[[ ]]`, `for` and `select`
//! through their `do`, `time` with its options, `function`, subshells and `(( ))`. Each is
//! read far enough that the word starting the next command is known, so the command rules
//! apply to it.

use super::super::commands::{Command, Word, check_cond};
use super::super::filed;
use super::super::reread::{POSITIONAL, Read};
use super::{End, Ended, Lexer, Nest, Reserved, Scan, Stop, is_name, is_operator};
use super::{RESERVED_CLOSING, RESERVED_OPENING};

impl Lexer<'_> {
    /// A reserved word at the start of a command.
    pub(super) fn reserved(
        &mut self,
        word: &Word,
        end: End,
        nest: Nest,
        cmd: &mut Command,
        cmd_pos: &mut bool,
    ) -> Scan<Reserved> {
        let Some(lit) = word.literal.as_deref() else {
            return Ok(Reserved::Not);
        };
        match lit {
            b"case" => {
                let depth = self.open_group(cmd, false);
                self.case_clause(nest)?;
                *cmd = self.close_group_at(depth);
                *cmd_pos = false;
            }
            b"[[" => {
                self.cond(nest)?;
                *cmd = Command::compound(self.pos);
                *cmd_pos = false;
            }
            b"esac" => {
                if end == End::CaseItem {
                    return Ok(Reserved::Ended(Ended::Esac));
                }
                return Err(self.lost("an `esac` outside a `case`"));
            }
            b"for" | b"select" => {
                self.open_group(cmd, true);
                self.for_clause(nest)?;
                *cmd = Command::new(self.pos);
                *cmd_pos = true;
            }
            b"time" => {
                // bash reads `-p` and then `--` after `time` as its own: the word after them
                // starts the command (`time -p eval …` runs eval).
                for option in [&b"-p"[..], b"--"] {
                    self.skip_blanks();
                    if self.at_word(option) {
                        self.bump(option.len());
                    }
                }
                *cmd_pos = true;
            }
            b"function" => {
                self.skip_blanks();
                let name = self.word(nest, false)?;
                self.function_defined();
                self.defining = name.value().map(<[u8]>::to_vec);
                let back = self.pos;
                self.skip_blanks();
                if self.peek() == Some(b'(') {
                    self.bump(1);
                    self.skip_blanks();
                    if self.peek() != Some(b')') {
                        return Err(self.lost("a `function` definition"));
                    }
                    self.bump(1);
                } else {
                    self.pos = back;
                }
                *cmd_pos = true;
            }
            b"coproc" => return Err(self.lost("bash's `coproc`")),
            _ if RESERVED_OPENING.contains(&lit) => {
                // `then`, `else`, `elif` and `do` go on in the group `if` or `while` opened;
                // `!` and `time` open none.
                if matches!(lit, b"{" | b"if" | b"while" | b"until") {
                    self.open_group(cmd, true);
                }
                *cmd_pos = true;
            }
            _ if RESERVED_CLOSING.contains(&lit) => {
                *cmd = self.close_group();
                *cmd_pos = false;
            }
            _ => return Ok(Reserved::Not),
        }
        Ok(Reserved::Read)
    }

    /// A function is defined: its positional parameters are whatever it is called with,
    /// which the model does not follow.
    fn function_defined(&mut self) {
        let why = "the arguments a function is called with".to_string();
        self.notes
            .analysis
            .write_from(POSITIONAL.as_bytes(), vec![Read::Unknown(why)]);
    }

    /// `(`: a subshell, bash's `(( ))`, or the `()` of a function definition.
    pub(super) fn paren(&mut self, nest: Nest, cmd: &mut Command, cmd_pos: &mut bool) -> Scan {
        if *cmd_pos && cmd.is_empty() {
            if self.at(b"((") {
                self.arith(2, nest.or(Some("inside (( ))")))?;
                *cmd = Command::compound(self.pos);
            } else {
                self.bump(1);
                let depth = self.open_group(cmd, false);
                if self.code(End::Paren, nest, false)? != Ended::Paren {
                    return Err(self.lost("an unclosed `(`"));
                }
                *cmd = self.close_group_at(depth);
            }
            *cmd_pos = false;
            return Ok(());
        }
        if cmd.is_function_name() {
            let back = self.pos;
            self.bump(1);
            self.skip_blanks();
            if self.peek() == Some(b')') {
                self.bump(1);
                self.function_defined();
                self.defining = cmd.plain_name().map(<[u8]>::to_vec);
                *cmd = Command::new(self.pos);
                *cmd_pos = true;
                return Ok(());
            }
            self.pos = back;
        }
        Err(self.lost("a `(` in the middle of a command"))
    }

    /// `case WORD in pattern) list ;; … esac`, after the word `case`.
    fn case_clause(&mut self, nest: Nest) -> Scan {
        self.skip_blanks();
        if self.peek().is_none_or(|c| c == b'\n' || is_operator(c)) {
            return Err(self.lost("a `case` without its word"));
        }
        self.word(nest, false)?;
        self.skip_linebreaks()?;
        let word = self.word(nest, false)?;
        if word.literal.as_deref() != Some(b"in") {
            return Err(self.lost("a `case` without `in`"));
        }
        loop {
            self.skip_linebreaks()?;
            match self.peek() {
                None => return Err(self.lost("a `case` without `esac`")),
                Some(b'(') => self.pos += 1,
                Some(c) if is_operator(c) => return Err(self.lost("a `case` pattern")),
                Some(_) => {
                    let first = self.word(nest, false)?;
                    if first.literal.as_deref() == Some(b"esac") {
                        return Ok(());
                    }
                    self.pattern_end()?;
                    if self.peek() == Some(b')') {
                        self.pos += 1;
                        if self.case_item(nest)? {
                            return Ok(());
                        }
                        continue;
                    }
                    self.pos += 1; // `|`
                }
            }
            // The rest of the patterns: `a | b )`.
            loop {
                self.skip_blanks();
                if self.peek().is_none_or(|c| c == b'\n' || is_operator(c)) {
                    return Err(self.lost("a `case` pattern"));
                }
                self.word(nest, false)?;
                self.pattern_end()?;
                if self.peek() == Some(b')') {
                    self.pos += 1;
                    break;
                }
                self.pos += 1;
            }
            if self.case_item(nest)? {
                return Ok(());
            }
        }
    }

    /// After a pattern word: blanks, then `|` or `)`.
    fn pattern_end(&mut self) -> Scan {
        self.skip_blanks();
        match self.peek() {
            Some(b'|' | b')') => Ok(()),
            _ => Err(self.lost("a `case` pattern")),
        }
    }

    /// The commands of one `case` item; true when `esac` ended them.
    fn case_item(&mut self, nest: Nest) -> Scan<bool> {
        match self.code(End::CaseItem, nest, false)? {
            Ended::CaseBreak => Ok(false),
            Ended::Esac => Ok(true),
            _ => Err(self.lost("a `case` item")),
        }
    }

    /// bash's `[[ … ]]`, after the `[[`: words up to `]]` on the same line. dash and busybox
    /// ash read `[[` as a command: there `||` and `&&` end it (the word after one is a command
    /// name), `<` and `>` are redirections, `(` and `)` syntax, `#` starts a comment and `<<`
    /// a here-document, so the model stops at any of them.
    fn cond(&mut self, nest: Nest) -> Scan {
        let mut words: Vec<Word> = Vec::new();
        loop {
            self.skip_blanks();
            let after_regex = words
                .last()
                .is_some_and(|w| w.literal.as_deref() == Some(b"=~"));
            let regex_end = |c: u8| matches!(c, b'(' | b')' | b'|' | b'<' | b'>');
            if after_regex {
                // bash reads the regular expression as one word, with `(`, `)` and `|`.
                if self.peek().is_some_and(regex_end) {
                    return Err(self.lost("a regular expression after `=~` with `(`, `)` or `|`"));
                }
                if !self.peek().is_none_or(|c| is_operator(c) || c == b'\n') {
                    words.push(self.word(nest, false)?);
                    if self.peek().is_some_and(regex_end) {
                        return Err(
                            self.lost("a regular expression after `=~` with `(`, `)` or `|`")
                        );
                    }
                    continue;
                }
            }
            match self.peek() {
                None | Some(b'\n') => return Err(self.lost("a `[[` without `]]` on its line")),
                Some(b'#') => return Err(self.lost("a `#` inside `[[ ]]`")),
                Some(c) if is_operator(c) => {
                    return Err(self.lost(
                        "an operator inside `[[ ]]` (`||`, `&&`, `<`, `>`, `(` or `)`: dash and \
                         busybox ash read `[[` as a command, and these as the shell's own)",
                    ));
                }
                Some(_) => {
                    let w = self.word(nest, false)?;
                    if w.literal.as_deref() == Some(b"]]") {
                        break;
                    }
                    words.push(w);
                }
            }
        }
        check_cond(&words, &mut self.notes).map_err(|why| Stop::Refused(why.to_string()))
    }

    /// `for NAME [in WORDS] do` and bash's `select`, after the word, through `do`: the body's
    /// first word starts a command (`for x do eval …` runs eval). The name is written with
    /// the words, or with the positional parameters when there is no `in`.
    fn for_clause(&mut self, nest: Nest) -> Scan {
        self.skip_blanks();
        if self.at(b"((") {
            return Err(self.lost("bash's `for (( ))`"));
        }
        if self.peek().is_none_or(|c| c == b'\n' || is_operator(c)) {
            return Err(self.lost("a `for` without its name"));
        }
        let name = self.word(nest, false)?;
        let at = name.start;
        let Some(name) = name.literal.filter(|n| is_name(n)) else {
            return Err(self.lost("a `for` whose name is no plain name"));
        };
        self.skip_blanks();
        let semicolon = self.peek() == Some(b';');
        if semicolon {
            self.bump(1);
        }
        self.skip_linebreaks()?;
        // `for x do` walks the positional parameters.
        let mut reads = vec![Read::Variable(POSITIONAL.to_string())];
        if !semicolon && self.at_word(b"in") {
            self.bump(2);
            reads.clear();
            loop {
                self.skip_blanks();
                match self.peek() {
                    None => return Err(self.lost("a `for` without `do`")),
                    Some(b';') => {
                        self.bump(1);
                        break;
                    }
                    Some(b'\n') => break,
                    Some(b'#') => self.comment()?,
                    Some(c) if is_operator(c) => {
                        return Err(self.lost("an operator in the words of a `for`"));
                    }
                    Some(_) => {
                        let word = self.word(nest, false)?;
                        if let Some(text) = word.value() {
                            self.notes.analysis.write_text(&name, text);
                            filed::note_name(&mut self.notes.analysis, &name, text);
                        }
                        // A word of a `for` may be a pattern: its files' names are unknown.
                        let plain = word
                            .value()
                            .filter(|t| !t.iter().any(|c| b"*?[".contains(c)));
                        filed::lands::assign(&mut self.notes.analysis.cwd, &name, plain);
                        reads.extend(word.reads(false));
                    }
                }
            }
            self.skip_linebreaks()?;
        }
        self.notes.exported_write(at, &name, reads.clone());
        self.notes.analysis.write_from(&name, reads);
        if !self.at_word(b"do") {
            return Err(self.lost("a `for` loop actiond does not follow"));
        }
        self.bump(2);
        Ok(())
    }
}
