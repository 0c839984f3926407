//! Identity over time and at the door: sessions across a restart of the service and their
//! end when the user leaves the config or changes password, PasswordHash (its refusal of
//! guests and its one-at-a-time rule), Init's identity fields, and the authentication gate
//! with its exact list of open operations. The helpers (users, configs, hashes, login) are
//! the parent file's.

use super::*;

// ---------------------------------------------------------------------------------------
// Sessions across restarts

/// A config with local users and a state directory.
fn persistent_config(state: &TempDir, users: Value) -> Value {
    config(json!({
        "authLocalUsers": users,
        "stateDirectory": state.path().to_str().expect("UTF-8 temp path"),
    }))
}

/// WhoAmI's (user, provider) for a session cookie.
fn session_user(server: &Server, sid: &str) -> (String, String) {
    let me = who_am_i(server, &[("Cookie", &cookie(sid))]);
    let text = |k: &str| me[k].as_str().unwrap_or_default().to_string();
    (text("authenticatedUser"), text("provider"))
}

fn pair(user: &str, provider: &str) -> (String, String) {
    (user.to_string(), provider.to_string())
}

#[test]
fn sessions_survive_a_restart_and_logouts_stay_revoked() {
    let state = TempDir::new();
    let config = persistent_config(&state, users(true));
    let server = Server::start(config.clone());
    let kept = logged_in(&server, "alice", ALICE_PW);
    let ended = logged_in(&server, "bob", BOB_PW);
    let resp = call_with(&server, "Logout", json!({}), &[("Cookie", &cookie(&ended))]);
    assert_eq!(resp.status, 200, "{}", resp.text());
    let status = server.stop();
    assert!(status.success(), "actiond exited with {status:?}");
    assert!(
        state.path().join("sessions.json").is_file(),
        "no sessions.json in the state directory"
    );

    let server = Server::start(config);
    let me = who_am_i(&server, &[("Cookie", &cookie(&kept))]);
    assert_eq!(
        me,
        json!({
            "authenticatedUser": "alice",
            "usergroup": "admins ops",
            "provider": "local",
            "acls": [],
            "sid": kept,
        })
    );
    assert_eq!(session_user(&server, &ended), pair("guest", "system"));
}

#[test]
fn a_user_removed_from_the_config_loses_their_sessions_at_the_next_start() {
    let state = TempDir::new();
    let with_bob = persistent_config(&state, users(true));
    let server = Server::start(with_bob.clone());
    let alice = logged_in(&server, "alice", ALICE_PW);
    let bob = logged_in(&server, "bob", BOB_PW);
    server.stop();

    let without_bob = persistent_config(
        &state,
        json!({
            "enabled": true,
            "users": [{"username": "alice", "usergroup": "admins ops", "password": phc(ALICE_PW)}],
        }),
    );
    let server = Server::start(without_bob);
    assert_eq!(session_user(&server, &alice), pair("alice", "local"));
    assert_eq!(session_user(&server, &bob), pair("guest", "system"));
    server.stop();

    // The session ended at that start, rather than being hidden while bob was absent: with
    // bob back, unchanged, his old cookie still gives the guest.
    let server = Server::start(with_bob);
    assert_eq!(session_user(&server, &bob), pair("guest", "system"));
    assert_eq!(session_user(&server, &alice), pair("alice", "local"));
}

/// Issue 4: "a removed user's session dying on config reload". The config is replaced by
/// rename while the service runs; the hot reload ends bob's session, and it stays ended
/// when bob comes back.
#[test]
fn a_user_removed_by_a_live_reload_loses_their_sessions() {
    let state = TempDir::new();
    let with_bob = persistent_config(&state, users(true));
    let server = Server::start(with_bob.clone());
    let alice = logged_in(&server, "alice", ALICE_PW);
    let bob = logged_in(&server, "bob", BOB_PW);
    let without_bob = persistent_config(
        &state,
        json!({
            "enabled": true,
            "users": [{"username": "alice", "usergroup": "admins ops", "password": phc(ALICE_PW)}],
        }),
    );
    let replace = |config: &Value| {
        let tmp = server.path("config.yaml.new");
        std::fs::write(&tmp, to_yaml(config)).expect("write the new config");
        std::fs::rename(&tmp, server.path("config.yaml")).expect("rename it over the old one");
    };
    replace(&without_bob);
    let ended = wait_until(Duration::from_secs(5), || {
        session_user(&server, &bob) == pair("guest", "system")
    });
    assert!(ended, "bob's session outlived the reload that removed him");
    assert_eq!(session_user(&server, &alice), pair("alice", "local"));
    // Bob comes back; a new page title shows when that reload has landed (polling his
    // login instead would trip the login throttle).
    let mut back = with_bob.clone();
    back["pageTitle"] = json!("bob is back");
    replace(&back);
    let landed = wait_until(Duration::from_secs(5), || {
        call_with(&server, "Init", json!({}), &[]).json()["pageTitle"] == "bob is back"
    });
    assert!(landed, "the second reload did not land");
    assert_eq!(session_user(&server, &bob), pair("guest", "system"));
}

#[test]
fn a_changed_password_hash_ends_the_users_sessions_at_the_next_start() {
    let state = TempDir::new();
    let server = Server::start(persistent_config(&state, users(true)));
    let alice = logged_in(&server, "alice", ALICE_PW);
    let bob = logged_in(&server, "bob", BOB_PW);
    server.stop();

    let new_password = "alice second password";
    let server = Server::start(persistent_config(
        &state,
        json!({
            "enabled": true,
            "users": [
                {"username": "alice", "usergroup": "admins ops", "password": phc(new_password)},
                {"username": "bob", "usergroup": "users", "password": phc(BOB_PW)},
            ],
        }),
    ));
    assert_eq!(session_user(&server, &alice), pair("guest", "system"));
    assert_eq!(session_user(&server, &bob), pair("bob", "local"));
    logged_in(&server, "alice", new_password);
}

// ---------------------------------------------------------------------------------------
// PasswordHash

#[test]
fn password_hash_answers_an_argon2id_hash_with_the_spec_parameters() {
    // No local users yet: the guest may hash (that is how the first user is made).
    let server = Server::start(config(json!({})));
    let reply = server.ok("PasswordHash", json!({"password": "first user's password"}));
    let object = reply.as_object().expect("an object");
    assert_eq!(object.len(), 1, "exactly one field: {reply}");
    let hash = reply["hash"].as_str().expect("hash is a string");
    assert!(
        hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
        "{hash}"
    );
    assert!(actiond::auth::password::verify(
        "first user's password",
        hash
    ));
    assert!(!actiond::auth::password::verify("another password", hash));
}

#[test]
fn password_hash_refuses_guests_once_a_local_user_exists() {
    let server = Server::start(config(json!({"authLocalUsers": users(true)})));
    let resp = call_with(&server, "PasswordHash", json!({"password": "x"}), &[]);
    assert_error(&resp, 401, "unauthenticated");
    let sid = logged_in(&server, "alice", ALICE_PW);
    let resp = call_with(
        &server,
        "PasswordHash",
        json!({"password": "x"}),
        &[("Cookie", &cookie(&sid))],
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert!(
        resp.json()["hash"]
            .as_str()
            .is_some_and(|h| h.starts_with("$argon2id$"))
    );
}

#[test]
fn password_hash_runs_one_hash_at_a_time() {
    const CALLERS: usize = 8;
    let server = Server::start(config(json!({})));
    // Each caller connects first and then waits for the others, so the eight requests leave
    // within microseconds of each other while one hash takes tens of milliseconds.
    let answers = send_together(
        (0..CALLERS)
            .map(|i| {
                let body = json!({"password": format!("password {i}")});
                (Conn::open(server.addr), request("PasswordHash", &body, &[]))
            })
            .collect(),
    );
    let statuses: Vec<u16> = answers.iter().map(|r| r.status).collect();
    eprintln!("PasswordHash statuses of {CALLERS} simultaneous calls: {statuses:?}");
    for resp in &answers {
        match resp.status {
            200 => assert!(resp.json()["hash"].is_string(), "{}", resp.text()),
            429 => {
                assert_json_error(&resp.json(), "resource_exhausted");
            }
            other => panic!("PasswordHash answered {other}: {}", resp.text()),
        }
    }
    assert!(statuses.contains(&200), "no call got a hash: {statuses:?}");
    assert!(
        statuses.contains(&429),
        "all {CALLERS} overlapping calls were hashed, none refused as busy: {statuses:?}"
    );
    // Busy is momentary: once the others are done, a call succeeds again.
    server.ok("PasswordHash", json!({"password": "later"}));
}

// ---------------------------------------------------------------------------------------
// Init

/// A config exercising every Init field, with guests required to log in.
fn init_config() -> Value {
    config(json!({
        "pageTitle": "Front door",
        "showFooter": false,
        "showNavigation": true,
        "bannerMessage": "Maintenance at 5",
        "bannerCss": "color: red",
        "additionalNavigationLinks": [{"title": "Wiki", "url": "https://wiki.example/"}],
        "authRequireGuestsToLogin": true,
        "authLocalUsers": users(true),
        "authApiTokens": [{
            "name": "home-assistant",
            "sha256": sha256_hex(HA_TOKEN),
            "username": "home-assistant",
            "usergroup": "automation",
        }],
        "defaultPermissions": {"view": true, "exec": true, "logs": true, "kill": true},
        "defaultPolicy": {"showDiagnostics": false, "showLogList": false},
        "accessControlLists": [
            {"name": "diag", "matchUsernames": ["alice"], "policy": {"showDiagnostics": true}},
            {"name": "list", "matchUsergroups": ["automation"], "policy": {"showLogList": true}},
        ],
    }))
}

/// Init's answer for a caller, with the fields that do not depend on the caller.
fn init_for(user: &str, provider: &str, login_required: bool, root: Value, policy: Value) -> Value {
    json!({
        "pageTitle": "Front door",
        "showFooter": false,
        "showNavigation": true,
        "currentVersion": env!("CARGO_PKG_VERSION"),
        "rootDashboards": root,
        "authLocalLogin": true,
        "loginRequired": login_required,
        "authenticatedUser": user,
        "authenticatedUserProvider": provider,
        "effectivePolicy": policy,
        "additionalLinks": [{"title": "Wiki", "url": "https://wiki.example/"}],
        "bannerMessage": "Maintenance at 5",
        "bannerCss": "color: red",
    })
}

#[test]
fn init_never_requires_login_and_describes_the_caller() {
    let server = Server::start(init_config());
    // The guest who must log in still gets Init (the page needs it to show the login form),
    // sees no dashboard, and is told to log in.
    let resp = call_with(&server, "Init", json!({}), &[]);
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(
        resp.json(),
        init_for(
            "guest",
            "system",
            true,
            json!([]),
            json!({"showDiagnostics": false, "showLogList": false})
        )
    );

    let sid = logged_in(&server, "alice", ALICE_PW);
    let resp = call_with(&server, "Init", json!({}), &[("Cookie", &cookie(&sid))]);
    assert_eq!(
        resp.json(),
        init_for(
            "alice",
            "local",
            false,
            json!(["Actions"]),
            json!({"showDiagnostics": true, "showLogList": false})
        )
    );

    let resp = call_with(
        &server,
        "Init",
        json!({}),
        &[("Authorization", &bearer(HA_TOKEN))],
    );
    assert_eq!(
        resp.json(),
        init_for(
            "home-assistant",
            "token",
            false,
            json!(["Actions"]),
            json!({"showDiagnostics": false, "showLogList": true})
        )
    );
}

#[test]
fn init_of_a_guest_where_login_is_optional() {
    let server = Server::start(config(json!({
        "authHttpHeaderUsername": "X-User",
        "defaultPolicy": {"showDiagnostics": true, "showLogList": true},
    })));
    let init = server.ok("Init", json!({}));
    assert_eq!(init["loginRequired"], false, "{init}");
    assert_eq!(init["authLocalLogin"], false, "no local users: {init}");
    assert_eq!(init["authenticatedUser"], "guest", "{init}");
    assert_eq!(init["authenticatedUserProvider"], "system", "{init}");
    assert_eq!(init["rootDashboards"], json!(["Actions"]), "{init}");
    assert_eq!(
        init["effectivePolicy"],
        json!({"showDiagnostics": true, "showLogList": true}),
        "{init}"
    );
    let resp = call_with(&server, "Init", json!({}), &[("X-User", "carol")]);
    let init = resp.json();
    assert_eq!(init["authenticatedUser"], "carol", "{init}");
    assert_eq!(init["authenticatedUserProvider"], "header", "{init}");
}

// ---------------------------------------------------------------------------------------
// The authentication gate

/// The operations a guest may call when guests must log in.
const OPEN: [&str; 5] = [
    "Init",
    "GetReadyz",
    "LocalUserLogin",
    "Logout",
    "ValidateArgumentType",
];

#[test]
fn the_gate_refuses_guests_everything_but_the_open_operations() {
    let server = Server::start(init_config());
    for (op, body) in unary_operations() {
        let resp = call_with(&server, op, body.clone(), &[]);
        if OPEN.contains(&op) {
            assert_eq!(resp.status, 200, "guest {op}: {}", resp.text());
        } else {
            assert_error(&resp, 401, "unauthenticated");
        }
    }
    for path in GET_ROUTES {
        let resp = send(server.addr, &Request::get(path));
        assert_error(&resp, 401, "unauthenticated");
    }
    // The probe stays open: it is for the service manager, not a person.
    let resp = send(server.addr, &Request::get("/readyz"));
    assert_eq!((resp.status, resp.text()), (200, "OK".to_string()));

    // Nothing a refused guest tried ran.
    let sid = logged_in(&server, "alice", ALICE_PW);
    let resp = call_with(
        &server,
        "GetLogs",
        json!({"startOffset": 0}),
        &[("Cookie", &cookie(&sid))],
    );
    assert_eq!(resp.json()["totalCount"], "0", "{}", resp.text());
}

#[test]
fn logged_in_users_tokens_and_header_users_pass_the_gate() {
    let mut config = init_config();
    config["authHttpHeaderUsername"] = json!("X-User");
    // The starts below overlap (a GET start does not wait), so none may be blocked.
    config["actions"] = json!([
        {"id": "hello", "title": "Hello", "shell": "echo hello", "maxConcurrent": 50}
    ]);
    let server = Server::start(config);
    let sid = logged_in(&server, "alice", ALICE_PW);
    let session = cookie(&sid);
    let token = bearer(HA_TOKEN);
    let callers: [(&str, Vec<(&str, &str)>); 3] = [
        ("local", vec![("Cookie", &session)]),
        ("token", vec![("Authorization", &token)]),
        ("header", vec![("X-User", "carol")]),
    ];
    for (who, headers) in &callers {
        for (op, body) in unary_operations() {
            if op == "Logout" {
                // Would end alice's session for the calls that follow.
                continue;
            }
            let resp = call_with(&server, op, body.clone(), headers);
            assert_ne!(
                resp.status,
                401,
                "{who} caller refused by the gate on {op}: {}",
                resp.text()
            );
        }
        for path in GET_ROUTES {
            let resp = send(server.addr, &get_request(path, headers));
            // A plain GET start needs a token (or the action's link key): a cookie or a
            // proxy's user header is what any page's <img> would carry too.
            if *who != "token" && path.contains("/StartActionByGet") {
                assert_error(&resp, 403, "permission_denied");
            } else {
                assert_eq!(resp.status, 200, "{who} GET {path}: {}", resp.text());
            }
        }
        // Passing the gate means really being served, not just not being refused.
        let resp = call_with(
            &server,
            "StartActionAndWait",
            json!({"actionId": "hello"}),
            headers,
        );
        assert_eq!(resp.status, 200, "{who}: {}", resp.text());
        assert_eq!(resp.json()["logEntry"]["stdout"], "hello\n");
    }
}
