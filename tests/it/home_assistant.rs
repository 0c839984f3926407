//! The Home Assistant guide (docs/home-assistant.md): the two requests it makes Home
//! Assistant send, sent here byte for byte as the guide shows them (method, path, headers,
//! body) to the real binary running the guide's actiond config, and the answers read the way
//! the guide's templates read them. The test first checks that the guide still shows exactly
//! these requests, so the guide and the test cannot drift apart.

use serde_json::{Value, json};

use crate::client::{Request, Response, send};
use crate::harness::Server;
use crate::identity::sha256_hex;

/// What `actiond gen-token` could have printed.
const TOKEN: &str = "Hk3vXq0b7a2Lw9Rz5Jt1Nc8Ue4Gy6Pd";

/// The lines of the guide's Home Assistant YAML that define the two requests.
const GUIDE: &[&str] = &[
    "url: \"http://pi.local:1337/api/StartActionByGetAndWait/garageDoor\"",
    "method: get",
    "authorization: !secret actiond_token",
    "resource: \"http://pi.local:1337/api/ExecutionStatus\"",
    "method: POST",
    "content-type: application/json",
    "connect-protocol-version: \"1\"",
    "payload: '{\"actionId\":\"garageDoor\"}'",
    "value_template: \"{{ value_json.logEntry.exitCode }}\"",
    "json_attributes_path: \"$.logEntry\"",
    "json_attributes: [stdout, stderr, datetimeFinished, timedOut, blocked]",
    "actiond_token: \"Bearer <token>\"",
    "{% if result.status == 200 and result.content.logEntry.exitCode == 0 %}",
    "Done: {{ result.content.logEntry.stdout }}",
];

/// `secrets.yaml`'s `actiond_token`, as the guide says to write it.
fn secret() -> String {
    format!("Bearer {TOKEN}")
}

/// The `rest_command` request: GET, the URL's path, the one header the guide sets.
fn rest_command(secret: &str) -> Request {
    Request::get("/api/StartActionByGetAndWait/garageDoor").header("authorization", secret)
}

/// The REST sensor's request: POST, the resource's path, its three headers and its payload.
fn sensor(secret: &str) -> Request {
    Request::post("/api/ExecutionStatus")
        .header("authorization", secret)
        .header("content-type", "application/json")
        .header("connect-protocol-version", "1")
        .body(br#"{"actionId":"garageDoor"}"#)
}

/// The guide's actiond config, with a harmless command.
fn server() -> Server {
    Server::start(json!({
        "authApiTokens": [{"name": "home-assistant", "sha256": sha256_hex(TOKEN),
                           "username": "home-assistant", "usergroup": "automation"}],
        "defaultPermissions": {"view": false, "exec": false, "logs": false, "kill": false},
        "accessControlLists": [{"name": "automation-runs", "matchUsergroups": ["automation"],
                                "permissions": {"view": true, "exec": true, "logs": true}}],
        "actions": [{"id": "garageDoor", "title": "Garage door", "shell": "echo toggled",
                     "acls": ["automation-runs"]}],
    }))
}

#[test]
fn the_guide_shows_the_requests_this_test_sends() {
    let guide = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/home-assistant.md"
    ))
    .expect("docs/home-assistant.md");
    let section = guide
        .split("\n## Without a broker")
        .nth(1)
        .expect("a section \"Without a broker\"");
    for line in GUIDE {
        assert!(
            section.contains(line),
            "docs/home-assistant.md no longer shows {line:?}"
        );
    }
}

/// What the script's template reads: `result.status` and `result.content.logEntry`.
fn content(resp: &Response) -> Value {
    resp.json()
}

#[test]
fn the_button_runs_the_action_and_the_sensor_reads_the_result() {
    let server = server();
    let secret = secret();

    let pressed = send(server.addr, &rest_command(&secret));
    assert_eq!(pressed.status, 200, "{}", pressed.text());
    assert_eq!(pressed.header("content-type"), Some("application/json"));
    let entry = &content(&pressed)["logEntry"];
    assert_eq!(entry["exitCode"], 0);
    assert_eq!(entry["stdout"], "toggled\n");
    assert_eq!(entry["executionFinished"], true);
    assert_eq!(entry["user"], "home-assistant");

    let read = send(server.addr, &sensor(&secret));
    assert_eq!(read.status, 200, "{}", read.text());
    let body = content(&read);
    // value_template and json_attributes_path / json_attributes.
    assert_eq!(body["logEntry"]["exitCode"], 0);
    for attribute in [
        "stdout",
        "stderr",
        "datetimeFinished",
        "timedOut",
        "blocked",
    ] {
        assert!(
            body["logEntry"].get(attribute).is_some(),
            "{attribute} missing: {body}"
        );
    }
    assert_eq!(
        body["logEntry"]["executionTrackingId"],
        entry["executionTrackingId"]
    );
}

#[test]
fn a_wrong_token_or_a_missing_one_is_a_clear_refusal() {
    let server = server();
    let resp = send(server.addr, &rest_command("Bearer not-the-token"));
    assert_eq!(resp.status, 401, "{}", resp.text());
    assert_eq!(resp.json()["code"], "unauthenticated");
    // Without the word Bearer (or without the header) the token is not read: Home
    // Assistant is the guest, who may not run it here.
    for resp in [
        send(server.addr, &rest_command(TOKEN)),
        send(
            server.addr,
            &Request::get("/api/StartActionByGetAndWait/garageDoor"),
        ),
    ] {
        assert_eq!(resp.status, 403, "{}", resp.text());
        assert_eq!(resp.json()["code"], "permission_denied");
    }
    let logs = server.ok("GetLogs", json!({"startOffset": 0}));
    assert_eq!(logs["totalCount"], "0", "nothing ran: {logs}");
}
