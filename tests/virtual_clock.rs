//! The whole service in-process on tokio's virtual clock: `actiond::run` serves a config on a
//! loopback listener inside the test's paused runtime, as `main` runs it, so the service's
//! own timers (a schedule, the MQTT client's backoff) are timed exactly and take no wall
//! time.
//!
//! Only what follows the virtual clock is timed here. The runs' program does not exist, so a
//! run's whole life (admission, the spawn that fails before any process is made, its records
//! without a state directory) is in-process and no process is ever started (each `run` starts
//! a reaper that takes any child of the test process, so a process one test started could be
//! reaped by another test's service); the broker is a task of the same runtime on loopback,
//! where what one end writes is ready at the other at once. When nothing is ready the paused
//! clock jumps to the next timer, so nothing here may wait for the world outside the process:
//! processes and slow peers run on wall time and are tested against the real binary in
//! tests/it. A file the test writes itself is the exception: the kernel queues its inotify
//! event within the write.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actiond::config::{self, Source};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::time::{Instant, sleep_until};

/// A program no test machine has: a run of it fails at its spawn, in-process.
const MISSING: &str = "actiond-virtual-clock-no-such-program";

/// A directory of the test's own for its config file, removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let path =
            std::env::temp_dir().join(format!("actiond-vclock-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir(&path).expect("create the test's directory");
        Dir(path)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What the service logged on this thread: with a current-thread runtime, all of it.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<u8>>>);

impl Log {
    fn count(&self, needle: &str) -> usize {
        String::from_utf8_lossy(&self.0.lock().unwrap())
            .matches(needle)
            .count()
    }
}

impl std::io::Write for Log {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Log {
    type Writer = Log;
    fn make_writer(&'a self) -> Log {
        self.clone()
    }
}

/// Serves `yaml` (loaded from a file, as `main` does) while `body` runs with the listening
/// address and the log, then stops the service and waits for it to end.
async fn with_service<F, Fut>(name: &str, yaml: &str, body: F)
where
    F: FnOnce(SocketAddr, Log) -> Fut,
    Fut: Future<Output = ()>,
{
    let dir = Dir::new(name);
    let path = dir.0.join("config.yaml");
    std::fs::write(&path, yaml).expect("write the config");
    let loaded = config::load(&Source::File(path)).unwrap_or_else(|e| panic!("{e:?}"));
    let log = Log::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(log.clone())
        .with_ansi(false)
        .finish();
    let _logging = tracing::subscriber::set_default(subscriber);
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("its address");
    let (stop, stopped) = oneshot::channel::<()>();
    let service = actiond::run(Arc::new(loaded.config), listener, || {}, async move {
        let _ = stopped.await;
    });
    let test = async move {
        body(addr, log).await;
        let _ = stop.send(());
    };
    let (served, ()) = tokio::join!(service, test);
    served.expect("the service ran");
}

/// A Connect call with a JSON body over a connection of its own: the status and the body.
async fn call(addr: SocketAddr, op: &str, body: &Value) -> (u16, Value) {
    let body = body.to_string();
    let request = format!(
        "POST /svc.api.v1.ActionApiService/{op} HTTP/1.1\r\nHost: 127.0.0.1\r\n\
         Content-Type: application/json\r\nConnect-Protocol-Version: 1\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut conn = TcpStream::connect(addr).await.expect("connect");
    conn.write_all(request.as_bytes()).await.expect("send");
    let mut response = Vec::new();
    conn.read_to_end(&mut response).await.expect("receive");
    let text = String::from_utf8(response).expect("UTF-8");
    let (head, mut rest) = text.split_once("\r\n\r\n").expect("a head");
    let status = head[9..12].parse().expect("a status");
    let mut body = String::new();
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        while let Some((size, tail)) = rest.split_once("\r\n") {
            let size = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
            if size == 0 {
                break;
            }
            body.push_str(&tail[..size]);
            rest = &tail[size + 2..];
        }
    } else {
        body.push_str(rest);
    }
    (status, serde_json::from_str(&body).expect("a JSON body"))
}

/// How many entries of `action` the history holds.
async fn runs_of(addr: SocketAddr, action: &str) -> usize {
    let (status, reply) = call(addr, "GetLogs", &json!({"startOffset": 0})).await;
    assert_eq!(status, 200, "{reply}");
    reply["logs"]
        .as_array()
        .map_or(0, |l| l.iter().filter(|e| e["actionId"] == action).count())
}

#[tokio::test(start_paused = true)]
async fn a_schedule_fires_on_its_period_exactly_and_a_start_up_run_happens_once() {
    let yaml = format!(
        "defaultPermissions: {{view: true, exec: true, logs: true, kill: true}}
logHistoryPageSize: 100
actions:
  - {{id: tick, title: Tick, exec: [{MISSING}], execOnCron: '@every 10s'}}
  - {{id: boot, title: Boot, exec: [{MISSING}], execOnStartup: true}}
"
    );
    with_service("schedule", &yaml, |addr, _| async move {
        let began = Instant::now();
        let at = |secs: f64| sleep_until(began + Duration::from_secs_f64(secs));
        at(9.9).await;
        assert_eq!(runs_of(addr, "tick").await, 0, "before the first period");
        assert_eq!(runs_of(addr, "boot").await, 1, "the start-up run");
        at(10.1).await;
        assert_eq!(runs_of(addr, "tick").await, 1, "after the first period");
        at(35.0).await;
        assert_eq!(runs_of(addr, "tick").await, 3);
        // Five minutes: one run per period, none made up or doubled, and still one start-up
        // run.
        at(305.0).await;
        assert_eq!(runs_of(addr, "tick").await, 30);
        assert_eq!(runs_of(addr, "boot").await, 1, "start-up runs once");
    })
    .await;
}

/// Sleeps on the virtual clock until the log says `needle`.
async fn until_logged(log: &Log, needle: &str) {
    while log.count(needle) == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_changed_file_runs_once_it_has_been_quiet_for_250_ms() {
    // The test writes the files itself: the kernel queues the inotify event within the
    // write, so the service reads it before the clock can move.
    let inbox = Dir::new("inbox");
    let yaml = format!(
        "defaultPermissions: {{view: true, exec: true, logs: true, kill: true}}
actions:
  - {{id: changed, title: Changed, exec: [{MISSING}], execOnFileChangedInDir: {}}}
",
        inbox.0.display()
    );
    with_service("debounce", &yaml, |addr, log| async move {
        until_logged(&log, "fileChangedInDir of changed: watching").await;
        let file = inbox.0.join("data.csv");
        let began = Instant::now();
        let at = |ms: u64| sleep_until(began + Duration::from_millis(ms));
        // A burst, then one more write 200 ms later: one quiet spell, from the last write.
        for n in 1..=5 {
            std::fs::write(&file, "y".repeat(n)).unwrap();
        }
        at(200).await;
        std::fs::write(&file, "late").unwrap();
        at(440).await;
        assert_eq!(runs_of(addr, "changed").await, 0, "still within the spell");
        at(460).await;
        assert_eq!(runs_of(addr, "changed").await, 1, "once quiet for 250 ms");
        at(5000).await;
        assert_eq!(runs_of(addr, "changed").await, 1, "one run for the spell");
    })
    .await;
}

/// A broker on loopback that answers every CONNECT with `connack` and then closes the
/// connection once the client has sent its next packet (or at once if it sends none);
/// returns when each connection came.
fn flapping_broker(listener: TcpListener, connack: [u8; 4]) -> Arc<Mutex<Vec<Instant>>> {
    let came = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&came);
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            seen.lock().unwrap().push(Instant::now());
            if read_packet(&mut conn).await.is_none() {
                continue;
            }
            let _ = conn.write_all(&connack).await;
            if connack[3] == 0 {
                let _ = read_packet(&mut conn).await;
            }
        }
    });
    came
}

/// Reads one MQTT packet; `None` at the end of the stream.
async fn read_packet(conn: &mut TcpStream) -> Option<()> {
    conn.read_u8().await.ok()?;
    let (mut len, mut shift) = (0usize, 0);
    loop {
        let b = conn.read_u8().await.ok()?;
        len |= usize::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            break;
        }
    }
    let mut body = vec![0; len];
    conn.read_exact(&mut body).await.ok()?;
    Some(())
}

/// The delay before reconnection `n` (from 0): 1 s doubling to 30 s, of which at least half.
fn backoff_bounds(n: usize) -> (Duration, Duration) {
    let full = Duration::from_secs(1 << n.min(5)).min(Duration::from_secs(30));
    (full / 2, full)
}

/// Checks that the connections in `came` are apart by the backoff, never reset.
fn assert_backed_off(came: &[Instant], what: &str) {
    let gaps: Vec<Duration> = came.windows(2).map(|w| w[1] - w[0]).collect();
    eprintln!("{what}: {} connections, apart by {gaps:?}", came.len());
    assert!(came.len() >= 8, "{what}: {} connections", came.len());
    for (n, pair) in came.windows(2).enumerate() {
        let gap = pair[1] - pair[0];
        let (least, most) = backoff_bounds(n);
        // A session ends on the virtual clock at once: the gap is the delay alone.
        assert!(
            gap >= least && gap <= most,
            "{what}: reconnection {n} after {gap:?}, not within {least:?} and {most:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn mqtt_backs_off_from_a_refusing_broker_and_from_sessions_that_do_not_last() {
    // One test, one after the other: the lines about the broker share one rate limit in the
    // process.
    let broker = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = broker.local_addr().unwrap().port();
    // Refused with "not authorized" (what mosquitto answers a wrong password with).
    let came = flapping_broker(broker, [0x20, 0x02, 0x00, 0x05]);
    let yaml = format!(
        "mqtt: {{broker: 'mqtt://127.0.0.1:{port}', nodeId: refused}}
actions:
  - {{id: a, title: A, exec: [{MISSING}]}}
"
    );
    with_service("refused", &yaml, |_, log| async move {
        tokio::time::sleep(Duration::from_secs(300)).await;
        assert_eq!(
            log.count("MQTT: cannot connect"),
            1,
            "said once however often it retries"
        );
    })
    .await;
    assert_backed_off(&came.lock().unwrap(), "refused");

    // Accepted, then dropped at once: only a session that lasted resets the backoff, or such
    // a broker would earn a reconnection (and a full publish) every second.
    let broker = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = broker.local_addr().unwrap().port();
    let came = flapping_broker(broker, [0x20, 0x02, 0x00, 0x00]);
    let yaml = format!(
        "mqtt: {{broker: 'mqtt://127.0.0.1:{port}', nodeId: flapping}}
actions:
  - {{id: a, title: A, exec: [{MISSING}]}}
"
    );
    with_service("flapping", &yaml, |_, _| async move {
        tokio::time::sleep(Duration::from_secs(300)).await;
    })
    .await;
    assert_backed_off(&came.lock().unwrap(), "dropped after CONNACK");
}
