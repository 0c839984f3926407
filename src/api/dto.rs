//! Response messages as they go on the wire: in JSON every field present, names exactly
//! the API document's, int64 as decimal strings; in binary protobuf the same structs, each
//! field by its number in `proto/` (`schema`). Only the API layer serializes; domain types are
//! converted here, never derived `Serialize` themselves. `Out` is how one request's answer is
//! written: the codec it asked for, and its operation's answer message.

use bytes::Bytes;
use serde::Serialize;
use tracing::warn;

use super::routes::Op;
use super::schema;
use crate::events::{Event, Form};
use crate::execution::Snapshot;
use crate::history::Page;
use crate::protocol::protobuf::{self, Message};
use crate::protocol::{Codec, KEEP_ALIVE, envelope, int64_as_string};

/// How an answer is written: chosen once per request (its codec), for its operation (the
/// answer message the binary codec numbers the fields by).
#[derive(Debug, Clone, Copy)]
pub struct Out {
    codec: Codec,
    message: &'static Message,
}

impl Out {
    pub fn new(op: Op, codec: Codec) -> Out {
        Out {
            codec,
            message: schema::messages(op).1,
        }
    }

    pub fn codec(&self) -> Codec {
        self.codec
    }

    /// `value`, an answer struct of this operation, in the request's codec.
    pub fn encode<T: Serialize>(&self, value: &T) -> Vec<u8> {
        match self.codec {
            Codec::Json => to_json(value),
            Codec::Proto => to_proto(value, self.message),
        }
    }
}

/// An answer in binary protobuf. Failing is a bug (a struct field the schema lacks), which
/// the codec tests rule out for every answer: logged, and answered as the empty message.
fn to_proto<T: Serialize + ?Sized>(value: &T, message: &'static Message) -> Vec<u8> {
    protobuf::encode(value, message).unwrap_or_else(|e| {
        warn!("could not encode a {} in protobuf: {e}", message.name);
        Vec::new()
    })
}

/// A message without fields (LogoutResponse, the empty events).
#[derive(Serialize)]
pub struct Empty {}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogEntry<'a> {
    datetime_started: &'a str,
    datetime_finished: &'a str,
    action_title: &'a str,
    action_id: &'a str,
    action_icon: &'a str,
    stdout: &'a str,
    stderr: &'a str,
    timed_out: bool,
    exit_code: i32,
    user: &'a str,
    user_class: &'a str,
    tags: &'a [String],
    execution_tracking_id: &'a str,
    execution_started: bool,
    execution_finished: bool,
    blocked: bool,
}

impl<'a> From<&'a Snapshot> for LogEntry<'a> {
    fn from(s: &'a Snapshot) -> Self {
        LogEntry {
            datetime_started: &s.datetime_started,
            datetime_finished: &s.datetime_finished,
            action_title: &s.action_title,
            action_id: &s.action_id,
            action_icon: &s.action_icon,
            stdout: &s.stdout,
            stderr: &s.stderr,
            timed_out: s.flags.timed_out,
            exit_code: s.flags.exit_code,
            user: &s.user,
            user_class: &s.user_class,
            tags: &s.tags,
            execution_tracking_id: &s.execution_tracking_id,
            execution_started: s.flags.execution_started,
            execution_finished: s.flags.execution_finished,
            blocked: s.flags.blocked,
        }
    }
}

impl LogEntry<'_> {
    /// This entry as JSON: the same bytes as its derived `Serialize` (a test holds them
    /// equal), with the keys written as literals. serde_json escapes every key at run time,
    /// which was a third of the 11 000 instructions of encoding the answer to each press
    /// (callgrind, docs/PERFORMANCE.md); the values go through serde_json's escaping as
    /// before.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        fn text(out: &mut Vec<u8>, key: &[u8], value: &str) {
            out.extend_from_slice(key);
            // Writing a string into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut *out, value);
        }
        fn flag(out: &mut Vec<u8>, key: &[u8], value: bool) {
            out.extend_from_slice(key);
            out.extend_from_slice(if value { b"true" } else { b"false" });
        }
        text(out, b"{\"datetimeStarted\":", self.datetime_started);
        text(out, b",\"datetimeFinished\":", self.datetime_finished);
        text(out, b",\"actionTitle\":", self.action_title);
        text(out, b",\"actionId\":", self.action_id);
        text(out, b",\"actionIcon\":", self.action_icon);
        text(out, b",\"stdout\":", self.stdout);
        text(out, b",\"stderr\":", self.stderr);
        flag(out, b",\"timedOut\":", self.timed_out);
        out.extend_from_slice(b",\"exitCode\":");
        let _ = serde_json::to_writer(&mut *out, &self.exit_code);
        text(out, b",\"user\":", self.user);
        text(out, b",\"userClass\":", self.user_class);
        out.extend_from_slice(b",\"tags\":");
        let _ = serde_json::to_writer(&mut *out, self.tags);
        text(
            out,
            b",\"executionTrackingId\":",
            self.execution_tracking_id,
        );
        flag(out, b",\"executionStarted\":", self.execution_started);
        flag(out, b",\"executionFinished\":", self.execution_finished);
        flag(out, b",\"blocked\":", self.blocked);
        out.push(b'}');
    }
}

/// `{"logEntry": …}` for one snapshot, the answer of the waiting and status operations, in
/// JSON written by `LogEntry::write_json`.
pub fn log_entry_reply(to: &Out, s: &Snapshot) -> Vec<u8> {
    if to.codec == Codec::Proto {
        return to.encode(&LogEntryReply {
            log_entry: LogEntry::from(s),
        });
    }
    let mut out = Vec::with_capacity(JSON_CAPACITY + s.stdout.len() + s.stderr.len());
    out.extend_from_slice(b"{\"logEntry\":");
    LogEntry::from(s).write_json(&mut out);
    out.push(b'}');
    out
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TrackingIdReply<'a> {
    pub execution_tracking_id: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogEntryReply<'a> {
    pub log_entry: LogEntry<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KillReply<'a> {
    pub execution_tracking_id: &'a str,
    pub killed: bool,
    pub already_completed: bool,
    pub found: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogsReply<'a> {
    logs: Vec<LogEntry<'a>>,
    #[serde(serialize_with = "int64_as_string")]
    count_remaining: i64,
    #[serde(serialize_with = "int64_as_string")]
    page_size: i64,
    #[serde(serialize_with = "int64_as_string")]
    total_count: i64,
    #[serde(serialize_with = "int64_as_string")]
    start_offset: i64,
}

impl<'a> LogsReply<'a> {
    pub fn new(
        page: &Page,
        snapshots: &'a [Snapshot],
        page_size: usize,
        start_offset: i64,
    ) -> Self {
        LogsReply {
            logs: snapshots.iter().map(LogEntry::from).collect(),
            count_remaining: page.remaining as i64,
            page_size: page_size as i64,
            total_count: page.total as i64,
            start_offset,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WhoAmIReply<'a> {
    pub authenticated_user: &'a str,
    pub usergroup: &'a str,
    pub provider: &'a str,
    pub acls: Vec<&'a str>,
    pub sid: &'a str,
}

#[derive(Serialize)]
pub struct LoginReply {
    pub success: bool,
}

#[derive(Serialize)]
pub struct HashReply<'a> {
    pub hash: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyJson {
    pub show_diagnostics: bool,
    pub show_log_list: bool,
}

#[derive(Serialize)]
pub struct LinkJson<'a> {
    pub title: &'a str,
    pub url: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitReply<'a> {
    pub page_title: &'a str,
    pub show_footer: bool,
    pub show_navigation: bool,
    pub current_version: &'a str,
    pub root_dashboards: Vec<String>,
    pub auth_local_login: bool,
    pub login_required: bool,
    pub authenticated_user: &'a str,
    pub authenticated_user_provider: &'a str,
    pub effective_policy: PolicyJson,
    pub additional_links: Vec<LinkJson<'a>>,
    pub banner_message: &'a str,
    pub banner_css: &'a str,
}

/// The API's `Action` message.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionJson<'a> {
    pub binding_id: &'a str,
    pub title: &'a str,
    pub icon: &'a str,
    pub can_exec: bool,
    pub arguments: Vec<ArgumentJson<'a>>,
    pub popup_on_start: &'a str,
    pub order: i32,
    pub timeout: i32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArgumentJson<'a> {
    pub name: &'a str,
    pub title: &'a str,
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub default_value: &'a str,
    pub choices: Vec<ChoiceJson<'a>>,
    pub description: &'a str,
    /// A JSON object in config order.
    #[serde(serialize_with = "pairs_as_map")]
    pub suggestions: &'a [(String, String)],
}

#[derive(Serialize)]
pub struct ChoiceJson<'a> {
    pub value: &'a str,
    pub title: &'a str,
}

/// The API's recursive `DashboardComponent`; an absent action is `null`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ComponentJson<'a> {
    pub title: std::borrow::Cow<'a, str>,
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub contents: Vec<ComponentJson<'a>>,
    pub icon: &'a str,
    pub css_class: std::borrow::Cow<'a, str>,
    pub action: Option<ActionJson<'a>>,
}

#[derive(Serialize)]
pub struct DashboardJson<'a> {
    pub title: &'a str,
    pub contents: Vec<ComponentJson<'a>>,
}

#[derive(Serialize)]
pub struct DashboardReply<'a> {
    pub title: &'a str,
    pub dashboard: DashboardJson<'a>,
}

#[derive(Serialize)]
pub struct EntityJson<'a> {
    pub title: &'a str,
    #[serde(rename = "uniqueKey")]
    pub unique_key: &'a str,
    #[serde(rename = "type")]
    pub kind: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EntityDefinitionJson<'a> {
    pub title: &'a str,
    pub instances: Vec<EntityJson<'a>>,
    pub used_on_dashboards: Vec<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EntitiesReply<'a> {
    pub entity_definitions: Vec<EntityDefinitionJson<'a>>,
}

#[derive(Serialize)]
pub struct BindingReply<'a> {
    pub action: ActionJson<'a>,
}

fn pairs_as_map<S: serde::Serializer>(
    pairs: &&[(String, String)],
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(pairs.len()))?;
    for (k, v) in pairs.iter() {
        map.serialize_entry(k, v)?;
    }
    map.end()
}

#[derive(Serialize)]
pub struct ValidateReply<'a> {
    pub valid: bool,
    pub description: &'a str,
}

#[derive(Serialize)]
pub struct ReadyzReply<'a> {
    pub status: &'a str,
}

/// The form of the event bus's frames for a codec: the bus encodes each event once per form.
pub fn form(codec: Codec) -> Form {
    match codec {
        Codec::Json => 0,
        Codec::Proto => 1,
    }
}

/// The keep-alive of an event stream in its codec: an outputChunk of no execution and no
/// text (`protocol::KEEP_ALIVE` in JSON; in binary field 5 of EventStreamResponse, empty).
pub fn keep_alive(codec: Codec) -> Bytes {
    match codec {
        Codec::Json => Bytes::from_static(KEEP_ALIVE),
        Codec::Proto => Bytes::from_static(KEEP_ALIVE_PROTO),
    }
}

/// An envelope of 2 bytes: the tag of `output_chunk` (5, length-delimited) and length 0.
const KEEP_ALIVE_PROTO: &[u8] = &[0, 0, 0, 0, 2, 5 << 3 | 2, 0];

/// An event as one stream envelope (Connect's and gRPC's are alike), in the codec of `form`.
/// Only the member that is set appears: connect-es rejects a oneof with the other members
/// present as null.
pub fn encode_event(event: &Event, form: Form) -> Vec<u8> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Output<'a> {
        execution_tracking_id: &'a str,
        output: &'a str,
    }
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    enum Message<'a> {
        ExecutionStarted(LogEntryReply<'a>),
        OutputChunk(Output<'a>),
        ExecutionFinished(LogEntryReply<'a>),
        ConfigChanged(Empty),
        EntityChanged(Empty),
    }
    let message = match event {
        Event::ExecutionStarted(s) => Message::ExecutionStarted(LogEntryReply {
            log_entry: LogEntry::from(s),
        }),
        Event::OutputChunk {
            tracking_id,
            output,
        } => Message::OutputChunk(Output {
            execution_tracking_id: tracking_id,
            output,
        }),
        Event::ExecutionFinished(s) => Message::ExecutionFinished(LogEntryReply {
            log_entry: LogEntry::from(s),
        }),
        Event::ConfigChanged => Message::ConfigChanged(Empty {}),
        Event::EntityChanged => Message::EntityChanged(Empty {}),
    };
    let payload = if form == self::form(Codec::Proto) {
        to_proto(&message, &schema::EVENT_STREAM_RESPONSE)
    } else {
        to_json(&message)
    };
    envelope(0, &payload)
}

/// The first allocation of an answer: a LogEntry without its output fits, and growing from
/// empty took seven reallocations for one. Under 1 KiB, because the C library's allocator
/// tidies its free lists on every request of 1 KiB or more.
const JSON_CAPACITY: usize = 960;

pub fn to_json<T: Serialize>(value: &T) -> Vec<u8> {
    // Serializing these plain structs cannot fail: no maps with non-string keys, no
    // custom serializers that error.
    let mut out = Vec::with_capacity(JSON_CAPACITY);
    match serde_json::to_writer(&mut out, value) {
        Ok(()) => out,
        Err(_) => b"{}".to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::Outcome;
    use crate::execution::tests::execution;

    #[test]
    fn a_log_entry_has_every_field_with_the_seeds_names() {
        let e = execution("abc", "date");
        e.finish(Outcome::Exited(0), 3);
        let snap = e.snapshot();
        let v: serde_json::Value =
            serde_json::from_slice(&to_json(&LogEntry::from(&snap))).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        let mut want = vec![
            "datetimeStarted",
            "datetimeFinished",
            "actionTitle",
            "actionId",
            "actionIcon",
            "stdout",
            "stderr",
            "timedOut",
            "exitCode",
            "user",
            "userClass",
            "tags",
            "executionTrackingId",
            "executionStarted",
            "executionFinished",
            "blocked",
        ];
        let mut got = keys.clone();
        got.sort();
        want.sort();
        assert_eq!(got, want);
        assert_eq!(v["exitCode"], serde_json::json!(0));
        assert_eq!(v["tags"], serde_json::json!([]));
    }

    #[test]
    fn the_written_log_entry_is_the_derived_one_byte_for_byte() {
        let tags = ["a\"b".to_string(), "ü".to_string()];
        let cases = [
            ("", "", "", 0, false, &tags[..0]),
            ("hello\n", "", "Say \"hi\"", -1, true, &tags[..]),
            (
                "\u{1}\t\r\\ </script> ✓",
                "err\u{7f}",
                "x",
                137,
                false,
                &tags[..1],
            ),
        ];
        for (stdout, stderr, title, exit_code, flag, tags) in cases {
            let e = LogEntry {
                datetime_started: "2026-11-23 19:00:00",
                datetime_finished: "",
                action_title: title,
                action_id: "hello",
                action_icon: "&#128338;",
                stdout,
                stderr,
                timed_out: flag,
                exit_code,
                user: "guest",
                user_class: "o'brien",
                tags,
                execution_tracking_id: "f2da0bf3-b42a-4e1a-a297-ed0197d6c478",
                execution_started: !flag,
                execution_finished: flag,
                blocked: flag,
            };
            let mut written = Vec::new();
            e.write_json(&mut written);
            assert_eq!(
                String::from_utf8(written).unwrap(),
                String::from_utf8(to_json(&e)).unwrap()
            );
        }
        let x = execution("abc", "date");
        x.finish(Outcome::Exited(3), 3);
        let snap = x.snapshot();
        assert_eq!(
            log_entry_reply(&Out::new(Op::StartActionAndWait, Codec::Json), &snap),
            to_json(&LogEntryReply {
                log_entry: LogEntry::from(&snap)
            })
        );
    }

    #[test]
    fn the_keep_alive_is_an_empty_output_chunk_in_both_codecs() {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct KeepAlive {
            output_chunk: Empty,
        }
        let message = KeepAlive {
            output_chunk: Empty {},
        };
        assert_eq!(keep_alive(Codec::Json), envelope(0, &to_json(&message)));
        let proto = to_proto(&message, &schema::EVENT_STREAM_RESPONSE);
        assert_eq!(keep_alive(Codec::Proto), envelope(0, &proto));
    }

    #[test]
    fn events_carry_only_their_member() {
        let framed = encode_event(
            &Event::OutputChunk {
                tracking_id: "t".into(),
                output: "o\n".into(),
            },
            form(Codec::Json),
        );
        assert_eq!(framed[0], 0);
        assert_eq!(
            &framed[5..],
            br#"{"outputChunk":{"executionTrackingId":"t","output":"o\n"}}"#
        );
        assert_eq!(
            &encode_event(&Event::ConfigChanged, form(Codec::Json))[5..],
            br#"{"configChanged":{}}"#
        );
        let e = execution("abc", "date");
        let started: serde_json::Value = serde_json::from_slice(
            &encode_event(&Event::ExecutionStarted(e.snapshot()), form(Codec::Json))[5..],
        )
        .unwrap();
        assert_eq!(
            started["executionStarted"]["logEntry"]["executionTrackingId"],
            "abc"
        );
        assert_eq!(started.as_object().unwrap().len(), 1);
    }

    #[test]
    fn int64_fields_are_strings() {
        let page = Page {
            entries: vec![],
            total: 3,
            remaining: 1,
        };
        let v: serde_json::Value =
            serde_json::from_slice(&to_json(&LogsReply::new(&page, &[], 10, 2))).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"logs": [], "countRemaining": "1", "pageSize": "10", "totalCount": "3", "startOffset": "2"})
        );
    }
}
