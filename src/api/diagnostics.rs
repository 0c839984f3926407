//! The diagnostic operations: GetDiagnostics and SosReport (behind the showDiagnostics
//! policy, off by default; SosReport writes one log line naming its caller), DumpVars and
//! DumpPublicIdActionMap (each answering in full only when its `insecureAllow…` flag is set,
//! and otherwise saying which flag). The report never holds a secret: counts
//! of users and tokens, never their names, hashes or values.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;
use tracing::info;

use super::{App, Ctx};
use crate::config::Config;
use crate::permissions::effective_policy;
use crate::protocol::{Code, ConnectError};

#[derive(Serialize)]
struct Diagnostics {
    #[serde(rename = "SshFoundKey")]
    ssh_found_key: String,
    #[serde(rename = "SshFoundConfig")]
    ssh_found_config: String,
}

#[derive(Serialize)]
struct Alert<'a> {
    alert: &'a str,
}

#[derive(Serialize)]
struct Vars<'a> {
    alert: &'a str,
    contents: BTreeMap<String, String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Pair<'a> {
    action_title: &'a str,
    entity_prefix: &'a str,
}

#[derive(Serialize)]
struct ActionMap<'a> {
    alert: &'a str,
    contents: BTreeMap<&'a str, Pair<'a>>,
}

/// GetDiagnostics and SosReport need the showDiagnostics policy (off by default; an ACL
/// turns it on for its users).
fn may_diagnose(app: &App, ctx: &Ctx) -> Result<(), ConnectError> {
    let config = app.config();
    if effective_policy(&config.auth, config.default_policy, &ctx.caller).show_diagnostics {
        Ok(())
    } else {
        Err(ConnectError::new(
            Code::PermissionDenied,
            "your policy does not show diagnostics (an ACL with policy showDiagnostics: true does)",
        ))
    }
}

pub fn get_diagnostics(app: &App, ctx: &Ctx) -> Result<Vec<u8>, ConnectError> {
    may_diagnose(app, ctx)?;
    let home = std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| "/root".into());
    let found = |name: &str| {
        let path = home.join(".ssh").join(name);
        if path.exists() {
            path.display().to_string()
        } else {
            format!("not found at {}", path.display())
        }
    };
    Ok(ctx.out.encode(&Diagnostics {
        ssh_found_key: found("id_rsa"),
        ssh_found_config: found("config"),
    }))
}

pub fn sos_report(app: &App, ctx: &Ctx) -> Result<Vec<u8>, ConnectError> {
    may_diagnose(app, ctx)?;
    let report = report(app);
    if app.config().insecure_allow_dump_sos {
        return Ok(ctx.out.encode(&Alert { alert: &report }));
    }
    // One log line (journald makes an entry of each line), its parts separated by " | ".
    info!(
        user = %ctx.caller.username,
        "sos report: {}",
        report.trim_end().replace('\n', " | ")
    );
    Ok(ctx.out.encode(&Alert {
        alert: "The report was written to the service log. Set insecureAllowDumpSos: true to receive it here.",
    }))
}

pub fn dump_vars(app: &App, ctx: &Ctx) -> Vec<u8> {
    if !app.config().insecure_allow_dump_vars {
        return ctx.out.encode(&Vars {
            alert: "Set insecureAllowDumpVars: true to see the template variables here.",
            contents: BTreeMap::new(),
        });
    }
    // The entity fields a template can name (`entity.<type>.<key>.<field>`), then actiond's.
    let mut contents = app.engine.setup().entities.vars();
    contents.insert(
        "actiond.version".to_string(),
        env!("CARGO_PKG_VERSION").to_string(),
    );
    contents.insert("actiond.target".to_string(), target());
    ctx.out.encode(&Vars {
        alert: "",
        contents,
    })
}

pub fn dump_action_map(app: &App, ctx: &Ctx) -> Vec<u8> {
    if !app.config().insecure_allow_dump_action_map {
        return ctx.out.encode(&ActionMap {
            alert: "Set insecureAllowDumpActionMap: true to see the binding ids here.",
            contents: BTreeMap::new(),
        });
    }
    let setup = app.engine.setup();
    let contents = setup
        .bindings()
        .iter()
        .map(|b| {
            let prefix = b.instance.as_ref().map_or("", |i| i.key.as_str());
            (
                b.id.as_str(),
                Pair {
                    action_title: &b.action.title,
                    entity_prefix: prefix,
                },
            )
        })
        .collect();
    ctx.out.encode(&ActionMap {
        alert: "",
        contents,
    })
}

fn target() -> String {
    format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS)
}

/// A file's text, or nothing when it cannot be read (a report says what it can).
fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The value after `key` on the line that starts with it, its words joined by one space
/// (`VmRSS:   4060 kB` gives `4060 kB`).
fn field(text: &str, key: &str) -> Option<String> {
    let line = text.lines().find_map(|l| l.strip_prefix(key))?;
    Some(line.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The plain-text report: facts about the service, never a secret.
fn report(app: &App) -> String {
    let config: &Config = &app.config();
    let (history, running) = app.engine.counts();
    let status = read("/proc/self/status");
    let memory = |key: &str| field(&status, key).unwrap_or_default();
    let limits = &config.limits;
    let mut r = String::new();
    let _ = writeln!(r, "actiond {} ({})", env!("CARGO_PKG_VERSION"), target());
    let os = field(&read("/etc/os-release"), "PRETTY_NAME=");
    let os = os.as_deref().map_or("unknown", |v| v.trim_matches('"'));
    let kernel = read("/proc/sys/kernel/osrelease");
    let _ = writeln!(r, "os: {os}, kernel {}", kernel.trim());
    let _ = writeln!(r, "uptime: {} s", app.engine.uptime().as_secs());
    let _ = writeln!(r, "config: {}", config.source);
    // Where the service really listens: `--listen` overrides the config's address, and a
    // reload that changes the address only takes effect at the next start.
    let listen = app.listening.map(|bound| bound.to_string());
    let listen = listen.as_deref().unwrap_or(&config.listen_address);
    let _ = writeln!(r, "listen: {listen}");
    let _ = writeln!(
        r,
        "actions: {} ({} disabled by errors), dashboards: {}, entity files: {}",
        config.actions.len(),
        config.disabled_actions().count(),
        config.dashboards.len(),
        config.entities.len()
    );
    // Which file each action is written in: the board's panel, the admin's config, an overlay.
    for (file, ids) in config.actions_by_file() {
        let _ = writeln!(
            r,
            "actions from {} ({}): {}",
            file.name,
            file.role.as_str(),
            ids.join(", ")
        );
    }
    let auth = &config.auth;
    let _ = writeln!(
        r,
        "auth: local login {}, {} users, {} API tokens, {} ACLs, trusted header {}, guests must log in: {}",
        if auth.local_users_enabled {
            "on"
        } else {
            "off"
        },
        auth.local_users.len(),
        auth.api_tokens.len(),
        auth.access_control_lists.len(),
        if auth.http_header_username.is_empty() {
            "off"
        } else {
            "on"
        },
        auth.require_guests_to_login
    );
    let _ = writeln!(
        r,
        "limits: history {}, page {}, output {} B, timeout {} s, grace {} s, running {}, body {} B, connections {}, subscribers {}",
        limits.log_history_limit,
        limits.log_history_page_size,
        limits.max_output_bytes,
        limits.default_timeout.as_secs(),
        limits.kill_grace_period.as_secs(),
        limits.max_concurrent_executions,
        limits.max_request_body_bytes,
        limits.max_connections,
        limits.max_event_subscribers
    );
    let _ = writeln!(
        r,
        "history: {history} entries, {running} running, {} event subscribers",
        app.engine.bus().subscribers()
    );
    let _ = writeln!(
        r,
        "memory: rss {}, peak {}",
        memory("VmRSS:"),
        memory("VmHWM:")
    );
    let _ = writeln!(
        r,
        "state directory: {}",
        config
            .state_directory
            .as_ref()
            .map_or("none (memory only)".to_string(), |d| d
                .display()
                .to_string())
    );
    r
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::{ActionMap, Alert, Diagnostics, Pair, Vars, field};
    use crate::api::codec_tests::assert_same_in_both;
    use crate::api::routes::Op;

    #[test]
    fn every_answer_reads_the_same_in_both_codecs() {
        assert_same_in_both(
            Op::GetDiagnostics,
            &Diagnostics {
                ssh_found_key: "k".into(),
                ssh_found_config: String::new(),
            },
        );
        assert_same_in_both(Op::SosReport, &Alert { alert: "a" });
        let vars = BTreeMap::from([
            ("a.b".to_string(), "1".to_string()),
            (String::new(), String::new()),
        ]);
        assert_same_in_both(
            Op::DumpVars,
            &Vars {
                alert: "",
                contents: vars,
            },
        );
        let pair = || Pair {
            action_title: "T",
            entity_prefix: "",
        };
        assert_same_in_both(
            Op::DumpPublicIdActionMap,
            &ActionMap {
                alert: "x",
                contents: BTreeMap::from([("b", pair()), ("c", pair())]),
            },
        );
    }

    #[test]
    fn a_field_is_the_rest_of_its_line_with_single_spaces() {
        let status = "Name:\tactiond\nVmHWM:\t    5120 kB\nVmRSS:\t    4060 kB\n";
        let os = "ID=debian\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n";
        let cases = [
            (status, "VmRSS:", Some("4060 kB")),
            (status, "VmHWM:", Some("5120 kB")),
            (status, "VmSwap:", None),
            (
                os,
                "PRETTY_NAME=",
                Some("\"Debian GNU/Linux 12 (bookworm)\""),
            ),
            ("", "PRETTY_NAME=", None),
        ];
        for (text, key, want) in cases {
            assert_eq!(field(text, key).as_deref(), want, "{key}");
        }
    }
}
