//! The binary protobuf codec and gRPC-Web against the real binary, with bodies encoded here by
//! hand (a protobuf writer and reader of a few lines, independent of actiond's): Connect unary
//! calls in `application/proto` answered in it, errors still Connect's JSON, unknown fields
//! skipped, gzip bodies, hostile bodies refused; EventStream in `application/connect+proto`
//! with its end-stream still JSON; gRPC-Web in both codecs and in text, its trailers in the
//! body, its errors as `grpc-status`; gRPC itself refused over HTTP/1.1 with the reason.
//! The real clients (buf curl, the Python client's default codec) are stages of
//! `scripts/test.sh`.

use std::io::Write;
use std::time::Duration;

use serde_json::{Value, json};

use crate::client::{Request, Response, SERVICE, assert_error, send};
use crate::events::{EventStream, Next, envelope};
use crate::harness::{Server, config_with, shell_action};

// ---------------------------------------------------------------------------------------
// A protobuf writer and reader for the tests

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length-delimited field (a string or a message).
fn field(out: &mut Vec<u8>, number: u64, bytes: &[u8]) {
    varint(out, number << 3 | 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn int_field(out: &mut Vec<u8>, number: u64, v: u64) {
    varint(out, number << 3);
    varint(out, v);
}

/// StartActionRequest / StartActionAndWaitRequest: action_id 1, arguments 2 (name 1,
/// value 2).
fn start_request(action: &str, arguments: &[(&str, &str)]) -> Vec<u8> {
    let mut out = Vec::new();
    field(&mut out, 1, action.as_bytes());
    for (name, value) in arguments {
        let mut arg = Vec::new();
        field(&mut arg, 1, name.as_bytes());
        field(&mut arg, 2, value.as_bytes());
        field(&mut out, 2, &arg);
    }
    out
}

/// A decoded field: its number and its value (a varint, or the bytes of a length-delimited
/// one).
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Int(u64),
    Bytes(Vec<u8>),
}

fn read_varint(b: &[u8], i: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let byte = b[*i];
        *i += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return v;
        }
        shift += 7;
    }
}

/// The fields of a message, in order (only the wire types the API uses).
fn fields(b: &[u8]) -> Vec<(u64, Val)> {
    let (mut i, mut out) = (0, Vec::new());
    while i < b.len() {
        let tag = read_varint(b, &mut i);
        match tag & 7 {
            0 => out.push((tag >> 3, Val::Int(read_varint(b, &mut i)))),
            2 => {
                let n = read_varint(b, &mut i) as usize;
                out.push((tag >> 3, Val::Bytes(b[i..i + n].to_vec())));
                i += n;
            }
            w => panic!("wire type {w} in {b:?}"),
        }
    }
    out
}

fn get(b: &[u8], number: u64) -> Option<Val> {
    fields(b)
        .into_iter()
        .rev()
        .find(|(n, _)| *n == number)
        .map(|(_, v)| v)
}

fn text(b: &[u8], number: u64) -> String {
    match get(b, number) {
        Some(Val::Bytes(s)) => String::from_utf8(s).unwrap(),
        None => String::new(),
        other => panic!("field {number} is {other:?}"),
    }
}

fn message(b: &[u8], number: u64) -> Vec<u8> {
    match get(b, number) {
        Some(Val::Bytes(m)) => m,
        other => panic!("field {number} is no message: {other:?}"),
    }
}

fn int(b: &[u8], number: u64) -> u64 {
    match get(b, number) {
        Some(Val::Int(v)) => v,
        None => 0,
        other => panic!("field {number} is {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// Requests

fn proto_call(op: &str, body: &[u8]) -> Request {
    Request::post(&format!("{SERVICE}{op}"))
        .header("Content-Type", "application/proto")
        .header("Connect-Protocol-Version", "1")
        .body(body)
}

fn grpc_web(op: &str, content_type: &str, message: &[u8]) -> Request {
    Request::post(&format!("{SERVICE}{op}"))
        .header("Content-Type", content_type)
        .header("X-Grpc-Web", "1")
        .body(&envelope(0, message))
}

/// The frames of a gRPC-Web body: (flags, payload).
fn frames(body: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let (mut i, mut out) = (0, Vec::new());
    while i < body.len() {
        let n = u32::from_be_bytes(body[i + 1..i + 5].try_into().unwrap()) as usize;
        out.push((body[i], body[i + 5..i + 5 + n].to_vec()));
        i += 5 + n;
    }
    out
}

/// The trailers of a gRPC-Web answer (its last frame, flag 0x80), by name.
fn trailers(frame: &(u8, Vec<u8>)) -> Vec<(String, String)> {
    assert_eq!(frame.0, 0x80, "not a trailer frame: {frame:?}");
    String::from_utf8(frame.1.clone())
        .unwrap()
        .split("\r\n")
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (k, v) = l.split_once(':').unwrap();
            (k.trim().to_ascii_lowercase(), v.trim().to_string())
        })
        .collect()
}

fn trailer<'a>(t: &'a [(String, String)], name: &str) -> Option<&'a str> {
    t.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn server() -> Server {
    Server::start(config_with(vec![
        json!({
            "id": "hello",
            "title": "Hello",
            "shell": "echo hello {{ who }}",
            "arguments": [{"name": "who", "type": "ascii_identifier", "default": "world"}],
        }),
        shell_action("fail", "echo oops >&2; exit 3"),
    ]))
}

fn binary_content_type(resp: &Response) -> &str {
    resp.header("Content-Type").unwrap_or_default()
}

// ---------------------------------------------------------------------------------------
// Connect, binary

#[test]
fn a_binary_call_is_answered_in_binary() {
    let server = server();
    let resp = send(server.addr, &proto_call("GetReadyz", b""));
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(binary_content_type(&resp), "application/proto");
    assert_eq!(resp.body, b"\x0a\x02OK");

    let body = start_request("hello", &[("who", "ada")]);
    let resp = send(server.addr, &proto_call("StartActionAndWait", &body));
    assert_eq!(resp.status, 200, "{}", resp.text());
    let entry = message(&resp.body, 1);
    assert_eq!(text(&entry, 6), "hello ada\n", "stdout");
    assert_eq!(text(&entry, 4), "hello", "actionId");
    assert_eq!(int(&entry, 9), 0, "exitCode (left out: the default)");
    assert_eq!(int(&entry, 15), 1, "executionFinished");
    // A negative int32 goes sign-extended over ten bytes.
    let resp = send(
        server.addr,
        &proto_call("StartActionAndWait", &start_request("fail", &[])),
    );
    let entry = message(&resp.body, 1);
    assert_eq!(int(&entry, 9) as i64 as i32, 3);
    assert_eq!(text(&entry, 7), "oops\n", "stderr");
}

#[test]
fn binary_requests_skip_unknown_fields_and_may_be_gzipped() {
    let server = server();
    let mut body = start_request("hello", &[("who", "bob")]);
    int_field(&mut body, 99, 7);
    field(&mut body, 100, b"from a newer client");
    let resp = send(server.addr, &proto_call("StartActionAndWait", &body));
    assert_eq!(text(&message(&resp.body, 1), 6), "hello bob\n");
    let resp = send(
        server.addr,
        &proto_call("StartActionAndWait", &gzip(&body)).header("Content-Encoding", "gzip"),
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(text(&message(&resp.body, 1), 6), "hello bob\n");
    // OliveTin's name of the action, field 4.
    let mut olivetin = Vec::new();
    field(&mut olivetin, 4, b"hello");
    let resp = send(server.addr, &proto_call("StartActionAndWait", &olivetin));
    assert_eq!(text(&message(&resp.body, 1), 6), "hello world\n");
}

#[test]
fn errors_of_binary_calls_are_connect_json() {
    let server = server();
    let resp = send(
        server.addr,
        &proto_call("StartAction", &start_request("nope", &[])),
    );
    let message = assert_error(&resp, 404, "not_found");
    assert!(message.contains("nope"), "{message}");
    assert_eq!(binary_content_type(&resp), "application/json");
    // A value the argument refuses, in binary as in JSON.
    let body = start_request("hello", &[("who", "a; rm -rf /")]);
    assert_error(
        &send(server.addr, &proto_call("StartAction", &body)),
        400,
        "invalid_argument",
    );
    // The Connect header rules hold for every codec.
    let resp = send(
        server.addr,
        &proto_call("GetReadyz", b"").without_header("Connect-Protocol-Version"),
    );
    assert_error(&resp, 400, "invalid_argument");
}

#[test]
fn hostile_binary_bodies_are_refused_with_the_reason() {
    let server = server();
    let deep_groups = [vec![0x7b; 5000], vec![0x7c; 5000]].concat();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "a varint of 11 bytes",
            b"\x28\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01".to_vec(),
            "varint",
        ),
        (
            "a length past the end",
            b"\x0a\xff\xff\xff\xff\x0f".to_vec(),
            "runs past the end",
        ),
        ("groups 5000 deep", deep_groups, "nest deeper"),
        ("invalid UTF-8", b"\x0a\x02\xc3\x28".to_vec(), "UTF-8"),
        (
            "a wire type that does not exist",
            b"\x2f".to_vec(),
            "does not exist",
        ),
    ];
    for (what, body, why) in cases {
        let resp = send(server.addr, &proto_call("StartAction", &body));
        let message = assert_error(&resp, 400, "invalid_argument");
        assert!(message.contains(why), "{what}: {message}");
    }
    // 64 KiB of empty arguments: decoded within the body's bound, refused by name.
    let body = b"\x12\x00".repeat(32 * 1024 - 8);
    let resp = send(
        server.addr,
        &proto_call("StartAction", &[start_request("hello", &[]), body].concat()),
    );
    assert_error(&resp, 400, "invalid_argument");
    // Past maxRequestBodyBytes: refused before it is decoded.
    let body = b"\x12\x00".repeat(40 * 1024);
    assert_error(
        &send(server.addr, &proto_call("StartAction", &body)),
        429,
        "resource_exhausted",
    );
    // The service is still there.
    assert_eq!(
        send(server.addr, &proto_call("GetReadyz", b"")).body,
        b"\x0a\x02OK"
    );
}

#[test]
fn the_event_stream_speaks_binary_and_ends_in_json() {
    let server = server();
    let req = Request::post(&format!("{SERVICE}EventStream"))
        .header("Content-Type", "application/connect+proto")
        .header("Connect-Protocol-Version", "1")
        .header("Connect-Timeout-Ms", "3000")
        .body(&envelope(0, b""));
    let mut stream = EventStream::open(server.addr, &req);
    assert_eq!(stream.status, 200);
    assert_eq!(
        stream.header("Content-Type"),
        Some("application/connect+proto")
    );
    let resp = send(
        server.addr,
        &proto_call("StartAction", &start_request("hello", &[])),
    );
    let tracking = text(&resp.body, 1);
    let mut seen = Vec::new();
    loop {
        let frame = stream.frame();
        if frame.flags == 0x02 {
            // The end-stream message is JSON whatever the codec.
            assert_eq!(frame.json()["error"]["code"], "deadline_exceeded");
            break;
        }
        assert_eq!(frame.flags, 0);
        let event = fields(&frame.payload);
        assert_eq!(event.len(), 1, "one member of the oneof: {event:?}");
        let (member, Val::Bytes(inner)) = &event[0] else {
            panic!("{event:?}")
        };
        match member {
            3 | 4 => assert_eq!(text(&message(inner, 1), 13), tracking),
            5 => assert_eq!(text(inner, 1), tracking),
            other => panic!("member {other}"),
        }
        seen.push(*member);
    }
    assert_eq!(seen.first(), Some(&3), "executionStarted first: {seen:?}");
    assert!(seen.contains(&4), "executionFinished: {seen:?}");
}

// ---------------------------------------------------------------------------------------
// gRPC-Web

#[test]
fn grpc_web_answers_in_frames_with_trailers_in_both_codecs() {
    let server = server();
    let resp = send(
        server.addr,
        &grpc_web("GetReadyz", "application/grpc-web+proto", b""),
    );
    assert_eq!(resp.status, 200);
    assert_eq!(binary_content_type(&resp), "application/grpc-web+proto");
    let f = frames(&resp.body);
    assert_eq!(f.len(), 2, "{f:?}");
    assert_eq!(f[0], (0, b"\x0a\x02OK".to_vec()));
    assert_eq!(trailer(&trailers(&f[1]), "grpc-status"), Some("0"));

    let body = start_request("hello", &[("who", "eve")]);
    let resp = send(
        server.addr,
        &grpc_web("StartActionAndWait", "application/grpc-web", &body),
    );
    let f = frames(&resp.body);
    assert_eq!(text(&message(&f[0].1, 1), 6), "hello eve\n");

    let json_body = br#"{"actionId":"hello","arguments":[{"name":"who","value":"joe"}]}"#;
    let resp = send(
        server.addr,
        &grpc_web("StartActionAndWait", "application/grpc-web+json", json_body),
    );
    assert_eq!(binary_content_type(&resp), "application/grpc-web+json");
    let f = frames(&resp.body);
    let entry: Value = serde_json::from_slice(&f[0].1).unwrap();
    assert_eq!(entry["logEntry"]["stdout"], "hello joe\n");
    assert_eq!(trailer(&trailers(&f[1]), "grpc-status"), Some("0"));
}

#[test]
fn grpc_web_errors_are_trailers_under_http_200() {
    let server = server();
    let resp = send(
        server.addr,
        &grpc_web(
            "StartAction",
            "application/grpc-web+proto",
            &start_request("nope é%", &[]),
        ),
    );
    assert_eq!(resp.status, 200);
    let f = frames(&resp.body);
    assert_eq!(f.len(), 1, "trailers only: {f:?}");
    let t = trailers(&f[0]);
    assert_eq!(trailer(&t, "grpc-status"), Some("5"), "not_found");
    let message = trailer(&t, "grpc-message").unwrap();
    assert!(
        message.contains("nope %C3%A9%25"),
        "percent-encoded: {message}"
    );
    // No Connect-Protocol-Version in gRPC-Web, and none asked for.
    let resp = send(
        server.addr,
        &grpc_web("GetReadyz", "application/grpc-web+proto", b"").header("grpc-timeout", "x"),
    );
    let t = trailers(&frames(&resp.body)[0]);
    assert_eq!(
        trailer(&t, "grpc-status"),
        Some("3"),
        "invalid_argument: {t:?}"
    );
}

#[test]
fn grpc_web_envelopes_may_be_gzipped_when_named() {
    let server = server();
    let body = start_request("hello", &[("who", "zed")]);
    let req = Request::post(&format!("{SERVICE}StartActionAndWait"))
        .header("Content-Type", "application/grpc-web+proto")
        .header("grpc-encoding", "gzip")
        .body(&envelope(1, &gzip(&body)));
    let f = frames(&send(server.addr, &req).body);
    assert_eq!(text(&message(&f[0].1, 1), 6), "hello zed\n");
    // A compressed envelope without the header: internal, as gRPC says.
    let req = req.without_header("grpc-encoding");
    let t = trailers(&frames(&send(server.addr, &req).body)[0]);
    assert_eq!(trailer(&t, "grpc-status"), Some("13"), "{t:?}");
}

#[test]
fn grpc_web_text_is_base64_both_ways() {
    use base64_like::{decode, encode};
    let server = server();
    let body = encode(&envelope(0, &start_request("hello", &[("who", "tex")])));
    let req = Request::post(&format!("{SERVICE}StartActionAndWait"))
        .header("Content-Type", "application/grpc-web-text")
        .header("Accept", "application/grpc-web-text")
        .body(body.as_bytes());
    let resp = send(server.addr, &req);
    assert_eq!(resp.status, 200);
    assert_eq!(
        binary_content_type(&resp),
        "application/grpc-web-text+proto"
    );
    let f = frames(&decode(&resp.text()));
    assert_eq!(text(&message(&f[0].1, 1), 6), "hello tex\n");
    assert_eq!(trailer(&trailers(&f[1]), "grpc-status"), Some("0"));
}

#[test]
fn grpc_web_streams_events_and_ends_with_trailers() {
    let server = server();
    let req = Request::post(&format!("{SERVICE}EventStream"))
        .header("Content-Type", "application/grpc-web+proto")
        .header("grpc-timeout", "2S")
        .body(&envelope(0, b""));
    let mut stream = EventStream::open(server.addr, &req);
    assert_eq!(stream.status, 200);
    assert_eq!(
        stream.header("Content-Type"),
        Some("application/grpc-web+proto")
    );
    send(
        server.addr,
        &proto_call("StartAction", &start_request("hello", &[])),
    );
    let (frames, ending) = stream.rest(Duration::from_secs(10));
    assert!(matches!(ending, Next::End), "{ending:?}");
    let (last, events) = frames.split_last().unwrap();
    assert!(events.iter().all(|f| f.flags == 0));
    assert!(
        events.iter().any(|f| fields(&f.payload)[0].0 == 4),
        "executionFinished"
    );
    let t = trailers(&(last.flags, last.payload.clone()));
    assert_eq!(
        trailer(&t, "grpc-status"),
        Some("4"),
        "deadline_exceeded: {t:?}"
    );
}

#[test]
fn grpc_over_http1_is_refused_naming_http2() {
    let server = server();
    let req = Request::post(&format!("{SERVICE}GetReadyz"))
        .header("Content-Type", "application/grpc")
        .header("TE", "trailers")
        .body(&envelope(0, b""));
    let message = assert_error(&send(server.addr, &req), 415, "unknown");
    assert!(message.contains("HTTP/2"), "{message}");
}

/// Standard base64, written here so the test does not share actiond's.
mod base64_like {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    pub fn encode(bytes: &[u8]) -> String {
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let b = [
                chunk[0],
                *chunk.get(1).unwrap_or(&0),
                *chunk.get(2).unwrap_or(&0),
            ];
            let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
            for i in 0..4 {
                if i <= chunk.len() {
                    out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
        out
    }

    /// Decodes padded pieces one after the other (a server may encode each frame alone).
    pub fn decode(text: &str) -> Vec<u8> {
        let mut out = Vec::new();
        for piece in text.as_bytes().chunks(4) {
            let vals: Vec<u32> = piece
                .iter()
                .take_while(|&&c| c != b'=')
                .map(|&c| ALPHABET.iter().position(|&a| a == c).unwrap() as u32)
                .collect();
            let n = vals
                .iter()
                .enumerate()
                .fold(0, |n, (i, v)| n | v << (18 - 6 * i));
            for i in 0..vals.len().saturating_sub(1) {
                out.push((n >> (16 - 8 * i)) as u8);
            }
        }
        out
    }
}
