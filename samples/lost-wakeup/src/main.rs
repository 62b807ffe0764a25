//! The main thread starts a worker and then waits for its "done" signal on a
//! condition variable, but it never checks the flag: when the worker
//! finishes and notifies before the main thread waits, the notification is
//! lost and the main thread waits forever.
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

fn main() {
    let done = Arc::new((Mutex::new(false), Condvar::new()));
    let worker = {
        let done = Arc::clone(&done);
        thread::spawn(move || {
            let result: u64 = (1..=100).sum();
            let (flag, signal) = &*done;
            *flag.lock().unwrap() = true;
            signal.notify_one();
            result
        })
    };
    let (flag, signal) = &*done;
    let guard = flag.lock().unwrap();
    // BUG: should be `while !*guard { guard = signal.wait(guard).unwrap(); }`
    let guard = signal.wait(guard).unwrap();
    drop(guard);
    println!("worker result: {}", worker.join().unwrap());
}
