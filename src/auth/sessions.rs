//! Local-login sessions (SPEC §6.2): a random UUIDv4 per login, valid for 31556952 s, revoked
//! by Logout. A session remembers a fingerprint (SHA-256) of the user's password hash as it
//! was at login, so removing the user from the config or changing their password hash ends
//! every session of theirs at the next lookup, with no bookkeeping at reload. The table is
//! bounded and serializes to a small versioned JSON document that the store writes; this
//! module itself does no I/O.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::token::sha256_hex;

/// Seconds a session lives (the seed's cookie lifetime).
pub const LIFETIME_SECS: u64 = 31_556_952;

/// Sessions kept at most; beyond, the one expiring first is dropped.
pub const MAX_SESSIONS: usize = 4096;

/// The store's file name for sessions.
pub const FILE: &str = "sessions.json";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    pub username: String,
    /// SHA-256 of the user's password hash at login.
    pub password_fingerprint: String,
    /// Unix seconds.
    pub expires: u64,
}

/// The fingerprint of a stored password hash.
pub fn fingerprint(phc: &str) -> String {
    sha256_hex(phc)
}

#[derive(Debug, Default)]
pub struct Sessions {
    map: HashMap<String, Session>,
}

#[derive(Serialize, Deserialize)]
struct File {
    version: u32,
    sessions: HashMap<String, Session>,
}

impl Sessions {
    /// Starts a session and returns its id.
    pub fn create(&mut self, username: &str, phc: &str, now: u64) -> String {
        if self.map.len() >= MAX_SESSIONS {
            self.map.retain(|_, s| s.expires > now);
            if self.map.len() >= MAX_SESSIONS {
                let first = self
                    .map
                    .iter()
                    .min_by_key(|(_, s)| s.expires)
                    .map(|(k, _)| k.clone());
                if let Some(k) = first {
                    self.map.remove(&k);
                }
            }
        }
        let sid = uuid::Uuid::new_v4().to_string();
        self.map.insert(
            sid.clone(),
            Session {
                username: username.to_string(),
                password_fingerprint: fingerprint(phc),
                expires: now.saturating_add(LIFETIME_SECS),
            },
        );
        sid
    }

    /// The session `sid` if it is unexpired and still belongs to a user whose current
    /// password hash is `current_phc(username)`.
    pub fn lookup(
        &self,
        sid: &str,
        now: u64,
        current_phc: impl Fn(&str) -> Option<String>,
    ) -> Option<&Session> {
        let s = self.map.get(sid)?;
        if s.expires <= now {
            return None;
        }
        let phc = current_phc(&s.username)?;
        (fingerprint(&phc) == s.password_fingerprint).then_some(s)
    }

    /// Ends a session; true when it existed.
    pub fn revoke(&mut self, sid: &str) -> bool {
        self.map.remove(sid).is_some()
    }

    /// Drops expired sessions and those whose user or password hash changed; true when
    /// anything was dropped (the caller then saves).
    pub fn prune(&mut self, now: u64, current_phc: impl Fn(&str) -> Option<String>) -> bool {
        let before = self.map.len();
        self.map.retain(|_, s| {
            s.expires > now
                && current_phc(&s.username)
                    .is_some_and(|phc| fingerprint(&phc) == s.password_fingerprint)
        });
        self.map.len() != before
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let file = File {
            version: 1,
            sessions: self.map.clone(),
        };
        serde_json::to_vec(&file).unwrap_or_default()
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Sessions, String> {
        let file: File = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if file.version != 1 {
            return Err(format!("unknown sessions file version {}", file.version));
        }
        let mut map = file.sessions;
        // Ids are UUIDs; anything else in the file is not ours.
        map.retain(|sid, _| uuid::Uuid::parse_str(sid).is_ok());
        Ok(Sessions { map })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phc_of(user: &str) -> Option<String> {
        match user {
            "alice" => Some("$argon2id$alice".into()),
            _ => None,
        }
    }

    #[test]
    fn a_session_lives_until_expiry_and_logout() {
        let mut s = Sessions::default();
        let sid = s.create("alice", "$argon2id$alice", 1000);
        assert_eq!(uuid::Uuid::parse_str(&sid).unwrap().get_version_num(), 4);
        assert_eq!(s.lookup(&sid, 1000, phc_of).unwrap().username, "alice");
        assert!(s.lookup(&sid, 1000 + LIFETIME_SECS - 1, phc_of).is_some());
        assert!(s.lookup(&sid, 1000 + LIFETIME_SECS, phc_of).is_none());
        assert!(s.revoke(&sid));
        assert!(s.lookup(&sid, 1000, phc_of).is_none());
        assert!(!s.revoke(&sid));
    }

    #[test]
    fn removed_users_and_changed_hashes_end_sessions() {
        let mut s = Sessions::default();
        let sid = s.create("alice", "$argon2id$alice", 0);
        assert!(s.lookup(&sid, 1, |_| None).is_none(), "user removed");
        assert!(
            s.lookup(&sid, 1, |_| Some("$argon2id$new".into()))
                .is_none(),
            "hash changed"
        );
        assert!(s.prune(1, |_| None));
        assert!(s.map.is_empty());
    }

    #[test]
    fn round_trips_through_bytes() {
        let mut s = Sessions::default();
        let sid = s.create("alice", "$argon2id$alice", 5);
        let back = Sessions::from_bytes(&s.to_bytes()).unwrap();
        assert_eq!(back.lookup(&sid, 6, phc_of).unwrap().username, "alice");
        assert!(Sessions::from_bytes(b"{").is_err());
        assert!(Sessions::from_bytes(br#"{"version":2,"sessions":{}}"#).is_err());
        let junk = Sessions::from_bytes(br#"{"version":1,"sessions":{"not-a-uuid":{"username":"a","passwordFingerprint":"x","expires":9}}}"#).unwrap();
        assert!(junk.map.is_empty());
    }

    #[test]
    fn the_table_is_bounded() {
        let mut s = Sessions::default();
        for i in 0..(MAX_SESSIONS + 10) {
            s.create("alice", "$argon2id$alice", i as u64);
        }
        assert_eq!(s.map.len(), MAX_SESSIONS);
    }
}
