// printing.rs with the total kept in a shared cell that the threads update
// without a lock.
use std::cell::UnsafeCell;
use std::thread;

struct Total(UnsafeCell<u64>);

// Claims a safety it does not have: the threads below update it unlocked.
unsafe impl Sync for Total {}

static TOTAL: Total = Total(UnsafeCell::new(0));

fn main() {
    let workers: Vec<_> = (1..=2u64)
        .map(|id| {
            thread::spawn(move || {
                println!("worker {id} starting");
                let sum: u64 = (1..=10).map(|i| i * id).sum();
                unsafe { *TOTAL.0.get() += sum } // RACE on TOTAL
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    println!("total {}", unsafe { *TOTAL.0.get() });
}
