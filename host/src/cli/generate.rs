//! `weft gen`: generated concurrent tests for a thread-safe class.

use super::args::{JunitArgs, ModuleArgs, OutputArgs, parse_positive_duration};
use super::output::print_findings;
use super::output::{tell_page, write_report_page};
use super::progress::ProgressLine;
use super::{EXIT_FAILURE, EXIT_PASS};
use crate::replay::file::FoundBy;
use crate::replay::finish::Finished;
use crate::report::junit;
use crate::report::testgen::GenFindings;
use crate::report::text::Report;
use crate::runtime::{Failure, Program};
use crate::sched::Strategy;
use crate::testgen::class::find;
use crate::testgen::driver::{GenOptions, GenReport, GenStrategy, search};
use anyhow::Result;
use clap::Args;
use std::time::Duration;

/// Generate concurrent tests for a thread-safe class (exports
/// `<PREFIX>_new` and `<PREFIX>_<method>(handle, ...)`; the module's `main`
/// runs the SDK's driver, `weft_guest::class::serve`) until one shows a
/// thread-safety violation.
#[derive(Args, Debug)]
pub struct GenArgs {
    #[command(flatten)]
    module: ModuleArgs,
    /// The class's export prefix.
    #[arg(long)]
    class: String,
    /// `covcon` (least covered method pairs first) or `random`.
    #[arg(long, value_enum, default_value = "covcon")]
    strategy: GenStrategy,
    /// Most wall time.
    #[arg(long, value_parser = parse_positive_duration, default_value = "60s")]
    time_limit: Duration,
    /// Most tests.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    max_tests: Option<u64>,
    /// Schedules each test runs under (alternately random and PCT).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    schedules_per_test: u64,
    /// Run the schedules as an operating system would, roughly, instead of
    /// random and PCT: the running thread keeps running and another takes
    /// over at a scheduling point with this chance (0 < P <= 1), so calls
    /// seldom overlap by chance.
    #[arg(long, value_name = "P", value_parser = parse_chance)]
    switch_chance: Option<f64>,
    /// Seed of generation and schedules.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    junit: JunitArgs,
}

/// A chance in (0, 1].
fn parse_chance(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 1.0 => Ok(p),
        _ => Err(format!("`{text}` is not a chance above 0 and at most 1")),
    }
}

pub fn run(mut args: GenArgs) -> Result<u8> {
    args.output
        .outputs(&args.module.module, Some(&args.junit))
        .check()?;
    let wasm = args.module.read()?;
    let class = find(&wasm, &args.class)?;
    // Calls are logged, so that methods calling methods count in the
    // pair coverage.
    args.module.log_calls = true;
    let (_, mut program) = args.module.load()?;
    let options = GenOptions {
        strategy: args.strategy,
        time_limit: args.time_limit,
        max_tests: args.max_tests,
        schedules_per_test: args.schedules_per_test,
        switch_chance: args.switch_chance,
        seed: args.seed,
        setup: args.module.setup(),
    };
    let mut progress = ProgressLine::new(!args.output.json);
    let mut search = search(&mut program, &class, &options, |r| {
        progress.update(r.elapsed, || {
            format!(
                "{} tests, {} executions, pairs covered {}/{}",
                r.tests, r.executions, r.covered, r.pairs
            )
        });
    })?;
    progress.finish();
    let (finished, failure) = finish_failure(&mut args, &mut program, &wasm, &mut search)?;
    let findings = GenFindings {
        search: &search,
        class: &class,
        failure: search.failure.as_ref().zip(failure.as_ref()),
        strategy: args.strategy,
        minimization: finished.minimization,
        replay_file: finished.replay_file.as_deref(),
        wasm: &wasm,
        sites: program.sites(),
        shape: args.output.shape(),
    };
    let text = findings.text();
    print_findings(args.output.json, || findings.json(), || text.clone());
    let page = Report {
        module: &args.module.module,
        wasm: &wasm,
        sites: program.sites(),
        executions: search.executions,
        distinct_traces: 0,
        elapsed: search.elapsed,
        headline: findings.headline(),
        result: findings.failure.map(|(found, _)| &found.execution),
        failure: failure.as_ref(),
        replay_file: finished.replay_file.clone(),
        minimization: finished.minimization,
        inconclusive: None,
        advice: None,
        extra: serde_json::Value::Null,
    };
    write_report_page(&page, &args.output, |page| {
        if let Some((found, _)) = findings.failure {
            page.notes
                .insert(0, format!("test: {}", found.test.describe(&class)));
        }
    })?;
    tell_page(&args.output);
    let case = junit::Case {
        name: format!("gen {} ({})", args.class, findings.strategy()),
        time: search.elapsed,
        failure: failure.as_ref().map(junit::CaseFailure::of),
        output: text,
    };
    args.junit
        .write(&args.module.module, &[case], search.elapsed)?;
    Ok(if failure.is_some() {
        EXIT_FAILURE
    } else {
        EXIT_PASS
    })
}

/// Finishes the failure `search` found, if it found one: minimized, its
/// replay file running the failing test; what finishing did, and the
/// failure.
fn finish_failure(
    args: &mut GenArgs,
    program: &mut Program,
    wasm: &[u8],
    search: &mut GenReport,
) -> Result<(Finished, Option<Failure>)> {
    let Some(found) = search.failure.as_mut() else {
        return Ok((Finished::default(), None));
    };
    let thread = found.execution.outcome.judged().map_or(0, |x| x.thread);
    let mut violation = found.violation.failure(found.linearizations, thread);
    // The replay runs the failing test: its calls and arguments.
    args.module.args = found.setup.run.args[1..].to_vec();
    args.module.gen_methods = found.setup.gen_methods.clone();
    let finished = args.output.finish(&args.module.module).failure(
        program,
        args.module.replay_run(wasm),
        &mut found.execution,
        &mut violation,
        FoundBy {
            strategy: Strategy::Random,
            seed: found.seed,
            pct_depth: None,
            execution: found.tests,
        },
    )?;
    Ok((finished, Some(violation)))
}
