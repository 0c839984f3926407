//! The service-wide settings at the top of the config: where to listen, how much to log, the
//! state directory, metrics, navigation links, and the bounds (`Limits`).
//!
//! Every bound is one row of the settings table below: its field, key, range, default and
//! unit. The row makes the `Limits` field, puts the key into the top-level key table, gives
//! the default, and checks the range with the key's path; adding a bound is adding a row.

use std::path::PathBuf;
use std::time::Duration;

use super::address::check_host_port;
use super::checker::{Checker, Field, Fields, path_or};
use super::schema::{LINK, PROMETHEUS, Rule};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

/// One of `additionalNavigationLinks`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub title: String,
    pub url: String,
}

/// One bound: its key, the whole numbers it may take, its default and the unit named in
/// the error (with its leading space, or empty).
#[derive(Debug, Clone, Copy)]
pub(super) struct Setting {
    pub key: &'static str,
    pub min: i64,
    pub max: i64,
    pub default: i64,
    pub unit: &'static str,
}

/// How a bound's whole number becomes the field's type.
trait FromSetting {
    fn from_setting(value: i64) -> Self;
}

impl FromSetting for usize {
    fn from_setting(value: i64) -> usize {
        usize::try_from(value).unwrap_or(0)
    }
}

/// Bounds of time are written in whole seconds.
impl FromSetting for Duration {
    fn from_setting(value: i64) -> Duration {
        Duration::from_secs(value.unsigned_abs())
    }
}

/// Makes `Limits`, the table of its rows and its keys from one list of rows
/// `field: type = (key, min, max, default, unit)`.
macro_rules! settings_table {
    ($(
        $(#[doc = $doc:literal])+
        $field:ident: $ty:ty = ($key:literal, $min:expr, $max:expr, $default:expr, $unit:literal),
    )+) => {
        /// Every bound on what actiond holds or accepts, and the execution defaults; each is
        /// configurable within its range (see the settings table for keys and defaults).
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct Limits {
            $($(#[doc = $doc])+ pub $field: $ty,)+
        }

        /// The settings table: every bound as a row, in the order the fields are declared.
        pub(super) const LIMITS: [Setting; [$($key),+].len()] = [$(Setting {
            key: $key,
            min: $min,
            max: $max,
            default: $default,
            unit: $unit,
        }),+];

        /// The keys of the settings table, for the top-level key table.
        pub(super) const LIMIT_KEYS: &[(&str, Rule)] = &[$(($key, Rule::Read)),+];

        impl Limits {
            /// The limits with the value `value` gives each row.
            fn from_rows(mut value: impl FnMut(&Setting) -> i64) -> Limits {
                let [$($field),+] = LIMITS.map(|row| value(&row));
                Limits {
                    $($field: FromSetting::from_setting($field),)+
                }
            }
        }
    };
}

const MIB: i64 = 1024 * 1024;

settings_table! {
    /// Entries kept in the history ring.
    log_history_limit: usize = ("logHistoryLimit", 1, 10_000, 200, " entries"),
    /// Entries per GetLogs page.
    log_history_page_size: usize = ("logHistoryPageSize", 1, 1000, 10, " entries"),
    /// Bytes kept per stream per execution.
    max_output_bytes: usize = ("maxOutputBytes", 1024, 16 * MIB, 65536, " bytes"),
    /// An action's timeout when it sets none.
    default_timeout: Duration = ("defaultTimeout", 1, 86_400, 30, " seconds"),
    /// SIGTERM to SIGKILL.
    kill_grace_period: Duration = ("killGracePeriod", 0, 300, 3, " seconds"),
    /// Running executions across all actions.
    max_concurrent_executions: usize = ("maxConcurrentExecutions", 1, 1024, 16, ""),
    /// A request body after decompression.
    max_request_body_bytes: usize = ("maxRequestBodyBytes", 1024, 16 * MIB, 65536, " bytes"),
    /// Concurrent HTTP connections.
    max_connections: usize = ("maxConnections", 1, 65_535, 256, ""),
    /// A request (head and body) must arrive within this of its first byte, an idle
    /// keep-alive connection is closed after it, and a client that takes none of its answer
    /// for this long is dropped. `headerReadTimeout` is its older name.
    client_timeout: Duration = ("clientTimeout", 1, 300, 10, " seconds"),
    /// Connections one address may hold (an IPv6 client: its /64); `trustedProxies` are
    /// exempt.
    max_connections_per_address: usize = ("maxConnectionsPerAddress", 1, 65_535, 32, ""),
    /// Event stream subscribers at once.
    max_event_subscribers: usize = ("maxEventSubscribers", 0, 4096, 64, ""),
    /// Event stream subscribers one address may hold (an IPv6 client: its /64);
    /// `trustedProxies` are exempt.
    max_event_streams_per_address: usize = ("maxEventStreamsPerAddress", 1, 4096, 4, ""),
    /// Events queued per subscriber.
    event_queue_length: usize = ("eventQueueLength", 16, 65_536, 256, " events"),
    /// Records waiting to be written to the history file before starts are refused.
    history_queue_length: usize = ("historyQueueLength", 1, 65_536, 256, " records"),
    /// Sessions one local user holds at once; a new login ends that user's oldest.
    max_sessions_per_user: usize = ("maxSessionsPerUser", 1, 1000, 10, " sessions"),
    /// Failed logins for one username from one address within a minute.
    login_failures_per_user: usize = ("loginFailuresPerUser", 1, 1000, 5, " failures"),
    /// Failed logins from one address within a minute, whatever the username.
    login_failures_per_address: usize = ("loginFailuresPerAddress", 1, 10_000, 20, " failures"),
    /// Failed logins for one username within a minute, from every address together;
    /// addresses where its user logged in before are exempt.
    login_failures_per_username: usize = ("loginFailuresPerUsername", 1, 10_000, 20, " failures"),
    /// The size of one entity file; a larger one is refused and its previous instances stay.
    max_entity_file_bytes: usize = ("maxEntityFileBytes", 1024, 64 * MIB, MIB, " bytes"),
    /// Instances in one entity file; a file with more is refused and its previous ones stay.
    max_entity_instances: usize = ("maxEntityInstances", 1, 100_000, 1000, " instances"),
}

impl Default for Limits {
    fn default() -> Self {
        Limits::from_rows(|row| row.default)
    }
}

/// Every bound of the top-level mapping: the row's default when absent, an error at the
/// key's path when out of range or not a whole number.
pub(super) fn limits(c: &mut Checker<'_>, top: &Fields<'_>) -> Limits {
    Limits::from_rows(|row| bounded(c, top.get(row.key), row))
}

/// A whole number in the row's range, or its default when absent; out of range is an error.
fn bounded(c: &mut Checker<'_>, field: Field<'_, '_>, row: &Setting) -> i64 {
    let Some((_, path)) = field else {
        return row.default;
    };
    let Setting { min, max, unit, .. } = *row;
    match c.integer(field) {
        Some(v) if (min..=max).contains(&v) => v,
        Some(v) => {
            c.error(
                path,
                format!("must be between {min} and {max}{unit}, found {v}"),
            );
            row.default
        }
        None => row.default,
    }
}

/// `listenAddressSingleHTTPFrontend`: `host:port`, default `0.0.0.0:1337`.
pub(super) fn listen_address(c: &mut Checker<'_>, field: Field<'_, '_>) -> String {
    let default = "0.0.0.0:1337";
    let Some(address) = c.text(field) else {
        return default.to_string();
    };
    let address = address.trim().to_string();
    if let Err(why) = check_host_port(&address) {
        c.error(
            path_or(field, ""),
            format!("{why}: expected host:port such as 0.0.0.0:1337 or [::]:1337"),
        );
        return default.to_string();
    }
    address
}

pub(super) fn log_level(c: &mut Checker<'_>, field: Field<'_, '_>) -> LogLevel {
    let Some(level) = c.text(field) else {
        return LogLevel::Info;
    };
    match level.trim().to_ascii_lowercase().as_str() {
        "error" => LogLevel::Error,
        "warn" | "warning" => LogLevel::Warn,
        "info" => LogLevel::Info,
        "debug" => LogLevel::Debug,
        "trace" => LogLevel::Trace,
        _ => {
            c.error(
                path_or(field, ""),
                format!("unknown log level {level:?}: use error, warn, info, debug or trace"),
            );
            LogLevel::Info
        }
    }
}

/// `stateDirectory` as written (resolved against the config's directory; empty = none),
/// else `$STATE_DIRECTORY`, which systemd sets for `StateDirectory=` (several directories
/// are separated by `:`; the first is ours).
pub(super) fn state_directory(c: &mut Checker<'_>, top: &Fields<'_>) -> Option<PathBuf> {
    if top.written("stateDirectory") {
        let dir = c.text(top.get("stateDirectory")).unwrap_or_default();
        return (!dir.trim().is_empty()).then(|| c.resolve(dir.trim()));
    }
    let from_systemd = (c.env)("STATE_DIRECTORY")?;
    let first = from_systemd
        .split(':')
        .next()
        .unwrap_or_default()
        .trim()
        .to_string();
    (!first.is_empty()).then(|| PathBuf::from(first))
}

/// Whether a Connect call must carry `Connect-Protocol-Version: 1` (`connectProtocolHeader`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolHeader {
    /// The API document's rule, the default: a call without it is refused, naming it.
    Required,
    /// A call without it is served (OliveTin's clients and plain `curl` never send it); one
    /// that sends another value is still refused.
    Optional,
}

/// `connectProtocolHeader`: `required` (the default) or `optional`.
pub(super) fn protocol_header(c: &mut Checker<'_>, field: Field<'_, '_>) -> ProtocolHeader {
    let Some(text) = c.text(field) else {
        return ProtocolHeader::Required;
    };
    match text.trim().to_ascii_lowercase().as_str() {
        "required" => ProtocolHeader::Required,
        "optional" => ProtocolHeader::Optional,
        _ => {
            c.error(
                path_or(field, ""),
                format!("{text:?} is not `required` nor `optional`"),
            );
            ProtocolHeader::Required
        }
    }
}

/// When the history file is fsynced (`historySync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistorySync {
    /// Before anything reports the record (the default): a power cut loses nothing that a
    /// client was told.
    Always,
    /// At most once per interval: records are reported once written (a crash of the
    /// service alone loses nothing), and a power cut may lose those of the last interval.
    Every(Duration),
}

/// The longest `historySync` interval: a power cut may lose this much acknowledged work.
const MAX_HISTORY_SYNC: Duration = Duration::from_secs(60);

/// `historySync`: `always` (the default), or an interval such as `2s` or `500ms` (Go's
/// duration syntax, as `maxRate` windows), up to a minute.
pub(super) fn history_sync(c: &mut Checker<'_>, field: Field<'_, '_>) -> HistorySync {
    let Some(text) = c.text(field) else {
        return HistorySync::Always;
    };
    let text = text.trim();
    if text.eq_ignore_ascii_case("always") {
        return HistorySync::Always;
    }
    match crate::duration::parse(text) {
        Ok(d) if !d.is_zero() && d <= MAX_HISTORY_SYNC => HistorySync::Every(d),
        Ok(_) => {
            c.error(
                path_or(field, ""),
                format!(
                    "{text:?} is not between 1ms and 60s: use `always` or an interval such as 2s"
                ),
            );
            HistorySync::Always
        }
        Err(why) => {
            c.error(
                path_or(field, ""),
                format!("{text:?} is not `always` nor an interval such as 2s or 500ms: {why}"),
            );
            HistorySync::Always
        }
    }
}

/// `prometheus: {enabled}`: whether `/metrics` answers.
pub(super) fn prometheus(c: &mut Checker<'_>, field: Field<'_, '_>) -> bool {
    match c.mapping(field) {
        Some(entries) => {
            let f = c.fields(entries, "prometheus", PROMETHEUS);
            c.flag(f.get("enabled"), false)
        }
        None => false,
    }
}

/// `additionalNavigationLinks`: each needs a url; the title defaults to it.
pub(super) fn links(c: &mut Checker<'_>, field: Field<'_, '_>) -> Vec<Link> {
    let mut links = Vec::new();
    for (entries, path) in c.mappings(field) {
        let f = c.fields(entries, &path, LINK);
        let Some(url) = c.text(f.get("url")).filter(|u| !u.trim().is_empty()) else {
            c.error(&path, "a navigation link needs a url");
            continue;
        };
        let title = c
            .text(f.get("title"))
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| url.clone());
        links.push(Link { title, url });
    }
    links
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::fixtures::*;
    use crate::config::{Popup, Source, parse};

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
maxConnectionsPerAddress: 3
maxEventSubscribers: 0
maxEventStreamsPerAddress: 2
eventQueueLength: 16
historyQueueLength: 32
historySync: 2s
maxSessionsPerUser: 3
loginFailuresPerUser: 4
loginFailuresPerAddress: 12
loginFailuresPerUsername: 30
maxEntityFileBytes: 4096
maxEntityInstances: 50
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
        assert_eq!(c.default_popup_on_start, Popup::ExecutionDialog);
        assert_eq!(c.state_directory, Some(base().join("state")));
        assert_eq!(c.history_sync, HistorySync::Every(Duration::from_secs(2)));
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
                client_timeout: Duration::from_secs(5),
                max_connections_per_address: 3,
                max_event_subscribers: 0,
                max_event_streams_per_address: 2,
                event_queue_length: 16,
                history_queue_length: 32,
                max_sessions_per_user: 3,
                login_failures_per_user: 4,
                login_failures_per_address: 12,
                login_failures_per_username: 30,
                max_entity_file_bytes: 4096,
                max_entity_instances: 50,
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
            ("clientTimeout: 301", "between 1 and 300 seconds"),
            ("maxConnectionsPerAddress: 0", "between 1 and 65535"),
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
    fn history_sync_is_always_or_an_interval_up_to_a_minute() {
        let ms = Duration::from_millis;
        for (text, want) in [
            ("", HistorySync::Always),
            ("historySync: always\n", HistorySync::Always),
            ("historySync: ALWAYS\n", HistorySync::Always),
            ("historySync: 2s\n", HistorySync::Every(ms(2000))),
            ("historySync: 500ms\n", HistorySync::Every(ms(500))),
            ("historySync: 1m\n", HistorySync::Every(ms(60_000))),
        ] {
            assert_eq!(ok(text).0.history_sync, want, "{text}");
        }
        for (text, needle) in [
            ("historySync: never\n", "is not `always` nor an interval"),
            ("historySync: 0\n", "is not between 1ms and 60s"),
            ("historySync: 2m\n", "is not between 1ms and 60s"),
            ("historySync: [1]\n", "expected text"),
        ] {
            assert_error(text, "historySync", needle);
        }
    }

    #[test]
    fn every_row_of_the_settings_table_is_read_within_its_range() {
        for row in LIMITS {
            let Setting {
                key,
                min,
                max,
                default,
                unit,
            } = row;
            assert!((min..=max).contains(&default), "{key}: default {default}");
            for v in [min, max] {
                ok(&format!("{key}: {v}\n"));
            }
            for v in [min - 1, max + 1] {
                assert_error(
                    &format!("{key}: {v}\n"),
                    key,
                    &format!("must be between {min} and {max}{unit}, found {v}"),
                );
            }
        }
        assert_eq!(LIMIT_KEYS.len(), LIMITS.len());
    }

    #[test]
    fn the_defaults_are_the_documented_ones() {
        assert_eq!(
            Limits::default(),
            Limits {
                log_history_limit: 200,
                log_history_page_size: 10,
                max_output_bytes: 64 * 1024,
                default_timeout: Duration::from_secs(30),
                kill_grace_period: Duration::from_secs(3),
                max_concurrent_executions: 16,
                max_request_body_bytes: 64 * 1024,
                max_connections: 256,
                client_timeout: Duration::from_secs(10),
                max_connections_per_address: 32,
                max_event_subscribers: 64,
                max_event_streams_per_address: 4,
                event_queue_length: 256,
                history_queue_length: 256,
                max_sessions_per_user: 10,
                login_failures_per_user: 5,
                login_failures_per_address: 20,
                login_failures_per_username: 20,
                max_entity_file_bytes: 1024 * 1024,
                max_entity_instances: 1000,
            }
        );
    }
}
