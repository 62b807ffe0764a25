//! Wrong: never holds two locks, so it cannot deadlock, but between the
//! withdrawal and the deposit the money is in neither account, and the
//! auditor can count it then.
use std::sync::Mutex;
use std::thread;

const START: i32 = 100;
const AMOUNT: i32 = 10;

static ACCOUNTS: [Mutex<i32>; 2] = [Mutex::new(START), Mutex::new(START)];

/// Moves `amount` from one account to the other. Nobody may ever see the
/// money in neither account, or in both.
fn transfer(from: usize, to: usize, amount: i32) {
    *ACCOUNTS[from].lock().unwrap() -= amount;
    *ACCOUNTS[to].lock().unwrap() += amount;
}

fn clerk(from: usize) {
    transfer(from, 1 - from, AMOUNT);
}

/// Counts the money, holding both accounts so that none moves meanwhile.
fn auditor() {
    let first = ACCOUNTS[0].lock().unwrap();
    let second = ACCOUNTS[1].lock().unwrap();
    let total = *first + *second;
    drop(second);
    drop(first);
    assert_eq!(total, 2 * START, "the auditor counted the wrong total");
}

fn main() {
    let clerks: Vec<_> = (0..2).map(|from| thread::spawn(move || clerk(from))).collect();
    let audit = thread::spawn(auditor);
    for c in clerks {
        c.join().unwrap();
    }
    audit.join().unwrap();
    let balances = [*ACCOUNTS[0].lock().unwrap(), *ACCOUNTS[1].lock().unwrap()];
    println!("balances: {balances:?}");
    assert_eq!(balances[0] + balances[1], 2 * START);
}
