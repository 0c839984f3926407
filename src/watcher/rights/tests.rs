//! The tables of what a reload gives to whom, and of the reloads refused.

use super::*;
use crate::config::{Source, parse};

/// A valid argon2id hash (of a password nobody knows), so the users load.
const PHC: &str = "$argon2id$v=19$m=19456,t=2,p=1$ybSy+XeOa5u/na8IWS4PUw$dGskUsMnme7qmbvzP1JULCp2t0nvKW3V2GzVT4+vAlo";

fn config(text: &str) -> Config {
    let text = text.replace("$PHC", PHC);
    match parse(&text, Source::Embedded, "/".into(), &|_| None) {
        Ok((c, _)) => c,
        Err((e, _)) => panic!("{e:?}"),
    }
}

const LOCKED: &str = "
defaultPermissions: {view: true, exec: false, logs: true, kill: false}
authLocalUsers:
  enabled: true
  users:
    - {username: alice, usergroup: admins, password: '$PHC'}
accessControlLists:
  - {name: admin, matchUsergroups: [admins], permissions: {exec: true, kill: true}}
actions:
  - {id: uptime, title: Uptime, shell: uptime}
  - {id: reboot, title: Reboot, shell: reboot, acls: [admin]}
";

/// The two-step write: the first half of the file, without its ACLs and defaults.
const HALF: &str = "
authLocalUsers:
  enabled: true
  users:
    - {username: alice, usergroup: admins, password: '$PHC'}
actions:
  - {id: uptime, title: Uptime, shell: uptime}
  - {id: reboot, title: Reboot, shell: reboot}
";

#[test]
fn the_table_of_gains() {
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);
    let cases: &[Case<'_>] = &[
        // Nothing changed: nothing gained.
        (LOCKED, LOCKED, &[]),
        // The ACLs and defaults are gone: everyone gains exec and kill on everything but
        // the admins, who had them on reboot.
        (
            LOCKED,
            HALF,
            &[
                ("guests", "exec on uptime, reboot; kill on uptime, reboot"),
                (
                    "every logged-in user",
                    "exec on uptime, reboot; kill on uptime, reboot",
                ),
                (
                    "user \"alice\" (group \"admins\")",
                    "exec on uptime; kill on uptime",
                ),
                (
                    "users of group \"admins\"",
                    "exec on uptime; kill on uptime",
                ),
            ],
        ),
        // Rights taken away are no gain.
        (HALF, LOCKED, &[]),
        // A new action is not listed: nobody had rights on it before.
        (
            LOCKED,
            &format!("{LOCKED}  - {{id: new, title: New, shell: 'true'}}\n"),
            &[],
        ),
        // A change of one user's group gives that user the group's rights.
        (
            &LOCKED.replace(
                "users:\n",
                "users:\n    - {username: bob, usergroup: staff, password: '$PHC'}\n",
            ),
            &LOCKED.replace(
                "users:\n",
                "users:\n    - {username: bob, usergroup: admins, password: '$PHC'}\n",
            ),
            &[(
                "user \"bob\" (group \"admins\")",
                "exec on reboot; kill on reboot",
            )],
        ),
        // The guest gate opening, and a policy flag.
        (
            &format!("authRequireGuestsToLogin: true\n{LOCKED}"),
            &format!("defaultPolicy: {{showDiagnostics: true}}\n{LOCKED}"),
            &[
                (
                    "guests",
                    "view on uptime, reboot; logs on uptime, reboot; showDiagnostics; \
                         showLogList",
                ),
                ("every logged-in user", "showDiagnostics"),
                ("user \"alice\" (group \"admins\")", "showDiagnostics"),
                ("users of group \"admins\"", "showDiagnostics"),
            ],
        ),
    ];
    for (i, (old, new, expected)) in cases.iter().enumerate() {
        let got = gains(&config(old), &config(new));
        let got: Vec<(&str, &str)> = got
            .iter()
            .map(|g| (g.who.as_str(), g.what.as_str()))
            .collect();
        assert_eq!(got, *expected, "case {i}");
    }
}

/// Trust and identity: each row widens one thing (or not) and names who gains what.
#[test]
fn the_table_of_trust_gains() {
    const PHC2: &str = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$yZ7l+Vn0yM3ewcH2L5pG/7y1+TH2Pj3n6xF5qZrN0xw";
    let base = LOCKED;
    let with = |extra: &str| format!("{extra}\n{base}");
    let alice = "user \"alice\" (group \"admins\")";
    type Case = (String, String, Vec<(&'static str, String)>);
    let cases: Vec<Case> = vec![
        // Header auth turned on: the default proxies (loopback) gain naming the caller.
        (
            base.into(),
            with("authHttpHeaderUsername: X-User\nauthHttpHeaderUserGroup: X-Group"),
            vec![(
                "clients at 127.0.0.1/8, ::1/128",
                "any user and group they name in the headers X-User and X-Group \
                     (trustedProxies)"
                    .into(),
            )],
        ),
        // The proxies widened: only the new network is named.
        (
            with("authHttpHeaderUsername: X-User\ntrustedProxies: [10.0.0.0/8]"),
            with("authHttpHeaderUsername: X-User\ntrustedProxies: [10.0.0.0/8, 0.0.0.0/0]"),
            vec![(
                "clients at 0.0.0.0/0",
                "any user and group they name in the header X-User (trustedProxies); no \
                     per-address share of connections and event streams (trustedProxies)"
                    .into(),
            )],
        ),
        // Narrowed, or a network within one trusted before: nothing.
        (
            with("authHttpHeaderUsername: X-User\ntrustedProxies: [10.0.0.0/8]"),
            with("authHttpHeaderUsername: X-User\ntrustedProxies: [10.1.0.0/16]"),
            vec![],
        ),
        // Proxies widened with no header auth: nobody can name a caller, but every
        // client is out of the per-address shares.
        (
            with("trustedProxies: [10.0.0.0/8]"),
            with("trustedProxies: [0.0.0.0/0, ::/0]"),
            vec![(
                "clients at 0.0.0.0/0, ::/0",
                "no per-address share of connections and event streams (trustedProxies)".into(),
            )],
        ),
        // With header auth: both, in one line.
        (
            with("authHttpHeaderUsername: X-User"),
            with("authHttpHeaderUsername: X-User\ntrustedProxies: [127.0.0.1/8, 192.0.2.0/24]"),
            vec![(
                "clients at 192.0.2.0/24",
                "any user and group they name in the header X-User (trustedProxies); no \
                     per-address share of connections and event streams (trustedProxies)"
                    .into(),
            )],
        ),
        // The Connect header made optional, and back.
        (
            base.into(),
            with("connectProtocolHeader: optional"),
            vec![(
                "callers that send no Connect-Protocol-Version header",
                "Connect calls without it (connectProtocolHeader: optional)".into(),
            )],
        ),
        (with("connectProtocolHeader: optional"), base.into(), vec![]),
        // A password hash replaced.
        (
            base.into(),
            base.replace("$PHC", PHC2),
            vec![(
                alice,
                "a new password hash (whoever knows its password logs in as them)".into(),
            )],
        ),
        // Local users turned on.
        (
            base.replace("enabled: true", "enabled: false"),
            base.into(),
            vec![(
                alice,
                "logging in (authLocalUsers.enabled turned on)".into(),
            )],
        ),
        // A plain GET from any page, and a new link key.
        (
            base.into(),
            base.replace(
                "shell: uptime}",
                "shell: uptime, insecureAllowStartFromAnyWebPage: true}",
            )
            .replace(
                "shell: reboot,",
                &format!("shell: reboot, linkKeySha256: {},", "a".repeat(64)),
            ),
            vec![
                (
                    "any web page a visitor opens",
                    "a plain GET that starts uptime (insecureAllowStartFromAnyWebPage)".into(),
                ),
                (
                    "whoever has a new link key",
                    "a plain GET that starts reboot (linkKeySha256)".into(),
                ),
            ],
        ),
        // The dump switches.
        (
            with("insecureAllowDumpSos: true"),
            with(
                "insecureAllowDumpSos: true\ninsecureAllowDumpVars: true\ninsecureAllowDumpActionMap: true",
            ),
            vec![(
                "callers of the API",
                "insecureAllowDumpVars, insecureAllowDumpActionMap".into(),
            )],
        ),
        // Origins and hosts widened, listed then all.
        (
            with("allowedOrigins: ['https://ha.lan']\nallowedHosts: [pi.lan]"),
            with(
                "allowedOrigins: ['https://ha.lan', 'http://evil.lan:8080']\nallowedHosts: [pi.lan, '*.lan']",
            ),
            vec![
                (
                    "web pages of http://evil.lan:8080",
                    "the API through their visitors' browsers (allowedOrigins)".into(),
                ),
                (
                    "requests for *.lan",
                    "being served as the board's own names are (allowedHosts)".into(),
                ),
            ],
        ),
        (
            base.into(),
            with("allowedOrigins: ['*']\nallowedHosts: ['*']"),
            vec![
                (
                    "every web page",
                    "the API through their visitors' browsers (allowedOrigins)".into(),
                ),
                (
                    "requests for any host name",
                    "being served as the board's own names are (allowedHosts)".into(),
                ),
            ],
        ),
        // Narrowed: nothing.
        (
            with("allowedOrigins: ['*']\nallowedHosts: [pi.lan, nas.lan]"),
            with("allowedOrigins: ['https://ha.lan']\nallowedHosts: [nas.lan]"),
            vec![],
        ),
        // A new action guests may run is named (one they may not is not: the first
        // table's case).
        (
            base.replace("exec: false", "exec: true"),
            format!(
                "{}  - {{id: fresh, title: Fresh, shell: 'true'}}\n",
                base.replace("exec: false", "exec: true")
            ),
            vec![
                ("guests", "exec on the new fresh".into()),
                ("every logged-in user", "exec on the new fresh".into()),
            ],
        ),
        // A new user: its rights, then that it may log in, in one gain.
        (
            base.into(),
            base.replace(
                "users:\n",
                "users:\n    - {username: bob, usergroup: admins, password: '$PHC'}\n",
            ),
            vec![(
                "user \"bob\" (group \"admins\")",
                "view on uptime, reboot; exec on reboot; logs on uptime, reboot; kill on \
                     reboot; showLogList; logging in (a new user)"
                    .into(),
            )],
        ),
    ];
    for (i, (old, new, expected)) in cases.iter().enumerate() {
        let got = gains(&config(old), &config(new));
        let got: Vec<(&str, &str)> = got
            .iter()
            .map(|g| (g.who.as_str(), g.what.as_str()))
            .collect();
        let expected: Vec<(&str, &str)> = expected.iter().map(|(w, x)| (*w, x.as_str())).collect();
        assert_eq!(got, expected, "case {i}");
    }
}

/// An argument's values widened: choices removed or added to, a type loosened; each
/// named with its action. Narrowing is no gain.
#[test]
fn the_table_of_argument_gains() {
    let config_with = |arg: &str| {
        config(&format!(
            "actions:\n  - {{id: ping, title: Ping, shell: 'ping {{{{ host }}}}', \
                 arguments: [{{name: host, {arg}}}]}}\n"
        ))
    };
    let choices = "choices: [{value: a}, {value: b}]";
    let cases: &[(&str, &str, Option<&str>)] = &[
        (choices, choices, None),
        (
            choices,
            "type: ascii_identifier",
            Some("host of ping: any ascii_identifier value (its choices removed)"),
        ),
        (
            choices,
            "choices: [{value: a}, {value: b}, {value: c}]",
            Some("host of ping: the new choices \"c\""),
        ),
        (choices, "choices: [{value: a}]", None),
        ("type: ascii_identifier", "type: int", None),
        (
            "type: int",
            "type: ascii_identifier",
            Some("host of ping: type ascii_identifier (was int)"),
        ),
        (
            "type: ascii_identifier",
            "type: very_dangerous_raw_string",
            Some("host of ping: type very_dangerous_raw_string (was ascii_identifier)"),
        ),
        (
            "type: ascii_identifier",
            "type: email",
            Some("host of ping: type email (was ascii_identifier)"),
        ),
        ("type: ascii_sentence", "type: ascii_identifier", None),
        ("type: raw_string_multiline", "type: int", None),
        (
            "type: int",
            "type: int, choices: [{value: '1'}, {value: 'x y'}]",
            Some("host of ping: the choices \"x y\" its type refused"),
        ),
        // allowUnknownProgram: a gain unless the choices limit the values.
        (
            "type: ascii_identifier",
            "type: ascii_identifier, allowUnknownProgram: true",
            Some(
                "host of ping: values among the arguments of a program actiond does not know \
                 (allowUnknownProgram)",
            ),
        ),
        (
            "type: ascii_identifier, choices: [{value: a}]",
            "type: ascii_identifier, choices: [{value: a}], allowUnknownProgram: true",
            None,
        ),
        // allowLeadingDash: a gain where the gate holds (free text, no choices).
        (
            "type: ascii_identifier",
            "type: ascii_identifier, allowLeadingDash: true",
            Some("host of ping: values that start with - (allowLeadingDash)"),
        ),
        (
            "type: email, allowLeadingDash: false",
            "type: email, allowLeadingDash: true",
            Some("host of ping: values that start with - (allowLeadingDash)"),
        ),
        (
            "type: checklist",
            "type: checklist, allowLeadingDash: true",
            Some("host of ping: values that start with - (allowLeadingDash)"),
        ),
        (
            "type: ascii_identifier, allowLeadingDash: true",
            "type: ascii_identifier",
            None,
        ),
        (
            choices,
            "choices: [{value: a}, {value: b}], allowLeadingDash: true",
            None,
        ),
        ("type: int", "type: int, allowLeadingDash: true", None),
        (
            "type: ascii",
            "type: ascii_sentence, allowLeadingDash: true",
            Some(
                "host of ping: type ascii_sentence (was ascii); host of ping: values that start \
                 with - (allowLeadingDash)",
            ),
        ),
        // A regex: pattern is the type.
        ("type: 'regex:[a-z]+'", "type: 'regex:[a-z]+'", None),
        (
            "type: 'regex:[a-z]+'",
            "type: 'regex:[a-z0-9]+'",
            Some("host of ping: type regex:[a-z0-9]+ (was regex:[a-z]+)"),
        ),
        (
            "type: ascii_identifier",
            "type: 'regex:[a-z]+'",
            Some("host of ping: type regex:[a-z]+ (was ascii_identifier)"),
        ),
        // A checkbox's and a checklist's choices are its values.
        (
            "type: checklist, choices: [{value: a}, {value: b}]",
            "type: checklist, choices: [{value: a}, {value: b}, {value: c}]",
            Some("host of ping: the new choices \"c\""),
        ),
        (
            "type: checklist, choices: [{value: a}]",
            "type: checklist",
            Some("host of ping: any checklist value (its choices removed)"),
        ),
        (
            "type: checkbox",
            "type: checkbox, choices: [{value: 'yes'}, {value: '1'}]",
            Some("host of ping: the choices \"yes\" its type refused"),
        ),
        // An empty value: rejectNull removed, or a default to take.
        (
            "type: int, rejectNull: true",
            "type: int",
            Some("host of ping: an empty value (rejectNull removed)"),
        ),
        (
            "type: int, rejectNull: true",
            "type: int, rejectNull: true, default: 5",
            Some("host of ping: an empty value (it now takes the default \"5\")"),
        ),
        ("type: int", "type: int, rejectNull: true", None),
        ("type: int, default: 5", "type: int, default: 6", None),
        // The entity type the choices come from.
        (
            "entity: server, choices: [{value: '{{ .CurrentEntity.key }}'}]",
            "entity: vm, choices: [{value: '{{ .CurrentEntity.key }}'}]",
            Some("host of ping: the instances of entity type \"vm\" (was \"server\")"),
        ),
        (
            "choices: [{value: '{{ .CurrentEntity.key }}'}]",
            "entity: vm, choices: [{value: '{{ .CurrentEntity.key }}'}]",
            Some("host of ping: the instances of entity type \"vm\" (was none)"),
        ),
        (
            "entity: vm, choices: [{value: '{{ .CurrentEntity.key }}'}]",
            "choices: [{value: '{{ .CurrentEntity.key }}'}]",
            None,
        ),
        // An entity-fed argument's choices are the entity file's text: the dash gate holds.
        (
            "entity: vm, choices: [{value: '{{ .CurrentEntity.key }}'}]",
            "entity: vm, choices: [{value: '{{ .CurrentEntity.key }}'}], allowLeadingDash: true",
            Some("host of ping: values that start with - (allowLeadingDash)"),
        ),
        // Two properties at once: both named.
        (
            "type: ascii_identifier, rejectNull: true",
            "type: ascii_sentence, rejectNull: false, allowLeadingDash: true",
            Some(
                "host of ping: type ascii_sentence (was ascii_identifier); host of ping: values \
                 that start with - (allowLeadingDash); host of ping: an empty value \
                 (rejectNull removed)",
            ),
        ),
        // No value at all: display-only.
        ("type: ascii", "type: confirmation", None),
    ];
    for (i, (old, new, want)) in cases.iter().enumerate() {
        let got = gains(&config_with(old), &config_with(new));
        let got: Vec<(&str, &str)> = got
            .iter()
            .map(|g| (g.who.as_str(), g.what.as_str()))
            .collect();
        let want = want.map(|w| format!("argument values refused before: {w}"));
        let want: Vec<(&str, &str)> = want
            .iter()
            .map(|w| ("whoever may start these actions", w.as_str()))
            .collect();
        assert_eq!(got, want, "case {i}: {old} -> {new}");
    }
}

/// An argument a file trigger alone filled in, declared by the author once the trigger is
/// gone: any caller may now set it.
#[test]
fn a_file_trigger_argument_open_to_callers_is_a_gain() {
    let triggered = "actions:\n  - {id: up, title: Up, shell: 'cat {{ filepath }}', \
                     execOnFileCreatedInDir: /in}\n";
    let by_hand = "actions:\n  - {id: up, title: Up, shell: 'cat {{ filepath }}', \
                   arguments: [{name: filepath, type: very_dangerous_raw_string}]}\n";
    let got = gains(&config(triggered), &config(by_hand));
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(
        got[0].what,
        "argument values refused before: filepath of up: a value from the caller (before, its \
         file trigger's alone)"
    );
    assert!(gains(&config(by_hand), &config(triggered)).is_empty());
}

/// A reload that drops a key deciding rights, when the key's default gives someone rights,
/// is held, unless the new config writes the key itself.
#[test]
fn dropping_a_key_that_decides_rights_is_held_unless_written() {
    // Each config has LOCKED's actions, so that a right has something to be on.
    let with = |text: &str| {
        if text.contains("actions:") {
            text.to_string()
        } else {
            format!(
                "{text}actions:\n  - {{id: uptime, title: Uptime, shell: uptime}}\n  - \
                     {{id: reboot, title: Reboot, shell: reboot, acls: [admin]}}\n"
            )
        }
    };
    let acl_only = "accessControlLists: [{name: admin, matchUsergroups: [x]}]\n";
    let defaults_only = "defaultPermissions: {exec: false}\n";
    let all_written = "defaultPermissions: {view: true, exec: true, logs: true, kill: true}\n";
    // view left out, its default what it was: nobody gains.
    let locked_no_view = LOCKED.replace("view: true, ", "");
    let cases: &[(&str, &str, bool)] = &[
        (LOCKED, HALF, false),
        // The ACLs dropped, the defaults already everything: nobody gains.
        (acl_only, "", true),
        (defaults_only, "", false),
        (defaults_only, "defaultPermissions:\n", false),
        (LOCKED, all_written, true),
        // The ACLs first, `defaultPermissions` still to come: guests would gain exec.
        (LOCKED, acl_only, false),
        // view, logs and kill left out of the mapping: granted (kill was not before).
        (LOCKED, defaults_only, false),
        (LOCKED, &locked_no_view, true),
        // Guests had to log in; then the key is gone.
        ("authRequireGuestsToLogin: true\n", "", false),
        (
            "authRequireGuestsToLogin: true\n",
            "authRequireGuestsToLogin: false\n",
            true,
        ),
        ("", "", true),
        (HALF, "", true),
        (HALF, LOCKED, true),
    ];
    for (i, (old, new, ok)) in cases.iter().enumerate() {
        let got = falls_open(&config(&with(old)), &config(&with(new)));
        assert_eq!(got.is_ok(), *ok, "case {i}: {old:?} -> {new:?}: {got:?}");
    }
    let held = falls_open(&config(LOCKED), &config(&with(acl_only))).unwrap_err();
    assert_eq!(held.key, "defaultPermissions");
    let said = held.to_string();
    assert!(
        said.contains("no longer writes defaultPermissions"),
        "{said}"
    );
    assert!(
        said.contains("guests would gain exec on uptime, reboot"),
        "{said}"
    );
    assert!(
        said.contains("to apply this on purpose, write the key"),
        "{said}"
    );
}

#[test]
fn a_long_list_is_cut() {
    let mut old = String::from("defaultPermissions: {exec: false}\nactions:\n");
    for i in 0..20 {
        old.push_str(&format!("  - {{id: a{i}, title: A{i}, shell: 'true'}}\n"));
    }
    let new = old.replace("defaultPermissions: {exec: false}\n", "");
    let g = gains(&config(&old), &config(&new));
    assert_eq!(g[0].who, "guests");
    assert_eq!(
        g[0].what,
        "exec on a0, a1, a2, a3, a4, a5, a6, a7 and 12 more"
    );
}

#[test]
fn an_action_that_lets_entity_fields_start_with_a_dash_is_a_gain() {
    let with = |allow: &str| {
        config(&format!(
            "actions:\n  - {{id: ls, title: Ls, entity: vm, shell: 'ls {{{{ .CurrentEntity.name }}}}'\
             {allow}}}\n"
        ))
    };
    let named = |old: &str, new: &str| -> Vec<String> {
        gains(&with(old), &with(new))
            .into_iter()
            .map(|g| g.what)
            .collect()
    };
    assert_eq!(
        named("", ", allowLeadingDash: true"),
        [
            "argument values refused before: the entity fields in the command of ls: values that \
          start with - (allowLeadingDash)"
        ]
    );
    assert!(named(", allowLeadingDash: true", "").is_empty());
    assert!(named(", allowLeadingDash: true", ", allowLeadingDash: true").is_empty());
}

/// A broker added or changed (address, login, node id) lets other clients press as the MQTT
/// caller; the device's name or `runAs` alone does not (its rights are compared as a caller).
#[test]
fn a_new_broker_is_a_gain_for_its_clients() {
    let with = |mqtt: &str| config(&format!("mqtt: {{{mqtt}}}\n"));
    let said = |old: &str, new: &str| -> Vec<String> {
        gains(&with(old), &with(new))
            .into_iter()
            .filter(|g| g.who.starts_with("clients of"))
            .map(|g| format!("{}: {}", g.who, g.what))
            .collect()
    };
    let base = "broker: 'mqtt://a', nodeId: n";
    assert_eq!(
        said(base, "broker: 'mqtt://b:1884', nodeId: n"),
        [
            "clients of mqtt://b:1884 that may publish to actiond/n/+/press: presses as user \
          \"mqtt\" (group \"mqtt\") (mqtt.broker changed)"
        ]
    );
    assert_eq!(
        said(base, "broker: 'mqtt://a', nodeId: m, username: u").len(),
        1
    );
    assert!(said(base, &format!("{base}, deviceName: Garage")).is_empty());
    assert!(said(base, base).is_empty());
    let added = gains(&config(""), &with(base));
    assert!(
        added.iter().any(|g| g.what.ends_with("(mqtt changed)")),
        "{added:?}"
    );
}

/// A new action the MQTT caller may run is a new button for every client of the broker.
#[test]
fn a_new_action_the_mqtt_caller_may_press_is_a_gain() {
    let old = "mqtt: {broker: 'mqtt://a', nodeId: n}\nactions:\n  - {id: light, title: Light, shell: 'true'}\n";
    let new = format!("{old}  - {{id: unlock, title: Unlock, shell: 'true'}}\n");
    let got = gains(&config(old), &config(&new));
    let mqtt = got
        .iter()
        .find(|g| g.who.starts_with("MQTT presses"))
        .unwrap_or_else(|| panic!("{got:?}"));
    assert_eq!(mqtt.what, "exec on the new unlock");
}

/// The shipped board's rules in one file: guests run the status action, admins everything.
const BOARD: &str = "
defaultPermissions: {view: true, exec: false, logs: false, kill: false}
authLocalUsers:
  enabled: true
  users:
    - {username: alice, usergroup: admins, password: '$PHC'}
accessControlLists:
  - {name: status, matchUsergroups: [guest], permissions: {view: true, exec: true, logs: true}}
  - {name: admins, matchUsergroups: [admins], addToEveryAction: true,
     permissions: {view: true, exec: true, logs: true, kill: true}}
actions:
  - {id: uptime, title: Uptime, shell: uptime, acls: [status]}
  - {id: reboot, title: Reboot, shell: reboot}
  - {id: shutdown, title: Shut down, shell: poweroff}
";

/// `text` with `accessControlLists: []`: the status action names a list that is gone.
fn without_lists(text: &str) -> String {
    let start = text.find("accessControlLists:").unwrap();
    let end = text.find("actions:").unwrap();
    format!("{}accessControlLists: []\n{}", &text[..start], &text[end..])
}

/// `config` of `text`, as if an overlay `95-over.yaml` wrote `keys` too (what a config
/// whose overlay is gone in the next one looks like, without files on disk).
fn with_overlay(text: &str, keys: &[&'static str]) -> Config {
    let mut c = config(text);
    for &key in keys {
        c.auth.written.push(crate::config::Written {
            file: "95-over.yaml".into(),
            key,
        });
    }
    c
}

/// The tester's F4: an overlay opened the board (all defaults on, `accessControlLists: []`,
/// which disables the status action: its list is gone). Removing it takes exec on reboot
/// and shutdown away from guests and "gives" exec on uptime, which the open config gave
/// too had the action been enabled: applied, not held.
#[test]
fn removing_an_overlay_that_opened_the_board_is_applied() {
    let open = without_lists(&BOARD.replace(
        "defaultPermissions: {view: true, exec: false, logs: false, kill: false}",
        "defaultPermissions: {view: true, exec: true, logs: true, kill: true}",
    ));
    let open = with_overlay(&open, &["defaultPermissions", "accessControlLists"]);
    assert!(open.actions[0].disabled.is_some(), "uptime is disabled");
    let closed = config(BOARD);
    assert_eq!(falls_open(&open, &closed), Ok(None));
}

/// The same with a closing overlay: its `accessControlLists: []` disabled the status
/// action under closed defaults. Removing it gives guests exec on uptime, which the config
/// in force would not give even with the action enabled, and takes nothing away: held, and
/// the refusal says that nobody keeps anything by it.
#[test]
fn removing_an_overlay_that_disabled_the_status_actions_is_held() {
    let shut = with_overlay(&without_lists(BOARD), &["accessControlLists"]);
    let held = falls_open(&shut, &config(BOARD)).unwrap_err();
    assert_eq!(held.key, "accessControlLists");
    assert!(held.kept.is_empty(), "{held:?}");
    let said = held.to_string();
    assert!(said.contains("guests would gain exec on uptime"), "{said}");
    assert!(
        said.contains(
            "the config in force stays until this is applied on purpose or actiond \
                       restarts, and it gives nobody anything this one takes away"
        ),
        "{said}"
    );
}

/// A reload that both gives and takes away, the key's fallback giving real rights: applied
/// and described when guests (or every logged-in user) lose more than they gain, since
/// holding it would keep their wider rights in force; held when some caller gains more than
/// it loses and neither loses on balance, and the refusal names what stays in force.
#[test]
fn a_reload_that_gives_and_takes_away_is_weighed_per_caller() {
    let actions = "actions:
  - {id: uptime, title: Uptime, shell: uptime, acls: [status]}
  - {id: reboot, title: Reboot, shell: reboot}
  - {id: shutdown, title: Shut down, shell: poweroff}
";
    let users = "authLocalUsers:
  enabled: true
  users:
    - {username: alice, usergroup: admins, password: '$PHC'}
";
    // The tester's F4 with a real gain: the open overlay left logs off; the board gives
    // guests logs on uptime, and takes exec and kill on reboot and shutdown away.
    let open = format!(
        "defaultPermissions: {{view: true, exec: true, logs: false, kill: true}}\n\
         accessControlLists: []\n{users}{actions}"
    );
    let open = with_overlay(&open, &["defaultPermissions", "accessControlLists"]);
    let applied = falls_open(&open, &config(BOARD))
        .unwrap()
        .expect("described");
    assert_eq!(applied.key, "accessControlLists");
    let said = applied.to_string();
    assert!(
        said.contains("applied all the same, since it takes away more than it gives"),
        "{said}"
    );
    assert!(
        said.contains("guests lose exec on reboot, shutdown; kill on reboot, shutdown"),
        "{said}"
    );
    assert!(said.contains("guests gain logs on uptime"), "{said}");
    // alice gains logs everywhere and loses nothing: said too, and it holds nothing.
    assert!(
        said.contains("user \"alice\" (group \"admins\") gain logs on uptime, reboot, shutdown"),
        "{said}"
    );

    // In force: guests run uptime and shutdown (the status list). New: a lower layer's
    // `exec: true` stands in for the overlay's `exec: false`, and shutdown left the list:
    // guests gain exec on reboot and lose logs on shutdown (even), every logged-in user gains
    // exec on all three: held, saying that guests keep logs on shutdown.
    let in_force = BOARD.replace(
        "{id: shutdown, title: Shut down, shell: poweroff}",
        "{id: shutdown, title: Shut down, shell: poweroff, acls: [status]}",
    );
    let in_force = with_overlay(&in_force, &["defaultPermissions.exec"]);
    let new = config(&BOARD.replace(
        "defaultPermissions: {view: true, exec: false,",
        "defaultPermissions: {view: true, exec: true,",
    ));
    let held = falls_open(&in_force, &new).unwrap_err();
    assert_eq!(held.gain.who, "every logged-in user", "{held:?}");
    assert_eq!(held.gain.what, "exec on uptime, reboot, shutdown");
    let said = held.to_string();
    assert!(
        said.contains(
            "the config in force stays until this is applied on purpose or actiond restarts, \
             and with it what this one takes away: guests keep logs on shutdown;"
        ),
        "{said}"
    );
}
