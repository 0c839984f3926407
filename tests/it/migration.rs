//! OliveTin configs migrated whole: the fixtures here are written the way real OliveTin
//! configs are (comments, OliveTin's key spellings, the slips people make), and each test
//! copies one over and starts the real binary on it, as a migrating user would.
//!
//! - An error inside one action disables that action alone: the service starts, the other
//!   actions run, and the disabled one is named with its error in the log (at start and after
//!   a reload), greyed on the page with the reason, and by `--check-config` (exit 2). It never
//!   runs: not by StartAction, the GET start, a restart, or a trigger.
//! - OliveTin's leniencies that are safe: a timeout below 3 s is 3 s, a user without a usable
//!   argon2id hash cannot log in and nothing else changes.
//! - Entity-fed arguments get one choice per instance, rendered, checked, and rendered again
//!   when the entity file changes.
//! - Entity fieldsets: the latest-output component and plain actions inside them, and their
//!   `cssClass` rendered per instance. DumpVars lists the entity variables.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::client::{Request, assert_error, assert_json_error, send};
use crate::harness::{SOON, Server, TempDir, run_binary, wait_until};
use crate::identity::phc;

/// `--check-config` only reads files; it must finish long before this.
const CHECK_BOUND: Duration = Duration::from_secs(20);

const PASSWORD: &str = "open the garage";

/// A garage panel as it came from OliveTin: every action but five runs in actiond, and the
/// five that cannot carry slips found in real OliveTin configs. `{HASH}` is the admin's
/// argon2id hash; `{DIR}` a directory the file triggers watch.
const GARAGE: &str = r#"# Garage panel, copied from /etc/OliveTin/config.yaml
pageTitle: Garage
logLevel: INFO

authLocalUsers:
  enabled: true
  users:
    - username: admin
      usergroup: admins
      password: "{HASH}"
    - username: kid
      usergroup: family
      password: # TODO: hash one with OliveTin's PasswordHash
    - username: legacy
      usergroup: family
      password: "$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"

accessControlLists:
  - name: admins
    matchUsergroups: [admins]
    addToEveryAction: true
    permissions: {view: true, exec: true, logs: true, kill: true}

actions:
  # OliveTin raises this to 3 seconds.
  - title: Open garage
    id: garage_open
    icon: mdi:garage-open
    shell: echo opening
    timeout: 0

  # The placeholder's case does not match the argument's name.
  - title: Restart container
    id: restart_container
    icon: "&#128260;"
    shell: echo restarting {{ Container }}
    arguments:
      - name: container
        type: ascii_identifier
        default: web

  # An entity field on an action without an entity.
  - title: Wake server
    id: wake
    shell: echo waking {{ .CurrentEntity.mac }}
    execOnStartup: true

  # A list that does not exist (admins was meant): nobody knows who may see it.
  - title: Reboot
    id: reboot
    shell: echo rebooting
    acls: [admin]

  # A timeout longer than a day, and triggers of every kind.
  - title: Nightly backup
    id: backup
    shell: echo backing up
    timeout: 100000
    execOnStartup: true
    execOnCron: "@every 1s"
    execOnFileCreatedInDir: ["{DIR}"]

  - title: Uptime
    id: uptime
    shell: echo up

  # The same id twice: the second is disabled.
  - title: Uptime again
    id: uptime
    shell: echo up again
    execOnStartup: true

  # The markers: these run by every trigger, so once they have, the disabled ones would have.
  - title: Heartbeat
    id: heartbeat
    shell: echo beat
    execOnStartup: true
    execOnCron: "@every 1s"
    execOnFileCreatedInDir: ["{DIR}"]
"#;

fn garage(dir: &Path) -> String {
    GARAGE
        .replace("{HASH}", &phc(PASSWORD))
        .replace("{DIR}", &dir.display().to_string())
}

/// The default dashboard's links, by binding id.
fn default_links(server: &Server) -> Vec<Value> {
    let reply = server.ok("GetDashboard", json!({"title": ""}));
    reply["dashboard"]["contents"][0]["contents"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn link<'a>(links: &'a [Value], id: &str) -> Option<&'a Value> {
    links.iter().find(|l| l["action"]["bindingId"] == id)
}

/// Every log entry (GetLogs, first pages), newest first.
fn all_logs(server: &Server) -> Vec<Value> {
    let mut out = Vec::new();
    let mut offset = 0;
    loop {
        let page = server.ok("GetLogs", json!({"startOffset": offset}));
        let logs = page["logs"].as_array().cloned().unwrap_or_default();
        if logs.is_empty() {
            return out;
        }
        offset += logs.len();
        out.extend(logs);
    }
}

fn runs_of(server: &Server, id: &str) -> usize {
    all_logs(server)
        .iter()
        .filter(|e| e["actionId"] == id)
        .count()
}

/// The refusal of a start of a disabled action: 400 failed_precondition naming the error.
fn assert_disabled(status: u16, body: &Value, needle: &str) {
    assert_eq!(status, 400, "{body}");
    let message = assert_json_error(body, "failed_precondition");
    assert!(
        message.contains("is disabled by an error in the config"),
        "{message}"
    );
    assert!(message.contains(needle), "{needle:?} not in {message}");
}

#[test]
fn a_panel_with_broken_actions_starts_and_its_good_actions_run() {
    let watched = TempDir::new();
    let server = Server::start_yaml(&garage(watched.path()));

    // The good actions run; the one whose timeout was 0 has 3 s.
    assert_eq!(server.run("uptime")["stdout"], "up\n");
    let open = server.run("garage_open");
    assert_eq!(open["stdout"], "opening\n", "{open}");
    let binding = server.ok("GetActionBinding", json!({"bindingId": "garage_open"}));
    assert_eq!(binding["action"]["timeout"], 3, "{binding}");
    assert_eq!(binding["action"]["canExec"], true, "{binding}");

    // The disabled ones never run, by any route, and say why.
    let refusals: &[(&str, &str)] = &[
        (
            "restart_container",
            "actions[1].shell: {{ Container }} names no argument; did you mean {{ container }}?",
        ),
        (
            "wake",
            "actions[2].shell: {{ .CurrentEntity.mac }} names an entity field",
        ),
        (
            "backup",
            "actions[4].timeout: timeout must be at most 86400 seconds",
        ),
        (
            "uptimeAgain",
            "actions[6].id: duplicate id \"uptime\" (first used by actions[5])",
        ),
        (
            "reboot",
            "actions[3].acls[0]: no access control list is named \"admin\"",
        ),
    ];
    for (id, needle) in refusals {
        let (status, body) = server.call("StartAction", json!({"actionId": id}));
        assert_disabled(status, &body, needle);
        let (status, body) = server.call("StartActionAndWait", json!({"actionId": id}));
        assert_disabled(status, &body, needle);
        for op in ["StartActionByGet", "StartActionByGetAndWait"] {
            let (status, body) = server.call(op, json!({"actionId": id}));
            assert_disabled(status, &body, needle);
            // The plain GET form is refused before that: it carries no link key.
            let resp = send(server.addr, &Request::get(&format!("/api/{op}/{id}")));
            assert_error(&resp, 403, "permission_denied");
        }
    }

    // The page: each disabled action greyed with its reason, except the one whose access
    // rules are broken, which nobody sees.
    let links = default_links(&server);
    for (id, needle) in refusals.iter().filter(|(id, _)| *id != "reboot") {
        let l = link(&links, id).unwrap_or_else(|| panic!("no link to {id}: {links:?}"));
        assert_eq!(l["action"]["canExec"], false, "{l}");
        assert_eq!(l["cssClass"], "disabled", "{l}");
        let notes = l["contents"].as_array().expect("contents");
        assert_eq!(notes.len(), 1, "{l}");
        assert_eq!(notes[0]["type"], "display", "{l}");
        let text = notes[0]["title"].as_str().unwrap_or_default();
        assert!(
            text.starts_with("Disabled by an error in the config: "),
            "{text}"
        );
        // The reason is HTML-escaped text: `{{ }}` and quotes arrive as text, not markup.
        let escaped = needle.replace('"', "&quot;");
        assert!(text.contains(&escaped), "{escaped:?} not in {text}");
        let binding = server.ok("GetActionBinding", json!({"bindingId": id}));
        assert_eq!(binding["action"]["canExec"], false, "{binding}");
    }
    assert!(link(&links, "reboot").is_none(), "{links:?}");
    let (status, body) = server.call("GetActionBinding", json!({"bindingId": "reboot"}));
    assert_eq!(status, 403, "{body}");
    let healthy = link(&links, "uptime").expect("uptime");
    assert_eq!(healthy["cssClass"], "", "{healthy}");
    assert_eq!(healthy["contents"], json!([]), "{healthy}");
    // The icon is passed on as written; the page draws its offline stand-in.
    assert_eq!(
        link(&links, "garage_open").expect("garage_open")["icon"],
        "mdi:garage-open"
    );

    // Triggers: the markers ran by start-up, by the schedule and for a new file; the disabled
    // actions on the same triggers did not.
    assert!(wait_until(SOON, || runs_of(&server, "heartbeat") >= 2));
    std::fs::write(watched.path().join("photo.jpg"), b"x").expect("write a file");
    let before = runs_of(&server, "heartbeat");
    assert!(wait_until(SOON, || {
        all_logs(&server).iter().any(|e| {
            e["actionId"] == "heartbeat"
                && e["tags"]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|t| t == "fileCreatedInDir"))
        })
    }));
    assert!(runs_of(&server, "heartbeat") > before);
    for id in [
        "wake",
        "backup",
        "uptimeAgain",
        "restart_container",
        "reboot",
    ] {
        assert_eq!(runs_of(&server, id), 0, "{id} ran: {:?}", all_logs(&server));
    }

    // Users: the one with an argon2id hash logs in, the two without cannot.
    for (user, success) in [("admin", true), ("kid", false), ("legacy", false)] {
        let reply = server.ok(
            "LocalUserLogin",
            json!({"username": user, "password": PASSWORD}),
        );
        assert_eq!(reply["success"], success, "{user}: {reply}");
    }

    // The log names every disabled action with its error, once, at start.
    let log = server.stop_and_log();
    for (id, needle) in refusals {
        let line = format!("config: action \"{id}\"");
        assert_eq!(log.matches(&line).count(), 1, "{line} in:\n{log}");
        assert!(log.contains(needle), "{needle} not in:\n{log}");
    }
    // A Material Design Icons name is Home Assistant's (it goes to its button): no warning,
    // though the page shows its letter for it.
    assert!(!log.contains("actions[0].icon"), "{log}");
    for warning in [
        "actions[0].timeout: timeout 0 is below 3 seconds, so it is 3",
        "authLocalUsers.users[1]: user \"kid\" has no password, so cannot log in",
        "authLocalUsers.users[2].password: user \"legacy\" has a bcrypt hash",
        "see docs/migration-from-olivetin.md for every OliveTin key",
    ] {
        assert!(log.contains(warning), "{warning} not in:\n{log}");
    }
}

#[test]
fn check_config_lists_every_error_of_a_panel_that_starts_and_exits_2() {
    let dir = TempDir::new();
    let path = dir.path().join("config.yaml");
    std::fs::write(&path, garage(dir.path())).expect("write config");
    let run = run_binary(
        &["--check-config", path.to_str().expect("utf-8")],
        dir.path(),
        CHECK_BOUND,
    );
    let out = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(run.status.code(), Some(2), "{out}");
    for error in [
        "error: actions[1].shell: {{ Container }} names no argument; did you mean {{ container }}?",
        "error: actions[2].shell: {{ .CurrentEntity.mac }}",
        "error: actions[3].acls[0]: no access control list is named \"admin\"",
        "error: actions[4].timeout: timeout must be at most 86400 seconds",
        "error: actions[6].id: duplicate id \"uptime\"",
        "5 errors disable 5 of 8 actions: actiond starts",
        "warning: actions[0].timeout: timeout 0 is below 3 seconds",
        "(see docs/migration-from-olivetin.md",
    ] {
        assert!(out.contains(error), "{error:?} not in:\n{out}");
    }
    // Warnings come before the errors, and the pointer follows the warnings.
    let pointer = out
        .find("(see docs/migration-from-olivetin.md")
        .expect("pointer");
    assert!(pointer < out.find("error: ").expect("errors"), "{out}");

    // An error outside any action still refuses the file, and lists the action errors too.
    std::fs::write(
        &path,
        format!(
            "{}listenAddressSingleHTTPFrontend: 'nowhere'\n",
            garage(dir.path())
        ),
    )
    .expect("write config");
    let run = run_binary(
        &["--check-config", path.to_str().expect("utf-8")],
        dir.path(),
        CHECK_BOUND,
    );
    let out = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(run.status.code(), Some(2), "{out}");
    assert!(out.contains("the config has 6 errors"), "{out}");
    assert!(out.contains("listenAddressSingleHTTPFrontend"), "{out}");
    assert!(out.contains("actions[4].timeout"), "{out}");
}

#[test]
fn a_reload_disables_only_the_broken_action_and_a_restart_of_it_is_refused() {
    let config = |b_shell: &str| {
        format!(
            "actions:\n  - {{id: a, title: A, shell: 'echo a'}}\n  - {{id: b, title: B, shell: '{b_shell}'}}\n"
        )
    };
    let server = Server::start_yaml(&config("echo b"));
    let earlier = server.run("b");
    assert_eq!(earlier["stdout"], "b\n");
    let tracking = earlier["executionTrackingId"].as_str().unwrap().to_string();

    // The new file changes `a` and breaks `b`: it is taken, with `b` disabled.
    std::fs::write(
        server.path("config.yaml"),
        config("echo {{ nope }}").replace("echo a", "echo a2"),
    )
    .expect("rewrite config");
    assert!(wait_until(SOON, || {
        server.ok("GetActionBinding", json!({"bindingId": "b"}))["action"]["canExec"] == false
    }));
    assert_eq!(server.run("a")["stdout"], "a2\n");
    let (status, body) = server.call("StartAction", json!({"actionId": "b"}));
    assert_disabled(status, &body, "{{ nope }} names no argument");
    let (status, body) = server.call("RestartAction", json!({"executionTrackingId": tracking}));
    assert_disabled(status, &body, "{{ nope }} names no argument");

    // Fixed again: it runs.
    std::fs::write(server.path("config.yaml"), config("echo b3")).expect("rewrite config");
    assert!(wait_until(SOON, || {
        server.ok("GetActionBinding", json!({"bindingId": "b"}))["action"]["canExec"] == true
    }));
    assert_eq!(server.run("b")["stdout"], "b3\n");
    let log = server.stop_and_log();
    assert_eq!(
        log.matches("config: action \"b\" (B) is disabled and does not run: actions[1].shell: {{ nope }} names no argument").count(),
        1,
        "{log}"
    );
}

/// Two containers as `docker ps --format json` lists them.
const CONTAINERS: &str = r#"{"ID":"4bafe6f9f956","Image":"nginx:latest","Names":"web","State":"running"}
{"ID":"d25f37c49c35","Image":"postgres:16","Names":"db","State":"exited"}
"#;

/// OliveTin's documented entity-fed argument: one choice, a template over the instance.
const RESTART_CONTAINER: &str = r#"entities:
  - file: {FILE}
    name: container
  - file: {EMPTY}
    name: nothing
actions:
  - title: Restart a container
    id: restart
    icon: "&#128260;"
    exec: [echo, restarting, "{{ name }}"]
    arguments:
      - name: name
        title: Container
        entity: container
        choices:
          - value: '{{ container.Names }}'
            title: '{{ container.Names }} ({{ .CurrentEntity.Image }})'
  - title: Pick from nothing
    id: nothing
    shell: echo {{ thing }}
    arguments:
      - name: thing
        type: ascii
        entity: nothing
        choices:
          - value: '{{ nothing.id }}'
"#;

fn choices(server: &Server, id: &str) -> Value {
    let binding = server.ok("GetActionBinding", json!({"bindingId": id}));
    binding["action"]["arguments"][0]["choices"].clone()
}

fn start_with(server: &Server, id: &str, name: &str, value: &str) -> (u16, Value) {
    server.call(
        "StartActionAndWait",
        json!({"actionId": id, "arguments": [{"name": name, "value": value}]}),
    )
}

#[test]
fn entity_fed_choices_render_validate_and_follow_the_file() {
    let files = TempDir::new();
    let file = files.path().join("containers.json");
    let empty = files.path().join("nothing.yaml");
    std::fs::write(&file, CONTAINERS).expect("write entities");
    std::fs::write(&empty, "# no instances yet\n").expect("write entities");
    let server = Server::start_yaml(
        &RESTART_CONTAINER
            .replace("{FILE}", &file.display().to_string())
            .replace("{EMPTY}", &empty.display().to_string()),
    );

    assert_eq!(
        choices(&server, "restart"),
        json!([
            {"value": "web", "title": "web (nginx:latest)"},
            {"value": "db", "title": "db (postgres:16)"},
        ])
    );
    let (status, body) = start_with(&server, "restart", "name", "db");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["logEntry"]["stdout"], "restarting db\n");
    // Only the rendered values: not the template, not another container.
    for wrong in ["{{ container.Names }}", "cache", "4bafe6f9f956"] {
        let (status, body) = start_with(&server, "restart", "name", wrong);
        assert_eq!(status, 400, "{wrong}: {body}");
        let message = assert_json_error(&body, "invalid_argument");
        assert!(
            message.contains("must be one of the declared choices"),
            "{message}"
        );
    }
    // No instance: no choice, and no value passes (the type is not the rule instead).
    assert_eq!(choices(&server, "nothing"), json!([]));
    let (status, body) = start_with(&server, "nothing", "thing", "abc");
    assert_eq!(status, 400, "{body}");
    let message = assert_json_error(&body, "invalid_argument");
    assert!(
        message.contains("no instance of the entity type \"nothing\""),
        "{message}"
    );

    // The file changes: the choices follow it.
    let changed = CONTAINERS.replace("\"db\"", "\"cache\"");
    std::fs::write(&file, changed).expect("rewrite entities");
    assert!(wait_until(SOON, || choices(&server, "restart")[1]["value"] == "cache"));
    let (status, body) = start_with(&server, "restart", "name", "cache");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["logEntry"]["stdout"], "restarting cache\n");
    let (status, _) = start_with(&server, "restart", "name", "db");
    assert_eq!(status, 400);
}

/// A dashboard of servers as OliveTin 3 configs write it: per instance a fieldset whose class
/// depends on the instance, holding the instance's action, a plain action, and the latest
/// output of the instance's action named by its id.
const SERVERS: &str = r#"insecureAllowDumpVars: true
entities:
  - file: {FILE}
    name: server
actions:
  - title: Ping {{ server.name }}
    id: ping
    entity: server
    shell: echo ping {{ .CurrentEntity.host }}
  - title: Refresh server list
    id: refresh
    shell: echo refreshed
  - title: Uptime
    id: uptime
    shell: echo up
dashboards:
  - title: Servers
    contents:
      - title: '{{ server.name }}'
        type: fieldset
        entity: server
        cssClass: 'state-{{ server.state }}'
        contents:
          - title: Ping {{ server.name }}
            cssClass: 'ping-{{ .CurrentEntity.state }}'
          - title: Refresh server list
          - title: ping
            type: stdout-most-recent-execution
      - title: Uptime
        type: stdout-most-recent-execution
"#;

#[test]
fn entity_fieldsets_show_plain_actions_latest_outputs_and_rendered_classes() {
    let files = TempDir::new();
    let file = files.path().join("servers.yaml");
    std::fs::write(
        &file,
        "- {key: nas, name: NAS, host: 10.0.0.2, state: up}\n- {key: pi, name: Pi, host: 10.0.0.3, state: down}\n",
    )
    .expect("write entities");
    let server = Server::start_yaml(&SERVERS.replace("{FILE}", &file.display().to_string()));
    let reply = server.ok("GetDashboard", json!({"title": "Servers"}));
    let contents = reply["dashboard"]["contents"].as_array().expect("contents");
    let outline: Vec<Value> = contents
        .iter()
        .map(|c| {
            json!({
                "type": c["type"], "title": c["title"], "cssClass": c["cssClass"],
                "contents": c["contents"].as_array().map(|list| list.iter().map(|x| json!({
                    "type": x["type"], "title": x["title"], "cssClass": x["cssClass"],
                    "action": x["action"]["bindingId"],
                })).collect::<Vec<_>>()),
                "action": c["action"]["bindingId"],
            })
        })
        .collect();
    let fieldset = |name: &str, key: &str, state: &str| {
        json!({
            "type": "fieldset", "title": name, "cssClass": format!("state-{state}"),
            "contents": [
                {"type": "link", "title": format!("Ping {name}"), "cssClass": format!("ping-{state}"),
                 "action": format!("ping-{key}")},
                {"type": "link", "title": "Refresh server list", "cssClass": "", "action": "refresh"},
                {"type": "stdout-most-recent-execution", "title": "ping", "cssClass": "",
                 "action": format!("ping-{key}")},
            ],
            "action": null,
        })
    };
    assert_eq!(
        outline,
        [
            fieldset("NAS", "nas", "up"),
            fieldset("Pi", "pi", "down"),
            json!({"type": "stdout-most-recent-execution", "title": "Uptime", "cssClass": "",
                   "contents": [], "action": "uptime"}),
        ],
        "{reply}"
    );
    // Linked on a dashboard, the plain action leaves the default one; the action shown only
    // by its latest output stays there.
    let default = server.ok("GetDashboard", json!({"title": ""}));
    let ids: Vec<&Value> = default["dashboard"]["contents"][0]["contents"]
        .as_array()
        .expect("links")
        .iter()
        .map(|l| &l["action"]["bindingId"])
        .collect();
    assert_eq!(ids, [&json!("uptime")], "{default}");

    // DumpVars lists what an entity template can name.
    let vars = server.ok("DumpVars", json!({}));
    for (key, value) in [
        ("entity.server.nas.host", "10.0.0.2"),
        ("entity.server.pi.state", "down"),
        ("entity.server.pi.name", "Pi"),
    ] {
        assert_eq!(vars["contents"][key], value, "{key}: {vars}");
    }
    assert!(vars["contents"]["actiond.version"].is_string(), "{vars}");
}

#[test]
fn check_config_names_a_tab_that_libyaml_refuses() {
    let dir = TempDir::new();
    let path = dir.path().join("config.yaml");
    std::fs::write(
        &path,
        "actions:\n  - title: A\n    shell: echo a\n\t# a comment indented with a TAB\n  - title: B\n    shell: |\n      if true; then\n      \techo b\n      fi\n",
    )
    .expect("write config");
    let run = run_binary(
        &["--check-config", path.to_str().expect("utf-8")],
        dir.path(),
        CHECK_BOUND,
    );
    let out = format!("{}{}", run.stdout, run.stderr);
    // Read (YAML 1.2 allows it), with a warning naming the one line libyaml refuses; the TAB
    // inside the block scalar is the script's own.
    assert_eq!(run.status.code(), Some(0), "{out}");
    assert!(
        out.contains("warning: line 4: a TAB in the indentation of a comment"),
        "{out}"
    );
    assert!(out.contains("valid (2 actions)"), "{out}");
    assert!(!out.contains("line 8"), "{out}");
    // The refusal of a TAB that indents content stays a YAML error.
    std::fs::write(&path, "actions:\n  - title: A\n\tshell: echo a\n").expect("write config");
    let run = run_binary(
        &["--check-config", path.to_str().expect("utf-8")],
        dir.path(),
        CHECK_BOUND,
    );
    assert_eq!(run.status.code(), Some(2));
}
