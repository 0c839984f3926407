//! Reading a file that someone else may have put in place: the config, its includes, entity
//! files, the MQTT password file and the state files. Whatever is found at the path, the read
//! can neither block the event loop nor fill the memory:
//!
//! - only a regular file is read. A FIFO, a device or a socket (or a symlink to one) is refused
//!   before it is opened, since opening a FIFO waits for a writer and reading a device may
//!   never end; the file is then opened with `O_NONBLOCK` and checked again on the open
//!   descriptor, so a swap between the check and the open is refused too;
//! - the descriptor stays `O_NONBLOCK`, so a pseudo-file that looks regular but would wait
//!   for data (`/proc/kmsg`, a tracing pipe) answers "would block", an error, instead;
//! - at most a given number of bytes is read: a larger file is refused (`read`), or only its
//!   end is read (`read_tail`, for a journal whose newest lines are what matters).
//!
//! `writers` asks the kernel whether any process holds a file open for writing (a lease probe),
//! for the watcher, which must not apply a file still being written.
//!
//! It only reads; it knows nothing of what the bytes mean. Callers that run on the event loop
//! keep their bounds small, and the watcher reads off the loop altogether.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Why a file was not read.
#[derive(Debug)]
pub enum ReadError {
    /// The system refused (no such file, no permission, …).
    Io(io::Error),
    /// The path names something other than a regular file.
    NotRegular(Kind),
    /// The file holds more than the bound.
    TooLarge { max: u64 },
}

/// What a path named instead of a regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Directory,
    Fifo,
    Socket,
    CharDevice,
    BlockDevice,
    Other,
}

impl Kind {
    fn of(t: std::fs::FileType) -> Option<Kind> {
        Some(if t.is_file() {
            return None;
        } else if t.is_dir() {
            Kind::Directory
        } else if t.is_fifo() {
            Kind::Fifo
        } else if t.is_socket() {
            Kind::Socket
        } else if t.is_char_device() {
            Kind::CharDevice
        } else if t.is_block_device() {
            Kind::BlockDevice
        } else {
            Kind::Other
        })
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Directory => "a directory",
            Kind::Fifo => "a FIFO (named pipe)",
            Kind::Socket => "a socket",
            Kind::CharDevice => "a character device",
            Kind::BlockDevice => "a block device",
            Kind::Other => "not a file",
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::NotRegular(kind) => write!(
                f,
                "it is {}, not a regular file (actiond reads only regular files: opening or \
                 reading anything else could wait forever)",
                kind.name()
            ),
            ReadError::TooLarge { max } => write!(f, "it is larger than {max} bytes"),
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> ReadError {
        ReadError::Io(e)
    }
}

/// For callers that report an `io::Error`: a system error stays itself (`NotFound` stays
/// `NotFound`), the refusals become `InvalidInput` and `FileTooLarge` with this module's words.
impl From<ReadError> for io::Error {
    fn from(e: ReadError) -> io::Error {
        match e {
            ReadError::Io(e) => e,
            e @ ReadError::NotRegular(_) => io::Error::new(io::ErrorKind::InvalidInput, e),
            e @ ReadError::TooLarge { .. } => io::Error::new(io::ErrorKind::FileTooLarge, e),
        }
    }
}

impl ReadError {
    /// Whether the file is simply not there.
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::Io(e) if e.kind() == io::ErrorKind::NotFound)
    }
}

/// Opens `path` for reading if it is a regular file, without ever waiting on it.
fn open_regular(path: &Path) -> Result<File, ReadError> {
    // `metadata` follows symlinks: a link to a FIFO is refused here, unopened.
    if let Some(kind) = Kind::of(std::fs::metadata(path)?.file_type()) {
        return Err(ReadError::NotRegular(kind));
    }
    // O_NONBLOCK: should the path have become a FIFO since, the open returns at once; on a
    // regular file it changes nothing. O_NOCTTY: a terminal never becomes ours.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    if let Some(kind) = Kind::of(file.metadata()?.file_type()) {
        return Err(ReadError::NotRegular(kind));
    }
    Ok(file)
}

/// The whole content of the regular file `path`, refused when it holds more than `max` bytes.
pub fn read(path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let file = open_regular(path)?;
    let mut bytes = Vec::new();
    // One byte past the bound tells a file over it (it may grow while it is read).
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(ReadError::TooLarge { max });
    }
    Ok(bytes)
}

/// Whether any process holds a file open for writing, as the kernel says.
#[derive(Debug)]
pub enum Writers {
    /// No descriptor open for writing exists anywhere, whoever opened it, whenever, by
    /// whatever name (a hard link, a name since renamed).
    None,
    /// At least one does.
    Some,
    /// The kernel cannot be asked: actiond neither owns the file nor holds CAP_LEASE
    /// (EACCES), or its file system or the system has no leases (EINVAL).
    Unknown(io::Error),
}

/// Asks the kernel whether any process holds `file` (open read-only here) open for writing:
/// a read lease is refused with EAGAIN exactly then (`fcntl(2)`, "Leases": the inode's count
/// of writable descriptors, whoever holds them). The lease is given back at once. Should a
/// writer open the file in the moment between, the kernel breaks the lease with SIGIO, which
/// the caller must handle (default: terminate), and the writer's open waits only until the
/// release right after.
#[allow(unsafe_code)]
pub fn writers(file: &File) -> Writers {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is open for the whole call (`file` is borrowed); F_SETLEASE takes an int
    // argument and touches no memory of ours.
    if unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_RDLCK) } == -1 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EAGAIN) => Writers::Some,
            _ => Writers::Unknown(e),
        };
    }
    // SAFETY: as above; giving back the lease just taken cannot fail in a way that matters
    // (the descriptor is closed by the caller soon after, which releases it too).
    unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_UNLCK) };
    Writers::None
}

/// `read`, and whether a writer holds the file open (`writers`) when it was opened.
pub fn read_probed(path: &Path, max: u64) -> Result<(Vec<u8>, Writers), ReadError> {
    let file = open_regular(path)?;
    let writers = writers(&file);
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(ReadError::TooLarge { max });
    }
    Ok((bytes, writers))
}

/// `read`, as UTF-8 text.
pub fn read_text(path: &Path, max: u64) -> Result<String, ReadError> {
    String::from_utf8(read(path, max)?).map_err(|_| {
        ReadError::Io(io::Error::new(
            io::ErrorKind::InvalidData,
            "it is not UTF-8 text",
        ))
    })
}

/// A digest of files as one pass read them: each file's path and its bytes, or why it could
/// not be read, in the order read. The loaders take it of the very bytes they parsed (the
/// config's, `config::load`; the entity files', `entities::load_all_within`), the watcher of
/// the files as they read now: equal digests mean the files still hold what is in force, so an
/// edit made between a load and the watches is seen, never taken for what was loaded.
#[derive(Default)]
pub struct Digest(std::hash::DefaultHasher);

impl Digest {
    /// Adds what reading `path` gave.
    pub fn add(&mut self, path: &Path, got: Result<&[u8], &ReadError>) {
        use std::hash::Hash;
        path.hash(&mut self.0);
        match got {
            Ok(bytes) => {
                0u8.hash(&mut self.0);
                bytes.hash(&mut self.0);
            }
            Err(e) => {
                1u8.hash(&mut self.0);
                e.to_string().hash(&mut self.0);
            }
        }
    }

    /// The digest so far.
    pub fn value(&self) -> u64 {
        std::hash::Hasher::finish(&self.0)
    }
}

/// The last `max` bytes at most of the regular file `path`, and how many bytes before them
/// were left unread (0 when the whole file was read).
#[cfg(test)]
pub fn read_tail(path: &Path, max: u64) -> Result<(Vec<u8>, u64), ReadError> {
    let (mut tail, skipped) = open_tail(path, max)?;
    let mut bytes = Vec::new();
    tail.read_to_end(&mut bytes)?;
    Ok((bytes, skipped))
}

/// `read_tail` as a reader, for a caller that reads the tail in pieces and so never holds
/// it whole.
pub fn open_tail(path: &Path, max: u64) -> Result<(io::Take<File>, u64), ReadError> {
    let mut file = open_regular(path)?;
    let len = file.metadata()?.len();
    let skipped = len.saturating_sub(max);
    if skipped > 0 {
        file.seek(SeekFrom::Start(skipped))?;
    }
    Ok((file.take(max), skipped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::time::{Duration, Instant};

    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir =
                std::env::temp_dir().join(format!("actiond-files-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn mkfifo(path: &Path) {
        let made = std::process::Command::new("mkfifo").arg(path).status();
        assert!(made.unwrap().success(), "mkfifo {}", path.display());
    }

    /// A writable handle anywhere, by any name (the file itself, a hard link, a name since
    /// renamed), is seen; readers are not; once it is closed, none is. The files are this
    /// process's own, so the probe needs no capability.
    #[test]
    fn writers_are_told_by_the_kernel_by_whatever_name_they_opened_the_file() {
        let dir = Scratch::new("writers");
        let path = dir.0.join("c.yaml");
        std::fs::write(&path, "a: 1\n").unwrap();
        let probe = || match read_probed(&path, 1024).unwrap().1 {
            Writers::None => "none",
            Writers::Some => "some",
            Writers::Unknown(e) => panic!("the kernel could not be asked: {e}"),
        };
        assert_eq!(probe(), "none");
        let reader = File::open(&path).unwrap();
        assert_eq!(probe(), "none", "a reader is no writer");
        let tmp = dir.0.join("c.yaml.tmp");
        let writer = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        assert_eq!(probe(), "some", "a handle carried across the rename");
        drop(writer);
        assert_eq!(probe(), "none");
        let link = dir.0.join("hl.yaml");
        std::fs::hard_link(&path, &link).unwrap();
        let writer = OpenOptions::new().append(true).open(&link).unwrap();
        assert_eq!(probe(), "some", "a handle through a hard link");
        drop(writer);
        assert_eq!(probe(), "none");
        drop(reader);
    }

    #[test]
    fn a_regular_file_is_read_within_its_bound() {
        let s = Scratch::new("regular");
        let path = s.0.join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(read(&path, 10).unwrap(), b"0123456789");
        assert!(matches!(
            read(&path, 9),
            Err(ReadError::TooLarge { max: 9 })
        ));
        assert_eq!(read_text(&path, 100).unwrap(), "0123456789");
        assert_eq!(read_tail(&path, 4).unwrap(), (b"6789".to_vec(), 6));
        assert_eq!(read_tail(&path, 40).unwrap(), (b"0123456789".to_vec(), 0));
        assert!(read(&s.0.join("missing"), 10).unwrap_err().is_not_found());
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        assert!(read_text(&path, 10).is_err());
    }

    /// Nobody ever opens the FIFO for writing: a blocking open would hang the test.
    #[test]
    fn fifos_sockets_devices_and_links_to_them_are_refused_at_once() {
        let s = Scratch::new("special");
        let fifo = s.0.join("fifo");
        mkfifo(&fifo);
        let link = s.0.join("link");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        let socket = s.0.join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let began = Instant::now();
        let cases = [
            (fifo.as_path(), Kind::Fifo),
            (link.as_path(), Kind::Fifo),
            (socket.as_path(), Kind::Socket),
            (Path::new("/dev/zero"), Kind::CharDevice),
            (s.0.as_path(), Kind::Directory),
        ];
        for (path, kind) in cases {
            match read(path, 1 << 20) {
                Err(ReadError::NotRegular(k)) => assert_eq!(k, kind, "{}", path.display()),
                other => panic!("{}: {other:?}", path.display()),
            }
            assert!(matches!(read_tail(path, 10), Err(ReadError::NotRegular(_))));
        }
        assert!(began.elapsed() < Duration::from_secs(1));
        let e = io::Error::from(read(&fifo, 10).unwrap_err());
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("a FIFO"), "{e}");
    }
}
