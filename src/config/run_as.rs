//! `runActionsAs`: the user every action runs as. The setting is read here (as written,
//! else `$ACTIOND_RUN_ACTIONS_AS`, which the shipped unit sets to `actiond-run`), and
//! resolved once per load into the ids the executor's child takes before it runs the
//! command: its uid, its primary group, its supplementary groups (as `initgroups` would
//! give them) and its home. (Not `runAs`: `mqtt.runAs` names the actiond user whose presses
//! MQTT carries, a user of the config, not of the system.)
//!
//! A user that cannot be honoured is refused at load, never guessed at: a name the system
//! does not know, or another user than actiond's own while actiond lacks what switching and
//! then stopping that user's processes takes (CAP_SETUID, CAP_SETGID, CAP_KILL). Without
//! `runActionsAs`, actions run as actiond itself. This module must not switch users itself
//! (the executor's child does) and reads nothing but the user database and
//! /proc/self/status.

use std::path::PathBuf;

use super::checker::{Checker, Fields, path_or};

/// The key, and the variable that gives its default.
pub(super) const KEY: &str = "runActionsAs";
pub(super) const ENV: &str = "ACTIOND_RUN_ACTIONS_AS";

/// Who actions run as when that is not actiond's own user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunAs {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    /// Supplementary groups, the primary one included (as `initgroups` sets them).
    pub groups: Vec<u32>,
    /// Its home directory: the command's `HOME`.
    pub home: PathBuf,
}

/// `runActionsAs` as written (empty: actiond's own user), else `$ACTIOND_RUN_ACTIONS_AS`;
/// checked to be a plausible user name, so that an error names the key rather than a
/// lookup's failure.
pub(super) fn setting(c: &mut Checker<'_>, top: &Fields<'_>) -> Option<String> {
    let name = if top.written(KEY) {
        c.text(top.get(KEY)).unwrap_or_default()
    } else {
        (c.env)(ENV).unwrap_or_default()
    };
    let name = name.trim().to_string();
    if name.is_empty() {
        return None;
    }
    if !valid_name(&name) {
        c.error(
            path_or(top.get(KEY), KEY),
            format!(
                "{name:?} is not a user name (letters, digits, `_`, `-`, `.`, not starting \
                 with `-`, at most 32)"
            ),
        );
        return None;
    }
    Some(name)
}

/// A name `useradd` and `systemd-sysusers` would accept.
fn valid_name(name: &str) -> bool {
    name.len() <= 32
        && !name.starts_with('-')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
}

/// What a user database entry gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Entry {
    pub uid: u32,
    pub gid: u32,
    pub groups: Vec<u32>,
    pub home: PathBuf,
}

/// The capabilities actiond needs to run actions as another user: CAP_SETGID and CAP_SETUID
/// to become it, CAP_KILL to send its processes SIGTERM (cgroup.kill only sends SIGKILL).
const NEEDED: [(u32, &str); 3] = [(6, "CAP_SETGID"), (7, "CAP_SETUID"), (5, "CAP_KILL")];

/// Why the user of `runActionsAs` cannot be the one actions run as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unusable {
    /// No such user on this system.
    NoUser(String),
    /// actiond (uid `own_uid`) lacks the capabilities it takes to become `name` and stop
    /// its processes.
    Lacks {
        name: String,
        own_uid: u32,
        missing: Vec<&'static str>,
    },
    /// The user database could not be read for the name.
    Database(String, nix::errno::Errno),
    /// The user's groups could not be listed.
    Groups(String, nix::errno::Errno),
    /// A NUL byte in the name (the name's check refuses it before).
    Nul(std::ffi::NulError),
}

impl std::fmt::Display for Unusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unusable::NoUser(name) => write!(
                f,
                "there is no user {name:?} on this system: create it (the Debian package \
                 creates actiond-run) or remove {KEY}"
            ),
            Unusable::Lacks {
                name,
                own_uid,
                missing,
            } => write!(
                f,
                "actions cannot run as {name:?}: actiond runs as uid {own_uid} without {} \
                 (the shipped unit grants them); remove {KEY} to run actions as actiond's own \
                 user",
                missing.join(", ")
            ),
            Unusable::Database(name, e) => {
                write!(f, "cannot read the user database for {name:?}: {e}")
            }
            Unusable::Groups(name, e) => write!(f, "cannot list the groups of {name:?}: {e}"),
            Unusable::Nul(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Unusable {}

/// Who actions run as: `None` for actiond's own user (`own_uid`), or the other user; an
/// error when the name is unknown (`entry` is `None`) or actiond, with the effective
/// capabilities `caps`, cannot become it and stop its processes.
pub(super) fn decide(
    name: &str,
    entry: Option<Entry>,
    own_uid: u32,
    caps: u64,
) -> Result<Option<RunAs>, Unusable> {
    let Some(entry) = entry else {
        return Err(Unusable::NoUser(name.to_string()));
    };
    if entry.uid == own_uid {
        return Ok(None);
    }
    let missing: Vec<&str> = NEEDED
        .iter()
        .filter(|(bit, _)| caps & (1 << bit) == 0)
        .map(|(_, cap)| *cap)
        .collect();
    if !missing.is_empty() {
        return Err(Unusable::Lacks {
            name: name.to_string(),
            own_uid,
            missing,
        });
    }
    Ok(Some(RunAs {
        name: name.to_string(),
        uid: entry.uid,
        gid: entry.gid,
        groups: entry.groups,
        home: entry.home,
    }))
}

/// Which user actions run as, for the log: said once at start, and at a reload that
/// changes it.
pub fn describe(setting: Option<&str>, user: Option<&RunAs>) -> String {
    match (user, setting) {
        (Some(u), _) => format!(
            "actions run as {} (uid {}, gid {}): they cannot write actiond's state or signal it",
            u.name, u.uid, u.gid
        ),
        (None, Some(name)) => format!("actions run as actiond's own user, {name} ({KEY})"),
        (None, None) => format!(
            "actions run as actiond's own user (uid {}): no {KEY}, so they can reach \
             everything actiond can, its config too (they run in its directory unless an \
             action sets `workingDirectory`: a file a command writes there, such as a \
             download, may replace config.yaml, which actiond then loads)",
            nix::unistd::geteuid()
        ),
    }
}

/// The `CapEff:` mask of a /proc status file; none when it is missing.
fn effective_caps(status: &str) -> u64 {
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .unwrap_or(0)
}

/// Resolves `name` against the user database and this process's capabilities.
pub(super) fn resolve(name: &str) -> Result<Option<RunAs>, Unusable> {
    use nix::unistd::{User, geteuid, getgrouplist};
    let user = User::from_name(name).map_err(|e| Unusable::Database(name.to_string(), e))?;
    let entry = match user {
        Some(u) => {
            let cname = std::ffi::CString::new(name).map_err(Unusable::Nul)?;
            let groups =
                getgrouplist(&cname, u.gid).map_err(|e| Unusable::Groups(name.to_string(), e))?;
            Some(Entry {
                uid: u.uid.as_raw(),
                gid: u.gid.as_raw(),
                groups: groups.into_iter().map(|g| g.as_raw()).collect(),
                home: u.dir,
            })
        }
        None => None,
    };
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    decide(name, entry, geteuid().as_raw(), effective_caps(&status))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(uid: u32) -> Option<Entry> {
        Some(Entry {
            uid,
            gid: 900,
            groups: vec![900, 44],
            home: "/var/lib/x".into(),
        })
    }

    const ALL: u64 = (1 << 5) | (1 << 6) | (1 << 7);

    #[test]
    fn a_user_is_honoured_only_with_every_capability_it_takes() {
        let other = decide("actiond-run", entry(998), 999, ALL)
            .unwrap()
            .unwrap();
        assert_eq!((other.uid, other.gid), (998, 900));
        assert_eq!(other.groups, [900, 44]);
        // actiond's own user needs no switch, capabilities or not.
        assert_eq!(decide("actiond", entry(999), 999, 0), Ok(None));
        for (caps, named) in [
            (0, "CAP_SETGID, CAP_SETUID, CAP_KILL"),
            (ALL & !(1 << 5), "without CAP_KILL"),
            (ALL & !(1 << 7), "without CAP_SETUID"),
        ] {
            let e = decide("actiond-run", entry(998), 1000, caps)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(named) && e.contains("remove runActionsAs"),
                "{e}"
            );
        }
        let e = decide("nobody-here", None, 0, ALL).unwrap_err().to_string();
        assert!(e.contains("no user \"nobody-here\""), "{e}");
    }

    /// The refusals word for word, as the log and `--check-config` show them.
    #[test]
    fn refusals_word_for_word() {
        assert_eq!(
            decide("x", None, 0, ALL).unwrap_err().to_string(),
            "there is no user \"x\" on this system: create it (the Debian package creates \
             actiond-run) or remove runActionsAs"
        );
        assert_eq!(
            decide("x", entry(998), 1000, 1 << 7)
                .unwrap_err()
                .to_string(),
            "actions cannot run as \"x\": actiond runs as uid 1000 without CAP_SETGID, \
             CAP_KILL (the shipped unit grants them); remove runActionsAs to run actions as \
             actiond's own user"
        );
        assert_eq!(
            Unusable::Groups("x".into(), nix::errno::Errno::EIO).to_string(),
            "cannot list the groups of \"x\": EIO: I/O error"
        );
    }

    #[test]
    fn effective_capabilities_are_read_from_proc_status() {
        let status = "Name:\tx\nCapInh:\t0000000000000000\nCapEff:\t00000000000000e0\n";
        assert_eq!(effective_caps(status), 0xe0);
        assert_eq!(effective_caps("Name:\tx\n"), 0);
    }

    #[test]
    fn names_are_checked_before_any_lookup() {
        for ok in ["actiond-run", "pi", "www-data", "user.name", "_x", "1000"] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in ["-x", "a b", "a/b", "a:b", &"x".repeat(33)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn an_unknown_user_is_refused_at_resolution() {
        let e = resolve("actiond-no-such-user").unwrap_err().to_string();
        assert!(e.contains("no user"), "{e}");
    }
}
