//! Overlays that open or close the board, removed again as an admin does (`rm` in
//! config.d/): a reload that takes rights away is never held in a way that keeps the wider
//! rights in force, and one whose only effect is to give is still held, saying what stays.
//! The board file is a Raspberry Pi panel in small (guests run the status actions through
//! the ACL `status`, admins everything through `admins`), with harmless commands.

use std::path::Path;
use std::thread;
use std::time::Duration;

use serde_json::json;

use crate::harness::{Server, TempDir, repeat_for, wait_until, write};
use crate::identity::phc;

/// A reload waits for files to settle (2 s of quiet and two equal reads): its effect is
/// expected within this.
const RELOAD: Duration = Duration::from_secs(10);

const BOARD: &str = "pageTitle: Pi
defaultPermissions: {view: true, exec: false, logs: false, kill: false}
accessControlLists:
  - name: status
    matchUsergroups: [guest]
    permissions: {view: true, exec: true, logs: true, kill: false}
  - name: admins
    matchUsergroups: [admins]
    addToEveryAction: true
    permissions: {view: true, exec: true, logs: true, kill: true}
actions:
  - {id: uptime, title: Uptime, acls: [status], shell: echo up}
  - {id: reboot, title: Reboot, shell: echo rebooted}
  - {id: shutdown, title: Shut down, shell: echo halted}
";

/// The tester's overlay: the board opened to guests, which (its lists gone) disables the
/// status actions.
const OPEN: &str = "defaultPermissions: {view: true, exec: true, logs: true, kill: true}
accessControlLists: []
";

/// A board in its own directory (`board.yaml`, an empty `config.d/`) and a server on a
/// config naming both, with user alice of group admins.
fn start(etc: &Path) -> Server {
    write(&etc.join("board.yaml"), BOARD);
    std::fs::create_dir(etc.join("config.d")).unwrap();
    let server = Server::start(json!({
        "board": etc.join("board.yaml").to_str().unwrap(),
        "overlay": etc.join("config.d").to_str().unwrap(),
        "authLocalUsers": {"enabled": true, "users": [
            {"username": "alice", "usergroup": "admins", "password": phc("alice pw")}]},
    }));
    assert!(
        wait_until(Duration::from_secs(5), || server
            .log_contains("for changes")),
        "the service never said it watches its files"
    );
    server
}

/// Whether a guest may start `action` now.
fn guest_runs(server: &Server, action: &str) -> bool {
    let (status, _) = server.call("StartAction", json!({"actionId": action}));
    status == 200
}

fn wait_reloaded(server: &Server, n: usize) {
    assert!(
        wait_until(RELOAD, || server.log_count("config reloaded") >= n),
        "not reloaded {n} times"
    );
}

/// F4 of fe30l: the open overlay added, then removed. The removal takes exec, logs and kill
/// on reboot and shutdown away from guests and "gives" exec on uptime, which the open config
/// had disabled and would have given: applied, and the reloads go on.
#[test]
fn removing_an_overlay_that_opened_the_board_closes_it_again() {
    let etc = TempDir::new();
    let server = start(etc.path());
    assert!(guest_runs(&server, "uptime"));
    assert!(!guest_runs(&server, "reboot"));

    let open = etc.path().join("config.d/95-open.yaml");
    write(&open, OPEN);
    wait_reloaded(&server, 1);
    assert!(
        guest_runs(&server, "reboot"),
        "the open overlay is in force"
    );
    assert!(!guest_runs(&server, "uptime"), "uptime is disabled");

    std::fs::remove_file(&open).unwrap();
    wait_reloaded(&server, 2);
    assert!(!guest_runs(&server, "reboot"), "guests still reboot");
    assert!(!guest_runs(&server, "shutdown"), "guests still shut down");
    assert!(guest_runs(&server, "uptime"));
    assert!(!server.log_contains("config not reloaded"));

    // A later, unrelated edit is applied as ever.
    write(
        &etc.path().join("config.d/10-mine.yaml"),
        "actions:\n  - {id: ping, title: Ping, acls: [status], shell: echo pong}\n",
    );
    wait_reloaded(&server, 3);
    assert!(guest_runs(&server, "ping"));
    assert!(!guest_runs(&server, "reboot"));
}

/// The same with an open overlay that left logs off: removing it gives guests logs on uptime
/// (a real gain: the open config would not give it) and takes far more away: applied, with a
/// warning naming both sides.
#[test]
fn removing_an_overlay_that_opened_the_board_but_gave_no_logs_is_applied_and_said() {
    let etc = TempDir::new();
    let server = start(etc.path());
    let open = etc.path().join("config.d/95-open.yaml");
    write(&open, &OPEN.replace("logs: true", "logs: false"));
    wait_reloaded(&server, 1);
    assert!(guest_runs(&server, "reboot"));

    std::fs::remove_file(&open).unwrap();
    wait_reloaded(&server, 2);
    assert!(!guest_runs(&server, "reboot"), "guests still reboot");
    assert!(guest_runs(&server, "uptime"));
    let log = server.stop_and_log();
    let line = log
        .lines()
        .find(|l| l.contains("applied all the same"))
        .unwrap_or_else(|| panic!("the narrowing reload is not described:\n{log}"));
    assert!(line.contains("WARN"), "{line}");
    assert!(line.contains("95-open.yaml is gone"), "{line}");
    assert!(
        line.contains("guests lose exec on reboot, shutdown; kill on reboot, shutdown"),
        "{line}"
    );
    assert!(line.contains("guests gain logs on uptime"), "{line}");
}

/// The symmetrical case: an overlay that closed the board (`accessControlLists: []`, which
/// disables the status actions and leaves admins nothing). Removing it gives guests exec on
/// uptime and takes nothing away: held, as a directory being replaced would be, saying what
/// stays in force; taking it away on purpose (the lists written in a new file) is applied.
#[test]
fn removing_an_overlay_that_closed_the_board_is_held_and_says_what_stays() {
    let etc = TempDir::new();
    let server = start(etc.path());
    let shut = etc.path().join("config.d/90-lockdown.yaml");
    write(&shut, "accessControlLists: []\n");
    wait_reloaded(&server, 1);
    assert!(!guest_runs(&server, "uptime"), "the lockdown is in force");

    std::fs::remove_file(&shut).unwrap();
    assert!(
        wait_until(RELOAD, || server.log_contains("config not reloaded")),
        "the removal is not held"
    );
    repeat_for(Duration::from_secs(3), Duration::from_millis(100), || {
        assert!(!guest_runs(&server, "uptime"), "guests run uptime");
        true
    });
    assert!(
        server.log_shows(
            "90-lockdown.yaml, which writes accessControlLists in the config in force, is gone, \
             and without it guests would gain exec on uptime"
        ),
        "the refusal does not say who gains what"
    );
    assert!(
        server.log_shows(
            "the config in force stays until this is applied on purpose or actiond restarts, \
             and it gives nobody anything this one takes away"
        ),
        "the refusal does not say what stays"
    );

    // On purpose: the board's lists written again in a file that did not write them.
    let lists = &BOARD[BOARD.find("accessControlLists:").unwrap()..BOARD.find("actions:").unwrap()];
    write(&etc.path().join("config.d/50-lists.yaml"), lists);
    assert!(
        wait_until(RELOAD, || guest_runs(&server, "uptime")),
        "the lists written in a new file are not applied"
    );
    thread::sleep(Duration::from_millis(200));
    assert!(!guest_runs(&server, "reboot"));
}
