//! The history of executions: a ring of the newest `logHistoryLimit` records with lookup by
//! tracking id, and newest-first paging (SPEC §3, GetLogs). The ring's storage is a heapless
//! `Deque` whose capacity is the largest limit the config accepts, so the bound is a type,
//! not a promise; the configured limit evicts earlier. This module only holds records: it
//! never runs, kills or persists anything.

use std::collections::HashMap;
use std::sync::Arc;

use crate::execution::Execution;

/// The largest `logHistoryLimit` the config accepts.
pub const MAX_HISTORY: usize = 10_000;

pub struct History {
    ring: Box<heapless::Deque<Arc<Execution>, MAX_HISTORY>>,
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
            by_id: HashMap::new(),
            limit: limit.clamp(1, MAX_HISTORY),
        }
    }

    pub fn len(&self) -> usize {
        self.ring.len()
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

    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }

    /// Adds a record, evicting the oldest beyond the limit. Returns what was evicted.
    pub fn insert(&mut self, e: Arc<Execution>) -> Vec<Arc<Execution>> {
        let mut evicted = Vec::new();
        while self.ring.len() >= self.limit {
            match self.ring.pop_front() {
                Some(old) => {
                    self.by_id.remove(old.tracking_id.as_str());
                    evicted.push(old);
                }
                None => break,
            }
        }
        self.by_id.insert(e.tracking_id.to_string(), e.clone());
        // The loop above made room: limit <= MAX_HISTORY, so this cannot fail.
        let _ = self.ring.push_back(e);
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
        self.ring.iter().rev().find(|e| e.binding_id == binding_id)
    }

    /// Newest first, oldest last.
    pub fn newest_first(&self) -> impl Iterator<Item = &Arc<Execution>> {
        self.ring.iter().rev()
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
            h.insert(Arc::new(execution(&format!("e{i}"), binding)));
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
            h.insert(Arc::new(execution(&format!("e{i}"), "a")));
        }
        assert_eq!(h.len(), 3);
        assert!(!h.contains("e1") && h.get("e0").is_none());
        assert!(h.contains("e2") && h.contains("e4"));
        assert_eq!(ids(&h.page(|_| true, 0, 10)), ["e4", "e3", "e2"]);
    }
}
