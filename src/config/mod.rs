//! The validated configuration: the only shape of config the rest of actiond ever sees.
//!
//! This file holds the whole `Config` and walks the document once: the top-level mapping,
//! then each part in a fixed order, collecting every error with its YAML path and warning
//! about unknown keys by name. Each part owns its types and how they are read:
//!
//! - `settings`: listen address, log level, state directory, metrics, links, and the bounds
//!   (`Limits`), one row of the settings table each;
//! - `identity`: users, tokens, trusted proxies, default permissions and policy, ACLs;
//! - `origins`: `allowedHosts` and `allowedOrigins`;
//! - `actions` (with `command`, `arguments` and `ids`): actions, their commands compiled for
//!   substitution, their argument declarations, their ids;
//! - `dashboards`, `entities`, `includes`: the dashboard tree, entity files, `include:`;
//! - `layers`: `board:` and `overlay:`, the config in layers, and which file each action is
//!   from;
//! - `schema`: the key tables; `checker`: reading a mapping and typed values;
//! - `address`: `host:port` and `Cidr`; `tree`: YAML to an ordered tree with `${{ VAR }}`;
//! - `source`: finding and reading the file, its board, overlay and includes, and the
//!   embedded default.
//!
//! Only `source` reads files; the rest is pure, with the other files and environment
//! variables reached through closures, so tests drive every case. Nothing here spawns
//! processes, opens sockets or writes files, and a `Config` is immutable once built: a reload
//! builds a new one and the engine swaps it whole.

mod actions;
mod address;
mod arguments;
mod checker;
mod command;
mod dashboards;
mod entities;
mod icons;
mod identity;
mod ids;
mod includes;
mod layers;
mod mqtt;
mod origins;
mod problem;
mod run_as;
mod schema;
mod settings;
mod source;
pub(crate) mod tree;

#[cfg(test)]
mod fixtures;

use std::fmt;
use std::path::{Path, PathBuf};

pub use actions::{
    Action, ButtonClass, Disabled, MAX_TIMEOUT_SECS, MIN_TIMEOUT_SECS, PlainGet, Popup, RateRule,
};
pub use address::{BadHostPort, Cidr, Network, check_host_port};
pub use checker::EnvLookup;
pub use command::{CommandSpec, CommandTemplate};
pub use dashboards::{Component, ComponentKind};
pub use entities::EntitySource;
pub use icons::{home_assistant_icon, is_online_icon};
pub use identity::{AccessControlList, ApiToken, Auth, LocalUser, Permissions, Policy, Written};
pub use includes::{IncludeReader, Unread};
pub use layers::{ConfigFile, FileReader, Files, Role};
pub use mqtt::Mqtt;
pub use problem::Problem;
pub use run_as::{RunAs, describe as describe_run_as};
pub use settings::{HistorySync, Limits, Link, LogLevel, ProtocolHeader};
pub use source::{
    LoadError, Loaded, MAX_CONFIG_BYTES, MAX_CONFIG_TOTAL_BYTES, MAX_INCLUDE_FILES,
    config_dir_files, load, locate,
};

use actions::{ActionContext, Draft, Inherited};
use checker::{Checker, Field, Fields, path_or};
use schema::Schema;
use tree::Node;

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
    /// `historySync`: when the history file is fsynced.
    pub history_sync: HistorySync,
    /// `connectProtocolHeader`: whether Connect calls must carry Connect-Protocol-Version.
    pub connect_protocol_header: ProtocolHeader,
    pub prometheus_enabled: bool,
    pub actions: Vec<Action>,
    pub auth: Auth,
    pub entities: Vec<EntitySource>,
    /// The `include:` directory, resolved against `base_dir`: its YAML files are part of the
    /// config, so the watcher reloads when one changes.
    pub include_dir: Option<PathBuf>,
    /// The `board:` file, resolved against `base_dir`: read first, and watched like the config.
    pub board_file: Option<PathBuf>,
    /// The `overlay:` directory, resolved against `base_dir`: its YAML files are read last,
    /// and watched like `include:`'s.
    pub overlay_dir: Option<PathBuf>,
    /// Every file the config was read from: the board, the file itself, its included files,
    /// its overlay files, in that order.
    pub files: Vec<ConfigFile>,
    /// The digest (`files::Digest`) of the bytes this config was made from, taken by the
    /// loader as it read them (0 for a text parsed alone): what the watcher compares the
    /// files with, so an edit made after the load, however soon, is a change.
    pub read: u64,
    /// For each of `actions`, the index in `files` of the file it is written in.
    pub action_files: Vec<usize>,
    pub dashboards: Vec<Component>,
    pub insecure_allow_dump_vars: bool,
    pub insecure_allow_dump_sos: bool,
    pub insecure_allow_dump_action_map: bool,
    /// `defaultPolicy`: what a caller may see (diagnostics, the log list) when no matching
    /// ACL's policy says otherwise. Kept here rather than in `Auth` so that code building an
    /// `Auth` by hand is not affected by it.
    pub default_policy: Policy,
    /// `mqtt:`: Home Assistant discovery and presses through a broker; `None` when absent.
    pub mqtt: Option<Mqtt>,
    /// `allowedHosts` and `allowedOrigins`: what a request may come through beyond the
    /// board's own names and origin.
    pub allowed: crate::origin::Allowed,
    /// `runActionsAs` as written, else `$ACTIOND_RUN_ACTIONS_AS`: the name of the user
    /// actions run as; `None` for actiond's own.
    pub run_as: Option<String>,
    /// That user resolved by `load` (ids, groups, home), when it is not actiond's own;
    /// `None` also where the config was parsed without the system (tests, `parse`).
    pub actions_user: Option<std::sync::Arc<RunAs>>,
}

/// Where a user learns what actiond does with each OliveTin key: said after the warnings of
/// `--check-config` and of the log.
pub const MIGRATION_POINTER: &str =
    "see docs/migration-from-olivetin.md for every OliveTin key and what actiond does with it";

impl Config {
    /// The actions an error in them disabled, in config order: they are named in the log and
    /// on the page, and never run.
    pub fn disabled_actions(&self) -> impl Iterator<Item = (&Action, &Disabled)> {
        self.actions
            .iter()
            .filter_map(|a| a.disabled.as_ref().map(|d| (a, d)))
    }

    /// Every error of the disabled actions, in config order (what `--check-config` lists for
    /// a config that loads).
    pub fn action_errors(&self) -> Vec<Problem> {
        self.disabled_actions()
            .flat_map(|(_, d)| d.errors.iter().cloned())
            .collect()
    }

    /// The file `actions[index]` is written in.
    pub fn file_of(&self, index: usize) -> &ConfigFile {
        &self.files[self.action_files[index]]
    }

    /// Each file with the ids of the actions written in it, in the order of `files`; files
    /// without an action are left out.
    pub fn actions_by_file(&self) -> Vec<(&ConfigFile, Vec<&str>)> {
        let mut out: Vec<(&ConfigFile, Vec<&str>)> = Vec::new();
        for (index, file) in self.files.iter().enumerate() {
            let ids: Vec<&str> = self
                .actions
                .iter()
                .zip(&self.action_files)
                .filter(|(_, f)| **f == index)
                .map(|(a, _)| a.id.as_str())
                .collect();
            if !ids.is_empty() {
                out.push((file, ids));
            }
        }
        out
    }
}

/// What validation gives: the config and its warnings, or the errors and the warnings. A
/// config with errors confined to actions is `Ok`: those actions are disabled (see
/// [`Config::disabled_actions`]). `Err` holds every error, those confined to actions too,
/// when at least one refuses the file.
pub type Parsed = Result<(Config, Vec<Problem>), (Vec<Problem>, Vec<Problem>)>;

/// Validates a config text with no access to other files: an `include:`, `board:` or
/// `overlay:` key is an error here.
///
/// `Ok` holds the config and the warnings; `Err` holds the errors and the warnings. Use
/// [`parse_with_files`] (as `source::load` does) when the other files should be read.
pub fn parse(text: &str, source: Source, base_dir: PathBuf, env: &EnvLookup<'_>) -> Parsed {
    let dir = |path: &Path| -> Result<Option<Vec<(String, String)>>, Unread> {
        Err(Unread::NoFile(path.to_path_buf()))
    };
    let file = |path: &Path| -> Result<String, Unread> { Err(Unread::NoFile(path.to_path_buf())) };
    parse_with_files(
        text,
        source,
        base_dir,
        env,
        &Files {
            dir: &dir,
            file: &file,
        },
    )
}

/// Validates a config text, reading the files it names (`board:`, `overlay:`, `include:`)
/// through `files`.
///
/// From an included file only `actions`, `dashboards` and `entities` are taken (appended after
/// the main file's, file by file); the board and overlay files are layers (see `layers`).
/// Problems in another file are reported as `<file as written>: <path>`.
pub fn parse_with_files(
    text: &str,
    source: Source,
    base_dir: PathBuf,
    env: &EnvLookup<'_>,
    files: &Files<'_>,
) -> Parsed {
    let mut c = Checker::new(&base_dir, env);
    let config = document(&mut c, text, source, base_dir.clone(), files);
    // The `${{ VAR }}` problems no action claimed concern the file (a setting, a dashboard):
    // they refuse it. They were found first, so they are listed first.
    let unclaimed = std::mem::take(&mut c.pending);
    c.problems.errors.splice(0..0, unclaimed);
    if let Some(config) = &config {
        dashboards::warn_dangling_links(
            &config.dashboards,
            &config.actions,
            &mut c.problems.warnings,
        );
    }
    match config {
        Some(config) if !c.problems.fatal() => Ok((config, c.problems.warnings)),
        _ => Err((c.problems.errors, c.problems.warnings)),
    }
}

/// The lists a config gathers from its files, in the order of `Config::files`: the list of
/// each file at the file's index.
struct Lists<'f, 'n> {
    actions: Vec<Field<'f, 'n>>,
    dashboards: Vec<Field<'f, 'n>>,
    entities: Vec<Field<'f, 'n>>,
}

impl<'f, 'n: 'f> Lists<'f, 'n> {
    fn of(files: impl IntoIterator<Item = &'f Fields<'n>>) -> Lists<'f, 'n> {
        let mut lists = Lists {
            actions: Vec::new(),
            dashboards: Vec::new(),
            entities: Vec::new(),
        };
        for f in files {
            lists.actions.push(f.get("actions"));
            lists.dashboards.push(f.get("dashboards"));
            lists.entities.push(f.get("entities"));
        }
        lists
    }
}

/// The top-level keys: the top-level table, and the key of each row of the settings table.
const TOP: Schema = Schema::new(&[schema::TOP_KEYS, settings::LIMIT_KEYS]);

/// Where a config's files are.
struct Location {
    source: Source,
    base_dir: PathBuf,
    include_dir: Option<PathBuf>,
    board_file: Option<PathBuf>,
    overlay_dir: Option<PathBuf>,
    files: Vec<ConfigFile>,
}

/// The whole document, part by part; `None` when it is not a mapping at all.
fn document(
    c: &mut Checker<'_>,
    text: &str,
    source: Source,
    base_dir: PathBuf,
    files: &Files<'_>,
) -> Option<Config> {
    let root = root(c, text)?;
    let empty = Vec::new();
    let entries = match &root {
        Node::Map(entries) => entries,
        // A file holding only comments is an empty config: every default applies.
        Node::Null => &empty,
        other => {
            c.error(
                "",
                format!(
                    "a config is a mapping of keys to values, found {}",
                    other.describe()
                ),
            );
            return None;
        }
    };
    let top = c.fields(entries, "", TOP);
    // The other files are parsed and interpolated up front, so that their lists can be
    // borrowed next to the main file's: the board first, then included files, then overlays.
    let board = layers::board(c, &top, files);
    let include = c.text(top.get("include")).filter(|d| !d.trim().is_empty());
    let included = match &include {
        Some(dir) => includes::read(c, dir, path_or(top.get("include"), "include"), files.dir),
        None => Vec::new(),
    };
    let include_dir = include.map(|dir| c.resolve(&dir));
    let (overlay_dir, overlays) = layers::overlays(c, &top, files);
    let board_fields: Option<Fields<'_>> = board.as_ref().map(|(_, l)| layers::fields(c, l, TOP));
    let include_fields: Vec<Fields<'_>> = included
        .iter()
        .map(|(label, node)| includes::fields(c, label, node))
        .collect();
    let overlay_fields: Vec<Fields<'_>> =
        overlays.iter().map(|l| layers::fields(c, l, TOP)).collect();
    let settings = layers::settings(
        board_fields
            .iter()
            .chain(std::iter::once(&top))
            .chain(&overlay_fields),
    );
    let lists = Lists::of(
        board_fields
            .iter()
            .chain(std::iter::once(&top))
            .chain(&include_fields)
            .chain(&overlay_fields),
    );
    let mut config_files: Vec<ConfigFile> = board.iter().map(|(_, l)| l.file.clone()).collect();
    config_files.push(ConfigFile {
        name: source.to_string(),
        role: Role::Main,
    });
    config_files.extend(included.iter().map(|(label, _)| ConfigFile {
        name: c.resolve(label).display().to_string(),
        role: Role::Include,
    }));
    config_files.extend(overlays.iter().map(|l| l.file.clone()));
    // The keys deciding rights each settings file writes, lowest layer first, named as
    // `files` names them.
    let mut written = Vec::new();
    if let (Some((_, layer)), Some(fields)) = (&board, &board_fields) {
        written.extend(identity::writes(&layer.file.name, fields));
    }
    written.extend(identity::writes(&source.to_string(), &top));
    for (layer, fields) in overlays.iter().zip(&overlay_fields) {
        written.extend(identity::writes(&layer.file.name, fields));
    }
    let location = Location {
        source,
        base_dir,
        include_dir,
        board_file: board.as_ref().map(|(path, _)| path.clone()),
        overlay_dir,
        files: config_files,
    };
    let mut config = assemble(c, &settings, lists, location);
    config.auth.written = written;
    Some(config)
}

/// The text parsed as YAML, with `${{ VAR }}` filled in.
fn root(c: &mut Checker<'_>, text: &str) -> Option<Node> {
    let mut root = match tree::parse_yaml(text) {
        Ok(root) => root,
        Err(problem) => {
            c.problems.errors.push(problem);
            return None;
        }
    };
    c.problems.warnings.extend(tree::tab_warning(text, ""));
    tree::interpolate_env(&mut root, "", c.env, &mut c.pending);
    Some(root)
}

/// Every part of the config, read in a fixed order (the order its problems are listed in).
fn assemble(
    c: &mut Checker<'_>,
    top: &Fields<'_>,
    lists: Lists<'_, '_>,
    location: Location,
) -> Config {
    let listen_address = settings::listen_address(c, top.get("listenAddressSingleHTTPFrontend"));
    let log_level = settings::log_level(c, top.get("logLevel"));
    let limits = settings::limits(c, top);
    let state_directory = settings::state_directory(c, top);
    let history_sync = settings::history_sync(c, top.get("historySync"));
    let connect_protocol_header = settings::protocol_header(c, top.get("connectProtocolHeader"));
    let prometheus_enabled = settings::prometheus(c, top.get("prometheus"));
    let default_icon =
        icons::expand_icon(&c.text_or(top.get("defaultIconForActions"), "&#x1F600;"));
    let default_popup = actions::popup(c, top.get("defaultPopupOnStart"), Popup::Nothing);
    let additional_links = settings::links(c, top.get("additionalNavigationLinks"));
    let auth = identity::auth(c, top);
    let default_policy = identity::default_policy(c, top.get("defaultPolicy"));
    let ctx = ActionContext {
        timeout: limits.default_timeout,
        icon: default_icon.clone(),
        popup: default_popup,
        acl_names: auth
            .access_control_lists
            .iter()
            .map(|acl| acl.name.as_str())
            .collect(),
    };
    let mut drafts: Vec<Draft> = Vec::new();
    // The file of each draft, as an index into `location.files`.
    let mut origins: Vec<usize> = Vec::new();
    for (file, list) in lists.actions.into_iter().enumerate() {
        for (entries, path) in c.mappings(list) {
            actions::collect(c, entries, &path, &ctx, Inherited::default(), &mut drafts);
        }
        origins.resize(drafts.len(), file);
    }
    let mut entities = Vec::new();
    for list in lists.entities {
        for (entries, path) in c.mappings(list) {
            entities.extend(entities::source(c, entries, &path));
        }
    }
    let mut dashboards = Vec::new();
    for (file, list) in lists.dashboards.into_iter().enumerate() {
        for (entries, path) in c.mappings(list) {
            dashboards.push(dashboards::component(
                c,
                entries,
                &path,
                None,
                &ctx,
                &mut drafts,
            ));
        }
        origins.resize(drafts.len(), file);
    }
    let known: Vec<&str> = entities
        .iter()
        .map(|e: &EntitySource| e.name.as_str())
        .collect();
    actions::warn_unknown_entity_types(c, &drafts, &known);
    layers::override_by_id(c, &mut drafts, &mut origins);
    let actions = actions::settle_ids(c, drafts);
    Config {
        source: location.source,
        base_dir: location.base_dir,
        listen_address,
        log_level,
        page_title: c.text_or(top.get("pageTitle"), "actiond"),
        show_footer: c.flag(top.get("showFooter"), true),
        show_navigation: c.flag(top.get("showNavigation"), true),
        banner_message: c.text_or(top.get("bannerMessage"), ""),
        banner_css: c.text_or(top.get("bannerCss"), ""),
        additional_links,
        default_icon_for_actions: default_icon,
        default_popup_on_start: default_popup,
        limits,
        state_directory,
        history_sync,
        connect_protocol_header,
        prometheus_enabled,
        actions,
        auth,
        entities,
        include_dir: location.include_dir,
        board_file: location.board_file,
        overlay_dir: location.overlay_dir,
        files: location.files,
        read: 0,
        action_files: origins,
        dashboards,
        insecure_allow_dump_vars: c.flag(top.get("insecureAllowDumpVars"), false),
        insecure_allow_dump_sos: c.flag(top.get("insecureAllowDumpSos"), false),
        insecure_allow_dump_action_map: c.flag(top.get("insecureAllowDumpActionMap"), false),
        run_as: run_as::setting(c, top),
        actions_user: None,
        default_policy,
        mqtt: mqtt::mqtt(c, top.get("mqtt")),
        allowed: origins::allowed(c, top.get("allowedHosts"), top.get("allowedOrigins")),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::config::fixtures::*;

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
            assert_eq!(c.default_popup_on_start, Popup::Nothing);
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
            assert_eq!(a.trusted_proxies, Cidr::LOOPBACK);
            assert!(a.api_tokens.is_empty());
            assert!(a.access_control_lists.is_empty());
        }
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
  - {title: y, shell: z, timeout: 100000, maxRate: [{limit: 1, duration: soon}]}
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
    fn an_error_inside_an_action_disables_that_action_alone() {
        // Each case: one broken action among two good ones, the path of its error, and the
        // phrase the error holds.
        let good = "  - {id: before, title: Before, shell: echo b}\n";
        let after = "  - {id: after, title: After, shell: echo a}\n";
        let cases: &[(&str, &str, &str)] = &[
            (
                "{id: x, title: X, shell: 'echo {{ host }}'}",
                "actions[1].shell",
                "names no argument",
            ),
            (
                "{id: x, title: X, shell: 'echo {{ .CurrentEntity }}'}",
                "actions[1].shell",
                "not a placeholder",
            ),
            (
                "{id: x, title: X, shell: \"cat <<EOF\\n{{ a }}\\nEOF\", arguments: [{name: a}]}",
                "actions[1].shell",
                "here-document",
            ),
            ("{id: x, title: X}", "actions[1]", "needs shell"),
            ("{id: x, shell: ''}", "actions[1].shell", "shell is empty"),
            (
                "{id: x, title: X, exec: 'ls'}",
                "actions[1].exec",
                "exec is a list",
            ),
            (
                "{id: 'x y', title: X, shell: 'true'}",
                "actions[1].id",
                "invalid id",
            ),
            (
                "{id: before, title: X, shell: 'true'}",
                "actions[1].id",
                "duplicate id",
            ),
            (
                "{id: x, title: X, shell: 'true', timeout: 90000}",
                "actions[1].timeout",
                "at most 86400",
            ),
            (
                "{id: x, title: X, shell: 'true', maxConcurrent: many}",
                "actions[1].maxConcurrent",
                "expected a whole number",
            ),
            (
                "{id: x, title: X, shell: 'true', maxRate: [{limit: 1, duration: soon}]}",
                "actions[1].maxRate[0].duration",
                "invalid duration",
            ),
            (
                "{id: x, title: X, shell: 'true', acls: [nobody]}",
                "actions[1].acls[0]",
                "no access control list",
            ),
            (
                "{id: x, title: X, shell: 'true', execOnCron: 'at noon'}",
                "actions[1].execOnCron",
                "invalid cron line",
            ),
            (
                "{id: x, title: X, shell: 'true', hidden: maybe}",
                "actions[1].hidden",
                "expected a boolean",
            ),
            (
                "{id: x, title: X, shell: 'echo $PATH', arguments: [{name: path}]}",
                "actions[1].shell",
                "ACTIOND_ARG_PATH",
            ),
            (
                "{id: x, title: X, shell: 'true', arguments: [{name: a, type: colour}]}",
                "actions[1].arguments[0].type",
                "unknown argument type",
            ),
            (
                "{id: x, title: X, shell: 'true', arguments: [{name: a, type: 'regex:('}]}",
                "actions[1].arguments[0].type",
                "regex",
            ),
            (
                "{id: x, title: 'X ${{ NOT_SET }}', shell: 'true'}",
                "actions[1].title",
                "NOT_SET is not set",
            ),
        ];
        for (action, path, needle) in cases {
            let text = format!("actions:\n{good}  - {action}\n{after}");
            let (c, _) = loads(&text);
            let ids: Vec<(&str, bool)> = c
                .actions
                .iter()
                .map(|a| (a.id.as_str(), a.disabled.is_some()))
                .collect();
            assert_eq!(ids.len(), 3, "{text}");
            assert_eq!(ids[0], ("before", false), "{text}");
            assert!(ids[1].1, "{text}: {ids:?}");
            assert_eq!(ids[2], ("after", false), "{text}");
            assert_error(&text, path, needle);
        }
        // The same errors in an inline action of a dashboard, and in an included file's
        // action (see `source`), disable that action too.
        let (c, _) = loads(
            "dashboards:\n  - title: D\n    contents:\n      - inlineAction: {title: X, shell: 'echo {{ y }}'}\n      - inlineAction: {title: Y, shell: 'echo y'}\n",
        );
        let disabled: Vec<bool> = c.actions.iter().map(|a| a.disabled.is_some()).collect();
        assert_eq!(disabled, [true, false]);
        assert_eq!(
            c.action_errors()[0].path,
            "dashboards[0].contents[0].inlineAction.shell"
        );
        // A disabled action without a title is named by its path.
        let (c, _) = loads("actions:\n  - {shell: 'true'}\n");
        assert_eq!(c.actions[0].title, "actions[0]");
        assert_eq!(c.actions[0].id, "actions0");
        // An unknown ACL hides the action from everyone; other errors leave it shown.
        let (c, _) = loads(
            "actions:\n  - {id: a, title: A, shell: 'true', acls: [x]}\n  - {id: b, title: B, shell: 'true', timeout: 90000}\n",
        );
        let shown: Vec<bool> = c.disabled_actions().map(|(_, d)| d.shown).collect();
        assert_eq!(shown, [false, true]);
    }

    #[test]
    fn what_stays_fatal_refuses_the_whole_file() {
        let cases: &[(&str, &str)] = &[
            ("actions: [\n", "invalid YAML"),
            (
                "listenAddressSingleHTTPFrontend: nowhere\n",
                "listenAddressSingleHTTPFrontend",
            ),
            (
                "authRequireGuestsToLogin: sometimes\n",
                "authRequireGuestsToLogin",
            ),
            (
                "defaultPermissions: {exec: perhaps}\n",
                "defaultPermissions.exec",
            ),
            (
                "accessControlLists: [{matchUsernames: [x]}]\n",
                "accessControlLists[0]",
            ),
            ("trustedProxies: [10.0.0.0/33]\n", "trustedProxies[0]"),
            (
                "authApiTokens: [{name: t, sha256: abc}]\n",
                "authApiTokens[0].sha256",
            ),
            (
                "authLocalUsers: {users: [{username: a, password: '$argon2id$x'}, {username: a, password: '$argon2id$y'}]}\n",
                "authLocalUsers.users[1].username",
            ),
            ("maxConnections: 0\n", "maxConnections"),
            ("logLevel: loud\n", "logLevel"),
            ("bannerMessage: ${{ NOT_SET }}\n", "bannerMessage"),
            ("entities: [{name: n}]\n", "entities[0]"),
            (
                "dashboards: [{title: D, contents: {a: b}}]\n",
                "dashboards[0].contents",
            ),
        ];
        for (text, path) in cases {
            let errors = fatal(&format!("{ONE_ACTION}{text}"));
            assert!(
                errors
                    .iter()
                    .any(|e| e.path.starts_with(path) || e.message.contains(path)),
                "{text}: {errors:?}"
            );
        }
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
}
