//! A correct program that shares plain data through every synchronisation
//! primitive of Rust's standard library: `Mutex`, `RwLock`, `Condvar`,
//! `Once`, `OnceLock`, `mpsc` channels, `Barrier` and `Arc`. No access
//! races: a race detector must stay silent.
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Condvar, Mutex, Once, OnceLock, RwLock};
use std::thread;

const WORKERS: usize = 3;

static SETUP: Once = Once::new();
static mut SETUP_VALUE: u32 = 0;
static CONFIG: OnceLock<Vec<u32>> = OnceLock::new();

fn setup_value() -> u32 {
    // SAFETY: written once inside `call_once`, read after it returns.
    SETUP.call_once(|| unsafe { SETUP_VALUE = 7 });
    unsafe { SETUP_VALUE }
}

fn main() {
    let counter = Arc::new(Mutex::new(0u32));
    let table = Arc::new(RwLock::new(vec![0u32; WORKERS]));
    let mailbox = Arc::new((Mutex::new(None::<u32>), Condvar::new()));
    let barrier = Arc::new(Barrier::new(WORKERS));
    let (sender, receiver) = mpsc::channel();
    let workers: Vec<_> = (0..WORKERS)
        .map(|id| {
            let (counter, table) = (Arc::clone(&counter), Arc::clone(&table));
            let (mailbox, barrier) = (Arc::clone(&mailbox), Arc::clone(&barrier));
            let sender = sender.clone();
            thread::spawn(move || {
                let base = setup_value();
                let config = CONFIG.get_or_init(|| vec![1, 2, 3]);
                *counter.lock().unwrap() += base;
                table.write().unwrap()[id] = config[id % config.len()];
                barrier.wait();
                // After the barrier every slot is written.
                let sum: u32 = table.read().unwrap().iter().sum();
                sender.send(sum).unwrap();
                if id == 0 {
                    let (slot, changed) = &*mailbox;
                    *slot.lock().unwrap() = Some(sum);
                    changed.notify_all();
                }
            })
        })
        .collect();
    drop(sender);
    let (slot, changed) = &*mailbox;
    let mut got = slot.lock().unwrap();
    while got.is_none() {
        got = changed.wait(got).unwrap();
    }
    let boxed = got.take().unwrap();
    drop(got);
    let sums: Vec<u32> = receiver.iter().collect();
    for worker in workers {
        worker.join().unwrap();
    }
    assert_eq!(sums.len(), WORKERS);
    assert!(sums.iter().all(|&s| s == 6));
    assert_eq!(boxed, 6);
    assert_eq!(*counter.lock().unwrap(), 7 * WORKERS as u32);
    println!("sums {sums:?}, counter {}", counter.lock().unwrap());
}
