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
