//! Vector clocks and epochs, as FastTrack uses them (Flanagan and Freund,
//! "FastTrack: Efficient and Precise Dynamic Race Detection", PLDI 2009).

use crate::trace::ThreadId;

/// A logical time of every thread, by thread id; threads beyond its length
/// are at time 0.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct VectorClock(Vec<u32>);

impl Clone for VectorClock {
    fn clone(&self) -> Self {
        VectorClock(self.0.clone())
    }

    /// Keeps `self`'s allocation (the derived one would not).
    fn clone_from(&mut self, source: &Self) {
        self.0.clone_from(&source.0);
    }
}

impl VectorClock {
    /// Every thread back at time 0, keeping the allocation.
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// The time of `thread`.
    #[inline]
    pub fn get(&self, thread: ThreadId) -> u32 {
        self.0.get(thread as usize).copied().unwrap_or(0)
    }

    /// Sets the time of `thread`.
    pub fn set(&mut self, thread: ThreadId, time: u32) {
        let slot = thread as usize;
        if self.0.len() <= slot {
            self.0.resize(slot + 1, 0);
        }
        self.0[slot] = time;
    }

    /// Advances `thread` by one.
    #[inline]
    pub fn tick(&mut self, thread: ThreadId) {
        match self.0.get_mut(thread as usize) {
            Some(time) => *time += 1,
            None => self.set(thread, 1),
        }
    }

    /// Takes in everything `other` knows: the pointwise maximum.
    pub fn join(&mut self, other: &VectorClock) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (mine, theirs) in self.0.iter_mut().zip(&other.0) {
            *mine = (*mine).max(*theirs);
        }
    }

    /// Whether every time of `self` is at most the one of `other`: all that
    /// `self` records happened before `other`'s present.
    #[inline]
    pub fn happened_before(&self, other: &VectorClock) -> bool {
        self.0
            .iter()
            .enumerate()
            .all(|(thread, &time)| time <= other.get(thread as ThreadId))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_and_order() {
        let mut a = VectorClock::default();
        a.set(0, 3);
        let mut b = VectorClock::default();
        b.set(1, 2);
        assert!(!a.happened_before(&b) && !b.happened_before(&a));
        b.join(&a);
        assert_eq!((b.get(0), b.get(1), b.get(7)), (3, 2, 0));
        assert!(a.happened_before(&b));
        b.tick(1);
        assert!(!b.happened_before(&a));
    }
}
