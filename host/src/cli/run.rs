//! `weft run`: one execution under one schedule.

use super::args::{ModuleArgs, OutputArgs, pct_depth_range};
use super::output::print_report;
use crate::explore::run_once;
use crate::replay::file::FoundBy;
use crate::replay::finish::Finished;
use crate::report::text::Report;
use crate::sched::Strategy;
use anyhow::Result;
use clap::Args;
use std::time::Instant;

/// Run the module once under one schedule.
#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    module: ModuleArgs,
    /// Scheduler seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Scheduling strategy.
    #[arg(long, value_enum, default_value = "random")]
    strategy: Strategy,
    /// PCT bug depth.
    #[arg(long, default_value_t = 3, value_parser = pct_depth_range())]
    pct_depth: u32,
    #[command(flatten)]
    output: OutputArgs,
}

pub fn run(mut args: RunArgs) -> Result<u8> {
    args.module.default_races = crate::race::RaceMode::Fail;
    args.output.outputs(&args.module.module, None).check()?;
    let (wasm, mut program) = args.module.load()?;
    let start = Instant::now();
    let mut result = run_once(
        &mut program,
        args.strategy,
        args.seed,
        args.pct_depth,
        &args.module.setup(),
    )?;
    let mut failure = result.outcome.failure();
    let finished = match failure.as_mut() {
        Some(failure) => args.output.finish(&args.module.module).failure(
            &mut program,
            args.module.replay_run(&wasm),
            &mut result,
            failure,
            FoundBy {
                strategy: args.strategy,
                seed: args.seed,
                pct_depth: (args.strategy == Strategy::Pct).then_some(args.pct_depth),
                execution: 1,
            },
        )?,
        None => Finished::default(),
    };
    let headline = match &failure {
        Some(f) => format!(
            "{} failure in one execution ({}, seed {})",
            f.kind.name(),
            args.strategy.name(),
            args.seed
        ),
        None => format!(
            "no failure in one execution ({}, seed {})",
            args.strategy.name(),
            args.seed
        ),
    };
    let report = Report {
        module: &args.module.module,
        wasm: &wasm,
        sites: program.sites(),
        executions: 1,
        distinct_traces: 1,
        elapsed: start.elapsed(),
        headline,
        result: Some(&result),
        failure: failure.as_ref(),
        replay_file: finished.replay_file,
        minimization: finished.minimization,
        inconclusive: result.cut().map(|cut| cut.describe()),
        advice: failure.as_ref().and_then(|_| {
            crate::report::advice::for_failure(&result, args.module.setup().run.sleeps)
        }),
        extra: serde_json::json!({ "strategy": args.strategy.name(), "seed": args.seed }),
    };
    Ok(print_report(&report, &args.output))
}
