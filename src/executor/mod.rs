//! The executor: the only module that starts processes.
//!
//! `Plan` is the pure description of one run (argv, environment, directory, timeout), built
//! from an action and the execution's context. `launch` spawns the plan as the leader of a
//! new process group with stdin from /dev/null and two pipes (`spawn`: one `clone`, a few
//! system calls of ours in the child, one `execve`), then supervises it until the end, in
//! the task of the execution that awaits it: it reads both pipes into the record's bounded
//! captures, waits for the leader's exit status (from its pidfd, or from the reaper),
//! enforces the timeout and kill requests through the one kill ladder, applies the 250 ms
//! rule for backgrounded children, and returns how the run ended (the engine concludes the
//! record and shows the end once it is recorded). In cgroup mode (`cgroup`) each execution also gets a cgroup of its own,
//! which its process enters before it runs the command, so the ladder reaches what left the
//! process group. The executor knows nothing of actiond's users, HTTP or YAML; of system
//! users only the ids a command runs as (`runActionsAs`, resolved by the config).
//!
//! Where the processes come from is an [`Executor`]: the system's (`Arc<Reaper>`), or in unit
//! tests `fake`, a simulated process table on tokio's paused clock, under the same
//! supervision and the same ladder. The start is the executor's; everything after it (the
//! pipes read through [`Pipe`], the exit status from a channel, the ladder on a [`Group`])
//! is this module's, and generic: the service instantiates it for the system's executor only.

mod cgroup;
mod descendants;
#[cfg(test)]
pub mod fake;
mod ladder;
mod reaper;
mod spawn;

use std::future::Future;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::time::{Instant, sleep, sleep_until};

pub use cgroup::{Mode as Containment, mode as containment};
pub use ladder::{Group, Processes, terminate};
pub use reaper::{Exit, Reaper};
pub use spawn::signal;

use crate::arguments::{Value, environment};
use crate::config::{Action, CommandTemplate, RunAs};
use crate::entities::Instance;
use crate::execution::{Execution, KillReason, Outcome, SpawnError, Stop};
use crate::template::Placeholder;

/// How long an execution may wait for its pipes after the leader exited: a
/// command that starts a daemon with `&` leaves the daemon holding the pipes open.
pub const PIPE_DRAIN: Duration = Duration::from_millis(250);

/// The shell of `shell:` actions (run as `sh -c`).
pub const SHELL: &str = "/bin/sh";

/// At most this much is taken from a pipe after the 250 ms drain, so a daemon that keeps
/// writing cannot hold an execution open.
const FINAL_DRAIN_MAX: usize = 1024 * 1024;

/// Bytes read from a pipe at a time.
const READ_CHUNK: usize = 16 * 1024;

/// Everything needed to run one execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub program: String,
    pub args: Vec<String>,
    /// Added to the service's own environment.
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    pub timeout: Duration,
    pub grace: Duration,
    /// The user the command runs as (`runActionsAs`), when not actiond's own.
    pub user: Option<Arc<RunAs>>,
}

/// The plan for running `action` with validated argument `values` (and, for an entity
/// binding, its entity instance): the command template rendered (each value quoted for its
/// context in `shell:`, literal in `exec:`), and each argument value also in the
/// environment under its upper-cased name.
pub fn plan(
    action: &Action,
    base_dir: &Path,
    tracking_id: &str,
    user: &str,
    grace: Duration,
    values: &[Value],
    entity: Option<&Instance>,
) -> Plan {
    let lookup = |p: &Placeholder| match p {
        Placeholder::Argument(name) => values
            .iter()
            .find(|v| v.name == *name)
            .map(|v| v.value.clone()),
        Placeholder::Entity(field) => entity.and_then(|e| e.field(field)),
    };
    let (program, args) = match &action.template {
        // An absolute path: no PATH search (one execve instead of up to one per PATH entry),
        // and a strange PATH in the service's environment cannot change which shell runs.
        CommandTemplate::Shell(t) => (SHELL.to_string(), vec!["-c".to_string(), t.render(&lookup)]),
        CommandTemplate::Exec(argv) => match argv.split_first() {
            Some((first, rest)) => (
                first.render(&lookup),
                rest.iter().map(|t| t.render(&lookup)).collect(),
            ),
            None => (String::new(), Vec::new()),
        },
    };
    let cwd = match &action.working_directory {
        Some(dir) => base_dir.join(dir),
        None => base_dir.to_path_buf(),
    };
    Plan {
        program,
        args,
        env: [
            ("ACTIOND".to_string(), "1".to_string()),
            ("ACTIOND_TRACKING_ID".to_string(), tracking_id.to_string()),
            ("ACTIOND_USER".to_string(), user.to_string()),
        ]
        .into_iter()
        .chain(values.iter().flat_map(argument_variables))
        .collect(),
        cwd,
        timeout: action.timeout,
        grace,
        user: None,
    }
}

/// The one variable a value sets: `ACTIOND_ARG_<NAME>`, a name no program reads as its
/// settings (`arguments::environment`).
fn argument_variables(v: &Value) -> Option<(String, String)> {
    environment::prefixed(&v.name).map(|name| (name, v.value.clone()))
}

/// Linux refuses any single argument or environment string of this size or more
/// (MAX_ARG_STRLEN, 32 pages).
pub const MAX_ARG_BYTES: usize = 128 * 1024;

/// A bound on everything a plan adds to the command line and environment together, well
/// under the kernel's total (a quarter of the stack limit, 2 MiB by default) so that the
/// service's own environment still fits.
pub const MAX_PLAN_BYTES: usize = 1024 * 1024;

/// Why the kernel would refuse a plan's command line and environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TooLong {
    /// One string of this many bytes; the kernel takes less than `limit`.
    Part { len: usize, limit: usize },
    /// All of them together, this many bytes.
    Whole(usize),
}

impl std::fmt::Display for TooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TooLong::Part { len, limit } => write!(
                f,
                "with the arguments substituted, one part of the command is {len} bytes and the \
                 system takes less than {limit}: shorten the value, or have the command read \
                 it from its environment variable"
            ),
            TooLong::Whole(total) => write!(
                f,
                "with the arguments substituted, the command and its environment are {total} \
                 bytes; at most {MAX_PLAN_BYTES} are allowed: shorten the values"
            ),
        }
    }
}

impl std::error::Error for TooLong {}

/// Whether the kernel will accept the plan's command line and environment. Quoting can
/// make a value up to four times longer in a `shell:` command.
pub fn fits(plan: &Plan) -> Result<(), TooLong> {
    let strings = std::iter::once(plan.program.len())
        .chain(plan.args.iter().map(String::len))
        .chain(plan.env.iter().map(|(k, v)| k.len() + 1 + v.len()));
    let mut total = 0usize;
    let limit = MAX_ARG_BYTES;
    for len in strings {
        if len >= limit {
            return Err(TooLong::Part { len, limit });
        }
        total += len + 1;
    }
    if total > MAX_PLAN_BYTES {
        return Err(TooLong::Whole(total));
    }
    Ok(())
}

/// Where executions' processes come from: the system's (`Arc<Reaper>`: `spawn` starts them,
/// the reaper collects their statuses), or in unit tests a simulated process table (`fake`).
/// The engine takes it as a type parameter, not a trait object: the service is built for the
/// system's alone and calls it directly.
pub trait Executor: Send + Sync + 'static {
    /// What the kill ladder stops.
    type Group: Group + Clone + 'static;
    /// The read end of an output pipe.
    type Pipe: Pipe;

    /// Starts the plan's process, or gives the outcome of a run that could not start.
    fn start(
        &self,
        plan: Plan,
    ) -> impl Future<Output = Result<Spawned<Self::Group, Self::Pipe>, Outcome>> + Send;
}

/// The read end of one of a process's output pipes, as the supervision reads it.
pub trait Pipe: Send {
    /// Reads once into `buf`'s spare capacity: how much, 0 at end of file.
    fn read_into<'a>(
        &'a mut self,
        buf: &'a mut Vec<u8>,
    ) -> impl Future<Output = std::io::Result<usize>> + Send + 'a;

    /// Reads what the pipe holds now into `buf`'s spare capacity, without waiting.
    fn read_ready(&mut self, buf: &mut Vec<u8>) -> std::io::Result<usize>;
}

impl Pipe for pipe::Receiver {
    fn read_into<'a>(
        &'a mut self,
        buf: &'a mut Vec<u8>,
    ) -> impl Future<Output = std::io::Result<usize>> + Send + 'a {
        self.read_buf(buf)
    }

    fn read_ready(&mut self, buf: &mut Vec<u8>) -> std::io::Result<usize> {
        self.try_read_buf(buf)
    }
}

/// A process that was started and is not yet supervised.
pub struct Spawned<G, P> {
    /// Everything of the execution, for the kill ladder.
    target: G,
    /// Its output pipes; `None` for one that cannot be read, taken as already closed.
    stdout: Option<P>,
    stderr: Option<P>,
    /// Its exit status, from whoever reaps it.
    exit: tokio::sync::oneshot::Receiver<Exit>,
    /// Its cgroup, in cgroup mode, given back once the run is over.
    cgroup: Option<cgroup::Run>,
}

/// A process `spawn` started, its pipes not yet registered with the event loop.
struct Started {
    target: Processes,
    stdout: OwnedFd,
    stderr: OwnedFd,
    /// Its exit status, from the reaper.
    exit: tokio::sync::oneshot::Receiver<Exit>,
    /// Its cgroup, in cgroup mode, given back once the run is over.
    cgroup: Option<cgroup::Run>,
}

impl Started {
    /// Registers its pipes with the event loop, on the loop's thread. A pipe that cannot be
    /// registered is treated as already closed; the run still ends through the exit status,
    /// the timeout or a kill. `spawn` made them non-blocking read ends of pipes, so tokio
    /// need not check (`spawn::non_blocking`).
    fn registered(self) -> Spawned<Processes, pipe::Receiver> {
        Spawned {
            target: self.target,
            stdout: pipe::Receiver::from_owned_fd_unchecked(self.stdout).ok(),
            stderr: pipe::Receiver::from_owned_fd_unchecked(self.stderr).ok(),
            exit: self.exit,
            cgroup: self.cgroup,
        }
    }
}

/// Starts the plan's process (`spawn::spawn`: a new process group, stdin from /dev/null,
/// two pipes, the service's environment without systemd's notify variables plus the plan's,
/// inside `cgroup` in cgroup mode) under a reaper ticket (see the reaper's invariant).
/// Gives `cgroup` back when the spawn failed.
fn spawn(
    plan: &Plan,
    cgroup: Option<cgroup::Run>,
    reaper: &Reaper,
) -> (std::io::Result<Started>, Option<cgroup::Run>) {
    if plan.program.is_empty() {
        let error = std::io::Error::new(std::io::ErrorKind::InvalidInput, "empty command");
        return (Err(error), cgroup);
    }
    let ticket = reaper.begin_spawn();
    let procs = cgroup.as_ref().map(cgroup::Run::procs);
    let as_user = plan.user.as_deref().map(|u| spawn::Credentials {
        uid: u.uid,
        gid: u.gid,
        groups: &u.groups,
    });
    let env = with_user(&plan.env, plan.user.as_deref());
    let child = match spawn::spawn(&plan.program, &plan.args, &env, &plan.cwd, procs, as_user) {
        Ok(child) => child,
        Err(e) => {
            reaper.spawn_failed(ticket);
            return (Err(e), cgroup);
        }
    };
    let exit = reaper.end_spawn(ticket, child.pid);
    let tracking_id = plan
        .env
        .iter()
        .find(|(k, _)| k == "ACTIOND_TRACKING_ID")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    let started = Started {
        target: Processes {
            pgid: child.pid,
            tracking_id,
            cgroup: cgroup.as_ref().map(|c| c.path.clone()),
        },
        stdout: child.stdout,
        stderr: child.stderr,
        exit,
        cgroup,
    };
    (Ok(started), None)
}

/// The plan's environment, with `HOME`, `USER` and `LOGNAME` of the user it runs as when
/// that is not actiond's own (as `su` sets them): actiond's home is its state directory,
/// which that user may not enter.
fn with_user<'a>(
    env: &'a [(String, String)],
    user: Option<&RunAs>,
) -> std::borrow::Cow<'a, [(String, String)]> {
    let Some(user) = user else {
        return std::borrow::Cow::Borrowed(env);
    };
    let home = user.home.to_string_lossy().into_owned();
    let mut all = vec![
        ("HOME".to_string(), home),
        ("USER".to_string(), user.name.clone()),
        ("LOGNAME".to_string(), user.name.clone()),
    ];
    all.extend_from_slice(env);
    std::borrow::Cow::Owned(all)
}

/// Hears what an execution produces while it is supervised: every read from its pipes. The
/// engine publishes events from it.
pub trait Observer: Send {
    fn output(&mut self, exec: &Execution, stderr: bool, data: &[u8]);
}

/// Starts `plan` for `exec` with `executor` and supervises it until it ends: how it did,
/// `SpawnFailed` when it could not start.
///
/// The record counts as running from here on: a kill requested before the process exists
/// is kept by the record and carried out as soon as supervision starts.
pub async fn run<X: Executor>(
    plan: Plan,
    exec: &Execution,
    executor: &X,
    observer: &mut dyn Observer,
) -> Outcome {
    exec.set_running();
    let (timeout, grace) = (plan.timeout, plan.grace);
    let mut spawned = match executor.start(plan).await {
        Ok(spawned) => spawned,
        Err(never_started) => return never_started,
    };
    let cgroup = spawned.cgroup.take();
    let outcome = supervise(exec, spawned, timeout, grace, observer).await;
    if let Some(run) = cgroup {
        cgroup::release(run);
    }
    outcome
}

/// The system's processes: started by `spawn`, their statuses collected by this reaper.
///
/// Under load the spawn runs on tokio's blocking pool. posix_spawn's vfork holds the calling
/// thread until the child has exec'd, a fraction of a millisecond on an idle machine and
/// over a millisecond on a busy one; on the service's one thread that capped every
/// workload at one start per hold, however many cores there are (docs/PERFORMANCE.md).
/// When nothing else runs, the spawn happens right here instead: the hold delays nobody's
/// output or exit, and the hand-off to a pool thread and back costs about 40 µs, a sixth of
/// actiond's own latency per run (measured single-client, docs/PERFORMANCE.md). On a board
/// with one core (a Pi Zero) it always happens here: the child must run on that core to
/// exec, so a pool thread would only add its hand-off, two context switches and a wake-up
/// of the event loop to every run, for nothing in return.
impl Executor for Arc<Reaper> {
    type Group = Processes;
    type Pipe = pipe::Receiver;

    async fn start(&self, plan: Plan) -> Result<Spawned<Processes, pipe::Receiver>, Outcome> {
        let started = if self.is_idle() || one_core() {
            Ok(launch(plan, self))
        } else {
            let reaper = Arc::clone(self);
            tokio::task::spawn_blocking(move || launch(plan, &reaper)).await
        };
        match started {
            Ok((_, Ok(started))) => Ok(started.registered()),
            Ok((plan, Err(e))) => Err(Outcome::SpawnFailed(
                match e
                    .get_ref()
                    .and_then(|inner| inner.downcast_ref::<spawn::NoWorkingDirectory>())
                {
                    Some(cwd) => SpawnError::WorkingDirectory {
                        dir: cwd.dir.display().to_string(),
                        said: cwd.error.to_string(),
                    },
                    None if plan.program.is_empty() => SpawnError::EmptyCommand,
                    None => SpawnError::refused(&plan.program, &e),
                },
            )),
            // The closure cannot panic short of a bug.
            Err(_) => Err(Outcome::SpawnFailed(SpawnError::SpawnerLost)),
        }
    }
}

/// Whether the service may run on one CPU only (its affinity mask, or its cgroup's CPU
/// quota, as the standard library reads them), asked once.
fn one_core() -> bool {
    static ONE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ONE.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() == 1))
}

/// Spawns the plan's process, in a cgroup of its own in cgroup mode; gives the plan back.
fn launch(plan: Plan, reaper: &Reaper) -> (Plan, std::io::Result<Started>) {
    let (started, unused) = spawn(&plan, cgroup::create(), reaper);
    if let Some(run) = unused {
        cgroup::release(run);
    }
    (plan, started)
}

type Ladder = Pin<Box<dyn Future<Output = Stop> + Send>>;

/// Why the supervisor started the kill ladder.
enum Cause {
    Timeout,
    Kill(KillReason),
}

/// Supervises a started process to its end: its output read as it comes, its exit status,
/// the timeout and kill requests through the kill ladder (with `grace`), the 250 ms rule.
async fn supervise<G: Group + Clone + 'static, P: Pipe>(
    exec: &Execution,
    spawned: Spawned<G, P>,
    timeout: Duration,
    grace: Duration,
    observer: &mut dyn Observer,
) -> Outcome {
    let target = spawned.target;
    let mut exit_rx = spawned.exit;
    let mut out = spawned.stdout;
    let mut err = spawned.stderr;
    // Reserved, not zeroed: reads fill the spare capacity and each chunk is taken and
    // cleared at once. Zeroing 2 × 16 KiB was an eighth of the service's own instructions
    // per execution of a command that prints a line (callgrind, docs/PERFORMANCE.md).
    let mut out_buf = Vec::with_capacity(READ_CHUNK);
    let mut err_buf = Vec::with_capacity(READ_CHUNK);

    let deadline = sleep(timeout);
    tokio::pin!(deadline);
    let drain = sleep_until(Instant::now() + Duration::from_secs(86_400 * 365));
    tokio::pin!(drain);

    let mut exit: Option<Exit> = None;
    let mut drained = false;
    let mut stopped_by: Option<Cause> = None;
    let mut ladder: Option<Ladder> = None;
    let mut ladder_done: Option<Stop> = None;

    loop {
        let pipes_closed = out.is_none() && err.is_none();
        let ladder_settled = ladder.is_none() || ladder_done.is_some();
        if exit.is_some() && ladder_settled && (pipes_closed || drained) {
            break;
        }
        tokio::select! {
            r = read_some(&mut out, &mut out_buf), if out.is_some() => match r {
                Some(()) => deliver(exec, observer, false, &mut out_buf),
                None => out = None,
            },
            r = read_some(&mut err, &mut err_buf), if err.is_some() => match r {
                Some(()) => deliver(exec, observer, true, &mut err_buf),
                None => err = None,
            },
            status = &mut exit_rx, if exit.is_none() => {
                // A dropped sender would mean the reaper lost the pid; treat it as a kill.
                exit = Some(status.unwrap_or(Exit::Signal(nix::sys::signal::Signal::SIGKILL as i32)));
                // Most commands have closed their pipes by now, and then the loop ends without
                // the timer: arming it would wake the runtime's driver (tokio unparks it for a
                // timer sooner than its next wake-up), a system call and a turn of the loop.
                if out.is_some() || err.is_some() {
                    drain.as_mut().reset(Instant::now() + PIPE_DRAIN);
                }
            }
            _ = &mut drain, if exit.is_some() && !drained => drained = true,
            _ = &mut deadline, if stopped_by.is_none() && exit.is_none() => {
                stopped_by = Some(Cause::Timeout);
                ladder = Some(Box::pin(terminate(target.clone(), grace)));
            }
            reason = exec.kill_requested(), if stopped_by.is_none() => {
                stopped_by = Some(Cause::Kill(reason));
                ladder = Some(Box::pin(terminate(target.clone(), grace)));
            }
            stop = async { ladder.as_mut().expect("guarded").await }, if ladder.is_some() && ladder_done.is_none() => {
                ladder_done = Some(stop);
            }
        }
    }
    if drained {
        // The 250 ms passed with a pipe still open (a backgrounded child holds it). What the
        // leader wrote is already in the pipe, since it cannot exit before its writes land:
        // take what is buffered without waiting, so the record is not cut short.
        take_buffered(exec, observer, &mut out, &mut out_buf, false);
        take_buffered(exec, observer, &mut err, &mut err_buf, true);
    }
    // Closing our read ends here: a daemon left holding the pipes gets EPIPE, not a hang.
    drop(out);
    drop(err);
    outcome(
        timeout,
        stopped_by,
        exit,
        ladder_done.unwrap_or(Stop::AlreadyGone),
    )
}

/// Hands a chunk read from the process to its record and its observer, and empties `buf`.
fn deliver(exec: &Execution, observer: &mut dyn Observer, stderr: bool, buf: &mut Vec<u8>) {
    if stderr {
        exec.push_stderr(buf);
    } else {
        exec.push_stdout(buf);
    }
    observer.output(exec, stderr, buf);
    buf.clear();
}

/// Delivers what a pipe holds now, without waiting, up to `FINAL_DRAIN_MAX` bytes.
fn take_buffered<P: Pipe>(
    exec: &Execution,
    observer: &mut dyn Observer,
    pipe: &mut Option<P>,
    buf: &mut Vec<u8>,
    stderr: bool,
) {
    let mut taken = 0;
    while let Some(p) = pipe.as_mut() {
        match p.read_ready(buf) {
            Ok(n) if n > 0 && taken < FINAL_DRAIN_MAX => {
                taken += n;
                deliver(exec, observer, stderr, buf);
            }
            _ => break,
        }
    }
}

/// How a supervised run ended: the ladder's cause wins over the exit status it caused.
fn outcome(
    timeout: Duration,
    stopped_by: Option<Cause>,
    exit: Option<Exit>,
    stop: Stop,
) -> Outcome {
    match (stopped_by, exit) {
        (Some(Cause::Timeout), _) => Outcome::TimedOut {
            seconds: timeout.as_secs(),
            stop,
        },
        (Some(Cause::Kill(reason)), _) => Outcome::Killed(reason, stop),
        (None, Some(Exit::Code(code))) => Outcome::Exited(code),
        (None, Some(Exit::Signal(sig))) => Outcome::Signalled(sig),
        // The loop only ends once the exit status arrived.
        (None, None) => Outcome::Killed(KillReason::Shutdown, stop),
    }
}

/// Reads once into `buf`'s spare capacity (`buf` is empty and holds `READ_CHUNK`, so a read
/// takes at most that much); `None` at end of file or on an error (both mean: stop reading
/// this pipe).
async fn read_some<P: Pipe>(p: &mut Option<P>, buf: &mut Vec<u8>) -> Option<()> {
    match p.as_mut()?.read_into(buf).await {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::tests::action;
    use crate::template::Template;

    fn with_shell(text: &str) -> Action {
        let mut a = (*action("x")).clone();
        a.template = CommandTemplate::Shell(Template::shell(text).unwrap());
        a
    }

    fn value(name: &str, value: &str) -> Value {
        Value {
            name: name.into(),
            value: value.into(),
            secret: false,
        }
    }

    #[test]
    fn shell_actions_run_through_bin_sh_c() {
        let a = with_shell("echo 'a b' | wc -c");
        let p = plan(
            &a,
            Path::new("/etc"),
            "tid",
            "alice",
            Duration::from_secs(3),
            &[],
            None,
        );
        assert_eq!(p.program, "/bin/sh");
        assert_eq!(p.args, ["-c", "echo 'a b' | wc -c"]);
        assert_eq!(p.cwd, Path::new("/etc"));
        assert_eq!(p.timeout, Duration::from_secs(30));
        assert!(p.env.contains(&("ACTIOND".into(), "1".into())));
        assert!(
            p.env
                .contains(&("ACTIOND_TRACKING_ID".into(), "tid".into()))
        );
        assert!(p.env.contains(&("ACTIOND_USER".into(), "alice".into())));
    }

    #[test]
    fn values_are_quoted_into_the_command_and_set_in_the_environment() {
        let a = with_shell("ping -c {{ count }} \"{{ host }}\"");
        let values = [value("count", "3"), value("host", "a\"b$(x)")];
        let p = plan(&a, Path::new("/"), "t", "u", Duration::ZERO, &values, None);
        assert_eq!(p.args[1], "ping -c '3' \"a\\\"b\\$(x)\"");
        assert!(p.env.contains(&("ACTIOND_ARG_COUNT".into(), "3".into())));
        assert!(
            p.env
                .contains(&("ACTIOND_ARG_HOST".into(), "a\"b$(x)".into()))
        );
        // No other variable carries a value: a program reads none as its settings.
        assert!(!p.env.iter().any(|(n, _)| n == "COUNT" || n == "HOST"));
    }

    #[test]
    fn entity_fields_are_quoted_like_values() {
        let a = with_shell("ping {{ .CurrentEntity.host }}");
        let file = crate::entities::parse("- {id: s1, host: \"x'; id\"}\n", "e.yaml").unwrap();
        let p = plan(
            &a,
            Path::new("/"),
            "t",
            "u",
            Duration::ZERO,
            &[],
            Some(&file.instances[0]),
        );
        assert_eq!(p.args[1], "ping 'x'\\''; id'");
    }

    #[test]
    fn plans_that_the_kernel_would_refuse_are_caught() {
        let a = with_shell("printf %s {{ v }}");
        let quotes = |n: usize| [value("v", &"'".repeat(n))];
        let ok = plan(
            &a,
            Path::new("/"),
            "t",
            "u",
            Duration::ZERO,
            &quotes(20_000),
            None,
        );
        assert!(fits(&ok).is_ok());
        // 40 000 quotes become 160 000 bytes of quoting: over the per-argument limit.
        let long = plan(
            &a,
            Path::new("/"),
            "t",
            "u",
            Duration::ZERO,
            &quotes(40_000),
            None,
        );
        assert!(
            fits(&long)
                .unwrap_err()
                .to_string()
                .contains("environment variable")
        );
    }

    #[test]
    fn exec_actions_keep_their_argv_and_working_directory() {
        let mut a = (*action("x")).clone();
        a.template = CommandTemplate::Exec(
            ["ls", "-l", "{{ dir }}"]
                .iter()
                .map(|t| Template::literal(t).unwrap())
                .collect(),
        );
        a.working_directory = Some("sub".into());
        let p = plan(
            &a,
            Path::new("/base"),
            "t",
            "u",
            Duration::ZERO,
            &[value("dir", "a b'c")],
            None,
        );
        assert_eq!(
            (p.program.as_str(), p.args.as_slice()),
            ("ls", &["-l".to_string(), "a b'c".to_string()][..])
        );
        assert_eq!(p.cwd, Path::new("/base/sub"));
        a.working_directory = Some("/abs".into());
        assert_eq!(
            plan(&a, Path::new("/base"), "t", "u", Duration::ZERO, &[], None).cwd,
            Path::new("/abs")
        );
    }
}
