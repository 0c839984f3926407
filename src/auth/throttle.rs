//! Login throttling. Failed logins are counted over the last 60 s per (address, username),
//! per address, per (network, username), per network, and per username across all networks.
//! An address is one IPv4 or IPv6 address (an IPv4-mapped IPv6 address is the IPv4 address);
//! a network is an IPv6 /64 (`identity::Network`), an IPv4 address being its own.
//!
//! Both are needed. One IPv6 host may take any address of its /64, so an address alone could
//! be renewed at will; but on a home LAN the /64 is the whole household, so a cap on the /64
//! alone lets one hostile (or buggy) device lock every IPv6 user of the house out. So:
//!
//! - A pair that reached `per_user` may not try that username again from that address until
//!   its oldest failure leaves the window; an address that reached `per_address` may not try
//!   any username.
//! - A network that reached `NETWORK_FACTOR` times `per_address` (failures from all its
//!   addresses together) may not try any username, except a user logging in from a network
//!   they logged in from before (remembered for `KNOWN_FOR`): failures other addresses caused
//!   with other names never stop them.
//! - A username that reached its ceiling `per_username` (failures from every network together)
//!   may not be tried from a network it has never logged in from until the window passes, so
//!   guessing from many addresses is slowed to the ceiling per minute. A network the user
//!   logged in from before is held to the same ceiling counting only that network's own
//!   failures for the name: the real user still logs in from home while the name is guessed
//!   from elsewhere, and a device in the user's own /64 guessing the name still meets a
//!   ceiling (it then stops the user from that network too, until the minute passes: only
//!   failures of the user's own name do). Names that no user has are counted the same way,
//!   so the answers do not tell which names exist; and when the table is full, a name under
//!   its ceiling is forgotten before one over it, so a flood of made-up names cannot push a
//!   guessed one out.
//!
//! A success clears the failures of its own pair only: logging in as yourself does not reset
//! anyone else's count, nor the address's or the network's. Every table is bounded: when one
//! is full, the entry with the oldest activity is forgotten, so a flood of addresses or names
//! cannot grow memory. Pure: the caller passes the time and the caps.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use super::identity::Network;

pub const WINDOW: Duration = Duration::from_secs(60);
/// Entries remembered at most, in each table.
pub const MAX_ENTRIES: usize = 1024;
/// How long a network where a user logged in stays exempt from that user's ceiling.
pub const KNOWN_FOR: Duration = Duration::from_secs(30 * 24 * 3600);
/// A username is remembered by at most its first this many bytes: longer names sharing them
/// share a count, which only makes the throttle stricter.
const NAME_BYTES: usize = 64;

/// The caps, from the config (`loginFailuresPerUser`, `loginFailuresPerAddress`,
/// `loginFailuresPerUsername`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    pub per_user: usize,
    pub per_address: usize,
    pub per_username: usize,
}

/// How many times `per_address` the addresses of one network (an IPv6 /64) may fail together
/// within the window: enough for several devices of a household at once, and a bound on a
/// host that takes a new address of its /64 for every few guesses.
pub const NETWORK_FACTOR: usize = 4;

/// Why an attempt may not be made now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Throttled {
    /// Too many failures from this address, for this name or for any.
    Address,
    /// Too many failures from this address's IPv6 /64 together, and the user never logged in
    /// from it.
    Network,
    /// Too many failures for this username: from all networks together, and this network is
    /// not one the user logged in from; or from this network, which is.
    Username,
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

/// Makes room for `key` in a full table: first by dropping what `stale` says is over, then the
/// entry `age` says was least recently active.
fn make_room<K: std::hash::Hash + Eq + Clone, V, A: Ord>(
    table: &mut HashMap<K, V>,
    key: &K,
    mut stale: impl FnMut(&mut V) -> bool,
    age: impl Fn(&V) -> A,
) {
    if table.contains_key(key) || table.len() < MAX_ENTRIES {
        return;
    }
    table.retain(|_, v| !stale(v));
    if table.len() >= MAX_ENTRIES {
        let oldest = table
            .iter()
            .min_by_key(|(_, v)| age(v))
            .map(|(k, _)| k.clone());
        if let Some(k) = oldest {
            table.remove(&k);
        }
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
    make_room(table, &key, |f| f.recent(now) == 0, Failures::last);
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
    by_network_name: HashMap<(Network, String), Failures>,
    by_network: HashMap<Network, Failures>,
    by_name: HashMap<String, Failures>,
    /// Where each user last logged in, and when.
    known: HashMap<(Network, String), Instant>,
}

/// What a client address counts as here: the address itself (an IPv4-mapped IPv6 address as
/// the IPv4 address it carries), and its network.
fn keys(addr: IpAddr) -> (IpAddr, Network) {
    (addr.to_canonical(), Network::of(addr))
}

fn recent<K: std::hash::Hash + Eq>(
    table: &mut HashMap<K, Failures>,
    key: &K,
    now: Instant,
) -> usize {
    table.get_mut(key).map_or(0, |f| f.recent(now))
}

/// Takes back the newest failure under `key` (a success's own attempt), forgetting the key
/// when none is left.
fn take_back<K: std::hash::Hash + Eq>(table: &mut HashMap<K, Failures>, key: &K) {
    if let Some(f) = table.get_mut(key) {
        f.0.pop();
        if f.0.is_empty() {
            table.remove(key);
        }
    }
}

impl Throttle {
    /// Whether `addr` may try to log in as `username` now.
    pub fn allows(
        &mut self,
        addr: IpAddr,
        username: &str,
        now: Instant,
        caps: Caps,
    ) -> Result<(), Throttled> {
        let (host, net) = keys(addr);
        let name = name_key(username);
        let pair = (host, name);
        if recent(&mut self.by_pair, &pair, now) >= caps.per_user
            || recent(&mut self.by_address, &host, now) >= caps.per_address
        {
            return Err(Throttled::Address);
        }
        let (_, name) = pair;
        if self.is_known(net, name.clone(), now) {
            // Only failures of this name from this network stop a network the user knows.
            let own = recent(&mut self.by_network_name, &(net, name), now);
            return if own >= caps.per_username {
                Err(Throttled::Username)
            } else {
                Ok(())
            };
        }
        let network_cap = caps.per_address.saturating_mul(NETWORK_FACTOR);
        if recent(&mut self.by_network, &net, now) >= network_cap {
            return Err(Throttled::Network);
        }
        if recent(&mut self.by_name, &name, now) >= caps.per_username {
            return Err(Throttled::Username);
        }
        Ok(())
    }

    /// Whether `username` logged in from `addr`'s network within `KNOWN_FOR`.
    pub fn knows(&self, addr: IpAddr, username: &str, now: Instant) -> bool {
        self.is_known(Network::of(addr), name_key(username), now)
    }

    fn is_known(&self, net: Network, name: String, now: Instant) -> bool {
        self.known
            .get(&(net, name))
            .is_some_and(|t| now.duration_since(*t) < KNOWN_FOR)
    }

    /// Records a failed login from `addr` as `username`.
    pub fn failed(&mut self, addr: IpAddr, username: &str, now: Instant, caps: Caps) {
        let (host, net) = keys(addr);
        let name = name_key(username);
        // A name over its ceiling is the last to be forgotten.
        let ceiling = caps.per_username;
        make_room(
            &mut self.by_name,
            &name,
            |f| f.recent(now) == 0,
            |f| Some((f.0.len() >= ceiling, f.last())),
        );
        // Known networks may try past the ceiling, and a success takes its own attempt back:
        // room beyond the cap keeps the count at the cap through both.
        let keep = ceiling.saturating_mul(2).saturating_add(16);
        self.by_name
            .entry(name.clone())
            .or_default()
            .push(now, keep);
        record(&mut self.by_network_name, (net, name.clone()), now, keep);
        record(&mut self.by_pair, (host, name), now, caps.per_user);
        record(&mut self.by_address, host, now, caps.per_address);
        let network_cap = caps.per_address.saturating_mul(NETWORK_FACTOR);
        // Known pairs try past the network's cap: kept past it likewise.
        record(
            &mut self.by_network,
            net,
            now,
            network_cap.saturating_add(16),
        );
    }

    /// A successful login of `username` from `addr`, whose attempt was recorded as failed
    /// beforehand: that pair's failures are cleared, the attempt no longer counts against the
    /// address, the network or the name, and the network is known for the user from now on.
    /// Other pairs, and the other failures of the address, the network and the name, stay.
    pub fn succeeded(&mut self, addr: IpAddr, username: &str, now: Instant) {
        let (host, net) = keys(addr);
        let name = name_key(username);
        self.by_pair.remove(&(host, name.clone()));
        take_back(&mut self.by_address, &host);
        take_back(&mut self.by_network, &net);
        take_back(&mut self.by_network_name, &(net, name.clone()));
        if let Some(f) = self.by_name.get_mut(&name) {
            f.0.pop();
        }
        let key = (net, name);
        make_room(
            &mut self.known,
            &key,
            |t| now.duration_since(*t) >= KNOWN_FOR,
            |t| Some(*t),
        );
        self.known.insert(key, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPS: Caps = Caps {
        per_user: 5,
        per_address: 20,
        per_username: 12,
    };

    fn ip(n: u32) -> IpAddr {
        IpAddr::from(n.to_be_bytes())
    }

    fn v6(s: &str) -> IpAddr {
        IpAddr::V6(s.parse().unwrap())
    }

    fn at(start: Instant, secs: u64) -> Instant {
        start + Duration::from_secs(secs)
    }

    /// The tests' shorthand.
    impl Throttle {
        fn ok(&mut self, addr: IpAddr, name: &str, now: Instant) -> bool {
            self.allows(addr, name, now, CAPS).is_ok()
        }

        fn fail(&mut self, addr: IpAddr, name: &str, now: Instant) {
            self.failed(addr, name, now, CAPS);
        }
    }

    #[test]
    fn five_failures_for_one_name_lock_that_name_from_that_address_for_the_window() {
        let mut t = Throttle::default();
        let start = Instant::now();
        for i in 0..5 {
            assert!(t.ok(ip(1), "alice", at(start, i)), "attempt {i}");
            t.fail(ip(1), "alice", at(start, i));
        }
        let later = at(start, 10);
        assert_eq!(
            t.allows(ip(1), "alice", later, CAPS),
            Err(Throttled::Address)
        );
        assert!(t.ok(ip(1), "bob", later), "another name");
        assert!(t.ok(ip(2), "alice", later), "another address");
        // The first failure (at 0 s) leaves the window at 60 s.
        assert!(!t.ok(ip(1), "alice", at(start, 59)));
        assert!(t.ok(ip(1), "alice", at(start, 60)));
    }

    #[test]
    fn failures_spread_over_more_than_a_minute_never_lock() {
        let mut t = Throttle::default();
        let start = Instant::now();
        for i in 0..40 {
            let now = at(start, i * 13);
            assert!(t.ok(ip(1), "alice", now), "attempt {i}");
            t.fail(ip(1), "alice", now);
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
                if t.ok(ip(1), "alice", now) {
                    t.fail(ip(1), "alice", now);
                    guesses += 1;
                }
            }
            assert!(t.ok(ip(1), "bob", now));
            t.fail(ip(1), "bob", now);
            t.succeeded(ip(1), "bob", now);
        }
        assert_eq!(guesses, 5, "only five guesses at alice in the window");
        assert!(!t.ok(ip(1), "alice", at(start, 5)));
        assert!(t.ok(ip(1), "bob", at(start, 5)));
    }

    #[test]
    fn many_names_from_one_address_meet_the_address_cap() {
        let mut t = Throttle::default();
        let now = Instant::now();
        for i in 0..20 {
            let name = format!("user{i}");
            assert!(t.ok(ip(1), &name, now), "name {i}");
            t.fail(ip(1), &name, now);
        }
        assert!(!t.ok(ip(1), "alice", now), "the address is locked");
        assert!(t.ok(ip(2), "alice", now));
        // A success of one of them does not reopen the address for all.
        t.succeeded(ip(1), "user0", now);
        assert!(t.ok(ip(1), "user0", now));
        t.fail(ip(1), "user0", now);
        assert!(!t.ok(ip(1), "alice", now));
    }

    /// An IPv6 address is counted alone, and its /64 together: one device of a household
    /// failing with made-up names stops that device, not the other devices of the /64, nor
    /// a user logging in from a network they know.
    #[test]
    fn one_device_of_a_64_does_not_lock_the_household_out() {
        let mut t = Throttle::default();
        let start = Instant::now();
        let home = |n: u32| v6(&format!("fd30:c::{n:x}"));
        // alice logged in from her phone once.
        t.fail(home(0xa11c), "alice", start);
        t.succeeded(home(0xa11c), "alice", start);
        let now = at(start, 100);
        for i in 0..CAPS.per_address {
            t.fail(home(0xbad), &format!("nobody{i}"), now);
        }
        assert_eq!(
            t.allows(home(0xbad), "alice", now, CAPS),
            Err(Throttled::Address),
            "the device that failed"
        );
        assert!(t.ok(home(0xa11c), "alice", now), "alice's phone");
        assert!(
            t.ok(home(0xa11d), "alice", now),
            "alice's new privacy address"
        );
        assert!(t.ok(home(0xb0b), "bob", now), "bob, never logged in before");
        // The device takes new addresses of the /64 and fails on: the /64 meets its cap,
        // four times an address's. A user who never logged in from it waits; alice does not.
        for a in 1..NETWORK_FACTOR as u32 {
            for i in 0..CAPS.per_address {
                let addr = home(0xbad + a);
                assert!(t.ok(addr, &format!("x{a}-{i}"), now), "{a} {i}");
                t.fail(addr, &format!("x{a}-{i}"), now);
            }
        }
        assert_eq!(
            t.allows(home(0xb0b), "bob", now, CAPS),
            Err(Throttled::Network)
        );
        assert!(t.ok(home(0xa11c), "alice", now));
        assert!(t.ok(home(0xa11d), "alice", now));
        assert!(t.ok(v6("fd30:c:0:1::b0b"), "bob", now), "another /64");
        assert!(
            t.ok(home(0xb0b), "bob", at(start, 160)),
            "the window passed"
        );
        // An IPv4-mapped address is the IPv4 address.
        for _ in 0..CAPS.per_user {
            t.fail(ip(0x0a00_0001), "bob", now);
        }
        assert!(!t.ok(v6("::ffff:10.0.0.1"), "bob", now));
    }

    /// Guessing alice's password from many addresses of her own /64 (a network she knows)
    /// still meets her ceiling, counted over that /64: failures of her own name stop her
    /// there too, for the window.
    #[test]
    fn guessing_a_name_from_its_own_64_meets_the_ceiling() {
        let mut t = Throttle::default();
        let start = Instant::now();
        let home = |n: u32| v6(&format!("2001:db8::{n:x}"));
        t.fail(home(1), "alice", start);
        t.succeeded(home(1), "alice", start);
        let now = at(start, 100);
        let mut guesses = 0;
        for a in 100..200 {
            for _ in 0..CAPS.per_user {
                if t.ok(home(a), "alice", now) {
                    t.fail(home(a), "alice", now);
                    guesses += 1;
                }
            }
        }
        assert_eq!(guesses, CAPS.per_username);
        assert_eq!(
            t.allows(home(1), "alice", now, CAPS),
            Err(Throttled::Username)
        );
        // From elsewhere, the global ceiling holds; bob is not concerned.
        assert!(!t.ok(v6("2001:db8:1::1"), "alice", now));
        assert!(t.ok(home(7), "bob", now));
        assert!(t.ok(home(1), "alice", at(start, 160)));
    }

    /// Many addresses guessing one name meet its ceiling; a network the user logged in from
    /// before is exempt; made-up names cannot push it out; it passes with the window.
    #[test]
    fn the_username_ceiling_spans_addresses_but_spares_known_ones() {
        let mut t = Throttle::default();
        let start = Instant::now();
        // alice logged in from home (ip 1) earlier.
        t.fail(ip(1), "alice", start);
        t.succeeded(ip(1), "alice", start);
        let now = at(start, 100);
        let mut guesses = 0;
        for a in 10..50 {
            for _ in 0..5 {
                if t.ok(ip(a), "alice", now) {
                    t.fail(ip(a), "alice", now);
                    guesses += 1;
                }
            }
        }
        assert_eq!(guesses, CAPS.per_username, "40 addresses x 5 guesses");
        assert_eq!(
            t.allows(ip(99), "alice", now, CAPS),
            Err(Throttled::Username)
        );
        assert!(t.ok(ip(1), "alice", now), "home is exempt");
        // alice logs in from home meanwhile: the ceiling still holds for everyone else.
        t.fail(ip(1), "alice", now);
        t.succeeded(ip(1), "alice", now);
        assert!(!t.ok(ip(99), "alice", now));
        assert!(t.ok(ip(99), "bob", now), "another user is not concerned");
        // A flood of made-up names from many addresses fills the table, but forgets the
        // names under their ceiling first: alice's ceiling holds.
        for n in 0..(2 * MAX_ENTRIES as u32) {
            t.fail(ip(1000 + n / 10), &format!("made-up{n}"), now);
        }
        assert!(t.by_name.len() <= MAX_ENTRIES);
        assert_eq!(
            t.allows(ip(99), "alice", now, CAPS),
            Err(Throttled::Username)
        );
        assert!(t.ok(ip(99), "alice", at(start, 160)), "the window passed");
    }

    #[test]
    fn long_names_and_floods_stay_bounded() {
        let mut t = Throttle::default();
        let now = Instant::now();
        let long = "é".repeat(10_000);
        t.fail(ip(1), &long, now);
        assert!(t.by_pair.keys().all(|(_, n)| n.len() <= NAME_BYTES));
        for n in 0..(MAX_ENTRIES as u32 + 100) {
            let when = now + Duration::from_millis(u64::from(n));
            t.fail(ip(n + 10), "alice", when);
            t.fail(ip(1), &format!("name{n}"), when);
            t.succeeded(ip(n + 10), &format!("name{n}"), when);
        }
        assert!(t.by_pair.len() <= MAX_ENTRIES);
        assert!(t.by_address.len() <= MAX_ENTRIES);
        assert!(t.by_name.len() <= MAX_ENTRIES);
        assert!(t.known.len() <= MAX_ENTRIES);
    }
}
