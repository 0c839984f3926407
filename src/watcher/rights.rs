//! What a reload gives to whom: for every caller the new config knows of (the guest, any
//! logged-in user, local users, API tokens, the MQTT caller, the users and groups the ACLs
//! name), the permissions on the actions both configs have, and the policy flags, decided
//! under the old config and under the new one by `permissions::decide`. What is allowed now
//! and was not is a gain, which the watcher logs at warn level: a config that lost its ACLs
//! (half written, a bad merge) opens buttons to people who had none, and the log must say so.
//!
//! Trust and identity are gains too, named as such: networks newly trusted to name the
//! caller in a header (or header names turned on or changed), networks newly trusted as
//! proxies with or without a header (a proxy's clients count against no per-address share), a
//! user who may now log in (new, or `authLocalUsers` turned on) or whose password hash was
//! replaced, an action any web page or a new link key may now start by a plain GET, a dump
//! switch turned on, web pages (`allowedOrigins`) or host names (`allowedHosts`) newly let
//! through, `connectProtocolHeader: optional`, and an argument that accepts values it refused:
//! its choices removed or added to, its type (or `regex:` pattern) loosened,
//! `allowLeadingDash` or `allowUnknownProgram` turned on, an empty value taken (`rejectNull` removed, or a default
//! given), its choices drawn from another entity type, or a value a file trigger alone set
//! now open to callers; and a broker added or changed (its address, login or node id), whose
//! clients may then press as the MQTT caller.
//!
//! One reload is refused here rather than described (`falls_open`): one after which a file
//! no longer writes a key deciding rights it writes in the config in force
//! (`defaultPermissions` or one of its keys, `accessControlLists`,
//! `authRequireGuestsToLogin`) when what the key falls back to (its default, or a lower
//! layer's value) gives someone rights the config in force does not, more than the reload
//! takes from them, as a file half written or an overlay directory being replaced does; never
//! when guests or every logged-in user lose more than they gain, since holding the reload
//! would keep their wider rights in force.
//!
//! Pure: two configs in, the gains out, in time linear in the actions. An action that is new
//! has no "before": only that guests, every logged-in user or the MQTT caller may run it is
//! listed; a removed right is not a gain.

use std::collections::{BTreeMap, HashMap};

use crate::arguments::{ArgType, Argument, Dash};
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
            // Any client that may publish to the press topics presses as this caller: a new
            // action it may run is a new button for all of them.
            broad: true,
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

/// A reload held because a file of it no longer writes a key deciding rights that the same
/// file writes in the config in force (`Auth::written`: `defaultPermissions` or one of its
/// keys, `accessControlLists`, `authRequireGuestsToLogin`), and the value the key falls back
/// to (its default, or a lower layer's) gives someone rights the config in force does not
/// give them, more than it takes away from them: what a file written in steps looks like
/// before its access rules arrive (they often come last, in any order), what an overlay
/// directory being replaced looks like before its files are back, and what a bad merge
/// leaves. A config that means it says so by writing the key in a file that did not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FallsOpen {
    /// The key dropped, as written (`defaultPermissions.exec`).
    pub key: &'static str,
    /// The file that wrote it and no longer does (gone, emptied, or cut short).
    pub file: String,
    /// Whether the file is still part of the config.
    pub still_read: bool,
    /// What its absence gives, to whom (the first caller that gains more than it loses).
    pub gain: Gain,
    /// What stays in force while the reload is held that the new config takes away, per
    /// caller: a refusal must say plainly whose wider rights it keeps.
    pub kept: Vec<Gain>,
}

impl std::fmt::Display for FallsOpen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let example = match self.key {
            "authRequireGuestsToLogin" => "authRequireGuestsToLogin: false",
            "accessControlLists" => {
                "accessControlLists: [...], listing every list the actions' acls: name"
            }
            _ => {
                "defaultPermissions: {view: true, exec: true, logs: true, kill: true}, with \
                  the values you mean"
            }
        };
        let (file, key) = (&self.file, self.key);
        if self.still_read {
            write!(
                f,
                "{file} no longer writes {key}, which it writes in the config in force, and \
                 without it {} would gain {} (a file still being written?)",
                self.gain.who, self.gain.what
            )?;
        } else {
            write!(
                f,
                "{file}, which writes {key} in the config in force, is gone, and without it {} \
                 would gain {} (a directory being replaced?)",
                self.gain.who, self.gain.what
            )?;
        }
        write!(
            f,
            "; the config in force stays until this is applied on purpose or actiond restarts"
        )?;
        if self.kept.is_empty() {
            write!(f, ", and it gives nobody anything this one takes away")?;
        } else {
            let kept: Vec<String> = self
                .kept
                .iter()
                .map(|k| format!("{} keep {}", k.who, k.what))
                .collect();
            write!(
                f,
                ", and with it what this one takes away: {}",
                named_in(&kept, "; ")
            )?;
        }
        write!(
            f,
            "; to apply this on purpose, write the key with the value you mean (e.g. {example}) \
             in a file that did not write it before, or restart actiond"
        )
    }
}

impl std::error::Error for FallsOpen {}

/// A reload applied although a file of it no longer writes a key deciding rights, as
/// `FallsOpen` would hold it, because it takes away from each caller at least as much as
/// the key's fallback gives them: holding it would keep the wider rights of the config in
/// force. The watcher logs both at warn level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Narrows {
    pub key: &'static str,
    pub file: String,
    pub still_read: bool,
    /// What the key's fallback gives, per caller.
    pub gained: Vec<Gain>,
    /// What the reload takes away, per caller.
    pub lost: Vec<Gain>,
}

impl std::fmt::Display for Narrows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (file, key) = (&self.file, self.key);
        let how = if self.still_read {
            "no longer writes"
        } else {
            "is gone, and so no longer writes"
        };
        let each = |list: &[Gain], verb: &str| -> String {
            let parts: Vec<String> = list
                .iter()
                .map(|g| format!("{} {verb} {}", g.who, g.what))
                .collect();
            named_in(&parts, "; ")
        };
        write!(
            f,
            "{file} {how} {key}, which it writes in the config in force; applied all the same, \
             since it takes away more than it gives: {}; and {}",
            each(&self.lost, "lose"),
            each(&self.gained, "gain"),
        )
    }
}

/// Per verb (its index in `VERBS`), the ids of the actions it is allowed or refused on, in
/// config order.
type Rights<'a> = BTreeMap<usize, Vec<&'a str>>;

const VERBS: [Verb; 4] = [Verb::View, Verb::Exec, Verb::Logs, Verb::Kill];

fn count(r: &Rights<'_>) -> usize {
    r.values().map(Vec::len).sum()
}

/// `exec on reboot, shutdown; kill on reboot`.
fn describe(r: &Rights<'_>) -> String {
    r.iter()
        .map(|(i, ids)| format!("{} on {}", VERBS[*i].as_str(), named(ids)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// What `c` may do on `action` under `config`, per verb. An action disabled in the config
/// counts as what its rights would be if it were enabled: `decide` does not look at it.
fn rights(config: &Config, c: &Caller, action: &Action) -> [bool; 4] {
    VERBS.map(|v| decide(&config.auth, c, action, v) == Decision::Allow)
}

/// One caller's side of a reload that drops a key: what the fallback gives it that the config
/// in force did not, and what the config in force lets it do that the new one does not.
struct Balance<'a> {
    label: String,
    gained: Rights<'a>,
    lost: Rights<'a>,
    /// Rights on actions of the config in force the new one removes: they stay while a
    /// reload is held, and are named then, but do not weigh, since a directory being
    /// replaced removes actions as a matter of course.
    removed: Rights<'a>,
    /// The first dropped key a gain of this caller comes from.
    key: Option<usize>,
    /// Guests, every logged-in user (see `Who::broad`; not the MQTT caller, whose
    /// presses the broker decides).
    broad: bool,
}

/// Whether `new` may replace `old`. For each key a file writes in `old` and not in `new`
/// (the files are compared one by one, not the merged settings: a lower layer, a board file
/// or the config under an overlay, may still write the key, wider than the file that
/// narrowed it), `new` with the old value put back tells which of what `new` allows comes
/// from the key's fallback. Such a right is a gain only if the config in force does not give
/// it either, an action disabled there counting as what its rights would be if enabled (an
/// overlay that named no list an action's `acls:` names disabled it; taking the overlay
/// away gives nothing it had not given). Against the gains stand the losses: what the
/// config in force lets the caller do, on an action it runs and `new` keeps, that `new` does
/// not; both are counted in actions × verbs. The reload is held (`Err`) when some caller
/// gains more than it loses, unless guests or every logged-in user lose more than they gain:
/// holding it then would keep their wider rights in force, so it is applied and described
/// (`Ok(Some)`), as it is when no caller gains more than it loses. A refusal names what it
/// keeps in force that `new` takes away (actions `new` removes too). A key some file writes
/// in `new` and did not in `old` was written on purpose: the drop of that key is not held.
pub fn falls_open(old: &Config, new: &Config) -> Result<Option<Narrows>, FallsOpen> {
    let (was, now) = (&old.auth.written, &new.auth.written);
    let dropped: Vec<(&crate::config::Written, Config)> = was
        .iter()
        .filter(|w| !(now.contains(w) || now.iter().any(|n| n.key == w.key && !was.contains(n))))
        .map(|w| {
            let mut kept = new.clone();
            restore(w.key, old, &mut kept);
            (w, kept)
        })
        .collect();
    if dropped.is_empty() {
        return Ok(None);
    }
    let old_actions = by_id(old);
    let new_ids: std::collections::HashSet<&str> =
        new.actions.iter().map(|a| a.id.as_str()).collect();
    let mut balances = Vec::new();
    for who in everyone(old, new) {
        let mut b = Balance {
            label: who.label.clone(),
            gained: Rights::new(),
            lost: Rights::new(),
            removed: Rights::new(),
            key: None,
            broad: who.broad && who.after.provider != Provider::Mqtt,
        };
        let before = |action: &Action| {
            who.before
                .as_ref()
                .map_or([false; 4], |c| rights(old, c, action))
        };
        for action in &new.actions {
            let after = rights(new, &who.after, action);
            let had = match old_actions.get(action.id.as_str()) {
                Some(a) => before(a),
                // A new action has no "before": only that a caller nobody configured may
                // use it is a gain.
                None if who.broad => [false; 4],
                None => after,
            };
            for i in 0..VERBS.len() {
                if !after[i] || had[i] {
                    continue;
                }
                let from = dropped
                    .iter()
                    .position(|(_, kept)| !rights(kept, &who.after, action)[i]);
                if let Some(k) = from {
                    b.gained.entry(i).or_default().push(&action.id);
                    b.key = Some(b.key.map_or(k, |was: usize| was.min(k)));
                }
            }
            if let Some(a) = old_actions.get(action.id.as_str())
                && a.disabled.is_none()
            {
                let had = before(a);
                for i in 0..VERBS.len() {
                    if had[i] && !after[i] {
                        b.lost.entry(i).or_default().push(&action.id);
                    }
                }
            }
        }
        for a in old.actions.iter().filter(|a| a.disabled.is_none()) {
            if new_ids.contains(a.id.as_str()) {
                continue;
            }
            for (i, had) in before(a).into_iter().enumerate() {
                if had {
                    b.removed.entry(i).or_default().push(&a.id);
                }
            }
        }
        balances.push(b);
    }
    let Some(first) = balances.iter().find(|b| b.key.is_some()) else {
        return Ok(None);
    };
    let place = |k: usize| {
        let w = dropped[k].0;
        (
            w.key,
            w.file.clone(),
            new.files.iter().any(|f| f.name == w.file),
        )
    };
    let said = |b: &Balance<'_>, r: &Rights<'_>| gain(b.label.clone(), describe(r));
    // Holding the reload would keep the wider rights of guests (or of every logged-in
    // user) in force when they lose more than they gain: then it is applied.
    let narrower = balances
        .iter()
        .any(|b| b.broad && count(&b.lost) > count(&b.gained));
    if let Some(wider) = balances
        .iter()
        .find(|b| b.key.is_some() && count(&b.gained) > count(&b.lost))
        .filter(|_| !narrower)
    {
        let (key, file, still_read) = place(wider.key.unwrap_or(0));
        let kept = balances
            .iter()
            .filter_map(|b| {
                let mut all = b.lost.clone();
                for (i, ids) in &b.removed {
                    all.entry(*i).or_default().extend(ids);
                }
                (!all.is_empty()).then(|| said(b, &all))
            })
            .collect();
        return Err(FallsOpen {
            key,
            file,
            still_read,
            gain: said(wider, &wider.gained),
            kept,
        });
    }
    let (key, file, still_read) = place(first.key.unwrap_or(0));
    Ok(Some(Narrows {
        key,
        file,
        still_read,
        gained: balances
            .iter()
            .filter(|b| !b.gained.is_empty())
            .map(|b| said(b, &b.gained))
            .collect(),
        lost: balances
            .iter()
            .filter(|b| !b.lost.is_empty())
            .map(|b| said(b, &b.lost))
            .collect(),
    }))
}

/// Puts `old`'s value of `key` into `into`.
fn restore(key: &str, old: &Config, into: &mut Config) {
    let (from, to) = (&old.auth, &mut into.auth);
    match key {
        "defaultPermissions" => to.default_permissions = from.default_permissions,
        "defaultPermissions.view" => to.default_permissions.view = from.default_permissions.view,
        "defaultPermissions.exec" => to.default_permissions.exec = from.default_permissions.exec,
        "defaultPermissions.logs" => to.default_permissions.logs = from.default_permissions.logs,
        "defaultPermissions.kill" => to.default_permissions.kill = from.default_permissions.kill,
        "accessControlLists" => to
            .access_control_lists
            .clone_from(&from.access_control_lists),
        "authRequireGuestsToLogin" => to.require_guests_to_login = from.require_guests_to_login,
        _ => {}
    }
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
    out.extend(presses(old, new));
    out
}

/// Who may press as the MQTT caller: whoever may publish to the node's press topics on the
/// broker. A broker added or changed (its address, the login, the node id the topics are
/// named by) lets another set of clients press, which the broker's access rules decide and
/// actiond cannot see. The caller's own rights are compared by `permission_gains`.
fn presses(old: &Config, new: &Config) -> Option<Gain> {
    let n = new.mqtt.as_ref()?;
    let node = n.node_id.as_deref().unwrap_or("<hostname>");
    let changed: Vec<&str> = match &old.mqtt {
        None => vec!["mqtt"],
        Some(o) => [
            (
                "mqtt.broker",
                (o.host.as_str(), o.port) != (n.host.as_str(), n.port),
            ),
            ("mqtt.username", o.username != n.username),
            ("mqtt.passwordFile", o.password_file != n.password_file),
            ("mqtt.nodeId", o.node_id != n.node_id),
        ]
        .into_iter()
        .filter_map(|(key, differs)| differs.then_some(key))
        .collect(),
    };
    (!changed.is_empty()).then(|| {
        gain(
            format!(
                "clients of {} that may publish to actiond/{node}/+/press",
                n.broker
            ),
            format!(
                "presses as user {:?} (group {:?}) ({} changed)",
                n.run_as_username,
                n.run_as_usergroup,
                changed.join(", ")
            ),
        )
    })
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

/// Arguments of an action both configs have that now accept values they refused (see
/// `argument_gain`).
fn arguments(old: &Config, new: &Config) -> Option<Gain> {
    let old_actions = by_id(old);
    let mut widened = Vec::new();
    for action in &new.actions {
        let Some(before) = old_actions.get(action.id.as_str()) else {
            continue;
        };
        if action.entity_dash == Dash::Allow && before.entity_dash == Dash::Refuse {
            widened.push(format!(
                "the entity fields in the command of {}: values that start with - \
                 (allowLeadingDash)",
                action.id
            ));
        }
        for arg in &action.arguments {
            let Some(was) = before.arguments.iter().find(|a| a.name == arg.name) else {
                continue;
            };
            for what in argument_gain(was, arg) {
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

/// Whether `arg`'s values are limited to its choices: choices win over the type, and a
/// checkbox's or a checklist's choices are its values too.
fn limited(arg: &Argument) -> bool {
    !arg.choices.is_empty() || arg.rule == ArgType::ChoiceOnly
}

/// What an argument accepts under `new` and did not under `old`, in words, one entry per
/// property that lets values through: its choices or type, `allowLeadingDash`,
/// `allowUnknownProgram`, whether an
/// empty value is taken (`rejectNull`, `default`), the entity type its choices come from,
/// and whether a caller may set it at all (a file trigger's own). Each is compared on its
/// own, so a reload that widens two of them names both.
fn argument_gain(old: &Argument, new: &Argument) -> Vec<String> {
    if new.rule.is_display_only() {
        return Vec::new();
    }
    let mut out: Vec<String> = values_gain(old, new).into_iter().collect();
    // The gate on a leading `-` holds for free text that the choices do not limit, and for
    // an entity-fed argument, whose choices are the entity file's text, not the author's.
    if new.dash == Dash::Allow
        && old.dash == Dash::Refuse
        && (new.entity.is_some() || (!limited(new) && new.rule.is_free_text()))
    {
        out.push("values that start with - (allowLeadingDash)".into());
    }
    if new.unknown_program && !old.unknown_program && !limited(new) {
        out.push(
            "values among the arguments of a program actiond does not know \
             (allowUnknownProgram)"
                .into(),
        );
    }
    if takes_empty(new) && !takes_empty(old) {
        out.push(match new.default.as_deref().filter(|d| !d.is_empty()) {
            Some(default) => format!("an empty value (it now takes the default {default:?})"),
            None => "an empty value (rejectNull removed)".into(),
        });
    }
    if let Some(kind) = new
        .entity
        .as_deref()
        .filter(|k| old.entity.as_deref() != Some(k))
    {
        let was = old
            .entity
            .as_deref()
            .map_or("none".to_string(), |k| format!("{k:?}"));
        out.push(format!("the instances of entity type {kind:?} (was {was})"));
    }
    if old.from_trigger && !new.from_trigger {
        out.push("a value from the caller (before, its file trigger's alone)".into());
    }
    out
}

/// Whether a start that sends no value for `arg` gets past it: not required, or required
/// with a default to take.
fn takes_empty(arg: &Argument) -> bool {
    !arg.reject_null || arg.default.as_deref().is_some_and(|d| !d.is_empty())
}

/// What the choices or the type of `new` accept that those of `old` refused, in words.
fn values_gain(old: &Argument, new: &Argument) -> Option<String> {
    let values =
        |a: &Argument| -> Vec<String> { a.choices.iter().map(|c| c.value.clone()).collect() };
    let (had, has) = (values(old), values(new));
    match (limited(old), limited(new)) {
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
mod tests;
