//! Tests of `api::schema`, kept apart so the module reads on its own.

use std::collections::BTreeMap;

use super::*;
use crate::api::routes::OPS;

const PROTO: &str = include_str!("../../../proto/svc/api/v1/actiond.proto");

/// A field as the proto file declares it.
#[derive(Debug)]
struct Declared {
    number: u32,
    name: String,
    json: String,
    /// `string`, a message name, or `map<string,V>`.
    kind: String,
    label: crate::protocol::protobuf::Label,
}

/// The tokens of the proto file, comments dropped.
fn tokens() -> Vec<String> {
    let mut out = Vec::new();
    for line in PROTO.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut word = String::new();
        for c in code.chars() {
            if c.is_alphanumeric() || c == '_' || c == '.' || c == '"' {
                word.push(c);
                continue;
            }
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            if !c.is_whitespace() {
                out.push(c.to_string());
            }
        }
        if !word.is_empty() {
            out.push(word);
        }
    }
    out
}

/// Lower camel case of a proto name, as protoc makes JSON names.
fn camel(name: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for c in name.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.push(c.to_ascii_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

type Rpc = (String, String, String, bool);

/// The messages (name → fields) and the service's rpcs (name, request, answer, streaming).
fn parse() -> (BTreeMap<String, Vec<Declared>>, Vec<Rpc>) {
    let t = tokens();
    let (mut messages, mut rpcs) = (BTreeMap::new(), Vec::new());
    let mut i = 0;
    while i < t.len() {
        match t[i].as_str() {
            "message" => {
                let name = t[i + 1].clone();
                i += 3; // name {
                let mut fields = Vec::new();
                let mut oneof = false;
                while t[i] != "}" || oneof {
                    if t[i] == "}" {
                        oneof = false;
                        i += 1;
                        continue;
                    }
                    if t[i] == "oneof" {
                        oneof = true;
                        i += 3;
                        continue;
                    }
                    let mut label = if oneof { OneOf } else { Single };
                    if t[i] == "repeated" {
                        label = Repeated;
                        i += 1;
                    }
                    let kind = if t[i] == "map" {
                        // map < string , V >
                        label = Repeated;
                        let kind = format!("map<{},{}>", t[i + 2], t[i + 4]);
                        i += 6;
                        kind
                    } else {
                        i += 1;
                        t[i - 1].clone()
                    };
                    let name = t[i].clone();
                    let number = t[i + 2].parse().unwrap();
                    i += 3;
                    let mut json = camel(&name);
                    if t[i] == "[" {
                        assert_eq!(t[i + 1], "json_name");
                        json = t[i + 3].trim_matches('"').to_string();
                        i += 5;
                    }
                    assert_eq!(t[i], ";", "after field {name}");
                    i += 1;
                    fields.push(Declared {
                        number,
                        name,
                        json,
                        kind,
                        label,
                    });
                }
                messages.insert(name, fields);
            }
            "rpc" => {
                // rpc Name ( Req ) returns ( [stream] Resp ) ;
                let stream = t[i + 7] == "stream";
                let answer = t[i + if stream { 8 } else { 7 }].clone();
                rpcs.push((t[i + 1].clone(), t[i + 3].clone(), answer, stream));
            }
            _ => {}
        }
        i += 1;
    }
    (messages, rpcs)
}

fn kind_name(kind: K) -> String {
    match kind {
        K::String => "string".into(),
        K::Bool => "bool".into(),
        K::Int32 => "int32".into(),
        K::Int64 => "int64".into(),
        K::Message(m) => m.name.into(),
        K::Map(entry) => format!("map<string,{}>", kind_name(entry.fields[1].kind)),
    }
}

#[test]
fn the_table_is_the_proto_field_by_field() {
    let (declared, _) = parse();
    let table = every_message();
    let own: Vec<&&str> = table.keys().filter(|n| !n.contains('.')).collect();
    let names: Vec<&String> = declared.keys().collect();
    assert_eq!(
        own, names,
        "the table and the proto have different messages"
    );
    for (name, fields) in &declared {
        let m = table[name.as_str()];
        assert_eq!(m.fields.len(), fields.len(), "{name}: number of fields");
        for (d, f) in fields.iter().zip(m.fields) {
            let at = format!("{name}.{}", d.name);
            assert_eq!(
                (f.number, f.name, f.json, f.label),
                (d.number, d.name.as_str(), d.json.as_str(), d.label),
                "{at}"
            );
            assert_eq!(kind_name(f.kind), d.kind, "{at}");
            if let K::Map(entry) = f.kind {
                let key = &entry.fields[0];
                assert_eq!(
                    (key.number, key.json, kind_name(key.kind)),
                    (1, "key", "string".into())
                );
                assert_eq!(entry.fields[1].number, 2, "{at}");
                assert_eq!(entry.fields.len(), 2, "{at}");
            }
        }
    }
}

#[test]
fn every_operation_has_the_protos_messages() {
    let (_, rpcs) = parse();
    assert_eq!(rpcs.len(), OPS.len());
    for (name, request, answer, stream) in rpcs {
        let op = Op::from_name(&name).unwrap_or_else(|| panic!("no operation {name}"));
        let (req, ans) = messages(op);
        assert_eq!(
            (req.name, ans.name),
            (request.as_str(), answer.as_str()),
            "{name}"
        );
        assert_eq!(op.streaming(), stream, "{name}");
    }
}

/// The decoder reads no packed encoding: the API has no repeated number or boolean.
#[test]
fn nothing_repeated_is_packed() {
    for m in every_message().values() {
        for f in m.fields {
            if f.label == Repeated {
                assert!(
                    matches!(f.kind, K::String | K::Message(_) | K::Map(_)),
                    "{}.{} would be packed",
                    m.name,
                    f.name
                );
            }
        }
    }
}
