//! Argument types: parsing a declared `type:` at config load, and the one rule per type that a
//! value must follow. This module owns the type names and the per-type checks with their English
//! descriptions, which the StartAction errors and ValidateArgumentType both use; `pattern`
//! compiles the `regex:` types (once, at load) and `formats` checks the types with a syntax of
//! their own (email, url, datetime). It is pure: no I/O, no logging, no knowledge of defaults,
//! `rejectNull`, entities, substitution or quoting. Its error messages describe the rule a value
//! broke and never contain the value itself, because a value may be a password and messages end
//! up in logs and API answers.
//!
//! Every type refuses a NUL byte (no command line or environment variable can carry one) and any
//! value longer than [`MAX_VALUE_BYTES`]. The rules are ASCII-exact unless the type's name says
//! unicode, so look-alikes such as fullwidth letters or Arabic digits do not pass an ASCII type.

use std::collections::HashSet;

use super::formats::{self, check_datetime, check_email, check_url};
use super::pattern::{BadPattern, REGEX_PREFIX};
pub use super::pattern::{MATCH_BUDGET, Pattern};

/// The longest value any type accepts, in bytes. Values end up on a command line or in the
/// environment, where Linux allows at most 128 KiB per string; 64 KiB leaves room for the rest
/// of the command and keeps a single start's memory small on a board.
pub const MAX_VALUE_BYTES: usize = 64 * 1024;

/// Every type name as written in a config, in the order the error messages list them.
/// `regex:PATTERN` stands for the whole family of pattern types.
pub const TYPE_NAMES: &[&str] = &[
    "ascii",
    "ascii_identifier",
    "ascii_sentence",
    "unicode_identifier",
    "int",
    "email",
    "url",
    "datetime",
    "regex:PATTERN",
    "checkbox",
    "checklist",
    "password",
    "raw_string_multiline",
    "very_dangerous_raw_string",
    "confirmation",
    "html",
];

/// The rule a value broke. Its `Display` is the rule in English and never holds the value
/// (a value may be a password); StartAction's errors and ValidateArgumentType say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Broken {
    /// Over [`MAX_VALUE_BYTES`].
    TooLong,
    Nul,
    Empty,
    Ascii,
    AsciiIdentifier,
    AsciiSentence,
    UnicodeIdentifier,
    Int,
    IntRange,
    Checkbox,
    /// One of the declared choices, not named (ChoiceOnly, checkbox, checklist).
    Choice,
    /// One of these choices, named (choices winning over a type).
    OneOf(Vec<String>),
    ChecklistEmptyItem,
    ChecklistItem,
    ChecklistChoice,
    ChecklistTwice,
    /// Longer than its pattern is ever matched against.
    PatternLength(usize),
    /// Its pattern, as declared.
    Pattern(String),
    Email(formats::Email),
    Url(formats::Url),
    Datetime(formats::Datetime),
    /// `rejectNull` and no default.
    Required,
    /// An entity-fed argument with no instance of its type loaded.
    NoInstances(String),
    /// A value sent for an argument only a file trigger fills.
    TriggerOnly,
    /// A name the action does not declare.
    Undeclared,
    /// The same name twice in one request.
    Twice,
    /// Too long with the other pattern arguments of the action together.
    PatternBudget,
    /// A free-text value starting with `-`, which a program would read as an option.
    LeadingDash,
    /// A free-text value that is `.` or `..`: a program given it as a word reads the
    /// directory it works in or the one above.
    Dots,
    /// An identifier (or a file trigger's name) holding `..`: an expansion of the command can
    /// leave just that of it (`${NAME%.conf}` of `...conf`).
    DoubleDot,
    /// `.` or a `..` component in a path the command builds (`/srv/apps/{{ app }}/run.py`).
    PathUp,
    /// An absolute path where it starts a path the command continues (`{{ dir }}/run.sh`).
    PathAbsolute,
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Broken::TooLong => write!(f, "must be at most {MAX_VALUE_BYTES} bytes long"),
            Broken::Nul => f.write_str("must not contain a NUL byte"),
            Broken::Empty => f.write_str("must not be empty"),
            Broken::Ascii => f.write_str("must be letters and digits only (A-Z, a-z, 0-9)"),
            Broken::AsciiIdentifier => f.write_str(
                "must be letters, digits, dots, underscores and hyphens only (A-Z, a-z, 0-9, \
                 '.', '_', '-')",
            ),
            Broken::AsciiSentence => f.write_str(
                "must be letters, digits, spaces, commas, dots, underscores and hyphens only \
                 (A-Z, a-z, 0-9, ' ', ',', '.', '_', '-')",
            ),
            Broken::UnicodeIdentifier => f.write_str(
                "must be letters and digits of any script, dots, underscores and hyphens only",
            ),
            Broken::Int => {
                f.write_str("must be a whole number: an optional '-' followed by the digits 0-9")
            }
            Broken::IntRange => f.write_str(
                "must be a whole number between -9223372036854775808 and 9223372036854775807",
            ),
            Broken::Checkbox => f.write_str("must be true, false, 1 or 0"),
            Broken::Choice => f.write_str("must be one of the declared choices"),
            Broken::OneOf(choices) => {
                write!(f, "must be one of the choices: {}", choices.join(", "))
            }
            Broken::ChecklistEmptyItem => {
                f.write_str("must be a comma-separated list with no empty items")
            }
            Broken::ChecklistItem => f.write_str(
                "every item must be letters, digits, spaces, dots, underscores and hyphens only",
            ),
            Broken::ChecklistChoice => {
                f.write_str("every item must be one of the declared choices")
            }
            Broken::ChecklistTwice => f.write_str("must not list the same item twice"),
            Broken::PatternLength(longest) => write!(
                f,
                "must be at most {longest} bytes long (the most its pattern is matched against)"
            ),
            Broken::Pattern(source) => write!(f, "must match the pattern {source} as a whole"),
            Broken::Email(e) => write!(f, "{e}"),
            Broken::Url(e) => write!(f, "{e}"),
            Broken::Datetime(e) => write!(f, "{e}"),
            Broken::Required => f.write_str("is required: give a value (it has no default)"),
            Broken::NoInstances(kind) => write!(
                f,
                "has no choices: no instance of the entity type {kind:?} is loaded"
            ),
            Broken::TriggerOnly => {
                f.write_str("is filled in by the action's file trigger and cannot be given by hand")
            }
            Broken::Undeclared => f.write_str("this action declares no such argument"),
            Broken::Twice => f.write_str("given more than once"),
            Broken::PatternBudget => f.write_str(
                "is too long together with the other pattern arguments of this action: send \
                 shorter values",
            ),
            Broken::LeadingDash => f.write_str(
                "must not start with '-': the command's program would read it as an option of \
                 its own (if the command takes such values after `--`, the action's author may \
                 allow them with `allowLeadingDash: true` on this argument)",
            ),
            Broken::Dots => f.write_str(
                "must not be `.` or `..`: a program given it reads the directory it works in or \
                 the one above it (`cd /srv/cache && find {{ … }} -delete`, `tar -C /srv \
                 {{ … }}`), not one inside it",
            ),
            Broken::DoubleDot => f.write_str(
                "must not hold `..`: a command that cuts a suffix or a prefix off it in a path \
                 (`/srv/cache/${…%.conf}` of `...conf`) would be left with `..`, the directory \
                 above",
            ),
            Broken::PathUp => f.write_str(
                "must not be `.` or hold a `..` path component: the command puts it in a path \
                 (`/srv/{{ … }}/…`), where it would lead out of the directory meant and \
                 pick other files or code",
            ),
            Broken::PathAbsolute => f.write_str(
                "must not be an absolute path: it starts a path the command continues \
                 (`{{ dir }}/…`), where it would pick any file on the system",
            ),
        }
    }
}

impl std::error::Error for Broken {}

/// A declared argument's type, parsed and (for regex:) compiled at config load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgType {
    /// No `type:` and no `choices:`: checked as `ascii`, OliveTin's default (the config
    /// loader warns), and shown to clients as declared, with no type.
    Untyped,
    Ascii,
    AsciiIdentifier,
    AsciiSentence,
    UnicodeIdentifier,
    Int,
    Email,
    Url,
    Datetime,
    Regex(Pattern),
    Checkbox,
    /// An OliveTin extension that real configs use: several choices, comma-separated.
    Checklist,
    Password,
    RawStringMultiline,
    VeryDangerousRawString,
    Confirmation,
    Html,
    /// No `type:` but `choices:`: the value must be one of them.
    ChoiceOnly,
}

impl ArgType {
    /// Parses a declared type at config load. `""` with choices is ChoiceOnly; `""` without
    /// choices is Untyped, checked as ascii (OliveTin's default; the caller warns). Unknown names → Err with a
    /// message listing the valid names. `regex:PATTERN` compiles `\A(?:PATTERN)\z` (the whole
    /// value must match; see [`Pattern::new`]); an invalid pattern → Err with the regex error
    /// and a hint. Names are matched
    /// exactly (lower case, as OliveTin does).
    ///
    /// Note for configs ported from OliveTin: its `regex:` types match anywhere in the value
    /// unless the pattern anchors itself; here the whole value must match, which is stricter.
    /// The error messages do not repeat `text`: the config validator reports where it stands,
    /// and ValidateArgumentType should not echo arbitrary request text back.
    pub fn parse(text: &str, has_choices: bool) -> Result<ArgType, BadType> {
        if let Some(pattern) = text.strip_prefix(REGEX_PREFIX) {
            return Pattern::new(pattern)
                .map(ArgType::Regex)
                .map_err(BadType::Pattern);
        }
        if text.is_empty() {
            return Ok(if has_choices {
                ArgType::ChoiceOnly
            } else {
                ArgType::Untyped
            });
        }
        simple_type(text).ok_or_else(|| BadType::Unknown(meant(text)))
    }

    /// The type as written in a config: `"ascii"`, `"regex:…"`, or `""` for Untyped and
    /// ChoiceOnly. Clients get this as the argument's type.
    pub fn name(&self) -> &str {
        match self {
            ArgType::Untyped | ArgType::ChoiceOnly => "",
            ArgType::Ascii => "ascii",
            ArgType::AsciiIdentifier => "ascii_identifier",
            ArgType::AsciiSentence => "ascii_sentence",
            ArgType::UnicodeIdentifier => "unicode_identifier",
            ArgType::Int => "int",
            ArgType::Email => "email",
            ArgType::Url => "url",
            ArgType::Datetime => "datetime",
            ArgType::Regex(pattern) => pattern.declared(),
            ArgType::Checkbox => "checkbox",
            ArgType::Checklist => "checklist",
            ArgType::Password => "password",
            ArgType::RawStringMultiline => "raw_string_multiline",
            ArgType::VeryDangerousRawString => "very_dangerous_raw_string",
            ArgType::Confirmation => "confirmation",
            ArgType::Html => "html",
        }
    }

    /// confirmation and html: display only, no value, never substituted or put in the
    /// environment.
    pub fn is_display_only(&self) -> bool {
        matches!(self, ArgType::Confirmation | ArgType::Html)
    }

    /// The types whose values a guest composes freely and may start with `-`, which a program
    /// reads as an option: these refuse a leading `-` unless the argument allows it. Not:
    /// int (its sign is the number's own, and `-5` is no option that runs anything), regex
    /// (the author's pattern says exactly what may start a value), checkbox and the
    /// choice-made types (the author's own values), and the any-text types (password,
    /// raw_string_multiline, very_dangerous_raw_string), whose name already says any text
    /// and where a password may well start with `-`. ascii, untyped and datetime cannot start
    /// with `-` anyway; a url needs its scheme first.
    pub fn is_free_text(&self) -> bool {
        matches!(
            self,
            ArgType::AsciiIdentifier
                | ArgType::AsciiSentence
                | ArgType::UnicodeIdentifier
                | ArgType::Email
                | ArgType::Url
                | ArgType::Checklist
        )
    }

    /// password: never logged, never shown back, never persisted.
    pub fn is_secret(&self) -> bool {
        matches!(self, ArgType::Password)
    }

    /// Checks a value against the type alone. Choices are the caller's job ("choices always
    /// win over type"), except for the types whose rule is defined by choices: ChoiceOnly,
    /// checklist, and checkbox when it declares choices. Returns Ok(the normalized value) or
    /// Err(a short English description of the rule the value broke, never the value).
    ///
    /// Meant for non-empty values: the caller applies `default` and `rejectNull` first. An
    /// empty value gets the rule as written, so the types whose rule needs at least one
    /// character refuse it and the any-text types accept it.
    pub fn check(&self, value: &str, choices: &[&str]) -> Result<String, Broken> {
        self.check_with(value, choices, Dash::Refuse)
    }

    /// [`ArgType::check`] with the argument's choice about a leading `-` (its
    /// `allowLeadingDash`). With [`Dash::Refuse`], a value of a free-text type (see
    /// [`ArgType::is_free_text`]) that starts with `-` is refused before anything else is
    /// looked at: the value fills one word of a command line, and the program there reads
    /// a word starting with `-` as an option (`ssh -oProxyCommand=…` runs a command). Quoting
    /// cannot help, so the type does.
    pub fn check_with(&self, value: &str, choices: &[&str], dash: Dash) -> Result<String, Broken> {
        // A checklist's items are the author's own when it declares choices.
        let free = match self {
            ArgType::Checklist => choices.is_empty(),
            other => other.is_free_text(),
        };
        if free {
            super::leading_dash(value, dash)?;
        }
        // Each item of a free checklist is one word to the program that splits it out (`tr ,
        // '\0' | xargs -0 tar czf b.tgz`): an item is held to the same rule, after the blanks
        // a shell's split or `read` drops.
        if *self == ArgType::Checklist && choices.is_empty() {
            for item in value.split(',') {
                super::leading_dash(item.trim_start_matches([' ', '\t']), dash)?;
            }
        }
        if value.len() > MAX_VALUE_BYTES {
            return Err(Broken::TooLong);
        }
        if value.contains('\0') {
            return Err(Broken::Nul);
        }
        match self {
            ArgType::Untyped | ArgType::Ascii => {
                every_char(value, |c| c.is_ascii_alphanumeric(), Broken::Ascii)
            }
            ArgType::AsciiIdentifier => {
                double_dot(value)?;
                every_char(value, is_ascii_identifier_char, Broken::AsciiIdentifier)
            }
            ArgType::AsciiSentence => {
                every_char(value, is_ascii_sentence_char, Broken::AsciiSentence)
            }
            // char::is_alphanumeric is Unicode Alphabetic or Numeric. It refuses format
            // characters (zero-width space, direction overrides) and most combining marks,
            // so a decomposed "e" + U+0301 is refused while the precomposed "é" passes.
            ArgType::UnicodeIdentifier => double_dot(value).and_then(|()| {
                every_char(
                    value,
                    |c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'),
                    Broken::UnicodeIdentifier,
                )
            }),
            ArgType::Int => check_int(value),
            // Each of these syntaxes needs at least one character.
            ArgType::Email | ArgType::Url | ArgType::Datetime if value.is_empty() => {
                Err(Broken::Empty)
            }
            ArgType::Email => check_email(value).map_err(Broken::Email),
            ArgType::Url => check_url(value).map_err(Broken::Url),
            ArgType::Datetime => check_datetime(value).map_err(Broken::Datetime),
            ArgType::Regex(pattern) => {
                if value.len() > pattern.longest() {
                    return Err(Broken::PatternLength(pattern.longest()));
                }
                if pattern.is_match(value) {
                    Ok(value.to_owned())
                } else {
                    // The pattern is config text, not the value, and it is the rule.
                    Err(Broken::Pattern(pattern.source().to_string()))
                }
            }
            ArgType::Checkbox => check_checkbox(value, choices),
            ArgType::Checklist => check_checklist(value, choices),
            // Any text: the quoting of the substitution, not the type, keeps these safe.
            ArgType::Password | ArgType::RawStringMultiline | ArgType::VeryDangerousRawString => {
                Ok(value.to_owned())
            }
            // The caller never substitutes these; there is nothing to check.
            ArgType::Confirmation | ArgType::Html => Ok(value.to_owned()),
            ArgType::ChoiceOnly => check_choice(value, choices),
        }
    }
}

/// ValidateArgumentType: the type's own rule alone. Ok → (true, ""); broken →
/// (false, why); unknown type name → (false, a description saying the type is unknown and
/// listing the known ones).
///
/// There are no choices here, so `""` means ascii (as at config load), checkbox takes the
/// true/false/1/0 rule and checklist takes its no-choices rule. An empty value gets the rule
/// as written (ascii refuses it, as OliveTin does): whether an argument may be left empty
/// depends on its `default` and `rejectNull`, which this call does not know. datetime values
/// without seconds are valid, as they are at execution time.
///
/// A `regex:` type is not compiled from a request: a pattern chosen by the client could hold
/// the event loop for seconds. Such a value is checked against its declared argument
/// instead ([`REGEX_FROM_REQUEST`] says how).
pub fn validate_type(type_text: &str, value: &str) -> (bool, String) {
    if type_text.starts_with(REGEX_PREFIX) {
        return (false, REGEX_FROM_REQUEST.to_owned());
    }
    match ArgType::parse(type_text, false) {
        Err(unknown) => (false, unknown.to_string()),
        Ok(t) => match t.check(value, &[]) {
            Ok(_) => (true, String::new()),
            Err(why) => (false, why.to_string()),
        },
    }
}

/// Whether an argument's values may start with `-` (its `allowLeadingDash`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dash {
    /// A free-text value starting with `-` is refused: the default.
    #[default]
    Refuse,
    /// The author put the value where no option can be (after `--`, or as `--opt={{ x }}`).
    Allow,
}

/// Why ValidateArgumentType does not check a `regex:` type it is sent.
pub const REGEX_FROM_REQUEST: &str = "a regex: type is checked only against the argument that \
     declares it: send bindingId and argumentName with the value instead of type";

fn simple_type(name: &str) -> Option<ArgType> {
    Some(match name {
        "ascii" => ArgType::Ascii,
        "ascii_identifier" => ArgType::AsciiIdentifier,
        "ascii_sentence" => ArgType::AsciiSentence,
        "unicode_identifier" => ArgType::UnicodeIdentifier,
        "int" => ArgType::Int,
        "email" => ArgType::Email,
        "url" => ArgType::Url,
        "datetime" => ArgType::Datetime,
        "checkbox" => ArgType::Checkbox,
        "checklist" => ArgType::Checklist,
        "password" => ArgType::Password,
        "raw_string_multiline" => ArgType::RawStringMultiline,
        "very_dangerous_raw_string" => ArgType::VeryDangerousRawString,
        "confirmation" => ArgType::Confirmation,
        "html" => ArgType::Html,
        _ => return None,
    })
}

/// Why a declared `type:` is not one. Its `Display` never repeats the text (the config
/// validator says where it stands; ValidateArgumentType does not echo request text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadType {
    /// No type has this name; what the author may have meant.
    Unknown(Meant),
    Pattern(BadPattern),
}

/// What an unknown type name may have meant, when it is a known one written otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meant {
    Nothing,
    /// `regex:` in another case or after spaces.
    Regex,
    /// A known type in another case or with spaces around it (a name from the list, not the
    /// text).
    Type(&'static str),
}

impl std::fmt::Display for BadType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadType::Pattern(e) => write!(f, "{e}"),
            BadType::Unknown(meant) => {
                f.write_str("unknown argument type")?;
                match meant {
                    Meant::Nothing => {}
                    Meant::Regex => {
                        f.write_str(" (write regex: in lower case with no space before it)")?
                    }
                    Meant::Type(name) => write!(
                        f,
                        " (type names are lower case with no spaces: did you mean {name}?)"
                    )?,
                }
                write!(
                    f,
                    "; the known types are {}, or no type with choices",
                    TYPE_NAMES.join(", ")
                )
            }
        }
    }
}

impl std::error::Error for BadType {}

/// What an unknown type name may have meant.
fn meant(text: &str) -> Meant {
    let folded = text.trim().to_ascii_lowercase();
    if folded.starts_with("regex:") {
        return Meant::Regex;
    }
    let name = TYPE_NAMES.iter().find(|n| **n == folded);
    match (simple_type(&folded), name) {
        (Some(_), Some(name)) => Meant::Type(name),
        _ => Meant::Nothing,
    }
}

fn every_char(value: &str, allowed: impl Fn(char) -> bool, rule: Broken) -> Result<String, Broken> {
    if value.is_empty() {
        Err(Broken::Empty)
    } else if value.chars().all(allowed) {
        Ok(value.to_owned())
    } else {
        Err(rule)
    }
}

/// The identifiers' rule for `..` (`Broken::DoubleDot`); a file trigger's name is held to it
/// too (`arguments::settle`).
pub fn double_dot(value: &str) -> Result<(), Broken> {
    if value.contains("..") {
        return Err(Broken::DoubleDot);
    }
    Ok(())
}

fn is_ascii_identifier_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

fn is_ascii_sentence_char(c: char) -> bool {
    is_ascii_identifier_char(c) || matches!(c, ' ' | ',')
}

/// An optional `-`, ASCII digits, and the number fits in i64. Leading zeros and `-0` are
/// accepted, and the value is passed on as written: a script may want `007` as typed, and
/// rewriting it would make the value the command sees differ from the one the user entered.
fn check_int(value: &str) -> Result<String, Broken> {
    let digits = value.strip_prefix('-').unwrap_or(value);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(if value.is_empty() {
            Broken::Empty
        } else {
            Broken::Int
        });
    }
    // Only the sign and digits reach here (Rust would also accept a leading '+'), so the only
    // way to fail is being out of range.
    match value.parse::<i64>() {
        Ok(_) => Ok(value.to_owned()),
        Err(_) => Err(Broken::IntRange),
    }
}

/// Decisions: with choices declared, the value must be one of them ("choices always win over
/// type", the author named every value the command may see). Without choices,
/// `true`, `false`, `1` or `0`; true and false in any letter case (`True` from a YAML-minded
/// client is still clearly a boolean), normalized to lower case so the command sees one
/// spelling.
fn check_checkbox(value: &str, choices: &[&str]) -> Result<String, Broken> {
    if !choices.is_empty() {
        return check_choice(value, choices);
    }
    if value == "1" || value == "0" {
        Ok(value.to_owned())
    } else if value.eq_ignore_ascii_case("true") || value.eq_ignore_ascii_case("false") {
        Ok(value.to_ascii_lowercase())
    } else if value.is_empty() {
        Err(Broken::Empty)
    } else {
        Err(Broken::Checkbox)
    }
}

/// A comma-separated list, normalized as written. With choices, every item is one of them;
/// without, every item follows the ascii_sentence rule minus the comma. No empty items (so no
/// leading, trailing or doubled comma, and spaces around items are part of the item) and no
/// item twice, with or without choices. A choice value that itself contains a comma cannot be
/// picked in a checklist.
fn check_checklist(value: &str, choices: &[&str]) -> Result<String, Broken> {
    if value.is_empty() {
        return Err(Broken::Empty);
    }
    // A set keeps the duplicate check linear: a 64 KiB value can hold 32 Ki items.
    let mut seen = HashSet::new();
    for item in value.split(',') {
        if item.is_empty() {
            return Err(Broken::ChecklistEmptyItem);
        }
        if choices.is_empty() {
            if !item.chars().all(|c| c != ',' && is_ascii_sentence_char(c)) {
                return Err(Broken::ChecklistItem);
            }
        } else if !choices.contains(&item) {
            return Err(Broken::ChecklistChoice);
        }
        if !seen.insert(item) {
            return Err(Broken::ChecklistTwice);
        }
    }
    Ok(value.to_owned())
}

fn check_choice(value: &str, choices: &[&str]) -> Result<String, Broken> {
    if choices.contains(&value) {
        Ok(value.to_owned())
    } else {
        Err(Broken::Choice)
    }
}

#[cfg(test)]
mod tests;
