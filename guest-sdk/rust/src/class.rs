//! The driver of tests that `weft gen` generates for a thread-safe class
//! (exported functions `<prefix>_new` and `<prefix>_<method>(handle, ...)`).
//! A class module's `main` calls [`serve`]:
//!
//! ```no_run
//! fn main() {
//!     weft_guest::class::serve();
//! }
//! ```
//!
//! weft runs the module with `--weft-gen PLAN`. The plan is three phases
//! separated by `|`: a prefix the main thread runs, then two suffixes two
//! new threads run concurrently. Each phase is calls separated by `;`; a
//! call is the method's number and its arguments, separated by spaces: an
//! integer, or `rK` for the result of call `K` (calls are numbered from 0
//! across the plan). Every call is reported on stdout as
//! `weft-gen enter <phase> <call>` and `weft-gen exit <phase> <call> <value>`
//! (tab-separated), which weft reads for coverage and results.
extern crate alloc;
extern crate std;

use super::ffi;
use alloc::string::String;
use alloc::vec::Vec;
use std::sync::{Arc, Barrier, Mutex};
use std::{println, thread};

/// An argument of a planned call.
#[derive(Clone, Copy)]
enum Arg {
    Int(i64),
    Result(usize),
}

/// A planned call: its number in the plan, the method, the arguments.
#[derive(Clone)]
struct Call {
    number: usize,
    method: i32,
    args: Vec<Arg>,
}

fn parse(plan: &str) -> Vec<Vec<Call>> {
    let mut number = 0;
    plan.split('|')
        .map(|phase| {
            phase
                .split(';')
                .filter(|c| !c.trim().is_empty())
                .map(|c| {
                    let mut parts = c.split_whitespace();
                    let method = parts.next().and_then(|m| m.parse().ok()).unwrap_or(-1);
                    let args = parts
                        .map(|a| match a.strip_prefix('r') {
                            Some(k) => Arg::Result(k.parse().unwrap_or(usize::MAX)),
                            None => Arg::Int(a.parse().unwrap_or(0)),
                        })
                        .collect();
                    number += 1;
                    Call {
                        number: number - 1,
                        method,
                        args,
                    }
                })
                .collect()
        })
        .collect()
}

fn run_phase(phase: usize, calls: &[Call], results: &Mutex<Vec<i64>>) {
    for call in calls {
        let mut args = [0i64; 4];
        for (slot, arg) in args.iter_mut().zip(&call.args) {
            *slot = match *arg {
                Arg::Int(v) => v,
                Arg::Result(k) => results.lock().unwrap().get(k).copied().unwrap_or(0),
            };
        }
        println!("weft-gen\tenter\t{phase}\t{}", call.number);
        // SAFETY: a plain value call; weft checks the method number.
        let value = unsafe { ffi::gen_call(call.method, args[0], args[1], args[2], args[3]) };
        println!("weft-gen\texit\t{phase}\t{}\t{value}", call.number);
        let mut results = results.lock().unwrap();
        if results.len() <= call.number {
            results.resize(call.number + 1, 0);
        }
        results[call.number] = value;
    }
}

/// Runs the plan weft passed (`--weft-gen PLAN`); does nothing otherwise.
pub fn serve() {
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() != Some("--weft-gen") {
        return;
    }
    let plan: String = args.next().unwrap_or_default();
    let mut phases = parse(&plan).into_iter();
    let results = Arc::new(Mutex::new(Vec::new()));
    let prefix = phases.next().unwrap_or_default();
    run_phase(0, &prefix, &results);
    let suffixes: Vec<Vec<Call>> = phases.collect();
    // The suffixes start together, not one thread's head start apart.
    let gate = Arc::new(Barrier::new(suffixes.len()));
    let workers: Vec<_> = suffixes
        .into_iter()
        .enumerate()
        .map(|(i, calls)| {
            let (results, gate) = (Arc::clone(&results), Arc::clone(&gate));
            thread::spawn(move || {
                gate.wait();
                run_phase(i + 1, &calls, &results)
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
}
