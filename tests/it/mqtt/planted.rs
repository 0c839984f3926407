//! Discovery messages another client of the broker writes under the board's node: one
//! planted while actiond is connected (it arrives live, unmarked) is deleted at once, as one
//! found at connection is, and an overwrite of one of actiond's own is put back; each is said
//! at warn level, rate-limited.

use serde_json::json;

use super::{WAIT, board, config_topic, wait_online};
use crate::broker::Broker;
use crate::harness::{Server, wait_until};

/// A button of another board, under this board's node and device.
const FOREIGN: &str = r#"{"name":"Unlock front door","command_topic":"actiond/other-board/unlock/press","device":{"identifiers":["actiond_planted"]}}"#;

#[test]
#[ignore = "needs mosquitto: scripts/test.sh runs it"]
fn a_discovery_message_planted_while_connected_is_deleted_at_once() {
    let broker = Broker::start();
    let early = config_topic("button", "planted", "early");
    broker.publish(&early, FOREIGN, true);
    let server = Server::start(board(
        &broker,
        "planted",
        json!({}),
        json!({"actions": [{"id": "reboot", "shell": "true"}]}),
    ));
    wait_online(&broker, "planted");
    assert!(wait_until(WAIT, || broker.retained_one(&early).is_none()));
    let ours = config_topic("button", "planted", "reboot");
    let announced = broker.wait_retained(&ours, WAIT, |_| true);
    let late: Vec<String> = (0..20)
        .map(|i| config_topic("button", "planted", &format!("late{i}")))
        .collect();
    for topic in &late {
        broker.publish(topic, FOREIGN, true);
    }
    broker.publish(&ours, FOREIGN, true);
    assert!(
        wait_until(WAIT, || late
            .iter()
            .all(|t| broker.retained_one(t).is_none())),
        "a planted message is still retained: {:?}",
        broker.retained("homeassistant/button/planted/#")
    );
    broker.wait_retained(&ours, WAIT, |p| p == announced);
    assert!(server.log_shows("wrote a discovery message under this node"));
    // Twenty-one writes: a few lines, then a count of what was left out.
    let said = server.log_count("another client of the broker wrote");
    assert!((1..=6).contains(&said), "said {said} times");
}
