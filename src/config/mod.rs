//! The validated configuration: the only shape of config the rest of actiond ever sees.
//!
//! This module owns the types; `source` finds and reads the file (search order, includes,
//! the embedded default), `tree` turns YAML text into an ordered node tree, and `validate`
//! walks that tree once, collecting every error with its YAML path and warning about
//! unknown keys by name. Nothing here spawns processes, opens sockets or writes files, and a
//! `Config` is immutable once built: a reload builds a new one and the engine swaps it whole.

mod address;
mod source;
pub(crate) mod tree;
mod validate;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::arguments::Argument;
use crate::template::{Placeholder, Template};

pub use address::Cidr;
pub use source::{LoadError, Loaded, load, locate};
pub use validate::parse;

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

/// Where the config text came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    File(PathBuf),
    Embedded,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::File(path) => write!(f, "{}", path.display()),
            Source::Embedded => f.write_str("embedded default config"),
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
    pub default_popup_on_start: Popup,
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
    pub popup_on_start: Popup,
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
            popup_on_start: Popup::Nothing,
            working_directory: None,
            exec_on_startup: false,
            exec_on_cron: Vec::new(),
            exec_on_file_created_in_dir: Vec::new(),
            exec_on_file_changed_in_dir: Vec::new(),
        }
    }
}

/// What the web page shows when an action starts (`popupOnStart`): OliveTin's values plus
/// its default, `nothing`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Popup {
    Nothing,
    ExecutionDialog,
    ExecutionDialogOutputHtml,
    ExecutionDialogStdoutOnly,
    ExecutionButton,
    History,
}

impl Popup {
    /// Every value, in the order a warning lists them.
    pub const ALL: [Popup; 6] = [
        Popup::Nothing,
        Popup::ExecutionDialog,
        Popup::ExecutionDialogOutputHtml,
        Popup::ExecutionDialogStdoutOnly,
        Popup::ExecutionButton,
        Popup::History,
    ];

    /// The value as a config writes it and the page receives it.
    pub fn as_str(self) -> &'static str {
        match self {
            Popup::Nothing => "nothing",
            Popup::ExecutionDialog => "execution-dialog",
            Popup::ExecutionDialogOutputHtml => "execution-dialog-output-html",
            Popup::ExecutionDialogStdoutOnly => "execution-dialog-stdout-only",
            Popup::ExecutionButton => "execution-button",
            Popup::History => "history",
        }
    }

    /// The value written exactly so (lower case, as OliveTin compares it), if it is one.
    pub fn parse(text: &str) -> Option<Popup> {
        Popup::ALL.into_iter().find(|p| p.as_str() == text)
    }
}

/// `maxRate` entry: at most `limit` runs started within `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateRule {
    pub limit: u32,
    pub window: Duration,
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
    pub kind: ComponentKind,
    pub entity: Option<String>,
    pub icon: String,
    pub css_class: String,
    pub contents: Vec<Component>,
}

/// A dashboard component's type as clients see it. A component written without a type (or
/// with one the web page does not know) is resolved at load the way OliveTin shows it: a
/// directory when it has contents, else a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComponentKind {
    /// A link to the action with the component's title.
    Link,
    Fieldset,
    Directory,
    /// HTML written in the config, shown as it is.
    Display,
    StdoutMostRecentExecution,
}

impl ComponentKind {
    const ALL: [ComponentKind; 5] = [
        ComponentKind::Link,
        ComponentKind::Fieldset,
        ComponentKind::Directory,
        ComponentKind::Display,
        ComponentKind::StdoutMostRecentExecution,
    ];

    /// The type as a config writes it and the API sends it.
    pub fn as_str(self) -> &'static str {
        match self {
            ComponentKind::Link => "link",
            ComponentKind::Fieldset => "fieldset",
            ComponentKind::Directory => "directory",
            ComponentKind::Display => "display",
            ComponentKind::StdoutMostRecentExecution => "stdout-most-recent-execution",
        }
    }

    /// The type written exactly so, if it is one.
    pub fn parse(text: &str) -> Option<ComponentKind> {
        ComponentKind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

impl Component {
    /// Whether this component is a link to an action (by title).
    pub fn is_link(&self) -> bool {
        self.kind == ComponentKind::Link
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_display() {
        assert_eq!(Source::Embedded.to_string(), "embedded default config");
        assert_eq!(
            Source::File(PathBuf::from("/etc/actiond/config.yaml")).to_string(),
            "/etc/actiond/config.yaml"
        );
    }

    #[test]
    fn popup_values_read_back_as_written() {
        for popup in Popup::ALL {
            assert_eq!(Popup::parse(popup.as_str()), Some(popup));
        }
        for other in ["", "Nothing", "execution-dialog ", "dialog"] {
            assert_eq!(Popup::parse(other), None, "{other:?}");
        }
    }
}
