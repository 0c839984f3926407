//! The history of executions: a ring of the newest `logHistoryLimit` records that ran, a
//! small ring of their own for the newest blocked ones, lookup by tracking id, and
//! newest-first paging over both (GetLogs). Blocked runs are cheap to make (anyone
//! with `exec` on one rate-limited action can make hundreds a second), so they never push a
//! record that ran out of the history: the audit trail cannot be erased by pressing a button
//! that is busy. The main ring's storage is a heapless `Deque` whose capacity is the largest
//! limit the config accepts, so the bound is a type, not a promise; the configured limit
//! evicts earlier. This module only holds records: it never runs, kills or persists anything.

use std::collections::HashMap;
use std::sync::Arc;

use crate::execution::Execution;

/// The largest `logHistoryLimit` the config accepts.
pub const MAX_HISTORY: usize = 10_000;

/// Blocked records kept, beside the `logHistoryLimit` records that ran.
pub const MAX_BLOCKED: usize = 32;

pub struct History {
    ring: Box<heapless::Deque<Arc<Execution>, MAX_HISTORY>>,
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

    /// Changes the limit (a reload); a smaller one drops the oldest records now.
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit.clamp(1, MAX_HISTORY);
        while self.ring.len() > self.limit {
            if let Some(old) = self.ring.pop_front() {
                self.by_id.remove(old.tracking_id.as_str());
            }
        }
    }

    /// Adds a record, evicting the oldest of its own kind beyond its bound: a record that
    /// ran evicts the oldest that ran, a `blocked` one the oldest blocked one. Returns what
    /// was evicted.
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
        while self.ring.len() >= self.limit {
            match self.ring.pop_front() {
                Some(old) => {
                    self.by_id.remove(old.tracking_id.as_str());
                    evicted.push(old);
                }
                None => break,
            }
        }
        // The loop above made room: limit <= MAX_HISTORY, so this cannot fail.
        let _ = self.ring.push_back(e);
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
        // The sequence number of the newest record that ran, counting down.
        let mut next_ran = self.ran;
        let mut ran = self.ring.iter().rev().peekable();
        let mut blocked = self.blocked.iter().rev().peekable();
        std::iter::from_fn(move || {
            // A blocked record placed after `k` runs is newer than the run numbered `k - 1`.
            let take_blocked = match (blocked.peek(), ran.peek()) {
                (Some((k, _)), Some(_)) => *k >= next_ran,
                (Some(_), None) => true,
                (None, _) => false,
            };
            if take_blocked {
                blocked.next().map(|(_, e)| e)
            } else {
                next_ran = next_ran.saturating_sub(1);
                ran.next()
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
