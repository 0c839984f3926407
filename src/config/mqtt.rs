//! The `mqtt:` section: the broker address, credentials by file, Home Assistant's discovery
//! prefix, the board's node id, the caller MQTT presses run as, and what the board's device
//! page in Home Assistant shows (its name, area and the page's URL). Like the rest of the
//! validator it is pure: the password file is only named here (it is read at each connection
//! by the MQTT client), and the hostname that stands in for a missing `nodeId` is looked up
//! there too.
//!
//! What makes a value acceptable is decided by the rules topics and Home Assistant's ids
//! follow: a node id is `[A-Za-z0-9_-]`, a prefix has no wildcard, and a broker is plain
//! `mqtt://` (TLS is not built in; a local mosquitto bridge adds it, see
//! docs/home-assistant.md).

use std::path::PathBuf;

use super::checker::{Checker, Field};
use super::schema::Rule::{Read, Unsupported};
use super::schema::{Keys, Schema};

/// `mqtt:`: the broker actiond announces its buttons and states to (Home Assistant's MQTT
/// discovery) and takes presses from. Used by `crate::mqtt`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mqtt {
    /// `broker` as written (`mqtt://host:port`), for the log.
    pub broker: String,
    pub host: String,
    /// 1883 unless the broker URL names another.
    pub port: u16,
    pub username: Option<String>,
    /// `passwordFile`, resolved against the config's directory. The password is read from it
    /// at each connection and never kept in the config, so no report or log can show it.
    pub password_file: Option<PathBuf>,
    /// `discoveryPrefix` (default `homeassistant`, Home Assistant's own default).
    pub discovery_prefix: String,
    /// `nodeId`; `None` means the hostname, made safe for topics and Home Assistant's ids.
    pub node_id: Option<String>,
    /// `runAs`: who presses arriving over MQTT come from. ACLs and `defaultPermissions` apply
    /// to this user and group as to any caller.
    pub run_as_username: String,
    pub run_as_usergroup: String,
    /// `deviceName`: the device's name in Home Assistant. `None`: `pageTitle`, or the node id.
    pub device_name: Option<String>,
    /// `suggestedArea`: the area Home Assistant puts the device in when it first sees it.
    pub suggested_area: Option<String>,
    /// `publicUrl`: the page's address as Home Assistant's users reach it (the device page's
    /// link). `None`: made from the listen address (see `mqtt::discovery::page_url`).
    pub public_url: Option<String>,
}

const MQTT_KEYS: Keys = &[
    ("broker", Read),
    ("username", Read),
    ("passwordFile", Read),
    ("discoveryPrefix", Read),
    ("nodeId", Read),
    ("runAs", Read),
    ("deviceName", Read),
    ("suggestedArea", Read),
    ("publicUrl", Read),
    (
        "password",
        Unsupported(
            "write the password into a file readable only by actiond and name it with \
             passwordFile, so the config holds no secret",
        ),
    ),
];

const RUN_AS_KEYS: Keys = &[("username", Read), ("usergroup", Read)];
const MQTT: Schema = Schema::new(&[MQTT_KEYS]);
const RUN_AS: Schema = Schema::new(&[RUN_AS_KEYS]);

/// The port of `mqtt://` when the URL names none.
pub const DEFAULT_PORT: u16 = 1883;

/// The longest node id and discovery prefix accepted: topics stay short, and a node id is
/// part of every Home Assistant unique id.
const MAX_NODE_ID: usize = 64;
const MAX_PREFIX: usize = 128;
/// The longest device name and area: what a device page shows in one line.
const MAX_LABEL: usize = 64;
/// The longest `publicUrl`.
const MAX_URL: usize = 512;

/// `mqtt:`, or `None` when the config has none (or it is unusable, with its errors).
pub(super) fn mqtt(c: &mut Checker<'_>, field: Field<'_, '_>) -> Option<Mqtt> {
    let path = field.map(|(_, p)| p.to_string())?;
    let entries = c.mapping(field)?;
    let f = c.fields(entries, &path, MQTT);
    if f.get("broker").is_none() {
        c.error(
            &path,
            "`broker` is required (for example mqtt://broker.lan:1883)",
        );
        return None;
    }
    // A broker of the wrong type was reported by `text`.
    let broker = c.text(f.get("broker"))?.trim().to_string();
    let (host, port) = match parse_broker(&broker) {
        Ok(hp) => hp,
        Err(why) => {
            let at = f.get("broker").map_or(path.clone(), |(_, p)| p.to_string());
            c.error(&at, why.to_string());
            return None;
        }
    };
    let username = c.text(f.get("username")).filter(|u| !u.trim().is_empty());
    let password_file = c
        .text(f.get("passwordFile"))
        .filter(|p| !p.trim().is_empty())
        .map(|p| c.resolve(p.trim()));
    let discovery_prefix = c.text_or(f.get("discoveryPrefix"), "homeassistant");
    if let Err(why) = check_prefix(&discovery_prefix)
        && let Some((_, at)) = f.get("discoveryPrefix")
    {
        c.error(at, why.to_string());
    }
    let node_id = c.text(f.get("nodeId"));
    if let (Some(id), Some((_, at))) = (&node_id, f.get("nodeId"))
        && let Err(why) = check_node_id(id)
    {
        c.error(at, why.to_string());
    }
    let (run_as_username, run_as_usergroup) = match c.mapping(f.get("runAs")) {
        Some(entries) => {
            let at = f.get("runAs").map_or(String::new(), |(_, p)| p.to_string());
            let r = c.fields(entries, &at, RUN_AS);
            let user = c.text_or(r.get("username"), "mqtt");
            if user.trim().is_empty() {
                c.error(&at, "runAs.username must not be empty");
            }
            (user, c.text_or(r.get("usergroup"), "mqtt"))
        }
        None => ("mqtt".to_string(), "mqtt".to_string()),
    };
    let mut label = |key: &str| {
        let text = c.text(f.get(key))?.trim().to_string();
        let at = f.get(key).map_or(path.clone(), |(_, p)| p.to_string());
        match check_label(&text) {
            Ok(()) => Some(text),
            Err(why) => {
                c.error(&at, why.to_string());
                None
            }
        }
    };
    let device_name = label("deviceName");
    let suggested_area = label("suggestedArea");
    let public_url = c.text(f.get("publicUrl")).map(|u| u.trim().to_string());
    if let (Some(url), Some((_, at))) = (&public_url, f.get("publicUrl"))
        && let Err(why) = check_public_url(url)
    {
        c.error(at, why.to_string());
    }
    Some(Mqtt {
        broker,
        host,
        port,
        username,
        password_file,
        discovery_prefix,
        node_id,
        run_as_username,
        run_as_usergroup,
        device_name,
        suggested_area,
        public_url,
    })
}

/// A value of the `mqtt:` section that breaks its rule: the value, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadValue {
    /// `deviceName` or `suggestedArea`.
    Label(String),
    /// `publicUrl`.
    PublicUrl(String),
    /// `nodeId`.
    NodeId(String),
    /// `discoveryPrefix`.
    Prefix(String),
}

impl std::fmt::Display for BadValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadValue::Label(text) => write!(
                f,
                "{text:?} is not a name: use 1 to {MAX_LABEL} characters on one line"
            ),
            BadValue::PublicUrl(url) => write!(
                f,
                "{url:?} is not a page address: write the URL your browser shows for actiond's \
                 page, http:// or https:// with a host (at most {MAX_URL} bytes, no credentials)"
            ),
            BadValue::NodeId(id) => write!(
                f,
                "{id:?} is not a node id: use 1 to {MAX_NODE_ID} of A-Z a-z 0-9 _ - (Home \
                 Assistant's rule for discovery topics)"
            ),
            BadValue::Prefix(prefix) => write!(
                f,
                "{prefix:?} is not a discovery prefix: use topic levels separated by /, without \
                 + or #, at most {MAX_PREFIX} bytes (Home Assistant's default is homeassistant)"
            ),
        }
    }
}

impl std::error::Error for BadValue {}

/// Why a broker URL is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadBroker {
    /// `mqtts://` and its kin.
    Tls,
    /// Another scheme, as written.
    UnknownScheme(String),
    /// `user:password@` in the URL.
    Credentials,
    /// A path, query or fragment.
    Path,
    /// `[` without its `]`.
    Unclosed,
    /// Something other than `:port` after `]`.
    AfterBracket,
    /// No host, or one with spaces or control characters: the whole URL.
    NoHost(String),
    /// A port that is no number from 1 to 65535, as written.
    Port(String),
}

impl std::fmt::Display for BadBroker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadBroker::Tls => f.write_str(
                "TLS (mqtts://) is not built into actiond, to keep the binary small: connect \
                 to a mosquitto on the board or the LAN that bridges to the TLS broker \
                 (docs/home-assistant.md shows one)",
            ),
            BadBroker::UnknownScheme(scheme) => write!(
                f,
                "unknown scheme {scheme:?}: write mqtt://host or mqtt://host:port"
            ),
            BadBroker::Credentials => f.write_str(
                "credentials do not belong in the broker URL: use username and \
                    passwordFile",
            ),
            BadBroker::Path => {
                f.write_str("the broker URL has no path or query: write mqtt://host:port")
            }
            BadBroker::Unclosed => f.write_str("an IPv6 address needs its closing ]"),
            BadBroker::AfterBracket => f.write_str("expected :port after ]"),
            BadBroker::NoHost(url) => write!(f, "{url:?} names no valid host"),
            BadBroker::Port(p) => write!(f, "port {p:?} is not a number from 1 to 65535"),
        }
    }
}

impl std::error::Error for BadBroker {}

/// A device name or area: one line of at most `MAX_LABEL` characters, not empty.
pub fn check_label(text: &str) -> Result<(), BadValue> {
    if text.is_empty() || text.chars().count() > MAX_LABEL || text.chars().any(char::is_control) {
        return Err(BadValue::Label(text.to_string()));
    }
    Ok(())
}

/// `publicUrl` is the address Home Assistant links the device page to: an `http://` or
/// `https://` URL with a host. Home Assistant refuses every discovery message of a device
/// whose `configuration_url` it cannot parse, so a bad one is refused here, with the reason.
pub fn check_public_url(url: &str) -> Result<(), BadValue> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"));
    let host = rest.map(|r| r.split(['/', '?', '#']).next().unwrap_or(""));
    let ok = url.len() <= MAX_URL
        && host.is_some_and(|h| !h.is_empty() && !h.starts_with(':') && !h.contains('@'))
        && !url.chars().any(|c| c.is_whitespace() || c.is_control());
    if ok {
        Ok(())
    } else {
        Err(BadValue::PublicUrl(url.to_string()))
    }
}

/// `mqtt://host[:port]` (or just `host[:port]`) → (host, port). An IPv6 address is written in
/// brackets. Credentials, paths and other schemes are refused with the reason.
pub fn parse_broker(url: &str) -> Result<(String, u16), BadBroker> {
    let rest = match url.split_once("://") {
        None => url,
        Some(("mqtt" | "tcp", rest)) => rest,
        Some(("mqtts" | "ssl" | "tls", _)) => return Err(BadBroker::Tls),
        Some((scheme, _)) => return Err(BadBroker::UnknownScheme(scheme.to_string())),
    };
    if rest.contains('@') {
        return Err(BadBroker::Credentials);
    }
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.contains(['/', '?', '#']) {
        return Err(BadBroker::Path);
    }
    let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
        let (addr, after) = v6.split_once(']').ok_or(BadBroker::Unclosed)?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or(BadBroker::AfterBracket)?),
        };
        (addr, port)
    } else {
        match rest.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (rest, None),
        }
    };
    if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(BadBroker::NoHost(url.to_string()));
    }
    let port = match port {
        None => DEFAULT_PORT,
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 => n,
            _ => return Err(BadBroker::Port(p.to_string())),
        },
    };
    Ok((host.to_string(), port))
}

/// A node id is one topic level and part of Home Assistant's ids: `[A-Za-z0-9_-]{1,64}`.
pub fn check_node_id(id: &str) -> Result<(), BadValue> {
    if (1..=MAX_NODE_ID).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        Ok(())
    } else {
        Err(BadValue::NodeId(id.to_string()))
    }
}

/// A discovery prefix is one or more topic levels with no wildcard and no empty level.
pub fn check_prefix(prefix: &str) -> Result<(), BadValue> {
    let ok = (1..=MAX_PREFIX).contains(&prefix.len())
        && !prefix.contains(['+', '#', '\0'])
        && prefix.split('/').all(|level| !level.is_empty());
    if ok {
        Ok(())
    } else {
        Err(BadValue::Prefix(prefix.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Source, parse};
    use std::path::PathBuf;

    #[test]
    fn broker_urls() {
        let ok: &[(&str, &str, u16)] = &[
            ("mqtt://broker.lan:1883", "broker.lan", 1883),
            ("mqtt://broker.lan", "broker.lan", 1883),
            ("broker.lan:1884", "broker.lan", 1884),
            ("tcp://10.0.0.2:11883/", "10.0.0.2", 11883),
            ("mqtt://[::1]:1883", "::1", 1883),
            ("mqtt://[fe80::1]", "fe80::1", 1883),
        ];
        for (url, host, port) in ok {
            assert_eq!(parse_broker(url), Ok((host.to_string(), *port)), "{url}");
        }
        let bad: &[(&str, &str)] = &[
            ("mqtts://broker.lan:8883", "TLS"),
            ("ssl://broker.lan", "TLS"),
            ("ws://broker.lan", "unknown scheme"),
            ("mqtt://user:pw@broker.lan", "credentials"),
            ("mqtt://broker.lan/topic", "no path"),
            ("mqtt://broker.lan:0", "port"),
            ("mqtt://broker.lan:65536", "port"),
            ("mqtt://broker.lan:x", "port"),
            ("mqtt://", "no valid host"),
            ("mqtt://:1883", "no valid host"),
            ("mqtt://[::1", "closing ]"),
            ("mqtt://bro ker", "no valid host"),
        ];
        for (url, needle) in bad {
            let e = parse_broker(url).unwrap_err().to_string();
            assert!(e.contains(needle), "{url}: {e}");
        }
    }

    #[test]
    fn node_ids_and_prefixes() {
        for id in ["garage-pi", "a", "NAS_2", &"x".repeat(64)] {
            assert!(check_node_id(id).is_ok(), "{id}");
        }
        for id in [
            "",
            "garage pi",
            "a/b",
            "a+b",
            "#",
            "pi.local",
            &"x".repeat(65),
        ] {
            assert!(check_node_id(id).is_err(), "{id}");
        }
        for p in ["homeassistant", "ha/discovery"] {
            assert!(check_prefix(p).is_ok(), "{p}");
        }
        for p in ["", "/ha", "ha/", "a//b", "ha/+", "ha/#", &"x".repeat(129)] {
            assert!(check_prefix(p).is_err(), "{p}");
        }
    }

    fn load(text: &str) -> Result<crate::config::Config, Vec<String>> {
        parse(
            text,
            Source::Embedded,
            PathBuf::from("/etc/actiond"),
            &|_| None,
        )
        .map(|(c, _)| c)
        .map_err(|(e, _)| e.iter().map(ToString::to_string).collect())
    }

    #[test]
    fn the_section_is_read_with_its_defaults() {
        assert_eq!(load("{}").unwrap().mqtt, None);
        let m = load("mqtt: {broker: mqtt://broker.lan}\n")
            .unwrap()
            .mqtt
            .unwrap();
        assert_eq!(
            m,
            Mqtt {
                broker: "mqtt://broker.lan".into(),
                host: "broker.lan".into(),
                port: 1883,
                username: None,
                password_file: None,
                discovery_prefix: "homeassistant".into(),
                node_id: None,
                run_as_username: "mqtt".into(),
                run_as_usergroup: "mqtt".into(),
                device_name: None,
                suggested_area: None,
                public_url: None,
            }
        );
        let m = load(
            "mqtt:\n  broker: mqtt://10.0.0.2:1884\n  username: actiond\n  \
             passwordFile: mqtt.secret\n  discoveryPrefix: ha\n  nodeId: garage-pi\n  \
             runAs: {username: door, usergroup: automation}\n  deviceName: Garage Pi\n  \
             suggestedArea: Garage\n  publicUrl: 'https://pi.example.net/actiond/'\n",
        )
        .unwrap()
        .mqtt
        .unwrap();
        assert_eq!((m.host.as_str(), m.port), ("10.0.0.2", 1884));
        assert_eq!(m.username.as_deref(), Some("actiond"));
        assert_eq!(
            m.password_file,
            Some(PathBuf::from("/etc/actiond/mqtt.secret"))
        );
        assert_eq!(m.discovery_prefix, "ha");
        assert_eq!(m.node_id.as_deref(), Some("garage-pi"));
        assert_eq!(
            (m.run_as_username.as_str(), m.run_as_usergroup.as_str()),
            ("door", "automation")
        );
        assert_eq!(m.device_name.as_deref(), Some("Garage Pi"));
        assert_eq!(m.suggested_area.as_deref(), Some("Garage"));
        assert_eq!(
            m.public_url.as_deref(),
            Some("https://pi.example.net/actiond/")
        );
    }

    #[test]
    fn public_urls_and_labels() {
        for ok in [
            "http://pi.local:1337/",
            "https://pi.example.net/actiond/",
            "http://[fe80::1]:1337",
            "https://h",
        ] {
            assert!(check_public_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "pi.local:1337",
            "ftp://pi.local/",
            "http://",
            "http:///path",
            "http://:1337/",
            "https://user:pw@pi.local/",
            "http://pi local/",
            "http://pi.local/\n",
        ] {
            assert!(check_public_url(bad).is_err(), "{bad:?}");
        }
        assert!(check_public_url(&format!("http://h/{}", "x".repeat(600))).is_err());
        for ok in ["Garage Pi", "x", "Küche", &"é".repeat(64)] {
            assert!(check_label(ok).is_ok(), "{ok}");
        }
        for bad in ["", "a\nb", &"x".repeat(65)] {
            assert!(check_label(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn errors_name_their_path() {
        let cases: &[(&str, &str)] = &[
            ("mqtt: {username: x}\n", "mqtt: `broker` is required"),
            ("mqtt: {broker: 'mqtts://b:8883'}\n", "mqtt.broker: TLS"),
            (
                "mqtt: {broker: b, nodeId: 'garage pi'}\n",
                "mqtt.nodeId: \"garage pi\"",
            ),
            (
                "mqtt: {broker: b, discoveryPrefix: 'ha/#'}\n",
                "mqtt.discoveryPrefix:",
            ),
            (
                "mqtt: {broker: b, runAs: {username: ''}}\n",
                "mqtt.runAs: runAs.username",
            ),
            ("mqtt: true\n", "mqtt: expected a mapping"),
            (
                "mqtt: {broker: b, publicUrl: 'pi.local:1337'}\n",
                "mqtt.publicUrl: \"pi.local:1337\" is not a page address",
            ),
            ("mqtt: {broker: b, deviceName: ''}\n", "mqtt.deviceName:"),
            (
                "mqtt: {broker: b, suggestedArea: {a: b}}\n",
                "mqtt.suggestedArea: expected text",
            ),
        ];
        for (text, needle) in cases {
            let errors = load(text).unwrap_err();
            assert!(
                errors.iter().any(|e| e.starts_with(needle)),
                "{text}: {errors:?}"
            );
        }
    }

    #[test]
    fn a_password_in_the_config_is_warned_about_and_ignored() {
        let (c, warnings) = parse(
            "mqtt: {broker: b, password: hunter2}\n",
            Source::Embedded,
            PathBuf::from("/"),
            &|_| None,
        )
        .unwrap();
        assert!(c.mqtt.is_some());
        assert!(
            warnings
                .iter()
                .any(|w| w.path == "mqtt.password" && w.message.contains("passwordFile")),
            "{warnings:?}"
        );
    }

    /// Every message word for word, as the log and `--check-config` show it.
    #[test]
    fn messages_word_for_word() {
        let cases: &[(String, &str)] = &[
            (
                parse_broker("mqtts://b").unwrap_err().to_string(),
                "TLS (mqtts://) is not built into actiond, to keep the binary small: connect to \
                 a mosquitto on the board or the LAN that bridges to the TLS broker \
                 (docs/home-assistant.md shows one)",
            ),
            (
                parse_broker("ws://b").unwrap_err().to_string(),
                "unknown scheme \"ws\": write mqtt://host or mqtt://host:port",
            ),
            (
                parse_broker("u:p@b").unwrap_err().to_string(),
                "credentials do not belong in the broker URL: use username and passwordFile",
            ),
            (
                parse_broker("b/t").unwrap_err().to_string(),
                "the broker URL has no path or query: write mqtt://host:port",
            ),
            (
                parse_broker("[::1").unwrap_err().to_string(),
                "an IPv6 address needs its closing ]",
            ),
            (
                parse_broker("[::1]x").unwrap_err().to_string(),
                "expected :port after ]",
            ),
            (
                parse_broker(":1").unwrap_err().to_string(),
                "\":1\" names no valid host",
            ),
            (
                parse_broker("b:0").unwrap_err().to_string(),
                "port \"0\" is not a number from 1 to 65535",
            ),
            (
                check_label("").unwrap_err().to_string(),
                "\"\" is not a name: use 1 to 64 characters on one line",
            ),
            (
                check_public_url("x").unwrap_err().to_string(),
                "\"x\" is not a page address: write the URL your browser shows for actiond's \
                 page, http:// or https:// with a host (at most 512 bytes, no credentials)",
            ),
            (
                check_node_id("a b").unwrap_err().to_string(),
                "\"a b\" is not a node id: use 1 to 64 of A-Z a-z 0-9 _ - (Home Assistant's \
                 rule for discovery topics)",
            ),
            (
                check_prefix("a/+").unwrap_err().to_string(),
                "\"a/+\" is not a discovery prefix: use topic levels separated by /, without + \
                 or #, at most 128 bytes (Home Assistant's default is homeassistant)",
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }
}
