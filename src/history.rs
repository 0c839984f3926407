//! The history of executions: a ring of `logHistoryLimit` records that ran, a
//! small ring of their own for the newest blocked ones, lookup by tracking id, and
//! newest-first paging over both (GetLogs). When the ring is full, the record let go is the
//! oldest of the action holding the most records (`Shares`), not the oldest of all: a cheap
//! action pressed in a loop takes its own older runs, never another action's last ones. Blocked runs are cheap to make (anyone
//! with `exec` on one rate-limited action can make hundreds a second), so they never push a
//! record that ran out of the history: the audit trail cannot be erased by pressing a button
//! that is busy. The main ring's storage is a heapless `Deque` whose capacity is the largest
//! limit the config accepts, so the bound is a type, not a promise; the configured limit
//! evicts earlier. This module only holds records: it never runs, kills or persists anything.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use crate::execution::Execution;

/// The largest `logHistoryLimit` the config accepts.
pub const MAX_HISTORY: usize = 10_000;

/// Blocked records kept, beside the `logHistoryLimit` records that ran.
pub const MAX_BLOCKED: usize = 32;

pub struct History {
    /// Records that ran, oldest first, each with its number in the order records that ran
    /// came (a record may leave from the middle, so the number is kept, not counted).
    ring: Box<heapless::Deque<(u64, Arc<Execution>), MAX_HISTORY>>,
    /// Which records that ran each action holds, to choose which one goes.
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
            ring: Box::new(heapless::Deque::new()),
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
        // Usually the oldest of all: a flood's own oldest run, or one of a full ring of
        // actions that each hold as many.
        if self.ring.front().is_some_and(|(s, _)| *s == seq) {
            return self.ring.pop_front().map(|(_, e)| e);
        }
        // Once round the ring: every record goes back but the one taken.
        let mut taken = None;
        for _ in 0..self.ring.len() {
            let Some((s, e)) = self.ring.pop_front() else {
                break;
            };
            if s == seq {
                taken = Some(e);
            } else {
                // It was just taken out: there is room.
                let _ = self.ring.push_back((s, e));
            }
        }
        taken
    }

    /// Adds a record, evicting beyond the bound of its own kind: a record that ran evicts
    /// one that ran (the oldest of the action holding the most, [`Shares::evict`]), a
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
        // Counted before the choice, so that the action pressed now holds the record it adds;
        // the new record is never the one chosen (a binding's oldest is chosen, and of
        // bindings holding one record each, the oldest record's).
        self.shares.add(&e.binding_id, self.ran);
        evicted.extend(self.trim());
        // `trim` made room: limit <= MAX_HISTORY, so this cannot fail.
        let _ = self.ring.push_back((self.ran, e));
        self.ran += 1;
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
                (Some((k, _)), Some((seq, _))) => k > seq,
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
/// `logHistoryLimit` of them: the oldest record of the action (binding) holding the most
/// records, and of actions holding as many, the one whose oldest record is the oldest. So
/// a flood of one action's presses takes that action's own older runs once it holds the
/// most, and never cuts another action below the flood's own count; when every action
/// holds as many, the oldest record of all goes, as in a plain ring. Records are named by
/// their number in the order they came. The history, the history file's compaction and
/// the restore at start each keep one, so memory, disk and a restart keep the same
/// records. Choosing costs one look at each action held.
#[derive(Debug, Default)]
pub struct Shares {
    /// Each action's records, oldest first.
    by_binding: HashMap<String, VecDeque<u64>>,
    len: usize,
}

impl Shares {
    /// Records held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Holds record `seq` of `binding` (usually above every number added before; one that
    /// is not, a record that changed kind in a restored file, takes its place by number).
    pub fn add(&mut self, binding: &str, seq: u64) {
        match self.by_binding.get_mut(binding) {
            Some(q) => {
                let at = q.partition_point(|s| *s < seq);
                q.insert(at, seq);
            }
            None => {
                self.by_binding
                    .insert(binding.to_string(), VecDeque::from([seq]));
            }
        }
        self.len += 1;
    }

    /// Lets record `seq` of `binding` go without choosing it (it became another kind).
    pub fn remove(&mut self, binding: &str, seq: u64) {
        let Some(q) = self.by_binding.get_mut(binding) else {
            return;
        };
        if let Some(i) = q.iter().position(|s| *s == seq) {
            q.remove(i);
            self.len -= 1;
        }
        if q.is_empty() {
            self.by_binding.remove(binding);
        }
    }

    /// Chooses the record to let go, and lets it go: the oldest of the action holding the
    /// most, of those holding as many the one whose oldest is oldest.
    pub fn evict(&mut self) -> Option<u64> {
        let (binding, _) = self
            .by_binding
            .iter()
            .filter_map(|(b, q)| Some((b, (q.len(), std::cmp::Reverse(*q.front()?)))))
            .max_by_key(|(_, key)| *key)?;
        let binding = binding.clone();
        let q = self.by_binding.get_mut(&binding)?;
        let seq = q.pop_front()?;
        self.len -= 1;
        if q.is_empty() {
            self.by_binding.remove(&binding);
        }
        Some(seq)
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
    use crate::execution::tests::execution;

    /// Records of the bindings named by the letters of `presses`, in order, held by a history
    /// of `limit`: what is kept, oldest first, as letter and number.
    fn kept(presses: &str, limit: usize) -> String {
        let mut shares = Shares::default();
        let mut held: Vec<(u64, char)> = Vec::new();
        for (seq, b) in presses.chars().enumerate() {
            let seq = seq as u64;
            shares.add(&b.to_string(), seq);
            held.push((seq, b));
            while shares.len() > limit {
                let gone = shares.evict().expect("something to evict");
                assert_ne!(
                    gone, seq,
                    "{presses}: the new record is never the one let go"
                );
                held.retain(|(s, _)| *s != gone);
            }
        }
        held.iter().map(|(s, b)| format!("{b}{s}")).collect()
    }

    #[test]
    fn the_action_holding_the_most_gives_way() {
        // (presses in order, limit) -> kept, oldest first
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
    fn a_record_that_becomes_another_kind_is_not_chosen() {
        let mut shares = Shares::default();
        shares.add("a", 0);
        shares.add("a", 1);
        shares.add("b", 2);
        shares.remove("a", 0);
        shares.remove("z", 9);
        assert_eq!(shares.len(), 2);
        // Tied at one each: `a`'s oldest (1) is older than `b`'s (2).
        assert_eq!(shares.evict(), Some(1));
        assert_eq!(shares.evict(), Some(2));
        assert_eq!((shares.evict(), shares.len()), (None, 0));
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
}
