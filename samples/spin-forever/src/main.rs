//! Each thread waits, spinning, for a flag that only the other thread sets
//! after its own wait: neither ever proceeds (a livelock that burns CPU).
use std::hint::spin_loop;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

static LEFT_READY: AtomicBool = AtomicBool::new(false);
static RIGHT_READY: AtomicBool = AtomicBool::new(false);

fn main() {
    let left = thread::spawn(|| {
        while !RIGHT_READY.load(Ordering::Acquire) {
            spin_loop();
        }
        LEFT_READY.store(true, Ordering::Release);
    });
    while !LEFT_READY.load(Ordering::Acquire) {
        spin_loop();
    }
    RIGHT_READY.store(true, Ordering::Release);
    left.join().unwrap();
}
