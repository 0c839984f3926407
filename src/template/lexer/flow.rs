//! What flows between the commands the lexer reads, for `Lexer`: a finished command's
//! output into the group around it or into the next command of a pipe, what reaches a group's
//! input and which of its commands read it as code, fill variables from it (`read`) or
//! write it into files, the groups themselves (opened by a reserved word or a `(`, closed
//! into one `Command`), bash's process substitutions, and what a function's body writes for
//! its calls. It notes; `judge` weighs.

use super::*;

impl Lexer<'_> {
    pub(super) fn finish(&mut self, cmd: &mut Command) -> Scan {
        let result = cmd.check(&mut self.notes);
        let used = cmd.stdin_use().map(|used| match used {
            Stdin::Code(place) => (place, Rereading::Code),
            Stdin::Split(place) => (place, Rereading::Split),
            Stdin::Signal(place) => (place, Rereading::Signal),
        });
        // A program that may read its input as its own commands (`own::stdin`): what a
        // here-document expands reaches them.
        let own = cmd.own_stdin().or_else(|| cmd.group_reader());
        if let Some(reader) = used.or_else(|| own.map(|p| (p, Rereading::Code))) {
            let frame = self.frame;
            for h in &mut self.heredocs {
                if h.frame == frame && h.at >= cmd.start && h.reader.is_none() {
                    h.reader = Some(reader);
                }
            }
        }
        let writes = cmd.written_files();
        let frame = self.frame;
        let line = self.notes.line(cmd.start);
        for h in &mut self.heredocs {
            if h.frame != frame || h.at < cmd.start || !h.writes.is_empty() {
                continue;
            }
            for name in &writes {
                h.writes.push(self.notes.analysis.filed.len());
                self.notes.analysis.filed.push(Filed {
                    name: name.clone(),
                    line,
                    reads: vec![Read::Unknown(
                        "what a here-document written into it expands".to_string(),
                    )],
                });
            }
        }
        self.flow(cmd);
        *cmd = Command::new(self.pos);
        result
    }

    /// A finished command inside a group: its output, unless it goes into a pipe, is the
    /// group's; and when what reaches the group reaches it (`Command::outer`), it may pass that
    /// on to the group's output or read it as its own commands (judged when the group's own
    /// input is known, with its redirections: `Command::own_commands`).
    pub(super) fn flow(&mut self, cmd: &Command) {
        if cmd.is_empty() {
            return;
        }
        let frame = self.frame;
        // `exec < f`: what later commands with no input of their own read.
        if cmd.redirects_shell_input() {
            let reads = cmd.input_reads(&self.notes.analysis);
            self.shell_input.extend(reads);
            self.shell_input
                .extend(Self::passed_bodies_always(&self.heredocs, frame, cmd));
        }
        let output = if cmd.piped {
            Vec::new()
        } else {
            self.written(cmd)
        };
        if let Some(group) = self.groups.last_mut().filter(|g| g.frame == frame) {
            group.inner.output.extend(output);
            group.inner.passes |= cmd.outer() && !cmd.piped && cmd.passes_input();
        }
        if !cmd.outer() {
            return;
        }
        // A command in a `$( )` or `<( )` reads the input of the group around it too (but
        // writes into its word).
        let Some(group) = self.groups.last_mut() else {
            // None: it reads the command's own input (what `exec <` gave it).
            let reads = self.shell_input.clone();
            for (at, place) in cmd.outer_readers() {
                self.notes.reread(at, place, Rereading::Code, reads.clone());
            }
            for (at, names) in cmd.outer_writes() {
                filed::note_written(&mut self.notes, names, reads.clone(), at);
            }
            let stored = commands::stored_only(reads);
            if !stored.is_empty() {
                for v in cmd.outer_fills() {
                    self.notes.analysis.write_from(v.as_bytes(), stored.clone());
                    self.notes
                        .exported_write(cmd.start, v.as_bytes(), stored.clone());
                }
            }
            return;
        };
        group.inner.readers.extend(cmd.outer_readers());
        group.inner.writers.extend(cmd.outer_writes());
        group.inner.fills.extend(cmd.outer_fills());
    }

    /// What `cmd` writes to its output (`Command::output`), with the here-document bodies it
    /// passes on and what a function it calls writes.
    pub(super) fn written(&self, cmd: &Command) -> Vec<Read> {
        let mut output = cmd.output(&self.notes.analysis);
        output.extend(Self::passed_bodies(&self.heredocs, self.frame, cmd));
        output.extend(self.called(cmd));
        output
    }

    /// The markers of the here-documents whose bodies `cmd` passes on to its output (`cat
    /// <<E | psql`, `{ cat; } <<E | psql`): its own, not read yet, when it prints its input.
    fn passed_bodies(heredocs: &[Heredoc], frame: u32, cmd: &Command) -> Vec<Read> {
        if !cmd.passes_input() {
            return Vec::new();
        }
        Self::passed_bodies_always(heredocs, frame, cmd)
    }

    /// The markers of `cmd`'s own here-documents, not read yet.
    fn passed_bodies_always(heredocs: &[Heredoc], frame: u32, cmd: &Command) -> Vec<Read> {
        if !cmd.heredoc {
            return Vec::new();
        }
        heredocs
            .iter()
            .filter(|h| h.frame == frame && h.at >= cmd.start)
            .map(|h| Read::Unknown(body_marker(h)))
            .collect()
    }

    pub(super) fn body_marker(&self, h: &Heredoc) -> String {
        body_marker(h)
    }

    /// A group opens: it takes what reaches the command at its start (`x | {`). `by_word`:
    /// a reserved word closes it (`close_group`); else the caller, with the depth returned
    /// (`close_group_at`).
    pub(super) fn open_group(&mut self, cmd: &mut Command, by_word: bool) -> usize {
        let inputs = cmd.take_inputs();
        let function = self.defining.take();
        self.groups.push(Group {
            frame: self.frame,
            by_word,
            function,
            inputs,
            inner: Inner::default(),
        });
        self.groups.len() - 1
    }

    /// A reserved word closes the group open innermost (`}`, `fi`, `done`): the command it is
    /// from here on (its redirections and a `|` after it are its own). One that closes no
    /// group a word opened in this frame (a syntax error to the shells) closes none.
    pub(super) fn close_group(&mut self) -> Command {
        match self.groups.last() {
            Some(g) if g.frame == self.frame && g.by_word => {}
            _ => return Command::compound(self.pos),
        }
        let g = self.groups.pop().expect("a group is open");
        self.closed(g)
    }

    /// Where the model stops inside groups (`… | while read -r l; do eval "$l"`, stopped at
    /// `eval`): the variables their `read`s fill get what a file named as data on what is
    /// known of their input holds (`Inner::fills`), as they would when the group closed.
    pub(super) fn fill_open_groups(&mut self) {
        let analysis = &self.notes.analysis;
        let mut stored = commands::stored_only(self.shell_input.clone());
        for g in &self.groups {
            for input in &g.inputs {
                let reads = match input {
                    Input::Pipe(r, _) => r.clone(),
                    Input::File(w) => {
                        filed::held_by(w.value(), w.data_file(analysis), &analysis.filed)
                    }
                    _ => Vec::new(),
                };
                stored.extend(commands::stored_only(reads));
            }
        }
        if stored.is_empty() {
            return;
        }
        let fills: Vec<String> = self
            .groups
            .iter()
            .flat_map(|g| g.inner.fills.clone())
            .collect();
        for v in fills {
            self.notes.analysis.write_from(v.as_bytes(), stored.clone());
        }
    }

    /// The command a closed group is; a function's body is kept for its calls.
    fn closed(&mut self, g: Group) -> Command {
        if let Some(name) = g.function {
            let mut output = g.inner.output.clone();
            if g.inner.passes {
                output.push(Read::Unknown(
                    "what reaches the input of a function that passes it on".to_string(),
                ));
            }
            self.functions.entry(name).or_default().extend(output);
        }
        Command::group(self.pos, g.inputs, g.inner)
    }

    /// What a call of a function defined before writes (`f() { echo "$V"; }; f | psql`).
    fn called(&self, cmd: &Command) -> Vec<Read> {
        cmd.plain_name()
            .and_then(|n| self.functions.get(n))
            .cloned()
            .unwrap_or_default()
    }

    /// The group opened at `depth` (`open_group`) closes, with any left open inside it.
    pub(super) fn close_group_at(&mut self, depth: usize) -> Command {
        self.groups.truncate(depth + 1);
        match self.groups.pop() {
            Some(g) => self.closed(g),
            None => Command::compound(self.pos),
        }
    }

    /// bash's `<( … )` or `>( … )` (`writes`), at `pos`: what its commands did with their
    /// output and input. Those of `<( )` read what reaches the group around the command (or
    /// the command's own input), which is handed on there; those of `>( )` what the command
    /// writes (`Command::feeds`).
    pub(super) fn process_substitution(&mut self, writes: bool) -> Scan<Inner> {
        self.note_bash_only("`<( )`");
        self.bump(2);
        // `code` opens the next frame.
        let depth = self.groups.len();
        self.groups.push(Group {
            frame: self.frames + 1,
            by_word: false,
            function: None,
            inputs: Vec::new(),
            inner: Inner::default(),
        });
        let ended = self.code(End::Paren, Some("inside <( )"), true)?;
        self.groups.truncate(depth + 1);
        let mut g = self.groups.pop().expect("the group pushed above");
        if ended != Ended::Paren {
            return Err(self.lost("an unclosed `<(`"));
        }
        if writes {
            return Ok(g.inner);
        }
        let readers = std::mem::take(&mut g.inner.readers);
        let writers = std::mem::take(&mut g.inner.writers);
        match self.groups.last_mut() {
            Some(outer) => {
                outer.inner.readers.extend(readers);
                outer.inner.writers.extend(writers);
            }
            None => {
                let reads = self.shell_input.clone();
                for (at, place) in readers {
                    self.notes.reread(at, place, Rereading::Code, reads.clone());
                }
                for (at, names) in writers {
                    filed::note_written(&mut self.notes, names, reads.clone(), at);
                }
            }
        }
        Ok(g.inner)
    }

    /// What reaches the input of a command with none of its own here, as far as it is known
    /// now: the command's own (`exec <`) outside any group; inside one, something unknown
    /// (its input may come after it, `{ …; } < f`).
    pub(super) fn outer_input(&self) -> Vec<Read> {
        if self.groups.is_empty() {
            return self.shell_input.clone();
        }
        vec![Read::Unknown(
            "what reaches the input of the group around `<( )`".to_string(),
        )]
    }
}
