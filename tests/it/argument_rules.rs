//! Typed arguments at request time and at load, through the real binary: undeclared names,
//! choices, defaults and `rejectNull`, GET starts; passwords kept out of actiond's own log and
//! of every answer; RestartAction reusing the recorded arguments; ValidateArgumentType; the
//! config-time refusals through `--check-config` (exit 2, the YAML path, a hint); and the
//! templates the lexer once got wrong. The injection tables, one actiond per type, are in
//! `arguments.rs`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::arguments::*;
use crate::client::{assert_json_error, send};
use crate::harness::{
    Finished, Server, TempDir, config_with, keyed, keyed_get, run_binary, started_id, to_yaml,
};

// ---------------------------------------------------------------------------------------
// Request-time rules

fn rules_server() -> Server {
    Server::start(config_with(
        [
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
        ]
        .into_iter()
        .map(keyed)
        .collect(),
    ))
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
        &keyed_get("/api/StartActionByGetAndWait/defaults"),
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
    let entry = resp.json()["logEntry"].clone();
    assert_eq!(entry["stdout"], "dflt||7", "{entry}");

    let resp = send(server.addr, &keyed_get("/api/StartActionByGet/defaults"));
    let id = started_id(&resp);
    assert_eq!(server.wait_finished(&id, FINISH)["stdout"], "dflt||7");

    // An argument that is optional without a default is simply empty.
    let resp = send(server.addr, &keyed_get("/api/StartActionByGetAndWait/echo"));
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json()["logEntry"]["stdout"], "");

    let before = server.ok("GetLogs", json!({}))["totalCount"].clone();
    for path in [
        "/api/StartActionByGetAndWait/required",
        "/api/StartActionByGet/required",
    ] {
        let resp = send(server.addr, &keyed_get(path));
        assert_eq!(resp.status, 400, "{path}: {}", resp.text());
        let message = assert_json_error(&resp.json(), "invalid_argument");
        assert!(message.contains("hostname"), "{path}: {message}");
    }
    let resp = send(
        server.addr,
        &keyed_get("/api/StartActionByGetAndWait/requiredWithDefault"),
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

/// A caller who may not run the action learns nothing about one of its runs from
/// RestartAction: not that it had password values, not that its arguments are gone.
#[test]
fn a_restart_by_a_caller_without_exec_says_only_that() {
    let mut config = config_with(vec![json!({
        "id": "login",
        "title": "Login",
        "shell": "true",
        "arguments": [{"name": "pw", "type": "password"}],
    })]);
    config["defaultPermissions"] = json!({"view": true, "exec": false, "logs": true});
    config["authApiTokens"] = json!([{"name": "ha", "username": "ha",
        "sha256": "eb6bc07d764f0e79f09bd55764ba5040c7df0f83fcb674993af54f86d558660c"}]);
    config["accessControlLists"] = json!([{"name": "ha", "matchUsernames": ["ha"],
        "addToEveryAction": true, "permissions": {"view": true, "exec": true, "logs": true}}]);
    let server = Server::start(config);
    let token = crate::client::Request::connect(
        "StartActionAndWait",
        start_body("login", &[("pw", "hunter2")])
            .to_string()
            .as_bytes(),
    )
    .header("Authorization", "Bearer tok-0123456789-abcdefghij");
    let reply = send(server.addr, &token).json();
    let id = reply["logEntry"]["executionTrackingId"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, reply) = call(&server, "RestartAction", json!({"executionTrackingId": id}));
    assert_eq!(status, 403, "{reply}");
    let message = reply["message"].as_str().unwrap_or_default();
    assert!(message.contains("exec permission"), "{message}");
    assert!(!message.contains("password"), "{message}");
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
            // A command that prints the password: still not in the entry (docs/ARCHITECTURE.md,
            // "Injection-proof by construction": redacted from the output).
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

    // The guest is everyone on the LAN: a run whose values held a password is replayed for
    // no guest (a logged-in user's own runs are, see live_permissions), and the refusal
    // does not show it either.
    let (status, reply) = call(&server, "RestartAction", json!({"executionTrackingId": id}));
    assert_eq!(status, 403, "{reply}");
    assert!(
        reply["message"]
            .as_str()
            .unwrap_or_default()
            .contains("enter them"),
        "{reply}"
    );
    answers.push(reply);

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

/// What an unsafe context's refusal must suggest instead.
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
    // In YAML `${{ subject }}` is also the environment interpolation syntax, which
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
fn a_command_that_reads_one_of_the_shells_own_variables_by_an_arguments_name_is_a_config_error() {
    // `$PATH` in a command is the shell's PATH: an argument named `path` cannot stand for it
    // (defining it would change how the shell finds every program). Its value is in
    // ACTIOND_ARG_PATH, and the refusal says so.
    for name in [
        "path",
        "home",
        "ifs",
        "shell",
        "env",
        "bash_env",
        "ps4",
        "actiond_x",
        "Path",
        "bash_func_x",
        "lc_all",
        "cdpath",
        "optind",
    ] {
        let upper = name.to_uppercase();
        let loads = check_config(vec![json!({
            "id": "ok",
            "title": "Ok",
            "shell": format!("printf '%s' \"$ACTIOND_ARG_{upper}\""),
            "arguments": [{"name": name, "type": "ascii"}],
        })]);
        assert_eq!(loads.status.code(), Some(0), "{name}: {}", loads.stderr);
        let run = check_config(vec![
            valid_action(),
            json!({
                "id": "bad",
                "title": "Bad",
                "shell": format!("printf '%s' \"${upper}\""),
                "arguments": [{"name": name, "type": "ascii"}],
            }),
        ]);
        assert_config_refused(&run, "actions[1].shell", &[&format!("ACTIOND_ARG_{upper}")]);
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
/// defaults such as `none` as hints; docs/ARCHITECTURE.md "Decisions"), and a start relying
/// on it is refused before anything runs.
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
        let server = Server::start(config_with(vec![keyed(action)]));
        let resp = send(server.addr, &keyed_get("/api/StartActionByGetAndWait/bad"));
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

// ---------------------------------------------------------------------------------------
// Entity values that start with `-`

/// An entity field or an entity-fed choice that starts with `-` never reaches a program as
/// an option: an instance whose field starts an argument of the command is disabled (its
/// press refused, saying which field and how to allow it, and its button greyed with the
/// reason), and an entity-fed choice is refused like a free-text value. Inside a larger word
/// the value is no option and runs; `allowLeadingDash: true` on the action (for its
/// entity's fields) or on the argument (for its entity-fed choices) lets it through.
#[test]
fn an_entity_value_starting_with_a_dash_is_no_option() {
    let files = TempDir::new();
    let hosts = files.path().join("hosts.yaml");
    std::fs::write(
        &hosts,
        "- {key: a, name: \"--help\"}\n- {key: b, name: plain}\n",
    )
    .expect("write hosts");
    let config = json!({
        "entities": [{"file": hosts.to_str().unwrap(), "name": "host"}],
        "actions": [
            {"id": "x", "title": "x {{ .CurrentEntity.name }}", "entity": "host",
             "exec": ["echo", "{{ .CurrentEntity.name }}"]},
            {"id": "s", "title": "s {{ .CurrentEntity.name }}", "entity": "host",
             "shell": "echo \"{{ .CurrentEntity.name }}\""},
            {"id": "inside", "title": "i {{ .CurrentEntity.name }}", "entity": "host",
             "shell": "echo --name={{ .CurrentEntity.name }} /srv/{{ .CurrentEntity.name }}"},
            {"id": "ok", "title": "ok {{ .CurrentEntity.name }}", "entity": "host",
             "allowLeadingDash": true, "exec": ["printf", "%s\\n", "{{ .CurrentEntity.name }}"]},
            {"id": "pick", "title": "pick", "shell": "echo {{ h }}",
             "arguments": [{"name": "h", "entity": "host",
                            "choices": [{"value": "{{ host.name }}"}]}]},
            {"id": "pickok", "title": "pickok", "shell": "printf '%s\\n' {{ h }}",
             "arguments": [{"name": "h", "entity": "host", "allowLeadingDash": true,
                            "choices": [{"value": "{{ host.name }}"}]}]},
        ],
    });
    let server = Server::start(config);
    let run = |id: &str, args: Value| {
        server.call(
            "StartActionAndWait",
            json!({"actionId": id, "arguments": args}),
        )
    };
    for id in ["x-a", "s-a"] {
        let (status, reply) = run(id, json!([]));
        let message = reply["message"].as_str().unwrap_or_default();
        assert_ne!(status, 200, "{id} ran: {reply}");
        assert!(
            message.contains("hosts.yaml")
                && message.contains("\"a\"")
                && message.contains("\"name\"")
                && message.contains("allowLeadingDash: true"),
            "{id}: {message}"
        );
    }
    let stdout = |(status, reply): (u16, Value)| {
        assert_eq!(status, 200, "{reply}");
        reply["logEntry"]["stdout"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    // The same actions run for an instance whose field is plain.
    assert_eq!(stdout(run("x-b", json!([]))), "plain\n");
    assert_eq!(stdout(run("s-b", json!([]))), "plain\n");
    // Inside a larger word the value cannot be an option.
    assert_eq!(
        stdout(run("inside-a", json!([]))),
        "--name=--help /srv/--help\n"
    );
    assert_eq!(stdout(run("ok-a", json!([]))), "--help\n");
    // The entity-fed choice: refused, naming the argument and the setting.
    let (status, reply) = run("pick", json!([{"name": "h", "value": "--help"}]));
    let message = reply["message"].as_str().unwrap_or_default();
    assert_ne!(status, 200, "{reply}");
    assert!(
        message.contains("\"h\"") && message.contains("allowLeadingDash"),
        "{message}"
    );
    assert_eq!(
        stdout(run("pick", json!([{"name": "h", "value": "plain"}]))),
        "plain\n"
    );
    assert_eq!(
        stdout(run("pickok", json!([{"name": "h", "value": "--help"}]))),
        "--help\n"
    );
    // The page shows the disabled instance greyed with its reason, and it cannot be pressed.
    let (_, binding) = server.call("GetActionBinding", json!({"bindingId": "x-a"}));
    assert_eq!(binding["action"]["canExec"], json!(false), "{binding}");
    let (_, binding) = server.call("GetActionBinding", json!({"bindingId": "x-b"}));
    assert_eq!(binding["action"]["canExec"], json!(true), "{binding}");
    // Said in the log once per load, naming the file, the instance and the field.
    let needle = "binding x-a of action x is disabled";
    assert!(server.log_shows(needle));
    assert_eq!(server.log_count(needle), 1);
    assert!(server.log_contains("hosts.yaml, instance \"a\": its field \"name\""));
}
