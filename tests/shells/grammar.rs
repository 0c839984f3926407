//! A generator of `shell:` templates from a small shell grammar: every quote kind, `$( )`,
//! backticks, `$(( ))`, the `${ }` forms, `case` (with bash's `;&` and `;;&`), here-documents
//! (quoted and not, `<<-`, two on one line, inside `$( )`, with continuations and
//! delimiter-like lines in their bodies), comments, line continuations, redirections (`<>`,
//! `>|`, `3>&1`), subshells, groups, functions, `while`, `until`, `!`, `alias`, bash's
//! `[[ ]]`, `(( ))`, `$'…'`, `<( )` and `<<<`, and the builtins that read a value as a name.
//! `{{ v }}` lands in random places, mostly where it is printed, so that what the shell makes
//! of it can be compared.
//!
//! A placeholder is put only where the command's behaviour does not depend on the value
//! itself (arguments of `p`, which prints each argument as `<arg>`; values of assignments
//! printed with `"$x"`; case subjects and patterns that no value equals), or in probes
//! (`read`, `printf -v`, `[[ -eq ]]`, …) that the model must refuse. So with the value `T` and
//! with a hostile value `H`, a right placement prints the same bytes with `T` replaced by `H`.

/// splitmix64: small, fast and the same everywhere, so a seed names a run.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    pub fn one(&mut self, items: &[&'static str]) -> &'static str {
        items[self.below(items.len())]
    }
}

const HOLE: &str = "{{ v }}";

/// Here-document delimiters the generator uses (values try to end them early).
pub const DELIMITERS: &[&str] = &["EOF", "E", "E F", "END"];

struct Heredoc {
    delimiter: &'static str,
    strip_tabs: bool,
}

pub struct Gen {
    rng: Rng,
    depth: u32,
    /// How many substitutions (`$( )`, `${ }`, backticks, …) enclose what is being written:
    /// a placeholder there is refused, so one is put there only now and then.
    sub: u32,
    /// How many more placeholders this template may get.
    budget: u32,
    /// The last template holds a probe: a command that may interpret its value (it is there
    /// to catch injections, so only an injection counts for it).
    pub probed: bool,
    /// Here-documents opened on the line being written, per nesting level of scripts.
    pending: Vec<Vec<Heredoc>>,
}

impl Gen {
    pub fn new(rng: Rng) -> Gen {
        Gen {
            rng,
            depth: 0,
            sub: 0,
            budget: 0,
            probed: false,
            pending: Vec::new(),
        }
    }

    /// `{{ v }}` now and then (a few per template, and inside a substitution, where it is
    /// refused, rarely), a plain word otherwise.
    fn hole(&mut self) -> &'static str {
        let chance = if self.sub == 0 { 40 } else { 3 };
        if self.budget > 0 && self.rng.chance(chance) {
            self.budget -= 1;
            HOLE
        } else {
            "a"
        }
    }

    /// Writes what `f` writes as the inside of a substitution.
    fn nested(&mut self, f: impl FnOnce(&mut Gen) -> String) -> String {
        self.sub += 1;
        let out = f(self);
        self.sub -= 1;
        out
    }

    /// A whole template, with line continuations sprinkled in now and then.
    pub fn template(&mut self) -> String {
        self.budget = 1 + self.rng.below(4) as u32;
        self.probed = false;
        let lines = 1 + self.rng.below(4);
        let mut text = self.script(lines);
        if self.rng.chance(25) {
            text = self.sprinkle_continuations(&text);
        }
        text
    }

    /// A template of one or two lines and at most `max` bytes, with one or two placeholders:
    /// short enough to be run with a line continuation at every position (`variants.rs`).
    pub fn short_template(&mut self, max: usize) -> String {
        loop {
            self.budget = 1 + self.rng.below(2) as u32;
            self.probed = false;
            let lines = 1 + self.rng.below(2);
            let mut text = self.script(lines);
            if self.rng.chance(50) {
                // A placeholder after everything else: where a construct above is misread,
                // the model must refuse it.
                text.push('\n');
                text.push_str(self.rng.one(&["p {{ v }}", "p \"{{ v }}\"", "p '{{ v }}'"]));
            }
            if text.len() <= max && text.contains(HOLE) {
                return text;
            }
        }
    }

    /// Inserts backslash-newlines between characters (never inside `{{ v }}`).
    fn sprinkle_continuations(&mut self, text: &str) -> String {
        let holes: Vec<(usize, usize)> = text
            .match_indices(HOLE)
            .map(|(at, h)| (at, at + h.len()))
            .collect();
        let n = 1 + self.rng.below(3);
        let spots: Vec<usize> = (0..n).map(|_| self.rng.below(text.len() + 1)).collect();
        let mut out = String::new();
        for (at, c) in text.char_indices() {
            let in_hole = holes.iter().any(|&(s, e)| s < at && at < e);
            if spots.contains(&at) && !in_hole {
                out.push_str("\\\n");
            }
            out.push(c);
        }
        out
    }

    /// Lines of statements; here-document bodies follow the line that opened them.
    fn script(&mut self, lines: usize) -> String {
        self.depth += 1;
        self.pending.push(Vec::new());
        let mut out = String::new();
        for i in 0..lines {
            if i > 0 {
                out.push('\n');
                self.bodies(&mut out);
            }
            out.push_str(&self.line());
            if self.rng.chance(10) {
                out.push_str(" #");
                out.push_str(self.rng.one(&["c", " '", "\"", " $(", " `", " x\\", " )"]));
            }
        }
        if self.pending.last().is_some_and(|p| !p.is_empty()) {
            out.push('\n');
            self.bodies(&mut out);
        }
        self.pending.pop();
        self.depth -= 1;
        out
    }

    fn bodies(&mut self, out: &mut String) {
        let docs = std::mem::take(self.pending.last_mut().expect("a level"));
        for h in docs {
            for _ in 0..self.rng.below(3) {
                out.push_str(&self.body_line(&h));
                out.push('\n');
            }
            if h.strip_tabs {
                out.push('\t');
            }
            out.push_str(h.delimiter);
            out.push('\n');
        }
    }

    fn body_line(&mut self, h: &Heredoc) -> String {
        let tab = if h.strip_tabs && self.rng.chance(50) {
            "\t"
        } else {
            ""
        };
        let body = match self.rng.below(14) {
            0 => self.hole().to_string(),
            1 => format!("x{}", self.hole()),
            2 => "$(p a)".to_string(),
            3 => "`p b`".to_string(),
            4 => "${x:-d}".to_string(),
            5 => format!("a\\\n{}", h.delimiter),
            6 => format!("{}x", h.delimiter),
            7 => "\\".to_string(),
            8 => "'\"".to_string(),
            9 => "$(p \"\n)\")".to_string(),
            10 => format!(" {}", h.delimiter),
            _ => "text $x".to_string(),
        };
        format!("{tab}{body}")
    }

    /// Statements joined by `;`, `&&`, `||` or `|`.
    fn line(&mut self) -> String {
        let mut out = self.statement();
        for _ in 0..self.rng.below(3) {
            out.push_str(self.rng.one(&["; ", " && ", " || ", " | ", ";"]));
            out.push_str(&self.statement());
        }
        out
    }

    fn statement(&mut self) -> String {
        let deep = self.depth > 3;
        let choice = if deep {
            self.rng.below(4)
        } else {
            self.rng.below(36)
        };
        match choice {
            0..=2 => format!("p {}{}", self.words_upto(3), self.redirect()),
            3 => {
                // One name per substitution level: a value printed inside an unquoted
                // `$( )` would be split into words, which is what the template asked for but
                // not a placement to compare.
                let name = format!("v{}", self.sub);
                format!("{name}={}; p \"${name}\"", self.word())
            }
            4 => format!(": {}", self.words_upto(2)),
            5 => format!("( {} )", self.script(1)),
            6 => format!("{{ {}; }}", self.script(1)),
            7 => format!("if true; then {}; fi", self.script(1)),
            8 => {
                let name = format!("i{}", self.sub);
                format!("for {name} in {}; do p \"${name}\"; done", self.words(2))
            }
            9 | 10 => self.case(),
            11 | 12 => self.heredoc(),
            13 => format!("[[ {} == qq9 ]] || p {}", self.word(), self.word()),
            14 if self.rng.chance(30) => self.probe(),
            15 => {
                // One name per nesting level: a body that redefines its own name inside a
                // pipeline (a subshell) would otherwise call itself forever.
                let name = format!("f{}", self.depth);
                format!("{name}() {{ {}; }}; {name}", self.script(1))
            }
            16 => format!(
                "(( {} )); p {}",
                self.rng.one(&["1", "x = 2", "1 << 2"]),
                self.word()
            ),
            17 if self.rng.chance(50) => {
                // bash's `prog < <(…)`, which the model reads as a pipe.
                let inner = self.nested(|g| g.word());
                format!("cat < <(p {inner}); p {}", self.word())
            }
            17 => {
                let inner = self.nested(|g| g.word());
                format!("p <(p {inner}) {}", self.word())
            }
            18 => format!("cat <<<{}", self.word()),
            19 => {
                let inner = self.nested(|g| g.script(1));
                format!("x=$({inner}); p \"$x\" {}", self.word())
            }
            20 => {
                let first = self.heredoc();
                let second = self.heredoc_operator();
                format!("{first} {second}")
            }
            21 => format!(
                "while false; do {}; done; p {}",
                self.script(1),
                self.word()
            ),
            22 => format!("until true; do {}; done; p {}", self.script(1), self.word()),
            23 => format!("! p {}", self.words_upto(2)),
            24 => {
                // An alias changes how the next lines are read (bash reads aliases only in
                // posix mode when not interactive): the model must stop after one.
                let (depth, first, second) = (self.depth, self.word(), self.word());
                format!("alias q{depth}='p {first}'\nq{depth} {second}")
            }
            25 => format!(
                "p {} <>/dev/null >|/dev/null; p {}",
                self.word(),
                self.word()
            ),
            26 => format!(
                "case qq9 in qq9) p {} {} q) ;; esac",
                self.word(),
                self.rng.one(&[";&", ";;&", ";;"])
            ),
            28 => self.cond_list(),
            29 => self.both_streams(),
            30 => self.duplicate(),
            31..=34 => self.hidden_command(choice),
            _ => format!("p {} 3>&1 >/dev/null; p {}", self.word(), self.word()),
        }
    }

    /// Commands whose name the rules must find behind something: a `for NAME do` body, bash's
    /// `time` options and the builtin prefixes, a shell started with a script, a value kept in
    /// a variable.
    fn hidden_command(&mut self, choice: usize) -> String {
        match choice {
            31 => {
                // `for NAME do` on one line (no `in`): the body's first command is a command.
                let name = format!("i{}", self.sub);
                let sep = self.rng.one(&[" ", "; ", "\n", " \\\n"]);
                format!(
                    "set -- {}; for {name}{sep}do p \"${name}\" {}; done",
                    self.word(),
                    self.word()
                )
            }
            32 => {
                // bash's `time` with its options, and the prefixes that run a builtin.
                let prefix = self.rng.one(&[
                    "time -p ",
                    "time -- ",
                    "time -p -- ",
                    "! time ",
                    "command ",
                    "builtin ",
                    "command -p ",
                    "time command ",
                ]);
                format!("{prefix}p {}", self.words_upto(2))
            }
            33 => self.nested_shell(),
            _ => {
                // A value kept in a variable, read back as text.
                let name = format!("m{}", self.sub);
                format!("{name}={}; p \"${name}\" \"${{{name}}}\"", self.word())
            }
        }
    }

    /// bash's `[[ ]]` with `||`, `&&`, `<`, `>`, `(` or `)` inside, which dash and busybox
    /// ash read as a failing command `[[` followed by another command or a redirection: a
    /// value after `||` becomes a command name there.
    fn cond_list(&mut self) -> String {
        let (a, b, c) = (self.word(), self.word(), self.word());
        let form = match self.rng.below(8) {
            0 => format!("[[ {a} == qq9 || {b} == zz ]]"),
            1 => format!("[[ -n {a} && {b} == zz ]]"),
            2 => format!("! [[ qq9 == zz && {a} == {b} ]]"),
            3 => format!("[[ qq9 > {a} ]]"),
            4 => format!("[[ {a} < qq9 ]]"),
            5 => format!("[[ ( {a} == qq9 ) ]]"),
            6 => format!("if ! [[ -e /nonexistent && {a} == k ]]; then p {b}; fi"),
            _ => format!("[[ {a} == qq9 ]] || [[ {b} == zz ]]"),
        };
        format!("{form}; p {c}")
    }

    /// bash's `&>` and `&>>`: dash reads `cmd &>f w` as `cmd &` and `>f w`, so the word after
    /// the file starts a command of its own.
    /// Each form ends in `wait`: under dash the first `p` runs in the background, and what it
    /// prints must come before what follows in every run, or the oracle compares a race.
    fn both_streams(&mut self) -> String {
        let op = self.rng.one(&["&>", "&>>", "&> "]);
        match self.rng.below(3) {
            0 => format!(
                "p {} {op}/dev/null {} {}; wait",
                self.word(),
                self.word(),
                self.word()
            ),
            1 => format!("p {} {op}/dev/null; wait; p {}", self.word(), self.word()),
            _ => format!("p {op}/dev/null {}; wait; p {}", self.word(), self.word()),
        }
    }

    /// Duplications: bash expands the word after `>&` (and `1>&`) a second time when it is
    /// no number, and writes both streams to that file.
    fn duplicate(&mut self) -> String {
        let op = self
            .rng
            .one(&[">&", "1>&", ">& ", "2>&", "<&", "0<&", "3>&"]);
        match self.rng.below(3) {
            0 => format!("p {} {op}x{}", self.word(), self.word()),
            1 => format!("exec 3>&1; p {} >&3; p {}", self.word(), self.word()),
            _ => format!("p {} >&2 {}", self.word(), self.word()),
        }
    }

    /// A shell started by the command, with a script of its own: a value in the script is
    /// read as code, a value after it is a positional parameter.
    fn nested_shell(&mut self) -> String {
        let shell = self.rng.one(&[
            "sh",
            "bash",
            "dash",
            "/bin/sh",
            "busybox sh",
            "env sh",
            "timeout 9 sh",
            "nice sh",
            "bash -e",
        ]);
        let flag = self.rng.one(&["-c", "-ec", "-c --"]);
        match self.rng.below(3) {
            0 => format!("{shell} {flag} 'printf \"<%s>\" \"$1\"' sh {}", self.word()),
            1 => format!("{shell} {flag} \"echo {}\"", self.word()),
            _ => format!("{shell} {flag} 'echo {}'", self.word()),
        }
    }

    /// A command that bash would make evaluate its value: the model must refuse the
    /// placeholder there (a value like `a[$(touch MARK)]` runs otherwise).
    fn probe(&mut self) -> String {
        self.probed = true;
        let w = self.word();
        let forms = [
            format!("[[ {w} -eq 1 ]]"),
            format!("[[ 1 -lt {w} ]]"),
            format!("[[ -v {w} ]]"),
            format!("test -v {w}"),
            format!("[ -n x -a {w} {w} ]"),
            format!("printf -v {w} %s x"),
            format!("read {w} </dev/null"),
            format!("let x={w}"),
            format!("export {w}=1"),
            format!("a[{w}]=1"),
            format!("declare -i n; n={w}"),
            format!("command read -r {w} </dev/null"),
            format!("unset {w}"),
            format!("eval p {w}"),
            format!("\\read {w} </dev/null"),
            format!("'printf' '-v' {w} x"),
            format!("x=eval; $x p {w}"),
            format!("{w} p {w}"),
            format!("time -p let \"x = {w}\""),
            format!("time -- eval p {w}"),
            format!("set -- a; for i do eval p {w}; done"),
            format!("set -- a; for i do let x={w}; done"),
            format!("m={w}; p $(( m ))"),
            format!("m={w}; [[ \"$m\" -gt 1 ]]"),
            format!("m={w}; (( m > 1 ))"),
            format!("m={w}; p ${{#m}} ${{m:m}}"),
            format!("m={w}; p \"${{!m}}\""),
            format!("compgen -W {w} a"),
            format!("sh -c 'p=1; echo {w}'"),
            format!("env bash -c \"echo {w}\""),
            format!("p a >&{w}"),
            format!("for m in {w}; do p $(( m )); done"),
            format!("builtin eval p {w}"),
            format!("q() {{ p $(( $1 )); }}; q {w}"),
        ];
        self.rng.pick(&forms).clone()
    }

    fn case(&mut self) -> String {
        let subject = if self.rng.chance(50) {
            self.word()
        } else {
            "qq9".to_string()
        };
        let mut out = format!("case {subject} in");
        out.push_str(self.rng.one(&[" ", "\n"]));
        for _ in 0..1 + self.rng.below(3) {
            let open = if self.rng.chance(30) { "(" } else { "" };
            let pattern = match self.rng.below(5) {
                0 => self.hole().to_string(),
                1 => format!("zz|'{}'", self.hole()),
                2 => "*".to_string(),
                3 => "\"q)\"".to_string(),
                _ => "qq9".to_string(),
            };
            out.push_str(&format!("{open}{pattern}) {};;", self.script(1)));
            out.push_str(self.rng.one(&[" ", "\n"]));
        }
        out.push_str("esac");
        out
    }

    fn heredoc(&mut self) -> String {
        let op = self.heredoc_operator();
        let rest = match self.rng.below(3) {
            0 => String::new(),
            1 => format!("; p {}", self.word()),
            _ => " | cat".to_string(),
        };
        format!("cat {op}{rest}")
    }

    /// `<<DELIM` (or `<<-`, quoted or not); its body follows the line.
    fn heredoc_operator(&mut self) -> String {
        let delimiter = self.rng.one(DELIMITERS);
        let quoted = self.rng.chance(50) || delimiter.contains(' ');
        let strip_tabs = self.rng.chance(30);
        let op = if strip_tabs { "<<-" } else { "<<" };
        let word = match (quoted, self.rng.below(3)) {
            (true, 0) => format!("\"{delimiter}\""),
            (true, 1) if !delimiter.contains(' ') => format!("\\{delimiter}"),
            (true, _) => format!("'{delimiter}'"),
            (false, _) => delimiter.to_string(),
        };
        self.pending.last_mut().expect("a level").push(Heredoc {
            delimiter,
            strip_tabs,
        });
        format!("{op}{word}")
    }

    fn redirect(&mut self) -> String {
        match self.rng.below(8) {
            0 => " >/dev/null".to_string(),
            // Not `2>&1`: the shells' own messages (a value that became a command's name, in
            // bash's `$'…'` quotes or cut short by dash) would reach the compared output.
            1 => " 3>&1".to_string(),
            2 => format!(" <<<{}", self.word()),
            3 => " >&2".to_string(),
            _ => String::new(),
        }
    }

    fn words_upto(&mut self, n: usize) -> String {
        let n = 1 + self.rng.below(n);
        self.words(n)
    }

    fn words(&mut self, n: usize) -> String {
        (0..n).map(|_| self.word()).collect::<Vec<_>>().join(" ")
    }

    /// One word: a few pieces glued together.
    pub fn word(&mut self) -> String {
        let n = 1 + self.rng.below(3);
        let mut out = String::new();
        for _ in 0..n {
            out.push_str(&self.piece());
        }
        if out.is_empty() {
            out.push('a');
        }
        out
    }

    fn piece(&mut self) -> String {
        let deep = self.depth > 3;
        match self.rng.below(if deep { 6 } else { 20 }) {
            0..=2 => self.hole().to_string(),
            3 => self.rng.one(PLAIN).to_string(),
            4 => format!("'{}'", self.single_inner()),
            5 => format!("\"{}\"", self.double_inner()),
            6 => format!("\\{}", self.rng.one(ESCAPED)),
            7 => self.nested(|g| format!("$({})", g.script(1))),
            8 => {
                let c = self.rng.one(&["\"", "'", ")", "c"]);
                self.nested(|g| format!("$(#{c}\n{})", g.script(1)))
            }
            9 => {
                let inner = self.rng.one(&["a", "\\`", "')'", "\"$x\"", "{{ v }}"]);
                let inner = if inner == HOLE {
                    self.nested(|g| g.hole().to_string())
                } else {
                    inner.to_string()
                };
                format!("`p {inner}`")
            }
            10 => format!("$(({}))", self.rng.one(ARITH)),
            11 | 12 => self.nested(|g| g.param()),
            13 => format!(
                "$'{}'",
                self.rng.one(&["a", "\\n", "\\'", "\\\\", "'", "\\x41"])
            ),
            14 => self.nested(|g| format!("$\"{}\"", g.double_inner())),
            15 => self.nested(|g| format!("\"$({})\"", g.script(1))),
            16 => "$x".to_string(),
            17 => format!("\"{}\"", self.hole()),
            18 => format!("'{}'", self.hole()),
            _ => self
                .rng
                .one(&["\r", "\t#", "é", "a#", "~", "$", "[", "]", "!"])
                .to_string(),
        }
    }

    fn single_inner(&mut self) -> String {
        let mut out = String::new();
        for _ in 0..self.rng.below(4) {
            let piece = self.rng.one(&[
                HOLE, "a", "\"", "$", "`", "\\", "#", "\n", " ", ")", "${", "$(",
            ]);
            out.push_str(if piece == HOLE { self.hole() } else { piece });
        }
        out
    }

    fn double_inner(&mut self) -> String {
        let mut out = String::new();
        for _ in 0..self.rng.below(4) {
            let piece = match self.rng.below(12) {
                0 | 1 => self.hole().to_string(),
                2 => "$x".to_string(),
                3 => self.param(),
                4 if self.depth <= 3 => format!("$({})", self.script(1)),
                5 => "`p a`".to_string(),
                6 => self
                    .rng
                    .pick(&["\\\"", "\\\\", "\\$", "\\`", "\\a", "\\\n"])
                    .to_string(),
                _ => self
                    .rng
                    .pick(&["a", "'", "#", " ", "\n", ")", "(", "}", ";", "|"])
                    .to_string(),
            };
            out.push_str(&piece);
        }
        out
    }

    fn param(&mut self) -> String {
        let name = self.rng.one(&["x", "1", "@", "#", "HOME", "y"]);
        let op = self.rng.one(&[
            "", ":-", "-", ":=", "+", ":+", "#", "##", "%", "%%", "/", ":", "?",
        ]);
        if op.is_empty() {
            return if self.rng.chance(20) {
                format!("${{#{name}}}")
            } else {
                format!("${{{name}}}")
            };
        }
        let word = match self.rng.below(14) {
            0 => self.hole().to_string(),
            1 => "'}'".to_string(),
            2 => "\"}\"".to_string(),
            3 => self.rng.one(&["'a'", "\\}", "{a}"]).to_string(),
            4 => "$(p a)".to_string(),
            5 => "${y:-z}".to_string(),
            6 => "a b".to_string(),
            7 => "1:2".to_string(),
            8 => "*".to_string(),
            _ => "w".to_string(),
        };
        format!("${{{name}{op}{word}}}")
    }
}

const PLAIN: &[&str] = &[
    "a", "x1", "-n", "--", "=", "a=b", "@", "%", ",", ".", "/", ":", "qq9", "}", "{", "-v", "-e",
];

const ESCAPED: &[&str] = &[
    "'", "\"", "$", "`", "\\", " ", "#", ";", "&", "|", "(", ")", "<", ">", "{", "}", "\n", "a",
];

const ARITH: &[&str] = &[
    "1+2",
    "x",
    "$x",
    "(1)",
    "1<<2",
    "${#x}",
    "2#11",
    "1 ? 2 : 3",
    "( (1) )",
    "\"1\"",
];
