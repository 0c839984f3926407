//! Permissions, seen through the wire. The core is a matrix: for each verb
//! (view, exec, logs, kill), a server where the API-token user `u` has exactly that one
//! permission denied (defaultPermissions all false, one ACL for `u` on every action granting
//! the other three), plus one where `u` has all four, and a table of every operation that
//! needs a verb with its exact answer when allowed and when denied. A second token user,
//! `admin`, with every permission, makes the executions that `u` then tries to see, restart
//! and kill, and checks that a refused call changed nothing.
//!
//! Then the ACL rules one by one: `addToEveryAction` against an action's `acls`, matching by
//! any of several groups, and the defaults deciding when no ACL applies. Those use trusted
//! headers from loopback, so one server can stand for many users and groups.

use std::fmt;
use std::time::Duration;

use serde_json::{Value, json};

use crate::client::{Response, send};
use crate::harness::{Server, started_id, wait_until};
use crate::identity::{bearer, call_with, get_request, request, sha256_hex};

const U_TOKEN: &str = "u-token-0a1b2c3d4e5f60718293a4b5c6d7e8f9";
const ADMIN_TOKEN: &str = "admin-token-f9e8d7c6b5a4938271605f4e3d2c1b0a";

/// How long a killed execution may take to be recorded as finished: the kill grace period
/// (1 s here) plus slack; only a hang detector, `sleep` dies at SIGTERM.
const KILL_BOUND: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    View,
    Exec,
    Logs,
    Kill,
}

impl Verb {
    const ALL: [Verb; 4] = [Verb::View, Verb::Exec, Verb::Logs, Verb::Kill];

    fn key(self) -> &'static str {
        match self {
            Verb::View => "view",
            Verb::Exec => "exec",
            Verb::Logs => "logs",
            Verb::Kill => "kill",
        }
    }
}

/// What an operation answered, reduced to what the matrix compares.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Answer {
    /// 200 with the operation's success body (its shape checked by the probe).
    Ok,
    /// An error: HTTP status and Connect code.
    Error(u16, String),
    /// A log listing that shows every entry `admin` sees.
    SeesAll,
    /// A log listing that shows nothing: `[]` and a totalCount of 0.
    SeesNone,
    /// A log listing that shows some but not all (never expected here).
    SeesSome { seen: String, of: String },
    /// Init's rootDashboards.
    Dashboards(Vec<String>),
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

fn denied() -> Answer {
    Answer::Error(403, "permission_denied".to_string())
}

/// Reduces a response: 200 → `Ok` after `check` accepted the body; else the error.
fn answer(resp: &Response, check: impl Fn(&Value) -> bool) -> Answer {
    if resp.status != 200 {
        let body = resp.json();
        let code = body["code"].as_str().unwrap_or("<no code>").to_string();
        assert!(
            body["message"].as_str().is_some_and(|m| !m.is_empty()),
            "error without a message: {body}"
        );
        return Answer::Error(resp.status, code);
    }
    let body = resp.json();
    assert!(check(&body), "unexpected success body: {body}");
    Answer::Ok
}

/// The matrix server: what `u` may do, the executions `admin` made, and the two callers.
struct Fixture {
    server: Server,
    u: String,
    admin: String,
    /// A finished execution of `fast`, made by admin.
    done: String,
    /// A running execution of `slow`, made by admin.
    running: String,
}

impl Fixture {
    fn start(denied: Option<Verb>) -> Fixture {
        let mut granted = json!({"view": true, "exec": true, "logs": true, "kill": true});
        if let Some(verb) = denied {
            granted[verb.key()] = json!(false);
        }
        let all = json!({"view": true, "exec": true, "logs": true, "kill": true});
        let server = Server::start(json!({
            "killGracePeriod": 1,
            "defaultPermissions": {"view": false, "exec": false, "logs": false, "kill": false},
            "authApiTokens": [
                {"name": "u", "sha256": sha256_hex(U_TOKEN), "username": "u", "usergroup": "users"},
                {"name": "admin", "sha256": sha256_hex(ADMIN_TOKEN), "username": "admin", "usergroup": "admins"},
            ],
            "accessControlLists": [
                {"name": "admin-all", "matchUsernames": ["admin"], "addToEveryAction": true, "permissions": all},
                {"name": "u-acl", "matchUsernames": ["u"], "addToEveryAction": true, "permissions": granted},
            ],
            "actions": [
                // Several at once, so u's starts are never blocked by admin's or each other.
                {"id": "fast", "title": "Fast", "shell": "echo fast", "maxConcurrent": 20},
                {"id": "slow", "title": "Slow", "shell": "sleep 1000"},
            ],
        }));
        let mut fixture = Fixture {
            server,
            u: bearer(U_TOKEN),
            admin: bearer(ADMIN_TOKEN),
            done: String::new(),
            running: String::new(),
        };
        let entry = fixture.as_admin("StartActionAndWait", json!({"actionId": "fast"}));
        fixture.done = entry["logEntry"]["executionTrackingId"]
            .as_str()
            .expect("tracking id")
            .to_string();
        let started = fixture.as_admin("StartAction", json!({"actionId": "slow"}));
        fixture.running = started["executionTrackingId"]
            .as_str()
            .expect("tracking id")
            .to_string();
        fixture
    }

    fn as_u(&self, op: &str, body: Value) -> Response {
        call_with(&self.server, op, body, &[("Authorization", &self.u)])
    }

    fn get_as_u(&self, path: &str) -> Response {
        send(
            self.server.addr,
            &get_request(path, &[("Authorization", &self.u)]),
        )
    }

    /// A call as admin, which must succeed.
    fn as_admin(&self, op: &str, body: Value) -> Value {
        let resp = call_with(
            &self.server,
            op,
            body.clone(),
            &[("Authorization", &self.admin)],
        );
        assert_eq!(resp.status, 200, "admin {op} {body}: {}", resp.text());
        resp.json()
    }

    /// Compares u's listing with admin's, from the same operation and body.
    fn listing(&self, op: &str, body: Value) -> Answer {
        let theirs = self.as_admin(op, body.clone());
        let resp = self.as_u(op, body);
        if resp.status != 200 {
            return answer(&resp, |_| false);
        }
        let mine = resp.json();
        let seen = mine["logs"].as_array().map_or(0, Vec::len);
        let (total, of) = (&mine["totalCount"], &theirs["totalCount"]);
        if total == of && seen == theirs["logs"].as_array().map_or(0, Vec::len) && of != "0" {
            Answer::SeesAll
        } else if total == "0" && seen == 0 {
            Answer::SeesNone
        } else {
            Answer::SeesSome {
                seen: total.to_string(),
                of: of.to_string(),
            }
        }
    }

    /// The number of entries in the history, as admin sees it.
    fn history_len(&self) -> String {
        self.as_admin("GetLogs", json!({"startOffset": 0}))["totalCount"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    fn is_running(&self, tracking_id: &str) -> bool {
        let status = self.as_admin(
            "ExecutionStatus",
            json!({"executionTrackingId": tracking_id}),
        );
        status["logEntry"]["executionFinished"] == false
    }
}

/// A success body of a start: a tracking id.
fn tracking_id(body: &Value) -> bool {
    body["executionTrackingId"]
        .as_str()
        .is_some_and(|id| !id.is_empty())
}

/// A success body of a waiting start: the entry of u's run of `fast`.
fn finished_run_of_u(body: &Value) -> bool {
    let entry = &body["logEntry"];
    entry["user"] == "u" && entry["stdout"] == "fast\n" && entry["exitCode"] == 0
}

/// One row of the matrix: an operation, the verb it needs, and how to call it as u.
struct Case {
    what: &'static str,
    verb: Verb,
    probe: fn(&Fixture) -> Answer,
    allowed: Answer,
    denied: Answer,
}

/// A row for an operation that needs exec: 200 when allowed, 403 when not.
fn exec(what: &'static str, probe: fn(&Fixture) -> Answer) -> Case {
    Case {
        what,
        verb: Verb::Exec,
        probe,
        allowed: Answer::Ok,
        denied: denied(),
    }
}

fn cases() -> Vec<Case> {
    vec![
        // Listings first: later rows add executions, and each listing compares u with
        // admin at the same moment anyway.
        Case {
            what: "GetLogs",
            verb: Verb::Logs,
            probe: |f| f.listing("GetLogs", json!({"startOffset": 0})),
            allowed: Answer::SeesAll,
            denied: Answer::SeesNone,
        },
        Case {
            what: "GetActionLogs",
            verb: Verb::Logs,
            probe: |f| {
                f.listing(
                    "GetActionLogs",
                    json!({"actionId": "fast", "startOffset": 0}),
                )
            },
            allowed: Answer::SeesAll,
            denied: Answer::SeesNone,
        },
        Case {
            what: "ExecutionStatus by tracking id",
            verb: Verb::Logs,
            probe: |f| {
                let resp = f.as_u("ExecutionStatus", json!({"executionTrackingId": f.done}));
                answer(&resp, |b| {
                    b["logEntry"]["executionTrackingId"] == f.done.as_str()
                })
            },
            allowed: Answer::Ok,
            denied: denied(),
        },
        Case {
            what: "ExecutionStatus by action id",
            verb: Verb::Logs,
            probe: |f| {
                let resp = f.as_u("ExecutionStatus", json!({"actionId": "slow"}));
                answer(&resp, |b| {
                    b["logEntry"]["executionTrackingId"] == f.running.as_str()
                })
            },
            allowed: Answer::Ok,
            denied: denied(),
        },
        Case {
            what: "Init rootDashboards",
            verb: Verb::View,
            probe: |f| {
                let resp = f.as_u("Init", json!({}));
                assert_eq!(resp.status, 200, "Init: {}", resp.text());
                let roots = resp.json()["rootDashboards"].clone();
                Answer::Dashboards(serde_json::from_value(roots).expect("a list of titles"))
            },
            allowed: Answer::Dashboards(vec!["Actions".to_string()]),
            denied: Answer::Dashboards(vec![]),
        },
        exec("StartAction", |f| {
            answer(
                &f.as_u("StartAction", json!({"actionId": "fast"})),
                tracking_id,
            )
        }),
        exec("StartActionAndWait", |f| {
            let resp = f.as_u("StartActionAndWait", json!({"actionId": "fast"}));
            answer(&resp, finished_run_of_u)
        }),
        exec("StartActionByGet (POST)", |f| {
            let resp = f.as_u("StartActionByGet", json!({"actionId": "fast"}));
            answer(&resp, tracking_id)
        }),
        exec("StartActionByGetAndWait (POST)", |f| {
            let resp = f.as_u("StartActionByGetAndWait", json!({"actionId": "fast"}));
            answer(&resp, finished_run_of_u)
        }),
        exec("GET /api/StartActionByGet/fast", |f| {
            answer(&f.get_as_u("/api/StartActionByGet/fast"), tracking_id)
        }),
        exec("GET /api/StartActionByGetAndWait/fast", |f| {
            let resp = f.get_as_u("/api/StartActionByGetAndWait/fast");
            answer(&resp, finished_run_of_u)
        }),
        exec("RestartAction", |f| {
            let resp = f.as_u("RestartAction", json!({"executionTrackingId": f.done}));
            answer(&resp, |b| {
                tracking_id(b) && b["executionTrackingId"] != f.done.as_str()
            })
        }),
        Case {
            what: "KillAction",
            verb: Verb::Kill,
            probe: |f| {
                let resp = f.as_u("KillAction", json!({"executionTrackingId": f.running}));
                let got = answer(&resp, |b| {
                    b["killed"] == true && b["found"] == true && b["alreadyCompleted"] == false
                });
                if got == Answer::Ok {
                    // The ladder needs a moment; the entry is final once it has run.
                    let ended = wait_until(KILL_BOUND, || !f.is_running(&f.running));
                    assert!(ended, "killed, yet still running after {KILL_BOUND:?}");
                } else {
                    assert!(f.is_running(&f.running), "refused, yet it was killed");
                }
                got
            },
            allowed: Answer::Ok,
            denied: denied(),
        },
    ]
}

/// Runs the whole table on a server where `denied` is u's one missing permission, and
/// reports every row that differs from the table at once.
fn check_matrix(denied: Option<Verb>) {
    let fixture = Fixture::start(denied);
    let before = fixture.history_len();
    let mut wrong = Vec::new();
    for case in cases() {
        let want = if Some(case.verb) == denied {
            &case.denied
        } else {
            &case.allowed
        };
        let got = (case.probe)(&fixture);
        eprintln!(
            "[matrix] {} denied: {:<40} ({}) → {got}",
            denied.map_or("nothing", Verb::key),
            case.what,
            case.verb.key()
        );
        if &got != want {
            wrong.push(format!(
                "{} (needs {}): expected {want}, got {got}",
                case.what,
                case.verb.key()
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "with {} denied to u:\n  {}",
        denied.map_or("nothing", Verb::key),
        wrong.join("\n  ")
    );
    // A refused start leaves no entry; allowed ones leave one each (six starts, a restart).
    let after = fixture.history_len();
    if denied == Some(Verb::Exec) {
        assert_eq!(after, before, "refused starts created entries");
    } else {
        let added: u64 = after.parse::<u64>().unwrap() - before.parse::<u64>().unwrap();
        assert_eq!(added, 7, "entries added by u's starts");
    }
}

#[test]
fn matrix_all_granted() {
    check_matrix(None);
}

#[test]
fn matrix_view_denied() {
    check_matrix(Some(Verb::View));
}

#[test]
fn matrix_exec_denied() {
    check_matrix(Some(Verb::Exec));
}

#[test]
fn matrix_logs_denied() {
    check_matrix(Some(Verb::Logs));
}

#[test]
fn matrix_kill_denied() {
    check_matrix(Some(Verb::Kill));
}

#[test]
fn the_matrix_covers_every_verb() {
    let cases = cases();
    for verb in Verb::ALL {
        assert!(
            cases.iter().any(|c| c.verb == verb),
            "no operation in the matrix needs {}",
            verb.key()
        );
    }
}

// ---------------------------------------------------------------------------------------
// The ACL rules, with trusted-header users

/// Headers naming a trusted-header user (loopback is a trusted proxy by default).
fn user(name: &'static str, groups: &'static str) -> [(&'static str, &'static str); 2] {
    [("X-User", name), ("X-Group", groups)]
}

/// The status of StartAction of `action` by the given user.
fn exec_status(server: &Server, action: &str, headers: &[(&str, &str)]) -> u16 {
    let resp = call_with(server, "StartAction", json!({"actionId": action}), headers);
    match resp.status {
        200 => {}
        403 => assert_eq!(resp.json()["code"], "permission_denied", "{}", resp.text()),
        other => panic!(
            "StartAction {action} as {headers:?}: {other} {}",
            resp.text()
        ),
    }
    resp.status
}

/// A config of trusted-header users with the given defaults, ACLs and actions.
fn header_config(defaults: Value, acls: Value, actions: Value) -> Value {
    json!({
        "killGracePeriod": 1,
        "authHttpHeaderUsername": "X-User",
        "authHttpHeaderUserGroup": "X-Group",
        "defaultPermissions": defaults,
        "accessControlLists": acls,
        "actions": actions,
    })
}

fn none() -> Value {
    json!({"view": false, "exec": false, "logs": false, "kill": false})
}

#[test]
fn an_acl_applies_to_every_action_or_only_to_the_actions_that_list_it() {
    let server = Server::start(header_config(
        none(),
        json!([
            {"name": "u-listed", "matchUsernames": ["u"], "permissions": {"exec": true}},
            {"name": "v-everywhere", "matchUsernames": ["v"], "addToEveryAction": true,
             "permissions": {"exec": true}},
        ]),
        json!([
            {"id": "listed", "title": "Listed", "shell": "true", "acls": ["u-listed"],
             "maxConcurrent": 10},
            {"id": "unlisted", "title": "Unlisted", "shell": "true", "maxConcurrent": 10},
        ]),
    ));
    let table = [
        ("u", "listed", 200),
        ("u", "unlisted", 403),
        ("v", "listed", 200),
        ("v", "unlisted", 200),
        ("w", "listed", 403),
        ("w", "unlisted", 403),
    ];
    for (name, action, want) in table {
        let headers = [("X-User", name), ("X-Group", "users")];
        assert_eq!(
            exec_status(&server, action, &headers),
            want,
            "{name} on {action}"
        );
    }
    // An ACL that matches is reported by WhoAmI whether or not it applies to any action.
    let me = crate::identity::who_am_i(&server, &user("u", "users"));
    assert_eq!(me["acls"], json!(["u-listed"]), "{me}");
}

#[test]
fn usergroups_match_by_any_of_several_groups() {
    let server = Server::start(header_config(
        none(),
        json!([
            {"name": "ops", "matchUsergroups": ["ops"], "addToEveryAction": true,
             "permissions": {"exec": true}},
            {"name": "a-or-b", "matchUsergroups": ["a", "b"], "addToEveryAction": true,
             "permissions": {"exec": true}},
        ]),
        json!([{"id": "x", "title": "X", "shell": "true", "maxConcurrent": 50}]),
    ));
    let table = [
        ("ops", 200),
        ("users ops", 200),
        ("users,ops", 200),
        ("users, ops", 200),
        ("ops users", 200),
        ("b", 200),
        ("users", 403),
        ("opsx", 403),
        ("xops", 403),
        ("OPS", 403),
        ("", 403),
    ];
    for (groups, want) in table {
        assert_eq!(
            exec_status(&server, "x", &[("X-User", "someone"), ("X-Group", groups)]),
            want,
            "groups {groups:?}"
        );
    }
    // A group ACL does not match a user who merely has that name.
    assert_eq!(exec_status(&server, "x", &user("ops", "users")), 403);
}

#[test]
fn defaults_decide_when_no_acl_applies() {
    let server = Server::start(header_config(
        json!({"view": true, "exec": false, "logs": true, "kill": false}),
        json!([
            {"name": "boss-all", "matchUsernames": ["boss"], "addToEveryAction": true,
             "permissions": {"view": true, "exec": true, "logs": true, "kill": true}},
            // Matches u but applies to no action: neither added everywhere nor listed.
            {"name": "u-nowhere", "matchUsernames": ["u"],
             "permissions": {"view": true, "exec": true, "logs": true, "kill": true}},
        ]),
        json!([{"id": "slow", "title": "Slow", "shell": "sleep 1000", "maxConcurrent": 5}]),
    ));
    let boss = user("boss", "staff");
    let resp = call_with(&server, "StartAction", json!({"actionId": "slow"}), &boss);
    let id = started_id(&resp);

    // u (an ACL that does not apply), w (no ACL at all) and the guest (not gated, so a
    // known caller) all get exactly the defaults.
    let u = user("u", "staff");
    let w = user("w", "staff");
    let callers: [(&str, &[(&str, &str)]); 3] = [("u", &u), ("w", &w), ("guest", &[])];
    for (who, headers) in callers {
        assert_eq!(exec_status(&server, "slow", headers), 403, "{who} exec");
        let resp = call_with(
            &server,
            "ExecutionStatus",
            json!({"executionTrackingId": id}),
            headers,
        );
        assert_eq!(resp.status, 200, "{who} logs: {}", resp.text());
        let resp = call_with(
            &server,
            "KillAction",
            json!({"executionTrackingId": id}),
            headers,
        );
        assert_eq!(
            (resp.status, resp.json()["code"].clone()),
            (403, json!("permission_denied")),
            "{who} kill"
        );
        let init = call_with(&server, "Init", json!({}), headers).json();
        assert_eq!(init["rootDashboards"], json!(["Actions"]), "{who} view");
    }
    let resp = call_with(
        &server,
        "KillAction",
        json!({"executionTrackingId": id}),
        &boss,
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
}

#[test]
fn an_applying_acl_that_says_false_leaves_the_default() {
    // granted when any applying ACL grants it, *else* by defaultPermissions; an
    // ACL's false grants nothing, so it cannot take away what the defaults give.
    let server = Server::start(header_config(
        json!({"view": true, "exec": true, "logs": true, "kill": true}),
        json!([
            {"name": "u-no-exec", "matchUsernames": ["u"], "addToEveryAction": true,
             "permissions": {"exec": false}},
        ]),
        json!([{"id": "x", "title": "X", "shell": "true", "maxConcurrent": 5}]),
    ));
    assert_eq!(exec_status(&server, "x", &user("u", "users")), 200);
}

#[test]
fn a_denied_view_hides_the_default_dashboard_only_when_no_action_is_visible() {
    // Init's "Actions" appears as soon as one action is visible to the caller.
    let server = Server::start(header_config(
        none(),
        json!([
            {"name": "see-one", "matchUsernames": ["u"], "permissions": {"view": true}},
        ]),
        json!([
            {"id": "a", "title": "A", "shell": "true", "acls": ["see-one"]},
            {"id": "b", "title": "B", "shell": "true"},
        ]),
    ));
    let roots = |headers: &[(&str, &str)]| {
        let resp = send(server.addr, &request("Init", &json!({}), headers));
        assert_eq!(resp.status, 200, "{}", resp.text());
        resp.json()["rootDashboards"].clone()
    };
    assert_eq!(roots(&user("u", "users")), json!(["Actions"]));
    assert_eq!(roots(&user("w", "users")), json!([]));
}
