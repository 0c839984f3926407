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
        Some(b"split") => return vec![None],
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
        Some(b"sort") => (b"o", &[b"output"]),
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
        Some(b"sponge") => {
            return (1..words.len())
                .filter(|&k| words[k].is_none_or(|w| !w.starts_with(b"-")))
                .map(|k| (k, 0))
                .collect();
        }
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
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
