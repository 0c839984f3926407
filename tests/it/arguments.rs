//! Typed arguments end to end (SPEC §5.2, §5.5, §3): the proof that a value cannot be
//! injected, by a real `/bin/sh` and by the command's own output.
//!
//! The adversarial part starts one `actiond` per argument type, with one action per place a
//! value can stand: unquoted, inside `"…"` and `'…'`, between literal text, twice and three
//! times in one word, as the only word (`"$#"` must stay 1), in an assignment, on the second
//! line of a script, as an `exec:` element, and through the environment variable (`$SUBJECT`
//! in a shell, `printenv` without one). Every hostile payload (quotes, `$( )`, backticks,
//! `${ }`, operators, redirections, globs, `~`, `#`, line breaks, backslashes, option-like
//! words, `{{ }}` naming a real argument, non-ASCII, 60 and 100 KiB) goes to every action.
//! A value the type accepts must come back byte for byte in stdout; a value it refuses must answer
//! 400 `invalid_argument` naming the argument and start nothing (GetLogs counts only the
//! accepted starts); and no payload may create the marker file (or any file) in the
//! working directory. Where `ValidateArgumentType` knows the type, the start and it must
//! agree.
//!
//! Then the request-time rules (undeclared names, choices, defaults and `rejectNull`, GET
//! starts), the config-time refusals through `--check-config` (exit 2, the YAML path, a
//! hint), passwords kept out of actiond's own log and of every answer, RestartAction
//! reusing the recorded arguments, and ValidateArgumentType.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::client::{Conn, Request, assert_json_error, send};
use crate::harness::{
    Finished, Server, TempDir, config_with, files_in, run_binary, started_id, to_yaml,
};

/// The argument under attack; its environment variable is `SUBJECT`.
const SUBJECT: &str = "subject";

/// The file every hostile payload tries to create in the command's working directory.
const MARK: &str = "MARK";

/// 60 KiB: far beyond any form field, below actiond's 64 KiB bound on one value, and below
/// Linux's 128 KiB limit for one argv or environment string once quoted (see
/// `long_payloads`).
const LONG: usize = 60 * 1024;

/// Beyond actiond's bound on one value: SPEC §5.5 names no such bound, so this one may be
/// refused (naming the argument) or must arrive intact.
const TOO_LONG: usize = 100 * 1024;

/// The longest value a small `regex:` pattern is sure to be matched against.
const REGEX_LONGEST: usize = 32 * 1024;

/// Long enough for any of these short commands; only a hang detector.
const FINISH: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------------
// Where a value stands

enum Run {
    Shell(&'static str),
    Exec(&'static [&'static str]),
}

/// One action of the adversarial config: its command, and the literal text around each
/// copy of the value in what it prints (the expected stdout is `around.join(value)`).
struct Place {
    id: &'static str,
    command: Run,
    around: &'static [&'static str],
    /// Whether a 60 KiB value fits: with two or three copies the script exceeds what
    /// Linux allows in one argv string (MAX_ARG_STRLEN, 128 KiB), and the spawn fails for a
    /// reason that has nothing to do with quoting.
    long_ok: bool,
}

const PLACES: &[Place] = &[
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
        command: Run::Exec(&["printenv", "SUBJECT"]),
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

/// Values with NUL: refused for every type (SPEC §5.5), before anything runs.
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
    /// The SPEC does not settle it: either answer, but an accepted value must arrive intact.
    Either,
}

/// One argument type under attack.
struct TypeCase {
    /// The declaration of `subject` (its name is added).
    declaration: Value,
    /// Values the type must accept (SPEC §5.5).
    accept: Vec<String>,
    /// Values the type must refuse.
    refuse: Vec<String>,
    /// Every value without NUL is accepted (password, raw strings, a catch-all regex).
    permissive: bool,
    /// The type as ValidateArgumentType knows it, to cross-check every start against.
    validate_as: Option<&'static str>,
    /// Pipe every command's output through `od` and compare the decoded bytes: actiond
    /// masks a password's value wherever it appears in the output (the brief: never in the
    /// entry), so only an encoding shows whether it arrived intact.
    hex: bool,
}

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|s| s.to_string()).collect()
}

fn typed(kind: &str) -> Value {
    json!({"title": "Subject", "type": kind})
}

/// What the command receives for an accepted value. Only datetime changes it: SPEC §5.5 adds
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
                // The argv runs as `"$@"`: each element still reaches it literally.
                (Run::Exec(argv), true) => {
                    let mut wrapped = vec![
                        "sh".to_string(),
                        "-c".to_string(),
                        format!("\"$@\" | {HEX}"),
                        "sh".to_string(),
                    ];
                    wrapped.extend(argv.iter().map(|a| a.to_string()));
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
                    "ValidateArgumentType says valid={valid} for {} as {kind}, the SPEC says {:?}",
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

fn show_json(value: &Value) -> String {
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
        accept: strings(&["-n", "--", "--help", ".", "..", "a.b-c_d", "-"]),
        refuse: strings(&["a b", "a;b", "a/b", "é", "a\nb", "$x", "a'b", "*"]),
        permissive: false,
        validate_as: Some("ascii_identifier"),
        hex: false,
    });
}

#[test]
fn adversarial_ascii_sentence() {
    attack(TypeCase {
        declaration: typed("ascii_sentence"),
        accept: strings(&[
            "-n -e",
            "hello, world.",
            "  two  spaces  ",
            "-- --help",
            " ",
            "a,b",
        ]),
        refuse: strings(&["a;b", "a\tb", "a\nb", "a'b", "a\"b", "$x", "a!", "a*"]),
        permissive: false,
        validate_as: Some("ascii_sentence"),
        hex: false,
    });
}

#[test]
fn adversarial_unicode_identifier() {
    attack(TypeCase {
        declaration: typed("unicode_identifier"),
        accept: strings(&["héllo_wörld-ß.日本", "١٢٣", "Ωmega", "-n", "a.b-c_d"]),
        refuse: strings(&["a b", "a;b", "a'b", "🎉", "a\u{202e}b", "a\nb", "$x", "a*"]),
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

// ---------------------------------------------------------------------------------------
// Request-time rules

fn rules_server() -> Server {
    Server::start(config_with(vec![
        json!({
            "id": "defaults",
            "title": "Defaults",
            "shell": "printf '%s|%s|%s' {{ alpha }} {{ beta }} {{ gamma }}",
            "arguments": [
                {"name": "alpha", "type": "ascii", "default": "dflt"},
                {"name": "beta", "type": "ascii"},
                {"name": "gamma", "type": "int", "default": "7"},
            ],
        }),
        json!({
            "id": "required",
            "title": "Required",
            "shell": "printf '%s' {{ hostname }}",
            "arguments": [{"name": "hostname", "type": "ascii_identifier", "rejectNull": true}],
        }),
        json!({
            "id": "requiredWithDefault",
            "title": "Required with a default",
            "shell": "printf '%s' {{ hostname }}",
            "arguments": [{
                "name": "hostname",
                "type": "ascii_identifier",
                "rejectNull": true,
                "default": "localhost",
            }],
        }),
        json!({
            "id": "colour",
            "title": "Colour",
            "shell": "printf '%s' {{ colour }}",
            "arguments": [{"name": "colour", "choices": [
                {"value": "red", "title": "Red"},
                {"value": "green", "title": "Green"},
            ]}],
        }),
        json!({
            "id": "echo",
            "title": "Echo",
            "shell": "printf '%s' {{ subject }}",
            "arguments": [{"name": "subject", "type": "raw_string_multiline"}],
        }),
    ]))
}

/// A start body with `arguments` given as name/value pairs.
fn start_body(action: &str, arguments: &[(&str, &str)]) -> Value {
    let arguments: Vec<Value> = arguments
        .iter()
        .map(|(name, value)| json!({"name": name, "value": value}))
        .collect();
    json!({"actionId": action, "arguments": arguments})
}

/// Starts and waits; the stdout of the finished entry.
fn stdout_of(server: &Server, action: &str, arguments: &[(&str, &str)]) -> String {
    let reply = server.ok("StartActionAndWait", start_body(action, arguments));
    let entry = &reply["logEntry"];
    assert_eq!(entry["exitCode"], 0, "{entry}");
    entry["stdout"].as_str().expect("stdout").to_string()
}

/// Asserts that both start operations refuse the call with invalid_argument naming `name`,
/// and that no entry was created.
fn assert_refused(server: &Server, action: &str, arguments: &[(&str, &str)], name: &str) {
    let before = server.ok("GetLogs", json!({}))["totalCount"].clone();
    for op in ["StartAction", "StartActionAndWait"] {
        let (status, reply) = server.call(op, start_body(action, arguments));
        assert_eq!(status, 400, "{op} {action} {arguments:?}: {reply}");
        let message = assert_json_error(&reply, "invalid_argument");
        assert!(
            message.contains(name),
            "{op} {action} {arguments:?}: the message does not name {name}: {message}"
        );
    }
    let after = server.ok("GetLogs", json!({}))["totalCount"].clone();
    assert_eq!(before, after, "a refused start created an entry");
}

#[test]
fn undeclared_argument_is_refused_naming_it() {
    let server = rules_server();
    assert_refused(&server, "defaults", &[("intruder", "x")], "intruder");
    assert_refused(
        &server,
        "defaults",
        &[("alpha", "ok"), ("PATH", "/tmp")],
        "PATH",
    );
    assert_refused(&server, "echo", &[("SUBJECT", "x")], "SUBJECT");
}

#[test]
fn choices_are_enforced() {
    let server = rules_server();
    assert_eq!(stdout_of(&server, "colour", &[("colour", "red")]), "red");
    assert_eq!(
        stdout_of(&server, "colour", &[("colour", "green")]),
        "green"
    );
    for bad in ["blue", "Red", "red ", "red;green"] {
        assert_refused(&server, "colour", &[("colour", bad)], "colour");
    }
}

#[test]
fn absent_or_empty_values_take_the_default() {
    let server = rules_server();
    assert_eq!(stdout_of(&server, "defaults", &[]), "dflt||7");
    assert_eq!(
        stdout_of(&server, "defaults", &[("alpha", ""), ("gamma", "")]),
        "dflt||7"
    );
    assert_eq!(
        stdout_of(
            &server,
            "defaults",
            &[("alpha", "x"), ("beta", "y"), ("gamma", "-1")]
        ),
        "x|y|-1"
    );
    // A given value is still checked against the type.
    assert_refused(&server, "defaults", &[("gamma", "seven")], "gamma");
}

#[test]
fn required_argument_must_be_given() {
    let server = rules_server();
    assert_refused(&server, "required", &[], "hostname");
    assert_refused(&server, "required", &[("hostname", "")], "hostname");
    assert_eq!(
        stdout_of(&server, "required", &[("hostname", "web-1")]),
        "web-1"
    );
    // rejectNull with a default: the default fills the gap.
    assert_eq!(stdout_of(&server, "requiredWithDefault", &[]), "localhost");
}

#[test]
fn get_start_uses_defaults_and_refuses_a_required_argument() {
    let server = rules_server();
    let resp = send(
        server.addr,
        &Request::get("/api/StartActionByGetAndWait/defaults"),
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
    let entry = resp.json()["logEntry"].clone();
    assert_eq!(entry["stdout"], "dflt||7", "{entry}");

    let resp = send(server.addr, &Request::get("/api/StartActionByGet/defaults"));
    let id = started_id(&resp);
    assert_eq!(server.wait_finished(&id, FINISH)["stdout"], "dflt||7");

    // An argument that is optional without a default is simply empty.
    let resp = send(
        server.addr,
        &Request::get("/api/StartActionByGetAndWait/echo"),
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json()["logEntry"]["stdout"], "");

    let before = server.ok("GetLogs", json!({}))["totalCount"].clone();
    for path in [
        "/api/StartActionByGetAndWait/required",
        "/api/StartActionByGet/required",
    ] {
        let resp = send(server.addr, &Request::get(path));
        assert_eq!(resp.status, 400, "{path}: {}", resp.text());
        let message = assert_json_error(&resp.json(), "invalid_argument");
        assert!(message.contains("hostname"), "{path}: {message}");
    }
    let resp = send(
        server.addr,
        &Request::get("/api/StartActionByGetAndWait/requiredWithDefault"),
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json()["logEntry"]["stdout"], "localhost");
    let after = server.ok("GetLogs", json!({}))["totalCount"].clone();
    assert_eq!(
        after.as_str().and_then(|s| s.parse::<u64>().ok()),
        before
            .as_str()
            .and_then(|s| s.parse::<u64>().ok())
            .map(|n| n + 1),
        "only the requiredWithDefault start may have added an entry"
    );
}

#[test]
fn restart_reuses_the_recorded_arguments() {
    let server = rules_server();
    let value = "a'b\"c $(touch MARK) `touch MARK`\nline two\t{{ subject }}";
    let reply = server.ok(
        "StartActionAndWait",
        start_body("echo", &[("subject", value)]),
    );
    let first = reply["logEntry"].clone();
    assert_eq!(first["stdout"], value, "{first}");
    let first_id = first["executionTrackingId"].as_str().expect("id");

    let reply = server.ok("RestartAction", json!({"executionTrackingId": first_id}));
    let second_id = reply["executionTrackingId"].as_str().expect("new id");
    assert_ne!(second_id, first_id);
    let second = server.wait_finished(second_id, FINISH);
    assert_eq!(second["stdout"], value, "{second}");
    assert_eq!(second["actionId"], "echo");

    // Defaults are recorded too: a restart of a defaulted start prints the same.
    let reply = server.ok(
        "StartActionAndWait",
        start_body("defaults", &[("beta", "b")]),
    );
    let id = reply["logEntry"]["executionTrackingId"]
        .as_str()
        .expect("id");
    let again = server.ok("RestartAction", json!({"executionTrackingId": id}));
    let again_id = again["executionTrackingId"].as_str().expect("new id");
    assert_eq!(server.wait_finished(again_id, FINISH)["stdout"], "dflt|b|7");
    assert!(!server.path(MARK).exists(), "INJECTION through a restart");
}

#[test]
fn validate_argument_type_answers_valid_and_why_not() {
    let server = rules_server();
    let table: &[(&str, &str, bool)] = &[
        ("abc", "ascii", true),
        ("a b", "ascii", false),
        ("-42", "int", true),
        ("9223372036854775808", "int", false),
        ("2024-12-01T10:00", "datetime", true),
        ("2024-13-01T10:00", "datetime", false),
        // A pattern is never compiled from a request, whatever it is.
        ("abc", "regex:[a-z]+", false),
        ("x", "regex:[", false),
        ("a", "regex:(?:.{0,100}){0,100}x", false),
        ("alice@example.com", "email", true),
        ("alice", "email", false),
        ("https://example.com/x", "url", true),
        ("ftp://example.com/x", "url", false),
        ("any\n'\"$(text)", "password", true),
        ("a\0b", "password", false),
        ("a\0b", "raw_string_multiline", false),
        ("x", "no_such_type", false),
    ];
    for (value, kind, valid) in table {
        let reply = server.ok(
            "ValidateArgumentType",
            json!({"value": value, "type": kind}),
        );
        assert_eq!(reply["valid"], json!(valid), "{value:?} as {kind}: {reply}");
        let description = reply["description"]
            .as_str()
            .unwrap_or_else(|| panic!("{value:?} as {kind}: no description string: {reply}"));
        if !valid {
            assert!(
                !description.is_empty(),
                "{value:?} as {kind}: invalid without a reason: {reply}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// Passwords and actiond's own log

fn call(server: &Server, op: &str, body: Value) -> (u16, Value) {
    crate::client::connect_json(server.addr, op, &body)
}

#[test]
fn password_never_reaches_actionds_log_or_any_answer() {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    // The token is what is searched for: it survives any escaping a log line might apply.
    let token = format!("Pw{nanos}Tok{}", std::process::id());
    let secret = format!("{token} it's \"$(touch MARK)\"");
    let server = Server::start(config_with(vec![
        json!({
            "id": "login",
            "title": "Login",
            // The command compares instead of printing: stdout is what the program wrote, and a
            // program may print anything; the point is what actiond itself shows and logs.
            "shell": "if [ {{ pw }} = \"$(cat expected)\" ]\nthen echo same\nelse echo different\nfi",
            "arguments": [
                {"name": "pw", "type": "password", "rejectNull": true},
                {"name": "user", "type": "ascii"},
            ],
        }),
        json!({
            "id": "show",
            "title": "Show",
            // A command that prints the password: still not in the entry (the brief).
            "shell": "printf 'pw=[%s]\\n' {{ pw }}",
            "arguments": [{"name": "pw", "type": "password"}],
        }),
    ]));
    std::fs::write(server.path("expected"), &secret).expect("write expected");
    let mut answers = Vec::new();

    let (status, reply) = call(
        &server,
        "StartActionAndWait",
        start_body("login", &[("pw", &secret), ("user", "bob")]),
    );
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["logEntry"]["stdout"], "same\n", "{reply}");
    let id = reply["logEntry"]["executionTrackingId"]
        .as_str()
        .expect("id")
        .to_string();
    answers.push(reply);

    // Refusals: another argument is bad, or the password itself has a NUL.
    for arguments in [
        vec![("pw", secret.clone()), ("user", "b o b".to_string())],
        vec![("pw", format!("{secret}\0")), ("user", "bob".to_string())],
    ] {
        let args: Vec<(&str, &str)> = arguments.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let (status, reply) = call(&server, "StartActionAndWait", start_body("login", &args));
        assert_eq!(status, 400, "{reply}");
        answers.push(reply);
    }

    // A restart re-runs with the recorded password.
    let (status, reply) = call(&server, "RestartAction", json!({"executionTrackingId": id}));
    assert_eq!(status, 200, "{reply}");
    let new_id = reply["executionTrackingId"]
        .as_str()
        .expect("id")
        .to_string();
    answers.push(reply);
    let deadline = Instant::now() + FINISH;
    let entry = loop {
        let (status, reply) = call(
            &server,
            "ExecutionStatus",
            json!({"executionTrackingId": new_id}),
        );
        assert_eq!(status, 200, "{reply}");
        if reply["logEntry"]["executionFinished"] == json!(true) {
            break reply;
        }
        assert!(Instant::now() < deadline, "restart not finished: {reply}");
        thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(entry["logEntry"]["stdout"], "same\n", "{entry}");
    answers.push(entry);

    let (status, reply) = call(
        &server,
        "StartActionAndWait",
        start_body("show", &[("pw", &secret)]),
    );
    assert_eq!(status, 200, "{reply}");
    let shown = reply["logEntry"]["stdout"].as_str().unwrap_or_default();
    assert!(
        shown.starts_with("pw=["),
        "the command did not run: {reply}"
    );
    answers.push(reply);

    for (op, body) in [
        ("GetLogs", json!({})),
        ("GetActionLogs", json!({"actionId": "login"})),
        ("GetActionLogs", json!({"actionId": "show"})),
        ("ExecutionStatus", json!({"executionTrackingId": id})),
    ] {
        let (status, reply) = call(&server, op, body);
        assert_eq!(status, 200, "{op}: {reply}");
        answers.push(reply);
    }
    for answer in &answers {
        assert!(
            !answer.to_string().contains(&token),
            "an answer shows the password: {answer}"
        );
    }
    let marker = server.path(MARK);
    let log = server.stop_and_log();
    assert!(
        log.contains("listening on"),
        "the log was not captured: {log}"
    );
    assert!(
        !log.contains(&token),
        "actiond's log shows the password:\n{log}"
    );
    assert!(!marker.exists(), "INJECTION through a password");
}

// ---------------------------------------------------------------------------------------
// Config-time refusals (`--check-config`)

/// A valid first action, so that each refusal must point at the second one.
fn valid_action() -> Value {
    json!({
        "id": "fine",
        "title": "Fine",
        "shell": "printf '%s' \"{{ subject }}\"",
        "arguments": [{"name": "subject", "type": "ascii"}],
    })
}

/// An action with one `subject` argument of `kind` and the shell command `script`.
fn action_with(script: &str, kind: &str) -> Value {
    json!({
        "id": "bad",
        "title": "Bad",
        "shell": script,
        "arguments": [{"name": "subject", "type": kind}],
    })
}

fn check_config(actions: Vec<Value>) -> Finished {
    let dir = TempDir::new();
    let path = dir.path().join("config.yaml");
    std::fs::write(&path, to_yaml(&config_with(actions))).expect("write config");
    let path = path.to_str().expect("utf-8 temp path");
    run_binary(
        &["--check-config", path],
        dir.path(),
        Duration::from_secs(20),
    )
}

/// Asserts exit 2, `path` in the output, and at least one of `hints` (case-insensitive).
fn assert_config_refused(run: &Finished, path: &str, hints: &[&str]) {
    let out = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.status.code(),
        Some(2),
        "exit {:?}; output:\n{out}",
        run.status
    );
    assert!(out.contains(path), "no `{path}` in:\n{out}");
    let lower = out.to_lowercase();
    assert!(
        hints.iter().any(|h| lower.contains(&h.to_lowercase())),
        "none of {hints:?} in:\n{out}"
    );
}

/// What an unsafe context's refusal must suggest instead (SPEC §5.5).
const FIX: &[&str] = &["exec", "environment"];

fn assert_script_refused(script: &str, kind: &str) {
    let run = check_config(vec![valid_action(), action_with(script, kind)]);
    assert_config_refused(&run, "actions[1].shell", FIX);
}

#[test]
fn config_with_every_safe_place_passes_the_check() {
    // The control for the refusals below: the places of the adversarial test are all fine.
    let actions: Vec<Value> = PLACES
        .iter()
        .map(|place| {
            let mut action = action_with("true", "ascii");
            action["id"] = json!(place.id);
            match place.command {
                Run::Shell(script) => action["shell"] = json!(script),
                Run::Exec(argv) => {
                    action.as_object_mut().expect("object").remove("shell");
                    action["exec"] = json!(argv);
                }
            }
            action
        })
        .collect();
    let run = check_config(actions);
    assert_eq!(run.status.code(), Some(0), "{}{}", run.stdout, run.stderr);
}

#[test]
fn placeholder_inside_backticks_is_a_config_error() {
    assert_script_refused("echo `echo {{ subject }}`", "ascii");
}

#[test]
fn placeholder_inside_command_substitution_is_a_config_error() {
    assert_script_refused("echo $(echo {{ subject }})", "ascii");
    assert_script_refused("echo \"$(echo '{{ subject }}')\"", "ascii");
}

#[test]
fn placeholder_inside_arithmetic_is_a_config_error() {
    assert_script_refused("echo $(( {{ subject }} + 1 ))", "int");
}

#[test]
fn placeholder_inside_parameter_expansion_is_a_config_error() {
    assert_script_refused("echo ${HOME:-{{ subject }}}", "ascii");
}

#[test]
fn placeholder_inside_a_here_document_is_a_config_error() {
    assert_script_refused("cat <<EOF\n{{ subject }}\nEOF", "ascii");
    assert_script_refused("cat <<'EOF'\n{{ subject }}\nEOF", "ascii");
}

#[test]
fn placeholder_inside_a_comment_is_a_config_error() {
    assert_script_refused("echo hi # {{ subject }}", "ascii");
}

#[test]
fn placeholder_right_after_dollar_is_a_config_error() {
    // In YAML `${{ subject }}` is also the environment interpolation syntax (SPEC §9), which
    // claims it first; either way the check must fail at the command's path. The template
    // rule itself is tested on the library in quoting_fuzz.
    let run = check_config(vec![
        valid_action(),
        action_with("echo ${{ subject }}", "ascii"),
    ]);
    assert_config_refused(&run, "actions[1].shell", &["environment", "exec", "$"]);
}

#[test]
fn placeholder_right_after_backslash_is_a_config_error() {
    assert_script_refused("printf '%s' \\{{ subject }}", "ascii");
    assert_script_refused("printf '%s' \"\\{{ subject }}\"", "ascii");
}

#[test]
fn placeholder_naming_no_argument_is_a_config_error() {
    let run = check_config(vec![
        valid_action(),
        action_with("printf '%s' {{ nope }}", "ascii"),
    ]);
    assert_config_refused(&run, "actions[1].shell", &["nope"]);
    let mut exec = action_with("true", "ascii");
    exec.as_object_mut().expect("object").remove("shell");
    exec["exec"] = json!(["printf", "%s", "{{ nope }}"]);
    let run = check_config(vec![valid_action(), exec]);
    assert_config_refused(&run, "actions[1].exec", &["nope"]);
}

#[test]
fn placeholder_naming_a_display_only_argument_is_a_config_error() {
    for kind in ["confirmation", "html"] {
        let run = check_config(vec![
            valid_action(),
            action_with("printf '%s' {{ subject }}", kind),
        ]);
        assert_config_refused(&run, "actions[1].shell", &["subject"]);
    }
}

#[test]
fn reserved_argument_names_are_a_config_error() {
    for name in [
        "path",
        "home",
        "ifs",
        "shell",
        "env",
        "bash_env",
        "ps4",
        "ld_preload",
        "actiond_x",
        "Path",
        "node_options",
        "pythonpath",
        "perl5opt",
        "git_ssh_command",
        "gconv_path",
        "bash_func_x",
        "lc_all",
    ] {
        let run = check_config(vec![
            valid_action(),
            json!({
                "id": "bad",
                "title": "Bad",
                "shell": "printf '%s' \"$PWD\"",
                "arguments": [{"name": name, "type": "ascii"}],
            }),
        ]);
        assert_config_refused(
            &run,
            "actions[1].arguments[0].name",
            &[&name.to_uppercase()],
        );
    }
}

#[test]
fn invalid_regex_is_a_config_error() {
    let run = check_config(vec![valid_action(), action_with("true", "regex:[")]);
    assert_config_refused(&run, "actions[1].arguments[0].type", &["regex", "["]);
}

#[test]
fn unknown_type_is_a_config_error() {
    let run = check_config(vec![valid_action(), action_with("true", "bogus_type")]);
    // Naming the type or listing the known ones both tell how to fix it.
    assert_config_refused(
        &run,
        "actions[1].arguments[0].type",
        &["bogus_type", "known types"],
    );
}

/// A default that breaks its own type loads with a warning (real OliveTin configs use
/// defaults such as `none` as hints; README "Decisions"), and a start relying on it is
/// refused before anything runs.
#[test]
fn default_that_breaks_its_type_warns_and_is_refused_when_used() {
    for (kind, default) in [("int", "abc"), ("ascii", "a b"), ("datetime", "tomorrow")] {
        let mut action = action_with("printf '%s' {{ subject }}", kind);
        action["arguments"][0]["default"] = json!(default);
        let run = check_config(vec![valid_action(), action.clone()]);
        let out = format!("{}{}", run.stdout, run.stderr);
        assert_eq!(run.status.code(), Some(0), "{kind}: {out}");
        assert!(
            out.contains("warning: actions[1].arguments[0].default"),
            "{kind}: {out}"
        );
        let server = Server::start(config_with(vec![action]));
        let resp = send(
            server.addr,
            &Request::get("/api/StartActionByGetAndWait/bad"),
        );
        assert_eq!(resp.status, 400, "{kind}: {}", resp.text());
        assert!(resp.text().contains("subject"), "{kind}: {}", resp.text());
        assert_eq!(server.ok("GetLogs", json!({}))["totalCount"], "0", "{kind}");
    }
}

// ---------------------------------------------------------------------------------------
// Templates the lexer got wrong (found by quoting_fuzz), through the real binary

/// Shell commands whose quoting context the config check misreads: `#` right after `$( )`
/// is not a comment; a backslash-newline joins lines before comments are seen; `<<` inside
/// `$(( ))` is a shift, not a here-document; a quoted here-document delimiter may hold spaces
/// and quotes. Each must be refused by `--check-config`, or else no value may run through it.
const TRICKY_SCRIPTS: &[&str] = &[
    "printf '%s' $(true)#'\n{{ subject }}'",
    "printf '%s' \\\n#{{ subject }}",
    "printf %s $(( 1 << 2 ))\nprintf %s '\n2\n{{ subject }}'",
    "cat <<\"E F\"\n{{ subject }}\nE F",
    "cat <<'E F'{{ subject }}",
];

#[test]
fn tricky_scripts_are_refused_or_inject_nothing() {
    let mut accepted = Vec::new();
    for (i, script) in TRICKY_SCRIPTS.iter().enumerate() {
        let mut action = action_with(script, "raw_string_multiline");
        action["id"] = json!(format!("tricky{i}"));
        let run = check_config(vec![action.clone()]);
        match run.status.code() {
            Some(2) => {}
            Some(0) => accepted.push((script, action)),
            other => panic!(
                "--check-config exit {other:?}: {}{}",
                run.stdout, run.stderr
            ),
        }
    }
    if accepted.is_empty() {
        return;
    }
    let server = Server::start(config_with(
        accepted.iter().map(|(_, a)| a.clone()).collect(),
    ));
    let mut injections = Vec::new();
    for (script, action) in &accepted {
        for value in [
            "$(touch MARK)",
            "\ntouch MARK\n",
            "\ntouch MARK #",
            ";touch MARK;#",
            "x\nE F\ntouch MARK\n",
        ] {
            let body = json!({
                "actionId": action["id"],
                "arguments": [{"name": SUBJECT, "value": value}],
            });
            let (status, reply) = server.call("StartActionAndWait", body);
            if server.path(MARK).exists() {
                injections.push(format!(
                    "INJECTION: shell {script:?} passed --check-config, and the value {value:?} \
                     created {MARK} (HTTP {status}, stdout {})",
                    show_json(&reply["logEntry"]["stdout"])
                ));
                std::fs::remove_file(server.path(MARK)).expect("remove marker");
            }
        }
    }
    assert!(injections.is_empty(), "{}", injections.join("\n"));
}

#[test]
fn a_password_cut_by_the_output_omission_leaves_no_fragment() {
    // 1024 bytes kept per stream: the first 256 and the last 768. The command prints the
    // password so that its first two bytes end the head and its last three begin the tail;
    // without care, "QW" and "YUI" would be left on each side of the omission marker.
    let secret = "QWERTYUI";
    let mut config = config_with(vec![json!({
        "id": "spill",
        "title": "Spill",
        "shell": "printf '%0254d' 0; printf %s {{ pw }}; head -c 4000 /dev/zero | tr '\\0' x; \
                  printf %s {{ pw }}; head -c 765 /dev/zero | tr '\\0' y",
        "arguments": [{"name": "pw", "type": "password"}],
    })]);
    config["maxOutputBytes"] = json!(1024);
    let server = Server::start(config);
    let (status, reply) = call(
        &server,
        "StartActionAndWait",
        start_body("spill", &[("pw", secret)]),
    );
    assert_eq!(status, 200, "{reply}");
    let stdout = reply["logEntry"]["stdout"].as_str().expect("stdout");
    assert!(stdout.contains("bytes omitted"), "{stdout}");
    assert!(stdout.starts_with(&"0".repeat(254)), "{stdout}");
    for fragment in ["QW", "YUI", "UI"] {
        assert!(!stdout.contains(fragment), "{fragment} left in {stdout}");
    }
}
