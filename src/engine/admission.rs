//! Admission: whether a new execution may run or must be recorded as blocked, by the
//! limits: `maxConcurrent` (runs of the same binding at once), `maxConcurrentExecutions`
//! (runs of anything at once) and each caller's share of it, and `maxRate` (runs of the
//! binding within a sliding window). A pure function of counts and start times, so the engine
//! can call it under the locks that guard the tables it counts and insert right after, and
//! the rules are tested here with tables. It must not lock, read clocks or touch the history
//! itself.
//!
//! The pool of `maxConcurrentExecutions` is shared out among callers ([`Holder`]: a user by
//! name, a guest by its network, MQTT, each trigger), so that no caller can take all of it:
//! one caller holds at most the pool less a quarter, one guest network the pool less half,
//! and guests together the pool less a quarter ([`pool_shares`]; a pool below 4 is not
//! shared). A run cannot be taken back
//! once it started, and when a newcomer will come cannot be known, so the shares hold even on
//! a quiet board: a lone caller gets three quarters of the pool, never all of it.

use std::time::Instant;

use crate::config::RateRule;
use crate::execution::{Blocked, Holder};

/// The new execution, as admission sees it.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    pub binding_id: &'a str,
    /// Whose run it would be.
    pub holder: &'a Holder,
    /// When it was created: rate windows end here.
    pub started: Instant,
    /// Its action's `maxConcurrent`.
    pub max_concurrent: usize,
    /// Its action's `maxRate` rules.
    pub max_rate: &'a [RateRule],
}

/// An earlier run of the same binding, from the history.
#[derive(Debug, Clone, Copy)]
pub struct Earlier {
    /// `None` for a record restored after actiond restarted: it counts for no window.
    pub started: Option<Instant>,
    /// A blocked run did not run, so it does not count against a rate.
    pub blocked: bool,
}

/// How many of the pool's `max` running executions one caller, one guest network and all
/// guests together may hold: the pool less a quarter, less half for a guest network (so
/// another guest finds room a flooding one cannot take), never less than one. A pool below 4
/// keeps nothing (it is one run at a time, or nearly, by choice): every share is the whole
/// pool, and the pool's own limit speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolShares {
    pub caller: usize,
    pub guest: usize,
    pub guests: usize,
}

pub fn pool_shares(max: usize) -> PoolShares {
    let kept = max / 4;
    let caller = max.saturating_sub(kept).max(1);
    PoolShares {
        caller,
        guest: max.saturating_sub(2 * kept).max(1),
        guests: caller,
    }
}

/// Why `new` must be blocked, if it must. `running` names the binding and the holder of
/// every execution running now; `max_running` is `maxConcurrentExecutions`; `earlier` are
/// the earlier runs of the same binding (read only when the action has a `maxRate`).
pub fn limit_reached<'a>(
    new: &Candidate<'_>,
    running: impl Iterator<Item = (&'a str, &'a Holder)>,
    max_running: usize,
    earlier: impl Iterator<Item = Earlier>,
) -> Option<Blocked> {
    let (mut same, mut total, mut mine, mut guests) = (0, 0, 0, 0);
    for (binding_id, holder) in running {
        total += 1;
        same += usize::from(binding_id == new.binding_id);
        mine += usize::from(holder == new.holder);
        guests += usize::from(holder.is_guest());
    }
    if same >= new.max_concurrent {
        return Some(Blocked::Concurrent {
            binding_id: new.binding_id.to_string(),
            running: same,
            max: new.max_concurrent,
        });
    }
    let shares = pool_shares(max_running);
    let most = if new.holder.is_guest() {
        shares.guest
    } else {
        shares.caller
    };
    if most < max_running && mine >= most {
        return Some(Blocked::CallerShare {
            running: mine,
            most,
            max: max_running,
        });
    }
    if new.holder.is_guest() && shares.guests < max_running && guests >= shares.guests {
        return Some(Blocked::GuestShare {
            running: guests,
            most: shares.guests,
            max: max_running,
        });
    }
    if total >= max_running {
        return Some(Blocked::Executions {
            running: total,
            max: max_running,
        });
    }
    if new.max_rate.is_empty() {
        return None;
    }
    // One pass over the history, counting for every rule at once.
    let mut recent = vec![0usize; new.max_rate.len()];
    for e in earlier.filter(|e| !e.blocked) {
        let Some(then) = e.started else { continue };
        let age = new.started.saturating_duration_since(then);
        for (count, rule) in recent.iter_mut().zip(new.max_rate) {
            *count += usize::from(age < rule.window);
        }
    }
    let (count, rule) = recent
        .into_iter()
        .zip(new.max_rate)
        .find(|(count, rule)| *count >= rule.limit as usize)?;
    Some(Blocked::Rate {
        binding_id: new.binding_id.to_string(),
        count,
        window: rule.window,
        limit: rule.limit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    struct Case {
        name: &'static str,
        max_concurrent: usize,
        max_running: usize,
        /// (limit, window in seconds)
        rates: &'static [(u32, u64)],
        /// Whose the new run is, as the history file writes a holder.
        holder: &'static str,
        /// The running executions: `binding`, or `binding@holder` (without one, each is
        /// another user's).
        running: &'static [&'static str],
        /// (started this many seconds before the new run, or restored; blocked)
        earlier: &'static [(Option<u64>, bool)],
        want: Option<&'static str>,
    }

    const fn case(name: &'static str) -> Case {
        Case {
            name,
            max_concurrent: 1,
            max_running: 16,
            rates: &[],
            holder: "user:me",
            running: &[],
            earlier: &[],
            want: None,
        }
    }

    #[test]
    fn limits_table() {
        let cases = [
            case("nothing runs"),
            Case {
                running: &["other", "another"],
                ..case("other bindings do not count against maxConcurrent")
            },
            Case {
                running: &["other", "a"],
                want: Some("a is already running 1 time(s) and maxConcurrent is 1"),
                ..case("a second run of the binding")
            },
            Case {
                max_concurrent: 3,
                running: &["a", "a"],
                ..case("under maxConcurrent")
            },
            Case {
                max_concurrent: 2,
                running: &["a", "a"],
                want: Some("a is already running 2 time(s) and maxConcurrent is 2"),
                ..case("at maxConcurrent")
            },
            Case {
                max_running: 2,
                running: &["x", "y"],
                want: Some("2 executions are running and maxConcurrentExecutions is 2"),
                ..case("at maxConcurrentExecutions")
            },
            Case {
                max_running: 2,
                running: &["a", "y"],
                want: Some("a is already running 1 time(s) and maxConcurrent is 1"),
                ..case("maxConcurrent is named first when both are reached")
            },
            Case {
                rates: &[(2, 60)],
                earlier: &[(Some(10), false), (Some(59), false)],
                want: Some("a ran 2 time(s) in the last 1 min and maxRate allows 2"),
                ..case("two runs within the minute")
            },
            Case {
                rates: &[(2, 60)],
                earlier: &[(Some(10), false), (Some(60), false), (Some(500), false)],
                ..case("a run exactly one window ago has left it")
            },
            Case {
                rates: &[(2, 60)],
                earlier: &[(Some(1), true), (Some(2), true), (Some(3), false)],
                ..case("blocked runs do not count")
            },
            Case {
                rates: &[(1, 3600)],
                earlier: &[(None, false), (None, false)],
                ..case("restored records count for no window")
            },
            Case {
                rates: &[(5, 60), (2, 3600)],
                earlier: &[(Some(100), false), (Some(3000), false)],
                want: Some("a ran 2 time(s) in the last 1 h and maxRate allows 2"),
                ..case("the rule that is reached is named")
            },
            Case {
                rates: &[(3, 90)],
                earlier: &[(Some(0), false), (Some(30), false), (Some(89), false)],
                want: Some("a ran 3 time(s) in the last 90 s and maxRate allows 3"),
                ..case("a window in seconds")
            },
        ];
        check(&cases);
    }

    const MINE: &str = "x@user:me";
    const GUEST_A: &str = "x@guest:10.0.0.9";
    const GUEST_B: &str = "x@guest:2001:db8:0:1::/64";

    #[test]
    fn the_pool_is_shared_out_among_callers() {
        let twelve_mine: &[&str] = &[MINE; 12];
        let eight_a: &[&str] = &[GUEST_A; 8];
        let twelve_guests: &[&str] = &[
            GUEST_A, GUEST_A, GUEST_A, GUEST_A, GUEST_A, GUEST_A, GUEST_A, GUEST_A, GUEST_B,
            GUEST_B, GUEST_B, GUEST_B,
        ];
        let cases = [
            Case {
                running: &[MINE; 11],
                ..case("a caller under its share of 16")
            },
            Case {
                running: twelve_mine,
                want: Some(
                    "12 executions of this caller are running, its share (12) of the 16 \
                     maxConcurrentExecutions allows: the rest is kept for other callers",
                ),
                ..case("a caller at its share: a quarter is kept for others")
            },
            Case {
                holder: "user:alice",
                running: twelve_mine,
                ..case("another user finds the quarter kept")
            },
            Case {
                holder: "guest:10.0.0.9",
                running: eight_a,
                want: Some(
                    "8 executions of this caller are running, its share (8) of the 16 \
                     maxConcurrentExecutions allows: the rest is kept for other callers",
                ),
                ..case("a guest network's share is half the pool")
            },
            Case {
                holder: "guest:2001:db8:0:1::/64",
                running: eight_a,
                ..case("another guest network finds room the first cannot take")
            },
            Case {
                holder: "user:alice",
                running: &[GUEST_A; 8],
                ..case("a user finds room a guest flooding cannot take (F8)")
            },
            Case {
                holder: "guest:10.0.0.77",
                running: twelve_guests,
                want: Some(
                    "12 executions of guests are running, their share (12) of the 16 \
                     maxConcurrentExecutions allows: the rest is kept for callers who logged \
                     in, MQTT and triggers",
                ),
                ..case("guests together hold at most three quarters")
            },
            Case {
                holder: "mqtt",
                running: twelve_guests,
                ..case("MQTT finds the guests' reserve")
            },
            Case {
                holder: "trigger:cron",
                running: twelve_guests,
                ..case("a trigger finds the guests' reserve")
            },
            Case {
                holder: "guest:",
                running: &["x@guest:", "x@user:guest"],
                ..case("a guest of no known network is a holder of its own")
            },
            Case {
                running: &["x"; 16],
                want: Some("16 executions are running and maxConcurrentExecutions is 16"),
                ..case("the pool full of other callers' runs")
            },
            Case {
                max_running: 1,
                running: &[MINE],
                want: Some("1 executions are running and maxConcurrentExecutions is 1"),
                ..case("a pool of one keeps no share: its own limit speaks")
            },
            Case {
                max_running: 3,
                holder: "guest:10.0.0.9",
                running: &["x@guest:10.0.0.9", "x@guest:10.0.0.9"],
                ..case("a pool of three is not shared")
            },
            Case {
                max_running: 4,
                running: &[MINE, MINE, MINE],
                want: Some(
                    "3 executions of this caller are running, its share (3) of the 4 \
                     maxConcurrentExecutions allows: the rest is kept for other callers",
                ),
                ..case("a pool of four keeps one for others")
            },
            Case {
                max_running: 4,
                holder: "guest:10.0.0.9",
                running: &["x@guest:10.0.0.8", "x@guest:10.0.0.8", "x@guest:10.0.0.7"],
                want: Some(
                    "3 executions of guests are running, their share (3) of the 4 \
                     maxConcurrentExecutions allows: the rest is kept for callers who logged \
                     in, MQTT and triggers",
                ),
                ..case("a pool of four keeps one from guests")
            },
            Case {
                running: &["a@user:me"],
                want: Some("a is already running 1 time(s) and maxConcurrent is 1"),
                ..case("maxConcurrent is named before the share")
            },
        ];
        check(&cases);
    }

    #[test]
    fn pool_shares_table() {
        // maxConcurrentExecutions -> (one caller, one guest network, all guests)
        let table = [
            (1, (1, 1, 1)),
            (2, (2, 2, 2)),
            (3, (3, 3, 3)),
            (4, (3, 2, 3)),
            (8, (6, 4, 6)),
            (16, (12, 8, 12)),
            (17, (13, 9, 13)),
            (1000, (750, 500, 750)),
        ];
        for (max, (caller, guest, guests)) in table {
            let want = PoolShares {
                caller,
                guest,
                guests,
            };
            assert_eq!(pool_shares(max), want, "{max}");
        }
    }

    fn check(cases: &[Case]) {
        let now = Instant::now() + Duration::from_secs(10_000);
        for c in cases {
            let rules: Vec<RateRule> = c
                .rates
                .iter()
                .map(|&(limit, secs)| RateRule {
                    limit,
                    window: Duration::from_secs(secs),
                })
                .collect();
            let holder = Holder::of_line(c.holder, "", "");
            let running: Vec<(String, Holder)> = c
                .running
                .iter()
                .enumerate()
                .map(|(i, r)| match r.split_once('@') {
                    Some((b, h)) => (b.to_string(), Holder::of_line(h, "", "")),
                    None => (r.to_string(), Holder::User(format!("r{i}"))),
                })
                .collect();
            let new = Candidate {
                binding_id: "a",
                holder: &holder,
                started: now,
                max_concurrent: c.max_concurrent,
                max_rate: &rules,
            };
            let earlier = c.earlier.iter().map(|&(ago, blocked)| Earlier {
                started: ago.map(|s| now - Duration::from_secs(s)),
                blocked,
            });
            let running = running.iter().map(|(b, h)| (b.as_str(), h));
            let got = limit_reached(&new, running, c.max_running, earlier);
            assert_eq!(got.map(|b| b.to_string()).as_deref(), c.want, "{}", c.name);
        }
    }
}
