//! Sticky random scheduling: the running thread keeps running, and at each
//! scheduling point another thread takes over with a fixed chance, as under
//! an operating system, where a thread holds its core for a while before
//! another gets it. When the running thread cannot go on (it blocked or
//! ended) or yields, another enabled thread is drawn uniformly (a yielding
//! thread runs on only when no other can).
//!
//! With a small chance, calls in two threads seldom overlap unless a test
//! places them where they must, closer to how tests run under the JVM's or
//! the OS's scheduler (as in CovCon's evaluation). With a chance of one
//! half among two threads it switches as often as
//! [`super::RandomScheduler`]. A small chance may keep a spinning thread
//! running for long stretches, so at the step limit it goes round-robin
//! ([`super::Fair`]), as PCT and POS do: a spin lock is never
//! reported as a livelock for want of a switch.

use super::{ScheduleError, Scheduler, ThreadView, keeper};
use crate::trace::ThreadId;
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Keeps the running thread, switching with a fixed chance per point.
#[derive(Debug)]
pub struct StickyScheduler {
    /// Generator.
    rng: Pcg64Mcg,
    /// The chance of a switch at a scheduling point, scaled to `u64::MAX`.
    threshold: u64,
}

impl StickyScheduler {
    /// A scheduler whose choices are determined by `seed`, switching at a
    /// scheduling point with chance `switch` (clamped to 0..=1).
    pub fn new(seed: u64, switch: f64) -> Self {
        StickyScheduler {
            rng: Pcg64Mcg::seed_from_u64(seed),
            threshold: (switch.clamp(0.0, 1.0) * u64::MAX as f64) as u64,
        }
    }
}

impl Scheduler for StickyScheduler {
    fn choose(
        &mut self,
        enabled: &[ThreadView],
        current: Option<ThreadId>,
        _step: u64,
    ) -> Result<ThreadId, ScheduleError> {
        let kept = keeper(enabled, current);
        if let Some(kept) = kept
            && (enabled.len() == 1 || self.rng.next_u64() >= self.threshold)
        {
            return Ok(kept);
        }
        // A switch, or the running thread cannot go on: another enabled
        // thread, if there is one.
        let mut others: Vec<ThreadId> = enabled
            .iter()
            .map(|t| t.id)
            .filter(|&id| Some(id) != current)
            .collect();
        if others.is_empty() {
            others = enabled.iter().map(|t| t.id).collect();
        }
        Ok(others[(self.rng.next_u64() % others.len() as u64) as usize])
    }

    fn choose_value(&mut self, bound: u64, _step: u64) -> Result<u64, ScheduleError> {
        Ok(super::value_in(self.rng.next_u64(), bound))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::views;
    use crate::sched::{Fair, Notice};

    /// How often the running thread changes over `steps` points among
    /// `threads` threads that all stay enabled.
    fn switches(switch: f64, threads: u32, steps: u64) -> u64 {
        let enabled = views(&(0..threads).collect::<Vec<_>>());
        let mut s = StickyScheduler::new(5, switch);
        let mut current = 0;
        let mut count = 0;
        for step in 0..steps {
            let chosen = s.choose(&enabled, Some(current), step).unwrap();
            count += u64::from(chosen != current);
            current = chosen;
        }
        count
    }

    #[test]
    fn the_running_thread_switches_at_about_the_chance_given() {
        assert_eq!(switches(0.0, 3, 10_000), 0);
        assert_eq!(switches(1.0, 3, 10_000), 10_000);
        let some = switches(0.01, 3, 100_000);
        assert!((800..1200).contains(&some), "{some} switches");
    }

    #[test]
    fn a_thread_that_cannot_go_on_is_replaced() {
        let mut s = StickyScheduler::new(1, 0.0);
        // Thread 0 ran and is no longer enabled: one of the others runs.
        let enabled = views(&[1, 2]);
        let chosen = s.choose(&enabled, Some(0), 0).unwrap();
        assert!([1, 2].contains(&chosen));
        // A yielding thread gives way even with no chance of a switch.
        let mut enabled = views(&[0, 1]);
        enabled[0].yielding = true;
        assert_eq!(s.choose(&enabled, Some(0), 1).unwrap(), 1);
    }

    #[test]
    fn after_going_fair_every_enabled_thread_runs_in_turn() {
        // A chance so small that thread 0 would keep running.
        let mut s = Fair::new(Box::new(StickyScheduler::new(2, 1e-12)));
        s.observe(Notice::ExecutionStarted);
        let enabled = views(&[0, 1, 2]);
        assert_eq!(s.choose(&enabled, Some(0), 0).unwrap(), 0);
        s.go_fair();
        let mut current = 0;
        let mut ran = Vec::new();
        for step in 1..4 {
            current = s.choose(&enabled, Some(current), step).unwrap();
            ran.push(current);
        }
        ran.sort_unstable();
        assert_eq!(ran, vec![0, 1, 2]);
        // A new execution starts sticky again.
        s.observe(Notice::ExecutionStarted);
        assert_eq!(s.choose(&enabled, Some(0), 0).unwrap(), 0);
    }
}
