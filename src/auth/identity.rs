//! Who is calling, decided by one pure function from what the request carries:
//! an API token (`Authorization: Bearer`, or `token`), then a trusted header (only from an
//! address in `trustedProxies`), then the session in `Actiond-Session` (the page's) or else the
//! `svc-sid-local` cookie, then the guest. A token that
//! matches nothing is refused, never turned into a guest. This module reads no headers and
//! no clock itself: the server extracts `Credentials`, the caller passes the time.

use std::net::IpAddr;

use super::sessions::Sessions;
use super::token;
use crate::config::{Auth, Cidr};
use crate::permissions::{Caller, Provider};

/// The session cookie's name.
pub const COOKIE: &str = "svc-sid-local";

/// The header that carries a session instead of the cookie (the web page's way). A browser
/// sends a cookie to every port of the board's name, so any other web service on the board
/// would see it; a header the page adds itself goes only where the page sends it. On
/// LocalUserLogin the header asks for the new session in the answer's header of the same
/// name, and no cookie.
pub const SESSION_HEADER: &str = "actiond-session";

/// What a request offers to identify itself.
#[derive(Debug, Default, Clone, Copy)]
pub struct Credentials<'a> {
    /// The token of `Authorization: Bearer <token>`.
    pub bearer: Option<&'a str>,
    /// The value of the `authHttpHeaderUsername` header, if configured and present.
    pub header_user: Option<&'a str>,
    /// The value of the `authHttpHeaderUserGroup` header, if configured and present.
    pub header_group: Option<&'a str>,
    /// The `svc-sid-local` cookie.
    pub session: Option<&'a str>,
}

/// The same credentials, owned: what an event stream keeps of its request, so that its caller
/// can be identified again (by `identify`, the one place that does it) after a login, a
/// logout or a reload.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Presented {
    bearer: Option<String>,
    header_user: Option<String>,
    header_group: Option<String>,
    session: Option<String>,
}

impl Presented {
    pub fn of(c: &Credentials<'_>) -> Presented {
        let own = |v: Option<&str>| v.map(str::to_string);
        Presented {
            bearer: own(c.bearer),
            header_user: own(c.header_user),
            header_group: own(c.header_group),
            session: own(c.session),
        }
    }

    pub fn credentials(&self) -> Credentials<'_> {
        Credentials {
            bearer: self.bearer.as_deref(),
            header_user: self.header_user.as_deref(),
            header_group: self.header_group.as_deref(),
            session: self.session.as_deref(),
        }
    }
}

pub use crate::config::Network;

/// Why a request was refused before any operation ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// An `Authorization: Bearer` token that matches no configured token.
    UnknownToken,
}

pub fn identify(
    auth: &Auth,
    peer: IpAddr,
    cred: &Credentials<'_>,
    sessions: &Sessions,
    now: u64,
) -> Result<Caller, Refusal> {
    if let Some(presented) = cred.bearer {
        // Every configured hash is compared, so the time taken does not tell which matched.
        let mut found = None;
        for t in &auth.api_tokens {
            if token::matches(presented, &t.sha256) && found.is_none() {
                found = Some(t);
            }
        }
        let t = found.ok_or(Refusal::UnknownToken)?;
        return Ok(Caller {
            username: t.username.clone(),
            usergroup: t.usergroup.clone(),
            provider: Provider::Token,
            sid: None,
        });
    }
    if !auth.http_header_username.is_empty()
        && trusted(&auth.trusted_proxies, peer)
        && let Some(user) = cred.header_user.map(str::trim).filter(|u| !u.is_empty())
    {
        return Ok(Caller {
            username: user.to_string(),
            usergroup: cred.header_group.map(str::trim).unwrap_or("").to_string(),
            provider: Provider::Header,
            sid: None,
        });
    }
    if let Some(sid) = cred.session.filter(|_| auth.local_users_enabled) {
        let current = |name: &str| {
            auth.local_users
                .iter()
                .find(|u| u.username == name)
                .map(|u| u.password.clone())
        };
        if let Some(session) = sessions.lookup(sid, now, current) {
            let user = auth
                .local_users
                .iter()
                .find(|u| u.username == session.username);
            if let Some(user) = user {
                return Ok(Caller {
                    username: user.username.clone(),
                    usergroup: user.usergroup.clone(),
                    provider: Provider::Local,
                    sid: Some(sid.to_string()),
                });
            }
        }
    }
    Ok(Caller::guest())
}

/// The token of an `Authorization` header value, if it is a `Bearer` one or a `token` one.
/// `token` is the scheme OliveTin's n8n node (and GitHub's API) writes; it means the same
/// here, so such a client is its token's user rather than silently the guest. Any other
/// scheme (`Basic` from a proxy's own login, say) is not actiond's and is ignored.
pub fn bearer(authorization: &str) -> Option<&str> {
    let (scheme, rest) = authorization.trim().split_once(' ')?;
    (scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("token"))
        .then(|| rest.trim())
        .filter(|t| !t.is_empty())
}

/// The value of the session cookie in a `Cookie` header value.
pub fn session_cookie(cookie_header: &str) -> Option<&str> {
    cookie_header.split(';').find_map(|pair| {
        let (name, value) = pair.trim().split_once('=')?;
        (name.trim() == COOKIE)
            .then(|| value.trim())
            .filter(|v| !v.is_empty())
    })
}

/// Whether `peer` is in one of the `trustedProxies` networks (parsed at config load). An
/// IPv4 address seen as IPv4-mapped IPv6 counts as IPv4.
pub fn trusted(networks: &[Cidr], peer: IpAddr) -> bool {
    let peer = match peer {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(peer, IpAddr::V4),
        v4 => v4,
    };
    networks.iter().any(|n| n.contains(peer))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ApiToken, LocalUser, Permissions};

    const LOOPBACK: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

    fn auth() -> Auth {
        Auth {
            local_users_enabled: true,
            local_users: vec![LocalUser {
                username: "alice".into(),
                usergroup: "admins".into(),
                password: "$argon2id$alice".into(),
            }],
            http_header_username: "X-User".into(),
            http_header_usergroup: "X-Group".into(),
            trusted_proxies: Cidr::LOOPBACK.to_vec(),
            api_tokens: vec![ApiToken {
                name: "ha".into(),
                sha256: token::sha256_hex("secret-token"),
                username: "home-assistant".into(),
                usergroup: "automation".into(),
            }],
            ..Auth::open_to(Permissions::ALL)
        }
    }

    #[test]
    fn the_order_is_token_header_session_guest() {
        let a = auth();
        let mut sessions = Sessions::default();
        let (sid, _) = sessions.create("alice", "$argon2id$alice", 10, 10);
        let all = Credentials {
            bearer: Some("secret-token"),
            header_user: Some("bob"),
            header_group: Some("ops"),
            session: Some(&sid),
        };
        let id = |c: &Credentials<'_>| identify(&a, LOOPBACK, c, &sessions, 11);
        assert_eq!(id(&all).unwrap().provider, Provider::Token);
        assert_eq!(id(&all).unwrap().username, "home-assistant");
        let no_token = Credentials {
            bearer: None,
            ..all
        };
        let c = id(&no_token).unwrap();
        assert_eq!(
            (c.provider, c.username.as_str(), c.usergroup.as_str()),
            (Provider::Header, "bob", "ops")
        );
        let only_session = Credentials {
            session: Some(&sid),
            ..Credentials::default()
        };
        let c = id(&only_session).unwrap();
        assert_eq!(
            (c.provider, c.username.as_str(), c.sid.as_deref()),
            (Provider::Local, "alice", Some(sid.as_str()))
        );
        assert_eq!(id(&Credentials::default()).unwrap(), Caller::guest());
    }

    #[test]
    fn a_wrong_token_is_refused_not_a_guest() {
        let cred = Credentials {
            bearer: Some("nope"),
            ..Credentials::default()
        };
        assert_eq!(
            identify(&auth(), LOOPBACK, &cred, &Sessions::default(), 0),
            Err(Refusal::UnknownToken)
        );
    }

    #[test]
    fn trusted_headers_count_only_from_trusted_proxies() {
        let cred = Credentials {
            header_user: Some("mallory"),
            ..Credentials::default()
        };
        let outside: IpAddr = "192.0.2.7".parse().unwrap();
        let c = identify(&auth(), outside, &cred, &Sessions::default(), 0).unwrap();
        assert_eq!(c, Caller::guest());
        let mut off = auth();
        off.http_header_username = String::new();
        assert_eq!(
            identify(&off, LOOPBACK, &cred, &Sessions::default(), 0).unwrap(),
            Caller::guest()
        );
    }

    #[test]
    fn stale_sessions_and_disabled_login_give_the_guest() {
        let mut sessions = Sessions::default();
        let (sid, _) = sessions.create("alice", "$argon2id$old-hash", 0, 10);
        let cred = Credentials {
            session: Some(&sid),
            ..Credentials::default()
        };
        assert_eq!(
            identify(&auth(), LOOPBACK, &cred, &sessions, 1).unwrap(),
            Caller::guest(),
            "hash changed"
        );
        let (sid, _) = sessions.create("alice", "$argon2id$alice", 0, 10);
        let cred = Credentials {
            session: Some(&sid),
            ..Credentials::default()
        };
        let mut disabled = auth();
        disabled.local_users_enabled = false;
        assert_eq!(
            identify(&disabled, LOOPBACK, &cred, &sessions, 1).unwrap(),
            Caller::guest()
        );
    }

    #[test]
    fn header_parsing() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer   abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("token abc"), Some("abc"));
        assert_eq!(bearer("Token  abc"), Some("abc"));
        assert_eq!(bearer("tokens abc"), None);
        assert_eq!(bearer("token "), None);
        assert_eq!(bearer("Bearer "), None);
        assert_eq!(session_cookie("a=b; svc-sid-local=xyz; c=d"), Some("xyz"));
        assert_eq!(session_cookie("svc-sid-local="), None);
        assert_eq!(session_cookie("other=1"), None);
    }

    #[test]
    fn networks() {
        let nets: Vec<Cidr> = ["127.0.0.1/8", "10.1.2.3", "fd00::/8"]
            .iter()
            .filter_map(|n| Cidr::parse(n))
            .collect();
        for (ip, want) in [
            ("127.9.9.9", true),
            ("128.0.0.1", false),
            ("10.1.2.3", true),
            ("10.1.2.4", false),
            ("fd12::1", true),
            ("fe80::1", false),
            ("::ffff:127.0.0.1", true),
        ] {
            assert_eq!(trusted(&nets, ip.parse().unwrap()), want, "{ip}");
        }
        let everything = Cidr::parse("0.0.0.0/0").unwrap();
        assert!(trusted(&[everything], "8.8.8.8".parse().unwrap()));
    }
}
