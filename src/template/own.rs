//! The words and the input a program reads as its own commands, beside the shell scripts
//! `programs` and `launchers` find: a `sed` script (GNU sed's `e`, `s///e` and `w` run
//! programs and write files), the operands of `sqlite3` after the database (`.shell`,
//! `.system`), the words of `git` that it runs or stores as commands (`rebase -x`,
//! `--upload-pack`, `submodule foreach`, `bisect run`, `filter-branch --*-filter`,
//! `difftool -x`, a `config` value or `-c`/`--config-env` setting of a key not known to be
//! data), `gdb -ex`, the tests of a `find` whose `-exec {}` runs what they match, and the
//! standard input of any program not known to read it as data (an interpreter with no
//! script, `sqlite3`, `gdb`, `ed`, `crontab -`, …). A list of programs is never complete,
//! so the input rule goes the other way: only the programs listed in `DATA_READERS` (and
//! `NO_INPUT`, which read none) read a value on their input as data. The same holds for what
//! a program prints of its input (`prints_input`): only those in `SINKS` (and `NO_INPUT`)
//! print none of it, any other passes it on, changed or not, to the next program of a pipe
//! (the lexer and `commands` follow that flow: `Command::output`). The audited forms of the
//! trusted programs (`curl -K`, `systemctl kill`, …) are `audit`'s table, which `words` adds
//! at the same places. Pure and syntactic like `programs`: it reads words, never values, and
//! judges nothing.

pub use super::own_git::Found;
use super::programs;
use super::reread::Rereading;

pub const SED: &str = "the script of `sed`, whose commands run programs (GNU sed's `e`, \
                       `s///e`) and read or write files (`r`, `w`): give the value to sed as \
                       a `type: int` line number (`{{ n }}p`), or search for it with `grep -F \
                       -e {{ v }}`";
pub const SQLITE: &str = "the commands of `sqlite3` (its operands after the database), where \
                          a dot-command runs programs (`.shell`, `.system`): keep the SQL in \
                          the command and pass the value as data (`sqlite3 -cmd '.parameter \
                          set @v …'` is code too), or use a `type: int` value";
pub const DEBUGGER: &str = "a debugger's command (`gdb -ex`, `lldb -o`), which runs programs \
                            (`shell`, `!`)";
pub const FOUND_PROGRAM: &str = "a test of `find` whose matches `-exec {}` runs as the \
                                 program: the value picks what runs; name the program and \
                                 pass the found path as its argument (`-exec prog {} ;`)";
pub const SIGNALLED: &str = "the processes `kill`, `pkill`, `pgrep` or `killall` picks (its \
                             words after its name)";
pub const CURL_FILE: &str = "the file name of a form field `curl -F name=@FILE` (or `<FILE`)";
pub const NAMED_BY_URL: &str = "the url of a download that names its file after it (`curl \
                                -O`, `-J`, `--remote-name-all`, `wget URL`, \
                                `--content-disposition`, `git clone URL`), in the working \
                                directory or whatever directory `--output-dir` or `-P` names: \
                                the url, or the server, picks the name there \
                                (`.bash_profile`, a table in `/etc/cron.d`, `config.yaml`); \
                                name the file yourself, with a data ending after the value \
                                (`curl -o /srv/downloads/{{ name }}.mp3 {{ url }}`, `wget -O \
                                /srv/downloads/song.mp3 {{ url }}`), or give `git clone` a \
                                directory (`git clone {{ url }} /srv/repos/NAME`)";
pub const GIT_DIR: &str = "the url of `git clone URL DIR` into a directory programs load \
                           code from: a hidden one or one below it (`~/.vim/pack/…/start/x`, \
                           whose plugins vim runs), a home directory itself (its \
                           `.bashrc`), or one under `/etc`, `/usr`, … (the repository \
                           names the files); clone into a directory of its own that \
                           nothing loads code from (`/srv/repos/NAME`)";
pub const CURL_URLENCODE: &str = "the data of `curl --data-urlencode` with no `=` written in \
                                  it, where `name@FILE` (an address, a url with a user) makes \
                                  curl read FILE and send it: write the name and `=` before \
                                  the value (`--data-urlencode \"text={{ v }}\"`)";
pub const CURL_DATA: &str = "the data of `curl -d`, `--data-binary`, `--json`, `-F` or `-H`";
pub const MAKE: &str = "a variable `make` sets from its command line (`make deploy \
                        URL={{ v }}`), whose value it reads as make text and pastes into the \
                        recipes its shell runs (`$(shell …)`, a quote that ends the recipe's): \
                        give the value to the recipe through the environment, `\"$$ACTIOND_ARG_V\"` \
                        in the Makefile";
pub const SQL: &str = "the SQL of `psql -c` or `mysql -e`, where a value can end a string and \
                       run commands (`COPY … TO PROGRAM`, `\\!`, `system`): keep the value out \
                       of the SQL text (a `type: int` may stand there)";
pub const JQ: &str = "the filter of `jq`, a program of its own (`env` and `$ENV` print the \
                      run's environment, `input_filename` and `$__loc__` what it reads): pass \
                      the value as data, `jq --arg v {{ v }} '.[$v]'`";
/// The place of a value on the input of a program that may read it as its own commands.
pub const STDIN: &str = "the standard input of a program not known to read it as data (an \
                         interpreter with no script reads its program there, `sqlite3` its \
                         dot-commands, `gdb`, `ed`, `crontab -`, `at` their commands): pass \
                         the value as an argument the program treats as data, or pipe it into \
                         a program known to read data (`cat`, `grep`, `jq`, `tee`, …)";

/// Programs that read their standard input as data only, whatever their words (checked
/// one by one: none reads commands from it). `sed` and `awk` are data readers unless their
/// script comes from the input (`-f -`), interpreters unless they have no script.
const DATA_READERS: &[&[u8]] = &[
    b"cat",
    b"tac",
    b"grep",
    b"egrep",
    b"fgrep",
    b"zgrep",
    b"rg",
    b"tee",
    b"wc",
    b"sort",
    b"uniq",
    b"head",
    b"tail",
    b"tr",
    b"cut",
    b"paste",
    b"fold",
    b"fmt",
    b"nl",
    b"rev",
    b"base64",
    b"base32",
    b"basenc",
    b"od",
    b"hexdump",
    b"xxd",
    b"gzip",
    b"gunzip",
    b"zcat",
    b"bzip2",
    b"bunzip2",
    b"xz",
    b"unxz",
    b"zstd",
    b"lz4",
    b"iconv",
    b"dd",
    b"split",
    b"column",
    b"expand",
    b"unexpand",
    b"strings",
    b"jq",
    b"yq",
    b"logger",
    b"systemd-cat",
    b"mosquitto_pub",
    b"curl",
    b"wget",
    b"nc",
    b"ncat",
    b"netcat",
    b"socat",
    b"sendmail",
    b"msmtp",
    b"ssmtp",
    b"sponge",
    b"pv",
    b"cmp",
    b"diff",
    b"comm",
    b"xmllint",
    b"gpg",
    b"tar",
    b"cpio",
    b"read",
    b"mapfile",
    b"readarray",
    b"true",
    b"false",
    b":",
    b"echo",
    b"printf",
    b"sed",
    b"awk",
    b"gawk",
    b"mawk",
    b"busybox",
    b"timeout",
    b"wall",
];

/// Programs that never read their standard input (checked one by one: `rm -i`, `cp -i` and
/// `mv -i` read a yes or no there, as data), so a value that reaches it, as it does every
/// command of a loop or a group a pipe feeds (`printf '%s\n' "$V" | while read f; do rm --
/// "$f"; done`), is not read. Neither do they print any of it (`prints_input`).
const NO_INPUT: &[&[u8]] = &[
    b"rm",
    b"rmdir",
    b"mv",
    b"cp",
    b"ln",
    b"mkdir",
    b"touch",
    b"chmod",
    b"chown",
    b"chgrp",
    b"ls",
    b"stat",
    b"basename",
    b"dirname",
    b"realpath",
    b"readlink",
    b"mktemp",
    b"sync",
    b"sleep",
    b"id",
    b"whoami",
    b"uname",
    b"test",
    b"[",
    b"cd",
    b"exit",
    b"return",
    b"shift",
    b"set",
    b"unset",
    b"export",
    b"readonly",
    b"local",
    b"wait",
    b"umask",
    b"kill",
    b"pkill",
    b"pgrep",
    b"killall",
    b"systemctl",
    b"service",
    b"journalctl",
    b"ping",
    b"notify-send",
    b"reboot",
    b"poweroff",
    b"shutdown",
];

/// Programs that hand their input to a command they run, whose use of it `programs::stdin`
/// models (`ssh HOST`, `docker exec -i`, `xargs`): judged there, not here. `sudo`, `doas`,
/// `su` and `runuser` are not among them: the program they run gets the input as it is
/// (`sudo crontab -`, `su pi -c 'crontab -'`, whose shell's programs read it, as `sh -c`'s
/// do), and a shell they start with no command is `programs::stdin`'s (`sudo -s`, `su pi`).
const PASSED_ON: &[&[u8]] = &[b"xargs", b"parallel", b"ssh", b"docker", b"podman"];

/// Interpreters that read their program from their input when given no script (the
/// options that hold one instead: `python3 -c`, `perl -e`, `node -e`).
const INTERPRETERS: &[(&[u8], &[&[u8]])] = &[
    (b"python", &[b"-c", b"-m"]),
    (b"python2", &[b"-c", b"-m"]),
    (b"python3", &[b"-c", b"-m"]),
    (b"perl", &[b"-e", b"-E"]),
    (b"ruby", &[b"-e"]),
    (b"node", &[b"-e", b"-p", b"--eval", b"--print"]),
    (b"nodejs", &[b"-e", b"-p", b"--eval", b"--print"]),
    (b"php", &[b"-r"]),
    (b"lua", &[b"-e"]),
    (b"tclsh", &[]),
    (b"Rscript", &[b"-e"]),
];

/// The Python modules known to read their standard input as data only, run with `-m`.
const DATA_MODULES: &[&[u8]] = &[b"json.tool", b"base64", b"quopri", b"gzip", b"uu"];

/// The module a Python interpreter runs (`-m M`, `-mM`), from its words after its name.
fn python_module<'a>(rest: &[Option<&'a [u8]>]) -> Option<&'a [u8]> {
    let i = rest
        .iter()
        .position(|w| w.is_some_and(|w| w.starts_with(b"-m")))?;
    match rest[i] {
        Some(b"-m") => rest.get(i + 1).copied().flatten(),
        Some(w) => Some(&w[2..]),
        None => None,
    }
}

fn base(w: &[u8]) -> &[u8] {
    w.rsplit(|&c| c == b'/').next().unwrap_or(w)
}

/// The program the command runs (behind known wrappers), and its index.
fn program<'a>(words: &[Option<&'a [u8]>]) -> Option<(usize, &'a [u8])> {
    let &i = programs::chain(words).last()?;
    Some((i, base(words[i]?)))
}

/// The words the command's program reads as its own commands. `values` are the words from
/// the command's name on (`None` where an expansion or a value makes one unknown); `texts`
/// the same words' text as far as it is known (an option's name and a setting's key).
pub fn words(values: &[Option<&[u8]>], texts: &[&[u8]]) -> Vec<Found> {
    let mut out = Vec::new();
    for i in candidates(values) {
        if let Some(name) = values[i].map(base) {
            out.extend(rules(values, texts, i, name));
            out.extend(super::audit::words(values, texts, i, name));
        }
    }
    out
}

/// The programs with rules of their own (`rules`).
const RULED: &[&[u8]] = &[
    b"sed", b"gsed", b"sqlite3", b"sqlite", b"gdb", b"lldb", b"jq", b"gojq", b"yq", b"git",
    b"psql", b"mysql", b"mariadb", b"make", b"gmake", b"bmake", b"curl", b"kill", b"pkill",
    b"pgrep", b"killall", b"skill", b"snice", b"find",
];

/// Where a program with rules of its own may stand: each word of the chain of wrappers
/// (`find … -exec` among them), and, behind a program the model does not know (a wrapper it
/// has no entry for: `taskset -c 0 sed …`, `chrt -i 0 python3 -c …`, `systemd-run --wait
/// …`), every later word that names such a program, as no list of wrappers is complete.
fn candidates(values: &[Option<&[u8]>]) -> Vec<usize> {
    super::known::behind(values, |name| {
        RULED.contains(&name) || super::audit::audited(name)
    })
}

/// The rules of the program `name` at `i`.
fn rules(values: &[Option<&[u8]>], texts: &[&[u8]], i: usize, name: &[u8]) -> Vec<Found> {
    let code = |at: usize, place| Found {
        at,
        place,
        how: Rereading::Code,
        env: None,
        leading: false,
    };
    let at = |v: Vec<usize>, place| v.into_iter().map(|j| code(j, place)).collect();
    match name {
        b"sed" | b"gsed" => at(sed(values, i), SED),
        b"sqlite3" | b"sqlite" => at(sqlite(values, i), SQLITE),
        b"gdb" | b"lldb" => at(debugger(values, i), DEBUGGER),
        b"jq" | b"gojq" | b"yq" => at(jq_filter(values, i).into_iter().collect(), JQ),
        b"psql" => at(option_words(values, i, &[b"-c"], &[b"command"]), SQL),
        b"curl" => {
            let mut found: Vec<Found> = curl_data(values, texts, i)
                .into_iter()
                .map(|j| Found {
                    how: Rereading::FileRef,
                    ..code(j, CURL_DATA)
                })
                .collect();
            found.extend(curl_files(values, texts, i).into_iter().map(|j| Found {
                how: Rereading::FileName,
                ..code(j, CURL_FILE)
            }));
            found.extend(
                curl_urlencoded(values, texts, i)
                    .into_iter()
                    .map(|j| Found {
                        how: Rereading::Sent,
                        ..code(j, CURL_URLENCODE)
                    }),
            );
            found.extend(named_by_url(values, texts, i, b"curl"));
            found
        }
        b"make" | b"gmake" | b"bmake" => at(make_variables(texts, i), MAKE),
        b"mysql" | b"mariadb" => at(option_words(values, i, &[b"-e"], &[b"execute"]), SQL),
        b"git" => {
            let mut found = super::own_git::words(values, texts, i);
            found.extend(named_by_url(values, texts, i, b"git"));
            found
        }
        b"wget" => named_by_url(values, texts, i, b"wget"),
        // Every word after the program: its process ids, patterns and names (an option's
        // value too: `kill -s`, `pkill -u`, which a choice serves as well).
        b"kill" | b"pkill" | b"pgrep" | b"killall" | b"skill" | b"snice" => (i + 1..values.len())
            .map(|j| Found {
                how: Rereading::Signal,
                ..code(j, SIGNALLED)
            })
            .collect(),
        b"find" => find(values, i)
            .into_iter()
            .map(|j| Found {
                how: Rereading::Program,
                ..code(j, FOUND_PROGRAM)
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The image archive `docker load` (or `docker import -`) reads from its input (fe30v F12).
pub const IMAGE_INPUT: &str = "the image archive `docker load` (or `docker import -`) reads \
                               from its standard input: its images and tags replace the ones an \
                               app's next start runs; load an archive of your own, which no action writes, by a name \
                               with no data ending (`docker load -i /opt/images/app.image`)";

/// Whether `docker`/`podman` (`rest`: the words after it) reads an image archive from its
/// input: `load` (or `image load`) without `-i`/`--input`, `import -`.
fn loads_images(rest: &[Option<&[u8]>], name: &[u8]) -> bool {
    if !matches!(name, b"docker" | b"podman") {
        return false;
    }
    let plain: Vec<&[u8]> = rest
        .iter()
        .flatten()
        .copied()
        .filter(|w| !w.starts_with(b"-") || *w == b"-")
        .collect();
    let verb = match plain.as_slice() {
        [b"image", verb, ..] | [verb, ..] => *verb,
        [] => return false,
    };
    let named = rest
        .iter()
        .flatten()
        .any(|w| matches!(*w, b"-i" | b"--input") || w.starts_with(b"--input="));
    (verb == b"load" && !named) || (verb == b"import" && plain.contains(&&b"-"[..]))
}

/// The place of what reaches the command's standard input when its program may read it as
/// its own commands: any program not known to read data there (`DATA_READERS`, an
/// interpreter given a script, `sed` and `awk` unless `-f -`). `None` when it reads data,
/// or when the program is unknown (a value names it, which is refused on its own).
pub fn stdin(values: &[Option<&[u8]>]) -> Option<&'static str> {
    let (i, name) = program(values)?;
    // A program that hands its input on is `programs::stdin`'s.
    let chain = programs::chain(values);
    if chain
        .iter()
        .any(|&k| values[k].is_some_and(|w| PASSED_ON.contains(&base(w))))
    {
        if loads_images(&values[i + 1..], name) {
            return Some(IMAGE_INPUT);
        }
        // `docker exec -i db psql`: the program in the container reads it, by this rule
        // (a shell there is `programs::stdin`'s).
        return container_program(values, name).and_then(|k| stdin(&values[k..]));
    }
    let rest = &values[i + 1..];
    let script_from_input = |option: &[u8]| {
        rest.windows(2).any(|p| {
            p[0] == Some(option) && p[1].is_some_and(|w| w == b"-" || programs::is_input_path(w))
        })
    };
    if matches!(name, b"sed" | b"awk" | b"gawk" | b"mawk") {
        return script_from_input(b"-f").then_some(STDIN);
    }
    // `tar -T -` reads the names to archive from the input, where a line `-C` or `--…` is
    // an option (`-C /etc` then `shadow`).
    if name == b"tar" {
        let list = rest.iter().flatten().any(|w| {
            matches!(*w, b"-T-" | b"--files-from=-")
                || w.strip_prefix(b"--files-from=")
                    .is_some_and(programs::is_input_path)
        });
        return (list || script_from_input(b"-T") || script_from_input(b"--files-from"))
            .then_some(STDIN);
    }
    // `systemctl edit --stdin UNIT` writes its input into a drop-in (`ExecStartPre=`), which
    // systemd runs (fe30u F9).
    if name == b"systemctl" {
        let edit = rest.iter().flatten().any(|w| *w == b"edit");
        return (edit && rest.iter().flatten().any(|w| *w == b"--stdin")).then_some(STDIN);
    }
    // `curl -K -` reads its options from the input (`output = /etc/…`, `upload-file`).
    if name == b"curl" {
        let config = rest.iter().flatten().any(|w| {
            matches!(*w, b"-K-" | b"--config=-")
                || w.strip_prefix(b"--config=")
                    .is_some_and(programs::is_input_path)
        });
        return (config || script_from_input(b"-K") || script_from_input(b"--config"))
            .then_some(STDIN);
    }
    if DATA_READERS.contains(&name)
        || programs::CHECKSUMS.contains(&name)
        || NO_INPUT.contains(&name)
    {
        return None;
    }
    // `sudo -S -v`, with no program: it reads a password there.
    if matches!(name, b"sudo" | b"doas") {
        return None;
    }
    if matches!(name, b"su" | b"runuser") {
        // `runuser -u pi -- PROG`: PROG gets the input.
        if let Some(k) = rest.iter().position(|w| *w == Some(&b"--"[..]))
            && k + 1 < rest.len()
        {
            return stdin(&rest[k + 1..]);
        }
        // `su pi -c SCRIPT`: the script's commands read it, each judged with it (the script
        // is read with what reaches the shell's input). With no script, `su pi` runs what it
        // reads, which is `programs::stdin`'s.
        let script = rest.iter().flatten().any(|w| {
            *w == b"-c"
                || w.starts_with(b"--command")
                || (w.len() > 1 && w[0] == b'-' && w[1] != b'-' && w.contains(&b'c'))
        });
        return (!script).then_some(STDIN);
    }
    interpreter_input(name, rest).unwrap_or(Some(STDIN))
}

/// For an interpreter (`python3`, `perl`, …), whether it reads its program from its input
/// (`Some(STDIN)`) or not (`Some(None)`): with no script and no program text it does, and a
/// Python module run with `-m` reads it as data only when known to; `None` for any other
/// program.
fn interpreter_input(name: &[u8], rest: &[Option<&[u8]>]) -> Option<Option<&'static str>> {
    let interpreter = INTERPRETERS.iter().find(|(n, _)| {
        *n == name
            || (name.starts_with(n)
                && name[n.len()..]
                    .iter()
                    .all(|c| c.is_ascii_digit() || *c == b'.'))
    });
    if let Some((n, options)) = interpreter {
        // `python3 -m pickle` unpickles its input, `-m code` runs it: a module reads its
        // input as data only when known to (`json.tool`, `base64`).
        if n.starts_with(b"python")
            && let Some(module) = python_module(rest)
        {
            return Some((!DATA_MODULES.contains(&module)).then_some(STDIN));
        }
        let holds = rest.iter().any(|w| {
            w.is_some_and(|w| {
                options
                    .iter()
                    .any(|o| w == *o || (w.starts_with(o) && o.len() == 2 && !o.starts_with(b"--")))
            })
        });
        // The first operand is the script (`python3 /opt/x.py`), unless it is the input.
        let script = rest
            .iter()
            .find(|w| w.is_none_or(|w| !w.starts_with(b"-") || w == b"-"));
        let reads_script = match script {
            Some(Some(w)) => *w != b"-" && !programs::is_input_path(w),
            Some(None) => true,
            None => false,
        };
        return Some((!holds && !reads_script).then_some(STDIN));
    }
    None
}

/// Programs known to print none of what reaches their standard input (they count it, hash
/// it, log it, publish it, send it, or do not read it at all), with the options that make
/// one print it after all (`wc --files0-from=-` prints the names it reads, `md5sum -c` the
/// names in its list, `sponge` and `dd` with no file print what they read). An allow list:
/// every other program passes its input on to its output, changed or not (`tr`, `sed`,
/// `sort`, `base64 -d`, `awk`, `xargs echo`, a program actiond does not know).
const SINKS: &[&[u8]] = &[
    b"wc",
    b"logger",
    b"systemd-cat",
    b"mosquitto_pub",
    b"sendmail",
    b"msmtp",
    b"ssmtp",
    b"wall",
    b"sponge",
    b"dd",
    b"read",
    b"mapfile",
    b"readarray",
    b"true",
    b"false",
    b":",
    b"echo",
    b"printf",
    b"grep",
    b"egrep",
    b"fgrep",
    b"zgrep",
];

/// Whether the command (`values` from its name on) may print what reaches its standard
/// input, changed or not: anything but a program in `SINKS` used as one (`grep` only with
/// `-c`, `-q`, `-l` or `-L`, which print a count, nothing, or `(standard input)`). A
/// program the model cannot name passes it on.
pub fn prints_input(values: &[Option<&[u8]>]) -> bool {
    let Some((i, name)) = program(values) else {
        return true;
    };
    // `xargs echo`: the program gets the input as its words.
    let chain = programs::chain(values);
    if chain
        .iter()
        .any(|&k| values[k].is_some_and(|w| matches!(base(w), b"xargs" | b"parallel")))
    {
        return true;
    }
    if NO_INPUT.contains(&name) {
        return false;
    }
    if !SINKS.contains(&name) && !programs::CHECKSUMS.contains(&name) {
        return true;
    }
    let rest = &values[i + 1..];
    // Options before `--` (an unknown word may be any option: it is taken for none).
    let options = || {
        rest.iter()
            .take_while(|w| *w != &Some(&b"--"[..]))
            .flatten()
            .filter(|w| w.len() > 1 && w[0] == b'-')
    };
    match name {
        b"wc" => options().any(|w| w.starts_with(b"--files0-from")),
        b"md5sum" | b"sha1sum" | b"sha224sum" | b"sha256sum" | b"sha384sum" | b"sha512sum"
        | b"b2sum" => {
            options().any(|w| w == b"--check" || (w[1] != b'-' && w[1..].contains(&b'c')))
        }
        // With no file, `sponge` prints what it soaked up.
        b"sponge" => !rest.iter().any(|w| w.is_none_or(|w| !w.starts_with(b"-"))),
        b"dd" => !rest.iter().flatten().any(|w| w.starts_with(b"of=")),
        b"grep" | b"egrep" | b"fgrep" | b"zgrep" => !grep_prints_no_line(rest),
        _ => false,
    }
}

/// Whether `grep`'s words (after its name) make it print no line it reads: `-c`, `-q`,
/// `-l`, `-L` (also in a cluster, `-Fc`, and long: `--count`, `--quiet`, `--silent`,
/// `--files-with-matches`, `--files-without-match`). A letter after one that takes a word
/// (`-e`, `-f`, `-m`, `-A`, `-B`, `-C`, `-d`, `-D`) belongs to that word (`-ec` searches
/// for `c`).
fn grep_prints_no_line(rest: &[Option<&[u8]>]) -> bool {
    const LONG: &[&[u8]] = &[
        b"--count",
        b"--quiet",
        b"--silent",
        b"--files-with-matches",
        b"--files-without-match",
    ];
    const TAKES: &[u8] = b"efmABCdD";
    let mut skip = false;
    for w in rest {
        if std::mem::take(&mut skip) {
            continue;
        }
        let Some(w) = *w else { continue };
        if w == b"--" {
            break;
        }
        if w.starts_with(b"--") {
            if LONG.contains(&w) {
                return true;
            }
            continue;
        }
        if w.len() < 2 || w[0] != b'-' {
            continue;
        }
        for (k, c) in w[1..].iter().enumerate() {
            if b"cqlL".contains(c) {
                return true;
            }
            if TAKES.contains(c) {
                // The word is the rest of the cluster, or the next word.
                skip = k + 2 == w.len();
                break;
            }
        }
    }
    false
}

/// The script of `sed`: the word of `-e`/`--expression` (glued or not), else its first
/// operand. A word of `-f` names a file.
fn sed(words: &[Option<&[u8]>], i: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut given = false;
    let mut first = None;
    let mut ended = false;
    let mut j = i + 1;
    while j < words.len() {
        match words[j] {
            Some(b"--") if !ended => ended = true,
            Some(w) if !ended && w.starts_with(b"--") => {
                if let Some(rest) = w.strip_prefix(b"--expression") {
                    given = true;
                    if rest.is_empty() {
                        out.push(j + 1);
                        j += 1;
                    } else {
                        out.push(j);
                    }
                } else if w.starts_with(b"--file") {
                    // The script's file, which a value would pick (`-f {{ v }}`).
                    given = true;
                    out.push(j + usize::from(w == b"--file"));
                    j += usize::from(w == b"--file");
                } else if w == b"--line-length" {
                    j += 1;
                }
            }
            Some(w) if !ended && w.len() > 1 && w[0] == b'-' => {
                for (k, &c) in w.iter().enumerate().skip(1) {
                    let last = k + 1 == w.len();
                    match c {
                        b'e' => {
                            given = true;
                            if last {
                                out.push(j + 1);
                                j += 1;
                            } else {
                                out.push(j);
                            }
                            break;
                        }
                        b'f' | b'l' => {
                            if c == b'f' {
                                given = true;
                                out.push(j + usize::from(last));
                            }
                            j += usize::from(last);
                            break;
                        }
                        b'i' => break,
                        _ => {}
                    }
                }
            }
            _ => {
                first.get_or_insert(j);
            }
        }
        j += 1;
    }
    if !given {
        out.extend(first);
    }
    out.retain(|&j| j < words.len());
    out
}

/// The operands of `sqlite3` after the database (SQL and dot-commands), and the word of
/// `-cmd`.
fn sqlite(words: &[Option<&[u8]>], i: usize) -> Vec<usize> {
    const TAKES: &[&[u8]] = &[
        b"separator",
        b"nullvalue",
        b"newline",
        b"init",
        b"vfs",
        b"maxsize",
        b"mmap",
        b"pagecache",
        b"lookaside",
        b"escape",
        b"heap",
    ];
    let mut out = Vec::new();
    let mut operands = Vec::new();
    let mut j = i + 1;
    while j < words.len() {
        match words[j] {
            Some(w) if w.len() > 1 && w[0] == b'-' => {
                let name = w.trim_start_matches_dash();
                if name == b"cmd" {
                    out.push(j + 1);
                    j += 1;
                } else if TAKES.contains(&name) {
                    j += 1;
                }
            }
            _ => operands.push(j),
        }
        j += 1;
    }
    out.extend(operands.into_iter().skip(1));
    out.retain(|&j| j < words.len());
    out
}

trait Dashes {
    fn trim_start_matches_dash(&self) -> &[u8];
}

impl Dashes for [u8] {
    fn trim_start_matches_dash(&self) -> &[u8] {
        let n = self.iter().take_while(|&&c| c == b'-').count();
        &self[n..]
    }
}

/// The index of the program `docker exec -i CONTAINER PROG` or `docker run -i IMAGE PROG`
/// starts (`podman` alike), when `name`, the command's program, is one of them and hands it
/// its input. The options before the container are skipped, those known to take a word with
/// it; an unknown one is taken for a flag, so a misread puts the container or image where the
/// program should be, which no rule here counts as reading data.
fn container_program(values: &[Option<&[u8]>], name: &[u8]) -> Option<usize> {
    const TAKES: &[&[u8]] = &[
        b"-e",
        b"--env",
        b"--env-file",
        b"-u",
        b"--user",
        b"-w",
        b"--workdir",
        b"--detach-keys",
        b"-v",
        b"--volume",
        b"-p",
        b"--publish",
        b"--name",
        b"--network",
        b"--net",
        b"--entrypoint",
        b"-h",
        b"--hostname",
        b"--mount",
        b"-l",
        b"--label",
        b"--device",
        b"--cap-add",
        b"--cap-drop",
        b"--platform",
        b"--pull",
        b"--restart",
        b"-m",
        b"--memory",
        b"--cpus",
        b"--tmpfs",
        b"--add-host",
        b"--dns",
        b"--log-driver",
    ];
    if !matches!(name, b"docker" | b"podman") {
        return None;
    }
    let sub = values
        .iter()
        .position(|w| w.is_some_and(|w| w == b"exec" || w == b"run"))?;
    let interactive = values[sub + 1..].iter().any(|w| {
        w.is_some_and(|w| {
            w == b"--interactive"
                || (w.len() > 1 && w[0] == b'-' && w[1] != b'-' && w[1..].contains(&b'i'))
        })
    });
    if !interactive {
        return None;
    }
    let mut j = sub + 1;
    while let Some(Some(w)) = values.get(j) {
        if !w.starts_with(b"-") {
            break;
        }
        j += if TAKES.contains(w) { 2 } else { 1 };
    }
    // The container or image, then its program.
    Some(j + 1).filter(|&k| k < values.len())
}

/// The words that `short` (`-c`, also glued: `-cSQL`) or `--long` (`--long WORD`,
/// `--long=WORD`) hold.
fn option_words(values: &[Option<&[u8]>], i: usize, short: &[&[u8]], long: &[&[u8]]) -> Vec<usize> {
    let mut out = Vec::new();
    for (j, w) in values.iter().enumerate().skip(i + 1) {
        let Some(w) = *w else { continue };
        if let Some(name) = w.strip_prefix(b"--") {
            let key = name.split(|&c| c == b'=').next().unwrap_or(name);
            if long.contains(&key) {
                out.push(if name.len() > key.len() { j } else { j + 1 });
            }
        } else if let Some(o) = short.iter().find(|o| w.starts_with(o)) {
            out.push(if w.len() > o.len() { j } else { j + 1 });
        }
    }
    out.retain(|&k| k < values.len());
    out
}

/// The words of `make` shaped like a variable's assignment (`NAME=`, `NAME:=`, `NAME+=`,
/// `NAME?=`, `NAME::=`), by their text (an `exec:` element too).
fn make_variables(texts: &[&[u8]], i: usize) -> Vec<usize> {
    (i + 1..texts.len())
        .filter(|&j| {
            let t = texts[j];
            let Some(eq) = t.iter().position(|&c| c == b'=') else {
                return false;
            };
            let name = t[..eq].strip_suffix(b"::").or_else(|| {
                t[..eq]
                    .strip_suffix(b":")
                    .or_else(|| t[..eq].strip_suffix(b"+"))
                    .or_else(|| t[..eq].strip_suffix(b"?"))
            });
            let name = name.unwrap_or(&t[..eq]);
            !name.is_empty()
                && !name.starts_with(b"-")
                && name.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
        })
        .collect()
}

/// The filter of `jq` (and its kin): its first operand, unless `-f`/`--from-file` reads it
/// from a file (whose name is then that operand: the file is the author's). The options that
/// take words are skipped with them (`--arg NAME VALUE`: the value is data there).
fn jq_filter(words: &[Option<&[u8]>], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while j < words.len() {
        let Some(w) = words[j] else { return Some(j) };
        match w {
            b"--arg" | b"--argjson" | b"--slurpfile" | b"--rawfile" => j += 3,
            b"-L" | b"--indent" => j += 2,
            b"-f" | b"--from-file" => return None,
            b"--" => return Some(j + 1).filter(|&k| k < words.len()),
            w if w.starts_with(b"-") => j += 1,
            _ => return Some(j),
        }
    }
    None
}

/// The commands of `gdb -ex`/`-iex`/`--eval-command` and `lldb -o`/`-O`/`-k`.
fn debugger(words: &[Option<&[u8]>], i: usize) -> Vec<usize> {
    const TAKE: &[&[u8]] = &[
        b"ex",
        b"iex",
        b"eval-command",
        b"init-eval-command",
        b"o",
        b"O",
        b"k",
        b"K",
        b"one-line",
        b"one-line-before-file",
        b"one-line-on-crash",
    ];
    let mut out = Vec::new();
    for (j, w) in words.iter().enumerate().skip(i + 1) {
        let Some(w) = *w else { continue };
        if !w.starts_with(b"-") {
            continue;
        }
        let name = w.trim_start_matches_dash();
        let (key, glued) = match name.iter().position(|&c| c == b'=') {
            Some(e) => (&name[..e], true),
            None => (name, false),
        };
        if TAKE.contains(&key) {
            out.push(if glued { j } else { j + 1 });
        }
    }
    out.sort_unstable();
    out.dedup();
    out.retain(|&j| j < words.len());
    out
}

/// When a `-exec`, `-execdir`, `-ok` or `-okdir` of `find` runs the found path itself (its
/// command word holds `{}`): every word of find's own (starting points, tests) that holds a
/// value, since it picks what runs.
fn find(words: &[Option<&[u8]>], i: usize) -> Vec<usize> {
    let runs = |w: Option<&[u8]>| matches!(w, Some(b"-exec" | b"-execdir" | b"-ok" | b"-okdir"));
    let mut own = Vec::new();
    let mut found = false;
    let mut j = i + 1;
    while j < words.len() {
        if runs(words[j]) {
            let cmd = words.get(j + 1).copied().flatten();
            found |= cmd.is_some_and(|c| c.windows(2).any(|p| p == b"{}"));
            // The words up to `;` or `+` are the command's.
            j += 1;
            while j < words.len() && !matches!(words[j], Some(b";" | b"+")) {
                j += 1;
            }
        } else if words[j].is_none() {
            own.push(j);
        }
        j += 1;
    }
    if found { own } else { Vec::new() }
}

mod fetch;
use fetch::{curl_data, curl_files, curl_urlencoded, named_by_url};

#[cfg(test)]
mod tests;
