//! What `curl`, `wget` and `git clone` do with a value beside running it, for `own`: curl's
//! data that may start with `@FILE` (a file read and sent), `--data-urlencode`'s `name@FILE`,
//! a form field's file name, and a download that names its file after the url in the
//! working directory. Pure and syntactic like `own`: it reads words, never values.

use super::super::reread::Rereading;
use super::option_words;
use super::{Found, GIT_DIR, NAMED_BY_URL};

/// The words of curl's data options where a value may start what curl reads as `@FILE`: the
/// whole word of `-d`, `--data`, `--data-binary`, `--data-ascii`, `--json` and `-H` (known
/// text before it, `Title: {{ v }}`, leaves it data), and what follows a `name=` of `-F`,
/// `--form` and `--data-urlencode`.
pub(super) fn curl_data(values: &[Option<&[u8]>], texts: &[&[u8]], i: usize) -> Vec<usize> {
    let whole = option_words(
        values,
        i,
        &[b"-d", b"-H"],
        &[b"data", b"data-binary", b"data-ascii", b"json", b"header"],
    );
    let named = option_words(values, i, &[b"-F"], &[b"form"]);
    // The word's known text (`shell:`) or its whole text with placeholders (`exec:`).
    let starts = |t: &[u8]| t.is_empty() || t.starts_with(b"{{");
    let mut out: Vec<usize> = whole
        .into_iter()
        .filter(|&j| values[j].is_none() && starts(texts[j]))
        .collect();
    out.extend(named.into_iter().filter(|&j| {
        let t = texts[j];
        values[j].is_none() && (starts(t) || t.ends_with(b"=") || t.windows(3).any(|w| w == b"={{"))
    }));
    out
}

/// The words of `curl --data-urlencode` with a value and no `=` the author wrote: curl splits
/// such a word at its first `@` into a name and a file it reads and sends (`x@mqtt.secret`,
/// an `email`, a `url` with a user), and only an `=` anywhere in it makes the rest content.
pub(super) fn curl_urlencoded(values: &[Option<&[u8]>], texts: &[&[u8]], i: usize) -> Vec<usize> {
    option_words(values, i, &[], &[b"data-urlencode"])
        .into_iter()
        .filter(|&j| values[j].is_none() && !texts[j].contains(&b'='))
        .collect()
}

/// The words that start with a value where the program names the file it writes after the
/// url: `curl -O`/`-J`/`--remote-name-all` and `wget URL` (no `-O`), in whatever directory
/// `--output-dir` or `-P` names (the url, or the server with `-J`/`--content-disposition`,
/// picks the name there: `.bash_profile`, a table in `/etc/cron.d`, `config.yaml` in the
/// working directory), and `git clone URL` with no directory, or into one programs load
/// code from (`git_dir`: hidden, a home directory, `/etc`…, where the repository's files
/// are a plugin or a profile). Read as `Rereading::Written`.
pub(super) fn named_by_url(
    values: &[Option<&[u8]>],
    texts: &[&[u8]],
    i: usize,
    program: &[u8],
) -> Vec<Found> {
    let words = &values[i + 1..];
    let has = |f: &dyn Fn(&[u8]) -> bool| words.iter().flatten().any(|w| f(w));
    let bundle = |w: &[u8], c: u8| w.len() > 1 && w[0] == b'-' && w[1] != b'-' && w.contains(&c);
    let mut place = NAMED_BY_URL;
    let named = match program {
        b"curl" => {
            has(&|w| bundle(w, b'O') || bundle(w, b'J'))
                || has(&|w| w.starts_with(b"--remote-name") || w == b"--remote-header-name")
        }
        b"wget" => !has(&|w| bundle(w, b'O')) && !has(&|w| w.starts_with(b"--output-document")),
        // `git clone URL` with no directory after it: the first word after `clone` and its
        // options is the url, and nothing follows it.
        _ => {
            let Some(c) = words.iter().position(|w| *w == Some(&b"clone"[..])) else {
                return Vec::new();
            };
            let operands = super::super::filed::named::clone_operands(&words[c + 1..]);
            if operands.len() == 2
                && let Some(dir) = words[c + 1 + operands[1]]
                && !git_dir(dir)
            {
                place = GIT_DIR;
            }
            operands.len() == 1 || place == GIT_DIR
        }
    };
    if !named {
        return Vec::new();
    }
    // A short option's value is not the url (`wget -e CMD`, `curl -H TEXT`): its own rules
    // read it.
    let takes: &[u8] = match program {
        b"curl" => b"EKCbcdDFPHhmoUQreXYytzTuAw",
        b"wget" => b"eoaiBtOTwQPUlARDIX",
        _ => b"bcou",
    };
    (i + 1..values.len())
        .filter(|&j| values[j].is_none() && (texts[j].is_empty() || texts[j].starts_with(b"{{")))
        .filter(|&j| !option_value(values, j, takes))
        .map(|j| Found {
            at: j,
            place,
            how: Rereading::Written,
            env: None,
            leading: false,
        })
        .collect()
}

/// Whether `git clone URL DIR` may fill `dir` (written out) with what the url serves: not a
/// hidden directory or one below one (`~/.vim/pack/…/start/x`, whose plugins vim runs), not
/// a home directory itself (`/home/pi`, `/root`, `~`), nothing under `/etc`, `/usr`, …
/// (`filed::named::area`).
fn git_dir(dir: &[u8]) -> bool {
    let d = dir.strip_suffix(b"/").unwrap_or(dir);
    let home = d == b"~"
        || d == b"/root"
        || d.starts_with(b"$HOME") && d.len() == 5
        || d.strip_prefix(b"/home/")
            .is_some_and(|u| !u.is_empty() && !u.contains(&b'/'));
    let mut with = d.to_vec();
    with.push(b'/');
    !home && !d.starts_with(b"$") && super::super::filed::named::area(&with)
}

/// Whether word `j` is the value of the option before it: a short option whose last letter
/// is in `takes`, or a long one without `=` that is not a flag a download command holds.
fn option_value(values: &[Option<&[u8]>], j: usize, takes: &[u8]) -> bool {
    const FLAGS: &[&[u8]] = &[
        b"--quiet",
        b"--verbose",
        b"--no-verbose",
        b"--continue",
        b"--timestamping",
        b"--silent",
        b"--show-error",
        b"--location",
        b"--fail",
        b"--insecure",
        b"--compressed",
        b"--remote-name",
        b"--remote-name-all",
        b"--remote-header-name",
        b"--no-check-certificate",
        b"--no-clobber",
        b"--recursive",
        b"--mirror",
    ];
    values[j - 1].is_some_and(|p| {
        if p.starts_with(b"--") {
            !p.contains(&b'=') && !FLAGS.contains(&p)
        } else {
            p.len() > 1 && p[0] == b'-' && takes.contains(&p[p.len() - 1])
        }
    })
}

/// The words of `curl -F`/`--form` whose value stands in a file name the author marked with
/// `@` or `<` (`document=@{{ filepath }}`).
pub(super) fn curl_files(values: &[Option<&[u8]>], texts: &[&[u8]], i: usize) -> Vec<usize> {
    option_words(values, i, &[b"-F"], &[b"form"])
        .into_iter()
        .filter(|&j| {
            let t = texts[j];
            values[j].is_none()
                && (t.ends_with(b"=@")
                    || t.ends_with(b"=<")
                    || t.windows(4).any(|w| w == b"=@{{" || w == b"=<{{"))
        })
        .collect()
}
