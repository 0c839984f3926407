//! Logins tried as an attacker would: the throttle counts failed logins per (address,
//! username) and per address, and logging in as yourself between guesses at someone else's
//! password resets nothing of theirs; each user holds a bounded number of sessions, so one
//! user's logins never end another's; and the sessions file holds only hashes of the ids.
//! Each test has two local users, a token and a reload in the middle, as the other
//! permission tests do.

use std::net::IpAddr;

use serde_json::{Value, json};

use crate::client::{Response, assert_error};
use crate::harness::{SOON, Server, TempDir, wait_until};
use crate::identity::{OTHER_ADDRESS, bearer, call_with, cookie, login_from, sha256_hex, who_am_i};
use crate::live_permissions::{ALICE_PW, BOB_PW, TOKEN, login, merge, reload, with_identities};

const LOOPBACK: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

fn config(extra: Value) -> Value {
    let mut config = with_identities(json!({
        "actions": [{"id": "hello", "title": "Hello", "shell": "echo hello"}],
    }));
    merge(&mut config, extra);
    config
}

/// "ok" for a successful login, "refused" for a wrong password, "throttled" for 429.
fn outcome(resp: &Response) -> &'static str {
    match (resp.status, resp.json()["success"].as_bool()) {
        (200, Some(true)) => "ok",
        (200, Some(false)) => "refused",
        (429, _) => {
            assert_error(resp, 429, "resource_exhausted");
            "throttled"
        }
        _ => panic!(
            "unexpected answer to a login: {} {}",
            resp.status,
            resp.text()
        ),
    }
}

/// Who a session cookie makes its holder.
fn user_of(server: &Server, sid: &str) -> String {
    who_am_i(server, &[("Cookie", &cookie(sid))])["authenticatedUser"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_login_as_yourself_does_not_reset_the_count_of_guesses_at_someone_else() {
    let base = config(json!({}));
    let server = Server::start(base.clone());
    let mut guesses = 0;
    let mut throttled_at = None;
    for round in 0..3 {
        if round == 1 {
            // A reload between rounds changes nothing of the counts.
            let mut changed = base.clone();
            changed["actions"][0]["title"] = json!("Hello again");
            reload(&server, &changed);
        }
        for _ in 0..4 {
            match outcome(&login_from(&server, LOOPBACK, "alice", "guess")) {
                "refused" => guesses += 1,
                "throttled" => {
                    throttled_at.get_or_insert(guesses);
                }
                other => panic!("a wrong password gave {other}"),
            }
        }
        // Bob logs in as himself between the guesses: it works, and resets nothing of alice's.
        assert_eq!(
            outcome(&login_from(&server, LOOPBACK, "bob", BOB_PW)),
            "ok",
            "round {round}"
        );
    }
    assert_eq!(
        guesses, 5,
        "five guesses at alice per minute, however they are mixed"
    );
    assert_eq!(throttled_at, Some(5));
    // Even the right password for alice is refused from that address now...
    assert_eq!(
        outcome(&login_from(&server, LOOPBACK, "alice", ALICE_PW)),
        "throttled"
    );
    // ...but alice from another address, and the token, are not affected.
    assert_eq!(
        outcome(&login_from(&server, OTHER_ADDRESS, "alice", ALICE_PW)),
        "ok"
    );
    let me = who_am_i(&server, &[("Authorization", &bearer(TOKEN))]);
    assert_eq!(me["authenticatedUser"], "home-assistant", "{me}");
}

#[test]
fn many_names_from_one_address_meet_the_address_cap() {
    let capped = config(json!({"loginFailuresPerUser": 2, "loginFailuresPerAddress": 6}));
    let server = Server::start(config(json!({})));
    reload(&server, &capped);
    let mut refused = 0;
    for i in 0..6 {
        let name = format!("nobody{i}");
        refused +=
            usize::from(outcome(&login_from(&server, OTHER_ADDRESS, &name, "x")) == "refused");
    }
    assert_eq!(refused, 6);
    // The address reached its cap: no name may be tried from it, not even a right one.
    for (name, password) in [("bob", BOB_PW), ("alice", ALICE_PW)] {
        assert_eq!(
            outcome(&login_from(&server, OTHER_ADDRESS, name, password)),
            "throttled",
            "{name}"
        );
    }
    assert_eq!(outcome(&login_from(&server, LOOPBACK, "bob", BOB_PW)), "ok");
}

#[test]
fn a_new_login_ends_the_oldest_session_of_that_user_only() {
    let server = Server::start(config(json!({})));
    reload(&server, &config(json!({"maxSessionsPerUser": 2})));
    let bob = login(&server, "bob", BOB_PW);
    let alice: Vec<String> = (0..3).map(|_| login(&server, "alice", ALICE_PW)).collect();
    assert_eq!(user_of(&server, &alice[0]), "guest", "alice's oldest ended");
    assert_eq!(user_of(&server, &alice[1]), "alice");
    assert_eq!(user_of(&server, &alice[2]), "alice");
    assert_eq!(user_of(&server, &bob), "bob", "bob's session stays");
    assert!(server.log_shows("the oldest session of this user ended"));
}

#[test]
fn the_sessions_file_holds_hashes_of_the_ids_and_an_old_file_in_clear_is_dropped() {
    let state = TempDir::new();
    let old_sid = "0b9e2c1a-5d4f-4e3a-9b8c-7d6e5f4a3b2c";
    let old = json!({"version": 1, "sessions": {old_sid: {
        "username": "alice", "passwordFingerprint": "x", "expires": 9_999_999_999u64}}});
    let file = state.path().join("sessions.json");
    std::fs::write(&file, old.to_string()).unwrap();
    let config = config(json!({"stateDirectory": state.path().to_str().unwrap()}));
    let server = Server::start(config.clone());
    // The file in clear is replaced at start, before anyone logs in.
    assert!(wait_until(SOON, || {
        std::fs::read_to_string(&file).is_ok_and(|t| !t.contains(old_sid))
    }));
    assert!(server.log_shows("holds session ids in clear"));
    assert_eq!(user_of(&server, old_sid), "guest");

    let alice = login(&server, "alice", ALICE_PW);
    let bob = login(&server, "bob", BOB_PW);
    reload(&server, &config);
    let text = std::fs::read_to_string(&file).unwrap();
    for sid in [&alice, &bob] {
        assert!(!text.contains(sid.as_str()), "an id in clear: {text}");
        assert!(text.contains(&sha256_hex(sid)), "{text}");
    }
    // The hash itself opens nothing; the id still does, after a restart too.
    assert_eq!(user_of(&server, &sha256_hex(&alice)), "guest");
    drop(server);
    let server = Server::start(config);
    assert_eq!(user_of(&server, &alice), "alice");
    assert_eq!(user_of(&server, &bob), "bob");
}

/// The page's way: a login that sends `Actiond-Session` gets its session back in that header
/// and no cookie, which a browser would also send to every other port of the board's name.
/// The header then identifies its holder; it wins over a cookie; Logout ends it.
#[test]
fn a_login_asked_for_in_the_header_answers_in_the_header_and_sets_no_cookie() {
    let server = Server::start(config(json!({})));
    let resp = call_with(
        &server,
        "LocalUserLogin",
        json!({"username": "alice", "password": ALICE_PW}),
        &[("Actiond-Session", "new")],
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json()["success"], true);
    assert_eq!(resp.header("Set-Cookie"), None, "no cookie for the page");
    let sid = resp
        .header("Actiond-Session")
        .expect("the session in the header")
        .to_string();
    let by_header = |sid: &str| {
        who_am_i(&server, &[("Actiond-Session", sid)])["authenticatedUser"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(by_header(&sid), "alice");
    assert_eq!(
        user_of(&server, &sid),
        "alice",
        "the same id works as a cookie"
    );
    // A header wins over a cookie: a page that sends its own (or "new") is never someone
    // else through a cookie left in the browser.
    let bob = login(&server, "bob", BOB_PW);
    let both = who_am_i(
        &server,
        &[("Actiond-Session", "new"), ("Cookie", &cookie(&bob))],
    );
    assert_eq!(both["authenticatedUser"], "guest");
    // A wrong password answers no session at all.
    let wrong = call_with(
        &server,
        "LocalUserLogin",
        json!({"username": "alice", "password": "not it"}),
        &[("Actiond-Session", "new")],
    );
    assert_eq!(wrong.json()["success"], false);
    assert_eq!(wrong.header("Actiond-Session"), None);
    assert_eq!(wrong.header("Set-Cookie"), None);
    // Logout through the header ends that session.
    let out = call_with(&server, "Logout", json!({}), &[("Actiond-Session", &sid)]);
    assert_eq!(out.status, 200, "{}", out.text());
    assert_eq!(by_header(&sid), "guest");
    assert_eq!(
        user_of(&server, &bob),
        "bob",
        "bob's session is not touched"
    );
}

/// Guesses under every throttle cap (one address, a different made-up name each) arriving
/// together: at most `MAX_QUEUED_VERIFICATIONS` (8) wait for the hasher (loopback is a trusted
/// proxy here, so its logins are not held to one place), the rest are told
/// at once that logins are busy, uncounted, so connections are not held for minutes and the
/// service keeps answering.
#[test]
fn a_flood_of_logins_waits_in_a_bounded_queue_and_the_rest_are_told_at_once() {
    let server = Server::start(config(json!({})));
    let calls = (0..20)
        .map(|i| {
            let body = json!({"username": format!("nobody{i}"), "password": "guess"});
            let req =
                crate::client::Request::connect("LocalUserLogin", body.to_string().as_bytes());
            (server.conn(), req)
        })
        .collect();
    let answers = crate::harness::send_together(calls);
    let busy: Vec<&Response> = answers.iter().filter(|r| r.status == 429).collect();
    let refused = answers.iter().filter(|r| outcome(r) == "refused").count();
    assert!(
        refused <= 8,
        "{refused} guesses were checked, more than the queue holds"
    );
    assert!(busy.len() >= 12, "only {} turned away", busy.len());
    for r in &busy {
        assert!(
            assert_error(r, 429, "resource_exhausted").contains("being checked"),
            "{}",
            r.text()
        );
    }
    assert!(server.log_shows("a login was turned away"));
    // Turned away is not a failed guess: the right password still works at once.
    assert_eq!(
        outcome(&login_from(&server, LOOPBACK, "alice", ALICE_PW)),
        "ok"
    );
}

/// A cookie an older page (0.1) left in the browser lives a year and reaches every port of
/// the board's name. The page's Login and Logout send it beside the header: both end it and
/// clear it. A login also ends the session the request presented (the previous user of a
/// shared phone).
#[test]
fn the_pages_login_and_logout_end_an_older_cookie_session_and_the_one_presented() {
    let server = Server::start(config(json!({})));
    let as_header = |sid: &str| {
        who_am_i(&server, &[("Actiond-Session", sid)])["authenticatedUser"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let page_login = |user: &str, pw: &str, headers: &[(&str, &str)]| {
        let resp = call_with(
            &server,
            "LocalUserLogin",
            json!({"username": user, "password": pw}),
            headers,
        );
        assert_eq!(resp.json()["success"], true, "{}", resp.text());
        resp
    };
    // The 0.1 page's cookie session, then the new page's login beside it.
    let old = login(&server, "bob", BOB_PW);
    let jar = cookie(&old);
    let resp = page_login(
        "alice",
        ALICE_PW,
        &[("Actiond-Session", "new"), ("Cookie", &jar)],
    );
    let alice = resp.header("Actiond-Session").unwrap().to_string();
    let cleared = resp
        .header("Set-Cookie")
        .expect("the old cookie is cleared");
    assert!(cleared.starts_with("svc-sid-local=;"), "{cleared}");
    assert_eq!(
        user_of(&server, &old),
        "guest",
        "the old cookie's session ended"
    );
    assert_eq!(as_header(&alice), "alice");
    // A second user logs in on the same page: the first one's session ends.
    let resp = page_login("bob", BOB_PW, &[("Actiond-Session", &alice)]);
    let bob = resp.header("Actiond-Session").unwrap().to_string();
    assert_eq!(
        as_header(&alice),
        "guest",
        "the previous user's session ended"
    );
    // Logout with the header and a cookie that came back ends both.
    let other = login(&server, "alice", ALICE_PW);
    let out = call_with(
        &server,
        "Logout",
        json!({}),
        &[("Actiond-Session", &bob), ("Cookie", &cookie(&other))],
    );
    assert_eq!(out.status, 200, "{}", out.text());
    assert_eq!(as_header(&bob), "guest");
    assert_eq!(user_of(&server, &other), "guest");
}
