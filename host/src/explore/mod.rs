//! Exploration: run a program under many schedules until one fails.
//!
//! Each execution gets its own scheduler seed, derived from the exploration
//! seed and the execution's index, so an exploration is reproducible as a
//! whole and every execution on its own (its decisions are recorded too).
//! [`turns`] says which strategy runs each execution.

pub(crate) mod dfs_search;
pub(crate) mod distinct;
pub(crate) mod dpor_search;
pub(crate) mod races_schedule;
pub mod sampling;
pub(crate) mod search_again_at_races;
pub(crate) mod systematic;
mod tally;
pub(crate) mod turns;

use crate::budget::Budget;
use crate::execution::{HostError, Setup};
use crate::instrument::PointModel;
use crate::race::RaceMode;
use crate::replay::file::FoundBy;
use crate::runtime::{Cut, ExecutionResult, Failure, Outcome, Program, Unenumerated};
use crate::sched::{Scheduler, Strategy};
use dfs_search::DfsSearch;
use dpor_search::DporSearch;
pub use dpor_search::StateSpace;
pub use sampling::Shard;
use std::time::Duration;
use turns::{PCT_INITIAL_STEPS, Turn, Turns};

/// How to explore.
#[derive(Clone, Debug)]
pub struct ExploreOptions {
    /// Scheduling strategy.
    pub strategy: Strategy,
    /// Exploration seed.
    pub seed: u64,
    /// PCT bug depth `d`.
    pub pct_depth: u32,
    /// For [`Strategy::Dfs`]: the most preemptions a schedule may have.
    pub preemption_bound: u32,
    /// Stop after this many executions, not counting discarded ones (at
    /// most 100 times as many run in all).
    pub iterations: Option<u64>,
    /// Stop after this much wall time.
    pub time_limit: Option<Duration>,
    /// The setup of every execution: arguments, WASI seed, limits, and
    /// what the analyses are told.
    pub setup: Setup,
    /// Run every iteration even after a failure (to measure how often a
    /// program fails); the first failure is the one reported.
    pub keep_going: bool,
    /// Parallel workers for the sampling strategies (the systematic ones
    /// run on one).
    pub jobs: usize,
    /// The share of the executions to run.
    pub shard: Shard,
    /// For [`Strategy::Dpor`]: end each execution at a state explored
    /// before (see [`dpor_search`]).
    pub stateful: bool,
}

impl Default for ExploreOptions {
    fn default() -> Self {
        ExploreOptions {
            strategy: Strategy::Portfolio,
            seed: 0,
            pct_depth: 3,
            preemption_bound: 2,
            iterations: Some(1000),
            time_limit: None,
            setup: Setup::default(),
            keep_going: false,
            jobs: 1,
            shard: Shard::default(),
            stateful: false,
        }
    }
}

/// How many executions, discarded ones included, an exploration of `n`
/// iterations may run at most (`n` times this).
const DISCARD_FACTOR: u64 = 100;

/// A failing execution and how it was found.
#[derive(Clone, Debug)]
pub struct FailingExecution {
    /// The execution.
    pub result: ExecutionResult,
    /// Its failure.
    pub failure: Failure,
    /// Strategy, seed and index that produced it.
    pub found_by: FoundBy,
    /// Its index in the exploration (from 0).
    pub index: u64,
}

/// What an exploration did.
#[derive(Clone, Debug, Default)]
pub struct Exploration {
    /// Executions run.
    pub executions: u64,
    /// Distinct traces among them (at least this many when
    /// `distinct_traces_capped`: see [`distinct`]).
    pub distinct_traces: usize,
    /// Whether more traces were seen than an exploration remembers, so
    /// that `distinct_traces` is a lower bound.
    pub distinct_traces_capped: bool,
    /// Executions discarded because a guest assumption was false.
    pub discarded: u64,
    /// Executions that failed (more than one only with `keep_going`).
    pub failing_executions: u64,
    /// Executions cut short by a limit while still making progress.
    pub inconclusive: Inconclusive,
    /// The first failure, if one was found.
    pub failure: Option<FailingExecution>,
    /// The last execution (the failing one when the exploration stopped at
    /// a failure).
    pub last: Option<ExecutionResult>,
    /// Wall time spent.
    pub elapsed: Duration,
    /// What a systematic exploration that ended by itself covered (or
    /// that it claims nothing).
    pub exhausted: Option<Exhausted>,
    /// With `--races schedule`: the racy sites found before the
    /// exploration, which were its scheduling points besides the usual.
    pub race_points: Option<races_schedule::RacePoints>,
    /// What a stateful search saw of the program's states.
    pub state_space: Option<StateSpace>,
}

impl Exploration {
    /// The setup its executions ran with, when it was started with `run`:
    /// with `--races schedule`, the racy sites found first were
    /// scheduling points too, and a replay of its executions needs them.
    pub fn setup(&self, run: &Setup) -> Setup {
        let mut setup = run.clone();
        if let Some(found) = &self.race_points {
            setup.run.point_sites = found.sites.clone();
        }
        setup
    }
}

/// The executions of an exploration that a limit cut short while they were
/// still making progress: neither passes nor failures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inconclusive {
    /// How many.
    pub executions: u64,
    /// The first of them (by index), and the limit that cut it.
    pub first: Option<(u64, Cut)>,
}

impl Inconclusive {
    /// Counts execution `index`, cut by `cut`.
    pub fn add(&mut self, index: u64, cut: Cut) {
        self.executions += 1;
        if self.first.is_none_or(|(first, _)| index < first) {
            self.first = Some((index, cut));
        }
    }

    /// Why an exploration with no failure is no pass, if it is not.
    pub fn describe(&self, executions: u64) -> Option<String> {
        let (index, cut) = self.first?;
        Some(format!(
            "{} of {executions} executions cut short by a limit, so no verdict: execution {index}: {}",
            self.executions,
            cut.describe()
        ))
    }
}

/// What a systematic exploration that ended by itself covered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exhausted {
    /// Every schedule with at most this many preemptions ran.
    Bounded {
        /// The bound.
        preemption_bound: u32,
    },
    /// Every schedule ran, up to the order of steps that commute.
    All,
    /// The search ran out of schedules to try, but claims nothing, for the
    /// reason given.
    Unclaimed(Withheld),
}

/// Why a systematic search that ran out of schedules claims nothing: some
/// execution depended on something it does not enumerate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Withheld {
    /// A guest drew a value from a range the search does not enumerate
    /// (`weft.choose`; 0 stands for every 64-bit value).
    Values {
        /// The range's size.
        range: u64,
    },
    /// The bounded search: a guest drew a value (it enumerates none).
    AnyValue,
    /// An execution reached the step limit and went on under a fair
    /// schedule.
    StepLimit,
    /// A loop whose turns came again alike gave up on its own: its turns
    /// are not all alike.
    CountedLoop,
    /// A loop whose turns came again alike wrote memory in them that
    /// another thread's step raced with: its later turns were not explored
    /// against that step.
    SharedTurn,
    /// The bounded search left a busy thread early.
    LeftBusy,
    /// A schedule held threads at events (`weft test` schedules).
    HeldThreads,
    /// The bounded search met an atomic section.
    AtomicSections,
    /// Data races were not failures and plain accesses were no scheduling
    /// points: a racy program may do what no explored schedule shows.
    RacesUnchecked,
    /// Plain and atomic accesses touched a common word: the search orders
    /// only the atomic ones, and the race check takes the plain ones for
    /// synchronisation.
    MixedAccesses,
    /// An execution raced but ended otherwise (an assumption, an abort,
    /// another failure): the program is racy, and the search switched only
    /// at its synchronisation.
    RaceBehindOtherEnd,
    /// The exhaustive search met a signal sent between threads.
    Signals,
    /// An execution depended on something no schedule decides.
    Input(Unenumerated),
}

impl Withheld {
    /// The reason, in words.
    pub fn describe(self) -> String {
        match self {
            Withheld::Values { range: 0 } => "the program drew a nondeterministic value from every 64-bit value (weft.choose(0), a __VERIFIER_nondet of an int-sized or larger type), which the search cannot enumerate".into(),
            Withheld::Values { range } => format!(
                "the program drew a nondeterministic value from 0..{range}, more than the {} values a draw the search enumerates",
                crate::sched::MAX_ENUMERATED_VALUES
            ),
            Withheld::AnyValue => "the program drew nondeterministic values, which `dfs` does not enumerate (`dpor` does)".into(),
            Withheld::StepLimit => "an execution reached the step limit and went on under a fair schedule (raise --max-steps)".into(),
            Withheld::CountedLoop => "a loop whose turns came again alike gave up after some turns, so its turns are not all alike".into(),
            Withheld::SharedTurn => "a loop whose turns came again alike wrote memory another thread touches, so its later turns were not all explored".into(),
            Withheld::LeftBusy => "a busy thread was left early".into(),
            Withheld::HeldThreads => "a schedule held threads at events".into(),
            Withheld::AtomicSections => "the program ran atomic sections, which `dfs` does not claim (`dpor` does)".into(),
            Withheld::RacesUnchecked => "data races were not checked and plain accesses were no scheduling points, so a racy program may do what no explored schedule shows (pass --races fail, or --points memory)".into(),
            Withheld::MixedAccesses => "the program accessed a word both with plain and with atomic accesses, and the search orders only the atomic ones".into(),
            Withheld::RaceBehindOtherEnd => "an execution had a data race but ended otherwise (a false assumption, an abort, another failure), so the program is racy and schedules that switch between its racing accesses were not explored (--points memory explores them)".into(),
            Withheld::Signals => "the program sent signals, and `dpor` does not order a signal's sending against the steps where it may be delivered (`dfs` does)".into(),
            Withheld::Input(what) => what.describe(),
        }
    }
}

/// Progress of a running exploration, for display.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Executions so far.
    pub executions: u64,
    /// Distinct traces so far.
    pub distinct_traces: usize,
    /// Time since the start.
    pub elapsed: Duration,
}

/// A fresh scheduler of `strategy` for a single execution (under
/// `portfolio`, the turn that `seed` picks) of a program under point model
/// `model`, with PCT estimating `pct_steps` steps.
fn scheduler_under(
    model: PointModel,
    strategy: Strategy,
    seed: u64,
    pct_depth: u32,
    pct_steps: u64,
) -> Box<dyn Scheduler> {
    Turns::with_steps(strategy, pct_depth, pct_steps)
        .under(model)
        .scheduler(
            Turn {
                strategy,
                pct_depth: (strategy == Strategy::Pct).then_some(pct_depth),
            },
            seed,
        )
}

/// [`scheduler_under`] the model of the library's internals (where PCT is
/// the paper's but for its yields).
pub fn scheduler(
    strategy: Strategy,
    seed: u64,
    pct_depth: u32,
    pct_steps: u64,
) -> Box<dyn Scheduler> {
    scheduler_under(
        PointModel::SyncInternals,
        strategy,
        seed,
        pct_depth,
        pct_steps,
    )
}

/// Runs one execution with a scheduler of `strategy` seeded with `seed`.
///
/// # Errors
///
/// [`HostError`] when the host cannot run the module.
pub fn run_once(
    program: &mut Program,
    strategy: Strategy,
    seed: u64,
    pct_depth: u32,
    run: &Setup,
) -> Result<ExecutionResult, HostError> {
    let model = program.point_model();
    let sched = scheduler_under(model, strategy, seed, pct_depth, PCT_INITIAL_STEPS);
    let result = crate::execution::execute(program, sched, run);
    check_host(&result)?;
    Ok(result)
}

fn check_host(result: &ExecutionResult) -> Result<(), HostError> {
    match &result.outcome {
        Outcome::HostError(message) => Err(HostError(message.clone())),
        Outcome::Diverged(e) => Err(HostError(e.to_string())),
        _ => Ok(()),
    }
}

/// Explores `program` until a failure or a limit.
///
/// `progress` is called after every execution.
///
/// # Errors
///
/// [`HostError`] when the host cannot run the module.
pub fn explore(
    program: &mut Program,
    options: &ExploreOptions,
    progress: impl FnMut(Progress),
) -> Result<Exploration, HostError> {
    if options.setup.races != RaceMode::Schedule || !options.setup.run.point_sites.is_empty() {
        return explore_with(program, options, progress);
    }
    let budget = Budget::new(None, options.time_limit);
    let found = races_schedule::discover(program, options)?;
    let mut scheduled = options.clone();
    scheduled.setup.run.point_sites = found.sites.clone();
    // The time limit is the whole exploration's, the search for racy sites
    // included.
    scheduled.time_limit = budget.time_left();
    let mut exploration = explore_with(program, &scheduled, progress)?;
    exploration.race_points = Some(found);
    Ok(exploration)
}

/// [`explore`] with the setup as it is.
fn explore_with(
    program: &mut Program,
    options: &ExploreOptions,
    progress: impl FnMut(Progress),
) -> Result<Exploration, HostError> {
    match options.strategy {
        Strategy::Dfs => {
            let search = DfsSearch::new(options.preemption_bound);
            systematic::explore(program, options, search, progress)
        }
        Strategy::Dpor if options.stateful => {
            let search = DporSearch::of(program).stateful();
            systematic::explore(program, options, search, progress)
        }
        Strategy::Dpor => systematic::explore(program, options, DporSearch::of(program), progress),
        strategy => {
            let turns = Turns::new(strategy, options.pct_depth).under(program.point_model());
            sampling::explore(program, options, turns, progress)
        }
    }
}
