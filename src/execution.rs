//! One execution's record: who started which action when, its lifecycle, its captured
//! output, and how it ended. The lifecycle and outcome are enums; the booleans and exit
//! code of a LogEntry are derived from them by one pure function (`Phase::flags`, the table
//! of the API's state table), so no combination outside that table can be shown. An end is decided
//! (`conclude`) and shown (`commit`) in two steps, so the engine can show it only once its
//! record is on disk; waiters wake at the second. This module does not spawn or signal
//! anything: the executor drives a record through its phases, everyone else reads snapshots.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::{Notify, watch};

use crate::clock::local_datetime;
use crate::config::Action;
use crate::output::{Capture, append_notice};

mod holder;
pub use holder::Holder;

/// An execution's tracking id: 1 to 64 of `A-Z a-z 0-9 . _ -` when a client chose it, a
/// random UUID otherwise. Only `parse` and `random` make one, so every id held is valid.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TrackingId(heapless::String<64>);

impl TrackingId {
    /// A client-chosen id (StartAction's `uniqueTrackingId`), or an id read back from the
    /// history file; `None` unless it is 1 to 64 of `A-Z a-z 0-9 . _ -`.
    pub fn parse(text: &str) -> Option<TrackingId> {
        let valid = (1..=64).contains(&text.len())
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
        if !valid {
            return None;
        }
        let mut id = heapless::String::new();
        // Within 64 bytes it always fits.
        id.push_str(text).ok()?;
        Some(TrackingId(id))
    }

    /// A new random id: a UUIDv4 from the operating system's random bytes, taken 16 at a
    /// time from a pool of `RANDOM_POOL` bytes refilled by one `getrandom` when spent (one
    /// system call per run was `uuid::Uuid::new_v4`'s; the bytes are as unpredictable,
    /// and each is used once).
    pub fn random() -> TrackingId {
        let mut buf = uuid::Uuid::encode_buffer();
        let uuid = match random_16() {
            Some(bytes) => uuid::Builder::from_random_bytes(bytes).into_uuid(),
            None => uuid::Uuid::new_v4(),
        };
        let text = uuid.hyphenated().encode_lower(&mut buf);
        TrackingId::parse(text).expect("a UUID is a valid tracking id")
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

/// Random bytes kept for tracking ids: 16 runs' worth.
const RANDOM_POOL: usize = 256;

/// 16 random bytes from the pool (`TrackingId::random`), refilled from the operating
/// system when spent; `None` if it cannot be.
fn random_16() -> Option<[u8; 16]> {
    static POOL: std::sync::Mutex<([u8; RANDOM_POOL], usize)> =
        std::sync::Mutex::new(([0; RANDOM_POOL], RANDOM_POOL));
    let mut pool = POOL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (bytes, used) = &mut *pool;
    if *used == RANDOM_POOL {
        getrandom::fill(bytes).ok()?;
        *used = 0;
    }
    let mut out = [0; 16];
    out.copy_from_slice(&bytes[*used..*used + 16]);
    // Spent bytes are not kept.
    bytes[*used..*used + 16].fill(0);
    *used += 16;
    Some(out)
}

impl std::ops::Deref for TrackingId {
    type Target = str;
    fn deref(&self) -> &str {
        self.0.as_str()
    }
}

impl std::borrow::Borrow<str> for TrackingId {
    fn borrow(&self) -> &str {
        self.0.as_str()
    }
}

impl std::fmt::Display for TrackingId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.as_str())
    }
}

impl PartialEq<str> for TrackingId {
    fn eq(&self, other: &str) -> bool {
        self.0.as_str() == other
    }
}

impl PartialEq<&str> for TrackingId {
    fn eq(&self, other: &&str) -> bool {
        self.0.as_str() == *other
    }
}

/// Who gave the `password` values of a run: the only caller RestartAction replays them for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretOwner {
    /// A caller known by name: a local user, an API token's user, a trusted proxy's user.
    Named {
        provider: &'static str,
        username: String,
    },
    /// An identity many people share (the guest, anyone on the LAN): its secrets are replayed
    /// for nobody, not even for another caller of the same identity.
    Shared,
}

impl SecretOwner {
    /// Whether `caller` is the owner, and so may run the values again.
    pub fn may_replay(&self, caller: &SecretOwner) -> bool {
        matches!((self, caller), (SecretOwner::Named { .. }, _) if self == caller)
    }
}

/// What started an execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// A request through the API: a person, a script, Home Assistant.
    Request,
    /// A trigger (start-up, schedule, file); the record's tags say which.
    Trigger,
    /// RestartAction: a caller ran the execution `of` again with its recorded values.
    /// `trigger_values`: those values were first given by a trigger (`of` was a trigger's
    /// run, or a restart of one).
    Restart {
        of: TrackingId,
        trigger_values: bool,
    },
}

impl Cause {
    /// Whether this start's values may fill the arguments only a file trigger fills: a
    /// trigger's own values may, and so may a restart that repeats them. A request's may
    /// not, and neither may a restart of a request's values, whatever the config now says.
    pub fn trigger_values(&self) -> bool {
        match self {
            Cause::Request => false,
            Cause::Trigger => true,
            Cause::Restart { trigger_values, .. } => *trigger_values,
        }
    }

    /// The cause of a restart of an execution that started from `self`.
    pub fn restarted(&self, of: &TrackingId) -> Cause {
        Cause::Restart {
            of: of.clone(),
            trigger_values: self.trigger_values(),
        }
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cause::Request => f.write_str("request"),
            Cause::Trigger => f.write_str("trigger"),
            Cause::Restart { of, .. } => write!(f, "restart of {of}"),
        }
    }
}

/// How an execution ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The leader exited by itself with this status.
    Exited(i32),
    /// The leader died of a signal nobody in actiond sent.
    Signalled(i32),
    /// KillAction, or the service shutting down, ran the kill ladder.
    Killed(KillReason, Stop),
    /// The action's timeout ran the kill ladder.
    TimedOut { seconds: u64, stop: Stop },
    /// A concurrency or rate limit refused to start it.
    Blocked(Blocked),
    /// The process could not be started.
    SpawnFailed(SpawnError),
    /// Read back from the state directory after a restart, with the flags it had.
    Restored(Flags),
}

/// Why an execution's process could not be started. Its `Display` follows `failed to start: `
/// in the run's notices and so in the history file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpawnError {
    /// The command names no program (an empty `exec:` list, a shell line of nothing).
    EmptyCommand,
    /// The system would not start `program`: the kind of its error, and the error as the
    /// system said it (`No such file or directory (os error 2)`).
    Refused {
        program: String,
        kind: std::io::ErrorKind,
        said: String,
    },
    /// The working directory could not be entered (missing, not a directory, or not
    /// searchable): the directory, and the error as the system said it.
    WorkingDirectory { dir: String, said: String },
    /// The thread that starts processes ended without an answer (a bug).
    SpawnerLost,
}

impl SpawnError {
    /// The system's refusal to start `program`.
    pub fn refused(program: &str, error: &std::io::Error) -> SpawnError {
        SpawnError::Refused {
            program: program.to_string(),
            kind: error.kind(),
            said: error.to_string(),
        }
    }
}

impl std::fmt::Display for SpawnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpawnError::EmptyCommand => f.write_str("empty command"),
            SpawnError::Refused { program, said, .. } => write!(f, "{program}: {said}"),
            SpawnError::WorkingDirectory { dir, said } => {
                write!(f, "cannot enter the working directory {dir}: {said}")
            }
            SpawnError::SpawnerLost => f.write_str("the spawning thread failed"),
        }
    }
}

impl std::error::Error for SpawnError {}

/// Which limit refused to start an execution. Its `Display` is the reason a person reads in
/// the log, in the run's notices (`blocked: …`) and so in the history file, which older and
/// newer versions read back: the words must stay as they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocked {
    /// `maxConcurrent`: the binding already runs `running` times.
    Concurrent {
        binding_id: String,
        running: usize,
        max: usize,
    },
    /// `maxConcurrentExecutions`: `running` executions of anything run now.
    Executions { running: usize, max: usize },
    /// The caller's share of `maxConcurrentExecutions` (`max`): `running` of its executions
    /// run now, and it may hold `most` (the rest is kept for other callers).
    CallerShare {
        running: usize,
        most: usize,
        max: usize,
    },
    /// Guests' share of `maxConcurrentExecutions` (`max`): `running` executions of guests run
    /// now, and guests together may hold `most` (the rest is kept for callers who logged in,
    /// MQTT and the triggers).
    GuestShare {
        running: usize,
        most: usize,
        max: usize,
    },
    /// `maxRate`: the binding ran `count` times within `window`.
    Rate {
        binding_id: String,
        count: usize,
        window: Duration,
        limit: u32,
    },
}

impl std::fmt::Display for Blocked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Blocked::Concurrent {
                binding_id,
                running,
                max,
            } => write!(
                f,
                "{binding_id} is already running {running} time(s) and maxConcurrent is {max}"
            ),
            Blocked::Executions { running, max } => write!(
                f,
                "{running} executions are running and maxConcurrentExecutions is {max}"
            ),
            Blocked::CallerShare { running, most, max } => write!(
                f,
                "{running} executions of this caller are running, its share ({most}) of the \
                 {max} maxConcurrentExecutions allows: the rest is kept for other callers"
            ),
            Blocked::GuestShare { running, most, max } => write!(
                f,
                "{running} executions of guests are running, their share ({most}) of the \
                 {max} maxConcurrentExecutions allows: the rest is kept for callers who \
                 logged in, MQTT and triggers"
            ),
            Blocked::Rate {
                binding_id,
                count,
                window,
                limit,
            } => write!(
                f,
                "{binding_id} ran {count} time(s) in the last {} and maxRate allows {limit}",
                describe_window(*window)
            ),
        }
    }
}

/// A rate window as a person writes it: `5 min`, `1 h`, `90 s`.
fn describe_window(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0 => format!("{} ms", d.as_millis()),
        s if s % 3600 == 0 => format!("{} h", s / 3600),
        s if s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

/// How the kill ladder ended for a process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The group was already gone when the ladder began.
    AlreadyGone,
    /// Everything exited within the grace period after SIGTERM.
    Term,
    /// Something outlived the grace period and got SIGKILL.
    Kill,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KillReason {
    /// KillAction by this user.
    User(String),
    /// The service is stopping.
    Shutdown,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    Accepted,
    Running,
    Finished(Outcome),
}

/// The LogEntry booleans and exit code of a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flags {
    pub execution_started: bool,
    pub execution_finished: bool,
    pub blocked: bool,
    pub timed_out: bool,
    pub exit_code: i32,
}

impl Phase {
    pub fn flags(&self) -> Flags {
        let f = |execution_started, execution_finished, blocked, timed_out, exit_code| Flags {
            execution_started,
            execution_finished,
            blocked,
            timed_out,
            exit_code,
        };
        match self {
            Phase::Accepted => f(false, false, false, false, 0),
            Phase::Running => f(true, false, false, false, 0),
            Phase::Finished(Outcome::Exited(code)) => f(true, true, false, false, *code),
            Phase::Finished(Outcome::Signalled(_) | Outcome::Killed(..)) => {
                f(true, true, false, false, -1)
            }
            Phase::Finished(Outcome::TimedOut { .. }) => f(true, true, false, true, -1),
            Phase::Finished(Outcome::Blocked(_)) => f(false, true, true, false, -1),
            Phase::Finished(Outcome::SpawnFailed(_)) => f(false, true, false, false, -1),
            Phase::Finished(Outcome::Restored(flags)) => *flags,
        }
    }

    pub fn is_finished(&self) -> bool {
        matches!(self, Phase::Finished(_))
    }
}

/// The service notice an outcome adds to stderr, if any.
pub fn outcome_notice(outcome: &Outcome, grace_secs: u64) -> Option<String> {
    let how = |stop: &Stop| match stop {
        Stop::AlreadyGone => "its process group had already ended".to_string(),
        Stop::Term => "its process group ended on SIGTERM".to_string(),
        Stop::Kill => {
            format!("its process group outlived SIGTERM by {grace_secs} s and got SIGKILL")
        }
    };
    match outcome {
        Outcome::Exited(_) => None,
        Outcome::Signalled(sig) => Some(format!("terminated by signal {}", signal_name(*sig))),
        Outcome::Killed(KillReason::User(user), stop) => {
            Some(format!("killed by {user}; {}", how(stop)))
        }
        Outcome::Killed(KillReason::Shutdown, stop) => Some(format!(
            "killed because the service is stopping; {}",
            how(stop)
        )),
        Outcome::TimedOut { seconds, stop } => {
            Some(format!("timed out after {seconds} s; {}", how(stop)))
        }
        Outcome::Blocked(reason) => Some(format!("blocked: {reason}")),
        Outcome::SpawnFailed(err) => Some(format!("failed to start: {err}")),
        // Its notices were written when it finished.
        Outcome::Restored(_) => None,
    }
}

fn signal_name(sig: i32) -> String {
    match nix::sys::signal::Signal::try_from(sig) {
        Ok(s) => s.as_str().to_string(),
        Err(_) => format!("{sig}"),
    }
}

/// What a secret value is shown as.
pub const REDACTED: &str = "********";

/// `text` with every occurrence of every secret replaced. The longest secrets go first, so
/// one secret that contains another is hidden whole.
pub fn redact(text: String, secrets: &[String]) -> String {
    if secrets.iter().all(|s| !text.contains(s.as_str())) {
        return text;
    }
    let mut sorted: Vec<&String> = secrets.iter().collect();
    sorted.sort_by_key(|s| std::cmp::Reverse(s.len()));
    sorted
        .into_iter()
        .fold(text, |t, s| t.replace(s.as_str(), REDACTED))
}

/// Everything that changes while an execution lives.
#[derive(Debug)]
struct Live {
    phase: Phase,
    stdout: Capture,
    stderr: Capture,
    /// Set once finished: the rendered text, after which the captures are dropped.
    final_text: Option<(String, String)>,
    datetime_finished: String,
    /// How long it took, from its record's creation to its end; once it shows as finished.
    /// `None` for a record restored after a restart, which does not keep it.
    took: Option<Duration>,
    kill_request: Option<KillReason>,
    /// How it ended, once that is known and before it is shown: the end is shown only once
    /// its record is on disk (`commit`).
    ending: Option<Ending>,
}

/// The final state of an execution that has ended, waiting for its record to be durable.
#[derive(Debug)]
struct Ending {
    outcome: Outcome,
    stdout: String,
    stderr: String,
    datetime_finished: String,
    took: Option<Duration>,
}

/// How far an execution has come, as its waiters see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// Admitted; its first record is not yet on disk.
    Accepted,
    /// Its first record is on disk (for a run, the start line: it is launched now).
    Recorded,
    /// Its finish record is on disk and it shows as finished.
    Finished,
}

/// One execution. Shared (`Arc`) between the history, the running table, the task that
/// supervises the process and any waiting request.
#[derive(Debug)]
pub struct Execution {
    pub tracking_id: TrackingId,
    /// The binding id the caller used (the action id for plain actions).
    pub binding_id: String,
    /// The action as it was when the execution started; a reload does not change it. It
    /// runs the command and names the run; permissions on the run are never checked against
    /// it, but against the action in force for `binding_id` (`Setup::action_for_run`).
    pub action: Arc<Action>,
    pub user: String,
    pub user_class: String,
    /// Whose run it is, as the history and the pool of running executions share themselves
    /// out.
    pub holder: Holder,
    /// Started by a guest (nobody logged in): its finish line in the log is rate-limited,
    /// since anyone who can reach the page can cause it. Its record is kept all the same.
    pub by_guest: bool,
    pub tags: Vec<String>,
    /// The arguments as requested, kept in memory for RestartAction. `None` when they are
    /// no longer known (a record restored from disk never carries password values).
    pub arguments: Option<Vec<(String, String)>>,
    /// What started it; `None` for a record read back from the history file, which does not
    /// keep it (nor the arguments, so such a record is never restarted).
    pub cause: Option<Cause>,
    /// When the request gave a `password` value: who gave it, the only one RestartAction
    /// replays it for.
    pub secret_owner: Option<SecretOwner>,
    /// Values of `password` arguments: replaced in every rendering of the output, so a
    /// command that prints one does not show it back.
    secrets: Vec<String>,
    /// When it started, for rate windows; `None` for a record restored after a restart.
    pub started: Option<Instant>,
    /// The action's title and icon when it started (an entity binding's are rendered).
    pub title: String,
    pub icon: String,
    pub datetime_started: String,
    live: Mutex<Live>,
    stage: watch::Sender<Stage>,
    kill: Notify,
}

/// What is needed to bring a finished record back after a restart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    pub tracking_id: TrackingId,
    pub binding_id: String,
    pub title: String,
    pub icon: String,
    pub user: String,
    pub user_class: String,
    pub holder: Holder,
    pub tags: Vec<String>,
    pub datetime_started: String,
    pub datetime_finished: String,
    pub stdout: String,
    pub stderr: String,
    pub flags: Flags,
}

/// A consistent copy of an execution for display (a LogEntry without the wire format).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub datetime_started: String,
    pub datetime_finished: String,
    pub action_title: String,
    pub action_id: String,
    pub action_icon: String,
    pub stdout: String,
    pub stderr: String,
    pub flags: Flags,
    pub user: String,
    pub user_class: String,
    pub tags: Vec<String>,
    pub execution_tracking_id: String,
}

pub struct NewExecution {
    pub tracking_id: TrackingId,
    pub binding_id: String,
    pub action: Arc<Action>,
    pub user: String,
    pub user_class: String,
    pub holder: Holder,
    pub by_guest: bool,
    pub tags: Vec<String>,
    pub arguments: Option<Vec<(String, String)>>,
    pub cause: Cause,
    pub secret_owner: Option<SecretOwner>,
    /// Values of `password` arguments (empty ones are ignored).
    pub secrets: Vec<String>,
    pub max_output_bytes: usize,
}

impl Execution {
    pub fn new(n: NewExecution) -> Self {
        let (title, icon) = (n.action.title.clone(), n.action.icon.clone());
        Execution {
            tracking_id: n.tracking_id,
            binding_id: n.binding_id,
            action: n.action,
            user: n.user,
            user_class: n.user_class,
            holder: n.holder,
            by_guest: n.by_guest,
            tags: n.tags,
            arguments: n.arguments,
            cause: Some(n.cause),
            secret_owner: n.secret_owner,
            secrets: n.secrets.into_iter().filter(|s| !s.is_empty()).collect(),
            started: Some(Instant::now()),
            title,
            icon,
            datetime_started: local_datetime(SystemTime::now()),
            live: Mutex::new(Live {
                phase: Phase::Accepted,
                stdout: Capture::new(n.max_output_bytes),
                stderr: Capture::new(n.max_output_bytes),
                final_text: None,
                datetime_finished: String::new(),
                took: None,
                kill_request: None,
                ending: None,
            }),
            stage: watch::channel(Stage::Accepted).0,
            kill: Notify::new(),
        }
    }

    /// A finished record read back from the state directory. It keeps no arguments (they
    /// are never written), so it cannot be restarted.
    pub fn restored(r: Restored, action: Arc<Action>) -> Self {
        Execution {
            tracking_id: r.tracking_id,
            binding_id: r.binding_id,
            action,
            user: r.user,
            user_class: r.user_class,
            holder: r.holder,
            // Finished before it was read back: it has no finish line to write.
            by_guest: false,
            tags: r.tags,
            arguments: None,
            cause: None,
            secret_owner: None,
            secrets: Vec::new(),
            started: None,
            title: r.title,
            icon: r.icon,
            datetime_started: r.datetime_started,
            live: Mutex::new(Live {
                phase: Phase::Finished(Outcome::Restored(r.flags)),
                stdout: Capture::new(0),
                stderr: Capture::new(0),
                final_text: Some((r.stdout, r.stderr)),
                datetime_finished: r.datetime_finished,
                took: None,
                kill_request: None,
                ending: None,
            }),
            stage: watch::channel(Stage::Finished).0,
            kill: Notify::new(),
        }
    }

    fn live(&self) -> MutexGuard<'_, Live> {
        // A panic while holding this lock would leave plain data behind, still usable.
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn phase(&self) -> Phase {
        self.live().phase.clone()
    }

    pub fn set_running(&self) {
        self.live().phase = Phase::Running;
    }

    pub fn push_stdout(&self, data: &[u8]) {
        self.live().stdout.push(data);
    }

    pub fn push_stderr(&self, data: &[u8]) {
        self.live().stderr.push(data);
    }

    /// Decides the final state: the notices are added and the text rendered, but nothing
    /// shows it yet (readers still see the execution running) until `commit`, which the
    /// engine calls once the finish record is on disk. Only the first call counts.
    pub fn conclude(&self, outcome: Outcome, grace_secs: u64) {
        let mut live = self.live();
        if live.phase.is_finished() || live.ending.is_some() {
            return;
        }
        let mut stdout = redact(live.stdout.render(&self.secrets), &self.secrets);
        let mut stderr = redact(live.stderr.render(&self.secrets), &self.secrets);
        for (name, capture) in [("stdout", &live.stdout), ("stderr", &live.stderr)] {
            if capture.omitted() > 0 {
                append_notice(
                    &mut stderr,
                    &format!(
                        "{name} was {} bytes; {} bytes in the middle were omitted",
                        capture.total(),
                        capture.omitted()
                    ),
                );
            }
        }
        if let Some(notice) = outcome_notice(&outcome, grace_secs) {
            append_notice(&mut stderr, &notice);
        }
        stdout.shrink_to_fit();
        stderr.shrink_to_fit();
        live.ending = Some(Ending {
            outcome,
            stdout,
            stderr,
            datetime_finished: local_datetime(SystemTime::now()),
            took: self.started.map(|t| t.elapsed()),
        });
    }

    /// The snapshot the execution will show once committed: what its finish record holds.
    /// Before `conclude`, the current snapshot.
    pub fn final_snapshot(&self) -> Snapshot {
        let live = self.live();
        match &live.ending {
            Some(e) => self.snapshot_of(
                &Phase::Finished(e.outcome.clone()),
                e.stdout.clone(),
                e.stderr.clone(),
                &e.datetime_finished,
            ),
            None => {
                drop(live);
                self.snapshot()
            }
        }
    }

    /// Shows the concluded final state and wakes every waiter. Returns false when there was
    /// nothing to commit.
    pub fn commit(&self) -> bool {
        {
            let mut live = self.live();
            let Some(e) = live.ending.take() else {
                return false;
            };
            live.final_text = Some((e.stdout, e.stderr));
            // The captures are no longer needed: give their memory back.
            live.stdout = Capture::new(0);
            live.stderr = Capture::new(0);
            live.datetime_finished = e.datetime_finished;
            live.took = e.took;
            live.phase = Phase::Finished(e.outcome);
        }
        self.stage.send_replace(Stage::Finished);
        true
    }

    /// `conclude` and `commit` at once, for records that are never written to disk.
    #[cfg(test)]
    pub fn finish(&self, outcome: Outcome, grace_secs: u64) {
        self.conclude(outcome, grace_secs);
        self.commit();
    }

    /// Notes that the first record is on disk, and wakes who waits for that.
    pub fn mark_recorded(&self) {
        self.stage.send_if_modified(|s| {
            let earlier = *s < Stage::Recorded;
            if earlier {
                *s = Stage::Recorded;
            }
            earlier
        });
    }

    /// Resolves once the first record is on disk.
    pub async fn recorded(&self) {
        let mut rx = self.stage.subscribe();
        let _ = rx.wait_for(|s| *s >= Stage::Recorded).await;
    }

    /// Resolves once the execution has finished and its record is on disk.
    pub async fn wait(&self) {
        let mut rx = self.stage.subscribe();
        let _ = rx.wait_for(|s| *s == Stage::Finished).await;
    }

    /// Asks the supervising task to run the kill ladder. Returns false when the execution
    /// had already finished. A second request keeps the first reason.
    pub fn request_kill(&self, reason: KillReason) -> bool {
        {
            let mut live = self.live();
            if live.phase.is_finished() || live.ending.is_some() {
                return false;
            }
            live.kill_request.get_or_insert(reason);
        }
        // notify_one keeps a permit if the task is not waiting yet, so no request is lost.
        self.kill.notify_one();
        true
    }

    /// Resolves with the reason once a kill has been requested.
    pub async fn kill_requested(&self) -> KillReason {
        loop {
            if let Some(r) = self.live().kill_request.clone() {
                return r;
            }
            self.kill.notified().await;
        }
    }

    /// How long it took, once it shows as finished; `None` before, and for a record restored
    /// after a restart.
    pub fn took(&self) -> Option<Duration> {
        self.live().took
    }

    pub fn snapshot(&self) -> Snapshot {
        let live = self.live();
        match &live.final_text {
            Some((o, e)) => {
                self.snapshot_of(&live.phase, o.clone(), e.clone(), &live.datetime_finished)
            }
            None => self.snapshot_of(
                &live.phase,
                redact(live.stdout.render(&self.secrets), &self.secrets),
                redact(live.stderr.render(&self.secrets), &self.secrets),
                &live.datetime_finished,
            ),
        }
    }

    fn snapshot_of(
        &self,
        phase: &Phase,
        stdout: String,
        stderr: String,
        datetime_finished: &str,
    ) -> Snapshot {
        Snapshot {
            datetime_started: self.datetime_started.clone(),
            datetime_finished: datetime_finished.to_string(),
            action_title: self.title.clone(),
            action_id: self.binding_id.clone(),
            action_icon: self.icon.clone(),
            stdout,
            stderr,
            flags: phase.flags(),
            user: self.user.clone(),
            user_class: self.user_class.clone(),
            tags: self.tags.clone(),
            execution_tracking_id: self.tracking_id.to_string(),
        }
    }
}

#[cfg(test)]
pub mod tests;
