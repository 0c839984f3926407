//! Identity: who is calling. This module tree owns the credentials a caller
//! can present and how they are checked: local users' argon2id password hashes (`password`) and
//! API tokens configured by their SHA-256 (`token`). It decides who a caller is, never what that
//! caller may do: permissions stay in `permissions::decide`. No password or token ever reaches a
//! log line or an error message.

pub(crate) mod identity;
pub mod password;
pub(crate) mod sessions;
pub(crate) mod throttle;
pub mod token;

use std::net::IpAddr;
use std::sync::{Mutex, MutexGuard};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use tracing::{info, warn};

use crate::config::{Auth, Limits};
use crate::permissions::Caller;
use crate::ratelog;
use crate::store::Store;
use identity::{Credentials, Refusal};
use password::{Asker, HashError, Hasher};
use sessions::Sessions;
pub use throttle::Throttled;
use throttle::{Caps, Throttle};

/// A hash of a password nobody knows, verified when the username is unknown so that a
/// failed login takes as long whether or not the user exists.
const DUMMY_PHC: &str = "$argon2id$v=19$m=19456,t=2,p=1$ybSy+XeOa5u/na8IWS4PUw$dGskUsMnme7qmbvzP1JULCp2t0nvKW3V2GzVT4+vAlo";

/// How a login attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Login {
    /// Too many recent failures: for this name from this network, from this network, or for
    /// this name from everywhere.
    Throttled(Throttled),
    /// Login disabled, unknown user or wrong password (the caller cannot tell which).
    Refused,
    /// `MAX_QUEUED_VERIFICATIONS` logins are being checked already, or one from this
    /// address is (or `password::NETWORK_PLACES` from its IPv6 /64); nothing was counted.
    Busy,
    /// A new session.
    Accepted { sid: String },
}

/// The live identity state: sessions (persisted through the store), the login throttle and
/// the one-at-a-time password hasher. Locks are held only for in-memory work.
pub struct Authority {
    sessions: Mutex<Sessions>,
    throttle: Mutex<Throttle>,
    hasher: Hasher,
    store: Store,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn current_hash(auth: &Auth) -> impl Fn(&str) -> Option<String> + '_ {
    move |name| {
        auth.local_users
            .iter()
            .find(|u| u.username == name)
            .map(|u| u.password.clone())
    }
}

/// Says why a login was throttled: per address or network at info level (the same line as a failed
/// login), the username's ceiling at warn level, naming the name, since someone is guessing
/// its password from many addresses.
fn log_throttled(why: Throttled, peer: IpAddr, username: &str) {
    match why {
        Throttled::Address | Throttled::Network => {
            let from = if why == Throttled::Address {
                "this address"
            } else {
                "this address's IPv6 /64"
            };
            if let Some(more) = ratelog::FAILED_LOGINS.admit() {
                info!(%peer, "login throttled: too many failures from {from}{more}");
            }
        }
        Throttled::Username => {
            if let Some(more) = ratelog::LOGIN_CEILING.admit() {
                // The name is the client's: quoted and escaped (no forged lines), and short.
                let name: String = username.chars().take(64).collect();
                warn!(
                    %peer,
                    user = ?name,
                    "login throttled: this user's password is being guessed from many \
                     addresses; only addresses the user logged in from may try for now{more}"
                );
            }
        }
    }
}

impl Authority {
    /// Loads the sessions the store kept, dropping those that expired or whose user was
    /// removed or given another password hash since. A file that cannot be used (an older
    /// format holding ids in clear, or a damaged one) is replaced by an empty table at once,
    /// so nothing usable stays on the disk.
    pub fn open(store: Store, auth: &Auth) -> Authority {
        let mut rewrite = false;
        let mut sessions = match store.read(sessions::FILE, sessions::MAX_FILE_BYTES) {
            Ok(Some(bytes)) => Sessions::from_bytes(&bytes).unwrap_or_else(|e| {
                warn!("not using the sessions file: {e}; everyone logs in again");
                rewrite = true;
                Sessions::default()
            }),
            Ok(None) => Sessions::default(),
            Err(e) => {
                warn!("cannot read the sessions file ({e}): everyone logs in again");
                // A file too large to be ours, or a FIFO in its place, is replaced, so the
                // next start does not meet it.
                use std::io::ErrorKind::{FileTooLarge, InvalidInput};
                rewrite = matches!(e.kind(), FileTooLarge | InvalidInput);
                Sessions::default()
            }
        };
        let changed = sessions.prune(now_unix(), current_hash(auth));
        let authority = Authority {
            sessions: Mutex::new(sessions),
            throttle: Mutex::default(),
            hasher: Hasher::new(),
            store,
        };
        if changed || rewrite {
            authority.save();
        }
        authority
    }

    /// Who is calling.
    pub fn identify(
        &self,
        auth: &Auth,
        peer: IpAddr,
        cred: &Credentials<'_>,
    ) -> Result<Caller, Refusal> {
        identity::identify(auth, peer, cred, &lock(&self.sessions), now_unix())
    }

    /// LocalUserLogin: throttled per (network, username), per network and per username
    /// (`throttle`), verified off the event loop, one at a time. A new session ends the
    /// user's oldest beyond `maxSessionsPerUser`.
    pub async fn login(
        &self,
        auth: &Auth,
        limits: &Limits,
        peer: IpAddr,
        username: &str,
        password: String,
    ) -> Login {
        let caps = Caps {
            per_user: limits.login_failures_per_user,
            per_address: limits.login_failures_per_address,
            per_username: limits.login_failures_per_username,
        };
        let user = auth
            .local_users
            .iter()
            .find(|u| u.username == username)
            .filter(|_| auth.local_users_enabled);
        let place = {
            let mut throttle = lock(&self.throttle);
            let now = Instant::now();
            if let Err(why) = throttle.allows(peer, username, now, caps) {
                drop(throttle);
                log_throttled(why, peer, username);
                return Login::Throttled(why);
            }
            let asker = if throttle.knows(peer, username, now) {
                Asker::Known
            } else if identity::trusted(&auth.trusted_proxies, peer) {
                Asker::Proxy
            } else {
                Asker::Address(peer)
            };
            // A login turned away for want of a place is not counted: it cost nothing, it
            // gives no guess, and counting it would let a flood spend a user's attempts.
            let Some(place) = self.hasher.place(asker) else {
                drop(throttle);
                if let Some(more) = ratelog::BUSY_LOGINS.admit() {
                    warn!(%peer, "a login was turned away: {} are being checked already, or one from this address is{more}", password::MAX_QUEUED_VERIFICATIONS);
                }
                return Login::Busy;
            };
            // Counted as failed until proven otherwise: verifications queue, so concurrent
            // guesses must take their places in the throttle before any of them is checked.
            throttle.failed(peer, username, now, caps);
            place
        };
        let phc = user.map_or(DUMMY_PHC, |u| u.password.as_str()).to_string();
        let verified = self.hasher.verify(place, password, phc).await;
        match user.filter(|_| verified) {
            Some(user) => {
                lock(&self.throttle).succeeded(peer, username, Instant::now());
                let (sid, evicted) = lock(&self.sessions).create(
                    &user.username,
                    &user.password,
                    now_unix(),
                    limits.max_sessions_per_user,
                );
                self.save();
                info!(user = %user.username, "logged in");
                if evicted {
                    info!(user = %user.username, "the oldest session of this user ended");
                }
                Login::Accepted { sid }
            }
            None => {
                // Not the name: people type their password into it by mistake.
                if let Some(more) = ratelog::FAILED_LOGINS.admit() {
                    info!(%peer, "failed login{more}");
                }
                Login::Refused
            }
        }
    }

    /// After a config reload: sessions of removed users, or of users with a new password
    /// hash, end now (lookups would refuse them anyway; this also forgets them on disk).
    pub fn reload(&self, auth: &Auth) {
        let changed = lock(&self.sessions).prune(now_unix(), current_hash(auth));
        if changed {
            self.save();
        }
    }

    /// Logout: the session ends on the server, not only in the browser.
    pub fn logout(&self, sid: &str) {
        if lock(&self.sessions).revoke(sid) {
            self.save();
        }
    }

    /// PasswordHash: one hash at a time; busy → `HashError::Busy`.
    pub async fn hash(&self, password: String) -> Result<String, HashError> {
        self.hasher.hash(password).await
    }

    fn save(&self) {
        let bytes = lock(&self.sessions).to_bytes();
        if let Err(e) = self.store.replace(sessions::FILE, &bytes) {
            warn!("cannot save the sessions ({e}): they last until the service restarts");
        }
    }
}
