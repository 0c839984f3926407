//! `runActionsAs`: a user actions cannot run as is refused at start and at a reload, never guessed
//! at, and the log says once which user actions run as. (Running actions as another user,
//! with the capabilities the shipped unit grants, needs root: `escapes::` has that test,
//! and the nspawn stage checks it under the real unit.)

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::harness::{BIN, Server, TempDir, config_with, run_binary, shell_action, wait_until};

const SOON: Duration = Duration::from_secs(20);

/// Starts actiond on `yaml`, as the test's user or through `wrapper`, and returns its exit
/// code and what it printed: it must refuse at once.
fn refused(yaml: &str, wrapper: &[&str]) -> (Option<i32>, String) {
    let dir = TempDir::new();
    let config = dir.path().join("config.yaml");
    std::fs::write(&config, yaml).unwrap();
    let config = config.to_str().unwrap();
    if wrapper.is_empty() {
        let done = run_binary(
            &["--config", config, "--listen", "127.0.0.1:0"],
            dir.path(),
            SOON,
        );
        return (done.status.code(), done.stderr);
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(
        dir.path().join("config.yaml"),
        PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    let out = Command::new(wrapper[0])
        .args(&wrapper[1..])
        .args([BIN, "--config", config, "--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_unknown_user_is_refused_at_start() {
    let (code, err) = refused("runActionsAs: actiond-no-such-user\nactions: []\n", &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("runActionsAs") && err.contains("no user \"actiond-no-such-user\""),
        "{err}"
    );
}

#[test]
fn a_user_actiond_cannot_become_is_refused_naming_what_it_lacks() {
    // As root, the test drops to nobody without capabilities (a developer's actiond);
    // as anyone else, it is that already.
    let root = nix::unistd::geteuid().is_root();
    let (target, wrapper): (&str, &[&str]) = if root {
        let drop = &[
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--",
        ];
        ("root", drop)
    } else {
        ("root", &[])
    };
    let (code, err) = refused(&format!("runActionsAs: {target}\nactions: []\n"), wrapper);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("actions cannot run as \"root\"")
            && err.contains("CAP_SETGID, CAP_SETUID, CAP_KILL")
            && err.contains("remove runActionsAs"),
        "{err}"
    );
}

#[test]
fn without_run_as_actions_run_as_actiond_and_the_log_says_so() {
    let server = Server::start(config_with(vec![shell_action("who", "id -u")]));
    assert!(
        server.log_shows("actions run as actiond's own user"),
        "the start does not say who actions run as"
    );
    let entry = server.run("who");
    let own = nix::unistd::geteuid().as_raw().to_string();
    assert_eq!(entry["stdout"], format!("{own}\n"), "{entry}");
    // Naming actiond's own user is the same, said so.
    let me = nix::unistd::User::from_uid(nix::unistd::geteuid())
        .unwrap()
        .unwrap()
        .name;
    let mut config = config_with(vec![]);
    config["runActionsAs"] = json!(me);
    let named = Server::start(config);
    assert!(named.log_shows(&format!(
        "actions run as actiond's own user, {me} (runActionsAs)"
    )));
}

#[test]
fn a_reload_to_a_user_that_cannot_be_honoured_keeps_the_previous_config() {
    let server = Server::start(config_with(vec![shell_action("a", "true")]));
    assert!(wait_until(SOON, || server.log_contains("for changes")));
    let yaml =
        "runActionsAs: actiond-no-such-user\nactions:\n  - {id: b, title: B, shell: 'true'}\n";
    std::fs::write(server.path("config.yaml"), yaml).unwrap();
    assert!(
        wait_until(SOON, || server.log_contains("config not reloaded")),
        "no refusal logged"
    );
    assert!(server.log_shows("no user \"actiond-no-such-user\""));
    assert_eq!(server.run("a")["exitCode"], 0);
}
