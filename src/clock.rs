//! Wall-clock timestamps in the board's local time zone, in the LogEntry format
//! `YYYY-MM-DD HH:MM:SS`, and the same timestamps in ISO 8601 with their offset (`iso8601`)
//! for what actiond publishes beyond its API (MQTT). It owns the one call into the C library
//! that needs `unsafe`: std has no local-time conversion, and the C library already knows the
//! board's zone (`/etc/localtime`, `TZ`) and its daylight-saving rules. `LocalZone` gives
//! schedules the same zone.

use std::time::{SystemTime, UNIX_EPOCH};

/// `time` as local `YYYY-MM-DD HH:MM:SS`. Written digit by digit: every execution takes two
/// of these, and `format!` with its padding cost about 2 500 instructions each against
/// under 200 this way (callgrind, docs/PERFORMANCE.md).
///
/// The last second's text is kept and given again for the same second: a run's start and
/// finish, and the next run's start, mostly fall in one second, and each `localtime_r` cost
/// about 900 instructions (musl checks `TZ` in the environment on every call). The same
/// second always gives the same text: neither C library reads the zone again once loaded
/// (musl only if `TZ` changes, and actiond never sets it).
pub fn local_datetime(time: SystemTime) -> String {
    static LAST: std::sync::Mutex<Option<(libc::time_t, String)>> = std::sync::Mutex::new(None);
    let secs = match time.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as libc::time_t,
        Err(_) => 0,
    };
    let mut last = LAST
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((at, text)) = last.as_ref()
        && *at == secs
    {
        return text.clone();
    }
    let text = match local_tm(secs) {
        Some(tm) => datetime(
            i64::from(tm.tm_year) + 1900,
            [tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec],
        ),
        None => String::new(),
    };
    *last = Some((secs, text.clone()));
    text
}

/// `YYYY-MM-DD HH:MM:SS` from the year and the other five fields (each 0 to 99; a field
/// out of that range is written modulo 100, which the C library never gives). A year
/// outside 0 to 9999 is written whole, as `{:04}` would.
fn datetime(year: i64, fields: [i32; 5]) -> String {
    let mut out = String::with_capacity(19);
    if (0..10_000).contains(&year) {
        let y = year as u32;
        for d in [y / 1000, y / 100 % 10, y / 10 % 10, y % 10] {
            out.push(char::from(b'0' + d as u8));
        }
    } else {
        out.push_str(&year.to_string());
    }
    for (i, f) in fields.iter().enumerate() {
        out.push(match i {
            0 | 1 => '-',
            2 => ' ',
            _ => ':',
        });
        let f = f.rem_euclid(100) as u8;
        out.push(char::from(b'0' + f / 10));
        out.push(char::from(b'0' + f % 10));
    }
    out
}

/// A timestamp of the `local_datetime` format in ISO 8601 with the offset `zone` had then
/// (`2026-11-27 21:45:09` → `2026-11-27T21:45:09+01:00`); `None` for text of another form
/// (an empty finish). The history keeps local wall-clock time only, so in the hour that a
/// change back from daylight-saving time repeats, the earlier of the two instants is given.
pub fn iso8601(local: &str, zone: &dyn crate::schedule::Zone) -> Option<String> {
    let b = local.as_bytes();
    let digits = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(r)?;
        part.iter()
            .all(u8::is_ascii_digit)
            .then(|| part.iter().fold(0, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let shape = b.len() == 19
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b' '
        && b[13] == b':'
        && b[16] == b':';
    if !shape {
        return None;
    }
    let (y, mo, d) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (h, mi, s) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    // The wall-clock time read as if it were UTC; the instant is that minus the offset in
    // force at the instant. Every offset the zone has within a day of it is tried.
    let wall = crate::schedule::days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s;
    let mut candidates: Vec<i32> = [wall - 86_400, wall, wall + 86_400]
        .iter()
        .map(|t| zone.offset(*t))
        .collect();
    candidates.sort_unstable();
    candidates.dedup();
    let offset = candidates
        .iter()
        .map(|o| (wall - i64::from(*o), *o))
        .filter(|(t, o)| zone.offset(*t) == *o)
        .min_by_key(|(t, _)| *t)
        // A time the clocks skipped (never written by `local_datetime`): the offset before.
        .map_or_else(|| zone.offset(wall - 86_400), |(_, o)| o);
    let sign = if offset < 0 { '-' } else { '+' };
    let abs = offset.unsigned_abs();
    Some(format!(
        "{}T{}{sign}{:02}:{:02}",
        &local[..10],
        &local[11..],
        abs / 3600,
        abs % 3600 / 60
    ))
}

/// The board's time zone as the C library knows it, for schedules (`schedule::Zone`).
/// Asking the C library rather than reading `/etc/localtime` ourselves keeps one source of
/// truth for the zone: the timestamps in the history and the schedules can never disagree,
/// and `TZ` and zones beyond the file's last transition (its POSIX rule) work as they do for
/// every other program on the board.
pub struct LocalZone;

impl crate::schedule::Zone for LocalZone {
    fn offset(&self, t: i64) -> i32 {
        let secs = libc::time_t::try_from(t).unwrap_or(0);
        local_tm(secs).map_or(0, |tm| i32::try_from(tm.tm_gmtoff).unwrap_or(0))
    }
}

#[allow(unsafe_code)]
fn local_tm(secs: libc::time_t) -> Option<libc::tm> {
    // SAFETY: `tm` is plain old data, so an all-zero value is valid; localtime_r writes only
    // into the buffer we pass and reads `secs` by pointer for the duration of the call. It is
    // the re-entrant variant, so concurrent callers do not share a static buffer, and
    // actiond never calls setenv, so the TZ state it reads is not mutated under it.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&secs, &mut tm).is_null() {
            None
        } else {
            Some(tm)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::{Zone, civil_from_days};

    #[test]
    fn the_local_zone_agrees_with_the_timestamps() {
        // Across a year, so a daylight-saving change of the test machine's zone is crossed.
        let start = 1_735_689_600; // 2025-01-01 UTC
        for t in (start..start + 366 * 86_400).step_by(3 * 86_400 + 3_607) {
            let o = i64::from(LocalZone.offset(t));
            let w = t + o;
            let (y, m, d) = civil_from_days(w.div_euclid(86_400));
            let s = w.rem_euclid(86_400);
            let want = format!(
                "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
                s / 3600,
                s % 3600 / 60,
                s % 60
            );
            let time = UNIX_EPOCH + std::time::Duration::from_secs(t as u64);
            assert_eq!(local_datetime(time), want, "at {t}");
        }
    }

    #[test]
    fn fields_are_written_as_the_padded_format_would() {
        for (year, fields, want) in [
            (2026, [11, 23, 9, 5, 7], "2026-11-23 09:05:07"),
            (1970, [1, 1, 0, 0, 0], "1970-01-01 00:00:00"),
            (999, [12, 31, 23, 59, 60], "0999-12-31 23:59:60"),
            (12345, [1, 2, 3, 4, 5], "12345-01-02 03:04:05"),
        ] {
            assert_eq!(datetime(year, fields), want);
        }
    }

    #[test]
    fn the_kept_second_gives_what_the_c_library_gives() {
        // Seconds apart, then the same second again (the kept text), then back and forth:
        // each the same as a fresh conversion.
        let base = UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        for (i, offset) in [0, 0, 1, 1, 0, 86_400 * 180, 86_400 * 180, 59, 0]
            .iter()
            .enumerate()
        {
            let t = base + std::time::Duration::from_millis(offset * 1000 + i as u64 * 7);
            let secs = t.duration_since(UNIX_EPOCH).unwrap().as_secs() as libc::time_t;
            let tm = local_tm(secs).unwrap();
            let fresh = datetime(
                i64::from(tm.tm_year) + 1900,
                [tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec],
            );
            assert_eq!(local_datetime(t), fresh, "call {i}");
        }
    }

    #[test]
    fn formats_as_the_log_entry_wants() {
        let s = local_datetime(SystemTime::now());
        assert_eq!(s.len(), 19, "{s}");
        let b = s.as_bytes();
        for (i, c) in b.iter().enumerate() {
            match i {
                4 | 7 => assert_eq!(*c, b'-'),
                10 => assert_eq!(*c, b' '),
                13 | 16 => assert_eq!(*c, b':'),
                _ => assert!(c.is_ascii_digit(), "{s}"),
            }
        }
    }

    /// A zone with daylight-saving time: UTC+1, and UTC+2 from `from` to `to` (Unix times).
    struct Summer {
        from: i64,
        to: i64,
    }

    impl Zone for Summer {
        fn offset(&self, t: i64) -> i32 {
            if (self.from..self.to).contains(&t) {
                7200
            } else {
                3600
            }
        }
    }

    #[test]
    fn iso8601_carries_the_offset_in_force() {
        struct Fixed(i32);
        impl Zone for Fixed {
            fn offset(&self, _: i64) -> i32 {
                self.0
            }
        }
        // 2026-03-29 01:00 UTC the clocks go forward (02:00 → 03:00 local), and 2026-10-25
        // 01:00 UTC back (03:00 → 02:00 local): Europe's rule.
        let summer = Summer {
            from: 1_774_746_000,
            to: 1_792_890_000,
        };
        let cases: &[(&str, &dyn Zone, Option<&str>)] = &[
            (
                "2026-11-27 21:45:09",
                &Fixed(0),
                Some("2026-11-27T21:45:09+00:00"),
            ),
            (
                "2026-11-27 21:45:09",
                &Fixed(3600),
                Some("2026-11-27T21:45:09+01:00"),
            ),
            (
                "2026-11-27 21:45:09",
                &Fixed(-34_200),
                Some("2026-11-27T21:45:09-09:30"),
            ),
            (
                "2026-01-15 12:00:00",
                &summer,
                Some("2026-01-15T12:00:00+01:00"),
            ),
            (
                "2026-07-15 12:00:00",
                &summer,
                Some("2026-07-15T12:00:00+02:00"),
            ),
            // Just before and after the jump forward.
            (
                "2026-03-29 01:59:59",
                &summer,
                Some("2026-03-29T01:59:59+01:00"),
            ),
            (
                "2026-03-29 03:00:00",
                &summer,
                Some("2026-03-29T03:00:00+02:00"),
            ),
            // The repeated hour: the earlier instant, still in summer time.
            (
                "2026-10-25 02:30:00",
                &summer,
                Some("2026-10-25T02:30:00+02:00"),
            ),
            (
                "2026-10-25 03:00:00",
                &summer,
                Some("2026-10-25T03:00:00+01:00"),
            ),
            // A skipped time (never written): the offset before the jump.
            (
                "2026-03-29 02:30:00",
                &summer,
                Some("2026-03-29T02:30:00+01:00"),
            ),
            ("", &Fixed(0), None),
            ("2026-11-27T21:45:09", &Fixed(0), None),
            ("2026-13-27 21:45:09", &Fixed(0), None),
            ("2026-11-27 24:45:09", &Fixed(0), None),
            ("2026-11-27 21:45:0x", &Fixed(0), None),
            ("12345-01-02 03:04:05", &Fixed(0), None),
        ];
        for (local, zone, want) in cases {
            assert_eq!(iso8601(local, *zone).as_deref(), *want, "{local:?}");
        }
        // The board's own zone, through the C library, agrees with local_datetime.
        let now = SystemTime::now();
        let iso = iso8601(&local_datetime(now), &LocalZone).unwrap();
        assert_eq!(iso.len(), 25, "{iso}");
    }
}
