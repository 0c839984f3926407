//! The binary protobuf codec, as pure functions over a schema: the wire format (varints,
//! tags, length-delimited fields), a decoder from bytes to the same JSON object the JSON codec
//! reads (`Fields` then serves both), and an encoder of any `Serialize` answer (the very
//! structs the JSON codec writes) to bytes. The schema is a table of `Message`s that the API
//! gives (`api::schema`, checked field by field against `proto/`); this module knows no
//! message of its own.
//!
//! Decoding is bounded by its input: it allocates only for what the bytes hold, refuses a
//! varint longer than ten bytes, a length that runs past its message, a nesting deeper than
//! [`MAX_DEPTH`] and a string that is not UTF-8, and skips the fields it does not know, as
//! protobuf requires, groups included. It must not panic on any input (a proptest feeds it
//! hostile bytes).

use serde::Serialize;
use serde::ser::{self, Impossible};
use serde_json::{Map, Value};

/// One message of the schema.
#[derive(Debug)]
pub struct Message {
    /// Its name in the proto (`StartActionRequest`), for errors and the schema test.
    pub name: &'static str,
    pub fields: &'static [Field],
}

/// One field of a message.
#[derive(Debug)]
pub struct Field {
    /// The proto name (`action_id`).
    pub name: &'static str,
    /// The JSON name (`actionId`): the key of the JSON object both codecs decode to, and the
    /// name the answer structs serialize the field under.
    pub json: &'static str,
    pub number: u32,
    pub kind: Kind,
    pub label: Label,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    Single,
    Repeated,
    /// A member of the message's one `oneof`.
    OneOf,
}

#[derive(Debug, Clone, Copy)]
pub enum Kind {
    String,
    Bool,
    Int32,
    Int64,
    Message(&'static Message),
    /// A `map<K, V>`: repeated entries of this message, whose field 1 is the key (a string)
    /// and field 2 the value, as protobuf encodes maps.
    Map(&'static Message),
}

impl Kind {
    /// The wire type the field is encoded with.
    fn wire_type(self) -> u8 {
        match self {
            Kind::Bool | Kind::Int32 | Kind::Int64 => VARINT,
            Kind::String | Kind::Message(_) | Kind::Map(_) => LEN,
        }
    }
}

impl Message {
    fn field(&self, json: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.json == json)
    }

    fn numbered(&self, number: u64) -> Option<&'static Field> {
        self.fields.iter().find(|f| u64::from(f.number) == number)
    }
}

const VARINT: u8 = 0;
const I64: u8 = 1;
const LEN: u8 = 2;
const START_GROUP: u8 = 3;
const END_GROUP: u8 = 4;
const I32: u8 = 5;

/// The deepest nesting decoded, of messages and of skipped groups alike: far deeper than any
/// message of the API (a request nests two deep), and shallow enough that the recursion
/// cannot exhaust the stack.
pub const MAX_DEPTH: usize = 32;

/// Why bytes are not a message of the schema; the text says where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub String);

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn bad<T>(why: impl Into<String>) -> Result<T, Malformed> {
    Err(Malformed(why.into()))
}

struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, Malformed> {
        let mut value = 0u64;
        for i in 0..10 {
            let Some((&b, rest)) = self.buf.split_first() else {
                return bad("the message ends inside a varint");
            };
            self.buf = rest;
            // The tenth byte holds the 64th bit alone.
            if i == 9 && b > 1 {
                return bad("a varint overflows 64 bits");
            }
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        bad("a varint is longer than 10 bytes")
    }

    fn take(&mut self, n: u64) -> Result<&'a [u8], Malformed> {
        match usize::try_from(n).ok().filter(|&n| n <= self.buf.len()) {
            Some(n) => {
                let (head, rest) = self.buf.split_at(n);
                self.buf = rest;
                Ok(head)
            }
            None => bad(format!(
                "a length of {n} bytes runs past the end of its message ({} left)",
                self.buf.len()
            )),
        }
    }

    fn delimited(&mut self) -> Result<&'a [u8], Malformed> {
        let n = self.varint()?;
        self.take(n)
    }

    /// A tag: the field number and the wire type.
    fn tag(&mut self) -> Result<(u64, u8), Malformed> {
        let tag = self.varint()?;
        let number = tag >> 3;
        if number == 0 || number > (1 << 29) - 1 {
            return bad(format!("field number {number} is out of range"));
        }
        Ok((number, (tag & 7) as u8))
    }

    /// Skips the value of an unknown field of wire type `wire`; a group is skipped to its
    /// end, counting its nesting against `depth`.
    fn skip(&mut self, number: u64, wire: u8, depth: usize) -> Result<(), Malformed> {
        match wire {
            VARINT => self.varint().map(drop),
            I64 => self.take(8).map(drop),
            LEN => self.delimited().map(drop),
            I32 => self.take(4).map(drop),
            START_GROUP => {
                // Iterative: the open groups are counted, not recursed into.
                let mut open = vec![number];
                while let Some(&inner) = open.last() {
                    if depth + open.len() > MAX_DEPTH {
                        return bad(format!("groups nest deeper than {MAX_DEPTH}"));
                    }
                    let (n, w) = self.tag()?;
                    match w {
                        START_GROUP => open.push(n),
                        END_GROUP if n == inner => {
                            open.pop();
                        }
                        END_GROUP => return bad(format!("group {inner} ends as group {n}")),
                        w => self.skip(n, w, depth)?,
                    }
                }
                Ok(())
            }
            END_GROUP => bad(format!("field {number} ends a group that never started")),
            w => bad(format!(
                "field {number} has wire type {w}, which does not exist"
            )),
        }
    }
}

/// Decodes `bytes` as `message` into the JSON object the JSON codec would have produced
/// (JSON names as keys, int64 as decimal strings, maps as objects). Fields the schema does
/// not know are skipped; absent fields stay absent (their default).
pub fn decode(bytes: &[u8], message: &'static Message) -> Result<Map<String, Value>, Malformed> {
    let mut object = Map::new();
    decode_into(bytes, message, &mut object, 0)?;
    Ok(object)
}

fn decode_into(
    bytes: &[u8],
    message: &'static Message,
    object: &mut Map<String, Value>,
    depth: usize,
) -> Result<(), Malformed> {
    if depth >= MAX_DEPTH {
        return bad(format!("messages nest deeper than {MAX_DEPTH}"));
    }
    let mut r = Reader { buf: bytes };
    while !r.buf.is_empty() {
        let (number, wire) = r.tag()?;
        let Some(field) = message.numbered(number) else {
            r.skip(number, wire, depth)?;
            continue;
        };
        let want = field.kind.wire_type();
        if wire != want {
            return bad(format!(
                "{}.{} (field {number}) came with wire type {wire}, not {want}",
                message.name, field.name
            ));
        }
        let value = match field.kind {
            Kind::Bool => Value::Bool(r.varint()? != 0),
            // int32 travels sign-extended to 64 bits; the low 32 are the value.
            Kind::Int32 => Value::from(r.varint()? as i32),
            Kind::Int64 => Value::String((r.varint()? as i64).to_string()),
            Kind::String => Value::String(text(r.delimited()?, message, field)?),
            Kind::Message(inner) => {
                let bytes = r.delimited()?;
                // A singular message given twice is merged, as protobuf says.
                if field.label != Label::Repeated
                    && let Some(Value::Object(existing)) = object.get_mut(field.json)
                {
                    decode_into(bytes, inner, existing, depth + 1)?;
                    continue;
                }
                let mut nested = Map::new();
                decode_into(bytes, inner, &mut nested, depth + 1)?;
                Value::Object(nested)
            }
            Kind::Map(entry) => {
                let mut pair = Map::new();
                decode_into(r.delimited()?, entry, &mut pair, depth + 1)?;
                let key = match pair.remove("key") {
                    Some(Value::String(k)) => k,
                    _ => String::new(),
                };
                // A map's value is never null: an absent message value is the empty one.
                let value = pair
                    .remove("value")
                    .unwrap_or_else(|| match entry.fields[1].kind {
                        Kind::Message(_) => Value::Object(Map::new()),
                        _ => default_of(&entry.fields[1]),
                    });
                let map = object
                    .entry(field.json)
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(map) = map {
                    map.insert(key, value);
                }
                continue;
            }
        };
        if field.label == Label::Repeated {
            let list = object
                .entry(field.json)
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(list) = list {
                list.push(value);
            }
        } else {
            object.insert(field.json.to_string(), value);
        }
    }
    Ok(())
}

fn text(bytes: &[u8], message: &Message, field: &Field) -> Result<String, Malformed> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s.to_string()),
        Err(_) => bad(format!(
            "{}.{} is not valid UTF-8, which a protobuf string must be",
            message.name, field.name
        )),
    }
}

/// The value of an absent singular field, as the JSON codec writes it.
pub fn default_of(field: &Field) -> Value {
    match field.kind {
        Kind::String => Value::String(String::new()),
        Kind::Bool => Value::Bool(false),
        Kind::Int32 => Value::from(0),
        Kind::Int64 => Value::String("0".into()),
        Kind::Message(_) => Value::Null,
        Kind::Map(_) => Value::Object(Map::new()),
    }
}

// ---------------------------------------------------------------------------------------
// Encoding: a serde `Serializer` that writes each field by the number the schema gives its
// JSON name. Default values of singular fields are left out (proto3's canonical form; a
// reader fills them in), elements of a list never are, and a sub-message that is present is
// written even when empty.

/// Why an answer could not be encoded: a field the schema does not have, or a value of the
/// wrong kind. Never the client's doing; the schema test encodes every answer.
#[derive(Debug)]
pub struct Unencodable(pub String);

impl std::fmt::Display for Unencodable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unencodable {}

impl ser::Error for Unencodable {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Unencodable(msg.to_string())
    }
}

/// `value`, a struct or map with the JSON names of `message`'s fields (or an enum whose
/// variant names one member of its oneof), as protobuf bytes.
pub fn encode<T: Serialize + ?Sized>(
    value: &T,
    message: &'static Message,
) -> Result<Vec<u8>, Unencodable> {
    let mut out = Vec::with_capacity(256);
    value.serialize(MessageSer {
        out: &mut out,
        message,
    })?;
    Ok(out)
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_tag(out: &mut Vec<u8>, number: u32, wire: u8) {
    put_varint(out, (u64::from(number) << 3) | u64::from(wire));
}

/// Starts a length-delimited value whose length is not known yet: one byte is kept for it,
/// and [`end_len`] writes the length there, moving the value when it needs more bytes.
fn begin_len(out: &mut Vec<u8>) -> usize {
    out.push(0);
    out.len()
}

fn end_len(out: &mut Vec<u8>, start: usize) {
    let len = out.len() - start;
    if len < 0x80 {
        out[start - 1] = len as u8;
        return;
    }
    let mut prefix = Vec::with_capacity(5);
    put_varint(&mut prefix, len as u64);
    out[start - 1] = prefix[0];
    out.splice(start..start, prefix[1..].iter().copied());
}

fn unknown(message: &Message, key: &str) -> Unencodable {
    Unencodable(format!("{} has no field {key:?}", message.name))
}

/// A message: its fields come by JSON name.
struct MessageSer<'a> {
    out: &'a mut Vec<u8>,
    message: &'static Message,
}

/// One field's value. `always` is set for the elements of a list and the values of a map,
/// which are written even when they hold their default.
struct FieldSer<'a> {
    out: &'a mut Vec<u8>,
    field: &'static Field,
    always: bool,
}

/// The fields of a message being written (a struct, or a map from JSON names), and, for a
/// nested one, where its length goes.
struct Fields<'a> {
    out: &'a mut Vec<u8>,
    message: &'static Message,
    start: Option<usize>,
    key: Option<String>,
}

impl Fields<'_> {
    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Unencodable> {
        let field = self
            .message
            .field(key)
            .ok_or_else(|| unknown(self.message, key))?;
        value.serialize(FieldSer {
            out: self.out,
            field,
            always: false,
        })
    }

    fn finish(self) -> Result<(), Unencodable> {
        if let Some(start) = self.start {
            end_len(self.out, start);
        }
        Ok(())
    }
}

/// The entries of a `map<string, V>` field.
struct Entries<'a> {
    out: &'a mut Vec<u8>,
    field: &'static Field,
    entry: &'static Message,
    key: Option<String>,
}

/// The elements of a repeated field.
struct Elements<'a> {
    out: &'a mut Vec<u8>,
    field: &'static Field,
}

impl<'a> FieldSer<'a> {
    fn mismatch(&self, what: &str) -> Unencodable {
        Unencodable(format!(
            "field {} ({:?}) cannot hold {what}",
            self.field.json, self.field.kind
        ))
    }

    fn int(self, v: i64) -> Result<(), Unencodable> {
        match self.field.kind {
            Kind::Int32 | Kind::Int64 => {
                if v != 0 || self.always {
                    put_tag(self.out, self.field.number, VARINT);
                    // Negative values go sign-extended to ten bytes, int32 as int64.
                    put_varint(self.out, v as u64);
                }
                Ok(())
            }
            _ => Err(self.mismatch("an integer")),
        }
    }

    /// Starts a nested message (the field's own kind, or a map's entry).
    fn nested(self, message: &'static Message) -> Fields<'a> {
        put_tag(self.out, self.field.number, LEN);
        let start = begin_len(self.out);
        Fields {
            out: self.out,
            message,
            start: Some(start),
            key: None,
        }
    }
}

impl<'a> ser::Serializer for FieldSer<'a> {
    type Ok = ();
    type Error = Unencodable;
    type SerializeSeq = Elements<'a>;
    type SerializeTuple = Impossible<(), Unencodable>;
    type SerializeTupleStruct = Impossible<(), Unencodable>;
    type SerializeTupleVariant = Impossible<(), Unencodable>;
    type SerializeMap = MapOrMessage<'a>;
    type SerializeStruct = Fields<'a>;
    type SerializeStructVariant = Impossible<(), Unencodable>;

    fn serialize_bool(self, v: bool) -> Result<(), Unencodable> {
        if !matches!(self.field.kind, Kind::Bool) {
            return Err(self.mismatch("a boolean"));
        }
        if v || self.always {
            put_tag(self.out, self.field.number, VARINT);
            self.out.push(u8::from(v));
        }
        Ok(())
    }

    fn serialize_i8(self, v: i8) -> Result<(), Unencodable> {
        self.int(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<(), Unencodable> {
        self.int(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<(), Unencodable> {
        self.int(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result<(), Unencodable> {
        self.int(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Unencodable> {
        self.int(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result<(), Unencodable> {
        self.int(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result<(), Unencodable> {
        self.int(v.into())
    }
    fn serialize_u64(self, v: u64) -> Result<(), Unencodable> {
        match i64::try_from(v) {
            Ok(v) => self.int(v),
            Err(_) => Err(self.mismatch("an integer above int64")),
        }
    }
    fn serialize_f32(self, _: f32) -> Result<(), Unencodable> {
        Err(self.mismatch("a float"))
    }
    fn serialize_f64(self, _: f64) -> Result<(), Unencodable> {
        Err(self.mismatch("a float"))
    }
    fn serialize_char(self, v: char) -> Result<(), Unencodable> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }

    fn serialize_str(self, v: &str) -> Result<(), Unencodable> {
        match self.field.kind {
            Kind::String => {
                if !v.is_empty() || self.always {
                    put_tag(self.out, self.field.number, LEN);
                    put_varint(self.out, v.len() as u64);
                    self.out.extend_from_slice(v.as_bytes());
                }
                Ok(())
            }
            // ProtoJSON writes int64 as a decimal string; the answers do too.
            Kind::Int64 => match v.parse::<i64>() {
                Ok(n) => self.int(n),
                Err(_) => Err(self.mismatch("a string that is not an integer")),
            },
            _ => Err(self.mismatch("a string")),
        }
    }

    fn serialize_bytes(self, _: &[u8]) -> Result<(), Unencodable> {
        Err(self.mismatch("bytes"))
    }
    fn serialize_none(self) -> Result<(), Unencodable> {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Unencodable> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Unencodable> {
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Unencodable> {
        match self.field.kind {
            Kind::Message(m) => self.nested(m).finish(),
            _ => Err(self.mismatch("an empty message")),
        }
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
    ) -> Result<(), Unencodable> {
        Err(self.mismatch("an enum"))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Unencodable> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Unencodable> {
        Err(self.mismatch("an enum"))
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Elements<'a>, Unencodable> {
        if self.field.label != Label::Repeated {
            return Err(self.mismatch("a list"));
        }
        Ok(Elements {
            out: self.out,
            field: self.field,
        })
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Unencodable> {
        Err(self.mismatch("a tuple"))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Unencodable> {
        Err(self.mismatch("a tuple"))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Unencodable> {
        Err(self.mismatch("a tuple"))
    }

    fn serialize_map(self, _: Option<usize>) -> Result<MapOrMessage<'a>, Unencodable> {
        match self.field.kind {
            Kind::Map(entry) => Ok(MapOrMessage::Map(Entries {
                out: self.out,
                field: self.field,
                entry,
                key: None,
            })),
            // A JSON object standing for a message (the tests encode `Value`s).
            Kind::Message(m) => Ok(MapOrMessage::Message(self.nested(m))),
            _ => Err(self.mismatch("a map")),
        }
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Fields<'a>, Unencodable> {
        match self.field.kind {
            Kind::Message(m) => Ok(self.nested(m)),
            _ => Err(self.mismatch("a message")),
        }
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Unencodable> {
        Err(self.mismatch("an enum"))
    }
}

impl ser::SerializeSeq for Elements<'_> {
    type Ok = ();
    type Error = Unencodable;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unencodable> {
        value.serialize(FieldSer {
            out: self.out,
            field: self.field,
            always: true,
        })
    }

    fn end(self) -> Result<(), Unencodable> {
        Ok(())
    }
}

/// A serde map: the entries of a map field, or the fields of a message by JSON name.
enum MapOrMessage<'a> {
    Map(Entries<'a>),
    Message(Fields<'a>),
}

/// Methods of a `Serializer` for values that cannot stand where it is used: each refuses,
/// naming itself.
macro_rules! refuse {
    ($where:literal: $($method:ident ( $($arg:ty),* ) -> $ok:ty;)*) => {
        $(fn $method(self $(, _: $arg)*) -> Result<$ok, Unencodable> {
            Err(Unencodable(format!("{} cannot take {}", $where, stringify!($method))))
        })*
    };
}

/// Takes a map's key (or a JSON field name) as a string.
struct KeySer;

impl ser::Serializer for KeySer {
    type Ok = String;
    type Error = Unencodable;
    type SerializeSeq = Impossible<String, Unencodable>;
    type SerializeTuple = Impossible<String, Unencodable>;
    type SerializeTupleStruct = Impossible<String, Unencodable>;
    type SerializeTupleVariant = Impossible<String, Unencodable>;
    type SerializeMap = Impossible<String, Unencodable>;
    type SerializeStruct = Impossible<String, Unencodable>;
    type SerializeStructVariant = Impossible<String, Unencodable>;

    fn serialize_str(self, v: &str) -> Result<String, Unencodable> {
        Ok(v.to_string())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<String, Unencodable> {
        value.serialize(self)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<String, Unencodable> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<String, Unencodable> {
        Err(Unencodable("a map key cannot be an enum".into()))
    }

    refuse! { "a map key":
        serialize_bool(bool) -> String;
        serialize_i8(i8) -> String;
        serialize_i16(i16) -> String;
        serialize_i32(i32) -> String;
        serialize_i64(i64) -> String;
        serialize_u8(u8) -> String;
        serialize_u16(u16) -> String;
        serialize_u32(u32) -> String;
        serialize_u64(u64) -> String;
        serialize_f32(f32) -> String;
        serialize_f64(f64) -> String;
        serialize_char(char) -> String;
        serialize_bytes(&[u8]) -> String;
        serialize_none() -> String;
        serialize_unit() -> String;
        serialize_unit_struct(&'static str) -> String;
        serialize_unit_variant(&'static str, u32, &'static str) -> String;
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }
}

impl ser::SerializeMap for MapOrMessage<'_> {
    type Ok = ();
    type Error = Unencodable;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Unencodable> {
        let key = Some(key.serialize(KeySer)?);
        match self {
            MapOrMessage::Map(e) => e.key = key,
            MapOrMessage::Message(f) => f.key = key,
        }
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unencodable> {
        match self {
            MapOrMessage::Map(e) => {
                let key = e.key.take().unwrap_or_default();
                put_tag(e.out, e.field.number, LEN);
                let start = begin_len(e.out);
                let [k, v] = e.entry.fields else {
                    return Err(Unencodable(format!("{} is not a map entry", e.entry.name)));
                };
                ser::Serializer::serialize_str(
                    FieldSer {
                        out: e.out,
                        field: k,
                        always: false,
                    },
                    &key,
                )?;
                value.serialize(FieldSer {
                    out: e.out,
                    field: v,
                    always: false,
                })?;
                end_len(e.out, start);
                Ok(())
            }
            MapOrMessage::Message(f) => {
                let key = f.key.take().unwrap_or_default();
                f.field(&key, value)
            }
        }
    }

    fn end(self) -> Result<(), Unencodable> {
        match self {
            MapOrMessage::Map(_) => Ok(()),
            MapOrMessage::Message(f) => f.finish(),
        }
    }
}

impl ser::SerializeStruct for Fields<'_> {
    type Ok = ();
    type Error = Unencodable;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Unencodable> {
        self.field(key, value)
    }

    fn end(self) -> Result<(), Unencodable> {
        self.finish()
    }
}

impl<'a> ser::Serializer for MessageSer<'a> {
    type Ok = ();
    type Error = Unencodable;
    type SerializeSeq = Impossible<(), Unencodable>;
    type SerializeTuple = Impossible<(), Unencodable>;
    type SerializeTupleStruct = Impossible<(), Unencodable>;
    type SerializeTupleVariant = Impossible<(), Unencodable>;
    type SerializeMap = MapOrMessage<'a>;
    type SerializeStruct = Fields<'a>;
    type SerializeStructVariant = Impossible<(), Unencodable>;

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Fields<'a>, Unencodable> {
        Ok(Fields {
            out: self.out,
            message: self.message,
            start: None,
            key: None,
        })
    }

    fn serialize_map(self, _: Option<usize>) -> Result<MapOrMessage<'a>, Unencodable> {
        Ok(MapOrMessage::Message(Fields {
            out: self.out,
            message: self.message,
            start: None,
            key: None,
        }))
    }

    /// A oneof: the variant names the member that is set.
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Unencodable> {
        let field = self
            .message
            .field(variant)
            .ok_or_else(|| unknown(self.message, variant))?;
        value.serialize(FieldSer {
            out: self.out,
            field,
            always: false,
        })
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Unencodable> {
        value.serialize(self)
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Unencodable> {
        Ok(())
    }

    fn serialize_unit(self) -> Result<(), Unencodable> {
        Ok(())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Unencodable> {
        value.serialize(self)
    }

    refuse! { "a message":
        serialize_bool(bool) -> ();
        serialize_i8(i8) -> ();
        serialize_i16(i16) -> ();
        serialize_i32(i32) -> ();
        serialize_i64(i64) -> ();
        serialize_u8(u8) -> ();
        serialize_u16(u16) -> ();
        serialize_u32(u32) -> ();
        serialize_u64(u64) -> ();
        serialize_f32(f32) -> ();
        serialize_f64(f64) -> ();
        serialize_char(char) -> ();
        serialize_str(&str) -> ();
        serialize_bytes(&[u8]) -> ();
        serialize_none() -> ();
        serialize_unit_variant(&'static str, u32, &'static str) -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }
}

#[cfg(test)]
mod tests;
