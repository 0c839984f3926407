//! The command line, parsed by hand (a dozen flags do not justify an argument-parsing
//! crate on a board). Pure: arguments in, a `Command` or a usage error out. It also holds the
//! pure halves of the credential commands (reading the password line, the `gen-token` text),
//! so `main` only wires stdin and stdout to them.

use std::ffi::OsString;
use std::io::BufRead;
use std::path::PathBuf;

use actiond::config::BadHostPort;

pub const USAGE: &str = "\
usage: actiond [--config PATH] [--listen HOST:PORT | --listen PORT]
       actiond --check-config PATH
       actiond hash-password        (reads a password on stdin, prints its argon2id hash)
       actiond gen-token            (prints a new API token and its config entry)
       actiond --version | --help

Without --config, actiond reads ./config.yaml, then /etc/actiond/config.yaml, and
otherwise serves its embedded demo config. A bare --listen PORT listens on every IPv4
address (0.0.0.0:PORT), like the config's default.";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Serve {
        config: Option<PathBuf>,
        listen: Option<String>,
    },
    CheckConfig(PathBuf),
    HashPassword,
    GenToken,
    Version,
    Help,
}

/// Why the command line is not one actiond takes. Its `Display` is printed before the usage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Usage {
    /// A flag that takes a value came last.
    NoValue(&'static str),
    Unknown(String),
    /// `--listen`'s value, as given, is not an address to listen on.
    Listen(String, BadHostPort),
}

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Usage::NoValue(flag) => write!(f, "{flag} needs a value"),
            Usage::Unknown(arg) => write!(f, "unknown argument {arg:?}"),
            Usage::Listen(text, why) => write!(
                f,
                "--listen {text:?}: {why}; expected PORT, HOST:PORT or [IPv6]:PORT"
            ),
        }
    }
}

impl std::error::Error for Usage {}

/// Why `hash-password` has no password. Never holds the password.
#[derive(Debug)]
pub enum NoPassword {
    Read(std::io::Error),
    Empty,
}

impl std::fmt::Display for NoPassword {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoPassword::Read(e) => write!(f, "cannot read the password from stdin: {e}"),
            NoPassword::Empty => {
                f.write_str("the password is empty; type it on stdin, followed by Enter")
            }
        }
    }
}

impl std::error::Error for NoPassword {}

pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, Usage> {
    let mut args = args.into_iter();
    let mut config = None;
    let mut listen = None;
    let value = |args: &mut dyn Iterator<Item = OsString>, flag: &'static str| {
        args.next().ok_or(Usage::NoValue(flag))
    };
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy().into_owned();
        // Accept both `--flag value` and `--flag=value`.
        let (flag, inline) = match text.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(OsString::from(v))),
            _ => (text.clone(), None),
        };
        match flag.as_str() {
            "--config" | "-c" => {
                config = Some(PathBuf::from(
                    inline.map_or_else(|| value(&mut args, "--config"), Ok)?,
                ))
            }
            "--listen" | "-l" => {
                let v = inline.map_or_else(|| value(&mut args, "--listen"), Ok)?;
                listen = Some(listen_address(&v.to_string_lossy())?);
            }
            "--check-config" => {
                let v = inline.map_or_else(|| value(&mut args, "--check-config"), Ok)?;
                return Ok(Command::CheckConfig(PathBuf::from(v)));
            }
            "hash-password" => return Ok(Command::HashPassword),
            "gen-token" => return Ok(Command::GenToken),
            "--version" | "-V" => return Ok(Command::Version),
            "--help" | "-h" => return Ok(Command::Help),
            other => return Err(Usage::Unknown(other.to_string())),
        }
    }
    Ok(Command::Serve { config, listen })
}

/// The address `--listen` asks for: `HOST:PORT` as the config writes it, or a bare port, which
/// means every IPv4 address as the config's default does (`0.0.0.0:PORT`). Checked here by the
/// config's rule, so a typo is a usage error rather than a failure to bind.
pub fn listen_address(text: &str) -> Result<String, Usage> {
    let text = text.trim();
    let address = if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        format!("0.0.0.0:{text}")
    } else {
        text.to_string()
    };
    actiond::config::check_host_port(&address)
        .map_err(|why| Usage::Listen(text.to_string(), why))?;
    Ok(address)
}

/// The password for `hash-password`: the first line of `input` without its line ending
/// (`\n` or `\r\n`). Everything after the first line is ignored. An empty password is refused:
/// it would let anyone log in as that user. Errors never contain the password.
pub fn read_password(input: &mut impl BufRead) -> Result<String, NoPassword> {
    let mut line = String::new();
    input.read_line(&mut line).map_err(NoPassword::Read)?;
    let password = line
        .strip_suffix('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .unwrap_or(&line);
    if password.is_empty() {
        return Err(NoPassword::Empty);
    }
    Ok(password.to_string())
}

/// What `gen-token` prints: the token once, and the config entry that admits it, which holds
/// only the token's SHA-256.
pub fn gen_token_text(token: &str, sha256_hex: &str) -> String {
    format!(
        "\
token:  {token}   (give this to the client, e.g. Home Assistant; it is shown only once)
config:
  authApiTokens:
    - name: home-assistant
      sha256: {sha256_hex}
      username: home-assistant
      usergroup: automation
"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Command, Usage> {
        parse(args.iter().map(OsString::from))
    }

    #[test]
    fn table() {
        assert_eq!(
            p(&[]),
            Ok(Command::Serve {
                config: None,
                listen: None
            })
        );
        assert_eq!(
            p(&["--config", "a.yaml", "--listen", "127.0.0.1:0"]),
            Ok(Command::Serve {
                config: Some("a.yaml".into()),
                listen: Some("127.0.0.1:0".into())
            })
        );
        assert_eq!(
            p(&["--config=a.yaml"]),
            Ok(Command::Serve {
                config: Some("a.yaml".into()),
                listen: None
            })
        );
        assert_eq!(
            p(&["--check-config", "x.yaml"]),
            Ok(Command::CheckConfig("x.yaml".into()))
        );
        assert_eq!(p(&["hash-password"]), Ok(Command::HashPassword));
        assert_eq!(p(&["gen-token"]), Ok(Command::GenToken));
        assert_eq!(p(&["--version"]), Ok(Command::Version));
        // The words are the ones actiond has always printed before the usage.
        for (args, want) in [
            (&["--config"][..], "--config needs a value"),
            (&["--bogus"], "unknown argument \"--bogus\""),
            (
                &["--listen", "65536"],
                "--listen \"65536\": \"65536\" is not a port number (0 to 65535); expected \
                 PORT, HOST:PORT or [IPv6]:PORT",
            ),
            (
                &["--listen=::1:80"],
                "--listen \"::1:80\": write an IPv6 address in brackets; expected PORT, \
                 HOST:PORT or [IPv6]:PORT",
            ),
        ] {
            assert_eq!(p(args).unwrap_err().to_string(), want, "{args:?}");
        }
    }

    #[test]
    fn listen_takes_a_bare_port_or_host_and_port() {
        for (given, want) in [
            ("1337", "0.0.0.0:1337"),
            ("0", "0.0.0.0:0"),
            (" 8080 ", "0.0.0.0:8080"),
            ("127.0.0.1:1337", "127.0.0.1:1337"),
            ("[::]:1337", "[::]:1337"),
            ("pi.local:80", "pi.local:80"),
        ] {
            assert_eq!(listen_address(given), Ok(want.to_string()), "{given}");
            assert_eq!(
                p(&["--listen", given]),
                Ok(Command::Serve {
                    config: None,
                    listen: Some(want.to_string())
                }),
                "{given}"
            );
        }
        assert_eq!(
            p(&["--listen=1337"]),
            Ok(Command::Serve {
                config: None,
                listen: Some("0.0.0.0:1337".to_string())
            })
        );
        for bad in [
            "",
            "65536",
            "99999999999999999999",
            ":1337",
            "host:",
            "bad host:80",
            "-1",
        ] {
            let err = listen_address(bad).unwrap_err().to_string();
            assert!(err.starts_with("--listen"), "{bad}: {err}");
            assert!(p(&["--listen", bad]).is_err(), "{bad}");
        }
    }

    fn read(input: &str) -> Result<String, String> {
        read_password(&mut input.as_bytes()).map_err(|e| e.to_string())
    }

    #[test]
    fn password_line() {
        assert_eq!(read("s3cret\n"), Ok("s3cret".to_string()));
        assert_eq!(read("s3cret\r\n"), Ok("s3cret".to_string()));
        assert_eq!(read("s3cret"), Ok("s3cret".to_string()));
        assert_eq!(
            read("two words \nsecond line\n"),
            Ok("two words ".to_string())
        );
        assert!(read("").is_err());
        assert!(read("\n").is_err());
        assert!(read("\r\n").is_err());
        let err = read("\n").unwrap_err();
        assert!(err.contains("empty"), "{err}");
    }

    #[test]
    fn gen_token_text_names_the_token_and_its_hash() {
        let text = gen_token_text("tok", "abc123");
        assert!(text.starts_with("token:  tok   (give this"), "{text}");
        assert!(text.contains("\n      sha256: abc123\n"), "{text}");
        assert!(
            text.contains("\n  authApiTokens:\n    - name: home-assistant\n"),
            "{text}"
        );
    }
}
