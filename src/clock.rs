//! Wall-clock timestamps in the board's local time zone, in the LogEntry format
//! `YYYY-MM-DD HH:MM:SS` (SPEC §4). It owns the one call into the C library that needs
//! `unsafe`: std has no local-time conversion, and the C library already knows the board's
//! zone (`/etc/localtime`, `TZ`) and its daylight-saving rules.

use std::time::{SystemTime, UNIX_EPOCH};

/// `time` as local `YYYY-MM-DD HH:MM:SS`.
pub fn local_datetime(time: SystemTime) -> String {
    let secs = match time.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as libc::time_t,
        Err(_) => 0,
    };
    match local_tm(secs) {
        Some(tm) => format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
            tm.tm_year + 1900,
            tm.tm_mon + 1,
            tm.tm_mday,
            tm.tm_hour,
            tm.tm_min,
            tm.tm_sec
        ),
        None => String::new(),
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
