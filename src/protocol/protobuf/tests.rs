//! The protobuf codec's own tests: the wire format against bytes written by hand, unknown
//! fields and groups skipped, every refusal, and a bounded proptest of hostile input.

use proptest::prelude::*;
use serde_json::json;

use super::*;

macro_rules! f {
    ($number:literal, $json:literal, $kind:expr, $label:expr) => {
        Field {
            number: $number,
            name: $json,
            json: $json,
            kind: $kind,
            label: $label,
        }
    };
}

static INNER: Message = Message {
    name: "Inner",
    fields: &[
        f!(1, "name", Kind::String, Label::Single),
        f!(2, "n", Kind::Int32, Label::Single),
    ],
};
static ENTRY: Message = Message {
    name: "Outer.MEntry",
    fields: &[
        f!(1, "key", Kind::String, Label::Single),
        f!(2, "value", Kind::Message(&INNER), Label::Single),
    ],
};
/// Every kind and label, and itself nested (as DashboardComponent is).
static OUTER: Message = Message {
    name: "Outer",
    fields: &[
        f!(1, "s", Kind::String, Label::Single),
        f!(2, "b", Kind::Bool, Label::Single),
        f!(3, "i", Kind::Int32, Label::Single),
        f!(4, "l", Kind::Int64, Label::Single),
        f!(5, "inner", Kind::Message(&INNER), Label::Single),
        f!(6, "items", Kind::Message(&INNER), Label::Repeated),
        f!(7, "tags", Kind::String, Label::Repeated),
        f!(8, "m", Kind::Map(&ENTRY), Label::Repeated),
        f!(9, "outer", Kind::Message(&OUTER), Label::Single),
        f!(10, "one", Kind::Message(&INNER), Label::OneOf),
    ],
};

fn enc(value: &Value) -> Vec<u8> {
    encode(value, &OUTER).unwrap()
}

fn dec(bytes: &[u8]) -> Result<Value, Malformed> {
    decode(bytes, &OUTER).map(Value::Object)
}

#[test]
fn known_bytes() {
    // Hand-encoded, as protoc's encoder writes them.
    let cases: &[(Value, &[u8])] = &[
        (json!({}), b""),
        (json!({"s": "date"}), b"\x0a\x04date"),
        (json!({"b": true}), b"\x10\x01"),
        (json!({"i": 150}), b"\x18\x96\x01"),
        // Negative int32 goes sign-extended to ten bytes.
        (
            json!({"i": -1}),
            b"\x18\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
        ),
        (json!({"l": "300"}), b"\x20\xac\x02"),
        // A JSON object's keys come sorted (`n` first); any order is valid protobuf.
        (
            json!({"inner": {"name": "a", "n": 1}}),
            b"\x2a\x05\x10\x01\x0a\x01a",
        ),
        // A present sub-message is written even when empty.
        (json!({"inner": {}}), b"\x2a\x00"),
        // Elements of a list are written even when they hold the default.
        (json!({"tags": ["", "x"]}), b"\x3a\x00\x3a\x01x"),
        (
            json!({"m": {"k": {"n": 2}}}),
            b"\x42\x07\x0a\x01k\x12\x02\x10\x02",
        ),
        // Defaults of singular fields are left out.
        (json!({"s": "", "b": false, "i": 0, "l": "0"}), b""),
    ];
    for (value, bytes) in cases {
        assert_eq!(enc(value), *bytes, "{value}");
    }
}

#[test]
fn lengths_past_127_bytes_take_more_varint_bytes() {
    for n in [127, 128, 300, 16_383, 16_384, 70_000] {
        let s = "x".repeat(n);
        let bytes = enc(&json!({"outer": {"s": s}}));
        let back = dec(&bytes).unwrap();
        assert_eq!(back["outer"]["s"].as_str().unwrap().len(), n);
    }
}

#[test]
fn decode_reads_what_encode_writes() {
    let value = json!({
        "s": "ü\n\"", "b": true, "i": -7, "l": "-9007199254740993",
        "inner": {"name": "a", "n": 2147483647},
        "items": [{"name": "x"}, {}],
        "tags": ["a", ""],
        "m": {"k": {"name": "v"}, "": {}},
        "outer": {"outer": {"s": "deep"}},
        "one": {"n": -2147483648}
    });
    assert_eq!(dec(&enc(&value)).unwrap(), value);
}

#[test]
fn unknown_fields_of_every_wire_type_are_skipped() {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(b"\x58\x96\x01"); // 11: varint
    bytes.extend_from_slice(b"\x61\x01\x02\x03\x04\x05\x06\x07\x08"); // 12: i64
    bytes.extend_from_slice(b"\x6a\x03abc"); // 13: len
    bytes.extend_from_slice(b"\x75\x01\x02\x03\x04"); // 14: i32
    // 15: a group holding a varint and a nested group, then its end.
    bytes.extend_from_slice(b"\x7b\x08\x01\x83\x01\x84\x01\x7c");
    bytes.extend_from_slice(b"\x0a\x01s");
    assert_eq!(dec(&bytes).unwrap(), json!({"s": "s"}));
}

#[test]
fn hostile_bytes_are_refused_with_a_reason() {
    let cases: &[(&[u8], &str)] = &[
        (b"\x18", "ends inside a varint"),
        (
            b"\x18\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02",
            "overflows 64 bits",
        ),
        (
            b"\x18\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
            "overflows",
        ),
        (b"\x0a\x05abc", "runs past the end"),
        (
            b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
            "runs past the end",
        ),
        (b"\x00", "field number 0"),
        (b"\x0a\x02\xc3\x28", "not valid UTF-8"),
        (b"\x08\x01", "wire type 0, not 2"),
        (b"\x7c", "never started"),
        (b"\x7b\x84\x01", "ends as group"),
        (b"\x7b", "ends inside a varint"),
        (b"\x5e", "does not exist"),
    ];
    for (bytes, why) in cases {
        let e = dec(bytes).unwrap_err();
        assert!(e.0.contains(why), "{bytes:?}: {e} does not say {why:?}");
    }
}

#[test]
fn nesting_is_bounded() {
    // Messages nested inside each other, each as deep as the last plus one.
    let mut bytes = b"\x0a\x01s".to_vec();
    for _ in 0..MAX_DEPTH - 1 {
        let mut outer = vec![0x4a];
        put_varint(&mut outer, bytes.len() as u64);
        outer.extend_from_slice(&bytes);
        bytes = outer;
    }
    assert!(dec(&bytes).is_ok());
    let mut deeper = vec![0x4a];
    put_varint(&mut deeper, bytes.len() as u64);
    deeper.extend_from_slice(&bytes);
    assert!(dec(&deeper).unwrap_err().0.contains("nest deeper"));
    // Groups likewise, skipped without recursion.
    let mut groups = b"\x7b".repeat(MAX_DEPTH + 1);
    groups.extend_from_slice(&b"\x7c".repeat(MAX_DEPTH + 1));
    assert!(dec(&groups).unwrap_err().0.contains("nest deeper"));
    let ok = [b"\x7b".repeat(MAX_DEPTH), b"\x7c".repeat(MAX_DEPTH)].concat();
    assert!(dec(&ok).is_ok());
}

#[test]
fn a_singular_message_given_twice_is_merged_and_lists_append() {
    let bytes = b"\x2a\x03\x0a\x01a\x2a\x02\x10\x05\x32\x00\x32\x00\x0a\x01x\x0a\x01y";
    assert_eq!(
        dec(bytes).unwrap(),
        json!({"inner": {"name": "a", "n": 5}, "items": [{}, {}], "s": "y"})
    );
}

#[test]
fn encoding_refuses_what_the_schema_does_not_have() {
    assert!(encode(&json!({"nope": 1}), &OUTER).is_err());
    assert!(encode(&json!({"s": 1}), &OUTER).is_err());
    assert!(encode(&json!({"i": 1.5}), &OUTER).is_err());
    assert!(encode(&json!({"l": "x"}), &OUTER).is_err());
    assert!(encode(&json!({"s": ["a"]}), &OUTER).is_err());
}

/// Nested length-delimited fields at every position: what hostile input looks like.
fn nested_bytes() -> impl Strategy<Value = Vec<u8>> {
    let leaf = prop::collection::vec(any::<u8>(), 0..24);
    leaf.prop_recursive(8, 512, 6, |inner| {
        (prop::collection::vec((0u8..16, inner), 0..6), any::<bool>()).prop_map(|(parts, lie)| {
            let mut out = Vec::new();
            for (field, body) in parts {
                // Length-delimited field `field`, with its true length or a lie.
                out.push((field << 3) | LEN);
                let len = if lie { body.len() + 3 } else { body.len() };
                put_varint(&mut out, len as u64);
                out.extend_from_slice(&body);
            }
            out
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Any bytes: an answer, never a panic, and what is decoded is bounded by the input
    /// (its JSON form at most a few times the bytes).
    #[test]
    fn any_bytes_decode_or_are_refused(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        if let Ok(v) = dec(&bytes) {
            let size = serde_json::to_vec(&v).unwrap().len();
            prop_assert!(size <= 16 * bytes.len() + 2, "{} bytes became {size}", bytes.len());
        }
    }

    #[test]
    fn nested_hostile_bytes_decode_or_are_refused(bytes in nested_bytes()) {
        if let Ok(v) = dec(&bytes) {
            let size = serde_json::to_vec(&v).unwrap().len();
            prop_assert!(size <= 16 * bytes.len() + 2, "{} bytes became {size}", bytes.len());
        }
    }

    /// Whatever decodes encodes back, and that encoding is canonical: decoded and
    /// encoded again it is the same bytes (defaults written explicitly are dropped once).
    #[test]
    fn decoded_values_round_trip(bytes in nested_bytes()) {
        if let Ok(v) = dec(&bytes) {
            let once = enc(&v);
            prop_assert_eq!(enc(&dec(&once).unwrap()), once);
        }
    }
}
