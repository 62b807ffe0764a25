//! Clock slots: which entry of the vector clocks stands for which thread.
//!
//! A vector clock has one entry per slot, not per thread: a thread created
//! after another one ended and was joined takes over the ended thread's
//! slot, as ThreadSanitizer reuses the slots of joined threads. So a
//! program that creates 20,000 short-lived threads, a few alive at a time,
//! has clocks of a few entries, not of 20,000.
//!
//! Taking over a slot treats the two threads as one thread's two epochs,
//! and is sound when every access of the ended thread happens before the
//! new thread starts: the creator's clock has reached the ended thread's
//! last access in that slot (it joined the thread, or learnt of a thread
//! that did). The new thread starts past every time the ended thread had,
//! so no clock that learnt only of the ended thread orders the new one's
//! accesses. A slot whose thread nobody has learnt the end of (a detached
//! thread, say) is not taken over.
//!
//! An access is remembered by its slot and time; [`ClockSlots::thread_at`]
//! names the thread that made it, for reports.

use crate::trace::ThreadId;
use crate::trace::clock::VectorClock;

/// An entry of the vector clocks.
pub type Slot = ThreadId;

/// How many of the most recently ended threads a new thread may take the
/// slot of: a bound on the work of a spawn when many threads ended that
/// their creator never joined.
const CANDIDATES: usize = 32;

/// A slot whose thread ended.
#[derive(Clone, Copy, Debug)]
struct Ended {
    slot: Slot,
    /// The slot's time at the thread's last access: a creator whose clock
    /// has reached it knows every access the thread made.
    last_access: u32,
    /// The slot's time at the thread's end, the greatest any clock holds.
    last_time: u32,
}

/// The slots of one execution's threads.
#[derive(Debug, Default)]
pub struct ClockSlots {
    /// Each thread's slot, by thread id ([`NONE`] for a thread not seen).
    by_thread: Vec<Slot>,
    /// The threads each slot stood for, oldest first, each with the
    /// slot's first time as its: the first `used`; the others are earlier
    /// executions', kept for their memory.
    owners: Vec<Vec<(u32, ThreadId)>>,
    /// How many slots this execution uses.
    used: usize,
    /// The slots whose thread ended, in the order they ended.
    ended: Vec<Ended>,
    /// Whether slots are never taken over: every thread has one of its own
    /// (the reference the tests compare with).
    #[cfg(test)]
    no_reuse: bool,
}

/// The slot of a thread not seen yet.
const NONE: Slot = Slot::MAX;

impl ClockSlots {
    /// Back to an execution's start, keeping the memory: the main thread
    /// (0) has slot 0.
    pub fn reset(&mut self) {
        self.by_thread.clear();
        for owners in &mut self.owners[..self.used] {
            owners.clear();
        }
        self.used = 0;
        self.ended.clear();
        self.fresh(0);
    }

    /// The slot of `thread`, a fresh one if it has none yet (a thread the
    /// detector sees before its creation).
    #[inline]
    pub fn of(&mut self, thread: ThreadId) -> Slot {
        match self.by_thread.get(thread as usize) {
            Some(&slot) if slot != NONE => slot,
            _ => self.fresh(thread),
        }
    }

    /// The slot for `child`, created by a thread whose clock is `creator`,
    /// and the time the child starts at in it: the slot of an ended thread
    /// whose every access the creator knows of, if one of the last few to
    /// end is, else a slot no thread had.
    pub fn for_child(&mut self, child: ThreadId, creator: &VectorClock) -> (Slot, u32) {
        let known = self
            .ended
            .iter()
            .rev()
            .take(CANDIDATES)
            .position(|ended| creator.get(ended.slot) >= ended.last_access);
        #[cfg(test)]
        let known = known.filter(|_| !self.no_reuse);
        match known {
            Some(back) => {
                let ended = self.ended.remove(self.ended.len() - 1 - back);
                let start = ended.last_time + 1;
                self.owners[ended.slot as usize].push((start, child));
                self.assign(child, ended.slot);
                (ended.slot, start)
            }
            None => (self.fresh(child), 1),
        }
    }

    /// The thread in `slot` ended: its last access was at `last_access`
    /// and its clock's own entry is `last_time`.
    pub fn ended(&mut self, slot: Slot, last_access: u32, last_time: u32) {
        self.ended.push(Ended {
            slot,
            last_access,
            last_time,
        });
    }

    /// The thread that stood for `slot` at `time`.
    pub fn thread_at(&self, slot: Slot, time: u32) -> ThreadId {
        let owners = &self.owners[slot as usize];
        let after = owners.partition_point(|&(first, _)| first <= time);
        owners[after.saturating_sub(1)].1
    }

    /// How many slots the execution used so far.
    #[cfg(test)]
    pub fn used(&self) -> usize {
        self.used
    }

    /// A slot no thread had, for `thread`.
    fn fresh(&mut self, thread: ThreadId) -> Slot {
        if self.used == self.owners.len() {
            self.owners.push(Vec::new());
        }
        let slot = self.used as Slot;
        self.used += 1;
        self.owners[slot as usize].push((0, thread));
        self.assign(thread, slot);
        slot
    }

    fn assign(&mut self, thread: ThreadId, slot: Slot) {
        let at = thread as usize;
        if self.by_thread.len() <= at {
            self.by_thread.resize(at + 1, NONE);
        }
        self.by_thread[at] = slot;
    }
}

#[cfg(test)]
impl ClockSlots {
    /// Slots that are never taken over.
    pub fn without_reuse() -> Self {
        let mut slots = ClockSlots {
            no_reuse: true,
            ..ClockSlots::default()
        };
        slots.reset();
        slots
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(entries: &[(Slot, u32)]) -> VectorClock {
        let mut clock = VectorClock::default();
        for &(slot, time) in entries {
            clock.set(slot, time);
        }
        clock
    }

    #[test]
    fn threads_take_fresh_slots_in_order_until_one_ends() {
        let mut slots = ClockSlots::default();
        slots.reset();
        assert_eq!(slots.of(0), 0);
        assert_eq!(slots.for_child(1, &clock(&[(0, 1)])), (1, 1));
        assert_eq!(slots.for_child(2, &clock(&[(0, 2)])), (2, 1));
        assert_eq!(slots.of(2), 2);
        assert_eq!(slots.used(), 3);
    }

    #[test]
    fn a_joined_threads_slot_is_taken_over_past_its_last_time() {
        let mut slots = ClockSlots::default();
        slots.reset();
        slots.for_child(1, &clock(&[(0, 1)]));
        // Thread 1 accessed memory last at its time 4 and ended at 5.
        slots.ended(1, 4, 5);
        // A creator that never learnt of thread 1's last access: a new slot.
        assert_eq!(slots.for_child(2, &clock(&[(0, 2), (1, 3)])), (2, 1));
        // One that joined it: slot 1, from time 6.
        assert_eq!(slots.for_child(3, &clock(&[(0, 3), (1, 4)])), (1, 6));
        assert_eq!(slots.of(3), 1);
        // Accesses are named by the thread of their time.
        assert_eq!((slots.thread_at(1, 5), slots.thread_at(1, 6)), (1, 3));
        assert_eq!(slots.used(), 3);
    }

    #[test]
    fn a_reset_gives_every_thread_its_id_again() {
        let mut slots = ClockSlots::default();
        slots.reset();
        slots.for_child(1, &clock(&[(0, 1)]));
        slots.ended(1, 1, 2);
        slots.for_child(2, &clock(&[(0, 2), (1, 1)]));
        slots.reset();
        assert_eq!(slots.for_child(1, &clock(&[(0, 1)])), (1, 1));
        assert_eq!(slots.for_child(2, &clock(&[(0, 1)])), (2, 1));
    }
}
