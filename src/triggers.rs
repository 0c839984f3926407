//! Triggers: actions that start by themselves, at start-up (`execOnStartup`), on a
//! schedule (`execOnCron`) or when a file appears or changes in a directory
//! (`execOnFileCreatedInDir`, `execOnFileChangedInDir`). It owns when a triggered run starts
//! and with what: the system user (`startup`, `cron`, `fileindir`, group `system`, as in
//! OliveTin), the tags naming the trigger, and the file's details as arguments. It starts
//! every run through `Engine::start_triggered`, so triggered runs meet the same permission
//! function, limits, history and events as a button press; it must not spawn, decide
//! permissions or quote anything itself.
//!
//! Every line a file in a watched directory can cause (a name that is not UTF-8, files ignored
//! in a flood, a run not started) goes through `ratelog`: whoever may write the directory must
//! not flood the journal.
//!
//! Triggers are armed from the config in force and re-armed after every reload: a trigger
//! that is still configured keeps running untouched (an `@every` keeps its rhythm), a removed
//! one stops, a new one starts. Start-up runs happen once, when actiond starts.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nix::sys::inotify::AddWatchFlags;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tracing::{debug, info, warn};

use crate::arguments::{Broken, file_values};
use crate::clock::LocalZone;
use crate::config::Config;
use crate::engine::{Engine, Error, StartRequest};
use crate::inotify::{Watch, register};
use crate::permissions::Caller;
use crate::ratelog;
use crate::schedule::{self, Schedule};

/// At most this many files wait for their debounce in one watched directory; beyond it, new
/// names are dropped (and the log says how many) until the queue drains.
pub const MAX_PENDING_FILES: usize = 1024;

/// What a file trigger reacts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileEvent {
    /// A new entry in the directory (created, or moved in), once it has been quiet.
    Created,
    /// An entry created, written or moved in, once it has been quiet.
    Changed,
}

impl FileEvent {
    fn tag(self) -> &'static str {
        match self {
            FileEvent::Created => "fileCreatedInDir",
            FileEvent::Changed => "fileChangedInDir",
        }
    }
}

/// One armed trigger: the action it starts and what starts it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Trigger {
    Cron {
        action: String,
        line: String,
    },
    File {
        action: String,
        dir: PathBuf,
        event: FileEvent,
    },
}

/// The triggers `config` asks for. Relative directories are relative to the config file.
/// Lines that do not parse were refused when the config loaded, so none are left here.
pub fn armed_by(config: &Config) -> HashSet<Trigger> {
    let mut out = HashSet::new();
    // A disabled action never runs, so its triggers are not armed (its cron lines or
    // directories may be what is wrong with it).
    for a in config.actions.iter().filter(|a| a.disabled.is_none()) {
        for line in &a.exec_on_cron {
            out.insert(Trigger::Cron {
                action: a.id.clone(),
                line: line.trim().to_string(),
            });
        }
        for (dirs, event) in [
            (&a.exec_on_file_created_in_dir, FileEvent::Created),
            (&a.exec_on_file_changed_in_dir, FileEvent::Changed),
        ] {
            for dir in dirs {
                out.insert(Trigger::File {
                    action: a.id.clone(),
                    dir: config.base_dir.join(dir.trim()),
                    event,
                });
            }
        }
    }
    out
}

/// Runs the start-up triggers, then keeps the other triggers armed to the config in force
/// until the task is dropped (which stops them all).
pub async fn run(engine: Arc<Engine>) {
    let config = engine.config();
    for a in config
        .actions
        .iter()
        .filter(|a| a.exec_on_startup && a.disabled.is_none())
    {
        fire(
            &engine,
            &a.id,
            "startup",
            vec!["startup".into()],
            Vec::new(),
            None,
        );
    }
    let mut changes = engine.setup_changes();
    let mut armed = Armed::default();
    loop {
        armed.rearm(&engine);
        if changes.changed().await.is_err() {
            return;
        }
    }
}

/// The running trigger tasks. Dropping it stops them.
#[derive(Default)]
struct Armed(HashMap<Trigger, JoinHandle<()>>);

impl Drop for Armed {
    fn drop(&mut self) {
        for task in self.0.values() {
            task.abort();
        }
    }
}

impl Armed {
    fn rearm(&mut self, engine: &Arc<Engine>) {
        let want = armed_by(&engine.config());
        // A task that ended (a directory that could not be watched) is tried again.
        self.0.retain(|t, task| {
            let keep = want.contains(t) && !task.is_finished();
            if !keep {
                task.abort();
            }
            keep
        });
        for t in want {
            if self.0.contains_key(&t) {
                continue;
            }
            debug!("arming {t:?}");
            let engine = Arc::clone(engine);
            let task = match t.clone() {
                Trigger::Cron { action, line } => tokio::spawn(cron(engine, action, line)),
                Trigger::File { action, dir, event } => {
                    tokio::spawn(files(engine, action, dir, event))
                }
            };
            self.0.insert(t, task);
        }
    }
}

/// Starts every binding of the configured action `action_id` (one for a plain action, one
/// per instance for an entity action) as the system user `user`.
fn fire(
    engine: &Arc<Engine>,
    action_id: &str,
    user: &str,
    tags: Vec<String>,
    args: Vec<(String, String)>,
    file: Option<&Path>,
) {
    let setup = engine.setup();
    let Some(order) = setup.config.actions.iter().position(|a| a.id == action_id) else {
        return;
    };
    let caller = Caller::system(user);
    for b in setup.bindings().iter().filter(|b| b.order == order) {
        let req = StartRequest {
            binding_id: b.id.clone(),
            arguments: args.clone(),
            tracking_id: String::new(),
            from: None,
        };
        match engine.start_triggered(req, &caller, tags.clone()) {
            Ok(exec) => debug!(action = %b.id, id = %exec.tracking_id, "started by {user}"),
            Err(e) => {
                // The usual cause is a config that switched default permissions off: say
                // who the trigger runs as, so the ACL to write is obvious.
                let hint = match (&e, file) {
                    (Error::Denied(_) | Error::LoginRequired, _) => format!(
                        " (triggers run as user {user:?} in group \"system\": an ACL with \
                         matchUsergroups: [system] grants them permissions)"
                    ),
                    (Error::BadArgument(a), Some(file)) if a.rule == Broken::LeadingDash => {
                        format!(
                            " (the file {}: not run for it. Pass {{{{ filepath }}}}, which is \
                             absolute, to the program, and declare the argument {:?} with \
                             `allowLeadingDash: true` to run for such names)",
                            file.display(),
                            a.argument
                        )
                    }
                    _ => String::new(),
                };
                if let Some(more) = ratelog::TRIGGER_NOT_STARTED.admit() {
                    warn!("{user} trigger of {}: not started: {e}{hint}{more}", b.id);
                }
            }
        }
    }
}

/// Unix time now, in seconds (fractions dropped).
fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The wall clock is read again at least this often while waiting for a scheduled run, so a
/// clock that is set (NTP at boot on a board without a battery-backed clock) is noticed.
const CLOCK_RECHECK: Duration = Duration::from_secs(30);

/// A file fires its trigger once it has been quiet this long.
const FILE_DEBOUNCE: Duration = Duration::from_millis(250);

async fn cron(engine: Arc<Engine>, action: String, line: String) {
    let schedule = match schedule::parse(&line, crate::duration::parse) {
        Ok(s) => s,
        Err(e) => {
            warn!("execOnCron {line:?} of {action}: {e}");
            return;
        }
    };
    let tags = || vec!["cron".to_string(), line.clone()];
    match schedule {
        // Elapsed time: the monotonic clock, unaffected by changes of the wall clock.
        Schedule::Every(period) => {
            let mut next = Instant::now() + period;
            loop {
                tokio::time::sleep_until(next).await;
                fire(&engine, &action, "cron", tags(), Vec::new(), None);
                // Runs missed while late (a suspended board) are not made up for in a burst.
                next += period;
                let now = Instant::now();
                if next <= now {
                    next = now + period;
                }
            }
        }
        Schedule::Calendar(calendar) => loop {
            let Some(at) = calendar.next_after(&LocalZone, unix_now()) else {
                warn!("execOnCron {line:?} of {action}: no run within eight years");
                return;
            };
            let due = UNIX_EPOCH + Duration::from_secs(u64::try_from(at).unwrap_or(0));
            // If the clock jumps past `at` the run happens once, at once; the next one is
            // computed from the new time, so missed runs do not pile up.
            while let Ok(left) = due.duration_since(SystemTime::now()) {
                if left.is_zero() {
                    break;
                }
                tokio::time::sleep(left.min(CLOCK_RECHECK)).await;
            }
            fire(&engine, &action, "cron", tags(), Vec::new(), None);
        },
    }
}

async fn files(engine: Arc<Engine>, action: String, dir: PathBuf, event: FileEvent) {
    if let Err(e) = watch_files(&engine, &action, &dir, event).await {
        warn!(
            "{} of {action}: cannot watch {} ({e}); create it, then save the config to try again",
            event.tag(),
            dir.display()
        );
    }
}

async fn watch_files(
    engine: &Arc<Engine>,
    action: &str,
    dir: &Path,
    event: FileEvent,
) -> std::io::Result<()> {
    let starts = AddWatchFlags::IN_CREATE | AddWatchFlags::IN_MOVED_TO;
    let writes = AddWatchFlags::IN_MODIFY | AddWatchFlags::IN_CLOSE_WRITE;
    let gone = AddWatchFlags::IN_IGNORED | AddWatchFlags::IN_DELETE_SELF;
    let watch = Watch::new()?;
    watch.add(dir, starts | writes | AddWatchFlags::IN_DELETE_SELF)?;
    let fd = register(watch)?;
    info!("{} of {action}: watching {}", event.tag(), dir.display());
    let debounce = FILE_DEBOUNCE;
    let mut pending = Pending::default();
    loop {
        let due = pending.due();
        tokio::select! {
            ready = fd.readable() => {
                let mut ready = ready?;
                // `events` reads until EAGAIN, so the queue is empty: tell the reactor.
                let events = fd.get_ref().events();
                ready.clear_ready();
                let mut dropped = 0;
                for e in events? {
                    if e.mask.intersects(gone) {
                        return Err(std::io::Error::other("the directory went away"));
                    }
                    if e.mask.contains(AddWatchFlags::IN_Q_OVERFLOW)
                        && let Some(more) = ratelog::TRIGGER_FLOOD.admit()
                    {
                        warn!("{} of {action}: too many changes at once, some were missed{more}", event.tag());
                    }
                    let Some(name) = e.name else { continue };
                    let begins = e.mask.intersects(starts) || event == FileEvent::Changed;
                    if !pending.note(name, begins, Instant::now() + debounce) {
                        dropped += 1;
                    }
                }
                if dropped > 0
                    && let Some(more) = ratelog::TRIGGER_FLOOD.admit()
                {
                    warn!("{} of {action}: {dropped} file(s) ignored, {MAX_PENDING_FILES} already waiting{more}", event.tag());
                }
            }
            _ = sleep_until(due) => {
                for name in pending.take_quiet(Instant::now()) {
                    run_for_file(engine, action, dir, event, name);
                }
            }
        }
    }
}

/// The files of one watched directory waiting for their debounce: name → when it will have
/// been quiet long enough. At most `MAX_PENDING_FILES`, so a flood of new files cannot grow
/// the service's memory.
#[derive(Debug, Default)]
struct Pending(HashMap<OsString, Instant>);

impl Pending {
    /// Notes an event for `name`, quiet at `quiet`. A name already waiting waits longer; a
    /// new one is taken if `begins` (an event that starts a run) and there is room. False
    /// when a new name was dropped for lack of room.
    fn note(&mut self, name: OsString, begins: bool, quiet: Instant) -> bool {
        if let Some(at) = self.0.get_mut(&name) {
            *at = quiet;
        } else if begins {
            if self.0.len() >= MAX_PENDING_FILES {
                return false;
            }
            self.0.insert(name, quiet);
        }
        true
    }

    /// When the next file will be quiet.
    fn due(&self) -> Option<Instant> {
        self.0.values().min().copied()
    }

    /// Removes and returns the files quiet at `now`.
    fn take_quiet(&mut self, now: Instant) -> Vec<OsString> {
        let ready: Vec<OsString> = self
            .0
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(n, _)| n.clone())
            .collect();
        for name in &ready {
            self.0.remove(name);
        }
        ready
    }
}

async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn run_for_file(engine: &Arc<Engine>, action: &str, dir: &Path, event: FileEvent, name: OsString) {
    let Ok(name) = name.into_string() else {
        if let Some(more) = ratelog::TRIGGER_BAD_NAME.admit() {
            warn!(
                "{} of {action}: a file name in {} is not UTF-8; not run for it{more}",
                event.tag(),
                dir.display()
            );
        }
        return;
    };
    // A file that is already gone (a temporary file renamed away) is not run for.
    let Ok(meta) = std::fs::symlink_metadata(dir.join(&name)) else {
        debug!("{} of {action}: {name:?} is gone", event.tag());
        return;
    };
    // A symlink would hand the action another file than the one dropped (`photo.jpg ->
    // /etc/shadow`, read by a command running as root), a FIFO or a device would hang or
    // feed it, and a directory carries files under names its dropper chose, which the
    // command's rules cannot see (`mv {{ filepath }} /srv/www/current.pdf` would place
    // `current.pdf/.htaccess`): only regular files are run for.
    let kind = meta.file_type();
    if !kind.is_file() {
        if let Some(more) = ratelog::TRIGGER_NOT_FILE.admit() {
            warn!(
                "{} of {action}: {name:?} in {} is no regular file (a directory, symlink, \
                 FIFO, socket or device); not run for it{more}",
                event.tag(),
                dir.display()
            );
        }
        return;
    }
    let tags = vec![event.tag().to_string(), dir.to_string_lossy().into_owned()];
    fire(
        engine,
        action,
        "fileindir",
        tags,
        file_values(dir, &name, meta.len()),
        Some(&dir.join(&name)),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiting_files_are_bounded_and_leave_once_quiet() {
        let t0 = Instant::now();
        let later = t0 + Duration::from_secs(1);
        let mut p = Pending::default();
        for i in 0..MAX_PENDING_FILES {
            assert!(p.note(format!("f{i}").into(), true, t0));
        }
        // Full: a new file is dropped, a waiting one still waits longer, a write to an
        // unknown file (not an event that begins a run) is ignored, not counted as dropped.
        assert!(!p.note("new".into(), true, t0));
        assert!(p.note("f0".into(), true, later));
        assert!(p.note("other".into(), false, t0));
        assert_eq!(p.0.len(), MAX_PENDING_FILES);
        assert_eq!(p.due(), Some(t0));
        let quiet = p.take_quiet(t0);
        assert_eq!(quiet.len(), MAX_PENDING_FILES - 1);
        assert!(!quiet.contains(&OsString::from("f0")));
        assert_eq!(p.due(), Some(later));
        assert_eq!(p.take_quiet(later), vec![OsString::from("f0")]);
        assert_eq!(p.due(), None);
    }

    #[test]
    fn armed_triggers_follow_the_config() {
        let yaml = "actions:\n\
            - {id: a, shell: 'true', execOnCron: ['@every 1s', ' @every 1s ', '0 * * * *']}\n\
            - {id: b, shell: 'true', execOnFileCreatedInDir: [in, /abs], execOnFileChangedInDir: in}\n\
            - {id: c, shell: 'true', execOnStartup: true}\n";
        let config = crate::config::parse(
            yaml,
            crate::config::Source::Embedded,
            "/etc/actiond".into(),
            &|_| None,
        )
        .unwrap()
        .0;
        let got = armed_by(&config);
        let cron = |l: &str| Trigger::Cron {
            action: "a".into(),
            line: l.into(),
        };
        let file = |d: &str, event| Trigger::File {
            action: "b".into(),
            dir: d.into(),
            event,
        };
        let want: HashSet<Trigger> = [
            cron("@every 1s"),
            cron("0 * * * *"),
            file("/etc/actiond/in", FileEvent::Created),
            file("/abs", FileEvent::Created),
            file("/etc/actiond/in", FileEvent::Changed),
        ]
        .into_iter()
        .collect();
        assert_eq!(got, want);
    }
}
