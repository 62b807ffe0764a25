//! `weft gen`: generate concurrent tests (CovCon's prioritised pairs, or at
//! random), run each under several schedules, and check them.
//!
//! Oracles:
//! - a crash (trap, panic, assertion) or deadlock of the concurrent run
//!   that no linearization reproduces (a linearization failing the same way
//!   means the test itself is bad, not the class);
//! - linearizability: the results of a passing concurrent run must be
//!   those of some linearization (each run sequentially, from scratch).

use super::class::Class;
use super::coverage::{MethodEvent, PairCoverage, activity_events, report_events};
use super::generate::Generator;
use super::oracle::interleavings;
use super::plan::{Report, Test, read_report};
use crate::budget::Budget;
use crate::execution::HostError;
use crate::execution::Setup;
use crate::runtime::{ExecutionResult, Failure, FailureKind, Outcome, Program};
use crate::sched::execution_seed;
use crate::sched::{PctScheduler, RandomScheduler, Scheduler, StickyScheduler};
use crate::trace::ThreadId;
use rand_core::SeedableRng;
use std::time::Duration;

/// How tests are generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GenStrategy {
    /// CovCon: the least covered method pairs first.
    Covcon,
    /// Random pairs and suffixes (the ConTeGe baseline).
    Random,
}

/// How to search.
#[derive(Clone, Debug)]
pub struct GenOptions {
    /// The strategy.
    pub strategy: GenStrategy,
    /// Most wall time.
    pub time_limit: Duration,
    /// Most tests, if bounded.
    pub max_tests: Option<u64>,
    /// Schedules each test runs under (alternately random and PCT).
    pub schedules_per_test: u64,
    /// Instead, sticky schedules that switch threads at a scheduling point
    /// with this chance ([`StickyScheduler`]).
    pub switch_chance: Option<f64>,
    /// Seed of generation and schedules.
    pub seed: u64,
    /// Run configuration (its arguments are replaced).
    pub setup: Setup,
}

/// What made a test fail.
#[derive(Clone, Debug)]
pub enum Violation {
    /// The concurrent run crashed or deadlocked; no linearization did.
    Crash(Failure),
    /// The concurrent run's results match no linearization's.
    Results {
        /// The concurrent results, by call number.
        got: Vec<Option<i64>>,
    },
}

/// A thread-safety violation.
#[derive(Clone, Debug)]
pub struct GenFailure {
    /// The test.
    pub test: Test,
    /// What went wrong.
    pub violation: Violation,
    /// The failing concurrent execution.
    pub execution: ExecutionResult,
    /// Its run configuration (for the replay file).
    pub setup: Setup,
    /// Its scheduler seed.
    pub seed: u64,
    /// Linearizations run to confirm it.
    pub linearizations: usize,
    /// Tests generated before and with it.
    pub tests: u64,
    /// Wall time until found.
    pub elapsed: Duration,
}

/// What the search did.
#[derive(Clone, Debug, Default)]
pub struct GenReport {
    /// Tests generated.
    pub tests: u64,
    /// Executions (concurrent and sequential).
    pub executions: u64,
    /// Pairs covered and all pairs.
    pub covered: usize,
    /// The methods seen to change the state, which prefixes call.
    pub state_changing: Vec<usize>,
    /// All method pairs.
    pub pairs: usize,
    /// (tests, milliseconds, pairs covered) after each test.
    pub growth: Vec<(u64, u64, usize)>,
    /// The first violation.
    pub failure: Option<GenFailure>,
    /// Wall time.
    pub elapsed: Duration,
}

/// How one linearization ended (its failure kind, if it failed) and its
/// results, by the original test's call numbers.
pub type Linearization = (Option<FailureKind>, Vec<Option<i64>>);

/// The verdict on one concurrent run of a test.
#[derive(Clone, Debug)]
pub enum Judged {
    /// Its results are those of a linearization.
    Passes,
    /// It failed the way a linearization fails too: the test, not the
    /// class, is at fault.
    BadTest,
    /// A thread-safety violation.
    Fails(Violation),
}

/// Judges a concurrent run that ended with `failure` (if it failed) and
/// returned `results`, against the test's linearizations `lin`.
pub fn judge(failure: Option<Failure>, results: &[Option<i64>], lin: &[Linearization]) -> Judged {
    match failure {
        // Cut short by a limit: reported as such, as `weft explore` does,
        // never taken for the calls' own behaviour.
        Some(failure) if failure.kind.is_limit() => Judged::Fails(Violation::Crash(failure)),
        // A linearization cut short says nothing of what the calls
        // return: the test cannot be judged, which is no pass either.
        _ if let Some(kind) = lin
            .iter()
            .find_map(|(kind, _)| kind.filter(|k| k.is_limit())) =>
        {
            Judged::Fails(Violation::Crash(Failure {
                kind,
                message: format!(
                    "a sequential order of the test's calls hit the {} (raise it to judge the test)",
                    kind.name().replace('-', " ")
                ),
                thread: 0,
            }))
        }
        Some(failure) if lin.iter().any(|(kind, _)| *kind == Some(failure.kind)) => Judged::BadTest,
        Some(failure) => Judged::Fails(Violation::Crash(failure)),
        None => {
            let passing: Vec<&[Option<i64>]> = lin
                .iter()
                .filter(|(kind, _)| kind.is_none())
                .map(|(_, r)| r.as_slice())
                .collect();
            if passing.is_empty() || passing.contains(&results) {
                Judged::Passes
            } else {
                Judged::Fails(Violation::Results {
                    got: results.to_vec(),
                })
            }
        }
    }
}

impl Violation {
    /// The failure users see, for a run that failed in `thread` after
    /// `linearizations` linearizations were run to compare it with.
    pub fn failure(&self, linearizations: usize, thread: ThreadId) -> Failure {
        match self {
            Violation::Crash(failure) => failure.clone(),
            Violation::Results { got } => Failure {
                kind: FailureKind::Linearizability,
                message: format!(
                    "the results {} match none of the {linearizations} linearizations",
                    got.iter()
                        .map(|r| r.map_or("-".to_string(), |v| v.to_string()))
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
                thread,
            },
        }
    }
}

/// The setup that runs `test`: `base` with the test's plan as arguments.
pub fn setup_for(base: &Setup, test: &Test) -> Setup {
    let mut run = base.clone();
    run.run.args.truncate(1);
    run.run.args.push(PLAN_FLAG.into());
    run.run.args.push(test.plan());
    run
}

/// The test a setup made by [`setup_for`] runs, if it is one.
pub fn test_of(setup: &Setup) -> Option<Test> {
    match &setup.run.args[..] {
        [_, flag, plan] if flag == PLAN_FLAG && !setup.gen_methods.is_empty() => Test::parse(plan),
        _ => None,
    }
}

/// The argument that passes the guest driver its plan.
const PLAN_FLAG: &str = "--weft-gen";

/// Runs `test` under `scheduler`; its execution and what the driver
/// reported.
///
/// # Errors
///
/// [`HostError`] when the host cannot run the module.
pub fn run_test(
    program: &mut Program,
    base: &Setup,
    test: &Test,
    scheduler: Box<dyn Scheduler>,
) -> Result<(ExecutionResult, Report), HostError> {
    let result = crate::execution::execute(program, scheduler, &setup_for(base, test));
    if let Outcome::HostError(message) = &result.outcome {
        return Err(HostError(message.clone()));
    }
    let report = read_report(&result.stdout);
    Ok((result, report))
}

/// Runs every linearization of `test`: their failure kinds and results
/// (mapped back to the test's call numbers).
///
/// # Errors
///
/// [`HostError`] when the host cannot run the module.
pub fn linearizations(
    program: &mut Program,
    base: &Setup,
    test: &Test,
) -> Result<Vec<Linearization>, HostError> {
    let mut out = Vec::new();
    for order in interleavings(test.suffixes[0].len(), test.suffixes[1].len()) {
        let (linear, position) = test.linearized(&order);
        let (result, report) = run_test(program, base, &linear, Box::new(RandomScheduler::new(0)))?;
        let results = position
            .iter()
            .map(|&p| report.results.get(p).copied().flatten())
            .collect();
        out.push((result.outcome.judged().map(|f| f.kind), results));
    }
    Ok(out)
}

/// The scheduler of a test's `s`-th schedule, seeded with `seed`: one that
/// switches threads with `switch_chance` at every point, else random and
/// PCT (depth 2) in turns.
fn schedule_of(switch_chance: Option<f64>, s: u64, seed: u64) -> Box<dyn Scheduler> {
    match switch_chance {
        Some(chance) => Box::new(StickyScheduler::new(seed, chance)),
        None if s.is_multiple_of(2) => Box::new(RandomScheduler::new(seed)),
        None => Box::new(PctScheduler::new(seed, 2, 200)),
    }
}

/// The method events of one run of `test`, for pair coverage: from the
/// activity log when calls were logged, else from the test's own report.
fn events_of(
    program: &Program,
    class: &Class,
    test: &Test,
    result: &ExecutionResult,
    run_report: &Report,
) -> Vec<MethodEvent> {
    let activity = crate::activity::entries(result);
    if activity.is_empty() {
        report_events(test, run_report)
    } else {
        activity_events(activity, program.sites(), class)
    }
}

impl GenReport {
    /// A test ran all its schedules: `covered` pairs after `executions`
    /// executions and `elapsed` time.
    fn tested(&mut self, covered: usize, executions: u64, elapsed: Duration) {
        self.covered = covered;
        self.growth
            .push((self.tests, elapsed.as_millis() as u64, covered));
        self.executions = executions;
        self.elapsed = elapsed;
    }
}

/// Runs the search; `progress` sees the report after every test.
///
/// # Errors
///
/// [`HostError`] when the host cannot run the module.
pub fn search(
    program: &mut Program,
    class: &Class,
    options: &GenOptions,
    mut progress: impl FnMut(&GenReport),
) -> Result<GenReport, HostError> {
    let budget = Budget::new(None, Some(options.time_limit));
    // Runs still going at the time limit are stopped, and not judged.
    let mut base = budget.timed(&options.setup);
    base.gen_methods = std::iter::once(class.constructor.clone())
        .chain(class.methods.iter().map(|m| m.export.clone()))
        .collect();
    let mut coverage = PairCoverage::new(class.methods.len());
    let mut choice = rand_pcg::Pcg64Mcg::seed_from_u64(options.seed);
    let mut generator = Generator::new(
        class,
        rand_pcg::Pcg64Mcg::seed_from_u64(options.seed ^ 0x5eed),
    );
    let (changing, mut executions) =
        super::probe::state_changing(program, &base, &mut generator, class.methods.len())?;
    generator.prefix_methods(changing.clone());
    let mut report = GenReport {
        state_changing: changing,
        pairs: coverage.pairs(),
        ..Default::default()
    };
    'search: while !budget.out_of_time() && options.max_tests.is_none_or(|n| report.tests < n) {
        let tests = match options.strategy {
            GenStrategy::Covcon => {
                let pair = coverage.choose(&mut choice);
                let (m1, m2) = coverage.methods_of(pair);
                generator.for_pair(m1, m2, coverage.tried(pair))
            }
            GenStrategy::Random => vec![generator.random()],
        };
        for test in tests {
            if options.max_tests.is_some_and(|n| report.tests >= n) {
                break 'search;
            }
            report.tests += 1;
            let mut linear: Option<Vec<Linearization>> = None;
            for s in 0..options.schedules_per_test {
                if budget.out_of_time() {
                    break 'search;
                }
                let seed = execution_seed(options.seed, executions);
                let scheduler = schedule_of(options.switch_chance, s, seed);
                let (result, run_report) = run_test(program, &base, &test, scheduler)?;
                if matches!(result.outcome, Outcome::Stopped) {
                    break 'search;
                }
                executions += 1;
                coverage.update(&events_of(program, class, &test, &result, &run_report));
                let lin = match &linear {
                    Some(l) => l,
                    None => {
                        let lin = linearizations(program, &base, &test)?;
                        if budget.out_of_time() {
                            // A linearization may have been stopped.
                            break 'search;
                        }
                        executions += lin.len() as u64;
                        linear.insert(lin)
                    }
                };
                match judge(result.outcome.judged(), &run_report.results, lin) {
                    Judged::Passes => {}
                    Judged::BadTest => break,
                    Judged::Fails(violation) => {
                        let mut setup = setup_for(&base, &test);
                        setup.run.stop_at = None;
                        report.failure = Some(GenFailure {
                            setup,
                            linearizations: lin.len(),
                            test,
                            violation,
                            execution: result,
                            seed,
                            tests: report.tests,
                            elapsed: budget.elapsed(),
                        });
                        break 'search;
                    }
                }
            }
            report.tested(coverage.covered_pairs(), executions, budget.elapsed());
            progress(&report);
        }
    }
    report.covered = coverage.covered_pairs();
    report.executions = executions;
    report.elapsed = budget.elapsed();
    Ok(report)
}
