//! The programs the model knows never run one of their arguments as a program, and the
//! words of a command that are arguments of a program it does not know (`chrt -i 0 JOB`,
//! `runuser -u U -- JOB`, `systemd-run --wait JOB`, `/usr/local/bin/wrapper JOB`): any such
//! program may be a wrapper that runs a value there, and a list of wrappers is never
//! complete, so the model lists the other side. Every entry of `NOT_WRAPPERS` is a promise
//! that the program never runs an operand, or an option's value, as a program (an option
//! whose name says it holds a command, `wget --use-askpass`, is `launchers`' and read as a
//! script anyway), audited in `audit`, whose table lists the options and operands each reads
//! a value as more than data (a file of its settings, a file it sends, a unit it acts on). A program named by a path into the system's program directories counts
//! by its last segment; one named by a path anywhere else (`/config/run.sh`) is the author's
//! own script, which the model cannot read and takes as written (`SYSTEM_DIRS`). Also the words that are an interpreter's program text (`python3 -c`,
//! `perl -e`, `node -e`, `php -r`): a value there is code. Pure and syntactic like
//! `programs`: `judge` weighs the values.

use super::programs::{self, SHELLS};

/// The place of an argument of a program the model does not know.
pub const OPERAND: &str = "an argument of a program actiond does not know";

/// Programs that never run an operand as a program: shell builtins the other rules read
/// (`eval`, `trap`, `read`, … are refused or followed by `commands`), and common tools that
/// appliance configs hand values to. Left out on purpose, because they can: `xargs`,
/// `watch`, `flock`, `timeout`, `nice`, `sudo` (wrappers, followed by `programs`), `awk`
/// (`system()`), `nc` (`-e PROG`), `yt-dlp` (`--downloader PATH`, `--ffmpeg-location PATH`),
/// `mysql` (`-e 'system CMD'`), `apt`/`dpkg` (maintainer scripts), `convert` (delegates),
/// `mount` (a `fuse` source `prog#arg` runs prog, `-t` picks a helper `mount.TYPE`, `-o
/// exec,suid,helper=`, a mount over any directory shadows programs), `ffmpeg` and `ffprobe`
/// (inputs, playlists, filters and outputs that read any file and send it to any URL: too
/// many to list). What else each entry reads a value as (`curl -K`, `systemctl kill`, `tar
/// -T`, …) is the audit's table, `audit`. `sed`, `sqlite3`, `git` and `find` are known by
/// rule in `known` (their own commands are `own`'s).
pub(super) const NOT_WRAPPERS: &[&[u8]] = &[
    // Builtins that take data.
    b"echo",
    b"printf",
    b"cd",
    b"pushd",
    b"popd",
    b"test",
    b"[",
    b":",
    b"true",
    b"false",
    b"exit",
    b"return",
    b"shift",
    b"set",
    b"unset",
    b"export",
    b"readonly",
    b"local",
    b"declare",
    b"typeset",
    b"read",
    b"wait",
    b"kill",
    b"umask",
    b"getopts",
    b"let",
    // Files and text.
    b"cat",
    b"ls",
    b"rm",
    b"cp",
    b"mv",
    b"mkdir",
    b"rmdir",
    b"touch",
    b"ln",
    b"chmod",
    b"chown",
    b"chgrp",
    b"stat",
    b"du",
    b"df",
    b"head",
    b"tail",
    b"wc",
    b"sort",
    b"uniq",
    b"cut",
    b"tr",
    b"tee",
    b"basename",
    b"dirname",
    b"realpath",
    b"readlink",
    b"date",
    b"sleep",
    b"mktemp",
    b"md5sum",
    b"sha1sum",
    b"sha256sum",
    b"base64",
    b"truncate",
    b"grep",
    b"egrep",
    b"fgrep",
    b"diff",
    b"cmp",
    b"file",
    b"jq",
    b"gzip",
    b"gunzip",
    b"zcat",
    b"logger",
    // The system.
    b"systemctl",
    b"journalctl",
    b"reboot",
    b"poweroff",
    b"shutdown",
    b"halt",
    b"pkill",
    b"pgrep",
    b"killall",
    b"pidof",
    b"hostname",
    b"uname",
    b"uptime",
    b"free",
    b"id",
    b"whoami",
    b"sync",
    b"umount",
    b"vcgencmd",
    b"amixer",
    b"aplay",
    // The network.
    b"curl",
    b"wget",
    b"ping",
    b"ping6",
    b"fping",
    b"arping",
    b"traceroute",
    b"dig",
    b"nslookup",
    b"host",
    b"whois",
    b"wakeonlan",
    b"etherwake",
    b"ether-wake",
    b"mosquitto_pub",
    b"mosquitto_sub",
    b"rsync",
    // Its command is read as a script (`programs::scripts`); its host runs nothing.
    b"ssh",
    b"scp",
    b"tar",
    // Media.
    b"mpc",
];

/// `docker` and `podman` run a program for these subcommands (`docker run IMAGE PROG`,
/// `docker exec C PROG`, `docker compose run SVC PROG`); with any other they do not.
const CONTAINER_RUNS: &[&[u8]] = &[
    b"run",
    b"exec",
    b"create",
    b"compose",
    b"container",
    // `podman unshare CMD`, `docker debug C CMD`, `docker service create IMAGE CMD`.
    b"unshare",
    b"debug",
    b"service",
    // What runs the steps of a Dockerfile, a plugin, a stack or a pod the value may name:
    // `docker build URL`, `buildx`, `plugin install`, `stack deploy`, `podman kube play`.
    b"build",
    b"buildx",
    b"builder",
    b"plugin",
    b"stack",
    b"kube",
    b"play",
];

/// The subcommands of `docker` and `podman` the model knows (fe30v F12): each runs no program
/// of its own choosing (what a verb acts on, an image, a container, a tag, is `audit`'s
/// `DOCKER_TARGET`). Any other may be a CLI plugin (`docker-NAME`, a program of its own) or
/// run one (`run`, `exec`, `build`, `kube play`, `healthcheck run`, `context` picks the
/// daemon): the command is then a program the model does not know.
const CONTAINER_KNOWN: &[&[u8]] = &[
    b"ps", b"images", b"logs", b"inspect", b"top", b"port", b"stats", b"diff", b"history",
    b"version", b"info", b"events", b"wait", b"search", b"start", b"stop", b"restart", b"kill",
    b"pause", b"unpause", b"rm", b"rmi", b"pull", b"push", b"tag", b"cp", b"load", b"import",
    b"save", b"export", b"commit", b"update", b"rename", b"login", b"logout", b"image", b"volume",
    b"network", b"system",
];

/// The verbs of the management subcommands `image`, `volume`, `network` and `system` the
/// model knows (`docker image build` runs a Dockerfile's steps, `volume create -d` a plugin).
const CONTAINER_KNOWN_VERBS: &[&[u8]] = &[
    b"ls",
    b"list",
    b"inspect",
    b"rm",
    b"remove",
    b"prune",
    b"connect",
    b"disconnect",
    b"df",
    b"info",
    b"events",
    b"tag",
    b"pull",
    b"push",
    b"load",
    b"import",
    b"save",
    b"history",
];

/// The directories packages install programs into. A program named by a path there is a
/// tool like any other, known by its name (`/usr/bin/chrt` is `chrt`); named by a path
/// anywhere else (`/config/backup.sh`, `/opt/scripts/x`, `./run.sh`, `/usr/local/bin/x`,
/// which is the local administrator's) it is the author's own script, which receives the value as one argument and does with it what its author wrote:
/// actiond can no more read it than it can the scripts of a `sh FILE`, and refusing it would
/// refuse every config that hands a value to its own scripts (a hundred actions of the
/// OliveTin corpus).
const SYSTEM_DIRS: &[&[u8]] = &[
    b"/bin/",
    b"/sbin/",
    b"/usr/bin/",
    b"/usr/sbin/",
    b"/usr/libexec/",
    b"/usr/lib/",
    b"/lib/",
    b"/usr/games/",
    b"/snap/bin/",
];

/// Whether `w` is a path into `SYSTEM_DIRS`.
fn system(w: &[u8]) -> bool {
    SYSTEM_DIRS.iter().any(|d| w.starts_with(d))
}

/// Whether `w` names a program by a path outside `SYSTEM_DIRS`: the author's own.
fn own(w: &[u8]) -> bool {
    w.contains(&b'/') && !system(w)
}

/// Whether `name` is an interpreter that runs a script file named by its first word
/// (`python3 tool.py`, `perl x.pl`): that file, like a shell's, is the program.
pub fn interpreter(name: &[u8]) -> bool {
    let stem = name
        .iter()
        .rposition(|c| !(c.is_ascii_digit() || *c == b'.'))
        .map_or(name, |k| &name[..=k]);
    [
        &b"python"[..],
        b"perl",
        b"ruby",
        b"node",
        b"php",
        b"lua",
        b"tclsh",
        b"Rscript",
    ]
    .contains(&stem)
}

/// Whether the model reads the program `name` by its name wherever it lives: the programs
/// `known` has rules of its own for (an interpreter's script, a container tool's
/// subcommand, …), not the plain list.
fn by_name(name: &[u8]) -> bool {
    interpreter(name)
        || matches!(
            name,
            b"docker" | b"podman" | b"parallel" | b"find" | b"git" | b"ip"
        )
}

/// Whether `docker`/`podman` with the words `rest` after it runs no program: a subcommand of
/// `CONTAINER_KNOWN` (and a management command's verb of `CONTAINER_KNOWN_VERBS`) and no word
/// of `CONTAINER_RUNS`.
fn container_known(rest: &[Option<&[u8]>]) -> bool {
    // Docker's own options that take a word (`--host h`, `-c ctx`): the daemon it talks to,
    // written out; from a value the command is one the model does not know. The first word
    // after them that is no option is the subcommand; no word anywhere may be one that runs
    // a program (`docker --context nas exec …`).
    let mut from = 0;
    while let Some(&Some(w)) = rest.get(from) {
        if !w.starts_with(b"-") {
            break;
        }
        let takes = matches!(
            w,
            b"-H" | b"--host" | b"-c" | b"--context" | b"-l" | b"--log-level" | b"--config"
        );
        if takes && rest.get(from + 1).is_some_and(Option::is_none) {
            return false;
        }
        from += if takes { 2 } else { 1 };
    }
    let plain = |w: &&Option<&[u8]>| w.is_none_or(|w| !w.starts_with(b"-"));
    let mut subs = rest.iter().skip(from).filter(plain);
    let sub = subs.next().copied().flatten();
    let managed = matches!(sub, Some(b"image" | b"volume" | b"network" | b"system"));
    let verb_known = !managed
        || subs
            .next()
            .copied()
            .flatten()
            .is_some_and(|v| CONTAINER_KNOWN_VERBS.contains(&v));
    sub.is_some_and(|s| CONTAINER_KNOWN.contains(&s))
        && verb_known
        && !rest
            .iter()
            .any(|w| w.is_some_and(|w| CONTAINER_RUNS.contains(&w)))
}

/// The last path segment: `/usr/bin/env` is `env`.
fn base(w: &[u8]) -> &[u8] {
    w.rsplit(|&c| c == b'/').next().unwrap_or(w)
}

/// Whether the program at `i` of `words` is one the model knows never runs an argument as
/// a program: the author's own (named by a path outside `SYSTEM_DIRS`), or on the list and
/// named by its name alone or a path in `SYSTEM_DIRS`, `docker`/`podman` with a subcommand
/// that runs none, `ip` without `exec` (`ip netns exec NS PROG`).
fn known(words: &[Option<&[u8]>], i: usize) -> bool {
    let Some(w) = words[i] else { return false };
    // `find … -exec {} ARGS ;` runs each file its tests found: a path the author's tests pick
    // (a value among them is `own`'s `FOUND_PROGRAM`), so one of the author's own.
    if w == b"{}" {
        return true;
    }
    // A script an option holds starts with the option (`--to-command=echo …`).
    let w = match w.iter().rposition(|&c| c == b'=') {
        Some(k) if w.starts_with(b"-") => &w[k + 1..],
        _ => w,
    };
    if w.contains(&b'/') {
        // The author's own program, unless its name is one the model reads by its name
        // wherever it lives: an interpreter in a venv (`/opt/app/venv/bin/python -m
        // {{ module }}`), `docker` installed under /usr/local/bin.
        if own(w) && !by_name(base(w)) {
            return true;
        }
        // Known by its name only where packages put programs people run (`/usr/bin/curl`),
        // not deeper (`/usr/lib/x/echo` is some package's own).
        let direct = SYSTEM_DIRS
            .iter()
            .any(|d| w.strip_prefix(*d).is_some_and(|n| !n.contains(&b'/')));
        if !direct && !own(w) {
            return false;
        }
    }
    let name = base(w);
    let rest = &words[i + 1..];
    if interpreter(name) {
        // `python3 tool.py ARGS`: the author's script, as a shell's script file is; so is
        // program text written out in the command (`python3 -c 'import sys;
        // print(sys.argv[1])' {{ v }}`, the form `PROGRAM_TEXT` suggests). A value in the
        // text itself is `program_texts`'.
        let text = rest.first().copied().flatten().is_some_and(|o| {
            code_options(name).contains(&o) && rest.get(1).copied().flatten().is_some()
        });
        return text
            || rest
                .first()
                .copied()
                .flatten()
                .is_some_and(|f| !f.starts_with(b"-") && (own(f) || !f.contains(&b'/')));
    }
    match name {
        b"docker" | b"podman" => container_known(rest),
        // `ip netns exec NS PROG`, `ip vrf exec NAME PROG`: the object in plain text and no
        // `exec` among the plain words (a value in the object's words is data).
        // `parallel rm -- {} ::: ARGS` runs `rm` (its words are read as a script by
        // `programs`, the arguments after `:::` quoted into it).
        b"parallel" => programs::parallel_command(words, i + 1)
            .is_some_and(|c| c > i && words[c].is_some() && known(words, c)),
        // `sed`'s script and `sqlite3`'s commands are read by `own` (`e`, `.system` are
        // refused there with a value in them); the other words are files and databases.
        b"sed" | b"sqlite3" => true,
        // `find` runs a program only where `-exec`/`-execdir`/`-ok`/`-okdir` names one: known
        // when each names a literal word (a found path as the command, `-exec {}`, is `own`'s);
        // the other words are starting points and tests.
        b"find" => rest.windows(2).all(|p| {
            let runs =
                p[0].is_some_and(|w| [&b"-exec"[..], b"-execdir", b"-ok", b"-okdir"].contains(&w));
            !runs || p[1].is_some()
        }),
        // `git NAME` runs `git-NAME` from PATH: known when its subcommand is written out;
        // the commands git's options, settings and subcommands run are `own_git`'s.
        b"git" => {
            let mut k = 0;
            while let Some(Some(w)) = rest.get(k) {
                if !w.starts_with(b"-") {
                    break;
                }
                let takes = [
                    &b"-C"[..],
                    b"-c",
                    b"--git-dir",
                    b"--work-tree",
                    b"--namespace",
                ];
                k += if takes.contains(w) { 2 } else { 1 };
            }
            rest.get(k).is_some_and(Option::is_some)
        }
        b"ip" => {
            let object = rest.iter().find(|w| w.is_none_or(|w| !w.starts_with(b"-")));
            object.is_some_and(|o| o.is_some_and(|o| !o.starts_with(b"net") && o != b"vrf"))
                && !rest.iter().any(|w| *w == Some(&b"exec"[..]))
        }
        _ => NOT_WRAPPERS.contains(&name),
    }
}

/// The words that are arguments of the program a command runs (behind the wrappers
/// `programs` knows) when the model does not know that program: its name (as written) and
/// the indexes. A shell with a script file counts as that file (`sh run.sh ARGS`); a shell
/// that runs `-c` or its standard input has its script read instead, and a program whose
/// name comes from a value is `programs`' to refuse.
/// `script`: the index of a script `launchers` found in the words, after which they are its
/// positional parameters (`start-stop-daemon -x /bin/sh -- -c 'echo "$1"' sh VALUE`).
pub fn unknown(words: &[Option<&[u8]>], script: Option<usize>) -> Option<(String, Vec<usize>)> {
    let found = programs::programs(words);
    let &(last, place) = found.last()?;
    let w = words[last]?;
    // A script file is read by a shell: the author's own unless it is a system program.
    let file = place == programs::SCRIPT_FILE;
    if (!file && SHELLS.contains(&base(w))) || known(words, last) || (file && !system(w)) {
        return None;
    }
    // `busybox NAME` is in the chain; a shell there is `busybox sh`.
    if base(w) == b"busybox" {
        return None;
    }
    let from = last + 1;
    let to = script.map_or(words.len(), |s| (s + 1).min(words.len()));
    (from < to).then(|| {
        (
            String::from_utf8_lossy(w).into_owned(),
            (from..to).collect(),
        )
    })
}

/// The place of an interpreter's program text.
pub const PROGRAM_TEXT: &str = "the program text an interpreter runs (`python3 -c`, `perl -e`, \
                                `node -e`, `php -r`, …), where a value is code: pass it as an \
                                argument after the text (`python3 -c 'import sys; \
                                print(sys.argv[1])' {{ v }}`, `$ARGV[0]`, `process.argv[1]`) or \
                                read it from the environment (`os.environ['ACTIOND_ARG_NAME']`, \
                                `$ENV{ACTIOND_ARG_NAME}`), which are data";

/// The options that take an interpreter's program text, by the interpreter's name.
fn code_options(name: &[u8]) -> &'static [&'static [u8]] {
    let family = name
        .iter()
        .position(|c| c.is_ascii_digit() || *c == b'.')
        .map_or(name, |k| &name[..k]);
    match family {
        b"python" | b"pypy" => &[b"-c"],
        b"perl" | b"ruby" => &[b"-e", b"-E"],
        b"node" | b"nodejs" | b"deno" | b"bun" => &[b"-e", b"--eval", b"-p", b"--print"],
        b"php" => &[b"-r", b"-B", b"-R", b"-E", b"-F"],
        b"lua" | b"luajit" => &[b"-e"],
        b"Rscript" => &[b"-e"],
        b"tclsh" | b"wish" => &[],
        _ => &[],
    }
}

/// The words that are an interpreter's program text: the word after `-c` of `python3`
/// (behind the wrappers `programs` knows), `-e`/`-E` of `perl` and `ruby`, `-e`/`--eval`/`-p`
/// of `node`, `-r` of `php`, `-e` of `lua`, or glued to it (`-e'print 1'`, `--eval=…`).
pub fn program_texts(words: &[Option<&[u8]>]) -> Vec<usize> {
    let mut out = Vec::new();
    for at in behind(words, |name| !code_options(name).is_empty()) {
        program_text(words, at, &mut out);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The words of the program at `at` that are its program text, into `out`.
fn program_text(words: &[Option<&[u8]>], last: usize, out: &mut Vec<usize>) {
    let Some(w) = words[last] else {
        return;
    };
    let options = code_options(base(w));
    for j in last + 1..words.len() {
        let Some(w) = words[j] else { continue };
        if w == b"--" {
            break;
        }
        for o in options {
            if w == *o && j + 1 < words.len() {
                out.push(j + 1);
            } else if w.len() > o.len() && w.starts_with(o) && o.len() == 2 {
                // A cluster ending in the option (`-pe`) takes the next word; `-eCODE` holds it.
                out.push(j);
            } else if w.starts_with(o) && w.get(o.len()) == Some(&b'=') {
                out.push(j);
            }
        }
        if w.len() > 2
            && w[0] == b'-'
            && w[1] != b'-'
            && options.iter().any(|o| o.len() == 2 && w.ends_with(&o[1..]))
        {
            out.push(j + 1);
        }
    }
    out.retain(|&k| k < words.len());
}

/// Each word that may name the program a command runs with rules of its own (`wanted`, by
/// its name): the chain of wrappers (`programs::chain`, `find … -exec` among them), and,
/// behind a program the model does not know (a wrapper it has no entry for: `taskset -c 0
/// sed …`, `chrt -i 0 python3 -c …`, `systemd-run --wait …`), every later word `wanted`
/// names, as no list of wrappers is complete.
pub fn behind(words: &[Option<&[u8]>], wanted: impl Fn(&[u8]) -> bool) -> Vec<usize> {
    let mut out = programs::chain(words);
    if unknown(words, None).is_some()
        && let Some(&last) = out.last()
    {
        out.extend((last + 1..words.len()).filter(|&k| words[k].is_some_and(|w| wanted(base(w)))));
    }
    out
}

#[cfg(test)]
mod tests;
