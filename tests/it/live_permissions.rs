//! Permissions that follow the config in force and the caller's live session, tried as a
//! low-privilege user would. Every test has two local users (alice, an admin; bob, a member
//! of `users`), an API token (`home-assistant`, group `automation`) and a reload of the
//! config in the middle, and checks through the wire that what the reload or a Logout took
//! away is gone at once:
//!
//! - an open EventStream ends with `unauthenticated` when its session ends (Logout), when its
//!   user or token leaves the config, or when guests must log in from now on; a change of
//!   permissions applies from the next event;
//! - a check on a run (ExecutionStatus, GetLogs, GetActionLogs, KillAction, the event
//!   stream, `/metrics`) uses the action of the config in force, not the one the run started
//!   with; a run whose action is gone is readable only with `logs` on every action;
//! - RestartAction of a run with password values works only for the caller who started it;
//! - `authRequireGuestsToLogin: true` takes the default permissions from guests only;
//! - GetEntities and GetEntity show only what the caller may view, SosReport and
//!   GetDiagnostics need the showDiagnostics policy.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::client::{Response, assert_error, send};
use crate::events::{EventStream, Next, subscribe};
use crate::harness::{GATED, SOON, Server, to_yaml, wait_until};
use crate::identity::{bearer, call_with, cookie, get_request, phc, sha256_hex};

pub const ALICE_PW: &str = "alice live permissions";
pub const BOB_PW: &str = "bob live permissions";
pub const TOKEN: &str = "ha-live-permissions-0f1e2d3c4b5a69788796a5b4c3d2e1f0";

/// How long a reload may take: the watcher's 2 s settle and second read, plus a wide margin.
const RELOAD: Duration = Duration::from_secs(10);

const ALL: &str = "all";

fn all() -> Value {
    json!({"view": true, "exec": true, "logs": true, "kill": true})
}

fn none() -> Value {
    json!({"view": false, "exec": false, "logs": false, "kill": false})
}

/// alice (admins) and bob (users), and the `home-assistant` token (automation).
pub fn identities() -> Value {
    json!({
        "authLocalUsers": {"enabled": true, "users": [
            {"username": "alice", "usergroup": "admins", "password": phc(ALICE_PW)},
            {"username": "bob", "usergroup": "users", "password": phc(BOB_PW)},
        ]},
        "authApiTokens": [{"name": "ha", "sha256": sha256_hex(TOKEN),
                           "username": "home-assistant", "usergroup": "automation"}],
    })
}

/// `identities()` with the top-level keys of `extra` added (or replaced).
pub fn with_identities(extra: Value) -> Value {
    let mut config = json!({"killGracePeriod": 1});
    merge(&mut config, identities());
    merge(&mut config, extra);
    config
}

pub fn merge(into: &mut Value, from: Value) {
    if let (Value::Object(a), Value::Object(b)) = (into, from) {
        a.extend(b);
    }
}

/// The server, and the credentials of the three callers as request headers.
pub struct Board {
    pub server: Server,
    pub alice: (&'static str, String),
    pub bob: (&'static str, String),
    pub token: (&'static str, String),
}

impl Board {
    pub fn start(config: Value) -> Board {
        let server = Server::start(config);
        let alice = ("Cookie", cookie(&login(&server, "alice", ALICE_PW)));
        let bob = ("Cookie", cookie(&login(&server, "bob", BOB_PW)));
        Board {
            server,
            alice,
            bob,
            token: ("Authorization", bearer(TOKEN)),
        }
    }

    pub fn call(&self, who: &(&str, String), op: &str, body: Value) -> Response {
        call_with(&self.server, op, body, &[(who.0, who.1.as_str())])
    }

    /// A call that must succeed.
    pub fn ok(&self, who: &(&str, String), op: &str, body: Value) -> Value {
        let resp = self.call(who, op, body.clone());
        assert_eq!(resp.status, 200, "{op} {body}: {}", resp.text());
        resp.json()
    }

    /// Runs `action` as `who` and waits for it; returns its tracking id.
    pub fn run(&self, who: &(&str, String), action: &str) -> String {
        let done = self.ok(who, "StartActionAndWait", json!({"actionId": action}));
        about(&done)
    }

    /// Writes `config` over the config file (by rename, as editors do) and waits until the
    /// service says it reloaded it.
    pub fn reload(&self, config: &Value) {
        reload(&self.server, config);
    }

    /// An EventStream as `who` (or the guest), with its head read.
    pub fn stream(&self, who: Option<&(&str, String)>) -> EventStream {
        let sock = TcpStream::connect_timeout(&self.server.addr, SOON).expect("connect");
        let mut req = subscribe();
        if let Some((name, value)) = who {
            req = req.header(name, value);
        }
        let s = EventStream::start(sock, &req);
        s.assert_stream_head();
        s
    }
}

/// Writes `config` by rename and waits for the `config reloaded` line it causes.
pub fn reload(server: &Server, config: &Value) {
    // The watcher is armed just after the service starts listening: a change made before
    // that would go unnoticed.
    assert!(
        wait_until(RELOAD, || server.log_contains("for changes")),
        "the service never said it watches its files"
    );
    let before = server.log_count("config reloaded");
    let path = server.path("config.yaml");
    let tmp = server.path("config.yaml.tmp");
    std::fs::write(&tmp, to_yaml(config)).expect("write the new config");
    std::fs::rename(&tmp, &path).expect("rename the new config");
    assert!(
        wait_until(RELOAD, || server.log_count("config reloaded") > before),
        "the config was not reloaded"
    );
}

/// Logs in (which must succeed) and returns the session id.
pub fn login(server: &Server, username: &str, password: &str) -> String {
    let resp = call_with(
        server,
        "LocalUserLogin",
        json!({"username": username, "password": password}),
        &[],
    );
    assert_eq!(resp.status, 200, "login {username}: {}", resp.text());
    assert_eq!(resp.json()["success"], true, "login {username}");
    let set = resp.header("Set-Cookie").expect("a session cookie");
    set.split(';')
        .next()
        .and_then(|pair| pair.strip_prefix("svc-sid-local="))
        .expect("the session cookie")
        .to_string()
}

/// The event (its one member's name and body) of an event envelope, or the end-stream JSON.
#[derive(Debug)]
pub enum Got {
    Event(String, Value),
    End(Value),
    /// Read only through `Debug`, in the messages of failed assertions.
    #[allow(dead_code)]
    Nothing(String),
}

pub fn next(stream: &mut EventStream, timeout: Duration) -> Got {
    match stream.next(timeout) {
        Next::Frame(f) => {
            let json: Value = serde_json::from_slice(&f.payload).expect("JSON envelope");
            if f.is_end() {
                return Got::End(json);
            }
            let (kind, body) = json
                .as_object()
                .and_then(|o| o.iter().next())
                .map(|(k, v)| (k.clone(), v.clone()))
                .expect("an event has one member");
            Got::Event(kind, body)
        }
        other => Got::Nothing(format!("{other:?}")),
    }
}

/// The tracking id an event is about ("" for config events).
pub fn about(body: &Value) -> String {
    body["executionTrackingId"]
        .as_str()
        .or_else(|| body["logEntry"]["executionTrackingId"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// Reads events until the one `want` accepts; panics if the stream ends first.
pub fn wait_event(stream: &mut EventStream, what: &str, want: impl Fn(&str, &Value) -> bool) {
    let deadline = Instant::now() + SOON;
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match next(stream, left) {
            Got::Event(kind, body) if want(&kind, &body) => return,
            Got::Event(kind, body) => seen.push(format!("{kind} {}", about(&body))),
            other => panic!("waiting for {what}: {other:?} after {seen:?}"),
        }
    }
}

/// Asserts that the stream's next envelope ends it with `unauthenticated`, then the body.
pub fn assert_ended_unauthenticated(stream: &mut EventStream, whose: &str) {
    match next(stream, SOON) {
        Got::End(json) => {
            assert_eq!(
                json["error"]["code"], "unauthenticated",
                "{whose}'s stream ended with {json}"
            );
            assert!(
                json["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty()),
                "{json}"
            );
        }
        other => panic!("{whose}'s stream went on: {other:?}"),
    }
    assert!(
        matches!(stream.next(SOON), Next::End),
        "{whose}'s body did not end after the end-stream envelope"
    );
}

/// A config where everyone named may see everything: alice through her group, bob and the
/// token through ACLs of their own on every action.
fn open_config(users: Value, tokens: Value, require_login: bool) -> Value {
    let mut config = with_identities(json!({
        "authRequireGuestsToLogin": require_login,
        "defaultPermissions": {"view": true, "exec": true, "logs": true, "kill": false},
        "accessControlLists": [{"name": ALL, "matchUsergroups": ["admins", "users", "automation"],
                                "addToEveryAction": true, "permissions": all()}],
        "actions": [{"id": "hello", "title": "Hello", "shell": "echo hello"}],
    }));
    config["authLocalUsers"]["users"] = users;
    config["authApiTokens"] = tokens;
    config
}

// ---------------------------------------------------------------------------------------
// 1. Streams end with their session, their user or their token

#[test]
fn an_event_stream_ends_with_logout_and_with_its_user_or_token_leaving_the_config() {
    let users = identities()["authLocalUsers"]["users"].clone();
    let tokens = identities()["authApiTokens"].clone();
    let board = Board::start(open_config(users.clone(), tokens.clone(), false));
    let mut alice = board.stream(Some(&board.alice));
    let mut bob = board.stream(Some(&board.bob));
    let mut token = board.stream(Some(&board.token));
    let mut guest = board.stream(None);

    let id = board.run(&board.alice, "hello");
    for (s, who) in [
        (&mut alice, "alice"),
        (&mut bob, "bob"),
        (&mut token, "token"),
    ] {
        wait_event(s, who, |k, b| k == "executionFinished" && about(b) == id);
    }

    // Bob logs out: his stream ends now, not at the next event.
    board.ok(&board.bob, "Logout", json!({}));
    assert_ended_unauthenticated(&mut bob, "bob (logged out)");
    let me = board.ok(&board.bob, "WhoAmI", json!({}));
    assert_eq!(me["authenticatedUser"], "guest", "{me}");

    // Bob logs in again and opens a new stream; a reload removes him and the token.
    let bob_again = ("Cookie", cookie(&login(&board.server, "bob", BOB_PW)));
    let mut bob2 = board.stream(Some(&bob_again));
    let only_alice: Vec<Value> = users
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["username"] == "alice")
        .cloned()
        .collect();
    board.reload(&open_config(json!(only_alice), json!([]), false));
    assert_ended_unauthenticated(&mut bob2, "bob (removed)");
    assert_ended_unauthenticated(&mut token, "the token (removed)");
    // The removed token is refused outright now.
    let refused = board.call(&board.token, "WhoAmI", json!({}));
    assert_error(&refused, 401, "unauthenticated");

    // Alice and the guest go on: they see the reload and the next run.
    let id = board.run(&board.alice, "hello");
    for (s, who) in [(&mut alice, "alice"), (&mut guest, "guest")] {
        wait_event(s, who, |k, _| k == "configChanged");
        wait_event(s, who, |k, b| k == "executionFinished" && about(b) == id);
    }

    // Guests must log in from now on: the guest's stream ends, alice's goes on.
    board.reload(&open_config(json!(only_alice), json!([]), true));
    assert_ended_unauthenticated(&mut guest, "the guest (must log in)");
    wait_event(&mut alice, "alice", |k, _| k == "configChanged");
}

// ---------------------------------------------------------------------------------------
// 2. Checks on a run use the config in force

/// alice may do anything anywhere (group admins); bob and the token only what the `team`
/// ACL gives on the actions that list it, and `mine` is theirs alone.
fn team_config(team_on_work: bool, with_work: bool) -> Value {
    let acls = if team_on_work {
        json!(["team"])
    } else {
        json!([])
    };
    let mut actions = vec![json!({"id": "mine", "title": "Mine", "shell": "echo mine",
                                  "acls": ["team"], "maxConcurrent": 5})];
    if with_work {
        actions.push(json!({"id": "work", "title": "Work", "shell": "echo work",
                            "acls": acls, "maxConcurrent": 5}));
        actions.push(json!({"id": "long", "title": "Long", "shell": GATED, "acls": acls}));
    }
    with_identities(json!({
        "defaultPermissions": none(),
        "prometheus": {"enabled": true},
        "accessControlLists": [
            {"name": "admins", "matchUsergroups": ["admins"], "addToEveryAction": true,
             "permissions": all()},
            {"name": "team", "matchUsergroups": ["users", "automation"], "permissions": all()},
        ],
        "actions": actions,
    }))
}

fn total(reply: &Value) -> u64 {
    reply["totalCount"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("totalCount in {reply}"))
}

/// How many runs `who` sees: in GetLogs, and in GetActionLogs of `work`.
fn seen(board: &Board, who: &(&str, String)) -> (u64, u64) {
    let logs = board.ok(who, "GetLogs", json!({"startOffset": 0}));
    let work = board.ok(
        who,
        "GetActionLogs",
        json!({"actionId": "work", "startOffset": 0}),
    );
    (total(&logs), total(&work))
}

/// Whether `/metrics`, read as `who`, has a series of action `id`.
fn metrics_show(board: &Board, who: &(&str, String), id: &str) -> bool {
    let resp = send(
        board.server.addr,
        &get_request("/metrics", &[(who.0, who.1.as_str())]),
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
    resp.text().contains(&format!("action=\"{id}\""))
}

#[test]
fn runs_are_judged_by_the_action_in_force_not_the_one_they_started_with() {
    let board = Board::start(team_config(true, true));
    let done = board.run(&board.alice, "work");
    let running =
        board.ok(&board.alice, "StartAction", json!({"actionId": "long"}))["executionTrackingId"]
            .as_str()
            .unwrap()
            .to_string();
    assert!(wait_until(SOON, || {
        board.ok(
            &board.alice,
            "ExecutionStatus",
            json!({"executionTrackingId": running}),
        )["logEntry"]["executionStarted"]
            == true
    }));
    // Before the reload, bob and the token see alice's runs through `team`.
    for who in [&board.bob, &board.token] {
        board.ok(who, "ExecutionStatus", json!({"executionTrackingId": done}));
        assert_eq!(seen(&board, who), (2, 1));
        assert!(metrics_show(&board, who, "work"));
    }
    let mut bob_events = board.stream(Some(&board.bob));

    // The reload takes `team` off both actions.
    board.reload(&team_config(false, true));
    for who in [&board.bob, &board.token] {
        for id in [&done, &running] {
            let resp = board.call(who, "ExecutionStatus", json!({"executionTrackingId": id}));
            assert_error(&resp, 403, "permission_denied");
        }
        assert_eq!(seen(&board, who), (0, 0));
        let kill = board.call(who, "KillAction", json!({"executionTrackingId": running}));
        assert_error(&kill, 403, "permission_denied");
        assert!(
            !metrics_show(&board, who, "work"),
            "metrics still show work"
        );
    }
    let entry = board.ok(
        &board.alice,
        "ExecutionStatus",
        json!({"executionTrackingId": running}),
    )["logEntry"]
        .clone();
    assert_eq!(
        entry["executionFinished"], false,
        "the refused kill killed: {entry}"
    );

    // The next event of `work` does not reach bob; the next one of `mine` does.
    let hidden = board.run(&board.alice, "work");
    let seen = board.run(&board.bob, "mine");
    let deadline = Instant::now() + SOON;
    loop {
        match next(
            &mut bob_events,
            deadline.saturating_duration_since(Instant::now()),
        ) {
            Got::Event(kind, body) => {
                assert_ne!(about(&body), hidden, "bob saw {kind} of alice's hidden run");
                assert_ne!(about(&body), running, "bob saw {kind} of the running run");
                if kind == "executionFinished" && about(&body) == seen {
                    break;
                }
            }
            other => panic!("bob's stream: {other:?}"),
        }
    }

    // The action is removed: its runs are readable only with `logs` on every action.
    std::fs::write(board.server.path("go"), "").unwrap();
    finished(&board, &board.alice, &running);
    board.reload(&team_config(true, false));
    board.ok(
        &board.alice,
        "ExecutionStatus",
        json!({"executionTrackingId": done}),
    );
    for who in [&board.bob, &board.token] {
        let resp = board.call(who, "ExecutionStatus", json!({"executionTrackingId": done}));
        assert_error(&resp, 403, "permission_denied");
        // Their own run of `mine` is all they see.
        assert_eq!(
            total(&board.ok(who, "GetLogs", json!({"startOffset": 0}))),
            1
        );
    }
    assert_eq!(
        total(&board.ok(&board.alice, "GetLogs", json!({"startOffset": 0}))),
        4
    );
}

// ---------------------------------------------------------------------------------------
// 3. RestartAction does not replay someone else's secrets

fn secret_config(title: &str) -> Value {
    with_identities(json!({
        "defaultPermissions": none(),
        "accessControlLists": [
            {"name": "admins", "matchUsergroups": ["admins"], "addToEveryAction": true,
             "permissions": all()},
            {"name": "team", "matchUsergroups": ["users", "automation"], "addToEveryAction": true,
             "permissions": {"view": true, "exec": true, "logs": true}},
        ],
        "actions": [
            {"id": "deploy", "title": title, "maxConcurrent": 5,
             "shell": "echo \"to $TARGET with ${#KEY} characters of key\"",
             "arguments": [{"name": "target", "type": "ascii", "default": "staging"},
                           {"name": "key", "type": "password"}]},
        ],
    }))
}

/// Polls ExecutionStatus as `who` until the run has finished; returns its entry.
pub fn finished(board: &Board, who: &(&str, String), id: &str) -> Value {
    let mut entry = Value::Null;
    let done = wait_until(SOON, || {
        entry = board.ok(who, "ExecutionStatus", json!({"executionTrackingId": id}))["logEntry"]
            .clone();
        entry["executionFinished"] == true
    });
    assert!(done, "{id} did not finish: {entry}");
    entry
}

fn restart(board: &Board, who: &(&str, String), id: &str) -> Response {
    board.call(who, "RestartAction", json!({"executionTrackingId": id}))
}

#[test]
fn only_the_caller_who_typed_a_secret_may_restart_its_run() {
    let board = Board::start(secret_config("Deploy"));
    let start = |who: &(&str, String), key: &str| -> String {
        let body = json!({"actionId": "deploy", "arguments": [
            {"name": "target", "value": "prod"}, {"name": "key", "value": key}]});
        let entry = board.ok(who, "StartActionAndWait", body)["logEntry"].clone();
        assert_eq!(entry["exitCode"], 0, "{entry}");
        entry["executionTrackingId"].as_str().unwrap().to_string()
    };
    let alices = start(&board.alice, "hunter2");
    let without_secret = start(&board.alice, "");
    board.reload(&secret_config("Deploy again"));

    for who in [&board.bob, &board.token] {
        let resp = restart(&board, who, &alices);
        let message = assert_error(&resp, 403, "permission_denied");
        assert!(
            message.contains("again") && message.contains("password"),
            "the refusal should say the secrets must be entered again: {message}"
        );
        // A run of the same action without a typed secret may be restarted by anyone with
        // exec.
        let again = restart(&board, who, &without_secret);
        assert_eq!(again.status, 200, "{}", again.text());
    }
    // Alice may, and her restart replays her value (seven characters) as hers.
    let resp = restart(&board, &board.alice, &alices);
    assert_eq!(resp.status, 200, "{}", resp.text());
    let new = resp.json()["executionTrackingId"]
        .as_str()
        .unwrap()
        .to_string();
    let entry = finished(&board, &board.alice, &new);
    assert_eq!(
        entry["stdout"], "to prod with 7 characters of key\n",
        "{entry}"
    );
    assert_eq!(entry["user"], "alice");
    // Her restart carries the secret too: still hers alone.
    let resp = restart(&board, &board.bob, &new);
    assert_error(&resp, 403, "permission_denied");
    // The refused restarts ran nothing.
    let logs = board.ok(&board.alice, "GetLogs", json!({"startOffset": 0}));
    assert_eq!(total(&logs), 5, "{logs}");
}

// ---------------------------------------------------------------------------------------
// 9. Requiring guests to log in takes the default permissions from guests only

fn gated_config(require_login: bool) -> Value {
    with_identities(json!({
        "authRequireGuestsToLogin": require_login,
        "actions": [
            {"id": "hello", "title": "Hello", "shell": "echo hello"},
            {"id": "boot", "title": "At start-up", "shell": "echo booted", "execOnStartup": true},
        ],
    }))
}

#[test]
fn requiring_guests_to_log_in_leaves_the_default_permissions_to_everyone_else() {
    let board = Board::start(gated_config(true));
    let check = |board: &Board| {
        for (who, name) in [
            (&board.alice, "alice"),
            (&board.bob, "bob"),
            (&board.token, "token"),
        ] {
            let entry =
                board.ok(who, "StartActionAndWait", json!({"actionId": "hello"}))["logEntry"]
                    .clone();
            assert_eq!(entry["stdout"], "hello\n", "{name}: {entry}");
            let logs = board.ok(who, "GetLogs", json!({"startOffset": 0}));
            assert!(total(&logs) > 0, "{name} reads the logs");
        }
        let guest = call_with(
            &board.server,
            "StartAction",
            json!({"actionId": "hello"}),
            &[],
        );
        assert_error(&guest, 401, "unauthenticated");
    };
    check(&board);
    // The start-up trigger ran under its own user, which is no guest.
    let logs = board.ok(&board.alice, "GetLogs", json!({"startOffset": 0}));
    let entries = logs["logs"].as_array().unwrap();
    assert!(
        entries
            .iter()
            .any(|e| e["user"] == "startup" && e["stdout"] == "booted\n"),
        "{logs}"
    );
    board.reload(&gated_config(false));
    let guest = call_with(
        &board.server,
        "StartActionAndWait",
        json!({"actionId": "hello"}),
        &[],
    );
    assert_eq!(guest.status, 200, "{}", guest.text());
    board.reload(&gated_config(true));
    check(&board);
}

// ---------------------------------------------------------------------------------------
// 8. Entities follow `view`; diagnostics follow the policy

fn entity_config(bob_sees: bool) -> Value {
    let acls = if bob_sees { json!(["team"]) } else { json!([]) };
    with_identities(json!({
        "defaultPermissions": none(),
        "entities": [{"file": "servers.yaml", "name": "server"}],
        "accessControlLists": [
            {"name": "admins", "matchUsergroups": ["admins"], "addToEveryAction": true,
             "permissions": all(), "policy": {"showDiagnostics": true}},
            {"name": "team", "matchUsergroups": ["users", "automation"],
             "permissions": {"view": true}},
        ],
        "actions": [
            {"id": "ping", "title": "Ping {{ .CurrentEntity.name }}", "entity": "server",
             "shell": "echo ping", "acls": acls},
        ],
    }))
}

#[test]
fn entities_show_only_to_who_may_view_them_and_diagnostics_need_the_policy() {
    let config = entity_config(false);
    let server = Server::start(config.clone());
    std::fs::write(
        server.path("servers.yaml"),
        "- {id: alpha, name: Alpha}\n- {id: beta, name: Beta}\n",
    )
    .unwrap();
    reload(&server, &config);
    let alice = ("Cookie", cookie(&login(&server, "alice", ALICE_PW)));
    let bob = ("Cookie", cookie(&login(&server, "bob", BOB_PW)));
    let board = Board {
        server,
        alice,
        bob,
        token: ("Authorization", bearer(TOKEN)),
    };
    let types = |who: &(&str, String)| -> Vec<String> {
        let reply = board.ok(who, "GetEntities", json!({}));
        reply["entityDefinitions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| !d["instances"].as_array().unwrap().is_empty())
            .map(|d| d["title"].as_str().unwrap().to_string())
            .collect()
    };
    let entity = |who: &(&str, String)| {
        board.call(
            who,
            "GetEntity",
            json!({"uniqueKey": "alpha", "type": "server"}),
        )
    };
    assert_eq!(types(&board.alice), ["server"]);
    assert_eq!(entity(&board.alice).status, 200);
    for who in [&board.bob, &board.token] {
        assert_eq!(types(who), Vec::<String>::new());
        assert_error(&entity(who), 403, "permission_denied");
    }
    let guest = call_with(&board.server, "GetEntities", json!({}), &[]);
    assert!(
        guest.json()["entityDefinitions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["instances"].as_array().unwrap().is_empty())
    );

    board.reload(&entity_config(true));
    for who in [&board.bob, &board.token] {
        assert_eq!(types(who), ["server"]);
        assert_eq!(entity(who).status, 200);
    }

    // Diagnostics: only with the showDiagnostics policy (alice's ACL), never by default.
    for (who, name) in [
        (Some(&board.bob), "bob"),
        (Some(&board.token), "token"),
        (None, "guest"),
    ] {
        let headers: Vec<(&str, &str)> = who.iter().map(|w| (w.0, w.1.as_str())).collect();
        for op in ["GetDiagnostics", "SosReport"] {
            let resp = call_with(&board.server, op, json!({}), &headers);
            assert_error(&resp, 403, "permission_denied");
            let _ = name;
        }
    }
    let before = board.server.log_count("sos report");
    board.ok(&board.alice, "GetDiagnostics", json!({}));
    let sos = board.ok(&board.alice, "SosReport", json!({}));
    assert!(sos["alert"].as_str().unwrap().contains("log"), "{sos}");
    assert!(wait_until(SOON, || board.server.log_count("sos report") == before + 1));
}

#[test]
fn the_default_policy_shows_no_diagnostics_to_a_guest() {
    let server = Server::start(json!({"actions": [{"id": "a", "shell": "true"}]}));
    let resp = call_with(&server, "GetDiagnostics", json!({}), &[]);
    assert_error(&resp, 403, "permission_denied");
    let init = server.ok("Init", json!({}));
    assert_eq!(init["effectivePolicy"]["showDiagnostics"], false, "{init}");
}
