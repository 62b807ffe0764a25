//! What a stateful exhaustive search remembers of the states it explored
//! (see `explore::dpor_search`): for each complete state (as the runtime
//! names it, with the waits the search took its threads to be in), the
//! sleep sets it was explored with, and a *summary* of what its threads
//! did from there on: every step of every execution that passed through
//! it, as far as [`StepRecord::dependent`] tells steps apart.
//!
//! An execution that reaches a state explored from before with a sleep set
//! that covers it ends there. What the state's future would have done still
//! matters to the steps before it: a step of the summary may race with one
//! of them, and that race must be reversed, as if the future had run (Yang,
//! Chen, Gopalakrishnan and Kirby, "Efficient Stateful Dynamic Partial
//! Order Reduction", SPIN 2008). The summary is what the search reverses
//! them from.

use super::StepRecord;
use rustc_hash::FxHashMap;

/// The steps of a state's future, as indices in [`StateCache`]'s table of
/// distinct steps (a bit set).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    words: Vec<u64>,
}

impl Summary {
    /// Adds step `index`.
    pub fn insert(&mut self, index: usize) {
        let word = index / 64;
        if self.words.len() <= word {
            self.words.resize(word + 1, 0);
        }
        self.words[word] |= 1 << (index % 64);
    }

    /// Adds every step of `other`.
    pub fn union(&mut self, other: &Summary) {
        if self.words.len() < other.words.len() {
            self.words.resize(other.words.len(), 0);
        }
        for (mine, theirs) in self.words.iter_mut().zip(&other.words) {
            *mine |= theirs;
        }
    }

    /// The steps, by index, in order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            (0..64)
                .filter(move |bit| word & (1 << bit) != 0)
                .map(move |bit| w * 64 + bit)
        })
    }
}

/// One explored state.
#[derive(Debug, Default)]
struct Explored {
    /// The sleep sets it was explored with: each time, every schedule
    /// from it but those its sleep set covers ran.
    sleeps: Vec<Vec<StepRecord>>,
    /// What its future did.
    summary: Summary,
}

/// Most sleep sets kept per state.
const MOST_SLEEPS: usize = 8;

/// The states a stateful search explored, by key.
#[derive(Debug, Default)]
pub struct StateCache {
    explored: FxHashMap<blake3::Hash, Explored>,
    /// Each distinct step of the summaries, as [`StepRecord::footprint`]
    /// makes it.
    steps: Vec<StepRecord>,
    indices: FxHashMap<StepRecord, usize>,
    /// Executions that ended at a state explored before.
    pub matched: u64,
}

impl StateCache {
    /// Whether the state `key`, reached with the sleep set `sleeping`, was
    /// explored before with a sleep set no larger: everything a search
    /// from it now would run has run.
    pub fn covers(&self, key: &blake3::Hash, sleeping: &[StepRecord]) -> bool {
        let Some(explored) = self.explored.get(key) else {
            return false;
        };
        let sleeping: Vec<StepRecord> = sleeping.iter().map(StepRecord::footprint).collect();
        explored
            .sleeps
            .iter()
            .any(|sleep| sleep.iter().all(|s| sleeping.contains(s)))
    }

    /// The summary of the explored state `key`.
    pub fn summary(&self, key: &blake3::Hash) -> Option<&Summary> {
        self.explored.get(key).map(|explored| &explored.summary)
    }

    /// The step the summaries call `index`.
    pub fn step(&self, index: usize) -> &StepRecord {
        &self.steps[index]
    }

    /// The index of `step`'s footprint among the summaries' steps.
    pub fn index(&mut self, step: &StepRecord) -> usize {
        let footprint = step.footprint();
        if let Some(&index) = self.indices.get(&footprint) {
            return index;
        }
        let index = self.steps.len();
        self.steps.push(footprint.clone());
        self.indices.insert(footprint, index);
        index
    }

    /// Notes that the state `key` was explored from with the sleep set
    /// `sleep`, and that its future did what `summary` holds.
    pub fn explored(&mut self, key: blake3::Hash, sleep: &[StepRecord], summary: &Summary) {
        let explored = self.explored.entry(key).or_default();
        explored.summary.union(summary);
        let sleep: Vec<StepRecord> = sleep.iter().map(StepRecord::footprint).collect();
        if !explored.sleeps.contains(&sleep) && explored.sleeps.len() < MOST_SLEEPS {
            explored.sleeps.push(sleep);
        }
    }

    /// How many states were explored.
    pub fn states(&self) -> usize {
        self.explored.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_holds_what_was_added_to_it_or_to_what_it_joined() {
        let mut a = Summary::default();
        a.insert(3);
        a.insert(130);
        let mut b = Summary::default();
        b.insert(64);
        b.union(&a);
        assert_eq!(b.iter().collect::<Vec<_>>(), [3, 64, 130]);
    }

    #[test]
    fn a_state_covers_a_visit_whose_sleep_set_holds_the_one_it_was_explored_with() {
        let asleep = |thread| StepRecord {
            thread,
            ..StepRecord::default()
        };
        let key = blake3::hash(b"state");
        let mut cache = StateCache::default();
        assert!(!cache.covers(&key, &[]));
        cache.explored(key, &[asleep(1)], &Summary::default());
        assert!(!cache.covers(&key, &[]));
        assert!(cache.covers(&key, &[asleep(1)]));
        assert!(cache.covers(&key, &[asleep(2), asleep(1)]));
        cache.explored(key, &[], &Summary::default());
        assert!(cache.covers(&key, &[]));
        assert_eq!(cache.states(), 1);
    }
}
