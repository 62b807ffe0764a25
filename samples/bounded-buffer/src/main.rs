//! A bounded buffer guarded by one mutex and ONE condition variable, woken
//! with `notify_one`. With two consumers and one producer a consumer's
//! notification can reach the other consumer instead of the producer; then
//! every thread waits (Cargill's bounded-buffer deadlock).
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

struct BoundedBuffer {
    items: Mutex<VecDeque<u32>>,
    changed: Condvar,
    capacity: usize,
}

impl BoundedBuffer {
    fn new(capacity: usize) -> Self {
        BoundedBuffer {
            items: Mutex::new(VecDeque::new()),
            changed: Condvar::new(),
            capacity,
        }
    }

    fn put(&self, item: u32) {
        let mut items = self.items.lock().unwrap();
        while items.len() == self.capacity {
            items = self.changed.wait(items).unwrap();
        }
        items.push_back(item);
        self.changed.notify_one();
    }

    fn take(&self) -> u32 {
        let mut items = self.items.lock().unwrap();
        while items.is_empty() {
            items = self.changed.wait(items).unwrap();
        }
        let item = items.pop_front().unwrap();
        self.changed.notify_one();
        item
    }
}

const ITEMS_PER_CONSUMER: u32 = 3;

fn main() {
    let buffer = Arc::new(BoundedBuffer::new(1));
    let consumers: Vec<_> = (0..2)
        .map(|_| {
            let buffer = Arc::clone(&buffer);
            thread::spawn(move || (0..ITEMS_PER_CONSUMER).map(|_| buffer.take()).sum::<u32>())
        })
        .collect();
    for item in 1..=2 * ITEMS_PER_CONSUMER {
        buffer.put(item);
    }
    let total: u32 = consumers.into_iter().map(|c| c.join().unwrap()).sum();
    println!("consumed total: {total}");
    assert_eq!(total, (1..=2 * ITEMS_PER_CONSUMER).sum::<u32>());
}
