//! Placeholders in HTML the config writes (icons, `display` components): where each stands,
//! read the way a browser's tokenizer reads the markup, and how a value is encoded there. Entity
//! values come from files that scripts write, so they are data wherever they land: in text and
//! in a quoted attribute they are HTML-escaped, and in an attribute that holds an address
//! (`href`, `src`, …) they are also percent-encoded, so a value can only be a name inside that
//! address, never a path, a scheme or a query of its own (`api/StartActionByGet/x?` would
//! otherwise make every viewer's browser load an API URL). Anywhere else (a tag or attribute
//! name, an unquoted value, an event handler, `style`, a comment, a script) no encoding makes
//! a value safe, and the template is refused. Pure.

use super::{Context, Lead, Part, TemplateError, parse_placeholder, push_text, refuse};

/// Attributes whose value is an address (or a list of them) that the browser loads or follows.
const URL_ATTRIBUTES: &[&str] = &[
    "href",
    "src",
    "action",
    "formaction",
    "poster",
    "data",
    "cite",
    "background",
    "longdesc",
    "usemap",
    "codebase",
    "lowsrc",
    "dynsrc",
    "manifest",
    "ping",
    "xlink:href",
    "icon",
    "profile",
    "classid",
    "archive",
];

/// Elements whose content the browser does not read as markup.
const RAW_TEXT: &[&str] = &[
    "script",
    "style",
    "textarea",
    "title",
    "xmp",
    "iframe",
    "noembed",
    "noframes",
    "noscript",
    "plaintext",
];

/// Where the tokenizer is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Text,
    /// Inside a tag, between attributes.
    Tag,
    /// Reading an attribute's name.
    Name,
    /// After a name, before `=` or the next attribute.
    AfterName,
    /// After `=`, before the value.
    BeforeValue,
    Quoted(u8),
    Unquoted,
    Comment,
    /// Inside an element whose content is not markup, until `</name`.
    Raw,
}

const REFUSED: &str = "in HTML a placeholder may stand only in text or inside a quoted \
    attribute value (not in an event handler, `style` or `srcset`), where actiond can encode \
    an entity's value as data";

/// Compiles HTML with placeholders, each given its context.
pub(super) fn compile(text: &str) -> Result<Vec<Part>, TemplateError> {
    let b = text.as_bytes();
    let mut parts = Vec::new();
    let mut state = State::Text;
    // The tag and attribute being read (lower case), for raw-text elements and URL values.
    let (mut tag, mut attribute, mut raw_end) = (String::new(), String::new(), String::new());
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        if text[i..].starts_with("{{") {
            let context = match state {
                // Right after `<` (or `</`, `<!`, `<?`) a value would make the tag itself.
                State::Text
                    if ["<", "</", "<!", "<?"]
                        .iter()
                        .any(|o| text[..i].ends_with(o)) =>
                {
                    return Err(refuse(REFUSED.into()));
                }
                State::Text => Context::HtmlText,
                State::Quoted(_) if attribute == "srcset" || attribute == "style" => {
                    return Err(refuse(REFUSED.into()));
                }
                State::Quoted(_) if attribute.starts_with("on") => {
                    return Err(refuse(REFUSED.into()));
                }
                State::Quoted(_) if URL_ATTRIBUTES.contains(&attribute.as_str()) => {
                    Context::HtmlUrl
                }
                State::Quoted(_) => Context::HtmlAttribute,
                _ => return Err(refuse(REFUSED.into())),
            };
            push_text(&mut parts, &text[copied..i]);
            let (placeholder, len) = parse_placeholder(&text[i..])?;
            parts.push(Part::Hole(placeholder, context, Lead::Inside));
            i += len;
            copied = i;
            continue;
        }
        let c = b[i];
        state = match state {
            State::Text if c == b'<' => {
                if text[i..].starts_with("<!--") {
                    i += 3;
                    State::Comment
                } else if b
                    .get(i + 1)
                    .is_some_and(|n| n.is_ascii_alphabetic() || *n == b'/')
                {
                    tag.clear();
                    let name_start = i + 1 + usize::from(b[i + 1] == b'/');
                    let end = text[name_start..]
                        .find(|ch: char| ch.is_ascii_whitespace() || ch == '>' || ch == '/')
                        .map_or(b.len(), |e| name_start + e);
                    if text[name_start..end].contains("{{") {
                        return Err(refuse(REFUSED.into()));
                    }
                    tag.push_str(&text[name_start..end].to_ascii_lowercase());
                    if b[i + 1] == b'/' {
                        tag.clear();
                    }
                    i = end.max(i + 1) - 1;
                    State::Tag
                } else {
                    State::Text
                }
            }
            State::Text => State::Text,
            State::Comment if text[i..].starts_with("-->") => {
                i += 2;
                State::Text
            }
            State::Comment => State::Comment,
            State::Raw => {
                if text[i..].len() >= raw_end.len()
                    && text[i..i + raw_end.len()].eq_ignore_ascii_case(&raw_end)
                {
                    i += raw_end.len() - 1;
                    tag.clear();
                    State::Tag
                } else {
                    State::Raw
                }
            }
            State::Tag | State::AfterName if c == b'>' => {
                if RAW_TEXT.contains(&tag.as_str()) {
                    raw_end = format!("</{tag}");
                    State::Raw
                } else {
                    State::Text
                }
            }
            State::Tag | State::AfterName if c.is_ascii_whitespace() || c == b'/' => state,
            State::AfterName if c == b'=' => State::BeforeValue,
            State::Tag | State::AfterName => {
                attribute.clear();
                attribute.push(c.to_ascii_lowercase() as char);
                State::Name
            }
            State::Name if c == b'=' => State::BeforeValue,
            State::Name if c.is_ascii_whitespace() || c == b'/' => State::AfterName,
            State::Name if c == b'>' => {
                i -= 1;
                State::AfterName
            }
            State::Name => {
                attribute.push(c.to_ascii_lowercase() as char);
                State::Name
            }
            State::BeforeValue if c.is_ascii_whitespace() => State::BeforeValue,
            State::BeforeValue if c == b'"' || c == b'\'' => State::Quoted(c),
            State::BeforeValue if c == b'>' => {
                i -= 1;
                State::Tag
            }
            State::BeforeValue => State::Unquoted,
            State::Quoted(q) if c == q => State::Tag,
            State::Quoted(q) => State::Quoted(q),
            State::Unquoted if c.is_ascii_whitespace() => State::Tag,
            State::Unquoted if c == b'>' => {
                i -= 1;
                State::Tag
            }
            State::Unquoted => State::Unquoted,
        };
        i += 1;
    }
    push_text(&mut parts, &text[copied..]);
    Ok(parts)
}

/// Text made safe to put into HTML text or a quoted attribute: it reads as the same text,
/// never as markup.
pub fn escape(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

/// A value made into one piece of an address: every byte but the unreserved ones
/// (`A-Z a-z 0-9 - . _ ~`) percent-encoded, so `/`, `?`, `#`, `:` and `\` cannot start a path,
/// a query or a scheme. `.` and `..` alone are dropped: browsers read them, encoded or not, as
/// "this directory" and "the one above".
pub fn encode_url_piece(out: &mut String, value: &str) {
    if value == "." || value == ".." {
        return;
    }
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Placeholder, Template};
    use super::*;

    fn render(html: &str, value: &str) -> Result<String, TemplateError> {
        Template::html(html).map(|t| t.render(&|_| Some(value.to_string())))
    }

    #[test]
    fn values_are_encoded_for_where_they_land() {
        let hostile = "api/StartActionByGet/secret?\"><img src=x onerror=alert(1)>";
        let cases = [
            (
                "<b>{{ .CurrentEntity.name }}</b>",
                "<b>api/StartActionByGet/secret?&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</b>",
            ),
            (
                "<img src=\"{{ .CurrentEntity.img }}\">",
                "<img src=\"api%2FStartActionByGet%2Fsecret%3F%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E\">",
            ),
            (
                "<a href='https://example.com/{{ .CurrentEntity.page }}'>x</a>",
                "<a href='https://example.com/api%2FStartActionByGet%2Fsecret%3F%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E'>x</a>",
            ),
            (
                "<IMG alt=\"{{ x.y }}\" SRC = \"{{ x.y }}\">",
                "<IMG alt=\"api/StartActionByGet/secret?&quot;&gt;&lt;img src=x onerror=alert(1)&gt;\" SRC = \"api%2FStartActionByGet%2Fsecret%3F%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E\">",
            ),
        ];
        for (html, want) in cases {
            assert_eq!(render(html, hostile).unwrap(), want, "{html}");
        }
        assert_eq!(
            render("<img src=\"{{ a.b }}\">", "..").unwrap(),
            "<img src=\"\">"
        );
        assert_eq!(
            render("<img src=\"x/{{ a.b }}/y\">", "café").unwrap(),
            "<img src=\"x/caf%C3%A9/y\">"
        );
    }

    #[test]
    fn placeholders_where_no_encoding_is_safe_are_refused() {
        for html in [
            "<img {{ a.b }}>",
            "<img src={{ a.b }}>",
            "<{{ a.b }}>",
            "<img alt=\"x\" {{ a.b }}=\"y\">",
            "<img src=\"x\" onerror=\"{{ a.b }}\">",
            "<span style=\"color: {{ a.b }}\">",
            "<img srcset=\"{{ a.b }} 2x\">",
            "<!-- {{ a.b }} -->",
            "</{{ a.b }}>",
            "<a{{ a.b }}>",
            "<a title=\"x\"{{ a.b }}>",
            "x<!{{ a.b }}",
            "<script>{{ a.b }}</script>",
            "<style>p{}{{ a.b }}</style>",
            "<textarea>{{ a.b }}</textarea>",
        ] {
            assert!(Template::html(html).is_err(), "{html} should be refused");
        }
    }

    #[test]
    fn text_after_raw_elements_and_comments_is_text_again() {
        for html in [
            "<script>x</script>{{ a.b }}",
            "<!-- c -->{{ a.b }}",
            "<br/>{{ a.b }}",
            "<a href=\"x\" title='{{ a.b }}'>t</a>",
            "1 < 2 {{ a.b }}",
            "</b>{{ a.b }}",
        ] {
            let t = Template::html(html).unwrap_or_else(|e| panic!("{html}: {e}"));
            let contexts: Vec<Context> = t.placeholders().map(|(_, c)| c).collect();
            assert!(
                contexts
                    .iter()
                    .all(|c| matches!(c, Context::HtmlText | Context::HtmlAttribute)),
                "{html}: {contexts:?}"
            );
            assert!(
                t.placeholders()
                    .all(|(p, _)| *p == Placeholder::Entity("b".into()))
            );
        }
    }
}
