//! Local users' passwords: argon2id PHC strings
//! (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`). This module owns making a new hash with the
//! project's parameters, verifying a password against any stored hash, and running both off the
//! event loop one at a time (`Hasher`). It must not log a password or put one in an error
//! message, and it must not know users, sessions or HTTP.
//!
//! One hash costs tens of milliseconds of CPU and 19 MiB of memory. On the current-thread runtime
//! that would stall every request, the kill ladder and the watchdog, so async callers go through
//! `Hasher`, which runs the work on tokio's blocking pool behind a single permit: at most one
//! 19 MiB block exists at any time, which matters on a 512 MB board. Verifications wait in a
//! bounded queue, first come first served, where one address holds at most one place (the
//! addresses of one IPv6 /64 together at most half of them) and a few places are kept for users logging in from where they did before (`Hasher::place`).

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

use argon2::password_hash::phc::{Output, ParamsString, PasswordHash, Salt};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::config::Network;

/// Memory cost of new hashes in KiB (the OWASP minimum for argon2id).
pub const M_COST_KIB: u32 = 19_456;
/// Iterations of new hashes.
pub const T_COST: u32 = 2;
/// Lanes of new hashes. One lane, because the work runs on one blocking thread anyway.
pub const P_COST: u32 = 1;

/// Hashes `password` into an argon2id v19 PHC string with m=19456 KiB, t=2, p=1 and a fresh
/// 16-byte salt from the operating system. Blocking and CPU-heavy: async code uses
/// `Hasher::hash`. The error never contains the password.
/// argon2's working memory (19 MiB for new hashes), kept and reused by its owner. The
/// crate's own functions allocate it afresh for every hash, and the C allocator did not
/// give those blocks back for reuse: each sequential hash grew the service by 19 MiB.
#[derive(Default)]
pub struct Memory(Vec<Block>);

impl Memory {
    fn blocks(&mut self, count: usize) -> &mut [Block] {
        if self.0.len() < count {
            self.0.resize(count, Block::default());
        }
        &mut self.0[..count]
    }
}

/// Hashes with the parameters above and a fresh random salt, into a PHC string.
pub fn hash(password: &str) -> Result<String, Unhashed> {
    hash_with(&mut Memory::default(), password)
}

/// `hash`, using `memory` for argon2's blocks.
pub fn hash_with(memory: &mut Memory, password: &str) -> Result<String, Unhashed> {
    // The parameters are spelled out rather than taken from `Argon2::default()`, so a change of
    // the crate's defaults cannot silently change what actiond writes.
    let params = Params::new(M_COST_KIB, T_COST, P_COST, None)
        .map_err(|e| Unhashed::Argon2("argon2 parameters", e.to_string()))?;
    let argon2 = Argon2::new(Algorithm::Argon2id, Version::V0x13, params.clone());
    let mut salt_bytes = [0u8; 16];
    getrandom::fill(&mut salt_bytes).map_err(|e| Unhashed::NoRandomness(e.to_string()))?;
    let salt = Salt::new(&salt_bytes).map_err(|e| Unhashed::Argon2("salt", e.to_string()))?;
    let mut out = [0u8; Params::DEFAULT_OUTPUT_LEN];
    argon2
        .hash_password_into_with_memory(
            password.as_bytes(),
            &salt,
            &mut out,
            memory.blocks(params.block_count()),
        )
        .map_err(|e| Unhashed::Argon2("cannot hash the password", e.to_string()))?;
    let phc = PasswordHash {
        algorithm: Algorithm::Argon2id.ident(),
        version: Some(Version::V0x13.into()),
        params: ParamsString::try_from(&params)
            .map_err(|e| Unhashed::Argon2("argon2 parameters", e.to_string()))?,
        salt: Some(salt),
        hash: Some(Output::new(&out).map_err(|e| Unhashed::Argon2("output", e.to_string()))?),
    };
    Ok(phc.to_string())
}

/// Whether `password` matches the PHC string, with the parameters stored in it.
pub fn verify(password: &str, phc: &str) -> bool {
    verify_with(&mut Memory::default(), password, phc)
}

/// `verify`, using `memory` for argon2's blocks.
pub fn verify_with(memory: &mut Memory, password: &str, phc: &str) -> bool {
    let Ok(parsed) = PasswordHash::new(phc) else {
        return false;
    };
    let (Some(salt), Some(expected)) = (&parsed.salt, &parsed.hash) else {
        return false;
    };
    let Ok(algorithm) = Algorithm::try_from(parsed.algorithm.as_str()) else {
        return false;
    };
    let version = match parsed.version.map(Version::try_from) {
        None => Version::default(),
        Some(Ok(v)) => v,
        Some(Err(_)) => return false,
    };
    let Ok(params) = Params::try_from(&parsed) else {
        return false;
    };
    let argon2 = Argon2::new(algorithm, version, params.clone());
    let mut out = vec![0u8; expected.len()];
    if argon2
        .hash_password_into_with_memory(
            password.as_bytes(),
            salt,
            &mut out,
            memory.blocks(params.block_count()),
        )
        .is_err()
    {
        return false;
    }
    // `Output`'s equality is constant time (`ctutils::CtEq`), so the time taken does not
    // reveal how many leading bytes of a guess were right.
    Output::new(&out).is_ok_and(|computed| &computed == expected)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HashError {
    /// Another hash or verification is running; the caller answers `resource_exhausted`.
    Busy,
    /// The hash could not be computed.
    Failed(Unhashed),
}

/// Why a hash could not be computed. Never the password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unhashed {
    /// argon2 or its PHC encoding refused a step: the step, and the crate's own words.
    Argon2(&'static str, String),
    /// The OS supplied no randomness for the salt: its own words.
    NoRandomness(String),
    /// The hasher's thread is gone.
    NotRunning,
    /// The hasher's thread dropped the job.
    Dropped,
}

impl std::fmt::Display for Unhashed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unhashed::Argon2(step, why) => write!(f, "{step}: {why}"),
            Unhashed::NoRandomness(why) => write!(f, "no randomness for the salt: {why}"),
            Unhashed::NotRunning => f.write_str("the password hasher is not running"),
            Unhashed::Dropped => f.write_str("the password hashing task failed"),
        }
    }
}

impl std::error::Error for Unhashed {}

impl std::fmt::Display for HashError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HashError::Busy => f.write_str("another password hash is being computed"),
            HashError::Failed(why) => why.fmt(f),
        }
    }
}

impl std::error::Error for HashError {}

/// Runs `hash` and `verify` on one dedicated thread, one at a time. One thread, not tokio's
/// blocking pool: the C allocator keeps a memory arena per thread, so argon2's 19 MiB block
/// hashed on many pool threads stays resident once per thread (measured: +98 MiB under a
/// flood), while one thread reuses one block. One `Hasher` serves the whole process.
#[derive(Debug)]
pub struct Hasher {
    permit: Arc<Semaphore>,
    /// Places for verifications waiting or running: a login beyond them is answered "busy"
    /// at once. Unbounded, a flood of guesses under every throttle cap (many addresses, made-up
    /// names) held a connection per guess, for minutes at ~8 checks a second, until every
    /// connection slot was taken and the board answered no one.
    places: Arc<Semaphore>,
    /// Places only a login from where its user logged in before may take, so a flood from
    /// many addresses holding every other place does not keep the real user out.
    reserved: Arc<Semaphore>,
    /// The addresses holding a place now: one each, so a few addresses cannot hold the queue
    /// and each address waits its turn among the others (the queue is first come, first
    /// served); and the places each IPv6 /64 holds, at most `NETWORK_PLACES`, so one device
    /// taking many addresses of its /64 cannot hold the queue either, while one device of a
    /// household (a /64) does not keep the others out.
    holders: Arc<Mutex<Holders>>,
    jobs: std::sync::mpsc::Sender<Job>,
}

/// Verifications that may wait for the hasher or run at once; a ninth login is "busy".
pub const MAX_QUEUED_VERIFICATIONS: usize = 8;

/// Places beyond those, for logins from a network their user logged in from before.
pub const RESERVED_PLACES: usize = 2;

/// Who asks for a place in the hasher's queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asker {
    /// An address that holds at most one place at a time (its /64 at most `NETWORK_PLACES`).
    Address(IpAddr),
    /// A trusted proxy, which carries everyone: held to no one place.
    Proxy,
    /// A user from a network they logged in from before: a reserved place first.
    Known,
}

/// A place in the hasher's queue, taken before a login is counted or checked.
#[derive(Debug)]
pub struct Place {
    _held: OwnedSemaphorePermit,
    holder: Option<(IpAddr, Arc<Mutex<Holders>>)>,
}

/// Who holds the places of the queue that are held per address.
#[derive(Debug, Default)]
struct Holders {
    addresses: HashSet<IpAddr>,
    networks: HashMap<Network, usize>,
}

/// Places the addresses of one IPv6 /64 hold together at most.
pub const NETWORK_PLACES: usize = MAX_QUEUED_VERIFICATIONS / 2;

impl Drop for Place {
    fn drop(&mut self) {
        if let Some((address, holders)) = &self.holder {
            let mut holders = holders.lock().unwrap_or_else(PoisonError::into_inner);
            holders.addresses.remove(address);
            let network = Network::of(*address);
            if let Some(n) = holders.networks.get_mut(&network) {
                *n -= 1;
                if *n == 0 {
                    holders.networks.remove(&network);
                }
            }
        }
    }
}

enum Job {
    Hash(
        String,
        tokio::sync::oneshot::Sender<Result<String, Unhashed>>,
    ),
    Verify(String, String, tokio::sync::oneshot::Sender<bool>),
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the password.
        f.write_str(match self {
            Job::Hash(..) => "Job::Hash",
            Job::Verify(..) => "Job::Verify",
        })
    }
}

impl Default for Hasher {
    fn default() -> Self {
        Self::new()
    }
}

impl Hasher {
    pub fn new() -> Hasher {
        let (jobs, queue) = std::sync::mpsc::channel::<Job>();
        // If the thread cannot start, every job's reply is dropped and answers as a failure.
        let _ = std::thread::Builder::new()
            .name("actiond-hasher".into())
            .spawn(move || {
                // One working memory for every hash this process makes.
                let mut memory = Memory::default();
                for job in queue {
                    match job {
                        Job::Hash(password, reply) => {
                            let _ = reply.send(hash_with(&mut memory, &password));
                        }
                        Job::Verify(password, phc, reply) => {
                            let _ = reply.send(verify_with(&mut memory, &password, &phc));
                        }
                    }
                }
            });
        Hasher {
            permit: Arc::new(Semaphore::new(1)),
            places: Arc::new(Semaphore::new(MAX_QUEUED_VERIFICATIONS)),
            reserved: Arc::new(Semaphore::new(RESERVED_PLACES)),
            holders: Arc::default(),
            jobs,
        }
    }

    /// Hashes `password` off the event loop. Answers `Busy` at once when a hash or a
    /// verification is already running (PasswordHash: "at most one hash at a time"), rather
    /// than queueing work nobody is waiting for.
    pub async fn hash(&self, password: String) -> Result<String, HashError> {
        let permit = Arc::clone(&self.permit)
            .try_acquire_owned()
            .map_err(|_| HashError::Busy)?;
        let (reply, answer) = tokio::sync::oneshot::channel();
        if self.jobs.send(Job::Hash(password, reply)).is_err() {
            return Err(HashError::Failed(Unhashed::NotRunning));
        }
        // The permit is held until the thread answers, even if the request is dropped
        // meanwhile: the thread still finishes the work, so the bound holds.
        let result = answer.await;
        drop(permit);
        match result {
            Ok(r) => r.map_err(HashError::Failed),
            Err(_) => Err(HashError::Failed(Unhashed::Dropped)),
        }
    }

    /// A place in the queue of verifications for `asker`, or None when its address holds
    /// one already, or its IPv6 /64 `NETWORK_PLACES`, or when `MAX_QUEUED_VERIFICATIONS` are waiting or running (for a known
    /// user: those and the `RESERVED_PLACES` too).
    pub fn place(&self, asker: Asker) -> Option<Place> {
        let general = || Arc::clone(&self.places).try_acquire_owned().ok();
        match asker {
            Asker::Proxy => general().map(|held| Place {
                _held: held,
                holder: None,
            }),
            Asker::Known => Arc::clone(&self.reserved)
                .try_acquire_owned()
                .ok()
                .or_else(general)
                .map(|held| Place {
                    _held: held,
                    holder: None,
                }),
            Asker::Address(address) => {
                let address = address.to_canonical();
                let network = Network::of(address);
                let mut holders = self.holders.lock().unwrap_or_else(PoisonError::into_inner);
                let near = holders.networks.get(&network).copied().unwrap_or(0);
                if holders.addresses.contains(&address) || near >= NETWORK_PLACES {
                    return None;
                }
                let held = general()?;
                holders.addresses.insert(address);
                *holders.networks.entry(network).or_insert(0) += 1;
                Some(Place {
                    _held: held,
                    holder: Some((address, Arc::clone(&self.holders))),
                })
            }
        }
    }

    /// Verifies `password` against `phc` off the event loop, in the place taken with
    /// `place`. Waits for the permit: logins queue behind each other (in arrival order, the
    /// semaphore is fair) and are throttled per address elsewhere.
    pub async fn verify(&self, place: Place, password: String, phc: String) -> bool {
        // The place is given back when the check is over (or its request dropped).
        let _place = place;
        // `acquire_owned` fails only on a closed semaphore, and this one is never closed; if it
        // were, refusing the login is the safe answer.
        let Ok(permit) = Arc::clone(&self.permit).acquire_owned().await else {
            return false;
        };
        let (reply, answer) = tokio::sync::oneshot::channel();
        if self.jobs.send(Job::Verify(password, phc, reply)).is_err() {
            return false;
        }
        let verified = answer.await.unwrap_or(false);
        drop(permit);
        verified
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use argon2::password_hash::PasswordHasher;

    /// Why a hash failed, word for word as `actiond hash-password` prints it.
    #[test]
    fn failures_word_for_word() {
        let cases = [
            (
                Unhashed::Argon2("salt", "salt string too short".into()),
                "salt: salt string too short",
            ),
            (
                Unhashed::NoRandomness("errno: 38".into()),
                "no randomness for the salt: errno: 38",
            ),
            (Unhashed::NotRunning, "the password hasher is not running"),
            (Unhashed::Dropped, "the password hashing task failed"),
        ];
        for (why, words) in cases {
            assert_eq!(HashError::Failed(why).to_string(), words);
        }
        assert_eq!(
            HashError::Busy.to_string(),
            "another password hash is being computed"
        );
    }

    #[test]
    fn hashes_made_with_reused_memory_are_standard_phc_strings() {
        use argon2::password_hash::PasswordVerifier;
        let mut memory = Memory::default();
        let phc = hash_with(&mut memory, "pw").unwrap();
        // argon2's own verifier accepts what the reusable-memory path wrote.
        let parsed = PasswordHash::new(&phc).unwrap();
        assert!(Argon2::default().verify_password(b"pw", &parsed).is_ok());
        // And the same memory serves the next hash and verification.
        let second = hash_with(&mut memory, "other").unwrap();
        assert!(verify_with(&mut memory, "other", &second));
        assert!(verify_with(&mut memory, "pw", &phc));
        assert!(!verify_with(&mut memory, "pw", &second));
    }

    #[test]
    fn hash_then_verify_round_trips_and_a_wrong_password_fails() {
        let phc = hash("correct horse battery staple").expect("hash");
        assert!(verify("correct horse battery staple", &phc));
        assert!(!verify("correct horse battery stapler", &phc));
        assert!(!verify("", &phc));
    }

    #[test]
    fn new_hashes_use_the_spec_parameters_and_a_fresh_salt() {
        let a = hash("pw").expect("hash");
        let b = hash("pw").expect("hash");
        assert!(
            a.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "unexpected PHC string {a}"
        );
        assert_ne!(a, b, "two hashes of one password must differ by their salt");
    }

    #[test]
    fn hashes_with_other_parameters_verify() {
        let params = Params::new(8192, 1, 2, None).expect("params");
        let argon2 = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
        let phc = argon2
            .hash_password_with_salt(b"s3cret", b"0123456789abcdef")
            .expect("hash")
            .to_string();
        assert!(phc.starts_with("$argon2id$v=19$m=8192,t=1,p=2$"), "{phc}");
        assert!(verify("s3cret", &phc));
        assert!(!verify("s3cre", &phc));
    }

    #[test]
    fn malformed_strings_are_false_without_panic() {
        for phc in [
            "",
            "plain",
            "$argon2id$v=19$m=1",
            "$argon2id$v=19$m=8,t=1,p=1$",
            "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ",
            "$argon2id$v=19$m=0,t=0,p=0$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA",
            "$pbkdf2-sha256$i=1000$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
            "$argon2id$v=99$m=8,t=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA",
        ] {
            assert!(!verify("pw", phc), "{phc:?} must not verify");
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn hasher_hashes_and_verifies_off_the_event_loop() {
        let hasher = Hasher::new();
        let phc = hasher.hash("pw".to_string()).await.expect("hash");
        assert!(
            hasher
                .verify(
                    hasher.place(Asker::Proxy).unwrap(),
                    "pw".to_string(),
                    phc.clone()
                )
                .await
        );
        assert!(
            !hasher
                .verify(
                    hasher.place(Asker::Proxy).unwrap(),
                    "wrong".to_string(),
                    phc
                )
                .await
        );
        // Every permit came back.
        assert_eq!(hasher.permit.available_permits(), 1);
    }

    #[test]
    fn one_place_per_address_a_few_per_64_and_reserved_places_for_known_users() {
        let hasher = Hasher::new();
        let net = |ip: &str| Asker::Address(ip.parse().unwrap());
        let first = hasher.place(net("10.0.0.1")).unwrap();
        assert!(hasher.place(net("10.0.0.1")).is_none(), "one per address");
        assert!(
            hasher.place(net("::ffff:10.0.0.1")).is_none(),
            "the same address"
        );
        // The addresses of one IPv6 /64 hold one place each, and at most NETWORK_PLACES.
        let v6: Vec<Place> = (1..=NETWORK_PLACES)
            .map(|n| hasher.place(net(&format!("fd00::{n}"))).unwrap())
            .collect();
        assert!(hasher.place(net("fd00::1")).is_none());
        assert!(
            hasher.place(net("fd00::99")).is_none(),
            "the /64 holds its places"
        );
        drop(v6);
        let v6 = hasher.place(net("fd00::99")).unwrap();
        drop(first);
        let mut held: Vec<Place> = vec![hasher.place(net("10.0.0.1")).unwrap()];
        held.extend((2..=7).map(|n| hasher.place(net(&format!("10.0.0.{n}"))).unwrap()));
        // Every general place is taken: a new network and a proxy are busy, a known user not.
        assert!(hasher.place(net("10.0.0.99")).is_none());
        assert!(hasher.place(Asker::Proxy).is_none());
        let known: Vec<Place> = (0..RESERVED_PLACES)
            .map(|_| hasher.place(Asker::Known).unwrap())
            .collect();
        assert!(hasher.place(Asker::Known).is_none());
        drop(known);
        // A proxy holds any number of the general places.
        held.pop();
        held.pop();
        let proxied = [hasher.place(Asker::Proxy), hasher.place(Asker::Proxy)];
        assert!(proxied.iter().all(Option::is_some));
        drop((held, v6));
        assert!(
            hasher.holders.lock().unwrap().networks.is_empty(),
            "places given back"
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_second_hash_while_one_runs_is_busy() {
        let hasher = Hasher::new();
        // Holding the only permit is exactly the state of "a hash is running", without a race
        // against a real blocking thread.
        let running = Arc::clone(&hasher.permit)
            .try_acquire_owned()
            .expect("permit");
        assert_eq!(hasher.hash("pw".to_string()).await, Err(HashError::Busy));
        drop(running);
        assert!(hasher.hash("pw".to_string()).await.is_ok());
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_verification_waits_for_the_running_one() {
        let hasher = Hasher::new();
        let phc = hash("pw").expect("hash");
        let running = Arc::clone(&hasher.permit)
            .try_acquire_owned()
            .expect("permit");
        let queued = hasher.verify(hasher.place(Asker::Proxy).unwrap(), "pw".to_string(), phc);
        tokio::pin!(queued);
        // Polled once while the permit is held: it must wait, not fail.
        tokio::select! {
            biased;
            _ = &mut queued => panic!("verify finished while another one held the permit"),
            _ = std::future::ready(()) => {}
        }
        drop(running);
        assert!(queued.await);
    }
}
