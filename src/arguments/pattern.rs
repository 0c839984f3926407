//! `regex:` argument types: the pattern compiled once, at config load, anchored so that the
//! whole value must match, and bounded twice: in size at load, and in what matching one value
//! may cost. regex-lite's syntax is not Go's RE2, which OliveTin configs were written for, so
//! an invalid pattern's error says how they differ.
//!
//! regex-lite matches with a Pike VM: its time grows with the value's length times the
//! number of the program's states alive at once, which a pattern with nested counted
//! repetitions (`(?:[a-z]{1,50}){1,20}`) makes large. A value is matched on the event loop,
//! so what one match may cost is bounded: the compiled size (an upper bound of the states)
//! times the value's length must stay within [`MATCH_BUDGET`]. An ordinary pattern then
//! takes values of tens of KiB; one whose counted repetitions compile large takes shorter
//! ones (never fewer than [`MIN_LONGEST`] bytes: a pattern that would is refused at load).

use regex_lite::{Regex, RegexBuilder};

/// The longest pattern text a config may write.
const MAX_SOURCE_BYTES: usize = 1024;

/// What matching the pattern values of one request may cost, as compiled size × value
/// bytes. Measured with regex-lite 0.1.9 on a 2-core x86-64 VM, the costliest patterns
/// (nested counted repetitions, alternations under stars) take at most 0.7 ns per unit:
/// about 6 ms for the whole budget, a few times that on a Raspberry Pi.
pub const MATCH_BUDGET: usize = 8 << 20;

/// The fewest bytes every pattern must be able to match: a pattern whose compiled size
/// would leave less than this under [`MATCH_BUDGET`] is refused at load.
pub const MIN_LONGEST: usize = 64;

/// The largest compiled program (regex-lite's measure of an NFA's memory) a `regex:` pattern
/// may produce: [`MATCH_BUDGET`] ÷ [`MIN_LONGEST`] = 128 KiB. Real rules are far below it:
/// `[a-z]+` compiles to about 260, `[A-Za-z0-9._-]{1,255}` (a host name) to about 29 000,
/// which then takes values of up to 292 bytes.
pub const REGEX_SIZE_LIMIT: usize = MATCH_BUDGET / MIN_LONGEST;

/// The limit a pattern's syntax is checked under: regex-lite's default. Only whether the
/// pattern parses is kept from that compile.
const SYNTAX_SIZE_LIMIT: usize = 10 << 20;

/// Added to every invalid-pattern error, because regex-lite's syntax differs from the Go RE2
/// syntax OliveTin configs were written for in ways an author would not guess.
const REGEX_HINT: &str = "regex: patterns use Rust regex syntax without look-around, \
     backreferences or \\p{..} classes; \\w, \\d and \\s are ASCII only; the pattern must match \
     the whole value";

/// A `regex:` pattern: the type as written (`regex:` and the pattern), the compiled,
/// anchored regex, and the size it compiled to.
#[derive(Debug, Clone)]
pub struct Pattern {
    declared: String,
    regex: Regex,
    size: usize,
}

/// How a pattern type is written before its pattern.
pub(super) const REGEX_PREFIX: &str = "regex:";

/// Why the text after `regex:` is not a pattern an argument can have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadPattern {
    Empty,
    /// Its length, over `MAX_SOURCE_BYTES`.
    TooLong(usize),
    /// The regex library's words.
    Invalid(String),
    /// A `(?x)` comment swallowed the anchoring group's end: the library's words.
    Unanchorable(String),
    /// Compiles to more than `REGEX_SIZE_LIMIT`.
    TooBig,
}

impl std::fmt::Display for BadPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadPattern::Empty => f.write_str(
                "regex: needs a pattern after the colon (an empty pattern accepts only an empty \
                 value); use very_dangerous_raw_string to accept any text",
            ),
            BadPattern::TooLong(len) => write!(
                f,
                "the pattern after regex: is {len} bytes long, more than the {MAX_SOURCE_BYTES} \
                 allowed"
            ),
            BadPattern::Invalid(e) => {
                write!(f, "the pattern after regex: is invalid: {e} ({REGEX_HINT})")
            }
            BadPattern::Unanchorable(e) => write!(
                f,
                "the pattern after regex: cannot be anchored to the whole value ({e}); if it \
                 ends with a (?x) # comment, end the comment with a newline"
            ),
            BadPattern::TooBig => write!(
                f,
                "the pattern after regex: compiles to more than {REGEX_SIZE_LIMIT} bytes, so \
                 matching it could hold the service for too long; write smaller counted \
                 repetitions (such as {{1,255}}) or fewer of them nested"
            ),
        }
    }
}

impl std::error::Error for BadPattern {}

impl Pattern {
    /// Compiles `source` so that the whole value must match (`\A(?:source)\z`).
    ///
    /// The pattern is compiled on its own first: a valid pattern has balanced groups, so the
    /// wrapping group cannot be closed early by something like `a)|(b`, which would otherwise
    /// leave one branch unanchored. `\A` and `\z` are used rather than `^` and `$` because
    /// they keep their meaning when the pattern turns on multi-line mode with `(?m)`.
    pub fn new(source: &str) -> Result<Pattern, BadPattern> {
        if source.is_empty() {
            return Err(BadPattern::Empty);
        }
        if source.len() > MAX_SOURCE_BYTES {
            return Err(BadPattern::TooLong(source.len()));
        }
        // Syntax first, under regex-lite's own generous size limit, so that a pattern that is
        // merely too big is told so rather than called invalid.
        compile_within(source, SYNTAX_SIZE_LIMIT)
            .map_err(|e| BadPattern::Invalid(e.to_string()))?;
        let anchored = format!(r"\A(?:{source})\z");
        // Only a `(?x)` comment running to the end of the pattern fails here: it swallows
        // the closing of the anchoring group.
        compile_within(&anchored, SYNTAX_SIZE_LIMIT)
            .map_err(|e| BadPattern::Unanchorable(e.to_string()))?;
        let regex = compile_within(&anchored, REGEX_SIZE_LIMIT).map_err(|_| BadPattern::TooBig)?;
        Ok(Pattern {
            declared: format!("{REGEX_PREFIX}{source}"),
            regex,
            size: compiled_size(&anchored),
        })
    }

    /// What matching a value of `len` bytes may cost, in the unit of [`MATCH_BUDGET`].
    pub fn cost(&self, len: usize) -> usize {
        self.size.saturating_mul(len.max(1))
    }

    /// The longest value this pattern is matched against.
    pub fn longest(&self) -> usize {
        MATCH_BUDGET / self.size.max(1)
    }

    /// The type as written: `regex:` and the pattern.
    pub fn declared(&self) -> &str {
        &self.declared
    }

    /// The pattern as written after `regex:`.
    pub fn source(&self) -> &str {
        &self.declared[REGEX_PREFIX.len()..]
    }

    /// Whether a value this pattern accepts may start with `-` (`lead`: a conservative
    /// reading of its first character, "may" when not proven otherwise).
    pub fn may_start_with_dash(&self) -> bool {
        super::lead::may_start_with_dash(self.source())
    }

    /// Whether the whole of `value` matches.
    pub fn is_match(&self, value: &str) -> bool {
        self.regex.is_match(value)
    }
}

fn compile_within(pattern: &str, limit: usize) -> Result<Regex, regex_lite::Error> {
    RegexBuilder::new(pattern).size_limit(limit).build()
}

/// The size a pattern that compiles within [`REGEX_SIZE_LIMIT`] compiles to: the smallest
/// size limit it compiles under (regex-lite tells no more than whether it fits), found by
/// halving, about fifteen compiles at load.
fn compiled_size(pattern: &str) -> usize {
    let (mut fails, mut fits) = (0, REGEX_SIZE_LIMIT);
    while fits - fails > 1 {
        let mid = fails + (fits - fails) / 2;
        if compile_within(pattern, mid).is_ok() {
            fits = mid;
        } else {
            fails = mid;
        }
    }
    fits
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
            let why = ArgType::parse(bad, false).unwrap_err().to_string();
            assert!(why.contains("regex:"), "{bad}: {why}");
        }
        let why = ArgType::parse("regex:(", false).unwrap_err().to_string();
        assert!(why.contains("is invalid"), "{why}");
        assert!(why.contains("whole value"), "{why}");
        // The empty pattern would accept only the empty value: refused with a pointer to the
        // type that accepts anything.
        let why = ArgType::parse("regex:", false).unwrap_err().to_string();
        assert!(why.contains("very_dangerous_raw_string"), "{why}");
        // A (?x) comment at the end would swallow the anchoring; refused with the fix.
        let why = ArgType::parse("regex:(?x)abc # letters", false)
            .unwrap_err()
            .to_string();
        assert!(why.contains("anchored"), "{why}");
        let fixed = t("regex:(?x)abc # letters\n");
        ok(&fixed, "abc");
        refused(&fixed, "abcd");
        // A size that fits a real rule compiles.
        ok(&t("regex:[A-Za-z0-9._-]{1,255}"), "host.name");
    }

    fn pattern(text: &str) -> super::Pattern {
        match t(text) {
            ArgType::Regex(p) => p,
            other => panic!("{text} is {other:?}"),
        }
    }

    #[test]
    fn regex_bounds_at_load() {
        use super::{MATCH_BUDGET, MAX_SOURCE_BYTES, MIN_LONGEST, REGEX_SIZE_LIMIT};
        // Too long a text.
        let long = format!("regex:{}", "a".repeat(MAX_SOURCE_BYTES + 1));
        let why = ArgType::parse(&long, false).unwrap_err().to_string();
        assert!(why.contains("bytes long"), "{why}");
        let longest = format!("regex:{}", "a|".repeat(MAX_SOURCE_BYTES / 2 - 1) + "ab");
        assert_eq!(longest.len(), "regex:".len() + MAX_SOURCE_BYTES);
        ok(&t(&longest), "ab");
        // Too big a program: refused as too big, not as invalid, with the way out.
        for big in [
            "regex:(?:.{0,100}){0,100}x",
            "regex:(?i)(?:[a-z0-9]{0,60}){0,60}!",
        ] {
            let why = ArgType::parse(big, false).unwrap_err().to_string();
            assert!(why.contains("compiles to more than"), "{big}: {why}");
            assert!(why.contains("smaller counted"), "{big}: {why}");
        }
        // Every accepted pattern matches values of at least MIN_LONGEST bytes, and what one
        // of its values may cost stays within the budget.
        for text in [
            "regex:[a-z]+",
            "regex:[A-Za-z0-9._-]{1,255}",
            "regex:(?:[a-z]{1,50}){1,20}",
            "regex:(?:[a-z]{0,30}){0,30}x",
            "regex:(?:a|aa)*b",
            "regex:^[a-z0-9]+(?:[._-][a-z0-9]+)*$",
        ] {
            let p = pattern(text);
            assert!(p.longest() >= MIN_LONGEST, "{text}: {}", p.longest());
            assert!(p.cost(p.longest()) <= MATCH_BUDGET, "{text}");
            assert!(p.cost(p.longest() + 1) > MATCH_BUDGET, "{text}");
            assert!(p.size <= REGEX_SIZE_LIMIT, "{text}");
        }
        // Ordinary rules keep the values they are written for.
        assert!(pattern("regex:[a-z]+").longest() >= 16 * 1024);
        assert!(pattern("regex:[A-Za-z0-9._-]{1,255}").longest() >= 255);
    }

    #[test]
    fn regex_values_longer_than_the_pattern_allows_are_refused_unmatched() {
        let ty = t("regex:(?:[a-z]{1,50}){1,20}");
        let ArgType::Regex(p) = &ty else {
            unreachable!()
        };
        let longest = p.longest();
        assert!(longest < 1000, "{longest}");
        ok(&ty, &"a".repeat(longest.min(1000)));
        let why = refused(&ty, &"a".repeat(longest + 1));
        assert!(why.contains(&format!("at most {longest} bytes")), "{why}");
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
