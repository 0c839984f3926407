//! Arming the watches: which inotify watch each watched directory and file has, looked up
//! again on every call, so a directory replaced (`rm -rf` and `mkdir`, a `mv` over it), a
//! symlink on the way repointed (`ln -sfn`) or a directory made after the start is watched
//! as it is now. A directory that does not exist yet is stood in for by its nearest existing
//! ancestor, whose events say when it is made. It decides what to watch from `Targets`
//! alone; when to arm again is the watcher's (`Targets::leads_to`, `Change::DirGone`).

use std::io;
use std::path::{Path, PathBuf};

use nix::sys::inotify::{AddWatchFlags, WatchDescriptor};
use tracing::{info, warn};

use super::{Kind, Pending, REARM_EVERY, Targets, Watcher, dir_of, recheck};
use crate::engine::Engine;
use crate::inotify::Watch;

/// IN_MODIFY, IN_OPEN and both closes too: a handle is open on a file from its open to its
/// close, and a file written with no close after it is held by a writer opened before the
/// watch. IN_MOVED_FROM: the handles on a file renamed away go with it. IN_DELETE_SELF and
/// IN_MOVE_SELF: the directory itself is gone from its path, so the path is armed again.
const MASK: AddWatchFlags = AddWatchFlags::IN_CLOSE_WRITE
    .union(AddWatchFlags::IN_CLOSE_NOWRITE)
    .union(AddWatchFlags::IN_OPEN)
    .union(AddWatchFlags::IN_MODIFY)
    .union(AddWatchFlags::IN_MOVED_FROM)
    .union(AddWatchFlags::IN_MOVED_TO)
    .union(AddWatchFlags::IN_CREATE)
    .union(AddWatchFlags::IN_DELETE)
    .union(AddWatchFlags::IN_DELETE_SELF)
    .union(AddWatchFlags::IN_MOVE_SELF);

/// What a file's own watch reports: a write by any name, and the close after it.
const FILE_MASK: AddWatchFlags = AddWatchFlags::IN_MODIFY.union(AddWatchFlags::IN_CLOSE_WRITE);

/// Watches each directory of `targets` and each of its files itself, as they are now: a path
/// whose directory or file was replaced since gets the new one's watch, the old one removed.
/// A missing directory is stood in for by its nearest existing ancestor, a missing file is
/// not watched. The config file's own directory may be missing too, for a moment (a deploy's
/// `mv conf conf.old && mv conf.new conf`, `rm -rf conf && mkdir conf`): it is stood in for
/// like any other, so its return is seen and its config applied; only another error there
/// (no permission, no watches left) ends the watching. A directory a reload no longer names
/// stays watched (its events match nothing), so no event is lost between two configs.
/// Bounded: one `inotify_add_watch` per path, which answers the descriptor held already when
/// nothing changed.
pub(super) fn arm(w: &mut Watcher, targets: &Targets) -> io::Result<()> {
    arm_dirs(w.fd.get_ref(), &mut w.dirs, targets)?;
    let inotify = w.fd.get_ref();
    let mut files = Vec::new();
    for file in targets.files() {
        // The kernel answers the same descriptor for a file watched already.
        if let Ok(wd) = inotify.add(&file, FILE_MASK) {
            files.push((wd, file));
        }
    }
    for (wd, _) in &w.files {
        if !files.iter().any(|(kept, _)| kept == wd) {
            inotify.remove(*wd);
        }
    }
    w.files = files;
    Ok(())
}

fn arm_dirs(
    inotify: &Watch,
    dirs: &mut Vec<(WatchDescriptor, PathBuf)>,
    targets: &Targets,
) -> io::Result<()> {
    let config_dir = dir_of(&targets.config);
    for dir in targets.dirs() {
        match inotify.add(&dir, MASK) {
            Ok(wd) => keep(inotify, dirs, wd, dir),
            Err(e) if dir == config_dir && e.kind() != io::ErrorKind::NotFound => return Err(e),
            Err(e) => match ancestor(inotify, &dir) {
                Some((wd, up)) => {
                    if !dirs.iter().any(|(_, d)| *d == up) {
                        info!(
                            "cannot watch {} yet ({e}); {} is watched until it is made",
                            dir.display(),
                            up.display()
                        );
                    }
                    keep(inotify, dirs, wd, up);
                }
                None => warn!("cannot watch {} ({e})", dir.display()),
            },
        }
    }
    Ok(())
}

/// Notes that `path` is watched by `wd`. Kept even when the kernel answers a descriptor held
/// for another path (the same directory by another path, e.g. `.` for `./config.yaml` and the
/// absolute path of an entity file beside it): events are then reported under both paths.
/// A path that now names another directory drops its old descriptor, removed from the kernel
/// when no other path uses it (after `dirs` forgets it, so its IN_IGNORED is no event).
fn keep(
    inotify: &Watch,
    dirs: &mut Vec<(WatchDescriptor, PathBuf)>,
    wd: WatchDescriptor,
    path: PathBuf,
) {
    let Some(entry) = dirs.iter_mut().find(|(_, d)| *d == path) else {
        dirs.push((wd, path));
        return;
    };
    if entry.0 == wd {
        return;
    }
    let old = std::mem::replace(&mut entry.0, wd);
    if !dirs.iter().any(|(held, _)| *held == old) {
        inotify.remove(old);
    }
}

/// The nearest existing ancestor of the missing `dir`, watched.
fn ancestor(inotify: &Watch, dir: &Path) -> Option<(WatchDescriptor, PathBuf)> {
    let mut at = dir.to_path_buf();
    loop {
        let up = dir_of(&at);
        if up == at {
            return None;
        }
        if let Ok(wd) = inotify.add(&up, MASK) {
            return Some((wd, up));
        }
        at = up;
    }
}

/// Looks the watched paths up and arms them again when a directory on the way changed
/// (`Pending::rearm`), at most once per `REARM_EVERY`; then reads both groups again and
/// notes a change against what was applied (a file written in the new directory before it
/// was watched). When a re-arm waits for its turn, the time to look again.
pub(super) async fn rearm(
    w: &mut Watcher,
    targets: &mut Targets,
    config_path: &Path,
    pending: &mut Pending,
    engine: &Engine,
) -> io::Result<Option<tokio::time::Instant>> {
    if !pending.rearm {
        return Ok(None);
    }
    let now = tokio::time::Instant::now();
    if let Some(at) = w.rearmed.map(|at| at + REARM_EVERY)
        && now < at
    {
        return Ok(Some(at));
    }
    pending.rearm = false;
    w.rearmed = Some(now);
    *targets = Targets::resolve(&engine.config(), config_path).await;
    arm(w, targets)?;
    let (config_read, entities_read) = w.read;
    recheck(targets, pending, Kind::Config, (config_read, w.refused)).await;
    recheck(targets, pending, Kind::Entities, (entities_read, None)).await;
    Ok(None)
}
