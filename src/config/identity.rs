//! Who may do what: the identity settings (`authLocalUsers`, `authApiTokens`, trusted proxy
//! headers, `defaultPermissions`, `defaultPolicy`, `accessControlLists`) and how they are read.
//! `auth` identifies callers with them and `permissions` decides with them; nothing here
//! checks a password or a token.

use super::address::Cidr;
use super::checker::{Checker, Field, Fields, path_or};
use super::schema::{ACL, API_TOKEN, LOCAL_USER, LOCAL_USERS, PERMISSIONS, POLICY};
use super::tree::{Node, key_path};

/// Identity settings; `auth` identifies callers with them, `permissions` decides with them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Auth {
    pub require_guests_to_login: bool,
    pub default_permissions: Permissions,
    /// The keys deciding rights (`RIGHTS_KEYS`, and each key of `defaultPermissions`) as
    /// each file of the config writes them, the lower layers' too: a reload after which a
    /// file no longer writes one, and so gives someone rights, is held
    /// (`watcher::rights::falls_open`), since a file still being written lacks its last keys
    /// and a directory being replaced lacks its files, while a lower layer may still write
    /// the key, wider.
    pub written: Vec<Written>,
    pub local_users_enabled: bool,
    pub local_users: Vec<LocalUser>,
    pub http_header_username: String,
    pub http_header_usergroup: String,
    /// `trustedProxies`, parsed at load; default loopback only.
    pub trusted_proxies: Vec<Cidr>,
    pub api_tokens: Vec<ApiToken>,
    pub access_control_lists: Vec<AccessControlList>,
}

/// The unit tests' starting point (events, permissions, identity): nobody configured, no users,
/// tokens, header names, proxies or ACLs, and `default` for everyone.
#[cfg(test)]
impl Auth {
    pub fn open_to(default: Permissions) -> Auth {
        Auth {
            require_guests_to_login: false,
            default_permissions: default,
            written: vec![],
            local_users_enabled: false,
            local_users: vec![],
            http_header_username: String::new(),
            http_header_usergroup: String::new(),
            trusted_proxies: vec![],
            api_tokens: vec![],
            access_control_lists: vec![],
        }
    }
}

/// A key deciding rights, as one file of the config writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The file, as `Config::files` names it.
    pub file: String,
    /// The key: `defaultPermissions`, `defaultPermissions.exec`, `accessControlLists`, …
    pub key: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Permissions {
    pub view: bool,
    pub exec: bool,
    pub logs: bool,
    pub kill: bool,
}

impl Permissions {
    pub const ALL: Permissions = Permissions {
        view: true,
        exec: true,
        logs: true,
        kill: true,
    };
    pub const NONE: Permissions = Permissions {
        view: false,
        exec: false,
        logs: false,
        kill: false,
    };
}

/// `defaultPolicy {showDiagnostics, showLogList}`. `showLogList` defaults to true, as in
/// OliveTin; `showDiagnostics` to false (OliveTin: true), so that a guest, or anyone, learns
/// about the service's files and host only through an ACL that turns it on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub show_diagnostics: bool,
    pub show_log_list: bool,
}

impl Policy {
    pub const DEFAULT: Policy = Policy {
        show_diagnostics: false,
        show_log_list: true,
    };
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalUser {
    pub username: String,
    pub usergroup: String,
    /// argon2id PHC string.
    pub password: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiToken {
    pub name: String,
    /// Lower-case hex SHA-256 of the token.
    pub sha256: String,
    pub username: String,
    pub usergroup: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessControlList {
    pub name: String,
    pub match_usernames: Vec<String>,
    pub match_usergroups: Vec<String>,
    pub add_to_every_action: bool,
    /// Only the permissions the ACL writes down; `None` means it says nothing about that one.
    pub view: Option<bool>,
    pub exec: Option<bool>,
    pub logs: Option<bool>,
    pub kill: Option<bool>,
    pub show_diagnostics: Option<bool>,
    pub show_log_list: Option<bool>,
}

/// The most memory a stored password hash may ask for at login: OliveTin's own hashes use
/// 64 MiB; anything above is a typo that would exhaust a 512 MB board.
const MAX_ARGON2_KIB: u64 = 65_536;

/// The top-level keys that decide who may do what, whose absence is a default: dropping one
/// from the config in force may give rights (`Auth::written`).
const RIGHTS_KEYS: [&str; 3] = [
    "defaultPermissions",
    "accessControlLists",
    "authRequireGuestsToLogin",
];

/// Each key of `defaultPermissions` and its path: one left out is granted.
const DEFAULT_PERMISSION_KEYS: [(&str, &str); 4] = [
    ("view", "defaultPermissions.view"),
    ("exec", "defaultPermissions.exec"),
    ("logs", "defaultPermissions.logs"),
    ("kill", "defaultPermissions.kill"),
];

/// The identity settings of the top-level mapping.
pub(super) fn auth(c: &mut Checker<'_>, top: &Fields<'_>) -> Auth {
    let require_guests_to_login = c.flag(top.get("authRequireGuestsToLogin"), false);
    let default_permissions = default_permissions(c, top.get("defaultPermissions"));
    let (local_users_enabled, local_users) = local_users(c, top.get("authLocalUsers"));
    let trusted_proxies = trusted_proxies(c, top.get("trustedProxies"));
    let api_tokens = api_tokens(c, top.get("authApiTokens"));
    let access_control_lists = acls(c, top.get("accessControlLists"));
    Auth {
        require_guests_to_login,
        default_permissions,
        // Filled in by the caller, which knows the files (`writes`).
        written: Vec::new(),
        local_users_enabled,
        local_users,
        http_header_username: c
            .text_or(top.get("authHttpHeaderUsername"), "")
            .trim()
            .to_string(),
        http_header_usergroup: c
            .text_or(top.get("authHttpHeaderUserGroup"), "")
            .trim()
            .to_string(),
        trusted_proxies,
        api_tokens,
        access_control_lists,
    }
}

/// The keys deciding rights that one file's settings (`layer`) write, `file` naming it. A
/// key written without a value does not count: it is what a file cut off after its key
/// looks like.
pub(super) fn writes(file: &str, layer: &Fields<'_>) -> Vec<Written> {
    let mut out = Vec::new();
    let mut add = |key| {
        out.push(Written {
            file: file.to_string(),
            key,
        });
    };
    for key in RIGHTS_KEYS {
        if layer.get(key).is_some() {
            add(key);
        }
    }
    if let Some((Node::Map(entries), _)) = layer.get("defaultPermissions") {
        for (key, path) in DEFAULT_PERMISSION_KEYS {
            let spelt = |k: &str| PERMISSIONS.find(k).is_some_and(|(name, _)| name == key);
            if entries
                .iter()
                .any(|(k, v)| spelt(k) && !matches!(v, Node::Null))
            {
                add(path);
            }
        }
    }
    out
}

/// `defaultPermissions`: every permission nobody wrote down is granted. Requiring guests to
/// log in does not change them (OliveTin turns them all off then, which also locks out the
/// logged-in users it meant to let in): the guest gate already refuses guests everything.
fn default_permissions(c: &mut Checker<'_>, field: Field<'_, '_>) -> Permissions {
    let base = Permissions::ALL;
    let Some(entries) = c.mapping(field) else {
        return base;
    };
    let f = c.fields(entries, &key_path("", "defaultPermissions"), PERMISSIONS);
    Permissions {
        view: c.flag(f.get("view"), base.view),
        exec: c.flag(f.get("exec"), base.exec),
        logs: c.flag(f.get("logs"), base.logs),
        kill: c.flag(f.get("kill"), base.kill),
    }
}

/// `defaultPolicy {showDiagnostics, showLogList}`.
pub(super) fn default_policy(c: &mut Checker<'_>, field: Field<'_, '_>) -> Policy {
    let Some(entries) = c.mapping(field) else {
        return Policy::DEFAULT;
    };
    let f = c.fields(entries, "defaultPolicy", POLICY);
    Policy {
        show_diagnostics: c.flag(f.get("showDiagnostics"), Policy::DEFAULT.show_diagnostics),
        show_log_list: c.flag(f.get("showLogList"), Policy::DEFAULT.show_log_list),
    }
}

/// `trustedProxies`: each entry an IP address or CIDR; loopback when the key is absent.
fn trusted_proxies(c: &mut Checker<'_>, field: Field<'_, '_>) -> Vec<Cidr> {
    if field.is_none() {
        return Cidr::LOOPBACK.to_vec();
    }
    let list = c.text_list(field);
    let mut networks = Vec::with_capacity(list.len());
    c.each_entry(field, &list, |_, entry| match Cidr::parse(entry.trim()) {
        Some(network) => {
            networks.push(network);
            None
        }
        None => Some(format!(
            "{entry:?} is not an IP address or CIDR (such as 10.0.0.0/8 or ::1)"
        )),
    });
    networks
}

fn local_users(c: &mut Checker<'_>, field: Field<'_, '_>) -> (bool, Vec<LocalUser>) {
    let Some(entries) = c.mapping(field) else {
        return (false, Vec::new());
    };
    let f = c.fields(entries, path_or(field, ""), LOCAL_USERS);
    let enabled = c.flag(f.get("enabled"), false);
    let mut users: Vec<LocalUser> = Vec::new();
    for (entries, user_path) in c.mappings(f.get("users")) {
        if let Some(user) = local_user(c, entries, &user_path, &users) {
            users.push(user);
        }
    }
    (enabled, users)
}

fn local_user(
    c: &mut Checker<'_>,
    entries: &[(String, Node)],
    path: &str,
    earlier: &[LocalUser],
) -> Option<LocalUser> {
    let u = c.fields(entries, path, LOCAL_USER);
    let username = c.text(u.get("username")).unwrap_or_default();
    if username.is_empty() {
        c.error(path, "a local user needs a username");
        return None;
    }
    if earlier.iter().any(|other| other.username == username) {
        c.error(
            &key_path(path, "username"),
            format!("duplicate username {username:?}"),
        );
        return None;
    }
    // A user without a usable hash is left out with a warning: that user cannot log in,
    // which opens nothing, and the rest of the config works (OliveTin loads such configs
    // too; a `password:` followed only by a comment is null, a bcrypt hash is not argon2id).
    let password = c.text(u.get("password")).unwrap_or_default();
    let password_path = path_or(u.get("password"), path);
    if !password.starts_with("$argon2id$") {
        let found = if password.is_empty() {
            "has no password".to_string()
        } else if password.starts_with("$2") {
            "has a bcrypt hash, not an argon2id one".to_string()
        } else {
            "has a password that is not an argon2id hash ($argon2id$v=19$…)".to_string()
        };
        c.warn(
            password_path,
            format!(
                "user {username:?} {found}, so cannot log in: make a hash with \
                 `actiond hash-password` and put it here"
            ),
        );
        return None;
    }
    if let Some(kib) = argon2_memory_kib(&password).filter(|m| *m > MAX_ARGON2_KIB) {
        c.warn(
            password_path,
            format!(
                "user {username:?} cannot log in: this hash needs {kib} KiB of memory to check, \
                 more than the {MAX_ARGON2_KIB} KiB a small board can spare at login; make a \
                 new one with `actiond hash-password`"
            ),
        );
        return None;
    }
    Some(LocalUser {
        username,
        usergroup: c.text_or(u.get("usergroup"), ""),
        password,
    })
}

/// The `m=` parameter of an argon2 PHC string, if it has one.
fn argon2_memory_kib(phc: &str) -> Option<u64> {
    phc.split('$')
        .find(|part| part.starts_with("m="))
        .and_then(|params| {
            params
                .split(',')
                .find_map(|kv| kv.strip_prefix("m="))
                .and_then(|m| m.parse().ok())
        })
}

fn api_tokens(c: &mut Checker<'_>, field: Field<'_, '_>) -> Vec<ApiToken> {
    let mut tokens: Vec<ApiToken> = Vec::new();
    for (entries, path) in c.mappings(field) {
        let f = c.fields(entries, &path, API_TOKEN);
        let name = c.text(f.get("name")).unwrap_or_default();
        if name.is_empty() {
            c.error(&path, "an API token needs a name (it appears in the logs)");
        }
        let hash = c
            .text(f.get("sha256"))
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        let hash_path = path_or(f.get("sha256"), &path);
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            c.error(
                hash_path,
                "sha256 must be the 64 hex digits of the token's SHA-256 (`actiond gen-token` \
                 prints a token and its hash)",
            );
            continue;
        }
        if tokens.iter().any(|t| t.sha256 == hash) {
            c.error(hash_path, "the same token hash is listed twice");
            continue;
        }
        if name.is_empty() {
            continue;
        }
        let username = c
            .text(f.get("username"))
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| name.clone());
        tokens.push(ApiToken {
            name,
            sha256: hash,
            username,
            usergroup: c.text_or(f.get("usergroup"), ""),
        });
    }
    tokens
}

fn acls(c: &mut Checker<'_>, field: Field<'_, '_>) -> Vec<AccessControlList> {
    let mut acls: Vec<AccessControlList> = Vec::new();
    for (entries, path) in c.mappings(field) {
        let f = c.fields(entries, &path, ACL);
        let name = c.text(f.get("name")).unwrap_or_default();
        if name.is_empty() {
            c.error(&path, "an access control list needs a name");
            continue;
        }
        if acls.iter().any(|earlier| earlier.name == name) {
            c.error(
                &key_path(&path, "name"),
                format!("duplicate access control list name {name:?}"),
            );
            continue;
        }
        let mut acl = AccessControlList {
            name,
            match_usernames: c.text_list(f.get("matchUsernames")),
            match_usergroups: c.text_list(f.get("matchUsergroups")),
            add_to_every_action: c.flag(f.get("addToEveryAction"), false),
            view: None,
            exec: None,
            logs: None,
            kill: None,
            show_diagnostics: None,
            show_log_list: None,
        };
        if let Some(entries) = c.mapping(f.get("permissions")) {
            let p = c.fields(entries, &key_path(&path, "permissions"), PERMISSIONS);
            acl.view = c.boolean(p.get("view"));
            acl.exec = c.boolean(p.get("exec"));
            acl.logs = c.boolean(p.get("logs"));
            acl.kill = c.boolean(p.get("kill"));
        }
        if let Some(entries) = c.mapping(f.get("policy")) {
            let p = c.fields(entries, &key_path(&path, "policy"), POLICY);
            acl.show_diagnostics = c.boolean(p.get("showDiagnostics"));
            acl.show_log_list = c.boolean(p.get("showLogList"));
        }
        acls.push(acl);
    }
    acls
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::fixtures::*;

    #[test]
    fn auth_settings() {
        let hash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo";
        let (c, warnings) = ok(&format!(
            "
authRequireGuestsToLogin: true
defaultPolicy: {{showDiagnostics: false}}
authLocalUsers:
  enabled: true
  users:
    - {{username: alice, usergroup: admins, password: '{hash}'}}
    - {{username: bob, password: '{hash}'}}
authHttpHeaderUsername: X-User
authHttpHeaderUserGroup: X-Group
trustedProxies: [10.0.0.0/8, 192.168.1.1, 'fd00::/8']
authApiTokens:
  - name: home-assistant
    sha256: {}
    usergroup: automation
accessControlLists:
  - name: admins
    matchUsergroups: [admins]
    addToEveryAction: true
    permissions: {{view: true, exec: true, logs: true, kill: false}}
    policy: {{showDiagnostics: true, showLogList: true}}
  - name: nobody
",
            "AB".repeat(32)
        ));
        assert!(warnings.is_empty(), "{warnings:?}");
        let a = &c.auth;
        assert!(a.require_guests_to_login);
        // Guests must log in and defaultPermissions is not written: the gate stops guests,
        // and everyone else keeps the defaults.
        assert_eq!(a.default_permissions, Permissions::ALL);
        assert_eq!(
            c.default_policy,
            Policy {
                show_diagnostics: false,
                show_log_list: true
            }
        );
        assert!(a.local_users_enabled);
        assert_eq!(
            a.local_users,
            vec![
                LocalUser {
                    username: "alice".into(),
                    usergroup: "admins".into(),
                    password: hash.into()
                },
                LocalUser {
                    username: "bob".into(),
                    usergroup: String::new(),
                    password: hash.into()
                },
            ]
        );
        assert_eq!(a.http_header_username, "X-User");
        assert_eq!(a.http_header_usergroup, "X-Group");
        let proxies: Vec<String> = a.trusted_proxies.iter().map(Cidr::to_string).collect();
        assert_eq!(proxies, ["10.0.0.0/8", "192.168.1.1/32", "fd00::/8"]);
        assert_eq!(
            a.api_tokens,
            vec![ApiToken {
                name: "home-assistant".into(),
                sha256: "ab".repeat(32),
                username: "home-assistant".into(),
                usergroup: "automation".into(),
            }]
        );
        let admins = &a.access_control_lists[0];
        assert_eq!(admins.name, "admins");
        assert!(admins.add_to_every_action);
        assert_eq!(
            (admins.view, admins.exec, admins.logs, admins.kill),
            (Some(true), Some(true), Some(true), Some(false))
        );
        assert_eq!(
            (admins.show_diagnostics, admins.show_log_list),
            (Some(true), Some(true))
        );
        let nobody = &a.access_control_lists[1];
        assert_eq!((nobody.view, nobody.show_log_list), (None, None));
        assert!(!nobody.add_to_every_action);
    }

    #[test]
    fn default_permissions_fill_unwritten_fields_from_the_base() {
        let (c, _) = ok("defaultPermissions: {view: true, exec: false}\n");
        assert_eq!(
            c.auth.default_permissions,
            Permissions {
                view: true,
                exec: false,
                logs: true,
                kill: true
            }
        );
        // Requiring guests to log in changes nothing here: the gate is what stops guests.
        let (c, _) = ok("authRequireGuestsToLogin: true\ndefaultPermissions: {exec: false}\n");
        assert_eq!(
            c.auth.default_permissions,
            Permissions {
                view: true,
                exec: false,
                logs: true,
                kill: true
            }
        );
    }

    #[test]
    fn auth_errors_have_paths() {
        let hash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA";
        let cases: &[(String, &str, &str)] = &[
            (
                format!(
                    "authLocalUsers: {{users: [{{username: a, password: '{hash}'}}, {{username: a, password: '{hash}'}}]}}\n"
                ),
                "authLocalUsers.users[1].username",
                "duplicate username",
            ),
            (
                format!("authLocalUsers: {{users: [{{password: '{hash}'}}]}}\n"),
                "authLocalUsers.users[0]",
                "needs a username",
            ),
            (
                "trustedProxies: [127.0.0.1, 10.0.0.0/33]\n".into(),
                "trustedProxies[1]",
                "not an IP address or CIDR",
            ),
            (
                "trustedProxies: localhost\n".into(),
                "trustedProxies",
                "not an IP address or CIDR",
            ),
            (
                "authApiTokens: [{name: t, sha256: abc}]\n".into(),
                "authApiTokens[0].sha256",
                "64 hex digits",
            ),
            (
                format!("authApiTokens: [{{sha256: {}}}]\n", "a".repeat(64)),
                "authApiTokens[0]",
                "needs a name",
            ),
            (
                format!(
                    "authApiTokens: [{{name: a, sha256: {0}}}, {{name: b, sha256: {0}}}]\n",
                    "a".repeat(64)
                ),
                "authApiTokens[1].sha256",
                "listed twice",
            ),
            (
                "accessControlLists: [{name: a}, {name: a}]\n".into(),
                "accessControlLists[1].name",
                "duplicate",
            ),
            (
                "accessControlLists: [{matchUsernames: [x]}]\n".into(),
                "accessControlLists[0]",
                "needs a name",
            ),
            (
                "accessControlLists: [{name: a, permissions: {exec: sometimes}}]\n".into(),
                "accessControlLists[0].permissions.exec",
                "expected a boolean",
            ),
            (
                format!("{ONE_ACTION}    acls: [ghosts]\n"),
                "actions[0].acls[0]",
                "no access control list is named \"ghosts\"",
            ),
        ];
        for (text, path, needle) in cases {
            assert_error(text, path, needle);
        }
    }

    #[test]
    fn password_hashes_that_would_exhaust_the_board_are_refused() {
        assert_eq!(
            argon2_memory_kib("$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA"),
            Some(19456)
        );
        assert_eq!(argon2_memory_kib("plain"), None);
        let text = "authLocalUsers:\n  enabled: true\n  users:\n    - {username: a, password: '$argon2id$v=19$m=4194304,t=2,p=1$c2FsdA$aGFzaA'}\n";
        assert_warning(text, "authLocalUsers.users[0].password", "KiB of memory");
        assert!(ok(text).0.auth.local_users.is_empty());
        let fine = "authLocalUsers:\n  enabled: true\n  users:\n    - {username: a, password: '$argon2id$v=19$m=65536,t=4,p=4$c2FsdA$aGFzaA'}\n";
        ok(fine);
    }

    #[test]
    fn a_user_without_a_usable_hash_cannot_log_in_and_the_rest_loads() {
        let hash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA";
        // What migrating configs hold: a value that is only a comment (null), a bcrypt hash,
        // a plain password, nothing at all.
        let text = format!(
            "authLocalUsers:
  enabled: true
  users:
    - username: commented
      password: # set me
    - {{username: bcrypt, password: '$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy'}}
    - {{username: plain, password: hunter2}}
    - {{username: none}}
    - {{username: good, usergroup: admins, password: '{hash}'}}
{ONE_ACTION}"
        );
        let (c, warnings) = ok(&text);
        let users: Vec<&str> = c
            .auth
            .local_users
            .iter()
            .map(|u| u.username.as_str())
            .collect();
        assert_eq!(users, ["good"]);
        let got: Vec<(&str, bool)> = warnings
            .iter()
            .map(|w| (w.path.as_str(), w.message.contains("cannot log in")))
            .collect();
        assert_eq!(
            got,
            [
                ("authLocalUsers.users[0]", true),
                ("authLocalUsers.users[1].password", true),
                ("authLocalUsers.users[2].password", true),
                ("authLocalUsers.users[3]", true),
            ],
            "{warnings:#?}"
        );
        assert!(warnings[1].message.contains("bcrypt"), "{warnings:#?}");
        assert_eq!(c.actions.len(), 1);
    }
}
