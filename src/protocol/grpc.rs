//! gRPC's wire rules, as pure functions: the status codes, the `grpc-timeout` header, the
//! trailer block (`grpc-status`, `grpc-message`) that gRPC-Web sends as the last frame of the
//! body and gRPC over HTTP/2 as HTTP trailers, and the base64 of `grpc-web-text`. The
//! messages travel in the same envelopes as Connect's streams (`envelope`,
//! `single_envelope`); only the ending differs.

use std::time::Duration;

use super::{Code, ConnectError};

/// The flag of gRPC-Web's trailer frame (the most significant bit, where Connect's
/// end-stream is 0x02).
pub const TRAILERS: u8 = 0x80;

/// gRPC's number of a code (the names are Connect's, the same sixteen).
pub fn status(code: Code) -> u8 {
    match code {
        Code::Canceled => 1,
        Code::Unknown => 2,
        Code::InvalidArgument => 3,
        Code::DeadlineExceeded => 4,
        Code::NotFound => 5,
        Code::AlreadyExists => 6,
        Code::PermissionDenied => 7,
        Code::ResourceExhausted => 8,
        Code::FailedPrecondition => 9,
        Code::Aborted => 10,
        Code::OutOfRange => 11,
        Code::Unimplemented => 12,
        Code::Internal => 13,
        Code::Unavailable => 14,
        Code::DataLoss => 15,
        Code::Unauthenticated => 16,
    }
}

/// The trailers of a call: `grpc-status` (0 after success) and, for an error,
/// `grpc-message`, percent-encoded as gRPC says.
pub fn trailers(error: Option<&ConnectError>) -> Vec<(&'static str, String)> {
    match error {
        None => vec![("grpc-status", "0".into())],
        Some(e) => vec![
            ("grpc-status", status(e.code).to_string()),
            ("grpc-message", percent_encode(&e.message)),
        ],
    }
}

/// gRPC-Web's last frame: the trailers as HTTP/1 header lines in an envelope flagged 0x80.
pub fn trailer_frame(error: Option<&ConnectError>) -> Vec<u8> {
    let mut block = String::new();
    for (name, value) in trailers(error) {
        block.push_str(name);
        block.push(':');
        block.push_str(&value);
        block.push_str("\r\n");
    }
    super::envelope(TRAILERS, block.as_bytes())
}

/// The trailers of a trailer frame, as `trailer_frame` writes them; `None` when `frame` is
/// not one (the HTTP/2 transport turns the frame back into HTTP trailers).
pub fn parse_trailer_frame(frame: &[u8]) -> Option<Vec<(String, String)>> {
    let (&flags, rest) = frame.split_first()?;
    if flags != TRAILERS || rest.len() < 4 {
        return None;
    }
    let block = std::str::from_utf8(&rest[4..]).ok()?;
    Some(
        block
            .split("\r\n")
            .filter_map(|line| line.split_once(':'))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect(),
    )
}

/// `grpc-message`: bytes outside printable ASCII, and `%`, as `%XX`.
fn percent_encode(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for b in message.bytes() {
        if (0x20..=0x7e).contains(&b) && b != b'%' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `grpc-timeout`: absent, or 1 to 8 digits and a unit (`H`ours, `M`inutes, `S`econds,
/// `m`illi-, `u` micro-, `n`anoseconds).
pub fn parse_timeout(value: Option<&str>) -> Result<Option<Duration>, ConnectError> {
    let Some(v) = value else { return Ok(None) };
    let wrong = || {
        ConnectError::invalid(format!(
            "grpc-timeout must be 1 to 8 digits and a unit (H, M, S, m, u, n), got {v:?}"
        ))
    };
    let digits = v.get(..v.len().saturating_sub(1)).ok_or_else(wrong)?;
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(wrong());
    }
    let n: u64 = digits.parse().map_err(|_| wrong())?;
    let d = match &v[digits.len()..] {
        "H" => Duration::from_secs(n * 3600),
        "M" => Duration::from_secs(n * 60),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return Err(wrong()),
    };
    Ok(Some(d))
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding, as `grpc-web-text` sends each frame.
pub fn base64(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(BASE64[(n >> (18 - 6 * i)) as usize & 63]);
            } else {
                out.push(b'=');
            }
        }
    }
    out
}

/// The bytes of a `grpc-web-text` body: base64, possibly several padded pieces one after
/// the other (a client may encode each frame on its own), whitespace ignored.
pub fn unbase64(text: &[u8]) -> Result<Vec<u8>, ConnectError> {
    let wrong = || ConnectError::invalid("the grpc-web-text request body is not base64");
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in text {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            // Padding ends a piece: what it leaves over is not data.
            b'=' => {
                (acc, bits) = (0, 0);
                continue;
            }
            b' ' | b'\t' | b'\r' | b'\n' => continue,
            _ => return Err(wrong()),
        };
        acc = acc << 6 | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_grpc_number() {
        let codes = [
            Code::Canceled,
            Code::Unknown,
            Code::InvalidArgument,
            Code::DeadlineExceeded,
            Code::NotFound,
            Code::AlreadyExists,
            Code::PermissionDenied,
            Code::ResourceExhausted,
            Code::FailedPrecondition,
            Code::Aborted,
            Code::OutOfRange,
            Code::Unimplemented,
            Code::Internal,
            Code::Unavailable,
            Code::DataLoss,
            Code::Unauthenticated,
        ];
        for (i, code) in codes.into_iter().enumerate() {
            assert_eq!(usize::from(status(code)), i + 1, "{code:?}");
        }
    }

    #[test]
    fn the_trailer_frame_carries_status_and_an_encoded_message() {
        assert_eq!(trailer_frame(None), b"\x80\0\0\0\x0fgrpc-status:0\r\n");
        let e = ConnectError::new(Code::NotFound, "no action with id \"é\" (100%)");
        let frame = trailer_frame(Some(&e));
        assert_eq!(frame[0], TRAILERS);
        let text = std::str::from_utf8(&frame[5..]).unwrap();
        assert_eq!(
            text,
            "grpc-status:5\r\ngrpc-message:no action with id \"%C3%A9\" (100%25)\r\n"
        );
        let parsed = parse_trailer_frame(&frame).unwrap();
        assert_eq!(parsed[0], ("grpc-status".into(), "5".into()));
        assert!(parse_trailer_frame(b"\0\0\0\0\0").is_none());
    }

    #[test]
    fn grpc_timeouts() {
        let cases: &[(&str, Option<Duration>)] = &[
            ("1S", Some(Duration::from_secs(1))),
            ("250m", Some(Duration::from_millis(250))),
            ("2H", Some(Duration::from_secs(7200))),
            ("3M", Some(Duration::from_secs(180))),
            ("99999999u", Some(Duration::from_micros(99_999_999))),
            ("7n", Some(Duration::from_nanos(7))),
            ("", None),
            ("S", None),
            ("123456789S", None),
            ("5s", None),
            ("-5S", None),
            ("5", None),
            ("٣S", None),
        ];
        for (value, want) in cases {
            assert_eq!(
                parse_timeout(Some(value)).ok().flatten(),
                *want,
                "{value:?}"
            );
        }
        assert_eq!(parse_timeout(None).unwrap(), None);
    }

    #[test]
    fn base64_both_ways() {
        for (raw, text) in [
            (&b""[..], &b""[..]),
            (b"f", b"Zg=="),
            (b"fo", b"Zm8="),
            (b"foo", b"Zm9v"),
            (b"\0\xff\x80\x01", b"AP+AAQ=="),
        ] {
            assert_eq!(base64(raw), text);
            assert_eq!(unbase64(text).unwrap(), raw);
        }
        // Two padded pieces, as a client that encodes each frame on its own sends them.
        assert_eq!(unbase64(b"Zg==Zm8=").unwrap(), b"ffo");
        assert!(unbase64(b"Zm9v!").is_err());
    }
}
