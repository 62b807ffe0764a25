//! `weft svcomp`: runs SV-COMP verification tasks and prints their
//! verdicts, so a suite of them can be run as a benchmark.

use super::args::parse_positive_duration;
use super::files::{Run, write_replay};
use super::{EXIT_FAILURE, EXIT_PASS};
use crate::debuginfo::symbols::Symbols;
use crate::execution::Setup;
use crate::explore::{Exploration, ExploreOptions, explore};
use crate::instrument::{InstrumentOptions, Points};
use crate::race::RaceMode;
use crate::replay::minimize::{Budget, minimize_failure};
use crate::report::html::Page;
use crate::report::interleaving;
use crate::runtime::RunConfig;
use crate::sched::Strategy;
use crate::svcomp::task::{Check, Task};
use crate::svcomp::{Coverage, Property, Verdict};
use anyhow::{Context, Result};
use clap::Args;
use serde_json::json;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Run SV-COMP verification tasks (`TASK.yml`): build each task's program,
/// check each of its properties weft knows (`unreach-call`,
/// `no-data-race`) and print the verdicts as verification tools do: `false`
/// with a replay file as witness, `true` only when an exhaustive search
/// covered the property, else `unknown`. Exits with 1 when a verdict
/// contradicts the task's expected one.
#[derive(Args, Debug)]
pub struct SvcompArgs {
    /// Task definitions (`.yml`), or folders holding them.
    #[arg(required = true)]
    tasks: Vec<PathBuf>,
    /// Wall time per property: a third hunts for a violation with the
    /// sampling strategies, the rest goes to the exhaustive search.
    #[arg(long, value_parser = parse_positive_duration, default_value = "60s")]
    time_limit: Duration,
    /// Where the built modules and the witnesses (replay files) go.
    #[arg(long, default_value = "svcomp-out")]
    out: PathBuf,
    /// Print one JSON object on stdout instead of the table.
    #[arg(long)]
    json: bool,
    /// Keep a witness's schedule as found: do not search for one with
    /// fewer preemptions and steps (minimization spends at most the
    /// property's remaining time).
    #[arg(long)]
    no_minimize: bool,
    /// Also write each witness's failure as a self-contained HTML page
    /// beside it (`<task>.<property>.html`).
    #[arg(long)]
    html: bool,
}

/// The verdict on one property of one task.
struct Row {
    task: String,
    check: Check,
    verdict: Verdict,
    reason: String,
    executions: u64,
    elapsed: Duration,
    witness: Option<PathBuf>,
}

impl Row {
    /// Whether the verdict contradicts the expected one (`unknown` never
    /// does).
    fn wrong(&self) -> bool {
        matches!(
            (self.verdict, self.check.expected),
            (Verdict::True, Some(false)) | (Verdict::False, Some(true))
        )
    }

    fn expected(&self) -> &'static str {
        match self.check.expected {
            Some(true) => "true",
            Some(false) => "false",
            None => "-",
        }
    }
}

pub fn run(args: SvcompArgs) -> Result<u8> {
    let tasks = task_files(&args.tasks)?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create `{}`", args.out.display()))?;
    let mut rows = Vec::new();
    for path in tasks {
        let task = Task::read(&path)?;
        let module = args.out.join(format!("{}.wasm", task.name));
        // A task whose program does not build or load gets `unknown` with
        // the reason; the others still run.
        let built = crate::build::build(&task.input, Some(&module), &[])
            .map_err(anyhow::Error::from)
            .and_then(|_| {
                crate::input::read_file(&module, crate::input::MODULE_LIMIT)
                    .with_context(|| format!("cannot read `{}`", module.display()))
            });
        for &check in &task.checks {
            let row = built
                .as_ref()
                .map_err(|e| anyhow::anyhow!("{e:#}"))
                .and_then(|wasm| verify(&args, &task, &module, wasm, check))
                .unwrap_or_else(|e| Row {
                    task: task.name.clone(),
                    check,
                    verdict: Verdict::Unknown,
                    reason: format!("{e:#}").replace('\n', " "),
                    executions: 0,
                    elapsed: Duration::ZERO,
                    witness: None,
                });
            rows.push(row);
        }
    }
    let wrong = rows.iter().filter(|r| r.wrong()).count();
    if args.json {
        let tasks: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({
                    "task": r.task,
                    "property": r.check.property,
                    "expected": r.check.expected,
                    "verdict": r.verdict,
                    "reason": r.reason,
                    "executions": r.executions,
                    "elapsed_ms": r.elapsed.as_secs_f64() * 1000.0,
                    "witness": r.witness,
                    "wrong": r.wrong(),
                })
            })
            .collect();
        let _ = writeln!(
            super::terminal::stdout(),
            "{}",
            serde_json::to_string_pretty(&json!({ "tasks": tasks, "wrong": wrong }))?
        );
    } else {
        print_table(&rows);
    }
    Ok(if wrong > 0 { EXIT_FAILURE } else { EXIT_PASS })
}

/// The task files `paths` name: files as given, folders' `.yml` files in
/// name order.
fn task_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .with_context(|| format!("cannot read `{}`", path.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "yml"))
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// Checks one property: hunts for a violation, then searches every
/// schedule.
fn verify(args: &SvcompArgs, task: &Task, module: &Path, wasm: &[u8], check: Check) -> Result<Row> {
    let started = Instant::now();
    let property = check.property;
    // The search sees the C library's synchronisation as one step per
    // call (the hunt does too, and the witness records it).
    let instrument = InstrumentOptions {
        log_accesses: true,
        library_steps: true,
        ..InstrumentOptions::default()
    };
    let mut program = crate::execution::load(wasm, instrument)
        .with_context(|| format!("cannot load `{}`", module.display()))?;
    let setup_with = |races| Setup {
        run: RunConfig {
            args: vec![format!("{}.wasm", task.name)],
            ..RunConfig::default()
        },
        races,
        property: Some(property),
        ..Setup::default()
    };
    // Hunting a call, the plain accesses that race become scheduling
    // points: a lost update needs a switch between two of them.
    let hunt_races = match property {
        Property::NoDataRace => RaceMode::Fail,
        Property::UnreachCall => RaceMode::Schedule,
    };
    let hunt = ExploreOptions {
        strategy: Strategy::Portfolio,
        iterations: None,
        time_limit: Some(args.time_limit / 3),
        run: setup_with(hunt_races),
        jobs: 1,
        ..ExploreOptions::default()
    };
    let mut outcome = run_phase(&mut program, hunt, property)?;
    let hunted_at = outcome.exploration.race_points.clone();
    let mut executions = outcome.exploration.executions;
    if outcome.verdict != Verdict::False {
        // Races are failures in the search: with none, switching at
        // synchronisation covers every behaviour (see `Property::covered_by`).
        let search = ExploreOptions {
            strategy: Strategy::Dpor,
            iterations: None,
            time_limit: Some(args.time_limit.saturating_sub(started.elapsed())),
            run: setup_with(RaceMode::Fail),
            jobs: 1,
            ..ExploreOptions::default()
        };
        let searched = run_phase(&mut program, search, property)?;
        executions += searched.exploration.executions;
        if searched.verdict != Verdict::Unknown || outcome.exploration.failure.is_none() {
            outcome = searched;
        }
    }
    let Phase {
        mut exploration,
        verdict,
        mut reason,
        setup,
    } = outcome;
    if let (Verdict::Unknown, Some(points)) = (verdict, &hunted_at) {
        reason.push_str(&format!(
            "; the hunt for a violation, {}",
            points.describe()
        ));
    }
    let witness = match (exploration.failure.as_mut(), verdict) {
        (Some(found), Verdict::False) => {
            let remaining = args.time_limit.saturating_sub(started.elapsed());
            if !args.no_minimize && !remaining.is_zero() {
                let budget = Budget {
                    time: remaining.min(Budget::default().time),
                    ..Budget::default()
                };
                minimize_failure(
                    &mut program,
                    &setup,
                    &mut found.result,
                    &mut found.failure,
                    budget,
                );
            }
            let path = args
                .out
                .join(format!("{}.{}.weft.json", task.name, property.name()));
            let run = Run {
                module,
                wasm,
                instrument,
                setup,
            };
            write_replay(
                &path,
                run,
                &found.result,
                &found.failure,
                found.found_by.clone(),
            )?;
            if args.html {
                let symbols = Symbols::new(wasm);
                let page = Page::new(
                    format!(
                        "{}: {} is false ({} failure)",
                        task.name,
                        property.name(),
                        found.failure.kind.name()
                    ),
                    interleaving::rows(&found.result, program.sites(), &symbols, false),
                    &found.result.thread_names,
                    Some(&found.failure),
                );
                let page_path = path.with_extension("").with_extension("html");
                page.write(&page_path)
                    .with_context(|| format!("cannot write `{}`", page_path.display()))?;
            }
            Some(path)
        }
        _ => None,
    };
    Ok(Row {
        task: task.name.clone(),
        check,
        verdict,
        reason,
        executions,
        elapsed: started.elapsed(),
        witness,
    })
}

/// One exploration of a property, judged.
struct Phase {
    exploration: Exploration,
    verdict: Verdict,
    reason: String,
    /// The setup its executions ran with (for the witness).
    setup: Setup,
}

/// Runs one exploration and judges it.
fn run_phase(
    program: &mut crate::runtime::Program,
    options: ExploreOptions,
    property: Property,
) -> Result<Phase> {
    let exploration = explore(program, &options, |_| {})?;
    let coverage = Coverage {
        points: Points::Sync,
        races_fail: options.run.races == RaceMode::Fail,
    };
    Ok(Phase {
        verdict: Verdict::of(&exploration, property, coverage),
        reason: Verdict::reason(&exploration, property, coverage),
        setup: exploration.setup(&options.run),
        exploration,
    })
}

fn print_table(rows: &[Row]) {
    let width = rows.iter().map(|r| r.task.len()).max().unwrap_or(4).max(4);
    let _ = writeln!(
        super::terminal::stdout(),
        "{:<width$}  {:<12}  {:>8}  {:>7}  {:>10}  {:>9}",
        "task",
        "property",
        "expected",
        "verdict",
        "executions",
        "time"
    );
    for row in rows {
        let mark = if row.wrong() { "  WRONG" } else { "" };
        let _ = writeln!(
            super::terminal::stdout(),
            "{:<width$}  {:<12}  {:>8}  {:>7}  {:>10}  {:>8.1}s{mark}",
            row.task,
            row.check.property.name(),
            row.expected(),
            row.verdict.name(),
            row.executions,
            row.elapsed.as_secs_f64(),
        );
    }
    let count = |v: Verdict| rows.iter().filter(|r| r.verdict == v).count();
    let correct = rows
        .iter()
        .filter(|r| r.verdict != Verdict::Unknown && !r.wrong())
        .count();
    let _ = writeln!(
        super::terminal::stdout(),
        "{} verdicts: {correct} correct, {} wrong, {} unknown ({} true, {} false)",
        rows.len(),
        rows.iter().filter(|r| r.wrong()).count(),
        count(Verdict::Unknown),
        count(Verdict::True),
        count(Verdict::False),
    );
    for row in rows.iter().filter(|r| r.verdict != Verdict::True) {
        match &row.witness {
            Some(witness) => drop(writeln!(
                super::terminal::stdout(),
                "{} ({}): {}; witness {}",
                row.task,
                row.check.property.name(),
                row.reason,
                witness.display()
            )),
            None => drop(writeln!(
                super::terminal::stdout(),
                "{} ({}): {}",
                row.task,
                row.check.property.name(),
                row.reason
            )),
        }
    }
}
