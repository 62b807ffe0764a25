//! Random scheduling: at every scheduling point, any enabled thread runs
//! next with equal probability.
//!
//! Simple and effective for bugs that need few preemptions at common points;
//! weak for bugs that need one specific thread to run for a long stretch
//! (PCT covers those).

use super::{ScheduleError, Scheduler, ThreadView};
use crate::trace::ThreadId;
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Uniformly random choice among the enabled threads, from a seeded PCG.
#[derive(Debug)]
pub struct RandomScheduler {
    /// Generator; its state is the whole strategy state.
    rng: Pcg64Mcg,
}

impl RandomScheduler {
    /// A scheduler whose choices are determined by `seed`.
    pub fn new(seed: u64) -> Self {
        RandomScheduler {
            rng: Pcg64Mcg::seed_from_u64(seed),
        }
    }
}

impl Scheduler for RandomScheduler {
    fn begin_execution(&mut self) {}

    fn thread_created(&mut self, _id: ThreadId) {}

    fn choose(
        &mut self,
        enabled: &[ThreadView],
        _current: Option<ThreadId>,
        _step: u64,
    ) -> Result<ThreadId, ScheduleError> {
        let pick = (self.rng.next_u64() % enabled.len() as u64) as usize;
        Ok(enabled[pick].id)
    }

    fn choose_value(&mut self, bound: u64, _step: u64) -> Result<u64, ScheduleError> {
        Ok(super::value_in(self.rng.next_u64(), bound))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::views;

    #[test]
    fn same_seed_same_choices_and_all_threads_chosen() {
        let enabled = views(&[0, 1, 2]);
        let run = |seed| {
            let mut s = RandomScheduler::new(seed);
            (0..64)
                .map(|i| s.choose(&enabled, None, i).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        let choices = run(7);
        for id in 0..3 {
            assert!(choices.contains(&id));
        }
    }
}
