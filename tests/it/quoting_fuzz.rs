//! A property-based fuzz of the command templates through the library and a real
//! shell, without the server: whatever a value holds, the shell reads it back as the same
//! bytes, and no value ever runs as code.
//!
//! Four properties, each checked by running the rendered command with `/bin/sh -c` (and with
//! bash when it is installed, since a board's `/bin/sh` may be either): (a) fixed forms
//! (unquoted, `"…"`, `'…'`, mixed, several placeholders in one word, after a here-document)
//! print exactly the value; (a′) randomly built words mixing literal text, escapes, quoted
//! segments and placeholders print exactly what the shell grammar says they should; (b)
//! `Template::shell` never panics on any text, and every template it accepts renders, and
//! every accepted template, rendered with values that try to break out of any context, never
//! creates the marker file; (c) a value holding `{{ v }}` is never expanded again.
//!
//! Values never contain NUL: a command line cannot carry one, and the arguments module
//! refuses them before rendering. The run is bounded for CI: 300 cases per property and a
//! fixed seed, so a failure reproduces; `PROPTEST_CASES` and `PROPTEST_RNG_SEED` explore
//! further. The `known_hole_*` tests are regressions for templates the lexer accepted although
//! the shell reads them differently; each fails for as long as that value can run as code.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use actiond::template::{Placeholder, Template};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

use crate::harness::files_in;

use crate::harness::{TempDir, poll_every};

/// The file every adversarial value tries to create in the command's working directory.
const MARK: &str = "MARK";

/// A shell command here takes milliseconds; this only turns a hang into a failure.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(10);

/// Cases per property unless `PROPTEST_CASES` says otherwise, and a fixed seed unless
/// `PROPTEST_RNG_SEED` says otherwise: CI sees the same cases on every run, so a red run is
/// reproducible rather than flaky. No failure files are written into the source tree.
fn config() -> ProptestConfig {
    let from_env = ProptestConfig::default();
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let rng_seed = if std::env::var_os("PROPTEST_RNG_SEED").is_some() {
        from_env.rng_seed
    } else {
        RngSeed::Fixed(0x5eed_ac71_0d00)
    };
    ProptestConfig {
        cases,
        rng_seed,
        failure_persistence: None,
        max_shrink_iters: 2000,
        ..from_env
    }
}

// ---------------------------------------------------------------------------------------
// Running a shell

/// `/bin/sh` (dash on Debian, what actiond runs) and bash when installed: on other boards
/// `/bin/sh` is bash, and bash has more syntax (`$'…'`, `<<<`, history words) to trip over.
fn shells() -> Vec<&'static str> {
    ["/bin/sh", "/bin/bash"]
        .into_iter()
        .filter(|s| Path::new(s).exists())
        .collect()
}

/// What a script printed, and whether it exited 0.
struct Ran {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    success: bool,
}

/// Runs `script` with `shell -c` in `dir`, in its own process group, with stdin from
/// /dev/null. Whatever the script left in the background is killed with the group once the
/// shell exits, so a stray child can neither hold the pipes open nor outlive the test.
fn run(shell: &str, script: &str, dir: &Path) -> Ran {
    let mut child = Command::new(shell)
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env_remove("ENV")
        .env_remove("BASH_ENV")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {shell}: {e}"));
    let group = Pid::from_raw(child.id() as i32);
    let mut out_pipe = child.stdout.take().expect("stdout pipe");
    let mut err_pipe = child.stderr.take().expect("stderr pipe");
    let out = thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out_pipe, &mut buf);
        buf
    });
    let err = thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err_pipe, &mut buf);
        buf
    });
    // Polled every millisecond: thousands of short scripts run one after the other.
    let exited = poll_every(Duration::from_millis(1), SCRIPT_TIMEOUT, || {
        child.try_wait().expect("try_wait")
    });
    let Some(status) = exited else {
        let _ = killpg(group, Signal::SIGKILL);
        let _ = child.wait();
        panic!("{shell} -c {script:?} still running after {SCRIPT_TIMEOUT:?}");
    };
    let _ = killpg(group, Signal::SIGKILL);
    Ran {
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
        success: status.success(),
    }
}

/// Renders `template` with `value` for every placeholder.
fn render(template: &Template, value: &str) -> String {
    template.render(&|_: &Placeholder| Some(value.to_string()))
}

/// Runs the rendered `script` in every shell and asserts that it prints exactly `want`,
/// exits 0, and leaves the directory empty.
fn assert_prints(script: &str, want: &str) -> Result<(), TestCaseError> {
    for shell in shells() {
        let dir = TempDir::new();
        let ran = run(shell, script, dir.path());
        prop_assert!(
            ran.stdout == want.as_bytes(),
            "{shell} -c {script:?}\n printed {:?}\n wanted  {want:?}\n stderr {:?}",
            String::from_utf8_lossy(&ran.stdout),
            String::from_utf8_lossy(&ran.stderr)
        );
        prop_assert!(
            ran.success,
            "{shell} -c {script:?} failed: {:?}",
            String::from_utf8_lossy(&ran.stderr)
        );
        let files = files_in(dir.path());
        prop_assert!(
            files.is_empty(),
            "{shell} -c {script:?} created {files:?}: the value ran as code"
        );
    }
    Ok(())
}

/// Values that try to run `touch MARK` from every context a value might really stand in:
/// unquoted, inside `'…'` or `"…"`, inside a comment (the newline ends it), inside a
/// here-document (a line equal to the delimiter ends it, and `$( )` expands in its body).
const BREAKOUTS: &[&str] = &[
    "$(touch MARK)",
    "`touch MARK`",
    "\ntouch MARK\n",
    "\ntouch MARK #",
    ";touch MARK;#",
    "';touch MARK;'",
    "\";touch MARK;\"",
    "'$(touch MARK)'",
    "\"$(touch MARK)\"",
    "\\'$(touch MARK)",
    "x\nEOF\ntouch MARK\n",
    "x\nE F\ntouch MARK\n",
];

/// Asserts that `template`, if `Template::shell` accepts it, never creates the marker file
/// whatever value it is rendered with: refusing is always allowed, running a value is not.
fn assert_no_breakout(text: &str) -> Result<(), TestCaseError> {
    let Ok(template) = Template::shell(text) else {
        return Ok(());
    };
    if !template.has_placeholders() {
        return Ok(());
    }
    for value in BREAKOUTS {
        let script = render(&template, value);
        for shell in shells() {
            let dir = TempDir::new();
            run(shell, &script, dir.path());
            prop_assert!(
                !dir.path().join(MARK).exists(),
                "INJECTION: the template {text:?} was accepted, and the value {value:?} \
                 ran as code under {shell}; rendered script:\n{script}"
            );
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Strategies

/// Pieces a hostile value is made of: every shell metacharacter and quote, escapes, line
/// breaks, placeholders (the value's own and another's), command substitutions that try to
/// create the marker, printf directives, and non-ASCII text.
const VALUE_PIECES: &[&str] = &[
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
    "{{v}}",
    "{{ w }}",
    "{{ .CurrentEntity.x }}",
    "{{",
    "}}",
    "${{ HOME }}",
    "\\",
    "\\\\",
    "\\'",
    "\n",
    "\r",
    "\r\n",
    "\t",
    " ",
    "  ",
    ";",
    "|",
    "&",
    "&&",
    "||",
    ">",
    "<",
    "<<",
    "*",
    "?",
    "[a]",
    "~",
    "#",
    "!",
    "!!",
    "-n",
    "--",
    "-e",
    "$IFS",
    "${IFS}",
    "$HOME",
    "$((1+1))",
    "$(touch MARK)",
    "`touch MARK`",
    "'; touch MARK; '",
    "\"; touch MARK; \"",
    "'\\''",
    "\ntouch MARK #",
    "EOF",
    "é",
    "日本",
    "😀",
    "\u{202e}",
    "\u{7f}",
    "\u{1}",
    "\u{1b}[31m",
    "%s",
    "%n",
    "=",
    ":",
    "a",
    "Z9",
];

/// A value without NUL, biased toward shell syntax but reaching any character.
fn value() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => prop::sample::select(VALUE_PIECES).prop_map(str::to_string),
        1 => any::<char>()
            .prop_filter("a value has no NUL", |c| *c != '\0')
            .prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

/// Pieces of template text: the shell syntax whose context the lexer must get right
/// (quotes, substitutions, comments, here-documents, line continuations, bash's `$'…'` and
/// `<<<`), words, and placeholders in each quoting.
const TEMPLATE_PIECES: &[&str] = &[
    " ",
    " ",
    "\n",
    "\t",
    "'",
    "\"",
    "`",
    "$(",
    "$((",
    "${",
    "(",
    ")",
    "))",
    "}",
    "#",
    "\\",
    "\\\n",
    ";",
    "|",
    "&&",
    "<<",
    "<<-",
    "<<<",
    "<<EOF",
    "<<'EOF'",
    "<<'E F'",
    "<<\"E F\"",
    "EOF",
    "\nEOF\n",
    "\nE F\n",
    "$",
    "$'",
    "$\"",
    "x",
    "1",
    "=",
    "printf %s ",
    "true ",
    ":",
    "<",
    ">",
    "!",
    "$(true)",
    "$((1<<2))",
    "`true`",
    "{{ v }}",
    "{{ v }}",
    "{{ v }}",
    "{{ v }}",
    "'{{ v }}'",
    "\"{{ v }}\"",
    "{{",
    "}}",
    "[[ ",
    " ]]",
    " =~ ",
    " -eq ",
    "case x in ",
    "a) ",
    ";;",
    " esac",
    "\r",
    "read ",
    "printf -v ",
];

/// Template text from shell syntax only (no word that could make a value run by design,
/// such as `eval` or `sh -c`).
fn template_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TEMPLATE_PIECES), 1..20)
        .prop_map(|pieces| pieces.concat())
}

/// Any text at all, NUL and broken syntax included, for the no-panic property.
fn any_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => prop::sample::select(TEMPLATE_PIECES).prop_map(str::to_string),
        1 => any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

/// One piece of a shell word, with what the shell makes of it.
#[derive(Debug, Clone)]
enum Segment {
    /// Unquoted characters that are never special.
    Plain(String),
    /// A backslash-escaped character outside quotes.
    Escaped(char),
    /// `"…"` holding literal text, escaped characters and placeholders.
    Double(Vec<Inner>),
    /// `'…'` holding literal text and placeholders.
    Single(Vec<Inner>),
    /// An unquoted placeholder.
    Hole,
}

#[derive(Debug, Clone)]
enum Inner {
    Text(String),
    /// `\c` inside double quotes, for the four characters where the backslash escapes.
    Escaped(char),
    Hole,
}

/// Characters that are literal unquoted: no globbing, tilde, braces, quotes or operators.
const PLAIN: &str = "abcXYZ019_./:,+=@%^-";
/// Characters that are literal inside `"…"` (`{` and `}` stay out: `{{` is template syntax).
const IN_DOUBLE: &str = "ab Z9\t\n'|&;<>()*?~#![]=%,.:/-_@^";
/// Characters that are literal inside `'…'`: everything but `'` (and braces, as above).
const IN_SINGLE: &str = "ab Z9\t\n\"$`\\|&;<>()*?~#![]=%,.:/-_@^";
/// Characters a backslash makes literal outside quotes.
/// (`{` stays out: `\{` before a placeholder reads as a backslash before `{{`.)
const ESCAPABLE: &str = "'\"$`\\|&;<>()*?~#![] \tab}";

fn chars_of(set: &'static str, len: std::ops::Range<usize>) -> impl Strategy<Value = String> {
    let chars: Vec<char> = set.chars().collect();
    prop::collection::vec(prop::sample::select(chars), len).prop_map(|cs| cs.into_iter().collect())
}

/// The inside of a quoted segment. Inside `'…'` a backslash is literal, so an escape drawn
/// for it becomes two characters of text.
fn inner(text_set: &'static str, double: bool) -> impl Strategy<Value = Vec<Inner>> {
    let escaped: Vec<char> = "$`\"\\".chars().collect();
    let piece = prop_oneof![
        3 => chars_of(text_set, 1..5).prop_map(Inner::Text),
        1 => prop::sample::select(escaped).prop_map(move |c| if double {
            Inner::Escaped(c)
        } else {
            Inner::Text(format!("\\{c}"))
        }),
        2 => Just(Inner::Hole),
    ];
    prop::collection::vec(piece, 0..5)
}

fn segment() -> impl Strategy<Value = Segment> {
    let escapable: Vec<char> = ESCAPABLE.chars().collect();
    prop_oneof![
        2 => chars_of(PLAIN, 1..5).prop_map(Segment::Plain),
        1 => prop::sample::select(escapable).prop_map(Segment::Escaped),
        2 => inner(IN_DOUBLE, true).prop_map(Segment::Double),
        2 => inner(IN_SINGLE, false).prop_map(Segment::Single),
        3 => Just(Segment::Hole),
    ]
}

/// The template text of a word and what the shell must make of it with `value`.
fn word(segments: &[Segment], value: &str) -> (String, String) {
    let mut text = String::new();
    let mut want = String::new();
    let push_inner = |pieces: &[Inner], text: &mut String, want: &mut String| {
        for piece in pieces {
            match piece {
                Inner::Text(t) => {
                    text.push_str(t);
                    want.push_str(t);
                }
                Inner::Escaped(c) => {
                    text.push('\\');
                    text.push(*c);
                    want.push(*c);
                }
                Inner::Hole => {
                    text.push_str("{{ v }}");
                    want.push_str(value);
                }
            }
        }
    };
    for segment in segments {
        match segment {
            Segment::Plain(t) => {
                text.push_str(t);
                want.push_str(t);
            }
            Segment::Escaped(c) => {
                text.push('\\');
                text.push(*c);
                want.push(*c);
            }
            Segment::Double(pieces) => {
                text.push('"');
                push_inner(pieces, &mut text, &mut want);
                text.push('"');
            }
            Segment::Single(pieces) => {
                text.push('\'');
                push_inner(pieces, &mut text, &mut want);
                text.push('\'');
            }
            Segment::Hole => {
                text.push_str("{{ v }}");
                want.push_str(value);
            }
        }
    }
    (text, want)
}

// ---------------------------------------------------------------------------------------
// (a) fixed forms

/// Command templates and the literal text around each value in what they print:
/// the output is `pieces.join(value)`.
const FORMS: &[(&str, &[&str])] = &[
    ("printf '%s' {{ v }}", &["", ""]),
    ("printf '%s' \"{{ v }}\"", &["", ""]),
    ("printf '%s' '{{ v }}'", &["", ""]),
    ("printf '%s' \"a{{ v }}b\"", &["a", "b"]),
    ("printf '%s' 'a{{ v }}b'", &["a", "b"]),
    ("printf '%s' {{ v }}{{ v }}", &["", "", ""]),
    (
        "printf '%s' x{{ v }}\"|{{ v }}|\"'|{{ v }}|'",
        &["x", "|", "||", "|"],
    ),
    ("set -- {{ v }}; printf '%s:%s' \"$#\" \"$1\"", &["1:", ""]),
    ("v={{ v }}; printf '%s' \"$v\"", &["", ""]),
    ("printf '%s' \"\\$HOME={{ v }}\"", &["$HOME=", ""]),
    (
        "printf 'start\\n'\nprintf '%s' {{ v }} # a comment after it",
        &["start\n", ""],
    ),
    ("printf '%s' \"$(printf x)\"{{ v }}`printf y`", &["x", "y"]),
    (
        "cat <<EOF\nbody $(printf x)\nEOF\nprintf '%s' {{ v }}",
        &["body x\n", ""],
    ),
];

proptest! {
    #![proptest_config(config())]

    /// (a) Each fixed form prints the value byte for byte, and nothing in it runs. The forms
    /// run as one script per shell, separated by NUL bytes (a value has none): one spawn per
    /// case instead of one per form keeps the property fast.
    #[test]
    fn fixed_forms_print_exactly_the_value(value in value()) {
        let rendered: Vec<String> = FORMS
            .iter()
            .map(|(text, _)| {
                let template = Template::shell(text)
                    .unwrap_or_else(|e| panic!("{text:?} refused: {e}"));
                render(&template, &value)
            })
            .collect();
        let script = rendered.join("\nprintf '\\000'\n");
        for shell in shells() {
            let dir = TempDir::new();
            let ran = run(shell, &script, dir.path());
            let printed: Vec<&[u8]> = ran.stdout.split(|b| *b == 0).collect();
            for (i, (text, pieces)) in FORMS.iter().enumerate() {
                let want = pieces.join(value.as_str());
                let got = printed.get(i).copied().unwrap_or_default();
                prop_assert!(
                    got == want.as_bytes(),
                    "{shell}: the form {text:?}, rendered as {:?},\n printed {:?}\n wanted  \
                     {want:?}\n stderr {:?}",
                    rendered[i],
                    String::from_utf8_lossy(got),
                    String::from_utf8_lossy(&ran.stderr)
                );
            }
            prop_assert_eq!(printed.len(), FORMS.len(), "{} printed extra NULs", shell);
            prop_assert!(ran.success, "{shell} failed: {:?}", String::from_utf8_lossy(&ran.stderr));
            let files = files_in(dir.path());
            prop_assert!(files.is_empty(), "{shell} created {files:?}: the value ran as code");
        }
    }

    /// (a′) A word built from random segments (plain text, escapes, `"…"`, `'…'`,
    /// placeholders in each) is one argument equal to what the shell grammar says.
    #[test]
    fn random_words_print_what_the_grammar_says(
        segments in prop::collection::vec(segment(), 1..6),
        value in value(),
    ) {
        let (word_text, want) = word(&segments, &value);
        let text = format!("set -- {word_text}; printf '%s|%s' \"$#\" \"$1\"");
        let template = match Template::shell(&text) {
            Ok(t) => t,
            Err(e) => return Err(TestCaseError::fail(format!(
                "{text:?} is plain quoting, yet it was refused: {e}"
            ))),
        };
        assert_prints(&render(&template, &value), &format!("1|{want}"))?;
    }

    /// (b) The lexer never panics, whatever the text; anything it accepts renders.
    #[test]
    fn shell_templates_never_panic(text in any_text(), value in value()) {
        if let Ok(template) = Template::shell(&text) {
            let _ = render(&template, &value);
            let _ = template.render(&|_| None);
        }
        if let Ok(template) = Template::literal(&text) {
            let _ = render(&template, &value);
        }
    }

    /// (b) No template the lexer accepts lets a value run: rendered with values that try to
    /// break out of every context, it never creates the marker file.
    #[test]
    fn accepted_templates_never_run_a_value(text in template_text()) {
        assert_no_breakout(&text)?;
    }

    /// (c) One pass: the value is asked for once per placeholder and printed as it is, even
    /// when it holds `{{ v }}` or another argument's placeholder.
    #[test]
    fn a_value_is_never_expanded_again(value in value()) {
        let value = format!("<{{{{ v }}}}{value}{{{{ w }}}}>");
        let calls = std::cell::Cell::new(0);
        let template = Template::shell("printf '%s' {{ v }}\"{{ v }}\"'{{ v }}'")
            .expect("plain template");
        let script = template.render(&|p| {
            calls.set(calls.get() + 1);
            match p {
                Placeholder::Argument(name) if name == "v" => Some(value.clone()),
                _ => Some("EXPANDED AGAIN".to_string()),
            }
        });
        prop_assert_eq!(
            calls.get(),
            3,
            "the renderer looked up more than the template's own placeholders"
        );
        assert_prints(&script, &value.repeat(3))?;
        let literal = Template::literal("a{{ v }}b").expect("plain literal template");
        let rendered = literal.render(&|p| match p {
            Placeholder::Argument(name) if name == "v" => Some(value.clone()),
            _ => Some("EXPANDED AGAIN".to_string()),
        });
        prop_assert_eq!(rendered, format!("a{value}b"));
    }
}

// ---------------------------------------------------------------------------------------
// Refusals and known holes, as plain tests

/// Contexts the quoting cannot make safe are refused, with a message that says what to use
/// instead.
#[test]
fn unsafe_contexts_are_refused_with_a_fix() {
    for text in [
        "echo `echo {{ v }}`",
        "echo $(echo {{ v }})",
        "echo \"$(echo {{ v }})\"",
        "echo $(( {{ v }} + 1 ))",
        "echo ${X:-{{ v }}}",
        "echo \"${X:-{{ v }}}\"",
        "cat <<EOF\n{{ v }}\nEOF",
        "cat <<'EOF'\n{{ v }}\nEOF",
        "echo hi # {{ v }}",
        "echo ${{ v }}",
        "echo \"${{ v }}\"",
        "echo \\{{ v }}",
        "echo \"\\{{ v }}\"",
        "echo $'{{ v }}'",
    ] {
        let err = match Template::shell(text) {
            Ok(t) => panic!(
                "{text:?} was accepted; it renders as {:?}",
                render(&t, "$(touch MARK)")
            ),
            Err(e) => e.to_string(),
        };
        assert!(
            err.contains("exec") || err.contains("environment"),
            "{text:?}: the refusal does not suggest exec or the environment variable: {err}"
        );
    }
}

/// `$( )` ends mid-word, so a `#` right after it is an ordinary character to the shell, not
/// the start of a comment; a lexer that takes it for a comment skips a quote and gets every
/// later context wrong.
#[test]
fn known_hole_hash_after_command_substitution() {
    assert_no_breakout("printf '%s' $(true)#'\n{{ v }}'").unwrap();
}

/// A backslash-newline joins lines before the shell looks for comments, so `\`, newline,
/// `#{{ v }}` puts the value inside a comment that the value's own newline ends.
#[test]
fn known_hole_comment_after_line_continuation() {
    assert_no_breakout("printf '%s' \\\n#{{ v }}").unwrap();
}

/// `<<` inside `$(( ))` is a shift, not a here-document: a lexer that skips the next lines
/// as a here-document body misses the quote they open.
#[test]
fn known_hole_shift_in_arithmetic_is_not_a_heredoc() {
    assert_no_breakout("printf %s $(( 1 << 2 ))\nprintf %s '\n2\n{{ v }}'").unwrap();
}

/// A quoted here-document delimiter may contain spaces, `$(`, `;` (`<<"E F"`, `<<'$('`,
/// `<<$';'`): the body runs to a line equal to it, and a lexer that ends the delimiter at the
/// space misreads every later quote, so a value can end the document early or stand outside
/// the quotes it seems to be in.
#[test]
fn known_hole_quoted_heredoc_delimiters() {
    for text in [
        "cat <<\"E F\"\n{{ v }}\nE F",
        "cat <<'E F'\n{{ v }}\nE F",
        "<<'E F'{{ v }}",
        "<<' {{ v }}",
        "<<'$({{ v }}",
        "<<$';{{ v }}",
    ] {
        assert_no_breakout(text).unwrap();
    }
}

/// A backslash-newline inside a here-document operator and its body joins lines: the
/// placeholder ends up in an unquoted body, where `$( )` runs whatever the quoting.
#[test]
fn known_hole_line_continuation_around_a_heredoc() {
    assert_no_breakout("<<\\\nEOF\n \\\n{{ v }}").unwrap();
}

/// A backslash-newline right after `$` joins `$` to the quote that opens the value, and bash
/// reads `$'…'` with backslash escapes: a value ending in `\` then escapes the closing quote.
/// (dash has no `$'…'`; a board whose /bin/sh is bash does.)
#[test]
fn known_hole_dollar_then_line_continuation() {
    assert_no_breakout("$\\\n{{ v }}{{ v }}").unwrap();
    assert_no_breakout("printf %s $\\\n{{ v }} {{ v }}").unwrap();
}
