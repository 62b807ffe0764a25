//! Exploration by sampling strategies, on several workers and in shards.
//!
//! Execution `i` gets its strategy and seed from `i` alone (see
//! [`super::turns`]), so executions can run anywhere in any order. The first
//! executions run one by one, as long as the strategies learn from them;
//! the rest run on `jobs` workers, each with its own instance of the
//! program. Their results are taken in index order, and the exploration
//! stops at the first index where it must (a failure, the iteration limit),
//! so its outcome (failure, counts, trace hash) does not depend on the
//! number of workers. Executions that ran past that index are not counted.
//!
//! A shard `K/N` takes only the executions whose index is `K` modulo `N`
//! (the first ones still run everywhere, to learn from), so that a long
//! exploration splits over the nodes of a batch system.

use super::tally::{Summary, Tally};
use super::turns::{Turn, Turns};
use super::{Exploration, ExploreOptions, FailingExecution, Progress, check_host};
use crate::execution::HostError;
use crate::execution::Setup;
use crate::replay::file::FoundBy;
use crate::runtime::{ExecutionResult, Outcome, Program};
use crate::sched::execution_seed;
use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Instant;

/// One of `count` shards of an exploration: the executions whose index is
/// `index` modulo `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which shard, from 0.
    pub index: u64,
    /// How many shards.
    pub count: u64,
}

impl Default for Shard {
    fn default() -> Self {
        Shard { index: 0, count: 1 }
    }
}

impl Shard {
    /// The exploration index of this shard's `n`-th execution (from 0).
    pub fn execution(&self, n: u64) -> u64 {
        n.saturating_mul(self.count).saturating_add(self.index)
    }

    /// Whether the exploration's execution `index` is this shard's.
    pub fn owns(&self, index: u64) -> bool {
        index % self.count == self.index
    }
}

/// The most shards an exploration splits into: far more than a batch
/// system's array jobs, and few enough that a shard's executions never run
/// out of indices.
pub const MAX_SHARDS: u64 = 1_000_000;

impl FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let usage = || {
            format!(
                "`{text}` is not a shard: write K/N, with 0 <= K < N <= {MAX_SHARDS} (e.g. 0/4)"
            )
        };
        let (index, count) = text.split_once('/').ok_or_else(usage)?;
        let index: u64 = index.trim().parse().map_err(|_| usage())?;
        let count: u64 = count.trim().parse().map_err(|_| usage())?;
        if count == 0 || index >= count || count > MAX_SHARDS {
            return Err(usage());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Explores `program` with the sampling strategies of `turns`.
pub(super) fn explore(
    program: &mut Program,
    options: &ExploreOptions,
    mut turns: Turns,
    mut progress: impl FnMut(Progress),
) -> Result<Exploration, HostError> {
    let shard = options.shard;
    let mut tally = Tally::new(options);
    // The first executions, one by one: the strategies learn from them
    // (so they ran under schedulers that knew less, and are kept rather
    // than run again).
    // Executions still going when the time limit comes are stopped; the
    // ones reported are run again to their end.
    let timed = tally.timed_setup();
    let mut learnt = 0;
    let mut first_results = BTreeMap::new();
    while turns.learning() && !tally.done() {
        let result = run(program, &turns, options.seed, &timed, learnt);
        check_host(&result)?;
        turns.learn(&result);
        if shard.owns(learnt) && !matches!(result.outcome, Outcome::Stopped) {
            tally.take(learnt, Summary::of(&result), &mut progress);
            first_results.insert(learnt, result);
        }
        learnt += 1;
    }
    // The rest, on the workers.
    let first = (0..).find(|&n| shard.execution(n) >= learnt).unwrap_or(0);
    if !tally.done() {
        run_workers(program, &timed, &turns, first, &mut tally, &mut progress)?;
    }
    let mut result_of = |index: u64| match first_results.get(&index) {
        Some(result) => Ok(result.clone()),
        None => rerun(program, &turns, options, index),
    };
    // The executions reported are run again here: every execution is
    // determined by its index, and so is its trace.
    let failure = match tally.first_failure {
        Some((index, count)) => {
            let result = result_of(index)?;
            let failure = result
                .outcome
                .failure()
                .ok_or_else(|| HostError(nondeterministic(index)))?;
            let turn = turns.turn(index);
            Some(FailingExecution {
                result,
                failure,
                found_by: FoundBy {
                    strategy: turn.strategy,
                    seed: execution_seed(options.seed, index),
                    pct_depth: turn.pct_depth,
                    execution: count,
                },
                index,
            })
        }
        None => None,
    };
    let last = match (&failure, tally.last) {
        (Some(found), _) if !options.keep_going => Some(found.result.clone()),
        (_, Some(index)) => Some(result_of(index)?),
        (_, None) => None,
    };
    Ok(tally.exploration(failure, last))
}

/// Most results a worker keeps before sending them.
const BATCH: usize = 64;

/// Longest a worker keeps results before sending them (for progress).
const BATCH_TIME: std::time::Duration = std::time::Duration::from_millis(100);

/// Runs this shard's executions from its `first` on `options.jobs`
/// workers, taking their results in index order until the tally is done.
fn run_workers(
    program: &mut Program,
    setup: &Setup,
    turns: &Turns,
    first: u64,
    tally: &mut Tally<'_>,
    progress: &mut impl FnMut(Progress),
) -> Result<(), HostError> {
    let options = tally.options;
    let shard = options.shard;
    let next = AtomicU64::new(first);
    let stop = AtomicBool::new(false);
    // From the execution that can end the exploration on, a worker sends
    // each result at once: a batch held back would keep the workers
    // running executions nobody asked for, up to a batch's worth each.
    let last_needed = tally.last_needed(first);
    let mut workers = program
        .workers(options.jobs.saturating_sub(1))
        .map_err(|e| HostError(format!("cannot start a worker: {e}")))?;
    let (sender, results) = mpsc::channel::<Vec<(u64, Result<Summary, String>)>>();
    std::thread::scope(|scope| {
        let programs = std::iter::once(program).chain(workers.iter_mut());
        for worker in programs {
            let (sender, next, stop) = (sender.clone(), &next, &stop);
            scope.spawn(move || {
                // Results go in batches: waking the collecting thread for
                // every execution would take a core from the workers.
                let mut batch = Vec::new();
                let mut sent = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    let index = shard.execution(n);
                    if index == u64::MAX {
                        break;
                    }
                    let result = run(worker, turns, options.seed, setup, index);
                    let summary = check_host(&result).map(|()| Summary::of(&result));
                    let urgent = !matches!(summary, Ok(Summary { failed: false, .. }))
                        || last_needed.is_some_and(|last| n >= last);
                    batch.push((n, summary.map_err(|e| e.0)));
                    if urgent || batch.len() == BATCH || sent.elapsed() >= BATCH_TIME {
                        if sender.send(std::mem::take(&mut batch)).is_err() {
                            return;
                        }
                        sent = Instant::now();
                    }
                }
                let _ = sender.send(batch);
            });
        }
        drop(sender);
        let mut waiting = BTreeMap::new();
        let mut wanted = first;
        let mut outcome = Ok(());
        for batch in &results {
            waiting.extend(batch);
            while let Some(summary) = waiting.remove(&wanted) {
                if tally.done() {
                    break;
                }
                match summary {
                    Ok(summary) => tally.take(shard.execution(wanted), summary, progress),
                    Err(message) => {
                        outcome = Err(HostError(message));
                        break;
                    }
                }
                wanted += 1;
            }
            if tally.done() || outcome.is_err() {
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
        // Let the workers finish the executions they are in.
        for _ in results.iter() {}
        outcome
    })
}

/// Runs the exploration's execution `index` on `program` under `setup`.
fn run(
    program: &mut Program,
    turns: &Turns,
    seed: u64,
    setup: &Setup,
    index: u64,
) -> ExecutionResult {
    let turn: Turn = turns.turn(index);
    let sched = turns.scheduler(turn, execution_seed(seed, index));
    crate::execution::execute(program, sched, setup)
}

/// Runs execution `index` again, for its full result.
fn rerun(
    program: &mut Program,
    turns: &Turns,
    options: &ExploreOptions,
    index: u64,
) -> Result<ExecutionResult, HostError> {
    let result = run(program, turns, options.seed, &options.setup, index);
    check_host(&result)?;
    Ok(result)
}

fn nondeterministic(index: u64) -> String {
    format!(
        "execution {index} did not fail when run again: the module behaves differently under the same schedule (a weft bug)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_split_the_indices() {
        let shard: Shard = "1/3".parse().unwrap();
        assert_eq!(
            (0..3).map(|n| shard.execution(n)).collect::<Vec<_>>(),
            [1, 4, 7]
        );
        assert!(shard.owns(4) && !shard.owns(3));
        for bad in ["3/2", "2/2", "1/0", "1", "a/b", "-1/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert_eq!(Shard::default().execution(5), 5);
    }
}
