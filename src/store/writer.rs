//! A journal: one append-only file of the state directory, written by a thread of its own so
//! that a slow SD card never blocks the event loop. It owns when bytes reach the disk:
//!
//! - **Group commit.** The thread takes everything queued, encodes it into one buffer, writes
//!   it with one `write` and makes it durable with one `fdatasync`, however many records the
//!   batch holds. Then it hands the batch's records back to the owner (`Options::written`),
//!   in the order they were queued. A record handed back is on disk: that is the whole
//!   contract, and the owner releases nothing about a record before it has it back. When
//!   the last batch held more than one record (several runs are going), the thread waits
//!   about one fsync's time (at most a millisecond) before it writes, so that one fsync
//!   covers the records on their way (`linger`).
//! - **Sync levels.** `SyncPolicy::Always` fsyncs every batch before handing it back.
//!   `SyncPolicy::Every(d)` hands a batch back once written (it survives a crash of the service,
//!   not a power cut) and fsyncs at most once per `d`.
//! - **Compaction** runs on the same thread, in place of a batch's append: read the file,
//!   add the batch's records, let the owner's function make the new content, replace the
//!   file atomically. No append can race with it, because the thread that compacts is the
//!   only one that appends, and records queued while it waited never lengthen the file first.
//! - **Failure.** When a write or an fsync fails (a full disk, an I/O error), nothing of the
//!   batch is handed back. The thread says why (`Journal::failing`) and retries, with a
//!   growing pause, by rewriting the whole file: what it holds plus the batch, through the
//!   compaction function, to a new file that is fsynced and renamed over the old one. After
//!   a failed fsync Linux may report the next one as a success although the data is gone; a
//!   fresh file does not depend on that.
//!
//! The journal does not bound its queue: its owner does (it knows what each record is for,
//! and which ones may never be refused). It knows nothing of what a record says.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::Store;
use crate::files;

/// Something a journal holds: it encodes itself as the bytes to append.
pub trait Record: Send + 'static {
    fn encode(&self, out: &mut Vec<u8>);
}

/// When appended records are fsynced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncPolicy {
    /// Before they are handed back: a power cut loses nothing that was handed back.
    Always,
    /// At most once per this interval; records are handed back once written. A crash of
    /// the service loses nothing handed back; a power cut may lose what was handed back in
    /// the last interval.
    Every(Duration),
}

/// Makes a file's new content from its current content.
pub type Compactor = Box<dyn Fn(&[u8]) -> Vec<u8> + Send>;

/// How a journal starts and what it calls.
pub struct Options<R> {
    /// The file's whole content to begin with, written (atomically) before any append,
    /// each record encoded only when its turn comes: the content is never held whole (a
    /// history of full outputs of control bytes is six times their size as JSON). They are
    /// not handed back through `written`.
    pub initial: Vec<R>,
    pub sync: SyncPolicy,
    /// The file's new content from its current content: used to compact it, and to rewrite
    /// it after a failure (the current content may then end in a torn line, and hold some
    /// records twice).
    pub compact: Compactor,
    /// Receives each batch of records once it is on disk (per `sync`), in queue order.
    pub written: Box<dyn FnMut(Vec<R>) + Send>,
}

/// What a journal has done, for `/metrics` and the benchmark.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Records handed back (written, and synced per the sync level).
    pub records: u64,
    /// Batches written.
    pub batches: u64,
    /// `fdatasync`/`fsync` calls, those of compactions and rewrites included.
    pub syncs: u64,
    /// Records queued and not yet handed back.
    pub waiting: u64,
}

/// The queue and the counters, shared by the owner and the writing thread.
struct State<R> {
    queue: Vec<R>,
    compact: bool,
    sync: SyncPolicy,
    /// The owner is gone: write what is queued, sync, and end.
    closed: bool,
    /// Records ever queued; of those, handed back; of those, known to be fsynced. The
    /// initial content counts as one, so that a flush waits for it too.
    queued: u64,
    written: u64,
    synced: u64,
    /// A flush asks for an fsync now, whatever the interval.
    flush: bool,
    /// The thread waits for work and must be woken for a record. While it writes, fsyncs or
    /// lingers it is not woken per record (it looks at the queue before it waits again):
    /// each wake-up is a system call for the owner and a context switch for the thread,
    /// and with 16 clients that was one per record.
    idle: bool,
    failing: Option<String>,
    stats: Stats,
    /// Tests make every fsync fail while this is set.
    #[cfg(test)]
    fault: bool,
}

struct Shared<R> {
    state: Mutex<State<R>>,
    /// Wakes the writing thread.
    work: Condvar,
    /// Wakes flushes when records have been handed back.
    progress: Condvar,
}

impl<R> Shared<R> {
    fn lock(&self) -> MutexGuard<'_, State<R>> {
        // The state is plain counters and a queue, still usable after a panic elsewhere.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The owner's end of a journal file.
pub struct Journal<R: Record> {
    shared: Arc<Shared<R>>,
    path: PathBuf,
}

impl Store {
    /// Starts the journal `name` of the state directory: the thread writes
    /// `options.initial` as the whole file, then appends what it is given. `None` without a
    /// state directory, or when the thread cannot be started (the caller keeps its records
    /// in memory only and says so).
    pub fn journal<R: Record>(&self, name: &str, options: Options<R>) -> Option<Journal<R>> {
        let dir = self.dir()?.to_path_buf();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue: Vec::new(),
                compact: false,
                sync: options.sync,
                closed: false,
                queued: 1,
                written: 0,
                synced: 0,
                flush: false,
                idle: false,
                failing: None,
                stats: Stats::default(),
                #[cfg(test)]
                fault: false,
            }),
            work: Condvar::new(),
            progress: Condvar::new(),
        });
        let path = dir.join(name);
        let writer = Writer {
            store: self.clone(),
            name: name.to_string(),
            path: path.clone(),
            dir,
            file: None,
            buf: Vec::new(),
            unsynced: false,
            last_sync: Instant::now(),
            syncs: 0,
            compact: options.compact,
            last_batch: 0,
            sync_took: Duration::ZERO,
        };
        let thread_shared = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name("actiond-journal".into())
            .spawn(move || writer.run(&thread_shared, options.initial, options.written));
        match spawned {
            Ok(_) => Some(Journal { shared, path }),
            Err(e) => {
                tracing::warn!("cannot start the writer of {} ({e})", path.display());
                None
            }
        }
    }
}

impl<R: Record> Journal<R> {
    /// Queues a record; it comes back through `Options::written` once on disk.
    pub fn append(&self, record: R) {
        let mut st = self.shared.lock();
        st.queue.push(record);
        st.queued += 1;
        let wake = std::mem::take(&mut st.idle);
        drop(st);
        if wake {
            self.shared.work.notify_one();
        }
    }

    /// Asks for the file to be compacted after what is queued now.
    pub fn compact(&self) {
        self.shared.lock().compact = true;
        self.shared.work.notify_one();
    }

    /// Changes the sync level (a reload).
    pub fn set_sync(&self, sync: SyncPolicy) {
        self.shared.lock().sync = sync;
        self.shared.work.notify_one();
    }

    /// Why the file cannot be written now, while the thread retries; `None` when it can.
    pub fn failing(&self) -> Option<String> {
        self.shared.lock().failing.clone()
    }

    pub fn stats(&self) -> Stats {
        let st = self.shared.lock();
        Stats {
            waiting: st.queued - st.written,
            ..st.stats
        }
    }

    /// The file's path, for messages.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Waits until every record queued so far is on disk and fsynced, at most `within`.
    /// Blocks the calling thread: for shutdown and tests.
    pub fn flush(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        let mut st = self.shared.lock();
        let target = st.queued;
        if st.synced < target {
            st.flush = true;
            self.shared.work.notify_one();
        }
        while st.synced < target {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            st = self
                .shared
                .progress
                .wait_timeout(st, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        true
    }

    #[cfg(test)]
    fn fault(&self, on: bool) {
        self.shared.lock().fault = on;
    }
}

impl<R: Record> Drop for Journal<R> {
    /// The thread writes and syncs what is queued, then ends.
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.work.notify_one();
    }
}

/// One batch taken from the queue.
struct Batch<R> {
    records: Vec<R>,
    compact: bool,
    sync: SyncPolicy,
    /// Fsync now, whatever the interval (a flush, or the owner is gone).
    force: bool,
}

/// The writing thread's side: the open file and what it has not yet fsynced.
struct Writer {
    store: Store,
    name: String,
    path: PathBuf,
    dir: PathBuf,
    file: Option<File>,
    /// The batch's encoded records, reused from batch to batch.
    buf: Vec<u8>,
    unsynced: bool,
    last_sync: Instant,
    syncs: u64,
    compact: Compactor,
    /// Records in the last batch written, and how long its fsync took: what [`linger`]
    /// decides by.
    last_batch: usize,
    sync_took: Duration,
}

/// The most of the file read back to rewrite it after a failure. Compaction keeps the file
/// far below this; a file grown past it by someone else is not read whole into memory.
const CURRENT_MAX: u64 = 256 * 1024 * 1024;

/// How much of a file written whole is held before it is written.
const PIECE: usize = 64 * 1024;

/// The longest a batch waits for company; see [`linger`].
const LINGER_MAX: Duration = Duration::from_millis(1);

/// How long a batch of `queued` records waits for more before it is written, if at all.
///
/// Each fsync costs the service CPU (the file system's journal commit is done by the
/// thread that asks for it; about 85 µs of the service's CPU per fdatasync on this project's
/// test VM under load), and on a board whose CPU is busy with the commands it runs, that CPU
/// is taken from them. When the last batch held more than one record, several runs are
/// going and more records are on their way: waiting about as long as the last fsync took
/// (at most [`LINGER_MAX`]) lets one fsync cover them, and the wait scales with the disk:
/// short on a fast one, never more than a millisecond on an SD card. The wait is the whole
/// of that time, not until the queue is as long as the last batch: stopping there kept
/// batches at the size they had (3–5 records with 16 clients), waiting the whole time lets
/// them grow with the load. Measured with 16 clients on an ext4 disk, interleaved runs of
/// each rule (docs/PERFORMANCE.md): no linger 2.3–2.5 records per fsync; lingering until the
/// queue is as long as the last batch 3.5–4.1; the whole time 5.6–5.9, with 8 % less of the
/// service's CPU per run and 2 % more runs per second. A lone client's records never wait
/// (its batches hold one record; after a busy spell its first record may wait once, up to a
/// millisecond); neither do a flush, the last batch, a compaction or the
/// interval sync levels (which do not fsync per batch). Nothing is handed back before its
/// fsync either way: lingering changes when, never whether, a record is durable.
fn linger(
    queued: usize,
    last_batch: usize,
    sync: SyncPolicy,
    hurry: bool,
    sync_took: Duration,
) -> Option<Duration> {
    let worth = queued > 0 && last_batch > 1 && sync == SyncPolicy::Always && !hurry;
    worth.then(|| sync_took.min(LINGER_MAX))
}

/// The first pause before a failed batch is retried, and the longest.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(2);

impl Writer {
    fn run<R: Record>(
        mut self,
        shared: &Shared<R>,
        initial: Vec<R>,
        mut written: Box<dyn FnMut(Vec<R>) + Send>,
    ) {
        self.until_ok(shared, |w| w.replace_records(&initial));
        drop(initial);
        let mut st = shared.lock();
        st.written = 1;
        st.synced = 1;
        st.flush = false;
        st.stats.syncs = self.syncs;
        drop(st);
        shared.progress.notify_all();
        while let Some(batch) = self.next(shared) {
            let n = batch.records.len() as u64;
            self.last_batch = batch.records.len();
            let mut first = true;
            let synced = self.until_ok(shared, |w| {
                if std::mem::take(&mut first) {
                    w.write(&batch, shared)
                } else {
                    // A retry: rewrite the file with the batch, rather than append again.
                    w.rewrite(&batch.records, shared)
                }
            });
            self.buf.clear();
            if n > 0 {
                written(batch.records);
            }
            let mut st = shared.lock();
            st.written += n;
            if synced {
                st.synced = st.written;
                // A flush asked for before this batch is answered by it.
                st.flush = st.synced < st.queued && st.flush;
            }
            st.stats.records += n;
            st.stats.batches += u64::from(n > 0);
            st.stats.syncs = self.syncs;
            drop(st);
            shared.progress.notify_all();
        }
    }

    /// Waits for work: records, a compaction, or an fsync that has come due. `None` once the
    /// owner is gone and everything is written and synced.
    fn next<R>(&self, shared: &Shared<R>) -> Option<Batch<R>> {
        let mut st = shared.lock();
        let mut linger_until: Option<Instant> = None;
        loop {
            let interval = match st.sync {
                SyncPolicy::Always => Duration::ZERO,
                SyncPolicy::Every(d) => d,
            };
            let sync_due =
                self.unsynced && (st.flush || st.closed || self.last_sync.elapsed() >= interval);
            let hurry = st.flush || st.closed || st.compact;
            if let Some(linger) = linger(
                st.queue.len(),
                self.last_batch,
                st.sync,
                hurry,
                self.sync_took,
            ) {
                let until = *linger_until.get_or_insert_with(|| Instant::now() + linger);
                let left = until.saturating_duration_since(Instant::now());
                if !left.is_zero() {
                    st = shared
                        .work
                        .wait_timeout(st, left)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                    continue;
                }
            }
            if !st.queue.is_empty() || st.compact || sync_due {
                let batch = Batch {
                    records: std::mem::take(&mut st.queue),
                    compact: std::mem::take(&mut st.compact),
                    sync: st.sync,
                    force: std::mem::take(&mut st.flush) || st.closed,
                };
                return Some(batch);
            }
            if st.closed {
                return None;
            }
            st.idle = true;
            st = if self.unsynced {
                let left = interval.saturating_sub(self.last_sync.elapsed());
                shared
                    .work
                    .wait_timeout(st, left)
                    .unwrap_or_else(|p| p.into_inner())
                    .0
            } else {
                shared.work.wait(st).unwrap_or_else(|p| p.into_inner())
            };
            st.idle = false;
        }
    }

    /// Runs `step` until it succeeds: after a failure the journal says why (refusing work
    /// is the owner's business), and waits longer each time. Returns whether everything
    /// written is fsynced.
    fn until_ok<R>(
        &mut self,
        shared: &Shared<R>,
        mut step: impl FnMut(&mut Self) -> io::Result<()>,
    ) -> bool {
        let mut pause = RETRY_FIRST;
        loop {
            match step(self) {
                Ok(()) => break,
                Err(e) => {
                    self.file = None;
                    let why = format!("{} cannot be written ({e})", self.path.display());
                    let mut st = shared.lock();
                    if st.failing.as_deref() != Some(why.as_str()) {
                        tracing::warn!("{why}; retrying, and refusing new runs until it can");
                        st.failing = Some(why);
                    }
                    st.stats.syncs = self.syncs;
                    drop(st);
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(RETRY_MAX);
                }
            }
        }
        let mut st = shared.lock();
        if st.failing.take().is_some() {
            tracing::info!("{} can be written again", self.path.display());
        }
        !self.unsynced
    }

    /// Appends a batch, or compacts the file with the batch when asked, and fsyncs as the
    /// level says. A compacted batch goes through the compaction with the file rather than
    /// after it: records that were queued while the compaction waited never make the file
    /// longer than the owner's bound, however many of them group commit gathered.
    fn write<R: Record>(&mut self, batch: &Batch<R>, shared: &Shared<R>) -> io::Result<()> {
        if batch.compact {
            self.rewrite(&batch.records, shared)?;
        } else {
            for r in &batch.records {
                r.encode(&mut self.buf);
            }
            if !self.buf.is_empty() {
                self.append()?;
            }
        }
        let due = match batch.sync {
            SyncPolicy::Always => true,
            SyncPolicy::Every(d) => batch.force || self.last_sync.elapsed() >= d,
        };
        if self.unsynced && due {
            self.sync(shared)?;
        }
        Ok(())
    }

    /// Writes the buffer at the end of the file, opening (and, the first time, creating)
    /// it. A new file's name is only durable once the directory is fsynced.
    fn append(&mut self) -> io::Result<()> {
        // From here on the file may hold bytes that are not fsynced.
        self.unsynced = true;
        let file = match &mut self.file {
            Some(f) => f,
            None => {
                fs::create_dir_all(&self.dir)?;
                let existed = fs::symlink_metadata(&self.path).is_ok();
                // Never through a symlink, never a FIFO (its open would wait for a reader for
                // ever) or a device: only a regular file of our own is appended to.
                let f = OpenOptions::new()
                    .append(true)
                    .create(true)
                    .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                    .mode(0o600)
                    .open(&self.path)?;
                if !f.metadata()?.is_file() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("{} is not a regular file", self.path.display()),
                    ));
                }
                if !existed {
                    File::open(&self.dir)?.sync_all()?;
                    self.syncs += 1;
                }
                self.file.insert(f)
            }
        };
        file.write_all(&self.buf)
    }

    fn sync<R>(&mut self, _shared: &Shared<R>) -> io::Result<()> {
        #[cfg(test)]
        if _shared.lock().fault {
            return Err(io::Error::other("an fsync failure the test asked for"));
        }
        let file = self
            .file
            .as_ref()
            .ok_or_else(|| io::Error::other("the journal is not open"))?;
        self.syncs += 1;
        let began = Instant::now();
        file.sync_data()?;
        self.unsynced = false;
        self.last_sync = Instant::now();
        self.sync_took = self.last_sync - began;
        Ok(())
    }

    /// The file's current content (empty when there is none).
    fn current(&self) -> io::Result<Vec<u8>> {
        // Only a regular file, read without blocking; what is not one is started over.
        match files::read(&self.path, CURRENT_MAX) {
            Ok(bytes) => Ok(bytes),
            Err(e) if e.is_not_found() => Ok(Vec::new()),
            Err(e @ files::ReadError::NotRegular(_)) => {
                tracing::warn!("{e}: the history file is started over");
                Ok(Vec::new())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Replaces the whole file atomically (temp file, fsync, rename, directory fsync).
    fn replace(&mut self, bytes: &[u8]) -> io::Result<()> {
        // The append handle would keep writing to the old, renamed-over file.
        self.file = None;
        self.syncs += 2;
        self.store.replace(&self.name, bytes)?;
        self.unsynced = false;
        self.last_sync = Instant::now();
        Ok(())
    }

    /// Replaces the whole file with `records`, written in pieces of about [`PIECE`] bytes.
    fn replace_records<R: Record>(&mut self, records: &[R]) -> io::Result<()> {
        self.file = None;
        self.syncs += 2;
        let mut piece = Vec::new();
        self.store.replace_with(&self.name, &mut |f| {
            piece.clear();
            for r in records {
                r.encode(&mut piece);
                if piece.len() >= PIECE {
                    f.write_all(&piece)?;
                    piece.clear();
                }
            }
            f.write_all(&piece)
        })?;
        self.unsynced = false;
        self.last_sync = Instant::now();
        Ok(())
    }

    /// After a failure: the file as it is, a torn last line ended so that it cannot swallow
    /// the next record, the batch's records after it (some may be there already), all of
    /// it through the compaction function into a new file.
    fn rewrite<R: Record>(&mut self, records: &[R], _shared: &Shared<R>) -> io::Result<()> {
        #[cfg(test)]
        if _shared.lock().fault {
            return Err(io::Error::other("a write failure the test asked for"));
        }
        let mut bytes = self.current()?;
        if !bytes.is_empty() && !bytes.ends_with(b"\n") {
            bytes.push(b'\n');
        }
        for r in records {
            r.encode(&mut bytes);
        }
        let new = (self.compact)(&bytes);
        self.replace(&new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("actiond-writer-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    /// A record that is one line of text.
    struct Text(String);

    impl Record for Text {
        fn encode(&self, out: &mut Vec<u8>) {
            out.extend_from_slice(self.0.as_bytes());
            out.push(b'\n');
        }
    }

    /// Keeps every distinct, complete line once, in order: a compaction that loses nothing.
    fn dedup(bytes: &[u8]) -> Vec<u8> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            if line.starts_with(b"line ") && seen.insert(line.to_vec()) {
                out.extend_from_slice(line);
                out.push(b'\n');
            }
        }
        out
    }

    fn open(
        dir: &std::path::Path,
        initial: &[u8],
        sync: SyncPolicy,
        compact: fn(&[u8]) -> Vec<u8>,
    ) -> (Journal<Text>, mpsc::Receiver<Vec<String>>) {
        let (tx, rx) = mpsc::channel();
        let j = Store::new(Some(dir.to_path_buf()))
            .journal(
                "j.log",
                Options {
                    initial: String::from_utf8_lossy(initial)
                        .lines()
                        .map(|l| Text(l.to_string()))
                        .collect(),
                    sync,
                    compact: Box::new(compact),
                    written: Box::new(move |batch: Vec<Text>| {
                        let _ = tx.send(batch.into_iter().map(|t| t.0).collect());
                    }),
                },
            )
            .unwrap();
        (j, rx)
    }

    fn wait_for(cond: impl Fn() -> bool) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !cond() {
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        true
    }

    fn lines(dir: &std::path::Path) -> Vec<String> {
        String::from_utf8(fs::read(dir.join("j.log")).unwrap())
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn records_come_back_in_order_once_on_disk_in_few_batches() {
        let dir = temp_dir("order");
        let (j, rx) = open(&dir, b"line old\n", SyncPolicy::Always, dedup);
        for i in 0..500 {
            j.append(Text(format!("line {i}")));
        }
        assert!(j.flush(Duration::from_secs(10)));
        let back: Vec<String> = rx.try_iter().flatten().collect();
        let want: Vec<String> = (0..500).map(|i| format!("line {i}")).collect();
        assert_eq!(back, want);
        let mut file = vec!["line old".to_string()];
        file.extend(want);
        assert_eq!(lines(&dir), file);
        let s = j.stats();
        assert_eq!((s.records, s.waiting), (500, 0));
        assert!(s.batches > 0);
        // Group commit: the records queued while a batch was being written share one fsync.
        assert!(s.batches < 500, "{s:?}");
        assert!(s.syncs <= s.batches + 4, "one fsync per batch: {s:?}");
        drop(j);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_record_comes_back_without_a_flush_whether_the_writer_waits_or_works() {
        // The writer is woken for a record only when it waits for work; one that writes,
        // fsyncs or lingers must find the record itself. Nothing here flushes (a flush always
        // wakes it), so a lost wake-up leaves a record queued and the wait below fails. Runs
        // alone (the writer waits between them) and bursts of three (it works while they
        // come), at both sync levels; the interval is long, so its timeout cannot stand in.
        for sync in [
            SyncPolicy::Always,
            SyncPolicy::Every(Duration::from_secs(60)),
        ] {
            let dir = temp_dir("wake");
            let (j, rx) = open(&dir, b"", sync, dedup);
            let mut sent = 0;
            for round in 0..150 {
                let burst = if round % 2 == 0 { 1 } else { 3 };
                for _ in 0..burst {
                    j.append(Text(format!("line {sent}")));
                    sent += 1;
                }
                let mut back = 0;
                while back < burst {
                    let batch = rx
                        .recv_timeout(Duration::from_secs(5))
                        .unwrap_or_else(|_| panic!("{sync:?}: record {sent} never came back"));
                    back += batch.len();
                }
                assert_eq!(back, burst, "{sync:?}");
            }
            drop(j);
            fs::remove_dir_all(&dir).unwrap();
        }
    }

    #[test]
    fn no_append_is_lost_to_a_compaction_that_races_with_it() {
        // Appends from several threads while compactions are asked for as fast as they can
        // be: every record handed back must be in the file at the end, once.
        let dir = temp_dir("race");
        let (j, rx) = open(&dir, b"", SyncPolicy::Always, dedup);
        let j = Arc::new(j);
        let writers: Vec<_> = (0..4)
            .map(|t| {
                let j = Arc::clone(&j);
                std::thread::spawn(move || {
                    for i in 0..300 {
                        j.append(Text(format!("line {t}-{i}")));
                        if i % 7 == 0 {
                            j.compact();
                        }
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        assert!(j.flush(Duration::from_secs(20)));
        let back: std::collections::HashSet<String> = rx.try_iter().flatten().collect();
        assert_eq!(back.len(), 1200);
        let file = lines(&dir);
        let in_file: std::collections::HashSet<String> = file.iter().cloned().collect();
        assert_eq!(file.len(), in_file.len(), "a record is in the file twice");
        assert_eq!(in_file, back);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_batch_lingers_only_when_several_runs_are_going() {
        let ms = Duration::from_millis;
        let took = Duration::from_micros(600);
        // (queued, last batch, sync level, hurry, last fsync took) -> linger
        let cases = [
            ((1, 4, SyncPolicy::Always, false, took), Some(took)),
            ((3, 4, SyncPolicy::Always, false, ms(20)), Some(LINGER_MAX)),
            // A lone client: its batches hold one record.
            ((1, 1, SyncPolicy::Always, false, took), None),
            ((1, 0, SyncPolicy::Always, false, took), None),
            // As many as last time, or more: more may still come, the batch grows with the load.
            ((4, 4, SyncPolicy::Always, false, took), Some(took)),
            ((9, 4, SyncPolicy::Always, false, took), Some(took)),
            ((1, 2, SyncPolicy::Always, false, took), Some(took)),
            // Nothing queued: nothing to write.
            ((0, 4, SyncPolicy::Always, false, took), None),
            // A flush, the last batch or a compaction does not wait.
            ((1, 4, SyncPolicy::Always, true, took), None),
            // Interval levels do not fsync per batch.
            ((1, 4, SyncPolicy::Every(ms(500)), false, took), None),
        ];
        for ((queued, last, sync, hurry, t), want) in cases {
            assert_eq!(
                linger(queued, last, sync, hurry, t),
                want,
                "{queued} queued after {last}, {sync:?}, hurry {hurry}"
            );
        }
    }

    /// The most lines the file held when [`last_three`] was called.
    static MOST_ON_DISK: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// Keeps the last three lines, and notes how long the file on disk was meanwhile.
    fn last_three(bytes: &[u8]) -> Vec<u8> {
        let path = std::env::temp_dir()
            .join(format!("actiond-writer-bound-{}", std::process::id()))
            .join("j.log");
        let on_disk = fs::read(path).unwrap_or_default();
        let n = on_disk.iter().filter(|b| **b == b'\n').count();
        MOST_ON_DISK.fetch_max(n, std::sync::atomic::Ordering::SeqCst);
        let lines: Vec<&[u8]> = bytes.split_inclusive(|b| *b == b'\n').collect();
        lines[lines.len().saturating_sub(3)..].concat()
    }

    #[test]
    fn records_queued_behind_a_compaction_are_compacted_with_it_not_appended_first() {
        // The owner asks for a compaction after every record, as fast as it can: the file
        // may hold the last compaction's three lines and the one record that came before
        // the request, never the whole group commit gathered while an fsync ran.
        let dir = temp_dir("bound");
        let (j, _rx) = open(&dir, b"", SyncPolicy::Always, last_three);
        for i in 0..400 {
            j.append(Text(format!("line {i}")));
            j.compact();
        }
        assert!(j.flush(Duration::from_secs(20)));
        let most = MOST_ON_DISK.load(std::sync::atomic::Ordering::SeqCst);
        assert!(most <= 4, "the file held {most} lines before a compaction");
        assert_eq!(lines(&dir), ["line 397", "line 398", "line 399"]);
        drop(j);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_fsync_hands_nothing_back_and_the_retry_rewrites_the_file() {
        let dir = temp_dir("fail");
        let (j, rx) = open(&dir, b"line 0\n", SyncPolicy::Always, dedup);
        j.fault(true);
        j.append(Text("line 1".into()));
        // While fsyncs fail the record is not handed back, and the journal says why.
        assert!(wait_for(|| j.failing().is_some()));
        assert!(!j.flush(Duration::from_millis(300)));
        assert!(
            rx.try_recv().is_err(),
            "a record came back before it was on disk"
        );
        let why = j.failing().unwrap();
        assert!(why.contains("j.log cannot be written"), "{why}");
        assert_eq!(j.stats().waiting, 1);
        j.fault(false);
        assert!(j.flush(Duration::from_secs(10)));
        assert_eq!(rx.try_recv().unwrap(), ["line 1"]);
        assert_eq!(j.failing(), None);
        assert_eq!(lines(&dir), ["line 0", "line 1"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_torn_line_is_cut_off_by_the_rewrite_not_glued_to_the_next_record() {
        let dir = temp_dir("torn");
        let (j, rx) = open(&dir, b"line 1\n", SyncPolicy::Always, dedup);
        assert!(j.flush(Duration::from_secs(5)));
        // A write cut short by a failure leaves a torn line at the end of the file.
        fs::write(dir.join("j.log"), b"line 1\nline 2\nli").unwrap();
        j.fault(true);
        j.append(Text("line 3".into()));
        assert!(wait_for(|| j.failing().is_some()));
        j.fault(false);
        assert!(j.flush(Duration::from_secs(10)));
        assert_eq!(rx.try_recv().unwrap(), ["line 3"]);
        assert_eq!(lines(&dir), ["line 1", "line 2", "line 3"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_interval_hands_records_back_before_the_fsync_and_flush_forces_it() {
        let dir = temp_dir("interval");
        let (j, rx) = open(
            &dir,
            b"",
            SyncPolicy::Every(Duration::from_secs(3600)),
            dedup,
        );
        assert!(j.flush(Duration::from_secs(5)));
        let syncs = j.stats().syncs;
        assert_eq!(syncs, 2, "the initial content: the file and its directory");
        j.append(Text("line 1".into()));
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(5)).unwrap(),
            ["line 1"],
            "handed back once written"
        );
        assert_eq!(lines(&dir), ["line 1"]);
        assert_eq!(j.stats().syncs, syncs, "written, not fsynced");
        assert!(j.flush(Duration::from_secs(5)));
        assert_eq!(j.stats().syncs, syncs + 1, "the flush fsynced the file");
        j.set_sync(SyncPolicy::Always);
        j.append(Text("line 2".into()));
        rx.recv_timeout(Duration::from_secs(5)).unwrap();
        // The counters are updated just after the batch is handed back.
        assert!(
            wait_for(|| j.stats().syncs == syncs + 2),
            "every batch fsynced again: {:?}",
            j.stats()
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
