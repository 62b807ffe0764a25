//! Wrong: the reader checks a flag before it takes the lock, so the report
//! can be published between its check and its wait.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::thread;

/// The report, once there is one.
static REPORT: Mutex<Option<i32>> = Mutex::new(None);
static PUBLISHED: Condvar = Condvar::new();
/// Whether the report is there, to check without taking the lock.
static READY: AtomicBool = AtomicBool::new(false);

/// Makes `value` the report and wakes the reader if it waits.
fn publish(value: i32) {
    let mut report = REPORT.lock().unwrap();
    *report = Some(value);
    READY.store(true, Ordering::SeqCst);
    PUBLISHED.notify_one();
}

/// Returns the report once it is published.
fn wait_for_report() -> Option<i32> {
    if !READY.load(Ordering::SeqCst) {
        let report = REPORT.lock().unwrap();
        drop(PUBLISHED.wait(report).unwrap());
    }
    *REPORT.lock().unwrap()
}

fn main() {
    let reader = thread::spawn(wait_for_report);
    let writer = thread::spawn(|| publish(42));
    writer.join().unwrap();
    let seen = reader.join().unwrap();
    println!("the reader saw {seen:?}");
    assert_eq!(seen, Some(42), "the reader saw no report");
}
