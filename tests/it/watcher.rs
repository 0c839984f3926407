//! The watcher's own timing, from outside: the start-up baseline is what the start-up load
//! read (an edit made before the watches exist is applied), a refused config is refused once
//! until its files change, re-arming after directory changes keeps its spacing however
//! fast a directory churns, every change of which files make up the config (a file
//! renamed away to a name the loader skips, moved out, removed, a directory moved away, a
//! symlink removed, or a file renamed back) reloads it like an edit, and a file that appears
//! under a watched name by a link (hard, symlink, absolute or relative, made before its target
//! or after) is applied and its target followed, while one created and then written in steps
//! is still applied once, whole.

use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
use serde_json::{Value, json};

use crate::client::assert_json_error;
use crate::harness::{SOON, Server, TempDir, repeat_for, replace, to_yaml, wait_until};

/// A reload: 2 s of quiet, two reads 250 ms apart, and a wide margin for a busy machine.
const RELOAD: Duration = Duration::from_secs(20);

/// A config where guests may run `reboot` (or not), with `padding` actions that each carry an
/// unknown key: every one is a warning line at start, logged after the config is read.
fn config(exec: bool, padding: usize) -> String {
    let mut actions = vec![json!({"id": "reboot", "title": "Reboot", "shell": "true"})];
    actions.extend((0..padding).map(|i| {
        json!({"id": format!("p{i}"), "title": format!("P{i}"), "shell": "true", "colour": "red"})
    }));
    to_yaml(&json!({
        "defaultPermissions": {"view": true, "exec": exec, "logs": true},
        "overlay": "over.d",
        "actions": actions,
    }))
}

fn start_reboot(server: &Server) -> (u16, Value) {
    server.call("StartAction", json!({"actionId": "reboot"}))
}

/// A right taken away between the start-up load and the watcher's first look is applied: the
/// service is held at its first log line after the load (3,000 warnings, far more than its
/// stderr pipe holds, come after it) while the test writes the new config, so the edit lands
/// after the load read the file and before any watch exists, every time.
#[test]
fn an_edit_between_the_start_up_load_and_the_watches_is_applied() {
    let server = Server::start_held_at(&config(true, 3000), " using ", |dir| {
        replace(&dir.join("config.yaml"), &config(false, 3000));
    });
    assert!(
        wait_until(RELOAD, || server.log_contains("config reloaded")),
        "the edit made before the watches existed was never applied"
    );
    assert!(server.log_contains("changed while the watches were set up"));
    let (status, body) = start_reboot(&server);
    assert_eq!(status, 403, "{body}");
    assert_json_error(&body, "permission_denied");
}

/// Bad YAML is refused once, at warn level, however often the watcher looks again (a
/// directory on the way churning, the file opened and read): only a change of the files is
/// tried again, and a good one is applied.
#[test]
fn a_refused_config_is_refused_once_until_its_files_change() {
    let server = Server::start_yaml(&config(true, 0));
    assert!(wait_until(SOON, || server.log_contains("for changes")));
    let path = server.path("config.yaml");
    replace(&path, "actions:\n  - id: reboot\n    shell: [true\n");
    assert!(
        wait_until(RELOAD, || server.log_contains("config not reloaded")),
        "the bad YAML was never refused"
    );
    // Re-arms (the overlay directory made and removed again) and reads of the file, for
    // longer than a reload takes to settle, then time to settle.
    let inc = server.path("over.d");
    let churned = repeat_for(
        Duration::from_millis(3000),
        Duration::from_millis(50),
        || {
            let _ = std::fs::remove_dir(&inc);
            std::fs::create_dir(&inc).unwrap();
            let _ = std::fs::read(&path).unwrap();
            true
        },
    );
    assert!(churned > 10, "{churned}");
    std::thread::sleep(Duration::from_secs(3)); // Nothing to wait for: a refusal must not come.
    let log = server.log_count("config not reloaded");
    assert_eq!(log, 1, "refused {log} times");
    assert!(server.log_shows("WARN config not reloaded"));

    replace(&path, &config(false, 0));
    assert!(
        wait_until(RELOAD, || server.log_contains("config reloaded")),
        "the good config after the bad one was never applied"
    );
    assert_eq!(start_reboot(&server).0, 403);
    assert_eq!(server.log_count("config not reloaded"), 1);
}

/// A directory on the way to the config that churns as fast as the test can remove and make
/// it re-arms the watches at most every 0.2 s, each re-arm reading the config once: counted
/// by the test's own inotify watch on the config file (every open of it), over 2 s.
#[test]
fn re_arming_after_directory_changes_keeps_its_spacing() {
    let server = Server::start_yaml(&config(true, 0));
    assert!(wait_until(SOON, || server.log_contains("for changes")));
    let path = server.path("config.yaml");
    let inc = server.path("over.d");
    // Let the start-up reads pass.
    std::thread::sleep(Duration::from_millis(500)); // Nothing to wait for: opens are counted next.
    let inotify = Inotify::init(InitFlags::IN_NONBLOCK).unwrap();
    // Closes too: inotify merges an event into an identical one still unread, so opens alone
    // would read as one.
    let mask = AddWatchFlags::IN_OPEN | AddWatchFlags::IN_CLOSE_NOWRITE;
    inotify.add_watch(&path, mask).unwrap();
    let window = Duration::from_secs(2);
    let start = Instant::now();
    let mut churns = 0u64;
    while start.elapsed() < window {
        let _ = std::fs::remove_dir(&inc);
        std::fs::create_dir(&inc).unwrap();
        churns += 1;
    }
    let mut opens = 0;
    while let Ok(events) = inotify.read_events() {
        opens += events
            .iter()
            .filter(|e| e.mask.contains(AddWatchFlags::IN_OPEN))
            .count();
    }
    eprintln!("{churns} churns in {window:?}: {opens} opens of the config");
    // A re-arm per 0.2 s is 11 in 2 s; a re-arm per event batch would be thousands.
    assert!(churns > 100, "the directory barely churned: {churns}");
    assert!(
        (1..=20).contains(&opens),
        "{opens} reads of the config in {window:?}"
    );
}

/// Waits for the reload after `what`: one more "config reloaded" than `seen`, which it then
/// counts.
fn reloaded(server: &Server, seen: &mut usize, what: &str) {
    let before = *seen;
    assert!(
        wait_until(RELOAD, || server.log_count("config reloaded") > before),
        "{what}: no reload"
    );
    *seen = server.log_count("config reloaded");
}

/// Whether guests may run `reboot`, as StartAction answers.
fn guests_may_reboot(server: &Server) -> bool {
    match start_reboot(server) {
        (200, _) => true,
        (403, body) => {
            assert_json_error(&body, "permission_denied");
            false
        }
        (status, body) => panic!("{status}: {body}"),
    }
}

/// What a step does, whether guests may run `reboot` after it, and how.
type Step<'a> = (&'static str, bool, Box<dyn Fn() + 'a>);

/// An overlay file that lets guests run `reboot`, switched off and on the usual ways: renamed
/// to `.disabled` and back, moved out of the directory and back, its directory moved away
/// and back, a symlink to it made and removed, a hard link made, the file removed. Each is a
/// reload, and the right the file gives is gone or back after it.
#[test]
fn switching_an_overlay_file_off_or_on_by_any_rename_or_removal_reloads() {
    // The overlay directory and its file are made before the config names them, so that
    // naming them is one reload.
    let server = Server::start_yaml(&to_yaml(&json!({
        "defaultPermissions": {"view": true, "exec": false, "logs": true},
        "actions": [{"id": "reboot", "title": "Reboot", "shell": "true"}],
    })));
    assert!(wait_until(SOON, || server.log_contains("for changes")));
    assert!(!guests_may_reboot(&server));
    let mut seen = server.log_count("config reloaded");
    let over = server.path("over.d");
    let open = over.join("50-open.yaml");
    std::fs::create_dir(&over).unwrap();
    let opening = to_yaml(&json!({
        "defaultPermissions": {"view": true, "exec": true, "logs": true},
    }));
    std::fs::write(&open, &opening).unwrap();
    replace(&server.path("config.yaml"), &config(false, 0));
    reloaded(&server, &mut seen, "the config naming the overlay");
    assert!(guests_may_reboot(&server), "the overlay gives the right");

    let steps: Vec<Step<'_>> = vec![
        (
            "renamed to .disabled",
            false,
            Box::new(|| std::fs::rename(&open, over.join("50-open.yaml.disabled")).unwrap()),
        ),
        (
            "a .disabled renamed back to .yaml",
            true,
            Box::new(|| std::fs::rename(over.join("50-open.yaml.disabled"), &open).unwrap()),
        ),
        (
            "moved out of the directory",
            false,
            Box::new(|| std::fs::rename(&open, server.path("parked.yaml")).unwrap()),
        ),
        (
            "moved back in",
            true,
            Box::new(|| std::fs::rename(server.path("parked.yaml"), &open).unwrap()),
        ),
        (
            "the directory moved away",
            false,
            Box::new(|| std::fs::rename(&over, server.path("over.d.off")).unwrap()),
        ),
        (
            "the directory moved back",
            true,
            Box::new(|| std::fs::rename(server.path("over.d.off"), &over).unwrap()),
        ),
        (
            "moved to another directory",
            false,
            Box::new(|| std::fs::rename(&open, server.path("open.yaml")).unwrap()),
        ),
        (
            "a symlink to it made in the directory (ln -s)",
            true,
            Box::new(|| {
                std::os::unix::fs::symlink(server.path("open.yaml"), over.join("60-link.yaml"))
                    .unwrap()
            }),
        ),
        (
            "the symlink removed",
            false,
            Box::new(|| std::fs::remove_file(over.join("60-link.yaml")).unwrap()),
        ),
        (
            "a hard link to it made in the directory (ln)",
            true,
            Box::new(|| std::fs::hard_link(server.path("open.yaml"), &open).unwrap()),
        ),
        (
            "removed",
            false,
            Box::new(|| std::fs::remove_file(&open).unwrap()),
        ),
    ];
    for (what, may, step) in steps {
        step();
        reloaded(&server, &mut seen, what);
        assert_eq!(guests_may_reboot(&server), may, "after: {what}");
    }
}

/// An include file that adds an action, switched off by renaming it to a name the loader
/// skips or by moving it out of its directory, and on again by renaming it back: the action
/// is gone and back with each reload.
#[test]
fn an_include_file_renamed_away_or_back_is_a_reload() {
    let inc = TempDir::new();
    let file = inc.path().join("10-extra.yaml");
    let extra = json!({"id": "extra", "title": "Extra", "shell": "true"});
    std::fs::write(&file, to_yaml(&json!({"actions": [extra]}))).unwrap();
    let yaml = to_yaml(&json!({
        "defaultPermissions": {"view": true, "exec": true, "logs": true},
        "include": inc.path().to_str().expect("utf-8 path"),
        "actions": [{"id": "reboot", "title": "Reboot", "shell": "true"}],
    }));
    let server = Server::start_yaml(&yaml);
    assert!(wait_until(SOON, || server.log_contains("for changes")));
    let mut seen = server.log_count("config reloaded");
    let has_extra = || match server.call("StartAction", json!({"actionId": "extra"})) {
        (200, _) => true,
        (404, body) => {
            assert_json_error(&body, "not_found");
            false
        }
        (status, body) => panic!("{status}: {body}"),
    };
    assert!(has_extra());
    let off = inc.path().join("10-extra.yaml.disabled");
    let out = server.path("10-extra.yaml");
    let steps: [(&str, &std::path::Path, &std::path::Path, bool); 4] = [
        ("renamed to .disabled", &file, &off, false),
        ("renamed back to .yaml", &off, &file, true),
        ("moved out of its directory", &file, &out, false),
        ("moved back in", &out, &file, true),
    ];
    for (what, from, to, present) in steps {
        std::fs::rename(from, to).unwrap();
        reloaded(&server, &mut seen, what);
        assert_eq!(has_extra(), present, "after: {what}");
    }
}

/// A config whose guests may run `reboot` (or not), with the overlay directory `overlay`.
fn config_over(exec: bool, overlay: &Path) -> String {
    to_yaml(&json!({
        "defaultPermissions": {"view": true, "exec": exec, "logs": true},
        "overlay": overlay,
        "actions": [{"id": "reboot", "title": "Reboot", "shell": "true"}],
    }))
}

/// An overlay file that takes `exec` from guests (or gives it).
fn lockdown(exec: bool) -> String {
    to_yaml(&json!({"defaultPermissions": {"view": true, "exec": exec, "logs": true}}))
}

/// A layout as stow and `sites-enabled` make it: `available/` holds the files, `over.d/` (the
/// overlay) and `inc.d/` (the include directory) the links to them. Made before the start.
fn layout() -> TempDir {
    let root = TempDir::new();
    for dir in ["available", "over.d", "inc.d"] {
        std::fs::create_dir(root.path().join(dir)).unwrap();
    }
    root
}

/// Whether, within `RELOAD`, a guest's `reboot` comes to answer `status`.
fn reboot_comes_to(server: &Server, status: u16) -> bool {
    crate::harness::poll_every(Duration::from_millis(250), RELOAD, || {
        (start_reboot(server).0 == status).then_some(())
    })
    .is_some()
}

/// A file linked into the overlay brings its text with no write after it: a hard link and an
/// absolute symlink are applied like a file written there (a relative symlink: fe30f).
#[test]
fn a_hard_link_or_an_absolute_symlink_into_the_overlay_is_applied() {
    for how in ["hard link", "absolute symlink"] {
        let root = layout();
        let target = root.path().join("available/90-lockdown.yaml");
        std::fs::write(&target, lockdown(false)).unwrap();
        let server = Server::start_yaml(&config_over(true, &root.path().join("over.d")));
        assert!(wait_until(SOON, || server.log_contains("for changes")));
        assert_eq!(start_reboot(&server).0, 200, "{how}: before the link");
        let link = root.path().join("over.d/90-lockdown.yaml");
        if how == "hard link" {
            std::fs::hard_link(&target, &link).unwrap();
        } else {
            std::os::unix::fs::symlink(&target, &link).unwrap();
        }
        assert!(
            reboot_comes_to(&server, 403),
            "{how}: the lockdown linked into the overlay was never applied"
        );
        assert_eq!(server.log_count("config reloaded"), 1, "{how}");
    }
}

/// An action in a file symlinked into the include directory (relatively, as stow links) can
/// be run once the link is made.
#[test]
fn an_action_symlinked_into_the_include_directory_appears() {
    let root = layout();
    let extra = json!({"actions": [{"id": "extra", "title": "Extra", "shell": "true"}]});
    std::fs::write(root.path().join("available/extra.yaml"), to_yaml(&extra)).unwrap();
    let server = Server::start_yaml(&to_yaml(&json!({
        "defaultPermissions": {"view": true, "exec": true, "logs": true},
        "include": root.path().join("inc.d"),
        "actions": [{"id": "reboot", "title": "Reboot", "shell": "true"}],
    })));
    assert!(wait_until(SOON, || server.log_contains("for changes")));
    let start_extra = || server.call("StartAction", json!({"actionId": "extra"}));
    let (status, body) = start_extra();
    assert_eq!(status, 404, "{body}");
    std::os::unix::fs::symlink(
        "../available/extra.yaml",
        root.path().join("inc.d/extra.yaml"),
    )
    .unwrap();
    let ran = crate::harness::poll_every(Duration::from_millis(250), RELOAD, || {
        (start_extra().0 == 200).then_some(())
    });
    assert!(ran.is_some(), "the linked include's action never appeared");
}

/// A link made after the start is followed: its target's later edits (in place, and by an
/// editor's rename) are applied, each.
#[test]
fn a_link_made_after_the_start_follows_its_target_s_edits() {
    let root = layout();
    let target = root.path().join("available/90-lockdown.yaml");
    std::fs::write(&target, lockdown(false)).unwrap();
    let server = Server::start_yaml(&config_over(true, &root.path().join("over.d")));
    assert!(wait_until(SOON, || server.log_contains("for changes")));
    std::os::unix::fs::symlink(
        "../available/90-lockdown.yaml",
        root.path().join("over.d/90-lockdown.yaml"),
    )
    .unwrap();
    assert!(reboot_comes_to(&server, 403), "the link was never applied");
    std::fs::write(&target, lockdown(true)).unwrap();
    assert!(
        reboot_comes_to(&server, 200),
        "an in-place edit of the link's target was never applied"
    );
    replace(&target, &lockdown(false));
    assert!(
        reboot_comes_to(&server, 403),
        "the link's target replaced by rename was never applied"
    );
    assert_eq!(server.log_count("config reloaded"), 3);
}

/// A file created in the overlay and then written in two steps (closed between them, or kept
/// open past the quiet) is applied once, whole: its first half (an action guests may run,
/// before the rule that takes `exec` from them) is never in force, though a creation is now a
/// change of its own.
#[test]
fn an_overlay_file_created_then_written_in_steps_is_applied_once_whole() {
    use std::io::Write;
    let first = to_yaml(&json!({"actions": [{"id": "extra", "title": "Extra", "shell": "true"}]}));
    let second = lockdown(false);
    for held in [false, true] {
        let root = layout();
        let server = Server::start_yaml(&config_over(true, &root.path().join("over.d")));
        assert!(wait_until(SOON, || server.log_contains("for changes")));
        let path = root.path().join("over.d/50-extra.yaml");
        let never_extra = |period: u64| {
            repeat_for(
                Duration::from_millis(period),
                Duration::from_millis(100),
                || {
                    let (status, _) = server.call("StartAction", json!({"actionId": "extra"}));
                    assert_ne!(status, 200, "held {held}: the first half is in force");
                    true
                },
            );
        };
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(first.as_bytes()).unwrap();
        if held {
            never_extra(3_000);
        } else {
            drop(f);
            never_extra(1_200);
            f = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap();
        }
        f.write_all(second.as_bytes()).unwrap();
        drop(f);
        assert!(
            reboot_comes_to(&server, 403),
            "held {held}: the whole file was never applied"
        );
        never_extra(3_000);
        assert_eq!(
            server.log_count("config reloaded"),
            1,
            "held {held}: applied once, whole"
        );
    }
}

/// A link made before its target (`ln -s ../available/x.yaml over.d/` first, the file written
/// next; or into a directory not made yet): the file is applied once it is made.
#[test]
fn a_link_made_before_its_target_is_applied_once_the_target_is_made() {
    for dir in ["available", "later"] {
        let root = layout();
        let server = Server::start_yaml(&config_over(true, &root.path().join("over.d")));
        assert!(wait_until(SOON, || server.log_contains("for changes")));
        std::os::unix::fs::symlink(
            format!("../{dir}/90-lockdown.yaml"),
            root.path().join("over.d/90-lockdown.yaml"),
        )
        .unwrap();
        assert!(
            wait_until(RELOAD, || server.log_contains("leads nowhere yet")),
            "{dir}: the link leading nowhere was never looked up"
        );
        assert_eq!(start_reboot(&server).0, 200, "{dir}: before the target");
        std::fs::create_dir_all(root.path().join(dir)).unwrap();
        std::fs::write(
            root.path().join(dir).join("90-lockdown.yaml"),
            lockdown(false),
        )
        .unwrap();
        assert!(
            reboot_comes_to(&server, 403),
            "{dir}: the target made after the link was never applied"
        );
    }
}

/// The config file's own directory replaced whole, as a deploy does it (`mv conf conf.old &&
/// mv conf.new conf`; `rm -rf conf && mkdir conf`; moved away for a while and a new one moved
/// in): each new config is applied, and so is a later edit of the file in the new directory.
#[test]
fn the_config_files_own_directory_replaced_whole_is_applied() {
    let dir = TempDir::new();
    let conf = dir.path().join("conf");
    let write_conf = |at: &Path, exec: bool| {
        std::fs::create_dir_all(at).unwrap();
        std::fs::write(
            at.join("config.yaml"),
            config_over(exec, &at.join("over.d")),
        )
        .unwrap();
    };
    write_conf(&conf, true);
    let config_path = conf.join("config.yaml");
    let server = Server::start_yaml_as("", Some(config_path.to_str().unwrap()));
    assert!(wait_until(SOON, || server.log_contains("for changes")));
    assert!(guests_may_reboot(&server));
    let mut seen = server.log_count("config reloaded");
    let steps: Vec<Step<'_>> = vec![
        (
            "mv conf conf.old && mv conf.new conf",
            false,
            Box::new(|| {
                write_conf(&dir.path().join("conf.new"), false);
                std::fs::rename(&conf, dir.path().join("conf.old")).unwrap();
                std::fs::rename(dir.path().join("conf.new"), &conf).unwrap();
            }),
        ),
        (
            "an edit of the file in the new directory",
            true,
            Box::new(|| replace(&config_path, &config_over(true, &conf.join("over.d")))),
        ),
        (
            "rm -rf conf && mkdir conf",
            false,
            Box::new(|| {
                std::fs::remove_dir_all(&conf).unwrap();
                write_conf(&conf, false);
            }),
        ),
        (
            "moved away for a while (the watches armed meanwhile), a new one moved in",
            true,
            Box::new(|| {
                std::fs::rename(&conf, dir.path().join("conf.gone")).unwrap();
                std::thread::sleep(Duration::from_millis(2500));
                write_conf(&dir.path().join("conf.next"), true);
                std::fs::rename(dir.path().join("conf.next"), &conf).unwrap();
            }),
        ),
        (
            "another edit",
            false,
            Box::new(|| replace(&config_path, &config_over(false, &conf.join("over.d")))),
        ),
    ];
    for (what, may, step) in steps {
        step();
        reloaded(&server, &mut seen, what);
        assert_eq!(guests_may_reboot(&server), may, "after: {what}");
    }
    assert!(!server.log_contains("will not be noticed"));
}
