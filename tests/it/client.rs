//! A tiny blocking HTTP/1.1 client over `std::net::TcpStream`, written from scratch so the
//! tests do not share an HTTP implementation (or its leniencies) with the service.
//!
//! It sends any method, path, headers and body bytes, with a Content-Length or a chunked
//! body, and reads the status line, headers and a body framed by Content-Length, chunked
//! encoding or connection close. A `Conn` can carry several requests (keep-alive). Every
//! socket read and write has a timeout, so a silent server fails the test instead of hanging
//! it. On top sit `connect_json`, the Connect unary JSON call, and the shape checks every
//! test uses for error bodies and log entries.

use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::Value;

/// Socket read/write timeout: far above any legitimate answer, there only to detect hangs.
pub const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// The canonical Connect path prefix of every operation.
pub const SERVICE: &str = "/svc.api.v1.ActionApiService/";

/// How a request body is framed.
#[derive(Debug, Clone)]
pub enum Body {
    /// No body and no framing header.
    None,
    /// Sent with `Content-Length` (unless the test set one itself).
    Fixed(Vec<u8>),
    /// Sent with `Transfer-Encoding: chunked`, one chunk per element.
    Chunked(Vec<Vec<u8>>),
}

/// One HTTP request, built by the test field by field.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Body,
}

impl Request {
    pub fn new(method: &str, path: &str) -> Request {
        Request {
            method: method.to_string(),
            path: path.to_string(),
            headers: Vec::new(),
            body: Body::None,
        }
    }

    pub fn get(path: &str) -> Request {
        Request::new("GET", path)
    }

    pub fn post(path: &str) -> Request {
        Request::new("POST", path)
    }

    /// A well-formed Connect unary call of `op` at `path_prefix` (e.g. [`SERVICE`] or
    /// `/api/`) with a JSON body.
    pub fn connect_at(path_prefix: &str, op: &str, body: &[u8]) -> Request {
        Request::post(&format!("{path_prefix}{op}"))
            .header("Content-Type", "application/json")
            .header("Connect-Protocol-Version", "1")
            .body(body)
    }

    /// A well-formed Connect unary call of `op` at the canonical path.
    pub fn connect(op: &str, body: &[u8]) -> Request {
        Request::connect_at(SERVICE, op, body)
    }

    pub fn header(mut self, name: &str, value: &str) -> Request {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Removes every header called `name` (case-insensitive).
    pub fn without_header(mut self, name: &str) -> Request {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }

    /// Replaces every header called `name` with one of `value`.
    pub fn set_header(self, name: &str, value: &str) -> Request {
        self.without_header(name).header(name, value)
    }

    pub fn body(mut self, bytes: &[u8]) -> Request {
        self.body = Body::Fixed(bytes.to_vec());
        self
    }

    pub fn chunked(mut self, chunks: Vec<Vec<u8>>) -> Request {
        self.body = Body::Chunked(chunks);
        self
    }

    fn has_header(&self, name: &str) -> bool {
        self.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    }

    /// The bytes on the wire.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = format!("{} {} HTTP/1.1\r\n", self.method, self.path).into_bytes();
        if !self.has_header("Host") {
            out.extend_from_slice(b"Host: 127.0.0.1\r\n");
        }
        for (name, value) in &self.headers {
            out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        match &self.body {
            Body::None => out.extend_from_slice(b"\r\n"),
            Body::Fixed(bytes) => {
                if !self.has_header("Content-Length") {
                    out.extend_from_slice(
                        format!("Content-Length: {}\r\n", bytes.len()).as_bytes(),
                    );
                }
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(bytes);
            }
            Body::Chunked(chunks) => {
                out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
                for chunk in chunks.iter().filter(|c| !c.is_empty()) {
                    out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                    out.extend_from_slice(chunk);
                    out.extend_from_slice(b"\r\n");
                }
                out.extend_from_slice(b"0\r\n\r\n");
            }
        }
        out
    }
}

/// One HTTP response.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// The first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON; panics with the raw body when it is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "HTTP {} body is not JSON ({e}): {:?}",
                self.status,
                self.text()
            )
        })
    }
}

/// A client connection that can carry several requests in turn.
pub struct Conn {
    stream: TcpStream,
    /// Bytes read past the end of the previous response.
    buf: Vec<u8>,
}

impl Conn {
    pub fn open(addr: SocketAddr) -> Conn {
        Conn::open_with_timeout(addr, IO_TIMEOUT)
    }

    pub fn open_with_timeout(addr: SocketAddr, timeout: Duration) -> Conn {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("connect to {addr}: {e}"));
        Conn::from_stream(stream, timeout)
    }

    /// A connection whose local end is bound to `local` (any port), so the server sees that
    /// peer address: on Linux every 127.0.0.0/8 address is loopback, which lets one test act
    /// as two clients (login throttling, trusted proxies). std cannot bind before connecting,
    /// so tokio's socket does it, on a throwaway runtime, and hands back a blocking stream.
    pub fn open_from(addr: SocketAddr, local: IpAddr) -> Conn {
        let stream = connect_from(addr, local)
            .unwrap_or_else(|e| panic!("connect to {addr} from {local}: {e}"));
        Conn::from_stream(stream, IO_TIMEOUT)
    }

    fn from_stream(stream: TcpStream, timeout: Duration) -> Conn {
        stream
            .set_read_timeout(Some(timeout))
            .expect("read timeout");
        stream
            .set_write_timeout(Some(timeout))
            .expect("write timeout");
        stream.set_nodelay(true).expect("nodelay");
        Conn {
            stream,
            buf: Vec::new(),
        }
    }

    /// Sends `req` and reads its response; panics on any transport error.
    pub fn send(&mut self, req: &Request) -> Response {
        self.try_send(req)
            .unwrap_or_else(|e| panic!("{} {}: {e}", req.method, req.path))
    }

    /// Sends `req` and reads its response. A write error is not final: a server may answer
    /// (e.g. 429 for an oversized body) and close before reading everything we send.
    pub fn try_send(&mut self, req: &Request) -> io::Result<Response> {
        let written = self
            .stream
            .write_all(&req.to_bytes())
            .and_then(|()| self.stream.flush());
        match self.read_response(req.method.eq_ignore_ascii_case("HEAD")) {
            Ok(resp) => Ok(resp),
            Err(read_err) => Err(written.err().unwrap_or(read_err)),
        }
    }

    fn fill(&mut self) -> io::Result<()> {
        let mut chunk = [0u8; 16 * 1024];
        // A signal arriving during the read is no transport error: read again, as
        // `read_exact` does.
        let n = loop {
            match self.stream.read(&mut chunk) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed before the response was complete",
            ));
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }

    /// Reads one line ending in CRLF (returned without it).
    fn read_line(&mut self) -> io::Result<String> {
        loop {
            if let Some(i) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line: Vec<u8> = self.buf.drain(..i + 2).take(i).collect();
                return Ok(String::from_utf8_lossy(&line).into_owned());
            }
            self.fill()?;
        }
    }

    fn read_exact_bytes(&mut self, n: usize) -> io::Result<Vec<u8>> {
        while self.buf.len() < n {
            self.fill()?;
        }
        Ok(self.buf.drain(..n).collect())
    }

    fn read_response(&mut self, head_request: bool) -> io::Result<Response> {
        loop {
            let status_line = self.read_line()?;
            let mut parts = status_line.splitn(3, ' ');
            let version = parts.next().unwrap_or_default();
            let status: u16 = parts
                .next()
                .and_then(|s| s.parse().ok())
                .filter(|_| version.starts_with("HTTP/1."))
                .ok_or_else(|| bad(format!("bad status line {status_line:?}")))?;
            let mut headers = Vec::new();
            loop {
                let line = self.read_line()?;
                if line.is_empty() {
                    break;
                }
                let (name, value) = line
                    .split_once(':')
                    .ok_or_else(|| bad(format!("bad header line {line:?}")))?;
                headers.push((name.trim().to_string(), value.trim().to_string()));
            }
            if (100..200).contains(&status) {
                // An interim response (100 Continue): the real one follows.
                continue;
            }
            let mut resp = Response {
                status,
                headers,
                body: Vec::new(),
            };
            if head_request || status == 204 || status == 304 {
                return Ok(resp);
            }
            let chunked = resp
                .header("Transfer-Encoding")
                .is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
            if chunked {
                resp.body = self.read_chunked()?;
            } else if let Some(len) = resp.header("Content-Length") {
                let len: usize = len
                    .parse()
                    .map_err(|_| bad(format!("bad Content-Length {len:?}")))?;
                resp.body = self.read_exact_bytes(len)?;
            } else {
                // Framed by connection close.
                let mut rest = std::mem::take(&mut self.buf);
                self.stream.read_to_end(&mut rest)?;
                resp.body = rest;
            }
            return Ok(resp);
        }
    }

    fn read_chunked(&mut self) -> io::Result<Vec<u8>> {
        let mut body = Vec::new();
        loop {
            let line = self.read_line()?;
            let size_text = line.split(';').next().unwrap_or_default().trim();
            let size = usize::from_str_radix(size_text, 16)
                .map_err(|_| bad(format!("bad chunk size line {line:?}")))?;
            if size == 0 {
                // Trailers, up to the empty line.
                while !self.read_line()?.is_empty() {}
                return Ok(body);
            }
            body.extend(self.read_exact_bytes(size)?);
            if !self.read_line()?.is_empty() {
                return Err(bad("chunk not followed by CRLF".to_string()));
            }
        }
    }
}

fn bad(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// Sends one request on a fresh connection.
/// A blocking socket connected to `addr` whose local end is bound to `local` (any port): see
/// `Conn::open_from`.
pub fn connect_from(addr: SocketAddr, local: IpAddr) -> io::Result<TcpStream> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    let stream = runtime.block_on(async {
        let socket = match local {
            IpAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
            IpAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
        };
        socket.bind(SocketAddr::new(local, 0))?;
        socket.connect(addr).await?.into_std()
    })?;
    stream.set_nonblocking(false)?;
    Ok(stream)
}

pub fn send(addr: SocketAddr, req: &Request) -> Response {
    Conn::open(addr).send(req)
}

/// Sends one request on a fresh connection from the local address `local`.
pub fn send_from(addr: SocketAddr, local: IpAddr, req: &Request) -> Response {
    Conn::open_from(addr, local).send(req)
}

/// A Connect unary JSON call of `op` at the canonical path: (HTTP status, JSON body).
pub fn connect_json(addr: SocketAddr, op: &str, body: &Value) -> (u16, Value) {
    let resp = send(addr, &Request::connect(op, body.to_string().as_bytes()));
    (resp.status, resp.json())
}

// ---------------------------------------------------------------------------------------
// Shape checks

/// Asserts a Connect error: the status, JSON content type, and `{code, message, details: []}`
/// with a non-empty message. Returns the message for further checks.
pub fn assert_error(resp: &Response, status: u16, code: &str) -> String {
    assert_eq!(
        resp.status,
        status,
        "expected HTTP {status} ({code}), got {} with body {:?}",
        resp.status,
        resp.text()
    );
    let content_type = resp.header("Content-Type").unwrap_or_default();
    assert!(
        content_type
            .to_ascii_lowercase()
            .starts_with("application/json"),
        "error Content-Type is {content_type:?}"
    );
    let json = resp.json();
    assert_json_error(&json, code)
}

/// Asserts a parsed Connect error body; returns its message.
pub fn assert_json_error(json: &Value, code: &str) -> String {
    assert_eq!(json["code"], code, "error body {json}");
    let message = json["message"]
        .as_str()
        .unwrap_or_else(|| panic!("error message is not a string: {json}"));
    assert!(!message.is_empty(), "error message is empty: {json}");
    assert_eq!(json["details"], serde_json::json!([]), "error body {json}");
    message.to_string()
}

/// The LogEntry fields with their JSON types.
const ENTRY_STRINGS: [&str; 10] = [
    "datetimeStarted",
    "datetimeFinished",
    "actionTitle",
    "actionId",
    "actionIcon",
    "stdout",
    "stderr",
    "user",
    "userClass",
    "executionTrackingId",
];
const ENTRY_BOOLS: [&str; 4] = [
    "timedOut",
    "executionStarted",
    "executionFinished",
    "blocked",
];

/// Asserts that `entry` has every LogEntry field with its type (exitCode a number, tags an
/// array), and well-formed timestamps.
pub fn assert_entry_shape(entry: &Value) {
    for field in ENTRY_STRINGS {
        assert!(entry[field].is_string(), "{field} not a string in {entry}");
    }
    for field in ENTRY_BOOLS {
        assert!(entry[field].is_boolean(), "{field} not a bool in {entry}");
    }
    assert!(
        entry["exitCode"].is_i64(),
        "exitCode not a number in {entry}"
    );
    assert!(entry["tags"].is_array(), "tags not an array in {entry}");
    for field in ["datetimeStarted", "datetimeFinished"] {
        let text = entry[field].as_str().unwrap_or_default();
        assert!(
            text.is_empty() || is_datetime(text),
            "{field} {text:?} is not YYYY-MM-DD HH:MM:SS"
        );
    }
}

/// Whether `text` has the form `YYYY-MM-DD HH:MM:SS`.
pub fn is_datetime(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 19
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b' ',
            13 | 16 => *c == b':',
            _ => c.is_ascii_digit(),
        })
}

/// Whether `text` is a lower-case hyphenated UUID of version 4 (RFC 4122 variant).
pub fn is_uuid_v4(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
        && b[14] == b'4'
        && matches!(b[19].to_ascii_lowercase(), b'8' | b'9' | b'a' | b'b')
}

#[test]
fn client_frames_chunked_requests() {
    let req = Request::post("/x").chunked(vec![b"ab".to_vec(), vec![], b"cde".to_vec()]);
    let text = String::from_utf8(req.to_bytes()).unwrap();
    assert!(text.ends_with("Transfer-Encoding: chunked\r\n\r\n2\r\nab\r\n3\r\ncde\r\n0\r\n\r\n"));
}

#[test]
fn client_recognises_uuid_v4_and_datetimes() {
    assert!(is_uuid_v4("0f8fad5b-d9cb-469f-a165-70867728950e"));
    assert!(!is_uuid_v4("0f8fad5b-d9cb-169f-a165-70867728950e"));
    assert!(is_datetime("2024-05-06 07:08:09"));
    assert!(!is_datetime("2024-05-06T07:08:09"));
}
