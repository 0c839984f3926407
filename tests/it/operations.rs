//! The operations of the API, each with its success path and each
//! of its error answers: the start variants and their tracking-id rules, RestartAction,
//! KillAction, ExecutionStatus, GetActionLogs' unknown action, GetReadyz, and the
//! operations that must answer `unimplemented` until their issue lands.
//!
//! What an entry looks like in each state is `processes`' subject; paging is `logs`'.

use serde_json::{Value, json};

use crate::client::{
    Request, SERVICE, assert_entry_shape, assert_error, assert_json_error, is_uuid_v4, send,
};
use crate::harness::{SOON, Server, config_with, keyed, keyed_get, shell_action};

fn server() -> Server {
    Server::start(config_with(vec![
        shell_action("hello", "echo hello"),
        shell_action("other", "echo other"),
        shell_action("sleeper", "sleep 1000"),
        json!({
            "id": "greet",
            "title": "Greet",
            "shell": "echo plain",
            "arguments": [{"name": "who", "type": "ascii", "default": "world"}],
        }),
        keyed(json!({
            "id": "templated",
            "title": "Templated",
            "shell": "echo {{ who }}",
            "arguments": [{"name": "who", "type": "ascii", "default": "world"}],
        })),
    ]))
}

/// The tracking id of a successful start answer.
fn tracking_id(reply: &Value) -> String {
    reply["executionTrackingId"]
        .as_str()
        .unwrap_or_else(|| panic!("no executionTrackingId in {reply}"))
        .to_string()
}

fn assert_call_error(server: &Server, op: &str, body: Value, status: u16, code: &str) -> String {
    let (got, json) = server.call(op, body.clone());
    assert_eq!(got, status, "{op} {body} answered {got}: {json}");
    assert_json_error(&json, code)
}

// ---------------------------------------------------------------------------------------
// StartAction

#[test]
fn start_action_returns_a_uuid_v4_tracking_id() {
    let server = server();
    let id = tracking_id(&server.ok("StartAction", json!({"actionId": "hello"})));
    assert!(is_uuid_v4(&id), "{id:?} is not a UUIDv4");
    let other = tracking_id(&server.ok("StartAction", json!({"actionId": "other"})));
    assert_ne!(id, other);
}

#[test]
fn start_action_entry_exists_as_soon_as_it_returns() {
    let server = server();
    let id = server.start_action("sleeper");
    // No waiting: the entry exists when StartAction returns.
    let entry = server.status(&id);
    assert_entry_shape(&entry);
    assert_eq!(entry["executionTrackingId"], id.as_str());
    assert_eq!(entry["actionId"], "sleeper");
    assert_eq!(entry["executionFinished"], false, "{entry}");
    server.ok("KillAction", json!({"executionTrackingId": id}));
}

#[test]
fn start_action_keeps_a_valid_client_tracking_id() {
    let server = server();
    let long = "a".repeat(64);
    for wanted in ["my.id_1-X", "0", long.as_str()] {
        let reply = server.ok(
            "StartAction",
            json!({"actionId": "hello", "uniqueTrackingId": wanted}),
        );
        assert_eq!(tracking_id(&reply), wanted);
        let entry = server.wait_finished(wanted, SOON);
        assert_eq!(entry["executionTrackingId"], wanted);
    }
}

#[test]
fn start_action_rejects_a_malformed_tracking_id() {
    let server = server();
    let too_long = "a".repeat(65);
    for bad in [
        "has space",
        "a/b",
        "semi;colon",
        "é",
        "tab\t",
        too_long.as_str(),
    ] {
        assert_call_error(
            &server,
            "StartAction",
            json!({"actionId": "hello", "uniqueTrackingId": bad}),
            400,
            "invalid_argument",
        );
    }
    // Nothing was started by the refused calls.
    let logs = server.ok("GetLogs", json!({}));
    assert_eq!(logs["totalCount"], "0", "{logs}");
}

#[test]
fn start_action_rejects_a_reused_tracking_id() {
    let server = server();
    server.ok(
        "StartActionAndWait",
        json!({"actionId": "hello", "uniqueTrackingId": "once"}),
    );
    for op in ["StartAction", "StartActionAndWait"] {
        for action in ["hello", "other"] {
            assert_call_error(
                &server,
                op,
                json!({"actionId": action, "uniqueTrackingId": "once"}),
                409,
                "already_exists",
            );
        }
    }
    // The original entry is untouched.
    assert_eq!(server.status("once")["stdout"], "hello\n");
}

#[test]
fn start_action_of_an_unknown_action_is_not_found() {
    let server = server();
    for op in [
        "StartAction",
        "StartActionAndWait",
        "StartActionByGet",
        "StartActionByGetAndWait",
    ] {
        assert_call_error(&server, op, json!({"actionId": "nosuch"}), 404, "not_found");
    }
}

#[test]
fn start_with_arguments_substitutes_them() {
    let server = server();
    let reply = server.ok(
        "StartActionAndWait",
        json!({"actionId": "templated", "arguments": [{"name": "who", "value": "bob"}]}),
    );
    assert_eq!(reply["logEntry"]["stdout"], "bob\n", "{reply}");
    // A declared argument the command does not use is still declared: accepted.
    let reply = server.ok(
        "StartActionAndWait",
        json!({"actionId": "greet", "arguments": [{"name": "who", "value": "bob"}]}),
    );
    assert_eq!(reply["logEntry"]["stdout"], "plain\n", "{reply}");
}

#[test]
fn every_start_form_applies_the_defaults() {
    let server = server();
    for op in ["StartActionAndWait", "StartActionByGetAndWait"] {
        let reply = server.ok(op, json!({"actionId": "templated"}));
        assert_eq!(reply["logEntry"]["stdout"], "world\n", "{op}: {reply}");
    }
    let resp = send(
        server.addr,
        &keyed_get("/api/StartActionByGetAndWait/templated"),
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json()["logEntry"]["stdout"], "world\n");
}

#[test]
fn a_bad_argument_is_refused_before_anything_runs() {
    let server = server();
    for (args, needle) in [
        (json!([{"name": "who", "value": "bob; id"}]), "who"),
        (json!([{"name": "whom", "value": "bob"}]), "whom"),
    ] {
        for op in ["StartAction", "StartActionAndWait"] {
            let resp = send(
                server.addr,
                &Request::connect(
                    op,
                    json!({"actionId": "templated", "arguments": args})
                        .to_string()
                        .as_bytes(),
                ),
            );
            assert_error(&resp, 400, "invalid_argument");
            assert!(resp.text().contains(needle), "{}", resp.text());
        }
    }
    let logs = server.ok("GetLogs", json!({}));
    assert_eq!(
        logs["totalCount"], "0",
        "a refused start creates no entry: {logs}"
    );
}

#[test]
fn validate_argument_type_answers_valid_and_why() {
    let server = server();
    assert_eq!(
        server.ok(
            "ValidateArgumentType",
            json!({"type": "int", "value": "-12"})
        ),
        json!({"valid": true, "description": ""})
    );
    let bad = server.ok(
        "ValidateArgumentType",
        json!({"type": "int", "value": "12a"}),
    );
    assert_eq!(bad["valid"], false, "{bad}");
    assert!(!bad["description"].as_str().unwrap().is_empty(), "{bad}");
    let unknown = server.ok(
        "ValidateArgumentType",
        json!({"type": "nope", "value": "x"}),
    );
    assert_eq!(unknown["valid"], false, "{unknown}");
}

#[test]
fn start_action_and_wait_returns_the_finished_entry() {
    let server = server();
    let reply = server.ok(
        "StartActionAndWait",
        json!({"actionId": "hello", "uniqueTrackingId": "waited"}),
    );
    let entry = &reply["logEntry"];
    assert_entry_shape(entry);
    assert_eq!(entry["executionTrackingId"], "waited");
    assert_eq!(entry["actionId"], "hello");
    assert_eq!(entry["actionTitle"], "Title hello");
    assert_eq!(entry["stdout"], "hello\n");
    assert_eq!(entry["executionFinished"], true);
}

#[test]
fn start_action_by_get_accepts_a_post_body() {
    let server = server();
    let id = tracking_id(&server.ok("StartActionByGet", json!({"actionId": "hello"})));
    assert!(is_uuid_v4(&id), "{id:?}");
    let entry = server.wait_finished(&id, SOON);
    assert_eq!(entry["stdout"], "hello\n");
}

#[test]
fn start_action_by_get_and_wait_accepts_a_post_body() {
    let server = server();
    let reply = server.ok("StartActionByGetAndWait", json!({"actionId": "hello"}));
    assert_eq!(reply["logEntry"]["stdout"], "hello\n", "{reply}");
    assert_eq!(reply["logEntry"]["executionFinished"], true, "{reply}");
}

// ---------------------------------------------------------------------------------------
// RestartAction

#[test]
fn restart_action_runs_the_same_action_under_a_new_id() {
    let server = server();
    let first = server.run("other");
    let first_id = first["executionTrackingId"].as_str().unwrap_or_default();
    let reply = server.ok("RestartAction", json!({"executionTrackingId": first_id}));
    let second_id = tracking_id(&reply);
    assert_ne!(second_id, first_id);
    assert!(is_uuid_v4(&second_id), "{second_id:?}");
    let second = server.wait_finished(&second_id, SOON);
    assert_eq!(second["actionId"], "other");
    assert_eq!(second["stdout"], "other\n");
    // The original entry is still there, unchanged.
    assert_eq!(server.status(first_id)["stdout"], "other\n");
}

#[test]
fn restart_action_of_an_unknown_execution_is_not_found() {
    let server = server();
    assert_call_error(
        &server,
        "RestartAction",
        json!({"executionTrackingId": "never-started"}),
        404,
        "not_found",
    );
}

// ---------------------------------------------------------------------------------------
// KillAction

#[test]
fn kill_action_of_a_running_execution_kills_it() {
    let server = server();
    let id = server.start_action("sleeper");
    let reply = server.ok("KillAction", json!({"executionTrackingId": id}));
    assert_eq!(reply["executionTrackingId"], id.as_str(), "{reply}");
    assert_eq!(reply["killed"], true, "{reply}");
    assert_eq!(reply["alreadyCompleted"], false, "{reply}");
    assert_eq!(reply["found"], true, "{reply}");
    let entry = server.wait_finished(&id, SOON);
    assert_eq!(entry["exitCode"], -1, "{entry}");
}

#[test]
fn kill_action_of_a_finished_execution_reports_already_completed() {
    let server = server();
    let entry = server.run("hello");
    let id = entry["executionTrackingId"].as_str().unwrap_or_default();
    let reply = server.ok("KillAction", json!({"executionTrackingId": id}));
    assert_eq!(reply["executionTrackingId"], id, "{reply}");
    assert_eq!(reply["killed"], false, "{reply}");
    assert_eq!(reply["alreadyCompleted"], true, "{reply}");
    assert_eq!(reply["found"], true, "{reply}");
    // The entry keeps its real ending.
    assert_eq!(server.status(id)["exitCode"], 0);
}

#[test]
fn kill_action_of_an_unknown_execution_is_not_found() {
    let server = server();
    assert_call_error(
        &server,
        "KillAction",
        json!({"executionTrackingId": "never-started"}),
        404,
        "not_found",
    );
}

// ---------------------------------------------------------------------------------------
// ExecutionStatus

#[test]
fn execution_status_finds_an_execution_by_tracking_id() {
    let server = server();
    server.ok(
        "StartActionAndWait",
        json!({"actionId": "hello", "uniqueTrackingId": "by-id"}),
    );
    server.run("hello");
    let entry = server.status("by-id");
    assert_entry_shape(&entry);
    assert_eq!(entry["executionTrackingId"], "by-id");
}

#[test]
fn execution_status_by_action_id_gives_the_most_recent() {
    let server = server();
    for id in ["run-1", "run-2", "run-3"] {
        server.ok(
            "StartActionAndWait",
            json!({"actionId": "hello", "uniqueTrackingId": id}),
        );
    }
    server.run("other");
    let reply = server.ok("ExecutionStatus", json!({"actionId": "hello"}));
    assert_eq!(reply["logEntry"]["executionTrackingId"], "run-3", "{reply}");
}

#[test]
fn execution_status_prefers_the_tracking_id_over_the_action_id() {
    let server = server();
    server.ok(
        "StartActionAndWait",
        json!({"actionId": "hello", "uniqueTrackingId": "older"}),
    );
    server.run("hello");
    let reply = server.ok(
        "ExecutionStatus",
        json!({"executionTrackingId": "older", "actionId": "hello"}),
    );
    assert_eq!(reply["logEntry"]["executionTrackingId"], "older", "{reply}");
}

#[test]
fn execution_status_without_a_match_is_not_found() {
    let server = server();
    server.run("hello");
    for body in [
        json!({}),
        json!({"executionTrackingId": "never-started"}),
        json!({"actionId": "nosuch"}),
        // A configured action that never ran has no most recent execution.
        json!({"actionId": "other"}),
    ] {
        assert_call_error(&server, "ExecutionStatus", body, 404, "not_found");
    }
}

// ---------------------------------------------------------------------------------------
// Logs and readiness (paging itself is in `logs`)

#[test]
fn get_action_logs_of_an_unknown_action_is_not_found() {
    let server = server();
    assert_call_error(
        &server,
        "GetActionLogs",
        json!({"actionId": "nosuch"}),
        404,
        "not_found",
    );
}

#[test]
fn get_logs_with_a_negative_offset_is_invalid() {
    let server = server();
    for op in ["GetLogs", "GetActionLogs"] {
        for offset in [json!(-1), json!("-5")] {
            assert_call_error(
                &server,
                op,
                json!({"actionId": "hello", "startOffset": offset}),
                400,
                "invalid_argument",
            );
        }
    }
}

#[test]
fn get_readyz_reports_ok() {
    let server = server();
    assert_eq!(server.ok("GetReadyz", json!({})), json!({"status": "OK"}));
}

// ---------------------------------------------------------------------------------------
// Not yet implemented

/// Every operation of the API's service, sent with its POST form.
const ALL_UNARY: [&str; 24] = [
    "StartAction",
    "StartActionAndWait",
    "StartActionByGet",
    "StartActionByGetAndWait",
    "RestartAction",
    "KillAction",
    "ExecutionStatus",
    "GetLogs",
    "GetActionLogs",
    "GetDashboard",
    "GetActionBinding",
    "GetEntities",
    "GetEntity",
    "ValidateArgumentType",
    "LocalUserLogin",
    "Logout",
    "WhoAmI",
    "PasswordHash",
    "Init",
    "GetReadyz",
    "GetDiagnostics",
    "SosReport",
    "DumpVars",
    "DumpPublicIdActionMap",
];

/// No operation of the API answers `unimplemented` (EventStream,
/// the 25th, is streaming and has its own tests).
#[test]
fn every_operation_of_the_seed_is_implemented() {
    let server = server();
    for op in ALL_UNARY {
        for prefix in [SERVICE, "/api/"] {
            let resp = send(server.addr, &Request::connect_at(prefix, op, b"{}"));
            assert_ne!(resp.status, 501, "{prefix}{op}: {}", resp.text());
            assert!(
                !resp.text().contains("unimplemented"),
                "{prefix}{op}: {}",
                resp.text()
            );
        }
    }
}

#[test]
fn get_whoami_answers_like_the_post_form() {
    let server = server();
    let resp = send(server.addr, &Request::get("/api/WhoAmI"));
    assert_eq!(resp.status, 200, "{}", resp.text());
    let guest = json!({"authenticatedUser": "guest", "usergroup": "guest", "provider": "system", "acls": [], "sid": ""});
    assert_eq!(resp.json(), guest);
    assert_eq!(server.ok("WhoAmI", json!({})), guest);
}

#[test]
fn event_stream_ends_with_one_end_stream_envelope_at_its_deadline() {
    let server = server();
    // A well-formed Connect streaming request: one envelope (flag 0, length 2) holding {}.
    let mut envelope = vec![0u8, 0, 0, 0, 2];
    envelope.extend_from_slice(b"{}");
    let req = Request::post(&format!("{SERVICE}EventStream"))
        .header("Content-Type", "application/connect+json")
        .header("Connect-Protocol-Version", "1")
        .header("Connect-Timeout-Ms", "300")
        .body(&envelope);
    let resp = send(server.addr, &req);
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(
        resp.header("content-type"),
        Some("application/connect+json")
    );
    let body = &resp.body;
    assert_eq!(body[0], 0x02, "one end-stream envelope: {body:?}");
    let len = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
    assert_eq!(len, body.len() - 5, "exactly one envelope");
    let end: serde_json::Value = serde_json::from_slice(&body[5..]).unwrap();
    assert_eq!(end["error"]["code"], "deadline_exceeded", "{end}");
}

#[test]
fn the_default_dashboard_links_every_visible_action() {
    let server = server();
    let reply = server.ok("GetDashboard", json!({"title": ""}));
    assert_eq!(reply["title"], "Actions");
    let fieldset = &reply["dashboard"]["contents"][0];
    assert_eq!(
        (fieldset["title"].as_str(), fieldset["type"].as_str()),
        (Some("Actions"), Some("fieldset"))
    );
    let ids: Vec<&str> = fieldset["contents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["action"]["bindingId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["hello", "other", "sleeper", "greet", "templated"]);
    assert_eq!(
        server.ok("GetDashboard", json!({"title": "default"})),
        reply
    );
    let resp = send(
        server.addr,
        &Request::connect("GetDashboard", br#"{"title":"nope"}"#),
    );
    assert_error(&resp, 404, "not_found");
}

#[test]
fn get_action_binding_gives_the_action_message() {
    let server = server();
    let action = &server.ok("GetActionBinding", json!({"bindingId": "greet"}))["action"];
    assert_eq!(action["bindingId"], "greet");
    assert_eq!(action["canExec"], true);
    assert_eq!(action["timeout"], 30);
    assert_eq!(action["arguments"][0]["name"], "who");
    assert_eq!(action["arguments"][0]["defaultValue"], "world");
    let resp = send(
        server.addr,
        &Request::connect("GetActionBinding", br#"{"bindingId":"nope"}"#),
    );
    assert_error(&resp, 404, "not_found");
}

#[test]
fn diagnostics_answer_and_dumps_name_their_flags() {
    // Diagnostics need the showDiagnostics policy, off by default.
    let mut config = config_with(vec![shell_action("hello", "echo hello")]);
    config["defaultPolicy"] = json!({"showDiagnostics": true});
    let server = Server::start(config);
    let diag = server.ok("GetDiagnostics", json!({}));
    assert!(
        diag["SshFoundKey"]
            .as_str()
            .unwrap()
            .contains(".ssh/id_rsa"),
        "{diag}"
    );
    assert!(
        diag["SshFoundConfig"]
            .as_str()
            .unwrap()
            .contains(".ssh/config"),
        "{diag}"
    );
    let vars = server.ok("DumpVars", json!({}));
    assert!(
        vars["alert"]
            .as_str()
            .unwrap()
            .contains("insecureAllowDumpVars"),
        "{vars}"
    );
    assert_eq!(vars["contents"], json!({}));
    let map = server.ok("DumpPublicIdActionMap", json!({}));
    assert!(
        map["alert"]
            .as_str()
            .unwrap()
            .contains("insecureAllowDumpActionMap"),
        "{map}"
    );
    let sos = server.ok("SosReport", json!({}));
    assert!(
        sos["alert"]
            .as_str()
            .unwrap()
            .contains("insecureAllowDumpSos"),
        "{sos}"
    );
}

#[test]
fn the_report_names_the_address_actually_listened_on() {
    // The config asks for 1337, the command line for 127.0.0.1:0: the report must say where
    // the service is, not what the file says.
    let server = Server::start(json!({
        "listenAddressSingleHTTPFrontend": "0.0.0.0:1337",
        "insecureAllowDumpSos": true,
        "defaultPolicy": {"showDiagnostics": true},
        "actions": [{"id": "a", "title": "A", "shell": "true"}],
    }));
    let sos = server.ok("SosReport", json!({}));
    let report = sos["alert"].as_str().unwrap();
    assert!(
        report.contains(&format!("listen: {}\n", server.addr)),
        "{report}"
    );
}
