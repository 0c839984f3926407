//! Login throttling: failed logins are counted per (client address, username) and per client
//! address, each over the last 60 s. A pair that reached its cap may not try that username
//! again from that address until its oldest failure leaves the window; an address that
//! reached its (higher) cap may not try any username. A success clears the failures of its
//! own pair only: logging in as yourself does not reset anyone else's count, nor the
//! address's. Both tables are bounded: when one is full, the entry with the oldest activity
//! is forgotten, so a flood of addresses or names cannot grow memory. Pure: the caller
//! passes the time and the caps.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

pub const WINDOW: Duration = Duration::from_secs(60);
/// Entries remembered at most, in each table.
pub const MAX_ENTRIES: usize = 1024;
/// A username is remembered by at most its first this many bytes: longer names sharing them
/// share a count, which only makes the throttle stricter.
const NAME_BYTES: usize = 64;

/// The caps, from the config (`loginFailuresPerUser`, `loginFailuresPerAddress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    pub per_user: usize,
    pub per_address: usize,
}

/// Recent failures under one key, newest last; at most the largest cap of them are kept.
#[derive(Debug, Default)]
struct Failures(Vec<Instant>);

impl Failures {
    fn recent(&mut self, now: Instant) -> usize {
        self.0.retain(|t| now.duration_since(*t) < WINDOW);
        self.0.len()
    }

    fn push(&mut self, now: Instant, keep: usize) {
        self.recent(now);
        self.0.push(now);
        let over = self.0.len().saturating_sub(keep.max(1));
        self.0.drain(..over);
    }

    fn last(&self) -> Option<Instant> {
        self.0.last().copied()
    }
}

/// Adds a failure under `key`, forgetting the least recently active key when the table is
/// full.
fn record<K: std::hash::Hash + Eq + Clone>(
    table: &mut HashMap<K, Failures>,
    key: K,
    now: Instant,
    keep: usize,
) {
    if !table.contains_key(&key) && table.len() >= MAX_ENTRIES {
        table.retain(|_, f| f.recent(now) > 0);
        if table.len() >= MAX_ENTRIES {
            let oldest = table
                .iter()
                .min_by_key(|(_, f)| f.last())
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                table.remove(&k);
            }
        }
    }
    table.entry(key).or_default().push(now, keep);
}

fn name_key(username: &str) -> String {
    let mut end = username.len().min(NAME_BYTES);
    while !username.is_char_boundary(end) {
        end -= 1;
    }
    username[..end].to_string()
}

#[derive(Debug, Default)]
pub struct Throttle {
    by_pair: HashMap<(IpAddr, String), Failures>,
    by_address: HashMap<IpAddr, Failures>,
}

impl Throttle {
    /// Whether `addr` may try to log in as `username` now.
    pub fn allows(&mut self, addr: IpAddr, username: &str, now: Instant, caps: Caps) -> bool {
        let pair = (addr, name_key(username));
        let user_ok = self
            .by_pair
            .get_mut(&pair)
            .is_none_or(|f| f.recent(now) < caps.per_user);
        let address_ok = self
            .by_address
            .get_mut(&addr)
            .is_none_or(|f| f.recent(now) < caps.per_address);
        user_ok && address_ok
    }

    /// Records a failed login from `addr` as `username`.
    pub fn failed(&mut self, addr: IpAddr, username: &str, now: Instant, caps: Caps) {
        let pair = (addr, name_key(username));
        record(&mut self.by_pair, pair, now, caps.per_user);
        record(&mut self.by_address, addr, now, caps.per_address);
    }

    /// A successful login of `username` from `addr`, whose attempt was recorded as failed
    /// beforehand: that pair's failures are cleared, and the attempt no longer counts
    /// against the address. Other pairs, and the address's other failures, stay.
    pub fn succeeded(&mut self, addr: IpAddr, username: &str) {
        self.by_pair.remove(&(addr, name_key(username)));
        if let Some(f) = self.by_address.get_mut(&addr) {
            f.0.pop();
            if f.0.is_empty() {
                self.by_address.remove(&addr);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPS: Caps = Caps {
        per_user: 5,
        per_address: 20,
    };

    fn ip(n: u32) -> IpAddr {
        IpAddr::from(n.to_be_bytes())
    }

    fn at(start: Instant, secs: u64) -> Instant {
        start + Duration::from_secs(secs)
    }

    #[test]
    fn five_failures_for_one_name_lock_that_name_from_that_address_for_the_window() {
        let mut t = Throttle::default();
        let start = Instant::now();
        for i in 0..5 {
            assert!(t.allows(ip(1), "alice", at(start, i), CAPS), "attempt {i}");
            t.failed(ip(1), "alice", at(start, i), CAPS);
        }
        let later = at(start, 10);
        assert!(!t.allows(ip(1), "alice", later, CAPS));
        assert!(t.allows(ip(1), "bob", later, CAPS), "another name");
        assert!(t.allows(ip(2), "alice", later, CAPS), "another address");
        // The first failure (at 0 s) leaves the window at 60 s.
        assert!(!t.allows(ip(1), "alice", at(start, 59), CAPS));
        assert!(t.allows(ip(1), "alice", at(start, 60), CAPS));
    }

    #[test]
    fn failures_spread_over_more_than_a_minute_never_lock() {
        let mut t = Throttle::default();
        let start = Instant::now();
        for i in 0..40 {
            let now = at(start, i * 13);
            assert!(t.allows(ip(1), "alice", now, CAPS), "attempt {i}");
            t.failed(ip(1), "alice", now, CAPS);
        }
    }

    #[test]
    fn a_success_as_yourself_resets_nobody_else() {
        let mut t = Throttle::default();
        let start = Instant::now();
        // Four guesses at alice, then a good login as bob (counted first, then cleared), over
        // and over: the guesses at alice still add up.
        let mut guesses = 0;
        for round in 0..3 {
            let now = at(start, round);
            for _ in 0..4 {
                if t.allows(ip(1), "alice", now, CAPS) {
                    t.failed(ip(1), "alice", now, CAPS);
                    guesses += 1;
                }
            }
            assert!(t.allows(ip(1), "bob", now, CAPS));
            t.failed(ip(1), "bob", now, CAPS);
            t.succeeded(ip(1), "bob");
        }
        assert_eq!(guesses, 5, "only five guesses at alice in the window");
        assert!(!t.allows(ip(1), "alice", at(start, 5), CAPS));
        assert!(t.allows(ip(1), "bob", at(start, 5), CAPS));
    }

    #[test]
    fn many_names_from_one_address_meet_the_address_cap() {
        let mut t = Throttle::default();
        let now = Instant::now();
        for i in 0..20 {
            let name = format!("user{i}");
            assert!(t.allows(ip(1), &name, now, CAPS), "name {i}");
            t.failed(ip(1), &name, now, CAPS);
        }
        assert!(
            !t.allows(ip(1), "alice", now, CAPS),
            "the address is locked"
        );
        assert!(t.allows(ip(2), "alice", now, CAPS));
        // A success of one of them does not reopen the address for all.
        t.succeeded(ip(1), "user0");
        assert!(t.allows(ip(1), "user0", now, CAPS));
        t.failed(ip(1), "user0", now, CAPS);
        assert!(!t.allows(ip(1), "alice", now, CAPS));
    }

    #[test]
    fn long_names_and_floods_stay_bounded() {
        let mut t = Throttle::default();
        let now = Instant::now();
        let long = "é".repeat(10_000);
        t.failed(ip(1), &long, now, CAPS);
        assert!(t.by_pair.keys().all(|(_, n)| n.len() <= NAME_BYTES));
        for n in 0..(MAX_ENTRIES as u32 + 100) {
            let when = now + Duration::from_millis(u64::from(n));
            t.failed(ip(n + 10), "alice", when, CAPS);
            t.failed(ip(1), &format!("name{n}"), when, CAPS);
        }
        assert!(t.by_pair.len() <= MAX_ENTRIES);
        assert!(t.by_address.len() <= MAX_ENTRIES);
    }
}
