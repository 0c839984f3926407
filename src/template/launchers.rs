//! Scripts found by rule where `programs` finds them by program: a shell named anywhere in a
//! command's words (`start-stop-daemon --exec /bin/sh -- -c SCRIPT`, `capsh -- -c SCRIPT`,
//! `busybox start-stop-daemon -x /bin/sh -- -c`), behind any launcher and its options; and an
//! option whose name says it holds a command (`--to-command=`, `-o ProxyCommand=`,
//! `--rsh`, `--use-compress-program`, `--checkpoint-action=exec=`, `-exec`, `Post-Invoke`),
//! with the few short options that do (`rsync -e`, `tar -I`, `tar -F`, `scp -S`, `man -P`,
//! and the keys of `git -c` that hold one). A launcher list is always one short, so neither
//! rule names launchers. Pure and syntactic like `programs`: it reads words, never values.
//! It over-reads by design (a data word that happens to follow `bash … -c` is read as a
//! script): a script in plain text is read, not refused, so only a value there is refused.

use super::programs::{self, SCRIPT, SHELLS};

/// The place of a command an option holds.
pub const OPTION_COMMAND: &str = "a command an option holds, which the program runs (through \
                                  a shell, as `tar --to-command=`, `ssh -o ProxyCommand=`, \
                                  `rsync -e` and `git -c core.sshCommand=` do)";

/// Programs that hand the words after their options to a shell: `capsh -- ARGS` runs bash
/// with ARGS, `su USER ARGS` and `runuser USER ARGS` the user's shell.
const SHELL_STARTERS: &[&[u8]] = &[b"capsh", b"su", b"runuser"];

/// Parts of an option's name (lower case) that say it holds a command.
const STEMS: &[&[u8]] = &[
    b"command",
    b"cmd",
    b"exec",
    b"script",
    b"program",
    b"rsh",
    b"rsync-path",
    b"shell",
    b"invoke",
    b"hook",
    b"editor",
    b"pager",
    b"askpass",
];

/// Parts of a `git -c` key that say its value is a command git runs (`credential.helper`,
/// `core.fsmonitor`, `alias.x=!cmd`, `filter.x.smudge`, `diff.x.textconv`, …), beside `STEMS`.
const GIT_STEMS: &[&[u8]] = &[
    b"helper",
    b"fsmonitor",
    b"external",
    b"alias.",
    b"proxy",
    b"textconv",
    b"smudge",
    b"clean",
    b"process",
    b"driver",
];

/// Short options that take a command, per program: `rsync -e`, `tar -I` and `-F`, `scp -S`,
/// `man -P`. A word of its own (`-ok` of `find`) is matched whole.
const SHORT: &[(&[u8], &[u8])] = &[
    (b"rsync", b"e"),
    (b"tar", b"IF"),
    (b"scp", b"S"),
    (b"man", b"P"),
];

/// Options that take a program's setting as `KEY=VALUE` (or ssh's `KEY VALUE`).
const SETTINGS: &[&[u8]] = &[b"-o", b"-c", b"--option", b"--config"];

/// Whether an option turns something off (`--no-pager`, `--ignore-scripts`, `--noexec`):
/// a flag, which takes no word.
fn negated(w: &[u8]) -> bool {
    let name = w.strip_prefix(b"--").or(w.strip_prefix(b"-")).unwrap_or(w);
    let glued = name
        .strip_prefix(b"no")
        .is_some_and(|rest| STEMS.iter().any(|s| rest.starts_with(s)));
    glued
        || [&b"no-"[..], b"ignore-", b"skip-", b"disable-", b"without-"]
            .iter()
            .any(|p| name.starts_with(p))
}

/// The scripts `programs::scripts` finds, and besides them (at indexes it did not find)
/// those the rules of this module find. `values` are the words as `programs` reads them
/// (`None` where an expansion or a value makes one unknown); `texts` the same words' text as
/// far as it is known (a word with a value in it: its text around the value), where an
/// option's name is read.
pub fn scripts(values: &[Option<&[u8]>], texts: &[&[u8]]) -> Vec<(usize, &'static str)> {
    let mut found = programs::scripts(values);
    // A command in plain text that expands nothing reads no value (`-exec sh`, where the
    // program is named and `sh -c` is read by its own rule).
    let expands = |i: usize| values[i].is_none_or(|v| v.iter().any(|&c| c == b'$' || c == b'`'));
    let commands = option_commands(texts)
        .into_iter()
        .filter(|&(i, _)| expands(i));
    let launched = launched(values);
    // The words after a launched shell's script are its `$0`, `$1`, …, never a script of
    // their own (`capsh -- -c 'echo "$1"' sh {{ v }}`, where `programs` takes `sh` for one).
    if let Some(&(script, _)) = launched.first() {
        found.retain(|&(i, place)| i <= script || place != SCRIPT);
    }
    for (i, place) in launched.into_iter().chain(commands) {
        if !found.iter().any(|&(j, _)| j == i) {
            found.push((i, place));
        }
    }
    found.sort_by_key(|&(i, _)| i);
    found
}

/// The last path segment: `/usr/bin/env` is `env`.
fn base(w: &[u8]) -> &[u8] {
    w.rsplit(|&c| c == b'/').next().unwrap_or(w)
}

/// Whether a word names a shell, alone or as an option's value (`/bin/sh`, `--exec=/bin/sh`,
/// `-x/bin/bash`), or a program that starts one with its words (`capsh`).
fn names_shell(w: &[u8]) -> bool {
    let value = w.rsplit(|&c| c == b'=').next().unwrap_or(w);
    let name = base(value);
    SHELLS.contains(&name) || SHELL_STARTERS.contains(&name)
}

/// A cluster of a shell's one-letter options that holds `c` (`-c`, `-ec`, `-xc`): the next
/// word that is no option is its script.
fn is_command_option(w: &[u8]) -> bool {
    w.len() > 1
        && w[0] == b'-'
        && w[1] != b'-'
        && w[1..].iter().all(u8::is_ascii_alphabetic)
        && w[1..].contains(&b'c')
}

/// A shell named in a command's words runs a script: after the word that names it, every
/// later `-c`-style option makes the next word that is no option its script (the launcher's
/// own options, a `--` that ends them, and the shell's `-o OPTION` may stand between). A
/// word from an expansion right after a `--` could be `-c` itself: every word from it on
/// may be the script. The first script found ends the search: the words after it are its
/// `$0`, `$1`, …. A shell that is the program the command runs (behind known wrappers) is
/// `programs::scripts`'s, which knows its `-s` and its script file.
fn launched(words: &[Option<&[u8]>]) -> Vec<(usize, &'static str)> {
    let chained = programs::chain(words);
    for (i, w) in words.iter().enumerate() {
        let Some(w) = w.filter(|w| names_shell(w)) else {
            continue;
        };
        if chained.contains(&i) && SHELLS.contains(&base(w)) {
            continue;
        }
        let found = script_after(words, i + 1);
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

/// The script of a shell named at `from - 1` (`launched`).
fn script_after(words: &[Option<&[u8]>], from: usize) -> Vec<(usize, &'static str)> {
    // Whether the word at `j` may still be an option of the shell (an expansion there could
    // be `-c`): after `--` or a `-c`, until a word that is no option.
    let mut options = false;
    let mut command = false;
    let mut j = from;
    while j < words.len() {
        let Some(w) = words[j] else {
            if command {
                return vec![(j, SCRIPT)];
            }
            if options {
                return (j..words.len()).map(|k| (k, SCRIPT)).collect();
            }
            j += 1;
            continue;
        };
        if w == b"--" {
            options = true;
        } else if is_command_option(w) {
            command = true;
            options = true;
        } else if w.len() > 1 && matches!(w[0], b'-' | b'+') {
            // `-o OPTION`, `+O OPTION`, `--rcfile FILE` take a word.
            let takes = w == b"--rcfile"
                || w == b"--init-file"
                || (w[1] != b'-' && w[1..].iter().any(|&c| c == b'o' || c == b'O'));
            if takes {
                j += 1;
            }
        } else if command {
            return vec![(j, SCRIPT)];
        } else {
            options = false;
        }
        j += 1;
    }
    Vec::new()
}

/// Whether an option's name (its text, dashes and all) says it holds a command.
fn says_command(name: &[u8], stems: &[&[u8]]) -> bool {
    let lower = name.to_ascii_lowercase();
    stems
        .iter()
        .any(|s| lower.windows(s.len()).any(|p| p == *s))
}

/// The name part of `KEY=VALUE` or `KEY VALUE` (ssh's `-o 'ProxyCommand nc %h %p'`), when
/// the word has a value after its key.
fn key(w: &[u8]) -> Option<&[u8]> {
    let end = w.iter().position(|&c| matches!(c, b'=' | b' ' | b'\t'))?;
    Some(&w[..end])
}

/// Whether a word is an option (`-x`, `--name`, `-o…`).
fn is_option(w: &[u8]) -> bool {
    w.len() > 1 && w[0] == b'-'
}

/// The words that hold a command because an option says so: the value of `--NAME=VALUE`
/// whose NAME (or any part of it before the last `=`: `--checkpoint-action=exec=CMD`) says
/// it holds one, the word after such an option written alone (`--rsh CMD`, `-exec CMD`),
/// a `KEY=VALUE` word after an option whose KEY says so (`-o ProxyCommand=CMD`, `-o
/// DPkg::Post-Invoke::=CMD`, and for `git -c` the keys of `GIT_STEMS` too), and the short
/// options of `SHORT` (`rsync -avze CMD`, `tar -Izstd`).
fn option_commands(texts: &[&[u8]]) -> Vec<(usize, &'static str)> {
    let mut out = Vec::new();
    let after = |k: usize, name: &[u8]| texts[..k].iter().any(|w| base(w) == name);
    for (k, &w) in texts.iter().enumerate() {
        let next = (k + 1 < texts.len()).then_some(k + 1);
        if is_option(w) && w != b"--" {
            match w.iter().rposition(|&c| c == b'=') {
                Some(last) if says_command(&w[..last], STEMS) => out.push(k),
                Some(_) => {}
                // A flag that turns a command off takes no word (`--no-pager`).
                None if says_command(w, STEMS) && !negated(w) => out.extend(next),
                None => {}
            }
            if w[1] != b'-' && !w.contains(&b'=') {
                for &(program, letters) in SHORT {
                    let Some(at) = w[1..].iter().position(|c| letters.contains(c)) else {
                        continue;
                    };
                    if after(k, program) {
                        // `-e CMD`, `-avze CMD`; `-Izstd` holds its command.
                        if at + 2 == w.len() {
                            out.extend(next);
                        } else {
                            out.push(k);
                        }
                    }
                }
            }
            continue;
        }
        // The settings of `-o` (ssh, scp, apt-get, mount) and `-c` (git): a message or a
        // form field (`curl -d cmd=…`, `mosquitto_pub -m 'exec …'`) is no setting.
        let Some(prev) = k.checked_sub(1).map(|p| texts[p]) else {
            continue;
        };
        if !SETTINGS.contains(&prev) {
            continue;
        }
        let Some(name) = key(w) else { continue };
        let git = prev == b"-c" && after(k, b"git");
        if says_command(name, STEMS) || (git && says_command(name, GIT_STEMS)) {
            out.push(k);
        }
    }
    out.sort_unstable();
    out.dedup();
    out.into_iter().map(|k| (k, OPTION_COMMAND)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words<'a>(words: &'a [&'a str]) -> Vec<Option<&'a [u8]>> {
        words
            .iter()
            .map(|w| (!w.contains('$')).then_some(w.as_bytes()))
            .collect()
    }

    fn found(w: &[&str]) -> Vec<(usize, &'static str)> {
        let texts: Vec<&[u8]> = w.iter().map(|w| w.as_bytes()).collect();
        scripts(&words(w), &texts)
    }

    /// Each row: a command's words (`$` in a word makes it unknown, as a value does) and the
    /// indexes of its words held as a shell's script (`S`) or an option's command (`O`).
    #[test]
    fn a_shell_or_a_command_is_found_behind_any_launcher_and_option() {
        type Row<'a> = (&'a [&'a str], &'a [(usize, char)]);
        let table: &[Row] = &[
            // A shell named as a launcher's option (F9), and programs that start one.
            (
                &[
                    "start-stop-daemon",
                    "--start",
                    "--pidfile",
                    "p",
                    "--make-pidfile",
                    "--exec",
                    "/bin/sh",
                    "--",
                    "-c",
                    "s",
                ],
                &[(9, 'S')],
            ),
            (
                &[
                    "start-stop-daemon",
                    "-S",
                    "--exec=/bin/bash",
                    "--",
                    "-ec",
                    "s",
                ],
                &[(5, 'S')],
            ),
            (
                &[
                    "busybox",
                    "start-stop-daemon",
                    "-S",
                    "-x",
                    "/bin/sh",
                    "--",
                    "-c",
                    "s",
                ],
                &[(7, 'S')],
            ),
            (
                &["capsh", "--drop=cap_net_raw", "--", "-c", "s", "x"],
                &[(4, 'S')],
            ),
            (&["capsh", "--", "-x", "-c", "s"], &[(4, 'S')]),
            (&["capsh", "--", "-c", "s", "sh", "$"], &[(3, 'S')]),
            (
                &["taskset", "1", "chrt", "-i", "0", "sh", "-c", "s"],
                &[(7, 'S')],
            ),
            (
                &["unshare", "-n", "--", "bash", "-o", "pipefail", "-c", "s"],
                &[(7, 'S')],
            ),
            (
                &["ip", "netns", "exec", "x", "dash", "-c", "s"],
                &[(6, 'S')],
            ),
            (&["su", "pi", "--", "-c", "s"], &[(4, 'S')]),
            (&["runuser", "-u", "pi", "--", "$"], &[(4, 'S')]),
            (
                &["start-stop-daemon", "-x", "/bin/sh", "--", "$", "s"],
                &[(4, 'S'), (5, 'S')],
            ),
            // The shell's own words after its script are data; a shell's script file too.
            (&["sh", "-c", "s", "sh", "$"], &[(2, 'S')]),
            // (`programs::scripts` reads a value right after a shell's name as its option.)
            (&["chsh", "-s", "/bin/bash", "$"], &[(3, 'S')]),
            (&["bash", "/opt/x.sh", "--verbose", "$"], &[]),
            (&["docker", "exec", "c", "bash", "/x.sh", "$"], &[]),
            (&["echo", "sh"], &[]),
            // Options that hold a command (F9b).
            (&["tar", "-xf", "a.tar", "--to-command=cat $"], &[(3, 'O')]),
            (&["tar", "-xf", "a.tar", "--to-command", "$"], &[(4, 'O')]),
            (&["tar", "-cf", "a.tar", "-I", "$", "d"], &[(4, 'O')]),
            (&["tar", "-cIzstd$", "-f", "a"], &[(1, 'O')]),
            (
                &["tar", "--use-compress-program=$", "-cf", "a"],
                &[(1, 'O')],
            ),
            (
                &["tar", "--checkpoint-action=exec=$", "-cf", "a"],
                &[(1, 'O')],
            ),
            (&["tar", "-cf", "a.tar", "-F", "$"], &[(4, 'O')]),
            (&["ssh", "-o", "ProxyCommand=echo $", "h"], &[(2, 'O')]),
            (&["ssh", "-o", "ProxyCommand echo $", "h"], &[(2, 'O')]),
            (&["ssh", "-oLocalCommand=$", "h"], &[(1, 'O'), (2, 'S')]),
            (&["git", "-c", "core.sshCommand=$", "fetch"], &[(2, 'O')]),
            (&["git", "-c", "credential.helper=!$", "fetch"], &[(2, 'O')]),
            (&["git", "-c", "alias.x=!$", "x"], &[(2, 'O')]),
            (&["rsync", "-e", "ssh $", "a", "b"], &[(2, 'O')]),
            (&["rsync", "-avze", "$", "a", "b"], &[(2, 'O')]),
            (&["rsync", "--rsh=$", "a", "b"], &[(1, 'O')]),
            (&["rsync", "--rsync-path", "$", "a", "b"], &[(2, 'O')]),
            (
                &["apt-get", "-o", "DPkg::Post-Invoke::=$", "install"],
                &[(2, 'O')],
            ),
            (&["find", ".", "-exec", "$", "{}", ";"], &[(3, 'O')]),
            (&["find", ".", "-execdir", "$", "{}", "+"], &[(3, 'O')]),
            (&["find", ".", "-exec", "rm", "{}", "+"], &[]),
            (
                &["tar", "-xf", "a.tar", "--to-command=echo $ACTIOND_ARG_A"],
                &[(3, 'O')],
            ),
            (&["scp", "-S", "$", "a", "b"], &[(2, 'O')]),
            (&["man", "-P", "$", "ls"], &[(2, 'O')]),
            // Options that hold no command, and the same letters elsewhere.
            (&["ssh", "-o", "Port=$", "h", "uptime"], &[(4, 'S')]),
            (&["git", "-c", "user.name=$", "commit"], &[]),
            (&["git", "-C", "/srv", "pull"], &[]),
            (&["grep", "-e", "$", "f"], &[]),
            (&["tar", "-xzf", "$"], &[]),
            (&["tar", "-xf", "a.tar", "-C", "$"], &[]),
            (&["rsync", "-av", "--exclude", "$", "a", "b"], &[]),
            (&["echo", "command=$"], &[]),
            (&["docker", "exec", "c", "$"], &[]),
            (&["systemctl", "status", "--no-pager", "$"], &[]),
            (&["composer", "install", "--no-scripts", "$"], &[]),
            (&["npm", "install", "--ignore-scripts", "$"], &[]),
            (&["curl", "-d", "command=$", "http://h/"], &[]),
            (&["mosquitto_pub", "-t", "t", "-m", "exec $"], &[]),
            (&["sudo", "--askpass", "$"], &[(2, 'O')]),
            (&["mount", "-o", "noexec", "$", "/mnt"], &[]),
            (&["x", "--notify-command", "$"], &[(2, 'O')]),
            (&["x", "--noexec", "$"], &[]),
        ];
        let mut wrong = Vec::new();
        for (w, want) in table {
            let got: Vec<(usize, char)> = found(w)
                .into_iter()
                .map(|(i, p)| (i, if p == OPTION_COMMAND { 'O' } else { 'S' }))
                .collect();
            if got != *want {
                wrong.push(format!("{w:?}: {got:?}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// Each row: a `shell:` command, and whether it is refused with a text argument `a`
    /// (`{{ a }}`, `$A`, `$ACTIOND_ARG_A`); the runs of the refused ones are in tests/shells
    /// (`launchers`).
    #[test]
    fn a_value_in_a_launched_shell_or_an_options_command_is_refused() {
        use crate::template::{Values, judge, read_shell};
        let mut values = Values {
            any: true,
            ..Values::default()
        };
        values
            .variables
            .insert("ACTIOND_ARG_A".into(), ("a".into(), false));
        values.variables.insert("A".into(), ("a".into(), true));
        let table: &[(&str, bool)] = &[
            // F9: a shell a launcher starts.
            (
                "start-stop-daemon --start --pidfile /run/p --make-pidfile --exec /bin/sh -- \
                 -c \"echo fetching {{ a }} > /tmp/log\"",
                true,
            ),
            ("capsh --drop=cap_net_raw -- -c \"echo {{ a }}\"", true),
            (
                "busybox start-stop-daemon -S -x /bin/sh -- -c \"echo {{ a }}\"",
                true,
            ),
            (
                "start-stop-daemon -S -x /bin/sh -- -c 'p $(( ACTIOND_ARG_A ))'",
                true,
            ),
            ("runuser -u nobody -- {{ a }}", true),
            (
                "start-stop-daemon -S -x /bin/sh -- -c 'echo \"$1\"' sh {{ a }}",
                false,
            ),
            ("capsh -- -c 'echo \"$ACTIOND_ARG_A\"'", false),
            ("runuser -u nobody -- /usr/bin/echo {{ a }}", true),
            ("chsh -s /bin/bash pi; echo {{ a }}", false),
            // F9b: an option's command.
            ("tar -xf a.tar --to-command=\"cat; echo {{ a }}\"", true),
            ("tar -xf a.tar \"--to-command=cat; echo {{ a }}\"", true),
            ("ssh -o ProxyCommand=\"echo {{ a }}\" host uptime", true),
            ("git -c core.sshCommand=\"ssh {{ a }}\" fetch", true),
            ("rsync -e \"ssh {{ a }}\" a b", true),
            ("tar -I \"gzip {{ a }}\" -cf a.tar d", true),
            (
                "tar --checkpoint-action=exec=\"echo {{ a }}\" -cf a.tar d",
                true,
            ),
            ("find /srv -exec {{ a }} {} +", true),
            ("tar --to-command='p $(( ACTIOND_ARG_A ))' -xf a.tar", true),
            (
                "tar --to-command='echo \"$ACTIOND_ARG_A\"' -xf a.tar.lz",
                false,
            ),
            ("ssh -o ConnectTimeout=5 host uptime; echo {{ a }}", false),
            ("git -c user.name=\"{{ a }}\" commit -m x", false),
            ("rsync -av --exclude \"{{ a }}\" a b", false),
            (
                "find /srv -exec sh -c 'echo \"$1\"' sh {} \\; ; echo {{ a }}",
                false,
            ),
            ("find /srv -name {{ a }} -exec rm -- {} +", false),
        ];
        let mut wrong = Vec::new();
        for &(text, refused) in table {
            let got = read_shell(text)
                .map_err(|e| e.message)
                .and_then(|(_, analysis)| {
                    judge(text, &analysis, &values).map_err(|why| why.to_string())
                });
            if got.is_err() != refused {
                wrong.push(format!("{text:?}: {got:?}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
