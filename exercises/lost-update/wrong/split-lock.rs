//! Wrong: the balance lives in a `Mutex`, but the lock is let go between
//! reading it and writing it back.
use std::sync::Mutex;
use std::thread;

const TELLERS: i32 = 2;
const DEPOSITS: i32 = 2;
const AMOUNT: i32 = 10;

static BALANCE: Mutex<i32> = Mutex::new(100);

fn deposit(amount: i32) {
    let seen = *BALANCE.lock().unwrap();
    *BALANCE.lock().unwrap() = seen + amount;
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
    let balance = *BALANCE.lock().unwrap();
    println!("balance = {balance}");
    assert_eq!(balance, 100 + TELLERS * DEPOSITS * AMOUNT, "a deposit was lost");
}
