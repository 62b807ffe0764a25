//! `./x bench-peers`: executions per second of the same logic (T threads
//! each making N increments of a counter as an atomic load and a store) in
//! weft and in Shuttle, random and PCT schedules, weft with and without its
//! race check (on the module with and without its DWARF), on one core,
//! and weft's rate over Shuttle's.
//!
//! weft runs the `increments` sample (`target/samples/increments.wasm`,
//! built by `./x samples`); Shuttle runs the same code with its own types.
//! Arguments: `--budget-ms MS` (time per measurement, default 1000) and
//! `--quick` (a smaller sweep).
//!
//! The race check's cost is a ratio of two of weft's rates, so a slower
//! moment of a shared machine under one of them would show as cost: the
//! three random runs (without the check, with it, with it and without
//! DWARF) take turns in [`ROUNDS`] rounds of a third of the budget each,
//! and each keeps its best round.

use shuttle::Runner;
use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::sync::atomic::{AtomicUsize, Ordering};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use weft::sched::Strategy;
use weft_peers::{Increments, sized_rate};

/// Rounds of the three random runs of weft (see the module's doc).
const ROUNDS: u32 = 3;

/// The sweep: threads, then increments per thread.
const THREADS: [usize; 5] = [2, 4, 8, 32, 100];
const INCREMENTS: [usize; 4] = [10, 100, 1_000, 10_000];

/// Shuttle's executions per second on the logic, sized to `budget` as
/// weft's are.
fn shuttle_rate(threads: usize, increments: usize, pct: bool, budget: Duration) -> f64 {
    let run = |executions: u64| {
        let logic = move || {
            let counter = Arc::new(AtomicUsize::new(0));
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    let counter = Arc::clone(&counter);
                    shuttle::thread::spawn(move || {
                        for _ in 0..increments {
                            let seen = counter.load(Ordering::SeqCst);
                            counter.store(seen + 1, Ordering::SeqCst);
                        }
                    })
                })
                .collect();
            for worker in workers {
                worker.join().unwrap();
            }
        };
        // No step bound: the largest programs of the sweep take millions
        // of steps (weft's is raised to match).
        let mut config = shuttle::Config::new();
        config.max_steps = shuttle::MaxSteps::None;
        let start = Instant::now();
        let iterations = executions as usize;
        if pct {
            Runner::new(PctScheduler::new(3, iterations), config).run(logic);
        } else {
            Runner::new(RandomScheduler::new(iterations), config).run(logic);
        }
        Ok((executions, start.elapsed()))
    };
    sized_rate(budget, run).expect("Shuttle's runs report no error")
}

/// A rate as the table shows it: whole numbers, two decimals below 10.
fn shown(rate: f64) -> String {
    if rate < 10.0 {
        format!("{rate:.2}")
    } else {
        format!("{rate:.0}")
    }
}

fn main() -> anyhow::Result<()> {
    // As the `weft` command does.
    weft::heap::keep_freed_memory();
    let args: Vec<String> = std::env::args().collect();
    let budget = args
        .iter()
        .position(|a| a == "--budget-ms")
        .and_then(|i| args.get(i + 1))
        .map_or(1000, |ms| {
            ms.parse().expect("--budget-ms takes milliseconds")
        });
    let budget = Duration::from_millis(budget);
    let quick = args.iter().any(|a| a == "--quick");
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/samples/increments.wasm");
    anyhow::ensure!(
        module.exists(),
        "{} is missing: build the samples first (`./x samples`)",
        module.display()
    );
    let mut plain = Increments::load(&module, false, false)?;
    let mut checked = Increments::load(&module, true, false)?;
    let mut checked_stripped = Increments::load(&module, true, true)?;
    println!(
        "| T threads x N increments | Shuttle random | weft random | ratio | Shuttle PCT | weft PCT | ratio | weft random, race check | its cost | the same without DWARF | its cost |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for threads in THREADS {
        for increments in INCREMENTS {
            let operations = threads * increments;
            if quick && operations > 1_000 {
                continue;
            }
            let shuttle_random = shuttle_rate(threads, increments, false, budget);
            let shuttle_pct = shuttle_rate(threads, increments, true, budget);
            let weft_pct = plain.rate(threads, increments, Strategy::Pct, budget)?;
            let round = budget / ROUNDS;
            let (mut weft_random, mut weft_checked, mut weft_stripped) = (0f64, 0f64, 0f64);
            for _ in 0..ROUNDS {
                for (weft, best) in [
                    (&mut plain, &mut weft_random),
                    (&mut checked, &mut weft_checked),
                    (&mut checked_stripped, &mut weft_stripped),
                ] {
                    *best = best.max(weft.rate(threads, increments, Strategy::Random, round)?);
                }
            }
            println!(
                "| {threads} x {increments} | {} | {} | {:.2} | {} | {} | {:.2} | {} | {:.2}x | {} | {:.2}x |",
                shown(shuttle_random),
                shown(weft_random),
                weft_random / shuttle_random,
                shown(shuttle_pct),
                shown(weft_pct),
                weft_pct / shuttle_pct,
                shown(weft_checked),
                weft_random / weft_checked,
                shown(weft_stripped),
                weft_random / weft_stripped,
            );
        }
    }
    Ok(())
}
