//! `weft actors`: delivery orders of an actor program, generated for
//! coverage (Bita) or random.

use super::args::{ModuleArgs, OutputArgs, parse_positive_duration};
use super::files::save_replay;
use super::output::{minimize_verdict, write_report_page};
use super::progress::ProgressLine;
use super::{EXIT_FAILURE, EXIT_PASS};
use crate::actors::chart;
use crate::actors::criteria::Criterion;
use crate::actors::driver::{ActorOptions, ActorStrategy, Coverage, search};
use crate::actors::mailboxes::Delivery;
use crate::replay::file::FoundBy;
use crate::report::text::{Report, describe_minimization};
use crate::sched::Strategy;
use anyhow::Result;
use clap::Args;
use serde_json::json;
use std::io::Write as _;
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
        run: args.module.run_config(),
    };
    let mut progress = ProgressLine::new(!args.output.json);
    let mut report = search(&mut program, &options, |r| {
        progress.update(r.elapsed, || {
            format!(
                "{} executions, coverage {}",
                r.executions,
                coverage_line(&r.coverage)
            )
        });
    })?;
    progress.finish();
    let mut minimization = None;
    if let Some(found) = report.failure.as_mut() {
        args.module.actor_schedule = found.schedule.clone();
        minimization = minimize_verdict(
            &args.output,
            &mut program,
            &args.module.run_config(),
            &mut found.result,
            &mut found.failure,
        );
    }
    let replay_file = match &report.failure {
        Some(found) => save_replay(
            &args.output,
            &args.module,
            &wasm,
            &found.result,
            &found.failure,
            FoundBy {
                strategy: Strategy::Random,
                seed: found.seed,
                pct_depth: None,
                execution: found.index,
            },
        )?,
        None => None,
    };
    let strategy = match args.strategy {
        ActorStrategy::Bita => "bita",
        ActorStrategy::Random => "random",
        ActorStrategy::RandomDelays => "random-delays",
    };
    let chart = report
        .failure
        .as_ref()
        .and_then(|f| crate::actors::mailboxes::log_of(&f.result))
        .map(|log| chart::render(log, 80));
    let headline = match &report.failure {
        Some(f) => format!(
            "{} failure found after {} executions ({strategy})",
            f.failure.kind.name(),
            report.executions
        ),
        None => format!(
            "no failure in {} executions ({strategy})",
            report.executions
        ),
    };
    let page = Report {
        module: &args.module.module,
        wasm: &wasm,
        sites: program.sites(),
        executions: report.executions,
        distinct_traces: 0,
        elapsed: report.elapsed,
        headline,
        result: report.failure.as_ref().map(|f| &f.result),
        failure: report.failure.as_ref().map(|f| &f.failure),
        replay_file: replay_file.clone(),
        minimization,
        inconclusive: None,
        extra: serde_json::Value::Null,
    };
    let mut out = super::terminal::stdout();
    if args.output.json {
        let coverage: serde_json::Map<String, serde_json::Value> = report
            .coverage
            .iter()
            .map(|c| {
                (
                    c.criterion.name().to_string(),
                    json!({"covered": c.covered, "pairs": c.pairs}),
                )
            })
            .collect();
        let growth: Vec<serde_json::Value> = report
            .growth
            .iter()
            .map(|(executions, coverage)| {
                let mut point = serde_json::Map::new();
                point.insert("executions".into(), json!(executions));
                for c in coverage {
                    point.insert(c.criterion.name().into(), json!([c.covered, c.pairs]));
                }
                serde_json::Value::Object(point)
            })
            .collect();
        let value = json!({
            "status": if report.failure.is_some() { "failure" } else { "pass" },
            "coverage_growth": growth,
            "strategy": strategy,
            "executions": report.executions,
            "generated_schedules": report.generated,
            "diverged": report.diverged,
            "coverage": coverage,
            "failure": report.failure.as_ref().map(|f| json!({
                "kind": f.failure.kind.name(),
                "message": f.failure.message,
                "thread": f.failure.thread,
                "execution": f.index,
            })),
            "schedule": chart,
            "replay_file": replay_file.as_ref().map(|p| p.display().to_string()),
            "minimized": minimization,
            "elapsed_ms": report.elapsed.as_millis() as u64,
        });
        let _ = writeln!(out, "{}", serde_json::to_string_pretty(&value)?);
    } else {
        let mut s = match &report.failure {
            Some(f) => format!(
                "weft: {} failure found after {} executions ({strategy}) in {:.2?}\n\nFAILURE: {}\n",
                f.failure.kind.name(),
                report.executions,
                report.elapsed,
                f.failure.message.trim_end()
            ),
            None => format!(
                "weft: no failure in {} executions ({strategy}) in {:.2?}\n",
                report.executions, report.elapsed
            ),
        };
        s.push_str(&format!(
            "coverage: {} ({} schedules generated, {} diverged)\n",
            coverage_line(&report.coverage),
            report.generated,
            report.diverged
        ));
        for (executions, coverage) in &report.growth {
            s.push_str(&format!(
                "  after {executions:>5} executions: {}\n",
                coverage_line(coverage)
            ));
        }
        if let Some(chart) = &chart {
            s.push_str(&format!("\ndeliveries of the failing execution:\n{chart}"));
        }
        if let Some(m) = &minimization {
            s.push_str(&format!("{}\n", describe_minimization(m)));
        }
        if let Some(path) = &replay_file {
            s.push_str(&format!("\nreplay: weft replay {}\n", path.display()));
        }
        let _ = write!(out, "{s}");
    }
    write_report_page(&page, &args.output, |page| {
        if let Some(log) = report
            .failure
            .as_ref()
            .and_then(|f| crate::actors::mailboxes::log_of(&f.result))
        {
            page.add_messages(log);
        }
    })?;
    Ok(if report.failure.is_some() {
        EXIT_FAILURE
    } else {
        EXIT_PASS
    })
}

/// `pr 3/4, pcr 2/3, pbr 0/1`.
fn coverage_line(coverage: &[Coverage]) -> String {
    coverage
        .iter()
        .map(|c| format!("{} {}/{}", c.criterion.name(), c.covered, c.pairs))
        .collect::<Vec<_>>()
        .join(", ")
}
