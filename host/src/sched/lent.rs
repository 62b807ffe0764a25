//! Lending a strategy to one execution and taking it back, typed.
//!
//! The runtime owns the scheduler of the execution it runs, as a
//! `Box<dyn Scheduler>`, and drops it at the end. A search that learns from
//! what its strategy recorded (the systematic ones read its log) lends the
//! strategy instead: [`lend`] gives the runtime a [`Lent`] handle that
//! passes every call on, and the [`Loan`] returns the strategy with its
//! type once the runtime has dropped the handle. No strategy is told apart
//! by its type at run time.

use super::{Notice, ScheduleError, Scheduler, ThreadView};
use crate::trace::ThreadId;
use std::cell::RefCell;
use std::rc::Rc;

/// The runtime's handle on a lent strategy.
pub struct Lent<S>(Rc<RefCell<S>>);

/// The lender's claim on a lent strategy.
pub struct Loan<S>(Rc<RefCell<S>>);

/// Lends `strategy`: the handle for the runtime, and the claim that takes
/// it back.
pub fn lend<S: Scheduler>(strategy: S) -> (Lent<S>, Loan<S>) {
    let shared = Rc::new(RefCell::new(strategy));
    (Lent(Rc::clone(&shared)), Loan(shared))
}

impl<S> Loan<S> {
    /// The strategy, once the handle is dropped; `None` while the runtime
    /// still holds it.
    pub fn take_back(self) -> Option<S> {
        Rc::into_inner(self.0).map(RefCell::into_inner)
    }
}

impl<S: Scheduler> Scheduler for Lent<S> {
    fn choose(
        &mut self,
        enabled: &[ThreadView],
        current: Option<ThreadId>,
        step: u64,
    ) -> Result<ThreadId, ScheduleError> {
        self.0.borrow_mut().choose(enabled, current, step)
    }

    fn choose_value(&mut self, bound: u64, step: u64) -> Result<u64, ScheduleError> {
        self.0.borrow_mut().choose_value(bound, step)
    }

    fn keeps(&mut self, enabled: &[ThreadView], current: ThreadId, step: u64, max: u64) -> u64 {
        self.0.borrow_mut().keeps(enabled, current, step, max)
    }

    fn observe(&mut self, event: Notice<'_>) {
        self.0.borrow_mut().observe(event);
    }

    fn fair_by_itself(&self) -> bool {
        self.0.borrow().fair_by_itself()
    }

    fn follows_steps(&self) -> bool {
        self.0.borrow().follows_steps()
    }

    fn wants_state(&self) -> bool {
        self.0.borrow().wants_state()
    }

    fn state_reached(&mut self, key: Option<blake3::Hash>) -> bool {
        self.0.borrow_mut().state_reached(key)
    }

    fn states_done(&self) -> bool {
        self.0.borrow().states_done()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::RandomScheduler;

    #[test]
    fn a_lent_strategy_comes_back_only_when_the_handle_is_gone() {
        let (lent, loan) = lend(RandomScheduler::new(7));
        let held: Box<dyn Scheduler> = Box::new(lent);
        assert!(held.fair_by_itself());
        drop(held);
        assert!(loan.take_back().is_some());

        let (lent, loan) = lend(RandomScheduler::new(7));
        let _still_held = lent;
        assert!(loan.take_back().is_none());
    }
}
