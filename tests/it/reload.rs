//! Hot reload seen from a client. Each test starts a server, subscribes to the
//! EventStream, changes a file in the config directory the way people and tools do (written
//! in place, or written to `<name>.tmp` and renamed over the real name, as editors and Ansible
//! do), and then checks three things: the event that announces the change (`configChanged` for
//! the config, `entityChanged` for an entity file, nothing for a refused config), that the new
//! state is visible through the API (GetDashboard, StartAction, GetEntities) as soon as the
//! event has arrived, and that what must not change did not: a refused config or entity file
//! leaves the previous one in force, and a running execution finishes with the action it
//! started with.
//!
//! The service waits until files are quiet for 2 s and read the same twice before it reloads,
//! so a reload is expected within a generous 8 s; "nothing happened" is judged after 4 s of
//! silence and is always followed by a valid change that must be announced, which proves the
//! watcher was still alive while it stayed silent.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::client::assert_json_error;
use crate::events::{EventStream, Next};
use crate::harness::{SOON, Server, TempDir, config_with, shell_action, to_yaml, wait_until};

/// How long a reload may take to be announced: 2 s of quiet, two reads 250 ms apart, and a
/// wide margin.
const RELOAD: Duration = Duration::from_secs(8);

/// How long the service must stay silent after a change it should refuse: well past the 2.25 s
/// a healthy service takes to act on a change if it were going to.
const QUIET: Duration = Duration::from_secs(4);

// ---------------------------------------------------------------------------------------
// Writing files as editors and tools do

/// Replaces `path` in place: truncate and write the same inode (what `>` in a shell does).
fn write_in_place(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// Replaces `path` atomically: write `<name>.tmp` beside it, then rename it over the real
/// name. A watch on the old inode would miss this, which is why the service watches the
/// directory.
fn write_by_rename(path: &Path, text: &str) {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, text).unwrap_or_else(|e| panic!("write {tmp:?}: {e}"));
    std::fs::rename(&tmp, path).unwrap_or_else(|e| panic!("rename {tmp:?}: {e}"));
}

fn config_path(server: &Server) -> std::path::PathBuf {
    server.path("config.yaml")
}

// ---------------------------------------------------------------------------------------
// Events, read with the EventStream reader of `events.rs`

/// The guest's subscription. `EventStream::subscribe` reads the reply's head before it
/// returns: the service puts the subscription in place before it sends the head,
/// so no event of a change made after this returns can be missed. (The service starts its
/// file watcher before it serves, so by the time it answers, the watches are in place too: a
/// change it missed would make these tests fail, which is right.)
struct Events(EventStream);

impl Events {
    fn subscribe(server: &Server) -> Events {
        Events(EventStream::subscribe(server.addr))
    }

    /// The next event (the JSON of one flag-0 envelope), or `None` at the deadline.
    fn next(&mut self, deadline: Instant) -> Option<Value> {
        match self
            .0
            .next(deadline.saturating_duration_since(Instant::now()))
        {
            Next::Frame(frame) => {
                let text = String::from_utf8_lossy(&frame.payload);
                assert!(!frame.is_end(), "the stream ended: {text}");
                Some(
                    serde_json::from_str(&text)
                        .unwrap_or_else(|e| panic!("event is not JSON ({e}): {text}")),
                )
            }
            Next::Timeout => None,
            Next::End => panic!("the EventStream body ended"),
            Next::Closed(why) => panic!("the server closed the EventStream: {why}"),
        }
    }

    /// Reads events until one of `kind` arrives within `timeout`; returns the events before
    /// it. The reload events carry an empty message, checked exactly.
    fn wait_for(&mut self, kind: &str, timeout: Duration) -> Vec<Value> {
        let deadline = Instant::now() + timeout;
        let mut before = Vec::new();
        loop {
            let Some(event) = self.next(deadline) else {
                panic!("no {kind} event within {timeout:?}; events before: {before:?}");
            };
            if event.get(kind).is_some() {
                assert_eq!(event, json!({kind: {}}), "the {kind} event");
                return before;
            }
            before.push(event);
        }
    }

    /// Reads events for `duration` and asserts that none was a reload event.
    fn assert_no_reload(&mut self, duration: Duration, why: &str) {
        let deadline = Instant::now() + duration;
        while let Some(event) = self.next(deadline) {
            assert!(
                event.get("configChanged").is_none() && event.get("entityChanged").is_none(),
                "{why}, yet the service announced {event}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// Reading the state back

/// (bindingId, title) of every link on the default dashboard, in order.
fn default_links(server: &Server) -> Vec<(String, String)> {
    let reply = server.ok("GetDashboard", json!({"title": ""}));
    let mut out = Vec::new();
    let mut stack: Vec<&Value> = reply["dashboard"]["contents"]
        .as_array()
        .expect("dashboard contents")
        .iter()
        .rev()
        .collect();
    while let Some(c) = stack.pop() {
        if c["type"] == "link" {
            let action = &c["action"];
            out.push((
                action["bindingId"].as_str().expect("bindingId").to_string(),
                action["title"].as_str().expect("title").to_string(),
            ));
        }
        if let Some(contents) = c["contents"].as_array() {
            stack.extend(contents.iter().rev());
        }
    }
    out
}

fn ids(links: &[(String, String)]) -> Vec<&str> {
    links.iter().map(|(id, _)| id.as_str()).collect()
}

/// stdout of a run of `id` that must succeed and exit 0.
fn run_stdout(server: &Server, id: &str) -> String {
    let entry = server.run(id);
    assert_eq!(entry["exitCode"], 0, "{id}: {entry}");
    entry["stdout"].as_str().expect("stdout").to_string()
}

/// StartAction of `id` that must be refused as unknown.
fn assert_unknown_action(server: &Server, id: &str) {
    let (status, body) = server.call("StartAction", json!({"actionId": id}));
    assert_eq!(status, 404, "StartAction {id}: {body}");
    assert_json_error(&body, "not_found");
}

/// The (uniqueKey, title) of every instance of entity type `kind`.
fn instances(server: &Server, kind: &str) -> Vec<(String, String)> {
    let reply = server.ok("GetEntities", json!({}));
    let definitions = reply["entityDefinitions"].as_array().expect("definitions");
    let Some(def) = definitions.iter().find(|d| d["title"] == kind) else {
        return Vec::new();
    };
    def["instances"]
        .as_array()
        .expect("instances")
        .iter()
        .map(|i| {
            (
                i["uniqueKey"].as_str().expect("uniqueKey").to_string(),
                i["title"].as_str().expect("title").to_string(),
            )
        })
        .collect()
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

// ---------------------------------------------------------------------------------------
// The config file

#[test]
fn an_action_added_to_the_config_appears_after_configchanged() {
    let a = shell_action("a", "echo a-out");
    let server = Server::start(config_with(vec![a.clone()]));
    let mut events = Events::subscribe(&server);
    assert_eq!(ids(&default_links(&server)), ["a"]);

    let b = shell_action("b", "echo b-out");
    write_in_place(&config_path(&server), &to_yaml(&config_with(vec![a, b])));
    events.wait_for("configChanged", RELOAD);

    // Checked at once, not polled: a client that re-reads on the event must see the change.
    assert_eq!(
        default_links(&server),
        pairs(&[("a", "Title a"), ("b", "Title b")])
    );
    assert_eq!(run_stdout(&server, "b"), "b-out\n");
}

#[test]
fn a_changed_action_is_used_after_configchanged() {
    let server = Server::start(config_with(vec![json!({
        "id": "a", "title": "First", "shell": "echo one"
    })]));
    let mut events = Events::subscribe(&server);
    assert_eq!(default_links(&server), pairs(&[("a", "First")]));

    let changed = config_with(vec![
        json!({"id": "a", "title": "Second", "shell": "echo two"}),
    ]);
    write_by_rename(&config_path(&server), &to_yaml(&changed));
    events.wait_for("configChanged", RELOAD);

    assert_eq!(default_links(&server), pairs(&[("a", "Second")]));
    let entry = server.run("a");
    assert_eq!(entry["stdout"], "two\n", "{entry}");
    assert_eq!(entry["actionTitle"], "Second", "{entry}");
}

#[test]
fn a_removed_action_is_gone_after_configchanged() {
    let a = shell_action("a", "echo a-out");
    let b = shell_action("b", "echo b-out");
    let server = Server::start(config_with(vec![a.clone(), b]));
    let mut events = Events::subscribe(&server);
    assert_eq!(ids(&default_links(&server)), ["a", "b"]);

    write_by_rename(&config_path(&server), &to_yaml(&config_with(vec![a])));
    events.wait_for("configChanged", RELOAD);

    assert_eq!(ids(&default_links(&server)), ["a"]);
    assert_unknown_action(&server, "b");
    let (status, body) = server.call("GetActionBinding", json!({"bindingId": "b"}));
    assert_eq!(status, 404, "GetActionBinding b: {body}");
    assert_json_error(&body, "not_found");
    assert_eq!(run_stdout(&server, "a"), "a-out\n");
}

#[test]
fn an_invalid_config_keeps_the_old_one_and_announces_nothing() {
    let old = config_with(vec![shell_action("a", "echo old")]);
    let server = Server::start(old);
    let mut events = Events::subscribe(&server);
    let path = config_path(&server);

    // Broken YAML, written in place: the old config stays, and nobody is told anything
    // changed (it did not).
    write_in_place(&path, "actions:\n  - id: a\n    shell: [echo new\n");
    events.assert_no_reload(QUIET, "the config file is not YAML");
    assert_eq!(run_stdout(&server, "a"), "old\n");
    assert_eq!(ids(&default_links(&server)), ["a"]);

    // Valid YAML that breaks a rule of the whole file (a log level that does not exist),
    // replaced by rename: the whole file is refused, including its valid parts (the new
    // shell of `a` and action `b`). An error inside one action would only disable it (see
    // `migration`).
    let mut invalid = config_with(vec![
        shell_action("a", "echo new"),
        shell_action("b", "echo b"),
    ]);
    invalid["logLevel"] = json!("loud");
    write_by_rename(&path, &to_yaml(&invalid));
    events.assert_no_reload(QUIET, "the config has an unknown log level");
    assert_eq!(run_stdout(&server, "a"), "old\n");
    assert_eq!(ids(&default_links(&server)), ["a"]);
    assert_unknown_action(&server, "b");

    // The control: the same directory, a valid file. It is announced and used, so the
    // silence above was a refusal and not a watcher that had stopped.
    write_in_place(
        &path,
        &to_yaml(&config_with(vec![shell_action("a", "echo new")])),
    );
    events.wait_for("configChanged", RELOAD);
    assert_eq!(run_stdout(&server, "a"), "new\n");
}

#[test]
fn a_running_execution_keeps_the_action_it_started_with() {
    let server = Server::start(config_with(vec![json!({
        "id": "job", "title": "Old job", "shell": "sleep 6; echo old", "timeout": 20
    })]));
    let mut events = Events::subscribe(&server);
    let running = server.start_action("job");

    let new = config_with(vec![json!({
        "id": "job", "title": "New job", "shell": "echo new", "timeout": 10
    })]);
    write_in_place(&config_path(&server), &to_yaml(&new));
    events.wait_for("configChanged", RELOAD);
    // The reload happened while the old run was still sleeping: that is what is under test.
    let during = server.status(&running);
    assert_eq!(
        during["executionFinished"], false,
        "the run ended before the reload, so this proves nothing: {during}"
    );

    let entry = server.wait_finished(&running, SOON);
    assert_eq!(entry["stdout"], "old\n", "{entry}");
    assert_eq!(entry["actionTitle"], "Old job", "{entry}");
    assert_eq!(entry["exitCode"], 0, "{entry}");

    // A new run uses the new action.
    let entry = server.run("job");
    assert_eq!(entry["stdout"], "new\n", "{entry}");
    assert_eq!(entry["actionTitle"], "New job", "{entry}");
}

// ---------------------------------------------------------------------------------------
// Entity files

/// An entity file outside the config directory, made before the server starts (the harness
/// creates the config directory itself, so nothing can be put in it beforehand). The config
/// names it relative to the config directory (`../<dir>/servers.yaml`), so the test still
/// goes through the relative-path rule, and the service must watch that other directory too.
struct EntityDir {
    dir: TempDir,
}

impl EntityDir {
    fn with_servers(list: &Value) -> EntityDir {
        let dir = TempDir::new();
        write_in_place(&dir.path().join("servers.yaml"), &to_yaml(list));
        EntityDir { dir }
    }

    /// The file as the config names it: relative to the config directory, which is a sibling
    /// of this one (both are made in the system temp directory).
    fn relative(&self) -> String {
        let name = self.dir.path().file_name().expect("temp dir name");
        format!("../{}/servers.yaml", name.to_string_lossy())
    }

    fn path(&self) -> std::path::PathBuf {
        self.dir.path().join("servers.yaml")
    }
}

/// A config with one entity type `server` and an action bound to it.
fn entity_config(file: &str) -> Value {
    json!({
        "killGracePeriod": 1,
        "entities": [{"file": file, "name": "server"}],
        "actions": [{
            "id": "ping",
            "title": "Ping {{ .CurrentEntity.name }}",
            "shell": "echo {{ .CurrentEntity.host }}",
            "entity": "server",
        }],
    })
}

fn server_entry(key: &str, name: &str, host: &str) -> Value {
    json!({"key": key, "name": name, "host": host})
}

/// A server whose entity file holds `list` from the start, and its event subscription.
fn start_with_servers(list: &Value) -> (EntityDir, Server, Events) {
    let entities = EntityDir::with_servers(list);
    let server = Server::start(entity_config(&entities.relative()));
    let events = Events::subscribe(&server);
    (entities, server, events)
}

#[test]
fn an_entity_file_replaced_by_rename_brings_its_new_instance() {
    // The usual layout: `servers.yaml` beside the config, in the directory the service watches
    // for the config too. The harness makes that directory, so the file is created after the
    // start (its first version is announced as well) and then replaced by rename.
    let server = Server::start(entity_config("servers.yaml"));
    let mut events = Events::subscribe(&server);
    assert_eq!(instances(&server, "server"), pairs(&[]));
    let path = server.path("servers.yaml");
    let two = json!([
        server_entry("alpha", "Alpha", "alpha.lan"),
        server_entry("beta", "Beta", "beta.lan"),
    ]);
    write_in_place(&path, &to_yaml(&two));
    events.wait_for("entityChanged", RELOAD);
    assert_eq!(
        instances(&server, "server"),
        pairs(&[("alpha", "Alpha"), ("beta", "Beta")])
    );

    let three = json!([
        server_entry("alpha", "Alpha", "alpha.lan"),
        server_entry("beta", "Beta", "beta.lan"),
        server_entry("gamma", "Gamma", "gamma.lan"),
    ]);
    write_by_rename(&path, &to_yaml(&three));
    let before = events.wait_for("entityChanged", RELOAD);
    // An entity file is reloaded alone: the config was not touched, so it is not announced.
    assert!(
        before.iter().all(|e| e.get("configChanged").is_none()),
        "an entity change announced configChanged: {before:?}"
    );

    assert_eq!(
        instances(&server, "server"),
        pairs(&[("alpha", "Alpha"), ("beta", "Beta"), ("gamma", "Gamma")])
    );
    assert_eq!(
        default_links(&server),
        pairs(&[
            ("ping-alpha", "Ping Alpha"),
            ("ping-beta", "Ping Beta"),
            ("ping-gamma", "Ping Gamma"),
        ])
    );
    assert_eq!(run_stdout(&server, "ping-gamma"), "gamma.lan\n");
}

#[test]
fn entity_files_are_watched_when_the_config_is_named_relatively() {
    // `actiond --config config.yaml` (or no --config at all, which reads ./config.yaml): the
    // config's directory is `.`, the entity file's is absolute, and inotify gives both one
    // watch descriptor. A change to the entity file must still be seen.
    for config_arg in ["config.yaml", "./config.yaml"] {
        let yaml = to_yaml(&entity_config("servers.yaml"));
        let server = Server::start_yaml_as(&yaml, Some(config_arg));
        let mut events = Events::subscribe(&server);
        let one = json!([server_entry("alpha", "Alpha", "alpha.lan")]);
        write_in_place(&server.path("servers.yaml"), &to_yaml(&one));
        events.wait_for("entityChanged", RELOAD);
        assert_eq!(
            instances(&server, "server"),
            pairs(&[("alpha", "Alpha")]),
            "--config {config_arg}"
        );
        // The config itself is still watched under its relative name.
        let mut config = entity_config("servers.yaml");
        config["actions"][0]["title"] = json!("Check {{ .CurrentEntity.name }}");
        write_in_place(&server.path("config.yaml"), &to_yaml(&config));
        events.wait_for("configChanged", RELOAD);
        assert_eq!(
            default_links(&server),
            pairs(&[("ping-alpha", "Check Alpha")]),
            "--config {config_arg}"
        );
    }
}

#[test]
fn a_file_of_the_include_directory_is_part_of_the_config() {
    // `include: DIR` merges DIR's YAML files: adding one or editing one is a config change.
    let included = TempDir::new();
    let extra = |id: &str| to_yaml(&json!({"actions": [shell_action(id, "echo inc")]}));
    write_in_place(&included.path().join("10-first.yaml"), &extra("first"));
    let mut config = config_with(vec![shell_action("main", "echo m")]);
    config["include"] = json!(included.path().to_str().expect("utf-8 path"));
    let server = Server::start(config);
    // The links' targets are looked up off the event loop after start, then watched.
    assert!(server.log_shows("watching "));
    let mut events = Events::subscribe(&server);
    assert_eq!(ids(&default_links(&server)), ["main", "first"]);

    write_in_place(&included.path().join("20-second.yml"), &extra("second"));
    events.wait_for("configChanged", RELOAD);
    assert_eq!(ids(&default_links(&server)), ["main", "first", "second"]);

    write_by_rename(&included.path().join("10-first.yaml"), &extra("renamed"));
    events.wait_for("configChanged", RELOAD);
    assert_eq!(ids(&default_links(&server)), ["main", "renamed", "second"]);

    // Not a config fragment: no reload.
    write_in_place(&included.path().join("notes.txt"), "hello");
    events.assert_no_reload(QUIET, "a .txt file in the include directory");
}

/// Files reached through symlinks (stow, etckeeper): an include that links to a file
/// elsewhere, and an entity file that does. An edit of either target is applied.
#[test]
fn includes_and_entity_files_reached_through_symlinks_are_watched_at_their_targets() {
    let included = TempDir::new();
    let elsewhere = TempDir::new();
    let extra = |id: &str| to_yaml(&json!({"actions": [shell_action(id, "echo inc")]}));
    write_in_place(&elsewhere.path().join("first.yaml"), &extra("first"));
    std::os::unix::fs::symlink(
        elsewhere.path().join("first.yaml"),
        included.path().join("10-first.yaml"),
    )
    .unwrap();
    let servers = elsewhere.path().join("servers.yaml");
    write_in_place(
        &servers,
        &to_yaml(&json!([server_entry("a", "A", "a.lan")])),
    );
    let links = TempDir::new();
    let link = links.path().join("servers.yaml");
    std::os::unix::fs::symlink(&servers, &link).unwrap();
    let mut config = config_with(vec![shell_action("main", "echo m")]);
    config["include"] = json!(included.path().to_str().expect("utf-8 path"));
    config["entities"] = json!([{"file": link, "name": "server"}]);
    let server = Server::start(config);
    let mut events = Events::subscribe(&server);
    assert_eq!(ids(&default_links(&server)), ["main", "first"]);

    write_in_place(&elsewhere.path().join("first.yaml"), &extra("edited"));
    events.wait_for("configChanged", RELOAD);
    assert_eq!(ids(&default_links(&server)), ["main", "edited"]);

    let two = json!([
        server_entry("a", "A", "a.lan"),
        server_entry("b", "B", "b.lan")
    ]);
    write_in_place(&servers, &to_yaml(&two));
    events.wait_for("entityChanged", RELOAD);
    assert_eq!(instances(&server, "server").len(), 2);
}

#[test]
fn an_entity_file_a_reload_names_is_watched_from_then_on() {
    // The config at start has no entities; a reload names a file in a directory nobody
    // watched yet. Later changes to that file must be seen without another config change.
    let entities = EntityDir::with_servers(&json!([server_entry("alpha", "Alpha", "alpha.lan")]));
    let server = Server::start(config_with(vec![shell_action("a", "true")]));
    let mut events = Events::subscribe(&server);
    write_in_place(
        &config_path(&server),
        &to_yaml(&entity_config(&entities.relative())),
    );
    events.wait_for("configChanged", RELOAD);
    assert_eq!(instances(&server, "server"), pairs(&[("alpha", "Alpha")]));

    let two = json!([
        server_entry("alpha", "Alpha", "alpha.lan"),
        server_entry("beta", "Beta", "beta.lan"),
    ]);
    write_by_rename(&entities.path(), &to_yaml(&two));
    events.wait_for("entityChanged", RELOAD);
    assert_eq!(
        instances(&server, "server"),
        pairs(&[("alpha", "Alpha"), ("beta", "Beta")])
    );
}

#[test]
fn a_malformed_entity_file_keeps_the_previous_instances() {
    let (entities, server, mut events) = start_with_servers(&json!([
        server_entry("alpha", "Alpha", "alpha.lan"),
        server_entry("beta", "Beta", "beta.lan"),
    ]));
    let path = entities.path();

    // An unclosed flow mapping, written in place (a script that died half way).
    write_in_place(&path, "- {key: gamma, name: Gamma\n");
    // The API does not say whether a refused entity file is announced, so an event is accepted
    // but not required; when it comes it tells us the reload was tried, else the silence
    // lasts well past the time a reload takes.
    let deadline = Instant::now() + QUIET;
    while let Some(event) = events.next(deadline) {
        assert!(
            event.get("configChanged").is_none(),
            "an entity file change announced configChanged: {event}"
        );
        if event.get("entityChanged").is_some() {
            break;
        }
    }
    assert_eq!(
        instances(&server, "server"),
        pairs(&[("alpha", "Alpha"), ("beta", "Beta")])
    );
    assert_eq!(run_stdout(&server, "ping-beta"), "beta.lan\n");
    assert_unknown_action(&server, "ping-gamma");

    // The control: a valid file is taken, so the old instances above were kept on purpose.
    // Polled, since an announcement of the refused file may still have been in flight.
    write_in_place(
        &path,
        &to_yaml(&json!([server_entry("gamma", "Gamma", "gamma.lan")])),
    );
    events.wait_for("entityChanged", RELOAD);
    let want = pairs(&[("gamma", "Gamma")]);
    assert!(
        wait_until(RELOAD, || instances(&server, "server") == want),
        "the valid entity file was not loaded: {:?}",
        instances(&server, "server")
    );
    assert_eq!(run_stdout(&server, "ping-gamma"), "gamma.lan\n");
}

#[test]
fn an_entity_file_over_its_bounds_is_refused_and_the_previous_instances_stay() {
    let entities = EntityDir::with_servers(&json!([
        server_entry("alpha", "Alpha", "alpha.lan"),
        server_entry("beta", "Beta", "beta.lan"),
    ]));
    let bounded = |instances: u64| {
        let mut config = entity_config(&entities.relative());
        config["maxEntityFileBytes"] = json!(4096);
        config["maxEntityInstances"] = json!(instances);
        config
    };
    let server = Server::start(bounded(3));
    let mut events = Events::subscribe(&server);
    let kept = pairs(&[("alpha", "Alpha"), ("beta", "Beta")]);
    assert_eq!(instances(&server, "server"), kept);

    // Four instances, as `docker ps --format json` writes them: one more than allowed.
    let lines: String = (0..4)
        .map(|i| {
            format!(
                "{}\n",
                server_entry(&format!("s{i}"), &format!("S{i}"), "h")
            )
        })
        .collect();
    write_in_place(&entities.path(), &lines);
    assert!(
        wait_until(RELOAD, || server
            .log_contains("more than maxEntityInstances (3")),
        "no warning about the instance bound"
    );
    assert_eq!(instances(&server, "server"), kept);
    assert_unknown_action(&server, "ping-s0");

    // Two instances, but one field makes the file larger than 4096 bytes.
    let big = json!([
        server_entry("gamma", "Gamma", &"g".repeat(5000)),
        server_entry("delta", "Delta", "delta.lan"),
    ]);
    write_in_place(&entities.path(), &big.to_string());
    assert!(
        wait_until(RELOAD, || server
            .log_contains("larger than maxEntityFileBytes (4096")),
        "no warning about the byte bound"
    );
    assert_eq!(instances(&server, "server"), kept);

    // The bounds are the config's: a reload that allows more takes a file within them.
    write_in_place(&entities.path(), &lines);
    write_in_place(&config_path(&server), &to_yaml(&bounded(10)));
    events.wait_for("configChanged", RELOAD);
    let want = pairs(&[("s0", "S0"), ("s1", "S1"), ("s2", "S2"), ("s3", "S3")]);
    assert!(
        wait_until(RELOAD, || instances(&server, "server") == want),
        "the file within the new bound was not loaded: {:?}",
        instances(&server, "server")
    );
}

#[test]
fn no_argument_sets_a_variable_a_program_reads_as_its_settings() {
    // A caller's value in TAR_OPTIONS runs a program through `tar`, in GREP it is evaluated by
    // `zgrep`. The environment holds every value as ACTIOND_ARG_<NAME> only; a command that
    // reads `$NAME` (written for OliveTin, which sets the bare name) gets a shell variable of
    // its own that the programs it starts never see. Checked with the real tar and zgrep,
    // across reloads.
    let old = config_with(vec![shell_action("a", "echo old")]);
    let server = Server::start(old);
    let mut events = Events::subscribe(&server);
    let cases = [
        (
            "tar_options",
            "--checkpoint=1 --checkpoint-action=exec=touch${IFS}PWN",
            "tar cf x.tar /etc/hostname",
        ),
        (
            "grep",
            "touch -- PWN",
            "printf 'x\\n' | gzip >l.gz; zgrep x l.gz",
        ),
        ("zip", "-T -TTtouch${IFS}PWN", "true"),
        ("rsync_rsh", "sh -c 'touch PWN'", "true"),
        (
            "dbus_system_bus_address",
            "unixexec:path=/usr/bin/touch,argv1=PWN",
            "true",
        ),
        ("http_proxy", "http://127.0.0.1:9", "true"),
        ("node_options", "--require=/tmp/x.js", "true"),
        ("viminit", "!touch PWN", "true"),
    ];
    for (name, value, program) in cases {
        let upper = name.to_uppercase();
        let mut action = shell_action(
            "a",
            &format!(
                "{program} >/dev/null 2>&1; env | grep -c '^{upper}=' || true; \
                 printf '%s|%s' \"${upper}\" \"$ACTIOND_ARG_{upper}\""
            ),
        );
        action["arguments"] = json!([{"name": name, "type": "very_dangerous_raw_string"}]);
        write_by_rename(&config_path(&server), &to_yaml(&config_with(vec![action])));
        events.wait_for("configChanged", SOON);
        let entry = server.ok(
            "StartActionAndWait",
            json!({"actionId": "a", "arguments": [{"name": name, "value": value}]}),
        )["logEntry"]
            .clone();
        assert_eq!(
            entry["stdout"],
            format!("0\n{value}|{value}"),
            "{name}: {entry}"
        );
        assert!(
            !server.path("PWN").exists(),
            "{name}: the program read the value"
        );
    }
}

/// A reload that widens trust or identity says so at warn level, naming who gains what: the
/// whole LAN trusted to name the caller in a header, a password hash replaced, a dump switch
/// turned on, every web page let through, an action any page may start by a plain GET, a new
/// action guests may run, the Connect header made optional, an argument's choices removed and
/// another's leading dash allowed, a broker added; then, without header auth, the proxies
/// widened (they count against no per-address share), and the broker changed.
#[test]
fn a_reload_that_widens_trust_says_who_gains_what() {
    use crate::identity::phc;
    let config = |hash: &str| {
        json!({
            "defaultPermissions": {"view": true, "exec": true, "logs": true, "kill": false},
            "authLocalUsers": {"enabled": true, "users": [
                {"username": "alice", "usergroup": "admins", "password": hash}]},
            "actions": [
                {"id": "uptime", "title": "Uptime", "shell": "uptime"},
                {"id": "ping", "title": "Ping", "shell": "echo {{ host }} {{ count }}",
                 "arguments": [
                    {"name": "host", "choices": [{"value": "a"}, {"value": "b"}]},
                    {"name": "count", "type": "ascii_identifier"}]},
            ],
        })
    };
    let server = Server::start(config(&phc("old pw")));
    let mut events = Events::subscribe(&server);
    let mut wide = config(&phc("new pw"));
    wide["authHttpHeaderUsername"] = json!("X-User");
    wide["trustedProxies"] = json!(["0.0.0.0/0"]);
    wide["insecureAllowDumpVars"] = json!(true);
    wide["allowedOrigins"] = json!(["*"]);
    wide["connectProtocolHeader"] = json!("optional");
    // Port 1 refuses: the board is never connected, and that changes nothing here.
    wide["mqtt"] = json!({"broker": "mqtt://127.0.0.1:1", "nodeId": "w"});
    wide["actions"][0]["insecureAllowStartFromAnyWebPage"] = json!(true);
    wide["actions"][1]["arguments"][0] = json!({"name": "host", "type": "ascii_identifier"});
    wide["actions"][1]["arguments"][1]["allowLeadingDash"] = json!(true);
    wide["actions"]
        .as_array_mut()
        .unwrap()
        .push(shell_action("fresh", "true"));
    write_by_rename(&config_path(&server), &to_yaml(&wide));
    events.wait_for("configChanged", RELOAD);
    // Without header auth, trusted proxies still count against no per-address share.
    let mut wider = wide.clone();
    wider
        .as_object_mut()
        .unwrap()
        .remove("authHttpHeaderUsername");
    wider["trustedProxies"] = json!(["0.0.0.0/0", "::/0"]);
    wider["mqtt"]["broker"] = json!("mqtt://127.0.0.1:2");
    write_by_rename(&config_path(&server), &to_yaml(&wider));
    events.wait_for("configChanged", RELOAD);
    let log = server.stop_and_log();
    let warned = |who: &str, what: &str| {
        let needle = format!("config: this reload gives {who} what they did not have: ");
        let line = log
            .lines()
            .find(|l| l.contains(&needle))
            .unwrap_or_else(|| panic!("no line about {who}:\n{log}"));
        assert!(line.contains("WARN"), "{line}");
        assert!(line.contains(what), "{line}");
    };
    warned(
        "clients at 0.0.0.0/0",
        "any user and group they name in the header X-User (trustedProxies)",
    );
    warned(
        "user \"alice\" (group \"admins\")",
        "a new password hash (whoever knows its password logs in as them)",
    );
    warned("callers of the API", "insecureAllowDumpVars");
    warned(
        "every web page",
        "the API through their visitors' browsers (allowedOrigins)",
    );
    warned(
        "any web page a visitor opens",
        "a plain GET that starts uptime (insecureAllowStartFromAnyWebPage)",
    );
    warned("guests", "exec on the new fresh");
    warned(
        "callers that send no Connect-Protocol-Version header",
        "Connect calls without it (connectProtocolHeader: optional)",
    );
    warned(
        "whoever may start these actions",
        "host of ping: any ascii_identifier value (its choices removed); count of ping: values \
         that start with - (allowLeadingDash)",
    );
    warned(
        "clients of mqtt://127.0.0.1:1 that may publish to actiond/w/+/press",
        "presses as user \"mqtt\" (group \"mqtt\") (mqtt changed)",
    );
    warned(
        "clients of mqtt://127.0.0.1:2 that may publish to actiond/w/+/press",
        "presses as user \"mqtt\" (group \"mqtt\") (mqtt.broker changed)",
    );
    warned(
        "clients at ::/0",
        "no per-address share of connections and event streams (trustedProxies)",
    );
}
