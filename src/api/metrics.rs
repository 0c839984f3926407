//! `GET /metrics`: the Prometheus text when `prometheus.enabled`. The caller
//! is identified like any API caller (a scraper sends an API token as a bearer token); where
//! guests must log in, a guest is refused, and the per-action series show only the actions
//! the caller has the `logs` permission on, as GetLogs does. Formatting is `metrics::render`.

use crate::metrics::{self, Sample};
use crate::permissions::{Decision, Verb, decide};
use crate::protocol::{Code, ConnectError};

use super::{App, Ctx};

/// The metrics text for this caller, or why not.
pub fn metrics(app: &App, ctx: &Ctx) -> Result<String, ConnectError> {
    let setup = app.engine.setup();
    let config = &setup.config;
    if !config.prometheus_enabled {
        return Err(ConnectError::new(
            Code::NotFound,
            "metrics are off: set `prometheus: {enabled: true}` in the config",
        ));
    }
    super::login_gate(app, &ctx.caller)?;
    let auth = &config.auth;
    // Judged like the runs they count: by the action in force for the binding, and one no
    // longer configured (or the `_other` series) as an action no ACL names.
    let may_see = |id: &str| {
        decide(auth, &ctx.caller, setup.action_for_run(id), Verb::Logs) == Decision::Allow
    };
    let (actions, reloads_ok, reloads_failed) = app.engine.metrics().counted(may_see);
    let (history, running) = app.engine.counts();
    Ok(metrics::render(&Sample {
        actions,
        running,
        history,
        reloads_ok,
        reloads_failed,
        subscribers: app.engine.bus().subscribers(),
        rss_bytes: metrics::rss_bytes(),
        history_file: app.engine.history_file(),
    }))
}
