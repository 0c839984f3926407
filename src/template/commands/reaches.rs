//! What reaches the programs a command starts, beside the builtins' rules in the parent: the
//! script a shell it starts runs, the words and input a program reads as its own commands
//! (`own`), the directories code is taken from, `trap`'s action, the program behind the
//! wrappers and the words of a program the model does not know (`programs`, `known`), its
//! standard input, and the environment it gets. Each place found is noted for `judge`; it
//! must not judge values, nor read files.

use super::*;

impl Command {
    /// The script a shell the command starts runs (`sh -c SCRIPT`, `env -S`): whatever
    /// reaches it is code. A script in plain text is read itself, after the command.
    pub(super) fn scripts(&self, notes: &mut Notes) {
        let Some(name) = &self.name_word else { return };
        let words: Vec<&Word> = std::iter::once(name).chain(&self.args).collect();
        let values: Vec<Option<&[u8]>> = words.iter().map(|w| w.value()).collect();
        let texts: Vec<&[u8]> = words.iter().map(|w| w.unquoted.as_slice()).collect();
        for (i, place) in launchers::scripts(&values, &texts) {
            let w = words[i];
            match w.value().filter(|_| place != PASTED) {
                Some(script) if !script.is_empty() => {
                    notes.scripts.push((w.start, script.to_vec(), place));
                    // The commands of `sh -c` (`su -c`, `ssh HOST CMD`) read what reaches
                    // the shell's input.
                    let input = self.input_reads(&notes.analysis);
                    let shell = [SCRIPT, programs::SU_SCRIPT, programs::SSH_COMMAND];
                    if shell.contains(&place) && !input.is_empty() {
                        notes.script_inputs.insert(w.start, input);
                    }
                }
                Some(_) => {}
                None => {
                    let mut reads = w.reads(false);
                    reads.push(Read::Unknown(format!(
                        "the rest of {place}, which is built from values and so not read by \
                         actiond"
                    )));
                    notes.reread(w.start, place, Rereading::Code, reads);
                }
            }
            // `sh -c SCRIPT NAME ARGS…`: the word after the script is its `$0` (`sh -c 'rm
            // $0' {{ name }}`), the rest its positional parameters (`sh -c 'rm $1' sh {{ name
            // }}`), so what they hold is what its `$0`, `$1`, `$@` and `$*` hold (merged with
            // the command's own: a copy is never missed).
            if place == SCRIPT || place == PASTED {
                if let Some(w) = words.get(i + 1) {
                    let reads = w.reads(false);
                    if !reads.is_empty() {
                        notes.analysis.write_from(SCRIPT_NAME.as_bytes(), reads);
                    }
                }
                let rest = words.get(i + 2..).unwrap_or_default();
                let reads: Vec<Read> = rest.iter().flat_map(|w| w.reads(false)).collect();
                if !reads.is_empty() {
                    notes.analysis.write_from(POSITIONAL.as_bytes(), reads);
                }
            }
        }
    }

    /// The words and the input the program reads as its own commands (`own`): a `sed`
    /// script, `sqlite3`'s operands, git's commands and settings, `gdb -ex`, `find`'s tests
    /// before `-exec {}`; and, for a program not known to read data there, what reaches its
    /// standard input (a pipe whose writer reads a value, a file or text it is given).
    pub(super) fn own_commands(&self, notes: &mut Notes) {
        // A group's commands that read its input as their own (`(crontab -l; echo …) |
        // (crontab -)`, `{ psql; } < f`): what reaches the group reaches them.
        if self.compound {
            let reads = self.input_reads(&notes.analysis);
            for &(at, place) in &self.inner.readers {
                let how = if place == filed::named::UNPACKED {
                    Rereading::Unpacked
                } else {
                    Rereading::Code
                };
                notes.reread(at, place, how, reads.clone());
            }
            // `while read -r l; do …; done < notes.txt`: `l` holds what the file holds.
            let stored = super::stored_only(reads);
            if !stored.is_empty() {
                for v in &self.inner.fills {
                    notes.analysis.write_from(v.as_bytes(), stored.clone());
                    notes.exported_write(self.start, v.as_bytes(), stored.clone());
                }
            }
            return;
        }
        if self.name_word.is_none() {
            return;
        }
        // `tee >(psql)`: what the command may write (its output, its input) reaches them.
        if !self.fed.readers.is_empty() {
            let mut reads = self.output(&notes.analysis);
            reads.extend(self.input_reads(&notes.analysis));
            for &(at, place) in &self.fed.readers {
                notes.reread(at, place, Rereading::Code, reads.clone());
            }
        }
        let words: Vec<&Word> = self.name_word.iter().chain(&self.args).collect();
        let shapes = self.shapes();
        let texts: Vec<&[u8]> = words.iter().map(|w| w.unquoted.as_slice()).collect();
        for found in own::words(&shapes, &texts) {
            let w = words[found.at];
            if found.leading && !w.leading_expansion {
                continue;
            }
            let mut reads = word_reads(w);
            if let Some(var) = &found.env {
                reads.push(Read::Variable(String::from_utf8_lossy(var).into_owned()));
            }
            notes.reread(w.start, found.place, found.how, reads);
        }
        let Some(place) = self.own_stdin() else {
            return;
        };
        for input in &self.inputs {
            let (at, reads) = match input {
                Input::Pipe(reads, _) => (self.start, reads.clone()),
                Input::Echoed(_) => continue,
                Input::File(w) => {
                    // `printf %s "$NAME" > f; python3 < f`: what was written there.
                    let mut reads = w.reads(false);
                    reads.extend(filed::held_by(
                        w.value(),
                        w.data_file(&notes.analysis),
                        &notes.analysis.filed,
                    ));
                    (w.start, reads)
                }
                Input::Text(w) => (w.start, w.reads(false)),
                Input::Descriptor => continue,
            };
            notes.reread(at, place, Rereading::Code, reads);
        }
    }

    /// The words that name a directory code is taken from (`directories::words`), with what
    /// reaches them (a positional parameter as `@`: `cd "$1"`).
    pub(super) fn directories(&self, notes: &mut Notes) {
        let words: Vec<&Word> = self.name_word.iter().chain(&self.args).collect();
        let texts: Vec<&[u8]> = words.iter().map(|w| w.unquoted.as_slice()).collect();
        let expanded: Vec<bool> = words.iter().map(|w| w.expanded).collect();
        for (i, place) in directories::words(&texts, &expanded) {
            let w = words[i];
            let mut reads = w.reads(false);
            if w.opaque.is_some() {
                reads.push(Read::Variable(POSITIONAL.to_string()));
            }
            let line = notes.line(w.start);
            notes.analysis.directories.push(Directory {
                place,
                line,
                reads,
                starts: w.leading_expansion,
            });
        }
    }

    /// `trap 'CMD' EXIT`: CMD, in plain text, is a script, read like `sh -c`'s.
    pub(super) fn trap(&self, notes: &mut Notes) {
        let mut args = self.args.iter().skip_while(|w| w.is_value(b"--"));
        if let (Some(w), Some(_)) = (args.next(), args.next())
            && let Some(v) = w.value()
            && !v.is_empty()
            && !v.starts_with(b"-")
            && !v.iter().all(u8::is_ascii_digit)
        {
            notes
                .scripts
                .push((w.start, v.to_vec(), "the command of `trap`"));
        }
    }

    /// The words that choose what runs (`programs::programs`: the command's name, the
    /// program behind a wrapper, a shell's script file): a value there picks the program.
    pub(super) fn programs(&self, notes: &mut Notes) {
        let words: Vec<&Word> = self.name_word.iter().chain(&self.args).collect();
        for (i, place) in programs::programs(&self.shapes()) {
            notes.reread(
                words[i].start,
                place,
                Rereading::Program,
                word_reads(words[i]),
            );
        }
        let values: Vec<Option<&[u8]>> = words.iter().map(|w| w.value()).collect();
        let texts: Vec<&[u8]> = words.iter().map(|w| w.unquoted.as_slice()).collect();
        let script = launchers::scripts(&values, &texts)
            .into_iter()
            .find(|&(_, place)| place == SCRIPT)
            .map(|(i, _)| i);
        for i in known::program_texts(&self.shapes()) {
            notes.reread(
                words[i].start,
                known::PROGRAM_TEXT,
                Rereading::Code,
                word_reads(words[i]),
            );
        }
        if let Some((program, found)) = known::unknown(&self.shapes(), script) {
            let place = format!("{} `{program}`", known::OPERAND);
            for i in found {
                notes.reread(
                    words[i].start,
                    place.clone(),
                    Rereading::Operand,
                    word_reads(words[i]),
                );
            }
        }
    }

    /// What reaches the standard input of a command that runs it as code or splits it
    /// (`stdin_use`): a pipe (whatever the command before it writes may hold a value), the
    /// word of `<<<` (read as a script when it is plain text), the file of `<`, a duplicated
    /// descriptor, or, with no input of its own, what reaches it from outside the command
    /// (`echo "$v" | { sh; }`). A here-document's body is read after the line
    /// (`Lexer::finish`). The words after `sh -s` are the script's positional parameters.
    pub(super) fn stdin(&self, notes: &mut Notes) {
        let Some(used) = self.stdin_use() else { return };
        let (place, how) = match used {
            Stdin::Code(place) => (place, Rereading::Code),
            Stdin::Split(place) => (place, Rereading::Split),
            Stdin::Signal(place) => (place, Rereading::Signal),
        };
        let code = how == Rereading::Code;
        if code {
            let words: Vec<&Word> = self.name_word.iter().chain(&self.args).collect();
            if let Some(from) = programs::stdin_arguments(&self.shapes()) {
                let reads: Vec<Read> = words[from.min(words.len())..]
                    .iter()
                    .flat_map(|w| w.reads(false))
                    .collect();
                if !reads.is_empty() {
                    notes.analysis.write_from(POSITIONAL.as_bytes(), reads);
                }
            }
        }
        if self.inputs.is_empty() && !self.heredoc {
            let why = "what reaches its standard input from outside the command (a pipe into \
                       `{ }`, a loop or a function)";
            notes.reread(self.start, place, how, vec![Read::Unknown(why.to_string())]);
        }
        for input in &self.inputs {
            let (at, mut reads) = match input {
                Input::Pipe(reads, _) => {
                    let mut reads = reads.clone();
                    reads.push(Read::Unknown("what the command before `|` writes".into()));
                    (self.start, reads)
                }
                // `echo /usr/local/bin/report | at {{ when }}`: the author's own script.
                Input::Echoed(text) if code => {
                    notes.scripts.push((self.start, text.clone(), place));
                    continue;
                }
                Input::Echoed(_) => continue,
                Input::File(w) => {
                    let mut reads = w.reads(false);
                    if !code {
                        reads.push(Read::Unknown("the file `<` reads".into()));
                    }
                    // `printf %s "$NAME" > f; python3 < f`: what was written there.
                    reads.extend(filed::held_by(
                        w.value(),
                        w.data_file(&notes.analysis),
                        &notes.analysis.filed,
                    ));
                    (w.start, reads)
                }
                Input::Text(w) => match w.value() {
                    Some(text) if code => {
                        let mut script = text.to_vec();
                        script.push(b'\n');
                        notes.scripts.push((w.start, script, place));
                        continue;
                    }
                    _ => (w.start, w.reads(false)),
                },
                Input::Descriptor => (
                    self.start,
                    vec![Read::Unknown(
                        "what the descriptor `<&` duplicates holds".into(),
                    )],
                ),
            };
            if code && matches!(input, Input::Text(_)) {
                reads.push(Read::Unknown(format!(
                    "the rest of {place}, which is built from values and so not read by actiond"
                )));
            }
            notes.reread(at, place, how, reads);
        }
    }

    /// The variables the command puts in the environment of a program: its prefix
    /// assignments (`NAME=value cmd`), `export NAME=value` (and `declare -x`), and the
    /// `NAME=value` words of `env` before its command. A program may read them as code.
    pub(super) fn environment(&self, notes: &mut Notes) {
        let mut exported: Vec<&Word> = Vec::new();
        if self.name_word.is_some() {
            exported.extend(&self.assignments);
        } else {
            // A plain assignment to a name the shell got from its environment keeps it
            // exported (`PATH=/srv/{{ d }}:/bin; tool`), and after `set -a` every one is.
            // `PS4` has its own rule (`Rereading::Prompt`), which says more.
            let allexport = notes.analysis.allexport;
            exported.extend(self.assignments.iter().filter(|w| {
                let name = w.assigned_name();
                name != Some(b"PS4".as_slice())
                    && (allexport || name.is_some_and(super::super::inherited::inherited))
            }));
        }
        let name = self.name.as_deref().unwrap_or_default();
        let base = name.rsplit(|&c| c == b'/').next().unwrap_or(name);
        let exports = base == b"export"
            || (matches!(base, b"declare" | b"typeset" | b"local")
                && self.args.iter().any(|w| {
                    w.value()
                        .is_some_and(|v| v.starts_with(b"-") && v.contains(&b'x'))
                }));
        if exports {
            exported.extend(self.args.iter().filter(|w| w.assignment));
        } else if matches!(base, b"readonly" | b"local" | b"declare" | b"typeset") {
            // `readonly https_proxy=…`, `local LANG=…`: a name the shell got from its
            // environment stays exported, as with a plain assignment.
            let allexport = notes.analysis.allexport;
            exported.extend(self.args.iter().filter(|w| {
                w.assignment
                    && (allexport
                        || w.assigned_name()
                            .is_some_and(super::super::inherited::inherited))
            }));
        }
        if base == b"env" {
            let mut skip = false;
            for w in &self.args {
                match w.value() {
                    _ if std::mem::take(&mut skip) => {}
                    // `-u NAME` and `-C DIR` take a word.
                    Some(v) if v.starts_with(b"-") => skip = matches!(v, b"-u" | b"-C"),
                    Some(v) if !v.contains(&b'=') => break,
                    _ => exported.push(w),
                }
            }
        }
        for w in exported {
            let end = w.unquoted.iter().position(|&c| c == b'=');
            let shown = String::from_utf8_lossy(&w.unquoted[..end.unwrap_or(0)]).into_owned();
            notes.reread(
                w.start,
                format!("the environment variable `{shown}` of what the command starts"),
                Rereading::Environment,
                w.reads(false),
            );
        }
    }
}
