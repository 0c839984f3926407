//! The HTTP server: the only code that touches sockets. It accepts connections on an
//! injected listener (at most `maxConnections` at once; beyond that they wait in the kernel
//! backlog), sets TCP_NODELAY, serves HTTP/1.1 with a header-read timeout, chooses each
//! call's protocol and codec once from its Content-Type (`protocol::Wire`: Connect with JSON
//! or protobuf, gRPC-Web), applies that protocol's request-header rules through `protocol`,
//! reads bodies with a bound that holds while they stream in (and after gzip), and hands
//! decoded requests to `api`; `framing` writes the answer as the protocol frames it. Every
//! refused API request is logged at DEBUG (rate-limited) with its operation, caller and
//! reason. On shutdown it stops accepting, lets the engine stop running executions, and
//! closes.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Either, Full, LengthLimitError, Limited};
use hyper::body::Frame;
use hyper::body::Incoming;
use hyper::header::{
    ACCEPT_ENCODING, ALLOW, AUTHORIZATION, AsHeaderName, CONTENT_ENCODING, CONTENT_TYPE, COOKIE,
    HOST, HeaderName, HeaderValue, IF_NONE_MATCH, ORIGIN, REFERER,
};
use hyper::http::request::Parts;
#[cfg(not(feature = "grpc"))]
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError, mpsc};
use tracing::{debug, info, warn};

use crate::api::Out;
use crate::api::{self, App, Ctx, Op, Route, schema};
use crate::auth::identity::{self, Credentials, Presented, Refusal};
use crate::config::{Auth, ProtocolHeader};
use crate::events::{Cut, Subscription};
use crate::origin::{self, Resource};
use crate::permissions::Caller;
use crate::protocol::{self, Code, Codec, ConnectError, Encoding, Fields, Protocol, Wire};
use crate::ratelog;

mod connection;
mod framing;

use connection::{Open, Over, Share, Shares, Timed, Tracker};
use framing::Framing;

/// An answer's body: a whole message, or an event stream fed envelope by envelope.
type Answer = Response<Either<Full<Bytes>, StreamBody>>;

/// How long a stream waits for a client that stopped reading before it gives up on it.
const STALLED: Duration = Duration::from_secs(10);

/// How long an event stream stays silent before it carries a keep-alive
/// (`protocol::KEEP_ALIVE`). The web page takes a stream that carried nothing for more than
/// twice this as dead (a board that lost power, a phone's stale socket, a proxy that stopped
/// forwarding) and reconnects; proxies with an idle timeout keep the stream open too.
const KEEP_ALIVE: Duration = Duration::from_secs(5);

/// A response body written as frames arrive on a channel, each flushed as it comes
/// (chunked on HTTP/1.1) and written as its protocol frames it (`Framing`). It ends when the
/// channel closes.
pub struct StreamBody {
    rx: mpsc::Receiver<Bytes>,
    framing: Framing,
}

impl hyper::body::Body for StreamBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let framing = self.framing;
        self.rx
            .poll_recv(cx)
            .map(|frame| frame.map(|b| Ok(framing.frame(b))))
    }
}

fn full(body: impl Into<Bytes>) -> Either<Full<Bytes>, StreamBody> {
    Either::Left(Full::new(body.into()))
}

/// How long open connections get to finish after shutdown began and executions ended.
const CLOSE_GRACE: Duration = Duration::from_millis(400);

/// Largest head (request line and headers) a client may send, and the most hyper buffers
/// per connection in each direction: 16 KiB is twice what nginx allows a header line by
/// default, and keeps `maxConnections` connections within a few MiB.
const MAX_BUFFER: usize = 16 * 1024;

/// A connection that has waited this long on its client without a whole request may be
/// closed for a newcomer when every slot is taken; a younger one is a request under way.
const MIN_WAIT_BEFORE_CLOSE: Duration = Duration::from_millis(250);

/// How often a newcomer that found every slot taken, and no connection to close, looks again.
const RECHECK: Duration = Duration::from_millis(50);

/// A new connection refused by its address's or network's share (answered 429; dropping it
/// closes it).
struct OverShare;

/// The place of a new connection in its address's and its IPv6 /64's share of the slots
/// (`None` for a trusted proxy, which carries everyone).
fn share_for(
    app: &App,
    shares: &Arc<Shares>,
    open: &Open,
    stream: &tokio::net::TcpStream,
    peer: SocketAddr,
) -> Result<Option<Share>, OverShare> {
    let config = app.config();
    if identity::trusted(&config.auth.trusted_proxies, peer.ip()) {
        return Ok(None);
    }
    let most = config.limits.max_connections_per_address;
    let network_most = connection::network_share(most, config.limits.max_connections);
    let over = match shares.admit(peer.ip(), most, network_most) {
        Ok(share) => return Ok(Some(share)),
        Err(over) => over,
    };
    // Inside a full /64, an address under an even split of it takes the place of the
    // connection that waited longest on its client of the address holding the most.
    if matches!(over, Over::Network(_))
        && let Some(crowd) = shares.crowd_within(peer.ip(), network_most)
        && open.close_slowest_of(crowd, MIN_WAIT_BEFORE_CLOSE)
    {
        if let Some(more) = ratelog::REFUSED_REQUESTS.admit() {
            debug!(%peer, "closed a connection of {crowd}, which holds the most of its /64, to make room{more}");
        }
        return Ok(Some(shares.admit_for_crowd(peer.ip())));
    }
    if let Some(more) = ratelog::REFUSED_REQUESTS.admit() {
        debug!(%peer, "refused: {over:?} connections held already{more}");
    }
    // A short answer fits in the socket's buffer; a client that reads nothing loses it with
    // the connection.
    let _ = stream.try_write(&connection::over_share(over));
    Err(OverShare)
}

/// A connection slot for a connection already accepted when every slot was taken: the
/// connection that has waited longest on its client is closed to make room
/// (`Open::close_slowest`); when none has waited long enough, this waits for a slot and looks
/// again now and then. `None` once the semaphore is closed.
async fn slot(slots: &Arc<Semaphore>, open: &Open) -> Option<OwnedSemaphorePermit> {
    loop {
        match Arc::clone(slots).try_acquire_owned() {
            Ok(p) => return Some(p),
            Err(TryAcquireError::Closed) => return None,
            Err(TryAcquireError::NoPermits) => {}
        }
        open.close_slowest(MIN_WAIT_BEFORE_CLOSE);
        tokio::select! {
            p = Arc::clone(slots).acquire_owned() => return p.ok(),
            _ = tokio::time::sleep(RECHECK) => {}
        }
    }
}

/// Whether a connection that came when every slot was taken is refused at once: its network
/// holds more than an even split of the slots among the networks holding them. Such a
/// connection is answered 429 and closed, evicting nobody, so a crowd reconnecting as fast as
/// it is closed costs an accept and a write each, and the queue drains quickly to a newcomer
/// from a network with fewer.
fn beyond_fair_share(share: Option<&Share>, stream: &tokio::net::TcpStream, slots: usize) -> bool {
    let Some(share) = share else {
        return false;
    };
    let Some(fair) = share.beyond_fair(slots) else {
        return false;
    };
    if let Some(more) = ratelog::REFUSED_REQUESTS.admit() {
        debug!("refused: every slot is taken and the address holds more than {fair}{more}");
    }
    let _ = stream.try_write(&connection::over_fair_share(fair));
    true
}

/// The protocol handler of every connection: HTTP/1.1, and with the `grpc` feature HTTP/2
/// too (cleartext with prior knowledge, as gRPC clients speak it), told apart by the
/// connection's first bytes.
#[cfg(not(feature = "grpc"))]
type Http = http1::Builder;
#[cfg(feature = "grpc")]
type Http = hyper_util::server::conn::auto::Builder<hyper_util::rt::TokioExecutor>;

/// How many requests one HTTP/2 connection may have under way at once: its streams share
/// one connection slot, so they are bounded as a few connections would be.
#[cfg(feature = "grpc")]
const MAX_STREAMS: u32 = 8;

fn http_builder() -> Http {
    #[cfg(not(feature = "grpc"))]
    let mut http = http1::Builder::new();
    #[cfg(feature = "grpc")]
    let mut http = Http::new(hyper_util::rt::TokioExecutor::new());
    #[cfg(feature = "grpc")]
    http.http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(MAX_STREAMS)
        .max_header_list_size(MAX_BUFFER as u32)
        .max_send_buf_size(MAX_BUFFER);
    #[cfg(feature = "grpc")]
    let mut http1 = http.http1();
    #[cfg(not(feature = "grpc"))]
    let http1 = &mut http;
    // `Timed` keeps every deadline (hyper's own header timer would close a late head
    // without the 408 a client can act on).
    http1
        .timer(TokioTimer::new())
        .header_read_timeout(None)
        .max_buf_size(MAX_BUFFER);
    http
}

/// Serves until `shutdown` resolves, then shuts down in order.
pub async fn serve(
    listener: TcpListener,
    app: Arc<App>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(app.config().limits.max_connections));
    let shares = Arc::new(Shares::default());
    let open = Arc::new(Open::default());
    let graceful = GracefulShutdown::new();
    let http = Arc::new(http_builder());
    tokio::pin!(shutdown);

    let most = app.config().limits.max_connections;
    loop {
        // A free slot, or none: the next connection is then accepted anyway and judged.
        let free = match Arc::clone(&slots).try_acquire_owned() {
            Ok(p) => Some(p),
            Err(TryAcquireError::Closed) => break,
            Err(TryAcquireError::NoPermits) => None,
        };
        let (stream, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(conn) => conn,
                Err(e) => {
                    // Out of descriptors and the like: back off instead of spinning.
                    warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        // Without it a keep-alive client waits ~40 ms per call for delayed ACKs.
        let _ = stream.set_nodelay(true);
        let Ok(share) = share_for(&app, &shares, &open, &stream, peer) else {
            continue;
        };
        let permit = match free {
            Some(p) => p,
            None if beyond_fair_share(share.as_ref(), &stream, most) => continue,
            None => tokio::select! {
                p = slot(&slots, &open) => match p { Some(p) => p, None => break },
                _ = &mut shutdown => break,
            },
        };
        let tracker = Tracker::new(app.config().limits.client_timeout);
        let registered = open.register(&tracker, peer.ip());
        let app = Arc::clone(&app);
        let conn_tracker = Arc::clone(&tracker);
        let service = service_fn(move |req| {
            let app = Arc::clone(&app);
            let tracker = Arc::clone(&conn_tracker);
            async move {
                let answer = handle(&app, peer, &tracker, req).await;
                Ok::<_, Infallible>(answer.map(|body| Tracked { body, tracker }))
            }
        });
        let io = TokioIo::new(Timed::new(stream, Arc::clone(&tracker)));
        let (http, watcher) = (Arc::clone(&http), graceful.watcher());
        tokio::spawn(async move {
            let conn = watcher.watch(http.serve_connection(io, service));
            tokio::select! {
                ended = conn => if let Err(e) = ended
                    && let Some(more) = ratelog::CONNECTION_ERRORS.admit()
                {
                    debug!(%peer, "connection ended: {e}{more}");
                },
                // Dropping the connection closes its socket.
                _ = tracker.closed() => {
                    if let Some(more) = ratelog::REFUSED_REQUESTS.admit() {
                        debug!(%peer, "closed a connection that waited longest on its client, to make room{more}");
                    }
                }
            }
            drop(registered);
            drop(share);
            drop(permit);
        });
    }

    info!("shutting down: no new connections");
    drop(listener);
    app.engine.shutdown().await;
    app.engine.close_streams();
    // Waiting calls were answered as their executions ended; give those replies a moment
    // to be written, then close whatever is left.
    if tokio::time::timeout(CLOSE_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        debug!("closing connections that did not finish in time");
    }
    info!("stopped");
    Ok(())
}

async fn handle(app: &App, peer: SocketAddr, tracker: &Tracker, req: Request<Incoming>) -> Answer {
    let (parts, incoming) = req.into_parts();
    let limits = &app.config().limits;
    let body = Body {
        incoming,
        max: limits.max_request_body_bytes,
        by: tracker.serving(),
        timeout: limits.client_timeout,
        tracker,
    };
    let route = api::route(parts.method.as_str(), parts.uri.path());
    if let Err(e) = provenance(app, &parts, &route) {
        refused(parts.uri.path(), None, peer, &e);
        return refuse(body, &e).await;
    }
    match route {
        Route::Call(op) if op.streaming() => stream(app, &parts, body, peer).await,
        Route::Call(op) => call(app, op, &parts, body, peer).await,
        // Every answer but a unary call's is decided without the body. Read it anyway
        // (within the body limit) before answering: a client still sending when hyper
        // closes the connection sees EPIPE instead of our answer.
        route => match body.drain().await {
            Ok(()) => answer(app, route, &parts, peer).await,
            Err(late) => error(&late),
        },
    }
}

/// Logs a refused API request at DEBUG, within the rate limit of such lines: what was asked
/// (the operation, or the path when none was chosen yet), who asked (the caller once
/// identified, and always the address), and the answer with its reason.
fn refused(what: &str, caller: Option<&Caller>, peer: SocketAddr, e: &ConnectError) {
    let Some(more) = ratelog::REFUSED_REQUESTS.admit() else {
        return;
    };
    let code = e.code.as_str();
    match caller {
        Some(c) => debug!(
            "refused {what} from {} ({}) at {peer}: {code}: {}{more}",
            c.username,
            c.provider.as_str(),
            e.message
        ),
        None => debug!("refused {what} from {peer}: {code}: {}{more}", e.message),
    }
}

/// Answers `e` once the body is read; a body that is late gets the 408 instead.
async fn refuse(body: Body<'_>, e: &ConnectError) -> Answer {
    match body.drain().await {
        Ok(()) => error(e),
        Err(late) => error(&late),
    }
}

/// The one check of where a request comes from (the Host it names, and for a browser the
/// site and origin it comes from), made before anything else looks at the request: every
/// operation, GET start, `/metrics`, `/readyz`, the event stream and the page's files.
fn provenance(app: &App, parts: &Parts, route: &Route<'_>) -> Result<(), ConnectError> {
    let target = match route {
        Route::Index | Route::Static(_) => Resource::Page,
        _ => Resource::Api,
    };
    let mut hosts = parts.headers.get_all(HOST).iter();
    let host = match (hosts.next(), hosts.next()) {
        (_, Some(_)) => {
            return Err(ConnectError::invalid(
                "the request has more than one Host header",
            ));
        }
        (h, None) => h.map(|v| v.to_str().unwrap_or("\u{FFFD}")),
    };
    // A request line with a whole URL (`GET http://name/…`) names its host there.
    let host = parts.uri.authority().map(|a| a.as_str()).or(host);
    let headers = origin::Headers {
        host,
        origin: header(parts, &ORIGIN),
        referer: header(parts, &REFERER),
        fetch_site: header(parts, &SEC_FETCH_SITE),
        fetch_mode: header(parts, &SEC_FETCH_MODE),
        fetch_dest: header(parts, &SEC_FETCH_DEST),
    };
    origin::check(&app.config().allowed, &app.board, &headers, target)
        .map_err(|refused| ConnectError::new(Code::PermissionDenied, refused.message()))
}

/// The answer to everything that is not a unary call.
async fn answer(app: &App, route: Route<'_>, parts: &Parts, peer: SocketAddr) -> Answer {
    match route {
        // Calls are answered by `call` and `stream`.
        Route::Call(op) => error(&ConnectError::new(
            Code::Internal,
            format!("{} was misrouted", op.name()),
        )),
        Route::GetStart(op, id) => {
            let mut caller = None;
            let result = async {
                let limit = Wire::JSON.deadline(|name| protocol_header(parts, name))?;
                let ctx = context(app, parts, peer, Out::new(op, Codec::Json))?;
                let key = query_value(parts.uri.query(), "key");
                let by = api::StartBy::PlainGet {
                    key: key.as_deref(),
                };
                let result = with_deadline(limit, api::get_start(app, op, &id, &ctx, by)).await;
                caller = Some(ctx.caller);
                result
            };
            let result = result.await;
            if let Err(e) = &result {
                refused(op.name(), caller.as_ref(), peer, e);
            }
            framing::unary(Wire::JSON, result)
        }
        Route::GetWhoAmI => {
            let ctx = context(app, parts, peer, Out::new(Op::WhoAmI, Codec::Json));
            let result = ctx
                .as_ref()
                .map_err(Clone::clone)
                .and_then(|ctx| api::get_who_am_i(app, ctx));
            if let Err(e) = &result {
                refused("WhoAmI", ctx.as_ref().ok().map(|c| &c.caller), peer, e);
            }
            framing::unary(Wire::JSON, result)
        }
        Route::Readyz => {
            if app.engine.ready() {
                text(StatusCode::OK, "OK")
            } else {
                text(StatusCode::SERVICE_UNAVAILABLE, "STOPPING")
            }
        }
        Route::Metrics => match context(app, parts, peer, Out::new(Op::GetReadyz, Codec::Json))
            .and_then(|ctx| api::metrics(app, &ctx))
        {
            Ok(body) => {
                let mut r = Response::new(full(body));
                r.headers_mut().insert(
                    CONTENT_TYPE,
                    HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
                );
                r
            }
            Err(e) => {
                refused("/metrics", None, peer, &e);
                error(&e)
            }
        },
        Route::Index => static_file(app, "index.html", parts),
        Route::Static(name) => static_file(app, name, parts),
        Route::UnknownOp(name) => {
            let e = ConnectError::new(Code::Unimplemented, format!("no operation named {name:?}"))
                .with_status(404);
            refused(parts.uri.path(), None, peer, &e);
            error(&e)
        }
        Route::WrongMethod(allow) => {
            let e = ConnectError::new(
                Code::Unknown,
                format!("method not allowed here: use {allow}"),
            )
            .with_status(405);
            refused(parts.uri.path(), None, peer, &e);
            let mut r = error(&e);
            r.headers_mut()
                .insert(ALLOW, HeaderValue::from_static(allow));
            r
        }
        Route::NotFound => text(StatusCode::NOT_FOUND, "not found\n"),
    }
}

/// The first value of `name` in a URL query (`a=1&key=x`), percent-decoded (`+` is a space,
/// as forms write it); `None` when absent or not valid UTF-8.
fn query_value<'a>(query: Option<&'a str>, name: &str) -> Option<std::borrow::Cow<'a, str>> {
    query?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if k != name {
            return None;
        }
        if v.contains('+') {
            api::routes::percent_decode(&v.replace('+', " ")).map(|c| c.into_owned().into())
        } else {
            api::routes::percent_decode(v)
        }
    })
}

// The request headers looked up on every call, parsed once: a lookup by `&str` parses and
// checks the name each time (about 440 instructions, 11 lookups per press: 5 % of the
// service's own instructions per press, scripts/profile.sh).
static SEC_FETCH_SITE: HeaderName = HeaderName::from_static("sec-fetch-site");
static SEC_FETCH_MODE: HeaderName = HeaderName::from_static("sec-fetch-mode");
static SEC_FETCH_DEST: HeaderName = HeaderName::from_static("sec-fetch-dest");
static SESSION: HeaderName = HeaderName::from_static(identity::SESSION_HEADER);
static CONNECT_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("connect-protocol-version");
static CONNECT_TIMEOUT_MS: HeaderName = HeaderName::from_static("connect-timeout-ms");
static CONNECT_CONTENT_ENCODING: HeaderName = HeaderName::from_static("connect-content-encoding");

/// A header the protocol module names by `&str` (`Wire::deadline`,
/// `Wire::envelope_encoding_header`), through the parsed name where it is one of Connect's.
fn protocol_header<'a>(parts: &'a Parts, name: &str) -> Option<&'a str> {
    match name {
        "connect-timeout-ms" => header(parts, &CONNECT_TIMEOUT_MS),
        "connect-content-encoding" => header(parts, &CONNECT_CONTENT_ENCODING),
        _ => header(parts, name),
    }
}

fn header(parts: &Parts, name: impl AsHeaderName) -> Option<&str> {
    // A header value that is not visible ASCII cannot match any rule; show it as such.
    parts
        .headers
        .get(name)
        .map(|v| v.to_str().unwrap_or("\u{FFFD}"))
}

/// What the request presents to identify its caller: a bearer token, the trusted header
/// (when configured), the session in `Actiond-Session` (the page's) or else the cookie.
fn credentials<'a>(auth: &Auth, parts: &'a Parts) -> Credentials<'a> {
    let named = |name: &str| {
        if name.is_empty() {
            None
        } else {
            header(parts, name)
        }
    };
    let session = header(parts, &SESSION)
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .or_else(|| cookie_session(parts));
    Credentials {
        bearer: header(parts, &AUTHORIZATION).and_then(identity::bearer),
        header_user: named(&auth.http_header_username),
        header_group: named(&auth.http_header_usergroup),
        session,
    }
}

/// The session id in the request's `svc-sid-local` cookie.
fn cookie_session(parts: &Parts) -> Option<&str> {
    parts
        .headers
        .get_all(&COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(identity::session_cookie)
}

/// Who sent the request, and how its answer is written. A bearer token that matches nothing
/// is refused here, for every operation: it is a client's mistake that must not pass as the
/// guest.
fn context(app: &App, parts: &Parts, peer: SocketAddr, out: Out) -> Result<Ctx, ConnectError> {
    let auth = &app.config().auth;
    match app
        .authority
        .identify(auth, peer.ip(), &credentials(auth, parts))
    {
        Ok(caller) => Ok(Ctx {
            peer: peer.ip(),
            out,
            session_header: parts.headers.contains_key(&SESSION),
            cookie_session: cookie_session(parts)
                .filter(|sid| caller.sid.as_deref() != Some(*sid))
                .map(str::to_string),
            caller,
        }),
        Err(Refusal::UnknownToken) => Err(ConnectError::new(
            Code::Unauthenticated,
            "the API token in the Authorization header is not known: check it against authApiTokens",
        )),
    }
}

/// EventStream. Once the handler is chosen, every error goes into the last frame (Connect's
/// end-stream envelope, gRPC's trailers) with HTTP 200 (clients ignore the body of any other
/// status). The subscription exists before the headers are sent, so a client that starts an
/// action as soon as it sees them gets every event of it.
async fn stream(app: &App, parts: &Parts, body: Body<'_>, peer: SocketAddr) -> Answer {
    let wire = match negotiate(parts, true) {
        Ok(wire) => wire,
        Err(e) => {
            refused("EventStream", None, peer, &e);
            return refuse(body, &e).await;
        }
    };
    let request = body.read(Encoding::Identity).await;
    if let Err(e) = &request
        && e.status == 408
    {
        return error(e);
    }
    let mut caller = None;
    let subscribed = (|| -> Result<(Subscription, Option<Duration>), ConnectError> {
        protocol_version(app, wire, parts)?;
        let limit = wire.deadline(|name| protocol_header(parts, name))?;
        let ctx = context(app, parts, peer, Out::new(Op::EventStream, wire.codec))?;
        caller = Some(ctx.caller.clone());
        // Enveloped messages name their compression in a header of their own.
        let encoding = protocol::parse_content_encoding(protocol_header(
            parts,
            wire.envelope_encoding_header(),
        ))?;
        let max = app.config().limits.max_request_body_bytes;
        let raw = framing::request(wire, request?)?;
        let message = protocol::single_envelope(&raw, encoding, max)?;
        Fields::decode(wire.codec, &message, schema::messages(Op::EventStream).0)?;
        // Kept so the caller can be identified again after logins, logouts and reloads.
        let presented = Presented::of(&credentials(&app.config().auth, parts));
        Ok((api::subscribe(app, ctx, presented)?, limit))
    })();
    let (tx, rx) = mpsc::channel(16);
    match subscribed {
        Ok((sub, limit)) => {
            tokio::spawn(pump(sub, limit, tx, wire));
        }
        Err(e) => {
            refused("EventStream", caller.as_ref(), peer, &e);
            let _ = tx.try_send(Bytes::from(wire.end(Some(&e))));
        }
    }
    let mut r = Response::new(Either::Right(StreamBody {
        rx,
        framing: Framing::of(wire),
    }));
    let h = r.headers_mut();
    h.insert(
        CONTENT_TYPE,
        HeaderValue::from_static(wire.content_type(true)),
    );
    h.insert("cache-control", HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

/// The protocol and codec of a call (`Wire::negotiate`); gRPC itself only over HTTP/2.
fn negotiate(parts: &Parts, streaming: bool) -> Result<Wire, ConnectError> {
    let wire = Wire::negotiate(header(parts, &CONTENT_TYPE), streaming)?;
    if wire.protocol == Protocol::Grpc && parts.version != hyper::Version::HTTP_2 {
        return Err(ConnectError::new(
            Code::Unknown,
            "gRPC (application/grpc) needs HTTP/2, which this connection is not: send gRPC-Web \
             (application/grpc-web+proto) or Connect (application/proto) over HTTP/1.1",
        )
        .with_status(415));
    }
    Ok(wire)
}

/// Connect's `Connect-Protocol-Version` rule, as `connectProtocolHeader` sets it; gRPC has
/// no such header.
fn protocol_version(app: &App, wire: Wire, parts: &Parts) -> Result<(), ConnectError> {
    if wire.protocol != Protocol::Connect {
        return Ok(());
    }
    let required = app.config().connect_protocol_header == ProtocolHeader::Required;
    protocol::check_protocol_version(header(parts, &CONNECT_PROTOCOL_VERSION), required)
}

/// Moves one subscriber's events to its response body, with a keep-alive in the stream's
/// codec after each `KEEP_ALIVE` of quiet, until the bus ends the subscription (service
/// stopping, or the subscriber fell behind), the deadline passes, or the client goes away;
/// then writes the end of the stream as its protocol writes it.
async fn pump(mut sub: Subscription, limit: Option<Duration>, tx: mpsc::Sender<Bytes>, wire: Wire) {
    let deadline = async {
        match limit {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(deadline);
    // Reset by every frame sent: only a quiet stream carries keep-alives.
    let quiet = tokio::time::sleep(KEEP_ALIVE);
    tokio::pin!(quiet);
    let end = loop {
        let frame = tokio::select! {
            frame = sub.rx.recv() => match (frame, sub.cut()) {
                // A caller who is gone gets nothing more, not even what was queued.
                (_, Some(cut @ Cut::Revoked(_))) => break Some(api::stream_end(&cut)),
                (Some(f), _) => f,
                (None, cut) => break cut.as_ref().map(api::stream_end),
            },
            _ = &mut quiet => api::keep_alive(wire.codec),
            _ = &mut deadline => break Some(ConnectError::new(
                Code::DeadlineExceeded,
                "the call's deadline (Connect-Timeout-Ms or grpc-timeout) passed",
            )),
            _ = tx.closed() => return,
        };
        // A client that stops reading is let go rather than waited on forever.
        if tx.send_timeout(frame, STALLED).await.is_err() {
            return;
        }
        quiet
            .as_mut()
            .reset(tokio::time::Instant::now() + KEEP_ALIVE);
    };
    let _ = tx
        .send_timeout(Bytes::from(wire.end(end.as_ref())), STALLED)
        .await;
}

/// A unary POST operation: its protocol's checks in the order a client can act on them,
/// then the operation; a refusal is logged with the caller once known.
async fn call(app: &App, op: Op, parts: &Parts, body: Body<'_>, peer: SocketAddr) -> Answer {
    let wire = match negotiate(parts, false) {
        Ok(wire) => wire,
        Err(e) => {
            refused(op.name(), None, peer, &e);
            return refuse(body, &e).await;
        }
    };
    let checked = (|| {
        protocol_version(app, wire, parts)?;
        let limit = wire.deadline(|name| protocol_header(parts, name))?;
        // Connect compresses a unary body whole; gRPC each envelope, as it says.
        let encoding = protocol::parse_content_encoding(header(
            parts,
            if wire.enveloped(false) {
                wire.envelope_encoding_header()
            } else {
                CONTENT_ENCODING.as_str()
            },
        ))?;
        let ctx = context(app, parts, peer, Out::new(op, wire.codec))?;
        Ok((limit, encoding, ctx))
    })();
    let (limit, encoding, ctx) = match checked {
        Ok(c) => c,
        Err(e) => {
            refused(op.name(), None, peer, &e);
            return framing::unary(wire, body.drain().await.and(Err(e)));
        }
    };
    let work = async {
        let message = if wire.enveloped(false) {
            let raw = framing::request(wire, body.read(Encoding::Identity).await?)?;
            let max = app.config().limits.max_request_body_bytes;
            Bytes::from(protocol::single_envelope(&raw, encoding, max)?)
        } else {
            body.read(encoding).await?
        };
        let fields = Fields::decode(wire.codec, &message, schema::messages(op).0)?;
        api::call(app, op, &fields, &ctx).await
    };
    let result = with_deadline(limit, work).await;
    if let Err(e) = &result {
        refused(op.name(), Some(&ctx.caller), peer, e);
    }
    framing::unary(wire, result)
}

async fn with_deadline<T>(
    limit: Option<Duration>,
    work: impl Future<Output = Result<T, ConnectError>>,
) -> Result<T, ConnectError> {
    match limit {
        None => work.await,
        Some(d) => tokio::time::timeout(d, work).await.unwrap_or_else(|_| {
            Err(ConnectError::new(
                Code::DeadlineExceeded,
                "the call's deadline (Connect-Timeout-Ms or grpc-timeout) passed; an execution \
                 that was started goes on",
            ))
        }),
    }
}

/// A request's body and the bounds it is read within: `max` bytes (also after
/// decompression; clients send chunked bodies without Content-Length, so the bound holds
/// while it streams in), and the whole request by `by`.
struct Body<'a> {
    incoming: Incoming,
    max: usize,
    by: tokio::time::Instant,
    timeout: Duration,
    tracker: &'a Tracker,
}

impl Body<'_> {
    /// Reads and discards a body nobody needs, at most `max` bytes of it. A larger body is
    /// abandoned (hyper then closes the connection, which is what such a client deserves);
    /// a late one is an error, answered with 408.
    async fn drain(self) -> Result<(), ConnectError> {
        let read =
            tokio::time::timeout_at(self.by, Limited::new(self.incoming, self.max).collect());
        let late = read.await.is_err();
        self.tracker.body_read();
        if late {
            return Err(Body::late_error(self.timeout));
        }
        Ok(())
    }

    /// A body not in by the request's deadline: 408, with Connect's code for a deadline.
    fn late_error(timeout: Duration) -> ConnectError {
        ConnectError::new(
            Code::DeadlineExceeded,
            format!(
                "the request did not arrive within clientTimeout ({} s)",
                timeout.as_secs()
            ),
        )
        .with_status(408)
    }

    /// The whole body, decompressed when `encoding` says so.
    async fn read(self, encoding: Encoding) -> Result<Bytes, ConnectError> {
        let max = self.max;
        let too_big = || {
            ConnectError::new(
                Code::ResourceExhausted,
                format!("the request body is larger than {max} bytes"),
            )
        };
        let read = tokio::time::timeout_at(self.by, Limited::new(self.incoming, max).collect());
        let read = read.await;
        self.tracker.body_read();
        let raw = match read {
            Err(_) => return Err(Body::late_error(self.timeout)),
            Ok(Ok(c)) => c.to_bytes(),
            Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => return Err(too_big()),
            Ok(Err(e)) => {
                return Err(ConnectError::invalid(format!(
                    "could not read the request body: {e}"
                )));
            }
        };
        if encoding == Encoding::Identity || raw.is_empty() {
            return Ok(raw);
        }
        protocol::gunzip(&raw, max).map(Bytes::from)
    }
}

/// An answer's body that tells its connection when it has been handed over whole, so that
/// the connection's idle time starts then.
pub struct Tracked {
    body: Either<Full<Bytes>, StreamBody>,
    tracker: Arc<Tracker>,
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.tracker.answered();
    }
}

fn json(status: StatusCode, body: Vec<u8>) -> Answer {
    let mut r = Response::new(full(body));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

fn error(e: &ConnectError) -> Answer {
    let status = StatusCode::from_u16(e.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut r = json(status, e.body());
    if e.status == 415 {
        r.headers_mut()
            .insert("accept-post", HeaderValue::from_static(protocol::ACCEPTED));
    }
    if e.status == 408 {
        // The rest of a late body is not worth reading.
        r.headers_mut()
            .insert("connection", HeaderValue::from_static("close"));
    }
    r
}

fn text(status: StatusCode, body: &'static str) -> Answer {
    let mut r = Response::new(full(body.as_bytes()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// A file of the web page; `web` decides the headers and the body (gzip, ETag, 304, cache),
/// and names the manifest after the config's `pageTitle`.
fn static_file(app: &App, name: &str, parts: &Parts) -> Answer {
    let when = crate::web::Conditions {
        accept_encoding: header(parts, &ACCEPT_ENCODING),
        if_none_match: header(parts, &IF_NONE_MATCH),
        query: parts.uri.query(),
    };
    let reply = if name == crate::web::MANIFEST {
        crate::web::manifest(&app.config().page_title, when)
    } else if let Some(asset) = crate::web::asset(name) {
        crate::web::respond(asset, when)
    } else {
        return text(StatusCode::NOT_FOUND, "not found\n");
    };
    let body = match reply.body {
        std::borrow::Cow::Borrowed(bytes) => Bytes::from_static(bytes),
        std::borrow::Cow::Owned(bytes) => Bytes::from(bytes),
    };
    let mut r = Response::new(full(body));
    *r.status_mut() = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::OK);
    for (name, value) in reply.headers {
        if let Ok(value) = HeaderValue::from_str(&value) {
            r.headers_mut().insert(name, value);
        }
    }
    r
}
