//! Dashboards and entities seen from a client: the default dashboard built from
//! the actions no configured dashboard places, configured dashboards and the directories
//! nested in them reached by title, fieldsets repeated once per entity instance with their
//! titles rendered for it (entity values escaped in display HTML and inert in the command),
//! GetEntities and GetEntity, what each caller is shown (only what it may view, `canExec` per
//! caller), and Init's `rootDashboards`.
//!
//! Components are compared through an outline (type, title, contents, and for a link its
//! binding id) so that each test states the whole tree it expects in a few lines; the default
//! dashboard test compares the API's Action message of each link field by field. Entity
//! files are written before the server starts, in a directory beside the config directory
//! and named relative to it, so the instances are there from the first request and no test
//! here depends on reloading.

use std::time::Duration;

use serde_json::{Value, json};

use crate::client::assert_json_error;
use crate::harness::{Server, TempDir, run_binary, to_yaml};
use crate::identity::{bearer, call_with};

// ---------------------------------------------------------------------------------------
// Helpers

/// GetDashboard of `title` as the guest, which must succeed.
fn dashboard(server: &Server, title: &str) -> Value {
    server.ok("GetDashboard", json!({"title": title}))
}

/// Asserts that GetDashboard of `title` answers 404 not_found.
fn assert_no_dashboard(server: &Server, title: &str) {
    let (status, body) = server.call("GetDashboard", json!({"title": title}));
    assert_eq!(status, 404, "GetDashboard {title:?}: {body}");
    assert_json_error(&body, "not_found");
}

/// The outline of a component list: `{"link": bindingId}` for a link (after checking that
/// the link's title is its action's), `{"display": title}` for a display, `{"latest":
/// bindingId}` for a latest-output component, and
/// `{"<type> <title>": [children]}` for a container. Every component must carry all six
/// fields of the API's DashboardComponent with their JSON types.
fn outline(components: &Value) -> Value {
    let list = components
        .as_array()
        .unwrap_or_else(|| panic!("contents is not an array: {components}"));
    Value::Array(list.iter().map(outline_one).collect())
}

fn outline_one(c: &Value) -> Value {
    for field in ["title", "type", "icon", "cssClass"] {
        assert!(
            c[field].is_string(),
            "component without a string {field}: {c}"
        );
    }
    assert!(c["contents"].is_array(), "component without contents: {c}");
    let title = c["title"].as_str().unwrap_or_default();
    match c["type"].as_str().unwrap_or_default() {
        "link" => {
            let action = &c["action"];
            assert!(action.is_object(), "a link without an action: {c}");
            assert_eq!(
                c["title"], action["title"],
                "a link's title is its action's"
            );
            json!({"link": action["bindingId"]})
        }
        "display" => json!({"display": title}),
        "stdout-most-recent-execution" => {
            let action = &c["action"];
            assert!(action.is_object(), "a latest output without an action: {c}");
            json!({"latest": action["bindingId"]})
        }
        kind => {
            assert!(
                c["action"].is_null(),
                "a {kind} component carries an action: {c}"
            );
            json!({format!("{kind} {title}"): outline(&c["contents"])})
        }
    }
}

/// The outline of a whole GetDashboard reply, after checking that the reply's title and the
/// dashboard's agree.
fn outline_reply(reply: &Value) -> Value {
    assert_eq!(reply["title"], reply["dashboard"]["title"], "{reply}");
    outline(&reply["dashboard"]["contents"])
}

/// Every link of a reply, at any depth: (bindingId, canExec).
fn links(reply: &Value) -> Vec<(String, bool)> {
    fn walk(c: &Value, out: &mut Vec<(String, bool)>) {
        if c["type"] == "link" {
            out.push((
                c["action"]["bindingId"].as_str().unwrap_or_default().into(),
                c["action"]["canExec"].as_bool().unwrap_or_default(),
            ));
        }
        for child in c["contents"].as_array().into_iter().flatten() {
            walk(child, out);
        }
    }
    let mut out = Vec::new();
    for c in reply["dashboard"]["contents"]
        .as_array()
        .into_iter()
        .flatten()
    {
        walk(c, &mut out);
    }
    out
}

/// The outline of the default dashboard whose links are `ids`.
fn default_outline(ids: &[&str]) -> Value {
    let links: Vec<Value> = ids.iter().map(|id| json!({"link": id})).collect();
    json!([{"fieldset Actions": links}])
}

fn root_dashboards(init: &Value) -> Vec<&str> {
    init["rootDashboards"]
        .as_array()
        .unwrap_or_else(|| panic!("rootDashboards is not an array: {init}"))
        .iter()
        .map(|t| t.as_str().expect("a dashboard title"))
        .collect()
}

/// Entity files made before the server starts, in a directory beside the config directory
/// (the harness makes the config directory itself, so nothing can be put there first). The
/// config names them relative to the config directory: `../<dir>/<file>`.
struct EntityFiles {
    dir: TempDir,
}

impl EntityFiles {
    fn new(files: &[(&str, String)]) -> EntityFiles {
        let dir = TempDir::new();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).expect("write entity file");
        }
        EntityFiles { dir }
    }

    fn relative(&self, name: &str) -> String {
        let dir = self.dir.path().file_name().expect("temp dir name");
        format!("../{}/{name}", dir.to_string_lossy())
    }
}

/// Undoes the HTML escaping of text content (the named entities and numeric references for
/// the five characters that matter), to compare an escaped value with the original.
fn html_unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&#34;", "\"")
        .replace("&amp;", "&")
}

// ---------------------------------------------------------------------------------------
// The default dashboard

#[test]
fn the_default_dashboard_links_every_unplaced_visible_action_in_config_order() {
    let server = Server::start(json!({
        "actions": [
            {"id": "a", "title": "Title a", "icon": "&#128338;", "shell": "echo a", "timeout": 5},
            {"id": "b", "title": "Title b", "icon": "b", "shell": "echo b", "hidden": true},
            {"id": "c", "title": "Title c", "icon": "c", "shell": "echo c"},
            {
                "id": "g", "title": "Greet", "icon": "&#9881;",
                "shell": "echo {{ host }} {{ mode }}",
                "popupOnStart": "execution-dialog",
                "arguments": [
                    {
                        "name": "host", "title": "Host", "type": "ascii_identifier",
                        "default": "example.com", "description": "Which host",
                        "suggestions": {"example.org": "Example"},
                    },
                    {
                        "name": "mode", "title": "Mode", "type": "ascii",
                        "choices": [{"value": "fast", "title": "Fast"}, {"value": "slow", "title": "Slowly"}],
                    },
                ],
            },
        ],
        // `c` is placed on a configured dashboard, so it leaves the default one.
        "dashboards": [{"title": "Ops", "contents": [{"title": "Title c"}]}],
    }));

    let reply = dashboard(&server, "");
    // "", "default" and "Actions" all name the default dashboard.
    assert_eq!(dashboard(&server, "default"), reply);
    assert_eq!(dashboard(&server, "Actions"), reply);
    assert_eq!(reply["title"], "Actions");
    assert_eq!(outline_reply(&reply), default_outline(&["a", "g"]));

    // Each link carries the API's Action message, every field present; order is the
    // action's position in the config.
    let fieldset = &reply["dashboard"]["contents"][0];
    let link_a = &fieldset["contents"][0];
    let link_g = &fieldset["contents"][1];
    assert_eq!(link_a["icon"], "&#128338;");
    assert_eq!(
        link_a["action"],
        json!({
            "bindingId": "a", "title": "Title a", "icon": "&#128338;", "canExec": true,
            "arguments": [], "popupOnStart": "nothing", "order": 0, "timeout": 5,
        })
    );
    assert_eq!(
        link_g["action"],
        json!({
            "bindingId": "g", "title": "Greet", "icon": "&#9881;", "canExec": true,
            "arguments": [
                {
                    "name": "host", "title": "Host", "type": "ascii_identifier",
                    "defaultValue": "example.com", "choices": [], "description": "Which host",
                    "suggestions": {"example.org": "Example"},
                },
                {
                    "name": "mode", "title": "Mode", "type": "ascii", "defaultValue": "",
                    "choices": [{"value": "fast", "title": "Fast"}, {"value": "slow", "title": "Slowly"}],
                    "description": "", "suggestions": {},
                },
            ],
            "popupOnStart": "execution-dialog", "order": 3, "timeout": 30,
        })
    );
    // GetActionBinding answers the same message for one binding.
    assert_eq!(
        server.ok("GetActionBinding", json!({"bindingId": "g"})),
        json!({"action": link_g["action"]})
    );
}

// ---------------------------------------------------------------------------------------
// Configured dashboards

#[test]
fn configured_dashboards_and_their_directories_are_reached_by_title() {
    let actions: Vec<Value> = ["a", "b", "c", "d"]
        .iter()
        .map(|id| json!({"id": id, "title": format!("Title {id}"), "shell": "true"}))
        .collect();
    let server = Server::start(json!({
        "actions": actions,
        "dashboards": [{
            "title": "Home",
            "contents": [
                {"title": "Title a"},
                // No type and contents: a directory.
                {"title": "Rooms", "cssClass": "rooms", "contents": [
                    {"title": "Kitchen", "type": "fieldset", "contents": [{"title": "Title b"}]},
                    {"title": "Deep", "contents": [
                        {"title": "Title c"},
                        // A link to no action is dropped.
                        {"title": "No such action"},
                    ]},
                    {"title": "<p>hello</p>", "type": "display"},
                ]},
                // A fieldset whose only link leads nowhere is empty, so it is left out.
                {"title": "Empty", "type": "fieldset", "contents": [{"title": "No such action"}]},
            ],
        }],
    }));

    let rooms = json!({"directory Rooms": [
        {"fieldset Kitchen": [{"link": "b"}]},
        {"directory Deep": [{"link": "c"}]},
        {"display": "<p>hello</p>"},
    ]});
    let home = dashboard(&server, "Home");
    assert_eq!(home["title"], "Home");
    assert_eq!(outline_reply(&home), json!([{"link": "a"}, rooms]));
    assert_eq!(home["dashboard"]["contents"][1]["cssClass"], "rooms");

    // A directory at any depth is a dashboard of its own, titled after it.
    let by_title = dashboard(&server, "Rooms");
    assert_eq!(by_title["title"], "Rooms");
    assert_eq!(outline_reply(&by_title), rooms["directory Rooms"]);
    let deep = dashboard(&server, "Deep");
    assert_eq!(deep["title"], "Deep");
    assert_eq!(outline_reply(&deep), json!([{"link": "c"}]));

    // Only dashboards and directories have a page: not a fieldset, not a link, not a title
    // that is nowhere.
    assert_no_dashboard(&server, "Kitchen");
    assert_no_dashboard(&server, "Title a");
    assert_no_dashboard(&server, "Nowhere");

    // Placed actions leave the default dashboard; `d` is the only one left there.
    assert_eq!(
        outline_reply(&dashboard(&server, "")),
        default_outline(&["d"])
    );
}

/// A latest-output component (`stdout-most-recent-execution`) carries the action it shows,
/// named by id as OliveTin documents it, or by title; inside an entity fieldset, the binding
/// of the same instance. One that names nothing is left out, and `--check-config` warns
/// about it. (What the caller may not view is left out by the same check as a link's.)
#[test]
fn a_latest_output_component_names_its_action_by_id_or_by_title() {
    let files = EntityFiles::new(&[(
        "hosts.yaml",
        to_yaml(&json!([{"key": "n1", "name": "Node 1"}, {"key": "n2", "name": "Node 2"}])),
    )]);
    let latest = |title: &str| json!({"type": "stdout-most-recent-execution", "title": title});
    let config = json!({
        "entities": [{"file": files.relative("hosts.yaml"), "name": "host"}],
        "actions": [
            {"id": "status_command", "title": "Get status", "shell": "date"},
            {"id": "temp", "title": "Temperature", "shell": "echo 40"},
            {"id": "load", "title": "Load of {{ host.name }}", "shell": "echo 1", "entity": "host"},
        ],
        "dashboards": [{"title": "Panel", "contents": [
            {"title": "Status", "type": "fieldset", "contents": [
                latest("status_command"),
                latest("Temperature"),
                latest("no_such_action"),
                {"title": "Get status"},
            ]},
            {"title": "{{ .CurrentEntity.name }}", "type": "fieldset", "entity": "host",
             "contents": [latest("load")]},
        ]}],
    });
    let server = Server::start(config.clone());
    let panel = dashboard(&server, "Panel");
    assert_eq!(
        outline_reply(&panel),
        json!([
            {"fieldset Status": [
                {"latest": "status_command"},
                {"latest": "temp"},
                {"link": "status_command"},
            ]},
            {"fieldset Node 1": [{"latest": "load-n1"}]},
            {"fieldset Node 2": [{"latest": "load-n2"}]},
        ])
    );
    // The component keeps its own title; the action carries the one to show.
    let by_id = &panel["dashboard"]["contents"][0]["contents"][0];
    assert_eq!(by_id["title"], "status_command", "{by_id}");
    assert_eq!(by_id["action"]["title"], "Get status", "{by_id}");
    // Showing an action's output does not place it: it stays on the default dashboard.
    let default = outline_reply(&dashboard(&server, ""));
    assert_eq!(default, default_outline(&["temp", "load-n1", "load-n2"]));

    let dir = TempDir::new();
    let path = dir.path().join("config.yaml");
    let mut yaml = config;
    yaml["entities"][0]["file"] = json!(files.dir.path().join("hosts.yaml").to_string_lossy());
    std::fs::write(&path, to_yaml(&yaml)).expect("write config");
    let run = run_binary(
        &["--check-config", path.to_str().expect("utf-8 path")],
        dir.path(),
        Duration::from_secs(20),
    );
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(
        said.contains("no action has the id or title \"no_such_action\""),
        "{said}"
    );
    assert!(!said.contains("\"status_command\""), "{said}");
}

// ---------------------------------------------------------------------------------------
// Entities on dashboards

/// A value that would run `touch MARK` if it were ever read as shell in any quoting context,
/// and would be markup if it were put into HTML unescaped.
const HOSTILE: &str = "x'; touch MARK; '\"; touch MARK; \"$(touch MARK)`touch MARK`<i>&amp;";

#[test]
fn an_entity_fieldset_is_repeated_per_instance_and_its_values_stay_text() {
    let files = EntityFiles::new(&[(
        "servers.yaml",
        to_yaml(&json!([
            {"key": "alpha", "name": "Alpha", "note": "plain"},
            // Characters outside [A-Za-z0-9_-] of the key become `_` in the binding id.
            {"key": "web 3/x", "name": "Web3", "note": "<b>&</b>"},
            // No key or id: the key is the position.
            {"name": "Evil", "note": HOSTILE},
        ])),
    )]);
    let server = Server::start(json!({
        "entities": [{"file": files.relative("servers.yaml"), "name": "server"}],
        "actions": [
            {"id": "other", "title": "Other", "shell": "true"},
            {
                "id": "ping",
                // The legacy `{{ type.field }}` form in the title, the current one in the shell,
                // in double quotes and unquoted.
                "title": "Ping {{ server.name }}",
                "shell": "echo \"note={{ .CurrentEntity.note }}\"; printf '%s\\n' {{ .CurrentEntity.note }}",
                "entity": "server",
            },
        ],
        "dashboards": [{
            "title": "Servers",
            "contents": [{
                "title": "Server {{ .CurrentEntity.name }}",
                "type": "fieldset",
                "entity": "server",
                "contents": [
                    {"type": "display", "title": "<em>{{ .CurrentEntity.note }}</em>"},
                    // A link inside an entity fieldset names the action by its configured
                    // title and leads to this instance's binding.
                    {"title": "Ping {{ server.name }}"},
                ],
            }],
        }],
    }));

    let reply = dashboard(&server, "Servers");
    let fieldsets = reply["dashboard"]["contents"].as_array().expect("contents");
    let want = [
        ("Server Alpha", "ping-alpha", "Ping Alpha", "plain"),
        ("Server Web3", "ping-web_3_x", "Ping Web3", "<b>&</b>"),
        ("Server Evil", "ping-2", "Ping Evil", HOSTILE),
    ];
    assert_eq!(
        fieldsets.len(),
        want.len(),
        "one fieldset per instance: {reply}"
    );
    for (fieldset, (title, binding, action_title, note)) in fieldsets.iter().zip(want) {
        assert_eq!(fieldset["type"], "fieldset", "{fieldset}");
        assert_eq!(fieldset["title"], title, "{fieldset}");
        let contents = fieldset["contents"].as_array().expect("contents");
        assert_eq!(contents.len(), 2, "{fieldset}");

        // The display's own markup stays; the entity value inside it is escaped text.
        let display = contents[0]["title"].as_str().expect("display title");
        assert_eq!(contents[0]["type"], "display", "{fieldset}");
        let inner = display
            .strip_prefix("<em>")
            .and_then(|d| d.strip_suffix("</em>"))
            .unwrap_or_else(|| panic!("display markup lost: {display:?}"));
        assert!(
            !inner.contains(['<', '>']),
            "an entity value is markup in a display: {display:?}"
        );
        assert_eq!(html_unescape(inner), note, "display {display:?}");

        assert_eq!(contents[1]["type"], "link", "{fieldset}");
        assert_eq!(contents[1]["action"]["bindingId"], binding, "{fieldset}");
        assert_eq!(contents[1]["action"]["title"], action_title, "{fieldset}");
    }

    // The hostile value reaches the command as text in both places, and nothing ran.
    let entry = server.run("ping-2");
    assert_eq!(entry["exitCode"], 0, "{entry}");
    assert_eq!(
        entry["stdout"],
        format!("note={HOSTILE}\n{HOSTILE}\n"),
        "{entry}"
    );
    assert!(
        !server.path("MARK").exists(),
        "an entity value was run as shell"
    );

    // The entity action is placed (by its configured title), so only `other` is left on the
    // default dashboard.
    assert_eq!(
        outline_reply(&dashboard(&server, "")),
        default_outline(&["other"])
    );
}

#[test]
fn entity_bindings_carry_the_order_of_their_action() {
    // `order` is the action's position in the config; every binding of an entity action is
    // that action, so they all carry its position, not that of some other action.
    let files = EntityFiles::new(&[(
        "servers.json",
        json!([{"id": "s1"}, {"id": "s2"}]).to_string(),
    )]);
    let server = Server::start(json!({
        "entities": [{"file": files.relative("servers.json"), "name": "server"}],
        "actions": [
            {"id": "first", "title": "First", "shell": "true"},
            {"id": "second", "title": "Second", "shell": "true"},
            {"id": "ping", "title": "Ping {{ .CurrentEntity.id }}", "shell": "true", "entity": "server"},
        ],
    }));
    let reply = dashboard(&server, "");
    let orders: Vec<(Value, Value)> = reply["dashboard"]["contents"][0]["contents"]
        .as_array()
        .expect("links")
        .iter()
        .map(|l| {
            (
                l["action"]["bindingId"].clone(),
                l["action"]["order"].clone(),
            )
        })
        .collect();
    assert_eq!(
        orders,
        vec![
            (json!("first"), json!(0)),
            (json!("second"), json!(1)),
            (json!("ping-s1"), json!(2)),
            (json!("ping-s2"), json!(2)),
        ]
    );
}

#[test]
fn get_entities_and_get_entity_describe_every_loaded_instance() {
    let files = EntityFiles::new(&[
        // A JSON array: keys from `id`, else `key` (a number, as text), else the position.
        (
            "servers.json",
            json!([
                {"id": "s1", "title": "Server One", "name": "not the title"},
                {"name": "Two"},
                {"key": 42, "name": "Answer"},
                {"id": "only-id"},
            ])
            .to_string(),
        ),
        // JSON lines, as `docker ps --format json` writes them.
        (
            "rooms.jsonl",
            "{\"name\":\"Kitchen\"}\n{\"id\":\"hall\",\"name\":\"Hall\"}\n".to_string(),
        ),
        // A YAML list of mappings.
        ("people.yaml", to_yaml(&json!([{"name": "Ada"}]))),
    ]);
    let server = Server::start(json!({
        // Listed out of order: GetEntities sorts the types by name.
        "entities": [
            {"file": files.relative("servers.json"), "name": "server"},
            {"file": files.relative("rooms.jsonl"), "name": "room"},
            {"file": files.relative("people.yaml"), "name": "person"},
        ],
        "actions": [{"id": "a", "title": "A", "shell": "true"}],
        "dashboards": [
            {"title": "Map", "contents": [
                {"title": "{{ .CurrentEntity.name }}", "type": "fieldset", "entity": "room",
                 "contents": [{"type": "display", "title": "{{ .CurrentEntity.name }}"}]},
            ]},
            {"title": "Plain", "contents": [{"title": "A"}]},
            {"title": "Nested", "contents": [
                {"title": "Inside", "contents": [
                    {"title": "Rooms", "type": "fieldset", "entity": "room",
                     "contents": [{"type": "display", "title": "x"}]},
                ]},
            ]},
        ],
    }));

    let instance = |title: &str, key: &str, kind: &str| json!({"title": title, "uniqueKey": key, "type": kind});
    assert_eq!(
        server.ok("GetEntities", json!({})),
        json!({"entityDefinitions": [
            {
                "title": "person",
                "instances": [instance("Ada", "0", "person")],
                "usedOnDashboards": [],
            },
            {
                "title": "room",
                "instances": [instance("Kitchen", "0", "room"), instance("Hall", "hall", "room")],
                "usedOnDashboards": ["Map", "Nested"],
            },
            {
                "title": "server",
                "instances": [
                    instance("Server One", "s1", "server"),
                    instance("Two", "1", "server"),
                    instance("Answer", "42", "server"),
                    instance("only-id", "only-id", "server"),
                ],
                "usedOnDashboards": [],
            },
        ]})
    );

    assert_eq!(
        server.ok("GetEntity", json!({"uniqueKey": "hall", "type": "room"})),
        instance("Hall", "hall", "room")
    );
    assert_eq!(
        server.ok("GetEntity", json!({"uniqueKey": "1", "type": "server"})),
        instance("Two", "1", "server")
    );
    for (key, kind) in [("nope", "room"), ("hall", "server"), ("hall", "nope")] {
        let (status, body) = server.call("GetEntity", json!({"uniqueKey": key, "type": kind}));
        assert_eq!(status, 404, "GetEntity {key:?} {kind:?}: {body}");
        assert_json_error(&body, "not_found");
    }
}

// ---------------------------------------------------------------------------------------
// Who sees what

/// A fresh API token from `actiond gen-token` and the SHA-256 it prints for the config.
fn gen_token() -> (String, String) {
    let run = run_binary(
        &["gen-token"],
        &std::env::temp_dir(),
        Duration::from_secs(10),
    );
    assert!(run.status.success(), "gen-token failed: {}", run.stderr);
    let value_after = |label: &str| {
        run.stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix(label))
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no {label} line in {:?}", run.stdout))
            .to_string()
    };
    (value_after("token:"), value_after("sha256:"))
}

#[test]
fn a_caller_sees_only_the_actions_it_may_view_and_can_exec_follows_exec() {
    let (token, sha256) = gen_token();
    let auth = bearer(&token);
    let viewer = [("Authorization", auth.as_str())];
    let action = |id: &str, acls: &[&str]| json!({"id": id, "title": format!("Title {id}"), "shell": "true", "acls": acls});
    let server = Server::start(json!({
        // Nobody may do anything unless an ACL says so; the guest has no ACL.
        "defaultPermissions": {"view": false, "exec": false, "logs": false, "kill": false},
        "authApiTokens": [{"name": "viewer", "sha256": sha256, "username": "viewer", "usergroup": "staff"}],
        "accessControlLists": [
            {"name": "see", "matchUsernames": ["viewer"],
             "permissions": {"view": true, "exec": false, "logs": false, "kill": false}},
            {"name": "run", "matchUsernames": ["viewer"],
             "permissions": {"view": true, "exec": true, "logs": true, "kill": false}},
        ],
        "actions": [
            action("a", &["see", "run"]),
            action("b", &["see"]),
            action("c", &[]),
            action("e", &["see"]),
            action("f", &[]),
        ],
        "dashboards": [{"title": "Ops", "contents": [
            {"title": "Seen", "type": "fieldset", "contents": [{"title": "Title b"}]},
            {"title": "Unseen", "type": "fieldset", "contents": [{"title": "Title c"}]},
        ]}],
    }));

    // Every call below as the viewer, with the status it must answer.
    let as_viewer = |op: &str, body: Value, status: u16| {
        let resp = call_with(&server, op, body, &viewer);
        assert_eq!(resp.status, status, "{op}: {}", resp.text());
        resp.json()
    };

    // Default dashboard: `a` (may run) and `e` (may only look); `f` is invisible and `b`, `c`
    // are placed on Ops.
    let reply = as_viewer("GetDashboard", json!({"title": ""}), 200);
    assert_eq!(
        links(&reply),
        vec![("a".to_string(), true), ("e".to_string(), false)]
    );

    // Ops: the fieldset of `c`, which the viewer may not see, is left out entirely.
    let ops = as_viewer("GetDashboard", json!({"title": "Ops"}), 200);
    assert_eq!(
        outline_reply(&ops),
        json!([{"fieldset Seen": [{"link": "b"}]}])
    );
    assert_eq!(links(&ops), vec![("b".to_string(), false)]);

    // GetActionBinding agrees: canExec false where exec is denied, and no view → denied.
    let e = as_viewer("GetActionBinding", json!({"bindingId": "e"}), 200);
    assert_eq!(e["action"]["canExec"], false, "{e}");
    let f = as_viewer("GetActionBinding", json!({"bindingId": "f"}), 403);
    assert_json_error(&f, "permission_denied");
    // And canExec false means what it says.
    let start = as_viewer("StartAction", json!({"actionId": "e"}), 403);
    assert_json_error(&start, "permission_denied");

    // The viewer's Init lists "Actions"; the guest, who may view nothing, sees no link
    // anywhere and gets no "Actions".
    let init = as_viewer("Init", json!({}), 200);
    assert_eq!(root_dashboards(&init), ["Actions", "Ops"]);
    let guest_init = server.ok("Init", json!({}));
    assert_eq!(root_dashboards(&guest_init), ["Ops"]);
    assert_eq!(links(&dashboard(&server, "")), vec![]);
    assert_eq!(links(&dashboard(&server, "Ops")), vec![]);
}

// ---------------------------------------------------------------------------------------
// Init

#[test]
fn init_lists_actions_first_then_the_configured_dashboards_in_config_order() {
    let server = Server::start(json!({
        "actions": [
            {"id": "a", "title": "Title a", "shell": "true"},
            {"id": "b", "title": "Title b", "shell": "true"},
        ],
        "dashboards": [
            {"title": "Zeta", "contents": [{"title": "Title b"}]},
            {"title": "Alpha", "contents": [{"type": "display", "title": "hi"}]},
        ],
    }));
    assert_eq!(
        root_dashboards(&server.ok("Init", json!({}))),
        ["Actions", "Zeta", "Alpha"]
    );
}

#[test]
fn init_leaves_out_actions_when_every_action_is_placed_or_hidden() {
    let server = Server::start(json!({
        "actions": [
            {"id": "a", "title": "Title a", "shell": "true"},
            {"id": "b", "title": "Title b", "shell": "true", "hidden": true},
        ],
        "dashboards": [{"title": "Only", "contents": [{"title": "Title a"}]}],
    }));
    assert_eq!(root_dashboards(&server.ok("Init", json!({}))), ["Only"]);
}

// ---------------------------------------------------------------------------------------
// Kept answers and their size

/// The titles of the links on the default dashboard, as the caller with `headers` sees it.
fn default_links(server: &Server, headers: &[(&str, &str)]) -> Vec<String> {
    let resp = call_with(server, "GetDashboard", json!({"title": ""}), headers);
    assert_eq!(resp.status, 200, "GetDashboard: {}", resp.text());
    let reply = resp.json();
    reply["dashboard"]["contents"][0]["contents"]
        .as_array()
        .expect("the default fieldset")
        .iter()
        .map(|l| l["title"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_kept_dashboard_follows_reloads_and_rights_and_is_never_another_callers() {
    let (token, sha256) = gen_token();
    let auth = bearer(&token);
    let viewer = [("Authorization", auth.as_str())];
    let config = |a_title: &str, guest_sees_b: bool| {
        let b_acls = if guest_sees_b {
            json!(["staff", "guests"])
        } else {
            json!(["staff"])
        };
        json!({
            "defaultPermissions": {"view": false, "exec": false, "logs": false, "kill": false},
            "authApiTokens": [{"name": "viewer", "sha256": sha256, "username": "viewer", "usergroup": "staff"}],
            "accessControlLists": [
                {"name": "staff", "matchUsergroups": ["staff"], "permissions": {"view": true}},
                {"name": "guests", "matchUsergroups": ["guest"], "permissions": {"view": true}},
            ],
            "actions": [
                {"id": "a", "title": a_title, "shell": "true", "acls": ["guests"]},
                {"id": "b", "title": "B", "shell": "true", "acls": b_acls},
            ],
        })
    };
    let server = Server::start(config("A", false));
    // Asked in turns, twice each: each caller gets its own answer every time.
    for _ in 0..2 {
        assert_eq!(default_links(&server, &[]), ["A"]);
        assert_eq!(default_links(&server, &viewer), ["B"]);
    }
    // The binary codec is kept apart from JSON.
    let proto = crate::client::send(
        server.addr,
        &crate::client::Request::connect("GetDashboard", b"")
            .set_header("Content-Type", "application/proto"),
    );
    assert_eq!(proto.status, 200);
    assert_eq!(proto.header("content-type"), Some("application/proto"));
    assert_eq!(default_links(&server, &[]), ["A"]);

    let reload = |c: Value| {
        let tmp = server.path("config.yaml.tmp");
        std::fs::write(&tmp, to_yaml(&c)).unwrap();
        std::fs::rename(&tmp, server.path("config.yaml")).unwrap();
    };
    // A reload renames an action: the kept answers are not served again.
    reload(config("A2", false));
    assert!(crate::harness::wait_until(Duration::from_secs(30), || {
        default_links(&server, &[]) == ["A2"]
    }));
    assert_eq!(default_links(&server, &viewer), ["B"]);
    // A reload gives the guest the view of b: the guest's answer follows, the viewer's not.
    reload(config("A2", true));
    assert!(crate::harness::wait_until(Duration::from_secs(30), || {
        default_links(&server, &[]) == ["A2", "B"]
    }));
    assert_eq!(default_links(&server, &viewer), ["B"]);
}

#[test]
fn a_dashboard_too_large_for_one_answer_is_cut_with_a_marker() {
    // 1000 instances (the default bound) of about 850 bytes: rendered whole, the answer
    // would be about 3 MB.
    let long = "x".repeat(840);
    let instances: Vec<Value> = (0..1000)
        .map(|i| json!({"key": format!("k{i}"), "name": format!("n{i}-{long}")}))
        .collect();
    let files = EntityFiles::new(&[("servers.yaml", to_yaml(&json!(instances)))]);
    let server = Server::start(json!({
        "entities": [{"file": files.relative("servers.yaml"), "name": "server"}],
        "actions": [{"id": "ping", "title": "Ping {{ .CurrentEntity.name }}", "shell": "true", "entity": "server"}],
        "dashboards": [{"title": "Servers", "contents": [{
            "title": "{{ .CurrentEntity.name }}", "type": "fieldset", "entity": "server",
            "contents": [{"title": "Ping {{ .CurrentEntity.name }}"}],
        }]}],
    }));
    for _ in 0..2 {
        let resp = crate::client::send(
            server.addr,
            &crate::client::Request::connect("GetDashboard", br#"{"title": "Servers"}"#),
        );
        assert_eq!(resp.status, 200, "{}", resp.text());
        assert!(resp.body.len() <= 1024 * 1024, "{} bytes", resp.body.len());
        let reply = resp.json();
        let contents = reply["dashboard"]["contents"].as_array().unwrap();
        let kept = contents.len() - 1;
        assert!(kept > 100 && kept < 1000, "{kept}");
        assert_eq!(contents[0]["title"], format!("n0-{long}"));
        let marker = contents.last().unwrap();
        assert_eq!(marker["type"], "display");
        let shown: usize = contents[..kept]
            .iter()
            .map(|c| 1 + c["contents"].as_array().map_or(0, Vec::len))
            .sum();
        let left = 1000 * 2 - shown;
        assert!(
            marker["title"].as_str().unwrap().starts_with(&format!(
                "actiond: {left} more components of this dashboard are not shown"
            )),
            "{marker}"
        );
    }
}
