//! A board moved to another broker by a reload: its entities are deleted from the broker it
//! leaves, all of them. The deletes go out with the DISCONNECT, and a connection closed with
//! the broker's answers unread is reset; mosquitto then dropped every delete after the first
//! and kept the board's buttons, `offline`, on the old broker.

use serde_json::json;

use super::{WAIT, availability, board, config_topic, state_topic, wait_online};
use crate::broker::Broker;
use crate::harness::{Server, to_yaml, wait_until};

/// The topics under the node `node` that `broker` still holds retained.
fn left(broker: &Broker, node: &str) -> Vec<String> {
    broker
        .retained("#")
        .into_iter()
        .map(|(t, _)| t)
        .filter(|t| t.contains(&format!("/{node}/")))
        .collect()
}

#[test]
#[ignore = "needs mosquitto: scripts/test.sh runs it"]
fn a_board_moved_to_another_broker_leaves_nothing_on_the_old_one() {
    let (first, second) = (Broker::start(), Broker::start());
    let actions = json!({"actions": [
        {"id": "door", "title": "Door", "shell": "true"},
        {"id": "lamp", "title": "Lamp", "shell": "true"},
    ]});
    let server = Server::start(board(&first, "moved", json!({}), actions.clone()));
    wait_online(&first, "moved");
    assert!(
        first
            .retained_one(&config_topic("button", "moved", "lamp"))
            .is_some()
    );
    server.run("door");
    first.wait_retained(&state_topic("moved", "door"), WAIT, |p| p.contains("exit"));

    for (from, to) in [(&first, &second), (&second, &first)] {
        let path = server.path("config.yaml");
        let tmp = server.path("config.yaml.tmp");
        std::fs::write(
            &tmp,
            to_yaml(&board(to, "moved", json!({}), actions.clone())),
        )
        .unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        wait_online(to, "moved");
        assert!(
            wait_until(WAIT, || left(from, "moved").is_empty()),
            "the broker left behind still holds {:?}",
            left(from, "moved")
        );
        assert_eq!(from.retained_one(&availability("moved")), None);
    }
    assert!(
        second
            .retained_one(&config_topic("button", "moved", "door"))
            .is_none()
    );
    let _ = server.stop();
}
