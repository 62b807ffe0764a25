//! `weft infer-schedule`: events and a schedule for a sleep-based test.

use super::EXIT_PASS;
use super::args::ModuleArgs;
use crate::debuginfo::symbols::Symbols;
use crate::execution::Setup;
use crate::imunit::infer::evaluate::{Evaluation, evaluate, reference_events};
use crate::imunit::infer::timeline::{CodeIndex, timelines};
use crate::imunit::infer::{Anchor, InferOptions, Inference, infer, logged_runs};
use crate::imunit::schedule::Schedule;
use crate::imunit::tests_in_module::{TestCase, list};
use crate::runtime::{Outcome, Program};
use crate::sched::RandomScheduler;
use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::json;
use std::io::Write as _;

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
    let base = args.module.run_config();
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
        threshold: args.threshold,
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
    let mut out = super::terminal::stdout();
    if args.json {
        let value = json!({
            "test": test.name,
            "executions": inference.executions,
            "passing_runs": inference.passing,
            "events": inference.events.iter().map(|e| {
                let (place, s) = match &e.anchor {
                    Anchor::After(s) => ("after", s),
                    Anchor::Before(s) => ("before", s),
                };
                json!({
                    "name": e.name,
                    "thread": e.thread,
                    "place": place,
                    "statement": s.method,
                    "function": s.function,
                    "file": s.file,
                    "line": s.line,
                    "confidence": e.confidence,
                })
            }).collect::<Vec<_>>(),
            "orderings": inference.orderings.iter().map(|o| json!({
                "before": inference.events[o.before].name,
                "after": inference.events[o.after].name,
                "blocked": o.blocked,
                "confidence": o.confidence,
            })).collect::<Vec<_>>(),
            "schedule": inference.schedule(),
            "reference": reference.as_ref().map(|(name, schedule, e)| json!({
                "test": name,
                "schedule": schedule,
                "event_precision": e.event_precision,
                "event_recall": e.event_recall,
                "ordering_precision": e.ordering_precision,
                "ordering_recall": e.ordering_recall,
                "matched_events": e.matched_events,
            })),
        });
        let _ = writeln!(out, "{}", serde_json::to_string_pretty(&value)?);
    } else {
        let _ = write!(out, "{}", human(&test.name, &inference, reference.as_ref()));
    }
    Ok(EXIT_PASS)
}

/// Runs the reference test once under its schedule and returns its events.
fn run_reference(
    program: &mut Program,
    base: &Setup,
    name: &str,
    schedule: &str,
    code: &mut CodeIndex<'_>,
) -> Result<Vec<crate::imunit::infer::evaluate::ReferenceEvent>> {
    let mut run = base.clone();
    run.run.args.truncate(1);
    run.run.args.push(name.to_string());
    run.schedule = Some(schedule.to_string());
    let (result, _) = crate::execution::execute(program, Box::new(RandomScheduler::new(0)), &run);
    if !matches!(result.outcome, Outcome::Exited(0)) {
        let why = result
            .outcome
            .failure()
            .map_or_else(|| format!("{:?}", result.outcome), |f| f.message);
        bail!("the reference test `{name}` failed under its schedule: {why}");
    }
    Ok(reference_events(&timelines(&result, code)))
}

fn human(
    test: &str,
    inference: &Inference,
    reference: Option<&(String, String, Evaluation)>,
) -> String {
    let mut s = format!(
        "inferred from {} passing runs ({} executions) of {test}\n\nevents:\n",
        inference.passing, inference.executions
    );
    if inference.events.is_empty() {
        s.push_str("  none: no thread did exactly one blocking thing while another slept\n");
    }
    let width = inference
        .events
        .iter()
        .map(|e| e.name.len())
        .max()
        .unwrap_or(0);
    for e in &inference.events {
        let (place, at) = match &e.anchor {
            Anchor::After(at) => ("after ", at),
            Anchor::Before(at) => ("before", at),
        };
        s.push_str(&format!(
            "  {:width$}  in {}: {place} `{}` at {}:{} ({})  confidence {:.2}\n",
            e.name, e.thread, at.method, at.file, at.line, at.function, e.confidence
        ));
    }
    s.push_str("\nschedule:\n");
    let schedule = inference.schedule();
    if schedule.is_empty() {
        s.push_str("  (no ordering)\n");
    } else {
        s.push_str(&format!("  {schedule}\n"));
    }
    if let Some((name, text, e)) = reference {
        let pairs: Vec<String> = e
            .matched_events
            .iter()
            .map(|(i, r)| format!("{i} = {r}"))
            .collect();
        s.push_str(&format!(
            "\ncompared with {name} [{text}]:\n  events:    precision {:.2}, recall {:.2} ({})\n  orderings: precision {:.2}, recall {:.2}\n",
            e.event_precision,
            e.event_recall,
            pairs.join(", "),
            e.ordering_precision,
            e.ordering_recall
        ));
    }
    s
}
