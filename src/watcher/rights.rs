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

use std::collections::{BTreeMap, HashMap};

use crate::arguments::{ArgType, Argument};
use crate::config::{Action, Cidr, Config, PlainGet, ProtocolHeader};
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
    named_in(ids, ", ")
}

/// `items` joined by `sep`, at most `NAMED` of them, the rest counted.
fn named_in<T: AsRef<str>>(ids: &[T], sep: &str) -> String {
    let shown: Vec<&str> = ids.iter().take(NAMED).map(AsRef::as_ref).collect();
    let more = ids.len().saturating_sub(NAMED);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("{}{tail}", shown.join(sep))
}

/// A reload refused because the new config would fall back to the allow-all defaults: it
/// writes neither `defaultPermissions` nor any `accessControlLists`, while the config in force
/// wrote one of them. That is what a config written in steps looks like before its access
/// rules arrive (they often come last), and what a bad merge leaves; applied, everyone could
/// run everything. A config that means it says so by writing `defaultPermissions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FallsOpen;

impl std::fmt::Display for FallsOpen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "it has neither defaultPermissions nor any accessControlLists, so everyone could              do everything, while the config in force has them (a file still being written?);              to mean it, write defaultPermissions (e.g. {view: true, exec: true, logs: true,              kill: true})",
        )
    }
}

impl std::error::Error for FallsOpen {}

/// Whether `new` may replace `old` without falling back to the allow-all defaults.
pub fn falls_open(old: &Config, new: &Config) -> Result<(), FallsOpen> {
    let ruled =
        |c: &Config| c.auth.default_permissions_written || !c.auth.access_control_lists.is_empty();
    if ruled(old) && !ruled(new) {
        return Err(FallsOpen);
    }
    Ok(())
}

/// The actions of `config` by id: a reload of thousands of actions compares them in linear
/// time.
fn by_id(config: &Config) -> HashMap<&str, &Action> {
    config.actions.iter().map(|a| (a.id.as_str(), a)).collect()
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
    let old_actions = by_id(old);
    let mut out = Vec::new();
    for who in everyone(old, new) {
        let c = &who.after;
        let had = |action: &Action, verb| {
            who.before
                .as_ref()
                .is_some_and(|b| decide(&old.auth, b, action, verb) == Decision::Allow)
        };
        // verb → the actions it newly allows, in the new config's order.
        let mut by_verb: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
        let mut new_runs = Vec::new();
        for action in &new.actions {
            let Some(before) = old_actions.get(action.id.as_str()) else {
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
    out.extend(proxies(old, new));
    out.extend(protocol_header(old, new));
    out.extend(arguments(old, new));
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
    let nets = newly_trusted(old, new, renamed);
    (!nets.is_empty()).then(|| {
        gain(
            format!("clients at {}", named(&nets)),
            format!("any user and group they name in the {headers} (trustedProxies)"),
        )
    })
}

/// Networks newly trusted as proxies, with or without header auth: a proxy carries
/// everyone, so its clients count against no per-address share of connections or event
/// streams.
fn proxies(old: &Config, new: &Config) -> Option<Gain> {
    let nets = newly_trusted(old, new, false);
    (!nets.is_empty()).then(|| {
        gain(
            format!("clients at {}", named(&nets)),
            "no per-address share of connections and event streams (trustedProxies)",
        )
    })
}

/// The networks of `new`'s `trustedProxies` not within one of `old`'s (all of them when
/// `all`).
fn newly_trusted(old: &Config, new: &Config, all: bool) -> Vec<String> {
    let (o, n) = (&old.auth, &new.auth);
    n.trusted_proxies
        .iter()
        .filter(|c| all || !o.trusted_proxies.iter().any(|p| c.within(p)))
        .map(Cidr::to_string)
        .collect()
}

/// `connectProtocolHeader: optional` turned on: Connect calls without the header are
/// served, which the rule kept out (a form of any web page among them).
fn protocol_header(old: &Config, new: &Config) -> Option<Gain> {
    let opened = old.connect_protocol_header == ProtocolHeader::Required
        && new.connect_protocol_header == ProtocolHeader::Optional;
    opened.then(|| {
        gain(
            "callers that send no Connect-Protocol-Version header",
            "Connect calls without it (connectProtocolHeader: optional)",
        )
    })
}

/// Arguments of an action both configs have that now accept values they refused: choices
/// removed or added to, or a type that is not within the one before.
fn arguments(old: &Config, new: &Config) -> Option<Gain> {
    let old_actions = by_id(old);
    let mut widened = Vec::new();
    for action in &new.actions {
        let Some(before) = old_actions.get(action.id.as_str()) else {
            continue;
        };
        for arg in &action.arguments {
            let Some(was) = before.arguments.iter().find(|a| a.name == arg.name) else {
                continue;
            };
            if let Some(what) = argument_gain(was, arg) {
                widened.push(format!("{} of {}: {what}", arg.name, action.id));
            }
        }
    }
    (!widened.is_empty()).then(|| {
        gain(
            "whoever may start these actions",
            format!(
                "argument values refused before: {}",
                named_in(&widened, "; ")
            ),
        )
    })
}

/// Whether `arg`'s values are limited to its choices (choices win over the type, but for
/// the types that are about choices).
fn by_choices(arg: &Argument) -> bool {
    !arg.choices.is_empty()
        && !matches!(
            arg.rule,
            ArgType::Checkbox | ArgType::Checklist | ArgType::ChoiceOnly
        )
}

/// What an argument accepts under `new` and did not under `old`, in words.
fn argument_gain(old: &Argument, new: &Argument) -> Option<String> {
    let values =
        |a: &Argument| -> Vec<String> { a.choices.iter().map(|c| c.value.clone()).collect() };
    let (had, has) = (values(old), values(new));
    match (
        by_choices(old) || old.rule == ArgType::ChoiceOnly,
        by_choices(new) || new.rule == ArgType::ChoiceOnly,
    ) {
        (true, true) => {
            let more: Vec<&String> = has.iter().filter(|v| !had.contains(v)).collect();
            (!more.is_empty()).then(|| {
                format!(
                    "the new choices {}",
                    named(&more.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>())
                )
            })
        }
        (true, false) => Some(format!(
            "any {} value (its choices removed)",
            type_name(&new.rule)
        )),
        (false, true) => {
            // Choices replace the type: those the type refused are new.
            let more: Vec<String> = has
                .iter()
                .filter(|v| old.rule.check(v, &[]).is_err())
                .map(|v| format!("{v:?}"))
                .collect();
            (!more.is_empty()).then(|| format!("the choices {} its type refused", named(&more)))
        }
        (false, false) => (!within(&new.rule, &old.rule)).then(|| {
            format!(
                "type {} (was {})",
                type_name(&new.rule),
                type_name(&old.rule)
            )
        }),
    }
}

fn type_name(rule: &ArgType) -> &str {
    match rule.name() {
        "" => "ascii",
        name => name,
    }
}

/// Whether every value of type `narrow` is one of type `wide` too, as far as this table
/// knows; any other change of type counts as a widening.
fn within(narrow: &ArgType, wide: &ArgType) -> bool {
    use ArgType::*;
    let ascii = |t: &ArgType| matches!(t, Untyped | Ascii);
    // Any text, quoted; the very dangerous one is substituted as it is.
    let any = |t: &ArgType| matches!(t, Password | RawStringMultiline);
    if narrow == wide || (ascii(narrow) && ascii(wide)) {
        return true;
    }
    match wide {
        VeryDangerousRawString => true,
        w if any(w) => !matches!(narrow, VeryDangerousRawString),
        AsciiIdentifier => ascii(narrow) || matches!(narrow, Int),
        AsciiSentence | UnicodeIdentifier => {
            ascii(narrow) || matches!(narrow, Int | AsciiIdentifier)
        }
        _ => false,
    }
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
    let old_actions = by_id(old);
    let before = |id: &str| old_actions.get(id).map(|a| a.plain_get.clone());
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

/// Web pages (`allowedOrigins`) and host names (`allowedHosts`) newly let through.
fn reach(old: &Config, new: &Config) -> Vec<Gain> {
    let (o, n) = (&old.allowed, &new.allowed);
    let mut out = Vec::new();
    let origins = match (&o.origins, &n.origins) {
        (Origins::Any, _) | (_, Origins::Own) => None,
        (_, Origins::Any) => Some("every web page".to_string()),
        (before, Origins::Listed(list)) => {
            let had = |x| matches!(before, Origins::Listed(l) if l.contains(x));
            let gained: Vec<String> = list
                .iter()
                .filter(|x| !had(x))
                .map(ToString::to_string)
                .collect();
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
            let had = |x| matches!(before, Hosts::Listed(l) if l.contains(x));
            let gained: Vec<String> = list
                .iter()
                .filter(|x| !had(x))
                .map(ToString::to_string)
                .collect();
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
            let expected: Vec<(&str, &str)> =
                expected.iter().map(|(w, x)| (*w, x.as_str())).collect();
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

    /// A reload to the allow-all defaults from a config with rules is refused, unless the
    /// new config writes `defaultPermissions` itself.
    #[test]
    fn falling_back_to_the_allow_all_defaults_is_refused_unless_written() {
        let acl_only = "accessControlLists: [{name: a, matchUsergroups: [x]}]\n";
        let defaults_only = "defaultPermissions: {exec: false}\n";
        let all_written = "defaultPermissions: {view: true, exec: true, logs: true, kill: true}\n";
        let cases: &[(&str, &str, bool)] = &[
            (LOCKED, HALF, false),
            (acl_only, "", false),
            (defaults_only, "", false),
            (defaults_only, "defaultPermissions:\n", false),
            (LOCKED, all_written, true),
            (LOCKED, acl_only, true),
            (LOCKED, defaults_only, true),
            ("", "", true),
            (HALF, "", true),
            (HALF, LOCKED, true),
        ];
        for (i, (old, new, ok)) in cases.iter().enumerate() {
            let got = falls_open(&config(old), &config(new));
            assert_eq!(got.is_ok(), *ok, "case {i}: {old:?} -> {new:?}");
        }
        assert!(FallsOpen.to_string().contains("write defaultPermissions"));
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
