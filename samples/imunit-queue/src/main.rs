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
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
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

/// Runs the test body; returns whether the queue was empty when the second
/// take started.
fn take_with_add() -> bool {
    let queue = Arc::new(BoundedQueue::new(1));
    let add_thread = {
        let queue = Arc::clone(&queue);
        thread::spawn(move || {
            thread_name("addThread");
            queue.add(1);
            event("finishedAdd1");
            event("startingAdd2");
            queue.add(2);
            event("finishedAdd2");
        })
    };
    event("startingTake1");
    assert_eq!(queue.take(), 1);
    event("startingTake2");
    let empty_before_second_take = queue.len() == 0;
    assert_eq!(queue.take(), 2);
    add_thread.join().unwrap();
    empty_before_second_take
}

fn take_with_add_blocking() {
    assert!(
        take_with_add(),
        "the second take did not find the queue empty"
    );
}

fn take_with_add_non_blocking() {
    assert!(!take_with_add(), "the second take found the queue empty");
}

fn main() {
    run_tests(&[
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
