//! How what a command reads and writes flows, for `commands`: a group's input and output,
//! what reaches a command's input (a pipe, `<`, a here-document) and what it writes to its
//! output or into files (`filed`), and the environment a program prints. A file named as
//! data that reaches an input holds what any press may have written (`filed::held_by`). Pure
//! like the rest of the model: it notes, never judges.

use super::*;

impl Command {
    /// A group that has just closed: what reached its input before it opened (`echo x | {`),
    /// and what its commands did (`Inner`).
    pub fn group(start: usize, inputs: Vec<Input>, inner: Inner) -> Command {
        Command {
            inputs,
            inner,
            ..Command::compound(start)
        }
    }

    /// What reaches the command's input so far, taken away: a group opening (`x | {`) takes
    /// it for itself.
    pub fn take_inputs(&mut self) -> Vec<Input> {
        std::mem::take(&mut self.inputs)
    }

    /// What reaches the command's standard input, as far as the command itself shows it: a
    /// pipe's writer's output, the file of `<` (what a value was written into), the word of
    /// `<<<`, a duplicated descriptor. A here-document's body is read after the line, and
    /// what reaches the group around the command, when it has no input of its own, is the
    /// group's (`outer`).
    pub fn input_reads(&self, analysis: &Analysis) -> Vec<Read> {
        let mut reads = Vec::new();
        for input in &self.inputs {
            match input {
                Input::Pipe(r, _) => reads.extend(r.iter().cloned()),
                Input::File(w) => {
                    reads.extend(w.reads(false));
                    reads.extend(filed::held_by(
                        w.value(),
                        w.data_file(analysis),
                        &analysis.filed,
                    ));
                }
                Input::Text(w) => reads.extend(w.reads(false)),
                Input::Echoed(_) => {}
                Input::Descriptor => reads.push(Read::Unknown(
                    "what the descriptor `<&` duplicates holds".into(),
                )),
            }
        }
        reads
    }

    /// Whether what reaches the group around the command reaches its input too: it has no
    /// input of its own, or the command before its `|` passed the group's on.
    pub fn outer(&self) -> bool {
        (self.inputs.is_empty() && !self.heredoc)
            || self
                .inputs
                .iter()
                .any(|i| matches!(i, Input::Pipe(_, true)))
    }

    /// What an `echo` of plain words only writes (`echo /usr/local/bin/report`), which no
    /// value reaches: the text the next command reads (`Input::Echoed`). Not with an option
    /// (`-e` reads escapes), a backslash, an expansion or a value among its words.
    pub fn echoed(&self) -> Option<Vec<u8>> {
        if self.compound || self.name.as_deref() != Some(b"echo") || !self.assignments.is_empty() {
            return None;
        }
        let words: Option<Vec<&[u8]>> = self.args.iter().map(|w| w.value()).collect();
        let words = words?;
        // dash's `echo` reads backslash escapes (`\n` is a new line): not followed.
        if words.first().is_some_and(|w| w.starts_with(b"-"))
            || words.iter().any(|w| w.contains(&b'\\'))
        {
            return None;
        }
        let mut text = words.join(&b' ');
        text.push(b'\n');
        Some(text)
    }

    /// Whether the command may print what reaches its standard input (`own::prints_input`;
    /// a group when one of its commands passes it on).
    pub fn passes_input(&self) -> bool {
        if self.compound {
            return self.inner.passes;
        }
        self.name_word.is_some() && own::prints_input(&self.shapes())
    }

    /// The commands that read what reaches the group around this command as their own
    /// commands, when it does (`outer`): the command itself (`own::stdin`), or a group's own
    /// such commands.
    pub fn outer_readers(&self) -> Vec<(usize, &'static str)> {
        if !self.outer() {
            return Vec::new();
        }
        if self.compound {
            return self.inner.readers.clone();
        }
        // A shell that reads its script there (`ssh nas sh < f`, `su pi -c sh`) as well.
        let script = match self.stdin_use() {
            Some(Stdin::Code(place)) => Some(place),
            _ => None,
        };
        // An extraction of what reaches it (`curl URL | (tar xzf - -C /)`, fe30x F1).
        let unpacks = (self.name_word.is_some() && filed::named::extracts(&self.shapes()))
            .then_some(filed::named::UNPACKED);
        self.own_stdin()
            .or(script)
            .or(unpacks)
            .map(|p| (self.start, p))
            .into_iter()
            .collect()
    }

    /// The variables the command fills from what reaches the group around it, when it does
    /// (`outer`): a `read`'s or `mapfile`'s names (`REPLY`, `MAPFILE` when none is given), a
    /// group's own such variables.
    pub fn outer_fills(&self) -> Vec<String> {
        if !self.outer() {
            return Vec::new();
        }
        if self.compound {
            return self.inner.fills.clone();
        }
        let name = self.plain_name().unwrap_or_default();
        let default = match name {
            b"read" => "REPLY",
            b"mapfile" | b"readarray" => "MAPFILE",
            _ => return Vec::new(),
        };
        let mut out = Vec::new();
        let mut skip = false;
        for w in &self.args {
            if std::mem::take(&mut skip) {
                continue;
            }
            match w.value() {
                // `read -p PROMPT`: the option's word is no name (as `names` reads it).
                Some(v) if v.len() > 1 && v[0] == b'-' => {
                    skip = takes_word(v, option_words(name));
                }
                Some(v) => out.push(String::from_utf8_lossy(v).into_owned()),
                None => {}
            }
        }
        if out.is_empty() {
            out.push(default.to_string());
        }
        out
    }

    /// The files the command writes what reaches the group around it into, when it does
    /// (`outer`): its redirections' when it prints its input, `tee`'s, `sponge`'s and `dd
    /// of=`'s always, and for a group its own commands' such files.
    pub fn outer_writes(&self) -> Vec<(usize, Vec<Option<Vec<u8>>>)> {
        if !self.outer() {
            return Vec::new();
        }
        let mut out = Vec::new();
        if self.compound {
            out.extend(self.inner.writers.iter().cloned());
            if self.inner.passes && !self.targets.is_empty() {
                out.push((self.start, self.targets.clone()));
            }
            return out;
        }
        let targets: &[Option<Vec<u8>>] = if self.passes_input() {
            &self.targets
        } else {
            &[]
        };
        let names = self.written_into(targets);
        if !names.is_empty() {
            out.push((self.start, names));
        }
        out
    }

    /// The command's name after quote removal, when no expansion makes it.
    pub fn plain_name(&self) -> Option<&[u8]> {
        self.name.as_deref()
    }

    /// `exec < FILE` (`exec 0<&3`, `exec <<E`…): what reaches the input of every command
    /// after it that has none of its own.
    pub fn redirects_shell_input(&self) -> bool {
        self.name.as_deref() == Some(b"exec")
            && self.args.is_empty()
            && (self.heredoc || !self.inputs.is_empty())
    }

    /// For a group, the place of the first of its commands that read the group's input as
    /// their own commands (`{ psql; } <<E`).
    pub fn group_reader(&self) -> Option<&'static str> {
        self.inner.readers.first().map(|&(_, place)| place)
    }

    /// What the command may write to its standard output: whatever its words read, a group's
    /// commands' output, and, unless it prints none of what it reads (`passes_input`), what
    /// reaches its input and what the files a value was written into that it names hold (`cat
    /// f`). The next command of a pipe reads it (`Input::Pipe`).
    pub fn output(&self, analysis: &Analysis) -> Vec<Read> {
        let mut out = if self.compound {
            self.inner.output.clone()
        } else {
            self.reads_all()
        };
        out.extend(self.environment_printed());
        // A program that prints none of what it reads prints none of a file's either (`wc -l
        // f`, `md5sum f`, `rm f`).
        if self.passes_input() {
            if !self.compound {
                out.extend(filed::named_by(&self.shapes(), &analysis.filed));
                out.extend(self.data_files_printed(analysis));
            }
            out.extend(self.input_reads(analysis));
        }
        out
    }

    /// What the files named as data that its words name through a variable hold (`cat
    /// "$F"` after `F=/srv/radio.txt`): a printing program prints it (`Read::Stored`; a
    /// name written out is `filed::named_by`'s).
    fn data_files_printed(&self, analysis: &Analysis) -> Vec<Read> {
        let shapes = self.shapes();
        let tee = programs::chain(&shapes)
            .last()
            .and_then(|&k| shapes[k])
            .is_some_and(|w| w.ends_with(b"tee"));
        if tee {
            return Vec::new();
        }
        self.args
            .iter()
            .filter(|w| w.value().is_none())
            .filter_map(|w| w.data_file(analysis))
            .filter_map(filed::data_in_word)
            .map(Read::Stored)
            .collect()
    }

    /// Something that reaches the command's input.
    pub fn input(&mut self, input: Input) {
        self.inputs.push(input);
    }

    /// Whether what the command writes may hold a value: its words read something, or its
    /// input comes from a here-document, a pipe, `<<<` or a file.
    pub fn spills(&self) -> bool {
        self.heredoc || !self.inputs.is_empty() || !self.reads_all().is_empty()
    }

    /// Everything the command's words read: what its output may hold.
    pub fn reads_all(&self) -> Vec<Read> {
        let words = self
            .assignments
            .iter()
            .chain(&self.name_word)
            .chain(&self.args);
        words.flat_map(|w| w.reads(false)).collect()
    }

    /// What a program that prints its environment writes: the values, which every program
    /// the command starts has as `ACTIOND_ARG_<NAME>` (`envsubst '$ACTIOND_ARG_URL' < in >
    /// /etc/default/kiosk`, `printenv ACTIOND_ARG_URL`, `env` with no program).
    pub(super) fn environment_printed(&self) -> Option<Read> {
        let shapes = self.shapes();
        let &k = programs::chain(&shapes).last()?;
        let name = shapes[k].map(|w| w.rsplit(|&c| c == b'/').next().unwrap_or(w))?;
        let prints = match name {
            b"envsubst" | b"printenv" => true,
            b"env" => shapes[k + 1..]
                .iter()
                .all(|w| w.is_some_and(|w| w.starts_with(b"-") || w.contains(&b'='))),
            _ => false,
        };
        prints.then(|| {
            Read::Unknown("what `envsubst`, `printenv` or `env` prints of the environment".into())
        })
    }

    /// The files it runs or splits that a value was written into before, then the files it
    /// writes a value into itself (`filed`).
    pub(super) fn filed(&self, notes: &mut Notes) {
        let words = self.name_word.iter().chain(&self.args);
        let starts: Vec<usize> = words.map(|w| w.start).collect();
        let mut reads = self.reads_all();
        reads.extend(self.environment_printed());
        for input in &self.inputs {
            match input {
                Input::Pipe(r, _) => reads.extend(r.iter().cloned()),
                // `sort < job.in > job.sh`: what the file held.
                Input::File(w) => {
                    reads.extend(filed::held_by(
                        w.value(),
                        w.data_file(&notes.analysis),
                        &notes.analysis.filed,
                    ));
                }
                _ => {}
            }
        }
        // A block's redirection takes what its commands write (`{ …; } > f`, `( … ) > f`, `for
        // … done > f`), and what reaches the block's input if one of them passes it on.
        if self.compound && !self.targets.is_empty() {
            reads.extend(self.inner.output.iter().cloned());
        }
        // `exec 3> f` takes what later commands write to the descriptor: actiond does not
        // follow which of those hold a value.
        let bare_exec = self.name.as_deref() == Some(b"exec") && self.args.is_empty();
        if bare_exec && !self.targets.is_empty() {
            reads.push(Read::Unknown(
                "what the commands of a block (or after `exec N>`) write into it".to_string(),
            ));
        }
        let shapes = self.shapes();
        // A variable holding a data file's name names it where such a file is refused, and a
        // name the author's text fixes as data stands for it (`notes-$(date +%F).txt`).
        let data: Vec<Option<Vec<u8>>> = self
            .name_word
            .iter()
            .chain(&self.args)
            .zip(&shapes)
            .map(|(w, &shape)| {
                let named = shape.or_else(|| w.data_file(&notes.analysis));
                named
                    .map(<[u8]>::to_vec)
                    .or_else(|| w.built_name(&notes.analysis))
                    .or_else(|| w.glob())
            })
            .collect();
        let data: Vec<Option<&[u8]>> = data.iter().map(Option::as_deref).collect();
        let names = if self.compound {
            self.targets.clone()
        } else {
            self.written_into(&self.targets)
        };
        filed::note(notes, &shapes, &data, &starts, names, reads, self.start);
        for (at, name, does) in data_in_code(&data) {
            let line = notes.line(at.map_or(self.start, |i| starts[i]));
            notes.analysis.runs_data.push((name, line, does));
        }
        // `BASH_ENV=notes.txt bash -c …`, `NODE_OPTIONS=--require=notes.txt node …`: a file
        // named as data in the environment of the command's program (a bare assignment sets a
        // shell variable only).
        let program = self.name_word.is_some() || notes.analysis.allexport;
        for w in self.assignments.iter().filter(|_| program) {
            if let Some((name, does)) = w.value().and_then(filed::environment_file) {
                let line = notes.line(w.start);
                let found = (name.to_vec(), line, does.to_string());
                notes.analysis.runs_data.push(found);
            }
        }
        // `F=/srv/notes.txt; export F`: a variable holding a data file's name, exported.
        for (at, name) in self.exported_data(&notes.analysis) {
            let line = notes.line(at);
            let does = "puts into a program's environment (a program may load a file its \
                        environment names as code or settings: `BASH_ENV`, `NODE_OPTIONS`, \
                        `PYTHONPATH`),";
            notes
                .analysis
                .runs_data
                .push((name, line, does.to_string()));
        }
        // The commands of its `>( )`s that write what it wrote there into files.
        if !self.fed.writers.is_empty() {
            let mut reads = self.output(&notes.analysis);
            reads.extend(self.input_reads(&notes.analysis));
            for (at, names) in &self.fed.writers {
                filed::note_written(notes, names.clone(), reads.clone(), *at);
            }
        }
        // A group's commands that wrote its input into files: what reaches it is there now.
        if self.compound && !self.inner.writers.is_empty() {
            let reads = self.input_reads(&notes.analysis);
            for (at, names) in &self.inner.writers {
                filed::note_written(notes, names.clone(), reads.clone(), *at);
            }
        }
    }

    /// The files the command writes what it reads into (`filed::written`): where a
    /// here-document's body, read after the command, goes.
    /// The variables `export NAME` (`declare -x NAME`, `typeset -x`, `local -x`) hands every
    /// later program that hold a file named as data (`F=/srv/notes.txt; export F`), each with
    /// where it stands and the file's name.
    fn exported_data(&self, analysis: &Analysis) -> Vec<(usize, Vec<u8>)> {
        let Some(program) = self.name.as_deref() else {
            return Vec::new();
        };
        let flag = |w: &&Word| {
            w.value()
                .is_some_and(|v| v.starts_with(b"-") && !v.starts_with(b"--") && v.contains(&b'x'))
        };
        let exports = match program {
            b"export" => true,
            b"declare" | b"typeset" | b"local" => self.args.iter().any(|w| flag(&w)),
            _ => false,
        };
        if !exports {
            return Vec::new();
        }
        self.args
            .iter()
            .filter_map(|w| {
                let v = w
                    .value()
                    .filter(|v| !v.starts_with(b"-") && !v.contains(&b'='))?;
                let v = String::from_utf8_lossy(v);
                let name = analysis.data_name(&v).map(<[u8]>::to_vec).or_else(|| {
                    analysis
                        .consts
                        .get(v.as_ref())
                        .cloned()
                        .flatten()
                        .filter(|t| filed::data_named(filed::normal(t)))
                })?;
                Some((w.start, name))
            })
            .collect()
    }

    pub fn written_files(&self) -> Vec<Option<Vec<u8>>> {
        if self.compound {
            return Vec::new();
        }
        self.written_into(&self.targets)
    }

    /// `filed::written` over the command's words, with `targets` as its redirections'.
    fn written_into(&self, targets: &[Option<Vec<u8>>]) -> Vec<Option<Vec<u8>>> {
        let words: Vec<&Word> = self.name_word.iter().chain(&self.args).collect();
        let heads = self.heads();
        let heads: Vec<Option<&[u8]>> = heads.iter().map(|h| h.as_deref()).collect();
        // A name values alone make (`-o {{ name }}`, `-o /srv/dl/{{ name }}`) is weighed by
        // `named` (an `int` or the author's `choices:` may pick it): what is written there
        // is not followed further, as for a name that no value picks.
        let globs: Vec<Option<Vec<u8>>> = words
            .iter()
            .map(|w| {
                let values_only = w.vars.is_empty()
                    && w.opaque.is_none()
                    && w.computed.is_none()
                    && w.stored.is_empty();
                w.glob()
                    .or_else(|| values_only.then(|| filed::EXPANDED.to_vec()))
            })
            .collect();
        filed::written(&heads, &globs, targets)
    }

    /// The command's words from its name on as `filed` finds the files it writes in them:
    /// plain text, or the text before the first expansion or value followed by
    /// `filed::EXPANDED` (`-o/srv/dl/{{ name }}` is `-o/srv/dl/` and the mark).
    pub(super) fn heads(&self) -> Vec<Option<Vec<u8>>> {
        let words = self.name_word.iter().chain(&self.args);
        words
            .map(|w| match w.value() {
                Some(v) => Some(v.to_vec()),
                None => {
                    let (dir, _) = w.name_parts(0);
                    Some([dir, filed::EXPANDED].concat())
                }
            })
            .collect()
    }

    /// The files the command writes whose name a value makes and the author's text does not
    /// fix as data (`filed::named`), noted as places a value picks the file at; the copies
    /// into a directory of a file a value picks, which keep its name; and an extraction of
    /// an archive a value picks or fills.
    pub(super) fn named(&self, notes: &mut Notes) {
        if self.compound || self.name_word.is_none() {
            return;
        }
        let words: Vec<&Word> = self.name_word.iter().chain(&self.args).collect();
        let heads = self.heads();
        let heads: Vec<Option<&[u8]>> = heads.iter().map(|h| h.as_deref()).collect();
        for n in filed::named::named_at(&heads) {
            let w = words[n.at];
            filed::named::note_named(
                notes,
                w.start,
                w.name_parts(n.from),
                w.reads(false),
                n.writer,
            );
        }
        let globs: Vec<Option<Vec<u8>>> = words.iter().map(|w| w.glob()).collect();
        for source in filed::named::copied(&heads, &globs) {
            let w = words[source];
            if filed::named::contents_only(&heads, w.name_parts(0).1) {
                continue;
            }
            notes.reread(
                w.start,
                filed::named::COPIED_NAME,
                Rereading::Written,
                w.reads(false),
            );
        }
        // `gunzip {{ filepath }}` (fe30v F8): the upload's name, less its ending, is the
        // name of the file written.
        for at in filed::named::decompressed_at(&heads) {
            let w = words[at];
            let (dir, tail) = w.name_parts(0);
            let tail = filed::named::without_compression(tail);
            let writer = filed::named::DECOMPRESSOR;
            filed::named::note_named(notes, w.start, (dir, &tail), w.reads(false), writer);
        }
        for at in filed::named::link_targets(&heads) {
            let w = words[at];
            let writer = "every write through `ln -s`'s link";
            filed::named::note_named(notes, w.start, w.name_parts(0), w.reads(false), writer);
        }
        // `curl -o '/srv/dl/#1.txt' {{ url }}` (fe30v F3): the url's glob fills the name.
        for at in filed::named::curl_globbed(&heads) {
            let reads: Vec<Read> = words.iter().skip(1).flat_map(|w| w.reads(false)).collect();
            let start = words[at].start;
            notes.reread(start, filed::named::CURL_GLOB, Rereading::Written, reads);
        }
        // `git clone {{ url }} DIR && sh DIR/deploy.sh` (fe30u F8), `git pull {{ url }}`
        // (fe30v F7): the url picks the tree.
        for at in filed::named::clone_url(&heads) {
            let w = words[at];
            notes.reread(
                w.start,
                filed::named::CLONED,
                Rereading::Unpacked,
                w.reads(false),
            );
        }
        if filed::named::extracts(&heads) {
            let mut reads: Vec<Read> = words.iter().skip(1).flat_map(|w| w.reads(false)).collect();
            for w in words.iter().skip(1).filter_map(|w| w.value()) {
                reads.extend(filed::data_in_word(w).map(Read::Stored));
            }
            reads.extend(self.input_reads(&notes.analysis));
            notes.reread(
                self.start,
                filed::named::UNPACKED,
                Rereading::Unpacked,
                reads,
            );
        }
    }
}

impl Command {
    /// A `cd` or `pushd`: the directory it may change to joins those the shell may be in
    /// (`filed::lands`), where later relative names land. `cd` alone (and `$HOME`) is the
    /// home directory; `cd -` and `popd` go back to one already counted; a directory an
    /// expansion makes is followed to the plain texts its one variable is assigned, else
    /// unknown. A command whose name an expansion makes may be `cd` too.
    pub(super) fn changes_directory(&self, notes: &mut Notes) {
        if self.unknown {
            filed::lands::change(&mut notes.analysis.cwd, None);
            return;
        }
        let (b"cd" | b"pushd") = self.name.as_deref().unwrap_or_default() else {
            return;
        };
        let mut operands = self.args.iter().skip_while(|w| {
            w.value()
                .is_some_and(|v| v.len() > 1 && v[0] == b'-' && v != b"--")
        });
        let first = match operands.next() {
            Some(w) if w.value() == Some(b"--") => operands.next(),
            other => other,
        };
        let to = match first {
            None => Some(vec![b"~".to_vec()]),
            Some(w) if w.value() == Some(b"-") => return,
            Some(w) => match w.value() {
                Some(v) => Some(vec![v.to_vec()]),
                None => self.directory_of(w, &notes.analysis),
            },
        };
        filed::lands::change(&mut notes.analysis.cwd, to);
    }

    /// The directories a word that is only one variable (`"$D"`, `${D}`) may name: each plain
    /// text the command assigns it, when nothing else writes it (`read D`, `local D=$x`).
    fn directory_of(&self, w: &Word, analysis: &Analysis) -> Option<Vec<Vec<u8>>> {
        let only = w.vars.len() == 1
            && !w.changed
            && w.holes.is_empty()
            && w.opaque.is_none()
            && w.computed.is_none()
            && w.stored.is_empty()
            && w.unquoted.is_empty();
        if !only {
            return None;
        }
        let name = &w.vars[0];
        let plain = analysis
            .sources
            .get(name)
            .is_none_or(|reads| reads.is_empty());
        filed::lands::variable(&analysis.cwd, name).filter(|_| plain)
    }
}

impl Word {
    /// The text an assignment word assigns when it is all plain text (`D=/srv/x`; not
    /// `D=$x`, `D+=x`, `D[1]=x`), for `cd "$D"` (`filed::lands`).
    pub fn plain_assigned(&self) -> Option<&[u8]> {
        let name = self.assigned_name()?;
        let whole = self.unquoted.get(name.len()) == Some(&b'=');
        (!self.expanded && whole).then(|| self.assigned_text())
    }
}
