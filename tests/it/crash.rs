//! The crash test: acknowledged means durable. Clients work the service hard with a state
//! directory set (StartActionAndWait, StartAction followed by ExecutionStatus polls, an event
//! subscriber), and the service is SIGKILLed at a random moment, restarted on the same state
//! directory, and worked again, for several rounds. After each restart, every run any client
//! was told had finished (a 200 answer with `executionFinished: true`, from StartActionAndWait
//! or ExecutionStatus, or an `executionFinished` event) must be in the history, finished, with
//! the exit code and output the client saw; and every run a client was told had started (a
//! tracking id from StartAction, an `executionStarted` event) must be there too, finished or
//! marked interrupted. Nothing may be lost, whatever the timing.
//!
//! A SIGKILL keeps whatever the service had handed to the kernel with `write`, so this test
//! catches answers sent before their record was written at all; it cannot tell whether the
//! record was also fsynced (a power cut), which the ordering test in `storage` checks.
//!
//! The second test races compactions (the whole-file replace) with appends: with a short
//! history the file is replaced every few dozen runs under load, and after each SIGKILL the
//! restored history must be the one the service showed just before.
//!
//! Both are `#[ignore]`d (a few seconds each) and run by name by `scripts/test.sh`;
//! `ACTIOND_CRASH_ROUNDS` (default 6) and `ACTIOND_CRASH_SEED` (default: from the clock, and
//! printed) change how many rounds run and where the kills land.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::client::{Conn, Request};
use crate::durability::{all_logs, crash, persistent};
use crate::events::{EventStream, Next};
use crate::harness::{Server, TempDir, UNTIL_STOPPED, poll_every, shell_action, wait_until};

/// Clients calling StartActionAndWait, one keep-alive connection each.
const WAITERS: usize = 6;
/// Clients calling StartAction, then ExecutionStatus until the run has finished.
const STARTERS: usize = 2;
/// Runs reported finished in each round before its kill is timed.
const PER_ROUND: usize = 20;
/// The history keeps this many runs, so that nothing the test made is evicted.
const LIMIT: usize = 10_000;
/// Clients stop starting runs past this many, so the history never reaches `LIMIT`.
const MAX_RUNS: usize = 9_000;

/// What the clients were told, over all rounds.
#[derive(Default)]
struct Told {
    /// Tracking id → (exit code, stdout) of every run reported as finished.
    finished: HashMap<String, (i64, String)>,
    /// Every run reported as started (finished ones included).
    started: HashSet<String>,
}

impl Told {
    fn finished(&mut self, entry: &Value) {
        let id = entry["executionTrackingId"].as_str().unwrap_or_default();
        let exit = entry["exitCode"].as_i64().unwrap_or(i64::MIN);
        let stdout = entry["stdout"].as_str().unwrap_or_default();
        self.started.insert(id.to_string());
        self.finished
            .insert(id.to_string(), (exit, stdout.to_string()));
    }
}

/// A small xorshift generator: the kill moments only need to be spread, and reproducible
/// from the printed seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// The actions: one that ends at once, one that runs long enough to be cut by the kill.
fn actions() -> Vec<Value> {
    let mut quick = shell_action("quick", "echo \"out-$ACTIOND_TRACKING_ID\"");
    quick["maxConcurrent"] = json!(64);
    let mut slowish = shell_action(
        "slowish",
        "sleep 0.05; echo \"out-$ACTIOND_TRACKING_ID\"; exit 3",
    );
    slowish["maxConcurrent"] = json!(64);
    vec![quick, slowish]
}

/// Shared by the clients of one round.
struct Round {
    addr: std::net::SocketAddr,
    number: usize,
    told: Arc<Mutex<Told>>,
    stop: Arc<AtomicBool>,
    runs: Arc<AtomicUsize>,
}

impl Round {
    /// Whether a client may start one more run.
    fn go_on(&self) -> bool {
        !self.stop.load(Ordering::SeqCst) && self.runs.fetch_add(1, Ordering::SeqCst) < MAX_RUNS
    }

    /// A request on `conn`; `None` once the service is gone.
    fn call(conn: &mut Conn, op: &str, body: &Value) -> Option<(u16, Value)> {
        let bytes = serde_json::to_vec(body).expect("JSON");
        let resp = conn.try_send(&Request::connect(op, &bytes)).ok()?;
        let status = resp.status;
        Some((
            status,
            serde_json::from_slice(&resp.body).unwrap_or(Value::Null),
        ))
    }

    /// The next run of a client: its tracking id (`kind`, the round, the client, the count)
    /// and its request, every `slow_every`-th run of the slower action.
    fn next_run(
        &self,
        kind: char,
        client: usize,
        n: &mut usize,
        slow_every: usize,
    ) -> (String, Value) {
        let id = format!("{kind}{}-{client}-{n}", self.number);
        let action = if *n % slow_every == slow_every - 1 {
            "slowish"
        } else {
            "quick"
        };
        *n += 1;
        let body = json!({"actionId": action, "uniqueTrackingId": id});
        (id, body)
    }

    /// Notes a run that an answer reports finished; whether it did.
    fn note_finished(&self, status: u16, reply: &Value) -> bool {
        let entry = &reply["logEntry"];
        let finished = status == 200 && entry["executionFinished"] == true;
        if finished {
            self.told.lock().unwrap().finished(entry);
        }
        finished
    }

    fn waiter(&self, client: usize) {
        let mut conn = Conn::open(self.addr);
        let mut n = 0;
        while self.go_on() {
            let (_, body) = self.next_run('w', client, &mut n, 4);
            let Some((status, reply)) = Round::call(&mut conn, "StartActionAndWait", &body) else {
                return;
            };
            self.note_finished(status, &reply);
        }
    }

    fn starter(&self, client: usize) {
        let mut conn = Conn::open(self.addr);
        let mut n = 0;
        while self.go_on() {
            let (id, body) = self.next_run('s', client, &mut n, 2);
            let Some((status, _)) = Round::call(&mut conn, "StartAction", &body) else {
                return;
            };
            if status != 200 {
                continue;
            }
            self.told.lock().unwrap().started.insert(id.clone());
            let status_body = json!({"executionTrackingId": id});
            // `Some(true)`: the service is gone, the round is over for this client.
            let over = poll_every(Duration::from_millis(5), UNTIL_STOPPED, || {
                let Some((status, reply)) = Round::call(&mut conn, "ExecutionStatus", &status_body)
                else {
                    return Some(true);
                };
                // Not 200 is not found: with a short history (the compaction test) newer
                // runs have pushed it out before this client looked. It was never reported
                // finished.
                (self.note_finished(status, &reply) || status != 200).then_some(false)
            });
            if over == Some(true) {
                return;
            }
        }
    }

    fn subscriber(&self, mut stream: EventStream) {
        loop {
            let frame = match stream.next(Duration::from_millis(200)) {
                Next::Frame(frame) if !frame.is_end() => frame,
                Next::Timeout if !self.stop.load(Ordering::SeqCst) => continue,
                // The service died (or the stream ended): the round is over for this client.
                _ => return,
            };
            let Ok(event) = serde_json::from_slice::<Value>(&frame.payload) else {
                continue;
            };
            if let Some(entry) = event.get("executionFinished") {
                self.told.lock().unwrap().finished(&entry["logEntry"]);
            } else if let Some(entry) = event.get("executionStarted") {
                let id = entry["logEntry"]["executionTrackingId"].as_str();
                self.told
                    .lock()
                    .unwrap()
                    .started
                    .insert(id.unwrap_or_default().to_string());
            }
        }
    }
}

/// What the history after a restart lacks of what the clients were told.
#[derive(Debug, Default)]
struct Lost {
    /// Runs reported finished that are not in the history at all.
    finished_missing: Vec<String>,
    /// Runs reported finished that came back otherwise (unfinished, interrupted, another
    /// exit code or output).
    finished_changed: Vec<String>,
    /// Runs reported started that are not in the history.
    started_missing: Vec<String>,
}

impl Lost {
    fn count(&self) -> usize {
        self.finished_missing.len() + self.finished_changed.len() + self.started_missing.len()
    }
}

fn compare(told: &Told, history: &[Value]) -> Lost {
    let by_id: HashMap<&str, &Value> = history
        .iter()
        .map(|e| (e["executionTrackingId"].as_str().unwrap_or_default(), e))
        .collect();
    let mut lost = Lost::default();
    for (id, (exit, stdout)) in &told.finished {
        match by_id.get(id.as_str()) {
            None => lost.finished_missing.push(id.clone()),
            Some(e) => {
                let same = e["executionFinished"] == true
                    && e["exitCode"].as_i64() == Some(*exit)
                    && e["stdout"].as_str() == Some(stdout.as_str());
                if !same {
                    lost.finished_changed.push(id.clone());
                }
            }
        }
    }
    for id in &told.started {
        if !by_id.contains_key(id.as_str()) {
            lost.started_missing.push(id.clone());
        }
    }
    for list in [
        &mut lost.finished_missing,
        &mut lost.finished_changed,
        &mut lost.started_missing,
    ] {
        list.sort();
    }
    lost
}

#[test]
#[ignore = "a few seconds; run by name by scripts/test.sh"]
fn sigkill_under_load_loses_no_run_a_client_was_told_about() {
    let rounds = env_number("ACTIOND_CRASH_ROUNDS").unwrap_or(6) as usize;
    let seed = env_number("ACTIOND_CRASH_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    eprintln!("crash test: {rounds} rounds, ACTIOND_CRASH_SEED={seed}");
    let mut rng = Rng(seed | 1);
    let state = TempDir::new();
    let mut config = persistent(&state, LIMIT, actions());
    config["maxConcurrentExecutions"] = json!(64);
    let told = Arc::new(Mutex::new(Told::default()));
    let runs = Arc::new(AtomicUsize::new(0));
    let mut server = Server::start(config.clone());
    let mut failures = Vec::new();
    let began = Instant::now();

    for number in 0..rounds {
        let round = Arc::new(Round {
            addr: server.addr,
            number,
            told: Arc::clone(&told),
            stop: Arc::new(AtomicBool::new(false)),
            runs: Arc::clone(&runs),
        });
        let stream = EventStream::subscribe(server.addr);
        let mut clients = Vec::new();
        for client in 0..WAITERS {
            let r = Arc::clone(&round);
            clients.push(thread::spawn(move || r.waiter(client)));
        }
        for client in 0..STARTERS {
            let r = Arc::clone(&round);
            clients.push(thread::spawn(move || r.starter(client)));
        }
        let r = Arc::clone(&round);
        clients.push(thread::spawn(move || r.subscriber(stream)));

        // Each round first sees some runs through, however slow the machine, so that the
        // test never passes for want of load; then the kill lands at a random moment.
        let base = told.lock().unwrap().finished.len();
        let busy = wait_until(Duration::from_secs(60), || {
            told.lock().unwrap().finished.len() >= base + PER_ROUND
        });
        assert!(
            busy,
            "round {number}: {PER_ROUND} runs did not finish within a minute"
        );
        let kill_after = Duration::from_millis(rng.below(750));
        // Wall time: the kill must land at a random moment of the service's real work.
        thread::sleep(kill_after);
        crash(&mut server);
        round.stop.store(true, Ordering::SeqCst);
        for c in clients {
            c.join().expect("a client thread panicked");
        }

        server = Server::start(config.clone());
        let history = all_logs(&server);
        let told = told.lock().unwrap();
        let lost = compare(&told, &history);
        eprintln!(
            "round {number}: killed {} ms after {PER_ROUND} runs; told finished {}, told started {}; \
             history {}; lost: {} finished missing, {} finished changed, {} started missing",
            kill_after.as_millis(),
            told.finished.len(),
            told.started.len(),
            history.len(),
            lost.finished_missing.len(),
            lost.finished_changed.len(),
            lost.started_missing.len(),
        );
        if lost.count() > 0 {
            failures.push(format!(
                "round {number}: {lost:?}",
                lost = Lost {
                    finished_missing: lost.finished_missing.into_iter().take(5).collect(),
                    finished_changed: lost.finished_changed.into_iter().take(5).collect(),
                    started_missing: lost.started_missing.into_iter().take(5).collect(),
                }
            ));
        }
    }
    let told = told.lock().unwrap();
    let history = all_logs(&server);
    let lost = compare(&told, &history);
    eprintln!(
        "crash test: {rounds} rounds in {:.1} s; told finished {}, told started {}; lost {} \
         ({} finished missing, {} finished changed, {} started missing)",
        began.elapsed().as_secs_f64(),
        told.finished.len(),
        told.started.len(),
        lost.count(),
        lost.finished_missing.len(),
        lost.finished_changed.len(),
        lost.started_missing.len(),
    );
    assert!(
        told.finished.len() >= rounds * PER_ROUND,
        "the load was too light to show anything: {} runs reported finished",
        told.finished.len()
    );
    assert!(
        failures.is_empty() && lost.count() == 0,
        "runs the clients were told about are missing after a restart (first few of each kind \
         per round):\n{}",
        failures.join("\n")
    );
}

/// The history the test compares: each entry's id, whether it finished, its exit code and
/// output, newest first.
fn summary(history: &[Value]) -> Vec<(String, bool, i64, String)> {
    history
        .iter()
        .map(|e| {
            (
                e["executionTrackingId"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                e["executionFinished"] == true,
                e["exitCode"].as_i64().unwrap_or(i64::MIN),
                e["stdout"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// A history this short is compacted (the whole file replaced) every few dozen runs, so under
/// this load compactions happen all the time, each racing with the appends of the runs going on.
const COMPACTED_LIMIT: usize = 20;

#[test]
#[ignore = "a few seconds; run by name by scripts/test.sh"]
fn compactions_racing_with_appends_lose_nothing_the_history_showed() {
    // Twelve rounds of about half a second: a run let go by the history while it ran (the
    // `slowish` action, under this short limit) came back after a restart within three
    // rounds, before its finish line was written as `evicted`.
    let rounds = env_number("ACTIOND_CRASH_ROUNDS").unwrap_or(12) as usize;
    let seed = env_number("ACTIOND_CRASH_SEED").unwrap_or(7);
    let mut rng = Rng(seed | 1);
    let state = TempDir::new();
    let mut config = persistent(&state, COMPACTED_LIMIT, actions());
    config["maxConcurrentExecutions"] = json!(64);
    let runs = Arc::new(AtomicUsize::new(0));
    let mut server = Server::start(config.clone());
    for number in 0..rounds {
        let round = Arc::new(Round {
            addr: server.addr,
            number,
            told: Arc::new(Mutex::new(Told::default())),
            stop: Arc::new(AtomicBool::new(false)),
            runs: Arc::clone(&runs),
        });
        let mut clients = Vec::new();
        for client in 0..WAITERS {
            let r = Arc::clone(&round);
            clients.push(thread::spawn(move || r.waiter(client)));
        }
        for client in 0..STARTERS {
            let r = Arc::clone(&round);
            clients.push(thread::spawn(move || r.starter(client)));
        }
        // Enough runs for a few compactions, however slow the machine, then a random moment.
        let base = runs.load(Ordering::SeqCst);
        let busy = wait_until(Duration::from_secs(60), || {
            runs.load(Ordering::SeqCst) >= base + 3 * COMPACTED_LIMIT
        });
        assert!(busy, "round {number}: too few runs within a minute");
        // Wall time: a random moment of the service's real work, as above.
        thread::sleep(Duration::from_millis(rng.below(300)));
        // The clients end their current run and stop: everything has finished, and the
        // history shows only what is on disk, so a SIGKILL now must change nothing.
        round.stop.store(true, Ordering::SeqCst);
        for c in clients {
            c.join().expect("a client thread panicked");
        }
        let before = summary(&all_logs(&server));
        crash(&mut server);
        server = Server::start(config.clone());
        let after = summary(&all_logs(&server));
        assert_eq!(
            before.len(),
            COMPACTED_LIMIT,
            "round {number}: the history is full"
        );
        assert_eq!(
            after, before,
            "round {number}: the history after the restart differs from the one shown before \
             the SIGKILL"
        );
    }
    let runs = runs.load(Ordering::SeqCst);
    let lines = std::fs::read(state.path().join("history.jsonl"))
        .expect("the history file")
        .iter()
        .filter(|b| **b == b'\n')
        .count();
    eprintln!("compaction test: {runs} runs in {rounds} rounds; the file holds {lines} lines");
    assert!(
        runs >= 3 * COMPACTED_LIMIT * rounds
            && lines <= 4 * COMPACTED_LIMIT + 2 * (WAITERS + STARTERS),
        "{runs} runs left {lines} lines: the file was not compacted"
    );
    let log = server.stop_and_log();
    assert!(!log.contains("could not be read"), "{log}");
}
