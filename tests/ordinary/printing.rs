// Threads that print with println! and eprintln!, format strings, and
// collect their results through a Mutex and a channel.
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;

fn main() {
    let totals = Arc::new(Mutex::new(Vec::new()));
    let (sender, receiver) = mpsc::channel();
    let workers: Vec<_> = (1..=3)
        .map(|id| {
            let totals = Arc::clone(&totals);
            let sender = sender.clone();
            thread::spawn(move || {
                println!("worker {id} starting");
                let sum: u64 = (1..=10).map(|i| i * id).sum();
                let line = format!("worker {id} computed {sum}");
                eprintln!("{line}");
                totals.lock().unwrap().push(sum);
                sender.send(line.len()).unwrap();
            })
        })
        .collect();
    drop(sender);
    for worker in workers {
        worker.join().unwrap();
    }
    let lengths: usize = receiver.iter().sum();
    let total: u64 = totals.lock().unwrap().iter().sum();
    println!("total {total}, {lengths} bytes of messages");
    assert_eq!(total, 330);
}
