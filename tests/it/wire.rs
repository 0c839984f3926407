//! The transport contract of routes and path styles, the Connect unary header
//! and body rules with the status of each error, body limits (plain, chunked and gzip), the
//! lenient JSON input rules, the every-field output rule, and keep-alive connections.
//!
//! Each test names one rule. They use a small `Request` builder so that each can break
//! exactly one thing about an otherwise valid call.

use std::io::Write;
use std::time::Duration;

use flate2::Compression;
use flate2::write::GzEncoder;
use serde_json::json;

use crate::client::{Request, SERVICE, assert_entry_shape, assert_error, is_uuid_v4, send};
use crate::harness::{Server, config_with, keyed, keyed_get, shell_action, started_id};

/// The three POST path prefixes the API answers at.
const PREFIXES: [&str; 3] = [SERVICE, "/api/svc.api.v1.ActionApiService/", "/api/"];

fn server() -> Server {
    Server::start(config_with(vec![
        keyed(shell_action("hello", "echo hello")),
        keyed(shell_action("my-action_1", "echo decoded")),
    ]))
}

fn server_with_body_limit(limit: usize) -> Server {
    let mut config = config_with(vec![shell_action("hello", "echo hello")]);
    config["maxRequestBodyBytes"] = json!(limit);
    Server::start(config)
}

/// A JSON object of exactly `len` bytes (at least 10): `{"pad":"xxx…"}`. Unknown fields are
/// ignored, so it is a valid request for any operation without required fields.
fn padded_json(len: usize) -> Vec<u8> {
    assert!(len >= 10);
    format!("{{\"pad\":\"{}\"}}", "x".repeat(len - 10)).into_bytes()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(data).expect("gzip write");
    encoder.finish().expect("gzip finish")
}

fn readyz_call() -> Request {
    Request::connect("GetReadyz", b"{}")
}

// ---------------------------------------------------------------------------------------
// Routes

#[test]
fn canonical_connect_path_answers() {
    let server = server();
    let resp = send(
        server.addr,
        &Request::connect_at(SERVICE, "GetReadyz", b"{}"),
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
    let content_type = resp.header("Content-Type").unwrap_or_default();
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    assert_eq!(resp.json(), json!({"status": "OK"}));
}

#[test]
fn api_prefixed_connect_path_answers() {
    let server = server();
    let req = Request::connect_at("/api/svc.api.v1.ActionApiService/", "GetReadyz", b"{}");
    let resp = send(server.addr, &req);
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json(), json!({"status": "OK"}));
}

#[test]
fn short_api_path_answers() {
    let server = server();
    let resp = send(
        server.addr,
        &Request::connect_at("/api/", "GetReadyz", b"{}"),
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json(), json!({"status": "OK"}));
}

#[test]
fn every_path_style_starts_an_action() {
    let server = server();
    for prefix in PREFIXES {
        let req = Request::connect_at(prefix, "StartActionAndWait", br#"{"actionId":"hello"}"#);
        let resp = send(server.addr, &req);
        assert_eq!(resp.status, 200, "{prefix}: {}", resp.text());
        let entry = &resp.json()["logEntry"];
        assert_eq!(entry["stdout"], "hello\n", "{prefix}: {entry}");
        assert_eq!(entry["exitCode"], 0, "{prefix}: {entry}");
    }
}

#[test]
fn readyz_answers_plain_text_ok() {
    let server = server();
    let resp = send(server.addr, &Request::get("/readyz"));
    assert_eq!(resp.status, 200);
    assert_eq!(resp.text().trim_end(), "OK");
    let content_type = resp.header("Content-Type").unwrap_or_default();
    assert!(content_type.starts_with("text/plain"), "{content_type}");
}

#[test]
fn get_start_percent_decodes_the_action_id() {
    let server = server();
    // `%2D` is `-` and `%5F` is `_`: the id must be decoded before it is looked up.
    let resp = send(
        server.addr,
        &keyed_get("/api/StartActionByGet/my%2Daction%5F1"),
    );
    let id = started_id(&resp);
    let entry = server.wait_finished(&id, Duration::from_secs(10));
    assert_eq!(entry["actionId"], "my-action_1");
    assert_eq!(entry["stdout"], "decoded\n");
}

#[test]
fn get_start_with_its_link_key_needs_no_headers_or_body() {
    let server = server();
    let resp = send(server.addr, &keyed_get("/api/StartActionByGet/hello"));
    assert_eq!(resp.status, 200, "{}", resp.text());
    let json = resp.json();
    assert!(
        is_uuid_v4(json["executionTrackingId"].as_str().unwrap_or_default()),
        "{json}"
    );
}

#[test]
fn get_start_and_wait_returns_the_entry() {
    let server = server();
    let resp = send(
        server.addr,
        &keyed_get("/api/StartActionByGetAndWait/my%2daction_1"),
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
    let entry = &resp.json()["logEntry"];
    assert_entry_shape(entry);
    assert_eq!(entry["actionId"], "my-action_1");
    assert_eq!(entry["stdout"], "decoded\n");
    assert_eq!(entry["exitCode"], 0);
    assert_eq!(entry["executionFinished"], true);
}

#[test]
fn get_start_of_unknown_action_is_not_found() {
    let server = server();
    let resp = send(server.addr, &Request::get("/api/StartActionByGet/nosuch"));
    assert_error(&resp, 404, "not_found");
    let resp = send(
        server.addr,
        &Request::get("/api/StartActionByGetAndWait/nosuch"),
    );
    assert_error(&resp, 404, "not_found");
}

#[test]
fn unknown_operation_is_404_unimplemented_naming_it() {
    let server = server();
    for prefix in PREFIXES {
        let req = Request::connect_at(prefix, "NoSuchOperation", b"{}");
        let resp = send(server.addr, &req);
        let message = assert_error(&resp, 404, "unimplemented");
        assert!(
            message.contains("NoSuchOperation"),
            "{prefix}: message {message:?} does not name the operation"
        );
    }
}

#[test]
fn wrong_method_on_an_operation_is_405_with_allow() {
    let server = server();
    for method in ["GET", "PUT", "DELETE"] {
        let req = Request::new(method, &format!("{SERVICE}StartAction"));
        let resp = send(server.addr, &req);
        assert_eq!(resp.status, 405, "{method}: {}", resp.text());
        let allow = resp.header("Allow").unwrap_or_default();
        assert!(allow.contains("POST"), "{method}: Allow is {allow:?}");
    }
    let resp = send(server.addr, &Request::get("/api/StartAction"));
    assert_eq!(resp.status, 405, "{}", resp.text());
    assert!(resp.header("Allow").unwrap_or_default().contains("POST"));
}

#[test]
fn wrong_method_on_readyz_is_405_with_allow() {
    let server = server();
    let resp = send(server.addr, &Request::post("/readyz").body(b""));
    assert_eq!(resp.status, 405, "{}", resp.text());
    let allow = resp.header("Allow").unwrap_or_default();
    assert!(allow.contains("GET"), "Allow is {allow:?}");
}

#[test]
fn wrong_method_on_a_get_start_route_is_405_with_allow() {
    let server = server();
    for path in [
        "/api/StartActionByGet/hello",
        "/api/StartActionByGetAndWait/hello",
    ] {
        let resp = send(server.addr, &Request::new("DELETE", path));
        assert_eq!(resp.status, 405, "{path}: {}", resp.text());
        let allow = resp.header("Allow").unwrap_or_default();
        assert!(allow.contains("GET"), "{path}: Allow is {allow:?}");
    }
}

#[test]
fn unknown_paths_are_404() {
    let server = server();
    for path in [
        "/no/such/path",
        "/svc.api.v2.ActionApiService/StartAction",
        "/readyz/extra",
    ] {
        let resp = send(server.addr, &Request::get(path));
        assert_eq!(resp.status, 404, "GET {path}: {}", resp.text());
    }
    let req = Request::connect_at("/other/", "StartAction", br#"{"actionId":"hello"}"#);
    let resp = send(server.addr, &req);
    assert_eq!(resp.status, 404, "{}", resp.text());
}

// ---------------------------------------------------------------------------------------
// Request headers

#[test]
fn wrong_content_type_is_415() {
    let server = server();
    for content_type in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/x-protobuf",
        "application/connect+json",
        "application/connect+proto",
    ] {
        let req = readyz_call().set_header("Content-Type", content_type);
        let resp = send(server.addr, &req);
        assert_error(&resp, 415, "unknown");
    }
}

#[test]
fn missing_content_type_is_415() {
    let server = server();
    let resp = send(server.addr, &readyz_call().without_header("Content-Type"));
    assert_error(&resp, 415, "unknown");
}

#[test]
fn content_type_parameters_and_case_are_accepted() {
    let server = server();
    for content_type in ["application/json; charset=utf-8", "Application/JSON"] {
        let req = readyz_call().set_header("Content-Type", content_type);
        let resp = send(server.addr, &req);
        assert_eq!(resp.status, 200, "{content_type}: {}", resp.text());
    }
}

#[test]
fn missing_protocol_version_is_400_naming_the_header() {
    let server = server();
    let resp = send(
        server.addr,
        &readyz_call().without_header("Connect-Protocol-Version"),
    );
    let message = assert_error(&resp, 400, "invalid_argument");
    assert!(
        message.contains("Connect-Protocol-Version"),
        "message {message:?} does not name the header"
    );
}

#[test]
fn protocol_version_other_than_1_is_400() {
    let server = server();
    for version in ["2", "0", "one"] {
        let req = readyz_call().set_header("Connect-Protocol-Version", version);
        let resp = send(server.addr, &req);
        assert_error(&resp, 400, "invalid_argument");
    }
}

#[test]
fn malformed_connect_timeout_is_400() {
    let server = server();
    for value in ["abc", "", "-1", "+5", "1.5", "12345678901", "0x10"] {
        let req = readyz_call().header("Connect-Timeout-Ms", value);
        let resp = send(server.addr, &req);
        assert_eq!(
            resp.status,
            400,
            "Connect-Timeout-Ms {value:?}: {}",
            resp.text()
        );
        assert_error(&resp, 400, "invalid_argument");
    }
}

#[test]
fn well_formed_connect_timeout_is_accepted() {
    let server = server();
    for value in ["5000", "9999999999"] {
        let req = readyz_call().header("Connect-Timeout-Ms", value);
        let resp = send(server.addr, &req);
        assert_eq!(
            resp.status,
            200,
            "Connect-Timeout-Ms {value:?}: {}",
            resp.text()
        );
    }
}

#[test]
fn waiting_start_past_its_deadline_is_504_and_the_execution_goes_on() {
    // The command cannot finish before the test creates `go`, so the 504 cannot be a race
    // with a fast machine.
    let server = Server::start(config_with(vec![shell_action(
        "gated",
        "while [ ! -e go ]; do sleep 0.02; done; echo done",
    )]));
    let req = Request::connect(
        "StartActionAndWait",
        br#"{"actionId":"gated","uniqueTrackingId":"deadline-1"}"#,
    )
    .header("Connect-Timeout-Ms", "200");
    let resp = send(server.addr, &req);
    assert_error(&resp, 504, "deadline_exceeded");
    let entry = server.status("deadline-1");
    assert_eq!(entry["executionFinished"], false, "{entry}");
    std::fs::write(server.path("go"), "").expect("write go");
    let entry = server.wait_finished("deadline-1", Duration::from_secs(10));
    assert_eq!(entry["stdout"], "done\n", "{entry}");
    assert_eq!(entry["exitCode"], 0, "{entry}");
    assert_eq!(entry["timedOut"], false, "{entry}");
}

// ---------------------------------------------------------------------------------------
// Request bodies

#[test]
fn empty_body_is_400() {
    let server = server();
    let resp = send(server.addr, &Request::connect("GetReadyz", b""));
    assert_error(&resp, 400, "invalid_argument");
}

#[test]
fn body_over_the_default_limit_is_429() {
    let server = server();
    let resp = send(
        server.addr,
        &Request::connect("GetReadyz", &padded_json(70_000)),
    );
    assert_error(&resp, 429, "resource_exhausted");
}

#[test]
fn body_at_the_configured_limit_is_accepted() {
    let server = server_with_body_limit(1024);
    let resp = send(
        server.addr,
        &Request::connect("GetReadyz", &padded_json(1024)),
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
}

#[test]
fn body_over_the_configured_limit_is_429() {
    let server = server_with_body_limit(1024);
    let resp = send(
        server.addr,
        &Request::connect("GetReadyz", &padded_json(1025)),
    );
    assert_error(&resp, 429, "resource_exhausted");
}

#[test]
fn chunked_body_is_accepted() {
    let server = server();
    let req = Request::connect("StartActionAndWait", b"").chunked(vec![
        b"{\"actionId\"".to_vec(),
        b":\"hel".to_vec(),
        b"lo\"}".to_vec(),
    ]);
    let resp = send(server.addr, &req);
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json()["logEntry"]["stdout"], "hello\n");
}

#[test]
fn chunked_body_over_the_limit_is_429() {
    let server = server();
    // No Content-Length: the limit must be enforced while the chunks stream in.
    let body = padded_json(70_000);
    let chunks = body.chunks(4096).map(<[u8]>::to_vec).collect();
    let resp = send(
        server.addr,
        &Request::connect("GetReadyz", b"").chunked(chunks),
    );
    assert_error(&resp, 429, "resource_exhausted");
}

#[test]
fn gzip_body_is_accepted() {
    let server = server();
    let req = Request::connect("StartActionAndWait", &gzip(br#"{"actionId":"hello"}"#))
        .header("Content-Encoding", "gzip");
    let resp = send(server.addr, &req);
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json()["logEntry"]["stdout"], "hello\n");
}

#[test]
fn gzip_body_over_the_limit_after_decompression_is_429() {
    let server = server();
    // 200 KB of JSON whitespace compresses to a few hundred bytes: only the decompressed
    // size may count.
    let mut json = b"{}".to_vec();
    json.extend(std::iter::repeat_n(b' ', 200_000));
    let compressed = gzip(&json);
    assert!(compressed.len() < 4096);
    let req = Request::connect("GetReadyz", &compressed).header("Content-Encoding", "gzip");
    let resp = send(server.addr, &req);
    assert_error(&resp, 429, "resource_exhausted");
}

#[test]
fn unsupported_content_encoding_is_501() {
    let server = server();
    for encoding in ["br", "zstd"] {
        let req = readyz_call().header("Content-Encoding", encoding);
        let resp = send(server.addr, &req);
        assert_error(&resp, 501, "unimplemented");
    }
}

// ---------------------------------------------------------------------------------------
// JSON input

#[test]
fn snake_case_field_names_are_accepted() {
    let server = server();
    let reply = server.ok(
        "StartAction",
        json!({"action_id": "hello", "unique_tracking_id": "snake-1"}),
    );
    assert_eq!(reply["executionTrackingId"], "snake-1");
    let reply = server.ok(
        "ExecutionStatus",
        json!({"execution_tracking_id": "snake-1"}),
    );
    assert_eq!(reply["logEntry"]["actionId"], "hello");
}

#[test]
fn unknown_fields_are_ignored() {
    let server = server();
    let reply = server.ok(
        "StartActionAndWait",
        json!({"actionId": "hello", "futureField": {"nested": [1, "two", null]}, "x": 1}),
    );
    assert_eq!(reply["logEntry"]["stdout"], "hello\n");
}

#[test]
fn null_means_the_default() {
    let server = server();
    let reply = server.ok(
        "StartAction",
        json!({"actionId": "hello", "uniqueTrackingId": null, "arguments": null}),
    );
    let id = reply["executionTrackingId"].as_str().unwrap_or_default();
    assert!(
        is_uuid_v4(id),
        "null uniqueTrackingId must give a UUID, got {reply}"
    );
    let reply = server.ok("GetLogs", json!({"startOffset": null}));
    assert_eq!(reply["startOffset"], "0");
}

#[test]
fn int64_is_accepted_as_number_or_string() {
    let server = server();
    for offset in [json!(1), json!("1")] {
        let reply = server.ok("GetLogs", json!({"startOffset": offset}));
        assert_eq!(reply["startOffset"], "1", "startOffset {offset}: {reply}");
    }
}

#[test]
fn malformed_json_is_400() {
    let server = server();
    for body in [
        &b"{\"actionId\":"[..],
        b"not json",
        b"{\"actionId\":\"hello\"} trailing",
    ] {
        let resp = send(server.addr, &Request::connect("StartAction", body));
        assert_error(&resp, 400, "invalid_argument");
    }
}

#[test]
fn non_object_body_is_400() {
    let server = server();
    for body in [&b"[]"[..], b"\"hello\"", b"null", b"42"] {
        let resp = send(server.addr, &Request::connect("GetReadyz", body));
        assert_eq!(
            resp.status,
            400,
            "body {:?}: {}",
            String::from_utf8_lossy(body),
            resp.text()
        );
        assert_error(&resp, 400, "invalid_argument");
    }
}

#[test]
fn wrong_field_type_is_400_naming_the_field() {
    let server = server();
    let cases = [
        ("StartAction", json!({"actionId": 5}), "actionid"),
        ("StartAction", json!({"action_id": ["hello"]}), "action"),
        ("GetLogs", json!({"startOffset": true}), "startoffset"),
        ("GetLogs", json!({"startOffset": "ten"}), "startoffset"),
        ("GetLogs", json!({"startOffset": 1.5}), "startoffset"),
    ];
    for (op, body, field) in cases {
        let req = Request::connect(op, body.to_string().as_bytes());
        let resp = send(server.addr, &req);
        let message = assert_error(&resp, 400, "invalid_argument");
        // Either spelling of the name counts: `actionId` or `action_id`.
        let normalised = message.to_ascii_lowercase().replace('_', "");
        assert!(
            normalised.contains(field),
            "{op} {body}: message {message:?} does not name the field"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Output

#[test]
fn success_has_every_field_with_int64_as_strings() {
    let server = server();
    server.run("hello");
    let reply = server.ok("GetLogs", json!({}));
    assert_eq!(reply["countRemaining"], "0", "{reply}");
    assert_eq!(reply["pageSize"], "10", "{reply}");
    assert_eq!(reply["totalCount"], "1", "{reply}");
    assert_eq!(reply["startOffset"], "0", "{reply}");
    let entry = &reply["logs"][0];
    assert_entry_shape(entry);
    // exitCode is int32: a JSON number, present even when it is 0.
    assert_eq!(entry["exitCode"], json!(0), "{entry}");
    assert_eq!(entry["tags"], json!([]), "{entry}");
}

#[test]
fn kill_answer_has_every_field() {
    let server = server();
    let entry = server.run("hello");
    let id = entry["executionTrackingId"].as_str().unwrap_or_default();
    let reply = server.ok("KillAction", json!({"executionTrackingId": id}));
    for field in ["killed", "alreadyCompleted", "found"] {
        assert!(reply[field].is_boolean(), "{field} missing in {reply}");
    }
    assert_eq!(reply["executionTrackingId"], id);
}

// ---------------------------------------------------------------------------------------
// Connections

#[test]
fn keep_alive_connection_carries_two_requests() {
    let server = server();
    let mut conn = server.conn();
    let first = conn.send(&readyz_call());
    assert_eq!(first.status, 200, "{}", first.text());
    let second = conn.send(&Request::connect(
        "StartActionAndWait",
        br#"{"actionId":"hello"}"#,
    ));
    assert_eq!(second.status, 200, "{}", second.text());
    assert_eq!(second.json()["logEntry"]["stdout"], "hello\n");
}

#[test]
fn keep_alive_connection_survives_an_error_answer() {
    let server = server();
    let mut conn = server.conn();
    let first = conn.send(&Request::connect(
        "StartAction",
        br#"{"actionId":"nosuch"}"#,
    ));
    assert_error(&first, 404, "not_found");
    let second = conn.send(&Request::get("/readyz"));
    assert_eq!(second.status, 200);
    let third = conn.send(&readyz_call());
    assert_eq!(third.status, 200, "{}", third.text());
}

/// Regression: answers decided before the body was read (unknown operation, 415, missing
/// protocol header) closed the connection while the client was still sending, so real
/// clients (connect-node) saw EPIPE instead of the answer.
#[test]
fn answers_decided_without_the_body_still_consume_it() {
    let server = Server::start(config_with(vec![shell_action("noop", "true")]));
    let big = vec![b' '; 60 * 1024];
    let mut conn = server.conn();
    let unknown = Request::connect("NoSuchOperation", &big);
    let resp = conn.send(&unknown);
    assert_eq!(resp.status, 404, "{}", resp.text());
    let no_version = Request::post("/api/GetLogs")
        .header("Content-Type", "application/json")
        .body(&big);
    assert_eq!(conn.send(&no_version).status, 400);
    // The same connection still works: the body was consumed, not left in the socket.
    let ok = Request::connect("GetReadyz", b"{}");
    assert_eq!(conn.send(&ok).status, 200);
}
