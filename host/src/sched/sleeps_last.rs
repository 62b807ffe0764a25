//! Random scheduling that lets a sleeping thread wake only when no other
//! thread can run, and then the one due first: the schedules a sleep-based
//! test was written for (on a real machine a 50 ms sleep outlasts
//! everything the other threads do). Schedule inference logs executions
//! under it.

use super::{ScheduleError, Scheduler, ThreadView};
use crate::trace::ThreadId;
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Uniform choice among the threads that are not yielding or sleeping; when
/// every enabled thread is, among those due to wake first (or that yield
/// with no wake-up time).
#[derive(Debug)]
pub struct SleepsLastScheduler {
    rng: Pcg64Mcg,
}

impl SleepsLastScheduler {
    /// A scheduler whose choices are determined by `seed`.
    pub fn new(seed: u64) -> Self {
        SleepsLastScheduler {
            rng: Pcg64Mcg::seed_from_u64(seed),
        }
    }
}

impl Scheduler for SleepsLastScheduler {
    fn choose(
        &mut self,
        enabled: &[ThreadView],
        _current: Option<ThreadId>,
        _step: u64,
    ) -> Result<ThreadId, ScheduleError> {
        let busy: Vec<ThreadId> = enabled
            .iter()
            .filter(|t| !t.yielding)
            .map(|t| t.id)
            .collect();
        let pool: Vec<ThreadId> = if busy.is_empty() {
            let first = enabled.iter().filter_map(|t| t.wakes_at).min();
            enabled
                .iter()
                .filter(|t| t.wakes_at.is_none() || t.wakes_at == first)
                .map(|t| t.id)
                .collect()
        } else {
            busy
        };
        Ok(pool[(self.rng.next_u64() % pool.len() as u64) as usize])
    }

    /// Random among the threads that work; one that only lets time pass
    /// waits until nothing else can run, past the step limit too (schedule
    /// inference needs the sleeps to keep their order).
    fn fair_by_itself(&self) -> bool {
        true
    }

    fn choose_value(&mut self, bound: u64, _step: u64) -> Result<u64, ScheduleError> {
        Ok(super::value_in(self.rng.next_u64(), bound))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleepers_run_only_when_nothing_else_can_and_the_first_due_first() {
        let mut s = SleepsLastScheduler::new(3);
        let view = |id, yielding, wakes_at| ThreadView {
            id,
            yielding,
            polling: false,
            wakes_at,
            next: None,
            locks_held: 0,
            starting: false,
        };
        let mixed = [view(0, true, Some(50)), view(1, false, None)];
        for step in 0..100 {
            assert_eq!(s.choose(&mixed, None, step).unwrap(), 1);
        }
        let sleepers = [view(0, true, Some(100)), view(1, true, Some(50))];
        for step in 0..100 {
            assert_eq!(s.choose(&sleepers, None, step).unwrap(), 1, "due first");
        }
    }
}
