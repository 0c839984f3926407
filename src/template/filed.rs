//! Files a command writes a value into, and the commands after it that read such a file as
//! more than data: a script a shell runs (`printf '%s\n' "$NAME" > job.sh; sh job.sh`,
//! `. ./job.sh`), a program run by its path (`chmod +x f; ./f`), or arguments `xargs -a`
//! splits (`printf '%s\n' "$FILES" > list; xargs -a list rm`). The value is code or words
//! there as surely as in `sh -c "$NAME"`, and the quoting the shell gave it is gone once it
//! is in the file. And a file outlives the press, so anything may read it later (a login
//! shell, cron, a service, the next press): a value may be written, copied or moved only
//! into a file known to hold data (`data_file`), an allow list as `readers` is.
//!
//! Syntactic: the words in, what they write and run noted (`note`). A file is matched by its
//! name as written (`./` dropped); one whose name an expansion makes matches every file run
//! after it, unless the author's text fixes it as data (`named::glob`: `/srv/dl/*.txt`). The
//! name itself, where a value makes it, is `named`'s, whatever is written there. A match is noted as a place that reads again what was written, and `judge`
//! weighs it like any other place that reads code. It must not read files: a script already
//! on disk is the author's.

use super::known;
use super::programs::{self, SCRIPT_FILE};
use super::reread::{Analysis, Filed, Notes, Read, Rereading};
pub use copies::tree_uses;
use copies::{copies, copy, data_copies, target_directory};
use outputs::{output_at, output_files};

/// For one command (`words` from its name on, each word's byte offset in `starts`; `data`
/// the same words with a variable holding a data file's name read as that name): the
/// files it runs or splits that a value was written into before, each noted as read again
/// with what was written; then the files it writes `reads` into (`names`, as `written`
/// finds them: its redirections', `tee`'s operands, …), when `reads` may hold a value.
pub fn note(
    notes: &mut Notes,
    words: &[Option<&[u8]>],
    data: &[Option<&[u8]>],
    starts: &[usize],
    names: Vec<Option<Vec<u8>>>,
    reads: Vec<Read>,
    start: usize,
) {
    data_uses(notes, data, starts, start);
    for (i, how, any) in reads_again(words) {
        let name = words[i].map(file_of);
        for f in notes.analysis.filed.clone() {
            // A place that runs or splits a file matches any file an expansion names; a
            // word of a program that may read it as code, only the same name (two
            // expansions are taken for one name).
            let matched = if any {
                same(f.name.as_deref(), name)
            } else {
                match (f.name.as_deref(), words[i]) {
                    (Some(file), Some(word)) => mentions(word, file),
                    (None, None) => true,
                    _ => false,
                }
            };
            if !matched {
                continue;
            }
            let shown = f.name.as_deref().map_or_else(
                || "a file an expansion names".to_string(),
                |n| format!("`{}`", String::from_utf8_lossy(n)),
            );
            let place = if any {
                format!(
                    "the file {shown}, which line {} writes a value into and this command reads \
                     again as a script or as words",
                    f.line
                )
            } else {
                format!(
                    "the file {shown}, which line {} writes a value into and a program this \
                     command runs is given, which may read it as code (only {} are known to \
                     read such a file as data)",
                    f.line, "`cat`, `grep`, `cp`, `mv`, `rm`, `chmod` and the like"
                )
            };
            notes.reread(starts[i], place, how, f.reads);
        }
    }
    // `env -C /etc/logrotate.d tee x.txt`: its relative names land there.
    lands::wrapper_chdir(&mut notes.analysis.cwd, words);
    let line = notes.line(start);
    // `cat job.in > job.sh`, `sort job.in | tee job.sh`: what a file the command names held
    // goes where it writes.
    let mut reads = reads;
    reads.extend(named_by(words, &notes.analysis.filed));
    // `cp job.sh run.sh`, `mv`, `ln`, `install`: the copy holds what the file held.
    // Each copy as its destination and that joined with the source's name (a directory):
    // a destination known to hold data is a file, not a directory.
    for pair in copies(words, &notes.analysis.filed).chunks(2) {
        for (k, (name, reads)) in pair.iter().enumerate() {
            // The destination is the file unless it is named as a directory (`DIR/`); the
            // joined name is, unless the destination is a file known to hold data.
            let dest = pair[0].0.as_deref();
            let checked = if k == 0 {
                !dest.is_some_and(|d| d.ends_with(b"/"))
            } else {
                !dest.is_some_and(data_file)
            };
            if checked {
                stored(notes, start, line, name.as_deref(), reads);
            }
            notes.analysis.filed.push(Filed {
                name: name.clone(),
                line,
                reads: reads.clone(),
            });
        }
    }
    note_written(notes, names, reads, start);
    // `mv /srv/notes /etc/logrotate.d/`, `rsync -a /srv/inbox/ /home/pi/` (fe30v F10, F5).
    for (name, does) in copies::tree_uses(words, &notes.analysis.cwd) {
        let line = notes.line(start);
        notes.analysis.runs_data.push((name, line, does));
    }
    // `ln -sfn /etc/logrotate.d /srv/notes/rot`: later writes through the link land there.
    lands::note_links(&mut notes.analysis.cwd, words);
}

/// The uses of a file named as data that take it for more than data, noted whatever the
/// command's values (`Analysis::runs_data`): another action, or an earlier press, may have
/// written a value into it, as the data-file rule lets them.
fn data_uses(notes: &mut Notes, words: &[Option<&[u8]>], starts: &[usize], start: usize) {
    let uses = data_uses_of(words);
    for (j, name, program) in unknown_readers(words, &uses) {
        let line = notes.line(starts[j]);
        notes.analysis.unknown_readers.push((name, line, program));
    }
    for (at, name, does) in uses {
        let line = notes.line(at.map_or(start, |i| starts[i]));
        notes.analysis.runs_data.push((name, line, does));
    }
}

/// One use of a file named as data for more than data: the index of its word (`None`: the
/// command as a whole), the file's name, and what the command does with it.
pub type DataUse = (Option<usize>, Vec<u8>, String);

/// The uses of files named as data that `words` (a command from its name on, or an `exec:`
/// argv) make for more than data: run as a script (behind any wrapper, a program actiond
/// does not know too: `systemd-run --wait sh F`), sourced, a program's own script file,
/// given to an awk or sed program that runs commands, a list of urls or settings, a git
/// include, or copied under a name not known to hold data.
pub fn data_uses_of(words: &[Option<&[u8]>]) -> Vec<DataUse> {
    let words = &with_found(words)[..];
    // Most commands name no file that may be data: nothing below can find a use then.
    if !names_data(words) {
        let mut out = items_run(words);
        out.extend(data_links(words));
        return out;
    }
    let mut out: Vec<DataUse> = Vec::new();
    let note = |out: &mut Vec<DataUse>, i: usize, does: &str| {
        if let Some(w) = words[i].filter(|w| may_be_data(normal(w)))
            && !out.iter().any(|(at, _, _)| *at == Some(i))
        {
            out.push((Some(i), w.to_vec(), does.to_string()));
        }
    };
    let mut run: Vec<usize> = runs(words).into_iter().map(|(i, _)| i).collect();
    run.extend(scripts::behind_any(words));
    // A program a pattern or a data name picks (`find … -name '*.txt' -exec {} ;`).
    run.extend(
        programs::chain(words)
            .into_iter()
            .filter(|&i| words[i].is_some_and(|w| names_data_file(normal(w)))),
    );
    if let Some(&k) = programs::chain(words).last()
        && let Some(p) = words[k].map(base)
    {
        // An interpreter's script (`python3 FILE`), the table of `crontab FILE` (`-u USER`
        // takes the next word), the jobs of `at -f FILE`.
        let first = (k + 1..words.len()).find(|&j| {
            words[j].is_none_or(|w| !w.starts_with(b"-"))
                && !(p == b"crontab" && words[j - 1] == Some(&b"-u"[..]))
        });
        // An interpreter given its program as text (`python3 -c`, `perl -e`) has no script
        // file (`inline_runs` reads the text).
        let inline = !super::known::program_texts(words).is_empty();
        if (known::interpreter(p) && !inline) || p == b"crontab" {
            run.extend(first);
        }
        if p == b"at" {
            run.extend((k + 1..words.len()).filter(|&j| j > 0 && words[j - 1] == Some(&b"-f"[..])));
        }
        run.sort_unstable();
        run.dedup();
        for &i in &run {
            note(&mut out, i, "runs as code");
        }
        // `sed -f F`, `awk -f F`, `make -f F`, `vim -S F`, `ssh -F F`, `bc F`.
        for (j, name) in scripts::script_files(words, k) {
            if data_named(normal(name)) && !run.contains(&j) {
                out.push((Some(j), name.to_vec(), "reads as its program".to_string()));
            }
        }
        // `awk '{ system($1) }' hosts.txt`, `sed e notes.txt`, awk's `getline < "F"`.
        for (j, name) in scripts::run_operands(words, k) {
            if data_named(normal(name)) {
                let does = "gives to a program whose script runs what it reads,".to_string();
                out.push((Some(j), name.to_vec(), does));
            }
        }
    } else {
        for &i in &run {
            note(&mut out, i, "runs as code");
        }
    }
    for (i, does) in lists(words) {
        note(&mut out, i, does);
    }
    // `python3 -c 'exec(open("radio.txt").read())'`, `perl -ne 'system($_)' hosts.txt`.
    for (j, name) in scripts::inline_runs(words) {
        let does = "gives to program text that runs what it reads,".to_string();
        out.push((Some(j), name.to_vec(), does));
    }
    // `env NODE_OPTIONS=--require=notes.txt node …`, `export PYTHONPATH=/srv/dl/x.zip`.
    if let Some(&k) = programs::chain(words).last() {
        for (i, file, does) in environment_files(words, k) {
            out.push((Some(i), file.to_vec(), does.to_string()));
        }
    }
    // git's `-c include.path=notes.txt`, `git config include.path notes.txt`.
    for found in settings_files(words) {
        if !out.iter().any(|(at, _, _)| *at == found.0) {
            out.push(found);
        }
    }
    // `gunzip nightly.sh.gz` makes `nightly.sh` (fe30u F2): a copy under the name it derives.
    for (i, derived) in decompressed(words) {
        if let Some(w) = words[i]
            && !data_file(&derived)
        {
            let does = format!(
                "decompresses, to `{}` (a name not known to hold data),",
                String::from_utf8_lossy(&derived)
            );
            out.push((Some(i), w.to_vec(), does));
        }
    }
    // `ln -sf /root/.bashrc /srv/state/today.log`: a write into the data name lands there.
    out.extend(data_links(words));
    out.extend(items_run(words));
    // A copy of a file named as data under a name not known to hold data (`cp notes.txt
    // {{ name }}`, `cp todo.txt ~/.bashrc`): the copy may be run, or read as settings.
    for (dest, source) in data_copies(words) {
        let does = dest.map_or_else(
            || "copies, under a name an expansion makes (a value may pick `.bashrc`),".to_string(),
            |d| {
                format!(
                    "copies, to `{}` (a name not known to hold data),",
                    String::from_utf8_lossy(d)
                )
            },
        );
        out.push((None, source.to_vec(), does));
    }
    out
}

/// The files named as data that `words` hand a program as settings it runs code from
/// (`settings_file`: `BASH_ENV=F` behind `env`, git's `-c include.path=F`), and the file
/// `git config include.path F` names.
fn settings_files(words: &[Option<&[u8]>]) -> Vec<DataUse> {
    let git = words.iter().flatten().any(|w| base(w) == b"git");
    let include =
        |w: &[u8]| w == b"include.path" || (w.starts_with(b"includeIf.") && w.ends_with(b".path"));
    let mut out: Vec<DataUse> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if let Some((name, does)) = w.and_then(|w| settings_file(w, git)) {
            out.push((Some(i), name.to_vec(), does.to_string()));
        }
        if git
            && w.is_some_and(include)
            && let Some(file) = words.get(i + 1).copied().flatten()
            && data_named(normal(file))
        {
            let does = "gives git as settings to include (git runs commands from some: \
                        `core.fsmonitor`, `core.sshCommand`),";
            out.push((Some(i + 1), file.to_vec(), does.to_string()));
        }
    }
    out
}

/// `words` with `find`'s `{}` read as each file its `-name` pattern names (`find /srv/jobs
/// -name '*.txt' -exec sh {} \;`).
fn with_found<'a>(words: &[Option<&'a [u8]>]) -> Vec<Option<&'a [u8]>> {
    let found = found_data(words);
    words
        .iter()
        .map(|&w| {
            if w == Some(&b"{}"[..]) {
                found.or(w)
            } else {
                w
            }
        })
        .collect()
}

/// Whether any of `words` may name a file named as data, itself or in a command it holds.
fn names_data(words: &[Option<&[u8]>]) -> bool {
    let data = |w: &&[u8]| may_be_data(normal(w)) || !data_mentioned(w).is_empty();
    words.iter().flatten().any(data)
}

/// A file named as data that the assignment-shaped word `w` hands a program as settings
/// it runs code from: a shell's start-up file (`BASH_ENV=F`, `ENV=F`), and, in a git
/// command (`git`), a config file to include (`include.path=F`, `includeIf.….path=F`),
/// whose `core.fsmonitor` or `core.sshCommand` git runs. With what the command does with it.
pub fn settings_file(w: &[u8], git: bool) -> Option<(&[u8], &'static str)> {
    let (key, file) = w.split_at(w.iter().position(|&c| c == b'=')?);
    let file = &file[1..];
    let does = match key {
        b"BASH_ENV" | b"ENV" => "gives a shell as its start-up file (`BASH_ENV`, `ENV`)",
        b"GIT_CONFIG_GLOBAL" | b"GIT_CONFIG_SYSTEM" | b"GIT_CONFIG" => {
            "gives git as its settings (git runs commands from some: `core.fsmonitor`),"
        }
        b"LD_PRELOAD" | b"LD_AUDIT" => "gives every program as a library to load and run",
        // `systemd-run -p EnvironmentFile=F`: `LD_PRELOAD`, `BASH_ENV` among its lines.
        b"EnvironmentFile" => "gives a program as its environment (`LD_PRELOAD`, `BASH_ENV`)",
        b"PYTHONSTARTUP" => "gives Python as code to run at start",
        k if git
            && (k == b"include.path"
                || (k.starts_with(b"includeIf.") && k.ends_with(b".path"))) =>
        {
            "gives git as settings to include (git runs commands from some: `core.fsmonitor`, \
             `core.sshCommand`),"
        }
        _ => return None,
    };
    data_named(normal(file)).then_some((file, does))
}

/// The files named as data a decompressor (at the end of the chain) writes out under the
/// name it derives by dropping the ending (`gunzip nightly.sh.gz` makes `nightly.sh`), each
/// with that name; nothing when it writes to its output (`-c`, `--stdout`, `zcat`).
fn decompressed(words: &[Option<&[u8]>]) -> Vec<(usize, Vec<u8>)> {
    let Some(&k) = programs::chain(words).last() else {
        return Vec::new();
    };
    let p = words[k].map(base).unwrap_or_default();
    let options = || {
        words[k + 1..]
            .iter()
            .flatten()
            .filter(|w| w.starts_with(b"-"))
    };
    let short = |c: u8| options().any(|w| !w.starts_with(b"--") && w.contains(&c));
    let decompresses = match p {
        b"gunzip" | b"bunzip2" | b"unxz" | b"unzstd" | b"unlzma" | b"uncompress" => true,
        b"gzip" | b"bzip2" | b"xz" | b"zstd" | b"lzma" => {
            short(b'd') || options().any(|w| *w == b"--decompress")
        }
        _ => false,
    };
    if !decompresses || short(b'c') || options().any(|w| *w == b"--stdout") {
        return Vec::new();
    }
    // `-N` (`--name`): the name and time stored in the archive's header, which whoever made
    // it picks (`notes.txt.gz` unpacks as `.bashrc`, fe30x F12).
    if short(b'N') || options().any(|w| *w == b"--name") {
        return (k + 1..words.len())
            .filter(|&i| words[i].is_some_and(|w| !w.starts_with(b"-") && data_named(normal(w))))
            .map(|i| (i, b"*".to_vec()))
            .collect();
    }
    // `-S .txt` (`--suffix=.txt`, `-S.txt`): the ending it drops is the author's (fe30w F8).
    let suffix = (k + 1..words.len()).find_map(|i| match words[i]? {
        b"-S" | b"--suffix" => words.get(i + 1).copied().flatten(),
        w if w.starts_with(b"--suffix=") => Some(&w[9..]),
        w if w.starts_with(b"-S") && w.len() > 2 => Some(&w[2..]),
        _ => None,
    });
    const ENDINGS: &[&[u8]] = &[b".gz", b".bz2", b".xz", b".zst", b".lzma", b".Z", b".tgz"];
    let after_suffix = |i: usize| i > 0 && matches!(words[i - 1], Some(b"-S" | b"--suffix"));
    (k + 1..words.len())
        .filter_map(|i| {
            let w = words[i]
                .filter(|w| !w.starts_with(b"-") && !after_suffix(i) && data_named(normal(w)))?;
            let e = suffix
                .filter(|s| !s.is_empty() && w.ends_with(s))
                .or_else(|| ENDINGS.iter().copied().find(|e| w.ends_with(e)))?;
            let mut derived = w[..w.len() - e.len()].to_vec();
            if e == b".tgz" {
                derived.extend_from_slice(b".tar");
            }
            Some((i, derived))
        })
        .collect()
}

/// The pattern of `find`'s `-name`/`-iname` when it names files named as data (`*.txt`):
/// what its `{}` stands for.
fn found_data<'a>(words: &[Option<&'a [u8]>]) -> Option<&'a [u8]> {
    if words.first().copied().flatten().map(base) != Some(&b"find"[..]) {
        return None;
    }
    let named = words
        .windows(2)
        .find(|p| matches!(p[0], Some(b"-name" | b"-iname")))
        .map(|p| p[1]);
    match named {
        // `-name '*.txt'`; and with no `-name`, any file, a data file too.
        Some(pattern) => pattern.filter(|p| may_be_data(p)),
        None => Some(&b"*"[..]),
    }
}

/// The files `names` a command at `start` writes `reads` into (nothing when `reads` is
/// empty): each a file a later command may run or read, and one not known to hold data is
/// code now (`stored`).
pub fn note_written(
    notes: &mut Notes,
    names: Vec<Option<Vec<u8>>>,
    reads: Vec<Read>,
    start: usize,
) {
    if reads.is_empty() {
        return;
    }
    let line = notes.line(start);
    for name in names {
        stored(notes, start, line, name.as_deref(), &reads);
        notes.analysis.filed.push(Filed {
            name,
            line,
            reads: reads.clone(),
        });
    }
}

/// A file written (or copied, moved, linked) with `reads` in it outlives the command, and
/// whatever else reads it may read it as code: a login shell its profile, cron its tables,
/// a service its `/etc/default` file, at the next boot. A list of such files is never
/// complete, so the rule goes the other way round: only a file known to hold data
/// (`data_file`) may hold a value; any other is noted as read again as code.
fn stored(notes: &mut Notes, start: usize, line: usize, name: Option<&[u8]>, reads: &[Read]) {
    // A process substitution (`tee >(psql)`) is no file: its command's input is judged by
    // the flow into it (`commands`).
    if reads.is_empty() || name == Some(programs::PROCESS_SUBSTITUTION) {
        return;
    }
    // A relative name lands in each directory the shell may be in (`cd`, `workingDirectory`).
    for landing in lands::landings(&notes.analysis.cwd, name) {
        let place = match landing {
            lands::Landing::Name(n) => stored_place(line, n.as_deref()),
            lands::Landing::Unknown => Some(lands::unknown_place(name, line)),
        };
        if let Some(place) = place {
            notes.reread(start, place, Rereading::Stored, reads.to_vec());
            return;
        }
    }
}

/// Why a value written into the file `name` (as it lands) at `line` is read as code, unless
/// the file is known to hold data.
fn stored_place(line: usize, name: Option<&[u8]>) -> Option<String> {
    if name.is_some_and(data_file) {
        return None;
    }
    let place = match name {
        Some(n) if by_convention(n) => format!(
            "the file `{}`, which line {line} writes a value into and which is run as code by \
             convention (a login shell's profile, cron, systemd, sudo, udev, apt, a script by \
             its name)",
            String::from_utf8_lossy(n)
        ),
        Some(n) => format!(
            "the file `{}`, which line {line} writes a value into and which is not known to \
             hold data",
            String::from_utf8_lossy(n)
        ),
        None => format!(
            "a file whose name an expansion makes, which line {line} writes a value into and \
             which may be one another program reads as code (`$HOME/.profile`, `/etc/cron.d/$NAME`)"
        ),
    };
    Some(place)
}

/// The endings of a file known to hold data: text, tables and JSON, and what no program on
/// a board runs as code: documents, pictures, sound, video, and archives kept as files (an
/// archive is data until it is extracted, and an extraction of one a value picks or fills,
/// or of a file named as data, is refused: `named::extracts`). Not `.html`, `.svg`, `.xml`:
/// a browser runs the script in them when a web server serves them; not `.conf`, `.ini`,
/// `.yaml`, `.cfg`: settings.
pub const ENDINGS: &[&[u8]] = &[
    b".txt", b".log", b".csv", b".tsv", b".json", b".jsonl", b".md", b".dat", b".out", b".pdf",
    b".jpg", b".jpeg", b".png", b".gif", b".webp", b".bmp", b".heic", b".mp3", b".ogg", b".oga",
    b".flac", b".wav", b".m4a", b".aac", b".opus", b".mp4", b".m4v", b".mkv", b".webm", b".mov",
    b".avi", b".gz", b".tgz", b".zip", b".tar", b".bz2", b".xz", b".zst", b".7z",
];

/// Whether a file named `name` (as written, `./` dropped) is known to hold data only: a
/// device that passes the bytes on, or a file whose ending says it holds text, a table or
/// JSON. Never one `by_convention` runs. Not a directory alone: another action may source
/// `/tmp/radio.conf` or run `/tmp/job` as surely as one in `/etc`.
pub fn data_file(name: &[u8]) -> bool {
    const DEVICES: &[&[u8]] = &[
        b"/dev/null",
        b"/dev/stdout",
        b"/dev/stderr",
        b"/dev/tty",
        b"/dev/fd/",
        b"/proc/self/fd/",
    ];
    // The system's configuration, the boot firmware's, programs, spools, and any hidden file
    // or directory (`~/.config/…`, `.git/hooks`, `.ssh/`): whatever their ending, programs
    // load every file of such directories (`/etc/logrotate.d`, `bash_completion.d`,
    // `/boot/firmware/config.txt`).
    const SYSTEM: &[&[u8]] = &[b"/etc/", b"/boot/", b"/usr/", b"/lib", b"/var/spool/"];
    let hidden = name
        .split(|&c| c == b'/')
        .any(|s| s.first() == Some(&b'.') && s != b"." && s != b"..");
    if by_convention(name)
        || name.split(|&c| c == b'/').any(|s| s == b"..")
        || hidden
        || SYSTEM.iter().any(|d| name.starts_with(d))
    {
        return false;
    }
    DEVICES
        .iter()
        .any(|d| name == *d || (d.ends_with(b"/") && name.starts_with(d)))
        || ENDINGS.iter().any(|e| {
            // In any case: cameras name their files `IMG_0001.JPG` (fe30u's second low one).
            // A rotated or kept copy keeps its data ending inside (`app.log.1`,
            // `state.json.tmp`, `notes.txt.bak`; fe30w FR2, FR3).
            let file = kept(base(name));
            file.len() > e.len() && file[file.len() - e.len()..].eq_ignore_ascii_case(e)
        })
}

/// A file's name without the endings a rotated, kept or temporary copy adds (`.1`, `.bak`,
/// `.old`, `.orig`, `.tmp`, `.new`, `~`), two at most: `app.log.1` is `app.log`.
fn kept(file: &[u8]) -> &[u8] {
    const KEPT: &[&[u8]] = &[b".bak", b".old", b".orig", b".tmp", b".new", b"~"];
    let mut f = file;
    for _ in 0..2 {
        let digits = f.iter().rev().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 && digits < f.len() && f[f.len() - digits - 1] == b'.' {
            f = &f[..f.len() - digits - 1];
        } else if let Some(e) = KEPT.iter().find(|e| f.len() > e.len() && f.ends_with(e)) {
            f = &f[..f.len() - e.len()];
        }
    }
    f
}

/// A file named as data that any action may have written a value into (`data_file`, but a
/// device: `/dev/null` holds nothing): none may run, source, list or copy it as more.
pub fn data_named(name: &[u8]) -> bool {
    // A url of another host is no file here (`curl -o F https://example.com/app.tgz`,
    // fe30x FR2); a `file:` url is.
    let remote = name.windows(3).any(|w| w == b"://") && !name.starts_with(b"file:");
    data_file(name) && !remote && !name.starts_with(b"/dev/") && !name.starts_with(b"/proc/")
}

/// Whether `name` may name a file named as data: it is one, or it is a pattern whose last
/// segment does not fix an ending that is no data ending (`/srv/jobs/*`, `notes.tx?`,
/// `notes.t[x]t` may; `/etc/profile.d/*.sh` does not).
pub fn may_be_data(name: &[u8]) -> bool {
    if data_named(name) {
        return true;
    }
    // bash's brace expansion (`x.{txt,}` is `x.txt x.`; fe30x F6): any of its words.
    if let Some(open) = name.iter().position(|&c| c == b'{')
        && let Some(len) = name[open..].iter().position(|&c| c == b'}')
        && name[open..open + len].contains(&b',')
    {
        let (before, after) = (&name[..open], &name[open + len + 1..]);
        return name[open + 1..open + len]
            .split(|&c| c == b',')
            .any(|alt| may_be_data(&[before, alt, after].concat()));
    }
    let last = base(name);
    // Program text (`python3 -c '…[…]'`) is no pattern.
    if last
        .iter()
        .any(|c| c.is_ascii_whitespace() || b"\"'(){};$`".contains(c))
    {
        return false;
    }
    let Some(g) = last.iter().rposition(|c| b"*?[]".contains(c)) else {
        return false;
    };
    // The text after the last glob character, when it holds an ending of its own (`.sh`).
    let tail = &last[g + 1..];
    match tail.iter().rposition(|&c| c == b'.') {
        Some(d) => {
            let mut fixed = b"x".to_vec();
            fixed.extend_from_slice(&tail[d..]);
            data_named(&fixed)
        }
        None => true,
    }
}

/// The files a command writes what it reads into: its redirections' `targets` and `tee`'s
/// operands, `dd of=`, `sponge`'s and the program's output files (`output_files`), each by
/// its name (`./` dropped; `None` when an expansion makes it, unless the author's text fixes
/// it as data: `named::glob`). `words` are the command's words as `heads` shows them (the
/// text before an expansion, then `EXPANDED`), `globs` each word's `named::glob` (or
/// `EXPANDED` for a name values alone make, left to `named`).
pub fn written(
    words: &[Option<&[u8]>],
    globs: &[Option<Vec<u8>>],
    targets: &[Option<Vec<u8>>],
) -> Vec<Option<Vec<u8>>> {
    let program = programs::chain(words)
        .last()
        .and_then(|&k| words[k])
        .map(base);
    let at = |k: usize, from: usize| -> Option<Vec<u8>> {
        match words[k] {
            Some(w) if w.ends_with(EXPANDED) => globs.get(k).cloned().flatten().map(|g| {
                if g == EXPANDED {
                    g
                } else {
                    g[from.min(g.len())..].to_vec()
                }
            }),
            Some(w) => Some(w[from.min(w.len())..].to_vec()),
            None => None,
        }
    };
    let mut out: Vec<Option<Vec<u8>>> = targets.to_vec();
    out.extend(tee_targets(words).into_iter().map(|k| at(k, 0)));
    match program {
        // `split n.txt /etc/cron.d/job-` writes `/etc/cron.d/job-aa`, … (`PREFIX*`).
        Some(p @ (b"split" | b"csplit")) => out.extend(outputs::parts_written(words, p)),
        Some(b"cp" | b"install" | b"awk" | b"gawk" | b"mawk" | b"nawk" | b"sed") => {
            out.extend(
                output_files(words, program)
                    .into_iter()
                    .map(|n| n.filter(|n| !n.ends_with(EXPANDED)).map(<[u8]>::to_vec)),
            );
        }
        _ => out.extend(
            output_at(words, program)
                .into_iter()
                .map(|(k, from)| at(k, from))
                .filter(|n| n.as_deref() != Some(b"-")),
        ),
    }
    // `EXPANDED` as a word's glob: a name values alone make, which `named` weighs.
    out.into_iter()
        .filter(|n| n.as_deref() != Some(EXPANDED))
        .map(|n| n.map(|n| normal(&n).to_vec()))
        .collect()
}

/// What ends a word of `heads` that an expansion or a value makes: the text before it is the
/// author's (`-o`, `of=`, `/srv/dl/`).
pub const EXPANDED: &[u8] = b"\0";

/// What the files a value was written into hold that a command (`words` from its name on)
/// names as an argument (`cat f`, `sort -o x f`): what it prints or writes may hold it. A file
/// named as data may hold a value any action wrote (`Read::Stored`).
pub fn named_by(words: &[Option<&[u8]>], filed: &[Filed]) -> Vec<Read> {
    // `sha256sum /srv/backup/*.tgz > SUMS`: it prints sums, not what the files hold.
    let printer = programs::chain(words)
        .last()
        .and_then(|&k| words[k])
        .map(base);
    if printer.is_some_and(prints_no_content) {
        return Vec::new();
    }
    // `tar -cf - -C /srv notes`: the archive holds the tree's data files (fe30v F10).
    let mut reads: Vec<Read> = copies::archived(words)
        .into_iter()
        .map(Read::Stored)
        .collect();
    // What it writes into (`tee notes.txt`, `dd of=notes.txt`) is not what it reads.
    let writes = written(words, &[], &[]);
    for w in words.iter().skip(1).flatten() {
        if let Some(name) =
            data_in_word(w).filter(|_| !writes.iter().any(|t| same(t.as_deref(), Some(w))))
        {
            reads.push(Read::Stored(name));
        }
        for f in filed {
            if f.name.as_deref().is_some_and(|n| mentions(w, n)) {
                reads.extend(f.reads.iter().cloned());
            }
        }
    }
    reads
}

/// What a command substitution's command (`text`, raw) may print of the files a value was
/// written into before: the reads of each such file it names as a word (`$(cat f)`, `$(<
/// ./f)`, `$(head -n1 f)`), and of every file an expansion named when it expands anything
/// itself. Its output is then that value again, perhaps changed (`tr _ - < f`).
pub fn named_in(text: &[u8], filed: &[Filed]) -> Vec<Read> {
    let mut out = Vec::new();
    for f in filed {
        let named = match f.name.as_deref() {
            Some(name) => mentions(text, name),
            None => text.contains(&b'$'),
        };
        if named {
            out.extend(f.reads.iter().cloned());
        }
    }
    out
}

/// The files named as data (`data_named`) that `text`, the command of a command
/// substitution, names as one of its words: its output may be what one holds.
pub fn data_mentioned(text: &[u8]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in words_of(text).filter(|w| data_named(normal(w))) {
        let name = String::from_utf8_lossy(w).into_owned();
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// Notes that the variable `name` is assigned `text`, when that names a file named as data
/// (`Analysis::data_names`; the first such name stays).
pub fn note_name(analysis: &mut Analysis, name: &[u8], text: &[u8]) {
    if may_be_data(normal(text)) {
        let name = String::from_utf8_lossy(name).into_owned();
        analysis
            .data_names
            .entry(name)
            .or_insert_with(|| text.to_vec());
    }
}

/// Notes that the variable `name` is assigned `text` (`None`: not plain text): a second,
/// different text, or one that is not plain, makes it unknown (`Analysis::consts`).
pub fn note_const(analysis: &mut Analysis, name: &[u8], text: Option<&[u8]>) {
    let name = String::from_utf8_lossy(name).into_owned();
    let text = text.map(<[u8]>::to_vec);
    match analysis.consts.get(&name) {
        Some(known) if *known != text => {
            analysis.consts.insert(name, None);
        }
        Some(_) => {}
        None => {
            analysis.consts.insert(name, text);
        }
    }
}

/// The file named as data that one word of a command names (`notes.txt`, `--file=notes.txt`,
/// `if=notes.txt`), if it names one.
pub fn data_in_word(w: &[u8]) -> Option<String> {
    let name = w.rsplit(|&c| c == b'=').next().unwrap_or(w);
    data_named(normal(name)).then(|| String::from_utf8_lossy(name).into_owned())
}

/// The words of `text`, split at blanks, quotes and the shell's operators.
fn words_of(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let separator = |c: &u8| c.is_ascii_whitespace() || b"<>|;&()'\"`=".contains(c);
    text.split(separator).filter(|w| !w.is_empty())
}

/// Whether `text` names the file `name` as one of its words (split at blanks, quotes and the
/// shell's operators): `cat f`, `< ./f`, sqlite3's `.read f`, `--config=f` too.
fn mentions(text: &[u8], name: &[u8]) -> bool {
    words_of(text).any(|w| same(Some(name), Some(w)))
}

/// What the file a word names that a command reads (`< FILE`) may hold: what this command
/// wrote into it before (`written_into`, by the word's text `name`, `None` for one an
/// expansion makes), and, for a file named as data (`data`: `Word::data_file`), what any
/// press may have written into it (`Read::Stored`).
pub fn held_by(name: Option<&[u8]>, data: Option<&[u8]>, filed: &[Filed]) -> Vec<Read> {
    let mut reads = written_into(name, filed);
    reads.extend(data.and_then(data_in_word).map(Read::Stored));
    reads
}

/// What was written into the file named `name` (`< FILE`), by every write that may have
/// made it.
pub fn written_into(name: Option<&[u8]>, filed: &[Filed]) -> Vec<Read> {
    filed
        .iter()
        .filter(|f| same(f.name.as_deref(), name))
        .flat_map(|f| f.reads.iter().cloned())
        .collect()
}

/// Whether a file named `name` is one a program other than the command runs as code by
/// convention: a script by its ending, a shell's profile or rc file, `.env`, and the
/// directories cron, systemd, sudo, udev, apt, the network dispatchers and the boot read
/// commands from. A list like this is never complete; it holds what a board's scripts write.
fn by_convention(name: &[u8]) -> bool {
    const ENDINGS: &[&[u8]] = &[
        b".sh",
        b".bash",
        b".zsh",
        b".py",
        b".pl",
        b".rb",
        b".php",
        b".js",
        b".lua",
        b".service",
        b".timer",
        b".rules",
        b".bashrc",
        b".zshrc",
        b".kshrc",
        b".vimrc",
        b".exrc",
        b".env",
        b".profile",
        b"_profile",
    ];
    const DIRS: &[&[u8]] = &[
        b"/etc/profile.d/",
        b"/etc/cron",
        b"/var/spool/cron/",
        b"/etc/systemd/",
        b"/etc/sudoers",
        b"/etc/udev/",
        b"/etc/apt/apt.conf",
        b"/etc/network/if-",
        b"/etc/NetworkManager/dispatcher",
        b"/etc/init.d/",
        b"/etc/rc.local",
        b"/etc/environment",
        b"/etc/ld.so.preload",
        b"/etc/profile",
        b"/etc/bash.bashrc",
        b"/etc/dhcp/dhclient",
        b"/etc/logrotate",
        b"/.config/systemd/",
        b"/.config/autostart/",
        // Trees root daemons load as settings or run from (fe30v F2): docker's containers'
        // `hostconfig.json`, homebridge's `config.json` and its plugins, dpkg's and apt's
        // state, polkit's local rules. Not `/var/lib` as a whole: actions write their own
        // there (`/var/lib/actiond-run`, the actions' home).
        b"/var/lib/docker/",
        b"/var/lib/containerd/",
        b"/var/lib/homebridge/",
        b"/var/lib/dpkg/",
        b"/var/lib/apt/",
        b"/var/lib/polkit-1/",
        b"/var/lib/systemd/",
    ];
    // In any case: on a FAT or exFAT stick (common on a Pi) `PACKAGE.JSON` is `package.json`.
    let lower = name.to_ascii_lowercase();
    let name = &lower[..];
    let file = base(name);
    let has = |d: &[u8]| {
        let d = d.to_ascii_lowercase();
        name.windows(d.len()).any(|w| w == d)
    };
    ENDINGS.iter().any(|e| file.ends_with(e))
        || DIRS.iter().any(|d| has(d))
        || matches!(
            file,
            b"crontab" | b"authorized_keys" | b".netrc" | b".gitconfig"
        )
        || conventions::by_name(name, file)
}

/// The words naming a file a program reads as a list of urls to fetch or as its own settings
/// (`wget -i FILE`, `curl -K FILE`, `parallel -a FILE`), with what it does there.
fn lists(words: &[Option<&[u8]>]) -> Vec<(usize, &'static str)> {
    let Some(&k) = programs::chain(words).last() else {
        return Vec::new();
    };
    // `-P DIR` does not stop the urls picking the names there (`named`); `-O` does.
    let named_here = !words[k + 1..]
        .iter()
        .flatten()
        .any(|w| w.starts_with(b"-O") || w.starts_with(b"--output-document"));
    let (short, long, does): (&[u8], &[u8], &'static str) = match words[k].map(base) {
        // Named after each url, in the working directory or `-P`'s, as `fetch` refuses for
        // a value.
        Some(b"wget") if named_here => (
            b"-i",
            b"--input-file",
            "fetches, naming each file after its url (in the working directory or `-P`'s), \
             the urls in",
        ),
        Some(b"curl") => (b"-K", b"--config", "reads curl's settings from"),
        Some(b"parallel") => (b"-a", b"--arg-file", "runs the commands listed in"),
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    for j in k + 1..words.len() {
        let Some(w) = words[j] else { continue };
        if (w == short || w == long) && j + 1 < words.len() {
            out.push((j + 1, does));
        } else if (w.len() > 2 && w.starts_with(short) && !w.starts_with(b"--"))
            || (w.starts_with(long) && w.get(long.len()) == Some(&b'='))
        {
            out.push((j, does));
        }
    }
    out
}

/// The name `w` as a file is matched: `./job.sh` and `job.sh` are one file.
pub fn normal(w: &[u8]) -> &[u8] {
    let mut w = w;
    while let Some(rest) = w.strip_prefix(b"./") {
        w = rest;
    }
    w
}

/// Whether a file written as `written` may be the file named `run` (`None`: an expansion,
/// which may name any). Compared by their last path segment: the command may have changed
/// directory in between (`cd /srv/jobs && … > job.sh`, then `sh /srv/jobs/job.sh`), or
/// spelled the directory another way (`/srv/jobs/./job.sh`, `//`, `$PWD/…`).
pub fn same(written: Option<&[u8]>, run: Option<&[u8]>) -> bool {
    match (written, run) {
        // A name a value makes that the author fixed as data (`/srv/dl/*.txt`) matches the
        // names it may be.
        (Some(a), Some(b)) => named::matches(normal(a), normal(b)) || named::matches(b, a),
        _ => true,
    }
}

/// The file operands of `tee` (its words after the name that are no options): it writes
/// its input into each.
pub fn tee_targets(words: &[Option<&[u8]>]) -> Vec<usize> {
    // Behind any wrapper too: `sudo tee`, `nice tee`, `runuser -u root -- tee`.
    let Some(at) = known::behind(words, |name| name == b"tee")
        .into_iter()
        .find(|&k| words[k].map(base) == Some(&b"tee"[..]))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut options = true;
    for (i, w) in words.iter().enumerate().skip(at + 1) {
        match w {
            Some(b"--") if options => options = false,
            Some(w) if options && w.len() > 1 && w[0] == b'-' => {}
            _ => out.push(i),
        }
    }
    out
}

/// Each word of a command that names a file it may read as more than data, with how, and
/// whether a file an expansion names matches it: the places `runs` finds (any file), and
/// every other word a program does not read as data (`readers`: the same name only).
fn reads_again(words: &[Option<&[u8]>]) -> Vec<(usize, Rereading, bool)> {
    let mut out: Vec<(usize, Rereading, bool)> = runs(words)
        .into_iter()
        .map(|(i, how)| (i, how, true))
        .collect();
    let chain = programs::chain(words);
    let program = chain.last().and_then(|&k| words[k]).map(base);
    // A shell's words are its script file (`runs`) and its `-c` script, which is read as a
    // script of its own, the files written before it known there.
    if program.is_some_and(|p| programs::SHELLS.contains(&p)) {
        return out;
    }
    let from = chain.last().map_or(0, |&k| k + 1);
    for i in from..words.len() {
        let data = chain.last().is_some_and(|&k| readers::as_data(words, k, i));
        if !data && !out.iter().any(|&(k, _, _)| k == i) {
            out.push((i, Rereading::Code, false));
        }
    }
    out
}

/// The words of a command that name a file it reads as more than data, with how: the
/// script file of a shell (`sh FILE`, behind any wrapper), the file `.` or `source` runs, the
/// program when it is named by a path (`./f`, `/tmp/job`), and the file `xargs -a` splits.
pub fn runs(words: &[Option<&[u8]>]) -> Vec<(usize, Rereading)> {
    let mut out: Vec<(usize, Rereading)> = programs::programs(words)
        .into_iter()
        .filter_map(|(i, place)| {
            let by_path = words[i].is_some_and(|w| w.contains(&b'/'));
            (place == SCRIPT_FILE || by_path).then_some((i, Rereading::Code))
        })
        .collect();
    let name = words.first().copied().flatten();
    if matches!(name, Some(b"." | b"source")) && words.len() > 1 {
        out.push((1, Rereading::Code));
    }
    if name.map(base) == Some(&b"xargs"[..]) {
        out.extend(xargs_file(words).map(|i| (i, Rereading::Split)));
    }
    out
}

/// The word `xargs -a FILE` (`-aFILE`, `--arg-file FILE`, `--arg-file=FILE`) names: its index,
/// the option's own for the joined forms.
fn xargs_file(words: &[Option<&[u8]>]) -> Option<usize> {
    for (i, w) in words.iter().enumerate().skip(1) {
        let Some(w) = w else { continue };
        if *w == b"-a" || *w == b"--arg-file" {
            return Some(i + 1).filter(|&j| j < words.len());
        }
        if (w.starts_with(b"-a") && w.len() > 2) || w.starts_with(b"--arg-file=") {
            return Some(i);
        }
        if !w.starts_with(b"-") {
            break;
        }
    }
    None
}

/// The name a joined option gives its file (`-alist` is `list`), or the word itself.
pub fn file_of(w: &[u8]) -> &[u8] {
    if let Some(rest) = w.strip_prefix(b"--arg-file=") {
        return rest;
    }
    match w.strip_prefix(b"-a") {
        Some(rest) if !rest.is_empty() && !w.starts_with(b"--") => rest,
        _ => w,
    }
}

/// The last path segment: `/usr/bin/tee` is `tee`.
fn base(w: &[u8]) -> &[u8] {
    w.rsplit(|&c| c == b'/').next().unwrap_or(w)
}

mod conventions;
mod copies;
pub mod lands;
pub mod named;
mod outputs;
mod readers;
use readers::{data_links, environment_files, items_run, names_data_file};
pub use readers::{data_printed, environment_file, prints_no_content, unknown_readers};
mod scripts;
#[cfg(test)]
mod tests;
