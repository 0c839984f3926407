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
//! how later commands are read or what a plain assignment does.

use super::Placeholder;
use super::Stop;
use super::UNSAFE_HINT;

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
    /// A placeholder comes before any other character: the value starts the word.
    pub leading_hole: bool,
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
}

impl Word {
    pub fn new(start: usize) -> Word {
        Word {
            start,
            ..Word::default()
        }
    }

    /// An operator of `[[ ]]`, or a word with no placeholder that matters (`<( )`).
    pub fn operator(start: usize, text: &[u8]) -> Word {
        Word {
            start,
            literal: Some(text.to_vec()),
            prefix: Some(text.to_vec()),
            unquoted: text.to_vec(),
            seen_text: true,
            ..Word::default()
        }
    }

    pub fn text(&mut self) {
        self.seen_text = true;
    }

    /// A byte of the word's text after quote removal.
    pub fn keep(&mut self, b: u8) {
        self.unquoted.push(b);
    }

    /// The word as the command will see it, when no expansion makes it unknown.
    fn value(&self) -> Option<&[u8]> {
        (!self.expanded).then_some(self.unquoted.as_slice())
    }

    fn is_value(&self, v: &[u8]) -> bool {
        self.value() == Some(v)
    }

    pub fn note_hole(&mut self, p: Placeholder) {
        self.expanded = true;
        if !self.seen_text {
            self.leading_hole = true;
        }
        if !self.seen_eq {
            self.hole_before_eq = true;
        }
        self.first.get_or_insert(p);
    }

    fn is(&self, lit: &[u8]) -> bool {
        self.literal.as_deref() == Some(lit)
    }
}

/// A simple command being read: its name (when plain) and its arguments.
#[derive(Debug)]
pub(super) struct Command {
    pub start: usize,
    /// Words before the name: assignments (and nothing else).
    prefix: usize,
    /// The command word was read.
    named: bool,
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
}

/// Builtins that read every argument as code, arithmetic or a variable name.
const READ_AS_CODE_OR_NAME: &[&[u8]] = &[
    b"eval",
    b"trap",
    b"let",
    b"alias",
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

/// `[[ ]]` operators whose operands bash evaluates as arithmetic.
const ARITHMETIC: &[&[u8]] = &[b"-eq", b"-ne", b"-lt", b"-le", b"-gt", b"-ge"];

/// Unary tests whose operand is a variable name.
const NAME_TESTS: &[&[u8]] = &[b"-v", b"-R"];

impl Command {
    pub fn new(start: usize) -> Command {
        Command {
            start,
            prefix: 0,
            named: false,
            name: None,
            unknown: false,
            literal_name: false,
            wrapped: false,
            args: Vec::new(),
            compound: false,
        }
    }

    pub fn compound(start: usize) -> Command {
        Command {
            compound: true,
            ..Command::new(start)
        }
    }

    pub fn is_empty(&self) -> bool {
        !self.compound && !self.named && self.prefix == 0 && self.args.is_empty()
    }

    /// Whether a `(` now makes this a function definition `name()`.
    pub fn is_function_name(&self) -> bool {
        !self.compound && self.prefix == 0 && self.literal_name && self.args.is_empty()
    }

    /// Whether the next word may be a bash array assignment `name[…]=`.
    pub fn assignment_allowed(&self) -> bool {
        !self.compound && !self.named
    }

    pub fn push(&mut self, word: Word) {
        if self.compound {
            return;
        }
        if !self.named {
            if word.assignment {
                self.prefix += 1;
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
            self.named = true;
            self.literal_name = word.literal.is_some();
            self.name = word.value().map(<[u8]>::to_vec);
            self.unknown = self.name.is_none() && !word.unquoted.contains(&b'/');
            return;
        }
        self.args.push(word);
    }

    /// The rules, once the command is complete.
    pub fn check(&self) -> Result<(), Stop> {
        let holes = || self.args.iter().filter(|w| w.first.is_some());
        if let Some(w) = holes().next().filter(|_| self.unknown) {
            let p = w.first.as_ref().map_or(String::new(), ToString::to_string);
            return Err(Stop::Refused(format!(
                "{p} is an argument of a command whose name comes from an expansion or a \
                 value, so actiond cannot tell whether it reads its arguments as code (it \
                 could be `eval`); write the command's name out: {UNSAFE_HINT}"
            )));
        }
        let Some(name) = self.name.as_deref() else {
            return Ok(());
        };
        if let Some(w) = holes()
            .next()
            .filter(|_| READ_AS_CODE_OR_NAME.contains(&name))
        {
            return Err(refused(
                w,
                name,
                "reads its arguments as code or as variable names",
            ));
        }
        match name {
            b"export" | b"readonly" => {
                if let Some(w) = holes().find(|w| !w.assignment || w.hole_before_eq) {
                    return Err(refused(
                        w,
                        name,
                        "reads the part before `=` as a variable name",
                    ));
                }
            }
            b"printf" => self.printf()?,
            b"test" | b"[" => self.test()?,
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
            b"declare" | b"typeset" | b"local" if self.has_option(b"in") => {
                lost("`declare -i` or `-n`, after which an assignment can evaluate its value")
            }
            _ => Ok(()),
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

    /// `printf -v NAME` assigns to NAME; a value at the start of the first argument could be
    /// that option itself.
    fn printf(&self) -> Result<(), Stop> {
        let mut options = true;
        for (i, w) in self.args.iter().enumerate() {
            if w.first.is_none() {
                options &= !w.is_value(b"--");
                continue;
            }
            let after_v = i > 0 && self.args[i - 1].is_value(b"-v");
            let glued_v = w.unquoted.starts_with(b"-v");
            let leads = options && i == 0 && w.leading_hole;
            if after_v || glued_v || leads {
                return Err(refused(
                    w,
                    b"printf",
                    "assigns to the variable named after `-v`, and bash evaluates that name",
                ));
            }
            options = false;
        }
        Ok(())
    }

    /// `test` and `[`: the operand of `-v` or `-R` is a variable name, and a value can be an
    /// operator itself, so a value right after another value is refused too.
    fn test(&self) -> Result<(), Stop> {
        for (i, w) in self.args.iter().enumerate() {
            if w.first.is_none() || i == 0 {
                continue;
            }
            let prev = &self.args[i - 1];
            if prev.first.is_some() || NAME_TESTS.iter().any(|t| prev.is_value(t)) {
                return Err(refused(
                    w,
                    b"test",
                    "may read it as the variable name of `-v`, which bash evaluates",
                ));
            }
        }
        Ok(())
    }
}

fn refused(w: &Word, name: &[u8], why: &str) -> Stop {
    let p = w.first.as_ref().map_or(String::new(), ToString::to_string);
    Stop::Refused(format!(
        "{p} is an argument of `{}`, which {why}: {UNSAFE_HINT}",
        String::from_utf8_lossy(name)
    ))
}

/// `[[ … ]]`: a placeholder may not be an operand of an arithmetic comparison or of `-v`.
pub(super) fn check_cond(words: &[Word]) -> Result<(), String> {
    for (i, w) in words.iter().enumerate() {
        let Some(p) = &w.first else { continue };
        let prev = i.checked_sub(1).map(|j| &words[j]);
        let next = words.get(i + 1);
        let arithmetic = |o: Option<&Word>| o.is_some_and(|o| ARITHMETIC.iter().any(|a| o.is(a)));
        if arithmetic(prev) || arithmetic(next) {
            return Err(format!(
                "{p} is an operand of an arithmetic comparison inside [[ ]], which bash \
                 evaluates as arithmetic (a value such as `a[$(cmd)]` would run cmd); compare \
                 inside [ ] instead, or: {UNSAFE_HINT}"
            ));
        }
        if prev.is_some_and(|o| NAME_TESTS.iter().any(|t| o.is(t))) {
            return Err(format!(
                "{p} is the variable name of `-v` inside [[ ]], which bash evaluates: {UNSAFE_HINT}"
            ));
        }
    }
    Ok(())
}
