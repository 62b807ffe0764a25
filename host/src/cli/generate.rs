//! `weft gen`: generated concurrent tests for a thread-safe class.

use super::args::{JunitArgs, ModuleArgs, OutputArgs, parse_positive_duration};
use super::files::save_replay;
use super::output::{minimize_verdict, write_report_page};
use super::progress::ProgressLine;
use super::{EXIT_FAILURE, EXIT_PASS};
use crate::debuginfo::symbols::Symbols;
use crate::replay::file::FoundBy;
use crate::report::text::{Report, describe_minimization};
use crate::report::{interleaving, junit};
use crate::sched::Strategy;
use crate::testgen::class::find;
use crate::testgen::driver::{GenOptions, GenStrategy, Violation, search};
use anyhow::Result;
use clap::Args;
use serde_json::json;
use std::io::Write as _;
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
        run: args.module.run_config(),
    };
    let mut progress = ProgressLine::new(!args.output.json);
    let mut report = search(&mut program, &class, &options, |r| {
        progress.update(r.elapsed, || {
            format!(
                "{} tests, {} executions, pairs covered {}/{}",
                r.tests, r.executions, r.covered, r.pairs
            )
        });
    })?;
    progress.finish();
    let strategy = match args.strategy {
        GenStrategy::Covcon => "covcon",
        GenStrategy::Random => "random",
    };
    let mut minimization = None;
    let found_failure = report.failure.as_mut().map(|f| {
        let thread = f.execution.outcome.judged().map_or(0, |x| x.thread);
        let mut failure = f.violation.failure(f.linearizations, thread);
        minimization = minimize_verdict(
            &args.output,
            &mut program,
            &f.run,
            &mut f.execution,
            &mut failure,
        );
        failure
    });
    let failure = report.failure.as_ref().zip(found_failure);
    let replay_file = match &failure {
        Some((f, failure)) => {
            args.module.args = f.run.run.args[1..].to_vec();
            args.module.gen_methods = f.run.gen_methods.clone();
            save_replay(
                &args.output,
                &args.module,
                &wasm,
                &f.execution,
                failure,
                FoundBy {
                    strategy: Strategy::Random,
                    seed: f.seed,
                    pct_depth: None,
                    execution: f.tests,
                },
            )?
        }
        None => None,
    };
    // The failing concurrent execution, step by step.
    let interleaving = report.failure.as_ref().map(|f| {
        let symbols = Symbols::new(&wasm);
        let rows = interleaving::rows(
            &f.execution,
            program.sites(),
            &symbols,
            args.output.full_trace,
        );
        interleaving::render(&rows, args.output.layout(), args.output.focus())
    });
    let text = {
        let mut s = match &failure {
            Some((f, failure)) if failure.kind.is_limit() => format!(
                "weft: a test was cut short by a limit ({}) after {} tests, {} executions ({strategy}) in {:.2?}: no verdict on it, and no pass\n\n  {}\n\ntest:\n{}\n",
                failure.kind.name(),
                f.tests,
                report.executions,
                f.elapsed,
                failure.message.lines().next().unwrap_or_default(),
                indent(&f.test.describe(&class)),
            ),
            Some((f, failure)) => format!(
                "weft: thread-safety violation ({}) found after {} tests, {} executions ({strategy}) in {:.2?}\n\n  {}\n\ntest:\n{}\n\nnone of its {} linearizations (the suffixes' calls in every order, run sequentially) {}\n",
                failure.kind.name(),
                f.tests,
                report.executions,
                f.elapsed,
                failure.message.lines().next().unwrap_or_default(),
                indent(&f.test.describe(&class)),
                f.linearizations,
                match f.violation {
                    Violation::Crash(_) => "fails that way",
                    Violation::Results { .. } => "returns these results",
                }
            ),
            None => format!(
                "weft: no violation in {} tests, {} executions ({strategy}) in {:.2?}\n",
                report.tests, report.executions, report.elapsed
            ),
        };
        if let Some(text) = &interleaving {
            s.push_str("\nthe failing interleaving");
            if let Some(m) = &minimization {
                s.push_str(&format!(" ({})", describe_minimization(m)));
            }
            s.push_str(&format!(":\n{text}\n"));
        }
        s.push_str(&format!(
            "method pairs covered: {}/{}\n",
            report.covered, report.pairs
        ));
        if let Some(path) = &replay_file {
            s.push_str(&format!("replay: weft replay {}\n", path.display()));
        }
        s
    };
    let mut out = super::terminal::stdout();
    if args.output.json {
        let value = json!({
            "status": if failure.is_some() { "failure" } else { "pass" },
            "strategy": strategy,
            "class": class.prefix,
            "methods": class.methods.iter().map(|m| m.export.clone()).collect::<Vec<_>>(),
            "state_changing": report.state_changing.iter().map(|&m| class.methods[m].export.clone()).collect::<Vec<_>>(),
            "tests": report.tests,
            "executions": report.executions,
            "pairs": {"covered": report.covered, "total": report.pairs},
            "coverage_growth": report.growth.iter().map(|(t, ms, c)| json!({"tests": t, "ms": ms, "covered": c})).collect::<Vec<_>>(),
            "failure": failure.as_ref().map(|(f, failure)| json!({
                "kind": failure.kind.name(),
                "message": failure.message,
                "test": f.test.describe(&class),
                "linearizations": f.linearizations,
                "tests_to_failure": f.tests,
                "ms_to_failure": f.elapsed.as_millis() as u64,
                "interleaving": interleaving,
            })),
            "minimized": minimization,
            "replay_file": replay_file.as_ref().map(|p| p.display().to_string()),
            "elapsed_ms": report.elapsed.as_millis() as u64,
        });
        let _ = writeln!(out, "{}", serde_json::to_string_pretty(&value)?);
    } else {
        let _ = write!(out, "{text}");
    }
    let headline = match &failure {
        Some((f, failure)) if failure.kind.is_limit() => format!(
            "a test was cut short by a limit ({}) after {} tests, {} executions ({strategy})",
            failure.kind.name(),
            f.tests,
            report.executions
        ),
        Some((f, failure)) => format!(
            "thread-safety violation ({}) found after {} tests, {} executions ({strategy})",
            failure.kind.name(),
            f.tests,
            report.executions
        ),
        None => format!(
            "no violation in {} tests, {} executions ({strategy})",
            report.tests, report.executions
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
        result: failure.as_ref().map(|(f, _)| &f.execution),
        failure: failure.as_ref().map(|(_, failure)| failure),
        replay_file: replay_file.clone(),
        minimization,
        inconclusive: None,
        extra: serde_json::Value::Null,
    };
    write_report_page(&page, &args.output, |page| {
        if let Some((f, _)) = &failure {
            page.notes
                .insert(0, format!("test: {}", f.test.describe(&class)));
        }
    })?;
    let case = junit::Case {
        name: format!("gen {} ({strategy})", args.class),
        time: report.elapsed,
        failure: failure.as_ref().map(|(_, f)| junit::CaseFailure {
            kind: f.kind.name().to_string(),
            message: f.message.trim_end().to_string(),
        }),
        output: text,
    };
    args.junit
        .write(&args.module.module, &[case], report.elapsed)?;
    Ok(if failure.is_some() {
        EXIT_FAILURE
    } else {
        EXIT_PASS
    })
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
