//! The one call that starts a process: `posix_spawn` from the C library, as the leader of a
//! new process group, with stdin from /dev/null, stdout and stderr into two new pipes, its
//! signal mask cleared and SIGPIPE back to its default, in a given directory.
//!
//! std's `Command` does the same through the same call, but it rebuilds the whole
//! environment on every spawn (the service's variables read into a sorted map, each copied
//! into a new C string, all freed after): with 35 variables that was 70 000 of the 96 000
//! instructions actiond spent per spawn (callgrind, docs/PERFORMANCE.md). Here the service's
//! environment is turned into C strings once, since actiond never changes it, and each spawn
//! only adds the few variables of its plan. It must not wait for, signal or supervise the
//! process (the reaper and the supervising task do), and must not run anything in the child
//! between `vfork` and `execve` beyond the C library's own file actions: that is what keeps
//! one `clone3` and one `execve` per run.

use std::ffi::{CStr, CString, OsStr};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;

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

/// Starts `program` (found as `resolve` finds it, with the PATH of `env` when it sets one)
/// with `args` after `program` itself as argv[0], the service's environment plus `env`, in
/// `cwd`.
pub fn spawn(
    program: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
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
    let cwd = c_string(cwd.as_os_str().as_bytes())?;
    let (out_r, out_w) = io::pipe()?;
    let (err_r, err_w) = io::pipe()?;
    // Before the spawn, so that a failure here leaves no process behind unsupervised.
    non_blocking(&out_r)?;
    non_blocking(&err_r)?;
    let pid = posix_spawn(
        &path,
        &argv,
        &envp,
        &cwd,
        out_w.as_raw_fd(),
        err_w.as_raw_fd(),
    )?;
    // The write ends now belong to the child; ours close here, so the reads see the end of
    // file when the command and everything it started are done writing.
    drop(out_w);
    drop(err_w);
    Ok(Child {
        pid,
        stdout: out_r.into(),
        stderr: err_r.into(),
    })
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

/// An error from a `posix_spawn*` function (they return the error number).
fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// The file actions, destroyed when dropped.
struct Actions(MaybeUninit<libc::posix_spawn_file_actions_t>);
/// The spawn attributes, destroyed when dropped.
struct Attributes(MaybeUninit<libc::posix_spawnattr_t>);

#[allow(unsafe_code)]
impl Drop for Actions {
    fn drop(&mut self) {
        // SAFETY: an `Actions` exists only once `posix_spawn_file_actions_init` succeeded on
        // it, and it is destroyed exactly once, here.
        unsafe { libc::posix_spawn_file_actions_destroy(self.0.as_mut_ptr()) };
    }
}

#[allow(unsafe_code)]
impl Drop for Attributes {
    fn drop(&mut self) {
        // SAFETY: as for `Actions`: initialised before it exists, destroyed once.
        unsafe { libc::posix_spawnattr_destroy(self.0.as_mut_ptr()) };
    }
}

/// The C library's `posix_spawn`, with the file actions and attributes of a command: stdin
/// from /dev/null, stdout and stderr onto `stdout` and `stderr`, `cwd` as its directory, a
/// new process group, an empty signal mask and SIGPIPE at its default (the Rust runtime
/// ignores SIGPIPE, and an ignored signal stays ignored across `execve`).
#[allow(unsafe_code)]
fn posix_spawn(
    path: &CStr,
    argv: &[CString],
    envp: &[&CStr],
    cwd: &CStr,
    stdout: libc::c_int,
    stderr: libc::c_int,
) -> io::Result<i32> {
    let argv_p: Vec<*mut libc::c_char> = argv
        .iter()
        .map(|a| a.as_ptr().cast_mut())
        .chain(std::iter::once(std::ptr::null_mut()))
        .collect();
    let envp_p: Vec<*mut libc::c_char> = envp
        .iter()
        .map(|e| e.as_ptr().cast_mut())
        .chain(std::iter::once(std::ptr::null_mut()))
        .collect();
    let mut pid: libc::pid_t = 0;
    // SAFETY: each init is called on storage we own before any other use, and the value is
    // wrapped for destruction only once its init succeeded (both types hold no pointer into
    // themselves, so moving them after init is sound). Every pointer passed stays valid for
    // the call: the C strings and the two pointer arrays (each ending in a null pointer, as
    // posix_spawn requires) live until this function returns, and posix_spawn reads them
    // only until the child has called execve, which is before it returns (vfork
    // semantics). The `*mut` casts are what the C prototypes ask for; the C library does
    // not write through them. `sigset_t` is plain data, initialised by sigemptyset before
    // use.
    unsafe {
        let mut fa = MaybeUninit::uninit();
        check(libc::posix_spawn_file_actions_init(fa.as_mut_ptr()))?;
        let mut actions = Actions(fa);
        let fa = actions.0.as_mut_ptr();
        check(libc::posix_spawn_file_actions_addopen(
            fa,
            0,
            c"/dev/null".as_ptr(),
            libc::O_RDONLY,
            0,
        ))?;
        check(libc::posix_spawn_file_actions_adddup2(fa, stdout, 1))?;
        check(libc::posix_spawn_file_actions_adddup2(fa, stderr, 2))?;
        check(libc::posix_spawn_file_actions_addchdir_np(fa, cwd.as_ptr()))?;

        let mut at = MaybeUninit::uninit();
        check(libc::posix_spawnattr_init(at.as_mut_ptr()))?;
        let mut attrs = Attributes(at);
        let at = attrs.0.as_mut_ptr();
        let mut set = MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(set.as_mut_ptr());
        check(libc::posix_spawnattr_setsigmask(at, set.as_ptr()))?;
        libc::sigaddset(set.as_mut_ptr(), libc::SIGPIPE);
        check(libc::posix_spawnattr_setsigdefault(at, set.as_ptr()))?;
        check(libc::posix_spawnattr_setpgroup(at, 0))?;
        let flags = libc::POSIX_SPAWN_SETPGROUP
            | libc::POSIX_SPAWN_SETSIGMASK
            | libc::POSIX_SPAWN_SETSIGDEF;
        check(libc::posix_spawnattr_setflags(at, flags as libc::c_short))?;

        check(libc::posix_spawn(
            &mut pid,
            path.as_ptr(),
            fa,
            at,
            argv_p.as_ptr(),
            envp_p.as_ptr(),
        ))?;
    }
    Ok(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own(pairs: &[(&str, &str)]) -> Vec<String> {
        let extra: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        environment(&extra)
            .unwrap()
            .into_iter()
            .map(|c| c.into_string().unwrap())
            .collect()
    }

    #[test]
    fn the_later_of_two_variables_of_one_name_wins() {
        assert_eq!(own(&[("A", "1"), ("B", "2"), ("A", "3")]), ["B=2", "A=3"]);
        assert_eq!(own(&[]), Vec::<String>::new());
    }

    #[test]
    fn a_nul_byte_is_refused_before_anything_starts() {
        let extra = [("A".to_string(), "x\0y".to_string())];
        assert_eq!(
            environment(&extra).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
        let err = spawn("/bin/true", &["a\0".into()], &[], Path::new("/")).err();
        assert_eq!(err.map(|e| e.kind()), Some(io::ErrorKind::InvalidInput));
    }

    #[test]
    fn notify_variables_are_not_inherited() {
        assert!(
            inherited()
                .iter()
                .all(|(k, _)| !WITHHELD.iter().any(|w| k == w.as_bytes()))
        );
    }

    #[test]
    fn programs_are_found_on_path_as_execvp_would() {
        assert_eq!(resolve("/nonexistent/x", None).unwrap(), "/nonexistent/x");
        assert!(resolve("sh", None).unwrap().ends_with("/sh"));
        let missing = resolve("no-such-program-anywhere", None).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        // The command's own PATH decides, as it would for execvp in the child.
        assert_eq!(
            resolve("sh", Some(OsStr::new("/nonexistent")))
                .unwrap_err()
                .kind(),
            io::ErrorKind::NotFound
        );
    }

    #[test]
    fn a_command_runs_with_its_pipes_directory_and_group() {
        use std::io::Read;
        let env = [("ACTIOND_T".to_string(), "v".to_string())];
        // stderr: the process group, then the status flags of the command's stdout.
        let script = "echo \"$ACTIOND_T $(pwd) $$\"; cut -d' ' -f5 /proc/$$/stat >&2; \
                      sed -n 's/^flags:[[:space:]]*//p' /proc/$$/fdinfo/1 >&2; read x; echo \"[$x]\"";
        let child = spawn(
            "/bin/sh",
            &["-c".into(), script.into()],
            &env,
            Path::new("/tmp"),
        )
        .unwrap();
        // Our read ends are non-blocking (the reactor needs that); the command's stdout is
        // not, or a command writing faster than we read would see EAGAIN.
        for fd in [&child.stdout, &child.stderr] {
            let info =
                std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd())).unwrap();
            let flags = octal_flags(&info);
            assert_ne!(flags & libc::O_NONBLOCK, 0, "our read end blocks: {info}");
        }
        // The output fits in the pipes: read once the command is done, without waiting.
        let _ = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(child.pid), None);
        let mut out = String::new();
        std::fs::File::from(child.stdout)
            .read_to_string(&mut out)
            .unwrap();
        let mut err = String::new();
        std::fs::File::from(child.stderr)
            .read_to_string(&mut err)
            .unwrap();
        assert_eq!(out, format!("v /tmp {}\n[]\n", child.pid));
        let mut lines = err.lines();
        assert_eq!(lines.next(), Some(child.pid.to_string().as_str()));
        let theirs = i32::from_str_radix(lines.next().unwrap(), 8).unwrap();
        assert_eq!(
            theirs & libc::O_NONBLOCK,
            0,
            "the command's stdout is non-blocking"
        );
    }

    /// The `flags:` field of a /proc fdinfo file (octal).
    fn octal_flags(info: &str) -> i32 {
        let field = info.lines().find_map(|l| l.strip_prefix("flags:")).unwrap();
        i32::from_str_radix(field.trim(), 8).unwrap()
    }
}
