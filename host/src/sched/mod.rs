//! Scheduling policy: which enabled thread runs at each scheduling point.
//!
//! The runtime asks a [`Scheduler`] at every point; it records the choices
//! itself (strategies never do), so every strategy is replayable by
//! [`ReplayScheduler`]. One strategy per file:
//! - [`RandomScheduler`]: uniform random choice, seeded.
//! - [`PctScheduler`]: probabilistic concurrency testing with depth `d`.
//! - [`PosScheduler`]: partial order sampling.
//! - [`SurwScheduler`]: selectively uniform random walk.
//! - [`ReplayScheduler`]: follows a recorded list of decisions.
//! - [`DfsScheduler`]: never preempts, and logs every decision (systematic
//!   exploration).
//! - [`GuidedScheduler`]: follows runs of decisions where they fit, then
//!   never preempts (schedule minimization).
//! - [`DporScheduler`]: avoids the threads a sleep set rules out, and logs
//!   every step (exhaustive exploration).
//! - [`SleepsLastScheduler`]: random, but sleepers wake only when nothing
//!   else can run (for schedule inference).
//!
//! Two wrappers serve every strategy: [`Fair`] (the runtime wraps each
//! one: past the step limit, a strategy that could starve a thread has its
//! decisions made round-robin) and [`Prefixed`] (the systematic searches
//! wrap theirs: it follows a planned prefix of choices first). A search
//! that reads what its strategy recorded [`lend`]s it to the execution and
//! takes it back afterwards.

mod dfs;
mod dpor;
mod fair;
mod guided;
mod lent;
mod library_model;
mod pct;
mod pos;
mod prefixed;
mod random;
mod replay;
mod seed;
mod sleeps_last;
mod state_cache;
mod steps_by_address;
mod sticky;
mod surw;

pub use dfs::{Decision, DfsScheduler};
pub use dpor::{DporChoice, DporScheduler, MAX_ENUMERATED_VALUES, StepRecord, thread_joined_at};
pub use fair::Fair;
pub use guided::{GuidedScheduler, Run, runs_of};
pub use lent::lend;
pub use library_model::{LibraryModel, LibraryRole};
pub use pct::PctScheduler;
pub use pos::PosScheduler;
pub use prefixed::{Choice, Plan, Prefixed};
pub use random::RandomScheduler;
pub use replay::ReplayScheduler;
pub use seed::execution_seed;
pub use sleeps_last::SleepsLastScheduler;
pub use state_cache::{StateCache, Summary};
pub use steps_by_address::StepsByAddress;
pub use sticky::StickyScheduler;
pub use surw::{SurwPlan, SurwScheduler};

use crate::instrument::{AccessKind, SiteId};
use crate::trace::ThreadId;
use serde::{Deserialize, Serialize};

/// What the scheduler sees of an enabled thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadView {
    /// The thread.
    pub id: ThreadId,
    /// The thread is enabled only because it yields, sleeps or waits with a
    /// timeout, or it spins: running it lets virtual time pass rather than
    /// doing work.
    pub yielding: bool,
    /// The thread yields, or spins without changing memory (its spinning
    /// points are all atomic loads, compare-exchanges and exchanges, as in
    /// polling a flag or retrying to take a lock): running it longer changes
    /// nothing another thread could see, until another thread acts.
    pub polling: bool,
    /// For a sleeping thread or a wait with a timeout: the virtual time it
    /// is due to wake at.
    pub wakes_at: Option<u64>,
    /// The operation the thread performs when it runs next, if it stands
    /// at a memory access, wait or notify (not at a spawn, a yield, a time
    /// slice, an SDK event).
    pub next: Option<NextOp>,
    /// How many locks the thread holds, where an installed analysis
    /// recognises them (atomic-set checking); 0 otherwise.
    pub locks_held: u32,
    /// Under library calls as sampling runs them: the thread is the one
    /// that stopped, at its first point, the call that starts it (see
    /// [`keeps_a_starting_thread`]). Set afresh on the running thread's
    /// view at each point and read only there: another thread's cached
    /// view may still hold it from its own first point.
    pub starting: bool,
}

/// The running thread, when it stands at its first point, the call that
/// starts it (see [`ThreadView::starting`]): random and SURW keep it
/// running there without a draw of their own. Nothing has happened in
/// the thread yet, so another thread's step before it or right after it
/// makes the same execution; the thread's first decision is the one that
/// picked it, as a spawned thread's is in Shuttle and loom, and the
/// walk is uniform over the decisions the program's calls make. (POS
/// keeps its draw there: a priority for the start, which conflicts with
/// nothing, delays a new thread by a random amount, and its finds on
/// `reorder-c` rest on that.)
pub fn keeps_a_starting_thread(
    enabled: &[ThreadView],
    current: Option<ThreadId>,
) -> Option<ThreadId> {
    let current = current?;
    enabled
        .iter()
        .any(|t| t.id == current && t.starting)
        .then_some(current)
}

/// A thread's next operation, as the scheduler sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NextOp {
    /// What it does.
    pub kind: AccessKind,
    /// The first byte it touches (for `memory.copy`: writes).
    pub addr: u32,
    /// How many bytes from `addr`.
    pub len: u32,
    /// For `memory.copy`: the first byte it reads.
    pub src: u32,
    /// Where in the code.
    pub site: SiteId,
}

impl NextOp {
    /// The byte ranges the operation touches, as (first byte, end,
    /// written), when `writes` says whether it changes memory.
    fn ranges(&self, writes: bool) -> [(u64, u64, bool); 2] {
        let len = self.len.max(1) as u64;
        let main = (self.addr as u64, self.addr as u64 + len, writes);
        match self.kind {
            AccessKind::Copy => [(self.src as u64, self.src as u64 + len, false), main],
            _ => [main, main],
        }
    }

    /// Whether this operation and `other`, of another thread, may not
    /// commute, where `writes` and `other_writes` say whether each changes
    /// memory: they touch a common byte and one of them changes it, or both
    /// are waits or notifies on a common address (a notify wakes waiters in
    /// the order they arrived, and returns how many it woke). A call of a
    /// library function that is one step commutes with everything by
    /// itself: what the step does inside the library decides. This is the
    /// one conflict rule of every strategy.
    pub fn dependent(&self, writes: bool, other: &NextOp, other_writes: bool) -> bool {
        if self.kind == AccessKind::Call || other.kind == AccessKind::Call {
            return false;
        }
        let futex = |op: &NextOp| matches!(op.kind, AccessKind::Wait | AccessKind::Notify);
        let both_futex = futex(self) && futex(other);
        self.ranges(writes).iter().any(|&(a0, a1, aw)| {
            other
                .ranges(other_writes)
                .iter()
                .any(|&(b0, b1, bw)| (aw || bw || both_futex) && a0 < b1 && b0 < a1)
        })
    }

    /// [`NextOp::dependent`] for operations still to run: each counts as
    /// changing memory if its kind may. A library call still to run may
    /// do anything to the library's state and to its object (its first
    /// argument, see [`crate::abi::RT_LIBRARY_BEGIN`]): it conflicts with
    /// every other call, and with any access to the
    /// [`LIBRARY_OBJECT_BYTES`] from that argument.
    pub fn conflicts(&self, other: &NextOp) -> bool {
        match (
            self.kind == AccessKind::Call,
            other.kind == AccessKind::Call,
        ) {
            (true, true) => true,
            (true, false) => other.touches_object_of(self),
            (false, true) => self.touches_object_of(other),
            (false, false) => self.dependent(self.kind.writes(), other, other.kind.writes()),
        }
    }

    /// Whether this access touches the object of the library call `call`.
    fn touches_object_of(&self, call: &NextOp) -> bool {
        call.object().is_some_and(|object| {
            self.ranges(true)
                .iter()
                .any(|&(a0, a1, _)| a0 < object.end && object.start < a1)
        })
    }

    /// For a library call still to run: the bytes of its object taken to
    /// be touched ([`LIBRARY_OBJECT_BYTES`] from its first argument).
    pub fn object(&self) -> Option<std::ops::Range<u64>> {
        (self.kind == AccessKind::Call)
            .then(|| u64::from(self.src)..u64::from(self.src) + LIBRARY_OBJECT_BYTES)
    }
}

/// The bytes of a library call's object, from its address, that an
/// operation still to run is taken to touch: the largest of the C
/// library's synchronisation objects (a condition variable, 48 bytes),
/// rounded up, which also holds a Rust lock and the condition variable
/// beside it.
pub const LIBRARY_OBJECT_BYTES: u64 = 64;

/// The start of a *step*: what a thread does from resuming at a scheduling
/// point to reaching its next one. Only schedulers that follow steps
/// ([`Scheduler::follows_steps`]) see them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The thread that runs.
    pub thread: ThreadId,
    /// The operation it performs first: the one it stood at, if it stood
    /// at a memory access, wait or notify.
    pub op: Option<NextOp>,
    /// The thread it resumes from a wait because of, when another thread's
    /// notify woke it.
    pub woken_by: Option<ThreadId>,
    /// The value of the bytes `op` touches before it runs (little-endian),
    /// when it touches at most 8.
    pub value: Option<u64>,
    /// The thread goes on inside an atomic section, where no other thread
    /// may run: this is no new step but more of the running one.
    pub continues: bool,
}

/// The end of a step (see [`Step`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepEnd {
    /// The step touched state of the whole execution that no memory access
    /// shows: virtual time, the random generator, the size of memory.
    pub global: bool,
    /// The step's operation changed the bytes it writes (an operation that
    /// writes the value already there, or a compare-exchange that fails,
    /// only reads).
    pub changed: bool,
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

/// A scheduling policy: what a strategy decides.
///
/// The runtime calls [`Scheduler::choose`] at every *decision*: a scheduling
/// point where more than one thread is enabled (the list is sorted by id).
/// The answer is recorded; points with a single enabled thread are not
/// decisions and do not reach the scheduler. Everything else the runtime
/// tells a strategy arrives as a [`Notice`]. Two concerns are wrapped
/// around every strategy rather than left to each: fairness past the step
/// limit ([`Fair`]) and following a planned prefix of choices
/// ([`Prefixed`]).
pub trait Scheduler {
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
    /// how many passed ([`Notice::KeepsPassed`]). The default commits to
    /// none: every decision is asked.
    fn keeps(&mut self, enabled: &[ThreadView], current: ThreadId, step: u64, max: u64) -> u64 {
        let _ = (enabled, current, step, max);
        0
    }

    /// Something happened that the strategy may want to know.
    fn observe(&mut self, event: Notice<'_>) {
        let _ = event;
    }

    /// Whether the strategy stays fair by itself past the step limit: it
    /// gives every enabled thread a chance at every decision (uniform random
    /// choice, with probability one) or follows a recorded schedule. Any
    /// other strategy may starve a thread forever (PCT keeps its
    /// highest-priority thread running, DFS never preempts), so once an
    /// execution reaches its step limit its decisions are made by
    /// round robin instead (see [`Fair`]) and it hears of them as
    /// [`Notice::ThreadImposed`].
    fn fair_by_itself(&self) -> bool {
        false
    }

    /// Whether the scheduler follows every step ([`Notice::StepStarted`] and
    /// [`Notice::StepEnded`]); the runtime then lets no thread pass a
    /// scheduling point inside wasm.
    fn follows_steps(&self) -> bool {
        false
    }

    /// Whether the strategy wants the state of the coming decision named
    /// ([`Scheduler::state_reached`]): a stateful search past the schedule
    /// it planned.
    fn wants_state(&self) -> bool {
        false
    }

    /// The execution stands at a decision in the state `key` names (`None`
    /// when part of it is out of sight: a thread stopped where its frames
    /// cannot be read); asked only when [`Scheduler::wants_state`] says
    /// so, right before [`Scheduler::choose`]. Returns whether the
    /// execution ends here, its state explored before: neither a pass nor
    /// a failure.
    fn state_reached(&mut self, key: Option<blake3::Hash>) -> bool {
        let _ = key;
        false
    }

    /// Whether the strategy will want no state named from here on (a
    /// stateful search whose execution went round a cycle and runs on
    /// without states): the threads' frames need not be read where they
    /// stop.
    fn states_done(&self) -> bool {
        false
    }
}

/// What the runtime (or a wrapper) tells a strategy.
#[derive(Clone, Copy, Debug)]
pub enum Notice<'a> {
    /// A new execution starts.
    ExecutionStarted,
    /// A thread was created (the main thread too, first).
    ThreadCreated(ThreadId),
    /// A decision was made without asking the strategy (by a planned prefix
    /// or for fairness): `chosen` runs among `enabled` at scheduling point
    /// `step`. Strategies that log their decisions log it as well.
    ThreadImposed {
        /// The enabled threads (see [`Scheduler::choose`]).
        enabled: &'a [ThreadView],
        /// The thread that reached the point, if it is still enabled.
        current: Option<ThreadId>,
        /// The scheduling point.
        step: u64,
        /// The thread that runs.
        chosen: ThreadId,
        /// Whether it was imposed for fairness, past the step limit (else
        /// by a planned prefix): no other choice will be made there in
        /// any execution, so it is no branch for a search.
        fair: bool,
    },
    /// A guest value in `0..bound` was given without asking the strategy:
    /// `value`, at scheduling point `step`.
    ValueImposed {
        /// The range (any value when 0).
        bound: u64,
        /// The scheduling point.
        step: u64,
        /// The value given.
        value: u64,
    },
    /// How many of the decisions the last [`Scheduler::keeps`] committed to
    /// passed: all of them, or fewer when the thread reached another kind
    /// of scheduling point (or ended) first. The next [`Scheduler::choose`]
    /// is the decision after them.
    KeepsPassed(u64),
    /// A thread resumes (after a decision, when there was one). Only for a
    /// scheduler that follows steps.
    StepStarted(Step),
    /// The running thread reached its next scheduling point (or blocked,
    /// or exited). Only for a scheduler that follows steps.
    StepEnded(StepEnd),
    /// The execution ended after `steps` scheduling points; `went_fair`
    /// when it reached its step limit and went on under a fair schedule.
    ExecutionEnded {
        /// Scheduling points of the execution, of its point model (see
        /// `runtime::state::ExecState::model_step`).
        steps: u64,
        /// Whether it went past its step limit.
        went_fair: bool,
    },
}

/// The fair choice: the first enabled thread after `current` in id order
/// (wrapping around), so that every enabled thread runs within as many
/// decisions as there are threads.
pub(crate) fn round_robin(enabled: &[ThreadView], current: Option<ThreadId>) -> ThreadId {
    let after = |t: &&ThreadView| current.is_none_or(|c| t.id > c);
    enabled.iter().find(after).unwrap_or(&enabled[0]).id
}

/// The thread that goes on without a preemption: the current one if it is
/// enabled and neither spins nor lets time pass.
pub fn keeper(enabled: &[ThreadView], current: Option<ThreadId>) -> Option<ThreadId> {
    let current = current?;
    enabled
        .iter()
        .find(|t| t.id == current && !t.yielding)
        .map(|t| t.id)
}

/// Whether choosing `chosen` is a *preemption*: a switch away from a
/// thread that could go on (see [`keeper`]). Switching away from a thread
/// that blocked, exited, yields or spins costs nothing, as in CHESS
/// (Musuvathi and Qadeer, PLDI 2007).
pub fn preempts(enabled: &[ThreadView], current: Option<ThreadId>, chosen: ThreadId) -> bool {
    keeper(enabled, current).is_some_and(|k| k != chosen)
}

/// A followed schedule's `expected` thread at decision `decision` (step
/// `step`), if it can run; else the divergence.
pub(crate) fn follow(
    expected: ThreadId,
    enabled: &[ThreadView],
    decision: usize,
    step: u64,
) -> Result<ThreadId, ScheduleError> {
    if enabled.iter().any(|t| t.id == expected) {
        Ok(expected)
    } else {
        Err(ScheduleError::Diverged {
            decision,
            step,
            expected,
            enabled: enabled.iter().map(|t| t.id).collect(),
        })
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
    /// Partial order sampling (Yuan, Yang and Gu, CAV 2018).
    Pos,
    /// Selectively uniform random walk (Zhao et al., ASPLOS 2025).
    Surw,
    /// The strategies above taking turns by execution index.
    Portfolio,
    /// Every schedule with at most `--preemption-bound` preemptions, by
    /// increasing bound (iterative context bounding, Musuvathi and Qadeer,
    /// PLDI 2007).
    Dfs,
    /// Every schedule up to the order of steps that commute: dynamic
    /// partial-order reduction with source sets and sleep sets (Abdulla et
    /// al., POPL 2014).
    Dpor,
}

impl Strategy {
    /// The strategy's name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Random => "random",
            Strategy::Pct => "pct",
            Strategy::Pos => "pos",
            Strategy::Surw => "surw",
            Strategy::Portfolio => "portfolio",
            Strategy::Dfs => "dfs",
            Strategy::Dpor => "dpor",
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
                polling: false,
                wakes_at: None,
                next: None,
                locks_held: 0,
                starting: false,
            })
            .collect()
    }
}
