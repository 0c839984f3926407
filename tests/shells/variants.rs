//! Variants of a generated template: the same text read through the transformations that
//! shells treat differently, or that a model can get wrong while the shells agree.
//!
//! - A line continuation (backslash-newline) at every character boundary, one at a time:
//!   inside every word, operator, reserved word, quote, `$( )`, `${ }`, here-document
//!   delimiter and body line, comment, and inside the braces of `{{ v }}`. Then two
//!   continuations in a row, and one between every two characters outside the placeholders.
//! - Every newline written as CR LF (a carriage return is a word character to the shells, so
//!   `EOF\r` is another delimiter and `\` before it escapes the CR).
//! - Blanks swapped: spaces for tabs and tabs for spaces (`<<-` strips tabs only).
//! - Odd bytes put between characters: control characters bash and dash use inside (`\x01`,
//!   `\x7f`, and the bytes 0x81 to 0x88 that dash's parser keeps for its own marks, here inside
//!   UTF-8 characters), escape, vertical tab, form feed, a lone carriage return, a no-break
//!   space.
//!
//! Each variant keeps its base template's placeholders where the text still has them, so the
//! oracle of `main.rs` applies unchanged: the model refuses the variant, or every value
//! arrives as the same bytes and runs nothing in all four shells.

use crate::grammar::Rng;

/// What changed a base template into a variant (printed with a divergence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Change {
    Base,
    Continuation,
    DoubleContinuation,
    ContinuationEverywhere,
    CrLf,
    Tabs,
    Spaces,
    OddBytes,
}

const ODD: &[&str] = &[
    "\u{1}", "\u{7f}", "\u{81}", "\u{82}", "\u{83}", "\u{84}", "\u{85}", "\u{86}", "\u{87}",
    "\u{88}", "\u{1b}", "\u{b}", "\u{c}", "\r", "\u{a0}",
];

const CONTINUATION: &str = "\\\n";

/// Every variant of `text`, the base first; duplicates removed.
pub fn variants(text: &str, rng: &mut Rng) -> Vec<(String, Change)> {
    let mut out = vec![(text.to_string(), Change::Base)];
    let boundaries: Vec<usize> = (0..=text.len())
        .filter(|&i| text.is_char_boundary(i))
        .collect();
    for &i in &boundaries {
        out.push((insert(text, i, CONTINUATION), Change::Continuation));
    }
    let i = *rng.pick(&boundaries);
    out.push((
        insert(text, i, &CONTINUATION.repeat(2)),
        Change::DoubleContinuation,
    ));
    out.push((everywhere(text), Change::ContinuationEverywhere));
    if text.contains('\n') {
        out.push((text.replace('\n', "\r\n"), Change::CrLf));
    }
    if text.contains(' ') {
        out.push((text.replace(' ', "\t"), Change::Tabs));
    }
    if text.contains('\t') {
        out.push((text.replace('\t', " "), Change::Spaces));
    }
    let mut odd = text.to_string();
    for _ in 0..1 + rng.below(3) {
        // Never beside `&`: `>\x7f&1` and `&\x01&` would put a job in the background, whose
        // output races with what follows.
        let spots: Vec<usize> = (0..=odd.len())
            .filter(|&i| odd.is_char_boundary(i))
            .filter(|&i| !odd[..i].ends_with('&') && !odd[i..].starts_with('&'))
            .collect();
        let at = *rng.pick(&spots);
        odd = insert(&odd, at, rng.one(ODD));
    }
    out.push((odd, Change::OddBytes));
    let mut seen = std::collections::HashSet::new();
    out.retain(|(t, _)| seen.insert(t.clone()));
    out
}

fn insert(text: &str, at: usize, what: &str) -> String {
    format!("{}{what}{}", &text[..at], &text[at..])
}

/// A continuation between every two characters, except inside `{{ v }}`.
fn everywhere(text: &str) -> String {
    let holes: Vec<(usize, usize)> = text
        .match_indices("{{ v }}")
        .map(|(at, h)| (at, at + h.len()))
        .collect();
    let mut out = String::new();
    for (at, c) in text.char_indices() {
        if at > 0 && !holes.iter().any(|&(s, e)| s < at && at < e) {
            out.push_str(CONTINUATION);
        }
        out.push(c);
    }
    out
}
