//! The key tables: for every mapping of the config, the keys actiond reads, the older
//! spellings OliveTin renamed (read under both names), and the OliveTin keys actiond lacks,
//! each with what that means for a config that sets it. Keys match case-insensitively. A key
//! in no table is unknown: warned about by name, never fatal, so a config written for the
//! richer peer still starts.
//!
//! The bounds (`maxConnections`, …) are not listed here: each is one row of the settings
//! table, and the walker's top-level schema is this file's top-level table plus those keys.

/// How one key of a mapping is treated.
#[derive(Clone, Copy)]
pub(super) enum Rule {
    /// A key actiond reads.
    Read,
    /// Another spelling of a key actiond reads (OliveTin renamed it at some point).
    Alias(&'static str),
    /// A key OliveTin has and actiond does not; the text says what follows from that.
    Unsupported(&'static str),
}

use Rule::{Alias, Read, Unsupported};

/// One table: each key with its rule.
pub(super) type Keys = &'static [(&'static str, Rule)];

/// The keys of one kind of mapping: one or more tables, looked up in order.
#[derive(Clone, Copy)]
pub(super) struct Schema(&'static [Keys]);

impl Schema {
    pub const fn new(tables: &'static [Keys]) -> Schema {
        Schema(tables)
    }

    /// The key as the table spells it and its rule, for `key` in any letter case.
    pub fn find(self, key: &str) -> Option<(&'static str, Rule)> {
        self.entries()
            .find(|(name, _)| name.eq_ignore_ascii_case(key))
    }

    /// The rule of a key spelt exactly so (an alias's target); a missing one reads.
    pub fn rule_of(self, name: &str) -> Rule {
        self.entries()
            .find(|(n, _)| *n == name)
            .map_or(Read, |(_, rule)| rule)
    }

    /// Every key, for suggestions.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        self.entries().map(|(name, _)| name)
    }

    fn entries(self) -> impl Iterator<Item = (&'static str, Rule)> {
        self.0.iter().flat_map(|keys| keys.iter().copied())
    }
}

pub(super) const ACTION: Schema = Schema(&[ACTION_KEYS]);
pub(super) const ARGUMENT: Schema = Schema(&[ARGUMENT_KEYS]);
pub(super) const CHOICE: Schema = Schema(&[CHOICE_KEYS]);
pub(super) const RATE: Schema = Schema(&[RATE_KEYS]);
pub(super) const LINK: Schema = Schema(&[LINK_KEYS]);
pub(super) const PROMETHEUS: Schema = Schema(&[PROMETHEUS_KEYS]);
pub(super) const PERMISSIONS: Schema = Schema(&[PERMISSIONS_KEYS]);
pub(super) const POLICY: Schema = Schema(&[POLICY_KEYS]);
pub(super) const LOCAL_USERS: Schema = Schema(&[LOCAL_USERS_KEYS]);
pub(super) const LOCAL_USER: Schema = Schema(&[LOCAL_USER_KEYS]);
pub(super) const API_TOKEN: Schema = Schema(&[API_TOKEN_KEYS]);
pub(super) const ACL: Schema = Schema(&[ACL_KEYS]);
pub(super) const ENTITY: Schema = Schema(&[ENTITY_KEYS]);
pub(super) const COMPONENT: Schema = Schema(&[COMPONENT_KEYS]);

const LEGACY_LISTENER: &str = "a legacy OliveTin 2 listener; actiond serves the web UI and the \
     API on listenAddressSingleHTTPFrontend only";
const NO_OAUTH2: &str = "there is no OAuth2 login; use authLocalUsers, authApiTokens or a trusted \
     proxy header (authHttpHeaderUsername) instead";
const NO_JWT: &str = "there is no JWT login; use authApiTokens or a trusted proxy header \
     (authHttpHeaderUsername) instead";
const NO_THEMES: &str = "the built-in web UI has no themes, style mods or custom JavaScript";
const NO_GROUPS: &str =
    "there are no action groups; each action's own maxConcurrent is its only limit";

/// The top-level keys but the bounds.
pub(super) const TOP_KEYS: Keys = &[
    ("listenAddressSingleHTTPFrontend", Read),
    ("logLevel", Read),
    ("pageTitle", Read),
    ("showFooter", Read),
    ("showNavigation", Read),
    ("bannerMessage", Read),
    ("bannerCss", Read),
    ("additionalNavigationLinks", Read),
    ("defaultIconForActions", Read),
    ("defaultPopupOnStart", Read),
    ("defaultOnClick", Alias("defaultPopupOnStart")),
    // The bound's first name, from when it covered only the request's head.
    ("headerReadTimeout", Alias("clientTimeout")),
    ("stateDirectory", Read),
    ("historySync", Read),
    ("runActionsAs", Read),
    ("connectProtocolHeader", Read),
    ("trustedProxies", Read),
    ("allowedHosts", Read),
    ("allowedOrigins", Read),
    ("prometheus", Read),
    ("mqtt", Read),
    ("actions", Read),
    ("entities", Read),
    ("dashboards", Read),
    ("include", Read),
    // actiond's layers (config::layers): a board file below, an overlay directory above.
    ("board", Read),
    ("overlay", Read),
    ("authRequireGuestsToLogin", Read),
    ("defaultPermissions", Read),
    ("defaultPolicy", Read),
    ("authLocalUsers", Read),
    ("authHttpHeaderUsername", Read),
    ("authHttpHeaderUserGroup", Read),
    ("authApiTokens", Read),
    ("accessControlLists", Read),
    ("insecureAllowDumpVars", Read),
    ("insecureAllowDumpSos", Read),
    ("insecureAllowDumpActionMap", Read),
    // OliveTin keys actiond does not implement.
    (
        "listenAddressPrometheus",
        Unsupported(
            "there is no separate metrics listener; with prometheus.enabled the metrics are at \
             /metrics on the main listener",
        ),
    ),
    ("listenAddressWebUI", Unsupported(LEGACY_LISTENER)),
    ("listenAddressRestActions", Unsupported(LEGACY_LISTENER)),
    ("externalRestAddress", Unsupported(LEGACY_LISTENER)),
    ("useSingleHTTPFrontend", Unsupported(LEGACY_LISTENER)),
    (
        "logDebugOptions",
        Unsupported("use logLevel: debug for more detail"),
    ),
    (
        "showNewVersions",
        Unsupported("actiond does not look for new versions"),
    ),
    (
        "checkForUpdates",
        Unsupported("actiond never checks for updates"),
    ),
    (
        "showNavigateOnStartIcons",
        Unsupported("the built-in web UI has no such option"),
    ),
    (
        "sectionNavigationStyle",
        Unsupported("the built-in web UI has one navigation style"),
    ),
    ("styleMods", Unsupported(NO_THEMES)),
    ("themeName", Unsupported(NO_THEMES)),
    ("themeCacheDisabled", Unsupported(NO_THEMES)),
    ("enableCustomJs", Unsupported(NO_THEMES)),
    (
        "webUIDir",
        Unsupported("the web UI is built into the binary and cannot be replaced"),
    ),
    (
        "defaultIconForDirectories",
        Unsupported("directories without an icon use the web UI's own folder icon"),
    ),
    (
        "defaultIconForBack",
        Unsupported("the web UI uses its own back icon"),
    ),
    (
        "features",
        Unsupported("OliveTin's feature flags do not apply to actiond"),
    ),
    (
        "security",
        Unsupported("actiond sets its own security headers and cookie options"),
    ),
    (
        "serviceHostMode",
        Unsupported("Windows service integration does not apply"),
    ),
    (
        "serviceLogs",
        Unsupported("actiond logs to stderr (journald picks it up)"),
    ),
    (
        "saveLogs",
        Unsupported(
            "execution logs are not written to files; set stateDirectory to keep the history \
             across restarts",
        ),
    ),
    // Six-field lines (seconds first) are always accepted, so the switch has nothing to do.
    ("cronSupportForSeconds", Read),
    ("actionGroups", Unsupported(NO_GROUPS)),
    (
        "authLoginUrl",
        Unsupported("there is no external login page"),
    ),
    ("authOAuth2RedirectUrl", Unsupported(NO_OAUTH2)),
    ("authOAuth2Providers", Unsupported(NO_OAUTH2)),
    ("authJwtCookieName", Unsupported(NO_JWT)),
    ("authJwtHeader", Unsupported(NO_JWT)),
    ("authJwtAud", Unsupported(NO_JWT)),
    ("authJwtDomain", Unsupported(NO_JWT)),
    ("authJwtCertsUrl", Unsupported(NO_JWT)),
    ("authJwtHmacSecret", Unsupported(NO_JWT)),
    ("authJwtClaimUsername", Unsupported(NO_JWT)),
    ("authJwtClaimUserGroup", Unsupported(NO_JWT)),
    ("authJwtPubKeyPath", Unsupported(NO_JWT)),
    (
        "authHttpHeaderUserGroupSep",
        Unsupported("the group header is read as one group name"),
    ),
    (
        "insecureAllowDumpJwtClaims",
        Unsupported("there are no JWT users whose claims could be dumped"),
    ),
    (
        "insecureAllowDumpOAuth2UserData",
        Unsupported("there are no OAuth2 users whose data could be dumped"),
    ),
    (
        "insecureAllowDumpServerDiagnostics",
        Unsupported("GetDiagnostics is governed by the showDiagnostics policy"),
    ),
];

const ACTION_KEYS: Keys = &[
    ("id", Read),
    ("title", Read),
    ("icon", Read),
    ("shell", Read),
    ("exec", Read),
    ("timeout", Read),
    ("arguments", Read),
    ("entity", Read),
    ("hidden", Read),
    ("maxConcurrent", Read),
    ("maxRate", Read),
    ("acls", Read),
    ("popupOnStart", Read),
    ("onclick", Alias("popupOnStart")),
    ("workingDirectory", Read),
    ("execOnStartup", Read),
    ("execOnCron", Read),
    ("execOnFileCreatedInDir", Read),
    ("execOnFileChangedInDir", Read),
    ("linkKeySha256", Read),
    ("insecureAllowStartFromAnyWebPage", Read),
    ("deviceClass", Read),
    ("allowLeadingDash", Read),
    ("allowUnknownProgram", Read),
    (
        "shellAfterCompleted",
        Unsupported("the command runs without it; nothing runs after the action completes"),
    ),
    (
        "execOnCalendarFile",
        Unsupported("the action is not started from a calendar file"),
    ),
    (
        "execOnWebhook",
        Unsupported(
            "there are no webhooks; start the action through the API instead (StartAction, or GET \
             /api/StartActionByGet/<id>) with an API token",
        ),
    ),
    (
        "triggers",
        Unsupported("finishing this action does not start other actions"),
    ),
    ("trigger", Alias("triggers")),
    ("groups", Unsupported(NO_GROUPS)),
    (
        "justification",
        Unsupported("the action starts without asking for a justification"),
    ),
    (
        "saveLogs",
        Unsupported(
            "execution logs are not written to files; set stateDirectory to keep the history \
             across restarts",
        ),
    ),
    (
        "enabledExpression",
        Unsupported("the action is always enabled (permissions still apply)"),
    ),
];

const ARGUMENT_KEYS: Keys = &[
    ("name", Read),
    ("title", Read),
    ("type", Read),
    ("default", Read),
    ("choices", Read),
    ("description", Read),
    ("suggestions", Read),
    ("entity", Read),
    ("rejectNull", Read),
    ("allowLeadingDash", Read),
    ("allowUnknownProgram", Read),
    (
        "suggestionsBrowserKey",
        Unsupported(
            "values are not remembered in the browser; the suggestions are shown as written",
        ),
    ),
];

const CHOICE_KEYS: Keys = &[("value", Read), ("title", Read)];
const RATE_KEYS: Keys = &[("limit", Read), ("duration", Read)];
const LINK_KEYS: Keys = &[
    ("title", Read),
    ("url", Read),
    (
        "target",
        Unsupported(
            "the web UI decides where links open (Init's additionalLinks carry title and url)",
        ),
    ),
];
const PROMETHEUS_KEYS: Keys = &[
    ("enabled", Read),
    (
        "defaultGoMetrics",
        Unsupported("actiond has no Go runtime metrics"),
    ),
];
const PERMISSIONS_KEYS: Keys = &[
    ("view", Read),
    ("exec", Read),
    ("logs", Read),
    ("kill", Read),
];
const POLICY_KEYS: Keys = &[
    ("showDiagnostics", Read),
    ("showLogList", Read),
    (
        "showVersionNumber",
        Unsupported("the web UI always shows the version"),
    ),
];
const LOCAL_USERS_KEYS: Keys = &[("enabled", Read), ("users", Read)];
const LOCAL_USER_KEYS: Keys = &[
    ("username", Read),
    ("usergroup", Read),
    ("password", Read),
    (
        "apiKey",
        Unsupported(
            "there are no per-user API keys; list the token's SHA-256 under authApiTokens \
             (`actiond gen-token` makes one)",
        ),
    ),
];
const API_TOKEN_KEYS: Keys = &[
    ("name", Read),
    ("sha256", Read),
    ("username", Read),
    ("usergroup", Read),
];
const ACL_KEYS: Keys = &[
    ("name", Read),
    ("matchUsernames", Read),
    ("matchUsergroups", Read),
    ("addToEveryAction", Read),
    ("permissions", Read),
    ("policy", Read),
];
const ENTITY_KEYS: Keys = &[
    ("file", Read),
    ("name", Read),
    (
        "icon",
        Unsupported("entity icons are not shown; actions and dashboards carry their own icons"),
    ),
    (
        "properties",
        Unsupported("entity properties are not listed in the web UI"),
    ),
    (
        "acls",
        Unsupported("entities have no ACLs of their own; the ACLs of the entity's actions apply"),
    ),
];
const COMPONENT_KEYS: Keys = &[
    ("title", Read),
    ("type", Read),
    ("entity", Read),
    ("icon", Read),
    ("cssClass", Read),
    ("contents", Read),
    ("inlineAction", Read),
    (
        "acls",
        Unsupported(
            "components have no ACLs of their own; a link shows when the caller may view its action",
        ),
    ),
    ("category", Unsupported("components have no categories")),
];

#[cfg(test)]
mod tests {
    use crate::config::Popup;
    use crate::config::fixtures::*;

    #[test]
    fn keys_match_case_insensitively() {
        let (c, warnings) = ok("
ListenAddressSingleHTTPFrontend: 0.0.0.0:9000
PAGETITLE: Shouty
InsecureAllowDumpVars: true
accessControlLists:
  - name: admins
    matchUserGroups: [admins]
    MatchUsernames: alice
actions:
  - Title: Hello
    SHELL: echo hi
    ACLs: [admins]
");
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(c.listen_address, "0.0.0.0:9000");
        assert_eq!(c.page_title, "Shouty");
        assert!(c.insecure_allow_dump_vars);
        let acl = &c.auth.access_control_lists[0];
        assert_eq!(acl.match_usergroups, vec!["admins"]);
        assert_eq!(acl.match_usernames, vec!["alice"]);
        assert_eq!(c.actions[0].acls, vec!["admins"]);
    }

    #[test]
    fn renamed_keys_work_under_both_names() {
        for key in ["popupOnStart", "onclick", "onClick"] {
            let (c, _) = ok(&format!("{ONE_ACTION}    {key}: execution-button\n"));
            assert_eq!(c.actions[0].popup_on_start, Popup::ExecutionButton, "{key}");
        }
        for key in ["defaultPopupOnStart", "defaultOnClick"] {
            let (c, _) = ok(&format!("{key}: history\n{ONE_ACTION}"));
            assert_eq!(c.default_popup_on_start, Popup::History, "{key}");
            assert_eq!(c.actions[0].popup_on_start, Popup::History, "{key}");
        }
        for key in ["triggers", "trigger"] {
            assert_warning(
                &format!("{ONE_ACTION}    {key}: [Other]\n"),
                &format!("actions[0].{key}"),
                "does not start other actions",
            );
        }
        assert_error(
            &format!("{ONE_ACTION}    popupOnStart: history\n    onclick: history\n"),
            "actions[0].onclick",
            "the same thing as `popupOnStart`",
        );
        assert_error(
            "pageTitle: a\nPageTitle: b\n",
            "PageTitle",
            "the same thing as `pageTitle`",
        );
    }

    #[test]
    fn unknown_keys_warn_by_name_and_path() {
        let text = "pageTitel: x\nactions:\n  - title: a\n    shell: echo {{ n }}\n    colour: red\n    arguments:\n      - {name: n, type: ascii, hint: h}\ndashboards:\n  - title: D\n    contents:\n      - {title: a, cssStyle: {x: y}}\n";
        let (_, warnings) = ok(text);
        let got: Vec<(&str, &str)> = warnings
            .iter()
            .map(|w| (w.path.as_str(), w.message.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "pageTitel",
                    "unknown key `pageTitel` is ignored (did you mean `pageTitle`?)"
                ),
                ("actions[0].colour", "unknown key `colour` is ignored"),
                (
                    "actions[0].arguments[0].hint",
                    "unknown key `hint` is ignored"
                ),
                (
                    "dashboards[0].contents[0].cssStyle",
                    "unknown key `cssStyle` is ignored"
                ),
            ]
        );
    }

    #[test]
    fn unsupported_olivetin_keys_warn_with_their_consequence() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "checkForUpdates: true\n",
                "checkForUpdates",
                "`checkForUpdates` is not supported by actiond: actiond never checks",
            ),
            ("themeName: dark\n", "themeName", "no themes"),
            ("styleMods: [a]\n", "styleMods", "no themes"),
            ("showNewVersions: true\n", "showNewVersions", "new versions"),
            (
                "sectionNavigationStyle: topbar\n",
                "sectionNavigationStyle",
                "one navigation style",
            ),
            (
                "logDebugOptions: {aclMatched: true}\n",
                "logDebugOptions",
                "logLevel: debug",
            ),
            (
                "authOAuth2Providers: {github: {name: github}}\n",
                "authOAuth2Providers",
                "there is no OAuth2 login",
            ),
            (
                "authJwtHmacSecret: s\n",
                "authJwtHmacSecret",
                "there is no JWT login",
            ),
            (
                "saveLogs: {resultsDirectory: /x}\n",
                "saveLogs",
                "stateDirectory",
            ),
            (
                "actionGroups: {g: {maxConcurrent: 1}}\n",
                "actionGroups",
                "its only limit",
            ),
            (
                "ListenAddressWebUI: localhost:1340\n",
                "ListenAddressWebUI",
                "legacy OliveTin 2",
            ),
            (
                "prometheus: {enabled: false, defaultGoMetrics: true}\n",
                "prometheus.defaultGoMetrics",
                "Go runtime",
            ),
            (
                "actions:\n  - {title: a, shell: b, shellAfterCompleted: notify}\n",
                "actions[0].shellAfterCompleted",
                "`shellAfterCompleted` is not supported by actiond: the command runs without it",
            ),
            (
                "actions:\n  - {title: a, shell: b, execOnCalendarFile: c.yaml}\n",
                "actions[0].execOnCalendarFile",
                "calendar",
            ),
            (
                "actions:\n  - {title: a, shell: b, execOnWebhook: [{matchQuery: {a: b}}]}\n",
                "actions[0].execOnWebhook",
                "no webhooks",
            ),
            (
                "actions:\n  - {title: a, shell: b, groups: [g]}\n",
                "actions[0].groups",
                "action groups",
            ),
            (
                "actions:\n  - {title: a, shell: b, justification: ' '}\n",
                "actions[0].justification",
                "justification",
            ),
            (
                "entities:\n  - {file: f.yaml, name: n, icon: ssh}\n",
                "entities[0].icon",
                "entity icons",
            ),
            (
                "additionalNavigationLinks:\n  - {url: 'http://x', target: _blank}\n",
                "additionalNavigationLinks[0].target",
                "web UI decides",
            ),
        ];
        for (text, path, needle) in cases {
            assert_warning(text, path, needle);
            let (_, warnings) = ok(text);
            assert!(
                !warnings.iter().any(|w| w.message.contains("unknown key")),
                "{text}: {warnings:?}"
            );
        }
        // Switched off or empty: nothing is lost, so nothing to warn about.
        let (_, warnings) =
            ok("checkForUpdates: false\nenableCustomJs: false\nstyleMods: []\nthemeName: ''\n");
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    /// The key paths of the table in docs/migration-from-olivetin.md: in each row's first
    /// cell, a path in backticks, and after it `.key` (or an older name in backticks) for keys
    /// beside it, under the first path's parent.
    fn migration_table_paths() -> Vec<String> {
        let doc = include_str!("../../docs/migration-from-olivetin.md");
        let section = doc
            .split("\n## ")
            .next()
            .expect("the migration table comes before the first section");
        let mut paths = Vec::new();
        for row in section.lines().filter(|l| l.starts_with("| `")) {
            let first_cell = row.split('|').nth(1).unwrap_or_default();
            let tokens: Vec<&str> = first_cell.split('`').skip(1).step_by(2).collect();
            let parent = tokens[0]
                .rfind(['.', ']'])
                .map_or("", |at| &tokens[0][..=at])
                .trim_end_matches('.');
            for token in tokens {
                paths.push(if token.contains(['.', '[']) && !token.starts_with('.') {
                    token.to_string()
                } else if parent.is_empty() {
                    token.trim_start_matches('.').to_string()
                } else {
                    format!("{parent}.{}", token.trim_start_matches('.'))
                });
            }
        }
        paths
    }

    #[test]
    fn the_migration_guide_names_every_olivetin_key() {
        let paths = migration_table_paths();
        let tables: &[(&str, super::Keys)] = &[
            ("", super::TOP_KEYS),
            ("actions[].", super::ACTION_KEYS),
            ("actions[].arguments[].", super::ARGUMENT_KEYS),
            ("actions[].arguments[].choices[].", super::CHOICE_KEYS),
            ("actions[].maxRate[].", super::RATE_KEYS),
            ("additionalNavigationLinks[].", super::LINK_KEYS),
            ("prometheus.", super::PROMETHEUS_KEYS),
            ("defaultPermissions.", super::PERMISSIONS_KEYS),
            ("defaultPolicy.", super::POLICY_KEYS),
            ("authLocalUsers.", super::LOCAL_USERS_KEYS),
            ("authLocalUsers.users[].", super::LOCAL_USER_KEYS),
            ("accessControlLists[].", super::ACL_KEYS),
            ("entities[].", super::ENTITY_KEYS),
            ("dashboards[].", super::COMPONENT_KEYS),
        ];
        // actiond's own keys, named below the table rather than in it.
        let own = [
            "stateDirectory",
            "trustedProxies",
            "authApiTokens",
            "mqtt",
            "allowedHosts",
            "allowedOrigins",
            "historySync",
            "runActionsAs",
            "connectProtocolHeader",
            "headerReadTimeout",
            "board",
            "overlay",
        ];
        let own_action = ["linkKeySha256", "insecureAllowStartFromAnyWebPage"];
        let doc = include_str!("../../docs/migration-from-olivetin.md");
        let mut missing = Vec::new();
        for (prefix, keys) in tables {
            for (key, _) in *keys {
                let path = format!("{prefix}{key}");
                let named_below = (prefix.is_empty() && own.contains(key))
                    || (*prefix == "actions[]." && own_action.contains(key));
                assert!(
                    !named_below || doc.contains(&format!("`{key}`")),
                    "{path} is actiond's own and not named in docs/migration-from-olivetin.md"
                );
                if !paths.contains(&path) && !named_below {
                    missing.push(path);
                }
            }
        }
        assert!(
            missing.is_empty(),
            "not in the table of docs/migration-from-olivetin.md: {missing:?}"
        );
        // And the table names no key that actiond does not know.
        let known = |path: &str| {
            tables.iter().any(|(prefix, keys)| {
                path.strip_prefix(prefix)
                    .is_some_and(|key| keys.iter().any(|(k, _)| *k == key))
            })
        };
        let unknown: Vec<&String> = paths
            .iter()
            .filter(|p| !known(p) && *p != "logHistoryPageSize")
            .collect();
        assert!(
            unknown.is_empty(),
            "the table of docs/migration-from-olivetin.md names unknown keys: {unknown:?}"
        );
    }
}
