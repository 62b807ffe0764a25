//! The bookkeeping every exploration loop shares: what it counted of the
//! executions taken so far, and whether its budget (iterations, discards,
//! time, the first failure) says to stop.

use super::distinct::DistinctTraces;
use super::{
    DISCARD_FACTOR, Exploration, ExploreOptions, FailingExecution, Inconclusive, Progress,
};
use crate::budget::Budget;
use crate::runtime::{Cut, ExecutionResult, Outcome};
use crate::trace::TraceHash;

/// What the exploration keeps of an execution run by a worker.
#[derive(Clone, Copy, Debug)]
pub(super) struct Summary {
    trace_hash: TraceHash,
    discarded: bool,
    pub(super) failed: bool,
    cut: Option<Cut>,
    /// Cut by the exploration's time limit: not counted.
    pub(super) stopped: bool,
}

impl Summary {
    pub(super) fn of(result: &ExecutionResult) -> Self {
        Summary {
            trace_hash: result.trace_hash,
            discarded: matches!(result.outcome, Outcome::Discarded { .. }),
            failed: result.outcome.failure().is_some(),
            cut: result.cut(),
            stopped: matches!(result.outcome, Outcome::Stopped),
        }
    }
}

/// The results taken so far, in index order.
pub(super) struct Tally<'a> {
    pub(super) options: &'a ExploreOptions,
    budget: Budget,
    traces: DistinctTraces,
    pub(super) executions: u64,
    pub(super) discarded: u64,
    failing_executions: u64,
    pub(super) inconclusive: Inconclusive,
    /// The index of the first failing execution, and how many executions
    /// had been taken with it.
    pub(super) first_failure: Option<(u64, u64)>,
    /// The index of the last execution taken.
    pub(super) last: Option<u64>,
}

impl<'a> Tally<'a> {
    /// Nothing taken yet, for an exploration under `options` starting now.
    pub(super) fn new(options: &'a ExploreOptions) -> Self {
        Tally {
            options,
            budget: Budget::new(None, options.time_limit),
            traces: DistinctTraces::default(),
            executions: 0,
            discarded: 0,
            failing_executions: 0,
            inconclusive: Inconclusive::default(),
            first_failure: None,
            last: None,
        }
    }

    /// The setup of its executions: those still going at the time limit
    /// are stopped.
    pub(super) fn timed_setup(&self) -> crate::execution::Setup {
        self.budget.timed(&self.options.setup)
    }

    /// The exploration it counted, with its first failure and last
    /// execution.
    pub(super) fn exploration(
        self,
        failure: Option<FailingExecution>,
        last: Option<ExecutionResult>,
    ) -> Exploration {
        Exploration {
            executions: self.executions,
            distinct_traces: self.traces.count(),
            distinct_traces_capped: !self.traces.exact(),
            discarded: self.discarded,
            failing_executions: self.failing_executions,
            inconclusive: self.inconclusive,
            failure,
            last,
            elapsed: self.budget.elapsed(),
            exhausted: None,
            race_points: None,
            state_space: None,
        }
    }

    /// The number, counting from `next`, of the execution whose result
    /// ends the exploration if none is discarded or fails first (`None`
    /// without an execution count).
    pub(super) fn last_needed(&self, next: u64) -> Option<u64> {
        let counted = self.executions - self.discarded;
        let left = self.options.iterations?.saturating_sub(counted);
        Some(next + left.saturating_sub(1))
    }

    /// Whether the exploration ends before taking another execution.
    pub(super) fn done(&self) -> bool {
        let counted = self.executions - self.discarded;
        (self.first_failure.is_some() && !self.options.keep_going)
            || self.options.iterations.is_some_and(|n| {
                counted >= n || self.executions >= n.saturating_mul(DISCARD_FACTOR)
            })
            || self.budget.out_of_time()
    }

    /// Takes the result of execution `index`.
    pub(super) fn take(
        &mut self,
        index: u64,
        summary: Summary,
        progress: &mut impl FnMut(Progress),
    ) {
        if summary.stopped {
            return;
        }
        self.executions += 1;
        self.discarded += summary.discarded as u64;
        if let Some(cut) = summary.cut {
            self.inconclusive.add(index, cut);
        }
        self.traces.insert(summary.trace_hash);
        if summary.failed {
            self.failing_executions += 1;
            self.first_failure.get_or_insert((index, self.executions));
        }
        self.last = Some(index);
        progress(Progress {
            executions: self.executions,
            distinct_traces: self.traces.count(),
            elapsed: self.budget.elapsed(),
        });
    }
}
