//! The event bus behind EventStream: executions and config changes are
//! published here and fanned out to subscribers. Each subscriber has its own bounded queue;
//! publishing never waits, so a slow client cannot slow the executor or anyone else. A
//! subscriber whose queue is full is cut off and told it fell behind. Events about an
//! action reach only subscribers with the `logs` permission on it, decided at publish time
//! by the one permission function, so hidden events never take room in anyone's queue.
//!
//! A subscriber's caller is not fixed when its stream opens. Each stream comes with a way to
//! identify its caller again (`Reidentify`, from the credentials its request presented);
//! whenever who-is-who may have changed (a login, a logout, a reload: `revalidate`), every
//! stream's caller is identified again before it receives another event. A caller who is gone
//! (an ended session, a removed user or token, a guest where guests must now log in) has its
//! stream cut off as `Cut::Revoked`, and what was still queued for it is not delivered; a
//! caller whose groups changed keeps the stream, and the next event is decided for the caller
//! as they are now.
//!
//! One address holds at most a given number of the subscribers, so a few addresses cannot take
//! every stream; a subscriber that comes through a trusted proxy counts for none. When every
//! place is taken, a newcomer whose network holds less than an even share takes the place of
//! the newest stream of the network holding the most, and a caller who logged in that of a
//! guest (`make_room`): the one cut off is told why (`Cut::Crowded`, `Cut::ForUser`). An IPv6
//! client can take any address of its /64, so a /64 (as the connection share counts it) also
//! holds at most a quarter of all the places, and never less than one address's share. But on
//! a home LAN the /64 is the whole household, so that cap is applied last: when the /64 holds
//! its quarter, the same rule is applied within it first, with addresses as holders (an
//! address under an even split of the quarter takes the newest stream of the address holding
//! the most, a caller who logged in a guest's), and only a newcomer neither rule admits is
//! refused. One device of the household, or its guest pages, cannot keep the others out.

//! The bus does not know the wire format: the API layer gives it an encoder when it is
//! built, and each subscriber says which of the encoder's forms it takes (the API's codecs);
//! each event is encoded once per form, however many subscribers receive it.
//!
//! A service inside actiond that mirrors state elsewhere (the MQTT client) must never be cut
//! off, and must never slow the bus either. It takes an `ActionWatch` instead of a queue:
//! the set of bindings whose executions started or finished since it last looked. Repeated
//! changes of one binding coalesce, so the set is bounded by the number of bindings, and
//! past `MAX_WATCHED` distinct ids it collapses to "everything changed". The watcher then
//! reads the current state from the engine, so nothing it needs can be lost by falling
//! behind.

use std::collections::{BTreeSet, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use tokio::sync::Notify;
use tokio::sync::mpsc::{self, error::TrySendError};

use crate::config::{Action, Auth, Network};
use crate::execution::Snapshot;
use crate::permissions::{Caller, Decision, Provider, Verb, decide};

/// What happened.
#[derive(Debug, Clone)]
pub enum Event {
    ExecutionStarted(Snapshot),
    OutputChunk { tracking_id: String, output: String },
    ExecutionFinished(Snapshot),
    ConfigChanged,
    EntityChanged,
}

/// Which of the encoder's forms a subscriber receives, below [`FORMS`].
pub type Form = usize;

/// How many forms an encoder has.
pub const FORMS: usize = 2;

/// Turns an event into the bytes a subscriber of a form receives (one envelope).
pub type Encoder = fn(&Event, Form) -> Vec<u8>;

/// Identifies a stream's caller again, from what its request presented. Implemented by the
/// API, which knows credentials; the bus only asks.
pub trait Reidentify: Send + Sync {
    /// The caller now, under `auth` (the config in force), or why the stream must end.
    fn again(&self, auth: &Auth) -> Result<Caller, Revoked>;
}

/// Why a stream's caller is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revoked {
    /// Its credentials no longer identify the caller who opened it (the provider it was
    /// identified by says which credentials).
    Gone(Provider),
    /// Guests must log in now.
    LoginRequired,
}

impl std::fmt::Display for Revoked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Revoked::Gone(Provider::Local) => {
                "your session ended (logged out, or your user was removed or given another \
                 password): log in again"
            }
            Revoked::Gone(Provider::Token) => {
                "the API token of this stream is no longer configured"
            }
            Revoked::Gone(Provider::Header) => {
                "the trusted header no longer identifies you (authHttpHeaderUsername or \
                 trustedProxies changed)"
            }
            Revoked::Gone(Provider::System | Provider::Mqtt) => {
                "you are no longer who opened this stream"
            }
            Revoked::LoginRequired => crate::permissions::LOGIN_FIRST,
        })
    }
}

impl std::error::Error for Revoked {}

/// Why the bus ended a subscription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cut {
    /// Its queue was full: what was queued is still delivered, then the stream ends.
    FellBehind,
    /// Its caller is gone (the reason says how): nothing more is delivered.
    Revoked(Revoked),
    /// Every place was taken, its network held more than an even share of them, and a
    /// newcomer from a network holding less needed one: what was queued is still delivered.
    Crowded,
    /// Every place was taken, it was a guest's, and a caller who logged in needed one.
    ForUser,
}

struct Subscriber {
    caller: Caller,
    from: Option<(IpAddr, Network)>,
    /// `None` for a caller that cannot change (the unit tests' subscribers).
    who: Option<Box<dyn Reidentify>>,
    /// The bus's `generation` when `caller` was last identified.
    checked: usize,
    form: Form,
    tx: mpsc::Sender<Bytes>,
    cut: Arc<Mutex<Option<Cut>>>,
}

impl Subscriber {
    fn end(&self, why: Cut) {
        *self.cut.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
    }

    /// Identifies the caller again if who-is-who changed since the last time; false when
    /// the caller is gone (the subscriber is then cut off).
    fn current(&mut self, auth: &Auth, generation: usize) -> bool {
        if self.checked == generation {
            return true;
        }
        self.checked = generation;
        let Some(who) = &self.who else {
            return true;
        };
        match who.again(auth) {
            Ok(caller) => {
                self.caller = caller;
                true
            }
            Err(why) => {
                self.end(Cut::Revoked(why));
                false
            }
        }
    }
}

/// One subscriber's end: its queue, and why the bus cut it off, if it did.
pub struct Subscription {
    pub rx: mpsc::Receiver<Bytes>,
    cut: Arc<Mutex<Option<Cut>>>,
}

impl Subscription {
    /// Why the bus ended this subscription (`None` while it runs, and when the service is
    /// stopping).
    pub fn cut(&self) -> Option<Cut> {
        self.cut.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// True when the queue ended because it overflowed (rather than the service stopping).
    #[cfg(test)]
    pub fn fell_behind(&self) -> bool {
        self.cut() == Some(Cut::FellBehind)
    }
}

/// Why a subscription was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Every one of this many places is taken.
    TooMany(usize),
    /// The subscriber's address holds this many subscriptions already, its most.
    TooManyFrom(usize),
    /// The subscriber's IPv6 /64 holds this many subscriptions already, its most.
    TooManyFromNetwork(usize),
    Closed,
}

/// Where a subscriber comes from, and how many subscribers its address may hold.
#[derive(Debug, Clone, Copy)]
pub struct From {
    pub address: IpAddr,
    pub most: usize,
}

/// How many subscribers one network (an IPv6 /64; an IPv4 address is its own) may hold when
/// one address may hold `most` of the `places`: a quarter of the places, at least `most`.
fn network_share(most: usize, places: usize) -> usize {
    (places / 4).max(most)
}

/// When every one of `places` among the subscribers `within` says are in play is taken: which
/// of them gives its place to a newcomer whose holder is `mine` (`None`: a trusted proxy),
/// and why; `None` when nobody does. `holder` says whom a subscriber's stream counts for
/// (`None`: nobody's, a trusted proxy's).
///
/// As for connections: a newcomer whose holder holds less than an even split of the places
/// among the holders holding them (its own counted) takes the place of the newest stream of
/// the holder holding the most (a guest's, if it has one), when that one holds more than the
/// even split; so a few
/// holders that took every place cannot keep out another. Failing that, a caller who logged
/// in takes the newest guest stream of whoever holds the most guest streams: guests cannot
/// keep a user out either.
///
/// The bus asks it twice: over every stream with networks as holders, when every place of
/// the bus is taken; and over the streams of one IPv6 /64 with addresses as holders, when the
/// /64 holds its share.
fn make_room<K: Copy + Eq + std::hash::Hash>(
    subs: &[Subscriber],
    within: impl Fn(&Subscriber) -> bool,
    holder: impl Fn(&Subscriber) -> Option<K>,
    mine: Option<K>,
    caller: &Caller,
    places: usize,
) -> Option<(usize, Cut)> {
    let newest_of = |of: Option<K>, guests_only: bool| {
        subs.iter()
            .rposition(|s| within(s) && holder(s) == of && (!guests_only || s.caller.is_guest()))
    };
    let in_play = || subs.iter().enumerate().filter(|(_, s)| within(s));
    // Per holder: how many streams, and where its newest is. Of holders with as many, the
    // one with the newest stream gives way, so the choice never rests on a map's order.
    let mut held: HashMap<K, (usize, usize)> = HashMap::new();
    for (at, k) in in_play().filter_map(|(at, s)| Some((at, holder(s)?))) {
        let entry = held.entry(k).or_default();
        *entry = (entry.0 + 1, at);
    }
    if let Some(mine) = mine {
        let own = held.get(&mine).map_or(0, |&(count, _)| count);
        let holders = held.len() + usize::from(own == 0);
        let fair = (places / holders.max(1)).max(1);
        let crowd = held.iter().max_by_key(|&(_, holds)| *holds);
        if let Some((&crowd, &(count, _))) = crowd
            && own < fair
            && count > fair
        {
            // Its guests' streams first: a caller who logged in outranks them.
            let at = newest_of(Some(crowd), true).or_else(|| newest_of(Some(crowd), false));
            return at.map(|at| (at, Cut::Crowded));
        }
    }
    if caller.is_guest() {
        return None;
    }
    let mut guests: HashMap<Option<K>, (usize, usize)> = HashMap::new();
    for (at, s) in in_play().filter(|(_, s)| s.caller.is_guest()) {
        let entry = guests.entry(holder(s)).or_default();
        *entry = (entry.0 + 1, at);
    }
    let (&crowd, _) = guests.iter().max_by_key(|&(_, holds)| *holds)?;
    newest_of(crowd, true).map(|at| (at, Cut::ForUser))
}

/// At most this many distinct binding ids wait in an `ActionWatch`; one more, and it says
/// that everything changed instead (its reader then looks at every binding).
pub const MAX_WATCHED: usize = 4096;

/// What changed since an `ActionWatch` was last read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changed {
    /// These bindings (sorted, each once).
    These(Vec<String>),
    /// Too many to list: look at every binding.
    All,
}

#[derive(Default)]
struct Touched {
    ids: BTreeSet<String>,
    all: bool,
}

/// The bindings whose executions started or finished since the holder last looked. Marking
/// never waits and never fails, whatever the holder is doing.
#[derive(Default)]
pub struct ActionWatch {
    touched: Mutex<Touched>,
    wake: Notify,
}

impl ActionWatch {
    fn touched(&self) -> MutexGuard<'_, Touched> {
        self.touched.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Notes that `binding_id` changed.
    pub fn mark(&self, binding_id: &str) {
        {
            let mut t = self.touched();
            if !t.all && !t.ids.contains(binding_id) {
                if t.ids.len() >= MAX_WATCHED {
                    t.all = true;
                    t.ids.clear();
                } else {
                    t.ids.insert(binding_id.to_string());
                }
            }
        }
        // notify_one keeps a permit when nobody waits yet, so a mark is never missed.
        self.wake.notify_one();
    }

    /// What changed since the last call, if anything; the watch is empty afterwards.
    pub fn take(&self) -> Option<Changed> {
        let mut t = self.touched();
        if std::mem::take(&mut t.all) {
            t.ids.clear();
            return Some(Changed::All);
        }
        if t.ids.is_empty() {
            return None;
        }
        Some(Changed::These(
            std::mem::take(&mut t.ids).into_iter().collect(),
        ))
    }

    /// Waits until something changed, then takes it.
    pub async fn changed(&self) -> Changed {
        loop {
            if let Some(c) = self.take() {
                return c;
            }
            self.wake.notified().await;
        }
    }
}

pub struct Bus {
    subscribers: Mutex<Vec<Subscriber>>,
    watches: Mutex<Vec<Arc<ActionWatch>>>,
    max_subscribers: usize,
    queue_length: usize,
    encode: Encoder,
    closed: AtomicBool,
    /// Changes whenever who-is-who may have changed (`revalidate`). A `usize`, not a `u64`:
    /// ARMv5 (the armel build) has no 64-bit atomics, and only equality is asked of it, which
    /// a wrap after 2^32 changes does not break.
    generation: AtomicUsize,
}

impl Bus {
    pub fn new(max_subscribers: usize, queue_length: usize, encode: Encoder) -> Bus {
        Bus {
            subscribers: Mutex::new(Vec::new()),
            watches: Mutex::new(Vec::new()),
            max_subscribers,
            queue_length: queue_length.max(1),
            encode,
            closed: AtomicBool::new(false),
            generation: AtomicUsize::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Subscriber>> {
        self.subscribers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds a subscriber whose caller never changes; from now on it receives every event it
    /// may see.
    #[cfg(test)]
    pub fn subscribe(&self, caller: Caller) -> Result<Subscription, Refused> {
        self.add(caller, None, 0, None)
    }

    /// Adds a subscriber whose caller `who` identifies again after every `revalidate`, and
    /// which receives the encoder's `form` of each event. `from`: its network and that
    /// network's share (`None` for one that counts for none, a trusted proxy).
    pub fn subscribe_as(
        &self,
        caller: Caller,
        who: Box<dyn Reidentify>,
        form: Form,
        from: Option<From>,
    ) -> Result<Subscription, Refused> {
        self.add(caller, Some(who), form.min(FORMS - 1), from)
    }

    fn add(
        &self,
        caller: Caller,
        who: Option<Box<dyn Reidentify>>,
        form: Form,
        from: Option<From>,
    ) -> Result<Subscription, Refused> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(Refused::Closed);
        }
        let mut subs = self.lock();
        // Subscribers whose client went away leave their queue closed; forget them first.
        subs.retain(|s| !s.tx.is_closed());
        let from = from.map(|f| {
            let address = f.address.to_canonical();
            (From { address, ..f }, Network::of(address))
        });
        if let Some((f, network)) = from {
            let same = |s: &&Subscriber| s.from.is_some_and(|(a, _)| a == f.address);
            if subs.iter().filter(same).count() >= f.most {
                return Err(Refused::TooManyFrom(f.most));
            }
            // The /64 at its share: within it, an address under an even split of it takes the
            // place of the address holding the most, and a caller who logged in a guest's,
            // before the /64's cap refuses anyone (one device of a household, or its guests,
            // cannot keep the others of its /64 out).
            let most = network_share(f.most, self.max_subscribers);
            let near = |s: &Subscriber| s.from.is_some_and(|(_, n)| n == network);
            if matches!(network, Network::V6(_)) && subs.iter().filter(|s| near(s)).count() >= most
            {
                let address = |s: &Subscriber| s.from.map(|(a, _)| a);
                let Some((at, why)) =
                    make_room(&subs, near, address, Some(f.address), &caller, most)
                else {
                    return Err(Refused::TooManyFromNetwork(most));
                };
                subs.remove(at).end(why);
            }
        }
        if subs.len() >= self.max_subscribers {
            let network = from.map(|(_, n)| n);
            let holder = |s: &Subscriber| s.from.map(|(_, n)| n);
            let everyone = |_: &Subscriber| true;
            let Some((at, why)) = make_room(
                &subs,
                everyone,
                holder,
                network,
                &caller,
                self.max_subscribers,
            ) else {
                return Err(Refused::TooMany(self.max_subscribers));
            };
            // Dropping its sender ends that stream after what is queued, saying why.
            subs.remove(at).end(why);
        }
        let (tx, rx) = mpsc::channel(self.queue_length);
        let cut = Arc::new(Mutex::new(None));
        subs.push(Subscriber {
            caller,
            from: from.map(|(f, network)| (f.address, network)),
            who,
            checked: self.generation.load(Ordering::SeqCst),
            form,
            tx,
            cut: Arc::clone(&cut),
        });
        Ok(Subscription { rx, cut })
    }

    /// Who-is-who may have changed (a login, a logout, a reload, with `auth` now in force):
    /// every subscriber's caller is identified again, now, and those who are gone are cut off.
    /// A subscriber not reached here (one added meanwhile) is identified again before its
    /// next event.
    pub fn revalidate(&self, auth: &Auth) {
        let generation = self
            .generation
            .fetch_add(1, Ordering::SeqCst)
            .wrapping_add(1);
        self.lock().retain_mut(|s| s.current(auth, generation));
    }

    /// A new watch of which bindings' executions start and finish (see `ActionWatch`). It
    /// is never cut off and not counted against `maxEventSubscribers`.
    pub fn watch_actions(&self) -> Arc<ActionWatch> {
        let watch = Arc::new(ActionWatch::default());
        self.watches
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Arc::clone(&watch));
        watch
    }

    /// Sends `event` to every subscriber allowed to see it. `action` is the action the event
    /// is about (none for config events).
    /// Whether any event stream is subscribed. When none is, a run's start and end need not
    /// be built into events (a snapshot of the run, its output copied, about 4,000
    /// instructions each, on the path of every press: before its spawn and before its
    /// answer); `run_changed` tells the watches instead. A stream that subscribes later is
    /// not owed them: its first frames give the state it joins.
    pub fn subscribed(&self) -> bool {
        !self.lock().is_empty()
    }

    /// Tells every action watch that a run of `binding_id` started or finished, as
    /// publishing its event does.
    pub fn run_changed(&self, binding_id: &str) {
        for w in self
            .watches
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            w.mark(binding_id);
        }
    }

    pub fn publish(&self, auth: &Auth, action: Option<&Action>, event: &Event) {
        if let Event::ExecutionStarted(s) | Event::ExecutionFinished(s) = event {
            self.run_changed(&s.action_id);
        }
        let mut subs = self.lock();
        if subs.is_empty() {
            return;
        }
        // Each form is encoded when the first subscriber that takes it is reached.
        let mut frames: [Option<Bytes>; FORMS] = Default::default();
        let encode = self.encode;
        let generation = self.generation.load(Ordering::SeqCst);
        subs.retain_mut(|s| {
            if !s.current(auth, generation) {
                return false;
            }
            if let Some(a) = action
                && decide(auth, &s.caller, a, Verb::Logs) != Decision::Allow
            {
                return true;
            }
            let frame = frames[s.form].get_or_insert_with(|| Bytes::from(encode(event, s.form)));
            match s.tx.try_send(frame.clone()) {
                Ok(()) => true,
                Err(TrySendError::Full(_)) => {
                    // Dropping the sender ends the subscriber's stream after what is queued.
                    s.end(Cut::FellBehind);
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

    fn encode(e: &Event, _: Form) -> Vec<u8> {
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
    fn a_watch_coalesces_changes_and_is_never_cut_off() {
        let bus = Bus::new(4, 1, encode);
        let watch = bus.watch_actions();
        let _slow = bus.subscribe(Caller::guest()).unwrap();
        let au = Auth::open_to(Permissions::ALL);
        let snap = |id: &str| {
            let mut s = crate::execution::tests::execution("t", id).snapshot();
            s.action_id = id.to_string();
            s
        };
        assert_eq!(watch.take(), None);
        for id in ["b", "a", "b"] {
            bus.publish(&au, Some(&action(id)), &Event::ExecutionStarted(snap(id)));
            bus.publish(&au, Some(&action(id)), &Event::ExecutionFinished(snap(id)));
        }
        // Output and config events are not about an execution's state.
        bus.publish(
            &au,
            Some(&action("c")),
            &Event::OutputChunk {
                tracking_id: "t".into(),
                output: "x".into(),
            },
        );
        bus.publish(&au, None, &Event::ConfigChanged);
        assert_eq!(bus.subscribers(), 0, "the queue of one fell behind");
        assert_eq!(
            watch.take(),
            Some(Changed::These(vec!["a".into(), "b".into()]))
        );
        assert_eq!(watch.take(), None);
        // Closing the streams leaves the watch alone.
        bus.close();
        bus.publish(
            &au,
            Some(&action("d")),
            &Event::ExecutionFinished(snap("d")),
        );
        assert_eq!(watch.take(), Some(Changed::These(vec!["d".into()])));
    }

    #[test]
    fn a_run_change_reaches_the_watches_without_any_subscriber() {
        let bus = Bus::new(4, 8, encode);
        let watch = bus.watch_actions();
        // No stream: the engine builds no event and tells the watches alone.
        assert!(!bus.subscribed());
        bus.run_changed("a");
        bus.run_changed("a");
        assert_eq!(watch.take(), Some(Changed::These(vec!["a".into()])));
        let stream = bus.subscribe(Caller::guest()).unwrap();
        assert!(bus.subscribed());
        drop(stream);
        bus.close();
        assert!(!bus.subscribed());
    }

    #[test]
    fn a_watch_past_its_bound_says_everything_changed() {
        let watch = ActionWatch::default();
        for i in 0..MAX_WATCHED {
            watch.mark(&format!("b{i}"));
        }
        watch.mark("b0");
        assert!(matches!(watch.take(), Some(Changed::These(v)) if v.len() == MAX_WATCHED));
        for i in 0..=MAX_WATCHED {
            watch.mark(&format!("b{i}"));
        }
        assert_eq!(watch.take(), Some(Changed::All));
        assert_eq!(watch.take(), None);
    }

    #[tokio::test]
    async fn a_watch_wakes_its_reader() {
        let watch = Arc::new(ActionWatch::default());
        let reader = tokio::spawn({
            let w = Arc::clone(&watch);
            async move { w.changed().await }
        });
        tokio::task::yield_now().await;
        watch.mark("x");
        assert_eq!(reader.await.unwrap(), Changed::These(vec!["x".into()]));
        // A mark made while nobody waits is found by the next wait.
        watch.mark("y");
        assert_eq!(watch.changed().await, Changed::These(vec!["y".into()]));
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

    struct Nobody;

    impl Reidentify for Nobody {
        fn again(&self, _: &Auth) -> Result<Caller, Revoked> {
            Ok(Caller::guest())
        }
    }

    #[test]
    fn one_network_holds_its_share_and_no_more() {
        let bus = Bus::new(8, 8, encode);
        let from = |ip: &str| {
            Some(From {
                address: ip.parse().unwrap(),
                most: 2,
            })
        };
        let sub = |ip: &str| bus.subscribe_as(Caller::guest(), Box::new(Nobody), 0, from(ip));
        let first = sub("10.0.0.1").unwrap();
        let _second = sub("10.0.0.1").unwrap();
        assert_eq!(sub("10.0.0.1").err(), Some(Refused::TooManyFrom(2)));
        // Another address, and one that counts for no network (a trusted proxy), still may.
        let _other = sub("10.0.0.2").unwrap();
        let _proxied = bus
            .subscribe_as(Caller::guest(), Box::new(Nobody), 0, None)
            .unwrap();
        // An IPv6 address holds its share; its /64 holds a quarter of the places (2 of 8),
        // never less than one address's share.
        let _v6 = sub("fd00::1").unwrap();
        let _v6b = sub("fd00::2").unwrap();
        assert_eq!(sub("fd00::3").err(), Some(Refused::TooManyFromNetwork(2)));
        drop(first);
        assert!(sub("10.0.0.1").is_ok(), "a place given back is taken again");
    }

    #[test]
    fn when_every_place_is_taken_the_crowd_and_then_guests_give_way() {
        let bus = Bus::new(8, 8, encode);
        let from = |ip: &str| {
            Some(From {
                address: ip.parse().unwrap(),
                most: 4,
            })
        };
        let sub =
            |caller: Caller, ip: &str| bus.subscribe_as(caller, Box::new(Nobody), 0, from(ip));
        let user = Caller {
            username: "op".into(),
            usergroup: String::new(),
            provider: Provider::Local,
            sid: None,
        };
        // Two addresses take all eight places, the newest of the first last.
        let mut b: Vec<_> = (0..4).map(|_| sub(Caller::guest(), "10.0.0.2")).collect();
        let mut a: Vec<_> = (0..4).map(|_| sub(Caller::guest(), "10.0.0.1")).collect();
        let (a, b): (Vec<_>, Vec<_>) = (
            a.drain(..).map(Result::unwrap).collect(),
            b.drain(..).map(Result::unwrap).collect(),
        );
        // A third address holds less than an even split (8 / 3 = 2): a crowd's newest gives
        // way, and is told why.
        let _c = sub(Caller::guest(), "10.0.0.3").unwrap();
        let cut: Vec<_> = a.iter().chain(&b).filter_map(Subscription::cut).collect();
        assert_eq!(cut, vec![Cut::Crowded]);
        assert_eq!(a[3].cut(), Some(Cut::Crowded), "the newest of the crowd");
        assert_eq!(bus.subscribers(), 8);
        // A guest of an address at its even split is refused; a user is not, and takes a
        // guest's place.
        let _c2 = sub(Caller::guest(), "10.0.0.3").unwrap();
        assert_eq!(
            sub(Caller::guest(), "10.0.0.3").err(),
            Some(Refused::TooMany(8))
        );
        let _op = sub(user.clone(), "10.0.0.3").unwrap();
        assert_eq!(bus.subscribers(), 8);
        let cut: Vec<_> = a.iter().chain(&b).filter_map(Subscription::cut).collect();
        assert_eq!(cut.len(), 3, "{cut:?}");
        assert!(cut.contains(&Cut::ForUser), "{cut:?}");
        // Nobody gives way to a newcomer through a trusted proxy, a guest.
        assert_eq!(
            bus.subscribe_as(Caller::guest(), Box::new(Nobody), 0, None)
                .err(),
            Some(Refused::TooMany(8))
        );
    }

    #[test]
    fn the_phones_of_one_ipv6_prefix_share_a_quarter_of_the_places() {
        let bus = Bus::new(64, 8, encode);
        let sub = |ip: String| {
            let from = From {
                address: ip.parse().unwrap(),
                most: 4,
            };
            bus.subscribe_as(Caller::guest(), Box::new(Nobody), 0, Some(from))
        };
        // Eight phones of one /64, two pages each: 16 streams, a quarter of 64.
        let held: Vec<_> = (1..=8)
            .flat_map(|n| [sub(format!("2001:db8::{n}")), sub(format!("2001:db8::{n}"))])
            .map(Result::unwrap)
            .collect();
        assert_eq!(held.len(), 16);
        // A ninth phone of the /64 holds less than an even split of its quarter (16 / 9):
        // the newest stream of a phone holding the most gives way.
        let ninth = sub("2001:db8::99".into()).expect("a ninth phone");
        let cut: Vec<_> = held.iter().filter_map(Subscription::cut).collect();
        assert_eq!(cut, vec![Cut::Crowded]);
        assert_eq!(
            held[15].cut(),
            Some(Cut::Crowded),
            "the newest of the last phone"
        );
        // A second stream of the ninth phone would take it back: refused.
        assert_eq!(
            sub("2001:db8::99".into()).err(),
            Some(Refused::TooManyFromNetwork(16))
        );
        drop(ninth);
        // Another prefix, and an IPv4 address, are not held back by it.
        assert!(sub("2001:db8:1::1".into()).is_ok());
        assert!(sub("192.0.2.1".into()).is_ok());
    }

    /// What a stream's caller is told when the stream ends, word for word.
    #[test]
    fn revocations_word_for_word() {
        let cases = [
            (
                Revoked::Gone(Provider::Local),
                "your session ended (logged out, or your user was removed or given another \
                 password): log in again",
            ),
            (
                Revoked::Gone(Provider::Token),
                "the API token of this stream is no longer configured",
            ),
            (
                Revoked::Gone(Provider::Header),
                "the trusted header no longer identifies you (authHttpHeaderUsername or \
                 trustedProxies changed)",
            ),
            (
                Revoked::Gone(Provider::Mqtt),
                "you are no longer who opened this stream",
            ),
            (
                Revoked::LoginRequired,
                "log in first, or send an API token: guests must log in here",
            ),
        ];
        for (why, words) in cases {
            assert_eq!(why.to_string(), words);
        }
    }

    /// Guest streams of one device holding its /64's quarter do not
    /// keep out a caller who logged in from the same /64, nor a guest page of another address
    /// of it; an address of the /64 holding as many as each is refused.
    #[test]
    fn a_64s_quarter_gives_way_within_before_refusing() {
        let bus = Bus::new(64, 8, encode);
        let sub = |caller: Caller, ip: &str| {
            let from = From {
                address: ip.parse().unwrap(),
                most: 4,
            };
            bus.subscribe_as(caller, Box::new(Nobody), 0, Some(from))
        };
        let alice = Caller {
            username: "alice".into(),
            usergroup: "admins".into(),
            provider: Provider::Local,
            sid: None,
        };
        let bad: Vec<_> = (1..=4)
            .flat_map(|n| (0..4).map(move |_| n))
            .map(|n| sub(Caller::guest(), &format!("fd30:c::b:{n}")).unwrap())
            .collect();
        assert_eq!(bus.subscribers(), 16);
        // A guest page of alice's address: under an even split of 16 among 5 addresses.
        let _guest = sub(Caller::guest(), "fd30:c::a11c").expect("a guest of another address");
        // Her own page, logged in: a guest's place, once the even split no longer helps.
        let _page = sub(alice.clone(), "fd30:c::a11c").expect("alice's page");
        let _page2 = sub(alice.clone(), "fd30:c::a11c").expect("alice's second page");
        let _page3 = sub(alice, "fd30:c::a11c").expect("alice's third page");
        let cut: Vec<_> = bad.iter().filter_map(Subscription::cut).collect();
        assert_eq!(cut.len(), 4, "{cut:?}");
        assert!(cut.contains(&Cut::ForUser), "{cut:?}");
        assert_eq!(bus.subscribers(), 16);
        // The device takes sixteen addresses, one guest stream each: a guest of a seventeenth
        // is refused, a caller who logged in is not.
        let bus = Bus::new(64, 8, encode);
        let sub = |caller: Caller, ip: &str| {
            let from = From {
                address: ip.parse().unwrap(),
                most: 4,
            };
            bus.subscribe_as(caller, Box::new(Nobody), 0, Some(from))
        };
        let held: Vec<_> = (1..=16)
            .map(|n| sub(Caller::guest(), &format!("fd30:c::b:{n}")).unwrap())
            .collect();
        assert_eq!(
            sub(Caller::guest(), "fd30:c::a11c").err(),
            Some(Refused::TooManyFromNetwork(16)),
        );
        let bob = Caller {
            username: "bob".into(),
            usergroup: String::new(),
            provider: Provider::Local,
            sid: None,
        };
        assert!(sub(bob, "fd30:c::a11c").is_ok());
        assert_eq!(held.iter().filter_map(Subscription::cut).count(), 1);
    }
}
