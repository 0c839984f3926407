//! Typed arguments end to end: the proof that a value cannot be
//! injected, by a real `/bin/sh` and by the command's own output.
//!
//! The adversarial part starts one `actiond` per argument type, with one action per place a
//! value can stand: unquoted, inside `"…"` and `'…'`, between literal text, twice and three
//! times in one word, as the only word (`"$#"` must stay 1), in an assignment, on the second
//! line of a script, as an `exec:` element, and through the environment (`$SUBJECT` read in a
//! shell, which actiond makes a variable of that shell alone, and `printenv
//! ACTIOND_ARG_SUBJECT` without one). Every hostile payload (quotes, `$( )`, backticks,
//! `${ }`, operators, redirections, globs, `~`, `#`, line breaks, backslashes, option-like
//! words, `{{ }}` naming a real argument, non-ASCII, 60 and 100 KiB) goes to every action.
//! A value the type accepts must come back byte for byte in stdout; a value it refuses must answer
//! 400 `invalid_argument` naming the argument and start nothing (GetLogs counts only the
//! accepted starts); and no payload may create the marker file (or any file) in the
//! working directory. Where `ValidateArgumentType` knows the type, the start and it must
//! agree.
//!
//! The request-time rules and the config-time refusals are in `argument_rules.rs`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use crate::client::{Conn, Request, assert_json_error};
use crate::harness::{Server, files_in};

/// The argument under attack; its environment variable is `ACTIOND_ARG_SUBJECT`.
pub(crate) const SUBJECT: &str = "subject";

/// The file every hostile payload tries to create in the command's working directory.
pub(crate) const MARK: &str = "MARK";

/// 60 KiB: far beyond any form field, below actiond's 64 KiB bound on one value, and below
/// Linux's 128 KiB limit for one argv or environment string once quoted (see
/// `long_payloads`).
const LONG: usize = 60 * 1024;

/// Beyond actiond's bound on one value: the API names no such bound, so this one may be
/// refused (naming the argument) or must arrive intact.
const TOO_LONG: usize = 100 * 1024;

/// The longest value a small `regex:` pattern is sure to be matched against.
const REGEX_LONGEST: usize = 32 * 1024;

/// Long enough for any of these short commands; only a hang detector.
pub(crate) const FINISH: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------------
// Where a value stands

pub(crate) enum Run {
    Shell(&'static str),
    Exec(&'static [&'static str]),
}

/// One action of the adversarial config: its command, and the literal text around each
/// copy of the value in what it prints (the expected stdout is `around.join(value)`).
pub(crate) struct Place {
    pub(crate) id: &'static str,
    pub(crate) command: Run,
    around: &'static [&'static str],
    /// Whether a 60 KiB value fits: with two or three copies the script exceeds what
    /// Linux allows in one argv string (MAX_ARG_STRLEN, 128 KiB), and the spawn fails for a
    /// reason that has nothing to do with quoting.
    long_ok: bool,
}

pub(crate) const PLACES: &[Place] = &[
    Place {
        id: "unquoted",
        command: Run::Shell("printf '%s' {{ subject }}"),
        around: &["", ""],
        long_ok: true,
    },
    Place {
        id: "double",
        command: Run::Shell("printf '%s' \"{{ subject }}\""),
        around: &["", ""],
        long_ok: true,
    },
    Place {
        id: "single",
        command: Run::Shell("printf '%s' '{{ subject }}'"),
        around: &["", ""],
        long_ok: true,
    },
    Place {
        id: "mixedDouble",
        command: Run::Shell("printf '%s' \"a{{ subject }}b\""),
        around: &["a", "b"],
        long_ok: true,
    },
    Place {
        id: "mixedSingle",
        command: Run::Shell("printf '%s' 'a{{ subject }}b'"),
        around: &["a", "b"],
        long_ok: true,
    },
    Place {
        id: "twice",
        command: Run::Shell("printf '%s' {{ subject }}{{ subject }}"),
        around: &["", "", ""],
        long_ok: false,
    },
    Place {
        id: "thrice",
        command: Run::Shell("printf '%s' x{{ subject }}\"|{{ subject }}|\"'|{{ subject }}|'"),
        around: &["x", "|", "||", "|"],
        long_ok: false,
    },
    Place {
        // One word, whatever the value holds: no splitting, no globbing, nothing dropped.
        id: "oneWord",
        command: Run::Shell("set -- {{ subject }}; printf '%s:%s' \"$#\" \"$1\""),
        around: &["1:", ""],
        long_ok: true,
    },
    Place {
        id: "assignment",
        command: Run::Shell("v={{ subject }}; printf '%s' \"$v\""),
        around: &["", ""],
        long_ok: true,
    },
    Place {
        id: "secondLine",
        command: Run::Shell("printf 'start\\n'\nprintf '%s' {{ subject }} # a comment"),
        around: &["start\n", ""],
        long_ok: true,
    },
    Place {
        id: "exec",
        command: Run::Exec(&["printf", "%s", "{{ subject }}"]),
        around: &["", ""],
        long_ok: true,
    },
    Place {
        id: "execMixed",
        command: Run::Exec(&["printf", "%s", "a{{ subject }}b"]),
        around: &["a", "b"],
        long_ok: true,
    },
    Place {
        id: "environment",
        command: Run::Shell("printf '%s' \"$SUBJECT\""),
        around: &["", ""],
        long_ok: true,
    },
    Place {
        // Set even when empty: printenv prints the empty line, or nothing and exit 1.
        id: "environmentExec",
        command: Run::Exec(&["printenv", "ACTIOND_ARG_SUBJECT"]),
        around: &["", "\n"],
        long_ok: true,
    },
];

// ---------------------------------------------------------------------------------------
// Payloads

/// Every payload goes to every type. Most try to create `MARK`; `${IFS}` versions work
/// where a type refuses spaces; the last ones are ordinary values some type accepts.
fn payloads() -> Vec<String> {
    let mut all: Vec<String> = [
        "'",
        "\"",
        "`",
        "$(touch MARK)",
        "$(touch${IFS}MARK)",
        "`touch MARK`",
        "`touch${IFS}MARK`",
        "'; touch MARK; '",
        "\"; touch MARK; \"",
        "'$(touch MARK)'",
        "\"$(touch MARK)\"",
        "'\"$(touch MARK)\"'",
        "\"'$(touch MARK)'\"",
        "${IFS}",
        "$IFS",
        "a${IFS}b",
        "$HOME",
        "${HOME}",
        "${x:-$(touch MARK)}",
        "$((6*7))",
        ";touch MARK",
        "; touch MARK",
        "|touch MARK",
        "& touch MARK",
        "&& touch MARK",
        "|| touch MARK",
        "> MARK",
        ">MARK",
        "< /etc/passwd",
        "a\nb",
        "\ntouch MARK\n",
        "\ntouch MARK #",
        "EOF\ntouch MARK\nEOF",
        "a\tb",
        "a\rb",
        "\r\n",
        "\\",
        "\\'",
        "\\\"",
        "a\\",
        "\\$(touch MARK)",
        "\\\\",
        "*",
        "?",
        "[a-z]*",
        "~",
        "~root",
        "#",
        "# comment",
        "#x",
        "!",
        "!!",
        "-n",
        "--",
        "-e \\n",
        "--help",
        "{{ subject }}",
        "{{subject}}",
        "{{ other }}",
        "{{ .CurrentEntity.x }}",
        "${{ HOME }}",
        "{{",
        "}}",
        "{a,b}",
        "é日本🎉",
        "\u{202e}evil",
        "\u{feff}",
        "\u{7f}",
        "\u{1}",
        "\u{1b}[31mred",
        "%s%n%d",
        "''",
        "\"\"",
        "'\\''",
        " lead and trail ",
        " ",
        "",
        "x'y\"z`$(touch MARK)`\n;touch MARK;|&><*?~#!\\{{ subject }}${IFS}",
        "abcXYZ019",
        "a.b-c_d",
        "-n -e",
        "42",
        "alice@example.com",
        "https://example.com/a?b=1&c=2;d=$(touch$IFS'MARK')#frag",
        "2024-02-29T23:59:59",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    all.extend(long_payloads());
    all
}

/// Two 60 KiB values: plain letters (every letter type takes it), and letters with a quote,
/// `$`, `"` and a backtick every 64 bytes, so that quoted it stays below 128 KiB. And one of
/// 100 KiB.
fn long_payloads() -> Vec<String> {
    let chunk = format!("{}$'\"`", "x".repeat(60));
    vec![
        "a".repeat(LONG),
        chunk.repeat(LONG / chunk.len()),
        "b".repeat(TOO_LONG),
    ]
}

fn is_long(value: &str) -> bool {
    value.len() >= LONG / 2
}

/// Values with NUL: refused for every type, before anything runs.
fn nul_payloads() -> Vec<String> {
    vec![
        "\0".to_string(),
        "a\0b".to_string(),
        "$(touch MARK)\0".to_string(),
    ]
}

/// A value shortened for a failure message.
fn show(value: &str) -> String {
    if value.chars().count() <= 80 {
        format!("{value:?}")
    } else {
        let head: String = value.chars().take(40).collect();
        format!("{head:?}… ({} bytes)", value.len())
    }
}

// ---------------------------------------------------------------------------------------
// Types

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Accept,
    Refuse,
    /// The API does not settle it: either answer, but an accepted value must arrive intact.
    Either,
}

/// One argument type under attack.
struct TypeCase {
    /// The declaration of `subject` (its name is added).
    declaration: Value,
    /// Values the type must accept.
    accept: Vec<String>,
    /// Values the type must refuse.
    refuse: Vec<String>,
    /// Every value without NUL is accepted (password, raw strings, a catch-all regex).
    permissive: bool,
    /// The type as ValidateArgumentType knows it, to cross-check every start against.
    validate_as: Option<&'static str>,
    /// Pipe every command's output through `od` and compare the decoded bytes: actiond
    /// masks a password's value wherever it appears in the output (docs/ARCHITECTURE.md: redacted
    /// from the entry), so only an encoding shows whether it arrived intact.
    hex: bool,
}

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|s| s.to_string()).collect()
}

fn typed(kind: &str) -> Value {
    json!({"title": "Subject", "type": kind})
}

/// What the command receives for an accepted value. Only datetime changes it: the API adds
/// the seconds when they are missing.
fn normalized(declaration: &Value, value: &str) -> String {
    let b = value.as_bytes();
    let minutes_only = b.len() == 16
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 => *c == b':',
            _ => c.is_ascii_digit(),
        });
    if declaration["type"] == "datetime" && minutes_only {
        format!("{value}:00")
    } else {
        value.to_string()
    }
}

/// Starts an actiond with one action per place for `case`, sends every payload to every
/// action, and checks each answer, the history count and the working directory.
fn attack(case: TypeCase) {
    let mut declaration = case.declaration.clone();
    declaration["name"] = json!(SUBJECT);
    let other = json!({"name": "other", "title": "Other", "type": "ascii", "default": "wdefault"});
    let actions: Vec<Value> = PLACES
        .iter()
        .map(|place| {
            let mut action = json!({
                "id": place.id,
                "title": format!("Place {}", place.id),
                "timeout": 20,
                "arguments": [declaration, other],
            });
            match (&place.command, case.hex) {
                (Run::Shell(script), false) => action["shell"] = json!(script),
                (Run::Exec(argv), false) => action["exec"] = json!(argv),
                // A brace group keeps the script's own syntax (its trailing comment included).
                (Run::Shell(script), true) => {
                    action["shell"] = json!(format!("{{ {script}\n}} | {HEX}"))
                }
                // The argv, written out in the script with each element that holds a
                // placeholder as a quoted positional parameter: each still reaches the
                // program literally (a parameter as the program, or where `printf` could
                // read `-v`, is refused: it may hold a value).
                (Run::Exec(argv), true) => {
                    let mut script = Vec::new();
                    let mut wrapped = vec!["sh".to_string(), "-c".to_string(), String::new()];
                    wrapped.push("sh".to_string());
                    for a in argv.iter() {
                        if a.contains("{{") {
                            wrapped.push(a.to_string());
                            script.push(format!("\"${}\"", wrapped.len() - 4));
                        } else {
                            script.push(format!("'{a}'"));
                        }
                    }
                    wrapped[2] = format!("{} | {HEX}", script.join(" "));
                    action["exec"] = json!(wrapped);
                }
            }
            action
        })
        .collect();
    let config = json!({
        "killGracePeriod": 1,
        "logHistoryLimit": 10000,
        "maxRequestBodyBytes": 1024 * 1024,
        "maxOutputBytes": 1024 * 1024,
        "maxConcurrentExecutions": 64,
        "actions": actions,
    });
    let server = Server::start(config);

    // What each value must do: the general payloads first, then what this type must accept,
    // then what it must refuse (NUL always). The empty value is accepted as empty: `subject`
    // has no default and `rejectNull` is false.
    // A `regex:` value is matched only up to a length set by what matching may cost: for a
    // pattern as small as `(?s).*`, 32 KiB. Longer ones may be refused.
    let longest = if case.declaration["type"]
        .as_str()
        .is_some_and(|t| t.starts_with("regex:"))
    {
        REGEX_LONGEST
    } else {
        TOO_LONG
    };
    let mut expect: BTreeMap<String, Expect> = BTreeMap::new();
    for value in payloads() {
        let e = if case.permissive && value.len() < longest {
            Expect::Accept
        } else {
            Expect::Either
        };
        expect.insert(value, e);
    }
    expect.insert(String::new(), Expect::Accept);
    for value in &case.accept {
        expect.insert(value.clone(), Expect::Accept);
    }
    for value in case.refuse.iter().cloned().chain(nul_payloads()) {
        expect.insert(value, Expect::Refuse);
    }

    // Where ValidateArgumentType knows the type, it decides the undecided values and must
    // agree with the decided ones.
    let mut failures: Vec<String> = Vec::new();
    if let Some(kind) = case.validate_as {
        let mut caller = Caller::new(server.addr);
        for (value, e) in expect.iter_mut() {
            if value.is_empty() {
                continue;
            }
            // No request carries a pattern: a `regex:` type is checked as the argument of an
            // action that declares it.
            let request = if kind.starts_with("regex:") {
                json!({"value": value, "bindingId": PLACES[0].id, "argumentName": SUBJECT})
            } else {
                json!({"value": value, "type": kind})
            };
            let (status, reply) = caller.call("ValidateArgumentType", &request);
            assert_eq!(status, 200, "ValidateArgumentType {}: {reply}", show(value));
            let valid = reply["valid"].as_bool().unwrap_or_else(|| {
                panic!(
                    "ValidateArgumentType {} has no bool valid: {reply}",
                    show(value)
                )
            });
            match (*e, valid) {
                (Expect::Either, true) => *e = Expect::Accept,
                (Expect::Either, false) => *e = Expect::Refuse,
                (Expect::Accept, false) | (Expect::Refuse, true) => failures.push(format!(
                    "ValidateArgumentType says valid={valid} for {} as {kind}, the API says {:?}",
                    show(value),
                    e
                )),
                _ => {}
            }
        }
    }

    let values: Vec<(String, Expect)> = expect.into_iter().collect();
    let mark = server.path(MARK);
    let accepted = Mutex::new(0usize);
    let failures = Mutex::new(failures);
    thread::scope(|scope| {
        for place in PLACES {
            let (values, server, mark, accepted, failures) =
                (&values, &server, &mark, &accepted, &failures);
            let declaration = &case.declaration;
            let hex = case.hex;
            scope.spawn(move || {
                let mut caller = Caller::new(server.addr);
                for (value, e) in values {
                    if is_long(value) && !place.long_ok {
                        continue;
                    }
                    let body = json!({
                        "actionId": place.id,
                        "arguments": [{"name": SUBJECT, "value": value}],
                    });
                    let (status, reply) = caller.call("StartActionAndWait", &body);
                    let problem = match status {
                        200 => {
                            *accepted.lock().unwrap() += 1;
                            let entry = &reply["logEntry"];
                            let want = place.around.join(&normalized(declaration, value));
                            let got = entry["stdout"].as_str().unwrap_or_default();
                            let intact = if hex {
                                unhex(got).as_deref() == Some(want.as_bytes())
                            } else {
                                got == want
                            };
                            if *e == Expect::Refuse {
                                Some(format!("accepted, printed {}", show_json(&entry["stdout"])))
                            } else if !intact || entry["exitCode"] != 0 {
                                Some(format!(
                                    "printed {} (exit {}, stderr {}), wanted {}",
                                    show_json(&entry["stdout"]),
                                    entry["exitCode"],
                                    show_json(&entry["stderr"]),
                                    show(&want)
                                ))
                            } else {
                                None
                            }
                        }
                        400 if reply["code"] == "invalid_argument" => {
                            let message = reply["message"].as_str().unwrap_or_default();
                            if *e == Expect::Accept {
                                Some(format!("refused: {message}"))
                            } else if !message.contains(SUBJECT) {
                                Some(format!("refused without naming {SUBJECT}: {message}"))
                            } else {
                                None
                            }
                        }
                        _ => Some(format!("answered HTTP {status}: {reply}")),
                    };
                    if mark.exists() {
                        panic!(
                            "INJECTION: {} at place {} created {MARK} (answer {status}: {reply})",
                            show(value),
                            place.id
                        );
                    }
                    if let Some(problem) = problem {
                        failures.lock().unwrap().push(format!(
                            "{} at {}: {problem}",
                            show(value),
                            place.id
                        ));
                    }
                }
            });
        }
    });

    // Refused starts created no entry.
    let accepted = accepted.into_inner().unwrap();
    let logs = server.ok("GetLogs", json!({}));
    let mut failures = failures.into_inner().unwrap();
    if logs["totalCount"] != json!(accepted.to_string()) {
        failures.push(format!(
            "GetLogs totalCount is {}, but {accepted} starts were accepted",
            logs["totalCount"]
        ));
    }
    let files = files_in(server.dir());
    if files != ["config.yaml"] {
        failures.push(format!(
            "the working directory holds {files:?}: a payload ran"
        ));
    }
    if !failures.is_empty() {
        let shown: Vec<&String> = failures.iter().take(40).collect();
        panic!(
            "{} of the type {} failed ({} shown):\n{}",
            failures.len(),
            case.declaration,
            shown.len(),
            shown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

/// The hex dump the `hex` mode prints, a pure hex string (no spaces: a password of one space
/// would otherwise be masked in it).
const HEX: &str = "od -An -v -tx1 | tr -d ' \\n'";

/// The bytes of a hex string; `None` if it is not one (for instance masked).
fn unhex(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

pub(crate) fn show_json(value: &Value) -> String {
    match value.as_str() {
        Some(s) => show(s),
        None => value.to_string(),
    }
}

/// Connect calls over one keep-alive connection: thousands of starts on fresh connections
/// would leave thousands of sockets in TIME_WAIT.
struct Caller {
    addr: SocketAddr,
    conn: Option<Conn>,
}

impl Caller {
    fn new(addr: SocketAddr) -> Caller {
        Caller { addr, conn: None }
    }

    /// (HTTP status, JSON body). Reconnects once if the server closed the idle connection.
    fn call(&mut self, op: &str, body: &Value) -> (u16, Value) {
        let req = Request::connect(op, body.to_string().as_bytes());
        for attempt in 0..2 {
            let addr = self.addr;
            let conn = self.conn.get_or_insert_with(|| Conn::open(addr));
            match conn.try_send(&req) {
                Ok(resp) => return (resp.status, resp.json()),
                Err(e) if attempt == 0 => {
                    eprintln!("reconnecting after {e}");
                    self.conn = None;
                }
                Err(e) => panic!("{op}: {e}"),
            }
        }
        unreachable!()
    }
}

// One test per type, so they run in parallel, each with its own actiond.

#[test]
fn adversarial_ascii() {
    attack(TypeCase {
        declaration: typed("ascii"),
        accept: strings(&["abcXYZ019", "a"]),
        refuse: strings(&["a b", "a-b", "a.b", "é", "a\n", "a;b", "-n", "$x"]),
        permissive: false,
        validate_as: Some("ascii"),
        hex: false,
    });
}

#[test]
fn adversarial_ascii_identifier() {
    attack(TypeCase {
        declaration: typed("ascii_identifier"),
        accept: strings(&["a.b.c", ".hidden", "a.b-c_d", "a-", "a--help"]),
        // A leading `-` is an option to the program the value reaches; `.` and `..` are the
        // directory it works in and the one above.
        refuse: strings(&[
            "a b", "a;b", "a/b", "é", "a\nb", "$x", "a'b", "*", "-n", "--", "--help", "-", ".",
            "..", "...", "...conf",
        ]),
        permissive: false,
        validate_as: Some("ascii_identifier"),
        hex: false,
    });
}

/// With `allowLeadingDash`, the author takes a leading `-` (the command puts the value after
/// `--`): the type's own rule is left.
#[test]
fn adversarial_ascii_identifier_allowing_a_leading_dash() {
    let mut declaration = typed("ascii_identifier");
    declaration["allowLeadingDash"] = json!(true);
    attack(TypeCase {
        declaration,
        accept: strings(&["-n", "--", "--help", "-", "a.b-c_d"]),
        refuse: strings(&["a b", "a;b", "a/b", "é", "-a b", "$x", "-$x"]),
        permissive: false,
        // ValidateArgumentType by type name knows no argument: it refuses a leading `-`.
        validate_as: None,
        hex: false,
    });
}

#[test]
fn adversarial_ascii_sentence() {
    attack(TypeCase {
        declaration: typed("ascii_sentence"),
        accept: strings(&[
            "a -n -e",
            "hello, world.",
            "  two  spaces  ",
            " -- --help",
            " ",
            "a,b",
        ]),
        refuse: strings(&[
            "a;b",
            "a\tb",
            "a\nb",
            "a'b",
            "a\"b",
            "$x",
            "a!",
            "a*",
            "-n -e",
            "-- --help",
        ]),
        permissive: false,
        validate_as: Some("ascii_sentence"),
        hex: false,
    });
}

#[test]
fn adversarial_unicode_identifier() {
    attack(TypeCase {
        declaration: typed("unicode_identifier"),
        accept: strings(&["héllo_wörld-ß.日本", "١٢٣", "Ωmega", "a.b-c_d"]),
        refuse: strings(&[
            "a b",
            "a;b",
            "a'b",
            "🎉",
            "a\u{202e}b",
            "a\nb",
            "$x",
            "a*",
            "-n",
        ]),
        permissive: false,
        validate_as: Some("unicode_identifier"),
        hex: false,
    });
}

#[test]
fn adversarial_int() {
    attack(TypeCase {
        declaration: typed("int"),
        accept: strings(&[
            "0",
            "-1",
            "42",
            "9223372036854775807",
            "-9223372036854775808",
        ]),
        refuse: strings(&[
            "9223372036854775808",
            "-9223372036854775809",
            "1.5",
            "1e3",
            "+1",
            "1 ",
            " 1",
            "0x10",
            "1;touch MARK",
            "-",
            "--1",
            "١٢",
        ]),
        permissive: false,
        validate_as: Some("int"),
        hex: false,
    });
}

#[test]
fn adversarial_email() {
    attack(TypeCase {
        declaration: typed("email"),
        accept: strings(&["alice@example.com", "first.last@sub.example.org"]),
        refuse: strings(&[
            "a b@example.com",
            "no-at-sign",
            "@example.com",
            "alice@",
            "alice@example.com\n",
            "a@b@example.com",
            "alice@example.com; touch MARK",
        ]),
        permissive: false,
        validate_as: Some("email"),
        hex: false,
    });
}

#[test]
fn adversarial_url() {
    attack(TypeCase {
        declaration: typed("url"),
        accept: strings(&[
            "http://example.com",
            // `$ ( ) ' ; & =` are all RFC 3986 sub-delimiters, so this URL is valid, and it
            // runs `touch MARK` if it reaches a shell unquoted.
            "https://example.com/a?b=1&c=2;d=$(touch$IFS'MARK')#frag",
            "https://user@example.com:8443/p/a.b",
        ]),
        refuse: strings(&[
            "ftp://example.com",
            "example.com",
            "//example.com",
            "http://exa mple.com",
            "http://example.com/\n",
            "http://example.com/\t",
            "javascript:alert(1)",
            "/relative",
            "http://example.com/ $(touch MARK)",
        ]),
        permissive: false,
        validate_as: Some("url"),
        hex: false,
    });
}

#[test]
fn adversarial_datetime() {
    attack(TypeCase {
        declaration: typed("datetime"),
        accept: strings(&[
            "2024-02-29T23:59:59",
            "2024-01-02T03:04",
            "1999-12-31T00:00:00",
        ]),
        refuse: strings(&[
            "2024-13-01T00:00",
            "2024-00-10T00:00",
            "2024-01-32T00:00",
            "2024-01-01T24:00",
            "2024-01-01T00:60",
            "2024-01-01 00:00",
            "2024-01-01T00:00:00Z",
            "2024-1-1T0:0",
            "2024-01-01T00:00;touch MARK",
        ]),
        permissive: false,
        validate_as: Some("datetime"),
        hex: false,
    });
}

#[test]
fn adversarial_regex() {
    attack(TypeCase {
        declaration: typed("regex:[a-z]{1,8}"),
        accept: strings(&["abc", "abcdefgh"]),
        // The whole value must match: a match of a part is not enough.
        refuse: strings(&[
            "abcdefghi",
            "abc;",
            "ABC",
            "abc\n",
            "\nabc",
            "x$(touch MARK)",
            "abc\nabc",
        ]),
        permissive: false,
        validate_as: Some("regex:[a-z]{1,8}"),
        hex: false,
    });
}

#[test]
fn adversarial_regex_matching_anything() {
    attack(TypeCase {
        declaration: typed("regex:(?s).*"),
        accept: Vec::new(),
        refuse: Vec::new(),
        permissive: true,
        validate_as: Some("regex:(?s).*"),
        hex: false,
    });
}

#[test]
fn adversarial_checkbox() {
    attack(TypeCase {
        declaration: typed("checkbox"),
        accept: strings(&["true", "false", "1", "0"]),
        refuse: strings(&["yes", "true;touch MARK", "2", "true ", "$(touch MARK)"]),
        permissive: false,
        validate_as: Some("checkbox"),
        hex: false,
    });
}

/// Choice values an admin might write, each of which runs `touch MARK` if it reaches a shell
/// unquoted: choices are values like any other.
const HOSTILE_CHOICES: &[&str] = &[
    "red",
    "$(touch MARK)",
    "`touch MARK`",
    "'; touch MARK; '",
    "\"; touch MARK; \"",
    "a b",
    "*",
    "~",
    "-n",
    "{{ other }}",
    "x\ny",
    "\\",
    "#",
];

fn choices(values: &[&str]) -> Value {
    json!(
        values
            .iter()
            .map(|v| json!({"value": v, "title": format!("Choice {v:?}")}))
            .collect::<Vec<_>>()
    )
}

#[test]
fn adversarial_checklist() {
    let listed: Vec<&str> = HOSTILE_CHOICES.to_vec();
    attack(TypeCase {
        declaration: json!({"title": "Subject", "type": "checklist", "choices": choices(&listed)}),
        accept: strings(&[
            "red",
            "$(touch MARK)",
            "red,a b",
            "$(touch MARK),'; touch MARK; ',`touch MARK`",
            "-n,{{ other }},x\ny,\\,#",
        ]),
        refuse: strings(&["zzz", "red,zzz", "RED", "red;a b", "$(touch MARK);red"]),
        permissive: false,
        validate_as: None,
        hex: false,
    });
}

#[test]
fn adversarial_choices_without_type() {
    attack(TypeCase {
        declaration: json!({"title": "Subject", "choices": choices(HOSTILE_CHOICES)}),
        accept: strings(HOSTILE_CHOICES),
        refuse: strings(&["zzz", "RED", "red ", " red", "$(touch MARK) ", "a  b"]),
        permissive: false,
        validate_as: None,
        hex: false,
    });
}

#[test]
fn adversarial_password() {
    attack(TypeCase {
        declaration: typed("password"),
        accept: Vec::new(),
        refuse: Vec::new(),
        permissive: true,
        validate_as: Some("password"),
        hex: true,
    });
}

#[test]
fn adversarial_raw_string_multiline() {
    attack(TypeCase {
        declaration: typed("raw_string_multiline"),
        accept: Vec::new(),
        refuse: Vec::new(),
        permissive: true,
        validate_as: Some("raw_string_multiline"),
        hex: false,
    });
}

#[test]
fn adversarial_very_dangerous_raw_string() {
    attack(TypeCase {
        declaration: typed("very_dangerous_raw_string"),
        accept: Vec::new(),
        refuse: Vec::new(),
        permissive: true,
        validate_as: Some("very_dangerous_raw_string"),
        hex: false,
    });
}

/// A value within every bound, made of quotes: single-quoted, each `'` becomes four bytes,
/// and 40 000 of them exceed what Linux takes in one argv string (128 KiB). The start must
/// either run it intact or refuse it up front; a spawn failure after the value was accepted
/// would be an accepted value that never arrived.
#[test]
fn quote_heavy_value_runs_intact_or_is_refused() {
    let places = ["unquoted", "single", "double", "environment"];
    let actions: Vec<Value> = PLACES
        .iter()
        .filter(|p| places.contains(&p.id))
        .map(|place| {
            let Run::Shell(script) = place.command else {
                unreachable!("shell places only")
            };
            json!({
                "id": place.id,
                "title": place.id,
                "shell": script,
                "arguments": [{"name": SUBJECT, "type": "raw_string_multiline"}],
            })
        })
        .collect();
    let server = Server::start(json!({
        "maxRequestBodyBytes": 1024 * 1024,
        "maxOutputBytes": 1024 * 1024,
        "actions": actions,
    }));
    let value = "'".repeat(40_000);
    let mut caller = Caller::new(server.addr);
    let mut failures = Vec::new();
    for place in places {
        let body = json!({"actionId": place, "arguments": [{"name": SUBJECT, "value": value}]});
        let (status, reply) = caller.call("StartActionAndWait", &body);
        match status {
            200 => {
                let entry = &reply["logEntry"];
                if entry["stdout"] != json!(value) || entry["exitCode"] != 0 {
                    failures.push(format!(
                        "{place}: accepted, then exit {} with stdout {} and stderr {}",
                        entry["exitCode"],
                        show_json(&entry["stdout"]),
                        show_json(&entry["stderr"])
                    ));
                }
            }
            400 => {
                let message = assert_json_error(&reply, "invalid_argument");
                assert!(message.contains(SUBJECT), "{place}: {message}");
            }
            _ => failures.push(format!("{place}: HTTP {status}: {reply}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(!server.path(MARK).exists());
}
