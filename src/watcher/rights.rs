//! What a reload gives to whom: for every caller the new config knows of (the guest, any
//! logged-in user, local users, API tokens, the MQTT caller, the users and groups the ACLs
//! name), the permissions on the actions both configs have, and the policy flags, decided
//! under the old config and under the new one by `permissions::decide`. What is allowed now
//! and was not is a gain, which the watcher logs at warn level: a config that lost its ACLs
//! (half written, a bad merge) opens buttons to people who had none, and the log must say so.
//!
//! Trust and identity are gains too, named as such: networks newly trusted to name the
//! caller in a header (or header names turned on or changed), a user who may now log in (new,
//! or `authLocalUsers` turned on) or whose password hash was replaced, an action any web page
//! or a new link key may now start by a plain GET, a dump switch turned on, and web pages
//! (`allowedOrigins`) or host names (`allowedHosts`) newly let through.
//!
//! Pure: two configs in, the gains out. An action that is new has no "before": only that
//! guests or every logged-in user may run it is listed; a removed right is not a gain.

use std::collections::BTreeMap;

use crate::config::{Cidr, Config, PlainGet};
use crate::origin::{Hosts, Origins};
use crate::permissions::{Caller, Decision, Provider, Verb, decide, effective_policy};

/// At most this many actions are named per verb in a line; the rest are counted.
const NAMED: usize = 8;

/// One caller's gains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gain {
    /// Who, in words: `guests`, `user "alice" (group "admins")`, …
    pub who: String,
    /// What, in words: `exec on reboot, shutdown; showDiagnostics`.
    pub what: String,
}

/// A caller to compare, as the old config knew it (`None`: it did not) and as the new one
/// does, and how the log names it.
struct Who {
    label: String,
    before: Option<Caller>,
    after: Caller,
    /// A caller nobody configured (guests, every logged-in user): a new action they may run
    /// is a gain too.
    broad: bool,
}

fn caller(username: &str, usergroup: &str, provider: Provider) -> Caller {
    Caller {
        username: username.to_string(),
        usergroup: usergroup.to_string(),
        provider,
        sid: None,
    }
}

impl Who {
    /// A caller that is the same under both configs.
    fn same(label: String, c: Caller) -> Who {
        Who {
            label,
            before: Some(c.clone()),
            after: c,
            broad: false,
        }
    }

    fn broad(mut self) -> Who {
        self.broad = true;
        self
    }
}

/// Everyone the new config names, once each. A configured identity (a local user, a token,
/// the MQTT caller) is compared with itself as the old config had it, so a user moved to
/// another group is seen gaining that group's rights, and a new one gains all it has.
fn everyone(old: &Config, new: &Config) -> Vec<Who> {
    let mut out = vec![
        Who::same("guests".into(), Caller::guest()).broad(),
        // Named by no ACL: what `defaultPermissions` gives a logged-in user.
        Who::same(
            "every logged-in user".into(),
            caller("", "", Provider::Local),
        )
        .broad(),
    ];
    for u in &new.auth.local_users {
        let before = old
            .auth
            .local_users
            .iter()
            .find(|o| o.username == u.username);
        out.push(Who {
            label: format!("user {:?} (group {:?})", u.username, u.usergroup),
            before: before.map(|o| caller(&o.username, &o.usergroup, Provider::Local)),
            after: caller(&u.username, &u.usergroup, Provider::Local),
            broad: false,
        });
    }
    for t in &new.auth.api_tokens {
        let before = old.auth.api_tokens.iter().find(|o| o.sha256 == t.sha256);
        out.push(Who {
            label: format!(
                "API token {:?} (user {:?}, group {:?})",
                t.name, t.username, t.usergroup
            ),
            before: before.map(|o| caller(&o.username, &o.usergroup, Provider::Token)),
            after: caller(&t.username, &t.usergroup, Provider::Token),
            broad: false,
        });
    }
    if let Some(m) = &new.mqtt {
        out.push(Who {
            label: format!(
                "MQTT presses (user {:?}, group {:?})",
                m.run_as_username, m.run_as_usergroup
            ),
            before: old
                .mqtt
                .as_ref()
                .map(|o| caller(&o.run_as_username, &o.run_as_usergroup, Provider::Mqtt)),
            after: caller(&m.run_as_username, &m.run_as_usergroup, Provider::Mqtt),
            broad: false,
        });
    }
    // A user from the trusted header may bear any name or group an ACL names.
    for acl in old
        .auth
        .access_control_lists
        .iter()
        .chain(&new.auth.access_control_lists)
    {
        for g in &acl.match_usergroups {
            out.push(Who::same(
                format!("users of group {g:?}"),
                caller("", g, Provider::Header),
            ));
        }
        for u in &acl.match_usernames {
            out.push(Who::same(
                format!("user {u:?}"),
                caller(u, "", Provider::Header),
            ));
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|w| seen.insert(w.label.clone()));
    out
}

/// `ids` in words, at most `NAMED` of them: `a, b, c and 12 more`.
fn named<T: AsRef<str>>(ids: &[T]) -> String {
    let shown: Vec<&str> = ids.iter().take(NAMED).map(AsRef::as_ref).collect();
    let more = ids.len().saturating_sub(NAMED);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("{}{tail}", shown.join(", "))
}

/// What `new` allows that `old` did not, per caller, in the order callers were listed, then
/// what it trusts that `old` did not (`trust`); one gain per caller.
pub fn gains(old: &Config, new: &Config) -> Vec<Gain> {
    let mut out = permission_gains(old, new);
    for g in trust(old, new) {
        match out.iter_mut().find(|o| o.who == g.who) {
            Some(o) => {
                o.what.push_str("; ");
                o.what.push_str(&g.what);
            }
            None => out.push(g),
        }
    }
    out
}

/// What the permission function allows under `new` and did not under `old`, per caller.
fn permission_gains(old: &Config, new: &Config) -> Vec<Gain> {
    const VERBS: [Verb; 4] = [Verb::View, Verb::Exec, Verb::Logs, Verb::Kill];
    let mut out = Vec::new();
    for who in everyone(old, new) {
        let c = &who.after;
        let had = |action: &crate::config::Action, verb| {
            who.before
                .as_ref()
                .is_some_and(|b| decide(&old.auth, b, action, verb) == Decision::Allow)
        };
        // verb → the actions it newly allows, in the new config's order.
        let mut by_verb: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
        let mut new_runs = Vec::new();
        for action in &new.actions {
            let Some(before) = old.actions.iter().find(|a| a.id == action.id) else {
                if who.broad && decide(&new.auth, c, action, Verb::Exec) == Decision::Allow {
                    new_runs.push(action.id.as_str());
                }
                continue;
            };
            for (i, verb) in VERBS.into_iter().enumerate() {
                if decide(&new.auth, c, action, verb) == Decision::Allow && !had(before, verb) {
                    by_verb.entry(i).or_default().push(&action.id);
                }
            }
        }
        let mut parts: Vec<String> = by_verb
            .into_iter()
            .map(|(i, ids)| format!("{} on {}", VERBS[i].as_str(), named(&ids)))
            .collect();
        if !new_runs.is_empty() {
            parts.push(format!("exec on the new {}", named(&new_runs)));
        }
        // The guest gate decides whether a guest sees anything at all.
        let open = |cfg: &Config, c: &Caller| !(cfg.auth.require_guests_to_login && c.is_guest());
        let policy = |cfg: &Config, c: &Caller| effective_policy(&cfg.auth, cfg.default_policy, c);
        if open(new, c) {
            let after = policy(new, c);
            let before = who
                .before
                .as_ref()
                .filter(|b| open(old, b))
                .map(|b| policy(old, b));
            let had_diagnostics = before.is_some_and(|p| p.show_diagnostics);
            let had_log_list = before.is_some_and(|p| p.show_log_list);
            if after.show_diagnostics && !had_diagnostics {
                parts.push("showDiagnostics".into());
            }
            if after.show_log_list && !had_log_list {
                parts.push("showLogList".into());
            }
        }
        if !parts.is_empty() {
            out.push(Gain {
                who: who.label,
                what: parts.join("; "),
            });
        }
    }
    out
}

/// What `new` trusts that `old` did not: who may name the caller, who may log in and with
/// which password, who may start an action by a plain GET, the dump switches, and which web
/// pages and host names reach the API.
fn trust(old: &Config, new: &Config) -> Vec<Gain> {
    let mut out = Vec::new();
    out.extend(headers(old, new));
    out.extend(logins(old, new));
    out.extend(plain_gets(old, new));
    out.extend(dumps(old, new));
    out.extend(reach(old, new));
    out
}

fn gain(who: impl Into<String>, what: impl Into<String>) -> Gain {
    Gain {
        who: who.into(),
        what: what.into(),
    }
}

/// Networks newly trusted to name the caller in a header. New or other header names: every
/// trusted network gains them; the same names: the networks not within one trusted before.
fn headers(old: &Config, new: &Config) -> Option<Gain> {
    let (o, n) = (&old.auth, &new.auth);
    if n.http_header_username.is_empty() {
        return None;
    }
    let headers = if n.http_header_usergroup.is_empty() {
        format!("header {}", n.http_header_username)
    } else {
        format!(
            "headers {} and {}",
            n.http_header_username, n.http_header_usergroup
        )
    };
    let renamed = o.http_header_username != n.http_header_username
        || o.http_header_usergroup != n.http_header_usergroup;
    let nets: Vec<String> = n
        .trusted_proxies
        .iter()
        .filter(|c| renamed || !o.trusted_proxies.iter().any(|p| c.within(p)))
        .map(Cidr::to_string)
        .collect();
    (!nets.is_empty()).then(|| {
        gain(
            format!("clients at {}", named(&nets)),
            format!("any user and group they name in the {headers} (trustedProxies)"),
        )
    })
}

/// Local users who may now log in, or log in with another password.
fn logins(old: &Config, new: &Config) -> Vec<Gain> {
    let (o, n) = (&old.auth, &new.auth);
    if !n.local_users_enabled {
        return Vec::new();
    }
    let mut out = Vec::new();
    for u in &n.local_users {
        let before = o.local_users.iter().find(|b| b.username == u.username);
        let what = match before {
            _ if !o.local_users_enabled => "logging in (authLocalUsers.enabled turned on)",
            None => "logging in (a new user)",
            Some(b) if b.password != u.password => {
                "a new password hash (whoever knows its password logs in as them)"
            }
            Some(_) => continue,
        };
        out.push(gain(
            format!("user {:?} (group {:?})", u.username, u.usergroup),
            what,
        ));
    }
    out
}

/// Actions any web page, or whoever has a new link key, may now start by a plain GET.
fn plain_gets(old: &Config, new: &Config) -> Vec<Gain> {
    let before = |id: &str| {
        old.actions
            .iter()
            .find(|a| a.id == id)
            .map(|a| a.plain_get.clone())
    };
    let (mut any_page, mut keyed) = (Vec::new(), Vec::new());
    for a in &new.actions {
        let was = before(&a.id);
        match &a.plain_get {
            PlainGet::AnyPage if was != Some(PlainGet::AnyPage) => any_page.push(&a.id),
            PlainGet::Key { .. } if was.as_ref() != Some(&a.plain_get) => keyed.push(&a.id),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if !any_page.is_empty() {
        out.push(gain(
            "any web page a visitor opens",
            format!(
                "a plain GET that starts {} (insecureAllowStartFromAnyWebPage)",
                named(&any_page)
            ),
        ));
    }
    if !keyed.is_empty() {
        out.push(gain(
            "whoever has a new link key",
            format!("a plain GET that starts {} (linkKeySha256)", named(&keyed)),
        ));
    }
    out
}

/// The dump switches turned on.
fn dumps(old: &Config, new: &Config) -> Option<Gain> {
    let on: Vec<&str> = [
        (
            "insecureAllowDumpVars",
            old.insecure_allow_dump_vars,
            new.insecure_allow_dump_vars,
        ),
        (
            "insecureAllowDumpSos",
            old.insecure_allow_dump_sos,
            new.insecure_allow_dump_sos,
        ),
        (
            "insecureAllowDumpActionMap",
            old.insecure_allow_dump_action_map,
            new.insecure_allow_dump_action_map,
        ),
    ]
    .into_iter()
    .filter(|(_, before, after)| *after && !before)
    .map(|(name, ..)| name)
    .collect();
    (!on.is_empty()).then(|| gain("callers of the API", on.join(", ")))
}

/// The entries of `list` that `had` did not list, as they are written.
fn newly_listed<T: PartialEq + std::fmt::Display>(had: &[T], list: &[T]) -> Vec<String> {
    list.iter()
        .filter(|x| !had.contains(x))
        .map(ToString::to_string)
        .collect()
}

/// Web pages (`allowedOrigins`) and host names (`allowedHosts`) newly let through.
fn reach(old: &Config, new: &Config) -> Vec<Gain> {
    let (o, n) = (&old.allowed, &new.allowed);
    let mut out = Vec::new();
    let origins = match (&o.origins, &n.origins) {
        (Origins::Any, _) | (_, Origins::Own) => None,
        (_, Origins::Any) => Some("every web page".to_string()),
        (before, Origins::Listed(list)) => {
            let had = match before {
                Origins::Listed(l) => l.as_slice(),
                _ => &[],
            };
            let gained = newly_listed(had, list);
            (!gained.is_empty()).then(|| format!("web pages of {}", named(&gained)))
        }
    };
    if let Some(who) = origins {
        out.push(gain(
            who,
            "the API through their visitors' browsers (allowedOrigins)",
        ));
    }
    let hosts = match (&o.hosts, &n.hosts) {
        (Hosts::Any, _) | (_, Hosts::Own) => None,
        (_, Hosts::Any) => Some("requests for any host name".to_string()),
        (before, Hosts::Listed(list)) => {
            let had = match before {
                Hosts::Listed(l) => l.as_slice(),
                _ => &[],
            };
            let gained = newly_listed(had, list);
            (!gained.is_empty()).then(|| format!("requests for {}", named(&gained)))
        }
    };
    if let Some(who) = hosts {
        out.push(gain(
            who,
            "being served as the board's own names are (allowedHosts)",
        ));
    }
    out
}

#[cfg(test)]
mod tests {
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
                    "any user and group they name in the header X-User (trustedProxies)".into(),
                )],
            ),
            // Narrowed, or a network within one trusted before: nothing.
            (
                with("authHttpHeaderUsername: X-User\ntrustedProxies: [10.0.0.0/8]"),
                with("authHttpHeaderUsername: X-User\ntrustedProxies: [10.1.0.0/16]"),
                vec![],
            ),
            // Proxies widened with no header auth: nobody can name a caller.
            (
                with("trustedProxies: [10.0.0.0/8]"),
                with("trustedProxies: [0.0.0.0/0]"),
                vec![],
            ),
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
            let expected: Vec<(&str, &str)> =
                expected.iter().map(|(w, x)| (*w, x.as_str())).collect();
            assert_eq!(got, expected, "case {i}");
        }
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
}
