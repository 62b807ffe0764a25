//! Wrong: the reader waits in a loop, but the writer signals before it
//! publishes. A reader woken by that signal finds nothing, waits again, and
//! no second signal comes.
use std::sync::{Condvar, Mutex};
use std::thread;

/// The report, once there is one.
static REPORT: Mutex<Option<i32>> = Mutex::new(None);
static PUBLISHED: Condvar = Condvar::new();

/// Makes `value` the report and wakes the reader if it waits.
fn publish(value: i32) {
    PUBLISHED.notify_one();
    *REPORT.lock().unwrap() = Some(value);
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
