//! `weft explore` as a library call: explore a loaded program, minimize the
//! failure it finds, check an IMUnit schedule's events, and sum the result
//! up. It reads no arguments and prints nothing: the command and
//! [`crate::Check`] are both built on it.

use crate::execution::Setup;
use crate::explore::search_again_at_races::search_again_at_racy_sites;
use crate::explore::{Exhausted, Exploration, ExploreOptions, Progress, Withheld, explore};
use crate::imunit::driver::unfired_events;
use crate::instrument::{InstrumentOptions, PointModel, Points};
use crate::race::RaceMode;
use crate::replay::file::Run;
use crate::replay::finish::Finish;
use crate::replay::minimize::{MOST_TIME, Minimization, budget, minimize_failure};
use crate::runtime::{Failure, FailureKind, Program};
use crate::sched::Strategy;
use crate::svcomp::{Coverage, Property, Verdict};
use anyhow::Result;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// An exploration's time limit ran out before its first execution ended.
#[derive(Debug, thiserror::Error)]
#[error(
    "no execution finished within --time-limit {}: the first was still running when it ran out (raise it)",
    humantime::format_duration(*.0)
)]
pub struct NothingFinished(pub Duration);

/// What to explore and how.
#[derive(Clone, Debug)]
pub struct Request {
    /// The search, and the setup of every execution.
    pub options: ExploreOptions,
    /// How the program was instrumented (a replay file records it).
    pub instrument: InstrumentOptions,
    /// Search a failure's schedule for a smaller one before reporting it.
    pub minimize: bool,
}

impl Request {
    /// The instrumentation an exploration with `strategy` needs: the
    /// points and the point model asked for (see
    /// [`PointModel::instrument`]), and the race check's logging when it
    /// is on.
    pub fn instrument_for(
        strategy: Strategy,
        model: PointModel,
        points: Points,
        races: RaceMode,
    ) -> InstrumentOptions {
        InstrumentOptions {
            points,
            log_calls: false,
            ..model.instrument(strategy == Strategy::Dpor)
        }
        .with_race_check(races != RaceMode::Off)
    }

    /// The workers when no number is given: one per core for the sampling
    /// strategies, one for the systematic searches (each of their
    /// executions is decided from the ones before).
    pub fn default_jobs(strategy: Strategy) -> usize {
        if matches!(strategy, Strategy::Dfs | Strategy::Dpor) {
            1
        } else {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        }
    }

    /// The most executions when none is given: unlimited for a time-limited
    /// exploration and for the systematic searches (they end by
    /// themselves), else 1000.
    pub fn default_iterations(strategy: Strategy, time_limit: Option<Duration>) -> Option<u64> {
        let systematic = matches!(strategy, Strategy::Dfs | Strategy::Dpor);
        (time_limit.is_none() && !systematic).then_some(1000)
    }
}

/// What an exploration found, with everything its report needs.
pub struct Explored {
    wasm: Vec<u8>,
    program: Program,
    request: Request,
    exploration: Exploration,
    schedule_error: Option<Failure>,
    minimization: Option<Minimization>,
    strategy: String,
    headline: String,
}

/// Explores `program` (instrumented from `wasm`) as `request` says, telling
/// `progress` how far it got now and then.
///
/// # Errors
///
/// When the exploration cannot run (see [`crate::execution::HostError`]), or when its
/// time limit ran out before one execution ended ([`NothingFinished`]).
pub fn explore_program(
    wasm: Vec<u8>,
    mut program: Program,
    mut request: Request,
    mut progress: impl FnMut(Progress),
) -> Result<Explored> {
    let mut exploration = explore(&mut program, &request.options, &mut progress)?;
    // The exhaustive search for a call stopped by a data race (which
    // violates nothing): search again switching at the racing accesses.
    if request.options.setup.property == Some(Property::UnreachCall)
        && request.options.strategy == Strategy::Dpor
        && request.options.setup.races == RaceMode::Fail
    {
        let spent = exploration.elapsed;
        search_again_at_racy_sites(
            &mut program,
            &mut request.options,
            &mut exploration,
            BTreeSet::new(),
            spent,
            &mut progress,
        )?;
    }
    let options = &request.options;
    if exploration.executions == 0
        && exploration.failure.is_none()
        && let Some(limit) = options.time_limit
    {
        return Err(NothingFinished(limit).into());
    }
    let setup = exploration.setup(&options.setup);
    let minimization = match exploration.failure.as_mut() {
        Some(found) if request.minimize => minimize_failure(
            &mut program,
            &setup,
            &mut found.result,
            &mut found.failure,
            budget(MOST_TIME),
        ),
        _ => None,
    };
    // A schedule naming events the program never fires cannot have held:
    // that is no pass.
    let schedule_error = match &exploration.failure {
        None => unfired_events(
            &mut program,
            &options.setup,
            options.seed,
            options.pct_depth,
            &exploration,
        )?
        .map(|message| Failure {
            kind: FailureKind::ScheduleError,
            message,
            thread: 0,
        }),
        Some(_) => None,
    };
    let strategy = strategy_label(options, &exploration);
    let mut explored = Explored {
        wasm,
        program,
        exploration,
        schedule_error,
        minimization,
        headline: String::new(),
        strategy,
        request,
    };
    explored.headline = explored.describe();
    Ok(explored)
}

/// The strategy as a report names it: with PCT's depth, and with the one
/// of a portfolio that found the failure.
fn strategy_label(options: &ExploreOptions, exploration: &Exploration) -> String {
    match (options.strategy, &exploration.failure) {
        (Strategy::Pct, _) => format!("pct depth {}", options.pct_depth),
        (Strategy::Portfolio, Some(found)) => match found.found_by.pct_depth {
            Some(depth) => format!("portfolio: pct depth {depth}"),
            None => format!("portfolio: {}", found.found_by.strategy.name()),
        },
        (other, _) => other.name().to_string(),
    }
}

impl Explored {
    /// The failure: an execution's, or a schedule naming events the
    /// program never fires.
    pub fn failure(&self) -> Option<&Failure> {
        self.exploration
            .failure
            .as_ref()
            .map(|f| &f.failure)
            .or(self.schedule_error.as_ref())
    }

    /// The exploration.
    pub fn exploration(&self) -> &Exploration {
        &self.exploration
    }

    /// The strategy as the report names it.
    pub fn strategy(&self) -> &str {
        &self.strategy
    }

    /// The module's bytes.
    pub fn wasm(&self) -> &[u8] {
        &self.wasm
    }

    /// The setup a replay of its executions needs (with `--races schedule`,
    /// the racy sites found first were scheduling points too).
    pub fn setup(&self) -> Setup {
        self.exploration.setup(&self.request.options.setup)
    }

    /// Writes the replay file of its failure (of `module`, minimized
    /// already when asked) to `path`, when it found one and a path is
    /// given; where it went.
    ///
    /// # Errors
    ///
    /// When the replay file would overwrite the module, or cannot be
    /// written.
    pub fn save_failure(&self, module: &Path, path: Option<PathBuf>) -> Result<Option<PathBuf>> {
        let (Some(path), Some(found)) = (path, &self.exploration.failure) else {
            return Ok(None);
        };
        let run = Run {
            module,
            wasm: &self.wasm,
            instrument: self.request.instrument,
            setup: self.setup(),
        };
        let finish = Finish {
            minimize: false,
            replay_path: Some(path),
        };
        finish.save(run, &found.result, &found.failure, found.found_by.clone())
    }

    /// Its failure told in plain words (see [`crate::explain::retell()`]),
    /// for a module loaded with the access log and run with `setup`.
    pub fn story(&mut self, setup: &Setup) -> Option<crate::explain::Story> {
        let found = self.exploration.failure.as_ref()?;
        crate::explain::retell(&mut self.program, setup, &found.result, &found.failure)
    }

    /// The headline of its report.
    pub fn headline(&self) -> &str {
        &self.headline
    }

    /// The program explored.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The program explored, to run more executions of.
    pub fn program_mut(&mut self) -> &mut Program {
        &mut self.program
    }

    /// How the failure's schedule was minimized, if it was.
    pub fn minimization(&self) -> Option<Minimization> {
        self.minimization
    }

    /// The headline: what was found or covered, how, and in how long; the
    /// racy sites a `--races schedule` exploration switched at; the
    /// property's verdict.
    fn describe(&self) -> String {
        let exploration = &self.exploration;
        let options = &self.request.options;
        let strategy = &self.strategy;
        let seed = options.seed;
        let elapsed = exploration.elapsed;
        let executions = exploration.executions;
        let mut headline = match (&exploration.failure, exploration.exhausted) {
            (None, _) if self.schedule_error.is_some() => format!(
                "schedule-error after {executions} executions ({strategy}, seed {seed}) in {elapsed:.2?}"
            ),
            (Some(found), _) => format!(
                "{} failure found after {executions} executions ({strategy}, seed {seed}) in {elapsed:.2?}",
                found.failure.kind.name(),
            ),
            (None, Some(Exhausted::All)) => format!(
                "explored all {executions} schedules: no failure (dpor, {}{}) in {elapsed:.2?}",
                self.request.instrument.points.describe(),
                self.state_space_words()
                    .map(|words| format!(", {words}"))
                    .unwrap_or_default(),
            ),
            (None, Some(Exhausted::Unclaimed(why))) => format!(
                "no failure in {executions} executions ({}) in {elapsed:.2?}, and no claim: the search ran out of schedules to try, but {}",
                options.strategy.name(),
                Withheld::describe(why),
            ),
            (None, Some(Exhausted::Bounded { .. })) => format!(
                "explored all {executions} schedules with at most {} preemptions: no failure (dfs) in {elapsed:.2?}",
                options.preemption_bound,
            ),
            (None, None) => format!(
                "no failure in {executions} executions ({strategy}, seed {seed}) in {elapsed:.2?}, {}{} distinct traces{}",
                if exploration.distinct_traces_capped {
                    "at least "
                } else {
                    ""
                },
                exploration.distinct_traces,
                if exploration.discarded > 0 {
                    format!(", {} discarded by guest assumptions", exploration.discarded)
                } else {
                    String::new()
                }
            ),
        };
        if exploration.failure.is_none()
            && exploration.exhausted != Some(Exhausted::All)
            && let Some(words) = self.state_space_words()
        {
            headline.push_str(&format!("; {words}"));
        }
        if let Some(found) = &exploration.race_points {
            headline.push_str(&format!("; {}", found.describe()));
        }
        let sites = options.setup.run.point_sites.len();
        if sites > 0 {
            headline.push_str(&format!(
                ", switching also at {sites} plain-access sites of racy variables (data races stopped the searches before)"
            ));
        }
        if let Some(property) = options.setup.property {
            let coverage = self.coverage();
            headline.push_str(&format!(
                "\nverdict {}: {} ({})",
                property.name(),
                Verdict::of(exploration, property, coverage).name(),
                Verdict::reason(exploration, property, coverage)
            ));
        }
        headline
    }

    /// What a stateful search saw of the program's states, in words.
    fn state_space_words(&self) -> Option<String> {
        self.exploration.state_space.map(|space| {
            let again = match space.restarts {
                0 => String::new(),
                1 => "; it began again once, when an execution read memory none had read before".into(),
                n => format!(
                    "; it began again {n} times, when an execution read memory none had read before"
                ),
            };
            format!(
                "stateful: {} states, {} executions ended at a state explored before, {} ran on without states past a state they came back to, at most {} decisions deep{again}",
                space.states, space.matched, space.cycles, space.depth
            )
        })
    }

    /// What the exploration switched at and looked for.
    fn coverage(&self) -> Coverage {
        Coverage {
            points: self.request.instrument.points,
            races_fail: self.request.options.setup.races == RaceMode::Fail,
        }
    }

    /// The property's verdict, when a property was checked.
    fn verdict(&self) -> Option<Verdict> {
        let property = self.request.options.setup.property?;
        Some(Verdict::of(&self.exploration, property, self.coverage()))
    }

    /// What makes the exploration the one it is, whatever part of it a run
    /// did: the module, its instrumentation, the setup of its executions
    /// and how the strategy decides each execution's schedule. Shards of
    /// one exploration agree on it, and `weft merge` checks that they do.
    fn identity(&self) -> serde_json::Value {
        let options = &self.request.options;
        serde_json::json!({
            "module_blake3": blake3::hash(&self.wasm).to_hex().to_string(),
            "instrument": self.request.instrument,
            "setup": options.setup,
            "strategy": options.strategy.name(),
            "seed": options.seed,
            "pct_depth": options.pct_depth,
            "preemption_bound": options.preemption_bound,
            "shards": options.shard.count,
        })
    }

    /// The fields a JSON report adds to the common ones.
    pub fn summary(&self) -> serde_json::Value {
        let exploration = &self.exploration;
        let options = &self.request.options;
        let strategy = options.strategy;
        let shard = options.shard;
        serde_json::json!({
            "strategy": strategy.name(),
            "seed": options.seed,
            "pct_depth": (strategy == Strategy::Pct).then_some(options.pct_depth),
            "failing_execution_seed": exploration.failure.as_ref().map(|f| f.found_by.seed),
            "failing_execution_index": exploration.failure.as_ref().map(|f| f.index),
            "jobs": options.jobs,
            "shard": (shard.count > 1).then(|| shard.to_string()),
            "discarded": exploration.discarded,
            "distinct_traces_at_least": exploration.distinct_traces_capped,
            "preemption_bound": (strategy == Strategy::Dfs).then_some(options.preemption_bound),
            "bound_exhausted": matches!(exploration.exhausted, Some(Exhausted::Bounded { .. })),
            "exhaustive": exploration.exhausted == Some(Exhausted::All),
            "state_space": exploration.state_space,
            "search_ended_without_claim": matches!(exploration.exhausted, Some(Exhausted::Unclaimed(_))),
            "claim_withheld_because": match exploration.exhausted {
                Some(Exhausted::Unclaimed(why)) => Some(why.describe()),
                _ => None,
            },
            "races": options.setup.races,
            "property": options.setup.property,
            "verdict": self.verdict(),
            "exploration": self.identity(),
            "race_points": exploration.race_points.as_ref().map(|found| serde_json::json!({
                "sites": found.sites,
                "racing_sites": found.racing_sites,
                "racy_bytes": found.racy_bytes,
                "executions": found.executions,
            })),
        })
    }
}
