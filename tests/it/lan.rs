//! Safe on a LAN: what a hostile client, a rebinding page or another site's page can do
//! against the real binary over raw sockets. A request naming a host the board does not
//! answer to, or marked by a browser as coming from another site, runs nothing; a
//! ValidateArgumentType never compiles a pattern it is sent, and values against the costliest
//! pattern a config may declare leave `/readyz` answering at once; a body that stalls loses
//! its connection within the client timeout.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::client::{self, Request, assert_error};
use crate::harness::{
    LINK_KEY, LINK_KEY_SHA256, SOON, Server, config_with, keyed, keyed_get, repeat_for,
    shell_action, wait_until,
};

/// Far above a readiness call's normal time (about a millisecond), far below what a service
/// held by one request for a whole match of a hostile pattern would take (seconds).
const PROMPT: Duration = Duration::from_millis(500);

/// A config with `actions` and the given top-level keys.
fn config(actions: Vec<Value>, extra: Value) -> Value {
    let mut config = config_with(actions);
    let (Value::Object(base), Value::Object(extra)) = (&mut config, extra) else {
        panic!("configs are mappings");
    };
    base.extend(extra);
    config
}

/// The tag action: a `regex:` argument, one with choices and a required one.
fn tag_action() -> Value {
    json!({
        "id": "tag",
        "title": "Tag",
        "shell": "echo {{ tag }} {{ colour }} {{ host }}",
        "arguments": [
            {"name": "tag", "type": "regex:[a-z]{2,4}"},
            {"name": "colour", "choices": [{"value": "red"}, {"value": "green"}]},
            {"name": "host", "type": "ascii_identifier", "rejectNull": true},
            {"name": "note", "type": "html", "default": "<b>careful</b>"},
        ],
    })
}

fn validate(server: &Server, body: Value) -> (bool, String) {
    let reply = server.ok("ValidateArgumentType", body);
    (
        reply["valid"].as_bool().expect("valid"),
        reply["description"]
            .as_str()
            .expect("description")
            .to_string(),
    )
}

#[test]
fn validate_argument_type_checks_a_declared_argument_and_compiles_no_pattern_it_is_sent() {
    let server = Server::start(config(vec![tag_action()], json!({})));
    let arg =
        |name: &str, value: &str| json!({"bindingId": "tag", "argumentName": name, "value": value});
    assert_eq!(validate(&server, arg("tag", "abc")), (true, String::new()));
    let (valid, why) = validate(&server, arg("tag", "abcdef"));
    assert!(!valid);
    assert_eq!(why, "must match the pattern [a-z]{2,4} as a whole");
    // Choices and rejectNull are the declaration's, as a start would apply them.
    assert_eq!(
        validate(&server, arg("colour", "red")),
        (true, String::new())
    );
    assert!(!validate(&server, arg("colour", "blue")).0);
    let (valid, why) = validate(&server, arg("host", ""));
    assert!(!valid && why.contains("required"), "{why}");
    // Unknown actions and arguments, and display-only ones, are not found.
    for (body, what) in [
        (
            json!({"bindingId": "nope", "argumentName": "tag", "value": "ab"}),
            "nope",
        ),
        (arg("nope", "ab"), "nope"),
        (arg("note", "ab"), "note"),
    ] {
        let (status, reply) = server.call("ValidateArgumentType", body);
        assert_eq!(status, 404, "{reply}");
        assert!(reply["message"].as_str().unwrap().contains(what), "{reply}");
    }
    // A pattern in the request is never compiled, valid or not.
    for ty in ["regex:[a-z]+", "regex:(?:.{0,100}){0,100}x", "regex:("] {
        let (valid, why) = validate(&server, json!({"type": ty, "value": "abc"}));
        assert!(!valid);
        assert!(why.contains("bindingId and argumentName"), "{why}");
    }
    // The built-in types still answer by name.
    assert_eq!(
        validate(&server, json!({"type": "int", "value": "12"})),
        (true, String::new())
    );
}

#[test]
fn validating_a_declared_argument_needs_the_view_permission() {
    let mut cfg = config(
        vec![tag_action()],
        json!({"defaultPermissions": {"view": false, "exec": false}}),
    );
    cfg["actions"][0]["title"] = json!("Hidden tag");
    let server = Server::start(cfg);
    let (status, reply) = server.call(
        "ValidateArgumentType",
        json!({"bindingId": "tag", "argumentName": "tag", "value": "ab"}),
    );
    assert_eq!(status, 403, "{reply}");
}

/// The costliest patterns a config may declare, each at values as long as it is matched
/// against and longer, from eight clients at once: readiness keeps answering promptly.
#[test]
fn the_costliest_patterns_allowed_leave_the_service_answering() {
    let patterns = [
        "(?:[a-z]{1,50}){1,20}",
        "(?:[a-z]{0,30}){0,30}x",
        "(?:(?:a*)*)*b",
        "(?:a|aa)*b",
    ];
    let arguments: Vec<Value> = patterns
        .iter()
        .enumerate()
        .map(|(i, p)| json!({"name": format!("p{i}"), "type": format!("regex:{p}")}))
        .collect();
    let action =
        json!({"id": "costly", "title": "Costly", "shell": "true", "arguments": arguments});
    let server = Server::start(config(vec![action], json!({})));
    let addr = server.addr;
    let stop = Arc::new(AtomicBool::new(false));
    let rounds = Arc::new(AtomicUsize::new(0));
    let attackers: Vec<_> = (0..8)
        .map(|c| {
            let (stop, rounds) = (stop.clone(), rounds.clone());
            thread::spawn(move || {
                let mut sent = 0;
                while !stop.load(Ordering::SeqCst) {
                    let len = [60, 200, 1000, 8000, 60000][sent % 5];
                    let value = "a".repeat(len);
                    let name = format!("p{}", (sent + c) % 4);
                    let check =
                        json!({"bindingId": "costly", "argumentName": name, "value": value});
                    let (status, _) = client::connect_json(addr, "ValidateArgumentType", &check);
                    assert_eq!(status, 200);
                    let all: Vec<Value> = (0..4)
                        .map(|i| json!({"name": format!("p{i}"), "value": "a".repeat(len / 4)}))
                        .collect();
                    let start = json!({"actionId": "costly", "arguments": all});
                    let _ = client::connect_json(addr, "StartAction", &start);
                    sent += 1;
                    rounds.fetch_add(1, Ordering::SeqCst);
                }
                sent
            })
        })
        .collect();
    // The attack is under way: as many rounds done as there are attackers.
    assert!(wait_until(SOON, || rounds.load(Ordering::SeqCst) >= 8));
    let mut slowest = Duration::ZERO;
    let mut asked = 0;
    repeat_for(SOON, Duration::from_millis(30), || {
        let began = Instant::now();
        let resp = client::send(addr, &Request::connect("GetReadyz", b"{}"));
        assert_eq!(resp.status, 200);
        slowest = slowest.max(began.elapsed());
        asked += 1;
        asked < 30
    });
    stop.store(true, Ordering::SeqCst);
    let sent: usize = attackers.into_iter().map(|t| t.join().unwrap()).sum();
    eprintln!("{sent} hostile rounds; slowest readiness {slowest:?}");
    assert!(sent > 8, "the attackers hardly ran: {sent}");
    assert!(
        slowest < PROMPT,
        "readiness took {slowest:?} under the patterns"
    );
}

#[test]
fn a_request_for_another_host_name_runs_nothing() {
    let server = Server::start(config(
        vec![shell_action("mark", "touch MARK")],
        json!({"allowedHosts": ["pi.fritz.box", "*.home.arpa"]}),
    ));
    let start = || Request::connect("StartActionAndWait", br#"{"actionId":"mark"}"#);
    for host in [
        "rebind.attacker.example",
        "attacker.example:1337",
        "pi.fritz.box.evil.example",
    ] {
        let resp = client::send(server.addr, &start().set_header("Host", host));
        let message = assert_error(&resp, 403, "permission_denied");
        assert!(message.contains("allowedHosts"), "{message}");
        let get = Request::get("/api/StartActionByGet/mark").set_header("Host", host);
        assert_eq!(client::send(server.addr, &get).status, 403, "{host}");
    }
    assert!(
        !server.path("MARK").exists(),
        "a rebinding request ran the action"
    );
    let port = server.addr.port();
    for host in [
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
        "localhost".into(),
        "PI.fritz.box".into(),
        "nas.home.arpa:8080".into(),
    ] {
        let resp = client::send(server.addr, &start().set_header("Host", &host));
        assert_eq!(resp.status, 200, "{host}: {}", resp.text());
    }
}

/// Every request a browser sends for a page's <img>, link, form GET or no-cors fetch to a
/// board on `http://pi.local` looks like this: no Fetch Metadata, no Origin, no Referer (with
/// `referrerpolicy="no-referrer"`), and the board's cookie when the page is its own. None of
/// that may start anything: only an API token, the action's link key, or the action's own
/// opt-in does.
#[test]
fn a_plain_get_starts_only_with_a_token_the_link_key_or_the_opt_in() {
    let token = "tok-0123456789-abcdefghij";
    let token_sha = "eb6bc07d764f0e79f09bd55764ba5040c7df0f83fcb674993af54f86d558660c";
    let mut any_page = shell_action("anyPage", "touch ANY; echo any");
    any_page["insecureAllowStartFromAnyWebPage"] = json!(true);
    let server = Server::start(config(
        vec![
            shell_action("plain", "touch PLAIN; echo plain"),
            keyed(shell_action("keyed", "touch KEYED; echo keyed")),
            any_page,
        ],
        json!({"authApiTokens": [{"name": "ha", "sha256": token_sha, "username": "ha"}]}),
    ));
    let bearer = format!("Bearer {token}");
    for op in ["StartActionByGet", "StartActionByGetAndWait"] {
        for (path, why) in [
            (format!("/api/{op}/plain"), "only with an API token"),
            (format!("/api/{op}/keyed"), "only with its link key"),
            (
                format!("/api/{op}/keyed?key=guessed"),
                "is not the action's link key",
            ),
            (
                format!("/api/{op}/keyed?key="),
                "is not the action's link key",
            ),
            (
                format!("/api/{op}/plain?key={LINK_KEY}"),
                "only with an API token",
            ),
            (
                format!("/api/{op}/keyed?Key={LINK_KEY}"),
                "only with its link key",
            ),
        ] {
            let resp = client::send(server.addr, &Request::get(&path));
            let message = assert_error(&resp, 403, "permission_denied");
            assert!(message.contains(why), "{path}: {message}");
            // A session cookie changes nothing: a page's <img> carries it too.
            let resp = client::send(
                server.addr,
                &Request::get(&path).header("Cookie", "svc-sid-local=not-a-session"),
            );
            assert_eq!(resp.status, 403, "{path}");
        }
    }
    for f in ["PLAIN", "KEYED", "ANY"] {
        assert!(!server.path(f).exists(), "{f} ran");
    }
    let ok = [
        Request::get("/api/StartActionByGetAndWait/plain").header("Authorization", &bearer),
        Request::get(&format!(
            "/api/StartActionByGetAndWait/keyed?key={LINK_KEY}"
        )),
        Request::get(&format!(
            "/api/StartActionByGetAndWait/keyed?a=1&key={LINK_KEY}&b"
        )),
        Request::get("/api/StartActionByGetAndWait/anyPage"),
    ];
    for req in ok {
        let resp = client::send(server.addr, &req);
        assert_eq!(resp.status, 200, "{:?}: {}", req.headers, resp.text());
    }
    for f in ["PLAIN", "KEYED", "ANY"] {
        assert!(server.path(f).exists(), "{f} did not run");
    }
    // The POST forms need Connect's headers, which no page sends without asking first.
    let resp = client::send(
        server.addr,
        &Request::connect("StartActionByGetAndWait", br#"{"actionId":"plain"}"#),
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
    // The key is checked in constant time against its hash, never shown back.
    assert!(!server.log_contains(LINK_KEY) && !server.log_contains(LINK_KEY_SHA256));
}

/// What a page can send without a CORS preflight to the other routes: a form's or plain
/// text's POST is refused before its body is read as a request, and a preflight gets no CORS
/// permission, so the browser never sends the real request.
#[test]
fn what_a_page_sends_without_asking_first_starts_nothing() {
    let server = Server::start(config(vec![shell_action("mark", "touch MARK")], json!({})));
    for content_type in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ] {
        for path in [
            "/api/StartAction",
            "/api/StartActionAndWait",
            "/api/StartActionByGet",
        ] {
            let req = Request::post(path)
                .body(br#"{"actionId":"mark"}"#)
                .header("Content-Type", content_type)
                .header("Connect-Protocol-Version", "1");
            let resp = client::send(server.addr, &req);
            assert_eq!(resp.status, 415, "{content_type} {path}: {}", resp.text());
        }
    }
    let preflight = Request::new("OPTIONS", "/api/StartAction")
        .header("Origin", "http://evil.test")
        .header("Access-Control-Request-Method", "POST")
        .header(
            "Access-Control-Request-Headers",
            "content-type,connect-protocol-version",
        );
    let resp = client::send(server.addr, &preflight);
    assert!(resp.status >= 400, "{}", resp.status);
    assert!(resp.header("Access-Control-Allow-Origin").is_none());
    let head = Request::new("HEAD", "/api/StartActionByGet/mark");
    assert_eq!(client::send(server.addr, &head).status, 405);
    assert!(
        !server.path("MARK").exists(),
        "a page's request ran the action"
    );
}

#[test]
fn a_request_a_browser_marks_as_from_another_site_runs_nothing() {
    let server = Server::start(config(
        vec![keyed(shell_action("mark", "touch MARK"))],
        json!({"allowedOrigins": ["https://home.example"]}),
    ));
    let post = || Request::connect("StartActionAndWait", br#"{"actionId":"mark"}"#);
    // Even with the link key, the browser's own marks refuse it (the second line).
    let get = || keyed_get("/api/StartActionByGet/mark");
    let own = format!("http://{}", server.addr);
    // A browser names the port it addressed in Host; the client sends none unless told.
    let addressed = server.addr.to_string();
    let refused = [
        post().header("Origin", "http://attacker.example"),
        post().header("Origin", "null"),
        post()
            .header("Sec-Fetch-Site", "cross-site")
            .header("Origin", "http://attacker.example"),
        post()
            .header("Sec-Fetch-Site", "same-site")
            .header("Origin", "http://127.0.0.2:80"),
        // An <img> tag: no Origin, only the fetch metadata.
        get()
            .header("Sec-Fetch-Site", "cross-site")
            .header("Sec-Fetch-Dest", "image"),
        get()
            .header("Sec-Fetch-Site", "cross-site")
            .header("Sec-Fetch-Mode", "navigate"),
        get().header("Referer", "http://attacker.example/page"),
    ];
    for req in refused {
        let resp = client::send(server.addr, &req);
        assert_eq!(resp.status, 403, "{:?}: {}", req.headers, resp.text());
    }
    assert!(
        !server.path("MARK").exists(),
        "a cross-site request ran the action"
    );
    let served = [
        post(),
        post()
            .header("Origin", &own)
            .header("Sec-Fetch-Site", "same-origin"),
        post().header("Origin", &own).set_header("Host", &addressed),
        post()
            .header("Origin", "https://home.example")
            .header("Sec-Fetch-Site", "cross-site"),
        // A bookmark or a QR code.
        get()
            .header("Sec-Fetch-Site", "none")
            .header("Sec-Fetch-Mode", "navigate"),
        get(),
    ];
    for req in served {
        let resp = client::send(server.addr, &req);
        assert_eq!(resp.status, 200, "{:?}: {}", req.headers, resp.text());
    }
}

/// Headers and one byte of a 100-byte body, then nothing: the connection is closed within
/// the client timeout, and the service answers everyone else meanwhile.
#[test]
fn a_body_that_stalls_loses_its_connection_within_the_client_timeout() {
    let server = Server::start(config(
        vec![shell_action("hello", "echo hello")],
        json!({"clientTimeout": 1, "maxConnections": 32}),
    ));
    let head = "POST /api/GetReadyz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                Content-Length: 100\r\n\r\n{";
    let mut stalled: Vec<TcpStream> = (0..24)
        .map(|_| {
            let mut s = TcpStream::connect(server.addr).unwrap();
            s.write_all(head.as_bytes()).unwrap();
            s
        })
        .collect();
    let began = Instant::now();
    for s in &mut stalled {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut got = Vec::new();
        let _ = s.read_to_end(&mut got);
        let text = String::from_utf8_lossy(&got);
        assert!(
            text.is_empty() || text.starts_with("HTTP/1.1 408"),
            "{text}"
        );
    }
    let took = began.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "stalled bodies held for {took:?}"
    );
    let resp = client::send(server.addr, &Request::connect("GetReadyz", b"{}"));
    assert_eq!(resp.status, 200);
}

/// 20 clients each send three GetLogs in one go and read nothing, over a history of entries
/// whose output is 64 KiB of control bytes (six bytes each once escaped as JSON): the
/// service grows by less than 16 MiB, and keeps answering everyone else.
#[test]
fn unread_list_answers_stay_within_the_memory_budget() {
    const CLIENTS: usize = 20;
    const CEILING_KIB: u64 = 16 * 1024;
    let noisy =
        "head -c 65536 /dev/zero | tr '\\0' '\\1'; head -c 65536 /dev/zero | tr '\\0' '\\2' >&2";
    let server = Server::start(config(
        vec![shell_action("noisy", noisy)],
        json!({"clientTimeout": 60, "maxConnections": 64, "maxConnectionsPerAddress": 64}),
    ));
    for _ in 0..10 {
        let entry = server.run("noisy");
        assert_eq!(
            entry["stdout"].as_str().unwrap().len(),
            65536,
            "the output is kept whole"
        );
    }
    // One list read whole first: the answer says what it left out, and ExecutionStatus still
    // gives the whole entry.
    let page = server.ok("GetLogs", json!({}));
    let first = &page["logs"][0];
    let stdout = first["stdout"].as_str().unwrap();
    assert!(stdout.starts_with("actiond: … "), "{}", &stdout[..40]);
    assert!(stdout.contains("ExecutionStatus shows them"));
    let id = first["executionTrackingId"].as_str().unwrap();
    let whole = server.ok("ExecutionStatus", json!({"executionTrackingId": id}));
    assert_eq!(whole["logEntry"]["stdout"].as_str().unwrap().len(), 65536);
    let answer = serde_json::to_vec(&page).unwrap().len();
    assert!(answer < 300 * 1024, "one list answer is {answer} bytes");

    let before = crate::harness::vm_kib(server.pid(), "VmRSS");
    let request = Request::connect("GetLogs", b"{}").to_bytes();
    let held: Vec<TcpStream> = (0..CLIENTS)
        .map(|_| {
            let mut s = TcpStream::connect(server.addr).unwrap();
            let three = [request.clone(), request.clone(), request.clone()].concat();
            s.write_all(&three).unwrap();
            s
        })
        .collect();
    // The service has done all it can once readiness answers after every request was sent;
    // its resident set then stops moving.
    let mut after = 0;
    let mut asked = 0;
    repeat_for(SOON * 2, Duration::from_millis(100), || {
        let resp = client::send(server.addr, &Request::connect("GetReadyz", b"{}"));
        assert_eq!(resp.status, 200);
        after = after.max(crate::harness::vm_kib(server.pid(), "VmRSS"));
        asked += 1;
        asked < 20
    });
    let grown = after.saturating_sub(before);
    eprintln!("VmRSS {before} KiB before, {after} KiB with {CLIENTS} unread clients: +{grown} KiB");
    assert!(
        grown < CEILING_KIB,
        "{CLIENTS} unread clients grew the service by {grown} KiB"
    );
    drop(held);
}

/// Python's Connect client gzips a stream's request envelope and says so in
/// `Connect-Content-Encoding`: the stream opens. An encoding actiond does not know is
/// refused by name rather than read as if it were plain.
#[test]
fn a_compressed_event_stream_request_opens_the_stream() {
    use std::io::Write as _;
    let server = Server::start(config(vec![shell_action("hello", "echo hello")], json!({})));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(b"{}").unwrap();
    let payload = gz.finish().unwrap();
    let mut body = vec![1u8];
    body.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    body.extend_from_slice(&payload);
    let stream = |encoding: &str| {
        let req = Request::post("/svc.api.v1.ActionApiService/EventStream")
            .header("Content-Type", "application/connect+json")
            .header("Connect-Protocol-Version", "1")
            .header("Connect-Timeout-Ms", "300")
            .header("Connect-Content-Encoding", encoding)
            .body(&body);
        let resp = client::send(server.addr, &req);
        assert_eq!(resp.status, 200);
        resp.text()
    };
    // Opened: it ends at its deadline, not at once with an error about compression.
    let opened = stream("gzip");
    assert!(opened.contains("deadline_exceeded"), "{opened}");
    let refused = stream("br");
    assert!(
        refused.contains("unimplemented") && refused.contains("br"),
        "{refused}"
    );
    let plain = stream("identity");
    assert!(plain.contains("no compression was negotiated"), "{plain}");
}
