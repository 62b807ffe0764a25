//! Schedule minimization: the same failure with the fewest preemptions,
//! then the fewest scheduling steps.
//!
//! The search is greedy and replay-based, in the spirit of delta debugging
//! over thread schedules (Choi and Zeller, ISSTA 2002) and of trace
//! simplification by removing context switches (Jalbert and Sen, FSE
//! 2010). A candidate is an edited schedule, written as runs of decisions
//! and followed by a [`GuidedScheduler`] (which, once the runs are used
//! up, never preempts); it is kept when its execution fails the same way
//! (the judge says so) and is smaller: fewer preemptions, or as many and
//! fewer steps. Its recorded decisions, not the edited runs, become the
//! next schedule to edit, so every kept schedule replays exactly.
//!
//! Four passes, each until it finds nothing smaller, repeated until none
//! does:
//! 1. *cut*: keep the decisions before one preemption and let the rest run
//!    without preempting, trying the earliest preemption first;
//! 2. *drop*: remove the run of decisions one preemption starts (the
//!    preempting thread makes them in its next run instead, or not at all);
//! 3. *consolidate*: let a run take over its thread's next run, or all its
//!    later runs;
//! 4. *shorten*: remove any run, or halve it, for fewer steps.
//!
//! The search stops early at its budget of executions or time, and says so.

use super::verdict::Judge;
use crate::budget::Budget;
use crate::execution::Setup;
use crate::failure::{Failure, FailureKind};
use crate::runtime::{ExecutionResult, Program};
use crate::sched::{GuidedScheduler, Run, runs_of};
use serde::Serialize;
use std::time::Duration;

/// Most executions a minimization runs.
pub const MOST_EXECUTIONS: u64 = 1000;

/// Most wall time a minimization spends.
pub const MOST_TIME: Duration = Duration::from_secs(20);

/// A minimization's budget, starting now: [`MOST_EXECUTIONS`] and at most
/// `time` (no more than [`MOST_TIME`]).
pub fn budget(time: Duration) -> Budget {
    Budget::new(Some(MOST_EXECUTIONS), Some(time.min(MOST_TIME)))
}

/// The size of a failing execution's schedule: what minimization lowers,
/// preemptions first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Size {
    /// Switches away from a thread that could go on.
    pub preemptions: u64,
    /// Scheduling points taken.
    pub steps: u64,
    /// Points where more than one thread could run.
    pub decisions: u64,
}

impl Size {
    /// The size of `result`'s schedule.
    pub fn of(result: &ExecutionResult) -> Size {
        Size {
            preemptions: result.preemptions.len() as u64,
            steps: result.steps,
            decisions: result.decisions.len() as u64,
        }
    }
}

/// What minimization did.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Minimization {
    /// The original's size.
    pub from: Size,
    /// The result's size.
    pub to: Size,
    /// Executions run.
    pub executions: u64,
    /// Whether every pass ran to its end (not stopped by the budget).
    pub complete: bool,
}

/// Minimizes the schedule of `original`, a failing execution of `program`
/// under `setup`. `fails_the_same` judges a candidate's execution: whether
/// it shows the original's failure. Returns the smallest failing execution
/// found (the original when none was smaller) and what was done.
pub fn minimize(
    program: &mut Program,
    setup: &Setup,
    original: ExecutionResult,
    fails_the_same: &mut dyn FnMut(&mut Program, &ExecutionResult) -> bool,
    budget: Budget,
) -> (ExecutionResult, Minimization) {
    let from = Size::of(&original);
    let mut search = Search {
        program,
        setup,
        judge: fails_the_same,
        best: original,
        budget,
        executions: 0,
    };
    let complete = search.run_passes();
    let minimization = Minimization {
        from,
        to: Size::of(&search.best),
        executions: search.executions,
        complete,
    };
    (search.best, minimization)
}

/// Minimizes the schedule of `result`, an execution of `program` under
/// `setup` that shows `failure` (under every check of `setup`, see
/// [`Judge`]): a candidate must fail the same way up to the values its
/// message mentions ([`Failure::same_up_to_values`]). `result` and
/// `failure` become the smallest execution's. `None` for a livelock, which
/// every candidate would run into for the whole step limit: its schedule
/// stays as found.
pub fn minimize_failure(
    program: &mut Program,
    setup: &Setup,
    result: &mut ExecutionResult,
    failure: &mut Failure,
    budget: Budget,
) -> Option<Minimization> {
    if failure.kind == FailureKind::Livelock {
        return None;
    }
    let original = failure.clone();
    let mut judge = Judge::default();
    let mut verdict = |program: &mut Program, execution: &ExecutionResult| {
        judge.verdict(program, setup, execution).ok().flatten()
    };
    let (smallest, minimization) = minimize(
        program,
        setup,
        result.clone(),
        &mut |program, candidate| {
            verdict(program, candidate).is_some_and(|f| f.same_up_to_values(&original))
        },
        budget,
    );
    if let Some(smallest_failure) = verdict(program, &smallest) {
        *failure = smallest_failure;
    }
    *result = smallest;
    Some(minimization)
}

struct Search<'a> {
    program: &'a mut Program,
    setup: &'a Setup,
    judge: &'a mut dyn FnMut(&mut Program, &ExecutionResult) -> bool,
    best: ExecutionResult,
    budget: Budget,
    executions: u64,
}

/// What trying a candidate gave.
enum Tried {
    /// It failed the same way and is smaller: it is now the best.
    Kept,
    /// It is not smaller or failed otherwise.
    Rejected,
    /// The budget is spent.
    OutOfBudget,
}

impl Search<'_> {
    /// Runs the passes in turn until none finds a smaller schedule; false
    /// when the budget stopped it first.
    fn run_passes(&mut self) -> bool {
        loop {
            let before = Size::of(&self.best);
            if !(self.cut() && self.drop_preemptions() && self.consolidate() && self.shorten()) {
                return false;
            }
            if Size::of(&self.best) == before {
                return true;
            }
        }
    }

    /// Pass 1: the decisions before one preemption, then none.
    fn cut(&mut self) -> bool {
        for k in 0..self.best.preemptions.len() {
            let at = self.best.preemptions[k].decision;
            let runs = runs_of(&self.best.decisions[..at]);
            match self.try_runs(runs) {
                Tried::Kept => return true,
                Tried::Rejected => {}
                Tried::OutOfBudget => return false,
            }
        }
        true
    }

    /// Pass 2: without the run one preemption starts. The preempting
    /// thread makes those decisions in its next run instead, so its later
    /// runs still start where they did; failing that, it loses them.
    fn drop_preemptions(&mut self) -> bool {
        'again: loop {
            let runs = runs_of(&self.best.decisions);
            let starts = run_starts(&runs);
            for r in (0..runs.len()).rev() {
                if !self
                    .best
                    .preemptions
                    .iter()
                    .any(|p| p.decision == starts[r])
                {
                    continue;
                }
                let mut lost = runs.clone();
                let dropped = lost.remove(r);
                let mut deferred = lost.clone();
                let next_own = deferred[r..]
                    .iter_mut()
                    .find(|run| run.thread == dropped.thread);
                let candidates = match next_own {
                    Some(next) => {
                        next.decisions += dropped.decisions;
                        vec![deferred, lost]
                    }
                    None => vec![lost],
                };
                for candidate in candidates {
                    match self.try_runs(candidate) {
                        Tried::Kept => continue 'again,
                        Tried::Rejected => {}
                        Tried::OutOfBudget => return false,
                    }
                }
            }
            return true;
        }
    }

    /// Pass 3: one run takes over its thread's next run, or all its later
    /// runs, so the thread is switched away from fewer times.
    fn consolidate(&mut self) -> bool {
        'again: loop {
            let runs = runs_of(&self.best.decisions);
            for r in (0..runs.len()).rev() {
                let thread = runs[r].thread;
                let later: Vec<usize> = (r + 1..runs.len())
                    .filter(|&l| runs[l].thread == thread)
                    .collect();
                let merge = |taken: &[usize]| {
                    let mut merged = runs.clone();
                    for &l in taken.iter().rev() {
                        merged[r].decisions += merged.remove(l).decisions;
                    }
                    merged
                };
                let mut candidates = Vec::new();
                if !later.is_empty() {
                    candidates.push(merge(&later[..1]));
                }
                if later.len() > 1 {
                    candidates.push(merge(&later));
                }
                for candidate in candidates {
                    match self.try_runs(candidate) {
                        Tried::Kept => continue 'again,
                        Tried::Rejected => {}
                        Tried::OutOfBudget => return false,
                    }
                }
            }
            return true;
        }
    }

    /// Pass 4: without one run, or with one run halved.
    fn shorten(&mut self) -> bool {
        'again: loop {
            let runs = runs_of(&self.best.decisions);
            for r in (0..runs.len()).rev() {
                let mut without = runs.clone();
                without.remove(r);
                let mut candidates = vec![without];
                if runs[r].decisions >= 2 {
                    let mut halved = runs.clone();
                    halved[r].decisions /= 2;
                    candidates.push(halved);
                }
                for candidate in candidates {
                    match self.try_runs(candidate) {
                        Tried::Kept => continue 'again,
                        Tried::Rejected => {}
                        Tried::OutOfBudget => return false,
                    }
                }
            }
            return true;
        }
    }

    fn try_runs(&mut self, runs: Vec<Run>) -> Tried {
        if self.budget.spent(self.executions) {
            return Tried::OutOfBudget;
        }
        self.executions += 1;
        let scheduler = GuidedScheduler::new(runs, self.best.values.clone());
        let result = crate::execution::execute(self.program, Box::new(scheduler), self.setup);
        if Size::of(&result) < Size::of(&self.best) && (self.judge)(self.program, &result) {
            self.best = result;
            Tried::Kept
        } else {
            Tried::Rejected
        }
    }
}

/// The index in the decisions at which each run starts.
fn run_starts(runs: &[Run]) -> Vec<usize> {
    runs.iter()
        .scan(0, |next, run| {
            let start = *next;
            *next += run.decisions as usize;
            Some(start)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_start_where_the_choice_changes() {
        assert_eq!(run_starts(&runs_of(&[1, 2, 2, 1])), vec![0, 1, 3]);
        assert_eq!(run_starts(&[]), Vec::<usize>::new());
    }

    #[test]
    fn sizes_order_preemptions_first() {
        let small = Size {
            preemptions: 1,
            steps: 900,
            decisions: 90,
        };
        let large = Size {
            preemptions: 2,
            steps: 10,
            decisions: 1,
        };
        assert!(small < large);
    }
}
