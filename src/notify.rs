//! Telling systemd how the service is doing (the sd_notify protocol): `READY=1` once
//! the listener is bound, `WATCHDOG=1` at half the `WatchdogSec` interval for as long as the
//! event loop turns, and `STOPPING=1` when a stop signal arrives. Each message is one datagram
//! to the Unix socket named by `$NOTIFY_SOCKET` (a path, or an abstract name written with a
//! leading `@`). Without that variable, as when actiond runs outside systemd, every call here
//! does nothing.
//!
//! It owns only that socket and its messages. It must not decide when the service is ready or
//! stopping (main says so) and must never block the event loop: the socket is non-blocking and
//! a message systemd cannot take is dropped, as sd_notify itself would do.

use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::sync::Arc;
use std::time::Duration;

use tracing::{debug, info, warn};

/// Where `$NOTIFY_SOCKET` points, read without touching the system.
#[derive(Debug, PartialEq, Eq)]
pub enum Socket<'a> {
    /// A socket file (the usual `/run/systemd/notify`).
    Path(&'a str),
    /// A name in the abstract namespace, given without the leading `@`.
    Abstract(&'a str),
}

/// Reads the value of `$NOTIFY_SOCKET`. Empty means "not under systemd"; anything that is
/// neither an absolute path nor `@name` is refused, as libsystemd refuses it.
pub fn parse_socket(value: &str) -> Result<Option<Socket<'_>>, &'static str> {
    if value.is_empty() {
        Ok(None)
    } else if let Some(name) = value.strip_prefix('@') {
        if name.is_empty() {
            Err("an abstract socket needs a name after '@'")
        } else {
            Ok(Some(Socket::Abstract(name)))
        }
    } else if value.starts_with('/') {
        Ok(Some(Socket::Path(value)))
    } else {
        Err("neither an absolute path nor an @abstract name")
    }
}

/// How often to send `WATCHDOG=1`: half of `$WATCHDOG_USEC`, as systemd recommends, so one late
/// ping never trips the watchdog. `None` when the watchdog is off, when the value is not a
/// positive number of microseconds, or when `$WATCHDOG_PID` names another process (the
/// variables were meant for a parent that started actiond, not for actiond).
pub fn watchdog_interval(usec: Option<&str>, pid: Option<&str>, own_pid: u32) -> Option<Duration> {
    if let Some(pid) = pid.filter(|p| !p.is_empty())
        && pid.parse::<u32>().ok() != Some(own_pid)
    {
        return None;
    }
    let usec: u64 = usec?.trim().parse().ok().filter(|&u| u > 0)?;
    // Never spin: a pathological `WatchdogSec` of a few microseconds still leaves the loop
    // time for other work.
    Some(Duration::from_micros(usec / 2).max(Duration::from_millis(1)))
}

/// The socket to systemd, when there is one.
pub struct Notifier {
    socket: UnixDatagram,
    address: SocketAddr,
}

impl Notifier {
    /// Opens a socket for `$NOTIFY_SOCKET`; `None` (with a warning when the variable is set but
    /// unusable) when there is nowhere to send.
    pub fn from_env() -> Option<Notifier> {
        let value = std::env::var("NOTIFY_SOCKET").ok()?;
        let target = match parse_socket(&value) {
            Ok(target) => target?,
            Err(why) => {
                warn!("NOTIFY_SOCKET={value:?} ignored: {why}");
                return None;
            }
        };
        match Notifier::open(&target) {
            Ok(n) => Some(n),
            Err(e) => {
                warn!("NOTIFY_SOCKET={value:?} ignored: {e}");
                None
            }
        }
    }

    fn open(target: &Socket<'_>) -> std::io::Result<Notifier> {
        let address = match target {
            Socket::Path(path) => SocketAddr::from_pathname(path)?,
            Socket::Abstract(name) => {
                use std::os::linux::net::SocketAddrExt;
                SocketAddr::from_abstract_name(name.as_bytes())?
            }
        };
        let socket = UnixDatagram::unbound()?;
        socket.set_nonblocking(true)?;
        Ok(Notifier { socket, address })
    }

    /// Sends one message (newline-separated `KEY=VALUE` lines). A failure is only logged: the
    /// service works the same whether systemd heard it or not.
    pub fn send(&self, message: &str) {
        if let Err(e) = self.socket.send_to_addr(message.as_bytes(), &self.address) {
            debug!("sd_notify {message:?} not sent: {e}");
        }
    }
}

/// The service's side of the conversation with systemd, started once the listener is bound.
#[derive(Clone, Default)]
pub struct Systemd {
    notifier: Option<Arc<Notifier>>,
}

impl Systemd {
    /// Sends `READY=1` with `status` and, when systemd set a watchdog for this process, starts
    /// pinging it from a task on the current runtime. That task runs only while the event loop
    /// turns, so a wedged loop stops the pings and systemd restarts the service. Must be called
    /// inside the tokio runtime.
    pub fn ready(status: &str) -> Systemd {
        let Some(notifier) = Notifier::from_env().map(Arc::new) else {
            return Systemd::default();
        };
        notifier.send(&format!("READY=1\nSTATUS={status}"));
        let interval = watchdog_interval(
            std::env::var("WATCHDOG_USEC").ok().as_deref(),
            std::env::var("WATCHDOG_PID").ok().as_deref(),
            std::process::id(),
        );
        match interval {
            Some(every) => {
                info!(
                    "systemd: ready; watchdog ping every {} ms",
                    every.as_millis()
                );
                let pinger = Arc::clone(&notifier);
                tokio::spawn(async move {
                    let mut tick = tokio::time::interval(every);
                    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                    loop {
                        tick.tick().await;
                        pinger.send("WATCHDOG=1");
                    }
                });
            }
            None => info!("systemd: ready"),
        }
        Systemd {
            notifier: Some(notifier),
        }
    }

    /// Tells systemd the service is shutting down, so it neither expects pings nor mistakes
    /// the stop for a crash.
    pub fn stopping(&self) {
        if let Some(n) = &self.notifier {
            n.send("STOPPING=1\nSTATUS=stopping");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_values() {
        let cases: &[(&str, Result<Option<Socket<'_>>, ()>)] = &[
            ("", Ok(None)),
            (
                "/run/systemd/notify",
                Ok(Some(Socket::Path("/run/systemd/notify"))),
            ),
            ("@sd-notify/1", Ok(Some(Socket::Abstract("sd-notify/1")))),
            ("@", Err(())),
            ("relative/path", Err(())),
            ("notify", Err(())),
        ];
        for (value, want) in cases {
            assert_eq!(parse_socket(value).map_err(|_| ()), *want, "{value:?}");
        }
    }

    #[test]
    fn watchdog_intervals() {
        let ms = |n| Some(Duration::from_millis(n));
        let cases: &[(Option<&str>, Option<&str>, Option<Duration>)] = &[
            (None, None, None),
            (Some("30000000"), None, ms(15_000)),
            (Some("30000000"), Some("42"), ms(15_000)),
            (Some("30000000"), Some(""), ms(15_000)),
            (Some("30000000"), Some("43"), None),
            (Some("30000000"), Some("x"), None),
            (Some("0"), None, None),
            (Some("-5"), None, None),
            (Some("abc"), None, None),
            (Some(""), None, None),
            (Some("200000"), None, ms(100)),
            (Some("3"), None, ms(1)),
            (
                Some("18446744073709551615"),
                None,
                Some(Duration::from_micros(u64::MAX / 2)),
            ),
        ];
        for (usec, pid, want) in cases {
            assert_eq!(
                watchdog_interval(*usec, *pid, 42),
                *want,
                "{usec:?} {pid:?}"
            );
        }
    }

    #[test]
    fn sends_to_a_path_and_to_an_abstract_name() {
        let dir = std::env::temp_dir().join(format!("actiond-notify-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        let path = dir.join("notify");
        let listener = UnixDatagram::bind(&path).unwrap();
        let n = Notifier::open(&Socket::Path(path.to_str().unwrap())).unwrap();
        n.send("READY=1");
        let mut buf = [0u8; 64];
        let len = listener.recv(&mut buf).unwrap();
        assert_eq!(&buf[..len], b"READY=1");

        use std::os::linux::net::SocketAddrExt;
        let name = format!("actiond-notify-unit-{}", std::process::id());
        let abs = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let listener = UnixDatagram::bind_addr(&abs).unwrap();
        let n = Notifier::open(&Socket::Abstract(&name)).unwrap();
        n.send("WATCHDOG=1");
        let len = listener.recv(&mut buf).unwrap();
        assert_eq!(&buf[..len], b"WATCHDOG=1");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
