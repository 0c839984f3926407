//! The programs known to read a file named among their words as data only, for `filed`: the
//! allow list of the reader side of the data-file rule. Any action, or an earlier press, may
//! write a value into a file named as data (`.txt`, `.json`, …), so such a file may be given
//! only to a program that reads it as data: one on this list, at a word that is not the
//! operand of one of its options that read a file as code, settings or a list of commands
//! (`tar -T`, `mpv --script`, `sort --compress-program`). Every other program may run it or
//! load it as settings (`python3 -m pickle F`, `sysctl -p F`, `openvpn --config F`, `insmod
//! F`, `pip install F`, `pkill -F F`), and a list of those is always one short, so the rule
//! goes this way round, as the writer side's `data_file` does. It also finds the other ways
//! a command hands such a file on as more than data: a program's environment
//! (`environment_file`), a link under a data name (`data_links`), the items `xargs sh` runs
//! (`items_run`), a shell's `-c` parameters, and the content a command substitution prints
//! (`data_printed`, not that of `ls` or `sha256sum`). Pure: it reads words, never a file,
//! and judges nothing; the options known to run a file that `scripts` and `filed` name with
//! their own reason are theirs.

use super::{
    DataUse, base, data_file, data_mentioned, data_named, known, may_be_data, names_data, normal,
    programs, settings_file, with_found, written,
};

/// A program known to read the files named among its words as data, but at the options
/// in `code` (as written: `-T`, `--files-from`; a short one also last in a cluster, `-cT`,
/// or joined, `-Tlist`; a long one also as `--opt=F`), and, when any word in `whole` stands
/// among its words (a subcommand, an option), at none of them.
/// A word of `whole` ending in `*` matches every word it starts (`-W*`: `-Wexec`). A word
/// of program text holding one of `text` (awk's `@include`, `system`) takes every file it
/// names as code.
struct Reader {
    name: &'static [u8],
    code: &'static [&'static [u8]],
    whole: &'static [&'static [u8]],
    text: &'static [&'static [u8]],
    /// When not empty, a reader only with one of these words among its own (`docker cp`).
    only: &'static [&'static [u8]],
}

/// An awk's program file (`-f`, gawk's `-E`/`--exec`), the source it includes (`-i`) and
/// the extension it loads (`-l`).
const AWK_CODE: &[&[u8]] = &[
    b"-f",
    b"--file",
    b"-E",
    b"--exec",
    b"-i",
    b"--include",
    b"-l",
    b"--load",
];

const fn data(name: &'static [u8]) -> Reader {
    Reader {
        name,
        code: &[],
        whole: &[],
        text: &[],
        only: &[],
    }
}

const fn but(name: &'static [u8], code: &'static [&'static [u8]]) -> Reader {
    Reader {
        name,
        code,
        whole: &[],
        text: &[],
        only: &[],
    }
}

/// An awk: its program files and extensions (`AWK_CODE`), mawk's `-W exec FILE` and gawk's
/// `-W` spellings, and program text that includes, loads or runs a file it names.
const fn awk(name: &'static [u8]) -> Reader {
    Reader {
        name,
        code: AWK_CODE,
        whole: &[b"-W*"],
        text: &[b"@include", b"@load", b"system", b"|"],
        only: &[],
    }
}

/// ffmpeg and its players: a filter script, an option's value read from a file (`-/filter
/// F`), the concat demuxer (whose list names any file, `-safe 0`), and filters that read
/// commands (`sendcmd`, `zmq`).
const fn media(name: &'static [u8]) -> Reader {
    Reader {
        name,
        code: &[b"-filter_script", b"-filter_complex_script"],
        whole: &[b"-/*", b"concat", b"-safe"],
        text: &[b"sendcmd", b"zmq"],
        only: &[],
    }
}

/// The readers, each checked for the options that read a file as more than data. Not here,
/// on purpose: interpreters (`python3 -m pickle F` runs it), package and module loaders
/// (`pip`, `npm`, `insmod`), daemons given a settings file (`openvpn`, `mosquitto -c`,
/// `dnsmasq -C`), `sysctl -p`, `logrotate`, `patch`, extractors (`pax`, `ar`, `unsquashfs`,
/// `dpkg-deb`, `unar`), `docker` but `docker cp`, `openssl`, `rclone`, ImageMagick (its coders read scripts), `festival` (a file is Scheme), and any
/// program actiond does not know. The action's `allowUnknownProgram: true` is the author's
/// word that the programs its command runs read such a file as data.
const READERS: &[Reader] = &[
    // Text tools.
    data(b"cat"),
    data(b"tac"),
    data(b"head"),
    data(b"tail"),
    data(b"wc"),
    but(b"sort", &[b"--compress-program"]),
    data(b"uniq"),
    data(b"cut"),
    data(b"paste"),
    data(b"join"),
    data(b"nl"),
    data(b"fold"),
    data(b"fmt"),
    data(b"pr"),
    data(b"expand"),
    data(b"unexpand"),
    data(b"rev"),
    data(b"shuf"),
    data(b"column"),
    data(b"grep"),
    data(b"egrep"),
    data(b"fgrep"),
    data(b"zgrep"),
    data(b"diff"),
    data(b"cmp"),
    data(b"comm"),
    data(b"iconv"),
    data(b"strings"),
    data(b"od"),
    data(b"xxd"),
    data(b"hexdump"),
    data(b"base64"),
    data(b"base32"),
    data(b"md5sum"),
    data(b"sha1sum"),
    data(b"sha224sum"),
    data(b"sha256sum"),
    data(b"sha384sum"),
    data(b"sha512sum"),
    data(b"b2sum"),
    data(b"cksum"),
    // awk's and sed's programs that run commands over their operands, and their script files,
    // are `scripts`'.
    awk(b"awk"),
    awk(b"gawk"),
    awk(b"mawk"),
    awk(b"nawk"),
    but(b"sed", &[b"-f", b"--file"]),
    // jq's program file and module directory are `scripts`'.
    but(b"jq", &[b"-f", b"--from-file", b"-L"]),
    but(b"yq", &[b"--from-file"]),
    // Compressors (a derived name is `filed::decompressed`'s).
    data(b"gzip"),
    data(b"gunzip"),
    data(b"zcat"),
    data(b"bzip2"),
    data(b"bunzip2"),
    data(b"bzcat"),
    data(b"xz"),
    data(b"unxz"),
    data(b"xzcat"),
    data(b"zstd"),
    data(b"unzstd"),
    data(b"zstdcat"),
    // An archive made of files: its extraction is `named::extracts`'. `-T` reads names that
    // may be options (`--checkpoint-action=exec=…`); the rest run a program.
    but(
        b"tar",
        &[
            b"-T",
            b"--files-from",
            b"-I",
            b"--use-compress-program",
            b"--to-command",
            b"-F",
            b"--info-script",
            b"--new-volume-script",
            b"--rsh-command",
            b"--rmt-command",
            b"--checkpoint-action",
        ],
    ),
    but(b"zip", &[b"-TT", b"--unzip-command"]),
    // Its extraction of a data-named archive is `named::extracts`' (refused); `-l` lists.
    data(b"unzip"),
    // Copies of what they read under other names, judged where they land (`outputs`).
    data(b"split"),
    data(b"csplit"),
    Reader {
        name: b"docker",
        code: &[],
        whole: &[],
        text: &[],
        only: &[b"cp"],
    },
    Reader {
        name: b"podman",
        code: &[],
        whole: &[],
        text: &[],
        only: &[b"cp"],
    },
    // Files as names: the copies are `copies`'.
    data(b"cp"),
    data(b"mv"),
    data(b"install"),
    data(b"ln"),
    data(b"dd"),
    data(b"rm"),
    data(b"shred"),
    data(b"truncate"),
    data(b"touch"),
    data(b"chmod"),
    data(b"chown"),
    data(b"chgrp"),
    data(b"stat"),
    data(b"ls"),
    data(b"du"),
    data(b"file"),
    data(b"find"),
    data(b"mkdir"),
    data(b"rmdir"),
    data(b"realpath"),
    data(b"readlink"),
    data(b"basename"),
    data(b"dirname"),
    data(b"date"),
    data(b"tee"),
    data(b"sponge"),
    // Shell builtins that take a name as text (`export` and `declare -x` hand it to every
    // program after: its environment is refused).
    data(b"test"),
    data(b"["),
    data(b"[["),
    data(b"echo"),
    data(b"printf"),
    data(b"local"),
    data(b"readonly"),
    Reader {
        name: b"declare",
        code: &[],
        whole: &[b"-x", b"-gx", b"-xg"],
        text: &[],
        only: &[],
    },
    Reader {
        name: b"typeset",
        code: &[],
        whole: &[b"-x", b"-gx", b"-xg"],
        text: &[],
        only: &[],
    },
    // Senders: what they send is data to them (`curl -K` and `wget -i` are `filed::lists`').
    but(b"curl", &[b"-K", b"--config"]),
    but(
        b"wget",
        &[b"-i", b"--input-file", b"--config", b"--use-askpass"],
    ),
    but(b"mosquitto_pub", &[b"--tls-engine"]),
    data(b"logger"),
    data(b"wall"),
    // Copies to other hosts (`-F` is `scripts`'); a program to run instead of ssh, its
    // PKCS#11 library, rsync's daemon settings and batch of changes run or write anything.
    but(b"ssh", &[b"-F", b"-I", b"-S", b"-o"]),
    but(b"scp", &[b"-F", b"-S", b"-I", b"-D", b"-o"]),
    but(
        b"rsync",
        &[
            b"-e",
            b"--rsh",
            b"--rsync-path",
            b"--read-batch",
            b"--config",
            b"--files-from",
            b"-M",
            b"--remote-option",
        ],
    ),
    // git reads a file named as data as a commit message or a path to add; a repository,
    // bundle or patch it fetches or applies is code (hooks, a Makefile), and so is a config.
    Reader {
        name: b"git",
        code: &[b"-c", b"--exec-path", b"--template", b"--config-env"],
        whole: &[
            b"clone",
            b"fetch",
            b"pull",
            b"bundle",
            b"remote",
            b"submodule",
            b"apply",
            b"am",
            b"config",
            b"send-email",
            b"quiltimport",
        ],
        // A url of git's `ext::` transport is a command (`ext::sh notes.txt`).
        text: &[b"ext::"],
        only: &[],
    },
    // sqlite3's own commands (`.read F`, `-init F`) are `commands::data_in_code`'s and
    // `scripts`'; an extension it loads is refused there too.
    // Its archive mode unpacks a zip (`-A -x`, `.archive -x`, fe30x F4): not a reader then.
    Reader {
        name: b"sqlite3",
        code: &[b"-init"],
        whole: &[b"-A*", b"--archive", b"-archive"],
        text: &[b".ar"],
        only: &[],
    },
    // Printing, sound, pictures and video on a board.
    data(b"lp"),
    data(b"lpr"),
    data(b"aplay"),
    data(b"paplay"),
    data(b"pw-play"),
    data(b"mpg123"),
    data(b"mpg321"),
    data(b"ogg123"),
    data(b"omxplayer"),
    // sox opens an input named `|CMD` by running CMD.
    Reader {
        name: b"sox",
        code: &[b"--effects-file"],
        whole: &[],
        text: &[b"|"],
        only: &[],
    },
    Reader {
        name: b"play",
        code: &[b"--effects-file"],
        whole: &[],
        text: &[b"|"],
        only: &[],
    },
    media(b"ffmpeg"),
    media(b"ffprobe"),
    media(b"ffplay"),
    but(
        b"mpv",
        &[
            b"--script",
            b"--scripts",
            b"--scripts-append",
            b"--scripts-add",
            b"--scripts-set",
            b"--include",
            b"--input-conf",
            b"--config-dir",
            b"--playlist",
            b"-script",
            b"-scripts",
            b"-include",
            b"-input-conf",
            b"-config-dir",
            b"-playlist",
        ],
    ),
    but(b"vlc", &[b"--lua-config", b"--lua-intf", b"--config"]),
    but(b"cvlc", &[b"--lua-config", b"--lua-intf", b"--config"]),
    data(b"espeak"),
    data(b"espeak-ng"),
    data(b"feh"),
    data(b"fbi"),
    data(b"qrencode"),
    data(b"zbarimg"),
];

/// Whether the program at `k` of `words` (a command from its name on, the end of
/// `programs::chain`) reads the file named at word `j` (after `k`) as data only.
pub fn as_data(words: &[Option<&[u8]>], k: usize, j: usize) -> bool {
    reader(words, k).is_some_and(|r| !code_at(r, words, k, j))
}

/// Whether the program at `k` is a reader that takes word `j` (after `k`) as code: the
/// operand of one of its options that read a file as code, settings or commands (written
/// out, a prefix of a long one as GNU's parser takes it, in a cluster, joined, or tar's
/// old-style letters), or any word when one of its `whole` words stands among its own. For
/// a word of program text (`tar -I 'sh notes.txt'`), a file named in it is code there.
pub fn code_operand(words: &[Option<&[u8]>], k: usize, j: usize) -> bool {
    reader(words, k).is_some_and(|r| code_at(r, words, k, j))
}

fn reader<'a>(words: &[Option<&[u8]>], k: usize) -> Option<&'a Reader> {
    let name = words[k].map(base)?;
    READERS.iter().find(|r| r.name == name)
}

fn code_at(reader: &Reader, words: &[Option<&[u8]>], k: usize, j: usize) -> bool {
    let own = &words[k + 1..];
    if !reader.only.is_empty()
        && !own
            .iter()
            .flatten()
            .any(|w| reader.only.iter().any(|o| w == o))
    {
        return true;
    }
    let here = words[j].unwrap_or_default();
    if reader
        .text
        .iter()
        .any(|m| here.windows(m.len()).any(|w| w == *m))
    {
        return true;
    }
    let whole = |w: &[u8]| {
        reader.whole.iter().any(|o| match o.strip_suffix(b"*") {
            Some(stem) => w.starts_with(stem),
            None => w == *o,
        })
    };
    if own.iter().flatten().any(|w| whole(w)) {
        return true;
    }
    if reader.name == b"tar" && old_style_tar(words, k, j) {
        return true;
    }
    reader.code.iter().any(|o| operand_of(words, j, o))
}

/// Whether word `j` is the file of the option `o`: `-T F`, `-cT F`, `-TF`, `-cTF`; `--files-from
/// F`, `--files-from=F`, and any prefix GNU's parser takes for it (`--files F`, `--files=F`).
fn operand_of(words: &[Option<&[u8]>], j: usize, o: &[u8]) -> bool {
    let before = j.checked_sub(1).and_then(|i| words[i]);
    let here = words[j].unwrap_or_default();
    if o.starts_with(b"--") {
        // `--use-compress` for `--use-compress-program`: a prefix of the option.
        let prefix = |w: &[u8]| w.len() > 2 && o.starts_with(w);
        let joined = here
            .iter()
            .position(|&c| c == b'=')
            .is_some_and(|eq| prefix(&here[..eq]));
        return before.is_some_and(prefix) || joined;
    }
    // An option of two letters or more after one dash (`-TT`, `-include`), as written.
    if o.len() != 2 {
        let joined = here.len() > o.len() && here.starts_with(o);
        return before == Some(o)
            || joined
            || here
                .strip_prefix(o)
                .is_some_and(|r| r.first() == Some(&b'='));
    }
    // A short option (`-T`): last of a cluster before the file, or anywhere in a cluster
    // with the file joined after it.
    let letter = o[1];
    let cluster = |w: &[u8]| w.len() >= 2 && w[0] == b'-' && w[1] != b'-';
    let last = |w: &[u8]| cluster(w) && w.last() == Some(&letter);
    let inside = cluster(here) && here[1..here.len() - 1].contains(&letter);
    before.is_some_and(last) || inside
}

/// Whether word `j` is the file of tar's `-T`, `-I` or `-F` given in the old style, as letters
/// of the first word with no dash whose files follow in order (`tar cfT x.tar list.txt`):
/// each letter that takes a word takes the next one.
fn old_style_tar(words: &[Option<&[u8]>], k: usize, j: usize) -> bool {
    const TAKES: &[u8] = b"bCfFgHIKLNTVX";
    let Some(letters) = words.get(k + 1).copied().flatten() else {
        return false;
    };
    if letters.starts_with(b"-") || !letters.iter().all(u8::is_ascii_alphabetic) {
        return false;
    }
    let mut next = k + 2;
    for &c in letters {
        if TAKES.contains(&c) {
            if next == j && b"TIF".contains(&c) {
                return true;
            }
            next += 1;
        }
    }
    false
}

/// A file named as data given to a program not known to read it as data only: the index
/// of its word, the file's name, and the program (`None`: one an expansion names).
pub type UnknownReader = (usize, Vec<u8>, Option<Vec<u8>>);

/// The files named as data that `words` (a command from its name on, or an `exec:` argv)
/// give the program at the end of its chain when that is not known to read them as data
/// only (`readers`): `python3 -m pickle state.dat`, `sysctl -p notes.txt`, `openvpn
/// --config vpn.txt`, `pkill -F pid.txt`, `mytool data.csv`. The reader side of the
/// data-file rule, an allow list as the writer side's `data_file` is; a word `known` already
/// holds a use of (a script run, a program's own script file) is left to it, and a shell's
/// words are its script and its parameters (`runs`, the script's own reading).
pub fn unknown_readers(words: &[Option<&[u8]>], known: &[DataUse]) -> Vec<UnknownReader> {
    let words = &with_found(words)[..];
    if !names_data(words) {
        return Vec::new();
    }
    let Some(&k) = programs::chain(words).last() else {
        return Vec::new();
    };
    let program = words[k].map(base);
    if program.is_some_and(|p| p == b"." || p == b"source") {
        return Vec::new();
    }
    // A shell's words are its script (`runs`) and its `-c` script, read as one; but the
    // script does not follow which of its parameters names a file named as data (`sh -c
    // '. "$1"' sh notes.txt`, `find … -exec sh -c 'sh "$1"' x {} ;`): one given one is as
    // unknown a reader as any program.
    if program.is_some_and(|p| programs::SHELLS.contains(&p)) {
        return shell_parameters(words, k)
            .filter(|&j| words[j].is_some_and(|w| may_be_data(normal(w)) && !is_text(w)))
            .map(|j| {
                (
                    j,
                    words[j].unwrap_or_default().to_vec(),
                    program.map(<[u8]>::to_vec),
                )
            })
            .collect();
    }
    let texts = known::program_texts(words);
    // What it writes (`curl -o /srv/dl/x.json`, a camera's `-o snap.jpg`) is the writer
    // side's: a data name is what the rule lets a value go into.
    let writes = written(words, &[], &[]);
    let mut out = Vec::new();
    for j in k + 1..words.len() {
        let Some(w) = words[j] else { continue };
        // `--config=vpn.txt`, `if=notes.txt`: the file after the option's `=`.
        let file = normal(w.rsplit(|&c| c == b'=').next().unwrap_or(w));
        // The written name is the whole word, or follows an option joined to it (`-o/srv/x`,
        // `--output=x`); a word that only ends in it (`-T /srv/x.txt` beside `-f x.txt`) is
        // another file.
        let joined = |t: &[u8]| {
            w.len() > t.len()
                && w.starts_with(b"-")
                && w.ends_with(t)
                && !w[..w.len() - t.len()].contains(&b'/')
        };
        if writes
            .iter()
            .flatten()
            .any(|t| !t.is_empty() && (normal(w) == &t[..] || file == &t[..] || joined(t)))
        {
            continue;
        }
        // Program text (`su pi -c 'cat > /tmp/x.txt'`) is a script's, read as one; in a
        // reader's option that reads code (`tar -I 'sh notes.txt'`, `git -c
        // core.fsmonitor='sh notes.txt'`), and in an interpreter's program text
        // (`python3 -c 'runpy.run_path("notes.txt")'`), a file it names is more than data.
        if is_text(w) {
            let code = code_operand(words, k, j) || texts.contains(&j);
            if code && !known.iter().any(|(at, _, _)| *at == Some(j)) {
                for name in data_mentioned(w) {
                    out.push((j, name.into_bytes(), program.map(<[u8]>::to_vec)));
                }
            }
            continue;
        }
        if !(names_data_file(normal(w)) || names_data_file(file))
            || known.iter().any(|(at, _, _)| *at == Some(j))
            || as_data(words, k, j)
        {
            continue;
        }
        out.push((j, file.to_vec(), program.map(<[u8]>::to_vec)));
    }
    out
}

/// The words a shell at `k` given its script with `-c` (`-ec`, `-xc`) takes as the
/// script's parameters (`$0`, `$1`, …): those after the script.
fn shell_parameters(words: &[Option<&[u8]>], k: usize) -> impl Iterator<Item = usize> {
    let c = (k + 1..words.len()).find(|&i| {
        words[i].is_some_and(|w| {
            w.len() > 1 && w[0] == b'-' && w[1] != b'-' && w.contains(&b'c') && !w.contains(&b'=')
        })
    });
    let from = c.map_or(words.len(), |c| c + 2);
    from.min(words.len())..words.len()
}

/// Whether the word `f` (not program text) names a file named as data, or is a pattern that
/// looks like a file's and may match one (`/srv/jobs/*`, `*.tx?`, `*`): the words reach the
/// model with their quotes removed, and `[`, or `--remove-chars ":%-?"`, names no file.
pub(super) fn names_data_file(f: &[u8]) -> bool {
    data_named(f) || (may_be_data(f) && (f == b"*" || f.contains(&b'/') || f.contains(&b'.')))
}

/// Whether the word `w` is program text rather than a name: it holds a blank, a quote or
/// one of the shell's operators.
fn is_text(w: &[u8]) -> bool {
    w.iter()
        .any(|c| c.is_ascii_whitespace() || b"\"'(){};$`|<>&".contains(c))
}

/// A file named as data that the assignment `w` (`NAME=VALUE`, a word before a command or
/// of `env`, `export`, `declare -x`) puts into a program's environment, with what that does:
/// a program may load a file its environment names as code or settings (`NODE_OPTIONS=
/// --require=F`, `PYTHONPATH=F.zip`, `WGETRC=F`, `GIT_SSH=F`), and which variables each
/// program reads is never a complete list, so none may name one (`settings_file` says why
/// for the ones known). Each of a `:`-separated list counts (`PYTHONPATH=/a:/srv/x.zip`).
pub fn environment_file(w: &[u8]) -> Option<(&[u8], &'static str)> {
    let eq = w.iter().position(|&c| c == b'=')?;
    let key = &w[..eq];
    let variable = key
        .first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        && key.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_');
    if !variable {
        return None;
    }
    if let Some(found) = settings_file(w, false) {
        return Some(found);
    }
    let value = &w[eq + 1..];
    value
        .split(|&c| c == b':')
        .map(|part| normal(part.rsplit(|&c| c == b'=').next().unwrap_or(part)))
        .find(|f| data_named(f))
        .map(|f| {
            (
                f,
                "puts into a program's environment (a program may load a file its environment \
                 names as code or settings: `NODE_OPTIONS=--require=F`, `PYTHONPATH=F`, \
                 `WGETRC=F`, `GIT_SSH=F`),",
            )
        })
}

/// The words of a command that put a file named as data into a program's environment
/// (`environment_file`): those before the program at `k` (`env NAME=F prog`, `sudo NAME=F
/// prog`), and the operands of `export` and `declare -x`/`typeset -x`.
pub(super) fn environment_files<'a>(
    words: &[Option<&'a [u8]>],
    k: usize,
) -> Vec<(usize, &'a [u8], &'static str)> {
    let program = words[k].map(base);
    let exports = match program {
        Some(b"export") => true,
        Some(b"declare" | b"typeset") => words[k + 1..]
            .iter()
            .flatten()
            .any(|w| w.starts_with(b"-") && !w.starts_with(b"--") && w.contains(&b'x')),
        _ => false,
    };
    (1..words.len())
        .filter(|&i| i < k || (exports && i > k))
        .filter_map(|i| {
            let (file, does) = words[i].and_then(environment_file)?;
            Some((i, file, does))
        })
        .collect()
}

/// The links a command makes under a name that may be data to a file not known to hold
/// data (`ln -sf /root/.bashrc /srv/state/today.log`, `cp -s`, `cp -l`, a hard link too):
/// every write any action makes into the data name, as the data-file rule lets it, lands in
/// that file. Each with the link's word, its name and what the command does.
pub(super) fn data_links(words: &[Option<&[u8]>]) -> Vec<DataUse> {
    let Some(&k) = programs::chain(words).last() else {
        return Vec::new();
    };
    let p = words[k].map(base).unwrap_or_default();
    let own = &words[k + 1..];
    let option = |w: &&[u8]| w.starts_with(b"-") && w.len() > 1;
    let links = match p {
        b"ln" => true,
        b"cp" => own.iter().flatten().any(|w| {
            *w == b"--link"
                || *w == b"--symbolic-link"
                || (option(w) && !w.starts_with(b"--") && (w.contains(&b's') || w.contains(&b'l')))
        }),
        _ => false,
    };
    if !links {
        return Vec::new();
    }
    let operands: Vec<usize> = (k + 1..words.len())
        .filter(|&i| words[i].is_none_or(|w| !option(&w)))
        .collect();
    let Some((&dest, sources)) = operands.split_last() else {
        return Vec::new();
    };
    let Some(name) = words[dest] else {
        return Vec::new();
    };
    // A link in a directory of data (`/srv/n/rot`) to a directory where a data file is not
    // data (`/etc/logrotate.d`): another action's write into `rot/today.txt`, which the
    // rule lets through, lands there (fe30x F11).
    let into_code_dir = |t: &[u8]| {
        let mut dir = t.to_vec();
        dir.push(b'/');
        !super::named::area(&dir)
    };
    if !may_be_data(normal(name)) {
        let linked = sources
            .iter()
            .find(|&&i| words[i].is_some_and(into_code_dir));
        let in_data = super::named::area(name) && name.starts_with(b"/");
        return match linked {
            Some(&i) if in_data => {
                let does = format!(
                    "makes a link to `{}`, a directory where a data file is not data, in a \
                     directory of data (a value any action writes below the link lands there):",
                    String::from_utf8_lossy(words[i].unwrap_or_default())
                );
                vec![(Some(dest), name.to_vec(), does)]
            }
            _ => Vec::new(),
        };
    }
    let target = sources
        .iter()
        .find(|&&i| words[i].is_none_or(|w| !data_file(normal(w))));
    target.map_or_else(Vec::new, |&i| {
        let shown = words[i].map_or_else(
            || "a file an expansion names".to_string(),
            |w| format!("`{}`", String::from_utf8_lossy(w)),
        );
        let does = format!(
            "makes a link to {shown}, a file not known to hold data, under the data name \
             (a value any action writes into it lands in that file):"
        );
        vec![(Some(dest), name.to_vec(), does)]
    })
}

/// `xargs sh` (`xargs -n1 bash`, `xargs python3`): a shell or an interpreter given no
/// program text runs each item `xargs` reads as its script file, and which files the input
/// names is not followed (`ls /srv/state/*.txt | xargs -n1 sh`, fe30w F5). Also found
/// before the early return of `data_uses_of`: the command itself names no data file.
pub(super) fn items_run(words: &[Option<&[u8]>]) -> Vec<DataUse> {
    let chain = programs::chain(words);
    let Some(x) = chain
        .iter()
        .position(|&i| words[i].map(base) == Some(&b"xargs"[..]))
    else {
        return Vec::new();
    };
    let Some(&k) = chain.get(x + 1) else {
        return Vec::new();
    };
    let Some(p) = words[k].map(base) else {
        return Vec::new();
    };
    let code_given = words[k + 1..].iter().flatten().any(|w| {
        (w.len() > 1 && w[0] == b'-' && w[1] != b'-' && (w.contains(&b'c') || w.contains(&b'e')))
            || w.starts_with(b"--eval")
    });
    let script_given = words[k + 1..]
        .iter()
        .flatten()
        .any(|w| !w.starts_with(b"-") && *w != b"{}");
    let runs = programs::SHELLS.contains(&p) || known::interpreter(p);
    if !runs || code_given || script_given {
        return Vec::new();
    }
    let does = format!(
        "runs each item `xargs` reads as a script file of `{}` (actiond does not follow which \
         files its input names), and so",
        String::from_utf8_lossy(p)
    );
    vec![(Some(k), b"*".to_vec(), does)]
}

/// The files named as data whose content the command of a command substitution (`text`,
/// raw) may print: those `data_mentioned` finds, but in a command whose program prints only
/// names, sizes or sums (`$(ls -t /srv/scans/*.pdf | head -n 1)`, `$(sha256sum F)`, `$(wc
/// -l < F)` counts; fe30w FR4, FR6).
pub fn data_printed(text: &[u8]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for segment in text.split(|c| b"|;&()\n`".contains(c)) {
        let first = segment
            .split(u8::is_ascii_whitespace)
            .find(|w| !w.is_empty() && !w.contains(&b'='));
        if first.is_some_and(|p| prints_no_content(base(p))) {
            continue;
        }
        for name in data_mentioned(segment) {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// Programs that print no content of the files they name: their names, sizes, types, sums
/// or counts only.
const NO_CONTENT: &[&[u8]] = &[
    b"ls",
    b"find",
    b"stat",
    b"du",
    b"wc",
    b"basename",
    b"dirname",
    b"realpath",
    b"readlink",
    b"test",
    b"[",
];

/// Whether the program `p` prints no content of the files it names: `NO_CONTENT`'s, or a
/// checksum program (`programs::CHECKSUMS`).
pub fn prints_no_content(p: &[u8]) -> bool {
    NO_CONTENT.contains(&p) || programs::CHECKSUMS.contains(&p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Option<&[u8]>> {
        s.split(' ').map(|w| Some(w.as_bytes())).collect()
    }

    #[test]
    fn a_file_named_as_data_is_data_only_to_a_reader_at_no_option_that_reads_code() {
        // (command, index of the file's word, read as data only)
        let rows: &[(&str, usize, bool)] = &[
            ("cat notes.txt", 1, true),
            ("lp -d office report.pdf", 3, true),
            ("aplay -q alarm.wav", 2, true),
            ("tar -czf backup.tgz notes.txt", 3, true),
            ("tar -czf backup.tgz -T list.txt", 4, false),
            ("tar -cT list.txt", 2, false),
            ("tar -czf backup.tgz --files-from=list.txt", 3, false),
            ("tar -cf x.tar -I notes.txt", 4, false),
            ("tar -cf x.tar -Inotes.txt", 3, false),
            ("sort --compress-program=notes.txt a.txt", 1, false),
            ("sort --compress-program=notes.txt a.txt", 2, true),
            ("git add notes.txt", 2, true),
            ("git commit -F msg.txt", 3, true),
            ("git -C /srv/app apply fix.txt", 4, false),
            ("git clone /srv/dl/repo.tar", 2, false),
            ("declare -x F=notes.txt", 2, false),
            ("local f=notes.txt", 1, true),
            ("mpv --script=hook.txt alarm.mp3", 1, false),
            ("mpv --script=hook.txt alarm.mp3", 2, true),
            ("ssh -I lib.dat nas", 2, false),
            ("rsync -a -e run.txt notes.txt nas:", 4, true),
            ("rsync -a -e run.txt notes.txt nas:", 3, false),
            ("python3 -m pickle state.dat", 3, false),
            ("sysctl -p sysctl.txt", 2, false),
            ("openvpn --config vpn.txt", 2, false),
            ("pkill -F pid.txt", 2, false),
            ("insmod driver.gz", 1, false),
            ("split -l 1 jobs.txt job-", 3, true),
            ("docker cp /srv/a.log app:/tmp/", 2, true),
            ("docker load -i /srv/i.tar", 3, false),
            ("mytool data.csv", 1, false),
        ];
        for &(command, j, expected) in rows {
            let w = words(command);
            assert_eq!(as_data(&w, 0, j), expected, "{command} at {j}");
        }
    }
}
