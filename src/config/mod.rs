//! The validated configuration: the only shape of config the rest of actiond ever sees.
//!
//! This module owns the types; `source` finds and reads the file (search order, includes,
//! the embedded default), `tree` turns YAML text into an ordered node tree, and `validate`
//! walks that tree once, collecting every error with its YAML path and warning about
//! unknown keys by name. Nothing here spawns processes, opens sockets or writes files, and a
//! `Config` is immutable once built: a reload builds a new one and the engine swaps it whole.

mod source;
pub(crate) mod tree;
mod validate;

use std::path::PathBuf;
use std::time::Duration;

use crate::arguments::ArgType;
use crate::template::{Placeholder, Template};

pub use source::{LoadError, Loaded, Source, load, locate};
/// Go's duration syntax (`30s`, `5m`, `1h30m`), for `@every` in cron lines too.
pub(crate) use validate::parse_go_duration as parse_duration;
pub use validate::{check_host_port, parse};

/// One problem found while validating, located by its YAML path (`actions[2].timeout`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// The whole validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where the text came from, for the log and diagnostics.
    pub source: Source,
    /// The config file's directory: the default working directory of every action and the
    /// anchor for relative paths (entity files, includes). For the embedded default it is the
    /// service's current directory.
    pub base_dir: PathBuf,
    /// `listenAddressSingleHTTPFrontend`, default `0.0.0.0:1337`.
    pub listen_address: String,
    pub log_level: LogLevel,
    pub page_title: String,
    pub show_footer: bool,
    pub show_navigation: bool,
    pub banner_message: String,
    pub banner_css: String,
    pub additional_links: Vec<Link>,
    pub default_icon_for_actions: String,
    pub default_popup_on_start: String,
    pub limits: Limits,
    /// `stateDirectory`; `None` keeps history in memory only.
    pub state_directory: Option<PathBuf>,
    pub prometheus_enabled: bool,
    pub actions: Vec<Action>,
    pub auth: Auth,
    pub entities: Vec<EntitySource>,
    /// The `include:` directory, resolved against `base_dir`: its YAML files are part of the
    /// config, so the watcher reloads when one changes.
    pub include_dir: Option<PathBuf>,
    pub dashboards: Vec<Component>,
    pub insecure_allow_dump_vars: bool,
    pub insecure_allow_dump_sos: bool,
    pub insecure_allow_dump_action_map: bool,
    /// `defaultPolicy`: what a caller may see (diagnostics, the log list) when no matching
    /// ACL's policy says otherwise. Kept here rather than in `Auth` so that code building an
    /// `Auth` by hand is not affected by it.
    pub default_policy: Policy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub title: String,
    pub url: String,
}

/// Every bound of SPEC §10 plus the execution defaults of §9, each configurable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// `logHistoryLimit` (200): entries kept in the history ring.
    pub log_history_limit: usize,
    /// `logHistoryPageSize` (10): entries per GetLogs page.
    pub log_history_page_size: usize,
    /// `maxOutputBytes` (65536): bytes kept per stream per execution.
    pub max_output_bytes: usize,
    /// `defaultTimeout` (30 s): an action's timeout when it sets none.
    pub default_timeout: Duration,
    /// `killGracePeriod` (3 s): SIGTERM to SIGKILL.
    pub kill_grace_period: Duration,
    /// `maxConcurrentExecutions` (16): running executions across all actions.
    pub max_concurrent_executions: usize,
    /// `maxRequestBodyBytes` (65536): request body after decompression.
    pub max_request_body_bytes: usize,
    /// `maxConnections` (256): concurrent HTTP connections.
    pub max_connections: usize,
    /// `headerReadTimeout` (10 s): slow-header clients are dropped.
    pub header_read_timeout: Duration,
    /// `maxEventSubscribers` (64).
    pub max_event_subscribers: usize,
    /// `eventQueueLength` (256): events queued per subscriber.
    pub event_queue_length: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            log_history_limit: 200,
            log_history_page_size: 10,
            max_output_bytes: 64 * 1024,
            default_timeout: Duration::from_secs(30),
            kill_grace_period: Duration::from_secs(3),
            max_concurrent_executions: 16,
            max_request_body_bytes: 64 * 1024,
            max_connections: 256,
            header_read_timeout: Duration::from_secs(10),
            max_event_subscribers: 64,
            event_queue_length: 256,
        }
    }
}

/// What an action runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandSpec {
    /// `shell:` run as `sh -c <text>`.
    Shell(String),
    /// `exec:` an argv list, no shell. Preferred when both are given.
    Exec(Vec<String>),
}

/// An action's command compiled for substitution (see `template`): placeholders located,
/// their quoting contexts known, unsafe ones refused at load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandTemplate {
    Shell(Template),
    Exec(Vec<Template>),
}

impl CommandTemplate {
    pub fn placeholders(&self) -> Vec<&Placeholder> {
        match self {
            CommandTemplate::Shell(t) => t.placeholders().map(|(p, _)| p).collect(),
            CommandTemplate::Exec(v) => v
                .iter()
                .flat_map(|t| t.placeholders().map(|(p, _)| p))
                .collect(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    /// The configured or derived id (`[A-Za-z0-9_-]{1,64}`), unique across actions.
    pub id: String,
    pub title: String,
    pub icon: String,
    /// The command as written.
    pub command: CommandSpec,
    /// The command compiled for substitution.
    pub template: CommandTemplate,
    pub timeout: Duration,
    pub arguments: Vec<Argument>,
    /// `entity:` type name; such an action yields one binding per entity instance.
    pub entity: Option<String>,
    pub hidden: bool,
    /// `maxConcurrent` (default 1): a press while this many run is recorded as blocked.
    pub max_concurrent: usize,
    pub max_rate: Vec<RateRule>,
    pub acls: Vec<String>,
    /// `popupOnStart` (or its old name `onclick`); default `defaultPopupOnStart`.
    pub popup_on_start: String,
    /// `workingDirectory`, resolved against the config's directory; `None` = `base_dir`.
    pub working_directory: Option<PathBuf>,
    pub exec_on_startup: bool,
    pub exec_on_cron: Vec<String>,
    pub exec_on_file_created_in_dir: Vec<String>,
    pub exec_on_file_changed_in_dir: Vec<String>,
}

impl Action {
    /// Stands in for an action no longer in the config, behind the history records of it
    /// that were restored after a restart: it can be read, never run.
    pub fn removed(id: &str, title: &str) -> Action {
        Action {
            id: id.to_string(),
            title: title.to_string(),
            icon: String::new(),
            command: CommandSpec::Exec(Vec::new()),
            template: CommandTemplate::Exec(Vec::new()),
            timeout: Duration::from_secs(1),
            arguments: Vec::new(),
            entity: None,
            hidden: true,
            max_concurrent: 1,
            max_rate: Vec::new(),
            acls: Vec::new(),
            popup_on_start: String::new(),
            working_directory: None,
            exec_on_startup: false,
            exec_on_cron: Vec::new(),
            exec_on_file_created_in_dir: Vec::new(),
            exec_on_file_changed_in_dir: Vec::new(),
        }
    }
}

/// `maxRate` entry: at most `limit` runs started within `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateRule {
    pub limit: u32,
    pub window: Duration,
}

/// A declared argument; its type's rule is parsed (and a `regex:` compiled) at load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Argument {
    pub name: String,
    pub title: String,
    /// The declared type text (`ascii`, `int`, `regex:…`, …); "" when absent.
    pub kind: String,
    /// The type's rule, parsed (and for `regex:` compiled) at load.
    pub rule: ArgType,
    /// `default`, with YAML scalars (numbers, booleans) rendered as text.
    pub default: Option<String>,
    pub choices: Vec<Choice>,
    pub description: String,
    /// `suggestions` in file order.
    pub suggestions: Vec<(String, String)>,
    pub entity: Option<String>,
    pub reject_null: bool,
    /// Declared by actiond for a file trigger (`filepath`, …), not by the config: its value
    /// comes from the trigger alone, so it is not offered to people and a start by hand may
    /// not set it (a caller must not choose which file an upload handler reads).
    pub from_trigger: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub value: String,
    pub title: String,
}

/// Identity settings (SPEC §6); `auth` identifies callers, `permissions` decides with them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Auth {
    pub require_guests_to_login: bool,
    pub default_permissions: Permissions,
    pub local_users_enabled: bool,
    pub local_users: Vec<LocalUser>,
    pub http_header_username: String,
    pub http_header_usergroup: String,
    /// `trustedProxies`, as written (IPs or CIDRs); default loopback only.
    pub trusted_proxies: Vec<String>,
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

/// `defaultPolicy {showDiagnostics, showLogList}`; both default to true, as in OliveTin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub show_diagnostics: bool,
    pub show_log_list: bool,
}

impl Policy {
    pub const DEFAULT: Policy = Policy {
        show_diagnostics: true,
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

/// `entities: [{file, name}]`; the file path resolved against the config's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntitySource {
    pub file: PathBuf,
    pub name: String,
}

/// A dashboard component (SPEC §7), recursive; top-level components are dashboards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Component {
    pub title: String,
    /// `fieldset`, `directory`, `link`, `display`, `stdout-most-recent-execution`, or "" (link).
    pub kind: String,
    pub entity: Option<String>,
    pub icon: String,
    pub css_class: String,
    pub contents: Vec<Component>,
}
