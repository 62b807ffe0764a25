//! Wrong: the starter handed in as it is: an atomic load, then an atomic
//! store, is two steps.
use std::sync::atomic::{AtomicI32, Ordering};
use std::thread;

const TELLERS: i32 = 2;
const DEPOSITS: i32 = 2;
const AMOUNT: i32 = 10;

static BALANCE: AtomicI32 = AtomicI32::new(100);

fn deposit(amount: i32) {
    // TODO: another teller may run this at the same time.
    let seen = BALANCE.load(Ordering::SeqCst);
    BALANCE.store(seen + amount, Ordering::SeqCst);
}

fn teller() {
    for _ in 0..DEPOSITS {
        deposit(AMOUNT);
    }
}

fn main() {
    let tellers: Vec<_> = (0..TELLERS).map(|_| thread::spawn(teller)).collect();
    for t in tellers {
        t.join().unwrap();
    }
    let balance = BALANCE.load(Ordering::SeqCst);
    println!("balance = {balance}");
    assert_eq!(balance, 100 + TELLERS * DEPOSITS * AMOUNT, "a deposit was lost");
}
