//! Entity files: the lists of things (servers, containers, rooms) that entity
//! actions, entity arguments and entity fieldsets repeat over.
//!
//! This module owns the reading of one entity file's text into instances (YAML list of
//! mappings, JSON array, or a stream of JSON objects such as `docker ps --format json`
//! writes), the rules for each instance's unique key and title, how a field is rendered as
//! text for templates and DumpVars, the binding id of an entity action, and the
//! set of all loaded types, and the bounds on one file (`Bounds`: its bytes and its
//! instances, checked before any instance is built, so a runaway script cannot make the board
//! hold and render a huge list). It does no I/O except the `load` helpers, which read one file
//! (never past its byte bound) and hand its text to `parse`, and `load_all`, which calls
//! `load` per configured file: so every rule is testable on plain strings, and the watcher,
//! which reloads the files when they change, decides itself what to keep when one turns bad
//! (its type keeps its instances).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::config::tree::{self, Node};
use crate::config::{EntitySource, Limits};
use crate::files;

/// One entity instance: one mapping of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    /// Unique within its type: the `key` or `id` field as text, else the 0-based position.
    pub key: String,
    /// The first non-empty plain value of `title`, `name`, `id`; else the key.
    pub title: String,
    /// The mapping itself, in file order (always a `Node::Map`).
    pub fields: Node,
}

/// What one file yielded: its instances in file order, and warnings that do not stop it
/// from loading (duplicate titles).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EntityFile {
    pub instances: Vec<Instance>,
    pub warnings: Vec<String>,
}

impl Instance {
    /// The value at a dot path (`hostname`, `Labels.app`, `ports.0`), if there is one.
    ///
    /// A mapping key may itself contain dots (Docker labels such as `com.docker.compose.project`),
    /// so when a segment is not a key on its own, the following segments are joined to it and
    /// tried as one key. Plain keys are tried first, so the simple case stays the common one.
    pub fn value(&self, path: &str) -> Option<&Node> {
        if path.is_empty() {
            return None;
        }
        let segments: Vec<&str> = path.split('.').collect();
        walk(&self.fields, &segments)
    }

    /// The value at a dot path rendered as text (see `render`); `None` when absent.
    pub fn field(&self, path: &str) -> Option<String> {
        self.value(path).map(render)
    }
}

fn walk<'a>(node: &'a Node, segments: &[&str]) -> Option<&'a Node> {
    let Some(first) = segments.first() else {
        return Some(node);
    };
    match node {
        Node::Map(entries) => (1..=segments.len()).find_map(|n| {
            let key = segments[..n].join(".");
            let child = last_entry(entries, |k| k == key)?;
            walk(child, &segments[n..])
        }),
        Node::Seq(items) => {
            let index: usize = first.parse().ok()?;
            walk(items.get(index)?, &segments[1..])
        }
        _ => None,
    }
}

/// A value as template text: strings as they are, numbers in decimal (integers exact),
/// booleans `true`/`false` (what Go's templates print for OliveTin's entities), null as
/// nothing, and lists and mappings as compact JSON in file order.
pub fn render(node: &Node) -> String {
    match node {
        Node::Null => String::new(),
        Node::Bool(b) => b.to_string(),
        Node::Int(i) => i.to_string(),
        Node::Float(f) => float_text(*f),
        Node::Str(s) => s.clone(),
        Node::Seq(_) | Node::Map(_) => {
            let mut out = String::new();
            write_json(node, &mut out);
            out
        }
    }
}

/// Rust prints the shortest text that reads back as the same float and never uses an
/// exponent, so `1.234567` stays `1.234567` and `2.0` is `2` (as Go prints it).
fn float_text(f: f64) -> String {
    f.to_string()
}

fn write_json(node: &Node, out: &mut String) {
    match node {
        Node::Null => out.push_str("null"),
        Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Node::Int(i) => out.push_str(&i.to_string()),
        // Neither YAML (non-finite values stay text) nor JSON can produce NaN or infinity;
        // `null` keeps the output valid JSON should one ever get here.
        Node::Float(f) if f.is_finite() => out.push_str(&float_text(*f)),
        Node::Float(_) => out.push_str("null"),
        Node::Str(s) => out.push_str(&json_string(s)),
        Node::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, out);
            }
            out.push(']');
        }
        Node::Map(entries) => {
            out.push('{');
            for (i, (key, value)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&json_string(key));
                out.push(':');
                write_json(value, out);
            }
            out.push('}');
        }
    }
}

fn json_string(s: &str) -> String {
    // Display of a JSON value cannot fail, unlike `to_string` on a serializer.
    serde_json::Value::String(s.to_string()).to_string()
}

/// The binding id of an entity action for one instance: `<action id>-<key>`, with every
/// character of the key outside `[A-Za-z0-9_-]` replaced by `_`, so a key taken
/// from a file can never put a slash, space or quote into a URL path or a DOM id.
pub fn binding_id(action_id: &str, key: &str) -> String {
    let safe: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{action_id}-{safe}")
}

/// How much one entity file may hold (`maxEntityFileBytes`, `maxEntityInstances`): a file
/// over either is refused whole, before its instances are built, so a runaway script cannot
/// make the board build (and every caller then render) a huge list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub bytes: usize,
    pub instances: usize,
}

impl Bounds {
    pub fn of(limits: &Limits) -> Bounds {
        Bounds {
            bytes: limits.max_entity_file_bytes,
            instances: limits.max_entity_instances,
        }
    }
}

/// Why an entity file did not load. Its `Display` names the file first.
#[derive(Debug)]
pub struct BadFile {
    /// The file as its name is shown.
    pub file: String,
    pub why: Why,
}

/// What is wrong with an entity file.
#[derive(Debug)]
pub enum Why {
    /// Over `maxEntityFileBytes`, this many.
    TooLarge(usize),
    Unreadable(files::ReadError),
    NotUtf8,
    /// Over `maxEntityInstances`, this many.
    TooMany(usize),
    /// Not JSON or YAML, or not a list of instances.
    Content(Content),
}

/// Why the text of an entity file is not a list of instances.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// serde_json's own words, which end with "at line L column C".
    Json(String),
    /// More than one top-level value, one of them an array.
    ArrayNotAlone,
    /// The YAML parser's own words.
    Yaml(String),
    /// YAML whose top is no list: what it is instead.
    NotAList(String),
    /// An instance that is no mapping: its index, and what it is instead.
    NotAMapping(usize, String),
    /// Two instances with one key: the earlier's index, the later's, the key.
    SameKey(usize, usize, String),
    /// An instance's `key` or `id` that cannot be a key: its index, the field, what it is.
    BadKey(usize, &'static str, String),
}

impl std::fmt::Display for Content {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Content::Json(why) => write!(f, "invalid JSON: {why}"),
            Content::ArrayNotAlone => f.write_str(
                "invalid JSON: a JSON array must be the only value in the file; write one \
                 array of objects, or one object per line",
            ),
            Content::Yaml(why) => f.write_str(why),
            Content::NotAList(what) => write!(
                f,
                "an entity file is a list of mappings (`- name: …` per instance), or JSON \
                 objects; this one is {what}"
            ),
            Content::NotAMapping(index, what) => {
                write!(f, "instance {index} is {what}, not a mapping of fields")
            }
            Content::SameKey(earlier, index, key) => write!(
                f,
                "instances {earlier} and {index} have the same key {key:?}; keys must be unique \
                 in a file (give each instance a distinct `key` or `id`)"
            ),
            Content::BadKey(index, name, what) => write!(
                f,
                "instance {index}: `{name}` is {what}, but as the instance's unique key it \
                 must be non-empty text or a number"
            ),
        }
    }
}

impl std::error::Error for Content {}

impl std::fmt::Display for BadFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let file = &self.file;
        match &self.why {
            Why::TooLarge(max) => write!(
                f,
                "{file}: the file is larger than maxEntityFileBytes ({max} bytes)"
            ),
            Why::Unreadable(e) => write!(f, "{file}: cannot read the file: {e}"),
            Why::NotUtf8 => write!(f, "{file}: cannot read the file: it is not UTF-8 text"),
            Why::TooMany(max) => write!(
                f,
                "{file}: the file holds more than maxEntityInstances ({max} instances)"
            ),
            Why::Content(why) => write!(f, "{file}: {why}"),
        }
    }
}

impl std::error::Error for BadFile {}

/// Reads one entity file and parses it within the default bounds; errors name the file.
#[cfg(test)]
pub fn load(path: &Path) -> Result<EntityFile, BadFile> {
    load_within(path, Bounds::of(&Limits::default()))
}

/// Reads one entity file and parses it within `bounds`; errors name the file.
#[cfg(test)]
pub fn load_within(path: &Path, bounds: Bounds) -> Result<EntityFile, BadFile> {
    // A FIFO or a device in place of the file is refused unopened; the read stops one byte
    // past the bound.
    parse_read(path, files::read(path, bounds.bytes as u64), bounds)
}

/// Parses what reading the entity file `path` gave, within `bounds`.
fn parse_read(
    path: &Path,
    got: Result<Vec<u8>, files::ReadError>,
    bounds: Bounds,
) -> Result<EntityFile, BadFile> {
    let name = path.display().to_string();
    let bytes = match got {
        Ok(bytes) => bytes,
        Err(files::ReadError::TooLarge { .. }) => {
            return Err(bad(&name, Why::TooLarge(bounds.bytes)));
        }
        Err(e) => return Err(bad(&name, Why::Unreadable(e))),
    };
    let text = String::from_utf8(bytes).map_err(|_| bad(&name, Why::NotUtf8))?;
    parse_within(&text, &name, bounds.instances)
}

/// Parses the text of one entity file. `file_name` labels every message and breaks the tie
/// when text starting with `[` is neither valid JSON nor valid YAML (the error of the format
/// its extension names is reported).
///
/// The format is decided by content, not by extension: OliveTin's default config invites any
/// extension for YAML ("or even .txt"), and JSON lines are as likely to be saved as `.jsonl`
/// or `.txt` as `.json`. Text starting with `{` is a stream of JSON objects (one per line, or simply one
/// after another); text starting with `[` is a JSON array, or failing that a YAML flow list;
/// anything else is YAML and must be a list of mappings. An empty file (or only comments) has
/// no instances.
#[cfg(test)]
pub fn parse(text: &str, file_name: &str) -> Result<EntityFile, BadFile> {
    parse_within(text, file_name, usize::MAX)
}

/// `parse`, refusing a file of more than `max` instances before building any of them (a
/// stream of JSON objects is not even read past the bound).
pub fn parse_within(text: &str, file_name: &str, max: usize) -> Result<EntityFile, BadFile> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let items = match body.trim_start().as_bytes().first() {
        None => Ok(Vec::new()),
        Some(b'{') => json_items(body, max),
        Some(b'[') => json_items(body, max).or_else(|json_error| {
            yaml_items(body).map_err(|yaml_error| {
                if named_yaml(file_name) {
                    yaml_error
                } else {
                    json_error
                }
            })
        }),
        Some(_) => yaml_items(body),
    }
    .map_err(|e| bad(file_name, Why::Content(e)))?;
    if items.len() > max {
        return Err(bad(file_name, Why::TooMany(max)));
    }
    instances(items).map_err(|e| bad(file_name, Why::Content(e)))
}

fn bad(file: &str, why: Why) -> BadFile {
    BadFile {
        file: file.to_string(),
        why,
    }
}

fn named_yaml(file_name: &str) -> bool {
    let lower = file_name.to_ascii_lowercase();
    lower.ends_with(".yaml") || lower.ends_with(".yml")
}

/// The top-level values of a JSON text: the elements of one array, or each value of a
/// stream of values.
fn json_items(text: &str, max: usize) -> Result<Vec<Node>, Content> {
    let mut values = Vec::new();
    for value in serde_json::Deserializer::from_str(text).into_iter::<Node>() {
        // serde_json's message ends with "at line L column C", which is what the person
        // fixing the file needs.
        values.push(value.map_err(|e| Content::Json(e.to_string()))?);
        if values.len() > max {
            // One more than allowed is enough to refuse; the count is checked by the caller.
            break;
        }
    }
    let mut items = match <[Node; 1]>::try_from(values) {
        Ok([Node::Seq(items)]) => items,
        Ok([single]) => vec![single],
        Err(values) => {
            if values.iter().any(|v| matches!(v, Node::Seq(_))) {
                return Err(Content::ArrayNotAlone);
            }
            values
        }
    };
    items.iter_mut().for_each(last_key_wins);
    Ok(items)
}

/// JSON allows a key twice in one object; every common decoder (Go's included) keeps the last
/// value, so the tree is made to say the same once, and lookups need not care. YAML refuses
/// duplicate keys while parsing, so only JSON needs this.
fn last_key_wins(node: &mut Node) {
    match node {
        Node::Map(entries) => {
            let mut seen: HashMap<String, usize> = HashMap::new();
            let mut kept: Vec<(String, Node)> = Vec::with_capacity(entries.len());
            for (key, mut value) in std::mem::take(entries) {
                last_key_wins(&mut value);
                match seen.get(&key) {
                    Some(&at) => kept[at].1 = value,
                    None => {
                        seen.insert(key.clone(), kept.len());
                        kept.push((key, value));
                    }
                }
            }
            *entries = kept;
        }
        Node::Seq(items) => items.iter_mut().for_each(last_key_wins),
        _ => {}
    }
}

fn yaml_items(text: &str) -> Result<Vec<Node>, Content> {
    match tree::parse_yaml(text).map_err(|p| Content::Yaml(p.message))? {
        Node::Null => Ok(Vec::new()),
        Node::Seq(items) => Ok(items),
        other => Err(Content::NotAList(other.describe())),
    }
}

/// Applies the key and title rules to the parsed items, in file order.
fn instances(items: Vec<Node>) -> Result<EntityFile, Content> {
    let mut out = EntityFile::default();
    let mut by_key: HashMap<String, usize> = HashMap::new();
    let mut by_title: HashMap<String, usize> = HashMap::new();
    for (index, fields) in items.into_iter().enumerate() {
        let Node::Map(entries) = &fields else {
            return Err(Content::NotAMapping(index, fields.describe()));
        };
        let key = match instance_key(entries, index)? {
            Some(key) => key,
            None => index.to_string(),
        };
        // OliveTin matches these names case-insensitively (`ID` from `docker ps`), so a file
        // written for it gets the same titles here.
        let title = ["title", "name", "id"]
            .iter()
            .filter_map(|name| lookup(entries, name))
            .filter_map(plain_text)
            .find(|text| !text.trim().is_empty())
            .unwrap_or_else(|| key.clone());
        if let Some(&earlier) = by_key.get(&key) {
            return Err(Content::SameKey(earlier, index, key));
        }
        if let Some(&earlier) = by_title.get(&title) {
            // A repeated title is legal but makes two buttons look alike; worth saying.
            out.warnings.push(format!(
                "instances {earlier} and {index} have the same title {title:?}"
            ));
        } else {
            by_title.insert(title.clone(), index);
        }
        by_key.insert(key.clone(), index);
        out.instances.push(Instance { key, title, fields });
    }
    Ok(out)
}

/// The explicit key of an instance: `key`, else `id`. A present but unusable value (a list,
/// null, empty text) is an error rather than a silent fall-back to the position, because the
/// key ends up in binding ids that clients store.
fn instance_key(entries: &[(String, Node)], index: usize) -> Result<Option<String>, Content> {
    for name in ["key", "id"] {
        if let Some(value) = lookup(entries, name) {
            return match plain_text(value) {
                Some(text) if !text.trim().is_empty() => Ok(Some(text)),
                _ => Err(Content::BadKey(index, name, value.describe())),
            };
        }
    }
    Ok(None)
}

/// The field `name`: exact spelling first, then any ASCII case (`ID`, `Name`).
fn lookup<'a>(entries: &'a [(String, Node)], name: &str) -> Option<&'a Node> {
    last_entry(entries, |k| k == name)
        .or_else(|| last_entry(entries, |k| k.eq_ignore_ascii_case(name)))
}

fn last_entry(entries: &[(String, Node)], matches: impl Fn(&str) -> bool) -> Option<&Node> {
    entries
        .iter()
        .rev()
        .find(|(k, _)| matches(k))
        .map(|(_, v)| v)
}

/// Text of a string, number or boolean; `None` for null, lists and mappings.
fn plain_text(node: &Node) -> Option<String> {
    match node {
        Node::Null | Node::Seq(_) | Node::Map(_) => None,
        scalar => Some(render(scalar)),
    }
}

/// All loaded entity types: type name → instances in file order. Types iterate sorted by
/// name, so listings and DumpVars are stable.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EntitySet {
    types: BTreeMap<String, Vec<Instance>>,
}

impl EntitySet {
    /// The type names, sorted.
    pub fn types(&self) -> impl Iterator<Item = &str> {
        self.types.keys().map(String::as_str)
    }

    /// The instances of a type in file order; empty for a type nobody loaded.
    pub fn instances(&self, type_name: &str) -> &[Instance] {
        self.types.get(type_name).map_or(&[], Vec::as_slice)
    }

    pub fn get(&self, type_name: &str, key: &str) -> Option<&Instance> {
        self.instances(type_name).iter().find(|i| i.key == key)
    }

    /// Replaces the instances of one type (a reload of its file).
    pub fn replace(&mut self, type_name: &str, instances: Vec<Instance>) {
        self.types.insert(type_name.to_string(), instances);
    }

    /// `entity.<type>.<key>.<field>` → text, for every top-level field whose value is not a
    /// list or mapping (DumpVars shows what a template would print).
    pub fn vars(&self) -> BTreeMap<String, String> {
        let mut vars = BTreeMap::new();
        for (type_name, instances) in &self.types {
            for instance in instances {
                let Node::Map(entries) = &instance.fields else {
                    continue;
                };
                for (field, value) in entries {
                    if !matches!(value, Node::Seq(_) | Node::Map(_)) {
                        vars.insert(
                            format!("entity.{type_name}.{}.{field}", instance.key),
                            render(value),
                        );
                    }
                }
            }
        }
        vars
    }
}

/// A problem with one configured entity file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileProblem {
    pub file: PathBuf,
    pub type_name: String,
    pub message: String,
}

/// The outcome of loading every configured entity file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Loaded {
    /// Every configured type is present, possibly empty (its file failed, or was empty).
    pub set: EntitySet,
    /// Files that failed; each kept no instances.
    pub errors: Vec<FileProblem>,
    /// Files that loaded, with something worth logging.
    pub warnings: Vec<FileProblem>,
    /// The digest (`files::Digest`) of the files as this load read them, in config order:
    /// what the watcher compares them with.
    pub read: u64,
}

/// Loads every `entities:` entry in config order. Several files may feed one type: their
/// instances are appended, and a file whose key repeats one of an earlier file of the same
/// type is refused (binding ids must stay unique).
#[cfg(test)]
pub fn load_all(sources: &[EntitySource]) -> Loaded {
    load_all_with(sources, &load)
}

/// `load_all` within `bounds` per file.
pub fn load_all_within(sources: &[EntitySource], bounds: Bounds) -> Loaded {
    let digest = std::cell::RefCell::new(files::Digest::default());
    let mut loaded = load_all_with(sources, &|path| {
        let got = files::read(path, bounds.bytes as u64);
        digest.borrow_mut().add(path, got.as_deref());
        parse_read(path, got, bounds)
    });
    loaded.read = digest.borrow().value();
    loaded
}

fn load_all_with(
    sources: &[EntitySource],
    read: &dyn Fn(&Path) -> Result<EntityFile, BadFile>,
) -> Loaded {
    let mut loaded = Loaded::default();
    // Which file each key of a type came from, to name it in a collision.
    let mut owners: HashMap<(String, String), PathBuf> = HashMap::new();
    for source in sources {
        let problem = |message: String| FileProblem {
            file: source.file.clone(),
            type_name: source.name.clone(),
            message,
        };
        loaded.set.types.entry(source.name.clone()).or_default();
        let file = match read(&source.file) {
            Ok(file) => file,
            Err(e) => {
                loaded.errors.push(problem(e.to_string()));
                continue;
            }
        };
        let clash = file.instances.iter().find_map(|i| {
            owners
                .get(&(source.name.clone(), i.key.clone()))
                .map(|other| (i.key.clone(), other.clone()))
        });
        if let Some((key, other)) = clash {
            loaded.errors.push(problem(format!(
                "{}: the key {key:?} is already used by an instance of type {:?} from {}; \
                 give the instances of one type distinct `key` or `id` fields across its files",
                source.file.display(),
                source.name,
                other.display()
            )));
            continue;
        }
        for instance in &file.instances {
            owners.insert(
                (source.name.clone(), instance.key.clone()),
                source.file.clone(),
            );
        }
        loaded.warnings.extend(
            file.warnings
                .into_iter()
                .map(|w| problem(format!("{}: {w}", source.file.display()))),
        );
        loaded
            .set
            .types
            .entry(source.name.clone())
            .or_default()
            .extend(file.instances);
    }
    loaded
}

#[cfg(test)]
mod tests;
