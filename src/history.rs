//! The history of executions: `logHistoryLimit` records that ran, a small ring of their own
//! for the newest blocked ones, lookup by tracking id, and newest-first paging over both
//! (GetLogs). When the history is full, the record let go is chosen by `Shares`: the oldest of
//! the caller holding the most records (then of that caller's action holding the most), not
//! the oldest of all, so that a guest pressing many cheap actions, or one in a loop, takes
//! its own older runs, never another caller's last ones. Blocked runs are cheap to make
//! (anyone with `exec` on one rate-limited action can make hundreds a second), so they never
//! push a record that ran out of the history: the audit trail cannot be erased by pressing a
//! button that is busy. Records that ran are kept by their number in the order they came, so
//! one let go from the middle costs O(log n); the configured limit bounds them, and
//! `MAX_HISTORY` the limit. This module only holds records: it never runs, kills or persists
//! anything.

use std::borrow::Borrow;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::Hash;
use std::sync::Arc;

use crate::execution::{Execution, Holder};

/// The largest `logHistoryLimit` the config accepts.
pub const MAX_HISTORY: usize = 10_000;

/// Blocked records kept, beside the `logHistoryLimit` records that ran.
pub const MAX_BLOCKED: usize = 32;

pub struct History {
    /// Records that ran, by their number in the order records that ran came (a record may
    /// leave from the middle, so the number is kept, not counted): at most `limit`.
    ring: BTreeMap<u64, Arc<Execution>>,
    /// Which records that ran each caller and action holds, to choose which one goes.
    shares: Shares,
    /// Blocked records, oldest first, each with the number of records that ran inserted
    /// before it (its place among them, for the merged newest-first order).
    blocked: heapless::Deque<(u64, Arc<Execution>), MAX_BLOCKED>,
    /// Records that ran, inserted since the start (the newest's sequence number plus one).
    ran: u64,
    by_id: HashMap<String, Arc<Execution>>,
    limit: usize,
}

/// One page of a newest-first listing.
#[derive(Debug)]
pub struct Page {
    pub entries: Vec<Arc<Execution>>,
    pub total: usize,
    pub remaining: usize,
}

impl History {
    pub fn new(limit: usize) -> Self {
        History {
            ring: BTreeMap::new(),
            shares: Shares::default(),
            blocked: heapless::Deque::new(),
            ran: 0,
            by_id: HashMap::new(),
            limit: limit.clamp(1, MAX_HISTORY),
        }
    }

    /// Records held, blocked ones included.
    pub fn len(&self) -> usize {
        self.ring.len() + self.blocked.len()
    }

    /// Changes the limit (a reload); a smaller one lets records go now, by the same rule as
    /// `insert`.
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit.clamp(1, MAX_HISTORY);
        self.trim();
    }

    /// Lets records that ran go while there are more than the limit, each chosen by
    /// [`Shares::evict`]; returns them.
    fn trim(&mut self) -> Vec<Arc<Execution>> {
        let mut evicted = Vec::new();
        while self.shares.len() > self.limit {
            let Some(seq) = self.shares.evict() else {
                break;
            };
            if let Some(old) = self.take_ran(seq) {
                self.by_id.remove(old.tracking_id.as_str());
                evicted.push(old);
            }
        }
        evicted
    }

    /// Takes the record that ran numbered `seq` out of the ring, keeping the others' order.
    fn take_ran(&mut self, seq: u64) -> Option<Arc<Execution>> {
        self.ring.remove(&seq)
    }

    /// Adds a record, evicting beyond the bound of its own kind: a record that ran evicts
    /// one that ran (chosen by [`Shares::evict`]), a
    /// `blocked` one the oldest blocked one. Returns what was evicted.
    pub fn insert(&mut self, e: Arc<Execution>, blocked: bool) -> Vec<Arc<Execution>> {
        let mut evicted = Vec::new();
        self.by_id.insert(e.tracking_id.to_string(), e.clone());
        if blocked {
            if self.blocked.is_full()
                && let Some((_, old)) = self.blocked.pop_front()
            {
                self.by_id.remove(old.tracking_id.as_str());
                evicted.push(old);
            }
            // Room was made above.
            let _ = self.blocked.push_back((self.ran, e));
            return evicted;
        }
        // Counted before the choice, so that the caller and action pressing now hold the
        // record they add; the new record is never the one chosen (a key's oldest is chosen,
        // and of keys holding one record each, the oldest record's).
        self.shares.add(&e.holder, &e.binding_id, self.ran);
        self.ring.insert(self.ran, e);
        self.ran += 1;
        evicted.extend(self.trim());
        evicted
    }

    pub fn get(&self, tracking_id: &str) -> Option<&Arc<Execution>> {
        self.by_id.get(tracking_id)
    }

    pub fn contains(&self, tracking_id: &str) -> bool {
        self.by_id.contains_key(tracking_id)
    }

    /// The most recent execution of a binding.
    pub fn latest_for(&self, binding_id: &str) -> Option<&Arc<Execution>> {
        self.newest_first().find(|e| e.binding_id == binding_id)
    }

    /// Newest first, oldest last: both rings merged in the order their records came.
    pub fn newest_first(&self) -> impl Iterator<Item = &Arc<Execution>> {
        let mut ran = self.ring.iter().rev().peekable();
        let mut blocked = self.blocked.iter().rev().peekable();
        std::iter::from_fn(move || {
            // A blocked record placed after `k` runs is newer than the run numbered `k - 1`.
            let take_blocked = match (blocked.peek(), ran.peek()) {
                (Some((k, _)), Some((seq, _))) => k > *seq,
                (Some(_), None) => true,
                (None, _) => false,
            };
            if take_blocked {
                blocked.next().map(|(_, e)| e)
            } else {
                ran.next().map(|(_, e)| e)
            }
        })
    }

    /// A page of the records `keep` accepts, newest first, skipping `offset` of them.
    pub fn page(&self, keep: impl Fn(&Execution) -> bool, offset: usize, page_size: usize) -> Page {
        let visible: Vec<&Arc<Execution>> = self.newest_first().filter(|e| keep(e)).collect();
        let (start, end, remaining) = page_bounds(visible.len(), offset, page_size);
        Page {
            entries: visible[start..end].iter().map(|e| Arc::clone(e)).collect(),
            total: visible.len(),
            remaining,
        }
    }
}

/// The rule that chooses which record that ran goes when the history holds
/// `logHistoryLimit` of them: first the caller ([`Holder`]) holding the most records, and of
/// callers holding as many, the one whose oldest record is the oldest; then, among that
/// caller's records, the oldest of its action (binding) holding the most, and of actions
/// holding as many, the one whose oldest record is the oldest. So a guest pressing many
/// actions (or one action many times) takes its own older runs once it holds the most, and
/// never cuts another caller below its own count; a caller pressing one action in a loop
/// takes that action's older runs, never its own last run of another; when every caller and
/// action holds as many, the oldest record of all goes, as in a plain ring. Records are named
/// by their number in the order they came. The history, the history file's compaction and the
/// restore at start each keep one, so memory, disk and a restart keep the same records.
/// Adding, letting go and choosing each cost O(log n).
#[derive(Debug, Default)]
pub struct Shares {
    /// Each caller's records.
    holders: Tally<Holder>,
    /// Each caller's records by action.
    actions: HashMap<Holder, Tally<String>>,
}

impl Shares {
    /// Records held.
    pub fn len(&self) -> usize {
        self.holders.len
    }

    /// Holds record `seq` of `binding`, run by `holder` (usually above every number added
    /// before; one that is not, a record that changed kind in a restored file, takes its
    /// place by number).
    pub fn add(&mut self, holder: &Holder, binding: &str, seq: u64) {
        if self.holders.add(holder, seq) {
            if !self.actions.contains_key(holder) {
                self.actions.insert(holder.clone(), Tally::default());
            }
            if let Some(actions) = self.actions.get_mut(holder) {
                actions.add(binding, seq);
            }
        }
    }

    /// Lets record `seq` of `binding` and `holder` go without choosing it (it became another
    /// kind).
    pub fn remove(&mut self, holder: &Holder, binding: &str, seq: u64) {
        if !self.holders.remove(holder, seq) {
            return;
        }
        if let Some(actions) = self.actions.get_mut(holder) {
            actions.remove(binding, seq);
            if actions.len == 0 {
                self.actions.remove(holder);
            }
        }
    }

    /// Chooses the record to let go, and lets it go: of the caller holding the most, the
    /// oldest of its action holding the most (ties: the oldest first, each time).
    pub fn evict(&mut self) -> Option<u64> {
        let holder = self.holders.most()?.clone();
        let actions = self.actions.get_mut(&holder)?;
        let binding = actions.most()?.clone();
        let seq = actions.first(binding.as_str())?;
        actions.remove(binding.as_str(), seq);
        if actions.len == 0 {
            self.actions.remove(&holder);
        }
        self.holders.remove(&holder, seq);
        Some(seq)
    }
}

/// Records (by number) held by keys, and the keys in the order they give way: the one
/// holding the most last, and of those holding as many, the one whose oldest record is the
/// oldest. Numbers are unique, so no two keys rank alike.
#[derive(Debug)]
struct Tally<K> {
    held: HashMap<K, BTreeSet<u64>>,
    /// Every key holding a record by (records, its oldest reversed).
    order: BTreeMap<(usize, Reverse<u64>), K>,
    len: usize,
}

impl<K> Default for Tally<K> {
    fn default() -> Self {
        Tally {
            held: HashMap::new(),
            order: BTreeMap::new(),
            len: 0,
        }
    }
}

impl<K: Eq + Hash> Tally<K> {
    fn rank(set: &BTreeSet<u64>) -> Option<(usize, Reverse<u64>)> {
        Some((set.len(), Reverse(*set.first()?)))
    }

    /// Applies `change` to `key`'s records, keeping the order; true when it changed them.
    fn change<Q>(&mut self, key: &Q, change: impl FnOnce(&mut BTreeSet<u64>) -> bool) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        if !self.held.contains_key(key) {
            self.held.insert(key.to_owned(), BTreeSet::new());
        }
        let Some(set) = self.held.get_mut(key) else {
            return false;
        };
        let before = Self::rank(set);
        if !change(set) {
            if set.is_empty() {
                self.held.remove(key);
            }
            return false;
        }
        let after = Self::rank(set);
        if let Some(rank) = before {
            self.order.remove(&rank);
        }
        match after {
            Some(rank) => {
                self.order.insert(rank, key.to_owned());
            }
            None => {
                self.held.remove(key);
            }
        }
        true
    }

    fn add<Q>(&mut self, key: &Q, seq: u64) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let added = self.change(key, |set| set.insert(seq));
        self.len += usize::from(added);
        added
    }

    fn remove<Q>(&mut self, key: &Q, seq: u64) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        if !self.held.contains_key(key) {
            return false;
        }
        let removed = self.change(key, |set| set.remove(&seq));
        self.len -= usize::from(removed);
        removed
    }

    /// The key that gives way first.
    fn most(&self) -> Option<&K> {
        self.order.last_key_value().map(|(_, key)| key)
    }

    /// `key`'s oldest record.
    fn first<Q>(&self, key: &Q) -> Option<u64>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.held.get(key)?.first().copied()
    }
}

/// Paging arithmetic over a newest-first list of `total` items: the page is
/// `[start, end)`, and `remaining` counts the older items after it.
pub fn page_bounds(total: usize, offset: usize, page_size: usize) -> (usize, usize, usize) {
    let start = offset.min(total);
    let end = start.saturating_add(page_size).min(total);
    (start, end, total - end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::tests::execution;

    #[test]
    fn paging_arithmetic() {
        // (total, offset, size) -> (start, end, remaining)
        let table = [
            ((0, 0, 10), (0, 0, 0)),
            ((5, 0, 10), (0, 5, 0)),
            ((25, 0, 10), (0, 10, 15)),
            ((25, 10, 10), (10, 20, 5)),
            ((25, 20, 10), (20, 25, 0)),
            ((25, 24, 10), (24, 25, 0)),
            ((25, 25, 10), (25, 25, 0)),
            ((25, 30, 10), (25, 25, 0)),
            ((25, usize::MAX, 10), (25, 25, 0)),
            ((25, 3, usize::MAX), (3, 25, 0)),
        ];
        for ((total, offset, size), want) in table {
            assert_eq!(
                page_bounds(total, offset, size),
                want,
                "{total} {offset} {size}"
            );
        }
    }

    fn ids(p: &Page) -> Vec<String> {
        p.entries
            .iter()
            .map(|e| e.tracking_id.to_string())
            .collect()
    }

    #[test]
    fn pages_are_newest_first_and_filtered_before_paging() {
        let mut h = History::new(100);
        for i in 0..12 {
            let binding = if i % 2 == 0 { "even" } else { "odd" };
            h.insert(Arc::new(execution(&format!("e{i}"), binding)), false);
        }
        let p = h.page(|_| true, 0, 5);
        assert_eq!(ids(&p), ["e11", "e10", "e9", "e8", "e7"]);
        assert_eq!((p.total, p.remaining), (12, 7));
        let odd = h.page(|e| e.binding_id == "odd", 4, 5);
        assert_eq!(ids(&odd), ["e3", "e1"]);
        assert_eq!((odd.total, odd.remaining), (6, 0));
        assert_eq!(h.latest_for("even").unwrap().tracking_id.as_str(), "e10");
        assert!(h.latest_for("none").is_none());
    }

    #[test]
    fn the_limit_evicts_the_oldest() {
        let mut h = History::new(3);
        for i in 0..5 {
            h.insert(Arc::new(execution(&format!("e{i}"), "a")), false);
        }
        assert_eq!(h.len(), 3);
        assert!(!h.contains("e1") && h.get("e0").is_none());
        assert!(h.contains("e2") && h.contains("e4"));
        assert_eq!(ids(&h.page(|_| true, 0, 10)), ["e4", "e3", "e2"]);
    }

    #[test]
    fn blocked_records_never_evict_records_that_ran() {
        let mut h = History::new(3);
        let add = |h: &mut History, id: &str, blocked: bool| {
            h.insert(Arc::new(execution(id, "a")), blocked)
        };
        add(&mut h, "r0", false);
        add(&mut h, "b0", true);
        add(&mut h, "r1", false);
        add(&mut h, "r2", false);
        add(&mut h, "b1", true);
        assert_eq!(
            ids(&h.page(|_| true, 0, 10)),
            ["b1", "r2", "r1", "b0", "r0"]
        );
        // A flood of blocked records: every record that ran stays, and only the newest
        // MAX_BLOCKED blocked ones are kept.
        for i in 0..(MAX_BLOCKED + 50) {
            let evicted = add(&mut h, &format!("flood{i}"), true);
            assert!(evicted.iter().all(|e| !e.tracking_id.starts_with('r')));
        }
        assert!(h.contains("r0") && h.contains("r1") && h.contains("r2"));
        assert!(!h.contains("b0") && !h.contains("flood0"));
        assert_eq!(h.len(), 3 + MAX_BLOCKED);
        let page = h.page(|_| true, 0, usize::MAX);
        assert_eq!(page.total, 3 + MAX_BLOCKED);
        let all = ids(&page);
        assert_eq!(all[0], format!("flood{}", MAX_BLOCKED + 49));
        assert_eq!(all[MAX_BLOCKED..], ["r2", "r1", "r0"]);
        // A record that ran still evicts the oldest that ran, and sorts newest.
        add(&mut h, "r3", false);
        assert!(!h.contains("r0"));
        assert_eq!(ids(&h.page(|_| true, 0, 1)), ["r3"]);
        assert_eq!(h.latest_for("a").unwrap().tracking_id.as_str(), "r3");
    }
}

#[cfg(test)]
mod fair {
    use super::*;
    use crate::config::Network;
    use crate::execution::tests::{execution, execution_of};

    /// Presses held by a history of `limit`: each lower-case letter of `presses` is a record
    /// of that binding, pressed by the caller named by the last capital letter before it (`X`
    /// before the first). What is kept, oldest first, as binding letter and number.
    fn kept(presses: &str, limit: usize) -> String {
        let mut shares = Shares::default();
        let mut held: Vec<(u64, char)> = Vec::new();
        let mut holder = Holder::User("X".into());
        let mut seq = 0;
        for c in presses.chars().filter(|c| !c.is_whitespace()) {
            if c.is_ascii_uppercase() {
                holder = Holder::User(c.to_string());
                continue;
            }
            shares.add(&holder, &c.to_string(), seq);
            held.push((seq, c));
            while shares.len() > limit {
                let gone = shares.evict().expect("something to evict");
                assert_ne!(
                    gone, seq,
                    "{presses}: the new record is never the one let go"
                );
                held.retain(|(s, _)| *s != gone);
            }
            seq += 1;
        }
        held.iter().map(|(s, b)| format!("{b}{s}")).collect()
    }

    #[test]
    fn the_action_holding_the_most_gives_way() {
        // One caller. (presses in order, limit) -> kept, oldest first
        let table = [
            // One action: a plain ring, the oldest goes.
            (("aaaaa", 3), "a2a3a4"),
            // As many each: the oldest of all goes, as in a plain ring.
            (("abcabc", 3), "a3b4c5"),
            (("ab", 1), "b1"),
            // A flood of `f` after another action's runs: `f` takes its own older runs once
            // it holds the most, and `a`'s last runs stay.
            (("aaffffffff", 4), "a0a1f8f9"),
            (("affffffffff", 3), "a0f9f10"),
            // `a` held more than the flood: cut to the flood's count, never below it.
            (("aaaaaaffff", 6), "a3a4a5f7f8f9"),
            (("aaaaaaffffffff", 6), "a3a4a5f11f12f13"),
            // Tied counts: the binding whose oldest record is oldest gives way.
            (("abab", 3), "b1a2b3"),
            // Three actions and a flood: each keeps what it had below the flood's count.
            (("abcffffffffff", 6), "a0b1c2f10f11f12"),
            (("aabbbcffffffff", 6), "a1b3b4c5f12f13"),
        ];
        for ((presses, limit), want) in table {
            assert_eq!(kept(presses, limit), want, "{presses} in {limit}");
        }
    }

    #[test]
    fn the_caller_holding_the_most_gives_way_first() {
        // (presses in order, capitals naming the caller; limit) -> kept, oldest first
        let table = [
            // A guest pressing ten actions once each after alice's one run: the guest's own
            // oldest go, as in a plain ring of the guest's, and alice's run stays.
            (("Ao Gabcdefghij", 5), "o0g7h8i9j10"),
            // The same in one caller: the oldest of all would go (alice's `o`, which the
            // per-action rule alone let a guest erase).
            (("o abcdefghij", 5), "f6g7h8i9j10"),
            // Within the caller holding the most, its action holding the most gives way:
            // the guest's last `b` stays.
            (("Aa Gqqqqqqb", 4), "a0q5q6b7"),
            // Two callers above a third: the one holding the most gives way; tied, the one
            // whose oldest is oldest; the newcomer `C` keeps its run.
            (("Aaaaa Bbbbbbb Cc", 6), "a2a3b7b8b9c10"),
            // Every caller holding one: the oldest of all goes, as in a plain ring.
            (("Aa Bb Cc Dd", 2), "c2d3"),
            // Callers come back: counts, not turns, decide.
            (("Aa Bb Aa Bb Aa Bb Cc", 4), "b3a4b5c6"),
        ];
        for ((presses, limit), want) in table {
            assert_eq!(kept(presses, limit), want, "{presses} in {limit}");
        }
    }

    #[test]
    fn a_record_that_becomes_another_kind_is_not_chosen() {
        let x = Holder::User("x".into());
        let y = Holder::Mqtt;
        let mut shares = Shares::default();
        shares.add(&x, "a", 0);
        shares.add(&x, "a", 1);
        shares.add(&y, "b", 2);
        shares.remove(&x, "a", 0);
        shares.remove(&x, "z", 9);
        shares.remove(&Holder::Trigger("cron".into()), "a", 1);
        assert_eq!(shares.len(), 2);
        // Tied at one each: `x`'s oldest (1) is older than `y`'s (2).
        assert_eq!(shares.evict(), Some(1));
        assert_eq!(shares.evict(), Some(2));
        assert_eq!((shares.evict(), shares.len()), (None, 0));
        // A record added twice is held once.
        shares.add(&x, "a", 3);
        shares.add(&x, "a", 3);
        assert_eq!(shares.len(), 1);
    }

    fn ids(h: &History) -> Vec<String> {
        h.newest_first()
            .map(|e| e.tracking_id.to_string())
            .collect()
    }

    #[test]
    fn a_flood_of_one_action_keeps_another_actions_last_run() {
        let mut h = History::new(5);
        h.insert(Arc::new(execution("alice1", "guarded")), false);
        h.insert(Arc::new(execution("blocked", "slow")), true);
        for i in 0..500 {
            let evicted = h.insert(Arc::new(execution(&format!("g{i}"), "status")), false);
            assert!(evicted.iter().all(|e| e.binding_id == "status"), "at {i}");
        }
        assert!(h.contains("alice1") && h.contains("blocked"));
        assert_eq!(h.len(), 5 + 1);
        // Newest first, the blocked record at its place among the runs.
        assert_eq!(
            ids(&h),
            ["g499", "g498", "g497", "g496", "blocked", "alice1"]
        );
        assert_eq!(
            h.latest_for("guarded").unwrap().tracking_id.as_str(),
            "alice1"
        );
        // A smaller limit (a reload) lets go by the same rule.
        h.set_limit(2);
        assert_eq!(ids(&h), ["g499", "blocked", "alice1"]);
        h.set_limit(1);
        assert_eq!(ids(&h), ["g499", "blocked"]);
        assert!(h.get("alice1").is_none());
    }

    #[test]
    fn a_guest_pressing_many_actions_keeps_alices_run() {
        let alice = Holder::User("alice".into());
        let guest = Holder::Guest(Some(Network::of("192.168.1.66".parse().unwrap())));
        let other = Holder::Guest(Some(Network::of("2001:db8:0:7::1".parse().unwrap())));
        let mut h = History::new(20);
        h.insert(Arc::new(execution_of("alice1", "other", alice)), false);
        h.insert(Arc::new(execution_of("v6", "q0", other)), false);
        for i in 0..300 {
            let e = execution_of(&format!("g{i}"), &format!("q{}", i % 30), guest.clone());
            let evicted = h.insert(Arc::new(e), false);
            assert!(evicted.iter().all(|e| e.holder == guest), "at {i}");
        }
        assert!(h.contains("alice1") && h.contains("v6"));
        assert_eq!(h.len(), 20);
        assert_eq!(ids(&h)[..2], ["g299", "g298"]);
    }
}
