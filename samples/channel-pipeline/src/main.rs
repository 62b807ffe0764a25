//! A correct program: a producer sends numbers through a channel to a
//! squaring stage, which forwards the squares to a summing consumer. The
//! channels carry all the synchronisation, so the sum is always right.
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::thread;

const COUNT: u64 = 8;

fn main() {
    let forwarded = Arc::new(AtomicU32::new(0));
    let (numbers_tx, numbers_rx) = mpsc::channel::<u64>();
    let (squares_tx, squares_rx) = mpsc::sync_channel::<u64>(2);
    let producer = thread::spawn(move || {
        for n in 1..=COUNT {
            numbers_tx.send(n).unwrap();
        }
    });
    let squarer = {
        let forwarded = Arc::clone(&forwarded);
        thread::spawn(move || {
            for n in numbers_rx {
                squares_tx.send(n * n).unwrap();
                forwarded.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let sum: u64 = squares_rx.iter().sum();
    producer.join().unwrap();
    squarer.join().unwrap();
    println!("sum of squares = {sum}");
    assert_eq!(sum, (1..=COUNT).map(|n| n * n).sum::<u64>());
    assert_eq!(forwarded.load(Ordering::Relaxed) as u64, COUNT);
}
