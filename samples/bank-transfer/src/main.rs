//! A bank whose accounts each have their own lock. `transfer` withdraws
//! from one account and deposits into the other in two critical sections,
//! so an `audit` that reads both balances (each under its lock) between the
//! two sees money missing: access pattern 8, W_transfer(a) R_audit(a)
//! R_audit(b) W_transfer(b), on the atomic set {a, b} (the total is the
//! invariant).
//!
//! With the argument `correct`, transfers and audits hold the bank's lock.
use std::sync::{Arc, Mutex};
use std::thread;
use weft_guest::{atomic_set, thread_name, unit_of_work};

/// Both balances, each behind its own lock, laid out together so that they
/// form one atomic set.
struct Bank {
    balances: [Mutex<i64>; 2],
    /// Taken by the correct version around whole operations.
    whole: Mutex<()>,
}

impl Bank {
    fn transfer(&self, from: usize, to: usize, amount: i64, correct: bool) {
        unit_of_work("Bank::transfer", || {
            let _whole = correct.then(|| self.whole.lock().unwrap());
            *self.balances[from].lock().unwrap() -= amount;
            *self.balances[to].lock().unwrap() += amount;
        })
    }

    fn audit(&self, correct: bool) -> i64 {
        unit_of_work("Bank::audit", || {
            let _whole = correct.then(|| self.whole.lock().unwrap());
            let a = *self.balances[0].lock().unwrap();
            let b = *self.balances[1].lock().unwrap();
            a + b
        })
    }
}

fn main() {
    let correct = std::env::args().nth(1).as_deref() == Some("correct");
    let bank = Arc::new(Bank {
        balances: [Mutex::new(100), Mutex::new(50)],
        whole: Mutex::new(()),
    });
    // The set is the two balances (each Mutex<i64> holds its lock word
    // before its value; lock words are never counted as set accesses).
    atomic_set("balances", &bank.balances);
    let teller = {
        let bank = Arc::clone(&bank);
        thread::spawn(move || {
            thread_name("teller");
            bank.transfer(0, 1, 30, correct);
        })
    };
    let auditor = {
        let bank = Arc::clone(&bank);
        thread::spawn(move || {
            thread_name("auditor");
            bank.audit(correct)
        })
    };
    teller.join().unwrap();
    let total = auditor.join().unwrap();
    println!("audited total {total}");
}
