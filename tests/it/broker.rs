//! A real MQTT broker for the MQTT tests: Debian's `mosquitto`, started on a free loopback
//! port in its own temporary directory and killed on drop, with `mosquitto_sub` and
//! `mosquitto_pub` as the independent clients that watch and press. Nothing here speaks MQTT
//! itself, so the tests check actiond against software it did not write.
//!
//! The tests that use it are `#[ignore]`d (a fresh clone need not have mosquitto) and run by
//! name in their own stage of `scripts/test.sh`, which installs mosquitto. When they do run,
//! a missing binary is a loud failure, never a skip.

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::{TempDir, poll_every, wait_until};

/// How long a broker may take to accept connections after it was started.
const BROKER_START: Duration = Duration::from_secs(10);

fn binary(name: &str) -> String {
    for dir in ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"] {
        let path = Path::new(dir).join(name);
        if path.exists() {
            return path.display().to_string();
        }
    }
    panic!(
        "{name} is not installed: the MQTT tests need Debian's mosquitto and mosquitto-clients \
         (scripts/test.sh installs them)"
    );
}

/// One mosquitto. Credentials, when given, are required of every client.
pub struct Broker {
    pub port: u16,
    dir: TempDir,
    child: Option<Child>,
    auth: Option<(String, String)>,
}

impl Broker {
    /// A broker that lets anyone in.
    pub fn start() -> Broker {
        Broker::start_with(None)
    }

    /// A broker that accepts only `user` with `password`.
    pub fn start_with_user(user: &str, password: &str) -> Broker {
        Broker::start_with(Some((user.to_string(), password.to_string())))
    }

    /// A broker that lets anyone in and bridges to the broker at `central` (a port on
    /// loopback) with the bridge lines docs/home-assistant.md gives for many sites: presses
    /// and states both ways, discovery out, Home Assistant's status in. The bridge retries a
    /// lost link after a second.
    pub fn start_bridged(central: u16) -> Broker {
        let mut broker = Broker::configured(
            None,
            &format!(
                "connection central\naddress 127.0.0.1:{central}\nrestart_timeout 1\n\
                 topic actiond/# both 1\ntopic homeassistant/# out 1\n\
                 topic homeassistant/status in 1\n"
            ),
        );
        broker.launch();
        broker
    }

    fn start_with(auth: Option<(String, String)>) -> Broker {
        let mut broker = Broker::configured(auth, "");
        broker.launch();
        broker
    }

    /// Writes the broker's config (with `extra` lines at its end); not started.
    fn configured(auth: Option<(String, String)>, extra: &str) -> Broker {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let dir = TempDir::new();
        let mut conf = format!(
            "listener {port} 127.0.0.1\npersistence false\nlog_dest stderr\nlog_type error\n\
             log_type warning\nlog_type notice\n"
        );
        if let Some((user, password)) = &auth {
            let file = dir.path().join("passwords");
            let status = Command::new(binary("mosquitto_passwd"))
                .args(["-c", "-b"])
                .arg(&file)
                .args([user, password])
                .stdout(Stdio::null())
                .status()
                .expect("run mosquitto_passwd");
            assert!(status.success(), "mosquitto_passwd failed");
            conf.push_str(&format!(
                "allow_anonymous false\npassword_file {}\n",
                file.display()
            ));
        } else {
            conf.push_str("allow_anonymous true\n");
        }
        conf.push_str(extra);
        std::fs::write(dir.path().join("mosquitto.conf"), conf).expect("write mosquitto.conf");
        Broker {
            port,
            dir,
            child: None,
            auth,
        }
    }

    fn launch(&mut self) {
        let mut child = Command::new(binary("mosquitto"))
            .arg("-c")
            .arg(self.dir.path().join("mosquitto.conf"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mosquitto");
        let stderr = child.stderr.take().expect("mosquitto stderr");
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("[mosquitto] {line}");
            }
        });
        let port = self.port;
        let up = wait_until(BROKER_START, || {
            TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        assert!(
            up,
            "mosquitto did not listen on port {port} within {BROKER_START:?}"
        );
        self.child = Some(child);
    }

    /// Kills the broker at once, as a crash would (its retained messages are lost: it keeps
    /// none on disk).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port.
    pub fn restart(&mut self) {
        self.kill();
        self.launch();
    }

    /// The broker as actiond's config names it.
    pub fn url(&self) -> String {
        format!("mqtt://127.0.0.1:{}", self.port)
    }

    fn client_args(&self) -> Vec<String> {
        let mut args = vec![
            "-h".to_string(),
            "127.0.0.1".to_string(),
            "-p".to_string(),
            self.port.to_string(),
        ];
        if let Some((user, password)) = &self.auth {
            args.extend(["-u".into(), user.clone(), "-P".into(), password.clone()]);
        }
        args
    }

    /// Publishes `payload` to `topic` (retained if asked) with mosquitto_pub.
    pub fn publish(&self, topic: &str, payload: &str, retain: bool) {
        let mut cmd = Command::new(binary("mosquitto_pub"));
        cmd.args(self.client_args())
            .args(["-t", topic, "-m", payload]);
        if retain {
            cmd.arg("-r");
        }
        let status = cmd.status().expect("run mosquitto_pub");
        assert!(status.success(), "mosquitto_pub to {topic} failed");
    }

    /// Publishes `payload` to `topic` `count` times from one client, as fast as the broker
    /// takes them (mosquitto_pub reading one message per line).
    pub fn publish_many(&self, topic: &str, payload: &str, count: usize) {
        use std::io::Write;
        let mut child = Command::new(binary("mosquitto_pub"))
            .args(self.client_args())
            .args(["-t", topic, "-l"])
            .stdin(Stdio::piped())
            .spawn()
            .expect("run mosquitto_pub");
        let mut stdin = child.stdin.take().expect("mosquitto_pub's stdin");
        stdin
            .write_all(format!("{payload}\n").repeat(count).as_bytes())
            .expect("write to mosquitto_pub");
        drop(stdin);
        let status = child.wait().expect("wait for mosquitto_pub");
        assert!(status.success(), "mosquitto_pub to {topic} failed");
    }

    /// Every retained message under `filter` right now, read by a fresh client: topic →
    /// payload. Empty payloads are not retained, so they never appear.
    pub fn retained(&self, filter: &str) -> Vec<(String, String)> {
        let out = Command::new(binary("mosquitto_sub"))
            .args(self.client_args())
            .args(["-t", filter, "--retained-only", "-W", "1", "-F", "%j"])
            .stderr(Stdio::null())
            .output()
            .expect("run mosquitto_sub");
        let mut found: Vec<(String, String)> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(Message::parse)
            .map(|m| (m.topic, m.payload))
            .collect();
        found.sort();
        found
    }

    /// The retained payload of one topic, if any.
    pub fn retained_one(&self, topic: &str) -> Option<String> {
        self.retained(topic).into_iter().next().map(|(_, p)| p)
    }

    /// Waits until the retained payload of `topic` satisfies `want`; returns it.
    pub fn wait_retained(
        &self,
        topic: &str,
        timeout: Duration,
        want: impl Fn(&str) -> bool,
    ) -> String {
        let mut now = None;
        let found = poll_every(Duration::from_millis(100), timeout, || {
            now = self.retained_one(topic);
            now.clone().filter(|p| want(p))
        });
        found.unwrap_or_else(|| panic!("retained {topic} is {now:?} after {timeout:?}"))
    }

    /// A client that records every message under `filter` from now on.
    pub fn subscribe(&self, filter: &str) -> Subscriber {
        let mut child = Command::new(binary("mosquitto_sub"))
            .args(self.client_args())
            .args(["-t", filter, "-t", "probe/#", "-F", "%j"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start mosquitto_sub");
        let stdout = child.stdout.take().expect("mosquitto_sub stdout");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(m) = Message::parse(&line) {
                    sink.lock().unwrap().push(m);
                }
            }
        });
        let sub = Subscriber { child, seen };
        // Subscribed once it sees its own probe (sent again until it does).
        let probe = format!("probe/{}", std::process::id());
        let deadline = Instant::now() + BROKER_START;
        loop {
            self.publish(&probe, "x", false);
            if wait_until(Duration::from_millis(500), || !sub.on(&probe).is_empty()) {
                return sub;
            }
            assert!(Instant::now() < deadline, "mosquitto_sub did not start");
        }
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One message as `mosquitto_sub -F %j` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub topic: String,
    pub payload: String,
    pub retain: bool,
}

impl Message {
    fn parse(line: &str) -> Option<Message> {
        let v: Value = serde_json::from_str(line).ok()?;
        Some(Message {
            topic: v["topic"].as_str()?.to_string(),
            payload: v["payload"].as_str().unwrap_or_default().to_string(),
            retain: v["retain"].as_bool().unwrap_or(v["retain"] == 1),
        })
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.payload)
            .unwrap_or_else(|e| panic!("{} is not JSON ({e}): {}", self.topic, self.payload))
    }
}

/// A running `mosquitto_sub`.
pub struct Subscriber {
    child: Child,
    seen: Arc<Mutex<Vec<Message>>>,
}

impl Subscriber {
    pub fn messages(&self) -> Vec<Message> {
        self.seen.lock().unwrap().clone()
    }

    /// The messages on `topic` so far, oldest first.
    pub fn on(&self, topic: &str) -> Vec<Message> {
        self.messages()
            .into_iter()
            .filter(|m| m.topic == topic)
            .collect()
    }

    /// Waits for a message on `topic` satisfying `want`; returns it.
    pub fn wait_for(
        &self,
        topic: &str,
        timeout: Duration,
        want: impl Fn(&Message) -> bool,
    ) -> Message {
        let mut found = None;
        let ok = wait_until(timeout, || {
            found = self.on(topic).into_iter().find(|m| want(m));
            found.is_some()
        });
        assert!(
            ok,
            "no matching message on {topic} within {timeout:?}; seen there: {:?}",
            self.on(topic)
        );
        found.unwrap()
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Writes `text` to `name` in `dir` and returns its path (a password file for actiond).
pub fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write file");
    path
}

/// A TCP relay on a free loopback port to `target`, for a link the test can break: `cut`
/// closes every connection it carries (as a Wi-Fi drop or a restart of the far end would, for
/// the near end) and the relay goes on accepting new ones.
pub struct Relay {
    pub port: u16,
    /// The connections accepted so far, and the sockets of those open.
    state: Arc<Mutex<(usize, Vec<TcpStream>)>>,
}

impl Relay {
    pub fn to(target: u16) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let port = listener.local_addr().expect("its address").port();
        let state = Arc::new(Mutex::new((0, Vec::new())));
        let shared = Arc::clone(&state);
        thread::spawn(move || {
            for near in listener.incoming().map_while(Result::ok) {
                let Ok(far) = TcpStream::connect(("127.0.0.1", target)) else {
                    continue;
                };
                let pipes = [
                    (near.try_clone(), far.try_clone()),
                    (far.try_clone(), near.try_clone()),
                ];
                for (from, to) in pipes {
                    if let (Ok(mut from), Ok(mut to)) = (from, to) {
                        thread::spawn(move || {
                            let _ = std::io::copy(&mut from, &mut to);
                            let _ = to.shutdown(std::net::Shutdown::Both);
                        });
                    }
                }
                let mut s = shared.lock().unwrap();
                s.0 += 1;
                s.1.extend([near, far]);
            }
        });
        Relay { port, state }
    }

    /// How many connections it has accepted.
    pub fn accepted(&self) -> usize {
        self.state.lock().unwrap().0
    }

    /// Closes every connection it carries.
    pub fn cut(&self) {
        for s in self.state.lock().unwrap().1.drain(..) {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
}
