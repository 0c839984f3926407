//! A config change is never applied while any process still holds a file of it open for
//! writing, whichever way the writer reached it: a temporary file renamed into place (beside
//! the config and in `config.d/`) while the writer keeps writing through the same handle; a
//! file the config symlink is repointed to (`ln -sfn`) that a writer opened, after the start, in
//! a directory nobody watched yet; an edit through a hard link in another directory, which
//! no watched directory sees at all. Each writer is a real process (python3) holding its
//! descriptor until the test lets it finish. Where the kernel cannot be asked (actiond as
//! another user than the config's owner, without CAP_LEASE), the log says so and the counting
//! of opens and closes still holds a writer it saw open.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{SOON, Server, TempDir, repeat_for, to_yaml, wait_until};
use crate::identity::phc;

/// A held writer must hold the reload at least this long: without the kernel's word the half
/// was applied 2 s (quiet) + 0.25 s (two reads) after the last event, so 5 s of wall time
/// show it is held, not merely late.
const HELD: Duration = Duration::from_secs(5);

/// A reload waits for files to settle (2 s of quiet and two equal reads): its effect is
/// expected within this.
const RELOAD: Duration = Duration::from_secs(15);

/// The config's settings but no actions: guests may only view; alice is an admin.
fn settings() -> Value {
    json!({
        "killGracePeriod": 1,
        "defaultPermissions": {"view": true, "exec": false, "logs": true, "kill": false},
        "authLocalUsers": {"enabled": true, "users": [
            {"username": "alice", "usergroup": "admins", "password": phc("alice pw")}]},
        "accessControlLists": [{"name": "admin", "matchUsergroups": ["admins"],
                                "addToEveryAction": true,
                                "permissions": {"exec": true, "kill": true}}],
    })
}

/// A config in two parts: the settings and a first action `half`; the rest appends `whole`.
fn parts() -> (String, String) {
    let first = format!(
        "{}actions:\n  - {{id: half, title: Half, shell: echo half}}\n",
        to_yaml(&settings())
    );
    (
        first,
        "  - {id: whole, title: Whole, shell: echo whole}\n".into(),
    )
}

/// The config with one action `start`.
fn start_config() -> String {
    format!(
        "{}actions:\n  - {{id: start, title: Start, shell: echo start}}\n",
        to_yaml(&settings())
    )
}

/// A python3 process that opens `open` for writing (truncating it), writes `first`, renames
/// `open` to `rename_to` if given, says so by creating `ready`, then waits for `go` (both in
/// `dir`) and writes `rest` through the same handle before it closes it.
struct Writer {
    child: Child,
    dir: PathBuf,
}

const WRITER: &str = r#"
import os, sys, time
path, first, rest, rename_to, dir = sys.argv[1:6]
f = open(path, 'w')
f.write(first); f.flush()
if rename_to:
    os.rename(path, rename_to)
open(os.path.join(dir, 'ready'), 'w').close()
while not os.path.exists(os.path.join(dir, 'go')):
    time.sleep(0.01)
f.write(rest); f.close()
"#;

impl Writer {
    fn start(dir: &Path, open: &Path, rename_to: Option<&Path>, first: &str, rest: &str) -> Writer {
        let _ = std::fs::remove_file(dir.join("go"));
        let _ = std::fs::remove_file(dir.join("ready"));
        let child = Command::new("python3")
            .arg("-c")
            .arg(WRITER)
            .arg(open)
            .arg(first)
            .arg(rest)
            .arg(rename_to.map_or(Path::new(""), |p| p))
            .arg(dir)
            .spawn()
            .expect("python3");
        let writer = Writer {
            child,
            dir: dir.to_path_buf(),
        };
        assert!(
            wait_until(SOON, || dir.join("ready").exists()),
            "the writer never wrote its first part"
        );
        writer
    }

    /// Lets the writer write the rest and close; waits for it to exit.
    fn finish(mut self) {
        std::fs::write(self.dir.join("go"), "").unwrap();
        let status = self.child.wait().expect("the writer");
        assert!(status.success(), "the writer failed");
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// No reload for `HELD` while the writer holds the file, and the log says what it waits for.
fn held(server: &Server) {
    repeat_for(HELD, Duration::from_millis(100), || {
        assert_eq!(
            server.log_count("config reloaded"),
            0,
            "applied while a writer holds it open"
        );
        true
    });
    assert!(
        server.log_shows("still open for writing"),
        "the wait is not said"
    );
}

/// Applied once, whole: both actions there.
fn applied_whole(server: &Server) {
    assert!(
        wait_until(RELOAD, || server.log_contains("config reloaded")),
        "the whole file is never applied"
    );
    let (status, body) = server.call("GetDashboard", json!({"title": ""}));
    assert_eq!(status, 200);
    let text = body.to_string();
    assert!(text.contains("Whole") && text.contains("Half"), "{text}");
    assert_eq!(server.log_count("config reloaded"), 1, "applied once");
    assert!(!server.log_contains("cannot tell whether a writer"));
}

fn watching(server: &Server) {
    assert!(server.log_shows("for changes"), "never said it watches");
}

/// `config.yaml.tmp` opened, half written, renamed over `config.yaml`, and written on through
/// the same handle: held until its writer closes it.
#[test]
fn a_file_renamed_into_place_while_its_writer_still_writes_is_held_until_closed() {
    let server = Server::start_yaml(&start_config());
    watching(&server);
    assert!(server.log_shows("a file lease probe"));
    let (first, rest) = parts();
    let tmp = server.path("config.yaml.tmp");
    let writer = Writer::start(
        server.dir(),
        &tmp,
        Some(&server.path("config.yaml")),
        &first,
        &rest,
    );
    held(&server);
    writer.finish();
    applied_whole(&server);
}

/// The same in the overlay directory: `config.d/50-x.yaml.tmp` renamed to `50-x.yaml`.
#[test]
fn an_overlay_file_renamed_into_place_while_still_written_is_held_until_closed() {
    let mut config = settings();
    config["overlay"] = json!("config.d");
    let yaml = format!(
        "{}actions:\n  - {{id: start, title: Start, shell: echo start}}\n",
        to_yaml(&config)
    );
    let dir = TempDir::new();
    let path = dir.path().join("config.yaml");
    std::fs::write(&path, yaml).unwrap();
    let overlay = dir.path().join("config.d");
    std::fs::create_dir(&overlay).unwrap();
    let server = Server::start_yaml_as("", Some(path.to_str().unwrap()));
    watching(&server);
    let before = server.log_count("config reloaded");
    let first = "actions:\n  - {id: half, title: Half, shell: echo half}\n";
    let rest = "  - {id: whole, title: Whole, shell: echo whole}\n";
    let writer = Writer::start(
        dir.path(),
        &overlay.join("50-x.yaml.tmp"),
        Some(&overlay.join("50-x.yaml")),
        first,
        rest,
    );
    repeat_for(HELD, Duration::from_millis(100), || {
        assert_eq!(
            server.log_count("config reloaded"),
            before,
            "the overlay file applied while its writer holds it"
        );
        true
    });
    assert!(server.log_shows("still open for writing"));
    writer.finish();
    assert!(
        wait_until(RELOAD, || server.log_count("config reloaded") > before),
        "the whole overlay file is never applied"
    );
    let (_, body) = server.call("GetDashboard", json!({"title": ""}));
    assert!(body.to_string().contains("Whole"), "{body}");
    assert_eq!(server.log_count("config reloaded"), before + 1);
}

/// `config.yaml` links to `real/a.yaml`; after the start a writer opens `real2/b.yaml` (a
/// directory nobody watches), writes half and holds it; the link is repointed to it
/// (`ln -sfn`): held until the writer closes, then applied whole.
#[test]
fn a_link_repointed_to_a_file_still_being_written_is_held_until_it_is_closed() {
    let dir = TempDir::new();
    for d in ["real", "real2"] {
        std::fs::create_dir(dir.path().join(d)).unwrap();
    }
    std::fs::write(dir.path().join("real/a.yaml"), start_config()).unwrap();
    let link = dir.path().join("config.yaml");
    std::os::unix::fs::symlink("real/a.yaml", &link).unwrap();
    let server = Server::start_yaml_as("", Some(link.to_str().unwrap()));
    watching(&server);
    let (first, rest) = parts();
    let writer = Writer::start(
        dir.path(),
        &dir.path().join("real2/b.yaml"),
        None,
        &first,
        &rest,
    );
    let tmp = dir.path().join("config.yaml.new");
    std::os::unix::fs::symlink("real2/b.yaml", &tmp).unwrap();
    std::fs::rename(&tmp, &link).unwrap();
    held(&server);
    writer.finish();
    applied_whole(&server);
}

/// `ln config.yaml alt/hl.yaml`, then a writer truncates the file through `alt/hl.yaml`, writes
/// half and holds it: the change is seen (the file's own watch), held while open, and applied
/// whole once closed. The link's directory is never watched.
#[test]
fn an_edit_through_a_hard_link_elsewhere_is_seen_and_held_while_open() {
    let server = Server::start_yaml(&start_config());
    watching(&server);
    let alt = TempDir::new();
    let hard = alt.path().join("hl.yaml");
    std::fs::hard_link(server.path("config.yaml"), &hard).unwrap();
    let (first, rest) = parts();
    let writer = Writer::start(alt.path(), &hard, None, &first, &rest);
    held(&server);
    writer.finish();
    applied_whole(&server);
    // And again, a plain write through the link (`cat new > alt/hl.yaml`): a tightening is
    // applied.
    let mut locked = settings();
    locked["authRequireGuestsToLogin"] = json!(true);
    let text = format!(
        "{}actions:\n  - {{id: start, title: Start, shell: echo start}}\n",
        to_yaml(&locked)
    );
    std::fs::write(&hard, text).unwrap();
    assert!(
        wait_until(RELOAD, || server.log_count("config reloaded") == 2),
        "a write through the hard link is not applied"
    );
}

/// The link's target edited as soon as the watcher has armed the config's own directory, with
/// no wait for the link's lookup (done off the event loop) and its log line: the edit is
/// applied all the same, by the read that follows the lookup if it came before it.
#[test]
fn an_edit_of_a_link_target_right_after_the_start_is_applied() {
    let dir = TempDir::new();
    std::fs::create_dir(dir.path().join("real")).unwrap();
    std::fs::write(dir.path().join("real/a.yaml"), start_config()).unwrap();
    let link = dir.path().join("config.yaml");
    std::os::unix::fs::symlink("real/a.yaml", &link).unwrap();
    let server = Server::start_yaml_as("", Some(link.to_str().unwrap()));
    assert!(wait_until(SOON, || server.log_contains("a file lease probe")));
    let (first, rest) = parts();
    let staged = dir.path().join("real/a.yaml.tmp");
    std::fs::write(&staged, first + &rest).unwrap();
    std::fs::rename(&staged, dir.path().join("real/a.yaml")).unwrap();
    applied_whole(&server);
}

/// actiond run as `nobody` without CAP_LEASE on a config owned by root: the kernel cannot be
/// asked, the log says so once and which way holds, and a writer seen opening the config is
/// still waited for (the count).
#[test]
#[ignore = "runs actiond as another user (setpriv, root): scripts/test.sh runs it"]
fn without_leases_the_log_says_so_and_a_counted_writer_still_holds() {
    let server = Server::start_wrapped(
        json!({}),
        &[],
        &[
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
        ],
    );
    watching(&server);
    std::fs::write(server.path("config.yaml"), start_config()).unwrap();
    assert!(
        wait_until(RELOAD, || server.log_contains("config reloaded")),
        "an edit is not applied"
    );
    assert!(server.log_shows("cannot ask the kernel whether a process holds"));
    assert!(server.log_shows("neither owns it nor holds CAP_LEASE"));
    assert_eq!(server.log_count("cannot ask the kernel"), 1, "said once");
    assert!(!server.log_contains("a file lease probe"));
    let before = server.log_count("config reloaded");
    let (first, rest) = parts();
    let writer = Writer::start(
        server.dir(),
        &server.path("config.yaml"),
        None,
        &first,
        &rest,
    );
    repeat_for(HELD, Duration::from_millis(100), || {
        assert_eq!(server.log_count("config reloaded"), before, "applied half");
        true
    });
    writer.finish();
    assert!(wait_until(RELOAD, || server.log_count("config reloaded") > before));
    let (_, body) = server.call("GetDashboard", json!({"title": ""}));
    assert!(body.to_string().contains("Whole"), "{body}");
}
