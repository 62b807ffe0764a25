//! What a stateful exhaustive search remembers of the states it explored
//! (see `explore::dpor_search`): for each complete state (as the runtime
//! names it, with the waits the search took its threads to be in), the
//! sleep sets it was explored with, and a *summary* of what its threads
//! did from there on: every step of every execution that passed through
//! it, as far as [`StepRecord::dependent`] tells steps apart, each with the
//! steps of its thread that came shortly before it from there on in every
//! one of them (its latest [`MOST_BEFORE`] steps, at most), and the threads
//! its thread had joined from there on before it in every one of them.
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
//! The threads joined before it order it after everything those threads
//! did before the state: what `main` does after joining its workers races
//! with none of their steps, however many steps of its own lie between.

use super::StepRecord;
use crate::trace::ThreadId;
use rustc_hash::FxHashMap;

/// The steps of a state's future (as indices for [`StateCache::step`]),
/// each with its thread, the steps of its thread that came before it from
/// the state on in every execution that did it, and the threads its thread
/// joined before it, in order of index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    steps: Vec<FutureStep>,
}

/// One step of a summary, with what always came before it in its thread.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FutureStep {
    /// The step, as an index for [`StateCache::step`].
    pub step: u32,
    /// Its thread.
    pub thread: ThreadId,
    /// The steps of its thread kept as coming before it (sorted).
    pub before: Before,
    /// The threads its thread had joined before it.
    pub joined: JoinedThreads,
}

/// The steps of its thread kept as coming before a step (sorted), held
/// in place: a summary is cloned and joined at every state of a path.
type Before = arrayvec::ArrayVec<u32, MOST_BEFORE>;

/// Most steps of its thread kept as coming before a step of a summary:
/// the latest ones (a step's own lock or wait comes shortly before it;
/// keeping fewer only makes the search reverse more).
pub const MOST_BEFORE: usize = 8;

/// The threads joined before a step of a summary, as a set of the thread
/// ids below [`JoinedThreads::KEPT`] (a thread above is not kept: keeping
/// fewer only makes the search reverse more).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JoinedThreads(u64);

impl JoinedThreads {
    /// Thread ids below this are kept.
    pub const KEPT: ThreadId = 64;

    /// Adds `thread`, if its id is kept.
    fn insert(&mut self, thread: ThreadId) {
        if thread < Self::KEPT {
            self.0 |= 1 << thread;
        }
    }

    /// The threads, in order.
    pub fn iter(self) -> impl Iterator<Item = ThreadId> {
        (0..Self::KEPT).filter(move |&thread| self.0 & (1 << thread) != 0)
    }
}

impl Summary {
    /// Adds what `other` holds: a step both hold keeps the steps before it,
    /// and the threads joined before it, that both hold.
    pub fn join(&mut self, other: &Summary) {
        if self.steps.is_empty() {
            self.steps.clone_from(&other.steps);
            return;
        }
        let mut missing = 0;
        let mut theirs = other.steps.iter().peekable();
        for mine in &mut self.steps {
            while let Some(their) = theirs.next_if(|their| their.step <= mine.step) {
                if their.step == mine.step {
                    keep_common(&mut mine.before, &their.before);
                    mine.joined.0 &= their.joined.0;
                } else {
                    missing += 1;
                }
            }
        }
        missing += theirs.count();
        if missing > 0 {
            self.steps = merged(std::mem::take(&mut self.steps), &other.steps, missing);
        }
    }

    /// [`Summary::join`], taking `other` whole when this one is empty.
    pub fn join_owned(&mut self, other: Summary) {
        if self.steps.is_empty() {
            *self = other;
        } else {
            self.join(&other);
        }
    }

    /// Puts step `step` (an index, of thread `thread`) in front, as an
    /// execution's steps are taken from its end backwards: it comes before
    /// the steps of its thread already here. `joined` is the thread it
    /// joined, when it is the step in which a join saw that thread's end:
    /// every step of its thread here comes after that join.
    pub fn prepend(&mut self, step: u32, thread: ThreadId, joined: Option<ThreadId>) {
        let mut found = None;
        for (at, later) in self.steps.iter_mut().enumerate() {
            if later.thread != thread {
                continue;
            }
            if let Some(joined) = joined {
                later.joined.insert(joined);
            }
            if later.step == step {
                found = Some(at);
            }
            if later.before.len() < MOST_BEFORE
                && let Err(place) = later.before.binary_search(&step)
            {
                later.before.insert(place, step);
            }
        }
        // Nothing comes before it from here on.
        match found {
            Some(at) => {
                self.steps[at].before.clear();
                self.steps[at].joined = JoinedThreads::default();
            }
            None => {
                let at = self
                    .steps
                    .binary_search_by_key(&step, |future| future.step)
                    .unwrap_err();
                self.steps.insert(
                    at,
                    FutureStep {
                        step,
                        thread,
                        ..FutureStep::default()
                    },
                );
            }
        }
    }

    /// Each step, with the steps always before it and the threads always
    /// joined before it, by index.
    pub fn steps(&self) -> impl Iterator<Item = &FutureStep> + '_ {
        self.steps.iter()
    }
}

/// `mine` and the `missing` steps of `theirs` it lacks, in order of index
/// (the steps both hold are `mine`'s, already joined with `theirs`').
fn merged(mine: Vec<FutureStep>, theirs: &[FutureStep], missing: usize) -> Vec<FutureStep> {
    let mut out = Vec::with_capacity(mine.len() + missing);
    let mut theirs = theirs.iter().peekable();
    for step in mine {
        while let Some(their) = theirs.next_if(|their| their.step <= step.step) {
            if their.step != step.step {
                out.push(their.clone());
            }
        }
        out.push(step);
    }
    out.extend(theirs.cloned());
    out
}

/// Keeps of `mine` the items `theirs` holds too (both sorted).
fn keep_common<const N: usize>(mine: &mut arrayvec::ArrayVec<u32, N>, theirs: &[u32]) {
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
    /// By step: the slots its operations touch (see
    /// [`super::steps_by_address::slots_of`]).
    slots: Vec<Option<Box<[u64]>>>,
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

    /// The slots step `index` touches (see
    /// [`super::steps_by_address::slots_of`]).
    pub fn slots(&self, index: u32) -> Option<&[u64]> {
        self.slots[index as usize].as_deref()
    }

    /// The index of `step`'s footprint among the summaries' steps.
    pub fn step_index(&mut self, step: &StepRecord) -> u32 {
        let footprint = step.footprint();
        if let Some(&index) = self.indices.get(&footprint) {
            return index;
        }
        let index = u32::try_from(self.steps.len()).expect("fewer than 2^32 distinct steps");
        self.slots
            .push(super::steps_by_address::slots_of(&footprint).map(Vec::into_boxed_slice));
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

    fn steps_of(summary: &Summary) -> Vec<(u32, Vec<u32>)> {
        summary
            .steps()
            .map(|future| (future.step, future.before.to_vec()))
            .collect()
    }

    #[test]
    fn a_summary_keeps_for_each_step_the_steps_of_its_thread_before_it() {
        // Steps 0 and 1 of thread 1, step 2 of thread 2, from the end back.
        let mut run = Summary::default();
        for step in [2, 1, 0] {
            run.prepend(step, if step < 2 { 1 } else { 2 }, None);
        }
        assert_eq!(steps_of(&run), [(0, vec![]), (1, vec![0]), (2, vec![])]);
        // A step done twice keeps what came before it both times.
        let mut again = Summary::default();
        for step in [1, 0, 1] {
            again.prepend(step, 1, None);
        }
        assert_eq!(steps_of(&again), [(0, vec![1]), (1, vec![])]);
        // So does a join.
        let mut joined = run.clone();
        joined.join(&again);
        assert_eq!(steps_of(&joined), [(0, vec![]), (1, vec![]), (2, vec![])]);
        // Going on from a summary puts the steps in front of its own.
        let mut on = run.clone();
        on.prepend(2, 2, None);
        on.prepend(1, 1, None);
        assert_eq!(steps_of(&on), [(0, vec![1]), (1, vec![]), (2, vec![])]);
    }

    #[test]
    fn a_summary_keeps_the_threads_joined_before_each_step() {
        // Thread 1's steps 0, 1 and 2, step 1 its join of thread 3; step 3
        // of thread 2.
        let joined = |summary: &Summary| -> Vec<(u32, Vec<ThreadId>)> {
            summary
                .steps()
                .map(|future| (future.step, future.joined.iter().collect()))
                .collect()
        };
        let mut run = Summary::default();
        run.prepend(2, 1, None);
        run.prepend(3, 2, None);
        run.prepend(1, 1, Some(3));
        run.prepend(0, 1, None);
        // After the join only, and only in the joining thread.
        assert_eq!(
            joined(&run),
            [(0, vec![]), (1, vec![]), (2, vec![3]), (3, vec![])]
        );
        // A join before the state of an execution that came after it
        // orders the future it ended at too.
        let mut on = run.clone();
        on.prepend(0, 1, Some(4));
        assert_eq!(
            joined(&on),
            [(0, vec![]), (1, vec![4]), (2, vec![3, 4]), (3, vec![])]
        );
        // Kept only where every execution joined the thread before it.
        let mut both = on.clone();
        both.join(&run);
        assert_eq!(
            joined(&both),
            [(0, vec![]), (1, vec![]), (2, vec![3]), (3, vec![])]
        );
        // A thread whose id is not kept is not known as joined.
        let mut far = Summary::default();
        far.prepend(2, 1, None);
        far.prepend(1, 1, Some(JoinedThreads::KEPT));
        assert_eq!(joined(&far), [(1, vec![]), (2, vec![])]);
    }

    #[test]
    fn a_join_takes_in_the_steps_only_the_other_summary_holds_in_order() {
        let mut mine = Summary::default();
        for step in [5, 3] {
            mine.prepend(step, 1, None);
        }
        let mut theirs = Summary::default();
        for (step, thread) in [(6, 1), (5, 1), (1, 2), (2, 1)] {
            theirs.prepend(step, thread, None);
        }
        mine.join(&theirs);
        assert_eq!(
            steps_of(&mine),
            [
                (1, vec![]),
                (2, vec![]),
                (3, vec![]),
                (5, vec![]),
                (6, vec![2, 5])
            ]
        );
        let mut empty = Summary::default();
        empty.join_owned(mine.clone());
        assert_eq!(empty, mine);
    }

    #[test]
    fn a_summary_keeps_the_latest_steps_before_a_step() {
        let mut run = Summary::default();
        for step in (0..12).rev() {
            run.prepend(step, 1, None);
        }
        let last = run.steps().last().unwrap();
        assert_eq!(last.step, 11);
        assert_eq!(
            last.before.as_slice(),
            (11 - MOST_BEFORE as u32..11).collect::<Vec<_>>()
        );
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
