//! Hot reload: the directories of the config file and its `board:` file, of its `include:`
//! and `overlay:` directories and of every entity file are watched with inotify (through nix), because editors, Ansible and `mv`
//! replace a file by rename, which a watch on the file itself would miss.
//!
//! The config, its board, the YAML files of its config directories and the entity files
//! may be symlinks: the directory of the file each leads to is watched too, resolved again
//! after each reload.
//!
//! A change is applied only once the files are done changing: nothing changed for `SETTLE`,
//! no handle is open on a file (opens and closes counted, `settle`), and
//! the files read the same twice, `CONFIRM` apart (a writer inotify does not see, or one that
//! writes in steps, such as `>` then `>>`, is waited out). The config (with its board and
//! includes) and the entity files settle apart (`settle`), so files that keep changing hold
//! back only their own group. The entity files are applied at the latest `CAP` after their
//! first change, as they read then, with a warning that names why; the config never is: while
//! a writer holds it open or it keeps changing it waits, and says at warn level, at growing
//! intervals, what it waits for. The creation of the config
//! file or of an include (an empty file whose text is yet to come) is no change (the creation
//! of a config directory is: its files are read once it is watched), and an empty
//! config file is never applied. A changed config is then parsed and validated in full and
//! swapped in whole unless an error refuses it (an error confined to one action only disables
//! that action, as at start, and the log names it; a refused file keeps the old config, and
//! the log says why), then announced with `configChanged`. A config that would fall back to
//! the allow-all defaults (no `defaultPermissions` and no ACL, where the config in force had
//! them: the first half of a file written in steps) is refused (`rights::falls_open`); a
//! reload that gives someone a right or trust they did not have says who gains what at warn
//! level (`rights`). A changed entity file is
//! reloaded alone and announced with `entityChanged`; a bad entity file keeps that type's
//! previous instances. Running executions keep the action they started with. After each config
//! reload the watches follow the new config (other entity files, another include directory).
//!
//! Every file is read off the event loop (tokio's blocking pool), through `files`, which
//! refuses a FIFO or a device in place of a file. This module decides when; loading is
//! `config`'s and `entities`', swapping is the engine's.

mod rights;
mod settle;

use std::hash::{Hash, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::inotify::{AddWatchFlags, WatchDescriptor};
use tokio::io::unix::AsyncFd;
use tracing::{error, info, warn};

use crate::auth::Authority;
use crate::config::{self, Config, Source};
use crate::engine::{Engine, Setup};
use crate::entities::{self, EntitySet};
use crate::events::Event;
use crate::files;
use crate::inotify::{Change, Watch, What, register};

pub use settle::CAP;
use settle::{Event as FileEvent, Group, Ready, Unsure, Waiting};

/// A settled group is applied once its files read the same twice this far apart.
pub const CONFIRM: Duration = Duration::from_millis(250);

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
#[derive(Clone)]
struct Targets {
    config: PathBuf,
    /// The `board:` file, if any.
    board: Option<PathBuf>,
    /// The `include:` and `overlay:` directories.
    config_dirs: Vec<PathBuf>,
    entities: Vec<PathBuf>,
    entity_bytes: u64,
    /// The files the config file, its board and the entity files lead to where they are
    /// symlinks: an edit of the file a link points to is an event in the target's directory,
    /// under the target's name.
    config_links: Vec<PathBuf>,
    entity_links: Vec<PathBuf>,
}

impl Targets {
    /// The targets of `config`, its symlinks resolved off the event loop (a lookup on a slow
    /// file system must not stall it): again after each reload, so a link repointed since is
    /// followed.
    async fn resolve(config: &Config, config_path: &Path) -> Targets {
        let mut targets = Targets::of(config, config_path);
        let plain = targets.clone();
        let link = move || {
            targets.link();
            targets
        };
        match tokio::task::spawn_blocking(link).await {
            Ok(targets) => targets,
            Err(e) => {
                error!(
                    "the watcher could not follow symlinks ({e}); their targets are not watched"
                );
                plain
            }
        }
    }

    /// The targets of `config` as named, no symlink followed: cheap, so the watches are in
    /// place before the service answers.
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
            entity_bytes: config.limits.max_entity_file_bytes as u64,
            config_links: Vec::new(),
            entity_links: Vec::new(),
        }
    }

    /// Finds what the config, its board, the YAML files of its config directories and the
    /// entity files lead to where they are symlinks. Blocking: off the event loop.
    fn link(&mut self) {
        let dir_files = self.config_dirs.iter().flat_map(|dir| {
            let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
                .map(|entries| entries.flatten().map(|e| e.path()).collect())
                .unwrap_or_default();
            names.retain(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"));
            names.sort();
            names.truncate(config::MAX_INCLUDE_FILES + 1);
            names
        });
        let config_files: Vec<PathBuf> = std::iter::once(self.config.clone())
            .chain(self.board.clone())
            .chain(dir_files)
            .collect();
        self.config_links = config_files.iter().flat_map(|f| links_of(f)).collect();
        self.entity_links = self.entities.iter().flat_map(|e| links_of(e)).collect();
    }

    /// Whether a change to `path` is a change of the config: the file, its board (or what
    /// either links to), a YAML file of a config directory, or such a directory itself (made
    /// or removed).
    fn is_config(&self, path: &Path) -> bool {
        same(path, &self.config)
            || self.board.as_deref().is_some_and(|board| same(path, board))
            || self.config_links.iter().any(|l| same(path, l))
            || self.is_config_dir(path)
            || self.in_config_dir(path)
    }

    /// Whether `path` is an `include:` or `overlay:` directory itself.
    fn is_config_dir(&self, path: &Path) -> bool {
        self.config_dirs.iter().any(|dir| path == dir)
    }

    /// Whether `path` is a YAML file of an `include:` or `overlay:` directory.
    fn in_config_dir(&self, path: &Path) -> bool {
        self.config_dirs.iter().any(|dir| {
            dir_of(path) == *dir && path.extension().is_some_and(|e| e == "yaml" || e == "yml")
        })
    }

    fn is_entity(&self, path: &Path) -> bool {
        self.entities
            .iter()
            .chain(&self.entity_links)
            .any(|e| same(path, e))
    }

    /// The directories to watch: a file is replaced by rename, which a watch on the file
    /// itself would miss.
    fn dirs(&self) -> Vec<PathBuf> {
        let files = std::iter::once(&self.config)
            .chain(&self.board)
            .chain(&self.entities)
            .chain(&self.config_links)
            .chain(&self.entity_links);
        files
            .map(|f| dir_of(f))
            .chain(self.config_dirs.iter().cloned())
            .collect()
    }
}

/// Where `path` leads when a symlink is on the way: every link met (a directory's or the
/// file's own, each link of a chain), named by its own path, since repointing it is an event
/// in its directory under its name; and the file it names in the end. Empty when no link is
/// on the way. A link that leads nowhere is said at warn level, since an edit of what it will
/// point to is then not noticed until the next reload. Only metadata and links are read (no
/// file is opened), so it cannot wait on a FIFO.
fn links_of(path: &Path) -> Vec<PathBuf> {
    let absolute = match std::env::current_dir() {
        Ok(cwd) => cwd.join(path),
        Err(_) => path.to_path_buf(),
    };
    let (links, real) = resolve(&absolute);
    if links.is_empty() {
        return links;
    }
    let mut found = links;
    match real {
        Some(real) => {
            info!(
                "{} leads through a symlink to {}: the directories of its links and of the \
                 file are watched too, and the links are followed again after each reload",
                path.display(),
                real.display()
            );
            found.push(real);
        }
        None => warn!(
            "{} is reached through a symlink that leads nowhere: an edit of the file it \
             names is not noticed until the config is reloaded again",
            path.display()
        ),
    }
    found
}

/// The most links one path may go through, as the kernel allows (`MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// The symlinks met resolving the absolute `path`, component by component, and the file it
/// names (`None` when a link leads nowhere or there are too many).
fn resolve(path: &Path) -> (Vec<PathBuf>, Option<PathBuf>) {
    use std::path::Component;
    let mut links = Vec::new();
    let mut current = PathBuf::from("/");
    let mut rest: Vec<std::ffi::OsString> = path
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    while let Some(name) = rest.pop() {
        if name == ".." {
            current.pop();
            continue;
        }
        let next = current.join(&name);
        let Ok(meta) = std::fs::symlink_metadata(&next) else {
            return (links, None);
        };
        if !meta.file_type().is_symlink() {
            current = next;
            continue;
        }
        if links.len() == MAX_LINKS {
            return (links, None);
        }
        let Ok(target) = std::fs::read_link(&next) else {
            return (links, None);
        };
        links.push(next);
        if target.is_absolute() {
            current = PathBuf::from("/");
        }
        for c in target.components().rev() {
            match c {
                Component::Normal(n) => rest.push(n.to_os_string()),
                Component::ParentDir => rest.push("..".into()),
                _ => {}
            }
        }
    }
    (links, Some(current))
}

fn same(a: &Path, b: &Path) -> bool {
    a.file_name() == b.file_name() && dir_of(a) == dir_of(b)
}

/// Which files a fingerprint reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The config file, its board and the YAML files of its config directories.
    Config,
    Entities,
}

impl Kind {
    /// What the log calls the group, and its verb: `the config has`.
    fn words(self) -> &'static str {
        match self {
            Kind::Config => "the config has",
            Kind::Entities => "the entity files have",
        }
    }
}

/// What waits to be applied: the config's changes and the entity files', settled apart.
#[derive(Debug)]
struct Pending {
    config: Group,
    entities: Group,
}

impl Default for Pending {
    /// A config read half written may lack its access rules: it waits for its writers as
    /// long as they write. A bad entity file costs only its type's new instances: it is
    /// applied at the cap.
    fn default() -> Pending {
        Pending {
            config: Group::uncapped(),
            entities: Group::capped(),
        }
    }
}

impl Pending {
    fn group(&mut self, kind: Kind) -> &mut Group {
        match kind {
            Kind::Config => &mut self.config,
            Kind::Entities => &mut self.entities,
        }
    }

    /// Notes the changes that concern `targets`, each in its group.
    fn note(&mut self, targets: &Targets, changes: &[Change], now: tokio::time::Instant) {
        for change in changes {
            let (path, what) = match change {
                // Events were lost: anything may have changed.
                Change::Overflow => {
                    self.config.overflow(now);
                    self.entities.overflow(now);
                    continue;
                }
                Change::Entry { path, what } => (path, *what),
            };
            let event = match what {
                // A config file or include being created is empty yet: its text comes with
                // the write that follows. A config directory being created is a change: its
                // files are read once it is watched.
                What::Created if targets.is_config(path) && !targets.is_config_dir(path) => {
                    continue;
                }
                What::Created | What::Replaced => FileEvent::Replaced,
                What::Opened => FileEvent::Opened,
                What::Written => FileEvent::Written,
                What::Closed { wrote } => FileEvent::Closed { wrote },
                What::MovedAway => FileEvent::MovedAway,
            };
            if targets.is_config(path) {
                self.config.note(now, path, event);
            } else if targets.is_entity(path) {
                self.entities.note(now, path, event);
            }
        }
    }
}

/// IN_MODIFY, IN_OPEN and both closes too: a handle is open on a file from its open to its
/// close, and a file written with no close after it is held by a writer opened before the
/// watch. IN_MOVED_FROM: the handles on a file renamed away go with it.
const MASK: AddWatchFlags = AddWatchFlags::IN_CLOSE_WRITE
    .union(AddWatchFlags::IN_CLOSE_NOWRITE)
    .union(AddWatchFlags::IN_OPEN)
    .union(AddWatchFlags::IN_MODIFY)
    .union(AddWatchFlags::IN_MOVED_FROM)
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

/// The inotify descriptor and the directories it watches.
struct Watcher {
    fd: AsyncFd<Watch>,
    dirs: Vec<(WatchDescriptor, PathBuf)>,
}

impl Watcher {
    /// The next changes, waiting for them.
    async fn next(&self) -> io::Result<Vec<Change>> {
        let mut ready = self.fd.readable().await?;
        // `changed` reads until the kernel says EAGAIN, so the queue is empty now: tell the
        // reactor, or `readable` would report ready forever (a busy loop).
        let changes = self.fd.get_ref().changed(&self.dirs);
        ready.clear_ready();
        changes
    }

    /// Whether `kind`'s files read the same twice `CONFIRM` apart with no change of them
    /// in between (changes of either group that come meanwhile are noted in `pending`). When
    /// they read differently with no event (a writer inotify does not see), the group waits
    /// again as if they had changed now.
    async fn confirm(
        &self,
        targets: &Targets,
        pending: &mut Pending,
        kind: Kind,
    ) -> io::Result<bool> {
        let seen = pending.group(kind).last();
        let first = fingerprint(targets, kind).await;
        let until = tokio::time::Instant::now() + CONFIRM;
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(until) => break,
                changes = self.next() => {
                    pending.note(targets, &changes?, tokio::time::Instant::now());
                }
            }
        }
        if pending.group(kind).last() != seen {
            return Ok(false);
        }
        if fingerprint(targets, kind).await != first {
            pending.group(kind).touch(tokio::time::Instant::now());
            return Ok(false);
        }
        Ok(true)
    }
}

async fn watch(to: &Reloads, config_path: PathBuf) -> io::Result<()> {
    let engine = &to.engine;
    let mut w = Watcher {
        fd: register(Watch::new()?)?,
        dirs: Vec::new(),
    };
    // The files as named are watched at once, before the service answers; what symlinks
    // lead to is looked up off the loop, and watched then.
    let mut targets = Targets::of(&engine.config(), &config_path);
    arm(w.fd.get_ref(), &mut w.dirs, &targets)?;
    targets = Targets::resolve(&engine.config(), &config_path).await;
    arm(w.fd.get_ref(), &mut w.dirs, &targets)?;
    info!(
        "watching {} and {} entity file(s) for changes",
        config_path.display(),
        targets.entities.len()
    );
    let mut pending = Pending::default();
    loop {
        let now = tokio::time::Instant::now();
        let mut next = None;
        // The config first: its reload reads the entity files too.
        for kind in [Kind::Config, Kind::Entities] {
            if let Some(waiting) = pending.group(kind).waiting(now) {
                say_waiting(kind, &waiting);
            }
            match pending.group(kind).check(now) {
                Ready::Idle => {}
                Ready::Wait(at) => {
                    next = Some(next.map_or(at, |n: tokio::time::Instant| n.min(at)))
                }
                Ready::Settled => {
                    if w.confirm(&targets, &mut pending, kind).await? {
                        if let Some(unsure) = pending.group(kind).unsure() {
                            say_unsure(kind, unsure);
                        }
                        pending.group(kind).applied();
                        apply(to, &mut w, &mut targets, &config_path, kind).await?;
                    }
                    next = Some(tokio::time::Instant::now());
                    break;
                }
                Ready::Forced { open } => {
                    let why = if open.is_empty() {
                        "they kept changing".to_string()
                    } else {
                        format!("{} still open for writing", names(&open))
                    };
                    warn!(
                        "{} not settled {} s after changing ({why}); applying the change as \
                         the files read now",
                        kind.words(),
                        CAP.as_secs()
                    );
                    pending.group(kind).applied();
                    apply(to, &mut w, &mut targets, &config_path, kind).await?;
                    next = Some(tokio::time::Instant::now());
                    break;
                }
            }
        }
        tokio::select! {
            changes = w.next() => pending.note(&targets, &changes?, tokio::time::Instant::now()),
            _ = sleep_until(next) => {}
        }
    }
}

/// Says at warn level what `kind` waits for before it is applied.
fn say_waiting(kind: Kind, waiting: &Waiting) {
    let since = waiting.since.as_secs();
    let until = match kind {
        Kind::Config => "it is applied once every handle on them is closed and they are quiet \
                         for 2 s, never before: a config read half written may lack its access \
                         rules"
            .to_string(),
        Kind::Entities => format!(
            "the change is applied once every handle on them is closed, or at the latest {} s \
             after it",
            CAP.as_secs()
        ),
    };
    if waiting.open.is_empty() {
        warn!("{} kept changing for {since} s; {until}", kind.words());
    } else {
        warn!(
            "{} changed but {} still open for writing, or for reading ({since} s since the \
             change: the kernel tells a reader such as less from a writer only when it closes \
             the file, so a reader holds the reload too); {until}",
            kind.words(),
            names(&waiting.open),
        );
    }
}

/// Says at warn level that `kind` is applied without knowing whether a handle holds it open.
fn say_unsure(kind: Kind, unsure: &Unsure) {
    let why = match unsure {
        Unsure::Lost => {
            "the kernel's event queue overflowed, so opens and closes were lost".to_string()
        }
        Unsure::Unseen(path) => format!(
            "{} was closed by a handle opened before actiond watched it",
            path.display()
        ),
        Unsure::TooMany => "too many files were open at once to count".to_string(),
    };
    warn!(
        "{} changed and actiond cannot tell whether a writer still holds them open ({why}); \
         applying them after 2 s of quiet and two equal reads. Write a temporary file and \
         rename it over, so that no reload ever sees a file half written",
        kind.words()
    );
}

/// `paths` in words: `/etc/actiond/config.yaml is`, `a, b are`.
fn names(paths: &[PathBuf]) -> String {
    let list: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let verb = if list.len() == 1 { "is" } else { "are" };
    format!("{} {verb}", list.join(", "))
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Applies `kind`'s changes: reloads the config (and the watches follow it), or the entity
/// files alone.
async fn apply(
    to: &Reloads,
    w: &mut Watcher,
    targets: &mut Targets,
    config_path: &Path,
    kind: Kind,
) -> io::Result<()> {
    let engine = &to.engine;
    match kind {
        Kind::Config => {
            if config_path.exists() {
                // A config directory made since the last load is watched before it is read,
                // so that a file written into it now is not missed.
                arm(w.fd.get_ref(), &mut w.dirs, targets)?;
                reload(to).await;
                // The new config may name other entity files or another include directory:
                // watched at once, before this task yields and anyone hears of the reload (a
                // client told `configChanged` may write the new entity file the next moment),
                // keeping the links known so far; then its links are looked up off the loop.
                let mut named = Targets::of(&engine.config(), config_path);
                named.config_links = std::mem::take(&mut targets.config_links);
                named.entity_links = std::mem::take(&mut targets.entity_links);
                arm(w.fd.get_ref(), &mut w.dirs, &named)?;
                *targets = named;
                *targets = Targets::resolve(&engine.config(), config_path).await;
                arm(w.fd.get_ref(), &mut w.dirs, targets)?;
            }
        }
        Kind::Entities => {
            let config = engine.config();
            let previous = engine.setup().entities.clone();
            // A malformed file keeps its previous instances: then nothing changed, and
            // nothing is announced. The new setup is made off the event loop too.
            let load = move || {
                let entities = load_entities(&config, Some(&previous));
                (entities != *previous).then(|| Setup::new(config, Arc::new(entities)))
            };
            let Ok(built) = tokio::task::spawn_blocking(load).await else {
                error!("entities not reloaded: the loader failed");
                return Ok(());
            };
            if let Some(setup) = built {
                engine.swap_setup(setup, Event::EntityChanged);
                info!("entities reloaded");
            }
        }
    }
    Ok(())
}

/// A digest of `kind`'s files, read off the event loop: the config file and its
/// includes, or the entity files, with what reading each gave (its bytes, or why not). Equal
/// digests a moment apart mean the files read the same twice.
async fn fingerprint(targets: &Targets, kind: Kind) -> u64 {
    let targets = targets.clone();
    let digest = move || {
        let mut h = std::hash::DefaultHasher::new();
        let mut read = |path: &Path, max: u64| {
            path.hash(&mut h);
            match files::read(path, max) {
                Ok(bytes) => bytes.hash(&mut h),
                Err(e) => e.to_string().hash(&mut h),
            }
        };
        if kind == Kind::Config {
            read(&targets.config, config::MAX_CONFIG_BYTES);
            if let Some(board) = &targets.board {
                read(board, config::MAX_CONFIG_BYTES);
            }
            for dir in &targets.config_dirs {
                let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
                    .map(|entries| entries.flatten().map(|e| e.path()).collect())
                    .unwrap_or_default();
                names.retain(|p| targets.in_config_dir(p));
                names.sort();
                for p in names.iter().take(config::MAX_INCLUDE_FILES + 1) {
                    read(p, config::MAX_CONFIG_BYTES);
                }
            }
        }
        if kind == Kind::Entities {
            for p in &targets.entities {
                read(p, targets.entity_bytes);
            }
        }
        h.finish()
    };
    tokio::task::spawn_blocking(digest).await.unwrap_or(0)
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

/// A valid config, the entities it names, and who it gives what.
struct Valid {
    warnings: Vec<config::Problem>,
    /// Built off the event loop too: thousands of entity bindings take a while to make.
    setup: Setup,
    gains: Vec<rights::Gain>,
}

/// What loading a changed config gave, off the event loop.
enum Loaded {
    Valid(Box<Valid>),
    Invalid(config::LoadError),
    /// Valid, but it would fall back to the allow-all defaults.
    FallsOpen(rights::FallsOpen),
    /// The file is empty: what `>` leaves before the text arrives, never meant as a config.
    Empty,
}

/// Loads the config again and swaps it in if it is valid.
async fn reload(to: &Reloads) {
    let engine = &to.engine;
    let old = engine.config();
    let load = {
        let old = Arc::clone(&old);
        let previous = Arc::clone(&engine.setup().entities);
        move || {
            if let Source::File(path) = &old.source
                && files::read(path, config::MAX_CONFIG_BYTES)
                    .is_ok_and(|b| b.iter().all(u8::is_ascii_whitespace))
            {
                return Loaded::Empty;
            }
            match config::load(&old.source) {
                Ok(loaded) => {
                    if let Err(e) = rights::falls_open(&old, &loaded.config) {
                        return Loaded::FallsOpen(e);
                    }
                    let entities = load_entities(&loaded.config, Some(&previous));
                    let gains = rights::gains(&old, &loaded.config);
                    let setup = Setup::new(Arc::new(loaded.config), Arc::new(entities));
                    Loaded::Valid(Box::new(Valid {
                        warnings: loaded.warnings,
                        setup,
                        gains,
                    }))
                }
                Err(e) => Loaded::Invalid(e),
            }
        }
    };
    let Ok(outcome) = tokio::task::spawn_blocking(load).await else {
        engine.metrics().reloaded(false);
        error!("config not reloaded: the loader failed; the previous one stays in force");
        return;
    };
    match outcome {
        Loaded::Valid(valid) => {
            let Valid {
                warnings,
                setup,
                gains,
            } = *valid;
            log_config(&warnings, &setup.config);
            let (was, now) = (&old.actions_user, &setup.config.actions_user);
            if was != now {
                warn!(
                    "config: {}",
                    config::describe_run_as(setup.config.run_as.as_deref(), now.as_deref())
                );
            }
            for name in restart_only_changes(&old, &setup.config) {
                warn!("config: a change to {name} takes effect only when actiond restarts");
            }
            for g in &gains {
                warn!(
                    "config: this reload gives {} what they did not have: {}",
                    g.who, g.what
                );
            }
            if !gains.is_empty() {
                // No quiet can know that a script will append its rules later.
                warn!(
                    "config: a reload that gives rights is applied after 2 s of quiet like any \
                     other; if a script writes the config in steps, its first step is in force \
                     until the next: write a temporary file and rename it over instead"
                );
            }
            to.authority.reload(&setup.config.auth);
            engine.swap_setup(setup, Event::ConfigChanged);
            engine.metrics().reloaded(true);
            info!("config reloaded");
        }
        Loaded::Invalid(e) => {
            engine.metrics().reloaded(false);
            error!("config not reloaded, the previous one stays in force: {e}");
        }
        Loaded::FallsOpen(e) => {
            engine.metrics().reloaded(false);
            error!("config not reloaded, the previous one stays in force: {e}");
        }
        Loaded::Empty => {
            engine.metrics().reloaded(false);
            warn!(
                "config not reloaded: the file is empty (still being written?); the previous \
                 one stays in force"
            );
        }
    }
}

/// Logs what loading a config found, at start and after each reload: its warnings (with
/// where the OliveTin keys are explained), and every disabled action with its errors, since
/// the service runs without them and the log is where an admin looks.
pub fn log_loaded(loaded: &config::Loaded) {
    log_config(&loaded.warnings, &loaded.config);
}

fn log_config(warnings: &[config::Problem], config: &Config) {
    for w in warnings {
        warn!("config: {w}");
    }
    if !warnings.is_empty() {
        info!("config: {}", config::MIGRATION_POINTER);
    }
    for (action, disabled) in config.disabled_actions() {
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
