//! Command templates: `{{ name }}` placeholders in `shell:` and `exec:` commands, compiled
//! once at config load and rendered per execution in a single pass (SPEC §5.5).
//!
//! For `shell:` the text is lexed as POSIX shell to learn the quoting context of every
//! placeholder: unquoted, inside double quotes, or inside single quotes. A value is then
//! quoted for exactly that context, so the shell reads it back as the same bytes and never
//! as syntax; injection is impossible by construction, not by a deny-list of characters.
//! Contexts where quoting cannot be proved safe (inside backticks, `$( )`, `$(( ))`, `${ }`,
//! `$'…'`, a here-document, a comment, right after `$` or a backslash) are refused when the
//! config loads. `exec:` elements and titles take values literally (no shell reads them).
//! Rendering is one pass over the compiled parts, so a value containing `{{ }}` is text,
//! never a placeholder. This module is pure: it neither validates values (that is the
//! arguments module) nor runs anything.

use std::fmt;

/// What a placeholder names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Placeholder {
    /// `{{ name }}` or `{{ .Arguments.name }}`: a declared argument.
    Argument(String),
    /// `{{ .CurrentEntity.field }}` or the legacy `{{ type.field }}`: a field of the entity
    /// instance the action is bound to (the field path, dots kept).
    Entity(String),
}

impl fmt::Display for Placeholder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Placeholder::Argument(name) => write!(f, "{{{{ {name} }}}}"),
            Placeholder::Entity(field) => write!(f, "{{{{ .CurrentEntity.{field} }}}}"),
        }
    }
}

/// Where a placeholder stands, which decides how its value is quoted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// Outside any quotes in a shell command: the value becomes one single-quoted word.
    Unquoted,
    /// Inside `"…"`: `\`, `"`, `$` and backtick are escaped.
    DoubleQuoted,
    /// Inside `'…'`: the quote is closed, the value single-quoted, the quote reopened.
    SingleQuoted,
    /// Not read by a shell (`exec:` elements, titles): the value as it is.
    Literal,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Hole(Placeholder, Context),
}

/// A compiled command template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

/// Why a template was refused, in words that say how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    pub message: String,
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TemplateError {}

fn refuse(message: String) -> TemplateError {
    TemplateError { message }
}

const UNSAFE_HINT: &str = "actiond cannot quote a value safely there; use `exec:` instead of `shell:`, \
                           or read the value from its environment variable (e.g. \"$NAME\")";

impl Template {
    /// A template with no text at all.
    pub fn empty() -> Template {
        Template { parts: Vec::new() }
    }

    /// Compiles a `shell:` command.
    pub fn shell(text: &str) -> Result<Template, TemplateError> {
        Lexer::new(text).run()
    }

    /// Compiles text that no shell reads (`exec:` elements, titles, icons).
    pub fn literal(text: &str) -> Result<Template, TemplateError> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(at) = rest.find("{{") {
            push_text(&mut parts, &rest[..at]);
            let (placeholder, len) = parse_placeholder(&rest[at..])?;
            parts.push(Part::Hole(placeholder, Context::Literal));
            rest = &rest[at + len..];
        }
        push_text(&mut parts, rest);
        Ok(Template { parts })
    }

    /// Every placeholder with its context, in order.
    pub fn placeholders(&self) -> impl Iterator<Item = (&Placeholder, Context)> {
        self.parts.iter().filter_map(|p| match p {
            Part::Hole(ph, ctx) => Some((ph, *ctx)),
            Part::Text(_) => None,
        })
    }

    pub fn has_placeholders(&self) -> bool {
        self.placeholders().next().is_some()
    }

    /// Renders the template in one pass; a placeholder without a value renders as "".
    pub fn render(&self, value: &dyn Fn(&Placeholder) -> Option<String>) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Hole(ph, ctx) => quote_into(&mut out, &value(ph).unwrap_or_default(), *ctx),
            }
        }
        out
    }
}

fn push_text(parts: &mut Vec<Part>, text: &str) {
    if text.is_empty() {
        return;
    }
    if let Some(Part::Text(prev)) = parts.last_mut() {
        prev.push_str(text);
    } else {
        parts.push(Part::Text(text.to_string()));
    }
}

/// Appends `value` quoted for `ctx`.
pub fn quote_into(out: &mut String, value: &str, ctx: Context) {
    match ctx {
        Context::Literal => out.push_str(value),
        Context::Unquoted => single_quoted(out, value),
        Context::SingleQuoted => {
            // Close the surrounding quote, add the value as its own single-quoted word
            // (adjacent quoted strings join into one word), reopen the quote.
            out.push('\'');
            single_quoted(out, value);
            out.push('\'');
        }
        Context::DoubleQuoted => {
            for c in value.chars() {
                if matches!(c, '\\' | '"' | '$' | '`') {
                    out.push('\\');
                }
                out.push(c);
            }
        }
    }
}

/// `'…'` with every `'` written as `'\''`: inside single quotes nothing is special.
fn single_quoted(out: &mut String, value: &str) {
    out.push('\'');
    for c in value.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
}

/// Parses `{{ … }}` at the start of `s`; returns the placeholder and the bytes it spans.
fn parse_placeholder(s: &str) -> Result<(Placeholder, usize), TemplateError> {
    let Some(end) = s[2..].find("}}") else {
        return Err(refuse(
            "`{{` without a closing `}}`: write placeholders as {{ name }}; \
             to pass a literal `{{` to a command, put the command in a script file"
                .to_string(),
        ));
    };
    let inner = s[2..2 + end].trim();
    let word = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let placeholder = if word(inner) {
        Placeholder::Argument(inner.to_string())
    } else if let Some(name) = inner.strip_prefix(".Arguments.").filter(|n| word(n)) {
        Placeholder::Argument(name.to_string())
    } else if let Some(field) = inner
        .strip_prefix(".CurrentEntity.")
        .filter(|f| f.split('.').all(word))
    {
        Placeholder::Entity(field.to_string())
    } else if let Some((first, field)) = inner
        .split_once('.')
        .filter(|(a, b)| word(a) && b.split('.').all(word))
    {
        // The legacy `{{ server.hostname }}`: the first segment names the entity (OliveTin
        // ignores it too), the rest is the field.
        let _ = first;
        Placeholder::Entity(field.to_string())
    } else {
        return Err(refuse(format!(
            "`{{{{{}}}}}` is not a placeholder actiond understands: use {{{{ name }}}} for an argument \
             or {{{{ .CurrentEntity.field }}}} for an entity field; to pass literal braces to a \
             command (e.g. docker --format), put the command in a script file",
            &s[2..2 + end]
        )));
    };
    Ok((placeholder, 2 + end + 2))
}

/// The shell removes a backslash-newline before it reads tokens, so `$`, `<`, `>`, `(` or
/// `)` at the end of a line joins with the start of the next one (`$'`, `$(`, `<<`, `((`):
/// refused rather than modelled, because real configs never need it.
fn joined_by_continuation(c: char) -> TemplateError {
    refuse(format!(
        "`{c}` right before a line continuation (a backslash at the end of the line) joins with \
         the next line in ways actiond does not check: put them on one line"
    ))
}

/// Lexer states. Only `Double` and `Single` directly on top of the top level are contexts
/// a value can be quoted into; everything else nested is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Double,
    Single,
    /// `$'…'` (bash ANSI-C quoting, where backslash escapes work).
    DollarSingle,
    Backtick,
    /// `$( … )` with the depth of plain parentheses inside.
    CommandSub(u32),
    /// `$(( … ))` with the depth of parentheses inside.
    Arithmetic(u32),
    /// `${ … }`.
    Parameter,
    Comment,
}

struct Lexer<'a> {
    text: &'a str,
    pos: usize,
    stack: Vec<State>,
    parts: Vec<Part>,
    /// Start of the text not yet copied into `parts`.
    copied: usize,
    /// Here-document delimiters waiting for the end of the current line.
    heredocs: Vec<(String, bool)>,
    /// Whether the next character starts a word (for `#` comments).
    word_start: bool,
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Self {
        Lexer {
            text,
            pos: 0,
            stack: Vec::new(),
            parts: Vec::new(),
            copied: 0,
            heredocs: Vec::new(),
            word_start: true,
        }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn top(&self) -> Option<State> {
        self.stack.last().copied()
    }

    fn run(mut self) -> Result<Template, TemplateError> {
        while self.pos < self.text.len() {
            if self.rest().starts_with("{{") {
                self.placeholder()?;
                continue;
            }
            let c = self.rest().chars().next().unwrap_or('\0');
            let len = c.len_utf8();
            match self.top() {
                None
                | Some(State::CommandSub(_))
                | Some(State::Arithmetic(_))
                | Some(State::Parameter) => self.code(c)?,
                Some(State::Double) => self.double(c)?,
                Some(State::Single) => {
                    if c == '\'' {
                        self.stack.pop();
                    }
                    self.pos += len;
                }
                Some(State::DollarSingle) => {
                    if c == '\\' {
                        self.escape()?;
                    } else {
                        if c == '\'' {
                            self.stack.pop();
                        }
                        self.pos += len;
                    }
                }
                Some(State::Backtick) => {
                    if c == '\\' {
                        self.escape()?;
                    } else {
                        if c == '`' {
                            self.stack.pop();
                        }
                        self.pos += len;
                    }
                }
                Some(State::Comment) => {
                    if c == '\n' {
                        self.stack.pop();
                        self.newline()?;
                    } else {
                        self.pos += len;
                    }
                }
            }
        }
        let end = self.text.len();
        push_text(&mut self.parts, &self.text[self.copied..end]);
        Ok(Template { parts: self.parts })
    }

    /// Shell code: the top level, or inside `$( )`, `$(( ))`, `${ }`.
    fn code(&mut self, c: char) -> Result<(), TemplateError> {
        let start_of_word = self.word_start;
        // Most characters continue a word; the arms below that end one set it again.
        self.word_start = false;
        let rest = self.rest();
        let heredoc_allowed = matches!(self.top(), None | Some(State::CommandSub(_)));
        if matches!(c, '<' | '>' | '(' | ')') && rest[1..].starts_with("\\\n") {
            return Err(joined_by_continuation(c));
        }
        match c {
            '\\' if rest[1..].starts_with('\n') => {
                // A line continuation vanishes before the shell splits words: what follows
                // is at a word start exactly when what preceded was (`\<newline>#` after a
                // space starts a comment).
                self.pos += 2;
                self.word_start = start_of_word;
                return Ok(());
            }
            '\\' => return self.escape(),
            '\'' => self.stack.push(State::Single),
            '"' => self.stack.push(State::Double),
            '`' => self.stack.push(State::Backtick),
            '$' => return self.dollar(),
            '#' if start_of_word && self.top() != Some(State::Parameter) => {
                self.stack.push(State::Comment)
            }
            '<' if rest.starts_with("<<<") => {
                self.pos += 3;
                self.word_start = true;
                return Ok(());
            }
            // In arithmetic `<<` is a shift, not a here-document.
            '<' if rest.starts_with("<<") && heredoc_allowed => return self.heredoc_operator(),
            // bash process substitution parses like `$( )`.
            '<' | '>' if rest[1..].starts_with('(') && heredoc_allowed => {
                self.stack.push(State::CommandSub(0));
                self.pos += 2;
                return Ok(());
            }
            // bash's arithmetic command `(( ))`; a POSIX `( (` subshell is refused the same
            // way, which is only ever too careful.
            '(' if rest.starts_with("((") && start_of_word && self.top().is_none() => {
                self.stack.push(State::Arithmetic(0));
                self.pos += 2;
                return Ok(());
            }
            '(' => match self.stack.last_mut() {
                Some(State::CommandSub(d)) | Some(State::Arithmetic(d)) => *d += 1,
                _ => {}
            },
            ')' => match self.stack.last_mut() {
                Some(State::CommandSub(0)) => {
                    // `$(…)` is part of the word around it: `$(true)#` is one word, and its
                    // `#` is no comment.
                    self.stack.pop();
                    self.pos += 1;
                    return Ok(());
                }
                Some(State::Arithmetic(0)) if rest.starts_with("))") => {
                    self.stack.pop();
                    self.pos += 2;
                    return Ok(());
                }
                Some(State::CommandSub(d)) | Some(State::Arithmetic(d)) => *d = d.saturating_sub(1),
                _ => {}
            },
            '}' if self.top() == Some(State::Parameter) => {
                self.stack.pop();
            }
            '\n' => {
                self.pos += 1;
                self.word_start = true;
                return self.newline();
            }
            _ => {}
        }
        if c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>') {
            self.word_start = true;
        }
        self.pos += c.len_utf8();
        Ok(())
    }

    fn double(&mut self, c: char) -> Result<(), TemplateError> {
        match c {
            '\\' => self.escape(),
            '"' => {
                self.stack.pop();
                self.pos += 1;
                Ok(())
            }
            '`' => {
                self.stack.push(State::Backtick);
                self.pos += 1;
                Ok(())
            }
            '$' => self.dollar(),
            _ => {
                self.pos += c.len_utf8();
                Ok(())
            }
        }
    }

    /// A backslash: it escapes the next character, which must not be a placeholder (the
    /// escape would apply to the first character of the quoted value).
    fn escape(&mut self) -> Result<(), TemplateError> {
        let after = &self.rest()[1..];
        if after.starts_with("{{") {
            return Err(refuse(format!(
                "a placeholder right after a backslash: {UNSAFE_HINT}"
            )));
        }
        let next = after.chars().next().map_or(0, char::len_utf8);
        self.pos += 1 + next;
        Ok(())
    }

    /// `$`: the start of an expansion, or a plain dollar.
    fn dollar(&mut self) -> Result<(), TemplateError> {
        let rest = self.rest();
        if rest[1..].starts_with("\\\n") {
            return Err(joined_by_continuation('$'));
        }
        if rest.starts_with("$(") && rest[2..].starts_with("\\\n") {
            return Err(joined_by_continuation('('));
        }
        if rest[1..].starts_with("{{") {
            return Err(refuse(format!(
                "a placeholder right after `$` would be expanded by the shell: {UNSAFE_HINT}"
            )));
        }
        let in_double = self.top() == Some(State::Double);
        if rest.starts_with("$((") {
            self.stack.push(State::Arithmetic(0));
            self.pos += 3;
        } else if rest.starts_with("$(") {
            self.stack.push(State::CommandSub(0));
            self.pos += 2;
        } else if rest.starts_with("${") {
            self.stack.push(State::Parameter);
            self.pos += 2;
        } else if rest.starts_with("$'") && !in_double {
            self.stack.push(State::DollarSingle);
            self.pos += 2;
        } else if rest.starts_with("$\"") && !in_double {
            // bash's locale-translated string behaves as double quotes.
            self.stack.push(State::Double);
            self.pos += 2;
        } else {
            self.pos += 1;
        }
        Ok(())
    }

    /// `<<` or `<<-` and its delimiter word; the body begins after the current line.
    fn heredoc_operator(&mut self) -> Result<(), TemplateError> {
        self.pos += 2;
        let strip_tabs = self.rest().starts_with('-');
        if strip_tabs {
            self.pos += 1;
        }
        while self.rest().starts_with([' ', '\t']) {
            self.pos += 1;
        }
        // The delimiter is a shell word: quotes and backslashes join and escape parts of it
        // (`<<"E F"` ends at a line `E F`), and they are removed from the line that ends it.
        let mut delimiter = String::new();
        let mut quote: Option<char> = None;
        while let Some(c) = self.rest().chars().next() {
            if self.rest().starts_with("{{") {
                return Err(refuse(format!(
                    "a placeholder in a here-document delimiter: {UNSAFE_HINT}"
                )));
            }
            let len = c.len_utf8();
            match (quote, c) {
                (None, c)
                    if c.is_whitespace()
                        || matches!(c, ';' | '&' | '|' | '<' | '>' | '(' | ')') =>
                {
                    break;
                }
                (None, '\'' | '"') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, '\\') | (Some('"'), '\\') => {
                    let next = self.rest()[1..].chars().next();
                    if let Some(n) = next {
                        delimiter.push(n);
                        self.pos += n.len_utf8();
                    }
                }
                (_, c) => delimiter.push(c),
            }
            self.pos += len;
        }
        if !delimiter.is_empty() {
            self.heredocs.push((delimiter, strip_tabs));
        }
        Ok(())
    }

    /// After a newline in shell code: skip the bodies of pending here-documents, refusing
    /// any placeholder inside them.
    fn newline(&mut self) -> Result<(), TemplateError> {
        if self.top() == Some(State::Comment) {
            self.stack.pop();
        }
        for (delimiter, strip_tabs) in std::mem::take(&mut self.heredocs) {
            loop {
                let rest = self.rest();
                if rest.is_empty() {
                    return Ok(());
                }
                let line_len = rest.find('\n').map_or(rest.len(), |i| i + 1);
                let line = &rest[..line_len];
                if line.contains("{{") {
                    return Err(refuse(format!(
                        "a placeholder inside a here-document: {UNSAFE_HINT}"
                    )));
                }
                self.pos += line_len;
                let content = line.trim_end_matches('\n');
                let content = if strip_tabs {
                    content.trim_start_matches('\t')
                } else {
                    content
                };
                if content == delimiter {
                    break;
                }
            }
        }
        Ok(())
    }

    fn placeholder(&mut self) -> Result<(), TemplateError> {
        let (placeholder, len) = parse_placeholder(self.rest())?;
        let ctx = match self.stack.as_slice() {
            [] => Context::Unquoted,
            [State::Double] => Context::DoubleQuoted,
            [State::Single] => Context::SingleQuoted,
            nested => {
                let place = match nested
                    .iter()
                    .rev()
                    .find(|s| !matches!(s, State::Double | State::Single))
                {
                    Some(State::Backtick) => "inside backticks",
                    Some(State::CommandSub(_)) => "inside $( )",
                    Some(State::Arithmetic(_)) => "inside $(( ))",
                    Some(State::Parameter) => "inside ${ }",
                    Some(State::DollarSingle) => "inside $' '",
                    Some(State::Comment) => "inside a comment",
                    _ => "in nested quotes",
                };
                return Err(refuse(format!(
                    "{placeholder} stands {place}: {UNSAFE_HINT}"
                )));
            }
        };
        push_text(&mut self.parts, &self.text[self.copied..self.pos]);
        self.parts.push(Part::Hole(placeholder, ctx));
        self.pos += len;
        self.copied = self.pos;
        self.word_start = false;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn arg(n: &str) -> Placeholder {
        Placeholder::Argument(n.into())
    }

    fn contexts(text: &str) -> Vec<(Placeholder, Context)> {
        Template::shell(text)
            .unwrap()
            .placeholders()
            .map(|(p, c)| (p.clone(), c))
            .collect()
    }

    #[test]
    fn placeholders_are_found_in_each_context() {
        use Context::*;
        let table: &[(&str, &[Context])] = &[
            ("echo {{ a }}", &[Unquoted]),
            ("echo {{a}}", &[Unquoted]),
            ("echo --x={{ a }}", &[Unquoted]),
            ("echo \"{{ a }}\"", &[DoubleQuoted]),
            ("echo \"x {{ a }} y\"", &[DoubleQuoted]),
            ("echo '{{ a }}'", &[SingleQuoted]),
            ("echo 'it''s {{ a }}'", &[SingleQuoted]),
            (
                "echo {{ a }} \"{{ a }}\" '{{ a }}'",
                &[Unquoted, DoubleQuoted, SingleQuoted],
            ),
            ("echo \"$HOME\" {{ a }}", &[Unquoted]),
            ("echo \"$(date)\" {{ a }}", &[Unquoted]),
            ("echo ${HOME} {{ a }}", &[Unquoted]),
            ("echo $((1+2)) {{ a }}", &[Unquoted]),
            ("echo `date` {{ a }}", &[Unquoted]),
            ("echo \\' {{ a }}", &[Unquoted]),
            ("echo \"\\\"\" {{ a }}", &[Unquoted]),
            ("echo a#b {{ a }}", &[Unquoted]),
            ("cat <<EOF\nbody\nEOF\necho {{ a }}", &[Unquoted]),
            ("cat <<-'EOF'\n\tbody $x\n\tEOF\necho {{ a }}", &[Unquoted]),
            ("cat <<< x; echo {{ a }}", &[Unquoted]),
            ("cat <<\"E F\"\nbody\nE F\necho {{ a }}", &[Unquoted]),
            ("cat <<E\\ F\nbody\nE F\necho {{ a }}", &[Unquoted]),
            ("# a comment\necho {{ a }}", &[Unquoted]),
            ("echo $(echo \"(\") {{ a }}", &[Unquoted]),
            ("echo {{a}}{{b}}", &[Unquoted, Unquoted]),
            // Regression: `)` closing `$( )` does not end the word, so this `#` is literal and
            // the quote after it is real.
            ("printf '%s' $(true)#'\n{{ a }}'", &[SingleQuoted]),
            ("echo `true`#'{{ a }}'", &[SingleQuoted]),
            ("echo ${x}#'{{ a }}'", &[SingleQuoted]),
            ("echo $(( 1 << 2 ))\necho \"\n2\n{{ a }}\"", &[DoubleQuoted]),
            ("echo \\\n{{ a }}", &[Unquoted]),
            ("(echo {{ a }})", &[Unquoted]),
        ];
        for (text, want) in table {
            let got: Vec<Context> = contexts(text).into_iter().map(|(_, c)| c).collect();
            assert_eq!(&got, want, "{text:?}");
        }
    }

    #[test]
    fn unsafe_contexts_are_refused_with_a_fix() {
        let table: &[(&str, &str)] = &[
            ("echo `echo {{ a }}`", "inside backticks"),
            ("echo \"`echo {{ a }}`\"", "inside backticks"),
            ("echo $(echo {{ a }})", "inside $( )"),
            ("echo \"$(echo '{{ a }}')\"", "inside $( )"),
            ("echo $(( {{ a }} + 1 ))", "inside $(( ))"),
            ("echo ${X:-{{ a }}}", "inside ${ }"),
            ("echo \"${X:-{{ a }}}\"", "inside ${ }"),
            ("echo $'{{ a }}'", "inside $' '"),
            ("echo hi # {{ a }}", "inside a comment"),
            ("cat <<EOF\n{{ a }}\nEOF", "here-document"),
            ("cat <<'EOF'\nx {{ a }}\nEOF", "here-document"),
            ("cat <<{{ a }}\nx\n", "here-document"),
            // Regressions found by tests/it/arguments.rs: quoted delimiters with spaces.
            ("cat <<\"E F\"\n{{ a }}\nE F", "here-document"),
            ("cat <<'E F'{{ a }}", "here-document"),
            ("cat <<'E F'\nE\n{{ a }}\nE F", "here-document"),
            ("echo ${{ a }}", "after `$`"),
            ("echo \"${{ a }}\"", "after `$`"),
            ("echo \\{{ a }}", "backslash"),
            ("echo \"\\{{ a }}\"", "backslash"),
            // Regressions found by tests/it/arguments.rs: a `#` that is or is not a comment.
            ("printf '%s' \\\n#{{ a }}", "inside a comment"),
            (
                "echo $(( 1 << 2 )); echo {{ a }} $(( {{ a }} ))",
                "inside $(( ))",
            ),
            ("cat <(echo {{ a }})", "inside $( )"),
            ("(( x = {{ a }} ))", "inside $(( ))"),
            // Regression found by tests/it/quoting_fuzz.rs: bash joins `$\<newline>'` into `$'`.
            ("echo $\\\n{{ a }}", "line continuation"),
            ("echo \"$\\\n{{ a }}\"", "line continuation"),
            ("cat <\\\n<EOF\n{{ a }}\nEOF", "line continuation"),
            ("echo $(\\\n( 1 ))", "line continuation"),
        ];
        for (text, why) in table {
            let err = Template::shell(text).unwrap_err().message;
            assert!(err.contains(why), "{text:?}: {err}");
            // Every refusal says how to fix it.
            let hint = err.contains("exec:") && err.contains("environment variable")
                || err.contains("on one line");
            assert!(hint, "{text:?}: {err}");
        }
    }

    #[test]
    fn placeholder_forms() {
        assert_eq!(contexts("x {{ .Arguments.host }}")[0].0, arg("host"));
        assert_eq!(
            contexts("x {{ .CurrentEntity.Names }}")[0].0,
            Placeholder::Entity("Names".into())
        );
        assert_eq!(
            contexts("x {{ server.hostname }}")[0].0,
            Placeholder::Entity("hostname".into())
        );
        assert_eq!(
            contexts("x {{ a.b.c }}")[0].0,
            Placeholder::Entity("b.c".into())
        );
        for bad in [
            "x {{ }}",
            "x {{.Names}}",
            "x {{ a b }}",
            "x {{ a",
            "x {{ $(id) }}",
            "x {{ a. }}",
        ] {
            assert!(Template::shell(bad).is_err(), "{bad}");
            assert!(Template::literal(bad).is_err(), "{bad}");
        }
    }

    /// Every context × every metacharacter, checked by the quoting function alone.
    #[test]
    fn quoting_table() {
        use Context::*;
        let table: &[(&str, Context, &str)] = &[
            ("plain", Unquoted, "'plain'"),
            ("", Unquoted, "''"),
            ("it's", Unquoted, "'it'\\''s'"),
            ("a\"b", Unquoted, "'a\"b'"),
            ("$(id)", Unquoted, "'$(id)'"),
            ("`id`", Unquoted, "'`id`'"),
            ("a\\b", Unquoted, "'a\\b'"),
            ("a\nb", Unquoted, "'a\nb'"),
            ("plain", DoubleQuoted, "plain"),
            ("a\"b", DoubleQuoted, "a\\\"b"),
            ("$(id)", DoubleQuoted, "\\$(id)"),
            ("`id`", DoubleQuoted, "\\`id\\`"),
            ("a\\b", DoubleQuoted, "a\\\\b"),
            ("it's", DoubleQuoted, "it's"),
            ("it's", SingleQuoted, "''it'\\''s''"),
            ("$(id)", SingleQuoted, "''$(id)''"),
            ("", SingleQuoted, "''''"),
            ("a'b\"c", Literal, "a'b\"c"),
        ];
        for (value, ctx, want) in table {
            let mut out = String::new();
            quote_into(&mut out, value, *ctx);
            assert_eq!(&out, want, "{value:?} {ctx:?}");
        }
    }

    /// The same metacharacters through a real shell: what the command prints is the value.
    #[test]
    fn real_sh_reads_back_every_metacharacter_in_every_context() {
        let value =
            "' \" ` $( ) ${ } $IFS ; | & && > < * ? ~ # ! \\ \\\\ -n -- \n\t\r {{ v }} é 😀";
        for template in [
            "printf '%s' {{ v }}",
            "printf '%s' \"{{ v }}\"",
            "printf '%s' '{{ v }}'",
            "printf '%s' \"a{{ v }}b\"",
            "printf '%s' 'a{{ v }}b'",
            "printf '%s' a{{ v }}b{{ v }}",
        ] {
            let t = Template::shell(template).unwrap();
            let script = t.render(&|_| Some(value.to_string()));
            let out = Command::new("/bin/sh")
                .arg("-c")
                .arg(&script)
                .output()
                .unwrap();
            let got = String::from_utf8(out.stdout).unwrap();
            let want = if template.contains("a{{") {
                if template.contains("b{{") {
                    format!("a{value}b{value}")
                } else {
                    format!("a{value}b")
                }
            } else {
                value.to_string()
            };
            assert_eq!(got, want, "{template}");
        }
    }

    #[test]
    fn one_pass_never_expands_a_value_again() {
        let t = Template::shell("echo {{ a }} {{ b }}").unwrap();
        let s = t.render(&|p| match p {
            Placeholder::Argument(n) if n == "a" => Some("{{ b }}".into()),
            _ => Some("B".into()),
        });
        assert_eq!(s, "echo '{{ b }}' 'B'");
    }

    #[test]
    fn literal_templates_substitute_as_is() {
        let t = Template::literal("--host={{ host }}").unwrap();
        assert_eq!(t.render(&|_| Some("a b'c".into())), "--host=a b'c");
        assert!(!Template::literal("plain").unwrap().has_placeholders());
    }

    #[test]
    fn text_without_placeholders_renders_unchanged() {
        for text in [
            "echo \"it's\" | tr a b",
            "cat <<EOF\n$x\nEOF",
            "echo ${X:-y} `date` # c",
            "a\\",
        ] {
            assert_eq!(
                Template::shell(text).unwrap().render(&|_| None),
                *text,
                "{text:?}"
            );
        }
    }
}
