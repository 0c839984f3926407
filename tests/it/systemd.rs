//! systemd integration: the real binary, started the way systemd starts it with
//! `Type=notify` and `WatchdogSec`, must send `READY=1` once it listens, `WATCHDOG=1` pings
//! while it runs and `STOPPING=1` when told to stop. The test plays systemd: it binds the
//! datagram socket named by `NOTIFY_SOCKET` (a file, and an abstract name) and reads what
//! arrives. Deadlines are generous; nothing here depends on the machine's speed.

use std::os::unix::net::UnixDatagram;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::harness::{BIN, TempDir, exited, wait_until};

const DEADLINE: Duration = Duration::from_secs(20);

/// A minimal valid config in `dir`.
fn write_config(dir: &TempDir) -> std::path::PathBuf {
    let path = dir.path().join("config.yaml");
    std::fs::write(
        &path,
        // The start-up action shows what environment the commands of actions get.
        "actions:\n  - {id: hello, title: Hello, shell: echo hello}\n  \
         - {id: env, title: Env, shell: 'env > action-env.txt', execOnStartup: true}\n",
    )
    .expect("write config");
    path
}

/// The service under test, killed and reaped if a failed assertion leaves it running.
struct Service(Child);

impl Drop for Service {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Starts actiond with `NOTIFY_SOCKET=socket` and a 200 ms watchdog, logging to a file.
fn start(dir: &TempDir, socket: &str) -> Service {
    let config = write_config(dir);
    let log = std::fs::File::create(dir.path().join("actiond.log")).expect("log file");
    Command::new(BIN)
        .arg("--config")
        .arg(&config)
        .arg("--listen")
        .arg("127.0.0.1:0")
        .current_dir(dir.path())
        .env("NOTIFY_SOCKET", socket)
        .env("WATCHDOG_USEC", "200000")
        .env_remove("WATCHDOG_PID")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .map(Service)
        .expect("spawn actiond")
}

/// Reads datagrams until one contains `line` (as a whole line), or panics at the deadline
/// with everything received and the service's log.
fn expect_message(socket: &UnixDatagram, line: &str, dir: &TempDir, seen: &mut Vec<String>) {
    let start = Instant::now();
    let mut buf = [0u8; 4096];
    while start.elapsed() < DEADLINE {
        socket
            .set_read_timeout(Some(Duration::from_millis(500)))
            .expect("read timeout");
        if let Ok(len) = socket.recv(&mut buf) {
            let msg = String::from_utf8_lossy(&buf[..len]).into_owned();
            let found = msg.lines().any(|l| l == line);
            seen.push(msg);
            if found {
                return;
            }
        }
    }
    panic!(
        "no {line:?} within {DEADLINE:?}; received {seen:?}; log:\n{}",
        std::fs::read_to_string(dir.path().join("actiond.log")).unwrap_or_default()
    );
}

fn stop(mut service: Service) {
    let child = &mut service.0;
    let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM);
    if let Some(status) = exited(child, DEADLINE) {
        assert!(status.success(), "actiond exited with {status:?}");
        return;
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("actiond did not stop within {DEADLINE:?} of SIGTERM");
}

/// The whole conversation over one socket: ready (with a status line), at least two
/// watchdog pings, and stopping on SIGTERM.
fn conversation(socket: &UnixDatagram, name: &str, dir: &TempDir) {
    let child = start(dir, name);
    let mut seen = Vec::new();
    expect_message(socket, "READY=1", dir, &mut seen);
    assert!(
        seen.iter().any(|m| m
            .lines()
            .any(|l| l.starts_with("STATUS=listening on http://127.0.0.1:"))),
        "READY=1 came without the listening status: {seen:?}"
    );
    expect_message(socket, "WATCHDOG=1", dir, &mut seen);
    expect_message(socket, "WATCHDOG=1", dir, &mut seen);
    // systemd's variables are the service's, not its actions': a command that is itself
    // sd_notify-aware must not report readiness or watchdog pings on actiond's behalf.
    let env_file = dir.path().join("action-env.txt");
    wait_until(DEADLINE, || env_file.exists());
    let env = std::fs::read_to_string(&env_file).expect("the start-up action wrote its env");
    assert!(env.contains("ACTIOND=1"), "{env}");
    for name in ["NOTIFY_SOCKET=", "WATCHDOG_USEC=", "WATCHDOG_PID="] {
        assert!(!env.lines().any(|l| l.starts_with(name)), "{name} in {env}");
    }
    let pid = child.0.id() as i32;
    let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
    expect_message(socket, "STOPPING=1", dir, &mut seen);
    stop(child);
    // Readiness comes first, exactly once.
    assert!(seen[0].lines().any(|l| l == "READY=1"), "{seen:?}");
    assert_eq!(seen.iter().filter(|m| m.contains("READY=1")).count(), 1);
}

#[test]
fn ready_watchdog_and_stopping_reach_a_socket_file() {
    let dir = TempDir::new();
    let path = dir.path().join("notify.sock");
    let socket = UnixDatagram::bind(&path).expect("bind notify socket");
    conversation(&socket, path.to_str().expect("utf-8 path"), &dir);
}

#[test]
fn ready_watchdog_and_stopping_reach_an_abstract_socket() {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::SocketAddr;
    let dir = TempDir::new();
    // The temp dir's name is unique, so the abstract name is too.
    let unique = dir.path().file_name().expect("dir name").to_string_lossy();
    let name = format!("{unique}-notify");
    let addr = SocketAddr::from_abstract_name(name.as_bytes()).expect("abstract address");
    let socket = UnixDatagram::bind_addr(&addr).expect("bind abstract socket");
    conversation(&socket, &format!("@{name}"), &dir);
}

#[test]
fn a_broken_notify_socket_does_not_stop_the_service() {
    // Nobody listens at this path: sends fail, the service must still serve and stop cleanly.
    let dir = TempDir::new();
    let missing = dir.path().join("nobody-here.sock");
    let child = start(&dir, missing.to_str().expect("utf-8 path"));
    let log = dir.path().join("actiond.log");
    wait_until(DEADLINE, || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("listening on")
    });
    assert!(
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("listening on"),
        "actiond did not start with an unreachable NOTIFY_SOCKET"
    );
    stop(child);
}
