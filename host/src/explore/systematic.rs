//! The loop of the systematic searches (`dfs`, `dpor`): each execution is
//! planned from the ones before it, so they run one by one, on one worker.
//!
//! A [`Search`] says what to run next and learns from what ran; the loop
//! around it (budget, time limit, failures, what the search may claim
//! when it runs out) is written once, here.

use super::tally::{Summary, Tally};
use super::{
    Exhausted, Exploration, ExploreOptions, FailingExecution, Progress, Withheld, check_host,
};
use crate::execution::HostError;
use crate::instrument::Points;
use crate::race::RaceMode;
use crate::replay::file::FoundBy;
use crate::runtime::{Cut, ExecutionResult, Outcome, Program};
use crate::sched::{Scheduler, Strategy, execution_seed};

/// A systematic search: the schedule of each execution, planned from what
/// the executions before it taught the search.
pub(crate) trait Search {
    /// The strategy each execution runs under, which the search takes back
    /// afterwards to read what it recorded.
    type Scheduler: Scheduler + 'static;

    /// The strategy a failure's replay file names.
    const STRATEGY: Strategy;

    /// The scheduler of the next execution; `None` when every schedule
    /// the search plans has run.
    fn next_scheduler(&mut self) -> Option<Self::Scheduler>;

    /// Learns from the execution that ran under `scheduler` and ended as
    /// `result`; why that execution cannot back the search's claim, if it
    /// cannot.
    fn learn(&mut self, scheduler: Self::Scheduler, result: &ExecutionResult) -> Option<Withheld>;

    /// What the search covered once it ran out of schedules, if every
    /// execution backs the claim.
    fn claim(&self) -> Exhausted;

    /// Whether its executions name the state of each decision their
    /// strategy asks about (see [`crate::runtime::RunConfig::keyed_states`]).
    fn keys_states(&self) -> bool {
        false
    }

    /// What a stateful search saw of the program's states.
    fn state_space(&self) -> Option<super::StateSpace> {
        None
    }
}

/// Why a systematic search under `options` can claim nothing whatever it
/// runs, if it cannot.
fn withheld_from_start(program: &Program, options: &ExploreOptions) -> Option<Withheld> {
    if options.setup.holds_threads() {
        return Some(Withheld::HeldThreads);
    }
    // Steps are told apart by the operations at their scheduling points:
    // plain accesses in between are seen only when every one is a point,
    // or when races are failures (a program without races behaves as if
    // only its synchronisation were points).
    let sees_plain_accesses =
        program.options().points == Points::Memory || options.setup.races == RaceMode::Fail;
    (!sees_plain_accesses).then_some(Withheld::RacesUnchecked)
}

/// Explores `program` with `search` until a failure, a limit, or the end of
/// its schedules.
pub(super) fn explore<S: Search>(
    program: &mut Program,
    options: &ExploreOptions,
    mut search: S,
    mut progress: impl FnMut(Progress),
) -> Result<Exploration, HostError> {
    let mut tally = Tally::new(options);
    let mut timed = tally.timed_setup();
    timed.run.keyed_states = search.keys_states();
    let mut withheld = withheld_from_start(program, options);
    let mut exhausted = None;
    let mut first_failure = None;
    let mut last = None;
    // Executions that reached the step limit, which the search decided no
    // further (the first of them by index).
    let mut went_fair = 0;
    let mut first_fair = None;
    while !tally.done() {
        let Some(scheduler) = search.next_scheduler() else {
            exhausted = Some(match withheld {
                None => search.claim(),
                Some(why) => Exhausted::Unclaimed(why),
            });
            break;
        };
        let index = tally.executions;
        let (result, scheduler) = crate::execution::execute_keeping(program, scheduler, &timed);
        check_host(&result)?;
        let summary = Summary::of(&result);
        if summary.stopped {
            break;
        }
        withheld = withheld.or(search.learn(scheduler, &result));
        if result.fair_from.is_some() && !matches!(result.outcome, Outcome::Discarded { .. }) {
            went_fair += 1;
            first_fair.get_or_insert(index);
        }
        tally.take(index, summary, &mut progress);
        if let Some(failure) = result.outcome.failure()
            && first_failure.is_none()
        {
            first_failure = Some(FailingExecution {
                result: result.clone(),
                failure,
                found_by: FoundBy {
                    strategy: S::STRATEGY,
                    seed: execution_seed(options.seed, index),
                    pct_depth: None,
                    execution: tally.executions,
                },
                index,
            });
        }
        last = Some(result);
    }
    // A search none of whose executions got past the step limit saw
    // nothing of what comes after it: no verdict.
    if let Some(first) = first_fair
        && first_failure.is_none()
        && went_fair == tally.executions - tally.discarded
    {
        let steps = options.setup.run.limits.max_steps;
        let cut = (first, Cut::SearchSteps { steps });
        tally.inconclusive.executions = went_fair;
        tally.inconclusive.first = Some(match tally.inconclusive.first {
            Some(known) if known.0 < first => known,
            _ => cut,
        });
    }
    let mut exploration = tally.exploration(first_failure, last);
    exploration.exhausted = exhausted;
    exploration.state_space = search.state_space();
    Ok(exploration)
}
