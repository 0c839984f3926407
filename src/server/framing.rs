//! How an answer goes on the wire the request chose (`protocol::Wire`), and how a request's
//! body comes off it: Connect answers a unary call with the bare message (an error with its
//! HTTP status and JSON body); gRPC-Web with the message in an envelope and the trailers in
//! a last frame, errors included, under HTTP 200; `grpc-web-text` the same frames in base64;
//! gRPC over HTTP/2 the trailers as HTTP trailers. The operations never see any of it.

use bytes::Bytes;
use http_body_util::Either;
use hyper::body::Frame;
use hyper::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use hyper::{Response, StatusCode};
use tokio::sync::mpsc;

use super::{Answer, StreamBody, error, full};
use crate::api;
use crate::auth::identity;
use crate::protocol::{self, ConnectError, Protocol, Wire, grpc};

/// How the frames of a streamed body are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// As they are.
    Plain,
    /// Each frame in base64 (`application/grpc-web-text`).
    Base64,
    /// gRPC over HTTP/2: the trailer frame becomes the HTTP trailers.
    Trailers,
}

impl Framing {
    pub fn of(wire: Wire) -> Framing {
        match wire.protocol {
            Protocol::Connect | Protocol::GrpcWeb { text: false } => Framing::Plain,
            Protocol::GrpcWeb { text: true } => Framing::Base64,
            Protocol::Grpc => Framing::Trailers,
        }
    }

    /// One frame of the body, as this framing writes it.
    pub fn frame(self, bytes: Bytes) -> Frame<Bytes> {
        match self {
            Framing::Plain => Frame::data(bytes),
            Framing::Base64 => Frame::data(Bytes::from(grpc::base64(&bytes))),
            Framing::Trailers => match grpc::parse_trailer_frame(&bytes) {
                Some(trailers) => Frame::trailers(header_map(&trailers)),
                None => Frame::data(bytes),
            },
        }
    }
}

fn header_map(pairs: &[(String, String)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            map.insert(name, value);
        }
    }
    map
}

/// The body of a request as its framing carries it: `grpc-web-text` in base64.
pub fn request(wire: Wire, raw: Bytes) -> Result<Bytes, ConnectError> {
    match Framing::of(wire) {
        Framing::Base64 => grpc::unbase64(&raw).map(Bytes::from),
        Framing::Plain | Framing::Trailers => Ok(raw),
    }
}

/// The answer to a unary call, in the request's protocol and codec, with the session cookie
/// or `Actiond-Session` header when the operation set one.
pub fn unary(wire: Wire, result: Result<api::Reply, ConnectError>) -> Answer {
    if wire.protocol == Protocol::Connect {
        return match result {
            Ok(reply) => {
                let mut answer = Response::new(full(reply.body));
                answer.headers_mut().insert(
                    CONTENT_TYPE,
                    HeaderValue::from_static(wire.content_type(false)),
                );
                session(&mut answer, reply.cookie, reply.session);
                answer
            }
            // An error is always JSON, whatever the codec (Connect says so).
            Err(e) => error(&e),
        };
    }
    // gRPC: HTTP 200 whatever happened; the trailers say how the call ended.
    let (frames, cookie, sid) = match result {
        Ok(reply) => (
            vec![protocol::envelope(0, &reply.body), wire.end(None)],
            reply.cookie,
            reply.session,
        ),
        Err(e) => (vec![wire.end(Some(&e))], None, None),
    };
    let framing = Framing::of(wire);
    let body = if framing == Framing::Trailers {
        // HTTP trailers need a body that ends with them: a channel of the frames.
        let (tx, rx) = mpsc::channel(frames.len());
        for frame in frames {
            let _ = tx.try_send(Bytes::from(frame));
        }
        Either::Right(StreamBody { rx, framing })
    } else {
        let mut bytes = Vec::new();
        for frame in frames {
            match framing {
                Framing::Base64 => bytes.extend_from_slice(&grpc::base64(&frame)),
                _ => bytes.extend_from_slice(&frame),
            }
        }
        full(bytes)
    };
    let mut answer = Response::new(body);
    *answer.status_mut() = StatusCode::OK;
    answer.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static(wire.content_type(false)),
    );
    session(&mut answer, cookie, sid);
    answer
}

/// The session a login or logout set: a cookie, or the page's `Actiond-Session` header.
fn session(answer: &mut Answer, cookie: Option<String>, sid: Option<String>) {
    if let Some(value) = cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
        answer.headers_mut().insert("set-cookie", value);
    }
    if let Some(value) = sid.and_then(|s| HeaderValue::from_str(&s).ok()) {
        answer.headers_mut().insert(identity::SESSION_HEADER, value);
    }
}
