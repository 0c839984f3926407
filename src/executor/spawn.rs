//! The one call that starts a process, and the only `unsafe` of the executor: `clone` with
//! `CLONE_VM | CLONE_VFORK` (what the C library's `posix_spawn` does inside), then a short
//! child path of ours, then `execve`. The process leads a new process group, reads
//! /dev/null, writes into two new pipes, holds no other descriptor (none that actiond
//! inherited without close-on-exec either), runs with no_new_privs (a setuid program gives it
//! nothing), in a given directory with an empty signal mask, SIGPIPE at its default and no
//! handler of ours left, and, in cgroup mode, sits in its
//! execution's cgroup before its program runs its first instruction.
//!
//! Why not `posix_spawn` (which this module called until cgroup mode needed more): entering
//! the cgroup had to be done by a wrapper shell (`sh -c 'echo $$ >…/cgroup.procs; exec "$@"'`),
//! a whole shell start before every `exec:` command, 2.2 times the CPU of a press without
//! cgroups. The kernel's own way to start a child in a cgroup, `clone3` with
//! `CLONE_INTO_CGROUP`, is refused under the shipped unit: systemd answers every `clone3`
//! with ENOSYS where `RestrictNamespaces=` is set, because a seccomp filter cannot read its
//! flags. So the child writes `0` (itself) into the `cgroup.procs` the parent opened (or the
//! `cgroup.threads` of a threaded run cgroup, where that move waits for no RCU grace period:
//! `executor::cgroup`), as its first act: nothing of the command has run yet, so everything
//! it starts is born inside.
//! `clone` is in both C libraries (glibc and musl) and needs no assembly.
//!
//! When actions run as another user (`runActionsAs`), the child takes that user's groups
//! and ids right after entering the cgroup (which needs actiond's own), and every command
//! that does not run as root starts with no capability at all, whatever actiond holds
//! (`become_user`).
//!
//! The child path (`child`) runs on a stack in the parent's frame, sharing the parent's
//! memory while the parent's thread waits for it (vfork semantics), so it is held to what
//! the C library's own `posix_spawn` child does: system calls only, async-signal-safe, no
//! allocation, no lock, no panic, everything it reads prepared before the clone and nothing
//! it writes read by the parent except its error number. A child that fails leaves that
//! number and `_exit(127)`s (the reaper reaps it), and the spawn returns the error.
//!
//! The child must leave no handler of ours in place (it shares our memory until `execve`).
//! Which signals have one is asked of the kernel in the parent once, and again only after a
//! handler was installed: every handler actiond installs goes through `signal`
//! (`installing` counts them), and the child resets just those unless the count moved since,
//! when it asks every signal itself as the C library's `posix_spawn` does (about 60 system
//! calls more while the parent waits).
//!
//! Beside the child path, the service's environment is turned into C strings once (std's
//! `Command` rebuilt the whole environment on every spawn: 70 000 of the 96 000 instructions
//! actiond spent per spawn, docs/PERFORMANCE.md), and each spawn only adds the few variables
//! of its plan. This module must not wait for, signal or supervise a process (the reaper
//! and the supervising task do). It also holds the executor's one other `unsafe` call,
//! handing the reaper's SIGCHLD signalfd to the event loop (`register_signalfd`).

use std::ffi::{CStr, CString, OsStr};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

/// Variables of the service's environment a command must not inherit: they address
/// actiond, and a command that speaks sd_notify itself (a daemon started by an action,
/// `systemd-notify`) would otherwise report readiness or watchdog pings for it.
const WITHHELD: [&str; 3] = ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"];

/// A started process: its pid (also its process group) and the read ends of its pipes,
/// non-blocking.
pub struct Child {
    pub pid: i32,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
}

/// The service's environment as `KEY=value` C strings, minus `WITHHELD`, read on first use.
/// actiond never calls `setenv`, so it does not change after start.
fn inherited() -> &'static [(Vec<u8>, CString)] {
    static ENV: OnceLock<Vec<(Vec<u8>, CString)>> = OnceLock::new();
    ENV.get_or_init(|| {
        std::env::vars_os()
            .filter(|(k, _)| !WITHHELD.iter().any(|w| k == OsStr::new(w)))
            .filter_map(|(k, v)| {
                let mut kv = k.as_bytes().to_vec();
                kv.push(b'=');
                kv.extend_from_slice(v.as_bytes());
                Some((k.as_bytes().to_vec(), CString::new(kv).ok()?))
            })
            .collect()
    })
}

fn nul_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "nul byte found in provided data",
    )
}

fn c_string(s: &[u8]) -> io::Result<CString> {
    CString::new(s).map_err(|_| nul_error())
}

/// The environment of one command: the service's, with `extra` added; a variable of
/// `extra` replaces the service's of the same name, and of two in `extra` the later wins.
fn environment(extra: &[(String, String)]) -> io::Result<Vec<CString>> {
    let mut own: Vec<CString> = Vec::with_capacity(extra.len());
    for (i, (k, v)) in extra.iter().enumerate() {
        if extra[i + 1..].iter().any(|(later, _)| later == k) {
            continue;
        }
        let mut kv = Vec::with_capacity(k.len() + 1 + v.len());
        kv.extend_from_slice(k.as_bytes());
        kv.push(b'=');
        kv.extend_from_slice(v.as_bytes());
        own.push(c_string(&kv)?);
    }
    Ok(own)
}

/// Where `program` is: itself when it names a path, else the first executable file of that
/// name on `search` (the command's PATH, or the service's, or the C library's default), as
/// `execvp` would find it.
pub fn resolve(program: &str, search: Option<&OsStr>) -> io::Result<String> {
    use std::os::unix::fs::PermissionsExt;
    if program.contains('/') {
        return Ok(program.to_string());
    }
    let service = std::env::var_os("PATH");
    let path = search
        .or(service.as_deref())
        .unwrap_or(OsStr::new("/usr/local/bin:/usr/bin:/bin"));
    for dir in std::env::split_paths(path) {
        let candidate = dir.join(program);
        if std::fs::metadata(&candidate)
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        {
            return Ok(candidate.to_string_lossy().into_owned());
        }
    }
    Err(io::Error::from(nix::errno::Errno::ENOENT))
}

/// The user a command runs as, when not actiond's own: its uid, primary group and
/// supplementary groups.
#[derive(Debug, Clone, Copy)]
pub struct Credentials<'a> {
    pub uid: u32,
    pub gid: u32,
    pub groups: &'a [u32],
}

/// Starts `program` (found as `resolve` finds it, with the PATH of `env` when it sets one)
/// with `args` after `program` itself as argv[0], the service's environment plus `env`, in
/// `cwd`; with `cgroup` (an open `cgroup.procs`, or `cgroup.threads` of a threaded cgroup:
/// the child writes `0`, which moves it, a process of one thread, either way), inside that
/// cgroup; with `user`, as that user.
pub fn spawn(
    program: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
    cgroup: Option<BorrowedFd<'_>>,
    user: Option<Credentials<'_>>,
) -> io::Result<Child> {
    let search = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| OsStr::new(v.as_str()));
    let path = c_string(resolve(program, search)?.as_bytes())?;
    let mut argv = Vec::with_capacity(args.len() + 1);
    argv.push(c_string(program.as_bytes())?);
    for a in args {
        argv.push(c_string(a.as_bytes())?);
    }
    let own = environment(env)?;
    let overridden = |key: &[u8]| env.iter().any(|(k, _)| k.as_bytes() == key);
    let envp: Vec<&CStr> = inherited()
        .iter()
        .filter(|(k, _)| !overridden(k))
        .map(|(_, kv)| kv.as_c_str())
        .chain(own.iter().map(CString::as_c_str))
        .collect();
    let cwd_path = cwd;
    let cwd = c_string(cwd.as_os_str().as_bytes())?;
    let (out_r, out_w) = io::pipe()?;
    let (err_r, err_w) = io::pipe()?;
    // Before the spawn, so that a failure here leaves no process behind unsupervised.
    non_blocking(&out_r)?;
    non_blocking(&err_r)?;
    let argv_p = null_terminated(argv.iter().map(CString::as_c_str));
    let envp_p = null_terminated(envp.iter().copied());
    let plan = ChildPlan {
        path: path.as_ptr(),
        argv: argv_p.as_ptr(),
        envp: envp_p.as_ptr(),
        cwd: cwd.as_ptr(),
        null: dev_null()?,
        stdout: out_w.as_raw_fd(),
        stderr: err_w.as_raw_fd(),
        caught: caught(),
        cgroup: cgroup.map_or(-1, |fd| fd.as_raw_fd()),
        ids: user.map(|u| Ids {
            uid: u.uid,
            gid: u.gid,
            groups: u.groups.as_ptr(),
            count: u.groups.len(),
        }),
        // Root's commands keep what root has: its execve gives them their capabilities anew.
        drop_caps: user.map_or_else(|| !runs_as_root(), |u| u.uid != 0),
        error: AtomicI32::new(0),
        in_cgroup: AtomicBool::new(false),
        in_cwd: AtomicBool::new(false),
    };
    let pid = clone_vfork(&plan)?;
    // The write ends now belong to the child; ours close here, so the reads see the end of
    // file when the command and everything it started are done writing.
    drop(out_w);
    drop(err_w);
    // Once `clone_vfork` returned, the child has called execve or exited: its error, if any,
    // is written. A kernel's vfork completion orders that write before our read.
    let error = plan.error.load(Ordering::Relaxed);
    if error != 0 {
        // It has exited with 127; the reaper reaps it as a status nobody waits for.
        let error = io::Error::from_raw_os_error(error);
        if plan.in_cgroup.load(Ordering::Relaxed) {
            return Err(io::Error::new(
                error.kind(),
                format!("could not enter the execution's cgroup: {error}"),
            ));
        }
        if plan.in_cwd.load(Ordering::Relaxed) {
            let dir = cwd_path.to_path_buf();
            return Err(io::Error::new(
                error.kind(),
                NoWorkingDirectory { dir, error },
            ));
        }
        return Err(error);
    }
    Ok(Child {
        pid,
        stdout: out_r.into(),
        stderr: err_r.into(),
    })
}

/// Whether actiond runs as root, asked once: it never changes its own ids (only a child
/// does, between `clone` and `execve`), so asking the kernel on every spawn was a system
/// call per press for an answer known since the start.
fn runs_as_root() -> bool {
    static ROOT: OnceLock<bool> = OnceLock::new();
    *ROOT.get_or_init(|| nix::unistd::geteuid().is_root())
}

/// The soft limit of open files (a descriptor is always below it), at most `c_int::MAX`;
/// 1024, Linux's default, if it cannot be read. Called by the child, only where
/// `close_range` is missing: it is async-signal-safe, and the parent no longer asks for it
/// on every spawn (a system call per press) to serve old kernels alone.
fn open_files() -> libc::c_int {
    // nix's wrapper is the bare system call on a value on the stack: no allocation, no lock.
    nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map_or(1024, |(soft, _)| {
            libc::c_int::try_from(soft).unwrap_or(libc::c_int::MAX)
        })
}

/// actiond's own /dev/null, opened once (close-on-exec) and kept open: every command's
/// stdin is a copy of it. The child opened and closed it on every spawn, two system calls
/// (and a path lookup) while the spawning thread waited. The commands share its open file
/// description, which carries nothing a command could change for another: /dev/null reads
/// as empty whatever its flags.
fn dev_null() -> io::Result<RawFd> {
    static NULL: OnceLock<OwnedFd> = OnceLock::new();
    if let Some(fd) = NULL.get() {
        return Ok(fd.as_raw_fd());
    }
    let file = std::fs::File::open("/dev/null")?;
    Ok(NULL.get_or_init(|| file.into()).as_raw_fd())
}

/// Pointers to `items`, then a null pointer, as `execve` reads its argv and envp.
fn null_terminated<'a>(items: impl Iterator<Item = &'a CStr>) -> Vec<*const libc::c_char> {
    items
        .map(CStr::as_ptr)
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// Makes our read end of a pipe non-blocking, as the reactor needs it. Only the read end:
/// the write end is the command's stdout or stderr, which it expects to block when full.
/// Done here, where the pipe is made and its flags are known, the reactor can take the
/// descriptor as it is; asked to check it, tokio spends an `fstat` and two `fcntl` per pipe
/// (four system calls per run of the ~40 the service makes).
#[allow(unsafe_code)]
fn non_blocking(fd: &impl AsRawFd) -> io::Result<()> {
    // SAFETY: `fd` is an open descriptor we own (borrowed for the call); F_SETFL only
    // changes its status flags. A pipe's read end has no other status flag worth keeping
    // (its access mode is not changed by F_SETFL, and close-on-exec is a descriptor flag).
    let rc = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    if rc == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The reaper's SIGCHLD signalfd, registered with the event loop (readable while a SIGCHLD
/// is pending).
#[allow(unsafe_code)]
pub fn register_signalfd(
    fd: nix::sys::signalfd::SignalFd,
) -> io::Result<tokio::io::unix::AsyncFd<nix::sys::signalfd::SignalFd>> {
    // SAFETY: a `SignalFd` owns its descriptor (an `OwnedFd` inside, closed only when it is
    // dropped) and its `as_raw_fd` always returns that descriptor; the `AsyncFd` owns it
    // from here until it is dropped.
    unsafe { tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }
        .map_err(|e| e.into_parts().1)
}

/// What a child needs between `clone` and `execve`, all of it prepared by the parent: the
/// child only reads it, and writes `error` when it fails.
struct ChildPlan {
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    cwd: *const libc::c_char,
    /// An open /dev/null (actiond's own, kept open), the command's stdin.
    null: RawFd,
    stdout: RawFd,
    stderr: RawFd,
    /// The value of `HANDLERS` and the signals that had a handler of ours then, as `caught`
    /// found them; `None` to ask of every signal.
    caught: Option<(u32, u64)>,
    /// An open `cgroup.procs` (or `cgroup.threads` of a threaded cgroup), or -1.
    cgroup: RawFd,
    /// The user to become, when not actiond's own.
    ids: Option<Ids>,
    /// Whether to drop every capability before the command runs.
    drop_caps: bool,
    /// The error number of the step that failed; 0 while none did.
    error: AtomicI32,
    /// Whether that step was the entry into the cgroup.
    in_cgroup: AtomicBool,
    /// Whether that step was the entry into the working directory.
    in_cwd: AtomicBool,
}

/// The child could not enter the working directory (missing, not a directory, not
/// searchable by the command's user): the error a start fails with names the directory, not
/// the program that was never reached.
#[derive(Debug)]
pub struct NoWorkingDirectory {
    pub dir: PathBuf,
    pub error: io::Error,
}

impl std::fmt::Display for NoWorkingDirectory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot enter the working directory {}: {}",
            self.dir.display(),
            self.error
        )
    }
}

impl std::error::Error for NoWorkingDirectory {}

/// A user's ids as the child takes them, its groups an array the caller keeps alive.
#[derive(Clone, Copy)]
struct Ids {
    uid: u32,
    gid: u32,
    groups: *const u32,
    count: usize,
}

/// Bytes of stack for the child path: a few frames of ours and the C library's system call
/// wrappers use well under 2 KiB (musl's own `posix_spawn` gives its child about 5 KiB).
const CHILD_STACK: usize = 16 * 1024;

#[repr(C, align(16))]
struct ChildStack([MaybeUninit<u8>; CHILD_STACK]);

/// A kernel signal set with every signal (the kernel's `sigset_t` is 64 bits on every
/// architecture actiond runs on), and with none.
const ALL_SIGNALS: u64 = !0;
const NO_SIGNALS: u64 = 0;
/// Its size, as `rt_sigprocmask` and `rt_sigaction` want it.
const SIGSET_SIZE: usize = 8;

/// Clones a child that shares our memory until it calls `execve` or exits (our thread waits
/// for that), runs `child(plan)` on a stack in this frame, and returns its pid.
#[allow(unsafe_code)]
fn clone_vfork(plan: &ChildPlan) -> io::Result<i32> {
    let mut stack = ChildStack([MaybeUninit::uninit(); CHILD_STACK]);
    // Stacks grow down on every architecture actiond is built for: the child starts at the
    // end. CHILD_STACK is a multiple of 16, so the end keeps the 16-byte alignment.
    let top = stack.0.as_mut_ptr_range().end.cast::<libc::c_void>();
    // SIGCHLD: the reaper reaps it (an execve would turn any other exit signal back into
    // SIGCHLD anyway, so a pidfd could not keep the leader from the reaper's waitpid(-1)).
    let flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD;
    let mut saved: u64 = 0;
    let arg = std::ptr::from_ref(plan).cast_mut().cast::<libc::c_void>();
    // SAFETY: rt_sigprocmask reads and writes the two 8-byte sets we pass (SIGSET_SIZE).
    // Every signal is blocked around the clone, as the C library's posix_spawn does: the
    // child starts with our handlers and our memory, and must not run a handler of ours
    // before it has reset them (`child`). The old mask is restored right after.
    //
    // clone: `child` is an `extern "C"` function that never returns (it ends in execve or
    // _exit); `top` is the end of a 16 KiB, 16-aligned buffer in this frame, which stays
    // alive and untouched while the child runs, because CLONE_VFORK holds this thread in
    // the call until the child has exec'd or exited; `arg` points at `plan`, which the
    // caller keeps alive across this call, and every pointer in it points at C strings and
    // arrays the caller also keeps alive. Nothing is passed through the variadic part.
    let pid = unsafe {
        let block = libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK as libc::c_long,
            std::ptr::from_ref(&ALL_SIGNALS),
            std::ptr::from_mut(&mut saved),
            SIGSET_SIZE,
        );
        if block != 0 {
            return Err(io::Error::last_os_error());
        }
        let pid = libc::clone(child, top, flags, arg);
        let error = io::Error::last_os_error();
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK as libc::c_long,
            std::ptr::from_ref(&saved),
            std::ptr::null_mut::<u64>(),
            SIGSET_SIZE,
        );
        if pid == -1 {
            return Err(error);
        }
        pid
    };
    Ok(pid)
}

/// The child path, from `clone` to `execve`: in its cgroup first, then no handler of ours
/// left, a process group of its own, /dev/null, the pipes, the directory, no descriptor
/// above 2, no new privileges, an empty signal mask, the program. It runs in the parent's memory on the parent's waiting thread's
/// behalf, so it only makes system calls (the C library's wrappers, which are
/// async-signal-safe, and raw ones), allocates nothing, takes no lock, and cannot panic.
/// A failure leaves its error number in the plan and exits with 127.
///
/// The change of user (`become_user`) comes after the cgroup, which only actiond's own
/// user may enter, and before the file actions, so the directory and the program are
/// reached with the command's own rights.
#[allow(unsafe_code)]
extern "C" fn child(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `ChildPlan` that `clone_vfork`'s caller keeps alive until this
    // process has exec'd or exited; see `clone_vfork`. Everything below is a system call on
    // descriptors and C strings from that plan, or on this process's own state. Closing
    // descriptors above 2 closes them in this process only: without CLONE_FILES the child
    // has its own table of descriptors, so the parent's stay open.
    unsafe {
        let plan = &*arg.cast::<ChildPlan>();
        if plan.cgroup >= 0 && libc::write(plan.cgroup, c"0".as_ptr().cast(), 1) != 1 {
            plan.in_cgroup.store(true, Ordering::Relaxed);
            fail(plan);
        }
        if !become_user(plan) {
            fail(plan);
        }
        reset_handlers(plan.caught);
        if libc::setpgid(0, 0) != 0 {
            fail(plan);
        }
        // actiond's descriptors 0, 1 and 2 are always open (the Rust runtime opens
        // /dev/null for any that is closed at start), so its /dev/null and the pipes are
        // above 2 and each dup2 below moves a descriptor onto another one (dup2 clears
        // close-on-exec on the copy; close_range below closes the originals).
        if libc::dup2(plan.null, 0) < 0
            || libc::dup2(plan.stdout, 1) < 0
            || libc::dup2(plan.stderr, 2) < 0
        {
            fail(plan);
        }
        if libc::chdir(plan.cwd) != 0 {
            plan.in_cwd.store(true, Ordering::Relaxed);
            fail(plan);
        }
        // No descriptor of actiond's reaches the command but its 0, 1 and 2: one it inherited
        // without close-on-exec (from whoever started it, a shell's or a supervisor's pipe)
        // would otherwise pass to every action. The pipes' write ends and the cgroup file are
        // above 2 too, and done with. close_range (Linux 5.9) takes the last as an unsigned
        // int: -1 is its highest. On an older kernel, or under a seccomp filter that refuses
        // it, each descriptor below the limit of open files is closed one by one.
        // Every argument a `c_long`: the kernel reads whole registers, and a variadic `int`
        // leaves the upper half of one undefined.
        let (zero, one, all): (libc::c_long, libc::c_long, libc::c_long) = (0, 1, -1);
        if libc::syscall(libc::SYS_close_range, 3 as libc::c_long, all, zero) != 0 {
            let (mut fd, open) = (3, open_files());
            while fd < open {
                libc::close(fd);
                fd += 1;
            }
        }
        // No program the command runs gains a right by its setuid bit or file capabilities
        // (the shipped unit sets NoNewPrivileges= for the whole service; by hand, this holds
        // the same). Kept across execve and by everything the command starts.
        let no_new_privs = libc::c_long::from(libc::PR_SET_NO_NEW_PRIVS);
        if libc::syscall(libc::SYS_prctl, no_new_privs, one, zero, zero, zero) != 0 {
            fail(plan);
        }
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK as libc::c_long,
            std::ptr::from_ref(&NO_SIGNALS),
            std::ptr::null_mut::<u64>(),
            SIGSET_SIZE,
        );
        libc::execve(plan.path, plan.argv, plan.envp);
        fail(plan)
    }
}

/// The system calls that set a process's groups and ids with 32-bit ids: on 32-bit ARM
/// (and x86) the plain ones are the old 16-bit calls.
#[cfg(any(target_arch = "arm", target_arch = "x86"))]
const SET_IDS: [libc::c_long; 3] = [
    libc::SYS_setgroups32,
    libc::SYS_setresgid32,
    libc::SYS_setresuid32,
];
#[cfg(not(any(target_arch = "arm", target_arch = "x86")))]
const SET_IDS: [libc::c_long; 3] = [
    libc::SYS_setgroups,
    libc::SYS_setresgid,
    libc::SYS_setresuid,
];

/// `capset`'s header (version 3: two 32-bit words per set) and data.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}
#[repr(C)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// In the child: the plan's user's groups, group and user (real, effective and saved), then,
/// unless the command runs as root, no capability left: effective, permitted and
/// inheritable emptied, which empties the ambient set too, so nothing actiond was granted
/// (CAP_SETUID, CAP_KILL) passes to the command or survives its execve. Raw system calls:
/// the C library's wrappers would signal every thread of the parent, whose memory this
/// child shares, to change its ids too. False, with errno set, when one fails.
#[allow(unsafe_code)]
fn become_user(plan: &ChildPlan) -> bool {
    if let Some(ids) = plan.ids {
        let [groups, gid, uid] = SET_IDS;
        let (u, g) = (ids.uid as libc::c_long, ids.gid as libc::c_long);
        // SAFETY: setgroups reads `count` ids from `groups`, an array the caller of `spawn`
        // keeps alive until the child has exec'd; the other two take numbers only. Each
        // changes this process's credentials alone (not the parent's: credentials are per
        // task, and this is another process).
        let ok = unsafe {
            libc::syscall(groups, ids.count as libc::c_long, ids.groups) == 0
                && libc::syscall(gid, g, g, g) == 0
                && libc::syscall(uid, u, u, u) == 0
        };
        if !ok {
            return false;
        }
    }
    if plan.drop_caps {
        let header = CapHeader {
            version: CAPABILITY_VERSION_3,
            pid: 0,
        };
        let none = [CAP_NONE, CAP_NONE];
        // SAFETY: capset reads the header and two data structs of the sizes version 3
        // defines, all on this stack; lowering one's own capabilities is always allowed.
        return unsafe { libc::syscall(libc::SYS_capset, &raw const header, none.as_ptr()) } == 0;
    }
    true
}
const CAP_NONE: CapData = CapData {
    effective: 0,
    permitted: 0,
    inheritable: 0,
};

/// Leaves the child's error number for the parent and exits.
#[allow(unsafe_code)]
fn fail(plan: &ChildPlan) -> ! {
    let errno = io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO);
    plan.error.store(errno, Ordering::Relaxed);
    // SAFETY: _exit ends this process at once, without running anything of the parent's
    // (no atexit handler, no stdio flush).
    unsafe { libc::_exit(127) }
}

/// The real-time signals the C library keeps for itself (glibc: 32 and 33; musl: 32 to 34).
/// Its `posix_spawn` leaves them ignored in a child whatever they are in the parent, and so
/// does this module.
#[cfg(target_env = "musl")]
const LIBC_INTERNAL: std::ops::RangeInclusive<i32> = 32..=34;
#[cfg(not(target_env = "musl"))]
const LIBC_INTERNAL: std::ops::RangeInclusive<i32> = 32..=33;

/// Every signal that has a handler (ours: shared memory means our handlers) goes back to
/// its default, and SIGPIPE too (the Rust runtime ignores it, and an ignored signal stays
/// ignored across `execve`); other ignored signals stay ignored, and the C library's own
/// signals are ignored, as its `posix_spawn` leaves them. Raw `rt_sigaction` calls, past
/// the C library's wrapper (musl's takes a lock for SIGABRT; glibc's refuses its internal
/// signals). The signals are still all blocked.
///
/// Which signals have a handler is `caught`'s finding when no handler was installed since
/// (`HANDLERS` unchanged, read here in the memory we share with the parent): then only
/// those are reset, a handful of system calls. Otherwise every signal is asked, as the C
/// library's `posix_spawn` does: about 60 system calls more while the spawning thread waits
/// (25 µs of a one-client press on the bench's VM, docs/PERFORMANCE.md).
fn reset_handlers(caught: Option<(u32, u64)>) {
    let known = caught.and_then(|(at, set)| (HANDLERS.load(Ordering::SeqCst) == at).then_some(set));
    // The kernel's `struct sigaction` starts with the handler, and is at most 32 bytes; an
    // all-zero one is SIG_DFL with no flags and an empty mask.
    let default = [0u64; 4];
    let ignore = [libc::SIG_IGN as u64, 0, 0, 0];
    for signal in 1..=64 {
        if signal == libc::SIGKILL || signal == libc::SIGSTOP {
            continue;
        }
        if LIBC_INTERNAL.contains(&signal) {
            rt_sigaction(signal, Some(&ignore), None);
            continue;
        }
        let caught = match known {
            Some(set) => set & bit(signal) != 0,
            None => has_handler(signal),
        };
        if caught || signal == libc::SIGPIPE {
            rt_sigaction(signal, Some(&default), None);
        }
    }
}

/// Signal `signal`'s bit in a set of signals (bit 0 for signal 1).
fn bit(signal: i32) -> u64 {
    1u64 << (signal - 1)
}

/// Whether `signal` has a handler of ours (neither its default nor ignored); false for a
/// signal number the kernel does not have (it fails harmlessly, EINVAL). One system call,
/// async-signal-safe: the child path may call it.
fn has_handler(signal: i32) -> bool {
    let mut old = [0u64; 4];
    if !rt_sigaction(signal, None, Some(&mut old)) {
        return false;
    }
    // The handler is the first word (pointer-sized) on every architecture.
    let mut first = [0u8; size_of::<usize>()];
    first.copy_from_slice(&old[0].to_ne_bytes()[..size_of::<usize>()]);
    let handler = usize::from_ne_bytes(first);
    handler != libc::SIG_DFL && handler != libc::SIG_IGN
}

/// Counts actiond's installations of signal handlers: the low 8 bits are those under way,
/// the rest how many ended. A value with none under way names one state of the handlers:
/// while it stays the same, no handler was added (`installing`).
static HANDLERS: AtomicU32 = AtomicU32::new(0);
const UNDER_WAY: u32 = 0xff;

/// The signals with a handler of ours (bit 0 for signal 1) as last found in the parent, and
/// the value of `HANDLERS` they were found at.
static CAUGHT: Mutex<Option<(u32, u64)>> = Mutex::new(None);

/// Runs `install`, which may install signal handlers, so that the next spawn finds them:
/// every handler actiond installs after it started goes through here (`signal`). A handler
/// installed another way before the first spawn is found too; one installed another way
/// later would be left in place until the command's `execve`, which resets it (and a signal
/// arriving in between would run it in the child).
pub fn installing<R>(install: impl FnOnce() -> R) -> R {
    HANDLERS.fetch_add(1, Ordering::SeqCst);
    let result = install();
    // One more ended (+0x100), one fewer under way (-1).
    HANDLERS.fetch_add(UNDER_WAY, Ordering::SeqCst);
    result
}

/// The one way actiond handles a signal: tokio's stream of it, installed through
/// `installing`, so that the commands it starts have none of its handlers.
pub fn signal(kind: tokio::signal::unix::SignalKind) -> io::Result<tokio::signal::unix::Signal> {
    installing(|| tokio::signal::unix::signal(kind))
}

/// The signals with a handler of ours and the value of `HANDLERS` that finding holds for,
/// asked of the kernel signal by signal the first time and again only after a handler was
/// installed (`installing`); `None` while one is being installed. Signals that the child
/// path resets anyway (SIGPIPE, the C library's own) are not asked.
fn caught() -> Option<(u32, u64)> {
    let now = HANDLERS.load(Ordering::SeqCst);
    if now & UNDER_WAY != 0 {
        return None;
    }
    let mut cache = CAUGHT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((at, set)) = *cache
        && at == now
    {
        return Some((at, set));
    }
    let set = (1..=64)
        .filter(|&s| s != libc::SIGKILL && s != libc::SIGSTOP && !LIBC_INTERNAL.contains(&s))
        .filter(|&s| has_handler(s))
        .fold(0, |set, s| set | bit(s));
    *cache = Some((now, set));
    Some((now, set))
}

/// The raw `rt_sigaction` system call: sets `signal`'s action to `act` when given, and
/// reads the one before into `old` when given; true when the kernel took it.
#[allow(unsafe_code)]
fn rt_sigaction(signal: i32, act: Option<&[u64; 4]>, old: Option<&mut [u64; 4]>) -> bool {
    let act = act.map_or(std::ptr::null(), |a| a.as_ptr());
    let old = old.map_or(std::ptr::null_mut(), |o| o.as_mut_ptr());
    // SAFETY: rt_sigaction reads `act` and writes `old` when they are not null, each at most
    // 32 bytes on every architecture, which the arrays hold (both borrowed for the call);
    // a system call allocates nothing and takes no lock of ours, as the child path needs.
    unsafe {
        libc::syscall(
            libc::SYS_rt_sigaction,
            libc::c_long::from(signal),
            act,
            old,
            SIGSET_SIZE,
        ) == 0
    }
}

#[cfg(test)]
mod tests;
