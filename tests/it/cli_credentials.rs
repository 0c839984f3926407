//! The credential commands (SPEC §1, §6): `actiond hash-password` turns a password on stdin
//! into an argon2id PHC string with the project's parameters, and `actiond gen-token` prints a
//! fresh API token with the config entry that admits it. The token's hash is recomputed here,
//! and the printed password hash is checked by its PHC shape and verified with the library.

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
