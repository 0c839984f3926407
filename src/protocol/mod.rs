//! The wire layer, as pure functions: which protocol and codec a request speaks (chosen once,
//! from its Content-Type: Connect with JSON or binary protobuf, gRPC-Web, gRPC), error codes
//! and their HTTP statuses, the error body, the request-header rules, envelopes, and typed
//! access to the fields of a request, whichever codec brought them (`Fields`). It knows
//! nothing of sockets, routes or actions; `server` feeds it header values and bytes, `api`
//! asks it for fields and error bodies. `protobuf` is the binary codec, `grpc` gRPC's own
//! rules.

pub mod grpc;
pub mod protobuf;

use std::time::Duration;

use serde::Serializer;
use serde_json::{Map, Value};

/// The sixteen Connect error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(
    dead_code,
    reason = "the protocol's whole table, with its names and statuses; actiond never answers \
              canceled, aborted, out_of_range or data_loss"
)]
pub enum Code {
    Canceled,
    Unknown,
    InvalidArgument,
    DeadlineExceeded,
    NotFound,
    AlreadyExists,
    PermissionDenied,
    ResourceExhausted,
    FailedPrecondition,
    Aborted,
    OutOfRange,
    Unimplemented,
    Internal,
    Unavailable,
    DataLoss,
    Unauthenticated,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Canceled => "canceled",
            Code::Unknown => "unknown",
            Code::InvalidArgument => "invalid_argument",
            Code::DeadlineExceeded => "deadline_exceeded",
            Code::NotFound => "not_found",
            Code::AlreadyExists => "already_exists",
            Code::PermissionDenied => "permission_denied",
            Code::ResourceExhausted => "resource_exhausted",
            Code::FailedPrecondition => "failed_precondition",
            Code::Aborted => "aborted",
            Code::OutOfRange => "out_of_range",
            Code::Unimplemented => "unimplemented",
            Code::Internal => "internal",
            Code::Unavailable => "unavailable",
            Code::DataLoss => "data_loss",
            Code::Unauthenticated => "unauthenticated",
        }
    }

    /// The HTTP status of the code, as the Connect protocol maps them.
    pub fn http_status(self) -> u16 {
        match self {
            Code::Canceled => 499,
            Code::Unknown | Code::Internal | Code::DataLoss => 500,
            Code::InvalidArgument | Code::FailedPrecondition | Code::OutOfRange => 400,
            Code::DeadlineExceeded => 504,
            Code::NotFound => 404,
            Code::AlreadyExists | Code::Aborted => 409,
            Code::PermissionDenied => 403,
            Code::ResourceExhausted => 429,
            Code::Unimplemented => 501,
            Code::Unavailable => 503,
            Code::Unauthenticated => 401,
        }
    }
}

/// An error as it goes on the wire. `status` is the code's status except for the few
/// transport answers Connect defines differently (unknown operation 404, 405, 415).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectError {
    pub code: Code,
    pub message: String,
    pub status: u16,
}

impl ConnectError {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        ConnectError {
            code,
            message: message.into(),
            status: code.http_status(),
        }
    }

    pub fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(Code::InvalidArgument, message)
    }

    /// The JSON error body: `{"code", "message", "details": []}`, in that order.
    pub fn body(&self) -> Vec<u8> {
        #[derive(serde::Serialize)]
        struct Body<'a> {
            code: &'a str,
            message: &'a str,
            details: [(); 0],
        }
        let body = Body {
            code: self.code.as_str(),
            message: &self.message,
            details: [],
        };
        serde_json::to_vec(&body).unwrap_or_default()
    }
}

/// Envelope flag of the end-stream message of a server stream.
pub const END_STREAM: u8 = 0x02;

/// One server-streaming envelope: a flag byte, the payload's length as 4 big-endian bytes,
/// the payload.
pub fn envelope(flags: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(5 + payload.len());
    out.push(flags);
    // Payloads are bounded far below 4 GiB (events are capped), so the length fits.
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// The message of an enveloped request (a server stream's, or any gRPC call's): exactly one
/// envelope. A compressed one (flag 0x01) is inflated within `max` bytes when the request
/// named its compression (`Connect-Content-Encoding: gzip`, as Python's Connect client sends
/// by default, or `grpc-encoding: gzip`), and refused as Connect says when it did not.
pub fn single_envelope(
    body: &[u8],
    encoding: Encoding,
    max: usize,
) -> Result<Vec<u8>, ConnectError> {
    let mut rest = body;
    let mut messages = Vec::new();
    while !rest.is_empty() {
        if rest.len() < 5 {
            return Err(ConnectError::invalid(
                "the request ends inside an envelope header",
            ));
        }
        let flags = rest[0];
        let len = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
        let Some(payload) = rest.get(5..5 + len) else {
            return Err(ConnectError::invalid("the request ends inside an envelope"));
        };
        if flags & 0x01 != 0 && encoding == Encoding::Identity {
            return Err(ConnectError::new(
                Code::Internal,
                "a compressed message was sent, but no compression was negotiated \
                 (send Connect-Content-Encoding: gzip, or grpc-encoding: gzip)",
            ));
        }
        if flags & !0x01 != 0 {
            return Err(ConnectError::invalid(format!(
                "a request envelope has flags {flags:#04x}: only 0x01 (compressed) is allowed"
            )));
        }
        messages.push((flags & 0x01 != 0, payload));
        rest = &rest[5 + len..];
    }
    match messages.as_slice() {
        [(false, one)] => Ok(one.to_vec()),
        [(true, one)] => gunzip(one, max),
        other => Err(ConnectError::new(
            Code::Unimplemented,
            format!(
                "a server-streaming or gRPC call takes exactly one request message, got {}",
                other.len()
            ),
        )),
    }
}

/// The keep-alive of a quiet event stream: an `outputChunk` of no execution and no text. The
/// API document has every message hold exactly one of its five events, so the keep-alive is
/// one of them, the one that says nothing: a client finds no execution with the empty tracking
/// id and adds no output (connect-es and the Python client are tested reading past it). Its
/// arrival tells a client the stream still carries bytes, so a connection that stopped
/// carrying them without closing is noticed.
pub const KEEP_ALIVE: &[u8] = b"\0\0\0\0\x12{\"outputChunk\":{}}";

/// The end-stream envelope: `{}` after a clean end, `{"error": {code, message}}` otherwise.
pub fn end_stream(error: Option<&ConnectError>) -> Vec<u8> {
    #[derive(serde::Serialize)]
    struct Err<'a> {
        code: &'a str,
        message: &'a str,
    }
    #[derive(serde::Serialize)]
    struct End<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<Err<'a>>,
    }
    let end = End {
        error: error.map(|e| Err {
            code: e.code.as_str(),
            message: &e.message,
        }),
    };
    envelope(
        END_STREAM,
        &serde_json::to_vec(&end).unwrap_or_else(|_| b"{}".to_vec()),
    )
}

/// How the messages of a request and its answer are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Codec {
    /// ProtoJSON, the reference.
    Json,
    /// Binary protobuf (`protobuf`).
    Proto,
}

/// The protocol a request speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Connect: a bare message for unary calls, envelopes and an end-stream message for
    /// streams, errors as JSON bodies with their HTTP status.
    Connect,
    /// gRPC-Web over HTTP/1.1: envelopes, and the trailers in a last frame of the body;
    /// `text` is `application/grpc-web-text`, the same frames in base64.
    GrpcWeb { text: bool },
    /// gRPC over HTTP/2: envelopes, and the trailers as HTTP trailers.
    Grpc,
}

/// A request's protocol and codec, chosen once from its Content-Type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wire {
    pub protocol: Protocol,
    pub codec: Codec,
}

/// What a 415 lists as accepted.
pub const ACCEPTED: &str = "application/json, application/proto, application/grpc-web+proto, \
                            application/grpc-web+json, application/grpc-web-text";

impl Wire {
    /// Connect with JSON: the API document's own wire, and that of the GET routes.
    pub const JSON: Wire = Wire {
        protocol: Protocol::Connect,
        codec: Codec::Json,
    };

    /// The protocol and codec of a call from its `Content-Type` (compared case-insensitively,
    /// parameters such as `; charset=utf-8` allowed); anything else is HTTP 415. Connect's
    /// unary and streaming media types are not interchangeable; gRPC's serve both.
    pub fn negotiate(content_type: Option<&str>, streaming: bool) -> Result<Wire, ConnectError> {
        use {Codec::*, Protocol::*};
        let media = content_type.map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        });
        let web = GrpcWeb { text: false };
        let text = GrpcWeb { text: true };
        let found = match (media.as_deref(), streaming) {
            (Some("application/json"), false) => Some((Connect, Json)),
            (Some("application/proto"), false) => Some((Connect, Proto)),
            (Some("application/connect+json"), true) => Some((Connect, Json)),
            (Some("application/connect+proto"), true) => Some((Connect, Proto)),
            (Some("application/grpc-web" | "application/grpc-web+proto"), _) => Some((web, Proto)),
            (Some("application/grpc-web+json"), _) => Some((web, Json)),
            (Some("application/grpc-web-text" | "application/grpc-web-text+proto"), _) => {
                Some((text, Proto))
            }
            (Some("application/grpc" | "application/grpc+proto"), _) => Some((Grpc, Proto)),
            (Some("application/grpc+json"), _) => Some((Grpc, Json)),
            _ => None,
        };
        if let Some((protocol, codec)) = found {
            return Ok(Wire { protocol, codec });
        }
        let (json, proto) = if streaming {
            ("application/connect+json", "application/connect+proto")
        } else {
            ("application/json", "application/proto")
        };
        let found = content_type.unwrap_or("none");
        Err(ConnectError::new(
            Code::Unknown,
            format!(
                "unsupported Content-Type {found:?}: send Content-Type: {json} (or {proto}, \
                 or gRPC-Web's application/grpc-web+proto)"
            ),
        )
        .with_status(415))
    }

    /// The `Content-Type` of the answer: the request's protocol and codec.
    pub fn content_type(self, streaming: bool) -> &'static str {
        use {Codec::*, Protocol::*};
        match (self.protocol, self.codec, streaming) {
            (Connect, Json, false) => "application/json",
            (Connect, Proto, false) => "application/proto",
            (Connect, Json, true) => "application/connect+json",
            (Connect, Proto, true) => "application/connect+proto",
            (GrpcWeb { text: true }, _, _) => "application/grpc-web-text+proto",
            (GrpcWeb { .. }, Json, _) => "application/grpc-web+json",
            (GrpcWeb { .. }, Proto, _) => "application/grpc-web+proto",
            (Grpc, Json, _) => "application/grpc+json",
            (Grpc, Proto, _) => "application/grpc+proto",
        }
    }

    /// Whether the request's messages and the answer's come in envelopes: gRPC's always,
    /// Connect's on streams only.
    pub fn enveloped(self, streaming: bool) -> bool {
        streaming || self.protocol != Protocol::Connect
    }

    /// The header that names the compression of enveloped messages.
    pub fn envelope_encoding_header(self) -> &'static str {
        match self.protocol {
            Protocol::Connect => "connect-content-encoding",
            _ => "grpc-encoding",
        }
    }

    /// The call's deadline, from `Connect-Timeout-Ms` or `grpc-timeout`, as the protocol
    /// names it; `header` looks a request header up.
    pub fn deadline<'a>(
        self,
        header: impl Fn(&str) -> Option<&'a str>,
    ) -> Result<Option<Duration>, ConnectError> {
        match self.protocol {
            Protocol::Connect => parse_timeout(header("connect-timeout-ms")),
            _ => grpc::parse_timeout(header("grpc-timeout")),
        }
    }

    /// The last frame of a stream, or of a gRPC call: Connect's end-stream message (always
    /// JSON, whatever the codec), or gRPC's trailers.
    pub fn end(self, error: Option<&ConnectError>) -> Vec<u8> {
        match self.protocol {
            Protocol::Connect => end_stream(error),
            _ => grpc::trailer_frame(error),
        }
    }
}

/// `Connect-Protocol-Version` must be `1`. It is required on POST operations unless
/// `required` is false (`connectProtocolHeader: optional`), which lets clients that never
/// send it through; a wrong value is refused either way.
pub fn check_protocol_version(value: Option<&str>, required: bool) -> Result<(), ConnectError> {
    match value.map(str::trim) {
        Some("1") => Ok(()),
        None if !required => Ok(()),
        None => Err(ConnectError::invalid(
            "missing required header: add Connect-Protocol-Version: 1 (a client that cannot, \
             such as OliveTin's, needs connectProtocolHeader: optional in the config)",
        )),
        Some(other) => Err(ConnectError::invalid(format!(
            "Connect-Protocol-Version must be 1, got {other:?}"
        ))),
    }
}

/// `Connect-Timeout-Ms`: absent, or 1–10 ASCII digits.
pub fn parse_timeout(value: Option<&str>) -> Result<Option<Duration>, ConnectError> {
    let Some(v) = value else { return Ok(None) };
    if v.is_empty() || v.len() > 10 || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ConnectError::invalid(format!(
            "Connect-Timeout-Ms must be 1 to 10 digits (milliseconds), got {v:?}"
        )));
    }
    // Ten digits always fit in a u64.
    Ok(Some(Duration::from_millis(v.parse().unwrap_or(u64::MAX))))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Identity,
    Gzip,
}

/// `Content-Encoding` of a request body: identity (or absent) and gzip are understood.
pub fn parse_content_encoding(value: Option<&str>) -> Result<Encoding, ConnectError> {
    match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        None | Some("") | Some("identity") => Ok(Encoding::Identity),
        Some("gzip") => Ok(Encoding::Gzip),
        Some(other) => Err(ConnectError::new(
            Code::Unimplemented,
            format!("unknown compression {other:?}: supported encodings are gzip and identity"),
        )),
    }
}

/// Inflates a gzip body, refusing (`resource_exhausted`) once it grows past `max` bytes, so
/// a small bomb cannot become a large allocation.
pub fn gunzip(raw: &[u8], max: usize) -> Result<Vec<u8>, ConnectError> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(raw)
        .take(max as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| ConnectError::invalid(format!("the gzip request body is corrupt: {e}")))?;
    if out.len() > max {
        return Err(ConnectError::new(
            Code::ResourceExhausted,
            format!("the request body is larger than {max} bytes"),
        ));
    }
    Ok(out)
}

/// The fields of a request, by JSON name, whichever codec brought them: read by their
/// lowerCamelCase name or its snake_case form; `null` and absent mean the default, unknown
/// fields are ignored.
#[derive(Debug, Default, PartialEq)]
pub struct Fields {
    map: Map<String, Value>,
}

impl Fields {
    /// The fields of a request body in `codec`, as the message `schema` (which the binary
    /// codec needs to name its fields; JSON names its own).
    pub fn decode(
        codec: Codec,
        body: &[u8],
        schema: &'static protobuf::Message,
    ) -> Result<Fields, ConnectError> {
        match codec {
            Codec::Json => Fields::parse(body),
            // Zero bytes are a message with every field at its default.
            Codec::Proto => protobuf::decode(body, schema)
                .map(|map| Fields { map })
                .map_err(|e| {
                    ConnectError::invalid(format!("malformed protobuf in the request body: {e}"))
                }),
        }
    }

    /// Parses a JSON request body. An empty body is refused: Connect wants `{}` at least.
    pub fn parse(body: &[u8]) -> Result<Fields, ConnectError> {
        if body.is_empty() {
            return Err(ConnectError::invalid(
                "the request body is empty: send {} for an operation without fields",
            ));
        }
        match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(map)) => Ok(Fields { map }),
            Ok(_) => Err(ConnectError::invalid(
                "the request body must be a JSON object",
            )),
            Err(e) => Err(ConnectError::invalid(format!(
                "malformed JSON in the request body: {e}"
            ))),
        }
    }

    fn get(&self, camel: &str) -> Option<&Value> {
        match self.map.get(camel) {
            Some(Value::Null) | None => match self.map.get(&snake_case(camel)) {
                Some(Value::Null) | None => None,
                v => v,
            },
            v => v,
        }
    }

    /// A string field; absent or null is "".
    pub fn string(&self, camel: &str) -> Result<String, ConnectError> {
        match self.get(camel) {
            None => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(wrong_type(camel, "a string", other)),
        }
    }

    /// An int64 field: a JSON integer or a decimal string; absent or null is 0.
    pub fn int64(&self, camel: &str) -> Result<i64, ConnectError> {
        match self.get(camel) {
            None => Ok(0),
            Some(Value::Number(n)) => n.as_i64().ok_or_else(|| {
                ConnectError::invalid(format!("{camel}: {n} is not a 64-bit integer"))
            }),
            Some(Value::String(s)) => s.trim().parse::<i64>().map_err(|_| {
                ConnectError::invalid(format!("{camel}: {s:?} is not a 64-bit integer"))
            }),
            Some(other) => Err(wrong_type(camel, "an integer", other)),
        }
    }

    /// A repeated message field; absent or null is empty. Each element must be an object.
    pub fn messages(&self, camel: &str) -> Result<Vec<Fields>, ConnectError> {
        match self.get(camel) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::Object(map) => Ok(Fields { map: map.clone() }),
                    other => Err(wrong_type(&format!("{camel}[{i}]"), "an object", other)),
                })
                .collect(),
            Some(other) => Err(wrong_type(camel, "a list", other)),
        }
    }
}

fn wrong_type(field: &str, expected: &str, found: &Value) -> ConnectError {
    let found = match found {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    };
    ConnectError::invalid(format!("{field}: expected {expected}, found {found}"))
}

/// `executionTrackingId` → `execution_tracking_id`, the proto name clients may also send.
pub fn snake_case(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for c in camel.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Serializes an int64 field as a decimal string, as ProtoJSON requires.
pub fn int64_as_string<S: Serializer>(value: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keep_alive_is_an_envelope_of_the_empty_message() {
        assert_eq!(KEEP_ALIVE, envelope(0, br#"{"outputChunk":{}}"#).as_slice());
    }

    #[test]
    fn every_code_has_its_status() {
        let table = [
            (Code::Canceled, "canceled", 499),
            (Code::Unknown, "unknown", 500),
            (Code::InvalidArgument, "invalid_argument", 400),
            (Code::DeadlineExceeded, "deadline_exceeded", 504),
            (Code::NotFound, "not_found", 404),
            (Code::AlreadyExists, "already_exists", 409),
            (Code::PermissionDenied, "permission_denied", 403),
            (Code::ResourceExhausted, "resource_exhausted", 429),
            (Code::FailedPrecondition, "failed_precondition", 400),
            (Code::Aborted, "aborted", 409),
            (Code::OutOfRange, "out_of_range", 400),
            (Code::Unimplemented, "unimplemented", 501),
            (Code::Internal, "internal", 500),
            (Code::Unavailable, "unavailable", 503),
            (Code::DataLoss, "data_loss", 500),
            (Code::Unauthenticated, "unauthenticated", 401),
        ];
        for (code, name, status) in table {
            assert_eq!(code.as_str(), name);
            assert_eq!(code.http_status(), status, "{name}");
        }
    }

    #[test]
    fn error_body_has_code_message_and_details() {
        let e = ConnectError::new(Code::NotFound, "no such \"thing\"");
        let v: Value = serde_json::from_slice(&e.body()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"code": "not_found", "message": "no such \"thing\"", "details": []})
        );
    }

    #[test]
    fn content_types_choose_protocol_and_codec() {
        use {Codec::*, Protocol::*};
        let web = GrpcWeb { text: false };
        type Case = (&'static str, bool, Option<(Protocol, Codec)>, &'static str);
        let cases: &[Case] = &[
            (
                "application/json",
                false,
                Some((Connect, Json)),
                "application/json",
            ),
            (
                "application/json; charset=utf-8",
                false,
                Some((Connect, Json)),
                "application/json",
            ),
            (
                "Application/JSON;charset=UTF-8",
                false,
                Some((Connect, Json)),
                "application/json",
            ),
            (
                "application/proto",
                false,
                Some((Connect, Proto)),
                "application/proto",
            ),
            ("application/connect+json", false, None, ""),
            ("application/connect+proto", false, None, ""),
            (
                "application/connect+json",
                true,
                Some((Connect, Json)),
                "application/connect+json",
            ),
            (
                "application/connect+proto",
                true,
                Some((Connect, Proto)),
                "application/connect+proto",
            ),
            ("application/json", true, None, ""),
            ("application/proto", true, None, ""),
            (
                "application/grpc-web",
                false,
                Some((web, Proto)),
                "application/grpc-web+proto",
            ),
            (
                "application/grpc-web+proto",
                true,
                Some((web, Proto)),
                "application/grpc-web+proto",
            ),
            (
                "application/grpc-web+json",
                false,
                Some((web, Json)),
                "application/grpc-web+json",
            ),
            (
                "application/grpc-web-text",
                true,
                Some((GrpcWeb { text: true }, Proto)),
                "application/grpc-web-text+proto",
            ),
            (
                "application/grpc",
                false,
                Some((Grpc, Proto)),
                "application/grpc+proto",
            ),
            (
                "application/grpc+json",
                true,
                Some((Grpc, Json)),
                "application/grpc+json",
            ),
            ("text/plain", false, None, ""),
            ("application/x-protobuf", false, None, ""),
            ("application/grpc-web+thrift", false, None, ""),
        ];
        for &(content_type, streaming, want, answer) in cases {
            let got = Wire::negotiate(Some(content_type), streaming);
            match want {
                Some((protocol, codec)) => {
                    let wire = got.unwrap();
                    assert_eq!(wire, Wire { protocol, codec }, "{content_type}");
                    assert_eq!(wire.content_type(streaming), answer, "{content_type}");
                }
                None => assert_eq!(got.unwrap_err().status, 415, "{content_type} {streaming}"),
            }
        }
        let none = Wire::negotiate(None, false).unwrap_err();
        assert_eq!((none.status, none.code), (415, Code::Unknown));
        assert!(none.message.contains("send Content-Type: application/json"));
    }

    #[test]
    fn only_grpc_and_streams_are_enveloped() {
        let web = Wire {
            protocol: Protocol::GrpcWeb { text: false },
            codec: Codec::Proto,
        };
        assert!(!Wire::JSON.enveloped(false));
        assert!(Wire::JSON.enveloped(true));
        assert!(web.enveloped(false));
        assert_eq!(Wire::JSON.end(None), end_stream(None));
        assert_eq!(web.end(None), grpc::trailer_frame(None));
    }

    #[test]
    fn protocol_version_rules() {
        for required in [true, false] {
            assert!(check_protocol_version(Some("1"), required).is_ok());
            assert_eq!(
                check_protocol_version(Some("2"), required)
                    .unwrap_err()
                    .status,
                400
            );
        }
        let missing = check_protocol_version(None, true).unwrap_err();
        assert_eq!(missing.code, Code::InvalidArgument);
        assert!(missing.message.contains("Connect-Protocol-Version: 1"));
        assert!(check_protocol_version(None, false).is_ok());
    }

    #[test]
    fn timeout_rules() {
        let cases: &[(Option<&str>, Option<Option<u64>>)] = &[
            (None, Some(None)),
            (Some("1"), Some(Some(1))),
            (Some("9999999999"), Some(Some(9_999_999_999))),
            (Some(""), None),
            (Some("12345678901"), None),
            (Some("-5"), None),
            (Some("1.5"), None),
            (Some(" 5"), None),
            (Some("٣"), None),
        ];
        for (input, want) in cases {
            let got = parse_timeout(*input)
                .ok()
                .map(|d| d.map(|d| d.as_millis() as u64));
            assert_eq!(&got, want, "{input:?}");
        }
    }

    #[test]
    fn encoding_rules() {
        assert_eq!(parse_content_encoding(None).unwrap(), Encoding::Identity);
        assert_eq!(
            parse_content_encoding(Some("identity")).unwrap(),
            Encoding::Identity
        );
        assert_eq!(
            parse_content_encoding(Some("GZIP")).unwrap(),
            Encoding::Gzip
        );
        let br = parse_content_encoding(Some("br")).unwrap_err();
        assert_eq!((br.code, br.status), (Code::Unimplemented, 501));
    }

    #[test]
    fn fields_accept_both_names_null_and_int64_forms() {
        let f = Fields::parse(
            br#"{"action_id":"a","startOffset":"12","x":{"y":[1]},"uniqueTrackingId":null}"#,
        )
        .unwrap();
        assert_eq!(f.string("actionId").unwrap(), "a");
        assert_eq!(f.int64("startOffset").unwrap(), 12);
        assert_eq!(f.string("uniqueTrackingId").unwrap(), "");
        assert_eq!(f.string("missing").unwrap(), "");
        let n = Fields::parse(br#"{"start_offset": -3}"#).unwrap();
        assert_eq!(n.int64("startOffset").unwrap(), -3);
    }

    #[test]
    fn field_errors_name_the_field() {
        let f = Fields::parse(br#"{"actionId": 5, "startOffset": "x", "arguments": [1]}"#).unwrap();
        assert!(
            f.string("actionId")
                .unwrap_err()
                .message
                .starts_with("actionId:")
        );
        assert!(
            f.int64("startOffset")
                .unwrap_err()
                .message
                .starts_with("startOffset:")
        );
        assert!(
            f.messages("arguments")
                .unwrap_err()
                .message
                .starts_with("arguments[0]:")
        );
        let big = Fields::parse(br#"{"startOffset": 1.5}"#).unwrap();
        assert!(big.int64("startOffset").is_err());
    }

    #[test]
    fn bodies_that_are_not_objects_are_refused() {
        for body in [&b""[..], b"[]", b"\"x\"", b"{", b"{} x"] {
            assert_eq!(
                Fields::parse(body).unwrap_err().code,
                Code::InvalidArgument,
                "{body:?}"
            );
        }
        // Python's json.dumps writes emoji as surrogate pairs; they must decode.
        let f = Fields::parse(br#"{"actionId":"\ud83d\ude00"}"#).unwrap();
        assert_eq!(f.string("actionId").unwrap(), "\u{1F600}");
    }

    #[test]
    fn envelopes_frame_their_payload() {
        assert_eq!(envelope(0, b"{}"), [0, 0, 0, 0, 2, b'{', b'}']);
        assert_eq!(end_stream(None), [2, 0, 0, 0, 2, b'{', b'}']);
        let e = ConnectError::new(Code::Unimplemented, "not yet");
        let framed = end_stream(Some(&e));
        assert_eq!(framed[0], END_STREAM);
        let len = u32::from_be_bytes([framed[1], framed[2], framed[3], framed[4]]) as usize;
        assert_eq!(
            &framed[5..],
            br#"{"error":{"code":"unimplemented","message":"not yet"}}"#
        );
        assert_eq!(len, framed.len() - 5);
    }

    #[test]
    fn a_stream_request_is_exactly_one_envelope() {
        let one_of = |body: &[u8]| single_envelope(body, Encoding::Identity, 1024);
        let one = envelope(0, b"{}");
        assert_eq!(one_of(&one).unwrap(), b"{}");
        assert_eq!(one_of(b"").unwrap_err().code, Code::Unimplemented);
        let two = [envelope(0, b"{}"), envelope(0, b"{}")].concat();
        assert_eq!(one_of(&two).unwrap_err().code, Code::Unimplemented);
        assert_eq!(one_of(&one[..4]).unwrap_err().code, Code::InvalidArgument);
        assert_eq!(one_of(&one[..6]).unwrap_err().code, Code::InvalidArgument);
        // Compressed without saying how: Connect's `internal`.
        assert_eq!(
            one_of(&envelope(1, b"{}")).unwrap_err().code,
            Code::Internal
        );
    }

    #[test]
    fn a_compressed_stream_request_is_inflated_within_the_bound() {
        use std::io::Write;
        let gz = |data: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        };
        let body = envelope(1, &gz(b"{}"));
        assert_eq!(single_envelope(&body, Encoding::Gzip, 1024).unwrap(), b"{}");
        // An uncompressed envelope is fine under a negotiated compression too.
        assert_eq!(
            single_envelope(&envelope(0, b"{}"), Encoding::Gzip, 1024).unwrap(),
            b"{}"
        );
        // A small bomb stops at the bound.
        let bomb = envelope(1, &gz(&vec![b' '; 1 << 20]));
        assert!(bomb.len() < 4096);
        assert_eq!(
            single_envelope(&bomb, Encoding::Gzip, 65536)
                .unwrap_err()
                .code,
            Code::ResourceExhausted
        );
        assert_eq!(
            single_envelope(&envelope(1, b"not gzip"), Encoding::Gzip, 1024)
                .unwrap_err()
                .code,
            Code::InvalidArgument
        );
        // Encodings other than gzip are refused by name.
        let e = parse_content_encoding(Some("br")).unwrap_err();
        assert_eq!(e.code, Code::Unimplemented);
    }

    #[test]
    fn snake_case_of_camel_names() {
        assert_eq!(snake_case("executionTrackingId"), "execution_tracking_id");
        assert_eq!(snake_case("title"), "title");
    }
}
