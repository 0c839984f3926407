//! The reaper: the only code in actiond that waits for child processes.
//!
//! actiond makes itself a child subreaper, so every orphan of an execution's process group
//! (a backgrounded grandchild, a daemon that called `setsid`) becomes its child when its
//! parent dies. One task answers SIGCHLD by calling `waitpid(-1, WNOHANG)` until nothing is
//! left: an exit status of a process somebody is watching (an execution's leader) goes to
//! that watcher, anything else is an orphan and is simply reaped. Because this is the only
//! `waitpid` caller, no status is ever stolen.
//!
//! SIGCHLD is read from a signalfd on the event loop, not by a handler: the kernel sends it
//! to the thread that started the child (a thread of the blocking pool, under load) or to any
//! thread that does not block it, so a handler woke an idle helper thread for most exits, only
//! to write a byte that woke the event loop. `start` blocks SIGCHLD on the thread that runs
//! it, the first thing `run` does, before the service starts its other threads, which inherit
//! the mask. A thread that was started before (one the runtime made to resolve the listen
//! address) still takes SIGCHLD with tokio's handler, which stays installed for that, so no
//! exit is lost either way.
//!
//! Processes are started on other threads (so that one slow `posix_spawn` does not stop the
//! service), so a leader can exit and be reaped before its spawner has registered it. Each
//! spawn therefore takes a ticket first (`begin_spawn`) and registers its pid when it returns
//! (`end_spawn`). A status with no watcher, reaped while spawns are under way, is kept as
//! `early` with the newest ticket issued at that moment; `end_spawn` takes it if the pid is
//! its own, and once every spawn up to that ticket has ended it was an orphan and is dropped.
//! So what is kept is bounded by the orphans that end during the few milliseconds of a spawn.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use nix::errno::Errno;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use tokio::io::unix::AsyncFd;
use tokio::signal::unix::SignalKind;
use tokio::sync::oneshot;
use tracing::{debug, warn};

use super::spawn::{self, signal};

/// How a watched process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

#[derive(Debug, Default)]
pub struct Reaper {
    watched: Mutex<Watched>,
}

#[derive(Debug, Default)]
struct Watched {
    /// Where each watched pid's status goes.
    watchers: HashMap<i32, oneshot::Sender<Exit>>,
    /// Tickets of the spawns under way.
    in_flight: BTreeSet<u64>,
    next_ticket: u64,
    /// Statuses reaped with no watcher while spawns were under way, each with the newest
    /// ticket issued when it was reaped.
    early: HashMap<i32, (u64, Exit)>,
}

impl Watched {
    /// Takes `ticket`'s spawn off the list. A status kept for spawns that have all ended
    /// belonged to none of them, and is dropped.
    fn settle(&mut self, ticket: Ticket) {
        self.in_flight.remove(&ticket.0);
        let floor = self.in_flight.first().copied().unwrap_or(u64::MAX);
        self.early.retain(|_, (newest, _)| *newest >= floor);
    }
}

/// A spawn under way: hand it back to `end_spawn` or `spawn_failed`.
#[derive(Debug)]
#[must_use]
pub struct Ticket(u64);

impl Reaper {
    /// Becomes a subreaper and starts the SIGCHLD task. Call once, inside the runtime, on its
    /// thread, before the first spawn and before starting other threads.
    pub fn start() -> std::io::Result<Arc<Reaper>> {
        if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
            // Without it orphans go to PID 1, which reaps them too; only our count of them
            // is lost, so this is worth a warning, not a refusal to start.
            warn!("could not become a child subreaper ({e}); orphans will be reaped by PID 1");
        }
        // Decide (and log) how executions are contained before the first one starts.
        super::cgroup::mode();
        // The handler first: from here on no SIGCHLD can be lost, whichever thread takes it.
        let mut sigchld = signal(SignalKind::child())?;
        let mut signalfd = sigchld_fd();
        let reaper = Arc::new(Reaper::default());
        let task_reaper = Arc::clone(&reaper);
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    ready = readable(&signalfd), if signalfd.is_some() => {
                        if !ready {
                            signalfd = None;
                        }
                    }
                    got = sigchld.recv() => {
                        if got.is_none() {
                            return;
                        }
                    }
                }
                task_reaper.reap();
            }
        });
        Ok(reaper)
    }

    /// Whether no process is watched and no spawn is under way: nothing runs whose output or
    /// exit a held thread could delay.
    pub fn is_idle(&self) -> bool {
        let w = self.lock();
        w.watchers.is_empty() && w.in_flight.is_empty()
    }

    /// Announces a spawn; call before starting the process.
    pub fn begin_spawn(&self) -> Ticket {
        let mut w = self.lock();
        let ticket = w.next_ticket;
        w.next_ticket += 1;
        w.in_flight.insert(ticket);
        Ticket(ticket)
    }

    /// Ends a spawn that started `pid`: returns the receiver of its exit status (already
    /// filled if the process ended and was reaped in the meantime).
    pub fn end_spawn(&self, ticket: Ticket, pid: i32) -> oneshot::Receiver<Exit> {
        let mut w = self.lock();
        let (tx, rx) = oneshot::channel();
        match w.early.remove(&pid) {
            Some((_, exit)) => {
                let _ = tx.send(exit);
            }
            None => {
                w.watchers.insert(pid, tx);
            }
        }
        w.settle(ticket);
        rx
    }

    /// Ends a spawn that started nothing (a child that failed before its `execve` is reaped
    /// here like an orphan).
    pub fn spawn_failed(&self, ticket: Ticket) {
        self.lock().settle(ticket);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Watched> {
        self.watched.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hands one reaped status to its watcher, or keeps it while spawns are under way.
    fn deliver(&self, pid: i32, exit: Exit) {
        let mut w = self.lock();
        if let Some(tx) = w.watchers.remove(&pid) {
            // The watcher may have gone away (its task ended); the status is then unused.
            let _ = tx.send(exit);
        } else if !w.in_flight.is_empty() {
            let newest = w.next_ticket - 1;
            w.early.insert(pid, (newest, exit));
        } else {
            debug!(pid, ?exit, "reaped an orphan");
        }
    }

    /// Reaps every child that has ended, delivering statuses to their watchers.
    pub fn reap(&self) {
        loop {
            let (pid, exit) = match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::Exited(pid, code)) => (pid, Exit::Code(code)),
                Ok(WaitStatus::Signaled(pid, sig, _)) => (pid, Exit::Signal(sig as i32)),
                Ok(WaitStatus::StillAlive) | Err(Errno::ECHILD) => return,
                Ok(_) | Err(Errno::EINTR) => continue,
                Err(e) => {
                    warn!("waitpid failed: {e}");
                    return;
                }
            };
            self.deliver(pid.as_raw(), exit);
        }
    }
}

/// SIGCHLD blocked on this thread (and so on every thread started from it later) and read
/// from a signalfd registered with the event loop, or `None` (the log says why) where that
/// fails: then tokio's handler takes every SIGCHLD, as it does for threads started before.
fn sigchld_fd() -> Option<AsyncFd<SignalFd>> {
    let mut set = SigSet::empty();
    set.add(Signal::SIGCHLD);
    let fd = SignalFd::with_flags(&set, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)
        .map_err(std::io::Error::from)
        .and_then(spawn::register_signalfd);
    match fd {
        Ok(fd) => match pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None) {
            Ok(()) => Some(fd),
            Err(e) => {
                warn!("could not block SIGCHLD ({e}); its handler takes it");
                None
            }
        },
        Err(e) => {
            warn!("no signalfd for SIGCHLD ({e}); its handler takes it");
            None
        }
    }
}

/// Waits until the signalfd has a SIGCHLD, and takes what it holds; false if it cannot be
/// waited on any more (the handler goes on alone).
async fn readable(fd: &Option<AsyncFd<SignalFd>>) -> bool {
    let Some(fd) = fd else {
        return std::future::pending().await;
    };
    match fd.readable().await {
        Ok(mut ready) => {
            // One read takes what is pending: a standard signal does not queue, so a second
            // would only find none (a system call per exit). A SIGCHLD that comes after it
            // makes the descriptor readable again, and the reactor reports that anew; and the
            // reaper's waitpid loop takes every exited child, whichever signal announced it.
            let _ = fd.get_ref().read_signal();
            ready.clear_ready();
            true
        }
        Err(e) => {
            warn!("the SIGCHLD signalfd failed ({e}); its handler takes it");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_reaped_before_its_spawn_ended_reaches_that_spawn() {
        let r = Reaper::default();
        let t = r.begin_spawn();
        r.deliver(42, Exit::Code(3));
        let mut rx = r.end_spawn(t, 42);
        assert_eq!(rx.try_recv(), Ok(Exit::Code(3)));
        assert!(r.lock().early.is_empty());
    }

    #[test]
    fn a_status_after_the_spawn_ended_goes_to_its_watcher() {
        let r = Reaper::default();
        let t = r.begin_spawn();
        let mut rx = r.end_spawn(t, 7);
        assert!(rx.try_recv().is_err());
        r.deliver(7, Exit::Signal(9));
        assert_eq!(rx.try_recv(), Ok(Exit::Signal(9)));
        assert!(r.lock().watchers.is_empty());
    }

    #[test]
    fn orphans_kept_during_spawns_are_dropped_once_those_spawns_ended() {
        let r = Reaper::default();
        // No spawn under way: an orphan is not kept at all.
        r.deliver(1, Exit::Code(0));
        assert!(r.lock().early.is_empty());
        let a = r.begin_spawn();
        r.deliver(2, Exit::Code(0)); // an orphan, or a's leader
        let b = r.begin_spawn();
        r.deliver(3, Exit::Code(0)); // an orphan, or a's or b's leader
        drop(r.end_spawn(a, 100));
        // pid 2 could only have been a's; pid 3 may still be b's.
        assert_eq!(r.lock().early.keys().copied().collect::<Vec<_>>(), [3]);
        r.spawn_failed(b);
        assert!(r.lock().early.is_empty());
        assert!(r.lock().in_flight.is_empty());
    }
}
