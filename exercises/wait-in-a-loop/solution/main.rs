//! Reference solution: the reader waits in a loop that checks, under the
//! lock, whether the report is there; the writer sets it under the same
//! lock before it signals. (`Condvar::wait_while` is the same loop.)
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
    let mut report = REPORT.lock().unwrap();
    while report.is_none() {
        report = PUBLISHED.wait(report).unwrap();
    }
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
