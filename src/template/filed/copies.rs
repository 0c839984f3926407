//! What a copy makes, for `filed`: the files `cp`, `mv`, `ln` and `install` (behind any
//! wrapper) write, with `-t DIR` and a destination named as a directory, what a copy of a
//! file a value was written into holds, and the copies of a file named as data under a name
//! not known to hold data (`rsync`'s and `scp`'s too). Pure: it reads words, never files.

use super::*;
use crate::template::reread::Cwd;

/// The files `cp`, `mv`, `ln` or `install` (behind any wrapper) makes from files a value was
/// written into, in pairs: its last operand, and that operand joined with each source's
/// name (it may be a directory), each with what its source holds.
pub(super) fn copies(
    words: &[Option<&[u8]>],
    filed: &[Filed],
) -> Vec<(Option<Vec<u8>>, Vec<Read>)> {
    let Some(Copy {
        dest,
        sources,
        target,
        ..
    }) = copy(words)
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for source in sources {
        let reads: Vec<Read> = written_into(source, filed);
        if reads.is_empty() {
            continue;
        }
        let joined = match (dest, source) {
            (Some(d), Some(s)) => Some(joined(d, s)),
            _ => None,
        };
        // A target directory is named as one (`DIR/`): the file made is the joined name.
        let dest = dest.map(|d| {
            let mut d = normal(d).to_vec();
            if target && !d.ends_with(b"/") {
                d.push(b'/');
            }
            d
        });
        out.push((dest, reads.clone()));
        out.push((joined, reads));
    }
    out
}

/// The copies (`cp`, `mv`, `ln`, `install`) of a literal source named as data to a
/// destination not known to hold data: each destination (`None`: an expansion makes it) with
/// its source. A destination named as a directory (`DIR/`, `-t DIR`) keeps the source's name.
pub(super) fn data_copies<'a>(words: &[Option<&'a [u8]>]) -> Vec<(Option<&'a [u8]>, &'a [u8])> {
    let Some(Copy {
        dest,
        sources,
        target,
        ..
    }) = copy(words).or_else(|| remote_copy(words))
    else {
        return Vec::new();
    };
    let dir = target || dest.is_some_and(|d| d.ends_with(b"/"));
    let mut out = Vec::new();
    for source in sources.iter().flatten() {
        if !data_named(normal(source)) {
            continue;
        }
        let kept = match dest {
            Some(d) if dir => data_file(&joined(d, source)),
            Some(d) => data_file(normal(d)),
            None => false,
        };
        if !kept {
            out.push((dest, *source));
        }
    }
    out
}

/// What a `cp`, `mv`, `ln`, `install`, `rsync` or `scp` (behind any wrapper) copies where.
pub(super) struct Copy<'a> {
    /// Its last operand, or the directory of `-t DIR` (`None`: an expansion makes it).
    pub(super) dest: Option<&'a [u8]>,
    /// The word naming `dest`, and the byte its name starts at in it (`-tDIR`).
    pub(super) dest_at: Option<usize>,
    pub(super) dest_from: usize,
    pub(super) sources: Vec<Option<&'a [u8]>>,
    /// The words of `sources`.
    pub(super) sources_at: Vec<usize>,
    /// `dest` is a target directory (`-t DIR`).
    pub(super) target: bool,
}

/// What an `rsync` or `scp` copies where, for a file named as data only (`rsync notes.txt
/// hook.sh`): its last word and the words before it that are no options (an option's value
/// taken for a source at worst, which must then be named as data to count).
pub(super) fn remote_copy<'a>(words: &[Option<&'a [u8]>]) -> Option<Copy<'a>> {
    let &at = programs::chain(words).last()?;
    if !words[at]
        .map(base)
        .is_some_and(|p| p == b"rsync" || p == b"scp")
    {
        return None;
    }
    // The options that take the next word (rsync's and scp's short ones, and rsync's long
    // ones written apart from their value).
    const TAKES: &[&[u8]] = &[
        b"-B",
        b"-e",
        b"-f",
        b"-M",
        b"-T",
        b"-c",
        b"-D",
        b"-F",
        b"-i",
        b"-J",
        b"-l",
        b"-o",
        b"-P",
        b"-S",
        b"-X",
        b"--exclude",
        b"--include",
        b"--filter",
        b"--exclude-from",
        b"--include-from",
        b"--files-from",
        b"--rsh",
        b"--rsync-path",
        b"--chmod",
        b"--chown",
        b"--bwlimit",
        b"--log-file",
        b"--partial-dir",
        b"--temp-dir",
        b"--compare-dest",
        b"--copy-dest",
        b"--link-dest",
        b"--backup-dir",
        b"--suffix",
        b"--timeout",
        b"--port",
        b"--password-file",
        b"--remote-option",
        b"--max-size",
        b"--min-size",
        b"--usermap",
        b"--groupmap",
        b"--out-format",
        b"--info",
        b"--debug",
        b"--iconv",
    ];
    let mut at_words: Vec<usize> = Vec::new();
    let mut skip = false;
    for (i, w) in words.iter().enumerate().skip(at + 1) {
        if std::mem::take(&mut skip) {
            continue;
        }
        match w {
            Some(w) if w.starts_with(b"-") => skip = TAKES.contains(w),
            _ => at_words.push(i),
        }
    }
    let dest_at = at_words.pop()?;
    Some(Copy {
        dest: words[dest_at],
        dest_at: Some(dest_at),
        dest_from: 0,
        sources: at_words.iter().map(|&i| words[i]).collect(),
        sources_at: at_words,
        target: false,
    })
}

pub(super) fn copy<'a>(words: &[Option<&'a [u8]>]) -> Option<Copy<'a>> {
    let &at = programs::chain(words).last()?;
    if !words[at]
        .map(base)
        .is_some_and(|p| [&b"cp"[..], b"mv", b"ln", b"install"].contains(&p))
    {
        return None;
    }
    let (target, mut operands) = target_directory(&words[at + 1..]);
    let word = |(k, from): (usize, usize)| words[at + 1 + k].map(|w| &w[from.min(w.len())..]);
    let (dest, is_target) = match target {
        // `cp -t DIR SRC…`: every operand is a source.
        Some(t) => (t, true),
        None => ((operands.pop()?, 0), false),
    };
    Some(Copy {
        dest: word(dest),
        dest_at: Some(at + 1 + dest.0).filter(|&d| d < words.len()),
        dest_from: dest.1,
        sources: operands.iter().map(|&k| words[at + 1 + k]).collect(),
        sources_at: operands.iter().map(|&k| at + 1 + k).collect(),
        target: is_target,
    })
}

/// The file a copy of `source` into the directory `dir` makes (`DIR/NAME`).
pub(super) fn joined(dir: &[u8], source: &[u8]) -> Vec<u8> {
    let mut j = dir.to_vec();
    if !j.ends_with(b"/") {
        j.push(b'/');
    }
    j.extend_from_slice(base(source));
    normal(&j).to_vec()
}

/// The directory `-t DIR` (`-tDIR`, a bundle ending in `t`, `--target-directory[=]DIR`)
/// names among the words after `cp`, `mv`, `ln` or `install`, if any (its word's index and
/// the byte the name starts at), and their operands' indices (the words that are no
/// options, nor that option's value).
pub(super) type Target = (Option<(usize, usize)>, Vec<usize>);

pub(super) fn target_directory(words: &[Option<&[u8]>]) -> Target {
    let mut target = None;
    let mut operands = Vec::new();
    let mut k = 0;
    while k < words.len() {
        let w = words[k];
        k += 1;
        let Some(word) = w else {
            operands.push(k - 1);
            continue;
        };
        if word == b"--target-directory" || word == b"-t" {
            target = Some((k, 0));
            k += 1;
        } else if word.starts_with(b"--target-directory=") {
            target = Some((k - 1, b"--target-directory=".len()));
        } else if word.len() > 1 && word[0] == b'-' && word[1] != b'-' {
            if let Some(t) = word.iter().position(|&c| c == b't') {
                if t + 1 == word.len() {
                    target = Some((k, 0));
                    k += 1;
                } else {
                    target = Some((k - 1, t + 1));
                }
            }
        } else if !word.starts_with(b"-") {
            operands.push(k - 1);
        }
    }
    (target, operands)
}

/// The copies of a tree whose files keep names the model cannot see (fe30v F10, F5): a
/// source that may be a directory (`cp -r`/`-a`, `rsync -r`/`-a`, `scp -r`, any `mv`, a source
/// not named as a data file) or a pattern that does not fix a data ending (`/srv/inbox/*`),
/// from a directory where data files are data (any action may have written a value into
/// `/srv/notes/x.txt`, and whoever drops files there names them), into a destination where
/// such a file is not data (`/etc/logrotate.d/x.txt`, a hidden directory), or into a home
/// directory, where a login shell runs `.bashrc` and `.profile`. Each with the name of a file
/// the source may hold (`SRC/x.txt`) and what the copy does, for `Analysis::runs_data`.
pub fn tree_uses(words: &[Option<&[u8]>], cwd: &Cwd) -> Vec<(Vec<u8>, String)> {
    let mut out = tree_copies(words, cwd);
    out.extend(renamed(words));
    out
}

fn tree_copies(words: &[Option<&[u8]>], cwd: &Cwd) -> Vec<(Vec<u8>, String)> {
    let Some(c) = copy(words).or_else(|| remote_copy(words)) else {
        return Vec::new();
    };
    let Some(&k) = programs::chain(words).last() else {
        return Vec::new();
    };
    let program = words[k].map(base).unwrap_or_default();
    let bundle = |w: &[u8], letters: &[u8]| {
        w.len() > 1 && w[0] == b'-' && w[1] != b'-' && w[1..].iter().any(|c| letters.contains(c))
    };
    let options = || {
        words[k + 1..]
            .iter()
            .flatten()
            .filter(|w| w.starts_with(b"-"))
    };
    let recursive = match program {
        b"mv" => true,
        b"cp" => options()
            .any(|w| bundle(w, b"rRa") || *w == b"--recursive" || w.starts_with(b"--archive")),
        b"rsync" => {
            options().any(|w| bundle(w, b"ra") || *w == b"--recursive" || *w == b"--archive")
        }
        b"scp" => options().any(|w| bundle(w, b"r")),
        _ => false,
    };
    let mut out = Vec::new();
    for source in c.sources.iter().flatten() {
        // A source named as a data file, or a pattern fixing a data ending (`*.pdf`), keeps
        // a data name (`data_copies` judges where).
        if data_named(normal(source)) {
            continue;
        }
        let pattern = base(source).iter().any(|c| b"*?[".contains(c)) && may_be_data(source);
        if !pattern && !recursive {
            continue;
        }
        // The directory the source's files are in: a pattern's, or the source itself.
        let tree = if pattern {
            source[..source.len() - base(source).len()].to_vec()
        } else {
            source.to_vec()
        };
        let held = joined(&tree, b"x.txt");
        // A tree where a data file is not data (`/etc/skel/`) holds no value of a press.
        if !data_file(&held) {
            continue;
        }
        if let Some(does) = c.dest.map_or_else(
            || {
                Some(
                    "copies, into a directory an expansion makes, the files of the tree, such as"
                        .to_string(),
                )
            },
            |d| tree_lands(cwd, d, &tree),
        ) {
            out.push((held, does));
        }
    }
    out
}

/// Why a tree `tree` copied into `dest` is refused, if it is: its files land in a directory
/// where a data file is not data, or in a home directory.
fn tree_lands(cwd: &Cwd, dest: &[u8], tree: &[u8]) -> Option<String> {
    let shown = String::from_utf8_lossy(dest);
    let mut probes = vec![joined(dest, b"x.txt")];
    let mut below = joined(dest, base(lands::normal(tree).as_slice()));
    below.extend_from_slice(b"/x.txt");
    probes.push(below);
    for probe in probes {
        for landing in lands::landings(cwd, Some(&probe)) {
            let lands::Landing::Name(Some(n)) = landing else {
                return Some(format!(
                    "copies, into `{shown}` after a `cd` to a directory an expansion makes, the \
                     files of the tree, such as"
                ));
            };
            if !data_file(&n) {
                return Some(format!(
                    "copies, into `{shown}`, where a file it holds is not data (`{}`: a \
                     directory whose files programs load, or a hidden one), the files of the \
                     tree, such as",
                    String::from_utf8_lossy(&n)
                ));
            }
        }
    }
    let mut d = lands::normal(dest);
    if d.len() > 1 && d.ends_with(b"/") {
        d.pop();
    }
    let home = d == b"/root"
        || d == b"/var/lib/actiond-run"
        || (d.starts_with(b"~") && !d.contains(&b'/'))
        || (d.starts_with(b"/home/") && !d[6..].contains(&b'/'));
    home.then(|| {
        format!(
            "copies, into the home directory `{shown}` (whose `.bashrc`, `.profile` a login \
             shell runs), keeping names someone else chose, the files of the tree, such as"
        )
    })
}

/// The files named as data (or patterns that may name them) that a program renames to names
/// the model cannot see or that are no data names (fe30v F4): perl's `rename 's/\.txt$/.sh/'
/// *.txt` (its expression is perl, not read), `mmv FROM TO` with a `TO` no data name
/// (`/srv/bin/#1`), and `run-parts --regex` on a directory of data files, which runs every
/// file there. Each file with what the program does, for `Analysis::runs_data`.
fn renamed(words: &[Option<&[u8]>]) -> Vec<(Vec<u8>, String)> {
    let Some(&k) = programs::chain(words).last() else {
        return Vec::new();
    };
    let operands: Vec<&[u8]> = words[k + 1..]
        .iter()
        .flatten()
        .copied()
        .filter(|w| !w.starts_with(b"-"))
        .collect();
    let data = |w: &[u8]| may_be_data(normal(w));
    match words[k].map(base).unwrap_or_default() {
        b"rename" | b"prename" | b"file-rename" | b"perl-rename" | b"rename.ul" => operands
            .iter()
            .skip(1)
            .filter(|w| data(w))
            .map(|w| {
                let does = "renames, to names its expression makes (`s/\\.txt$/.sh/` makes \
                            scripts; actiond does not read it),";
                (w.to_vec(), does.to_string())
            })
            .collect(),
        b"mmv" => match operands[..] {
            [from, to, ..] if data(from) => {
                let made: Vec<u8> = to
                    .iter()
                    .map(|&c| if c == b'#' { b'x' } else { c })
                    .collect();
                if data_file(&made) {
                    return Vec::new();
                }
                let does = format!(
                    "renames, to `{}` (a name not known to hold data),",
                    String::from_utf8_lossy(to)
                );
                vec![(from.to_vec(), does)]
            }
            _ => Vec::new(),
        },
        // Without `--regex` run-parts runs no name with a `.` in it: no data name.
        b"run-parts" if words.iter().flatten().any(|w| w.starts_with(b"--regex")) => operands
            .last()
            .map(|dir| joined(dir, b"x.txt"))
            .filter(|held| data_file(held))
            .map(|held| {
                let does = "runs (`run-parts --regex`) every file of the directory, such as";
                vec![(held, does.to_string())]
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The data files an archive `tar -c` (`gtar`, `bsdtar`, `zip -r`) makes of a tree holds: for
/// each operand that may be a directory where data files are data (`/srv/notes`, `notes`
/// after `-C /srv`), a file named as data in it (`notes/x.txt`), which any action may have
/// written a value into. Its extraction (`| tar -x -C /etc/logrotate.d`) then unpacks what
/// a data file holds (`Read::Stored`).
pub(super) fn archived(words: &[Option<&[u8]>]) -> Vec<String> {
    let Some(&k) = programs::chain(words).last() else {
        return Vec::new();
    };
    let rest = &words[k + 1..];
    let first = rest.iter().flatten().next().copied().unwrap_or_default();
    let bundle = |w: &[u8], c: u8| w.len() > 1 && w[0] == b'-' && w[1] != b'-' && w.contains(&c);
    let creates = match words[k].map(base).unwrap_or_default() {
        b"tar" | b"gtar" | b"bsdtar" => {
            (!first.starts_with(b"-") && first.contains(&b'c'))
                || rest
                    .iter()
                    .flatten()
                    .any(|w| bundle(w, b'c') || *w == b"--create")
        }
        b"zip" => rest.iter().flatten().any(|w| bundle(w, b'r')),
        _ => false,
    };
    if !creates {
        return Vec::new();
    }
    const TAKES: &[&[u8]] = &[
        b"-f",
        b"-C",
        b"-T",
        b"-X",
        b"-I",
        b"-b",
        b"-H",
        b"-g",
        b"-V",
        b"-N",
        b"-L",
        b"--file",
        b"--directory",
        b"--exclude",
        b"--files-from",
        b"--exclude-from",
        b"-x",
        b"-i",
    ];
    let mut out = Vec::new();
    let mut skip = false;
    // The directory `-C DIR` (`--directory DIR`) moves to: the operands after it are in it.
    let mut dir: Option<&[u8]> = None;
    for (j, w) in rest.iter().enumerate() {
        if std::mem::take(&mut skip) {
            if j > 0 && matches!(rest[j - 1], Some(b"-C" | b"--directory")) {
                dir = *w;
            }
            continue;
        }
        let Some(w) = w else { continue };
        if w.starts_with(b"-") || (j == 0 && !w.contains(&b'/') && !w.contains(&b'.')) {
            // An option (or tar's first word of options, `czf`), which may take the next
            // word: `-f F`, `-C DIR`, a bundle ending in `f`.
            skip = TAKES.contains(w) || (w.len() > 1 && w[1] != b'-' && w.ends_with(b"f"));
            continue;
        }
        let held = joined(w, b"x.txt");
        let tree = match dir {
            Some(d) if !w.starts_with(b"/") => joined(&joined(d, w), b"x.txt"),
            _ => held.clone(),
        };
        if !data_named(normal(w)) && data_file(&held) && data_file(&tree) {
            out.push(String::from_utf8_lossy(&held).into_owned());
        }
    }
    out
}
