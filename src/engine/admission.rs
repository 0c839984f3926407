//! Admission: whether a new execution may run or must be recorded as blocked, by the three
//! limits: `maxConcurrent` (runs of the same binding at once), `maxConcurrentExecutions`
//! (runs of anything at once) and `maxRate` (runs of the binding within a sliding window).
//! A pure function of counts and start times, so the engine can call it under the locks
//! that guard the tables it counts and insert right after, and the rules are tested here
//! with tables. It must not lock, read clocks or touch the history itself.

use std::time::Instant;

use crate::config::RateRule;
use crate::execution::Blocked;

/// The new execution, as admission sees it.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    pub binding_id: &'a str,
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

/// Why `new` must be blocked, if it must. `running` names the binding of every execution
/// running now; `max_running` is `maxConcurrentExecutions`; `earlier` are the earlier runs
/// of the same binding (read only when the action has a `maxRate`).
pub fn limit_reached<'a>(
    new: &Candidate<'_>,
    running: impl Iterator<Item = &'a str>,
    max_running: usize,
    earlier: impl Iterator<Item = Earlier>,
) -> Option<Blocked> {
    let (mut same, mut total) = (0, 0);
    for binding_id in running {
        total += 1;
        same += usize::from(binding_id == new.binding_id);
    }
    if same >= new.max_concurrent {
        return Some(Blocked::Concurrent {
            binding_id: new.binding_id.to_string(),
            running: same,
            max: new.max_concurrent,
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
            let new = Candidate {
                binding_id: "a",
                started: now,
                max_concurrent: c.max_concurrent,
                max_rate: &rules,
            };
            let earlier = c.earlier.iter().map(|&(ago, blocked)| Earlier {
                started: ago.map(|s| now - Duration::from_secs(s)),
                blocked,
            });
            let got = limit_reached(&new, c.running.iter().copied(), c.max_running, earlier);
            assert_eq!(got.map(|b| b.to_string()).as_deref(), c.want, "{}", c.name);
        }
    }
}
