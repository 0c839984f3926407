//! `GET /metrics` (docs/configuration.md, "Metrics"): scraped from the real binary and read
//! line by line against the Prometheus text exposition grammar, written here independently
//! of the service's formatter. Then the figures: executions by action and outcome, the
//! duration histogram, running executions, history size, reloads by result, resident memory;
//! and who may scrape: disabled answers 404, a guest where guests must log in gets 401, a
//! token user sees only the actions it has `logs` on.

use std::collections::{HashMap, HashSet};

use serde_json::json;

use crate::client::{Request, assert_error, send};
use crate::harness::{GATED, SOON, Server, wait_until};
use crate::identity::{bearer, sha256_hex};

const TOKEN: &str = "prometheus-token-0b9d8a7f6e5d4c3b2a1908";

/// One sample line: name, labels, value.
#[derive(Debug, Clone, PartialEq)]
struct Sample {
    name: String,
    labels: Labels,
    value: f64,
}

fn is_name(s: &str, colon: bool) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || (colon && c == ':'))
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || (colon && c == ':'))
}

fn parse_value(s: &str) -> Result<f64, String> {
    match s {
        "+Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        "NaN" => Ok(f64::NAN),
        _ => s.parse::<f64>().map_err(|_| format!("bad value {s:?}")),
    }
}

type Labels = Vec<(String, String)>;

/// Parses `{a="x",b="y"}` at the start of `s`; returns the labels and the rest.
fn parse_labels(s: &str) -> Result<(Labels, &str), String> {
    let mut rest = s.strip_prefix('{').ok_or("expected {")?;
    let mut labels = Vec::new();
    loop {
        if let Some(r) = rest.strip_prefix('}') {
            return Ok((labels, r));
        }
        let eq = rest.find('=').ok_or("label without =")?;
        let name = &rest[..eq];
        if !is_name(name, false) {
            return Err(format!("bad label name {name:?}"));
        }
        rest = rest[eq + 1..]
            .strip_prefix('"')
            .ok_or("label value not quoted")?;
        let mut value = String::new();
        let mut chars = rest.char_indices();
        let end = loop {
            match chars.next() {
                None => return Err("unterminated label value".into()),
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, '\\')) => value.push('\\'),
                    Some((_, '"')) => value.push('"'),
                    Some((_, 'n')) => value.push('\n'),
                    other => return Err(format!("bad escape {other:?}")),
                },
                Some((_, '\n')) => return Err("raw newline in a label value".into()),
                Some((_, c)) => value.push(c),
            }
        };
        labels.push((name.to_string(), value));
        rest = &rest[end + 1..];
        if let Some(r) = rest.strip_prefix(',') {
            rest = r;
        } else if !rest.starts_with('}') {
            return Err("expected , or } after a label".into());
        }
    }
}

/// Checks every line of an exposition and returns its samples and each family's type.
fn parse_exposition(text: &str) -> Result<(Vec<Sample>, HashMap<String, String>), String> {
    if !text.is_empty() && !text.ends_with('\n') {
        return Err("the text does not end with a newline".into());
    }
    let mut types: HashMap<String, String> = HashMap::new();
    let mut helped: HashSet<String> = HashSet::new();
    let mut samples = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let at = |e: String| format!("line {}: {e}: {line:?}", n + 1);
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            let words: Vec<&str> = comment.trim_start().splitn(3, ' ').collect();
            match words.as_slice() {
                ["HELP", name, _help]
                    if !is_name(name, true) || !helped.insert(name.to_string()) =>
                {
                    return Err(at("bad or repeated HELP".into()));
                }
                ["TYPE", name, kind] => {
                    let known = ["counter", "gauge", "histogram", "summary", "untyped"];
                    if !is_name(name, true) || !known.contains(kind) {
                        return Err(at("bad TYPE".into()));
                    }
                    if types.insert(name.to_string(), kind.to_string()).is_some() {
                        return Err(at("TYPE repeated".into()));
                    }
                }
                _ => {} // a plain comment
            }
            continue;
        }
        let name_end = line.find(['{', ' ']).ok_or_else(|| at("no value".into()))?;
        let name = &line[..name_end];
        if !is_name(name, true) {
            return Err(at(format!("bad metric name {name:?}")));
        }
        let (labels, rest) = if line[name_end..].starts_with('{') {
            parse_labels(&line[name_end..]).map_err(at)?
        } else {
            (Vec::new(), &line[name_end..])
        };
        let rest = rest
            .strip_prefix(' ')
            .ok_or_else(|| at("no space before the value".into()))?;
        let mut parts = rest.split(' ');
        let value = parse_value(parts.next().unwrap_or("")).map_err(at)?;
        if let Some(ts) = parts.next()
            && ts.parse::<i64>().is_err()
        {
            return Err(at("bad timestamp".into()));
        }
        if parts.next().is_some() {
            return Err(at("trailing text".into()));
        }
        let family = ["_bucket", "_sum", "_count", "_total"]
            .iter()
            .find_map(|s| name.strip_suffix(s).filter(|f| types.contains_key(*f)))
            .unwrap_or(name);
        if !types.contains_key(family) && !types.contains_key(name) {
            return Err(at("a sample before its TYPE".into()));
        }
        samples.push(Sample {
            name: name.to_string(),
            labels,
            value,
        });
    }
    Ok((samples, types))
}

fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    samples
        .iter()
        .find(|s| {
            s.name == name
                && s.labels.len() == labels.len()
                && labels
                    .iter()
                    .all(|(k, v)| s.labels.iter().any(|(a, b)| a == k && b == v))
        })
        .map(|s| s.value)
}

fn scrape(server: &Server, headers: &[(&str, &str)]) -> crate::client::Response {
    let mut req = Request::get("/metrics");
    for (k, v) in headers {
        req = req.header(k, v);
    }
    send(server.addr, &req)
}

fn scrape_ok(server: &Server, headers: &[(&str, &str)]) -> Vec<Sample> {
    let resp = scrape(server, headers);
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(
        resp.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let text = resp.text();
    parse_exposition(&text)
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .0
}

#[test]
fn the_grammar_check_rejects_what_it_should() {
    for bad in [
        "x 1",                              // no TYPE
        "# TYPE x gauge\nx{a=\"b} 1\n",     // unterminated
        "# TYPE x gauge\nx{a=b} 1\n",       // unquoted
        "# TYPE x gauge\nx{a=\"\\t\"} 1\n", // bad escape
        "# TYPE x gauge\nx one\n",          // bad value
        "# TYPE x gauge\nx 1",              // no final newline
        "# TYPE x gauge\n# TYPE x gauge\n", // repeated TYPE
        "# TYPE x weird\n",                 // unknown type
        "# TYPE 1x gauge\n",                // bad name
    ] {
        assert!(parse_exposition(bad).is_err(), "accepted {bad:?}");
    }
    let good = "# HELP x_total A.\n# TYPE x_total counter\nx_total{a=\"q\\\"\\\\\\n\"} 2 17\n";
    let (samples, _) = parse_exposition(good).unwrap();
    assert_eq!(samples[0].labels[0].1, "q\"\\\n");
}

#[test]
fn metrics_are_valid_exposition_and_count_what_happened() {
    let server = Server::start(json!({
        "prometheus": {"enabled": true},
        "actions": [
            {"id": "good", "title": "Good", "shell": "true"},
            {"id": "bad", "title": "Bad", "shell": "exit 3"},
            {"id": "gated", "title": "Gated", "shell": GATED},
        ]
    }));
    server.run("good");
    server.run("good");
    server.run("bad");
    let running = server.start_action("gated");
    // A second press while it runs is blocked (maxConcurrent 1).
    let blocked = server.run("gated");
    assert_eq!(blocked["blocked"], true);

    let samples = scrape_ok(&server, &[]);
    let total = |a: &str, o: &str| {
        value(
            &samples,
            "actiond_executions_total",
            &[("action", a), ("outcome", o)],
        )
    };
    assert_eq!(total("good", "succeeded"), Some(2.0));
    assert_eq!(total("bad", "failed"), Some(1.0));
    assert_eq!(total("gated", "blocked"), Some(1.0));
    assert_eq!(
        value(&samples, "actiond_executions_running", &[]),
        Some(1.0)
    );
    assert_eq!(value(&samples, "actiond_history_entries", &[]), Some(5.0));
    assert_eq!(value(&samples, "actiond_event_subscribers", &[]), Some(0.0));
    let rss = value(&samples, "process_resident_memory_bytes", &[]).unwrap();
    assert!(rss > 512.0 * 1024.0, "{rss}");

    // The histogram: cumulative buckets ending in +Inf = count, for the actions that ran.
    let buckets: Vec<(f64, f64)> = samples
        .iter()
        .filter(|s| s.name == "actiond_execution_duration_seconds_bucket")
        .filter(|s| s.labels.iter().any(|(k, v)| k == "action" && v == "good"))
        .map(|s| {
            let le = &s.labels.iter().find(|(k, _)| k == "le").unwrap().1;
            (
                if le == "+Inf" {
                    f64::INFINITY
                } else {
                    le.parse().unwrap()
                },
                s.value,
            )
        })
        .collect();
    assert!(buckets.len() > 3, "{buckets:?}");
    assert!(
        buckets
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1),
        "{buckets:?}"
    );
    assert_eq!(buckets.last().unwrap(), &(f64::INFINITY, 2.0));
    let count = value(
        &samples,
        "actiond_execution_duration_seconds_count",
        &[("action", "good")],
    );
    assert_eq!(count, Some(2.0));
    assert!(
        value(
            &samples,
            "actiond_execution_duration_seconds_sum",
            &[("action", "good")]
        )
        .unwrap()
            >= 0.0
    );
    assert_eq!(
        value(
            &samples,
            "actiond_execution_duration_seconds_count",
            &[("action", "gated")]
        ),
        None,
        "a blocked run has no duration"
    );

    // Reloads, by result.
    std::fs::write(server.path("go"), "").unwrap();
    server.wait_finished(&running, SOON);
    let config = server.path("config.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replace("Good", "Still good")).unwrap();
    let reloads = |result: &str| {
        value(
            &scrape_ok(&server, &[]),
            "actiond_config_reloads_total",
            &[("result", result)],
        )
    };
    assert!(wait_until(SOON, || reloads("success") == Some(1.0)));
    std::fs::write(&config, "actions: [[[\n").unwrap();
    assert!(wait_until(SOON, || reloads("failure") == Some(1.0)));
    let samples = scrape_ok(&server, &[]);
    assert_eq!(
        value(&samples, "actiond_executions_running", &[]),
        Some(0.0)
    );
    assert_eq!(
        value(
            &samples,
            "actiond_executions_total",
            &[("action", "gated"), ("outcome", "succeeded")]
        ),
        Some(1.0)
    );
}

#[test]
fn metrics_off_answer_404_and_scrapers_obey_the_permissions() {
    let off = Server::start(json!({"actions": [{"id": "a", "title": "A", "shell": "true"}]}));
    let message = assert_error(&scrape(&off, &[]), 404, "not_found");
    assert!(message.contains("prometheus"), "{message}");
    drop(off);

    let server = Server::start(json!({
        "prometheus": {"enabled": true},
        "authRequireGuestsToLogin": true,
        "defaultPermissions": {"view": false, "exec": false, "logs": false, "kill": false},
        "authApiTokens": [{"name": "prometheus", "sha256": sha256_hex(TOKEN),
                           "username": "prometheus", "usergroup": "monitoring"}],
        "accessControlLists": [
            {"name": "monitoring", "matchUsergroups": ["monitoring"],
             "permissions": {"exec": true, "logs": true}},
            {"name": "triggers", "matchUsergroups": ["system"], "permissions": {"exec": true}},
        ],
        "actions": [
            {"id": "seen", "title": "Seen", "shell": "true", "acls": ["monitoring"]},
            // Runs at start-up, as a trigger user; the scraper may not see its logs.
            {"id": "unseen", "title": "Unseen", "shell": "echo > unseen.done",
             "execOnStartup": true, "acls": ["triggers"]},
        ]
    }));
    assert!(wait_until(SOON, || server.path("unseen.done").exists()));
    assert_error(&scrape(&server, &[]), 401, "unauthenticated");
    assert_error(
        &scrape(&server, &[("Authorization", "Bearer not-the-token")]),
        401,
        "unauthenticated",
    );
    let auth = bearer(TOKEN);
    let headers = [("Authorization", auth.as_str())];
    let start = |id: &str| {
        send(
            server.addr,
            &Request::get(&format!("/api/StartActionByGetAndWait/{id}"))
                .header("Authorization", &auth),
        )
    };
    assert_eq!(start("seen").status, 200);
    // Only the trigger users may run `unseen`; a denied start counts nothing.
    assert_eq!(start("unseen").status, 403);
    // Once nothing runs, the start-up run of `unseen` is counted, but not shown to this user.
    assert!(wait_until(SOON, || value(
        &scrape_ok(&server, &headers),
        "actiond_executions_running",
        &[]
    ) == Some(0.0)));
    let samples = scrape_ok(&server, &headers);
    assert_eq!(value(&samples, "actiond_history_entries", &[]), Some(2.0));
    assert_eq!(
        value(
            &samples,
            "actiond_executions_total",
            &[("action", "seen"), ("outcome", "succeeded")]
        ),
        Some(1.0)
    );
    assert!(
        samples
            .iter()
            .all(|s| !s.labels.iter().any(|(_, v)| v == "unseen")),
        "{samples:?}"
    );
}
