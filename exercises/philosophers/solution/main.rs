//! Reference solution: every philosopher picks up the lower-numbered fork
//! first. The forks are then taken in one order by everyone, so no cycle of
//! philosophers each holding a fork the next one needs can form.
use std::sync::{Barrier, Mutex};
use std::thread;

const PHILOSOPHERS: usize = 3;

static FORKS: [Mutex<()>; PHILOSOPHERS] = [Mutex::new(()), Mutex::new(()), Mutex::new(())];
static MEALS: [Mutex<u32>; PHILOSOPHERS] = [Mutex::new(0), Mutex::new(0), Mutex::new(0)];
/// The philosophers sit down together.
static TABLE: Barrier = Barrier::new(PHILOSOPHERS);

/// Philosopher `me` picks up the forks on both sides, eats, and puts them
/// down.
fn dine(me: usize) {
    let left = me;
    let right = (me + 1) % PHILOSOPHERS;
    let _first = FORKS[left.min(right)].lock().unwrap();
    let _second = FORKS[left.max(right)].lock().unwrap();
    *MEALS[me].lock().unwrap() += 1;
}

fn main() {
    let philosophers: Vec<_> = (0..PHILOSOPHERS)
        .map(|me| {
            thread::spawn(move || {
                TABLE.wait();
                dine(me)
            })
        })
        .collect();
    for p in philosophers {
        p.join().unwrap();
    }
    for meals in &MEALS {
        assert_eq!(*meals.lock().unwrap(), 1, "a philosopher did not eat");
    }
    println!("everyone ate");
}
