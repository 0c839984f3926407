//! Fresh-eyes findings of the fe30e pass (issue 30's claim: no file, client or peer can
//! stall, steer, flood or rewrite actiond; a config is never applied half written, rights are
//! never widened silently). Each test here reproduces one finding against the real binary and
//! fails on the build it was found on; it is ignored (with the finding's number) so the suite
//! stays green until the finding is fixed.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{
    SOON, Server, TempDir, config_with, shell_action, split_removes_victim, to_yaml, wait_until,
    write,
};

/// A reload: 2 s of quiet, two reads 250 ms apart, and a wide margin.
const RELOAD: Duration = Duration::from_secs(10);

/// An overlay file with one action that echoes its id.
fn overlay_action(id: &str) -> String {
    to_yaml(&json!({"actions": [shell_action(id, &format!("echo {id}"))]}))
}

/// Whether `id` runs for the guest and prints its id.
fn runs(server: &Server, id: &str) -> bool {
    let (status, body) = server.call("StartActionAndWait", json!({"actionId": id}));
    status == 200 && body["logEntry"]["stdout"] == format!("{id}\n")
}

fn reloads(server: &Server) -> usize {
    server.log_count("config reloaded")
}

/// Starts a service whose config has `overlay: config.d` (the directory is only known once
/// the server made it, so each test makes the overlay after the start; its creation is a
/// change the watcher applies).
fn with_overlay(config: Value) -> Server {
    let mut config = config;
    config["overlay"] = json!("config.d");
    Server::start(config)
}

/// F1: an `overlay:` directory that is replaced (removed and made again, as a deploy that
/// unpacks a fresh `config.d` does) is never watched again: the files written into the new
/// directory are not applied, so a file that takes a right away (`defaultPermissions` with
/// `exec: false`) leaves the guest running actions until actiond restarts.
#[test]
fn a_replaced_overlay_directory_is_watched_again() {
    let server = with_overlay(config_with(vec![shell_action("main", "echo main")]));
    assert!(
        wait_until(SOON, || server.log_contains("for changes")),
        "the watcher never started"
    );
    let overlay = server.path("config.d");
    std::fs::create_dir(&overlay).expect("config.d");
    let before = reloads(&server);
    write(&overlay.join("10-a.yaml"), &overlay_action("first"));
    assert!(
        wait_until(RELOAD, || reloads(&server) > before),
        "no reload after the first overlay file"
    );
    assert!(runs(&server, "first"));

    // The overlay is replaced as a whole: removed, made again, a file put in it.
    let before = reloads(&server);
    std::fs::remove_dir_all(&overlay).expect("rm config.d");
    std::fs::create_dir(&overlay).expect("mkdir config.d");
    assert!(
        wait_until(RELOAD, || reloads(&server) > before),
        "no reload after the overlay was replaced"
    );
    let before = reloads(&server);
    write(&overlay.join("20-b.yaml"), &overlay_action("second"));
    assert!(
        wait_until(RELOAD, || reloads(&server) > before),
        "a file written into the replaced overlay directory was never applied"
    );
    assert!(runs(&server, "second"));
}

/// F1 (its revoking form): after the overlay directory was replaced, a file that takes the
/// guest's right to run is never applied; the guest keeps running.
#[test]
fn a_right_taken_away_in_a_replaced_overlay_is_applied() {
    let mut config = config_with(vec![shell_action("main", "echo main")]);
    config["defaultPermissions"] = json!({"view": true, "exec": true, "logs": true});
    let server = with_overlay(config);
    assert!(
        wait_until(SOON, || server.log_contains("for changes")),
        "the watcher never started"
    );
    let overlay = server.path("config.d");
    let before = reloads(&server);
    std::fs::create_dir(&overlay).expect("config.d");
    write(&overlay.join("10-a.yaml"), &overlay_action("first"));
    assert!(wait_until(RELOAD, || reloads(&server) > before));
    assert!(runs(&server, "main"));

    // A deploy swaps in a fresh overlay directory by rename.
    let staged = server.path("config.d.new");
    std::fs::create_dir(&staged).expect("staging dir");
    write(&staged.join("10-a.yaml"), &overlay_action("first"));
    let before = reloads(&server);
    std::fs::rename(&overlay, server.path("config.d.old")).expect("move old away");
    std::fs::rename(&staged, &overlay).expect("move new in");
    assert!(wait_until(RELOAD, || reloads(&server) > before));

    // The admin locks the guest out with a file in the (new) overlay.
    let before = reloads(&server);
    write(
        &overlay.join("50-lock.yaml"),
        &to_yaml(&json!({"defaultPermissions": {"view": true, "exec": false, "logs": true}})),
    );
    assert!(
        wait_until(RELOAD, || reloads(&server) > before),
        "the lock-out file in the new overlay directory was never applied"
    );
    assert!(
        !runs(&server, "main"),
        "the guest still runs after the right was taken away"
    );
}

/// F2: an `overlay:` directory reached through a symlink that is repointed (`ln -sfn
/// releases/2 config.d`, how many deploys switch a release): files written into the new
/// target afterwards are never applied.
#[test]
fn a_repointed_overlay_link_is_followed_for_new_files() {
    let releases = TempDir::new();
    let one = releases.path().join("1");
    let two = releases.path().join("2");
    std::fs::create_dir(&one).unwrap();
    std::fs::create_dir(&two).unwrap();
    write(&one.join("10-a.yaml"), &overlay_action("first"));
    let server = with_overlay(config_with(vec![shell_action("main", "echo main")]));
    // A link made between the start's load and the first watch is not seen (the watcher's
    // first read is its baseline): made once the watcher is armed.
    assert!(server.log_shows("for changes"), "never said it watches");
    let link = server.path("config.d");
    std::os::unix::fs::symlink(&one, &link).unwrap();
    assert!(
        wait_until(RELOAD, || runs(&server, "first")),
        "the overlay through the link was never read"
    );
    assert!(wait_until(SOON, || server.log_contains("leads through a symlink")));

    // Repointed by rename, as `ln -sfn` does.
    let before = reloads(&server);
    let tmp = server.path("config.d.tmp");
    std::os::unix::fs::symlink(&two, &tmp).unwrap();
    std::fs::rename(&tmp, &link).unwrap();
    assert!(
        wait_until(RELOAD, || reloads(&server) > before),
        "no reload after the overlay link was repointed"
    );
    let before = reloads(&server);
    write(&two.join("20-b.yaml"), &overlay_action("second"));
    assert!(
        wait_until(RELOAD, || reloads(&server) > before),
        "a file written into the overlay's new target was never applied"
    );
    assert!(runs(&server, "second"));
}

/// F3: an entity file reached through a symlink that is repointed to a file in another
/// directory: the entities are reloaded once, but the new target's directory is never
/// watched (links are looked up again only after a config reload), so later edits of the
/// new target are not seen.
#[test]
fn a_repointed_entity_link_is_followed_for_later_edits() {
    let a = TempDir::new();
    let b = TempDir::new();
    let entry = |k: &str| json!({"key": k, "name": k, "host": format!("{k}.lan")});
    write(
        &a.path().join("servers.yaml"),
        &to_yaml(&json!([entry("a")])),
    );
    write(
        &b.path().join("servers.yaml"),
        &to_yaml(&json!([entry("a"), entry("b")])),
    );
    let links = TempDir::new();
    let link = links.path().join("servers.yaml");
    std::os::unix::fs::symlink(a.path().join("servers.yaml"), &link).unwrap();
    let mut config = config_with(vec![shell_action("main", "echo main")]);
    config["entities"] = json!([{"file": link, "name": "server"}]);
    let server = Server::start(config);
    assert!(wait_until(SOON, || server.log_contains("leads through a symlink")));
    let count = || {
        let reply = server.ok("GetEntities", json!({}));
        reply["entityDefinitions"]
            .as_array()
            .expect("definitions")
            .iter()
            .find(|d| d["title"] == "server")
            .and_then(|d| d["instances"].as_array().map(Vec::len))
            .unwrap_or(0)
    };
    let first = count();

    let before = server.log_count("entities reloaded");
    let tmp = links.path().join("servers.yaml.tmp");
    std::os::unix::fs::symlink(b.path().join("servers.yaml"), &tmp).unwrap();
    std::fs::rename(&tmp, &link).unwrap();
    assert!(
        wait_until(RELOAD, || server.log_count("entities reloaded") > before),
        "no entity reload after the link was repointed"
    );
    let second = count();
    assert!(second > first, "{first} -> {second}");

    let before = server.log_count("entities reloaded");
    write(
        &b.path().join("servers.yaml"),
        &to_yaml(&json!([entry("a"), entry("b"), entry("c")])),
    );
    assert!(
        wait_until(RELOAD, || server.log_count("entities reloaded") > before),
        "an edit of the link's new target was never applied"
    );
}

/// F4: any local user who may read one file of the config's group (the board's panel under
/// `/usr/share/actiond/board/` is world-readable, and so is an overlay file written with the
/// default umask) holds back every config reload for as long as they keep that file open,
/// although they changed nothing: here `nobody` keeps the unchanged board file open while the
/// admin takes the guest's right to run away in `config.yaml`; the guest keeps running.
#[test]
fn a_reader_of_an_unchanged_board_file_cannot_hold_back_a_revocation() {
    use std::os::unix::fs::PermissionsExt;
    let boards = TempDir::new();
    std::fs::set_permissions(boards.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let board = boards.path().join("panel.yaml");
    write(&board, &overlay_action("status"));
    std::fs::set_permissions(&board, std::fs::Permissions::from_mode(0o644)).unwrap();
    let admin = |exec: bool| {
        let mut config = config_with(vec![shell_action("main", "echo main")]);
        config["board"] = json!(board.to_str().expect("utf-8 path"));
        config["defaultPermissions"] = json!({"view": true, "exec": exec, "logs": true});
        config
    };
    let server = Server::start(admin(true));
    assert!(
        wait_until(SOON, || server.log_contains("for changes")),
        "the watcher never started"
    );
    assert!(runs(&server, "main"));

    // A local process (any user may: the file is world-readable) opens the board file for
    // reading and keeps it open; the test goes on once the kernel shows it open.
    let mut reader = std::process::Command::new("sh")
        .args(["-c", "exec sleep 60 < \"$0\""])
        .arg(&board)
        .spawn()
        .expect("sh");
    let fds = format!("/proc/{}/fd", reader.id());
    let holds = || {
        std::fs::read_dir(&fds).is_ok_and(|dir| {
            dir.flatten()
                .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == board))
        })
    };
    assert!(
        wait_until(SOON, holds),
        "the reader never opened the board file"
    );

    let before = reloads(&server);
    write(&server.path("config.yaml"), &to_yaml(&admin(false)));
    let applied = wait_until(RELOAD, || reloads(&server) > before);
    let _ = reader.kill();
    let _ = reader.wait();
    assert!(
        applied,
        "a reader of the unchanged board file held back the revocation for {RELOAD:?}"
    );
    assert!(!runs(&server, "main"), "the guest still runs");
}

/// F5: a value that passes its type may still start with `-`, and the program the command
/// starts then reads it as an option: an `email` value (the only type that takes `user@host`)
/// may hold `-`, `=`, `$`, `{`, `}`, `/` and `|`, so with `ssh {{ target }} uptime` the
/// guest's `-oProxyCommand=…|x@y.z` is a command that ssh hands to a shell. Quoting keeps the
/// value one word; it does not keep it from being an option.
#[test]
fn a_typed_value_cannot_become_an_option_that_runs_a_command() {
    assert!(
        Path::new("/usr/bin/ssh").exists(),
        "this test needs openssh-client (/usr/bin/ssh)"
    );
    let mut shell = shell_action("uptime", "ssh -o BatchMode=yes {{ target }} uptime");
    shell["arguments"] = json!([{"name": "target", "type": "email"}]);
    let exec = json!({
        "id": "uptimeExec", "title": "uptime exec",
        "exec": ["ssh", "-o", "BatchMode=yes", "{{ target }}", "uptime"],
        "arguments": [{"name": "target", "type": "email"}],
    });
    let server = Server::start(config_with(vec![shell, exec]));
    for (id, mark) in [("uptime", "pwned-shell"), ("uptimeExec", "pwned-exec")] {
        let value = format!("-oProxyCommand=touch${{IFS}}{mark}|x@y.z");
        let (status, body) = server.call(
            "StartActionAndWait",
            json!({"actionId": id, "arguments": [{"name": "target", "value": value}]}),
        );
        let ran = server.path(mark).exists();
        assert!(
            !ran,
            "{id}: the guest's value ran a command through ssh's ProxyCommand (HTTP {status}: {body})"
        );
        // Refused before anything runs, saying why.
        assert!(
            body.to_string().contains("must not start with '-'"),
            "{id}: HTTP {status}: {body}"
        );
    }
}

/// F6: an argument read by its bare upper-cased name (`$NAME`, the form OliveTin configs use)
/// and left unquoted is split into words by the shell: with `type: ascii_sentence` (spaces
/// allowed) the guest adds arguments of its own, here `-r victim` to an `rm -f`. The config
/// loads without a word, although `{{ name }}` in the same place would have been one word.
#[test]
fn an_unquoted_bare_name_does_not_split_a_value_into_arguments() {
    let mut clean = shell_action("clean", "rm -f cache/$NAME");
    clean["arguments"] = json!([{"name": "name", "type": "ascii_sentence"}]);
    let server = Server::start(config_with(vec![clean]));
    if let Some(answer) = split_removes_victim(&server, "clean", "name", "old -r victim") {
        panic!("the guest's value became the arguments `-r victim` ({answer})");
    }
}

/// F8: an entity file named in a directory that does not exist yet (the script that writes
/// `ents/servers.yaml` makes `ents/` first) is never watched: the directory's creation is not
/// followed, so the file written into it is not loaded until the config changes again.
#[test]
fn an_entity_file_in_a_directory_made_after_the_load_is_loaded() {
    let mut config = config_with(vec![shell_action("main", "echo main")]);
    config["entities"] = json!([{"file": "ents/servers.yaml", "name": "server"}]);
    let server = Server::start(config);
    assert!(
        wait_until(SOON, || server.log_contains("for changes")),
        "the watcher never started"
    );
    std::fs::create_dir(server.path("ents")).expect("mkdir ents");
    let before = server.log_count("entities reloaded");
    write(
        &server.path("ents/servers.yaml"),
        &to_yaml(&json!([{"key": "a", "name": "A", "host": "a.lan"}])),
    );
    assert!(
        wait_until(RELOAD, || server.log_count("entities reloaded") > before),
        "the entity file written into the new directory was never loaded"
    );
}

/// The same mechanism for another kind of file: an entity file's directory made later two
/// levels deep (its nearest existing ancestor is watched until each level is made), then
/// replaced whole (`rm -rf` and `mkdir`): a file written into the new directory is loaded.
#[test]
fn an_entity_directory_made_deep_and_then_replaced_is_watched_again() {
    let mut config = config_with(vec![shell_action("main", "echo main")]);
    config["entities"] = json!([{"file": "a/b/servers.yaml", "name": "server"}]);
    let server = Server::start(config);
    assert!(
        wait_until(SOON, || server.log_contains("for changes")),
        "the watcher never started"
    );
    std::fs::create_dir_all(server.path("a/b")).expect("mkdir a/b");
    let before = server.log_count("entities reloaded");
    let one = to_yaml(&json!([{"key": "a", "name": "A", "host": "a.lan"}]));
    write(&server.path("a/b/servers.yaml"), &one);
    assert!(
        wait_until(RELOAD, || server.log_count("entities reloaded") > before),
        "the entity file in the directory made two levels deep was never loaded"
    );
    std::fs::remove_dir_all(server.path("a/b")).expect("rm -rf a/b");
    std::fs::create_dir(server.path("a/b")).expect("mkdir a/b");
    // Written at once: whether the removal settles on its own first (its type keeps its
    // instances) or together with the new file, what counts is the new file's instance.
    let two = to_yaml(&json!([{"key": "b", "name": "B", "host": "b.lan"}]));
    write(&server.path("a/b/servers.yaml"), &two);
    let keys = || server.ok("GetEntities", json!({})).to_string();
    let only_b = || keys().contains(r#""uniqueKey":"b""#) && !keys().contains(r#""uniqueKey":"a""#);
    assert!(
        wait_until(RELOAD, only_b),
        "the entity file in the replaced directory was never loaded: {}",
        keys()
    );
}
