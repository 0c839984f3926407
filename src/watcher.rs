//! Hot reload (SPEC §9): the config file's directory is watched with inotify (through nix),
//! because editors, Ansible and `mv` replace a file by rename, which a watch on the file
//! itself would miss. Events are debounced; then the config is parsed and validated in
//! full, and swapped in whole only if it is valid. An invalid file keeps the old config and
//! says why in the log. Running executions keep the action they started with. This module
//! only watches and decides when; loading is `config`'s, swapping is the engine's.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
use tokio::io::unix::AsyncFd;
use tracing::{error, info, warn};

use crate::api::App;
use crate::config::{self, Config, Source};

/// Changes arriving within this time of each other are one change.
pub const DEBOUNCE: Duration = Duration::from_millis(250);

/// tokio wants the raw descriptor; nix's `Inotify` offers it through `AsFd`.
struct Watch(Inotify);

impl AsRawFd for Watch {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

impl Watch {
    /// The names of the files that changed, without waiting.
    fn names(&self) -> io::Result<Vec<OsString>> {
        let mut names = Vec::new();
        loop {
            match self.0.read_events() {
                Ok(events) => names.extend(events.into_iter().filter_map(|e| e.name)),
                Err(Errno::EAGAIN) => return Ok(names),
                Err(e) => return Err(io::Error::from(e)),
            }
        }
    }
}

/// Watches the config file of `app` and reloads it on change, until the task is dropped.
/// With the embedded default there is nothing to watch.
pub async fn run(app: Arc<App>) {
    let Source::File(path) = app.config().source.clone() else {
        return;
    };
    if let Err(e) = watch(&app, path).await {
        warn!("config changes will not be noticed ({e}); restart actiond to apply them");
    }
}

async fn watch(app: &App, path: PathBuf) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file = path.file_name().map(OsString::from).unwrap_or_default();
    let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)?;
    let mask = AddWatchFlags::IN_CLOSE_WRITE
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_DELETE;
    inotify.add_watch(&dir, mask)?;
    let fd = register(Watch(inotify))?;
    info!("watching {} for changes", path.display());
    loop {
        let mut ready = fd.readable().await?;
        // `names` reads until the kernel says EAGAIN, so the queue is empty now: tell the
        // reactor, or `readable` would report ready forever (a busy loop).
        let names = ready.get_inner().names();
        ready.clear_ready();
        let names = names?;
        if !names.contains(&file) {
            continue;
        }
        // An editor may write a file in several steps: wait until it has been quiet.
        loop {
            tokio::time::sleep(DEBOUNCE).await;
            if !fd.get_ref().names()?.contains(&file) {
                break;
            }
        }
        if path.exists() {
            reload(app);
        }
    }
}

#[allow(unsafe_code)]
fn register(watch: Watch) -> io::Result<AsyncFd<Watch>> {
    // SAFETY: `Watch` owns the inotify descriptor (nix's `Inotify` holds it as an `OwnedFd`
    // and never replaces it), so it is valid and open for as long as the `AsyncFd` owns the
    // `Watch`, every `as_raw_fd` call returns that same descriptor, and it is closed only
    // when the `AsyncFd` drops the `Watch` after deregistering it.
    unsafe { AsyncFd::register_with_interest(watch, tokio::io::Interest::READABLE) }
        .map_err(|e| e.into())
}

/// Loads the config again and swaps it in if it is valid.
pub fn reload(app: &App) {
    let old = app.config();
    match config::load(&old.source) {
        Ok(loaded) => {
            for w in &loaded.warnings {
                warn!("config: {w}");
            }
            for name in restart_only_changes(&old, &loaded.config) {
                warn!("config: a change to {name} takes effect only when actiond restarts");
            }
            let new = Arc::new(loaded.config);
            app.authority.reload(&new.auth);
            app.engine.swap(new);
            info!("config reloaded");
        }
        Err(e) => error!("config not reloaded, the previous one stays in force: {e}"),
    }
}

/// Settings read once at start.
fn restart_only_changes(old: &Config, new: &Config) -> Vec<&'static str> {
    let (a, b) = (&old.limits, &new.limits);
    let mut out = Vec::new();
    if old.listen_address != new.listen_address {
        out.push("listenAddressSingleHTTPFrontend");
    }
    if a.max_connections != b.max_connections {
        out.push("maxConnections");
    }
    if a.header_read_timeout != b.header_read_timeout {
        out.push("headerReadTimeout");
    }
    if a.max_event_subscribers != b.max_event_subscribers {
        out.push("maxEventSubscribers");
    }
    if a.event_queue_length != b.event_queue_length {
        out.push("eventQueueLength");
    }
    if old.state_directory != new.state_directory {
        out.push("stateDirectory");
    }
    out
}
