//! The MQTT 3.1.1 packets actiond sends and receives, as pure functions over bytes: CONNECT
//! (with credentials and a last will), PUBLISH at QoS 0 or 1 (retained or not), SUBSCRIBE,
//! PUBACK, PINGREQ and DISCONNECT out; CONNACK, PUBLISH, PUBACK, SUBACK, UNSUBACK and
//! PINGRESP in. It owns the framing (the remaining-length varint, length-prefixed strings)
//! and the bound on what an incoming packet may cost: a packet longer than the decoder's
//! limit is skipped as it streams in, never buffered. It must not do I/O or know topics.
//!
//! Only this subset is written because it is all actiond needs: a board publishes retained
//! discovery and state messages and listens to a few command topics. QoS 2 is never asked
//! for (subscriptions are made at QoS 0), so its packets are a protocol error here.

use std::fmt;

/// The largest remaining length MQTT can express (four varint bytes).
const MAX_REMAINING: usize = 268_435_455;

/// Why a packet could not be encoded or decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A string or payload longer than the protocol can carry.
    TooLong(&'static str),
    /// The peer sent bytes that are not a packet this client accepts.
    Malformed(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::TooLong(what) => write!(f, "{what} is too long for MQTT"),
            Error::Malformed(why) => write!(f, "malformed packet from the broker: {why}"),
        }
    }
}

/// Delivery guarantee of a PUBLISH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QoS {
    AtMostOnce = 0,
    AtLeastOnce = 1,
}

/// The last will: what the broker publishes for this client if it goes away without a
/// DISCONNECT (killed, power cut, network gone past the keep-alive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Will<'a> {
    pub topic: &'a str,
    pub payload: &'a [u8],
    pub qos: QoS,
    pub retain: bool,
}

/// A CONNECT packet's contents. The session is always clean: presses that arrived while
/// actiond was away must not be replayed later, so nothing is kept for it on the broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connect<'a> {
    pub client_id: &'a str,
    pub keep_alive_secs: u16,
    pub username: Option<&'a str>,
    pub password: Option<&'a [u8]>,
    pub will: Option<Will<'a>>,
}

/// A PUBLISH, received or to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publish {
    pub topic: String,
    pub payload: Vec<u8>,
    pub qos: QoS,
    pub retain: bool,
    /// The packet identifier, present exactly when `qos` is `AtLeastOnce`.
    pub id: Option<u16>,
    /// The broker's mark on a QoS 1 message it sends again (DUP): it may be one already
    /// acknowledged.
    pub dup: bool,
}

/// A packet from the broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incoming {
    ConnAck {
        session_present: bool,
        code: u8,
    },
    Publish(Publish),
    PubAck(u16),
    /// The granted QoS (0, 1, 2) or 0x80 (refused) of each filter, in request order.
    SubAck {
        id: u16,
        codes: Vec<u8>,
    },
    UnsubAck(u16),
    PingResp,
    /// A packet longer than the decoder's limit: its bytes are being skipped.
    TooLarge {
        kind: u8,
        len: usize,
    },
}

/// The text of a CONNACK refusal code.
pub fn connack_reason(code: u8) -> &'static str {
    match code {
        0 => "accepted",
        1 => "the broker does not speak MQTT 3.1.1",
        2 => "the broker refused the client id",
        3 => "the broker is unavailable",
        4 => "the broker refused the username or password",
        5 => "the broker says this client is not authorized (check username and passwordFile)",
        _ => "the broker refused the connection with an unknown code",
    }
}

// ---------------------------------------------------------------------------------------
// Encoding

fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8], what: &'static str) -> Result<(), Error> {
    let len = u16::try_from(bytes.len()).map_err(|_| Error::TooLong(what))?;
    put_u16(out, len);
    out.extend_from_slice(bytes);
    Ok(())
}

/// Appends a fixed header (`first` byte, remaining length) and `body` to `out`.
fn frame(out: &mut Vec<u8>, first: u8, body: &[u8]) -> Result<(), Error> {
    let mut len = body.len();
    if len > MAX_REMAINING {
        return Err(Error::TooLong("a packet"));
    }
    out.push(first);
    loop {
        let mut byte = (len % 128) as u8;
        len /= 128;
        if len > 0 {
            byte |= 0x80;
        }
        out.push(byte);
        if len == 0 {
            break;
        }
    }
    out.extend_from_slice(body);
    Ok(())
}

/// Appends a CONNECT packet.
pub fn connect(out: &mut Vec<u8>, c: &Connect<'_>) -> Result<(), Error> {
    let mut body = Vec::with_capacity(64);
    put_bytes(&mut body, b"MQTT", "the protocol name")?;
    body.push(4); // protocol level 4: MQTT 3.1.1
    let mut flags = 0x02; // clean session
    if let Some(w) = &c.will {
        flags |= 0x04 | ((w.qos as u8) << 3);
        if w.retain {
            flags |= 0x20;
        }
    }
    if c.password.is_some() {
        flags |= 0x40;
    }
    if c.username.is_some() {
        flags |= 0x80;
    }
    body.push(flags);
    put_u16(&mut body, c.keep_alive_secs);
    put_bytes(&mut body, c.client_id.as_bytes(), "the client id")?;
    if let Some(w) = &c.will {
        put_bytes(&mut body, w.topic.as_bytes(), "the will topic")?;
        put_bytes(&mut body, w.payload, "the will message")?;
    }
    if let Some(u) = c.username {
        put_bytes(&mut body, u.as_bytes(), "the username")?;
    }
    if let Some(p) = c.password {
        put_bytes(&mut body, p, "the password")?;
    }
    frame(out, 0x10, &body)
}

/// Appends a PUBLISH packet. `id` is used only at QoS 1.
pub fn publish(
    out: &mut Vec<u8>,
    topic: &str,
    payload: &[u8],
    qos: QoS,
    retain: bool,
    id: u16,
) -> Result<(), Error> {
    let mut body = Vec::with_capacity(topic.len() + payload.len() + 4);
    put_bytes(&mut body, topic.as_bytes(), "a topic")?;
    if qos == QoS::AtLeastOnce {
        put_u16(&mut body, id);
    }
    body.extend_from_slice(payload);
    let first = 0x30 | ((qos as u8) << 1) | u8::from(retain);
    frame(out, first, &body)
}

/// Appends a SUBSCRIBE packet for `filters`, each with its maximum QoS.
pub fn subscribe(out: &mut Vec<u8>, id: u16, filters: &[(&str, QoS)]) -> Result<(), Error> {
    let mut body = Vec::with_capacity(64);
    put_u16(&mut body, id);
    for (filter, qos) in filters {
        put_bytes(&mut body, filter.as_bytes(), "a topic filter")?;
        body.push(*qos as u8);
    }
    frame(out, 0x82, &body)
}

/// Appends a PUBACK for a received QoS 1 PUBLISH.
pub fn puback(out: &mut Vec<u8>, id: u16) {
    out.extend_from_slice(&[0x40, 2]);
    put_u16(out, id);
}

pub fn pingreq(out: &mut Vec<u8>) {
    out.extend_from_slice(&[0xC0, 0]);
}

pub fn disconnect(out: &mut Vec<u8>) {
    out.extend_from_slice(&[0xE0, 0]);
}

// ---------------------------------------------------------------------------------------
// Decoding

/// Splits the bytes read from the broker into packets. It holds at most one packet of up to
/// `max` bytes plus what was fed since; longer packets are reported once and skipped.
#[derive(Debug)]
pub struct Decoder {
    buf: Vec<u8>,
    /// Bytes of an oversized packet still to be thrown away.
    skip: usize,
    max: usize,
}

impl Decoder {
    pub fn new(max: usize) -> Decoder {
        Decoder {
            buf: Vec::new(),
            skip: 0,
            max,
        }
    }

    /// Adds bytes read from the connection.
    pub fn feed(&mut self, mut data: &[u8]) {
        if self.skip > 0 {
            let n = self.skip.min(data.len());
            self.skip -= n;
            data = &data[n..];
        }
        self.buf.extend_from_slice(data);
    }

    /// The next whole packet, if one has arrived.
    pub fn next(&mut self) -> Result<Option<Incoming>, Error> {
        let Some((header, len)) = fixed_header(&self.buf)? else {
            return Ok(None);
        };
        let kind = self.buf[0] >> 4;
        if len > self.max {
            let have = self.buf.len() - header;
            if have >= len {
                self.buf.drain(..header + len);
            } else {
                self.skip = len - have;
                self.buf.clear();
            }
            return Ok(Some(Incoming::TooLarge { kind, len }));
        }
        if self.buf.len() < header + len {
            return Ok(None);
        }
        let first = self.buf[0];
        let packet = parse(first, &self.buf[header..header + len]);
        self.buf.drain(..header + len);
        packet.map(Some)
    }
}

/// (header length, remaining length) once the fixed header is complete.
fn fixed_header(buf: &[u8]) -> Result<Option<(usize, usize)>, Error> {
    let mut len = 0usize;
    for i in 0..4 {
        let Some(&byte) = buf.get(1 + i) else {
            return Ok(None);
        };
        len |= usize::from(byte & 0x7F) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok(Some((2 + i, len)));
        }
    }
    Err(Error::Malformed(
        "the remaining length runs past four bytes".into(),
    ))
}

fn malformed(why: impl Into<String>) -> Error {
    Error::Malformed(why.into())
}

fn read_u16(body: &[u8], at: usize) -> Result<u16, Error> {
    body.get(at..at + 2)
        .map(|b| u16::from_be_bytes([b[0], b[1]]))
        .ok_or_else(|| malformed("the packet ends inside a two-byte field"))
}

fn parse(first: u8, body: &[u8]) -> Result<Incoming, Error> {
    let kind = first >> 4;
    let flags = first & 0x0F;
    let exact = |n: usize, name: &str| {
        if body.len() == n {
            Ok(())
        } else {
            Err(malformed(format!(
                "{name} has {} bytes, not {n}",
                body.len()
            )))
        }
    };
    match kind {
        2 => {
            exact(2, "CONNACK")?;
            Ok(Incoming::ConnAck {
                session_present: body[0] & 1 == 1,
                code: body[1],
            })
        }
        3 => parse_publish(flags, body),
        4 => {
            exact(2, "PUBACK")?;
            Ok(Incoming::PubAck(read_u16(body, 0)?))
        }
        9 => {
            if body.len() < 3 {
                return Err(malformed("SUBACK without return codes"));
            }
            Ok(Incoming::SubAck {
                id: read_u16(body, 0)?,
                codes: body[2..].to_vec(),
            })
        }
        11 => {
            exact(2, "UNSUBACK")?;
            Ok(Incoming::UnsubAck(read_u16(body, 0)?))
        }
        13 => {
            exact(0, "PINGRESP")?;
            Ok(Incoming::PingResp)
        }
        other => Err(malformed(format!(
            "packet type {other} is not one a client receives here"
        ))),
    }
}

fn parse_publish(flags: u8, body: &[u8]) -> Result<Incoming, Error> {
    let qos = match (flags >> 1) & 3 {
        0 => QoS::AtMostOnce,
        1 => QoS::AtLeastOnce,
        q => {
            return Err(malformed(format!(
                "PUBLISH at QoS {q}, never subscribed for"
            )));
        }
    };
    let topic_len = usize::from(read_u16(body, 0)?);
    let topic = body
        .get(2..2 + topic_len)
        .ok_or_else(|| malformed("PUBLISH ends inside its topic"))?;
    let topic = std::str::from_utf8(topic)
        .map_err(|_| malformed("PUBLISH topic is not UTF-8"))?
        .to_string();
    let mut at = 2 + topic_len;
    let id = if qos == QoS::AtLeastOnce {
        let id = read_u16(body, at)?;
        at += 2;
        Some(id)
    } else {
        None
    };
    Ok(Incoming::Publish(Publish {
        topic,
        payload: body[at..].to_vec(),
        qos,
        retain: flags & 1 == 1,
        id,
        dup: flags & 0x08 != 0,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(f: impl FnOnce(&mut Vec<u8>) -> Result<(), Error>) -> Vec<u8> {
        let mut out = Vec::new();
        f(&mut out).unwrap();
        out
    }

    #[test]
    fn connect_packets_match_the_specification_bytes() {
        let will = Will {
            topic: "a/av",
            payload: b"offline",
            qos: QoS::AtLeastOnce,
            retain: true,
        };
        let cases: &[(Connect<'_>, &[u8])] = &[
            (
                Connect {
                    client_id: "c",
                    keep_alive_secs: 30,
                    username: None,
                    password: None,
                    will: None,
                },
                b"\x10\x0d\x00\x04MQTT\x04\x02\x00\x1e\x00\x01c",
            ),
            (
                Connect {
                    client_id: "c",
                    keep_alive_secs: 60,
                    username: Some("u"),
                    password: Some(b"pw"),
                    will: Some(will.clone()),
                },
                b"\x10\x23\x00\x04MQTT\x04\xee\x00\x3c\x00\x01c\
                  \x00\x04a/av\x00\x07offline\x00\x01u\x00\x02pw",
            ),
        ];
        for (c, want) in cases {
            assert_eq!(bytes(|o| connect(o, c)), *want, "{c:?}");
        }
    }

    #[test]
    fn publish_subscribe_and_small_packets() {
        let cases: &[(Vec<u8>, &[u8])] = &[
            (
                bytes(|o| publish(o, "a/b", b"hi", QoS::AtMostOnce, false, 7)),
                b"\x30\x07\x00\x03a/bhi",
            ),
            (
                bytes(|o| publish(o, "a/b", b"hi", QoS::AtLeastOnce, true, 0x0102)),
                b"\x33\x09\x00\x03a/b\x01\x02hi",
            ),
            (
                bytes(|o| publish(o, "t", b"", QoS::AtMostOnce, true, 0)),
                b"\x31\x03\x00\x01t",
            ),
            (
                bytes(|o| subscribe(o, 5, &[("a/+/p", QoS::AtMostOnce), ("s", QoS::AtLeastOnce)])),
                b"\x82\x0e\x00\x05\x00\x05a/+/p\x00\x00\x01s\x01",
            ),
            (
                bytes(|o| {
                    puback(o, 0x0a0b);
                    Ok(())
                }),
                b"\x40\x02\x0a\x0b",
            ),
            (
                bytes(|o| {
                    pingreq(o);
                    disconnect(o);
                    Ok(())
                }),
                b"\xc0\x00\xe0\x00",
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn remaining_lengths_use_the_varint_boundaries() {
        for (len, header) in [
            (0usize, vec![0x30, 0x00]),
            (127, vec![0x30, 0x7F]),
            (128, vec![0x30, 0x80, 0x01]),
            (16_383, vec![0x30, 0xFF, 0x7F]),
            (16_384, vec![0x30, 0x80, 0x80, 0x01]),
        ] {
            let mut out = Vec::new();
            frame(&mut out, 0x30, &vec![0; len]).unwrap();
            assert_eq!(out[..header.len()], header[..], "{len}");
            assert_eq!(out.len(), header.len() + len);
            // The decoder reads back the same length.
            assert_eq!(
                fixed_header(&out).unwrap(),
                Some((header.len(), len)),
                "{len}"
            );
        }
        assert!(fixed_header(&[0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]).is_err());
        assert_eq!(fixed_header(&[0x30, 0xFF]).unwrap(), None);
    }

    #[test]
    fn strings_longer_than_the_protocol_allows_are_refused() {
        let long = "x".repeat(70_000);
        let mut out = Vec::new();
        assert_eq!(
            publish(&mut out, &long, b"", QoS::AtMostOnce, false, 0),
            Err(Error::TooLong("a topic"))
        );
        // A long payload is fine: only strings are length-prefixed.
        assert!(publish(&mut out, "t", long.as_bytes(), QoS::AtMostOnce, false, 0).is_ok());
    }

    fn decode_all(max: usize, chunks: &[&[u8]]) -> Vec<Result<Incoming, Error>> {
        let mut d = Decoder::new(max);
        let mut out = Vec::new();
        for chunk in chunks {
            d.feed(chunk);
            loop {
                match d.next() {
                    Ok(Some(p)) => out.push(Ok(p)),
                    Ok(None) => break,
                    Err(e) => {
                        out.push(Err(e));
                        break;
                    }
                }
            }
        }
        out
    }

    #[test]
    fn incoming_packets_decode_whole_or_in_pieces() {
        let publish_q1 = b"\x32\x0a\x00\x03a/b\x00\x09PRE";
        let cases: &[(&[&[u8]], Vec<Incoming>)] = &[
            (
                &[b"\x20\x02\x00\x00"],
                vec![Incoming::ConnAck {
                    session_present: false,
                    code: 0,
                }],
            ),
            (
                &[b"\x20\x02\x01\x04"],
                vec![Incoming::ConnAck {
                    session_present: true,
                    code: 4,
                }],
            ),
            (
                &[b"\x31\x0a\x00\x03a/bPRESS"],
                vec![Incoming::Publish(Publish {
                    topic: "a/b".into(),
                    payload: b"PRESS".to_vec(),
                    qos: QoS::AtMostOnce,
                    retain: true,
                    id: None,
                    dup: false,
                })],
            ),
            (
                // The same packet split at every awkward place.
                &[
                    &publish_q1[..1],
                    &publish_q1[1..3],
                    &publish_q1[3..9],
                    &publish_q1[9..],
                ],
                vec![Incoming::Publish(Publish {
                    topic: "a/b".into(),
                    payload: b"PRE".to_vec(),
                    qos: QoS::AtLeastOnce,
                    retain: false,
                    id: Some(9),
                    dup: false,
                })],
            ),
            (
                &[b"\x90\x04\x00\x01\x00\x80\xd0\x00\x40\x02\x00\x02\xb0\x02\x00\x03"],
                vec![
                    Incoming::SubAck {
                        id: 1,
                        codes: vec![0, 0x80],
                    },
                    Incoming::PingResp,
                    Incoming::PubAck(2),
                    Incoming::UnsubAck(3),
                ],
            ),
        ];
        for (chunks, want) in cases {
            let got: Vec<Incoming> = decode_all(1024, chunks)
                .into_iter()
                .map(Result::unwrap)
                .collect();
            assert_eq!(&got, want, "{chunks:?}");
        }
    }

    #[test]
    fn hostile_packets_are_errors_not_panics() {
        let cases: &[&[u8]] = &[
            b"\x20\x03\x00\x00\x00",      // CONNACK of the wrong length
            b"\x34\x05\x00\x01t\x00\x01", // QoS 2
            b"\x30\x01\x00",              // topic length cut off
            b"\x30\x04\x00\x05ab",        // topic longer than the packet
            b"\x30\x04\x00\x02\xff\xfe",  // topic not UTF-8
            b"\x32\x03\x00\x01t",         // QoS 1 without a packet id
            b"\x90\x02\x00\x01",          // SUBACK without codes
            b"\x10\x00",                  // a CONNECT sent to the client
            b"\xf0\x00",                  // reserved type
            b"\x30\xff\xff\xff\xff\x7f",  // remaining length of five bytes
        ];
        for bytes in cases {
            let got = decode_all(1024, &[bytes]);
            assert!(
                matches!(got.last(), Some(Err(Error::Malformed(_)))),
                "{bytes:?}: {got:?}"
            );
        }
    }

    #[test]
    fn oversized_packets_are_skipped_without_being_buffered() {
        let mut big = Vec::new();
        publish(&mut big, "t", &[b'x'; 300], QoS::AtMostOnce, false, 0).unwrap();
        let mut after = Vec::new();
        publish(&mut after, "t", b"ok", QoS::AtMostOnce, false, 0).unwrap();
        let mut d = Decoder::new(100);
        // The header and a little of the body arrive first.
        d.feed(&big[..10]);
        assert_eq!(
            d.next().unwrap(),
            Some(Incoming::TooLarge { kind: 3, len: 303 })
        );
        assert!(d.buf.is_empty());
        d.feed(&big[10..200]);
        assert!(d.buf.is_empty(), "skipped bytes are not kept");
        let mut rest = big[200..].to_vec();
        rest.extend_from_slice(&after);
        d.feed(&rest);
        match d.next().unwrap() {
            Some(Incoming::Publish(p)) => assert_eq!(p.payload, b"ok"),
            other => panic!("{other:?}"),
        }
        // A whole oversized packet in one read is dropped at once.
        let mut both = big.clone();
        both.extend_from_slice(&after);
        let got = decode_all(100, &[&both]);
        assert_eq!(got.len(), 2);
        assert!(matches!(got[1], Ok(Incoming::Publish(_))));
    }

    #[test]
    fn connack_codes_have_reasons() {
        assert_eq!(connack_reason(0), "accepted");
        assert!(connack_reason(4).contains("username or password"));
        assert!(connack_reason(99).contains("unknown"));
    }
}
