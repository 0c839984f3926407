//! What one word of a simple command is, for `commands`: its text as the shell reads it
//! (quotes removed, where expansions and values stand), the variables and placeholders it
//! expands, and what follows from them: the reads it holds, the file it names (a data file's
//! name through a variable, a name built from a variable's plain text, a pattern the
//! author's text fixes), and the name an assignment assigns. It reads the word and the
//! analysis so far; it must not note anything in `Notes` or judge.

use super::*;

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
    pub fn value(&self) -> Option<&[u8]> {
        (!self.expanded).then_some(self.unquoted.as_slice())
    }

    pub(super) fn is_value(&self, v: &[u8]) -> bool {
        self.value() == Some(v)
    }

    pub fn note_hole(&mut self, p: Placeholder) {
        self.note_expansion();
        if !self.seen_text {
            self.leading_hole = true;
        }
        if !self.seen_eq {
            self.hole_before_eq = true;
        }
        self.first.get_or_insert(p.clone());
        self.holes.push(p);
    }

    pub fn note_expansion(&mut self) {
        self.expanded = true;
        let at = self.unquoted.len();
        let first = self.expansions.map_or(at, |(f, _)| f);
        self.expansions = Some((first, at));
        if !self.seen_text {
            self.leading_expansion = true;
        }
    }

    /// `$name` or `${name…}`.
    pub fn note_variable(&mut self, name: &[u8]) {
        self.note_expansion();
        self.vars.push(String::from_utf8_lossy(name).into_owned());
    }

    /// An expansion that may hold anything: `$1`, `$( )`, …
    pub fn note_opaque(&mut self, what: &str) {
        self.note_expansion();
        self.opaque.get_or_insert_with(|| what.to_string());
    }

    /// A command substitution whose command reads no variable.
    pub fn note_computed(&mut self, what: &'static str) {
        self.note_expansion();
        self.computed.get_or_insert(what);
    }

    /// What the commands of a process substitution (`<( )`, the word) write: what the
    /// program reads from the file it stands for. The word keeps its text.
    pub fn carries(&mut self, output: Vec<Read>) {
        for r in output {
            match r {
                Read::Variable(v) => self.vars.push(v),
                Read::Hole(p) => self.holes.push(p),
                Read::Unknown(what) | Read::Computed(what) => {
                    self.opaque.get_or_insert(what);
                }
                Read::Stored(name) => self.note_stored(name),
            }
        }
    }

    /// Everything `other` (the word of `${x:-WORD}`) expands, as this word's.
    pub fn absorb(&mut self, other: &Word) {
        for v in &other.vars {
            self.note_variable(v.as_bytes());
        }
        if let Some(o) = &other.opaque {
            self.note_opaque(o);
        }
        if let Some(c) = other.computed {
            self.note_computed(c);
        }
        for s in &other.stored {
            self.note_stored(s.clone());
        }
    }

    /// The file the word names, for the rules on files named as data: its text, or, for a
    /// word that is only a variable assigned the name of such a file (`"$F"`, `$f` of `for f
    /// in *.txt`), that name (`Analysis::data_name`). Only for refusing: the variable may
    /// hold another name as well.
    pub fn data_file<'a>(&'a self, analysis: &'a Analysis) -> Option<&'a [u8]> {
        if let Some(v) = self.value() {
            return Some(v);
        }
        let only_variable = self.vars.len() == 1
            && !self.changed
            && self.holes.is_empty()
            && self.opaque.is_none()
            && self.computed.is_none()
            && self.stored.is_empty()
            && self.unquoted.is_empty();
        only_variable
            .then(|| analysis.data_name(&self.vars[0]))
            .flatten()
    }

    /// A command substitution in the word prints what the file named as data `name` holds.
    pub fn note_stored(&mut self, name: String) {
        self.note_expansion();
        if !self.stored.contains(&name) {
            self.stored.push(name);
        }
    }

    pub(super) fn is(&self, lit: &[u8]) -> bool {
        self.literal.as_deref() == Some(lit)
    }

    /// What a place that reads this word again reads: its variables, its placeholders, what
    /// else it expands, and as arithmetic also the names written in it.
    pub fn reads(&self, arithmetic: bool) -> Vec<Read> {
        let mut out: Vec<Read> = self.holes.iter().cloned().map(Read::Hole).collect();
        out.extend(self.vars.iter().cloned().map(Read::Variable));
        if arithmetic {
            out.extend(
                arithmetic_names(&self.unquoted)
                    .into_iter()
                    .map(Read::Variable),
            );
        }
        if let Some(what) = &self.opaque {
            out.push(Read::Unknown(what.clone()));
        } else if let Some(what) = self.computed {
            out.push(Read::Computed(what.to_string()));
        }
        out.extend(self.stored.iter().cloned().map(Read::Stored));
        out
    }

    /// For a word naming a file from byte `from` of its text on (after `-o`, `of=`): the
    /// text written before its first expansion and after its last (`filed::named`), or the
    /// whole name when nothing expands in it.
    pub fn name_parts(&self, from: usize) -> (&[u8], &[u8]) {
        let u = &self.unquoted;
        match self.expansions {
            Some((first, last)) => (
                u.get(from..first.max(from)).unwrap_or_default(),
                &u[last.max(from).min(u.len())..],
            ),
            None => (u.get(from..).unwrap_or_default(), &[]),
        }
    }

    /// The name of a file this word builds from one variable assigned plain text or a data
    /// file's name (`d=/srv; "$d/note.txt"`, `n=note.txt; "/srv/$n"`, `e=txt; note.$e`), or,
    /// when the text after its last expansion has a data ending, the pattern it matches
    /// (`"$dir/note.txt"` is `*/note.txt`): where a file named as data may stand, for the
    /// reader side of the data-file rule (`filed::data_uses_of`).
    pub fn built_name(&self, analysis: &Analysis) -> Option<Vec<u8>> {
        let (first, last) = self.expansions?;
        let u = &self.unquoted;
        let (before, after) = (
            u.get(..first).unwrap_or_default(),
            u.get(last.min(u.len())..).unwrap_or_default(),
        );
        let single = self.vars.len() == 1
            && first == last
            && !self.changed
            && self.holes.is_empty()
            && self.opaque.is_none()
            && self.computed.is_none()
            && self.stored.is_empty();
        let value = single
            .then(|| {
                let v = &self.vars[0];
                analysis
                    .consts
                    .get(v)
                    .cloned()
                    .flatten()
                    .or_else(|| analysis.data_name(v).map(<[u8]>::to_vec))
            })
            .flatten();
        match value {
            Some(v) => {
                let built = [before, &v, after].concat();
                filed::may_be_data(filed::normal(&built)).then_some(built)
            }
            // The text after the expansion fixes a data ending (`/note.txt`, `.json`).
            None if !after.is_empty() => {
                filed::data_named(&[b"x", after].concat()).then(|| [before, b"*", after].concat())
            }
            // The expansion makes the ending (`note.$(echo txt)`): any ending, a data one too.
            None => (before.ends_with(b".") && before.len() > 1 && !before.ends_with(b"/."))
                .then(|| [before, b"*"].concat()),
        }
    }

    /// The name `filed` matches a file this word names by, when an expansion or a value makes
    /// it and the author's text fixes it as data (`filed::named::glob`: `/srv/dl/*.txt`).
    pub fn glob(&self) -> Option<Vec<u8>> {
        self.expansions?;
        let (dir, tail) = self.name_parts(0);
        filed::named::glob(dir, tail)
    }

    /// The text an assignment word assigns, as far as it is plain (`n` of `m=n`).
    pub fn assigned_text(&self) -> &[u8] {
        let at = self.unquoted.iter().position(|&c| c == b'=');
        at.map_or(&[][..], |i| &self.unquoted[i + 1..])
    }

    /// The name an assignment word assigns (`NAME` of `NAME=`, `NAME+=`, `NAME[…]=`).
    pub fn assigned_name(&self) -> Option<&[u8]> {
        if !self.assignment {
            return None;
        }
        let end = self
            .unquoted
            .iter()
            .position(|&c| matches!(c, b'=' | b'+' | b'['))?;
        Some(&self.unquoted[..end])
    }
}
