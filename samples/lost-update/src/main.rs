//! A shared counter bumped by several threads with a separate atomic load and
//! store instead of one read-modify-write: two threads can read the same value
//! and one increment is lost.
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;

const THREADS: u32 = 2;
const INCREMENTS: u32 = 10;

fn main() {
    let counter = Arc::new(AtomicU32::new(0));
    let workers: Vec<_> = (0..THREADS)
        .map(|_| {
            let counter = Arc::clone(&counter);
            thread::spawn(move || {
                for _ in 0..INCREMENTS {
                    let seen = counter.load(Ordering::Acquire);
                    counter.store(seen + 1, Ordering::Release);
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let total = counter.load(Ordering::Acquire);
    println!("counter = {total}");
    assert_eq!(total, THREADS * INCREMENTS, "lost an update");
}
