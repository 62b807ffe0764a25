//! The scheduler of systematic exploration: after the prefix the search
//! plans (see [`super::Prefixed`]), a default that never preempts; it logs
//! every decision, the planned ones too, with the threads that could have
//! run instead, so that the search (see `explore::dfs_search`) can plan the
//! next prefix.
//!
//! A *preemption* is a switch away from a thread that could go on: the
//! current thread is enabled, does not merely spin or let time pass
//! (`ThreadView::yielding`), and another one is chosen. Switching away
//! from a thread that blocked, exited, yields or spins costs nothing, as in
//! CHESS (Musuvathi and Qadeer, PLDI 2007), where a yield is where a
//! fair scheduler may switch. And a thread that yields or spins is always
//! switched away from when another thread can run, so that the search does
//! not multiply the schedules by every count of its iterations. For a
//! thread that polls (`ThreadView::polling`: it yields, or spins on atomic
//! loads, compare-exchanges and exchanges, as in waiting for a flag or a
//! lock) nothing is lost: polling longer changes nothing another thread
//! sees. A thread that spins on read-modify-writes or computes may change
//! what others see, so leaving it early does lose schedules: the search
//! notes it ([`DfsScheduler::left_busy`]) and then claims nothing.

use super::{Notice, ScheduleError, Scheduler, ThreadView, keeper};
use crate::trace::ThreadId;

/// One decision of an execution, as the search sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The threads that could run, in id order.
    pub enabled: Vec<ThreadId>,
    /// The thread that could go on without a preemption, if any.
    pub keeps: Option<ThreadId>,
    /// The current thread, when it spins or yields and so is left for
    /// another one.
    pub leaves: Option<ThreadId>,
    /// The thread chosen.
    pub chosen: ThreadId,
}

impl Decision {
    /// Whether choosing `thread` here is a preemption.
    pub fn preempts(&self, thread: ThreadId) -> bool {
        self.keeps.is_some_and(|k| k != thread)
    }
}

/// Never preempts, and logs every decision.
#[derive(Debug, Default)]
pub struct DfsScheduler {
    /// This execution's decisions so far.
    log: Vec<Decision>,
    /// Whether the guest asked for a value with more than one possible
    /// answer (the search does not enumerate those).
    pub chose_values: bool,
    /// Whether the execution left a spinning thread that was not polling
    /// (see the module doc): schedules in which it ran longer were not
    /// explored.
    pub left_busy: bool,
}

impl DfsScheduler {
    /// The decisions of the last execution.
    pub fn log(&self) -> &[Decision] {
        &self.log
    }

    /// Logs the decision that runs `chosen`; returns it.
    fn log_decision(
        &mut self,
        enabled: &[ThreadView],
        current: Option<ThreadId>,
        chosen: ThreadId,
    ) -> ThreadId {
        let spinner = spinner(enabled, current);
        self.left_busy |= spinner.is_some_and(|t| !t.polling);
        self.log.push(Decision {
            enabled: enabled.iter().map(|t| t.id).collect(),
            keeps: keeper(enabled, current),
            leaves: spinner.map(|t| t.id),
            chosen,
        });
        chosen
    }
}

/// The current thread, if it spins or lets time pass without a timeout.
fn spinner(enabled: &[ThreadView], current: Option<ThreadId>) -> Option<&ThreadView> {
    let current = current?;
    enabled
        .iter()
        .find(|t| t.id == current && t.yielding && t.wakes_at.is_none())
}

impl Scheduler for DfsScheduler {
    fn choose(
        &mut self,
        enabled: &[ThreadView],
        current: Option<ThreadId>,
        _step: u64,
    ) -> Result<ThreadId, ScheduleError> {
        // Never preempt; after a thread blocks, exits or spins, the first
        // other thread that does real work, else the first other.
        let leaves = spinner(enabled, current).map(|t| t.id);
        let others = || enabled.iter().filter(|t| Some(t.id) != leaves);
        let chosen = keeper(enabled, current)
            .or_else(|| others().find(|t| !t.yielding).map(|t| t.id))
            .or_else(|| others().next().map(|t| t.id))
            .unwrap_or(enabled[0].id);
        Ok(self.log_decision(enabled, current, chosen))
    }

    fn choose_value(&mut self, bound: u64, _step: u64) -> Result<u64, ScheduleError> {
        self.chose_values |= bound != 1;
        Ok(0)
    }

    fn observe(&mut self, event: Notice<'_>) {
        match event {
            Notice::ExecutionStarted => {
                self.log.clear();
                self.chose_values = false;
                self.left_busy = false;
            }
            Notice::ThreadImposed {
                enabled,
                current,
                chosen,
                fair,
                ..
            } => {
                if fair {
                    // Past the step limit the fair schedule decides in every
                    // execution: a decision, but no branch of the search.
                    self.log.push(Decision {
                        enabled: vec![chosen],
                        keeps: None,
                        leaves: None,
                        chosen,
                    });
                } else {
                    self.log_decision(enabled, current, chosen);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::views;
    use crate::sched::{Plan, Prefixed};

    #[test]
    fn follows_the_prefix_then_keeps_the_current_thread() {
        let mut s = Prefixed::new(Plan::Threads(vec![1]), DfsScheduler::default());
        s.observe(Notice::ExecutionStarted);
        let enabled = views(&[0, 1]);
        assert_eq!(s.choose(&enabled, Some(0), 1).unwrap(), 1);
        assert_eq!(s.choose(&enabled, Some(1), 2).unwrap(), 1);
        assert_eq!(s.choose(&views(&[0, 2]), None, 3).unwrap(), 0);
        let dfs = s.strategy();
        assert!(dfs.log()[0].preempts(1));
        assert!(!dfs.log()[1].preempts(1));
        assert!(!dfs.log()[2].preempts(2));
    }

    #[test]
    fn leaving_a_spinning_thread_is_no_preemption() {
        let mut dfs = DfsScheduler::default();
        dfs.observe(Notice::ExecutionStarted);
        let mut enabled = views(&[0, 1]);
        enabled[0].yielding = true;
        enabled[0].polling = true;
        assert_eq!(dfs.choose(&enabled, Some(0), 1).unwrap(), 1);
        assert!(!dfs.log()[0].preempts(1));
        assert!(!dfs.left_busy);
        // A thread that spins on read-modify-writes is left too, but the
        // schedules lost make the search claim nothing.
        enabled[0].polling = false;
        assert_eq!(dfs.choose(&enabled, Some(0), 2).unwrap(), 1);
        assert!(dfs.left_busy);
    }
}
