//! Who is calling, seen only through the wire: local
//! login and its cookie attribute by attribute, Logout revoking the session on the server,
//! WhoAmI for every provider in its POST and GET forms, the identification order (token,
//! trusted header, session cookie, guest), unknown tokens refused everywhere, and trusted
//! headers ignored from untrusted peers. Sessions across restarts, PasswordHash, Init and the
//! authentication gate are in `identity/accounts.rs`; the login throttle is in `sessions.rs`.
//!
//! Password hashes are made by the binary under test (`actiond hash-password`) and cached per
//! password, because each costs tens of milliseconds; tokens are fixed strings configured by
//! their SHA-256. A second client address (127.0.0.2, loopback on Linux) stands in for a
//! second machine where the rule is per address.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};

use crate::client::{
    Conn, Request, Response, assert_error, assert_json_error, is_uuid_v4, send, send_from,
};
use crate::harness::{
    BIN, Server, TempDir, config_with, send_together, shell_action, to_yaml, wait_until,
};

mod accounts;

// ---------------------------------------------------------------------------------------
// Shared helpers (permissions.rs uses them too)

pub const ALICE_PW: &str = "alice correct horse";
pub const BOB_PW: &str = "bob battery staple";

/// The token of the `home-assistant` API user; the config holds only its SHA-256.
pub const HA_TOKEN: &str = "ha-token-6f1c2e0b9d8a7f6e5d4c3b2a19080706";

/// The second client address: the kernel routes all of 127.0.0.0/8 to loopback.
pub const OTHER_ADDRESS: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

/// The session cookie's name.
const COOKIE: &str = "svc-sid-local";

/// The argon2id PHC string of `password`, made by `actiond hash-password`. Cached per
/// password so a suite of many servers pays for each hash once; the first hash made for a
/// password is the one every test sees, so configs that share a password share its hash.
pub fn phc(password: &str) -> String {
    static CACHE: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());
    let cached = CACHE
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(password)
        .cloned();
    if let Some(hash) = cached {
        return hash;
    }
    let mut child = Command::new(BIN)
        .arg("hash-password")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn actiond hash-password");
    // A few bytes fit in the pipe buffer, so writing before reading cannot deadlock; the
    // handle is dropped at the end of the statement, which closes stdin.
    child
        .stdin
        .take()
        .expect("stdin pipe")
        .write_all(format!("{password}\n").as_bytes())
        .expect("write the password");
    let out = child.wait_with_output().expect("actiond hash-password");
    assert!(
        out.status.success(),
        "hash-password failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hash = String::from_utf8(out.stdout)
        .expect("hash is UTF-8")
        .trim()
        .to_string();
    assert!(
        hash.starts_with("$argon2id$"),
        "hash-password printed {hash:?}"
    );
    CACHE
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(password.to_string())
        .or_insert(hash)
        .clone()
}

/// Lower-case hex SHA-256, as `authApiTokens[].sha256` is written.
pub fn sha256_hex(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The `Authorization` value that presents `token`.
pub fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// The `Cookie` value that presents session `sid`.
pub fn cookie(sid: &str) -> String {
    format!("{COOKIE}={sid}")
}

/// A Connect call of `op` carrying extra request headers (credentials).
pub fn request(op: &str, body: &Value, headers: &[(&str, &str)]) -> Request {
    let mut req = Request::connect(op, body.to_string().as_bytes());
    for (name, value) in headers {
        req = req.header(name, value);
    }
    req
}

/// A GET of `path` carrying extra request headers.
pub fn get_request(path: &str, headers: &[(&str, &str)]) -> Request {
    let mut req = Request::get(path);
    for (name, value) in headers {
        req = req.header(name, value);
    }
    req
}

/// Calls `op` with `headers` on a fresh connection.
pub fn call_with(server: &Server, op: &str, body: Value, headers: &[(&str, &str)]) -> Response {
    send(server.addr, &request(op, &body, headers))
}

/// WhoAmI (POST) with `headers`, which must succeed.
pub fn who_am_i(server: &Server, headers: &[(&str, &str)]) -> Value {
    let resp = call_with(server, "WhoAmI", json!({}), headers);
    assert_eq!(resp.status, 200, "WhoAmI: {}", resp.text());
    resp.json()
}

/// Every `Set-Cookie` header of a response.
fn set_cookies(resp: &Response) -> Vec<&str> {
    resp.headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("set-cookie"))
        .map(|(_, v)| v.as_str())
        .collect()
}

/// Splits a `Set-Cookie` value into its `name=value` pair and its attributes, the
/// attribute names lower-cased (RFC 6265 matches them case-insensitively) and sorted, so
/// the comparison checks every attribute without depending on their order.
fn cookie_parts(set_cookie: &str) -> (String, Vec<String>) {
    let mut parts = set_cookie.split(';').map(str::trim);
    let pair = parts.next().unwrap_or_default().to_string();
    let mut attributes: Vec<String> = parts
        .filter(|a| !a.is_empty())
        .map(|a| match a.split_once('=') {
            Some((name, value)) => format!("{}={value}", name.to_ascii_lowercase()),
            None => a.to_ascii_lowercase(),
        })
        .collect();
    attributes.sort();
    (pair, attributes)
}

/// The attributes the API gives the session cookie, apart from Max-Age.
fn cookie_attributes(max_age: &str) -> Vec<String> {
    let mut want = vec![
        "path=/".to_string(),
        format!("max-age={max_age}"),
        "httponly".to_string(),
        "samesite=Strict".to_string(),
    ];
    want.sort();
    want
}

/// LocalUserLogin from 127.0.0.1.
fn login(server: &Server, username: &str, password: &str) -> Response {
    let body = json!({"username": username, "password": password});
    send(server.addr, &request("LocalUserLogin", &body, &[]))
}

/// LocalUserLogin from `local`.
pub fn login_from(server: &Server, local: IpAddr, username: &str, password: &str) -> Response {
    let body = json!({"username": username, "password": password});
    send_from(server.addr, local, &request("LocalUserLogin", &body, &[]))
}

/// Asserts a successful login (body, and the one cookie with every attribute) and returns
/// the session id.
fn session_of(resp: &Response) -> String {
    assert_eq!(resp.status, 200, "login: {}", resp.text());
    assert_eq!(resp.json(), json!({"success": true}));
    let cookies = set_cookies(resp);
    assert_eq!(cookies.len(), 1, "Set-Cookie headers: {cookies:?}");
    let (pair, attributes) = cookie_parts(cookies[0]);
    let sid = pair
        .strip_prefix(&format!("{COOKIE}="))
        .unwrap_or_else(|| panic!("cookie {:?} is not {COOKIE}", cookies[0]))
        .to_string();
    assert!(is_uuid_v4(&sid), "session id {sid:?} is not a UUIDv4");
    assert_eq!(
        attributes,
        cookie_attributes("31556952"),
        "attributes of {:?}",
        cookies[0]
    );
    sid
}

/// Logs in as `username`, which must succeed; returns the session id.
fn logged_in(server: &Server, username: &str, password: &str) -> String {
    session_of(&login(server, username, password))
}

/// Asserts a refused login: 200, `{"success": false}` and no cookie.
fn assert_refused(resp: &Response, what: &str) {
    assert_eq!(resp.status, 200, "{what}: {}", resp.text());
    assert_eq!(resp.json(), json!({"success": false}), "{what}");
    assert_eq!(set_cookies(resp), Vec::<&str>::new(), "{what}: no cookie");
}

/// The local users alice (two groups) and bob.
fn users(enabled: bool) -> Value {
    json!({
        "enabled": enabled,
        "users": [
            {"username": "alice", "usergroup": "admins ops", "password": phc(ALICE_PW)},
            {"username": "bob", "usergroup": "users", "password": phc(BOB_PW)},
        ],
    })
}

/// A config with one harmless action plus the top-level keys of `extra`.
fn config(extra: Value) -> Value {
    let mut config = config_with(vec![shell_action("hello", "echo hello")]);
    let (Value::Object(base), Value::Object(extra)) = (&mut config, extra) else {
        panic!("configs are mappings");
    };
    base.extend(extra);
    config
}

/// The guest, as WhoAmI describes it.
fn guest() -> Value {
    json!({
        "authenticatedUser": "guest",
        "usergroup": "guest",
        "provider": "system",
        "acls": [],
        "sid": "",
    })
}

// ---------------------------------------------------------------------------------------
// LocalUserLogin

#[test]
fn login_success_sets_the_session_cookie_with_every_attribute() {
    let server = Server::start(config(json!({"authLocalUsers": users(true)})));
    let first = login(&server, "alice", ALICE_PW);
    // `session_of` checks the body, the single cookie, its UUIDv4 and every attribute; the
    // exact text is checked too, as a browser-facing contract that reviewers read.
    let sid = session_of(&first);
    assert_eq!(
        set_cookies(&first),
        vec![format!(
            "{COOKIE}={sid}; Path=/; Max-Age=31556952; HttpOnly; SameSite=Strict"
        )]
    );
    let second = logged_in(&server, "alice", ALICE_PW);
    assert_ne!(sid, second, "every login is a new session");
    let me = who_am_i(&server, &[("Cookie", &cookie(&sid))]);
    assert_eq!(me["provider"], "local", "{me}");
    assert_eq!(me["sid"], sid.as_str(), "{me}");
}

#[test]
fn login_failures_answer_success_false_without_a_cookie() {
    let server = Server::start(config(json!({"authLocalUsers": users(true)})));
    // Four failures, below the throttle's five, so each is judged on its own.
    for (username, password, what) in [
        ("alice", BOB_PW, "wrong password"),
        ("alice", "", "empty password"),
        ("mallory", ALICE_PW, "unknown user"),
        ("ALICE", ALICE_PW, "usernames are exact"),
    ] {
        assert_refused(&login(&server, username, password), what);
    }
    // The refusals did not lock out the right password from this address.
    logged_in(&server, "alice", ALICE_PW);
}

#[test]
fn login_is_refused_when_local_login_is_disabled() {
    let server = Server::start(config(json!({"authLocalUsers": users(false)})));
    assert_refused(
        &login(&server, "alice", ALICE_PW),
        "right password, login disabled",
    );
    let init = server.ok("Init", json!({}));
    assert_eq!(init["authLocalLogin"], false, "{init}");
}

// The login throttle: `sessions.rs`.

// ---------------------------------------------------------------------------------------
// Logout

#[test]
fn logout_clears_the_cookie_and_revokes_the_session_on_the_server() {
    let server = Server::start(config(json!({"authLocalUsers": users(true)})));
    let sid = logged_in(&server, "alice", ALICE_PW);
    let other = logged_in(&server, "alice", ALICE_PW);
    let session = cookie(&sid);
    assert_eq!(who_am_i(&server, &[("Cookie", &session)])["sid"], sid);

    let resp = call_with(&server, "Logout", json!({}), &[("Cookie", &session)]);
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json(), json!({}));
    let cookies = set_cookies(&resp);
    assert_eq!(cookies.len(), 1, "Set-Cookie headers: {cookies:?}");
    let (pair, attributes) = cookie_parts(cookies[0]);
    assert_eq!(pair, format!("{COOKIE}="), "{:?}", cookies[0]);
    assert_eq!(attributes, cookie_attributes("0"), "{:?}", cookies[0]);
    assert_eq!(
        cookies[0],
        format!("{COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict")
    );

    // A client that ignores the cleared cookie and replays the old one is the guest now:
    // the session ended on the server, not only in the browser.
    assert_eq!(who_am_i(&server, &[("Cookie", &session)]), guest());
    // Only that session: alice's other login is untouched.
    let me = who_am_i(&server, &[("Cookie", &cookie(&other))]);
    assert_eq!(
        (&me["authenticatedUser"], &me["sid"]),
        (&json!("alice"), &json!(other))
    );
}

#[test]
fn logout_of_a_guest_answers_and_clears_the_cookie() {
    let server = Server::start(config(json!({"authLocalUsers": users(true)})));
    for headers in [vec![], vec![("Cookie", "svc-sid-local=not-a-session")]] {
        let resp = call_with(&server, "Logout", json!({}), &headers);
        assert_eq!(resp.status, 200, "{headers:?}: {}", resp.text());
        assert_eq!(resp.json(), json!({}));
        assert_eq!(
            set_cookies(&resp),
            vec![format!(
                "{COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict"
            )]
        );
    }
}

// ---------------------------------------------------------------------------------------
// WhoAmI and the identification order

/// Local users, a token, trusted headers from loopback (the default trustedProxies), and
/// ACLs that match by name, by group, and nobody.
fn everyone_config() -> Value {
    config(json!({
        "authLocalUsers": users(true),
        "authApiTokens": [{
            "name": "home-assistant",
            "sha256": sha256_hex(HA_TOKEN),
            "username": "home-assistant",
            "usergroup": "automation,ops",
        }],
        "authHttpHeaderUsername": "X-User",
        "authHttpHeaderUserGroup": "X-Group",
        "accessControlLists": [
            {"name": "by-name", "matchUsernames": ["alice"]},
            {"name": "by-group", "matchUsergroups": ["ops"]},
            {"name": "for-nobody", "matchUsernames": ["nobody"], "matchUsergroups": ["nobody"]},
        ],
    }))
}

/// WhoAmI by POST and by `GET /api/WhoAmI`, which must agree; returns the answer.
fn who_am_i_both_ways(server: &Server, headers: &[(&str, &str)]) -> Value {
    let post = who_am_i(server, headers);
    let resp = send(server.addr, &get_request("/api/WhoAmI", headers));
    assert_eq!(resp.status, 200, "GET /api/WhoAmI: {}", resp.text());
    assert_eq!(resp.json(), post, "GET and POST WhoAmI differ");
    post
}

#[test]
fn who_am_i_describes_every_provider_in_both_forms() {
    let server = Server::start(everyone_config());
    assert_eq!(who_am_i_both_ways(&server, &[]), guest());

    let sid = logged_in(&server, "alice", ALICE_PW);
    assert_eq!(
        who_am_i_both_ways(&server, &[("Cookie", &cookie(&sid))]),
        json!({
            "authenticatedUser": "alice",
            "usergroup": "admins ops",
            "provider": "local",
            "acls": ["by-name", "by-group"],
            "sid": sid,
        })
    );

    assert_eq!(
        who_am_i_both_ways(&server, &[("X-User", "carol"), ("X-Group", "users, ops")]),
        json!({
            "authenticatedUser": "carol",
            "usergroup": "users, ops",
            "provider": "header",
            "acls": ["by-group"],
            "sid": "",
        })
    );
    // A header user with no group header: no group, so only name ACLs could match.
    assert_eq!(
        who_am_i_both_ways(&server, &[("X-User", "alice")]),
        json!({
            "authenticatedUser": "alice",
            "usergroup": "",
            "provider": "header",
            "acls": ["by-name"],
            "sid": "",
        })
    );

    assert_eq!(
        who_am_i_both_ways(&server, &[("Authorization", &bearer(HA_TOKEN))]),
        json!({
            "authenticatedUser": "home-assistant",
            "usergroup": "automation,ops",
            "provider": "token",
            "acls": ["by-group"],
            "sid": "",
        })
    );
}

#[test]
fn identification_order_is_token_then_header_then_cookie_then_guest() {
    let server = Server::start(everyone_config());
    let sid = logged_in(&server, "bob", BOB_PW);
    let token = bearer(HA_TOKEN);
    let session = cookie(&sid);
    let all: Vec<(&str, &str)> = vec![
        ("Authorization", &token),
        ("X-User", "carol"),
        ("X-Group", "ops"),
        ("Cookie", &session),
    ];
    let provider = |headers: &[(&str, &str)]| {
        let me = who_am_i(&server, headers);
        (
            me["provider"].as_str().unwrap_or_default().to_string(),
            me["authenticatedUser"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        )
    };
    assert_eq!(provider(&all), ("token".into(), "home-assistant".into()));
    assert_eq!(provider(&all[1..]), ("header".into(), "carol".into()));
    assert_eq!(provider(&all[3..]), ("local".into(), "bob".into()));
    assert_eq!(provider(&[]), ("system".into(), "guest".into()));
}

// ---------------------------------------------------------------------------------------
// API tokens

/// Every unary operation with a body that would pass its field checks, so an answer of 401
/// can only come from identification or the gate. EventStream is streaming (its errors go
/// in the end-stream envelope), so it is not in this list: its gate is tested in
/// `events.rs`.
fn unary_operations() -> Vec<(&'static str, Value)> {
    vec![
        ("StartAction", json!({"actionId": "hello"})),
        ("StartActionAndWait", json!({"actionId": "hello"})),
        ("StartActionByGet", json!({"actionId": "hello"})),
        ("StartActionByGetAndWait", json!({"actionId": "hello"})),
        ("RestartAction", json!({"executionTrackingId": "t-1"})),
        ("KillAction", json!({"executionTrackingId": "t-1"})),
        ("ExecutionStatus", json!({"actionId": "hello"})),
        ("GetLogs", json!({"startOffset": 0})),
        (
            "GetActionLogs",
            json!({"actionId": "hello", "startOffset": 0}),
        ),
        ("GetDashboard", json!({"title": ""})),
        ("GetActionBinding", json!({"bindingId": "hello"})),
        ("GetEntities", json!({})),
        ("GetEntity", json!({"uniqueKey": "k", "type": "t"})),
        ("ValidateArgumentType", json!({"type": "int", "value": "1"})),
        (
            "LocalUserLogin",
            json!({"username": "alice", "password": "nope"}),
        ),
        ("Logout", json!({})),
        ("WhoAmI", json!({})),
        ("PasswordHash", json!({"password": "x"})),
        ("Init", json!({})),
        ("GetReadyz", json!({})),
        ("GetDiagnostics", json!({})),
        ("SosReport", json!({})),
        ("DumpVars", json!({})),
        ("DumpPublicIdActionMap", json!({})),
    ]
}

/// The GET routes that identify their caller.
const GET_ROUTES: [&str; 3] = [
    "/api/StartActionByGet/hello",
    "/api/StartActionByGetAndWait/hello",
    "/api/WhoAmI",
];

#[test]
fn a_configured_token_identifies_its_user_and_any_other_token_is_refused_everywhere() {
    let server = Server::start(everyone_config());
    let me = who_am_i(&server, &[("Authorization", &bearer(HA_TOKEN))]);
    assert_eq!(me["provider"], "token", "{me}");
    // The configured hash itself is not a token, nor is a near miss of the token.
    let hash = sha256_hex(HA_TOKEN);
    let near_miss = format!("{HA_TOKEN}x");
    for wrong in ["wrong-token", hash.as_str(), near_miss.as_str()] {
        let auth = bearer(wrong);
        let headers = [("Authorization", auth.as_str())];
        for (op, body) in unary_operations() {
            let resp = call_with(&server, op, body.clone(), &headers);
            let message = assert_error(&resp, 401, "unauthenticated");
            assert!(
                !message.contains(wrong),
                "{op}: the message repeats the token: {message}"
            );
        }
        for path in GET_ROUTES {
            assert_error(
                &send(server.addr, &get_request(path, &headers)),
                401,
                "unauthenticated",
            );
        }
    }
    // Never the guest: none of those starts ran anything.
    let logs = server.ok("GetLogs", json!({"startOffset": 0}));
    assert_eq!(logs["totalCount"], "0", "{logs}");
}

// ---------------------------------------------------------------------------------------
// Trusted headers

#[test]
fn trusted_headers_count_only_from_a_trusted_proxy() {
    let server = Server::start(config(json!({
        "authLocalUsers": users(true),
        "authHttpHeaderUsername": "X-User",
        "authHttpHeaderUserGroup": "X-Group",
        "trustedProxies": ["127.0.0.2/32"],
    })));
    let headers = [("X-User", "mallory"), ("X-Group", "admins")];
    // From 127.0.0.1, outside the list: the header is ignored, not trusted.
    assert_eq!(who_am_i(&server, &headers), guest());
    let resp = send(server.addr, &get_request("/api/WhoAmI", &headers));
    assert_eq!(resp.json(), guest(), "GET form");
    // Ignored means the next credential decides: a session cookie still counts.
    let sid = logged_in(&server, "bob", BOB_PW);
    let session = cookie(&sid);
    let me = who_am_i(&server, &[headers[0], headers[1], ("Cookie", &session)]);
    assert_eq!(
        (&me["provider"], &me["authenticatedUser"]),
        (&json!("local"), &json!("bob"))
    );

    // From 127.0.0.2, the trusted proxy: the header names the user.
    let resp = send_from(
        server.addr,
        OTHER_ADDRESS,
        &request("WhoAmI", &json!({}), &headers),
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(
        resp.json(),
        json!({
            "authenticatedUser": "mallory",
            "usergroup": "admins",
            "provider": "header",
            "acls": [],
            "sid": "",
        })
    );
}

#[test]
fn the_default_trusted_proxies_are_all_of_loopback() {
    // No trustedProxies key: 127.0.0.1/8 and ::1/128, so a proxy on 127.0.0.2 counts.
    let server = Server::start(config(json!({"authHttpHeaderUsername": "X-User"})));
    let resp = send_from(
        server.addr,
        OTHER_ADDRESS,
        &request("WhoAmI", &json!({}), &[("X-User", "dave")]),
    );
    let me = resp.json();
    assert_eq!(
        (&me["provider"], &me["authenticatedUser"]),
        (&json!("header"), &json!("dave")),
        "{me}"
    );
}
