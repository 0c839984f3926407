//! What a command's words run, read from the words alone (each `Some(text)` when it is plain
//! text, `None` when an expansion or a value makes it unknown), for `shell:` and `exec:`
//! alike: the program itself, found behind the wrappers that run another program (`env`,
//! `sudo`, `nohup`, `timeout 5`, `xargs`, …); the words a program hands to a shell as a
//! script (`sh -c SCRIPT`, `su -c`, `env -S`, `flock FILE -c`, `script -c`, `sg GROUP`,
//! `watch`, `ssh HOST CMD`, GNU `parallel`'s command, the data of an `awk` program that runs
//! commands); and what it does with its standard input (a shell with no `-c` runs it as a
//! script, and so do `su USER`, `ssh HOST`, a shell behind `docker exec -i` and `parallel`
//! with no command; `xargs` splits it into arguments). Pure and syntactic: it knows nothing
//! of values, which `commands` and `judge` weigh.

/// Programs that run their `-c` argument, or the script on their standard input, as shell
/// code.
/// The checksum programs: they read their input as data and print only its sum (`-c`,
/// which reads a list of names, is `prints_input`'s), so they are in `own`'s allow lists of input readers and in `filed`'s of programs that print no content of the files they name.
pub const CHECKSUMS: &[&[u8]] = &[
    b"md5sum",
    b"sha1sum",
    b"sha224sum",
    b"sha256sum",
    b"sha384sum",
    b"sha512sum",
    b"b2sum",
    b"cksum",
    b"sum",
];

pub const SHELLS: &[&[u8]] = &[
    b"sh", b"bash", b"dash", b"ash", b"zsh", b"ksh", b"mksh", b"yash", b"posh", b"rbash", b"hush",
];

/// The place of a shell's `-c` script: the words after it are the script's `$0`, `$1`, ….
pub const SCRIPT: &str = "the script of `sh -c`";

/// The place of the script of `su -c` (`runuser -c`), which the user's shell runs with the
/// command's input.
pub const SU_SCRIPT: &str = "the command of `su -c`";

/// The place of the command `ssh HOST CMD` runs: a shell on the other host reads it, with
/// what reaches ssh's input.
pub const SSH_COMMAND: &str = "the command `ssh` runs on the other host";

/// A shell's script into which `find -exec` or `xargs -I` paste the names they read (`{}`):
/// built from what they read, so never known to actiond.
pub const PASTED: &str = "the script of `sh -c` behind `find -exec` or `xargs -I`, which paste \
                          what they read into it";

/// The place of the words naming the program a command runs.
pub const PROGRAM: &str = "the program the command runs (its name)";

/// The place of the file a shell runs as its script (`sh FILE`).
pub const SCRIPT_FILE: &str = "the script file a shell runs";

/// What a program does with its standard input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stdin {
    /// Runs it as shell code (`sh`, `sh -s`, `sh /dev/stdin`, `. /dev/stdin`, `at`).
    Code(&'static str),
    /// Splits it into arguments of a program (`xargs`).
    Split(&'static str),
    /// Hands it to a program that signals the processes it names (`xargs -0 kill`).
    Signal(&'static str),
}

/// The place of a script a shell reads from its standard input.
pub const STDIN_SCRIPT: &str = "the script a shell reads from its standard input";

/// The place of what `xargs` reads.
pub const XARGS_INPUT: &str = "the standard input of `xargs`, which it splits into arguments";

/// The place of the items `xargs -0` hands to a program not known to take them as data.
pub const XARGS_ITEMS: &str = "the items `xargs -0` reads from its standard input, each an \
                               argument of its program (or pasted into its words by `-I`), \
                               which may read it as its own commands or pick processes with it";

/// Programs that take the items of `xargs -0` as data: names of files to act on, or text.
const XARGS_DATA: &[&[u8]] = &[
    b"rm",
    b"rmdir",
    b"mkdir",
    b"touch",
    b"cp",
    b"mv",
    b"ln",
    b"chmod",
    b"chown",
    b"chgrp",
    b"ls",
    b"du",
    b"stat",
    b"file",
    b"cat",
    b"head",
    b"tail",
    b"wc",
    b"md5sum",
    b"sha1sum",
    b"sha256sum",
    b"sha512sum",
    b"b2sum",
    b"gzip",
    b"gunzip",
    b"xz",
    b"bzip2",
    b"zstd",
    b"echo",
    b"printf",
    b"grep",
    b"basename",
    b"dirname",
    b"realpath",
    b"readlink",
    b"truncate",
];

/// The last path segment: `/usr/bin/env` is `env`.
fn base(w: &[u8]) -> &[u8] {
    w.rsplit(|&c| c == b'/').next().unwrap_or(w)
}

fn is_shell(words: &[Option<&[u8]>], i: usize) -> bool {
    let at = |k: usize| words.get(k).copied().flatten();
    at(i).is_some_and(|w| SHELLS.contains(&base(w)))
}

/// A path the kernel opens as a process's own descriptor: the standard input, or a
/// descriptor a redirection fills (`/dev/fd/3` after `3<<E`).
pub fn is_input_path(w: &[u8]) -> bool {
    w == b"/dev/stdin"
        || w == b"-"
        || w.starts_with(b"/dev/fd/")
        || (w.starts_with(b"/proc/") && w.windows(4).any(|p| p == b"/fd/"))
}

/// The word `<( )` stands as (the lexer's marker for a process substitution).
pub const PROCESS_SUBSTITUTION: &[u8] = b"<()";

/// Where a command's words hold a script that a program parses again: for `words` (the
/// command's words from its name on), the indexes of the words that hold one, with what
/// they are. A shell's script is the first word after its options when one of them holds
/// `c` (`sh -c`, `bash -ec`, `busybox sh -c`, behind any wrapper: `env`, `sudo`, `nohup`,
/// `timeout 5`, `docker exec c`); `su` and `runuser` take the word after `-c`; `env -S`
/// splits its string again. Where a shell's option cannot be read (it comes from an
/// expansion), every word after it may be the script. The program a command runs (behind
/// its wrappers, `chain`) may hand a word to `sh -c` itself: `flock FILE -c CMD`, `script -c
/// CMD`, `sg GROUP CMD`, `watch CMD…` and `ssh HOST CMD…` (their words joined).
pub fn scripts(words: &[Option<&[u8]>]) -> Vec<(usize, &'static str)> {
    let chained = chain(words);
    let program = chained.last().copied().unwrap_or(0);
    if let Some(found) = runs_argument(words, program) {
        return found;
    }
    // `xargs -I STR` pastes what it reads wherever STR stands, `find -exec` at `{}`.
    let (mut paste_any, mut paste_braces) = (false, false);
    for (i, w) in words.iter().enumerate() {
        let Some(w) = w else { continue };
        let name = base(w);
        paste_braces |= name == b"find";
        paste_any |= name == b"xargs" && xargs_replaces(words, i + 1);
        let shell = SHELLS.contains(&name)
            || (name == b"busybox" && is_shell(words, i + 1) && words[i + 1].is_some());
        if shell {
            let from = if name == b"busybox" { i + 2 } else { i + 1 };
            let found = shell_script(words, from);
            let pasted = |j: usize| {
                paste_any
                    || (paste_braces && words[j].is_none_or(|s| s.windows(2).any(|p| p == b"{}")))
            };
            return found
                .into_iter()
                .map(|(j, place)| (j, if pasted(j) { PASTED } else { place }))
                .collect();
        }
        if name == b"su" || name == b"runuser" {
            return option_argument(words, i + 1, &[b"-c", b"--command"], SU_SCRIPT);
        }
        if name == b"env" {
            let found = option_argument(
                words,
                i + 1,
                &[b"-S", b"--split-string"],
                "the string of `env -S`",
            );
            if !found.is_empty() {
                return found;
            }
        }
    }
    Vec::new()
}

/// Whether `xargs`' options from `from` on paste what it reads into the command's words
/// (`-I STR`, `-i`, `--replace`).
fn xargs_replaces(words: &[Option<&[u8]>], from: usize) -> bool {
    words[from.min(words.len())..].iter().any(|w| {
        w.is_some_and(|w| {
            w.starts_with(b"-I") || w.starts_with(b"-i") || w.starts_with(b"--replace")
        })
    })
}

/// The programs that hand an argument to `sh -c`, when `program` is one: `flock FILE -c
/// CMD`, `script -c CMD`, `sg GROUP [-c] CMD`, `watch CMD…` (unless `-x`), `ssh HOST CMD…`.
fn runs_argument(words: &[Option<&[u8]>], program: usize) -> Option<Vec<(usize, &'static str)>> {
    let name = base(words.get(program).copied().flatten()?);
    let found = match name {
        b"flock" => {
            let file = operands(words, program + 1, b"wE", &[]).first().copied()?;
            match words.get(file + 1).copied().flatten() {
                Some(b"-c" | b"--command") if file + 2 < words.len() => {
                    vec![(file + 2, "the command of `flock -c`")]
                }
                _ => return None,
            }
        }
        b"script" => {
            let found = short_option(words, program + 1, b'c', b"--command", b"tTIOBmEo");
            if found.is_empty() {
                return None;
            }
            found
                .into_iter()
                .map(|j| (j, "the command of `script -c`"))
                .collect()
        }
        b"sg" => {
            let mut j = program + 1;
            if words.get(j).copied().flatten() == Some(&b"-"[..]) {
                j += 1;
            }
            j += 1;
            if words.get(j).copied().flatten() == Some(&b"-c"[..]) {
                j += 1;
            }
            if j >= words.len() {
                return None;
            }
            vec![(j, "the command of `sg`")]
        }
        b"watch" => {
            let all = operands(words, program + 1, b"nq", &[b"--interval"]);
            let exec = words[program + 1..all.first().copied().unwrap_or(words.len())]
                .iter()
                .any(|w| w.is_some_and(|w| w == b"-x" || w == b"--exec"));
            if exec || all.is_empty() {
                return None;
            }
            all.into_iter()
                .map(|j| (j, "the command of `watch`"))
                .collect()
        }
        b"awk" | b"gawk" | b"mawk" | b"nawk" => {
            let (_, data) = awk(words, program + 1)?;
            // Only what comes from a value: a plain word holds none.
            data.into_iter()
                .filter(|&j| words[j].is_none())
                .map(|j| (j, AWK))
                .collect()
        }
        b"parallel" => {
            let (command, sources) = parallel(words, program + 1)?;
            let runs = if command.is_empty() { sources } else { command };
            runs.into_iter().map(|j| (j, PARALLEL)).collect()
        }
        b"ssh" => {
            let all = operands(words, program + 1, SSH_TAKES, &[]);
            all.into_iter().skip(1).map(|j| (j, SSH_COMMAND)).collect()
        }
        _ => return None,
    };
    Some(found)
}

/// The place of what an awk program that runs commands is given.
pub const AWK: &str = "the data of an `awk` program that runs commands (`system()`, `print | \
                       \"cmd\"`), which may paste it into one (leave the value out of awk and \
                       let the command read it quoted from the environment: `system(\"rm -- \
                       \\\"$ACTIOND_ARG_NAME\\\"\")`)";

/// An awk program in plain text (the first operand, unless `-f`/`--file` names its file)
/// that runs commands: `system()`, or a pipe to or from one (`print | "cmd"`, `"cmd" |
/// getline`, `|&`; `||` is no pipe). When it does: the program's index and the indexes of
/// the words that give it data (`-v NAME=VALUE`, its operands, which are files or `NAME=VALUE`
/// assignments).
pub(super) fn awk(words: &[Option<&[u8]>], from: usize) -> Option<(usize, Vec<usize>)> {
    const TAKES: &[&[u8]] = &[
        b"-F",
        b"-v",
        b"-f",
        b"--assign",
        b"--field-separator",
        b"--file",
    ];
    let mut data = Vec::new();
    let mut j = from;
    let mut file = false;
    while let Some(&w) = words.get(j) {
        let Some(w) = w else { break };
        if w == b"--" {
            j += 1;
            break;
        }
        if w.len() < 2 || w[0] != b'-' {
            break;
        }
        file |= w == b"-f" || w == b"--file" || w.starts_with(b"--file=");
        if TAKES.contains(&w) {
            if w == b"-v" || w == b"--assign" {
                data.push(j + 1);
            }
            j += 2;
        } else {
            if w.starts_with(b"-v") || w.starts_with(b"--assign=") {
                data.push(j);
            }
            j += 1;
        }
    }
    if file {
        return None;
    }
    let program = words.get(j).copied().flatten()?;
    let pipe = program
        .windows(2)
        .enumerate()
        .any(|(k, p)| p[0] == b'|' && p[1] != b'|' && (k == 0 || program[k - 1] != b'|'));
    let runs = program.windows(6).any(|p| p == b"system") || pipe || program.ends_with(b"|");
    if !runs {
        return None;
    }
    data.extend(j + 1..words.len());
    data.retain(|&k| k < words.len());
    Some((j, data))
}

/// Whether an awk program is one `BEGIN { … }` block with no `getline`: awk then reads no
/// input at all.
fn begin_only(program: &[u8]) -> bool {
    let text = program.trim_ascii();
    let Some(rest) = text.strip_prefix(b"BEGIN") else {
        return false;
    };
    let rest = rest.trim_ascii_start();
    if rest.first() != Some(&b'{') || program.windows(7).any(|p| p == b"getline") {
        return false;
    }
    // The brace that closes the block, outside strings, must be the program's end.
    let (mut depth, mut string, mut escaped) = (0usize, false, false);
    for (k, &c) in rest.iter().enumerate() {
        match c {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'"' => string = !string,
            b'{' if !string => depth += 1,
            b'}' if !string => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return k + 1 == rest.len();
                }
            }
            _ => {}
        }
    }
    false
}

/// `ssh`'s short options that take a word.
const SSH_TAKES: &[u8] = b"BbcDEeFIiJLlmOopQRSWw";

/// The place of the command GNU `parallel` joins from its words and runs with a shell.
pub const PARALLEL: &str = "the command GNU `parallel` runs through a shell (give it the \
                            value after `:::` as `{}`, `parallel rm -- {} ::: \"$NAME\"`, or use \
                            `parallel -q`)";

/// The command GNU `parallel` runs, when its words from `from` on give one and no `:::`
/// argument stands in it (`parallel rm -- {} ::: ARGS`): its index, for `known` to weigh as
/// the program.
pub fn parallel_command(words: &[Option<&[u8]>], from: usize) -> Option<usize> {
    let (command, _) = parallel(words, from)?;
    command.first().copied()
}

/// GNU `parallel`'s words from `from` on: the indexes of its command (which it joins and
/// runs through a shell: a value there is split and is code), and of the arguments after
/// `:::` (each quoted into the command, or, when it has no command, run as one). `None` with
/// `-q`/`--quote`, which quotes the command's words too. Options that take a word are
/// skipped; an unknown one's word counts as the command, which only reads more as code.
fn parallel(words: &[Option<&[u8]>], from: usize) -> Option<(Vec<usize>, Vec<usize>)> {
    const LONG: &[&[u8]] = &[
        b"--arg-file",
        b"--colsep",
        b"--delimiter",
        b"--jobs",
        b"--joblog",
        b"--results",
        b"--delay",
        b"--timeout",
        b"--retries",
        b"--sshlogin",
        b"--tagstring",
        b"--halt",
        b"--memfree",
        b"--load",
        b"--workdir",
        b"--env",
        b"--max-args",
        b"--max-replace-args",
    ];
    let options = &words[from.min(words.len())..];
    let quote = options
        .iter()
        .take_while(|w| w.is_none_or(|w| !w.starts_with(b":::")))
        .any(|w| {
            w.is_some_and(|w| {
                w == b"--quote"
                    || (w.len() > 1 && w[0] == b'-' && w[1] != b'-' && w[1..].contains(&b'q'))
            })
        });
    let all = operands(words, from, b"aCdEIjLNnPSs", LONG);
    let separator = |j: &usize| words[*j].is_some_and(|w| w.starts_with(b":::"));
    let command: Vec<usize> = all.iter().copied().take_while(|j| !separator(j)).collect();
    // `:::` and `:::+` are followed by arguments, `::::` by the files that hold them.
    let mut sources = Vec::new();
    let mut arguments = false;
    for &j in all.iter().skip(command.len()) {
        match words[j] {
            Some(w) if w.starts_with(b":::") => arguments = !w.starts_with(b"::::"),
            _ if arguments => sources.push(j),
            _ => {}
        }
    }
    if quote && !command.is_empty() {
        return None;
    }
    Some((command, sources))
}

/// The indexes of the operands from `from` on: the words after the options, where the short
/// options in `takes` and the long ones in `long` take the next word. Options end at the
/// first operand or after `--`. A word from an expansion is an operand (it may be anything).
fn operands(words: &[Option<&[u8]>], from: usize, takes: &[u8], long: &[&[u8]]) -> Vec<usize> {
    let mut j = from;
    while let Some(w) = words.get(j) {
        let Some(w) = w else { break };
        if *w == b"--" {
            j += 1;
            break;
        }
        if w.len() < 2 || w[0] != b'-' {
            break;
        }
        let next = if w.starts_with(b"--") {
            long.contains(w)
        } else {
            // `-w5` holds its word; `-w 5` and `-xw 5` take the next.
            let letters = &w[1..];
            letters
                .iter()
                .position(|c| takes.contains(c))
                .is_some_and(|k| k == letters.len() - 1)
        };
        j += if next { 2 } else { 1 };
    }
    (j.min(words.len())..words.len()).collect()
}

/// The word a short option `letter` (glued into a cluster, `-qc`) or its long form takes.
fn short_option(
    words: &[Option<&[u8]>],
    from: usize,
    letter: u8,
    long: &[u8],
    takes: &[u8],
) -> Vec<usize> {
    let mut out = Vec::new();
    let mut j = from;
    while j < words.len() {
        let Some(w) = words[j] else {
            j += 1;
            continue;
        };
        if w == b"--" {
            break;
        }
        if w == long && j + 1 < words.len() {
            out.push(j + 1);
        } else if w.starts_with(long) && w.get(long.len()) == Some(&b'=') {
            out.push(j);
        } else if w.len() > 1 && w[0] == b'-' && w[1] != b'-' {
            let letters = &w[1..];
            if let Some(k) = letters
                .iter()
                .position(|c| *c == letter || takes.contains(c))
            {
                if letters[k] == letter {
                    out.push(if k + 1 == letters.len() { j + 1 } else { j });
                }
                if k + 1 == letters.len() {
                    j += 1;
                }
            }
        }
        j += 1;
    }
    out.retain(|&k| k < words.len());
    out
}

/// A wrapper: its name, its short options that take a word, its long ones that do, and how
/// many operands come before the program it runs (`timeout DURATION`).
type Wrapper = (
    &'static [u8],
    &'static [u8],
    &'static [&'static [u8]],
    usize,
);

/// The wrappers that run another program.
const WRAPPERS: &[Wrapper] = &[
    (b"env", b"uCS", &[b"--unset", b"--chdir"], 0),
    (b"exec", b"a", &[], 0),
    (b"command", b"", &[], 0),
    (b"builtin", b"", &[], 0),
    (b"nohup", b"", &[], 0),
    (b"setsid", b"", &[], 0),
    (b"nice", b"n", &[b"--adjustment"], 0),
    (b"ionice", b"cnp", &[b"--class", b"--classdata"], 0),
    (b"stdbuf", b"ioe", &[], 0),
    (b"timeout", b"sk", &[b"--signal", b"--kill-after"], 1),
    (
        b"sudo",
        b"ugpChDrtUTR",
        &[b"--user", b"--group", b"--prompt", b"--chdir"],
        0,
    ),
    (b"doas", b"uC", &[], 0),
    // `sshpass -f FILE ssh HOST CMD`: the password's source, then the program.
    (b"sshpass", b"fdpP", &[], 0),
    (b"chroot", b"", &[], 1),
    (b"flock", b"wE", &[b"--timeout", b"--conflict-exit-code"], 1),
    (
        b"xargs",
        b"adEILnPs",
        &[b"--arg-file", b"--delimiter", b"--max-args", b"--max-procs"],
        0,
    ),
    (b"time", b"fo", &[b"--format", b"--output"], 0),
    (b"busybox", b"", &[], 0),
];

/// The indexes of the words that name what the command runs: its name, and behind each
/// wrapper the program it runs (`env A=1 nohup timeout 5 prog`: `env`, `nohup`, `timeout`,
/// `prog`). It ends at a word from an expansion or a value, which may be any program.
pub fn chain(words: &[Option<&[u8]>]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        out.push(i);
        let Some(w) = words[i] else { break };
        let name = base(w);
        // `find … -exec PROG ARGS {} ;` runs PROG (its first `-exec`, `-execdir`, `-ok` or
        // `-okdir`): the rules of what it runs hold there as behind any wrapper.
        if name == b"find" {
            let exec = (i + 1..words.len())
                .find(|&j| matches!(words[j], Some(b"-exec" | b"-execdir" | b"-ok" | b"-okdir")));
            match exec {
                Some(e) if e + 1 < words.len() => {
                    i = e + 1;
                    continue;
                }
                _ => break,
            }
        }
        let Some((_, takes, long, skip)) = WRAPPERS.iter().find(|(n, ..)| *n == name) else {
            break;
        };
        let mut rest = operands(words, i + 1, takes, long);
        if name == b"env" {
            // `env NAME=value … PROGRAM`.
            rest.retain(|&j| words[j].is_none_or(|v| !v.contains(&b'=')));
        }
        if name == b"flock"
            && rest
                .get(1)
                .is_some_and(|&j| matches!(words[j], Some(b"-c" | b"--command")))
        {
            break;
        }
        match rest.get(*skip) {
            Some(&j) if j > i => i = j,
            _ => break,
        }
    }
    out
}

/// The words that choose what runs: every word of `chain`, and the script file of a shell
/// it ends in that has no `-c` or `-s` (`sh FILE`).
pub fn programs(words: &[Option<&[u8]>]) -> Vec<(usize, &'static str)> {
    let chained = chain(words);
    let mut out: Vec<(usize, &'static str)> = chained.iter().map(|&i| (i, PROGRAM)).collect();
    let Some(&last) = chained.last() else {
        return out;
    };
    if let Some(ShellInput::File(j)) = shell_input(words, last) {
        out.push((j, SCRIPT_FILE));
    }
    out
}

/// Where a shell at `i` reads its script from, when it has no `-c`.
enum ShellInput {
    /// Its standard input (no operand, `-s`, or an operand such as `/dev/stdin`).
    Stdin,
    /// The file of the word at this index.
    File(usize),
}

fn shell_input(words: &[Option<&[u8]>], i: usize) -> Option<ShellInput> {
    let w = words.get(i).copied().flatten()?;
    let from = match base(w) {
        b"busybox" if is_shell(words, i + 1) => i + 2,
        name if SHELLS.contains(&name) => i + 1,
        _ => return None,
    };
    let mut stdin = false;
    let mut j = from;
    while let Some(w) = words.get(j) {
        // An option from an expansion could be `-c`: `scripts` has every word as a script.
        let w = (*w)?;
        if w == b"--" {
            j += 1;
            break;
        }
        if w.len() < 2 || !matches!(w[0], b'-' | b'+') {
            break;
        }
        if w.starts_with(b"--") {
            let takes = w == b"--rcfile" || w == b"--init-file";
            j += if takes { 2 } else { 1 };
            continue;
        }
        if w[1..].contains(&b'c') {
            return None;
        }
        stdin |= w[0] == b'-' && w[1..].contains(&b's');
        j += if w[1..].iter().any(|&c| c == b'o' || c == b'O') {
            2
        } else {
            1
        };
    }
    match words.get(j) {
        _ if stdin => Some(ShellInput::Stdin),
        None => Some(ShellInput::Stdin),
        Some(Some(w)) if is_input_path(w) => Some(ShellInput::Stdin),
        Some(_) => Some(ShellInput::File(j)),
    }
}

/// Where the positional parameters of a script a shell reads from its standard input start
/// (`sh -s -- ARGS`, `sh /dev/stdin ARGS`): the words from there on are its `$1`, `$2`, ….
pub fn stdin_arguments(words: &[Option<&[u8]>]) -> Option<usize> {
    let &last = chain(words).last()?;
    let w = words[last]?;
    let from = if base(w) == b"busybox" {
        last + 2
    } else {
        last + 1
    };
    if !matches!(shell_input(words, last)?, ShellInput::Stdin) {
        return None;
    }
    let rest = operands(words, from, b"oO", &[b"--rcfile", b"--init-file"]);
    let first = *rest.first()?;
    let path = words[first].is_some_and(|w| w != b"-" && is_input_path(w));
    Some(if path { first + 1 } else { first })
}

/// What the command does with its standard input, when it reads it as more than data: a
/// shell with no `-c` runs it (also `sh -s ARGS`, `sh /dev/stdin`, `bash /proc/self/fd/0`),
/// so do `.` and `source` of such a path, and `at` and `batch`; `xargs` splits it into
/// arguments, unless it reads items separated by NUL (`-0`, `--null`), each of them one
/// argument whole.
pub fn stdin(words: &[Option<&[u8]>]) -> Option<Stdin> {
    for &i in chain(words).iter().rev() {
        if let Some(ShellInput::Stdin) = shell_input(words, i) {
            return Some(Stdin::Code(STDIN_SCRIPT));
        }
        let Some(w) = words[i] else { continue };
        let rest = &words[i + 1..];
        let has = |options: &[&[u8]]| rest.iter().any(|w| w.is_some_and(|w| options.contains(&w)));
        match base(w) {
            b"." | b"source" if rest.first().copied().flatten().is_some_and(is_input_path) => {
                return Some(Stdin::Code(
                    "the file `.` runs, which is its standard input",
                ));
            }
            b"at" | b"batch" if !has(&[b"-f", b"-l", b"-r", b"-d", b"-c"]) => {
                return Some(Stdin::Code(
                    "the commands `at` reads from its standard input",
                ));
            }
            // `su USER` and `runuser USER` with no `-c` start USER's shell on it.
            b"su" | b"runuser" if runs_login_shell(words, i + 1) => {
                return Some(Stdin::Code(LOGIN_SHELL));
            }
            // `sudo -s`, `sudo -i` (`--shell`, `--login`) and `doas -s` with no command start
            // a shell on it: the chain ends at sudo, whose program would be the next.
            b"sudo" | b"doas" if chain(words).last() == Some(&i) && shell_flag(rest) => {
                return Some(Stdin::Code(
                    "the commands the shell of `sudo -s` or `sudo -i` (`doas -s`) reads from its \
                     standard input (give it the command: `sudo -u USER sh -c 'cmd \"$1\"' sh \
                     \"$NAME\"`)",
                ));
            }
            // `runuser -u USER [--] PROGRAM …` runs PROGRAM, which has its input.
            b"runuser" => {
                let user = rest
                    .iter()
                    .position(|w| w.is_some_and(|w| w == b"-u" || w == b"--user"));
                if let Some(u) = user {
                    let mut from = i + 1 + u + 2;
                    if words.get(from).copied().flatten() == Some(&b"--"[..]) {
                        from += 1;
                    }
                    if let Some(found) = words.get(from..).and_then(stdin) {
                        return Some(found);
                    }
                }
            }
            // `ssh HOST` with no command: the login shell on the other host reads it (a
            // command given is a script, read as one, `ssh HOST sh` included).
            b"ssh" => {
                let all = operands(words, i + 1, SSH_TAKES, &[]);
                let off = rest[..all.first().map_or(rest.len(), |&j| j - i - 1)]
                    .iter()
                    .any(|w| {
                        w.is_some_and(|w| {
                            w.len() > 1 && w[0] == b'-' && w[1..].iter().any(|c| b"nNf".contains(c))
                        })
                    });
                if all.len() == 1 && !off {
                    return Some(Stdin::Code(
                        "the commands the login shell of `ssh HOST` reads from its standard \
                         input (name the program that reads it, `ssh HOST 'cat > \
                         /srv/notes/note.txt'`, or use `ssh -n`)",
                    ));
                }
            }
            // `docker exec -i` hands it to the program it starts in the container; what
            // `docker run -i` starts is the image's (`sh` in many).
            b"docker" | b"podman" if interactive(rest) => {
                if let Some(found) = container_stdin(rest) {
                    return Some(found);
                }
            }
            // An awk program that runs commands may paste a line it reads into one.
            b"awk" | b"gawk" | b"mawk" | b"nawk" => {
                let program = awk(words, i + 1).and_then(|(j, _)| words[j]);
                if program.is_some_and(|p| !begin_only(p)) {
                    return Some(Stdin::Code(AWK));
                }
            }
            // GNU `parallel` with no command runs each line it reads as one.
            b"parallel"
                if parallel(words, i + 1).is_some_and(|(c, s)| c.is_empty() && s.is_empty()) =>
            {
                return Some(Stdin::Code(
                    "the commands GNU `parallel` with no command reads from its standard input \
                     (give it a command, `parallel rm --`, which gets each line quoted)",
                ));
            }
            b"xargs" => {
                // `-0`, or a cluster of flags holding it (`-r0`); `-n10` is no such cluster.
                let null = rest.iter().any(|w| {
                    w.is_some_and(|w| {
                        w == b"--null"
                            || (w.len() > 1
                                && w[0] == b'-'
                                && w[1..].contains(&b'0')
                                && w[1..].iter().all(|c| b"0prtx".contains(c)))
                    })
                });
                let file = has(&[b"-a", b"--arg-file"]);
                if !null && !file {
                    return Some(Stdin::Split(XARGS_INPUT));
                }
                // Each item whole, as an argument of its program (or pasted into its words by
                // `-I`): only a program known to take such arguments as data.
                if null && !file {
                    let ch = chain(words);
                    let next = ch.iter().position(|&k| k == i).and_then(|p| ch.get(p + 1));
                    match next.map(|&k| words[k].map(base)) {
                        None => {}
                        Some(Some(p)) if XARGS_DATA.contains(&p) => {}
                        Some(Some(b"kill" | b"pkill" | b"pgrep" | b"killall")) => {
                            return Some(Stdin::Signal(XARGS_ITEMS));
                        }
                        _ => return Some(Stdin::Code(XARGS_ITEMS)),
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// The place of what `su USER` or `runuser USER` (no `-c`) reads.
pub const LOGIN_SHELL: &str = "the commands the shell of `su USER` reads from its standard input \
                               (give it the command with `-c` and the value as its `$1`: `su \
                               USER -c 'cmd \"$1\"' -- sh \"$NAME\"`, or pipe the value into a \
                               program, `su USER -c cat`)";

/// Whether `su`/`runuser` with the words from `from` on starts a shell that reads its
/// standard input: no `-c`/`--command`, and for `runuser`, no `-u USER` (which runs the
/// command after it: `runuser -u pi -- prog`, weighed as that program).
fn runs_login_shell(words: &[Option<&[u8]>], from: usize) -> bool {
    let rest = &words[from.min(words.len())..];
    let command = !short_option(words, from, b'c', b"--command", b"sgGwu").is_empty()
        || rest.iter().any(|w| {
            w.is_some_and(|w| w.starts_with(b"--command") || w == b"-u" || w == b"--user")
        });
    // A word from an expansion could be `-c`: then it is a script `scripts` reads.
    !command && rest.iter().all(Option::is_some)
}

/// Whether `sudo`'s or `doas`'s words hold `-s`/`-i`/`--shell`/`--login` (also in a cluster:
/// `-Es`); only asked when sudo runs no command.
fn shell_flag(rest: &[Option<&[u8]>]) -> bool {
    rest.iter()
        .flatten()
        .filter(|w| w.starts_with(b"-"))
        .any(|w| {
            matches!(*w, b"--shell" | b"--login")
                || (w.len() > 1
                    && w[1] != b'-'
                    && w[1..].iter().all(u8::is_ascii_alphabetic)
                    && w[1..].iter().any(|c| matches!(c, b's' | b'i')))
        })
}

/// Whether `docker`/`podman`'s words hold `-i`/`--interactive` (also in a cluster, `-it`).
fn interactive(rest: &[Option<&[u8]>]) -> bool {
    rest.iter().any(|w| {
        w.is_some_and(|w| {
            w == b"--interactive"
                || w == b"--interactive=true"
                || (w.len() > 1
                    && w[0] == b'-'
                    && w[1] != b'-'
                    && w[1..].iter().all(|c| c.is_ascii_alphabetic())
                    && w[1..].contains(&b'i'))
        })
    })
}

/// What a container's program does with the standard input `docker`/`podman` hands it: for
/// `exec`, the first program found among the words (their options are not read, so each
/// word from the container's on is tried as the program); for `run`, the image's own
/// program unless a word names one.
fn container_stdin(rest: &[Option<&[u8]>]) -> Option<Stdin> {
    let sub = rest
        .iter()
        .position(|w| w.is_some_and(|w| w == b"exec" || w == b"run"))?;
    let found = (sub + 1..rest.len()).find_map(|k| stdin(&rest[k..]));
    match found {
        Some(f) => Some(f),
        None if rest[sub] == Some(&b"run"[..]) => Some(Stdin::Code(
            "the program a container image runs (a shell in many) on its standard input",
        )),
        None => None,
    }
}

/// A shell's options from `from` on: the script's index when one holds `c`.
fn shell_script(words: &[Option<&[u8]>], from: usize) -> Vec<(usize, &'static str)> {
    let mut command = false;
    let mut j = from;
    while let Some(w) = words.get(j) {
        let Some(w) = w else {
            // An option from an expansion: any word from here on may be the script.
            return (j..words.len()).map(|k| (k, SCRIPT)).collect();
        };
        if *w == b"--" || *w == b"-" {
            j += 1;
            break;
        }
        if w.len() < 2 || !matches!(w[0], b'-' | b'+') {
            break;
        }
        if w.starts_with(b"--") {
            // `--rcfile FILE` and `--init-file FILE` take a word.
            let takes = *w == b"--rcfile" || *w == b"--init-file";
            j += if takes { 2 } else { 1 };
            continue;
        }
        command |= w[1..].contains(&b'c');
        // `-o OPTION` and `-O OPTION` take a word.
        j += if w[1..].iter().any(|&c| c == b'o' || c == b'O') {
            2
        } else {
            1
        };
    }
    if command && j < words.len() {
        vec![(j, SCRIPT)]
    } else {
        Vec::new()
    }
}

/// The word after one of `options` (or glued to it, `-cSCRIPT`, `--command=SCRIPT`).
fn option_argument(
    words: &[Option<&[u8]>],
    from: usize,
    options: &[&[u8]],
    what: &'static str,
) -> Vec<(usize, &'static str)> {
    let mut out = Vec::new();
    for j in from..words.len() {
        let Some(w) = words[j] else { continue };
        if options.contains(&w) && j + 1 < words.len() {
            out.push((j + 1, what));
        } else if options
            .iter()
            .any(|o| w.len() > o.len() && w.starts_with(o))
        {
            out.push((j, what));
        }
    }
    out
}

#[cfg(test)]
mod tests;
