//! Tests of `executor::spawn`, kept apart so the module reads on its own.

use super::*;
use std::io::Read;
use std::os::fd::AsFd;

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

/// Waits for a child and returns its exit code, or minus the signal that ended it.
fn wait(pid: i32) -> i32 {
    match nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(pid), None).unwrap() {
        nix::sys::wait::WaitStatus::Exited(_, code) => code,
        nix::sys::wait::WaitStatus::Signaled(_, signal, _) => -(signal as i32),
        other => panic!("{other:?}"),
    }
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
    let err = spawn(
        "/bin/true",
        &["a\0".into()],
        &[],
        Path::new("/"),
        None,
        None,
    )
    .err();
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
    {
        let env = [("ACTIOND_T".to_string(), "v".to_string())];
        // stderr: the process group, then the status flags of the command's stdout.
        let script = "echo \"$ACTIOND_T $(pwd) $$\"; cut -d' ' -f5 /proc/$$/stat >&2; \
                          sed -n 's/^flags:[[:space:]]*//p' /proc/$$/fdinfo/1 >&2; read x; echo \"[$x]\"";
        let args = ["-c".to_string(), script.to_string()];
        let child = spawn("/bin/sh", &args, &env, Path::new("/tmp"), None, None).unwrap();
        // Our read ends are non-blocking (the reactor needs that); the command's stdout
        // is not, or a command writing faster than we read would see EAGAIN.
        for fd in [&child.stdout, &child.stderr] {
            let info =
                std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd())).unwrap();
            assert_ne!(
                octal_flags(&info) & libc::O_NONBLOCK,
                0,
                "our read end blocks: {info}"
            );
        }
        // The output fits in the pipes: read once the command is done, without waiting.
        assert_eq!(wait(child.pid), 0);
        let Child {
            pid,
            stdout,
            stderr,
            ..
        } = child;
        let (out, err) = (read_all(stdout), read_all(stderr));
        assert_eq!(out, format!("v /tmp {pid}\n[]\n"));
        let mut lines = err.lines();
        assert_eq!(lines.next(), Some(pid.to_string().as_str()));
        let theirs = i32::from_str_radix(lines.next().unwrap(), 8).unwrap();
        assert_eq!(
            theirs & libc::O_NONBLOCK,
            0,
            "the command's stdout is non-blocking"
        );
    }
}

#[test]
fn a_failure_in_the_child_is_the_spawn_s_error() {
    {
        let missing = Path::new("/nonexistent-dir");
        let e = spawn("/bin/true", &[], &[], missing, None, None)
            .err()
            .unwrap();
        assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
        let not_a_program = spawn("/dev/null", &[], &[], Path::new("/"), None, None);
        let e = not_a_program.err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{e}");
        // A cgroup.procs that cannot be written (here: read-only) fails the spawn, and
        // the error says where.
        let read_only = std::fs::File::open("/dev/null").unwrap();
        let e = spawn(
            "/bin/true",
            &[],
            &[],
            Path::new("/"),
            Some(read_only.as_fd()),
            None,
        )
        .err()
        .unwrap();
        assert!(
            e.to_string()
                .contains("could not enter the execution's cgroup"),
            "{e}"
        );
    }
}

/// Everything a non-blocking read end gives until its end of file. Another test's child
/// may hold a copy of the write end for a moment (between its clone and its execve,
/// before close-on-exec applies), so "nothing yet" is waited out.
fn read_all(fd: OwnedFd) -> String {
    let mut file = std::fs::File::from(fd);
    let mut text = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match file.read(&mut buf) {
            Ok(0) => return String::from_utf8(text).unwrap(),
            Ok(n) => text.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Err(e) => panic!("{e}"),
        }
    }
}

/// The `flags:` field of a /proc fdinfo file (octal).
fn octal_flags(info: &str) -> i32 {
    let field = info.lines().find_map(|l| l.strip_prefix("flags:")).unwrap();
    i32::from_str_radix(field.trim(), 8).unwrap()
}

/// What a started process looks like from /proc: its signal mask and dispositions, its
/// group and session (the group relative to its pid), its descriptors with what each is
/// (a pipe, /dev/null) and its flags, its environment, command line and directory.
fn observe(pid: i32) -> Vec<String> {
    let proc = format!("/proc/{pid}");
    // The parent is let go once the new program's memory replaced ours, a moment before
    // the kernel has put its arguments in place, and `sleep` opens and closes its locale
    // files before it sleeps: look once it sleeps.
    let end = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let sleeping = || {
        let stat = std::fs::read_to_string(format!("{proc}/stat")).unwrap_or_default();
        stat.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('S')
    };
    while !sleeping() && std::time::Instant::now() < end {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    std::thread::sleep(std::time::Duration::from_millis(50));
    let status = std::fs::read_to_string(format!("{proc}/status")).unwrap();
    let mut seen: Vec<String> = status
        .lines()
        .filter(|l| {
            ["SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt"]
                .iter()
                .any(|k| l.starts_with(k))
        })
        .map(String::from)
        .collect();
    let stat = std::fs::read_to_string(format!("{proc}/stat")).unwrap();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    let own_session = nix::unistd::getsid(None).unwrap().as_raw().to_string();
    seen.push(format!("group is pid: {}", fields[2] == pid.to_string()));
    seen.push(format!("our session: {}", fields[3] == own_session));
    let mut fds: Vec<String> = std::fs::read_dir(format!("{proc}/fd"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let n = e.file_name().to_string_lossy().into_owned();
            let target = std::fs::read_link(e.path())
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let what = if target.starts_with("pipe:") {
                "pipe".into()
            } else {
                target
            };
            let info = std::fs::read_to_string(format!("{proc}/fdinfo/{n}")).unwrap();
            format!("fd {n}: {what}, flags {:o}", octal_flags(&info))
        })
        .collect();
    fds.sort();
    seen.extend(fds);
    let environ = std::fs::read(format!("{proc}/environ")).unwrap();
    seen.push(format!("environ: {}", String::from_utf8_lossy(&environ)));
    let cmdline = std::fs::read(format!("{proc}/cmdline")).unwrap();
    seen.push(format!("cmdline: {}", String::from_utf8_lossy(&cmdline)));
    let cwd = std::fs::read_link(format!("{proc}/cwd")).unwrap();
    seen.push(format!("cwd: {}", cwd.display()));
    seen
}

/// The child of the clone path is set up exactly as `posix_spawn` set it up (the path
/// this module took before, kept below as the reference): same signal mask (empty,
/// though the spawning thread blocks a signal), same dispositions (a handler of ours
/// reset, an ignored signal kept ignored, SIGPIPE back to its default), same group and
/// session, same descriptors 0 to 2 with the same flags and nothing else (not even what
/// `posix_spawn` passes on from us without close-on-exec), same environment,
/// argv[0] and directory. Seen from /proc while both run `sleep`.
#[test]
#[allow(unsafe_code)]
fn the_child_is_set_up_as_posix_spawn_set_it_up() {
    use nix::sys::signal::{SigHandler, SigSet, SigmaskHow, Signal, pthread_sigmask, sigaction};
    extern "C" fn handler(_: libc::c_int) {}
    let caught = nix::sys::signal::SigAction::new(
        SigHandler::Handler(handler),
        nix::sys::signal::SaFlags::empty(),
        SigSet::empty(),
    );
    let ignored = nix::sys::signal::SigAction::new(
        SigHandler::SigIgn,
        nix::sys::signal::SaFlags::empty(),
        SigSet::empty(),
    );
    // SAFETY: the handler does nothing, and nothing else in the test binary uses
    // SIGURG or SIGXFSZ. Installed through `installing`, as actiond installs its own, so
    // that the spawn below finds the new handler although other tests spawned before.
    installing(|| unsafe {
        sigaction(Signal::SIGURG, &caught).unwrap();
        sigaction(Signal::SIGXFSZ, &ignored).unwrap();
    });
    let mut blocked = SigSet::empty();
    blocked.add(Signal::SIGWINCH);
    pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&blocked), None).unwrap();

    let env = [
        ("ACTIOND_TRACKING_ID".to_string(), "t-1".to_string()),
        ("HOME".to_string(), "/overridden".to_string()),
    ];
    let args = ["30".to_string()];
    let reference = reference_spawn("sleep", &args, &env, Path::new("/tmp"));
    // Except that `posix_spawn` passed on every descriptor this process holds without
    // close-on-exec (whoever started the tests may have left some), and ours does not.
    let above_2 = |l: &String| {
        l.strip_prefix("fd ")
            .and_then(|l| l.split(':').next())
            .and_then(|n| n.parse::<i32>().ok())
            .is_some_and(|n| n > 2)
    };
    let expected: Vec<String> = observe(reference.0)
        .into_iter()
        .filter(|l| !above_2(l))
        .collect();
    {
        let child = spawn("sleep", &args, &env, Path::new("/tmp"), None, None).unwrap();
        let seen = observe(child.pid);
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.pid), Signal::SIGKILL);
        assert_eq!(wait(child.pid), -(Signal::SIGKILL as i32));
        assert_eq!(seen, expected);
    }
    let pid = nix::unistd::Pid::from_raw(reference.0);
    let _ = nix::sys::signal::kill(pid, Signal::SIGKILL);
    let _ = nix::sys::wait::waitpid(pid, None);
    pthread_sigmask(SigmaskHow::SIG_UNBLOCK, Some(&blocked), None).unwrap();

    // And what they agree on is what it should be.
    let has = |line: &str| expected.iter().any(|l| l == line);
    assert!(has("SigBlk:\t0000000000000000"), "{expected:#?}");
    assert!(has("SigCgt:\t0000000000000000"), "{expected:#?}");
    let ign = expected
        .iter()
        .find_map(|l| l.strip_prefix("SigIgn:\t"))
        .unwrap();
    let ign = u64::from_str_radix(ign, 16).unwrap();
    assert_ne!(
        ign & (1 << (libc::SIGXFSZ - 1)),
        0,
        "SIGXFSZ not ignored: {expected:#?}"
    );
    assert_eq!(
        ign & (1 << (libc::SIGPIPE - 1)),
        0,
        "SIGPIPE ignored: {expected:#?}"
    );
    assert!(
        has("group is pid: true") && has("our session: true"),
        "{expected:#?}"
    );
    // Only 0, 1 and 2 of ours: the test binary itself may pass on descriptors it inherited
    // without close-on-exec (cargo's jobserver), which both paths pass on alike.
    let fds: Vec<&String> = ["fd 0:", "fd 1:", "fd 2:"]
        .iter()
        .filter_map(|n| expected.iter().find(|l| l.starts_with(n)))
        .collect();
    assert_eq!(fds.len(), 3, "{expected:#?}");
    assert!(fds[0].starts_with("fd 0: /dev/null"), "{fds:#?}");
    assert!(
        fds[1].starts_with("fd 1: pipe") && fds[2].starts_with("fd 2: pipe"),
        "{fds:#?}"
    );
    assert!(has("cmdline: sleep\u{0}30\u{0}"), "{expected:#?}");
    let environ = expected
        .iter()
        .find(|l| l.starts_with("environ: "))
        .unwrap();
    assert!(
        environ.contains("\u{0}HOME=/overridden\u{0}")
            || environ.contains(" HOME=/overridden\u{0}")
    );
    assert!(
        environ.contains("ACTIOND_TRACKING_ID=t-1\u{0}"),
        "{environ}"
    );
}

/// The spawn this module made before the clone path, kept as the reference the test
/// above compares with: the C library's `posix_spawn` with a new process group, an empty
/// signal mask, SIGPIPE at its default, /dev/null, the two pipes and the directory as
/// file actions. Returns the pid and our read ends.
#[allow(unsafe_code)]
fn reference_spawn(
    program: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
) -> (i32, OwnedFd, OwnedFd) {
    let path = c_string(resolve(program, None).unwrap().as_bytes()).unwrap();
    let mut argv = vec![c_string(program.as_bytes()).unwrap()];
    argv.extend(args.iter().map(|a| c_string(a.as_bytes()).unwrap()));
    let own = environment(env).unwrap();
    let overridden = |key: &[u8]| env.iter().any(|(k, _)| k.as_bytes() == key);
    let envp: Vec<&CStr> = inherited()
        .iter()
        .filter(|(k, _)| !overridden(k))
        .map(|(_, kv)| kv.as_c_str())
        .chain(own.iter().map(CString::as_c_str))
        .collect();
    let cwd = c_string(cwd.as_os_str().as_bytes()).unwrap();
    let (out_r, out_w) = io::pipe().unwrap();
    let (err_r, err_w) = io::pipe().unwrap();
    let argv_p: Vec<*mut libc::c_char> = null_terminated(argv.iter().map(CString::as_c_str))
        .into_iter()
        .map(<*const _>::cast_mut)
        .collect();
    let envp_p: Vec<*mut libc::c_char> = null_terminated(envp.iter().copied())
        .into_iter()
        .map(<*const _>::cast_mut)
        .collect();
    let mut pid: libc::pid_t = 0;
    // SAFETY: as the module did it before: each init on storage we own before use, every
    // pointer valid until posix_spawn returns (the child has exec'd by then), the
    // attribute objects destroyed once, after the call.
    unsafe {
        let mut fa = MaybeUninit::<libc::posix_spawn_file_actions_t>::uninit();
        assert_eq!(libc::posix_spawn_file_actions_init(fa.as_mut_ptr()), 0);
        let fa = fa.as_mut_ptr();
        libc::posix_spawn_file_actions_addopen(fa, 0, c"/dev/null".as_ptr(), libc::O_RDONLY, 0);
        libc::posix_spawn_file_actions_adddup2(fa, out_w.as_raw_fd(), 1);
        libc::posix_spawn_file_actions_adddup2(fa, err_w.as_raw_fd(), 2);
        libc::posix_spawn_file_actions_addchdir_np(fa, cwd.as_ptr());
        let mut at = MaybeUninit::<libc::posix_spawnattr_t>::uninit();
        assert_eq!(libc::posix_spawnattr_init(at.as_mut_ptr()), 0);
        let at = at.as_mut_ptr();
        let mut set = MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(set.as_mut_ptr());
        libc::posix_spawnattr_setsigmask(at, set.as_ptr());
        libc::sigaddset(set.as_mut_ptr(), libc::SIGPIPE);
        libc::posix_spawnattr_setsigdefault(at, set.as_ptr());
        libc::posix_spawnattr_setpgroup(at, 0);
        let flags = libc::POSIX_SPAWN_SETPGROUP
            | libc::POSIX_SPAWN_SETSIGMASK
            | libc::POSIX_SPAWN_SETSIGDEF;
        libc::posix_spawnattr_setflags(at, flags as libc::c_short);
        let rc = libc::posix_spawn(
            &mut pid,
            path.as_ptr(),
            fa,
            at,
            argv_p.as_ptr(),
            envp_p.as_ptr(),
        );
        libc::posix_spawn_file_actions_destroy(fa);
        libc::posix_spawnattr_destroy(at);
        assert_eq!(rc, 0, "posix_spawn");
    }
    (pid, out_r.into(), err_r.into())
}

/// The signals with a handler are asked of the kernel once, and again after a handler was
/// installed through `installing`; while one is being installed, the child asks them all.
#[test]
#[allow(unsafe_code)]
fn the_caught_signals_are_found_again_after_a_handler_is_installed() {
    use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
    extern "C" fn handler(_: libc::c_int) {}
    // Other tests install handlers at the same time: ask until none is under way.
    let settled = || loop {
        if let Some(found) = caught() {
            return found;
        }
        std::thread::yield_now();
    };
    let (at, _) = settled();
    let during = installing(|| {
        let action = SigAction::new(
            SigHandler::Handler(handler),
            SaFlags::empty(),
            SigSet::empty(),
        );
        // SAFETY: the handler does nothing, and nothing else in the test binary uses SIGVTALRM.
        unsafe { sigaction(Signal::SIGVTALRM, &action) }.unwrap();
        caught()
    });
    assert_eq!(during, None, "a finding while a handler is being installed");
    let (after, set) = settled();
    assert_ne!(after, at);
    assert_ne!(set & bit(libc::SIGVTALRM), 0, "{set:#x}");
    // The C library's own signals and SIGPIPE are reset by the child whatever they are.
    assert_eq!(set & bit(libc::SIGKILL), 0);
    assert!(LIBC_INTERNAL.clone().all(|s| set & bit(s) == 0));
    // And a command started now has no handler of ours.
    let child = spawn("sleep", &["30".into()], &[], Path::new("/"), None, None).unwrap();
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.pid)).unwrap();
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.pid), Signal::SIGKILL);
    assert_eq!(wait(child.pid), -(Signal::SIGKILL as i32));
    assert!(status.contains("SigCgt:\t0000000000000000"), "{status}");
}
