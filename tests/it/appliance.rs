//! The appliance files: every board config passes `--check-config` without a
//! warning, each board's polkit rule allows exactly the services its config offers, the
//! board scripts behave on fake hardware tools, `scripts/install.sh` installs into a
//! throwaway root (DESTDIR) idempotently and uninstalls cleanly, and the systemd unit passes
//! `systemd-analyze verify`. Nothing here touches the machine outside temp directories.

use std::collections::BTreeMap;
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

/// Every `board/<name>/` directory, by name.
fn boards() -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(repo().join("board"))
        .expect("board/ exists")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
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

#[test]
fn install_sh_installs_once_changes_nothing_twice_and_uninstalls() {
    let root = TempDir::new();
    let dest = root.path().to_str().expect("utf-8");
    let args = ["--board", "raspberry-pi", "--binary", BIN];
    install(root.path(), &args);
    let first = tree(root.path());
    let modes: BTreeMap<&str, u32> = first.iter().map(|(p, (m, _))| (p.as_str(), *m)).collect();
    let want: BTreeMap<&str, u32> = [
        ("etc/actiond/config.yaml", 0o640),
        ("etc/polkit-1/rules.d/50-actiond.rules", 0o644),
        ("usr/lib/sysusers.d/actiond.conf", 0o644),
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
    assert_eq!(modes, want, "installed tree");
    let etc = std::fs::metadata(root.path().join("etc/actiond")).expect("etc/actiond");
    assert_eq!(etc.permissions().mode() & 0o7777, 0o750);
    let sysusers = std::fs::read_to_string(root.path().join("usr/lib/sysusers.d/actiond.conf"))
        .expect("sysusers");
    assert!(sysusers.contains("u actiond "), "{sysusers}");
    assert!(sysusers.contains("m actiond gpio"), "{sysusers}");
    let config = root.path().join("etc/actiond/config.yaml");
    assert_eq!(
        std::fs::read(&config).expect("config"),
        std::fs::read(repo().join("board/raspberry-pi/config.yaml")).expect("board config")
    );

    // Twice: nothing changes, not even a modification time.
    let again = install(root.path(), &args);
    assert!(again.contains("nothing to change"), "{again}");
    assert_eq!(tree(root.path()), first, "second install changed files");

    // An edited config survives a reinstall, even onto another board; the board's drop-in
    // follows the board.
    std::fs::write(&config, "actions: []\n").expect("edit config");
    let switched = install(root.path(), &["--board", "generic", "--binary", BIN]);
    assert!(
        switched.contains("kept /etc/actiond/config.yaml"),
        "{switched}"
    );
    assert_eq!(
        std::fs::read_to_string(&config).expect("config"),
        "actions: []\n"
    );
    assert!(
        !root
            .path()
            .join("usr/local/lib/systemd/system/actiond.service.d")
            .exists()
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
