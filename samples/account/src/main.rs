//! AssetFuzzer's Account: every method locks the account, but the copy
//! "constructor" reads the other account's checking and savings balances
//! in two separate calls. When `credit_interest` updates both balances in
//! between, the copy mixes the old checking balance with the new savings
//! balance: access pattern 9, R_copy(checking) W_credit(checking)
//! W_credit(savings) R_copy(savings). Nothing crashes; `weft
//! serializability` reports it.
//!
//! Run with the argument `correct` for the correct copy, which reads both
//! balances under one lock and is never reported.
use std::sync::{Arc, Mutex};
use std::thread;
use weft_guest::{atomic_set, thread_name, unit_of_work};

/// The two balances, bound by one consistency property (their sum only
/// changes by interest or transfers): one atomic set.
struct Balances {
    checking: i64,
    savings: i64,
}

/// An account whose methods each lock it, like a class whose methods are
/// all `synchronized`.
struct Account {
    balances: Mutex<Balances>,
}

impl Account {
    fn new(checking: i64, savings: i64) -> Self {
        Account {
            balances: Mutex::new(Balances { checking, savings }),
        }
    }

    fn checking(&self) -> i64 {
        unit_of_work("Account::checking", || {
            self.balances.lock().unwrap().checking
        })
    }

    fn savings(&self) -> i64 {
        unit_of_work("Account::savings", || self.balances.lock().unwrap().savings)
    }

    /// The copy constructor: not atomic.
    fn copy_of(other: &Account) -> Account {
        unit_of_work("Account::copy_of", || {
            let checking = other.checking();
            let savings = other.savings();
            Account::new(checking, savings)
        })
    }

    /// The correct copy: one critical section.
    fn atomic_copy_of(other: &Account) -> Account {
        unit_of_work("Account::atomic_copy_of", || {
            let balances = other.balances.lock().unwrap();
            Account::new(balances.checking, balances.savings)
        })
    }

    fn credit_interest(&self, percent: i64) {
        unit_of_work("Account::credit_interest", || {
            let mut balances = self.balances.lock().unwrap();
            balances.checking += balances.checking * percent / 100;
            balances.savings += balances.savings * percent / 100;
        })
    }

    fn total(&self) -> i64 {
        let balances = self.balances.lock().unwrap();
        balances.checking + balances.savings
    }
}

fn main() {
    let correct = std::env::args().nth(1).as_deref() == Some("correct");
    let x = Arc::new(Account::new(1000, 2000));
    atomic_set("x", &*x.balances.lock().unwrap());
    let copier = {
        let x = Arc::clone(&x);
        thread::spawn(move || {
            thread_name("copier");
            let copy = if correct {
                Account::atomic_copy_of(&x)
            } else {
                Account::copy_of(&x)
            };
            copy.total()
        })
    };
    let creditor = {
        let x = Arc::clone(&x);
        thread::spawn(move || {
            thread_name("creditor");
            x.credit_interest(10);
        })
    };
    let copied = copier.join().unwrap();
    creditor.join().unwrap();
    // Either before or after the interest, never a mix (3000 or 3300)...
    // but nothing checks it, as in the paper: the checker does.
    println!("copy total {copied}, account total {}", x.total());
}
