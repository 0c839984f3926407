//! The API: one function per operation, each short (decode → authorize → call the engine →
//! encode), the one exhaustive mapping from domain errors to Connect codes, and the one login
//! gate (also used by the server for the event stream). Only this module, `protocol` and the
//! server, which carries calls on the wire, know Connect; the server hands in decoded fields,
//! a caller and the codec of the answer, and gets bytes or a `ConnectError` back. The answer
//! messages (`dto`) are this module's own: it hands out only `Out`, which writes them, and
//! the event stream's frames (`encode_event` for the event bus, `keep_alive`). The operations do not know the
//! codec: they read `Fields` and encode their answer structs through `Ctx::out`.

mod catalog;
#[cfg(test)]
mod codec_tests;
mod diagnostics;
mod dto;
mod metrics;
mod rendered;
pub mod routes;
pub mod schema;
mod session;
mod stream;

use std::net::IpAddr;
use std::sync::Arc;

use bytes::Bytes;

pub use dto::{Out, encode_event, keep_alive};
pub use metrics::metrics;
pub use routes::{Op, Route, route};
pub use stream::{end_of as stream_end, subscribe};

use crate::auth::{Authority, token};
use crate::config::{Config, PlainGet};
use crate::engine::{Engine, Error, StartRequest};
use crate::execution::{Execution, Snapshot};
use crate::output;
use crate::permissions::{Caller, Decision, Provider, gate};
use crate::protocol::{Code, ConnectError, Fields};
use dto::{KillReply, LogsReply, ReadyzReply, TrackingIdReply};

/// The one mapping from what the engine refused to what the client sees: the code here,
/// the message from the error itself.
pub fn connect_error(e: Error) -> ConnectError {
    let code = match &e {
        Error::UnknownAction(_)
        | Error::UnknownExecution(_)
        | Error::NoExecutionOf(_)
        | Error::MissingIds => Code::NotFound,
        Error::BadTrackingId(_)
        | Error::BadArgument(_)
        | Error::CommandTooLong { .. }
        | Error::NegativeOffset(_) => Code::InvalidArgument,
        Error::TrackingIdInUse(_) => Code::AlreadyExists,
        Error::ArgumentsUnavailable(_) | Error::Disabled { .. } => Code::FailedPrecondition,
        Error::Denied(_) | Error::SecretsNotReplayed(_) => Code::PermissionDenied,
        Error::LoginRequired => Code::Unauthenticated,
        Error::Stopping | Error::HistoryUnwritable(_) => Code::Unavailable,
        Error::HistoryBehind { .. } | Error::BlockedBehind { .. } => Code::ResourceExhausted,
    };
    ConnectError::new(code, e.to_string())
}

/// The login gate: where guests must log in, a guest is refused. The one check in front of
/// every gated operation, the GET routes, the event stream and `/metrics`.
pub fn login_gate(app: &App, caller: &Caller) -> Result<(), ConnectError> {
    match gate(&app.config().auth, caller) {
        Decision::LoginRequired => Err(connect_error(Error::LoginRequired)),
        Decision::Allow | Decision::Deny => Ok(()),
    }
}

impl From<Error> for ConnectError {
    fn from(e: Error) -> Self {
        connect_error(e)
    }
}

/// What the API works on: the executions engine and the identity state.
pub struct App {
    pub engine: Arc<Engine>,
    pub authority: Arc<Authority>,
    /// The address the listener is bound to: what `--listen` or the config asked for, with
    /// the port the system chose for `:0`. A reload does not move it.
    pub listening: Option<std::net::SocketAddr>,
    /// The names the board answers to without `allowedHosts`, from its hostname at start.
    pub board: crate::origin::Board,
    /// GetDashboard's answers, kept per setup, title, codec and rights.
    pub dashboards: rendered::Dashboards,
}

impl App {
    /// The configuration in force (a reload may swap it between two requests).
    pub fn config(&self) -> Arc<Config> {
        self.engine.config()
    }
}

/// Who sent a request, from where, and how its answer is written.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub caller: Caller,
    pub peer: IpAddr,
    pub out: Out,
    /// Whether the request carried `Actiond-Session` (`auth::identity::SESSION_HEADER`): a
    /// login then answers the session in that header, with no cookie.
    pub session_header: bool,
    /// The session in the `svc-sid-local` cookie when the request identified itself another
    /// way (the header): a cookie an older page left in the browser, which Login and Logout
    /// end, so that it cannot outlive the page's own session on other ports of the board.
    pub cookie_session: Option<String>,
}

/// A successful answer: the body in the request's codec and, for login and logout, a
/// `Set-Cookie` value or the new session for the `Actiond-Session` header.
#[derive(Debug)]
pub struct Reply {
    /// Shared bytes: a kept answer (a dashboard) is handed to every connection without a copy.
    pub body: Bytes,
    pub cookie: Option<String>,
    pub session: Option<String>,
}

impl From<Vec<u8>> for Reply {
    fn from(body: Vec<u8>) -> Reply {
        Bytes::from(body).into()
    }
}

impl From<Bytes> for Reply {
    fn from(body: Bytes) -> Reply {
        Reply {
            body,
            cookie: None,
            session: None,
        }
    }
}

/// A POST operation.
pub async fn call(app: &App, op: Op, f: &Fields, ctx: &Ctx) -> Result<Reply, ConnectError> {
    let engine = &app.engine;
    let caller = &ctx.caller;
    if op.gated() {
        login_gate(app, caller)?;
    }
    let body = match op {
        Op::StartAction => {
            let e = engine.start(start_request(f, ctx)?, caller)?;
            started_reply(&e, &ctx.out).await
        }
        Op::StartActionAndWait => {
            let e = engine.start(start_request(f, ctx)?, caller)?;
            wait_for_entry(&e, &ctx.out).await
        }
        Op::StartActionByGet | Op::StartActionByGetAndWait => {
            return get_start(app, op, &f.string("actionId")?, ctx, StartBy::Post).await;
        }
        Op::RestartAction => {
            let e = engine.restart(&f.string("executionTrackingId")?, caller, Some(ctx.peer))?;
            started_reply(&e, &ctx.out).await
        }
        Op::KillAction => {
            let id = f.string("executionTrackingId")?;
            let r = engine.kill(&id, caller).await?;
            ctx.out.encode(&KillReply {
                execution_tracking_id: &id,
                killed: r.killed,
                already_completed: r.already_completed,
                found: true,
            })
        }
        Op::ExecutionStatus => {
            let e = engine.status(
                &f.string("executionTrackingId")?,
                &f.string("actionId")?,
                caller,
            )?;
            dto::log_entry_reply(&ctx.out, &e.snapshot())
        }
        Op::GetLogs => logs(engine, None, f.int64("startOffset")?, ctx)?,
        Op::GetActionLogs => logs(
            engine,
            Some(&f.string("actionId")?),
            f.int64("startOffset")?,
            ctx,
        )?,
        Op::ValidateArgumentType => catalog::validate_argument(app, f, ctx)?,
        Op::GetReadyz => ctx.out.encode(&ReadyzReply {
            status: if engine.ready() { "OK" } else { "STOPPING" },
        }),
        Op::LocalUserLogin => return session::login(app, f, ctx).await,
        Op::Logout => return Ok(session::logout(app, ctx)),
        Op::WhoAmI => session::who_am_i(app, ctx),
        Op::PasswordHash => session::password_hash(app, f, ctx).await?,
        Op::Init => session::init(app, ctx),
        Op::GetDashboard => return Ok(catalog::get_dashboard(app, f, ctx).await?.into()),
        Op::GetActionBinding => catalog::get_action_binding(app, f, ctx)?,
        Op::GetDiagnostics => diagnostics::get_diagnostics(app, ctx)?,
        Op::SosReport => diagnostics::sos_report(app, ctx)?,
        Op::DumpVars => diagnostics::dump_vars(app, ctx),
        Op::DumpPublicIdActionMap => diagnostics::dump_action_map(app, ctx),
        Op::GetEntities => catalog::get_entities(app, ctx),
        Op::GetEntity => catalog::get_entity(app, f, ctx)?,
        // The server answers streams itself (`server::stream`); they never come here.
        Op::EventStream => {
            return Err(ConnectError::new(
                Code::Internal,
                "EventStream is a streaming call",
            ));
        }
    };
    Ok(body.into())
}

/// `GET /api/WhoAmI`: the same answer as the POST form, behind the same gate.
pub fn get_who_am_i(app: &App, ctx: &Ctx) -> Result<Reply, ConnectError> {
    login_gate(app, &ctx.caller)?;
    Ok(session::who_am_i(app, ctx).into())
}

/// How a start of StartActionByGet[AndWait] arrived.
#[derive(Debug, Clone, Copy)]
pub enum StartBy<'a> {
    /// `GET /api/StartActionByGet[AndWait]/<id>`, with the `key` of its query, if any. Any web
    /// page can make a browser send it, with the board's cookies.
    PlainGet { key: Option<&'a str> },
    /// The POST form: only a client that may send Connect's headers can make it (a page of
    /// another site cannot without the browser asking first, and actiond never says yes).
    Post,
}

/// `GET /api/StartActionByGet[AndWait]/<id>` and the POST forms of those two operations:
/// a start without arguments, so every argument takes its default.
pub async fn get_start(
    app: &App,
    op: Op,
    id: &str,
    ctx: &Ctx,
    by: StartBy<'_>,
) -> Result<Reply, ConnectError> {
    login_gate(app, &ctx.caller)?;
    if let StartBy::PlainGet { key } = by {
        plain_get_allowed(app, id, key, &ctx.caller)?;
    }
    let request = StartRequest {
        binding_id: id.to_string(),
        from: Some(ctx.peer),
        ..StartRequest::default()
    };
    let e = app.engine.start(request, &ctx.caller)?;
    let body = if op == Op::StartActionByGetAndWait {
        wait_for_entry(&e, &ctx.out).await
    } else {
        started_reply(&e, &ctx.out).await
    };
    Ok(body.into())
}

/// Whether a plain GET may start `id` (`config::PlainGet`): with an API token, with the
/// action's link key, or where the config lets any page do it. Neither the session cookie nor
/// Fetch Metadata can decide it: a page's `<img>` carries the cookie, and over plain HTTP to a
/// LAN name the browser sends no Fetch Metadata. An id that names no action goes on to the
/// start, which answers it as any start does.
fn plain_get_allowed(
    app: &App,
    id: &str,
    key: Option<&str>,
    caller: &Caller,
) -> Result<(), ConnectError> {
    if caller.provider == Provider::Token {
        return Ok(());
    }
    let setup = app.engine.setup();
    let Some(action) = setup.action(id) else {
        return Ok(());
    };
    let refusal = match (&action.plain_get, key) {
        (PlainGet::AnyPage, _) => return Ok(()),
        (PlainGet::Key { sha256 }, Some(key)) if token::matches(key, sha256) => return Ok(()),
        (PlainGet::Key { .. }, Some(_)) => {
            "the key in this link is not the action's link key (linkKeySha256): check the link"
        }
        (PlainGet::Key { .. }, None) => {
            "a plain GET starts this action only with its link key (?key=… in the URL) or an \
             API token in the Authorization header, because any web page you open could make \
             your browser send this GET"
        }
        (PlainGet::TokenOnly, _) => {
            "a plain GET starts an action only with an API token in the Authorization header, \
             because any web page you open could make your browser send it: give the action a \
             link key (linkKeySha256) for links and QR codes, or use POST StartAction"
        }
    };
    Err(ConnectError::new(Code::PermissionDenied, refusal))
}

fn start_request(f: &Fields, ctx: &Ctx) -> Result<StartRequest, ConnectError> {
    let mut arguments = Vec::new();
    for (i, a) in f.messages("arguments")?.iter().enumerate() {
        let name = a
            .string("name")
            .map_err(|e| ConnectError::invalid(format!("arguments[{i}].{}", e.message)))?;
        let value = a
            .string("value")
            .map_err(|e| ConnectError::invalid(format!("arguments[{i}].{}", e.message)))?;
        arguments.push((name, value));
    }
    Ok(StartRequest {
        binding_id: action_id(f)?,
        arguments,
        tracking_id: f.string("uniqueTrackingId")?,
        from: Some(ctx.peer),
    })
}

/// The action a start names: `actionId`, or `bindingId` (OliveTin's name for it, which its
/// clients send). Both, naming different actions, is refused rather than one picked.
fn action_id(f: &Fields) -> Result<String, ConnectError> {
    let (action, binding) = (f.string("actionId")?, f.string("bindingId")?);
    if binding.is_empty() || binding == action {
        return Ok(action);
    }
    if action.is_empty() {
        return Ok(binding);
    }
    Err(ConnectError::invalid(format!(
        "actionId {action:?} and bindingId {binding:?} name different actions: send one of \
         them (bindingId is OliveTin's name for actionId)"
    )))
}

/// The tracking id of a start, once its record is on disk: a client told that a run
/// started finds it in the history after any crash.
async fn started_reply(e: &Execution, out: &Out) -> Vec<u8> {
    e.recorded().await;
    out.encode(&TrackingIdReply {
        execution_tracking_id: &e.tracking_id,
    })
}

/// The entry of a finished run, once its end is on disk (`wait` resolves only then).
async fn wait_for_entry(e: &Execution, out: &Out) -> Vec<u8> {
    e.wait().await;
    dto::log_entry_reply(out, &e.snapshot())
}

/// What the output of all the entries of one list answer (GetLogs, GetActionLogs) may take,
/// escaped as JSON. An answer stays in memory until its client has read it, and a client may
/// never read: this bounds what each such client costs (about 20 of them in 16 MiB).
/// ExecutionStatus still gives any one entry whole.
const LIST_OUTPUT_BYTES: usize = 256 * 1024;

/// What one stream of one entry may take in a list answer, however few entries it has.
const LIST_STREAM_BYTES: usize = 16 * 1024;

/// The share of [`LIST_OUTPUT_BYTES`] of each stream of a list answer of `entries` entries.
fn list_stream_budget(entries: usize) -> usize {
    (LIST_OUTPUT_BYTES / (2 * entries.max(1))).min(LIST_STREAM_BYTES)
}

fn logs(
    engine: &Engine,
    binding: Option<&str>,
    offset: i64,
    ctx: &Ctx,
) -> Result<Vec<u8>, ConnectError> {
    let page = engine.logs(binding, offset, &ctx.caller)?;
    let budget = list_stream_budget(page.entries.len());
    let snapshots: Vec<Snapshot> = page
        .entries
        .iter()
        .map(|e| {
            let mut s = e.snapshot();
            for text in [&mut s.stdout, &mut s.stderr] {
                if let Some(short) = output::shortened_for_list(text, budget) {
                    *text = short;
                }
            }
            s
        })
        .collect();
    let size = engine.config().limits.log_history_page_size;
    Ok(ctx
        .out
        .encode(&LogsReply::new(&page, &snapshots, size, offset)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arguments::ArgError;
    use crate::permissions::Verb;

    #[test]
    fn list_answers_share_one_output_budget() {
        for (entries, each) in [(0, 16384), (1, 16384), (8, 16384), (10, 13107), (1000, 131)] {
            assert_eq!(list_stream_budget(entries), each, "{entries}");
            assert!(2 * entries * list_stream_budget(entries) <= LIST_OUTPUT_BYTES);
        }
    }

    #[test]
    fn every_engine_error_has_its_code_and_its_own_message() {
        let cases = [
            (
                Error::UnknownAction("a".into()),
                Code::NotFound,
                "no action with id \"a\"",
            ),
            (
                Error::UnknownExecution("t".into()),
                Code::NotFound,
                "tracking id \"t\"",
            ),
            (
                Error::NoExecutionOf("a".into()),
                Code::NotFound,
                "no execution in the history",
            ),
            (
                Error::MissingIds,
                Code::NotFound,
                "executionTrackingId or an actionId",
            ),
            (
                Error::BadTrackingId("x y".into()),
                Code::InvalidArgument,
                "is invalid",
            ),
            (
                Error::TrackingIdInUse("t".into()),
                Code::AlreadyExists,
                "already used",
            ),
            (
                Error::BadArgument(ArgError {
                    argument: "host".into(),
                    rule: crate::arguments::Broken::Ascii,
                }),
                Code::InvalidArgument,
                "host",
            ),
            (
                Error::CommandTooLong {
                    argument: None,
                    why: crate::executor::TooLong::Whole(2 << 20),
                },
                Code::InvalidArgument,
                "2097152 bytes",
            ),
            (
                Error::ArgumentsUnavailable("t".into()),
                Code::FailedPrecondition,
                "no longer known",
            ),
            (
                Error::SecretsNotReplayed("t".into()),
                Code::PermissionDenied,
                "start the action again and enter them",
            ),
            (
                Error::Denied(Verb::Kill),
                Code::PermissionDenied,
                "the kill permission",
            ),
            (Error::LoginRequired, Code::Unauthenticated, "log in first"),
            (Error::NegativeOffset(-1), Code::InvalidArgument, "got -1"),
            (Error::Stopping, Code::Unavailable, "shutting down"),
            (
                Error::HistoryUnwritable("/s/history.jsonl cannot be written (disk full)".into()),
                Code::Unavailable,
                "no run starts until",
            ),
            (
                Error::HistoryBehind {
                    waiting: 256,
                    file: "/s/history.jsonl".into(),
                },
                Code::ResourceExhausted,
                "historyQueueLength",
            ),
            (
                Error::BlockedBehind {
                    waiting: 64,
                    file: "/s/history.jsonl".into(),
                },
                Code::ResourceExhausted,
                "a quarter of historyQueueLength",
            ),
        ];
        for (error, code, text) in cases {
            let shown = error.to_string();
            let e = connect_error(error);
            assert_eq!(e.code, code, "{shown}");
            assert_eq!(e.message, shown);
            assert!(shown.contains(text), "{shown:?} does not say {text:?}");
        }
    }
}
