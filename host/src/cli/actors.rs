//! `weft actors`: delivery orders of an actor program, generated for
//! coverage (Bita) or random.

use super::args::{ModuleArgs, OutputArgs, parse_positive_duration};
use super::output::print_findings;
use super::output::{tell_page, write_report_page};
use super::progress::ProgressLine;
use super::{EXIT_FAILURE, EXIT_PASS};
use crate::actors::criteria::Criterion;
use crate::actors::driver::{ActorOptions, ActorStrategy, search};
use crate::actors::mailboxes::{Delivery, log_of};
use crate::replay::file::FoundBy;
use crate::replay::finish::Finished;
use crate::report::actors::{ActorsFindings, coverage_line};
use crate::report::text::Report;
use crate::sched::Strategy;
use anyhow::Result;
use clap::Args;
use std::time::Duration;

/// Which criteria Bita generates schedules for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CriterionArg {
    /// Pairs of receives.
    Pr,
    /// Pairs of consecutive receives.
    Pcr,
    /// Pairs of a behaviour change and a receive.
    Pbr,
    /// All three.
    All,
}

/// Explore the delivery orders of an actor program (the guest SDK's
/// `actors`): Bita's coverage-guided schedules, or random ones.
#[derive(Args, Debug)]
pub struct ActorsArgs {
    #[command(flatten)]
    module: ModuleArgs,
    /// Coverage criterion to generate schedules for.
    #[arg(long, value_enum, default_value = "pr")]
    criterion: CriterionArg,
    /// `bita`, `random` delivery orders, or `random-delays` (oldest first,
    /// random overtakes).
    #[arg(long, value_enum, default_value = "bita")]
    strategy: ActorStrategy,
    /// Most executions (the initial one included).
    #[arg(long, default_value_t = 1000)]
    iterations: u64,
    /// Most wall time (e.g. `30s`).
    #[arg(long, value_parser = parse_positive_duration)]
    time_limit: Option<Duration>,
    /// Seed of the free deliveries.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// With `--strategy random-delays`: the percent chance that a random
    /// message overtakes the oldest one.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u8).range(0..=100))]
    delay_percent: u8,
    #[command(flatten)]
    output: OutputArgs,
}

pub fn run(mut args: ActorsArgs) -> Result<u8> {
    if args.strategy == ActorStrategy::RandomDelays {
        args.module.actor_delivery = Delivery::Delays(args.delay_percent);
    }
    args.output.outputs(&args.module.module, None).check()?;
    let (wasm, mut program) = args.module.load()?;
    let options = ActorOptions {
        strategy: args.strategy,
        criteria: match args.criterion {
            CriterionArg::Pr => vec![Criterion::Pr],
            CriterionArg::Pcr => vec![Criterion::Pcr],
            CriterionArg::Pbr => vec![Criterion::Pbr],
            CriterionArg::All => Criterion::ALL.to_vec(),
        },
        budget: args.iterations,
        time_limit: args.time_limit,
        seed: args.seed,
        setup: args.module.setup(),
    };
    let mut progress = ProgressLine::new(!args.output.json);
    let mut search = search(&mut program, &options, |r| {
        progress.update(r.elapsed, || {
            format!(
                "{} executions, coverage {}",
                r.executions,
                coverage_line(&r.coverage)
            )
        });
    })?;
    progress.finish();
    let mut finished = Finished::default();
    if let Some(found) = search.failure.as_mut() {
        // The failing execution's deliveries come first in its replay.
        args.module.actor_schedule = found.schedule.clone();
        finished = args.output.finish(&args.module.module).failure(
            &mut program,
            args.module.replay_run(&wasm),
            &mut found.result,
            &mut found.failure,
            FoundBy {
                strategy: Strategy::Random,
                seed: found.seed,
                pct_depth: None,
                execution: found.index,
            },
        )?;
    }
    let findings = ActorsFindings {
        search: &search,
        strategy: args.strategy,
        minimization: finished.minimization,
        replay_file: finished.replay_file.as_deref(),
    };
    print_findings(args.output.json, || findings.json(), || findings.text());
    let page = Report {
        module: &args.module.module,
        wasm: &wasm,
        sites: program.sites(),
        executions: search.executions,
        distinct_traces: 0,
        elapsed: search.elapsed,
        headline: findings.headline(),
        result: search.failure.as_ref().map(|f| &f.result),
        failure: search.failure.as_ref().map(|f| &f.failure),
        replay_file: finished.replay_file.clone(),
        minimization: finished.minimization,
        inconclusive: None,
        advice: None,
        extra: serde_json::Value::Null,
    };
    write_report_page(&page, &args.output, |page| {
        if let Some(log) = search.failure.as_ref().and_then(|f| log_of(&f.result)) {
            page.add_messages(log);
        }
    })?;
    tell_page(&args.output);
    Ok(if search.failure.is_some() {
        EXIT_FAILURE
    } else {
        EXIT_PASS
    })
}
