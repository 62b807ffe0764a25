//! Scheduling policy: which enabled thread runs at each scheduling point.
//!
//! The runtime asks a [`Scheduler`] at every point; it records the choices
//! itself (strategies never do), so every strategy is replayable by
//! [`ReplayScheduler`]. One strategy per file:
//! - [`RandomScheduler`]: uniform random choice, seeded.
//! - [`PctScheduler`]: probabilistic concurrency testing with depth `d`.
//! - [`ReplayScheduler`]: follows a recorded list of decisions.
//! - [`SleepsLastScheduler`]: random, but sleepers wake only when nothing
//!   else can run (for schedule inference).

mod pct;
mod random;
mod replay;
mod sleeps_last;

pub use pct::PctScheduler;
pub use random::RandomScheduler;
pub use replay::ReplayScheduler;
pub use sleeps_last::SleepsLastScheduler;

use crate::instrument::SiteId;
use crate::trace::ThreadId;
use serde::{Deserialize, Serialize};

/// What the scheduler sees of an enabled thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadView {
    /// The thread.
    pub id: ThreadId,
    /// The thread is enabled only because it yields, sleeps or waits with a
    /// timeout: running it lets virtual time pass rather than doing work.
    pub yielding: bool,
    /// For a sleeping thread or a wait with a timeout: the virtual time it
    /// is due to wake at.
    pub wakes_at: Option<u64>,
    /// When atomic sets are checked: the access the thread is about to
    /// make (its site and address), if it stands at one.
    pub pending: Option<(SiteId, u32)>,
    /// When atomic sets are checked: how many locks the thread holds.
    pub locks_held: u32,
}

/// Why a scheduler could not choose.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// A replayed schedule asked for a thread that cannot run.
    #[error(
        "the schedule diverged at decision {decision} (step {step}): it says thread {expected} runs, but the threads that can run are {enabled:?}"
    )]
    Diverged {
        /// Index of the decision in the schedule.
        decision: usize,
        /// Scheduling step at which it happened.
        step: u64,
        /// Thread the schedule names.
        expected: ThreadId,
        /// Threads that could run.
        enabled: Vec<ThreadId>,
    },
    /// A replayed schedule has no value left for a guest choice, or the
    /// recorded value is out of the requested range.
    #[error("the schedule diverged at value choice {index} (step {step}): {problem}")]
    ValueDiverged {
        /// Index of the value in the schedule.
        index: usize,
        /// Scheduling step at which it happened.
        step: u64,
        /// What did not fit.
        problem: String,
    },
    /// A replayed schedule ended while the execution still had choices.
    #[error(
        "the schedule diverged: it has {decisions} decisions but the execution needs more (step {step})"
    )]
    Exhausted {
        /// Length of the schedule.
        decisions: usize,
        /// Scheduling step at which it ran out.
        step: u64,
    },
}

/// A scheduling policy.
///
/// The runtime calls [`Scheduler::choose`] at every *decision*: a scheduling
/// point where more than one thread is enabled (the list is sorted by id).
/// The answer is recorded; points with a single enabled thread are not
/// decisions and do not reach the scheduler.
pub trait Scheduler {
    /// A new execution starts.
    fn begin_execution(&mut self);

    /// A thread was created (the main thread too, first).
    fn thread_created(&mut self, id: ThreadId);

    /// Picks the thread that runs next among `enabled` (at least two).
    /// `current` is the thread that reached the point if it is still
    /// enabled; `step` counts scheduling points in this execution, including
    /// those that were not decisions.
    ///
    /// # Errors
    ///
    /// Only a replaying scheduler fails, when the schedule does not fit.
    fn choose(
        &mut self,
        enabled: &[ThreadView],
        current: Option<ThreadId>,
        step: u64,
    ) -> Result<ThreadId, ScheduleError>;

    /// A value in `0..bound` (any value when `bound` is 0) for a
    /// nondeterministic choice of the guest (`weft.choose`).
    ///
    /// # Errors
    ///
    /// Only a replaying scheduler fails, when its recorded values run out.
    fn choose_value(&mut self, bound: u64, step: u64) -> Result<u64, ScheduleError>;

    /// Called right after [`Scheduler::choose`] picked `current` again: how
    /// many of the following decisions (at most `max`) the scheduler commits
    /// to keep `current` running, provided the thread reaches nothing but
    /// scheduling points of memory accesses meanwhile (the enabled threads
    /// then stay as they are). The runtime lets the thread pass those points
    /// inside wasm, records each as a decision for `current`, and then tells
    /// [`Scheduler::keeps_passed`] how many passed. The default commits to
    /// none: every decision is asked.
    fn keeps(&mut self, enabled: &[ThreadView], current: ThreadId, step: u64, max: u64) -> u64 {
        let _ = (enabled, current, step, max);
        0
    }

    /// How many of the decisions the last [`Scheduler::keeps`] committed to
    /// passed: all of them, or fewer when the thread reached another kind of
    /// scheduling point (or ended) first. The next [`Scheduler::choose`]
    /// is the decision after them.
    fn keeps_passed(&mut self, passed: u64) {
        let _ = passed;
    }

    /// The execution ended after `steps` scheduling points.
    fn end_execution(&mut self, steps: u64) {
        let _ = steps;
    }
}

/// Maps a random 64-bit number to `0..bound` (any value when `bound` is 0).
pub(crate) fn value_in(random: u64, bound: u64) -> u64 {
    if bound == 0 { random } else { random % bound }
}

/// The exploration strategies a user can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// Uniformly random choice at every scheduling point.
    Random,
    /// Probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010).
    Pct,
}

impl Strategy {
    /// The strategy's name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Random => "random",
            Strategy::Pct => "pct",
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::ThreadView;
    use crate::trace::ThreadId;

    /// Enabled-thread views of `ids`, none of them yielding.
    pub(crate) fn views(ids: &[ThreadId]) -> Vec<ThreadView> {
        ids.iter()
            .map(|&id| ThreadView {
                id,
                yielding: false,
                wakes_at: None,
                pending: None,
                locks_held: 0,
            })
            .collect()
    }
}
