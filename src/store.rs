//! The store: the only code in actiond that writes files, all of them inside the state
//! directory (`stateDirectory`, or systemd's `$STATE_DIRECTORY`). A file is replaced
//! atomically: written to a temporary name in the same directory, fsynced, renamed over the
//! old one, and the directory fsynced, so a power cut leaves either the old file or the new
//! one, never a torn mix. Files are private to the service user (mode 0600). The store knows
//! nothing of what it stores: callers hand it bytes.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// A state directory, or none (everything in memory only).
#[derive(Debug, Clone)]
pub struct Store {
    dir: Option<PathBuf>,
}

impl Store {
    pub fn new(dir: Option<PathBuf>) -> Store {
        Store { dir }
    }

    /// Reads a file of the state directory; `Ok(None)` when there is no directory or no file.
    pub fn read(&self, name: &str) -> io::Result<Option<Vec<u8>>> {
        let Some(dir) = &self.dir else {
            return Ok(None);
        };
        match fs::read(dir.join(name)) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Replaces a file of the state directory atomically. Without a directory it does
    /// nothing.
    pub fn replace(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let Some(dir) = &self.dir else { return Ok(()) };
        fs::create_dir_all(dir)?;
        let tmp = dir.join(format!(".{name}.tmp"));
        let result = write_synced(&tmp, bytes).and_then(|()| fs::rename(&tmp, dir.join(name)));
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result?;
        // The rename is only durable once the directory entry is.
        File::open(dir)?.sync_all()
    }
}

impl Store {
    /// A journal file written by its own thread: appends are fsynced there, so a slow SD
    /// card never blocks the event loop. `None` without a state directory.
    pub fn journal(&self, name: &str) -> Option<Journal> {
        let dir = self.dir.clone()?;
        let name = name.to_string();
        let (tx, rx) = mpsc::channel::<Op>();
        let store = self.clone();
        let spawned = std::thread::Builder::new()
            .name("actiond-journal".into())
            .spawn(move || {
                let path = dir.join(&name);
                let mut file: Option<File> = None;
                for op in rx {
                    let result = match op {
                        Op::Append(bytes) => append(&dir, &path, &mut file, &bytes),
                        Op::Replace(bytes) => {
                            // The append handle would keep writing to the old, renamed-over file.
                            file = None;
                            store.replace(&name, &bytes)
                        }
                        Op::Flush(done) => {
                            let _ = done.send(());
                            Ok(())
                        }
                    };
                    if let Err(e) = result {
                        tracing::warn!("cannot write {}: {e}", path.display());
                        file = None;
                    }
                }
            });
        match spawned {
            Ok(_) => Some(Journal { tx }),
            Err(e) => {
                tracing::warn!(
                    "cannot start the journal writer ({e}): the history is kept in memory only"
                );
                None
            }
        }
    }
}

enum Op {
    Append(Vec<u8>),
    Replace(Vec<u8>),
    Flush(mpsc::Sender<()>),
}

/// The sending end of a journal file: appends and whole-file replacements, in order.
#[derive(Debug, Clone)]
pub struct Journal {
    tx: mpsc::Sender<Op>,
}

impl Journal {
    /// Appends bytes and fsyncs them (on the writer thread).
    pub fn append(&self, bytes: Vec<u8>) {
        let _ = self.tx.send(Op::Append(bytes));
    }

    /// Replaces the whole file atomically (on the writer thread).
    pub fn replace(&self, bytes: Vec<u8>) {
        let _ = self.tx.send(Op::Replace(bytes));
    }

    /// Waits until everything sent so far is on disk, at most `within`.
    pub fn flush(&self, within: Duration) -> bool {
        let (done, wait) = mpsc::channel();
        self.tx.send(Op::Flush(done)).is_ok() && wait.recv_timeout(within).is_ok()
    }
}

fn append(dir: &Path, path: &Path, file: &mut Option<File>, bytes: &[u8]) -> io::Result<()> {
    if file.is_none() {
        fs::create_dir_all(dir)?;
        *file = Some(
            OpenOptions::new()
                .append(true)
                .create(true)
                .mode(0o600)
                .open(path)?,
        );
    }
    let f = file
        .as_mut()
        .ok_or_else(|| io::Error::other("journal not open"))?;
    f.write_all(bytes)?;
    f.sync_data()
}

fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(bytes)?;
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
    fn replace_then_read_round_trips_privately() {
        let dir = temp_dir("rt");
        let store = Store::new(Some(dir.join("state")));
        assert_eq!(store.read("x.json").unwrap(), None);
        store.replace("x.json", b"one").unwrap();
        store.replace("x.json", b"two").unwrap();
        assert_eq!(store.read("x.json").unwrap().as_deref(), Some(&b"two"[..]));
        let mode = fs::metadata(dir.join("state/x.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(!dir.join("state/.x.json.tmp").exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_journal_appends_replaces_and_flushes_in_order() {
        let dir = temp_dir("journal");
        let store = Store::new(Some(dir.clone()));
        let j = store.journal("h.jsonl").unwrap();
        j.append(b"one\n".to_vec());
        j.append(b"two\n".to_vec());
        assert!(j.flush(Duration::from_secs(5)));
        assert_eq!(fs::read(dir.join("h.jsonl")).unwrap(), b"one\ntwo\n");
        j.replace(b"two\n".to_vec());
        j.append(b"three\n".to_vec());
        assert!(j.flush(Duration::from_secs(5)));
        assert_eq!(fs::read(dir.join("h.jsonl")).unwrap(), b"two\nthree\n");
        assert!(Store::new(None).journal("x").is_none());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_memory_store_keeps_nothing() {
        let store = Store::new(None);
        store.replace("x", b"y").unwrap();
        assert_eq!(store.read("x").unwrap(), None);
    }
}
