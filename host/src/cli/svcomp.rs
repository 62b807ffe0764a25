//! `weft svcomp`: runs SV-COMP verification tasks and prints their
//! verdicts, so a suite of them can be run as a benchmark.

use super::args::parse_positive_duration;
use super::files::{Run, write_replay};
use super::output::print_findings;
use super::{EXIT_FAILURE, EXIT_PASS};
use crate::debuginfo::symbols::Symbols;
use crate::report::html::Page;
use crate::report::interleaving;
use crate::report::svcomp::{Row, json, table};
use crate::svcomp::Verdict;
use crate::svcomp::driver::{self, INSTRUMENT, Verification};
use crate::svcomp::task::{Check, Task};
use anyhow::{Context, Result};
use clap::Args;
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
    print_findings(args.json, || json(&rows), || table(&rows));
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

/// Checks one property and writes its witness (and page) when it is
/// violated.
fn verify(args: &SvcompArgs, task: &Task, module: &Path, wasm: &[u8], check: Check) -> Result<Row> {
    let started = Instant::now();
    let property = check.property;
    let mut program = crate::execution::load(wasm, INSTRUMENT)
        .with_context(|| format!("cannot load `{}`", module.display()))?;
    let Verification {
        verdict,
        reason,
        executions,
        exploration,
        setup,
    } = driver::verify(
        &mut program,
        &format!("{}.wasm", task.name),
        property,
        args.time_limit,
        !args.no_minimize,
    )?;
    let witness = match (&exploration.failure, verdict) {
        (Some(found), Verdict::False) => {
            let path = args
                .out
                .join(format!("{}.{}.weft.json", task.name, property.name()));
            let run = Run {
                module,
                wasm,
                instrument: INSTRUMENT,
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
