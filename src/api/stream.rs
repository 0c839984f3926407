//! EventStream's subscription as the API sees it: the login gate, the bus's bounds as Connect
//! errors, and the caller identified again (`Reidentify`) from the credentials the request
//! presented, each time who-is-who may have changed. A stream whose session ended, whose user
//! or token left the config, or whose guest must now log in, ends with `unauthenticated`;
//! a caller whose groups changed keeps the stream under the new permissions. The server
//! moves the frames; this module decides who receives them and how a stream ends.

use std::net::IpAddr;
use std::sync::Arc;

use super::{App, Ctx, login_gate};
use crate::auth::Authority;
use crate::auth::identity::{self, Presented};
use crate::config::Auth;
use crate::events::{Cut, From, Refused, Reidentify, Revoked, Subscription};
use crate::permissions::{Caller, Decision, gate};
use crate::protocol::{Code, ConnectError};

/// A stream's caller, as its request identified it, and what it presented.
struct StreamCaller {
    authority: Arc<Authority>,
    presented: Presented,
    peer: IpAddr,
    first: Caller,
}

impl Reidentify for StreamCaller {
    fn again(&self, auth: &Auth) -> Result<Caller, Revoked> {
        let gone = Revoked::Gone(self.first.provider);
        let now = self
            .authority
            .identify(auth, self.peer, &self.presented.credentials())
            .map_err(|_| gone)?;
        if gate(auth, &now) == Decision::LoginRequired {
            return Err(Revoked::LoginRequired);
        }
        if now.username != self.first.username || now.provider != self.first.provider {
            return Err(gone);
        }
        Ok(now)
    }
}

/// Subscribes the caller of `ctx` (behind the login gate), to be identified again from
/// `presented` whenever users, tokens or sessions change.
pub fn subscribe(app: &App, ctx: Ctx, presented: Presented) -> Result<Subscription, ConnectError> {
    login_gate(app, &ctx.caller)?;
    let form = super::dto::form(ctx.out.codec());
    let who = StreamCaller {
        authority: Arc::clone(&app.authority),
        presented,
        peer: ctx.peer,
        first: ctx.caller.clone(),
    };
    let config = app.config();
    // A proxy carries everyone, so it counts for no network (as for connections).
    let from = (!identity::trusted(&config.auth.trusted_proxies, ctx.peer)).then(|| From {
        address: ctx.peer,
        most: config.limits.max_event_streams_per_address,
    });
    match app
        .engine
        .bus()
        .subscribe_as(ctx.caller, Box::new(who), form, from)
    {
        Ok(sub) => Ok(sub),
        Err(Refused::TooMany(n)) => Err(ConnectError::new(
            Code::ResourceExhausted,
            format!("{n} event streams are open, the most this service allows: try again later"),
        )),
        Err(Refused::TooManyFrom(n)) => Err(ConnectError::new(
            Code::ResourceExhausted,
            format!(
                "your address has {n} event streams open, the most one address may \
                 (maxEventStreamsPerAddress): close one, or try again later"
            ),
        )),
        Err(Refused::TooManyFromNetwork(n)) => Err(ConnectError::new(
            Code::ResourceExhausted,
            format!(
                "your IPv6 network (its /64) has {n} event streams open, the most one network \
                 may (a quarter of all): close one, or try again later"
            ),
        )),
        Err(Refused::Closed) => Err(ConnectError::new(
            Code::Unavailable,
            "actiond is shutting down",
        )),
    }
}

/// How a stream the bus cut off ends.
pub fn end_of(cut: &Cut) -> ConnectError {
    match cut {
        Cut::FellBehind => ConnectError::new(
            Code::ResourceExhausted,
            "fell behind: reconnect and re-read the logs",
        ),
        Cut::Revoked(why) => ConnectError::new(Code::Unauthenticated, why.to_string()),
        Cut::Crowded => ConnectError::new(
            Code::ResourceExhausted,
            "every event stream was taken and your address (or IPv6 network) held more than \
             an even share of them: this one was closed for another address; close a page \
             or try again later",
        ),
        Cut::ForUser => ConnectError::new(
            Code::ResourceExhausted,
            "every event stream was taken: this guest's stream was closed for a user who \
             logged in; log in, or try again later",
        ),
    }
}
