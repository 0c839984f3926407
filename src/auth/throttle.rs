//! Login throttling per client address (SPEC §6.2): after 5 failed logins within 60 s from
//! one address, further attempts are refused until the oldest of those failures is 60 s old.
//! The table is bounded: when it is full, the address with the oldest activity is forgotten,
//! so a flood from many addresses cannot grow memory. Pure: the caller passes the time.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

pub const MAX_FAILURES: usize = 5;
pub const WINDOW: Duration = Duration::from_secs(60);
/// Addresses remembered at most.
pub const MAX_ADDRESSES: usize = 1024;

#[derive(Debug, Default)]
pub struct Throttle {
    failures: HashMap<IpAddr, Vec<Instant>>,
}

impl Throttle {
    /// Whether `addr` may try to log in now.
    pub fn allows(&mut self, addr: IpAddr, now: Instant) -> bool {
        match self.failures.get_mut(&addr) {
            None => true,
            Some(times) => {
                times.retain(|t| now.duration_since(*t) < WINDOW);
                let ok = times.len() < MAX_FAILURES;
                if times.is_empty() {
                    self.failures.remove(&addr);
                }
                ok
            }
        }
    }

    /// Records a failed login from `addr`.
    pub fn failed(&mut self, addr: IpAddr, now: Instant) {
        if !self.failures.contains_key(&addr) && self.failures.len() >= MAX_ADDRESSES {
            let oldest = self
                .failures
                .iter()
                .min_by_key(|(_, times)| times.last().copied())
                .map(|(a, _)| *a);
            if let Some(a) = oldest {
                self.failures.remove(&a);
            }
        }
        let times = self.failures.entry(addr).or_default();
        times.retain(|t| now.duration_since(*t) < WINDOW);
        times.push(now);
        // Only the newest MAX_FAILURES matter for the rule.
        if times.len() > MAX_FAILURES {
            times.remove(0);
        }
    }

    /// A successful login clears the address's failures.
    pub fn succeeded(&mut self, addr: IpAddr) {
        self.failures.remove(&addr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(n: u32) -> IpAddr {
        IpAddr::from(n.to_be_bytes())
    }

    #[test]
    fn five_failures_in_a_minute_lock_the_address_until_the_window_passes() {
        let mut t = Throttle::default();
        let start = Instant::now();
        for i in 0..5 {
            assert!(t.allows(ip(1), start), "attempt {i}");
            t.failed(ip(1), start + Duration::from_secs(i));
        }
        assert!(!t.allows(ip(1), start + Duration::from_secs(10)));
        assert!(
            t.allows(ip(2), start + Duration::from_secs(10)),
            "other addresses are not affected"
        );
        // The first failure (at 0 s) leaves the window at 60 s.
        assert!(!t.allows(ip(1), start + Duration::from_secs(59)));
        assert!(t.allows(ip(1), start + Duration::from_secs(60)));
    }

    #[test]
    fn failures_spread_over_more_than_a_minute_never_lock() {
        let mut t = Throttle::default();
        let start = Instant::now();
        for i in 0..20 {
            let now = start + Duration::from_secs(i * 13);
            assert!(t.allows(ip(1), now), "attempt {i}");
            t.failed(ip(1), now);
        }
    }

    #[test]
    fn success_clears_and_the_table_is_bounded() {
        let mut t = Throttle::default();
        let now = Instant::now();
        for _ in 0..5 {
            t.failed(ip(1), now);
        }
        t.succeeded(ip(1));
        assert!(t.allows(ip(1), now));
        for n in 0..(MAX_ADDRESSES as u32 + 100) {
            t.failed(ip(n + 10), now + Duration::from_millis(u64::from(n)));
        }
        assert!(t.failures.len() <= MAX_ADDRESSES);
    }
}
