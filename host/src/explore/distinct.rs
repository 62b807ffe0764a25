//! Counting the distinct traces of an exploration in bounded memory: the
//! first [`MOST_REMEMBERED`] are remembered; past them the count is a lower
//! bound, and says so.

use crate::trace::TraceHash;
use std::collections::HashSet;

/// How many trace hashes an exploration remembers (about 4 MiB).
pub const MOST_REMEMBERED: usize = 1 << 17;

/// The distinct traces seen so far.
#[derive(Debug, Default)]
pub struct DistinctTraces {
    seen: HashSet<TraceHash>,
    /// A trace arrived that could not be remembered.
    full: bool,
}

impl DistinctTraces {
    /// Notes `hash`.
    pub fn insert(&mut self, hash: TraceHash) {
        if self.seen.len() < MOST_REMEMBERED {
            self.seen.insert(hash);
        } else if !self.seen.contains(&hash) {
            self.full = true;
        }
    }

    /// How many distinct traces were seen (a lower bound when
    /// [`DistinctTraces::exact`] is false).
    pub fn count(&self) -> usize {
        self.seen.len()
    }

    /// Whether [`DistinctTraces::count`] is exact.
    pub fn exact(&self) -> bool {
        !self.full
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_is_exact_until_memory_is_full() {
        let mut traces = DistinctTraces::default();
        let hash = |n: u128| TraceHash(n.to_le_bytes());
        for n in 0..MOST_REMEMBERED as u128 {
            traces.insert(hash(n));
            traces.insert(hash(n));
        }
        assert_eq!(traces.count(), MOST_REMEMBERED);
        assert!(traces.exact());
        traces.insert(hash(0));
        assert!(traces.exact(), "a remembered trace again");
        traces.insert(hash(u128::MAX));
        assert_eq!(traces.count(), MOST_REMEMBERED);
        assert!(!traces.exact());
    }
}
