//! `weft actors`: Bita (run, generate schedules for uncovered orderings,
//! run them, repeat) or random deliveries, until a failure, the budget or
//! the time limit; with the coverage of each criterion as it grows.

use super::agenda::Agenda;
use super::criteria::{Criterion, Goal, coverage, goals};
use super::generate::generate;
use crate::budget::Budget;
use crate::execution::HostError;
use crate::execution::Setup;
use crate::runtime::{ExecutionResult, Failure, Outcome, Program};
use crate::sched::RandomScheduler;
use crate::sched::execution_seed;
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// How deliveries are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ActorStrategy {
    /// Schedules generated for uncovered orderings.
    Bita,
    /// A random delivery order each execution.
    Random,
    /// Oldest message first, with random overtakes (`--delay-percent`):
    /// the random delays of a real actor runtime.
    RandomDelays,
}

/// How to search.
#[derive(Clone, Debug)]
pub struct ActorOptions {
    /// The strategy.
    pub strategy: ActorStrategy,
    /// Criteria Bita generates schedules for (coverage is reported for all).
    pub criteria: Vec<Criterion>,
    /// Most executions.
    pub budget: u64,
    /// Most wall time.
    pub time_limit: Option<Duration>,
    /// Seed of the free deliveries.
    pub seed: u64,
    /// Run configuration.
    pub setup: Setup,
}

/// The coverage of one criterion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coverage {
    /// The criterion.
    pub criterion: Criterion,
    /// Related pairs achieved in both orders.
    pub covered: usize,
    /// Related pairs seen.
    pub pairs: usize,
}

/// A failing execution and how to reproduce it.
#[derive(Clone, Debug)]
pub struct ActorFailure {
    /// The execution.
    pub result: ExecutionResult,
    /// Its failure.
    pub failure: Failure,
    /// The schedule it followed first.
    pub schedule: Vec<u64>,
    /// Its seed.
    pub seed: u64,
    /// 1-based index.
    pub index: u64,
}

/// What the search did.
#[derive(Clone, Debug, Default)]
pub struct ActorReport {
    /// Executions, the initial one included.
    pub executions: u64,
    /// Executions whose schedule could not be followed.
    pub diverged: u64,
    /// Schedules generated (Bita).
    pub generated: u64,
    /// Coverage per criterion.
    pub coverage: Vec<Coverage>,
    /// The coverage after executions 1, 2, 4, 8, ... and the last one.
    pub growth: Vec<(u64, Vec<Coverage>)>,
    /// The first failure.
    pub failure: Option<ActorFailure>,
    /// Wall time.
    pub elapsed: Duration,
}

/// Schedules generated for one goal, at most (a goal whose schedules keep
/// diverging is given up).
const MAX_ATTEMPTS: u32 = 3;

/// Pairs covered in `criteria`, by the report's `coverage`.
fn covered_in(coverage: &[Coverage], criteria: &[Criterion]) -> u64 {
    coverage
        .iter()
        .filter(|c| criteria.contains(&c.criterion))
        .map(|c| c.covered as u64)
        .sum()
}

/// Where a criterion's goals are kept.
fn slot(c: Criterion) -> usize {
    Criterion::ALL.iter().position(|&x| x == c).expect("listed")
}

/// The coverage of every criterion, from the goals `achieved` so far.
fn coverage_of(achieved: &[HashSet<Goal>]) -> Vec<Coverage> {
    Criterion::ALL
        .iter()
        .map(|&c| {
            let (covered, pairs) = coverage(&achieved[slot(c)]);
            Coverage {
                criterion: c,
                covered,
                pairs,
            }
        })
        .collect()
}

/// A schedule that could not be followed leaves the goals it `aims` at and
/// missed open, for schedules generated from other executions (a few
/// times each).
fn reopen_missed(
    aims: Vec<(usize, Goal)>,
    achieved: &[HashSet<Goal>],
    planned: &mut [HashSet<Goal>],
    attempts: &mut HashMap<(usize, Goal), u32>,
) {
    for (c, goal) in aims {
        let tries = attempts.entry((c, goal)).or_insert(0);
        *tries += 1;
        if !achieved[c].contains(&goal) && *tries < MAX_ATTEMPTS {
            planned[c].remove(&goal);
        }
    }
}

/// Runs the search; `progress` sees the report after every execution.
///
/// # Errors
///
/// [`HostError`] when the host cannot run the module, or the module
/// uses no actors.
pub fn search(
    program: &mut Program,
    options: &ActorOptions,
    mut progress: impl FnMut(&ActorReport),
) -> Result<ActorReport, HostError> {
    let budget = Budget::new(Some(options.budget), options.time_limit);
    let mut report = ActorReport::default();
    let mut achieved: Vec<HashSet<Goal>> = vec![HashSet::new(); Criterion::ALL.len()];
    let mut planned = achieved.clone();
    let mut agenda = Agenda::default();
    let mut attempts: HashMap<(usize, Goal), u32> = HashMap::new();
    while !budget.spent(report.executions) {
        // A free execution, when Bita has nothing (left) to follow or free
        // ones have been covering more, gives it new orderings to aim at.
        let followed = match options.strategy {
            ActorStrategy::Random | ActorStrategy::RandomDelays => None,
            ActorStrategy::Bita => agenda.next(&achieved),
        };
        let worth = followed.as_ref().map(|(_, worth)| *worth);
        let (schedule, aims) = followed.map(|(planned, _)| planned).unwrap_or_default();
        let covered_before = covered_in(&report.coverage, &options.criteria);
        let seed = execution_seed(options.seed, report.executions);
        let mut run = budget.timed(&options.setup);
        run.actor_schedule = schedule.clone();
        let result = crate::execution::execute(program, Box::new(RandomScheduler::new(seed)), &run);
        if matches!(result.outcome, Outcome::Stopped) {
            break;
        }
        report.executions += 1;
        match &result.outcome {
            Outcome::HostError(message) => return Err(HostError(message.clone())),
            Outcome::Abandoned(_) => report.diverged += 1,
            _ => {}
        }
        let Some(log) = super::mailboxes::log_of(&result).cloned() else {
            return Err(HostError(
                "the module uses no actors (weft.actor_* imports); see guest-sdk/ABI.md".into(),
            ));
        };
        for c in Criterion::ALL {
            let got = goals(&log, c);
            achieved[slot(c)].extend(got.iter().copied());
            planned[slot(c)].extend(got);
        }
        reopen_missed(aims, &achieved, &mut planned, &mut attempts);
        if options.strategy == ActorStrategy::Bita {
            for &c in &options.criteria {
                for new in generate(&log, c, &mut planned[slot(c)]) {
                    report.generated += 1;
                    let aims = new.aims.iter().map(|&g| (slot(c), g)).collect();
                    agenda.push((new.schedule, aims));
                }
            }
        }
        report.coverage = coverage_of(&achieved);
        if options.strategy == ActorStrategy::Bita {
            let gain = covered_in(&report.coverage, &options.criteria) - covered_before;
            match worth {
                Some(worth) => agenda.followed(worth, gain),
                None if report.executions > 1 => agenda.free_finished(gain),
                None => {}
            }
        }
        if report.executions.is_power_of_two() {
            report
                .growth
                .push((report.executions, report.coverage.clone()));
        }
        if let Some(failure) = result.outcome.failure() {
            report.failure = Some(ActorFailure {
                failure,
                schedule,
                seed,
                index: report.executions,
                result,
            });
        }
        report.elapsed = budget.elapsed();
        progress(&report);
        if report.failure.is_some() {
            break;
        }
    }
    if report
        .growth
        .last()
        .is_some_and(|(n, _)| *n != report.executions)
    {
        report
            .growth
            .push((report.executions, report.coverage.clone()));
    }
    report.elapsed = budget.elapsed();
    Ok(report)
}
