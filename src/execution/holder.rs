//! Whose run an execution is, as the history and the pool of running executions share
//! themselves out among callers: a caller who logged in by user name, the guest by the
//! network it called from (`config::Network`, the key every share of actiond counts clients
//! by: an IPv4 address, an IPv6 /64), MQTT's presses and each trigger as callers of their
//! own. The history file keeps it as text on every line, so the history's share survives a
//! compaction and a restart; a line written before it was kept is read by its user. Pure:
//! it identifies nobody (the engine names the holder of a start from its caller).

use std::fmt;

use crate::config::Network;

/// Whose run an execution is: who gives way first when the history or the pool is full.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Holder {
    /// A caller who logged in (a session, an API token, a trusted proxy's header), by user
    /// name: one person, from whatever address.
    User(String),
    /// The guest, by the network it called from (a trusted proxy's, for guests it carries).
    /// `None`: not known (a run of a history file written before the network was kept).
    Guest(Option<Network>),
    /// Presses over MQTT (the `runAs` caller): every client of the broker.
    Mqtt,
    /// A trigger, by its system user (`startup`, `cron`, `fileindir`).
    Trigger(String),
}

impl Holder {
    pub fn is_guest(&self) -> bool {
        matches!(self, Holder::Guest(_))
    }

    /// The holder of a history line: its `holder` text, or for a line written before that
    /// was kept (or with text this version does not read), its user's: the guest is then one
    /// holder, of no known network, and anyone else a user by name.
    pub fn of_line(text: &str, user: &str, user_class: &str) -> Holder {
        Holder::parse(text).unwrap_or_else(|| {
            if user == "guest" && user_class == "guest" {
                Holder::Guest(None)
            } else {
                Holder::User(user.to_string())
            }
        })
    }

    /// Reads what [`Display`](fmt::Display) writes.
    fn parse(text: &str) -> Option<Holder> {
        if text == "mqtt" {
            return Some(Holder::Mqtt);
        }
        let (kind, rest) = text.split_once(':')?;
        match kind {
            "user" => Some(Holder::User(rest.to_string())),
            "trigger" => Some(Holder::Trigger(rest.to_string())),
            "guest" if rest.is_empty() => Some(Holder::Guest(None)),
            "guest" => Network::parse(rest).map(|n| Holder::Guest(Some(n))),
            _ => None,
        }
    }
}

/// How the history file keeps it: `user:alice`, `guest:192.168.1.20`,
/// `guest:2001:db8:0:1::/64`, `guest:` (no network known), `mqtt`, `trigger:cron`.
impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Holder::User(name) => write!(f, "user:{name}"),
            Holder::Guest(Some(network)) => write!(f, "guest:{network}"),
            Holder::Guest(None) => f.write_str("guest:"),
            Holder::Mqtt => f.write_str("mqtt"),
            Holder::Trigger(name) => write!(f, "trigger:{name}"),
        }
    }
}

/// Written as its text, without a copy.
impl serde::Serialize for Holder {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_holder_is_written_and_read_back() {
        let v6 = Network::of("2001:db8:0:1::9".parse().unwrap());
        let v4 = Network::of("192.168.1.20".parse().unwrap());
        // (holder, as written)
        let cases = [
            (Holder::User("alice".into()), "user:alice"),
            (Holder::User("a:b c".into()), "user:a:b c"),
            (Holder::Guest(Some(v4)), "guest:192.168.1.20"),
            (Holder::Guest(Some(v6)), "guest:2001:db8:0:1::/64"),
            (Holder::Guest(None), "guest:"),
            (Holder::Mqtt, "mqtt"),
            (Holder::Trigger("cron".into()), "trigger:cron"),
        ];
        for (holder, written) in cases {
            assert_eq!(holder.to_string(), written);
            assert_eq!(Holder::of_line(written, "x", "y"), holder, "{written}");
            assert_eq!(
                serde_json::to_string(&holder).unwrap(),
                format!("\"{written}\"")
            );
        }
    }

    #[test]
    fn a_line_without_a_holder_is_its_users() {
        // (holder text, user, user class) -> holder
        let cases = [
            (("", "guest", "guest"), Holder::Guest(None)),
            (("", "alice", "admins"), Holder::User("alice".into())),
            (("", "cron", "system"), Holder::User("cron".into())),
            // A group named guest is not the guest.
            (("", "bob", "guest"), Holder::User("bob".into())),
            // Text this version does not read: as if there were none.
            (("robot:x", "guest", "guest"), Holder::Guest(None)),
            (
                ("guest:not-an-address", "carol", "users"),
                Holder::User("carol".into()),
            ),
        ];
        for ((text, user, class), want) in cases {
            assert_eq!(Holder::of_line(text, user, class), want, "{text} {user}");
        }
    }
}
