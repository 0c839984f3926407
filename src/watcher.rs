//! Hot reload: the directories of the config file and its `board:` file, its `include:` and
//! `overlay:` directories and of every entity file are watched with inotify (through nix), because editors, Ansible and `mv`
//! replace a file by rename, which a watch on the file itself would miss. Events are
//! debounced. A changed config is parsed and validated in full and swapped in whole unless
//! an error refuses it (an error confined to one action only disables that action, as at
//! start, and the log names it; a refused file keeps the old config, and the log says why),
//! then announced with `configChanged`. A changed entity file is reloaded alone and announced with
//! `entityChanged`; a bad entity file keeps that type's previous instances. Running
//! executions keep the action they started with. After each config reload the watches follow
//! the new config (other entity files, another include directory). This module decides when; loading is `config`'s and
//! `entities`', swapping is the engine's.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::inotify::{AddWatchFlags, WatchDescriptor};
use tracing::{error, info, warn};

use crate::auth::Authority;
use crate::config::{self, Config, Source};
use crate::engine::Engine;
use crate::entities::{self, EntitySet};
use crate::events::Event;
use crate::inotify::{Watch, register};

/// Changes arriving within this time of each other are one change.
pub const DEBOUNCE: Duration = Duration::from_millis(250);

/// What a reload changes: the engine's setup, and the identity state (users, tokens and
/// sessions follow the config).
pub struct Reloads {
    pub engine: Arc<Engine>,
    pub authority: Arc<Authority>,
}

/// Watches the config and entity files in force and reloads on change, until the task is
/// dropped. With the embedded default there is nothing to watch.
pub async fn run(to: Reloads) {
    let Source::File(path) = to.engine.config().source.clone() else {
        return;
    };
    if let Err(e) = watch(&to, path).await {
        warn!("file changes will not be noticed ({e}); restart actiond to apply them");
    }
}

fn dir_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// What the watcher reacts to, from the config in force: the config file and its board
/// file, the YAML files of its `include:` and `overlay:` directories, and its entity files.
struct Targets {
    config: PathBuf,
    /// The `board:` file, if any.
    board: Option<PathBuf>,
    /// The `include:` and `overlay:` directories.
    config_dirs: Vec<PathBuf>,
    entities: Vec<PathBuf>,
}

impl Targets {
    fn of(config: &Config, config_path: &Path) -> Targets {
        Targets {
            config: config_path.to_path_buf(),
            board: config.board_file.clone(),
            config_dirs: config
                .include_dir
                .iter()
                .chain(&config.overlay_dir)
                .cloned()
                .collect(),
            entities: config.entities.iter().map(|e| e.file.clone()).collect(),
        }
    }

    /// Whether a change to `path` is a change of the config: the file, its board, a YAML
    /// file of a config directory, or such a directory itself (made or removed).
    fn is_config(&self, path: &Path) -> bool {
        same(path, &self.config)
            || self.board.as_deref().is_some_and(|board| same(path, board))
            || self.config_dirs.iter().any(|dir| {
                path == dir
                    || dir_of(path) == *dir
                        && path.extension().is_some_and(|e| e == "yaml" || e == "yml")
            })
    }

    fn is_entity(&self, path: &Path) -> bool {
        self.entities.iter().any(|e| same(path, e))
    }

    /// The directories to watch: a file is replaced by rename, which a watch on the file
    /// itself would miss.
    fn dirs(&self) -> Vec<PathBuf> {
        let files = std::iter::once(&self.config)
            .chain(&self.board)
            .chain(&self.entities);
        files
            .map(|f| dir_of(f))
            .chain(self.config_dirs.iter().cloned())
            .collect()
    }
}

fn same(a: &Path, b: &Path) -> bool {
    a.file_name() == b.file_name() && dir_of(a) == dir_of(b)
}

const MASK: AddWatchFlags = AddWatchFlags::IN_CLOSE_WRITE
    .union(AddWatchFlags::IN_MOVED_TO)
    .union(AddWatchFlags::IN_CREATE)
    .union(AddWatchFlags::IN_DELETE);

/// Adds a watch on each directory of `targets` not watched yet. Only the config file's own
/// directory must be watchable; a missing entity or include directory is logged and left.
/// Watches are never removed (a directory a reload no longer names stays watched, and its
/// events match nothing), so no event is lost between two configs.
fn arm(
    inotify: &Watch,
    dirs: &mut Vec<(WatchDescriptor, PathBuf)>,
    targets: &Targets,
) -> io::Result<()> {
    let config_dir = dir_of(&targets.config);
    for dir in targets.dirs() {
        if dirs.iter().any(|(_, d)| *d == dir) {
            continue;
        }
        match inotify.add(&dir, MASK) {
            // Kept even when the kernel answers a descriptor already held (the same directory
            // by another path, e.g. `.` for `./config.yaml` and the absolute path of an entity
            // file beside it): events are then reported under both paths.
            Ok(wd) => dirs.push((wd, dir)),
            Err(e) if dir != config_dir => warn!("cannot watch {} ({e})", dir.display()),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

async fn watch(to: &Reloads, config_path: PathBuf) -> io::Result<()> {
    let engine = &to.engine;
    let fd = register(Watch::new()?)?;
    let mut dirs: Vec<(WatchDescriptor, PathBuf)> = Vec::new();
    let mut targets = Targets::of(&engine.config(), &config_path);
    arm(fd.get_ref(), &mut dirs, &targets)?;
    info!(
        "watching {} and {} entity file(s) for changes",
        config_path.display(),
        targets.entities.len()
    );
    loop {
        let mut ready = fd.readable().await?;
        // `changed` reads until the kernel says EAGAIN, so the queue is empty now: tell the
        // reactor, or `readable` would report ready forever (a busy loop).
        let first = fd.get_ref().changed(&dirs);
        ready.clear_ready();
        let mut changed = first?;
        if !changed
            .iter()
            .any(|p| targets.is_config(p) || targets.is_entity(p))
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
        if changed.iter().any(|p| targets.is_config(p)) {
            if config_path.exists() {
                // A config directory made since the last load is watched before it is read,
                // so that a file written into it now is not missed.
                arm(fd.get_ref(), &mut dirs, &targets)?;
                reload(to);
                // The new config may name other entity files or another include directory.
                targets = Targets::of(&engine.config(), &config_path);
                arm(fd.get_ref(), &mut dirs, &targets)?;
            }
        } else {
            let config = engine.config();
            let previous = engine.setup().entities.clone();
            let entities = load_entities(&config, Some(&previous));
            // A malformed file keeps its previous instances: then nothing changed, and
            // nothing is announced.
            if entities != *previous {
                engine.swap(config, entities, Event::EntityChanged);
                info!("entities reloaded");
            }
        }
    }
}

/// Loads every entity file of `config`. A file that fails is logged; its type keeps the
/// instances it had in `previous` (at start there are none).
pub fn load_entities(config: &Config, previous: Option<&EntitySet>) -> EntitySet {
    let loaded = entities::load_all_within(&config.entities, entities::Bounds::of(&config.limits));
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
fn reload(to: &Reloads) {
    let engine = &to.engine;
    let old = engine.config();
    match config::load(&old.source) {
        Ok(loaded) => {
            log_loaded(&loaded);
            for name in restart_only_changes(&old, &loaded.config) {
                warn!("config: a change to {name} takes effect only when actiond restarts");
            }
            let new = Arc::new(loaded.config);
            to.authority.reload(&new.auth);
            let entities = load_entities(&new, Some(&engine.setup().entities));
            engine.swap(new, entities, Event::ConfigChanged);
            engine.metrics().reloaded(true);
            info!("config reloaded");
        }
        Err(e) => {
            engine.metrics().reloaded(false);
            error!("config not reloaded, the previous one stays in force: {e}");
        }
    }
}

/// Logs what loading a config found, at start and after each reload: its warnings (with
/// where the OliveTin keys are explained), and every disabled action with its errors, since
/// the service runs without them and the log is where an admin looks.
pub fn log_loaded(loaded: &config::Loaded) {
    for w in &loaded.warnings {
        warn!("config: {w}");
    }
    if !loaded.warnings.is_empty() {
        info!("config: {}", config::MIGRATION_POINTER);
    }
    for (action, disabled) in loaded.config.disabled_actions() {
        error!(
            "config: action {:?} ({}) is disabled and does not run: {}",
            action.id,
            action.title,
            disabled.reason()
        );
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
