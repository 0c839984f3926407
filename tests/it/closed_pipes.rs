//! Every command-line output of `actiond` into a pipe whose reader has gone
//! (`actiond --check-config | head -1`): the command ends quietly with its own exit status,
//! never a panic (Rust ignores SIGPIPE, so a write gets `EPIPE`). The pipes are real: the
//! reading end is closed before the binary starts, so every write meets a gone reader, on
//! stdout and on stderr alike, and once through a real `head -1`.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use crate::harness::{BIN, TempDir, exited, to_yaml};

/// A command's outputs only; it must finish long before this.
const BOUND: Duration = Duration::from_secs(20);

/// Which of the binary's streams leads into a pipe with no reader.
#[derive(Clone, Copy, Debug)]
enum Gone {
    Stdout,
    Stderr,
}

/// Runs the binary with `gone` leading into a pipe whose reader is closed, and returns its
/// exit status and what it wrote on the other stream.
fn run_into_closed_pipe(
    args: &[&str],
    cwd: &TempDir,
    gone: Gone,
    stdin: &str,
) -> (ExitStatus, String) {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut command = Command::new(BIN);
    command
        .args(args)
        .current_dir(cwd.path())
        .stdin(Stdio::piped());
    match gone {
        Gone::Stdout => command.stdout(writer).stderr(Stdio::piped()),
        Gone::Stderr => command.stderr(writer).stdout(Stdio::piped()),
    };
    let mut child = command.spawn().expect("spawn actiond");
    {
        use std::io::Write;
        let mut input = child.stdin.take().expect("stdin");
        let _ = input.write_all(stdin.as_bytes());
    }
    let mut other = match gone {
        Gone::Stdout => Box::new(child.stderr.take().expect("stderr")) as Box<dyn Read + Send>,
        Gone::Stderr => Box::new(child.stdout.take().expect("stdout")),
    };
    let reading = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = other.read_to_string(&mut text);
        text
    });
    let Some(status) = exited(&mut child, BOUND) else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("actiond {args:?} still running after {BOUND:?}");
    };
    (status, reading.join().expect("reader"))
}

#[test]
fn every_command_line_output_ends_quietly_when_its_reader_has_gone() {
    let dir = TempDir::new();
    let valid = dir.path().join("valid.yaml");
    std::fs::write(
        &valid,
        to_yaml(&serde_json::json!({
            "actions": [{"id": "a", "title": "A", "shell": "true"}]
        })),
    )
    .expect("write config");
    let broken = dir.path().join("broken.yaml");
    std::fs::write(
        &broken,
        "actions: [{id: a, shell: true, nonsense: 1, timeout: x}]\n",
    )
    .expect("write config");
    let (valid, broken) = (valid.to_str().unwrap(), broken.to_str().unwrap());
    // (arguments, stdin, the stream whose reader is gone, exit code)
    let cases: &[(&[&str], &str, Gone, i32)] = &[
        (&["--help"], "", Gone::Stdout, 0),
        (&["--version"], "", Gone::Stdout, 0),
        (&["--check-config", valid], "", Gone::Stdout, 0),
        (&["gen-token"], "", Gone::Stdout, 0),
        (&["hash-password"], "correct horse\n", Gone::Stdout, 0),
        // What goes to stderr: an invalid config, a bad command line, a refused start, an
        // empty password.
        (&["--check-config", broken], "", Gone::Stderr, 2),
        (&["--no-such-flag"], "", Gone::Stderr, 2),
        (&["--config", "no-such-config.yaml"], "", Gone::Stderr, 2),
        (&["hash-password"], "\n", Gone::Stderr, 2),
    ];
    for (args, stdin, gone, code) in cases {
        let (status, other) = run_into_closed_pipe(args, &dir, *gone, stdin);
        assert_eq!(
            status.code(),
            Some(*code),
            "{args:?} into a closed {gone:?}: {status:?}; other stream:\n{other}"
        );
        assert!(
            !other.contains("panicked") && !other.contains("Broken pipe"),
            "{args:?} into a closed {gone:?}:\n{other}"
        );
        if let Gone::Stdout = gone {
            assert_eq!(other, "", "{args:?}: nothing to say on stderr");
        }
    }
}

#[test]
fn check_config_piped_into_head_says_nothing_on_stderr() {
    let dir = TempDir::new();
    let config = dir.path().join("config.yaml");
    // Enough lines of warnings that the pipe's reader is gone before the last is written.
    let actions: Vec<serde_json::Value> = (0..2000)
        .map(|i| serde_json::json!({"id": format!("a{i}"), "title": "A", "shell": "true", "unknownKey": 1}))
        .collect();
    std::fs::write(&config, to_yaml(&serde_json::json!({ "actions": actions })))
        .expect("write config");
    let out = Command::new("bash")
        .arg("-c")
        .arg(r#""$0" --check-config "$1" | head -1; echo "status ${PIPESTATUS[0]}""#)
        .arg(BIN)
        .arg(&config)
        .output()
        .expect("run sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("warning: "), "{stdout}");
    // The check's own verdict: the config is valid.
    assert!(stdout.ends_with("status 0\n"), "{stdout}");
}

/// The service itself logs to stderr: with its reader gone, log lines are lost, and the
/// service keeps serving (it panicked at its first line).
#[test]
fn the_service_keeps_serving_when_its_log_has_no_reader() {
    let dir = TempDir::new();
    let config = dir.path().join("config.yaml");
    std::fs::write(
        &config,
        to_yaml(&serde_json::json!({
            "actions": [{"id": "a", "title": "A", "shell": "true"}]
        })),
    )
    .expect("write config");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut child = Command::new(BIN)
        .args(["--config", config.to_str().unwrap(), "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(writer)
        .spawn()
        .expect("spawn actiond");
    let _guard = crate::harness::PidGuard(child.id() as i32);
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let ready = crate::harness::wait_until(crate::harness::SOON, || {
        std::net::TcpStream::connect(addr).is_ok() || child.try_wait().ok().flatten().is_some()
    });
    assert!(ready, "not listening");
    assert_eq!(child.try_wait().expect("try_wait"), None, "it exited");
    let answer = crate::client::Conn::open(addr).send(&crate::client::Request::get("/readyz"));
    assert_eq!(answer.status, 200);
    assert_eq!(child.try_wait().expect("try_wait"), None, "it exited");
    let _ = child.kill();
    let _ = child.wait();
}
