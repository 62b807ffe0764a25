//! Fairness past the step limit, around any strategy.
//!
//! An execution that reaches its step limit goes on for as long again under
//! a fair schedule before the runtime calls it a livelock: an unfair
//! strategy may have starved the thread everyone waits for (a spin lock's
//! holder, say). The runtime wraps every strategy in [`Fair`], which answers
//! those decisions by [`round_robin`] unless the strategy is fair by itself
//! ([`Scheduler::fair_by_itself`]), so no strategy implements fairness and
//! none can forget it.

use super::{Notice, ScheduleError, Scheduler, ThreadView, round_robin};
use crate::trace::ThreadId;

/// A strategy, made fair once the runtime says so ([`Fair::go_fair`]).
pub struct Fair {
    strategy: Box<dyn Scheduler>,
    /// The execution went past its step limit.
    fair: bool,
    /// The strategy is fair by itself: it goes on choosing.
    by_itself: bool,
}

impl Fair {
    /// Wraps `strategy`.
    pub fn new(strategy: Box<dyn Scheduler>) -> Self {
        let by_itself = strategy.fair_by_itself();
        Fair {
            strategy,
            fair: false,
            by_itself,
        }
    }

    /// The execution reached its step limit: from now on, every decision
    /// is fair.
    pub fn go_fair(&mut self) {
        self.fair = true;
    }

    /// Whether decisions are made here rather than by the strategy.
    fn imposing(&self) -> bool {
        self.fair && !self.by_itself
    }
}

impl Scheduler for Fair {
    fn choose(
        &mut self,
        enabled: &[ThreadView],
        current: Option<ThreadId>,
        step: u64,
    ) -> Result<ThreadId, ScheduleError> {
        if !self.imposing() {
            return self.strategy.choose(enabled, current, step);
        }
        let chosen = round_robin(enabled, current);
        self.strategy.observe(Notice::ThreadImposed {
            enabled,
            current,
            step,
            chosen,
            fair: true,
        });
        Ok(chosen)
    }

    fn choose_value(&mut self, bound: u64, step: u64) -> Result<u64, ScheduleError> {
        self.strategy.choose_value(bound, step)
    }

    fn keeps(&mut self, enabled: &[ThreadView], current: ThreadId, step: u64, max: u64) -> u64 {
        if self.imposing() {
            return 0;
        }
        self.strategy.keeps(enabled, current, step, max)
    }

    fn observe(&mut self, event: Notice<'_>) {
        if let Notice::ExecutionStarted = event {
            self.fair = false;
        }
        self.strategy.observe(event);
    }

    fn fair_by_itself(&self) -> bool {
        true
    }

    fn follows_steps(&self) -> bool {
        self.strategy.follows_steps()
    }

    fn wants_state(&self) -> bool {
        !self.imposing() && self.strategy.wants_state()
    }

    fn state_reached(&mut self, key: Option<blake3::Hash>) -> bool {
        self.strategy.state_reached(key)
    }

    fn states_done(&self) -> bool {
        self.imposing() || self.strategy.states_done()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::PctScheduler;
    use crate::sched::tests::views;

    /// Keeps the first thread forever: starves every other one.
    struct First;

    impl Scheduler for First {
        fn choose(
            &mut self,
            enabled: &[ThreadView],
            _current: Option<ThreadId>,
            _step: u64,
        ) -> Result<ThreadId, ScheduleError> {
            Ok(enabled[0].id)
        }
        fn choose_value(&mut self, _bound: u64, _step: u64) -> Result<u64, ScheduleError> {
            Ok(0)
        }
    }

    #[test]
    fn a_strategy_that_starves_a_thread_is_made_fair_past_the_limit() {
        let mut fair = Fair::new(Box::new(First));
        fair.observe(Notice::ExecutionStarted);
        let enabled = views(&[0, 1, 2]);
        assert_eq!(fair.choose(&enabled, Some(0), 1).unwrap(), 0);
        fair.go_fair();
        let mut current = 0;
        let mut ran = Vec::new();
        for step in 2..5 {
            current = fair.choose(&enabled, Some(current), step).unwrap();
            ran.push(current);
        }
        assert_eq!(ran, [1, 2, 0]);
        // A new execution starts unfair again.
        fair.observe(Notice::ExecutionStarted);
        assert_eq!(fair.choose(&enabled, Some(2), 1).unwrap(), 0);
    }

    #[test]
    fn no_decisions_are_committed_to_while_fairness_is_imposed() {
        let mut fair = Fair::new(Box::new(PctScheduler::new(1, 3, 100)));
        fair.observe(Notice::ExecutionStarted);
        let enabled = views(&[0, 1]);
        fair.go_fair();
        assert_eq!(fair.keeps(&enabled, 0, 1, 10), 0);
    }
}
