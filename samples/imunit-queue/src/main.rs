//! The running example of IMUnit: a bounded blocking queue and its test
//! `testTakeWithAdd`, written with events instead of sleeps, once per
//! intent (run them with `weft test`).
//!
//! addThread: `add(1)`, event `finishedAdd1`, event `startingAdd2`, `add(2)`,
//! event `finishedAdd2`. main: starts addThread, event `startingTake1`,
//! `take() == 1`, event `startingTake2`, `take() == 2`, join.
//!
//! - `take_with_add_blocking`: "the second take blocks on the empty queue
//!   before the second add", the schedule
//!   `finishedAdd1 -> startingTake1, [startingTake2] -> startingAdd2`.
//! - `take_with_add_non_blocking`: "nothing ever blocks", the schedule
//!   `finishedAdd1 -> startingTake1, finishedAdd2 -> startingTake2`.
//!
//! Without its schedule each test is flaky: its check of the queue when the
//! second take starts depends on whether add(2) came first.
//! `take_with_add_sleep` is the original test the paper migrated: the
//! blocking intent, ordered by sleeps (flaky under weft's schedules, and
//! the input of `weft infer-schedule`).
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;
use weft_guest::{Test, event, run_tests, thread_name};

struct BoundedQueue {
    items: Mutex<VecDeque<u32>>,
    changed: Condvar,
    capacity: usize,
}

impl BoundedQueue {
    fn new(capacity: usize) -> Self {
        BoundedQueue {
            items: Mutex::new(VecDeque::new()),
            changed: Condvar::new(),
            capacity,
        }
    }

    fn add(&self, item: u32) {
        let mut items = self.items.lock().unwrap();
        while items.len() == self.capacity {
            items = self.changed.wait(items).unwrap();
        }
        items.push_back(item);
        self.changed.notify_all();
    }

    fn take(&self) -> u32 {
        let mut items = self.items.lock().unwrap();
        while items.is_empty() {
            items = self.changed.wait(items).unwrap();
        }
        let item = items.pop_front().unwrap();
        self.changed.notify_all();
        item
    }

    fn len(&self) -> usize {
        self.items.lock().unwrap().len()
    }
}

/// How the test makes its threads take turns.
#[derive(Clone, Copy)]
enum Style {
    /// The original test: sleeps (main 20 ms, addThread 40 ms after its
    /// first add), flaky.
    Sleep,
    /// Events, ordered by the test's schedule.
    Events,
}

impl Style {
    fn pause(self, millis: u64) {
        if let Style::Sleep = self {
            thread::sleep(Duration::from_millis(millis));
        }
    }

    fn mark(self, name: &str) {
        if let Style::Events = self {
            event(name);
        }
    }
}

/// Runs the test body; returns whether the queue was empty when the second
/// take started.
fn take_with_add(style: Style) -> bool {
    let queue = Arc::new(BoundedQueue::new(1));
    let add_thread = {
        let queue = Arc::clone(&queue);
        thread::spawn(move || {
            thread_name("addThread");
            queue.add(1);
            style.mark("finishedAdd1");
            style.pause(40);
            style.mark("startingAdd2");
            queue.add(2);
            style.mark("finishedAdd2");
        })
    };
    style.pause(20);
    style.mark("startingTake1");
    assert_eq!(queue.take(), 1);
    style.mark("startingTake2");
    let empty_before_second_take = queue.len() == 0;
    assert_eq!(queue.take(), 2);
    add_thread.join().unwrap();
    empty_before_second_take
}

/// The original, sleep-based test of the blocking intent.
fn take_with_add_sleep() {
    assert!(
        take_with_add(Style::Sleep),
        "the second take did not find the queue empty"
    );
}

fn take_with_add_blocking() {
    assert!(
        take_with_add(Style::Events),
        "the second take did not find the queue empty"
    );
}

fn take_with_add_non_blocking() {
    assert!(
        !take_with_add(Style::Events),
        "the second take found the queue empty"
    );
}

fn main() {
    run_tests(&[
        Test {
            name: "take_with_add_sleep",
            run: take_with_add_sleep,
            schedules: &[],
        },
        Test {
            name: "take_with_add_blocking",
            run: take_with_add_blocking,
            schedules: &["finishedAdd1 -> startingTake1, [startingTake2] -> startingAdd2"],
        },
        Test {
            name: "take_with_add_non_blocking",
            run: take_with_add_non_blocking,
            schedules: &["finishedAdd1 -> startingTake1, finishedAdd2 -> startingTake2"],
        },
    ]);
}
