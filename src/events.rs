//! The event bus behind EventStream (SPEC §2.4, §8): executions and config changes are
//! published here and fanned out to subscribers. Each subscriber has its own bounded queue;
//! publishing never waits, so a slow client cannot slow the executor or anyone else. A
//! subscriber whose queue is full is cut off and told it fell behind. Events about an
//! action reach only subscribers with the `logs` permission on it, decided at publish time
//! by the one permission function, so hidden events never take room in anyone's queue.
//!
//! The bus does not know the wire format: the API layer gives it an encoder when it is
//! built, and each event is encoded once, however many subscribers receive it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use tokio::sync::mpsc::{self, error::TrySendError};

use crate::config::{Action, Auth};
use crate::execution::Snapshot;
use crate::permissions::{Caller, Decision, Verb, decide};

/// What happened.
#[derive(Debug, Clone)]
pub enum Event {
    ExecutionStarted(Snapshot),
    OutputChunk { tracking_id: String, output: String },
    ExecutionFinished(Snapshot),
    ConfigChanged,
    EntityChanged,
}

/// Turns an event into the bytes a subscriber receives (one Connect envelope).
pub type Encoder = fn(&Event) -> Vec<u8>;

struct Subscriber {
    caller: Caller,
    tx: mpsc::Sender<Bytes>,
    fell_behind: Arc<AtomicBool>,
}

/// One subscriber's end: its queue, and whether the bus cut it off for falling behind.
pub struct Subscription {
    pub rx: mpsc::Receiver<Bytes>,
    fell_behind: Arc<AtomicBool>,
}

impl Subscription {
    /// True when the queue ended because it overflowed (rather than the service stopping).
    pub fn fell_behind(&self) -> bool {
        self.fell_behind.load(Ordering::SeqCst)
    }
}

/// Why a subscription was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    TooMany(usize),
    Closed,
}

pub struct Bus {
    subscribers: Mutex<Vec<Subscriber>>,
    max_subscribers: usize,
    queue_length: usize,
    encode: Encoder,
    closed: AtomicBool,
}

impl Bus {
    pub fn new(max_subscribers: usize, queue_length: usize, encode: Encoder) -> Bus {
        Bus {
            subscribers: Mutex::new(Vec::new()),
            max_subscribers,
            queue_length: queue_length.max(1),
            encode,
            closed: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Subscriber>> {
        self.subscribers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds a subscriber; from now on it receives every event it may see.
    pub fn subscribe(&self, caller: Caller) -> Result<Subscription, Refused> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(Refused::Closed);
        }
        let mut subs = self.lock();
        // Subscribers whose client went away leave their queue closed; forget them first.
        subs.retain(|s| !s.tx.is_closed());
        if subs.len() >= self.max_subscribers {
            return Err(Refused::TooMany(self.max_subscribers));
        }
        let (tx, rx) = mpsc::channel(self.queue_length);
        let fell_behind = Arc::new(AtomicBool::new(false));
        subs.push(Subscriber {
            caller,
            tx,
            fell_behind: Arc::clone(&fell_behind),
        });
        Ok(Subscription { rx, fell_behind })
    }

    /// Sends `event` to every subscriber allowed to see it. `action` is the action the event
    /// is about (none for config events).
    pub fn publish(&self, auth: &Auth, action: Option<&Action>, event: &Event) {
        let mut subs = self.lock();
        if subs.is_empty() {
            return;
        }
        let frame = Bytes::from((self.encode)(event));
        subs.retain(|s| {
            if let Some(a) = action
                && decide(auth, &s.caller, a, Verb::Logs) != Decision::Allow
            {
                return true;
            }
            match s.tx.try_send(frame.clone()) {
                Ok(()) => true,
                Err(TrySendError::Full(_)) => {
                    // Dropping the sender ends the subscriber's stream after what is queued.
                    s.fell_behind.store(true, Ordering::SeqCst);
                    false
                }
                Err(TrySendError::Closed(_)) => false,
            }
        });
    }

    /// Ends every subscription (the service is stopping); later subscriptions are refused.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.lock().clear();
    }

    pub fn subscribers(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Permissions;
    use crate::execution::tests::action;
    use crate::permissions::Provider;

    fn encode(e: &Event) -> Vec<u8> {
        format!("{e:?}").into_bytes()
    }

    #[test]
    fn every_subscriber_gets_every_event_in_order() {
        let bus = Bus::new(4, 8, encode);
        let mut a = bus.subscribe(Caller::guest()).unwrap();
        let mut b = bus.subscribe(Caller::guest()).unwrap();
        for _ in 0..3 {
            bus.publish(
                &Auth::open_to(Permissions::ALL),
                None,
                &Event::ConfigChanged,
            );
        }
        for sub in [&mut a, &mut b] {
            for _ in 0..3 {
                assert_eq!(&sub.rx.try_recv().unwrap()[..], b"ConfigChanged");
            }
            assert!(sub.rx.try_recv().is_err());
        }
    }

    #[test]
    fn a_full_queue_cuts_that_subscriber_off_and_no_other() {
        let bus = Bus::new(4, 2, encode);
        let mut slow = bus.subscribe(Caller::guest()).unwrap();
        let mut fast = bus.subscribe(Caller::guest()).unwrap();
        for i in 0..5 {
            bus.publish(
                &Auth::open_to(Permissions::ALL),
                None,
                &Event::EntityChanged,
            );
            assert!(fast.rx.try_recv().is_ok(), "event {i}");
        }
        assert!(slow.fell_behind());
        assert!(!fast.fell_behind());
        // The two queued events are still delivered, then the queue ends.
        assert!(slow.rx.try_recv().is_ok() && slow.rx.try_recv().is_ok());
        assert!(matches!(
            slow.rx.try_recv(),
            Err(mpsc::error::TryRecvError::Disconnected)
        ));
        assert_eq!(bus.subscribers(), 1);
    }

    #[test]
    fn action_events_reach_only_callers_with_logs() {
        let mut au = Auth::open_to(Permissions::NONE);
        au.access_control_lists
            .push(crate::config::AccessControlList {
                name: "ops".into(),
                match_usernames: vec!["op".into()],
                match_usergroups: vec![],
                add_to_every_action: true,
                view: None,
                exec: None,
                logs: Some(true),
                kill: None,
                show_diagnostics: None,
                show_log_list: None,
            });
        let bus = Bus::new(4, 8, encode);
        let mut guest = bus.subscribe(Caller::guest()).unwrap();
        let op = Caller {
            username: "op".into(),
            usergroup: String::new(),
            provider: Provider::Token,
            sid: None,
        };
        let mut operator = bus.subscribe(op).unwrap();
        let out = Event::OutputChunk {
            tracking_id: "t".into(),
            output: "x".into(),
        };
        bus.publish(&au, Some(&action("a")), &out);
        bus.publish(&au, None, &Event::ConfigChanged);
        assert!(operator.rx.try_recv().is_ok());
        assert_eq!(
            &guest.rx.try_recv().unwrap()[..],
            b"ConfigChanged",
            "the guest sees only the config event"
        );
    }

    #[test]
    fn bounds_and_close() {
        let bus = Bus::new(1, 8, encode);
        let first = bus.subscribe(Caller::guest()).unwrap();
        assert_eq!(
            bus.subscribe(Caller::guest()).err(),
            Some(Refused::TooMany(1))
        );
        drop(first);
        // A subscriber that went away frees its place.
        let mut again = bus.subscribe(Caller::guest()).unwrap();
        bus.close();
        assert!(matches!(
            again.rx.try_recv(),
            Err(mpsc::error::TryRecvError::Disconnected)
        ));
        assert!(!again.fell_behind());
        assert_eq!(bus.subscribe(Caller::guest()).err(), Some(Refused::Closed));
    }
}
