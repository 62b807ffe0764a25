//! The scheduler of schedule minimization: it follows a schedule written
//! as *runs* (a thread and how many decisions it keeps running), never
//! fails where the schedule no longer fits, and once the runs are used up
//! never preempts.
//!
//! A recorded schedule is a list of decisions; cutting or changing one of
//! them shifts every later decision onto other points, where a strict
//! replay diverges. Runs survive such edits: a run whose thread cannot run
//! ends early, and the next run takes over, so every edited schedule still
//! names one execution (see `replay::minimize`).

use super::{Notice, ScheduleError, Scheduler, ThreadView, keeper, round_robin};
use crate::trace::ThreadId;

/// A thread and how many decisions in a row it is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// The thread.
    pub thread: ThreadId,
    /// Decisions it is chosen at.
    pub decisions: u32,
}

/// Groups a list of decisions into runs (consecutive equal choices).
pub fn runs_of(decisions: &[ThreadId]) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    for &thread in decisions {
        match runs.last_mut() {
            Some(run) if run.thread == thread => run.decisions += 1,
            _ => runs.push(Run {
                thread,
                decisions: 1,
            }),
        }
    }
    runs
}

/// Follows runs, then never preempts; follows recorded values while they
/// fit, then answers 0.
#[derive(Debug, Default)]
pub struct GuidedScheduler {
    runs: Vec<Run>,
    /// The run being followed.
    run: usize,
    /// Decisions the current run has made.
    made: u32,
    values: Vec<u64>,
    next_value: usize,
}

impl GuidedScheduler {
    /// A scheduler that follows `runs` and the guest values `values`.
    pub fn new(runs: Vec<Run>, values: Vec<u64>) -> Self {
        GuidedScheduler {
            runs,
            values,
            ..Default::default()
        }
    }
}

impl Scheduler for GuidedScheduler {
    fn choose(
        &mut self,
        enabled: &[ThreadView],
        current: Option<ThreadId>,
        _step: u64,
    ) -> Result<ThreadId, ScheduleError> {
        while let Some(run) = self.runs.get(self.run) {
            if self.made < run.decisions && enabled.iter().any(|t| t.id == run.thread) {
                self.made += 1;
                return Ok(run.thread);
            }
            self.run += 1;
            self.made = 0;
        }
        Ok(keeper(enabled, current).unwrap_or_else(|| round_robin(enabled, current)))
    }

    fn choose_value(&mut self, bound: u64, _step: u64) -> Result<u64, ScheduleError> {
        let value = self.values.get(self.next_value).copied().unwrap_or(0);
        self.next_value += 1;
        Ok(if bound == 0 || value < bound {
            value
        } else {
            0
        })
    }

    fn observe(&mut self, event: Notice<'_>) {
        if let Notice::ExecutionStarted = event {
            self.run = 0;
            self.made = 0;
            self.next_value = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::views;

    #[test]
    fn runs_group_equal_choices() {
        assert_eq!(
            runs_of(&[1, 1, 2, 1]),
            vec![
                Run {
                    thread: 1,
                    decisions: 2
                },
                Run {
                    thread: 2,
                    decisions: 1
                },
                Run {
                    thread: 1,
                    decisions: 1
                }
            ]
        );
        assert!(runs_of(&[]).is_empty());
    }

    #[test]
    fn follows_runs_and_skips_those_that_cannot_run() {
        let mut s = GuidedScheduler::new(runs_of(&[2, 2, 3, 1]), vec![]);
        s.observe(Notice::ExecutionStarted);
        let all = views(&[0, 1, 2, 3]);
        assert_eq!(s.choose(&all, Some(0), 1), Ok(2));
        // Thread 2 blocked: its run ends, thread 3's begins.
        assert_eq!(s.choose(&views(&[0, 1, 3]), None, 2), Ok(3));
        assert_eq!(s.choose(&all, Some(3), 3), Ok(1));
        // Runs used up: the current thread goes on.
        assert_eq!(s.choose(&all, Some(1), 4), Ok(1));
        // It blocked: the next thread after it.
        assert_eq!(s.choose(&views(&[0, 2]), None, 5), Ok(0));
    }

    #[test]
    fn values_that_no_longer_fit_become_zero() {
        let mut s = GuidedScheduler::new(vec![], vec![5, 1]);
        s.observe(Notice::ExecutionStarted);
        assert_eq!(s.choose_value(3, 0), Ok(0));
        assert_eq!(s.choose_value(3, 0), Ok(1));
        assert_eq!(s.choose_value(3, 0), Ok(0));
    }
}
