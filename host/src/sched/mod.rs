//! Scheduling policy: which enabled thread runs at each scheduling point.
//!
//! The runtime asks a [`Scheduler`] at every point; it records the choices
//! itself (strategies never do), so every strategy is replayable by
//! [`ReplayScheduler`]. One strategy per file:
//! - [`RandomScheduler`]: uniform random choice, seeded.
//! - [`PctScheduler`]: probabilistic concurrency testing with depth `d`.
//! - [`ReplayScheduler`]: follows a recorded list of decisions.

mod pct;
mod random;
mod replay;

pub use pct::PctScheduler;
pub use random::RandomScheduler;
pub use replay::ReplayScheduler;

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

    /// The execution ended after `steps` scheduling points.
    fn end_execution(&mut self, steps: u64) {
        let _ = steps;
    }
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
