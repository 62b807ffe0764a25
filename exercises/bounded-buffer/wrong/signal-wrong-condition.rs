//! Wrong: `put` notifies `NOT_FULL` where it means `NOT_EMPTY` (a copy
//! and paste from `take`): a consumer waiting for an item is never woken.
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::thread;

const SLOTS: usize = 1;
const ITEMS: i32 = 2; // per producer and per consumer

static BUFFER: Mutex<VecDeque<i32>> = Mutex::new(VecDeque::new());
static NOT_FULL: Condvar = Condvar::new();
static NOT_EMPTY: Condvar = Condvar::new();

/// Puts `item` into the buffer, waiting while it is full.
fn put(item: i32) {
    let mut buffer = BUFFER.lock().unwrap();
    while buffer.len() == SLOTS {
        buffer = NOT_FULL.wait(buffer).unwrap();
    }
    buffer.push_back(item);
    NOT_FULL.notify_one();
}

/// Takes the oldest item out of the buffer, waiting while it is empty.
fn take() -> i32 {
    let mut buffer = BUFFER.lock().unwrap();
    while buffer.is_empty() {
        buffer = NOT_EMPTY.wait(buffer).unwrap();
    }
    let item = buffer.pop_front().expect("took from an empty buffer");
    NOT_FULL.notify_one();
    item
}

fn main() {
    let consumers: Vec<_> = (0..2)
        .map(|_| thread::spawn(|| (0..ITEMS).map(|_| take()).sum::<i32>()))
        .collect();
    let producers: Vec<_> = [100, 200]
        .into_iter()
        .map(|base| thread::spawn(move || (0..ITEMS).for_each(|i| put(base + i))))
        .collect();
    for p in producers {
        p.join().unwrap();
    }
    let total: i32 = consumers.into_iter().map(|c| c.join().unwrap()).sum();
    println!("total: {total}");
    assert_eq!(total, 100 + 101 + 200 + 201, "an item was lost");
}
