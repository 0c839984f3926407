//! Schedules of `execOnCron`: parsing a cron line and computing its next run. It owns the
//! cron grammar (five fields, an optional leading seconds field, `@hourly`-style descriptors,
//! `@every <duration>`) and the rule for daylight-saving changes. It is pure: time comes in
//! as Unix seconds and the time zone through the `Zone` trait, so tests use a fake zone with
//! a transition built in the test and never wait. It must not sleep, read clocks or start
//! anything; `triggers` does that.
//!
//! Daylight saving (docs/configuration.md, "Triggers"): a schedule whose hour field allows every hour runs
//! by elapsed time across a change (an hourly job runs every 60 minutes, before, during and
//! after it). Any other schedule names wall-clock times, and each wall-clock time runs once:
//! a time skipped when the clocks go forward runs at the first instant after the gap, and a
//! time repeated when they go back runs only at its first occurrence.

use std::time::Duration;

/// The time zone rules a schedule is evaluated in.
pub trait Zone {
    /// Seconds east of UTC in force at Unix time `t`.
    fn offset(&self, t: i64) -> i32;
}

/// A parsed `execOnCron` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Schedule {
    /// `@every <duration>`: elapsed time from when the schedule was armed, whatever the clock
    /// on the wall says.
    Every(Duration),
    /// Fields matched against the local wall-clock time.
    Calendar(Calendar),
}

/// The sets of a cron line, one bit per allowed value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Calendar {
    seconds: u64,
    minutes: u64,
    hours: u64,
    /// Bits 1..=31.
    days: u64,
    /// Bits 1..=12.
    months: u64,
    /// Bits 0..=6, Sunday = 0.
    weekdays: u64,
    /// Whether the day-of-month or day-of-week field was `*` (or `?`): with both restricted a
    /// day matches when either matches, as in every cron since Vixie's.
    days_star: bool,
    weekdays_star: bool,
}

const DAY: i64 = 86_400;
const ALL_HOURS: u64 = (1 << 24) - 1;
/// How far ahead a next run is looked for: eight years cover every 29 February.
const HORIZON: i64 = 8 * 366 * DAY;

struct Field {
    name: &'static str,
    min: u32,
    max: u32,
    names: &'static [&'static str],
}

const SECONDS: Field = Field {
    name: "seconds",
    min: 0,
    max: 59,
    names: &[],
};
const MINUTES: Field = Field {
    name: "minute",
    min: 0,
    max: 59,
    names: &[],
};
const HOURS: Field = Field {
    name: "hour",
    min: 0,
    max: 23,
    names: &[],
};
const DAYS: Field = Field {
    name: "day of month",
    min: 1,
    max: 31,
    names: &[],
};
const MONTHS: Field = Field {
    name: "month",
    min: 1,
    max: 12,
    names: &[
        "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
    ],
};
// 7 is Sunday too; it is folded onto 0 after parsing.
const WEEKDAYS: Field = Field {
    name: "day of week",
    min: 0,
    max: 7,
    names: &["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"],
};

/// Why a cron line is not a schedule. Its `Display` completes "invalid cron line …: ".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadCron {
    /// `TZ=` or `CRON_TZ=` in front.
    TimeZone,
    /// `@every` without a duration after a space.
    EveryWithout,
    /// `@every` with a text the duration parser refused, and why.
    EveryDuration(String, String),
    EveryTooShort,
    UnknownDescriptor(String),
    Empty,
    /// Neither 5 nor 6 fields.
    FieldCount(usize),
    /// No date has these day-of-month and month fields.
    NoDate,
    /// One field, by its name, and what is wrong in it.
    Field(&'static str, BadField),
}

/// What is wrong in one field of a cron line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadField {
    /// A step that is not a number, in its part.
    Step(String, String),
    /// A step of 0, in its part.
    ZeroStep(String),
    Backwards(String),
    NoValue,
    NotNumber(String),
    Outside(u32, u32, u32),
}

impl std::fmt::Display for BadCron {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadCron::TimeZone => f.write_str(
                "a time zone prefix is not supported: schedules run in the board's local time zone",
            ),
            BadCron::EveryWithout => {
                f.write_str("write @every followed by a duration, such as @every 5m")
            }
            BadCron::EveryDuration(text, why) => write!(f, "invalid duration {text:?}: {why}"),
            BadCron::EveryTooShort => f.write_str("@every needs at least one second"),
            BadCron::UnknownDescriptor(line) => write!(
                f,
                "unknown descriptor {line:?}: use @yearly, @annually, @monthly, @weekly, @daily, \
                 @midnight, @hourly or @every <duration>"
            ),
            BadCron::Empty => f.write_str("the line is empty"),
            BadCron::FieldCount(n) => write!(
                f,
                "expected 5 fields (minute hour day-of-month month day-of-week), or 6 with \
                 seconds first, found {n}"
            ),
            BadCron::NoDate => f.write_str(
                "no date matches these day-of-month and month fields (such as 30 February)",
            ),
            BadCron::Field(name, bad) => match bad {
                BadField::Step(s, part) => write!(f, "{name}: invalid step {s:?} in {part:?}"),
                BadField::ZeroStep(part) => write!(f, "{name}: a step of 0 in {part:?}"),
                BadField::Backwards(range) => {
                    write!(f, "{name}: the range {range:?} runs backwards")
                }
                BadField::NoValue => write!(f, "{name}: a value is missing"),
                BadField::NotNumber(text) => write!(f, "{name}: {text:?} is not a number"),
                BadField::Outside(v, min, max) => write!(f, "{name}: {v} is outside {min}-{max}"),
            },
        }
    }
}

impl std::error::Error for BadCron {}

/// Parses a cron line. `duration` parses the text after `@every` (Go's duration syntax, as
/// OliveTin's cron library has it; `crate::duration::parse`).
pub fn parse<E: std::fmt::Display>(
    line: &str,
    duration: impl Fn(&str) -> Result<Duration, E>,
) -> Result<Schedule, BadCron> {
    let line = line.trim();
    if line.starts_with("TZ=") || line.starts_with("CRON_TZ=") {
        return Err(BadCron::TimeZone);
    }
    if let Some(rest) = line.strip_prefix("@every") {
        let text = rest.trim();
        if text.is_empty() || rest.len() == text.len() {
            return Err(BadCron::EveryWithout);
        }
        let d = duration(text)
            .map_err(|why| BadCron::EveryDuration(text.to_string(), why.to_string()))?;
        if d < Duration::from_secs(1) {
            return Err(BadCron::EveryTooShort);
        }
        return Ok(Schedule::Every(d));
    }
    let expanded = match line.to_ascii_lowercase().as_str() {
        "@yearly" | "@annually" => "0 0 0 1 1 *",
        "@monthly" => "0 0 0 1 * *",
        "@weekly" => "0 0 0 * * 0",
        "@daily" | "@midnight" => "0 0 0 * * *",
        "@hourly" => "0 0 * * * *",
        other if other.starts_with('@') => {
            return Err(BadCron::UnknownDescriptor(line.to_string()));
        }
        _ => line,
    };
    let fields: Vec<&str> = expanded.split_whitespace().collect();
    let (seconds, rest) = match fields.len() {
        5 => ("0", &fields[..]),
        6 => (fields[0], &fields[1..]),
        0 => return Err(BadCron::Empty),
        n => return Err(BadCron::FieldCount(n)),
    };
    let (days, days_star) = set(rest[2], &DAYS)?;
    let (weekdays, weekdays_star) = set(rest[4], &WEEKDAYS)?;
    // Sunday may be written 7.
    let weekdays = (weekdays | (weekdays >> 7)) & 0x7f;
    let calendar = Calendar {
        seconds: set(seconds, &SECONDS)?.0,
        minutes: set(rest[0], &MINUTES)?.0,
        hours: set(rest[1], &HOURS)?.0,
        days,
        months: set(rest[3], &MONTHS)?.0,
        weekdays,
        days_star,
        weekdays_star,
    };
    if !calendar.can_match() {
        return Err(BadCron::NoDate);
    }
    Ok(Schedule::Calendar(calendar))
}

/// One field: `*`, `?`, a value, a range `a-b`, a step `*/n`, `a-b/n` or `a/n` (from `a` to
/// the end), or a comma-separated list of these. Returns the set and whether it was `*`.
fn set(text: &str, f: &Field) -> Result<(u64, bool), BadCron> {
    let bad = |why| BadCron::Field(f.name, why);
    let mut bits = 0u64;
    let star = text == "*" || text == "?";
    for part in text.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => {
                let step: u32 = s
                    .parse()
                    .map_err(|_| bad(BadField::Step(s.to_string(), part.to_string())))?;
                if step == 0 {
                    return Err(bad(BadField::ZeroStep(part.to_string())));
                }
                (r, Some(step))
            }
            None => (part, None),
        };
        let (lo, hi) = if range == "*" || range == "?" {
            (f.min, f.max)
        } else if let Some((a, b)) = range.split_once('-') {
            (value(a, f)?, value(b, f)?)
        } else {
            let v = value(range, f)?;
            // `a/n` runs from `a` to the end of the field.
            (v, if step.is_some() { f.max } else { v })
        };
        if lo > hi {
            return Err(bad(BadField::Backwards(range.to_string())));
        }
        let step = step.unwrap_or(1);
        let mut v = lo;
        while v <= hi {
            bits |= 1 << v;
            v += step;
        }
    }
    Ok((bits, star))
}

fn value(text: &str, f: &Field) -> Result<u32, BadCron> {
    let bad = |why| BadCron::Field(f.name, why);
    if let Some(i) = f.names.iter().position(|n| n.eq_ignore_ascii_case(text)) {
        // Month names start at 1, day names at 0: the field's minimum.
        return Ok(i as u32 + f.min);
    }
    let v: u32 = text.parse().map_err(|_| {
        bad(if text.is_empty() {
            BadField::NoValue
        } else {
            BadField::NotNumber(text.to_string())
        })
    })?;
    if v < f.min || v > f.max {
        return Err(bad(BadField::Outside(v, f.min, f.max)));
    }
    Ok(v)
}

fn has(bits: u64, v: i64) -> bool {
    bits & (1 << v) != 0
}

/// The first set bit at or above `from`, if any.
fn next_bit(bits: u64, from: i64) -> Option<i64> {
    if from > 63 {
        return None;
    }
    let rest = bits >> from;
    (rest != 0).then(|| from + i64::from(rest.trailing_zeros()))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number (the inverse of `days_from_civil`).
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

impl Calendar {
    /// Whether some date can match: a day-of-month list alone must name a day that exists
    /// in one of the months (29 February counts).
    fn can_match(&self) -> bool {
        if self.days_star || !self.weekdays_star {
            return true;
        }
        const LONGEST: [u32; 13] = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
        (1..=12).any(|m| {
            has(self.months, m) && (1..=LONGEST[m as usize]).any(|d| has(self.days, i64::from(d)))
        })
    }

    /// Whether the hour field allows every hour: such a schedule runs by elapsed time
    /// across daylight-saving changes.
    pub fn every_hour(&self) -> bool {
        self.hours & ALL_HOURS == ALL_HOURS
    }

    fn day_matches(&self, days: i64, day_of_month: i64) -> bool {
        let weekday = (days + 4).rem_euclid(7);
        let dom = has(self.days, day_of_month);
        let dow = has(self.weekdays, weekday);
        match (self.days_star, self.weekdays_star) {
            (false, false) => dom || dow,
            _ => dom && dow,
        }
    }

    /// The first wall-clock second at or after `w` (seconds since 1970-01-01 00:00:00 on the
    /// wall, no zone) that matches, within the horizon.
    fn first_at_or_after(&self, w: i64) -> Option<i64> {
        let limit = w + HORIZON;
        let mut t = w;
        while t <= limit {
            let days = t.div_euclid(DAY);
            let second_of_day = t.rem_euclid(DAY);
            let (y, m, d) = civil_from_days(days);
            if !has(self.months, m) {
                let (y, m) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
                t = days_from_civil(y, m, 1) * DAY;
                continue;
            }
            if !self.day_matches(days, d) {
                t = (days + 1) * DAY;
                continue;
            }
            let day_start = days * DAY;
            let h = second_of_day / 3600;
            match next_bit(self.hours, h) {
                Some(next) if next < 24 && next != h => {
                    t = day_start + next * 3600;
                    continue;
                }
                Some(next) if next < 24 => {}
                _ => {
                    t = (days + 1) * DAY;
                    continue;
                }
            }
            let hour_start = day_start + h * 3600;
            let mi = (second_of_day % 3600) / 60;
            match next_bit(self.minutes, mi) {
                Some(next) if next < 60 && next != mi => {
                    t = hour_start + next * 60;
                    continue;
                }
                Some(next) if next < 60 => {}
                _ => {
                    t = hour_start + 3600;
                    continue;
                }
            }
            let minute_start = hour_start + mi * 60;
            let s = second_of_day % 60;
            match next_bit(self.seconds, s) {
                Some(next) if next < 60 => return Some(minute_start + next),
                _ => t = minute_start + 60,
            }
        }
        None
    }

    /// The first run strictly after Unix time `after`, in `zone` (see the module comment for
    /// the daylight-saving rule). `None` when nothing matches within eight years.
    pub fn next_after(&self, zone: &dyn Zone, after: i64) -> Option<i64> {
        let hourly = self.every_hour();
        let mut t = after;
        // Each round crosses one change of offset; real zones have a few a year.
        for _ in 0..64 {
            let o = i64::from(zone.offset(t + 1));
            let candidate = self.first_at_or_after(t + 1 + o)? - o;
            match first_change(zone, t + 1, candidate, o) {
                None => {
                    if !hourly && repeated(zone, candidate, o) {
                        t = candidate;
                        continue;
                    }
                    return Some(candidate);
                }
                Some(change) => {
                    let o2 = i64::from(zone.offset(change));
                    // Clocks went forward: wall times [change + o, change + o2) never happen.
                    if o2 > o
                        && !hourly
                        && self
                            .first_at_or_after(change + o)
                            .is_some_and(|w| w < change + o2)
                    {
                        return Some(change);
                    }
                    t = change - 1;
                }
            }
        }
        None
    }
}

/// Steps in which offsets are sampled when looking for a change; real zones never change
/// twice within six hours.
const PROBE: i64 = 6 * 3600;

/// The first instant in `[from, to]` whose offset differs from `o`.
fn first_change(zone: &dyn Zone, from: i64, to: i64, o: i64) -> Option<i64> {
    let mut lo = from - 1; // offset `o` holds at lo + 1 = from (by construction)
    let mut probe = from;
    loop {
        let at = probe.min(to);
        if i64::from(zone.offset(at)) != o {
            // Narrow down: `lo` has offset o (or is just before `from`), `at` does not.
            let mut hi = at;
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if i64::from(zone.offset(mid)) != o {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            return Some(hi);
        }
        if at >= to {
            return None;
        }
        lo = at;
        probe = at + PROBE;
    }
}

/// Whether the wall time of instant `t` (offset `o`) already happened earlier, before the
/// clocks went back.
fn repeated(zone: &dyn Zone, t: i64, o: i64) -> bool {
    let before = i64::from(zone.offset(t - DAY));
    before > o && i64::from(zone.offset(t - (before - o))) == before
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dur(s: &str) -> Result<Duration, crate::duration::BadDuration> {
        crate::duration::parse(s)
    }

    fn cal(line: &str) -> Calendar {
        match parse(line, dur).unwrap_or_else(|e| panic!("{line}: {e}")) {
            Schedule::Calendar(c) => c,
            other => panic!("{line}: {other:?}"),
        }
    }

    /// A zone with a standard offset and daylight-saving transitions at given instants.
    struct Fake {
        standard: i32,
        /// (instant, offset from then on), sorted.
        changes: Vec<(i64, i32)>,
    }

    impl Zone for Fake {
        fn offset(&self, t: i64) -> i32 {
            self.changes
                .iter()
                .rev()
                .find(|(at, _)| *at <= t)
                .map_or(self.standard, |(_, o)| *o)
        }
    }

    const EST: i32 = -5 * 3600;
    const EDT: i32 = -4 * 3600;

    /// UTC instant of a UTC date and time.
    fn utc(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64) -> i64 {
        days_from_civil(y, mo, d) * DAY + h * 3600 + mi * 60 + s
    }

    /// New York in 2025: clocks go forward on 9 March at 02:00 EST (07:00 UTC) and back on
    /// 2 November at 02:00 EDT (06:00 UTC).
    fn new_york() -> Fake {
        Fake {
            standard: EST,
            changes: vec![
                (utc(2025, 3, 9, 7, 0, 0), EDT),
                (utc(2025, 11, 2, 6, 0, 0), EST),
            ],
        }
    }

    struct Utc;
    impl Zone for Utc {
        fn offset(&self, _: i64) -> i32 {
            0
        }
    }

    /// Local wall time of an instant, as `YYYY-MM-DD HH:MM:SS ±HH`, for readable failures.
    fn wall(zone: &dyn Zone, t: i64) -> String {
        let o = i64::from(zone.offset(t));
        let w = t + o;
        let (y, m, d) = civil_from_days(w.div_euclid(DAY));
        let s = w.rem_euclid(DAY);
        format!(
            "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} {:+03}",
            s / 3600,
            s % 3600 / 60,
            s % 60,
            o / 3600
        )
    }

    /// The next `n` runs after `start`, as wall times.
    fn runs(line: &str, zone: &dyn Zone, start: i64, n: usize) -> Vec<String> {
        let c = cal(line);
        let mut t = start;
        let mut out = Vec::new();
        for _ in 0..n {
            t = c.next_after(zone, t).expect("a next run");
            out.push(wall(zone, t));
        }
        out
    }

    #[test]
    fn civil_dates_round_trip() {
        for days in (-800_000..800_000).step_by(997) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(civil_from_days(days_from_civil(2024, 2, 29)), (2024, 2, 29));
    }

    #[test]
    fn parse_accepts_the_cron_grammar() {
        let every = |s: u64| Ok(Schedule::Every(Duration::from_secs(s)));
        assert_eq!(parse("@every 1s", dur), every(1));
        assert_eq!(parse("@every 5m", dur), every(300));
        assert_eq!(parse("  @every 1h30m ", dur), every(5400));
        for (a, b) in [
            ("@hourly", "0 * * * *"),
            ("@daily", "0 0 * * *"),
            ("@midnight", "0 0 * * *"),
            ("@weekly", "0 0 * * 0"),
            ("@monthly", "0 0 1 * *"),
            ("@yearly", "0 0 1 1 *"),
            ("@annually", "0 0 1 1 *"),
            ("@HOURLY", "0 * * * *"),
            ("*/15 * * * *", "0,15,30,45 * * * *"),
            ("0 9-17/4 * * *", "0 9,13,17 * * *"),
            ("0 22/1 * * *", "0 22,23 * * *"),
            ("0 0 * jan-mar mon-fri", "0 0 * 1-3 1-5"),
            ("0 0 * * 7", "0 0 * * 0"),
            ("0 0 * * sun", "0 0 * * 0"),
            ("0 0 ? * *", "0 0 * * *"),
            ("0 */5 * * * *", "*/5 * * * *"),
            ("30 */5 * * * *", "30 */5 * * * *"),
        ] {
            assert_eq!(cal(a), cal(b), "{a} = {b}");
        }
        assert_ne!(cal("30 */5 * * * *"), cal("*/5 * * * *"));
    }

    #[test]
    fn parse_refuses_what_cron_would_refuse() {
        for (line, why) in [
            ("", "empty"),
            ("* * * *", "expected 5 fields"),
            ("* * * * * * *", "found 7"),
            ("60 * * * *", "minute: 60 is outside 0-59"),
            ("* 24 * * *", "hour: 24"),
            ("* * 0 * *", "day of month: 0"),
            ("* * * 13 *", "month: 13"),
            ("* * * * 8", "day of week: 8"),
            ("*/0 * * * *", "a step of 0"),
            ("5-2 * * * *", "runs backwards"),
            ("a * * * *", "\"a\" is not a number"),
            ("1, * * * *", "a value is missing"),
            ("* * * foo *", "\"foo\" is not a number"),
            ("@reboot", "unknown descriptor"),
            ("@every", "followed by a duration"),
            ("@every 5x", "invalid duration"),
            ("@every 100ms", "at least one second"),
            ("0 0 30 2 *", "30 February"),
            ("0 0 31 4,6,9,11 *", "no date matches"),
            ("TZ=UTC 0 0 * * *", "time zone prefix"),
        ] {
            let e = parse(line, dur).expect_err(line).to_string();
            assert!(e.contains(why), "{line:?}: {e}");
        }
        // 29 February exists, so it is accepted.
        cal("0 0 29 2 *");
    }

    #[test]
    fn next_runs_without_a_change_of_offset() {
        let start = utc(2025, 1, 1, 10, 7, 30); // a Wednesday
        let cases: &[(&str, &[&str])] = &[
            (
                "*/5 * * * *",
                &["2025-01-01 10:10:00 +00", "2025-01-01 10:15:00 +00"],
            ),
            (
                "* * * * * *",
                &["2025-01-01 10:07:31 +00", "2025-01-01 10:07:32 +00"],
            ),
            (
                "15,45 * * * * *",
                &["2025-01-01 10:07:45 +00", "2025-01-01 10:08:15 +00"],
            ),
            (
                "@hourly",
                &["2025-01-01 11:00:00 +00", "2025-01-01 12:00:00 +00"],
            ),
            (
                "@daily",
                &["2025-01-02 00:00:00 +00", "2025-01-03 00:00:00 +00"],
            ),
            (
                "0 9 * * 1-5",
                &[
                    "2025-01-02 09:00:00 +00",
                    "2025-01-03 09:00:00 +00",
                    "2025-01-06 09:00:00 +00",
                ],
            ),
            // Day of month or day of week when both are restricted: the 1st and Mondays.
            (
                "0 0 1 * mon",
                &[
                    "2025-01-06 00:00:00 +00",
                    "2025-01-13 00:00:00 +00",
                    "2025-01-20 00:00:00 +00",
                    "2025-01-27 00:00:00 +00",
                    "2025-02-01 00:00:00 +00",
                ],
            ),
            (
                "@monthly",
                &["2025-02-01 00:00:00 +00", "2025-03-01 00:00:00 +00"],
            ),
            ("@yearly", &["2026-01-01 00:00:00 +00"]),
            (
                "0 0 29 2 *",
                &["2028-02-29 00:00:00 +00", "2032-02-29 00:00:00 +00"],
            ),
            ("59 23 31 12 *", &["2025-12-31 23:59:00 +00"]),
        ];
        for (line, want) in cases {
            assert_eq!(runs(line, &Utc, start, want.len()), *want, "{line}");
        }
        // A fixed offset moves the wall time, not the rule.
        let tokyo = Fake {
            standard: 9 * 3600,
            changes: vec![],
        };
        assert_eq!(
            runs("0 9 * * *", &tokyo, start, 1),
            ["2025-01-02 09:00:00 +09"]
        );
    }

    #[test]
    fn clocks_going_forward_skip_nothing_and_double_nothing() {
        let ny = new_york();
        let night = utc(2025, 3, 9, 5, 0, 0); // 00:00 EST
        let cases: &[(&str, &[&str])] = &[
            // 02:30 does not exist that night: it runs once, at 03:00 EDT, then as usual.
            (
                "30 2 * * *",
                &["2025-03-09 03:00:00 -04", "2025-03-10 02:30:00 -04"],
            ),
            // Every minute of the skipped hour collapses into one run at 03:00.
            (
                "*/20 2 * * *",
                &["2025-03-09 03:00:00 -04", "2025-03-10 02:00:00 -04"],
            ),
            // A time after the gap is unaffected.
            (
                "30 3 * * *",
                &["2025-03-09 03:30:00 -04", "2025-03-10 03:30:00 -04"],
            ),
            // Hourly runs stay one hour apart in elapsed time.
            (
                "0 * * * *",
                &[
                    "2025-03-09 01:00:00 -05",
                    "2025-03-09 03:00:00 -04",
                    "2025-03-09 04:00:00 -04",
                ],
            ),
            (
                "*/30 * * * *",
                &[
                    "2025-03-09 00:30:00 -05",
                    "2025-03-09 01:00:00 -05",
                    "2025-03-09 01:30:00 -05",
                    "2025-03-09 03:00:00 -04",
                    "2025-03-09 03:30:00 -04",
                ],
            ),
            (
                "@daily",
                &["2025-03-10 00:00:00 -04", "2025-03-11 00:00:00 -04"],
            ),
        ];
        for (line, want) in cases {
            assert_eq!(runs(line, &ny, night, want.len()), *want, "{line}");
        }
    }

    #[test]
    fn clocks_going_back_run_a_repeated_time_once() {
        let ny = new_york();
        let night = utc(2025, 11, 2, 4, 0, 0); // 00:00 EDT
        let cases: &[(&str, &[&str])] = &[
            // 01:30 happens twice that night: it runs at the first one only.
            (
                "30 1 * * *",
                &["2025-11-02 01:30:00 -04", "2025-11-03 01:30:00 -05"],
            ),
            (
                "*/20 1 * * *",
                &[
                    "2025-11-02 01:00:00 -04",
                    "2025-11-02 01:20:00 -04",
                    "2025-11-02 01:40:00 -04",
                    "2025-11-03 01:00:00 -05",
                ],
            ),
            (
                "0 2 * * *",
                &["2025-11-02 02:00:00 -05", "2025-11-03 02:00:00 -05"],
            ),
            // Hourly runs stay one hour apart: 01:00 EDT, then 01:00 EST an hour later.
            (
                "0 * * * *",
                &[
                    "2025-11-02 01:00:00 -04",
                    "2025-11-02 01:00:00 -05",
                    "2025-11-02 02:00:00 -05",
                ],
            ),
            (
                "*/30 * * * *",
                &[
                    "2025-11-02 00:30:00 -04",
                    "2025-11-02 01:00:00 -04",
                    "2025-11-02 01:30:00 -04",
                    "2025-11-02 01:00:00 -05",
                    "2025-11-02 01:30:00 -05",
                    "2025-11-02 02:00:00 -05",
                ],
            ),
        ];
        for (line, want) in cases {
            assert_eq!(runs(line, &ny, night, want.len()), *want, "{line}");
        }
        // Asked in the middle of the repeated hour (01:10 EST), a daily 01:30 that already
        // ran at 01:30 EDT waits for the next day.
        let second_pass = utc(2025, 11, 2, 6, 10, 0);
        assert_eq!(
            runs("30 1 * * *", &ny, second_pass, 1),
            ["2025-11-03 01:30:00 -05"]
        );
    }

    #[test]
    fn a_change_at_midnight_still_runs_the_daily_job() {
        // Clocks go from 00:00 straight to 01:00 (as in several South American zones).
        let zone = Fake {
            standard: -4 * 3600,
            changes: vec![(utc(2025, 9, 7, 4, 0, 0), -3 * 3600)],
        };
        assert_eq!(
            runs("@daily", &zone, utc(2025, 9, 6, 12, 0, 0), 2),
            ["2025-09-07 01:00:00 -03", "2025-09-08 00:00:00 -03"]
        );
    }

    #[test]
    fn next_after_is_strictly_after() {
        let c = cal("0 * * * *");
        let t = utc(2025, 6, 1, 12, 0, 0);
        assert_eq!(c.next_after(&Utc, t - 1), Some(t));
        assert_eq!(c.next_after(&Utc, t), Some(t + 3600));
    }
}
