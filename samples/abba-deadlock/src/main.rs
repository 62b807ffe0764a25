//! Bank transfers that lock the source account first and the destination
//! second. Two opposite transfers can each hold one lock and wait for the
//! other: the classic ABBA deadlock.
use std::sync::{Arc, Mutex};
use std::thread;

struct Account {
    balance: Mutex<i64>,
}

fn transfer(from: &Account, to: &Account, amount: i64) {
    let mut source = from.balance.lock().unwrap();
    let mut destination = to.balance.lock().unwrap();
    *source -= amount;
    *destination += amount;
}

fn main() {
    let alice = Arc::new(Account {
        balance: Mutex::new(100),
    });
    let bob = Arc::new(Account {
        balance: Mutex::new(100),
    });
    let t1 = {
        let (alice, bob) = (Arc::clone(&alice), Arc::clone(&bob));
        thread::spawn(move || transfer(&alice, &bob, 10))
    };
    let t2 = {
        let (alice, bob) = (Arc::clone(&alice), Arc::clone(&bob));
        thread::spawn(move || transfer(&bob, &alice, 20))
    };
    t1.join().unwrap();
    t2.join().unwrap();
    let total = *alice.balance.lock().unwrap() + *bob.balance.lock().unwrap();
    println!("total = {total}");
    assert_eq!(total, 200);
}
