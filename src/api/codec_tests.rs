//! The two codecs agree: every message of the schema, with every field set, decodes to the same
//! request from JSON and from binary; every answer struct the operations write reads the same
//! in both (binary filled with the defaults it leaves out, as a reader does); and a few
//! messages are checked against bytes written by hand, as protoc's encoder writes them.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::dto::{self, Out, to_json};
use super::routes::Op;
use super::schema;
use crate::protocol::protobuf::{self, Kind, Label, Message, default_of};
use crate::protocol::{Codec, Fields};

/// A value for every field of `m` (one member of a oneof), each different from its default,
/// lists of two with one default element, maps of two with an empty key, nesting three deep.
fn sample(m: &'static Message, depth: usize, n: &mut i64) -> Value {
    let mut object = Map::new();
    let mut oneof_done = false;
    for f in m.fields {
        if f.label == Label::OneOf {
            if oneof_done {
                continue;
            }
            oneof_done = true;
        }
        *n += 1;
        let one = |kind: Kind, n: i64| match kind {
            Kind::String => json!(format!("v{n} é\n\"")),
            Kind::Bool => json!(true),
            Kind::Int32 => json!(if n % 2 == 0 { n } else { -n }),
            Kind::Int64 => json!(format!("{}", -9_007_199_254_740_993 - n)),
            Kind::Message(inner) if depth < 3 => sample(inner, depth + 1, &mut n.clone()),
            Kind::Message(_) | Kind::Map(_) => json!({}),
        };
        let value = match (f.kind, f.label) {
            (Kind::Map(entry), _) => {
                let v = one(entry.fields[1].kind, *n);
                let empty = match entry.fields[1].kind {
                    // A map's message value is never null: `{}` is its default.
                    Kind::Message(_) => json!({}),
                    _ => default_of(&entry.fields[1]),
                };
                json!({"k1": v, "": empty})
            }
            (kind, Label::Repeated) => {
                let empty = match kind {
                    Kind::Message(_) => json!({}),
                    _ => default_of(f),
                };
                json!([one(kind, *n), empty])
            }
            (kind, _) => one(kind, *n),
        };
        object.insert(f.json.to_string(), value);
    }
    Value::Object(object)
}

/// `v` as a reader of the binary codec sees it: every field the encoder left out at its
/// default, in JSON's form (sub-messages absent as null, lists empty, maps empty).
fn with_defaults(m: &'static Message, v: &mut Map<String, Value>) {
    for f in m.fields {
        match v.get_mut(f.json) {
            None if f.label == Label::OneOf => {}
            None if f.label == Label::Repeated => {
                let empty = if matches!(f.kind, Kind::Map(_)) {
                    json!({})
                } else {
                    json!([])
                };
                v.insert(f.json.to_string(), empty);
            }
            None => {
                v.insert(f.json.to_string(), default_of(f));
            }
            Some(present) => fill(f.kind, present),
        }
    }
}

fn fill(kind: Kind, v: &mut Value) {
    match (kind, v) {
        (Kind::Message(inner), Value::Object(o)) => with_defaults(inner, o),
        (kind @ Kind::Message(_), Value::Array(items)) => {
            items.iter_mut().for_each(|i| fill(kind, i));
        }
        (Kind::Map(entry), Value::Object(o)) => {
            o.values_mut().for_each(|i| fill(entry.fields[1].kind, i));
        }
        _ => {}
    }
}

#[test]
fn every_message_decodes_the_same_from_json_and_from_binary() {
    let mut n = 0;
    for (name, m) in schema::every_message() {
        let value = sample(m, 0, &mut n);
        let binary = protobuf::encode(&value, m).unwrap_or_else(|e| panic!("{name}: {e}"));
        let json_bytes = serde_json::to_vec(&value).unwrap();
        let from_json = Fields::decode(Codec::Json, &json_bytes, m).unwrap();
        let from_binary = Fields::decode(Codec::Proto, &binary, m)
            .unwrap_or_else(|e| panic!("{name}: {}", e.message));
        assert_eq!(from_json, from_binary, "{name}");
        let mut decoded = protobuf::decode(&binary, m).unwrap();
        with_defaults(m, &mut decoded);
        let mut want = value.as_object().unwrap().clone();
        with_defaults(m, &mut want);
        assert_eq!(Value::Object(decoded), Value::Object(want), "{name}");
    }
}

/// Asserts that `value`, an answer of `op`, reads the same in JSON and in binary.
pub fn assert_same_in_both<T: Serialize>(op: Op, value: &T) {
    let json: Value = serde_json::from_slice(&to_json(value)).unwrap();
    let binary = Out::new(op, Codec::Proto).encode(value);
    let message = schema::messages(op).1;
    let mut decoded = protobuf::decode(&binary, message).unwrap();
    with_defaults(message, &mut decoded);
    assert_eq!(Value::Object(decoded), json, "{}", message.name);
}

#[test]
fn every_answer_reads_the_same_in_both_codecs() {
    use crate::execution::Outcome;
    use crate::execution::tests::execution;
    use dto::*;

    let e = execution("abc", "date");
    e.finish(Outcome::Exited(-3), 3);
    let mut snap = e.snapshot();
    snap.stdout = "x".repeat(300);
    snap.tags = vec!["a".into(), String::new()];
    let entry = || LogEntryReply {
        log_entry: LogEntry::from(&snap),
    };
    assert_same_in_both(Op::StartActionAndWait, &entry());
    assert_same_in_both(Op::ExecutionStatus, &entry());
    assert_same_in_both(Op::StartActionByGetAndWait, &entry());
    // The JSON of the waiting answer is written by hand; the binary by the schema.
    let json = dto::log_entry_reply(&Out::new(Op::ExecutionStatus, Codec::Json), &snap);
    let binary = dto::log_entry_reply(&Out::new(Op::ExecutionStatus, Codec::Proto), &snap);
    let mut decoded = protobuf::decode(&binary, &schema::EXECUTION_STATUS_RESPONSE).unwrap();
    with_defaults(&schema::EXECUTION_STATUS_RESPONSE, &mut decoded);
    assert_eq!(
        Value::Object(decoded),
        serde_json::from_slice::<Value>(&json).unwrap()
    );

    for op in [Op::StartAction, Op::RestartAction, Op::StartActionByGet] {
        assert_same_in_both(
            op,
            &TrackingIdReply {
                execution_tracking_id: "t-1",
            },
        );
    }
    for found in [true, false] {
        assert_same_in_both(
            Op::KillAction,
            &KillReply {
                execution_tracking_id: "t",
                killed: found,
                already_completed: !found,
                found,
            },
        );
    }
    let page = crate::history::Page {
        entries: vec![],
        total: 12,
        remaining: 3,
    };
    let snaps = [snap.clone(), e.snapshot()];
    assert_same_in_both(Op::GetLogs, &LogsReply::new(&page, &snaps, 10, 2));
    assert_same_in_both(Op::GetActionLogs, &LogsReply::new(&page, &[], 0, 0));
    assert_same_in_both(
        Op::WhoAmI,
        &WhoAmIReply {
            authenticated_user: "ada",
            usergroup: "admins",
            provider: "local",
            acls: vec!["a", "b"],
            sid: "s",
        },
    );
    assert_same_in_both(Op::LocalUserLogin, &LoginReply { success: false });
    assert_same_in_both(Op::LocalUserLogin, &LoginReply { success: true });
    assert_same_in_both(
        Op::PasswordHash,
        &HashReply {
            hash: "$argon2id$…",
        },
    );
    assert_same_in_both(Op::Logout, &Empty {});
    assert_same_in_both(Op::GetReadyz, &ReadyzReply { status: "OK" });
    assert_same_in_both(
        Op::ValidateArgumentType,
        &ValidateReply {
            valid: false,
            description: "no",
        },
    );
    assert_same_in_both(
        Op::Init,
        &InitReply {
            page_title: "t",
            show_footer: true,
            show_navigation: false,
            current_version: "0.2.0",
            root_dashboards: vec!["A".into(), "B".into()],
            auth_local_login: true,
            login_required: false,
            authenticated_user: "guest",
            authenticated_user_provider: "system",
            effective_policy: PolicyJson {
                show_diagnostics: false,
                show_log_list: true,
            },
            additional_links: vec![LinkJson {
                title: "l",
                url: "http://x",
            }],
            banner_message: "",
            banner_css: "c",
        },
    );
    let suggestions = [
        ("a".to_string(), "A".to_string()),
        (String::new(), String::new()),
    ];
    let action = || ActionJson {
        binding_id: "b",
        title: "T",
        icon: "&#1;",
        can_exec: true,
        arguments: vec![ArgumentJson {
            name: "n",
            title: "N",
            kind: "ascii",
            default_value: "d",
            choices: vec![ChoiceJson {
                value: "v",
                title: "",
            }],
            description: "",
            suggestions: &suggestions,
        }],
        popup_on_start: "",
        order: -2,
        timeout: 30,
    };
    assert_same_in_both(Op::GetActionBinding, &BindingReply { action: action() });
    let component = |contents, action| ComponentJson {
        title: "c".into(),
        kind: "fieldset",
        contents,
        icon: "",
        css_class: "x".into(),
        action,
    };
    assert_same_in_both(
        Op::GetDashboard,
        &DashboardReply {
            title: "D",
            dashboard: DashboardJson {
                title: "D",
                contents: vec![
                    component(vec![component(vec![], Some(action()))], None),
                    component(vec![], None),
                ],
            },
        },
    );
    let entity = || EntityJson {
        title: "e",
        unique_key: "k",
        kind: "server",
    };
    assert_same_in_both(Op::GetEntity, &entity());
    assert_same_in_both(
        Op::GetEntities,
        &EntitiesReply {
            entity_definitions: vec![EntityDefinitionJson {
                title: "server",
                instances: vec![entity(), entity()],
                used_on_dashboards: vec!["D"],
            }],
        },
    );
}

#[test]
fn every_event_reads_the_same_in_both_codecs() {
    use crate::events::Event;
    use crate::execution::tests::execution;

    let e = execution("abc", "date");
    for event in [
        Event::ExecutionStarted(e.snapshot()),
        Event::OutputChunk {
            tracking_id: "t".into(),
            output: "o\n".into(),
        },
        Event::ExecutionFinished(e.snapshot()),
        Event::ConfigChanged,
        Event::EntityChanged,
    ] {
        let json = dto::encode_event(&event, dto::form(Codec::Json));
        let binary = dto::encode_event(&event, dto::form(Codec::Proto));
        let json: Value = serde_json::from_slice(&json[5..]).unwrap();
        let m = &schema::EVENT_STREAM_RESPONSE;
        let mut decoded = protobuf::decode(&binary[5..], m).unwrap();
        with_defaults(m, &mut decoded);
        assert_eq!(Value::Object(decoded), json, "{event:?}");
    }
}

#[test]
fn requests_against_bytes_written_by_hand() {
    // StartActionRequest {action_id: "date", arguments: [{name: "who", value: "ada"}]}
    let bytes = b"\x0a\x04date\x12\x0c\x0a\x03who\x12\x03ada\x22\x00";
    let f = Fields::decode(Codec::Proto, bytes, &schema::START_ACTION_REQUEST).unwrap();
    let j = Fields::parse(br#"{"actionId":"date","arguments":[{"name":"who","value":"ada"}]}"#)
        .unwrap();
    assert_eq!(f, j);
    // OliveTin's name (field 4), GetLogs' int64, and an empty message.
    let f = Fields::decode(
        Codec::Proto,
        b"\x22\x05hello",
        &schema::START_ACTION_REQUEST,
    )
    .unwrap();
    assert_eq!(f.string("bindingId").unwrap(), "hello");
    let f = Fields::decode(Codec::Proto, b"\x08\x0a", &schema::GET_LOGS_REQUEST).unwrap();
    assert_eq!(f.int64("startOffset").unwrap(), 10);
    let f = Fields::decode(Codec::Proto, b"", &schema::GET_READYZ_REQUEST).unwrap();
    assert_eq!(f, Fields::parse(b"{}").unwrap());
    // An answer, as protoc writes it: GetReadyzResponse {status: "OK"}.
    let out = Out::new(Op::GetReadyz, Codec::Proto);
    assert_eq!(
        out.encode(&dto::ReadyzReply { status: "OK" }),
        b"\x0a\x02OK"
    );
}
