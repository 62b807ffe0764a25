//! `weft svcomp`: runs SV-COMP verification tasks and prints their
//! verdicts, so a suite of them can be run as a benchmark.

use super::args::parse_positive_duration;
use super::files::Run;
use super::output::print_findings;
use super::{EXIT_ERROR, EXIT_FAILURE, EXIT_PASS};
use crate::debuginfo::symbols::Symbols;
use crate::replay::finish::Finish;
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
/// contradicts the task's expected one, else with 2 when a task could not
/// be read or its program built (a tool error).
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
    if tasks.is_empty() {
        anyhow::bail!("no task definition (`.yml`) was found in what was given");
    }
    let names = task_names(&tasks);
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create `{}`", args.out.display()))?;
    let mut rows = Vec::new();
    let mut unreadable = Vec::new();
    for (path, name) in tasks.iter().zip(&names) {
        // A task that cannot be read, built or checked gets `unknown` with
        // the reason; the others still run.
        let task = match Task::read(path) {
            Ok(task) => task,
            Err(e) => {
                unreadable.push(format!("{e:#}"));
                rows.push(Row {
                    error: true,
                    ..unknown_row(name, "-", None, &e)
                });
                continue;
            }
        };
        let module = args.out.join(format!("{name}.wasm"));
        let built = build_task(&task, &module);
        for &check in &task.checks {
            let row = match &built {
                // Not built: a tool error, not a verdict on the program.
                Err(e) => Row {
                    error: true,
                    ..unknown_row(name, check.property.name(), check.expected, e)
                },
                Ok(wasm) => verify(&args, name, &module, wasm, check).unwrap_or_else(|e| {
                    unknown_row(name, check.property.name(), check.expected, &e)
                }),
            };
            rows.push(row);
        }
        for (property, expected) in &task.unchecked {
            let why = anyhow::anyhow!("weft checks unreach-call and no-data-race, not {property}");
            rows.push(unknown_row(name, property, *expected, &why));
        }
    }
    if unreadable.len() == tasks.len() {
        // Nothing was verified: the command was misused.
        anyhow::bail!("{}", unreadable.join("\n"));
    }
    let wrong = rows.iter().filter(|r| r.wrong()).count();
    let errors = rows.iter().filter(|r| r.error).count();
    print_findings(args.json, || json(&rows), || table(&rows));
    Ok(if wrong > 0 {
        EXIT_FAILURE
    } else if errors > 0 {
        EXIT_ERROR
    } else {
        EXIT_PASS
    })
}

/// Builds `task`'s program into `module` and reads it back.
fn build_task(task: &Task, module: &Path) -> Result<Vec<u8>> {
    if let Some(folder) = module.parent() {
        std::fs::create_dir_all(folder)
            .with_context(|| format!("cannot create `{}`", folder.display()))?;
    }
    crate::build::build_program(&task.inputs, Some(module), &[])?;
    crate::input::read_file(module, crate::input::MODULE_LIMIT)
        .with_context(|| format!("cannot read `{}`", module.display()))
}

/// The `unknown` verdict on `property` of the task `name`, for `why`.
fn unknown_row(name: &str, property: &str, expected: Option<bool>, why: &anyhow::Error) -> Row {
    Row {
        task: name.to_string(),
        property: property.to_string(),
        expected,
        verdict: Verdict::Unknown,
        reason: format!("{why:#}").replace('\n', " "),
        executions: 0,
        elapsed: Duration::ZERO,
        witness: None,
        error: false,
    }
}

/// The task files `paths` name: files as given, folders' `.yml` files in
/// name order; a file named twice is taken once.
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
    let mut seen = std::collections::HashSet::new();
    files.retain(|f| seen.insert(std::fs::canonicalize(f).unwrap_or_else(|_| f.clone())));
    Ok(files)
}

/// A name for each task file, for the table and the files written for it:
/// its stem, lengthened by as many of its folders as it takes to tell it
/// from other tasks of the same stem (`a/t` and `b/t`).
fn task_names(files: &[PathBuf]) -> Vec<String> {
    let parts: Vec<Vec<String>> = files
        .iter()
        .map(|f| {
            let full = std::path::absolute(f).unwrap_or_else(|_| f.clone());
            let mut parts: Vec<String> = full
                .with_extension("")
                .components()
                .filter_map(|c| match c {
                    std::path::Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
                    _ => None,
                })
                .collect();
            parts.reverse();
            parts
        })
        .collect();
    let mut lengths = vec![1; files.len()];
    let name = |i: usize, length: usize| {
        let mut taken: Vec<&str> = parts[i].iter().take(length).map(String::as_str).collect();
        taken.reverse();
        taken.join("/")
    };
    loop {
        let names: Vec<String> = (0..files.len()).map(|i| name(i, lengths[i])).collect();
        let mut lengthened = false;
        for i in 0..files.len() {
            let clashes = names.iter().filter(|n| **n == names[i]).count() > 1;
            if clashes && lengths[i] < parts[i].len() {
                lengths[i] += 1;
                lengthened = true;
            }
        }
        if !lengthened {
            return names;
        }
    }
}

/// Checks one property and writes its witness (and page) when it is
/// violated.
fn verify(args: &SvcompArgs, name: &str, module: &Path, wasm: &[u8], check: Check) -> Result<Row> {
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
        &module
            .file_name()
            .map_or_else(|| "task.wasm".into(), |n| n.to_string_lossy().into_owned()),
        property,
        args.time_limit,
        !args.no_minimize,
    )?;
    let witness = match (&exploration.failure, verdict) {
        (Some(found), Verdict::False) => {
            let path = args
                .out
                .join(format!("{name}.{}.weft.json", property.name()));
            let run = Run {
                module,
                wasm,
                instrument: INSTRUMENT,
                setup,
            };
            let finish = Finish {
                minimize: false,
                replay_path: Some(path.clone()),
            };
            finish.save(run, &found.result, &found.failure, found.found_by.clone())?;
            if args.html {
                let symbols = Symbols::new(wasm);
                let page = Page::new(
                    format!(
                        "{name}: {} is false ({} failure)",
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
        task: name.to_string(),
        property: property.name().to_string(),
        expected: check.expected,
        verdict,
        reason,
        executions,
        elapsed: started.elapsed(),
        witness,
        error: false,
    })
}
