//! actiond: press a button, run a predefined command on a small Linux board.
//!
//! The library holds everything but the command line: `run` takes a validated config, an
//! already-bound listener and a shutdown future, so tests and `main` start the same thing.
//! See docs/ARCHITECTURE.md for the code map, the direction of dependencies and the
//! invariants.

pub(crate) mod api;
pub(crate) mod arguments;
pub mod auth;
pub(crate) mod clock;
pub mod config;
#[cfg(test)]
mod corpus;
pub(crate) mod dashboards;
pub(crate) mod duration;
pub(crate) mod engine;
pub(crate) mod entities;
pub(crate) mod events;
pub(crate) mod execution;
pub(crate) mod executor;
pub(crate) mod files;
pub(crate) mod history;
pub(crate) mod inotify;
pub(crate) mod journal;
pub(crate) mod metrics;
pub(crate) mod mqtt;
pub(crate) mod origin;
pub(crate) mod output;
pub(crate) mod permissions;
pub(crate) mod protocol;
pub(crate) mod ratelog;
pub(crate) mod schedule;
pub(crate) mod server;
pub(crate) mod store;
pub mod template;
pub(crate) mod triggers;
pub(crate) mod watcher;
pub(crate) mod web;

/// For `main`, whose SIGTERM and SIGINT handlers the commands it starts must not keep.
pub use executor::signal;
/// For `main`, which logs what loaded as a reload does.
pub use watcher::log_loaded;

use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;

/// How long the MQTT client gets at shutdown to publish the last states and `offline`; a
/// broker that does not take them in time is left to the last will.
const MQTT_FAREWELL: std::time::Duration = std::time::Duration::from_millis(500);

/// How much of the history file's end is read at start: what twice the history holds (runs
/// that ran and blocked ones, each with both streams' output, its start line and a margin for
/// JSON escapes), within 1 MiB and 64 MiB. The file is compacted once it holds twice
/// `logHistoryLimit` lines, so a file written by actiond is within it; an older part of a
/// larger one would be dropped by the history anyway.
fn history_read_bound(limits: &config::Limits) -> u64 {
    const MIB: u64 = 1024 * 1024;
    let runs = (limits.log_history_limit + history::MAX_BLOCKED) as u64;
    let per_run = 4 * limits.max_output_bytes as u64 + 16 * 1024;
    runs.saturating_mul(2)
        .saturating_mul(per_run)
        .clamp(MIB, 64 * MIB)
}

/// The records of the history file, read in pieces that keep only what the history will
/// hold (`journal::Restorer`), so the memory this takes is the history's, not the file's.
fn restore_history(store: &store::Store, limits: &config::Limits) -> journal::Restore {
    use std::io::Read;
    // A line holds at most both streams' output, each byte escaped to at most six (`\u0001`),
    // and fields the config bounds.
    let max_line =
        (12 * limits.max_output_bytes as u64 + 256 * 1024).min(history_read_bound(limits));
    let mut restorer = journal::Restorer::new(
        journal::Keep::history(limits.log_history_limit),
        usize::try_from(max_line).unwrap_or(usize::MAX),
    );
    let (mut tail, skipped) = match store.open_tail(journal::FILE, history_read_bound(limits)) {
        Ok(Some(read)) => read,
        Ok(None) => return journal::Restore::default(),
        Err(e) => {
            tracing::warn!("cannot read the history file ({e}); starting with an empty history");
            // A FIFO in its place would hold the writer's open for ever: an empty file
            // replaces it, so runs are recorded from now on.
            if e.kind() == std::io::ErrorKind::InvalidInput
                && let Err(e) = store.replace(journal::FILE, b"")
            {
                tracing::warn!("cannot replace the history file ({e})");
            }
            return journal::Restore::default();
        }
    };
    if skipped > 0 {
        tracing::warn!(
            "the history file holds more than the history keeps; its oldest {skipped} bytes \
             were not read"
        );
        restorer = restorer.after_cut();
    }
    let mut chunk = vec![0; 64 * 1024];
    loop {
        match tail.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => restorer.feed(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                // What was read so far is kept; the writer rewrites the file from it.
                tracing::warn!("cannot read the rest of the history file ({e})");
                break;
            }
        }
    }
    restorer.finish(&clock::local_datetime(std::time::SystemTime::now()))
}

/// Serves `config` on `listener` until `shutdown` resolves, then stops every running
/// execution through the kill ladder and returns. `ready` is called once the history is
/// restored and the service answers, so that what it tells (systemd's READY=1) is true: a
/// long history file must not have a service called up that does not answer yet. Must run
/// inside a tokio runtime with IO, time and signals enabled.
pub async fn run(
    config: Arc<config::Config>,
    listener: TcpListener,
    ready: impl FnOnce(),
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let reaper = executor::Reaper::start()?;
    if let (executor::Containment::Group(_), Some(user)) =
        (executor::containment(), &config.actions_user)
        && !nix::unistd::geteuid().is_root()
    {
        // Another user's environment is not readable to actiond unless it is root (nor,
        // under ProtectProc=invisible, its processes): only the process group is reached.
        tracing::warn!(
            "kill containment: actions run as {} and there is no delegated cgroup, so a \
             process that leaves its action's process group (setsid, a double fork) is not \
             found by a kill; run actiond with Delegate=yes",
            user.name
        );
    }
    let store = store::Store::new(config.state_directory.clone());
    let authority = Arc::new(auth::Authority::open(store.clone(), &config.auth));
    let limits = &config.limits;
    let bus = Arc::new(events::Bus::new(
        limits.max_event_subscribers,
        limits.event_queue_length,
        api::encode_event,
    ));
    let (entities, entities_read) = watcher::load_entities(&config, None);
    let restored = restore_history(&store, limits);
    for p in &restored.problems {
        tracing::warn!("history: {p}");
    }
    // Taken before the engine exists, so no execution change can be missed.
    let action_watch = bus.watch_actions();
    if !restored.records.is_empty() {
        tracing::info!(
            count = restored.records.len(),
            "history restored from the state directory"
        );
    }
    let engine = engine::Engine::new(config, entities, reaper, bus, &store, restored.records);
    let listening = listener.local_addr().ok();
    let watching = tokio::spawn(watcher::run(watcher::Reloads {
        engine: Arc::clone(&engine),
        authority: Arc::clone(&authority),
        entities_read,
    }));
    let triggering = tokio::spawn(triggers::run(Arc::clone(&engine)));
    // Read once: the unit runs with ProtectHostname=, which hides later renames anyway.
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let board = origin::Board::new(&hostname);
    tracing::info!(
        "answering to IP addresses, localhost and {}, and to allowedHosts",
        board.names().join(", ")
    );
    let app = Arc::new(api::App {
        engine,
        authority,
        listening,
        board,
        dashboards: Default::default(),
    });
    let mqtt = mqtt::Client::spawn(Arc::clone(&app.engine), action_watch, app.listening);
    ready();
    let served = server::serve(listener, app, shutdown).await;
    triggering.abort();
    watching.abort();
    // After the executions were stopped and recorded: their last states, then `offline`.
    mqtt.stop(MQTT_FAREWELL).await;
    served
}
