//! A press through a bridge: a site's mosquitto (actiond's broker) bridged to a central one
//! with the lines docs/home-assistant.md gives, its link carried by a relay the test breaks.
//! When the bridge reconnects, the central broker replays its retained messages to it, and
//! the site's broker hands them on to actiond as live messages (retain flag cleared), where
//! actiond cannot tell a replay from a press: a retained press must therefore not survive the
//! press it was.

use std::time::Duration;

use serde_json::json;

use super::{WAIT, board, press_topic, wait_online};
use crate::broker::{Broker, Relay};
use crate::harness::{Server, wait_until};

/// How long a bridge that reconnected is given to replay the central broker's retained
/// messages and the site's broker to hand them on.
const REPLAY: Duration = Duration::from_secs(3);

/// The lines of `runs.txt` so far: one per run of the action.
fn runs(server: &Server) -> usize {
    std::fs::read_to_string(server.path("runs.txt"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

#[test]
#[ignore = "needs mosquitto: scripts/test.sh runs it"]
fn a_retained_press_on_the_central_broker_runs_once_across_bridge_reconnections() {
    let central = Broker::start();
    let relay = Relay::to(central.port);
    let site = Broker::start_bridged(relay.port);
    assert!(
        wait_until(WAIT, || relay.accepted() == 1),
        "the bridge never connected"
    );
    let server = Server::start(board(
        &site,
        "site-pi",
        json!({}),
        json!({"actions": [{"id": "reboot", "shell": "echo ran >> runs.txt"}]}),
    ));
    wait_online(&site, "site-pi");
    // The discovery crossed the bridge: the press below reaches a subscribed board.
    central.wait_retained("actiond/site-pi/availability", WAIT, |p| p == "online");
    let topic = press_topic("site-pi", "reboot");
    central.publish(&topic, "PRESS", true);
    assert!(
        wait_until(WAIT, || runs(&server) == 1),
        "the press never ran"
    );
    // Deleted where it was published, through the bridge, and on the site's broker.
    assert!(
        wait_until(WAIT, || central.retained_one(&topic).is_none()),
        "the central broker still holds the retained press"
    );
    assert_eq!(site.retained_one(&topic), None);
    for cut in 1..=3 {
        relay.cut();
        assert!(
            wait_until(WAIT, || relay.accepted() == 1 + cut),
            "the bridge did not reconnect after cut {cut}"
        );
        std::thread::sleep(REPLAY);
        assert_eq!(
            runs(&server),
            1,
            "ran again after bridge reconnection {cut}"
        );
    }
    // A live press still runs, through the same bridge.
    central.publish(&topic, "PRESS", false);
    assert!(
        wait_until(WAIT, || runs(&server) == 2),
        "a live press did not run"
    );
}
