//! What programs do with files besides reading them as data, for `filed`: the files an awk
//! or sed program (written out in the command) writes into (awk's `print > "FILE"`, sed's `w
//! FILE` after any address, an `s` command's `w` flag), whether such a program runs what it
//! reads (awk's `system()` and pipes, sed's `e`), the files a program reads as its own
//! program (`sed -f`, `vim -S`, …), and a shell's script behind a wrapper actiond does not
//! know. Pure: it reads the words and the program text, never a file, and judges nothing.

use super::base;

/// The program text of `awk` or `sed` (its first word that is no option, or that of `-e`),
/// when it is written out.
pub(super) fn script_operand<'a>(words: &[Option<&'a [u8]>]) -> Option<&'a [u8]> {
    let mut k = 1;
    while k < words.len() {
        match words[k] {
            Some(b"-e" | b"--expression") => return words.get(k + 1).copied().flatten(),
            Some(b"-f" | b"--file") => return None,
            Some(w) if w.starts_with(b"-") => k += 1,
            w => return w,
        }
    }
    None
}

/// Every expression of a `sed` command (`words` from its name on): each `-e TEXT`
/// (`-eTEXT`, `--expression=TEXT`), or, with none, its first operand.
pub(super) fn sed_expressions<'a>(words: &[Option<&'a [u8]>]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut k = 1;
    while k < words.len() {
        match words[k] {
            Some(b"-e" | b"--expression") => {
                out.extend(words.get(k + 1).copied().flatten());
                k += 1;
            }
            Some(w) if w.starts_with(b"--expression=") => out.push(&w[13..]),
            Some(w) if w.starts_with(b"-e") && w.len() > 2 => out.push(&w[2..]),
            _ => {}
        }
        k += 1;
    }
    if out.is_empty() {
        out.extend(script_operand(words));
    }
    out
}

/// The files an awk program redirects its output to (`print > "FILE"`, `>> "FILE"`, `|
/// "CMD"` is `launchers`'): a name in quotes, or any file (`None`) for one an expression
/// makes.
pub(super) fn awk_writes(text: &[u8]) -> Vec<Option<&[u8]>> {
    let mut out = Vec::new();
    let mut k = 0;
    // A `>` redirects only in a `print` or `printf` statement, outside parentheses (else it
    // compares: `$1 > 5`).
    let in_print = |k: usize| {
        let from = text[..k]
            .iter()
            .rposition(|c| b";{}\n".contains(c))
            .map_or(0, |p| p + 1);
        let statement = &text[from..k];
        let start = statement
            .iter()
            .position(|&c| c != b' ' && c != b'\t')
            .unwrap_or(0);
        let open = statement.iter().filter(|&&c| c == b'(').count();
        let close = statement.iter().filter(|&&c| c == b')').count();
        statement[start..].starts_with(b"print") && open == close
    };
    while k < text.len() {
        if text[k] == b'>' && in_print(k) {
            let mut j = k + 1;
            while j < text.len() && (text[j] == b'>' || text[j] == b' ') {
                j += 1;
            }
            if text.get(j) == Some(&b'"') {
                let end = text[j + 1..]
                    .iter()
                    .position(|&c| c == b'"')
                    .map_or(text.len(), |e| j + 1 + e);
                out.push(Some(&text[j + 1..end]));
                k = end;
            } else {
                out.push(None);
                k = j;
            }
        }
        k += 1;
    }
    out
}

/// The commands of a sed script, each as its letter and where it stands; an `s` command
/// with where its flags start (after `s/RE/REPLACEMENT/`), as `(b's', flags)`. Addresses are
/// skipped (`sed_address`). One reading for `sed_writes` and `sed_runs`.
fn sed_commands(text: &[u8]) -> Vec<(u8, usize)> {
    let mut out = Vec::new();
    let mut k = 0;
    let mut command = true;
    while k < text.len() {
        if command {
            // The address before a command (`1w F`, `/re/w F`, `1,$!w F`).
            k = sed_address(text, k);
            if k >= text.len() {
                break;
            }
        }
        let c = text[k];
        if command && c == b's' && k + 1 < text.len() {
            // `s/RE/REPLACEMENT/FLAGS`: skip the two parts; the flags follow.
            let d = text[k + 1];
            let mut j = k + 2;
            let mut parts = 0;
            while j < text.len() && parts < 2 {
                if text[j] == b'\\' {
                    j += 1;
                } else if text[j] == d {
                    parts += 1;
                }
                j += 1;
            }
            out.push((b's', j.min(text.len())));
            while j < text.len() && text[j].is_ascii_alphanumeric() {
                j += 1;
            }
            k = j;
            command = false;
            continue;
        }
        if command && !c.is_ascii_whitespace() && !matches!(c, b';' | b'{' | b'}') {
            out.push((c, k));
        }
        command = matches!(c, b';' | b'\n' | b'{' | b'}') || (command && c == b' ');
        k += 1;
    }
    out
}

/// The flags of the `s` command whose flags start at `at`, each with where it stands; `w`
/// ends them (its file name follows).
fn s_flags(text: &[u8], at: usize) -> impl Iterator<Item = (usize, u8)> + '_ {
    let flags = text[at..].iter().take_while(|c| c.is_ascii_alphanumeric());
    flags.enumerate().scan(false, move |done, (i, &c)| {
        (!*done).then(|| {
            *done = c == b'w';
            (at + i, c)
        })
    })
}

/// The files a sed script writes with its `w` command or an `s` command's `w` flag (GNU
/// sed), each name to the end of its line.
pub(super) fn sed_writes(text: &[u8]) -> Vec<Option<&[u8]>> {
    let name_at = |from: usize| {
        let rest = &text[from..];
        let start = rest.iter().position(|&c| c != b' ').unwrap_or(rest.len());
        let end = rest[start..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(rest.len(), |e| start + e);
        Some(&rest[start..end]).filter(|n| !n.is_empty())
    };
    let mut out = Vec::new();
    for (c, at) in sed_commands(text) {
        match c {
            // `w FILE`, and GNU's `W FILE` (the first line of the pattern space).
            b'w' | b'W' => out.push(name_at(at + 1)),
            b's' => {
                if let Some((w, _)) = s_flags(text, at).find(|&(_, f)| f == b'w') {
                    out.push(name_at(w + 1));
                }
            }
            _ => {}
        }
    }
    out
}

/// Where the command of a sed script starts at `k`, after the address before it, if any: a
/// line number, `$`, `/RE/` or `\cREc`, GNU's `first~step`, a second one after `,` (also
/// `+N`, `~N`), and `!`, with blanks between.
fn sed_address(text: &[u8], mut k: usize) -> usize {
    let blanks = |mut k: usize| {
        while k < text.len() && (text[k] == b' ' || text[k] == b'\t') {
            k += 1;
        }
        k
    };
    let one = |mut k: usize| {
        let regex = |mut j: usize, d: u8| {
            while j < text.len() && text[j] != d {
                j += if text[j] == b'\\' { 2 } else { 1 };
            }
            // Its flags (`I`, `M`).
            j += 1;
            while j < text.len() && (text[j] == b'I' || text[j] == b'M') {
                j += 1;
            }
            j
        };
        match text.get(k) {
            Some(b'/') => regex(k + 1, b'/'),
            Some(b'\\') if k + 1 < text.len() => regex(k + 2, text[k + 1]),
            Some(b'$') => k + 1,
            _ => {
                while k < text.len() && (text[k].is_ascii_digit() || b"~+".contains(&text[k])) {
                    k += 1;
                }
                k
            }
        }
    };
    k = one(blanks(k));
    k = blanks(k);
    if text.get(k) == Some(&b',') {
        k = one(blanks(k + 1));
        k = blanks(k);
    }
    if text.get(k) == Some(&b'!') {
        k = blanks(k + 1);
    }
    k.min(text.len())
}

/// Programs (by name), the short letters and the long names of their script-file options.
type ScriptOptions = (
    &'static [&'static [u8]],
    &'static [u8],
    &'static [&'static [u8]],
);

/// The options (short letters, long names) whose file a program reads as its own program,
/// for programs whose other file operands are data or whose words the model otherwise
/// leaves alone: `sed -f`, `awk -f`, `make -f`, `vim -S`, `gdb -x`, `ssh -F` (a
/// `ProxyCommand` runs), a shell's `--rcfile`. `bc` and `m4` read every operand as code.
const SCRIPT_OPTIONS: &[ScriptOptions] = &[
    (&[b"sed", b"gsed"], b"f", &[b"file"]),
    (
        &[b"awk", b"gawk", b"mawk", b"nawk"],
        b"fEi",
        &[b"file", b"exec", b"include"],
    ),
    (
        &[b"make", b"gmake", b"bmake"],
        b"f",
        &[b"file", b"makefile"],
    ),
    (
        &[b"vim", b"vi", b"nvim", b"view", b"ex", b"vimdiff"],
        b"Su",
        &[],
    ),
    (&[b"gdb", b"lldb"], b"xs", &[b"command", b"source"]),
    (&[b"dc", b"nft", b"psql"], b"f", &[b"file"]),
    (&[b"expect", b"screen"], b"fc", &[]),
    (&[b"jq", b"gojq"], b"f", &[b"from-file"]),
    (&[b"ssh", b"scp"], b"F", &[]),
    // `sftp -b F`: a batch line `!cmd` runs a shell command.
    (&[b"sftp"], b"Fb", &[]),
    (
        &[b"sh", b"bash", b"dash", b"ash", b"ksh", b"zsh"],
        b"",
        &[b"rcfile", b"init-file"],
    ),
    (&[b"sqlite3", b"sqlite"], b"", &[b"init"]),
    // `ip -batch F` (`-b`, `-force`): a line `netns exec NS PROG` runs a program.
    (&[b"ip", b"tc", b"bridge"], b"b", &[b"batch"]),
    (&[b"lftp"], b"f", &[]),
    (&[b"batch"], b"f", &[]),
    (&[b"pip", b"pip3"], b"rc", &[b"requirement", b"constraint"]),
    (&[b"docker", b"podman"], b"", &[b"env-file"]),
];

/// The words of the program at `k` (the last of its chain of wrappers) that name a file it
/// reads as its own program (`SCRIPT_OPTIONS`, `tmux source-file F`, every operand of `bc`
/// and `m4`), each with the file's name (`-fFILE` and `--file=FILE` give theirs).
pub(super) fn script_files<'a>(words: &[Option<&'a [u8]>], k: usize) -> Vec<(usize, &'a [u8])> {
    let Some(p) = words[k].map(|w| w.rsplit(|&c| c == b'/').next().unwrap_or(w)) else {
        return Vec::new();
    };
    let rest = || (k + 1..words.len()).filter_map(|j| words[j].map(|w| (j, w)));
    // Every operand is code: a calculator's or plotter's script, a shell's that has no
    // entry of its own (`fish`), expect's, and the patches `git apply`/`git am` follow (they
    // name the files they write).
    let git_patch = p == b"git"
        && rest()
            .find(|(_, w)| !w.starts_with(b"-"))
            .is_some_and(|(_, w)| matches!(w, b"apply" | b"am"));
    if matches!(p, b"bc" | b"m4" | b"gnuplot" | b"fish" | b"expect" | b"pm2") || git_patch {
        return rest().filter(|(_, w)| !w.starts_with(b"-")).collect();
    }
    // GNU parallel's `:::: FILE`: with no command, each line runs through a shell.
    if p == b"parallel" {
        let four = rest().find(|(_, w)| *w == b"::::");
        return four.map_or_else(Vec::new, |(s, _)| {
            rest()
                .filter(|&(j, w)| j > s && !w.starts_with(b":"))
                .collect()
        });
    }
    if p == b"tmux" {
        let from = rest().find(|(_, w)| matches!(*w, b"source-file" | b"source"));
        return from.map_or_else(Vec::new, |(s, _)| {
            rest()
                .filter(|&(j, w)| j > s && !w.starts_with(b"-"))
                .collect()
        });
    }
    let Some(&(_, short, long)) = SCRIPT_OPTIONS
        .iter()
        .find(|(names, _, _)| names.contains(&p))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let next = |j: usize| words.get(j + 1).copied().flatten().map(|w| (j + 1, w));
    for (j, w) in rest() {
        if w == b"--" {
            break;
        }
        // `--file F`, `--file=F`, and sqlite3's `-init F`.
        let single = p.starts_with(b"sqlite") || matches!(p, b"ip" | b"tc" | b"bridge");
        let name = w
            .strip_prefix(b"--")
            .or_else(|| w.strip_prefix(b"-").filter(|_| single));
        if let Some(name) = name {
            for l in long {
                if name == *l {
                    out.extend(next(j));
                } else if let Some(v) = name.strip_prefix(*l).and_then(|r| r.strip_prefix(b"=")) {
                    out.push((j, v));
                }
            }
            continue;
        }
        if w.len() > 1 && w[0] == b'-' {
            // The first letter of a bundle that takes a file takes the rest of the word.
            if let Some(at) = w[1..].iter().position(|c| short.contains(c)) {
                let at = at + 1;
                if at + 1 == w.len() {
                    out.extend(next(j));
                } else {
                    out.push((j, &w[at + 1..]));
                }
            }
        }
    }
    out
}

/// The script file of a shell or an interpreter that stands behind a program actiond does
/// not know (`systemd-run --wait sh F`, `runuser -u root -- sh F`; `known::behind`): the
/// first operand after it, unless an option gives the script itself (`-c`, `-e`, `-m`).
pub(super) fn behind_any(words: &[Option<&[u8]>]) -> Vec<usize> {
    let runs = |p: &[u8]| super::programs::SHELLS.contains(&p) || super::known::interpreter(p);
    let mut out = Vec::new();
    for i in super::known::behind(words, runs) {
        if !words[i].map(base).is_some_and(runs) {
            continue;
        }
        for (j, word) in words.iter().enumerate().skip(i + 1) {
            match word {
                Some(w) if w.starts_with(b"-") => {
                    // `-c SCRIPT`, `-lc`, `-e CODE`, `-m MODULE`: no script file.
                    if !w.starts_with(b"--") && w[1..].iter().any(|c| b"cemr".contains(c)) {
                        break;
                    }
                }
                Some(_) => {
                    out.push(j);
                    break;
                }
                None => break,
            }
        }
    }
    out
}

/// The files an awk or sed program at `k` reads as commands, because its text runs what it
/// reads (awk's `system()` or a pipe, `programs::awk`; sed's `e` command or `s///e` flag):
/// each word that gives it data (its operands, or `-v`), and the files an awk program names
/// as data in its own text (`getline l < "F"`), each with the index of its word and the file's
/// name. Only for a program written out in the command.
pub(super) fn run_operands<'a>(words: &[Option<&'a [u8]>], k: usize) -> Vec<(usize, &'a [u8])> {
    let Some(p) = words[k].map(base) else {
        return Vec::new();
    };
    if matches!(p, b"awk" | b"gawk" | b"mawk" | b"nawk") {
        let Some((j, data)) = super::programs::awk(words, k + 1) else {
            return Vec::new();
        };
        let text = words[j].unwrap_or_default();
        let mut out: Vec<(usize, &[u8])> = data
            .into_iter()
            .filter_map(|i| words[i].map(|w| (i, w)))
            .collect();
        let named = quoted_names(text).into_iter();
        out.extend(
            named
                .filter(|n| super::data_named(super::normal(n)))
                .map(|n| (j, n)),
        );
        return out;
    }
    if !matches!(p, b"sed" | b"gsed") {
        return Vec::new();
    }
    // Every `-e` counts, not only the first (`sed -e p -e e F`: fe30w F7).
    if !sed_expressions(&words[k..]).into_iter().any(sed_runs) {
        return Vec::new();
    }
    // Every word after the program that is neither an option, nor an option's value, nor
    // the program text itself.
    let mut out = Vec::new();
    let mut j = k + 1;
    let mut text_seen = false;
    while j < words.len() {
        match words[j] {
            Some(b"-e" | b"--expression" | b"-f" | b"--file") => {
                text_seen |= matches!(words[j], Some(b"-e" | b"--expression"));
                j += 1;
            }
            Some(w) if w.starts_with(b"-") && w.len() > 1 => {}
            _ if !text_seen => text_seen = true,
            Some(w) => out.push((j, w)),
            None => {}
        }
        j += 1;
    }
    out
}

/// The names an awk program's text holds in double quotes (`getline l < "/srv/v.txt"`).
fn quoted_names(text: &[u8]) -> Vec<&[u8]> {
    text.split(|&c| c == b'"')
        .skip(1)
        .step_by(2)
        .filter(|n| !n.is_empty())
        .collect()
}

/// Whether a sed script runs commands: GNU sed's `e` command (after any address) or an `s`
/// command's `e` flag.
fn sed_runs(text: &[u8]) -> bool {
    sed_commands(text).into_iter().any(|(c, at)| match c {
        b'e' => true,
        b's' => s_flags(text, at).any(|(_, f)| f == b'e'),
        _ => false,
    })
}

/// Words in an interpreter's program text that run code or commands given as data
/// (`exec(open("f.txt").read())`, `system($_)`, `` `…` ``, `child_process`).
const RUNS_CODE: &[&[u8]] = &[
    b"exec",
    b"eval",
    b"system",
    b"popen",
    b"subprocess",
    b"spawn",
    b"child_process",
    b"qx",
    b"passthru",
    b"compile",
    b"__import__",
    b"importlib",
    b"`",
];

/// The files named as data that an interpreter's program text written in the command
/// (`python3 -c`, `perl -e`: `known::program_texts`) may run: when the text holds a word that
/// runs code or commands (`RUNS_CODE`), the files it names in quotes and the data-named
/// words after it (`perl -ne 'system($_)' hosts.txt`), each with its word's index.
pub(super) fn inline_runs<'a>(words: &[Option<&'a [u8]>]) -> Vec<(usize, &'a [u8])> {
    let mut out = Vec::new();
    for j in super::known::program_texts(words) {
        let Some(text) = words[j] else { continue };
        let runs = RUNS_CODE
            .iter()
            .any(|r| text.windows(r.len()).any(|w| w == *r));
        if !runs {
            continue;
        }
        let quoted = text
            .split(|&c| c == b'"' || c == b'\'')
            .skip(1)
            .step_by(2)
            .filter(|n| super::data_named(super::normal(n)));
        out.extend(quoted.map(|n| (j, n)));
        let after = words.iter().enumerate().skip(j + 1);
        out.extend(after.filter_map(|(i, w)| {
            w.filter(|w| super::data_named(super::normal(w)))
                .map(|w| (i, w))
        }));
    }
    out
}
