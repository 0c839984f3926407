//! The engine: the domain core that the API and the triggers call. It owns the setup in
//! force (`setup`: config, entities and the bindings derived from them, swapped whole on
//! reload), the history, the table of running executions, and the one start path:
//! permission, argument checks, tracking id, then admission (`admission`: concurrency and
//! rate limits → blocked entries) and the insert, atomically, then the start record. It
//! records every start and end in the history file through `recorder`, and acts on a record
//! only once it is on disk (`durable`): then a run is launched and announced, or its end is
//! shown to everyone at once. Everything it decides is synchronous and happens under short
//! locks, so a check and the insert that follows it are atomic; processes are the
//! executor's business and wire formats the API's.

mod admission;
mod recorder;
mod setup;

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, Weak};
use std::time::{Duration, Instant};

use tracing::{debug, info};

use crate::arguments::{self, ArgError};
use crate::config::{Action, Config};
use crate::entities::EntitySet;
use crate::events::{Bus, Event};
use crate::execution::{
    Execution, KillReason, NewExecution, Origin, Outcome, Restored, SecretOwner, TrackingId,
    new_tracking_id, valid_tracking_id,
};
use crate::executor::{self, Observer, Reaper};
use crate::history::{History, Page};
use crate::output::Chunker;
use crate::permissions::{Caller, Decision, Provider, Verb, decide};
use crate::store::Store;
use admission::{Candidate, Earlier, limit_reached};
use recorder::{Kind, Launch, Line, OnDisk, Recorder};
pub use setup::{Binding, Setup, escape_html, render_for, render_html_for};

/// Why the engine refused. The API maps each variant to a Connect code in one place
/// (`api::connect_error`); the text is the message a client or the log shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    UnknownAction(String),
    UnknownExecution(String),
    NoExecutionOf(String),
    MissingIds,
    BadTrackingId(String),
    TrackingIdInUse(String),
    /// A request argument broke its declaration.
    BadArgument(ArgError),
    /// The command, with its arguments substituted, is longer than the system accepts.
    CommandTooLong(String),
    /// RestartAction of an execution whose arguments are no longer known.
    ArgumentsUnavailable(String),
    /// RestartAction, by someone else, of an execution whose request gave password values.
    SecretsNotReplayed(String),
    /// The action is disabled by an error in the config: its id, and the errors.
    Disabled {
        id: String,
        reason: String,
    },
    Denied(Verb),
    LoginRequired,
    NegativeOffset(i64),
    Stopping,
    /// The history file cannot be written now (its writer retries): no run starts.
    HistoryUnwritable(String),
    /// This many records already wait for the disk under the history file.
    HistoryBehind {
        waiting: usize,
        file: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnknownAction(id) => write!(f, "no action with id {id:?}"),
            Error::UnknownExecution(id) => write!(f, "no execution with tracking id {id:?}"),
            Error::NoExecutionOf(id) => {
                write!(f, "action {id:?} has no execution in the history")
            }
            Error::MissingIds => f.write_str("give an executionTrackingId or an actionId"),
            Error::BadTrackingId(id) => write!(
                f,
                "uniqueTrackingId {id:?} is invalid: use 1 to 64 of A-Z a-z 0-9 . _ - or leave it empty"
            ),
            Error::TrackingIdInUse(id) => write!(
                f,
                "uniqueTrackingId {id:?} is already used: choose another or leave it empty"
            ),
            Error::BadArgument(e) => write!(f, "{e}"),
            Error::CommandTooLong(why) => f.write_str(why),
            Error::ArgumentsUnavailable(id) => write!(
                f,
                "the arguments of execution {id:?} are no longer known: start the action again"
            ),
            Error::SecretsNotReplayed(id) => write!(
                f,
                "execution {id:?} was started with password values, which are replayed only \
                 for the caller who entered them: start the action again and enter them"
            ),
            Error::Disabled { id, reason } => write!(
                f,
                "action {id:?} is disabled by an error in the config, and does not run until \
                 it is fixed: {reason}"
            ),
            Error::Denied(verb) => write!(
                f,
                "you do not have the {} permission on this action",
                verb.as_str()
            ),
            Error::LoginRequired => {
                f.write_str("log in first, or send an API token: guests must log in here")
            }
            Error::NegativeOffset(n) => write!(f, "startOffset must not be negative, got {n}"),
            Error::Stopping => f.write_str("actiond is shutting down: try again shortly"),
            Error::HistoryUnwritable(why) => write!(
                f,
                "{why}: no run starts until its record can be kept; actiond keeps retrying"
            ),
            Error::HistoryBehind { waiting, file } => write!(
                f,
                "{waiting} records already wait to be written to {file} (historyQueueLength): \
                 the storage is slower than the work; try again shortly"
            ),
        }
    }
}

/// A request to start an action.
#[derive(Debug, Clone, Default)]
pub struct StartRequest {
    pub binding_id: String,
    pub arguments: Vec<(String, String)>,
    pub tracking_id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KillResult {
    pub killed: bool,
    pub already_completed: bool,
}

/// An execution checked and ready to be admitted: its record, and what its launch needs.
struct Prepared {
    exec: Arc<Execution>,
    launch: Launch,
}

pub struct Engine {
    setup: RwLock<Arc<Setup>>,
    history: Mutex<History>,
    running: Mutex<HashMap<String, Arc<Execution>>>,
    reaper: Arc<Reaper>,
    bus: Arc<Bus>,
    recorder: Recorder,
    stopping: AtomicBool,
    started: Instant,
    /// Counts swaps of the setup, so triggers can re-arm when the config changes.
    changes: tokio::sync::watch::Sender<u64>,
    metrics: crate::metrics::Metrics,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Engine {
    /// `store`: the state directory, where the history file is kept (a store without one
    /// keeps the history in memory only). `restored`: the records of a previous run, oldest
    /// first, which the history and the rewritten file start with. A record whose action is
    /// gone keeps its title, behind no ACL. Must be called inside the tokio runtime: the
    /// records that reach the disk come back to a task of it.
    pub fn new(
        config: Arc<Config>,
        entities: EntitySet,
        reaper: Arc<Reaper>,
        bus: Arc<Bus>,
        store: &Store,
        restored: Vec<Restored>,
    ) -> Arc<Engine> {
        let setup = Setup::new(Arc::clone(&config), Arc::new(entities));
        let mut history = History::new(config.limits.log_history_limit);
        for r in restored {
            let action = setup
                .action(&r.binding_id)
                .cloned()
                .unwrap_or_else(|| Arc::new(Action::removed(&r.binding_id, &r.title)));
            let e = Arc::new(Execution::restored(r, action));
            let blocked = e.phase().flags().blocked;
            history.insert(e, blocked);
        }
        let (recorder, on_disk) = Recorder::open(store, &history, &config);
        let engine = Arc::new(Engine {
            setup: RwLock::new(Arc::new(setup)),
            history: Mutex::new(history),
            running: Mutex::new(HashMap::new()),
            reaper,
            bus,
            recorder,
            stopping: AtomicBool::new(false),
            started: Instant::now(),
            changes: tokio::sync::watch::Sender::new(0),
            metrics: crate::metrics::Metrics::default(),
        });
        if let Some(on_disk) = on_disk {
            tokio::spawn(Engine::on_disk(Arc::downgrade(&engine), on_disk));
        }
        engine
    }

    /// Acts on the records the history file's writer hands back, in the order they were
    /// queued, on the event loop like every other change of the engine's state.
    async fn on_disk(engine: Weak<Engine>, mut batches: OnDisk) {
        while let Some(lines) = batches.recv().await {
            let Some(engine) = engine.upgrade() else {
                return;
            };
            engine.recorder.back(lines.len());
            for line in lines {
                engine.durable(line);
            }
        }
    }

    /// Hands a record to the history file, and acts on it now if there is none.
    fn record(self: &Arc<Self>, line: Line) {
        if let Some(line) = self.recorder.record(line) {
            self.durable(line);
        }
    }

    /// What happens once a record is on disk: a run is launched and announced; an end is
    /// shown, to every reader at once (the execution, the running table, the metrics, the
    /// event that the event streams and MQTT follow).
    fn durable(self: &Arc<Self>, line: Line) {
        let Line { exec, kind } = line;
        match kind {
            Kind::Started(launch) => self.launch(exec, *launch),
            Kind::Blocked => {
                exec.mark_recorded();
                self.publish(
                    Some(&exec.binding_id),
                    &Event::ExecutionStarted(exec.snapshot()),
                );
                self.show_end(&exec, None);
            }
            Kind::Finished { ran, .. } => {
                let flags = self.show_end(&exec, ran);
                // The one INFO line of a run: who pressed, and how it ended (the start is at
                // debug; two lines per run cost 7 000 instructions and a write, a fifteenth
                // of the service's own work per press).
                let origin = exec.origin.as_ref().unwrap_or(&Origin::Request);
                info!(
                    action = %exec.binding_id,
                    id = %exec.tracking_id,
                    user = %exec.user,
                    %origin,
                    exit_code = flags.exit_code,
                    timed_out = flags.timed_out,
                    "finished"
                );
            }
        }
    }

    /// Announces a run whose start is on disk, and starts its process.
    fn launch(self: &Arc<Self>, exec: Arc<Execution>, launch: Launch) {
        exec.mark_recorded();
        self.publish(
            Some(&exec.binding_id),
            &Event::ExecutionStarted(exec.snapshot()),
        );
        let origin = exec.origin.as_ref().unwrap_or(&Origin::Request);
        debug!(
            action = %exec.binding_id,
            id = %exec.tracking_id,
            user = %exec.user,
            %origin,
            "starting"
        );
        let watch = Watch {
            engine: Arc::clone(self),
            exec: Arc::clone(&exec),
            stdout: Chunker::new(launch.secrets.clone()),
            stderr: Chunker::new(launch.secrets),
        };
        executor::launch(launch.plan, exec, &self.reaper, Box::new(watch));
    }

    /// Shows the end of `exec` (which ran for `ran`, if it ran), counts and announces it.
    fn show_end(&self, exec: &Execution, ran: Option<Duration>) -> crate::execution::Flags {
        lock(&self.running).remove(exec.tracking_id.as_str());
        exec.commit();
        let snapshot = exec.snapshot();
        let flags = snapshot.flags;
        self.metrics.finished(&exec.binding_id, &flags, ran);
        self.publish(Some(&exec.binding_id), &Event::ExecutionFinished(snapshot));
        flags
    }

    /// The setup in force.
    pub fn setup(&self) -> Arc<Setup> {
        Arc::clone(&self.setup.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// The configuration in force.
    pub fn config(&self) -> Arc<Config> {
        Arc::clone(&self.setup().config)
    }

    /// Swaps in a new configuration and its entities (a reload), then announces it.
    /// Running executions keep the action they started with; the history is trimmed to a
    /// smaller limit.
    pub fn swap(&self, config: Arc<Config>, entities: EntitySet, event: Event) {
        self.swap_setup(Setup::new(config, Arc::new(entities)), event);
    }

    /// `swap` with the setup made already: a reload makes it off the event loop, since
    /// thousands of entity bindings take a while to make.
    pub fn swap_setup(&self, setup: Setup, event: Event) {
        lock(&self.history).set_limit(setup.config.limits.log_history_limit);
        self.recorder.configure(&setup.config);
        let setup = Arc::new(setup);
        *self.setup.write().unwrap_or_else(|p| p.into_inner()) = Arc::clone(&setup);
        // Users, tokens and the guest gate may have changed: the event streams' callers are
        // identified again before anything else is published.
        self.bus.revalidate(&setup.config.auth);
        self.changes.send_modify(|n| *n += 1);
        self.publish(None, &event);
    }

    /// Wakes its holder after every swap of the setup (reloads of config or entities).
    pub fn setup_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// How long the service has been running.
    pub fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    /// (entries in the history, executions running), for reports.
    pub fn counts(&self) -> (usize, usize) {
        (lock(&self.history).len(), lock(&self.running).len())
    }

    pub fn bus(&self) -> &Arc<Bus> {
        &self.bus
    }

    /// What the history file's writer has done, when there is one (for /metrics).
    pub fn history_file(&self) -> Option<crate::metrics::HistoryFile> {
        self.recorder.stats().map(|s| crate::metrics::HistoryFile {
            records: s.records,
            syncs: s.syncs,
            waiting: s.waiting,
        })
    }

    /// The counters behind /metrics.
    pub fn metrics(&self) -> &crate::metrics::Metrics {
        &self.metrics
    }

    /// Publishes `event`, about a run of `binding_id` (none for config events): who receives
    /// it is decided by the config in force and its action for that binding.
    fn publish(&self, binding_id: Option<&str>, event: &Event) {
        let setup = self.setup();
        let action = binding_id.map(|id| setup.action_for_run(id));
        self.bus.publish(&setup.config.auth, action, event);
    }

    /// True while the service accepts work.
    pub fn ready(&self) -> bool {
        !self.stopping.load(Ordering::SeqCst)
    }

    fn check(setup: &Setup, caller: &Caller, action: &Action, verb: Verb) -> Result<(), Error> {
        match decide(&setup.config.auth, caller, action, verb) {
            Decision::Allow => Ok(()),
            Decision::Deny => Err(Error::Denied(verb)),
            Decision::LoginRequired => Err(Error::LoginRequired),
        }
    }

    /// The check of `verb` on an existing run: against the action the setup in force has for
    /// its binding (`Setup::action_for_run`), never the one it started with.
    fn check_run(
        setup: &Setup,
        caller: &Caller,
        exec: &Execution,
        verb: Verb,
    ) -> Result<(), Error> {
        Self::check(setup, caller, setup.action_for_run(&exec.binding_id), verb)
    }

    /// Starts an execution for a request from outside (the API). Returns once its record
    /// exists in memory; its process is spawned once the record is on disk
    /// (`Execution::recorded` resolves then), off the event loop (`executor::launch`).
    pub fn start(
        self: &Arc<Self>,
        req: StartRequest,
        caller: &Caller,
    ) -> Result<Arc<Execution>, Error> {
        self.begin(req, caller, Origin::Request, Vec::new())
    }

    /// `start` for a trigger, with tags on the record naming it. A trigger may fill the
    /// arguments a file trigger declares.
    pub fn start_triggered(
        self: &Arc<Self>,
        req: StartRequest,
        caller: &Caller,
        tags: Vec<String>,
    ) -> Result<Arc<Execution>, Error> {
        self.begin(req, caller, Origin::Trigger, tags)
    }

    /// Runs the same binding again with the recorded arguments, as `caller`, under a new
    /// id. The values are checked again against the config in force, as a start's are.
    pub fn restart(
        self: &Arc<Self>,
        tracking_id: &str,
        caller: &Caller,
    ) -> Result<Arc<Execution>, Error> {
        let old = self
            .find(tracking_id)
            .ok_or_else(|| Error::UnknownExecution(tracking_id.to_string()))?;
        // First whether the caller may run it at all: what follows says things about the run
        // (its arguments are gone, it had password values) that only such a caller may learn.
        Self::check_run(&self.setup(), caller, &old, Verb::Exec)?;
        let arguments = old
            .arguments
            .clone()
            .ok_or_else(|| Error::ArgumentsUnavailable(tracking_id.to_string()))?;
        // Someone else's password is never run again under another name.
        if old
            .secret_owner
            .as_ref()
            .is_some_and(|owner| !owner.may_replay(&secret_owner(caller)))
        {
            return Err(Error::SecretsNotReplayed(tracking_id.to_string()));
        }
        let origin = old
            .origin
            .as_ref()
            .unwrap_or(&Origin::Request)
            .restarted(&old.tracking_id);
        let req = StartRequest {
            binding_id: old.binding_id.clone(),
            arguments,
            tracking_id: String::new(),
        };
        self.begin(req, caller, origin, Vec::new())
    }

    /// The one start path: checks, then room in the history file's queue, then admission
    /// and the insert under the same locks, then the record: a blocked run's only record, or
    /// a run's start record, after which it is launched (`durable`).
    fn begin(
        self: &Arc<Self>,
        req: StartRequest,
        caller: &Caller,
        origin: Origin,
        tags: Vec<String>,
    ) -> Result<Arc<Execution>, Error> {
        if !self.ready() {
            return Err(Error::Stopping);
        }
        // One snapshot of the setup for the whole start, even if a reload lands meanwhile.
        let setup = self.setup();
        let Prepared { exec, launch } = self.prepare(&setup, req, caller, origin, tags)?;
        let limits = &setup.config.limits;
        self.recorder.room(limits.history_queue_length)?;
        let blocked = self.admit(&exec, limits.max_concurrent_executions)?;
        if let Some(reason) = blocked {
            // Anyone allowed to press can press a busy button in a loop: rate-limited.
            if let Some(more) = crate::ratelog::BLOCKED_STARTS.admit() {
                info!(
                    action = %exec.binding_id,
                    id = %exec.tracking_id,
                    user = %exec.user,
                    "blocked: {reason}{more}"
                );
            }
            exec.conclude(Outcome::Blocked(reason), launch.plan.grace.as_secs());
            self.record(Line {
                exec: Arc::clone(&exec),
                kind: Kind::Blocked,
            });
            return Ok(exec);
        }
        self.record(Line {
            exec: Arc::clone(&exec),
            kind: Kind::Started(Box::new(launch)),
        });
        Ok(exec)
    }

    /// Everything a start checks before a record exists: the binding, the permission, every
    /// argument, the tracking id, and whether the command fits the system's limits. A
    /// refused start leaves no entry and runs nothing.
    fn prepare(
        &self,
        setup: &Setup,
        req: StartRequest,
        caller: &Caller,
        origin: Origin,
        tags: Vec<String>,
    ) -> Result<Prepared, Error> {
        let binding = setup
            .binding(&req.binding_id)
            .ok_or_else(|| Error::UnknownAction(req.binding_id.clone()))?;
        let action = Arc::clone(&binding.action);
        Self::check(setup, caller, &action, Verb::Exec)?;
        // Every route meets this: requests, GET starts, restarts, triggers and MQTT presses
        // all come through here. After the permission, so that the errors (which name parts
        // of the config) go only to callers who may run the action.
        if let Some(disabled) = &action.disabled {
            return Err(Error::Disabled {
                id: req.binding_id,
                reason: disabled.reason(),
            });
        }
        if !origin.trigger_values() {
            arguments::refuse_trigger_values(&action.arguments, &req.arguments)
                .map_err(Error::BadArgument)?;
        }
        let values =
            arguments::resolve(&action.arguments, &req.arguments).map_err(Error::BadArgument)?;
        let tracking_id = if req.tracking_id.is_empty() {
            new_tracking_id()
        } else if !valid_tracking_id(&req.tracking_id) {
            return Err(Error::BadTrackingId(req.tracking_id));
        } else {
            let mut id = TrackingId::new();
            let _ = id.push_str(&req.tracking_id);
            id
        };
        let config = &setup.config;
        let mut plan = executor::plan(
            &action,
            &config.base_dir,
            &tracking_id,
            &caller.username,
            config.limits.kill_grace_period,
            &values,
            binding.instance.as_deref(),
        );
        plan.user.clone_from(&config.actions_user);
        // Quoting can make a long value longer than the kernel accepts; refuse now rather
        // than record a spawn failure.
        if let Err(why) = executor::fits(&plan) {
            // Name the longest value: it is the one to shorten.
            return Err(match values.iter().max_by_key(|v| v.value.len()) {
                Some(v) => Error::BadArgument(ArgError {
                    argument: v.name.clone(),
                    rule: why,
                }),
                None => Error::CommandTooLong(why),
            });
        }
        let secrets: Vec<String> = values
            .iter()
            .filter(|v| v.secret)
            .map(|v| v.value.clone())
            .collect();
        let secret_owner = arguments::carries_secret(&action.arguments, &req.arguments)
            .then(|| secret_owner(caller));
        let exec = Arc::new(Execution::new(NewExecution {
            tracking_id,
            binding_id: req.binding_id,
            action,
            user: caller.username.clone(),
            user_class: caller.usergroup.clone(),
            tags,
            secret_owner,
            arguments: Some(req.arguments),
            origin,
            secrets: secrets.clone(),
            max_output_bytes: config.limits.max_output_bytes,
        }));
        Ok(Prepared {
            exec,
            launch: Launch { plan, secrets },
        })
    }

    /// Inserts `exec` into the history, and into the running table unless a limit blocks
    /// it; returns why it is blocked, if it is. The tracking-id check, the limits and the
    /// inserts happen under both locks at once, so two presses cannot both pass a limit.
    fn admit(&self, exec: &Arc<Execution>, max_running: usize) -> Result<Option<String>, Error> {
        let mut history = lock(&self.history);
        let mut running = lock(&self.running);
        let id = exec.tracking_id.as_str();
        if history.contains(id) || running.contains_key(id) {
            return Err(Error::TrackingIdInUse(id.to_string()));
        }
        let candidate = Candidate {
            binding_id: &exec.binding_id,
            started: exec.started.unwrap_or_else(Instant::now),
            max_concurrent: exec.action.max_concurrent,
            max_rate: &exec.action.max_rate,
        };
        let earlier = history
            .newest_first()
            .filter(|e| e.binding_id == exec.binding_id)
            .map(|e| Earlier {
                started: e.started,
                blocked: e.phase().flags().blocked,
            });
        let blocked = limit_reached(
            &candidate,
            running.values().map(|e| e.binding_id.as_str()),
            max_running,
            earlier,
        );
        history.insert(Arc::clone(exec), blocked.is_some());
        if blocked.is_none() {
            running.insert(id.to_string(), Arc::clone(exec));
        }
        Ok(blocked)
    }

    /// Called by the execution's watcher once its process group is gone and its end is
    /// concluded: the end is recorded, and shown once on disk.
    fn finished(self: &Arc<Self>, exec: Arc<Execution>) {
        let ran = exec.started.map(|t| t.elapsed());
        // More than `logHistoryLimit` runs started while this one ran: the history let it go,
        // and its finish must not bring it back into the file where a compaction dropped it.
        let evicted = !lock(&self.history).contains(&exec.tracking_id);
        self.record(Line {
            exec,
            kind: Kind::Finished { ran, evicted },
        });
    }

    /// Whether an execution of `binding_id` is running now (the MQTT "running" state).
    pub fn is_running(&self, binding_id: &str) -> bool {
        lock(&self.running)
            .values()
            .any(|e| e.binding_id == binding_id)
    }

    /// Finds an execution by tracking id, in the history or still running.
    pub fn find(&self, tracking_id: &str) -> Option<Arc<Execution>> {
        if let Some(e) = lock(&self.history).get(tracking_id) {
            return Some(Arc::clone(e));
        }
        lock(&self.running).get(tracking_id).cloned()
    }

    pub async fn kill(&self, tracking_id: &str, caller: &Caller) -> Result<KillResult, Error> {
        let exec = self
            .find(tracking_id)
            .ok_or_else(|| Error::UnknownExecution(tracking_id.to_string()))?;
        Self::check_run(&self.setup(), caller, &exec, Verb::Kill)?;
        let killed = exec.request_kill(KillReason::User(caller.username.clone()));
        if killed {
            info!(id = %exec.tracking_id, by = %caller.username, "kill requested");
        } else {
            // "Already completed" reports the end: only once it is on disk.
            exec.wait().await;
        }
        Ok(KillResult {
            killed,
            already_completed: !killed,
        })
    }

    /// ExecutionStatus: by tracking id, else the most recent execution of the action.
    pub fn status(
        &self,
        tracking_id: &str,
        binding_id: &str,
        caller: &Caller,
    ) -> Result<Arc<Execution>, Error> {
        let exec = if !tracking_id.is_empty() {
            self.find(tracking_id)
                .ok_or_else(|| Error::UnknownExecution(tracking_id.to_string()))?
        } else if !binding_id.is_empty() {
            let latest = lock(&self.history).latest_for(binding_id).cloned();
            latest.ok_or_else(|| Error::NoExecutionOf(binding_id.to_string()))?
        } else {
            return Err(Error::MissingIds);
        };
        Self::check_run(&self.setup(), caller, &exec, Verb::Logs)?;
        Ok(exec)
    }

    /// Shows `visit` the executions of one binding, newest first (GetLogs' order, blocked
    /// ones included), until it returns false; checked like `status` (the caller needs
    /// `logs`). For mirrors that follow every run (MQTT's events). `visit` runs under the
    /// history lock, so it must be short and must not call back into the engine.
    pub fn visit_newest(
        &self,
        binding_id: &str,
        caller: &Caller,
        mut visit: impl FnMut(&Arc<Execution>) -> bool,
    ) -> Result<(), Error> {
        let setup = self.setup();
        Self::check(&setup, caller, setup.action_for_run(binding_id), Verb::Logs)?;
        let history = lock(&self.history);
        for e in history
            .newest_first()
            .filter(|e| e.binding_id == binding_id)
        {
            if !visit(e) {
                break;
            }
        }
        Ok(())
    }

    /// A newest-first page of the executions the caller may see, of one binding or all.
    pub fn logs(
        &self,
        binding_id: Option<&str>,
        offset: i64,
        caller: &Caller,
    ) -> Result<Page, Error> {
        let setup = self.setup();
        if let Some(id) = binding_id
            && setup.binding(id).is_none()
        {
            return Err(Error::UnknownAction(id.to_string()));
        }
        let offset = usize::try_from(offset).map_err(|_| Error::NegativeOffset(offset))?;
        let keep = |e: &Execution| {
            binding_id.is_none_or(|id| e.binding_id == id)
                && Self::check_run(&setup, caller, e, Verb::Logs).is_ok()
        };
        let page_size = setup.config.limits.log_history_page_size;
        Ok(lock(&self.history).page(keep, offset, page_size))
    }

    /// Stops accepting starts, runs the kill ladder on every running execution, and waits
    /// until all of them are recorded as finished (bounded by the ladder's own bound), then
    /// until the history file is flushed. A run whose start is not yet on disk is launched
    /// when it is and killed at once: its record says so.
    pub async fn shutdown(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        let running: Vec<Arc<Execution>> = lock(&self.running).values().cloned().collect();
        if running.is_empty() {
            self.recorder.flush();
            return;
        }
        info!(count = running.len(), "stopping running executions");
        for e in &running {
            e.request_kill(KillReason::Shutdown);
        }
        let bound = self.config().limits.kill_grace_period + Duration::from_millis(1500);
        let all = async {
            for e in &running {
                e.wait().await;
            }
        };
        let _ = tokio::time::timeout(bound, all).await;
        self.recorder.flush();
    }

    /// Ends every event stream (after the executions' last events).
    pub fn close_streams(&self) {
        self.bus.close();
    }
}

/// Who gave a run's password values, as the run keeps it: the same user identified the same
/// way (a local login, a token, a trusted header) may replay them; another session of that
/// user may too, another provider's user of the same name may not.
/// The guest is everyone who reaches the port, and the system and MQTT users are shared by
/// every trigger and every client of the broker: none of them is one person.
fn secret_owner(caller: &Caller) -> SecretOwner {
    match caller.provider {
        Provider::Local | Provider::Header | Provider::Token => SecretOwner::Named {
            provider: caller.provider.as_str(),
            username: caller.username.clone(),
        },
        Provider::System | Provider::Mqtt => SecretOwner::Shared,
    }
}

/// Publishes a running execution's output as `outputChunk` events: UTF-8 safe, at most
/// 4 KiB each, password values redacted; and its end.
struct Watch {
    engine: Arc<Engine>,
    exec: Arc<Execution>,
    stdout: Chunker,
    stderr: Chunker,
}

impl Watch {
    fn send(&self, exec: &Execution, chunks: Vec<String>) {
        for output in chunks {
            let event = Event::OutputChunk {
                tracking_id: exec.tracking_id.to_string(),
                output,
            };
            self.engine.publish(Some(&exec.binding_id), &event);
        }
    }
}

impl Observer for Watch {
    fn output(&mut self, exec: &Execution, stderr: bool, data: &[u8]) {
        let chunks = if stderr {
            self.stderr.feed(data)
        } else {
            self.stdout.feed(data)
        };
        self.send(exec, chunks);
    }

    fn done(mut self: Box<Self>, exec: &Execution) {
        let mut rest = self.stdout.finish();
        rest.extend(self.stderr.finish());
        self.send(exec, rest);
        let Watch { engine, exec, .. } = *self;
        engine.finished(exec);
    }
}
