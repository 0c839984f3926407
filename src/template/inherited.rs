//! Which variables a command's shell may have received from its environment, where a plain
//! assignment (`PATH=/srv/{{ dir }}:/usr/bin; mytool`, `HOME=/srv/{{ p }}; git status`) keeps
//! the name exported, so the value reaches every program the command starts as its settings,
//! as surely as `export NAME=…` or `NAME=… cmd`. actiond hands each command its own whole
//! environment (`executor`) plus its `ACTIOND_*` variables, and what that holds depends on how
//! it runs (a systemd unit sets `HOME`, `LANG`, `INVOCATION_ID`, …; a shell, a container or a
//! test harness sets others), so no list of names is complete. The rule follows the
//! convention POSIX sets for names: the environment's are upper case (`PATH`, `HOME`,
//! `SSL_CERT_FILE`), a script's own are lower case (`d=/srv/{{ app }}`); and the lower-case
//! names that programs do read from the environment (the proxy settings) are listed. Pure.

/// The lower-case names programs read from their environment.
const LOWER: &[&[u8]] = &[
    b"http_proxy",
    b"https_proxy",
    b"ftp_proxy",
    b"no_proxy",
    b"all_proxy",
];

/// Whether `name` may be in the environment the command's shell starts with: an upper-case
/// name (letters, digits, `_`, at least one letter), or one of `LOWER`.
pub fn inherited(name: &[u8]) -> bool {
    let upper = name
        .iter()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_')
        && name.iter().any(u8::is_ascii_uppercase);
    upper || LOWER.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upper_case_names_and_the_proxy_settings_are_inherited() {
        for name in [
            "PATH",
            "HOME",
            "LD_LIBRARY_PATH",
            "SSL_CERT_FILE",
            "X1",
            "http_proxy",
        ] {
            assert!(inherited(name.as_bytes()), "{name}");
        }
        for name in ["d", "dir", "Path", "my_HOME", "_", "_1", "x1"] {
            assert!(!inherited(name.as_bytes()), "{name}");
        }
    }
}
