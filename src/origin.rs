//! Where a request comes from, decided from its headers alone: the Host check that keeps
//! DNS-rebinding pages out, and the cross-site check (Fetch Metadata, `Origin`, `Referer`)
//! that keeps other web pages from using the API through a visitor's browser. Pure: the
//! server hands in the header values, the allowed lists from the config and the board's own
//! names, and gets a decision; nothing here reads sockets, clocks or files.
//!
//! Both checks guard against the browser, which sends cookies and reaches the LAN on behalf of
//! any page it shows. Clients that are not browsers (curl, Home Assistant, scripts) send no
//! fetch metadata and no `Origin`, and are served: they could send any header they liked, so
//! refusing them would protect nothing.
//!
//! - **Host.** A rebinding page points its own name at the board's address, so the browser
//!   sends `Host: attacker.example`. Only an IP literal, `localhost` (and `*.localhost`,
//!   which browsers resolve to loopback themselves), the board's hostname, `<hostname>.local`
//!   and the names in `allowedHosts` are served; `allowedHosts: ['*']` turns the check off.
//!   Ports are not compared: a rebinding page can use any port.
//! - **Cross-site.** Browsers mark each request with `Sec-Fetch-Site`, which no page can set
//!   or change: `same-origin` and `none` (an address typed in, a bookmark, a QR code) are
//!   served; `cross-site` and `same-site` (another port or name of the same host counts as
//!   same-site) only when the requesting origin (`Origin`, else the origin of `Referer`) is
//!   in `allowedOrigins`. Older browsers send no fetch metadata; for them the requesting
//!   origin must be the one the browser addressed (`Host`) or an allowed one, and the opaque
//!   origin `null` (sandboxed frames, local files) is refused.
//! - **The page.** Its files have no effect and hold no secret, so a top-level navigation
//!   from another site (a link on a start page) loads it; other cross-site loads (a frame,
//!   a script tag) are refused, and the page's own API calls are then same-origin.

use std::net::{Ipv4Addr, Ipv6Addr};

/// What the config allows beyond the board's own names: `allowedHosts`, `allowedOrigins`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowed {
    pub hosts: Hosts,
    pub origins: Origins,
}

/// `allowedHosts`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Hosts {
    /// Only the board's own names and IP literals (the default).
    #[default]
    Own,
    /// Those and the listed names.
    Listed(Vec<HostPattern>),
    /// `['*']`: every name; the check is off.
    Any,
}

/// One entry of `allowedHosts`: a name (`pi.fritz.box`) or every name below a domain
/// (`*.home.arpa`), lower case, without a trailing dot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostPattern {
    Name(String),
    Below(String),
}

/// `allowedOrigins`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Origins {
    /// Only the service's own origin (the default).
    #[default]
    Own,
    Listed(Vec<SiteOrigin>),
    /// `['*']`: every web page may use the API through its visitors' browsers.
    Any,
}

/// An entry of `allowedHosts` or `allowedOrigins` that is refused: a guess here could open
/// the API to every web page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadEntry {
    /// `null`, the opaque origin.
    Opaque,
    /// Not an http(s) origin without a path: the entry, trimmed.
    Origin(String),
    /// Not a host name or `*.` and a domain: the entry, trimmed.
    Host(String),
}

impl std::fmt::Display for BadEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadEntry::Opaque => f.write_str(
                "the opaque origin null (sandboxed frames, local files) cannot be \
                 allowed: any page can make one",
            ),
            BadEntry::Origin(text) => write!(
                f,
                "{text:?} is not an origin: write the scheme, the host and the port if it is \
                 not the scheme's default, with no path (https://home.lan, http://10.0.0.5:8123)"
            ),
            BadEntry::Host(text) => write!(
                f,
                "{text:?} is not a host name: write the name alone, without a scheme or a port \
                 (pi.fritz.box, or *.home.arpa for every name below home.arpa)"
            ),
        }
    }
}

impl std::error::Error for BadEntry {}

/// A web origin: scheme, host and port (the scheme's default when not written), lower case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteOrigin {
    scheme: String,
    host: String,
    port: u16,
}

impl SiteOrigin {
    /// Reads a config entry such as `https://home.lan` or `http://10.0.0.5:8123`.
    pub fn parse(text: &str) -> Result<SiteOrigin, BadEntry> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("null") {
            return Err(BadEntry::Opaque);
        }
        let parsed = parse_origin(text.strip_suffix('/').unwrap_or(text)).filter(|o| {
            o.scheme.eq_ignore_ascii_case("http") || o.scheme.eq_ignore_ascii_case("https")
        });
        match parsed {
            Some(o) if !o.host.is_empty() => Ok(SiteOrigin {
                scheme: o.scheme.to_ascii_lowercase(),
                host: o.host.to_ascii_lowercase(),
                port: o.port,
            }),
            _ => Err(BadEntry::Origin(text.to_string())),
        }
    }

    fn matches(&self, o: &OriginRef<'_>) -> bool {
        self.port == o.port
            && self.scheme.eq_ignore_ascii_case(o.scheme)
            && self.host.eq_ignore_ascii_case(o.host)
    }
}

impl std::fmt::Display for SiteOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let default = match self.scheme.as_str() {
            "https" => 443,
            _ => 80,
        };
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        write!(f, "{}://{host}", self.scheme)?;
        if self.port != default {
            write!(f, ":{}", self.port)?;
        }
        Ok(())
    }
}

impl std::fmt::Display for HostPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostPattern::Name(n) => f.write_str(n),
            HostPattern::Below(d) => write!(f, "*.{d}"),
        }
    }
}

impl HostPattern {
    /// Reads a config entry: a host name, or `*.` and a domain.
    pub fn parse(text: &str) -> Result<HostPattern, BadEntry> {
        let text = text.trim();
        let lower = text.to_ascii_lowercase();
        let lower = lower.strip_suffix('.').unwrap_or(&lower);
        let (below, name) = match lower.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, lower),
        };
        let valid = !name.is_empty()
            && name.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            });
        if !valid {
            return Err(BadEntry::Host(text.to_string()));
        }
        Ok(if below {
            HostPattern::Below(name.to_string())
        } else {
            HostPattern::Name(name.to_string())
        })
    }

    fn matches(&self, host: &str) -> bool {
        match self {
            HostPattern::Name(n) => n.eq_ignore_ascii_case(host),
            HostPattern::Below(domain) => is_below(host, domain),
        }
    }
}

/// The names the board answers to without any config: its hostname and `<hostname>.local`
/// (mDNS), and for a hostname with dots also its first label and that label with `.local`.
/// Read once at start; a test builds one from any name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Board {
    names: Vec<String>,
}

impl Board {
    pub fn new(hostname: &str) -> Board {
        let host = hostname.trim().to_ascii_lowercase();
        let host = host.strip_suffix('.').unwrap_or(&host);
        let mut names = Vec::new();
        if !host.is_empty() {
            let first = host.split('.').next().unwrap_or(host);
            for name in [host, first] {
                for candidate in [name.to_string(), format!("{name}.local")] {
                    if !names.contains(&candidate) {
                        names.push(candidate);
                    }
                }
            }
        }
        Board { names }
    }

    /// The names, for the log.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    fn owns(&self, host: &str) -> bool {
        self.names.iter().any(|n| n.eq_ignore_ascii_case(host))
    }
}

/// What the request asks for: the page's files, or everything else (the API, the GET
/// starts, `/metrics`, `/readyz`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    Page,
    Api,
}

/// The request headers the checks read, as the client sent them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Headers<'a> {
    pub host: Option<&'a str>,
    pub origin: Option<&'a str>,
    pub referer: Option<&'a str>,
    pub fetch_site: Option<&'a str>,
    pub fetch_mode: Option<&'a str>,
    pub fetch_dest: Option<&'a str>,
}

/// Why a request was refused. Each becomes `permission_denied` with [`Refusal::message`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The Host names something other than the board (or is no host at all).
    Host(String),
    /// A browser marked the request cross-site or same-site, from this origin if known.
    CrossSite { site: String, from: Option<String> },
    /// An older browser's request from another origin.
    Foreign(String),
    /// `Origin: null` from an older browser.
    Opaque,
}

/// How much of a header value a message repeats.
const SHOWN: usize = 100;

fn shown(text: &str) -> String {
    match text.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

impl Refusal {
    pub fn message(&self) -> String {
        match self {
            Refusal::Host(host) => format!(
                "this service does not answer to the name {:?} (a web page may be trying DNS \
                 rebinding): if that is how you reach the board, add the name to allowedHosts",
                shown(host)
            ),
            Refusal::CrossSite { site, from } => {
                let from = match from {
                    Some(o) => format!("from {}", shown(o)),
                    None => "from a page of another site".into(),
                };
                format!(
                    "refused a {site} request {from} (Sec-Fetch-Site: {site}): other web pages \
                     may not use this API through your browser; add their origin to \
                     allowedOrigins to allow it",
                    site = shown(site)
                )
            }
            Refusal::Foreign(origin) => format!(
                "refused a request from {}, which is not this service's own origin: add it to \
                 allowedOrigins to allow it",
                shown(origin)
            ),
            Refusal::Opaque => "refused a request from an opaque origin (Origin: null: a \
                 sandboxed frame or a local file); allowedOrigins cannot allow it"
                .into(),
        }
    }
}

/// The one decision: whether a request with these headers may be served.
pub fn check(
    allowed: &Allowed,
    board: &Board,
    h: &Headers<'_>,
    target: Resource,
) -> Result<(), Refusal> {
    check_host(&allowed.hosts, board, h.host)?;
    match target {
        Resource::Page => check_page(h),
        Resource::Api => check_api(&allowed.origins, h),
    }
}

/// A missing Host passes: every browser sends one, so its absence means a client that is no
/// browser, and such a client could name any host it liked.
fn check_host(hosts: &Hosts, board: &Board, value: Option<&str>) -> Result<(), Refusal> {
    let Some(value) = value else { return Ok(()) };
    if *hosts == Hosts::Any {
        return Ok(());
    }
    let refused = || Err(Refusal::Host(value.to_string()));
    let Some((host, _)) = split_authority(value) else {
        return refused();
    };
    let host = host.strip_suffix('.').unwrap_or(host);
    let own = is_ip_literal(host)
        || host.eq_ignore_ascii_case("localhost")
        || is_below(host, "localhost")
        || board.owns(host);
    let listed = || match hosts {
        Hosts::Listed(patterns) => patterns.iter().any(|p| p.matches(host)),
        Hosts::Own | Hosts::Any => false,
    };
    if own || listed() { Ok(()) } else { refused() }
}

fn check_page(h: &Headers<'_>) -> Result<(), Refusal> {
    match lower_site(h.fetch_site) {
        Site::None | Site::SameOrigin | Site::Absent => Ok(()),
        // A link from another site opens the page in a tab of its own; anything else (a
        // frame, a script or image tag) is another page using ours as a part of itself.
        Site::Cross(site) => {
            let navigates = h
                .fetch_mode
                .is_some_and(|m| m.eq_ignore_ascii_case("navigate"))
                && h.fetch_dest
                    .is_some_and(|d| d.eq_ignore_ascii_case("document"));
            if navigates {
                Ok(())
            } else {
                Err(Refusal::CrossSite {
                    site: site.to_string(),
                    from: requester(h).and_then(Requester::shown),
                })
            }
        }
    }
}

fn check_api(origins: &Origins, h: &Headers<'_>) -> Result<(), Refusal> {
    let allowed = |r: &Option<Requester<'_>>| match (origins, r) {
        (Origins::Any, _) => true,
        (Origins::Listed(list), Some(Requester::Site(o))) => list.iter().any(|a| a.matches(o)),
        _ => false,
    };
    match lower_site(h.fetch_site) {
        // The browser itself says the request comes from this origin, or from the person.
        // Behind a reverse proxy that rewrites Host, only this tells the page's own calls
        // apart, since its `Origin` then names the proxy's address, not the one actiond sees.
        Site::SameOrigin | Site::None => Ok(()),
        Site::Cross(site) => {
            let r = requester(h);
            if allowed(&r) {
                Ok(())
            } else {
                Err(Refusal::CrossSite {
                    site: site.to_string(),
                    from: r.and_then(Requester::shown),
                })
            }
        }
        Site::Absent => {
            let r = requester(h);
            match r {
                None => Ok(()),
                _ if allowed(&r) => Ok(()),
                Some(Requester::Opaque) => Err(Refusal::Opaque),
                Some(Requester::Unreadable(text)) => Err(Refusal::Foreign(text.to_string())),
                Some(Requester::Site(o)) if is_own(&o, h.host) => Ok(()),
                Some(Requester::Site(o)) => Err(Refusal::Foreign(o.text.to_string())),
            }
        }
    }
}

/// `Sec-Fetch-Site`, read case-insensitively. A value this code does not know counts as
/// cross-site: refusing is safer than guessing what a future browser means by it.
enum Site<'a> {
    Absent,
    None,
    SameOrigin,
    Cross(&'a str),
}

fn lower_site(value: Option<&str>) -> Site<'_> {
    match value.map(str::trim) {
        None => Site::Absent,
        Some(v) if v.eq_ignore_ascii_case("same-origin") => Site::SameOrigin,
        Some(v) if v.eq_ignore_ascii_case("none") => Site::None,
        Some(v) => Site::Cross(v),
    }
}

/// The origin a browser says a request comes from.
enum Requester<'a> {
    Site(OriginRef<'a>),
    /// `Origin: null`.
    Opaque,
    /// A value that is no origin; only a non-browser sends one, but it is refused all the
    /// same when it is all there is.
    Unreadable(&'a str),
}

impl Requester<'_> {
    fn shown(self) -> Option<String> {
        match self {
            Requester::Site(o) => Some(o.text.to_string()),
            Requester::Opaque => Some("null".into()),
            Requester::Unreadable(t) => Some(t.to_string()),
        }
    }
}

/// `Origin`, else the origin of `Referer` (a link or an image sends no `Origin`, but a
/// browser's `Referer` can only name the page it comes from, or nothing).
fn requester<'a>(h: &Headers<'a>) -> Option<Requester<'a>> {
    if let Some(origin) = h.origin.map(str::trim) {
        if origin.eq_ignore_ascii_case("null") {
            return Some(Requester::Opaque);
        }
        return Some(match parse_origin(origin) {
            Some(o) => Requester::Site(o),
            None => Requester::Unreadable(origin),
        });
    }
    let referer = h.referer.map(str::trim).filter(|r| !r.is_empty())?;
    // The origin is everything before the path: scheme, "://", and the authority.
    let after_scheme = referer.find("://").map_or(0, |i| i + 3);
    let end = referer[after_scheme..]
        .find(['/', '?', '#'])
        .map_or(referer.len(), |i| after_scheme + i);
    Some(match parse_origin(&referer[..end]) {
        Some(o) => Requester::Site(o),
        None => Requester::Unreadable(referer),
    })
}

/// An origin as written in a header: borrowed, with its port made explicit.
struct OriginRef<'a> {
    text: &'a str,
    scheme: &'a str,
    /// Without a trailing dot; IPv6 in brackets.
    host: &'a str,
    port: u16,
}

fn parse_origin(text: &str) -> Option<OriginRef<'_>> {
    let (scheme, authority) = text.split_once("://")?;
    if scheme.is_empty()
        || !scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        || authority.contains(['/', '?', '#', '@'])
    {
        return None;
    }
    let (host, port) = split_authority(authority)?;
    let port = match port {
        Some(p) => p,
        None => default_port(scheme)?,
    };
    Some(OriginRef {
        text,
        scheme,
        host: host.strip_suffix('.').unwrap_or(host),
        port,
    })
}

fn default_port(scheme: &str) -> Option<u16> {
    if scheme.eq_ignore_ascii_case("http") {
        Some(80)
    } else if scheme.eq_ignore_ascii_case("https") {
        Some(443)
    } else {
        None
    }
}

/// Whether an origin names what the browser addressed: the same host (and port, the
/// scheme's default standing for an absent one) as the Host header.
fn is_own(origin: &OriginRef<'_>, host: Option<&str>) -> bool {
    let Some((host, port)) = host.and_then(split_authority) else {
        return false;
    };
    let host = host.strip_suffix('.').unwrap_or(host);
    host.eq_ignore_ascii_case(origin.host)
        && port.or_else(|| default_port(origin.scheme)) == Some(origin.port)
}

/// `host[:port]` or `[v6][:port]` into the host (brackets kept) and the port. An empty port
/// (`host:`) is allowed, as HTTP allows it.
fn split_authority(value: &str) -> Option<(&str, Option<u16>)> {
    let value = value.trim();
    let (host, port) = if value.starts_with('[') {
        let end = value.find(']')?;
        let rest = &value[end + 1..];
        let port = match rest.strip_prefix(':') {
            Some(p) => Some(p),
            None if rest.is_empty() => None,
            None => return None,
        };
        (&value[..=end], port)
    } else {
        match value.rsplit_once(':') {
            Some((h, _)) if h.contains(':') => return None,
            Some((h, p)) => (h, Some(p)),
            None => (value, None),
        }
    };
    if host.is_empty() {
        return None;
    }
    let port = match port {
        None | Some("") => None,
        Some(p) if p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()) => {
            Some(p.parse::<u16>().ok()?)
        }
        Some(_) => return None,
    };
    Some((host, port))
}

/// A dotted IPv4 address, or an IPv6 address in brackets (with or without a zone).
fn is_ip_literal(host: &str) -> bool {
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        let addr = inner.split_once('%').map_or(inner, |(a, _)| a);
        return addr.parse::<Ipv6Addr>().is_ok();
    }
    host.parse::<Ipv4Addr>().is_ok()
}

/// Whether `host` is a name below `domain` (`a.home.arpa` below `home.arpa`, not the domain
/// itself), compared case-insensitively.
fn is_below(host: &str, domain: &str) -> bool {
    let (host, domain) = (host.as_bytes(), domain.as_bytes());
    host.len() > domain.len() + 1
        && host[host.len() - domain.len()..].eq_ignore_ascii_case(domain)
        && host[host.len() - domain.len() - 1] == b'.'
}

#[cfg(test)]
mod tests;
