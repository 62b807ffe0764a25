//! `weft serializability`: AssetFuzzer (profiling, potential violations,
//! directed executions) or the random-monitor baseline, over one budget of
//! executions; every execution is checked for the access patterns, so
//! every reported violation happened in a replayable execution.

use super::asset_scheduler::{AssetScheduler, Target};
use super::patterns::{PATTERNS, violations};
use super::potential::{Potential, potential_violations};
use crate::execution::HostError;
use crate::execution::Setup;
use crate::runtime::{ExecutionResult, Outcome, Program};
use crate::sched::execution_seed;
use crate::sched::{RandomScheduler, Scheduler};
use crate::serializability::atomic_sets::SetLog;
use std::time::{Duration, Instant};

/// Which strategy looks for violations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SerialStrategy {
    /// Profile, infer potential violations, then drive each one.
    Assetfuzzer,
    /// Random schedules with the pattern monitor on every execution.
    RandomMonitor,
}

/// How to look.
#[derive(Clone, Debug)]
pub struct SerialOptions {
    /// The strategy.
    pub strategy: SerialStrategy,
    /// Executions in all (profiling included).
    pub budget: u64,
    /// Profiling executions (AssetFuzzer).
    pub profile_runs: u64,
    /// Directed executions per potential violation (AssetFuzzer; each runs
    /// all of them, so the detection rate says how reliably it is hit).
    pub attempts: u64,
    /// Seed of the schedules.
    pub seed: u64,
    /// Run configuration (atomic-set checking is switched on).
    pub setup: Setup,
}

/// One violation that happened, identified by its pattern and code sites.
#[derive(Clone, Debug)]
pub struct Found {
    /// Index in [`PATTERNS`].
    pub pattern: usize,
    /// The accesses, from the execution's log.
    pub log: SetLog,
    /// Their indices in `log.accesses`.
    pub accesses: Vec<usize>,
    /// The execution it happened in (for the replay file).
    pub execution: ExecutionResult,
    /// Its scheduler seed and index.
    pub seed: u64,
    /// 1-based index of the execution.
    pub index: u64,
}

impl Found {
    /// Takes `execution` (the same violation under another schedule, say a
    /// minimized one) as this violation's execution: its log, and its first
    /// violation of the same pattern.
    pub fn move_to(&mut self, execution: ExecutionResult) {
        let log = super::atomic_sets::log_of(&execution)
            .cloned()
            .unwrap_or_default();
        let number = PATTERNS[self.pattern].number;
        if let Some(v) = violations(&log)
            .into_iter()
            .find(|v| v.pattern().number == number)
        {
            self.pattern = v.pattern;
            self.accesses = v.accesses;
            self.log = log;
        }
        self.execution = execution;
    }

    /// The violation, as the pattern matcher gives it.
    pub fn violation(&self) -> super::patterns::Violation {
        super::patterns::Violation {
            pattern: self.pattern,
            accesses: self.accesses.clone(),
        }
    }

    fn key(&self) -> (u8, Vec<u32>) {
        (
            PATTERNS[self.pattern].number,
            self.accesses
                .iter()
                .map(|&i| self.log.accesses[i].site)
                .collect(),
        )
    }
}

/// What the search did and found.
#[derive(Debug, Default)]
pub struct SerialReport {
    /// Executions run.
    pub executions: u64,
    /// Executions in which some violation happened.
    pub detecting: u64,
    /// Potential violations phase I inferred (AssetFuzzer).
    pub potential: usize,
    /// Potential violations that a directed execution realised.
    pub realised: usize,
    /// Distinct violations, in the order found.
    pub found: Vec<Found>,
    /// Wall time.
    pub elapsed: Duration,
    /// Some execution registered an atomic set and ran a unit of work.
    pub annotated: bool,
    /// A failure other than serializability (a crash), if one happened.
    pub crash: Option<(ExecutionResult, u64, u64)>,
}

impl SerialReport {
    /// Takes in `result`, the execution whose scheduler had `seed`: a crash
    /// (a failure other than serializability), the violations not found
    /// before; its log of atomic-set accesses.
    fn take(&mut self, result: ExecutionResult, seed: u64) -> Result<SetLog, HostError> {
        self.executions += 1;
        let index = self.executions;
        if let Outcome::HostError(message) = &result.outcome {
            return Err(HostError(message.clone()));
        }
        if let Some(failure) = result.outcome.failure()
            && failure.kind != crate::runtime::FailureKind::Serializability
            && self.crash.is_none()
        {
            self.crash = Some((result.clone(), seed, index));
        }
        let log = super::atomic_sets::log_of(&result)
            .cloned()
            .unwrap_or_default();
        self.annotated |= !log.sets.is_empty() && !log.units.is_empty();
        let happened = violations(&log);
        if !happened.is_empty() {
            self.detecting += 1;
        }
        for v in happened {
            let found = Found {
                pattern: v.pattern,
                accesses: v.accesses,
                log: log.clone(),
                execution: result.clone(),
                seed,
                index,
            };
            if !self.found.iter().any(|f| f.key() == found.key()) {
                self.found.push(found);
            }
        }
        Ok(log)
    }
}

/// What AssetFuzzer's scheduler drives an execution towards to realise
/// `potential`.
fn target_of(potential: &Potential) -> Target {
    Target {
        sites: potential.sites.clone(),
        by_u: PATTERNS[potential.pattern]
            .steps
            .iter()
            .map(|s| s.0 == super::patterns::Role::U)
            .collect(),
        vwls_empty: potential.vwls_empty,
    }
}

/// Runs the search.
///
/// # Errors
///
/// [`HostError`] when the host cannot run the module.
pub fn search(program: &mut Program, options: &SerialOptions) -> Result<SerialReport, HostError> {
    let start = Instant::now();
    let mut run = options.setup.clone();
    run.check_atomic_sets = true;
    let mut report = SerialReport::default();
    let mut execute = |report: &mut SerialReport, scheduler: Box<dyn Scheduler>, seed: u64| {
        let result = crate::execution::execute(program, scheduler, &run);
        report.take(result, seed)
    };
    match options.strategy {
        SerialStrategy::RandomMonitor => {
            for i in 0..options.budget {
                let seed = execution_seed(options.seed, i);
                execute(&mut report, Box::new(RandomScheduler::new(seed)), seed)?;
            }
        }
        SerialStrategy::Assetfuzzer => {
            let mut potentials: Vec<Potential> = Vec::new();
            for i in 0..options.profile_runs.min(options.budget) {
                let seed = execution_seed(options.seed, i);
                let log = execute(&mut report, Box::new(RandomScheduler::new(seed)), seed)?;
                for p in potential_violations(&log) {
                    if !potentials.contains(&p) {
                        potentials.push(p);
                    }
                }
            }
            report.potential = potentials.len();
            let mut index = report.executions;
            'targets: for potential in &potentials {
                let target = target_of(potential);
                let mut realised = false;
                for _ in 0..options.attempts {
                    if report.executions >= options.budget {
                        break 'targets;
                    }
                    let seed = execution_seed(options.seed, index);
                    index += 1;
                    let log = execute(
                        &mut report,
                        Box::new(AssetScheduler::new(seed, target.clone())),
                        seed,
                    )?;
                    let sites = |v: &super::patterns::Violation| -> Vec<u32> {
                        v.accesses.iter().map(|&i| log.accesses[i].site).collect()
                    };
                    if violations(&log).iter().any(|v| {
                        PATTERNS[v.pattern].number == PATTERNS[potential.pattern].number
                            && sites(v) == potential.sites
                    }) && !realised
                    {
                        realised = true;
                        report.realised += 1;
                    }
                }
            }
        }
    }
    report.elapsed = start.elapsed();
    Ok(report)
}
