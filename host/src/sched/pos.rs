//! Partial order sampling (POS), after Yuan, Yang and Gu, "Partial Order
//! Aware Concurrency Sampling", CAV 2018.
//!
//! A uniformly random walk over interleavings reaches some partial orders of
//! the conflicting operations exponentially more often than others: every
//! independent operation it interleaves dilutes the chance of the rare
//! order. POS gives the next operation of every thread a random priority;
//! at each decision the thread whose operation has the highest priority
//! runs, and every other enabled thread whose next operation conflicts with
//! it (same bytes, one of them writes) draws a fresh priority, as does the
//! chosen thread's next operation. The probability of a partial order then
//! no longer shrinks with the number of independent operations around it.
//!
//! Where weft departs from the paper:
//! - Only decisions reach the scheduler: operations a thread runs while it
//!   is the only one that can run are not seen, and a thread's priority is
//!   drawn when it is next part of a decision.
//! - Operations that are not memory accesses (a spawn, a yield, a time
//!   slice, an SDK event) conflict with nothing.
//! - An execution that reaches the step limit goes on round-robin
//!   ([`super::Fair`]).

use super::{Notice, ScheduleError, Scheduler, ThreadView};
use crate::trace::ThreadId;
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// The POS strategy.
#[derive(Debug)]
pub struct PosScheduler {
    rng: Pcg64Mcg,
    /// The priority of each thread's next operation, by thread id; `None`
    /// until it is drawn (a thread's next operation after it ran).
    priority: Vec<Option<u64>>,
}

impl PosScheduler {
    /// A POS scheduler whose choices are determined by `seed`.
    pub fn new(seed: u64) -> Self {
        PosScheduler {
            rng: Pcg64Mcg::seed_from_u64(seed),
            priority: Vec::new(),
        }
    }

    /// The priority of thread `id`'s next operation, drawn if it has none.
    fn priority_of(&mut self, id: ThreadId) -> u64 {
        let slot = id as usize;
        if self.priority.len() <= slot {
            self.priority.resize(slot + 1, None);
        }
        *self.priority[slot].get_or_insert_with(|| self.rng.next_u64())
    }
}

impl Scheduler for PosScheduler {
    fn choose(
        &mut self,
        enabled: &[ThreadView],
        _current: Option<ThreadId>,
        _step: u64,
    ) -> Result<ThreadId, ScheduleError> {
        let chosen = *enabled
            .iter()
            .max_by_key(|t| (self.priority_of(t.id), t.id))
            .expect("enabled is never empty");
        if let Some(op) = chosen.next {
            for other in enabled {
                if other.id != chosen.id && other.next.is_some_and(|o| o.conflicts(&op)) {
                    self.priority[other.id as usize] = Some(self.rng.next_u64());
                }
            }
        }
        self.priority[chosen.id as usize] = None;
        Ok(chosen.id)
    }

    fn choose_value(&mut self, bound: u64, _step: u64) -> Result<u64, ScheduleError> {
        Ok(super::value_in(self.rng.next_u64(), bound))
    }

    fn observe(&mut self, event: Notice<'_>) {
        if let Notice::ExecutionStarted = event {
            self.priority.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instrument::AccessKind;
    use crate::sched::NextOp;
    use crate::sched::tests::views;

    fn at(kind: AccessKind, addr: u32) -> Option<NextOp> {
        Some(NextOp {
            kind,
            addr,
            len: 4,
            src: 0,
            site: 0,
        })
    }

    #[test]
    fn runs_the_highest_priority_and_redraws_conflicting_ones() {
        let mut pos = PosScheduler::new(3);
        pos.observe(Notice::ExecutionStarted);
        let mut enabled = views(&[0, 1, 2]);
        enabled[0].next = at(AccessKind::Store, 8);
        enabled[1].next = at(AccessKind::Store, 8);
        enabled[2].next = at(AccessKind::Load, 16);
        let before: Vec<u64> = (0..3).map(|id| pos.priority_of(id)).collect();
        let chosen = pos.choose(&enabled, None, 1).unwrap();
        let highest = (0..3).max_by_key(|&id| before[id as usize]).unwrap();
        assert_eq!(chosen, highest);
        // The chosen thread's next operation gets a new priority.
        assert_eq!(pos.priority[chosen as usize], None);
        // A store to the same word conflicts and is redrawn; the load of
        // another word keeps its priority.
        if chosen == 0 {
            assert_ne!(pos.priority[1], Some(before[1]));
        }
        if chosen != 2 {
            assert_eq!(pos.priority[2], Some(before[2]));
        }
    }

    #[test]
    fn conflicts_need_a_common_byte_and_a_write() {
        let op = |kind, addr| at(kind, addr).unwrap();
        assert!(op(AccessKind::Store, 8).conflicts(&op(AccessKind::Load, 10)));
        assert!(!op(AccessKind::Load, 8).conflicts(&op(AccessKind::AtomicLoad, 8)));
        assert!(!op(AccessKind::Store, 8).conflicts(&op(AccessKind::Store, 12)));
        assert!(op(AccessKind::Wait, 8).conflicts(&op(AccessKind::Notify, 8)));
        let copy = NextOp {
            kind: AccessKind::Copy,
            addr: 100,
            len: 16,
            src: 0,
            site: 0,
        };
        assert!(copy.conflicts(&op(AccessKind::Store, 4)));
        assert!(!copy.conflicts(&op(AccessKind::Load, 4)));
        assert!(copy.conflicts(&op(AccessKind::Load, 112)));
    }

    #[test]
    fn a_library_call_conflicts_with_calls_and_with_its_object() {
        let op = |kind, addr| at(kind, addr).unwrap();
        let lock = |mutex| NextOp {
            kind: AccessKind::Call,
            addr: 17,
            len: 0,
            src: mutex,
            site: u32::MAX,
        };
        assert!(lock(1000).conflicts(&lock(2000)));
        assert!(lock(1000).conflicts(&op(AccessKind::AtomicLoad, 1000)));
        assert!(op(AccessKind::Load, 1040).conflicts(&lock(1000)));
        assert!(!lock(1000).conflicts(&op(AccessKind::Store, 1064)));
        assert!(!op(AccessKind::Store, 996).conflicts(&lock(1000)));
    }
}
