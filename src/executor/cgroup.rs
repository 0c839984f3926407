//! Kill containment with a delegated cgroup v2: one child cgroup per execution, so that a
//! process that left the execution's process group (`setsid`, a double fork) is still found
//! and killed.
//!
//! At start-up `mode` decides the mode once. With a delegated cgroup (systemd
//! `Delegate=yes` with `User=`: actiond's own cgroup on the v2 hierarchy is owned by its
//! non-root user and its parent is not; or the directory named by `ACTIOND_CGROUP`), actiond moves itself into `supervisor/`
//! below it (the kernel allows processes only in leaves once controllers are enabled) and
//! each execution gets a `run-<n>/` beside it, reused once empty. The execution's process
//! enters that cgroup through its `cgroup.procs`, kept open here (`Run`), as the first thing
//! it does after `clone` (see `executor::spawn`), before its program runs, so every
//! descendant is born inside. The kill ladder ends it with `cgroup.kill`, or on kernels before
//! 5.14 by freezing it, killing every member and thawing it.
//!
//! Where a move through `cgroup.procs` would wait for the kernel (Linux 6.0 and later with
//! cgroup v2 mounted without `favordynmods`: the first move after a pause waits an RCU grace
//! period, 10 to 30 ms, see `Layout`), `supervisor/` and each `run-<n>/` are made *threaded*
//! cgroups instead, and the process enters through `cgroup.threads`: a process's only thread
//! moving itself takes no global lock. Everything it starts is still born inside, and the
//! kill is freeze, kill, thaw (the kernel refuses `cgroup.kill` in a threaded cgroup).
//!
//! Without a delegated cgroup (run by hand, cgroup v1, no write access,
//! `ACTIOND_CGROUP=off`) the mode is `Group`, and the ladder attributes escaped descendants
//! by their environment instead (`descendants`).
//!
//! This module owns the cgroup files; it neither spawns nor waits.

use std::fs::File;
use std::io::ErrorKind;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use tracing::{info, warn};

/// How actiond contains executions, decided once at start-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Executions run in child cgroups of this delegated directory.
    Cgroup(PathBuf),
    /// The process group plus the descendants attributed by their environment, and why
    /// there is no delegated cgroup.
    Group(NoCgroup),
}

/// Why executions are not contained in cgroups of their own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoCgroup {
    /// `ACTIOND_CGROUP=off`.
    Off,
    /// `ACTIOND_CGROUP` names a directory that is no cgroup v2 directory.
    NotCgroupDir(PathBuf),
    /// A file of /proc or of the hierarchy could not be read: the path, and the system's
    /// own words for why.
    Unreadable {
        path: String,
        error: String,
    },
    NoHierarchy,
    NotInHierarchy,
    InRoot,
    /// actiond's cgroup is not delegated to its user.
    NotDelegated(PathBuf),
    /// actiond could not move itself into the `supervisor` cgroup below the directory: the
    /// system's own words for why.
    CannotEnter {
        dir: PathBuf,
        error: String,
    },
}

impl NoCgroup {
    fn unreadable(path: impl std::fmt::Display, error: std::io::Error) -> NoCgroup {
        NoCgroup::Unreadable {
            path: path.to_string(),
            error: error.to_string(),
        }
    }
}

impl std::fmt::Display for NoCgroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoCgroup::Off => write!(f, "{ENV}=off"),
            NoCgroup::NotCgroupDir(dir) => {
                write!(f, "{ENV}={}: not a cgroup v2 directory", dir.display())
            }
            NoCgroup::Unreadable { path, error } => write!(f, "{path}: {error}"),
            NoCgroup::NoHierarchy => f.write_str("no cgroup v2 hierarchy is mounted"),
            NoCgroup::NotInHierarchy => f.write_str("not in a cgroup v2 hierarchy"),
            NoCgroup::InRoot => f.write_str("actiond runs in the root cgroup"),
            NoCgroup::NotDelegated(dir) => write!(
                f,
                "{} is not delegated to actiond's user (systemd Delegate=yes with User=; \
                 as root set {ENV}=own)",
                dir.display()
            ),
            NoCgroup::CannotEnter { dir, error } => write!(
                f,
                "could not move into {}/supervisor: {error}",
                dir.display()
            ),
        }
    }
}

impl std::error::Error for NoCgroup {}

static MODE: OnceLock<Mode> = OnceLock::new();

/// How the cgroups below the delegated directory are made, decided with the mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// Domain cgroups (the default): a process enters by writing to `cgroup.procs`, and
    /// `cgroup.kill` ends a run. On Linux 6.0 and later, unless cgroup v2 is mounted with
    /// `favordynmods`, that write takes the kernel's `cgroup_threadgroup_rwsem` for writing,
    /// whose first writer after a pause waits one RCU grace period (10 to 30 ms: measured
    /// 8.6 to 15.7 ms median on the bench's VM, Linux 6.18, docs/PERFORMANCE.md).
    Domain,
    /// Threaded cgroups (`supervisor/` and each `run-<n>/`, the directory their threaded
    /// domain): a process whose only thread writes `0` to `cgroup.threads` moves without
    /// that lock, so no press waits. `cgroup.kill` is refused there (EINVAL), so a run is
    /// ended by freeze, kill, thaw; `cgroup.procs` cannot be read there, so the members
    /// are read from `cgroup.threads`.
    Threaded,
}

static LAYOUT: OnceLock<Layout> = OnceLock::new();

fn layout() -> Layout {
    LAYOUT.get().copied().unwrap_or(Layout::Domain)
}

/// The execution cgroups not in use. Creating and removing a cgroup costs the kernel about
/// 50 µs of CPU, a quarter of actiond's own time per execution, so an empty one is kept for
/// the next execution instead: their number is the most executions that ever ran at once.
static POOL: Mutex<Pool> = Mutex::new(Pool {
    free: Vec::new(),
    lingering: Vec::new(),
    next: 0,
});

struct Pool {
    /// Empty, ready for the next execution.
    free: Vec<Run>,
    /// Of finished executions, still holding processes (a daemon started with `&`, which the
    /// 250 ms rule leaves running): free again once empty.
    lingering: Vec<Run>,
    /// The number in the next new cgroup's name (`run-<n>`).
    next: u64,
}

/// At most this many cgroups are kept (free or lingering); beyond, an empty one is removed
/// and a lingering one is left to systemd, which removes the whole tree when the service
/// stops.
const MAX_KEPT: usize = 1024;

/// The environment variable that overrides detection: `off`, `own` (use actiond's own
/// cgroup even as root, where ownership cannot tell delegation), or a directory.
pub const ENV: &str = "ACTIOND_CGROUP";

/// The mode, deciding it on first use. `Reaper::start` calls it at start-up, so the log says
/// which guarantee holds before the first execution.
pub fn mode() -> &'static Mode {
    MODE.get_or_init(|| {
        let mode = match detect() {
            Ok(dir) => match enter(&dir) {
                Ok(()) => Mode::Cgroup(dir),
                Err(e) => Mode::Group(NoCgroup::CannotEnter {
                    dir,
                    error: e.to_string(),
                }),
            },
            Err(why) => Mode::Group(why),
        };
        match &mode {
            Mode::Cgroup(dir) => {
                let (entry, kill) = match layout() {
                    Layout::Threaded => ("cgroup.threads, threaded", "freeze, kill, thaw"),
                    Layout::Domain if dir.join("cgroup.kill").exists() => {
                        ("cgroup.procs", "cgroup.kill")
                    }
                    Layout::Domain => ("cgroup.procs", "freeze, kill, thaw"),
                };
                info!(
                    "kill containment: each execution in its own cgroup below {}, which its \
                     process enters between clone and execve, with no wrapper shell ({entry}; \
                     {kill})",
                    dir.display(),
                );
                if layout() == Layout::Domain && waits_for_grace_period() {
                    info!(
                        "cgroup v2 is mounted without favordynmods and the execution cgroups \
                         could not be made threaded: on Linux 6.0 and later a press after a \
                         pause waits one RCU grace period (10 to 30 ms) while its process \
                         enters its cgroup; the kernel parameter cgroup_favordynmods=true \
                         (Linux 6.7) or a remount with favordynmods removes the wait"
                    );
                }
            }
            Mode::Group(why) => info!(
                "kill containment: process group and descendants carrying the execution's \
                 ACTIOND_TRACKING_ID (no delegated cgroup: {why})"
            ),
        }
        mode
    })
}

/// The delegated directory, or why there is none.
fn detect() -> Result<PathBuf, NoCgroup> {
    let setting = std::env::var(ENV).unwrap_or_default();
    match setting.as_str() {
        "off" => return Err(NoCgroup::Off),
        "" | "own" => {}
        dir => {
            let dir = PathBuf::from(dir);
            if !dir.join("cgroup.procs").is_file() {
                return Err(NoCgroup::NotCgroupDir(dir));
            }
            return Ok(dir);
        }
    }
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| NoCgroup::unreadable(p, e));
    let mount = cgroup2_mount(&read("/proc/self/mountinfo")?).ok_or(NoCgroup::NoHierarchy)?;
    let cgroups = read("/proc/self/cgroup")?;
    let own = own_cgroup(&cgroups).ok_or(NoCgroup::NotInHierarchy)?;
    if own == "/" {
        return Err(NoCgroup::InRoot);
    }
    let dir = mount.join(own.trim_start_matches('/'));
    let owner = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.uid())
            .map_err(|e| NoCgroup::unreadable(p.display(), e))
    };
    let me = owner(Path::new("/proc/self"))?;
    // The mark of a delegation by systemd (`Delegate=yes` with `User=`): this cgroup is the
    // user's and its parent is not. Deeper inside a subtree that is the user's anyway (a
    // desktop session's scope) nothing was handed to actiond, so it stays out.
    let parent = dir.parent().map_or(Ok(u32::MAX), owner)?;
    let delegated = me != 0 && owner(&dir)? == me && parent != me;
    if setting != "own" && !delegated {
        return Err(NoCgroup::NotDelegated(dir));
    }
    Ok(dir)
}

/// The mount point of the cgroup v2 hierarchy, from `/proc/self/mountinfo`.
pub(crate) fn cgroup2_mount(mountinfo: &str) -> Option<PathBuf> {
    let (left, _) = cgroup2_line(mountinfo)?;
    left.split(' ').nth(4).map(|m| PathBuf::from(unescape(m)))
}

/// Whether the cgroup v2 hierarchy is mounted with `favordynmods` (its super options, the
/// last field of its `/proc/self/mountinfo` line). Without it, Linux 6.0 and later make the
/// first move into a cgroup after a pause (no move in the last few milliseconds) wait for
/// an RCU grace period, 10 to 30 ms: the kernel's lock for moves leaves its fast mode
/// only through one. A thread that moves itself through `cgroup.threads` takes no such lock
/// (`Layout::Threaded`), nor would `clone3` with `CLONE_INTO_CGROUP`, which the shipped
/// unit's seccomp filter refuses (see `executor::spawn`).
pub(crate) fn favors_dynmods(mountinfo: &str) -> bool {
    cgroup2_line(mountinfo).is_some_and(|(_, right)| {
        let options = right.split(' ').nth(2).unwrap_or("");
        options.split(',').any(|o| o == "favordynmods")
    })
}

/// The cgroup v2 line of a mountinfo, split around its ` - ` (mount fields, then the file
/// system type, the source and the super options).
fn cgroup2_line(mountinfo: &str) -> Option<(&str, &str)> {
    mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        (right.split(' ').next()? == "cgroup2").then_some((left, right))
    })
}

/// mountinfo writes space, tab, newline and backslash in paths as octal escapes.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let code = rest
            .get(i + 1..i + 4)
            .and_then(|o| u8::from_str_radix(o, 8).ok());
        match code {
            Some(c) => {
                out.push(char::from(c));
                rest = &rest[i + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The process's cgroup on the v2 hierarchy (the `0::` line of `/proc/self/cgroup`).
pub(crate) fn own_cgroup(cgroup: &str) -> Option<&str> {
    cgroup.lines().find_map(|l| l.strip_prefix("0::"))
}

/// Whether a move through `cgroup.procs` waits for an RCU grace period after a pause:
/// Linux 6.0 and later, unless cgroup v2 is mounted with `favordynmods` (before 6.0 the
/// kernel kept its lock in the mode that does not wait).
fn waits_for_grace_period() -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let major = release
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|m| m.parse::<u32>().ok());
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    major.is_some_and(|m| m >= 6) && !favors_dynmods(&mountinfo)
}

/// Moves actiond into `dir/supervisor`, so that `dir` is an inner node and executions can
/// be its leaves; decides the `Layout` first. Threaded where a move would wait and the
/// kernel lets `supervisor/` become threaded (an empty cgroup, below a directory with no
/// domain controller enabled for its children and no domain child holding processes);
/// then actiond, when it has one thread and starts inside `dir` (as under its unit), moves
/// that thread alone, without the wait, else it moves as a whole.
fn enter(dir: &Path) -> std::io::Result<()> {
    let supervisor = dir.join("supervisor");
    match std::fs::create_dir(&supervisor) {
        Err(e) if e.kind() != ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    let threaded = waits_for_grace_period()
        && std::fs::write(supervisor.join("cgroup.type"), "threaded").is_ok();
    let layout = if threaded {
        Layout::Threaded
    } else {
        Layout::Domain
    };
    let _ = LAYOUT.set(layout);
    let one_thread = std::fs::read_dir("/proc/self/task").is_ok_and(|t| t.count() == 1);
    if threaded && one_thread && std::fs::write(supervisor.join("cgroup.threads"), "0").is_ok() {
        return Ok(());
    }
    std::fs::write(
        supervisor.join("cgroup.procs"),
        std::process::id().to_string(),
    )
}

/// One execution's cgroup, with the two files each run uses kept open (an open and a close
/// fewer per file and run): `cgroup.procs` (`cgroup.threads` in the threaded layout), which
/// the execution's process writes to enter it, and `cgroup.events`, read to see whether it
/// is empty.
#[derive(Debug)]
pub struct Run {
    pub path: PathBuf,
    procs: File,
    events: File,
}

impl Run {
    fn open(path: PathBuf, layout: Layout) -> std::io::Result<Run> {
        let entry = match layout {
            Layout::Domain => "cgroup.procs",
            Layout::Threaded => "cgroup.threads",
        };
        let procs = File::options().write(true).open(path.join(entry))?;
        let events = File::open(path.join("cgroup.events"))?;
        Ok(Run {
            path,
            procs,
            events,
        })
    }

    /// The open `cgroup.procs` (or `cgroup.threads`), for `spawn`: the child writes `0`.
    pub fn procs(&self) -> BorrowedFd<'_> {
        self.procs.as_fd()
    }

    /// `populated`, read through the open `cgroup.events` (kernfs makes the text afresh for
    /// a read from offset 0).
    fn populated(&self) -> bool {
        let mut buf = [0u8; 64];
        match self.events.read_at(&mut buf, 0) {
            Ok(n) => events_say_populated(&buf[..n]),
            Err(_) => populated(&self.path),
        }
    }
}

/// A cgroup for one execution (an empty one from the pool, or a new one), or `None` in
/// group mode. A cgroup that cannot be created (the kernel's `cgroup.max.descendants`)
/// leaves that execution with the group-mode guarantee, and the log says so.
pub fn create() -> Option<Run> {
    let Mode::Cgroup(dir) = mode() else {
        return None;
    };
    let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
    if !pool.lingering.is_empty() {
        let (emptied, still): (Vec<Run>, Vec<Run>) =
            pool.lingering.drain(..).partition(|r| !r.populated());
        pool.lingering = still;
        pool.free.extend(emptied);
    }
    if let Some(run) = pool.free.pop() {
        return Some(run);
    }
    let path = dir.join(format!("run-{}", pool.next));
    pool.next += 1;
    drop(pool);
    let layout = layout();
    let made = std::fs::create_dir(&path).and_then(|()| {
        let typed = match layout {
            Layout::Domain => Ok(()),
            Layout::Threaded => std::fs::write(path.join("cgroup.type"), "threaded"),
        };
        typed
            .and_then(|()| Run::open(path.clone(), layout))
            .inspect_err(|_| {
                let _ = std::fs::remove_dir(&path);
            })
    });
    match made {
        Ok(run) => Some(run),
        Err(e) => {
            warn!(
                "could not create the cgroup {}: {e}; this execution is contained by its \
                 process group only",
                path.display()
            );
            None
        }
    }
}

/// The pids in `path` and every cgroup below it; in a threaded cgroup, whose `cgroup.procs`
/// cannot be read, the ids of its threads (`kill` with a thread's id signals its process).
pub fn members(path: &Path) -> Vec<i32> {
    let mut pids = Vec::new();
    let mut dirs = vec![path.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let text = std::fs::read_to_string(dir.join("cgroup.procs"))
            .or_else(|_| std::fs::read_to_string(dir.join("cgroup.threads")));
        if let Ok(text) = text {
            pids.extend(text.lines().filter_map(|l| l.trim().parse::<i32>().ok()));
        }
        dirs.extend(children(&dir));
    }
    pids
}

fn children(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether any process is left in `path` or below (`populated` in `cgroup.events`).
pub fn populated(path: &Path) -> bool {
    use std::io::Read;
    // Read into a small buffer: this runs once per execution, and `read_to_string` would add a
    // `statx` and an allocation. The file is `populated N\nfrozen N\n`.
    let mut buf = [0u8; 64];
    match std::fs::File::open(path.join("cgroup.events")).and_then(|mut f| f.read(&mut buf)) {
        Ok(n) => events_say_populated(&buf[..n]),
        // A cgroup that is gone holds nothing.
        Err(_) => false,
    }
}

/// Whether the text of a `cgroup.events` (`populated N\nfrozen N\n`) says `populated 1`.
fn events_say_populated(text: &[u8]) -> bool {
    text.split(|&b| b == b'\n').any(|l| l == b"populated 1")
}

/// SIGKILL to everything in `path` and below, with no window for a fork to escape:
/// `cgroup.kill` where the kernel has it (5.14) and the cgroup is not threaded, else
/// freeze, kill every member, thaw (a frozen process cannot fork, and SIGKILL reaches it
/// frozen).
pub async fn kill_all(path: &Path) {
    let kill_file = path.join("cgroup.kill");
    if layout() == Layout::Domain && kill_file.exists() && std::fs::write(&kill_file, "1").is_ok() {
        return;
    }
    freeze_kill_thaw(path).await;
}

/// The way to kill a whole cgroup before Linux 5.14.
async fn freeze_kill_thaw(path: &Path) {
    let freeze = path.join("cgroup.freeze");
    let frozen = std::fs::write(&freeze, "1").is_ok();
    if frozen {
        let end = Instant::now() + Duration::from_millis(500);
        while Instant::now() < end && !is_frozen(path) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    for pid in members(path) {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
    if frozen {
        let _ = std::fs::write(&freeze, "0");
    }
}

fn is_frozen(path: &Path) -> bool {
    std::fs::read_to_string(path.join("cgroup.events"))
        .is_ok_and(|events| events.lines().any(|l| l == "frozen 1"))
}

/// Gives an execution's cgroup back: to the pool when it is empty, else to the lingering
/// list (a backgrounded daemon still runs in it), until it empties.
pub fn release(run: Run) {
    let empty = !run.populated();
    let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
    let kept = pool.free.len() + pool.lingering.len();
    match (empty, kept < MAX_KEPT) {
        (true, true) => pool.free.push(run),
        (false, true) => pool.lingering.push(run),
        (true, false) => {
            drop(pool);
            let Run { path, .. } = run;
            remove(&path);
        }
        (false, false) => {}
    }
}

/// Removes `path` and the cgroups below it, deepest first; true when it is gone. The common
/// case (an empty cgroup with no children) is one `rmdir`.
fn remove(path: &Path) -> bool {
    match std::fs::remove_dir(path) {
        Ok(()) => return true,
        Err(e) if e.kind() == ErrorKind::NotFound => return true,
        Err(_) => {}
    }
    // Busy: processes are left, or the execution made cgroups of its own below.
    if populated(path) {
        return false;
    }
    for child in children(path) {
        remove(&child);
    }
    std::fs::remove_dir(path).is_ok() || !path.exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Why there is no cgroup, word for word as the start-up line says it.
    #[test]
    fn reasons_word_for_word() {
        let cases = [
            (NoCgroup::Off, "ACTIOND_CGROUP=off"),
            (
                NoCgroup::NotCgroupDir("/x".into()),
                "ACTIOND_CGROUP=/x: not a cgroup v2 directory",
            ),
            (
                NoCgroup::unreadable("/p", std::io::Error::from_raw_os_error(2)),
                "/p: No such file or directory (os error 2)",
            ),
            (NoCgroup::NoHierarchy, "no cgroup v2 hierarchy is mounted"),
            (NoCgroup::NotInHierarchy, "not in a cgroup v2 hierarchy"),
            (NoCgroup::InRoot, "actiond runs in the root cgroup"),
            (
                NoCgroup::NotDelegated("/sys/fs/cgroup/a".into()),
                "/sys/fs/cgroup/a is not delegated to actiond's user (systemd Delegate=yes \
                 with User=; as root set ACTIOND_CGROUP=own)",
            ),
            (
                NoCgroup::CannotEnter {
                    dir: "/c".into(),
                    error: "denied".into(),
                },
                "could not move into /c/supervisor: denied",
            ),
        ];
        for (why, words) in cases {
            assert_eq!(why.to_string(), words);
        }
    }

    #[test]
    fn the_v2_mount_and_the_own_cgroup_are_read_from_proc() {
        let hybrid = "22 21 0:19 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n\
                      23 22 0:20 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw\n\
                      24 22 0:21 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
        assert_eq!(
            cgroup2_mount(hybrid),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        let unified = "30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n";
        assert_eq!(
            cgroup2_mount(unified),
            Some(PathBuf::from("/sys/fs/cgroup"))
        );
        let escaped = "30 1 0:26 / /mnt/c\\040g rw - cgroup2 cgroup2 rw\n";
        assert_eq!(cgroup2_mount(escaped), Some(PathBuf::from("/mnt/c g")));
        assert_eq!(
            cgroup2_mount("24 22 0:21 / /x rw - cgroup cgroup rw\n"),
            None
        );

        assert!(!favors_dynmods(unified));
        let favoring =
            "30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate,favordynmods\n";
        assert!(favors_dynmods(favoring));
        // The option of another file system, or a mount option that only looks like it.
        assert!(!favors_dynmods(&format!(
            "{}{}",
            "24 22 0:21 / /x rw - cgroup cgroup rw,favordynmods\n", unified
        )));
        assert!(!favors_dynmods(
            "30 1 0:26 / /favordynmods rw,favordynmods - cgroup2 cgroup2 rw\n"
        ));

        let v2 = "0::/system.slice/actiond.service\n";
        assert_eq!(own_cgroup(v2), Some("/system.slice/actiond.service"));
        let hybrid = "12:memory:/system.slice/actiond.service\n1:name=systemd:/x\n0::/x\n";
        assert_eq!(own_cgroup(hybrid), Some("/x"));
        assert_eq!(own_cgroup("4:memory:/\n1:name=systemd:/\n"), None);
    }

    /// A process spawned with a `Run`'s `cgroup.procs` is in that cgroup when its program
    /// runs, and the `Run`'s open `cgroup.events` follows it: populated while it lives, empty
    /// once it is gone (read again from offset 0 each time).
    #[test]
    #[ignore = "needs a writable cgroup v2 hierarchy (root): scripts/test.sh runs it"]
    fn a_spawned_process_is_in_its_run_and_the_open_events_follow_it() {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let mount = cgroup2_mount(&mountinfo).expect("a cgroup v2 hierarchy");
        let dir = mount.join(format!("actiond-unit-run-{}", std::process::id()));
        std::fs::create_dir(&dir).expect("a writable cgroup v2 hierarchy");
        let run = Run::open(dir.clone(), Layout::Domain).unwrap();
        assert!(!run.populated());
        let child = super::super::spawn::spawn(
            "sleep",
            &["30".to_string()],
            &[],
            Path::new("/"),
            Some(run.procs()),
            None,
        )
        .unwrap();
        let own = std::fs::read_to_string(format!("/proc/{}/cgroup", child.pid)).unwrap();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        assert!(own.contains(&format!("::/{name}")), "{own}");
        assert!(run.populated());
        assert_eq!(members(&dir), [child.pid]);
        let _ = kill(Pid::from_raw(child.pid), Signal::SIGKILL);
        let _ = nix::sys::wait::waitpid(Pid::from_raw(child.pid), None);
        let end = Instant::now() + Duration::from_secs(10);
        while run.populated() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!run.populated());
        drop(run);
        assert!(remove(&dir));
    }

    /// The path for kernels without `cgroup.kill`, on a real cgroup: a `setsid` child and
    /// its shell, both inside, are gone after it.
    #[tokio::test]
    #[ignore = "needs a writable cgroup v2 hierarchy (root): scripts/test.sh runs it"]
    async fn freeze_kill_thaw_ends_every_member() {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let mount = cgroup2_mount(&mountinfo).expect("a cgroup v2 hierarchy");
        let dir = mount.join(format!("actiond-unit-{}", std::process::id()));
        std::fs::create_dir(&dir).expect("a writable cgroup v2 hierarchy");
        let procs = dir.join("cgroup.procs");
        let script = format!("echo $$ >{}; setsid sleep 300 & sleep 300", procs.display());
        let mut child = std::process::Command::new("/bin/sh")
            .args(["-c", &script])
            .spawn()
            .unwrap();
        let end = Instant::now() + Duration::from_secs(10);
        while members(&dir).len() < 3 && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(members(&dir).len(), 3, "{:?}", members(&dir));
        freeze_kill_thaw(&dir).await;
        let _ = child.wait();
        while populated(&dir) && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!populated(&dir), "left: {:?}", members(&dir));
        assert!(remove(&dir));
    }
}
