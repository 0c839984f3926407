//! Go's duration syntax (`300ms`, `1.5h`, `2h45m`), as OliveTin configs write it for
//! `maxRate` windows and cron's `@every`. A pure parser: text in, `Duration` or the reason out.

use std::time::Duration;

/// Why a text is not a duration. Its `Display` completes "invalid duration …: ".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadDuration {
    Empty,
    NoNumber,
    NoUnit,
    UnknownUnit(String),
    TooLong,
    Negative,
}

impl std::fmt::Display for BadDuration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadDuration::Empty => f.write_str("it is empty"),
            BadDuration::NoNumber => f.write_str("a number is missing"),
            BadDuration::NoUnit => f.write_str("a unit is missing"),
            BadDuration::UnknownUnit(unit) => write!(f, "unknown unit {unit:?}"),
            BadDuration::TooLong => f.write_str("it is too long"),
            BadDuration::Negative => f.write_str("it is negative"),
        }
    }
}

impl std::error::Error for BadDuration {}

/// Parses a duration in Go's syntax (`300ms`, `1.5h`, `2h45m`): a sequence of decimal numbers,
/// each with a unit `ns`, `us` (or `µs`), `ms`, `s`, `m`, `h`. A bare `0` is zero; a negative
/// duration is refused.
pub fn parse(text: &str) -> Result<Duration, BadDuration> {
    let s = text.trim();
    let (negative, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest.is_empty() {
        return Err(BadDuration::Empty);
    }
    if rest == "0" {
        return Ok(Duration::ZERO);
    }
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let int_part = &rest[..int_len];
        rest = &rest[int_len..];
        let mut frac_part = "";
        if let Some(after_dot) = rest.strip_prefix('.') {
            let frac_len = after_dot.bytes().take_while(u8::is_ascii_digit).count();
            frac_part = &after_dot[..frac_len];
            rest = &after_dot[frac_len..];
        }
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(BadDuration::NoNumber);
        }
        let unit_len = rest
            .bytes()
            .take_while(|b| !b.is_ascii_digit() && *b != b'.')
            .count();
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let nanos_per_unit: u128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "" => return Err(BadDuration::NoUnit),
            other => return Err(BadDuration::UnknownUnit(other.to_string())),
        };
        if int_part.len() > 20 {
            return Err(BadDuration::TooLong);
        }
        let whole: u128 = if int_part.is_empty() {
            0
        } else {
            int_part.parse().map_err(|_| BadDuration::TooLong)?
        };
        total += whole * nanos_per_unit;
        // Nanoseconds are the resolution; further digits cannot change the result.
        let frac_digits = &frac_part[..frac_part.len().min(18)];
        if !frac_digits.is_empty() {
            // At most 18 digits: this cannot fail.
            let frac: u128 = frac_digits.parse().map_err(|_| BadDuration::TooLong)?;
            total +=
                frac * nanos_per_unit / 10u128.pow(u32::try_from(frac_digits.len()).unwrap_or(18));
        }
        if total > u128::from(u64::MAX) {
            return Err(BadDuration::TooLong);
        }
    }
    if negative && total > 0 {
        return Err(BadDuration::Negative);
    }
    Ok(Duration::from_nanos(
        u64::try_from(total).unwrap_or(u64::MAX),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        let cases: &[(&str, u64)] = &[
            ("30s", 30_000),
            ("5m", 300_000),
            ("1h30m", 5_400_000),
            ("500ms", 500),
            ("1.5h", 5_400_000),
            ("2h45m10s", 9_910_000),
            ("+1s", 1000),
            ("1000us", 1),
            ("1000µs", 1),
            ("1000000ns", 1),
            (".5s", 500),
        ];
        for (text, millis) in cases {
            assert_eq!(parse(text), Ok(Duration::from_millis(*millis)), "{text}");
        }
        assert_eq!(parse("0"), Ok(Duration::ZERO));
        for bad in [
            "",
            "s",
            "1",
            "1d",
            "1.s5",
            "-5m",
            "1h-5m",
            "99999999999999999999999h",
            "1 h",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
