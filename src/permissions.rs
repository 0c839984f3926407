//! Who may do what: the one function every operation, GET route and (later) the event stream
//! asks. It is pure: the caller and the config come in, a decision goes out.
//! It decides; the API layer enforces. Identifying the caller (tokens, headers, sessions) is
//! not done here.

use crate::config::{AccessControlList, Action, Auth, Policy};

/// How the caller was identified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// Nobody: the guest.
    System,
    Local,
    Header,
    Token,
    /// A press arriving over MQTT, as the configured `runAs` user.
    Mqtt,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub username: String,
    /// One or more groups, separated by spaces or commas (a proxy may send several).
    pub usergroup: String,
    pub provider: Provider,
    /// The session id, for a caller identified by the session cookie.
    pub sid: Option<String>,
}

impl Caller {
    pub fn guest() -> Caller {
        Caller {
            username: "guest".into(),
            usergroup: "guest".into(),
            provider: Provider::System,
            sid: None,
        }
    }

    /// The user that triggers run as (`startup`, `cron`, `fileindir`): group `system`,
    /// provider `system`, as in OliveTin. Such a caller is not a guest.
    pub fn system(username: &str) -> Caller {
        Caller {
            username: username.into(),
            usergroup: "system".into(),
            provider: Provider::System,
            sid: None,
        }
    }

    /// The guest is the `guest` of provider `system`; the trigger users share the provider,
    /// and `authRequireGuestsToLogin` must not stop them.
    pub fn is_guest(&self) -> bool {
        self.provider == Provider::System && self.username == "guest"
    }

    /// The caller's groups: the usergroup split on spaces and commas.
    pub fn groups(&self) -> impl Iterator<Item = &str> {
        self.usergroup
            .split([' ', ',', '\t'])
            .filter(|g| !g.is_empty())
    }
}

impl Provider {
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::System => "system",
            Provider::Local => "local",
            Provider::Header => "header",
            Provider::Token => "token",
            Provider::Mqtt => "mqtt",
        }
    }
}

/// Whether an ACL names the caller, by username or by one of their groups.
fn acl_matches(acl: &AccessControlList, caller: &Caller) -> bool {
    acl.match_usernames.contains(&caller.username)
        || caller
            .groups()
            .any(|g| acl.match_usergroups.iter().any(|m| m == g))
}

/// The names of the ACLs that match the caller (WhoAmI's `acls`).
pub fn matched_acls<'a>(auth: &'a Auth, caller: &Caller) -> Vec<&'a str> {
    auth.access_control_lists
        .iter()
        .filter(|acl| acl_matches(acl, caller))
        .map(|acl| acl.name.as_str())
        .collect()
}

/// The caller's policy: `defaultPolicy`, with every flag a matching ACL turns on.
pub fn effective_policy(auth: &Auth, default: Policy, caller: &Caller) -> Policy {
    let mut p = default;
    for acl in auth
        .access_control_lists
        .iter()
        .filter(|acl| acl_matches(acl, caller))
    {
        p.show_diagnostics |= acl.show_diagnostics == Some(true);
        p.show_log_list |= acl.show_log_list == Some(true);
    }
    p
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    View,
    Exec,
    Logs,
    Kill,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::View => "view",
            Verb::Exec => "exec",
            Verb::Logs => "logs",
            Verb::Kill => "kill",
        }
    }
}

/// What a guest is told where guests must log in (`Decision::LoginRequired`), by an
/// operation and by an event stream the gate closes alike.
pub const LOGIN_FIRST: &str = "log in first, or send an API token: guests must log in here";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// A known caller without the permission.
    Deny,
    /// A guest where guests must log in first.
    LoginRequired,
}

/// The authentication gate alone: may this caller use a gated operation at all?
pub fn gate(auth: &Auth, caller: &Caller) -> Decision {
    if auth.require_guests_to_login && caller.is_guest() {
        Decision::LoginRequired
    } else {
        Decision::Allow
    }
}

/// May `caller` do `verb` on `action`? An ACL applies when it matches the caller and is
/// either added to every action or listed by the action; a permission is granted when any
/// applying ACL grants it, else by `defaultPermissions`.
pub fn decide(auth: &Auth, caller: &Caller, action: &Action, verb: Verb) -> Decision {
    if gate(auth, caller) == Decision::LoginRequired {
        return Decision::LoginRequired;
    }
    let applying = auth.access_control_lists.iter().filter(|acl| {
        acl_matches(acl, caller) && (acl.add_to_every_action || action.acls.contains(&acl.name))
    });
    let mut granted = false;
    for acl in applying {
        let says = match verb {
            Verb::View => acl.view,
            Verb::Exec => acl.exec,
            Verb::Logs => acl.logs,
            Verb::Kill => acl.kill,
        };
        granted |= says == Some(true);
    }
    let default = match verb {
        Verb::View => auth.default_permissions.view,
        Verb::Exec => auth.default_permissions.exec,
        Verb::Logs => auth.default_permissions.logs,
        Verb::Kill => auth.default_permissions.kill,
    };
    if granted || default {
        Decision::Allow
    } else {
        Decision::Deny
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{AccessControlList, Permissions};
    use crate::execution::tests::action;

    fn auth(default: Permissions, require_login: bool, acls: Vec<AccessControlList>) -> Auth {
        Auth {
            require_guests_to_login: require_login,
            access_control_lists: acls,
            ..Auth::open_to(default)
        }
    }

    fn acl(
        name: &str,
        users: &[&str],
        groups: &[&str],
        every: bool,
        exec: Option<bool>,
    ) -> AccessControlList {
        AccessControlList {
            name: name.into(),
            match_usernames: users.iter().map(|s| s.to_string()).collect(),
            match_usergroups: groups.iter().map(|s| s.to_string()).collect(),
            add_to_every_action: every,
            view: None,
            exec,
            logs: None,
            kill: None,
            show_diagnostics: None,
            show_log_list: None,
        }
    }

    fn alice() -> Caller {
        Caller {
            username: "alice".into(),
            usergroup: "admins".into(),
            provider: Provider::Local,
            sid: None,
        }
    }

    #[test]
    fn defaults_decide_when_no_acl_applies() {
        let a = action("x");
        let open = auth(Permissions::ALL, false, vec![]);
        let closed = auth(Permissions::NONE, false, vec![]);
        for verb in [Verb::View, Verb::Exec, Verb::Logs, Verb::Kill] {
            assert_eq!(decide(&open, &Caller::guest(), &a, verb), Decision::Allow);
            assert_eq!(decide(&closed, &Caller::guest(), &a, verb), Decision::Deny);
        }
    }

    #[test]
    fn guests_must_log_in_when_required() {
        let a = action("x");
        let au = auth(Permissions::ALL, true, vec![]);
        assert_eq!(
            decide(&au, &Caller::guest(), &a, Verb::View),
            Decision::LoginRequired
        );
        assert_eq!(gate(&au, &Caller::guest()), Decision::LoginRequired);
        assert_eq!(decide(&au, &alice(), &a, Verb::View), Decision::Allow);
        assert_eq!(gate(&au, &alice()), Decision::Allow);
    }

    #[test]
    fn acls_grant_when_they_apply() {
        let mut a = (*action("x")).clone();
        let acls = vec![
            acl("admins-everywhere", &[], &["admins"], true, Some(true)),
            acl("bob-here", &["bob"], &[], false, Some(true)),
        ];
        let au = auth(Permissions::NONE, false, acls);
        let bob = Caller {
            username: "bob".into(),
            usergroup: "users".into(),
            provider: Provider::Token,
            sid: None,
        };
        // (caller, action lists bob-here, expected exec)
        assert_eq!(decide(&au, &alice(), &a, Verb::Exec), Decision::Allow);
        assert_eq!(
            decide(&au, &alice(), &a, Verb::Kill),
            Decision::Deny,
            "the ACL says nothing of kill"
        );
        assert_eq!(
            decide(&au, &bob, &a, Verb::Exec),
            Decision::Deny,
            "not listed by the action"
        );
        a.acls = vec!["bob-here".into()];
        assert_eq!(decide(&au, &bob, &a, Verb::Exec), Decision::Allow);
        assert_eq!(
            decide(&au, &Caller::guest(), &a, Verb::Exec),
            Decision::Deny
        );
    }

    #[test]
    fn any_of_several_groups_matches() {
        let a = action("x");
        let au = auth(
            Permissions::NONE,
            false,
            vec![acl("ops", &[], &["ops"], true, Some(true))],
        );
        for (groups, want) in [
            ("ops", true),
            ("users ops", true),
            ("users,ops", true),
            ("users", false),
            ("opsx", false),
        ] {
            let c = Caller {
                username: "c".into(),
                usergroup: groups.into(),
                provider: Provider::Header,
                sid: None,
            };
            let got = decide(&au, &c, &a, Verb::Exec) == Decision::Allow;
            assert_eq!(got, want, "{groups}");
            assert_eq!(matched_acls(&au, &c).len(), usize::from(want), "{groups}");
        }
    }

    #[test]
    fn policies_only_add() {
        let mut with_policy = acl("diag", &["alice"], &[], false, None);
        with_policy.show_diagnostics = Some(true);
        with_policy.show_log_list = Some(false);
        let au = auth(Permissions::ALL, false, vec![with_policy]);
        let none = Policy {
            show_diagnostics: false,
            show_log_list: true,
        };
        let p = effective_policy(&au, none, &alice());
        assert!(p.show_diagnostics && p.show_log_list);
        assert_eq!(effective_policy(&au, none, &Caller::guest()), none);
    }

    #[test]
    fn an_acl_saying_false_does_not_take_away_a_default() {
        let a = action("x");
        let au = auth(
            Permissions::ALL,
            false,
            vec![acl("no", &["alice"], &[], true, Some(false))],
        );
        assert_eq!(decide(&au, &alice(), &a, Verb::Exec), Decision::Allow);
    }

    #[test]
    fn trigger_users_pass_the_guest_gate_and_meet_the_acls() {
        let x = action("x");
        let cron = Caller::system("cron");
        assert!(!cron.is_guest() && Caller::guest().is_guest());
        let gated = auth(Permissions::ALL, true, vec![]);
        assert_eq!(decide(&gated, &cron, &x, Verb::Exec), Decision::Allow);
        assert_eq!(
            decide(&gated, &Caller::guest(), &x, Verb::Exec),
            Decision::LoginRequired
        );
        let locked = auth(
            Permissions::NONE,
            false,
            vec![acl("triggers", &[], &["system"], true, Some(true))],
        );
        for user in ["startup", "cron", "fileindir"] {
            let c = Caller::system(user);
            assert_eq!(decide(&locked, &c, &x, Verb::Exec), Decision::Allow);
            assert_eq!(decide(&locked, &c, &x, Verb::Kill), Decision::Deny);
        }
        let nobody = auth(Permissions::NONE, false, vec![]);
        assert_eq!(decide(&nobody, &cron, &x, Verb::Exec), Decision::Deny);
    }
}
