//! A counter shared between threads, in two versions: one whose increment
//! is a load and a store (two threads can lose an update), one behind a
//! mutex.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A counter whose increment reads the count, then writes it plus one.
#[derive(Default)]
pub struct LoadStoreCounter(AtomicUsize);

impl LoadStoreCounter {
    /// Adds one; another thread's increment in between is lost.
    pub fn increment(&self) {
        let seen = self.0.load(Ordering::SeqCst);
        self.0.store(seen + 1, Ordering::SeqCst);
    }

    /// The count.
    pub fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// A counter whose increment holds a lock.
#[derive(Default)]
pub struct LockedCounter(Mutex<usize>);

impl LockedCounter {
    /// Adds one.
    pub fn increment(&self) {
        *self.0.lock().unwrap() += 1;
    }

    /// The count.
    pub fn get(&self) -> usize {
        *self.0.lock().unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::{LoadStoreCounter, LockedCounter};
    use std::thread;

    /// Two threads that call `increment` twice each.
    fn two_threads_increment_twice(increment: impl Fn() + Sync) {
        thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    increment();
                    increment();
                });
            }
        });
    }

    #[test]
    fn the_locked_counter_counts_every_increment() {
        let counter = LockedCounter::default();
        two_threads_increment_twice(|| counter.increment());
        assert_eq!(counter.get(), 4);
    }

    #[test]
    fn the_load_store_counter_counts_every_increment() {
        let counter = LoadStoreCounter::default();
        two_threads_increment_twice(|| counter.increment());
        assert_eq!(counter.get(), 4);
    }
}
