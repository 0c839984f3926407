//! OliveTin's own clients, by the exact requests their public source sends (headers, bodies,
//! field names), against actiond:
//!
//! - ha-olivetin 0.2.0 (the HACS integration for Home Assistant, commit 0296942): aiohttp
//!   POSTs to `<url>/api/<Op>` with `json=` (Content-Type `application/json`) and no
//!   Connect header: LocalUserLogin, then Init and GetDashboard per root dashboard (its
//!   config flow and its poll), and StartAction with `bindingId`, `arguments` (every value a
//!   string) and an empty `uniqueTrackingId`. It keeps whatever cookies the login set.
//! - The n8n node: StartAction with `{"bindingId": …}` and Content-Type `application/json`;
//!   its credential test POSTs `/api/Init` with `Authorization: token <key>`.
//! - The Stream Deck plugin: `fetch(settings.url + 'StartAction')`, Content-Type
//!   `application/json`, `{"actionId": …, "arguments": []}`.
//! - A log watcher (LoggiFly's OliveTin support): LocalUserLogin, `GET /api/WhoAmI` with the
//!   cookie, StartActionAndWait with `actionId` and `arguments`.
//!
//! None of them sends `Connect-Protocol-Version`: they work once `connectProtocolHeader:
//! optional` is set, and are refused with the header's name (and a DEBUG line saying who and
//! why) while it is `required`, the default.

use serde_json::{Value, json};

use crate::client::{Request, Response, assert_error, send};
use crate::harness::{Server, config_with, wait_until};
use crate::identity::{phc, sha256_hex};

const TOKEN: &str = "n8n-token-1b6c9a0e3f5d7b2a4c8e6f1d3b5a7c9e";
const PASSWORD: &str = "integration password 42";

fn config(header: Option<&str>) -> Value {
    let mut c = config_with(vec![
        json!({
            "id": "hello",
            "title": "Say hello",
            "shell": "echo hello {{ who }}",
            "arguments": [{"name": "who", "type": "ascii_identifier", "default": "world"}],
        }),
        json!({"id": "date", "title": "Date", "exec": ["date", "+%Y"]}),
    ]);
    c["logLevel"] = json!("debug");
    c["authLocalUsers"] = json!({
        "enabled": true,
        "users": [{"username": "ha", "usergroup": "admins", "password": phc(PASSWORD)}],
    });
    c["authApiTokens"] = json!([{
        "name": "n8n", "sha256": sha256_hex(TOKEN), "username": "n8n", "usergroup": "automation",
    }]);
    if let Some(h) = header {
        c["connectProtocolHeader"] = json!(h);
    }
    c
}

/// What aiohttp sends for `session.post(url, json=payload, cookies=…)`.
fn aiohttp(op: &str, payload: &Value, cookie: Option<&str>) -> Request {
    let mut req = Request::post(&format!("/api/{op}"))
        .header("Accept", "*/*")
        .header("Accept-Encoding", "gzip, deflate")
        .header(
            "User-Agent",
            "HomeAssistant/2025.4.4 aiohttp/3.11.16 Python/3.13",
        )
        .header("Content-Type", "application/json")
        .body(payload.to_string().as_bytes());
    if let Some(c) = cookie {
        req = req.header("Cookie", c);
    }
    req
}

/// The `name=value` of the first cookie the answer sets.
fn cookie_of(resp: &Response) -> String {
    let set = resp.header("Set-Cookie").expect("a cookie");
    set.split(';').next().unwrap().to_string()
}

/// The actions of a dashboard's components, as ha-olivetin gathers them by `bindingId`.
fn actions(components: &Value, found: &mut Vec<Value>) {
    for c in components.as_array().into_iter().flatten() {
        if let Some(a) = c.get("action").filter(|a| a["bindingId"].is_string()) {
            found.push(a.clone());
        }
        actions(&c["contents"], found);
    }
}

#[test]
fn ha_olivetin_logs_in_lists_and_presses() {
    let server = Server::start(config(Some("optional")));
    // The config flow: login, Init, every root dashboard.
    let login = send(
        server.addr,
        &aiohttp(
            "LocalUserLogin",
            &json!({"username": "ha", "password": PASSWORD}),
            None,
        ),
    );
    assert_eq!(login.status, 200, "{}", login.text());
    assert_eq!(login.json()["success"], true);
    let cookie = cookie_of(&login);
    let init = send(server.addr, &aiohttp("Init", &json!({}), Some(&cookie)));
    assert_eq!(init.status, 200, "{}", init.text());
    let init = init.json();
    assert_eq!(init["authenticatedUser"], "ha");
    let mut found = Vec::new();
    for title in init["rootDashboards"].as_array().unwrap() {
        let d = send(
            server.addr,
            &aiohttp("GetDashboard", &json!({"title": title}), Some(&cookie)),
        );
        assert_eq!(d.status, 200, "{}", d.text());
        actions(&d.json()["dashboard"]["contents"], &mut found);
    }
    let hello = found
        .iter()
        .find(|a| a["bindingId"] == "hello")
        .expect("hello listed");
    assert_eq!(hello["arguments"][0]["defaultValue"], "world");
    // A press sends each argument's default; the service call sends the values it is given.
    for (value, out) in [("world", "hello world\n"), ("ada", "hello ada\n")] {
        let payload = json!({
            "bindingId": "hello",
            "arguments": [{"name": "who", "value": value}],
            "uniqueTrackingId": "",
        });
        let resp = send(
            server.addr,
            &aiohttp("StartAction", &payload, Some(&cookie)),
        );
        assert_eq!(resp.status, 200, "{}", resp.text());
        let id = resp.json()["executionTrackingId"]
            .as_str()
            .unwrap()
            .to_string();
        let entry = server.wait_finished(&id, std::time::Duration::from_secs(10));
        assert_eq!(entry["stdout"], out);
    }
    // A hostile value: refused, with a Connect error ha-olivetin shows ({code, message}).
    let payload = json!({
        "bindingId": "hello",
        "arguments": [{"name": "who", "value": "x; touch /tmp/owned"}],
        "uniqueTrackingId": "",
    });
    let resp = send(
        server.addr,
        &aiohttp("StartAction", &payload, Some(&cookie)),
    );
    assert_error(&resp, 400, "invalid_argument");
}

#[test]
fn without_the_setting_they_are_refused_naming_the_header_and_logged() {
    let server = Server::start(config(None));
    let resp = send(server.addr, &aiohttp("Init", &json!({}), None));
    let message = assert_error(&resp, 400, "invalid_argument");
    assert!(message.contains("Connect-Protocol-Version"), "{message}");
    assert!(
        wait_until(std::time::Duration::from_secs(5), || server
            .log_contains("refused Init from 127.0.0.1")
            && server.log_contains("missing required header")),
        "no DEBUG line about the refusal:\n{}",
        server.stop_and_log()
    );
}

#[test]
fn n8n_starts_by_binding_id_and_its_token_scheme_is_bearer() {
    let server = Server::start(config(Some("optional")));
    // The credential test: Init with `Authorization: token <key>`.
    let init = Request::post("/api/Init")
        .header("Content-Type", "application/json")
        .header("Authorization", &format!("token {TOKEN}"))
        .body(b"{}");
    let resp = send(server.addr, &init);
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(
        resp.json()["authenticatedUser"],
        "n8n",
        "the token's user, not the guest"
    );
    // A wrong key under that scheme is refused as a wrong bearer token is, never the guest.
    let wrong = init
        .clone()
        .set_header("Authorization", "token not-the-key");
    let message = assert_error(&send(server.addr, &wrong), 401, "unauthenticated");
    assert!(message.contains("Authorization"), "{message}");
    // The node itself: StartAction with bindingId alone.
    let start = Request::post("/api/StartAction")
        .header("Accept", "application/json,text/html,application/xhtml+xml,application/xml,text/*;q=0.9, image/*;q=0.8, */*;q=0.7")
        .header("Content-Type", "application/json")
        .header("User-Agent", "n8n")
        .body(br#"{"bindingId":"date"}"#);
    let resp = send(server.addr, &start);
    assert_eq!(resp.status, 200, "{}", resp.text());
    let id = resp.json()["executionTrackingId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        server.wait_finished(&id, std::time::Duration::from_secs(10))["exitCode"],
        0
    );
}

#[test]
fn the_stream_deck_plugin_starts_by_action_id() {
    let server = Server::start(config(Some("optional")));
    let req = Request::post("/api/StartAction")
        .header("Content-Type", "application/json")
        .body(br#"{"actionId":"hello","arguments":[]}"#);
    let resp = send(server.addr, &req);
    assert_eq!(resp.status, 200, "{}", resp.text());
    let id = resp.json()["executionTrackingId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        server.wait_finished(&id, std::time::Duration::from_secs(10))["stdout"],
        "hello world\n"
    );
}

#[test]
fn a_log_watcher_logs_in_checks_and_waits() {
    let server = Server::start(config(Some("optional")));
    let login = Request::post("/api/LocalUserLogin")
        .header("accept", "application/json")
        .header("Content-Type", "application/json")
        .body(
            json!({"username": "ha", "password": PASSWORD})
                .to_string()
                .as_bytes(),
        );
    let resp = send(server.addr, &login);
    assert_eq!(resp.json()["success"], true);
    let cookie = cookie_of(&resp);
    let who = send(
        server.addr,
        &Request::get("/api/WhoAmI").header("Cookie", &cookie),
    );
    assert_eq!(who.json()["authenticatedUser"], "ha");
    let wait = Request::post("/api/StartActionAndWait")
        .header("accept", "application/json")
        .header("Content-Type", "application/json")
        .header("Cookie", &cookie)
        .body(br#"{"actionId":"hello","arguments":[{"name":"who","value":"logs"}]}"#);
    let entry = send(server.addr, &wait).json()["logEntry"].clone();
    assert_eq!(entry["actionTitle"], "Say hello");
    assert_eq!(entry["stdout"], "hello logs\n");
    assert_eq!(
        (entry["executionFinished"].clone(), entry["blocked"].clone()),
        (json!(true), json!(false))
    );
}

#[test]
fn binding_id_and_action_id_must_agree() {
    let server = Server::start(config(None));
    for op in ["StartAction", "StartActionAndWait"] {
        let (status, body) = server.call(op, json!({"actionId": "date", "bindingId": "date"}));
        assert_eq!(status, 200, "{op}: {body}");
        let (status, body) = server.call(op, json!({"actionId": "", "bindingId": "date"}));
        assert_eq!(status, 200, "{op}: {body}");
        let (status, body) = server.call(op, json!({"actionId": "date", "bindingId": "hello"}));
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("invalid_argument")),
            "{op}"
        );
        let message = body["message"].as_str().unwrap();
        assert!(
            message.contains("\"date\"") && message.contains("\"hello\""),
            "{message}"
        );
    }
}

#[test]
fn refused_requests_are_logged_with_operation_caller_and_reason_within_a_budget() {
    let server = Server::start(config(Some("optional")));
    let unknown = Request::post("/api/StartAction")
        .header("Content-Type", "application/json")
        .header("Authorization", &format!("Bearer {TOKEN}"))
        .body(br#"{"bindingId":"nope"}"#);
    assert_error(&send(server.addr, &unknown), 404, "not_found");
    let line = "refused StartAction from n8n (token) at 127.0.0.1";
    assert!(
        wait_until(std::time::Duration::from_secs(5), || server
            .log_contains(line)
            && server.log_contains("not_found: no action with id \"nope\"")),
        "{}",
        server.stop_and_log()
    );
    // A flood of refusals costs the log a few lines and a count, not a line each.
    for _ in 0..40 {
        assert_error(&send(server.addr, &unknown), 404, "not_found");
    }
    let log = server.stop_and_log();
    let lines = log
        .lines()
        .filter(|l| l.contains("refused StartAction"))
        .count();
    assert!(
        (2..=8).contains(&lines),
        "{lines} lines for 41 refusals:\n{log}"
    );
}
