//! Following a planned prefix of choices, around any strategy.
//!
//! The systematic searches run each execution along choices they planned
//! from the executions before it, then let their strategy go on.
//! [`Prefixed`] follows the plan for any strategy, reports the first choice
//! the execution no longer fits (the program is not deterministic under its
//! choices), and tells the strategy of every choice it made
//! ([`Notice::ThreadImposed`], [`Notice::ValueImposed`]) so that its log stays
//! whole.

use super::{Notice, ScheduleError, Scheduler, ThreadView};
use crate::trace::ThreadId;

/// A choice the search makes for an execution: the thread that runs at a
/// decision, or the value a guest draws (`weft.choose`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// The thread that runs.
    Thread(ThreadId),
    /// The value drawn.
    Value(u64),
}

/// The choices to make first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Threads at the first decisions; every guest value is the
    /// strategy's.
    Threads(Vec<ThreadId>),
    /// Threads and values, in the order the execution makes them.
    Choices(Vec<Choice>),
}

impl Plan {
    /// The choice planned at `index`, if the plan reaches that far.
    fn get(&self, index: usize) -> Option<Choice> {
        match self {
            Plan::Threads(threads) => threads.get(index).copied().map(Choice::Thread),
            Plan::Choices(choices) => choices.get(index).copied(),
        }
    }
}

/// A strategy that makes the choices of a plan first.
#[derive(Debug)]
pub struct Prefixed<S> {
    plan: Plan,
    /// Index of the next planned choice.
    next: usize,
    strategy: S,
}

impl<S: Scheduler> Prefixed<S> {
    /// `strategy`, after the choices of `plan`.
    pub fn new(plan: Plan, strategy: S) -> Self {
        Prefixed {
            plan,
            next: 0,
            strategy,
        }
    }

    /// The plan.
    #[cfg(test)]
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The strategy that goes on after the plan.
    pub fn strategy(&self) -> &S {
        &self.strategy
    }

    /// The planned choice that comes next, if the plan is not over; values
    /// are not counted when only threads are planned.
    fn planned(&self) -> Option<Choice> {
        self.plan.get(self.next)
    }
}

impl<S: Scheduler> Scheduler for Prefixed<S> {
    fn choose(
        &mut self,
        enabled: &[ThreadView],
        current: Option<ThreadId>,
        step: u64,
    ) -> Result<ThreadId, ScheduleError> {
        let index = self.next;
        match self.planned() {
            None => self.strategy.choose(enabled, current, step),
            Some(Choice::Thread(expected)) => {
                let chosen = super::follow(expected, enabled, index, step)?;
                self.next += 1;
                self.strategy.observe(Notice::ThreadImposed {
                    enabled,
                    current,
                    step,
                    chosen,
                    fair: false,
                });
                Ok(chosen)
            }
            Some(Choice::Value(_)) => Err(ScheduleError::ValueDiverged {
                index,
                step,
                problem: "threads were to be chosen where the search planned a value".into(),
            }),
        }
    }

    fn choose_value(&mut self, bound: u64, step: u64) -> Result<u64, ScheduleError> {
        let index = self.next;
        match (&self.plan, self.planned()) {
            (Plan::Threads(_), _) | (_, None) => self.strategy.choose_value(bound, step),
            (_, Some(Choice::Value(value))) if bound == 0 || value < bound => {
                self.next += 1;
                self.strategy
                    .observe(Notice::ValueImposed { bound, step, value });
                Ok(value)
            }
            (_, Some(planned)) => Err(ScheduleError::ValueDiverged {
                index,
                step,
                problem: format!("the search planned {planned:?} for a value in 0..{bound}"),
            }),
        }
    }

    fn keeps(&mut self, enabled: &[ThreadView], current: ThreadId, step: u64, max: u64) -> u64 {
        if self.planned().is_some() {
            return 0;
        }
        self.strategy.keeps(enabled, current, step, max)
    }

    fn observe(&mut self, event: Notice<'_>) {
        match event {
            Notice::ExecutionStarted => self.next = 0,
            // A decision made above this wrapper (for fairness) takes the
            // planned one's place.
            Notice::ThreadImposed { .. } if self.planned().is_some() => self.next += 1,
            _ => {}
        }
        self.strategy.observe(event);
    }

    fn fair_by_itself(&self) -> bool {
        self.strategy.fair_by_itself()
    }

    fn follows_steps(&self) -> bool {
        self.strategy.follows_steps()
    }

    fn wants_state(&self) -> bool {
        self.planned().is_none() && self.strategy.wants_state()
    }

    fn state_reached(&mut self, key: Option<blake3::Hash>) -> bool {
        self.strategy.state_reached(key)
    }

    fn states_done(&self) -> bool {
        self.strategy.states_done()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::DfsScheduler;
    use crate::sched::tests::views;

    #[test]
    fn follows_the_plan_then_lets_the_strategy_choose() {
        let mut s = Prefixed::new(Plan::Threads(vec![1, 1]), DfsScheduler::default());
        s.observe(Notice::ExecutionStarted);
        let enabled = views(&[0, 1]);
        assert_eq!(s.choose(&enabled, Some(0), 1).unwrap(), 1);
        assert_eq!(s.choose(&enabled, Some(1), 2).unwrap(), 1);
        // DFS never preempts: the current thread goes on.
        assert_eq!(s.choose(&enabled, Some(0), 3).unwrap(), 0);
        // The strategy heard of the planned decisions.
        let chosen: Vec<ThreadId> = s.strategy().log().iter().map(|d| d.chosen).collect();
        assert_eq!(chosen, [1, 1, 0]);
    }

    #[test]
    fn a_plan_that_does_not_fit_diverges() {
        let mut s = Prefixed::new(Plan::Threads(vec![5]), DfsScheduler::default());
        s.observe(Notice::ExecutionStarted);
        assert!(matches!(
            s.choose(&views(&[0, 1]), Some(0), 1),
            Err(ScheduleError::Diverged {
                decision: 0,
                expected: 5,
                ..
            })
        ));
        let mut s = Prefixed::new(
            Plan::Choices(vec![Choice::Value(3), Choice::Thread(0)]),
            DfsScheduler::default(),
        );
        s.observe(Notice::ExecutionStarted);
        assert!(matches!(
            s.choose(&views(&[0, 1]), Some(0), 1),
            Err(ScheduleError::ValueDiverged { index: 0, .. })
        ));
        assert!(matches!(
            s.choose_value(2, 1),
            Err(ScheduleError::ValueDiverged { index: 0, .. })
        ));
        assert_eq!(s.choose_value(4, 1).unwrap(), 3);
    }

    #[test]
    fn only_planned_values_are_followed() {
        // A plan of threads leaves every value to the strategy (DFS draws
        // 0), and a new execution starts the plan again.
        let mut s = Prefixed::new(Plan::Threads(vec![1]), DfsScheduler::default());
        for _ in 0..2 {
            s.observe(Notice::ExecutionStarted);
            assert_eq!(s.choose_value(10, 0).unwrap(), 0);
            assert_eq!(s.choose(&views(&[0, 1]), Some(0), 1).unwrap(), 1);
        }
    }
}
