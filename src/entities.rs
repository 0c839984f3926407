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
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::config::tree::{self, Node};
use crate::config::{EntitySource, Limits};

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

/// Reads one entity file and parses it within the default bounds; errors name the file.
pub fn load(path: &Path) -> Result<EntityFile, String> {
    load_within(path, Bounds::of(&Limits::default()))
}

/// Reads one entity file and parses it within `bounds`; errors name the file.
pub fn load_within(path: &Path, bounds: Bounds) -> Result<EntityFile, String> {
    let name = path.display().to_string();
    let cannot = |e: std::io::Error| format!("{name}: cannot read the file: {e}");
    let file = std::fs::File::open(path).map_err(cannot)?;
    // Read at most one byte past the bound: the file may grow while it is read.
    let mut bytes = Vec::new();
    file.take(bounds.bytes as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() > bounds.bytes {
        return Err(format!(
            "{name}: the file is larger than maxEntityFileBytes ({} bytes)",
            bounds.bytes
        ));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("{name}: cannot read the file: it is not UTF-8 text"))?;
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
pub fn parse(text: &str, file_name: &str) -> Result<EntityFile, String> {
    parse_within(text, file_name, usize::MAX)
}

/// `parse`, refusing a file of more than `max` instances before building any of them (a
/// stream of JSON objects is not even read past the bound).
pub fn parse_within(text: &str, file_name: &str, max: usize) -> Result<EntityFile, String> {
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
    .map_err(|e| format!("{file_name}: {e}"))?;
    if items.len() > max {
        return Err(too_many(file_name, max));
    }
    instances(items).map_err(|e| format!("{file_name}: {e}"))
}

fn too_many(file_name: &str, max: usize) -> String {
    format!("{file_name}: the file holds more than maxEntityInstances ({max} instances)")
}

fn named_yaml(file_name: &str) -> bool {
    let lower = file_name.to_ascii_lowercase();
    lower.ends_with(".yaml") || lower.ends_with(".yml")
}

/// The top-level values of a JSON text: the elements of one array, or each value of a
/// stream of values.
fn json_items(text: &str, max: usize) -> Result<Vec<Node>, String> {
    let mut values = Vec::new();
    for value in serde_json::Deserializer::from_str(text).into_iter::<Node>() {
        // serde_json's message ends with "at line L column C", which is what the person
        // fixing the file needs.
        values.push(value.map_err(|e| format!("invalid JSON: {e}"))?);
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
                return Err(
                    "invalid JSON: a JSON array must be the only value in the file; write one \
                     array of objects, or one object per line"
                        .to_string(),
                );
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

fn yaml_items(text: &str) -> Result<Vec<Node>, String> {
    match tree::parse_yaml(text).map_err(|p| p.message)? {
        Node::Null => Ok(Vec::new()),
        Node::Seq(items) => Ok(items),
        other => Err(format!(
            "an entity file is a list of mappings (`- name: …` per instance), or JSON objects; \
             this one is {}",
            other.describe()
        )),
    }
}

/// Applies the key and title rules to the parsed items, in file order.
fn instances(items: Vec<Node>) -> Result<EntityFile, String> {
    let mut out = EntityFile::default();
    let mut by_key: HashMap<String, usize> = HashMap::new();
    let mut by_title: HashMap<String, usize> = HashMap::new();
    for (index, fields) in items.into_iter().enumerate() {
        let Node::Map(entries) = &fields else {
            return Err(format!(
                "instance {index} is {}, not a mapping of fields",
                fields.describe()
            ));
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
            return Err(format!(
                "instances {earlier} and {index} have the same key {key:?}; keys must be unique \
                 in a file (give each instance a distinct `key` or `id`)"
            ));
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
fn instance_key(entries: &[(String, Node)], index: usize) -> Result<Option<String>, String> {
    for name in ["key", "id"] {
        if let Some(value) = lookup(entries, name) {
            return match plain_text(value) {
                Some(text) if !text.trim().is_empty() => Ok(Some(text)),
                _ => Err(format!(
                    "instance {index}: `{name}` is {}, but as the instance's unique key it \
                     must be non-empty text or a number",
                    value.describe()
                )),
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
}

/// Loads every `entities:` entry in config order. Several files may feed one type: their
/// instances are appended, and a file whose key repeats one of an earlier file of the same
/// type is refused (binding ids must stay unique).
pub fn load_all(sources: &[EntitySource]) -> Loaded {
    load_all_with(sources, &load)
}

/// `load_all` within `bounds` per file.
pub fn load_all_within(sources: &[EntitySource], bounds: Bounds) -> Loaded {
    load_all_with(sources, &|path| load_within(path, bounds))
}

fn load_all_with(
    sources: &[EntitySource],
    read: &dyn Fn(&Path) -> Result<EntityFile, String>,
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
            Err(message) => {
                loaded.errors.push(problem(message));
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
mod tests {
    use super::*;

    fn parsed(text: &str) -> EntityFile {
        parse(text, "test.yaml").unwrap_or_else(|e| panic!("{text:?} failed: {e}"))
    }

    /// (key, title) of every instance.
    fn keys_titles(file: &EntityFile) -> Vec<(String, String)> {
        file.instances
            .iter()
            .map(|i| (i.key.clone(), i.title.clone()))
            .collect()
    }

    #[test]
    fn a_file_over_its_instance_bound_is_refused_in_every_format() {
        let yaml = "- {id: a}\n- {id: b}\n- {id: c}\n";
        let array = r#"[{"id": "a"}, {"id": "b"}, {"id": "c"}]"#;
        let lines = "{\"id\": \"a\"}\n{\"id\": \"b\"}\n{\"id\": \"c\"}\n";
        for text in [yaml, array, lines] {
            assert_eq!(parse_within(text, "f", 3).unwrap().instances.len(), 3);
            let e = parse_within(text, "f", 2).unwrap_err();
            assert!(e.contains("more than maxEntityInstances (2"), "{e}");
        }
        // A stream of JSON objects is not read past the bound: a broken tail after it is
        // never reached.
        let e = parse_within("{\"id\": 1}\n{\"id\": 2}\n{broken", "f", 1).unwrap_err();
        assert!(e.contains("maxEntityInstances"), "{e}");
    }

    #[test]
    fn a_file_over_its_byte_bound_is_refused_unread() {
        let dir = std::env::temp_dir().join(format!("actiond-entities-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("big.yaml");
        let text: String = (0..200).map(|i| format!("- {{id: e{i}}}\n")).collect();
        std::fs::write(&path, text).unwrap();
        let size = std::fs::metadata(&path).unwrap().len() as usize;
        let fits = Bounds {
            bytes: size,
            instances: 1000,
        };
        assert_eq!(load_within(&path, fits).unwrap().instances.len(), 200);
        let e = load_within(
            &path,
            Bounds {
                bytes: size - 1,
                ..fits
            },
        )
        .unwrap_err();
        assert!(e.contains("larger than maxEntityFileBytes"), "{e}");
        let e = load_within(
            &path,
            Bounds {
                instances: 199,
                ..fits
            },
        )
        .unwrap_err();
        assert!(e.contains("maxEntityInstances"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_format_gives_the_same_instances() {
        let want = vec![
            ("0".to_string(), "a".to_string()),
            ("1".to_string(), "b".to_string()),
        ];
        let cases: &[(&str, &str)] = &[
            (
                "yaml list",
                "- name: a\n  port: 22\n- name: b\n  port: 80\n",
            ),
            (
                "yaml flow list",
                "[{name: a, port: 22}, {name: b, port: 80}]",
            ),
            (
                "json array",
                r#"[{"name":"a","port":22},{"name":"b","port":80}]"#,
            ),
            (
                "json lines, blank lines",
                "{\"name\":\"a\",\"port\":22}\n\n  \n{\"name\":\"b\",\"port\":80}\n",
            ),
            (
                "json stream, pretty",
                "{\n  \"name\": \"a\",\n  \"port\": 22\n}\n{\n  \"name\": \"b\",\n  \"port\": 80\n}",
            ),
            (
                "byte order mark",
                "\u{feff}[{\"name\":\"a\",\"port\":22},{\"name\":\"b\",\"port\":80}]",
            ),
            (
                "leading comment",
                "# servers\n- {name: a, port: 22}\n- {name: b, port: 80}\n",
            ),
        ];
        for (label, text) in cases {
            let file = parsed(text);
            assert_eq!(keys_titles(&file), want, "{label}");
            assert_eq!(
                file.instances[1].field("port").as_deref(),
                Some("80"),
                "{label}"
            );
            assert!(file.warnings.is_empty(), "{label}: {:?}", file.warnings);
        }
    }

    #[test]
    fn empty_files_have_no_instances() {
        for text in [
            "",
            "\n\n",
            "   ",
            "# nothing yet\n",
            "[]",
            "~\n",
            "\u{feff}",
        ] {
            assert_eq!(parsed(text), EntityFile::default(), "{text:?}");
        }
    }

    #[test]
    fn keys_and_titles_follow_the_rules() {
        // (label, text, the (key, title) of each instance)
        type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);
        let cases: &[Case] = &[
            (
                "position keys, name titles",
                "- {name: a}\n- {name: b}",
                &[("0", "a"), ("1", "b")],
            ),
            (
                "id is key and title",
                "- {id: web}\n- {id: db}",
                &[("web", "web"), ("db", "db")],
            ),
            (
                "key beats id; title beats name beats id",
                "- {key: k1, id: i1, name: n1, title: t1}\n- {id: i2, name: n2}",
                &[("k1", "t1"), ("i2", "n2")],
            ),
            (
                "numeric id as text",
                "- {id: 7, name: seven}\n- {id: 1234567890123}",
                &[("7", "seven"), ("1234567890123", "1234567890123")],
            ),
            (
                "no title fields: the key",
                "- {hostname: attic}\n- {key: b}",
                &[("0", "0"), ("b", "b")],
            ),
            (
                "empty or structured titles are skipped",
                "- {title: '', name: [x], id: real}",
                &[("real", "real")],
            ),
            (
                "case-insensitive names, as OliveTin (docker's ID)",
                "- {ID: 4baf, Names: media}\n- {Title: T, Key: K}",
                &[("4baf", "4baf"), ("K", "T")],
            ),
            (
                "exact spelling wins over another case",
                "- {ID: upper, id: lower}",
                &[("lower", "lower")],
            ),
            (
                "explicit and position keys mix",
                "- {id: x}\n- {name: second}",
                &[("x", "x"), ("1", "second")],
            ),
            ("boolean title", "- {name: true}", &[("0", "true")]),
        ];
        for (label, text, want) in cases {
            let got = keys_titles(&parsed(text));
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(k, t)| (k.to_string(), t.to_string()))
                .collect();
            assert_eq!(got, want, "{label}");
        }
    }

    #[test]
    fn duplicate_titles_warn_and_still_load() {
        let file =
            parsed("- {id: a, title: Same}\n- {id: b, title: Same}\n- {id: c, title: Other}");
        assert_eq!(file.instances.len(), 3);
        assert_eq!(file.warnings.len(), 1, "{:?}", file.warnings);
        assert!(file.warnings[0].contains("\"Same\""), "{:?}", file.warnings);
        assert!(file.warnings[0].contains("0 and 1"), "{:?}", file.warnings);
    }

    #[test]
    fn bad_files_fail_with_a_useful_message() {
        // (label, file name, text, every fragment the message must contain)
        let cases: &[(&str, &str, &str, &[&str])] = &[
            (
                "duplicate keys",
                "s.yaml",
                "- {id: web}\n- {id: db}\n- {id: web}",
                &["s.yaml: ", "instances 0 and 2", "\"web\""],
            ),
            (
                "explicit key equals a position",
                "s.yaml",
                "- {id: '1'}\n- {name: b}",
                &["instances 0 and 1", "\"1\""],
            ),
            (
                "duplicate keys in JSON lines",
                "c.json",
                "{\"ID\":\"x\"}\n{\"ID\":\"x\"}\n",
                &["c.json: ", "\"x\""],
            ),
            (
                "broken JSON line",
                "c.json",
                "{\"a\":1}\n{\"a\":\n",
                &["c.json: invalid JSON", "line 3"],
            ),
            (
                "broken YAML",
                "s.yaml",
                "- name: a\n  bad: [1, 2\n- name: b\n",
                &["s.yaml: invalid YAML", "line"],
            ),
            (
                "a mapping, not a list",
                "s.yaml",
                "name: a\nip: 1.2.3.4\n",
                &["list of mappings", "a mapping"],
            ),
            (
                "a scalar item",
                "s.yaml",
                "- {name: a}\n- just text\n",
                &["instance 1", "\"just text\"", "not a mapping"],
            ),
            (
                "a JSON scalar in the stream",
                "c.json",
                "{\"a\":1}\n42\n",
                &["instance 1", "the number 42"],
            ),
            (
                "two JSON arrays",
                "c.json",
                "[{\"a\":1}]\n[{\"a\":2}]\n",
                &["only value in the file"],
            ),
            (
                "unusable key",
                "s.yaml",
                "- {key: [a, b]}\n",
                &["instance 0", "`key` is a list"],
            ),
            (
                "empty id",
                "s.yaml",
                "- {id: ''}\n",
                &["`id` is the text \"\"", "non-empty"],
            ),
            (
                "neither JSON nor YAML, named .json: the JSON error",
                "c.json",
                "[{\"a\": 1,]",
                &["invalid JSON"],
            ),
            (
                "neither JSON nor YAML, named .yaml: the YAML error",
                "s.yaml",
                "[{a: 1}, {b: ]]",
                &["invalid YAML"],
            ),
        ];
        for (label, name, text, fragments) in cases {
            let err = parse(text, name).expect_err(label);
            for fragment in *fragments {
                assert!(
                    err.contains(fragment),
                    "{label}: {err:?} lacks {fragment:?}"
                );
            }
        }
    }

    #[test]
    fn numbers_keep_their_value() {
        let cases: &[(&str, &str)] = &[
            ("{\"v\":1234567890}", "1234567890"),
            ("{\"v\":9223372036854775807}", "9223372036854775807"),
            ("{\"v\":18446744073709551615}", "18446744073709551615"),
            ("{\"v\":-42}", "-42"),
            ("{\"v\":1.234567}", "1.234567"),
            ("{\"v\":1.0}", "1"),
            ("{\"v\":1e3}", "1000"),
            ("- {v: 1234567890}", "1234567890"),
            ("- {v: 0755}", "0755"),
            ("- {v: 1.5}", "1.5"),
            ("- {v: true}", "true"),
            ("- {v: false}", "false"),
            ("- {v: ~}", ""),
            ("- {v: yes}", "yes"),
        ];
        for (text, want) in cases {
            assert_eq!(
                parsed(text).instances[0].field("v").as_deref(),
                Some(*want),
                "{text}"
            );
        }
    }

    #[test]
    fn fields_render_at_dot_paths() {
        let yaml = "- name: web\n  \
                      ports: [22, 80]\n  \
                      Labels:\n    com.docker.compose.project: media\n    tier: {level: 2}\n  \
                      Names: media-indexer\n  \
                      notes: \"say \\\"hi\\\"\"\n  \
                      empty: {}\n";
        let json = r#"{"name":"web","ports":[22,80],"Labels":{"com.docker.compose.project":"media","tier":{"level":2}},"Names":"media-indexer","notes":"say \"hi\"","empty":{}}"#;
        let cases: &[(&str, Option<&str>)] = &[
            ("name", Some("web")),
            ("Names", Some("media-indexer")),
            ("ports", Some("[22,80]")),
            ("ports.1", Some("80")),
            ("ports.2", None),
            ("ports.x", None),
            ("Labels.com.docker.compose.project", Some("media")),
            ("Labels.tier.level", Some("2")),
            (
                "Labels",
                Some(r#"{"com.docker.compose.project":"media","tier":{"level":2}}"#),
            ),
            ("notes", Some("say \"hi\"")),
            ("empty", Some("{}")),
            ("name.x", None),
            ("missing", None),
            ("names", None),
            ("", None),
        ];
        for (label, text) in [("yaml", yaml), ("json", json)] {
            let file = parsed(text);
            let instance = &file.instances[0];
            for (path, want) in cases {
                assert_eq!(instance.field(path).as_deref(), *want, "{label}: {path}");
            }
        }
    }

    #[test]
    fn json_duplicate_keys_keep_the_last_value() {
        let file = parsed(r#"{"name":"a","x":{"y":1,"y":2},"name":"b"}"#);
        let instance = &file.instances[0];
        assert_eq!(instance.title, "b");
        assert_eq!(instance.field("x").as_deref(), Some(r#"{"y":2}"#));
        assert_eq!(instance.field("name").as_deref(), Some("b"));
    }

    #[test]
    fn binding_ids_are_safe_whatever_the_key() {
        let cases: &[(&str, &str, &str)] = &[
            ("ping", "0", "ping-0"),
            ("ping", "web-1_a", "ping-web-1_a"),
            ("ping", "a b/c;d", "ping-a_b_c_d"),
            ("ping", "../../etc", "ping-______etc"),
            ("ping", "x'\"$(rm)`", "ping-x____rm__"),
            ("ping", "é🙂", "ping-__"),
            ("ping", "a\nb\0c", "ping-a_b_c"),
            (
                "restart_docker",
                "4bafe6f9f956",
                "restart_docker-4bafe6f9f956",
            ),
        ];
        for (action, key, want) in cases {
            assert_eq!(binding_id(action, key), *want, "{key:?}");
        }
    }

    #[test]
    fn the_set_looks_up_and_dumps_vars() {
        let mut set = EntitySet::default();
        set.replace(
            "server",
            parsed("- {id: web, hostname: w.example, port: 22, up: true, tags: [a], gone: ~}")
                .instances,
        );
        set.replace("room", parsed("- hostname: attic").instances);
        assert_eq!(set.types().collect::<Vec<_>>(), ["room", "server"]);
        assert_eq!(set.instances("server").len(), 1);
        assert!(set.instances("nope").is_empty());
        assert_eq!(
            set.get("server", "web").and_then(|i| i.field("hostname")),
            Some("w.example".to_string())
        );
        assert!(set.get("server", "0").is_none());
        let vars = set.vars();
        let want: BTreeMap<String, String> = [
            ("entity.room.0.hostname", "attic"),
            ("entity.server.web.gone", ""),
            ("entity.server.web.hostname", "w.example"),
            ("entity.server.web.id", "web"),
            ("entity.server.web.port", "22"),
            ("entity.server.web.up", "true"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(vars, want);
    }

    #[test]
    fn load_all_reports_per_file_and_keeps_the_rest() {
        let files: HashMap<&str, &str> = [
            ("a.yaml", "- {id: x}\n- {id: y}\n"),
            ("b.yaml", "- {id: z}\n"),
            ("dup.yaml", "- {id: y}\n"),
            ("bad.yaml", "- [unclosed\n"),
            (
                "titles.yaml",
                "- {id: p, name: same}\n- {id: q, name: same}\n",
            ),
        ]
        .into_iter()
        .collect();
        let read = |path: &Path| {
            let name = path.display().to_string();
            match files.get(name.as_str()) {
                Some(text) => parse(text, &name),
                None => Err(format!("{name}: cannot read the file: not found")),
            }
        };
        let source = |file: &str, name: &str| EntitySource {
            file: PathBuf::from(file),
            name: name.to_string(),
        };
        let loaded = load_all_with(
            &[
                source("a.yaml", "server"),
                source("b.yaml", "server"),
                source("dup.yaml", "server"),
                source("bad.yaml", "room"),
                source("missing.yaml", "vm"),
                source("titles.yaml", "box"),
            ],
            &read,
        );
        let keys = |t: &str| -> Vec<&str> {
            loaded
                .set
                .instances(t)
                .iter()
                .map(|i| i.key.as_str())
                .collect()
        };
        assert_eq!(keys("server"), ["x", "y", "z"]);
        assert_eq!(keys("box"), ["p", "q"]);
        assert_eq!(
            loaded.set.types().collect::<Vec<_>>(),
            ["box", "room", "server", "vm"]
        );
        let errors: Vec<(&str, &str)> = loaded
            .errors
            .iter()
            .map(|p| (p.file.to_str().unwrap_or(""), p.type_name.as_str()))
            .collect();
        assert_eq!(
            errors,
            [
                ("dup.yaml", "server"),
                ("bad.yaml", "room"),
                ("missing.yaml", "vm")
            ]
        );
        assert!(
            loaded.errors[0].message.contains("\"y\"")
                && loaded.errors[0].message.contains("a.yaml"),
            "{:?}",
            loaded.errors[0]
        );
        assert!(
            loaded.errors[1].message.contains("invalid YAML"),
            "{:?}",
            loaded.errors[1]
        );
        assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
        assert_eq!(loaded.warnings[0].type_name, "box");
    }
}
