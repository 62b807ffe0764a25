//! Probabilistic concurrency testing (PCT), after Burckhardt, Kothari,
//! Musuvathi and Nagarakatte, "A Randomized Scheduler with Probabilistic
//! Guarantees of Finding Bugs", ASPLOS 2010.
//!
//! Every thread gets a random priority; the enabled thread with the highest
//! priority always runs. At `d - 1` change points, chosen uniformly among the
//! first `k` steps, the running thread's priority drops below every initial
//! priority (the `i`-th change point gives priority `i`). For a bug of depth
//! `d` in a program with `n` threads and `k` steps, one execution finds it
//! with probability at least `1 / (n * k^(d-1))`.
//!
//! Where weft departs from the paper:
//! - `k` is not known in advance: it starts from an estimate and grows to the
//!   longest execution seen so far (as the explorer runs more executions).
//! - Threads created during the execution get a random priority among the
//!   initial ones when they are created.
//! - The scheduler is consulted only where two or more threads can run; a
//!   change point that falls between two such decisions takes effect at the
//!   next one, on the thread that is running then.
//! - A thread that runs only to let time pass (it yields, sleeps or times
//!   out, or spins on one atomic word) drops below every other thread when
//!   chosen, so that a polling loop of the highest-priority thread cannot
//!   starve the others.
//! - With one step per library call ([`PctScheduler::blocking_gives_way`]),
//!   a thread that blocks (on a lock another thread holds, a condition, a
//!   join) gives way in the same way: once it can run again, it is below
//!   every thread that did not block. Inside the library a thread spins on
//!   a held lock's word before it blocks, and that spin made it give way
//!   (as above); with library calls as steps it blocks at once, and
//!   without this rule PCT would lose the priority change that finds bugs
//!   such as the bounded buffer's lost notification in the first
//!   executions.
//! - PCT is not fair: an execution that reaches the step limit goes on
//!   round-robin ([`super::Fair`]), so that a thread starved by its
//!   priority is not reported as a livelock.

use super::{Notice, ScheduleError, Scheduler, ThreadView};
use crate::trace::ThreadId;
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::collections::HashMap;

/// Priorities at or above this value are initial priorities; below it are
/// the ones change points and yields assign.
const INITIAL_BASE: i64 = 1 << 40;

/// The PCT strategy.
#[derive(Debug)]
pub struct PctScheduler {
    rng: Pcg64Mcg,
    /// Bug depth `d` (>= 1): `d - 1` change points per execution.
    depth: u32,
    /// Estimate of `k`, the number of steps of an execution; never below 1.
    max_steps: u64,
    /// This execution's change points, ascending; the `i`-th (from 0) gives
    /// priority `i + 1`.
    change_points: Vec<u64>,
    /// Index of the next change point not yet passed.
    next_change: usize,
    /// Current priority of every thread created in this execution.
    priority: HashMap<ThreadId, i64>,
    /// Lowest priority handed out so far (for yielding threads).
    lowest: i64,
    /// Whether a thread that blocks gives way.
    blocking_gives_way: bool,
    /// The thread that ran last: when it is not enabled at the next
    /// decision, it blocked (or exited).
    running: Option<ThreadId>,
}

impl PctScheduler {
    /// A PCT scheduler with bug depth `depth` (at least 1), a first estimate
    /// of the execution length `max_steps`, and choices determined by `seed`.
    pub fn new(seed: u64, depth: u32, max_steps: u64) -> Self {
        PctScheduler {
            rng: Pcg64Mcg::seed_from_u64(seed),
            depth: depth.max(1),
            max_steps: max_steps.max(1),
            change_points: Vec::new(),
            next_change: 0,
            priority: HashMap::new(),
            lowest: 0,
            blocking_gives_way: false,
            running: None,
        }
    }

    /// This scheduler, where a thread that blocks drops below every other
    /// thread (see the module's doc): for programs whose library calls are
    /// one step each.
    pub fn blocking_gives_way(self, gives_way: bool) -> Self {
        PctScheduler {
            blocking_gives_way: gives_way,
            ..self
        }
    }

    /// Gives thread `id` the lowest priority yet.
    fn give_way(&mut self, id: ThreadId) {
        self.lowest -= 1;
        self.priority.insert(id, self.lowest);
    }

    fn highest(&self, enabled: &[ThreadView]) -> ThreadView {
        *enabled
            .iter()
            .max_by_key(|t| self.priority.get(&t.id).copied().unwrap_or(i64::MIN))
            .expect("enabled is never empty")
    }
}

impl Scheduler for PctScheduler {
    fn choose(
        &mut self,
        enabled: &[ThreadView],
        current: Option<ThreadId>,
        step: u64,
    ) -> Result<ThreadId, ScheduleError> {
        while let Some(&point) = self.change_points.get(self.next_change) {
            if point > step {
                break;
            }
            if let Some(current) = current {
                self.priority.insert(current, self.next_change as i64 + 1);
            }
            self.next_change += 1;
        }
        if let (true, None, Some(blocked)) = (self.blocking_gives_way, current, self.running) {
            self.give_way(blocked);
        }
        let mut chosen = self.highest(enabled);
        if chosen.yielding && enabled.iter().any(|t| !t.yielding) {
            self.give_way(chosen.id);
            chosen = self.highest(enabled);
        }
        self.running = Some(chosen.id);
        Ok(chosen.id)
    }

    /// Priorities change only at change points (and when a yielding thread
    /// gives way, which the runtime rules out while decisions are
    /// committed): the running thread, the highest, stays the highest until
    /// the next change point.
    fn keeps(&mut self, _enabled: &[ThreadView], _current: ThreadId, step: u64, max: u64) -> u64 {
        match self.change_points.get(self.next_change) {
            Some(&point) => point.saturating_sub(step + 1).min(max),
            None => max,
        }
    }

    fn choose_value(&mut self, bound: u64, _step: u64) -> Result<u64, ScheduleError> {
        Ok(super::value_in(self.rng.next_u64(), bound))
    }

    fn observe(&mut self, event: Notice<'_>) {
        match event {
            Notice::ExecutionStarted => {
                self.priority.clear();
                self.change_points = (1..self.depth)
                    .map(|_| 1 + self.rng.next_u64() % self.max_steps)
                    .collect();
                self.change_points.sort_unstable();
                self.next_change = 0;
                self.lowest = 0;
                self.running = None;
            }
            Notice::ThreadImposed { chosen, .. } => self.running = Some(chosen),
            Notice::ThreadCreated(id) => {
                let priority = INITIAL_BASE + (self.rng.next_u64() >> 24) as i64;
                self.priority.insert(id, priority);
            }
            // An execution that had to go fair says nothing of how long
            // the program's executions are.
            Notice::ExecutionEnded {
                steps,
                went_fair: false,
            } => self.max_steps = self.max_steps.max(steps),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::views;

    #[test]
    fn depth_one_runs_one_thread_until_it_blocks() {
        let mut s = PctScheduler::new(3, 1, 100);
        s.observe(Notice::ExecutionStarted);
        s.observe(Notice::ThreadCreated(0));
        s.observe(Notice::ThreadCreated(1));
        let first = s.choose(&views(&[0, 1]), Some(0), 1).unwrap();
        for step in 2..50 {
            assert_eq!(s.choose(&views(&[0, 1]), Some(first), step).unwrap(), first);
        }
    }

    #[test]
    fn change_point_lets_the_other_thread_run() {
        // With depth 2 and k = 10 the single change point lies in 1..=10.
        let mut s = PctScheduler::new(11, 2, 10);
        s.observe(Notice::ExecutionStarted);
        s.observe(Notice::ThreadCreated(0));
        s.observe(Notice::ThreadCreated(1));
        let first = s.choose(&views(&[0, 1]), Some(0), 0).unwrap();
        let switched =
            (1..=10).any(|step| s.choose(&views(&[0, 1]), Some(first), step).unwrap() != first);
        assert!(switched);
    }

    #[test]
    fn yielding_highest_thread_gives_way() {
        let mut s = PctScheduler::new(5, 1, 10);
        s.observe(Notice::ExecutionStarted);
        s.observe(Notice::ThreadCreated(0));
        s.observe(Notice::ThreadCreated(1));
        let first = s.choose(&views(&[0, 1]), None, 0).unwrap();
        let other = 1 - first;
        let enabled = [
            ThreadView {
                id: first,
                yielding: true,
                polling: false,
                wakes_at: None,
                next: None,
                locks_held: 0,
                starting: false,
            },
            ThreadView {
                id: other,
                yielding: false,
                polling: false,
                wakes_at: None,
                next: None,
                locks_held: 0,
                starting: false,
            },
        ];
        assert_eq!(s.choose(&enabled, Some(first), 1).unwrap(), other);
    }

    #[test]
    fn a_thread_that_blocked_gives_way_where_library_calls_are_steps() {
        for gives_way in [false, true] {
            let mut s = PctScheduler::new(5, 1, 100).blocking_gives_way(gives_way);
            s.observe(Notice::ExecutionStarted);
            s.observe(Notice::ThreadCreated(0));
            s.observe(Notice::ThreadCreated(1));
            let first = s.choose(&views(&[0, 1]), None, 0).unwrap();
            let other = 1 - first;
            // The first thread blocks: the other runs, then the first can
            // run again.
            assert_eq!(s.choose(&views(&[other]), None, 1).unwrap(), other);
            let next = s.choose(&views(&[0, 1]), Some(other), 2).unwrap();
            assert_eq!(next, if gives_way { other } else { first });
        }
    }

    #[test]
    fn committed_decisions_stop_before_the_next_change_point() {
        let enabled = views(&[0, 1]);
        let mut s = PctScheduler::new(9, 3, 100);
        s.observe(Notice::ExecutionStarted);
        s.observe(Notice::ThreadCreated(0));
        s.observe(Notice::ThreadCreated(1));
        let first = s.change_points[0];
        let chosen = s.choose(&enabled, Some(0), 1).unwrap();
        assert_eq!(s.keeps(&enabled, chosen, 1, 1000), first.saturating_sub(2));
        assert_eq!(
            s.keeps(&enabled, chosen, 1, 3),
            3.min(first.saturating_sub(2))
        );
        // Past the last change point the run is bounded only by `max`.
        s.next_change = s.change_points.len();
        assert_eq!(s.keeps(&enabled, chosen, 500, 77), 77);
    }
}
