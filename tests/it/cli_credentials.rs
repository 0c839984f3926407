//! The credential commands: `actiond hash-password` turns a password on stdin
//! into an argon2id PHC string with the project's parameters, and `actiond gen-token` prints a
//! fresh API token with the config entry that admits it. The token's hash is recomputed here,
//! and the printed password hash is checked by its PHC shape and verified with the library.
//! On a real terminal (a pseudo-terminal made here) the password typed is not echoed.

use std::time::Duration;

use crate::harness::{Finished, TempDir, run_binary_with_stdin};

/// One argon2id hash takes well under a second even in a debug build; this only stops a hang.
const BOUND: Duration = Duration::from_secs(30);

/// Runs the binary with `args` and `stdin` as its standard input, in a throwaway directory.
fn run_with_stdin(args: &[&str], stdin: &str) -> Finished {
    let dir = TempDir::new();
    run_binary_with_stdin(args, dir.path(), BOUND, Some(stdin))
}

#[test]
fn hash_password_prints_an_argon2id_hash_with_the_spec_parameters() {
    let run = run_with_stdin(&["hash-password"], "correct horse battery staple\n");
    assert_eq!(run.status.code(), Some(0), "stderr: {}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "stdout: {:?}", run.stdout);
    let phc = lines[0];
    assert!(
        phc.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
        "stdout: {phc}"
    );
    // `$argon2id$v=19$params$salt$hash`: a 16-byte salt (22 base64 digits) and a 32-byte
    // output (43 digits), both unpadded.
    let fields: Vec<&str> = phc.split('$').collect();
    assert_eq!(fields.len(), 6, "{phc}");
    assert_eq!(fields[4].len(), 22, "salt of {phc}");
    assert_eq!(fields[5].len(), 43, "hash of {phc}");
    assert!(actiond::auth::password::verify(
        "correct horse battery staple",
        phc
    ));
    assert!(!actiond::auth::password::verify("correct horse", phc));
    // The password must not be echoed anywhere.
    assert!(!run.stdout.contains("horse") && !run.stderr.contains("horse"));
}

#[test]
fn hash_password_salts_every_hash() {
    let a = run_with_stdin(&["hash-password"], "pw\n");
    let b = run_with_stdin(&["hash-password"], "pw\n");
    assert_eq!(a.status.code(), Some(0), "stderr: {}", a.stderr);
    assert_eq!(b.status.code(), Some(0), "stderr: {}", b.stderr);
    assert_ne!(a.stdout, b.stdout);
}

#[test]
fn hash_password_refuses_an_empty_password_with_exit_2() {
    for stdin in ["", "\n"] {
        let run = run_with_stdin(&["hash-password"], stdin);
        assert_eq!(
            run.status.code(),
            Some(2),
            "stdin {stdin:?}: stdout {:?}, stderr {:?}",
            run.stdout,
            run.stderr
        );
        assert_eq!(run.stdout, "", "nothing may be printed as a hash");
        assert!(!run.stderr.is_empty(), "the refusal must say why");
    }
}

#[test]
fn hash_password_on_a_terminal_does_not_echo_and_restores_the_terminal() {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    use std::sync::{Arc, Mutex};

    use nix::pty::openpty;
    use nix::sys::termios::{LocalFlags, tcgetattr};

    let dir = TempDir::new();
    let pty = openpty(None, None).expect("openpty");
    let echo_before = tcgetattr(&pty.slave).expect("tcgetattr").local_flags;
    assert!(
        echo_before.contains(LocalFlags::ECHO),
        "a new terminal echoes"
    );
    // stdin and stderr are the terminal, as when a person runs the command; stdout is a pipe.
    let child = Command::new(crate::harness::BIN)
        .arg("hash-password")
        .current_dir(dir.path())
        .stdin(Stdio::from(pty.slave.try_clone().expect("dup")))
        .stderr(Stdio::from(pty.slave.try_clone().expect("dup")))
        .stdout(Stdio::piped())
        .spawn()
        .expect("start actiond hash-password");

    // Everything the terminal shows, read as it comes; the read ends when no one holds the
    // terminal any more.
    let screen = Arc::new(Mutex::new(Vec::new()));
    let mut master = std::fs::File::from(pty.master);
    let mut reader_end = master.try_clone().expect("dup master");
    let reader = {
        let screen = Arc::clone(&screen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 256];
            while let Ok(n) = reader_end.read(&mut buf) {
                if n == 0 {
                    break;
                }
                screen.lock().expect("lock").extend_from_slice(&buf[..n]);
            }
        })
    };
    // Type only after the prompt: the command turns echo off before it prompts, and throws
    // away what was typed earlier.
    assert!(
        crate::harness::wait_until(BOUND, || String::from_utf8_lossy(
            &screen.lock().expect("lock")
        )
        .contains("password: ")),
        "no prompt on the terminal"
    );
    master
        .write_all(b"hunter2 on a terminal\n")
        .expect("type the password");
    let mut child = child;
    let mut stdout = child.stdout.take().expect("stdout pipe");
    let Some(status) = crate::harness::exited(&mut child, BOUND) else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("hash-password still running after {BOUND:?}");
    };
    let mut phc = String::new();
    stdout.read_to_string(&mut phc).expect("read the hash");
    assert_eq!(status.code(), Some(0), "stdout {phc:?}");
    let phc = phc.trim();
    assert!(
        actiond::auth::password::verify("hunter2 on a terminal", phc),
        "{phc}"
    );

    let echo_after = tcgetattr(&pty.slave).expect("tcgetattr").local_flags;
    assert!(
        echo_after.contains(LocalFlags::ECHO),
        "echo was not turned back on"
    );
    drop(pty.slave);
    reader.join().expect("reader");
    let shown = String::from_utf8_lossy(&screen.lock().expect("lock")).into_owned();
    assert!(
        !shown.contains("hunter2"),
        "the password was echoed: {shown:?}"
    );
    // The Enter is echoed, so whatever comes next starts on a new line.
    assert!(shown.contains("password: \r\n"), "{shown:?}");
}

/// Lower-case hex of 64 digits, as SHA-256 hashes and generated tokens are written.
fn is_hex64(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

#[test]
fn gen_token_prints_a_token_and_the_config_entry_with_its_sha256() {
    let run = run_with_stdin(&["gen-token"], "");
    assert_eq!(run.status.code(), Some(0), "stderr: {}", run.stderr);
    let out = &run.stdout;
    let token = out
        .lines()
        .find_map(|l| l.strip_prefix("token:"))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no token line in {out:?}"));
    let sha256 = out
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("sha256:"))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no sha256 line in {out:?}"));
    assert!(is_hex64(token), "token {token:?}");
    assert!(is_hex64(sha256), "sha256 {sha256:?}");
    assert_eq!(sha256, sha256_hex(token.as_bytes()), "the printed hash");
    assert!(out.contains("authApiTokens:"), "{out}");

    let again = run_with_stdin(&["gen-token"], "");
    assert!(
        !again.stdout.contains(token),
        "two runs printed the same token"
    );
}

/// SHA-256 straight from the crate, hex-formatted here, so the check does not go through the
/// binary's own formatting (the crate itself is pinned to the FIPS vectors in `auth::token`).
fn sha256_hex(message: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(message)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
