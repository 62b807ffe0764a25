//! The classes under test: small blocking synchronizers of the kind the
//! JSR-166 TCK tests, built on `Mutex` and `Condvar`.
use std::sync::{Condvar, Mutex};

/// Lets threads wait until a count reaches zero.
pub struct CountDownLatch {
    count: Mutex<u32>,
    zero: Condvar,
}

impl CountDownLatch {
    pub fn new(count: u32) -> Self {
        CountDownLatch {
            count: Mutex::new(count),
            zero: Condvar::new(),
        }
    }

    pub fn count(&self) -> u32 {
        *self.count.lock().unwrap()
    }

    pub fn count_down(&self) {
        let mut count = self.count.lock().unwrap();
        *count = count.saturating_sub(1);
        if *count == 0 {
            self.zero.notify_all();
        }
    }

    /// Blocks until the count is zero.
    pub fn wait(&self) {
        let mut count = self.count.lock().unwrap();
        while *count > 0 {
            count = self.zero.wait(count).unwrap();
        }
    }
}

/// A barrier for a fixed number of parties that can say how many wait.
pub struct CyclicBarrier {
    parties: u32,
    state: Mutex<BarrierState>,
    tripped: Condvar,
}

struct BarrierState {
    waiting: u32,
    generation: u64,
}

impl CyclicBarrier {
    pub fn new(parties: u32) -> Self {
        CyclicBarrier {
            parties,
            state: Mutex::new(BarrierState {
                waiting: 0,
                generation: 0,
            }),
            tripped: Condvar::new(),
        }
    }

    /// How many parties are waiting at the barrier now.
    pub fn waiting(&self) -> u32 {
        self.state.lock().unwrap().waiting
    }

    /// Waits until every party arrived; returns the arrival index (the
    /// last to arrive gets 0).
    pub fn wait(&self) -> u32 {
        let mut state = self.state.lock().unwrap();
        let generation = state.generation;
        state.waiting += 1;
        let index = self.parties - state.waiting;
        if state.waiting == self.parties {
            state.waiting = 0;
            state.generation += 1;
            self.tripped.notify_all();
            return index;
        }
        while state.generation == generation {
            state = self.tripped.wait(state).unwrap();
        }
        index
    }
}

/// A lock whose acquisition can be cancelled from another thread, like
/// `lockInterruptibly` and `Thread.interrupt`.
pub struct CancellableLock {
    state: Mutex<LockState>,
    changed: Condvar,
}

struct LockState {
    held: bool,
    queued: u32,
    cancelled: bool,
}

/// The acquisition was cancelled.
#[derive(Debug, PartialEq, Eq)]
pub struct Cancelled;

impl CancellableLock {
    pub fn new() -> Self {
        CancellableLock {
            state: Mutex::new(LockState {
                held: false,
                queued: 0,
                cancelled: false,
            }),
            changed: Condvar::new(),
        }
    }

    pub fn lock(&self) {
        let mut state = self.state.lock().unwrap();
        while state.held {
            state = self.changed.wait(state).unwrap();
        }
        state.held = true;
    }

    /// Acquires the lock unless [`CancellableLock::cancel`] is called first.
    pub fn lock_cancellable(&self) -> Result<(), Cancelled> {
        let mut state = self.state.lock().unwrap();
        state.queued += 1;
        while state.held && !state.cancelled {
            state = self.changed.wait(state).unwrap();
        }
        state.queued -= 1;
        if state.cancelled {
            state.cancelled = false;
            return Err(Cancelled);
        }
        state.held = true;
        Ok(())
    }

    /// Whether some thread waits to acquire the lock.
    pub fn has_queued_threads(&self) -> bool {
        self.state.lock().unwrap().queued > 0
    }

    /// Cancels the pending acquisitions.
    pub fn cancel(&self) {
        self.state.lock().unwrap().cancelled = true;
        self.changed.notify_all();
    }

    pub fn unlock(&self) {
        self.state.lock().unwrap().held = false;
        self.changed.notify_all();
    }
}

/// A counting semaphore.
pub struct Semaphore {
    permits: Mutex<u32>,
    released: Condvar,
}

impl Semaphore {
    pub fn new(permits: u32) -> Self {
        Semaphore {
            permits: Mutex::new(permits),
            released: Condvar::new(),
        }
    }

    pub fn acquire(&self) {
        let mut permits = self.permits.lock().unwrap();
        while *permits == 0 {
            permits = self.released.wait(permits).unwrap();
        }
        *permits -= 1;
    }

    pub fn try_acquire(&self) -> bool {
        let mut permits = self.permits.lock().unwrap();
        if *permits == 0 {
            return false;
        }
        *permits -= 1;
        true
    }

    pub fn release(&self) {
        *self.permits.lock().unwrap() += 1;
        self.released.notify_one();
    }
}
