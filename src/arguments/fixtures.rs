//! Test helpers for the argument type tests: hostile characters and look-alikes, and
//! checking a value against a type by its name.

use super::ArgType;

/// Every shell metacharacter and quote, plus newline and tab.
pub(super) const SHELL_META: &[char] = &[
    '\'', '"', '\\', '`', '$', '(', ')', '{', '}', '[', ']', ';', '|', '&', '<', '>', '*', '?',
    '!', '~', '#', '\n', '\t',
];

/// Strings that look like ASCII letters, digits or punctuation but are not.
pub(super) const LOOKALIKES: &[&str] = &[
    "ａｂｃ",     // fullwidth letters
    "１２３",     // fullwidth digits
    "٣",          // Arabic-Indic digit three
    "۳",          // extended Arabic-Indic digit three
    "е",          // Cyrillic small ie
    "e\u{301}",   // e + combining acute accent
    "a\u{200B}b", // zero-width space
    "a\u{A0}b",   // no-break space
    "a\u{202E}b", // right-to-left override
    "a\u{FEFF}b", // zero-width no-break space
    "ｰ",          // halfwidth prolonged sound mark (looks like a hyphen)
    "a\u{2024}b", // one dot leader (looks like '.')
];

pub(super) fn t(text: &str) -> ArgType {
    ArgType::parse(text, false).unwrap()
}

pub(super) fn ok(ty: &ArgType, value: &str) -> String {
    ty.check(value, &[])
        .unwrap_or_else(|e| panic!("{} refused {value:?}: {e}", ty.name()))
}

pub(super) fn refused(ty: &ArgType, value: &str) -> String {
    match ty.check(value, &[]) {
        Ok(v) => panic!("{} accepted {value:?} as {v:?}", ty.name()),
        Err(e) => e.to_string(),
    }
}

/// Runs a table of (value, accepted) for one type without choices.
pub(super) fn table(type_text: &str, rows: &[(&str, bool)]) {
    let ty = t(type_text);
    for &(value, accepted) in rows {
        if accepted {
            ok(&ty, value);
        } else {
            let why = refused(&ty, value);
            assert!(!why.is_empty(), "{type_text} {value:?}: empty description");
        }
    }
}
