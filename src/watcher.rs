//! Hot reload (SPEC §9): the directories of the config file and of every entity file are
//! watched with inotify (through nix), because editors, Ansible and `mv` replace a file by
//! rename, which a watch on the file itself would miss. Events are debounced. A changed
//! config is parsed and validated in full and swapped in whole only if it is valid (an
//! invalid file keeps the old config, and the log says why), then announced with
//! `configChanged`. A changed entity file is reloaded alone and announced with
//! `entityChanged`; a bad entity file keeps that type's previous instances. Running
//! executions keep the action they started with. The directories watched are those of the
//! config in force at start. This module decides when; loading is `config`'s and
//! `entities`', swapping is the engine's.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::inotify::{AddWatchFlags, WatchDescriptor};
use tracing::{error, info, warn};

use crate::api::App;
use crate::config::{self, Config, Source};
use crate::entities::{self, EntitySet};
use crate::events::Event;
use crate::inotify::{Watch, register};

/// Changes arriving within this time of each other are one change.
pub const DEBOUNCE: Duration = Duration::from_millis(250);

/// Watches the config and entity files of `app` and reloads on change, until the task is
/// dropped. With the embedded default there is nothing to watch.
pub async fn run(app: Arc<App>) {
    let Source::File(path) = app.config().source.clone() else {
        return;
    };
    if let Err(e) = watch(&app, path).await {
        warn!("file changes will not be noticed ({e}); restart actiond to apply them");
    }
}

fn dir_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

async fn watch(app: &App, config_path: PathBuf) -> io::Result<()> {
    let entity_paths: Vec<PathBuf> = app
        .config()
        .entities
        .iter()
        .map(|e| e.file.clone())
        .collect();
    let inotify = Watch::new()?;
    let mask = AddWatchFlags::IN_CLOSE_WRITE
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_DELETE;
    let mut dirs: Vec<(WatchDescriptor, PathBuf)> = Vec::new();
    for file in std::iter::once(&config_path).chain(entity_paths.iter()) {
        let dir = dir_of(file);
        if dirs.iter().any(|(_, d)| *d == dir) {
            continue;
        }
        match inotify.add(&dir, mask) {
            // Kept even when the kernel answers a descriptor already held (the same directory
            // by another path, e.g. `.` for `./config.yaml` and the absolute path of an entity
            // file beside it): events are then reported under both paths.
            Ok(wd) => dirs.push((wd, dir)),
            // A missing entity directory is not fatal: that file is simply not watched.
            Err(e) if *file != config_path => warn!("cannot watch {} ({e})", dir.display()),
            Err(e) => return Err(e),
        }
    }
    let fd = register(inotify)?;
    info!(
        "watching {} and {} entity file(s) for changes",
        config_path.display(),
        entity_paths.len()
    );
    let same = |a: &Path, b: &Path| a.file_name() == b.file_name() && dir_of(a) == dir_of(b);
    loop {
        let mut ready = fd.readable().await?;
        // `changed` reads until the kernel says EAGAIN, so the queue is empty now: tell the
        // reactor, or `readable` would report ready forever (a busy loop).
        let first = fd.get_ref().changed(&dirs);
        ready.clear_ready();
        let mut changed = first?;
        if !changed
            .iter()
            .any(|p| same(p, &config_path) || entity_paths.iter().any(|e| same(p, e)))
        {
            continue;
        }
        // An editor may write a file in several steps: wait until it has been quiet.
        loop {
            tokio::time::sleep(DEBOUNCE).await;
            let more = fd.get_ref().changed(&dirs)?;
            if more.is_empty() {
                break;
            }
            changed.extend(more);
        }
        if changed.iter().any(|p| same(p, &config_path)) {
            if config_path.exists() {
                reload(app);
            }
        } else {
            let config = app.config();
            let previous = app.engine.catalog().entities.clone();
            let entities = load_entities(&config, Some(&previous));
            // A malformed file keeps its previous instances: then nothing changed, and
            // nothing is announced.
            if entities != *previous {
                app.engine.swap(config, entities, Event::EntityChanged);
                info!("entities reloaded");
            }
        }
    }
}

/// Loads every entity file of `config`. A file that fails is logged; its type keeps the
/// instances it had in `previous` (at start there are none).
pub fn load_entities(config: &Config, previous: Option<&EntitySet>) -> EntitySet {
    let loaded = entities::load_all(&config.entities);
    for w in &loaded.warnings {
        warn!("entities: {}: {}", w.file.display(), w.message);
    }
    let mut set = loaded.set;
    for e in &loaded.errors {
        match previous {
            Some(prev) => {
                warn!(
                    "entities: {} not reloaded ({}); its previous instances stay",
                    e.file.display(),
                    e.message
                );
                set.replace(&e.type_name, prev.instances(&e.type_name).to_vec());
            }
            None => warn!("entities: {}: {}", e.file.display(), e.message),
        }
    }
    set
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
            let entities = load_entities(&new, Some(&app.engine.catalog().entities));
            app.engine.swap(new, entities, Event::ConfigChanged);
            app.engine.metrics().reloaded(true);
            info!("config reloaded");
        }
        Err(e) => {
            app.engine.metrics().reloaded(false);
            error!("config not reloaded, the previous one stays in force: {e}");
        }
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
