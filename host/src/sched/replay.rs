//! Replay: follows a recorded schedule decision by decision and reports the
//! first place where the execution no longer fits it.

use super::{Notice, ScheduleError, Scheduler, ThreadView};
use crate::trace::ThreadId;

/// Follows `decisions`, the choices recorded at every scheduling point where
/// more than one thread was enabled, and `values`, the guest's
/// nondeterministic values.
#[derive(Debug)]
pub struct ReplayScheduler {
    /// The recorded thread choices.
    decisions: Vec<ThreadId>,
    /// Index of the next decision to use; never beyond `decisions.len()`.
    next: usize,
    /// The recorded values.
    values: Vec<u64>,
    /// Index of the next value to use; never beyond `values.len()`.
    next_value: usize,
    /// Past the recorded choices, whether it goes on round robin (and
    /// draws 0) rather than report the schedule exhausted.
    then_round_robin: bool,
}

impl ReplayScheduler {
    /// A scheduler that replays `decisions` and `values`.
    pub fn new(decisions: Vec<ThreadId>, values: Vec<u64>) -> Self {
        ReplayScheduler {
            decisions,
            next: 0,
            values,
            next_value: 0,
            then_round_robin: false,
        }
    }

    /// A scheduler that replays `decisions` and `values`, then goes on
    /// round robin, drawing 0 for every value: a fair continuation that
    /// depends on nothing but the execution's state.
    pub fn then_round_robin(decisions: Vec<ThreadId>, values: Vec<u64>) -> Self {
        ReplayScheduler {
            then_round_robin: true,
            ..ReplayScheduler::new(decisions, values)
        }
    }
}

impl Scheduler for ReplayScheduler {
    fn choose(
        &mut self,
        enabled: &[ThreadView],
        current: Option<ThreadId>,
        step: u64,
    ) -> Result<ThreadId, ScheduleError> {
        let Some(&expected) = self.decisions.get(self.next) else {
            if self.then_round_robin {
                return Ok(super::round_robin(enabled, current));
            }
            return Err(ScheduleError::Exhausted {
                decisions: self.decisions.len(),
                step,
            });
        };
        let chosen = super::follow(expected, enabled, self.next, step)?;
        self.next += 1;
        Ok(chosen)
    }

    /// The recorded schedule says what ran, fair or not.
    fn fair_by_itself(&self) -> bool {
        true
    }

    fn choose_value(&mut self, bound: u64, step: u64) -> Result<u64, ScheduleError> {
        let index = self.next_value;
        let Some(&value) = self.values.get(index) else {
            if self.then_round_robin {
                return Ok(0);
            }
            return Err(ScheduleError::ValueDiverged {
                index,
                step,
                problem: format!("the schedule has only {} values", self.values.len()),
            });
        };
        if bound != 0 && value >= bound {
            return Err(ScheduleError::ValueDiverged {
                index,
                step,
                problem: format!("the recorded value {value} is not below {bound}"),
            });
        }
        self.next_value += 1;
        Ok(value)
    }

    fn observe(&mut self, event: Notice<'_>) {
        if let Notice::ExecutionStarted = event {
            self.next = 0;
            self.next_value = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::views;

    #[test]
    fn follows_decisions_and_reports_divergence() {
        let mut s = ReplayScheduler::new(vec![1, 0, 2], vec![]);
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
    fn replays_values_and_checks_their_range() {
        let mut s = ReplayScheduler::new(vec![], vec![3, 9]);
        assert_eq!(s.choose_value(5, 0), Ok(3));
        assert!(matches!(
            s.choose_value(5, 1),
            Err(ScheduleError::ValueDiverged { index: 1, .. })
        ));
    }

    #[test]
    fn goes_on_round_robin_past_the_recorded_choices_when_asked() {
        let mut s = ReplayScheduler::then_round_robin(vec![2], vec![7]);
        assert_eq!(s.choose(&views(&[0, 1, 2]), Some(0), 1), Ok(2));
        assert_eq!(s.choose_value(10, 1), Ok(7));
        // Round robin: the next enabled thread after the current one.
        assert_eq!(s.choose(&views(&[0, 1, 2]), Some(2), 2), Ok(0));
        assert_eq!(s.choose(&views(&[0, 1, 2]), Some(0), 3), Ok(1));
        assert_eq!(s.choose(&views(&[0, 2]), Some(0), 4), Ok(2));
        assert_eq!(s.choose_value(10, 4), Ok(0));
        // A new execution follows the recorded choices again.
        s.observe(Notice::ExecutionStarted);
        assert_eq!(s.choose(&views(&[0, 1, 2]), Some(0), 1), Ok(2));
    }

    #[test]
    fn reports_exhaustion() {
        let mut s = ReplayScheduler::new(vec![], vec![]);
        assert!(matches!(
            s.choose(&views(&[0, 1]), None, 5),
            Err(ScheduleError::Exhausted {
                decisions: 0,
                step: 5
            })
        ));
    }
}
