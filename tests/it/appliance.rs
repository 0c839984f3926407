//! The appliance files: every board config passes `--check-config` without a
//! warning, alone and under the admin's config that starts from it, each board's polkit rule
//! allows exactly the services its config offers, the board scripts behave on fake hardware
//! tools, `scripts/install.sh` installs into a throwaway root (DESTDIR) idempotently and
//! uninstalls cleanly, `actiond-board --migrate` moves a one-file config of 0.1.0 onto the
//! layers losing nothing, and the systemd unit passes `systemd-analyze verify`. Nothing here
//! touches the machine outside temp directories.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;

use crate::harness::{BIN, TempDir, run_binary};

const BOUND: Duration = Duration::from_secs(30);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `board/<name>/` directory (one with a `config.yaml`), by name.
fn boards() -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(repo().join("board"))
        .expect("board/ exists")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("config.yaml").is_file())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    out.sort();
    assert!(
        out.len() >= 2,
        "expected the raspberry-pi and generic boards: {out:?}"
    );
    out
}

/// A board config as JSON, for looking at its actions.
fn board_config(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("config.yaml")).expect("read board config");
    serde_saphyr::from_str(&text).expect("board config is YAML")
}

fn action<'a>(config: &'a Value, id: &str) -> &'a Value {
    config["actions"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["id"] == id))
        .unwrap_or_else(|| panic!("no action {id}"))
}

#[test]
fn every_board_config_passes_check_config_without_warnings() {
    for (name, dir) in boards() {
        let path = dir.join("config.yaml");
        let run = run_binary(
            &["--check-config", path.to_str().expect("utf-8 path")],
            &dir,
            BOUND,
        );
        let all = format!("{}{}", run.stdout, run.stderr);
        assert_eq!(run.status.code(), Some(0), "{name}: {all}");
        assert!(!all.contains("warning"), "{name} config warns: {all}");
    }
}

/// The admin's config as the package writes it (board/config.yaml), in `dir`, on `board`:
/// its path.
fn admin_config(dir: &Path, board: &Path) -> PathBuf {
    let template = std::fs::read_to_string(repo().join("board/config.yaml")).expect("template");
    let line = format!("board: {}", board.join("config.yaml").display());
    let text: Vec<String> = template
        .lines()
        .map(|l| {
            if l.starts_with("board: ") {
                line.clone()
            } else {
                l.to_string()
            }
        })
        .collect();
    assert!(text.contains(&line), "no board: line in board/config.yaml");
    let path = dir.join("config.yaml");
    std::fs::write(&path, text.join("\n") + "\n").expect("write config");
    std::fs::create_dir_all(dir.join("config.d")).expect("config.d");
    path
}

#[test]
fn the_admin_config_on_each_board_passes_check_config_and_names_the_files() {
    for (name, dir) in boards() {
        let etc = TempDir::new();
        let path = admin_config(etc.path(), &dir);
        let run = run_binary(
            &["--check-config", path.to_str().expect("utf-8 path")],
            etc.path(),
            BOUND,
        );
        let all = format!("{}{}", run.stdout, run.stderr);
        assert_eq!(run.status.code(), Some(0), "{name}: {all}");
        assert!(!all.contains("warning"), "{name} config warns: {all}");
        // Which file each action is in: the board's panel has them all.
        let panel = format!("  {} (board): ", dir.join("config.yaml").display());
        assert!(all.contains(&panel), "{name}: {all}");
        assert!(all.contains("(config): no actions"), "{name}: {all}");
    }
}

#[test]
fn each_polkit_rule_allows_exactly_the_services_its_config_offers() {
    for (name, dir) in boards() {
        let rules = dir.join("polkit.rules");
        let Ok(rules) = std::fs::read_to_string(&rules) else {
            continue;
        };
        let line = rules
            .lines()
            .find(|l| l.trim_start().starts_with("var units = ["))
            .unwrap_or_else(|| panic!("{name}: no `var units = [...]` in polkit.rules"));
        let mut allowed: Vec<String> = line
            .split('"')
            .skip(1)
            .step_by(2)
            .map(|u| u.trim_end_matches(".service").to_string())
            .collect();
        let config = board_config(&dir);
        let mut offered: Vec<String> = action(&config, "restartService")["arguments"][0]["choices"]
            .as_array()
            .expect("choices")
            .iter()
            .map(|c| c["value"].as_str().expect("value").to_string())
            .collect();
        allowed.sort();
        offered.sort();
        assert_eq!(
            allowed, offered,
            "{name}: polkit units and restartService choices"
        );
    }
}

/// Runs one board action's `shell` script with `fakes` (name → script) first in PATH and
/// `env` set, the way actiond would (sh -c, argument values as upper-cased variables).
fn run_board_script(script: &str, fakes: &[(&str, &str)], env: &[(&str, &str)]) -> Output {
    let dir = TempDir::new();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).expect("bin dir");
    for (name, body) in fakes {
        let path = bin.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write fake");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let path = format!("{}:/usr/bin:/bin", bin.display());
    Command::new("/bin/sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", path)
        .env("STATE_DIRECTORY", dir.path())
        .envs(env.iter().copied())
        .output()
        .expect("run sh")
}

#[test]
fn raspberry_pi_throttling_decodes_the_firmware_bits() {
    let config = board_config(&repo().join("board/raspberry-pi"));
    let script = action(&config, "throttling")["shell"]
        .as_str()
        .expect("shell");
    let cases: &[(&str, &[&str], &[&str])] = &[
        ("0x0", &["OK: no under-voltage"], &["NOW", "since boot:"]),
        (
            "0x50005",
            &[
                "NOW: under-voltage",
                "NOW: throttled",
                "since boot: under-voltage",
                "since boot: throttling",
            ],
            &["OK", "capped", "soft temperature"],
        ),
        (
            "0x80008",
            &["NOW: soft temperature", "since boot: soft"],
            &["OK"],
        ),
    ];
    for (bits, want, not) in cases {
        let fake = format!("echo throttled={bits}");
        let out = run_board_script(script, &[("vcgencmd", &fake)], &[]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{bits}: {out:?}");
        for w in *want {
            assert!(stdout.contains(w), "{bits}: missing {w:?} in {stdout}");
        }
        for n in *not {
            assert!(!stdout.contains(n), "{bits}: unexpected {n:?} in {stdout}");
        }
    }
    let out = run_board_script(script, &[("vcgencmd", "exit 1")], &[]);
    assert!(
        !out.status.success(),
        "a failing vcgencmd must fail the action"
    );
}

#[test]
fn raspberry_pi_gpio_toggle_flips_the_line_with_pinctrl_and_with_gpioset() {
    let config = board_config(&repo().join("board/raspberry-pi"));
    let script = action(&config, "toggleGpio")["shell"]
        .as_str()
        .expect("shell");
    // A fake pinctrl that keeps each line's level in a file, printing what the real one does.
    let pinctrl = r#"f="$STATE_DIRECTORY/line$2"
case $1 in
  get) if [ "$(cat "$f" 2>/dev/null)" = dh ]; then l=hi; else l=lo; fi
       echo " $2: op dh pn | $l // GPIO$2 = output" ;;
  set) [ "$3" = op ] || exit 2; echo "$4" >"$f" ;;
esac"#;
    let dir = TempDir::new();
    let state = dir.path().to_str().expect("utf-8").to_string();
    let mut levels = Vec::new();
    for _ in 0..3 {
        let out = run_board_script(
            script,
            &[("pinctrl", pinctrl)],
            &[("PIN", "27"), ("STATE_DIRECTORY", &state)],
        );
        assert!(out.status.success(), "{out:?}");
        levels.push(String::from_utf8_lossy(&out.stdout).contains("| hi"));
    }
    assert_eq!(levels, [true, false, true]);

    // gpioset: the level is remembered in $STATE_DIRECTORY and alternates.
    let dir = TempDir::new();
    let gpioset = format!("echo \"$@\" >>{}/calls", dir.path().display());
    let state = dir.path().to_str().expect("utf-8").to_string();
    let mut said = Vec::new();
    for _ in 0..3 {
        let out = run_board_script(
            script,
            &[("gpioset", &gpioset)],
            &[("PIN", "17"), ("STATE_DIRECTORY", &state)],
        );
        assert!(out.status.success(), "{out:?}");
        said.push(String::from_utf8_lossy(&out.stdout).trim().to_string());
    }
    assert_eq!(said, ["GPIO17=1", "GPIO17=0", "GPIO17=1"]);
    let calls = std::fs::read_to_string(dir.path().join("calls")).expect("calls");
    assert_eq!(calls, "gpiochip0 17=1\ngpiochip0 17=0\ngpiochip0 17=1\n");
}

// ---------------------------------------------------------------------------------------
// install.sh

fn install(root: &Path, args: &[&str]) -> String {
    let out = Command::new("bash")
        .arg(repo().join("scripts/install.sh"))
        .args(args)
        .env("DESTDIR", root)
        .env_remove("PREFIX")
        .output()
        .expect("run install.sh");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "install.sh {args:?} failed:\n{text}");
    text
}

/// Every file under `root`: relative path → (mode, modification time).
fn tree(root: &Path) -> BTreeMap<String, (u32, i64)> {
    use std::os::unix::fs::MetadataExt;
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir") {
            let path = entry.expect("entry").path();
            let meta = std::fs::symlink_metadata(&path).expect("metadata");
            if meta.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(root).expect("under root");
                let mtime = meta.mtime() * 1_000_000_000 + meta.mtime_nsec();
                out.insert(rel.display().to_string(), (meta.mode() & 0o7777, mtime));
            }
        }
    }
    out
}

/// The user's guide `scripts/install.sh` installs beside README (its `GUIDE` line, which
/// `scripts/package-deb.sh` reads too): every page of docs/ that README links to before its
/// "For developers" part, and only those.
fn guide() -> Vec<String> {
    let script = std::fs::read_to_string(repo().join("scripts/install.sh")).expect("install.sh");
    let line = script
        .lines()
        .find_map(|l| l.strip_prefix("GUIDE=\""))
        .and_then(|l| l.strip_suffix('"'))
        .expect("a GUIDE=\"...\" line");
    let guide: BTreeSet<String> = line.split(' ').map(|p| format!("docs/{p}.md")).collect();
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let users = &readme[..readme
        .find("## For developers")
        .expect("a For developers part")];
    let linked: BTreeSet<String> = users
        .match_indices("](docs/")
        .filter_map(|(i, _)| {
            let link = &users[i + 2..];
            let link = &link[..link.find([')', '#'])?];
            link.ends_with(".md").then(|| link.to_string())
        })
        .collect();
    assert_eq!(
        guide, linked,
        "GUIDE in scripts/install.sh and README's links to docs/"
    );
    guide.into_iter().collect()
}

#[test]
fn install_sh_installs_once_changes_nothing_twice_and_uninstalls() {
    let root = TempDir::new();
    let dest = root.path().to_str().expect("utf-8");
    let args = ["--board", "raspberry-pi", "--binary", BIN];
    install(root.path(), &args);
    let first = tree(root.path());
    let modes: BTreeMap<&str, u32> = first.iter().map(|(p, (m, _))| (p.as_str(), *m)).collect();
    let mut want: BTreeMap<&str, u32> = [
        ("etc/actiond/config.yaml", 0o640),
        ("etc/polkit-1/rules.d/50-actiond.rules", 0o777),
        ("usr/lib/sysusers.d/actiond.conf", 0o644),
        ("usr/lib/sysusers.d/actiond-run.conf", 0o644),
        ("usr/lib/tmpfiles.d/actiond.conf", 0o644),
        ("usr/local/bin/actiond", 0o755),
        ("usr/local/lib/systemd/system/actiond.service", 0o644),
        (
            "usr/local/lib/systemd/system/actiond.service.d/raspberry-pi.conf",
            0o644,
        ),
        ("usr/local/share/doc/actiond/README.md", 0o644),
    ]
    .into_iter()
    .collect();
    // The user's guide beside README, so its links into docs/ resolve where it is installed.
    let guide: Vec<String> = guide()
        .iter()
        .map(|page| format!("usr/local/share/doc/actiond/{page}"))
        .collect();
    want.extend(guide.iter().map(|f| (f.as_str(), 0o644)));
    // Every board, for the config's board: line.
    let shared: Vec<String> = boards()
        .iter()
        .flat_map(|(name, dir)| {
            let mut files: Vec<String> = std::fs::read_dir(dir)
                .expect("board dir")
                .map(|e| {
                    let file = e.expect("entry").file_name();
                    format!(
                        "usr/local/share/actiond/board/{name}/{}",
                        file.to_string_lossy()
                    )
                })
                .collect();
            files.sort();
            files
        })
        .collect();
    want.extend(shared.iter().map(|f| (f.as_str(), 0o644)));
    assert_eq!(modes, want, "installed tree");
    let rule = std::fs::read_link(root.path().join("etc/polkit-1/rules.d/50-actiond.rules"))
        .expect("the rule is a link");
    assert_eq!(
        rule,
        Path::new("/usr/local/share/actiond/board/raspberry-pi/polkit.rules")
    );
    assert!(root.path().join("etc/actiond/config.d").is_dir());
    let etc = std::fs::metadata(root.path().join("etc/actiond")).expect("etc/actiond");
    // Actions (actiond-run) start in it; they cannot list it.
    assert_eq!(etc.permissions().mode() & 0o7777, 0o751);
    let sysusers = std::fs::read_to_string(root.path().join("usr/lib/sysusers.d/actiond.conf"))
        .expect("sysusers");
    assert!(sysusers.contains("u actiond "), "{sysusers}");
    assert!(sysusers.contains("m actiond gpio"), "{sysusers}");
    // Actions run as actiond-run: it is the one that needs the Pi's devices.
    assert!(sysusers.contains("m actiond-run gpio"), "{sysusers}");
    let run_users = root.path().join("usr/lib/sysusers.d/actiond-run.conf");
    let run_users = std::fs::read_to_string(run_users).expect("actiond-run's sysusers");
    assert!(run_users.contains("u actiond-run "), "{run_users}");
    let config = root.path().join("etc/actiond/config.yaml");
    let template = std::fs::read_to_string(repo().join("board/config.yaml")).expect("template");
    let on = |board: &str| {
        template.replace(
            "board: /usr/share/actiond/board/generic/config.yaml",
            &format!("board: /usr/local/share/actiond/board/{board}/config.yaml"),
        )
    };
    assert_eq!(
        std::fs::read_to_string(&config).expect("config"),
        on("raspberry-pi")
    );

    // Twice: nothing changes, not even a modification time.
    let again = install(root.path(), &args);
    assert!(again.contains("nothing to change"), "{again}");
    assert_eq!(tree(root.path()), first, "second install changed files");

    // The admin's settings survive a reinstall onto another board: only the board: line
    // changes. The board's drop-in and rule follow the board.
    let user = "    - {username: pi, usergroup: admins, password: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaA'}\n";
    let edited = on("raspberry-pi").replace("  users:\n", &format!("  users:\n{user}"));
    std::fs::write(&config, &edited).expect("edit config");
    let switched = install(root.path(), &["--board", "generic", "--binary", BIN]);
    assert!(switched.contains("set the board: line"), "{switched}");
    assert_eq!(
        std::fs::read_to_string(&config).expect("config"),
        on("generic").replace("  users:\n", &format!("  users:\n{user}"))
    );
    assert!(
        !root
            .path()
            .join("usr/local/lib/systemd/system/actiond.service.d")
            .exists()
    );
    // A config of its own (no board: line) is left as it is.
    std::fs::write(&config, "actions: []\n").expect("edit config");
    let kept = install(root.path(), &["--board", "raspberry-pi", "--binary", BIN]);
    assert!(kept.contains("kept /etc/actiond/config.yaml"), "{kept}");
    assert_eq!(
        std::fs::read_to_string(&config).expect("config"),
        "actions: []\n"
    );

    // Uninstall keeps the edited config only; --purge removes it too.
    let removed = install(root.path(), &["--uninstall"]);
    assert!(
        removed.contains("kept /etc/actiond/config.yaml"),
        "{removed}"
    );
    let left: Vec<String> = tree(root.path()).into_keys().collect();
    assert_eq!(
        left,
        ["etc/actiond/config.yaml"],
        "after --uninstall in {dest}"
    );
    install(root.path(), &["--uninstall", "--purge"]);
    assert!(tree(root.path()).is_empty(), "files left after --purge");
}

#[test]
fn install_sh_refuses_unknown_boards_and_relative_roots() {
    for (args, dest) in [
        (
            vec!["--board", "toaster", "--binary", BIN],
            "/tmp/actiond-never-created",
        ),
        (vec!["--board", "generic", "--binary", BIN], "relative/root"),
    ] {
        let out = Command::new("bash")
            .arg(repo().join("scripts/install.sh"))
            .args(&args)
            .env("DESTDIR", dest)
            .output()
            .expect("run install.sh");
        assert!(!out.status.success(), "{args:?} {dest} succeeded");
        assert!(!Path::new(dest).exists());
    }
}

#[test]
fn the_unit_and_each_board_drop_in_pass_systemd_analyze_verify() {
    // scripts/test.sh installs systemd-analyze (Debian package systemd); a missing tool fails
    // this test loudly rather than skipping it.
    let unit = std::fs::read_to_string(repo().join("systemd/actiond.service")).expect("unit");
    assert!(unit.contains("ExecStart=/usr/local/bin/actiond "), "{unit}");
    for (name, dir) in boards() {
        let tmp = TempDir::new();
        // verify checks that ExecStart exists, so point it at the binary under test.
        std::fs::write(
            tmp.path().join("actiond.service"),
            unit.replace("/usr/local/bin/actiond", BIN),
        )
        .expect("write unit");
        let dropin = dir.join("service.conf");
        if dropin.exists() {
            std::fs::create_dir(tmp.path().join("actiond.service.d")).expect("drop-in dir");
            std::fs::copy(&dropin, tmp.path().join("actiond.service.d/board.conf"))
                .expect("copy drop-in");
        }
        let out = Command::new("systemd-analyze")
            .arg("verify")
            .arg(tmp.path().join("actiond.service"))
            .env("SYSTEMD_LOG_LEVEL", "notice")
            .output()
            .expect("systemd-analyze must be installed (scripts/test.sh installs it)");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{name}: {text}");
        assert!(
            text.trim().is_empty(),
            "{name}: systemd-analyze says:\n{text}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// actiond-board --migrate: the one-file config of 0.1.0 onto the layers

/// A root as the package lays it out (`ACTIOND_ROOT` for actiond-board): the template, every
/// board and the panels of 0.1.0 under usr/share/actiond, and `config` as etc/actiond/config.yaml.
fn packaged_root(config: &str) -> TempDir {
    let root = TempDir::new();
    let share = root.path().join("usr/share/actiond");
    for (_, dir) in boards() {
        let to = share.join("board").join(dir.file_name().expect("name"));
        std::fs::create_dir_all(&to).expect("board dir");
        for entry in std::fs::read_dir(&dir).expect("board") {
            let entry = entry.expect("entry");
            std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
        }
    }
    let migrate = share.join("migrate/0.1.0");
    std::fs::create_dir_all(&migrate).expect("migrate dir");
    for entry in std::fs::read_dir(repo().join("board/migrate/0.1.0")).expect("0.1.0 panels") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), migrate.join(entry.file_name())).expect("copy");
    }
    std::fs::copy(repo().join("board/config.yaml"), share.join("config.yaml")).expect("template");
    std::fs::create_dir_all(root.path().join("etc/actiond")).expect("etc");
    std::fs::write(root.path().join("etc/actiond/config.yaml"), config).expect("config");
    root
}

/// Runs `actiond-board --migrate` on `root`, with the actiond under test on PATH.
fn migrate(root: &Path) -> String {
    let bin_dir = Path::new(BIN).parent().expect("bin dir");
    let out = Command::new("sh")
        .arg(repo().join("scripts/actiond-board"))
        .arg("--migrate")
        .env("ACTIOND_ROOT", root)
        .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
        .output()
        .expect("run actiond-board");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "actiond-board --migrate: {text}");
    text
}

/// `--check-config` of the config in `root`: exit code and output.
fn check_in(root: &Path) -> (Option<i32>, String) {
    let path = root.join("etc/actiond/config.yaml");
    let run = run_binary(
        &["--check-config", path.to_str().expect("utf-8")],
        root,
        BOUND,
    );
    (run.status.code(), format!("{}{}", run.stdout, run.stderr))
}

#[test]
fn a_one_file_config_of_0_1_0_moves_onto_the_layers_losing_nothing() {
    let old = std::fs::read_to_string(repo().join("board/migrate/0.1.0/raspberry-pi.yaml"))
        .expect("0.1.0 panel");
    // What README told a 0.1.0 user to do: a user under authLocalUsers. And a title of their
    // own, a grace period deleted, a token added.
    let user = "    - {username: ada, usergroup: admins, password: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaA'}\n";
    let edited = old
        .replace("  users:\n", &format!("  users:\n{user}"))
        .replace("pageTitle: Raspberry Pi", "pageTitle: Door Pi")
        .replace("killGracePeriod: 3\n", "")
        + "# Home Assistant's\nauthApiTokens:\n  - {name: ha, sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08, username: ha, usergroup: automation}\n";
    let root = packaged_root(&edited);
    let said = migrate(root.path());
    assert!(said.contains("moved"), "{said}");
    for key in [
        "pageTitle",
        "authLocalUsers",
        "killGracePeriod",
        "authApiTokens",
    ] {
        assert!(said.contains(key), "{key} not named in: {said}");
    }
    let etc = root.path().join("etc/actiond");
    assert_eq!(
        std::fs::read_to_string(etc.join("config.yaml.from-0.1")).expect("old kept"),
        edited
    );
    let new = std::fs::read_to_string(etc.join("config.yaml")).expect("new config");
    let board = root
        .path()
        .join("usr/share/actiond/board/raspberry-pi/config.yaml");
    assert!(
        new.contains(&format!("board: {}\n", board.display())),
        "{new}"
    );
    assert!(new.contains(user), "{new}");
    assert!(new.contains("pageTitle: Door Pi\n"), "{new}");
    assert!(new.contains("# Home Assistant's\nauthApiTokens:"), "{new}");
    assert!(new.contains("\nkillGracePeriod:"), "{new}");
    // The actions are the board's, from the package's file; the settings are the admin's.
    let (code, out) = check_in(root.path());
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("warning"), "{out}");
    assert!(
        out.contains(&format!("{} (board): temperature,", board.display())),
        "{out}"
    );
    // Once is enough: a second run changes nothing.
    let again = migrate(root.path());
    assert!(again.is_empty(), "{again}");
    assert_eq!(
        std::fs::read_to_string(etc.join("config.yaml")).expect("config"),
        new
    );
}

#[test]
fn an_untouched_0_1_0_config_becomes_the_template_and_a_changed_panel_stays_whole() {
    let old = std::fs::read_to_string(repo().join("board/migrate/0.1.0/generic.yaml"))
        .expect("0.1.0 panel");
    let root = packaged_root(&old);
    migrate(root.path());
    let template = std::fs::read_to_string(repo().join("board/config.yaml")).expect("template");
    let board = root
        .path()
        .join("usr/share/actiond/board/generic/config.yaml");
    assert_eq!(
        std::fs::read_to_string(root.path().join("etc/actiond/config.yaml")).expect("config"),
        template.replace(
            "board: /usr/share/actiond/board/generic/config.yaml",
            &format!("board: {}", board.display())
        )
    );

    // An action of the panel changed: the file is a panel of its own, and stays as it was.
    let own = old.replace("exec: [free, -h]", "exec: [free, -m]");
    let root = packaged_root(&own);
    let said = migrate(root.path());
    assert!(said.contains("kept"), "{said}");
    assert_eq!(
        std::fs::read_to_string(root.path().join("etc/actiond/config.yaml")).expect("config"),
        own
    );
    let (code, out) = check_in(root.path());
    assert_eq!(code, Some(0), "{out}");
}

/// fe30l F3: on each shipped panel, a logged-in user of group `users` (what README tells a
/// family member to have, alone or among other groups) may run a status action as a guest
/// may; a user of a group the panel names nowhere may only view, as README says.
#[test]
fn a_family_member_of_group_users_keeps_the_status_actions_on_each_board() {
    use crate::harness::Server;
    use crate::identity::{call_with, phc};
    use crate::live_permissions::login;
    for (name, dir) in boards() {
        let template = std::fs::read_to_string(repo().join("board/config.yaml")).expect("template");
        let users = "  users:\n    - {username: anna, usergroup: users, password: 'PHC_ANNA'}\n    \
                     - {username: carl, usergroup: \"cameras users\", password: 'PHC_ANNA'}\n    \
                     - {username: bob, usergroup: family, password: 'PHC_ANNA'}\n";
        let text = template
            .lines()
            .map(|l| {
                if l.starts_with("board: ") {
                    format!("board: {}", dir.join("config.yaml").display())
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
            .replace("  users:\n", users)
            .replace("PHC_ANNA", &phc("anna pw"));
        let server = Server::start_yaml(&text);
        let start = |cookie: Option<&str>, action: &str| -> String {
            let header = cookie.map(|c| format!("svc-sid-local={c}"));
            let headers: Vec<(&str, &str)> = header
                .as_deref()
                .map(|h| ("Cookie", h))
                .into_iter()
                .collect();
            let resp = call_with(
                &server,
                "StartAction",
                serde_json::json!({"actionId": action}),
                &headers,
            );
            if resp.status == 200 {
                "ok".into()
            } else {
                resp.json()["code"].as_str().unwrap_or("?").to_string()
            }
        };
        // A status action both panels have (nothing that changes the machine is pressed
        // here: a test must never reboot it).
        assert_eq!(start(None, "uptime"), "ok", "{name}: guest");
        for user in ["anna", "carl"] {
            let sid = login(&server, user, "anna pw");
            assert_eq!(start(Some(&sid), "uptime"), "ok", "{name}: {user}");
        }
        let bob = login(&server, "bob", "anna pw");
        assert_eq!(
            start(Some(&bob), "uptime"),
            "permission_denied",
            "{name}: a group no list names"
        );
    }
}
