//! YAML (or JSON) text turned into an ordered tree of plain values, and `${{ VAR }}`
//! environment interpolation on that tree.
//!
//! This module owns the parser settings (the YAML 1.2 scalar rules OliveTin's configs rely
//! on, and serde-saphyr's default budget, so that an alias bomb fails fast instead of eating
//! the board's memory) and the `Node` tree that the validation pass of `config` walks. It
//! knows nothing about config keys, never reads files and never reads the process
//! environment itself: the caller hands it the text and a lookup closure, so tests stay
//! hermetic.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::Problem;

/// One YAML (or JSON) value, with mapping entries kept in file order.
///
/// Order matters: `suggestions` and dashboards are shown as written, and problems are
/// reported in the order a reader meets them in the file.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(String, Node)>),
}

impl Node {
    /// The value as text when a string is expected, or `None` for null, lists and mappings.
    ///
    /// Numbers keep their decimal form (`3` → "3", `1.5` → "1.5"). Booleans become "1" and "0"
    /// because that is what OliveTin (koanf with weakly typed decoding) stores for a YAML
    /// boolean in a string field, so scripts written against OliveTin see the same text.
    pub fn scalar_text(&self) -> Option<String> {
        match self {
            Node::Str(s) => Some(s.clone()),
            Node::Int(i) => Some(i.to_string()),
            Node::Float(f) => Some(f.to_string()),
            Node::Bool(b) => Some(if *b { "1" } else { "0" }.to_string()),
            Node::Null | Node::Seq(_) | Node::Map(_) => None,
        }
    }

    /// A short description for error messages: "a list", "the number 3", `"maybe"`.
    pub fn describe(&self) -> String {
        match self {
            Node::Null => "nothing (null)".to_string(),
            Node::Bool(b) => format!("the boolean {b}"),
            Node::Int(i) => format!("the number {i}"),
            Node::Float(f) => format!("the number {f}"),
            Node::Str(s) => {
                // Long values (a whole shell script) would drown the message; the path
                // already says where the value is.
                let short: String = s.chars().take(40).collect();
                if short.len() < s.len() {
                    format!("the text {short:?}…")
                } else {
                    format!("the text {short:?}")
                }
            }
            Node::Seq(_) => "a list".to_string(),
            Node::Map(_) => "a mapping".to_string(),
        }
    }
}

/// The path of a mapping entry below `parent` (`actions[2]` + `title` → `actions[2].title`).
///
/// A parent ending in a space is a file label such as `config.d/00-first.yml: `, and the
/// key follows it directly.
pub fn key_path(parent: &str, key: &str) -> String {
    if parent.is_empty() || parent.ends_with(' ') {
        format!("{parent}{key}")
    } else {
        format!("{parent}.{key}")
    }
}

/// The path of a list element below `parent` (`actions` + 2 → `actions[2]`).
pub fn index_path(parent: &str, index: usize) -> String {
    format!("{parent}[{index}]")
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Node, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
        Node::deserialize(deserializer)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Int(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        // serde-saphyr hands every non-negative integer over as u64. One beyond i64 cannot be
        // a count or a timeout anyway, so it is kept as its exact text for string fields.
        Ok(i64::try_from(v).map_or_else(|_| Node::Str(v.to_string()), Node::Int))
    }

    fn visit_i128<E>(self, v: i128) -> Result<Node, E> {
        Ok(i64::try_from(v).map_or_else(|_| Node::Str(v.to_string()), Node::Int))
    }

    fn visit_u128<E>(self, v: u128) -> Result<Node, E> {
        Ok(i64::try_from(v).map_or_else(|_| Node::Str(v.to_string()), Node::Int))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Float(v))
    }

    fn visit_char<E>(self, v: char) -> Result<Node, E> {
        Ok(Node::Str(v.to_string()))
    }

    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Str(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::Str(v))
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Node, E> {
        // Only an explicit `!!binary` tag produces bytes; text is all a config can use.
        String::from_utf8(v.to_vec())
            .map(Node::Str)
            .map_err(|_| E::custom("a !!binary value that is not UTF-8 text cannot be used here"))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Node>()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Node>()? {
            let key = match key {
                Node::Null => String::new(),
                Node::Seq(_) | Node::Map(_) => {
                    return Err(de::Error::custom(
                        "a mapping key must be a plain value, not a list or a mapping",
                    ));
                }
                // A number or boolean key (`1: one` in suggestions) is used as its text, as
                // OliveTin does for `map[string]string` fields.
                scalar => scalar.scalar_text().unwrap_or_default(),
            };
            let value = map.next_value::<Node>()?;
            entries.push((key, value));
        }
        Ok(Node::Map(entries))
    }
}

/// Parses one YAML document into a tree. An empty document (or only comments) is `Null`.
///
/// Scalar rules are YAML 1.2, as OliveTin's Go parser reads them: only `true`/`false` are
/// booleans (`On`, `yes`, `off` stay text, so a title `On` is not turned into "1"), numbers
/// with leading zeros or underscores stay text (`0755`), and `.nan`/`.inf` stay text. The
/// default budget of serde-saphyr is kept: it bounds nodes, events, depth and alias
/// expansion, which is what makes a billion-laughs file fail in milliseconds.
///
/// The error is a `Problem` with an empty path; the caller sets the path when the text came
/// from an included file.
pub fn parse_yaml(text: &str) -> Result<Node, Problem> {
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    options.leading_zero_numbers_as_strings = true;
    options.underscored_numbers_as_strings = true;
    options.non_finite_float_policy = serde_saphyr::options::NonFiniteFloatPolicy::AsString;
    // The source snippet is for terminals; a Problem is one line in a log or a check report.
    options.with_snippet = false;
    serde_saphyr::from_str_with_options::<Node>(text, options).map_err(|e| Problem {
        path: String::new(),
        message: yaml_message(&e.to_string()),
    })
}

/// A warning for the lines whose leading whitespace holds a TAB where no content follows (a
/// comment, or nothing), outside block scalars, and for empty lines of a block scalar with a
/// TAB before its indentation.
/// YAML 1.2 allows a TAB there, so the file is read; but libyaml and the parsers derived from
/// it (OliveTin's, PyYAML, yamllint) refuse the whole file, so it is worth a word: the file
/// would not go back, and such a TAB is usually an editor's slip. `label` prefixes the path.
///
/// The scan is by lines and knows block scalars (`key: |`, `- >-`) by their indicator; it does
/// not follow quoted or plain scalars over several lines, where a TAB at the start of a line
/// is folded text: such a line may be named without need, never missed.
pub fn tab_warning(text: &str, label: &str) -> Option<Problem> {
    let mut lines = Vec::new();
    // Inside a block scalar: the indentation of the line that opened it, and of its content
    // once a content line has said it. A TAB in its content is text; a TAB before its
    // indentation on a content line is a YAML error already, and on an empty line one that
    // only libyaml makes.
    let mut block: Option<(usize, Option<usize>)> = None;
    for (index, line) in text.lines().enumerate() {
        let spaces = line.len() - line.trim_start_matches(' ').len();
        let lead = line.len() - line.trim_start_matches([' ', '\t']).len();
        let rest = &line[lead..];
        if let Some((parent, content)) = block {
            if rest.is_empty() {
                if line
                    .find('\t')
                    .is_some_and(|tab| tab < content.unwrap_or(usize::MAX))
                {
                    lines.push(index + 1);
                }
                continue;
            }
            if spaces > parent {
                block = Some((parent, content.or(Some(spaces))));
                continue;
            }
            block = None;
        }
        if line[..lead].contains('\t') && (rest.is_empty() || rest.starts_with('#')) {
            lines.push(index + 1);
        }
        if opens_block_scalar(rest) {
            block = Some((spaces, None));
        }
    }
    if lines.is_empty() {
        return None;
    }
    let numbers: Vec<String> = lines.iter().map(ToString::to_string).collect();
    let (noun, list) = if numbers.len() == 1 {
        ("line", numbers[0].clone())
    } else {
        ("lines", numbers.join(", "))
    };
    Some(Problem {
        path: label.to_string(),
        message: format!(
            "{noun} {list}: a TAB in the indentation of a comment or an empty line; YAML 1.2 \
             allows it and actiond reads the file, but libyaml-based parsers (OliveTin's, \
             PyYAML, yamllint) refuse the whole file: indent with spaces"
        ),
    })
}

/// Whether a line's content (after its indentation) ends by opening a block scalar:
/// `key: |`, `- >-`, `key: |2 # comment`.
fn opens_block_scalar(content: &str) -> bool {
    let without_comment = match content.find(" #") {
        Some(at) => &content[..at],
        None => content,
    };
    let t = without_comment.trim_end();
    let indicator = t.trim_end_matches(|c: char| c == '+' || c == '-' || c.is_ascii_digit());
    let Some(before) = indicator
        .strip_suffix('|')
        .or_else(|| indicator.strip_suffix('>'))
    else {
        return false;
    };
    let before = before.trim_end();
    before.is_empty() || before.ends_with(':') || before.ends_with('-')
}

/// Turns a parser error into a message for the person who wrote the config: the parser's
/// own hints are addressed to programmers using the library, so they are removed.
fn yaml_message(raw: &str) -> String {
    let cleaned = raw
        .replace(", set DuplicateKeyPolicy in Options if acceptable", "")
        .replace(
            "; use from_str_multiple or from_str_multiple_with_options",
            "",
        );
    if cleaned.contains("budget breached") {
        format!(
            "YAML exceeds the parser's safety limits (too many values, too deep, or aliases \
             that expand too far): {cleaned}"
        )
    } else if cleaned.contains("multiple YAML documents") {
        format!("invalid YAML: {cleaned} (a config file holds one document)")
    } else {
        format!("invalid YAML: {cleaned}")
    }
}

/// Replaces every `${{ NAME }}` in the string values of `node` with the value of the
/// environment variable `NAME`, as looked up by `env`.
///
/// Only values are interpolated, never keys. A reference to an unset variable, a malformed
/// reference (`${{ 1X }}`, or `${{` without `}}`) is a problem at the value's path; the value
/// is then left as written (the config is invalid anyway). An empty variable gives an empty
/// string. The result is not scanned again, so a variable holding `${{ X }}` stays literal.
pub fn interpolate_env(
    node: &mut Node,
    path: &str,
    env: &dyn Fn(&str) -> Option<String>,
    errors: &mut Vec<Problem>,
) {
    match node {
        Node::Str(s) => {
            if s.contains("${{")
                && let Some(replaced) = interpolate_str(s, path, env, errors)
            {
                *s = replaced;
            }
        }
        Node::Seq(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                interpolate_env(item, &index_path(path, i), env, errors);
            }
        }
        Node::Map(entries) => {
            for (key, value) in entries.iter_mut() {
                interpolate_env(value, &key_path(path, key), env, errors);
            }
        }
        Node::Null | Node::Bool(_) | Node::Int(_) | Node::Float(_) => {}
    }
}

/// Interpolates one string; `None` when any reference in it failed.
fn interpolate_str(
    s: &str,
    path: &str,
    env: &dyn Fn(&str) -> Option<String>,
    errors: &mut Vec<Problem>,
) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    let mut ok = true;
    let problem = |message: String| Problem {
        path: path.to_string(),
        message,
    };
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 3..];
        let Some(end) = after.find("}}") else {
            errors.push(problem(
                "`${{` without a closing `}}`: write ${{ NAME }} to use an environment variable"
                    .to_string(),
            ));
            return None;
        };
        let name = after[..end].trim();
        if !is_env_name(name) {
            errors.push(problem(format!(
                "`${{{{{}}}}}` is not an environment variable reference: write ${{{{ NAME }}}} \
                 with letters, digits and _",
                &after[..end]
            )));
            ok = false;
        } else {
            match env(name) {
                Some(value) => out.push_str(&value),
                None => {
                    errors.push(problem(format!(
                        "environment variable {name} is not set (used as ${{{{ {name} }}}})"
                    )));
                    ok = false;
                }
            }
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    ok.then_some(out)
}

/// `[A-Za-z_][A-Za-z0-9_]*`, the portable shell variable name.
fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabs_that_libyaml_refuses_are_named() {
        let lines = |text: &str| -> Vec<usize> {
            // Every text here is valid YAML 1.2: the point is that it is read.
            parse_yaml(text).unwrap_or_else(|p| panic!("{text:?}: {p}"));
            tab_warning(text, "").map_or_else(Vec::new, |p| {
                let list = p.message.split(':').next().unwrap_or("").to_string();
                list.trim_start_matches("lines ")
                    .trim_start_matches("line ")
                    .split(", ")
                    .map(|n| n.parse().unwrap())
                    .collect()
            })
        };
        let cases: &[(&str, &[usize])] = &[
            ("a: 1\n\t# a comment\nb: 2\n", &[2]),
            ("a: 1\n  \t# after spaces\n", &[2]),
            ("a: 1\n\t\nb: 2\n", &[2]),
            // A TAB between a value and its comment, and inside a comment, is fine.
            ("a: 1\t# trailing\n# \tinside\n", &[]),
            // In a block scalar, a TAB after the indentation is content.
            ("s: |\n  if x; then\n  \t# inner\n  fi\n", &[]),
            ("s: >-\n    a\n    \tb\n", &[]),
            // Before the block's indentation it is a YAML error (see the end).
            // The block ends at a line indented no deeper than its key.
            ("s: |\n  a\n\t# comment\nt: 1\n", &[3]),
            ("a: 1\n\t# one\nb: |\n  x\n\t\n", &[2, 5]),
            ("b: |\n  x\n  \t\n  y\n", &[]),
            ("a: 'x'  # plain\n", &[]),
        ];
        for (text, want) in cases {
            assert_eq!(lines(text), *want, "{text:?}");
        }
        let p = tab_warning("a: 1\n\t# c\n", "config.d/x.yaml").unwrap();
        assert_eq!(p.path, "config.d/x.yaml");
        assert!(p.message.starts_with("line 2: a TAB"), "{}", p.message);
        // A TAB that indents content is a YAML error, not a warning.
        assert!(parse_yaml("a:\n\tb: 1\n").is_err());
        assert!(parse_yaml("- |\n\t\n  a\n").is_err());
    }

    fn yaml(text: &str) -> Node {
        parse_yaml(text).unwrap_or_else(|p| panic!("{text:?} failed: {p}"))
    }

    fn s(v: &str) -> Node {
        Node::Str(v.to_string())
    }

    #[test]
    fn scalars_follow_yaml_1_2() {
        let cases: &[(&str, Node)] = &[
            ("true", Node::Bool(true)),
            ("False", Node::Bool(false)),
            ("yes", s("yes")),
            ("On", s("On")),
            ("off", s("off")),
            ("3", Node::Int(3)),
            ("-7", Node::Int(-7)),
            ("1.5", Node::Float(1.5)),
            ("0755", s("0755")),
            ("1_000", s("1_000")),
            ("2:30", s("2:30")),
            (".nan", s(".nan")),
            ("~", Node::Null),
            ("", Node::Null),
            ("'5'", s("5")),
            ("18446744073709551615", s("18446744073709551615")),
        ];
        for (text, want) in cases {
            let got = yaml(&format!("k: {text}\n"));
            assert_eq!(
                got,
                Node::Map(vec![("k".into(), want.clone())]),
                "value {text:?}"
            );
        }
    }

    #[test]
    fn scalar_text_renders_like_olivetin() {
        let cases: &[(Node, Option<&str>)] = &[
            (Node::Int(3), Some("3")),
            (Node::Float(1.5), Some("1.5")),
            (Node::Float(2.0), Some("2")),
            (Node::Bool(true), Some("1")),
            (Node::Bool(false), Some("0")),
            (s("x"), Some("x")),
            (Node::Null, None),
            (Node::Seq(vec![]), None),
            (Node::Map(vec![]), None),
        ];
        for (node, want) in cases {
            assert_eq!(node.scalar_text().as_deref(), *want, "{node:?}");
        }
    }

    #[test]
    fn mappings_keep_file_order_and_scalar_keys_become_text() {
        let got = yaml("b: 1\na: 2\n3: three\ntrue: yes\nc: [x, {d: e}]\n");
        assert_eq!(
            got,
            Node::Map(vec![
                ("b".into(), Node::Int(1)),
                ("a".into(), Node::Int(2)),
                ("3".into(), s("three")),
                ("1".into(), s("yes")),
                (
                    "c".into(),
                    Node::Seq(vec![s("x"), Node::Map(vec![("d".into(), s("e"))])])
                ),
            ])
        );
    }

    #[test]
    fn anchors_and_merge_keys_expand() {
        let got = yaml("base: &b {x: 1, y: 1}\nuse:\n  <<: *b\n  y: 2\n");
        assert_eq!(
            got,
            Node::Map(vec![
                (
                    "base".into(),
                    Node::Map(vec![("x".into(), Node::Int(1)), ("y".into(), Node::Int(1))])
                ),
                (
                    "use".into(),
                    // The mapping's own keys come first, then the merged ones it lacks.
                    Node::Map(vec![("y".into(), Node::Int(2)), ("x".into(), Node::Int(1))])
                ),
            ])
        );
    }

    #[test]
    fn json_builds_the_same_tree() {
        let from_json: Node =
            serde_json::from_str(r#"{"b": 1, "a": [true, null, 1.5, "x"]}"#).expect("valid JSON");
        assert_eq!(from_json, yaml("b: 1\na: [true, null, 1.5, x]\n"));
    }

    #[test]
    fn syntax_errors_name_line_and_column() {
        let cases: &[(&str, &str)] = &[
            ("a: [1, 2\nb: 3\n", "line 2"),
            ("a: 1\na: 2\n", "duplicate mapping key"),
            ("a: b: c\n", "line 1, column 5"),
            ("a: 1\n---\nb: 2\n", "one document"),
        ];
        for (text, want) in cases {
            let p = parse_yaml(text).expect_err(text);
            assert_eq!(p.path, "");
            assert!(
                p.message.starts_with("invalid YAML: "),
                "{text:?}: {}",
                p.message
            );
            assert!(p.message.contains(want), "{text:?}: {}", p.message);
            assert!(
                !p.message.contains("Options"),
                "developer hint left in: {}",
                p.message
            );
        }
    }

    #[test]
    fn alias_bomb_fails_fast() {
        let mut text = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        for i in 1..9u8 {
            let prev = char::from(b'a' + i - 1);
            let cur = char::from(b'a' + i);
            let refs = vec![format!("*{prev}"); 9].join(",");
            text.push_str(&format!("{cur}: &{cur} [{refs}]\n"));
        }
        // That it fails, and why, is what the test asserts. How fast depends on the machine
        // (a loaded one took over 5 s of a debug build), so it is no assertion here.
        let p = parse_yaml(&text).expect_err("a billion laughs must not parse");
        assert!(p.message.contains("safety limits"), "{}", p.message);
    }

    #[test]
    fn interpolation_replaces_references_in_values_only() {
        let env = |name: &str| match name {
            "HOST" => Some("pi.local".to_string()),
            "EMPTY" => Some(String::new()),
            "TRICKY" => Some("${{ HOST }}".to_string()),
            _ => None,
        };
        let mut node = yaml(
            "${{ HOST }}: key stays\nurl: http://${{HOST}}:${{  EMPTY }}80/\nlist: [\"${{ TRICKY }}\", 3]\n",
        );
        let mut errors = Vec::new();
        interpolate_env(&mut node, "", &env, &mut errors);
        assert_eq!(errors, vec![]);
        assert_eq!(
            node,
            Node::Map(vec![
                ("${{ HOST }}".into(), s("key stays")),
                ("url".into(), s("http://pi.local:80/")),
                (
                    "list".into(),
                    Node::Seq(vec![s("${{ HOST }}"), Node::Int(3)])
                ),
            ])
        );
    }

    #[test]
    fn interpolation_problems_name_the_variable_and_path() {
        let env = |_: &str| None;
        let cases: &[(&str, &str, &str)] = &[
            (
                "a: {b: [x, \"${{ NOPE }}\"]}",
                "a.b[1]",
                "environment variable NOPE is not set",
            ),
            (
                "a: \"${{ 1X }}\"",
                "a",
                "is not an environment variable reference",
            ),
            ("a: \"${{ X\"", "a", "without a closing"),
        ];
        for (text, path, message) in cases {
            let mut node = yaml(text);
            let mut errors = Vec::new();
            interpolate_env(&mut node, "", &env, &mut errors);
            assert_eq!(errors.len(), 1, "{text}: {errors:?}");
            assert_eq!(errors[0].path, *path, "{text}");
            assert!(
                errors[0].message.contains(message),
                "{text}: {}",
                errors[0].message
            );
        }
    }

    #[test]
    fn paths_join_keys_indexes_and_file_labels() {
        assert_eq!(key_path("", "actions"), "actions");
        assert_eq!(key_path("actions[2]", "title"), "actions[2].title");
        assert_eq!(
            key_path("config.d/a.yml: ", "actions"),
            "config.d/a.yml: actions"
        );
        assert_eq!(index_path("actions", 2), "actions[2]");
    }
}
