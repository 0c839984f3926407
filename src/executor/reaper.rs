//! The reaper: the only code in actiond that waits for child processes.
//!
//! actiond makes itself a child subreaper, so every orphan of an execution's process group
//! (a backgrounded grandchild, a daemon that called `setsid`) becomes its child when its
//! parent dies. One task answers SIGCHLD by calling `waitpid(-1, WNOHANG)` until nothing is
//! left: an exit status of a process somebody is watching (an execution's leader) goes to
//! that watcher, anything else is an orphan and is simply reaped. Because this is the only
//! `waitpid` caller, no status is ever stolen; because the runtime is single-threaded and
//! `watch` is called right after `spawn` with no `.await` between, no leader can be reaped
//! before its watcher is registered.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use nix::errno::Errno;
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::oneshot;
use tracing::{debug, warn};

/// How a watched process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

#[derive(Debug, Default)]
pub struct Reaper {
    watched: Mutex<HashMap<i32, oneshot::Sender<Exit>>>,
}

impl Reaper {
    /// Becomes a subreaper and starts the SIGCHLD task. Call once, inside the runtime,
    /// before the first spawn.
    pub fn start() -> std::io::Result<Arc<Reaper>> {
        if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
            // Without it orphans go to PID 1, which reaps them too; only our count of them
            // is lost, so this is worth a warning, not a refusal to start.
            warn!("could not become a child subreaper ({e}); orphans will be reaped by PID 1");
        }
        let mut sigchld = signal(SignalKind::child())?;
        let reaper = Arc::new(Reaper::default());
        let task_reaper = Arc::clone(&reaper);
        tokio::spawn(async move {
            while sigchld.recv().await.is_some() {
                task_reaper.reap();
            }
        });
        Ok(reaper)
    }

    /// Registers interest in `pid`'s exit status. Must be called before the next `.await`
    /// after spawning `pid`.
    pub fn watch(&self, pid: i32) -> oneshot::Receiver<Exit> {
        let (tx, rx) = oneshot::channel();
        self.lock().insert(pid, tx);
        rx
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i32, oneshot::Sender<Exit>>> {
        self.watched.lock().unwrap_or_else(|p| p.into_inner())
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
            match self.lock().remove(&pid.as_raw()) {
                // The watcher may have gone away (its task ended); the status is then unused.
                Some(tx) => {
                    let _ = tx.send(exit);
                }
                None => debug!(pid = pid.as_raw(), ?exit, "reaped an orphan"),
            }
        }
    }
}
