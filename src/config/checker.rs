//! The reading of one YAML mapping against its key table, and of each value as the type a key
//! wants: the tools every part of the validator uses. A reader reports a value of the wrong
//! type as an error at the value's path and returns `None`, so the caller goes on with its
//! default and one pass collects every problem. The problems gathered while one part is read
//! (an action, say) can be kept apart from the rest with [`Checker::scoped`].
//!
//! It knows no key's meaning: that is the part of the config that asks.

use std::path::{Path, PathBuf};

use super::Problem;
use super::schema::{Rule, Schema};
use super::tree::{Node, index_path, key_path};

/// Looks up an environment variable (for `${{ VAR }}` and `$STATE_DIRECTORY`).
pub type EnvLookup<'a> = dyn Fn(&str) -> Option<String> + 'a;

/// What a reading found: every error, in the order found, and the warnings. An error
/// refuses the config unless it is confined to one action (which it then disables); those
/// are listed with the rest and counted in `confined`.
#[derive(Debug, Default)]
pub(super) struct Problems {
    pub errors: Vec<Problem>,
    pub warnings: Vec<Problem>,
    /// How many of `errors` are confined to one action.
    pub confined: usize,
}

impl Problems {
    /// Adds errors that disable one action rather than refuse the config.
    pub fn confine(&mut self, errors: Vec<Problem>) {
        self.confined += errors.len();
        self.errors.extend(errors);
    }

    /// Whether an error refuses the whole config.
    pub fn fatal(&self) -> bool {
        self.errors.len() > self.confined
    }
}

/// The state of one validation pass: the problems so far, and what values are read against.
pub(super) struct Checker<'a> {
    pub problems: Problems,
    /// Problems found before the part they belong to is read (`${{ VAR }}` interpolation runs
    /// over the whole tree first): an action claims those inside it; the rest refuse the
    /// config once every action has had its turn.
    pub pending: Vec<Problem>,
    /// The config's directory, against which relative paths are resolved.
    pub base_dir: &'a Path,
    pub env: &'a EnvLookup<'a>,
}

/// The entries of one mapping that actiond reads, by canonical key name.
pub(super) struct Fields<'n> {
    pub found: Vec<(&'static str, String, &'n Node)>,
}

/// A present, non-null value and its path.
pub(super) type Field<'a, 'n> = Option<(&'n Node, &'a str)>;

/// The path of a field, or `fallback` (the enclosing mapping's) when it is absent.
pub(super) fn path_or<'a>(field: Field<'a, '_>, fallback: &'a str) -> &'a str {
    field.map_or(fallback, |(_, p)| p)
}

impl<'n> Fields<'n> {
    pub fn new() -> Fields<'n> {
        Fields { found: Vec::new() }
    }

    /// The value under `name` (any accepted spelling); `None` when absent or null, because a
    /// key written without a value (`icon:`) means "use the default", as in OliveTin.
    pub fn get(&self, name: &str) -> Field<'_, 'n> {
        self.found
            .iter()
            .find(|(canonical, _, node)| *canonical == name && !matches!(node, Node::Null))
            .map(|(_, path, node)| (*node, path.as_str()))
    }

    /// Whether the key was written at all, even with a null value.
    pub fn written(&self, name: &str) -> bool {
        self.found
            .iter()
            .any(|(canonical, _, _)| *canonical == name)
    }
}

impl<'a> Checker<'a> {
    pub fn new(base_dir: &'a Path, env: &'a EnvLookup<'a>) -> Checker<'a> {
        Checker {
            problems: Problems::default(),
            pending: Vec::new(),
            base_dir,
            env,
        }
    }

    pub fn error(&mut self, path: &str, message: impl Into<String>) {
        self.problems.errors.push(Problem {
            path: path.to_string(),
            message: message.into(),
        });
    }

    pub fn warn(&mut self, path: &str, message: impl Into<String>) {
        self.problems.warnings.push(Problem {
            path: path.to_string(),
            message: message.into(),
        });
    }

    /// Runs `read` with an empty problem list and returns what it made together with the
    /// problems found inside, which the caller then adds (or treats) as it sees fit.
    pub fn scoped<T>(&mut self, read: impl FnOnce(&mut Checker<'a>) -> T) -> (T, Problems) {
        let outer = std::mem::take(&mut self.problems);
        let made = read(self);
        let inner = std::mem::replace(&mut self.problems, outer);
        (made, inner)
    }

    /// Moves the pending problems at `path` or below it into the problems being read.
    pub fn claim_pending(&mut self, path: &str) {
        let (mine, rest): (Vec<Problem>, Vec<Problem>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|p| within(&p.path, path));
        self.pending = rest;
        self.problems.errors.extend(mine);
    }

    pub fn resolve(&self, path: &str) -> PathBuf {
        self.base_dir.join(path)
    }

    /// Sorts the entries of a mapping by `schema`: reads what actiond reads, warns about the
    /// rest by name, and refuses a key written twice under spellings that mean the same.
    pub fn fields<'n>(
        &mut self,
        entries: &'n [(String, Node)],
        path: &str,
        schema: Schema,
    ) -> Fields<'n> {
        let mut fields = Fields::new();
        let mut seen: Vec<(&'static str, &'n str)> = Vec::new();
        for (key, value) in entries {
            let key_at = key_path(path, key);
            let Some((spelling, rule)) = schema.find(key) else {
                let hint = suggest(key, schema)
                    .map(|known| format!(" (did you mean `{known}`?)"))
                    .unwrap_or_default();
                self.warn(&key_at, format!("unknown key `{key}` is ignored{hint}"));
                continue;
            };
            let (canonical, rule) = match rule {
                Rule::Alias(target) => (target, schema.rule_of(target)),
                other => (spelling, other),
            };
            if let Some((_, earlier)) = seen.iter().find(|(c, _)| *c == canonical) {
                self.error(
                    &key_at,
                    format!(
                        "`{key}` sets the same thing as `{earlier}` above (keys are \
                         case-insensitive, and a renamed key counts under either name): keep one"
                    ),
                );
                continue;
            }
            seen.push((canonical, key));
            match rule {
                Rule::Unsupported(consequence) => {
                    // A feature switched off or left empty asks for nothing actiond lacks, so
                    // it is not worth a warning (every OliveTin test config says
                    // `checkForUpdates: false`).
                    if !is_off(value) {
                        self.warn(
                            &key_at,
                            format!("`{key}` is not supported by actiond: {consequence}"),
                        );
                    }
                }
                Rule::Read | Rule::Alias(_) => fields.found.push((canonical, key_at, value)),
            }
        }
        fields
    }

    // --- value readers: each reports a wrong type at the value's path and returns None ----

    pub fn text(&mut self, field: Field<'_, '_>) -> Option<String> {
        let (node, path) = field?;
        let text = node.scalar_text();
        if text.is_none() {
            self.error(path, format!("expected text, found {}", node.describe()));
        }
        text
    }

    pub fn text_or(&mut self, field: Field<'_, '_>, default: &str) -> String {
        self.text(field).unwrap_or_else(|| default.to_string())
    }

    pub fn boolean(&mut self, field: Field<'_, '_>) -> Option<bool> {
        let (node, path) = field?;
        let parsed = match node {
            Node::Bool(b) => Some(*b),
            // Quoted or YAML 1.1 spellings, and values that came from `${{ VAR }}`.
            Node::Str(s) => match s.trim().to_ascii_lowercase().as_str() {
                "true" | "yes" | "on" => Some(true),
                "false" | "no" | "off" => Some(false),
                _ => None,
            },
            _ => None,
        };
        if parsed.is_none() {
            self.error(
                path,
                format!(
                    "expected a boolean (true or false), found {}",
                    node.describe()
                ),
            );
        }
        parsed
    }

    pub fn flag(&mut self, field: Field<'_, '_>, default: bool) -> bool {
        self.boolean(field).unwrap_or(default)
    }

    pub fn integer(&mut self, field: Field<'_, '_>) -> Option<i64> {
        let (node, path) = field?;
        let parsed = match node {
            Node::Int(i) => Some(*i),
            // Text that reads as a whole number is accepted, as OliveTin's weak decoding does,
            // so `timeout: ${{ TIMEOUT }}` works.
            Node::Str(s) => s.trim().parse::<i64>().ok(),
            _ => None,
        };
        if parsed.is_none() {
            self.error(
                path,
                format!("expected a whole number, found {}", node.describe()),
            );
        }
        parsed
    }

    /// A list of text; a single value is taken as a list of one (OliveTin does the same).
    pub fn text_list(&mut self, field: Field<'_, '_>) -> Vec<String> {
        let Some((node, path)) = field else {
            return Vec::new();
        };
        match node {
            Node::Seq(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    match item.scalar_text() {
                        Some(t) => out.push(t),
                        None => self.error(
                            &index_path(path, i),
                            format!("expected text, found {}", item.describe()),
                        ),
                    }
                }
                out
            }
            Node::Map(_) => {
                self.error(
                    path,
                    format!("expected a list of text, found {}", node.describe()),
                );
                Vec::new()
            }
            scalar => scalar.scalar_text().into_iter().collect(),
        }
    }

    /// Checks each entry of a [`text_list`](Self::text_list) with `check`, reporting a
    /// refusal at the entry's own path (`key[2]`, or `key` for a single value).
    pub fn each_entry(
        &mut self,
        field: Field<'_, '_>,
        list: &[String],
        mut check: impl FnMut(usize, &str) -> Option<String>,
    ) {
        let Some((node, at)) = field else {
            return;
        };
        for (i, entry) in list.iter().enumerate() {
            if let Some(message) = check(i, entry) {
                let at = match node {
                    Node::Seq(_) => index_path(at, i),
                    _ => at.to_string(),
                };
                self.error(&at, message);
            }
        }
    }

    pub fn mapping<'n>(&mut self, field: Field<'_, 'n>) -> Option<&'n [(String, Node)]> {
        let (node, path) = field?;
        match node {
            Node::Map(entries) => Some(entries),
            other => {
                self.error(
                    path,
                    format!(
                        "expected a mapping (key: value), found {}",
                        other.describe()
                    ),
                );
                None
            }
        }
    }

    /// The mappings of a list, each with its path.
    pub fn mappings<'n>(&mut self, field: Field<'_, 'n>) -> Vec<(&'n [(String, Node)], String)> {
        let Some((node, path)) = field else {
            return Vec::new();
        };
        let Node::Seq(items) = node else {
            self.error(path, format!("expected a list, found {}", node.describe()));
            return Vec::new();
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let item_path = index_path(path, i);
            match item {
                Node::Map(entries) => out.push((entries.as_slice(), item_path)),
                other => self.error(
                    &item_path,
                    format!(
                        "expected a mapping (key: value), found {}",
                        other.describe()
                    ),
                ),
            }
        }
        out
    }
}

/// Whether the YAML path `path` is `parent` or lies below it (`actions[2].shell` is within
/// `actions[2]`, `actions[20]` is not).
fn within(path: &str, parent: &str) -> bool {
    path.strip_prefix(parent)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.') || rest.starts_with('['))
}

/// Whether an unsupported key's value asks for nothing: null, false, empty text or collection.
fn is_off(node: &Node) -> bool {
    match node {
        Node::Null | Node::Bool(false) => true,
        // Not trimmed: OliveTin reads `justification: " "` as "ask, with no template".
        Node::Str(s) => s.is_empty(),
        Node::Seq(items) => items.is_empty(),
        Node::Map(entries) => entries.is_empty(),
        Node::Bool(true) | Node::Int(_) | Node::Float(_) => false,
    }
}

/// The closest known key when an unknown one looks like a typo of it (edit distance ≤ 2).
fn suggest(key: &str, schema: Schema) -> Option<&'static str> {
    if key.len() < 4 {
        return None;
    }
    let key = key.to_ascii_lowercase();
    schema
        .names()
        .map(|name| (edit_distance(&key, &name.to_ascii_lowercase()), name))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, name)| name)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut diagonal = row[0];
        row[0] = i;
        for j in 1..=b.len() {
            let above = row[j];
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (row[j] + 1).min(row[j - 1] + 1).min(diagonal + cost);
            diagonal = above;
        }
    }
    row[b.len()]
}
