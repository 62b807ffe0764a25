//! `weft test`: the unit tests of a module, each under its schedules.

use super::common::{ModuleArgs, OutputArgs};
use super::{EXIT_FAILURE, EXIT_PASS};
use crate::explore::{ExploreOptions, explore};
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
    #[command(flatten)]
    output: OutputArgs,
}

pub fn run(args: TestArgs) -> Result<u8> {
    let (_, mut program) = args.module.load()?;
    let base = args.module.run_config();
    let tests = list(&mut program, &base)?;
    let mut results = Vec::new();
    let (mut passed, mut failed) = (0, 0);
    for test in tests.iter().filter(|t| {
        args.filter
            .as_ref()
            .is_none_or(|f| t.name.contains(f.as_str()))
    }) {
        let schedules: Vec<Option<String>> = match (&base.schedule, test.schedules.is_empty()) {
            (Some(given), _) => vec![Some(given.clone())],
            (None, true) => vec![None],
            (None, false) => test.schedules.iter().cloned().map(Some).collect(),
        };
        for schedule in schedules {
            let mut run = base.clone();
            run.args.truncate(1);
            run.args.push(test.name.clone());
            if let Some(text) = &schedule
                && let Err(e) = text.parse::<crate::imunit::schedule::Schedule>()
            {
                anyhow::bail!(
                    "test `{}` declares a schedule that does not parse: {e}",
                    test.name
                );
            }
            run.schedule = schedule.clone();
            let options = ExploreOptions {
                strategy: args.strategy,
                seed: args.seed,
                iterations: Some(args.iterations),
                run,
                ..Default::default()
            };
            let exploration = explore(&mut program, &options, |_| {})?;
            let failure = exploration.failure.as_ref().map(|f| &f.failure);
            if failure.is_some() {
                failed += 1;
            } else {
                passed += 1;
            }
            if !args.output.json {
                let shown = schedule
                    .as_deref()
                    .map_or(String::new(), |s| format!(" [{s}]"));
                let verdict = match failure {
                    None => format!("ok ({} executions)", exploration.executions),
                    Some(f) => format!(
                        "FAILED after {} executions: {}: {}",
                        exploration.executions,
                        f.kind.name(),
                        f.message.lines().next().unwrap_or_default()
                    ),
                };
                let _ = writeln!(std::io::stdout(), "test {}{shown} ... {verdict}", test.name);
            }
            results.push(json!({
                "test": test.name,
                "schedule": schedule,
                "status": if failure.is_some() { "failure" } else { "pass" },
                "executions": exploration.executions,
                "failure": failure.map(|f| json!({"kind": f.kind.name(), "message": f.message, "thread": f.thread})),
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
