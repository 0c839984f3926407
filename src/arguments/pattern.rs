//! `regex:` argument types: the pattern compiled once, at config load, anchored so that the
//! whole value must match, and bounded in size. regex-lite's syntax is not Go's RE2, which
//! OliveTin configs were written for, so an invalid pattern's error says how they differ.

use regex_lite::{Regex, RegexBuilder};

/// The largest compiled program a `regex:` pattern may produce. regex-lite's default is 10 MiB,
/// which is more than a small board should spend on one argument; 1 MiB still allows patterns
/// far larger than any real argument rule (`[A-Za-z0-9._-]{1,255}` needs about 30 KiB).
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Added to every invalid-pattern error, because regex-lite's syntax differs from the Go RE2
/// syntax OliveTin configs were written for in ways an author would not guess.
const REGEX_HINT: &str = "regex: patterns use Rust regex syntax without look-around, \
     backreferences or \\p{..} classes; \\w, \\d and \\s are ASCII only; the pattern must match \
     the whole value";

/// A `regex:` pattern: the type as written (`regex:` and the pattern) and the compiled,
/// anchored regex.
#[derive(Debug, Clone)]
pub struct Pattern {
    declared: String,
    regex: Regex,
}

/// How a pattern type is written before its pattern.
pub(super) const REGEX_PREFIX: &str = "regex:";

impl Pattern {
    /// Compiles `source` so that the whole value must match (`\A(?:source)\z`).
    ///
    /// The pattern is compiled on its own first: a valid pattern has balanced groups, so the
    /// wrapping group cannot be closed early by something like `a)|(b`, which would otherwise
    /// leave one branch unanchored. `\A` and `\z` are used rather than `^` and `$` because
    /// they keep their meaning when the pattern turns on multi-line mode with `(?m)`.
    pub fn new(source: &str) -> Result<Pattern, String> {
        if source.is_empty() {
            return Err(
                "regex: needs a pattern after the colon (an empty pattern accepts only \
                 an empty value); use very_dangerous_raw_string to accept any text"
                    .into(),
            );
        }
        compile(source)
            .map_err(|e| format!("the pattern after regex: is invalid: {e} ({REGEX_HINT})"))?;
        let regex = compile(&format!(r"\A(?:{source})\z")).map_err(|e| {
            // Only a `(?x)` comment running to the end of the pattern gets here: it swallows
            // the closing of the anchoring group.
            format!(
                "the pattern after regex: cannot be anchored to the whole value ({e}); if it \
                 ends with a (?x) # comment, end the comment with a newline"
            )
        })?;
        Ok(Pattern {
            declared: format!("{REGEX_PREFIX}{source}"),
            regex,
        })
    }

    /// The type as written: `regex:` and the pattern.
    pub fn declared(&self) -> &str {
        &self.declared
    }

    /// The pattern as written after `regex:`.
    pub fn source(&self) -> &str {
        &self.declared[REGEX_PREFIX.len()..]
    }

    /// Whether the whole of `value` matches.
    pub fn is_match(&self, value: &str) -> bool {
        self.regex.is_match(value)
    }
}

fn compile(pattern: &str) -> Result<Regex, regex_lite::Error> {
    RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
}

/// Two patterns are the same type when they were written the same way; compiled regexes have
/// no equality of their own.
impl PartialEq for Pattern {
    fn eq(&self, other: &Pattern) -> bool {
        self.declared == other.declared
    }
}

impl Eq for Pattern {}

#[cfg(test)]
mod tests {
    use crate::arguments::ArgType;
    use crate::arguments::fixtures::*;

    #[test]
    fn regex_is_anchored_to_the_whole_value() {
        table(
            "regex:[a-z]+",
            &[
                ("abc", true),
                ("abc1", false),
                ("1abc", false),
                ("ab c", false),
                ("abc\n", false),
                ("\nabc", false),
                ("", false),
            ],
        );
        // Alternation stays inside the anchors.
        table(
            "regex:a|b",
            &[("a", true), ("b", true), ("ab", false), ("xa", false)],
        );
        table("regex:a|ab", &[("ab", true)]);
        // Multi-line mode cannot loosen the anchors: \A and \z do not follow (?m).
        table(
            "regex:(?m)^a$",
            &[("a", true), ("a\nb", false), ("b\na", false)],
        );
        // Anchors written by the author are harmless.
        table("regex:^[0-9]{3}$", &[("123", true), ("1234", false)]);
        // An empty match is possible only for an empty value.
        table("regex:[a-z]*", &[("", true), ("a", true), ("A", false)]);
        // \w and \d are ASCII only, as in OliveTin's RE2.
        table(
            "regex:\\w+",
            &[("a_1", true), ("é", false), ("٣", false), ("ａ", false)],
        );
        // Case-insensitive and extended modes work within the pattern.
        table("regex:(?i)abc", &[("AbC", true)]);
        table("regex:(?x) a b c ", &[("abc", true), ("a b c", false)]);
        // Non-ASCII literals match.
        table("regex:日本+", &[("日本本", true), ("日", false)]);
        // `.` does not match a newline unless the pattern says so.
        table("regex:.+", &[("a;b", true), ("a\nb", false)]);
        table("regex:(?s).+", &[("a\nb", true)]);
    }

    #[test]
    fn regex_errors_at_parse() {
        for bad in [
            "regex:(",
            "regex:)",
            "regex:[a-z",
            "regex:a)|(b",
            "regex:a{2",
            "regex:*",
            "regex:\\",
            "regex:\\p{L}+",
            "regex:(?=a)a",
            "regex:(a)\\1",
            "regex:(?<n>a)(?<n>b)",
            "regex:a{1000}{1000}",
        ] {
            let why = ArgType::parse(bad, false).unwrap_err();
            assert!(why.contains("regex:"), "{bad}: {why}");
        }
        let why = ArgType::parse("regex:(", false).unwrap_err();
        assert!(why.contains("is invalid"), "{why}");
        assert!(why.contains("whole value"), "{why}");
        // The empty pattern would accept only the empty value: refused with a pointer to the
        // type that accepts anything.
        let why = ArgType::parse("regex:", false).unwrap_err();
        assert!(why.contains("very_dangerous_raw_string"), "{why}");
        // A (?x) comment at the end would swallow the anchoring; refused with the fix.
        let why = ArgType::parse("regex:(?x)abc # letters", false).unwrap_err();
        assert!(why.contains("anchored"), "{why}");
        let fixed = t("regex:(?x)abc # letters\n");
        ok(&fixed, "abc");
        refused(&fixed, "abcd");
        // A size that fits a real rule compiles.
        ok(&t("regex:[A-Za-z0-9._-]{1,255}"), "host.name");
    }

    #[test]
    fn regex_pattern_identity() {
        let a = t("regex:[a-z]+");
        assert_eq!(a, t("regex:[a-z]+"));
        assert_ne!(a, t("regex:[a-z]*"));
        assert_eq!(a.name(), "regex:[a-z]+");
        let ArgType::Regex(pattern) = &a else {
            panic!("not a regex type")
        };
        assert_eq!(pattern.source(), "[a-z]+");
        assert!(pattern.is_match("abc"));
        assert!(!pattern.is_match("abc1"));
        // The refusal names the rule (the pattern), not the value.
        assert_eq!(
            refused(&a, "Bad1"),
            "must match the pattern [a-z]+ as a whole"
        );
    }
}
