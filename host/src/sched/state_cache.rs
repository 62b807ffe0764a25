//! What a stateful exhaustive search remembers of the states it explored
//! (see `explore::dpor_search`): for each complete state (as the runtime
//! names it, with the waits the search took its threads to be in), the
//! sleep sets it was explored with, and a *summary* of what its threads
//! did from there on: every step of every execution that passed through
//! it, as far as [`StepRecord::dependent`] tells steps apart, each with the
//! steps of its thread that came shortly before it from there on in every
//! one of them (its latest [`MOST_BEFORE`] steps, at most).
//!
//! An execution that reaches a state explored from before with a sleep set
//! that covers it ends there. What the state's future would have done still
//! matters to the steps before it: a step of the summary may race with one
//! of them, and that race must be reversed, as if the future had run (Yang,
//! Chen, Gopalakrishnan and Kirby, "Efficient Stateful Dynamic Partial
//! Order Reduction", SPIN 2008). The summary is what the search reverses
//! them from. The steps that always come before a step in its thread let
//! the search see what orders it after a step before the state: a lock's
//! release in the future comes after the lock, which depends on the
//! release of the lock before the state, so the two releases are no race.

use super::StepRecord;
use crate::trace::ThreadId;
use rustc_hash::FxHashMap;

/// The steps of a state's future (as indices for [`StateCache::step`]),
/// each with the steps of its thread that came before it from the state
/// on in every execution that did it, in order of index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    steps: Vec<(u32, Before)>,
}

/// The steps of its thread kept as coming before a step (sorted), held
/// in place: a summary is cloned and joined at every state of a path.
type Before = arrayvec::ArrayVec<u32, MOST_BEFORE>;

impl Summary {
    /// Adds what `other` holds: a step both hold keeps the steps before it
    /// in both.
    pub fn join(&mut self, other: &Summary) {
        let mut theirs = other.steps.iter().peekable();
        let mut added = Vec::new();
        for (step, mine) in &mut self.steps {
            while let Some((other_step, before)) = theirs.peek() {
                if other_step > step {
                    break;
                }
                if other_step == step {
                    keep_common(mine, before);
                } else {
                    added.push((*other_step, before.clone()));
                }
                theirs.next();
            }
        }
        added.extend(theirs.cloned());
        if !added.is_empty() {
            self.steps.extend(added);
            self.steps.sort_by_key(|(step, _)| *step);
        }
    }

    /// Each step, with the steps always before it, sorted.
    pub fn steps(&self) -> impl Iterator<Item = (u32, &[u32])> + '_ {
        self.steps
            .iter()
            .map(|(step, before)| (*step, before.as_slice()))
    }
}

/// Most steps of its thread kept as coming before a step of a summary:
/// the latest ones (a step's own lock or wait comes shortly before it;
/// keeping fewer only makes the search reverse more).
pub const MOST_BEFORE: usize = 8;

/// A summary built from the end of an execution backwards, one step at a
/// time: each step put in front comes before the steps of its thread
/// already there.
#[derive(Debug, Default)]
pub struct Prepending {
    summary: Summary,
    /// Per thread, its steps in the summary with fewer than
    /// [`MOST_BEFORE`] steps before them.
    open: FxHashMap<ThreadId, Vec<u32>>,
}

impl Prepending {
    /// Starts from `end`, the summary of what came after the execution
    /// (its steps' threads as `cache` tells them).
    pub fn new(end: Summary, cache: &StateCache) -> Self {
        let mut open: FxHashMap<ThreadId, Vec<u32>> = FxHashMap::default();
        for (step, before) in end.steps() {
            if before.len() < MOST_BEFORE {
                open.entry(cache.step(step).thread).or_default().push(step);
            }
        }
        Prepending { summary: end, open }
    }

    /// Puts step `step` (an index, of thread `thread`) in front.
    pub fn prepend(&mut self, step: u32, thread: ThreadId) {
        let open = self.open.entry(thread).or_default();
        let steps = &mut self.summary.steps;
        open.retain(|&later| {
            let at = steps
                .binary_search_by_key(&later, |(s, _)| *s)
                .expect("an open step is in the summary");
            let before = &mut steps[at].1;
            if let Err(place) = before.binary_search(&step) {
                // An open step has room (keeping fewer would only make
                // the search reverse more).
                let _ = before.try_insert(place, step);
            }
            before.len() < MOST_BEFORE
        });
        // Nothing comes before it from here on.
        match steps.binary_search_by_key(&step, |(s, _)| *s) {
            Ok(at) => steps[at].1.clear(),
            Err(at) => steps.insert(at, (step, Before::new())),
        }
        if !open.contains(&step) {
            open.push(step);
        }
    }

    /// The summary so far.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }
}

/// Keeps of `mine` the steps `theirs` holds too (both sorted).
fn keep_common(mine: &mut Before, theirs: &[u32]) {
    if mine.as_slice() != theirs {
        mine.retain(|s| theirs.binary_search(s).is_ok());
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
    indices: FxHashMap<StepRecord, u32>,
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
    pub fn step(&self, index: u32) -> &StepRecord {
        &self.steps[index as usize]
    }

    /// The index of `step`'s footprint among the summaries' steps.
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

    /// Notes that the state `key` was explored from with the sleep set
    /// `sleep`, and that its future did what `summary` holds.
    pub fn explored(&mut self, key: blake3::Hash, sleep: &[StepRecord], summary: &Summary) {
        let explored = self.explored.entry(key).or_default();
        explored.summary.join(summary);
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

    /// A cache holding `count` distinct steps, the first `of_one` of
    /// thread 1 and the rest of thread 2.
    fn cache_of(count: u32, of_one: u32) -> StateCache {
        let mut cache = StateCache::default();
        for n in 0..count {
            let step = StepRecord {
                thread: if n < of_one { 1 } else { 2 },
                op: Some(crate::sched::NextOp {
                    kind: crate::instrument::AccessKind::Load,
                    addr: n,
                    len: 4,
                    src: 0,
                    site: 0,
                }),
                ..StepRecord::default()
            };
            assert_eq!(cache.step_index(&step), n);
        }
        cache
    }

    fn steps_of(summary: &Summary) -> Vec<(u32, Vec<u32>)> {
        summary
            .steps()
            .map(|(step, before)| (step, before.to_vec()))
            .collect()
    }

    #[test]
    fn a_summary_keeps_for_each_step_the_steps_of_its_thread_before_it() {
        let cache = cache_of(3, 2);
        // Steps 0 and 1 of thread 1, step 2 of thread 2, from the end back.
        let mut run = Prepending::new(Summary::default(), &cache);
        for step in [2, 1, 0] {
            run.prepend(step, cache.step(step).thread);
        }
        assert_eq!(
            steps_of(run.summary()),
            [(0, vec![]), (1, vec![0]), (2, vec![])]
        );
        // A step done twice keeps what came before it both times.
        let mut again = Prepending::new(Summary::default(), &cache);
        for step in [1, 0, 1] {
            again.prepend(step, 1);
        }
        assert_eq!(steps_of(again.summary()), [(0, vec![1]), (1, vec![])]);
        // So does a join.
        let mut joined = run.summary().clone();
        joined.join(again.summary());
        assert_eq!(steps_of(&joined), [(0, vec![]), (1, vec![]), (2, vec![])]);
        // Going on from a summary puts the steps in front of its own.
        let mut on = Prepending::new(run.summary().clone(), &cache);
        on.prepend(2, 2);
        on.prepend(1, 1);
        assert_eq!(
            steps_of(on.summary()),
            [(0, vec![1]), (1, vec![]), (2, vec![])]
        );
    }

    #[test]
    fn a_summary_keeps_the_latest_steps_before_a_step() {
        let cache = cache_of(12, 12);
        let mut run = Prepending::new(Summary::default(), &cache);
        for step in (0..12).rev() {
            run.prepend(step, 1);
        }
        let last = run.summary().steps().last().unwrap();
        assert_eq!(last.0, 11);
        assert_eq!(last.1, (11 - MOST_BEFORE as u32..11).collect::<Vec<_>>());
    }

    #[test]
    fn a_step_stands_for_every_step_alike_wherever_it_stood() {
        let step = |decision| StepRecord {
            thread: 2,
            wrote: true,
            decision,
            ..StepRecord::default()
        };
        let mut cache = StateCache::default();
        let index = cache.step_index(&step(Some(7)));
        assert_eq!(cache.step_index(&step(None)), index);
        assert!(cache.step(index).wrote);
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
