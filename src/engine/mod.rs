//! The engine: the domain core that the API and the triggers call. It owns the setup in
//! force (`setup`: config, entities and the bindings derived from them, swapped whole on
//! reload), the history, the table of running executions, the one start path (`start`:
//! checks, admission and the insert, atomically) and each execution's life (`lifecycle`:
//! the start record made durable, the launch, the supervision, the finish record made
//! durable, the end shown). It records every start and end in the history file through
//! `recorder`, and acts on a record only once it is on disk. Everything it decides is
//! synchronous and happens under short locks, so a check and the insert that follows it are
//! atomic; processes are the executor's business and wire formats the API's.

mod admission;
mod error;
mod lifecycle;
mod recorder;
mod setup;
mod start;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

use tracing::info;

use crate::config::{Action, Config};
use crate::entities::EntitySet;
use crate::events::{Bus, Event};
use crate::execution::{Cause, Execution, KillReason, Restored};
use crate::executor::{Executor, Reaper};
use crate::history::{History, Page};
use crate::permissions::{Caller, Decision, Verb, decide};
use crate::store::Store;
pub use error::Error;
use recorder::Recorder;
pub use setup::{Binding, Setup, escape_html, render_for, render_html_for};
pub use start::StartRequest;
use start::secret_owner;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KillResult {
    pub killed: bool,
    pub already_completed: bool,
}

/// The engine of the service, whose processes come from `X`: the system's (the reaper's), or
/// in unit tests a simulated process table (`executor::fake`).
pub struct Engine<X: Executor = Arc<Reaper>> {
    setup: RwLock<Arc<Setup>>,
    history: Mutex<History>,
    running: Mutex<HashMap<String, Arc<Execution>>>,
    /// Starts the runs' processes.
    executor: X,
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

impl<X: Executor> Engine<X> {
    /// `executor`: where the runs' processes come from. `store`: the state directory, where the history file is kept (a store without one
    /// keeps the history in memory only). `restored`: the records of a previous run, oldest
    /// first, which the history and the rewritten file start with. A record whose action is
    /// gone keeps its title, behind no ACL.
    pub fn new(
        config: Arc<Config>,
        entities: EntitySet,
        executor: X,
        bus: Arc<Bus>,
        store: &Store,
        restored: Vec<Restored>,
    ) -> Arc<Engine<X>> {
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
        let recorder = Recorder::open(store, &history, &config);
        Arc::new(Engine {
            setup: RwLock::new(Arc::new(setup)),
            history: Mutex::new(history),
            running: Mutex::new(HashMap::new()),
            executor,
            bus,
            recorder,
            stopping: AtomicBool::new(false),
            started: Instant::now(),
            changes: tokio::sync::watch::Sender::new(0),
            metrics: crate::metrics::Metrics::default(),
        })
    }

    /// The setup in force.
    pub fn setup(&self) -> Arc<Setup> {
        Arc::clone(&self.setup.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// The configuration in force.
    pub fn config(&self) -> Arc<Config> {
        Arc::clone(&self.setup().config)
    }

    /// Swaps in a new setup (a reload), then announces it. Running executions keep the
    /// action they started with; the history is trimmed to a smaller limit. A reload makes
    /// the setup off the event loop, since thousands of entity bindings take a while to make.
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
    /// (`Execution::recorded` resolves then), by its life's task (`lifecycle`).
    pub fn start(
        self: &Arc<Self>,
        req: StartRequest,
        caller: &Caller,
    ) -> Result<Arc<Execution>, Error> {
        self.begin(req, caller, Cause::Request, Vec::new())
    }

    /// `start` for a trigger, with tags on the record naming it. A trigger may fill the
    /// arguments a file trigger declares.
    pub fn start_triggered(
        self: &Arc<Self>,
        req: StartRequest,
        caller: &Caller,
        tags: Vec<String>,
    ) -> Result<Arc<Execution>, Error> {
        self.begin(req, caller, Cause::Trigger, tags)
    }

    /// Runs the same binding again with the recorded arguments, as `caller` (whose request
    /// came `from` there), under a new id. The values are checked again against the config in
    /// force, as a start's are.
    pub fn restart(
        self: &Arc<Self>,
        tracking_id: &str,
        caller: &Caller,
        from: Option<std::net::IpAddr>,
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
        let cause = old
            .cause
            .as_ref()
            .unwrap_or(&Cause::Request)
            .restarted(&old.tracking_id);
        let req = StartRequest {
            binding_id: old.binding_id.clone(),
            arguments,
            tracking_id: String::new(),
            from,
        };
        self.begin(req, caller, cause, Vec::new())
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
