//! The kill ladder, the one way actiond stops an execution: SIGTERM to everything of the
//! execution, a grace period for it to exit, SIGKILL to whatever is left, then a wait until
//! nothing is left and everything is reaped. KillAction, timeouts and service shutdown all come
//! here.
//!
//! "Everything of the execution" is its process group and what left the group (`setsid`, a
//! double fork): in cgroup mode the members of its cgroup, ended at SIGKILL time by
//! `cgroup.kill` (or freeze, kill, thaw); in group mode the descendants of actiond that carry
//! its `ACTIOND_TRACKING_ID` (see `descendants`), scanned again at every step so that a fork
//! between two scans is caught by the next. Reaping is not done here: the reaper reaps, and a
//! process counts as gone once `kill(pid, 0)` fails, zombies included.
//!
//! The ladder works on a [`Group`]: the system's (`Processes`, above) in the service, a
//! simulated process table (`executor::fake`) in unit tests, which time every rung on tokio's
//! paused clock. It is generic, not a trait object: the service builds one ladder, for
//! `Processes`, and pays nothing for the seam.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use tokio::time::{Instant, sleep};

use super::{cgroup, descendants};
use crate::execution::Stop;

/// How often the ladder looks whether the execution is gone. Only terminating executions
/// are polled, so this costs nothing in the common case.
const POLL: Duration = Duration::from_millis(20);

/// How long to wait for the kernel to finish off an execution after SIGKILL.
const AFTER_KILL: Duration = Duration::from_secs(5);

/// What the ladder stops: one execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Processes {
    /// The process group the execution leads (its leader's pid).
    pub pgid: i32,
    /// Its `ACTIOND_TRACKING_ID`, which its descendants carry in their environment.
    pub tracking_id: String,
    /// Its own cgroup, in cgroup mode.
    pub cgroup: Option<PathBuf>,
}

impl Processes {
    /// The processes of the execution that `killpg` may not reach.
    fn members(&self) -> Vec<i32> {
        match &self.cgroup {
            Some(path) => cgroup::members(path),
            None => descendants::attribute(
                &descendants::snapshot(&self.tracking_id),
                std::process::id() as i32,
                self.pgid,
            ),
        }
    }
}

/// Everything of one execution, as the ladder sees it. `seen` is the ladder's list of the
/// processes it met outside the group; each must be gone too before the execution is.
pub trait Group: Send + Sync {
    /// Sends `signal` to the group and to every member; false when there was nobody.
    fn signal(&self, signal: Signal, seen: &mut Vec<i32>) -> bool;

    /// Whether nothing of the execution is left: the group is empty, every process in
    /// `seen` is gone (reaped), and no member is left.
    fn gone(&self, seen: &[i32]) -> bool;

    /// SIGKILL to everything of the execution, adding the members it met to `seen`.
    fn kill(&self, seen: &mut Vec<i32>) -> impl Future<Output = ()> + Send;
}

impl Group for Processes {
    fn signal(&self, signal: Signal, seen: &mut Vec<i32>) -> bool {
        let group = killpg(Pid::from_raw(self.pgid), signal) != Err(Errno::ESRCH);
        let mut anyone = group;
        for pid in self.members() {
            anyone |= kill(Pid::from_raw(pid), signal) != Err(Errno::ESRCH);
            if !seen.contains(&pid) {
                seen.push(pid);
            }
        }
        anyone
    }

    /// In cgroup mode the cgroup must be empty; in group mode the scan must find no member.
    fn gone(&self, seen: &[i32]) -> bool {
        group_gone(self.pgid)
            && seen
                .iter()
                .all(|&pid| kill(Pid::from_raw(pid), None) == Err(Errno::ESRCH))
            && match &self.cgroup {
                Some(path) => !cgroup::populated(path),
                None => self.members().is_empty(),
            }
    }

    /// The group, and then the cgroup at once or each attributed member.
    async fn kill(&self, seen: &mut Vec<i32>) {
        let _ = killpg(Pid::from_raw(self.pgid), Signal::SIGKILL);
        match &self.cgroup {
            Some(path) => {
                for pid in cgroup::members(path) {
                    if !seen.contains(&pid) {
                        seen.push(pid);
                    }
                }
                cgroup::kill_all(path).await;
            }
            None => {
                self.signal(Signal::SIGKILL, seen);
            }
        }
    }
}

/// Stops everything of `target`: SIGTERM (and SIGCONT, for a stopped process), then up to
/// `grace` for it to go, then SIGKILL and up to `AFTER_KILL` more; says which rung did it.
pub async fn terminate<G: Group>(target: G, grace: Duration) -> Stop {
    let target = &target;
    let mut seen = Vec::new();
    if !target.signal(Signal::SIGTERM, &mut seen) {
        return Stop::AlreadyGone;
    }
    // A stopped process would keep SIGTERM pending forever; let it run to handle it.
    target.signal(Signal::SIGCONT, &mut seen);
    if gone_within(target, &mut seen, grace, false).await {
        return Stop::Term;
    }
    target.kill(&mut seen).await;
    gone_within(target, &mut seen, AFTER_KILL, true).await;
    Stop::Kill
}

/// Whether the group has no process left.
pub fn group_gone(pgid: i32) -> bool {
    killpg(Pid::from_raw(pgid), None) == Err(Errno::ESRCH)
}

/// Waits until the execution is gone; after SIGKILL (`killing`), whatever appeared since the
/// last look (a fork that raced the kill) is killed at each look.
async fn gone_within<G: Group>(
    target: &G,
    seen: &mut Vec<i32>,
    within: Duration,
    killing: bool,
) -> bool {
    let end = Instant::now() + within;
    loop {
        if target.gone(seen) {
            return true;
        }
        let now = Instant::now();
        if now >= end {
            return false;
        }
        sleep(POLL.min(end - now)).await;
        if killing {
            target.kill(seen).await;
        }
    }
}

#[cfg(test)]
mod tests {
    //! The ladder against real processes, each the leader of a group of its own, reaped by a
    //! thread of the test (as the reaper would): a process counts as gone only once reaped.
    //! Then against the fake process table (`executor::fake`), where every rung is timed on
    //! the paused clock and the processes can do what real ones rarely do on cue (outlive
    //! SIGKILL in an uninterruptible sleep).
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::process::{Command, ExitStatus, Stdio};
    use std::thread::JoinHandle;

    use super::*;

    /// Starts `script` under `sh -c` as a group leader marked with a tracking id of its own,
    /// and waits until it printed its first line (its traps are set by then).
    fn group(script: &str) -> (Processes, JoinHandle<ExitStatus>) {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tracking_id = format!("ladder-test-{}-{n}", std::process::id());
        let mut child = Command::new("/bin/sh")
            .args(["-c", script])
            .env("ACTIOND_TRACKING_ID", &tracking_id)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("sh starts");
        let mut ready = String::new();
        BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut ready)
            .expect("reads");
        assert_eq!(ready.trim(), "ready");
        let target = Processes {
            pgid: child.id() as i32,
            tracking_id,
            cgroup: None,
        };
        (
            target,
            std::thread::spawn(move || child.wait().expect("waits")),
        )
    }

    #[tokio::test]
    async fn a_group_that_ends_on_sigterm_stops_at_the_first_rung() {
        let (target, reaped) = group("echo ready; exec sleep 100");
        assert_eq!(
            terminate(target.clone(), Duration::from_secs(30)).await,
            Stop::Term
        );
        assert_eq!(
            reaped.join().unwrap().signal(),
            Some(Signal::SIGTERM as i32)
        );
        assert!(group_gone(target.pgid));
    }

    #[tokio::test(start_paused = true)]
    async fn a_group_that_ignores_sigterm_gets_sigkill_after_exactly_the_grace() {
        let (target, reaped) = group("trap '' TERM; echo ready; exec sleep 100");
        let grace = Duration::from_secs(7);
        let begun = Instant::now();
        assert_eq!(terminate(target.clone(), grace).await, Stop::Kill);
        // The virtual clock: the grace was waited in full, and not a poll more.
        let took = begun.elapsed();
        assert!(
            took >= grace && took < grace + POLL + AFTER_KILL,
            "{took:?}"
        );
        assert_eq!(
            reaped.join().unwrap().signal(),
            Some(Signal::SIGKILL as i32)
        );
        assert!(group_gone(target.pgid));
    }

    #[tokio::test]
    async fn a_stopped_group_is_continued_so_that_it_can_handle_sigterm() {
        let (target, reaped) = group("echo ready; exec sleep 100");
        killpg(Pid::from_raw(target.pgid), Signal::SIGSTOP).unwrap();
        let stat = format!("/proc/{}/stat", target.pgid);
        while !std::fs::read_to_string(&stat).unwrap().contains(") T ") {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(terminate(target, Duration::from_secs(30)).await, Stop::Term);
        assert_eq!(
            reaped.join().unwrap().signal(),
            Some(Signal::SIGTERM as i32)
        );
    }

    #[tokio::test]
    async fn a_group_already_gone_is_not_signalled() {
        let (target, reaped) = group("echo ready");
        assert!(reaped.join().unwrap().success());
        assert_eq!(
            terminate(target, Duration::from_secs(30)).await,
            Stop::AlreadyGone
        );
    }

    // ---- On the fake process table ----

    use crate::executor::fake::{Step, Table};

    /// Starts `script` on a fresh table, and lets it (and what it forks) run up to its first
    /// wait: the table, the ladder's target, the leader's pid.
    async fn fake(script: Vec<Step>) -> (Table, crate::executor::fake::Members, i32) {
        let table = Table::new();
        table.install("p", script);
        let spawned = table.spawn("p").expect("installed");
        let pid = table.alive()[0];
        // Its task, then those of the children it forks.
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        (table, spawned.target, pid)
    }

    const GRACE: Duration = Duration::from_secs(7);

    #[tokio::test(start_paused = true)]
    async fn on_the_fake_a_group_that_goes_on_sigterm_is_gone_at_once() {
        let (table, target, pid) = fake(vec![Step::Hang]).await;
        let begun = Instant::now();
        assert_eq!(terminate(target, GRACE).await, Stop::Term);
        assert_eq!(begun.elapsed(), Duration::ZERO);
        assert_eq!(table.signals(), [(Duration::ZERO, -pid, Signal::SIGTERM)]);
        assert!(table.alive().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn on_the_fake_sigterm_ignored_means_sigkill_after_exactly_the_grace() {
        let (table, target, pid) = fake(vec![Step::IgnoreTerm, Step::Hang]).await;
        assert_eq!(terminate(target, GRACE).await, Stop::Kill);
        assert_eq!(
            table.signals(),
            [
                (Duration::ZERO, -pid, Signal::SIGTERM),
                (Duration::ZERO, -pid, Signal::SIGCONT),
                (GRACE, -pid, Signal::SIGKILL),
            ]
        );
        assert!(table.alive().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn on_the_fake_a_slow_exit_within_the_grace_is_seen_within_a_poll() {
        // SIGTERM lands in an uninterruptible sleep of 2 s, and ends it after.
        let two = Duration::from_secs(2);
        let (table, target, pid) = fake(vec![Step::Uninterruptible(two), Step::Hang]).await;
        let begun = Instant::now();
        assert_eq!(terminate(target, GRACE).await, Stop::Term);
        let took = begun.elapsed();
        assert!(took >= two && took <= two + POLL, "{took:?}");
        let signals = table.signals();
        assert_eq!(
            signals,
            [
                (Duration::ZERO, -pid, Signal::SIGTERM),
                (Duration::ZERO, -pid, Signal::SIGCONT),
            ]
        );
        assert!(table.alive().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn on_the_fake_what_outlives_sigkill_is_killed_again_at_each_look_then_given_up() {
        let hour = Duration::from_secs(3600);
        let (table, target, pid) = fake(vec![Step::Uninterruptible(hour)]).await;
        assert_eq!(terminate(target, GRACE).await, Stop::Kill);
        let mut kills: Vec<Duration> = table
            .signals()
            .into_iter()
            .filter(|&(_, to, signal)| to == -pid && signal == Signal::SIGKILL)
            .map(|(at, _, _)| at)
            .collect();
        // (Group mode sends each twice: the group's, then the group's again with each
        // member's.) The first at the grace's end, then one per look, until the bound after
        // SIGKILL.
        kills.dedup();
        assert_eq!(kills.first(), Some(&GRACE));
        assert_eq!(kills.last(), Some(&(GRACE + AFTER_KILL)));
        assert!(kills.windows(2).all(|w| w[1] - w[0] == POLL), "{kills:?}");
        // The ladder gave up; the kernel's SIGKILL lands when the sleep ends.
        assert_eq!(table.alive(), [pid]);
        tokio::time::sleep(hour).await;
        assert!(table.alive().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn on_the_fake_a_member_outside_the_group_gets_every_signal_itself() {
        let stubborn = vec![Step::IgnoreTerm, Step::Hang];
        let (table, target, pid) = fake(vec![
            Step::Fork {
                script: stubborn,
                setsid: true,
            },
            Step::Hang,
        ])
        .await;
        let child = pid + 1;
        assert_eq!(table.alive(), [pid, child]);
        assert_eq!(terminate(target, GRACE).await, Stop::Kill);
        let zero = Duration::ZERO;
        assert_eq!(
            table.signals(),
            [
                (zero, -pid, Signal::SIGTERM),
                (zero, child, Signal::SIGTERM),
                (zero, child, Signal::SIGCONT),
                (GRACE, child, Signal::SIGKILL),
            ]
        );
        assert!(table.alive().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn on_the_fake_a_group_already_gone_gets_no_signal() {
        let (table, target, _) = fake(vec![Step::Exit(0)]).await;
        assert!(table.alive().is_empty());
        assert_eq!(terminate(target, GRACE).await, Stop::AlreadyGone);
        assert!(table.signals().is_empty());
    }
}
