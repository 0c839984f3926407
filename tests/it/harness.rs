//! Starting the real `actiond` binary for one test, and looking at the operating system
//! around it.
//!
//! A `Server` owns a fresh temporary directory holding its `config.yaml` (so it is also the
//! working directory of every command, where scripts drop their pid files), starts the
//! compiled binary on `127.0.0.1:0`, learns the bound address from its `listening on` log
//! line, keeps draining and forwarding its output so the pipes never fill, and shuts it down
//! on drop. The `/proc` helpers answer the questions the process tests ask: which processes
//! are in a group, which children are zombies, how many descriptors and how much memory the
//! service holds. Every wait here is bounded, so a broken service fails a test instead of
//! hanging the run.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use serde_json::{Value, json};

use crate::client::{self, Conn, Response};

/// Where a test's service listens unless the test says otherwise.
const LOOPBACK: &str = "127.0.0.1:0";

/// How long the binary may take to print its listening line before the test gives up. The
/// debug build loads a 60 MB history in about 7 s alone, and took over 20 s on two cores
/// shared with three builds: a start that is only slow is not what a test proves wrong.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a dropped server gets to shut down gracefully before it is killed. Graceful
/// first, so that the executions a test left running are taken down by the service's own
/// ladder instead of outliving it as orphans.
const DROP_GRACE: Duration = Duration::from_secs(5);

/// The path of the binary under test, built by cargo for this test run.
pub const BIN: &str = env!("CARGO_BIN_EXE_actiond");

/// The bound for anything that should happen at once or within a second or two (a short
/// command finishing, a run starting, a file appearing): only a hang detector, never an
/// expectation of speed.
pub const SOON: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------------------
// Temporary directories

/// A uniquely named directory under the system temp dir, removed with its contents on drop.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new() -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let name = format!(
            "actiond-it-{}-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed),
            nanos
        );
        let path = std::env::temp_dir().join(name);
        // create_dir, not create_dir_all: a leftover with the same name must not be reused.
        std::fs::create_dir(&path).expect("create temp dir");
        // Canonical, so that comparisons with what `pwd` prints inside a command hold even
        // when the temp dir is reached through a symlink.
        let path = path.canonicalize().expect("canonicalize temp dir");
        TempDir { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

// ---------------------------------------------------------------------------------------
// Configs

/// Renders a JSON value as block-style YAML. Tests build configs with `json!` so that shell
/// scripts with quotes, `$$` and newlines need no hand-escaping; strings are written as
/// double-quoted scalars, whose escapes are a superset of JSON's.
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    emit_yaml(value, 0, &mut out);
    out
}

fn emit_yaml(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                out.push_str(&format!("{pad}{key}:"));
                emit_child(v, indent, out);
            }
        }
        Value::Array(items) => {
            for item in items {
                out.push_str(&format!("{pad}-"));
                emit_child(item, indent, out);
            }
        }
        scalar => out.push_str(&format!("{pad}{}\n", scalar_yaml(scalar))),
    }
}

/// Writes the value after a `key:` or `-`: inline when it is a scalar or empty, else as an
/// indented block on the following lines.
fn emit_child(value: &Value, indent: usize, out: &mut String) {
    match value {
        Value::Object(m) if m.is_empty() => out.push_str(" {}\n"),
        Value::Array(a) if a.is_empty() => out.push_str(" []\n"),
        Value::Object(_) | Value::Array(_) => {
            out.push('\n');
            emit_yaml(value, indent + 2, out);
        }
        scalar => out.push_str(&format!(" {}\n", scalar_yaml(scalar))),
    }
}

fn scalar_yaml(value: &Value) -> String {
    // serde_json's string form is a valid YAML double-quoted scalar.
    value.to_string()
}

/// An action running `script` with `sh -c`, titled after its id.
pub fn shell_action(id: &str, script: &str) -> Value {
    json!({"id": id, "title": format!("Title {id}"), "shell": script})
}

/// A link key for plain GET starts (`?key=`), and its SHA-256 for `linkKeySha256`.
pub const LINK_KEY: &str = "test-link-key-0123456789abcdef";
pub const LINK_KEY_SHA256: &str =
    "4c84028385594d8ddeb3b53b7d55d63e0a99dd17208cc6d5cd943f59bf8da0b4";

/// `action` with the test link key: a plain GET with `?key=LINK_KEY` starts it.
pub fn keyed(mut action: Value) -> Value {
    action["linkKeySha256"] = json!(LINK_KEY_SHA256);
    action
}

/// `GET path?key=LINK_KEY`: a plain GET start of an action made with `keyed`.
pub fn keyed_get(path: &str) -> client::Request {
    client::Request::get(&format!("{path}?key={LINK_KEY}"))
}

/// A config with the test defaults (a 1 s kill grace period keeps the ladder tests fast) and
/// the given actions.
pub fn config_with(actions: Vec<Value>) -> Value {
    json!({"killGracePeriod": 1, "actions": actions})
}

// ---------------------------------------------------------------------------------------
// The server

/// One running `actiond`, killed and reaped on drop.
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
    dir: TempDir,
    /// Everything actiond printed so far.
    log: Arc<Mutex<String>>,
    readers: Vec<thread::JoinHandle<()>>,
}

impl Server {
    /// Writes `config` (as YAML) into a fresh temp dir and starts the binary on it.
    pub fn start(config: Value) -> Server {
        Server::start_yaml(&to_yaml(&config))
    }

    /// Starts the binary on a config given as YAML text.
    pub fn start_yaml(yaml: &str) -> Server {
        Server::start_yaml_as(yaml, None)
    }

    /// `start_yaml`, naming the config on the command line as `config_arg` (relative to the
    /// service's working directory, the temp dir) instead of by its absolute path.
    pub fn start_yaml_as(yaml: &str, config_arg: Option<&str>) -> Server {
        Server::start_yaml_env(yaml, config_arg, &[])
    }

    /// `start`, with these variables added to the service's environment.
    pub fn start_env(config: Value, env: &[(&str, &str)]) -> Server {
        Server::start_yaml_env(&to_yaml(&config), None, env)
    }

    /// `start_env`, started through `wrapper` (a command that ends by running the binary
    /// with the arguments it is given, e.g. `setpriv … --`), with the config directory
    /// writable by anyone, for a service that runs as another user.
    pub fn start_wrapped(config: Value, env: &[(&str, &str)], wrapper: &[&str]) -> Server {
        Server::launch(&to_yaml(&config), None, env, wrapper, LOOPBACK)
    }

    /// `start`, listening on `listen` (`[::]:0` for a test of IPv6 clients) instead of
    /// 127.0.0.1.
    pub fn start_listening(config: Value, listen: &str) -> Server {
        Server::launch(&to_yaml(&config), None, &[], &[], listen)
    }

    fn start_yaml_env(yaml: &str, config_arg: Option<&str>, env: &[(&str, &str)]) -> Server {
        Server::launch(yaml, config_arg, env, &[], LOOPBACK)
    }

    /// `start_yaml`, with `meanwhile` run (given the config's directory) as soon as the
    /// service has logged a line holding `after`, while its log is not read: a service with
    /// more than a pipe's worth (64 KiB) to log after that line stops at its next write
    /// until `meanwhile` is done. What a test does there happens, deterministically, between
    /// what the service did before that line and what it does after its output.
    pub fn start_held_at(yaml: &str, after: &str, meanwhile: impl FnOnce(&Path)) -> Server {
        let (mut child, dir) = Server::spawn(yaml, None, &[], &[], LOOPBACK);
        let log = Arc::new(Mutex::new(String::new()));
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr pipe"));
        let mut line = String::new();
        loop {
            line.clear();
            match stderr.read_line(&mut line) {
                Ok(0) | Err(_) => panic!(
                    "actiond never logged {after:?}; its log:\n{}",
                    log.lock().unwrap()
                ),
                Ok(_) => log.lock().unwrap().push_str(&line),
            }
            if line.contains(after) {
                break;
            }
        }
        meanwhile(dir.path());
        Server::attach(child, dir, stderr, log)
    }

    fn launch(
        yaml: &str,
        config_arg: Option<&str>,
        env: &[(&str, &str)],
        wrapper: &[&str],
        listen: &str,
    ) -> Server {
        let (mut child, dir) = Server::spawn(yaml, config_arg, env, wrapper, listen);
        let stderr = child.stderr.take().expect("stderr pipe");
        Server::attach(child, dir, stderr, Arc::default())
    }

    /// Writes the config and starts the binary on it, its output piped.
    fn spawn(
        yaml: &str,
        config_arg: Option<&str>,
        env: &[(&str, &str)],
        wrapper: &[&str],
        listen: &str,
    ) -> (Child, TempDir) {
        let dir = TempDir::new();
        let config_path = dir.path().join("config.yaml");
        std::fs::write(&config_path, yaml).expect("write config");
        let mut command = match wrapper.split_first() {
            Some((program, args)) => {
                use std::os::unix::fs::PermissionsExt;
                let open = std::fs::Permissions::from_mode(0o777);
                std::fs::set_permissions(dir.path(), open).expect("chmod the config dir");
                let mut c = Command::new(program);
                c.args(args).arg(BIN);
                c
            }
            None => Command::new(BIN),
        };
        let child = command
            .arg("--config")
            .arg(config_arg.map_or(config_path.as_os_str(), std::ffi::OsStr::new))
            .arg("--listen")
            .arg(listen)
            .current_dir(dir.path())
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn actiond");
        (child, dir)
    }

    /// Forwards the output of the started `child` (what it logged so far in `log`) and waits
    /// for its address.
    fn attach(
        mut child: Child,
        dir: TempDir,
        stderr: impl Read + Send + 'static,
        log: Arc<Mutex<String>>,
    ) -> Server {
        let (addr_tx, addr_rx) = mpsc::channel();
        let stdout = child.stdout.take().expect("stdout pipe");
        let readers = vec![
            forward(stderr, "[actiond] ", Arc::clone(&log), Some(addr_tx)),
            forward(stdout, "[actiond stdout] ", Arc::clone(&log), None),
        ];

        let addr = match addr_rx.recv_timeout(STARTUP_TIMEOUT) {
            Ok(addr) => addr,
            Err(_) => {
                let _ = child.kill();
                let status = child.wait();
                panic!(
                    "actiond did not report `listening on` within {STARTUP_TIMEOUT:?} \
                     (exit: {status:?}); its log:\n{}",
                    log.lock().unwrap()
                );
            }
        };
        Server {
            child,
            addr,
            dir,
            log,
            readers,
        }
    }

    /// SIGTERM, wait for the exit and for the last lines, and return everything actiond
    /// printed (for tests about what the service logs).
    pub fn stop_and_log(mut self) -> String {
        self.signal(Signal::SIGTERM);
        if self.wait_exit(DROP_GRACE).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        for reader in self.readers.drain(..) {
            let _ = reader.join();
        }
        self.log.lock().unwrap().clone()
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Whether actiond has logged `needle` so far (for waiting until it is ready for a test).
    pub fn log_contains(&self, needle: &str) -> bool {
        self.log.lock().unwrap().contains(needle)
    }

    /// Whether actiond logs `needle` within `SOON`: a line written just before a response
    /// reaches the test through the log's reader thread, which may be a moment behind it.
    /// For what must be there; `log_contains` is for what must not.
    pub fn log_shows(&self, needle: &str) -> bool {
        wait_until(SOON, || self.log_contains(needle))
    }

    /// How many times actiond has logged `needle` so far.
    pub fn log_count(&self, needle: &str) -> usize {
        self.log.lock().unwrap().matches(needle).count()
    }

    /// The config directory, also the working directory of every command.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A file in the config directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A new keep-alive connection to the server.
    pub fn conn(&self) -> Conn {
        Conn::open(self.addr)
    }

    /// Calls a Connect operation on a fresh connection: (HTTP status, parsed JSON body).
    pub fn call(&self, op: &str, body: Value) -> (u16, Value) {
        client::connect_json(self.addr, op, &body)
    }

    /// Calls an operation that must succeed and returns its JSON body.
    pub fn ok(&self, op: &str, body: Value) -> Value {
        let (status, json) = self.call(op, body.clone());
        assert_eq!(status, 200, "{op} {body} answered {status}: {json}");
        json
    }

    /// StartActionAndWait of `action_id` that must succeed; returns the log entry.
    pub fn run(&self, action_id: &str) -> Value {
        let reply = self.ok("StartActionAndWait", json!({"actionId": action_id}));
        reply["logEntry"].clone()
    }

    /// StartAction of `action_id` that must succeed; returns the tracking id.
    pub fn start_action(&self, action_id: &str) -> String {
        let reply = self.ok("StartAction", json!({"actionId": action_id}));
        reply["executionTrackingId"]
            .as_str()
            .expect("executionTrackingId is a string")
            .to_string()
    }

    /// The current log entry of an execution.
    pub fn status(&self, tracking_id: &str) -> Value {
        let reply = self.ok(
            "ExecutionStatus",
            json!({"executionTrackingId": tracking_id}),
        );
        reply["logEntry"].clone()
    }

    /// Polls ExecutionStatus until the execution's process has been spawned; panics after
    /// `SOON`. Returns its entry.
    pub fn wait_started(&self, tracking_id: &str) -> Value {
        let mut entry = Value::Null;
        let started = wait_until(SOON, || {
            entry = self.status(tracking_id);
            entry["executionStarted"] == json!(true)
        });
        assert!(started, "execution {tracking_id} never started: {entry}");
        entry
    }

    /// Polls ExecutionStatus until the execution is finished; panics after `timeout`.
    pub fn wait_finished(&self, tracking_id: &str, timeout: Duration) -> Value {
        let mut entry = Value::Null;
        let finished = wait_until(timeout, || {
            entry = self.status(tracking_id);
            entry["executionFinished"] == json!(true)
        });
        assert!(
            finished,
            "execution {tracking_id} not finished after {timeout:?}: {entry}"
        );
        entry
    }

    /// Sends a signal to the service itself.
    pub fn signal(&self, signal: Signal) {
        kill(Pid::from_raw(self.pid()), signal).expect("signal actiond");
    }

    /// Stops the service as systemd does (SIGTERM) and waits for it to exit, so that a test
    /// can start another one on the same state directory; panics if it does not exit.
    pub fn stop(mut self) -> ExitStatus {
        self.signal(Signal::SIGTERM);
        self.wait_exit(DROP_GRACE)
            .unwrap_or_else(|| panic!("actiond did not exit within {DROP_GRACE:?} of SIGTERM"))
    }

    /// Waits up to `timeout` for the service to exit; `None` if it is still running.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        exited(&mut self.child, timeout)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = kill(Pid::from_raw(self.pid()), Signal::SIGTERM);
            if self.wait_exit(DROP_GRACE).is_none() {
                let _ = self.child.kill();
                let _ = self.child.wait();
            }
        }
    }
}

/// Forwards each line of `pipe` to the test's stderr with `prefix` and into `log` (shown if
/// the service fails to start); the first `listening on http://ADDR` line sends ADDR on
/// `addr_tx`. Runs until the pipe closes, so the service never blocks on a full pipe.
fn forward(
    pipe: impl Read + Send + 'static,
    prefix: &'static str,
    log: Arc<Mutex<String>>,
    mut addr_tx: Option<mpsc::Sender<SocketAddr>>,
) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        let mut reader = BufReader::new(pipe);
        let mut raw = Vec::new();
        loop {
            raw.clear();
            match reader.read_until(b'\n', &mut raw) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let line = String::from_utf8_lossy(&raw);
            let line = line.trim_end_matches(['\r', '\n']);
            eprintln!("{prefix}{line}");
            {
                let mut log = log.lock().unwrap();
                log.push_str(line);
                log.push('\n');
            }
            if let Some(addr) = listening_address(line)
                && let Some(tx) = addr_tx.take()
            {
                let _ = tx.send(addr);
            }
        }
    })
}

/// The address in a `listening on http://ADDR` log line (`1.2.3.4:5` or `[::]:5`).
fn listening_address(line: &str) -> Option<SocketAddr> {
    const MARK: &str = "listening on http://";
    let start = line.find(MARK)? + MARK.len();
    let rest = &line[start..];
    let end = rest
        .find(|c: char| !(c.is_ascii_hexdigit() || ".:[]".contains(c)))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

// ---------------------------------------------------------------------------------------
// Other ways of running the binary

/// Output of a run of the binary that is expected to end by itself.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the binary with `args`, killing it if it runs longer than `timeout`.
pub fn run_binary(args: &[&str], cwd: &Path, timeout: Duration) -> Finished {
    run_binary_with_stdin(args, cwd, timeout, None)
}

/// The same, with `stdin` written to the binary's standard input (then closed); `None`
/// gives it /dev/null.
pub fn run_binary_with_stdin(
    args: &[&str],
    cwd: &Path,
    timeout: Duration,
    stdin: Option<&str>,
) -> Finished {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn actiond");
    // Written from a thread and then dropped, so the child sees EOF, and a child that never
    // reads cannot block the test on a full pipe.
    let writer = stdin.map(|text| {
        let mut input = child.stdin.take().expect("stdin pipe");
        let text = text.to_string();
        thread::spawn(move || {
            let _ = input.write_all(text.as_bytes());
        })
    });
    let stdout = read_all_in_thread(child.stdout.take().expect("stdout pipe"));
    let stderr = read_all_in_thread(child.stderr.take().expect("stderr pipe"));
    let Some(status) = exited(&mut child, timeout) else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("actiond {args:?} still running after {timeout:?}");
    };
    if let Some(w) = writer {
        w.join().expect("stdin writer");
    }
    Finished {
        status,
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    }
}

/// The names of the files in `dir`, sorted: an interpreted value would leave one behind
/// (a marker, or the target of a redirection).
pub fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| {
            e.expect("dir entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

fn read_all_in_thread(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    })
}

// ---------------------------------------------------------------------------------------
// /proc

/// The fields of `/proc/<pid>/stat` the tests look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: i32,
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
}

/// Parses `/proc/<pid>/stat`; `None` once the process is gone (reaped).
pub fn proc_stat(pid: i32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

fn parse_stat(text: &str) -> Option<ProcStat> {
    // `pid (comm) state ppid pgrp ...`: comm may hold spaces and parentheses, so split after
    // the last `)`.
    let open = text.find(" (")?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let mut rest = text[close + 1..].split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    let pgrp = rest.next()?.parse().ok()?;
    Some(ProcStat {
        pid,
        state,
        ppid,
        pgrp,
    })
}

/// Every process currently visible in /proc.
pub fn all_processes() -> Vec<ProcStat> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(proc_stat)
        .collect()
}

/// The processes whose process group is `pgid`, zombies included (a zombie is a leak too).
pub fn group_members(pgid: i32) -> Vec<ProcStat> {
    all_processes()
        .into_iter()
        .filter(|p| p.pgrp == pgid)
        .collect()
}

/// Children of `ppid` that are zombies (exited, not reaped).
pub fn zombie_children(ppid: i32) -> Vec<ProcStat> {
    all_processes()
        .into_iter()
        .filter(|p| p.ppid == ppid && p.state == 'Z')
        .collect()
}

/// The live processes whose environment holds `ACTIOND_TRACKING_ID=<tracking_id>`: the
/// execution's marker, which `setsid` and double forks keep.
pub fn marked_processes(tracking_id: &str) -> Vec<ProcStat> {
    let needle = format!("ACTIOND_TRACKING_ID={tracking_id}");
    all_processes()
        .into_iter()
        .filter(|p| {
            std::fs::read(format!("/proc/{}/environ", p.pid))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|e| e == needle.as_bytes()))
        })
        .collect()
}

/// Number of open file descriptors of `pid`.
pub fn fd_count(pid: i32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("read /proc/<pid>/fd")
        .count()
}

/// A `Vm*` figure (e.g. `VmRSS`, `VmHWM`) of `/proc/<pid>/status`, in KiB.
pub fn vm_kib(pid: i32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read status");
    status
        .lines()
        .find_map(|line| {
            let value = line.strip_prefix(field)?.strip_prefix(':')?;
            value.split_whitespace().next()?.parse().ok()
        })
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// The bound of a background load that runs until its test sets a flag: only a hang
/// detector.
pub const UNTIL_STOPPED: Duration = Duration::from_secs(3600);

/// How often `poll_until` and `wait_until` look.
const POLL: Duration = Duration::from_millis(10);

/// Polls `cond` every 10 ms until it holds or `timeout` passes; returns whether it held.
pub fn wait_until(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    poll_until(timeout, || cond().then_some(())).is_some()
}

/// Polls `f` every 10 ms until it gives a value or `timeout` passes.
pub fn poll_until<T>(timeout: Duration, f: impl FnMut() -> Option<T>) -> Option<T> {
    poll_every(POLL, timeout, f)
}

/// Calls `f` every `gap` until it gives a value or `timeout` passes; `None` then. This is
/// where every wait of tests/it for a condition lands (with `wait_until`, `poll_until`,
/// `repeat_for`): what a test waits for (another process's exit, a file it writes, its
/// /proc entries, its log, a broker's retained message) gives no event a test could block
/// on.
pub fn poll_every<T>(
    gap: Duration,
    timeout: Duration,
    mut f: impl FnMut() -> Option<T>,
) -> Option<T> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        // Wall time, because what is polled lives outside this process (see above).
        thread::sleep(gap.min(deadline.saturating_duration_since(Instant::now())));
    }
}

/// Calls `f` every `gap` for `period` of wall time, or until it says stop (`false`): a load
/// or a probe that is defined by how long it lasts (a slow client's bytes, readiness asked
/// all through an attack, memory sampled while a run floods its output). Returns how many
/// times `f` was called.
pub fn repeat_for(period: Duration, gap: Duration, mut f: impl FnMut() -> bool) -> usize {
    let mut calls = 0;
    let _ = poll_every(gap, period, || {
        calls += 1;
        (!f()).then_some(())
    });
    calls
}

/// Waits up to `timeout` for `child` to exit.
pub fn exited(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    poll_until(timeout, || child.try_wait().expect("try_wait"))
}

/// Waits until no process of group `pgid` is left, zombies included; panics with what is
/// left otherwise.
pub fn assert_group_gone(pgid: i32) {
    let gone = wait_until(SOON, || group_members(pgid).is_empty());
    assert!(
        gone,
        "processes of group {pgid} survive (state Z = unreaped zombie): {:?}",
        group_members(pgid)
    );
}

/// Waits for a script to write a pid into `path` and returns it.
pub fn read_pid_file(path: &Path, timeout: Duration) -> i32 {
    let mut pid = None;
    let found = wait_until(timeout, || {
        pid = std::fs::read_to_string(path)
            .ok()
            .and_then(|text| text.trim().parse().ok());
        pid.is_some()
    });
    assert!(found, "no pid in {} after {timeout:?}", path.display());
    pid.unwrap_or_default()
}

/// SIGKILLs a process group on drop: cleanup for groups a test started, whatever the
/// service did with them.
pub struct GroupGuard(pub i32);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.0 > 1 {
            let _ = killpg(Pid::from_raw(self.0), Signal::SIGKILL);
        }
    }
}

/// SIGKILLs a single process on drop.
pub struct PidGuard(pub i32);

impl Drop for PidGuard {
    fn drop(&mut self) {
        if self.0 > 1 {
            let _ = kill(Pid::from_raw(self.0), Signal::SIGKILL);
        }
    }
}

#[test]
fn harness_parses_listening_line() {
    assert_eq!(
        listening_address("2024 INFO actiond: listening on http://127.0.0.1:4321 (config x)"),
        Some("127.0.0.1:4321".parse().unwrap())
    );
    assert_eq!(
        listening_address("INFO actiond: listening on http://[::]:4321 (config x)"),
        Some("[::]:4321".parse().unwrap())
    );
    assert_eq!(listening_address("starting"), None);
}

#[test]
fn harness_parses_proc_stat_with_odd_comm() {
    let stat = parse_stat("42 (a) b (c)) S 7 40 40 0 -1").unwrap();
    assert_eq!(
        stat,
        ProcStat {
            pid: 42,
            state: 'S',
            ppid: 7,
            pgrp: 40
        }
    );
}

#[test]
fn harness_yaml_renders_nested_values() {
    let yaml = to_yaml(&json!({"a": 1, "b": [{"c": "x\"y", "d": []}], "e": {}}));
    assert_eq!(yaml, "a: 1\nb:\n  -\n    c: \"x\\\"y\"\n    d: []\ne: {}\n");
}

/// A command that runs until the test creates `go` in the config directory, so a run holds
/// its place exactly as long as the test needs, however fast the machine is.
pub const GATED: &str = "while [ ! -e go ]; do sleep 0.01; done";

/// The `actiond:` notice lines of an entry's stderr.
pub fn notices(entry: &Value) -> Vec<String> {
    entry["stderr"]
        .as_str()
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("actiond:"))
        .map(str::to_string)
        .collect()
}

/// The tracking id in a successful start answer (StartAction, a GET start).
pub fn started_id(resp: &Response) -> String {
    assert_eq!(resp.status, 200, "{}", resp.text());
    resp.json()["executionTrackingId"]
        .as_str()
        .expect("executionTrackingId is a string")
        .to_string()
}

/// Asserts the blocked row of the LogEntry state table (not started, finished, exit code -1,
/// no output, a finish time) and returns its one `actiond: blocked:` notice line.
pub fn assert_blocked(entry: &Value) -> String {
    client::assert_entry_shape(entry);
    assert_eq!(entry["blocked"], true, "{entry}");
    assert_eq!(entry["executionStarted"], false, "{entry}");
    assert_eq!(entry["executionFinished"], true, "{entry}");
    assert_eq!(entry["timedOut"], false, "{entry}");
    assert_eq!(entry["exitCode"], -1, "{entry}");
    assert_eq!(
        entry["stdout"], "",
        "a blocked run printed nothing: {entry}"
    );
    assert!(
        !entry["datetimeFinished"]
            .as_str()
            .unwrap_or_default()
            .is_empty(),
        "a blocked entry is finished, so it has a finish time: {entry}"
    );
    let reasons: Vec<String> = notices(entry)
        .into_iter()
        .filter(|l| l.starts_with("actiond: blocked: "))
        .collect();
    assert_eq!(
        reasons.len(),
        1,
        "one `actiond: blocked:` line expected: {entry}"
    );
    reasons[0].clone()
}

/// Sends each request on its connection, all at the same moment (one thread each, released
/// together once every connection is open, so no handshake comes after the start), and
/// returns the answers in the order given.
pub fn send_together(calls: Vec<(Conn, client::Request)>) -> Vec<Response> {
    let barrier = Arc::new(std::sync::Barrier::new(calls.len()));
    let threads: Vec<_> = calls
        .into_iter()
        .map(|(mut conn, req)| {
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                barrier.wait();
                conn.send(&req)
            })
        })
        .collect();
    threads
        .into_iter()
        .map(|t| t.join().expect("a caller thread"))
        .collect()
}

/// Writes `text` to `path`, naming the file in the panic.
pub fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// Replaces `path` by a rename, as dpkg, editors, Ansible and actiond-board do: the text is
/// written beside it first, so a reader never sees half of it.
pub fn replace(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp-new");
    write(&tmp, text);
    std::fs::rename(&tmp, path).unwrap_or_else(|e| panic!("rename to {}: {e}", path.display()));
}

/// Presses `action` as a guest with `value` for argument `argument`, beside a directory
/// `victim/` holding a file, and says whether `victim/data` is gone: whether the value became
/// the arguments `-r victim` of the action's `rm` (the attacks' probe of a split value).
pub fn split_removes_victim(
    server: &Server,
    action: &str,
    argument: &str,
    value: &str,
) -> Option<String> {
    std::fs::create_dir_all(server.path("cache")).unwrap();
    std::fs::create_dir_all(server.path("victim")).unwrap();
    write(&server.path("victim/data"), "keep me\n");
    let (status, body) = server.call(
        "StartActionAndWait",
        serde_json::json!({"actionId": action,
                           "arguments": [{"name": argument, "value": value}]}),
    );
    (!server.path("victim/data").exists()).then(|| format!("HTTP {status}: {body}"))
}
