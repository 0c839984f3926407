//! The command line, parsed by hand (a dozen flags do not justify an argument-parsing
//! crate on a board). Pure: arguments in, a `Command` or a usage error out.

use std::ffi::OsString;
use std::path::PathBuf;

pub const USAGE: &str = "\
usage: actiond [--config PATH] [--listen HOST:PORT]
       actiond --check-config PATH
       actiond hash-password        (reads a password on stdin)
       actiond --version | --help

Without --config, actiond reads ./config.yaml, then /etc/actiond/config.yaml, and
otherwise serves its embedded demo config.";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Serve {
        config: Option<PathBuf>,
        listen: Option<String>,
    },
    CheckConfig(PathBuf),
    HashPassword,
    Version,
    Help,
}

pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, String> {
    let mut args = args.into_iter();
    let mut config = None;
    let mut listen = None;
    let value = |args: &mut dyn Iterator<Item = OsString>, flag: &str| {
        args.next().ok_or_else(|| format!("{flag} needs a value"))
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
                listen = Some(v.to_string_lossy().into_owned());
            }
            "--check-config" => {
                let v = inline.map_or_else(|| value(&mut args, "--check-config"), Ok)?;
                return Ok(Command::CheckConfig(PathBuf::from(v)));
            }
            "hash-password" => return Ok(Command::HashPassword),
            "--version" | "-V" => return Ok(Command::Version),
            "--help" | "-h" => return Ok(Command::Help),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Command::Serve { config, listen })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Command, String> {
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
        assert_eq!(p(&["--version"]), Ok(Command::Version));
        assert!(p(&["--config"]).is_err());
        assert!(p(&["--bogus"]).is_err());
    }
}
