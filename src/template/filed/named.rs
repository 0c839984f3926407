//! The name of a file a value makes, whatever the program writes into it. A placeholder,
//! `$ACTIOND_ARG_X` or a variable copied from one inside the path of a written file picks
//! the file: `journalctl > {{ path }}` writes the journal into `/etc/cron.d/job`, `curl -o
//! /home/pi/{{ name }}` a download into `.bash_profile`. Such a name is known to hold data
//! only when the author's own text fixes it (`fixed`): a data ending written after the last
//! value, in the last path segment (`/srv/dl/{{ name }}.txt`), and a directory written
//! before the first value that is no area programs load every file of (`/etc/…`, a hidden
//! directory, `/etc/cron.d/{{ n }}.txt` stays refused). A value cannot climb out of that
//! directory: a `..` in a path a value makes is refused at the press (`paths`).
//!
//! The writers are listed once (`named_at`): the files a program writes what it reads or
//! fetches into (`output_files`: `curl -o`, `wget -O`, `sort -o`, `tee`, `dd of=`, …), and
//! those it writes something else into (`find -fprint`, `git diff --output`, `git archive
//! -o`, `git format-patch -o DIR`, `git bundle create`, `ssh -E`, the destination of `cp`,
//! `mv`, `ln`, `install`); redirections (`>`, `>>`, `>|`, `&>`) are the lexer's, checked
//! here too. Two more ways a value picks a name: a copy into a directory keeps its source's
//! name (`mv {{ filepath }} /home/pi/` moves an upload named `.bash_profile`), and an
//! archive a value picks or fills names the files its extraction writes (`curl {{ url }} |
//! tar -x`, `unzip {{ file }}`): both noted for `judge`, never weighed here.

use super::{EXPANDED, base, by_convention, copy, data_file, programs};
use crate::template::reread::{Notes, Read, Rereading};

/// The data endings a name a value makes may be fixed by (`data_file`'s).
use super::ENDINGS;

/// Whether a file named `dir` VALUE `tail` (the author's text before the first value, and
/// after the last) is known to hold data whatever the values: `tail` fixes a data ending in
/// the last path segment, and `dir` is written and no area whose files are loaded as code.
pub fn fixed(dir: &[u8], tail: &[u8]) -> bool {
    if !area(dir) {
        return false;
    }
    if tail.contains(&b'/') {
        // The last segments are all the author's (`{{ d }}/notes.txt`).
        let mut name = b"x/".to_vec();
        name.extend_from_slice(tail);
        return data_file(&name);
    }
    !by_convention(tail) && ENDINGS.iter().any(|e| tail.ends_with(e))
}

/// Whether the directory text `dir` written before a value (`/srv/dl/`, `/srv/dl/song-`)
/// keeps the file out of the areas programs load every file of: it is written (a value that
/// starts the path picks any directory), not under `/etc`, `/boot`, `/usr`, `/lib`,
/// `/var/spool`, no hidden directory or name (`/home/pi/.config/`, `/home/pi/.bashrc-`), no
/// directory run by convention (`/.config/autostart/`), no `..`.
pub fn area(dir: &[u8]) -> bool {
    const SYSTEM: &[&[u8]] = &[b"/etc", b"/boot", b"/usr", b"/lib", b"/var/spool"];
    // The last segment is the start of the name the value goes on (`/home/pi/.`).
    let last = dir.rsplit(|&c| c == b'/').next().unwrap_or_default();
    let hidden = last.starts_with(b".")
        || dir
            .split(|&c| c == b'/')
            .any(|s| s.first() == Some(&b'.') && s != b"." && s != b"..");
    !dir.is_empty()
        && !dir.starts_with(b"-")
        && !hidden
        && !dir.split(|&c| c == b'/').any(|s| s == b"..")
        && !SYSTEM.iter().any(|d| dir.starts_with(d))
        && !by_convention(dir)
}

/// The name a file made of `dir`, a value and `tail` is matched by (`filed::same`), when
/// `fixed` holds: `/srv/dl/*.txt`.
pub fn glob(dir: &[u8], tail: &[u8]) -> Option<Vec<u8>> {
    fixed(dir, tail).then(|| [dir, b"*", tail].concat())
}

/// Whether the file name `pattern` (`/srv/dl/*.txt`, as `glob` makes it) may be the file
/// named `name`, by their last segments.
pub fn matches(pattern: &[u8], name: &[u8]) -> bool {
    let (p, n) = (base(pattern), base(name));
    match p.iter().position(|&c| c == b'*') {
        Some(at) => {
            let (before, after) = (&p[..at], &p[at + 1..]);
            n.len() >= before.len() + after.len() && n.starts_with(before) && n.ends_with(after)
        }
        None => p == n,
    }
}

/// How a word of a command names a file written: at which byte its name starts (after
/// `-o`, `of=`, `--output=`), and what writes it (for the refusal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Named {
    pub at: usize,
    pub from: usize,
    pub writer: &'static str,
}

/// Every word of a command (`words` from its name on, `None` where an expansion or a value
/// makes one) that names a file the command writes, whatever it writes there: `output_files`'
/// (what it reads or fetches), `tee`'s, `dd of=`, `sponge`, and the files and directories a
/// program writes something else into (`find -fprint`, git's `--output`, `ssh -E`, a copy's
/// destination).
pub fn named_at(words: &[Option<&[u8]>]) -> Vec<Named> {
    let Some(&k) = programs::chain(words).last() else {
        return Vec::new();
    };
    let program = words[k].map(base);
    let mut out: Vec<Named> = super::tee_targets(words)
        .into_iter()
        .map(|at| named(at, 0, "`tee`"))
        .collect();
    out.extend(
        super::output_at(words, program)
            .into_iter()
            .map(|(at, from)| {
                let writer = match program {
                    Some(b"curl") => "curl (`-o`, `-D`, `-c`, `--trace`, `--stderr`, …)",
                    Some(b"wget") => "wget (`-O`, `-o`, `-a`, `--save-cookies`, …)",
                    Some(b"dd") => "`dd of=`",
                    _ => "the program",
                };
                named(at, from, writer)
            }),
    );
    let option = |short: &[&[u8]], long: &[&[u8]], writer| options(words, k, short, long, writer);
    match program {
        Some(b"find") => out.extend(option(
            &[b"-fprint", b"-fprint0", b"-fprintf", b"-fls"],
            &[],
            "`find -fprint`/`-fls`",
        )),
        Some(b"ssh" | b"scp" | b"sftp") => out.extend(ssh(words, k)),
        Some(b"split" | b"tar" | b"gtar" | b"bsdtar") => out.extend(parts(words, k)),
        Some(b"csplit") => out.extend(option(&[b"-f"], &[b"--prefix"], "`csplit -f` (its prefix)")),
        Some(b"wget") => out.extend(option(
            &[b"-P"],
            &[b"--directory-prefix"],
            "wget (`-P`, its directory)",
        )),
        Some(b"curl") => out.extend(option(&[], &[b"--output-dir"], "curl (`--output-dir`)")),
        Some(b"git") => out.extend(git(words, k)),
        _ => {}
    }
    if let Some(c) = copy(words)
        && let Some(at) = c.dest_at
    {
        out.push(named(
            at,
            c.dest_from,
            "the copy (`cp`, `mv`, `ln`, `install`)",
        ));
    }
    out
}

/// The operands of `git clone` (`words` after `clone`): the url and the directory.
pub fn clone_operands(rest: &[Option<&[u8]>]) -> Vec<usize> {
    const TAKES: &[&[u8]] = &[
        b"-b",
        b"-o",
        b"-u",
        b"-c",
        b"-j",
        b"--branch",
        b"--origin",
        b"--upload-pack",
        b"--config",
        b"--jobs",
        b"--depth",
        b"--reference",
        b"--filter",
        b"--template",
        b"--separate-git-dir",
        b"--shallow-since",
        b"--shallow-exclude",
        b"--server-option",
        b"--bundle-uri",
    ];
    (0..rest.len())
        .filter(|&k| rest[k].is_none_or(|w| !w.starts_with(b"-")))
        .filter(|&k| k == 0 || !rest[k - 1].is_some_and(|p| TAKES.contains(&p)))
        .collect()
}

/// The files `split` (at word `k`) writes, `PREFIXaa`, `PREFIXab`, … (its prefix: a value
/// there needs a data ending the author cannot write after it, so it is refused), and the
/// archive `tar -c -f FILE` writes (any mode but extraction: `c`, `r`, `u`, `A`).
fn parts(words: &[Option<&[u8]>], k: usize) -> Vec<Named> {
    let mut out = Vec::new();
    if words[k].map(base) == Some(&b"split"[..]) {
        let takes = |p: &[u8]| matches!(p, b"-l" | b"-b" | b"-n" | b"-C" | b"-a" | b"-t");
        let operands: Vec<usize> = (k + 1..words.len())
            .filter(|&j| words[j].is_none_or(|w| !w.starts_with(b"-") || w == b"-"))
            .filter(|&j| !words[j - 1].is_some_and(takes))
            .collect();
        if let [_, .., last] = operands[..] {
            out.push(named(last, 0, "`split` (its prefix)"));
        }
        return out;
    }
    if extracts(words) {
        return out;
    }
    let writer = "`tar -f` (the archive it writes)";
    out.extend(options(words, k, &[b"-f"], &[b"--file"], writer));
    // A bundle ending in `f` (`-czf FILE`, `czf FILE` first) takes the next word.
    let bundles = words.iter().enumerate().skip(k + 1);
    for (j, w) in bundles.filter_map(|(j, w)| w.map(|w| (j, w))) {
        let bundle = w.len() > 2 && !w.starts_with(b"--") && w.ends_with(b"f");
        if bundle && (w.starts_with(b"-") || j == k + 1) && j + 1 < words.len() {
            out.push(named(j + 1, 0, writer));
        }
    }
    out
}

/// The files ssh (at word `k`) writes: its log (`-E FILE`) and the hosts' keys it adds
/// (`-o UserKnownHostsFile=FILE`).
fn ssh(words: &[Option<&[u8]>], k: usize) -> Vec<Named> {
    let mut out = options(words, k, &[b"-E"], &[], "`ssh -E` (its log)");
    // `-o UserKnownHostsFile=FILE`: ssh adds the host's key to it.
    const KNOWN: &[u8] = b"UserKnownHostsFile=";
    for j in k + 1..words.len() {
        let Some(w) = words[j] else { continue };
        let at = match w.strip_prefix(b"-o") {
            Some(b"") => j + 1,
            Some(_) => j,
            None => continue,
        };
        let from = if at == j { 2 } else { 0 };
        if let Some(Some(o)) = words.get(at)
            && o.len() >= from + KNOWN.len()
            && o[from..from + KNOWN.len()].eq_ignore_ascii_case(KNOWN)
        {
            out.push(named(at, from + KNOWN.len(), "ssh (`UserKnownHostsFile=`)"));
        }
    }
    out
}

/// The files and directories git (at word `k`) writes: `--output`, `archive -o`,
/// `format-patch -o DIR`, `bundle create FILE`, `clone URL DIR`, `submodule add URL PATH`.
fn git(words: &[Option<&[u8]>], k: usize) -> Vec<Named> {
    let mut out = options(
        words,
        k,
        &[b"-o"],
        &[b"--output", b"--output-directory"],
        "git (`--output`, `archive -o`, `format-patch -o`)",
    );
    // `git submodule add URL PATH`: the directory it fills.
    if let Some(c) = words[k..]
        .windows(2)
        .position(|w| w[0] == Some(&b"submodule"[..]) && w[1] == Some(&b"add"[..]))
    {
        let from = k + c + 2;
        let operands = clone_operands(&words[from..]);
        if let Some(&dir) = operands.get(1) {
            out.push(named(from + dir, 0, "`git submodule add` (its directory)"));
        }
    }
    // `git clone URL DIR`: the directory it fills.
    if let Some(c) = words[k..].iter().position(|w| *w == Some(&b"clone"[..])) {
        let from = k + c + 1;
        let operands: Vec<usize> = clone_operands(&words[from..])
            .into_iter()
            .map(|j| from + j)
            .collect();
        if let Some(&dir) = operands.get(1) {
            out.push(named(dir, 0, "`git clone` (its directory)"));
        }
    }
    if let Some(c) = words[k..]
        .windows(2)
        .position(|w| w[0] == Some(&b"bundle"[..]) && w[1] == Some(&b"create"[..]))
    {
        let at = k + c + 2;
        if let Some(at) = (at..words.len()).find(|&j| words[j].is_none_or(|w| !w.starts_with(b"-")))
        {
            out.push(named(at, 0, "`git bundle create`"));
        }
    }
    out
}

fn named(at: usize, from: usize, writer: &'static str) -> Named {
    Named { at, from, writer }
}

/// The words holding the value of the options `short` (`-E FILE`, `-EFILE` for a
/// two-letter one) or `long` (`--output FILE`, `--output=FILE`) after word `k`.
fn options(
    words: &[Option<&[u8]>],
    k: usize,
    short: &[&[u8]],
    long: &[&[u8]],
    writer: &'static str,
) -> Vec<Named> {
    let mut out = Vec::new();
    for j in k + 1..words.len() {
        let Some(w) = words[j] else { continue };
        if short.contains(&w) || long.contains(&w) {
            if j + 1 < words.len() {
                out.push(named(j + 1, 0, writer));
            }
            continue;
        }
        for l in long {
            if w.starts_with(l) && w.get(l.len()) == Some(&b'=') {
                out.push(named(j, l.len() + 1, writer));
            }
        }
        for s in short.iter().filter(|s| s.len() == 2) {
            if w.len() > 2 && w.starts_with(s) {
                out.push(named(j, 2, writer));
            }
        }
    }
    out
}

/// Notes the file a command at `start` writes (by `writer`), named `dir` VALUE `tail`, as a
/// place a value picks the file at when the author's text does not fix it (`fixed`): `reads`
/// are what the name's word expands.
pub fn note_named(
    notes: &mut Notes,
    start: usize,
    (dir, tail): (&[u8], &[u8]),
    reads: Vec<Read>,
    writer: &str,
) {
    if reads.is_empty() {
        return;
    }
    // `/home/pi/{{ folder }}/notes.txt`: a value that starts a directory of the path may
    // make it hidden (`.bashrc.d`, whose files some systems' bash sources), `/` or not.
    let starts_directory = (dir.is_empty() || dir.ends_with(b"/")) && tail.contains(&b'/');
    if fixed(dir, tail) && starts_directory {
        let place = format!(
            "a directory in the name of the file {writer} writes, `{}…{}`, which a value \
             starts: `.bashrc.d` would be hidden, and some systems' bash sources every file \
             of `~/.bashrc.d`",
            String::from_utf8_lossy(dir),
            String::from_utf8_lossy(tail)
        );
        notes.reread(start, place, Rereading::Written, reads);
        return;
    }
    if fixed(dir, tail) {
        let place = format!(
            "a part of the name of the file {writer} writes, `{}…{}`, which the command fixes \
             as data",
            String::from_utf8_lossy(dir),
            String::from_utf8_lossy(tail)
        );
        notes.reread(start, place, Rereading::Below, reads);
        return;
    }
    let place = format!(
        "the name of the file {writer} writes, `{}…{}`, which a value makes: the value may \
         pick `/home/pi/.bash_profile`, a table in `/etc/cron.d` or the config actiond \
         reloads, whatever is written there",
        String::from_utf8_lossy(dir),
        String::from_utf8_lossy(tail)
    );
    notes.reread(start, place, Rereading::Written, reads);
}

/// The place of a copy into a directory that keeps the name of a source a value picks.
pub const COPIED_NAME: &str = "the source of a copy into a directory (`cp`, `mv`, `ln`, \
                               `install`, `rsync` with `DIR/` or `-t DIR`, or a destination not \
                               named as a data file), which keeps the source's name (its \
                               last segment): a value that makes it (an uploaded file's name, \
                               an album's) picks the name of the file made there \
                               (`.bash_profile`, `job` in `/etc/cron.d`); `rsync SRC/ DIR/` \
                               copies what SRC holds, keeping no name of it";

/// Whether the copy (`words` as `Command::heads` shows them) of a source whose text ends
/// with `tail` copies what the directory holds rather than the directory, into a directory
/// programs load nothing from: `rsync` with a source ending in `/` (`rsync -a
/// /srv/photos/{{ album }}/ /backup/photos/{{ album }}/`), which keeps no name the value
/// makes (fe30v's confusing message). Into a home directory, `/etc`, a hidden one or one
/// from a value, the names the directory holds land there: not this rule's to allow.
pub fn contents_only(words: &[Option<&[u8]>], tail: &[u8]) -> bool {
    let rsync = programs::chain(words)
        .last()
        .and_then(|&k| words[k])
        .map(base);
    if rsync != Some(&b"rsync"[..]) || !tail.ends_with(b"/") {
        return false;
    }
    let Some(dest) = super::copies::remote_copy(words).and_then(|c| c.dest) else {
        return false;
    };
    let dir = dest.strip_suffix(EXPANDED).unwrap_or(dest);
    let segments = dir.split(|&c| c == b'/').filter(|s| !s.is_empty()).count();
    let home = (dir.starts_with(b"/home/") && segments <= 2) || dir.starts_with(b"/root");
    dir.starts_with(b"/") && area(dir) && !home && !dir.contains(&b':')
}

/// The sources of `ln -s` (in `words`, as `Command::heads` shows them): the files its links
/// lead to, where every later write through a link lands (`ln -sfn /home/pi/{{ name }}
/// notes.txt`, then `>> notes.txt`: fe30u F10), each a file written under a name a value
/// may make.
pub fn link_targets(words: &[Option<&[u8]>]) -> Vec<usize> {
    let Some(&k) = programs::chain(words).last() else {
        return Vec::new();
    };
    let symbolic = words[k + 1..].iter().flatten().any(|w| {
        *w == b"--symbolic" || (w.len() > 1 && w[0] == b'-' && w[1] != b'-' && w.contains(&b's'))
    });
    if words[k].map(base) != Some(&b"ln"[..]) || !symbolic {
        return Vec::new();
    }
    copy(words).map(|c| c.sources_at).unwrap_or_default()
}

/// The place of the url `git clone`, `pull`, `fetch` or `submodule add` fetches a tree from.
pub const CLONED: &str = crate::template::own_git::FETCHED;

/// The place of a curl output name with `#N` in it, which a url a value makes or fills fills.
pub const CURL_GLOB: &str = "the name of the file curl writes, whose `#1` (`#2`, …) curl \
                             replaces with the text of the url's `{…}`/`[…]` glob: a url a value \
                             makes or fills picks the file (`{../../etc/cron.d/job}`); write the \
                             name out with no `#` and a digit, or give curl `-g` (`--globoff`)";

/// The words of a curl (in `words`, as `Command::heads` shows them) naming a file it writes
/// (`-o`, `--output`) that hold `#` and a digit, which curl replaces with the text of the
/// url's glob (fe30v F3) unless it is told not to glob (`-g`, `--globoff`, alone or in a
/// bundle of options that take no value).
pub fn curl_globbed(words: &[Option<&[u8]>]) -> Vec<usize> {
    let Some(&k) = programs::chain(words).last() else {
        return Vec::new();
    };
    if words[k].map(base) != Some(&b"curl"[..]) {
        return Vec::new();
    }
    let globoff = words[k + 1..].iter().flatten().any(|w| {
        *w == b"--globoff"
            || (w.len() > 1
                && w[0] == b'-'
                && w[1] != b'-'
                && w.contains(&b'g')
                && w[1..].iter().all(|c| b"sSfLgkvIiqN#".contains(c)))
    });
    if globoff {
        return Vec::new();
    }
    let hash = |w: &[u8]| w.windows(2).any(|p| p[0] == b'#' && p[1].is_ascii_digit());
    super::output_at(words, Some(b"curl"))
        .into_iter()
        .filter(|&(at, from)| words[at].is_some_and(|w| hash(&w[from.min(w.len())..])))
        .map(|(at, _)| at)
        .collect()
}

/// The options of `git pull` and `git fetch` that take the next word as their value.
const FETCH_TAKES: &[&[u8]] = &[
    b"-j",
    b"-o",
    b"-s",
    b"-X",
    b"--jobs",
    b"--depth",
    b"--deepen",
    b"--shallow-since",
    b"--shallow-exclude",
    b"--upload-pack",
    b"--server-option",
    b"--negotiation-tip",
    b"--refmap",
    b"--filter",
    b"--strategy",
    b"--strategy-option",
    b"--recurse-submodules-default",
];

/// The index of git's subcommand in `words` (git at `k`), past its own options.
fn git_subcommand(words: &[Option<&[u8]>], k: usize) -> Option<usize> {
    let mut j = k + 1;
    while let Some(&Some(w)) = words.get(j) {
        if !w.starts_with(b"-") {
            return Some(j);
        }
        let takes = matches!(
            w,
            b"-C" | b"-c" | b"--git-dir" | b"--work-tree" | b"--namespace" | b"--config-env"
        );
        j += if takes { 2 } else { 1 };
    }
    // A subcommand from a value is `known`'s (it may be any).
    None
}

/// The words of the url (or remote) a `git clone`, `git submodule add`, `git pull` or `git
/// fetch` (in `words`, as `Command::heads` shows them) fetches from, if the command is one:
/// the first operand (every operand of `fetch --multiple`), which picks the tree git writes
/// and, for `pull`, checks out (fe30v F7).
pub fn clone_url(words: &[Option<&[u8]>]) -> Vec<usize> {
    let Some(&k) = programs::chain(words).last() else {
        return Vec::new();
    };
    match words[k].map(base) {
        Some(b"wget") | Some(b"rsync") => return tree_sources(words, k),
        Some(b"git") => {}
        _ => return Vec::new(),
    }
    let Some(sub) = git_subcommand(words, k) else {
        return Vec::new();
    };
    let from = match words[sub] {
        Some(b"clone") => sub + 1,
        Some(b"submodule") if words.get(sub + 1) == Some(&Some(&b"add"[..])) => sub + 2,
        Some(b"pull" | b"fetch") => {
            let rest = &words[sub + 1..];
            let operands: Vec<usize> = (0..rest.len())
                .take_while(|&j| rest[j] != Some(&b"--"[..]))
                .filter(|&j| rest[j].is_none_or(|w| !w.starts_with(b"-")))
                .filter(|&j| j == 0 || !rest[j - 1].is_some_and(|p| FETCH_TAKES.contains(&p)))
                .chain(
                    // After `--` every word is an operand.
                    rest.iter()
                        .position(|w| *w == Some(&b"--"[..]))
                        .map(|d| d + 1..rest.len())
                        .into_iter()
                        .flatten(),
                )
                .collect();
            let multiple = rest.iter().any(|w| *w == Some(&b"--multiple"[..]));
            let take = if multiple { operands.len() } else { 1 };
            return operands.iter().take(take).map(|&j| sub + 1 + j).collect();
        }
        _ => return Vec::new(),
    };
    clone_operands(&words[from..])
        .first()
        .map(|&j| from + j)
        .into_iter()
        .collect()
}

/// The sources of a tree fetched from another host (fe30x F13, F14): the urls of a
/// recursive `wget` (`-r`, `-m`, `--recursive`, `--mirror`, in a cluster too), and the remote
/// sources of `rsync` (`HOST:PATH`, `HOST::MODULE`, `rsync://…`; every operand but the last).
fn tree_sources(words: &[Option<&[u8]>], k: usize) -> Vec<usize> {
    let rest = k + 1..words.len();
    let option = |w: &[u8]| w.starts_with(b"-") && w.len() > 1;
    let operands: Vec<usize> = rest
        .clone()
        .filter(|&j| words[j].is_none_or(|w| !option(w)))
        .collect();
    if words[k].map(base) == Some(&b"wget"[..]) {
        let recursive = rest.clone().filter_map(|j| words[j]).any(|w| {
            w == b"--recursive"
                || w == b"--mirror"
                || (w.starts_with(b"-")
                    && !w.starts_with(b"--")
                    && (w.contains(&b'r') || w.contains(&b'm')))
        });
        return if recursive { operands } else { Vec::new() };
    }
    // A word a value makes from its start (`{{ host }}:/srv/site/`, shown as the text before
    // the value and `EXPANDED`) may name a host too, unless the author's text already holds
    // a `/` (`/srv/photos/{{ v }}/`).
    let remote = |w: &[u8]| {
        w.starts_with(b"rsync://")
            || w.iter()
                .position(|&c| c == b':')
                .is_some_and(|c| !w[..c].contains(&b'/'))
            || (w.ends_with(EXPANDED) && !w.contains(&b'/'))
    };
    // The words an option takes are no operands (`--exclude {{ v }}`, `-e CMD`).
    const TAKES: &[&[u8]] = &[b"-e", b"-f", b"-B", b"-T", b"-M"];
    let taken = |j: usize| {
        words[j - 1].is_some_and(|p| {
            TAKES.contains(&p) || (p.starts_with(b"--") && !p.contains(&b'=') && p.len() > 2)
        })
    };
    let operands: Vec<usize> = operands.into_iter().filter(|&j| !taken(j)).collect();
    let Some((_, sources)) = operands.split_last() else {
        return Vec::new();
    };
    sources
        .iter()
        .copied()
        .filter(|&j| words[j].is_some_and(remote))
        .collect()
}

/// What writes the file a decompressor derives from an input a value picks (fe30v F8).
pub const DECOMPRESSOR: &str = "a decompressor (`gunzip`, `unxz`, `gzip -d`, …: next to its \
                                input, under the name it derives by dropping the ending, so an \
                                upload `job.sh.gz` makes `job.sh`, `.bashrc.gz` `.bashrc`)";

/// The operands a value makes of a decompressor (at the end of the chain, `words` as
/// `Command::heads` shows them) that writes each next to it, under the name it derives
/// (`gunzip {{ filepath }}`, fe30v F8): not with `-c`/`--stdout`, `-t`, `-l`.
pub fn decompressed_at(words: &[Option<&[u8]>]) -> Vec<usize> {
    let Some(&k) = programs::chain(words).last() else {
        return Vec::new();
    };
    let rest = &words[k + 1..];
    let options = || rest.iter().flatten().filter(|w| w.starts_with(b"-"));
    let short = |c: u8| options().any(|w| !w.starts_with(b"--") && w.contains(&c));
    let long = |l: &[u8]| options().any(|w| *w == l);
    let decompresses = match words[k].map(base) {
        Some(b"gunzip" | b"bunzip2" | b"unxz" | b"unzstd" | b"unlzma" | b"uncompress") => true,
        Some(b"gzip" | b"bzip2" | b"xz" | b"zstd" | b"lzma") => {
            short(b'd') || long(b"--decompress")
        }
        _ => false,
    };
    let elsewhere = short(b'c') || short(b't') || short(b'l') || short(b'o');
    let elsewhere = elsewhere
        || [&b"--stdout"[..], b"--test", b"--list"]
            .iter()
            .any(|l| long(l));
    if !decompresses || elsewhere {
        return Vec::new();
    }
    (k + 1..words.len())
        .filter(|&i| words[i].is_some_and(|w| !w.starts_with(b"-") && w.ends_with(EXPANDED)))
        .collect()
}

/// `tail` without the compression ending a decompressor drops (`.sh.gz` is `.sh`).
pub fn without_compression(tail: &[u8]) -> Vec<u8> {
    const ENDINGS: &[&[u8]] = &[b".gz", b".bz2", b".xz", b".zst", b".lzma", b".Z", b".tgz"];
    match ENDINGS.iter().find(|e| tail.ends_with(e)) {
        Some(e) if *e == b".tgz" => [&tail[..tail.len() - e.len()], b".tar"].concat(),
        Some(e) => tail[..tail.len() - e.len()].to_vec(),
        None => tail.to_vec(),
    }
}

/// The place of an archive a value picks or fills, which an extraction unpacks.
pub const UNPACKED: &str = "the archive of an extraction (`tar -x`, `bsdtar -x`, `unzip`, \
                            `cpio -i`, `7z x`), which a value picks or fills: the archive \
                            names the files written (`.bashrc`, `.ssh/authorized_keys`, a \
                            script a service runs) and holds what they hold";

/// Whether the command (`words` from its name on) extracts an archive: `tar`, `bsdtar`,
/// `busybox tar` with `x` in its first word of options or `--extract`/`--get`, `unzip`,
/// `cpio` with `-i`/`--extract`, `7z`/`7za`/`7zr` `x` or `e`.
pub fn extracts(words: &[Option<&[u8]>]) -> bool {
    let Some(&k) = programs::chain(words).last() else {
        return false;
    };
    let mut k = k;
    if words[k].map(base) == Some(&b"busybox"[..]) {
        k += 1;
    }
    let rest = words.get(k + 1..).unwrap_or_default();
    let first = rest.iter().flatten().next().copied().unwrap_or_default();
    let has = |f: &dyn Fn(&[u8]) -> bool| rest.iter().flatten().any(|w| f(w));
    let bundle = |w: &[u8], c: u8| w.len() > 1 && w[0] == b'-' && w[1] != b'-' && w.contains(&c);
    match words.get(k).copied().flatten().map(base) {
        // A long option in any prefix GNU's parser takes (`--ext`, fe30w F3).
        Some(b"tar" | b"gtar" | b"bsdtar") => {
            let long = |w: &[u8], o: &[u8]| {
                w.len() > 4 && o.starts_with(w.split(|&c| c == b'=').next().unwrap_or(w))
            };
            (!first.starts_with(b"-") && first.contains(&b'x'))
                || has(&|w| bundle(w, b'x') || long(w, b"--extract") || long(w, b"--get"))
        }
        // `unzip -l`, `-t`, `-v`, `-Z` list or test it (fe30w FR5).
        Some(b"unzip") => !has(&|w| matches!(w, b"-l" | b"-t" | b"-v" | b"-Z" | b"-lv" | b"-tq")),
        Some(b"funzip") => true,
        Some(b"cpio") => has(&|w| bundle(w, b'i') || w == b"--extract"),
        // sqlite3's archive mode (`-A -x`, `-Ax`, `.archive -x`, `.ar -x`; fe30x F4).
        Some(b"sqlite3") => {
            let archive =
                has(&|w| w.starts_with(b"-A") || w == b"--archive" || w.starts_with(b".ar"));
            let extract =
                has(&|w| bundle(w, b'x') || w == b"--extract" || w.windows(3).any(|p| p == b" -x"));
            archive && extract
        }
        Some(b"7z" | b"7za" | b"7zr" | b"7zz" | b"7zzs") => matches!(first, b"x" | b"e"),
        // `python3 -m zipfile -e ARCHIVE DIR`, `-m tarfile --extract` (fe30u F1).
        Some(p) if super::known::interpreter(p) => {
            let module = rest
                .windows(2)
                .any(|w| w[0] == Some(&b"-m"[..]) && matches!(w[1], Some(b"zipfile" | b"tarfile")));
            module && has(&|w| w == b"-e" || w == b"--extract")
        }
        _ => false,
    }
}

/// The copies (`cp`, `mv`, `ln`, `install`, in `words` as `Command::heads` shows them,
/// `globs` each word's `glob`) into what may be a directory, where the file made keeps the
/// name of a source an expansion or a value makes: each such source's word. A destination
/// named as a data file (written out, or `fixed`) is a file; `DIR/`, `-t DIR` and any other
/// name may be a directory.
pub fn copied(words: &[Option<&[u8]>], globs: &[Option<Vec<u8>>]) -> Vec<usize> {
    // `rsync -a {{ filepath }} /home/pi/` keeps the upload's name as `cp` does (fe30u F5).
    let Some(c) = copy(words).or_else(|| super::copies::remote_copy(words)) else {
        return Vec::new();
    };
    let Some(at) = c.dest_at else {
        return Vec::new();
    };
    let dest: Option<Vec<u8>> = match c.dest {
        Some(d) if d.ends_with(EXPANDED) => globs[at]
            .as_ref()
            .map(|g| g[c.dest_from.min(g.len())..].to_vec()),
        d => d.map(<[u8]>::to_vec),
    };
    let file = dest
        .as_deref()
        .is_some_and(|d| !d.ends_with(b"/") && (data_file(d) || d.contains(&b'*')));
    if file && !c.target {
        return Vec::new();
    }
    // A source whose name the author's text fixes as data (`/srv/photos/{{ v }}.jpg`) keeps
    // a data name in a directory that holds data (fe30u's first low finding).
    let kept = |k: usize| {
        let made = globs[k]
            .as_deref()
            .zip(dest.as_deref())
            .map(|(g, d)| super::copies::joined(d, g));
        made.is_some_and(|m| data_file(&m))
    };
    c.sources_at
        .iter()
        .filter(|&&k| words[k].is_none_or(|w| w.ends_with(EXPANDED)))
        .filter(|&&k| !kept(k))
        .copied()
        .collect()
}

#[cfg(test)]
mod tests;
