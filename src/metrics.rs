//! Metrics for `/metrics` (the `prometheus` settings): counters the engine and the config
//! watcher feed, and the Prometheus text exposition format as a pure function of a sample.
//! It owns the metric names, the outcome labels, the histogram buckets and the bound on how
//! many actions get their own series. It must not read the engine's tables itself (the API
//! gathers a sample) nor decide who may see what (the permission function does).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use crate::execution::Flags;

/// Upper bounds (seconds) of the duration histogram's buckets: fixed, from a quick command
/// to the longest timeout most actions have.
pub const BUCKETS: [f64; 11] = [
    0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0, 3600.0,
];

/// At most this many actions get series of their own; the executions of any further ones
/// (entity instances that come and go) are counted under the action label `OTHER`, so a
/// long-running service's metrics cannot grow without bound.
pub const MAX_ACTION_LABELS: usize = 512;
pub const OTHER: &str = "_other";

/// The outcome label of a finished execution.
pub fn outcome(flags: &Flags) -> &'static str {
    if flags.blocked {
        "blocked"
    } else if flags.timed_out {
        "timed_out"
    } else if !flags.execution_started {
        "failed_to_start"
    } else if flags.exit_code == 0 {
        "succeeded"
    } else if flags.exit_code == -1 {
        "killed"
    } else {
        "failed"
    }
}

/// What is counted for one action.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PerAction {
    /// Finished executions by outcome label.
    pub outcomes: BTreeMap<&'static str, u64>,
    /// Executions that ran, per bucket of `BUCKETS` (not cumulative).
    pub buckets: [u64; BUCKETS.len()],
    /// Executions that ran, and their total duration in seconds.
    pub count: u64,
    pub sum: f64,
}

#[derive(Debug, Default)]
struct Counters {
    actions: BTreeMap<String, PerAction>,
    reloads_ok: u64,
    reloads_failed: u64,
}

/// The counters, shared by the engine (executions) and the watcher (reloads).
#[derive(Debug, Default)]
pub struct Metrics(Mutex<Counters>);

impl Metrics {
    fn lock(&self) -> MutexGuard<'_, Counters> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts a finished execution of `binding_id`; `ran` is how long its process ran (none
    /// for a blocked one or one that could not start).
    pub fn finished(&self, binding_id: &str, flags: &Flags, ran: Option<Duration>) {
        let mut c = self.lock();
        let key = if c.actions.contains_key(binding_id) || c.actions.len() < MAX_ACTION_LABELS {
            binding_id
        } else {
            OTHER
        };
        let a = c.actions.entry(key.to_string()).or_default();
        *a.outcomes.entry(outcome(flags)).or_default() += 1;
        if let Some(d) = ran.filter(|_| flags.execution_started) {
            let secs = d.as_secs_f64();
            if let Some(i) = BUCKETS.iter().position(|le| secs <= *le) {
                a.buckets[i] += 1;
            }
            a.count += 1;
            a.sum += secs;
        }
    }

    /// Counts a config reload that was applied (`true`) or refused.
    pub fn reloaded(&self, ok: bool) {
        let mut c = self.lock();
        if ok {
            c.reloads_ok += 1;
        } else {
            c.reloads_failed += 1;
        }
    }

    /// The per-action counters of the actions `keep` allows, and the reload counters.
    pub fn counted(&self, keep: impl Fn(&str) -> bool) -> (Vec<(String, PerAction)>, u64, u64) {
        let c = self.lock();
        let actions = c
            .actions
            .iter()
            .filter(|(id, _)| keep(id))
            .map(|(id, a)| (id.clone(), a.clone()))
            .collect();
        (actions, c.reloads_ok, c.reloads_failed)
    }
}

/// Everything one scrape shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sample {
    pub actions: Vec<(String, PerAction)>,
    pub running: usize,
    pub history: usize,
    pub reloads_ok: u64,
    pub reloads_failed: u64,
    pub subscribers: usize,
    /// Resident memory of the process, when /proc could be read.
    pub rss_bytes: Option<u64>,
    /// The history file's writer, when there is a state directory.
    pub history_file: Option<HistoryFile>,
}

/// What the history file's writer has done since start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HistoryFile {
    /// Records written (and fsynced, per `historySync`).
    pub records: u64,
    /// fsync calls: one per batch of records under load, plus those of compactions.
    pub syncs: u64,
    /// Records waiting to be written now.
    pub waiting: u64,
}

/// A label value with `\`, `"` and newlines escaped, as the text format requires.
fn label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// One series without labels: its header and its value.
fn single(out: &mut String, name: &str, kind: &str, help: &str, value: impl std::fmt::Display) {
    header(out, name, kind, help);
    let _ = writeln!(out, "{name} {value}");
}

/// The sample in the Prometheus text exposition format (version 0.0.4).
pub fn render(s: &Sample) -> String {
    let mut out = String::new();
    executions(&mut out, s);
    single(
        &mut out,
        "actiond_history_entries",
        "gauge",
        "Execution records kept in the history.",
        s.history,
    );
    header(
        &mut out,
        "actiond_config_reloads_total",
        "counter",
        "Config reloads since start, by result.",
    );
    let _ = writeln!(
        out,
        "actiond_config_reloads_total{{result=\"success\"}} {}",
        s.reloads_ok
    );
    let _ = writeln!(
        out,
        "actiond_config_reloads_total{{result=\"failure\"}} {}",
        s.reloads_failed
    );
    single(
        &mut out,
        "actiond_event_subscribers",
        "gauge",
        "Open event streams.",
        s.subscribers,
    );
    if let Some(h) = &s.history_file {
        single(
            &mut out,
            "actiond_history_file_records_total",
            "counter",
            "Records written to the history file.",
            h.records,
        );
        single(
            &mut out,
            "actiond_history_file_syncs_total",
            "counter",
            "fsync calls on the history file (one per batch of records).",
            h.syncs,
        );
        single(
            &mut out,
            "actiond_history_file_waiting",
            "gauge",
            "Records waiting to be written to the history file.",
            h.waiting,
        );
    }
    if let Some(rss) = s.rss_bytes {
        single(
            &mut out,
            "process_resident_memory_bytes",
            "gauge",
            "Resident memory size in bytes.",
            rss,
        );
    }
    out
}

/// The per-action series: executions by outcome, those running, and the duration histogram.
fn executions(out: &mut String, s: &Sample) {
    header(
        out,
        "actiond_executions_total",
        "counter",
        "Executions that finished, by action and outcome.",
    );
    for (id, a) in &s.actions {
        for (outcome, n) in &a.outcomes {
            let _ = writeln!(
                out,
                "actiond_executions_total{{action=\"{}\",outcome=\"{outcome}\"}} {n}",
                label(id)
            );
        }
    }
    single(
        out,
        "actiond_executions_running",
        "gauge",
        "Executions running now.",
        s.running,
    );
    header(
        out,
        "actiond_execution_duration_seconds",
        "histogram",
        "How long executions ran, by action.",
    );
    for (id, a) in s.actions.iter().filter(|(_, a)| a.count > 0) {
        let id = label(id);
        let mut cumulative = 0;
        for (le, n) in BUCKETS.iter().zip(a.buckets) {
            cumulative += n;
            let _ = writeln!(
                out,
                "actiond_execution_duration_seconds_bucket{{action=\"{id}\",le=\"{le}\"}} {cumulative}"
            );
        }
        let _ = writeln!(
            out,
            "actiond_execution_duration_seconds_bucket{{action=\"{id}\",le=\"+Inf\"}} {}",
            a.count
        );
        let _ = writeln!(
            out,
            "actiond_execution_duration_seconds_sum{{action=\"{id}\"}} {}",
            a.sum
        );
        let _ = writeln!(
            out,
            "actiond_execution_duration_seconds_count{{action=\"{id}\"}} {}",
            a.count
        );
    }
}

/// The process's resident memory, from `/proc/self/statm` (pages) and the page size.
pub fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    let page = nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()?;
    Some(pages * u64::try_from(page).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(started: bool, blocked: bool, timed_out: bool, exit_code: i32) -> Flags {
        Flags {
            execution_started: started,
            execution_finished: true,
            blocked,
            timed_out,
            exit_code,
        }
    }

    #[test]
    fn outcomes_are_named_from_the_flags() {
        for (f, want) in [
            (flags(true, false, false, 0), "succeeded"),
            (flags(true, false, false, 3), "failed"),
            (flags(true, false, false, -1), "killed"),
            (flags(true, false, true, -1), "timed_out"),
            (flags(false, true, false, -1), "blocked"),
            (flags(false, false, false, -1), "failed_to_start"),
        ] {
            assert_eq!(outcome(&f), want, "{f:?}");
        }
    }

    #[test]
    fn render_writes_the_text_format() {
        let m = Metrics::default();
        let ms = Duration::from_millis;
        m.finished("date", &flags(true, false, false, 0), Some(ms(50)));
        m.finished("date", &flags(true, false, false, 0), Some(ms(700)));
        m.finished("date", &flags(false, true, false, -1), None);
        m.finished("odd\"id\\\n", &flags(true, false, false, 1), Some(ms(4000)));
        m.reloaded(true);
        m.reloaded(false);
        m.reloaded(true);
        let (actions, reloads_ok, reloads_failed) = m.counted(|_| true);
        let sample = Sample {
            actions,
            running: 2,
            history: 4,
            reloads_ok,
            reloads_failed,
            subscribers: 1,
            rss_bytes: Some(4096),
            history_file: Some(HistoryFile {
                records: 7,
                syncs: 3,
                waiting: 1,
            }),
        };
        let text = render(&sample);
        let cases = [
            "# TYPE actiond_executions_total counter",
            "actiond_executions_total{action=\"date\",outcome=\"blocked\"} 1",
            "actiond_executions_total{action=\"date\",outcome=\"succeeded\"} 2",
            "actiond_executions_total{action=\"odd\\\"id\\\\\\n\",outcome=\"failed\"} 1",
            "actiond_executions_running 2",
            "# TYPE actiond_execution_duration_seconds histogram",
            "actiond_execution_duration_seconds_bucket{action=\"date\",le=\"0.1\"} 1",
            "actiond_execution_duration_seconds_bucket{action=\"date\",le=\"0.5\"} 1",
            "actiond_execution_duration_seconds_bucket{action=\"date\",le=\"1\"} 2",
            "actiond_execution_duration_seconds_bucket{action=\"date\",le=\"3600\"} 2",
            "actiond_execution_duration_seconds_bucket{action=\"date\",le=\"+Inf\"} 2",
            "actiond_execution_duration_seconds_count{action=\"date\"} 2",
            "actiond_execution_duration_seconds_bucket{action=\"odd\\\"id\\\\\\n\",le=\"2.5\"} 0",
            "actiond_execution_duration_seconds_bucket{action=\"odd\\\"id\\\\\\n\",le=\"5\"} 1",
            "actiond_history_entries 4",
            "actiond_config_reloads_total{result=\"success\"} 2",
            "actiond_config_reloads_total{result=\"failure\"} 1",
            "actiond_event_subscribers 1",
            "process_resident_memory_bytes 4096",
            "actiond_history_file_records_total 7",
            "actiond_history_file_syncs_total 3",
            "actiond_history_file_waiting 1",
        ];
        for line in cases {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
        let sum = text
            .lines()
            .find_map(|l| {
                l.strip_prefix("actiond_execution_duration_seconds_sum{action=\"date\"} ")
            })
            .unwrap();
        assert!((sum.parse::<f64>().unwrap() - 0.75).abs() < 1e-9, "{sum}");
        assert!(text.ends_with('\n'));
        // Filtering leaves an action out entirely.
        let (only, _, _) = m.counted(|id| id == "date");
        assert_eq!(only.len(), 1);
    }

    #[test]
    fn action_labels_are_bounded() {
        let m = Metrics::default();
        let ok = flags(true, false, false, 0);
        for i in 0..MAX_ACTION_LABELS + 10 {
            m.finished(&format!("a{i}"), &ok, None);
        }
        // An action already counted keeps its own series.
        m.finished("a0", &ok, None);
        let (actions, _, _) = m.counted(|_| true);
        assert_eq!(actions.len(), MAX_ACTION_LABELS + 1);
        let other = actions.iter().find(|(id, _)| id == OTHER).unwrap();
        assert_eq!(other.1.outcomes["succeeded"], 10);
        let a0 = actions.iter().find(|(id, _)| id == "a0").unwrap();
        assert_eq!(a0.1.outcomes["succeeded"], 2);
    }

    #[test]
    fn rss_is_read_from_proc() {
        let rss = rss_bytes().expect("statm");
        assert!(rss > 100 * 1024, "{rss}");
    }
}
