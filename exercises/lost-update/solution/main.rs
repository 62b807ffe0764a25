//! Reference solution: the balance lives in a `Mutex`, locked around the
//! whole read-modify-write.
use std::sync::Mutex;
use std::thread;

const TELLERS: i32 = 2;
const DEPOSITS: i32 = 2;
const AMOUNT: i32 = 10;

static BALANCE: Mutex<i32> = Mutex::new(100);

fn deposit(amount: i32) {
    let mut balance = BALANCE.lock().unwrap();
    *balance += amount;
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
