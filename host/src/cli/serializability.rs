//! `weft serializability`: atomic-set serializability violations, found by
//! AssetFuzzer or by random schedules with a monitor.

use super::args::{ModuleArgs, OutputArgs};
use super::files::save_replay;
use super::output::{minimize_verdict, write_report_page};
use super::{EXIT_FAILURE, EXIT_PASS};
use crate::debuginfo::symbols::Symbols;
use crate::debuginfo::variables::global_region;
use crate::instrument::Points;
use crate::replay::file::FoundBy;
use crate::replay::minimize::Minimization;
use crate::report::text::{Report, describe_minimization};
use crate::runtime::Program;
use crate::sched::Strategy;
use crate::serializability::atomic_sets::AtomicSet;
use crate::serializability::driver::{Found, SerialOptions, SerialReport, SerialStrategy, search};
use crate::serializability::patterns::PATTERNS;
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
    /// Directed executions per potential violation (phase II).
    #[arg(long, default_value_t = 10)]
    attempts: u64,
    /// Seed of the schedules.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// A global variable (`name`, or one field: `name.field`) whose memory
    /// is an atomic set; found through DWARF (repeatable).
    #[arg(long, value_name = "NAME")]
    atomic_set: Vec<String>,
    /// Functions whose calls are units of work, by name pattern (`*` is any
    /// text; matched against the end of the full name, e.g. `Account::*`);
    /// repeatable. Functions the compiler inlined have no calls to watch.
    #[arg(long, value_name = "PATTERN")]
    unit_of_work: Vec<String>,
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
    args.module.log_calls = !args.unit_of_work.is_empty();
    let symbols = Symbols::new(&args.module.read()?);
    for name in &args.atomic_set {
        let dwarf = symbols.dwarf().ok_or_else(|| {
            anyhow::anyhow!("--atomic-set `{name}` needs DWARF debug information in the module")
        })?;
        let region = global_region(dwarf, name).map_err(anyhow::Error::msg)?;
        args.module.atomic_sets.push(AtomicSet {
            name: name.clone(),
            start: region.start,
            len: region.len,
        });
    }
    let (wasm, mut program) = args.module.load()?;
    args.module.unit_calls = unit_calls(&program, &symbols, &args.unit_of_work)?;
    let options = SerialOptions {
        strategy: args.strategy,
        budget: args.iterations,
        profile_runs: args.profile_runs,
        attempts: args.attempts,
        seed: args.seed,
        run: args.module.run_config(),
    };
    let mut report = search(&mut program, &options)?;
    if !report.annotated && report.crash.is_none() {
        bail!(
            "the module registered no atomic set and ran no unit of work: declare them with the SDK (`atomic_set`, `unit_of_work`; C: `weft_atomic_set`, `weft_unit_begin/end`)"
        );
    }
    let mut minimization = None;
    let first_failure = report.found.first_mut().map(|found| {
        let mut failure = found
            .execution
            .outcome
            .failure()
            .unwrap_or_else(|| found.violation().failure(&found.log));
        let mut execution = found.execution.clone();
        minimization = minimize_verdict(
            &args.output,
            &mut program,
            &args.module.run_config(),
            &mut execution,
            &mut failure,
        );
        found.move_to(execution);
        failure
    });
    let first = report.found.first();
    let replay_file = match first.zip(first_failure.as_ref()) {
        Some((found, failure)) => save_replay(
            &args.output,
            args.module.replay_run(&wasm),
            &found.execution,
            failure,
            FoundBy {
                strategy: Strategy::Random,
                seed: found.seed,
                pct_depth: None,
                execution: found.index,
            },
        )?,
        None => None,
    };
    let violations: Vec<Value> = report
        .found
        .iter()
        .map(|f| violation_json(f, &program, &symbols))
        .collect();
    let mut out = super::terminal::stdout();
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
                "message": f.violation().failure(&f.log).message,
                "thread": f.log.accesses[f.accesses[0]].thread,
            })),
            "crash": report.crash.as_ref().and_then(|(r, _, _)| r.outcome.failure()).map(|f| json!({
                "kind": f.kind.name(),
                "message": f.message,
            })),
            "replay_file": replay_file.as_ref().map(|p| p.display().to_string()),
            "minimized": minimization,
            "elapsed_ms": report.elapsed.as_millis() as u64,
        });
        let _ = writeln!(out, "{}", serde_json::to_string_pretty(&value)?);
    } else {
        let _ = write!(
            out,
            "{}",
            human(
                &args,
                &report,
                &violations,
                replay_file.as_deref(),
                minimization.as_ref()
            )
        );
    }
    let crash = report
        .crash
        .as_ref()
        .and_then(|(r, _, _)| Some((r, r.outcome.failure()?)));
    let shown = first
        .map(|f| &f.execution)
        .zip(first_failure.as_ref())
        .or(crash.as_ref().map(|(r, f)| (*r, f)));
    let headline = match (first, &crash) {
        (Some(f), _) => format!(
            "serializability violation: pattern {} ({}) on atomic set `{}`",
            PATTERNS[f.pattern].number,
            PATTERNS[f.pattern].name,
            f.log.sets[f.log.accesses[f.accesses[0]].set as usize].name
        ),
        (None, Some((_, f))) => format!("{} failure", f.kind.name()),
        (None, None) => format!("no violation in {} executions", report.executions),
    };
    let page = Report {
        module: &args.module.module,
        wasm: &wasm,
        sites: program.sites(),
        executions: report.executions,
        distinct_traces: 0,
        elapsed: report.elapsed,
        headline,
        result: shown.map(|(r, _)| r),
        failure: shown.map(|(_, f)| f),
        replay_file: replay_file.clone(),
        minimization,
        inconclusive: None,
        extra: Value::Null,
    };
    write_report_page(&page, &args.output, |page| {
        if let Some(f) = first {
            let first_access = &f.log.accesses[f.accesses[0]];
            let set = &f.log.sets[first_access.set as usize];
            // The violation happens at the access that completes it.
            page.failing_step = f.accesses.last().map(|&a| f.log.accesses[a].step);
            page.highlight(
                format!(
                    "pattern {} on atomic set `{}`",
                    PATTERNS[f.pattern].number, set.name
                ),
                f.accesses.iter().enumerate().map(|(i, &a)| {
                    let a = &f.log.accesses[a];
                    let unit = a
                        .unit
                        .map_or("?", |u| f.log.units[u as usize].name.as_str());
                    let what = if a.write { "write" } else { "read" };
                    (a.step, format!("{}. {what} in {unit}", i + 1))
                }),
            );
        }
    })?;
    Ok(if first.is_some() || report.crash.is_some() {
        EXIT_FAILURE
    } else {
        EXIT_PASS
    })
}

/// The call sites whose callee matches one of `patterns`, each with the
/// callee's name as the unit's name.
fn unit_calls(
    program: &Program,
    symbols: &Symbols,
    patterns: &[String],
) -> Result<Vec<(u32, String)>> {
    let mut calls = Vec::new();
    for pattern in patterns {
        let before = calls.len();
        for id in 0..program.sites().len() as u32 {
            let Some(site) = program.sites().get(id) else {
                continue;
            };
            let (crate::instrument::AccessKind::Call, Some(callee)) = (site.kind, site.callee)
            else {
                continue;
            };
            if let Some(name) = symbols.function_name(callee)
                && name_matches(name, pattern)
            {
                calls.push((id, name.to_string()));
            }
        }
        if calls.len() == before {
            bail!(
                "--unit-of-work `{pattern}` matches no called function (a function the compiler inlined has no call to watch)"
            );
        }
    }
    Ok(calls)
}

/// Whether `pattern` (with `*` for any text) matches the whole of `name`
/// or a part of it that starts after a `::`.
fn name_matches(name: &str, pattern: &str) -> bool {
    let mut starts = vec![0];
    starts.extend(name.match_indices("::").map(|(i, _)| i + 2));
    starts.into_iter().any(|s| glob(&name[s..], pattern))
}

fn glob(text: &str, pattern: &str) -> bool {
    match pattern.split_once('*') {
        None => text == pattern,
        Some((head, rest)) => {
            let Some(tail) = text.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len())
                .filter(|&i| tail.is_char_boundary(i))
                .any(|i| glob(&tail[i..], rest))
        }
    }
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
    minimization: Option<&Minimization>,
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
    if let Some(m) = minimization {
        s.push_str(&format!("\nthe first one's {}\n", describe_minimization(m)));
    }
    if let Some(path) = replay {
        s.push_str(&format!(
            "\nreplay the first one: weft replay {}\n",
            path.display()
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::name_matches;

    #[test]
    fn patterns_match_whole_names_or_their_path_tails() {
        assert!(name_matches("account::Account::copy_of", "Account::*"));
        assert!(name_matches("account::Account::copy_of", "*copy*"));
        assert!(name_matches("copy_account", "copy_account"));
        assert!(!name_matches("copy_account_slowly", "copy_account"));
        assert!(!name_matches("account::Accountant::pay", "Account::*"));
    }
}
