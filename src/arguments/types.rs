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
                every_char(value, is_ascii_identifier_char, Broken::AsciiIdentifier)
            }
            ArgType::AsciiSentence => {
                every_char(value, is_ascii_sentence_char, Broken::AsciiSentence)
            }
            // char::is_alphanumeric is Unicode Alphabetic or Numeric. It refuses format
            // characters (zero-width space, direction overrides) and most combining marks,
            // so a decomposed "e" + U+0301 is refused while the precomposed "é" passes.
            ArgType::UnicodeIdentifier => every_char(
                value,
                |c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'),
                Broken::UnicodeIdentifier,
            ),
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
mod tests {
    use super::*;
    use crate::arguments::fixtures::*;

    // The words clients and docs quote, pinned here.
    const RULE_ASCII: &str = "must be letters and digits only (A-Z, a-z, 0-9)";
    const RULE_INT: &str = "must be a whole number: an optional '-' followed by the digits 0-9";
    const RULE_INT_RANGE: &str =
        "must be a whole number between -9223372036854775808 and 9223372036854775807";
    const RULE_CHECKBOX: &str = "must be true, false, 1 or 0";
    const RULE_EMPTY: &str = "must not be empty";

    fn all_types() -> Vec<ArgType> {
        TYPE_NAMES
            .iter()
            .map(|name| {
                let text = if *name == "regex:PATTERN" {
                    "regex:(?s).*"
                } else {
                    name
                };
                t(text)
            })
            .chain([ArgType::Untyped, ArgType::ChoiceOnly])
            .collect()
    }

    #[test]
    fn ascii() {
        table(
            "ascii",
            &[
                ("a", true),
                ("Z", true),
                ("0", true),
                ("abcXYZ0189", true),
                ("", false),
                (" ", false),
                ("a b", false),
                ("a-b", false),
                ("a_b", false),
                ("a.b", false),
                ("a,b", false),
                ("abc\n", false),
                ("\nabc", false),
                ("{{ x }}", false),
                ("é", false),
            ],
        );
    }

    #[test]
    fn ascii_identifier() {
        table(
            "ascii_identifier",
            &[
                ("a", true),
                ("my-host_01.local", true),
                ("-", true),
                (".", true),
                ("..", true),
                ("-rf", true),
                ("", false),
                ("a b", false),
                ("a,b", false),
                ("a/b", false),
                ("a:b", false),
                ("a@b", false),
                ("a+b", false),
                ("a=b", false),
            ],
        );
    }

    #[test]
    fn ascii_sentence() {
        table(
            "ascii_sentence",
            &[
                ("Hello, world.", true),
                (" ", true),
                (",", true),
                ("a - b_c", true),
                ("", false),
                ("Hello!", false),
                ("a/b", false),
                ("a:b", false),
                ("a\u{A0}b", false),
                ("a\rb", false),
            ],
        );
    }

    #[test]
    fn unicode_identifier() {
        table(
            "unicode_identifier",
            &[
                ("abc", true),
                ("héllo", true),
                ("日本語", true),
                ("Ünïcödé_1.2-3", true),
                ("Привет", true),
                ("٣", true),
                ("ａｂｃ", true),
                ("", false),
                ("a b", false),
                ("a@b", false),
                ("a/b", false),
                ("a\\b", false),
                ("a,b", false),
                ("e\u{301}", false),
                ("\u{301}", false),
                ("a\u{200B}b", false),
                ("a\u{200D}b", false),
                ("a\u{202E}b", false),
                ("a\u{A0}b", false),
                ("a\u{3000}b", false),
                ("😀", false),
            ],
        );
    }

    #[test]
    fn int() {
        table(
            "int",
            &[
                ("0", true),
                ("-0", true),
                ("007", true),
                ("42", true),
                ("-42", true),
                ("9223372036854775807", true),
                ("-9223372036854775808", true),
                ("0009223372036854775807", true),
                ("9223372036854775808", false),
                ("-9223372036854775809", false),
                ("99999999999999999999", false),
                ("-99999999999999999999", false),
                ("", false),
                ("-", false),
                ("--1", false),
                ("+1", false),
                ("1-", false),
                ("1.0", false),
                ("1e3", false),
                ("0x10", false),
                (" 1", false),
                ("1 ", false),
                ("1_000", false),
                ("1,000", false),
                ("٣", false),
                ("１", false),
                ("²", false),
                ("\u{2212}1", false), // Unicode minus sign
            ],
        );
        // Passed on as written, not rewritten to a canonical number.
        assert_eq!(ok(&ArgType::Int, "007"), "007");
        assert_eq!(ok(&ArgType::Int, "-0"), "-0");
        assert_eq!(
            refused(&ArgType::Int, "9223372036854775808"),
            RULE_INT_RANGE
        );
        assert_eq!(refused(&ArgType::Int, "1.5"), RULE_INT);
        assert_eq!(i64::MAX.to_string(), "9223372036854775807");
        assert_eq!(i64::MIN.to_string(), "-9223372036854775808");
    }

    #[test]
    fn checkbox() {
        table(
            "checkbox",
            &[
                ("true", true),
                ("false", true),
                ("1", true),
                ("0", true),
                ("TRUE", true),
                ("False", true),
                ("", false),
                ("yes", false),
                ("no", false),
                ("on", false),
                ("2", false),
                ("-1", false),
                ("01", false),
                (" true", false),
                ("true ", false),
                ("true\n", false),
                ("ｔｒｕｅ", false),
                ("truе", false), // Cyrillic е
                ("t", false),
            ],
        );
        assert_eq!(ok(&ArgType::Checkbox, "TRUE"), "true");
        assert_eq!(ok(&ArgType::Checkbox, "False"), "false");
        assert_eq!(ok(&ArgType::Checkbox, "1"), "1");
        // With choices, the choices are the rule.
        let choices = ["--force", ""];
        assert_eq!(
            ArgType::Checkbox.check("--force", &choices),
            Ok("--force".into())
        );
        assert_eq!(ArgType::Checkbox.check("", &choices), Ok(String::new()));
        assert_eq!(
            ArgType::Checkbox.check("true", &choices),
            Err(Broken::Choice)
        );
        assert_eq!(
            ArgType::Checkbox.check("--FORCE", &choices),
            Err(Broken::Choice)
        );
    }

    #[test]
    fn checklist() {
        let choices = ["a", "b", "c d", "e-f"];
        let check = |value: &str| ArgType::Checklist.check(value, &choices);
        for good in ["a", "a,b", "b,a", "a,b,c d,e-f", "c d"] {
            assert_eq!(check(good), Ok(good.to_owned()), "{good:?}");
        }
        for bad in [
            "", "x", "a,x", "a,a", "b,a,b", "a,,b", ",a", "a,", ",", "a, b", "a ,b", "A", "c",
            "a;b", "a\nb", "a,b\n", "c\u{A0}d",
        ] {
            let why = check(bad).unwrap_err().to_string();
            assert!(!why.is_empty(), "{bad:?}");
        }
        assert_eq!(check("a,a"), Err(Broken::ChecklistTwice));
        assert_eq!(
            Broken::ChecklistTwice.to_string(),
            "must not list the same item twice"
        );
        // Without choices: ascii_sentence items.
        table(
            "checklist",
            &[
                ("one", true),
                ("one,two", true),
                ("two words,x.y_z-1", true),
                (" a, b", true),
                ("", false),
                ("a,a", false),
                ("a,,b", false),
                ("a,", false),
                ("a;b", false),
                ("a/b", false),
                ("é", false),
            ],
        );
        // A long list stays linear and the duplicate is still found at the end.
        let many: Vec<String> = (0..5000).map(|i| format!("i{i}")).collect();
        let mut list = many.join(",");
        ok(&ArgType::Checklist, &list);
        list.push_str(",i0");
        refused(&ArgType::Checklist, &list);
    }

    #[test]
    fn any_text_types() {
        for name in [
            "password",
            "raw_string_multiline",
            "very_dangerous_raw_string",
        ] {
            let ty = t(name);
            for value in [
                "",
                " ",
                "plain",
                "multi\nline\r\ntext",
                "tab\there",
                "$(rm -rf /)",
                "`id`",
                "'; rm -rf / #",
                "\"$HOME\"",
                "{{ other }}",
                "a\u{200B}b\u{202E}c",
                "日本語 😀",
                "\\",
                "\u{1}\u{7f}",
            ] {
                assert_eq!(ok(&ty, value), value, "{name}");
            }
            let meta: String = SHELL_META.iter().collect();
            assert_eq!(ok(&ty, &meta), meta);
            refused(&ty, "\0");
            refused(&ty, "a\0b");
        }
    }

    #[test]
    fn display_only_types() {
        for name in ["confirmation", "html"] {
            let ty = t(name);
            assert!(ty.is_display_only());
            assert!(!ty.is_secret());
            assert_eq!(ok(&ty, "<b>Sure?</b>"), "<b>Sure?</b>");
            assert_eq!(ok(&ty, "1"), "1");
            assert_eq!(ok(&ty, ""), "");
            refused(&ty, "a\0");
        }
    }

    #[test]
    fn choice_only() {
        let ty = ArgType::parse("", true).unwrap();
        assert_eq!(ty, ArgType::ChoiceOnly);
        assert_eq!(ty.name(), "");
        let choices = ["start", "stop", "$(reboot)", ""];
        for good in ["start", "stop", "$(reboot)", ""] {
            assert_eq!(ty.check(good, &choices), Ok(good.to_owned()));
        }
        for bad in [
            "Start",
            "start ",
            " start",
            "sta",
            "startstop",
            "start\n",
            "ｓｔａｒｔ",
        ] {
            assert_eq!(ty.check(bad, &choices), Err(Broken::Choice), "{bad:?}");
        }
        // No choices: nothing is one of them.
        assert_eq!(ty.check("start", &[]), Err(Broken::Choice));
        refused(&ty, "\0");
    }

    /// Types whose rule is a set of ASCII characters (or a syntax built from them), each with
    /// a valid value to put metacharacters and look-alikes into.
    fn ascii_only_types() -> Vec<(ArgType, &'static str)> {
        vec![
            (t("ascii"), "abc"),
            (t("ascii_identifier"), "abc"),
            (t("ascii_sentence"), "abc"),
            (t("int"), "12"),
            (t("datetime"), "2024-01-01T00:00"),
            (t("checkbox"), "true"),
            (t("checklist"), "a,b"),
            (t("regex:[a-z]+"), "abc"),
        ]
    }

    #[test]
    fn ascii_only_types_refuse_every_shell_metacharacter() {
        let mut types = ascii_only_types();
        types.push((t("unicode_identifier"), "abc"));
        for (ty, base) in types {
            ok(&ty, base);
            for m in SHELL_META {
                for value in [
                    m.to_string(),
                    format!("{m}{base}"),
                    format!("{base}{m}"),
                    format!("{}{m}{}", &base[..1], &base[1..]),
                ] {
                    refused(&ty, &value);
                }
            }
            for value in ["$(id)", "`id`", "{{ x }}", "a;b", "${IFS}"] {
                refused(&ty, value);
            }
        }
    }

    #[test]
    fn ascii_only_types_refuse_lookalikes() {
        let mut types = ascii_only_types();
        types.push((ArgType::Email, "a@b.c"));
        types.push((ArgType::Url, "http://h/"));
        for (ty, base) in types {
            for look in LOOKALIKES {
                for value in [look.to_string(), format!("{base}{look}")] {
                    refused(&ty, &value);
                }
            }
        }
    }

    #[test]
    fn no_type_accepts_nul() {
        for ty in all_types() {
            for value in ["\0", "a\0", "\0a", "a\0b"] {
                let choices = [value];
                let why = ty.check(value, &choices).unwrap_err().to_string();
                assert_eq!(why, "must not contain a NUL byte", "{}", ty.name());
            }
        }
    }

    #[test]
    fn length_is_bounded_for_every_type() {
        let at_limit = "a".repeat(MAX_VALUE_BYTES);
        let over = "a".repeat(MAX_VALUE_BYTES + 1);
        for ty in all_types() {
            let choices = [over.as_str()];
            let why = ty.check(&over, &choices).unwrap_err().to_string();
            assert_eq!(why, "must be at most 65536 bytes long", "{}", ty.name());
        }
        for name in ["ascii", "password", "raw_string_multiline", "checklist"] {
            assert_eq!(ok(&t(name), &at_limit).len(), MAX_VALUE_BYTES);
        }
        // Multi-byte characters count in bytes.
        refused(&t("password"), &"é".repeat(MAX_VALUE_BYTES / 2 + 1));
    }

    #[test]
    fn no_error_message_contains_the_value() {
        let marker = "Zq7SECRETvalue9";
        let values = [
            format!("{marker}!"),
            format!("{marker} {marker}"),
            format!("{marker}@"),
            format!("http://{marker} x"),
            format!("{marker}\0"),
            format!("{marker},{marker}"),
            marker.repeat(MAX_VALUE_BYTES / marker.len() + 1),
        ];
        for ty in all_types() {
            for value in &values {
                let choices = ["x"];
                if let Err(why) = ty.check(value, &choices) {
                    let why = why.to_string();
                    assert!(!why.contains(marker), "{}: {why}", ty.name());
                    assert!(!why.contains("SECRET"), "{}: {why}", ty.name());
                }
            }
        }
        // Nor does an unknown type name come back.
        let why = ArgType::parse("Zq7SECRETtype", false)
            .unwrap_err()
            .to_string();
        assert!(!why.contains("SECRET"), "{why}");
    }

    #[test]
    fn parse_names_round_trip() {
        for name in TYPE_NAMES.iter().filter(|n| !n.starts_with("regex:")) {
            let ty = t(name);
            assert_eq!(ty.name(), *name);
            // A declared type stays that type when choices are declared too.
            assert_eq!(ArgType::parse(name, true).unwrap(), ty);
        }
        let untyped = ArgType::parse("", false).unwrap();
        assert_eq!(untyped, ArgType::Untyped);
        assert_eq!(untyped.name(), "");
        // No type checks as ascii.
        assert_eq!(untyped.check("a b", &[]), t("ascii").check("a b", &[]));
        assert_eq!(ArgType::parse("", true).unwrap(), ArgType::ChoiceOnly);
        // One of each name (a sample pattern for regex:PATTERN), plus Untyped and ChoiceOnly.
        assert_eq!(all_types().len(), TYPE_NAMES.len() + 2);
    }

    #[test]
    fn parse_refuses_unknown_names() {
        for bad in [
            "ASCII",
            "Ascii",
            " ascii",
            "ascii ",
            "asci",
            "select",
            "string",
            "text",
            "integer",
            "bool",
            "boolean",
            "number",
            "regex",
            "Regex:a",
            "REGEX:a",
            " regex:a",
            "\0",
            "ascii\n",
            "unicode",
            "raw_string",
        ] {
            let why = ArgType::parse(bad, false).unwrap_err().to_string();
            assert!(why.starts_with("unknown argument type"), "{bad:?}: {why}");
            for name in TYPE_NAMES {
                assert!(why.contains(name), "{bad:?}: {why} lacks {name}");
            }
        }
        let why = ArgType::parse("ASCII", false).unwrap_err().to_string();
        assert!(why.contains("did you mean ascii?"), "{why}");
        let why = ArgType::parse("Regex:a", false).unwrap_err().to_string();
        assert!(why.contains("write regex: in lower case"), "{why}");
        let why = ArgType::parse("select", false).unwrap_err().to_string();
        assert!(!why.contains("did you mean"), "{why}");
    }

    #[test]
    fn flags() {
        for ty in all_types() {
            assert_eq!(ty.is_secret(), ty == ArgType::Password, "{}", ty.name());
            assert_eq!(
                ty.is_display_only(),
                matches!(ty, ArgType::Confirmation | ArgType::Html),
                "{}",
                ty.name()
            );
        }
    }

    #[test]
    fn validate_type_results() {
        let cases: &[(&str, &str, bool, &str)] = &[
            ("ascii", "abc", true, ""),
            ("ascii", "a b", false, RULE_ASCII),
            ("ascii", "", false, RULE_EMPTY),
            ("", "abc", true, ""),
            ("", "a b", false, RULE_ASCII),
            ("int", "-9223372036854775808", true, ""),
            ("int", "9223372036854775808", false, RULE_INT_RANGE),
            ("datetime", "2024-02-29T12:00", true, ""),
            (
                "datetime",
                "2023-02-29T12:00",
                false,
                "the day must exist in that month",
            ),
            ("checkbox", "1", true, ""),
            ("checkbox", "yes", false, RULE_CHECKBOX),
            ("checklist", "a,b", true, ""),
            ("password", "", true, ""),
            ("password", "$(x)", true, ""),
            ("raw_string_multiline", "a\nb", true, ""),
            (
                "very_dangerous_raw_string",
                "\0",
                false,
                "must not contain a NUL byte",
            ),
            ("confirmation", "anything", true, ""),
            ("html", "<b>x</b>", true, ""),
            // No pattern is compiled from a request, valid or not, cheap or not.
            ("regex:[a-z]+", "abc", false, REGEX_FROM_REQUEST),
            ("regex:(?:.{0,100}){0,100}x", "a", false, REGEX_FROM_REQUEST),
            ("regex:[", "x", false, REGEX_FROM_REQUEST),
            ("email", "a@b.c", true, ""),
            ("email", "", false, RULE_EMPTY),
            ("url", "", false, RULE_EMPTY),
            ("datetime", "", false, RULE_EMPTY),
            ("url", "https://example.com/", true, ""),
            ("unicode_identifier", "héllo", true, ""),
        ];
        for &(ty, value, valid, why) in cases {
            assert_eq!(
                validate_type(ty, value),
                (valid, why.to_owned()),
                "{ty:?} {value:?}"
            );
        }
        for ty in ["nope", "select", "ASCII", "regex"] {
            let (valid, why) = validate_type(ty, "abc");
            assert!(!valid);
            assert!(why.starts_with("unknown argument type"), "{why}");
            assert!(why.contains("ascii_identifier"), "{why}");
        }
        let (valid, why) = validate_type("Regex:[a-z]", "x");
        assert!(!valid);
        assert!(why.contains("write regex: in lower case"), "{why}");
    }
}
