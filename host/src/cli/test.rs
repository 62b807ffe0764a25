//! `weft test`: the unit tests of a module, each under its schedules.

use super::common::{ModuleArgs, OutputArgs};
use super::{EXIT_FAILURE, EXIT_PASS};
use crate::imunit::runner::{TestOptions, TestRun, run_test, schedules_of};
use crate::imunit::schedule::Schedule;
use crate::imunit::tests_in_module::list;
use crate::sched::Strategy;
use anyhow::Result;
use clap::Args;
use serde_json::json;
use std::io::Write as _;

/// Run the unit tests of a test module (one built with the SDK's
/// `run_tests`), each once per schedule it declares (or `--schedule`),
/// under many executions.
#[derive(Args, Debug)]
pub struct TestArgs {
    #[command(flatten)]
    module: ModuleArgs,
    /// Run only the tests whose name contains this text.
    #[arg(long)]
    filter: Option<String>,
    /// Scheduling strategy.
    #[arg(long, value_enum, default_value = "random")]
    strategy: Strategy,
    /// Executions per test and schedule.
    #[arg(long, default_value_t = 100)]
    iterations: u64,
    /// Exploration seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// PCT depth.
    #[arg(long, default_value_t = 3)]
    pct_depth: u32,
    /// Run every execution even after a failure, and report how many failed.
    #[arg(long)]
    keep_going: bool,
    #[command(flatten)]
    output: OutputArgs,
}

pub fn run(args: TestArgs) -> Result<u8> {
    let (_, mut program) = args.module.load()?;
    let options = TestOptions {
        base: args.module.run_config(),
        strategy: args.strategy,
        seed: args.seed,
        pct_depth: args.pct_depth,
        iterations: args.iterations,
        keep_going: args.keep_going,
    };
    if let Some(text) = &options.base.schedule {
        text.parse::<Schedule>()?;
    }
    let tests = list(&mut program, &options.base)?;
    let mut results = Vec::new();
    let (mut passed, mut failed) = (0, 0);
    let selected = tests.iter().filter(|t| {
        args.filter
            .as_ref()
            .is_none_or(|f| t.name.contains(f.as_str()))
    });
    for test in selected {
        for schedule in schedules_of(test, options.base.schedule.as_deref()) {
            let outcome = run_test(&mut program, &options, test, schedule.as_deref())?;
            if outcome.failure.is_some() {
                failed += 1;
            } else {
                passed += 1;
            }
            if !args.output.json {
                let _ = writeln!(std::io::stdout(), "{}", verdict_line(&outcome));
            }
            results.push(json!({
                "test": outcome.test,
                "schedule": outcome.schedule,
                "status": if outcome.failure.is_some() { "failure" } else { "pass" },
                "executions": outcome.exploration.executions,
                "failing_executions": outcome.exploration.failing_executions,
                "failure": outcome.failure.as_ref().map(|f| json!({
                    "kind": f.kind.name(),
                    "message": f.message,
                    "thread": f.thread,
                })),
            }));
        }
    }
    if args.output.json {
        let value = json!({
            "status": if failed > 0 { "failure" } else { "pass" },
            "passed": passed,
            "failed": failed,
            "tests": results,
        });
        let _ = writeln!(
            std::io::stdout(),
            "{}",
            serde_json::to_string_pretty(&value)?
        );
    } else {
        let _ = writeln!(std::io::stdout(), "{passed} passed, {failed} failed");
    }
    Ok(if failed > 0 { EXIT_FAILURE } else { EXIT_PASS })
}

/// `test NAME [SCHEDULE] ... ok (N executions)` or `... FAILED ...`.
fn verdict_line(outcome: &TestRun) -> String {
    let shown = outcome
        .schedule
        .as_deref()
        .map_or(String::new(), |s| format!(" [{s}]"));
    let executions = outcome.exploration.executions;
    let failing = outcome.exploration.failing_executions;
    let verdict = match &outcome.failure {
        None => format!("ok ({executions} executions)"),
        Some(f) => {
            let how_often = if failing > 1 {
                format!(
                    "in {failing} of {executions} executions ({:.1}%)",
                    100.0 * failing as f64 / executions as f64
                )
            } else {
                format!("after {executions} executions")
            };
            format!(
                "FAILED {how_often}: {}: {}",
                f.kind.name(),
                f.message.lines().next().unwrap_or_default()
            )
        }
    };
    format!("test {}{shown} ... {verdict}", outcome.test)
}
