//! What a search may spend: a number of executions and wall time, both
//! counted from its start. Every driver that runs executions in a loop asks
//! its budget whether to go on, and runs each execution with the budget's
//! deadline, so that an execution still going when time is up is stopped
//! (`Outcome::Stopped`) rather than holding the search past its limit.

use crate::execution::Setup;
use std::time::{Duration, Instant};

/// Executions and wall time a search may spend, from when it started.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    start: Instant,
    executions: Option<u64>,
    time_limit: Option<Duration>,
}

impl Budget {
    /// A budget of at most `executions` executions and `time_limit` of wall
    /// time (no bound where `None`), starting now.
    pub fn new(executions: Option<u64>, time_limit: Option<Duration>) -> Self {
        Budget {
            start: Instant::now(),
            executions,
            time_limit,
        }
    }

    /// Whether a search that ran `ran` executions must stop.
    pub fn spent(&self, ran: u64) -> bool {
        self.executions.is_some_and(|n| ran >= n) || self.out_of_time()
    }

    /// Whether the time is up.
    pub fn out_of_time(&self) -> bool {
        self.time_limit.is_some_and(|t| self.start.elapsed() >= t)
    }

    /// Wall time since the start.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// The time left, if time is bounded.
    pub fn time_left(&self) -> Option<Duration> {
        self.time_limit
            .map(|t| t.saturating_sub(self.start.elapsed()))
    }

    /// `setup`, with its executions stopped when the time is up.
    pub fn timed(&self, setup: &Setup) -> Setup {
        let mut timed = setup.clone();
        timed.run.stop_at = self.time_limit.map(|t| self.start + t);
        timed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_ends_at_its_executions_or_its_time() {
        let budget = Budget::new(Some(3), None);
        assert!(!budget.spent(2) && budget.spent(3));
        assert_eq!(budget.timed(&Setup::default()).run.stop_at, None);

        let budget = Budget::new(None, Some(Duration::ZERO));
        assert!(budget.spent(0) && budget.out_of_time());
        assert_eq!(budget.time_left(), Some(Duration::ZERO));
        assert!(budget.timed(&Setup::default()).run.stop_at.is_some());

        let unbounded = Budget::new(None, None);
        assert!(!unbounded.spent(u64::MAX) && unbounded.time_left().is_none());
    }
}
