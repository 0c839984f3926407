//! Hot reload: the directories of the config file and its `board:` file, of its `include:`
//! and `overlay:` directories and of every entity file are watched with inotify (through nix), because editors, Ansible and `mv`
//! replace a file by rename, which a watch on the file itself would miss. Each file is watched
//! itself too (its inode, watched anew after each apply, since a rename brings another): a
//! write through a hard link in another directory is an event of no watched directory.
//!
//! The config, its board, the YAML files of its config directories and the entity files
//! may be symlinks: the directory of the file each leads to is watched too (or of the file it
//! will lead to, for a link made before its target), resolved again after each reload. A
//! directory on the way that is replaced, removed, repointed or made later is looked up and
//! armed again, and the files read again (`arm`).
//!
//! A change is applied only once the files are done changing: nothing changed for `SETTLE`,
//! no handle is open on a file (opens and closes counted, `settle`), the kernel says no
//! process holds one open for writing (`files::writers`, a lease probe: it sees the handles
//! the count cannot, such as one carried across a rename or opened where nothing watched;
//! where it cannot be asked, the count alone holds, said once), and
//! the files read the same twice, `CONFIRM` apart (a writer inotify does not see, or one that
//! writes in steps, such as `>` then `>>`, is waited out). The config (with its board and
//! includes) and the entity files settle apart (`settle`), so files that keep changing hold
//! back only their own group. The entity files are applied at the latest `CAP` after their
//! first change, as they read then, with a warning that names why; the config never is: while
//! a writer holds it open or it keeps changing it waits, and says at warn level, at growing
//! intervals, what it waits for. A file created under a watched name (a symlink, a hard link,
//! a copy, a config directory made) is a change like a write: a link brings its text with no
//! write after it, and a file created empty is held by its writer's open like any write; an
//! empty config file is never applied. A changed config is then parsed and validated in full and
//! swapped in whole unless an error refuses it (an error confined to one action only disables
//! that action, as at start, and the log names it; a refused file keeps the old config, and
//! the log says why), then announced with `configChanged`. A config in which a file no longer
//! writes a key deciding rights it writes in the config in force (`defaultPermissions` or
//! one of its keys, the ACLs, `authRequireGuestsToLogin`) whose fallback (its default, or a
//! lower layer's value) gives someone rights the config in force does not, more than it
//! takes from them, as the first half of a file written in steps or an overlay directory
//! being redeployed does, is refused (`rights::falls_open`), but never when guests or every
//! logged-in user lose more than they gain; a
//! reload that gives someone a right or trust they did not have says who gains what at warn
//! level (`rights`). A changed entity file is
//! reloaded alone and announced with `entityChanged`; a bad entity file keeps that type's
//! previous instances. Running executions keep the action they started with. After each config
//! reload the watches follow the new config (other entity files, another include directory);
//! once they are armed (symlinks are looked up off the loop), the files are read once more and
//! an edit made meanwhile is applied in turn (`recheck`). The files are compared with what the
//! loaders read (`Config::read`, the entity load's digest: `files::Digest` of the very bytes
//! parsed), never with a read of the watcher's own, so an edit made between the start-up load
//! and the first watch is applied too. A refused config's digest is kept: it is refused (and
//! said) once, and tried again only once its files change.
//!
//! Every file is read off the event loop (tokio's blocking pool), through `files`, which
//! refuses a FIFO or a device in place of a file. This module decides when; loading is
//! `config`'s and `entities`', swapping is the engine's.

mod arm;
mod links;
mod rights;
mod settle;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::inotify::WatchDescriptor;
use tokio::io::unix::AsyncFd;
use tracing::{error, info, warn};

use crate::auth::Authority;
use crate::config::{self, Config, Source};
use crate::engine::{Engine, Setup};
use crate::entities::{self, EntitySet};
use crate::events::Event;
use crate::files;
use crate::inotify::{Change, Watch, What, register};

use arm::{arm, rearm};
use links::links_of;
pub use settle::CAP;
use settle::{Event as FileEvent, Group, Ready, Unsure, Waiting};

/// A settled group is applied once its files read the same twice this far apart.
pub const CONFIRM: Duration = Duration::from_millis(250);

/// What a reload changes: the engine's setup, and the identity state (users, tokens and
/// sessions follow the config).
pub struct Reloads {
    pub engine: Arc<Engine>,
    pub authority: Arc<Authority>,
    /// The digest of the entity files as the start-up load read them (`load_entities`): the
    /// watcher's first baseline, with the config's own (`Config::read`).
    pub entities_read: u64,
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
    /// The YAML files of the config directories, as found by `link`.
    dir_files: Vec<PathBuf>,
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
            dir_files: Vec::new(),
        }
    }

    /// Finds what the config, its board, the YAML files of its config directories (and its
    /// YAML links that lead nowhere yet) and the entity files lead to where they are
    /// symlinks. Blocking: off the event loop.
    fn link(&mut self) {
        let dir_files = self
            .config_dirs
            .iter()
            .flat_map(|d| config::config_dir_files(d));
        self.dir_files = dir_files.collect();
        // A YAML link of a config directory made before its target (skipped by the loader):
        // the target's making is a change.
        let dangling = self.config_dirs.iter().flat_map(|d| links::dangling_in(d));
        let config_files: Vec<PathBuf> = std::iter::once(self.config.clone())
            .chain(self.board.clone())
            .chain(self.dir_files.clone())
            .chain(dangling)
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

    /// Whether `path` is on the way to a watched file: a watched directory or one of its
    /// ancestors, or a symlink met on the way. Its creation, removal or rename means the
    /// paths are to be looked up and armed again.
    fn leads_to(&self, path: &Path) -> bool {
        self.dirs().iter().any(|d| d.starts_with(path))
            || self
                .config_links
                .iter()
                .chain(&self.entity_links)
                .any(|l| l == path)
    }

    fn is_entity(&self, path: &Path) -> bool {
        self.entities
            .iter()
            .chain(&self.entity_links)
            .any(|e| same(path, e))
    }

    /// The files watched themselves too (their inodes, through their links): a write through
    /// a hard link in another directory is an event of no watched directory.
    fn files(&self) -> Vec<PathBuf> {
        std::iter::once(&self.config)
            .chain(&self.board)
            .chain(&self.dir_files)
            .chain(&self.entities)
            .cloned()
            .collect()
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
    /// A directory on the way to a watched file was replaced, removed, made or repointed:
    /// the paths are to be looked up and armed again (`REARM_EVERY` apart at most).
    rearm: bool,
}

/// Re-arming after a directory change happens at most this often, so a directory that keeps
/// churning costs a lookup per interval, not one per event.
const REARM_EVERY: Duration = Duration::from_millis(200);

impl Default for Pending {
    /// A config read half written may lack its access rules: it waits for its writers as
    /// long as they write. A bad entity file costs only its type's new instances: it is
    /// applied at the cap.
    fn default() -> Pending {
        Pending {
            config: Group::uncapped(),
            entities: Group::capped(),
            rearm: false,
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
                Change::DirGone => {
                    self.rearm = true;
                    continue;
                }
                Change::Entry { path, what } => (path, *what),
            };
            if matches!(what, What::Created | What::Replaced | What::MovedAway)
                && targets.leads_to(path)
            {
                self.rearm = true;
            }
            let event = match what {
                // A creation is a change, like a rename in: a symlink or a hard link (stow,
                // `ln -s ../available/x.yaml`) brings its text with no write after it, and a
                // config directory made is read once it is watched. A file created empty and
                // written next is held by its writer's open and read once settled, as any
                // write (`settle`); an empty config file is never applied (`reload`).
                What::Created | What::Replaced => FileEvent::Replaced,
                What::Changed => FileEvent::Changed,
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

/// The inotify descriptor, the directories and files it watches, and whether the kernel can
/// be asked for a file's writers.
struct Watcher {
    fd: AsyncFd<Watch>,
    dirs: Vec<(WatchDescriptor, PathBuf)>,
    files: Vec<(WatchDescriptor, PathBuf)>,
    /// Whether writers are asked of the kernel (`files::writers`): false once SIGIO could not
    /// be handled, since a lease broken while it is held would then end actiond.
    leases: bool,
    /// Whether the log has said that the kernel could not be asked (said once).
    said_unknown: bool,
    /// The digests of the config's and the entity files as last applied (at start, as the
    /// start-up load read them): what a re-arm compares them with (`recheck`).
    read: (u64, u64),
    /// The digest of the config's files as they read when a reload refused them (bad YAML, a
    /// failed check, an empty file): not read or refused again until they change.
    refused: Option<u64>,
    /// When the paths were last armed again after a directory change.
    rearmed: Option<tokio::time::Instant>,
}

/// What the kernel said of a group's writers, file by file.
#[derive(Debug, Default)]
struct Probe {
    /// The files some process holds open for writing.
    writers: Vec<PathBuf>,
    /// A file the kernel could not be asked about, and why.
    unknown: Option<(PathBuf, io::Error)>,
}

impl Watcher {
    /// The next changes, waiting for them.
    async fn next(&self) -> io::Result<Vec<Change>> {
        let mut ready = self.fd.readable().await?;
        // `changed` reads until the kernel says EAGAIN, so the queue is empty now: tell the
        // reactor, or `readable` would report ready forever (a busy loop).
        let changes = self.fd.get_ref().changed(&self.dirs, &self.files);
        ready.clear_ready();
        changes
    }

    /// Whether `kind`'s files may be applied: no process holds one open for writing, as the
    /// kernel says (else the group is held, and asked again later), and they read the same
    /// twice `CONFIRM` apart with no change of them in between (changes of either group that
    /// come meanwhile are noted in `pending`). When they read differently with no event (a
    /// writer inotify does not see), the group waits again as if they had changed now. The
    /// digest read, when they may be applied.
    async fn confirm(
        &mut self,
        targets: &Targets,
        pending: &mut Pending,
        kind: Kind,
    ) -> io::Result<Option<u64>> {
        let seen = pending.group(kind).last();
        let (first, probe) = fingerprint(targets, kind, self.leases).await;
        pending
            .group(kind)
            .kernel(self.leases && probe.unknown.is_none());
        if !probe.writers.is_empty() {
            pending
                .group(kind)
                .held(tokio::time::Instant::now(), probe.writers);
            return Ok(None);
        }
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
            return Ok(None);
        }
        let (second, again) = fingerprint(targets, kind, self.leases).await;
        if !again.writers.is_empty() {
            pending
                .group(kind)
                .held(tokio::time::Instant::now(), again.writers);
            return Ok(None);
        }
        if second != first {
            pending.group(kind).touch(tokio::time::Instant::now());
            return Ok(None);
        }
        match probe.unknown.or(again.unknown) {
            // Asked and answered for every file: what the count missed does not matter.
            None if self.leases => pending.group(kind).sure(),
            None => {}
            Some((path, e)) => self.say_unknown(&path, &e),
        }
        Ok(Some(second))
    }

    /// Says once, at warn level, that the kernel cannot be asked whether a writer holds
    /// `path` open, and what holds instead.
    fn say_unknown(&mut self, path: &Path, e: &io::Error) {
        if std::mem::replace(&mut self.said_unknown, true) {
            return;
        }
        let why = match e.raw_os_error() {
            Some(libc::EACCES) => "actiond neither owns it nor holds CAP_LEASE".to_string(),
            Some(libc::EINVAL) => "its file system, or this system, has no file leases".into(),
            _ => e.to_string(),
        };
        warn!(
            "actiond cannot ask the kernel whether a process holds {} open for writing ({why}); \
             it counts the opens and closes inotify reports instead, which miss a handle \
             opened before actiond watched the file (before it started, in a directory it did \
             not watch yet, or under another name since renamed into place): such a file is \
             applied after 2 s of quiet and two equal reads, with a warning",
            path.display()
        );
    }
}

/// Says at start, once, how open writers are told: by the kernel, or by counting.
fn say_probe(w: &mut Watcher, config: &Path, probe: &Probe) {
    match &probe.unknown {
        Some((path, e)) => w.say_unknown(path, e),
        None if w.leases => info!(
            "a change is applied only once the kernel says no process holds the files open \
             for writing (a file lease probe: every handle, whoever opened it and by whatever \
             name); {} is watched by its directory and by itself",
            config.display()
        ),
        None => {}
    }
}

/// After the watches are armed anew (at start, after a reload), reads `kind`'s files once
/// more: an edit made before its file was watched (after the start-up load, or while a link's
/// target was looked up off the loop) differs from what was applied (`known.0`), and is
/// applied in turn, unless it is what a reload refused last (`known.1`).
async fn recheck(targets: &Targets, pending: &mut Pending, kind: Kind, known: (u64, Option<u64>)) {
    let (now, _) = fingerprint(targets, kind, false).await;
    let (applied, refused) = known;
    if now != applied && Some(now) != refused {
        info!(
            "{} changed while the watches were set up; reading them again",
            kind.words()
        );
        pending.group(kind).touch(tokio::time::Instant::now());
    }
}

async fn watch(to: &Reloads, config_path: PathBuf) -> io::Result<()> {
    let engine = &to.engine;
    // A lease the probe holds is broken with SIGIO should a writer open the file at that
    // moment: handled (tokio's handler stays for the life of the process; a handled signal
    // is reset to its default in the commands actiond runs), it is harmless.
    let leases = match crate::executor::signal(tokio::signal::unix::SignalKind::io()) {
        Ok(_) => true,
        Err(e) => {
            warn!("cannot handle SIGIO ({e}); open writers are counted, not asked of the kernel");
            false
        }
    };
    let mut w = Watcher {
        fd: register(Watch::new()?)?,
        dirs: Vec::new(),
        files: Vec::new(),
        leases,
        said_unknown: false,
        // What the start-up load read, not the files as they read now: an edit made between
        // that load and these watches is then a change (`recheck` below), not the baseline.
        read: (engine.config().read, to.entities_read),
        refused: None,
        rearmed: None,
    };
    // The files as named are watched at once, before the service answers; what symlinks
    // lead to is looked up off the loop, and watched then, and the files are read again.
    let mut targets = Targets::of(&engine.config(), &config_path);
    arm(&mut w, &targets)?;
    let (_, probe) = fingerprint(&targets, Kind::Config, w.leases).await;
    say_probe(&mut w, &config_path, &probe);
    targets = Targets::resolve(&engine.config(), &config_path).await;
    arm(&mut w, &targets)?;
    let mut pending = Pending::default();
    let kernel = w.leases && probe.unknown.is_none();
    pending.config.kernel(kernel);
    pending.entities.kernel(kernel);
    recheck(&targets, &mut pending, Kind::Config, (w.read.0, None)).await;
    recheck(&targets, &mut pending, Kind::Entities, (w.read.1, None)).await;
    info!(
        "watching {} and {} entity file(s) for changes",
        config_path.display(),
        targets.entities.len()
    );
    loop {
        let mut next = rearm(&mut w, &mut targets, &config_path, &mut pending, engine).await?;
        let now = tokio::time::Instant::now();
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
                    let read = w.confirm(&targets, &mut pending, kind).await?;
                    if read.is_some() && kind == Kind::Config && read == w.refused {
                        // What a reload refused last, read again (a re-arm, an editor that
                        // opened it): refused once, and tried again once it changes.
                        pending.group(kind).applied();
                    } else if read.is_some() {
                        if let Some(unsure) = pending.group(kind).unsure() {
                            say_unsure(kind, unsure);
                        }
                        pending.group(kind).applied();
                        apply(to, &mut w, &mut targets, &config_path, kind, &mut pending).await?;
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
                    apply(to, &mut w, &mut targets, &config_path, kind, &mut pending).await?;
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
            "{} changed but {} still open for writing ({since} s since the change; where the \
             kernel cannot be asked, a reader such as less holds the reload too, since \
             inotify tells a reader from a writer only when it closes the file); {until}",
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
/// files alone; then, the files watched as they are now, reads again what was applied
/// (`recheck`).
async fn apply(
    to: &Reloads,
    w: &mut Watcher,
    targets: &mut Targets,
    config_path: &Path,
    kind: Kind,
    pending: &mut Pending,
) -> io::Result<()> {
    let engine = &to.engine;
    match kind {
        Kind::Config => {
            if config_path.exists() {
                // A config directory made since the last load is watched before it is read,
                // so that a file written into it now is not missed.
                arm(w, targets)?;
                let (before, _) = fingerprint(targets, Kind::Config, false).await;
                let applied = reload(to).await;
                // The new config may name other entity files or another include directory:
                // watched at once, before this task yields and anyone hears of the reload (a
                // client told `configChanged` may write the new entity file the next moment),
                // keeping the links known so far; then its links are looked up off the loop.
                let mut named = Targets::of(&engine.config(), config_path);
                named.config_links = std::mem::take(&mut targets.config_links);
                named.entity_links = std::mem::take(&mut targets.entity_links);
                named.dir_files = std::mem::take(&mut targets.dir_files);
                arm(w, &named)?;
                *targets = named;
                *targets = Targets::resolve(&engine.config(), config_path).await;
                arm(w, targets)?;
                match applied {
                    Some((config_read, entities_read)) => {
                        w.read = (config_read, entities_read);
                        w.refused = None;
                        recheck(targets, pending, Kind::Config, (config_read, None)).await;
                        recheck(targets, pending, Kind::Entities, (entities_read, None)).await;
                    }
                    None => {
                        // Refused: remembered as the files read around the load, so neither a
                        // re-arm nor an event that changes nothing loads and logs it again. An
                        // edit made during the load is tried in turn.
                        let (after, _) = fingerprint(targets, Kind::Config, false).await;
                        if after == before {
                            w.refused = Some(after);
                        } else {
                            pending.config.touch(tokio::time::Instant::now());
                        }
                    }
                }
            }
        }
        Kind::Entities => {
            let config = engine.config();
            let previous = engine.setup().entities.clone();
            // A malformed file keeps its previous instances: then nothing changed, and
            // nothing is announced. The new setup is made off the event loop too.
            let load = move || {
                let (entities, entities_read) = load_entities(&config, Some(&previous));
                let built = (entities != *previous).then(|| Setup::new(config, Arc::new(entities)));
                (built, entities_read)
            };
            let Ok((built, entities_read)) = tokio::task::spawn_blocking(load).await else {
                error!("entities not reloaded: the loader failed");
                return Ok(());
            };
            if let Some(setup) = built {
                engine.swap_setup(setup, Event::EntityChanged);
                info!("entities reloaded");
            }
            // A file replaced by rename is a new file: watched itself from now on; a link
            // repointed is followed from now on.
            w.read.1 = entities_read;
            *targets = Targets::resolve(&engine.config(), config_path).await;
            arm(w, targets)?;
            recheck(targets, pending, Kind::Entities, (entities_read, None)).await;
        }
    }
    Ok(())
}

/// A digest of `kind`'s files, read off the event loop (`digest`).
async fn fingerprint(targets: &Targets, kind: Kind, leases: bool) -> (u64, Probe) {
    let targets = targets.clone();
    let read = move || digest(&targets, kind, leases);
    tokio::task::spawn_blocking(read)
        .await
        .unwrap_or((0, Probe::default()))
}

/// A digest of `kind`'s files as they read now (`files::Digest`, taken as the loaders take
/// it: the config file, its board and its config directories' YAML files as `config::load`
/// reads them, or the entity files in config order), with what reading each gave (its bytes,
/// or why not); equal to the digest a load took (`Config::read`, `load_entities`) when the
/// files hold what it read, and equal digests a moment apart mean the files read the same
/// twice. With `leases`, the kernel is asked too whether a process holds each open for
/// writing. Blocking: off the event loop.
fn digest(targets: &Targets, kind: Kind, leases: bool) -> (u64, Probe) {
    let mut d = files::Digest::default();
    let mut probe = Probe::default();
    let mut read = |path: &Path, max: u64| {
        let got = if leases {
            files::read_probed(path, max)
        } else {
            files::read(path, max).map(|b| (b, files::Writers::None))
        };
        match got {
            Ok((bytes, writers)) => {
                d.add(path, Ok(&bytes));
                match writers {
                    files::Writers::None => {}
                    files::Writers::Some => probe.writers.push(path.to_path_buf()),
                    files::Writers::Unknown(e) => {
                        probe.unknown.get_or_insert((path.to_path_buf(), e));
                    }
                }
            }
            Err(e) => d.add(path, Err(&e)),
        }
    };
    match kind {
        Kind::Config => {
            read(&targets.config, config::MAX_CONFIG_BYTES);
            if let Some(board) = &targets.board {
                read(board, config::MAX_CONFIG_BYTES);
            }
            for dir in &targets.config_dirs {
                for p in config::config_dir_files(dir) {
                    read(&p, config::MAX_CONFIG_BYTES);
                }
            }
        }
        Kind::Entities => {
            for p in &targets.entities {
                read(p, targets.entity_bytes);
            }
        }
    }
    (d.value(), probe)
}

/// Loads every entity file of `config`, and the digest of the files as it read them. A file
/// that fails is logged; its type keeps the instances it had in `previous` (at start there
/// are none).
pub fn load_entities(config: &Config, previous: Option<&EntitySet>) -> (EntitySet, u64) {
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
    (set, loaded.read)
}

/// A valid config, the entities it names, and who it gives what.
struct Valid {
    warnings: Vec<config::Problem>,
    /// Built off the event loop too: thousands of entity bindings take a while to make.
    setup: Setup,
    gains: Vec<rights::Gain>,
    /// A key dropped that `rights::falls_open` would hold, applied since the reload takes
    /// away at least as much as it gives.
    narrows: Option<rights::Narrows>,
    /// The digests of the config's and the entity files as they read once loaded.
    read: (u64, u64),
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

/// Loads the config again and swaps it in if it is valid; the digests of its files (config,
/// entities) as they read once loaded, when it was.
async fn reload(to: &Reloads) -> Option<(u64, u64)> {
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
                    let narrows = match rights::falls_open(&old, &loaded.config) {
                        Ok(n) => n,
                        Err(e) => return Loaded::FallsOpen(e),
                    };
                    // The digests of the very bytes loaded: an edit made since is a change
                    // to the next look (`recheck`), not taken for what was applied.
                    let (entities, entities_read) = load_entities(&loaded.config, Some(&previous));
                    let read = (loaded.config.read, entities_read);
                    let gains = rights::gains(&old, &loaded.config);
                    let setup = Setup::new(Arc::new(loaded.config), Arc::new(entities));
                    Loaded::Valid(Box::new(Valid {
                        warnings: loaded.warnings,
                        setup,
                        gains,
                        narrows,
                        read,
                    }))
                }
                Err(e) => Loaded::Invalid(e),
            }
        }
    };
    let Ok(outcome) = tokio::task::spawn_blocking(load).await else {
        engine.metrics().reloaded(false);
        error!("config not reloaded: the loader failed; the previous one stays in force");
        return None;
    };
    match outcome {
        Loaded::Valid(valid) => {
            let Valid {
                warnings,
                setup,
                gains,
                narrows,
                read,
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
            if let Some(n) = &narrows {
                warn!("config: {n}");
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
            Some(read)
        }
        // Said once per content (`Watcher::refused`): the files are read again, and the
        // config tried again, only once they change.
        Loaded::Invalid(e) => {
            engine.metrics().reloaded(false);
            warn!("config not reloaded, the previous one stays in force: {e}");
            None
        }
        Loaded::FallsOpen(e) => {
            engine.metrics().reloaded(false);
            warn!("config not reloaded, the previous one stays in force: {e}");
            None
        }
        Loaded::Empty => {
            engine.metrics().reloaded(false);
            warn!(
                "config not reloaded: the file is empty (still being written?); the previous \
                 one stays in force"
            );
            None
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

#[cfg(test)]
mod tests;
