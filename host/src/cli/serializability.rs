//! `weft serializability`: atomic-set serializability violations, found by
//! AssetFuzzer or by random schedules with a monitor.

use super::common::{ModuleArgs, OutputArgs, save_replay};
use super::{EXIT_FAILURE, EXIT_PASS};
use crate::check::asset_fuzzer::{Found, SerialOptions, SerialReport, SerialStrategy, search};
use crate::check::patterns::PATTERNS;
use crate::instrument::Points;
use crate::report::symbols::Symbols;
use crate::runtime::{Failure, FailureKind, Program};
use crate::sched::Strategy;
use crate::trace::replay_file::FoundBy;
use anyhow::{Result, bail};
use clap::Args;
use serde_json::{Value, json};
use std::io::Write as _;

/// Look for executions that are not atomic-set serializable (atomic sets
/// and units of work come from the guest SDK: `atomic_set`, `unit_of_work`).
#[derive(Args, Debug)]
pub struct SerializabilityArgs {
    #[command(flatten)]
    module: ModuleArgs,
    /// `assetfuzzer` (profile, infer potential violations, drive each) or
    /// `random-monitor` (random schedules, every one checked).
    #[arg(long, value_enum, default_value = "assetfuzzer")]
    strategy: SerialStrategy,
    /// Executions in all, profiling included.
    #[arg(long, default_value_t = 200)]
    iterations: u64,
    /// Profiling executions (phase I).
    #[arg(long, default_value_t = 10)]
    profile_runs: u64,
    /// Directed executions per potential violation, at most (phase II).
    #[arg(long, default_value_t = 10)]
    attempts: u64,
    /// Seed of the schedules.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    output: OutputArgs,
}

pub fn run(mut args: SerializabilityArgs) -> Result<u8> {
    if args.iterations == 0 {
        bail!("--iterations must be at least 1");
    }
    // Field accesses are plain loads and stores: hook them, and record.
    args.module.points = Points::Memory;
    args.module.check_atomic_sets = true;
    let (wasm, mut program) = args.module.load()?;
    let options = SerialOptions {
        strategy: args.strategy,
        budget: args.iterations,
        profile_runs: args.profile_runs,
        attempts: args.attempts,
        seed: args.seed,
        run: args.module.run_config(),
    };
    let report = search(&mut program, &options)?;
    if !report.annotated && report.crash.is_none() {
        bail!(
            "the module registered no atomic set and ran no unit of work: declare them with the SDK (`atomic_set`, `unit_of_work`; C: `weft_atomic_set`, `weft_unit_begin/end`)"
        );
    }
    let symbols = Symbols::new(&wasm);
    let first = report.found.first();
    let replay_file = match first {
        Some(found) => {
            let failure = found.execution.outcome.failure().unwrap_or(Failure {
                kind: FailureKind::Serializability,
                message: describe_line(found),
                thread: 0,
            });
            save_replay(
                &args.output,
                &args.module,
                &wasm,
                &found.execution,
                &failure,
                FoundBy {
                    strategy: Strategy::Random,
                    seed: found.seed,
                    pct_depth: None,
                    execution: found.index,
                },
            )?
        }
        None => None,
    };
    let violations: Vec<Value> = report
        .found
        .iter()
        .map(|f| violation_json(f, &program, &symbols))
        .collect();
    let mut out = std::io::stdout();
    if args.output.json {
        let value = json!({
            "status": if first.is_some() { "failure" } else { "pass" },
            "strategy": match args.strategy {
                SerialStrategy::Assetfuzzer => "assetfuzzer",
                SerialStrategy::RandomMonitor => "random-monitor",
            },
            "executions": report.executions,
            "detecting_executions": report.detecting,
            "detection_rate": report.detecting as f64 / report.executions.max(1) as f64,
            "potential_violations": report.potential,
            "realised_potential_violations": report.realised,
            "violations": violations,
            "failure": first.map(|f| json!({
                "kind": "serializability",
                "pattern": PATTERNS[f.pattern].number,
                "message": describe_line(f),
                "thread": f.log.accesses[f.accesses[0]].thread,
            })),
            "crash": report.crash.as_ref().and_then(|(r, _, _)| r.outcome.failure()).map(|f| json!({
                "kind": f.kind.name(),
                "message": f.message,
            })),
            "replay_file": replay_file.as_ref().map(|p| p.display().to_string()),
            "elapsed_ms": report.elapsed.as_millis() as u64,
        });
        let _ = writeln!(out, "{}", serde_json::to_string_pretty(&value)?);
    } else {
        let _ = write!(
            out,
            "{}",
            human(&args, &report, &violations, replay_file.as_deref())
        );
    }
    Ok(if first.is_some() || report.crash.is_some() {
        EXIT_FAILURE
    } else {
        EXIT_PASS
    })
}

fn describe_line(f: &Found) -> String {
    let p = &PATTERNS[f.pattern];
    let set = &f.log.sets[f.log.accesses[f.accesses[0]].set as usize].name;
    format!(
        "atomic set `{set}` is not serializable: pattern {} ({})",
        p.number, p.name
    )
}

fn violation_json(f: &Found, program: &Program, symbols: &Symbols) -> Value {
    let p = &PATTERNS[f.pattern];
    let first = &f.log.accesses[f.accesses[0]];
    let set = &f.log.sets[first.set as usize];
    json!({
        "pattern": p.number,
        "name": p.name,
        "atomic_set": set.name,
        "execution": f.index,
        "accesses": f.accesses.iter().map(|&i| {
            let a = &f.log.accesses[i];
            let place = program.sites().get(a.site).map(|s| symbols.site(s)).unwrap_or_default();
            json!({
                "access": if a.write { "write" } else { "read" },
                "thread": a.thread,
                "thread_name": f.execution.thread_names.get(a.thread as usize).cloned().flatten(),
                "unit": a.unit.map(|u| f.log.units[u as usize].name.clone()),
                "address": format!("{:#x}", a.addr),
                "offset": a.addr - set.start,
                "function": place.function,
                "file": place.file,
                "line": place.line,
            })
        }).collect::<Vec<_>>(),
    })
}

fn human(
    args: &SerializabilityArgs,
    report: &SerialReport,
    violations: &[Value],
    replay: Option<&std::path::Path>,
) -> String {
    let mut s = String::new();
    let how = match args.strategy {
        SerialStrategy::Assetfuzzer => format!(
            "assetfuzzer: {} profiling runs, {} potential violations, {} realised",
            args.profile_runs.min(report.executions),
            report.potential,
            report.realised
        ),
        SerialStrategy::RandomMonitor => "random-monitor".to_string(),
    };
    s.push_str(&format!(
        "{} violation{} in {} executions ({how}); {} executions detected one, in {:.2?}\n",
        violations.len(),
        if violations.len() == 1 { "" } else { "s" },
        report.executions,
        report.detecting,
        report.elapsed
    ));
    for (n, v) in violations.iter().enumerate() {
        s.push_str(&format!(
            "\nviolation {}: pattern {} ({}) on atomic set `{}`\n",
            n + 1,
            v["pattern"],
            v["name"].as_str().unwrap_or_default(),
            v["atomic_set"].as_str().unwrap_or_default()
        ));
        for (i, a) in v["accesses"].as_array().into_iter().flatten().enumerate() {
            let place = match (
                a["function"].as_str(),
                a["file"].as_str(),
                a["line"].as_u64(),
            ) {
                (Some(f), Some(file), Some(line)) => format!("{f} ({file}:{line})"),
                (Some(f), _, _) => f.to_string(),
                _ => "?".to_string(),
            };
            let thread = a["thread_name"]
                .as_str()
                .map_or(format!("thread {}", a["thread"]), |n| {
                    format!("thread {} `{n}`", a["thread"])
                });
            s.push_str(&format!(
                "  {}. {} {} (+{}) in unit `{}`, {thread}: {place}\n",
                i + 1,
                a["access"].as_str().unwrap_or_default(),
                a["address"].as_str().unwrap_or_default(),
                a["offset"],
                a["unit"].as_str().unwrap_or("?"),
            ));
        }
    }
    if let Some((result, _, index)) = &report.crash
        && let Some(f) = result.outcome.failure()
    {
        s.push_str(&format!(
            "\nexecution {index} also failed: {}: {}\n",
            f.kind.name(),
            f.message.lines().next().unwrap_or_default()
        ));
    }
    if let Some(path) = replay {
        s.push_str(&format!(
            "\nreplay the first one: weft replay {}\n",
            path.display()
        ));
    }
    s
}
