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
/// each with the steps of its thread that came before it from the state
/// on in every execution that did it, and the threads its thread joined
/// before it, in order of index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    steps: Vec<FutureStep>,
}

/// One step of a summary, with what always came before it in its thread.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FutureStep {
    /// The step, as an index for [`StateCache::step`].
    pub step: u32,
    /// The steps of its thread kept as coming before it (sorted).
    pub before: Before,
    /// The threads its thread had joined before it (sorted).
    pub joined: Joined,
}

/// The steps of its thread kept as coming before a step (sorted), held
/// in place: a summary is cloned and joined at every state of a path.
type Before = arrayvec::ArrayVec<u32, MOST_BEFORE>;

/// The threads joined before a step (sorted), held in place.
type Joined = arrayvec::ArrayVec<ThreadId, MOST_JOINED>;

impl Summary {
    /// Adds what `other` holds: a step both hold keeps the steps before it,
    /// and the threads joined before it, that both hold.
    pub fn join(&mut self, other: &Summary) {
        let mut theirs = other.steps.iter().peekable();
        let mut added = Vec::new();
        for mine in &mut self.steps {
            while let Some(their) = theirs.peek() {
                if their.step > mine.step {
                    break;
                }
                if their.step == mine.step {
                    keep_common(&mut mine.before, &their.before);
                    keep_common(&mut mine.joined, &their.joined);
                } else {
                    added.push((*their).clone());
                }
                theirs.next();
            }
        }
        added.extend(theirs.cloned());
        if !added.is_empty() {
            self.steps.extend(added);
            self.steps.sort_by_key(|future| future.step);
        }
    }

    /// Each step, with the steps always before it and the threads always
    /// joined before it, by index.
    pub fn steps(&self) -> impl Iterator<Item = &FutureStep> + '_ {
        self.steps.iter()
    }

    /// Where step `step` is held, or where it would go.
    fn find(&self, step: u32) -> Result<usize, usize> {
        self.steps.binary_search_by_key(&step, |future| future.step)
    }
}

/// Most steps of its thread kept as coming before a step of a summary:
/// the latest ones (a step's own lock or wait comes shortly before it;
/// keeping fewer only makes the search reverse more).
pub const MOST_BEFORE: usize = 8;

/// Most threads kept as joined before a step of a summary (keeping fewer
/// only makes the search reverse more).
pub const MOST_JOINED: usize = 8;

/// A summary built from the end of an execution backwards, one step at a
/// time: each step put in front comes before the steps of its thread
/// already there.
#[derive(Debug, Default)]
pub struct Prepending {
    summary: Summary,
    /// Per thread, its steps in the summary with fewer than
    /// [`MOST_BEFORE`] steps before them.
    open: FxHashMap<ThreadId, Vec<u32>>,
    /// Per thread, all its steps in the summary.
    of_thread: FxHashMap<ThreadId, Vec<u32>>,
}

impl Prepending {
    /// Starts from `end`, the summary of what came after the execution
    /// (its steps' threads as `cache` tells them).
    pub fn new(end: Summary, cache: &StateCache) -> Self {
        let mut open: FxHashMap<ThreadId, Vec<u32>> = FxHashMap::default();
        let mut of_thread: FxHashMap<ThreadId, Vec<u32>> = FxHashMap::default();
        for future in end.steps() {
            let thread = cache.step(future.step).thread;
            if future.before.len() < MOST_BEFORE {
                open.entry(thread).or_default().push(future.step);
            }
            of_thread.entry(thread).or_default().push(future.step);
        }
        Prepending {
            summary: end,
            open,
            of_thread,
        }
    }

    /// Puts step `step` (an index, of thread `thread`) in front; `joined`
    /// is the thread it joined, when it is the step in which a join saw
    /// that thread's end.
    pub fn prepend(&mut self, step: u32, thread: ThreadId, joined: Option<ThreadId>) {
        if let Some(joined) = joined {
            self.joined_before(thread, joined);
        }
        let open = self.open.entry(thread).or_default();
        let summary = &mut self.summary;
        open.retain(|&later| {
            let at = summary.find(later).expect("an open step is in the summary");
            let before = &mut summary.steps[at].before;
            if let Err(place) = before.binary_search(&step) {
                // An open step has room (keeping fewer would only make
                // the search reverse more).
                let _ = before.try_insert(place, step);
            }
            before.len() < MOST_BEFORE
        });
        // Nothing comes before it from here on.
        match summary.find(step) {
            Ok(at) => {
                summary.steps[at].before.clear();
                summary.steps[at].joined.clear();
            }
            Err(at) => {
                summary.steps.insert(
                    at,
                    FutureStep {
                        step,
                        ..FutureStep::default()
                    },
                );
                self.of_thread.entry(thread).or_default().push(step);
            }
        }
        if !open.contains(&step) {
            open.push(step);
        }
    }

    /// Notes that every step of `thread` in the summary comes after its
    /// join of `joined`.
    fn joined_before(&mut self, thread: ThreadId, joined: ThreadId) {
        let Some(later) = self.of_thread.get(&thread) else {
            return;
        };
        for &step in later {
            let at = self
                .summary
                .find(step)
                .expect("a thread's step is in the summary");
            let threads = &mut self.summary.steps[at].joined;
            if let Err(place) = threads.binary_search(&joined) {
                // Keeping fewer would only make the search reverse more.
                let _ = threads.try_insert(place, joined);
            }
        }
    }

    /// The summary so far (the search takes it whole, with
    /// [`Prepending::into_summary`]).
    #[cfg(test)]
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// The summary made.
    pub fn into_summary(self) -> Summary {
        self.summary
    }
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
            .map(|future| (future.step, future.before.to_vec()))
            .collect()
    }

    #[test]
    fn a_summary_keeps_for_each_step_the_steps_of_its_thread_before_it() {
        let cache = cache_of(3, 2);
        // Steps 0 and 1 of thread 1, step 2 of thread 2, from the end back.
        let mut run = Prepending::new(Summary::default(), &cache);
        for step in [2, 1, 0] {
            run.prepend(step, cache.step(step).thread, None);
        }
        assert_eq!(
            steps_of(run.summary()),
            [(0, vec![]), (1, vec![0]), (2, vec![])]
        );
        // A step done twice keeps what came before it both times.
        let mut again = Prepending::new(Summary::default(), &cache);
        for step in [1, 0, 1] {
            again.prepend(step, 1, None);
        }
        assert_eq!(steps_of(again.summary()), [(0, vec![1]), (1, vec![])]);
        // So does a join.
        let mut joined = run.summary().clone();
        joined.join(again.summary());
        assert_eq!(steps_of(&joined), [(0, vec![]), (1, vec![]), (2, vec![])]);
        // Going on from a summary puts the steps in front of its own.
        let mut on = Prepending::new(run.summary().clone(), &cache);
        on.prepend(2, 2, None);
        on.prepend(1, 1, None);
        assert_eq!(
            steps_of(on.summary()),
            [(0, vec![1]), (1, vec![]), (2, vec![])]
        );
    }

    #[test]
    fn a_summary_keeps_the_threads_joined_before_each_step() {
        // Thread 1's steps 0, 1 and 2, step 1 its join of thread 3; step 3
        // of thread 2.
        let cache = cache_of(4, 3);
        let joined = |summary: &Summary| -> Vec<(u32, Vec<ThreadId>)> {
            summary
                .steps()
                .map(|future| (future.step, future.joined.to_vec()))
                .collect()
        };
        let mut run = Prepending::new(Summary::default(), &cache);
        run.prepend(2, 1, None);
        run.prepend(3, 2, None);
        run.prepend(1, 1, Some(3));
        run.prepend(0, 1, None);
        // After the join only, and only in the joining thread.
        assert_eq!(
            joined(run.summary()),
            [(0, vec![]), (1, vec![]), (2, vec![3]), (3, vec![])]
        );
        // A join before the state of an execution that came after it
        // orders the future it ended at too.
        let mut on = Prepending::new(run.summary().clone(), &cache);
        on.prepend(0, 1, Some(4));
        assert_eq!(
            joined(on.summary()),
            [(0, vec![]), (1, vec![4]), (2, vec![3, 4]), (3, vec![])]
        );
        // Kept only where every execution joined the thread before it.
        let mut both = on.summary().clone();
        both.join(run.summary());
        assert_eq!(
            joined(&both),
            [(0, vec![]), (1, vec![]), (2, vec![3]), (3, vec![])]
        );
    }

    #[test]
    fn a_summary_keeps_the_latest_steps_before_a_step() {
        let cache = cache_of(12, 12);
        let mut run = Prepending::new(Summary::default(), &cache);
        for step in (0..12).rev() {
            run.prepend(step, 1, None);
        }
        let last = run.summary().steps().last().unwrap();
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
