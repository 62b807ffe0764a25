//! A correct program: worker threads start together at a barrier, bump a
//! counter behind a mutex, append to a log behind a read-write lock, and
//! sleep a little between rounds. The final counts always add up.
use std::sync::{Arc, Barrier, Mutex, RwLock};
use std::thread;
use std::time::Duration;

const WORKERS: u32 = 3;
const ROUNDS: u32 = 4;

fn main() {
    let counter = Arc::new(Mutex::new(0u32));
    let log = Arc::new(RwLock::new(Vec::new()));
    let start = Arc::new(Barrier::new(WORKERS as usize));
    let workers: Vec<_> = (0..WORKERS)
        .map(|id| {
            let (counter, log, start) =
                (Arc::clone(&counter), Arc::clone(&log), Arc::clone(&start));
            thread::spawn(move || {
                start.wait();
                for round in 0..ROUNDS {
                    *counter.lock().unwrap() += 1;
                    log.write().unwrap().push((id, round));
                    let seen = log.read().unwrap().len();
                    assert!(seen >= 1);
                    thread::sleep(Duration::from_millis(1));
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let count = *counter.lock().unwrap();
    let entries = log.read().unwrap().len() as u32;
    println!("count = {count}, log entries = {entries}");
    assert_eq!(count, WORKERS * ROUNDS);
    assert_eq!(entries, WORKERS * ROUNDS);
}
