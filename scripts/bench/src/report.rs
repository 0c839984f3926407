//! The `report` subcommand: the raw figures of all runs (`run subject metric value` lines)
//! made into the bench's two tables, in Markdown and JSON. The figures' table shows each
//! figure as the median of the runs with min and max, and each ratio taken within a run
//! before its median. The targets' table holds the figures actiond is held to, each beside
//! its limit with PASS or FAIL: a change that breaks one shows in the run that made it. It
//! only reads and writes the files it is given; it measures nothing.

use crate::Opts;

/// One row of the table: a metric, how to show it, and whether a higher value is better.
struct Row {
    key: &'static str,
    label: &'static str,
    unit: Unit,
}

#[derive(Clone, Copy)]
enum Unit {
    /// KiB, shown as MiB.
    Kib,
    /// Bytes, shown as MiB.
    Bytes,
    Ms,
    Us,
    PerSec,
    /// A count, shown in thousands.
    Thousands,
    /// A plain number with two decimals, in the unit named.
    Number(&'static str),
}

const ROWS: &[Row] = &[
    Row {
        key: "size_bytes",
        label: "binary size, stripped",
        unit: Unit::Bytes,
    },
    Row {
        key: "startup_ms",
        label: "start-up to first answer",
        unit: Unit::Ms,
    },
    Row {
        key: "rss_idle_kib",
        label: "RSS idle after start",
        unit: Unit::Kib,
    },
    Row {
        key: "rss_after_kib",
        label: "RSS after the executions",
        unit: Unit::Kib,
    },
    Row {
        key: "rss_peak_kib",
        label: "peak RSS under load (VmHWM)",
        unit: Unit::Kib,
    },
    Row {
        key: "cpu_per_exec_us",
        label: "server's own CPU per execution (user+sys; bare spawn: the spawner's own)",
        unit: Unit::Us,
    },
    Row {
        key: "cpu_vs_floor",
        label: "the same ÷ the floor below (within each run)",
        unit: Unit::Number("×"),
    },
    Row {
        key: "press_exec_true_own_us",
        label: "one press of `exec: [/bin/true]`, 1 client, the modes taking turns: the service's own CPU",
        unit: Unit::Us,
    },
    Row {
        key: "press_exec_true_all_us",
        label: "the same, the service and its children (utime+stime+cutime+cstime)",
        unit: Unit::Us,
    },
    Row {
        key: "press_true_own_us",
        label: "one press of `shell: 'true'`, 1 client, the modes taking turns: the service's own CPU",
        unit: Unit::Us,
    },
    Row {
        key: "press_true_all_us",
        label: "the same, the service and its children (utime+stime+cutime+cstime)",
        unit: Unit::Us,
    },
    Row {
        key: "rps_c16_exec_true",
        label: "run-and-wait/s of `exec: [/bin/true]`, 16 clients, the modes taking turns",
        unit: Unit::PerSec,
    },
    Row {
        key: "idle_exec_true_p50_us",
        label: "one press of `exec: [/bin/true]` after 0.3 s without any, the modes taking turns, p50",
        unit: Unit::Us,
    },
    Row {
        key: "floor_cpu_per_exec_us",
        label: "the floor: own CPU of a C program that only spawns the command with one pipe and waits",
        unit: Unit::Us,
    },
    Row {
        key: "fdatasync_p50_us",
        label: "the disk: one 400-byte append + fdatasync on the history's file system, p50 (idle machine)",
        unit: Unit::Us,
    },
    Row {
        key: "fdatasync_cpu_us",
        label: "the disk: own CPU of that append + fdatasync (the file system's work in the caller)",
        unit: Unit::Us,
    },
    Row {
        key: "insn_per_exec",
        label: "server's own user-space instructions per execution (callgrind)",
        unit: Unit::Thousands,
    },
    Row {
        key: "hello_p50_us",
        label: "run-and-wait `echo hello`, 1 client, p50",
        unit: Unit::Us,
    },
    Row {
        key: "hello_p99_us",
        label: "run-and-wait `echo hello`, 1 client, p99",
        unit: Unit::Us,
    },
    Row {
        key: "true_p50_us",
        label: "run-and-wait `true`, 1 client, p50",
        unit: Unit::Us,
    },
    Row {
        key: "true_p99_us",
        label: "run-and-wait `true`, 1 client, p99",
        unit: Unit::Us,
    },
    Row {
        key: "rps_c1",
        label: "run-and-wait/s, 1 client",
        unit: Unit::PerSec,
    },
    Row {
        key: "rps_c4",
        label: "run-and-wait/s, 4 clients",
        unit: Unit::PerSec,
    },
    Row {
        key: "rps_c16",
        label: "run-and-wait/s, 16 clients",
        unit: Unit::PerSec,
    },
    Row {
        key: "rps_c16_sub10",
        label: "run-and-wait/s, 16 clients, 10 event subscribers",
        unit: Unit::PerSec,
    },
    Row {
        key: "rps_c16_memory_again",
        label: "run-and-wait/s, 16 clients, history in memory, again just before the two rows on disk",
        unit: Unit::PerSec,
    },
    Row {
        key: "rps_c16_disk",
        label: "run-and-wait/s, 16 clients, history on disk (`stateDirectory`, fsynced)",
        unit: Unit::PerSec,
    },
    Row {
        key: "disk_vs_memory_c16",
        label: "the same ÷ the in-memory run just before the disk runs (within each run)",
        unit: Unit::Number("×"),
    },
    Row {
        key: "fsyncs_per_s_c16_disk",
        label: "history file fsyncs/s, 16 clients",
        unit: Unit::PerSec,
    },
    Row {
        key: "records_per_fsync_c16_disk",
        label: "history records per fsync (group commit), 16 clients",
        unit: Unit::Number("records"),
    },
    Row {
        key: "rps_c16_disk_interval",
        label: "run-and-wait/s, 16 clients, history on disk fsynced at most every 100 ms (`historySync: 100ms`)",
        unit: Unit::PerSec,
    },
    Row {
        key: "disk_interval_vs_memory_c16",
        label: "the same ÷ that in-memory run: what is left without the per-batch fsync",
        unit: Unit::Number("×"),
    },
    Row {
        key: "rps_readyz",
        label: "no spawn: GetReadyz (webhook: `/`)/s, 16 clients",
        unit: Unit::PerSec,
    },
    Row {
        key: "rps_dashboard",
        label: "no spawn: GetDashboard/s, 16 clients",
        unit: Unit::PerSec,
    },
];

/// `actiond` runs in group mode, `actiond-cgroup` in cgroup mode (an execution's cgroup each).
const SUBJECTS: &[&str] = &["baseline", "actiond", "actiond-cgroup", "webhook"];
const RATIOS: &[(&str, &str)] = &[
    ("actiond", "baseline"),
    ("actiond-cgroup", "baseline"),
    ("actiond", "webhook"),
    ("actiond-cgroup", "actiond"),
];

fn unit_name(u: Unit) -> &'static str {
    match u {
        Unit::Kib | Unit::Bytes => "MiB",
        Unit::Ms => "ms",
        Unit::Us => "µs",
        Unit::PerSec => "/s",
        Unit::Thousands => "thousand",
        Unit::Number(name) => name,
    }
}

fn show(u: Unit, v: f64) -> String {
    match u {
        Unit::Kib => format!("{:.2}", v / 1024.0),
        Unit::Bytes => format!("{:.2}", v / 1024.0 / 1024.0),
        Unit::Ms => format!("{v:.1}"),
        Unit::Us => format!("{v:.0}"),
        Unit::PerSec => format!("{v:.0}"),
        Unit::Thousands => format!("{:.0}", v / 1000.0),
        Unit::Number(_) => format!("{v:.2}"),
    }
}

/// (median, min, max) of a non-empty list.
fn stats(values: &[f64]) -> (f64, f64, f64) {
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (median, v[0], v[n - 1])
}

fn cell(values: &[f64], fmt: impl Fn(f64) -> String) -> String {
    if values.is_empty() {
        return "–".into();
    }
    let (m, lo, hi) = stats(values);
    if values.len() == 1 {
        fmt(m)
    } else {
        format!("{} ({}–{})", fmt(m), fmt(lo), fmt(hi))
    }
}

fn json_stats(values: &[f64]) -> String {
    if values.is_empty() {
        return "null".into();
    }
    let (m, lo, hi) = stats(values);
    let list: Vec<String> = values.iter().map(|v| format!("{v}")).collect();
    format!(
        "{{\"median\":{m},\"min\":{lo},\"max\":{hi},\"runs\":[{}]}}",
        list.join(",")
    )
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A figure actiond is held to: at most `limit`, in `unit`.
struct Target {
    label: &'static str,
    metric: &'static str,
    subject: &'static str,
    /// The figure is taken as a ratio to this subject's, within each run; `None`: the figure
    /// itself.
    over: Option<&'static str>,
    /// The raw figure divided by this gives it in `unit` (KiB to MiB: 1024).
    per: f64,
    unit: &'static str,
    limit: f64,
}

const fn ratio(
    label: &'static str,
    metric: &'static str,
    subject: &'static str,
    over: &'static str,
    limit: f64,
) -> Target {
    Target {
        label,
        metric,
        subject,
        over: Some(over),
        per: 1.0,
        unit: "×",
        limit,
    }
}

const fn figure(
    label: &'static str,
    metric: &'static str,
    subject: &'static str,
    per: f64,
    unit: &'static str,
    limit: f64,
) -> Target {
    Target {
        label,
        metric,
        subject,
        over: None,
        per,
        unit,
        limit,
    }
}

/// The targets, in both containment modes where a mode changes the figure. The press in
/// cgroup mode against group mode counts the service and its children (the cgroup's cost
/// falls partly in the child); the CPU against the C floor counts the service's own CPU with
/// 4 clients of `echo hello`; the idle RSS is the shipped build's, a second after start.
const TARGETS: &[Target] = &[
    ratio(
        "one press of `exec: [/bin/true]`, service + children CPU: cgroup mode ÷ group mode",
        "press_exec_true_all_us",
        "actiond-cgroup",
        "actiond",
        1.10,
    ),
    ratio(
        "one press of `shell: 'true'`, service + children CPU: cgroup mode ÷ group mode",
        "press_true_all_us",
        "actiond-cgroup",
        "actiond",
        1.10,
    ),
    figure(
        "service's own CPU per execution ÷ the C floor, group mode",
        "cpu_vs_floor",
        "actiond",
        1.0,
        "×",
        2.5,
    ),
    figure(
        "service's own CPU per execution ÷ the C floor, cgroup mode",
        "cpu_vs_floor",
        "actiond-cgroup",
        1.0,
        "×",
        2.5,
    ),
    ratio(
        "run-and-wait `echo hello`, 1 client, p50 ÷ bare spawn, group mode",
        "hello_p50_us",
        "actiond",
        "baseline",
        1.15,
    ),
    ratio(
        "run-and-wait `echo hello`, 1 client, p50 ÷ bare spawn, cgroup mode",
        "hello_p50_us",
        "actiond-cgroup",
        "baseline",
        1.15,
    ),
    ratio(
        "run-and-wait `true`, 1 client, p50 ÷ bare spawn, group mode",
        "true_p50_us",
        "actiond",
        "baseline",
        1.15,
    ),
    ratio(
        "run-and-wait `true`, 1 client, p50 ÷ bare spawn, cgroup mode",
        "true_p50_us",
        "actiond-cgroup",
        "baseline",
        1.15,
    ),
    figure(
        "RSS idle after start, group mode",
        "rss_idle_kib",
        "actiond",
        1024.0,
        "MiB",
        4.0,
    ),
    figure(
        "RSS idle after start, cgroup mode",
        "rss_idle_kib",
        "actiond-cgroup",
        1024.0,
        "MiB",
        4.0,
    ),
    figure(
        "binary size, stripped: growth over the recorded baseline",
        "size_growth_kib",
        "actiond",
        1.0,
        "KiB",
        20.0,
    ),
];

#[derive(Debug, PartialEq)]
enum Verdict {
    Pass,
    Fail,
    /// No run measured it (a size with no baseline, a figure a failed phase did not record).
    Unmeasured,
}

impl Verdict {
    /// The median of the runs' figures against the limit: one noisy run neither passes nor
    /// fails a target alone (the min–max beside it shows the spread).
    fn of(values: &[f64], limit: f64) -> Verdict {
        if values.is_empty() {
            Verdict::Unmeasured
        } else if stats(values).0 <= limit {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }
    fn name(&self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Unmeasured => "not measured",
        }
    }
}

/// The raw figures: (run, subject, metric, value), one per line of the raw file.
struct Figures(Vec<(String, String, String, f64)>);

impl Figures {
    fn parse(raw: &str) -> Result<Figures, String> {
        let mut data = Vec::new();
        for line in raw.lines().filter(|l| !l.trim().is_empty()) {
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() != 4 {
                return Err(format!("bad raw line {line:?}"));
            }
            let v: f64 = f[3].parse().map_err(|_| format!("bad value in {line:?}"))?;
            data.push((f[0].into(), f[1].into(), f[2].into(), v));
        }
        Ok(Figures(data))
    }
    fn values(&self, subject: &str, metric: &str) -> Vec<f64> {
        self.0
            .iter()
            .filter(|(_, s, m, _)| s == subject && m == metric)
            .map(|d| d.3)
            .collect()
    }
    /// A ratio is taken within each run that measured both sides.
    fn ratios(&self, a: &str, b: &str, metric: &str) -> Vec<f64> {
        self.0
            .iter()
            .filter(|(_, s, m, _)| s == a && m == metric)
            .filter_map(|(run, _, _, va)| {
                self.0
                    .iter()
                    .find(|(r, s, m, _)| r == run && s == b && m == metric)
                    .filter(|d| d.3 != 0.0)
                    .map(|d| va / d.3)
            })
            .collect()
    }
    fn runs(&self) -> usize {
        let mut r: Vec<&String> = self.0.iter().map(|d| &d.0).collect();
        r.sort();
        r.dedup();
        r.len()
    }
    /// A target's figure in each run that measured it, in the target's unit.
    fn target(&self, t: &Target) -> Vec<f64> {
        let raw = match t.over {
            Some(b) => self.ratios(t.subject, b, t.metric),
            None => self.values(t.subject, t.metric),
        };
        raw.into_iter().map(|v| v / t.per).collect()
    }
}

/// The targets' table (Markdown) and its JSON array.
fn targets(fig: &Figures) -> (String, String) {
    let mut md = String::from(
        "Targets: the median of the runs' figures (min–max), each ratio taken within a run.\n\n\
         | target | measured | limit | verdict |\n|---|---|---|---|\n",
    );
    let mut json = Vec::new();
    let (mut pass, mut fail, mut unmeasured) = (0, 0, 0);
    for t in TARGETS {
        let v = fig.target(t);
        let verdict = Verdict::of(&v, t.limit);
        match verdict {
            Verdict::Pass => pass += 1,
            Verdict::Fail => fail += 1,
            Verdict::Unmeasured => unmeasured += 1,
        }
        let unit = t.unit;
        let measured = if v.is_empty() {
            "–".to_string()
        } else {
            format!("{} {unit}", cell(&v, |x| format!("{x:.2}")))
        };
        md.push_str(&format!(
            "| {} | {measured} | ≤ {:.2} {unit} | {} |\n",
            t.label,
            t.limit,
            verdict.name()
        ));
        json.push(format!(
            "{{\"label\":{},\"metric\":{},\"subject\":{},\"over\":{},\"unit\":{},\"limit\":{},\
             \"measured\":{},\"verdict\":{}}}",
            json_string(t.label),
            json_string(t.metric),
            json_string(t.subject),
            t.over.map_or("null".into(), json_string),
            json_string(unit),
            t.limit,
            json_stats(&v),
            json_string(verdict.name())
        ));
    }
    md.push_str(&format!(
        "\n{pass} PASS, {fail} FAIL, {unmeasured} not measured.\n"
    ));
    (md, format!("[{}]", json.join(",")))
}

pub(crate) fn report(o: &Opts) -> Result<String, String> {
    let raw = std::fs::read_to_string(o.need("raw")?).map_err(|e| format!("--raw: {e}"))?;
    let fig = Figures::parse(&raw)?;
    let runs = fig.runs();
    let title = o.get("title").unwrap_or("");
    let mut md = String::new();
    md.push_str(&format!(
        "Median of {runs} run(s), (min–max); ratios are taken within each run.\n\n"
    ));
    md.push_str(
        "| figure | unit | bare spawn | actiond | actiond, cgroup mode | webhook \
         | actiond ÷ bare spawn | cgroup mode ÷ bare spawn | actiond ÷ webhook \
         | cgroup mode ÷ group mode |\n",
    );
    md.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
    let mut json_metrics = Vec::new();
    for row in ROWS {
        let mut cols = Vec::new();
        let mut subj_json = Vec::new();
        for s in SUBJECTS {
            let v = fig.values(s, row.key);
            cols.push(cell(&v, |x| show(row.unit, x)));
            if !v.is_empty() {
                subj_json.push(format!("\"{s}\":{}", json_stats(&v)));
            }
        }
        let mut ratio_json = Vec::new();
        for (a, b) in RATIOS {
            let r = fig.ratios(a, b, row.key);
            cols.push(cell(&r, |x| format!("{x:.2}")));
            if !r.is_empty() {
                ratio_json.push(format!("\"{a}/{b}\":{}", json_stats(&r)));
            }
        }
        if cols.iter().take(SUBJECTS.len()).all(|c| c == "–") {
            continue;
        }
        md.push_str(&format!(
            "| {} | {} | {} |\n",
            row.label,
            unit_name(row.unit),
            cols.join(" | ")
        ));
        json_metrics.push(format!(
            "{}:{{\"label\":{},\"unit\":{},\"subjects\":{{{}}},\"ratios\":{{{}}}}}",
            json_string(row.key),
            json_string(row.label),
            json_string(match row.unit {
                Unit::Kib => "KiB",
                Unit::Bytes => "bytes",
                other => unit_name(other),
            }),
            subj_json.join(","),
            ratio_json.join(",")
        ));
    }
    let (targets_md, targets_json) = targets(&fig);
    md.push('\n');
    md.push_str(&targets_md);
    let json = format!(
        "{{\"title\":{},\"runs\":{runs},\"metrics\":{{{}}},\"targets\":{targets_json}}}\n",
        json_string(title),
        json_metrics.join(",")
    );
    if let Some(p) = o.get("md") {
        std::fs::write(p, format!("{title}\n\n{md}")).map_err(|e| format!("--md: {e}"))?;
    }
    if let Some(p) = o.get("json") {
        std::fs::write(p, &json).map_err(|e| format!("--json: {e}"))?;
    }
    // stdout gets the table itself, for the terminal.
    print!("{md}");
    Ok(String::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_is_the_median_against_the_limit() {
        let table: &[(&[f64], f64, Verdict)] = &[
            (&[], 1.0, Verdict::Unmeasured),
            (&[1.0], 1.0, Verdict::Pass),
            (&[1.01], 1.0, Verdict::Fail),
            // One run over the limit does not fail the median, nor one under pass it.
            (&[0.9, 1.5, 0.95], 1.0, Verdict::Pass),
            (&[1.2, 0.5, 1.1], 1.0, Verdict::Fail),
            (&[0.9, 1.1], 1.0, Verdict::Pass),
        ];
        for (values, limit, want) in table {
            assert_eq!(
                &Verdict::of(values, *limit),
                want,
                "{values:?} against {limit}"
            );
        }
    }

    #[test]
    fn a_targets_ratio_is_taken_within_each_run_and_in_its_unit() {
        // Run 2's group-mode press is slow: across runs the ratio would be misread.
        let raw = "1\tactiond\tpress_true_all_us\t100\n\
                   1\tactiond-cgroup\tpress_true_all_us\t105\n\
                   2\tactiond\tpress_true_all_us\t200\n\
                   2\tactiond-cgroup\tpress_true_all_us\t230\n\
                   1\tactiond\trss_idle_kib\t2867.2\n";
        let fig = Figures::parse(raw).unwrap();
        let press = TARGETS
            .iter()
            .find(|t| t.metric == "press_true_all_us")
            .unwrap();
        assert_eq!(fig.target(press), vec![1.05, 1.15]);
        let rss = TARGETS
            .iter()
            .find(|t| t.metric == "rss_idle_kib" && t.subject == "actiond")
            .unwrap();
        assert_eq!(fig.target(rss), vec![2.8]);
        let (md, json) = targets(&fig);
        assert!(
            md.contains("| 1.10 (1.05–1.15) × | ≤ 1.10 × | PASS |"),
            "{md}"
        );
        assert!(
            md.contains("| RSS idle after start, group mode | 2.80 MiB | ≤ 4.00 MiB | PASS |"),
            "{md}"
        );
        assert!(
            md.contains("growth over the recorded baseline | – | ≤ 20.00 KiB | not measured |"),
            "{md}"
        );
        assert!(md.contains("2 PASS, 0 FAIL, 9 not measured."), "{md}");
        assert!(json.starts_with("[{\"label\":"), "{json}");
        assert!(json.contains("\"verdict\":\"not measured\""), "{json}");
    }

    #[test]
    fn a_raw_line_that_is_not_four_fields_is_refused() {
        assert!(Figures::parse("1\tactiond\trss_idle_kib\n").is_err());
        assert!(Figures::parse("1\tactiond\trss_idle_kib\tmany\n").is_err());
    }
}
