//! The kill ladder, the one way actiond stops an execution: SIGTERM to the whole process
//! group, a grace period for it to exit, SIGKILL to whatever of the group is left, then a
//! wait until the group is empty. KillAction, timeouts and service shutdown all come here
//! (SPEC §5.3). Reaping is not done here: the reaper reaps, and a group counts as gone once
//! `kill(-pgid, 0)` finds no process in it, zombies included.

use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::time::{Instant, sleep};

use crate::execution::Stop;

/// How often the ladder looks whether the group is gone. Only terminating groups are
/// polled, so this costs nothing in the common case.
const POLL: Duration = Duration::from_millis(20);

/// How long to wait for the kernel to finish off a group after SIGKILL.
const AFTER_KILL: Duration = Duration::from_secs(5);

pub async fn terminate_group(pgid: i32, grace: Duration) -> Stop {
    let group = Pid::from_raw(pgid);
    if killpg(group, Signal::SIGTERM) == Err(Errno::ESRCH) {
        return Stop::AlreadyGone;
    }
    // A stopped process would keep SIGTERM pending forever; let it run to handle it.
    let _ = killpg(group, Signal::SIGCONT);
    if gone_within(group, grace).await {
        return Stop::Term;
    }
    let _ = killpg(group, Signal::SIGKILL);
    gone_within(group, AFTER_KILL).await;
    Stop::Kill
}

/// Whether the group has no process left.
pub fn group_gone(pgid: i32) -> bool {
    killpg(Pid::from_raw(pgid), None) == Err(Errno::ESRCH)
}

async fn gone_within(group: Pid, within: Duration) -> bool {
    let end = Instant::now() + within;
    loop {
        if group_gone(group.as_raw()) {
            return true;
        }
        let now = Instant::now();
        if now >= end {
            return false;
        }
        sleep(POLL.min(end - now)).await;
    }
}
