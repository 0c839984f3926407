//! The engine: the domain core that the API calls. It owns the table of actions by binding
//! id, the history, the table of running executions, and the rules for starting one
//! (permission, tracking id, concurrency and rate limits → blocked entries). Everything it
//! decides is synchronous and happens under short locks, so a check and the insert that
//! follows it are atomic; processes are the executor's business and wire formats the API's.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

use tracing::{info, warn};

use crate::arguments::{self, ArgError};
use crate::config::{Action, Config};
use crate::entities::{self, EntitySet, Instance};
use crate::events::{Bus, Event};
use crate::execution::{
    Execution, KillReason, NewExecution, Outcome, Restored, TrackingId, new_tracking_id,
    valid_tracking_id,
};
use crate::executor::{self, Observer, Reaper};
use crate::history::{History, Page};
use crate::journal;
use crate::output::Chunker;
use crate::permissions::{Caller, Decision, Verb, decide};
use crate::store::Journal;
use crate::template::{Placeholder, Template};

/// Why the engine refused. The API maps each variant to a Connect code in one place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    UnknownAction(String),
    UnknownExecution(String),
    NoExecutionOf(String),
    MissingIds,
    BadTrackingId(String),
    TrackingIdInUse(String),
    /// A feature this version does not have yet (entity actions).
    NotBuilt(String),
    /// A request argument broke its declaration.
    BadArgument(ArgError),
    /// The command, with its arguments substituted, is longer than the system accepts.
    CommandTooLong(String),
    /// RestartAction of an execution whose arguments are no longer known.
    ArgumentsUnavailable(String),
    Denied(Verb),
    LoginRequired,
    NegativeOffset(i64),
    Stopping,
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

/// One way to start an action: the action itself, or, for an entity action, one instance
/// of its entity type (SPEC §5.1).
#[derive(Debug, Clone)]
pub struct Binding {
    pub id: String,
    /// For an entity binding, a copy with the binding id and the title and icon rendered
    /// for the instance.
    pub action: Arc<Action>,
    /// The title as configured: what dashboards link by.
    pub template_title: String,
    /// The configured action's position in the config (the Action message's `order`).
    pub order: usize,
    pub instance: Option<Arc<Instance>>,
}

/// The configuration and entities in force, and the bindings derived from them. A reload
/// builds a new one and swaps it whole; readers hold an `Arc` to the one they started with.
pub struct Catalog {
    pub config: Arc<Config>,
    pub entities: Arc<EntitySet>,
    bindings: Vec<Binding>,
    index: HashMap<String, usize>,
}

/// `text` with the instance's fields filled in, when every placeholder in it is an entity
/// field; otherwise the text as written.
pub fn render_for(text: &str, instance: &Instance) -> String {
    render_with(text, instance, |v| v)
}

/// The same for HTML written in the config (`display` components, icons): entity values come
/// from files that scripts write, so they are escaped, never markup.
pub fn render_html_for(text: &str, instance: &Instance) -> String {
    render_with(text, instance, |v| {
        let mut out = String::with_capacity(v.len());
        for c in v.chars() {
            match c {
                '&' => out.push_str("&amp;"),
                '<' => out.push_str("&lt;"),
                '>' => out.push_str("&gt;"),
                '"' => out.push_str("&quot;"),
                '\'' => out.push_str("&#39;"),
                c => out.push(c),
            }
        }
        out
    })
}

fn render_with(text: &str, instance: &Instance, value: impl Fn(String) -> String) -> String {
    match Template::literal(text) {
        Ok(t)
            if t.placeholders()
                .all(|(p, _)| matches!(p, Placeholder::Entity(_))) =>
        {
            t.render(&|p| match p {
                Placeholder::Entity(field) => instance.field(field).map(&value),
                Placeholder::Argument(_) => None,
            })
        }
        _ => text.to_string(),
    }
}

impl Catalog {
    pub fn new(config: Arc<Config>, entities: Arc<EntitySet>) -> Catalog {
        let mut bindings = Vec::new();
        let mut index = HashMap::new();
        for (order, action) in config.actions.iter().enumerate() {
            let Some(kind) = &action.entity else {
                index.insert(action.id.clone(), bindings.len());
                bindings.push(Binding {
                    id: action.id.clone(),
                    action: Arc::new(action.clone()),
                    template_title: action.title.clone(),
                    order,
                    instance: None,
                });
                continue;
            };
            for instance in entities.instances(kind) {
                let id = entities::binding_id(&action.id, &instance.key);
                if index.contains_key(&id) {
                    warn!(
                        "binding {id} of action {} is also another binding's id: skipped",
                        action.id
                    );
                    continue;
                }
                let mut copy = action.clone();
                copy.id = id.clone();
                copy.title = render_for(&action.title, instance);
                // Icons are HTML (an entity or an <img>), like display components.
                copy.icon = render_html_for(&action.icon, instance);
                index.insert(id.clone(), bindings.len());
                bindings.push(Binding {
                    id,
                    action: Arc::new(copy),
                    template_title: action.title.clone(),
                    order,
                    instance: Some(Arc::new(instance.clone())),
                });
            }
        }
        Catalog {
            config,
            entities,
            bindings,
            index,
        }
    }

    pub fn binding(&self, id: &str) -> Option<&Binding> {
        self.index.get(id).map(|&i| &self.bindings[i])
    }

    pub fn action(&self, id: &str) -> Option<&Arc<Action>> {
        self.binding(id).map(|b| &b.action)
    }

    /// Every binding, in config order (entity bindings in instance order).
    pub fn bindings(&self) -> &[Binding] {
        &self.bindings
    }
}

pub struct Engine {
    catalog: RwLock<Arc<Catalog>>,
    history: Mutex<History>,
    running: Mutex<HashMap<String, Arc<Execution>>>,
    reaper: Arc<Reaper>,
    bus: Arc<Bus>,
    /// The history file in the state directory; `None` keeps the history in memory only.
    journal: Option<Journal>,
    /// Lines written to the journal since it was last rewritten.
    journal_lines: AtomicUsize,
    stopping: AtomicBool,
    started: std::time::Instant,
    /// Counts catalog swaps, so triggers can re-arm when the config changes.
    changes: tokio::sync::watch::Sender<u64>,
    metrics: crate::metrics::Metrics,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Engine {
    pub fn new(
        config: Arc<Config>,
        entities: EntitySet,
        reaper: Arc<Reaper>,
        bus: Arc<Bus>,
        journal: Option<Journal>,
    ) -> Arc<Engine> {
        let history = Mutex::new(History::new(config.limits.log_history_limit));
        Arc::new(Engine {
            catalog: RwLock::new(Arc::new(Catalog::new(config, Arc::new(entities)))),
            history,
            running: Mutex::new(HashMap::new()),
            reaper,
            bus,
            journal,
            journal_lines: AtomicUsize::new(0),
            stopping: AtomicBool::new(false),
            started: std::time::Instant::now(),
            changes: tokio::sync::watch::Sender::new(0),
            metrics: crate::metrics::Metrics::default(),
        })
    }

    /// The catalog in force.
    pub fn catalog(&self) -> Arc<Catalog> {
        Arc::clone(&self.catalog.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// Swaps in a new configuration and its entities (a reload), then announces it.
    /// Running executions keep the action they started with; the history is trimmed to a
    /// smaller limit.
    pub fn swap(&self, config: Arc<Config>, entities: EntitySet, event: Event) {
        lock(&self.history).set_limit(config.limits.log_history_limit);
        let catalog = Arc::new(Catalog::new(config, Arc::new(entities)));
        *self.catalog.write().unwrap_or_else(|p| p.into_inner()) = catalog;
        self.changes.send_modify(|n| *n += 1);
        self.publish(None, &event);
    }

    /// Wakes its holder after every swap of the catalog (reloads of config or entities).
    pub fn catalog_changes(&self) -> tokio::sync::watch::Receiver<u64> {
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

    /// The counters behind /metrics.
    pub fn metrics(&self) -> &crate::metrics::Metrics {
        &self.metrics
    }

    fn publish(&self, action: Option<&Action>, event: &Event) {
        self.bus.publish(&self.config().auth, action, event);
    }

    /// The configuration in force.
    pub fn config(&self) -> Arc<Config> {
        Arc::clone(&self.catalog().config)
    }

    /// True while the service accepts work.
    pub fn ready(&self) -> bool {
        !self.stopping.load(Ordering::SeqCst)
    }

    pub fn action(&self, binding_id: &str) -> Result<Arc<Action>, Error> {
        self.catalog()
            .action(binding_id)
            .cloned()
            .ok_or_else(|| Error::UnknownAction(binding_id.to_string()))
    }

    fn check(&self, caller: &Caller, action: &Action, verb: Verb) -> Result<(), Error> {
        match decide(&self.config().auth, caller, action, verb) {
            Decision::Allow => Ok(()),
            Decision::Deny => Err(Error::Denied(verb)),
            Decision::LoginRequired => Err(Error::LoginRequired),
        }
    }

    /// Starts an execution for a request from outside (the API). Returns once its record
    /// exists; the process is spawned right after, off the event loop (`executor::launch`).
    pub fn start(
        self: &Arc<Self>,
        req: StartRequest,
        caller: &Caller,
    ) -> Result<Arc<Execution>, Error> {
        self.begin(req, caller, Vec::new(), true)
    }

    /// `start`, with tags on the record naming what started it (a trigger).
    pub fn start_tagged(
        self: &Arc<Self>,
        req: StartRequest,
        caller: &Caller,
        tags: Vec<String>,
    ) -> Result<Arc<Execution>, Error> {
        self.begin(req, caller, tags, false)
    }

    /// Starts an execution. `by_hand` is a person's or a program's request, which may not set
    /// the arguments a file trigger fills in; a trigger's start and a restart (which repeats
    /// recorded values) may.
    fn begin(
        self: &Arc<Self>,
        req: StartRequest,
        caller: &Caller,
        tags: Vec<String>,
        by_hand: bool,
    ) -> Result<Arc<Execution>, Error> {
        if !self.ready() {
            return Err(Error::Stopping);
        }
        let catalog = self.catalog();
        let binding = catalog
            .binding(&req.binding_id)
            .ok_or_else(|| Error::UnknownAction(req.binding_id.clone()))?;
        let action = Arc::clone(&binding.action);
        let instance = binding.instance.clone();
        self.check(caller, &action, Verb::Exec)?;
        // Every argument is checked before anything is created: a refused start leaves no
        // entry and runs nothing.
        if by_hand {
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

        // One snapshot of the config for the whole start, even if a reload lands meanwhile.
        let config = &catalog.config;
        let grace = config.limits.kill_grace_period;
        let plan = executor::plan(
            &action,
            &config.base_dir,
            &tracking_id,
            &caller.username,
            grace,
            &values,
            instance.as_deref(),
        );
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

        let exec = Arc::new(Execution::new(NewExecution {
            tracking_id,
            binding_id: req.binding_id,
            action: Arc::clone(&action),
            user: caller.username.clone(),
            user_class: caller.usergroup.clone(),
            tags,
            arguments: Some(req.arguments),
            secrets: values
                .iter()
                .filter(|v| v.secret)
                .map(|v| v.value.clone())
                .collect(),
            max_output_bytes: config.limits.max_output_bytes,
        }));

        // Check and insert under the same locks, so two presses cannot both pass a limit.
        let blocked = {
            let mut history = lock(&self.history);
            let mut running = lock(&self.running);
            if history.contains(&exec.tracking_id)
                || running.contains_key(exec.tracking_id.as_str())
            {
                return Err(Error::TrackingIdInUse(exec.tracking_id.to_string()));
            }
            let blocked = self.limit_reached(&history, &running, &exec);
            history.insert(Arc::clone(&exec));
            if blocked.is_none() {
                running.insert(exec.tracking_id.to_string(), Arc::clone(&exec));
            }
            blocked
        };
        self.publish(Some(&action), &Event::ExecutionStarted(exec.snapshot()));
        if let Some(reason) = blocked {
            info!(action = %exec.binding_id, id = %exec.tracking_id, "blocked: {reason}");
            exec.finish(Outcome::Blocked(reason), grace.as_secs());
            let snapshot = exec.snapshot();
            self.metrics
                .finished(&exec.binding_id, &snapshot.flags, None);
            self.record(|| journal::finished_line(&snapshot, &exec.binding_id));
            self.publish(Some(&action), &Event::ExecutionFinished(snapshot));
            return Ok(exec);
        }
        // Written before the process exists, so a crash mid-run is visible after a restart.
        self.record(|| journal::started_line(&exec.snapshot(), &exec.binding_id));
        info!(action = %exec.binding_id, id = %exec.tracking_id, user = %exec.user, "starting");
        let secrets: Vec<String> = values
            .iter()
            .filter(|v| v.secret)
            .map(|v| v.value.clone())
            .collect();
        let watch = Watch {
            engine: Arc::clone(self),
            stdout: Chunker::new(secrets.clone()),
            stderr: Chunker::new(secrets),
        };
        executor::launch(plan, Arc::clone(&exec), &self.reaper, Box::new(watch));
        Ok(exec)
    }

    /// The reason a new execution must be blocked, if any (SPEC §5.1).
    fn limit_reached(
        &self,
        history: &History,
        running: &HashMap<String, Arc<Execution>>,
        exec: &Execution,
    ) -> Option<String> {
        let action = &exec.action;
        let same = running
            .values()
            .filter(|e| e.binding_id == exec.binding_id)
            .count();
        if same >= action.max_concurrent {
            return Some(format!(
                "{} is already running {same} time(s) and maxConcurrent is {}",
                exec.binding_id, action.max_concurrent
            ));
        }
        let limit = self.config().limits.max_concurrent_executions;
        if running.len() >= limit {
            return Some(format!(
                "{} executions are running and maxConcurrentExecutions is {limit}",
                running.len()
            ));
        }
        for rule in &action.max_rate {
            let recent = history
                .newest_first()
                .filter(|e| e.binding_id == exec.binding_id)
                .filter(|e| match (exec.started, e.started) {
                    (Some(now), Some(then)) => now.duration_since(then) < rule.window,
                    // Records restored after a restart count for no window.
                    _ => false,
                })
                .filter(|e| !e.phase().flags().blocked)
                .count();
            if recent >= rule.limit as usize {
                return Some(format!(
                    "{} ran {recent} time(s) in the last {} and maxRate allows {}",
                    exec.binding_id,
                    describe(rule.window),
                    rule.limit
                ));
            }
        }
        None
    }

    fn finished(&self, exec: &Execution) {
        lock(&self.running).remove(exec.tracking_id.as_str());
        let snapshot = exec.snapshot();
        let flags = snapshot.flags;
        let ran = exec.started.map(|t| t.elapsed());
        self.metrics.finished(&exec.binding_id, &flags, ran);
        info!(
            action = %exec.binding_id,
            id = %exec.tracking_id,
            exit_code = flags.exit_code,
            timed_out = flags.timed_out,
            "finished"
        );
        self.record(|| journal::finished_line(&snapshot, &exec.binding_id));
        self.publish(Some(&exec.action), &Event::ExecutionFinished(snapshot));
    }

    /// Appends a line to the journal (fsynced by its writer thread), rewriting the file with
    /// only the history's records once it holds twice as many lines as the history limit:
    /// one rewrite per `logHistoryLimit` executions, never one per execution. The line is
    /// built only when there is a journal: serializing it is a tenth of the service's own
    /// work per execution (measured with callgrind, see README "Performance").
    fn record(&self, line: impl FnOnce() -> Vec<u8>) {
        let Some(journal) = &self.journal else { return };
        journal.append(line());
        let written = self.journal_lines.fetch_add(1, Ordering::SeqCst) + 1;
        if written > 2 * self.config().limits.log_history_limit {
            self.compact();
        }
    }

    /// Rewrites the journal with one line per record in the history, oldest first.
    fn compact(&self) {
        let Some(journal) = &self.journal else { return };
        let history = lock(&self.history);
        let mut bytes = Vec::new();
        let mut lines = 0;
        for e in history.newest_first().collect::<Vec<_>>().into_iter().rev() {
            let snapshot = e.snapshot();
            let line = if snapshot.flags.execution_finished {
                journal::finished_line(&snapshot, &e.binding_id)
            } else {
                journal::started_line(&snapshot, &e.binding_id)
            };
            bytes.extend(line);
            lines += 1;
        }
        drop(history);
        journal.replace(bytes);
        self.journal_lines.store(lines, Ordering::SeqCst);
    }

    /// Brings back the records of a previous run (oldest first) and rewrites the journal
    /// with them, always: a torn last line must not stay in the file, or the next line
    /// appended would be glued to it and lost. A record whose action is gone keeps its
    /// title, behind no ACL.
    pub fn restore(&self, records: Vec<Restored>) {
        let catalog = self.catalog();
        {
            let mut history = lock(&self.history);
            for r in records {
                let action = catalog
                    .action(&r.binding_id)
                    .cloned()
                    .unwrap_or_else(|| Arc::new(Action::removed(&r.binding_id, &r.title)));
                history.insert(Arc::new(Execution::restored(r, action)));
            }
        }
        self.compact();
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

    /// Runs the same action again with the recorded arguments, as `caller`, under a new id.
    pub fn restart(
        self: &Arc<Self>,
        tracking_id: &str,
        caller: &Caller,
    ) -> Result<Arc<Execution>, Error> {
        let old = self
            .find(tracking_id)
            .ok_or_else(|| Error::UnknownExecution(tracking_id.to_string()))?;
        // The recorded arguments are checked again against the current config by `start`.
        let arguments = old
            .arguments
            .clone()
            .ok_or_else(|| Error::ArgumentsUnavailable(tracking_id.to_string()))?;
        self.begin(
            StartRequest {
                binding_id: old.binding_id.clone(),
                arguments,
                tracking_id: String::new(),
            },
            caller,
            Vec::new(),
            false,
        )
    }

    pub fn kill(&self, tracking_id: &str, caller: &Caller) -> Result<KillResult, Error> {
        let exec = self
            .find(tracking_id)
            .ok_or_else(|| Error::UnknownExecution(tracking_id.to_string()))?;
        self.check(caller, &exec.action, Verb::Kill)?;
        let killed = exec.request_kill(KillReason::User(caller.username.clone()));
        if killed {
            info!(id = %exec.tracking_id, by = %caller.username, "kill requested");
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
        self.check(caller, &exec.action, Verb::Logs)?;
        Ok(exec)
    }

    /// A newest-first page of the executions the caller may see, of one binding or all.
    pub fn logs(
        &self,
        binding_id: Option<&str>,
        offset: i64,
        caller: &Caller,
    ) -> Result<Page, Error> {
        if let Some(id) = binding_id {
            self.action(id)?;
        }
        let offset = usize::try_from(offset).map_err(|_| Error::NegativeOffset(offset))?;
        let auth = &self.config().auth;
        let keep = |e: &Execution| {
            binding_id.is_none_or(|id| e.binding_id == id)
                && decide(auth, caller, &e.action, Verb::Logs) == Decision::Allow
        };
        Ok(lock(&self.history).page(keep, offset, self.config().limits.log_history_page_size))
    }

    /// Stops accepting starts, runs the kill ladder on every running execution, and waits
    /// until all of them are recorded as finished (bounded by the ladder's own bound).
    pub async fn shutdown(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        let running: Vec<Arc<Execution>> = lock(&self.running).values().cloned().collect();
        if running.is_empty() {
            self.flush();
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
        self.flush();
    }

    /// Waits (briefly) until every journal line is on disk; at shutdown.
    pub fn flush(&self) {
        if let Some(journal) = &self.journal
            && !journal.flush(Duration::from_secs(2))
        {
            warn!("the history file could not be flushed in time");
        }
    }

    /// Ends every event stream (after the executions' last events).
    pub fn close_streams(&self) {
        self.bus.close();
    }
}

fn describe(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0 => format!("{} ms", d.as_millis()),
        s if s % 3600 == 0 => format!("{} h", s / 3600),
        s if s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

/// Publishes a running execution's output as `outputChunk` events: UTF-8 safe, at most
/// 4 KiB each, password values redacted; and its end.
struct Watch {
    engine: Arc<Engine>,
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
            self.engine.publish(Some(&exec.action), &event);
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
        self.engine.finished(exec);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::tests::action;

    fn instance(yaml: &str) -> Instance {
        crate::entities::parse(yaml, "e.yaml")
            .unwrap()
            .instances
            .remove(0)
    }

    #[test]
    fn titles_take_entity_fields_and_html_gets_them_escaped() {
        let i = instance("- {name: \"<b>x</b> & 'y'\"}\n");
        assert_eq!(
            render_for("Ping {{ .CurrentEntity.name }}", &i),
            "Ping <b>x</b> & 'y'"
        );
        assert_eq!(
            render_html_for("<i>{{ server.name }}</i>", &i),
            "<i>&lt;b&gt;x&lt;/b&gt; &amp; &#39;y&#39;</i>"
        );
        // Text with an argument placeholder or no valid placeholder is left as written.
        assert_eq!(render_for("Run {{ arg }}", &i), "Run {{ arg }}");
        assert_eq!(render_for("broken {{", &i), "broken {{");
    }

    #[test]
    fn an_entity_action_has_one_binding_per_instance() {
        let mut config =
            crate::config::parse("{}", crate::config::Source::Embedded, "/".into(), &|_| None)
                .unwrap()
                .0;
        let mut plain = (*action("plain")).clone();
        plain.title = "Plain".into();
        let mut per = (*action("ping")).clone();
        per.title = "Ping {{ .CurrentEntity.name }}".into();
        per.entity = Some("server".into());
        config.actions = vec![plain, per];
        let mut entities = EntitySet::new();
        let file = crate::entities::parse(
            "- {id: a b, name: alpha}\n- {id: c, name: gamma}\n",
            "s.yaml",
        )
        .unwrap();
        entities.replace("server", file.instances);
        let catalog = Catalog::new(Arc::new(config), Arc::new(entities));
        let ids: Vec<&str> = catalog.bindings().iter().map(|b| b.id.as_str()).collect();
        assert_eq!(ids, ["plain", "ping-a_b", "ping-c"]);
        let b = catalog.binding("ping-c").unwrap();
        assert_eq!(b.action.title, "Ping gamma");
        assert_eq!(b.template_title, "Ping {{ .CurrentEntity.name }}");
        assert_eq!(b.instance.as_ref().unwrap().key, "c");
        assert!(
            catalog.binding("ping").is_none(),
            "an entity action has no binding of its own"
        );
    }
}
