//! inotify through nix, registered with tokio: what the config watcher and the file triggers
//! share. It owns the inotify descriptor and the one `unsafe` call that registers it with
//! the reactor. It reads events; deciding what they mean is the caller's business.

use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, InotifyEvent, WatchDescriptor};
use tokio::io::unix::AsyncFd;

/// One inotify instance (non-blocking, closed on exec so commands do not inherit it).
pub struct Watch(Inotify);

/// tokio wants the raw descriptor; nix's `Inotify` offers it through `AsFd`.
impl AsRawFd for Watch {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

impl Watch {
    pub fn new() -> io::Result<Watch> {
        Ok(Watch(Inotify::init(
            InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC,
        )?))
    }

    pub fn add(&self, dir: &Path, mask: AddWatchFlags) -> io::Result<WatchDescriptor> {
        Ok(self.0.add_watch(dir, mask)?)
    }

    /// Stops watching `wd` (a file since replaced); its last events may still be queued.
    pub fn remove(&self, wd: WatchDescriptor) {
        // Fails only when the watch is gone already (its file removed): nothing to do.
        let _ = self.0.rm_watch(wd);
    }

    /// Every event queued now, without waiting.
    pub fn events(&self) -> io::Result<Vec<InotifyEvent>> {
        let mut out = Vec::new();
        loop {
            match self.0.read_events() {
                Ok(events) => out.extend(events),
                Err(Errno::EAGAIN) => return Ok(out),
                Err(e) => return Err(io::Error::from(e)),
            }
        }
    }

    /// What changed since the last call, without waiting. One directory reached by two paths
    /// (`.` and its absolute path, a symlink) has one watch descriptor; a change in it is
    /// reported under every path given for that descriptor. A file watched itself (`files`:
    /// its inode, whatever name or link writes it) reports under the path given for it.
    pub fn changed(
        &self,
        dirs: &[(WatchDescriptor, PathBuf)],
        files: &[(WatchDescriptor, PathBuf)],
    ) -> io::Result<Vec<Change>> {
        let mut changes = Vec::new();
        for e in self.events()? {
            if e.mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
                changes.push(Change::Overflow);
                continue;
            }
            let Some(name) = e.name else {
                // A watched directory gone from its path (removed, renamed): what its path
                // names now is to be looked up and watched again.
                let gone = AddWatchFlags::IN_DELETE_SELF
                    | AddWatchFlags::IN_MOVE_SELF
                    | AddWatchFlags::IN_IGNORED;
                if e.mask.intersects(gone) && dirs.iter().any(|(wd, _)| *wd == e.wd) {
                    changes.push(Change::DirGone);
                    continue;
                }
                // The file's own watch: IN_IGNORED says it is gone (removed, or its file
                // deleted), which its directory's watch reports as a change already.
                if !e.mask.contains(AddWatchFlags::IN_IGNORED) {
                    for (_, file) in files.iter().filter(|(wd, _)| *wd == e.wd) {
                        changes.push(Change::Entry {
                            path: file.clone(),
                            what: What::Changed,
                        });
                    }
                }
                continue;
            };
            let what = What::of(e.mask);
            for (_, dir) in dirs.iter().filter(|(wd, _)| *wd == e.wd) {
                changes.push(Change::Entry {
                    path: dir.join(&name),
                    what,
                });
            }
        }
        Ok(changes)
    }
}

/// One change the kernel reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Something happened to an entry of a watched directory.
    Entry { path: PathBuf, what: What },
    /// The kernel's queue overflowed: events were lost, so anything may have changed.
    Overflow,
    /// A watched directory was removed or renamed away (IN_DELETE_SELF, IN_MOVE_SELF,
    /// IN_IGNORED): its path, if it names one again, holds another directory.
    DirGone,
}

/// What happened to an entry, by the event's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    /// Created (IN_CREATE): made empty by an open (its text comes with later events), or
    /// made whole by a link (a symlink or a hard link: no event follows).
    Created,
    /// Opened (IN_OPEN), for reading or writing: the kernel says which only at the close.
    Opened,
    /// Written (IN_MODIFY): its writer holds it open until it closes it.
    Written,
    /// Closed (IN_CLOSE_WRITE, IN_CLOSE_NOWRITE); `wrote` when it was open for writing.
    Closed { wrote: bool },
    /// Renamed away from this name (IN_MOVED_FROM).
    MovedAway,
    /// Renamed to this name (IN_MOVED_TO) or removed (IN_DELETE): the name now holds
    /// another file, or none.
    Replaced,
    /// Written or closed after writing, as the file's own watch saw it, through whatever
    /// name or hard link: a change. Its handles are not counted (its directory's watch
    /// counts those opened by this name; the others are the kernel's to tell).
    Changed,
}

impl What {
    fn of(mask: AddWatchFlags) -> What {
        if mask.contains(AddWatchFlags::IN_CREATE) {
            What::Created
        } else if mask.contains(AddWatchFlags::IN_OPEN) {
            What::Opened
        } else if mask.contains(AddWatchFlags::IN_MODIFY) {
            What::Written
        } else if mask.contains(AddWatchFlags::IN_CLOSE_WRITE) {
            What::Closed { wrote: true }
        } else if mask.contains(AddWatchFlags::IN_CLOSE_NOWRITE) {
            What::Closed { wrote: false }
        } else if mask.contains(AddWatchFlags::IN_MOVED_FROM) {
            What::MovedAway
        } else {
            What::Replaced
        }
    }
}

#[allow(unsafe_code)]
pub fn register(watch: Watch) -> io::Result<AsyncFd<Watch>> {
    // SAFETY: `Watch` owns the inotify descriptor (nix's `Inotify` holds it as an `OwnedFd`
    // and never replaces it), so it is valid and open for as long as the `AsyncFd` owns the
    // `Watch`, every `as_raw_fd` call returns that same descriptor, and it is closed only
    // when the `AsyncFd` drops the `Watch` after deregistering it.
    unsafe { AsyncFd::register_with_interest(watch, tokio::io::Interest::READABLE) }
        .map_err(|e| e.into())
}
