//! The programs the model knows never run one of their arguments as a program, and the
//! words of a command that are arguments of a program it does not know (`chrt -i 0 JOB`,
//! `runuser -u U -- JOB`, `systemd-run --wait JOB`, `/usr/local/bin/wrapper JOB`): any such
//! program may be a wrapper that runs a value there, and a list of wrappers is never
//! complete, so the model lists the other side. Every entry of `NOT_WRAPPERS` is a promise
//! that the program never runs an operand, or an option's value, as a program (an option
//! whose name says it holds a command, `wget --use-askpass`, is `launchers`' and read as a
//! script anyway). A program named by its path counts by its last segment only when that
//! is on the list: a path names no program the model knows (`/opt/x/run.sh` may itself be a
//! wrapper script). Also the words that are an interpreter's program text (`python3 -c`,
//! `perl -e`, `node -e`, `php -r`): a value there is code. Pure and syntactic like
//! `programs`: `judge` weighs the values.

use super::programs::{self, SHELLS};

/// The place of an argument of a program the model does not know.
pub const OPERAND: &str = "an argument of a program actiond does not know";

/// Programs that never run an operand as a program: shell builtins the other rules read
/// (`eval`, `trap`, `read`, … are refused or followed by `commands`), and common tools that
/// appliance configs hand values to. Left out on purpose, because they can: `find -exec`,
/// `xargs`, `watch`, `flock`, `timeout`, `nice`, `sudo` (wrappers, followed by `programs`),
/// `sed` (its `e` command), `awk` (`system()`), `nc` (`-e PROG`), `yt-dlp`
/// (`--downloader PATH`, `--ffmpeg-location PATH`), `git` (`git NAME` runs `git-NAME`),
/// `mysql` (`-e 'system CMD'`), `apt`/`dpkg` (maintainer scripts), `convert` (delegates).
const NOT_WRAPPERS: &[&[u8]] = &[
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
    b"mount",
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
    b"ffmpeg",
    b"ffprobe",
];

/// `docker` and `podman` run a program for these subcommands (`docker run IMAGE PROG`,
/// `docker exec C PROG`, `docker compose run SVC PROG`); with any other they do not.
const CONTAINER_RUNS: &[&[u8]] = &[b"run", b"exec", b"create", b"compose", b"container"];

/// The last path segment: `/usr/bin/env` is `env`.
fn base(w: &[u8]) -> &[u8] {
    w.rsplit(|&c| c == b'/').next().unwrap_or(w)
}

/// Whether the program at `i` of `words` is one the model knows never runs an argument as
/// a program: on the list and named by its name alone (or `/bin/NAME`, `/usr/bin/NAME`,
/// `/sbin/NAME`, `/usr/sbin/NAME`), `docker`/`podman` with a subcommand that runs none, `ip`
/// without `exec` (`ip netns exec NS PROG`).
fn known(words: &[Option<&[u8]>], i: usize) -> bool {
    let Some(w) = words[i] else { return false };
    // A script an option holds starts with the option (`--to-command=echo …`).
    let w = match w.iter().rposition(|&c| c == b'=') {
        Some(k) if w.starts_with(b"-") => &w[k + 1..],
        _ => w,
    };
    let system = [&b"/bin/"[..], b"/usr/bin/", b"/sbin/", b"/usr/sbin/"]
        .iter()
        .any(|d| w.strip_prefix(*d).is_some_and(|n| !n.contains(&b'/')));
    if w.contains(&b'/') && !system {
        return false;
    }
    let name = base(w);
    let rest = &words[i + 1..];
    match name {
        b"docker" | b"podman" => {
            // The first word that is no option is the subcommand.
            let sub = rest.iter().find(|w| w.is_none_or(|w| !w.starts_with(b"-")));
            sub.is_some_and(|s| s.is_some_and(|s| !CONTAINER_RUNS.contains(&s)))
        }
        // `ip netns exec NS PROG`, `ip vrf exec NAME PROG`: the object in plain text and no
        // `exec` among the plain words (a value in the object's words is data).
        // `parallel rm -- {} ::: ARGS` runs `rm` (its words are read as a script by
        // `programs`, the arguments after `:::` quoted into it).
        b"parallel" => programs::parallel_command(words, i + 1)
            .is_some_and(|c| c > i && words[c].is_some() && known(words, c)),
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
    if place != programs::SCRIPT_FILE && (SHELLS.contains(&base(w)) || known(words, last)) {
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
    let Some(&last) = programs::chain(words).last() else {
        return Vec::new();
    };
    let Some(w) = words[last] else {
        return Vec::new();
    };
    let options = code_options(base(w));
    let mut out = Vec::new();
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
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests;
