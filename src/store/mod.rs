//! The store: the only code in actiond that writes files, all of them inside the state
//! directory (`stateDirectory`, or systemd's `$STATE_DIRECTORY`). A file is replaced
//! atomically: written to a temporary name in the same directory, fsynced, renamed over the
//! old one, and the directory fsynced, so a power cut leaves either the old file or the new
//! one, never a torn mix. An append-only journal (`writer`) is written by a thread of its
//! own with group commit, and hands each record back only once it is on disk. Files are
//! private to the service user (mode 0600). The store knows nothing of what it stores:
//! callers hand it bytes, or records that encode themselves.

mod writer;

pub use writer::{Journal, Options, Record, Stats, SyncPolicy};

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::files;

/// A state directory, or none (everything in memory only).
#[derive(Debug, Clone)]
pub struct Store {
    dir: Option<PathBuf>,
}

impl Store {
    pub fn new(dir: Option<PathBuf>) -> Store {
        Store { dir }
    }

    /// The state directory, if there is one.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Reads a file of the state directory, refused when it holds more than `max` bytes or
    /// is not a regular file; `Ok(None)` when there is no directory or no file.
    pub fn read(&self, name: &str, max: u64) -> io::Result<Option<Vec<u8>>> {
        let Some(dir) = &self.dir else {
            return Ok(None);
        };
        match files::read(&dir.join(name), max) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The last `max` bytes at most of a file of the state directory, as a reader, with the
    /// count of bytes before them left unread; `Ok(None)` when there is no directory or no
    /// file.
    pub fn open_tail(&self, name: &str, max: u64) -> io::Result<Option<(io::Take<File>, u64)>> {
        let Some(dir) = &self.dir else {
            return Ok(None);
        };
        match files::open_tail(&dir.join(name), max) {
            Ok(read) => Ok(Some(read)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Replaces a file of the state directory atomically. Without a directory it does
    /// nothing.
    pub fn replace(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.replace_with(name, &mut |f| f.write_all(bytes))
    }

    /// The same, with the new content written by `fill` in as many pieces as it likes, so
    /// that it is never held whole.
    pub fn replace_with(
        &self,
        name: &str,
        fill: &mut dyn FnMut(&mut File) -> io::Result<()>,
    ) -> io::Result<()> {
        let Some(dir) = &self.dir else { return Ok(()) };
        fs::create_dir_all(dir)?;
        let tmp = dir.join(format!(".{name}.tmp"));
        let result = write_synced(&tmp, fill).and_then(|()| fs::rename(&tmp, dir.join(name)));
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result?;
        // The rename is only durable once the directory entry is.
        File::open(dir)?.sync_all()
    }
}

/// Writes a new file at `path`, which must not exist once any old one is removed: whatever
/// someone put there (a symlink to a file of theirs, a FIFO that would hold the open for
/// ever) is removed, never followed or opened.
fn write_synced(path: &Path, fill: &mut dyn FnMut(&mut File) -> io::Result<()>) -> io::Result<()> {
    match fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .mode(0o600)
        .open(path)?;
    fill(&mut f)?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("actiond-store-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_symlink_or_fifo_in_the_temp_files_place_is_removed_not_followed() {
        let dir = temp_dir("hostile");
        let store = Store::new(Some(dir.join("state")));
        fs::create_dir_all(dir.join("state")).unwrap();
        let victim = dir.join("victim");
        fs::write(&victim, b"keep me").unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("state/.s.json.tmp")).unwrap();
        store.replace("s.json", b"one").unwrap();
        assert_eq!(
            fs::read(&victim).unwrap(),
            b"keep me",
            "the symlink was followed"
        );
        assert!(
            !fs::symlink_metadata(dir.join("state/s.json"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(dir.join("state/s.json")).unwrap(), b"one");
        // A FIFO would hold an open for writing until a reader came: removed, not opened.
        let fifo = dir.join("state/.s.json.tmp");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        store.replace("s.json", b"two").unwrap();
        assert_eq!(fs::read(dir.join("state/s.json")).unwrap(), b"two");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn replace_then_read_round_trips_privately() {
        let dir = temp_dir("rt");
        let store = Store::new(Some(dir.join("state")));
        assert_eq!(store.read("x.json", 10).unwrap(), None);
        store.replace("x.json", b"one").unwrap();
        store.replace("x.json", b"two").unwrap();
        assert_eq!(
            store.read("x.json", 10).unwrap().as_deref(),
            Some(&b"two"[..])
        );
        assert!(store.read("x.json", 2).is_err(), "over the bound");
        let (mut tail, skipped) = store.open_tail("x.json", 2).unwrap().unwrap();
        let mut end = Vec::new();
        io::Read::read_to_end(&mut tail, &mut end).unwrap();
        assert_eq!((end, skipped), (b"wo".to_vec(), 1));
        let mode = fs::metadata(dir.join("state/x.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(!dir.join("state/.x.json.tmp").exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_memory_store_keeps_nothing() {
        let store = Store::new(None);
        store.replace("x", b"y").unwrap();
        assert_eq!(store.read("x", 10).unwrap(), None);
        assert!(store.open_tail("x", 10).unwrap().is_none());
    }
}
