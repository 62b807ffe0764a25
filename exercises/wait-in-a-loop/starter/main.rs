//! Wait in a loop: a writer thread publishes a report and a reader thread
//! waits for it. This program sometimes hangs.
//! Make `publish` and `wait_for_report` correct. Keep `main` as it is.
use std::sync::{Condvar, Mutex};
use std::thread;

/// The report, once there is one.
static REPORT: Mutex<Option<i32>> = Mutex::new(None);
static PUBLISHED: Condvar = Condvar::new();

/// Makes `value` the report and wakes the reader if it waits.
fn publish(value: i32) {
    let mut report = REPORT.lock().unwrap();
    *report = Some(value);
    PUBLISHED.notify_one();
}

/// Returns the report once it is published.
fn wait_for_report() -> Option<i32> {
    // TODO: what if the report was published before this wait began?
    let report = REPORT.lock().unwrap();
    let report = PUBLISHED.wait(report).unwrap();
    *report
}

fn main() {
    let reader = thread::spawn(wait_for_report);
    let writer = thread::spawn(|| publish(42));
    writer.join().unwrap();
    let seen = reader.join().unwrap();
    println!("the reader saw {seen:?}");
    assert_eq!(seen, Some(42), "the reader saw no report");
}
