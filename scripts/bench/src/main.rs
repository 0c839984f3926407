//! The helper programs of `scripts/bench.sh`, one binary with seven subcommands. Each prints
//! one JSON object on stdout and exits non-zero when something the benchmark relies on broke,
//! so a wrong answer never passes as a fast one.
//!
//! - `spawn`: the baseline, the physical limit of running a command. It starts the command the
//!   way actiond's executor does (`/bin/sh -c CMD` through std's posix_spawn path, leader of a
//!   new process group, stdin from /dev/null, stdout and stderr piped and read to the end,
//!   the same three `ACTIOND*` variables added to the environment), waits for it, and repeats,
//!   from N threads at once.
//! - `http`: N keep-alive HTTP/1.1 clients, each sending one request after the other for a
//!   duration or a total count; every answer must be 200 and contain the expected text.
//! - `startup`: starts a server and times it until its first successful answer.
//! - `fsync`: the disk's own price of a durable append, the floor under a history kept on
//!   disk: appends a line of B bytes to a new file in a directory and `fdatasync`s it, C
//!   times, and reports the latency of each append and the helper's own CPU per append.
//! - `subscribe`: N Connect event-stream subscribers that read everything for a duration.
//! - `ready`: waits until a server answers 200 on a path.
//! - `report`: turns the raw figures of all runs into the tables (Markdown) and JSON: each
//!   figure as the median of the runs with min and max, and each ratio computed within a run
//!   (both sides measured minutes apart on the same machine) before taking its median; then
//!   the targets, each beside its limit with PASS or FAIL (`report.rs`).
//!
//! Only std: the package builds offline in seconds on a fresh machine.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

mod report;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((cmd, rest)) = args.split_first() else {
        return usage();
    };
    let result = match cmd.as_str() {
        "spawn" => spawn(&Opts::parse(rest)),
        "http" => http(&Opts::parse(rest)),
        "startup" => startup(rest),
        "subscribe" => subscribe(&Opts::parse(rest)),
        "fsync" => fsync(&Opts::parse(rest)),
        "ready" => ready(&Opts::parse(rest)),
        "report" => report::report(&Opts::parse(rest)),
        _ => return usage(),
    };
    match result {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("actiond-bench {cmd}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: actiond-bench spawn --threads N (--secs S | --count C) --cmd CMD [--cwd DIR]\n\
         \x20      actiond-bench http --addr HOST:PORT --conns N (--secs S | --count C) \
         [--method M] --path P [--body B] [--expect TEXT]\n\
         \x20      actiond-bench startup --addr HOST:PORT --path P -- PROGRAM [ARGS...]\n\
         \x20      actiond-bench subscribe --addr HOST:PORT --conns N --secs S\n\
         \x20      actiond-bench fsync --dir DIR --count C [--bytes B]\n\
         \x20      actiond-bench ready --addr HOST:PORT --path P\n\
         \x20      actiond-bench report --raw FILE --md FILE --json FILE [--title TEXT]"
    );
    ExitCode::from(2)
}

/// `--name value` options.
pub(crate) struct Opts(Vec<(String, String)>);

impl Opts {
    fn parse(args: &[String]) -> Opts {
        let mut out = Vec::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            if let Some(name) = a.strip_prefix("--") {
                out.push((name.to_string(), it.next().cloned().unwrap_or_default()));
            }
        }
        Opts(out)
    }
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
    fn num(&self, name: &str) -> Option<u64> {
        self.get(name).and_then(|v| v.parse().ok())
    }
    pub(crate) fn need(&self, name: &str) -> Result<&str, String> {
        self.get(name)
            .ok_or_else(|| format!("--{name} is required"))
    }
}

/// When a worker stops: after a duration, or once a shared counter reaches a total.
#[derive(Clone)]
struct Budget {
    until: Option<Instant>,
    total: Option<u64>,
    taken: Arc<AtomicU64>,
}

impl Budget {
    fn from(o: &Opts) -> Result<Budget, String> {
        let until = o
            .num("secs")
            .map(|s| Instant::now() + Duration::from_secs(s));
        let total = o.num("count");
        if until.is_none() && total.is_none() {
            return Err("--secs or --count is required".into());
        }
        Ok(Budget {
            until,
            total,
            taken: Arc::new(AtomicU64::new(0)),
        })
    }
    /// Claims one more operation, or says it is time to stop.
    fn next(&self) -> bool {
        if self.until.is_some_and(|u| Instant::now() >= u) {
            return false;
        }
        match self.total {
            Some(t) => self.taken.fetch_add(1, Ordering::Relaxed) < t,
            None => true,
        }
    }
}

/// Latencies in nanoseconds, summarised.
fn summary(mut lat: Vec<u64>, errors: u64, elapsed: Duration) -> String {
    lat.sort_unstable();
    let pct = |p: f64| -> f64 {
        if lat.is_empty() {
            return 0.0;
        }
        let i = ((lat.len() as f64 - 1.0) * p).round() as usize;
        lat[i] as f64 / 1000.0
    };
    let secs = elapsed.as_secs_f64();
    format!(
        "{{\"ops\":{},\"errors\":{errors},\"secs\":{secs:.3},\"rate\":{:.1},\"p50_us\":{:.1},\"p99_us\":{:.1}}}",
        lat.len(),
        lat.len() as f64 / secs,
        pct(0.50),
        pct(0.99)
    )
}

/// Runs `work` on `threads` threads until the budget is spent; each call returns the
/// latency of one operation, or an error. Returns the summary.
fn run_threads<F>(threads: u64, budget: Budget, work: F) -> Result<String, String>
where
    F: Fn(u64, &Budget) -> Result<Vec<u64>, String> + Send + Sync + 'static,
{
    let work = Arc::new(work);
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            let (work, budget) = (Arc::clone(&work), budget.clone());
            thread::spawn(move || work(i, &budget))
        })
        .collect();
    let mut all = Vec::new();
    let mut errors = 0;
    for h in handles {
        match h.join().map_err(|_| "a worker panicked".to_string())? {
            Ok(lat) => all.extend(lat),
            Err(e) => {
                eprintln!("{e}");
                errors += 1;
            }
        }
    }
    let elapsed = start.elapsed();
    if errors > 0 {
        return Err(format!("{errors} worker(s) failed"));
    }
    Ok(summary(all, 0, elapsed))
}

// ---------------------------------------------------------------------------------------
// spawn: the baseline

/// How long each `spawn()` call held its thread: from the start of the call until the child
/// has exec'd (posix_spawn uses vfork, so the caller sleeps until then). A spawner with one
/// thread, like actiond's single-threaded runtime, can start at most one process per this
/// long, whatever the number of cores.
static HELD: Mutex<Vec<u64>> = Mutex::new(Vec::new());

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn spawn(o: &Opts) -> Result<String, String> {
    let threads = o.num("threads").unwrap_or(1);
    let cmd = o.need("cmd")?.to_string();
    let cwd = o.get("cwd").unwrap_or("/").to_string();
    let budget = Budget::from(o)?;
    let hz = o.num("hz").unwrap_or(100) as f64;
    let cpu_before = own_cpu_ticks()?;
    let summary = run_threads(threads, budget, move |_, budget| {
        let mut lat = Vec::new();
        let mut sink = Vec::with_capacity(16 * 1024);
        let mut held = Vec::new();
        while budget.next() {
            let t = Instant::now();
            let mut child = Command::new("/bin/sh")
                .arg("-c")
                .arg(&cmd)
                .env("ACTIOND", "1")
                .env(
                    "ACTIOND_TRACKING_ID",
                    "00000000-0000-4000-8000-000000000000",
                )
                .env("ACTIOND_USER", "guest")
                .current_dir(&cwd)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0)
                .spawn()
                .map_err(|e| format!("spawn: {e}"))?;
            held.push(t.elapsed().as_nanos() as u64);
            // Both pipes to their end, as the executor reads them. The commands benchmarked
            // print a few bytes, far below a pipe's buffer, so reading them one after the
            // other cannot deadlock.
            sink.clear();
            if let Some(mut out) = child.stdout.take() {
                out.read_to_end(&mut sink).map_err(|e| e.to_string())?;
            }
            if let Some(mut err) = child.stderr.take() {
                err.read_to_end(&mut sink).map_err(|e| e.to_string())?;
            }
            let status = child.wait().map_err(|e| e.to_string())?;
            if !status.success() {
                return Err(format!("{cmd}: {status}"));
            }
            lat.push(t.elapsed().as_nanos() as u64);
        }
        lock(&HELD).extend(held);
        Ok(lat)
    })?;
    let mut held = std::mem::take(&mut *lock(&HELD));
    held.sort_unstable();
    let held_p50 = held.get(held.len() / 2).copied().unwrap_or(0) as f64 / 1000.0;
    // The spawner's own CPU (its threads, not the children it waited for) per command: the
    // least any server that starts the same command must spend on it.
    let ops = held.len().max(1) as f64;
    let cpu_per_op_us = (own_cpu_ticks()? - cpu_before) as f64 / hz / ops * 1e6;
    Ok(format!(
        "{},\"held_p50_us\":{held_p50:.1},\"cpu_per_op_us\":{cpu_per_op_us:.1}}}",
        summary.trim_end_matches('}')
    ))
}

/// Appends `--bytes` (one line) to a new file in `--dir` and fdatasyncs it, `--count`
/// times, as the history file's writer does with a batch when nothing else waits: what
/// one durable append costs on this file system, in time and in the caller's own CPU
/// (the file system's work done in the caller's thread, under `fdatasync`). The CPU is the
/// thread's on-CPU time from `/proc/thread-self/schedstat`, in nanoseconds: clock ticks
/// (10 ms) would round a quick run's few hundred appends to a quarter of a figure. The file
/// is removed at the end.
fn fsync(o: &Opts) -> Result<String, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = o.need("dir")?;
    let count = o.num("count").ok_or("--count is required")?.max(1);
    let bytes = o.num("bytes").unwrap_or(400).max(1) as usize;
    let path = std::path::Path::new(dir).join(format!("fsync-{}.tmp", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut line = vec![b'x'; bytes];
    line[bytes - 1] = b'\n';
    let cpu_before = thread_cpu_ns()?;
    let began = Instant::now();
    let mut lat = Vec::with_capacity(count as usize);
    let result = (0..count).try_for_each(|_| {
        let t = Instant::now();
        file.write_all(&line)?;
        file.sync_data()?;
        lat.push(t.elapsed().as_nanos() as u64);
        Ok::<(), std::io::Error>(())
    });
    let cpu_per_op_us = (thread_cpu_ns()? - cpu_before) as f64 / count as f64 / 1e3;
    let elapsed = began.elapsed();
    let _ = std::fs::remove_file(&path);
    result.map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(format!(
        "{},\"cpu_per_op_us\":{cpu_per_op_us:.1}}}",
        summary(lat, 0, elapsed).trim_end_matches('}')
    ))
}

/// The calling thread's time on a CPU (user and system), in nanoseconds.
fn thread_cpu_ns() -> Result<u64, String> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").map_err(|e| e.to_string())?;
    stat.split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("unreadable /proc/thread-self/schedstat: {stat:?}"))
}

/// utime + stime of this process (all its threads, no children) in clock ticks.
fn own_cpu_ticks() -> Result<u64, String> {
    let stat = std::fs::read_to_string("/proc/self/stat").map_err(|e| e.to_string())?;
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    Ok(num(11) + num(12))
}

// ---------------------------------------------------------------------------------------
// http: keep-alive clients

/// Reads one HTTP/1.1 response: (status, body). Handles Content-Length and chunked bodies.
fn read_response(r: &mut BufReader<TcpStream>) -> Result<(u16, Vec<u8>), String> {
    let mut line = String::new();
    if r.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
        return Err("connection closed".into());
    }
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad status line {line:?}"))?;
    let mut length = None;
    let mut chunked = false;
    loop {
        line.clear();
        r.read_line(&mut line).map_err(|e| e.to_string())?;
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let lower = l.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse::<usize>().ok();
        } else if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            line.clear();
            r.read_line(&mut line).map_err(|e| e.to_string())?;
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                .map_err(|_| format!("bad chunk size {line:?}"))?;
            let start = body.len();
            body.resize(start + size, 0);
            r.read_exact(&mut body[start..])
                .map_err(|e| e.to_string())?;
            line.clear();
            r.read_line(&mut line).map_err(|e| e.to_string())?;
            if size == 0 {
                break;
            }
        }
    } else if let Some(n) = length {
        body.resize(n, 0);
        r.read_exact(&mut body).map_err(|e| e.to_string())?;
    }
    Ok((status, body))
}

fn connect(addr: SocketAddr) -> Result<(TcpStream, BufReader<TcpStream>), String> {
    let s = TcpStream::connect(addr).map_err(|e| format!("connect {addr}: {e}"))?;
    s.set_nodelay(true).ok();
    s.set_read_timeout(Some(Duration::from_secs(30))).ok();
    let r = BufReader::new(s.try_clone().map_err(|e| e.to_string())?);
    Ok((s, r))
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
}

fn http(o: &Opts) -> Result<String, String> {
    let addr: SocketAddr = o
        .need("addr")?
        .parse()
        .map_err(|e| format!("--addr: {e}"))?;
    let conns = o.num("conns").unwrap_or(1);
    let method = o.get("method").unwrap_or("GET");
    let path = o.need("path")?;
    let body = o.get("body").unwrap_or("");
    let expect = o.get("expect").unwrap_or("").as_bytes().to_vec();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\n");
    if method != "GET" {
        req.push_str(&format!(
            "Content-Type: application/json\r\nConnect-Protocol-Version: 1\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    req.push_str("\r\n");
    req.push_str(body);
    let req = req.into_bytes();
    let budget = Budget::from(o)?;
    run_threads(conns, budget, move |_, budget| {
        let (mut w, mut r) = connect(addr)?;
        let mut lat = Vec::new();
        while budget.next() {
            let t = Instant::now();
            w.write_all(&req).map_err(|e| e.to_string())?;
            let (status, answer) = read_response(&mut r)?;
            if status != 200 || !contains(&answer, &expect) {
                return Err(format!(
                    "unexpected answer {status}: {}",
                    String::from_utf8_lossy(&answer)
                ));
            }
            lat.push(t.elapsed().as_nanos() as u64);
        }
        Ok(lat)
    })
}

// ---------------------------------------------------------------------------------------
// startup

fn startup(args: &[String]) -> Result<String, String> {
    let split = args
        .iter()
        .position(|a| a == "--")
        .ok_or("-- PROGRAM is required")?;
    let o = Opts::parse(&args[..split]);
    let argv = &args[split + 1..];
    let addr: SocketAddr = o
        .need("addr")?
        .parse()
        .map_err(|e| format!("--addr: {e}"))?;
    let path = o.need("path")?;
    let (program, rest) = argv.split_first().ok_or("no program")?;
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    let t = Instant::now();
    let mut child = Command::new(program)
        .args(rest)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{program}: {e}"))?;
    let result = loop {
        if t.elapsed() > Duration::from_secs(20) {
            break Err("no answer within 20 s".to_string());
        }
        if let Ok(Some(status)) = child.try_wait() {
            break Err(format!("{program} exited: {status}"));
        }
        let ok = connect(addr).ok().and_then(|(mut w, mut r)| {
            w.write_all(req.as_bytes()).ok()?;
            read_response(&mut r).ok()
        });
        match ok {
            Some((200, _)) => break Ok(t.elapsed()),
            _ => thread::sleep(Duration::from_micros(500)),
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    let elapsed = result?;
    Ok(format!("{{\"ms\":{:.2}}}", elapsed.as_secs_f64() * 1000.0))
}

// ---------------------------------------------------------------------------------------
// subscribe

fn subscribe(o: &Opts) -> Result<String, String> {
    let addr: SocketAddr = o
        .need("addr")?
        .parse()
        .map_err(|e| format!("--addr: {e}"))?;
    let conns = o.num("conns").unwrap_or(1);
    let secs = o.num("secs").ok_or("--secs is required")?;
    let until = Instant::now() + Duration::from_secs(secs);
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..conns)
        .map(|_| {
            let stop = Arc::clone(&stop);
            thread::spawn(move || -> Result<u64, String> {
                let (mut w, mut r) = connect(addr)?;
                r.get_ref()
                    .set_read_timeout(Some(Duration::from_millis(200)))
                    .ok();
                // One Connect envelope: flag 0, length 2, `{}`.
                let envelope = b"\0\0\0\0\x02{}";
                let head = format!(
                    "POST /api/EventStream HTTP/1.1\r\nHost: {addr}\r\n\
                     Content-Type: application/connect+json\r\nConnect-Protocol-Version: 1\r\n\
                     Content-Length: {}\r\n\r\n",
                    envelope.len()
                );
                w.write_all(head.as_bytes()).map_err(|e| e.to_string())?;
                w.write_all(envelope).map_err(|e| e.to_string())?;
                let mut total = 0u64;
                let mut buf = [0u8; 16 * 1024];
                while !stop.load(Ordering::Relaxed) && Instant::now() < until {
                    match r.read(&mut buf) {
                        Ok(0) => return Err("the event stream ended early".into()),
                        Ok(n) => total += n as u64,
                        Err(e)
                            if matches!(
                                e.kind(),
                                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                            ) => {}
                        Err(e) => return Err(e.to_string()),
                    }
                }
                Ok(total)
            })
        })
        .collect();
    let mut bytes = 0;
    for h in handles {
        bytes += h
            .join()
            .map_err(|_| "a subscriber panicked".to_string())??;
    }
    stop.store(true, Ordering::Relaxed);
    Ok(format!("{{\"subscribers\":{conns},\"bytes\":{bytes}}}"))
}

// ---------------------------------------------------------------------------------------
// ready

fn ready(o: &Opts) -> Result<String, String> {
    let addr: SocketAddr = o
        .need("addr")?
        .parse()
        .map_err(|e| format!("--addr: {e}"))?;
    let path = o.need("path")?;
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(20) {
        let ok = connect(addr).ok().and_then(|(mut w, mut r)| {
            w.write_all(req.as_bytes()).ok()?;
            read_response(&mut r).ok()
        });
        if let Some((200, _)) = ok {
            return Ok(format!(
                "{{\"ms\":{:.2}}}",
                t.elapsed().as_secs_f64() * 1000.0
            ));
        }
        thread::sleep(Duration::from_millis(2));
    }
    Err(format!("{addr}{path} did not answer 200 within 20 s"))
}
