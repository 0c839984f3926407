//! The client side of EventStream for the tests: building the streaming request, reading the
//! chunked response incrementally with every read bounded by a deadline, splitting it into
//! Connect envelopes and decoding the events, and the assertions on a refusal in the stream.
//! Other test files (abuse, reload, soak) subscribe through it too.

use crate::client::{Request, Response, SERVICE};
use crate::harness::SOON;
use serde_json::{Value, json};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// the largest text of one outputChunk event, in bytes.
pub(crate) const MAX_CHUNK: usize = 4096;

/// The payload of the keep-alive a quiet stream carries.
pub(crate) const KEEP_ALIVE: &[u8] = br#"{"outputChunk":{}}"#;

/// The end-stream flag of a Connect envelope.
pub(crate) const END_STREAM: u8 = 0x02;

// ---------------------------------------------------------------------------------------
// Requests

/// One Connect envelope: flags, 4-byte big-endian length, payload.
pub(crate) fn envelope(flags: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![flags];
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// An EventStream call at `path` with the given raw body and the streaming content type.
pub(crate) fn stream_request_at(path: &str, body: &[u8]) -> Request {
    Request::post(path)
        .header("Content-Type", "application/connect+json")
        .header("Connect-Protocol-Version", "1")
        .body(body)
}

/// The well-formed subscription: one uncompressed envelope holding `{}`.
pub(crate) fn subscribe() -> Request {
    subscribe_at(&format!("{SERVICE}EventStream"))
}

pub(crate) fn subscribe_at(path: &str) -> Request {
    stream_request_at(path, &envelope(0, b"{}"))
}

// ---------------------------------------------------------------------------------------
// Reading a stream

/// One envelope of the response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    pub(crate) flags: u8,
    pub(crate) payload: Vec<u8>,
}

impl Frame {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.payload).unwrap_or_else(|e| {
            panic!(
                "envelope payload is not JSON ({e}): {:?}",
                String::from_utf8_lossy(&self.payload)
            )
        })
    }

    pub(crate) fn is_end(&self) -> bool {
        self.flags & END_STREAM != 0
    }

    /// The event this frame carries; asserts the Connect message rules on the way:
    /// flag 0, a non-empty payload, and a JSON object with exactly one member (a oneof).
    pub(crate) fn event(&self) -> Event {
        assert_eq!(
            self.flags,
            0,
            "expected an event envelope, got flags {:#04x} with {:?}",
            self.flags,
            String::from_utf8_lossy(&self.payload)
        );
        assert!(!self.payload.is_empty(), "an event envelope is empty");
        let value = self.json();
        let members = value
            .as_object()
            .unwrap_or_else(|| panic!("event payload is not an object: {value}"));
        assert_eq!(members.len(), 1, "an event has exactly one member: {value}");
        let (kind, body) = members.iter().next().expect("one member");
        Event {
            kind: kind.clone(),
            body: body.clone(),
        }
    }
}

/// A decoded event: the set member of EventStreamResponse and its message.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub(crate) kind: String,
    pub(crate) body: Value,
}

impl Event {
    /// The execution the event is about.
    pub(crate) fn tracking_id(&self) -> &str {
        let id = match self.kind.as_str() {
            "outputChunk" => &self.body["executionTrackingId"],
            _ => &self.body["logEntry"]["executionTrackingId"],
        };
        id.as_str()
            .unwrap_or_else(|| panic!("no executionTrackingId in {} {}", self.kind, self.body))
    }

    pub(crate) fn entry(&self) -> &Value {
        &self.body["logEntry"]
    }

    pub(crate) fn output(&self) -> &str {
        assert_eq!(self.kind, "outputChunk", "{}", self.body);
        self.body["output"]
            .as_str()
            .unwrap_or_else(|| panic!("outputChunk without a string output: {}", self.body))
    }

    pub(crate) fn is(&self, kind: &str, tracking_id: &str) -> bool {
        self.kind == kind && self.tracking_id() == tracking_id
    }
}

/// What the next read of a stream found.
#[derive(Debug)]
pub(crate) enum Next {
    Frame(Frame),
    /// The HTTP body ended cleanly (the terminating zero-length chunk).
    End,
    /// The connection closed or failed before the body ended.
    Closed(String),
    /// Nothing complete arrived before the deadline.
    Timeout,
}

/// How the response body is delimited.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Framing {
    Chunked,
    Length(usize),
    Close,
}

/// An open EventStream response, read one envelope at a time.
pub(crate) struct EventStream {
    pub(crate) sock: TcpStream,
    /// Bytes read from the socket and not yet decoded.
    pub(crate) raw: Vec<u8>,
    /// Decoded body bytes not yet split into envelopes.
    pub(crate) body: Vec<u8>,
    pub(crate) framing: Framing,
    /// The HTTP body has ended (or the connection closed, for close-delimited bodies).
    pub(crate) body_done: bool,
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    /// Keep-alives read past so far (an empty `outputChunk` on a quiet stream).
    pub(crate) keep_alives: usize,
}

impl EventStream {
    /// Sends `req` on a new connection and reads the response head.
    pub(crate) fn open(addr: SocketAddr, req: &Request) -> EventStream {
        let sock = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("connect to {addr}: {e}"));
        EventStream::start(sock, req)
    }

    /// Opens the standard subscription and asserts that it was accepted: 200 and the
    /// Connect streaming headers.
    pub(crate) fn subscribe(addr: SocketAddr) -> EventStream {
        let stream = EventStream::open(addr, &subscribe());
        stream.assert_stream_head();
        stream
    }

    /// Sends `req` on `sock` and reads the response head.
    pub(crate) fn start(sock: TcpStream, req: &Request) -> EventStream {
        sock.set_nodelay(true).expect("nodelay");
        sock.set_write_timeout(Some(SOON)).expect("write timeout");
        (&sock)
            .write_all(&req.to_bytes())
            .unwrap_or_else(|e| panic!("send {} {}: {e}", req.method, req.path));
        let mut stream = EventStream {
            sock,
            raw: Vec::new(),
            body: Vec::new(),
            framing: Framing::Close,
            body_done: false,
            status: 0,
            headers: Vec::new(),
            keep_alives: 0,
        };
        stream.read_head();
        stream
    }

    pub(crate) fn read_head(&mut self) {
        let deadline = Instant::now() + SOON;
        // A 100 Continue is not the answer; skip interim responses.
        let (status, headers) = loop {
            let status_line = self.head_line(deadline);
            let status: u16 = status_line
                .split(' ')
                .nth(1)
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
            let mut headers = Vec::new();
            loop {
                let header = self.head_line(deadline);
                if header.is_empty() {
                    break;
                }
                let (name, value) = header
                    .split_once(':')
                    .unwrap_or_else(|| panic!("bad header line {header:?}"));
                headers.push((name.trim().to_string(), value.trim().to_string()));
            }
            if !(100..200).contains(&status) {
                break (status, headers);
            }
        };
        self.status = status;
        self.headers = headers;
        let chunked = self
            .header("Transfer-Encoding")
            .is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
        self.framing = if chunked {
            Framing::Chunked
        } else if let Some(len) = self.header("Content-Length") {
            Framing::Length(len.parse().expect("numeric Content-Length"))
        } else {
            Framing::Close
        };
    }

    /// One CRLF-terminated line from the raw bytes, without the CRLF.
    pub(crate) fn line(&mut self, deadline: Instant) -> Result<String, Next> {
        loop {
            if let Some(i) = self.raw.windows(2).position(|w| w == b"\r\n") {
                let line: Vec<u8> = self.raw.drain(..i + 2).take(i).collect();
                return Ok(String::from_utf8_lossy(&line).into_owned());
            }
            self.fill(deadline)?;
        }
    }

    /// A line of the response head, which must come before `deadline`.
    pub(crate) fn head_line(&mut self, deadline: Instant) -> String {
        self.line(deadline)
            .unwrap_or_else(|n| panic!("reading the response head of EventStream: {n:?}"))
    }

    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// 200, the Connect streaming content type, no caching and no proxy
    /// buffering, and a chunked body (HTTP/1.1's way to send as it happens).
    pub(crate) fn assert_stream_head(&self) {
        assert_eq!(self.status, 200, "EventStream answered {}", self.status);
        let content_type = self.header("Content-Type").unwrap_or_default();
        assert_eq!(
            content_type.to_ascii_lowercase(),
            "application/connect+json",
            "Content-Type"
        );
        assert_eq!(self.header("Cache-Control"), Some("no-cache"));
        assert_eq!(self.header("X-Accel-Buffering"), Some("no"));
        assert!(
            matches!(self.framing, Framing::Chunked),
            "the stream is not chunked: {:?}",
            self.headers
        );
    }

    /// Reads more bytes from the socket, waiting until `deadline` at most.
    pub(crate) fn fill(&mut self, deadline: Instant) -> Result<(), Next> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Next::Timeout);
        }
        self.sock
            .set_read_timeout(Some(left))
            .expect("read timeout");
        let mut chunk = [0u8; 64 * 1024];
        match self.sock.read(&mut chunk) {
            Ok(0) => Err(Next::Closed("connection closed by the server".into())),
            Ok(n) => {
                self.raw.extend_from_slice(&chunk[..n]);
                Ok(())
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                Err(Next::Timeout)
            }
            // A signal arriving during the read is no transport error: the caller reads
            // again (as `client::Conn` does). Reads with a timeout are not restarted by the
            // kernel, so one can land here on a busy machine.
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(Next::Closed(format!("connection failed: {e}"))),
        }
    }

    pub(crate) fn take_raw(&mut self, n: usize, deadline: Instant) -> Result<Vec<u8>, Next> {
        while self.raw.len() < n {
            self.fill(deadline)?;
        }
        Ok(self.raw.drain(..n).collect())
    }

    /// Moves the next piece of the HTTP body from `raw` to `body`.
    pub(crate) fn decode(&mut self, deadline: Instant) -> Result<(), Next> {
        match self.framing {
            Framing::Chunked => {
                let line = self.line(deadline)?;
                let size_text = line.split(';').next().unwrap_or_default().trim();
                let size = usize::from_str_radix(size_text, 16)
                    .unwrap_or_else(|_| panic!("bad chunk size line {line:?}"));
                if size == 0 {
                    // Trailers, up to the empty line.
                    while !self.line(deadline)?.is_empty() {}
                    self.body_done = true;
                    return Ok(());
                }
                let data = self.take_raw(size, deadline)?;
                self.body.extend_from_slice(&data);
                let crlf = self.take_raw(2, deadline)?;
                assert_eq!(crlf, b"\r\n", "chunk not followed by CRLF");
            }
            Framing::Length(left) => {
                if left == 0 {
                    self.body_done = true;
                    return Ok(());
                }
                if self.raw.is_empty() {
                    self.fill(deadline)?;
                }
                let n = left.min(self.raw.len());
                let data: Vec<u8> = self.raw.drain(..n).collect();
                self.body.extend_from_slice(&data);
                self.framing = Framing::Length(left - n);
            }
            Framing::Close => {
                if self.raw.is_empty() {
                    match self.fill(deadline) {
                        Err(Next::Closed(_)) => {
                            self.body_done = true;
                            return Ok(());
                        }
                        other => other?,
                    }
                }
                let data = std::mem::take(&mut self.raw);
                self.body.extend_from_slice(&data);
            }
        }
        Ok(())
    }

    /// The next envelope, the end of the body, a closed connection, or a timeout. A
    /// keep-alive (an `outputChunk` of no execution and no text, sent after a few seconds of
    /// quiet) is counted and read past, as a client that finds no such execution does.
    pub(crate) fn next(&mut self, timeout: Duration) -> Next {
        let deadline = Instant::now() + timeout;
        loop {
            match self.next_envelope(deadline.saturating_duration_since(Instant::now())) {
                Next::Frame(f) if f.flags == 0 && f.payload == KEEP_ALIVE => self.keep_alives += 1,
                other => return other,
            }
        }
    }

    /// The next envelope, keep-alives included.
    pub(crate) fn next_envelope(&mut self, timeout: Duration) -> Next {
        let deadline = Instant::now() + timeout;
        loop {
            if self.body.len() >= 5 {
                let len =
                    u32::from_be_bytes([self.body[1], self.body[2], self.body[3], self.body[4]])
                        as usize;
                if self.body.len() >= 5 + len {
                    let flags = self.body[0];
                    let payload = self.body[5..5 + len].to_vec();
                    self.body.drain(..5 + len);
                    return Next::Frame(Frame { flags, payload });
                }
            }
            if self.body_done {
                return if self.body.is_empty() {
                    Next::End
                } else {
                    Next::Closed(format!(
                        "the body ended inside an envelope: {:?}",
                        String::from_utf8_lossy(&self.body)
                    ))
                };
            }
            if let Err(next) = self.decode(deadline) {
                return next;
            }
        }
    }

    /// The next envelope, which must come within [`SOON`].
    pub(crate) fn frame(&mut self) -> Frame {
        match self.next(SOON) {
            Next::Frame(f) => f,
            other => panic!("expected an envelope, got {other:?}"),
        }
    }

    /// The next event, which must come within [`SOON`].
    pub(crate) fn event(&mut self) -> Event {
        self.frame().event()
    }

    /// Events up to and including the first one for which `last` holds.
    pub(crate) fn events_until(&mut self, mut last: impl FnMut(&Event) -> bool) -> Vec<Event> {
        let mut events = Vec::new();
        loop {
            let event = self.event();
            let done = last(&event);
            events.push(event);
            if done {
                return events;
            }
        }
    }

    /// Every envelope up to the end of the stream, and how the body then ended.
    pub(crate) fn rest(&mut self, timeout: Duration) -> (Vec<Frame>, Next) {
        let deadline = Instant::now() + timeout;
        let mut frames = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next(left) {
                Next::Frame(f) => frames.push(f),
                other => return (frames, other),
            }
        }
    }

    /// Reads to the end and asserts the stream's last rule: exactly one end-stream envelope,
    /// the last one, followed by the end of the HTTP body. Returns the events before it and
    /// the end-stream JSON.
    pub(crate) fn finish(&mut self) -> (Vec<Event>, Value) {
        let (frames, ending) = self.rest(SOON);
        assert!(
            matches!(ending, Next::End),
            "after {} envelopes the body did not end cleanly: {ending:?}",
            frames.len()
        );
        let (last, events) = frames
            .split_last()
            .unwrap_or_else(|| panic!("the stream ended without an end-stream envelope"));
        assert!(
            last.is_end(),
            "the last envelope is not an end-stream one: {:?}",
            String::from_utf8_lossy(&last.payload)
        );
        assert_eq!(last.flags, END_STREAM, "end-stream flags");
        let events = events.iter().map(Frame::event).collect();
        (events, last.json())
    }
}

/// Splits a whole response body into envelopes; panics on a torn one.
pub(crate) fn split_envelopes(mut body: &[u8]) -> Vec<Frame> {
    let mut frames = Vec::new();
    while !body.is_empty() {
        assert!(body.len() >= 5, "torn envelope header: {body:?}");
        let len = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
        assert!(body.len() >= 5 + len, "torn envelope: {body:?}");
        frames.push(Frame {
            flags: body[0],
            payload: body[5..5 + len].to_vec(),
        });
        body = &body[5 + len..];
    }
    frames
}

/// Asserts an end-stream JSON carrying the error `code` with a message; returns the message.
pub(crate) fn assert_end_error(end: &Value, code: &str) -> String {
    assert_eq!(end["error"]["code"], code, "end-stream {end}");
    let message = end["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("end-stream error without a message: {end}"));
    assert!(!message.is_empty(), "end-stream message is empty: {end}");
    message.to_string()
}

/// Asserts a refusal after the handler was chosen: HTTP 200 with the streaming
/// content type and a body of exactly one end-stream envelope holding the error `code`.
pub(crate) fn assert_refused_in_stream(resp: &Response, code: &str) -> String {
    assert_eq!(
        resp.status,
        200,
        "a streaming error is reported in the stream, with HTTP 200: {:?}",
        resp.text()
    );
    assert_eq!(
        resp.header("Content-Type").map(str::to_ascii_lowercase),
        Some("application/connect+json".to_string())
    );
    let frames = split_envelopes(&resp.body);
    assert_eq!(frames.len(), 1, "one end-stream envelope only: {frames:?}");
    assert_eq!(frames[0].flags, END_STREAM, "{frames:?}");
    assert_end_error(&frames[0].json(), code)
}

/// A Bearer token of this file's configs and its `authApiTokens` hash.
pub(crate) fn token_entry(name: &str, token: &str, username: &str) -> Value {
    use sha2::{Digest, Sha256};
    let sha256: String = Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    json!({"name": name, "sha256": sha256, "username": username, "usergroup": "users"})
}

/// A subscription request carrying `Authorization: Bearer <token>`.
pub(crate) fn subscribe_as(token: &str) -> Request {
    subscribe().header("Authorization", &format!("Bearer {token}"))
}
