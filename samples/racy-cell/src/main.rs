//! A statistics cell that claims to be `Sync` but guards nothing: its
//! `record` method writes through an `UnsafeCell` from every thread that
//! shares it.
use std::cell::UnsafeCell;
use std::sync::Arc;
use std::thread;

struct Stats {
    samples: UnsafeCell<u64>,
    total: UnsafeCell<u64>,
}

// SAFETY: wrong: nothing orders `record` calls from different threads.
unsafe impl Sync for Stats {}

impl Stats {
    fn record(&self, value: u64) {
        // SAFETY: wrong, see above.
        unsafe {
            *self.samples.get() += 1;
            *self.total.get() += value;
        }
    }

    fn mean(&self) -> u64 {
        // SAFETY: called after every recording thread was joined.
        unsafe { *self.total.get() / (*self.samples.get()).max(1) }
    }
}

fn main() {
    let stats = Arc::new(Stats {
        samples: UnsafeCell::new(0),
        total: UnsafeCell::new(0),
    });
    let workers: Vec<_> = (1..=2)
        .map(|id| {
            let stats = Arc::clone(&stats);
            thread::spawn(move || stats.record(id * 10))
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    println!("mean: {}", stats.mean());
}
