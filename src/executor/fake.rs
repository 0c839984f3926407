//! A simulated process table for unit tests: the supervision, the kill ladder and an
//! execution's life run against it on tokio's paused clock, and no process is spawned. A
//! program is a script of [`Step`]s (output, sleeps, forks into the group or out of it as
//! `setsid` does, SIGTERM ignored, an uninterruptible sleep, an exit code); each process is a
//! task of the test's runtime, so a sleep of an hour takes no time, and every start, signal
//! and end is logged with the virtual time it happened at ([`Happened`]).
//!
//! It keeps the rules the ladder and the supervision rely on: a signal to a group reaches every
//! process in it, a process that dies is gone at once (the table reaps as it kills), a
//! leader's status reaches its execution, and a pipe ends once no living process holds its
//! write end. In group mode's terms, an execution's members are its processes outside its
//! group (what `descendants` attributes by tracking id).
//!
//! It must not touch real processes, and it is built for tests only.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::sync::mpsc::error::TryRecvError;
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;
use tokio::time::{Instant, sleep};

use super::{Executor, Exit, Group, Pipe, Plan, Spawned};
use crate::execution::{Outcome, SpawnError};

/// One thing a fake process does, in order; after the last it exits with 0.
#[derive(Debug, Clone)]
pub enum Step {
    /// Writes to its stdout.
    Stdout(&'static str),
    /// Writes to its stderr.
    Stderr(&'static str),
    Sleep(Duration),
    /// Sleeps until a signal ends it.
    Hang,
    /// Ignores SIGTERM from now on (`trap '' TERM`).
    IgnoreTerm,
    /// Sleeps this long in the kernel: a fatal signal waits until the sleep is over.
    Uninterruptible(Duration),
    /// Starts a child that runs `script`, holding the same pipes; `setsid`: in a group of
    /// its own.
    Fork {
        script: Vec<Step>,
        setsid: bool,
    },
    Exit(i32),
}

/// What happened in the table, with when ([`Table::log`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Happened {
    /// A program was started as the leader of a new group.
    Started {
        pid: i32,
        program: String,
    },
    Forked {
        parent: i32,
        pid: i32,
        setsid: bool,
    },
    /// A signal sent to a process, or to a group (`to` negative, as `kill(2)` takes it),
    /// and how many processes it reached.
    Signal {
        to: i32,
        signal: Signal,
        reached: usize,
    },
    Ended {
        pid: i32,
        exit: Exit,
    },
    /// A test's own note (what the engine showed, and when).
    Note(String),
}

/// The process table; clones share it.
#[derive(Clone)]
pub struct Table(Arc<Mutex<State>>);

struct State {
    epoch: Instant,
    next_pid: i32,
    next_run: u64,
    programs: HashMap<String, Vec<Step>>,
    procs: BTreeMap<i32, Proc>,
    log: Vec<(Duration, Happened)>,
}

struct Proc {
    pgid: i32,
    /// Which execution it belongs to (the tracking id in its environment).
    run: u64,
    ignores_term: bool,
    /// In an uninterruptible sleep: a fatal signal is kept for its end.
    deferring: bool,
    pending: Option<Signal>,
    stdout: Option<mpsc::UnboundedSender<Vec<u8>>>,
    stderr: Option<mpsc::UnboundedSender<Vec<u8>>>,
    /// A leader's status, for its execution.
    exit: Option<oneshot::Sender<Exit>>,
    task: Option<AbortHandle>,
}

impl Default for Table {
    fn default() -> Self {
        Self::new()
    }
}

impl Table {
    /// An empty table whose log counts time from now (call it on the test's runtime).
    pub fn new() -> Table {
        Table(Arc::new(Mutex::new(State {
            epoch: Instant::now(),
            next_pid: 100,
            next_run: 0,
            programs: HashMap::new(),
            procs: BTreeMap::new(),
            log: Vec::new(),
        })))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Installs `program`: what a process started with that name does.
    pub fn install(&self, program: &str, script: Vec<Step>) {
        self.lock().programs.insert(program.to_string(), script);
    }

    /// Everything that happened, in order, with its time since the table was made.
    pub fn log(&self) -> Vec<(Duration, Happened)> {
        self.lock().log.clone()
    }

    /// The signals that reached someone: when, to whom, which.
    pub fn signals(&self) -> Vec<(Duration, i32, Signal)> {
        self.log()
            .into_iter()
            .filter_map(|(at, h)| match h {
                Happened::Signal {
                    to,
                    signal,
                    reached,
                } if reached > 0 => Some((at, to, signal)),
                _ => None,
            })
            .collect()
    }

    /// Notes something in the log, at the time it happens.
    pub fn note(&self, what: String) {
        self.lock().happened(Happened::Note(what));
    }

    /// The processes alive, by pid.
    pub fn alive(&self) -> Vec<i32> {
        self.lock().procs.keys().copied().collect()
    }

    /// Starts `program` as the leader of a new group of a new execution, or says why not.
    pub fn spawn(&self, program: &str) -> Result<Spawned<Members, Output>, Outcome> {
        let mut state = self.lock();
        let Some(script) = state.programs.get(program).cloned() else {
            return Err(Outcome::SpawnFailed(SpawnError::refused(
                program,
                &std::io::Error::from_raw_os_error(2),
            )));
        };
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        let (err_tx, err_rx) = mpsc::unbounded_channel();
        let (exit_tx, exit_rx) = oneshot::channel();
        let pid = state.new_pid();
        let run = state.next_run;
        state.next_run += 1;
        state.procs.insert(
            pid,
            Proc {
                pgid: pid,
                run,
                ignores_term: false,
                deferring: false,
                pending: None,
                stdout: Some(out_tx),
                stderr: Some(err_tx),
                exit: Some(exit_tx),
                task: None,
            },
        );
        state.happened(Happened::Started {
            pid,
            program: program.to_string(),
        });
        drop(state);
        self.run(pid, script);
        Ok(Spawned {
            target: Members {
                table: self.clone(),
                pgid: pid,
                run,
            },
            stdout: Some(Output::new(out_rx)),
            stderr: Some(Output::new(err_rx)),
            exit: exit_rx,
            cgroup: None,
        })
    }

    /// Runs `script` as process `pid`, on a task of its own.
    fn run(&self, pid: i32, script: Vec<Step>) {
        let table = self.clone();
        let task = tokio::spawn(async move {
            let exit = table.perform(pid, script).await;
            table.end(pid, exit, false);
        });
        if let Some(p) = self.lock().procs.get_mut(&pid) {
            p.task = Some(task.abort_handle());
        }
    }

    /// What process `pid` does: its script, until it exits (with what) or is killed.
    async fn perform(&self, pid: i32, script: Vec<Step>) -> Exit {
        for step in script {
            match step {
                Step::Stdout(text) => self.write(pid, false, text),
                Step::Stderr(text) => self.write(pid, true, text),
                Step::Sleep(d) => sleep(d).await,
                Step::Hang => std::future::pending::<()>().await,
                Step::IgnoreTerm => self.with(pid, |p| p.ignores_term = true),
                Step::Uninterruptible(d) => {
                    self.with(pid, |p| p.deferring = true);
                    sleep(d).await;
                    let mut pending = None;
                    self.with(pid, |p| {
                        p.deferring = false;
                        pending = p.pending.take();
                    });
                    if let Some(signal) = pending {
                        return Exit::Signal(signal as i32);
                    }
                }
                Step::Fork { script, setsid } => self.fork(pid, script, setsid),
                Step::Exit(code) => return Exit::Code(code),
            }
        }
        Exit::Code(0)
    }

    fn with(&self, pid: i32, f: impl FnOnce(&mut Proc)) {
        if let Some(p) = self.lock().procs.get_mut(&pid) {
            f(p);
        }
    }

    fn write(&self, pid: i32, stderr: bool, text: &str) {
        self.with(pid, |p| {
            let pipe = if stderr { &p.stderr } else { &p.stdout };
            if let Some(tx) = pipe {
                let _ = tx.send(text.as_bytes().to_vec());
            }
        });
    }

    fn fork(&self, parent: i32, script: Vec<Step>, setsid: bool) {
        let mut state = self.lock();
        let Some(p) = state.procs.get(&parent) else {
            return;
        };
        let (pgid, run) = (p.pgid, p.run);
        let (stdout, stderr) = (p.stdout.clone(), p.stderr.clone());
        let pid = state.new_pid();
        state.procs.insert(
            pid,
            Proc {
                pgid: if setsid { pid } else { pgid },
                run,
                ignores_term: false,
                deferring: false,
                pending: None,
                stdout,
                stderr,
                exit: None,
                task: None,
            },
        );
        state.happened(Happened::Forked {
            parent,
            pid,
            setsid,
        });
        drop(state);
        self.run(pid, script);
    }

    /// Ends process `pid` with `exit` (`abort`: its task is stopped too, it was killed): it
    /// is reaped at once, its pipes' write ends close, a leader's status goes to its run.
    fn end(&self, pid: i32, exit: Exit, abort: bool) {
        let mut state = self.lock();
        let Some(p) = state.procs.remove(&pid) else {
            return;
        };
        state.happened(Happened::Ended { pid, exit });
        drop(state);
        if let Some(tx) = p.exit {
            let _ = tx.send(exit);
        }
        if abort && let Some(task) = p.task {
            task.abort();
        }
    }

    /// `kill(2)`: `signal` to process `to`, or to group `-to`; `None` only asks whether
    /// anyone is there. Whether it reached anyone (else it is ESRCH).
    pub fn kill(&self, to: i32, signal: Option<Signal>) -> bool {
        let mut state = self.lock();
        let targets: Vec<i32> = state
            .procs
            .iter()
            .filter(|&(&pid, p)| if to < 0 { p.pgid == -to } else { pid == to })
            .map(|(&pid, _)| pid)
            .collect();
        let Some(signal) = signal else {
            return !targets.is_empty();
        };
        state.happened(Happened::Signal {
            to,
            signal,
            reached: targets.len(),
        });
        let mut dying = Vec::new();
        for pid in &targets {
            let p = state.procs.get_mut(pid).expect("listed");
            let fatal = match signal {
                Signal::SIGKILL => true,
                Signal::SIGTERM => !p.ignores_term,
                _ => false,
            };
            if fatal && p.deferring {
                // SIGKILL wins over a SIGTERM already waiting.
                if p.pending != Some(Signal::SIGKILL) {
                    p.pending = Some(signal);
                }
            } else if fatal {
                dying.push(*pid);
            }
        }
        drop(state);
        for pid in dying {
            self.end(pid, Exit::Signal(signal as i32), true);
        }
        !targets.is_empty()
    }

    /// The processes of execution `run` outside group `pgid`.
    fn members(&self, run: u64, pgid: i32) -> Vec<i32> {
        self.lock()
            .procs
            .iter()
            .filter(|(_, p)| p.run == run && p.pgid != pgid)
            .map(|(&pid, _)| pid)
            .collect()
    }
}

impl State {
    fn new_pid(&mut self) -> i32 {
        self.next_pid += 1;
        self.next_pid
    }

    fn happened(&mut self, what: Happened) {
        let at = Instant::now() - self.epoch;
        self.log.push((at, what));
    }
}

/// The table is an executor: a plan's program is the name of a script installed with
/// [`Table::install`]; its arguments and environment are not looked at.
impl Executor for Table {
    type Group = Members;
    type Pipe = Output;

    async fn start(&self, plan: Plan) -> Result<Spawned<Members, Output>, Outcome> {
        self.spawn(&plan.program)
    }
}

/// Everything of one fake execution, as the ladder sees it: its group, and its processes
/// that left the group (as group mode attributes them).
#[derive(Clone)]
pub struct Members {
    table: Table,
    pgid: i32,
    run: u64,
}

impl Group for Members {
    fn signal(&self, signal: Signal, seen: &mut Vec<i32>) -> bool {
        let mut anyone = self.table.kill(-self.pgid, Some(signal));
        for pid in self.table.members(self.run, self.pgid) {
            anyone |= self.table.kill(pid, Some(signal));
            if !seen.contains(&pid) {
                seen.push(pid);
            }
        }
        anyone
    }

    fn gone(&self, seen: &[i32]) -> bool {
        !self.table.kill(-self.pgid, None)
            && seen.iter().all(|&pid| !self.table.kill(pid, None))
            && self.table.members(self.run, self.pgid).is_empty()
    }

    async fn kill(&self, seen: &mut Vec<i32>) {
        self.table.kill(-self.pgid, Some(Signal::SIGKILL));
        self.signal(Signal::SIGKILL, seen);
    }
}

/// The read end of a fake process's pipe: at its end once every holder of the write end is
/// gone.
pub struct Output {
    rx: mpsc::UnboundedReceiver<Vec<u8>>,
    /// What a write put in the pipe that a read did not take yet.
    held: Vec<u8>,
}

impl Output {
    fn new(rx: mpsc::UnboundedReceiver<Vec<u8>>) -> Output {
        Output {
            rx,
            held: Vec::new(),
        }
    }

    /// Moves what is held into `buf`'s spare capacity.
    fn take(&mut self, buf: &mut Vec<u8>) -> usize {
        let n = self.held.len().min(buf.capacity() - buf.len());
        buf.extend(self.held.drain(..n));
        n
    }
}

impl Pipe for Output {
    async fn read_into<'a>(&'a mut self, buf: &'a mut Vec<u8>) -> std::io::Result<usize> {
        if self.held.is_empty() {
            match self.rx.recv().await {
                Some(data) => self.held = data,
                None => return Ok(0),
            }
        }
        Ok(self.take(buf))
    }

    fn read_ready(&mut self, buf: &mut Vec<u8>) -> std::io::Result<usize> {
        if self.held.is_empty() {
            match self.rx.try_recv() {
                Ok(data) => self.held = data,
                Err(TryRecvError::Empty) => return Err(std::io::ErrorKind::WouldBlock.into()),
                Err(TryRecvError::Disconnected) => return Ok(0),
            }
        }
        Ok(self.take(buf))
    }
}
