//! `weft explore`: executions under fresh schedules until one fails.

use super::args::{JunitArgs, ModuleArgs, OutputArgs, parse_positive_duration, pct_depth_range};
use super::files::save_replay;
use super::output::{minimize_verdict, print_report};
use super::progress::ProgressLine;
use crate::explore::{Exhausted, Exploration, ExploreOptions, Shard, Withheld, explore};
use crate::imunit::driver::unfired_events;
use crate::replay::minimize::Minimization;
use crate::report::junit;
use crate::report::text::Report;
use crate::runtime::{Failure, FailureKind, Program};
use crate::sched::Strategy;
use crate::svcomp::{Coverage, Verdict};
use anyhow::Result;
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// An exploration's time limit ran out before its first execution ended.
#[derive(Debug, thiserror::Error)]
#[error(
    "no execution finished within --time-limit {}: the first was still running when it ran out (raise it)",
    humantime::format_duration(*.0)
)]
pub struct NothingFinished(pub std::time::Duration);

/// Explore schedules until a failure is found or a limit is reached.
#[derive(Args, Debug)]
pub struct ExploreArgs {
    #[command(flatten)]
    pub(super) module: ModuleArgs,
    /// Scheduling strategy: `portfolio` (POS, PCT with depths 3 and 2,
    /// uniform random and SURW taking turns), `random`, `pct` (depth
    /// `--pct-depth`), `pos` (partial order sampling), `surw` (selectively
    /// uniform random walk), `dfs` (every schedule with at most
    /// `--preemption-bound` preemptions, by increasing bound) or `dpor`
    /// (every schedule, up to the order of steps that commute: an
    /// exhaustive search that says when it is complete).
    #[arg(long, value_enum, default_value = "portfolio")]
    strategy: Strategy,
    /// Most executions (default 1000; unlimited with --time-limit, `dfs`
    /// or `dpor`).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    iterations: Option<u64>,
    /// Most wall time for the whole exploration (e.g. `30s`, `2m`).
    #[arg(long, value_parser = parse_positive_duration)]
    time_limit: Option<Duration>,
    /// Exploration seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// PCT bug depth `d` (number of priority change points + 1).
    #[arg(long, default_value_t = 3, value_parser = pct_depth_range())]
    pct_depth: u32,
    /// With `--strategy dfs`: the most preemptions a schedule may have
    /// (default 2).
    #[arg(long)]
    preemption_bound: Option<u32>,
    /// Parallel workers (default: one per core). Execution `i` gets the
    /// same schedule whatever their number, and the failure reported is
    /// the one of the lowest index. `dfs` and `dpor` run on one.
    #[arg(long)]
    jobs: Option<usize>,
    /// Run only the executions whose index is K modulo N (`K/N`, from
    /// `0/N`), to split an exploration over the nodes of a batch system;
    /// `weft merge` combines the shards' `--json` results.
    #[arg(long)]
    shard: Option<Shard>,
    #[command(flatten)]
    pub(super) output: OutputArgs,
    #[command(flatten)]
    junit: JunitArgs,
}

/// What `weft explore` found, with everything its report needs.
pub struct Explored {
    wasm: Vec<u8>,
    program: Program,
    exploration: Exploration,
    schedule_error: Option<Failure>,
    strategy: String,
    headline: String,
    replay_file: Option<PathBuf>,
    minimization: Option<Minimization>,
    extra: serde_json::Value,
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

    /// The replay file of its failure, if one was saved.
    pub fn replay_file(&self) -> Option<&Path> {
        self.replay_file.as_deref()
    }

    /// Its failure told in plain words (see [`crate::explain::retell`]),
    /// for a module loaded with the access log and run with `setup`.
    pub fn story(&mut self, setup: &crate::execution::Setup) -> Option<crate::explain::Story> {
        let found = self.exploration.failure.as_ref()?;
        crate::explain::retell(&mut self.program, setup, &found.result, &found.failure)
    }

    /// The headline of its report.
    pub fn headline(&self) -> &str {
        &self.headline
    }

    /// Its report (of `module`, the module explored).
    pub fn report<'a>(&'a self, module: &'a Path) -> Report<'a> {
        let exploration = &self.exploration;
        Report {
            module,
            wasm: &self.wasm,
            sites: self.program.sites(),
            executions: exploration.executions,
            distinct_traces: exploration.distinct_traces,
            elapsed: exploration.elapsed,
            headline: self.headline.clone(),
            result: exploration
                .failure
                .as_ref()
                .map(|f| &f.result)
                .or(exploration.last.as_ref()),
            failure: exploration
                .failure
                .as_ref()
                .map(|f| &f.failure)
                .or(self.schedule_error.as_ref()),
            replay_file: self.replay_file.clone(),
            minimization: self.minimization,
            inconclusive: self
                .exploration
                .inconclusive
                .describe(exploration.executions),
            extra: self.extra.clone(),
        }
    }
}

pub fn run(mut args: ExploreArgs) -> Result<u8> {
    let explored = explore_module(&mut args, true)?;
    let report = explored.report(&args.module.module);
    let code = print_report(&report, &args.output);
    let case = junit::Case {
        name: format!("explore ({})", explored.strategy),
        time: explored.exploration.elapsed,
        failure: report.failure.map(|f| junit::CaseFailure {
            kind: f.kind.name().to_string(),
            message: f.message.trim_end().to_string(),
        }),
        output: report.text(args.output.shape()),
    };
    args.junit
        .write(&args.module.module, &[case], explored.exploration.elapsed)?;
    Ok(code)
}

/// Runs `weft explore` as `args` say, without printing (but for a progress
/// line after a second, with `show_progress`).
pub fn explore_module(args: &mut ExploreArgs, show_progress: bool) -> Result<Explored> {
    args.module.default_races = crate::race::RaceMode::Fail;
    let systematic = args.strategy == Strategy::Dfs;
    let exhaustive = args.strategy == Strategy::Dpor;
    if args.preemption_bound.is_some() && !systematic {
        anyhow::bail!(
            "--preemption-bound bounds the systematic search: it needs --strategy dfs (the {} strategy samples schedules)",
            args.strategy.name()
        );
    }
    if (systematic || exhaustive) && (args.jobs.is_some_and(|j| j > 1) || args.shard.is_some()) {
        anyhow::bail!(
            "--jobs and --shard split executions that are independent of each other; the {} search decides each execution from the ones before, and runs on one worker",
            args.strategy.name()
        );
    }
    if args.jobs == Some(0) {
        anyhow::bail!("--jobs must be at least 1");
    }
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    // The exhaustive search sees the C library's synchronisation as one
    // step per call, as model checkers do.
    args.module.library_steps = args.strategy == Strategy::Dpor;
    let (wasm, mut program) = args.module.load()?;
    let options = ExploreOptions {
        strategy: args.strategy,
        seed: args.seed,
        pct_depth: args.pct_depth,
        preemption_bound: args.preemption_bound.unwrap_or(2),
        iterations: match (args.iterations, args.time_limit) {
            (Some(n), _) => Some(n),
            (None, Some(_)) => None,
            (None, None) if systematic || exhaustive => None,
            (None, None) => Some(1000),
        },
        time_limit: args.time_limit,
        run: args.module.run_config(),
        keep_going: false,
        jobs: if systematic || exhaustive { 1 } else { jobs },
        shard: args.shard.unwrap_or_default(),
    };
    let mut progress = ProgressLine::new(show_progress);
    let mut exploration = explore(&mut program, &options, |p| {
        progress.update(p.elapsed, || {
            let rate = p.executions as f64 / p.elapsed.as_secs_f64().max(1e-9);
            format!(
                "{} executions, {} distinct traces, {rate:.0}/s",
                p.executions, p.distinct_traces
            )
        });
    })?;
    progress.finish();
    if exploration.executions == 0
        && exploration.failure.is_none()
        && let Some(limit) = args.time_limit
    {
        return Err(NothingFinished(limit).into());
    }
    let strategy = match (args.strategy, &exploration.failure) {
        (Strategy::Pct, _) => format!("pct depth {}", args.pct_depth),
        (Strategy::Portfolio, Some(found)) => match found.found_by.pct_depth {
            Some(depth) => format!("portfolio: pct depth {depth}"),
            None => format!("portfolio: {}", found.found_by.strategy.name()),
        },
        (other, _) => other.name().to_string(),
    };
    if let Some(found) = &exploration.race_points {
        // The failure's replay file records them.
        args.module.point_sites = found.sites.clone();
    }
    let minimization = match exploration.failure.as_mut() {
        Some(found) => minimize_verdict(
            &args.output,
            &mut program,
            &args.module.run_config(),
            &mut found.result,
            &mut found.failure,
        ),
        None => None,
    };
    let race_note = exploration
        .race_points
        .as_ref()
        .map_or(String::new(), |found| format!("; {}", found.describe()));
    // A schedule naming events the program never fires cannot have held:
    // that is no pass.
    let schedule_error = match &exploration.failure {
        None => unfired_events(
            &mut program,
            &options.run,
            args.seed,
            args.pct_depth,
            &exploration,
        )?
        .map(|message| Failure {
            kind: FailureKind::ScheduleError,
            message,
            thread: 0,
        }),
        Some(_) => None,
    };
    let withheld = match exploration.exhausted {
        Some(Exhausted::Unclaimed(why)) => Some(why),
        _ => None,
    };
    let (mut headline, replay_file) = match &exploration.failure {
        None if schedule_error.is_some() => (
            format!(
                "schedule-error after {} executions ({strategy}, seed {}) in {:.2?}",
                exploration.executions, args.seed, exploration.elapsed
            ),
            None,
        ),
        Some(found) => (
            format!(
                "{} failure found after {} executions ({strategy}, seed {}) in {:.2?}",
                found.failure.kind.name(),
                exploration.executions,
                args.seed,
                exploration.elapsed
            ),
            save_replay(
                &args.output,
                &args.module,
                &wasm,
                &found.result,
                &found.failure,
                found.found_by.clone(),
            )?,
        ),
        None if exploration.exhausted == Some(Exhausted::All) => (
            format!(
                "explored all {} schedules: no failure (dpor, {}) in {:.2?}",
                exploration.executions,
                args.module.points.describe(),
                exploration.elapsed,
            ),
            None,
        ),
        None if withheld.is_some() => (
            format!(
                "no failure in {} executions ({}) in {:.2?}, and no claim: the search ran out of schedules to try, but {}",
                exploration.executions,
                args.strategy.name(),
                exploration.elapsed,
                withheld.map(Withheld::describe).unwrap_or_default(),
            ),
            None,
        ),
        None if exploration.exhausted.is_some() => (
            format!(
                "explored all {} schedules with at most {} preemptions: no failure (dfs) in {:.2?}",
                exploration.executions, options.preemption_bound, exploration.elapsed,
            ),
            None,
        ),
        None => (
            format!(
                "no failure in {} executions ({strategy}, seed {}) in {:.2?}, {}{} distinct traces{}",
                exploration.executions,
                args.seed,
                exploration.elapsed,
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
            None,
        ),
    };
    headline.push_str(&race_note);
    let verdict = args.module.property.map(|property| {
        let coverage = Coverage {
            points: args.module.points,
            races_fail: options.run.races == crate::race::RaceMode::Fail,
        };
        let verdict = Verdict::of(&exploration, property, coverage);
        headline.push_str(&format!(
            "\nverdict {}: {} ({})",
            property.name(),
            verdict.name(),
            Verdict::reason(&exploration, property, coverage)
        ));
        verdict
    });
    let extra = serde_json::json!({
        "strategy": args.strategy.name(),
        "seed": args.seed,
        "pct_depth": (args.strategy == Strategy::Pct).then_some(args.pct_depth),
        "failing_execution_seed": exploration.failure.as_ref().map(|f| f.found_by.seed),
        "failing_execution_index": exploration.failure.as_ref().map(|f| f.index),
        "jobs": options.jobs,
        "shard": args.shard.map(|s| s.to_string()),
        "discarded": exploration.discarded,
        "distinct_traces_at_least": exploration.distinct_traces_capped,
        "preemption_bound": systematic.then_some(options.preemption_bound),
        "bound_exhausted": matches!(exploration.exhausted, Some(Exhausted::Bounded { .. })),
        "exhaustive": exploration.exhausted == Some(Exhausted::All),
        "search_ended_without_claim": matches!(exploration.exhausted, Some(Exhausted::Unclaimed(_))),
        "claim_withheld_because": match exploration.exhausted {
            Some(Exhausted::Unclaimed(why)) => Some(why.describe()),
            _ => None,
        },
        "races": options.run.races,
        "property": args.module.property,
        "verdict": verdict,
        "race_points": exploration.race_points.as_ref().map(|found| serde_json::json!({
            "sites": found.sites,
            "racing_sites": found.racing_sites,
            "racy_bytes": found.racy_bytes,
            "executions": found.executions,
        })),
    });
    Ok(Explored {
        wasm,
        program,
        exploration,
        schedule_error,
        strategy,
        headline,
        replay_file,
        minimization,
        extra,
    })
}
