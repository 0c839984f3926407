//! The differential test of the shell model (`actiond::template`) against real shells.
//!
//! `grammar` writes templates from a shell grammar with `{{ v }}` in random places. Each one
//! the model accepts is rendered with a plain token and with hostile values (every shell
//! metacharacter, quotes, newlines, `{{ }}`, here-document delimiters, arithmetic payloads,
//! control bytes, long runs), and run with `-c` under dash, bash, `bash --posix` and busybox
//! ash. Short templates also run as `variants`: with a line continuation at every character
//! boundary, CR LF newlines, blanks swapped and odd bytes put in, each with one value that
//! holds every payload. The oracle: what the shell prints and its exit status with a hostile
//! value are exactly what it does with the token, the token replaced by the value (so the
//! value arrived byte for byte where the template put it), and the marker file that every
//! payload tries to create never appears (no value ran). A template that breaks the oracle in
//! any shell is a divergence: the test shrinks it to a small template, prints it, and fails.
//! Each one found became a row of `src/template/tests.rs`.
//!
//! It needs the four shells (Debian: dash, bash, busybox), so `cargo test` leaves it out
//! (`#[ignore]`); `scripts/test.sh` runs it with a fixed seed as its own stage. The
//! environment variables `ACTIOND_SHELLS_TEMPLATES` (how many templates, default 2500),
//! `ACTIOND_SHELLS_SWEPT` (how many short templates run with all their variants, default 200),
//! `ACTIOND_SHELLS_SWEPT_LEN` (how long they may be, default 90 bytes) and
//! `ACTIOND_SHELLS_SEED` run it longer or elsewhere; `ACTIOND_SHELLS_ONLY=<template>`
//! checks one template, and its variants too with `ACTIOND_SHELLS_VARIANTS=1`.

mod assignments;
mod copies;
mod filed;
mod findings;
mod grammar;
mod launchers;
mod own;
mod variants;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use actiond::template::{Template, TemplateError, Values, judge, read_shell};
use grammar::{DELIMITERS, Gen, Rng};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use variants::{Change, variants};

const SHELLS: &[(&str, &[&str])] = &[
    ("dash", &["/bin/dash"]),
    ("bash", &["/bin/bash"]),
    ("bash --posix", &["/bin/bash", "--posix"]),
    ("busybox ash", &["/bin/busybox", "ash"]),
];

/// Prints each argument as `<arg>`: what a value turned into is visible byte for byte.
const PRELUDE: &str = "p() { printf '<%s>' \"$@\"; }\n";

/// The value every run is compared against: plain letters, unchanged by any quoting.
const TOKEN: &str = "Tq7xZ";

/// The file every payload tries to create in the working directory.
const MARK: &str = "MARK";

/// actiond refuses to start a command this long (the kernel's limit on one argument); such
/// renderings are not run.
const MAX_SCRIPT: usize = 128 * 1024 - 1;

/// A run taking longer than this has hung (a shell command here takes milliseconds).
const RUN_TIMEOUT: Duration = Duration::from_secs(10);

const DEFAULT_TEMPLATES: usize = 2500;
/// How many short templates run with all their variants (`variants.rs`).
const DEFAULT_SWEPT: usize = 200;
/// The longest short template (its variants are one per byte and more).
const DEFAULT_SWEPT_LEN: usize = 90;
const DEFAULT_SEED: u64 = 0x0015_5eed;

/// Values in every template's set: the payloads that try to run `touch MARK` from each
/// context a value can stand in.
fn core_values(rng: &mut Rng) -> Vec<String> {
    let d = rng.pick(DELIMITERS);
    vec![
        "$(touch MARK)".into(),
        "`touch MARK`".into(),
        "';touch MARK;'".into(),
        "\";touch MARK;\"".into(),
        "\ntouch MARK\n".into(),
        "a[$(touch MARK)]".into(),
        "-va[$(touch MARK)]".into(),
        format!("x\n{d}\ntouch MARK\n"),
        format!("x\n\t{d}\ntouch MARK\n"),
        // A bare program name or path: harmless as text, but where a shell reads the value as
        // a command's name (dash after `[[ … ||`, or after `cmd &>f`), the words after it
        // become files that `created` finds.
        "touch".into(),
        "/usr/bin/touch".into(),
    ]
}

/// The value a variant is run with: every payload of `core_values` in one, so that a
/// variant costs one run per shell beside its token run. Whatever context the value lands
/// in, if it is not the one the model placed it in, some part of it is read as syntax.
fn composite(rng: &mut Rng) -> String {
    let d = rng.pick(DELIMITERS);
    format!(
        "x'\";$(touch MARK)`touch MARK`;touch MARK;'\"#\n{d}\n\t{d}\ntouch MARK\na[$(touch MARK)]\\"
    )
}

/// Further values, of which each template gets a few.
fn other_values() -> Vec<String> {
    let mut v: Vec<String> = [
        "'\\''",
        "\\",
        "\\\\",
        "'",
        "\"",
        "$",
        "`",
        "${",
        "}",
        "$((1))",
        "#",
        ";;",
        "esac",
        ")",
        "(",
        "|",
        "&&",
        "\r",
        "\t",
        "é😀\u{202e}",
        "{{ v }}",
        "}}",
        "",
        " ",
        "-n",
        "--",
        "*",
        "~",
        "!",
        "$HOME",
        "${IFS}",
        "'$(touch MARK)'",
        "\"$(touch MARK)\"",
        "\\'$(touch MARK)",
        "\ntouch MARK #",
        ";touch MARK;#",
        "x[$(touch MARK)]+1",
        "-v",
        "\n",
        "E F",
        "q)",
        "\\\ntouch MARK",
        "$'\\'';touch MARK;'",
        "\"$(touch MARK)\"'$(touch MARK)'",
        "x\nE F\ntouch MARK\n",
        "\\\"`touch MARK`",
        "a\rb\r\n",
        "\u{1}$(touch MARK)\u{7f}",
        "\u{81}\u{82}\u{88}'\u{1}\"\u{7f}",
        "\r\n;touch MARK\r\n",
        "\\\r\ntouch MARK",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.push("'".repeat(3000));
    v.push("\\".repeat(3001));
    v.push("a $(touch MARK) ".repeat(300));
    v
}

/// A random value from shell-syntax pieces.
fn random_value(rng: &mut Rng) -> String {
    const PIECES: &[&str] = &[
        "'",
        "\"",
        "`",
        "$",
        "$(",
        ")",
        "(",
        "${",
        "}",
        "{",
        "{{ v }}",
        "\\",
        "\n",
        "\r",
        "\t",
        " ",
        ";",
        "|",
        "&",
        ">",
        "<",
        "*",
        "?",
        "~",
        "#",
        "!",
        "-v",
        "touch MARK",
        "EOF",
        "é",
        "a[",
        "]",
        "=",
        "%s",
    ];
    (0..1 + rng.below(8))
        .map(|_| *rng.pick(PIECES))
        .collect::<String>()
}

struct Ran {
    stdout: Vec<u8>,
    status: Option<i32>,
    marked: bool,
    hung: bool,
    /// The files the run left in its directory (removed after), sorted.
    created: Vec<Vec<u8>>,
}

/// Runs `script` with `-c` in `dir` (empty before), in its own process group, stdin from
/// /dev/null; a run that hangs is killed with its group.
fn run(shell: &[&str], script: &str, dir: &Path) -> Ran {
    let mut child = Command::new(shell[0])
        .args(&shell[1..])
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C.UTF-8")
        .env("HOME", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {shell:?}: {e}"));
    let group = Pid::from_raw(child.id() as i32);
    let (finished, wait) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if wait.recv_timeout(RUN_TIMEOUT).is_err() {
            let _ = killpg(group, Signal::SIGKILL);
            return true;
        }
        false
    });
    let mut stdout = Vec::new();
    if let Some(mut out) = child.stdout.take() {
        let _ = std::io::Read::read_to_end(&mut out, &mut stdout);
    }
    let status = child.wait().expect("wait");
    let _ = finished.send(());
    let hung = watchdog.join().unwrap_or(false);
    // Whatever the script left behind in its group goes with it.
    let _ = killpg(group, Signal::SIGKILL);
    let marked = dir.join(MARK).exists();
    let mut created = Vec::new();
    for entry in std::fs::read_dir(dir).expect("scratch dir").flatten() {
        created.push(entry.file_name().into_encoded_bytes());
        let path = entry.path();
        if path.is_dir() {
            let _ = std::fs::remove_dir_all(&path);
        } else {
            let _ = std::fs::remove_file(&path);
        }
    }
    created.sort();
    Ran {
        stdout,
        status: status.code(),
        marked,
        hung,
        created,
    }
}

use std::os::unix::process::CommandExt;

impl Ran {
    fn same(&self, other: &Ran) -> bool {
        self.stdout == other.stdout
            && self.status == other.status
            && self.hung == other.hung
            && self.created == other.created
    }

    /// Whether the value ran: the marker file appeared, or the run left a file that the
    /// token run (with the token replaced by the value) did not, which is what a value read
    /// as a command's name (`touch`) does with the words after it.
    fn injected(&self, token: &Ran, value: &str) -> bool {
        if self.marked || token.marked {
            return true;
        }
        let expected: Vec<Vec<u8>> = token
            .created
            .iter()
            .map(|f| replace(f, TOKEN.as_bytes(), value.as_bytes()))
            .collect();
        self.created.iter().any(|f| !expected.contains(f))
    }
}

fn replace(haystack: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len());
    let mut i = 0;
    while i < haystack.len() {
        if haystack[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(haystack[i]);
            i += 1;
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// The marker file appeared: the value ran as code.
    Injection,
    /// The shell printed something else than the value where the template put it.
    Changed,
}

/// What a template with `value` does in `shell` compared with the token, if it diverges.
fn diverges(shell: &[&str], text: &str, value: &str, dir: &Path) -> Option<Kind> {
    let template = compile(text).ok()?;
    if !template.has_placeholders() {
        return None;
    }
    let script = render(&template, value);
    if script.len() > MAX_SCRIPT {
        return None;
    }
    let token = run(shell, &render(&template, TOKEN), dir);
    let again = run(shell, &render(&template, TOKEN), dir);
    let hostile = run(shell, &script, dir);
    if hostile.injected(&token, value) {
        return Some(Kind::Injection);
    }
    if token.hung || !token.same(&again) {
        return None;
    }
    let want = replace(&token.stdout, TOKEN.as_bytes(), value.as_bytes());
    if hostile.hung || hostile.stdout != want || hostile.status != token.status {
        return Some(Kind::Changed);
    }
    None
}

/// What a config check accepts: the shell model's contexts, and its verdict on what bash
/// reads again, with `{{ v }}` an argument whose values are text (no `type: int`).
fn compile(text: &str) -> Result<Template, TemplateError> {
    let (template, analysis) = read_shell(text)?;
    let mut values = Values {
        any: true,
        ..Values::default()
    };
    // The variables actiond gives the argument's value (`findings` reads them).
    for (variable, bare) in [("ACTIOND_ARG_V", false), ("V", true)] {
        values
            .variables
            .insert(variable.to_string(), ("v".to_string(), bare));
    }
    judge(text, &analysis, &values).map_err(|why| TemplateError {
        message: why.to_string(),
    })?;
    Ok(template)
}

fn render(template: &Template, value: &str) -> String {
    format!("{PRELUDE}{}", template.render(&|_| Some(value.to_string())))
}

/// Removes pieces of `text` while the divergence stays (same shell, value and kind).
fn shrink(shell: &[&str], text: &str, value: &str, kind: &Kind, dir: &Path) -> String {
    let mut best = text.to_string();
    let mut tries = 0;
    let mut size = best.len() / 2;
    while size > 0 && tries < 300 {
        let mut i = 0;
        let mut improved = false;
        while i + size <= best.len() && tries < 300 {
            if !best.is_char_boundary(i) || !best.is_char_boundary(i + size) {
                i += 1;
                continue;
            }
            let candidate = format!("{}{}", &best[..i], &best[i + size..]);
            tries += 1;
            if diverges(shell, &candidate, value, dir).as_ref() == Some(kind) {
                best = candidate;
                improved = true;
            } else {
                i += size;
            }
        }
        if !improved {
            size /= 2;
        }
    }
    best
}

struct Divergence {
    shell: &'static str,
    kind: Kind,
    change: Change,
    template: String,
    value: String,
    shrunk: String,
}

/// Counts per kind of variant.
#[derive(Default, Clone, Copy)]
struct Count {
    generated: usize,
    refused: usize,
    without_placeholders: usize,
    accepted: usize,
    runs: usize,
}

#[derive(Default)]
struct Tally {
    counts: std::collections::BTreeMap<Change, Count>,
    reasons: std::collections::BTreeMap<String, usize>,
    divergences: Vec<Divergence>,
}

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => {
            let v = v.trim();
            let parsed = match v.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => v.parse(),
            };
            parsed.unwrap_or_else(|e| panic!("{name}={v:?}: {e}"))
        }
        Err(_) => default,
    }
}

fn scratch(worker: usize) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("actiond-shells-{}-{worker}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// One template to check: a generated one (`Change::Base`) or a variant of one.
struct Case {
    text: String,
    probed: bool,
    change: Change,
}

/// The values a case is run with. A base template gets the injection payloads, a few more
/// and two random ones; a variant, which differs from its base only in how the shells read
/// its text, gets the composite payload.
fn values_for(case: &Case, rng: &mut Rng) -> Vec<String> {
    if case.change != Change::Base {
        return vec![composite(rng)];
    }
    let others = other_values();
    let mut values = core_values(rng);
    for _ in 0..4 {
        values.push(rng.pick(&others).clone());
    }
    values.push(random_value(rng));
    values.push(random_value(rng));
    values
}

/// Tests one case: its values in every shell.
fn check(index: usize, case: &Case, seed: u64, dir: &Path, tally: &Mutex<Tally>) {
    let text = case.text.as_str();
    let template = match compile(text) {
        Ok(t) => t,
        Err(e) => {
            let mut t = tally.lock().unwrap();
            t.counts.entry(case.change).or_default().refused += 1;
            // The reason, without the placeholder's name and the hint.
            let why = e
                .message
                .split(':')
                .next()
                .unwrap_or("")
                .replace("{{ v }}", "");
            *t.reasons.entry(why).or_default() += 1;
            return;
        }
    };
    if !template.has_placeholders() {
        let mut t = tally.lock().unwrap();
        t.counts
            .entry(case.change)
            .or_default()
            .without_placeholders += 1;
        return;
    }
    let mut rng = Rng::new(seed ^ (index as u64).wrapping_mul(0x9e37_79b9));
    let values = values_for(case, &mut rng);
    let mut runs = 0;
    let mut found = Vec::new();
    for &(name, shell) in SHELLS {
        let token = run(shell, &render(&template, TOKEN), dir);
        runs += 1;
        if token.hung {
            // Hung without any value: nothing to compare with.
            continue;
        }
        // Whether the token run gives the same output twice (not so with `$$`, a pid):
        // asked only when a value's output differs from it.
        let mut steady = None;
        let mut is_steady = |runs: &mut usize| {
            *steady.get_or_insert_with(|| {
                *runs += 1;
                token.same(&run(shell, &render(&template, TOKEN), dir))
            })
        };
        for value in &values {
            let script = render(&template, value);
            if script.len() > MAX_SCRIPT {
                continue;
            }
            let hostile = run(shell, &script, dir);
            runs += 1;
            let want = replace(&token.stdout, TOKEN.as_bytes(), value.as_bytes());
            let kind = if hostile.injected(&token, value) {
                Some(Kind::Injection)
            } else if !case.probed
                && (hostile.hung || hostile.stdout != want || hostile.status != token.status)
                && is_steady(&mut runs)
            {
                Some(Kind::Changed)
            } else {
                None
            };
            if let Some(kind) = kind {
                // Shrinking takes hundreds of runs: once per template is enough.
                let shrunk = if found.is_empty() {
                    shrink(shell, text, value, &kind, dir)
                } else {
                    String::from("(see above)")
                };
                found.push(Divergence {
                    shell: name,
                    kind,
                    change: case.change,
                    template: text.to_string(),
                    value: value.clone(),
                    shrunk,
                });
                break;
            }
        }
    }
    let mut t = tally.lock().unwrap();
    let count = t.counts.entry(case.change).or_default();
    count.accepted += 1;
    count.runs += runs;
    t.divergences.extend(found);
}

/// Without any shell: the model reads many generated templates and their variants (and
/// every prefix-cut of them, which leaves constructs open) without panicking or looping.
/// Plain `cargo test` runs it.
#[test]
fn the_model_reads_any_generated_template() {
    let mut generator = Gen::new(Rng::new(DEFAULT_SEED ^ 0xabcd));
    let mut rng = Rng::new(DEFAULT_SEED ^ 0xdcba);
    // A read that loops would never end; one that is merely slow on a loaded machine is no
    // failure (tests assert what does not depend on machine speed). So each read is timed
    // on its own, against a bound a thousand times what one takes on a quiet machine.
    let mut slowest = (Duration::ZERO, String::new());
    let mut read = |text: &str| {
        let started = Instant::now();
        let _ = Template::shell(text);
        let took = started.elapsed();
        if took > slowest.0 {
            slowest = (took, text.to_string());
        }
    };
    for n in 0..600 {
        let text = generator.template();
        read(&text);
        for cut in (0..text.len())
            .step_by(11)
            .filter(|&i| text.is_char_boundary(i))
        {
            read(&text[..cut]);
        }
        if n % 15 == 0 {
            for (variant, _) in variants(&text, &mut rng) {
                read(&variant);
            }
        }
    }
    assert!(
        slowest.0 < Duration::from_secs(10),
        "one read took {:?}: {:?}",
        slowest.0,
        slowest.1
    );
}

#[test]
#[ignore = "needs dash, bash and busybox: scripts/test.sh runs it (cargo test --test shells -- --ignored)"]
fn the_model_agrees_with_dash_bash_and_busybox_ash() {
    for (name, shell) in SHELLS {
        assert!(
            Path::new(shell[0]).exists(),
            "{name} is missing ({}): install dash, bash and busybox",
            shell[0]
        );
    }
    let count = env_number("ACTIOND_SHELLS_TEMPLATES", DEFAULT_TEMPLATES as u64) as usize;
    let swept = env_number("ACTIOND_SHELLS_SWEPT", DEFAULT_SWEPT as u64) as usize;
    let swept_len = env_number("ACTIOND_SHELLS_SWEPT_LEN", DEFAULT_SWEPT_LEN as u64) as usize;
    let seed = env_number("ACTIOND_SHELLS_SEED", DEFAULT_SEED);
    let mut generator = Gen::new(Rng::new(seed));
    let mut cases: Vec<Case> = (0..count)
        .map(|_| Case {
            text: generator.template(),
            probed: generator.probed,
            change: Change::Base,
        })
        .collect();
    // The sweep: short templates of their own stream, each with all its variants.
    let mut short = Gen::new(Rng::new(seed ^ 0x5407_7e5e));
    let mut rng = Rng::new(seed ^ 0x7a71_a275);
    for _ in 0..swept {
        let text = short.short_template(swept_len);
        let probed = short.probed;
        cases.extend(
            variants(&text, &mut rng)
                .into_iter()
                .map(|(text, change)| Case {
                    text,
                    probed,
                    change,
                }),
        );
    }
    // `ACTIOND_SHELLS_ONLY=<template>` checks that one template (to reproduce a divergence),
    // with `ACTIOND_SHELLS_VARIANTS=1` its variants too.
    if let Ok(only) = std::env::var("ACTIOND_SHELLS_ONLY") {
        cases = if std::env::var_os("ACTIOND_SHELLS_VARIANTS").is_some() {
            variants(&only, &mut rng)
        } else {
            vec![(only, Change::Base)]
        }
        .into_iter()
        .map(|(text, change)| Case {
            text,
            probed: false,
            change,
        })
        .collect();
    }
    let tally = Mutex::new(Tally::default());
    for case in &cases {
        let mut t = tally.lock().unwrap();
        t.counts.entry(case.change).or_default().generated += 1;
    }
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    let started = Instant::now();
    std::thread::scope(|s| {
        for worker in 0..workers {
            let (tally, next, cases) = (&tally, &next, &cases);
            s.spawn(move || {
                let dir = scratch(worker);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = cases.get(i) else {
                        break;
                    };
                    check(i, case, seed, &dir, tally);
                }
                let _ = std::fs::remove_dir_all(&dir);
            });
        }
    });
    let t = tally.into_inner().unwrap();
    let total = t.counts.values().fold(Count::default(), |a, c| Count {
        generated: a.generated + c.generated,
        refused: a.refused + c.refused,
        without_placeholders: a.without_placeholders + c.without_placeholders,
        accepted: a.accepted + c.accepted,
        runs: a.runs + c.runs,
    });
    println!(
        "shells: seed {seed:#x}: {count} templates and {swept} short ones with all their \
         variants; {} cases, {} refused by the model, {} without placeholders, {} accepted with \
         placeholders; {} runs (case × value × shell, token runs included) in {:.0?}; {} \
         divergences",
        total.generated,
        total.refused,
        total.without_placeholders,
        total.accepted,
        total.runs,
        started.elapsed(),
        t.divergences.len()
    );
    for (change, c) in &t.counts {
        println!(
            "  {change:?}: {} cases, {} refused, {} without placeholders, {} accepted, {} runs",
            c.generated, c.refused, c.without_placeholders, c.accepted, c.runs
        );
    }
    if std::env::var_os("ACTIOND_SHELLS_REASONS").is_some() {
        let mut reasons: Vec<_> = t.reasons.iter().collect();
        reasons.sort_by_key(|(_, n)| std::cmp::Reverse(**n));
        for (why, n) in reasons {
            println!("  refused {n:5}: {why}");
        }
    }
    for d in &t.divergences {
        println!(
            "\nDIVERGENCE ({:?}, {:?}) under {}: value {:?}\n  template {:?}\n  shrunk   {:?}",
            d.kind, d.change, d.shell, d.value, d.template, d.shrunk
        );
    }
    assert!(
        t.divergences.is_empty(),
        "{} templates are read differently by a real shell (see above)",
        t.divergences.len()
    );
}
