//! What a stateful exhaustive search remembers of the states it explored
//! (see `explore::dpor_search`): for each complete state (as the runtime
//! names it, with the waits the search took its threads to be in), the
//! sleep sets it was explored with, and a *summary* of what its threads
//! did from there on: for each execution that passed through it, each
//! thread's steps from there on in order (a *run*), as far as
//! [`StepRecord::dependent`] tells steps apart.
//!
//! An execution that reaches a state explored from before with a sleep set
//! that covers it ends there. What the state's future would have done still
//! matters to the steps before it: a step of the summary may race with one
//! of them, and that race must be reversed, as if the future had run (Yang,
//! Chen, Gopalakrishnan and Kirby, "Efficient Stateful Dynamic Partial
//! Order Reduction", SPIN 2008). The summary is what the search reverses
//! them from; keeping each thread's steps in order lets it see that a
//! thread's later step comes after its earlier ones (a lock's release
//! after the lock), which a set of steps would not tell.
//!
//! Runs are kept as lists that share their tails: a run is its first step
//! and the run of the rest, so a state's runs are the runs of the state
//! after it with the steps between put in front.

use super::StepRecord;
use rustc_hash::FxHashMap;

/// The runs of a state's future, as indices in [`StateCache`]'s table of
/// runs, in increasing order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    runs: Vec<u32>,
}

impl Summary {
    /// The summary of the runs `runs`.
    pub fn of(mut runs: Vec<u32>) -> Self {
        runs.sort_unstable();
        runs.dedup();
        Summary { runs }
    }

    /// Adds every run of `other`.
    pub fn union(&mut self, other: &Summary) {
        if other
            .runs
            .iter()
            .all(|r| self.runs.binary_search(r).is_ok())
        {
            return;
        }
        let mut merged = Vec::with_capacity(self.runs.len() + other.runs.len());
        let (mut a, mut b) = (self.runs.iter().peekable(), other.runs.iter().peekable());
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(&&x), Some(&&y)) if x < y => a.next(),
                (Some(&&x), Some(&&y)) if y < x => b.next(),
                (Some(_), Some(_)) => {
                    b.next();
                    a.next()
                }
                (Some(_), None) => a.next(),
                (None, Some(_)) => b.next(),
                (None, None) => break,
            };
            merged.extend(next);
        }
        self.runs = merged;
    }

    /// The runs, by index, in order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.runs.iter().copied()
    }
}

/// A thread's steps from some state on: its first step (an index in the
/// table of distinct steps) and the run of the rest, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Run {
    step: u32,
    rest: Option<u32>,
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
    indices: FxHashMap<StepRecord, u32>,
    /// Each distinct run of the summaries.
    runs: Vec<Run>,
    run_indices: FxHashMap<Run, u32>,
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

    /// Run `run` and the runs of its tails, longest first, each with its
    /// first step (an index for [`StateCache::step`]).
    pub fn run_tails(&self, run: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        std::iter::successors(Some(run), |&r| self.runs[r as usize].rest)
            .map(|r| (r, self.runs[r as usize].step))
    }

    /// The step the runs call `index`.
    pub fn step(&self, index: u32) -> &StepRecord {
        &self.steps[index as usize]
    }

    /// The index of `step`'s footprint among the runs' steps.
    pub fn step_index(&mut self, step: &StepRecord) -> u32 {
        let footprint = step.footprint();
        if let Some(&index) = self.indices.get(&footprint) {
            return index;
        }
        let index = u32::try_from(self.steps.len()).expect("fewer than 2^32 distinct steps");
        self.steps.push(footprint.clone());
        self.indices.insert(footprint, index);
        index
    }

    /// The run of step `step` (an index from [`StateCache::step_index`])
    /// followed by run `rest`, if any.
    pub fn run(&mut self, step: u32, rest: Option<u32>) -> u32 {
        let run = Run { step, rest };
        *self.run_indices.entry(run).or_insert_with(|| {
            self.runs.push(run);
            u32::try_from(self.runs.len() - 1).expect("fewer than 2^32 distinct runs")
        })
    }

    /// The thread of run `run`.
    pub fn run_thread(&self, run: u32) -> crate::trace::ThreadId {
        self.steps[self.runs[run as usize].step as usize].thread
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
        let a = Summary::of(vec![130, 3, 130]);
        let mut b = Summary::of(vec![64, 3]);
        b.union(&a);
        assert_eq!(b.iter().collect::<Vec<_>>(), [3, 64, 130]);
    }

    #[test]
    fn a_run_is_its_steps_in_order_and_alike_runs_are_one() {
        let step = |thread, wrote| StepRecord {
            thread,
            wrote,
            decision: Some(7),
            ..StepRecord::default()
        };
        let mut cache = StateCache::default();
        let wrote = cache.step_index(&step(2, true));
        let last = cache.run(wrote, None);
        let read = cache.step_index(&step(2, false));
        let run = cache.run(read, Some(last));
        let steps: Vec<bool> = cache
            .run_tails(run)
            .map(|(_, s)| cache.step(s).wrote)
            .collect();
        assert_eq!(steps, [false, true]);
        assert_eq!(cache.run_thread(run), 2);
        // Where a step stands in its execution is no part of a run.
        let again = cache.step_index(&StepRecord {
            decision: None,
            ..step(2, true)
        });
        assert_eq!(cache.run(again, None), last);
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
