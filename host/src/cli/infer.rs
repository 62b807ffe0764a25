//! `weft infer-schedule`: events and a schedule for a sleep-based test.

use super::EXIT_PASS;
use super::args::ModuleArgs;
use super::output::print_findings;
use crate::debuginfo::symbols::Symbols;
use crate::imunit::infer::evaluate::{evaluate, run_reference};
use crate::imunit::infer::timeline::CodeIndex;
use crate::imunit::infer::{InferOptions, infer, logged_runs};
use crate::imunit::schedule::Schedule;
use crate::imunit::tests_in_module::{TestCase, list};
use crate::report::infer::Inferred;
use anyhow::{Context, Result, bail};
use clap::Args;

/// Infer the events and the schedule that would replace the sleeps of a
/// sleep-based unit test, from logs of its passing runs.
#[derive(Args, Debug)]
pub struct InferArgs {
    #[command(flatten)]
    module: ModuleArgs,
    /// The sleep-based test.
    #[arg(long)]
    test: String,
    /// Passing runs to learn from.
    #[arg(long, default_value_t = 20)]
    runs: usize,
    /// Least share of the runs an event or ordering must appear in.
    #[arg(long, default_value_t = 0.5)]
    threshold: f64,
    /// Seed of the runs' schedules.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// An event-based version of the same test to compare with (its first
    /// declared schedule): prints precision and recall.
    #[arg(long)]
    reference: Option<String>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(args: InferArgs) -> Result<u8> {
    if !(0.0..=1.0).contains(&args.threshold) {
        bail!("--threshold must be between 0 and 1");
    }
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    let mut instrument = args.module.instrument_options();
    instrument.log_calls = true;
    let (wasm, mut program) = args.module.load_with(instrument)?;
    let symbols = Symbols::new(&wasm);
    if !symbols.has_lines() {
        bail!(
            "`{}` has no DWARF line information, which inference needs to place events; build it with debug info (for Rust: `debug = \"line-tables-only\"` or more)",
            args.module.module.display()
        );
    }
    let base = args.module.setup();
    let tests = list(&mut program, &base)?;
    let find = |name: &str| -> Result<TestCase> {
        tests
            .iter()
            .find(|t| t.name == name)
            .cloned()
            .with_context(|| {
                let names: Vec<&str> = tests.iter().map(|t| t.name.as_str()).collect();
                format!("no test named `{name}` (tests: {})", names.join(", "))
            })
    };
    let test = find(&args.test)?;
    let sites = program.sites().clone();
    let mut code = CodeIndex::new(&symbols, &sites);
    let options = InferOptions {
        base: base.clone(),
        runs: args.runs,
        seed: args.seed,
    };
    let (executions, runs) = logged_runs(&mut program, &options, &test.name, &mut code)?;
    if runs.is_empty() {
        bail!(
            "test `{}` passed in none of {executions} executions, even with sleeps outlasting everything else; inference learns from passing runs",
            test.name
        );
    }
    let mut inference = infer(&runs, args.threshold);
    inference.executions = executions;
    let reference = match &args.reference {
        Some(name) => {
            let reference = find(name)?;
            let Some(text) = reference.schedules.first() else {
                bail!("the reference test `{name}` declares no schedule");
            };
            let schedule: Schedule = text
                .parse()
                .with_context(|| format!("the schedule of `{name}`"))?;
            let events = run_reference(&mut program, &base, name, text, &mut code)?;
            Some((
                name.clone(),
                text.clone(),
                evaluate(&inference, &events, &schedule),
            ))
        }
        None => None,
    };
    let inferred = Inferred {
        test: &test.name,
        inference: &inference,
        reference: reference.as_ref(),
    };
    print_findings(args.json, || inferred.json(), || inferred.text());
    Ok(EXIT_PASS)
}
