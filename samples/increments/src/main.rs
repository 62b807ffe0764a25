//! T threads each make N increments of one shared counter, each an atomic
//! load then a store, with no assertion (updates may be lost): the logic
//! `./x bench-peers` runs in weft and, with Shuttle's types, natively.
//! Arguments: T and N (2 and 10 when not given).
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

fn main() {
    let mut numbers = std::env::args()
        .skip(1)
        .map(|arg| arg.parse::<usize>().expect("the arguments are T and N"));
    let threads = numbers.next().unwrap_or(2);
    let increments = numbers.next().unwrap_or(10);
    let counter = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let counter = Arc::clone(&counter);
            thread::spawn(move || {
                for _ in 0..increments {
                    let seen = counter.load(Ordering::SeqCst);
                    counter.store(seen + 1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
}
