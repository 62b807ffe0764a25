//! A request counter in a `static mut`, bumped by two worker threads
//! without synchronisation: the `unsafe` blocks compile, and the two
//! read-modify-writes race.
use std::thread;

static mut REQUESTS: u32 = 0;

fn handle_request() {
    // SAFETY: not really: another thread does the same at the same time.
    unsafe {
        REQUESTS += 1;
    }
}

fn main() {
    let workers: Vec<_> = (0..2)
        .map(|_| {
            thread::spawn(|| {
                for _ in 0..3 {
                    handle_request();
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    // SAFETY: every worker has been joined.
    let total = unsafe { REQUESTS };
    println!("requests: {total}");
}
