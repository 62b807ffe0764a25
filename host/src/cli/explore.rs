//! `weft explore`: executions under fresh schedules until one fails.

use super::args::{JunitArgs, ModuleArgs, OutputArgs, parse_positive_duration, pct_depth_range};
use super::output::print_report;
use super::progress::ProgressLine;
use crate::explore::{ExploreOptions, Shard};
use crate::explore_program::{Explored, Request, explore_program};
use crate::instrument::InstrumentOptions;
use crate::report::junit;
use crate::report::text::Report;
use crate::sched::Strategy;
use anyhow::Result;
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    /// With `--strategy dpor`: a stateful search. Each execution ends at a
    /// state (every thread's frames, memory, what each waits for) the
    /// search explored before, and the races of that state's future with
    /// the steps before are reversed all the same; spinning programs and
    /// programs whose schedules meet in few states end sooner. Executions
    /// run on a build of the module that reads frames (slower per step).
    #[arg(long)]
    stateful: bool,
    /// Parallel workers (default: one per core). Execution `i` gets the
    /// same schedule whatever their number, and the failure reported is
    /// the one of the lowest index. `dfs` and `dpor` run on one. At most
    /// 32: each worker reserves address space for its own pool of threads,
    /// and workers beyond the machine's cores add nothing (split larger
    /// explorations with --shard).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=MAX_JOBS))]
    jobs: Option<u64>,
    /// Run only the executions whose index is K modulo N (`K/N`, from
    /// `0/N`), to split an exploration over the nodes of a batch system;
    /// `weft merge` combines the shards' `--json` results. N is at most
    /// 1,000,000.
    #[arg(long)]
    shard: Option<Shard>,
    #[command(flatten)]
    pub(super) output: OutputArgs,
    #[command(flatten)]
    junit: JunitArgs,
}

/// The most workers `--jobs` takes.
const MAX_JOBS: u64 = 32;

/// What `weft explore` found, and where it saved the failure's replay
/// file.
pub struct ExploredModule {
    /// The exploration and its findings.
    pub explored: Explored,
    /// The replay file of its failure, if one was saved.
    pub replay_file: Option<PathBuf>,
}

impl ExploredModule {
    /// Its report (of `module`, the module explored).
    pub fn report<'a>(&'a self, module: &'a Path) -> Report<'a> {
        Report::of_exploration(&self.explored, module, self.replay_file.clone())
    }
}

pub fn run(mut args: ExploreArgs) -> Result<u8> {
    let found = explore_module(&mut args, true)?;
    let report = found.report(&args.module.module);
    let code = print_report(&report, &args.output);
    let elapsed = found.explored.exploration().elapsed;
    let case = junit::Case {
        name: format!("explore ({})", found.explored.strategy()),
        time: elapsed,
        failure: report.failure.map(junit::CaseFailure::of),
        output: report.text(args.output.shape()),
    };
    args.junit.write(&args.module.module, &[case], elapsed)?;
    Ok(code)
}

/// Runs `weft explore` as `args` say and saves the failure's replay file,
/// without printing (but for a progress line after a second, with
/// `show_progress`).
pub fn explore_module(args: &mut ExploreArgs, show_progress: bool) -> Result<ExploredModule> {
    let request = request(args)?;
    // Shards share a folder (a batch system's array job): each saves its
    // own replay file, and `weft merge` names the failing one's.
    let shard = request.options.shard;
    if shard.count > 1 {
        args.output.replay_tag = Some(format!("shard-{}-of-{}", shard.index, shard.count));
    }
    args.output
        .outputs(&args.module.module, Some(&args.junit))
        .check()?;
    let (wasm, program) = args.module.load_with(request.instrument)?;
    let mut progress = ProgressLine::new(show_progress);
    let explored = explore_program(wasm, program, request, |p| {
        progress.update(p.elapsed, || {
            let rate = p.executions as f64 / p.elapsed.as_secs_f64().max(1e-9);
            format!(
                "{} executions, {} distinct traces, {rate:.0}/s",
                p.executions, p.distinct_traces
            )
        });
    })?;
    progress.finish();
    // The exploration minimized its failure already.
    let module = &args.module.module;
    let replay_file = explored.save_failure(module, args.output.replay_path(module))?;
    Ok(ExploredModule {
        explored,
        replay_file,
    })
}

/// The exploration `args` ask for, once their combination is checked.
fn request(args: &mut ExploreArgs) -> Result<Request> {
    args.module.default_races = crate::race::RaceMode::Fail;
    let strategy = args.strategy;
    let systematic = matches!(strategy, Strategy::Dfs | Strategy::Dpor);
    if args.preemption_bound.is_some() && strategy != Strategy::Dfs {
        anyhow::bail!(
            "--preemption-bound bounds the systematic search: it needs --strategy dfs (the {} strategy samples schedules)",
            strategy.name()
        );
    }
    if args.stateful && strategy != Strategy::Dpor {
        anyhow::bail!(
            "--stateful makes the exhaustive search remember states: it needs --strategy dpor (the {} strategy {})",
            strategy.name(),
            if systematic {
                "bounds preemptions"
            } else {
                "samples schedules"
            }
        );
    }
    if systematic && (args.jobs.is_some_and(|j| j > 1) || args.shard.is_some()) {
        anyhow::bail!(
            "--jobs and --shard split executions that are independent of each other; the {} search decides each execution from the ones before, and runs on one worker",
            strategy.name()
        );
    }
    let races = args.module.race_mode();
    Ok(Request {
        options: ExploreOptions {
            strategy,
            seed: args.seed,
            pct_depth: args.pct_depth,
            preemption_bound: args.preemption_bound.unwrap_or(2),
            iterations: args
                .iterations
                .or_else(|| Request::default_iterations(strategy, args.time_limit)),
            time_limit: args.time_limit,
            setup: args.module.setup(),
            keep_going: false,
            jobs: args.jobs.map_or_else(
                || Request::default_jobs(strategy),
                |jobs| jobs as usize, // at most MAX_JOBS
            ),
            shard: args.shard.unwrap_or_default(),
            stateful: args.stateful,
        },
        instrument: InstrumentOptions {
            // (`weft grade` logs calls, for its plain-words stories.)
            log_calls: args.module.log_calls,
            // A stateful search leaves memory no execution read out of its
            // states.
            track_reads: args.stateful,
            ..Request::instrument_for(strategy, args.module.point_model, args.module.points, races)
        },
        minimize: !args.output.no_minimize,
    })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Command {
        #[command(flatten)]
        explore: ExploreArgs,
    }

    /// The exploration `weft explore` asks for on command line `line`.
    pub(in crate::cli) fn request_of(line: &str) -> Request {
        let mut args = Command::try_parse_from(line.split_whitespace())
            .unwrap()
            .explore;
        request(&mut args).unwrap()
    }

    /// `weft::Check` and `weft explore` share their defaults.
    #[test]
    fn check_asks_for_what_explore_does_by_default() {
        for (line, check) in [
            ("weft m.wasm", crate::Check::module("m.wasm")),
            (
                "weft m.wasm --strategy dpor --races off --seed 3",
                crate::Check::module("m.wasm")
                    .strategy(Strategy::Dpor)
                    .races(crate::race::RaceMode::Off)
                    .seed(3),
            ),
            (
                "weft m.wasm --strategy pct --pct-depth 2 --iterations 20 --points memory -- x",
                crate::Check::module("m.wasm")
                    .strategy(Strategy::Pct)
                    .pct_depth(2)
                    .executions(20)
                    .points(crate::instrument::Points::Memory)
                    .arg("x"),
            ),
        ] {
            let explore = request_of(line);
            let check = check.request();
            assert_eq!(
                format!("{:?}", explore.options),
                format!("{:?}", check.options),
                "{line}"
            );
            assert_eq!(explore.instrument, check.instrument, "{line}");
            assert_eq!(explore.minimize, check.minimize, "{line}");
        }
    }
}
