//! The files a program writes what it reads or fetches into, named by an option or an
//! operand (`curl -o`, `wget -O`, `sort -o`, `uniq IN OUT`, `dd of=`, `sponge`, `split`,
//! `cp /dev/stdin FILE`, an awk or sed program's own writes), for `filed`: which word names
//! each and at which byte its name starts, so that `filed::written` follows what is written
//! there and `named` weighs a name a value makes. Pure and syntactic: it reads words.

use super::{scripts, target_directory};

/// The files a program writes what it reads or fetches into, named by an option or an
/// operand: `curl -o`/`-D`/`-c`/`--trace`/`--stderr`, `wget -O`/`-o`/`-a` (what a url a
/// value picks serves), `sort -o`, `uniq IN OUT`, and `split`'s files (`PREFIXaa`…,
/// matched as any name). `None` where an expansion makes the name.
pub(super) fn output_files<'a>(
    words: &[Option<&'a [u8]>],
    program: Option<&[u8]>,
) -> Vec<Option<&'a [u8]>> {
    match program {
        Some(b"cp" | b"install") => return from_stdin(words),
        Some(b"awk" | b"gawk" | b"mawk" | b"nawk") => {
            return scripts::script_operand(words).map_or_else(Vec::new, scripts::awk_writes);
        }
        Some(b"sed") => {
            return scripts::script_operand(words).map_or_else(Vec::new, scripts::sed_writes);
        }
        _ => {}
    }
    output_at(words, program)
        .into_iter()
        .map(|(k, from)| words[k].map(|w| &w[from.min(w.len())..]))
        // `-o -`: the standard output, which the pipe or redirection after it names.
        .filter(|n| n != &Some(&b"-"[..]))
        .collect()
}

/// The words naming the files `output_files` finds by an option or an operand (`dd of=` and
/// `sponge` too), each with the byte its name starts at (`-oFILE`, `--output=FILE`).
pub(super) fn output_at(words: &[Option<&[u8]>], program: Option<&[u8]>) -> Vec<(usize, usize)> {
    let (short, long): (&[u8], &[&[u8]]) = match program {
        Some(b"curl") => (
            b"oDc",
            &[
                b"output",
                b"dump-header",
                b"cookie-jar",
                b"trace",
                b"trace-ascii",
                b"stderr",
                b"libcurl",
                b"etag-save",
            ],
        ),
        Some(b"wget") => (
            b"Ooa",
            &[
                b"output-document",
                b"output-file",
                b"append-output",
                b"save-cookies",
                b"warc-file",
                b"rejected-log",
            ],
        ),
        Some(b"sort" | b"shuf" | b"iconv") => (b"o", &[b"output"]),
        // A Pi camera's picture or video (fe30w FR1).
        Some(
            b"rpicam-still" | b"rpicam-vid" | b"rpicam-jpeg" | b"libcamera-still"
            | b"libcamera-vid" | b"libcamera-jpeg" | b"raspistill" | b"raspivid",
        ) => (b"o", &[b"output"]),
        Some(b"uniq") => {
            // `-f N`, `-s N`, `-w N` take the next word.
            let mut operands = Vec::new();
            let mut k = 1;
            while k < words.len() {
                match words[k] {
                    Some(b"-f" | b"-s" | b"-w") => k += 1,
                    Some(w) if w.starts_with(b"-") && w != b"-" => {}
                    _ => operands.push(k),
                }
                k += 1;
            }
            return operands.get(1).map(|&k| vec![(k, 0)]).unwrap_or_default();
        }
        // `dd of=FILE`, `sponge FILE`.
        Some(b"dd") => {
            return (1..words.len())
                .filter(|&k| words[k].is_some_and(|w| w.starts_with(b"of=")))
                .map(|k| (k, 3))
                .collect();
        }
        // `openssl enc -d -base64 -out FILE`, `xxd -r IN OUT`, `docker cp SRC CONTAINER:PATH`.
        Some(b"openssl") => {
            return (2..words.len())
                .filter(|&k| words[k - 1] == Some(&b"-out"[..]))
                .map(|k| (k, 0))
                .collect();
        }
        Some(b"xxd") => return xxd_output(words).map(|k| vec![(k, 0)]).unwrap_or_default(),
        Some(b"docker") => return docker_cp(words),
        Some(b"sponge") => {
            return (1..words.len())
                .filter(|&k| words[k].is_none_or(|w| !w.starts_with(b"-")))
                .map(|k| (k, 0))
                .collect();
        }
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    if program == Some(b"curl") {
        out.extend(file_uploads(words));
    }
    let mut k = 1;
    while k < words.len() {
        let Some(w) = words[k] else {
            k += 1;
            continue;
        };
        k += 1;
        if let Some(name) = w.strip_prefix(b"--") {
            for l in long {
                if name == *l {
                    if k < words.len() {
                        out.push((k, 0));
                    }
                    k += 1;
                } else if name.strip_prefix(*l).is_some_and(|r| r.starts_with(b"=")) {
                    out.push((k - 1, l.len() + 3));
                }
            }
        } else if w.len() > 1
            && w[0] == b'-'
            && let Some(at) = w[1..].iter().position(|c| short.contains(c))
        {
            let at = at + 1;
            if at + 1 == w.len() {
                if k < words.len() {
                    out.push((k, 0));
                }
                k += 1;
            } else {
                out.push((k - 1, at + 1));
            }
        }
    }
    out
}

/// `cp /dev/stdin FILE`: the file holds what reaches the command's input.
fn from_stdin<'a>(words: &[Option<&'a [u8]>]) -> Vec<Option<&'a [u8]>> {
    let stdin =
        |w: &&Option<&[u8]>| matches!(w, Some(b"/dev/stdin" | b"/proc/self/fd/0" | b"/dev/fd/0"));
    if !words.iter().skip(1).any(|w| stdin(&w)) {
        return Vec::new();
    }
    let (target, operands) = target_directory(&words[1..]);
    match target {
        Some(_) => vec![None],
        None => operands
            .last()
            .map(|&d| vec![words[d + 1]])
            .unwrap_or_default(),
    }
}

/// The word of `xxd`'s output file: its second operand (`xxd -r IN OUT`), the options that
/// take a value (`-c 16`, `-s 0x10`) skipped.
fn xxd_output(words: &[Option<&[u8]>]) -> Option<usize> {
    let takes = |w: &[u8]| matches!(w, b"-c" | b"-g" | b"-l" | b"-o" | b"-s" | b"-n" | b"-cols");
    let operands: Vec<usize> = (1..words.len())
        .filter(|&k| words[k].is_none_or(|w| !w.starts_with(b"-") || w == b"-"))
        .filter(|&k| !words[k - 1].is_some_and(takes))
        .collect();
    operands.get(1).copied()
}

/// `docker cp SRC CONTAINER:PATH` (`docker container cp`): the file written in the container,
/// from the byte after the container's name; a copy out of a container (to a path on the
/// board) writes what the container holds.
fn docker_cp(words: &[Option<&[u8]>]) -> Vec<(usize, usize)> {
    let Some(cp) = (1..words.len()).find(|&k| words[k] == Some(&b"cp"[..])) else {
        return Vec::new();
    };
    let operands: Vec<usize> = (cp + 1..words.len())
        .filter(|&k| words[k].is_none_or(|w| !w.starts_with(b"-") || w == b"-"))
        .collect();
    let Some(&dest) = operands.last().filter(|_| operands.len() > 1) else {
        return Vec::new();
    };
    match words[dest] {
        // A container's name before `:` (no `/` before it: `./a:b` is a path on the board).
        Some(w) => match w.iter().position(|&c| c == b':') {
            Some(colon) if !w[..colon].contains(&b'/') => vec![(dest, colon + 1)],
            _ => Vec::new(),
        },
        None => vec![(dest, 0)],
    }
}

/// `curl -T FILE file:///PATH` (`--upload-file`): an upload to a `file:` url writes PATH,
/// each such url's word with the byte its path starts at.
fn file_uploads(words: &[Option<&[u8]>]) -> Vec<(usize, usize)> {
    let upload = words.iter().flatten().any(|w| {
        *w == b"-T" || w.starts_with(b"--upload-file") || (w.starts_with(b"-T") && w.len() > 2)
    });
    if !upload {
        return Vec::new();
    }
    (1..words.len())
        .filter_map(|k| {
            let w = words[k]?;
            let lower = w.get(..7)?.to_ascii_lowercase();
            if lower != b"file://" {
                return None;
            }
            // `file:///etc/x`, `file://localhost/etc/x`: the path starts at the third `/`.
            let path = w[7..].iter().position(|&c| c == b'/')?;
            Some((k, 7 + path))
        })
        .collect()
}

/// The files `split` or `csplit` (`program`) writes, as a pattern `filed::same` matches:
/// `PREFIX*SUFFIX` (split's prefix is its second operand, `x` by default, with
/// `--additional-suffix`; csplit's `-f`/`--prefix`, `xx` by default, with what `-b`'s format
/// writes after its number), `None` where an expansion makes the prefix.
pub(super) fn parts_written(words: &[Option<&[u8]>], program: &[u8]) -> Vec<Option<Vec<u8>>> {
    let value = |short: &[u8], long: &[u8]| -> Option<Option<&[u8]>> {
        (1..words.len()).find_map(|k| {
            let w = words[k]?;
            if w == short || w == long {
                return Some(words.get(k + 1).copied().flatten());
            }
            let glued = w.strip_prefix(long).and_then(|r| r.strip_prefix(b"="));
            let glued = glued.or_else(|| w.strip_prefix(short).filter(|r| !r.is_empty()));
            glued.map(Some)
        })
    };
    let (prefix, suffix): (Option<&[u8]>, Vec<u8>) = if program == b"csplit" {
        let format = value(b"-b", b"--suffix-format")
            .flatten()
            .unwrap_or_default();
        // The text after the number `%02d` writes (`%02d.txt` ends in `.txt`).
        let after = format
            .iter()
            .rposition(|&c| c == b'%')
            .map_or(&b""[..], |p| {
                let rest = &format[p + 1..];
                let conv = rest.iter().position(u8::is_ascii_alphabetic);
                conv.map_or(&b""[..], |c| &rest[c + 1..])
            });
        let prefix = value(b"-f", b"--prefix").unwrap_or(Some(b"xx"));
        (prefix, after.to_vec())
    } else {
        let takes = |w: &[u8]| {
            matches!(w, b"-l" | b"-b" | b"-n" | b"-C" | b"-a" | b"-t")
                || w == b"--additional-suffix"
        };
        let operands: Vec<usize> = (1..words.len())
            .filter(|&k| words[k].is_none_or(|w| !w.starts_with(b"-") || w == b"-"))
            .filter(|&k| !words[k - 1].is_some_and(takes))
            .collect();
        let prefix = operands.get(1).map_or(Some(&b"x"[..]), |&k| words[k]);
        let suffix = value(b"--additional-suffix", b"--additional-suffix");
        (prefix, suffix.flatten().unwrap_or_default().to_vec())
    };
    vec![prefix.map(|p| [p, b"*", &suffix].concat())]
}
