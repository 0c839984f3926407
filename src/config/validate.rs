//! One pass over the config tree: every value checked, every default applied, every problem
//! collected with its YAML path.
//!
//! This module owns the meaning of each key: OliveTin's names matched case-insensitively,
//! renamed keys under both names, the keys OliveTin has and actiond deliberately lacks
//! (warned about, with what that means), unknown keys (warned about by name, never fatal, so
//! a config written for the richer peer still starts), and the errors that stop a load. It is
//! pure: it never touches files, sockets or the process environment. Included files reach it
//! through a closure, environment variables through another, so tests can drive every case.
//!
//! Argument types and command templates are compiled here through `arguments::types` and
//! `template`, which own their rules, and cron lines through `schedule`.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, Ipv6Addr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::source::Source;
use super::tree::{self, Node, index_path, key_path};
use super::{
    AccessControlList, Action, ApiToken, Argument, Auth, Choice, CommandSpec, CommandTemplate,
    Component, Config, EntitySource, Limits, Link, LocalUser, LogLevel, Permissions, Policy,
    Problem, RateRule,
};
use crate::arguments::ArgType;
use crate::template::{Placeholder, Template};

/// Reads the YAML files of an `include:` directory: given the directory (already resolved
/// against the config's directory), the `(file name, text)` of every `*.yml` / `*.yaml` in it,
/// sorted by name; or a message saying why it could not.
pub type IncludeReader<'a> = dyn Fn(&Path) -> Result<Vec<(String, String)>, String> + 'a;

/// What validation gives: the config and its warnings, or the errors and the warnings.
pub type Parsed = Result<(Config, Vec<Problem>), (Vec<Problem>, Vec<Problem>)>;

/// Looks up an environment variable (for `${{ VAR }}` and `$STATE_DIRECTORY`).
pub type EnvLookup<'a> = dyn Fn(&str) -> Option<String> + 'a;

/// Validates a config text with no access to other files: an `include:` key is an error here.
///
/// `Ok` holds the config and the warnings; `Err` holds the errors and the warnings. Use
/// [`parse_with_includes`] (as `source::load` does) when includes should be read.
pub fn parse(text: &str, source: Source, base_dir: PathBuf, env: &EnvLookup<'_>) -> Parsed {
    let no_includes = |dir: &Path| -> Result<Vec<(String, String)>, String> {
        Err(format!(
            "cannot read {}: includes are only read when the config is loaded from a file",
            dir.display()
        ))
    };
    parse_with_includes(text, source, base_dir, env, &no_includes)
}

/// Validates a config text, reading the files of its `include:` directory through `includes`.
///
/// From an included file only `actions`, `dashboards` and `entities` are taken (appended after
/// the main file's, file by file); problems in it are reported as `<dir>/<file>: <path>`.
pub fn parse_with_includes(
    text: &str,
    source: Source,
    base_dir: PathBuf,
    env: &EnvLookup<'_>,
    includes: &IncludeReader<'_>,
) -> Parsed {
    let mut checker = Checker {
        errors: Vec::new(),
        warnings: Vec::new(),
        base_dir: &base_dir,
        env,
        drafts: Vec::new(),
        acl_names: HashSet::new(),
    };
    let config = checker.document(text, source, base_dir.clone(), includes);
    if let Some(config) = &config {
        // Top-level items are dashboards; links start inside them.
        for (i, d) in config.dashboards.iter().enumerate() {
            let path = key_path(&index_path("dashboards", i), "contents");
            dangling_links(&d.contents, &config.actions, &path, &mut checker.warnings);
        }
    }
    match config {
        Some(config) if checker.errors.is_empty() => Ok((config, checker.warnings)),
        _ => Err((checker.errors, checker.warnings)),
    }
}

// ---------------------------------------------------------------------------------------
// Key tables
// ---------------------------------------------------------------------------------------

/// How one key of a mapping is treated.
#[derive(Clone, Copy)]
enum Rule {
    /// A key actiond reads.
    Read,
    /// Another spelling of a key actiond reads (OliveTin renamed it at some point).
    Alias(&'static str),
    /// A key OliveTin has and actiond does not; the text says what follows from that.
    Unsupported(&'static str),
}

use Rule::{Alias, Read, Unsupported};

type Schema = &'static [(&'static str, Rule)];

const LEGACY_LISTENER: &str = "a legacy OliveTin 2 listener; actiond serves the web UI and the \
     API on listenAddressSingleHTTPFrontend only";
const NO_OAUTH2: &str = "there is no OAuth2 login; use authLocalUsers, authApiTokens or a trusted \
     proxy header (authHttpHeaderUsername) instead";
const NO_JWT: &str = "there is no JWT login; use authApiTokens or a trusted proxy header \
     (authHttpHeaderUsername) instead";
const NO_THEMES: &str = "the built-in web UI has no themes, style mods or custom JavaScript";
const NO_GROUPS: &str =
    "there are no action groups; each action's own maxConcurrent is its only limit";

const TOP: Schema = &[
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
    ("stateDirectory", Read),
    ("logHistoryLimit", Read),
    ("logHistoryPageSize", Read),
    ("maxOutputBytes", Read),
    ("defaultTimeout", Read),
    ("killGracePeriod", Read),
    ("maxConcurrentExecutions", Read),
    ("maxRequestBodyBytes", Read),
    ("maxConnections", Read),
    ("headerReadTimeout", Read),
    ("maxEventSubscribers", Read),
    ("eventQueueLength", Read),
    ("trustedProxies", Read),
    ("prometheus", Read),
    ("actions", Read),
    ("entities", Read),
    ("dashboards", Read),
    ("include", Read),
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

const ACTION: Schema = &[
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

const ARGUMENT: Schema = &[
    ("name", Read),
    ("title", Read),
    ("type", Read),
    ("default", Read),
    ("choices", Read),
    ("description", Read),
    ("suggestions", Read),
    ("entity", Read),
    ("rejectNull", Read),
    (
        "suggestionsBrowserKey",
        Unsupported(
            "values are not remembered in the browser; the suggestions are shown as written",
        ),
    ),
];

const CHOICE: Schema = &[("value", Read), ("title", Read)];
const RATE: Schema = &[("limit", Read), ("duration", Read)];
const LINK: Schema = &[
    ("title", Read),
    ("url", Read),
    (
        "target",
        Unsupported(
            "the web UI decides where links open (Init's additionalLinks carry title and url)",
        ),
    ),
];
const PROMETHEUS: Schema = &[
    ("enabled", Read),
    (
        "defaultGoMetrics",
        Unsupported("actiond has no Go runtime metrics"),
    ),
];
const PERMISSIONS: Schema = &[
    ("view", Read),
    ("exec", Read),
    ("logs", Read),
    ("kill", Read),
];
const POLICY: Schema = &[
    ("showDiagnostics", Read),
    ("showLogList", Read),
    (
        "showVersionNumber",
        Unsupported("the web UI always shows the version"),
    ),
];
const LOCAL_USERS: Schema = &[("enabled", Read), ("users", Read)];
const LOCAL_USER: Schema = &[
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
const API_TOKEN: Schema = &[
    ("name", Read),
    ("sha256", Read),
    ("username", Read),
    ("usergroup", Read),
];
const ACL: Schema = &[
    ("name", Read),
    ("matchUsernames", Read),
    ("matchUsergroups", Read),
    ("addToEveryAction", Read),
    ("permissions", Read),
    ("policy", Read),
];
const ENTITY: Schema = &[
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
const COMPONENT: Schema = &[
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

/// `popupOnStart` values the web UI understands (OliveTin's list plus its default `nothing`).
const POPUP_VALUES: &[&str] = &[
    "nothing",
    "execution-dialog",
    "execution-dialog-output-html",
    "execution-dialog-stdout-only",
    "execution-button",
    "history",
];

/// Dashboard component types clients see (SPEC §7); `action` is OliveTin's spelling for a
/// component that carries an inline action, shown as a link.
const COMPONENT_TYPES: &[&str] = &[
    "",
    "fieldset",
    "directory",
    "link",
    "display",
    "stdout-most-recent-execution",
];

/// Environment variables an argument may not replace (SPEC §5.2), besides `LD_*` and `ACTIOND*`.
const RESERVED_ENV: &[&str] = &["PATH", "HOME", "IFS", "SHELL", "ENV", "BASH_ENV", "PS4"];

/// OliveTin's icon short names (`icon: ping`), expanded to the HTML entities it uses, so a
/// config written for OliveTin shows the same icons.
const ICON_NAMES: &[(&str, &str)] = &[
    ("poop", "&#x1f4a9;"),
    ("smile", "&#x1F600;"),
    ("ping", "&#x1f4e1;"),
    ("backup", "&#128190;"),
    ("reboot", "&#128260;"),
    ("restart", "&#128260;"),
    ("box", "&#128230;"),
    ("ashtonished", "&#128562;"),
    ("clock", "&#128338;"),
    ("disk", "&#128189;"),
    ("logs", "&#128269;"),
    ("light", "&#128161;"),
    ("robot", "&#129302;"),
    ("ssh", "&#128272;"),
    ("theme", "&#127912;"),
];

const MIB: i64 = 1024 * 1024;

// ---------------------------------------------------------------------------------------
// The checker
// ---------------------------------------------------------------------------------------

/// The entries of one mapping that actiond reads, by canonical key name.
struct Fields<'n> {
    found: Vec<(&'static str, String, &'n Node)>,
}

/// A present, non-null value and its path.
type Field<'a, 'n> = Option<(&'n Node, &'a str)>;

impl<'n> Fields<'n> {
    /// The value under `name` (any accepted spelling); `None` when absent or null, because a
    /// key written without a value (`icon:`) means "use the default", as in OliveTin.
    fn get(&self, name: &str) -> Field<'_, 'n> {
        self.found
            .iter()
            .find(|(canonical, _, node)| *canonical == name && !matches!(node, Node::Null))
            .map(|(_, path, node)| (*node, path.as_str()))
    }

    /// Whether the key was written at all, even with a null value.
    fn written(&self, name: &str) -> bool {
        self.found
            .iter()
            .any(|(canonical, _, _)| *canonical == name)
    }
}

/// An action before its id is settled (derived ids need every configured id first).
struct Draft {
    action: Action,
    /// The id as configured; `None` when it is to be derived from the title.
    configured_id: Option<String>,
    /// Path of the action's mapping, for id problems.
    path: String,
}

struct Checker<'a> {
    errors: Vec<Problem>,
    warnings: Vec<Problem>,
    base_dir: &'a Path,
    env: &'a EnvLookup<'a>,
    drafts: Vec<Draft>,
    acl_names: HashSet<String>,
}

/// Top-level settings the actions need while they are read.
struct ActionDefaults {
    timeout: Duration,
    icon: String,
    popup: String,
}

impl<'a> Checker<'a> {
    fn error(&mut self, path: &str, message: impl Into<String>) {
        self.errors.push(Problem {
            path: path.to_string(),
            message: message.into(),
        });
    }

    fn warn(&mut self, path: &str, message: impl Into<String>) {
        self.warnings.push(Problem {
            path: path.to_string(),
            message: message.into(),
        });
    }

    /// Sorts the entries of a mapping by `schema`: reads what actiond reads, warns about the
    /// rest by name, and refuses a key written twice under spellings that mean the same.
    fn fields<'n>(
        &mut self,
        entries: &'n [(String, Node)],
        path: &str,
        schema: Schema,
    ) -> Fields<'n> {
        let mut fields = Fields { found: Vec::new() };
        let mut seen: Vec<(&'static str, &'n str)> = Vec::new();
        for (key, value) in entries {
            let key_at = key_path(path, key);
            let Some(&(spelling, rule)) = schema
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(key))
            else {
                let hint = suggest(key, schema)
                    .map(|known| format!(" (did you mean `{known}`?)"))
                    .unwrap_or_default();
                self.warn(&key_at, format!("unknown key `{key}` is ignored{hint}"));
                continue;
            };
            let (canonical, rule) = match rule {
                Alias(target) => {
                    let target_rule = schema
                        .iter()
                        .find(|(name, _)| *name == target)
                        .map_or(Read, |&(_, r)| r);
                    (target, target_rule)
                }
                other => (spelling, other),
            };
            if let Some((_, earlier)) = seen.iter().find(|(c, _)| *c == canonical) {
                self.error(
                    &key_at,
                    format!(
                        "`{key}` sets the same thing as `{earlier}` above (keys are \
                         case-insensitive, and a renamed key counts under either name): keep one"
                    ),
                );
                continue;
            }
            seen.push((canonical, key));
            match rule {
                Unsupported(consequence) => {
                    // A feature switched off or left empty asks for nothing actiond lacks, so
                    // it is not worth a warning (every OliveTin test config says
                    // `checkForUpdates: false`).
                    if !is_off(value) {
                        self.warn(
                            &key_at,
                            format!("`{key}` is not supported by actiond: {consequence}"),
                        );
                    }
                }
                Read | Alias(_) => fields.found.push((canonical, key_at, value)),
            }
        }
        fields
    }

    // --- value readers: each reports a wrong type at the value's path and returns None ----

    fn text(&mut self, field: Field<'_, '_>) -> Option<String> {
        let (node, path) = field?;
        let text = node.scalar_text();
        if text.is_none() {
            self.error(path, format!("expected text, found {}", node.describe()));
        }
        text
    }

    fn text_or(&mut self, field: Field<'_, '_>, default: &str) -> String {
        self.text(field).unwrap_or_else(|| default.to_string())
    }

    fn boolean(&mut self, field: Field<'_, '_>) -> Option<bool> {
        let (node, path) = field?;
        let parsed = match node {
            Node::Bool(b) => Some(*b),
            // Quoted or YAML 1.1 spellings, and values that came from `${{ VAR }}`.
            Node::Str(s) => match s.trim().to_ascii_lowercase().as_str() {
                "true" | "yes" | "on" => Some(true),
                "false" | "no" | "off" => Some(false),
                _ => None,
            },
            _ => None,
        };
        if parsed.is_none() {
            self.error(
                path,
                format!(
                    "expected a boolean (true or false), found {}",
                    node.describe()
                ),
            );
        }
        parsed
    }

    fn flag(&mut self, field: Field<'_, '_>, default: bool) -> bool {
        self.boolean(field).unwrap_or(default)
    }

    fn integer(&mut self, field: Field<'_, '_>) -> Option<i64> {
        let (node, path) = field?;
        let parsed = match node {
            Node::Int(i) => Some(*i),
            // Text that reads as a whole number is accepted, as OliveTin's weak decoding does,
            // so `timeout: ${{ TIMEOUT }}` works.
            Node::Str(s) => s.trim().parse::<i64>().ok(),
            _ => None,
        };
        if parsed.is_none() {
            self.error(
                path,
                format!("expected a whole number, found {}", node.describe()),
            );
        }
        parsed
    }

    /// A whole number in `min..=max`, or `default` when absent; out of range is an error.
    fn bounded(
        &mut self,
        field: Field<'_, '_>,
        min: i64,
        max: i64,
        default: i64,
        unit: &str,
    ) -> i64 {
        let Some((_, path)) = field else {
            return default;
        };
        match self.integer(field) {
            Some(v) if (min..=max).contains(&v) => v,
            Some(v) => {
                self.error(
                    path,
                    format!("must be between {min} and {max}{unit}, found {v}"),
                );
                default
            }
            None => default,
        }
    }

    /// A list of text; a single value is taken as a list of one (OliveTin does the same).
    fn text_list(&mut self, field: Field<'_, '_>) -> Vec<String> {
        let Some((node, path)) = field else {
            return Vec::new();
        };
        match node {
            Node::Seq(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    match item.scalar_text() {
                        Some(t) => out.push(t),
                        None => self.error(
                            &index_path(path, i),
                            format!("expected text, found {}", item.describe()),
                        ),
                    }
                }
                out
            }
            Node::Map(_) => {
                self.error(
                    path,
                    format!("expected a list of text, found {}", node.describe()),
                );
                Vec::new()
            }
            scalar => scalar.scalar_text().into_iter().collect(),
        }
    }

    fn mapping<'n>(&mut self, field: Field<'_, 'n>) -> Option<&'n [(String, Node)]> {
        let (node, path) = field?;
        match node {
            Node::Map(entries) => Some(entries),
            other => {
                self.error(
                    path,
                    format!(
                        "expected a mapping (key: value), found {}",
                        other.describe()
                    ),
                );
                None
            }
        }
    }

    /// The mappings of a list, each with its path.
    fn mappings<'n>(&mut self, field: Field<'_, 'n>) -> Vec<(&'n [(String, Node)], String)> {
        let Some((node, path)) = field else {
            return Vec::new();
        };
        let Node::Seq(items) = node else {
            self.error(path, format!("expected a list, found {}", node.describe()));
            return Vec::new();
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let item_path = index_path(path, i);
            match item {
                Node::Map(entries) => out.push((entries.as_slice(), item_path)),
                other => self.error(
                    &item_path,
                    format!(
                        "expected a mapping (key: value), found {}",
                        other.describe()
                    ),
                ),
            }
        }
        out
    }

    fn resolve(&self, path: &str) -> PathBuf {
        self.base_dir.join(path)
    }

    // --- the document -----------------------------------------------------------------

    fn document(
        &mut self,
        text: &str,
        source: Source,
        base_dir: PathBuf,
        includes: &IncludeReader<'_>,
    ) -> Option<Config> {
        let mut root = match tree::parse_yaml(text) {
            Ok(root) => root,
            Err(problem) => {
                self.errors.push(problem);
                return None;
            }
        };
        tree::interpolate_env(&mut root, "", self.env, &mut self.errors);
        let empty = Vec::new();
        let entries = match &root {
            Node::Map(entries) => entries,
            // A file holding only comments is an empty config: every default applies.
            Node::Null => &empty,
            other => {
                self.error(
                    "",
                    format!(
                        "a config is a mapping of keys to values, found {}",
                        other.describe()
                    ),
                );
                return None;
            }
        };
        let top = self.fields(entries, "", TOP);

        // Included files, parsed and interpolated up front so their lists can be borrowed
        // next to the main file's.
        let included = self.read_includes(&top, includes);
        let include_dir = self
            .text(top.get("include"))
            .filter(|d| !d.trim().is_empty())
            .map(|d| self.resolve(&d));
        let mut action_lists = vec![top.get("actions")];
        let mut dashboard_lists = vec![top.get("dashboards")];
        let mut entity_lists = vec![top.get("entities")];
        let include_fields: Vec<Fields<'_>> = included
            .iter()
            .map(|(label, node)| self.included_fields(label, node))
            .collect();
        for fields in &include_fields {
            action_lists.push(fields.get("actions"));
            dashboard_lists.push(fields.get("dashboards"));
            entity_lists.push(fields.get("entities"));
        }

        let listen_address = self.listen_address(top.get("listenAddressSingleHTTPFrontend"));
        let log_level = self.log_level(top.get("logLevel"));
        let limits = self.limits(&top);
        let state_directory = self.state_directory(&top);
        let prometheus_enabled = match self.mapping(top.get("prometheus")) {
            Some(entries) => {
                let f = self.fields(entries, "prometheus", PROMETHEUS);
                self.flag(f.get("enabled"), false)
            }
            None => false,
        };
        let default_icon =
            expand_icon(&self.text_or(top.get("defaultIconForActions"), "&#x1F600;"));
        let default_popup = self.popup(top.get("defaultPopupOnStart"), "nothing");
        let additional_links = self.links(top.get("additionalNavigationLinks"));
        let auth = self.auth(&top);
        let default_policy = match self.mapping(top.get("defaultPolicy")) {
            Some(entries) => {
                let f = self.fields(entries, "defaultPolicy", POLICY);
                Policy {
                    show_diagnostics: self.flag(f.get("showDiagnostics"), true),
                    show_log_list: self.flag(f.get("showLogList"), true),
                }
            }
            None => Policy::DEFAULT,
        };

        let defaults = ActionDefaults {
            timeout: limits.default_timeout,
            icon: default_icon.clone(),
            popup: default_popup.clone(),
        };
        for list in action_lists {
            for (entries, path) in self.mappings(list) {
                self.action(entries, &path, &defaults, None, None);
            }
        }
        let mut entities = Vec::new();
        for list in entity_lists {
            for (entries, path) in self.mappings(list) {
                if let Some(entity) = self.entity(entries, &path) {
                    entities.push(entity);
                }
            }
        }
        let mut dashboards = Vec::new();
        for list in dashboard_lists {
            for (entries, path) in self.mappings(list) {
                if let Some(component) = self.component(entries, &path, None, &defaults) {
                    dashboards.push(component);
                }
            }
        }
        let actions = self.settle_ids();

        Some(Config {
            source,
            base_dir,
            listen_address,
            log_level,
            page_title: self.text_or(top.get("pageTitle"), "actiond"),
            show_footer: self.flag(top.get("showFooter"), true),
            show_navigation: self.flag(top.get("showNavigation"), true),
            banner_message: self.text_or(top.get("bannerMessage"), ""),
            banner_css: self.text_or(top.get("bannerCss"), ""),
            additional_links,
            default_icon_for_actions: default_icon,
            default_popup_on_start: default_popup,
            limits,
            state_directory,
            prometheus_enabled,
            actions,
            auth,
            entities,
            include_dir,
            dashboards,
            insecure_allow_dump_vars: self.flag(top.get("insecureAllowDumpVars"), false),
            insecure_allow_dump_sos: self.flag(top.get("insecureAllowDumpSos"), false),
            insecure_allow_dump_action_map: self.flag(top.get("insecureAllowDumpActionMap"), false),
            default_policy,
        })
    }

    /// Reads and parses the files of `include:`; each comes back with its label
    /// (`config.d/00-first.yml`) and its interpolated tree.
    fn read_includes(
        &mut self,
        top: &Fields<'_>,
        includes: &IncludeReader<'_>,
    ) -> Vec<(String, Node)> {
        let field = top.get("include");
        let Some(dir) = self.text(field) else {
            return Vec::new();
        };
        let path = field.map_or("include", |(_, p)| p).to_string();
        if dir.trim().is_empty() {
            return Vec::new();
        }
        let files = match includes(&self.resolve(&dir)) {
            Ok(files) => files,
            Err(message) => {
                self.error(&path, message);
                return Vec::new();
            }
        };
        let mut out = Vec::with_capacity(files.len());
        for (name, text) in files {
            let label = format!("{}/{}", dir.trim_end_matches('/'), name);
            match tree::parse_yaml(&text) {
                Ok(mut node) => {
                    tree::interpolate_env(
                        &mut node,
                        &format!("{label}: "),
                        self.env,
                        &mut self.errors,
                    );
                    out.push((label, node));
                }
                Err(mut problem) => {
                    problem.path = label;
                    self.errors.push(problem);
                }
            }
        }
        out
    }

    /// The `actions`, `dashboards` and `entities` of an included file; anything else in it is
    /// named in a warning, because OliveTin ignores it too and the author may expect otherwise.
    fn included_fields<'n>(&mut self, label: &str, node: &'n Node) -> Fields<'n> {
        let mut fields = Fields { found: Vec::new() };
        let entries = match node {
            Node::Map(entries) => entries,
            Node::Null => return fields,
            other => {
                self.error(
                    label,
                    format!(
                        "an included file is a mapping with actions, dashboards or entities, \
                         found {}",
                        other.describe()
                    ),
                );
                return fields;
            }
        };
        let prefix = format!("{label}: ");
        for (key, value) in entries {
            let key_at = key_path(&prefix, key);
            match ["actions", "dashboards", "entities"]
                .into_iter()
                .find(|name| name.eq_ignore_ascii_case(key))
            {
                Some(name) if fields.written(name) => {
                    self.error(
                        &key_at,
                        format!("`{key}` is written twice in this file: keep one"),
                    );
                }
                Some(name) => fields.found.push((name, key_at, value)),
                None => self.warn(
                    &key_at,
                    format!(
                        "`{key}` is ignored: only actions, dashboards and entities are read from \
                         an included file"
                    ),
                ),
            }
        }
        fields
    }

    // --- top-level settings -----------------------------------------------------------

    fn listen_address(&mut self, field: Field<'_, '_>) -> String {
        let default = "0.0.0.0:1337";
        let Some(address) = self.text(field) else {
            return default.to_string();
        };
        let address = address.trim().to_string();
        if let Err(why) = check_host_port(&address) {
            let path = field.map_or("", |(_, p)| p);
            self.error(
                path,
                format!("{why}: expected host:port such as 0.0.0.0:1337 or [::]:1337"),
            );
            return default.to_string();
        }
        address
    }

    fn log_level(&mut self, field: Field<'_, '_>) -> LogLevel {
        let Some(level) = self.text(field) else {
            return LogLevel::Info;
        };
        match level.trim().to_ascii_lowercase().as_str() {
            "error" => LogLevel::Error,
            "warn" | "warning" => LogLevel::Warn,
            "info" => LogLevel::Info,
            "debug" => LogLevel::Debug,
            "trace" => LogLevel::Trace,
            _ => {
                let path = field.map_or("", |(_, p)| p);
                self.error(
                    path,
                    format!("unknown log level {level:?}: use error, warn, info, debug or trace"),
                );
                LogLevel::Info
            }
        }
    }

    fn limits(&mut self, top: &Fields<'_>) -> Limits {
        let secs = |v: i64| Duration::from_secs(v.unsigned_abs());
        let count = |v: i64| usize::try_from(v).unwrap_or(0);
        Limits {
            log_history_limit: count(self.bounded(
                top.get("logHistoryLimit"),
                1,
                10_000,
                200,
                " entries",
            )),
            log_history_page_size: count(self.bounded(
                top.get("logHistoryPageSize"),
                1,
                1000,
                10,
                " entries",
            )),
            max_output_bytes: count(self.bounded(
                top.get("maxOutputBytes"),
                1024,
                16 * MIB,
                65536,
                " bytes",
            )),
            default_timeout: secs(self.bounded(
                top.get("defaultTimeout"),
                1,
                86_400,
                30,
                " seconds",
            )),
            kill_grace_period: secs(self.bounded(
                top.get("killGracePeriod"),
                0,
                300,
                3,
                " seconds",
            )),
            max_concurrent_executions: count(self.bounded(
                top.get("maxConcurrentExecutions"),
                1,
                1024,
                16,
                "",
            )),
            max_request_body_bytes: count(self.bounded(
                top.get("maxRequestBodyBytes"),
                1024,
                16 * MIB,
                65536,
                " bytes",
            )),
            max_connections: count(self.bounded(top.get("maxConnections"), 1, 65_535, 256, "")),
            header_read_timeout: secs(self.bounded(
                top.get("headerReadTimeout"),
                1,
                300,
                10,
                " seconds",
            )),
            max_event_subscribers: count(self.bounded(
                top.get("maxEventSubscribers"),
                0,
                4096,
                64,
                "",
            )),
            event_queue_length: count(self.bounded(
                top.get("eventQueueLength"),
                16,
                65_536,
                256,
                " events",
            )),
        }
    }

    /// `stateDirectory` as written (resolved against the config's directory; empty = none),
    /// else `$STATE_DIRECTORY`, which systemd sets for `StateDirectory=` (several directories
    /// are separated by `:`; the first is ours).
    fn state_directory(&mut self, top: &Fields<'_>) -> Option<PathBuf> {
        if top.written("stateDirectory") {
            let dir = self.text(top.get("stateDirectory")).unwrap_or_default();
            return (!dir.trim().is_empty()).then(|| self.resolve(dir.trim()));
        }
        let from_systemd = (self.env)("STATE_DIRECTORY")?;
        let first = from_systemd
            .split(':')
            .next()
            .unwrap_or_default()
            .trim()
            .to_string();
        (!first.is_empty()).then(|| PathBuf::from(first))
    }

    /// A `popupOnStart` value; an unknown one falls back to `default` with a warning, as
    /// OliveTin falls back to its default for values its UI does not know.
    fn popup(&mut self, field: Field<'_, '_>, default: &str) -> String {
        let Some(value) = self.text(field) else {
            return default.to_string();
        };
        if value.is_empty() {
            return default.to_string();
        }
        if POPUP_VALUES.contains(&value.as_str()) {
            return value;
        }
        let path = field.map_or("", |(_, p)| p);
        self.warn(
            path,
            format!(
                "unknown value {value:?}, using {default:?} (known: {})",
                POPUP_VALUES.join(", ")
            ),
        );
        default.to_string()
    }

    fn links(&mut self, field: Field<'_, '_>) -> Vec<Link> {
        let mut links = Vec::new();
        for (entries, path) in self.mappings(field) {
            let f = self.fields(entries, &path, LINK);
            let Some(url) = self.text(f.get("url")).filter(|u| !u.trim().is_empty()) else {
                self.error(&path, "a navigation link needs a url");
                continue;
            };
            let title = self
                .text(f.get("title"))
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| url.clone());
            links.push(Link { title, url });
        }
        links
    }

    // --- identity ---------------------------------------------------------------------

    fn auth(&mut self, top: &Fields<'_>) -> Auth {
        let require_guests_to_login = self.flag(top.get("authRequireGuestsToLogin"), false);
        // With guests required to log in, a permission nobody wrote down is not granted:
        // OliveTin forces them off too.
        let base = if require_guests_to_login {
            Permissions::NONE
        } else {
            Permissions::ALL
        };
        let default_permissions = match self.mapping(top.get("defaultPermissions")) {
            Some(entries) => {
                let f = self.fields(entries, &key_path("", "defaultPermissions"), PERMISSIONS);
                Permissions {
                    view: self.flag(f.get("view"), base.view),
                    exec: self.flag(f.get("exec"), base.exec),
                    logs: self.flag(f.get("logs"), base.logs),
                    kill: self.flag(f.get("kill"), base.kill),
                }
            }
            None => base,
        };
        let (local_users_enabled, local_users) = self.local_users(top.get("authLocalUsers"));
        let trusted_proxies = if top.get("trustedProxies").is_some() {
            let field = top.get("trustedProxies");
            let list = self.text_list(field);
            let path = field.map_or("", |(_, p)| p);
            for (i, entry) in list.iter().enumerate() {
                if !is_ip_or_cidr(entry.trim()) {
                    let at = match field {
                        Some((Node::Seq(_), _)) => index_path(path, i),
                        _ => path.to_string(),
                    };
                    self.error(
                        &at,
                        format!(
                            "{entry:?} is not an IP address or CIDR (such as 10.0.0.0/8 or ::1)"
                        ),
                    );
                }
            }
            list.into_iter().map(|e| e.trim().to_string()).collect()
        } else {
            vec!["127.0.0.1/8".to_string(), "::1/128".to_string()]
        };
        let api_tokens = self.api_tokens(top.get("authApiTokens"));
        let access_control_lists = self.acls(top.get("accessControlLists"));
        Auth {
            require_guests_to_login,
            default_permissions,
            local_users_enabled,
            local_users,
            http_header_username: self
                .text_or(top.get("authHttpHeaderUsername"), "")
                .trim()
                .to_string(),
            http_header_usergroup: self
                .text_or(top.get("authHttpHeaderUserGroup"), "")
                .trim()
                .to_string(),
            trusted_proxies,
            api_tokens,
            access_control_lists,
        }
    }

    fn local_users(&mut self, field: Field<'_, '_>) -> (bool, Vec<LocalUser>) {
        let Some(entries) = self.mapping(field) else {
            return (false, Vec::new());
        };
        let path = field.map_or("", |(_, p)| p).to_string();
        let f = self.fields(entries, &path, LOCAL_USERS);
        let enabled = self.flag(f.get("enabled"), false);
        let mut users: Vec<LocalUser> = Vec::new();
        for (entries, user_path) in self.mappings(f.get("users")) {
            let u = self.fields(entries, &user_path, LOCAL_USER);
            let username = self.text(u.get("username")).unwrap_or_default();
            if username.is_empty() {
                self.error(&user_path, "a local user needs a username");
                continue;
            }
            if users.iter().any(|other| other.username == username) {
                self.error(
                    &key_path(&user_path, "username"),
                    format!("duplicate username {username:?}"),
                );
                continue;
            }
            let password = self.text(u.get("password")).unwrap_or_default();
            if !password.starts_with("$argon2id$") {
                let at = u
                    .get("password")
                    .map_or(user_path.clone(), |(_, p)| p.to_string());
                self.error(
                    &at,
                    "the password must be an argon2id hash ($argon2id$v=19$…): make one with \
                     `actiond hash-password`",
                );
                continue;
            }
            if let Some(kib) = argon2_memory_kib(&password).filter(|m| *m > MAX_ARGON2_KIB) {
                let at = u
                    .get("password")
                    .map_or(user_path.clone(), |(_, p)| p.to_string());
                self.error(
                    &at,
                    format!(
                        "this hash needs {kib} KiB of memory to check, more than {MAX_ARGON2_KIB} KiB a \
                         small board can spare at login: make a new one with `actiond hash-password`"
                    ),
                );
                continue;
            }
            users.push(LocalUser {
                username,
                usergroup: self.text_or(u.get("usergroup"), ""),
                password,
            });
        }
        (enabled, users)
    }

    fn api_tokens(&mut self, field: Field<'_, '_>) -> Vec<ApiToken> {
        let mut tokens: Vec<ApiToken> = Vec::new();
        for (entries, path) in self.mappings(field) {
            let f = self.fields(entries, &path, API_TOKEN);
            let name = self.text(f.get("name")).unwrap_or_default();
            if name.is_empty() {
                self.error(&path, "an API token needs a name (it appears in the logs)");
            }
            let hash = self
                .text(f.get("sha256"))
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase();
            let hash_path = f.get("sha256").map_or(path.clone(), |(_, p)| p.to_string());
            if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                self.error(
                    &hash_path,
                    "sha256 must be the 64 hex digits of the token's SHA-256 (`actiond gen-token` \
                     prints a token and its hash)",
                );
                continue;
            }
            if tokens.iter().any(|t| t.sha256 == hash) {
                self.error(&hash_path, "the same token hash is listed twice");
                continue;
            }
            if name.is_empty() {
                continue;
            }
            let username = self
                .text(f.get("username"))
                .filter(|u| !u.is_empty())
                .unwrap_or_else(|| name.clone());
            tokens.push(ApiToken {
                name,
                sha256: hash,
                username,
                usergroup: self.text_or(f.get("usergroup"), ""),
            });
        }
        tokens
    }

    fn acls(&mut self, field: Field<'_, '_>) -> Vec<AccessControlList> {
        let mut acls: Vec<AccessControlList> = Vec::new();
        for (entries, path) in self.mappings(field) {
            let f = self.fields(entries, &path, ACL);
            let name = self.text(f.get("name")).unwrap_or_default();
            if name.is_empty() {
                self.error(&path, "an access control list needs a name");
                continue;
            }
            if !self.acl_names.insert(name.clone()) {
                self.error(
                    &key_path(&path, "name"),
                    format!("duplicate access control list name {name:?}"),
                );
                continue;
            }
            let mut acl = AccessControlList {
                name,
                match_usernames: self.text_list(f.get("matchUsernames")),
                match_usergroups: self.text_list(f.get("matchUsergroups")),
                add_to_every_action: self.flag(f.get("addToEveryAction"), false),
                view: None,
                exec: None,
                logs: None,
                kill: None,
                show_diagnostics: None,
                show_log_list: None,
            };
            if let Some(entries) = self.mapping(f.get("permissions")) {
                let p = self.fields(entries, &key_path(&path, "permissions"), PERMISSIONS);
                acl.view = self.boolean(p.get("view"));
                acl.exec = self.boolean(p.get("exec"));
                acl.logs = self.boolean(p.get("logs"));
                acl.kill = self.boolean(p.get("kill"));
            }
            if let Some(entries) = self.mapping(f.get("policy")) {
                let p = self.fields(entries, &key_path(&path, "policy"), POLICY);
                acl.show_diagnostics = self.boolean(p.get("showDiagnostics"));
                acl.show_log_list = self.boolean(p.get("showLogList"));
            }
            acls.push(acl);
        }
        acls
    }

    // --- actions ----------------------------------------------------------------------

    /// Reads one action into `self.drafts`. `inherited_title` and `inherited_entity` come
    /// from the dashboard component that holds an inline action.
    fn action(
        &mut self,
        entries: &[(String, Node)],
        path: &str,
        defaults: &ActionDefaults,
        inherited_title: Option<&str>,
        inherited_entity: Option<&str>,
    ) -> Option<String> {
        let f = self.fields(entries, path, ACTION);
        let configured_id = match self.text(f.get("id")) {
            Some(id) if is_valid_id(&id) => Some(id),
            Some(id) => {
                let at = f.get("id").map_or(path, |(_, p)| p).to_string();
                self.error(
                    &at,
                    format!(
                        "invalid id {id:?}: use 1 to 64 letters, digits, `_` or `-` (ids appear \
                         in URLs)"
                    ),
                );
                None
            }
            None => None,
        };
        let title = self
            .text(f.get("title"))
            .filter(|t| !t.trim().is_empty())
            .or_else(|| inherited_title.map(str::to_string))
            .filter(|t| !t.trim().is_empty());
        let title = match (title, &configured_id) {
            (Some(title), _) => title,
            (None, Some(id)) => id.clone(),
            (None, None) => {
                if !f.written("id") {
                    self.error(path, "an action needs a title");
                }
                return None;
            }
        };

        let shell = self.text(f.get("shell"));
        let exec = match f.get("exec") {
            Some((Node::Seq(_), _)) => Some(self.text_list(f.get("exec"))),
            Some((node, at)) => {
                self.error(
                    at,
                    format!(
                        "exec is a list (program, then each argument), found {}; use shell for a \
                         command line",
                        node.describe()
                    ),
                );
                return None;
            }
            None => None,
        };
        let command = match (shell, exec) {
            (shell, Some(argv)) => {
                if argv.first().is_none_or(|program| program.trim().is_empty()) {
                    let at = f.get("exec").map_or(path, |(_, p)| p).to_string();
                    self.error(&at, "exec needs at least the program to run");
                    return None;
                }
                if shell.is_some() {
                    let at = f.get("shell").map_or(path, |(_, p)| p).to_string();
                    self.warn(
                        &at,
                        "both shell and exec are set: exec is used, shell is ignored",
                    );
                }
                CommandSpec::Exec(argv)
            }
            (Some(shell), None) if !shell.trim().is_empty() => CommandSpec::Shell(shell),
            (Some(_), None) => {
                let at = f.get("shell").map_or(path, |(_, p)| p).to_string();
                self.error(&at, "shell is empty: write the command to run");
                return None;
            }
            (None, None) => {
                self.error(
                    path,
                    "an action needs shell (a command line) or exec (a list)",
                );
                return None;
            }
        };

        let timeout = match f.get("timeout") {
            None => defaults.timeout,
            field @ Some((_, at)) => match self.integer(field) {
                Some(secs @ 1..=86_400) => Duration::from_secs(secs.unsigned_abs()),
                Some(secs) => {
                    self.error(
                        at,
                        format!("timeout must be between 1 and 86400 seconds, found {secs}"),
                    );
                    defaults.timeout
                }
                None => defaults.timeout,
            },
        };
        let max_concurrent = match f.get("maxConcurrent") {
            None => 1,
            field @ Some((_, at)) => match self.integer(field) {
                Some(n) if n >= 1 => usize::try_from(n).unwrap_or(usize::MAX),
                Some(n) => {
                    self.error(at, format!("maxConcurrent must be at least 1, found {n}"));
                    1
                }
                None => 1,
            },
        };
        let max_rate = self.rate_rules(f.get("maxRate"));
        let acls = self.text_list(f.get("acls"));
        if let Some((node, at)) = f.get("acls") {
            for (i, name) in acls.iter().enumerate() {
                if !self.acl_names.contains(name) {
                    let at = match node {
                        Node::Seq(_) => index_path(at, i),
                        _ => at.to_string(),
                    };
                    self.error(
                        &at,
                        format!(
                            "no access control list is named {name:?} (see accessControlLists)"
                        ),
                    );
                }
            }
        }
        let icon = match self.text(f.get("icon")) {
            Some(icon) if !icon.is_empty() => expand_icon(&icon),
            _ => defaults.icon.clone(),
        };
        let popup_on_start = self.popup(f.get("popupOnStart"), &defaults.popup);
        let working_directory = self
            .text(f.get("workingDirectory"))
            .filter(|d| !d.trim().is_empty())
            .map(|d| self.resolve(d.trim()));
        let entity = self
            .text(f.get("entity"))
            .filter(|e| !e.is_empty())
            .or_else(|| inherited_entity.map(str::to_string));
        let mut arguments = self.arguments(f.get("arguments"));
        let exec_on_cron = self.cron_lines(f.get("execOnCron"));
        let exec_on_file_created_in_dir = self.text_list(f.get("execOnFileCreatedInDir"));
        let exec_on_file_changed_in_dir = self.text_list(f.get("execOnFileChangedInDir"));
        if !exec_on_file_created_in_dir.is_empty() || !exec_on_file_changed_in_dir.is_empty() {
            // The file's path, name, directory, extension and size reach the command as
            // arguments, through the same checks and quoting as any other.
            crate::triggers::declare_file_arguments(&mut arguments);
        }
        let template = self.command_template(&command, &f, path, &arguments, entity.as_deref());
        let exec_on_startup = self.flag(f.get("execOnStartup"), false);
        if exec_on_startup || !exec_on_cron.is_empty() {
            for a in arguments
                .iter()
                .filter(|a| a.reject_null && a.default.is_none())
            {
                self.warn(
                    path,
                    format!(
                        "argument {:?} is required and has no default, so the runs that \
                         execOnStartup or execOnCron start will be refused: give it a default",
                        a.name
                    ),
                );
            }
        }

        let action = Action {
            // Settled by `settle_ids` once every configured id is known.
            id: String::new(),
            title: title.clone(),
            icon,
            command,
            template,
            timeout,
            arguments,
            entity,
            hidden: self.flag(f.get("hidden"), false),
            max_concurrent,
            max_rate,
            acls,
            popup_on_start,
            working_directory,
            exec_on_startup,
            exec_on_cron,
            exec_on_file_created_in_dir,
            exec_on_file_changed_in_dir,
        };
        self.drafts.push(Draft {
            action,
            configured_id,
            path: path.to_string(),
        });
        Some(title)
    }

    /// Compiles the command for substitution. Unsafe placeholder contexts, placeholders
    /// naming nothing, and placeholders naming display-only arguments are errors at the
    /// path of the text that holds them.
    fn command_template(
        &mut self,
        command: &CommandSpec,
        f: &Fields<'_>,
        path: &str,
        arguments: &[Argument],
        entity: Option<&str>,
    ) -> CommandTemplate {
        let texts: Vec<(String, &str, bool)> = match command {
            CommandSpec::Shell(text) => {
                let at = f.get("shell").map_or(path, |(_, p)| p).to_string();
                vec![(at, text.as_str(), true)]
            }
            CommandSpec::Exec(argv) => {
                let at = f.get("exec").map_or(path, |(_, p)| p).to_string();
                argv.iter()
                    .enumerate()
                    .map(|(i, t)| (index_path(&at, i), t.as_str(), false))
                    .collect()
            }
        };
        let mut compiled = Vec::new();
        for (at, text, shell) in texts {
            let result = if shell {
                Template::shell(text)
            } else {
                Template::literal(text)
            };
            match result {
                Ok(t) => {
                    for (placeholder, _) in t.placeholders() {
                        if let Some(problem) = placeholder_problem(placeholder, arguments, entity) {
                            self.error(&at, problem);
                        }
                    }
                    compiled.push(t);
                }
                Err(e) => {
                    self.error(&at, e.message);
                    compiled.push(Template::empty());
                }
            }
        }
        match command {
            CommandSpec::Shell(_) => {
                CommandTemplate::Shell(compiled.pop().unwrap_or_else(Template::empty))
            }
            CommandSpec::Exec(_) => CommandTemplate::Exec(compiled),
        }
    }

    /// `execOnCron`: each line must parse (see `schedule`); a bad one is an error at its own
    /// path.
    fn cron_lines(&mut self, field: Field<'_, '_>) -> Vec<String> {
        let lines = self.text_list(field);
        if let Some((node, at)) = field {
            for (i, line) in lines.iter().enumerate() {
                if let Err(why) = crate::schedule::parse(line, parse_go_duration) {
                    let at = match node {
                        Node::Seq(_) => index_path(at, i),
                        _ => at.to_string(),
                    };
                    self.error(&at, format!("invalid cron line {line:?}: {why}"));
                }
            }
        }
        lines
    }

    fn rate_rules(&mut self, field: Field<'_, '_>) -> Vec<RateRule> {
        let mut rules = Vec::new();
        for (entries, path) in self.mappings(field) {
            let f = self.fields(entries, &path, RATE);
            let limit = match f.get("limit") {
                None => {
                    self.error(&path, "a maxRate rule needs a limit (runs per duration)");
                    None
                }
                field @ Some((_, at)) => match self.integer(field) {
                    Some(n @ 1..=0xFFFF_FFFF) => u32::try_from(n).ok(),
                    Some(n) => {
                        self.error(at, format!("limit must be at least 1, found {n}"));
                        None
                    }
                    None => None,
                },
            };
            let window = match self.text(f.get("duration")) {
                None => {
                    if f.get("duration").is_none() {
                        self.error(
                            &path,
                            "a maxRate rule needs a duration such as 30s, 5m or 1h30m",
                        );
                    }
                    None
                }
                Some(text) => {
                    let at = f
                        .get("duration")
                        .map_or(path.as_str(), |(_, p)| p)
                        .to_string();
                    match parse_go_duration(&text) {
                        Ok(d) if !d.is_zero() => Some(d),
                        Ok(_) => {
                            self.error(&at, "duration must be longer than zero");
                            None
                        }
                        Err(why) => {
                            self.error(
                                &at,
                                format!("invalid duration {text:?}: {why} (write it like 30s, 5m or 1h30m)"),
                            );
                            None
                        }
                    }
                }
            };
            if let (Some(limit), Some(window)) = (limit, window) {
                rules.push(RateRule { limit, window });
            }
        }
        rules
    }

    fn arguments(&mut self, field: Field<'_, '_>) -> Vec<Argument> {
        let mut arguments: Vec<Argument> = Vec::new();
        // Upper-cased name → the argument path that claimed it, for collision messages.
        let mut env_names: HashMap<String, String> = HashMap::new();
        for (entries, path) in self.mappings(field) {
            let f = self.fields(entries, &path, ARGUMENT);
            let name = self.text(f.get("name")).unwrap_or_default();
            let kind = self.text(f.get("type")).unwrap_or_default();
            let display_only = ["confirmation", "html"]
                .iter()
                .any(|k| kind.trim().eq_ignore_ascii_case(k));
            let name_path = f.get("name").map_or(path.clone(), |(_, p)| p.to_string());
            if name.is_empty() {
                if !display_only {
                    self.error(
                        &path,
                        "an argument needs a name (only confirmation and html arguments go without)",
                    );
                }
            } else {
                let upper = name.to_ascii_uppercase();
                if RESERVED_ENV.contains(&upper.as_str())
                    || upper.starts_with("LD_")
                    || upper.starts_with("ACTIOND")
                {
                    self.error(
                        &name_path,
                        format!(
                            "argument {name:?} would replace the environment variable {upper} of \
                             the command: rename it"
                        ),
                    );
                } else if arguments.iter().any(|a| a.name == name) {
                    self.error(&name_path, format!("duplicate argument name {name:?}"));
                } else if let Some(other) = env_names.get(&upper) {
                    self.error(
                        &name_path,
                        format!(
                            "argument {name:?} and the one at {other} both become the environment \
                             variable {upper}: rename one"
                        ),
                    );
                }
                env_names.entry(upper).or_insert_with(|| path.clone());
            }
            let mut choices = Vec::new();
            for (entries, choice_path) in self.mappings(f.get("choices")) {
                let c = self.fields(entries, &choice_path, CHOICE);
                // An empty choice (`value:` with nothing) is a real option meaning "none";
                // OliveTin configs use it.
                let value = self.text(c.get("value")).unwrap_or_default();
                let title = self
                    .text(c.get("title"))
                    .filter(|t| !t.is_empty())
                    .unwrap_or_else(|| value.clone());
                choices.push(Choice { value, title });
            }
            let mut suggestions = Vec::new();
            if let Some(entries) = self.mapping(f.get("suggestions")) {
                let suggestions_path = f.get("suggestions").map_or("", |(_, p)| p).to_string();
                for (value, label) in entries {
                    let label = match label {
                        Node::Null => String::new(),
                        other => match other.scalar_text() {
                            Some(t) => t,
                            None => {
                                self.error(
                                    &key_path(&suggestions_path, value),
                                    format!("expected a label, found {}", other.describe()),
                                );
                                continue;
                            }
                        },
                    };
                    suggestions.push((value.clone(), label));
                }
            }
            let title = self
                .text(f.get("title"))
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| name.clone());
            let type_path = f.get("type").map_or(path.clone(), |(_, p)| p.to_string());
            let rule = match ArgType::parse(kind.trim(), !choices.is_empty()) {
                Ok(rule) => rule,
                Err(message) => {
                    self.error(&type_path, message);
                    ArgType::Ascii
                }
            };
            if kind.trim().is_empty() && choices.is_empty() && !name.is_empty() {
                self.warn(
                    &path,
                    format!(
                        "argument {name:?} has no type: values must be letters and digits (ascii)"
                    ),
                );
            }
            let default = self.text(f.get("default"));
            if let Some(value) = default
                .as_deref()
                .filter(|d| !d.is_empty() && !rule.is_display_only())
            {
                let allowed: Vec<&str> = choices.iter().map(|c| c.value.as_str()).collect();
                if let Err(why) = crate::arguments::check(&rule, value, &allowed) {
                    // Real configs use defaults as hints ("none", "example.com"), so this
                    // warns: a start that relies on such a default is refused at run time.
                    let at = f
                        .get("default")
                        .map_or(path.clone(), |(_, p)| p.to_string());
                    self.warn(
                        &at,
                        format!("the default breaks the argument's own rule (it {why}): a start without a value will be refused"),
                    );
                }
            }
            arguments.push(Argument {
                name,
                title,
                kind,
                rule,
                default,
                choices,
                description: self.text_or(f.get("description"), ""),
                suggestions,
                entity: self.text(f.get("entity")).filter(|e| !e.is_empty()),
                reject_null: self.flag(f.get("rejectNull"), false),
                from_trigger: false,
            });
        }
        arguments
    }

    /// Gives every action its id: configured ids first (a duplicate is an error), then ids
    /// derived from titles, made unique with a numeric suffix so that they stay stable while
    /// the config does not change.
    fn settle_ids(&mut self) -> Vec<Action> {
        let drafts = std::mem::take(&mut self.drafts);
        let mut used: HashMap<String, String> = HashMap::new();
        for draft in &drafts {
            if let Some(id) = &draft.configured_id {
                if let Some(first) = used.get(id) {
                    let message = format!("duplicate id {id:?} (first used by {first})");
                    self.error(&key_path(&draft.path, "id"), message);
                } else {
                    used.insert(id.clone(), draft.path.clone());
                }
            }
        }
        let mut actions = Vec::with_capacity(drafts.len());
        for (index, draft) in drafts.into_iter().enumerate() {
            let mut action = draft.action;
            action.id = match draft.configured_id {
                Some(id) => id,
                None => {
                    let mut base = derive_id(&action.title);
                    if base.is_empty() {
                        base = format!("action{}", index + 1);
                    }
                    let mut id = base.clone();
                    let mut n = 2u32;
                    while used.contains_key(&id) {
                        let suffix = n.to_string();
                        let keep = base.len().min(64 - suffix.len());
                        id = format!("{}{suffix}", &base[..keep]);
                        n += 1;
                    }
                    used.insert(id.clone(), draft.path.clone());
                    id
                }
            };
            actions.push(action);
        }
        actions
    }

    // --- entities and dashboards ------------------------------------------------------

    fn entity(&mut self, entries: &[(String, Node)], path: &str) -> Option<EntitySource> {
        let f = self.fields(entries, path, ENTITY);
        let file = self.text(f.get("file")).filter(|s| !s.trim().is_empty());
        let name = self.text(f.get("name")).filter(|s| !s.trim().is_empty());
        if file.is_none() {
            self.error(path, "an entity needs a file (YAML list or JSON objects)");
        }
        if name.is_none() {
            self.error(
                path,
                "an entity needs a name (the type its actions refer to)",
            );
        }
        Some(EntitySource {
            file: self.resolve(file?.trim()),
            name: name?,
        })
    }

    fn component(
        &mut self,
        entries: &[(String, Node)],
        path: &str,
        parent_entity: Option<&str>,
        defaults: &ActionDefaults,
    ) -> Option<Component> {
        let f = self.fields(entries, path, COMPONENT);
        let mut title = self.text_or(f.get("title"), "");
        let mut kind = self.text_or(f.get("type"), "").trim().to_string();
        let entity = self.text(f.get("entity")).filter(|e| !e.is_empty());
        // A child inherits its fieldset's entity, as in OliveTin, so an inline action inside
        // an entity fieldset is an entity action.
        let effective_entity = entity.as_deref().or(parent_entity);

        if let Some(entries) = self.mapping(f.get("inlineAction")) {
            let action_path = f.get("inlineAction").map_or("", |(_, p)| p).to_string();
            let inherited_title = (!title.is_empty()).then_some(title.as_str());
            if let Some(action_title) = self.action(
                entries,
                &action_path,
                defaults,
                inherited_title,
                effective_entity,
            ) && title.is_empty()
            {
                title = action_title;
            }
            if kind.is_empty() || kind.eq_ignore_ascii_case("action") {
                kind = "link".to_string();
            }
        }

        let mut contents = Vec::new();
        for (entries, child_path) in self.mappings(f.get("contents")) {
            if let Some(child) = self.component(entries, &child_path, effective_entity, defaults) {
                contents.push(child);
            }
        }
        if !COMPONENT_TYPES.contains(&kind.as_str()) {
            let at = f.get("type").map_or(path, |(_, p)| p).to_string();
            // OliveTin's own resolution: something with contents is a directory, anything
            // else is a link.
            let shown = if contents.is_empty() {
                "link"
            } else {
                "directory"
            };
            self.warn(
                &at,
                format!("unknown component type {kind:?}: shown as a {shown}"),
            );
            kind = if contents.is_empty() {
                String::new()
            } else {
                "directory".to_string()
            };
        }
        Some(Component {
            title,
            kind,
            entity,
            icon: self.text_or(f.get("icon"), ""),
            css_class: self.text_or(f.get("cssClass"), ""),
            contents,
        })
    }
}

// ---------------------------------------------------------------------------------------
// Small parsers
// ---------------------------------------------------------------------------------------

/// Warns about dashboard links whose title names no action (SPEC §7: such a link is dropped,
/// with a warning). Paths count components as written in the main file.
fn dangling_links(
    components: &[Component],
    actions: &[Action],
    path: &str,
    warnings: &mut Vec<Problem>,
) {
    for (i, c) in components.iter().enumerate() {
        let here = index_path(path, i);
        let is_link = c.kind == "link" || (c.kind.is_empty() && c.contents.is_empty());
        if is_link && !actions.iter().any(|a| a.title == c.title) {
            warnings.push(Problem {
                path: here.clone(),
                message: format!("no action is titled {:?}: this link is not shown", c.title),
            });
        }
        dangling_links(&c.contents, actions, &key_path(&here, "contents"), warnings);
    }
}

/// The most memory a stored password hash may ask for at login: OliveTin's own hashes use
/// 64 MiB; anything above is a typo that would exhaust a 512 MB board.
const MAX_ARGON2_KIB: u64 = 65_536;

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

/// Why a placeholder cannot be filled, if it cannot.
fn placeholder_problem(
    p: &Placeholder,
    arguments: &[Argument],
    entity: Option<&str>,
) -> Option<String> {
    match p {
        Placeholder::Argument(name) => {
            let declared = arguments.iter().find(|a| a.name == *name);
            match declared {
                Some(a) if is_display_only(&a.kind) => Some(format!(
                    "{p} names a {} argument, which has no value to substitute",
                    a.kind.trim()
                )),
                Some(_) => None,
                None => {
                    let names: Vec<&str> = arguments
                        .iter()
                        .filter(|a| !a.name.is_empty() && !is_display_only(&a.kind))
                        .map(|a| a.name.as_str())
                        .collect();
                    Some(if names.is_empty() {
                        format!("{p} names no argument: declare it under `arguments:`")
                    } else {
                        format!(
                            "{p} names no argument: declare it under `arguments:` (declared: {})",
                            names.join(", ")
                        )
                    })
                }
            }
        }
        Placeholder::Entity(_) if entity.is_none() => Some(format!(
            "{p} names an entity field, but the action has no `entity:`"
        )),
        Placeholder::Entity(_) => None,
    }
}

/// confirmation and html arguments are shown, never substituted.
fn is_display_only(kind: &str) -> bool {
    ["confirmation", "html"]
        .iter()
        .any(|k| kind.trim().eq_ignore_ascii_case(k))
}

/// Whether an unsupported key's value asks for nothing: null, false, empty text or collection.
fn is_off(node: &Node) -> bool {
    match node {
        Node::Null | Node::Bool(false) => true,
        // Not trimmed: OliveTin reads `justification: " "` as "ask, with no template".
        Node::Str(s) => s.is_empty(),
        Node::Seq(items) => items.is_empty(),
        Node::Map(entries) => entries.is_empty(),
        Node::Bool(true) | Node::Int(_) | Node::Float(_) => false,
    }
}

/// The closest known key when an unknown one looks like a typo of it (edit distance ≤ 2).
fn suggest(key: &str, schema: Schema) -> Option<&'static str> {
    if key.len() < 4 {
        return None;
    }
    let key = key.to_ascii_lowercase();
    schema
        .iter()
        .map(|(name, _)| (edit_distance(&key, &name.to_ascii_lowercase()), *name))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, name)| name)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut diagonal = row[0];
        row[0] = i;
        for j in 1..=b.len() {
            let above = row[j];
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (row[j] + 1).min(row[j - 1] + 1).min(diagonal + cost);
            diagonal = above;
        }
    }
    row[b.len()]
}

fn is_valid_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// An id from a title in lowerCamelCase ASCII alphanumerics: "Restart Docker" →
/// `restartDocker`. Words are split at ASCII punctuation and spaces; other characters
/// (accents, emoji) are dropped; at most 64 characters. May be empty.
fn derive_id(title: &str) -> String {
    let mut id = String::new();
    for word in title.split(|c: char| c.is_ascii() && !c.is_ascii_alphanumeric()) {
        let word: String = word.chars().filter(char::is_ascii_alphanumeric).collect();
        let mut chars = word.chars();
        let Some(first) = chars.next() else {
            continue;
        };
        if id.is_empty() {
            id.push_str(&word.to_ascii_lowercase());
        } else {
            id.push(first.to_ascii_uppercase());
            id.push_str(chars.as_str());
        }
    }
    id.truncate(64);
    id
}

fn expand_icon(icon: &str) -> String {
    ICON_NAMES
        .iter()
        .find(|(name, _)| *name == icon)
        .map_or_else(|| icon.to_string(), |(_, entity)| (*entity).to_string())
}

/// Checks `host:port` (`[v6]:port` for IPv6); the host is an IP address or a host name.
/// The command line's `--listen` is checked by the same rule.
pub fn check_host_port(address: &str) -> Result<(), String> {
    let port = if let Some(rest) = address.strip_prefix('[') {
        let (host, port) = rest
            .split_once("]:")
            .ok_or("an IPv6 address needs ]:port after it")?;
        host.parse::<Ipv6Addr>()
            .map_err(|_| format!("{host:?} is not an IPv6 address"))?;
        port
    } else {
        let (host, port) = address.rsplit_once(':').ok_or("the port is missing")?;
        if host.contains(':') {
            return Err("write an IPv6 address in brackets".to_string());
        }
        if host.is_empty() {
            return Err("the host is missing".to_string());
        }
        let name_ok = host.parse::<IpAddr>().is_ok()
            || host.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            });
        if !name_ok {
            return Err(format!("{host:?} is not an IP address or host name"));
        }
        port
    };
    if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) || port.parse::<u16>().is_err()
    {
        return Err(format!("{port:?} is not a port number (0 to 65535)"));
    }
    Ok(())
}

/// An IP address, or an address with a prefix length (`10.0.0.0/8`, `::1/128`).
fn is_ip_or_cidr(text: &str) -> bool {
    match text.split_once('/') {
        None => text.parse::<IpAddr>().is_ok(),
        Some((ip, bits)) => {
            let max = match ip.parse::<IpAddr>() {
                Ok(IpAddr::V4(_)) => 32,
                Ok(IpAddr::V6(_)) => 128,
                Err(_) => return false,
            };
            !bits.is_empty()
                && bits.len() <= 3
                && bits.bytes().all(|b| b.is_ascii_digit())
                && bits.parse::<u32>().is_ok_and(|b| b <= max)
        }
    }
}

/// Parses a duration in Go's syntax (`300ms`, `1.5h`, `2h45m`): a sequence of decimal numbers,
/// each with a unit `ns`, `us` (or `µs`), `ms`, `s`, `m`, `h`. A bare `0` is zero; a negative
/// duration is refused.
pub(crate) fn parse_go_duration(text: &str) -> Result<Duration, String> {
    let s = text.trim();
    let (negative, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest.is_empty() {
        return Err("it is empty".to_string());
    }
    if rest == "0" {
        return Ok(Duration::ZERO);
    }
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let int_part = &rest[..int_len];
        rest = &rest[int_len..];
        let mut frac_part = "";
        if let Some(after_dot) = rest.strip_prefix('.') {
            let frac_len = after_dot.bytes().take_while(u8::is_ascii_digit).count();
            frac_part = &after_dot[..frac_len];
            rest = &after_dot[frac_len..];
        }
        if int_part.is_empty() && frac_part.is_empty() {
            return Err("a number is missing".to_string());
        }
        let unit_len = rest
            .bytes()
            .take_while(|b| !b.is_ascii_digit() && *b != b'.')
            .count();
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let nanos_per_unit: u128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "" => return Err("a unit is missing".to_string()),
            other => return Err(format!("unknown unit {other:?}")),
        };
        if int_part.len() > 20 {
            return Err("it is too long".to_string());
        }
        let whole: u128 = if int_part.is_empty() {
            0
        } else {
            int_part.parse().map_err(|_| "it is too long")?
        };
        total += whole * nanos_per_unit;
        // Nanoseconds are the resolution; further digits cannot change the result.
        let frac_digits = &frac_part[..frac_part.len().min(18)];
        if !frac_digits.is_empty() {
            let frac: u128 = frac_digits.parse().map_err(|_| "bad fraction")?;
            total +=
                frac * nanos_per_unit / 10u128.pow(u32::try_from(frac_digits.len()).unwrap_or(18));
        }
        if total > u128::from(u64::MAX) {
            return Err("it is too long".to_string());
        }
    }
    if negative && total > 0 {
        return Err("it is negative".to_string());
    }
    Ok(Duration::from_nanos(
        u64::try_from(total).unwrap_or(u64::MAX),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Environment for tests: a fixed list, never the real environment.
    fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_string())
        }
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn base() -> PathBuf {
        PathBuf::from("/srv/actiond")
    }

    fn ok(text: &str) -> (Config, Vec<Problem>) {
        match parse(text, Source::Embedded, base(), &no_env) {
            Ok(result) => result,
            Err((errors, _)) => panic!("expected a valid config, got errors {errors:#?}\n{text}"),
        }
    }

    fn errors(text: &str) -> Vec<Problem> {
        match parse(text, Source::Embedded, base(), &no_env) {
            Ok(_) => panic!("expected errors for\n{text}"),
            Err((errors, _)) => errors,
        }
    }

    /// Asserts that `text` fails with exactly one error at `path` whose message holds `needle`.
    fn assert_error(text: &str, path: &str, needle: &str) {
        let errs = errors(text);
        assert!(
            errs.iter()
                .any(|p| p.path == path && p.message.contains(needle)),
            "expected an error at {path:?} containing {needle:?} for\n{text}\ngot {errs:#?}"
        );
        assert_eq!(
            errs.len(),
            1,
            "expected one error for\n{text}\ngot {errs:#?}"
        );
    }

    fn assert_warning(text: &str, path: &str, needle: &str) {
        let (_, warnings) = ok(text);
        assert!(
            warnings
                .iter()
                .any(|p| p.path == path && p.message.contains(needle)),
            "expected a warning at {path:?} containing {needle:?} for\n{text}\ngot {warnings:#?}"
        );
    }

    const ONE_ACTION: &str = "actions:\n  - title: Hello\n    shell: echo hi\n";

    #[test]
    fn empty_config_takes_every_default() {
        for text in ["", "# nothing\n", "{}\n"] {
            let (c, warnings) = ok(text);
            assert!(warnings.is_empty(), "{warnings:?}");
            assert_eq!(c.listen_address, "0.0.0.0:1337");
            assert_eq!(c.log_level, LogLevel::Info);
            assert_eq!(c.page_title, "actiond");
            assert!(c.show_footer);
            assert!(c.show_navigation);
            assert_eq!(c.banner_message, "");
            assert_eq!(c.banner_css, "");
            assert!(c.additional_links.is_empty());
            assert_eq!(c.default_icon_for_actions, "&#x1F600;");
            assert_eq!(c.default_popup_on_start, "nothing");
            assert_eq!(c.limits, Limits::default());
            assert_eq!(c.state_directory, None);
            assert!(!c.prometheus_enabled);
            assert!(c.actions.is_empty());
            assert!(c.entities.is_empty());
            assert!(c.dashboards.is_empty());
            assert!(!c.insecure_allow_dump_vars);
            assert!(!c.insecure_allow_dump_sos);
            assert!(!c.insecure_allow_dump_action_map);
            assert_eq!(c.base_dir, base());
            let a = &c.auth;
            assert!(!a.require_guests_to_login);
            assert_eq!(a.default_permissions, Permissions::ALL);
            assert_eq!(c.default_policy, Policy::DEFAULT);
            assert!(!a.local_users_enabled);
            assert!(a.local_users.is_empty());
            assert_eq!(a.http_header_username, "");
            assert_eq!(a.http_header_usergroup, "");
            assert_eq!(a.trusted_proxies, vec!["127.0.0.1/8", "::1/128"]);
            assert!(a.api_tokens.is_empty());
            assert!(a.access_control_lists.is_empty());
        }
    }

    #[test]
    fn top_level_values_are_read() {
        let (c, warnings) = ok("
listenAddressSingleHTTPFrontend: 127.0.0.1:8080
logLevel: warning
pageTitle: Door panel
showFooter: no
showNavigation: 'off'
bannerMessage: Hello
bannerCss: 'color: red'
additionalNavigationLinks:
  - {title: Docs, url: 'https://example.com'}
  - {url: 'https://example.org'}
defaultIconForActions: ping
defaultPopupOnStart: execution-dialog
stateDirectory: state
logHistoryLimit: 500
logHistoryPageSize: 25
maxOutputBytes: 1024
defaultTimeout: 60
killGracePeriod: 0
maxConcurrentExecutions: 4
maxRequestBodyBytes: 2048
maxConnections: 10
headerReadTimeout: 5
maxEventSubscribers: 0
eventQueueLength: 16
prometheus: {enabled: true}
insecureAllowDumpVars: true
insecureAllowDumpSos: yes
insecureAllowDumpActionMap: TRUE
");
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(c.listen_address, "127.0.0.1:8080");
        assert_eq!(c.log_level, LogLevel::Warn);
        assert_eq!(c.page_title, "Door panel");
        assert!(!c.show_footer);
        assert!(!c.show_navigation);
        assert_eq!(c.banner_message, "Hello");
        assert_eq!(c.banner_css, "color: red");
        assert_eq!(
            c.additional_links,
            vec![
                Link {
                    title: "Docs".into(),
                    url: "https://example.com".into()
                },
                Link {
                    title: "https://example.org".into(),
                    url: "https://example.org".into()
                },
            ]
        );
        assert_eq!(c.default_icon_for_actions, "&#x1f4e1;");
        assert_eq!(c.default_popup_on_start, "execution-dialog");
        assert_eq!(c.state_directory, Some(base().join("state")));
        assert_eq!(
            c.limits,
            Limits {
                log_history_limit: 500,
                log_history_page_size: 25,
                max_output_bytes: 1024,
                default_timeout: Duration::from_secs(60),
                kill_grace_period: Duration::ZERO,
                max_concurrent_executions: 4,
                max_request_body_bytes: 2048,
                max_connections: 10,
                header_read_timeout: Duration::from_secs(5),
                max_event_subscribers: 0,
                event_queue_length: 16,
            }
        );
        assert!(c.prometheus_enabled);
        assert!(
            c.insecure_allow_dump_vars
                && c.insecure_allow_dump_sos
                && c.insecure_allow_dump_action_map
        );
    }

    #[test]
    fn log_levels() {
        let cases = [
            ("ERROR", LogLevel::Error),
            ("warn", LogLevel::Warn),
            ("Warning", LogLevel::Warn),
            ("info", LogLevel::Info),
            ("DEBUG", LogLevel::Debug),
            ("trace", LogLevel::Trace),
        ];
        for (text, level) in cases {
            assert_eq!(
                ok(&format!("logLevel: {text}\n")).0.log_level,
                level,
                "{text}"
            );
        }
        assert_error("logLevel: loud\n", "logLevel", "unknown log level");
    }

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
            assert_eq!(c.actions[0].popup_on_start, "execution-button", "{key}");
        }
        for key in ["defaultPopupOnStart", "defaultOnClick"] {
            let (c, _) = ok(&format!("{key}: history\n{ONE_ACTION}"));
            assert_eq!(c.default_popup_on_start, "history", "{key}");
            assert_eq!(c.actions[0].popup_on_start, "history", "{key}");
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
    fn unknown_popup_falls_back_to_the_default() {
        let text = format!(
            "defaultPopupOnStart: execution-dialog\n{ONE_ACTION}    popupOnStart: fireworks\n"
        );
        assert_warning(
            &text,
            "actions[0].popupOnStart",
            "unknown value \"fireworks\"",
        );
        assert_eq!(ok(&text).0.actions[0].popup_on_start, "execution-dialog");
    }

    #[test]
    fn bounds_are_enforced_with_their_path() {
        let cases: &[(&str, &str)] = &[
            ("logHistoryLimit: 0", "between 1 and 10000"),
            ("logHistoryLimit: 10001", "between 1 and 10000"),
            ("logHistoryPageSize: 1001", "between 1 and 1000"),
            ("maxOutputBytes: 1023", "between 1024 and 16777216"),
            ("maxOutputBytes: 16777217", "between 1024 and 16777216"),
            ("defaultTimeout: 0", "between 1 and 86400 seconds"),
            ("killGracePeriod: 301", "between 0 and 300 seconds"),
            ("killGracePeriod: -1", "between 0 and 300 seconds"),
            ("maxConcurrentExecutions: 1025", "between 1 and 1024"),
            ("maxRequestBodyBytes: 100", "between 1024 and 16777216"),
            ("maxConnections: 65536", "between 1 and 65535"),
            ("headerReadTimeout: 0", "between 1 and 300 seconds"),
            ("maxEventSubscribers: 4097", "between 0 and 4096"),
            ("eventQueueLength: 15", "between 16 and 65536"),
            (
                "defaultTimeout: 1.5",
                "expected a whole number, found the number 1.5",
            ),
            ("defaultTimeout: soon", "expected a whole number"),
        ];
        for (line, needle) in cases {
            let key = line.split(':').next().unwrap_or_default();
            assert_error(&format!("{line}\n"), key, needle);
        }
        // Whole numbers written as text (for instance from ${{ VAR }}) are accepted.
        assert_eq!(
            ok("defaultTimeout: '45'\n").0.limits.default_timeout,
            Duration::from_secs(45)
        );
    }

    #[test]
    fn wrong_types_are_errors_naming_what_was_found() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "showFooter: [1]\n",
                "showFooter",
                "expected a boolean (true or false), found a list",
            ),
            (
                "showFooter: maybe\n",
                "showFooter",
                "found the text \"maybe\"",
            ),
            ("showFooter: 1\n", "showFooter", "found the number 1"),
            (
                "pageTitle: {a: b}\n",
                "pageTitle",
                "expected text, found a mapping",
            ),
            (
                "actions: {title: x}\n",
                "actions",
                "expected a list, found a mapping",
            ),
            ("actions: [plain]\n", "actions[0]", "expected a mapping"),
            ("prometheus: true\n", "prometheus", "expected a mapping"),
            (
                "trustedProxies: {a: b}\n",
                "trustedProxies",
                "expected a list of text",
            ),
            ("- a\n- b\n", "", "a config is a mapping"),
        ];
        for (text, path, needle) in cases {
            assert_error(text, path, needle);
        }
    }

    #[test]
    fn listen_address_must_be_host_and_port() {
        for good in [
            "0.0.0.0:1337",
            "localhost:80",
            "[::]:1337",
            "[::1]:0",
            "pi.local:8080",
        ] {
            assert_eq!(
                ok(&format!("listenAddressSingleHTTPFrontend: '{good}'\n"))
                    .0
                    .listen_address,
                good
            );
        }
        for bad in [
            "1337",
            ":1337",
            "host:",
            "host:99999",
            "::1:80",
            "[::1]80",
            "bad host:80",
            "[zz]:1",
        ] {
            assert_error(
                &format!("listenAddressSingleHTTPFrontend: '{bad}'\n"),
                "listenAddressSingleHTTPFrontend",
                "expected host:port",
            );
        }
    }

    #[test]
    fn state_directory_defaults_to_systemds() {
        let env = env_of(&[("STATE_DIRECTORY", "/var/lib/actiond:/var/lib/other")]);
        let parsed = |text: &str| {
            parse(text, Source::Embedded, base(), &env)
                .map(|(c, _)| c.state_directory)
                .unwrap_or_else(|(e, _)| panic!("{e:?}"))
        };
        assert_eq!(parsed(""), Some(PathBuf::from("/var/lib/actiond")));
        assert_eq!(
            parsed("stateDirectory: /data\n"),
            Some(PathBuf::from("/data"))
        );
        // Written but empty: the operator asked for memory-only history.
        assert_eq!(parsed("stateDirectory: ''\n"), None);
        let empty = env_of(&[("STATE_DIRECTORY", "")]);
        let (c, _) =
            parse("", Source::Embedded, base(), &empty).unwrap_or_else(|(e, _)| panic!("{e:?}"));
        assert_eq!(c.state_directory, None);
    }

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
        // Guests must log in and defaultPermissions is not written: guests get nothing.
        assert_eq!(a.default_permissions, Permissions::NONE);
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
        assert_eq!(
            a.trusted_proxies,
            vec!["10.0.0.0/8", "192.168.1.1", "fd00::/8"]
        );
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
        let (c, _) = ok("authRequireGuestsToLogin: true\ndefaultPermissions: {view: true}\n");
        assert_eq!(
            c.auth.default_permissions,
            Permissions {
                view: true,
                exec: false,
                logs: false,
                kill: false
            }
        );
    }

    #[test]
    fn auth_errors_have_paths() {
        let hash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA";
        let cases: &[(String, &str, &str)] = &[
            (
                "authLocalUsers: {users: [{username: a, password: secret}]}\n".into(),
                "authLocalUsers.users[0].password",
                "argon2id hash",
            ),
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
    fn an_action_with_every_key() {
        let (c, warnings) = ok("
accessControlLists: [{name: ops}]
actions:
  - id: ping_host
    title: Ping host
    icon: '<b>P</b>'
    shell: ping -c 1 {{ host }}
    timeout: 10
    hidden: true
    maxConcurrent: 2
    maxRate:
      - {limit: 3, duration: 1m}
      - {limit: 10, duration: 1h30m}
    acls: ops
    popupOnStart: execution-dialog-stdout-only
    workingDirectory: scripts
    execOnStartup: true
    execOnCron: '@hourly'
    execOnFileCreatedInDir: [/tmp/in]
    execOnFileChangedInDir: /tmp/watch
    entity: server
    arguments:
      - name: host
        title: Host
        type: ascii_identifier
        default: 1.5
        description: Which host
        entity: server
        rejectNull: true
        choices:
          - {value: 1.5, title: One and a half}
          - {value: true}
          - {value: }
        suggestions:
          plex:
          wifi: WiFi controller
          7: seven
");
        assert!(warnings.is_empty(), "{warnings:?}");
        let a = &c.actions[0];
        assert_eq!(a.id, "ping_host");
        assert_eq!(a.title, "Ping host");
        assert_eq!(a.icon, "<b>P</b>");
        assert_eq!(a.command, CommandSpec::Shell("ping -c 1 {{ host }}".into()));
        assert_eq!(a.timeout, Duration::from_secs(10));
        assert!(a.hidden);
        assert_eq!(a.max_concurrent, 2);
        assert_eq!(
            a.max_rate,
            vec![
                RateRule {
                    limit: 3,
                    window: Duration::from_secs(60)
                },
                RateRule {
                    limit: 10,
                    window: Duration::from_secs(5400)
                },
            ]
        );
        assert_eq!(a.acls, vec!["ops"]);
        assert_eq!(a.popup_on_start, "execution-dialog-stdout-only");
        assert_eq!(a.working_directory, Some(base().join("scripts")));
        assert!(a.exec_on_startup);
        assert_eq!(a.exec_on_cron, vec!["@hourly"]);
        assert_eq!(a.exec_on_file_created_in_dir, vec!["/tmp/in"]);
        assert_eq!(a.exec_on_file_changed_in_dir, vec!["/tmp/watch"]);
        assert_eq!(a.entity.as_deref(), Some("server"));
        // The file triggers add the file arguments after the declared ones.
        let added: Vec<&str> = a.arguments[1..].iter().map(|a| a.name.as_str()).collect();
        assert_eq!(
            added,
            [
                "filepath",
                "filename",
                "filedir",
                "fileext",
                "filesizebytes"
            ]
        );
        assert_eq!(
            a.arguments[..1],
            vec![Argument {
                name: "host".into(),
                title: "Host".into(),
                kind: "ascii_identifier".into(),
                rule: ArgType::AsciiIdentifier,
                default: Some("1.5".into()),
                choices: vec![
                    Choice {
                        value: "1.5".into(),
                        title: "One and a half".into()
                    },
                    Choice {
                        value: "1".into(),
                        title: "1".into()
                    },
                    Choice {
                        value: String::new(),
                        title: String::new()
                    },
                ],
                description: "Which host".into(),
                suggestions: vec![
                    ("plex".into(), String::new()),
                    ("wifi".into(), "WiFi controller".into()),
                    ("7".into(), "seven".into()),
                ],
                entity: Some("server".into()),
                reject_null: true,
                from_trigger: false,
            }]
        );
    }

    #[test]
    fn cron_lines_are_checked_at_their_path() {
        let problems = errors(
            "actions:\n  - {title: x, shell: y, execOnCron: ['@every 5m', '61 * * * *']}\n  - {title: z, shell: y, execOnCron: '@sometimes'}\n",
        );
        let got: Vec<(&str, bool)> = problems
            .iter()
            .map(|p| (p.path.as_str(), p.message.contains("invalid cron line")))
            .collect();
        assert_eq!(
            got,
            [
                ("actions[0].execOnCron[1]", true),
                ("actions[1].execOnCron", true)
            ],
            "{problems:?}"
        );
        assert!(problems[0].message.contains("minute: 61 is outside 0-59"));
        // Seconds first, and OliveTin's switch for them, are accepted.
        let (c, warnings) = ok(
            "cronSupportForSeconds: true\nactions:\n  - {title: x, shell: y, execOnCron: '*/10 * * * * *'}\n",
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(c.actions[0].exec_on_cron, ["*/10 * * * * *"]);
    }

    #[test]
    fn a_scheduled_action_with_a_required_argument_is_warned_about() {
        let (_, warnings) = ok(
            "actions:\n  - title: x\n    shell: echo {{ a }}\n    execOnCron: '@daily'\n    arguments: [{name: a, type: ascii, rejectNull: true}]\n",
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].message.contains("required and has no default"));
        assert_eq!(warnings[0].path, "actions[0]");
    }

    #[test]
    fn a_file_trigger_lets_the_command_name_the_file() {
        let (c, _) = ok(
            "actions:\n  - {title: x, shell: 'mv -- {{ filepath }} /done/{{ filename }}', execOnFileCreatedInDir: /in}\n",
        );
        assert_eq!(c.actions[0].arguments.len(), 5);
        // Without a file trigger the same placeholders name nothing.
        let problems = errors("actions:\n  - {title: x, shell: 'cat {{ filepath }}'}\n");
        assert!(
            problems[0].message.contains("names no argument"),
            "{problems:?}"
        );
    }

    #[test]
    fn action_defaults() {
        let (c, _) = ok(
            "defaultTimeout: 45\ndefaultIconForActions: '&#9731;'\ndefaultPopupOnStart: execution-button\nactions:\n  - title: Bare\n    shell: 'true'\n    arguments:\n      - name: who\n        default: false\n",
        );
        let a = &c.actions[0];
        assert_eq!(a.id, "bare");
        assert_eq!(a.icon, "&#9731;");
        assert_eq!(a.timeout, Duration::from_secs(45));
        assert_eq!(a.popup_on_start, "execution-button");
        assert_eq!(a.max_concurrent, 1);
        assert!(!a.hidden && !a.exec_on_startup);
        assert!(a.max_rate.is_empty() && a.acls.is_empty() && a.exec_on_cron.is_empty());
        assert_eq!(a.working_directory, None);
        assert_eq!(a.entity, None);
        let arg = &a.arguments[0];
        // The title falls back to the name, and a YAML boolean reads as OliveTin reads it.
        assert_eq!(arg.title, "who");
        assert_eq!(arg.kind, "");
        assert_eq!(arg.default.as_deref(), Some("0"));
        assert!(!arg.reject_null);
    }

    #[test]
    fn icon_short_names_expand() {
        let (c, _) = ok(&format!("{ONE_ACTION}    icon: restart\n"));
        assert_eq!(c.actions[0].icon, "&#128260;");
    }

    #[test]
    fn exec_is_preferred_over_shell() {
        let text = "actions:\n  - title: Both\n    shell: echo a\n    exec: [echo, 5, '{{ x }}']\n    arguments: [{name: x}]\n";
        assert_warning(text, "actions[0].shell", "exec is used");
        assert_eq!(
            ok(text).0.actions[0].command,
            CommandSpec::Exec(vec!["echo".into(), "5".into(), "{{ x }}".into()])
        );
    }

    #[test]
    fn derived_ids() {
        let cases: &[(&str, &str)] = &[
            ("Restart Docker", "restartDocker"),
            ("Ping the Internet", "pingTheInternet"),
            ("restart HTTPD now", "restartHTTPDNow"),
            (
                "OliveTin Post-Install Healthcheck",
                "olivetinPostInstallHealthcheck",
            ),
            ("Café au lait", "cafAuLait"),
            ("🚀 Launch!", "launch"),
            ("{{ server.name }} Wake on Lan", "serverNameWakeOnLan"),
            ("2 seconds", "2Seconds"),
        ];
        for (title, id) in cases {
            assert_eq!(derive_id(title), *id, "{title}");
        }
        assert_eq!(derive_id(&"word ".repeat(40)).len(), 64);
        assert_eq!(derive_id("日本語"), "");
    }

    #[test]
    fn derived_ids_are_unique_and_configured_ids_win() {
        let (c, _) = ok("
actions:
  - {title: Restart Docker, shell: a}
  - {title: 'restart docker', shell: b}
  - {title: 日本語, shell: c}
  - {title: Restart Docker!, shell: d}
  - {id: restartDocker2, title: Other, shell: e}
");
        let ids: Vec<&str> = c.actions.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(
            ids,
            vec![
                "restartDocker",
                "restartDocker3",
                "action3",
                "restartDocker4",
                "restartDocker2"
            ]
        );
    }

    #[test]
    fn links_to_no_action_warn() {
        let text = "actions:\n  - {title: Real, shell: x}\ndashboards:\n  - title: D\n    contents:\n      - title: Real\n      - title: Ghost\n";
        assert_warning(
            text,
            "dashboards[0].contents[1]",
            "no action is titled \"Ghost\"",
        );
    }

    #[test]
    fn password_hashes_that_would_exhaust_the_board_are_refused() {
        assert_eq!(
            argon2_memory_kib("$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA"),
            Some(19456)
        );
        assert_eq!(argon2_memory_kib("plain"), None);
        let text = "authLocalUsers:\n  enabled: true\n  users:\n    - {username: a, password: '$argon2id$v=19$m=4194304,t=2,p=1$c2FsdA$aGFzaA'}\n";
        assert_error(text, "authLocalUsers.users[0].password", "KiB of memory");
        let fine = "authLocalUsers:\n  enabled: true\n  users:\n    - {username: a, password: '$argon2id$v=19$m=65536,t=4,p=4$c2FsdA$aGFzaA'}\n";
        ok(fine);
    }

    #[test]
    fn placeholders_must_name_a_value_argument_in_a_safe_context() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "actions:\n  - {title: x, shell: 'echo {{ nope }}'}\n",
                "actions[0].shell",
                "names no argument",
            ),
            (
                "actions:\n  - {title: x, shell: 'echo {{ a }} {{ nope }}', arguments: [{name: a}]}\n",
                "actions[0].shell",
                "(declared: a)",
            ),
            (
                "actions:\n  - {title: x, exec: [echo, '{{ nope }}']}\n",
                "actions[0].exec[1]",
                "names no argument",
            ),
            (
                "actions:\n  - {title: x, shell: 'echo {{ ok }}', arguments: [{name: ok, type: confirmation}]}\n",
                "actions[0].shell",
                "confirmation argument",
            ),
            (
                "actions:\n  - {title: x, shell: 'echo {{ .CurrentEntity.name }}'}\n",
                "actions[0].shell",
                "no `entity:`",
            ),
            (
                "actions:\n  - {title: x, shell: 'echo $(echo {{ a }})', arguments: [{name: a}]}\n",
                "actions[0].shell",
                "inside $( )",
            ),
            (
                "actions:\n  - {title: x, shell: 'docker ps --format {{.Names}}'}\n",
                "actions[0].shell",
                "script file",
            ),
        ];
        for (text, path, needle) in cases {
            assert_error(text, path, needle);
        }
        let (config, _) = ok(
            "actions:\n  - {title: x, entity: server, shell: 'ping {{ server.host }} {{ n }}', \
                               arguments: [{name: n, type: int}]}\n",
        );
        let holes = config.actions[0].template.placeholders();
        assert_eq!(holes.len(), 2);
    }

    #[test]
    fn action_errors_have_exact_paths() {
        let cases: &[(&str, &str, &str)] = &[
            ("actions:\n  - shell: x\n", "actions[0]", "needs a title"),
            ("actions:\n  - title: x\n", "actions[0]", "needs shell"),
            (
                "actions:\n  - {title: x, shell: ''}\n",
                "actions[0].shell",
                "shell is empty",
            ),
            (
                "actions:\n  - {title: x, exec: 'ls -l'}\n",
                "actions[0].exec",
                "exec is a list",
            ),
            (
                "actions:\n  - {title: x, exec: []}\n",
                "actions[0].exec",
                "at least the program",
            ),
            (
                "actions:\n  - {title: x, shell: y, id: 'has space'}\n",
                "actions[0].id",
                "invalid id",
            ),
            (
                "actions:\n  - {title: x, shell: y, id: '{{ x }}'}\n",
                "actions[0].id",
                "invalid id",
            ),
            (
                "actions:\n  - {title: x, shell: y, timeout: 0}\n",
                "actions[0].timeout",
                "between 1 and 86400",
            ),
            (
                "actions:\n  - {title: x, shell: y, timeout: -5}\n",
                "actions[0].timeout",
                "between 1 and 86400",
            ),
            (
                "actions:\n  - {title: x, shell: y, timeout: 86401}\n",
                "actions[0].timeout",
                "between 1 and 86400",
            ),
            (
                "actions:\n  - {title: x, shell: y, maxConcurrent: 0}\n",
                "actions[0].maxConcurrent",
                "at least 1",
            ),
            (
                "actions:\n  - {title: x, shell: y, hidden: [true]}\n",
                "actions[0].hidden",
                "expected a boolean",
            ),
            (
                "actions:\n  - {title: x, shell: y, maxRate: [{limit: 0, duration: 1m}]}\n",
                "actions[0].maxRate[0].limit",
                "at least 1",
            ),
            (
                "actions:\n  - {title: x, shell: y, maxRate: [{limit: 1, duration: 5x}]}\n",
                "actions[0].maxRate[0].duration",
                "unknown unit",
            ),
            (
                "actions:\n  - {title: x, shell: y, maxRate: [{limit: 1, duration: 30}]}\n",
                "actions[0].maxRate[0].duration",
                "unit is missing",
            ),
            (
                "actions:\n  - {title: x, shell: y, maxRate: [{limit: 1, duration: 0s}]}\n",
                "actions[0].maxRate[0].duration",
                "longer than zero",
            ),
            (
                "actions:\n  - {title: x, shell: y, maxRate: [{limit: 1, duration: -1m}]}\n",
                "actions[0].maxRate[0].duration",
                "negative",
            ),
            (
                "actions:\n  - {title: x, shell: y, maxRate: [{duration: 1m}]}\n",
                "actions[0].maxRate[0]",
                "needs a limit",
            ),
            (
                "actions:\n  - {title: x, shell: y, maxRate: [{limit: 2}]}\n",
                "actions[0].maxRate[0]",
                "needs a duration",
            ),
            (
                "actions:\n  - {title: x, shell: y, execOnCron: [[a]]}\n",
                "actions[0].execOnCron[0]",
                "expected text, found a list",
            ),
            (
                "actions:\n  - {id: a, title: x, shell: y}\n  - {id: a, title: z, shell: y}\n",
                "actions[1].id",
                "duplicate id \"a\" (first used by actions[0])",
            ),
        ];
        for (text, path, needle) in cases {
            assert_error(text, path, needle);
        }
    }

    #[test]
    fn an_action_with_only_an_id_uses_it_as_title() {
        let (c, _) = ok("actions:\n  - {id: reboot, shell: reboot}\n");
        assert_eq!(c.actions[0].title, "reboot");
    }

    #[test]
    fn argument_errors_have_exact_paths() {
        let wrap =
            |args: &str| format!("actions:\n  - title: x\n    shell: y\n    arguments:\n{args}");
        let cases: &[(String, &str, &str)] = &[
            (
                wrap("      - {type: ascii}\n"),
                "actions[0].arguments[0]",
                "needs a name",
            ),
            (
                wrap("      - {name: a}\n      - {name: a}\n"),
                "actions[0].arguments[1].name",
                "duplicate argument name",
            ),
            (
                wrap("      - {name: host}\n      - {name: HOST}\n"),
                "actions[0].arguments[1].name",
                "both become the environment variable HOST",
            ),
            (
                wrap("      - {name: path}\n"),
                "actions[0].arguments[0].name",
                "environment variable PATH",
            ),
            (
                wrap("      - {name: Ld_Preload}\n"),
                "actions[0].arguments[0].name",
                "LD_PRELOAD",
            ),
            (
                wrap("      - {name: actiond_user}\n"),
                "actions[0].arguments[0].name",
                "ACTIOND_USER",
            ),
            (
                wrap("      - {name: bash_env}\n"),
                "actions[0].arguments[0].name",
                "BASH_ENV",
            ),
            (
                wrap("      - {name: a, default: [1]}\n"),
                "actions[0].arguments[0].default",
                "expected text, found a list",
            ),
            (
                wrap("      - {name: a, choices: {a: b}}\n"),
                "actions[0].arguments[0].choices",
                "expected a list",
            ),
            (
                wrap("      - {name: a, choices: [b]}\n"),
                "actions[0].arguments[0].choices[0]",
                "expected a mapping",
            ),
            (
                wrap("      - {name: a, suggestions: [b]}\n"),
                "actions[0].arguments[0].suggestions",
                "expected a mapping",
            ),
            (
                wrap("      - {name: a, suggestions: {b: [c]}}\n"),
                "actions[0].arguments[0].suggestions.b",
                "expected a label",
            ),
            (
                wrap("      - {name: a, rejectNull: 2}\n"),
                "actions[0].arguments[0].rejectNull",
                "expected a boolean",
            ),
        ];
        for (text, path, needle) in cases {
            assert_error(text, path, needle);
        }
        // Display-only arguments need no name.
        let (c, _) = ok(&wrap(
            "      - {type: confirmation, title: Sure?}\n      - {type: html}\n      - {name: n, type: int}\n",
        ));
        assert_eq!(c.actions[0].arguments.len(), 3);
        let type_path = "actions[0].arguments[0].type";
        assert_error(
            &wrap("      - {name: n, type: no_such_type}\n"),
            type_path,
            "unknown argument type",
        );
        assert_error(
            &wrap("      - {name: n, type: HTML}\n"),
            type_path,
            "did you mean html",
        );
        assert_error(
            &wrap("      - {name: n, type: 'regex:['}\n"),
            type_path,
            "regex",
        );
        // A default that breaks its own rule still loads (real configs use defaults as hints),
        // with a warning: a start relying on it is refused.
        let (_, warnings) = ok(&wrap("      - {name: u, type: url, default: none}\n"));
        assert!(
            warnings
                .iter()
                .any(|w| w.path == "actions[0].arguments[0].default"),
            "{warnings:?}"
        );
    }

    #[test]
    fn unknown_keys_warn_by_name_and_path() {
        let text = "pageTitel: x\nactions:\n  - title: a\n    shell: b\n    colour: red\n    arguments:\n      - {name: n, type: ascii, hint: h}\ndashboards:\n  - title: D\n    contents:\n      - {title: a, cssStyle: {x: y}}\n";
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

    #[test]
    fn entities_and_dashboards() {
        let (c, warnings) = ok("
entities:
  - {file: entities/servers.yaml, name: server}
  - {file: /abs/containers.json, name: container}
actions:
  - {title: Ping server1, shell: ping}
dashboards:
  - title: My Servers
    contents:
      - title: All
        type: fieldset
        cssClass: wide
        contents:
          - title: Ping server1
          - title: More
            type: directory
            icon: '&#128193;'
            contents:
              - {type: display, title: '<b>hi</b>'}
      - {type: fieldset, entity: server, title: '{{ .CurrentEntity.name }}', contents: [{title: Ping server1}]}
");
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            c.entities,
            vec![
                EntitySource {
                    file: base().join("entities/servers.yaml"),
                    name: "server".into()
                },
                EntitySource {
                    file: PathBuf::from("/abs/containers.json"),
                    name: "container".into()
                },
            ]
        );
        let leaf = |title: &str, kind: &str| Component {
            title: title.into(),
            kind: kind.into(),
            entity: None,
            icon: String::new(),
            css_class: String::new(),
            contents: vec![],
        };
        assert_eq!(
            c.dashboards,
            vec![Component {
                title: "My Servers".into(),
                contents: vec![
                    Component {
                        title: "All".into(),
                        kind: "fieldset".into(),
                        css_class: "wide".into(),
                        contents: vec![
                            leaf("Ping server1", ""),
                            Component {
                                title: "More".into(),
                                kind: "directory".into(),
                                icon: "&#128193;".into(),
                                contents: vec![leaf("<b>hi</b>", "display")],
                                ..leaf("", "")
                            },
                        ],
                        ..leaf("", "")
                    },
                    Component {
                        title: "{{ .CurrentEntity.name }}".into(),
                        kind: "fieldset".into(),
                        entity: Some("server".into()),
                        contents: vec![leaf("Ping server1", "")],
                        ..leaf("", "")
                    },
                ],
                ..leaf("", "")
            }]
        );
        assert_error("entities:\n  - {name: n}\n", "entities[0]", "needs a file");
        assert_error("entities:\n  - {file: f}\n", "entities[0]", "needs a name");
        assert_warning(
            "dashboards:\n  - {title: D, contents: [{title: a, type: carousel}]}\n",
            "dashboards[0].contents[0].type",
            "unknown component type \"carousel\": shown as a link",
        );
    }

    #[test]
    fn inline_actions_become_actions_and_links() {
        let (c, warnings) = ok("
actions:
  - {title: Base, shell: echo base}
dashboards:
  - title: D
    contents:
      - type: action
        inlineAction: {title: First Action, shell: echo first}
      - title: Greet
        inlineAction: {shell: echo hi, icon: ping}
      - type: fieldset
        entity: person
        title: People
        contents:
          - title: 'Wave at {{ person.name }}'
            inlineAction: {shell: echo wave}
");
        assert!(warnings.is_empty(), "{warnings:?}");
        let summary: Vec<(&str, &str, Option<&str>)> = c
            .actions
            .iter()
            .map(|a| (a.id.as_str(), a.title.as_str(), a.entity.as_deref()))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("base", "Base", None),
                ("firstAction", "First Action", None),
                ("greet", "Greet", None),
                (
                    "waveAtPersonName",
                    "Wave at {{ person.name }}",
                    Some("person")
                ),
            ]
        );
        let d = &c.dashboards[0];
        assert_eq!(
            (d.contents[0].title.as_str(), d.contents[0].kind.as_str()),
            ("First Action", "link")
        );
        assert_eq!(
            (d.contents[1].title.as_str(), d.contents[1].kind.as_str()),
            ("Greet", "link")
        );
        assert_eq!(c.actions[2].icon, "&#x1f4e1;");
        assert_error(
            "dashboards:\n  - title: D\n    contents:\n      - inlineAction: {title: x}\n",
            "dashboards[0].contents[0].inlineAction",
            "needs shell",
        );
    }

    #[test]
    fn env_interpolation_applies_before_validation() {
        let env = env_of(&[("PORT", "8081"), ("TIMEOUT", "12"), ("TITLE", "From env")]);
        let text = "listenAddressSingleHTTPFrontend: 0.0.0.0:${{ PORT }}\nactions:\n  - title: ${{ TITLE }}\n    shell: echo\n    timeout: ${{TIMEOUT}}\n";
        let (c, _) =
            parse(text, Source::Embedded, base(), &env).unwrap_or_else(|(e, _)| panic!("{e:?}"));
        assert_eq!(c.listen_address, "0.0.0.0:8081");
        assert_eq!(c.actions[0].title, "From env");
        assert_eq!(c.actions[0].id, "fromEnv");
        assert_eq!(c.actions[0].timeout, Duration::from_secs(12));
        let (errs, _) = parse(
            "bannerMessage: ${{ MISSING }}\n",
            Source::Embedded,
            base(),
            &env,
        )
        .err()
        .unwrap_or_default();
        assert_eq!(
            errs,
            vec![Problem {
                path: "bannerMessage".into(),
                message: "environment variable MISSING is not set (used as ${{ MISSING }})".into(),
            }]
        );
    }

    #[test]
    fn every_error_is_collected_in_one_pass() {
        let errs = errors(
            "
logLevel: loud
maxConnections: 0
actions:
  - shell: x
  - {title: y, shell: z, timeout: 0, maxRate: [{limit: 1, duration: soon}]}
",
        );
        let paths: Vec<&str> = errs.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            vec![
                "logLevel",
                "maxConnections",
                "actions[0]",
                "actions[1].timeout",
                "actions[1].maxRate[0].duration"
            ]
        );
    }

    #[test]
    fn yaml_errors_have_an_empty_path() {
        let errs = errors("actions: [\n");
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].path, "");
        assert!(
            errs[0].message.starts_with("invalid YAML"),
            "{}",
            errs[0].message
        );
    }

    #[test]
    fn includes_merge_lists_and_name_their_files() {
        let reader = |dir: &Path| -> Result<Vec<(String, String)>, String> {
            assert_eq!(dir, Path::new("/srv/actiond/config.d"));
            Ok(vec![
                (
                    "00-first.yml".to_string(),
                    "actions:\n  - {title: First, shell: echo 1}\nentities:\n  - {file: e.yaml, name: e}\n".to_string(),
                ),
                (
                    "01-second.yaml".to_string(),
                    "logLevel: debug\nActions:\n  - {title: Second, shell: echo 2}\n  - {shell: nameless}\ndashboards:\n  - {title: Extra}\n".to_string(),
                ),
                ("02-broken.yml".to_string(), "actions: [\n".to_string()),
            ])
        };
        let text = "include: config.d/\nactions:\n  - {title: Main, shell: echo 0}\n";
        let result = parse_with_includes(text, Source::Embedded, base(), &no_env, &reader);
        let Err((errs, warnings)) = result else {
            panic!("the broken include must fail the load");
        };
        let paths: Vec<&str> = errs.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            vec![
                "config.d/02-broken.yml",
                "config.d/01-second.yaml: Actions[1]"
            ]
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].path, "config.d/01-second.yaml: logLevel");
        assert!(
            warnings[0]
                .message
                .contains("only actions, dashboards and entities")
        );

        let good = |_: &Path| -> Result<Vec<(String, String)>, String> {
            Ok(vec![
                (
                    "a.yml".to_string(),
                    "actions:\n  - {title: First, shell: echo 1}\n".to_string(),
                ),
                (
                    "b.yml".to_string(),
                    "entities:\n  - {file: e.yaml, name: e}\ndashboards:\n  - {title: Extra}\n"
                        .to_string(),
                ),
            ])
        };
        let (c, _) = parse_with_includes(text, Source::Embedded, base(), &no_env, &good)
            .unwrap_or_else(|(e, _)| panic!("{e:?}"));
        let titles: Vec<&str> = c.actions.iter().map(|a| a.title.as_str()).collect();
        assert_eq!(titles, vec!["Main", "First"]);
        assert_eq!(c.entities[0].file, base().join("e.yaml"));
        assert_eq!(c.dashboards[0].title, "Extra");

        // Without a reader (plain `parse`), an include cannot be honoured.
        assert_error("include: config.d\n", "include", "includes are only read");
    }

    #[test]
    fn go_durations() {
        let cases: &[(&str, u64)] = &[
            ("30s", 30_000),
            ("5m", 300_000),
            ("1h30m", 5_400_000),
            ("500ms", 500),
            ("1.5h", 5_400_000),
            ("2h45m10s", 9_910_000),
            ("+1s", 1000),
            ("1000us", 1),
            ("1000µs", 1),
            ("1000000ns", 1),
            (".5s", 500),
        ];
        for (text, millis) in cases {
            assert_eq!(
                parse_go_duration(text),
                Ok(Duration::from_millis(*millis)),
                "{text}"
            );
        }
        assert_eq!(parse_go_duration("0"), Ok(Duration::ZERO));
        for bad in [
            "",
            "s",
            "1",
            "1d",
            "1.s5",
            "-5m",
            "1h-5m",
            "99999999999999999999999h",
            "1 h",
        ] {
            assert!(parse_go_duration(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn ip_and_cidr() {
        for good in [
            "127.0.0.1",
            "127.0.0.1/8",
            "::1",
            "::1/128",
            "10.0.0.0/0",
            "fe80::/10",
        ] {
            assert!(is_ip_or_cidr(good), "{good}");
        }
        for bad in [
            "",
            "localhost",
            "10.0.0.0/33",
            "::/129",
            "10.0.0.0/",
            "10.0.0.0/+8",
            "1.2.3/8",
            "10.0.0.1/8/9",
        ] {
            assert!(!is_ip_or_cidr(bad), "{bad}");
        }
    }
}
