//! What a reload gives to whom: for every caller the new config knows of (the guest, any
//! logged-in user, local users, API tokens, the MQTT caller, the users and groups the ACLs
//! name), the permissions on the actions both configs have, and the policy flags, decided
//! under the old config and under the new one by `permissions::decide`. What is allowed now
//! and was not is a gain, which the watcher logs at warn level: a config that lost its ACLs
//! (half written, a bad merge) opens buttons to people who had none, and the log must say so.
//!
//! Pure: two configs in, the gains out. Actions that are new have no "before" and are not
//! listed; a removed right is not a gain.

use std::collections::BTreeMap;

use crate::config::Config;
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
        }
    }
}

/// Everyone the new config names, once each. A configured identity (a local user, a token,
/// the MQTT caller) is compared with itself as the old config had it, so a user moved to
/// another group is seen gaining that group's rights, and a new one gains all it has.
fn everyone(old: &Config, new: &Config) -> Vec<Who> {
    let mut out = vec![
        Who::same("guests".into(), Caller::guest()),
        // Named by no ACL: what `defaultPermissions` gives a logged-in user.
        Who::same(
            "every logged-in user".into(),
            caller("", "", Provider::Local),
        ),
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

/// What `new` allows that `old` did not, per caller, in the order callers were listed.
pub fn gains(old: &Config, new: &Config) -> Vec<Gain> {
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
        for action in &new.actions {
            let Some(before) = old.actions.iter().find(|a| a.id == action.id) else {
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
            .map(|(i, ids)| {
                let named = ids[..ids.len().min(NAMED)].join(", ");
                let more = ids.len().saturating_sub(NAMED);
                let tail = if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                };
                format!("{} on {named}{tail}", VERBS[i].as_str())
            })
            .collect();
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
