//! A fixed-capacity list whose `add` stores the element and bumps the size
//! in two critical sections. Two concurrent adds can both write the same
//! slot before either bumps the size: one element is lost and the size
//! says two. Access pattern 1 on `size` and pattern 6 on {slot, size}
//! (inconsistent state left), on the atomic set {size, elements}.
//!
//! With the argument `correct`, `add` does both under one lock.
use std::sync::{Arc, Mutex};
use std::thread;
use weft_guest::{atomic_set, thread_name, unit_of_work};

struct Items {
    size: usize,
    elements: [u32; 8],
}

struct List {
    items: Mutex<Items>,
}

impl List {
    fn add(&self, value: u32, correct: bool) {
        unit_of_work("List::add", || {
            if correct {
                let mut items = self.items.lock().unwrap();
                let at = items.size;
                items.elements[at] = value;
                items.size = at + 1;
                return;
            }
            let at = {
                let mut items = self.items.lock().unwrap();
                let at = items.size;
                items.elements[at] = value;
                at
            };
            self.items.lock().unwrap().size = at + 1;
        })
    }
}

fn main() {
    let correct = std::env::args().nth(1).as_deref() == Some("correct");
    let list = Arc::new(List {
        items: Mutex::new(Items {
            size: 0,
            elements: [0; 8],
        }),
    });
    atomic_set("list", &*list.items.lock().unwrap());
    let adders: Vec<_> = (1..=2)
        .map(|value| {
            let list = Arc::clone(&list);
            thread::spawn(move || {
                thread_name(if value == 1 { "adder1" } else { "adder2" });
                list.add(value, correct);
            })
        })
        .collect();
    for adder in adders {
        adder.join().unwrap();
    }
    let items = list.items.lock().unwrap();
    println!(
        "size {} elements {:?}",
        items.size,
        &items.elements[..items.size]
    );
}
