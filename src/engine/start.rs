//! The one start path: everything a start checks before a record exists (the binding, the
//! permission, every argument, the tracking id, whether the command fits the system's
//! limits), then room in the history file's queue, then admission (`admission`: concurrency
//! and rate limits → blocked entries) and the insert, atomically under the history's and
//! the running table's locks, then the run's life (`lifecycle`). A refused start leaves no
//! entry and runs nothing. It must not wait: every start is decided synchronously.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use tracing::info;

use super::admission::{Candidate, Earlier, limit_reached};
use super::lifecycle::Launch;
use super::{Engine, Error, Setup, lock};
use crate::arguments;
use crate::config::{CommandTemplate, Network};
use crate::execution::{
    Blocked, Cause, Execution, Holder, NewExecution, Outcome, SecretOwner, TrackingId,
};
use crate::executor::{self, Executor};
use crate::permissions::{Caller, Provider, Verb};
use crate::template::{Leads, Placeholder};

/// A request to start an action.
#[derive(Debug, Clone, Default)]
pub struct StartRequest {
    pub binding_id: String,
    pub arguments: Vec<(String, String)>,
    pub tracking_id: String,
    /// The address the request came from (`None` for MQTT and the triggers): a guest's runs
    /// are held by its network, as every share of actiond counts clients.
    pub from: Option<IpAddr>,
}

/// An execution checked and ready to be admitted: its record, and what its launch needs.
struct Prepared {
    exec: Arc<Execution>,
    launch: Launch,
}

impl<X: Executor> Engine<X> {
    /// The one start path: checks, then room in the history file's queue, then admission
    /// and the insert under the same locks, then the run's life begins (`lifecycle`): a
    /// blocked run's, or a run's, with its first record queued before this returns.
    pub(super) fn begin(
        self: &Arc<Self>,
        req: StartRequest,
        caller: &Caller,
        cause: Cause,
        tags: Vec<String>,
    ) -> Result<Arc<Execution>, Error> {
        if !self.ready() {
            return Err(Error::Stopping);
        }
        // One snapshot of the setup for the whole start, even if a reload lands meanwhile.
        let setup = self.setup();
        let Prepared { exec, launch } = self.prepare(&setup, req, caller, cause, tags)?;
        let limits = &setup.config.limits;
        self.recorder.room(limits.history_queue_length)?;
        let blocked = self.admit(
            &exec,
            limits.max_concurrent_executions,
            limits.history_queue_length,
        )?;
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
            self.block(Arc::clone(&exec));
            return Ok(exec);
        }
        self.live(Arc::clone(&exec), launch);
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
        cause: Cause,
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
        if !cause.trigger_values() {
            arguments::refuse_trigger_values(&action.arguments, &req.arguments)
                .map_err(Error::BadArgument)?;
        }
        let values =
            arguments::resolve(&action.arguments, &req.arguments).map_err(Error::BadArgument)?;
        paths(&action.template, &values)?;
        let tracking_id = if req.tracking_id.is_empty() {
            TrackingId::random()
        } else {
            TrackingId::parse(&req.tracking_id).ok_or(Error::BadTrackingId(req.tracking_id))?
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
            return Err(Error::CommandTooLong {
                argument: values
                    .iter()
                    .max_by_key(|v| v.value.len())
                    .map(|v| v.name.clone()),
                why,
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
            holder: holder(caller, req.from),
            by_guest: caller.is_guest(),
            tags,
            secret_owner,
            arguments: Some(req.arguments),
            cause,
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
    /// inserts happen under both locks at once, so two presses cannot both pass a limit. A
    /// start that a limit blocks is refused instead while blocked runs hold their share of
    /// the history file's queue (of `queue_length`): it leaves no record.
    fn admit(
        &self,
        exec: &Arc<Execution>,
        max_running: usize,
        queue_length: usize,
    ) -> Result<Option<Blocked>, Error> {
        let mut history = lock(&self.history);
        let mut running = lock(&self.running);
        let id = exec.tracking_id.as_str();
        if history.contains(id) || running.contains_key(id) {
            return Err(Error::TrackingIdInUse(id.to_string()));
        }
        let candidate = Candidate {
            binding_id: &exec.binding_id,
            holder: &exec.holder,
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
            running.values().map(|e| (e.binding_id.as_str(), &e.holder)),
            max_running,
            earlier,
        );
        if blocked.is_some() {
            self.recorder.room_for_blocked(queue_length)?;
        }
        history.insert(Arc::clone(exec), blocked.is_some());
        if blocked.is_none() {
            running.insert(id.to_string(), Arc::clone(exec));
        }
        Ok(blocked)
    }
}

/// Whose run a start is, as the history and the pool share themselves out: a caller who
/// logged in by name (from any address, by any provider), the guest by its network (a trusted
/// proxy's for the guests it carries: it adds no forwarded address), MQTT's presses and each
/// trigger user as callers of their own.
pub(super) fn holder(caller: &Caller, from: Option<IpAddr>) -> Holder {
    match caller.provider {
        Provider::Local | Provider::Header | Provider::Token => {
            Holder::User(caller.username.clone())
        }
        Provider::Mqtt => Holder::Mqtt,
        Provider::System if caller.is_guest() => Holder::Guest(from.map(Network::of)),
        Provider::System => Holder::Trigger(caller.username.clone()),
    }
}

/// Who gave a run's password values, as the run keeps it: the same user identified the same
/// way (a local login, a token, a trusted header) may replay them; another session of that
/// user may too, another provider's user of the same name may not.
/// The guest is everyone who reaches the port, and the system and MQTT users are shared by
/// every trigger and every client of the broker: none of them is one person.
pub(super) fn secret_owner(caller: &Caller) -> SecretOwner {
    match caller.provider {
        Provider::Local | Provider::Header | Provider::Token => SecretOwner::Named {
            provider: caller.provider.as_str(),
            username: caller.username.clone(),
        },
        Provider::System | Provider::Mqtt => SecretOwner::Shared,
    }
}

/// The one press-time rule for a value in a path the command builds (`template::leads`):
/// `..` between the author's `/`s, whatever program gets the path.
fn paths(template: &CommandTemplate, values: &[arguments::Value]) -> Result<(), Error> {
    let value_of = |p: &Placeholder| match p {
        Placeholder::Argument(name) => values
            .iter()
            .find(|v| v.name == *name)
            .map(|v| v.value.clone()),
        Placeholder::Entity(_) => None,
    };
    let Some((Placeholder::Argument(name), _, why)) = template.leading_out(value_of) else {
        return Ok(());
    };
    Err(Error::BadArgument(arguments::ArgError {
        argument: name,
        rule: match why {
            Leads::Up => arguments::Broken::PathUp,
            Leads::Absolute => arguments::Broken::PathAbsolute,
        },
    }))
}
