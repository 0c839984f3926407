//! The OliveTin compatibility corpus: configs and entity files people wrote for OliveTin,
//! read the way OliveTin reads them. The corpus is kept outside the repository (its files
//! carry their authors' licences), so these tests are ignored by a plain `cargo test`;
//! `scripts/test.sh` runs them in a stage of their own with `ACTIOND_CORPUS` set to the
//! corpus directory, and they fail, never pass, when it is unset or not there.

use std::path::PathBuf;

use crate::arguments::Argument;
use crate::config::{self, Config, Source, load};
use crate::entities::{self, EntityFile};

/// The environment variable naming the corpus directory (the one holding `olivetin-configs`).
const VAR: &str = "ACTIOND_CORPUS";

/// The corpus's `olivetin-configs` directory.
fn configs_dir() -> PathBuf {
    let Some(root) = std::env::var_os(VAR) else {
        panic!(
            "{VAR} is not set: the corpus tests need the corpus directory, which is not part of \
             the repository; its stage in scripts/test.sh finds it and sets {VAR}"
        );
    };
    let dir = PathBuf::from(root).join("olivetin-configs");
    assert!(
        dir.is_dir(),
        "{VAR} names no corpus: {} is not a directory",
        dir.display()
    );
    dir
}

/// (key, title) of every instance.
fn keys_titles(file: &EntityFile) -> Vec<(String, String)> {
    file.instances
        .iter()
        .map(|i| (i.key.clone(), i.title.clone()))
        .collect()
}

/// Corpus files with actions that actiond disables on purpose (also in the decisions of
/// docs/ARCHITECTURE.md): the file, the reason, the paths of the errors, and the phrases one
/// of which each error holds. The rest of each file loads and runs.
const DISABLED: &[(&str, &str, &[&str], &[&str])] = &[
    (
        "01-OliveTin-OliveTin-default-config",
        "action 11 hands {{ themeFolderName }} to olivetin-get-theme, a program actiond does not \
         know by its bare name, which may run an argument as a program (write its path out, or \
         set allowUnknownProgram: true on the argument, knowing it does not)",
        &["actions[11].exec"],
        &["a program actiond does not know"],
    ),
    (
        "15-hcbille-my-olivetin-config.yaml",
        "action 1 hands the url {{ book }} to audiobook-dl, a program actiond does not know: \
         a program may read a url as more than data (`make URL=…` pastes it into a recipe), so \
         the author says it does not with allowUnknownProgram: true on the argument",
        &["actions[1].shell"],
        &["a program actiond does not know"],
    ),
    (
        "09-OliveTin-OliveTin-docs-args-textarea.yaml",
        "action 0 writes a textarea's text into a file named `file`, which outlives the press \
         and which another program may read as code: only a file known to hold data (`file.txt`, \
         one under /tmp) may hold a value",
        &["actions[0].shell"],
        &["which is not known to hold data"],
    ),
    (
        "13-bnhf-OliveTin-scripts-config.yaml",
        "actions 55, 56 and 73 write {{ CUSTOM_CONFIG }} into a file through a here-document \
         (cat <<'EOF'), where no quoting can make a value safe; printf '%s\\n' \"$CUSTOM_CONFIG\" \
         > file does the same safely; action 58 runs the command line a value holds \
         ({{ CURL_COMMAND }} 2>/dev/null | …), so the value names the program",
        &[
            "actions[55].shell",
            "actions[56].shell",
            "actions[58].shell",
            "actions[73].shell",
        ],
        &[
            "a placeholder inside a here-document",
            "the program the command runs",
        ],
    ),
    (
        "19-alanbjohnston-CubeSatSim-OliveTin-config.yaml",
        "action 19 is `sudo {{ params }}`: the value names the program sudo runs as root",
        &["actions[19].shell"],
        &["the program the command runs"],
    ),
];

/// Every config in the shared corpus: the top-level `*.yaml` files (not the entity files
/// beside them) and each folder's `config.yaml`.
fn configs() -> Vec<PathBuf> {
    let mut configs = Vec::new();
    let dir = configs_dir();
    let entries =
        std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("corpus at {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("corpus entry").path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if path.is_dir() {
            configs.push(path.join("config.yaml"));
        } else if name.ends_with(".yaml") && !name.contains(".entity-") {
            configs.push(path);
        }
    }
    configs.sort();
    configs
}

fn config_of(name: &str) -> Config {
    let path = configs_dir().join(name);
    load(&Source::File(path))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .config
}

fn argument<'c>(config: &'c Config, action: &str, name: &str) -> &'c Argument {
    let action = config
        .actions
        .iter()
        .find(|a| a.title == action)
        .unwrap_or_else(|| panic!("action {action}"));
    action
        .arguments
        .iter()
        .find(|a| a.name == name)
        .unwrap_or_else(|| panic!("argument {name}"))
}

/// The scalar rules the corpus README calls out: YAML 1.2 (`On` and `2:30` stay text) and
/// OliveTin's coercion of numbers and booleans into text.
#[test]
#[ignore = "needs the corpus: scripts/test.sh's corpus stage runs it"]
fn config_values_read_as_olivetin_reads_them() {
    // File 13 loads with four actions disabled (see DISABLED); its values are read all the
    // same.
    let channels = config_of("13-bnhf-OliveTin-scripts-config.yaml");
    let comskip = channels
        .actions
        .iter()
        .flat_map(|a| &a.arguments)
        .find(|arg| arg.choices.iter().any(|c| c.value == "DELETE"))
        .expect("the comskip argument");
    let titles: Vec<&str> = comskip.choices.iter().map(|c| c.title.as_str()).collect();
    assert_eq!(titles, vec!["Off", "On"]);
    let refresh = channels
        .actions
        .iter()
        .flat_map(|a| &a.arguments)
        .find(|arg| arg.name == "AUTO_REFRESH_TIME")
        .expect("AUTO_REFRESH_TIME");
    assert_eq!(refresh.default.as_deref(), Some("2:30"));
    let healthcheck = argument(
        &channels,
        "OliveTin Post-Install Healthcheck",
        "extended_check",
    );
    let values: Vec<&str> = healthcheck
        .choices
        .iter()
        .map(|c| c.value.as_str())
        .collect();
    assert_eq!(values, vec!["1", "0"]);

    let terraria = config_of("16-mbhatip-homelab-olivetin.yaml");
    assert_eq!(
        argument(&terraria, "Make new Terraria World", "port")
            .default
            .as_deref(),
        Some("7777")
    );

    let checkbox = config_of("07-OliveTin-OliveTin-it-checkbox.yaml");
    assert_eq!(
        argument(&checkbox, "Test checkbox argument", "confirm")
            .default
            .as_deref(),
        Some("0")
    );

    let suggestions = config_of("08-OliveTin-OliveTin-docs-args-suggestions.yaml");
    let container = argument(&suggestions, "Restart Docker Container", "container");
    assert_eq!(
        container.suggestions[0],
        ("plex".to_string(), String::new())
    );
    assert_eq!(
        container.suggestions[3],
        ("wifi-controller".to_string(), "WiFi Controller".to_string())
    );

    let textarea = config_of("09-OliveTin-OliveTin-docs-args-textarea.yaml");
    assert_eq!(
        argument(&textarea, "Save text to file", "content")
            .default
            .as_deref(),
        Some("Line one of the message\nLine two of the message\n")
    );

    let docker = config_of("17-nicholaswilde-docker-olivetin-root-defaults-config.yaml");
    assert_eq!(docker.listen_address, "0.0.0.0:1337");

    let dashboards = config_of("03-OliveTin-OliveTin-it-multi-dashboard-includes/config.yaml");
    let titles: Vec<&str> = dashboards
        .actions
        .iter()
        .map(|a| a.title.as_str())
        .collect();
    assert_eq!(
        titles,
        vec![
            "Base Action",
            "First Action",
            "Second Action",
            "Third Action",
            "Fourth Action",
            "Greet {{ person.name }}"
        ]
    );
    assert_eq!(dashboards.actions[5].entity.as_deref(), Some("person"));
    assert_eq!(dashboards.entities[0].name, "person");
}

#[test]
#[ignore = "needs the corpus: scripts/test.sh's corpus stage runs it"]
fn every_config_loads() {
    let configs = configs();
    assert_eq!(configs.len(), 20, "{configs:#?}");
    let mut failures = Vec::new();
    for path in &configs {
        let name = path
            .strip_prefix(configs_dir())
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let expected: &[&str] = DISABLED
            .iter()
            .find(|(file, ..)| name.starts_with(file))
            .map_or(&[], |(_, _, paths, _)| paths);
        let needles: &[&str] = DISABLED
            .iter()
            .find(|(file, ..)| name.starts_with(file))
            .map_or(&[], |(.., needles)| needles);
        match load(&Source::File(path.clone())) {
            Ok(loaded) => {
                assert!(!loaded.config.actions.is_empty(), "{name} has no actions");
                for w in &loaded.warnings {
                    println!("{name}: warning: {w}");
                }
                let errors = loaded.config.action_errors();
                for e in &errors {
                    println!("{name}: disabled: {e}");
                }
                let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
                if paths != expected {
                    failures.push(format!(
                        "{name}: disabled actions at {paths:?}, expected {expected:?}"
                    ));
                }
                if let Some(e) = errors
                    .iter()
                    .find(|e| !needles.iter().any(|n| e.message.contains(n)))
                {
                    failures.push(format!("{name} is disabled for another reason: {e}"));
                }
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every entity file of the corpus: `*/entities/*` and the `*.entity-*.yaml` files.
fn entity_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let entries = std::fs::read_dir(configs_dir()).expect("the corpus's configs");
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        if path.is_dir() {
            if let Ok(inner) = std::fs::read_dir(path.join("entities")) {
                files.extend(inner.flatten().map(|e| e.path()));
            }
        } else if name.contains(".entity-") {
            files.push(path);
        }
    }
    files.sort();
    files
}

#[test]
#[ignore = "needs the corpus: scripts/test.sh's corpus stage runs it"]
fn every_entity_file_loads() {
    let files = entity_files();
    assert!(files.len() >= 6, "{files:?}");
    for path in &files {
        let file = entities::load(path).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            !file.instances.is_empty() && file.warnings.is_empty(),
            "{}: {file:?}",
            path.display()
        );
    }
}

#[test]
#[ignore = "needs the corpus: scripts/test.sh's corpus stage runs it"]
fn entities_read_as_olivetin_reads_them() {
    let dir = |d: &str| configs_dir().join(d).join("entities");
    let servers = entities::load(&dir("01-OliveTin-OliveTin-default-config").join("servers.yaml"))
        .expect("servers.yaml");
    assert_eq!(
        keys_titles(&servers),
        [("0", "server1"), ("1", "server2"), ("2", "server3")]
            .map(|(k, t)| (k.to_string(), t.to_string()))
    );
    assert_eq!(
        servers.instances[2].field("ip").as_deref(),
        Some("192.168.0.3")
    );

    // docker ps output: `ID` is both key and title, as OliveTin titles it.
    let containers =
        entities::load(&dir("01-OliveTin-OliveTin-default-config").join("containers.json"))
            .expect("containers.json");
    assert_eq!(
        keys_titles(&containers),
        [
            ("4bafe6f9f956", "4bafe6f9f956"),
            ("d25f37c49c35", "d25f37c49c35")
        ]
        .map(|(k, t)| (k.to_string(), t.to_string()))
    );
    assert_eq!(
        containers.instances[0].field("Command").as_deref(),
        Some("\"/opt/entrypoint.sh\"")
    );

    // Long integers must not come out as 1.23456789e+09 (OliveTin once printed them so).
    let rows = entities::load(&dir("12-OliveTin-OliveTin-it-entity-long-ints").join("data.json"))
        .expect("data.json");
    let vals: Vec<String> = rows
        .instances
        .iter()
        .filter_map(|i| i.field("val"))
        .collect();
    assert_eq!(
        vals,
        ["1234567890", "123456", "1234567", "1.234567", "1.23456789"]
    );
}

#[test]
#[ignore = "needs the corpus: scripts/test.sh's corpus stage runs it"]
fn configs_load_their_declared_entities() {
    let mut checked = 0;
    let mut fed = 0;
    // The folders carry their entity files; the single files name paths on their authors'
    // machines.
    for path in configs().into_iter().filter(|p| p.ends_with("config.yaml")) {
        let Ok(loaded) = config::load(&Source::File(path.clone())) else {
            continue;
        };
        let sources = &loaded.config.entities;
        if sources.is_empty() {
            continue;
        }
        let set = entities::load_all(sources);
        assert_eq!(set.errors, [], "{}", path.display());
        for source in sources {
            assert!(
                !set.set.instances(&source.name).is_empty(),
                "{}: {}",
                path.display(),
                source.name
            );
        }
        // Entity-fed arguments get one rendered choice per instance.
        let setup = crate::engine::Setup::new(std::sync::Arc::new(loaded.config), set.set.into());
        for b in setup.bindings() {
            for a in b.action.arguments.iter().filter(|a| a.entity.is_some()) {
                fed += 1;
                assert!(!a.choices.is_empty(), "{}: {}", b.id, a.name);
                assert!(
                    a.choices.iter().all(|c| !c.value.contains("{{")),
                    "{}: {:?}",
                    b.id,
                    a.choices
                );
            }
        }
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} configs declare entities");
    assert!(fed >= 1, "no entity-fed argument was rendered");
}
