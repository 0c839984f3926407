//! Log lines that someone outside can cause, rate-limited: a blocked start, a failed login, a
//! refused request, a press, a packet a broker sends, files dropped in a watched directory.
//! Each kind of line is a [`Quiet`] (listed here, so the kinds are one list) with a budget: a
//! burst of lines, then one more per period. A line over the budget is left out and counted,
//! and the count is said, by the next line of that kind or, when none comes, by a summary line
//! once the budget allows one. So a flood costs the journal one line per period per kind, and
//! nothing is left out silently.
//!
//! [`Limiter`] is the rule, pure and table-tested (the caller passes the time). [`Quiet`] wraps
//! it for the log: the caller asks `admit()` and, when it says yes, logs its own line (with
//! its own level and fields) with the count appended:
//!
//! ```ignore
//! if let Some(more) = ratelog::BLOCKED_STARTS.admit() {
//!     info!(action = %id, "blocked: {reason}{more}");
//! }
//! ```
//!
//! It must not log anything a caller did not hand it; the summary line names only the kind.

use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use tracing::Level;

/// How many lines of one kind may be written: `burst` at once, then one per `every`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub burst: u32,
    pub every: Duration,
}

impl Budget {
    /// Five lines, then one per 10 s: a person pressing a busy button a few times sees every
    /// line; a flood costs at most one line per 10 s.
    pub const DEFAULT: Budget = Budget {
        burst: 5,
        every: Duration::from_secs(10),
    };
}

/// What to do with one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Write it, saying that `left_out` lines of its kind were left out before it.
    Write { left_out: u64 },
    /// Leave it out. `flush_at` is set on the first line left out since the last one written:
    /// a summary is due then, should no other line of the kind come to say the count.
    LeaveOut { flush_at: Option<Instant> },
}

/// The budget of one kind of line: a token bucket of `burst` tokens, one more per `every`.
#[derive(Debug, Clone)]
pub struct Limiter {
    budget: Budget,
    tokens: u32,
    /// When the tokens were last brought up to date; `None` before the first line (full).
    refilled: Option<Instant>,
    left_out: u64,
    /// A summary is due at this time.
    due: Option<Instant>,
}

impl Limiter {
    pub const fn new(budget: Budget) -> Limiter {
        Limiter {
            budget,
            tokens: budget.burst,
            refilled: None,
            left_out: 0,
            due: None,
        }
    }

    fn refill(&mut self, now: Instant) {
        let Some(last) = self.refilled else {
            self.refilled = Some(now);
            return;
        };
        let every = self.budget.every.max(Duration::from_millis(1));
        let periods = now.saturating_duration_since(last).as_nanos() / every.as_nanos();
        let periods = u32::try_from(periods).unwrap_or(u32::MAX);
        if periods == 0 {
            return;
        }
        self.tokens = self.tokens.saturating_add(periods).min(self.budget.burst);
        self.refilled = Some(if self.tokens == self.budget.burst {
            now
        } else {
            last + every * periods
        });
    }

    /// When the next token comes.
    fn next_token(&self, now: Instant) -> Instant {
        self.refilled.unwrap_or(now) + self.budget.every
    }

    /// A line of this kind wants out at `now`.
    pub fn note(&mut self, now: Instant) -> Verdict {
        self.refill(now);
        if self.tokens > 0 {
            self.tokens -= 1;
            self.due = None;
            return Verdict::Write {
                left_out: std::mem::take(&mut self.left_out),
            };
        }
        self.left_out = self.left_out.saturating_add(1);
        if self.due.is_some() {
            return Verdict::LeaveOut { flush_at: None };
        }
        let at = self.next_token(now);
        self.due = Some(at);
        Verdict::LeaveOut { flush_at: Some(at) }
    }

    /// A summary time came: the count of lines left out and not said yet, if any (the
    /// summary then takes a token, as any line does).
    pub fn flush(&mut self, now: Instant) -> Option<u64> {
        self.refill(now);
        self.due = None;
        if self.left_out == 0 {
            return None;
        }
        self.tokens = self.tokens.saturating_sub(1);
        Some(std::mem::take(&mut self.left_out))
    }
}

/// The count of lines left out before a written one: nothing when none were, else
/// ` (N similar lines left out)`, ready to be appended to the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeftOut(pub u64);

impl fmt::Display for LeftOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            0 => Ok(()),
            1 => f.write_str(" (1 similar line left out)"),
            n => write!(f, " ({n} similar lines left out)"),
        }
    }
}

/// One kind of line, its level (for the summary) and its budget.
pub struct Quiet {
    what: &'static str,
    level: Level,
    limiter: Mutex<Limiter>,
}

impl Quiet {
    /// A kind of line at `level` with the default budget; `what` names the lines in the
    /// summary ("failed logins").
    pub const fn new(level: Level, what: &'static str) -> Quiet {
        Quiet {
            what,
            level,
            limiter: Mutex::new(Limiter::new(Budget::DEFAULT)),
        }
    }

    /// Whether a line of this kind may be written now; when it may, the count of lines left
    /// out before it, to append to it.
    pub fn admit(&'static self) -> Option<LeftOut> {
        let verdict = self
            .limiter
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .note(Instant::now());
        match verdict {
            Verdict::Write { left_out } => Some(LeftOut(left_out)),
            Verdict::LeaveOut { flush_at: None } => None,
            Verdict::LeaveOut { flush_at: Some(at) } => {
                // Outside a runtime (a unit test, the command line) the count waits for the
                // next line of the kind instead.
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    runtime.spawn(async move {
                        tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await;
                        self.flush();
                    });
                }
                None
            }
        }
    }

    fn flush(&self) {
        let left_out = self
            .limiter
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .flush(Instant::now());
        let Some(n) = left_out else { return };
        let what = self.what;
        match self.level {
            Level::ERROR => tracing::error!("{n} more {what} left out of the log"),
            Level::WARN => tracing::warn!("{n} more {what} left out of the log"),
            Level::INFO => tracing::info!("{n} more {what} left out of the log"),
            Level::DEBUG => tracing::debug!("{n} more {what} left out of the log"),
            _ => tracing::trace!("{n} more {what} left out of the log"),
        }
    }
}

// The kinds. One per line a client, a press or a peer can cause, so a flood of one does not
// hide the first line of another.

/// A start refused by maxConcurrent, maxConcurrentExecutions or maxRate (HTTP, MQTT, triggers).
pub static BLOCKED_STARTS: Quiet = Quiet::new(Level::INFO, "lines about blocked starts");
/// A login refused (wrong password, unknown user) or throttled.
pub static FAILED_LOGINS: Quiet = Quiet::new(Level::INFO, "lines about failed logins");
/// A login turned away because the hasher's queue is full.
pub static BUSY_LOGINS: Quiet = Quiet::new(Level::WARN, "lines about logins turned away");
/// A username guessed at from more addresses than its ceiling allows.
pub static LOGIN_CEILING: Quiet = Quiet::new(Level::WARN, "lines about guessed usernames");
/// A request refused before it reached an operation (Host, origin, connection share).
pub static REFUSED_REQUESTS: Quiet = Quiet::new(Level::DEBUG, "lines about refused requests");
/// A connection that ended in an error (a client gone, a deadline passed).
pub static CONNECTION_ERRORS: Quiet = Quiet::new(Level::DEBUG, "lines about failed connections");
/// A trigger (start-up, cron, file): a run not started (no permission, a limit, the history
/// queue full).
pub static TRIGGER_NOT_STARTED: Quiet = Quiet::new(Level::WARN, "lines about triggers not started");
/// A file trigger: a file name that is not UTF-8 (anyone who may write the directory).
pub static TRIGGER_BAD_NAME: Quiet = Quiet::new(Level::WARN, "lines about file names not UTF-8");
/// A file trigger: a directory, symlink, FIFO, socket or device dropped into the directory.
pub static TRIGGER_NOT_FILE: Quiet =
    Quiet::new(Level::WARN, "lines about files that are no regular files");
/// A file trigger: files ignored because too many wait, or events the kernel lost.
pub static TRIGGER_FLOOD: Quiet = Quiet::new(Level::WARN, "lines about ignored files");
/// MQTT: a retained press.
pub static MQTT_RETAINED_PRESS: Quiet =
    Quiet::new(Level::WARN, "MQTT lines about retained presses");
/// MQTT: a message on a press topic that is not `PRESS`.
pub static MQTT_BAD_PAYLOAD: Quiet = Quiet::new(Level::WARN, "MQTT lines about bad payloads");
/// MQTT: a press refused (no button, or the engine said no).
pub static MQTT_REFUSED_PRESS: Quiet = Quiet::new(Level::WARN, "MQTT lines about refused presses");
/// MQTT: a packet over the size bound, skipped unread.
pub static MQTT_TOO_LARGE: Quiet = Quiet::new(Level::WARN, "MQTT lines about skipped packets");
/// MQTT: a subscription the broker refused (a broker may answer with SUBACKs at will).
pub static MQTT_SUBSCRIPTION: Quiet = Quiet::new(Level::WARN, "MQTT lines about subscriptions");
/// MQTT: a stale retained message of ours cleared (another client can publish them at will).
pub static MQTT_STALE: Quiet = Quiet::new(Level::DEBUG, "MQTT lines about stale messages");
/// A guest's run finished: anyone who reaches the page can press a cheap action as fast as
/// it ends. A logged-in caller's, a token's and a trigger's runs each keep their line.
pub static GUEST_FINISHED: Quiet = Quiet::new(Level::INFO, "lines about guests' finished runs");
/// MQTT: a discovery message under this node another client wrote, over one of ours or where
/// there is none (it can publish them at will).
pub static MQTT_OVERWRITTEN: Quiet = Quiet::new(
    Level::WARN,
    "MQTT lines about discovery messages another client wrote",
);
/// MQTT: the connection to the broker, made or lost (a broker that accepts and drops).
pub static MQTT_LINK: Quiet = Quiet::new(Level::WARN, "MQTT lines about the broker connection");

#[cfg(test)]
mod tests {
    use super::*;

    const B: Budget = Budget {
        burst: 3,
        every: Duration::from_secs(10),
    };

    /// What happens to each line, given when it comes (ms after the start); `W(n)` writes it
    /// with n left out before, `L` leaves it out, `F` leaves it out and asks for a summary.
    #[derive(Debug, PartialEq)]
    enum Seen {
        W(u64),
        L,
        F(u64),
    }

    fn run(budget: Budget, at_ms: &[u64]) -> Vec<Seen> {
        let start = Instant::now();
        let mut l = Limiter::new(budget);
        at_ms
            .iter()
            .map(|ms| {
                let now = start + Duration::from_millis(*ms);
                match l.note(now) {
                    Verdict::Write { left_out } => Seen::W(left_out),
                    Verdict::LeaveOut { flush_at: None } => Seen::L,
                    Verdict::LeaveOut { flush_at: Some(t) } => {
                        Seen::F((t - start).as_millis() as u64)
                    }
                }
            })
            .collect()
    }

    #[test]
    fn the_budget_table() {
        use Seen::*;
        let cases: &[(&[u64], &[Seen])] = &[
            // A burst within the budget: every line.
            (&[0, 1, 2], &[W(0), W(0), W(0)]),
            // Over it: left out, a summary asked for once, at the next token.
            (&[0, 1, 2, 3, 4, 5], &[W(0), W(0), W(0), F(10_000), L, L]),
            // The next token: the line says what was left out.
            (
                &[0, 0, 0, 1, 2, 10_000],
                &[W(0), W(0), W(0), F(10_000), L, W(2)],
            ),
            // A sustained flood: one line per period, each with the count.
            (
                &[0, 0, 0, 5_000, 10_000, 15_000, 20_000, 25_000, 30_000],
                &[
                    W(0),
                    W(0),
                    W(0),
                    F(10_000),
                    W(1),
                    F(20_000),
                    W(1),
                    F(30_000),
                    W(1),
                ],
            ),
            // Quiet for long: the full burst again, not more.
            (
                &[0, 0, 0, 100_000, 100_000, 100_000, 100_000],
                &[W(0), W(0), W(0), W(0), W(0), W(0), F(110_000)],
            ),
        ];
        for (times, expected) in cases {
            assert_eq!(run(B, times), *expected, "{times:?}");
        }
    }

    #[test]
    fn a_flood_that_stops_is_summed_up_once() {
        let start = Instant::now();
        let mut l = Limiter::new(B);
        let mut written = 0;
        for i in 0..2000u64 {
            if let Verdict::Write { .. } = l.note(start + Duration::from_micros(i)) {
                written += 1;
            }
        }
        assert_eq!(written, 3);
        assert_eq!(l.flush(start + Duration::from_secs(10)), Some(1997));
        assert_eq!(l.flush(start + Duration::from_secs(20)), None, "said once");
        // The summary took the token it came with; the burst refills with time.
        let later = start + Duration::from_secs(60);
        assert_eq!(l.note(later), Verdict::Write { left_out: 0 });
    }

    #[test]
    fn the_count_reads_as_words() {
        assert_eq!(LeftOut(0).to_string(), "");
        assert_eq!(LeftOut(1).to_string(), " (1 similar line left out)");
        assert_eq!(LeftOut(7).to_string(), " (7 similar lines left out)");
    }
}
