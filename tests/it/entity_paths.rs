//! Entity fields that reach a program through the command's own words, through the real
//! binary: a copy of a field that starts an argument (`dir={{ … }}; du "$dir"`) follows the
//! field's leading-dash rule, and a field in a directory the command takes code from (`cd
//! /srv/apps/{{ … }} && ./deploy.sh`, `make -C`) disables the instance whose field leads out
//! of it. The field's own leading-dash rule is in `argument_rules.rs`.

use serde_json::{Value, json};

use crate::harness::{Server, TempDir};

/// A copy of an entity field follows the field's own rule (fe30h F1): `dir={{ … }}; du
/// "$dir"` hands the program the field as a word of its own, so an instance whose field
/// starts with `-` is disabled there as in `du {{ … }}`, quoted or not, through `set --` too;
/// after `--` the copy is no option and runs. A `${d#x}` that may strip an entity field down
/// to a `-` is refused at load.
#[test]
fn a_copy_of_an_entity_value_starting_with_a_dash_is_no_option() {
    let files = TempDir::new();
    let hosts = files.path().join("hosts.yaml");
    std::fs::write(
        &hosts,
        "- {key: a, name: \"--help\"}\n- {key: b, name: plain}\n",
    )
    .expect("write hosts");
    let action = |id: &str, shell: &str| {
        json!({"id": id, "title": format!("{id} {{{{ .CurrentEntity.name }}}}"),
               "entity": "host", "shell": shell})
    };
    let config = json!({
        "entities": [{"file": hosts.to_str().unwrap(), "name": "host"}],
        "actions": [
            // (`basename`, which reads an option in any word; not `echo`, whose options only
            // change what it prints, nor `printf`, whose words after the format are operands.)
            action("copy", "dir={{ .CurrentEntity.name }}; basename \"$dir\""),
            action("quoted", "dir=\"{{ .CurrentEntity.name }}\"; x=$dir; basename \"${x}\""),
            action("set", "d={{ .CurrentEntity.name }}; set -- \"$d\"; basename \"$1\""),
            action("after", "d={{ .CurrentEntity.name }}; basename -- \"$d\""),
            action("strip", "d=x{{ .CurrentEntity.name }}; basename \"${d#x}\""),
        ],
    });
    let server = Server::start(config);
    let run = |id: &str| {
        server.call(
            "StartActionAndWait",
            json!({"actionId": id, "arguments": []}),
        )
    };
    let stdout = |(status, reply): (u16, Value)| {
        assert_eq!(status, 200, "{reply}");
        reply["logEntry"]["stdout"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    for id in ["copy", "quoted", "set"] {
        let (status, reply) = run(&format!("{id}-a"));
        let message = reply["message"].as_str().unwrap_or_default();
        assert_ne!(status, 200, "{id}-a ran: {reply}");
        assert!(
            message.contains("\"name\"") && message.contains("allowLeadingDash: true"),
            "{id}-a: {message}"
        );
        assert_eq!(stdout(run(&format!("{id}-b"))), "plain\n", "{id}-b");
    }
    assert_eq!(stdout(run("after-a")), "--help\n");
    for id in ["strip-a", "strip-b"] {
        let (status, reply) = run(id);
        assert_ne!(status, 200, "{id} ran: {reply}");
    }
    assert!(server.log_contains("removes the start of a value"));
}

/// An entity field that reaches a directory the command takes code from (fe30h F3): `cd
/// /srv/apps/{{ … }} && ./deploy.sh` and `exec: [make, -C, '/srv/apps/{{ … }}']` with the
/// field `../../evil` ran `evil/deploy.sh`; that instance is now disabled, saying which field
/// and why, and the others run.
#[test]
fn an_entity_value_that_climbs_out_of_a_directory_code_is_taken_from_is_disabled() {
    let files = TempDir::new();
    let root = files.path();
    for (dir, word) in [("srv/apps/web", "web"), ("evil", "EVIL")] {
        std::fs::create_dir_all(root.join(dir)).expect("mkdir");
        let script = root.join(dir).join("deploy.sh");
        std::fs::write(&script, format!("#!/bin/sh\necho {word}\n")).expect("write script");
        std::fs::write(
            root.join(dir).join("Makefile"),
            format!("status:\n\t@echo {word}\n"),
        )
        .expect("write Makefile");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let apps = root.join("apps.yaml");
    std::fs::write(
        &apps,
        "- {key: web, name: web}\n- {key: evil, name: \"../../evil\"}\n- {key: abs, name: /tmp}\n",
    )
    .expect("write apps");
    let srv = root.join("srv/apps");
    let srv = srv.to_str().expect("utf-8 temp dir");
    let config = json!({
        "entities": [{"file": apps.to_str().unwrap(), "name": "app"}],
        "actions": [
            {"id": "deploy", "title": "deploy {{ .CurrentEntity.name }}", "entity": "app",
             "shell": format!("cd {srv}/{{{{ .CurrentEntity.name }}}} && ./deploy.sh")},
            // make is no program actiond knows never runs an argument: the action says so.
            {"id": "mk", "title": "mk {{ .CurrentEntity.name }}", "entity": "app",
             "allowUnknownProgram": true,
             "exec": ["make", "-s", "-C", format!("{srv}/{{{{ .CurrentEntity.name }}}}"), "status"]},
            {"id": "whole", "title": "whole {{ .CurrentEntity.name }}", "entity": "app",
             "shell": "cd {{ .CurrentEntity.name }} && pwd"},
        ],
    });
    let server = Server::start(config);
    let run = |id: &str| {
        server.call(
            "StartActionAndWait",
            json!({"actionId": id, "arguments": []}),
        )
    };
    for id in ["deploy", "mk"] {
        let (status, reply) = run(&format!("{id}-web"));
        assert_eq!(status, 200, "{reply}");
        assert_eq!(
            reply["logEntry"]["stdout"],
            json!("web\n"),
            "{id}-web: {reply}"
        );
        let (status, reply) = run(&format!("{id}-evil"));
        let message = reply["message"].as_str().unwrap_or_default();
        assert_ne!(status, 200, "{id}-evil ran: {reply}");
        assert!(
            message.contains("apps.yaml")
                && message.contains("\"name\"")
                && message.contains("`..`"),
            "{id}-evil: {message}"
        );
    }
    // Inside the author's path an absolute field is one more directory down (`apps//tmp`);
    // where it starts the path, it is anywhere.
    let (status, reply) = run("deploy-abs");
    assert_eq!(status, 200, "deploy-abs did not run: {reply}");
    let (status, reply) = run("whole-abs");
    let message = reply["message"].as_str().unwrap_or_default();
    assert_ne!(status, 200, "whole-abs ran: {reply}");
    assert!(message.contains("absolute path"), "whole-abs: {message}");
    let (status, reply) = run("whole-web");
    assert_eq!(status, 200, "whole-web did not run: {reply}");
}

/// An argument value in a path the command builds is refused at the press, whatever program
/// gets the path (fe30i F05, F07, F12): three `ascii_identifier` values `..`, `..`, `evil`
/// joined by the author's `/`s, and a `regex:` value `../../evil` in an interpreter's
/// program path (`awk -f`), which no list of programs names; the same values inside the tree
/// run.
#[test]
fn an_argument_value_that_climbs_out_of_a_path_is_refused_at_the_press() {
    let files = TempDir::new();
    let root = files.path();
    for (dir, word) in [("srv/apps/a/b/web", "web"), ("srv/apps/evil", "EVIL")] {
        std::fs::create_dir_all(root.join(dir)).expect("mkdir");
        let script = root.join(dir).join("deploy.sh");
        std::fs::write(&script, format!("#!/bin/sh\necho {word}\n")).expect("write script");
        std::fs::write(
            root.join(dir).join("x.awk"),
            format!("BEGIN {{ print \"{word}\" }}\n"),
        )
        .expect("write awk");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let srv = root.join("srv/apps");
    let srv = srv.to_str().expect("utf-8 temp dir");
    let ident = |n: &str| json!({"name": n, "type": "ascii_identifier"});
    let config = json!({
        "actions": [
            {"id": "deploy", "title": "deploy",
             "shell": format!("cd {srv}/{{{{ a }}}}/{{{{ b }}}}/{{{{ c }}}} && ./deploy.sh"),
             "arguments": [ident("a"), ident("b"), ident("c")]},
            {"id": "awk", "title": "awk",
             "exec": ["awk", "-f", format!("{srv}/a/{{{{ p }}}}/x.awk")],
             // awk could run a program a value names (`system()`); this one is a path.
             "arguments": [{"name": "p", "type": "regex:^[a-z./]+$",
                            "allowUnknownProgram": true}]},
        ],
    });
    let server = Server::start(config);
    let run = |id: &str, args: Value| {
        server.call(
            "StartActionAndWait",
            json!({"actionId": id, "arguments": args}),
        )
    };
    let abc = |a: &str, b: &str, c: &str| json!([{"name": "a", "value": a}, {"name": "b", "value": b}, {"name": "c", "value": c}]);
    let (status, reply) = run("deploy", abc("a", "b", "web"));
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["logEntry"]["stdout"], json!("web\n"), "{reply}");
    let (status, reply) = run("awk", json!([{"name": "p", "value": "b/web"}]));
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["logEntry"]["stdout"], json!("web\n"), "{reply}");
    for (id, args, name) in [
        ("deploy", abc("..", "..", "evil"), "a"),
        ("deploy", abc("a", ".", "web"), "b"),
        ("awk", json!([{"name": "p", "value": "../evil"}]), "p"),
    ] {
        let (status, reply) = run(id, args.clone());
        let message = reply["message"].as_str().unwrap_or_default();
        assert_eq!(status, 400, "{id} {args} ran: {reply}");
        assert!(
            message.contains(&format!("argument {name:?}")) && message.contains("`..`"),
            "{id} {args}: {message}"
        );
    }
}

/// A value or an entity field that is a whole word `.` or `..` names the directory a
/// program works in or the one above (fe30k F4, F8): `cd …/apps && find {{ app }} -delete`
/// with `..` deleted a sibling's files, `tar -C …/sites {{ .CurrentEntity.name }}` archived
/// the parent. Now the press is refused (an argument, through its variable too) and the
/// instance disabled (a field), naming why; the same commands with a name inside run, and
/// the sibling's file is still there.
#[test]
fn a_value_or_field_that_is_dot_or_dot_dot_is_refused() {
    let files = TempDir::new();
    let root = files.path();
    for f in ["apps/web/old.tmp", "other/IMPORTANT"] {
        let path = root.join(f);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, "x").expect("write");
    }
    let sites = root.join("sites.yaml");
    std::fs::write(
        &sites,
        "- {key: web, name: web}\n- {key: up, name: \"..\"}\n",
    )
    .expect("write sites");
    let apps = root.join("apps");
    let apps = apps.to_str().expect("utf-8 temp dir");
    let ident = json!([{"name": "app", "type": "ascii_identifier"}]);
    let config = json!({
        "entities": [{"file": sites.to_str().unwrap(), "name": "site"}],
        "actions": [
            {"id": "clear", "title": "clear",
             "shell": format!("cd {apps} && find {{{{ app }}}} -mindepth 1 -delete"),
             "arguments": ident},
            {"id": "clearvar", "title": "clear by variable",
             "shell": format!("cd {apps} && find \"$APP\" -mindepth 1 -delete"),
             "arguments": ident},
            {"id": "list", "title": "list {{ .CurrentEntity.name }}", "entity": "site",
             "shell": format!("ls -A {apps}/ {{{{ .CurrentEntity.name }}}}")},
        ],
    });
    let server = Server::start(config);
    let run = |id: &str, args: Value| {
        server.call(
            "StartActionAndWait",
            json!({"actionId": id, "arguments": args}),
        )
    };
    for id in ["clear", "clearvar"] {
        for value in ["..", "."] {
            let (status, reply) = run(id, json!([{"name": "app", "value": value}]));
            let message = reply["message"].as_str().unwrap_or_default();
            assert_eq!(status, 400, "{id} {value} ran: {reply}");
            assert!(
                message.contains("argument \"app\"") && message.contains("must not be `.` or `..`"),
                "{id} {value}: {message}"
            );
        }
    }
    assert!(
        root.join("other/IMPORTANT").exists(),
        "the sibling's file is gone"
    );
    let (status, reply) = run("clear", json!([{"name": "app", "value": "web"}]));
    assert_eq!(status, 200, "{reply}");
    assert!(
        !root.join("apps/web/old.tmp").exists(),
        "web was not cleared"
    );
    let (status, reply) = run("list-web", json!([]));
    assert_eq!(status, 200, "list-web did not run: {reply}");
    let (status, reply) = run("list-up", json!([]));
    let message = reply["message"].as_str().unwrap_or_default();
    assert_ne!(status, 200, "list-up ran: {reply}");
    assert!(
        message.contains("sites.yaml") && message.contains("the one above"),
        "list-up: {message}"
    );
}
