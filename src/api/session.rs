//! The identity operations: LocalUserLogin, Logout, WhoAmI, PasswordHash, and Init (what
//! the web page needs to boot, including who is calling). Each decodes, asks `auth` or
//! `permissions`, and encodes; the session cookie (or, for the page, the `Actiond-Session`
//! header) is written here and nowhere else.

use super::dto::{Empty, HashReply, InitReply, LinkJson, LoginReply, PolicyJson, WhoAmIReply};
use super::{App, Ctx, Reply};
use crate::auth::identity::COOKIE;
use crate::auth::password::HashError;
use crate::auth::sessions::LIFETIME_SECS;
use crate::auth::{Login, Throttled};
use crate::dashboards;
use crate::permissions::{Decision, Verb, decide, effective_policy, matched_acls};
use crate::protocol::{Code, ConnectError, Fields};

/// The cookie of a new session.
pub fn session_cookie(sid: &str) -> String {
    format!("{COOKIE}={sid}; Path=/; Max-Age={LIFETIME_SECS}; HttpOnly; SameSite=Strict")
}

/// The cookie that clears the session cookie in the browser.
pub fn cleared_cookie() -> String {
    format!("{COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict")
}

pub async fn login(app: &App, f: &Fields, ctx: &Ctx) -> Result<Reply, ConnectError> {
    let username = f.string("username")?;
    let password = f.string("password")?;
    let config = app.config();
    match app
        .authority
        .login(&config.auth, &config.limits, ctx.peer, &username, password)
        .await
    {
        Login::Throttled(Throttled::Address) => Err(ConnectError::new(
            Code::ResourceExhausted,
            "too many failed logins for this user, or from your address: wait a minute, then \
             try again",
        )),
        Login::Throttled(Throttled::Network) => Err(ConnectError::new(
            Code::ResourceExhausted,
            "too many failed logins from the addresses of your IPv6 network (its /64) \
             together: for now only a user who logged in from this network before may try; \
             wait a minute, then try again",
        )),
        Login::Throttled(Throttled::Username) => Err(ConnectError::new(
            Code::ResourceExhausted,
            "too many failed logins for this user from many addresses: for now only a device \
             on a network where this user logged in before may try (until that network has \
             failed as often itself); wait a minute, then try again",
        )),
        Login::Busy => Err(ConnectError::new(
            Code::ResourceExhausted,
            "too many logins are being checked right now, or one from your address is: try again in \
             a few seconds",
        )),
        Login::Refused => Ok(ctx.out.encode(&LoginReply { success: false }).into()),
        Login::Accepted { sid } => {
            // A login replaces what the request presented: the previous user's session on a
            // shared phone, an older page's cookie.
            end_presented_sessions(app, ctx);
            // The new session may have evicted the user's oldest: its streams end now.
            app.engine.bus().revalidate(&app.config().auth);
            let body = ctx.out.encode(&LoginReply { success: true }).into();
            // Asked for in the header (the web page): no cookie, which the browser would send
            // to every other port of the board's name too.
            Ok(if ctx.session_header {
                Reply {
                    body,
                    // An older page's cookie goes from the browser too.
                    cookie: ctx.cookie_session.as_ref().map(|_| cleared_cookie()),
                    session: Some(sid),
                }
            } else {
                Reply {
                    body,
                    cookie: Some(session_cookie(&sid)),
                    session: None,
                }
            })
        }
    }
}

/// Ends every session the request presents: the one it was identified by, and a cookie's
/// beside the page's header (an older page's, which would otherwise live on for a year and
/// reach every port of the board's name). True when one ended.
fn end_presented_sessions(app: &App, ctx: &Ctx) -> bool {
    let mut ended = false;
    for sid in ctx.caller.sid.iter().chain(ctx.cookie_session.iter()) {
        app.authority.logout(sid);
        ended = true;
    }
    ended
}

/// Ends the caller's session on the server and clears the cookie.
pub fn logout(app: &App, ctx: &Ctx) -> Reply {
    if end_presented_sessions(app, ctx) {
        // Their event streams end before this answer leaves.
        app.engine.bus().revalidate(&app.config().auth);
    }
    Reply {
        body: ctx.out.encode(&Empty {}).into(),
        cookie: Some(cleared_cookie()),
        session: None,
    }
}

pub fn who_am_i(app: &App, ctx: &Ctx) -> Vec<u8> {
    let c = &ctx.caller;
    ctx.out.encode(&WhoAmIReply {
        authenticated_user: &c.username,
        usergroup: &c.usergroup,
        provider: c.provider.as_str(),
        acls: matched_acls(&app.config().auth, c),
        sid: c.sid.as_deref().unwrap_or(""),
    })
}

pub async fn password_hash(app: &App, f: &Fields, ctx: &Ctx) -> Result<Vec<u8>, ConnectError> {
    // Hashing is expensive: once a board has users, only they may ask for it.
    if !app.config().auth.local_users.is_empty() && ctx.caller.is_guest() {
        return Err(ConnectError::new(
            Code::Unauthenticated,
            "log in first to hash a password",
        ));
    }
    let password = f.string("password")?;
    if password.is_empty() {
        return Err(ConnectError::invalid("password: give the password to hash"));
    }
    match app.authority.hash(password).await {
        Ok(hash) => Ok(ctx.out.encode(&HashReply { hash: &hash })),
        Err(HashError::Busy) => Err(ConnectError::new(
            Code::ResourceExhausted,
            "another password is being hashed: try again in a moment",
        )),
        Err(HashError::Failed(_)) => Err(ConnectError::new(
            Code::Internal,
            "hashing failed; see the service log",
        )),
    }
}

pub fn init(app: &App, ctx: &Ctx) -> Vec<u8> {
    let config = app.config();
    let auth = &config.auth;
    let c = &ctx.caller;
    let policy = effective_policy(auth, config.default_policy, c);
    let may_view = |a: &crate::config::Action| decide(auth, c, a, Verb::View) == Decision::Allow;
    ctx.out.encode(&InitReply {
        page_title: &config.page_title,
        show_footer: config.show_footer,
        show_navigation: config.show_navigation,
        current_version: env!("CARGO_PKG_VERSION"),
        root_dashboards: dashboards::root_titles(&config, app.engine.setup().bindings(), may_view),
        auth_local_login: auth.local_users_enabled,
        login_required: c.is_guest() && auth.require_guests_to_login,
        authenticated_user: &c.username,
        authenticated_user_provider: c.provider.as_str(),
        effective_policy: PolicyJson {
            show_diagnostics: policy.show_diagnostics,
            show_log_list: policy.show_log_list,
        },
        additional_links: config
            .additional_links
            .iter()
            .map(|l| LinkJson {
                title: &l.title,
                url: &l.url,
            })
            .collect(),
        banner_message: &config.banner_message,
        banner_css: &config.banner_css,
    })
}
