//! Local-login sessions: a random UUIDv4 per login, valid for 31556952 s, revoked
//! by Logout. A session remembers a fingerprint (SHA-256) of the user's password hash as it
//! was at login, so removing the user from the config or changing their password hash ends
//! every session of theirs at the next lookup, with no bookkeeping at reload. Each user holds
//! at most `maxSessionsPerUser` sessions (a new login ends that user's oldest), and the whole
//! table is bounded too.
//!
//! Only a hash (SHA-256) of each session id is kept, in memory and in the file: whoever reads
//! the state directory (a backup, a copied SD card) learns no session that works. The ids
//! are random UUIDs, so a plain hash is enough. The table serializes to a small versioned
//! JSON document that the store writes; this module itself does no I/O.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::token::sha256_hex;

/// Seconds a session lives (the API's cookie lifetime: one year).
pub const LIFETIME_SECS: u64 = 31_556_952;

/// Sessions kept at most, whoever holds them; beyond, the one expiring first is dropped.
pub const MAX_SESSIONS: usize = 4096;

/// The store's file name for sessions.
pub const FILE: &str = "sessions.json";

/// A sessions file larger than this was not written by actiond (`MAX_SESSIONS` sessions take
/// about a quarter of it) and is not read.
pub const MAX_FILE_BYTES: u64 = MAX_SESSIONS as u64 * 1024;

/// The file format written now: session ids hashed. Version 1 held them in clear.
const VERSION: u32 = 2;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    pub username: String,
    /// SHA-256 of the user's password hash at login.
    pub password_fingerprint: String,
    /// Unix seconds.
    pub expires: u64,
    /// The order of the logins: logins within one second expire in the same second, and the
    /// lower number is the older. Files written before it existed read as 0.
    #[serde(default)]
    pub serial: u64,
}

/// The fingerprint of a stored password hash.
pub fn fingerprint(phc: &str) -> String {
    sha256_hex(phc)
}

/// What the table and the file key a session by: the SHA-256 of its id.
fn key(sid: &str) -> String {
    sha256_hex(sid)
}

#[derive(Debug, Default)]
pub struct Sessions {
    /// Hash of the session id → session.
    map: HashMap<String, Session>,
    /// The serial of the next session.
    next: u64,
}

#[derive(Serialize, Deserialize)]
struct File {
    version: u32,
    sessions: HashMap<String, Session>,
}

/// Why a sessions file was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreadable {
    /// Written by an older actiond with the ids in clear: they are dropped, not migrated.
    ClearIds,
    Other(String),
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreadable::ClearIds => f.write_str(
                "it was written by an older actiond and holds session ids in clear, which may \
                 have been copied with the state directory; they are dropped",
            ),
            Unreadable::Other(why) => f.write_str(why),
        }
    }
}

impl Sessions {
    /// Starts a session for `username` and returns its id. When the user already holds
    /// `per_user` sessions, their oldest ends first; true in the second place when one did.
    pub fn create(
        &mut self,
        username: &str,
        phc: &str,
        now: u64,
        per_user: usize,
    ) -> (String, bool) {
        self.map.retain(|_, s| s.expires > now);
        // One pass over the table, whatever the user holds (a file may have given them
        // thousands): their sessions oldest first, and as many of those ended as make room.
        let mut theirs: Vec<(u64, u64, &String)> = self
            .map
            .iter()
            .filter(|(_, s)| s.username == username)
            .map(|(k, s)| (s.expires, s.serial, k))
            .collect();
        let excess = (theirs.len() + 1).saturating_sub(per_user.max(1));
        let mut evicted = excess > 0;
        if evicted {
            theirs.sort_unstable();
            let ended: Vec<String> = theirs[..excess]
                .iter()
                .map(|(_, _, k)| (*k).clone())
                .collect();
            for k in ended {
                self.map.remove(&k);
            }
        }
        if self.map.len() >= MAX_SESSIONS {
            let first = self
                .map
                .iter()
                .min_by_key(|(_, s)| (s.expires, s.serial))
                .map(|(k, _)| k.clone());
            if let Some(k) = first {
                self.map.remove(&k);
                evicted = true;
            }
        }
        let sid = uuid::Uuid::new_v4().to_string();
        self.map.insert(
            key(&sid),
            Session {
                username: username.to_string(),
                password_fingerprint: fingerprint(phc),
                expires: now.saturating_add(LIFETIME_SECS),
                serial: self.next,
            },
        );
        self.next += 1;
        (sid, evicted)
    }

    /// The session `sid` if it is unexpired and still belongs to a user whose current
    /// password hash is `current_phc(username)`.
    pub fn lookup(
        &self,
        sid: &str,
        now: u64,
        current_phc: impl Fn(&str) -> Option<String>,
    ) -> Option<&Session> {
        let s = self.map.get(&key(sid))?;
        if s.expires <= now {
            return None;
        }
        let phc = current_phc(&s.username)?;
        (fingerprint(&phc) == s.password_fingerprint).then_some(s)
    }

    /// Ends a session; true when it existed.
    pub fn revoke(&mut self, sid: &str) -> bool {
        self.map.remove(&key(sid)).is_some()
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
            version: VERSION,
            sessions: self.map.clone(),
        };
        serde_json::to_vec(&file).unwrap_or_default()
    }

    /// Reads a sessions file. One of version 1 (ids in clear) is refused rather than
    /// migrated: hashing the old ids would keep alive sessions whose ids already lay in clear
    /// on the disk, so everyone logs in once more instead.
    pub fn from_bytes(bytes: &[u8]) -> Result<Sessions, Unreadable> {
        let file: File =
            serde_json::from_slice(bytes).map_err(|e| Unreadable::Other(e.to_string()))?;
        match file.version {
            VERSION => {}
            1 => return Err(Unreadable::ClearIds),
            v => {
                return Err(Unreadable::Other(format!(
                    "unknown sessions file version {v}"
                )));
            }
        }
        let mut map = file.sessions;
        // Keys are SHA-256 hashes in hex; anything else in the file is not ours.
        map.retain(|k, _| k.len() == 64 && k.bytes().all(|b| b.is_ascii_hexdigit()));
        // The table's bound holds from the start: the sessions that expire last stay.
        if map.len() > MAX_SESSIONS {
            let mut order: Vec<(u64, u64, String)> = map
                .iter()
                .map(|(k, s)| (s.expires, s.serial, k.clone()))
                .collect();
            order.sort_unstable();
            for (_, _, k) in &order[..order.len() - MAX_SESSIONS] {
                map.remove(k);
            }
        }
        let next = map.values().map(|s| s.serial + 1).max().unwrap_or(0);
        Ok(Sessions { map, next })
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
        let (sid, _) = s.create("alice", "$argon2id$alice", 1000, 10);
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
        let (sid, _) = s.create("alice", "$argon2id$alice", 0, 10);
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
    fn round_trips_through_bytes_with_only_hashes_of_the_ids() {
        let mut s = Sessions::default();
        let (sid, _) = s.create("alice", "$argon2id$alice", 5, 10);
        let bytes = s.to_bytes();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(!text.contains(&sid), "the id is in the file: {text}");
        assert!(text.contains(&sha256_hex(&sid)), "{text}");
        let back = Sessions::from_bytes(&bytes).unwrap();
        assert_eq!(back.lookup(&sid, 6, phc_of).unwrap().username, "alice");
        assert!(
            back.lookup(&sha256_hex(&sid), 6, phc_of).is_none(),
            "the hash is no id"
        );
        assert!(matches!(
            Sessions::from_bytes(b"{"),
            Err(Unreadable::Other(_))
        ));
        assert!(matches!(
            Sessions::from_bytes(br#"{"version":3,"sessions":{}}"#),
            Err(Unreadable::Other(_))
        ));
        let junk = Sessions::from_bytes(br#"{"version":2,"sessions":{"not-a-hash":{"username":"a","passwordFingerprint":"x","expires":9}}}"#).unwrap();
        assert!(junk.map.is_empty());
    }

    #[test]
    fn a_file_with_ids_in_clear_is_dropped() {
        let old = format!(
            r#"{{"version":1,"sessions":{{"{}":{{"username":"alice","passwordFingerprint":"{}","expires":99}}}}}}"#,
            uuid::Uuid::new_v4(),
            fingerprint("$argon2id$alice")
        );
        assert_eq!(
            Sessions::from_bytes(old.as_bytes()).err(),
            Some(Unreadable::ClearIds)
        );
    }

    #[test]
    fn a_new_login_ends_that_users_oldest_session_only() {
        let mut s = Sessions::default();
        let (bob, _) = s.create("bob", "$argon2id$bob", 0, 3);
        let ids: Vec<String> = (1..=3)
            .map(|t| s.create("alice", "$argon2id$alice", t, 3).0)
            .collect();
        let (newest, evicted) = s.create("alice", "$argon2id$alice", 10, 3);
        assert!(evicted);
        let live = |sid: &str| s.map.contains_key(&key(sid));
        assert!(!live(&ids[0]), "alice's oldest ended");
        assert!(live(&ids[1]) && live(&ids[2]) && live(&newest));
        assert!(live(&bob), "bob's session stays");
        assert_eq!(s.map.values().filter(|x| x.username == "alice").count(), 3);
    }

    /// Logins within one second expire in the same second: the order of the logins decides,
    /// not the order of a hash map, and it survives the file.
    #[test]
    fn logins_in_one_second_end_in_the_order_they_came() {
        let mut s = Sessions::default();
        let ids: Vec<String> = (0..3)
            .map(|_| s.create("alice", "$argon2id$alice", 5, 3).0)
            .collect();
        let mut s = Sessions::from_bytes(&s.to_bytes()).unwrap();
        for (n, old) in ids.iter().enumerate() {
            s.create("alice", "$argon2id$alice", 5, 3);
            assert!(
                !s.map.contains_key(&key(old)),
                "login {n} was not the one to end"
            );
            for younger in &ids[n + 1..] {
                assert!(s.map.contains_key(&key(younger)));
            }
        }
    }

    /// A file of far more sessions than the table holds, all of one user: it loads within
    /// the table's bound, and the next login of that user ends the excess in one pass.
    #[test]
    fn a_file_of_too_many_sessions_is_cut_to_the_bound_at_load() {
        let fp = fingerprint("$argon2id$alice");
        let mut text = String::from(r#"{"version":2,"sessions":{"#);
        let n = 3 * MAX_SESSIONS;
        for i in 0..n {
            if i > 0 {
                text.push(',');
            }
            text.push_str(&format!(
                r#""{}":{{"username":"alice","passwordFingerprint":"{fp}","expires":{},"serial":{i}}}"#,
                sha256_hex(&i.to_string()),
                1000 + i
            ));
        }
        text.push_str("}}");
        let mut s = Sessions::from_bytes(text.as_bytes()).unwrap();
        assert_eq!(s.map.len(), MAX_SESSIONS);
        assert!(
            s.map
                .values()
                .all(|x| x.serial as usize >= n - MAX_SESSIONS),
            "the newest stay"
        );
        let began = std::time::Instant::now();
        let (sid, evicted) = s.create("alice", "$argon2id$alice", 0, 10);
        assert!(evicted);
        assert_eq!(s.map.len(), 10);
        assert!(s.lookup(&sid, 1, phc_of).is_some());
        assert!(began.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn the_table_is_bounded() {
        let mut s = Sessions::default();
        for i in 0..(MAX_SESSIONS + 10) {
            s.create(&format!("user{i}"), "$argon2id$x", 0, 10);
        }
        assert_eq!(s.map.len(), MAX_SESSIONS);
    }
}
