//! Replay: follows a recorded schedule decision by decision and reports the
//! first place where the execution no longer fits it.

use super::{ScheduleError, Scheduler, ThreadView};
use crate::trace::ThreadId;

/// Follows `decisions`, the choices recorded at every scheduling point where
/// more than one thread was enabled.
#[derive(Debug)]
pub struct ReplayScheduler {
    /// The recorded choices.
    decisions: Vec<ThreadId>,
    /// Index of the next decision to use; never beyond `decisions.len()`.
    next: usize,
}

impl ReplayScheduler {
    /// A scheduler that replays `decisions`.
    pub fn new(decisions: Vec<ThreadId>) -> Self {
        ReplayScheduler { decisions, next: 0 }
    }

    /// Whether every decision was used.
    pub fn finished(&self) -> bool {
        self.next == self.decisions.len()
    }
}

impl Scheduler for ReplayScheduler {
    fn begin_execution(&mut self) {
        self.next = 0;
    }

    fn thread_created(&mut self, _id: ThreadId) {}

    fn choose(
        &mut self,
        enabled: &[ThreadView],
        _current: Option<ThreadId>,
        step: u64,
    ) -> Result<ThreadId, ScheduleError> {
        let Some(&expected) = self.decisions.get(self.next) else {
            return Err(ScheduleError::Exhausted {
                decisions: self.decisions.len(),
                step,
            });
        };
        if !enabled.iter().any(|t| t.id == expected) {
            return Err(ScheduleError::Diverged {
                decision: self.next,
                step,
                expected,
                enabled: enabled.iter().map(|t| t.id).collect(),
            });
        }
        self.next += 1;
        Ok(expected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn views(ids: &[ThreadId]) -> Vec<ThreadView> {
        ids.iter()
            .map(|&id| ThreadView {
                id,
                yielding: false,
            })
            .collect()
    }

    #[test]
    fn follows_decisions_and_reports_divergence() {
        let mut s = ReplayScheduler::new(vec![1, 0, 2]);
        assert_eq!(s.choose(&views(&[0, 1]), None, 1), Ok(1));
        assert_eq!(s.choose(&views(&[0, 1]), None, 2), Ok(0));
        assert!(matches!(
            s.choose(&views(&[0, 1]), None, 3),
            Err(ScheduleError::Diverged {
                decision: 2,
                expected: 2,
                ..
            })
        ));
    }

    #[test]
    fn reports_exhaustion() {
        let mut s = ReplayScheduler::new(vec![]);
        assert!(matches!(
            s.choose(&views(&[0, 1]), None, 5),
            Err(ScheduleError::Exhausted {
                decisions: 0,
                step: 5
            })
        ));
    }
}
