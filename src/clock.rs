//! Wall-clock timestamps in the board's local time zone, in the LogEntry format
//! `YYYY-MM-DD HH:MM:SS`. It owns the one call into the C library that needs
//! `unsafe`: std has no local-time conversion, and the C library already knows the board's
//! zone (`/etc/localtime`, `TZ`) and its daylight-saving rules. `LocalZone` gives schedules the
//! same zone.

use std::time::{SystemTime, UNIX_EPOCH};

/// `time` as local `YYYY-MM-DD HH:MM:SS`. Written digit by digit: every execution takes two
/// of these, and `format!` with its padding cost about 2 500 instructions each against
/// under 200 this way (callgrind, docs/PERFORMANCE.md).
pub fn local_datetime(time: SystemTime) -> String {
    let secs = match time.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as libc::time_t,
        Err(_) => 0,
    };
    match local_tm(secs) {
        Some(tm) => datetime(
            i64::from(tm.tm_year) + 1900,
            [tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec],
        ),
        None => String::new(),
    }
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
}
